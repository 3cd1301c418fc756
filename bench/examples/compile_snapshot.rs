//! Writes everything compiling produces for a large corpus of policies to standard output, so that
//! two builds can be compared byte for byte (`cmp`): for every conformance vector's policy
//! (compiled from its value and from its text) and the generated policy sets, either the errors
//! (code, pointer, message) or the lowered IR, the optimized IR, the disassembly and the wire
//! encoding in hex.
//!
//! `cargo run --release --manifest-path bench/Cargo.toml --example compile_snapshot > a.txt`
#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::{compile_workloads, lines, repo_root};
use filtervm_compiler::{CompileError, Dialect, Filter, Options, compile_text, compile_value};
use filtervm_vm::json;
use std::fmt::Write as _;

fn show(out: &mut String, result: Result<Filter, CompileError>) {
    match result {
        Err(e) => {
            for p in &e.errors {
                let _ = writeln!(out, "error {} {} {}", p.code.as_str(), p.pointer, p.message);
            }
        }
        Ok(f) => {
            let _ = writeln!(
                out,
                "lowered\n{}optimized\n{}program\n{}",
                f.lowered_ir().map(ToString::to_string).unwrap_or_default(),
                f.ir().map(ToString::to_string).unwrap_or_default(),
                f.program().disassemble()
            );
            let hex: String = f.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
            let _ = writeln!(out, "bytes {hex}");
        }
    }
}

fn main() {
    let mut out = String::new();
    let vectors = repo_root().join("conformance/vectors");
    let mut files: Vec<_> = [vectors.clone(), vectors.join("local")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("vectors");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(case) = json::parse(line.as_bytes()) else {
                continue;
            };
            let field = |n: &str| case.get(n).and_then(json::Value::as_str).unwrap_or("?");
            let Ok(dialect) = field("dialect").parse::<Dialect>() else {
                continue;
            };
            let Ok(options) =
                Options::from_json(dialect, case.get("options").unwrap_or(&json::Value::Null))
            else {
                continue;
            };
            let Some(policy) = case.get("policy") else {
                continue;
            };
            let _ = writeln!(out, "== {} value", field("id"));
            show(&mut out, compile_value(dialect, policy, &options));
            let policy_text = match policy {
                json::Value::String(s) => s.clone(),
                other => other.to_serde_json().to_string(),
            };
            let _ = writeln!(out, "== {} text", field("id"));
            show(&mut out, compile_text(dialect, &policy_text, &options));
        }
    }
    for w in compile_workloads() {
        let _ = writeln!(out, "== workload {}", w.name);
        show(&mut out, compile_text(w.dialect, &w.text, &w.options));
    }
    for name in ["pol10k_exact", "pol10k_num", "pol10k_mixed", "pol10k"] {
        for scope in [
            Dialect::Sns.into(),
            Options::from(filtervm_compiler::SnsScope::MessageBody),
        ] {
            for (i, l) in lines(name, 300).iter().enumerate() {
                let _ = writeln!(out, "== {name} {i} {scope}");
                show(&mut out, compile_text(Dialect::Sns, l, &scope));
            }
        }
    }
    print!("{out}");
}

//! Writes everything compiling produces for a large corpus of policies to standard output, so that
//! two builds can be compared byte for byte (`cmp`): for every conformance vector's policy
//! (compiled from its value and from its text), the generated policy sets and 3,000 random policies
//! (nested expr trees, stream groups, SNS policies with `$or`; seeded, the same every run), either
//! the errors (code, pointer, message) or the lowered IR, the optimized IR, the disassembly and
//! the wire encoding in hex.
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

/// A tiny seeded generator (xorshift64*), so that every run makes the same policies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const KEYS: [&str; 4] = ["a", "b", "c", "a.b"];
const VALUES: [&str; 5] = ["x", "y", "xy", "1", ""];

/// A random expr condition tree (repeated keys and values, nested and/or/not).
fn expr(rng: &mut Rng, depth: usize) -> serde_json::Value {
    use serde_json::json;
    if depth == 0 || rng.below(3) == 0 {
        let key = rng.pick(&KEYS);
        return match rng.below(6) {
            0 => json!({"key": key, "op": "exists"}),
            1 => json!({"key": key, "op": "in", "values": [rng.pick(&VALUES), rng.pick(&VALUES)]}),
            2 => json!({"key": key, "op": "startsWith", "value": rng.pick(&VALUES)}),
            3 => json!({"key": key, "op": "endsWith", "value": rng.pick(&VALUES)}),
            4 => json!({"key": key, "op": "contains", "value": rng.pick(&VALUES)}),
            _ => json!({"key": key, "op": "equals", "value": rng.pick(&VALUES)}),
        };
    }
    match rng.below(3) {
        0 => json!({"op": "NOT", "exp": [expr(rng, depth - 1)]}),
        n => {
            let children: Vec<_> = (0..1 + rng.below(3))
                .map(|_| expr(rng, depth - 1))
                .collect();
            json!({"op": if n == 1 { "AND" } else { "OR" }, "exp": children})
        }
    }
}

/// A random stream filter in the text form.
fn stream(rng: &mut Rng) -> String {
    let groups: Vec<String> = (0..1 + rng.below(3))
        .map(|_| {
            let clauses: Vec<String> = (0..1 + rng.below(4))
                .map(|_| {
                    let key = rng.pick(&["a", "b", "c"]);
                    let v = rng.pick(&["x", "y", "x*", "*.y", "1"]);
                    match rng.below(6) {
                        0 => format!("{key} = {v}"),
                        1 => format!("{key} != {v}"),
                        2 => format!("{key} in [{v}, {}]", rng.pick(&["x", "y", "z*"])),
                        3 => format!("{key} exists"),
                        4 => format!("{key} missing"),
                        _ => format!("{key} >= {}", rng.below(10)),
                    }
                })
                .collect();
            clauses.join(" and ")
        })
        .collect();
    groups.join(" or ")
}

/// A random SNS policy (repeated paths, `$or`, negative matchers).
fn sns(rng: &mut Rng, depth: usize) -> serde_json::Value {
    use serde_json::json;
    let mut policy = serde_json::Map::new();
    for _ in 0..1 + rng.below(3) {
        let key = rng.pick(&KEYS);
        if depth > 0 && rng.below(4) == 0 {
            policy.insert(
                "$or".into(),
                json!([sns(rng, depth - 1), sns(rng, depth - 1)]),
            );
            continue;
        }
        let alternatives: Vec<_> = (0..1 + rng.below(3))
            .map(|_| match rng.below(8) {
                0 => json!(rng.pick(&VALUES)),
                1 => json!({"prefix": rng.pick(&["x", "y"])}),
                2 => json!({"anything-but": [rng.pick(&VALUES), rng.pick(&VALUES)]}),
                3 => json!({"exists": rng.below(2) == 0}),
                4 => json!({"numeric": [">", rng.below(5), "<=", 5 + rng.below(5)]}),
                5 => json!(rng.below(3)),
                6 => json!({"equals-ignore-case": rng.pick(&VALUES)}),
                _ => json!({"anything-but": {"prefix": rng.pick(&["x", "y"])}}),
            })
            .collect();
        policy.insert(key.into(), serde_json::Value::Array(alternatives));
    }
    serde_json::Value::Object(policy)
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
    let mut rng = Rng(0x5eed);
    let body = Options::from(filtervm_compiler::SnsScope::MessageBody);
    for i in 0..1000 {
        let policy = expr(&mut rng, 5).to_string();
        let _ = writeln!(out, "== random expr {i} {policy}");
        show(
            &mut out,
            compile_text(Dialect::Expr, &policy, &Dialect::Expr.into()),
        );
        let policy = stream(&mut rng);
        let _ = writeln!(out, "== random stream {i} {policy}");
        show(
            &mut out,
            compile_text(Dialect::Stream, &policy, &Options::Stream),
        );
        let policy = sns(&mut rng, 2).to_string();
        let _ = writeln!(out, "== random sns {i} {policy}");
        show(&mut out, compile_text(Dialect::Sns, &policy, &body));
    }
    print!("{out}");
}

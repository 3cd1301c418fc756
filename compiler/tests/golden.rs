//! Golden files (README.md, "Explain"): the IR (as lowered and optimized) and the disassembly of
//! one representative policy per dialect, checked against `tests/golden/<dialect>.txt`.
//!
//! A change to lowering, the optimizer or codegen shows up here as a diff. When the change is
//! intended, regenerate the files and review them like code:
//!
//! ```text
//! FILTERVM_BLESS=1 cargo test -p filtervm-compiler --test golden
//! ```

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{Dialect, Options, compile_text};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The golden text of a policy (its text, as a file holds it): its source, the IR as lowered
/// and optimized, and the bytecode.
fn render(dialect: Dialect, source: &str, policy: &str, options: &Value) -> String {
    let typed = Options::from_json(dialect, options).unwrap();
    let filter = compile_text(dialect, policy, &typed)
        .unwrap_or_else(|e| panic!("{dialect} golden policy does not compile: {e}"));
    let mut out = String::new();
    writeln!(out, "; dialect: {dialect}").unwrap();
    writeln!(out, "; policy: {source}").unwrap();
    if options.as_object().is_some_and(|o| !o.is_empty()) {
        writeln!(out, "; options: {options}").unwrap();
    }
    writeln!(out, "; IR as lowered").unwrap();
    write!(out, "{}", filter.lowered_ir().unwrap()).unwrap();
    writeln!(out, "; IR optimized").unwrap();
    write!(out, "{}", filter.ir().unwrap()).unwrap();
    writeln!(
        out,
        "; bytecode ({} instructions)",
        filter.program().code().len()
    )
    .unwrap();
    write!(out, "{}", filter.program().disassemble()).unwrap();
    out
}

/// Compares `actual` with the golden file, or writes it when `FILTERVM_BLESS=1`.
fn check(name: &str, actual: &str) {
    let path = dir().join(format!("{name}.txt"));
    if std::env::var("FILTERVM_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with FILTERVM_BLESS=1 cargo test -p filtervm-compiler --test golden",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the compiler's output at line {}:\n  golden: {:?}\n  actual: {:?}\n\
             full output:\n{actual}\nIf the change is intended, regenerate with \
             FILTERVM_BLESS=1 cargo test -p filtervm-compiler --test golden and review the diff.",
            path.display(),
            line + 1,
            expected.lines().nth(line).unwrap_or("<end of file>"),
            actual.lines().nth(line).unwrap_or("<end of file>"),
        );
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// basaltic: the seed's complete example (seed 000).
#[test]
fn golden_basaltic_seed_example() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/basaltic/policy.json");
    let out = render(
        Dialect::Basaltic,
        "examples/basaltic/policy.json",
        &read(&path),
        &json!({}),
    );
    check("basaltic", &out);
}

/// sns: a body-scope policy with `$or`.
#[test]
fn golden_sns_body_scope_with_or() {
    let out = render(
        Dialect::Sns,
        "tests/golden/sns.policy.json",
        &read(&dir().join("sns.policy.json")),
        &json!({"scope": "MessageBody"}),
    );
    check("sns", &out);
}

/// eventgrid: event types, a subject prefix and a few advanced filters.
#[test]
fn golden_eventgrid_advanced_filters() {
    let out = render(
        Dialect::EventGrid,
        "tests/golden/eventgrid.policy.json",
        &read(&dir().join("eventgrid.policy.json")),
        &json!({}),
    );
    check("eventgrid", &out);
}

/// stream: a text-form filter.
#[test]
fn golden_stream_text_form() {
    let text = read(&dir().join("stream.policy.txt"));
    let out = render(
        Dialect::Stream,
        "tests/golden/stream.policy.txt",
        text.trim_end(),
        &json!({}),
    );
    check("stream", &out);
}

/// expr: the seed's `a & (b | c) & d` (seed 002).
#[test]
fn golden_expr_seed_shape() {
    let out = render(
        Dialect::Expr,
        "tests/golden/expr.policy.json",
        &read(&dir().join("expr.policy.json")),
        &json!({}),
    );
    check("expr", &out);
}

/// eventbridge: nesting, `$or`, an absence judged per element of `detail.items` (EB-10), and
/// the EB-specific tests (address, comparable numbers, case patterns, except).
#[test]
fn golden_eventbridge_pattern() {
    let out = render(
        Dialect::EventBridge,
        "tests/golden/eventbridge.policy.json",
        &read(&dir().join("eventbridge.policy.json")),
        &json!({}),
    );
    check("eventbridge", &out);
}

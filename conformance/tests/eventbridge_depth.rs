//! Pattern depth: the compiler and the reference interpreter refuse a pattern nested deeper than
//! 128 levels (the pattern object is level 1) with the same code and JSON Pointer, the first
//! container too deep in document order, before any other check; EB-34's 1,000 levels bound
//! events, not patterns.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use filtervm_compiler::Dialect;
use filtervm_conformance::reference::{self, json};
use filtervm_conformance::runner::compile;

/// An error's code and JSON Pointer (`None`: the pattern was accepted).
type Refusal = Option<(String, String)>;

/// The compiler's and the reference's refusal of `pattern`.
fn both(pattern: &str) -> (Refusal, Refusal) {
    let value = json::parse_with(
        pattern,
        json::ReadOptions {
            max_depth: 2000,
            keep_duplicates: true,
            ..Default::default()
        },
    )
    .unwrap();
    let compiler = compile(Dialect::EventBridge, &value, &json::Value::Null)
        .err()
        .map(|e| {
            let first = e.errors.first().unwrap();
            (first.code.as_str().to_owned(), first.pointer.clone())
        });
    let reference = reference::validate(Dialect::EventBridge, &json::Value::Null, &value)
        .err()
        .map(|r| (r.code.to_owned(), r.pointer.clone()));
    (compiler, reference)
}

#[test]
fn compiler_and_reference_refuse_the_same_deep_patterns_alike() {
    let objects = |n: usize| format!("{}[\"x\"]{}", "{\"a\": ".repeat(n), "}".repeat(n));
    let arrays = |n: usize| format!("{{\"a\": [{}\"x\"{}]}}", "[".repeat(n), "]".repeat(n));
    let expression = |n: usize| {
        format!(
            "{}[{{\"exists\": true}}]{}",
            "{\"a\": ".repeat(n),
            "}".repeat(n)
        )
    };
    let or = |n: usize| {
        format!(
            "{}{{\"z\": [\"x\"]}}{}",
            "{\"$or\": [{\"b\": [\"y\"]}, ".repeat(n),
            "]}".repeat(n)
        )
    };
    // The deepest accepted, by both.
    for pattern in [objects(127), expression(126), or(63)] {
        assert_eq!(both(&pattern), (None, None), "{pattern:.80}");
    }
    let mut refused = 0;
    for pattern in [
        objects(128),
        objects(300),
        arrays(127),
        expression(127),
        or(64),
        format!("{{\"b\": [{{\"bad\": 1}}], \"c\": {}}}", objects(200)),
    ] {
        let (compiler, reference) = both(&pattern);
        let compiler = compiler.unwrap_or_else(|| panic!("accepted: {pattern:.80}"));
        assert_eq!(compiler.0, "EVENTBRIDGE_LIMIT_EXCEEDED", "{pattern:.80}");
        assert_eq!(Some(compiler), reference, "{pattern:.80}");
        refused += 1;
    }
    assert_eq!(refused, 6);
}

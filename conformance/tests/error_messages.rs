//! Errors quote user input (keys, values, numbers, options, addresses, names in messages) only as
//! a bounded excerpt (`filtervm_vm::excerpt`): an error about a 100,000-byte key or number is one
//! short line, in every dialect, for policies, options, messages and their `Display`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{Dialect, Options, compile_text, message_from_json, message_from_line};

/// The longest an error's `Display` may be: a fixed explanation, plus a few excerpts.
const MAX_ERROR_BYTES: usize = 700;

/// A huge name or string.
fn huge() -> String {
    "h".repeat(100_000)
}

/// A huge number that overflows binary64.
fn huge_number() -> String {
    format!("1{}", "0".repeat(100_000))
}

/// JSON text with `HUGE` replaced by the huge string and `NUM` by the huge number.
fn text(template: &str) -> String {
    template
        .replace("HUGE", &huge())
        .replace("NUM", &huge_number())
}

/// A message template as the `serde_json::Value` the message readers take.
fn message_json(template: &str) -> serde_json::Value {
    serde_json::from_str(&text(template)).unwrap_or_else(|e| panic!("{template}: {e}"))
}

fn assert_bounded(what: &str, messages: Vec<String>) {
    assert!(!messages.is_empty(), "{what}: expected an error");
    for m in messages {
        assert!(
            m.len() <= MAX_ERROR_BYTES,
            "{what}: a {}-byte error: {}…",
            m.len(),
            m.chars().take(300).collect::<String>()
        );
    }
}

/// Compiles `policy` with `options`; every error (its message and its `Display`) is short.
fn check(dialect: Dialect, policy: &str, options: &str) {
    let what = format!("{dialect} {policy} {options}");
    let err = Options::from_json(dialect, text(options).as_str())
        .and_then(|options| compile_text(dialect, &text(policy), &options))
        .err()
        .unwrap_or_else(|| panic!("{what}: compiled"));
    let mut all: Vec<String> = err.errors.iter().map(|e| e.message.clone()).collect();
    all.extend(err.errors.iter().map(ToString::to_string));
    all.push(err.to_string());
    assert_bounded(&what, all);
}

#[test]
fn basaltic_errors_quote_excerpts() {
    for policy in [
        r#"{"a": [{"HUGE": 1}]}"#,
        r#"{"a": [{"numeric": ["HUGE", 5]}]}"#,
        r#"{"a": [NUM]}"#,
        r#"{"a": [{"numeric": [">", NUM]}]}"#,
        r#"{"a": [{"anything-but": [NUM]}]}"#,
        r#"{"HUGE": [{"prefix": ""}]}"#,
    ] {
        check(Dialect::Basaltic, policy, "{}");
    }
    check(Dialect::Basaltic, r#"{"a": ["x"]}"#, r#"{"HUGE": 1}"#);
}

#[test]
fn sns_errors_quote_excerpts() {
    for policy in [
        r#"{"a": [{"HUGE": 1}]}"#,
        r#"{"a": [{"numeric": ["HUGE"]}]}"#,
        r#"{"a": [{"numeric": [["HUGE"]]}]}"#,
        r#"{"a": [{"numeric": [">", 1, "HUGE"]}]}"#,
        r#"{"a": [{"numeric": [">", 1, ["HUGE"]]}]}"#,
        r#"{"a": [{"cidr": "HUGE/8"}]}"#,
        r#"{"a": [{"cidr": "10.0.0.0/1NUM"}]}"#,
        r#"{"a": [NUM]}"#,
        r#"{"a": [{"anything-but": NUM}]}"#,
        r#"{"HUGE": 5}"#,
        r#"{"a": [{"anything-but": {"HUGE": "x"}}]}"#,
        r#"{"$or": [{"a": ["x"]}, {"HUGE": 5}]}"#,
    ] {
        check(Dialect::Sns, policy, "{}");
    }
    check(Dialect::Sns, r#"{"a": ["x"]}"#, r#"{"scope": "HUGE"}"#);
    check(Dialect::Sns, r#"{"a": ["x"]}"#, r#"{"scope": ["HUGE"]}"#);
    check(Dialect::Sns, r#"{"a": ["x"]}"#, r#"{"HUGE": 1}"#);
}

#[test]
fn eventgrid_errors_quote_excerpts() {
    let af = |entry: &str| format!(r#"{{"advancedFilters": [{entry}]}}"#);
    for entry in [
        r#"{"operatorType": "HUGE", "key": "data.a", "value": 1}"#,
        r#"{"operatorType": ["HUGE"], "key": "data.a", "value": 1}"#,
        r#"{"operatorType": "NumberIn", "key": "data.a", "values": ["HUGE"]}"#,
        r#"{"operatorType": "StringIn", "key": "data.a", "values": [NUM]}"#,
        r#"{"operatorType": "NumberLessThan", "key": "data.a", "value": "HUGE"}"#,
        r#"{"operatorType": "BoolEquals", "key": "data.a", "value": NUM}"#,
        r#"{"operatorType": "NumberIn", "key": "data.a", "values": "HUGE"}"#,
        r#"{"operatorType": "NumberInRange", "key": "data.a", "values": ["HUGE"]}"#,
        r#"{"operatorType": "NumberInRange", "key": "data.a", "values": [["HUGE", 1]]}"#,
        r#"{"operatorType": "NumberInRange", "key": "data.a", "values": [[2NUM, NUM]]}"#,
    ] {
        check(Dialect::EventGrid, &af(entry), "{}");
    }
    check(
        Dialect::EventGrid,
        r#"{"subjectBeginsWith": ["HUGE"]}"#,
        "{}",
    );
    check(Dialect::EventGrid, "{}", r#"{"schema": "HUGE"}"#);
    check(Dialect::EventGrid, "{}", r#"{"HUGE": 1}"#);
}

#[test]
fn stream_errors_quote_excerpts() {
    let clause = |c: &str| format!(r#"{{"groups": [[{c}]]}}"#);
    for policy in [
        r#"{"groups": [], "HUGE": 1}"#.to_owned(),
        clause(r#"{"op": "=", "header": "a", "values": ["x"], "HUGE": 1}"#),
        clause(r#"{"op": "HUGE", "header": "a", "values": ["x"]}"#),
        clause(r#"{"op": "<", "header": "a", "values": [NUM]}"#),
        r#""a = x HUGE""#.to_owned(),
        r#""a = x and b = \"HUGE\" \"HUGE\"""#.to_owned(),
        r#""a < 1NUM""#.to_owned(),
        r#""a < xHUGE""#.to_owned(),
        r#""a in [x yHUGE]""#.to_owned(),
    ] {
        check(Dialect::Stream, &policy, "{}");
    }
    check(Dialect::Stream, r#"{"groups": []}"#, r#"{"HUGE": 1}"#);
}

#[test]
fn expr_errors_quote_excerpts() {
    for policy in [
        r#"{"op": "AND", "exp": [{"key": "a", "op": "exists"}], "HUGE": 1}"#,
        r#"{"op": "HUGE", "exp": [{"key": "a", "op": "exists"}]}"#,
        r#"{"key": "a", "op": "HUGE", "value": "x"}"#,
        r#"{"key": "a", "op": "exists", "HUGE": 1}"#,
        r#"{"key": "a", "op": "startsWith", "value": ["HUGE"]}"#,
        r#"{"key": "a", "op": "in", "value": [NUM]}"#,
    ] {
        check(Dialect::Expr, policy, "{}");
    }
    check(
        Dialect::Expr,
        r#"{"key": "a", "op": "exists"}"#,
        r#"{"max_depth": NUM}"#,
    );
    check(
        Dialect::Expr,
        r#"{"key": "a", "op": "exists"}"#,
        r#"{"HUGE": 1}"#,
    );
}

#[test]
fn message_errors_quote_excerpts() {
    let cases: &[(Dialect, &str, &str)] = &[
        (
            Dialect::Basaltic,
            "{}",
            r#"{"attributes": {"HUGE": {"type": "Nope", "value": "x"}}}"#,
        ),
        (Dialect::Basaltic, "{}", r#"{"attributes": {"HUGE": 5}}"#),
        (
            Dialect::Sns,
            "{}",
            r#"{"attributes": {"HUGE": {"Type": "Nope", "Value": "x"}}}"#,
        ),
        (Dialect::Stream, "{}", r#"{"headers": {"HUGE": 5}}"#),
        (Dialect::Expr, "{}", r#"{"headers": {"HUGE": 5}}"#),
        (Dialect::Expr, "{}", r#"{"headers": {"HUGE": [5]}}"#),
    ];
    for &(dialect, options, message) in cases {
        let what = format!("{dialect} {message}");
        let options = Options::from_json(dialect, options).unwrap();
        let err = message_from_json(dialect, &options, &message_json(message))
            .err()
            .unwrap_or_else(|| panic!("{what}: read"));
        assert_bounded(&what, vec![err.message.clone(), err.to_string()]);
        let line = message.replace("HUGE", &huge());
        let err = message_from_line(dialect, &options, &line)
            .err()
            .unwrap_or_else(|| panic!("{what}: read as a line"));
        assert_bounded(&what, vec![err.message.clone(), err.to_string()]);
    }
}

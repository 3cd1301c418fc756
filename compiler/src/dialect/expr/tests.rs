use super::*;
use serde_json::json;

fn nested_text(depth: usize) -> String {
    let mut s = String::new();
    for _ in 0..depth {
        s.push_str("{\"op\": \"NOT\", \"exp\": [");
    }
    s.push_str("{\"key\": \"a\", \"op\": \"exists\"}");
    for _ in 0..depth {
        s.push_str("]}");
    }
    s
}

fn nested(depth: usize) -> Value {
    filtervm_vm::json::parse(nested_text(depth).as_bytes()).unwrap()
}

fn first(e: &CompileError) -> (ErrorCode, String) {
    let f = e.first().unwrap();
    (f.code, f.pointer.clone())
}

#[test]
fn e2_default_32_levels_accepted_33_rejected() {
    let opts = ExprOptions::default();
    assert!(parse(&nested(32), &opts).is_ok());
    let e = parse(&nested(33), &opts).unwrap_err();
    let ptr = "/exp/0".repeat(32);
    assert_eq!(first(&e), (TOO_DEEP, ptr.clone()));
    assert!(check_text(&nested_text(32), opts).is_ok());
    let e = check_text(&nested_text(33), opts).unwrap_err();
    assert_eq!(first(&e), (TOO_DEEP, ptr));
}

#[test]
fn e2_max_depth_zero_one_two() {
    let o = |n| ExprOptions::default().with_max_depth(n);
    assert!(parse(&nested(0), &o(0)).is_ok());
    assert_eq!(first(&parse(&nested(1), &o(0)).unwrap_err()).0, TOO_DEEP);
    assert!(parse(&nested(1), &o(1)).is_ok());
    assert!(parse(&nested(2), &o(2)).is_ok());
    assert_eq!(first(&parse(&nested(3), &o(2)).unwrap_err()).0, TOO_DEEP);
}

#[test]
fn e2_ceiling_fits_the_policy_reader() {
    // The deepest admissible tree with `in` leaves parses as text.
    let mut s = String::new();
    for _ in 0..MAX_DEPTH_CEILING {
        s.push_str("{\"op\":\"AND\",\"exp\":[");
    }
    s.push_str("{\"key\":\"a\",\"value\":[\"x\"]}");
    for _ in 0..MAX_DEPTH_CEILING {
        s.push_str("]}");
    }
    let opts = ExprOptions::default().with_max_depth(MAX_DEPTH_CEILING);
    let filter = crate::compile_text(crate::Dialect::Expr, &s, &opts.into());
    assert!(filter.is_ok(), "{:?}", filter.err());
    assert!(check_text(&s, opts).is_ok());
}

#[test]
fn e2_text_scan_skips_strings_and_escapes() {
    // Brackets inside strings (with escaped quotes) do not count.
    let text = r#"{"op": "AND", "exp": [{"key": "[[[\"{{{", "value": ["]]]\\", "[[["]}]}"#;
    assert!(check_text(text, ExprOptions::default().with_max_depth(1)).is_ok());
    // An escaped member name still counts as `exp`.
    let text =
        r#"{"op": "NOT", "e\u0078p": [{"op": "NOT", "exp": [{"key": "a", "op": "exists"}]}]}"#;
    let e = check_text(text, ExprOptions::default().with_max_depth(1)).unwrap_err();
    assert_eq!(first(&e), (TOO_DEEP, "/exp/0".to_owned()));
    // Deep nesting inside `value` is not an expression chain.
    let text = r#"{"key": "a", "value": [[[[[["x"]]]]]]}"#;
    assert!(check_text(text, ExprOptions::default().with_max_depth(0)).is_ok());
    // The pointer follows array indices.
    let text = r#"{"op":"AND","exp":[{"key":"a","op":"exists"},{"op":"OR","exp":[{"key":"b","op":"exists"}]}]}"#;
    let e = check_text(text, ExprOptions::default().with_max_depth(1)).unwrap_err();
    assert_eq!(first(&e), (TOO_DEEP, "/exp/1".to_owned()));
    // Malformed text does not panic.
    for t in [
        "",
        "\"",
        "\"\\",
        "{\"exp\":[",
        "]]]}}}",
        "{\"a\\",
        "[{\"exp\":[{",
    ] {
        let _ = check_text(t, ExprOptions::default());
    }
}

#[test]
fn e2_ten_thousand_levels_rejected_quickly_by_text_scan() {
    let text = nested_text(10_000);
    let start = std::time::Instant::now();
    let e = check_text(&text, ExprOptions::default()).unwrap_err();
    assert_eq!(e.first().unwrap().code, TOO_DEEP);
    assert!(start.elapsed().as_secs() < 2);
}

#[test]
fn e9_error_pointers() {
    let opts = ExprOptions::default();
    let policy = Value::from(&json!({"op": "AND", "exp": [
        {"key": "a", "op": "in", "value": ["1", 2]},
        {"key": "", "op": "exists"},
        {"op": "OR", "exp": [{"key": "b", "op": "contains"}]},
        {"key": "c", "op": "startsWith", "value": "x", "extra": 1}
    ]}));
    let e = parse(&policy, &opts).unwrap_err();
    let got: Vec<(ErrorCode, &str)> = e
        .errors
        .iter()
        .map(|p| (p.code, p.pointer.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (CODE, "/exp/0/value/1"),
            (CODE, "/exp/1/key"),
            (CODE, "/exp/2/exp/0"),
            (CODE, "/exp/3/extra"),
        ]
    );
}

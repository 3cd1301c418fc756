//! Conformance tests of the `expr` dialect (`docs/dialects/expr-filters.md` E1–E11): every case
//! runs through the compiled filter (VM) and the reference interpreter, and both must agree with the
//! expected answer. Invalid policies are checked by error code and JSON Pointer.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::dialect::expr::MAX_DEPTH_CEILING;
use filtervm_compiler::{Dialect, ErrorCode, Evaluator, Options};
use filtervm_conformance::growth::assert_linear;
use filtervm_conformance::reference;
use filtervm_conformance::runner::{compile, compile_policy_text as compile_text};

const CODE: ErrorCode = ErrorCode::ExprInvalidFilter;
const TOO_DEEP: ErrorCode = ErrorCode::ExprTooDeep;
const INVALID_OPTIONS: ErrorCode = ErrorCode::InvalidOptions;
use filtervm_conformance::json;
use filtervm_conformance::reference::json::{Map, Value};

/// Asserts that `policy` (with `options`) gives `expected` on `message` in both engines.
fn check_with(options: &Value, policy: &Value, message: &Value, expected: bool) {
    let filter = compile(Dialect::Expr, policy, options)
        .unwrap_or_else(|e| panic!("{policy} should compile: {e}"));
    let vm = filtervm_conformance::runner::matches(&filter, message)
        .unwrap_or_else(|e| panic!("{message} should read: {e}"));
    let oracle = reference::evaluate(Dialect::Expr, options, policy, message)
        .unwrap_or_else(|e| panic!("reference failed on {policy}: {e}"));
    assert_eq!(vm, expected, "VM: {policy} on {message}");
    assert_eq!(oracle, expected, "reference: {policy} on {message}");
}

fn check(policy: &Value, message: &Value, expected: bool) {
    check_with(&Value::Null, policy, message, expected);
}

fn headers(h: Value) -> Value {
    json!({ "headers": h })
}

/// The first error's code and pointer.
fn invalid_with(options: &Value, policy: &Value) -> (ErrorCode, String) {
    let e = compile(Dialect::Expr, policy, options)
        .err()
        .unwrap_or_else(|| panic!("{policy} should be invalid"));
    let first = e.first().unwrap();
    (first.code, first.pointer.clone())
}

fn invalid(policy: &Value) -> (ErrorCode, String) {
    invalid_with(&Value::Null, policy)
}

fn at(code: ErrorCode, pointer: &str) -> (ErrorCode, String) {
    (code, pointer.to_owned())
}

fn cond(key: &str, op: &str, value: Value) -> Value {
    json!({"key": key, "op": op, "value": value})
}

fn exists(key: &str) -> Value {
    json!({"key": key, "op": "exists"})
}

/// `depth` NOTs around `leaf`, built by moving (the `json!` macro would re-serialize `v`
/// recursively on every level).
fn nots(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        let mut node = Map::new();
        node.insert("op".to_owned(), Value::String("NOT".to_owned()));
        node.insert("exp".to_owned(), Value::Array(vec![v]));
        v = Value::Object(node);
    }
    v
}

fn nots_text(depth: usize) -> String {
    let mut s = "{\"op\": \"NOT\", \"exp\": [".repeat(depth);
    s.push_str("{\"key\": \"a\", \"op\": \"exists\"}");
    s.push_str(&"]}".repeat(depth));
    s
}

/// The IR's stable text, each line `head ; origin` with the padding removed.
fn ir_text(node: Option<&filtervm_compiler::ir::Node>) -> String {
    node.expect("a compiled filter has IR")
        .to_string()
        .lines()
        .map(|l| match l.split_once(" ; ") {
            Some((head, origin)) => format!("{} ; {origin}", head.trim_end()),
            None => l.trim_end().to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn e1_start_with_is_an_exact_alias() {
    for op in ["startsWith", "startWith"] {
        let p = cond("n", op, json!("pre"));
        check(&p, &headers(json!({"n": "prefix"})), true);
        check(&p, &headers(json!({"n": "xprefix"})), false);
        check(&p, &headers(json!({"m": "prefix"})), false);
    }
    assert_eq!(invalid(&cond("n", "endWith", json!("x"))), at(CODE, "/op"));
    assert_eq!(
        invalid(&cond("n", "startwith", json!("x"))),
        at(CODE, "/op")
    );
    assert_eq!(
        invalid(&cond("n", "beginsWith", json!("x"))),
        at(CODE, "/op")
    );
}

#[test]
fn e2_default_depth_is_32() {
    let m = headers(json!({"a": "1"}));
    check(&nots(32, exists("a")), &m, true);
    check(&nots(31, exists("a")), &m, false);
    assert_eq!(
        invalid(&nots(33, exists("a"))),
        at(TOO_DEEP, &"/exp/0".repeat(32))
    );
}

#[test]
fn e2_max_depth_option() {
    let seed = json!({"op": "AND", "exp": [
        cond("a", "in", json!(["1"])),
        {"op": "OR", "exp": [cond("b", "in", json!(["1"])), cond("c", "in", json!(["1"]))]},
        cond("d", "in", json!(["1"]))
    ]});
    let m = headers(json!({"a": "1", "c": "1", "d": "1"}));
    check_with(&json!({"max_depth": 2}), &seed, &m, true);
    assert_eq!(
        invalid_with(&json!({"max_depth": 1}), &seed),
        at(TOO_DEEP, "/exp/1")
    );
    let flat = json!({"op": "OR", "exp": [exists("a"), exists("b")]});
    check_with(&json!({"max_depth": 1}), &flat, &m, true);
    assert_eq!(
        invalid_with(&json!({"max_depth": 0}), &flat),
        at(TOO_DEEP, "")
    );
    check_with(&json!({"max_depth": 0}), &exists("a"), &m, true);
    check_with(&json!({}), &nots(32, exists("a")), &m, true);
    let deepest = nots(MAX_DEPTH_CEILING, cond("a", "in", json!(["1"])));
    check_with(&json!({"max_depth": MAX_DEPTH_CEILING}), &deepest, &m, true);
    for (bad, pointer) in [
        (json!({"max_depth": -1}), "/max_depth"),
        (json!({"max_depth": 2.5}), "/max_depth"),
        (json!({"max_depth": null}), "/max_depth"),
        (json!({"max_depth": MAX_DEPTH_CEILING + 1}), "/max_depth"),
        (json!({"max_depth": 1_000_000_000_000u64}), "/max_depth"),
        (json!({"maxDepth": 3}), "/maxDepth"),
        (json!("32"), ""),
    ] {
        assert_eq!(
            invalid_with(&bad, &exists("a")),
            at(INVALID_OPTIONS, pointer),
            "{bad}"
        );
    }
}

#[test]
fn e2_ten_thousand_levels_of_text_fail_fast_with_the_depth_error() {
    let text = nots_text(10_000);
    let e = compile_text(Dialect::Expr, &text, &Value::Null).expect_err("too deep");
    assert_eq!(e.first().unwrap().code, TOO_DEEP);
    assert_eq!(e.first().unwrap().pointer, "/exp/0".repeat(32));
    // One linear scan of the text: 4 times the levels cost at most about 4 times as much (10,000
    // levels are 240 KB, just under the 256 KiB text limit).
    assert_linear("rejecting text nested n levels deep", 2_500, |n| {
        let text = nots_text(n);
        assert!(compile_text(Dialect::Expr, &text, &Value::Null).is_err());
    });
    // Also beyond a raised limit, and deep trees in the accepted range still compile from text.
    let e = compile_text(
        Dialect::Expr,
        &text,
        &json!({"max_depth": MAX_DEPTH_CEILING}),
    )
    .expect_err("too deep");
    assert_eq!(e.first().unwrap().code, TOO_DEEP);
    assert!(compile_text(Dialect::Expr, &nots_text(32), &Value::Null).is_ok());
    assert!(
        compile_text(
            Dialect::Expr,
            &nots_text(MAX_DEPTH_CEILING),
            &json!({"max_depth": MAX_DEPTH_CEILING})
        )
        .is_ok()
    );
}

#[test]
fn e2_ten_thousand_levels_of_parsed_json_fail_fast_with_the_depth_error() {
    // A value built in code (the `serde_json` entry point), 10,000 NOTs deep, built by moving.
    let mut deep = serde_json::json!({"key": "a", "op": "exists"});
    for _ in 0..10_000 {
        let mut node = serde_json::Map::new();
        node.insert("op".into(), "NOT".into());
        node.insert("exp".into(), serde_json::Value::Array(vec![deep]));
        deep = serde_json::Value::Object(node);
    }
    let e = filtervm_compiler::compile(Dialect::Expr, &deep, &Options::from(Dialect::Expr))
        .expect_err("too deep");
    assert_eq!(e.first().unwrap().code, TOO_DEEP);
    // Validation stops at the first expression beyond `max_depth`: a value 4 times as deep costs
    // no more than about 4 times as much to reject (in fact about the same).
    let nots = |n: usize| {
        let mut v = serde_json::json!({"key": "a", "op": "exists"});
        for _ in 0..n {
            let mut node = serde_json::Map::new();
            node.insert("op".into(), "NOT".into());
            node.insert("exp".into(), serde_json::Value::Array(vec![v]));
            v = serde_json::Value::Object(node);
        }
        v
    };
    let (shallow, deeper) = (nots(2_000), nots(8_000));
    assert_linear("rejecting a value nested n levels deep", 2_000, |n| {
        let v = if n == 2_000 { &shallow } else { &deeper };
        assert!(
            filtervm_compiler::compile(Dialect::Expr, v, &Options::from(Dialect::Expr)).is_err()
        );
    });
    for v in [deep, shallow, deeper] {
        take_apart(v);
    }
}

/// Drops a deep NOT chain one level at a time: serde_json drops values recursively.
fn take_apart(mut deep: serde_json::Value) {
    loop {
        let next = deep
            .get_mut("exp")
            .and_then(serde_json::Value::as_array_mut)
            .and_then(Vec::pop);
        match next {
            Some(child) => deep = child,
            None => break,
        }
    }
}

#[test]
fn e3_empty_and_or_are_invalid_anywhere() {
    assert_eq!(invalid(&json!({"op": "AND", "exp": []})), at(CODE, "/exp"));
    assert_eq!(invalid(&json!({"op": "OR", "exp": []})), at(CODE, "/exp"));
    let nested =
        json!({"op": "AND", "exp": [exists("a"), {"op": "NOT", "exp": [{"op": "OR", "exp": []}]}]});
    assert_eq!(invalid(&nested), at(CODE, "/exp/1/exp/0/exp"));
    // One operand equals the operand.
    for op in ["AND", "OR"] {
        let p = json!({"op": op, "exp": [cond("a", "in", json!(["1"]))]});
        check(&p, &headers(json!({"a": "1"})), true);
        check(&p, &headers(json!({"a": "2"})), false);
    }
    // NOT takes exactly one.
    assert_eq!(invalid(&json!({"op": "NOT", "exp": []})), at(CODE, "/exp"));
    assert_eq!(
        invalid(&json!({"op": "NOT", "exp": [exists("a"), exists("b")]})),
        at(CODE, "/exp")
    );
}

#[test]
fn e4_in_needs_a_non_empty_array_of_literal_strings() {
    assert_eq!(invalid(&cond("a", "in", json!("x"))), at(CODE, "/value"));
    assert_eq!(
        invalid(&json!({"key": "a", "value": "x"})),
        at(CODE, "/value")
    );
    assert_eq!(
        invalid(&json!({"key": "a", "op": null, "value": "x"})),
        at(CODE, "/value")
    );
    assert_eq!(invalid(&cond("a", "in", json!([]))), at(CODE, "/value"));
    assert_eq!(
        invalid(&cond("a", "in", json!(["x", 1, null]))),
        at(CODE, "/value/1")
    );
    assert_eq!(invalid(&json!({"key": "a", "op": "in"})), at(CODE, ""));
    let pattern = cond("a", "in", json!(["a*", "b?", "[c]"]));
    check(&pattern, &headers(json!({"a": "abc"})), false);
    check(&pattern, &headers(json!({"a": "a*"})), true);
    check(&pattern, &headers(json!({"a": "[c]"})), true);
    let hundred: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
    let p = cond("a", "in", json!(hundred));
    check(&p, &headers(json!({"a": "v99"})), true);
    check(&p, &headers(json!({"a": "v100"})), false);
    check(
        &json!({"key": "a", "value": ["x", "x"]}),
        &headers(json!({"a": "x"})),
        true,
    );
}

#[test]
fn e5_names_and_values_are_case_sensitive_and_exact() {
    assert_eq!(
        invalid(&json!({"op": "and", "exp": [exists("a")]})),
        at(CODE, "/op")
    );
    assert_eq!(
        invalid(&json!({"op": "Or", "exp": [exists("a")]})),
        at(CODE, "/op")
    );
    assert_eq!(invalid(&cond("a", "Contains", json!("x"))), at(CODE, "/op"));
    assert_eq!(invalid(&cond("a", "IN", json!(["x"]))), at(CODE, "/op"));
    check(
        &cond("a", "in", json!(["SS"])),
        &headers(json!({"a": "ß"})),
        false,
    );
    check(
        &cond("a", "in", json!(["Eu"])),
        &headers(json!({"a": "eu"})),
        false,
    );
    check(
        &cond("a", "contains", json!("X")),
        &headers(json!({"a": "axb"})),
        false,
    );
    check(&exists("A"), &headers(json!({"a": "x"})), false);
    // No Unicode normalisation: precomposed é is not e + combining acute.
    check(
        &cond("a", "in", json!(["\u{e9}"])),
        &headers(json!({"a": "e\u{301}"})),
        false,
    );
    check(
        &cond("a", "startsWith", json!("\u{e9}")),
        &headers(json!({"a": "\u{e9}t\u{e9}"})),
        true,
    );
}

#[test]
fn e6_empty_operands_match_every_present_value_never_a_missing_one() {
    for op in ["contains", "startsWith", "startWith", "endsWith"] {
        let p = cond("a", op, json!(""));
        check(&p, &headers(json!({"a": ""})), true);
        check(&p, &headers(json!({"a": "xyz"})), true);
        check(&p, &headers(json!({"a": ["", "q"]})), true);
        check(&p, &headers(json!({"b": "xyz"})), false);
        check(&json!({"op": "NOT", "exp": [p]}), &headers(json!({})), true);
    }
}

#[test]
fn e7_operands_are_strictly_typed() {
    for op in ["startsWith", "endsWith", "contains"] {
        for bad in [
            json!(1),
            json!(["x"]),
            json!(null),
            json!(true),
            json!({"x": 1}),
        ] {
            assert_eq!(
                invalid(&cond("a", op, bad.clone())),
                at(CODE, "/value"),
                "{op} {bad}"
            );
        }
        assert_eq!(invalid(&json!({"key": "a", "op": op})), at(CODE, ""));
    }
    assert_eq!(
        invalid(&cond("a", "exists", json!("x"))),
        at(CODE, "/value")
    );
    assert_eq!(
        invalid(&cond("a", "exists", json!(null))),
        at(CODE, "/value")
    );
    assert_eq!(
        invalid(&cond("a", "exists", json!(true))),
        at(CODE, "/value")
    );
}

#[test]
fn e8_key_is_a_non_empty_string() {
    assert_eq!(invalid(&exists("")), at(CODE, "/key"));
    assert_eq!(
        invalid(&json!({"key": 1, "op": "exists"})),
        at(CODE, "/key")
    );
    assert_eq!(
        invalid(&json!({"key": null, "op": "exists"})),
        at(CODE, "/key")
    );
    check(&exists(" "), &headers(json!({" ": "x"})), true);
}

#[test]
fn e9_node_shape() {
    assert_eq!(
        invalid(&json!({"key": "a", "op": "exists", "extra": 1})),
        at(CODE, "/extra")
    );
    assert_eq!(
        invalid(&json!({"op": "AND", "exp": [exists("a")], "x": 1})),
        at(CODE, "/x")
    );
    assert_eq!(invalid(&json!({"op": "AND"})), at(CODE, ""));
    assert_eq!(invalid(&json!({})), at(CODE, ""));
    assert_eq!(
        invalid(&json!({"op": "AND", "exp": [exists("a")], "key": "a"})),
        at(CODE, "")
    );
    for bad in [json!("a"), json!(1), json!(null), json!([exists("a")])] {
        assert_eq!(
            invalid(&json!({"op": "AND", "exp": [exists("a"), bad]})),
            at(CODE, "/exp/1")
        );
    }
    assert_eq!(
        invalid(&json!({"op": null, "exp": [exists("a")]})),
        at(CODE, "/op")
    );
    assert_eq!(invalid(&json!({"exp": [exists("a")]})), at(CODE, ""));
    assert_eq!(
        invalid(&json!({"op": "XOR", "exp": [exists("a")]})),
        at(CODE, "/op")
    );
    assert_eq!(
        invalid(&json!({"op": 1, "exp": [exists("a")]})),
        at(CODE, "/op")
    );
    assert_eq!(
        invalid(&json!({"key": "a", "op": 1, "value": ["x"]})),
        at(CODE, "/op")
    );
    // A condition with an expression operator is not an expression.
    assert_eq!(invalid(&cond("a", "AND", json!(["x"]))), at(CODE, "/op"));
    // Every error is reported, in policy order, each with its pointer.
    let e = compile(
        Dialect::Expr,
        &json!({"op": "OR", "exp": [
            {"key": "a", "op": "in", "value": ["1", 2]},
            {"key": "", "op": "exists"},
            {"op": "AND", "exp": [{"key": "b", "op": "contains"}, {"op": "AND", "exp": []}]}
        ]}),
        &Value::Null,
    )
    .expect_err("invalid");
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
            (CODE, "/exp/2/exp/1/exp"),
        ]
    );
    // Pointers escape `/` and `~` (RFC 6901).
    assert_eq!(
        invalid(&json!({"key": "a", "op": "exists", "x/y~": 1})),
        at(CODE, "/x~1y~0")
    );
}

#[test]
fn e10_upstream_vocabulary_is_not_accepted() {
    for op in ["NAND", "NOR"] {
        assert_eq!(
            invalid(&json!({"op": op, "exp": [exists("a")]})),
            at(CODE, "/op")
        );
    }
    assert_eq!(
        invalid(&json!({"op": "AND", "values": [exists("a")]})),
        at(CODE, "")
    );
    assert_eq!(
        invalid(&json!({"op": "AND", "exp": [exists("a")], "values": [exists("b")]})),
        at(CODE, "/values")
    );
    assert_eq!(
        invalid(&json!({"op": "NOT", "value": exists("a")})),
        at(CODE, "")
    );
    assert_eq!(
        invalid(&json!({"op": "NOT", "exp": exists("a")})),
        at(CODE, "/exp")
    );
    assert_eq!(
        invalid(&json!({"key": "a", "values": ["x"]})),
        at(CODE, "/values")
    );
}

#[test]
fn e11_top_level_array_is_invalid() {
    assert_eq!(invalid(&json!([exists("a")])), at(CODE, ""));
    assert_eq!(invalid(&json!([])), at(CODE, ""));
    for bad in [json!("a"), json!(1), json!(null), json!(true)] {
        assert_eq!(invalid(&bad), at(CODE, ""));
    }
    let e = compile_text(
        Dialect::Expr,
        "[{\"key\": \"a\", \"op\": \"exists\"}]",
        &Value::Null,
    )
    .expect_err("invalid");
    assert_eq!(e.first().unwrap().code, CODE);
    let e = compile_text(Dialect::Expr, "{\"key\": ", &Value::Null).expect_err("not JSON");
    assert_eq!(e.first().unwrap().code, CODE);
}

#[test]
fn missing_key_fails_every_condition_but_exists_and_not_of_it_holds() {
    let m = headers(json!({"other": "x"}));
    for p in [
        cond("a", "in", json!(["x"])),
        json!({"key": "a", "value": ["x"]}),
        cond("a", "startsWith", json!("x")),
        cond("a", "endsWith", json!("x")),
        cond("a", "contains", json!("x")),
        exists("a"),
    ] {
        check(&p, &m, false);
        check(&json!({"op": "NOT", "exp": [p]}), &m, true);
    }
    check(&exists("a"), &json!({}), false);
    check(&exists("a"), &json!({"headers": null}), false);
}

#[test]
fn multi_valued_headers_hold_when_any_value_does() {
    let m = headers(json!({"h": ["alpha", "beta", ""]}));
    check(&cond("h", "in", json!(["beta"])), &m, true);
    check(&cond("h", "in", json!(["gamma"])), &m, false);
    check(&cond("h", "startsWith", json!("be")), &m, true);
    check(&cond("h", "endsWith", json!("pha")), &m, true);
    check(&cond("h", "contains", json!("et")), &m, true);
    check(&cond("h", "contains", json!("zz")), &m, false);
    check(&exists("h"), &m, true);
    // NOT is "no value satisfies".
    check(
        &json!({"op": "NOT", "exp": [cond("h", "in", json!(["beta"]))]}),
        &m,
        false,
    );
    check(
        &json!({"op": "NOT", "exp": [cond("h", "in", json!(["x"]))]}),
        &m,
        true,
    );
    // AND of two conditions on one header may be satisfied by different values.
    check(
        &json!({"op": "AND", "exp": [cond("h", "in", json!(["alpha"])), cond("h", "in", json!(["beta"]))]}),
        &m,
        true,
    );
    // One value in an array is the same as the bare string.
    check(
        &cond("h", "in", json!(["a"])),
        &headers(json!({"h": ["a"]})),
        true,
    );
}

#[test]
fn messages_are_read_with_pointers_to_errors() {
    let filter = compile(Dialect::Expr, &exists("a"), &Value::Null).unwrap();
    let mut ev = Evaluator::new();
    for (bad, pointer) in [
        (json!({"headers": {"a": 1}}), "/headers/a"),
        (json!({"headers": {"a": ["x", 2]}}), "/headers/a/1"),
        (json!({"headers": {"a": []}}), "/headers/a"),
        (json!({"headers": {"a": {"b": "c"}}}), "/headers/a"),
        (json!({"headers": "a"}), "/headers"),
        (json!("a"), ""),
    ] {
        let e = ev
            .matches_json(
                &filter,
                &filtervm_conformance::runner::product_message(&bad).unwrap(),
            )
            .expect_err("bad message");
        assert_eq!(e.pointer, pointer, "{bad}");
    }
    let line = filtervm_compiler::message_from_line(
        Dialect::Expr,
        &Options::from(Dialect::Expr),
        "{\"headers\": {\"a\": [\"x\", \"y\"]}}",
    )
    .unwrap();
    assert!(ev.matches(&filter, &line));
}

#[test]
fn contains_stays_fast_on_a_one_megabyte_value() {
    let mut big = "ab".repeat(512 * 1024);
    let needle = "abababababababababababababababac";
    let p = cond("h", "contains", json!(needle));
    let filter = compile(Dialect::Expr, &p, &Value::Null).unwrap();
    let miss = headers(json!({ "h": big.clone() }));
    for _ in 0..10 {
        assert!(!filtervm_conformance::runner::matches(&filter, &miss).unwrap());
    }
    big.push_str(needle);
    let hit = headers(json!({ "h": big }));
    for _ in 0..10 {
        assert!(filtervm_conformance::runner::matches(&filter, &hit).unwrap());
    }
    // A naive scan of this periodic text costs (value length) × (needle length): 4 times both
    // would cost 16 times as much. memmem is linear in the two together.
    let search = |n: usize| {
        let needle = format!("{}c", "ab".repeat(n / 64));
        let p = cond("h", "contains", json!(needle));
        let filter = compile(Dialect::Expr, &p, &Value::Null).unwrap();
        let bound = filtervm_conformance::runner::read_message(
            Dialect::Expr,
            &Value::Null,
            &headers(json!({ "h": "ab".repeat(n) })),
        )
        .unwrap();
        let mut evaluator = filtervm_compiler::Evaluator::new();
        for _ in 0..5 {
            assert!(!evaluator.matches(&filter, &bound));
        }
    };
    assert_linear(
        "`contains` of a needle of n/32 in a value of 2n",
        64 * 1024,
        search,
    );
    assert!(reference::evaluate(Dialect::Expr, &Value::Null, &p, &hit).unwrap());
    assert!(!reference::evaluate(Dialect::Expr, &Value::Null, &p, &miss).unwrap());
}

#[test]
fn optimizer_seed_a_and_b_or_c_and_d() {
    let seed = json!({"op": "AND", "exp": [
        cond("a", "in", json!(["1"])),
        {"op": "OR", "exp": [cond("b", "in", json!(["1"])), cond("c", "in", json!(["1"]))]},
        cond("d", "in", json!(["1"]))
    ]});
    let f = compile(Dialect::Expr, &seed, &Value::Null).unwrap();
    assert_eq!(
        ir_text(f.lowered_ir()),
        "and ; (root)
  test header \"a\" str-eq [\"1\"] ; /exp/0
  or ; /exp/1
    test header \"b\" str-eq [\"1\"] ; /exp/1/exp/0
    test header \"c\" str-eq [\"1\"] ; /exp/1/exp/1
  test header \"d\" str-eq [\"1\"] ; /exp/2"
    );
    // Cheap equality tests first; the OR (two tests) last.
    assert_eq!(
        ir_text(f.ir()),
        "and ; (root)
  test header \"a\" str-eq [\"1\"] ; /exp/0
  test header \"d\" str-eq [\"1\"] ; /exp/2
  or ; /exp/1
    test header \"b\" str-eq [\"1\"] ; /exp/1/exp/0
    test header \"c\" str-eq [\"1\"] ; /exp/1/exp/1"
    );
}

#[test]
fn optimizer_pushes_not_of_or_to_the_leaves() {
    let p = json!({"op": "NOT", "exp": [{"op": "OR", "exp": [
        cond("a", "startsWith", json!("x")),
        exists("b"),
        {"op": "NOT", "exp": [cond("c", "in", json!(["1", "2"]))]}
    ]}]});
    let f = compile(Dialect::Expr, &p, &Value::Null).unwrap();
    assert_eq!(
        ir_text(f.lowered_ir()),
        "not ; (root)
  or ; /exp/0
    test header \"a\" str-prefix [\"x\"] ; /exp/0/exp/0
    test header \"b\" shape present ; /exp/0/exp/1
    not ; /exp/0/exp/2
      test header \"c\" str-eq [\"1\", \"2\"] ; /exp/0/exp/2/exp/0"
    );
    // De Morgan: an AND of negated leaves; NOT exists is a shape test; double negation gone.
    assert_eq!(
        ir_text(f.ir()),
        "and ; /exp/0
  test header \"b\" shape absent ; /exp/0/exp/1
  test header \"c\" str-eq [\"1\", \"2\"] ; /exp/0/exp/2/exp/0
  not ; /exp/0/exp/0
    test header \"a\" str-prefix [\"x\"] ; /exp/0/exp/0"
    );
    for (m, want) in [
        (json!({}), false),
        (json!({"c": "1"}), true),
        (json!({"a": "xy", "c": "1"}), false),
        (json!({"a": "yx", "c": "2"}), true),
        (json!({"b": "", "c": "1"}), false),
        (json!({"c": "3"}), false),
    ] {
        check(&p, &headers(m), want);
    }
}

#[test]
fn public_and_local_vectors_pass_through_both_engines() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    for file in [dir.join("expr.jsonl"), dir.join("local").join("expr.jsonl")] {
        let results = filtervm_conformance::runner::run_file(&file).unwrap();
        assert!(!results.is_empty(), "{}", file.display());
        let failures: Vec<String> = results
            .iter()
            .filter_map(|r| r.failure.as_ref().map(|f| format!("{}: {f}", r.id)))
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

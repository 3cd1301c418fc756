//! Every basaltic rule (B-1..B-13) through both engines: the VM and the reference interpreter.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::dialect::basaltic::validate_message;
use filtervm_compiler::{Dialect, ErrorCode, Evaluator};
use filtervm_conformance::json;
use filtervm_conformance::reference;
use filtervm_conformance::reference::json::{Map, Value};
use filtervm_conformance::runner::{compile, compile_policy_text, read_message};
use filtervm_vm::message::{AttributeType, Message};

/// Evaluates through both engines, asserts they agree, returns the verdict.
fn eval(policy: Value, attributes: Value) -> bool {
    let message = json!({ "attributes": attributes });
    let filter = compile(Dialect::Basaltic, &policy, &Value::Null).unwrap();
    let bound = read_message(Dialect::Basaltic, &Value::Null, &message).unwrap();
    let vm = Evaluator::new().matches(&filter, &bound);
    let reference =
        reference::evaluate(Dialect::Basaltic, &Value::Null, &policy, &message).unwrap();
    assert_eq!(
        vm, reference,
        "VM and reference disagree on {policy} / {message}"
    );
    vm
}

fn s(v: &str) -> Value {
    json!({"type": "String", "value": v})
}
fn n(v: &str) -> Value {
    json!({"type": "Number", "value": v})
}

/// Asserts the policy is rejected with the basaltic code at `pointer`.
fn invalid_at(policy: Value, pointer: &str) {
    let err = compile(Dialect::Basaltic, &policy, &Value::Null).unwrap_err();
    assert!(
        err.errors
            .iter()
            .all(|e| e.code == ErrorCode::NotificationInvalidFilterPolicy),
        "{err}"
    );
    assert!(
        err.errors.iter().any(|e| e.pointer == pointer),
        "expected an error at {pointer}, got {err}"
    );
}

#[test]
fn b_01_names_and_alternatives_or_case_sensitive_extra_ignored() {
    let p = json!({"a": ["1", "2"], "b": ["x"]});
    assert!(eval(
        p.clone(),
        json!({"a": s("2"), "b": s("x"), "extra": s("y")})
    ));
    assert!(!eval(p.clone(), json!({"a": s("3"), "b": s("x")})));
    assert!(!eval(p, json!({"a": s("1"), "B": s("x")})));
}

#[test]
fn b_02_empty_policy_matches_everything() {
    assert!(eval(json!({}), json!({})));
    assert!(eval(json!({}), json!({"a": s("b")})));
}

#[test]
fn b_03_every_matcher_but_exists_false_needs_presence() {
    for alt in [
        json!("x"),
        json!(5),
        json!({"prefix": "x"}),
        json!({"suffix": "x"}),
        json!({"anything-but": "x"}),
        json!({"numeric": [">", 0]}),
        json!({"exists": true}),
    ] {
        assert!(!eval(json!({ "k": [alt] }), json!({})));
    }
    assert!(eval(json!({"k": [{"exists": false}]}), json!({})));
}

#[test]
fn b_04_declared_type_never_changes_string_matchers() {
    assert!(eval(json!({"k": ["100"]}), json!({"k": n("100")})));
    assert!(eval(
        json!({"k": [{"prefix": "10"}]}),
        json!({"k": n("100")})
    ));
}

#[test]
fn b_05_exact_string_code_points_no_folding_no_normalisation() {
    assert!(eval(json!({"k": [""]}), json!({"k": s("")})));
    assert!(!eval(json!({"k": ["ERROR"]}), json!({"k": s("error")})));
    assert!(!eval(json!({"k": ["\u{e9}"]}), json!({"k": s("e\u{301}")})));
}

#[test]
fn b_06_bare_number_compares_canonical_text() {
    for (policy, value, expected) in [
        ("100", "100", true),
        ("100.0", "100", true),
        ("1e2", "100", true),
        ("100", "100.0", false),
        ("-0", "0", true),
        ("1.50", "1.5", true),
        ("1e21", "1e+21", true),
        ("0.0000001", "1e-7", true),
    ] {
        let policy_json: Value =
            filtervm_conformance::reference::json::parse(&format!("{{\"k\": [{policy}]}}"))
                .unwrap();
        assert_eq!(
            eval(policy_json, json!({"k": n(value)})),
            expected,
            "{policy} vs {value}"
        );
    }
}

#[test]
fn b_07_prefix_suffix_literal_and_nonempty() {
    assert!(eval(
        json!({"k": [{"prefix": "a*"}]}),
        json!({"k": s("a*b")})
    ));
    assert!(!eval(
        json!({"k": [{"prefix": "a*"}]}),
        json!({"k": s("ab")})
    ));
    assert!(eval(
        json!({"k": [{"suffix": ".x"}]}),
        json!({"k": s(".x")})
    ));
    invalid_at(json!({"k": [{"prefix": ""}]}), "/k/0/prefix");
    invalid_at(json!({"k": [{"suffix": 5}]}), "/k/0/suffix");
}

#[test]
fn b_08_anything_but_present_and_none_equal() {
    let p = json!({"k": [{"anything-but": ["a", 5]}]});
    assert!(eval(p.clone(), json!({"k": s("b")})));
    assert!(!eval(p.clone(), json!({"k": s("5")})));
    assert!(
        eval(p.clone(), json!({"k": s("5.0")})),
        "numbers by canonical text"
    );
    assert!(!eval(p, json!({})));
    invalid_at(json!({"k": [{"anything-but": []}]}), "/k/0/anything-but");
    invalid_at(
        json!({"k": [{"anything-but": [true]}]}),
        "/k/0/anything-but/0",
    );
    invalid_at(
        json!({"k": [{"anything-but": {"prefix": "a"}}]}),
        "/k/0/anything-but",
    );
    let many: Vec<String> = (0..51).map(|i| i.to_string()).collect();
    invalid_at(
        json!({"k": [{"anything-but": many}]}),
        "/k/0/anything-but/50",
    );
}

#[test]
fn b_09_exists_true_and_false() {
    assert!(eval(json!({"k": [{"exists": true}]}), json!({"k": s("")})));
    assert!(!eval(
        json!({"k": [{"exists": false}]}),
        json!({"k": s("")})
    ));
    assert!(eval(json!({"k": [{"exists": false}]}), json!({})));
    invalid_at(json!({"k": [{"exists": "true"}]}), "/k/0/exists");
}

#[test]
fn b_10_numeric_all_pairs_json_grammar_any_type() {
    let range = json!({"k": [{"numeric": [">=", 100, "<", 1000]}]});
    assert!(eval(range.clone(), json!({"k": n("100")})));
    assert!(
        eval(range.clone(), json!({"k": s("999.99")})),
        "declared type does not matter"
    );
    assert!(!eval(range.clone(), json!({"k": n("1000")})));
    for bad in [" 150", "+150", "1.5e", "0x10", "150 ", "NaN", "1e400"] {
        assert!(
            !eval(range.clone(), json!({"k": s(bad)})),
            "{bad} must not parse"
        );
    }
    assert!(
        !eval(
            json!({"k": [{"numeric": [">", 10, "<", 5]}]}),
            json!({"k": n("7")})
        ),
        "valid, never matches"
    );
    assert!(eval(
        json!({"k": [{"numeric": ["=", 100]}]}),
        json!({"k": n("1e2")})
    ));
    invalid_at(json!({"k": [{"numeric": []}]}), "/k/0/numeric");
    invalid_at(json!({"k": [{"numeric": [">", 1, "<"]}]}), "/k/0/numeric");
    invalid_at(json!({"k": [{"numeric": ["!=", 1]}]}), "/k/0/numeric/0");
    invalid_at(json!({"k": [{"numeric": [">", "1"]}]}), "/k/0/numeric/1");
    invalid_at(json!({"k": [{"numeric": ">"}]}), "/k/0/numeric");
}

#[test]
fn b_11_unsupported_operators_are_invalid() {
    for op in ["wildcard", "equals-ignore-case", "cidr", "regex"] {
        invalid_at(json!({"k": [{ op: "x" }]}), &format!("/k/0/{op}"));
    }
    invalid_at(json!({"k": {"nested": ["x"]}}), "/k");
    invalid_at(json!({"$or": [{"a": ["1"]}, {"b": ["2"]}]}), "/$or");
    invalid_at(json!({"k": [["a"]]}), "/k/0");
}

#[test]
fn b_12_structure_limits_and_pointers() {
    invalid_at(json!(["a"]), "");
    invalid_at(json!({"k": "x"}), "/k");
    invalid_at(json!({"k": []}), "/k");
    invalid_at(json!({"k": [null]}), "/k/0");
    invalid_at(json!({"k": [true]}), "/k/0");
    invalid_at(json!({"k": [{}]}), "/k/0");
    invalid_at(json!({"k": [{"prefix": "a", "suffix": "b"}]}), "/k/0");
    invalid_at(json!({"a/b~c": [{}]}), "/a~1b~0c/0");
    let alternatives: Vec<String> = (0..51).map(|i| format!("v{i}")).collect();
    invalid_at(json!({ "k": alternatives }), "/k/50");
    let mut names = Map::new();
    for i in 0..21 {
        names.insert(format!("k{i}"), json!(["v"]));
    }
    invalid_at(Value::Object(names.clone()), "/k20");
    names.remove("k20");
    assert!(
        compile(Dialect::Basaltic, &Value::Object(names), &Value::Null).is_ok(),
        "20 names are allowed"
    );
    // Policy text over 256 KiB is rejected before parsing.
    let big = format!("{{\"k\": [\"{}\"]}}", "x".repeat(256 * 1024));
    let err = compile_policy_text(Dialect::Basaltic, &big, &Value::Null).unwrap_err();
    assert_eq!(
        err.errors[0].code,
        ErrorCode::NotificationInvalidFilterPolicy
    );
    assert_eq!(err.errors[0].pointer, "");
    // Every error is reported, in policy order.
    let err = compile(
        Dialect::Basaltic,
        &json!({"a": [], "b": [{"prefix": ""}]}),
        &Value::Null,
    )
    .unwrap_err();
    let pointers: Vec<&str> = err.errors.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(pointers, ["/a", "/b/0/prefix"]);
    // Options are not accepted.
    assert!(compile(Dialect::Basaltic, &json!({}), &json!({"scope": "x"})).is_err());
}

#[test]
fn b_13_publish_time_message_check() {
    let ok = Message::attributes([("a", AttributeType::String, "x")]);
    assert!(validate_message(&ok).is_ok());
    let long_value = "x".repeat(1025);
    let err = validate_message(&Message::attributes([(
        "a",
        AttributeType::String,
        long_value.as_str(),
    )]))
    .unwrap_err();
    assert_eq!(
        (err.code, err.pointer.as_str()),
        (
            ErrorCode::NotificationInvalidMessageAttributes,
            "/attributes/a/value"
        )
    );
    let err =
        validate_message(&Message::attributes([("", AttributeType::String, "x")])).unwrap_err();
    assert_eq!(err.pointer, "/attributes/");
    let long_name = "n".repeat(257);
    assert!(
        validate_message(&Message::attributes([(
            long_name.as_str(),
            AttributeType::String,
            "x"
        )]))
        .is_err()
    );
    let names: Vec<String> = (0..21).map(|i| format!("k{i}")).collect();
    let too_many = Message::attributes(
        names
            .iter()
            .map(|n| (n.as_str(), AttributeType::String, "v")),
    );
    assert_eq!(
        validate_message(&too_many).unwrap_err().pointer,
        "/attributes"
    );
    let err =
        validate_message(&Message::attributes([("b", AttributeType::Binary, "AA")])).unwrap_err();
    assert_eq!(err.pointer, "/attributes/b/type");
    // Evaluation itself never fails on such a message.
    let filter = compile(
        Dialect::Basaltic,
        &json!({"a": [{"exists": true}]}),
        &Value::Null,
    )
    .unwrap();
    assert!(!filter.matches(&too_many));
}

#[test]
fn seed_complete_example_table() {
    let policy = json!({"event": ["order.created", "order.paid"], "environment": ["production"], "amount": [{"numeric": [">=", 100, "<", 1000]}], "test": [{"exists": false}]});
    let base =
        json!({"event": s("order.paid"), "environment": s("production"), "amount": n("149.50")});
    let with = |k: &str, v: Option<Value>| {
        let mut m = base.clone();
        match v {
            Some(v) => m[k] = v,
            None => {
                m.as_object_mut().unwrap().remove(k);
            }
        }
        m
    };
    assert!(eval(policy.clone(), base.clone()));
    assert!(!eval(
        policy.clone(),
        with("event", Some(s("order.refunded")))
    ));
    assert!(!eval(policy.clone(), with("amount", Some(n("1000")))));
    assert!(!eval(policy.clone(), with("amount", None)));
    assert!(!eval(policy.clone(), with("test", Some(s("false")))));
    assert!(eval(policy, with("customer", Some(s("c-17")))));
}

#[test]
fn message_shape_errors_point_into_the_message() {
    // A value that is neither a string nor a number (a number is read as its text).
    let bad = json!({"attributes": {"a": {"type": "String", "value": true}}});
    let err = read_message(Dialect::Basaltic, &Value::Null, &bad).unwrap_err();
    assert_eq!(err.pointer, "/attributes/a/value");
    // B-4: a basaltic attribute is a String or a Number; the error names the attribute.
    let bad = json!({"attributes": {"a": {"type": "Binary", "value": "x"}}});
    assert_eq!(
        read_message(Dialect::Basaltic, &Value::Null, &bad)
            .unwrap_err()
            .pointer,
        "/attributes/a"
    );
}

//! Conformance tests of the `sns` dialect (`docs/dialects/sns-filters.md` rules 1-45,
//! D-1..D-8): every case runs through the compiled filter (VM) and the reference interpreter, and both must agree
//! with the expected answer. Invalid policies are checked by error code and JSON Pointer, and by
//! the AWS wording where the spec mandates it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{Dialect, ErrorCode, Evaluator, Options, SnsScope, message_from_line};
use filtervm_conformance::json;
use filtervm_conformance::reference;
use filtervm_conformance::reference::json::{Map, Value};
use filtervm_conformance::runner::{
    compile, compile_policy_text as compile_text, product_message, read_message,
};
use filtervm_vm::bind::{Bindings, MAX_ROW_SLOTS};

fn body_scope() -> Value {
    json!({"scope": "MessageBody"})
}

/// Asserts that `policy` (with `options`) gives `expected` on `message` in both engines.
fn check_with(options: &Value, policy: &Value, message: &Value, expected: bool) {
    let filter = compile(Dialect::Sns, policy, options)
        .unwrap_or_else(|e| panic!("{policy} should compile: {e}"));
    let vm = filtervm_conformance::runner::matches(&filter, message)
        .unwrap_or_else(|e| panic!("{message} should read: {e}"));
    let oracle = reference::evaluate(Dialect::Sns, options, policy, message)
        .unwrap_or_else(|e| panic!("reference failed on {policy}: {e}"));
    assert_eq!(vm, expected, "VM: {policy} on {message}");
    assert_eq!(oracle, expected, "reference: {policy} on {message}");
}

/// Attribute scope: `attrs` is a list of (name, type, value).
fn attrs(list: &[(&str, &str, &str)]) -> Value {
    let mut m = Map::new();
    for (n, t, v) in list {
        m.insert((*n).to_owned(), json!({"Type": t, "Value": v}));
    }
    json!({ "attributes": m })
}

fn check(policy: Value, message: &Value, expected: bool) {
    check_with(&Value::Null, &policy, message, expected);
}

fn s(name: &str, value: &str) -> Value {
    attrs(&[(name, "String", value)])
}

fn n(name: &str, value: &str) -> Value {
    attrs(&[(name, "Number", value)])
}

fn arr(name: &str, value: &str) -> Value {
    attrs(&[(name, "String.Array", value)])
}

/// Body scope; `body` is the raw body text.
fn check_body(policy: Value, body: &str, expected: bool) {
    check_with(
        &body_scope(),
        &policy,
        &json!({"attributes": {}, "body": body}),
        expected,
    );
}

/// Every error of an invalid policy as (code, pointer, message).
fn errors_with(options: &Value, policy: &Value) -> Vec<(ErrorCode, String, String)> {
    let e = compile(Dialect::Sns, policy, options)
        .err()
        .unwrap_or_else(|| panic!("{policy} should be invalid"));
    e.errors
        .iter()
        .map(|p| (p.code, p.pointer.clone(), p.message.clone()))
        .collect()
}

/// Which code an error with AWS's wording `words` has: the kinds SNS answers alike with
/// `InvalidParameter`, told apart by code (the first phrase `words` contains decides; anything
/// else is a syntax or shape error).
fn code_of(words: &str) -> ErrorCode {
    use ErrorCode::{SnsInvalidValue, SnsLimitExceeded, SnsTypeError, SnsUnknownOperator};
    const KINDS: &[(&str, ErrorCode)] = &[
        ("can not have more than 5 keys", SnsLimitExceeded),
        ("Filter policy is too complex", SnsLimitExceeded),
        ("256 KiB", SnsLimitExceeded),
        ("(the list is empty)", ErrorCode::SnsSyntaxError),
        (
            "(an empty object is no operator)",
            ErrorCode::SnsSyntaxError,
        ),
        ("Unrecognized match type", SnsUnknownOperator),
        ("Unsupported anything-but pattern", SnsUnknownOperator),
        ("numeric range operator", SnsUnknownOperator),
        ("match pattern must be", SnsTypeError),
        ("must be numeric", SnsTypeError),
        ("Value of numeric must be an array.", SnsTypeError),
        ("Match value must be", SnsTypeError),
        ("is not supported", SnsTypeError),
        ("CIDR", SnsInvalidValue),
        ("mask bits", SnsInvalidValue),
        ("Nonstandard IP", SnsInvalidValue),
        ("Consecutive wildcard characters", SnsInvalidValue),
        ("Invalid escape character", SnsInvalidValue),
        ("Bottom must be less than top", SnsInvalidValue),
        ("Null prefix/suffix", SnsInvalidValue),
        ("out of range", SnsInvalidValue),
    ];
    KINDS
        .iter()
        .find(|(phrase, _)| words.contains(phrase))
        .map_or(ErrorCode::SnsSyntaxError, |(_, code)| *code)
}

/// Asserts the first error has the code of its kind ([`code_of`] the AWS wording `words`), the
/// pointer `pointer`, and a message containing `words`.
fn invalid_with(options: &Value, policy: Value, pointer: &str, words: &str) {
    let errors = errors_with(options, &policy);
    let (code, at, message) = &errors[0];
    assert_eq!(*code, code_of(words), "{policy}: {errors:?}");
    assert_eq!(at, pointer, "{policy}: {errors:?}");
    assert!(
        message.contains(words),
        "{policy}: `{message}` should contain `{words}`"
    );
}

fn invalid(policy: Value, pointer: &str, words: &str) {
    invalid_with(&Value::Null, policy, pointer, words);
}

fn invalid_body(policy: Value, pointer: &str, words: &str) {
    invalid_with(&body_scope(), policy, pointer, words);
}

// ---------------------------------------------------------------------------------------------
// 1. Model

#[test]
fn rule_01_names_are_anded_alternatives_ored_others_ignored() {
    let p = json!({"a": ["x", "y"], "b": ["z"]});
    let both = attrs(&[
        ("a", "String", "y"),
        ("b", "String", "z"),
        ("c", "String", "q"),
    ]);
    check(p.clone(), &both, true);
    check(p.clone(), &attrs(&[("a", "String", "y")]), false);
    check(
        p,
        &attrs(&[("a", "String", "w"), ("b", "String", "z")]),
        false,
    );
}

#[test]
fn rule_02_empty_policy_matches_every_message() {
    check(json!({}), &json!({"attributes": {}}), true);
    check(json!({}), &json!({}), true);
    check_body(json!({}), "not json at all", true);
}

#[test]
fn rule_03_scope_reads_only_its_own_part() {
    let msg = json!({"attributes": {"k": {"Type": "String", "Value": "attr"}}, "body": "{\"k\": \"body\"}"});
    check_with(&Value::Null, &json!({"k": ["attr"]}), &msg, true);
    check_with(&Value::Null, &json!({"k": ["body"]}), &msg, false);
    check_with(&body_scope(), &json!({"k": ["body"]}), &msg, true);
    check_with(&body_scope(), &json!({"k": ["attr"]}), &msg, false);
}

#[test]
fn rule_04_absent_property_fails_every_matcher_but_exists_false() {
    let other = s("other", "v");
    for alt in [
        json!("v"),
        json!(1),
        json!({"prefix": ""}),
        json!({"suffix": ""}),
        json!({"equals-ignore-case": "v"}),
        json!({"wildcard": "*"}),
        json!({"cidr": "0.0.0.0/0"}),
        json!({"numeric": [">", 0]}),
        json!({"anything-but": "zzz"}),
        json!({"anything-but": [1, 2]}),
        json!({"anything-but": {"prefix": "zzz"}}),
        json!({"anything-but": {"suffix": "zzz"}}),
        json!({"anything-but": {"wildcard": "z*"}}),
        json!({"anything-but": {"equals-ignore-case": "zzz"}}),
        json!({"exists": true}),
        json!(null),
    ] {
        check(json!({ "k": [alt] }), &other, false);
    }
    check(json!({"k": [{"exists": false}]}), &other, true);
    // LS-SNAP: `[null, {"anything-but": "whatever"}]` and a message without attributes.
    check(
        json!({"attr1": [null, {"anything-but": "whatever"}]}),
        &json!({"attributes": {}}),
        false,
    );
}

// ---------------------------------------------------------------------------------------------
// 2. Message attributes

#[test]
fn rule_05_names_are_case_sensitive_and_types_are_read() {
    check(json!({"Store": ["a"]}), &s("store", "a"), false);
    check(json!({"store": ["a"]}), &s("store", "a"), true);
    // Custom String.x / Number.x types read as their base type.
    check(
        json!({"k": ["a"]}),
        &attrs(&[("k", "String.custom", "a")]),
        true,
    );
    check(
        json!({"k": [5]}),
        &attrs(&[("k", "Number.float", "5.0")]),
        true,
    );
}

#[test]
fn rule_06_number_attributes_compare_as_numbers() {
    let p = json!({"price": [{"numeric": ["=", 301.5]}]});
    for v in ["301.5", "3.015e2", "301.500", "301.50000"] {
        check(p.clone(), &n("price", v), true);
    }
    check(p, &n("price", "301.51"), false);
}

#[test]
fn rule_07_string_array_elements_are_matched_separately() {
    check(
        json!({"k": ["b"]}),
        &arr("k", r#"["a", "b", 1, true, null]"#),
        true,
    );
    check(json!({"k": [1]}), &arr("k", r#"["a", 1]"#), true);
    check(json!({"k": [null]}), &arr("k", r#"["a", null]"#), true);
    // DECISION: not the JSON text of an array → no values, absent for every matcher.
    check(json!({"k": ["a"]}), &arr("k", "a"), false);
    check(
        json!({"k": [{"exists": true}]}),
        &arr("k", "{\"a\": 1}"),
        false,
    );
    check(
        json!({"k": [{"exists": false}]}),
        &attrs(&[("k", "String.Array", "[oops"), ("x", "String", "1")]),
        true,
    );
}

#[test]
fn rule_08_binary_attributes_are_invisible() {
    let m = attrs(&[("sig", "Binary", "AQID"), ("region", "String", "EU")]);
    check(json!({"sig": [{"exists": true}]}), &m, false);
    check(json!({"sig": [{"exists": false}]}), &m, true);
    check(json!({"sig": ["AQID"]}), &m, false);
    // ...and does not count as an attribute for rule 12.
    check(
        json!({"x": [{"exists": false}]}),
        &attrs(&[("sig", "Binary", "AQID")]),
        false,
    );
}

#[test]
fn rule_09_number_attributes_are_compared() {
    check(json!({"n": [{"numeric": [">", 5]}]}), &n("n", "6"), true);
    check(json!({"n": [6]}), &n("n", "6"), true);
}

#[test]
fn rule_10_numeric_matches_number_values_only() {
    check(
        json!({"k": [{"numeric": [">", 100]}]}),
        &s("k", "150"),
        false,
    );
    check(json!({"k": ["100"]}), &n("k", "100"), false);
    check(
        json!({"k": [{"numeric": [">", 100]}]}),
        &arr("k", "[150]"),
        true,
    );
    check(
        json!({"k": [{"numeric": [">", 100]}]}),
        &arr("k", r#"["150"]"#),
        false,
    );
}

#[test]
fn rule_11_number_arrays_travel_as_string_arrays() {
    check(
        json!({"k": [{"numeric": ["<", 0]}]}),
        &arr("k", "[5, -1]"),
        true,
    );
    // `Number.Array` is a custom Number type: "[5, -1]" is not a number, so it is absent.
    check(
        json!({"k": [{"numeric": ["<", 0]}]}),
        &attrs(&[("k", "Number.Array", "[5, -1]")]),
        false,
    );
}

#[test]
fn rule_12_exists_false_needs_at_least_one_attribute() {
    let p = json!({"store": [{"exists": false}]});
    check(p.clone(), &json!({"attributes": {}}), false);
    check(p.clone(), &s("other", "x"), true);
    check(p, &s("store", "x"), false);
}

#[test]
fn rule_13_nested_objects_need_body_scope_and_are_checked_first() {
    let nested = json!({"object": {"key": [{"prefix": "auto-"}]}});
    invalid(
        nested.clone(),
        "/object",
        "Filter policy scope MessageAttributes does not support nested filter policy",
    );
    check_body(nested, r#"{"object": {"key": "auto-1"}}"#, true);
    // Inside `$or` branches too.
    invalid(
        json!({"$or": [{"a": ["1"]}, {"b": {"c": ["2"]}}]}),
        "/$or/1/b",
        "does not support nested filter policy",
    );
    // An error inside the nested object is reported first, in either scope.
    invalid(
        json!({"key": {"suffix": "v"}}),
        "/key/suffix",
        "\"suffix\" must be an object or an array",
    );
    invalid_body(
        json!({"key": {"suffix": "v"}}),
        "/key/suffix",
        "\"suffix\" must be an object or an array",
    );
    // Then the scope, before the key and combination limits.
    invalid(
        json!({"a": {"b": ["1"]}, "c": ["1"], "d": ["1"], "e": ["1"], "f": ["1"], "g": ["1"]}),
        "/a",
        "does not support nested filter policy",
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Message body

#[test]
fn rule_14_body_must_be_a_json_object() {
    let p = json!({"k": [{"exists": false}]});
    check_body(p.clone(), "{}", true);
    check_body(p.clone(), "not json", false);
    check_body(p.clone(), "\"a string\"", false);
    check_body(p.clone(), "[1, 2]", false);
    check_body(p, "42", false);
}

#[test]
fn rule_15_nested_policy_objects_mirror_the_body() {
    let p = json!({"detail": {"status": ["PAID"]}});
    check_body(p.clone(), r#"{"detail": {"status": "PAID"}}"#, true);
    check_body(p.clone(), r#"{"status": "PAID"}"#, false);
    check_body(p, r#"{"detail": "PAID"}"#, false);
}

#[test]
fn rule_16_dotted_keys_match_nested_flat_and_mixed_forms() {
    let p = json!({"a.b.c": ["v"]});
    for body in [
        r#"{"a": {"b": {"c": "v"}}}"#,
        r#"{"a.b.c": "v"}"#,
        r#"{"a.b": {"c": "v"}}"#,
        r#"{"a": {"b.c": "v"}}"#,
    ] {
        check_body(p.clone(), body, true);
        check_body(json!({"a": {"b": {"c": ["v"]}}}), body, true);
        check_body(json!({"a": {"b.c": ["v"]}}), body, true);
    }
    check_body(p, r#"{"a": {"bc": "v"}}"#, false);
}

#[test]
fn rule_17_arrays_are_transparent_at_every_level() {
    let p = json!({"Records": {"s3": {"object": {"key": [{"prefix": "auto-"}]}}}});
    check_body(
        p.clone(),
        r#"{"Records": [{"s3": {"object": [[{"key": "auto-1"}]]}}]}"#,
        true,
    );
    check_body(
        p,
        r#"{"Records": [{"s3": {"object": [[{"key": "home-1"}]]}}]}"#,
        false,
    );
    check_body(json!({"t": ["b"]}), r#"{"t": [["a"], [["b"]]]}"#, true);
    check_body(json!({"t": [2]}), r#"{"t": [[1], [[2.0]]]}"#, true);
}

#[test]
fn rule_18_conditions_are_satisfied_by_one_element() {
    let p = json!({"Records": {"a": ["1"], "b": ["2"]}});
    check_body(p.clone(), r#"{"Records": [{"a": "1", "b": "2"}]}"#, true);
    check_body(p.clone(), r#"{"Records": [{"a": "1"}, {"b": "2"}]}"#, false);
    check_body(
        p.clone(),
        r#"{"Records": [{"a": "1"}, {"a": "1", "b": "2"}]}"#,
        true,
    );
    // Nested arrays: the same inner element, under the same outer element.
    let q = json!({"R": {"I": {"x": ["1"], "y": ["2"]}}});
    check_body(
        q.clone(),
        r#"{"R": [{"I": [{"x": "1"}, {"y": "2"}]}]}"#,
        false,
    );
    check_body(
        q,
        r#"{"R": [{"I": [{"x": "1"}]}, {"I": [{"x": "1", "y": "2"}]}]}"#,
        true,
    );
    // A condition outside the array combines with any element.
    check_body(
        json!({"top": ["t"], "R": {"a": ["1"], "b": ["2"]}}),
        r#"{"top": "t", "R": [{"a": "0"}, {"a": "1", "b": "2"}]}"#,
        true,
    );
    // Conditions on one path tested twice (D-8) are judged per element too.
    check_body(
        json!({"R": {"x": ["a"], "$or": [{"x": ["b"]}, {"x": ["c"]}]}}),
        r#"{"R": [{"x": "a"}, {"x": "b"}]}"#,
        false,
    );
    check_body(
        json!({"R": {"x": ["a"], "$or": [{"x": ["b"]}, {"x": ["c"]}]}}),
        r#"{"R": [{"x": ["a", "c"]}]}"#,
        true,
    );
}

#[test]
fn rule_19_exists_applies_to_leaves_only() {
    let body = r#"{"detail": {"c-count": {"c1": 100}}}"#;
    check_body(
        json!({"detail": {"c-count": [{"exists": true}]}}),
        body,
        false,
    );
    check_body(
        json!({"detail": {"c-count": [{"exists": false}]}}),
        body,
        true,
    );
    check_body(
        json!({"detail": {"c-count": {"c1": [{"exists": true}]}}}),
        body,
        true,
    );
}

#[test]
fn rule_20_empty_arrays_are_absent_empty_strings_are_values() {
    check_body(json!({"k": [{"exists": false}]}), r#"{"k": []}"#, true);
    check_body(json!({"k": [{"exists": true}]}), r#"{"k": []}"#, false);
    check_body(json!({"k": [""]}), r#"{"k": [""]}"#, true);
    check_body(json!({"k": [""]}), r#"{"k": ""}"#, true);
}

#[test]
fn rule_21_exists_true_holds_for_null_and_empty_body_values() {
    check_body(json!({"k": [{"exists": true}]}), r#"{"k": null}"#, true);
    check_body(json!({"k": [{"exists": true}]}), r#"{"k": ""}"#, true);
    check_body(json!({"k": [{"exists": false}]}), r#"{"k": null}"#, false);
}

// ---------------------------------------------------------------------------------------------
// 4. Matchers

#[test]
fn rule_22_exact_strings_are_case_sensitive_whole_values() {
    check(json!({"k": ["rugby"]}), &s("k", "rugby"), true);
    check(json!({"k": ["rugby"]}), &s("k", "Rugby"), false);
    check(json!({"k": ["rugby"]}), &s("k", "rugby "), false);
    check(json!({"k": ["rug"]}), &s("k", "rugby"), false);
}

#[test]
fn rule_23_bare_numbers_match_numerically_equal_numbers() {
    for v in ["100", "100.0", "1e2", "1.00E+2"] {
        check(json!({"price": [100]}), &n("price", v), true);
    }
    check(json!({"price": [100]}), &s("price", "100"), false);
    check(json!({"price": [100]}), &n("price", "101"), false);
    check_body(json!({"price": [100]}), r#"{"price": 1e2}"#, true);
    check_body(json!({"price": [100]}), r#"{"price": "100"}"#, false);
}

#[test]
fn rule_24_true_false_null_literals() {
    check_body(json!({"k": [true]}), r#"{"k": true}"#, true);
    check_body(json!({"k": [true]}), r#"{"k": "true"}"#, false);
    check_body(json!({"k": [false]}), r#"{"k": [true, false]}"#, true);
    check_body(json!({"k": [null]}), r#"{"k": null}"#, true);
    check_body(json!({"k": [null]}), r#"{}"#, false);
    check_body(json!({"k": [null]}), r#"{"k": "null"}"#, false);
    check(json!({"k": [true]}), &arr("k", "[true]"), true);
    check(json!({"k": [true]}), &s("k", "true"), false);
}

#[test]
fn rule_25_prefix_and_suffix() {
    check(json!({"k": [{"prefix": "bas"}]}), &s("k", "baseball"), true);
    check(
        json!({"k": [{"prefix": "bas"}]}),
        &s("k", "Baseball"),
        false,
    );
    check(json!({"k": [{"prefix": "bas"}]}), &s("k", "bas"), true);
    check(
        json!({"k": [{"suffix": "ball"}]}),
        &s("k", "baseball"),
        true,
    );
    check(json!({"k": [{"suffix": "ball"}]}), &s("k", "ball"), true);
    check(json!({"k": [{"suffix": "ball"}]}), &s("k", "BALL"), false);
    check(json!({"k": [{"prefix": "1"}]}), &n("k", "100"), false);
    invalid(
        json!({"k": [{"prefix": 1}]}),
        "/k/0/prefix",
        "prefix match pattern must be a string",
    );
    invalid(
        json!({"k": [{"prefix": {"equals-ignore-case": "a"}}]}),
        "/k/0/prefix",
        "prefix match pattern must be a string",
    );
}

#[test]
fn rule_26_equals_ignore_case() {
    let p = json!({"k": [{"equals-ignore-case": "tennis"}]});
    for v in ["Tennis", "TENNIS", "tEnNiS"] {
        check(p.clone(), &s("k", v), true);
    }
    check(p.clone(), &s("k", "tennis2"), false);
    check(p, &s("k", "tenni"), false);
    check(
        json!({"k": [{"equals-ignore-case": "ÉTÉ"}]}),
        &s("k", "été"),
        true,
    );
}

#[test]
fn rule_27_wildcard() {
    let p = json!({"k": [{"wildcard": "Simple*Service"}]});
    check(p.clone(), &s("k", "SimpleService"), true);
    check(p.clone(), &s("k", "SimpleQueueService"), true);
    check(p, &s("k", "SimpleQueueServices"), false);
    check(json!({"k": [{"wildcard": "*"}]}), &s("k", ""), true);
    check(
        json!({"k": [{"wildcard": "a*b*c*d"}]}),
        &s("k", "aXbYcZd"),
        true,
    );
    check(json!({"k": [{"wildcard": "a\\*b"}]}), &s("k", "a*b"), true);
    check(json!({"k": [{"wildcard": "a\\*b"}]}), &s("k", "axb"), false);
    check(
        json!({"k": [{"wildcard": "a\\\\b"}]}),
        &s("k", "a\\b"),
        true,
    );
    check(json!({"k": [{"wildcard": "*"}]}), &n("k", "1"), false);
    invalid(
        json!({"k": [{"wildcard": "a**b"}]}),
        "/k/0/wildcard",
        "Consecutive wildcard characters",
    );
    invalid(
        json!({"k": [{"wildcard": "a\\b"}]}),
        "/k/0/wildcard",
        "Invalid escape character",
    );
}

#[test]
fn rule_28_anything_but_passes_an_array_only_if_no_element_is_excluded() {
    let p = json!({"k": [{"anything-but": ["rugby", "tennis"]}]});
    check(p.clone(), &s("k", "rugby"), false);
    check(p.clone(), &s("k", "golf"), true);
    check(p.clone(), &arr("k", r#"["golf", "rugby"]"#), false);
    check(p.clone(), &arr("k", r#"["golf", "polo"]"#), true);
    check_body(p.clone(), r#"{"k": ["rugby", "baseball"]}"#, false);
    check_body(p, r#"{"k": ["polo", "baseball"]}"#, true);
    let sfx = json!({"k": [{"anything-but": {"suffix": "ball"}}]});
    check(
        sfx.clone(),
        &arr("k", r#"["baseball", "basketball"]"#),
        false,
    );
    check(sfx.clone(), &arr("k", r#"["baseball", "rugby"]"#), false);
    check(sfx, &arr("k", r#"["rugby"]"#), true);
    // ORed with exists:false to admit absent keys.
    let or_absent = json!({"k": [{"anything-but": "x"}, {"exists": false}]});
    check(or_absent.clone(), &s("other", "1"), true);
    check(or_absent, &s("k", "x"), false);
}

#[test]
fn rule_29_anything_but_compares_numbers_numerically() {
    let p = json!({"price": [{"anything-but": [100, 500]}]});
    check(p.clone(), &n("price", "100"), false);
    check(p.clone(), &n("price", "1e2"), false);
    check(p.clone(), &n("price", "100.1"), true);
    check(p.clone(), &n("price", "101"), true);
    check(p.clone(), &arr("price", "[100, 50]"), false);
    check_body(p, r#"{"price": 500.0}"#, false);
    check(
        json!({"price": [{"anything-but": 100}]}),
        &n("price", "100"),
        false,
    );
}

#[test]
fn rule_30_anything_but_suffix_and_wildcard_follow_the_current_docs() {
    check(
        json!({"k": [{"anything-but": {"suffix": "ball"}}]}),
        &s("k", "rugby"),
        true,
    );
    check(
        json!({"k": [{"anything-but": {"wildcard": "*ball"}}]}),
        &s("k", "baseball"),
        false,
    );
    check(
        json!({"k": [{"anything-but": {"wildcard": ["*ball", "r*"]}}]}),
        &s("k", "rugby"),
        false,
    );
    check(
        json!({"k": [{"anything-but": {"wildcard": "*ball"}}]}),
        &s("k", "golf"),
        true,
    );
}

#[test]
fn rule_31_numeric_ranges() {
    let p = json!({"k": [{"numeric": [">", 0, "<=", 150]}]});
    check(p.clone(), &n("k", "0"), false);
    check(p.clone(), &n("k", "0.00001"), true);
    check(p.clone(), &n("k", "150"), true);
    check(p.clone(), &n("k", "150.00001"), false);
    check(p, &n("k", "-5"), false);
    check(
        json!({"k": [{"numeric": [">=", 0, "<", 1]}]}),
        &n("k", "0"),
        true,
    );
    check(
        json!({"k": [{"numeric": [">=", 0, "<", 1]}]}),
        &n("k", "1"),
        false,
    );
    check(json!({"k": [{"numeric": ["=", 5]}]}), &n("k", "5.0"), true);
    check(json!({"k": [{"numeric": ["<", 5]}]}), &n("k", "4.99"), true);
    check(json!({"k": [{"numeric": ["<=", 5]}]}), &n("k", "5"), true);
    // Any finite policy number (DECISION), beyond the documented ±1e9.
    check(
        json!({"k": [{"numeric": [">", 1e12]}]}),
        &n("k", "2e12"),
        true,
    );
    // A body number too large for a binary64 reads as infinity.
    check_body(
        json!({"k": [{"numeric": [">", 0]}]}),
        r#"{"k": 1e400}"#,
        true,
    );
    check_body(
        json!({"k": [{"numeric": ["<", 0]}]}),
        r#"{"k": 1e400}"#,
        false,
    );
}

#[test]
fn rule_32_cidr() {
    let p = json!({"ip": [{"cidr": "10.0.0.0/24"}]});
    check(p.clone(), &s("ip", "10.0.0.255"), true);
    check(p.clone(), &s("ip", "10.0.1.0"), false);
    check(p.clone(), &s("ip", "10.0.0.256"), false);
    check(p.clone(), &s("ip", "hello"), false);
    let v6 = json!({"ip": [{"cidr": "2001:db8:1234:1a00::/64"}]});
    check(
        v6.clone(),
        &s("ip", "2001:0db8:1234:1a00:0000:0000:0000:0001"),
        true,
    );
    check(v6, &s("ip", "2001:db8:1234:1a01::1"), false);
    check_body(p, r#"{"ip": ["1.1.1.1", "10.0.0.7"]}"#, true);
}

#[test]
fn rule_33_exists_takes_booleans() {
    check(json!({"k": [{"exists": true}]}), &s("k", "v"), true);
    check(json!({"k": [{"exists": true}]}), &s("j", "v"), false);
    invalid(
        json!({"k": [{"exists": "no"}]}),
        "/k/0/exists",
        "exists match pattern must be either true or false.",
    );
}

#[test]
fn rule_34_or_branches_nest_and_combine_with_siblings() {
    let p = json!({"f1": ["v1"], "$or": [{"f2": ["v2"]}, {"f3": ["v3"], "$or": [{"f4": ["v4"]}, {"f5": ["v5"]}]}]});
    check(
        p.clone(),
        &attrs(&[("f1", "String", "v1"), ("f2", "String", "v2")]),
        true,
    );
    check(
        p.clone(),
        &attrs(&[
            ("f1", "String", "v1"),
            ("f3", "String", "v3"),
            ("f5", "String", "v5"),
        ]),
        true,
    );
    check(
        p.clone(),
        &attrs(&[("f1", "String", "v1"), ("f3", "String", "v3")]),
        false,
    );
    check(p, &attrs(&[("f2", "String", "v2")]), false);
    // Inside a nested body object.
    let b = json!({"detail": {"scope": ["Service"], "$or": [{"source": ["aws.cloudwatch"]}, {"type": ["Alarm"]}]}});
    check_body(
        b.clone(),
        r#"{"detail": {"scope": "Service", "type": "Alarm"}}"#,
        true,
    );
    check_body(
        b,
        r#"{"detail": {"scope": "Service"}, "type": "Alarm"}"#,
        false,
    );
    invalid(
        json!({"$or": [{"a": ["1"]}]}),
        "/$or",
        "There must have at least 2 Objects in $or relationship.",
    );
    invalid(
        json!({"$or": {"a": ["1"]}}),
        "/$or",
        "It must be an Array followed with $or.",
    );
    invalid(
        json!({"$or": [{"a": ["1"]}, "b"]}),
        "/$or/1",
        "Only JSON object is allowed in array of $or relationship.",
    );
    invalid(
        json!({"$or": [{"a": ["1"]}, {"prefix": ["b"]}]}),
        "/$or/1/prefix",
        "prefix is Ruler reserved fieldName which cannot be used inside $or.",
    );
    invalid(
        json!({"$or": [{"a": ["1"]}, {}]}),
        "/$or/1",
        "Empty objects are not allowed",
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Validation

#[test]
fn rule_35_malformed_json_fails_to_parse() {
    let e = compile_text(Dialect::Sns, "{\"a\": [1", &Value::Null).unwrap_err();
    assert_eq!(e.errors[0].code, ErrorCode::SnsSyntaxError);
    assert!(e.errors[0].message.contains("failed to parse JSON."));
    // A policy given as a JSON string is its text.
    // The pointer names the member whose value the text ends in.
    invalid(json!("{\"a\": "), "/a", "failed to parse JSON.");
    check(json!("{\"a\": [\"x\"]}"), &s("a", "x"), true);
    let ok = compile_text(Dialect::Sns, r#"{"a": ["x"]}"#, &Value::Null).unwrap();
    assert!(ok.matches(&read_message(Dialect::Sns, &Value::Null, &s("a", "x")).unwrap()));
}

#[test]
fn rule_36_values_must_be_objects_or_arrays() {
    invalid(
        json!({"key_a": "value_one"}),
        "/key_a",
        "\"key_a\" must be an object or an array",
    );
    invalid(json!({"k": 1}), "/k", "\"k\" must be an object or an array");
    invalid(
        json!({"k": null}),
        "/k",
        "\"k\" must be an object or an array",
    );
    invalid(
        json!({"key": {"not-an-operator": "value"}}),
        "/key/not-an-operator",
        "\"not-an-operator\" must be an object or an array",
    );
    invalid(json!([1]), "", "Filter is not an object");
}

#[test]
fn rule_37_lists_and_operator_objects() {
    invalid(json!({"k": []}), "/k", "Empty arrays are not allowed");
    invalid(
        json!({"k": [["value"]]}),
        "/k/0",
        "Match value must be String, number, true, false, or null",
    );
    invalid(
        json!({"k": [{}]}),
        "/k/0",
        "Match value must be String, number, true, false, or null (an empty object is no operator)",
    );
    invalid(
        json!({"k": [{"wrong-operator": true}]}),
        "/k/0/wrong-operator",
        "Unrecognized match type wrong-operator",
    );
    invalid(
        json!({"k": [{"suffix": "value", "prefix": "value2"}]}),
        "/k/0/prefix",
        "Only one key allowed in match expression",
    );
    // Every member's errors are reported, in policy order.
    let errors = errors_with(&Value::Null, &json!({"a": [], "b": [{"x": 1}]}));
    let pointers: Vec<&str> = errors.iter().map(|e| e.1.as_str()).collect();
    assert_eq!(pointers, ["/a", "/b/0/x"]);
}

#[test]
fn rule_38_numeric_errors() {
    let cases: [(Value, &str, &str); 13] = [
        (
            json!([]),
            "/k/0/numeric",
            "Invalid member in numeric match: ]",
        ),
        (
            json!([1, "<="]),
            "/k/0/numeric/0",
            "Invalid member in numeric match: 1",
        ),
        (
            json!(["operator"]),
            "/k/0/numeric/0",
            "Unrecognized numeric range operator: operator",
        ),
        (
            json!(["=", "000"]),
            "/k/0/numeric/1",
            "Value of equals must be numeric",
        ),
        (json!([">="]), "/k/0/numeric", "Value of >= must be numeric"),
        (
            json!(["<", 100, ">", 10]),
            "/k/0/numeric/2",
            "Too many elements in numeric expression",
        ),
        (
            json!(["=", 1, 2]),
            "/k/0/numeric/2",
            "Too many elements in numeric expression",
        ),
        (
            json!([">=", 1, ">", 2]),
            "/k/0/numeric/2",
            "Bad numeric range operator: >",
        ),
        (
            json!([">", 3, "<", 1]),
            "/k/0/numeric",
            "Bottom must be less than top",
        ),
        (
            json!([">", 20, "<="]),
            "/k/0/numeric",
            "Value of <= must be numeric",
        ),
        (
            json!([">", 20, 30]),
            "/k/0/numeric/2",
            "Bad value in numeric range: 30",
        ),
        (
            json!([">", 20, "<", 30, "<", 50]),
            "/k/0/numeric/4",
            "Too many terms in numeric range expression",
        ),
        (
            json!([">", "20", "<", "30"]),
            "/k/0/numeric/1",
            "Value of > must be numeric",
        ),
    ];
    for (operand, pointer, words) in cases {
        invalid(json!({"k": [{"numeric": operand}]}), pointer, words);
    }
    invalid(
        json!({"k": [{"numeric": [">", 20, "<", "30"]}]}),
        "/k/0/numeric/3",
        "Value of < must be numeric",
    );
    invalid(
        json!({"k": [{"numeric": [">=", 5, "<=", 5]}]}),
        "/k/0/numeric",
        "Bottom must be less than top",
    );
    invalid(
        json!({"k": [{"numeric": 5}]}),
        "/k/0/numeric",
        "Value of numeric must be an array.",
    );
}

#[test]
fn rule_39_exists_needs_a_boolean() {
    for operand in [json!(null), json!("no"), json!(1), json!([true])] {
        invalid(
            json!({"k": [{"exists": operand}]}),
            "/k/0/exists",
            "exists match pattern must be either true or false.",
        );
    }
}

#[test]
fn rule_40_cidr_checks_in_order() {
    let cases = [
        (json!(1), "prefix match pattern must be a string"),
        (json!("10.0.0.1"), "Malformed CIDR, one '/' required"),
        (json!("10.0.0.0/8/8"), "Malformed CIDR, one '/' required"),
        (json!("bad-/64filter"), "mask bits must be an integer"),
        (json!("10.0.0.0/x"), "mask bits must be an integer"),
        (json!("10.0.0.256/8"), "Nonstandard IP address: 10.0.0.256"),
    ];
    for (operand, words) in cases {
        invalid(json!({"k": [{"cidr": operand}]}), "/k/0/cidr", words);
    }
}

#[test]
fn rule_41_anything_but_operators() {
    for op in [
        "wrong-operator",
        "exists",
        "numeric",
        "cidr",
        "anything-but",
    ] {
        invalid(
            json!({"k": [{"anything-but": {op: "x"}}]}),
            &format!("/k/0/anything-but/{op}"),
            &format!("Unsupported anything-but pattern: {op}"),
        );
    }
    for op in ["prefix", "suffix", "wildcard", "equals-ignore-case"] {
        for operand in [json!(1), json!([]), json!(["a", 1]), json!(null)] {
            let errors = errors_with(
                &Value::Null,
                &json!({"k": [{"anything-but": {op: operand}}]}),
            );
            assert!(
                errors[0]
                    .2
                    .contains(&format!("{op} match pattern must be a string")),
                "{op} {operand}: {errors:?}"
            );
        }
        // A non-empty list of strings: excluded when any entry matches.
        compile(
            Dialect::Sns,
            &json!({"k": [{"anything-but": {op: ["a", "b"]}}]}),
            &Value::Null,
        )
        .unwrap();
    }
    check(
        json!({"k": [{"anything-but": {"prefix": ["a", "b"]}}]}),
        &s("k", "bz"),
        false,
    );
    invalid(
        json!({"k": [{"anything-but": []}]}),
        "/k/0/anything-but",
        "Inside anything but list, either all values are number or string, mixed type is not supported (the list is empty)",
    );
    invalid(
        json!({"k": [{"anything-but": {"prefix": "a", "suffix": "b"}}]}),
        "/k/0/anything-but/suffix",
        "Only one key allowed in match expression",
    );
}

#[test]
fn rule_42_at_most_five_leaf_keys() {
    let six = json!({"a": ["1"], "b": ["1"], "c": ["1"], "d": ["1"], "e": ["1"], "f": ["1"]});
    invalid(six, "/f", "Filter policy can not have more than 5 keys");
    // Leaf keys count in nested policies, parents do not.
    compile(
        Dialect::Sns,
        &json!({"p": {"a": ["1"], "b": ["1"], "c": ["1"]}, "q": {"d": ["1"], "e": ["1"]}}),
        &body_scope(),
    )
    .unwrap();
    invalid_body(
        json!({"p": {"a": ["1"], "b": ["1"], "c": ["1"]}, "q": {"d": ["1"], "e": ["1"], "f": ["1"]}}),
        "/q/f",
        "Filter policy can not have more than 5 keys",
    );
    // Across $or branches, distinct leaf paths count once.
    compile(
        Dialect::Sns,
        &json!({"a": ["1"], "$or": [{"b": ["1"], "c": ["1"]}, {"b": ["2"], "d": ["1"], "e": ["1"]}]}),
        &Value::Null,
    )
    .unwrap();
    invalid(
        json!({"a": ["1"], "$or": [{"b": ["1"], "c": ["1"]}, {"d": ["1"], "e": ["1"], "f": ["1"]}]}),
        "/$or/1/f",
        "Filter policy can not have more than 5 keys",
    );
    // The key rule comes before the combination rule.
    let values: Vec<String> = (0..151).map(|i| i.to_string()).collect();
    invalid(
        json!({"a": values, "b": ["1"], "c": ["1"], "d": ["1"], "e": ["1"], "f": ["1"]}),
        "/f",
        "can not have more than 5 keys",
    );
}

#[test]
fn rule_43_at_most_150_combinations() {
    let list = |k: usize| -> Value { (0..k).map(|i| json!(format!("v{i}"))).collect() };
    compile(Dialect::Sns, &json!({"a": list(150)}), &Value::Null).unwrap();
    invalid(json!({"a": list(151)}), "", "Filter policy is too complex");
    invalid(
        json!({"a": list(100), "b": list(51)}),
        "",
        "Filter policy is too complex",
    );
    compile(
        Dialect::Sns,
        &json!({"a": list(3), "b": list(50)}),
        &Value::Null,
    )
    .unwrap();
    // $or: 4·6 + 4·4·4 + 4·4·4 = 152 rejected; 3·6 + 3·4·4 + 3·4·7 = 150 accepted.
    let or = |s: usize, m: usize, t: usize, i: usize, sp: usize| json!({"source": list(s), "$or": [{"metricName": list(m)}, {"metricType": list(t), "$or": [{"metricId": list(i)}, {"spaceId": list(sp)}]}]});
    invalid(or(4, 6, 4, 4, 4), "", "Filter policy is too complex");
    compile(Dialect::Sns, &or(3, 6, 4, 4, 7), &Value::Null).unwrap();
    // Nested: (3·4)·(2·3)·(1·3) = 216 rejected; without key_f, 72 accepted.
    let nested = json!({"key_a": {"key_b": {"key_c": list(4)}}, "key_d": {"key_e": list(3)}, "key_f": list(3)});
    invalid_body(nested, "", "Filter policy is too complex");
    compile(
        Dialect::Sns,
        &json!({"key_a": {"key_b": {"key_c": list(4)}}, "key_d": {"key_e": list(3)}}),
        &body_scope(),
    )
    .unwrap();
}

#[test]
fn rule_43a_wordings() {
    invalid(
        json!({"k": [{"suffix": 1}]}),
        "/k/0/suffix",
        "suffix match pattern must be a string",
    );
    invalid(
        json!({"k": [{"suffix": null}]}),
        "/k/0/suffix",
        "suffix match pattern must be a string",
    );
    invalid(
        json!({"k": [{"suffix": ["a"]}]}),
        "/k/0/suffix",
        "suffix match pattern must be a string",
    );
    invalid(
        json!({"k": [{"equals-ignore-case": 1}]}),
        "/k/0/equals-ignore-case",
        "equals-ignore-case match pattern must be a string",
    );
    invalid(
        json!({"k": [{"wildcard": 1}]}),
        "/k/0/wildcard",
        "wildcard match pattern must be a string",
    );
    invalid(
        json!({"k": [{"cidr": "10.0.0.0/a"}]}),
        "/k/0/cidr",
        "mask bits must be an integer",
    );
    for (bad, what) in [
        (json!(true), "boolean"),
        (json!(null), "null"),
        (json!({}), "object"),
        (json!([1]), "array"),
    ] {
        invalid(
            json!({"k": [{"anything-but": ["a", bad]}]}),
            "/k/0/anything-but/1",
            &format!("Inside anything but list, {what} is not supported."),
        );
    }
    invalid(
        json!({"k": [{"anything-but": ["a", 1]}]}),
        "/k/0/anything-but/1",
        "Inside anything but list, either all values are number or string, mixed type is not supported",
    );
    invalid(
        json!({"k": [{"anything-but": true}]}),
        "/k/0/anything-but",
        "inside anything but, boolean is not supported",
    );
}

#[test]
fn rule_44_policy_size_limit() {
    let big = format!("{{\"k\": [\"{}\"]}}", "x".repeat(256 * 1024));
    let e = compile_text(Dialect::Sns, &big, &Value::Null).unwrap_err();
    assert_eq!(e.errors[0].code, ErrorCode::SnsLimitExceeded);
    invalid(Value::String(big), "", "256 KiB");
}

#[test]
fn rule_45_policies_are_decoded_json() {
    let quoted = "say \"hi\" \\ bye";
    check(json!({ "k": [quoted] }), &s("k", quoted), true);
    check(
        json!({ "k": [{"prefix": "say \""}] }),
        &s("k", quoted),
        true,
    );
}

// ---------------------------------------------------------------------------------------------
// 7. Further decisions

#[test]
fn d_1_anything_but_matches_present_values_of_any_type() {
    check(
        json!({"k": [{"anything-but": [100]}]}),
        &s("k", "abc"),
        true,
    );
    check(
        json!({"k": [{"anything-but": ["100"]}]}),
        &n("k", "100"),
        true,
    );
    check_body(
        json!({"k": [{"anything-but": "x"}]}),
        r#"{"k": true}"#,
        true,
    );
    check_body(
        json!({"k": [{"anything-but": "x"}]}),
        r#"{"k": null}"#,
        true,
    );
    check_body(
        json!({"k": [{"anything-but": {"prefix": "a"}}]}),
        r#"{"k": 5}"#,
        true,
    );
}

#[test]
fn d_2_the_empty_policy_matches_bodies_that_are_not_json() {
    check_body(json!({}), "<xml/>", true);
    // Every SNS message has a body; a message given without one cannot be judged by a body
    // filter: an error naming the scope, not a verdict.
    let e = read_message(Dialect::Sns, &body_scope(), &json!({"attributes": {}})).unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageShape);
    assert!(e.message.contains("MessageAttributes"), "{e}");
}

#[test]
fn d_3_exists_false_under_an_array_of_objects_is_judged_per_element() {
    let p = json!({"Records": {"x": [{"exists": false}]}});
    check_body(p.clone(), r#"{"Records": [{"x": 1}, {"y": 2}]}"#, true);
    check_body(p.clone(), r#"{"Records": [{"x": 1}, {"x": 2}]}"#, false);
    check_body(p.clone(), r#"{"Records": []}"#, true);
    // anything-but too.
    let q = json!({"Records": {"x": [{"anything-but": "a"}]}});
    check_body(q.clone(), r#"{"Records": [{"x": "a"}, {"x": "b"}]}"#, true);
    check_body(q, r#"{"Records": [{"x": "a"}, {"x": ["b", "a"]}]}"#, false);
}

#[test]
fn d_4_empty_nested_objects_are_invalid() {
    invalid_body(json!({"a": {}}), "/a", "Empty objects are not allowed");
    invalid(json!({"a": {}}), "/a", "Empty objects are not allowed");
}

#[test]
fn d_5_cidr_mask_must_fit_and_ip_like_strings_are_strings() {
    invalid(
        json!({"k": [{"cidr": "10.0.0.0/33"}]}),
        "/k/0/cidr",
        "Malformed CIDR",
    );
    invalid(
        json!({"k": [{"cidr": "::/129"}]}),
        "/k/0/cidr",
        "Malformed CIDR",
    );
    check(json!({"k": ["10.0.0.1"]}), &s("k", "10.0.0.1"), true);
    check(json!({"k": ["10.0.0.1"]}), &s("k", "10.0.0.01"), false);
}

#[test]
fn d_6_empty_string_arrays_and_bad_numbers_are_absent() {
    let p = json!({"k": [{"exists": false}]});
    check(
        p.clone(),
        &attrs(&[("k", "String.Array", "[]"), ("x", "String", "1")]),
        true,
    );
    check(
        p.clone(),
        &attrs(&[("k", "Number", "abc"), ("x", "String", "1")]),
        true,
    );
    check(json!({"k": [{"anything-but": "z"}]}), &n("k", "abc"), false);
}

#[test]
fn d_7_or_and_dotted_keys_add_no_depth() {
    // detail: 2·2 × (2·1 + 2·3) = 32; top $or: 3 + 2 = 5; 5 × 32 = 160 > 150.
    invalid_body(
        json!({"$or": [{"metricName": ["a", "b", "c"]}, {"namespace": ["a", "b"]}], "detail": {"scope": ["a", "b"], "$or": [{"source": ["a"]}, {"type": ["a", "b", "c"]}]}}),
        "",
        "Filter policy is too complex",
    );
    // A dotted key is one level: 1·150.
    let values: Vec<String> = (0..150).map(|i| i.to_string()).collect();
    compile(Dialect::Sns, &json!({"a.b.c": values}), &body_scope()).unwrap();
}

#[test]
fn d_8_a_key_beside_or_and_inside_a_branch_must_satisfy_both() {
    let p = json!({"k": ["a", "b"], "$or": [{"k": ["b"]}, {"j": ["x"]}]});
    check(p.clone(), &s("k", "b"), true);
    check(p.clone(), &s("k", "a"), false);
    check(
        p,
        &attrs(&[("k", "String", "a"), ("j", "String", "x")]),
        true,
    );
}

// ---------------------------------------------------------------------------------------------
// Options, messages, bounds

#[test]
fn options_are_checked() {
    for options in [
        json!({"scope": "RandomValue"}),
        json!({"scope": 1}),
        json!({"other": "x"}),
        json!("MessageBody"),
    ] {
        let e = compile(Dialect::Sns, &json!({"a": ["1"]}), &options).unwrap_err();
        assert_eq!(e.errors[0].code, ErrorCode::InvalidOptions, "{options}");
    }
    let e = compile(
        Dialect::Sns,
        &json!({"a": ["1"]}),
        &json!({"scope": "RandomValue"}),
    )
    .unwrap_err();
    assert!(e.errors[0].message.contains("Invalid value [RandomValue]"));
    compile(Dialect::Sns, &json!({"a": ["1"]}), &json!({})).unwrap();
    compile(
        Dialect::Sns,
        &json!({"a": ["1"]}),
        &json!({"scope": "MessageAttributes"}),
    )
    .unwrap();
}

#[test]
fn match_lines_are_raw_bodies_in_body_scope() {
    let filter = compile(Dialect::Sns, &json!({"level": ["error"]}), &body_scope()).unwrap();
    let body = Options::from(SnsScope::MessageBody);
    let m = message_from_line(Dialect::Sns, &body, r#"{"level": "error"}"#).unwrap();
    assert!(filter.matches(&m));
    let bad = message_from_line(Dialect::Sns, &body, "not json").unwrap();
    assert!(!filter.matches(&bad));
    let attr = compile(Dialect::Sns, &json!({"k": ["v"]}), &Value::Null).unwrap();
    let line = r#"{"attributes": {"k": {"Type": "String", "Value": "v"}}}"#;
    let attributes = Options::from(Dialect::Sns);
    assert!(attr.matches(&message_from_line(Dialect::Sns, &attributes, line).unwrap()));
    assert!(message_from_line(Dialect::Sns, &attributes, "nope").is_err());
}

#[test]
fn messages_in_the_wrong_shape_are_errors() {
    let filter = compile(Dialect::Sns, &json!({"k": ["v"]}), &Value::Null).unwrap();
    let mut ev = Evaluator::new();
    for bad in [
        json!({"attributes": []}),
        json!({"attributes": {"k": "v"}}),
        json!({"attributes": {"k": {"Type": "Text", "Value": "v"}}}),
        json!({"attributes": {"k": {"Type": "String", "Value": true}}}),
        json!({"attributes": {"k": {"Type": "String", "Value": ["v"]}}}),
    ] {
        assert!(
            ev.matches_json(&filter, &product_message(&bad).unwrap())
                .is_err(),
            "{bad}"
        );
    }
    // A document in none of the wrapper shapes is a body: its attributes are the empty set,
    // which only `{}` matches (docs/dialects/sns-filters.md rule 12), never an error.
    let empty = compile(Dialect::Sns, &json!({}), &Value::Null).unwrap();
    for plain in [json!([]), json!({"k": "v"})] {
        let m = product_message(&plain).unwrap();
        assert!(!ev.matches_json(&filter, &m).unwrap(), "{plain}");
        assert!(ev.matches_json(&empty, &m).unwrap(), "{plain}");
    }
    // A value given as a JSON number is read as its text, as written.
    let one = compile(Dialect::Sns, &json!({"k": ["1.50"]}), &Value::Null).unwrap();
    let number = message_from_line(
        Dialect::Sns,
        &Options::from(Dialect::Sns),
        r#"{"attributes": {"k": {"Type": "String", "Value": 1.50}}}"#,
    );
    assert!(ev.matches(&one, &number.unwrap()));
    // The AWS API spellings are read too.
    let api = json!({"attributes": {"k": {"DataType": "String", "StringValue": "v"}}});
    assert!(
        ev.matches_json(&filter, &product_message(&api).unwrap())
            .unwrap()
    );
}

#[test]
fn row_cap_is_explicit_and_fails_closed() {
    // Two sibling arrays judged per element (exists:false): rows multiply.
    let policy = json!({"A": {"x": [{"exists": false}]}, "B": {"y": [{"exists": false}]}});
    let filter = compile(Dialect::Sns, &policy, &body_scope()).unwrap();
    // 1,101 × 1,101 rows of 3 slots: more than MAX_ROW_SLOTS.
    assert!(1101 * 1101 * filter.program().keys().len() > MAX_ROW_SLOTS);
    let side = |k: &str| -> String {
        let items: Vec<String> = (0..1100).map(|i| format!("{{\"{k}\": {i}}}")).collect();
        items.join(",")
    };
    let body = format!(
        r#"{{"A": [{}, {{}}], "B": [{}, {{}}]}}"#,
        side("x"),
        side("y")
    );
    let message = read_message(Dialect::Sns, &body_scope(), &json!({"body": body})).unwrap();
    let mut bindings = Bindings::new();
    let bound = bindings.bind(filter.program().keys(), &message);
    assert!(
        bound.overflowed(),
        "the product exceeds {MAX_ROW_SLOTS} slots"
    );
    let mut regs = Vec::new();
    assert!(!filter.program().eval(&bound, &mut regs), "fails closed");
    // Through the public API the same message is a clear error, not a silent no-match.
    let err = filtervm_compiler::Evaluator::new()
        .try_matches(&filter, &message)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::MessageTooComplex);
    // The same shape under the cap is judged exactly.
    let small = r#"{"A": [{"x": 1}, {}], "B": [{"y": 1}, {}]}"#;
    check_body(policy, small, true);
}

// ---------------------------------------------------------------------------------------------
// Differential: random policies and messages through both engines

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const NAMES: [&str; 4] = ["a", "b", "c", "a.b"];
const WORDS: [&str; 6] = ["x", "y", "X", "xy", "", "10.0.0.1"];

fn random_scalar(r: &mut Rng) -> Value {
    match r.below(7) {
        0 | 1 => json!(r.pick(&WORDS)),
        2 => json!(r.below(3)),
        3 => json!(r.below(3) as f64 + 0.5),
        4 => json!(r.below(2) == 0),
        5 => Value::Null,
        _ => json!(format!("{}", r.below(3))),
    }
}

fn random_matcher(r: &mut Rng) -> Value {
    let w = *r.pick(&WORDS);
    match r.below(16) {
        0 => json!(w),
        1 => json!(r.below(3)),
        2 => json!(r.below(2) == 0),
        3 => Value::Null,
        4 => json!({"prefix": w}),
        5 => json!({"suffix": w}),
        6 => json!({"equals-ignore-case": w}),
        7 => json!({"wildcard": r.pick(&["x*", "*y", "*", "x*y"])}),
        8 => json!({"cidr": "10.0.0.0/24"}),
        9 => json!({"numeric": [">", r.below(3), "<=", 3]}),
        10 => json!({"numeric": [r.pick(&["<", "<=", "=", ">", ">="]), r.below(3)]}),
        11 => json!({"exists": r.below(2) == 0}),
        12 => json!({"anything-but": [w, "y"]}),
        13 => json!({"anything-but": [r.below(3)]}),
        14 => {
            json!({"anything-but": {*r.pick(&["prefix", "suffix", "equals-ignore-case", "wildcard"]): r.pick(&["x", "y*"])}})
        }
        _ => json!({"exists": false}),
    }
}

fn random_policy(r: &mut Rng, depth: usize, body: bool) -> Value {
    let mut m = Map::new();
    for _ in 0..1 + r.below(2) {
        let name = *r.pick(&NAMES);
        let choice = r.below(if depth > 0 { 6 } else { 4 });
        if choice == 4 && body {
            m.insert(name.to_owned(), random_policy(r, depth - 1, body));
        } else if choice == 5 {
            let branches: Vec<Value> = (0..2).map(|_| random_policy(r, depth - 1, body)).collect();
            m.insert("$or".to_owned(), Value::Array(branches));
        } else {
            let alts: Vec<Value> = (0..1 + r.below(2)).map(|_| random_matcher(r)).collect();
            m.insert(name.to_owned(), Value::Array(alts));
        }
    }
    Value::Object(m)
}

fn random_body(r: &mut Rng, depth: usize) -> Value {
    let mut m = Map::new();
    for _ in 0..r.below(4) {
        let v = match r.below(if depth > 0 { 6 } else { 3 }) {
            0 | 1 => random_scalar(r),
            2 => Value::Array((0..r.below(3)).map(|_| random_scalar(r)).collect()),
            3 => random_body(r, depth - 1),
            4 => Value::Array((0..r.below(3)).map(|_| random_body(r, depth - 1)).collect()),
            _ => Value::Array(vec![
                Value::Array(vec![random_body(r, depth - 1)]),
                random_scalar(r),
            ]),
        };
        m.insert((*r.pick(&NAMES)).to_owned(), v);
    }
    Value::Object(m)
}

fn random_attributes(r: &mut Rng) -> Value {
    let mut m = Map::new();
    for _ in 0..r.below(4) {
        let (t, v) = match r.below(5) {
            0 => ("String", r.pick(&WORDS).to_string()),
            1 => (
                "Number",
                r.pick(&["1", "2.0", "1e0", "x", "0.5"]).to_string(),
            ),
            2 => (
                "String.Array",
                Value::Array((0..r.below(3)).map(|_| random_scalar(r)).collect()).to_string(),
            ),
            3 => ("Binary", "AQID".to_owned()),
            _ => ("String.Array", "nope".to_owned()),
        };
        m.insert((*r.pick(&NAMES)).to_owned(), json!({"Type": t, "Value": v}));
    }
    json!({ "attributes": m })
}

#[test]
fn differential_vm_agrees_with_reference_on_random_cases() {
    // SNS_DIFF_ITERS and SNS_DIFF_SEED run it longer or elsewhere.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let iters = env("SNS_DIFF_ITERS").unwrap_or(4000);
    let mut r = Rng(env("SNS_DIFF_SEED").unwrap_or(0x5eed_1234_abcd_0001).max(1));
    let (mut compared, mut matched) = (0usize, 0usize);
    for i in 0..iters {
        let body = i % 2 == 0;
        let options = if body { body_scope() } else { Value::Null };
        let policy = random_policy(&mut r, 2, body);
        let Ok(filter) = compile(Dialect::Sns, &policy, &options) else {
            continue;
        };
        let message = if body {
            json!({"attributes": {}, "body": random_body(&mut r, 3).to_string()})
        } else {
            random_attributes(&mut r)
        };
        let vm = filtervm_conformance::runner::matches(&filter, &message).unwrap();
        let oracle = reference::evaluate(Dialect::Sns, &options, &policy, &message).unwrap();
        assert_eq!(
            vm, oracle,
            "policy {policy} options {options} message {message}"
        );
        compared += 1;
        matched += usize::from(vm);
    }
    eprintln!("compared {compared}, matched {matched}");
    assert!(compared > 1000, "only {compared} valid random policies");
    assert!(
        matched > compared / 20,
        "only {matched} of {compared} matched"
    );
}

/// The message readers take an attribute's type and value in every spelling they document
/// (`Type`/`type`/`DataType`, `Value`/`value`/`StringValue`), mixed too; the reference reads the
/// same ones (the `message_attributes` fuzz target found the reference reading `type` as no type).
#[test]
fn attribute_fields_in_every_spelling_in_both_engines() {
    let policy = json!({"k": [{"wildcard": "a\\*b"}], "n": [{"numeric": [">", 1]}]});
    for (t, v) in [
        ("Type", "Value"),
        ("type", "value"),
        ("type", "Value"),
        ("Type", "value"),
        ("DataType", "StringValue"),
    ] {
        let message = json!({"attributes": {
            "k": {t: "String", v: "a*b"},
            "n": {t: "Number", v: "2"}
        }});
        check(policy.clone(), &message, true);
    }
}

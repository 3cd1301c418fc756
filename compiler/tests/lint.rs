//! Lint (README.md, "Explain"): each warning with its code, pointer and fix, on every dialect; and
//! no warning on the policies that are fine.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::lint::{
    ALWAYS_HOLDS, CONTRADICTION, DUPLICATE, DUPLICATE_MEMBER, EXISTS_FALSE_NO_ATTRIBUTES,
    NATS_WILDCARD, NEGATIVE_ON_MISSING_KEY, NEVER_HOLDS, PREFIX_SUFFIX_OR, REDUNDANT,
    STAR_WITHIN_SEGMENT, SUBSUMED, UNKNOWN_KEY, Warning, lint,
};
use filtervm_compiler::{Dialect, Options};
use filtervm_vm::json;
use serde_json::{Value, json};
use std::path::PathBuf;

fn warnings(dialect: Dialect, policy: Value, options: Value) -> Vec<Warning> {
    let options = Options::from_json(dialect, &options).unwrap();
    lint(dialect, &json::Value::from(&policy), &options).unwrap()
}

/// `(code, pointer)` of each warning.
fn found(dialect: Dialect, policy: Value, options: Value) -> Vec<(&'static str, String)> {
    warnings(dialect, policy, options)
        .into_iter()
        .map(|w| (w.code, w.pointer))
        .collect()
}

fn w(code: &'static str, pointer: &str) -> (&'static str, String) {
    (code, pointer.to_owned())
}

#[test]
fn the_seed_examples_are_clean() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let policy: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("examples/basaltic/policy.json")).unwrap(),
    )
    .unwrap();
    assert!(found(Dialect::Basaltic, policy, json!({})).is_empty());
    assert!(found(Dialect::Basaltic, json!({}), json!({})).is_empty());
    assert!(found(Dialect::Sns, json!({}), json!({})).is_empty());
    assert!(found(Dialect::EventGrid, json!({}), json!({})).is_empty());
    assert!(
        found(
            Dialect::Expr,
            json!({"op": "AND", "exp": [
                {"key": "a", "op": "exists"},
                {"op": "OR", "exp": [{"key": "b", "value": ["x"]}, {"key": "c", "value": ["y"]}]},
                {"key": "d", "op": "exists"}]}),
            json!({})
        )
        .is_empty()
    );
    assert!(
        found(
            Dialect::Stream,
            json!("region = eu-* and subject = orders.*.created or priority >= 5"),
            json!({})
        )
        .is_empty()
    );
}

/// An empty numeric range (basaltic B-10 accepts it) never holds, and so the policy never matches.
#[test]
fn never_holds_empty_numeric_range() {
    let ws = warnings(
        Dialect::Basaltic,
        json!({"amount": [{"numeric": [">", 10, "<", 5]}], "b": ["x"]}),
        json!({}),
    );
    assert_eq!(ws.len(), 1);
    assert_eq!(ws[0].code, NEVER_HOLDS);
    assert_eq!(ws[0].pointer, "/amount/0");
    assert!(ws[0].message.contains("policy never matches"));
    assert!(!ws[0].fix.is_empty());
    // As one alternative among others it is only that alternative.
    let ws = warnings(
        Dialect::Basaltic,
        json!({"amount": [{"numeric": [">", 10, "<", 5]}, 7]}),
        json!({}),
    );
    assert_eq!(ws.len(), 1);
    assert!(!ws[0].message.contains("policy never matches"));
}

/// An `in` list and an exclusion that cancel (Event Grid entries are ANDed).
#[test]
fn contradiction_in_list_and_exclusion_cancel() {
    assert_eq!(
        found(
            Dialect::EventGrid,
            json!({"advancedFilters": [
                {"operatorType": "StringIn", "key": "data.y", "values": ["a"]},
                {"operatorType": "StringNotIn", "key": "data.y", "values": ["a", "b"]}]}),
            json!({})
        ),
        vec![w(CONTRADICTION, "/advancedFilters/1")]
    );
    // Overlapping but not cancelling: no warning.
    assert!(
        found(
            Dialect::EventGrid,
            json!({"advancedFilters": [
                {"operatorType": "StringIn", "key": "data.y", "values": ["a", "c"]},
                {"operatorType": "StringNotIn", "key": "data.y", "values": ["a", "b"]}]}),
            json!({})
        )
        .is_empty()
    );
    // Expr: a value required and excluded; stream: a header required and missing.
    assert_eq!(
        found(
            Dialect::Expr,
            json!({"op": "AND", "exp": [{"key": "a", "value": ["x"]},
                {"op": "NOT", "exp": [{"key": "a", "value": ["x", "y"]}]}]}),
            json!({})
        ),
        vec![w(CONTRADICTION, "/exp/1")]
    );
    assert_eq!(
        found(Dialect::Stream, json!("h = a and h missing"), json!({})),
        vec![w(CONTRADICTION, "/groups/0/1")]
    );
}

#[test]
fn always_holds() {
    assert_eq!(
        found(
            Dialect::Basaltic,
            json!({"a": [{"exists": true}, {"exists": false}], "b": ["x"]}),
            json!({})
        ),
        vec![w(ALWAYS_HOLDS, "/a")]
    );
    assert_eq!(
        found(Dialect::Stream, json!("h exists or h missing"), json!({})),
        vec![w(ALWAYS_HOLDS, "")]
    );
    // A value or its exclusion: `x` or not `x`.
    assert_eq!(
        found(
            Dialect::Expr,
            json!({"op": "OR", "exp": [{"key": "a", "value": ["x"]},
                {"op": "NOT", "exp": [{"key": "a", "value": ["x"]}]}]}),
            json!({})
        ),
        vec![w(ALWAYS_HOLDS, "")]
    );
}

#[test]
fn duplicate_and_subsumed_alternatives() {
    assert_eq!(
        found(
            Dialect::Basaltic,
            json!({"event": ["a", "b", "a"]}),
            json!({})
        ),
        vec![w(DUPLICATE, "/event/2")]
    );
    assert_eq!(
        found(
            Dialect::Basaltic,
            json!({"event": ["order.paid", {"prefix": "order."}]}),
            json!({})
        ),
        vec![w(SUBSUMED, "/event/0")]
    );
    assert_eq!(
        found(
            Dialect::Sns,
            json!({"event": [{"prefix": "order"}, {"prefix": "ord"}]}),
            json!({})
        ),
        vec![w(SUBSUMED, "/event/0")]
    );
    assert_eq!(
        found(
            Dialect::Sns,
            json!({"n": [{"numeric": [">", 5]}, {"numeric": [">=", 6, "<", 9]}]}),
            json!({})
        ),
        vec![w(SUBSUMED, "/n/1")]
    );
    assert_eq!(
        found(Dialect::Stream, json!("q = 1 or r = 2 or q = 1"), json!({})),
        vec![w(DUPLICATE, "/groups/2")]
    );
    assert_eq!(
        found(
            Dialect::Stream,
            json!("subject = orders.eu.created or subject = orders.*.created"),
            json!({})
        ),
        vec![w(SUBSUMED, "/groups/0")]
    );
}

#[test]
fn redundant_condition_beside_a_stronger_one() {
    assert_eq!(
        found(
            Dialect::EventGrid,
            json!({"advancedFilters": [
                {"operatorType": "NumberGreaterThan", "key": "data.n", "value": 5},
                {"operatorType": "NumberGreaterThan", "key": "data.n", "value": 3}]}),
            json!({})
        ),
        vec![w(REDUNDANT, "/advancedFilters/1")]
    );
    assert_eq!(
        found(Dialect::Stream, json!("h exists and h = x"), json!({})),
        vec![w(REDUNDANT, "/groups/0/0")]
    );
}

/// Seed 000: a prefix and a suffix in one array mean OR (basaltic and sns).
#[test]
fn seed_000_prefix_and_suffix_in_one_array_mean_or() {
    let ws = warnings(
        Dialect::Basaltic,
        json!({"event": [{"prefix": "order."}, {"suffix": ".failed"}]}),
        json!({}),
    );
    assert_eq!(ws.len(), 1);
    assert_eq!(
        (ws[0].code, ws[0].pointer.as_str()),
        (PREFIX_SUFFIX_OR, "/event")
    );
    assert!(ws[0].fix.contains("routing attribute"));
    let ws = warnings(
        Dialect::Sns,
        json!({"detail": {"event": [{"prefix": "order."}, {"suffix": ".failed"}]}}),
        json!({"scope": "MessageBody"}),
    );
    assert_eq!(ws.len(), 1);
    assert_eq!(
        (ws[0].code, ws[0].pointer.as_str()),
        (PREFIX_SUFFIX_OR, "/detail/event")
    );
    assert!(ws[0].fix.contains(r#"{"wildcard": "order.*.failed"}"#));
}

/// sns rule 12: `exists: false` fails on messages without attributes (attribute scope only).
#[test]
fn sns_rule_12_exists_false_in_attribute_scope() {
    assert_eq!(
        found(
            Dialect::Sns,
            json!({"test": [{"exists": false}]}),
            json!({})
        ),
        vec![w(EXISTS_FALSE_NO_ATTRIBUTES, "/test/0")]
    );
    assert_eq!(
        found(
            Dialect::Sns,
            json!({"a": ["x"], "$or": [{"b": ["1"]}, {"test": [{"exists": false}]}]}),
            json!({})
        ),
        vec![w(EXISTS_FALSE_NO_ATTRIBUTES, "/$or/1/test/0")]
    );
    assert!(
        found(
            Dialect::Sns,
            json!({"test": [{"exists": false}]}),
            json!({"scope": "MessageBody"})
        )
        .is_empty()
    );
}

/// EG-22: the three negative string operators are false on a missing key; NotIn is true.
#[test]
fn eg_22_negative_operator_on_a_key_that_may_be_absent() {
    for op in [
        "StringNotContains",
        "StringNotBeginsWith",
        "StringNotEndsWith",
    ] {
        assert_eq!(
            found(
                Dialect::EventGrid,
                json!({"advancedFilters": [{"operatorType": op, "key": "data.x", "values": ["q"]}]}),
                json!({})
            ),
            vec![w(NEGATIVE_ON_MISSING_KEY, "/advancedFilters/0")],
            "{op}"
        );
    }
    // StringNotIn is true on a missing key; the subject is always there in the Event Grid schema.
    assert!(
        found(
            Dialect::EventGrid,
            json!({"advancedFilters": [
                {"operatorType": "StringNotIn", "key": "data.x", "values": ["q"]},
                {"operatorType": "StringNotContains", "key": "subject", "values": ["q"]}]}),
            json!({})
        )
        .is_empty()
    );
    // A CloudEvents extension attribute may be absent.
    assert_eq!(
        found(
            Dialect::EventGrid,
            json!({"advancedFilters": [{"operatorType": "StringNotEndsWith", "key": "myext", "values": ["q"]}]}),
            json!({"schema": "CloudEventSchemaV1_0"})
        ),
        vec![w(NEGATIVE_ON_MISSING_KEY, "/advancedFilters/0")]
    );
}

/// EG-19: a key that names nothing is always undefined.
#[test]
fn eg_19_unknown_key() {
    let ws = warnings(
        Dialect::EventGrid,
        json!({"advancedFilters": [{"operatorType": "StringIn", "key": "foo", "values": ["a"]}]}),
        json!({}),
    );
    assert_eq!(ws.len(), 1, "{ws:?}");
    assert_eq!(
        (ws[0].code, ws[0].pointer.as_str()),
        (UNKNOWN_KEY, "/advancedFilters/0")
    );
    assert!(ws[0].message.contains("never holds"));
    assert!(ws[0].fix.contains("data.foo"));
}

#[test]
fn a_member_named_twice_is_a_warning() {
    // Text: the reader records the repeated name (a `serde_json` value cannot hold one).
    let policy =
        json::parse(br#"{"event": ["a"], "amount": [{"numeric": [">", 1]}], "event": ["b"]}"#)
            .unwrap();
    let ws = lint(Dialect::Basaltic, &policy, &Options::Basaltic).unwrap();
    let found: Vec<(&str, &str)> = ws.iter().map(|w| (w.code, w.pointer.as_str())).collect();
    assert_eq!(found, [(DUPLICATE_MEMBER, "/event")]);
    assert!(
        ws[0].message.contains("only its last value counts"),
        "{}",
        ws[0]
    );
    let nested = json::parse(br#"{"a": {"b": [1], "b": [2]}}"#).unwrap();
    let options = Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap();
    let ws = lint(Dialect::Sns, &nested, &options).unwrap();
    assert!(
        ws.iter()
            .any(|w| w.code == DUPLICATE_MEMBER && w.pointer == "/a/b"),
        "{ws:?}"
    );
}

#[test]
fn stream_nats_greater_than_is_a_literal_character() {
    let clause =
        |values: Value| json!({"groups": [[{"op": "=", "header": "subject", "values": values}]]});
    let found_all = warnings(Dialect::Stream, clause(json!(["orders.>"])), json!({}));
    assert_eq!(found_all.len(), 1, "{found_all:?}");
    let first = &found_all[0];
    assert_eq!(
        (first.code, first.pointer.as_str()),
        (NATS_WILDCARD, "/groups/0/0/values/0")
    );
    assert!(
        first.fix.contains("\"orders.*.**\"") && first.fix.contains("\"orders.**\""),
        "{}",
        first.fix
    );
    // In an `in` list and a `!=` clause, in the second group.
    let policy = json!({"groups": [
        [{"op": "exists", "header": "a"}],
        [{"op": "in", "header": "s", "values": ["x", ">"]}, {"op": "!=", "header": "t", "values": ["a.>.b"]}]
    ]});
    assert_eq!(
        found(Dialect::Stream, policy, json!({})),
        [
            w(NATS_WILDCARD, "/groups/1/0/values/1"),
            w(NATS_WILDCARD, "/groups/1/1/values/0")
        ]
    );
    // `>` inside a segment, or as a comparison, is not NATS's wildcard.
    assert!(found(Dialect::Stream, clause(json!(["a>b.c"])), json!({})).is_empty());
    assert!(found(Dialect::Stream, json!("n > 5"), json!({})).is_empty());
    // The text form (quoted, since `>` is not a word character): pointers of the JSON form.
    assert_eq!(
        found(
            Dialect::Stream,
            json!("region = eu-* or subject = \"orders.>\""),
            json!({})
        ),
        [w(NATS_WILDCARD, "/groups/1/0/values/0")]
    );
}

#[test]
fn stream_star_at_the_end_of_a_dotted_pattern_no_longer_crosses_dots() {
    let text = |t: &str| found(Dialect::Stream, json!(t), json!({}));
    let at = "/groups/0/0/values/0";
    for pattern in ["orders.*", "orders.eu*", "*.created", "*x.created"] {
        assert_eq!(
            text(&format!("subject = {pattern}")),
            [w(STAR_WITHIN_SEGMENT, at)],
            "{pattern}"
        );
    }
    let ws = warnings(Dialect::Stream, json!("subject = orders.*"), json!({}));
    assert!(ws[0].fix.contains("\"orders.*.**\""), "{}", ws[0].fix);
    assert!(
        ws[0].message.contains("exactly one segment"),
        "{}",
        ws[0].message
    );
    // Fine: no dot (`eu-*`), a `*` in the middle, `**` already, no `*`.
    for pattern in [
        "eu-*",
        "orders.*.created",
        "orders.**",
        "**.created",
        "orders.eu",
        "*",
    ] {
        assert!(
            text(&format!("subject = {pattern}")).is_empty(),
            "{pattern}"
        );
    }
}

#[test]
fn an_invalid_policy_is_a_compile_error_not_a_warning() {
    let policy = json::Value::from(&json!({"a": []}));
    assert!(lint(Dialect::Basaltic, &policy, &Options::Basaltic).is_err());
}

#[test]
fn warnings_display_and_json() {
    let ws = warnings(Dialect::Basaltic, json!({"event": ["a", "a"]}), json!({}));
    assert_eq!(
        ws[0].to_string(),
        "DUPLICATE /event/1: this alternative repeats /event/0 (fix: remove the repetition)"
    );
    assert_eq!(
        ws[0].to_json().to_string(),
        r#"{"code":"DUPLICATE","pointer":"/event/1","message":"this alternative repeats /event/0","fix":"remove the repetition"}"#
    );
}

/// Lint runs on every valid conformance vector's policy without failing; the public vectors are
/// mostly fine policies, so warnings stay rare.
#[test]
fn lint_runs_on_every_vector_policy() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/vectors");
    let mut policies = 0usize;
    let mut warned = 0usize;
    for name in [
        "basaltic.jsonl",
        "sns.jsonl",
        "eventgrid.jsonl",
        "stream.jsonl",
        "expr.jsonl",
    ] {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            // Read as the product reads policies: numbers and member order as written.
            let case = json::parse(line.as_bytes()).unwrap();
            let text = |name: &str| case.get(name).and_then(json::Value::as_str);
            if text("expect") == Some("invalid") {
                continue;
            }
            let dialect: Dialect = text("dialect").unwrap().parse().unwrap();
            let options =
                Options::from_json(dialect, case.get("options").unwrap_or(&json::Value::Null))
                    .unwrap();
            if let Ok(ws) = lint(dialect, case.get("policy").unwrap(), &options) {
                policies += 1;
                if !ws.is_empty() {
                    warned += 1;
                    if std::env::var_os("FILTERVM_LINT_SHOW").is_some() {
                        eprintln!("{:?}: {ws:?}", text("id"));
                    }
                }
            }
        }
    }
    assert!(policies > 300, "{policies}");
    assert!(
        warned * 5 < policies,
        "{warned} of {policies} policies warned"
    );
}

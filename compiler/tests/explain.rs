//! Explain (README.md, "Explain"): the verdict agrees with `matches` on every conformance vector,
//! the condition tree carries each part's truth, values and pointer, and each classic mistake gets
//! its hint.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::explain::{
    self, Condition, ExplainError, Explanation, HINT_BODY_NOT_OBJECT, HINT_EXCLUSIVE_BOUND,
    HINT_KEY_CASE, HINT_MISSING_KEY, HINT_NO_ATTRIBUTES, HINT_NOT_A_NUMBER, HINT_OLD_STAR,
    HINT_SCOPE, HINT_TYPE, HINT_VALUE_CASE, Held, Kind, explain_json,
};
use filtervm_compiler::{Dialect, Evaluator, Filter, Options, compile_value, message_from_json};
use filtervm_vm::json;
use filtervm_vm::value::Leaf;
use serde_json::{Value, json};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Explains `message` on `policy` (a `serde_json` value, or a [`json::Value`] read from text
/// when member order matters).
fn explained(
    dialect: Dialect,
    policy: impl Into<json::Value>,
    options: Value,
    message: Value,
) -> Explanation {
    let policy = policy.into();
    let options = Options::from_json(dialect, &options).unwrap();
    let filter = compile_value(dialect, &policy, &options).unwrap();
    explain_json(&filter, Some(&policy), &message).unwrap()
}

/// The condition at `pointer` whose kind is `kind` (the first, parents first).
fn find<'a>(c: &'a Condition, pointer: &str, kind: Kind) -> Option<&'a Condition> {
    if c.pointer == pointer && c.kind == kind {
        return Some(c);
    }
    c.children.iter().find_map(|k| find(k, pointer, kind))
}

fn hint_codes(e: &Explanation) -> Vec<&'static str> {
    e.hints.iter().map(|h| h.code).collect()
}

fn vector_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["conformance/vectors", "conformance/vectors/local"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Issue 9: explain's verdict equals `matches` on every conformance vector of every dialect that
/// compiles, and the explained root condition agrees with the verdict.
#[test]
fn verdict_equals_matches_on_every_conformance_vector() {
    let mut checked = 0usize;
    let mut per_dialect = std::collections::BTreeMap::<String, usize>::new();
    for file in vector_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            // Policies as the product reads them: numbers and member order as written.
            let case = json::parse(line.as_bytes()).unwrap();
            let text = |name: &str| case.get(name).and_then(json::Value::as_str);
            if text("expect") == Some("invalid") {
                continue;
            }
            let id = text("id").unwrap_or("?").to_owned();
            let where_ = format!("{}:{} ({id})", file.display(), n + 1);
            let dialect: Dialect = text("dialect").unwrap().parse().unwrap();
            let options =
                Options::from_json(dialect, case.get("options").unwrap_or(&json::Value::Null))
                    .unwrap();
            let policy = case.get("policy").unwrap();
            let raw_message = case.get("message").unwrap().to_serde_json();
            let Ok(filter) = compile_value(dialect, policy, &options) else {
                continue;
            };
            let Ok(message) = message_from_json(dialect, &options, &raw_message) else {
                continue;
            };
            let expected = Evaluator::new().matches(&filter, &message);
            let e = explain::explain(
                &filter,
                &message,
                explain::Sources {
                    policy: Some(policy),
                    message: Some(&raw_message),
                },
            )
            .unwrap_or_else(|err| panic!("{where_}: {err}"));
            assert_eq!(e.matched, expected, "{where_}: verdict");
            assert_eq!(
                e.root.held,
                if expected { Held::True } else { Held::False },
                "{where_}: the root condition disagrees with the verdict"
            );
            assert!(!e.decided_by.is_empty(), "{where_}: no deciding condition");
            if !expected {
                for d in &e.decided_by {
                    assert_ne!(
                        d.held,
                        Held::True,
                        "{where_}: a decider of a non-match held"
                    );
                }
            }
            checked += 1;
            *per_dialect.entry(dialect.name().to_owned()).or_default() += 1;
        }
    }
    eprintln!("explained vectors per dialect: {per_dialect:?}");
    for d in ["basaltic", "eventgrid", "stream", "expr"] {
        assert!(
            per_dialect.get(d).copied().unwrap_or(0) > 20,
            "too few {d} vectors checked: {per_dialect:?}"
        );
    }
    assert!(checked > 400, "only {checked} vectors checked");
}

fn example_policy() -> json::Value {
    json::parse(&std::fs::read(root().join("examples/basaltic/policy.json")).unwrap()).unwrap()
}

fn example_message() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/basaltic/amount-1000.json")).unwrap(),
    )
    .unwrap()
}

/// Seed 000's table: `amount` becomes 1000 → no match, the upper bound is exclusive.
#[test]
fn seed_000_amount_1000_is_decided_by_the_exclusive_bound() {
    let e = explained(
        Dialect::Basaltic,
        example_policy(),
        json!({}),
        example_message(),
    );
    assert!(!e.matched);
    assert_eq!(e.decided_by.len(), 1);
    let d = &e.decided_by[0];
    assert_eq!(d.pointer, "/amount/0");
    assert_eq!(d.held, Held::False);
    assert_eq!(
        d.policy.as_deref(),
        Some(r#"{"numeric":[">=",100,"<",1000]}"#)
    );
    assert_eq!(
        d.seen.as_ref().unwrap().values,
        vec![Leaf::Str("1000".into())]
    );
    assert_eq!(hint_codes(&e), vec![HINT_EXCLUSIVE_BOUND]);
    // Every alternative has its own truth, although the program tests `/event` in one str_in.
    assert_eq!(find(&e.root, "/event", Kind::Or).unwrap().held, Held::True);
    assert_eq!(
        find(&e.root, "/event/0", Kind::Test).unwrap().held,
        Held::False
    );
    assert_eq!(
        find(&e.root, "/event/1", Kind::Test).unwrap().held,
        Held::True
    );
    assert_eq!(
        find(&e.root, "/test/0", Kind::Test).unwrap().held,
        Held::True
    );
    // The program's own instructions, each run alone.
    let at_event = e
        .instructions
        .iter()
        .find(|s| s.origin.as_deref() == Some("/event"))
        .unwrap();
    assert!(at_event.text.starts_with("str_in"));
    assert_eq!(at_event.held, Held::True);
    let at_amount = e
        .instructions
        .iter()
        .find(|s| s.origin.as_deref() == Some("/amount/0"))
        .unwrap();
    assert_eq!(at_amount.held, Held::False);
}

#[test]
fn a_match_lists_what_held() {
    let mut message = example_message();
    message["attributes"]["amount"]["value"] = json!("149.50");
    let e = explained(Dialect::Basaltic, example_policy(), json!({}), message);
    assert!(e.matched);
    let pointers: Vec<&str> = e.decided_by.iter().map(|d| d.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        vec!["/event/1", "/environment/0", "/amount/0", "/test/0"]
    );
    assert!(e.hints.is_empty());
}

#[test]
fn json_shape_is_documented() {
    let e = explained(
        Dialect::Basaltic,
        example_policy(),
        json!({}),
        example_message(),
    );
    let j = e.to_json().to_serde_json();
    assert_eq!(j["dialect"], "basaltic");
    assert_eq!(j["matched"], false);
    assert_eq!(j["verdict"], "no-match");
    assert_eq!(j["rows"], 1);
    assert_eq!(j["decided_by"][0]["pointer"], "/amount/0");
    assert_eq!(j["decided_by"][0]["kind"], "test");
    assert_eq!(j["decided_by"][0]["held"], false);
    assert_eq!(j["decided_by"][0]["seen"]["values"], json!(["1000"]));
    assert_eq!(j["decided_by"][0]["seen"]["shapes"], json!(["scalar"]));
    assert_eq!(j["hints"][0]["code"], HINT_EXCLUSIVE_BOUND);
    assert_eq!(j["conditions"]["kind"], "and");
    assert_eq!(j["conditions"]["children"][0]["pointer"], "/event");
    // The program's merged `str_in` came from `/event`; the numeric test from `/amount/0`.
    let at = |origin: &str| {
        e.instructions
            .iter()
            .filter(|s| s.origin.as_deref() == Some(origin))
            .map(|s| s.at)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        j["conditions"]["children"][0]["instructions"],
        json!(at("/event"))
    );
    assert_eq!(j["decided_by"][0]["instructions"], json!(at("/amount/0")));
    assert_eq!(at("/amount/0").len(), 1);
    assert!(j["instructions"][0]["inst"].is_string());
}

/// A filter loaded from bytes explains like the one compiled (its IR travels with it); one from
/// the first wire format, which shipped no IR, cannot be explained.
#[test]
fn a_filter_from_bytes_explains_like_the_compiled_one() {
    let filter = compile_value(Dialect::Basaltic, &example_policy(), &Options::Basaltic).unwrap();
    let loaded = Filter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(
        explain_json(&loaded, None, &example_message())
            .unwrap()
            .to_string(),
        explain_json(&filter, None, &example_message())
            .unwrap()
            .to_string()
    );
    let first_format = filter
        .program()
        .to_bytes_with_metadata(br#"{"dialect":"basaltic","options":{}}"#);
    let without_ir = Filter::from_bytes(&first_format).unwrap();
    assert_eq!(
        explain_json(&without_ir, None, &example_message()).unwrap_err(),
        ExplainError::NoIr
    );
}

// ---- hints ----

/// sns scope mismatch: attribute scope, the attribute is absent, the body has the field.
#[test]
fn sns_scope_mismatch_attribute_absent_but_body_field() {
    let e = explained(
        Dialect::Sns,
        json!({"store": ["example_corp"]}),
        json!({}),
        json!({"attributes": {"other": {"Type": "String", "Value": "1"}},
               "body": "{\"store\": \"example_corp\"}"}),
    );
    assert!(!e.matched);
    assert_eq!(hint_codes(&e), vec![HINT_SCOPE]);
    assert_eq!(e.hints[0].pointer, "/store/0");
    assert!(e.hints[0].message.contains("MessageBody"));
    // A nested body field counts too (rule 16).
    let e = explained(
        Dialect::Sns,
        json!({"detail.status": ["PAID"]}),
        json!({}),
        json!({"attributes": {}, "body": "{\"detail\": {\"status\": \"PAID\"}}"}),
    );
    assert!(hint_codes(&e).contains(&HINT_SCOPE));
    // A message with a body and no attributes is judged by a filter on attributes (sns rule
    // 12: no attributes, no match), as matching judges it; explain says why, with the hint.
    let filter = compile_value(
        Dialect::Sns,
        &json::parse(br#"{"detail.status": ["PAID"]}"#).unwrap(),
        &Options::from(Dialect::Sns),
    )
    .unwrap();
    let body_only = json!({"body": "{\"detail\": {\"status\": \"PAID\"}}"});
    let e = explain_json(&filter, None, &body_only).unwrap();
    assert!(!e.matched);
    assert_eq!(hint_codes(&e), vec![HINT_SCOPE]);
    assert!(e.hints[0].message.contains("MessageBody"), "{:?}", e.hints);
    assert_eq!(
        Evaluator::new().matches_json(&filter, &body_only),
        Ok(false)
    );
}

/// And the other way round: body scope, the field is an attribute.
#[test]
fn sns_scope_mismatch_body_scope_but_attribute() {
    let e = explained(
        Dialect::Sns,
        json!({"store": ["example_corp"]}),
        json!({"scope": "MessageBody"}),
        json!({"attributes": {"store": {"Type": "String", "Value": "example_corp"}},
               "body": "{\"other\": 1}"}),
    );
    assert!(!e.matched);
    assert_eq!(hint_codes(&e), vec![HINT_SCOPE]);
    assert!(e.hints[0].message.contains("MessageAttributes"));
}

/// sns rule 14: a body that is not a JSON object.
#[test]
fn sns_rule_14_body_not_an_object() {
    let e = explained(
        Dialect::Sns,
        json!({"store": ["x"]}),
        json!({"scope": "MessageBody"}),
        json!({"body": "[1, 2]"}),
    );
    assert!(hint_codes(&e).contains(&HINT_BODY_NOT_OBJECT));
}

/// The value differs only in case (sns, basaltic, stream wildcard patterns, expr).
#[test]
fn value_differs_only_in_case() {
    let e = explained(
        Dialect::Sns,
        json!({"event": ["order.paid"]}),
        json!({}),
        json!({"attributes": {"event": {"Type": "String", "Value": "Order.Paid"}}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_VALUE_CASE]);
    assert!(e.hints[0].message.contains("equals-ignore-case"));
    let e = explained(
        Dialect::Basaltic,
        json!({"event": [{"prefix": "order."}]}),
        json!({}),
        json!({"attributes": {"event": {"type": "String", "value": "ORDER.paid"}}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_VALUE_CASE]);
    let e = explained(
        Dialect::Stream,
        json!("region = eu-*"),
        json!({}),
        json!({"headers": {"region": "EU-west"}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_VALUE_CASE]);
    let e = explained(
        Dialect::Expr,
        json!({"key": "k", "op": "in", "value": ["Yes"]}),
        json!({}),
        json!({"headers": {"k": "yes"}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_VALUE_CASE]);
    // No hint when the value really differs.
    let e = explained(
        Dialect::Sns,
        json!({"event": ["order.paid"]}),
        json!({}),
        json!({"attributes": {"event": {"Type": "String", "Value": "order.refunded"}}}),
    );
    assert!(e.hints.is_empty());
}

/// The attribute name differs only in case.
#[test]
fn key_differs_only_in_case() {
    let e = explained(
        Dialect::Stream,
        json!("region = eu-west"),
        json!({}),
        json!({"headers": {"Region": "eu-west"}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_KEY_CASE]);
}

/// sns rule 12: `exists: false` on a message with no attributes.
#[test]
fn sns_rule_12_exists_false_on_a_message_without_attributes() {
    let policy = json!({"test": [{"exists": false}]});
    let e = explained(Dialect::Sns, policy.clone(), json!({}), json!({}));
    assert!(!e.matched);
    assert_eq!(hint_codes(&e), vec![HINT_NO_ATTRIBUTES]);
    assert_eq!(e.hints[0].pointer, "/test/0");
    // With some attribute it matches, and there is no hint.
    let e = explained(
        Dialect::Sns,
        policy,
        json!({}),
        json!({"attributes": {"a": {"Type": "String", "Value": "1"}}}),
    );
    assert!(e.matched);
    assert!(e.hints.is_empty());
}

/// sns rule 10: a numeric condition on a String attribute, and a quoted number in the policy.
#[test]
fn sns_rule_10_number_versus_string() {
    let e = explained(
        Dialect::Sns,
        json!({"price": [{"numeric": [">", 100]}]}),
        json!({}),
        json!({"attributes": {"price": {"Type": "String", "Value": "150"}}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_TYPE]);
    assert!(e.hints[0].message.contains("\"150\" is a string"));
    let e = explained(
        Dialect::Sns,
        json!({"price": ["100"]}),
        json!({}),
        json!({"attributes": {"price": {"Type": "Number", "Value": "100"}}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_TYPE]);
    assert!(e.hints[0].message.contains("unquoted"));
}

/// EG-34: a numeric string is a string; EG-22: a missing key.
#[test]
fn eventgrid_type_mismatch_and_missing_key() {
    let e = explained(
        Dialect::EventGrid,
        json!({"advancedFilters": [{"operatorType": "NumberIn", "key": "data.n", "values": [5]}]}),
        json!({}),
        json!({"id": "1", "subject": "s", "eventType": "t", "data": {"n": "5"}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_TYPE]);
    let e = explained(
        Dialect::EventGrid,
        json!({"advancedFilters": [{"operatorType": "StringNotContains", "key": "data.x", "values": ["q"]}]}),
        json!({}),
        json!({"id": "1", "subject": "s", "eventType": "t", "data": {}}),
    );
    assert!(!e.matched);
    assert_eq!(hint_codes(&e), vec![HINT_MISSING_KEY]);
}

/// Basaltic B-10: text that does not parse as a number.
#[test]
fn b_10_value_that_is_not_a_number() {
    let e = explained(
        Dialect::Basaltic,
        json!({"amount": [{"numeric": [">", 10]}]}),
        json!({}),
        json!({"attributes": {"amount": {"type": "Number", "value": "1,000"}}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_NOT_A_NUMBER]);
}

/// Seed 004: `*` used to cross dots; `orders.*` no longer matches `orders.eu.created`.
#[test]
fn seed_004_pattern_that_matched_under_the_old_star() {
    let e = explained(
        Dialect::Stream,
        json!({"groups": [[{"op": "=", "header": "subject", "values": ["orders.*"]}]]}),
        json!({}),
        json!({"headers": {"subject": "orders.eu.created"}}),
    );
    assert!(!e.matched);
    assert_eq!(hint_codes(&e), vec![HINT_OLD_STAR]);
    assert!(e.hints[0].message.contains("\"orders.**\""));
    // The text form shows the clause as text.
    let e = explained(
        Dialect::Stream,
        json!("subject = orders.*"),
        json!({}),
        json!({"headers": {"subject": "orders.eu.created"}}),
    );
    assert_eq!(hint_codes(&e), vec![HINT_OLD_STAR]);
    assert_eq!(
        e.decided_by[0].policy.as_deref(),
        Some("subject = orders.*")
    );
    // A value the old matcher would not have matched either gets no hint.
    let e = explained(
        Dialect::Stream,
        json!("subject = orders.*"),
        json!({}),
        json!({"headers": {"subject": "billing.orders"}}),
    );
    assert!(e.hints.is_empty());
}

/// sns rule 18: conditions satisfied by different elements of an array of objects.
#[test]
fn rule_18_rows_explain_which_conditions_held_apart() {
    let policy = json!({"Records": {"a": [1], "b": ["y"]}});
    let message =
        json!({"body": "{\"Records\": [{\"a\": 1, \"b\": \"x\"}, {\"a\": 2, \"b\": \"y\"}]}"});
    let e = explained(
        Dialect::Sns,
        policy,
        json!({"scope": "MessageBody"}),
        message.clone(),
    );
    assert!(!e.matched);
    assert_eq!(e.rows, 2);
    assert_eq!(e.decided_by.len(), 1);
    assert_eq!(e.decided_by[0].pointer, "/Records");
    assert_eq!(e.decided_by[0].kind, Kind::And);
    assert_eq!(
        find(&e.root, "/Records/a/0", Kind::Test).unwrap().held,
        Held::SomeRows
    );
    assert_eq!(
        find(&e.root, "/Records/b/0", Kind::Test).unwrap().held,
        Held::SomeRows
    );
    // Matching: in the matching row every condition held.
    let e = explained(
        Dialect::Sns,
        json!({"Records": {"a": [2], "b": ["y"]}}),
        json!({"scope": "MessageBody"}),
        message,
    );
    assert!(e.matched);
    assert_eq!(e.root.held, Held::True);
    assert_eq!(
        find(&e.root, "/Records/a/0", Kind::Test).unwrap().held,
        Held::True
    );
}

#[test]
fn text_rendering_shows_verdict_deciders_and_tree() {
    let e = explained(
        Dialect::Basaltic,
        example_policy(),
        json!({}),
        example_message(),
    );
    let text = e.to_string();
    assert!(text.starts_with("no match (basaltic policy)"));
    assert!(text.contains("did not match because:\n  ✗ test /amount/0"));
    assert!(text.contains("saw \"1000\""));
    assert!(text.contains("[EXCLUSIVE_BOUND] /amount/0"));
    assert!(text.contains("✓ test /event/1  \"order.paid\""));
}

/// The README's `## Explain` session is the real output.
#[test]
fn readme_explain_session_is_current() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("    --message examples/basaltic/amount-1000.json\n")
        .expect("README has the explain session");
    let rest = &readme[start..];
    let body = &rest[rest.find('\n').unwrap() + 1..];
    let shown = &body[..body.find("```").unwrap()];
    let e = explained(
        Dialect::Basaltic,
        example_policy(),
        json!({}),
        example_message(),
    );
    assert_eq!(shown, e.to_string());
}

/// A wide policy (more keys than one binding batch) explains each condition right.
#[test]
fn wide_policy_binds_in_batches() {
    let n = 150;
    let exp: Vec<Value> = (0..n)
        .map(|i| json!({"key": format!("k{i}"), "op": "in", "value": ["v"]}))
        .collect();
    let policy = json!({"op": "AND", "exp": exp});
    let mut headers = serde_json::Map::new();
    for i in 0..n {
        let v = if i == 37 || i == 120 { "w" } else { "v" };
        headers.insert(format!("k{i}"), json!(v));
    }
    let e = explained(
        Dialect::Expr,
        policy,
        json!({}),
        json!({"headers": headers}),
    );
    assert!(!e.matched);
    let pointers: Vec<&str> = e.decided_by.iter().map(|d| d.pointer.as_str()).collect();
    assert_eq!(pointers, vec!["/exp/37", "/exp/120"]);
    assert_eq!(
        find(&e.root, "/exp/119", Kind::Test).unwrap().held,
        Held::True
    );
    let failed: Vec<usize> = e
        .instructions
        .iter()
        .filter(|s| s.held == Held::False)
        .map(|s| s.at)
        .collect();
    assert_eq!(failed.len(), 2, "{:?}", e.instructions.len());
}

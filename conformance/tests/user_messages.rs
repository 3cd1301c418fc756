//! What users read — policy errors, lint warnings and their fixes, explain hints — names no
//! internal labels ("(E9)", "(sns rule 12)", "(seed 000)", "(stream S13)", "EG-22", "B-11",
//! "D-3"): a reader cannot look them up, so each message says the rule in plain words instead.
//! Checked on every conformance vector (invalid ones for errors; valid ones through lint and
//! explain) and on one case for each hint and warning that names a dialect rule.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers: a failed unwrap or a found label is a test failure"
)]

use filtervm_compiler::explain::explain_json;
use filtervm_compiler::lint::lint;
use filtervm_compiler::{Dialect, Options, compile_text};
use filtervm_vm::json;
use std::path::PathBuf;

/// The first internal label in `text`, if any. Quoted user input (between backticks or double
/// quotes) is skipped: a policy may well name a key `S1`.
fn internal_label(text: &str) -> Option<String> {
    let mut plain = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '`' || c == '"' => quote = Some(c),
            None => plain.push(c),
        }
    }
    let words: Vec<&str> = plain
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    for (i, word) in words.iter().enumerate() {
        let labelled = ["E", "S"]
            .iter()
            .any(|p| word.strip_prefix(p).is_some_and(digits))
            || ["EG-", "B-", "D-"]
                .iter()
                .any(|p| word.strip_prefix(p).is_some_and(digits))
            || (["rule", "rules", "seed"].contains(word)
                && words.get(i + 1).is_some_and(|next| digits(next)));
        if labelled {
            return Some(word.to_string());
        }
    }
    None
}

#[test]
fn the_detector_finds_the_labels_it_is_for() {
    for text in [
        "a node needs `exp` (E9)",
        "the clause has no `op` (stream S8)",
        "passes (seed 000)",
        "although x is absent there (sns rule 12)",
        "is false then (EG-22)",
        "not supported by this service (B-11)",
        "judged per element, D-3",
    ] {
        assert!(internal_label(text).is_some(), "{text}");
    }
    for text in [
        "unknown member `S1`: a filter holds only `groups`",
        "the number \"1E5\" is fine",
        "a filter holds at most 16 groups",
    ] {
        assert_eq!(internal_label(text), None, "{text}");
    }
}

fn assert_plain(what: &str, text: &str) {
    if let Some(label) = internal_label(text) {
        panic!("{what}: the internal label `{label}` in: {text}");
    }
}

fn vector_lines() -> Vec<(String, json::Value)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut lines = Vec::new();
    for dir in ["vectors", "vectors/local"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                if !line.trim().is_empty() {
                    let at = format!("{}:{}", file.display(), n + 1);
                    lines.push((at, json::parse(line.as_bytes()).unwrap()));
                }
            }
        }
    }
    lines
}

/// Compiles, lints and explains one case; returns how many messages it checked.
fn check_case(
    what: &str,
    dialect: Dialect,
    options: &str,
    policy: &str,
    message: Option<&str>,
) -> usize {
    let mut checked = 0;
    let options = match Options::from_json(dialect, options) {
        Ok(options) => options,
        Err(e) => {
            for error in &e.errors {
                assert_plain(what, &error.message);
                checked += 1;
            }
            return checked;
        }
    };
    let filter = match compile_text(dialect, policy, &options) {
        Ok(filter) => filter,
        Err(e) => {
            for error in &e.errors {
                assert_plain(what, &error.message);
                checked += 1;
            }
            return checked;
        }
    };
    let policy_value =
        json::parse(policy.as_bytes()).unwrap_or_else(|_| json::Value::String(policy.to_owned()));
    for warning in lint(dialect, &policy_value, &options).unwrap() {
        assert_plain(what, &warning.message);
        assert_plain(what, &warning.fix);
        checked += 1;
    }
    if let Some(message) = message {
        let message: serde_json::Value = serde_json::from_str(message).unwrap();
        if let Ok(explanation) = explain_json(&filter, Some(&policy_value), &message) {
            for hint in &explanation.hints {
                assert_plain(what, &hint.message);
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn no_message_on_any_vector_names_an_internal_label() {
    let mut checked = 0;
    for (at, case) in vector_lines() {
        let dialect: Dialect = case
            .get("dialect")
            .and_then(json::Value::as_str)
            .unwrap()
            .parse()
            .unwrap();
        let options = case
            .get("options")
            .map_or("null".to_owned(), ToString::to_string);
        let policy = case.get("policy").unwrap().to_string();
        // Messages serde_json cannot hold (numbers beyond binary64) are explained elsewhere.
        let message = case
            .get("message")
            .map(ToString::to_string)
            .filter(|m| serde_json::from_str::<serde_json::Value>(m).is_ok());
        checked += check_case(&at, dialect, &options, &policy, message.as_deref());
    }
    assert!(checked > 300, "only {checked} messages checked");
}

/// One case per error, warning and hint whose text used to cite a dialect rule by its label.
#[test]
fn no_rule_citing_message_names_an_internal_label() {
    let sns_attrs = |name: &str, t: &str, v: &str| {
        format!(r#"{{"attributes": {{"{name}": {{"Type": "{t}", "Value": "{v}"}}}}}}"#)
    };
    let cases: Vec<(Dialect, &str, &str, Option<String>)> = vec![
        // Policy errors.
        (
            Dialect::Basaltic,
            "{}",
            r#"{"$or": [{"a": ["x"]}, {"b": ["y"]}]}"#,
            None,
        ),
        (
            Dialect::Basaltic,
            "{}",
            r#"{"a": [{"wildcard": "x*"}]}"#,
            None,
        ),
        (
            Dialect::Basaltic,
            "{}",
            r#"{"a": [{"anything-but": {"prefix": "x"}}]}"#,
            None,
        ),
        (Dialect::Expr, "{}", r#"{"op": "AND", "exp": []}"#, None),
        (
            Dialect::Expr,
            "{}",
            r#"{"op": "and", "exp": [{"key": "a", "op": "exists"}]}"#,
            None,
        ),
        (
            Dialect::Expr,
            "{}",
            r#"{"op": "NAND", "exp": [{"key": "a", "op": "exists"}]}"#,
            None,
        ),
        (
            Dialect::Expr,
            "{}",
            r#"{"key": "a", "op": "endWith", "value": "x"}"#,
            None,
        ),
        (
            Dialect::Expr,
            "{}",
            r#"{"key": "", "op": "in", "value": []}"#,
            None,
        ),
        (Dialect::Expr, "{}", r#"{"key": "a", "exp": []}"#, None),
        (
            Dialect::Expr,
            r#"{"max_depth": 0}"#,
            r#"{"op": "NOT", "exp": [{"key": "a", "op": "exists"}]}"#,
            None,
        ),
        (Dialect::Stream, "{}", r#"{"groups": []}"#, None),
        (
            Dialect::Stream,
            "{}",
            r#"{"groups": [[{"op": "IN", "header": "h", "values": ["x"]}]]}"#,
            None,
        ),
        (
            Dialect::Stream,
            "{}",
            r#"{"groups": [[{"op": "<", "header": "h", "values": ["5"]}]]}"#,
            None,
        ),
        (
            Dialect::Stream,
            "{}",
            r#"{"groups": [[{"op": "in", "header": "h", "values": []}]]}"#,
            None,
        ),
        (Dialect::Stream, "{}", r#""h < \"5\"""#, None),
        (Dialect::Stream, "{}", r#""h == x""#, None),
        // Lint warnings.
        (
            Dialect::Basaltic,
            "{}",
            r#"{"event": [{"prefix": "order."}, {"suffix": ".failed"}]}"#,
            None,
        ),
        (Dialect::Sns, "{}", r#"{"test": [{"exists": false}]}"#, None),
        (
            Dialect::EventGrid,
            "{}",
            r#"{"advancedFilters": [{"operatorType": "StringIn", "key": "foo", "values": ["a"]}]}"#,
            None,
        ),
        (
            Dialect::EventGrid,
            "{}",
            r#"{"advancedFilters": [{"operatorType": "StringNotContains", "key": "data.x", "values": ["q"]}]}"#,
            None,
        ),
        // Explain hints.
        (
            Dialect::Sns,
            r#"{"scope": "MessageBody"}"#,
            r#"{"store": ["x"]}"#,
            Some(r#"{"body": "[1, 2]"}"#.to_owned()),
        ),
        (
            Dialect::Sns,
            r#"{"scope": "MessageBody"}"#,
            r#"{"store": ["x"]}"#,
            Some(r#"{"body": "{oops"}"#.to_owned()),
        ),
        (
            Dialect::Sns,
            "{}",
            r#"{"event": ["order.paid"]}"#,
            Some(sns_attrs("event", "String", "Order.Paid")),
        ),
        (
            Dialect::Sns,
            "{}",
            r#"{"test": [{"exists": false}]}"#,
            Some("{}".to_owned()),
        ),
        (
            Dialect::Sns,
            "{}",
            r#"{"price": [{"numeric": [">", 100]}]}"#,
            Some(sns_attrs("price", "String", "150")),
        ),
        (
            Dialect::Basaltic,
            "{}",
            r#"{"event": [{"prefix": "order."}]}"#,
            Some(
                r#"{"attributes": {"event": {"type": "String", "value": "ORDER.paid"}}}"#
                    .to_owned(),
            ),
        ),
        (
            Dialect::Basaltic,
            "{}",
            r#"{"amount": [{"numeric": [">", 10]}]}"#,
            Some(r#"{"attributes": {"amount": {"type": "Number", "value": "1,000"}}}"#.to_owned()),
        ),
        (
            Dialect::EventGrid,
            "{}",
            r#"{"isSubjectCaseSensitive": true, "subjectBeginsWith": "/A"}"#,
            Some(r#"{"id": "1", "subject": "/a", "eventType": "t"}"#.to_owned()),
        ),
        (
            Dialect::EventGrid,
            "{}",
            r#"{"advancedFilters": [{"operatorType": "NumberIn", "key": "data.n", "values": [5]}]}"#,
            Some(r#"{"id": "1", "subject": "s", "eventType": "t", "data": {"n": "5"}}"#.to_owned()),
        ),
        (
            Dialect::EventGrid,
            "{}",
            r#"{"advancedFilters": [{"operatorType": "StringNotContains", "key": "data.x", "values": ["q"]}]}"#,
            Some(r#"{"id": "1", "subject": "s", "eventType": "t", "data": {}}"#.to_owned()),
        ),
        (
            Dialect::Stream,
            "{}",
            r#""region = eu-*""#,
            Some(r#"{"headers": {"region": "EU-west"}}"#.to_owned()),
        ),
        (
            Dialect::Stream,
            "{}",
            r#""subject = orders.*""#,
            Some(r#"{"headers": {"subject": "orders.eu.created"}}"#.to_owned()),
        ),
        (
            Dialect::Expr,
            "{}",
            r#"{"key": "k", "op": "in", "value": ["Yes"]}"#,
            Some(r#"{"headers": {"k": "yes"}}"#.to_owned()),
        ),
    ];
    for (dialect, options, policy, message) in &cases {
        let what = format!("{dialect} {policy}");
        let checked = check_case(&what, *dialect, options, policy, message.as_deref());
        assert!(checked > 0, "{what}: no error, warning or hint to check");
    }
}

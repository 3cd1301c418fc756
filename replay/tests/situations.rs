//! The message table's situations through the SQL functions (the fixture every entry point
//! reads, `tests/situations.jsonl` at the repository root; its format is described in
//! `filtervm/tests/situations.rs`): a cell holding the message's document gets the same verdict
//! from `filtervm_match` (null for an error, whose code `filtervm_match_error` gives) as through
//! the library, C, Python and the tool; `filtervm_route` routes it through the groups that can
//! judge it and `filtervm_unjudged` names the others with the same codes.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use datafusion::prelude::{SessionConfig, SessionContext};
use filtervm_replay::adapter::Subscriptions;
use filtervm_replay::session;
use serde_json::{Value, json};
use std::sync::Arc;

/// A SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[tokio::test]
async fn every_situation_has_the_same_verdict_or_code_in_sql() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let fixture = std::fs::read_to_string(root.join("tests/situations.jsonl")).unwrap();
    let mut checked = 0;
    for text in fixture.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(text).unwrap();
        // A message of parts is given as the document of its parts, whose outcome is
        // `parts_document_expect` where the case gives one (filtervm/tests/situations.rs).
        let want = case
            .get("parts_document_expect")
            .unwrap_or(&case["expect"])
            .as_str()
            .unwrap();
        let cell = match (case.get("parts"), case.get("document")) {
            (Some(_), _) => case["parts_document"].as_str().unwrap().to_owned(),
            (None, Some(document)) => document.as_str().unwrap().to_owned(),
            _ => panic!("{text}"),
        };
        let policy = match &case["policy"] {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        };
        let options = case.get("options").map_or(String::new(), Value::to_string);
        let dialect = case["dialect"].as_str().unwrap();
        let mut sub = json!({"id": "case", "dialect": dialect, "policy": case["policy"]});
        if let Some(o) = case.get("options") {
            sub["options"] = o.clone();
        }
        let subscriptions = format!(
            "{sub}\n{}\n",
            json!({"id": "witness", "dialect": "sns", "policy": {}})
        );
        let subscriptions = Arc::new(Subscriptions::from_ndjson(&subscriptions).unwrap());
        let (state, _) = session::session_state(SessionConfig::new(), Some(subscriptions)).unwrap();
        let ctx = SessionContext::new_with_state(state);
        ctx.register_batch(
            "t",
            RecordBatch::try_from_iter([(
                "m",
                Arc::new(StringArray::from(vec![cell.as_str()])) as ArrayRef,
            )])
            .unwrap(),
        )
        .unwrap();
        let (d, p, o) = (literal(dialect), literal(&policy), literal(&options));
        let sql = format!(
            "SELECT filtervm_match({d}, {p}, {o}, m) AS verdict, \
             filtervm_match_error({d}, {p}, {o}, m) AS error, \
             filtervm_match('sns', '{{}}', '', m) AS witness, filtervm_route(m) AS ids, \
             filtervm_unjudged(m) AS unjudged FROM t"
        );
        let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let row = &batches[0];
        let verdict = row.column(0).as_boolean();
        let error = row.column(1).as_string::<i32>();
        let got = if verdict.is_null(0) {
            let error = error.value(0);
            error[..error.find(':').unwrap()].to_owned()
        } else {
            assert!(error.is_null(0), "{text}");
            if verdict.value(0) {
                "match"
            } else {
                "no-match"
            }
            .to_owned()
        };
        assert_eq!(got, want, "filtervm_match: {text}");
        let witness = row.column(2).as_boolean();
        let routed = row.column(3).as_list::<i32>();
        let unjudged = row.column(4).as_list::<i32>();
        let codes: Vec<String> = unjudged
            .value(0)
            .as_string::<i32>()
            .iter()
            .map(|g| {
                let g: Value = serde_json::from_str(g.unwrap()).unwrap();
                g["code"].as_str().unwrap().to_owned()
            })
            .collect();
        let judged = want == "match" || want == "no-match";
        assert_eq!(
            codes.contains(&want.to_owned()),
            !judged,
            "filtervm_unjudged: {text}"
        );
        if routed.is_null(0) {
            // Null only when no group could judge the cell.
            assert!(!judged && witness.is_null(0), "filtervm_route: {text}");
        } else {
            let ids: Vec<String> = routed
                .value(0)
                .as_string::<i32>()
                .iter()
                .map(|i| i.unwrap().to_owned())
                .collect();
            assert_eq!(ids.contains(&"case".to_owned()), want == "match", "{text}");
            // The witness gets what it gets alone, whatever the case's group makes of the cell.
            let witness_matches = !witness.is_null(0) && witness.value(0);
            assert_eq!(
                ids.contains(&"witness".to_owned()),
                witness_matches,
                "{text}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
}

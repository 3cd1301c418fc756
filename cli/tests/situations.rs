//! The message table's situations through `filtervm match` and `filtervm route` (the fixture
//! every entry point reads, `tests/situations.jsonl`; its format is described in
//! `filtervm/tests/situations.rs`): each message given as a line — the document of its parts, or
//! its own document — gets the same verdict or code as through the library, C and Python; a
//! batch line is split by both commands, one result per event.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
use common::filtervm;

use serde_json::{Value, json};

/// Runs `filtervm ARGS` with `input` on stdin; its standard output's JSON lines.
fn run(args: &[&str], input: &str) -> Vec<Value> {
    let out = filtervm(args, input.as_bytes());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A `match --json` result line as the fixture writes an outcome.
fn outcome(line: &Value) -> String {
    match (&line["match"], &line["error"]["code"]) {
        (Value::Bool(true), _) => "match".into(),
        (Value::Bool(false), _) => "no-match".into(),
        (_, Value::String(code)) => code.clone(),
        _ => panic!("{line}"),
    }
}

#[test]
fn match_and_route_give_every_situation_its_verdict_or_code() {
    let fixture = include_str!("../../tests/situations.jsonl");
    let dir = std::env::temp_dir().join(format!("filtervm-situations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for (n, text) in fixture.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let case: Value = serde_json::from_str(text).unwrap();
        // A message of parts is given as the document of its parts, whose outcome is
        // `parts_document_expect` where the case gives one (filtervm/tests/situations.rs).
        let want = case
            .get("parts_document_expect")
            .unwrap_or(&case["expect"])
            .as_str()
            .unwrap();
        let line = match (case.get("parts"), case.get("document")) {
            (Some(_), _) => case["parts_document"].as_str().unwrap().to_owned(),
            (None, Some(document)) => document.as_str().unwrap().to_owned(),
            _ => panic!("{text}"),
        };
        let policy = match &case["policy"] {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        };
        let options = case.get("options").map(Value::to_string);
        let dialect = case["dialect"].as_str().unwrap();
        let mut args = vec!["match", "--json", "-d", dialect, "-f", &policy];
        if let Some(o) = &options {
            args.extend(["--options", o]);
        }
        let got = run(&args, &format!("{line}\n"));
        let split: Option<Vec<&str>> = case.get("lines_split").map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect()
        });
        match &split {
            Some(events) => {
                let got: Vec<String> = got.iter().map(outcome).collect();
                assert_eq!(got, *events, "match: {text}");
            }
            None => {
                assert_eq!(got.len(), 1, "match: {text}");
                assert_eq!(outcome(&got[0]), want, "match: {text}");
            }
        }

        // route, the case's subscription beside one every message reaches (sns `{}`).
        let mut sub = json!({"id": "case", "dialect": dialect, "policy": case["policy"]});
        if let Some(o) = case.get("options") {
            sub["options"] = o.clone();
        }
        let witness = json!({"id": "witness", "dialect": "sns", "policy": {}});
        let subs = dir.join(format!("subs-{n}.ndjson"));
        std::fs::write(&subs, format!("{sub}\n{witness}\n")).unwrap();
        let routed = run(
            &["route", "-s", subs.to_str().unwrap()],
            &format!("{line}\n"),
        );
        let expected: Vec<&str> = split.clone().unwrap_or_else(|| vec![want]);
        let witness_says = outcome(
            &run(
                &["match", "--json", "-d", "sns", "-f", "{}"],
                &format!("{line}\n"),
            )[0],
        );
        assert_eq!(routed.len(), expected.len(), "route: {text}: {routed:?}");
        for (result, want) in routed.iter().zip(&expected) {
            let ids: Vec<&str> = result["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_str().unwrap())
                .collect();
            assert_eq!(
                ids.contains(&"case"),
                *want == "match",
                "route: {text}: {result}"
            );
            let codes: Vec<&str> = result["errors"]
                .as_array()
                .map(|e| e.iter().map(|g| g["code"].as_str().unwrap()).collect())
                .unwrap_or_default();
            let judged = *want == "match" || *want == "no-match";
            assert_eq!(codes.contains(want), !judged, "route: {text}: {result}");
            // The witness gets what it gets alone, whatever the case's group makes of the line.
            assert_eq!(
                ids.contains(&"witness"),
                witness_says == "match",
                "route: {text}: {result}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
}

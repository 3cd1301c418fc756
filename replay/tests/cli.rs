//! The `filtervm-replay` binary on the committed example archive.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a failed run should fail the test loudly"
)]

mod common;

use common::route_line;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/replay")
}

fn replay(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_filtervm-replay"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

/// Every line of the example archive.
fn archive_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for day in ["2024-05-01", "2024-05-02"] {
        let text =
            std::fs::read_to_string(examples().join(format!("archive/{day}.ndjson"))).unwrap();
        lines.extend(text.lines().map(str::to_owned));
    }
    lines
}

fn subscriptions() -> (String, String) {
    let path = examples().join("subscriptions.ndjson");
    (
        path.to_str().unwrap().to_owned(),
        std::fs::read_to_string(path).unwrap(),
    )
}

#[test]
fn route_by_subscription_counts_equal_one_by_one() {
    let (path, text) = subscriptions();
    let archive = examples().join("archive");
    let out = replay(
        &[
            "--subscriptions",
            &path,
            "--by-subscription",
            "--format",
            "ndjson",
            archive.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "no progress when stderr is not a terminal"
    );
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    for line in archive_lines() {
        for id in route_line(&text, &line).unwrap() {
            *expected.entry(id).or_default() += 1;
        }
    }
    let got: BTreeMap<String, i64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                row["id"].as_str().unwrap().to_owned(),
                row["messages"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(
        got.len(),
        5,
        "every example subscription matches some event"
    );
}

#[test]
fn route_prints_each_matching_message_as_it_was() {
    let (path, text) = subscriptions();
    let archive = examples().join("archive");
    let out = replay(
        &[
            "--subscriptions",
            &path,
            "--format",
            "ndjson",
            archive.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        // The message is the archive's line itself, not a string holding it.
        assert!(row["message"].is_object(), "{line}");
        let ids = row["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_str().unwrap().to_owned());
        got.insert(row["message"].to_string(), ids.collect());
    }
    let mut expected = BTreeMap::new();
    for line in archive_lines() {
        let ids = route_line(&text, &line).unwrap();
        if !ids.is_empty() {
            let canonical: serde_json::Value = serde_json::from_str(&line).unwrap();
            expected.insert(canonical.to_string(), ids);
        }
    }
    assert_eq!(got, expected);
}

#[test]
fn sql_from_stdin_and_planning_errors() {
    let archive = examples().join("archive");
    let archive = archive.to_str().unwrap();
    let sql = r#"SELECT count(*) AS n FROM events
        WHERE filtervm_match('eventgrid', '{"includedEventTypes": ["order.refunded"]}', '', message)"#;
    let out = replay(&["--sql", "-", "--format", "ndjson", archive], Some(sql));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = archive_lines()
        .iter()
        .filter(|l| l.contains("order.refunded"))
        .count();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("{{\"n\":{expected}}}")
    );

    let bad = r#"SELECT count(*) FROM events WHERE filtervm_match('sns', '{"a": [{"prefix": 5}]}', '{"scope": "MessageBody"}', message)"#;
    let out = replay(&["--sql", bad, archive], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("/a/0/prefix") && stderr.contains("filtervm_match"),
        "{stderr}"
    );

    let out = replay(&[archive], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--sql"));
}

#[test]
fn format_lines_writes_the_matching_lines_unchanged() {
    let archive = examples().join("archive");
    let sql = r#"SELECT message FROM events
        WHERE filtervm_match('sns', '{"eventType": ["order.paid"]}', '{"scope": "MessageBody"}', message)"#;
    let out = replay(
        &["--format", "lines", "--sql", sql, archive.to_str().unwrap()],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut expected: Vec<String> = archive_lines()
        .into_iter()
        .filter(|l| l.contains(r#""eventType":"order.paid""#))
        .collect();
    got.sort();
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);

    let out = replay(
        &[
            "--format",
            "lines",
            "--sql",
            "SELECT 1, 2",
            archive.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("one text column")
    );
}

/// `--trusted-input`: a line whose only faults are in members no filter reads is matched and
/// routed instead of being `MESSAGE_NOT_JSON`; without it, it is neither. Not with `--scheduler`
/// (the executors register their own functions).
#[test]
fn trusted_input_matches_lines_with_faults_in_unread_members() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive.ndjson");
    let faulty = r#"{"source":"shop","detail":{"n":01,"ok":tru}}"#;
    let valid = r#"{"source":"shop","detail":{"n":1}}"#;
    let other = r#"{"source":"web","detail":{"n":1}}"#;
    std::fs::write(&archive, format!("{faulty}\n{valid}\n{other}\n")).unwrap();
    let subs = dir.path().join("subs.ndjson");
    std::fs::write(
        &subs,
        r#"{"id":"shop","dialect":"eventbridge","policy":{"source":["shop"]}}"#,
    )
    .unwrap();
    let (archive, subs) = (archive.to_str().unwrap(), subs.to_str().unwrap());
    let matched = "SELECT message FROM events WHERE \
                   filtervm_match('eventbridge', '{\"source\":[\"shop\"]}', '', message)";
    let routed = "SELECT message FROM events WHERE cardinality(filtervm_route(message)) > 0";
    let run = |sql: &str, trusted: bool| -> Vec<String> {
        let mut args = vec!["--subscriptions", subs, "--format", "lines", "--sql", sql];
        if trusted {
            args.push("--trusted-input");
        }
        args.push(archive);
        let out = replay(&args, None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    };
    let mut both = vec![faulty.to_owned(), valid.to_owned()];
    both.sort();
    for sql in [matched, routed] {
        assert_eq!(run(sql, false), [valid], "{sql}");
        assert_eq!(run(sql, true), both, "{sql}");
    }

    let out = replay(
        &[
            "--trusted-input",
            "--scheduler",
            "df://localhost:1",
            archive,
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--scheduler"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! `filtervm route` through the binary: its output on a mixed set equals evaluating each
//! subscription on its own (`filtervm match`), whatever the number of threads; invalid
//! subscriptions and unreadable messages are reported, never silently dropped; exit status.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
use common::filtervm;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/route");

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("filtervm-route-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Route's output: per line number, the ids (as JSON text).
fn routed(out: &Output) -> BTreeMap<u64, Vec<String>> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let ids = v["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(Value::to_string)
                .collect();
            (v["line"].as_u64().unwrap(), ids)
        })
        .collect()
}

/// Each subscription evaluated on its own with `filtervm match --json`: per line number, the
/// ids (in the subscriptions file's order).
fn one_by_one(subscriptions: &Path, messages: &Path) -> BTreeMap<u64, Vec<String>> {
    let mut expected: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in std::fs::read_to_string(subscriptions).unwrap().lines() {
        let sub: Value = serde_json::from_str(line).unwrap();
        let policy = match &sub["policy"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let options = sub.get("options").map_or("{}".to_owned(), Value::to_string);
        let out = filtervm(
            &[
                "match",
                "--json",
                "-d",
                sub["dialect"].as_str().unwrap(),
                "--options",
                &options,
                "-f",
                &policy,
                path(messages),
            ],
            b"",
        );
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for verdict in String::from_utf8(out.stdout).unwrap().lines() {
            let v: Value = serde_json::from_str(verdict).unwrap();
            let ids = expected.entry(v["line"].as_u64().unwrap()).or_default();
            if v["match"] == Value::Bool(true) {
                ids.push(sub["id"].to_string());
            }
        }
    }
    expected
}

#[test]
fn route_on_the_mixed_example_equals_one_by_one_evaluation() {
    let subs = Path::new(EXAMPLES).join("subscriptions.ndjson");
    let messages = Path::new(EXAMPLES).join("messages.ndjson");
    let out = filtervm(&["route", "-s", path(&subs), path(&messages)], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Not a terminal: nothing on stderr (no progress bar, no summary).
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = routed(&out);
    assert_eq!(got, one_by_one(&subs, &messages));
    // Five dialects, and messages routed to several of them.
    assert!(got.values().any(|ids| ids.len() >= 3), "{got:?}");
    assert!(got.values().any(Vec::is_empty), "{got:?}");
    // Ids as written: a number stays a number.
    assert!(got[&1].contains(&"42".to_owned()), "{got:?}");
}

#[test]
fn route_output_is_in_input_order_on_any_number_of_threads() {
    let subs = Path::new(EXAMPLES).join("subscriptions.ndjson");
    let example = std::fs::read_to_string(Path::new(EXAMPLES).join("messages.ndjson")).unwrap();
    // 2,000 messages (several batches per thread), with blank and unreadable lines among them.
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&example);
        if i % 7 == 0 {
            text.push_str("\n{not json\n");
        }
    }
    let messages = temp("many.ndjson", &text);
    let one = filtervm(
        &["route", "-j", "1", "-s", path(&subs), path(&messages)],
        b"",
    );
    assert_eq!(one.status.code(), Some(2));
    for threads in ["2", "3", "8"] {
        let many = filtervm(
            &["route", "-j", threads, "-s", path(&subs), path(&messages)],
            b"",
        );
        assert_eq!(many.status.code(), Some(2));
        assert_eq!(one.stdout, many.stdout, "{threads} threads");
        assert_eq!(one.stderr, many.stderr, "{threads} threads");
    }
    // The same through stdin, and against one-by-one evaluation.
    let stdin = filtervm(&["route", "-s", path(&subs)], text.as_bytes());
    assert_eq!(one.stdout, stdin.stdout);
    let good = temp("good.ndjson", &example.repeat(100));
    let routed_good = filtervm(&["route", "-j", "2", "-s", path(&subs), path(&good)], b"");
    assert_eq!(routed(&routed_good), one_by_one(&subs, &good));
}

#[test]
fn route_reads_every_message_shape_as_match_does() {
    // Subscriptions on attributes (sns, basaltic) and on the body (sns body scope).
    let subs = temp(
        "shapes-subs.ndjson",
        concat!(
            r#"{"id": 1, "dialect": "sns", "policy": {"event": ["paid"]}}"#,
            "\n",
            r#"{"id": 2, "dialect": "sns", "options": {"scope": "MessageBody"}, "policy": {"total": [{"numeric": [">", 10]}]}}"#,
            "\n",
            r#"{"id": 3, "dialect": "basaltic", "policy": {"event": ["paid"]}}"#,
            "\n",
            r#"{"id": 4, "dialect": "sns", "policy": {}}"#,
            "\n",
        ),
    );
    // The same message in every shape `match` reads (README, "Message shapes"): an SNS
    // notification (its `Message` is the body), a Publish API request, attributes as delivered to
    // SQS/Lambda, the parts shape, a plain event (the body, no attributes).
    let messages = temp(
        "shapes.ndjson",
        concat!(
            r#"{"Type": "Notification", "MessageId": "m", "TopicArn": "arn:aws:sns:us-east-1:1:t", "Message": "{\"total\": 12}", "MessageAttributes": {"event": {"Type": "String", "Value": "paid"}}}"#,
            "\n",
            r#"{"TopicArn": "arn:aws:sns:us-east-1:1:t", "Message": "{\"total\": 12}", "MessageAttributes": {"event": {"DataType": "String", "StringValue": "paid"}}}"#,
            "\n",
            r#"{"attributes": {"event": {"Type": "String", "Value": "paid"}}, "body": "{\"total\": 9}"}"#,
            "\n",
            r#"{"attributes": {"event": {"DataType": "String", "StringValue": "new"}}, "body": {"total": 11}}"#,
            "\n",
            r#"{"total": 12, "event": "paid"}"#,
            "\n",
        ),
    );
    let out = filtervm(&["route", "-s", path(&subs), path(&messages)], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = routed(&out);
    assert_eq!(got, one_by_one(&subs, &messages));
    let ids = |line: u64| got[&line].join(" ");
    assert_eq!(ids(1), "1 2 3 4", "the notification's attributes and body");
    assert_eq!(
        ids(2),
        "1 2 3 4",
        "the Publish request's attributes and body"
    );
    assert_eq!(ids(3), "1 3 4");
    assert_eq!(ids(4), "2 4");
    // A plain event has no attributes: only `{}` receives it on attributes (sns rule 12).
    assert_eq!(ids(5), "2 4");
}

#[test]
fn a_message_a_group_cannot_read_is_an_error_naming_the_group() {
    let subs = Path::new(EXAMPLES).join("subscriptions.ndjson");
    // Untyped attributes: the basaltic subscriptions cannot read the line; the others can.
    let line = br#"{"attributes": {"event": "order.paid"}, "headers": {"region": "eu-west", "subject": "orders.x"}}"#;
    let out = filtervm(&["route", "-s", path(&subs)], &[&line[..], b"\n"].concat());
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["line"], 1);
    assert_eq!(v["ids"], serde_json::json!(["eu-orders"]));
    assert_eq!(v["errors"][0]["group"], "basaltic");
    assert_eq!(v["errors"][0]["code"], "INVALID_MESSAGE");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("<stdin>:1: the basaltic subscriptions cannot read this message"),
        "{stderr}"
    );
    // A line over --max-line-bytes: an error for that message, and the next one is routed.
    let input = [
        &line[..],
        b"\n",
        br#"{"headers": {"region": "eu-1", "subject": "orders"}}"#,
        b"\n",
    ]
    .concat();
    let out = filtervm(
        &["route", "--max-line-bytes", "60", "-s", path(&subs)],
        &input,
    );
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<Value> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines[0]["error"]["code"], "MESSAGE_TOO_LARGE");
    assert_eq!(lines[1]["ids"], serde_json::json!(["eu-orders"]));
}

#[test]
fn invalid_subscriptions_are_reported_and_the_others_routed() {
    let subs = Path::new(EXAMPLES).join("invalid-subscriptions.ndjson");
    let messages = Path::new(EXAMPLES).join("messages.ndjson");
    let out = filtervm(&["route", "-s", path(&subs), path(&messages)], b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Each with its id, line, code and pointer.
    for expected in [
        "error[NOTIFICATION_INVALID_FILTER_POLICY]: subscription \"typo\"",
        "invalid-subscriptions.ndjson:2:",
        "/policy/event/0/prefix",
        "error[STREAM_SYNTAX_ERROR]: subscription \"eu-orders\"",
        "invalid-subscriptions.ndjson:3:",
        "error[DUPLICATE_ID]: subscription \"billing\"",
        "/id",
        "3 invalid subscriptions not loaded; routing the 2 others",
    ] {
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
    let got = routed(&out);
    assert_eq!(got[&1], ["\"billing\""]);
    // --strict: nothing routed.
    let out = filtervm(
        &["route", "--strict", "-s", path(&subs), path(&messages)],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("\"typo\"") && !stderr.contains("DUPLICATE_ID"),
        "{stderr}"
    );
}

#[test]
fn by_subscription_counts_and_first_lines() {
    let subs = Path::new(EXAMPLES).join("subscriptions.ndjson");
    let messages = Path::new(EXAMPLES).join("messages.ndjson");
    let out = filtervm(
        &[
            "route",
            "--by-subscription",
            "--first",
            "1",
            "-s",
            path(&subs),
            path(&messages),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let per: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let expected = one_by_one(&subs, &messages);
    assert_eq!(per.len(), 6);
    for sub in &per {
        let id = sub["id"].to_string();
        let lines: Vec<u64> = expected
            .iter()
            .filter(|(_, ids)| ids.contains(&id))
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(sub["count"].as_u64(), Some(lines.len() as u64), "{sub}");
        assert_eq!(
            sub["first_lines"],
            serde_json::json!(lines.iter().take(1).collect::<Vec<_>>()),
            "{sub}"
        );
    }
}

#[test]
fn route_exit_status_and_usage_errors() {
    let subs = Path::new(EXAMPLES).join("subscriptions.ndjson");
    // Nothing routed, every group judging the line: 1.
    let out = filtervm(
        &["route", "-s", path(&subs)],
        b"{\"attributes\": {}, \"headers\": {}, \"subject\": \"x\"}\n\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"line\":1,\"ids\":[]}\n"
    );
    // Subscriptions and messages both on stdin: a usage error.
    let out = filtervm(&["route", "-s", "-"], b"");
    assert_eq!(out.status.code(), Some(64));
    // --first without --by-subscription, zero threads: usage errors.
    let out = filtervm(&["route", "--first", "3", "-s", path(&subs)], b"");
    assert_eq!(out.status.code(), Some(64));
    let out = filtervm(&["route", "-j", "0", "-s", path(&subs)], b"");
    assert_eq!(out.status.code(), Some(64));
    // A subscriptions file that does not exist: an error.
    let out = filtervm(&["route", "-s", "/nonexistent/subs.ndjson"], b"");
    assert_eq!(out.status.code(), Some(2));
    // Subscriptions from stdin, messages from a file.
    let messages = Path::new(EXAMPLES).join("messages.ndjson");
    let text = std::fs::read(&subs).unwrap();
    let out = filtervm(&["route", "-s", "-", path(&messages)], &text);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(routed(&out), one_by_one(&subs, &messages));
}

#[test]
fn unreadable_subscription_lines_are_invalid_subscriptions() {
    let mut text = b"{\"id\": 1, \"dialect\": \"sns\", \"policy\": {}}\n\xff\xfe\n".to_vec();
    text.extend_from_slice(
        format!(
            "{{\"id\": 2, \"dialect\": \"sns\", \"policy\": {{\"a\": [\"{}\"]}}}}\n",
            "x".repeat(2 << 20)
        )
        .as_bytes(),
    );
    text.extend_from_slice(b"{\"id\": 3, \"dialect\": \"sns\", \"policy\": {}}\n");
    let dir = std::env::temp_dir().join(format!("filtervm-route-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let subs = dir.join("subs.ndjson");
    std::fs::write(&subs, &text).unwrap();
    let out = filtervm(&["route", "-s", path(&subs)], b"{}\n");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"line\":1,\"ids\":[1,3]}\n"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("subs.ndjson:2: error[INVALID_SUBSCRIPTION]: not UTF-8"),
        "{stderr}"
    );
    assert!(
        stderr.contains("subs.ndjson:3: error[INVALID_SUBSCRIPTION]: the line is 2097"),
        "{stderr}"
    );
    assert!(stderr.lines().all(|l| l.len() < 300), "{stderr:.500}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `route --trusted-input` reads lines as `match --trusted-input` does: an event whose unread
/// `data` is not JSON is routed instead of being an error for the Event Grid group.
#[test]
fn route_trusted_input_skips_what_no_filter_reads() {
    let subs = temp(
        "trusted-subs.ndjson",
        r#"{"id": "orders", "dialect": "eventgrid", "policy": {"subjectBeginsWith": "orders/"}}"#,
    );
    let line = br#"{"subject": "orders/7", "data": {"n": [1., NaN]}}
"#;
    let out = filtervm(&["route", "-s", path(&subs)], line);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"][0]["code"], "MESSAGE_NOT_JSON");
    let out = filtervm(&["route", "--trusted-input", "-s", path(&subs)], line);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ids"], serde_json::json!(["orders"]));
}

//! Message shapes through the `filtervm` binary: a message without the part a filter reads is
//! judged where the dialect gives that a meaning (an SNS message with no attributes, with a note
//! naming the likely mistake) and an error line otherwise (never a quiet verdict), the shapes real
//! systems emit are read, and `explain` reads a message exactly as `match` reads a line.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_filtervm");

/// Runs `filtervm ARGS` with `input` on stdin.
fn filtervm(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_lines(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const BODY_SCOPE: &str = r#"{"scope":"MessageBody"}"#;

/// A flat NDJSON event given to an sns filter in attribute scope: a message with no attributes,
/// judged as SNS judges it (rule 12: no match), and one note on standard error naming the option
/// (not 100,000 unexplained `no-match`es).
#[test]
fn a_flat_event_to_an_attribute_scope_filter_is_judged_with_a_note() {
    let events = "{\"store\": \"example_corp\", \"total\": 5}\n{\"store\": \"other\"}\n";
    let args = ["match", "-d", "sns", "-f", r#"{"store": ["example_corp"]}"#];
    let out = filtervm(&args, events);
    assert_eq!(stdout(&out), "no-match\nno-match\n");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("2 of 2 messages have no attributes"), "{err}");
    assert!(
        err.contains(r#"--options '{"scope":"MessageBody"}'"#),
        "{err}"
    );
    let mut json = args.to_vec();
    json.push("--json");
    let lines = json_lines(&filtervm(&json, events));
    assert_eq!(lines[0], json!({"line": 1, "match": false}));
    // `{}` receives every message, one without attributes too (rule 2).
    let out = filtervm(&["match", "-d", "sns", "-f", "{}"], events);
    assert_eq!(stdout(&out), "match\nmatch\n");
    // With the hint followed, the same lines are bodies and are judged.
    let mut fixed = args.to_vec();
    fixed.extend(["--options", BODY_SCOPE]);
    let out = filtervm(&fixed, events);
    assert_eq!(stdout(&out), "match\nno-match\n");
    assert_eq!(out.status.code(), Some(0));
}

/// AWS's own shapes are read: Publish API attributes (`DataType`/`StringValue`, `BinaryValue`),
/// attributes as delivered to SQS/Lambda (`Type`/`Value`), and the notification envelope whose
/// `Message` is the body.
#[test]
fn aws_shapes_are_read_and_matched() {
    let lines = [
        r#"{"MessageAttributes": {"store": {"DataType": "String", "StringValue": "example_corp"}, "blob": {"DataType": "Binary", "BinaryValue": "AQID"}}, "Message": "hi"}"#,
        r#"{"MessageAttributes": {"store": {"Type": "String", "Value": "example_corp"}}}"#,
        r#"{"Type": "Notification", "MessageId": "1", "TopicArn": "arn:aws:sns:eu-west-1:1:t", "Message": "{\"total\": 150.5}", "MessageAttributes": {"store": {"Type": "String", "Value": "other"}}, "Timestamp": "2024-01-01T00:00:00.000Z"}"#,
        r#"{"MessageAttributes": {"price": {"DataType": "Number", "StringValue": "1.50"}}}"#,
    ]
    .join("\n");
    let out = filtervm(
        &["match", "-d", "sns", "-f", r#"{"store": ["example_corp"]}"#],
        &lines,
    );
    assert_eq!(stdout(&out), "match\nmatch\nno-match\nno-match\n");
    assert_eq!(out.status.code(), Some(0));
    // The envelope's body is its `Message`, for a body filter; a message without one is an
    // error naming the other scope.
    let out = filtervm(
        &[
            "match",
            "-d",
            "sns",
            "--options",
            BODY_SCOPE,
            "-f",
            r#"{"total": [{"numeric": [">", 100]}]}"#,
            "--json",
        ],
        &lines,
    );
    let got = json_lines(&out);
    assert_eq!(got[0], json!({"line": 1, "match": false}));
    assert_eq!(got[1]["error"]["code"], "MESSAGE_SHAPE");
    assert!(
        got[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MessageAttributes")
    );
    assert_eq!(got[2], json!({"line": 3, "match": true}));
    assert_eq!(out.status.code(), Some(2));
    // Attribute values keep their text: "1.50" is the number 1.5 and the string "1.50".
    let out = filtervm(
        &[
            "match",
            "-d",
            "sns",
            "-f",
            r#"{"price": [{"numeric": ["=", 1.5]}]}"#,
        ],
        &lines,
    );
    assert_eq!(stdout(&out), "no-match\nno-match\nno-match\nmatch\n");
}

/// A stream filter `store missing` on a JSON message without headers: an error, not `true`.
#[test]
fn a_stream_filter_on_a_message_without_headers_is_an_error() {
    let out = filtervm(
        &["match", "-d", "stream", "-f", "store missing"],
        "{\"store\": \"x\"}\n{\"headers\": {\"region\": \"eu\"}}\n",
    );
    assert_eq!(stdout(&out), "error\nmatch\n");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("MESSAGE_SHAPE"), "{err}");
    assert!(err.contains(r#"{"headers": {"name": "value"}}"#), "{err}");
}

/// A body filter reads a bare document as the body (an SNS-body NDJSON archive), and the
/// vector shape's `{"body": "<text>"}` too.
#[test]
fn a_body_filter_reads_a_bare_document_as_the_body() {
    let out = filtervm(
        &[
            "match",
            "-d",
            "sns",
            "--options",
            BODY_SCOPE,
            "-f",
            r#"{"store": ["x"]}"#,
        ],
        "{\"store\": \"x\"}\n{\"body\": \"{\\\"store\\\": \\\"x\\\"}\"}\n{\"store\": \"y\"}\n",
    );
    assert_eq!(stdout(&out), "match\nmatch\nno-match\n");
    assert_eq!(out.status.code(), Some(0));
}

/// An attribute-scope filter given a message with only a body: judged (rule 12), with the note;
/// a stream filter given it cannot judge it: an error naming the headers.
#[test]
fn attribute_scope_given_only_a_body_is_judged_with_the_note() {
    let line = "{\"body\": \"{\\\"store\\\": \\\"x\\\"}\"}\n";
    let out = filtervm(&["match", "-d", "sns", "-f", r#"{"store": ["x"]}"#], line);
    assert_eq!(stdout(&out), "no-match\n");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(r#"--options '{"scope":"MessageBody"}'"#),
        "{err}"
    );
    let out = filtervm(&["match", "-d", "stream", "-f", "store exists"], line);
    assert_eq!(stdout(&out), "error\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("MESSAGE_SHAPE"), "{}", stderr(&out));
}

/// An Event Grid array of events (or a CloudEvents batch): one verdict per event, with its index;
/// grep-like modes select the line when some event matched.
#[test]
fn an_event_grid_batch_gets_one_verdict_per_event() {
    let batch = r#"[{"id": "1", "subject": "orders/1", "eventType": "a"}, {"id": "2", "subject": "users/1", "eventType": "a"}, {"id": "3", "subject": "orders/2", "eventType": "b"}]"#;
    let input = format!("{batch}\n{{\"subject\": \"users/2\"}}\n");
    let args = [
        "match",
        "-d",
        "eventgrid",
        "-f",
        r#"{"subjectBeginsWith": "orders/"}"#,
    ];
    let out = filtervm(&args, &input);
    assert_eq!(
        stdout(&out),
        "match (event 0)\nno-match (event 1)\nmatch (event 2)\nno-match\n"
    );
    assert_eq!(out.status.code(), Some(0));
    let mut json = args.to_vec();
    json.push("--json");
    assert_eq!(
        json_lines(&filtervm(&json, &input)),
        [
            json!({"line": 1, "event": 0, "match": true}),
            json!({"line": 1, "event": 1, "match": false}),
            json!({"line": 1, "event": 2, "match": true}),
            json!({"line": 2, "match": false}),
        ]
    );
    let mut count = args.to_vec();
    count.push("-c");
    assert_eq!(stdout(&filtervm(&count, &input)), "1\n");
    let cloud = r#"[{"specversion": "1.0", "type": "a", "source": "/s", "id": "1", "subject": "orders/1"}, {"specversion": "1.0", "type": "a", "source": "/s", "id": "2", "subject": "x"}]"#;
    let out = filtervm(
        &[
            "match",
            "-d",
            "eventgrid",
            "--options",
            r#"{"schema":"CloudEventSchemaV1_0"}"#,
            "-f",
            r#"{"subjectBeginsWith": "orders/"}"#,
        ],
        cloud,
    );
    assert_eq!(stdout(&out), "match (event 0)\nno-match (event 1)\n");
}

/// `explain` reads its message as `match` reads a line: the same shapes, the same errors.
#[test]
fn explain_reads_messages_as_match_does() {
    let dir = std::env::temp_dir().join(format!("filtervm-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    // SNS body scope: a raw body (explain once wanted the `{"body": ...}` wrapper).
    let raw = file("raw.json", "{\"store\": \"x\"}\n");
    let out = filtervm(
        &[
            "explain",
            "-d",
            "sns",
            "--options",
            BODY_SCOPE,
            "-f",
            r#"{"store": ["x"]}"#,
            "-m",
            &raw,
        ],
        "",
    );
    assert!(stdout(&out).starts_with("match"), "{}", stdout(&out));
    // The same document to an attribute-scope filter: a message with no attributes, judged as
    // `match` judges it, and the hint naming the scope.
    let out = filtervm(
        &[
            "explain",
            "-d",
            "sns",
            "-f",
            r#"{"store": ["x"]}"#,
            "-m",
            &raw,
        ],
        "",
    );
    assert!(stdout(&out).starts_with("no match"), "{}", stdout(&out));
    assert!(stdout(&out).contains("SCOPE_MISMATCH"), "{}", stdout(&out));
    // A stream filter cannot judge it: the error `match` prints, exit 2.
    let out = filtervm(
        &["explain", "-d", "stream", "-f", "store exists", "-m", &raw],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("MESSAGE_SHAPE"), "{}", stderr(&out));
    // An AWS notification, and an Event Grid batch explained event by event.
    let envelope = file(
        "envelope.json",
        r#"{"Type": "Notification", "Message": "{}", "MessageAttributes": {"store": {"Type": "String", "Value": "x"}}}"#,
    );
    let out = filtervm(
        &[
            "explain",
            "-d",
            "sns",
            "-f",
            r#"{"store": ["x"]}"#,
            "-m",
            &envelope,
        ],
        "",
    );
    assert!(stdout(&out).starts_with("match"), "{}", stdout(&out));
    let batch = file(
        "batch.json",
        r#"[{"subject": "orders/1"}, {"subject": "users/1"}]"#,
    );
    let grid = [
        "explain",
        "-d",
        "eventgrid",
        "-f",
        r#"{"subjectBeginsWith": "orders/"}"#,
        "-m",
    ];
    let mut args = grid.to_vec();
    args.push(&batch);
    let text = stdout(&filtervm(&args, ""));
    assert!(text.starts_with("event 0:\nmatch"), "{text}");
    assert!(text.contains("\nevent 1:\nno match"), "{text}");
    args.push("--json");
    let v: Value = serde_json::from_str(&stdout(&filtervm(&args, ""))).unwrap();
    assert_eq!(v[0]["event"], 0);
    assert_eq!(v[0]["matched"], true);
    assert_eq!(v[1]["matched"], false);
    let _ = std::fs::remove_dir_all(&dir);
}

//! The vector runner is strict: deliberately wrong, malformed and misspelled lines fail loudly, a
//! run that checks nothing fails, and an `invalid` case passes only when the compiler and the
//! reference's own validation both reject it for the reason its `error` names (`FORMAT.md`,
//! `filtervm_conformance::runner`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_conformance::runner::{self, CaseResult};
use std::path::Path;
use std::process::Command;

/// The one result of a one-line text.
fn one(line: &str) -> CaseResult {
    let results = runner::run_text("t.jsonl", line);
    assert_eq!(results.len(), 1, "{line}: {results:?}");
    results.into_iter().next().unwrap()
}

/// The failure of a line that must fail, with every `words` in it.
fn fails(line: &str, words: &[&str]) {
    let r = one(line);
    let failure = r
        .failure
        .unwrap_or_else(|| panic!("passed, but must fail: {line}"));
    for w in words {
        assert!(
            failure.contains(w),
            "{line}\n  failure: {failure}\n  lacks: {w}"
        );
    }
}

fn passes(line: &str) {
    let r = one(line);
    assert_eq!(r.failure, None, "{line}");
}

const MATCH: &str = r#"{"id": "m", "dialect": "basaltic", "policy": {"a": ["x"]}, "message": {"attributes": {"a": {"type": "String", "value": "x"}}}, "expect": "match"}"#;

#[test]
fn a_good_line_passes_and_every_misspelled_member_fails() {
    passes(MATCH);
    passes(&MATCH.replace(r#""expect""#, r#""source": "s", "why": "w", "expect""#));
    for (right, wrong) in [
        ("\"expect\"", "\"expext\""),
        ("\"message\"", "\"mesage\""),
        ("\"policy\"", "\"Policy\""),
        ("\"dialect\"", "\"dialects\""),
        ("\"id\"", "\"ID\""),
    ] {
        let line = MATCH.replacen(right, wrong, 1);
        let r = one(&line);
        assert!(
            r.failure
                .as_deref()
                .is_some_and(|f| f.contains("unknown field")),
            "{line}: {r:?}"
        );
        assert_eq!(
            r.id, "t.jsonl:1",
            "an unreadable line is named by its place"
        );
    }
    // A member the format does not name at all.
    fails(
        &MATCH.replace(r#""expect""#, r#""comment": "x", "expect""#),
        &["unknown field `comment`"],
    );
    // A misspelled `error` on an invalid case.
    fails(
        r#"{"id": "i", "dialect": "basaltic", "policy": [], "expect": "invalid", "eror": "x"}"#,
        &["unknown field `eror`"],
    );
}

#[test]
fn malformed_lines_and_missing_members_fail() {
    for (line, words) in [
        ("{", &["unreadable line"][..]),
        ("not json", &["unreadable line"]),
        (r#"{"id": "x", "dialect": "sns",}"#, &["unreadable line"]),
        (r#"[1, 2]"#, &["unreadable line"]),
        (
            r#"{"id": 7, "dialect": "sns", "policy": {}, "expect": "invalid"}"#,
            &["unreadable line"],
        ),
        (
            r#"{"dialect": "sns", "policy": {}, "expect": "invalid", "error": "x"}"#,
            &["no `id`"],
        ),
        (
            r#"{"id": "x", "policy": {}, "expect": "invalid", "error": "x"}"#,
            &["no dialect"],
        ),
        (
            r#"{"id": "x", "dialect": "SNS", "policy": {}, "expect": "invalid", "error": "x"}"#,
            &["unknown dialect"],
        ),
        (
            r#"{"id": "x", "dialect": "sns", "expect": "invalid", "error": "x"}"#,
            &["no policy"],
        ),
        (
            r#"{"id": "x", "dialect": "sns", "policy": {}}"#,
            &["no expect"],
        ),
        (
            r#"{"id": "x", "dialect": "sns", "policy": {}, "expect": "matches"}"#,
            &["unknown expect `matches`"],
        ),
        (
            r#"{"id": "x", "dialect": "sns", "policy": {}, "expect": "match"}"#,
            &["no message"],
        ),
    ] {
        fails(line, words);
    }
}

#[test]
fn null_is_a_value_not_an_absence() {
    // `"policy": null` is compiled like any value: an invalid sns policy ("Filter is not an
    // object"), not "the case has no policy".
    passes(
        r#"{"id": "p", "dialect": "sns", "policy": null, "expect": "invalid", "error": "not an object"}"#,
    );
    fails(
        r#"{"id": "p", "dialect": "stream", "policy": null, "message": {"headers": {}}, "expect": "no-match"}"#,
        &["compile error", "STREAM_INVALID_FILTER"],
    );
    // `"message": null` is a message: a document in none of the wrapper shapes, so a body
    // without headers, which a stream filter cannot judge (`filtervm/MESSAGES.md`)...
    fails(
        r#"{"id": "m", "dialect": "stream", "policy": {"groups": [[{"op": "exists", "header": "h"}]]}, "message": null, "expect": "match"}"#,
        &["message error", "MESSAGE_SHAPE"],
    );
    // ... and a basaltic filter judges as a message with the empty attribute set (B-2, B-9):
    // `{}` matches it, a policy naming an attribute does not.
    passes(
        r#"{"id": "m", "dialect": "basaltic", "policy": {}, "message": null, "expect": "match"}"#,
    );
    passes(
        r#"{"id": "m", "dialect": "basaltic", "policy": {"a": ["x"]}, "message": null, "expect": "no-match"}"#,
    );
    // `"options": null` is the defaults.
    passes(
        r#"{"id": "o", "dialect": "sns", "options": null, "policy": {"a": ["x"]}, "message": {"attributes": {"a": {"Type": "String", "Value": "x"}}}, "expect": "match"}"#,
    );
}

#[test]
fn an_invalid_case_needs_both_rejections_and_its_error_word() {
    let invalid = |policy: &str, error: &str| {
        format!(
            r#"{{"id": "i", "dialect": "stream", "policy": {policy}, "expect": "invalid"{error}}}"#
        )
    };
    let bad = r#"{"groups": [[{"op": "exists", "header": "h", "extra": 1}]]}"#;
    passes(&invalid(bad, r#", "error": "extra""#));
    passes(&invalid(bad, r#", "error": "stream_invalid_filter""#));
    // Without a word: the compiler and the reference name the same code and pointer.
    passes(&invalid(bad, ""));
    fails(&invalid(bad, r#", "error": """#), &["`error` is empty"]);
    fails(
        &invalid(bad, r#", "error": "STREAM_LIMIT_EXCEEDED""#),
        &["expected invalid with `STREAM_LIMIT_EXCEEDED`"],
    );
    // Words of the compiler's message that the reference does not use: both must name it.
    fails(
        &invalid(bad, r#", "error": "holds only""#),
        &["the reference says"],
    );
    // A valid policy expected invalid.
    fails(
        &invalid(r#""a exists""#, r#", "error": "x""#),
        &["got a compiled filter", "the reference accepts it too"],
    );
    // `error` on a case that is not invalid.
    fails(
        &MATCH.replace(r#""expect""#, r#""error": "x", "expect""#),
        &["`error` belongs to invalid cases"],
    );
}

#[test]
fn a_wrong_expectation_names_both_engines() {
    fails(
        &MATCH.replace(r#""match""#, r#""no-match""#),
        &["expected no-match", "both the VM and the reference"],
    );
}

#[test]
fn duplicate_ids_and_empty_texts_fail() {
    let two = format!("{MATCH}\n\n{MATCH}\n");
    let results = runner::run_text("t.jsonl", &two);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].failure, None);
    assert!(
        results[1]
            .failure
            .as_deref()
            .is_some_and(|f| f.contains("used twice") && f.contains("line 3")),
        "{results:?}"
    );
    for empty in ["", "\n\n", "   \n"] {
        let results = runner::run_text("e.jsonl", empty);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].id, "e.jsonl");
        assert!(results[0].failure.is_some());
    }
}

#[test]
fn a_run_that_checks_nothing_fails() {
    let dir = std::env::temp_dir().join(format!("filtervm-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.jsonl");
    std::fs::write(&good, format!("{MATCH}\n")).unwrap();
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let summary = runner::run_files(&[good.as_path()], None);
    assert!(summary.ok(), "{summary:?}");
    assert_eq!(summary.passed, 1);
    let summary = runner::run_files(&[good.as_path()], Some("nothing-has-this-id"));
    assert!(!summary.ok());
    assert!(
        summary.failures[0].contains("selects no case"),
        "{summary:?}"
    );
    let summary = runner::run_files(&[good.as_path(), empty.as_path()], None);
    assert!(!summary.ok());
    assert!(
        summary.failures[0].contains("no case in the file"),
        "{summary:?}"
    );
    let summary = runner::run_files(&[dir.join("missing.jsonl").as_path()], None);
    assert!(!summary.ok());
    assert!(summary.failures[0].contains("cannot read"), "{summary:?}");

    // The binary: the exit status and the closing line say the same.
    let run = |files: &[&Path], cases: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_filtervm-conformance"));
        command.args(files);
        match cases {
            Some(c) => command.env("FILTERVM_CASES", c),
            None => command.env_remove("FILTERVM_CASES"),
        };
        let out = command.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run(&[good.as_path()], None);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    let (code, out) = run(&[good.as_path()], Some("m"));
    assert_eq!(code, Some(0), "{out}");
    for (files, cases) in [
        (&[empty.as_path()][..], None),
        (&[good.as_path()][..], Some("zzz")),
        (&[good.as_path(), empty.as_path()][..], None),
    ] {
        let (code, out) = run(files, cases);
        assert_eq!(code, Some(1), "{files:?} {cases:?}: {out}");
        assert!(out.contains("FAIL"), "{out}");
    }
    let (code, _) = run(&[], None);
    assert_eq!(code, Some(2), "no file is a usage error");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Our own vectors name the error of every invalid case (the public ones copied from the shared
/// specs stay as written; the runner holds their cases to the compiler and the reference naming
/// the same code and pointer).
#[test]
fn every_local_invalid_vector_names_its_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/local");
    let mut invalid = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            // The reference's reader: vectors hold numbers beyond binary64 (`1e400`) and
            // eventbridge patterns nest deeper than `serde_json` reads.
            let case = filtervm_conformance::reference::json::parse_with(
                line,
                filtervm_conformance::reference::json::ReadOptions {
                    max_depth: filtervm_conformance::reference::eventbridge::READ_OPTIONS.max_depth
                        + 1,
                    ..Default::default()
                },
            )
            .unwrap();
            if case.get("expect").and_then(|e| e.as_str()) == Some("invalid") {
                invalid += 1;
                assert!(
                    case.get("error")
                        .and_then(|e| e.as_str())
                        .is_some_and(|e| !e.trim().is_empty()),
                    "{}:{}: an invalid case without `error`",
                    path.display(),
                    n + 1
                );
            }
        }
    }
    assert!(invalid > 100, "{invalid}");
}

/// The runner matches every case in both read modes; a body that is not JSON (sns rule 14) may
/// get another verdict in trusted mode, which judges what it skips unchecked, and still passes.
#[test]
fn a_body_that_is_not_json_may_differ_in_trusted_mode() {
    let line = r#"{"id": "t", "dialect": "sns", "options": {"scope": "MessageBody"}, "policy": {"a": ["x"]}, "message": {"body": "{\"a\": \"x\", \"b\": tru}"}, "expect": "no-match"}"#;
    passes(line);
    // ... where the two modes do differ (or the case above would prove nothing).
    use filtervm_compiler::{Dialect, Evaluator, Options, ReadMode, compile_text};
    let options = Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap();
    let filter = compile_text(Dialect::Sns, r#"{"a": ["x"]}"#, &options).unwrap();
    let body = filtervm_vm::message::Message::Body(br#"{"a": "x", "b": tru}"#.to_vec());
    let mut trusted = Evaluator::new();
    trusted.set_read_mode(ReadMode::Trusted);
    assert!(trusted.matches(&filter, &body));
    assert!(!Evaluator::new().matches(&filter, &body));
    // The same body made JSON: both modes must match.
    passes(&line.replace("tru}", "true}").replace("no-match", "match"));
}

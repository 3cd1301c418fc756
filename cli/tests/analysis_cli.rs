//! `filtervm example` and `filtervm diff`: exit statuses, the JSON shapes, and every printed
//! message judged by the reference interpreter too (run out of process, as `bench` does; the
//! checks that need it use `--no-reference` when it is not built, except under `CI`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{BIN, filtervm};
use std::path::Path;

/// `--no-reference` when the reference interpreter is not built next to `filtervm` (never under
/// CI, where every check must run).
fn reference_flag() -> Vec<&'static str> {
    let built = Path::new(BIN)
        .with_file_name(format!(
            "filtervm-conformance{}",
            std::env::consts::EXE_SUFFIX
        ))
        .is_file();
    assert!(
        built || std::env::var_os("CI").is_none(),
        "filtervm-conformance is not built next to filtervm, and CI must run every check"
    );
    if built {
        vec![]
    } else {
        vec!["--no-reference"]
    }
}

fn run(args: &[&str]) -> (i32, String) {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(reference_flag());
    let out = filtervm(&all, b"");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.is_empty() || out.status.code() != Some(0),
        "{stderr}"
    );
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &stderr,
    )
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn example_prints_a_judged_message_or_says_none_exists() {
    let policy = r#"{"store": ["example_corp"], "price": [{"numeric": [">", 10, "<=", 20]}]}"#;
    let (code, out) = run(&["example", "-d", "sns", "-f", policy, "--json"]);
    assert_eq!(code, 0, "{out}");
    let v = json(&out);
    assert_eq!(v["found"], true);
    assert_eq!(v["message"]["attributes"]["store"]["Value"], "example_corp");
    if reference_flag().is_empty() {
        assert_eq!(v["verified_by"], serde_json::json!(["vm", "reference"]));
    }
    // The message printed is one `filtervm match` matches.
    let (code, text) = run(&["example", "-d", "sns", "-f", policy]);
    assert_eq!(code, 0);
    let m = filtervm(
        &["match", "-d", "sns", "-f", policy],
        json(&text).to_string().as_bytes(),
    );
    assert_eq!(m.status.code(), Some(0), "{text}");
    let (code, text) = run(&["example", "-d", "sns", "-f", policy, "--not"]);
    assert_eq!(code, 0);
    let m = filtervm(
        &["match", "-d", "sns", "-f", policy],
        json(&text).to_string().as_bytes(),
    );
    assert_eq!(m.status.code(), Some(1), "{text}");

    let never = r#"{"advancedFilters": [
        {"operatorType": "NumberGreaterThan", "key": "data.n", "value": 10},
        {"operatorType": "NumberLessThan", "key": "data.n", "value": 5}]}"#;
    let (code, out) = run(&["example", "-d", "eventgrid", "-f", never]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no message matches this policy (proved"),
        "{out}"
    );
    let (code, out) = run(&["example", "-d", "sns", "-f", "{}", "--not", "--json"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(json(&out)["exact"], true);
    // A wildcard: bounded, and said so.
    let (code, out) = run(&[
        "example",
        "-d",
        "stream",
        "-f",
        "a = x* and a != x*",
        "--json",
    ]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(json(&out)["exact"], false);
}

#[test]
fn diff_exit_status_witnesses_and_keys() {
    let p1 = r#"{"store": ["a"], "amount": [{"numeric": [">=", 150]}]}"#;
    let p2 = r#"{"store": ["a", "b"], "amount": [{"numeric": [">=", 100]}]}"#;
    let (code, out) = run(&["diff", "-d", "sns", "-f", p1, "-F", p2, "--json"]);
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    assert_eq!(v["verdict"], "different");
    assert!(v["first_only"].is_null());
    let amount: f64 = v["second_only"]["attributes"]["amount"]["Value"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((100.0..150.0).contains(&amount), "{amount}");
    assert!(
        v["keys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["key"] == "amount")
    );

    let (code, out) = run(&["diff", "-d", "sns", "-f", p1, "-F", p1]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("same:"), "{out}");

    // Across dialects of one model: stream and expr read headers.
    let (code, out) = run(&[
        "diff",
        "-d",
        "stream",
        "-f",
        "a in [x, y]",
        "-D",
        "expr",
        "-F",
        r#"{"op": "OR", "exp": [{"key": "a", "op": "in", "value": ["x"]}, {"key": "a", "op": "in", "value": ["y"]}]}"#,
    ]);
    assert_eq!(code, 0, "{out}");

    let (code, out) = run(&["diff", "-d", "stream", "-f", "a = x*", "-F", "a = x*"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.starts_with("unknown:"), "{out}");

    let (code, out) = run(&[
        "diff", "-d", "sns", "-f", "{}", "-D", "stream", "-F", "a = x",
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("ANALYSIS_MODEL_MISMATCH"), "{out}");
}

#[test]
fn audit_reads_a_subscriptions_file() {
    let dir = std::env::temp_dir().join(format!("filtervm-audit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("subs.ndjson");
    std::fs::write(
        &path,
        concat!(
            r#"{"id": "a", "dialect": "sns", "policy": {"store": ["x", "y"]}}"#, "\n",
            r#"{"id": "b", "dialect": "sns", "policy": {"store": ["y", "x"]}}"#, "\n",
            r#"{"id": "never", "dialect": "eventgrid", "policy": {"advancedFilters": [{"operatorType": "NumberGreaterThan", "key": "data.n", "value": 10}, {"operatorType": "NumberLessThan", "key": "data.n", "value": 5}]}}"#, "\n",
            r#"{"id": 7, "dialect": "sns", "policy": {}}"#, "\n",
            r#"{"id": "c", "dialect": "basaltic", "policy": {"store": ["x", "y"]}}"#, "\n",
        ),
    )
    .unwrap();
    let out = filtervm(&["audit", path.to_str().unwrap(), "--json"], b"");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(v["subscriptions"], 5);
    assert_eq!(v["never"][0]["id"], "\"never\"");
    assert_eq!(v["never"][0]["exact"], true);
    assert_eq!(v["always"][0]["id"], "7");
    // basaltic reads a Number attribute's text (B-4), so c is not equivalent to a and b.
    assert_eq!(
        v["equivalent"],
        serde_json::json!([{"ids": ["\"a\"", "\"b\""], "matching": {"attributes": {"store": {"Type": "String", "Value": "x"}}}}])
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn translate_prints_a_proved_policy_or_names_what_cannot_be_said() {
    let expr = r#"{"op": "AND", "exp": [{"key": "a", "op": "in", "value": ["x", "y"]}, {"op": "NOT", "exp": [{"key": "b", "op": "exists"}]}]}"#;
    let (code, out) = run_plain(&["translate", "-d", "expr", "-f", expr, "--to", "stream"]);
    assert_eq!(code, 0, "{out}");
    let stream = json(&out);
    assert_eq!(stream["groups"][0][1]["op"], "missing");
    // The printed policy is the same filter: diff proves it.
    let (code, out) = run(&[
        "diff",
        "-d",
        "expr",
        "-f",
        expr,
        "-D",
        "stream",
        "-F",
        &stream.to_string(),
    ]);
    assert_eq!(code, 0, "{out}");

    let (code, out) = run_plain(&[
        "translate",
        "-d",
        "stream",
        "-f",
        "region = eu-*",
        "--to",
        "expr",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("TRANSLATE_INEXPRESSIBLE at /groups/0/0"),
        "{out}"
    );
    let (code, out) = run_plain(&[
        "translate",
        "-d",
        "sns",
        "-f",
        r#"{"a": ["x"]}"#,
        "--to",
        "basaltic",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    assert_eq!(v["error"]["code"], "TRANSLATE_NOT_EQUIVALENT");
    assert_eq!(v["error"]["witness"]["attributes"]["a"]["Type"], "Number");
}

/// `--assume`: an sns body policy and the same EventBridge pattern differ on some document (a
/// member named twice), are the same on canonical documents without arrays — said in the text
/// and named in the JSON — and an unknown assumption is a usage error. `translate` between the
/// two proves under the assumption and prints it.
#[test]
fn assumptions_decide_documents_across_dialects_and_are_printed() {
    let policy = r#"{"source": ["aws.s3"], "detail": {"size": [{"numeric": [">", 0]}]}}"#;
    let diff = |extra: &[&str]| {
        let mut args = vec![
            "diff",
            "-d",
            "sns",
            "--options",
            r#"{"scope": "MessageBody"}"#,
            "-f",
            policy,
            "-D",
            "eventbridge",
            "-F",
            policy,
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let (code, out) = diff(&["--json"]);
    assert_eq!(code, 1, "{out}");
    assert!(json(&out).get("assuming").is_none(), "{out}");
    let (code, out) = diff(&["--assume", "canonical-documents,no-arrays", "--json"]);
    assert_eq!(code, 0, "{out}");
    let v = json(&out);
    assert_eq!(v["verdict"], "same");
    assert_eq!(
        v["assuming"],
        serde_json::json!(["canonical-documents", "no-arrays"])
    );
    let (code, out) = diff(&["--assume", "canonical-documents", "--assume", "no-arrays"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("same:")
            && out.contains("assuming canonical-documents (no member named twice"),
        "{out}"
    );
    // canonical-documents alone: arrays of objects are not searched across dialects.
    let (code, out) = diff(&["--assume", "canonical-documents"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("assume no-arrays"), "{out}");
    let (code, out) = diff(&["--assume", "tidy"]);
    assert_eq!(code, 64, "{out}");
    assert!(out.contains("unknown assumption `tidy`"), "{out}");

    let translate = |assume: &str| {
        run_plain(&[
            "translate",
            "-d",
            "sns",
            "--options",
            r#"{"scope": "MessageBody"}"#,
            "-f",
            policy,
            "--to",
            "eventbridge",
            "--assume",
            assume,
            "--json",
        ])
    };
    let (code, out) = translate("canonical-documents,no-arrays");
    assert_eq!(code, 0, "{out}");
    let v = json(&out);
    assert_eq!(v["policy"], json(policy));
    assert_eq!(
        v["assuming"],
        serde_json::json!(["canonical-documents", "no-arrays"])
    );
    let (code, out) = translate("none");
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    assert_eq!(v["error"]["code"], "TRANSLATE_NOT_EQUIVALENT");
    assert!(v["error"].get("assuming").is_none(), "{out}");
}

/// `translate --to eventgrid`: an EventBridge numeric and boolean pattern becomes an Event Grid
/// filter, proved under the assumptions and printed (diff agrees); a case-sensitive string with
/// a letter is refused with its pointer and why (EG-31); the CloudEvents schema is chosen with
/// `--to-options`.
#[test]
fn eventbridge_numbers_and_booleans_translate_into_an_event_grid_filter() {
    let pattern = r#"{"data": {"amount": [{"numeric": [">", 0, "<=", 5000]}], "partial": [false], "tier": [1, 2]}}"#;
    let translate = |policy: &str, extra: &[&str]| {
        let mut args = vec![
            "translate",
            "-d",
            "eventbridge",
            "-f",
            policy,
            "--to",
            "eventgrid",
            "--assume",
            "canonical-documents,no-arrays",
            "--json",
        ];
        args.extend_from_slice(extra);
        run_plain(&args)
    };
    let (code, out) = translate(pattern, &[]);
    assert_eq!(code, 0, "{out}");
    let v = json(&out);
    let filters = &v["policy"]["advancedFilters"];
    assert_eq!(
        filters,
        &serde_json::json!([
            {"operatorType": "NumberGreaterThan", "key": "data.amount", "value": 0},
            {"operatorType": "NumberLessThanOrEquals", "key": "data.amount", "value": 5000},
            {"operatorType": "BoolEquals", "key": "data.partial", "value": false},
            {"operatorType": "NumberIn", "key": "data.tier", "values": [1, 2]}
        ]),
        "{out}"
    );
    let (code, out) = run(&[
        "diff",
        "-d",
        "eventbridge",
        "-f",
        pattern,
        "-D",
        "eventgrid",
        "-F",
        &v["policy"].to_string(),
        "--assume",
        "canonical-documents,no-arrays",
    ]);
    assert_eq!(code, 0, "{out}");

    let (code, out) = translate(r#"{"data": {"status": ["Refunded"]}}"#, &[]);
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    assert_eq!(v["error"]["code"], "TRANSLATE_INEXPRESSIBLE");
    assert_eq!(v["error"]["pointer"], "/data/status/0");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("EG-31") && m.contains("REFUNDED")),
        "{out}"
    );
    let cloud = ["--to-options", r#"{"schema": "CloudEventSchemaV1_0"}"#];
    let (code, out) = translate(r#"{"tenant": [7]}"#, &cloud);
    assert_eq!(code, 0, "{out}");
    assert_eq!(json(&out)["policy"]["advancedFilters"][0]["key"], "tenant");
    let (code, out) = translate(r#"{"tenant": [7]}"#, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("EG-19"), "{out}");
}

/// Runs a command that takes no `--no-reference`.
fn run_plain(args: &[&str]) -> (i32, String) {
    let out = filtervm(args, b"");
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The README's `filtervm translate` examples (the Event Grid → EventBridge refusal with its
/// closest pattern and witness, the sns body → EventBridge translation, EventBridge → Event Grid,
/// stream ↔ expr, sns → basaltic) print exactly what the README shows, run from the repository's root as written.
#[test]
fn the_readme_translate_examples_print_what_it_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    let mut checked = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(command) = line.strip_prefix("$ filtervm translate ") else {
            continue;
        };
        let shown: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("$ ") && !l.starts_with("```"))
            .copied()
            .collect();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("'{BIN}' translate {command} 2>&1"))
            .current_dir(root)
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            printed.trim_end(),
            shown.join("\n"),
            "README: $ filtervm translate {command}"
        );
        checked += 1;
    }
    // stream → expr, expr → stream, sns → basaltic, eventgrid → eventbridge (proved under
    // canonical-documents and no-arrays; refused on canonical documents with arrays; the blob
    // filter refused), sns → eventbridge, eventbridge → eventgrid (proved; a case-sensitive
    // string refused).
    assert!(
        checked >= 9,
        "{checked} translate examples found in the README"
    );
}

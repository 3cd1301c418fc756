//! The operator's side of the tool through the binary: grep-like `match` (`--count`, `--invert`,
//! exit status), `--json` shapes of `check`, `compile` and `match`, the policy on stdin, usage
//! errors kept apart (64), diagnostics with the source underlined, progress and summary only on
//! a terminal, completions and the manual page.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
use common::{BIN, ROOT, filtervm};

use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const POLICY: &[&str] = &["match", "-d", "stream", "-f", "region = eu-*"];
const EU: &str = "{\"headers\": {\"region\": \"eu-west\"}}\n";
const US: &str = "{\"headers\": {\"region\": \"us-east\"}}\n";
const BAD: &str = "{not json\n";

fn run_match(extra: &[&str], input: &str) -> Output {
    let mut args = POLICY.to_vec();
    args.extend_from_slice(extra);
    filtervm(&args, input.as_bytes())
}

#[test]
fn match_counts_inverts_and_exits_like_grep() {
    let input = format!("{EU}{US}\n{EU}");
    let out = run_match(&["--count"], &input);
    assert_eq!((stdout(&out).as_str(), out.status.code()), ("2\n", Some(0)));
    let out = run_match(&["-c", "-v"], &input);
    assert_eq!((stdout(&out).as_str(), out.status.code()), ("1\n", Some(0)));
    let out = run_match(&["--invert"], &input);
    assert_eq!(stdout(&out), "no-match\nmatch\nno-match\n");
    let out = run_match(&["--only-matching", "--invert"], &input);
    assert_eq!(stdout(&out), US);
    // Nothing selected: exit 1, like grep, in every output mode.
    for extra in [&[][..], &["-c"], &["-o"], &["--json"]] {
        let out = run_match(extra, US);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        assert!(out.stderr.is_empty(), "{extra:?}: {}", stderr(&out));
    }
    assert_eq!(stdout(&run_match(&["-c"], US)), "0\n");
    // A bad line: still counted and reported, exit 2 even though something matched.
    let input = format!("{EU}{BAD}{US}");
    let out = run_match(&["--count", "--json"], &input);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v, json!({"lines": 3, "matched": 1, "errors": 1}));
    assert!(stderr(&out).contains("<stdin>:2: "), "{}", stderr(&out));
    // An invalid policy given to match is an error (2), not "nothing matched" (1).
    let out = filtervm(&["match", "-d", "stream", "-f", "region =="], EU.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    // --count and --only-matching do not go together: a usage error.
    let out = run_match(&["-c", "-o"], EU);
    assert_eq!(out.status.code(), Some(64));
}

#[test]
fn match_json_shape() {
    let out = run_match(&["--json"], &format!("{EU}\n{BAD}{US}"));
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0], json!({"line": 1, "match": true}));
    assert_eq!(lines[1]["line"], 3);
    assert_eq!(lines[1]["error"]["code"], "MESSAGE_NOT_JSON");
    assert!(
        lines[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("JSON")
    );
    assert_eq!(lines[2], json!({"line": 4, "match": false}));
    assert_eq!(lines.len(), 3);
}

#[test]
fn check_and_compile_json_shapes() {
    let policy = "examples/basaltic/policy.json";
    let out = filtervm(&["check", "--json", "-d", "basaltic", "-p", policy], b"");
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v, json!({"valid": true, "errors": []}));

    let invalid = "examples/basaltic/invalid-policy.json";
    let out = filtervm(&["check", "--json", "-d", "basaltic", "-p", invalid], b"");
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["valid"], false);
    let first = &v["errors"][0];
    assert_eq!(first["code"], "NOTIFICATION_INVALID_FILTER_POLICY");
    assert_eq!(first["pointer"], "/event");
    assert_eq!(first["source"], invalid);
    assert_eq!(
        first["span"],
        json!({"start": 10, "end": 12, "line": 1, "column": 11})
    );
    let text = std::fs::read_to_string(format!("{ROOT}/{invalid}")).unwrap();
    assert_eq!(&text[10..12], "[]");
    // Invalid compile --json: the same shape as check.
    let out = filtervm(&["compile", "--json", "-d", "basaltic", "-p", invalid], b"");
    assert_eq!(out.status.code(), Some(1));
    let c: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(c, v);

    let out = filtervm(&["compile", "--json", "-d", "basaltic", "-p", policy], b"");
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["dialect"], "basaltic");
    assert_eq!(v["options"], json!({}));
    assert!(v["ir_lowered"].as_str().unwrap().contains("and"));
    assert!(v["ir_optimized"].is_string());
    let instructions = v["instructions"].as_u64().unwrap();
    assert!(instructions > 0);
    assert!(v["disassembly"].as_str().unwrap().lines().count() as u64 >= instructions);
    assert!(v["program_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn the_policy_may_come_from_stdin() {
    let policy = std::fs::read(format!("{ROOT}/examples/basaltic/policy.json")).unwrap();
    let out = filtervm(&["check", "-d", "basaltic", "-p", "-"], &policy);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "<stdin>: ok\n");
    let out = filtervm(
        &[
            "match",
            "-d",
            "basaltic",
            "-p",
            "-",
            "examples/basaltic/messages.ndjson",
        ],
        &policy,
    );
    assert_eq!(out.status.code(), Some(0));
    let plain = filtervm(
        &[
            "match",
            "-d",
            "basaltic",
            "-p",
            "examples/basaltic/policy.json",
            "examples/basaltic/messages.ndjson",
        ],
        b"",
    );
    assert_eq!(out.stdout, plain.stdout);
    // Then the messages cannot come from stdin too: a usage error, with a reason.
    for messages in [&[][..], &["-"]] {
        let mut args = vec!["match", "-d", "basaltic", "-p", "-"];
        args.extend_from_slice(messages);
        let out = filtervm(&args, &policy);
        assert_eq!(out.status.code(), Some(64), "{messages:?}");
        assert!(
            stderr(&out).contains("must come from a file"),
            "{}",
            stderr(&out)
        );
    }
    let out = filtervm(
        &["explain", "-d", "basaltic", "-p", "-", "-m", "-"],
        &policy,
    );
    assert_eq!(out.status.code(), Some(64));
}

#[test]
fn usage_errors_are_kept_apart_and_documented() {
    let out = filtervm(&["match", "--no-such-flag"], b"");
    assert_eq!(out.status.code(), Some(64));
    assert!(
        stderr(&out).contains("unexpected argument"),
        "{}",
        stderr(&out)
    );
    let out = filtervm(&["check", "-f", "{}"], b"");
    assert_eq!(out.status.code(), Some(64));
    assert!(stderr(&out).contains("--dialect"));
    let out = filtervm(&["check", "-d", "sns", "--options", "[", "-f", "{}"], b"");
    assert_eq!(out.status.code(), Some(64));
    // A policy file that cannot be read is an error (2), not a usage error.
    let out = filtervm(&["check", "-d", "sns", "-p", "/nonexistent.json"], b"");
    assert_eq!(out.status.code(), Some(2));
    // --help says what the tool is for in its first line, and lists the exit codes.
    let out = filtervm(&["--help"], b"");
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    let first = help.lines().next().unwrap();
    assert!(
        first.contains("which subscriptions receive each message"),
        "{first}"
    );
    for code in ["  0 ", "  1 ", "  2 ", "  64 "] {
        assert!(help.contains(code), "{code}: {help}");
    }
    let out = filtervm(&["match", "--help"], b"");
    assert!(stdout(&out).contains("64  usage errors"));
    // The analysis commands' statuses are listed too: each status row names every command
    // that ends with it.
    for (command, statuses) in [
        ("example", ["0", "1", "2"].as_slice()),
        ("diff", &["0", "1", "2"]),
        ("audit", &["0", "1"]),
        ("translate", &["0", "1"]),
    ] {
        let out = filtervm(&[command, "--help"], b"");
        assert_eq!(out.status.code(), Some(0));
        let help = stdout(&out);
        let table = &help[help.find("Exit status:").unwrap()..];
        // Rows start with two spaces and the status; their continuation lines are indented more.
        let mut rows: Vec<(String, String)> = Vec::new();
        for line in table.lines().skip(1) {
            let status = line.trim_start().split(' ').next().unwrap_or("");
            if line.starts_with("  ") && !line.starts_with("   ") {
                rows.push((status.to_owned(), line.to_owned()));
            } else if let Some(last) = rows.last_mut() {
                last.1.push_str(line);
            }
        }
        for status in statuses {
            let row = rows.iter().find(|(s, _)| s == status).unwrap();
            assert!(
                row.1.contains(&format!("{command}:")),
                "{command} --help: status {status} does not name {command}: {}",
                row.1
            );
        }
    }
}

#[test]
fn diagnostics_underline_the_source_without_color_off_a_terminal() {
    // The stream text form: a caret under the offending token.
    let out = filtervm(
        &["check", "-d", "stream", "-f", "region = eu-* and == 5"],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("error[STREAM_SYNTAX_ERROR]"), "{text}");
    assert!(text.contains("--> --filter:1:19"), "{text}");
    assert!(text.contains("1 | region = eu-* and == 5"), "{text}");
    assert!(text.contains("  |                   ^"), "{text}");
    assert!(!text.contains('\x1b'), "no color off a terminal: {text}");
    // A JSON policy: the value its pointer names, underlined, in compile and match (stderr).
    for command in ["compile", "match"] {
        let out = filtervm(
            &[
                command,
                "-d",
                "sns",
                "-f",
                "{\"price\": [{\"numeric\": [\">\", \"5\"]}]}",
            ],
            b"",
        );
        let text = stderr(&out);
        assert!(text.contains("error[SNS_"), "{command}: {text}");
        assert!(text.contains("--> --filter:1:"), "{command}: {text}");
        assert!(
            text.contains("^ /price/0/numeric") || text.contains("^^^ /price/0/numeric"),
            "{command}: {text}"
        );
        assert!(!text.contains('\x1b'), "{command}: {text}");
    }
    // Options errors point into --options.
    let out = filtervm(
        &[
            "check",
            "-d",
            "sns",
            "--options",
            "{\"scpe\": 1}",
            "-f",
            "{}",
        ],
        b"",
    );
    let text = stdout(&out);
    assert!(text.contains("--> --options:1:10"), "{text}");
    assert!(text.contains("^ /scpe"), "{text}");
}

#[test]
fn completions_and_the_manual_page_come_from_the_clap_definitions() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef filtervm"),
        ("fish", "complete -c filtervm"),
    ] {
        let out = filtervm(&["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script:.300}");
        for word in ["route", "by-subscription", "count", "invert"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    let out = filtervm(&["completions", "powershell"], b"");
    assert_eq!(out.status.code(), Some(64));
    let out = filtervm(&["man"], b"");
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(
        page.starts_with(".ie") || page.contains(".TH filtervm"),
        "{page:.300}"
    );
    for word in [
        "filtervm route",
        "\\-\\-by\\-subscription",
        "Exit status",
        "which subscriptions receive each message",
    ] {
        assert!(page.contains(word), "the page lacks {word}");
    }
}

/// A run on pipes prints no progress and no summary; under a pseudo-terminal (`script` from
/// util-linux, skipped when it is not installed, a failure when `CI` is set) the summary appears, and the progress bar too
/// when standard output goes to a file.
#[test]
fn progress_and_summary_only_on_a_terminal() {
    let out = filtervm(
        &[
            "match",
            "-d",
            "basaltic",
            "-p",
            "examples/basaltic/policy.json",
            "examples/basaltic/messages.ndjson",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let out = filtervm(
        &[
            "route",
            "-s",
            "examples/route/subscriptions.ndjson",
            "examples/route/messages.ndjson",
        ],
        b"",
    );
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` (util-linux) is not installed, and CI must run every check"
        );
        eprintln!("skipped: `script` (util-linux) is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("filtervm-pty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = dir.join("out.txt");
    let command = format!(
        "{BIN} match -d basaltic -p examples/basaltic/policy.json examples/basaltic/messages.ndjson > {}",
        output.display()
    );
    let pty = Command::new("script")
        .current_dir(ROOT)
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&pty.stdout);
    assert!(
        screen.contains("filtervm match: 6 lines, 2 matched, 0 errors,"),
        "{screen}"
    );
    assert!(screen.contains("msg/s"), "the bar: {screen}");
    // The output itself is unchanged.
    let verdicts = std::fs::read_to_string(&output).unwrap();
    assert_eq!(verdicts.lines().count(), 6, "{verdicts}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lint_warns_on_nats_and_dot_crossing_habits_in_stream_patterns() {
    let out = filtervm(
        &[
            "lint",
            "-d",
            "stream",
            "-f",
            "subject = \"orders.>\" or subject = orders.*",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("NATS_WILDCARD /groups/0/0/values/0"),
        "{text}"
    );
    assert!(
        text.contains("STAR_WITHIN_SEGMENT /groups/1/0/values/0"),
        "{text}"
    );
    let out = filtervm(
        &[
            "lint",
            "--deny-warnings",
            "-d",
            "stream",
            "-f",
            "subject = orders.*.created",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

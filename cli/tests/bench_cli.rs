//! `filtervm bench`: its output lines, and its loud failures. It runs the reference interpreter
//! out of process (`filtervm-conformance --reference`), which `cargo test --workspace` builds
//! next to `filtervm`; the checks that need it are skipped (with a note) when that binary is
//! absent — and fail instead when `CI` is set, where nothing may be skipped — and a copy of
//! `filtervm` in a folder of its own runs without it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_filtervm");

fn reference() -> Option<PathBuf> {
    let path = Path::new(BIN).with_file_name(format!(
        "filtervm-conformance{}",
        std::env::consts::EXE_SUFFIX
    ));
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "filtervm-conformance is not built next to filtervm, and CI must run every check"
    );
    eprintln!("skipped: filtervm-conformance is not built next to filtervm");
    None
}

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("filtervm-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn bench_prints_every_figure_and_the_three_engines_agree() {
    let Some(reference) = reference() else {
        return;
    };
    let policies = write(
        "policies.ndjson",
        "{\"event\": [\"order.paid\"], \"amount\": [{\"numeric\": [\">\", 100]}]}\n\n{\"event\": [{\"prefix\": \"order.\"}]}\n",
    );
    let messages = write(
        "messages.ndjson",
        "{\"event\": \"order.paid\", \"amount\": 150}\n{\"event\": \"user.login\"}\n{\"event\": \"order.created\", \"amount\": \"150\"}\n",
    );
    let out = Command::new(BIN)
        .env("FILTERVM_REFERENCE", &reference)
        .args([
            "bench",
            "--dialect",
            "sns",
            "--seconds",
            "0.05",
            "--policies",
        ])
        .arg(&policies)
        .arg("--messages")
        .arg(&messages)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in [
        "policies",
        "messages",
        "compile_ns_per_policy",
        "bind_ns_per_message",
        "set_ns_per_message",
        "one_by_one_ns_per_message",
        "reference_ns_per_message",
        "matches_per_message",
        "bytes_per_policy",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{name}: "))),
            "{name} missing in {stdout}"
        );
    }
    assert!(stdout.contains("policies: 2\n"));
    assert!(stdout.contains("messages: 3\n"));
    // Message 1 matches both, 2 none, 3 the prefix one (a String "150" is not a number, rule 10).
    assert!(stdout.contains("matches_per_message: 1.000\n"), "{stdout}");
}

#[test]
fn bench_fails_loudly_on_an_invalid_policy_or_a_missing_reference() {
    let policies = write("bad.ndjson", "{\"event\": []}\n");
    let messages = write("m.ndjson", "{\"event\": \"x\"}\n");
    let out = Command::new(BIN)
        .env("FILTERVM_REFERENCE", BIN)
        .args(["bench", "--dialect", "sns", "--policies"])
        .arg(&policies)
        .arg("--messages")
        .arg(&messages)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.ndjson:1"));
    // A reference named explicitly must be there: a usage error (64) otherwise.
    let out = Command::new(BIN)
        .env("FILTERVM_REFERENCE", "/nonexistent/filtervm-conformance")
        .args(["bench", "--dialect", "sns", "--policies"])
        .arg(&policies)
        .arg("--messages")
        .arg(&messages)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("FILTERVM_REFERENCE"));
}

/// Without the reference interpreter beside it (a copy of `filtervm` alone in a folder), bench
/// still runs: a note on stderr, `reference_ns_per_message: n/a`, and the set still checked
/// against one-by-one evaluation. Nothing but the note reaches stderr when it is not a terminal
/// (no progress, no summary).
#[test]
fn bench_runs_without_the_reference_interpreter() {
    let dir = std::env::temp_dir().join(format!("filtervm-bench-alone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let alone = dir.join("filtervm");
    std::fs::copy(BIN, &alone).unwrap();
    let policies = write("alone-p.ndjson", "{\"event\": [\"order.paid\"]}\n");
    let messages = write(
        "alone-m.ndjson",
        "{\"event\": \"order.paid\"}\n{\"event\": \"user.login\"}\n",
    );
    let run = |extra: &[&str]| {
        // The copy was just written: a child another test thread forked meanwhile may still
        // hold it open for writing until it execs, and running it then fails with "text file
        // busy" (ETXTBSY, 26). Such a run is tried again.
        for _ in 0..100 {
            match Command::new(&alone)
                .env_remove("FILTERVM_REFERENCE")
                .args([
                    "bench",
                    "--dialect",
                    "sns",
                    "--seconds",
                    "0.05",
                    "--policies",
                ])
                .arg(&policies)
                .arg("--messages")
                .arg(&messages)
                .args(extra)
                .output()
            {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other.unwrap(),
            }
        }
        panic!("the copied binary stayed busy");
    };
    let out = run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("reference_ns_per_message: n/a\n"),
        "{stdout}"
    );
    assert!(stdout.contains("reference_messages: 0\n"), "{stdout}");
    assert!(stdout.contains("matches_per_message: 0.500\n"), "{stdout}");
    assert!(
        stderr.contains("note: the reference interpreter is not built"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // --no-reference leaves it out silently, even when it is built.
    let out = Command::new(BIN)
        .args([
            "bench",
            "-d",
            "sns",
            "--seconds",
            "0.05",
            "--no-reference",
            "--policies",
        ])
        .arg(&policies)
        .arg("--messages")
        .arg(&messages)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("reference_ns_per_message: n/a"));
    // The budget must be a positive number of seconds.
    let out = run(&["--seconds", "0"]);
    assert_eq!(out.status.code(), Some(64));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--seconds` has a default (documented in `--help`), so a run without it is bounded.
#[test]
fn bench_help_documents_the_default_budget() {
    let out = Command::new(BIN)
        .args(["bench", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("[default: 10]"), "{help}");
    assert!(help.contains("--no-reference"), "{help}");
}

/// Runs `filtervm bench` on sns policies and flat attribute messages (written to files named
/// after `name`) with `reference` as the reference interpreter.
fn bench(name: &str, reference: &Path, policies: &str, messages: &str) -> std::process::Output {
    let policies = write(&format!("{name}-policies.ndjson"), policies);
    let messages = write(&format!("{name}-messages.ndjson"), messages);
    Command::new(BIN)
        .env("FILTERVM_REFERENCE", reference)
        .args([
            "bench",
            "--dialect",
            "sns",
            "--seconds",
            "0.05",
            "--policies",
        ])
        .arg(&policies)
        .arg("--messages")
        .arg(&messages)
        .output()
        .unwrap()
}

#[test]
fn bench_agrees_on_a_test_inside_an_or_branch() {
    let Some(reference) = reference() else {
        return;
    };
    // `x` is inside the `$or`; the message matches through `w`.
    let out = bench(
        "or-branch",
        &reference,
        "{\"t\": [\"1\"], \"$or\": [{\"w\": [\"0\"]}, {\"x\": [\"1\"], \"z\": [\"0\"]}]}\n",
        "{\"t\": \"1\", \"w\": \"0\"}\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("matches_per_message: 1.000\n"), "{stdout}");
}

/// Any disagreement between the three paths is an error: here a stand-in reference interpreter
/// claims that the first policy matches every message.
#[cfg(unix)]
#[test]
fn bench_exits_non_zero_on_a_disagreement() {
    use std::os::unix::fs::PermissionsExt;
    let liar = write(
        "liar-reference.sh",
        "#!/bin/sh\nwhile read -r line; do echo 0; done\necho '# ns_per_message: 1'\n",
    );
    std::fs::set_permissions(&liar, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = bench(
        "liar",
        &liar,
        "{\"event\": [\"order.paid\"]}\n",
        "{\"event\": \"order.paid\"}\n{\"event\": \"user.login\"}\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("DISAGREEMENT on message 2") && stderr.contains("1 disagreements"),
        "{stderr}"
    );
}

/// `--from-bytes` times the lines as `filtervm match` reads them: body-scope lines (a plain body
/// and an SNS notification whose `Message` is the body) give a figure; flat attribute lines,
/// which `match` reads as a body, fail with the reason instead of a figure for other work.
#[test]
fn bench_from_bytes_reads_lines_as_match_does() {
    let policies = write("fb-policies.ndjson", "{\"event\": [\"order.paid\"]}\n");
    let body = write(
        "fb-body.ndjson",
        concat!(
            "{\"event\": \"order.paid\"}\n",
            "{\"event\": \"user.login\"}\n",
            "{\"Type\": \"Notification\", \"Message\": \"{\\\"event\\\": \\\"order.paid\\\"}\"}\n",
        ),
    );
    let run = |options: &str| {
        Command::new(BIN)
            .args([
                "bench",
                "--dialect",
                "sns",
                "--seconds",
                "0.05",
                "--no-reference",
                "--from-bytes",
                "--options",
                options,
                "--policies",
            ])
            .arg(&policies)
            .arg("--messages")
            .arg(&body)
            .output()
            .unwrap()
    };
    let out = run(r#"{"scope":"MessageBody"}"#);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figure = stdout
        .lines()
        .find_map(|l| l.strip_prefix("from_bytes_ns_per_message: "))
        .expect("the figure");
    assert!(figure.parse::<f64>().unwrap() > 0.0, "{stdout}");

    // Attribute scope: `match` reads `{"event": "order.paid"}` as a body, which an attribute
    // filter cannot judge; the bench says so instead of timing errors.
    let out = run("{}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--from-bytes")
            && stderr.contains("message 1")
            && stderr.contains("attributes"),
        "{stderr}"
    );
}

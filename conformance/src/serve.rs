//! `filtervm-conformance --reference`: the reference interpreter as a filter over a message
//! stream, for `filtervm bench`.
//!
//! The `filtervm` binary lives in `filtervm-compiler`, which this crate depends on, so it cannot
//! link the reference interpreter; `filtervm bench` runs it out of process instead — which also
//! keeps the oracle apart from the engine it checks, down to the address space.
//!
//! ```text
//! filtervm-conformance --reference --dialect D --policies FILE [--options JSON] [--seconds S]
//! ```
//!
//! Reads the policies (one per non-blank line: JSON, or for `stream` the text form), then
//! messages in the conformance vector shape, one per line, on standard input. Writes one line per
//! message: the 0-based indices (among the non-blank policy lines) of the policies that match,
//! separated by spaces; then `# messages: K` and `# ns_per_message: N` (the time spent
//! evaluating, not reading). With `--seconds`, it stops after about that long (after at least one
//! message). Progress goes to standard error once a run takes more than a second.

use crate::reference;
use crate::reference::json::{self, Value};
use filtervm_compiler::Dialect;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Args {
    dialect: Dialect,
    policies: String,
    options: Value,
    seconds: Option<f64>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let (mut dialect, mut policies, mut options, mut seconds) = (None, None, None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--dialect" => dialect = Some(value()?.parse::<Dialect>().map_err(|e| e.to_string())?),
            "--policies" => policies = Some(value()?),
            "--options" => {
                options = Some(
                    json::parse(&value()?).map_err(|e| format!("--options is not JSON: {e}"))?,
                );
            }
            "--seconds" => {
                seconds = Some(
                    value()?
                        .parse::<f64>()
                        .map_err(|e| format!("--seconds: {e}"))?,
                );
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        dialect: dialect.ok_or("--dialect is required")?,
        policies: policies.ok_or("--policies is required")?,
        options: options.unwrap_or(Value::Null),
        seconds,
    })
}

/// The policy of one line, as the reference reads policy text ([`reference::read_policy_text`]:
/// JSON; else, for `stream`, the text form), checked by the reference's own validation.
pub fn policy_of_line(dialect: Dialect, options: &Value, line: &str) -> Result<Value, String> {
    let policy = reference::read_policy_text(dialect, line).map_err(|e| e.to_string())?;
    reference::validate(dialect, options, &policy).map_err(|e| format!("invalid: {e}"))?;
    Ok(policy)
}

/// Runs the mode (`args` without the leading `--reference`).
pub fn main(args: &[String]) -> ExitCode {
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("filtervm-conformance --reference: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let args = parse(args)?;
    let text = std::fs::read_to_string(&args.policies)
        .map_err(|e| format!("{}: cannot read: {e}", args.policies))?;
    let policies: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            policy_of_line(args.dialect, &args.options, l)
                .map_err(|e| format!("{}: policy {}: {e}", args.policies, i + 1))
        })
        .collect::<Result<_, _>>()?;
    let budget = args.seconds.map(Duration::from_secs_f64);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut spent, mut messages) = (Duration::ZERO, 0usize);
    let started = Instant::now();
    let mut last_progress = Instant::now();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("reading messages: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        // As the vectors are read (`reference::evaluate_text`): an EventBridge event keeps every
        // occurrence of a repeated member name (EB-3).
        let message: Value = match args.dialect {
            Dialect::EventBridge => reference::eventbridge::read(&line),
            _ => reference::read_message(&line),
        }
        .map_err(|e| format!("message {}: {e}", messages + 1))?;
        let t = Instant::now();
        let mut hits = Vec::new();
        for (i, p) in policies.iter().enumerate() {
            if reference::evaluate_valid(args.dialect, &args.options, p, &message)
                .map_err(|e| format!("message {}, policy {}: {e}", messages + 1, i + 1))?
            {
                hits.push(i.to_string());
            }
        }
        spent += t.elapsed();
        messages += 1;
        writeln!(out, "{}", hits.join(" ")).map_err(|e| e.to_string())?;
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            eprintln!(
                "filtervm bench: reference: {messages} messages ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
        }
        if budget.is_some_and(|b| spent >= b) {
            break;
        }
    }
    let ns = spent.as_nanos() as f64 / messages.max(1) as f64;
    writeln!(out, "# messages: {messages}").map_err(|e| e.to_string())?;
    writeln!(out, "# ns_per_message: {ns:.0}").map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_and_policy_lines() {
        let a = parse(&[
            "--dialect".into(),
            "sns".into(),
            "--policies".into(),
            "p".into(),
            "--seconds".into(),
            "0.5".into(),
        ])
        .unwrap();
        assert_eq!(a.dialect, Dialect::Sns);
        assert_eq!(a.seconds, Some(0.5));
        assert!(parse(&["--dialect".into()]).is_err());
        assert!(
            policy_of_line(Dialect::Stream, &Value::Null, "a = b")
                .unwrap()
                .is_string()
        );
        assert!(policy_of_line(Dialect::Sns, &Value::Null, "a = b").is_err());
        let invalid = policy_of_line(Dialect::Stream, &Value::Null, "a = **x").unwrap_err();
        assert!(invalid.contains("STREAM_INVALID_PATTERN"), "{invalid}");
    }
}

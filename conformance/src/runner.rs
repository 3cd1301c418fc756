//! The vector runner: every case runs through BOTH the VM and the reference interpreter, and
//! passes only when both give the expected answer (or, for `invalid`, the compiler rejects it).

use crate::reference;
use filtervm_compiler::{Dialect, Evaluator, compile, message_from_json};
use serde_json::Value;
use std::path::Path;

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseResult {
    /// The case id (or `FILE:LINE` when the line had none).
    pub id: String,
    /// `None` when the case passed; otherwise why it failed.
    pub failure: Option<String>,
}

/// Runs one case given as a JSON object.
pub fn run_case(case: &Value) -> CaseResult {
    let id = case
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("(no id)")
        .to_owned();
    let failure = check_case(case).err();
    CaseResult { id, failure }
}

fn verdict(b: bool) -> &'static str {
    if b { "match" } else { "no-match" }
}

fn check_case(case: &Value) -> Result<(), String> {
    let dialect: Dialect = case
        .get("dialect")
        .and_then(Value::as_str)
        .ok_or("the case has no dialect")?
        .parse()
        .map_err(|e| format!("{e}"))?;
    let options = case.get("options").cloned().unwrap_or(Value::Null);
    let policy = case.get("policy").ok_or("the case has no policy")?;
    let expect = case
        .get("expect")
        .and_then(Value::as_str)
        .ok_or("the case has no expect")?;
    let compiled = compile(dialect, policy, &options);
    match expect {
        "invalid" => match compiled {
            Ok(_) => Err("expected invalid, got a compiled filter".to_owned()),
            Err(e)
                if e.first().map(|f| f.code)
                    == Some(filtervm_compiler::dialect::NOT_IMPLEMENTED) =>
            {
                Err(format!("expected invalid, got: {e}"))
            }
            Err(e) => {
                let Some(word) = case.get("error").and_then(Value::as_str) else {
                    return Ok(());
                };
                let word = word.to_lowercase();
                let found = e.errors.iter().any(|pe| {
                    pe.code.to_lowercase().contains(&word)
                        || pe.message.to_lowercase().contains(&word)
                });
                if found {
                    Ok(())
                } else {
                    Err(format!("expected invalid with `{word}`, got: {e}"))
                }
            }
        },
        "match" | "no-match" => {
            let expected = expect == "match";
            let filter =
                compiled.map_err(|e| format!("expected {expect}, got compile error: {e}"))?;
            let message = case.get("message").ok_or("the case has no message")?;
            let bound = message_from_json(dialect, &options, message)
                .map_err(|e| format!("expected {expect}, got message error: {e}"))?;
            let vm = Evaluator::new().matches(&filter, &bound);
            let reference = reference::evaluate(dialect, &options, policy, message)
                .map_err(|e| format!("expected {expect}, reference failed: {e}"))?;
            match (vm == expected, reference == expected) {
                (true, true) => Ok(()),
                (false, true) => Err(format!(
                    "expected {expect}, got {} from the VM (reference agrees with the vector)",
                    verdict(vm)
                )),
                (true, false) => Err(format!(
                    "expected {expect}, got {} from the reference (VM agrees with the vector)",
                    verdict(reference)
                )),
                (false, false) => Err(format!(
                    "expected {expect}, got {} from both the VM and the reference",
                    verdict(vm)
                )),
            }
        }
        other => Err(format!("unknown expect `{other}`")),
    }
}

/// The results of a vector file, plus lines that could not be read (as failures).
pub fn run_file(path: &Path) -> Result<Vec<CaseResult>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(run_text(&path.display().to_string(), &text))
}

/// Runs every non-blank line of a JSON Lines text.
pub fn run_text(name: &str, text: &str) -> Vec<CaseResult> {
    let mut results = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(case) => results.push(run_case(&case)),
            Err(e) => results.push(CaseResult {
                id: format!("{name}:{}", n + 1),
                failure: Some(format!("unreadable line: {e}")),
            }),
        }
    }
    results
}

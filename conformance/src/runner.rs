//! The vector runner: every case runs through BOTH the VM and the reference interpreter, and
//! passes only when both give the expected answer (or, for `invalid`, the compiler rejects it).
//!
//! A vector's `policy`, `options` and `message` are handed on as the exact JSON text the vector
//! wrote: the product compiles the policy text ([`compile_text`]) and reads the options text
//! ([`Options::from_json`]); the reference interpreter reads all three with its own reader
//! ([`reference::evaluate_text`]). Neither sees numbers or member order through `serde_json`:
//! the product reads the message from its text too ([`read_message_text`]).

use crate::reference;
use crate::reference::json::Value;
use filtervm_compiler::{
    CompileError, Dialect, ErrorCode, Evaluator, Filter, MessageError, Options, SnsScope,
    compile_text, message_from_json, message_from_line,
};
use filtervm_vm::message::Message;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::Path;

// The product's side of a case given as conformance values (generated cases and tests): the
// product reads each value from the JSON text it prints to, so numbers keep their exact text and
// members their order, as when it reads a vector or a policy file.

/// `dialect`'s options from a conformance value (`null` for the defaults).
pub fn options(dialect: Dialect, options: &Value) -> Result<Options, CompileError> {
    Options::from_json(dialect, options.to_string().as_str())
}

/// Compiles a policy given as a conformance value: as the text it prints to ([`compile_text`],
/// what a vector or a policy file gets), or when that text is longer than the 256 KiB text limit,
/// read into a value first ([`filtervm_compiler::compile_value`], which has no size limit, as for
/// any value an embedder builds).
pub fn compile(dialect: Dialect, policy: &Value, options: &Value) -> Result<Filter, CompileError> {
    let options = self::options(dialect, options)?;
    let text = policy.to_string();
    if text.len() <= filtervm_compiler::MAX_POLICY_BYTES {
        return compile_text(dialect, &text, &options);
    }
    let read = filtervm_vm::json::parse(text.as_bytes())
        .map_err(|e| CompileError::one(dialect.invalid_code(), "", format!("not JSON: {e}")))?;
    filtervm_compiler::compile_value(dialect, &read, &options)
}

/// Compiles policy text with options given as a conformance value ([`compile_text`]).
pub fn compile_policy_text(
    dialect: Dialect,
    text: &str,
    options: &Value,
) -> Result<Filter, CompileError> {
    compile_text(dialect, text, &self::options(dialect, options)?)
}

/// A message given as a conformance value, as a `serde_json::Value` (for tests of
/// [`message_from_json`] itself); an error when `serde_json` cannot hold it (a number beyond
/// binary64). A `serde_json::Value` holds numbers as binary64 at best, so the runner reads
/// messages with [`read_message_text`] instead.
pub fn product_message(message: &Value) -> Result<serde_json::Value, MessageError> {
    serde_json::from_str(&message.to_string()).map_err(|e| MessageError {
        code: ErrorCode::InvalidMessage,
        pointer: String::new(),
        message: format!("serde_json cannot hold the message: {e}"),
    })
}

/// Reads a message in the vector shape (`FORMAT.md`) from its text, every number as written:
///
/// - an Event Grid or EventBridge event is the JSON text itself, read as `filtervm match` reads
///   a line ([`message_from_line`]: the event's bytes, read when bound);
/// - an SNS `body` in body scope given as a JSON value rather than a string is that value's
///   text, read the same way (a string `body` is the body text, a `null` one no body);
/// - every other shape holds text only (attribute values and headers are strings), so it is read
///   through `serde_json` by [`message_from_json`].
pub fn read_message_text(
    dialect: Dialect,
    options: &Options,
    text: &str,
) -> Result<Message, MessageError> {
    if matches!(dialect, Dialect::EventGrid | Dialect::EventBridge) {
        return message_from_line(dialect, options, text);
    }
    if dialect == Dialect::Sns && options.sns().scope == SnsScope::MessageBody {
        /// The `body` member as the text the vector wrote (`None` when absent).
        #[derive(Deserialize)]
        struct Shape<'a> {
            #[serde(borrow)]
            body: Option<&'a RawValue>,
        }
        if let Ok(Shape { body: Some(body) }) = serde_json::from_str::<Shape<'_>>(text) {
            let body = body.get();
            if !body.starts_with('"') && body != "null" {
                return message_from_line(dialect, options, body);
            }
        }
    }
    let message: serde_json::Value = serde_json::from_str(text).map_err(|e| MessageError {
        code: ErrorCode::InvalidMessage,
        pointer: String::new(),
        message: format!("not JSON: {e}"),
    })?;
    message_from_json(dialect, options, &message)
}

/// Reads a message given as a conformance value ([`read_message_text`] of its text).
pub fn read_message(
    dialect: Dialect,
    options: &Value,
    message: &Value,
) -> Result<Message, MessageError> {
    let options = self::options(dialect, options).map_err(|e| MessageError {
        code: ErrorCode::InvalidOptions,
        pointer: String::new(),
        message: e.to_string(),
    })?;
    read_message_text(dialect, &options, &message.to_string())
}

/// Whether `message` (a conformance value in the dialect's shape, read by
/// [`read_message_text`] with the filter's options) matches `filter`.
pub fn matches(filter: &Filter, message: &Value) -> Result<bool, MessageError> {
    let message = read_message_text(filter.dialect(), filter.options(), &message.to_string())?;
    Ok(Evaluator::new().matches(filter, &message))
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseResult {
    /// The case id (or `FILE:LINE` when the line had none).
    pub id: String,
    /// `None` when the case passed; otherwise why it failed.
    pub failure: Option<String>,
}

/// One vector line (`FORMAT.md`); the JSON parts stay text.
#[derive(Debug, Deserialize)]
struct Vector<'a> {
    id: Option<String>,
    dialect: Option<String>,
    #[serde(borrow)]
    options: Option<&'a RawValue>,
    #[serde(borrow)]
    policy: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    expect: Option<String>,
    error: Option<String>,
}

/// Runs one case given as a vector line.
pub fn run_line(line: &str) -> Result<CaseResult, String> {
    let case: Vector<'_> =
        serde_json::from_str(line).map_err(|e| format!("unreadable line: {e}"))?;
    let id = case.id.clone().unwrap_or_else(|| "(no id)".to_owned());
    let failure = check_case(&case).err();
    Ok(CaseResult { id, failure })
}

fn verdict(b: bool) -> &'static str {
    if b { "match" } else { "no-match" }
}

fn check_case(case: &Vector<'_>) -> Result<(), String> {
    let dialect: Dialect = case
        .dialect
        .as_deref()
        .ok_or("the case has no dialect")?
        .parse()
        .map_err(|e| format!("{e}"))?;
    let options_text = case.options.map_or("null", RawValue::get);
    let policy_text = case.policy.ok_or("the case has no policy")?.get();
    let expect = case.expect.as_deref().ok_or("the case has no expect")?;
    let compiled = Options::from_json(dialect, options_text)
        .and_then(|options| compile_text(dialect, policy_text, &options).map(|f| (f, options)));
    match expect {
        "invalid" => match compiled {
            Ok(_) => Err("expected invalid, got a compiled filter".to_owned()),
            Err(e) => {
                let Some(word) = &case.error else {
                    return Ok(());
                };
                let word = word.to_lowercase();
                let found = e.errors.iter().any(|pe| {
                    pe.code.as_str().to_lowercase().contains(&word)
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
            let (filter, options) =
                compiled.map_err(|e| format!("expected {expect}, got compile error: {e}"))?;
            let message_text = case.message.ok_or("the case has no message")?.get();
            let bound = read_message_text(dialect, &options, message_text)
                .map_err(|e| format!("expected {expect}, got message error: {e}"))?;
            let vm = Evaluator::new().matches(&filter, &bound);
            let reference =
                reference::evaluate_text(dialect, options_text, policy_text, message_text)
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
        match run_line(line) {
            Ok(result) => results.push(result),
            Err(failure) => results.push(CaseResult {
                id: format!("{name}:{}", n + 1),
                failure: Some(failure),
            }),
        }
    }
    results
}

//! The vector runner: every case runs through BOTH the compiler + VM and the reference
//! interpreter, and passes only when both give the expected answer: the same verdict for `match`
//! and `no-match`, and for `invalid` a rejection by the compiler AND by the reference's own
//! validation, both naming the vector's `error` word in their code or message (a case without
//! `error` passes only when the reference's code and JSON Pointer are one of the compiler's
//! errors; in every case the reference's code must be one of the compiler's codes). A line is not
//! a case when it names a member `FORMAT.md` does not (`source` and `why` are allowed) or has no
//! `id`; `null` is a value, not an absence; an id used twice, an empty `error`, `error` on a case
//! that is not `invalid`, a file without cases and a filter selecting none all fail
//! ([`run_text`], [`run_files`]).
//!
//! The VM runs every `match` and `no-match` case twice: reading JSON bodies and events in the
//! default validating mode and in [`ReadMode::Trusted`] (members no filter reads skipped by their
//! structure). Both must give the vector's verdict, except where the message's JSON bytes are not
//! JSON at all (an SNS body given as a string that is not JSON, sns rule 14): trusted mode is
//! documented to judge what it skips without checking it, so there it must only not fail.
//!
//! A vector's `policy`, `options` and `message` are handed on as the exact JSON text the vector
//! wrote: the product compiles the policy text ([`compile_text`]) and reads the options text
//! ([`Options::from_json`]); the reference interpreter reads all three with its own reader
//! ([`reference::evaluate_text`]). Neither sees numbers or member order through `serde_json`:
//! the product reads the message from its text too ([`read_message_text`]).

use crate::reference;
use crate::reference::json::Value;
use filtervm_compiler::{
    CompileError, Dialect, ErrorCode, Evaluator, Filter, MessageError, Options, ReadMode, SnsScope,
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
    /// The case id (or `FILE:LINE` when the line could not be read as a case).
    pub id: String,
    /// `None` when the case passed; otherwise why it failed.
    pub failure: Option<String>,
}

/// A member that is present, whatever its value (`null` included): `serde`'s `Option` would read
/// `null` as absent, and `"policy": null` is a policy (`FORMAT.md`: absent and `null` differ).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// One vector line (`FORMAT.md`); the JSON parts stay text. A member the format does not name is
/// an error (a misspelled `expect` or `error` must not pass unnoticed).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vector<'a> {
    id: Option<String>,
    dialect: Option<String>,
    #[serde(default, borrow, deserialize_with = "present")]
    options: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    policy: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    message: Option<&'a RawValue>,
    expect: Option<String>,
    error: Option<String>,
    /// Provenance (`FORMAT.md`: ignored by runners).
    #[serde(default, borrow, rename = "source")]
    _source: Option<&'a RawValue>,
    /// A one-line reason (ignored by runners).
    #[serde(default, borrow, rename = "why")]
    _why: Option<&'a RawValue>,
}

/// Runs one case given as a vector line. `Err` when the line is not a case at all (not JSON, a
/// member the format does not name, no `id`).
pub fn run_line(line: &str) -> Result<CaseResult, String> {
    let case: Vector<'_> =
        serde_json::from_str(line).map_err(|e| format!("unreadable line: {e}"))?;
    let id = case.id.clone().ok_or("the case has no `id`")?;
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
    if case.error.is_some() && expect != "invalid" {
        return Err(format!(
            "`error` belongs to invalid cases, and this one expects {expect}"
        ));
    }
    let compiled = Options::from_json(dialect, options_text)
        .and_then(|options| compile_text(dialect, policy_text, &options).map(|f| (f, options)));
    match expect {
        "invalid" => check_invalid(
            compiled.err(),
            reference::validate_text(dialect, options_text, policy_text).err(),
            case.error.as_deref(),
        ),
        "match" | "no-match" => {
            let expected = expect == "match";
            let (filter, options) =
                compiled.map_err(|e| format!("expected {expect}, got compile error: {e}"))?;
            let message_text = case.message.ok_or("the case has no message")?.get();
            let bound = read_message_text(dialect, &options, message_text)
                .map_err(|e| format!("expected {expect}, got message error: {e}"))?;
            let vm = Evaluator::new().matches(&filter, &bound);
            check_trusted(&filter, &bound, vm)?;
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

/// The VM's verdict on `message` in [`ReadMode::Trusted`] must be `validating`, its verdict in
/// the default mode, unless the message's JSON bytes are not JSON (then trusted mode may judge
/// what it skips: the facade's documentation, "Trusted input").
fn check_trusted(filter: &Filter, message: &Message, validating: bool) -> Result<(), String> {
    let mut evaluator = Evaluator::new();
    evaluator.set_read_mode(ReadMode::Trusted);
    let trusted = evaluator.matches(filter, message);
    let not_json = matches!(message, Message::Body(bytes)
        if filtervm_vm::json::validate(bytes, filtervm_vm::json::LoneSurrogates::Replace).is_err());
    if trusted == validating || not_json {
        Ok(())
    } else {
        Err(format!(
            "the VM gives {} when it validates the message and {} when it reads it trusted",
            verdict(validating),
            verdict(trusted)
        ))
    }
}

/// An `invalid` case: the compiler AND the reference's own validation must reject it, and
/// - with an `error` word, both errors must contain it (in the code or the message, ignoring case);
/// - without one, both must name the same error: the reference's code and pointer must be those of
///   one of the compiler's errors (so that no rejection, for whatever reason, passes).
///
/// In both cases the reference's code must be one of the compiler's codes.
fn check_invalid(
    compiler: Option<CompileError>,
    reference: Option<reference::Rejection>,
    word: Option<&str>,
) -> Result<(), String> {
    let (compiler, reference) = match (compiler, reference) {
        (None, None) => {
            return Err(
                "expected invalid, got a compiled filter (the reference accepts it too)".to_owned(),
            );
        }
        (None, Some(r)) => {
            return Err(format!(
                "expected invalid, got a compiled filter (the reference rejects it: {r})"
            ));
        }
        (Some(e), None) => {
            return Err(format!(
                "expected invalid: the compiler rejects it ({e}) but the reference accepts it"
            ));
        }
        (Some(e), Some(r)) => (e, r),
    };
    if let Some(word) = word {
        if word.trim().is_empty() {
            return Err("`error` is empty: name the code or a word of the error".to_owned());
        }
        let lower = word.to_lowercase();
        let in_compiler = compiler.errors.iter().any(|pe| {
            pe.code.as_str().to_lowercase().contains(&lower)
                || pe.message.to_lowercase().contains(&lower)
        });
        if !in_compiler {
            return Err(format!("expected invalid with `{word}`, got: {compiler}"));
        }
        if !reference.mentions(word) {
            return Err(format!(
                "expected invalid with `{word}`, the reference says: {reference}"
            ));
        }
    } else if !compiler
        .errors
        .iter()
        .any(|pe| pe.code.as_str() == reference.code && pe.pointer == reference.pointer)
    {
        return Err(format!(
            "the case names no `error`, and the compiler and the reference disagree on the error: \
             compiler: {compiler}; reference: {reference}"
        ));
    }
    if !compiler
        .errors
        .iter()
        .any(|pe| pe.code.as_str() == reference.code)
    {
        return Err(format!(
            "the compiler and the reference reject it with different codes: compiler: \
             {compiler}; reference: {reference}"
        ));
    }
    Ok(())
}

/// The results of a vector file, plus lines that could not be read (as failures).
pub fn run_file(path: &Path) -> Result<Vec<CaseResult>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(run_text(&path.display().to_string(), &text))
}

/// Runs every non-blank line of a JSON Lines text. A line that is not a case fails as
/// `NAME:LINE`; an id used twice fails at its second use (`FORMAT.md`: unique within the file);
/// a text without any case fails as `NAME` (a file that runs nothing checks nothing).
pub fn run_text(name: &str, text: &str) -> Vec<CaseResult> {
    let mut results = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match run_line(line) {
            Ok(result) if !seen.insert(result.id.clone()) => results.push(CaseResult {
                failure: Some(format!("the id is used twice in {name} (line {})", n + 1)),
                ..result
            }),
            Ok(result) => results.push(result),
            Err(failure) => results.push(CaseResult {
                id: format!("{name}:{}", n + 1),
                failure: Some(failure),
            }),
        }
    }
    if results.is_empty() {
        results.push(CaseResult {
            id: name.to_owned(),
            failure: Some("no case in the file".to_owned()),
        });
    }
    results
}

/// What [`run_files`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases that passed.
    pub passed: usize,
    /// Every failure, as the runner prints it (`FAIL id: why`).
    pub failures: Vec<String>,
}

impl Summary {
    /// Whether the run succeeded: some case ran and none failed.
    pub fn ok(&self) -> bool {
        self.failures.is_empty() && self.passed > 0
    }
}

/// Runs vector files, keeping only the cases whose id contains `filter` (when given; a line that
/// is not a case is always reported). Running no case at all is a failure: an empty file, or a
/// filter that selects nothing.
pub fn run_files(files: &[&Path], filter: Option<&str>) -> Summary {
    let mut summary = Summary::default();
    for file in files {
        let results = match run_file(file) {
            Ok(r) => r,
            Err(e) => {
                summary
                    .failures
                    .push(format!("FAIL {}: cannot read: {e}", file.display()));
                continue;
            }
        };
        for r in results {
            let unread = r.failure.is_some() && r.id.starts_with(&file.display().to_string());
            if !unread && filter.is_some_and(|f| !r.id.contains(f)) {
                continue;
            }
            match r.failure {
                None => summary.passed += 1,
                Some(why) => summary.failures.push(format!("FAIL {}: {why}", r.id)),
            }
        }
    }
    if summary.passed + summary.failures.len() == 0 {
        summary.failures.push(match filter {
            Some(f) => format!("FAIL: FILTERVM_CASES=`{f}` selects no case"),
            None => "FAIL: no case ran".to_owned(),
        });
    }
    summary
}

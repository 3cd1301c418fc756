//! The reference interpreter for the `eventbridge` dialect: Amazon EventBridge event patterns as
//! aws/event-ruler evaluates them (`docs/dialects/eventbridge-patterns.md`, rules EB-1..EB-35).
//!
//! Written from the spec's words, sharing nothing with the compiler or the VM:
//!
//! - [`validate`] reads a pattern in document order, depth first, and reports the first error
//!   (EB-31, with event-ruler's message text), then the branch limit (EB-32) and the wildcard
//!   complexity limit (EB-33);
//! - [`evaluate`] expands the pattern into its branches (EB-5, EB-7), flattens the event into
//!   values with positions (EB-2, EB-3) and searches each branch as EB-8 says, every matcher of
//!   EB-12..EB-30 applied value by value.
//!
//! Patterns and events give a repeated member name a meaning (EB-3, EB-7), so their text must be
//! read keeping every occurrence: [`read`] does, with [`READ_OPTIONS`], and so do the dispatch's
//! text readers for this dialect ([`crate::reference::read_policy_text`],
//! [`crate::reference::evaluate_text`]); [`crate::reference::json::parse`] keeps only the last.
//!
//! The reference's own error codes ([`PatternError::code`]; [`PatternError::product_code`] sorts
//! them into the product's `EVENTBRIDGE_*` codes for [`validate`]):
//!
//! | code | when |
//! |---|---|
//! | [`INVALID_PATTERN`] | every row of EB-31's table; an empty nested anything-but list (EB-24) |
//! | [`LIMIT_EXCEEDED`] | a branch with more than 256 paths (EB-32); a pattern nested deeper than [`MAX_PATTERN_DEPTH`] (128) levels, checked first |
//! | [`PATTERN_TOO_COMPLEX`] | a wildcard complexity score above 10 (EB-33) |
//! | [`INVALID_MESSAGE`] | an event that is not a JSON object (EB-3) or nests deeper than 1,000 (EB-34) |
//! | [`REFERENCE_LIMIT`] | a pattern or event beyond what this interpreter materialises (not a verdict on the input) |

mod address;
mod error;
mod event;
mod limits;
mod matching;
mod number;
mod pattern;
mod text;

pub use error::{
    INVALID_MESSAGE, INVALID_PATTERN, INVALID_VALUE, LIMIT, LIMIT_EXCEEDED, PATTERN_TOO_COMPLEX,
    PatternError, REFERENCE_LIMIT, SYNTAX, TYPE, UNKNOWN_OPERATOR, UNSORTED,
};
pub use limits::{
    MAX_BRANCHES, MAX_COMPLEXITY, MAX_DEPTH, MAX_PATHS_PER_BRANCH, MAX_PATTERN_DEPTH,
};

use super::json::{self, ReadOptions, Value};
use super::{Codes, ReferenceError, Rejection, options};
use event::nesting;

/// How pattern and event text is read: every occurrence of a repeated member name kept in order
/// (EB-3, EB-7), one level deeper than [`MAX_DEPTH`] so that [`validate`] and [`evaluate`]
/// report the depth as the dialect does.
pub const READ_OPTIONS: ReadOptions = ReadOptions {
    max_depth: MAX_DEPTH + 1,
    keep_duplicates: true,
    reject_duplicates: false,
};

/// Nesting up to which the reference works on the caller's stack. Its readers and walkers
/// recurse once or twice per level, and EB-34 allows 1,000 levels, more than a test thread's
/// stack holds: deeper input is judged on a thread of its own with [`DEEP_STACK`] bytes.
const SHALLOW: usize = 64;
/// The stack of the thread that judges deep input.
const DEEP_STACK: usize = 64 << 20;

/// The deepest nesting of brackets in JSON text (outside strings), for text not read yet.
fn text_nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Runs `f` here, or when `deep` on a thread with [`DEEP_STACK`] bytes of stack.
fn on_stack<T: Send>(deep: bool, f: impl FnOnce() -> T + Send) -> Result<T, String> {
    if !deep {
        return Ok(f());
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, f)
            .map_err(|e| format!("cannot start a thread to judge deeply nested input: {e}"))?
            .join()
            .map_err(|_| "the thread judging deeply nested input failed".to_owned())
    })
}

/// The codes of pattern text that is not JSON, or larger than
/// [`MAX_POLICY_TEXT_BYTES`](crate::reference::MAX_POLICY_TEXT_BYTES).
pub const CODES: Codes = Codes {
    invalid: SYNTAX,
    limit: LIMIT,
};

/// A reference limit as the dispatch's error.
fn limit(message: impl Into<String>) -> ReferenceError {
    ReferenceError::Limit(format!("{REFERENCE_LIMIT}: {}", message.into()))
}

/// Reads pattern or event text as this dialect must ([`READ_OPTIONS`]); text that is not JSON is
/// a failure, text deeper than [`READ_OPTIONS`] reads too.
pub fn read(text: &str) -> Result<Value, ReferenceError> {
    on_stack(text_nesting(text) > SHALLOW, || {
        json::parse_with(text, READ_OPTIONS)
            .map_err(|e| ReferenceError::failed(format!("{INVALID_MESSAGE}: unreadable JSON: {e}")))
    })
    .unwrap_or_else(|m| Err(limit(m)))
}

/// A pattern that passed validation: its branches (EB-5, EB-7).
fn compile(policy: &Value) -> Result<Vec<pattern::Branch>, PatternError> {
    let members = pattern::read(policy)?;
    let branches = pattern::expand(&members)?;
    pattern::check_limits(&branches)?;
    Ok(branches)
}

/// Validates a pattern (EB-4, EB-5, EB-7, EB-22, EB-24, EB-26..EB-28, EB-31, then EB-32 and
/// EB-33), with the error's code, pointer and message (the reference's own codes,
/// [`PatternError::product_code`] for the product's).
pub fn check(policy: &Value) -> Result<(), PatternError> {
    on_stack(nesting(policy) > SHALLOW, || compile(policy).map(|_| ())).unwrap_or_else(|m| {
        Err(PatternError {
            code: REFERENCE_LIMIT,
            pointer: String::new(),
            message: m,
        })
    })
}

/// The dialect's validation for the reference's dispatch ([`crate::reference::validate`]): the
/// dialect takes no options; a pattern is checked by [`check`], its error given the product's
/// code. A pattern beyond the reference's own bounds is a rejection coded [`REFERENCE_LIMIT`]
/// (no product code: callers comparing validations skip it).
pub fn validate(options: &Value, policy: &Value) -> Result<(), Rejection> {
    options::members(options, &[])?;
    check(policy).map_err(|e| e.rejection())
}

/// Whether `message` (the event) matches `policy` (the pattern, which [`validate`] accepted):
/// any branch matches (EB-8). An event that is not a JSON object (EB-3) or nests deeper than
/// 1,000 (EB-34) is [`ReferenceError::Failed`] (the product gives no verdict either:
/// `INVALID_MESSAGE`, `MESSAGE_TOO_COMPLEX`), a case beyond the reference's own bounds
/// [`ReferenceError::Limit`], an invalid pattern [`ReferenceError::Invalid`].
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let _ = options;
    let deep = nesting(policy).max(nesting(message)) > SHALLOW;
    on_stack(deep, || judge(policy, message)).unwrap_or_else(|m| Err(limit(m)))
}

/// [`evaluate`], on the current stack.
fn judge(policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let branches = compile(policy).map_err(|e| match e.code {
        REFERENCE_LIMIT => limit(e.message),
        _ => ReferenceError::Invalid(e.rejection()),
    })?;
    let flat = event::flatten(message)
        .map_err(|m| ReferenceError::failed(format!("{INVALID_MESSAGE}: {m}")))?;
    for branch in &branches {
        if matching::branch_matches(branch, &flat).map_err(limit)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Reads pattern text on the current stack ([`READ_OPTIONS`]: as deep as EB-34 allows a pattern
/// value, deeper than policy text is read, [`crate::reference::MAX_POLICY_TEXT_DEPTH`]); text that
/// is not JSON is an invalid pattern.
fn read_pattern(text: &str) -> Result<Value, ReferenceError> {
    json::parse_with(text, READ_OPTIONS).map_err(|e| {
        ReferenceError::Invalid(Rejection::new(SYNTAX, "", format!("unreadable JSON: {e}")))
    })
}

/// [`check`] on pattern text read with [`READ_OPTIONS`] (EB-34's depth, not the policy text
/// limit of [`crate::reference::read_policy_text`]): for this dialect's own tests of deep
/// patterns.
pub fn validate_text(policy: &str) -> Result<(), ReferenceError> {
    on_stack(text_nesting(policy) > SHALLOW, || {
        check(&read_pattern(policy)?).map_err(|e| ReferenceError::Invalid(e.rejection()))
    })
    .unwrap_or_else(|m| Err(limit(m)))
}

/// [`evaluate`] on pattern and event text, both read with [`READ_OPTIONS`] (event text that is
/// not JSON is a failure, [`INVALID_MESSAGE`]).
pub fn evaluate_text(policy: &str, message: &str) -> Result<bool, ReferenceError> {
    let deep = text_nesting(policy).max(text_nesting(message)) > SHALLOW;
    on_stack(deep, || {
        let policy = read_pattern(policy)?;
        let message = json::parse_with(message, READ_OPTIONS).map_err(|e| {
            ReferenceError::failed(format!(
                "{INVALID_MESSAGE}: the event is unreadable JSON: {e}"
            ))
        })?;
        judge(&policy, &message)
    })
    .unwrap_or_else(|m| Err(limit(m)))
}

/// EB-33: the wildcard complexity score of one path's distinct wildcard operands (each as
/// written in the pattern, e.g. `*a*b*` scores 4). `Err` for an operand that is not a valid
/// wildcard (EB-22) or a search beyond the reference's bound.
pub fn wildcard_complexity(operands: &[&str]) -> Result<usize, String> {
    let pieces = operands
        .iter()
        .map(|o| text::parse_wildcard(o))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| format!("{INVALID_PATTERN}: {m}"))?;
    text::complexity(&pieces, usize::MAX).map_err(|m| format!("{REFERENCE_LIMIT}: {m}"))
}

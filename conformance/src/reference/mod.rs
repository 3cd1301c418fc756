//! The reference interpreter: validates a policy and evaluates it against a message, straight from
//! their JSON, as plainly as each spec reads.
//!
//! It shares no code with the compiler's front ends, lowering, optimizer or codegen, nor with the
//! VM's binding, matchers or executor: the JSON reader ([`json`]), number grammars, canonical
//! number text, patterns, case folding, every dialect's validation rules and the stream dialect's
//! text form are written again here, the obvious way. That is what makes the differential check
//! (VM versus reference) and the validation check (compiler versus reference, on every `invalid`
//! vector and in the fuzz targets) mean something.
//!
//! # One dialect, one file
//!
//! Each dialect's file (`sns.rs`, `basaltic.rs`, ...) offers the same three items, and this module
//! dispatches to them with one `match` arm each ([`validate`], [`evaluate_valid`], [`codes`]):
//!
//! - `pub fn validate(options: &Value, policy: &Value) -> Result<(), Rejection>`: the dialect's
//!   options (with [`options::members`]) and every rule of its spec that makes a policy invalid,
//!   reporting the first violation in policy order with the code the product documents for it
//!   (`filtervm_compiler::ErrorCode`, as text), a JSON Pointer and a message in the spec's words;
//! - `pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool,
//!   ReferenceError>`: the verdict of a policy that `validate` accepted;
//! - `pub const CODES: Codes`: the codes of policy text that is not JSON or too large.
//!
//! # Limits of the reference itself
//!
//! The reference answers every valid policy and readable message except past these limits, where
//! it says so with [`ReferenceError::Limit`] (the differential checks count them; any other error
//! is a failure):
//!
//! - a message, an SNS body or a `String.Array` value nested deeper than [`json::MAX_DEPTH`]
//!   (127) arrays and objects (`serde_json`'s limit; the product reads deeper bodies);
//! - an SNS body whose arrays of objects give more than [`sns::MAX_WORLDS`] ways of choosing one
//!   element per array on the policy's paths (rule 18 is judged by enumerating them; the VM has
//!   its own bound, `MESSAGE_TOO_COMPLEX`).

pub mod basaltic;
pub mod eventbridge;
pub mod eventgrid;
pub mod expr;
pub mod json;
pub mod number;
pub mod options;
pub mod pointer;
pub mod sns;
pub mod stream;
pub mod stream_rules;
pub mod stream_text;

use filtervm_compiler::Dialect;
use json::Value;
use std::fmt;

/// The most bytes of policy text a dialect reads (basaltic B-12 DECISION, sns rule 44; the
/// product applies the same 256 KiB to every dialect's policy text).
pub const MAX_POLICY_TEXT_BYTES: usize = 256 * 1024;

/// Arrays and objects nested in one another that policy text may hold (the product reads policy
/// text to this depth, one level more than `serde_json`'s default).
pub const MAX_POLICY_TEXT_DEPTH: usize = 128;

/// The code of a [`Rejection`] that is a bound of the reference itself, not a verdict on the
/// policy (the `eventbridge` reference materialises at most
/// [`eventbridge::MAX_BRANCHES`] branches of a pattern to check EB-32 and EB-33).
pub const REFERENCE_LIMIT: &str = "REFERENCE_LIMIT";

/// Why the reference's own validation rejects a policy or its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The stable code of this kind of error as the product documents it (`SNS_TYPE_ERROR`,
    /// `STREAM_INVALID_PATTERN`, `INVALID_OPTIONS`, ...).
    pub code: &'static str,
    /// A JSON Pointer to the offending part of the policy or options (`""`: the whole), or for the
    /// stream text form the byte span `bytes A..B`.
    pub pointer: String,
    /// What is wrong, in the spec's words where the spec gives them.
    pub message: String,
}

impl Rejection {
    /// A rejection.
    pub fn new(code: &'static str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Rejection {
            code,
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// Whether this is no verdict on the policy but a bound of the reference itself
    /// ([`REFERENCE_LIMIT`]): validation comparisons skip it.
    pub fn is_limit(&self) -> bool {
        self.code == REFERENCE_LIMIT
    }

    /// Whether `word` occurs in the code or the message, ignoring case (the runner's check of an
    /// `invalid` vector's `error`, `FORMAT.md`).
    pub fn mentions(&self, word: &str) -> bool {
        let word = word.to_lowercase();
        self.code.to_lowercase().contains(&word) || self.message.to_lowercase().contains(&word)
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            self.pointer.as_str()
        };
        write!(f, "{} at {at}: {}", self.code, self.message)
    }
}

/// Why the reference interpreter gave no verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceError {
    /// The policy or its options are invalid (the reference's own validation).
    Invalid(Rejection),
    /// A documented limit of the reference itself (see the module documentation).
    Limit(String),
    /// Anything else: a message the reference cannot read in the dialect's shape, or a bug.
    Failed(String),
}

impl ReferenceError {
    /// A [`ReferenceError::Failed`].
    pub fn failed(message: impl Into<String>) -> ReferenceError {
        ReferenceError::Failed(message.into())
    }

    /// Whether this is one of the reference's documented limits.
    pub fn is_limit(&self) -> bool {
        matches!(self, ReferenceError::Limit(_))
    }
}

impl fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReferenceError::Invalid(r) => write!(f, "the reference rejects the policy: {r}"),
            ReferenceError::Limit(m) => write!(f, "beyond a limit of the reference: {m}"),
            ReferenceError::Failed(m) => f.write_str(m),
        }
    }
}

impl From<Rejection> for ReferenceError {
    fn from(r: Rejection) -> ReferenceError {
        ReferenceError::Invalid(r)
    }
}

/// The codes of a dialect's policy text that is not JSON (`invalid`) or larger than
/// [`MAX_POLICY_TEXT_BYTES`] (`limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codes {
    /// Policy text that is not JSON (nor, for `stream`, the text form).
    pub invalid: &'static str,
    /// Policy text that is too large.
    pub limit: &'static str,
}

/// The codes of `dialect`'s policy text errors.
pub fn codes(dialect: Dialect) -> Codes {
    match dialect {
        Dialect::Basaltic => basaltic::CODES,
        Dialect::Sns => sns::CODES,
        Dialect::EventGrid => eventgrid::CODES,
        Dialect::Stream => stream::CODES,
        Dialect::Expr => expr::CODES,
        Dialect::EventBridge => eventbridge::CODES,
    }
}

/// Validates `policy` with `options` (both in the vector format's JSON shapes; `options` `null`
/// for the defaults) by `dialect`'s rules: the first violation found, or `Ok`.
pub fn validate(dialect: Dialect, options: &Value, policy: &Value) -> Result<(), Rejection> {
    match dialect {
        Dialect::Basaltic => basaltic::validate(options, policy),
        Dialect::Sns => sns::validate(options, policy),
        Dialect::EventGrid => eventgrid::validate(options, policy),
        Dialect::Stream => stream::validate(options, policy),
        Dialect::Expr => expr::validate(options, policy),
        Dialect::EventBridge => eventbridge::validate(options, policy),
    }
}

/// Reads policy text as `dialect` does: at most [`MAX_POLICY_TEXT_BYTES`], one JSON value nested
/// at most [`MAX_POLICY_TEXT_DEPTH`] levels (no lone surrogates); for `stream`, text that is not
/// JSON and does not start with `{` or `[` is the text form (`docs/dialects/stream-filters.md`,
/// "Text form"), given back as a JSON string without its trailing line break; for `eventbridge`
/// every occurrence of a repeated member name is kept (EB-7).
pub fn read_policy_text(dialect: Dialect, text: &str) -> Result<Value, Rejection> {
    let codes = codes(dialect);
    if text.len() > MAX_POLICY_TEXT_BYTES {
        return Err(Rejection::new(
            codes.limit,
            "",
            format!(
                "the policy text is {} bytes; the limit is {MAX_POLICY_TEXT_BYTES} bytes (256 KiB)",
                text.len()
            ),
        ));
    }
    match json::parse_with(
        text,
        json::ReadOptions {
            max_depth: MAX_POLICY_TEXT_DEPTH,
            keep_duplicates: dialect == Dialect::EventBridge,
            ..json::ReadOptions::default()
        },
    ) {
        Ok(value) => Ok(value),
        Err(_) if dialect == Dialect::Stream && !text.trim_start().starts_with(['{', '[']) => Ok(
            Value::String(text.trim_end_matches(['\n', '\r']).to_owned()),
        ),
        Err(e) => Err(Rejection::new(
            codes.invalid,
            "",
            match dialect {
                // sns rule 35: AWS's wording.
                Dialect::Sns => format!("failed to parse JSON. ({e})"),
                _ => format!("the policy is not JSON: {e}"),
            },
        )),
    }
}

/// Reads options text (empty text: the defaults): one JSON value that names no member twice.
pub fn read_options_text(text: &str) -> Result<Value, Rejection> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    json::parse_with(
        text,
        json::ReadOptions {
            reject_duplicates: true,
            ..json::ReadOptions::default()
        },
    )
    .map_err(|e| {
        Rejection::new(
            options::INVALID_OPTIONS,
            "",
            format!("the options are not JSON: {e}"),
        )
    })
}

/// Validates policy and options given as text ([`read_options_text`], [`read_policy_text`],
/// [`validate`]); gives back the two values read.
pub fn validate_text(
    dialect: Dialect,
    options: &str,
    policy: &str,
) -> Result<(Value, Value), Rejection> {
    let options = read_options_text(options)?;
    let policy = read_policy_text(dialect, policy)?;
    validate(dialect, &options, &policy)?;
    Ok((options, policy))
}

/// Evaluates `policy` against `message` (both in the vector format's JSON shapes), after
/// validating the policy and options ([`validate`]; an invalid one is
/// [`ReferenceError::Invalid`]).
pub fn evaluate(
    dialect: Dialect,
    options: &Value,
    policy: &Value,
    message: &Value,
) -> Result<bool, ReferenceError> {
    validate(dialect, options, policy)?;
    evaluate_valid(dialect, options, policy, message)
}

/// Evaluates a policy that [`validate`] accepted (for callers that validate once and evaluate many
/// messages). An invalid policy gives an unspecified answer or error.
pub fn evaluate_valid(
    dialect: Dialect,
    options: &Value,
    policy: &Value,
    message: &Value,
) -> Result<bool, ReferenceError> {
    match dialect {
        Dialect::Basaltic => basaltic::evaluate(options, policy, message),
        Dialect::Sns => sns::evaluate(options, policy, message),
        Dialect::EventGrid => eventgrid::evaluate(options, policy, message),
        Dialect::Stream => stream::evaluate(options, policy, message),
        Dialect::Expr => expr::evaluate(options, policy, message),
        Dialect::EventBridge => eventbridge::evaluate(options, policy, message),
    }
}

/// [`evaluate`] with the options, policy and message given as JSON text: the options and policy
/// read and validated by [`validate_text`], the message by the reference's reader
/// ([`json::parse`]: a message nested deeper than [`json::MAX_DEPTH`] is
/// [`ReferenceError::Limit`]; an `eventbridge` event by [`eventbridge::read`], every occurrence
/// of a repeated member name kept, EB-3, as deep as EB-34 allows).
pub fn evaluate_text(
    dialect: Dialect,
    options: &str,
    policy: &str,
    message: &str,
) -> Result<bool, ReferenceError> {
    let (options, policy) = validate_text(dialect, options, policy)?;
    let message = match dialect {
        Dialect::EventBridge => eventbridge::read(message)?,
        _ => read_message(message)?,
    };
    evaluate_valid(dialect, &options, &policy, &message)
}

/// The type and value text of one message attribute (`FORMAT.md`: `{"Type": T, "Value": V}` for
/// sns, `{"type": T, "value": V}` for basaltic; the message readers take either spelling, and the
/// AWS API's `DataType` with `StringValue` or `BinaryValue`): the first of those members present,
/// when it is a string.
pub(crate) fn attribute_fields(attribute: &Value) -> (Option<&str>, Option<&str>) {
    let first = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| attribute.get(n))
            .and_then(Value::as_str)
    };
    (
        first(&["Type", "type", "DataType"]),
        first(&["Value", "value", "StringValue", "BinaryValue"]),
    )
}

/// Reads message text with the reference's reader; too deep is a limit, anything else a failure.
pub fn read_message(text: &str) -> Result<Value, ReferenceError> {
    json::parse(text).map_err(|e| message_text_error("the message", &e))
}

/// The error of message text (or text inside a message) the reader refused: a documented limit
/// when it is only too deep.
pub(crate) fn message_text_error(what: &str, e: &json::ParseError) -> ReferenceError {
    if e.too_deep {
        ReferenceError::Limit(format!(
            "{what} is nested deeper than {} levels",
            json::MAX_DEPTH
        ))
    } else {
        ReferenceError::Failed(format!("{what} is not JSON: {e}"))
    }
}

//! The filtervm compiler: dialect front ends, the common IR, the optimizer and codegen to the
//! `filtervm-vm` bytecode — and the `filtervm` command-line tool (feature `cli`).
//!
//! ```
//! use filtervm_compiler::{compile, Dialect, Evaluator};
//! use filtervm_vm::message::{AttributeType, Message};
//! use serde_json::json;
//!
//! let policy = json!({
//!     "event": ["order.created", "order.paid"],
//!     "amount": [{"numeric": [">=", 100, "<", 1000]}],
//!     "test": [{"exists": false}]
//! });
//! let filter = compile(Dialect::Basaltic, &policy, &json!({})).unwrap();
//!
//! // A message built without JSON...
//! let message = Message::attributes([
//!     ("event", AttributeType::String, "order.paid"),
//!     ("amount", AttributeType::Number, "149.50"),
//! ]);
//! assert!(filter.matches(&message));
//!
//! // ...or from JSON in the dialect's shape, evaluated with reusable buffers...
//! let json = json!({"attributes": {"event": {"type": "String", "value": "order.refunded"}}});
//! let mut evaluator = Evaluator::new();
//! assert!(!evaluator.matches_json(&filter, &json).unwrap());
//!
//! // ...or straight from what the broker holds, borrowed (nothing is copied).
//! let attributes = [
//!     ("event", AttributeType::String, "order.created"),
//!     ("amount", AttributeType::Number, "100"),
//! ];
//! assert!(evaluator.matches_attributes(&filter, &attributes));
//!
//! // SNS bodies and Event Grid events are matched from their raw bytes.
//! let body = compile(Dialect::Sns, &json!({"event": ["order.paid"]}),
//!                    &json!({"scope": "MessageBody"})).unwrap();
//! assert!(evaluator.matches_bytes(&body, br#"{"event": "order.paid", "items": [[{}]]}"#).unwrap());
//!
//! // Errors carry a stable code and a JSON Pointer.
//! let err = compile(Dialect::Basaltic, &json!({"a": [{"prefix": ""}]}), &json!({})).unwrap_err();
//! assert_eq!(err.errors[0].code, "NOTIFICATION_INVALID_FILTER_POLICY");
//! assert_eq!(err.errors[0].pointer, "/a/0/prefix");
//! ```

pub mod codegen;
pub mod dialect;
pub mod error;
pub mod explain;
pub mod intern;
pub mod ir;
pub mod lint;
pub mod opt;
pub mod set;
pub mod wire;

pub use dialect::{Dialect, message_from_json, message_from_line};
pub use error::{CompileError, MessageError, PolicyError};

use filtervm_vm::bind::{Bindings, Bound, Judgement};
use filtervm_vm::message::{Attributes, Headers, Message};
use filtervm_vm::program::Program;

/// The largest policy text accepted, in bytes (basaltic B-12, sns rule 44).
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// The error code of a message too complex to evaluate within the binding limits.
pub const MESSAGE_TOO_COMPLEX: &str = "MESSAGE_TOO_COMPLEX";

/// The error code of JSON message bytes that are not one JSON document: an Event Grid event
/// that cannot be judged, or (from the `try_` entry points) an SNS body that is not JSON.
pub const MESSAGE_NOT_JSON: &str = "MESSAGE_NOT_JSON";

/// The error code of raw JSON bytes given to a filter whose dialect does not read a JSON body
/// (attributes or headers).
pub const MESSAGE_SHAPE: &str = "MESSAGE_SHAPE";

/// The error code for policy text that is too large or not JSON.
pub const INVALID_POLICY_TEXT: &str = "INVALID_POLICY_TEXT";

/// A compiled filter: its IR (before and after optimization) and its program.
///
/// A filter loaded from bytes ([`Filter::from_bytes`]) has its program but no IR.
#[derive(Debug, Clone)]
pub struct Filter {
    dialect: Dialect,
    options: serde_json::Value,
    /// `None` for a filter loaded from bytes (the IR does not travel).
    lowered: Option<ir::Node>,
    /// `None` for a filter loaded from bytes.
    optimized: Option<ir::Node>,
    program: Program,
    /// What the filter reads from raw JSON bytes (from its dialect and options).
    json_body: Option<JsonBody>,
}

impl Filter {
    /// The dialect the filter was written in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The dialect options the filter was compiled with.
    pub fn options(&self) -> &serde_json::Value {
        &self.options
    }

    /// A filter loaded from bytes: its program, dialect and options, and no IR.
    pub(crate) fn loaded(dialect: Dialect, options: serde_json::Value, program: Program) -> Filter {
        Filter {
            json_body: json_body(dialect, &options),
            dialect,
            options,
            lowered: None,
            optimized: None,
            program,
        }
    }

    /// The IR as lowered from the policy, before optimization (`None` when loaded from bytes).
    pub fn lowered_ir(&self) -> Option<&ir::Node> {
        self.lowered.as_ref()
    }

    /// The optimized IR the program was generated from (`None` when loaded from bytes).
    pub fn ir(&self) -> Option<&ir::Node> {
        self.optimized.as_ref()
    }

    /// The bytecode program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Whether `message` matches (allocates fresh buffers; see [`Evaluator`] to reuse them).
    pub fn matches(&self, message: &Message) -> bool {
        Evaluator::new().matches(self, message)
    }

    /// Whether the filter reads a JSON body from raw bytes (sns in body scope, eventgrid): then
    /// [`Evaluator::matches_bytes`] matches a message as published.
    pub fn reads_json_body(&self) -> bool {
        self.json_body().is_some()
    }

    /// What the filter's dialect reads from raw JSON bytes, if anything.
    #[inline]
    pub(crate) fn json_body(&self) -> Option<JsonBody> {
        self.json_body
    }
}

/// What a dialect with `options` reads from raw JSON bytes, if anything.
fn json_body(dialect: Dialect, options: &serde_json::Value) -> Option<JsonBody> {
    match dialect {
        Dialect::EventGrid => Some(JsonBody::Event),
        Dialect::Sns => match dialect::sns::scope(options) {
            Ok(dialect::sns::Scope::MessageBody) => Some(JsonBody::SnsBody),
            _ => None,
        },
        _ => None,
    }
}

/// What a dialect reads from raw JSON bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonBody {
    /// An SNS message body (body scope): a body that is not JSON keeps its dialect meaning.
    SnsBody,
    /// An Event Grid event: bytes that are not JSON cannot be judged.
    Event,
}

/// Reusable evaluation buffers: the binding scratch (arena, JSON reader) and registers. Keep one
/// per thread: once warm, matching a stream of messages allocates nothing.
///
/// Entry points by what the broker holds:
///
/// | message | entry point |
/// |---|---|
/// | raw JSON bytes: an SNS body (body scope), an Event Grid event | [`Evaluator::matches_bytes`], [`Evaluator::try_matches_bytes`] |
/// | typed attributes (basaltic, sns attribute scope), borrowed | [`Evaluator::matches_attributes`] |
/// | headers (stream, expr), borrowed | [`Evaluator::matches_headers`] |
/// | an owned [`Message`] | [`Evaluator::matches`], [`Evaluator::try_matches`] |
/// | JSON in the dialect's vector shape | [`Evaluator::matches_json`] |
#[derive(Debug, Default)]
pub struct Evaluator {
    bindings: Bindings,
    registers: Vec<bool>,
}

impl Evaluator {
    /// New, empty buffers.
    pub fn new() -> Evaluator {
        Evaluator::default()
    }

    /// Binds `message` to the filter's keys and runs its program.
    ///
    /// Fails closed: an SNS body too complex to judge element by element (more rows than
    /// `filtervm_vm::bind::MAX_ROW_SLOTS` allow, sns rule 18) is bound as a non-object and
    /// matches only the empty policy; so is an SNS body ([`Message::Body`]) that is not JSON
    /// (sns rule 14), and an Event Grid event that is not JSON matches nothing.
    /// [`Evaluator::try_matches`] reports those cases instead.
    pub fn matches(&mut self, filter: &Filter, message: &Message) -> bool {
        let bound = self.bindings.bind(filter.program.keys(), message);
        filter.program.eval(&bound, &mut self.registers)
    }

    /// Like [`Evaluator::matches`], but a message that could not be judged whole is an error:
    /// [`MESSAGE_TOO_COMPLEX`] for a body beyond the binding limits, [`MESSAGE_NOT_JSON`] for
    /// JSON bytes that are not JSON.
    pub fn try_matches(
        &mut self,
        filter: &Filter,
        message: &Message,
    ) -> Result<bool, MessageError> {
        let bound = self.bindings.bind(filter.program.keys(), message);
        let verdict = filter.program.eval(&bound, &mut self.registers);
        judged(filter, &bound)?;
        Ok(verdict)
    }

    /// Matches raw JSON bytes as published: an SNS message body (sns, body scope) or an Event
    /// Grid event. One validating pass over the bytes keeps only what the filter reads (any
    /// depth, lone surrogate escapes read as U+FFFD), with no allocation once warm.
    ///
    /// Errors: [`MESSAGE_NOT_JSON`] for an Event Grid event that is not JSON, [`MESSAGE_SHAPE`]
    /// for a filter whose dialect does not read a JSON body. An SNS body that is not JSON keeps
    /// its dialect meaning (sns rule 14: it matches only policies that read nothing from the
    /// body), and so does one too complex to judge element by element; use
    /// [`Evaluator::try_matches_bytes`] to have those reported.
    pub fn matches_bytes(&mut self, filter: &Filter, json: &[u8]) -> Result<bool, MessageError> {
        let kind = filter.json_body().ok_or_else(|| not_json_dialect(filter))?;
        let bound = self.bindings.bind_json(filter.program.keys(), json);
        let verdict = filter.program.eval(&bound, &mut self.registers);
        if kind == JsonBody::Event
            && let Some(e) = bound.not_json()
        {
            return Err(not_json_error(filter.dialect, e));
        }
        Ok(verdict)
    }

    /// Like [`Evaluator::matches_bytes`], but a message that could not be judged whole is an
    /// error too: an SNS body that is not JSON ([`MESSAGE_NOT_JSON`]) or beyond the binding
    /// limits ([`MESSAGE_TOO_COMPLEX`]).
    pub fn try_matches_bytes(
        &mut self,
        filter: &Filter,
        json: &[u8],
    ) -> Result<bool, MessageError> {
        filter.json_body().ok_or_else(|| not_json_dialect(filter))?;
        let bound = self.bindings.bind_json(filter.program.keys(), json);
        let verdict = filter.program.eval(&bound, &mut self.registers);
        judged(filter, &bound)?;
        Ok(verdict)
    }

    /// Matches typed attributes as the broker holds them (basaltic, sns attribute scope): any
    /// [`Attributes`] — a slice of `(name, type, value)` tuples, a map of name → `(type,
    /// value)`, ... Values are borrowed; a value that is not UTF-8 satisfies no string test.
    pub fn matches_attributes<A: Attributes + ?Sized>(
        &mut self,
        filter: &Filter,
        attributes: &A,
    ) -> bool {
        let bound = self
            .bindings
            .bind_attributes(filter.program.keys(), attributes);
        filter.program.eval(&bound, &mut self.registers)
    }

    /// Matches headers as the broker holds them (stream, expr): any [`Headers`] — a slice of
    /// `(name, value)` pairs, a map of name → value or → `Vec` of values (multi-valued), ...
    /// Values are borrowed; a value that is not UTF-8 satisfies no string test.
    pub fn matches_headers<H: Headers + ?Sized>(&mut self, filter: &Filter, headers: &H) -> bool {
        let bound = self.bindings.bind_headers(filter.program.keys(), headers);
        filter.program.eval(&bound, &mut self.registers)
    }

    /// Reads `message` in the dialect's JSON shape, then matches it.
    pub fn matches_json(
        &mut self,
        filter: &Filter,
        message: &serde_json::Value,
    ) -> Result<bool, MessageError> {
        let message = message_from_json(filter.dialect, &filter.options, message)?;
        Ok(self.matches(filter, &message))
    }
}

/// `Ok` when `bound` was judged whole; the error saying why not otherwise.
fn judged(filter: &Filter, bound: &Bound<'_>) -> Result<(), MessageError> {
    match bound.judgement() {
        Judgement::Judged => Ok(()),
        Judgement::Overflowed => Err(MessageError {
            code: MESSAGE_TOO_COMPLEX,
            pointer: String::new(),
            message: format!(
                "the body has too many combinations of array elements to judge element by element \
                 (more than {} slots); it was treated as not matching",
                filtervm_vm::bind::MAX_ROW_SLOTS
            ),
        }),
        Judgement::NotJson(e) => Err(not_json_error(filter.dialect, e)),
    }
}

/// The error of JSON bytes that are not JSON, in the dialect's terms.
pub(crate) fn not_json_error(dialect: Dialect, e: &filtervm_vm::json::Error) -> MessageError {
    let message = if dialect == Dialect::Sns {
        format!(
            "the body is not JSON ({e}); an SNS body that is not JSON matches only policies that \
             read nothing from the body"
        )
    } else {
        format!("the event is not JSON: {e}")
    };
    MessageError {
        code: MESSAGE_NOT_JSON,
        pointer: String::new(),
        message,
    }
}

/// The error of raw JSON bytes given to a filter that reads attributes or headers.
fn not_json_dialect(filter: &Filter) -> MessageError {
    not_json_dialect_error(filter.dialect)
}

/// [`not_json_dialect`] for a dialect.
pub(crate) fn not_json_dialect_error(dialect: Dialect) -> MessageError {
    let hint = if dialect == Dialect::Sns {
        " (compile with --options '{\"scope\":\"MessageBody\"}' to filter on the body)"
    } else {
        ""
    };
    MessageError {
        code: MESSAGE_SHAPE,
        pointer: String::new(),
        message: format!(
            "a {} filter reads message {}, not a JSON body{hint}",
            dialect,
            match dialect {
                Dialect::Stream | Dialect::Expr => "headers",
                _ => "attributes",
            }
        ),
    }
}

/// Compiles a policy given as JSON, with dialect options (a JSON object, or `null` for none).
pub fn compile(
    dialect: Dialect,
    policy: &serde_json::Value,
    options: &serde_json::Value,
) -> Result<Filter, CompileError> {
    let lowered = dialect::lower(dialect, policy, options)?;
    let optimized = opt::optimize(lowered.clone());
    let program = codegen::generate(&optimized).map_err(|e| {
        CompileError::one(
            "INTERNAL_CODEGEN",
            "",
            format!("codegen produced an invalid program: {e}"),
        )
    })?;
    Ok(Filter {
        json_body: json_body(dialect, options),
        dialect,
        options: options.clone(),
        lowered: Some(lowered),
        optimized: Some(optimized),
        program,
    })
}

/// Compiles policy text: checks the size limit, parses the JSON, then [`compile`]s it.
pub fn compile_text(
    dialect: Dialect,
    text: &str,
    options: &serde_json::Value,
) -> Result<Filter, CompileError> {
    let code = error_code(dialect);
    if text.len() > MAX_POLICY_BYTES {
        return Err(CompileError::one(
            code,
            "",
            format!(
                "the policy is {} bytes; the limit is {MAX_POLICY_BYTES} bytes (256 KiB)",
                text.len()
            ),
        ));
    }
    dialect::check_text(dialect, text, options)?;
    let policy: serde_json::Value = match serde_json::from_str(text) {
        Ok(policy) => policy,
        // The stream dialect's text form (`region = eu-* and n > 5`) is policy text too.
        Err(_) if dialect == Dialect::Stream && !text.trim_start().starts_with(['{', '[']) => {
            serde_json::Value::String(text.trim_end_matches(['\n', '\r']).to_owned())
        }
        Err(e) => {
            let e = error::JsonTextError::new(text, &e);
            return Err(CompileError::one(
                code,
                e.pointer,
                format!("the policy is not valid JSON: {}", e.message),
            ));
        }
    };
    compile(dialect, &policy, options)
}

/// The code a dialect's policy errors carry when no more specific code applies.
pub fn error_code(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Basaltic => dialect::basaltic::CODE,
        Dialect::Sns => dialect::sns::CODE,
        Dialect::EventGrid => dialect::eventgrid::CODE,
        Dialect::Stream => dialect::stream::CODE,
        Dialect::Expr => dialect::expr::CODE,
    }
}

//! The filtervm compiler: dialect front ends, the common IR, the optimizer and codegen to the
//! `filtervm-vm` bytecode, explain, lint, the wire format of filters and subscription sets.
//!
//! `compiler` is everything done per policy, and everything that needs the IR: it imports
//! `filtervm-vm` (to build and run programs) and the VM never imports it. Inside it, the IR
//! ([`ir`]) and what only reads it (the optimizer, codegen) sit below the dialect front ends;
//! within one multi-dialect set ([`subscriptions`]) the per-group engine (`set`) sits below the
//! set. The command-line tool is the `filtervm-cli` crate. `python3 scripts/check_layers.py
//! compiler/src` lists the files that still import each other in a circle (the front ends,
//! their options and the message reading still share one).
//!
//! ```
//! use filtervm_compiler::{compile, compile_text, Dialect, ErrorCode, Evaluator, Options};
//! use filtervm_vm::message::{AttributeType, Message};
//! use serde_json::json;
//!
//! let policy = json!({
//!     "event": ["order.created", "order.paid"],
//!     "amount": [{"numeric": [">=", 100, "<", 1000]}],
//!     "test": [{"exists": false}]
//! });
//! let filter = compile(Dialect::Basaltic, &policy, &Options::from(Dialect::Basaltic)).unwrap();
//!
//! // A message built without JSON...
//! let message = Message::attributes([
//!     ("event", AttributeType::String, "order.paid"),
//!     ("amount", AttributeType::Number, "149.50"),
//! ]);
//! assert!(filter.matches(&message));
//!
//! // ...or from JSON in the dialect's shape, evaluated with reusable buffers.
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
//! let body_scope = Options::from(filtervm_compiler::SnsScope::MessageBody);
//! let body = compile(Dialect::Sns, &json!({"event": ["order.paid"]}), &body_scope).unwrap();
//! assert!(evaluator.matches_bytes(&body, br#"{"event": "order.paid", "items": [[{}]]}"#).unwrap());
//!
//! // Policy text keeps every number exactly as written.
//! let sns = Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap();
//! let filter = compile_text(Dialect::Sns, r#"{"price": [{"numeric": ["<", 1.50]}]}"#, &sns).unwrap();
//! assert_eq!(filter.options(), &sns);
//!
//! // Errors carry a stable code and a JSON Pointer.
//! let err = compile(Dialect::Basaltic, &json!({"a": [{"prefix": ""}]}), &Dialect::Basaltic.into())
//!     .unwrap_err();
//! assert_eq!(err.errors[0].code, ErrorCode::NotificationInvalidFilterPolicy);
//! assert_eq!(err.errors[0].code.as_str(), "NOTIFICATION_INVALID_FILTER_POLICY");
//! assert_eq!(err.errors[0].pointer, "/a/0/prefix");
//! ```

pub mod analysis;
pub mod codegen;
pub mod dialect;
pub mod error;
pub mod explain;
pub mod intern;
pub mod ir;
pub mod lint;
pub mod opt;
pub mod options;
pub mod parts;
pub(crate) mod set;
pub mod shape;
pub mod subscriptions;
pub mod wire;

pub use dialect::{Dialect, message_from_json, message_from_line};
pub use error::{CompileError, ErrorCategory, ErrorCode, MessageError, PolicyError};
pub use filtervm_vm::json::ReadMode;
pub use options::{
    EventGridOptions, EventGridSchema, ExprOptions, Options, OptionsJson, SnsOptions, SnsScope,
};
pub use parts::{Absent, MessagePart, MessageParts};
pub use set::InsertError;
pub use shape::{MessageShape, ReadMessage, ReadMessages, read_message, read_messages};
pub use subscriptions::{
    Applied, Change, GroupMessage, Insertion, LiveSet, Matches, MatchingIds, SetScratch, Snapshot,
    SubscriptionSet, UnjudgedError, UnjudgedGroup,
};

use filtervm_vm::bind::{Bindings, Bound, Judgement};
use filtervm_vm::json;
use filtervm_vm::message::{Attributes, Headers, Message};
use filtervm_vm::program::Program;

/// The largest policy text accepted, in bytes (basaltic B-12, sns rule 44).
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// Arrays and objects nested in one another that policy text may hold (what `serde_json` reads
/// by default, and one level more).
pub const MAX_POLICY_DEPTH: usize = json::DEFAULT_MAX_DEPTH;

/// A compiled filter: its IR (before and after optimization) and its program.
///
/// A filter loaded from bytes ([`Filter::from_bytes`]) has its IR too, unless it was written in
/// the first wire format, which shipped none.
#[derive(Debug, Clone)]
pub struct Filter {
    options: Options,
    /// `None` for a filter loaded from the first wire format (which shipped no IR).
    lowered: Option<ir::Node>,
    /// `None` for a filter loaded from the first wire format.
    optimized: Option<ir::Node>,
    program: Program,
    /// What the filter reads from raw JSON bytes (from its dialect and options).
    json_body: Option<JsonBody>,
}

impl Filter {
    /// The dialect the filter was written in.
    pub fn dialect(&self) -> Dialect {
        self.options.dialect()
    }

    /// The dialect options the filter was compiled with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// A filter loaded from bytes with its IR (checked to compile to `program`).
    pub(crate) fn with_ir(
        options: Options,
        lowered: ir::Node,
        optimized: ir::Node,
        program: Program,
    ) -> Filter {
        Filter {
            json_body: json_body(&options),
            options,
            lowered: Some(lowered),
            optimized: Some(optimized),
            program,
        }
    }

    /// A filter loaded from bytes of the first wire format: its program, dialect and options, and
    /// no IR.
    pub(crate) fn loaded(options: Options, program: Program) -> Filter {
        Filter {
            json_body: json_body(&options),
            options,
            lowered: None,
            optimized: None,
            program,
        }
    }

    /// The IR as lowered from the policy, before optimization (`None` when loaded from the first wire format).
    pub fn lowered_ir(&self) -> Option<&ir::Node> {
        self.lowered.as_ref()
    }

    /// The optimized IR the program was generated from (`None` when loaded from the first wire format).
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
        self.json_body.is_some()
    }

    /// What the filter's dialect reads from raw JSON bytes, if anything.
    #[inline]
    pub(crate) fn json_body(&self) -> Option<JsonBody> {
        self.json_body
    }
}

/// What a dialect with `options` reads from raw JSON bytes, if anything.
pub(crate) fn json_body(options: &Options) -> Option<JsonBody> {
    match options {
        Options::EventGrid(_) => Some(JsonBody::Event),
        Options::EventBridge => Some(JsonBody::EventBridge),
        Options::Sns(sns) if sns.scope == SnsScope::MessageBody => Some(JsonBody::SnsBody),
        _ => None,
    }
}

/// Whether filters with `options` read events ([`JsonBody::Event`]): a document that is an array
/// of events (a batch) is then read event by event ([`read_messages`]).
pub(crate) fn reads_events(options: &Options) -> bool {
    json_body(options) == Some(JsonBody::Event)
}

/// What a dialect reads from raw JSON bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonBody {
    /// An SNS message body (body scope): a body that is not JSON keeps its dialect meaning.
    SnsBody,
    /// An Event Grid event: bytes that are not JSON, or JSON that is not one object, cannot be
    /// judged.
    Event,
    /// An EventBridge event: bytes that are not JSON, a document that is not an object (EB-3),
    /// nesting deeper than 1,000 levels (EB-34) and bodies beyond the binding limits cannot be
    /// judged.
    EventBridge,
}

/// Reusable evaluation buffers: the binding scratch (arena, JSON reader) and registers. Keep one
/// per thread: once warm, matching a stream of messages allocates nothing.
///
/// Entry points by what the broker holds:
///
/// | message | entry point |
/// |---|---|
/// | raw JSON bytes: an SNS body (body scope), an Event Grid or EventBridge event | [`Evaluator::matches_bytes`], [`Evaluator::try_matches_bytes`] |
/// | typed attributes (basaltic, sns attribute scope), borrowed | [`Evaluator::matches_attributes`] |
/// | headers (stream, expr), borrowed | [`Evaluator::matches_headers`] |
/// | an owned [`Message`] | [`Evaluator::matches`], [`Evaluator::try_matches`] |
/// | a message with several parts, borrowed | [`Evaluator::matches_parts`] |
/// | one JSON document in any message shape, as received ([`read_message`]) | [`Evaluator::matches_document`] (or [`Evaluator::matches_parts`] on [`ReadMessage::parts`]) |
/// | the same, as a `serde_json::Value` | [`Evaluator::matches_json`] |
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

    /// Reads the JSON documents and bodies matched from now on in `mode`
    /// ([`ReadMode::Validating`] until set); see [`ReadMode`] for what [`ReadMode::Trusted`]
    /// changes.
    pub fn set_read_mode(&mut self, mode: ReadMode) {
        self.bindings.set_read_mode(mode);
    }

    /// The mode JSON documents and bodies are read in.
    pub fn read_mode(&self) -> ReadMode {
        self.bindings.read_mode()
    }

    /// Binds `message` to the filter's keys and runs its program.
    ///
    /// Fails closed: an SNS body too complex to judge element by element (more rows than
    /// `filtervm_vm::bind::MAX_ROW_SLOTS` allow, sns rule 18) is bound as a non-object and
    /// matches only the empty policy, and an Event Grid event that is not JSON matches nothing,
    /// nor does an EventBridge event that is not a JSON object, nests deeper than 1,000 levels
    /// (EB-3, EB-34) or has an `exists: false` the binder does not judge
    /// ([`dialect::eventbridge::unsupported_error`]); [`Evaluator::try_matches`] reports those
    /// cases instead. An SNS body ([`Message::Body`])
    /// that is not JSON is judged, not failed: by sns rule 14 it matches only the empty policy.
    pub fn matches(&mut self, filter: &Filter, message: &Message) -> bool {
        let bound = self.bindings.bind(filter.program.keys(), message);
        let verdict = filter.program.eval(&bound, &mut self.registers);
        // An EventBridge program needs an object (and the binder gives none it gave up on);
        // the depth limit (EB-34) is the binder's to measure, not the program's.
        verdict
            && (filter.dialect() != Dialect::EventBridge
                || dialect::eventbridge::judged_event(&bound).is_ok())
    }

    /// Like [`Evaluator::matches`], but a message that could not be judged whole is an error:
    /// [`ErrorCode::MessageTooComplex`] for a body beyond the binding limits,
    /// [`ErrorCode::MessageNotJson`] for an Event Grid event that is not JSON,
    /// [`ErrorCode::InvalidMessage`] for one that is JSON but not an object (a batch, a scalar).
    /// (An SNS body that is not JSON has a verdict: sns rule 14.)
    pub fn try_matches(
        &mut self,
        filter: &Filter,
        message: &Message,
    ) -> Result<bool, MessageError> {
        let bound = self.bindings.bind(filter.program.keys(), message);
        let verdict = filter.program.eval(&bound, &mut self.registers);
        judged(filter, &bound)?;
        if let (Some(JsonBody::Event), Message::Body(bytes)) = (filter.json_body(), message)
            && let Some(e) = event_shape_error(bytes)
        {
            return Err(e);
        }
        Ok(verdict)
    }

    /// Matches raw JSON bytes as published: an SNS message body (sns, body scope) or an Event
    /// Grid event. One validating pass over the bytes keeps only what the filter reads (any
    /// depth, lone surrogate escapes read as U+FFFD), with no allocation once warm.
    ///
    /// Errors: [`ErrorCode::MessageNotJson`] for an Event Grid or EventBridge event that is not
    /// JSON; [`ErrorCode::InvalidMessage`] for an Event Grid event that is not an object (an
    /// array of events, a scalar) and for an EventBridge event that is not a JSON object (EB-3);
    /// [`ErrorCode::MessageTooComplex`] for an EventBridge event that nests deeper than 1,000
    /// levels (EB-34) or is beyond the binding limits; [`ErrorCode::MessageShape`] for a filter
    /// whose dialect does not read a JSON body. An SNS
    /// body that is not JSON keeps its dialect meaning (sns rule 14: it matches only the empty
    /// policy); one too complex to judge element by element matches only the empty policy too,
    /// and [`Evaluator::try_matches_bytes`] reports it.
    pub fn matches_bytes(&mut self, filter: &Filter, json: &[u8]) -> Result<bool, MessageError> {
        let kind = filter.json_body().ok_or_else(|| not_json_dialect(filter))?;
        let bound = self.bindings.bind_json(filter.program.keys(), json);
        let verdict = filter.program.eval(&bound, &mut self.registers);
        if kind == JsonBody::Event {
            if let Some(e) = bound.not_json() {
                return Err(not_json_error(filter.dialect(), e));
            }
            if let Some(e) = event_shape_error(json) {
                return Err(e);
            }
        }
        if kind == JsonBody::EventBridge {
            judged(filter, &bound)?;
        }
        Ok(verdict)
    }

    /// Like [`Evaluator::matches_bytes`], but a message that could not be judged whole is an
    /// error too: an SNS body beyond the binding limits ([`ErrorCode::MessageTooComplex`]).
    pub fn try_matches_bytes(
        &mut self,
        filter: &Filter,
        json: &[u8],
    ) -> Result<bool, MessageError> {
        self.judge_bytes(filter, json, false)
    }

    /// [`Evaluator::try_matches_bytes`]; with `document`, bytes that are not JSON are an error
    /// in every dialect (they were given as a JSON document, not as an SNS body's text).
    pub(crate) fn judge_bytes(
        &mut self,
        filter: &Filter,
        json: &[u8],
        document: bool,
    ) -> Result<bool, MessageError> {
        let kind = filter.json_body().ok_or_else(|| not_json_dialect(filter))?;
        let bound = self.bindings.bind_json(filter.program.keys(), json);
        let verdict = filter.program.eval(&bound, &mut self.registers);
        if document && let Some(e) = bound.not_json() {
            return Err(not_json_error(filter.dialect(), e));
        }
        judged(filter, &bound)?;
        if kind == JsonBody::Event
            && let Some(e) = event_shape_error(json)
        {
            return Err(e);
        }
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
        filter
            .program
            .eval_headers(&mut self.bindings, headers, &mut self.registers)
    }

    /// Reads `message` as [`read_message`] reads a JSON document (the parts shape, the AWS SNS
    /// shapes, or any other document as the body itself), then matches the filter's part of it
    /// with [`Evaluator::matches_parts`]: `{"store": "x"}` is an SNS body for a body-scope
    /// filter, and a message without attributes for a filter on attributes.
    ///
    /// Prefer [`Evaluator::matches_document`] on the bytes as received: a `serde_json::Value`
    /// holds numbers as `serde_json` reads them.
    pub fn matches_json(
        &mut self,
        filter: &Filter,
        message: &serde_json::Value,
    ) -> Result<bool, MessageError> {
        let json = serde_json::to_vec(message).map_err(|e| MessageError::new("", e.to_string()))?;
        self.matches_document(filter, &json)
    }

    /// Matches one JSON document as received: read as [`read_message`] reads it, no further than
    /// the filter needs, and matched by its parts ([`Evaluator::matches_parts`]). The document is
    /// one message: an Event Grid array of events given whole is an error (split it with
    /// [`read_messages`]).
    pub fn matches_document(&mut self, filter: &Filter, json: &[u8]) -> Result<bool, MessageError> {
        let message = shape::read_for(json, filter.options(), self.bindings.read_mode())?;
        self.matches_parts(filter, &message.parts())
    }
}

/// `Ok` when `bound` was judged whole; the error saying why not otherwise. An SNS body that is
/// not JSON is judged: sns rule 14 gives it a verdict (only the empty policy matches it).
fn judged(filter: &Filter, bound: &Bound<'_>) -> Result<(), MessageError> {
    if filter.dialect() == Dialect::EventBridge && bound.not_json().is_none() {
        dialect::eventbridge::judged_event(bound)?;
    }
    match bound.judgement() {
        Judgement::Judged => Ok(()),
        Judgement::NotJson(_) if filter.dialect() == Dialect::Sns => Ok(()),
        Judgement::Overflowed => Err(MessageError {
            code: ErrorCode::MessageTooComplex,
            pointer: String::new(),
            message: format!(
                "the body has too many combinations of array elements to judge element by element \
                 (more than {} slots); it was treated as not matching",
                filtervm_vm::bind::MAX_ROW_SLOTS
            ),
        }),
        Judgement::NotJson(e) => Err(not_json_error(filter.dialect(), e)),
        Judgement::Unsupported => Err(dialect::eventbridge::unsupported_error()),
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
        code: ErrorCode::MessageNotJson,
        pointer: String::new(),
        message,
    }
}

/// The error of an event (a filter's JSON body of the kind [`JsonBody::Event`]) that is JSON but
/// not one object: an Event Grid array of events (a batch, to be split into its events) or a
/// scalar. `None` for an object. The bytes must be JSON (their first byte tells the kind).
pub(crate) fn event_shape_error(bytes: &[u8]) -> Option<MessageError> {
    let first = bytes
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    let message = match first {
        b'{' => return None,
        b'[' => "the event is a JSON array, and an event is one JSON object: an array of events \
                 (how Event Grid delivers them, a CloudEvents batch) is matched event by event \
                 (split it with `read_messages` in Rust, `filtervm.read_events` in Python, \
                 `fvm_read_events` in C)"
            .to_owned(),
        other => {
            let what = match other {
                b'"' => "a string",
                b'n' => "null",
                b't' | b'f' => "a boolean",
                _ => "a number",
            };
            format!("the event is {what}, and an event is one JSON object")
        }
    };
    Some(MessageError::new("", message))
}

/// The error of raw JSON bytes given to a filter that reads attributes or headers.
fn not_json_dialect(filter: &Filter) -> MessageError {
    not_json_dialect_error(filter.dialect())
}

/// [`not_json_dialect`] for a dialect.
pub(crate) fn not_json_dialect_error(dialect: Dialect) -> MessageError {
    let hint = if dialect == Dialect::Sns {
        " (compile with --options '{\"scope\":\"MessageBody\"}' to filter on the body)"
    } else {
        ""
    };
    MessageError {
        code: ErrorCode::MessageShape,
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

/// Compiles a policy given as a `serde_json` value (for example built with `serde_json::json!`).
///
/// The value is converted to [`json::Value`] first; numbers keep the text `serde_json` gives
/// them, so a policy whose numbers must stay exact (`1e400`, `9007199254740993.5`) is better
/// given as text ([`compile_text`]). `options` must be `dialect`'s (else
/// [`ErrorCode::InvalidOptions`]); `Options::from(dialect)` gives the defaults.
pub fn compile(
    dialect: Dialect,
    policy: &serde_json::Value,
    options: &Options,
) -> Result<Filter, CompileError> {
    check_options(dialect, options)?;
    let too_deep = || {
        CompileError::one(
            dialect.invalid_code(),
            "",
            format!("the policy nests arrays and objects deeper than {MAX_POLICY_DEPTH} levels"),
        )
    };
    let mut cut = false;
    let policy = policy_from_serde(policy, MAX_POLICY_DEPTH, &mut cut);
    // expr rejects nesting by its own rule (E2, `max_depth` at most 62 expressions, 126 JSON
    // levels): its front end sees the tree down to the cut and says EXPR_TOO_DEEP.
    if cut && dialect != Dialect::Expr {
        return Err(too_deep());
    }
    match compile_value(dialect, &policy, options) {
        Ok(_) if cut => Err(too_deep()),
        compiled => compiled,
    }
}

/// Compiles a policy read by [`filtervm_vm::json`] (numbers in their exact text).
pub fn compile_value(
    dialect: Dialect,
    policy: &json::Value,
    options: &Options,
) -> Result<Filter, CompileError> {
    check_options(dialect, options)?;
    let lowered = dialect::lower(dialect, policy, options)?;
    let optimized = opt::optimize_copy(&lowered);
    let program = generate(&optimized)?;
    Ok(Filter {
        json_body: json_body(options),
        options: options.clone(),
        lowered: Some(lowered),
        optimized: Some(optimized),
        program,
    })
}

/// Compiles policy text: checks the size limit (256 KiB), reads the JSON (numbers keep their
/// exact text; lone surrogate escapes are errors naming their line, column and JSON Pointer),
/// then compiles it. For `stream`, text that is not JSON is the text form
/// (`region = eu-* and n > 5`).
pub fn compile_text(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<Filter, CompileError> {
    let policy = read_policy_text(dialect, text, options)?;
    compile_value(dialect, &policy, options)
}

/// Reads policy text as [`compile_text`] reads it, without compiling it: the size limit, the JSON
/// (numbers in their exact text), and for `stream` the text form as a JSON string. The value is
/// the policy explain and lint show ([`explain::explain_parts`], [`lint::lint_filter`]), and
/// [`compile_value`] of it is [`compile_text`] of the text.
pub fn read_policy_text(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<json::Value, CompileError> {
    check_options(dialect, options)?;
    dialect::parse_policy_text(dialect, text, options)
}

/// Rejects options of another dialect, and options out of range.
fn check_options(dialect: Dialect, options: &Options) -> Result<(), CompileError> {
    if options.dialect() != dialect {
        return Err(CompileError::one(
            ErrorCode::InvalidOptions,
            "",
            format!(
                "these are {} options ({options}), but the policy is {dialect}: give {dialect} \
                 options (`Options::from(Dialect)` for its defaults)",
                options.dialect()
            ),
        ));
    }
    options.check()
}

/// Generates and verifies the program of an optimized IR tree; a program the verifier rejects
/// is a bug ([`ErrorCode::InternalCodegen`]).
fn generate(optimized: &ir::Node) -> Result<Program, CompileError> {
    codegen::generate(optimized).map_err(|e| {
        CompileError::one(
            ErrorCode::InternalCodegen,
            "",
            format!("codegen produced an invalid program: {e}"),
        )
    })
}

/// `value` as a policy value, with arrays and objects more than `levels` deep cut off (as
/// `null`, and `cut` set): the recursion is bounded whatever the depth of `value`.
fn policy_from_serde(value: &serde_json::Value, levels: usize, cut: &mut bool) -> json::Value {
    match value {
        serde_json::Value::Array(_) | serde_json::Value::Object(_) if levels == 0 => {
            *cut = true;
            json::Value::Null
        }
        serde_json::Value::Array(items) => json::Value::Array(
            items
                .iter()
                .map(|item| policy_from_serde(item, levels - 1, cut))
                .collect(),
        ),
        serde_json::Value::Object(members) => json::Value::Object(
            members
                .iter()
                .map(|(name, member)| (name.clone(), policy_from_serde(member, levels - 1, cut)))
                .collect(),
        ),
        scalar => json::Value::from(scalar),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Node, NumSource, Pred};
    use filtervm_vm::key::Key;
    use filtervm_vm::program::Interval;

    /// Generating a program with a NaN interval bound (no policy lowers to one): the code of
    /// the error.
    pub(crate) fn verifier_rejects_a_nan_bound() -> ErrorCode {
        let nan = Interval {
            lo: f64::NAN,
            ..Interval::ALL
        };
        let node = Node::test(
            Key::Header("a".into()),
            Pred::Num {
                source: NumSource::Text,
                ranges: vec![nan],
            },
            "",
        );
        let e = generate(&node).unwrap_err();
        assert!(e.to_string().contains("NaN"), "{e}");
        e.code().unwrap()
    }

    #[test]
    fn a_program_the_verifier_rejects_is_an_internal_error() {
        assert_eq!(verifier_rejects_a_nan_bound(), ErrorCode::InternalCodegen);
    }

    #[test]
    fn options_of_another_dialect_are_rejected() {
        let e = compile_text(Dialect::Basaltic, "{}", &Options::from(Dialect::Sns)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidOptions));
        assert!(e.to_string().contains("these are sns options"), "{e}");
    }

    #[test]
    fn serde_values_deeper_than_the_text_limit_are_rejected_without_recursing() {
        let deep = |levels: usize, leaf: serde_json::Value| {
            let mut v = leaf;
            for _ in 0..levels {
                v = serde_json::Value::Array(vec![v]);
            }
            v
        };
        let sns = Options::from(Dialect::Sns);
        let value = deep(200_000, serde_json::json!({"a": ["x"]}));
        let e = compile(Dialect::Sns, &value, &sns).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::SnsSyntaxError));
        assert!(e.to_string().contains("deeper than 128 levels"), "{e}");
        // serde_json drops a value this deep recursively; leak it rather than overflow the stack.
        std::mem::forget(value);
        // 128 levels are read (and this one is not an object policy).
        let e = compile(Dialect::Sns, &deep(127, serde_json::json!([])), &sns).unwrap_err();
        assert!(!e.to_string().contains("deeper than"), "{e}");
        let ok = serde_json::json!({"a": [{"numeric": [">", 1]}]});
        assert!(compile(Dialect::Sns, &ok, &sns).is_ok());
        // expr says its own depth error (E2) for a deep expression chain.
        // Built by moving: `json!` would serialize the inner value again on every level.
        let mut chain = serde_json::json!({"key": "a", "op": "exists"});
        for _ in 0..10_000 {
            let mut node = serde_json::Map::new();
            node.insert("op".into(), "NOT".into());
            node.insert("exp".into(), serde_json::Value::Array(vec![chain]));
            chain = serde_json::Value::Object(node);
        }
        let e = compile(Dialect::Expr, &chain, &Options::from(Dialect::Expr)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::ExprTooDeep));
        assert_eq!(e.errors[0].pointer, "/exp/0".repeat(32));
        std::mem::forget(chain);
    }
}

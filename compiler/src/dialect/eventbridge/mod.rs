//! The `eventbridge` dialect: Amazon EventBridge event patterns, as aws/event-ruler evaluates
//! them (`docs/dialects/eventbridge-patterns.md`, rules EB-1..EB-35).
//!
//! A pattern mirrors the event's nesting: each member maps a name to a nested object or to a
//! non-empty list of alternatives (ORed); members are ANDed; `$or` offers alternative objects.
//! The message is the event itself, a JSON object (a message that is not one is an error, EB-3).
//! The dialect takes no options.
//!
//! - [`parse`]: structure and operators in event-ruler's order, with its wording (EB-31);
//! - [`branches`]: `$or` kept factored instead of expanded (EB-5, EB-6), the later occurrence of
//!   a path replacing the earlier (EB-7);
//! - [`limits`]: at most 256 paths in a branch (EB-32), then the wildcard complexity (EB-33);
//! - [`lower`]: the IR, array consistency and `exists: false` made explicit (EB-8..EB-10).
//!
//! # Errors
//!
//! EventBridge answers every invalid pattern with one kind of error and tells them apart in its
//! wording; here each kind has its own code, and every message contains event-ruler's text (EB-31
//! lists them) with a JSON Pointer to the offending member, operator or element. The first error
//! in document order is reported, as event-ruler does.
//!
//! | code | when | example |
//! |---|---|---|
//! | [`EVENTBRIDGE_SYNTAX_ERROR`](crate::ErrorCode::EventBridgeSyntaxError) | not JSON, or not shaped like a pattern (EB-4, EB-5, EB-31) | `{}`: "Empty objects are not allowed"; `{"a": []}`: "Empty arrays are not allowed" |
//! | [`EVENTBRIDGE_TYPE_ERROR`](crate::ErrorCode::EventBridgeTypeError) | an operand of the wrong JSON type | `{"a": [{"prefix": 1}]}`: "prefix match pattern must be a string" |
//! | [`EVENTBRIDGE_UNKNOWN_OPERATOR`](crate::ErrorCode::EventBridgeUnknownOperator) | an operator that does not exist | `{"a": [{"EXISTS": true}]}`: "Unrecognized match type EXISTS (did you mean `exists`?)" |
//! | [`EVENTBRIDGE_INVALID_VALUE`](crate::ErrorCode::EventBridgeInvalidValue) | an operand of the right type but a bad value | `{"a": [{"cidr": "10.0.0.1/32"}]}`: "IPv4 mask bits must be < 32"; `{"a": [9007199254740993, {"numeric": ["<", 9007199254740993]}]}`: "Cannot compare number : 9007199254740993" |
//! | [`EVENTBRIDGE_LIMIT_EXCEEDED`](crate::ErrorCode::EventBridgeLimitExceeded) | EB-32, EB-33, `$or` replacement chains beyond what compiling expands ([`branches::MAX_EXPANDED_LEAVES`]), pattern text over 256 KiB or nested deeper than 128 levels (at the first container too deep; event-ruler reads patterns to 1,000, EB-34 bounds events only) | 257 fields: "exceeds max value of 256"; `{"a": [{"wildcard": "*:*:*:*:*:b/*"}]}`: "Rule is too complex ..." |
//!
//! # Decisions
//!
//! Where this dialect departs from event-ruler the spec says so (EB-35); beyond it:
//!
//! - `exists: false` is judged with the binder's rows (one element chosen per array of objects
//!   read by two keys; [`lower`]), a value of an earlier-sorted path standing in for the element
//!   it lies in. Two kinds of event break that: one that reaches a path by two routes (a
//!   repeated member name, or `{"r.b": ..}` beside `{"r": [..]}`) where a value on one route
//!   would stand in for an element of an array on the other, below which an absence is decided;
//!   and one where a scalar in an array nested in another (`{"r": [["x"], {"x": 1}]}`, EB-3)
//!   could fix that array's element for an absence below it (`filtervm_vm::bind` module `body`,
//!   "Where rows fall short"). The binder says so ([`Judgement::Unsupported`]) and such an event
//!   is judged by EB-8's search over the filter's pattern, which a filter keeps exactly when it
//!   judges an absence against array positions ([`judges_positions`], [`exact`]). Only a filter
//!   loaded from bytes written before patterns were kept still answers
//!   [`ErrorCode::MessageTooComplex`] ([`unsupported_error`]) there.

pub mod branches;
pub mod exact;
pub mod limits;
pub mod lint;
pub mod lower;
pub mod parse;

use crate::error::{CompileError, ErrorCode, MessageError};
use crate::ir::Node;
use filtervm_vm::bind::{Bound, Judgement};
use filtervm_vm::json::Value;
use filtervm_vm::key::Key;

/// The deepest nesting of arrays and objects an event may have (EB-34: the JSON reader
/// event-ruler uses refuses deeper documents).
pub const MAX_EVENT_DEPTH: usize = 1000;

/// The error of an event that cannot be judged for what it is (not what it holds): a JSON
/// document that is not an object (EB-3, [`ErrorCode::InvalidMessage`]), or one nested deeper
/// than [`MAX_EVENT_DEPTH`] ([`ErrorCode::MessageTooComplex`]), or one whose `exists: false`
/// the binder does not judge ([`unsupported_error`]). Bytes that are not JSON and bodies beyond
/// the binding limits have their own errors.
pub fn judged_event(bound: &Bound<'_>) -> Result<(), MessageError> {
    judged_shape(bound)?;
    if bound.judgement() == &Judgement::Unsupported {
        return Err(unsupported_error());
    }
    Ok(())
}

/// [`judged_event`] without the binder's judgement: the error of an event that is not a JSON
/// object (EB-3) or nests deeper than [`MAX_EVENT_DEPTH`] (EB-34). An event that passes and
/// that the binder's rows could not judge ([`Judgement::Unsupported`]) is judged on the
/// filter's kept pattern ([`exact::Pattern::matches`]).
pub fn judged_shape(bound: &Bound<'_>) -> Result<(), MessageError> {
    if !bound.root_is_object() {
        return Err(MessageError::new(
            "",
            "an EventBridge event must be a JSON object (EB-3); this one is another JSON value",
        ));
    }
    if bound.deepest() > MAX_EVENT_DEPTH {
        return Err(MessageError {
            code: ErrorCode::MessageTooComplex,
            pointer: String::new(),
            message: format!(
                "the event nests arrays and objects {} levels deep; the limit is \
                {MAX_EVENT_DEPTH} (EB-34)",
                bound.deepest()
            ),
        });
    }
    Ok(())
}

/// The error of an event whose `exists: false` the binder's rows cannot judge
/// ([`Judgement::Unsupported`]) for a filter without its kept pattern (loaded from bytes written
/// before patterns were kept; every compiled filter that can meet such an event keeps it).
pub fn unsupported_error() -> MessageError {
    MessageError {
        code: ErrorCode::MessageTooComplex,
        pointer: String::new(),
        message: "the event reaches a field of an `exists: false` judged against array positions \
                  (EB-10) by two routes (a repeated member name, or a dotted name beside its \
                  nested spelling), or holds scalars in nested arrays where that absence is \
                  decided, and the filter was saved without its pattern (metadata version 2): \
                  compile it again to judge such events; treated as not matching"
            .to_owned(),
    }
}

/// Whether `program` judges an `exists: false` against array positions fixed by earlier paths
/// (a [`Key::FieldPath`] with levels, EB-10): only then can the binder's rows fall short
/// ([`Judgement::Unsupported`]) and the filter needs its pattern kept ([`exact::Pattern`]).
pub fn judges_positions(program: &filtervm_vm::program::Program) -> bool {
    program
        .keys()
        .keys()
        .iter()
        .any(|k| matches!(k, Key::FieldPath(_, levels) if *levels != u32::MAX))
}

/// Most IR nodes a pattern may lower to (a pattern is bounded by its text; this bounds what
/// `exists: false` formulas and distributed `$or`s make of it).
pub const MAX_IR_NODES: usize = 1 << 19;

/// Parses pattern text (as `compile_text` does: 256 KiB at most, repeated member names kept in
/// order, EB-7).
pub fn parse_text(text: &str) -> Result<Value, CompileError> {
    super::parse_policy_text(
        super::Dialect::EventBridge,
        text,
        &crate::Options::EventBridge,
    )
}

/// Parses and validates a pattern, in the order of EB-31, EB-32, EB-33: its normalized branches
/// and the parsed members.
pub fn validate(policy: &Value) -> Result<(branches::Seq, parse::Pattern), CompileError> {
    let pattern = parse::Parser::default().pattern(policy)?;
    let seq = branches::normalize(&pattern.items)?;
    limits::check_paths(&seq)?;
    limits::check_wildcards(&pattern.items)?;
    Ok((seq, pattern))
}

/// Parses, validates and lowers. A pattern is a JSON object; any other value, a string included,
/// is "Filter is not an object" (EB-31), as event-ruler says.
pub(crate) fn lower(policy: &Value) -> Result<Node, CompileError> {
    let (seq, _) = validate(policy)?;
    let node = lower::lower_pattern(&seq);
    if node.size() > MAX_IR_NODES {
        return Err(CompileError::one(
            ErrorCode::EventBridgeLimitExceeded,
            "",
            format!(
                "the pattern lowers to {} conditions; the limit is {MAX_IR_NODES}",
                node.size()
            ),
        ));
    }
    Ok(node)
}

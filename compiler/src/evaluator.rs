//! The evaluator ([`Evaluator`]): reusable buffers that bind a message to a filter's keys and run
//! its program, from every form a broker holds a message in. Above the compiled filter and the
//! message reading; below the subscription sets.

use crate::dialect::{self, Dialect};
use crate::error::{ErrorCode, MessageError};
use crate::filter::Filter;
use crate::message::{event_shape_error, not_json_dialect_error, not_json_error};
use crate::options::JsonBody;
use crate::parts::{MessagePart, MessageParts, NO_ATTRIBUTES, NO_HEADERS, SelectedPart};
use crate::shape;
use filtervm_vm::bind::{Bindings, Bound, Judgement};
use filtervm_vm::json::ReadMode;
use filtervm_vm::message::{Attributes, Headers, Message};

impl Filter {
    /// Whether `message` matches (allocates fresh buffers; see [`Evaluator`] to reuse them).
    pub fn matches(&self, message: &Message) -> bool {
        Evaluator::new().matches(self, message)
    }
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
/// | one JSON document in any message shape, as received ([`read_message`](crate::read_message)) | [`Evaluator::matches_document`] (or [`Evaluator::matches_parts`] on [`ReadMessage::parts`](crate::ReadMessage::parts)) |
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
    /// (EB-3, EB-34) or has an `exists: false` the binder does not judge and the filter
    /// was saved without its pattern
    /// ([`dialect::eventbridge::unsupported_error`]); [`Evaluator::try_matches`] reports those
    /// cases instead. An SNS body ([`Message::Body`])
    /// that is not JSON is judged, not failed: by sns rule 14 it matches only the empty policy.
    pub fn matches(&mut self, filter: &Filter, message: &Message) -> bool {
        let bound = self.bindings.bind(filter.program().keys(), message);
        let verdict = filter.program().eval(&bound, &mut self.registers);
        // An EventBridge program needs an object (and the binder gives none it gave up on);
        // the depth limit (EB-34) is the binder's to measure, not the program's.
        if filter.dialect() == Dialect::EventBridge
            && dialect::eventbridge::judged_event(&bound).is_err()
        {
            return exactly(filter, &bound, || message_bytes(message))
                .is_some_and(|exact| exact.unwrap_or(false));
        }
        verdict
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
        let bound = self.bindings.bind(filter.program().keys(), message);
        let verdict = filter.program().eval(&bound, &mut self.registers);
        if let Err(e) = judged(filter, &bound) {
            return exactly(filter, &bound, || message_bytes(message)).unwrap_or(Err(e));
        }
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
        let bound = self.bindings.bind_json(filter.program().keys(), json);
        let verdict = filter.program().eval(&bound, &mut self.registers);
        if kind == JsonBody::Event {
            if let Some(e) = bound.not_json() {
                return Err(not_json_error(filter.dialect(), e));
            }
            if let Some(e) = event_shape_error(json) {
                return Err(e);
            }
        }
        if kind == JsonBody::EventBridge
            && let Err(e) = judged(filter, &bound)
        {
            return exactly(filter, &bound, || Some(json.into())).unwrap_or(Err(e));
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
        let bound = self.bindings.bind_json(filter.program().keys(), json);
        judge_bound(filter, kind, &bound, &mut self.registers, json, document)
    }

    /// The verdict of one JSON document as received, in one read, when the filter reads the
    /// body and the document is the body itself: what [`Evaluator::matches_document`] and
    /// matching each message of [`read_messages`](crate::read_messages) give (the same verdict,
    /// the same error), without first reading the document's top level for its shape. That is
    /// known for an EventBridge filter (the event is the document, EB-1), and for the others
    /// when the document is an object whose first member's name belongs to no message shape
    /// ([`crate::read_message`]: `attributes`, `headers`, `body`, the AWS SNS names): an event
    /// or an SNS body written as a log line, which the binder's own read notes. `None` for any
    /// other document and for filters on attributes or headers: read it by its shape.
    pub fn matches_body_document(
        &mut self,
        filter: &Filter,
        json: &[u8],
    ) -> Option<Result<bool, MessageError>> {
        if MessagePart::of(filter.options()) != MessagePart::Body {
            return None;
        }
        if filter.dialect() == Dialect::EventBridge {
            return Some(self.judge_bytes(filter, json, true));
        }
        let kind = filter.json_body()?;
        let bound = self.bindings.bind_json_noting_first_name(
            filter.program().keys(),
            json,
            shape::is_shape_name,
        );
        if !bound.first_name_unlisted() {
            return None;
        }
        Some(judge_bound(
            filter,
            kind,
            &bound,
            &mut self.registers,
            json,
            true,
        ))
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
            .bind_attributes(filter.program().keys(), attributes);
        filter.program().eval(&bound, &mut self.registers)
    }

    /// Matches headers as the broker holds them (stream, expr): any [`Headers`] — a slice of
    /// `(name, value)` pairs, a map of name → value or → `Vec` of values (multi-valued), ...
    /// Values are borrowed; a value that is not UTF-8 satisfies no string test.
    pub fn matches_headers<H: Headers + ?Sized>(&mut self, filter: &Filter, headers: &H) -> bool {
        filter
            .program()
            .eval_headers(&mut self.bindings, headers, &mut self.registers)
    }

    /// Reads `message` as [`read_message`](crate::read_message) reads a JSON document (the parts shape, the AWS SNS
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

    /// Matches one JSON document as received: read as [`read_message`](crate::read_message) reads it, no further than
    /// the filter needs, and matched by its parts ([`Evaluator::matches_parts`]). The document is
    /// one message: an Event Grid array of events given whole is an error (split it with
    /// [`read_messages`](crate::read_messages)).
    pub fn matches_document(&mut self, filter: &Filter, json: &[u8]) -> Result<bool, MessageError> {
        if let Some(verdict) = self.matches_body_document(filter, json) {
            return verdict;
        }
        let message = shape::read_for(json, filter.options(), self.bindings.read_mode())?;
        self.matches_parts(filter, &message.parts())
    }
}

/// The verdict of JSON bytes bound for `filter` (which reads them as `kind`):
/// [`Evaluator::try_matches_bytes`]'s, and with `document`, bytes that are not JSON are an error
/// in every dialect.
#[inline(always)]
fn judge_bound(
    filter: &Filter,
    kind: JsonBody,
    bound: &Bound<'_>,
    registers: &mut Vec<bool>,
    json: &[u8],
    document: bool,
) -> Result<bool, MessageError> {
    let verdict = filter.program().eval(bound, registers);
    if document && let Some(e) = bound.not_json() {
        return Err(not_json_error(filter.dialect(), e));
    }
    if let Err(e) = judged(filter, bound) {
        return exactly(filter, bound, || Some(json.into())).unwrap_or(Err(e));
    }
    if kind == JsonBody::Event
        && let Some(e) = event_shape_error(json)
    {
        return Err(e);
    }
    Ok(verdict)
}

/// The exact verdict of an EventBridge event whose `exists: false` the binder's rows could not
/// judge ([`Judgement::Unsupported`]), when the filter keeps its pattern: EB-8's search
/// ([`dialect::eventbridge::exact`]) on the event's bytes. `None` for every other outcome of
/// binding (its error stands). Kept out of line: it runs only when binding gave up.
#[cold]
#[inline(never)]
pub(crate) fn exactly<'m>(
    filter: &Filter,
    bound: &Bound<'_>,
    bytes: impl FnOnce() -> Option<std::borrow::Cow<'m, [u8]>>,
) -> Option<Result<bool, MessageError>> {
    let pattern = filter.pattern()?;
    if bound.judgement() != &Judgement::Unsupported
        || !bound.root_is_object()
        || bound.deepest() > dialect::eventbridge::MAX_EVENT_DEPTH
    {
        return None;
    }
    Some(pattern.matches_bytes(&bytes()?))
}

/// The JSON bytes of an owned message (a `serde_json` value written out), for
/// [`exactly`].
pub(crate) fn message_bytes(message: &Message) -> Option<std::borrow::Cow<'_, [u8]>> {
    match message {
        Message::Body(bytes) => Some(bytes.as_slice().into()),
        Message::Json(value) => serde_json::to_vec(value).ok().map(Into::into),
        _ => None,
    }
}

/// `Ok` when `bound` was judged whole; the error saying why not otherwise. An SNS body that is
/// not JSON is judged: sns rule 14 gives it a verdict (only the empty policy matches it).
pub(crate) fn judged(filter: &Filter, bound: &Bound<'_>) -> Result<(), MessageError> {
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

impl Evaluator {
    /// Matches a message given by its parts: the filter reads its part (see
    /// [`MessagePart::of`](crate::MessagePart::of)) and nothing else.
    ///
    /// A message without the part is judged where the dialect gives that a meaning
    /// ([`Absent::of`](crate::Absent::of): a message with no attributes has the empty attribute set), and is an
    /// error otherwise. Errors, never a quiet `false`: [`ErrorCode::MessageShape`] when the
    /// message lacks the part (with a hint), [`ErrorCode::InvalidMessage`] for a part that breaks
    /// the dialect's rules (a `stream` header given several values, a basaltic attribute that is
    /// not a String or a Number, an Event Grid event that is not a JSON object) or that the
    /// broker could not read, [`ErrorCode::MessageTooComplex`] for a body beyond the binding
    /// limits, [`ErrorCode::MessageNotJson`] for an Event Grid event (or a whole document read
    /// by [`crate::read_message`]) that is not JSON. An SNS body given as such that is not JSON
    /// keeps its dialect meaning: it matches only policies that read nothing from the body.
    pub fn matches_parts<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &mut self,
        filter: &Filter,
        message: &MessageParts<'_, A, H>,
    ) -> Result<bool, MessageError> {
        match message.select(filter.options())? {
            SelectedPart::Body { bytes, strict } => self.judge_bytes(filter, bytes, strict),
            SelectedPart::Attributes(Some(attributes)) => {
                Ok(self.matches_attributes(filter, attributes))
            }
            SelectedPart::Attributes(None) => Ok(self.matches_attributes(filter, NO_ATTRIBUTES)),
            SelectedPart::Headers(Some(headers)) => Ok(self.matches_headers(filter, headers)),
            SelectedPart::Headers(None) => Ok(self.matches_headers(filter, NO_HEADERS)),
        }
    }
}

/// The error of raw JSON bytes given to a filter that reads attributes or headers.
fn not_json_dialect(filter: &Filter) -> MessageError {
    not_json_dialect_error(filter.dialect())
}

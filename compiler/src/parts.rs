//! A published message as a broker holds it: up to three parts, each borrowed.
//!
//! Each filter reads one part, fixed by its dialect and options ([`MessagePart`]):
//!
//! | filter | reads |
//! |---|---|
//! | `basaltic`, `sns` (`MessageAttributes` scope, the default) | typed attributes |
//! | `sns` (`MessageBody` scope), `eventgrid` | the JSON body (an SNS body, an Event Grid event), raw bytes |
//! | `stream`, `expr` | headers |
//!
//! A [`MessageParts`] carries what the broker has; a filter whose part is missing is an error
//! ([`ErrorCode::MessageShape`]) naming the likely fix, never a quiet "no match".
//!
//! ```
//! use filtervm_compiler::{compile_text, Dialect, Evaluator, MessageParts, Options, SnsScope};
//! use filtervm_vm::message::AttributeType;
//!
//! let on_body = compile_text(
//!     Dialect::Sns, r#"{"event": ["order.paid"]}"#, &Options::from(SnsScope::MessageBody),
//! ).unwrap();
//! let on_attributes = compile_text(
//!     Dialect::Sns, r#"{"event": ["order.paid"]}"#, &Options::from(Dialect::Sns),
//! ).unwrap();
//!
//! let attributes = [("event", AttributeType::String, "order.paid")];
//! let message = MessageParts::body(br#"{"event": "order.created"}"#).with_attributes(&attributes);
//!
//! let mut evaluator = Evaluator::new();
//! assert!(!evaluator.matches_parts(&on_body, &message).unwrap());
//! assert!(evaluator.matches_parts(&on_attributes, &message).unwrap());
//!
//! // A body alone cannot be judged by a filter on attributes: an error with a hint.
//! let body_only = MessageParts::body(br#"{"event": "order.paid"}"#);
//! let e = evaluator.matches_parts(&on_attributes, &body_only).unwrap_err();
//! assert_eq!(e.code.as_str(), "MESSAGE_SHAPE");
//! assert!(e.message.contains(r#"{"scope":"MessageBody"}"#));
//! ```

use crate::error::{ErrorCode, MessageError};
use crate::options::{Options, SnsScope};
use crate::{Evaluator, Filter};
use filtervm_vm::message::{Attribute, Attributes, Header, Headers};
use std::fmt;

/// The part of a message a filter reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessagePart {
    /// Typed attributes: name, declared type, value (`basaltic`, `sns` in attribute scope).
    Attributes,
    /// The JSON body as raw bytes: an SNS message body (`sns` in body scope), an Event Grid
    /// event (`eventgrid`).
    Body,
    /// Headers, each with one or more values (`stream`, `expr`).
    Headers,
}

impl MessagePart {
    /// Every part.
    pub const ALL: [MessagePart; 3] = [
        MessagePart::Attributes,
        MessagePart::Body,
        MessagePart::Headers,
    ];

    /// The part filters compiled with `options` read.
    pub fn of(options: &Options) -> MessagePart {
        match options {
            Options::Sns(o) if o.scope == SnsScope::MessageBody => MessagePart::Body,
            Options::Sns(_) | Options::Basaltic => MessagePart::Attributes,
            Options::EventGrid(_) | Options::EventBridge => MessagePart::Body,
            Options::Stream | Options::Expr(_) => MessagePart::Headers,
        }
    }

    /// The part's name as errors and the CLI show it: `attributes`, `body`, `headers`.
    pub fn name(self) -> &'static str {
        match self {
            MessagePart::Attributes => "attributes",
            MessagePart::Body => "body",
            MessagePart::Headers => "headers",
        }
    }
}

impl fmt::Display for MessagePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A published message: its JSON body (raw bytes), typed attributes and headers, each optional
/// and borrowed from the broker's own types (any [`Attributes`], any [`Headers`]). Nothing is
/// copied; see the [module documentation](self) for which filter reads which part.
pub struct MessageParts<'m, A: Attributes + ?Sized = [Attribute], H: Headers + ?Sized = [Header]> {
    body: Option<&'m [u8]>,
    /// Whether the body is a whole JSON document read as the body ([`crate::read_message`]):
    /// bytes that are not JSON are then an error, not an SNS body that is not JSON.
    body_is_document: bool,
    attributes: Option<&'m A>,
    headers: Option<&'m H>,
}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> Clone for MessageParts<'_, A, H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> Copy for MessageParts<'_, A, H> {}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> fmt::Debug for MessageParts<'_, A, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageParts")
            .field("body_bytes", &self.body.map(<[u8]>::len))
            .field("attributes", &self.attributes.map(|a| a.entries().count()))
            .field("headers", &self.headers.map(|h| h.entries().count()))
            .finish()
    }
}

impl Default for MessageParts<'_> {
    fn default() -> Self {
        MessageParts::new()
    }
}

impl<'m> MessageParts<'m> {
    /// A message with no part yet; add parts with the `with_*` methods.
    pub fn new() -> MessageParts<'m> {
        MessageParts::empty()
    }

    /// A message of one JSON body (raw bytes as published).
    pub fn body(body: &'m [u8]) -> MessageParts<'m> {
        MessageParts::new().with_body(body)
    }

    /// A message of typed attributes only.
    pub fn attributes<B: Attributes + ?Sized>(attributes: &'m B) -> MessageParts<'m, B> {
        MessageParts::new().with_attributes(attributes)
    }

    /// A message of headers only.
    pub fn headers<G: Headers + ?Sized>(headers: &'m G) -> MessageParts<'m, [Attribute], G> {
        MessageParts::new().with_headers(headers)
    }
}

impl<'m, A: Attributes + ?Sized, H: Headers + ?Sized> MessageParts<'m, A, H> {
    /// A message with no part yet, whose attributes and headers will be of the types `A` and
    /// `H` ([`MessageParts::new`] is this for the default types).
    pub fn empty() -> MessageParts<'m, A, H> {
        MessageParts {
            body: None,
            body_is_document: false,
            attributes: None,
            headers: None,
        }
    }

    /// This message with its JSON body.
    pub fn with_body(mut self, body: &'m [u8]) -> MessageParts<'m, A, H> {
        self.body = Some(body);
        self.body_is_document = false;
        self
    }

    /// This message with a body that is a whole JSON document in none of the message shapes
    /// ([`crate::read_message`]): it must be JSON, and a filter that needs another part is told
    /// that the document was read as a body.
    pub(crate) fn with_document_body(mut self, body: &'m [u8]) -> MessageParts<'m, A, H> {
        self.body = Some(body);
        self.body_is_document = true;
        self
    }

    /// This message with its typed attributes.
    pub fn with_attributes<B: Attributes + ?Sized>(
        self,
        attributes: &'m B,
    ) -> MessageParts<'m, B, H> {
        MessageParts {
            body: self.body,
            body_is_document: self.body_is_document,
            attributes: Some(attributes),
            headers: self.headers,
        }
    }

    /// This message with its headers.
    pub fn with_headers<G: Headers + ?Sized>(self, headers: &'m G) -> MessageParts<'m, A, G> {
        MessageParts {
            body: self.body,
            body_is_document: self.body_is_document,
            attributes: self.attributes,
            headers: Some(headers),
        }
    }

    /// The JSON body, if the message has one.
    pub fn get_body(&self) -> Option<&'m [u8]> {
        self.body
    }

    /// The typed attributes, if the message has them.
    pub fn get_attributes(&self) -> Option<&'m A> {
        self.attributes
    }

    /// The headers, if the message has them.
    pub fn get_headers(&self) -> Option<&'m H> {
        self.headers
    }

    /// Whether the message has `part`.
    pub fn has(&self, part: MessagePart) -> bool {
        match part {
            MessagePart::Attributes => self.attributes.is_some(),
            MessagePart::Body => self.body.is_some(),
            MessagePart::Headers => self.headers.is_some(),
        }
    }

    /// The parts the message has.
    pub fn parts(&self) -> impl Iterator<Item = MessagePart> + '_ {
        MessagePart::ALL.into_iter().filter(|&p| self.has(p))
    }
}

/// The error for a message that lacks the part filters compiled with `options` read: code
/// [`ErrorCode::MessageShape`], and a hint naming the likely fix from the parts it has.
pub fn missing_part_error(options: &Options, present: &[MessagePart]) -> MessageError {
    let wanted = MessagePart::of(options);
    let dialect = options.dialect();
    let has = |p: MessagePart| present.contains(&p);
    let what = match wanted {
        MessagePart::Attributes => "typed attributes",
        MessagePart::Body => "a JSON body",
        MessagePart::Headers => "headers",
    };
    let hint = match (options, wanted) {
        (Options::Sns(_), MessagePart::Attributes) if has(MessagePart::Body) => {
            " (to filter on the body, compile with the options {\"scope\":\"MessageBody\"}: \
             --options '{\"scope\":\"MessageBody\"}')"
                .to_owned()
        }
        (Options::Sns(_), MessagePart::Body) if has(MessagePart::Attributes) => {
            " (to filter on the message attributes, compile with the default options or \
             {\"scope\":\"MessageAttributes\"})"
                .to_owned()
        }
        (_, MessagePart::Headers) if !present.is_empty() => format!(
            " ({dialect} filters read headers: pass the message's headers, e.g. \
             {{\"headers\": {{\"name\": \"value\"}}}})"
        ),
        (_, MessagePart::Attributes) if !present.is_empty() => format!(
            " ({dialect} filters read typed attributes: pass them, e.g. \
             {{\"MessageAttributes\": {{\"name\": {{\"DataType\": \"String\", \"StringValue\": \
             \"value\"}}}}}})"
        ),
        (_, MessagePart::Body) if !present.is_empty() => format!(
            " ({dialect} filters read the JSON {}: pass its bytes)",
            if dialect == crate::Dialect::EventGrid {
                "event"
            } else {
                "body"
            }
        ),
        _ => String::new(),
    };
    let found = if present.is_empty() {
        "nothing".to_owned()
    } else {
        present
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(" and ")
    };
    MessageError {
        code: ErrorCode::MessageShape,
        pointer: String::new(),
        message: format!("a {dialect} filter reads {what}; the message has {found}{hint}"),
    }
}

/// The error for a JSON document read as a body ([`crate::read_message`]) without the
/// attributes or headers its filter reads: code [`ErrorCode::MessageShape`], naming how the part
/// is given and the likely fix.
fn document_missing_part_error(options: &Options) -> MessageError {
    let dialect = options.dialect();
    let message = match (options, MessagePart::of(options)) {
        (Options::Sns(_), _) => format!(
            "a {dialect} filter in attribute scope reads typed attributes, but the message is a \
             JSON document without them (given as {{\"attributes\": {{...}}}} or \
             {{\"MessageAttributes\": {{...}}}}), so it is only a message body: to filter on the \
             body, compile with the options {{\"scope\":\"MessageBody\"}} (--options \
             '{{\"scope\":\"MessageBody\"}}')"
        ),
        (_, MessagePart::Headers) => format!(
            "a {dialect} filter reads headers, but the message is a JSON document without them, \
             so it is only a message body, which {dialect} filters do not read: give the headers \
             as {{\"headers\": {{\"name\": \"value\"}}}}"
        ),
        _ => format!(
            "a {dialect} filter reads typed attributes, but the message is a JSON document \
             without them, so it is only a message body, which {dialect} filters do not read: \
             give the attributes as {{\"attributes\": {{NAME: {{\"type\": \"String\", \
             \"value\": \"...\"}}}}}}"
        ),
    };
    MessageError {
        code: ErrorCode::MessageShape,
        pointer: String::new(),
        message,
    }
}

/// The part of a message a filter reads, found in its parts.
pub(crate) enum SelectedPart<'m, A: ?Sized, H: ?Sized> {
    /// Typed attributes.
    Attributes(&'m A),
    /// Headers.
    Headers(&'m H),
    /// The JSON body. `strict`: bytes that are not JSON are an error (an Event Grid event, or a
    /// document read as the body); else they are an SNS body that is not JSON, which keeps its
    /// dialect meaning (it matches only policies that read nothing from the body).
    Body { bytes: &'m [u8], strict: bool },
}

impl<'m, A: Attributes + ?Sized, H: Headers + ?Sized> MessageParts<'m, A, H> {
    /// The part filters compiled with `options` read, or the error naming what is missing: the
    /// one step between a message's parts and binding, for matching and explaining alike.
    pub(crate) fn select(&self, options: &Options) -> Result<SelectedPart<'m, A, H>, MessageError> {
        let missing = || {
            if self.body_is_document {
                return document_missing_part_error(options);
            }
            let present: Vec<MessagePart> = self.parts().collect();
            missing_part_error(options, &present)
        };
        Ok(match MessagePart::of(options) {
            MessagePart::Body => SelectedPart::Body {
                bytes: self.body.ok_or_else(missing)?,
                strict: self.body_is_document || !matches!(options, Options::Sns(_)),
            },
            MessagePart::Attributes => {
                SelectedPart::Attributes(self.attributes.ok_or_else(missing)?)
            }
            MessagePart::Headers => SelectedPart::Headers(self.headers.ok_or_else(missing)?),
        })
    }
}

impl Evaluator {
    /// Matches a message given by its parts: the filter reads its part (see
    /// [`MessagePart::of`]) and nothing else.
    ///
    /// Errors, never a quiet `false`: [`ErrorCode::MessageShape`] when the message lacks the
    /// part (with a hint), [`ErrorCode::MessageTooComplex`] for a body beyond the binding
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
            SelectedPart::Attributes(attributes) => Ok(self.matches_attributes(filter, attributes)),
            SelectedPart::Headers(headers) => Ok(self.matches_headers(filter, headers)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dialect, compile_text};
    use filtervm_vm::message::AttributeType;

    fn filter(dialect: Dialect, options: Options, policy: &str) -> Filter {
        compile_text(dialect, policy, &options).unwrap()
    }

    #[test]
    fn each_filter_reads_its_own_part_of_one_message() {
        let attributes = [("a", AttributeType::String, "x")];
        let headers = [("h", "y")];
        let message = MessageParts::body(br#"{"b": "z"}"#)
            .with_attributes(&attributes[..])
            .with_headers(&headers[..]);
        let mut e = Evaluator::new();
        let cases = [
            (Dialect::Basaltic, Options::Basaltic, r#"{"a": ["x"]}"#),
            (Dialect::Sns, Options::from(Dialect::Sns), r#"{"a": ["x"]}"#),
            (
                Dialect::Sns,
                Options::from(SnsScope::MessageBody),
                r#"{"b": ["z"]}"#,
            ),
            (Dialect::Stream, Options::Stream, "h = y"),
        ];
        for (dialect, options, policy) in cases {
            let f = filter(dialect, options, policy);
            assert_eq!(
                e.matches_parts(&f, &message),
                Ok(true),
                "{dialect} {policy}"
            );
        }
    }

    #[test]
    fn a_missing_part_is_an_error_with_a_hint_not_a_verdict() {
        let mut e = Evaluator::new();
        let sns = filter(Dialect::Sns, Options::from(Dialect::Sns), r#"{"a": ["x"]}"#);
        let err = e
            .matches_parts(&sns, &MessageParts::body(b"{\"a\": \"x\"}"))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::MessageShape);
        assert!(
            err.message
                .contains("--options '{\"scope\":\"MessageBody\"}'"),
            "{err}"
        );
        assert!(err.message.contains("the message has body"), "{err}");

        let stream = filter(Dialect::Stream, Options::Stream, "store missing");
        let err = e
            .matches_parts(&stream, &MessageParts::body(b"{}"))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::MessageShape);
        assert!(err.message.contains("read headers"), "{err}");

        let body = filter(
            Dialect::Sns,
            Options::from(SnsScope::MessageBody),
            r#"{"a": ["x"]}"#,
        );
        let attributes = [("a", AttributeType::String, "x")];
        let err = e
            .matches_parts(&body, &MessageParts::attributes(&attributes[..]))
            .unwrap_err();
        assert!(err.message.contains("MessageAttributes"), "{err}");
        let err = e.matches_parts(&body, &MessageParts::new()).unwrap_err();
        assert!(err.message.ends_with("the message has nothing"), "{err}");
    }

    #[test]
    fn an_sns_body_that_is_not_json_keeps_its_meaning_an_event_does_not() {
        let mut e = Evaluator::new();
        let everything = filter(Dialect::Sns, Options::from(SnsScope::MessageBody), "{}");
        let on_a = filter(
            Dialect::Sns,
            Options::from(SnsScope::MessageBody),
            r#"{"a": ["x"]}"#,
        );
        let text = MessageParts::body(b"plain text");
        assert_eq!(e.matches_parts(&everything, &text), Ok(true));
        assert_eq!(e.matches_parts(&on_a, &text), Ok(false));
        let event = filter(
            Dialect::EventGrid,
            Options::from(Dialect::EventGrid),
            r#"{"includedEventTypes": ["a"]}"#,
        );
        let err = e.matches_parts(&event, &text).unwrap_err();
        assert_eq!(err.code, ErrorCode::MessageNotJson);
    }
}

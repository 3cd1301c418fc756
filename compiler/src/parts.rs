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
//! A [`MessageParts`] carries what the broker has. A message without the part a filter reads is
//! judged where the dialect gives that a meaning ([`Absent::of`]: an SNS or basaltic message
//! with no attributes has the empty attribute set), and is an error otherwise
//! ([`ErrorCode::MessageShape`], naming the likely fix), never a quiet "no match".
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
//! // A body alone is an SNS message with no attributes: sns rule 12 judges it (only `{}` would
//! // match it)...
//! let body_only = MessageParts::body(br#"{"event": "order.paid"}"#);
//! assert!(!evaluator.matches_parts(&on_attributes, &body_only).unwrap());
//! // ...while a stream filter, whose reference defines no message without headers, cannot.
//! let on_headers = compile_text(Dialect::Stream, "event = order.paid", &Options::Stream).unwrap();
//! let e = evaluator.matches_parts(&on_headers, &body_only).unwrap_err();
//! assert_eq!(e.code.as_str(), "MESSAGE_SHAPE");
//! assert!(e.message.contains("read headers"));
//! ```

use crate::error::{ErrorCode, MessageError, excerpt, pointer};
use crate::options::{Options, SnsScope};
use filtervm_vm::message::{
    Attribute, AttributeType, Attributes, Header, HeaderValues, Headers, Text,
};
use std::fmt;

/// The part of a message a filter reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessagePart {
    /// Typed attributes: name, declared type, value (`basaltic`, `sns` in attribute scope).
    Attributes,
    /// The JSON body as raw bytes: an SNS message body (`sns` in body scope), an Event Grid
    /// event (`eventgrid`), an EventBridge event (`eventbridge`).
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

    /// The part's index in [`MessagePart::ALL`].
    pub const fn index(self) -> usize {
        match self {
            MessagePart::Attributes => 0,
            MessagePart::Body => 1,
            MessagePart::Headers => 2,
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
    /// Per part ([`MessagePart::index`]): the error of a part the broker holds but could not
    /// read ([`MessageParts::with_unreadable`]).
    unreadable: [Option<&'m MessageError>; 3],
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
            .field("unreadable", &self.unreadable)
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
            unreadable: [None; 3],
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
            unreadable: self.unreadable,
        }
    }

    /// This message with its headers.
    pub fn with_headers<G: Headers + ?Sized>(self, headers: &'m G) -> MessageParts<'m, A, G> {
        MessageParts {
            body: self.body,
            body_is_document: self.body_is_document,
            attributes: self.attributes,
            headers: Some(headers),
            unreadable: self.unreadable,
        }
    }

    /// This message with `part` given but unreadable: the broker holds it and could not read it
    /// (an attribute of an unknown type, say). Filters that read `part` cannot judge the message
    /// and report `error`; the others judge it by their own parts.
    pub fn with_unreadable(mut self, part: MessagePart, error: &'m MessageError) -> Self {
        if let Some(slot) = self.unreadable.get_mut(part.index()) {
            *slot = Some(error);
        }
        self
    }

    /// The error of `part` when the broker gave it unreadable.
    pub fn unreadable_part(&self, part: MessagePart) -> Option<&'m MessageError> {
        self.unreadable.get(part.index()).copied().flatten()
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

    /// Whether the message has `part` (given readable or not).
    pub fn has(&self, part: MessagePart) -> bool {
        self.unreadable_part(part).is_some()
            || match part {
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
            if matches!(
                dialect,
                crate::Dialect::EventGrid | crate::Dialect::EventBridge
            ) {
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
    let message = match MessagePart::of(options) {
        MessagePart::Headers => format!(
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

/// What a message without the part a filter reads is to that filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    /// The part is there, empty: a message with no attributes has the empty attribute set, and
    /// the filter judges it (sns rule 12: it fails every policy but `{}`).
    Empty,
    /// The filter cannot judge the message: [`ErrorCode::MessageShape`], with a hint naming the
    /// likely fix.
    Missing,
}

impl Absent {
    /// What filters compiled with `options` make of a message without their part: one row per
    /// dialect, where its reference defines a message without the part.
    pub fn of(options: &Options) -> Absent {
        match options {
            // sns rules 2 and 12: "messages with no attributes" are messages; `{}` receives them
            // and every other attribute-scope policy fails them.
            Options::Sns(o) if o.scope == SnsScope::MessageAttributes => Absent::Empty,
            // basaltic B-2 and B-9: "a message with no attributes (at all)" matches `{}` and
            // `exists: false`.
            Options::Basaltic => Absent::Empty,
            // Every SNS message has a body (sns rule 14 judges its text): a message given
            // without one is not an SNS message the filter can judge.
            Options::Sns(_) => Absent::Missing,
            // An Event Grid subscription filters events: without one there is nothing to judge.
            Options::EventGrid(_) => Absent::Missing,
            // An EventBridge pattern matches events (EB-1): without one there is nothing to
            // judge.
            Options::EventBridge => Absent::Missing,
            // The stream and expr references define headers that are absent, not a message
            // without headers.
            Options::Stream | Options::Expr(_) => Absent::Missing,
        }
    }
}

/// The part of a message a filter reads, found in its parts.
pub(crate) enum SelectedPart<'m, A: ?Sized, H: ?Sized> {
    /// Typed attributes (`None`: the message has none, the empty attribute set).
    Attributes(Option<&'m A>),
    /// Headers (`None`: the message has none, the empty set).
    Headers(Option<&'m H>),
    /// The JSON body. `strict`: bytes that are not JSON are an error (an Event Grid event, or a
    /// document read as the body); else they are an SNS body that is not JSON, which keeps its
    /// dialect meaning (it matches only policies that read nothing from the body).
    Body { bytes: &'m [u8], strict: bool },
}

/// Why a filter could not read its part of a message (before binding).
#[derive(Debug)]
pub(crate) enum Unread<'m> {
    /// The message lacks the part, and the dialect gives that no meaning ([`Absent::Missing`]).
    Missing,
    /// The broker gave the part but could not read it ([`MessageParts::with_unreadable`]).
    Unreadable(&'m MessageError),
    /// The part breaks the dialect's rules for it ([`check_attributes`], [`check_headers`]).
    Invalid(MessageError),
}

/// The attributes of a message without any (the empty attribute set, [`Absent::Empty`]).
pub(crate) const NO_ATTRIBUTES: &[Attribute] = &[];
/// The headers of a message without any.
pub(crate) const NO_HEADERS: &[Header] = &[];

impl<'m, A: Attributes + ?Sized, H: Headers + ?Sized> MessageParts<'m, A, H> {
    /// The part filters compiled with `options` read, checked by the dialect's rules, or why it
    /// cannot be read: the one step between a message's parts and binding, for matching (one
    /// filter or a set) and explaining alike. Nothing is allocated unless the part breaks a rule.
    #[inline]
    pub(crate) fn pick(&self, options: &Options) -> Result<SelectedPart<'m, A, H>, Unread<'m>> {
        let part = MessagePart::of(options);
        if let Some(e) = self.unreadable_part(part) {
            return Err(Unread::Unreadable(e));
        }
        let empty = || match Absent::of(options) {
            Absent::Empty => Ok(()),
            Absent::Missing => Err(Unread::Missing),
        };
        Ok(match part {
            MessagePart::Body => SelectedPart::Body {
                bytes: self.body.ok_or(Unread::Missing)?,
                strict: self.body_is_document || !matches!(options, Options::Sns(_)),
            },
            MessagePart::Attributes => SelectedPart::Attributes(match self.attributes {
                Some(attributes) => {
                    check_attributes(options, attributes).map_err(Unread::Invalid)?;
                    Some(attributes)
                }
                None => empty().map(|()| None)?,
            }),
            MessagePart::Headers => SelectedPart::Headers(match self.headers {
                Some(headers) => {
                    check_headers(options, headers).map_err(Unread::Invalid)?;
                    Some(headers)
                }
                None => empty().map(|()| None)?,
            }),
        })
    }

    /// [`MessageParts::pick`], with the error of a part that cannot be read.
    pub(crate) fn select(&self, options: &Options) -> Result<SelectedPart<'m, A, H>, MessageError> {
        self.pick(options)
            .map_err(|unread| self.unread_error(options, unread))
    }

    /// The error of a part filters compiled with `options` could not read.
    pub(crate) fn unread_error(&self, options: &Options, unread: Unread<'_>) -> MessageError {
        match unread {
            Unread::Missing if self.body_is_document => document_missing_part_error(options),
            Unread::Missing => {
                let present: Vec<MessagePart> = self.parts().collect();
                missing_part_error(options, &present)
            }
            Unread::Unreadable(e) => e.clone(),
            Unread::Invalid(e) => e,
        }
    }
}

/// Checks typed attributes by the rules of the dialect of `options` for them, beyond their form
/// (which every reader checks): basaltic attributes are `String` or `Number` (B-4).
pub(crate) fn check_attributes<A: Attributes + ?Sized>(
    options: &Options,
    attributes: &A,
) -> Result<(), MessageError> {
    match options {
        Options::Basaltic => {}
        Options::Sns(_)
        | Options::EventGrid(_)
        | Options::EventBridge
        | Options::Stream
        | Options::Expr(_) => {
            return Ok(());
        }
    }
    for (name, data_type, _) in attributes.entries() {
        if !matches!(data_type, AttributeType::String | AttributeType::Number) {
            let name = String::from_utf8_lossy(name.bytes());
            return Err(MessageError::new(
                pointer::push("/attributes", &name),
                format!(
                    "attribute `{}` is a {data_type}, and a basaltic message carries String and \
                     Number attributes only",
                    excerpt(&name)
                ),
            ));
        }
    }
    Ok(())
}

/// Checks headers by the rules of the dialect of `options` for them: every header has a value
/// (`stream` and `expr`), and a `stream` header has exactly one (the stream reference knows
/// one value per header; `expr` reads several, any of which may satisfy a condition). A header
/// given several values — a list, or its name repeated — is an error for `stream` filters only.
pub(crate) fn check_headers<H: Headers + ?Sized>(
    options: &Options,
    headers: &H,
) -> Result<(), MessageError> {
    let one_value = match options {
        Options::Stream => true,
        Options::Expr(_) => false,
        Options::Sns(_) | Options::Basaltic | Options::EventGrid(_) | Options::EventBridge => {
            return Ok(());
        }
    };
    let error = |name: &[u8], message: String| {
        MessageError::new(
            pointer::push("/headers", &String::from_utf8_lossy(name)),
            message,
        )
    };
    for (name, values) in headers.entries() {
        let name = name.bytes();
        let shown = || excerpt(&String::from_utf8_lossy(name)).to_string();
        match values.values().len() {
            0 => {
                return Err(error(
                    name,
                    format!(
                        "header `{}` is given no value: a header has a value",
                        shown()
                    ),
                ));
            }
            1 => {}
            n if one_value => {
                return Err(error(name, several_values(&shown(), n)));
            }
            _ => {}
        }
    }
    if one_value && let Some(name) = repeated_name(headers) {
        let shown = excerpt(&String::from_utf8_lossy(name)).to_string();
        return Err(error(name, several_values(&shown, 2)));
    }
    Ok(())
}

/// The error text of a `stream` header given several values.
fn several_values(name: &str, n: usize) -> String {
    let count = if n > 2 {
        format!("{n} values")
    } else {
        "several values".to_owned()
    };
    format!(
        "header `{name}` is given {count}, and a stream header has one value (stream filters \
         read one value per header; expr filters read several, any of which may match)"
    )
}

/// The first header name given twice, if any: pairwise for a few headers, through a hash set
/// for many.
fn repeated_name<H: Headers + ?Sized>(headers: &H) -> Option<&[u8]> {
    const FEW: usize = 16;
    let mut few: [&[u8]; FEW] = [&[]; FEW];
    let mut n = 0;
    let mut many: Option<std::collections::HashSet<&[u8]>> = None;
    for (name, _) in headers.entries() {
        let name = name.bytes();
        if let Some(seen) = &mut many {
            if !seen.insert(name) {
                return Some(name);
            }
            continue;
        }
        let earlier = few.get(..n).unwrap_or_default();
        if earlier.contains(&name) {
            return Some(name);
        }
        match few.get_mut(n) {
            Some(slot) => {
                *slot = name;
                n += 1;
            }
            None => {
                let mut seen: std::collections::HashSet<&[u8]> = few.iter().copied().collect();
                seen.insert(name);
                many = Some(seen);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;

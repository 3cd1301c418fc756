//! A message as a binding's caller gives it, turned into the facade's [`Message`] without
//! copying: one JSON document as received, or the parts the caller holds — a body's bytes,
//! typed attributes and headers through the borrowed [`Attributes`] and [`Headers`] traits
//! (byte strings or text, whatever the language holds), and a part the binding could not read
//! with its error.
//!
//! The parts are read by the facade's one reading path ([`filtervm::Filter::matches`],
//! [`filtervm::SubscriptionSet::matching`]), so a message means the same through every binding
//! as through Rust: what a message without a part means to each dialect, and which situation
//! gets which code, is the facade's table (`filtervm/MESSAGES.md`).

use crate::error::Failure;
use filtervm::{
    Attribute, AttributeType, Attributes, Dialect, Header, HeaderValues, Headers, Message,
    MessageError, MessagePart, Options, Text,
};
use std::ops::Range;

/// A message as a binding's caller gives it.
#[derive(Debug)]
pub enum Input<'a, A: ?Sized, H: ?Sized> {
    /// One JSON document as received (read as [`filtervm::read_message`] reads it: the parts
    /// shape, the AWS SNS shapes, or any other document as the body itself).
    Document(&'a [u8]),
    /// The parts the caller holds, each optional.
    Parts(Parts<'a, A, H>),
}

/// A message that is one JSON document ([`Input::Document`]): its attribute and header types are
/// never used.
pub type DocumentInput<'a> = Input<'a, [Attribute], [Header]>;

/// The parts of a message as a binding's caller holds them, borrowed.
#[derive(Debug)]
pub struct Parts<'a, A: ?Sized, H: ?Sized> {
    /// The body's bytes as published: an SNS body (any text), an Event Grid event.
    pub body: Option<&'a [u8]>,
    /// Typed attributes.
    pub attributes: Option<&'a A>,
    /// Headers (a name given several times is one header with several values).
    pub headers: Option<&'a H>,
    /// A part the caller gave but the binding could not read, and why (an attribute whose type
    /// name is unknown): filters reading that part report the error, the others judge the
    /// message by their own parts.
    pub unreadable: Option<(MessagePart, MessageError)>,
}

impl<A: ?Sized, H: ?Sized> Default for Parts<'_, A, H> {
    fn default() -> Self {
        Parts {
            body: None,
            attributes: None,
            headers: None,
            unreadable: None,
        }
    }
}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> Input<'_, A, H> {
    /// The facade's message, borrowing this input: nothing is copied.
    pub fn message(&self) -> Message<'_, A, H> {
        match self {
            Input::Document(json) => Message::document(json),
            Input::Parts(parts) => {
                let message = Message::from_parts(parts.body, parts.attributes, parts.headers);
                match &parts.unreadable {
                    Some((part, error)) => message.with_unreadable(*part, error),
                    None => message,
                }
            }
        }
    }
}

/// The attribute type named `name`: `String`, `Number`, `String.Array`, `Binary`, or an SNS
/// custom `String.x`, `Number.x`, `Binary.x`. `None` for anything else (see
/// [`unknown_attribute_type`]).
#[inline]
pub fn attribute_type(name: &[u8]) -> Option<AttributeType> {
    match name {
        b"String" => Some(AttributeType::String),
        b"Number" => Some(AttributeType::Number),
        b"String.Array" => Some(AttributeType::StringArray),
        b"Binary" => Some(AttributeType::Binary),
        other => AttributeType::from_name(std::str::from_utf8(other).ok()?),
    }
}

/// The error of an attribute named `name` whose type name `type_name` is not a type:
/// `INVALID_MESSAGE` at `/attributes/NAME/Type`, for the filters that read attributes.
pub fn unknown_attribute_type(name: &[u8], type_name: &[u8]) -> MessageError {
    let name = String::from_utf8_lossy(name);
    let pointer = format!(
        "/attributes/{}/Type",
        name.replace('~', "~0").replace('/', "~1")
    );
    MessageError::new(
        pointer,
        format!(
            "attribute `{}`: unknown type `{}` (String, Number, String.Array or Binary, or a \
             custom String.x, Number.x, Binary.x)",
            filtervm::excerpt(&name),
            filtervm::excerpt(&String::from_utf8_lossy(type_name))
        ),
    )
}

/// The values of one header as a binding holds them: one value, or several (a multi-valued
/// header, which `expr` filters read and `stream` filters refuse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue<T> {
    /// One value.
    One(T),
    /// Several values (at least one, for a message filters can read).
    Many(Vec<T>),
}

impl<T: Text> HeaderValues for HeaderValue<T> {
    type Value = T;

    #[inline]
    fn values(&self) -> &[T] {
        match self {
            HeaderValue::One(value) => std::slice::from_ref(value),
            HeaderValue::Many(values) => values,
        }
    }
}

/// The events of one JSON document as Event Grid delivers them, as byte ranges of `json`: each
/// event of an array of events (a batch, as [`filtervm::read_messages`] splits it), or the
/// whole document when it is not one. A filter judges one event: the bindings' batch API
/// (Python's `filtervm.read_events`, C's `fvm_read_events`) matches each range. Errors:
/// `MESSAGE_NOT_JSON` for bytes that are not JSON.
pub fn read_events(json: &[u8]) -> Result<Vec<Range<usize>>, Failure> {
    let messages = filtervm::read_messages(json, &Options::from(Dialect::EventGrid))?;
    if !messages.is_batch() {
        // One event, the whole document.
        let whole = 0..json.len();
        return Ok(std::iter::once(whole).collect());
    }
    let base = json.as_ptr() as usize;
    messages
        .map(|event| {
            // Each event of a batch is a span of the document (`ReadMessage::body`).
            let body = event.body().unwrap_or_default();
            let start = (body.as_ptr() as usize).wrapping_sub(base);
            let end = start.wrapping_add(body.len());
            if start <= end && end <= json.len() {
                Ok(start..end)
            } else {
                Err(Failure::from(MessageError::new(
                    "",
                    "an event of the batch is not a span of the document",
                )))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_read_like_the_library_reads_them() {
        for name in [
            "String",
            "Number",
            "String.Array",
            "Binary",
            "String.x",
            "Number.id",
            "Binary.x",
            "Strung",
            "",
            "String.",
        ] {
            assert_eq!(
                attribute_type(name.as_bytes()),
                AttributeType::from_name(name),
                "{name}"
            );
        }
        assert_eq!(attribute_type(b"\xff"), None);
        let e = unknown_attribute_type(b"a/b", b"Strung");
        assert_eq!(e.pointer, "/attributes/a~1b/Type");
        assert!(e.message.contains("`Strung`"), "{e}");
    }

    #[test]
    fn events_are_spans_of_the_batch() {
        let batch = br#" [{"id": "1"}, {"id": "2", "data": [1]}] "#;
        let spans = read_events(batch).unwrap();
        let events: Vec<&[u8]> = spans.iter().map(|r| &batch[r.clone()]).collect();
        assert_eq!(
            events,
            [&br#"{"id": "1"}"#[..], br#"{"id": "2", "data": [1]}"#]
        );
        let whole = |json: &[u8]| {
            let events = read_events(json).unwrap();
            (events.len(), events.first().map(|r| (r.start, r.end)))
        };
        assert_eq!(whole(b"{}"), (1, Some((0, 2))));
        assert_eq!(whole(b"[1, 2]"), (1, Some((0, 6))));
        assert_eq!(read_events(b"[{").unwrap_err().code(), "MESSAGE_NOT_JSON");
    }
}

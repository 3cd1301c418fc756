//! Messages read into the library's model: the owned part a filter reads ([`message_from_json`],
//! [`message_from_line`]) and the errors of a message that cannot be read as its dialect's. Above
//! the dialects (each reads its own part) and the message shapes; below the evaluator.

use crate::dialect::{Dialect, eventgrid, sns};
use crate::error::{ErrorCode, MessageError};
use crate::options::{Options, SnsScope};
use crate::parts::{MessageParts, SelectedPart};
use crate::shape;
use filtervm_vm::message::{Attribute, Attributes, Header, HeaderValues, Headers, Message, Text};

/// Reads a message given as a `serde_json` value: the value's JSON text read as one message by
/// [`crate::read_message`] (every shape it accepts, checked by the dialect's rules), then the
/// part filters with `options` read, owned. For `eventgrid` the document is one event, an array
/// included (see [`crate::read_messages`] to split a batch).
///
/// `options` are the filter's (`dialect`'s; options of another dialect are an error). An Event
/// Grid event, or an SNS body given as a JSON value, is read as the `serde_json::Value` holds it
/// ([`Message::Json`] says how: numbers as binary64 at best, members in the map's order); for
/// exact number text pass bytes or text ([`message_from_line`],
/// [`Evaluator::matches_bytes`](crate::Evaluator::matches_bytes)).
pub fn message_from_json(
    dialect: Dialect,
    options: &Options,
    message: &serde_json::Value,
) -> Result<Message, MessageError> {
    check_message_options(dialect, options)?;
    let json = serde_json::to_vec(message).map_err(|e| MessageError::new("", e.to_string()))?;
    owned_part(
        options,
        &shape::read_for(&json, options, filtervm_vm::json::ReadMode::Validating)?.parts(),
    )
}

/// Reads one line of a message log as the dialect's part, owned, the way `filtervm route` reads
/// its lines: for sns in body scope the line is the raw body and for eventgrid the event (both
/// kept as bytes, read when bound: no shape is told); for the other dialects the line's
/// `attributes` or `headers` member (the other members ignored, an absent one read as none),
/// checked by the dialect's rules.
///
/// `filtervm match` and `explain` read lines with [`crate::read_messages`] instead, which tells
/// the line's shape and reports a line without the filter's part.
pub fn message_from_line(
    dialect: Dialect,
    options: &Options,
    line: &str,
) -> Result<Message, MessageError> {
    check_message_options(dialect, options)?;
    match options {
        Options::Sns(sns) if sns.scope == SnsScope::MessageBody => Ok(sns::message::body(line)),
        Options::EventGrid(_) | Options::EventBridge => eventgrid::message_from_line(line),
        _ => owned_part(
            options,
            &shape::read_member_parts(line.as_bytes(), options)?.parts(),
        ),
    }
}

/// The part of `message` filters with `options` read, as an owned [`Message`] (names and
/// values that are not UTF-8 are converted lossily).
pub(crate) fn owned_part<A: Attributes + ?Sized, H: Headers + ?Sized>(
    options: &Options,
    message: &MessageParts<'_, A, H>,
) -> Result<Message, MessageError> {
    fn text<T: Text + ?Sized>(t: &T) -> String {
        String::from_utf8_lossy(t.bytes()).into_owned()
    }
    Ok(match message.select(options)? {
        SelectedPart::Body { bytes, .. } => Message::Body(bytes.to_vec()),
        SelectedPart::Attributes(None) => Message::Attributes(Vec::new()),
        SelectedPart::Headers(None) => Message::Headers(Vec::new()),
        SelectedPart::Attributes(Some(attributes)) => Message::Attributes(
            attributes
                .entries()
                .map(|(name, data_type, value)| Attribute {
                    name: text(name),
                    data_type,
                    value: text(value),
                })
                .collect(),
        ),
        SelectedPart::Headers(Some(headers)) => Message::Headers(
            headers
                .entries()
                .map(|(name, values)| Header {
                    name: text(name),
                    values: values.values().iter().map(text).collect(),
                })
                .collect(),
        ),
    })
}

/// Messages are read with the filter's options: options of another dialect are a mistake.
fn check_message_options(dialect: Dialect, options: &Options) -> Result<(), MessageError> {
    if options.dialect() == dialect {
        return Ok(());
    }
    Err(MessageError {
        code: ErrorCode::InvalidOptions,
        pointer: String::new(),
        message: format!(
            "a {dialect} message read with {} options ({options})",
            options.dialect()
        ),
    })
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

//! Reading a message from one JSON document: which shape it is in, and its parts.
//!
//! [`read_message`] is the one reader of JSON messages: the library's JSON entry points, `filtervm
//! match` and `filtervm explain` all read through it, so each reads a document the same way. It
//! tells the document's shape from its top-level member names and returns its parts
//! ([`ReadMessage`], viewed as [`MessageParts`]); each filter then reads its own part
//! ([`MessagePart::of`]), and a message without that part is an error naming the likely fix, never
//! a quiet "no match".
//!
//! | shape | example | parts |
//! |---|---|---|
//! | parts (the conformance vectors' shape) | `{"attributes": {"store": {"Type": "String", "Value": "x"}}, "headers": {"region": "eu"}, "body": "{\"total\": 5}"}` | the members present |
//! | AWS SNS Publish API | `{"Message": "<body>", "MessageAttributes": {"store": {"DataType": "String", "StringValue": "x"}}}` | attributes, body |
//! | SNS notification (as delivered to SQS, Lambda, HTTP) | `{"Type": "Notification", "Message": "<body>", "MessageAttributes": {"store": {"Type": "String", "Value": "x"}}, "TopicArn": "…"}` | attributes, body |
//! | any other JSON document: an SNS body, an Event Grid event, a CloudEvent | `{"store": "x", "total": 5}` | body (the document itself), and its `attributes` and `headers` members |
//! | an Event Grid array of events, a CloudEvents batch ([`read_messages`] for `eventgrid` filters) | `[{"eventType": "a", …}, {"eventType": "b", …}]` | one message per event |
//!
//! The rules, exactly:
//!
//! - **Parts**: an object whose members are all among `attributes`, `headers` and `body`.
//!   `attributes` is an object of `NAME: {"Type": T, "Value": V}` (also spelled `type`/`value`,
//!   or `DataType` with `StringValue` or `BinaryValue`); `T` is `String`, `Number`,
//!   `String.Array`, `Binary` or a custom `String.x`, `Number.x`, `Binary.x` type, and `V` a
//!   string (kept as written: `"1.50"` stays `1.50`). `headers` is an object of `NAME: VALUE`,
//!   `VALUE` a string or a non-empty array of strings (a header given several values). `body`
//!   is a string holding the body text (any text: an SNS body need not be JSON), or any other
//!   JSON value, which is then the body itself. A member that is absent is a part the message
//!   does not have; `attributes` or `headers` given as `null` are none (the part is there,
//!   empty), and a `body` of `null` is no body.
//! - **AWS SNS**: an object with a `Message` or `MessageAttributes` member whose members are all
//!   among the names of the Publish API request and of the notification envelope (`Type`,
//!   `MessageId`, `TopicArn`, `TargetArn`, `PhoneNumber`, `Subject`, `Message`,
//!   `MessageStructure`, `MessageAttributes`, `MessageDeduplicationId`, `MessageGroupId`,
//!   `SequenceNumber`, `Timestamp`, `SignatureVersion`, `Signature`, `SigningCertURL`,
//!   `UnsubscribeURL`, and Lambda's spellings `SigningCertUrl`, `UnsubscribeUrl`). `Message` is
//!   the body; `MessageAttributes` (read like `attributes` above) are the attributes, and a
//!   message without them has none (an AWS message always has attributes, maybe zero). `Type`,
//!   when present, must be `Notification`: a `SubscriptionConfirmation` carries no message.
//! - **Any other document** is the body itself: an SNS message body, an Event Grid event or a
//!   CloudEvent (for `eventgrid` filters the whole document is the event). It must be JSON. Its
//!   own `attributes` and `headers` members, beside the others, are its attributes and headers
//!   for a filter that reads them (and must then be in their form): a log line may carry each
//!   part its subscribers read, as the `filtervm route` example does. A document without them
//!   has no attributes and no headers ([`crate::Absent::of`] says what each filter makes of
//!   that: sns and basaltic filters judge the empty attribute set, stream and expr filters
//!   report the missing headers). The empty object `{}` is the one document that is every
//!   shape at once: it has no attributes, no headers, and `{}` as its body.
//! - **Batches**: for `eventgrid` filters, [`read_messages`] splits a top-level array of objects
//!   into its events, each the body of one message; any other array is one message whose body
//!   is the array, which an `eventgrid` filter refuses (an event is one JSON object). For the
//!   other dialects an array is a body like any other document.
//!
//! The document is read with [`filtervm_vm::json`]: numbers and attribute values keep their exact
//! text, and a body is bytes, never a parsed and re-printed tree. Only the `attributes`, `headers`
//! and `MessageAttributes` members are read into a tree; a body is found and kept as its bytes
//! (the document's own when it is the document, or an element of a batch), to be read once more,
//! keeping only what the filter reads, when it is matched.
//!
//! ```
//! use filtervm_compiler::{compile_text, read_message, Dialect, Evaluator, MessageShape, Options, SnsScope};
//!
//! let on_attributes = compile_text(Dialect::Sns, r#"{"store": ["x"]}"#, &Options::from(Dialect::Sns)).unwrap();
//! let on_body = compile_text(Dialect::Sns, r#"{"total": [{"numeric": [">", 1]}]}"#,
//!     &Options::from(SnsScope::MessageBody)).unwrap();
//! let mut evaluator = Evaluator::new();
//!
//! // An SNS notification as an SQS queue receives it: both filters find their part.
//! let notification = br#"{"Type": "Notification", "Message": "{\"total\": 5}",
//!     "MessageAttributes": {"store": {"Type": "String", "Value": "x"}}}"#;
//! let message = read_message(notification).unwrap();
//! assert_eq!(message.shape(), MessageShape::Sns);
//! assert!(evaluator.matches_parts(&on_attributes, &message.parts()).unwrap());
//! assert!(evaluator.matches_parts(&on_body, &message.parts()).unwrap());
//!
//! // A plain event is a body, with no attributes: the body filter reads it, and to the filter on
//! // attributes it is a message with none (sns rule 12: it does not match).
//! let event = read_message(br#"{"store": "x", "total": 5}"#).unwrap();
//! assert!(evaluator.matches_parts(&on_body, &event.parts()).unwrap());
//! assert!(!evaluator.matches_parts(&on_attributes, &event.parts()).unwrap());
//!
//! // A stream filter reads headers, which the event does not have: an error, not a verdict.
//! let on_headers = compile_text(Dialect::Stream, "store exists", &Options::Stream).unwrap();
//! let e = evaluator.matches_parts(&on_headers, &event.parts()).unwrap_err();
//! assert_eq!(e.code.as_str(), "MESSAGE_SHAPE");
//! ```

use crate::error::{ErrorCode, MessageError, pointer};
use crate::options::Options;
use crate::parts::{MessagePart, MessageParts};
use filtervm_vm::json::{self, Outline, ParseOptions, RawKind, RawValue, ReadMode, Value};
use filtervm_vm::message::{Attribute, AttributeType, Header};
use std::borrow::Cow;

/// The shape a message was read in (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageShape {
    /// `{"attributes": …, "headers": …, "body": …}`: the parts, each optional.
    Parts,
    /// AWS SNS: a Publish API request or a notification envelope (`Message`,
    /// `MessageAttributes`, ...).
    Sns,
    /// Any other JSON document: the body itself (an SNS body, an Event Grid event, a
    /// CloudEvent).
    Document,
    /// One event of an Event Grid array of events or a CloudEvents batch.
    BatchEvent,
}

/// A message read from a JSON document by [`read_message`] or [`read_messages`]: its shape and
/// its parts. The body borrows the document where it is a span of it (the document itself, an
/// event of a batch, a `body` given as JSON); a body given as a string, attributes and headers
/// are owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadMessage<'a> {
    shape: MessageShape,
    body: Option<Cow<'a, [u8]>>,
    attributes: Option<Vec<Attribute>>,
    headers: Option<Vec<Header>>,
}

impl<'a> ReadMessage<'a> {
    /// A message that is the document itself.
    fn document(json: &'a [u8], shape: MessageShape) -> ReadMessage<'a> {
        ReadMessage {
            shape,
            body: Some(Cow::Borrowed(json)),
            attributes: None,
            headers: None,
        }
    }

    /// The shape the message was read in.
    pub fn shape(&self) -> MessageShape {
        self.shape
    }

    /// The body, if the message has one: the raw bytes of an SNS body or an Event Grid event.
    pub fn body(&self) -> Option<&[u8]> {
        self.body.as_deref()
    }

    /// The typed attributes, if the message has them.
    pub fn attributes(&self) -> Option<&[Attribute]> {
        self.attributes.as_deref()
    }

    /// The headers, if the message has them.
    pub fn headers(&self) -> Option<&[Header]> {
        self.headers.as_deref()
    }

    /// The message's parts, to match with [`crate::Evaluator::matches_parts`] (or explain). A
    /// body that is the whole document (or an event of a batch) must be JSON: matching it
    /// reports [`ErrorCode::MessageNotJson`] when it is not, where a body given as a string may
    /// be any text.
    pub fn parts(&self) -> MessageParts<'_> {
        let mut parts = MessageParts::new();
        if let Some(body) = &self.body {
            parts = if self.body_is_document() {
                parts.with_document_body(body)
            } else {
                parts.with_body(body)
            };
        }
        if let Some(attributes) = &self.attributes {
            parts = parts.with_attributes(&attributes[..]);
        }
        if let Some(headers) = &self.headers {
            parts = parts.with_headers(&headers[..]);
        }
        parts
    }

    /// Whether the body is the document itself (or an event of a batch), which must be JSON.
    fn body_is_document(&self) -> bool {
        matches!(
            self.shape,
            MessageShape::Document | MessageShape::BatchEvent
        )
    }

    /// The message with its body copied out of the document.
    pub fn into_owned(self) -> ReadMessage<'static> {
        ReadMessage {
            shape: self.shape,
            body: self.body.map(|b| Cow::Owned(b.into_owned())),
            attributes: self.attributes,
            headers: self.headers,
        }
    }
}

/// The messages of one JSON document, from [`read_messages`]: one, or the events of a batch.
#[derive(Debug, Clone)]
pub struct ReadMessages<'a> {
    inner: Messages<'a>,
}

#[derive(Debug, Clone)]
enum Messages<'a> {
    One(Option<ReadMessage<'a>>),
    Batch(std::vec::IntoIter<ReadMessage<'a>>),
}

impl ReadMessages<'_> {
    /// Whether the document was a batch (an array of events), split into its events: then each
    /// verdict belongs to one event, by its index in the array.
    pub fn is_batch(&self) -> bool {
        matches!(self.inner, Messages::Batch(_))
    }
}

impl<'a> Iterator for ReadMessages<'a> {
    type Item = ReadMessage<'a>;

    fn next(&mut self) -> Option<ReadMessage<'a>> {
        match &mut self.inner {
            Messages::One(one) => one.take(),
            Messages::Batch(events) => events.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.inner {
            Messages::One(one) => usize::from(one.is_some()),
            Messages::Batch(events) => events.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for ReadMessages<'_> {}

/// Reads one JSON document as the messages filters compiled with `options` read: for
/// `eventgrid` filters, a top-level array of objects (an Event Grid array of events, a
/// CloudEvents batch) is split into its events; anything else is one message, read by
/// [`read_message`].
///
/// ```
/// use filtervm_compiler::{read_messages, Dialect, Options};
/// let batch = br#"[{"eventType": "a", "subject": "/x"}, {"eventType": "b", "subject": "/y"}]"#;
/// let events = read_messages(batch, &Options::from(Dialect::EventGrid)).unwrap();
/// assert!(events.is_batch());
/// let bodies: Vec<Vec<u8>> = events.map(|e| e.body().unwrap().to_vec()).collect();
/// assert_eq!(bodies[1], br#"{"eventType": "b", "subject": "/y"}"#);
/// ```
pub fn read_messages<'a>(
    json: &'a [u8],
    options: &Options,
) -> Result<ReadMessages<'a>, MessageError> {
    if crate::options::reads_events(options)
        && let Some(events) = batch(json)?
    {
        return Ok(ReadMessages {
            inner: Messages::Batch(events.into_iter()),
        });
    }
    Ok(ReadMessages {
        inner: Messages::One(Some(read(
            json,
            Some(options),
            false,
            ReadMode::Validating,
        )?)),
    })
}

/// The events of `json` when it is a non-empty array of objects.
pub(crate) fn batch(json: &[u8]) -> Result<Option<Vec<ReadMessage<'_>>>, MessageError> {
    let Outline::Array(elements) = json::outline(json).map_err(not_json)? else {
        return Ok(None);
    };
    let mut events = Vec::new();
    let mut all_objects = true;
    for element in elements {
        let element = element.map_err(not_json)?;
        all_objects &= element.kind() == RawKind::Object;
        if all_objects {
            events.push(ReadMessage::document(
                element.text(),
                MessageShape::BatchEvent,
            ));
        }
    }
    Ok((all_objects && !events.is_empty()).then_some(events))
}

/// Reads one JSON document as one message (see the [module documentation](self) for the
/// shapes).
///
/// Errors: [`ErrorCode::MessageNotJson`] for bytes that are not one JSON document (checked as
/// far as telling the shape needs; a body that is the document itself is checked whole when it
/// is matched), [`ErrorCode::InvalidMessage`] for a part in the wrong form (with the JSON
/// Pointer of the offending member), [`ErrorCode::MessageShape`] for an SNS envelope that is
/// not a notification.
pub fn read_message(json: &[u8]) -> Result<ReadMessage<'_>, MessageError> {
    read(json, None, false, ReadMode::Validating)
}

/// [`read_message`] for the filters of a set, every part read as some filter would read it: a
/// document's `attributes` or `headers` member in the wrong form is an error here (where
/// [`read_message`] leaves it out), so that a set reads the document as each of its filters
/// does ([`read_for`]) or falls back to reading it for each of them.
pub(crate) fn read_for_all(json: &[u8], mode: ReadMode) -> Result<ReadMessage<'_>, MessageError> {
    read(json, None, true, mode)
}

/// [`read_message`] for filters with `options`: one message (no batch is split), read no
/// further than they need; top-level values it does not read are skipped as `mode` says.
pub(crate) fn read_for<'a>(
    json: &'a [u8],
    options: &Options,
    mode: ReadMode,
) -> Result<ReadMessage<'a>, MessageError> {
    read(json, Some(options), false, mode)
}

/// [`read_message`], for filters with `options` when they are known: a document that is a body
/// is read no further than the filter needs (the `attributes` and `headers` members beside its
/// own are looked for only by a filter that reads them, and then must be in their form), and a
/// part in the wrong form that the filter does not read is left out. The dialects' own rules for
/// their part (a `stream` header has one value, basaltic attributes are `String` or `Number`)
/// are checked when the part is matched ([`crate::parts`]), whatever form it came in.
fn read<'a>(
    json: &'a [u8],
    options: Option<&Options>,
    strict: bool,
    mode: ReadMode,
) -> Result<ReadMessage<'a>, MessageError> {
    if options == Some(&Options::EventBridge) {
        // EB-1: the message is the event, whatever its member names; it is checked whole (JSON,
        // an object, EB-3) when it is matched.
        return Ok(ReadMessage::document(json, MessageShape::Document));
    }
    match json::outline_with(json, mode).map_err(not_json)? {
        Outline::Object(members) => read_object(json, members, options, strict),
        Outline::Array(elements) => {
            // A filter on the body checks the document when it binds it; for the others (and
            // for a reader of every part) the document is checked here: a document that is not
            // JSON is an error whatever part a filter reads.
            if options.map(MessagePart::of) != Some(MessagePart::Body) {
                for element in elements {
                    element.map_err(not_json)?;
                }
            }
            Ok(ReadMessage::document(json, MessageShape::Document))
        }
        Outline::Scalar(_) => Ok(ReadMessage::document(json, MessageShape::Document)),
    }
}

/// The `attributes` or `headers` member that `options`' filters read, of a top-level object,
/// the other members ignored and an absent member read as none (the part, empty): how
/// [`crate::message_from_line`] reads a line for a filter on attributes or headers (the
/// conformance tools read lines so). The entry points read documents with [`read_messages`]
/// instead, which tells the shape first.
pub(crate) fn read_member_parts<'a>(
    json: &'a [u8],
    options: &Options,
) -> Result<ReadMessage<'a>, MessageError> {
    let Outline::Object(members) = json::outline(json).map_err(not_json)? else {
        return Err(MessageError::new(
            "",
            "a message must be a JSON object {\"attributes\": {...}} or {\"headers\": {...}}",
        ));
    };
    let mut message = ReadMessage {
        shape: MessageShape::Parts,
        body: None,
        attributes: Some(Vec::new()),
        headers: Some(Vec::new()),
    };
    let wanted = MessagePart::of(options);
    let mut members = members;
    while let Some(name) = members.next_name().map_err(not_json)? {
        match (wrapper_member(&name), wanted) {
            (Some(("attributes", _)), MessagePart::Attributes) => {
                let value = members.value().map_err(not_json)?;
                message.attributes = read_attributes("/attributes", &value)?;
            }
            (Some(("headers", _)), MessagePart::Headers) => {
                let value = members.value().map_err(not_json)?;
                message.headers = read_headers(&value)?;
            }
            _ => {}
        }
    }
    Ok(message)
}

/// Which wrapper shape a top-level member name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vocabulary {
    /// `attributes`, `headers`, `body`.
    Parts,
    /// The members of an SNS Publish API request and of an SNS notification envelope.
    Sns,
}

/// The wrapper member `name` is, as a static name, and its shape (`None`: a member of no
/// wrapper). Compared on the bytes as written; a name with escapes is decoded first.
fn wrapper_member(name: &json::Name<'_>) -> Option<(&'static str, Vocabulary)> {
    if name.is_escaped() {
        return wrapper_member_bytes(name.decode().as_bytes());
    }
    wrapper_member_bytes(name.raw())
}

/// Whether a top-level member named `name` (escapes decoded) may make a document a message
/// shape other than the body itself: a name of the parts shape or of the AWS SNS shapes. A
/// document whose first member's name is not one is the body
/// ([`crate::Evaluator::matches_body_document`] reads it so in one read).
pub(crate) fn is_shape_name(name: &[u8]) -> bool {
    wrapper_member_bytes(name).is_some()
}

fn wrapper_member_bytes(name: &[u8]) -> Option<(&'static str, Vocabulary)> {
    use Vocabulary::{Parts, Sns};
    Some(match name {
        b"attributes" => ("attributes", Parts),
        b"headers" => ("headers", Parts),
        b"body" => ("body", Parts),
        b"Message" => ("Message", Sns),
        b"MessageAttributes" => ("MessageAttributes", Sns),
        b"Type" => ("Type", Sns),
        b"MessageId" => ("MessageId", Sns),
        b"TopicArn" => ("TopicArn", Sns),
        b"TargetArn" => ("TargetArn", Sns),
        b"PhoneNumber" => ("PhoneNumber", Sns),
        b"Subject" => ("Subject", Sns),
        b"MessageStructure" => ("MessageStructure", Sns),
        b"MessageDeduplicationId" => ("MessageDeduplicationId", Sns),
        b"MessageGroupId" => ("MessageGroupId", Sns),
        b"SequenceNumber" => ("SequenceNumber", Sns),
        b"Timestamp" => ("Timestamp", Sns),
        b"SignatureVersion" => ("SignatureVersion", Sns),
        b"Signature" => ("Signature", Sns),
        b"SigningCertURL" => ("SigningCertURL", Sns),
        b"UnsubscribeURL" => ("UnsubscribeURL", Sns),
        b"SigningCertUrl" => ("SigningCertUrl", Sns),
        b"UnsubscribeUrl" => ("UnsubscribeUrl", Sns),
        _ => return None,
    })
}

/// Reads a top-level object: a wrapper shape when every member name is the wrapper's, else the
/// document itself is the body (read no further when the filter reads the body).
fn read_object<'a>(
    json: &'a [u8],
    members: json::Members<'a>,
    options: Option<&Options>,
    strict: bool,
) -> Result<ReadMessage<'a>, MessageError> {
    let wanted = options.map(MessagePart::of);
    let (mut parts_shape, mut sns_shape, mut document) = (true, true, false);
    let mut kept: Vec<(&'static str, RawValue<'a>)> = Vec::new();
    let mut members = members;
    while let Some(name) = members.next_name().map_err(not_json)? {
        let known = wrapper_member(&name);
        if !document {
            parts_shape &= matches!(known, Some((_, Vocabulary::Parts)));
            sns_shape &= matches!(known, Some((_, Vocabulary::Sns)));
            if !parts_shape && !sns_shape {
                // A name of no wrapper: the document is the body, read no further for a filter
                // on the body.
                if wanted == Some(MessagePart::Body) {
                    return Ok(ReadMessage::document(json, MessageShape::Document));
                }
                document = true;
                kept.retain(|(n, _)| is_carried_part(n));
            }
        }
        match known {
            Some((name, _)) if !document || is_carried_part(name) => {
                kept.push((name, members.value().map_err(not_json)?));
            }
            _ => {}
        }
    }
    if document {
        return read_document(json, &kept, wanted, strict);
    }
    if kept.is_empty() {
        // `{}`: nothing to misread; no attributes, no headers, and the empty object as body.
        return Ok(ReadMessage {
            shape: MessageShape::Document,
            body: Some(Cow::Borrowed(json)),
            attributes: Some(Vec::new()),
            headers: Some(Vec::new()),
        });
    }
    let has = |names: &[&str]| kept.iter().any(|(n, _)| names.contains(n));
    if parts_shape {
        read_parts(&kept, wanted)
    } else if has(&["Message", "MessageAttributes"]) {
        read_sns(&kept, wanted)
    } else {
        Ok(ReadMessage::document(json, MessageShape::Document))
    }
}

/// Whether a document's member named `name` may carry a part beside the body.
fn is_carried_part(name: &str) -> bool {
    name == "attributes" || name == "headers"
}

/// A document that is the body, with the `attributes` and `headers` members it carries beside
/// its own (`members`): read when the filter reads them (then they must be in their form), or,
/// with no filter known, kept when they are in their form (`strict`: they must be).
fn read_document<'a>(
    json: &'a [u8],
    members: &[(&'static str, RawValue<'a>)],
    wanted: Option<MessagePart>,
    strict: bool,
) -> Result<ReadMessage<'a>, MessageError> {
    let mut message = ReadMessage::document(json, MessageShape::Document);
    for (name, value) in members {
        let part = if *name == "attributes" {
            MessagePart::Attributes
        } else {
            MessagePart::Headers
        };
        if wanted.is_some_and(|w| w != part) {
            continue;
        }
        let read = match part {
            MessagePart::Attributes => {
                read_attributes("/attributes", value).map(|a| message.attributes = a)
            }
            _ => read_headers(value).map(|h| message.headers = h),
        };
        if let Err(e) = read
            && (wanted.is_some() || strict)
        {
            return Err(e);
        }
    }
    Ok(message)
}

/// The parts shape: `attributes`, `headers`, `body`, each optional (the last of a repeated
/// member counts).
fn read_parts<'a>(
    members: &[(&'static str, RawValue<'a>)],
    wanted: Option<MessagePart>,
) -> Result<ReadMessage<'a>, MessageError> {
    let mut message = ReadMessage {
        shape: MessageShape::Parts,
        body: None,
        attributes: None,
        headers: None,
    };
    for (name, value) in members {
        match *name {
            "attributes" => {
                message.attributes = unless_unread(
                    MessagePart::Attributes,
                    wanted,
                    read_attributes("/attributes", value),
                )?;
            }
            "headers" => {
                message.headers = unless_unread(MessagePart::Headers, wanted, read_headers(value))?;
            }
            _ => message.body = read_body(value),
        }
    }
    Ok(message)
}

/// An AWS SNS message: `Message` is the body, `MessageAttributes` the attributes (none when
/// absent).
fn read_sns<'a>(
    members: &[(&'static str, RawValue<'a>)],
    wanted: Option<MessagePart>,
) -> Result<ReadMessage<'a>, MessageError> {
    let mut message = ReadMessage {
        shape: MessageShape::Sns,
        body: None,
        attributes: None,
        headers: None,
    };
    for (name, value) in members {
        match *name {
            "Message" => message.body = read_body(value),
            "MessageAttributes" => {
                message.attributes = unless_unread(
                    MessagePart::Attributes,
                    wanted,
                    read_attributes("/MessageAttributes", value),
                )?;
            }
            "Type" => match value.as_str() {
                Some(t) if t == "Notification" => {}
                Some(t) => {
                    return Err(MessageError {
                        code: ErrorCode::MessageShape,
                        pointer: "/Type".to_owned(),
                        message: format!(
                            "an SNS message of type `{}` carries no message to filter (only a \
                             `Notification` does)",
                            filtervm_vm::excerpt::excerpt(&*t)
                        ),
                    });
                }
                None => {
                    return Err(MessageError::new(
                        "/Type",
                        "`Type` must be a string: \"Notification\"",
                    ));
                }
            },
            _ => {}
        }
    }
    message.attributes.get_or_insert_with(Vec::new);
    Ok(message)
}

/// A part as read, unless it is in the wrong form and the filter does not read it (`wanted` is
/// another part): then the message has it not, and the filter never hears of it.
fn unless_unread<T>(
    part: MessagePart,
    wanted: Option<MessagePart>,
    read: Result<Option<T>, MessageError>,
) -> Result<Option<T>, MessageError> {
    match read {
        Err(_) if wanted.is_some_and(|w| w != part) => Ok(None),
        read => read,
    }
}

/// A body member: a string is the body text (`null`: no body); any other JSON value is the body
/// itself, as written.
fn read_body<'a>(value: &RawValue<'a>) -> Option<Cow<'a, [u8]>> {
    match value.kind() {
        RawKind::Null => None,
        RawKind::String => value.as_str().map(|text| match text {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        }),
        _ => Some(Cow::Borrowed(value.text())),
    }
}

/// A member read into a tree (`null`: `None`); `at` is its pointer, for errors.
fn member_tree(at: &str, value: &RawValue<'_>) -> Result<Option<json::Map>, MessageError> {
    match value.kind() {
        RawKind::Null => return Ok(None),
        RawKind::Object => {}
        _ => return Err(MessageError::new(at, "must be an object")),
    }
    let mut options = ParseOptions::default();
    options.lone_surrogates = json::LoneSurrogates::Replace;
    match json::parse_with(value.text(), &options) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err(MessageError::new(at, "must be an object")),
        Err(e) => Err(MessageError::new(at, format!("cannot be read: {e}"))),
    }
}

/// Typed attributes: `NAME: {"Type": T, "Value": V}` (or `type`/`value`, `DataType` with
/// `StringValue`/`BinaryValue`), `null` for none; `base` is the member's pointer. `V` is a string,
/// or a number read as its text as written (`301.5`, `1e400`). The dialects' own rules for
/// attributes (basaltic: `String` or `Number`, B-4) are checked when a filter reads them.
fn read_attributes(
    base: &str,
    value: &RawValue<'_>,
) -> Result<Option<Vec<Attribute>>, MessageError> {
    let Some(map) = member_tree(base, value).map_err(|e| MessageError {
        message: format!(
            "`{}` {}: {{NAME: {{\"Type\": \"String\", \"Value\": \"...\"}}}}",
            base.trim_start_matches('/'),
            e.message
        ),
        ..e
    })?
    else {
        return Ok(Some(Vec::new()));
    };
    let mut attributes = Vec::with_capacity(map.len());
    for (name, entry) in map.iter() {
        let at = pointer::push(base, name);
        let Value::Object(fields) = entry else {
            return Err(MessageError::new(
                at,
                "an attribute must be an object {\"Type\": T, \"Value\": V} (or {\"DataType\": T, \
                 \"StringValue\": V})",
            ));
        };
        let type_field = ["Type", "type", "DataType"]
            .into_iter()
            .find_map(|k| fields.get(k).map(|v| (k, v)));
        let data_type = match type_field {
            Some((_, Value::String(t))) => AttributeType::from_name(t),
            _ => None,
        };
        let Some(data_type) = data_type else {
            let field = type_field.map_or("Type", |(k, _)| k);
            return Err(MessageError::new(
                pointer::push(&at, field),
                format!(
                    "`{field}` must be \"String\", \"Number\", \"String.Array\" or \"Binary\" (or a \
                     custom `String.x`, `Number.x`, `Binary.x` type)"
                ),
            ));
        };
        let value_field = ["Value", "value", "StringValue", "BinaryValue"]
            .into_iter()
            .find_map(|k| fields.get(k).map(|v| (k, v)));
        let text = match value_field {
            Some((_, Value::String(text))) => text.clone(),
            Some((_, Value::Number(number))) => number.as_str().to_owned(),
            _ => {
                let field = value_field.map_or("Value", |(k, _)| k);
                return Err(MessageError::new(
                    pointer::push(&at, field),
                    format!(
                        "attribute `{}`: `{field}` must be a string (or a number, read as its \
                         text as written)",
                        crate::error::excerpt(name)
                    ),
                ));
            }
        };
        attributes.push(Attribute {
            name: name.clone(),
            data_type,
            value: text,
        });
    }
    Ok(Some(attributes))
}

/// Headers: `NAME: VALUE`, `VALUE` a string or a non-empty array of strings (a header given
/// several values, which only some dialects read: [`crate::parts`] checks that when a filter
/// reads them); `null` for none.
fn read_headers(value: &RawValue<'_>) -> Result<Option<Vec<Header>>, MessageError> {
    let Some(map) = member_tree("/headers", value).map_err(|e| MessageError {
        message: format!("`headers` {}: {{NAME: VALUE}}", e.message),
        ..e
    })?
    else {
        return Ok(Some(Vec::new()));
    };
    let mut headers = Vec::with_capacity(map.len());
    for (name, value) in map.iter() {
        let at = pointer::push("/headers", name);
        let values = match value {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(MessageError::new(
                        pointer::index(&at, i),
                        "every value of a header must be a string (write numbers as strings, \
                         e.g. \"5\")",
                    )),
                })
                .collect::<Result<_, _>>()?,
            Value::Array(_) => {
                return Err(MessageError::new(
                    at,
                    "a header given as an array needs at least one value",
                ));
            }
            _ => {
                return Err(MessageError::new(
                    at,
                    "a header value must be a string or an array of strings (write numbers as \
                     strings, e.g. \"5\")",
                ));
            }
        };
        headers.push(Header {
            name: name.clone(),
            values,
        });
    }
    Ok(Some(headers))
}

/// The error of bytes that are not one JSON document.
fn not_json(e: json::Error) -> MessageError {
    MessageError {
        code: ErrorCode::MessageNotJson,
        pointer: String::new(),
        message: format!("the message is not JSON: {e}"),
    }
}

#[cfg(test)]
mod tests;

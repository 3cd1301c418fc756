//! Every call into filtervm made by this crate, in one place.
//!
//! The DataFusion functions ([`crate::udf`]) see filtervm only through this module: a compiled
//! filter ([`CompiledFilter`]), a subscription set ([`Subscriptions`]), reusable per-batch
//! evaluation state ([`Matcher`], [`Router`]) and one message as a column cell gives it
//! ([`MessageRef`]). When the library's API changes, this module is what changes.
//!
//! Messages are read by the library's one reading path (the `filtervm` crate), as every entry
//! point reads them: a text cell is one JSON document as received, read exactly as `filtervm
//! match` reads a line (`Message::json`: the parts shape, the AWS SNS shapes, or any other
//! document as the body itself — an SNS body, an Event Grid event), its bytes passed straight
//! through; a map or struct cell gives attributes and headers, borrowed. What each situation
//! means (a message without attributes, an Event Grid batch in one cell, ...) and which code it
//! gets is the library's table (`filtervm/MESSAGES.md`). A subscription set is the library's
//! [`SubscriptionSet`]: a group of subscriptions that cannot judge a message is reported
//! ([`Unjudged`]) and the other groups still route it.

use filtervm::{
    AttributeType, CompileError, Dialect, Filter, Message, Options, ReadMode, SetScratch,
    SubscriptionSet, UnjudgedGroup,
};

/// The part of a message a filter reads: the library's own.
pub use filtervm::MessagePart;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// The error code of a subscriptions file that cannot be read as one subscription per line.
pub const INVALID_SUBSCRIPTION: &str = "INVALID_SUBSCRIPTION";

/// The error code of a dialect name filtervm does not know.
pub const UNKNOWN_DIALECT: &str = "UNKNOWN_DIALECT";

/// The error code of a message longer than [`MAX_MESSAGE_BYTES`].
pub const MESSAGE_TOO_LARGE: &str = "MESSAGE_TOO_LARGE";

/// The longest message text read, in bytes: `filtervm match`'s default `--max-line-bytes` (16
/// times SNS's 256 KiB message limit, 4 times Event Grid's 1 MB event). Reading JSON text costs
/// up to ~75 times its size in memory, so a longer cell is not read (its result is null).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// A policy, options or subscription that filtervm rejected: its stable code, the JSON Pointer
/// of the offending part (`""` for the whole) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// A stable filtervm code (for example `NOTIFICATION_INVALID_FILTER_POLICY`, `INVALID_OPTIONS`).
    pub code: String,
    /// A JSON Pointer into the policy (or options), or a byte span for the stream text form.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl FilterError {
    fn new(code: &str, pointer: impl Into<String>, message: impl Into<String>) -> FilterError {
        FilterError {
            code: code.to_owned(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    fn from_compile(error: &CompileError) -> Vec<FilterError> {
        error
            .errors
            .iter()
            .map(|e| FilterError::new(e.code.as_str(), e.pointer.clone(), e.message.clone()))
            .collect()
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{} at {}: {}", self.code, pointer, self.message)
    }
}

/// A message that could not be read or judged by a filter: the library's code, pointer and
/// message (or [`MESSAGE_TOO_LARGE`], this crate's own limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageError {
    /// A stable code (`INVALID_MESSAGE`, `MESSAGE_SHAPE`, [`MESSAGE_TOO_LARGE`], ...).
    pub code: String,
    /// A JSON Pointer into the message.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl MessageError {
    fn new(code: &str, message: impl Into<String>) -> MessageError {
        MessageError {
            code: code.to_owned(),
            pointer: String::new(),
            message: message.into(),
        }
    }
}

impl From<filtervm::MessageError> for MessageError {
    fn from(e: filtervm::MessageError) -> MessageError {
        MessageError {
            code: e.code.as_str().to_owned(),
            pointer: e.pointer,
            message: e.message,
        }
    }
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "{}: {}", self.code, self.message)
        } else {
            write!(f, "{} at {}: {}", self.code, self.pointer, self.message)
        }
    }
}

/// One named value of a message given as a map or struct cell (an attribute or a header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageField {
    /// The attribute or header name.
    pub name: String,
    /// Its value.
    pub value: FieldValue,
}

/// The value of a [`MessageField`], by the Arrow type it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// Text: a `String` attribute, a header value.
    Text(String),
    /// The bytes of a binary cell that are not UTF-8: a `String` attribute, a header value,
    /// present and satisfying no string test (`filtervm/MESSAGES.md`, "an attribute value or
    /// header value that is not UTF-8"), as the library reads such bytes from Rust and C.
    Bytes(Vec<u8>),
    /// A number (its text as Arrow prints it): a `Number` attribute, a header value.
    Number(String),
    /// Several texts: a `String.Array` attribute, a header with several values.
    Texts(Vec<FieldText>),
    /// An attribute with its declared type spelled out (`String`, `Number`, `String.Array`,
    /// `Binary`, `String.x`, ...), from a struct of a type and a value.
    Typed {
        /// The declared type name.
        data_type: FieldText,
        /// The value text.
        value: FieldText,
    },
}

/// One text of a [`FieldValue`]: UTF-8 text, or the bytes of a binary cell that are not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldText {
    /// UTF-8 text.
    Str(String),
    /// Bytes that are not UTF-8.
    Bytes(Vec<u8>),
}

impl FieldText {
    /// The bytes, of the text or as they are.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            FieldText::Str(s) => s.as_bytes(),
            FieldText::Bytes(b) => b,
        }
    }
}

/// The text of a `String.Array` attribute holding `items`: their JSON array. An item that is not
/// UTF-8 is written as it is between its quotes, so the whole value is not UTF-8 either — an
/// attribute that is present and satisfies no string test, as any value that is not UTF-8.
fn string_array_text(items: &[FieldText]) -> Vec<u8> {
    let mut text = vec![b'['];
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        match item {
            FieldText::Str(s) => {
                text.extend_from_slice(serde_json::Value::from(s.as_str()).to_string().as_bytes())
            }
            FieldText::Bytes(b) => {
                text.push(b'"');
                text.extend_from_slice(b);
                text.push(b'"');
            }
        }
    }
    text.push(b']');
    text
}

/// One message as an Arrow cell holds it.
#[derive(Debug, Clone, Copy)]
pub enum MessageRef<'a> {
    /// A text or binary cell: one JSON document as received, read as `filtervm match` reads a
    /// line (its bytes as they are: bytes that are not UTF-8 are not JSON).
    Text(&'a [u8]),
    /// Attributes and headers from a map or struct cell.
    Fields(&'a [MessageField]),
}

/// An error for message text beyond [`MAX_MESSAGE_BYTES`].
fn check_size(text: &[u8]) -> Result<(), MessageError> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(MessageError::new(
            MESSAGE_TOO_LARGE,
            format!(
                "the message is {} bytes; the limit is {MAX_MESSAGE_BYTES} bytes (4 MiB)",
                text.len()
            ),
        ));
    }
    Ok(())
}

/// The attributes of a map or struct cell's fields, borrowed: a text value (or bytes that are not
/// UTF-8) is a `String` attribute, a number a `Number`, a list of texts a `String.Array` (its
/// JSON text, kept in the owned texts beside), a typed struct its declared type. A type name
/// that is no type makes the attributes unreadable (`INVALID_MESSAGE` for the filters that read
/// them).
type FieldAttributes<'a> = Vec<(&'a str, AttributeType, &'a [u8])>;

/// The headers of a map or struct cell's fields, borrowed (a list of texts is a header with
/// several values).
type FieldHeaders<'a> = Vec<(&'a str, Vec<&'a [u8]>)>;

/// The JSON texts of a cell's `String.Array` attributes, one per field (`None` for the others):
/// the owned values [`field_parts`] borrows.
fn string_array_texts(fields: &[MessageField]) -> Vec<Option<Vec<u8>>> {
    fields
        .iter()
        .map(|field| match &field.value {
            FieldValue::Texts(items) => Some(string_array_text(items)),
            _ => None,
        })
        .collect()
}

/// Reads a map or struct cell's fields as attributes and as headers (each group of a set reads
/// the part its dialect reads); the error of a type name that is no type. `arrays` are the
/// fields' [`string_array_texts`].
fn field_parts<'a>(
    fields: &'a [MessageField],
    arrays: &'a [Option<Vec<u8>>],
) -> (
    FieldAttributes<'a>,
    FieldHeaders<'a>,
    Option<filtervm::MessageError>,
) {
    let mut attributes = Vec::with_capacity(fields.len());
    let mut headers = Vec::with_capacity(fields.len());
    let mut unreadable = None;
    for (field, array) in fields.iter().zip(arrays) {
        let name = field.name.as_str();
        headers.push((
            name,
            match &field.value {
                FieldValue::Text(v) | FieldValue::Number(v) => vec![v.as_bytes()],
                FieldValue::Bytes(b) => vec![b.as_slice()],
                FieldValue::Texts(vs) => vs.iter().map(FieldText::as_bytes).collect(),
                FieldValue::Typed { value, .. } => vec![value.as_bytes()],
            },
        ));
        let (data_type, value) = match &field.value {
            FieldValue::Text(v) => (AttributeType::String, v.as_bytes()),
            FieldValue::Bytes(b) => (AttributeType::String, b.as_slice()),
            FieldValue::Number(v) => (AttributeType::Number, v.as_bytes()),
            FieldValue::Texts(_) => (
                AttributeType::StringArray,
                array.as_deref().unwrap_or_default(),
            ),
            FieldValue::Typed { data_type, value } => {
                let known = match data_type {
                    FieldText::Str(t) => AttributeType::from_name(t),
                    FieldText::Bytes(_) => None,
                };
                match known {
                    Some(t) => (t, value.as_bytes()),
                    None => {
                        unreadable.get_or_insert_with(|| {
                            filtervm::MessageError::new(
                                format!(
                                    "/attributes/{}/Type",
                                    name.replace('~', "~0").replace('/', "~1")
                                ),
                                format!(
                                    "attribute `{}`: unknown type `{}` (expected String, Number, \
                                     String.Array, Binary or a custom String.x / Number.x / \
                                     Binary.x type)",
                                    filtervm::excerpt(name),
                                    filtervm::excerpt(&String::from_utf8_lossy(
                                        data_type.as_bytes()
                                    ))
                                ),
                            )
                        });
                        continue;
                    }
                }
            }
        };
        attributes.push((name, data_type, value));
    }
    (attributes, headers, unreadable)
}

/// Runs `f` on the library's message of `message` (a text cell's bytes as they are; a map or
/// struct cell's fields as attributes and headers, borrowed).
fn with_message<R>(
    message: MessageRef<'_>,
    f: impl FnOnce(&Message<'_, [(&str, AttributeType, &[u8])], [(&str, Vec<&[u8]>)]>) -> R,
) -> Result<R, MessageError> {
    match message {
        MessageRef::Text(text) => {
            check_size(text)?;
            Ok(f(&Message::document(text)))
        }
        MessageRef::Fields(fields) => {
            let arrays = string_array_texts(fields);
            let (attributes, headers, unreadable) = field_parts(fields, &arrays);
            let message = Message::from_parts(None, Some(&attributes[..]), Some(&headers[..]));
            Ok(match &unreadable {
                Some(e) => f(&message.with_unreadable(MessagePart::Attributes, e)),
                None => f(&message),
            })
        }
    }
}

/// Parses a dialect name.
fn dialect(name: &str) -> Result<Dialect, FilterError> {
    name.parse::<Dialect>()
        .map_err(|e| FilterError::new(UNKNOWN_DIALECT, "", e.to_string()))
}

/// Reads `dialect`'s options from their JSON text: empty text (or `null`) is the defaults.
fn options(dialect: Dialect, text: &str) -> Result<Options, Vec<FilterError>> {
    if text.trim().is_empty() {
        return Ok(Options::from(dialect));
    }
    Options::from_json(dialect, text).map_err(|e| FilterError::from_compile(&e))
}

/// A compiled filter and the message part it reads.
#[derive(Debug)]
pub struct CompiledFilter {
    filter: Filter,
    part: MessagePart,
}

impl CompiledFilter {
    /// Compiles `policy` (text, as a policy file holds it) of the dialect named `dialect` with
    /// `options` (JSON text; empty for the defaults). Every error is returned, in policy order.
    pub fn compile(
        dialect_name: &str,
        policy: &str,
        options_text: &str,
    ) -> Result<CompiledFilter, Vec<FilterError>> {
        let dialect = dialect(dialect_name).map_err(|e| vec![e])?;
        let options = options(dialect, options_text)?;
        let part = MessagePart::of(&options);
        let filter = Filter::new(options, policy).map_err(|e| FilterError::from_compile(&e))?;
        Ok(CompiledFilter { part, filter })
    }

    /// The message part the filter reads.
    pub fn part(&self) -> MessagePart {
        self.part
    }
}

/// Reusable evaluation buffers for matching one filter after another (one per batch).
#[derive(Debug, Default)]
pub struct Matcher {
    matcher: filtervm::Matcher,
}

impl Matcher {
    /// New, empty buffers.
    pub fn new() -> Matcher {
        Matcher::default()
    }

    /// New, empty buffers that read a JSON document or body in `mode` (with
    /// [`ReadMode::Trusted`], members no filter reads are skipped by their structure alone:
    /// README, "Trusted input").
    pub fn with_read_mode(mode: ReadMode) -> Matcher {
        Matcher {
            matcher: filtervm::Matcher::with_read_mode(mode),
        }
    }

    /// Whether `message` matches `filter`; an error, with the library's code, when the filter
    /// cannot read or judge the message (`filtervm/MESSAGES.md`).
    pub fn matches(
        &mut self,
        filter: &CompiledFilter,
        message: MessageRef<'_>,
    ) -> Result<bool, MessageError> {
        let matcher = &mut self.matcher;
        Ok(with_message(message, |m| {
            matcher.matches(&filter.filter, m)
        })??)
    }
}

/// A subscription set loaded from NDJSON (one `{"id", "dialect", "policy", "options"}` per
/// line, as `filtervm route` reads it), mixed dialects allowed.
///
/// One [`SubscriptionSet`]: subscriptions of the same dialect and options share a group (one key
/// table, shared tests, an equality index); a message is read once per group.
#[derive(Debug)]
pub struct Subscriptions {
    /// The subscriptions by their position in the file.
    set: SubscriptionSet<u32>,
    /// Subscription ids by their position in the file (the set's own ids are these positions).
    ids: Vec<String>,
    /// A hash of the file's text: two sets are the same set when their texts are the same.
    fingerprint: u64,
}

impl Subscriptions {
    /// Loads a subscription set from NDJSON text. Blank lines are skipped. Every invalid
    /// subscription is reported (line, id, code, pointer); none is dropped silently.
    pub fn from_ndjson(text: &str) -> Result<Subscriptions, Vec<SubscriptionError>> {
        let mut set = SubscriptionSet::new();
        let mut ids: Vec<String> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut errors = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            if line.trim().is_empty() {
                continue;
            }
            match Self::read_line(line, &mut seen, line_number) {
                Err(error) => errors.push(error),
                Ok((id, dialect, policy, options)) => {
                    let fail = |id: &str, error: FilterError| SubscriptionError {
                        line: line_number,
                        id: Some(id.to_owned()),
                        error,
                    };
                    // As policy text, so that a subscription's policy meets the same limits
                    // (size, depth) as a policy file (`Filter::new`).
                    let policy_text = match &policy {
                        serde_json::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    let options = match Options::from_json(dialect, &options) {
                        Ok(options) => options,
                        Err(e) => {
                            errors.extend(
                                FilterError::from_compile(&e)
                                    .into_iter()
                                    .map(|error| fail(&id, error)),
                            );
                            continue;
                        }
                    };
                    let filter = match Filter::new(options, &policy_text) {
                        Ok(filter) => filter,
                        Err(e) => {
                            errors.extend(
                                FilterError::from_compile(&e)
                                    .into_iter()
                                    .map(|error| fail(&id, error)),
                            );
                            continue;
                        }
                    };
                    let added = u32::try_from(ids.len())
                        .map_err(|_| "more subscriptions than a set holds".to_owned())
                        .and_then(|position| {
                            set.insert(position, &filter).map_err(|e| e.to_string())
                        })
                        .map_err(|e| FilterError::new(INVALID_SUBSCRIPTION, "", e));
                    match added {
                        Ok(_) => ids.push(id),
                        Err(error) => errors.push(fail(&id, error)),
                    }
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        Ok(Subscriptions {
            set,
            ids,
            fingerprint: hasher.finish(),
        })
    }

    /// Reads one line: id (text), dialect, policy and options.
    fn read_line(
        line: &str,
        seen: &mut HashMap<String, usize>,
        line_number: usize,
    ) -> Result<(String, Dialect, serde_json::Value, serde_json::Value), SubscriptionError> {
        let fail = |id: Option<&str>, pointer: &str, message: String| SubscriptionError {
            line: line_number,
            id: id.map(str::to_owned),
            error: FilterError::new(INVALID_SUBSCRIPTION, pointer, message),
        };
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| fail(None, "", format!("not a JSON object: {e}")))?;
        let serde_json::Value::Object(mut object) = value else {
            return Err(fail(
                None,
                "",
                "a subscription is a JSON object {\"id\", \"dialect\", \"policy\", \"options\"}"
                    .to_owned(),
            ));
        };
        let id = match object.remove("id") {
            Some(serde_json::Value::String(id)) => id,
            Some(serde_json::Value::Number(n)) => n.to_string(),
            _ => {
                return Err(fail(
                    None,
                    "/id",
                    "`id` must be a string or a number".to_owned(),
                ));
            }
        };
        if let Some(first) = seen.insert(id.clone(), line_number) {
            return Err(fail(
                Some(&id),
                "/id",
                format!("the id is already used on line {first}"),
            ));
        }
        let dialect = match object.remove("dialect") {
            Some(serde_json::Value::String(name)) => {
                dialect(&name).map_err(|error| SubscriptionError {
                    line: line_number,
                    id: Some(id.clone()),
                    error: FilterError {
                        pointer: "/dialect".to_owned(),
                        ..error
                    },
                })?
            }
            _ => {
                return Err(fail(
                    Some(&id),
                    "/dialect",
                    "`dialect` must be a dialect name (sns, basaltic, eventgrid, stream, expr, eventbridge)"
                        .to_owned(),
                ));
            }
        };
        let Some(policy) = object.remove("policy") else {
            return Err(fail(Some(&id), "/policy", "`policy` is missing".to_owned()));
        };
        let options = object.remove("options").unwrap_or(serde_json::Value::Null);
        if let Some(name) = object.keys().next() {
            return Err(fail(
                Some(&id),
                "",
                format!(
                    "unknown member `{}` (a subscription has id, dialect, policy and options)",
                    filtervm::excerpt(name)
                ),
            ));
        }
        Ok((id, dialect, policy, options))
    }

    /// The number of subscriptions.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the set holds no subscription.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id of the subscription at `position` (file order).
    pub fn id(&self, position: u32) -> Option<&str> {
        self.ids.get(position as usize).map(String::as_str)
    }

    /// The parts of a message the set's subscriptions read (one per group of them).
    pub fn parts(&self) -> impl Iterator<Item = MessagePart> + '_ {
        self.set.options().map(MessagePart::of)
    }

    /// A hash of the subscriptions file's text.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// A subscription that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionError {
    /// Its line in the subscriptions file (1-based).
    pub line: usize,
    /// Its id, when it could be read.
    pub id: Option<String>,
    /// What is wrong (the code and pointer of the policy error, for a policy that does not
    /// compile).
    pub error: FilterError,
}

impl fmt::Display for SubscriptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.id {
            Some(id) => write!(
                f,
                "line {} (id {}): {}",
                self.line,
                filtervm::excerpt(id),
                self.error
            ),
            None => write!(f, "line {}: {}", self.line, self.error),
        }
    }
}

/// A group of subscriptions (one dialect and options value) that could not judge a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unjudged {
    /// The group: its dialect, and its options when they are not the defaults
    /// (`sns {"scope":"MessageBody"}`), as `filtervm route` names it.
    pub group: String,
    /// The number of its subscriptions, none of which was judged.
    pub subscriptions: usize,
    /// Why: the library's code, pointer and message.
    pub error: MessageError,
}

impl From<UnjudgedGroup> for Unjudged {
    fn from(g: UnjudgedGroup) -> Unjudged {
        let dialect = g.options.dialect();
        let group = if g.options == Options::from(dialect) {
            dialect.name().to_owned()
        } else {
            format!("{} {}", dialect.name(), g.options)
        };
        Unjudged {
            group,
            subscriptions: g.subscriptions,
            error: MessageError::from(g.error),
        }
    }
}

/// Reusable routing buffers (one per batch).
#[derive(Debug, Default)]
pub struct Router {
    scratch: SetScratch,
}

impl Router {
    /// New, empty buffers.
    pub fn new() -> Router {
        Router::default()
    }

    /// New, empty buffers that read a JSON document or body in `mode` (see
    /// [`Matcher::with_read_mode`]).
    pub fn with_read_mode(mode: ReadMode) -> Router {
        let mut scratch = SetScratch::new();
        scratch.set_read_mode(mode);
        Router { scratch }
    }

    /// Appends to `out` the positions of the subscriptions whose filters match `message`, in
    /// subscriptions-file order, and to `unjudged` the groups of the set that could not judge it
    /// (whose subscriptions are then in no result; the other groups still route the message).
    /// An error only for a message this crate does not read at all ([`MESSAGE_TOO_LARGE`]).
    pub fn route(
        &mut self,
        subscriptions: &Subscriptions,
        message: MessageRef<'_>,
        out: &mut Vec<u32>,
        unjudged: &mut Vec<Unjudged>,
    ) -> Result<(), MessageError> {
        let scratch = &mut self.scratch;
        with_message(message, |m| {
            let matches = subscriptions.set.matching(scratch, m);
            out.extend(matches.ids());
            unjudged.extend(matches.unjudged().map(Unjudged::from));
        })
    }
}

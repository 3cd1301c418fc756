//! Every call into filtervm made by this crate, in one place.
//!
//! The DataFusion functions ([`crate::udf`]) see filtervm only through this module: a compiled
//! filter ([`CompiledFilter`]), a subscription set ([`Subscriptions`]), reusable per-batch
//! evaluation state ([`Matcher`], [`Router`]) and one message as a column cell gives it
//! ([`MessageRef`]). When the library's API changes, this module is what changes.
//!
//! A JSON body (an SNS body in body scope, an Event Grid event) is matched straight from the text
//! cell's bytes; any other message is read into the library's owned [`Message`] (a text cell by
//! `message_from_line`, a map or struct cell copied into owned attributes or headers) before it
//! is bound to a filter's keys. A subscription set is the library's [`SubscriptionSet`], which
//! binds a message once per (dialect, options) group of its subscriptions.

use filtervm_compiler::{
    CompileError, Dialect, ErrorCode, Evaluator, Filter, GroupMessage, Options, SetScratch,
    SubscriptionSet, compile_text,
};
use filtervm_vm::message::{Attribute, AttributeType, Header, Message};
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// The error code of a subscriptions file that cannot be read as one subscription per line.
pub const INVALID_SUBSCRIPTION: &str = "INVALID_SUBSCRIPTION";

/// The error code of a dialect name filtervm does not know.
pub const UNKNOWN_DIALECT: &str = "UNKNOWN_DIALECT";

/// The error code of a message whose bytes are not UTF-8 text.
pub const MESSAGE_NOT_UTF8: &str = "MESSAGE_NOT_UTF8";

/// The error code of a message longer than [`MAX_MESSAGE_BYTES`].
pub const MESSAGE_TOO_LARGE: &str = "MESSAGE_TOO_LARGE";

/// The longest message text read, in bytes: `filtervm match`'s default `--max-line-bytes` (16
/// times SNS's 256 KiB message limit, 4 times Event Grid's 1 MB event). Reading JSON text costs
/// up to ~75 times its size in memory, so a longer cell is not read (its result is null).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The error code of a message given in a form its filter's dialect cannot read (a map of
/// attributes for an Event Grid filter, say).
pub const MESSAGE_SHAPE: &str = "MESSAGE_SHAPE";

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

/// A message that could not be read in its filter's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageError {
    /// A stable code (`INVALID_MESSAGE`, [`MESSAGE_NOT_UTF8`], [`MESSAGE_SHAPE`], ...).
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

impl From<filtervm_compiler::MessageError> for MessageError {
    fn from(e: filtervm_compiler::MessageError) -> MessageError {
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

/// The part of a message a filter reads: the library's own.
pub use filtervm_compiler::MessagePart;

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
    /// A number (its text as Arrow prints it): a `Number` attribute, a header value.
    Number(String),
    /// Several texts: a `String.Array` attribute, a header with several values.
    Texts(Vec<String>),
    /// An attribute with its declared type spelled out (`String`, `Number`, `String.Array`,
    /// `Binary`, `String.x`, ...), from a struct of a type and a value.
    Typed {
        /// The declared type name.
        data_type: String,
        /// The value text.
        value: String,
    },
}

/// One message as an Arrow cell holds it.
#[derive(Debug, Clone, Copy)]
pub enum MessageRef<'a> {
    /// JSON text in the dialect's natural line form, as `filtervm match` reads a line: for `sns`
    /// in body scope and `eventgrid` the raw body or event; otherwise the conformance vector
    /// shape (`{"attributes": {...}}`, `{"headers": {...}}`).
    Text(&'a str),
    /// Bytes that should be such text but are not UTF-8.
    NotUtf8,
    /// Attributes or headers from a map or struct cell.
    Fields(&'a [MessageField]),
}

/// Reads `message` as a filter of `dialect` with `options` reads messages.
fn read_message(
    dialect: Dialect,
    options: &Options,
    part: MessagePart,
    message: MessageRef<'_>,
) -> Result<Message, MessageError> {
    match message {
        MessageRef::Text(text) => {
            check_size(text)?;
            Ok(filtervm_compiler::message_from_line(
                dialect, options, text,
            )?)
        }
        MessageRef::NotUtf8 => Err(MessageError::new(
            MESSAGE_NOT_UTF8,
            "the message bytes are not UTF-8 text",
        )),
        MessageRef::Fields(fields) => fields_message(part, fields),
    }
}

/// An error for message text beyond [`MAX_MESSAGE_BYTES`].
fn check_size(text: &str) -> Result<(), MessageError> {
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

/// A message of attributes or headers from the fields of a map or struct cell.
fn fields_message(part: MessagePart, fields: &[MessageField]) -> Result<Message, MessageError> {
    match part {
        MessagePart::Body => Err(MessageError::new(
            MESSAGE_SHAPE,
            "this filter reads a JSON body (sns body scope, eventgrid, eventbridge): pass the body's JSON text \
             (a string or binary column), not a map or struct",
        )),
        MessagePart::Attributes => {
            let mut out = Vec::with_capacity(fields.len());
            for field in fields {
                let (data_type, value) = match &field.value {
                    FieldValue::Text(v) => (AttributeType::String, v.clone()),
                    FieldValue::Number(v) => (AttributeType::Number, v.clone()),
                    FieldValue::Texts(vs) => (
                        AttributeType::StringArray,
                        serde_json::Value::from(vs.clone()).to_string(),
                    ),
                    FieldValue::Typed { data_type, value } => {
                        let Some(t) = AttributeType::from_name(data_type) else {
                            return Err(MessageError {
                                code: ErrorCode::InvalidMessage.as_str().to_owned(),
                                pointer: format!("/{}", field.name),
                                message: format!(
                                    "unknown attribute type `{}` (expected String, Number, \
                                     String.Array, Binary or a custom String.x / Number.x / \
                                     Binary.x type)",
                                    filtervm_vm::excerpt::excerpt(data_type)
                                ),
                            });
                        };
                        (t, value.clone())
                    }
                };
                out.push(Attribute {
                    name: field.name.clone(),
                    data_type,
                    value,
                });
            }
            Ok(Message::Attributes(out))
        }
        MessagePart::Headers => Ok(Message::Headers(
            fields
                .iter()
                .map(|field| Header {
                    name: field.name.clone(),
                    values: match &field.value {
                        FieldValue::Text(v) | FieldValue::Number(v) => vec![v.clone()],
                        FieldValue::Texts(vs) => vs.clone(),
                        FieldValue::Typed { value, .. } => vec![value.clone()],
                    },
                })
                .collect(),
        )),
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
        let filter =
            compile_text(dialect, policy, &options).map_err(|e| FilterError::from_compile(&e))?;
        Ok(CompiledFilter {
            part: MessagePart::of(&options),
            filter,
        })
    }

    /// The message part the filter reads.
    pub fn part(&self) -> MessagePart {
        self.part
    }
}

/// Reusable evaluation buffers for matching one filter after another (one per batch).
#[derive(Debug, Default)]
pub struct Matcher {
    evaluator: Evaluator,
}

impl Matcher {
    /// New, empty buffers.
    pub fn new() -> Matcher {
        Matcher::default()
    }

    /// Whether `message` matches `filter`; an error when the message cannot be read in the
    /// filter's shape.
    pub fn matches(
        &mut self,
        filter: &CompiledFilter,
        message: MessageRef<'_>,
    ) -> Result<bool, MessageError> {
        let f = &filter.filter;
        if let (MessagePart::Body, MessageRef::Text(text)) = (filter.part, message) {
            check_size(text)?;
            return Ok(self.evaluator.try_matches_bytes(f, text.as_bytes())?);
        }
        let message = read_message(f.dialect(), f.options(), filter.part, message)?;
        Ok(self.evaluator.try_matches(f, &message)?)
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
                    // (size, depth) as a policy file (`compile_text`).
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
                    let filter = match compile_text(dialect, &policy_text, &options) {
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
                    filtervm_vm::excerpt::excerpt(name)
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
                filtervm_vm::excerpt::excerpt(id),
                self.error
            ),
            None => write!(f, "line {}: {}", self.line, self.error),
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

    /// Appends to `out` the positions of the subscriptions whose filters match `message`, in
    /// subscriptions-file order. An error when a group of the set cannot read or judge the
    /// message (the first such group's).
    pub fn route(
        &mut self,
        subscriptions: &Subscriptions,
        message: MessageRef<'_>,
        out: &mut Vec<u32>,
    ) -> Result<(), MessageError> {
        // The first message this crate could not read, with its own code; the set reports the
        // group it belongs to.
        let mut unread: Option<MessageError> = None;
        let matches = subscriptions
            .set
            .matching_with(&mut self.scratch, |options| {
                let part = MessagePart::of(options);
                let read = match (part, message) {
                    (MessagePart::Body, MessageRef::Text(text)) => {
                        check_size(text).map(|()| GroupMessage::Body(text.as_bytes()))
                    }
                    _ => read_message(options.dialect(), options, part, message)
                        .map(GroupMessage::Message),
                };
                read.map_err(|e| {
                    let placeholder = filtervm_compiler::MessageError {
                        code: ErrorCode::InvalidMessage,
                        pointer: e.pointer.clone(),
                        message: e.message.clone(),
                    };
                    unread.get_or_insert(e);
                    placeholder
                })
            });
        match matches.unjudged().next() {
            None => {
                out.extend(matches.ids());
                Ok(())
            }
            Some(group) => Err(match unread {
                Some(e) if group.error.code == ErrorCode::InvalidMessage => e,
                _ => MessageError::from(group.error),
            }),
        }
    }
}

//! The bindings' adapter to the filtervm library.
//!
//! Every call the bindings make into `filtervm_compiler` and `filtervm_vm` is in this module: the
//! C ABI (`crate::ffi`) and the Python package (`python/`, which uses this crate as an `rlib`)
//! only see the types defined here. What the library does not offer yet is built here on top of
//! it, and goes away as the library grows:
//!
//! - **Raw bytes in, errors out.** Policies, options and messages arrive as bytes; text that is
//!   not UTF-8 is reported like any other bad input (a policy error with the dialect's code, a
//!   message error `INVALID_MESSAGE`), never a panic.
//! - **Messages in parts** ([`Message`]): a JSON document in the dialect's shape (the shapes of
//!   the conformance vectors; for `eventgrid` the event itself), a raw body (an SNS body in
//!   `MessageBody` scope, an Event Grid event), typed attributes, or headers. Each filter reads
//!   the part its dialect needs; a filter whose part is missing is an error (`INVALID_MESSAGE`
//!   with a hint), never a silent "no match".
//! - **One set for every dialect** ([`Set`]): the library's `SubscriptionSet`, which holds every
//!   dialect and options value; each of its groups reads the message part (or the document in
//!   the shape) its dialect reads. Filters loaded from bytes join it too (the wire format carries
//!   their IR); one written by the first wire format, which shipped none, is refused
//!   (`FILTER_WITHOUT_IR`).
//! - **Thread safety**: a [`Filter`] and a [`Set`] are shared between threads; matching takes
//!   `&self` and uses per-thread (filters) or pooled (sets) evaluation buffers.

use ahash::AHashMap;
use filtervm_compiler::explain::{self, Sources};
use filtervm_compiler::lint;
use filtervm_compiler::{
    CompileError, Dialect, ErrorCode, Evaluator, GroupMessage, InsertError, MessageError, Options,
    SetScratch, SnsScope, SubscriptionSet, compile_text, message_from_json,
};
use filtervm_vm::message::Message as VmMessage;
use filtervm_vm::message::{Attribute as VmAttribute, AttributeType, Header as VmHeader};
use std::cell::RefCell;
use std::sync::{Mutex, PoisonError};

/// The code of an argument the bindings reject before the library sees it (an unknown dialect
/// name, a null pointer).
pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
/// The code of a set that cannot take one more distinct filter or test.
pub const SET_FULL: &str = "SET_FULL";

/// What a [`Failure`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The policy or its options: every error of the policy is listed.
    Policy,
    /// A message that could not be read for a filter.
    Message,
    /// Bytes that are not a filter, or a loaded filter asked for its IR.
    Load,
    /// An argument of the binding itself (an unknown dialect name, a null pointer).
    Argument,
    /// A set that cannot take the filter.
    Set,
}

/// One error: a stable code, a JSON Pointer and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// The stable code (`SNS_SYNTAX_ERROR`, `INVALID_MESSAGE`, ...).
    pub code: &'static str,
    /// A JSON Pointer into the policy or the message (`""` for the whole of it; for the stream
    /// text form a byte span `bytes A..B`).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// Why an operation failed: a kind and at least one [`Detail`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What the failure is about.
    pub kind: FailureKind,
    /// The errors, at least one.
    pub details: Vec<Detail>,
}

impl Failure {
    fn one(
        kind: FailureKind,
        code: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Failure {
        Failure {
            kind,
            details: vec![Detail {
                code,
                pointer: pointer.into(),
                message: message.into(),
            }],
        }
    }

    /// A failure of the binding's own arguments (code [`INVALID_ARGUMENT`]).
    pub fn argument(message: impl Into<String>) -> Failure {
        Failure::one(FailureKind::Argument, INVALID_ARGUMENT, "", message)
    }

    /// A message that cannot be read (code `INVALID_MESSAGE`), at `pointer` of the message.
    pub fn message(pointer: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure::one(
            FailureKind::Message,
            ErrorCode::InvalidMessage.as_str(),
            pointer,
            message,
        )
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.details.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            if d.pointer.is_empty() {
                write!(f, "{}: {}", d.code, d.message)?;
            } else {
                write!(f, "{} at {}: {}", d.code, d.pointer, d.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

fn from_compile(e: CompileError) -> Failure {
    Failure {
        kind: FailureKind::Policy,
        details: e
            .errors
            .into_iter()
            .map(|e| Detail {
                code: e.code.as_str(),
                pointer: e.pointer,
                message: e.message,
            })
            .collect(),
    }
}

fn from_message(e: MessageError) -> Failure {
    Failure::one(FailureKind::Message, e.code.as_str(), e.pointer, e.message)
}

/// The dialect names, as the bindings accept them.
pub fn dialects() -> Vec<&'static str> {
    Dialect::ALL.iter().map(|d| d.name()).collect()
}

fn dialect(name: &str) -> Result<Dialect, Failure> {
    name.parse::<Dialect>()
        .map_err(|e| Failure::argument(e.to_string()))
}

/// `bytes` as text, or a policy error of `dialect` naming the first invalid byte.
fn policy_text<'a>(dialect: Dialect, what: &str, bytes: &'a [u8]) -> Result<&'a str, Failure> {
    std::str::from_utf8(bytes).map_err(|e| {
        let code = if what == "options" {
            ErrorCode::InvalidOptions
        } else {
            dialect.invalid_code()
        };
        Failure::one(
            FailureKind::Policy,
            code.as_str(),
            "",
            format!(
                "the {what} is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// Reads `dialect`'s options from JSON text (`None`: the defaults). Errors are
/// `INVALID_OPTIONS`, each with the pointer of the option.
fn options(dialect: Dialect, options: Option<&[u8]>) -> Result<Options, Failure> {
    match options {
        None => Ok(Options::from(dialect)),
        Some(bytes) => {
            let text = policy_text(dialect, "options", bytes)?;
            Options::from_json(dialect, text).map_err(from_compile)
        }
    }
}

/// A compiled filter (immutable; share it between threads freely).
#[derive(Debug, Clone)]
pub struct Filter {
    inner: filtervm_compiler::Filter,
    /// The policy text it was compiled from (`None` when loaded from bytes): explain and lint
    /// show each condition's part of it.
    source: Option<String>,
}

thread_local! {
    /// Each thread's evaluation buffers for single filters (reused across calls, like `regex`'s
    /// per-thread caches).
    static EVALUATOR: RefCell<Evaluator> = RefCell::new(Evaluator::new());
}

/// Compiles `policy` (JSON text, or for `stream` also the text form) of the dialect named
/// `dialect_name`, with `options` as JSON text (`None` for the dialect's defaults).
pub fn compile(
    dialect_name: &str,
    policy: &[u8],
    options: Option<&[u8]>,
) -> Result<Filter, Failure> {
    let dialect = dialect(dialect_name)?;
    let options = self::options(dialect, options)?;
    let text = policy_text(dialect, "policy", policy)?;
    let inner = compile_text(dialect, text, &options).map_err(from_compile)?;
    Ok(Filter {
        inner,
        source: Some(text.to_owned()),
    })
}

/// One lint warning: a code, a pointer into the policy, what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// A stable code (`DUPLICATE_CONDITION`, `NEVER_MATCHES`, ...).
    pub code: &'static str,
    /// The JSON Pointer of the policy part.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// What to do, in one line.
    pub fix: String,
}

impl Filter {
    /// The dialect's name (`sns`, ...).
    pub fn dialect(&self) -> &'static str {
        self.inner.dialect().name()
    }

    /// The options as JSON text, every option written out (`{}` for a dialect without options).
    pub fn options_json(&self) -> String {
        self.inner.options().to_json().to_string()
    }

    /// The optimized IR as text (`None` for a filter loaded from bytes).
    pub fn ir(&self) -> Option<String> {
        self.inner.ir().map(ToString::to_string)
    }

    /// The IR as lowered from the policy, before optimization (`None` when loaded from bytes).
    pub fn lowered_ir(&self) -> Option<String> {
        self.inner.lowered_ir().map(ToString::to_string)
    }

    /// The bytecode's disassembly.
    pub fn disassemble(&self) -> String {
        self.inner.program().disassemble()
    }

    /// The policy text the filter was compiled from (`None` when loaded from bytes).
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// Whether the filter reads the value of attributes named `name`. The bindings leave the
    /// values of the others out of the message they build (saving their copies): a value that
    /// is not read changes no verdict, while the attribute's name and type still count (the
    /// dialect's type rules, and sns rule 12's "the message has an attribute").
    pub fn reads_attribute(&self, name: &str) -> bool {
        !self.inner.program().keys().slots_named(name).is_empty()
    }

    /// The wire form: program, dialect and options (the IR does not travel).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes()
    }

    /// Loads [`Filter::to_bytes`] output (any bytes may be given; the program is verified).
    pub fn from_bytes(bytes: &[u8]) -> Result<Filter, Failure> {
        filtervm_compiler::Filter::from_bytes(bytes)
            .map(|inner| Filter {
                inner,
                source: None,
            })
            .map_err(|e| Failure::one(FailureKind::Load, e.code().as_str(), "", e.to_string()))
    }

    /// Whether `message` matches. A message whose part this filter reads is missing or cannot
    /// be read is an error, and so is an SNS body too complex to judge element by element
    /// (`MESSAGE_TOO_COMPLEX`, which the library's plain `matches` treats as "no match"). An SNS
    /// body that is not JSON keeps its dialect meaning (rule 14: it matches only policies that
    /// read nothing from the body), as it does in a [`Set`].
    pub fn matches(&self, mut message: Message<'_>) -> Result<bool, Failure> {
        let mut parsed = ParsedDocument::default();
        let bound = read(self.inner.options(), &mut message, &mut parsed)?;
        EVALUATOR.with(|evaluator| {
            let mut evaluator = evaluator.borrow_mut();
            match evaluator.try_matches(&self.inner, &bound) {
                Err(e)
                    if e.code == ErrorCode::MessageNotJson
                        && self.inner.dialect() == Dialect::Sns =>
                {
                    Ok(evaluator.matches(&self.inner, &bound))
                }
                other => other.map_err(from_message),
            }
        })
    }

    /// Why `message` does or does not match, as JSON text (the shape `filtervm explain --json`
    /// prints, documented in `filtervm_compiler::explain`).
    pub fn explain_json(&self, mut message: Message<'_>) -> Result<String, Failure> {
        let mut parsed = ParsedDocument::default();
        let bound = read(self.inner.options(), &mut message, &mut parsed)?;
        let policy = self.policy_value();
        let sources = Sources {
            policy: policy.as_ref(),
            message: parsed.value.as_ref(),
        };
        explain::explain(&self.inner, &bound, sources)
            .map(|e| e.to_json().to_string())
            .map_err(|e| Failure::one(FailureKind::Load, e.code().as_str(), "", e.to_string()))
    }

    /// The lint warnings of the policy (a filter loaded from bytes has no policy to lint:
    /// `FILTER_WITHOUT_IR`).
    pub fn lint(&self) -> Result<Vec<Warning>, Failure> {
        let Some(policy) = self.policy_value() else {
            return Err(Failure::one(
                FailureKind::Load,
                ErrorCode::FilterWithoutIr.as_str(),
                "",
                "the filter was loaded from bytes and carries no policy: lint the policy it was \
                 compiled from",
            ));
        };
        Ok(lint::lint_filter(&self.inner, &policy)
            .into_iter()
            .map(|w| Warning {
                code: w.code,
                pointer: w.pointer,
                message: w.message,
                fix: w.fix,
            })
            .collect())
    }

    /// The policy as a JSON value (the stream text form as a JSON string), as explain and lint
    /// read it.
    fn policy_value(&self) -> Option<filtervm_vm::json::Value> {
        let text = self.source.as_deref()?;
        match filtervm_vm::json::parse(text.as_bytes()) {
            Ok(value) => Some(value),
            Err(_) if self.inner.dialect() == Dialect::Stream => Some(
                filtervm_vm::json::Value::String(text.trim_end_matches(['\n', '\r']).to_owned()),
            ),
            Err(_) => None,
        }
    }
}

/// A message document in the dialect's JSON shape: as bytes, or already as a `serde_json`
/// value. For exact number text give bytes: an Event Grid event given as bytes is read from
/// them, every number as written.
#[derive(Debug, Clone)]
pub enum Document<'a> {
    /// JSON text.
    Json(&'a [u8]),
    /// A parsed value, read as it holds the document: numbers as `i64`, `u64` or `f64` (what
    /// `serde_json` rounded when it read the text stays rounded), members in its map's order.
    Value(serde_json::Value),
}

/// One typed message attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute(VmAttribute);

/// The base attribute types, for callers that know the type without a name to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributeKind {
    /// `String`.
    String,
    /// `Number` (the value is the number's text).
    Number,
    /// `String.Array` (the value is the JSON text of an array).
    StringArray,
    /// `Binary` (invisible to filtering; the value is not read).
    Binary,
}

impl Attribute {
    /// An attribute of a base type.
    pub fn of_kind(name: String, kind: AttributeKind, value: String) -> Attribute {
        let data_type = match kind {
            AttributeKind::String => AttributeType::String,
            AttributeKind::Number => AttributeType::Number,
            AttributeKind::StringArray => AttributeType::StringArray,
            AttributeKind::Binary => AttributeType::Binary,
        };
        Attribute(VmAttribute {
            name,
            data_type,
            value,
        })
    }

    /// An attribute of the type named `data_type` (`String`, `Number`, `String.Array`, `Binary`
    /// or an SNS custom `String.x` / `Number.x` / `Binary.x`). For `String.Array` the value is
    /// the JSON text of an array.
    pub fn new(name: String, data_type: &str, value: String) -> Result<Attribute, Failure> {
        let Some(data_type) = AttributeType::from_name(data_type) else {
            return Err(Failure::message(
                pointer_to(&["attributes", &name, "Type"]),
                format!(
                    "unknown attribute type `{}`: String, Number, String.Array or Binary (or a \
                     custom String.x, Number.x, Binary.x)",
                    excerpt(data_type)
                ),
            ));
        };
        Ok(Attribute(VmAttribute {
            name,
            data_type,
            value,
        }))
    }

    /// An attribute from bytes (the C ABI): the name and value must be UTF-8. The value of an
    /// attribute whose name `reads` rejects is neither checked nor copied; its type still
    /// counts (see [`Filter::reads_attribute`]).
    pub fn from_bytes(
        name: &[u8],
        data_type: &str,
        value: &[u8],
        reads: &dyn Fn(&str) -> bool,
    ) -> Result<Attribute, Failure> {
        let name = utf8(name, "an attribute name", &["attributes"])?;
        let value = if reads(&name) {
            utf8(value, "an attribute value", &["attributes", &name])?
        } else {
            String::new()
        };
        let kind = match data_type {
            "String" => AttributeKind::String,
            "Number" => AttributeKind::Number,
            "String.Array" => AttributeKind::StringArray,
            "Binary" => AttributeKind::Binary,
            other => return Attribute::new(name, other, value),
        };
        Ok(Attribute::of_kind(name, kind, value))
    }
}

/// One header with one or more values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header(VmHeader);

impl Header {
    /// A header; `values` holds at least one value for the message to be readable.
    pub fn new(name: String, values: Vec<String>) -> Header {
        Header(VmHeader { name, values })
    }

    /// Headers from `(name, value)` pairs: a name given several times is one header with
    /// several values, in order.
    pub fn group(pairs: impl IntoIterator<Item = (String, String)>) -> Vec<Header> {
        let mut out: Vec<Header> = Vec::new();
        let mut at: AHashMap<String, usize> = AHashMap::new();
        for (name, value) in pairs {
            match at.get(&name).and_then(|&i| out.get_mut(i)) {
                Some(h) => h.0.values.push(value),
                None => {
                    at.insert(name.clone(), out.len());
                    out.push(Header::new(name, vec![value]));
                }
            }
        }
        out
    }

    /// [`Header::group`] of pairs of bytes (the C ABI); names and values must be UTF-8.
    pub fn from_byte_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    ) -> Result<Vec<Header>, Failure> {
        let mut read = Vec::new();
        for (name, value) in pairs {
            let name = utf8(name, "a header name", &["headers"])?;
            let value = utf8(value, "a header value", &["headers", &name])?;
            read.push((name, value));
        }
        Ok(Header::group(read))
    }
}

/// A message as the bindings take it: up to four parts, each filter reading the one its dialect
/// needs.
///
/// | filter | reads |
/// |---|---|
/// | `sns` (`MessageAttributes` scope), `basaltic` | `attributes`, else `document` |
/// | `sns` (`MessageBody` scope) | `body`, else `document` (`{"body": "..."}`) |
/// | `eventgrid`, `eventbridge` | `body` (the event's JSON), else `document` (the event) |
/// | `stream`, `expr` | `headers`, else `document` (`{"headers": {...}}`) |
#[derive(Debug, Clone, Default)]
pub struct Message<'a> {
    /// The whole message as JSON in the dialect's shape.
    pub document: Option<Document<'a>>,
    /// The raw body: an SNS message body (JSON or not), an Event Grid event.
    pub body: Option<&'a [u8]>,
    /// Typed attributes.
    pub attributes: Option<Vec<Attribute>>,
    /// Headers.
    pub headers: Option<Vec<Header>>,
}

impl<'a> Message<'a> {
    /// A message given as one JSON document in the dialect's shape.
    pub fn json(bytes: &'a [u8]) -> Message<'a> {
        Message {
            document: Some(Document::Json(bytes)),
            ..Message::default()
        }
    }
}

/// A document's value, parsed at most once per message however many groups read it.
#[derive(Debug, Default)]
struct ParsedDocument {
    value: Option<serde_json::Value>,
}

impl ParsedDocument {
    fn get<'v>(&'v mut self, document: &Document<'_>) -> Result<&'v serde_json::Value, Failure> {
        if self.value.is_none() {
            let value = match document {
                Document::Json(bytes) => serde_json::from_slice(bytes)
                    .map_err(|e| Failure::message("", format!("the message is not JSON: {e}")))?,
                Document::Value(value) => value.clone(),
            };
            self.value = Some(value);
        }
        self.value
            .as_ref()
            .ok_or_else(|| Failure::message("", "the message document could not be read"))
    }
}

/// The part a filter with `options` reads, and the hint given when it is missing.
fn missing_part(options: &Options) -> Failure {
    let (part, hint) = match options {
        Options::Sns(o) if o.scope == SnsScope::MessageBody => (
            "the body",
            "give the message's body (or the whole message as JSON {\"body\": \"...\"})",
        ),
        Options::Sns(_) => (
            "the message attributes",
            "give the attributes (or the whole message as JSON {\"attributes\": {...}}); to filter \
             on the body, compile with the options {\"scope\": \"MessageBody\"}",
        ),
        Options::Basaltic => (
            "the message attributes",
            "give the attributes (or the whole message as JSON {\"attributes\": {...}})",
        ),
        Options::EventGrid(_) | Options::EventBridge => (
            "the event",
            "give the event's JSON as the body (or the event itself as the document)",
        ),
        Options::Stream | Options::Expr(_) => (
            "the headers",
            "give the headers (or the whole message as JSON {\"headers\": {...}})",
        ),
    };
    Failure::message(
        "",
        format!(
            "a {} filter reads {part}, which the message does not have: {hint}",
            options.dialect()
        ),
    )
}

/// The part of a message a filter with `options` reads directly (else it reads the document).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Attributes,
    Body,
    Headers,
}

fn part_of(options: &Options) -> Part {
    match options {
        Options::Sns(o) if o.scope == SnsScope::MessageBody => Part::Body,
        Options::Sns(_) | Options::Basaltic => Part::Attributes,
        Options::EventGrid(_) | Options::EventBridge => Part::Body,
        Options::Stream | Options::Expr(_) => Part::Headers,
    }
}

/// Reads `message` for a filter with `options`: the dialect's part, checked by the dialect's
/// rules for that part (the same as its JSON reader's), moved out of `message`.
fn read(
    options: &Options,
    message: &mut Message<'_>,
    parsed: &mut ParsedDocument,
) -> Result<VmMessage, Failure> {
    let direct = match (options, part_of(options)) {
        (_, Part::Body) => message.body.map(|body| read_body(options, body)),
        (_, Part::Attributes) => message.attributes.take().map(|attributes| {
            let attributes = VmMessage::Attributes(attributes.into_iter().map(|a| a.0).collect());
            check_part(options, &attributes)?;
            Ok(attributes)
        }),
        (_, Part::Headers) => message.headers.take().map(|headers| {
            let headers = VmMessage::Headers(headers.into_iter().map(|h| h.0).collect());
            check_part(options, &headers)?;
            Ok(headers)
        }),
    };
    if let Some(read) = direct {
        return read;
    }
    read_document(options, message.document.as_ref(), parsed)
}

/// A body for a filter with `options` (a body scope SNS filter or an Event Grid filter).
fn read_body(options: &Options, body: &[u8]) -> Result<VmMessage, Failure> {
    let dialect = options.dialect();
    match options {
        // Rule 14: a body that is not JSON (or not text) matches only the empty policy.
        Options::Sns(_) => match std::str::from_utf8(body) {
            Ok(text) => {
                filtervm_compiler::message_from_line(dialect, options, text).map_err(from_message)
            }
            Err(_) => Ok(VmMessage::Unparsable),
        },
        _ => {
            let text = std::str::from_utf8(body)
                .map_err(|e| Failure::message("", format!("the event is not UTF-8 text: {e}")))?;
            filtervm_compiler::message_from_line(dialect, options, text).map_err(from_message)
        }
    }
}

/// The message in the dialect's shape from the message's document (the part was not given
/// directly).
fn read_document(
    options: &Options,
    document: Option<&Document<'_>>,
    parsed: &mut ParsedDocument,
) -> Result<VmMessage, Failure> {
    let Some(document) = document else {
        return Err(missing_part(options));
    };
    // An Event Grid document is the event itself: read from its bytes like a body, so that every
    // number keeps its text (a `serde_json::Value` holds numbers as binary64 at best).
    if let (Options::EventGrid(_) | Options::EventBridge, Document::Json(bytes)) =
        (options, document)
    {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Failure::message("", format!("the event is not UTF-8 text: {e}")))?;
        return filtervm_compiler::message_from_line(options.dialect(), options, text)
            .map_err(from_message);
    }
    let value = parsed.get(document)?;
    message_from_json(options.dialect(), options, value).map_err(from_message)
}

/// A message's attributes and headers as the library's messages, built once for all the groups
/// of a [`Set`] (each group checks them by its dialect's rules and borrows them).
struct SetMessage<'a> {
    document: Option<Document<'a>>,
    body: Option<&'a [u8]>,
    attributes: Option<VmMessage>,
    headers: Option<VmMessage>,
    parsed: ParsedDocument,
}

impl<'a> SetMessage<'a> {
    fn new(message: Message<'a>) -> SetMessage<'a> {
        SetMessage {
            document: message.document,
            body: message.body,
            attributes: message
                .attributes
                .map(|a| VmMessage::Attributes(a.into_iter().map(|a| a.0).collect())),
            headers: message
                .headers
                .map(|h| VmMessage::Headers(h.into_iter().map(|h| h.0).collect())),
            parsed: ParsedDocument::default(),
        }
    }
}

/// The message as the set's group with `options` reads it (see [`read`]): attributes and
/// headers borrowed, a body or a document read for the group.
fn read_for_group<'m>(
    options: &Options,
    attributes: Option<&'m VmMessage>,
    headers: Option<&'m VmMessage>,
    body: Option<&[u8]>,
    document: Option<&Document<'_>>,
    parsed: &mut ParsedDocument,
) -> Result<GroupMessage<'m>, Failure> {
    let direct = match part_of(options) {
        Part::Body => body.map(|body| read_body(options, body).map(GroupMessage::Message)),
        Part::Attributes => {
            attributes.map(|a| check_part(options, a).map(|()| GroupMessage::Borrowed(a)))
        }
        Part::Headers => {
            headers.map(|h| check_part(options, h).map(|()| GroupMessage::Borrowed(h)))
        }
    };
    match direct {
        Some(read) => read,
        None => read_document(options, document, parsed).map(GroupMessage::Message),
    }
}

/// Checks attributes or headers given directly by the dialect's rules for them (its JSON
/// reader's): basaltic attributes are `String` or `Number`, a stream header has one value, an
/// expr header at least one.
fn check_part(options: &Options, message: &VmMessage) -> Result<(), Failure> {
    match (options, message) {
        (Options::Basaltic, VmMessage::Attributes(attributes)) => {
            match attributes
                .iter()
                .find(|a| !matches!(a.data_type, AttributeType::String | AttributeType::Number))
            {
                Some(a) => Err(Failure::message(
                    pointer_to(&["attributes", &a.name, "type"]),
                    format!(
                        "a basaltic attribute is a String or a Number, not {}",
                        a.data_type
                    ),
                )),
                None => Ok(()),
            }
        }
        (Options::Stream, VmMessage::Headers(headers)) => {
            match headers.iter().find(|h| h.values.len() != 1) {
                Some(h) => Err(Failure::message(
                    pointer_to(&["headers", &h.name]),
                    format!(
                        "a stream header has one value; `{}` has {}",
                        excerpt(&h.name),
                        h.values.len()
                    ),
                )),
                None => Ok(()),
            }
        }
        (Options::Expr(_), VmMessage::Headers(headers)) => {
            match headers.iter().find(|h| h.values.is_empty()) {
                Some(h) => Err(Failure::message(
                    pointer_to(&["headers", &h.name]),
                    "a header given as a list needs at least one value",
                )),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

fn utf8(bytes: &[u8], what: &str, at: &[&str]) -> Result<String, Failure> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_owned()),
        Err(e) => Err(Failure::message(
            pointer_to(at),
            format!(
                "{what} is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )),
    }
}

/// The JSON Pointer of `segments` (each escaped).
fn pointer_to(segments: &[&str]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// User input quoted in an error: the library's excerpt rule.
fn excerpt(text: &str) -> String {
    filtervm_compiler::error::excerpt(text).to_string()
}

/// Compiles and lints a policy (the policy's errors when it does not compile).
pub fn lint(
    dialect_name: &str,
    policy: &[u8],
    options: Option<&[u8]>,
) -> Result<Vec<Warning>, Failure> {
    compile(dialect_name, policy, options)?.lint()
}

/// Many subscriptions of any dialects and options, matched together; ids are the caller's.
///
/// `add` and `remove` take `&mut self`; `matching` takes `&self` and may run on several threads
/// at once (each call borrows evaluation buffers from a pool).
#[derive(Debug, Default)]
pub struct Set {
    set: SubscriptionSet<u64>,
    /// Evaluation buffers of finished `matching` calls, reused by the next ones.
    scratches: Mutex<Vec<SetScratch>>,
}

impl Set {
    /// An empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// The number of subscriptions.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether the set holds no subscription.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Adds subscription `id` with `filter` (what matching needs is kept, not the filter),
    /// replacing its filter if `id` is already there. A filter loaded from bytes of the first
    /// wire format, which carried no IR, is refused (`FILTER_WITHOUT_IR`).
    pub fn add(&mut self, id: u64, filter: &Filter) -> Result<(), Failure> {
        match self.set.insert(id, &filter.inner) {
            Ok(_) => Ok(()),
            Err(e @ InsertError::NoIr) => Err(Failure::one(
                FailureKind::Load,
                ErrorCode::FilterWithoutIr.as_str(),
                "",
                e.to_string(),
            )),
            Err(e @ InsertError::Full) => {
                Err(Failure::one(FailureKind::Set, SET_FULL, "", e.to_string()))
            }
        }
    }

    /// Removes subscription `id`; false when it was not in the set.
    pub fn remove(&mut self, id: u64) -> bool {
        self.set.remove(&id)
    }

    /// Appends to `out` the ids whose filter matches `message`, in the order they were first
    /// added.
    ///
    /// Each group of filters (one dialect and options) reads its part of the message; a part
    /// that a group needs and the message lacks is an error (no id is then appended), as is a
    /// part that cannot be read or judged.
    pub fn matching(&self, message: Message<'_>, out: &mut Vec<u64>) -> Result<(), Failure> {
        let mut message = SetMessage::new(message);
        let mut scratch = self
            .scratches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        let SetMessage {
            document,
            body,
            attributes,
            headers,
            parsed,
        } = &mut message;
        let (attributes, headers, body) = (attributes.as_ref(), headers.as_ref(), *body);
        // The first failure of the caller's message, with its pointer; a group's own judgement
        // (an event that is not JSON, a body too complex) comes from the library.
        let mut failure: Option<Failure> = None;
        let matches = self.set.matching_with(&mut scratch, |options| {
            read_for_group(
                options,
                attributes,
                headers,
                body,
                document.as_ref(),
                parsed,
            )
            .map_err(|f| {
                let e = MessageError {
                    code: ErrorCode::InvalidMessage,
                    pointer: f
                        .details
                        .first()
                        .map(|d| d.pointer.clone())
                        .unwrap_or_default(),
                    message: f.to_string(),
                };
                failure.get_or_insert(f);
                e
            })
        });
        let result = match matches.unjudged().next() {
            None => {
                out.extend(matches.ids());
                Ok(())
            }
            Some(group) => Err(match failure {
                Some(f) if group.error.code == ErrorCode::InvalidMessage => f,
                _ => from_message(group.error),
            }),
        };
        self.scratches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(scratch);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, &str, &str)]) -> Message<'static> {
        Message {
            attributes: Some(
                pairs
                    .iter()
                    .map(|(n, t, v)| Attribute::new((*n).into(), t, (*v).into()).unwrap())
                    .collect(),
            ),
            ..Message::default()
        }
    }

    #[test]
    fn a_filter_matches_every_part_it_reads() {
        let f = compile("sns", br#"{"event": ["order.paid"]}"#, None).unwrap();
        assert!(
            f.matches(attrs(&[("event", "String", "order.paid")]))
                .unwrap()
        );
        assert!(
            !f.matches(attrs(&[("event", "String", "order.new")]))
                .unwrap()
        );
        let doc = br#"{"attributes": {"event": {"Type": "String", "Value": "order.paid"}}}"#;
        assert!(f.matches(Message::json(doc)).unwrap());
        let body = compile(
            "sns",
            br#"{"event": ["order.paid"]}"#,
            Some(br#"{"scope": "MessageBody"}"#),
        )
        .unwrap();
        let raw = Message {
            body: Some(br#"{"event": "order.paid"}"#),
            ..Message::default()
        };
        assert!(body.matches(raw).unwrap());
        // Not JSON (nor UTF-8): matches only the empty policy (rule 14), not an error.
        let junk = Message {
            body: Some(b"\xff{"),
            ..Message::default()
        };
        assert!(!body.matches(junk).unwrap());
        let text = Message {
            body: Some(b"not json"),
            ..Message::default()
        };
        assert!(!body.matches(text).unwrap());
        let everything = compile("sns", b"{}", Some(br#"{"scope": "MessageBody"}"#)).unwrap();
        let text = Message {
            body: Some(b"not json"),
            ..Message::default()
        };
        assert!(everything.matches(text).unwrap());
    }

    /// An Event Grid event given as the JSON document is read from its bytes: a number beyond
    /// binary64's precision or range keeps its exact value (a `serde_json::Value` would hold
    /// 9007199254740992.5 as 9007199254740992 and could not hold 1e400 at all).
    #[test]
    fn an_event_document_keeps_every_number_exact() {
        let f = compile(
            "eventgrid",
            br#"{"advancedFilters": [{"operatorType": "NumberGreaterThan", "key": "data.n", "value": 9007199254740992}]}"#,
            None,
        )
        .unwrap();
        for (event, expected) in [
            (&br#"{"data": {"n": 9007199254740992.5}}"#[..], true),
            (br#"{"data": {"n": 9007199254740992}}"#, false),
            (br#"{"data": {"n": 1e400}}"#, true),
        ] {
            assert_eq!(
                f.matches(Message::json(event)).unwrap(),
                expected,
                "{}",
                String::from_utf8_lossy(event)
            );
        }
    }

    #[test]
    fn a_missing_part_is_an_error_with_a_hint() {
        let f = compile("sns", br#"{"event": ["x"]}"#, None).unwrap();
        let only_body = Message {
            body: Some(b"{}"),
            ..Message::default()
        };
        let e = f.matches(only_body).unwrap_err();
        assert_eq!(e.kind, FailureKind::Message);
        assert_eq!(e.details[0].code, "INVALID_MESSAGE");
        assert!(e.details[0].message.contains("MessageBody"), "{e}");
    }

    #[test]
    fn bad_input_is_reported_with_codes_and_pointers() {
        let e = compile("sns", br#"{"a": [{"prefix": 1}]}"#, None).unwrap_err();
        assert_eq!(e.kind, FailureKind::Policy);
        assert_eq!(e.details[0].code, "SNS_TYPE_ERROR");
        assert_eq!(e.details[0].pointer, "/a/0/prefix");
        let e = compile("nope", b"{}", None).unwrap_err();
        assert_eq!(e.kind, FailureKind::Argument);
        let e = compile("basaltic", b"{\"a\": [\"\xff\"]}", None).unwrap_err();
        assert_eq!(e.details[0].code, "NOTIFICATION_INVALID_FILTER_POLICY");
        assert!(e.details[0].message.contains("offset 8"), "{e}");
        let e = compile("sns", b"{}", Some(br#"{"scop": "MessageBody"}"#)).unwrap_err();
        assert_eq!(e.details[0].code, "INVALID_OPTIONS");
        let e = Filter::from_bytes(b"").unwrap_err();
        assert_eq!(
            (e.kind, e.details[0].code),
            (FailureKind::Load, "INVALID_PROGRAM")
        );
        let f = compile("stream", b"region = eu-*", None).unwrap();
        let e = f
            .matches(Message {
                headers: Some(vec![Header::new(
                    "region".into(),
                    vec!["a".into(), "b".into()],
                )]),
                ..Message::default()
            })
            .unwrap_err();
        assert_eq!(e.details[0].pointer, "/headers/region");
        let e = Attribute::from_bytes(b"a/b", "Strung", b"x", &|_| true).unwrap_err();
        assert_eq!(e.details[0].pointer, "/attributes/a~1b/Type");
    }

    #[test]
    fn values_a_filter_does_not_read_are_left_out_but_still_count() {
        let f = compile("sns", br#"{"a": ["x"], "b": [{"exists": false}]}"#, None).unwrap();
        assert!(f.reads_attribute("a") && f.reads_attribute("b") && !f.reads_attribute("c"));
        let reads = |name: &str| f.reads_attribute(name);
        // The unread value is not even UTF-8: left out, it is no error.
        let c = Attribute::from_bytes(b"c", "String", b"\xff", &reads).unwrap();
        assert_eq!(c.0.value, "");
        let a = Attribute::from_bytes(b"a", "String", b"x", &reads).unwrap();
        let message = |attrs: Vec<Attribute>| Message {
            attributes: Some(attrs),
            ..Message::default()
        };
        assert!(f.matches(message(vec![a.clone(), c.clone()])).unwrap());
        // Its type still counts: an unknown type is an error, and a Binary attribute is not an
        // attribute for sns rule 12.
        assert!(Attribute::from_bytes(b"c", "Strung", b"", &reads).is_err());
        let only_binary = compile("sns", br#"{"b": [{"exists": false}]}"#, None).unwrap();
        let reads = |name: &str| only_binary.reads_attribute(name);
        let binary = Attribute::from_bytes(b"c", "Binary", b"", &reads).unwrap();
        assert!(!only_binary.matches(message(vec![binary])).unwrap());
        let string = Attribute::from_bytes(b"c", "String", b"zz", &reads).unwrap();
        assert!(only_binary.matches(message(vec![string])).unwrap());
    }

    #[test]
    fn a_set_mixes_dialects_and_loaded_filters() {
        let mut set = Set::new();
        let sns = compile("sns", br#"{"event": ["paid"]}"#, None).unwrap();
        let basaltic = compile("basaltic", br#"{"event": ["paid"]}"#, None).unwrap();
        let loaded = Filter::from_bytes(&sns.to_bytes()).unwrap();
        set.add(3, &loaded).unwrap();
        set.add(1, &sns).unwrap();
        set.add(2, &basaltic).unwrap();
        let mut out = Vec::new();
        set.matching(attrs(&[("event", "String", "paid")]), &mut out)
            .unwrap();
        assert_eq!(out, [3, 1, 2], "in the order they were added");
        // A filter written by the first wire format carries no IR: refused, with its code.
        let v1 = sns
            .inner
            .program()
            .to_bytes_with_metadata(br#"{"dialect":"sns","options":{}}"#);
        let old = Filter::from_bytes(&v1).unwrap();
        let e = set.add(9, &old).unwrap_err();
        assert_eq!(e.details[0].code, "FILTER_WITHOUT_IR");
        assert!(e.details[0].message.contains("re-export"), "{e}");
        assert_eq!(set.len(), 3);
        assert!(set.remove(3));
        assert!(!set.remove(3));
        // A stream filter needs headers: the same message is now an error, and nothing is
        // appended.
        set.add(4, &compile("stream", b"event = paid", None).unwrap())
            .unwrap();
        out.clear();
        let e = set
            .matching(attrs(&[("event", "String", "paid")]), &mut out)
            .unwrap_err();
        assert!(e.details[0].message.contains("reads the headers"), "{e}");
        assert!(out.is_empty());
        let both = Message {
            headers: Some(vec![Header::new("event".into(), vec!["paid".into()])]),
            ..attrs(&[("event", "String", "paid")])
        };
        set.matching(both.clone(), &mut out).unwrap();
        out.sort_unstable();
        assert_eq!(out, [1, 2, 4]);
        // Re-adding an id moves it to its new filter's group.
        set.add(1, &compile("stream", b"event = other", None).unwrap())
            .unwrap();
        out.clear();
        set.matching(both.clone(), &mut out).unwrap();
        out.sort_unstable();
        assert_eq!(out, [2, 4]);
        assert_eq!(set.len(), 3);
    }

    #[test]
    fn explain_and_lint_speak_json() {
        let f = compile(
            "basaltic",
            br#"{"amount": [{"numeric": [">=", 100, "<", 1000]}]}"#,
            None,
        )
        .unwrap();
        let explained = f
            .explain_json(attrs(&[("amount", "Number", "1000")]))
            .unwrap();
        assert!(explained.contains("\"EXCLUSIVE_BOUND\""), "{explained}");
        let warnings = lint("sns", br#"{"a": ["x", "x"]}"#, None).unwrap();
        assert!(!warnings.is_empty());
        let loaded = Filter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(
            loaded.lint().unwrap_err().details[0].code,
            "FILTER_WITHOUT_IR"
        );
        // The IR travels on the wire; the policy text does not.
        assert!(loaded.ir().is_some() && loaded.source().is_none());
    }
}

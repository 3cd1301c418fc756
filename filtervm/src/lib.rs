//! filtervm decides, for each published message, whether a subscription receives it.
//!
//! A subscription's filter is written in one of six dialects ([`Dialect`]): AWS SNS
//! subscription filter policies (`sns`, on message attributes or on the JSON body), the
//! notification service's policies (`basaltic`), Azure Event Grid subscription filters
//! (`eventgrid`), stream header clause groups (`stream`, with a text form), nested condition
//! trees over headers (`expr`) and Amazon EventBridge event patterns (`eventbridge`, as
//! aws/event-ruler matches them). [`Filter::new`] compiles one to a small bytecode program;
//! [`Filter::matches`] runs it on a [`Message`] — the bytes of a JSON document as received, or
//! the parts a broker holds (body, typed attributes, headers), borrowed.
//!
//! ```
//! use filtervm::{AttributeType, Dialect, Filter, Message, SnsScope};
//!
//! // An SNS filter policy on message attributes (the default scope).
//! let filter = Filter::new(Dialect::Sns, r#"{"store": ["example_corp"], "price": [{"numeric": [">", 10]}]}"#)?;
//!
//! // A message as SNS delivers it to an SQS queue or a Lambda function...
//! let delivered = br#"{"Type": "Notification", "Message": "order 7 paid",
//!     "MessageAttributes": {"store": {"Type": "String", "Value": "example_corp"},
//!                           "price": {"Type": "Number", "Value": "12.50"}}}"#;
//! assert!(filter.matches(&Message::json(delivered))?);
//!
//! // ...or the attributes the broker holds, borrowed (nothing is copied).
//! let attributes = [("store", AttributeType::String, "example_corp"), ("price", AttributeType::Number, "9.99")];
//! assert!(!filter.matches(&Message::attributes(&attributes))?);
//!
//! // The same policy on the JSON body: a plain event is the body.
//! let on_body = Filter::new(SnsScope::MessageBody, r#"{"store": ["example_corp"]}"#)?;
//! assert!(on_body.matches(&Message::json(br#"{"store": "example_corp", "items": 3}"#))?);
//!
//! // A plain JSON event has no attributes: sns rule 12 judges it (only `{}` matches such a
//! // message), and explain names the likely mistake.
//! let event = Message::json(br#"{"store": "example_corp"}"#);
//! assert!(!filter.matches(&event)?);
//! assert_eq!(filter.explain(&event)?.hints[0].code, "SCOPE_MISMATCH");
//!
//! // A message a filter cannot judge is an error naming the fix, never a quiet "no match".
//! let stream = Filter::new(Dialect::Stream, "store = example_corp")?;
//! let e = stream.matches(&event).unwrap_err();
//! assert_eq!(e.code.as_str(), "MESSAGE_SHAPE");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Filters
//!
//! [`Filter::new`] takes the policy text and either a [`Dialect`] (its default options) or the
//! dialect's typed options: [`SnsOptions`] / [`SnsScope`], [`EventGridOptions`] /
//! [`EventGridSchema`], [`ExprOptions`], or any [`Options`] (also read from their JSON form with
//! [`Options::from_json`], as the command line and config files give them).
//! [`Filter::from_value`] compiles a `serde_json` value. Numbers in policy text keep their exact
//! text (`1e400`, `9007199254740993.5`); serde_json's default features are all filtervm needs.
//!
//! An invalid policy is a [`CompileError`] listing every problem ([`PolicyError`]): a stable
//! [`ErrorCode`] (`SNS_LIMIT_EXCEEDED`, `EVENTGRID_INVALID_FILTER`, ...), the JSON Pointer of
//! the offending part, and a message (AWS's wording for SNS; "did you mean `numeric`?" for a
//! misspelled operator or option).
//!
//! ```
//! use filtervm::{Dialect, ErrorCode, Filter};
//! let e = Filter::new(Dialect::Sns, r#"{"price": [{"numric": [">", 1]}]}"#).unwrap_err();
//! assert_eq!(e.errors[0].code, ErrorCode::SnsUnknownOperator);
//! assert_eq!(e.errors[0].pointer, "/price/0/numric");
//! assert!(e.errors[0].message.contains("did you mean `numeric`?"));
//! ```
//!
//! A filter is immutable, cheap to clone, and can be shared between threads. [`Filter::to_bytes`]
//! and [`Filter::from_bytes`] ship a compiled filter (with what explain and subscription sets
//! need); [`Filter::explain`] tells why a message did or did not match, and [`Filter::lint`]
//! warns about what compiles but is probably not meant.
//!
//! # Messages
//!
//! A message has up to three parts, and each filter reads one ([`Filter::part`]):
//!
//! | filter | reads |
//! |---|---|
//! | `sns` in attribute scope (the default), `basaltic` | typed attributes: name, type (`String`, `Number`, `String.Array`, `Binary`), value text |
//! | `sns` in body scope, `eventgrid`, `eventbridge` | the JSON body: an SNS message body, an Event Grid event or CloudEvent, an EventBridge event |
//! | `stream`, `expr` | headers: name and one or more values |
//!
//! A broker gives the parts it holds, borrowed: [`Message::body`] (raw bytes as published),
//! [`Message::attributes`] (any [`Attributes`]: slices or `Vec`s of `(name, type, value)`,
//! `HashMap`s and `BTreeMap`s of name → `(type, value)`), [`Message::headers`] (any [`Headers`]:
//! slices of `(name, value)` pairs, maps of name → value or → `Vec` of values), combined with
//! `with_body`, `with_attributes` and `with_headers`.
//!
//! [`Message::json`] is one JSON document as received, in any of these shapes:
//!
//! | shape | example |
//! |---|---|
//! | parts | `{"attributes": {"store": {"Type": "String", "Value": "x"}}, "headers": {"region": "eu"}, "body": "{\"total\": 5}"}` |
//! | AWS SNS Publish API | `{"Message": "...", "MessageAttributes": {"store": {"DataType": "String", "StringValue": "x"}, "img": {"DataType": "Binary", "BinaryValue": "AQID"}}}` |
//! | as delivered to SQS, Lambda, HTTP (the notification envelope) | `{"Type": "Notification", "Message": "...", "MessageAttributes": {"store": {"Type": "String", "Value": "x"}}, "TopicArn": "..."}` |
//! | any other document: an SNS body, an Event Grid event, a CloudEvent | `{"eventType": "order.paid", "subject": "orders/7", "data": {"total": 5}}` |
//! | an Event Grid array of events, a CloudEvents batch | `[{"eventType": "a", ...}, {"eventType": "b", ...}]`: read each event with [`read_messages`] |
//!
//! An `eventbridge` filter reads every document as its event, whatever its member names (the
//! event-ruler meaning, EB-1): `{"body": "x"}` is an event with a field `body`.
//!
//! Attribute values and body numbers keep their exact text (`"1.50"`, `1e400`): a body is read
//! from its bytes, never parsed into a tree and printed again. [`read_message`] documents the
//! rules exactly; it and [`read_messages`] give the parts of a document
//! ([`ReadMessage`]) to reuse or inspect.
//!
//! ```
//! use filtervm::{read_messages, Dialect, Filter, Message};
//! let filter = Filter::new(Dialect::EventGrid, r#"{"subjectBeginsWith": "orders/"}"#)?;
//! let batch = br#"[{"id": "1", "subject": "orders/7"}, {"id": "2", "subject": "users/1"}]"#;
//! let mut verdicts = Vec::new();
//! for event in read_messages(batch, filter.options())? {
//!     verdicts.push(filter.matches(&Message::from(&event))?);
//! }
//! assert_eq!(verdicts, [true, false]);
//! // Given whole, a batch is no event: INVALID_MESSAGE, naming `read_messages`.
//! assert!(filter.matches(&Message::json(batch)).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A message without the part its filter reads is judged where the dialect gives that a meaning
//! (an SNS or basaltic message with no attributes has the empty attribute set, sns rule 12;
//! [`Absent::of`]) and is a [`MessageError`] with the code [`ErrorCode::MessageShape`] and a hint
//! naming the likely fix otherwise; bytes that are not JSON are [`ErrorCode::MessageNotJson`]; a
//! part in the wrong form, or against its dialect's rules (a `stream` header given two values, an
//! Event Grid event that is not one JSON object), is [`ErrorCode::InvalidMessage`] with the JSON
//! Pointer of the offending member. [`messages`] has the table of every situation, which every
//! entry point — Rust, C, Python, the command-line tool, replay — follows.
//!
//! # Matching many messages
//!
//! [`Filter::matches`] keeps its scratch buffers in a per-thread cache (as `regex` does): once
//! warm, matching a message allocates nothing but what reading a JSON document's attributes or
//! headers needs. A [`Matcher`] is the same scratch, held by the caller.
//!
//! # Crates
//!
//! This crate is the API: it re-exports what an embedder needs from `filtervm-compiler` (front
//! ends, IR, optimizer, codegen, explain, lint) and `filtervm-vm` (message binding, bytecode,
//! verifier, executor), which are its implementation and have no stability promise of their own.

use filtervm_compiler as compiler;
use filtervm_compiler::MessageParts;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

pub use filtervm_compiler::dialect::UnknownDialect;
pub use filtervm_compiler::explain::{
    Condition, ExplainError, Explanation, Held, Hint, Kind, Seen, Step,
};
pub use filtervm_compiler::lint::Warning;
pub use filtervm_compiler::wire::LoadError;
pub use filtervm_compiler::{
    Absent, CompileError, Dialect, ErrorCategory, ErrorCode, EventGridOptions, EventGridSchema,
    ExprOptions, MAX_POLICY_BYTES, MessageError, MessagePart, MessageShape, Options, PolicyError,
    ReadMessage, ReadMessages, SnsOptions, SnsScope, read_message, read_messages,
};
/// User input quoted in an error message, cut to a readable length (the rule every error of the
/// library follows; the bindings quote their callers' input through it too).
#[doc(hidden)]
pub use filtervm_vm::excerpt::excerpt;
pub use filtervm_vm::message::{
    Attribute, AttributeType, Attributes, Header, HeaderValues, Headers, Text,
};

#[doc = include_str!("../MESSAGES.md")]
pub mod messages {}

pub mod analysis;
mod set;
pub use set::{
    Applied, Change, InsertError, Insertion, LiveSet, Matches, MatchingIds, SetScratch, Snapshot,
    SubscriptionSet, UnjudgedError, UnjudgedGroup,
};

/// A compiled subscription filter: immutable, cheap to clone (the compiled program is shared),
/// and shareable between threads.
#[derive(Clone)]
pub struct Filter {
    inner: Arc<compiler::Filter>,
    /// The policy as compiled (`None` for a filter loaded from bytes), for explain and lint.
    policy: Option<Arc<filtervm_vm::json::Value>>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("dialect", &self.dialect())
            .field("options", self.options())
            .finish_non_exhaustive()
    }
}

impl Filter {
    /// Compiles policy text. `options` is a [`Dialect`] (its default options) or the dialect's
    /// typed options ([`SnsOptions`], [`SnsScope`], [`EventGridOptions`], [`EventGridSchema`],
    /// [`ExprOptions`], [`Options`]).
    ///
    /// The text is at most [`MAX_POLICY_BYTES`] (256 KiB); numbers keep their exact text. A
    /// `stream` policy may be the JSON form or the text form (`region = eu-* and n > 5`).
    ///
    /// ```
    /// use filtervm::{Dialect, ExprOptions, Filter};
    /// let stream = Filter::new(Dialect::Stream, "region = eu-* and priority >= 5")?;
    /// let shallow = ExprOptions::default().with_max_depth(8);
    /// let expr = Filter::new(shallow, r#"{"key": "tier", "op": "in", "value": ["gold"]}"#)?;
    /// assert_eq!(expr.dialect(), Dialect::Expr);
    /// # Ok::<(), filtervm::CompileError>(())
    /// ```
    pub fn new(options: impl Into<Options>, policy: &str) -> Result<Filter, CompileError> {
        let options = options.into();
        let dialect = options.dialect();
        let value = compiler::read_policy_text(dialect, policy, &options)?;
        let inner = compiler::compile_value(dialect, &value, &options)?;
        Ok(Filter {
            inner: Arc::new(inner),
            policy: Some(Arc::new(value)),
        })
    }

    /// Compiles a policy given as a `serde_json` value (for example built with
    /// `serde_json::json!`). Its numbers are what `serde_json` made of them: give policy text
    /// ([`Filter::new`]) when numbers must stay exactly as written.
    pub fn from_value(
        options: impl Into<Options>,
        policy: &serde_json::Value,
    ) -> Result<Filter, CompileError> {
        let options = options.into();
        let inner = compiler::compile(options.dialect(), policy, &options)?;
        // A policy that compiled is at most `MAX_POLICY_DEPTH` levels deep.
        Ok(Filter {
            inner: Arc::new(inner),
            policy: Some(Arc::new(filtervm_vm::json::Value::from(policy))),
        })
    }

    /// The implementation crate's filter (its IR, its program), for the command-line tool and the
    /// language bindings, which show them; no stability promise.
    #[doc(hidden)]
    pub fn compiled(&self) -> &compiler::Filter {
        &self.inner
    }

    /// A filter of the implementation crate's compiled filter and the policy it was compiled from
    /// (for explain and lint), for the command-line tool; no stability promise.
    #[doc(hidden)]
    pub fn from_compiled(
        filter: compiler::Filter,
        policy: Option<filtervm_vm::json::Value>,
    ) -> Filter {
        Filter {
            inner: Arc::new(filter),
            policy: policy.map(Arc::new),
        }
    }

    /// The dialect the filter was written in.
    pub fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }

    /// The options the filter was compiled with.
    pub fn options(&self) -> &Options {
        self.inner.options()
    }

    /// The part of a message the filter reads.
    pub fn part(&self) -> MessagePart {
        MessagePart::of(self.options())
    }

    /// The names of the typed attributes whose values the filter reads, when those values are
    /// all it reads of a message's attributes: a broker holding attributes in a map may then
    /// hand over only the attributes of these names (the Python binding looks them up in the
    /// caller's `dict`), and the verdict is the same as with every attribute. Empty for a
    /// filter that reads no attribute (one on the body or on headers). `None` when the filter
    /// reads more of the attributes than some values: whether the message has any attribute
    /// that is not `Binary` (an SNS policy with `exists: false`, sns rule 12), or the type of
    /// every attribute (basaltic, B-4).
    ///
    /// ```
    /// use filtervm::{Dialect, Filter};
    /// let filter = Filter::new(Dialect::Sns, r#"{"store": ["a"], "n": [{"numeric": [">", 1]}]}"#)?;
    /// let mut names = filter.attribute_names().unwrap_or_default();
    /// names.sort_unstable();
    /// assert_eq!(names, ["n", "store"]);
    /// assert_eq!(Filter::new(Dialect::Basaltic, r#"{"store": ["a"]}"#)?.attribute_names(), None);
    /// # Ok::<(), filtervm::CompileError>(())
    /// ```
    pub fn attribute_names(&self) -> Option<Vec<&str>> {
        use filtervm_vm::key::Key;
        if self.dialect() == Dialect::Basaltic {
            // `check_attributes`: every attribute's type is read (B-4).
            return None;
        }
        let mut names = Vec::new();
        for key in self.inner.program().keys().keys() {
            match key {
                Key::AttributeText(name) | Key::AttributeTyped(name) => {
                    if !names.contains(&&**name) {
                        names.push(&**name);
                    }
                }
                Key::AnyAttribute => return None,
                Key::Header(_)
                | Key::BodyPath(_)
                | Key::BodyPathEach(_)
                | Key::FieldPath(..)
                | Key::BodyIsObject
                | Key::EventMember(_)
                | Key::EventData(_) => {}
            }
        }
        Some(names)
    }

    /// Whether `message` matches, with scratch buffers cached per thread (see [`Matcher`] to
    /// hold them yourself).
    ///
    /// Errors, never a quiet `false` ([`messages`] has every situation): [`ErrorCode::MessageShape`]
    /// for a message without the part the filter reads where the dialect gives that no meaning
    /// (with a hint; a message without attributes is judged, sns rule 12);
    /// [`ErrorCode::MessageNotJson`] for a document (or an Event Grid event) that is not JSON;
    /// [`ErrorCode::InvalidMessage`] for a part in the wrong form or against its dialect's rules
    /// (a `stream` header given two values; an Event Grid event that is not one JSON object, a
    /// batch given whole among them); and [`ErrorCode::MessageTooComplex`] for an SNS body with
    /// more combinations of array elements than are judged element by element. An SNS body
    /// given with [`Message::body`] that is not JSON keeps its meaning in SNS: it matches only
    /// policies that read nothing from the body.
    pub fn matches<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &self,
        message: &Message<'_, A, H>,
    ) -> Result<bool, MessageError> {
        thread_local! {
            static MATCHER: RefCell<Matcher> = RefCell::new(Matcher::new());
        }
        let cached = MATCHER.try_with(|m| {
            // Busy only when a message's own `Attributes` or `Headers` code matches another
            // message on this thread: that one gets fresh buffers.
            m.try_borrow_mut()
                .ok()
                .map(|mut matcher| matcher.matches(self, message))
        });
        match cached {
            Ok(Some(verdict)) => verdict,
            _ => Matcher::new().matches(self, message),
        }
    }

    /// Why `message` does or does not match: the verdict, the conditions that decided it, hints
    /// for the classic mistakes, and every condition of the policy with whether it held and the
    /// value it saw. The message is read as [`Filter::matches`] reads it (the same errors).
    ///
    /// ```
    /// use filtervm::{AttributeType, Dialect, Filter, Message};
    /// let filter = Filter::new(Dialect::Sns, r#"{"price": [{"numeric": ["<", 10]}]}"#)?;
    /// let attributes = [("price", AttributeType::Number, "10")];
    /// let why = filter.explain(&Message::attributes(&attributes))?;
    /// assert!(!why.matched);
    /// assert_eq!(why.decided_by[0].pointer, "/price/0");
    /// assert_eq!(why.hints[0].code, "EXCLUSIVE_BOUND");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn explain<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &self,
        message: &Message<'_, A, H>,
    ) -> Result<Explanation, ExplainError> {
        let policy = self.policy.as_deref();
        match &message.repr {
            Repr::Parts(parts) => compiler::explain::explain_parts(&self.inner, policy, parts),
            Repr::Json(json) => compiler::explain::explain_document(&self.inner, policy, json),
        }
    }

    /// Warnings about what compiles but is probably not meant (conditions that never or always
    /// hold, contradictions, duplicates, dialect pitfalls), each with a code, a pointer and a
    /// fix. `None` for a filter loaded from bytes, which carries no policy text to lint.
    ///
    /// ```
    /// use filtervm::{Dialect, Filter};
    /// let filter = Filter::new(Dialect::Basaltic, r#"{"id": [{"prefix": "ord"}, {"suffix": "er"}]}"#)?;
    /// let warnings = filter.lint().unwrap_or_default();
    /// assert!(!warnings.is_empty());
    /// # Ok::<(), filtervm::CompileError>(())
    /// ```
    pub fn lint(&self) -> Option<Vec<Warning>> {
        let policy = self.policy.as_deref()?;
        Some(compiler::lint::lint_filter(&self.inner, policy))
    }

    /// The filter as bytes: its program, dialect, options and IR, in a versioned format that
    /// [`Filter::from_bytes`] reads back.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes()
    }

    /// Loads a filter written by [`Filter::to_bytes`]. Safe on any input: bytes that are not a
    /// filter (or a program and an IR that disagree) are a [`LoadError`], never a panic.
    ///
    /// ```
    /// use filtervm::{Dialect, Filter, Message};
    /// let filter = Filter::new(Dialect::Stream, "region = eu-*")?;
    /// let loaded = Filter::from_bytes(&filter.to_bytes())?;
    /// assert!(loaded.matches(&Message::headers(&[("region", "eu-west")]))?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Filter, LoadError> {
        Ok(Filter {
            inner: Arc::new(compiler::Filter::from_bytes(bytes)?),
            policy: None,
        })
    }
}

/// Reusable scratch buffers for matching (the binding arena, the JSON reader's stacks, the
/// registers): what [`Filter::matches`] caches per thread, held by the caller instead. Keep one
/// per thread; once warm, matching allocates nothing but what reading a JSON document's
/// attributes or headers needs.
///
/// ```
/// use filtervm::{Dialect, Filter, Matcher, Message};
/// let filter = Filter::new(Dialect::Stream, "region = eu-*")?;
/// let mut matcher = Matcher::new();
/// let lines = [&br#"{"headers": {"region": "eu-west"}}"#[..], br#"{"headers": {"region": "us-east"}}"#];
/// let verdicts: Vec<bool> = lines
///     .iter()
///     .map(|line| matcher.matches(&filter, &Message::json(line)))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(verdicts, [true, false]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Matcher {
    evaluator: compiler::Evaluator,
}

impl Matcher {
    /// New, empty buffers.
    pub fn new() -> Matcher {
        Matcher::default()
    }

    /// Whether `message` matches `filter` (see [`Filter::matches`] for the errors).
    pub fn matches<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &mut self,
        filter: &Filter,
        message: &Message<'_, A, H>,
    ) -> Result<bool, MessageError> {
        match &message.repr {
            Repr::Parts(parts) => self.evaluator.matches_parts(&filter.inner, parts),
            Repr::Json(json) => self.evaluator.matches_document(&filter.inner, json),
        }
    }
}

/// A published message: one JSON document as received ([`Message::json`]), or the parts a
/// broker holds, borrowed: a body ([`Message::body`]), typed attributes
/// ([`Message::attributes`]) and headers ([`Message::headers`]), combined with the `with_*`
/// methods. See the [crate documentation](crate#messages) for which filter reads which part.
///
/// `A` and `H` are the broker's own attribute and header types (any [`Attributes`], any
/// [`Headers`]); nothing is copied.
pub struct Message<'m, A: Attributes + ?Sized = [Attribute], H: Headers + ?Sized = [Header]> {
    repr: Repr<'m, A, H>,
}

enum Repr<'m, A: Attributes + ?Sized, H: Headers + ?Sized> {
    Parts(MessageParts<'m, A, H>),
    Json(&'m [u8]),
}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> Clone for Message<'_, A, H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> Copy for Message<'_, A, H> {}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> Clone for Repr<'_, A, H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> Copy for Repr<'_, A, H> {}

impl<A: Attributes + ?Sized, H: Headers + ?Sized> fmt::Debug for Message<'_, A, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Parts(parts) => parts.fmt(f),
            Repr::Json(json) => f
                .debug_struct("Message")
                .field("json_bytes", &json.len())
                .finish(),
        }
    }
}

impl Default for Message<'_> {
    fn default() -> Self {
        Message::new()
    }
}

impl<'m> Message<'m> {
    /// A message with no part yet; add parts with the `with_*` methods.
    pub fn new() -> Message<'m> {
        Message {
            repr: Repr::Parts(MessageParts::new()),
        }
    }

    /// One JSON document as received, read when matched: the parts shape, the AWS SNS shapes,
    /// or any other document as the body itself (see [`read_message`]).
    pub fn json(json: &'m [u8]) -> Message<'m> {
        Message {
            repr: Repr::Json(json),
        }
    }

    /// A message of one body, raw bytes as published: an SNS message body (any text: one that
    /// is not JSON matches only policies that read nothing from the body) or an Event Grid
    /// event.
    pub fn body(body: &'m [u8]) -> Message<'m> {
        Message::new().with_body(body)
    }

    /// A message of typed attributes only.
    pub fn attributes<B: Attributes + ?Sized>(attributes: &'m B) -> Message<'m, B> {
        Message::new().with_attributes(attributes)
    }

    /// A message of headers only.
    pub fn headers<G: Headers + ?Sized>(headers: &'m G) -> Message<'m, [Attribute], G> {
        Message::new().with_headers(headers)
    }
}

impl<'m, A: Attributes + ?Sized, H: Headers + ?Sized> Message<'m, A, H> {
    /// The parts built so far (a message made by [`Message::json`] has none: the `with_*`
    /// methods start a message of parts).
    fn parts(self) -> MessageParts<'m, A, H> {
        match self.repr {
            Repr::Parts(parts) => parts,
            Repr::Json(_) => MessageParts::empty(),
        }
    }

    /// This message with its body (raw bytes as published).
    pub fn with_body(self, body: &'m [u8]) -> Message<'m, A, H> {
        Message {
            repr: Repr::Parts(self.parts().with_body(body)),
        }
    }

    /// This message with its typed attributes.
    pub fn with_attributes<B: Attributes + ?Sized>(self, attributes: &'m B) -> Message<'m, B, H> {
        Message {
            repr: Repr::Parts(self.parts().with_attributes(attributes)),
        }
    }

    /// This message with its headers.
    pub fn with_headers<G: Headers + ?Sized>(self, headers: &'m G) -> Message<'m, A, G> {
        Message {
            repr: Repr::Parts(self.parts().with_headers(headers)),
        }
    }

    /// One JSON document as received ([`Message::json`]), as a message whose attribute and
    /// header types are `A` and `H`: for code generic over them (the language bindings).
    pub fn document(json: &'m [u8]) -> Message<'m, A, H> {
        Message {
            repr: Repr::Json(json),
        }
    }

    /// A message of the parts a broker holds, each optional: what the language bindings build
    /// from their arguments (`Message::new().with_*` for parts known in advance).
    ///
    /// ```
    /// use filtervm::{AttributeType, Dialect, Filter, Message};
    /// let attributes = [("a", AttributeType::String, "x")];
    /// let headers: Option<&[(&str, &str)]> = None;
    /// let message = Message::from_parts(None, Some(&attributes[..]), headers);
    /// assert!(Filter::new(Dialect::Sns, r#"{"a": ["x"]}"#)?.matches(&message)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_parts(
        body: Option<&'m [u8]>,
        attributes: Option<&'m A>,
        headers: Option<&'m H>,
    ) -> Message<'m, A, H> {
        let mut parts = MessageParts::empty();
        if let Some(body) = body {
            parts = parts.with_body(body);
        }
        if let Some(attributes) = attributes {
            parts = parts.with_attributes(attributes);
        }
        if let Some(headers) = headers {
            parts = parts.with_headers(headers);
        }
        Message {
            repr: Repr::Parts(parts),
        }
    }

    /// This message with `part` given but unreadable: the broker holds the part and could not
    /// read it (an attribute of an unknown type, say). Filters reading `part` report `error`
    /// ([`ErrorCode::InvalidMessage`] as a rule); in a set, the other groups judge the message
    /// by their own parts.
    pub fn with_unreadable(self, part: MessagePart, error: &'m MessageError) -> Message<'m, A, H> {
        Message {
            repr: Repr::Parts(self.parts().with_unreadable(part, error)),
        }
    }
}

impl<'m> From<&'m ReadMessage<'_>> for Message<'m> {
    /// A message read from a document ([`read_message`], [`read_messages`]), by its parts.
    fn from(message: &'m ReadMessage<'_>) -> Message<'m> {
        Message {
            repr: Repr::Parts(message.parts()),
        }
    }
}

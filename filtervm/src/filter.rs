//! A compiled subscription filter ([`Filter`]) and the message it judges ([`Message`]): the
//! facade over `filtervm-compiler` and `filtervm-vm` that the crate root re-exports.

use filtervm_compiler as compiler;
use filtervm_compiler::explain::{ExplainError, Explanation};
use filtervm_compiler::lint::Warning;
use filtervm_compiler::wire::LoadError;
use filtervm_compiler::{
    CompileError, Dialect, MessageError, MessagePart, MessageParts, Options, ReadMessage, ReadMode,
};
use filtervm_vm::message::{Attribute, Attributes, Header, Headers};
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

/// A compiled subscription filter: immutable, cheap to clone (the compiled program is shared),
/// and shareable between threads.
#[derive(Clone)]
pub struct Filter {
    pub(crate) inner: Arc<compiler::Filter>,
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
    /// typed options ([`SnsOptions`](crate::SnsOptions), [`SnsScope`](crate::SnsScope),
    /// [`EventGridOptions`](crate::EventGridOptions), [`EventGridSchema`](crate::EventGridSchema),
    /// [`ExprOptions`](crate::ExprOptions), [`Options`]).
    ///
    /// The text is at most [`MAX_POLICY_BYTES`](crate::MAX_POLICY_BYTES) (256 KiB); numbers keep
    /// their exact text. A `stream` policy may be the JSON form or the text form (`region = eu-*
    /// and n > 5`).
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
    /// Errors, never a quiet `false` ([`messages`](crate::messages) has every situation):
    /// [`ErrorCode::MessageShape`](crate::ErrorCode::MessageShape) for a message without the part
    /// the filter reads where the dialect gives that no meaning (with a hint; a message without
    /// attributes is judged, sns rule 12);
    /// [`ErrorCode::MessageNotJson`](crate::ErrorCode::MessageNotJson) for a document (or an Event
    /// Grid event) that is not JSON;
    /// [`ErrorCode::InvalidMessage`](crate::ErrorCode::InvalidMessage) for a part in the wrong form
    /// or against its dialect's rules (a `stream` header given two values; an Event Grid event that
    /// is not one JSON object, a batch given whole among them); and
    /// [`ErrorCode::MessageTooComplex`](crate::ErrorCode::MessageTooComplex) for an SNS body with
    /// more combinations of array elements than are judged element by element. An SNS body given
    /// with [`Message::body`] that is not JSON keeps its meaning in SNS: it matches only policies
    /// that read nothing from the body.
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

    /// New, empty buffers that read JSON documents and bodies in `mode`: with
    /// [`ReadMode::Trusted`], for input validated upstream, members no filter reads are skipped
    /// by their structure alone (see [the crate documentation](crate#trusted-input) for exactly
    /// what that changes).
    ///
    /// ```
    /// use filtervm::{Filter, Matcher, Message, ReadMode, SnsScope};
    /// let filter = Filter::new(SnsScope::MessageBody, r#"{"store": ["example_corp"]}"#)?;
    /// // `items` is no JSON, and no filter reads it.
    /// let body = br#"{"store": "example_corp", "items": [01, tru]}"#;
    /// let mut trusted = Matcher::with_read_mode(ReadMode::Trusted);
    /// assert!(trusted.matches(&filter, &Message::json(body))?);
    /// assert!(Matcher::new().matches(&filter, &Message::json(body)).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_read_mode(mode: ReadMode) -> Matcher {
        let mut matcher = Matcher::new();
        matcher.set_read_mode(mode);
        matcher
    }

    /// Reads the messages matched from now on in `mode` ([`ReadMode::Validating`] until set).
    pub fn set_read_mode(&mut self, mode: ReadMode) {
        self.evaluator.set_read_mode(mode);
    }

    /// The mode JSON documents and bodies are read in.
    pub fn read_mode(&self) -> ReadMode {
        self.evaluator.read_mode()
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

    /// The verdict of one JSON document as received, in one read, when that is known to be
    /// [`Matcher::matches`]'s on [`Message::json`] and each message's of
    /// [`read_messages`](crate::read_messages) (the same verdict, the same error): the filter
    /// reads the body, and the document is the body itself — an EventBridge event, or an object
    /// whose first member's name belongs to no message shape (`attributes`, `headers`, `body`,
    /// the AWS SNS names), as an event or an SNS body written as a log line is. `None` for any
    /// other document (read it with [`read_messages`](crate::read_messages)) and for filters on
    /// attributes or headers. A tool that reads many documents, some of them envelopes or
    /// batches, saves the separate read of each one's top level.
    ///
    /// ```
    /// use filtervm::{Filter, Matcher, SnsScope};
    /// let filter = Filter::new(SnsScope::MessageBody, r#"{"store": ["example_corp"]}"#)?;
    /// let mut matcher = Matcher::new();
    /// let body = br#"{"store": "example_corp", "total": 5}"#;
    /// assert_eq!(matcher.matches_body_document(&filter, body).transpose()?, Some(true));
    /// // An SNS notification: its `Message` is the body, read by its shape.
    /// let envelope = br#"{"Type": "Notification", "Message": "{\"store\": \"x\"}"}"#;
    /// assert!(matcher.matches_body_document(&filter, envelope).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn matches_body_document(
        &mut self,
        filter: &Filter,
        json: &[u8],
    ) -> Option<Result<bool, MessageError>> {
        self.evaluator.matches_body_document(&filter.inner, json)
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
    pub(crate) repr: Repr<'m, A, H>,
}

pub(crate) enum Repr<'m, A: Attributes + ?Sized, H: Headers + ?Sized> {
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
    /// or any other document as the body itself (see [`read_message`](crate::read_message)).
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
    /// ([`ErrorCode::InvalidMessage`](crate::ErrorCode::InvalidMessage) as a rule); in a set, the
    /// other groups judge the message by their own parts.
    pub fn with_unreadable(self, part: MessagePart, error: &'m MessageError) -> Message<'m, A, H> {
        Message {
            repr: Repr::Parts(self.parts().with_unreadable(part, error)),
        }
    }
}

impl<'m> From<&'m ReadMessage<'_>> for Message<'m> {
    /// A message read from a document ([`read_message`](crate::read_message),
    /// [`read_messages`](crate::read_messages)), by its parts.
    fn from(message: &'m ReadMessage<'_>) -> Message<'m> {
        Message {
            repr: Repr::Parts(message.parts()),
        }
    }
}

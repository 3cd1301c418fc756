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
//! # Trusted input
//!
//! By default every byte of a JSON document or body is checked against RFC 8259, including the
//! members no filter reads: a body that is not JSON is an error (in SNS, its own verdict). Input
//! that was validated upstream — by a broker that parsed the message when it was published, or an
//! archive a JSON encoder wrote — need not pay for that twice: a [`Matcher`] made with
//! `Matcher::with_read_mode(ReadMode::Trusted)`, or a [`SetScratch`] after
//! [`SetScratch::set_read_mode`], reads in trusted mode. (`Filter::matches` and its per-thread
//! scratch always validate; the command line's `--trusted-input` sets this mode.)
//!
//! What trusted mode still reads and checks as the validating mode does: the top level of a
//! document (how its shape is told), the structure of every object a filter's path goes into (its
//! `{`, member names, `:`, `,` and `}`), every member name with escapes a path may want (one
//! without is compared byte for byte with the paths' names), every value a filter reads, and what
//! follows the document (white space only). What it passes over by its structure
//! alone, checking nothing:
//!
//! - a member value no filter reads: a string to its closing quote (a `\` passes over the byte
//!   after it), an array or object to the bracket that closes it (any of `]` and `}` closes either;
//!   brackets inside strings do not count), anything else to the next delimiter (white space, `,`,
//!   `:`, `"`, `[`, `]`, `{` or `}`);
//! - a member name no path names, as a string;
//! - the rest of an array or object once nothing more in it is wanted;
//! - the rest of the document once every name wanted in the top-level object has been read (and,
//!   when a path goes on into an object that is a top-level member's value, every name wanted in
//!   that object too, that object being the last wanted one), when that rest holds no `\`, no
//!   `"` followed by a name wanted at either level, and too few `[` and `{` to open more than 64
//!   levels at once: the input's last byte other than white space must then be `}` and is taken
//!   for the end of the open objects, and nothing in the rest is checked, not even its `,` and
//!   `:`, its brackets or its strings' closing quotes (in a valid document such a rest is members
//!   no filter reads, and the depth a trusted read reports is the same). Not for Event Grid
//!   events, whose top-level names fold case.
//!
//! So these malformed inputs may get a verdict in trusted mode where the validating mode gives
//! [`ErrorCode::MessageNotJson`] (or, for an SNS body, the verdict of a body that is not JSON),
//! when the fault lies in what is passed over: invalid UTF-8, raw control characters, unknown or
//! short escapes (`\x`, `\u12`) and lone-surrogate escapes; numbers outside the grammar (`01`,
//! `+1`, `.5`, `1.`, `NaN`) and misspelled literals (`tru`, `nul`, `True`); a missing or extra
//! `,` or `:` inside a skipped container, trailing commas there, mismatched bracket kinds
//! (`[1}`), and a skipped value that is no JSON value at all (`x`, `-`). Where a filter reads a
//! member, its value is checked exactly as before; an unclosed string or container is an error in
//! both modes (trusted mode reaches the end of the input looking for its end), except in a rest
//! passed over as the last item above says.
//!
//! Guarantees, on any input whatever: the trusted skip never reads out of bounds and never
//! panics; it is one forward pass (each step moves on by at least one byte), so it takes time
//! linear in the input; nesting inside a skipped value is counted in one integer rather than
//! stacked, so it takes no memory per level, and the deepest level reached is still measured, so
//! the depth limits on messages (EventBridge's 64 levels, EB-34) apply in both modes. On every
//! valid JSON document both modes give the same verdicts and errors (a property test, the
//! conformance vectors run in both modes, and the `message_trusted` fuzz target check it); trusted
//! mode only ever turns an error of the validating mode into a verdict, never the reverse.
//!
//! ```
//! use filtervm::{Dialect, Filter, Message, ReadMode, SetScratch, SubscriptionSet};
//! let filter = Filter::new(Dialect::EventGrid, r#"{"subjectBeginsWith": "orders/"}"#)?;
//! let mut set = SubscriptionSet::new();
//! set.insert("a", &filter)?;
//! // `data` is not JSON (`1.` and a raw tab in a string), and no filter reads it.
//! let event = b"{\"subject\": \"orders/7\", \"data\": {\"n\": [1., \"\t\"]}}";
//! let mut scratch = SetScratch::new();
//! assert!(!set.matching(&mut scratch, &Message::json(event)).is_complete());
//! scratch.set_read_mode(ReadMode::Trusted);
//! let ids: Vec<_> = set.matching(&mut scratch, &Message::json(event)).ids().copied().collect();
//! assert_eq!(ids, ["a"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crates
//!
//! This crate is the API: it re-exports what an embedder needs from `filtervm-compiler` (front
//! ends, IR, optimizer, codegen, explain, lint) and `filtervm-vm` (message binding, bytecode,
//! verifier, executor), which are its implementation and have no stability promise of their own.
//!
//! Its files import downward: `filter.rs` ([`Filter`], [`Message`], [`Matcher`]) below `set.rs`
//! ([`SubscriptionSet`], [`LiveSet`]); this file only declares the modules and re-exports
//! (`python3 scripts/check_layers.py filtervm/src` checks it).

pub use filtervm_compiler::dialect::UnknownDialect;
pub use filtervm_compiler::explain::{
    Condition, ExplainError, Explanation, Held, Hint, Kind, Seen, Step,
};
pub use filtervm_compiler::lint::Warning;
pub use filtervm_compiler::wire::LoadError;
pub use filtervm_compiler::{
    Absent, CompileError, Dialect, ErrorCategory, ErrorCode, EventGridOptions, EventGridSchema,
    ExprOptions, MAX_POLICY_BYTES, MessageError, MessagePart, MessageShape, Options, PolicyError,
    ReadMessage, ReadMessages, ReadMode, SnsOptions, SnsScope, read_message, read_messages,
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
mod filter;
mod set;
pub use filter::{Filter, Matcher, Message};
pub use set::{
    Applied, CachedInsertError, Change, InsertError, Insertion, LiveSet, Matches, MatchingIds,
    PolicyCache, SET_FORMAT_VERSION, SetId, SetLoadError, SetScratch, Snapshot, SubscriptionSet,
    UnjudgedError, UnjudgedGroup,
};

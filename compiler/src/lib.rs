//! The filtervm compiler: dialect front ends, the common IR, the optimizer and codegen to the
//! `filtervm-vm` bytecode, explain, lint, the wire format of filters and subscription sets.
//!
//! `compiler` is everything done per policy, and everything that needs the IR: it imports
//! `filtervm-vm` (to build and run programs) and the VM never imports it. Its files import
//! downward only, in these layers (bottom first):
//!
//! 1. errors ([`error`]), the IR ([`ir`]) and what only reads it (the optimizer [`opt`], codegen
//!    [`codegen`], interning [`intern`]);
//! 2. the dialects by name ([`Dialect`]) and their options ([`options`]);
//! 3. the dialect front ends ([`dialect`]: each parses, validates and lowers its policies, and
//!    reads its own part of a message);
//! 4. the compiled filter and the compile functions ([`filter`]);
//! 5. message reading ([`parts`], [`shape`], [`message`]), above the dialects;
//! 6. the evaluator ([`evaluator`]);
//! 7. the per-group engine (`set`) below the multi-group set ([`subscriptions`]); explain, lint,
//!    the wire format, policy analysis and the compile cache ([`cache`]) on top.
//!
//! Unit tests that exercise the whole crate sit in their own child file (`parts/tests.rs`), so
//! that they look down at everything and nothing looks at them. `python3 scripts/check_layers.py
//! compiler/src` lists any files that import each other in a circle (`scripts/test.sh` runs it).
//!
//! ```
//! use filtervm_compiler::{compile, compile_text, Dialect, ErrorCode, Evaluator, Options};
//! use filtervm_vm::message::{AttributeType, Message};
//! use serde_json::json;
//!
//! let policy = json!({
//!     "event": ["order.created", "order.paid"],
//!     "amount": [{"numeric": [">=", 100, "<", 1000]}],
//!     "test": [{"exists": false}]
//! });
//! let filter = compile(Dialect::Basaltic, &policy, &Options::from(Dialect::Basaltic)).unwrap();
//!
//! // A message built without JSON...
//! let message = Message::attributes([
//!     ("event", AttributeType::String, "order.paid"),
//!     ("amount", AttributeType::Number, "149.50"),
//! ]);
//! assert!(filter.matches(&message));
//!
//! // ...or from JSON in the dialect's shape, evaluated with reusable buffers.
//! let json = json!({"attributes": {"event": {"type": "String", "value": "order.refunded"}}});
//! let mut evaluator = Evaluator::new();
//! assert!(!evaluator.matches_json(&filter, &json).unwrap());
//!
//! // ...or straight from what the broker holds, borrowed (nothing is copied).
//! let attributes = [
//!     ("event", AttributeType::String, "order.created"),
//!     ("amount", AttributeType::Number, "100"),
//! ];
//! assert!(evaluator.matches_attributes(&filter, &attributes));
//!
//! // SNS bodies and Event Grid events are matched from their raw bytes.
//! let body_scope = Options::from(filtervm_compiler::SnsScope::MessageBody);
//! let body = compile(Dialect::Sns, &json!({"event": ["order.paid"]}), &body_scope).unwrap();
//! assert!(evaluator.matches_bytes(&body, br#"{"event": "order.paid", "items": [[{}]]}"#).unwrap());
//!
//! // Policy text keeps every number exactly as written.
//! let sns = Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap();
//! let filter = compile_text(Dialect::Sns, r#"{"price": [{"numeric": ["<", 1.50]}]}"#, &sns).unwrap();
//! assert_eq!(filter.options(), &sns);
//!
//! // Errors carry a stable code and a JSON Pointer.
//! let err = compile(Dialect::Basaltic, &json!({"a": [{"prefix": ""}]}), &Dialect::Basaltic.into())
//!     .unwrap_err();
//! assert_eq!(err.errors[0].code, ErrorCode::NotificationInvalidFilterPolicy);
//! assert_eq!(err.errors[0].code.as_str(), "NOTIFICATION_INVALID_FILTER_POLICY");
//! assert_eq!(err.errors[0].pointer, "/a/0/prefix");
//! ```

pub mod analysis;
pub mod cache;
pub mod codegen;
pub mod dialect;
pub mod error;
pub mod evaluator;
pub mod explain;
pub mod filter;
pub mod intern;
pub mod ir;
pub mod lint;
pub mod message;
pub mod opt;
pub mod options;
pub mod parts;
pub(crate) mod set;
pub mod set_wire;
pub mod shape;
pub mod subscriptions;
pub mod wire;

pub use cache::{CachedInsertError, PolicyCache};
pub use dialect::{Dialect, MAX_POLICY_BYTES, MAX_POLICY_DEPTH};
pub use error::{CompileError, ErrorCategory, ErrorCode, MessageError, PolicyError};
pub use evaluator::Evaluator;
pub use filter::{Filter, compile, compile_text, compile_value, read_policy_text};
pub use filtervm_vm::json::ReadMode;
pub use message::{message_from_json, message_from_line};
pub use options::{
    EventGridOptions, EventGridSchema, ExprOptions, Options, OptionsJson, SnsOptions, SnsScope,
};
pub use parts::{Absent, MessagePart, MessageParts};
pub use set::InsertError;
pub use set_wire::{SET_FORMAT_VERSION, SetId, SetLoadError};
pub use shape::{MessageShape, ReadMessage, ReadMessages, read_message, read_messages};
pub use subscriptions::{
    Applied, Change, GroupMessage, Insertion, LiveSet, Matches, MatchingIds, SetScratch, Snapshot,
    SubscriptionSet, UnjudgedError, UnjudgedGroup,
};

//! Keys: what a program reads from a message, and how.
//!
//! A key is resolved against a [`crate::message::Message`] by binding. Each dialect's lowering
//! picks the key kind whose resolution rules are that dialect's; nothing else in the VM knows
//! which dialect a program came from.

use crate::json::Quoted;
use std::fmt;
use std::sync::Arc;

/// One thing a program reads from a message.
///
/// Names and paths are shared (`Arc`): the optimizer's copy of an IR tree, a program's key table
/// and a set's hold the lowered IR's strings, so copying a key is a reference count, not an
/// allocation (BENCHMARKS.md, "Shared keys and constants on the compile path").
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// An attribute's value text as one string leaf, whatever its declared type (basaltic B-4).
    AttributeText(Arc<str>),
    /// An attribute read with SNS typing (sns rules 5-11): `String` → string, `Number` → number,
    /// `String.Array` → its elements, `Binary` → absent.
    AttributeTyped(Arc<str>),
    /// Present iff the message carries at least one attribute that is not `Binary` (sns rule 12).
    AnyAttribute,
    /// A header's values as string leaves (stream, expr).
    Header(Arc<str>),
    /// A dotted path into a JSON body with SNS semantics (sns rules 14-21): arrays transparent,
    /// dotted names matched in nested and flat forms.
    BodyPath(Arc<str>),
    /// Like [`Key::BodyPath`], but every array of objects the path passes through is judged per
    /// element (one binding row per element), even when no other key reads below that array. SNS
    /// lowers a path to this key when a negative matcher (`exists: false`, `anything-but`) reads it
    /// or the policy tests it in more than one place (sns rule 18, D-3).
    BodyPathEach(Arc<str>),
    /// A field of a JSON event as EventBridge reads it (`docs/dialects/eventbridge-patterns.md`
    /// EB-2, EB-3): like [`Key::BodyPath`] (arrays transparent, dotted names reached in nested
    /// and flat forms, objects and empty arrays no value), and besides
    ///
    /// - every occurrence of a member name an object repeats counts (not only the last);
    /// - a scalar in an array nested in the array at the leaf position belongs to that element
    ///   of the outer array, so that a field continuing below the outer array is judged with it
    ///   element by element;
    /// - it is judged element by element only at the arrays of objects met within its first
    ///   `levels` segments: below them every element's leaves are the key's in every row (EB-10;
    ///   `u32::MAX`, which EventBridge's values use, judges it element by element wherever two
    ///   keys share an array).
    FieldPath(Arc<str>, u32),
    /// Present iff the JSON body is an object (sns rule 14).
    BodyIsObject,
    /// A top-level member of a JSON event, name compared ignoring ASCII case (EG-16, EG-17).
    EventMember(Arc<str>),
    /// A path into an event's `data`, members selected by exact name (EG-18); empty = `data`.
    EventData(Arc<[Box<str>]>),
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quote = Quoted;
        match self {
            Key::AttributeText(n) => write!(f, "attr-text {}", quote(n)),
            Key::AttributeTyped(n) => write!(f, "attr {}", quote(n)),
            Key::AnyAttribute => f.write_str("any-attribute"),
            Key::Header(n) => write!(f, "header {}", quote(n)),
            Key::BodyPath(p) => write!(f, "body {}", quote(p)),
            Key::BodyPathEach(p) => write!(f, "body-each {}", quote(p)),
            Key::FieldPath(p, u32::MAX) => write!(f, "field {}", quote(p)),
            Key::FieldPath(p, levels) => write!(f, "field-within {levels} {}", quote(p)),
            Key::BodyIsObject => f.write_str("body-is-object"),
            Key::EventMember(n) => write!(f, "event {}", quote(n)),
            Key::EventData(path) => {
                f.write_str("event-data")?;
                for seg in path.iter() {
                    write!(f, " {}", quote(seg))?;
                }
                Ok(())
            }
        }
    }
}

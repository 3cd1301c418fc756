//! Messages as the broker hands them over, before binding.
//!
//! A [`Message`] is built without JSON (typed attributes or headers) or from JSON (an SNS body, an
//! Event Grid event). Which parts of it a program reads is decided by the program's [`Key`]s.

use std::fmt;

/// The declared data type of a message attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttributeType {
    /// `String` (and SNS custom `String.x` types other than `String.Array`).
    String,
    /// `Number` (and SNS custom `Number.x` types).
    Number,
    /// `String.Array`: the value is the JSON text of an array.
    StringArray,
    /// `Binary`: invisible to filtering (sns rule 8).
    Binary,
}

impl AttributeType {
    /// Reads a type name as publishers write it (`String`, `Number`, `String.Array`, `Binary`, and
    /// the SNS custom forms `String.x`, `Number.x`, `Binary.x`). `None` for anything else.
    pub fn from_name(name: &str) -> Option<AttributeType> {
        let (base, custom) = match name.split_once('.') {
            Some((base, custom)) => (base, Some(custom)),
            None => (name, None),
        };
        match (base, custom) {
            ("String", Some("Array")) => Some(AttributeType::StringArray),
            ("String", None) => Some(AttributeType::String),
            ("String", Some(c)) if !c.is_empty() => Some(AttributeType::String),
            ("Number", None) => Some(AttributeType::Number),
            ("Number", Some(c)) if !c.is_empty() => Some(AttributeType::Number),
            ("Binary", None) => Some(AttributeType::Binary),
            ("Binary", Some(c)) if !c.is_empty() => Some(AttributeType::Binary),
            _ => None,
        }
    }
}

impl fmt::Display for AttributeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AttributeType::String => "String",
            AttributeType::Number => "Number",
            AttributeType::StringArray => "String.Array",
            AttributeType::Binary => "Binary",
        })
    }
}

/// One message attribute: a name, a declared type and the value text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    /// The attribute name (case-sensitive).
    pub name: String,
    /// The declared type.
    pub data_type: AttributeType,
    /// The value, always text (for `String.Array`, the JSON text of an array).
    pub value: String,
}

/// One header: a name and one or more values (a multimap entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The header name (case-sensitive).
    pub name: String,
    /// Its values; a header given several values satisfies a condition when any value does.
    pub values: Vec<String>,
}

/// A published message in one of the shapes the dialects read.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Typed attributes (`basaltic`, `sns` attribute scope).
    Attributes(Vec<Attribute>),
    /// Headers (`stream`, `expr`).
    Headers(Vec<Header>),
    /// A JSON document (`sns` body scope, `eventgrid` events).
    Json(serde_json::Value),
    /// A body that is not JSON text (`sns` body scope: matches only the empty policy).
    Unparsable,
}

impl Message {
    /// A message of typed attributes built without JSON.
    ///
    /// ```
    /// use filtervm_vm::message::{AttributeType, Message};
    /// let m = Message::attributes([("event", AttributeType::String, "order.paid")]);
    /// assert!(matches!(m, Message::Attributes(ref a) if a.len() == 1));
    /// ```
    pub fn attributes<'a>(
        attributes: impl IntoIterator<Item = (&'a str, AttributeType, &'a str)>,
    ) -> Message {
        Message::Attributes(
            attributes
                .into_iter()
                .map(|(name, data_type, value)| Attribute {
                    name: name.to_owned(),
                    data_type,
                    value: value.to_owned(),
                })
                .collect(),
        )
    }

    /// A message of single-valued headers built without JSON.
    pub fn headers<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> Message {
        Message::Headers(
            headers
                .into_iter()
                .map(|(name, value)| Header {
                    name: name.to_owned(),
                    values: vec![value.to_owned()],
                })
                .collect(),
        )
    }
}

//! Messages as the broker hands them over, before binding.
//!
//! A message reaches binding ([`crate::bind::Bindings`]) in one of three forms:
//!
//! - **Borrowed**, straight from what the broker holds: anything implementing [`Attributes`]
//!   (typed attributes: basaltic, sns attribute scope) or [`Headers`] (stream, expr) — slices of
//!   pairs or tuples, `Vec`s of them, `HashMap`s and `BTreeMap`s of name → value (or → `Vec` of
//!   values for multi-valued headers). Names and values are `&str`, `String`, `Box<str>`,
//!   `Cow<str>` or bytes (`&[u8]`, read as UTF-8 when bound: a value that is not UTF-8 is present
//!   but satisfies no string test). Binding borrows the values; nothing is copied.
//! - **Raw JSON bytes**: an SNS body or an Event Grid event as published
//!   ([`crate::bind::Bindings::bind_json`]); only what the key table reads is kept.
//! - **Owned**, for convenience: a [`Message`], bound on the same paths (its attributes and
//!   headers through the same traits, [`Message::Body`] through the raw-bytes path).
//!
//! Which parts of a message a program reads is decided by the program's [`crate::key::Key`]s.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// The declared data type of a message attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// A published message in one of the shapes the dialects read, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Typed attributes (`basaltic`, `sns` attribute scope).
    Attributes(Vec<Attribute>),
    /// Headers (`stream`, `expr`).
    Headers(Vec<Header>),
    /// A JSON document as published, its raw bytes (`sns` body scope, `eventgrid` events): read
    /// when bound, keeping only what the program reads. Bytes that are not one JSON document are
    /// an SNS body that is not JSON (it matches only policies that read nothing from the body,
    /// and binding reports it) or an Event Grid event that cannot be judged.
    Body(Vec<u8>),
    /// A JSON document already parsed (`sns` body scope, `eventgrid` events), bound whole as the
    /// `serde_json::Value` holds it. A number is an `i64`, `u64` or `f64` there, read as the text
    /// its `Display` writes (an integer's digits; a float's shortest text that reads back to it,
    /// so `json!(0.1)` is 0.1); members come in the map's order (sorted by name with
    /// `serde_json`'s default features: of several case variants of an Event Grid name, the
    /// first in that order is read). What `serde_json` rounded when it read text stays rounded,
    /// and Event Grid compares decimals exactly: `9007199254740992.5` read into a `Value` is
    /// 9007199254740992. For exact number text pass bytes or text ([`Message::Body`]).
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

/// Text as a broker holds it: known to be UTF-8 (`str`, `String`, ...) or bytes, checked when
/// read.
pub trait Text {
    /// The text, or its bytes when they are not UTF-8.
    fn text(&self) -> Result<&str, &[u8]>;

    /// The bytes (of the text, or as they are).
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self.text() {
            Ok(s) => s.as_bytes(),
            Err(b) => b,
        }
    }
}

impl Text for str {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        Ok(self)
    }
}

impl Text for String {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        Ok(self)
    }
}

impl Text for Box<str> {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        Ok(self)
    }
}

impl Text for Cow<'_, str> {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        Ok(self)
    }
}

impl Text for std::sync::Arc<str> {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        Ok(self)
    }
}

impl Text for [u8] {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        std::str::from_utf8(self).map_err(|_| self)
    }

    /// The bytes as they are, without checking that they are UTF-8.
    #[inline]
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl<T: Text + ?Sized> Text for &T {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        (**self).text()
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        (**self).bytes()
    }
}

/// The values of one header: a single text (`&str`, `String`, `&[u8]`, ...) or several (a `Vec`
/// of them: a multi-valued header, satisfied when any value satisfies the condition). An empty
/// `Vec` is a header that is present with no value.
pub trait HeaderValues {
    /// The type of one value.
    type Value: Text;
    /// The values.
    fn values(&self) -> &[Self::Value];
}

macro_rules! single_header_value {
    ($($t:ty),*) => {$(
        impl HeaderValues for $t {
            type Value = $t;
            #[inline]
            fn values(&self) -> &[$t] {
                std::slice::from_ref(self)
            }
        }
    )*};
}

single_header_value!(String, Box<str>, std::sync::Arc<str>);

impl<'a> HeaderValues for &'a str {
    type Value = &'a str;
    #[inline]
    fn values(&self) -> &[&'a str] {
        std::slice::from_ref(self)
    }
}

impl<'a> HeaderValues for &'a [u8] {
    type Value = &'a [u8];
    #[inline]
    fn values(&self) -> &[&'a [u8]] {
        std::slice::from_ref(self)
    }
}

impl<'a> HeaderValues for Cow<'a, str> {
    type Value = Cow<'a, str>;
    #[inline]
    fn values(&self) -> &[Cow<'a, str>] {
        std::slice::from_ref(self)
    }
}

impl<T: Text> HeaderValues for Vec<T> {
    type Value = T;
    #[inline]
    fn values(&self) -> &[T] {
        self
    }
}

impl<T: Text> HeaderValues for Box<[T]> {
    type Value = T;
    #[inline]
    fn values(&self) -> &[T] {
        self
    }
}

/// A message's headers as the broker holds them (stream, expr): entries of a name and its
/// values. An entry repeated under one name is one multimap entry: every value counts.
///
/// Implemented for slices, arrays and `Vec`s of `(name, values)` pairs, for `HashMap` and
/// `BTreeMap` of name → values, and for [`Header`]s.
///
/// ```
/// use filtervm_vm::message::Headers;
/// use std::collections::HashMap;
/// fn count(h: &(impl Headers + ?Sized)) -> usize { h.entries().count() }
/// assert_eq!(count(&[("region", "eu-west"), ("n", "5")][..]), 2);
/// assert_eq!(count(&HashMap::from([("tags", vec!["a", "b"])])), 1);
/// ```
pub trait Headers {
    /// The type of a name.
    type Name: Text + ?Sized;
    /// The type of an entry's values.
    type Values: HeaderValues + ?Sized;
    /// The entries, in the order the message holds them.
    fn entries(&self) -> impl Iterator<Item = (&Self::Name, &Self::Values)>;
}

impl<N: Text, V: HeaderValues> Headers for [(N, V)] {
    type Name = N;
    type Values = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, &V)> {
        self.iter().map(|(n, v)| (n, v))
    }
}

impl<N: Text, V: HeaderValues, const K: usize> Headers for [(N, V); K] {
    type Name = N;
    type Values = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, &V)> {
        self.iter().map(|(n, v)| (n, v))
    }
}

impl<N: Text, V: HeaderValues> Headers for Vec<(N, V)> {
    type Name = N;
    type Values = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, &V)> {
        self.iter().map(|(n, v)| (n, v))
    }
}

impl<N: Text, V: HeaderValues, S> Headers for HashMap<N, V, S> {
    type Name = N;
    type Values = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, &V)> {
        self.iter()
    }
}

impl<N: Text, V: HeaderValues> Headers for BTreeMap<N, V> {
    type Name = N;
    type Values = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, &V)> {
        self.iter()
    }
}

impl Headers for [Header] {
    type Name = String;
    type Values = Vec<String>;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&String, &Vec<String>)> {
        self.iter().map(|h| (&h.name, &h.values))
    }
}

impl Headers for Vec<Header> {
    type Name = String;
    type Values = Vec<String>;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&String, &Vec<String>)> {
        self.iter().map(|h| (&h.name, &h.values))
    }
}

/// A message's typed attributes as the broker holds them (basaltic, sns attribute scope): a
/// name, a declared type and the value text. Of several attributes with one name, the last
/// counts.
///
/// Implemented for slices, arrays and `Vec`s of `(name, type, value)` tuples, for `HashMap` and
/// `BTreeMap` of name → `(type, value)`, and for [`Attribute`]s.
pub trait Attributes {
    /// The type of a name.
    type Name: Text + ?Sized;
    /// The type of a value.
    type Value: Text + ?Sized;
    /// The attributes, in the order the message holds them.
    fn entries(&self) -> impl Iterator<Item = (&Self::Name, AttributeType, &Self::Value)>;

    /// The most attribute names for which finding each with [`Attributes::named`] costs less than
    /// one walk of [`Attributes::entries`]. A filter that reads at most this many named
    /// attributes (and not whether any attribute is there, an SNS `exists: false`) is bound by
    /// looking up those names: the attributes it does not name are never read. 0 (always walk)
    /// unless an implementation says otherwise.
    const LOOKUP_NAMES: usize = 0;

    /// The type and value of the last attribute named `name` (of several with one name the last
    /// counts), as [`Attributes::entries`] holds them.
    #[inline]
    fn named(&self, name: &[u8]) -> Option<(AttributeType, &Self::Value)> {
        let mut found = None;
        for (n, data_type, value) in self.entries() {
            if crate::bytes::same(n.bytes(), name) {
                found = Some((data_type, value));
            }
        }
        found
    }
}

impl<N: Text, V: Text> Attributes for [(N, AttributeType, V)] {
    type Name = N;
    type Value = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, AttributeType, &V)> {
        self.iter().map(|(n, t, v)| (n, *t, v))
    }
}

impl<N: Text, V: Text, const K: usize> Attributes for [(N, AttributeType, V); K] {
    type Name = N;
    type Value = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, AttributeType, &V)> {
        self.iter().map(|(n, t, v)| (n, *t, v))
    }
}

impl<N: Text, V: Text> Attributes for Vec<(N, AttributeType, V)> {
    type Name = N;
    type Value = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, AttributeType, &V)> {
        self.iter().map(|(n, t, v)| (n, *t, v))
    }
}

impl<N: Text, V: Text, S> Attributes for HashMap<N, (AttributeType, V), S> {
    type Name = N;
    type Value = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, AttributeType, &V)> {
        self.iter().map(|(n, (t, v))| (n, *t, v))
    }
}

impl<N: Text, V: Text> Attributes for BTreeMap<N, (AttributeType, V)> {
    type Name = N;
    type Value = V;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&N, AttributeType, &V)> {
        self.iter().map(|(n, (t, v))| (n, *t, v))
    }
}

impl Attributes for [Attribute] {
    type Name = String;
    type Value = String;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&String, AttributeType, &String)> {
        self.iter().map(|a| (&a.name, a.data_type, &a.value))
    }
}

impl Attributes for Vec<Attribute> {
    type Name = String;
    type Value = String;
    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&String, AttributeType, &String)> {
        self.iter().map(|a| (&a.name, a.data_type, &a.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header's name and its values (`Err` for bytes that are not UTF-8).
    type Entry = (Vec<u8>, Vec<Result<String, Vec<u8>>>);

    fn header_values<H: Headers + ?Sized>(h: &H) -> Vec<Entry> {
        h.entries()
            .map(|(n, v)| {
                (
                    n.bytes().to_vec(),
                    v.values()
                        .iter()
                        .map(|v| v.text().map(str::to_owned).map_err(<[u8]>::to_vec))
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn headers_of_every_shape_list_their_entries() {
        let pairs = [("a", "1"), ("b", "2")];
        let expected = vec![
            (b"a".to_vec(), vec![Ok("1".to_owned())]),
            (b"b".to_vec(), vec![Ok("2".to_owned())]),
        ];
        assert_eq!(header_values(&pairs), expected);
        assert_eq!(header_values(&pairs[..]), expected);
        assert_eq!(header_values(&pairs.to_vec()), expected);
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(header_values(&owned), expected);
        let btree: BTreeMap<&str, &str> = pairs.into_iter().collect();
        assert_eq!(header_values(&btree), expected);
        let multi = HashMap::from([("m", vec!["x", "y"])]);
        assert_eq!(
            header_values(&multi),
            vec![(b"m".to_vec(), vec![Ok("x".to_owned()), Ok("y".to_owned())])]
        );
        let bytes: [(&[u8], &[u8]); 1] = [(b"n", b"\xff")];
        assert_eq!(
            header_values(&bytes),
            vec![(b"n".to_vec(), vec![Err(vec![0xff])])]
        );
        let message = [Header {
            name: "h".into(),
            values: vec![],
        }];
        assert_eq!(header_values(&message[..]), vec![(b"h".to_vec(), vec![])]);
    }

    #[test]
    fn attributes_of_every_shape_list_their_entries() {
        let tuples = [("n", AttributeType::Number, "5")];
        let map = HashMap::from([("n", (AttributeType::Number, "5"))]);
        let owned = vec![Attribute {
            name: "n".into(),
            data_type: AttributeType::Number,
            value: "5".into(),
        }];
        fn list<A: Attributes + ?Sized>(a: &A) -> Vec<(Vec<u8>, AttributeType, Vec<u8>)> {
            a.entries()
                .map(|(n, t, v)| (n.bytes().to_vec(), t, v.bytes().to_vec()))
                .collect()
        }
        let expected = vec![(b"n".to_vec(), AttributeType::Number, b"5".to_vec())];
        assert_eq!(list(&tuples), expected);
        assert_eq!(list(&map), expected);
        assert_eq!(list(&owned), expected);
        assert_eq!(list(&owned[..]), expected);
    }
}

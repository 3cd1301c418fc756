//! The owned tree: [`Value`], [`Number`] (exact source text) and [`Map`] (member order kept).

use super::error::{Detail, Error, ErrorKind};
use super::read::{Event, LoneSurrogates, Reader, Str};
use crate::number::Decimal;
use ahash::AHashMap;
use std::fmt::{self, Write as _};

/// The default of [`ParseOptions::max_depth`], as in `serde_json`.
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// The largest [`ParseOptions::max_depth`] honoured: an owned tree is dropped, printed and
/// converted recursively, so its depth stays within what any thread's stack holds.
pub const MAX_DEPTH_CEILING: usize = 1024;

/// What [`parse_with`] does with an object that names a member twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Duplicates {
    /// The last value wins, at the position of the first occurrence (what `serde_json` does
    /// with `preserve_order`); the map remembers it ([`Map::first_duplicate`]).
    #[default]
    KeepLast,
    /// An error of kind [`ErrorKind::DuplicateName`] at the second occurrence.
    Reject,
    /// Every occurrence kept, each at its own position in source order (the map then holds the
    /// name more than once: [`Map::iter`] gives them all, [`Map::get`] the first), and the map
    /// remembers it ([`Map::first_duplicate`]). For readers to whom the order of repeated names
    /// means something (an EventBridge pattern's later member replaces the earlier one, EB-7).
    KeepAll,
}

/// How [`parse_with`] reads a document into an owned tree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Most arrays and objects nested in one another ([`DEFAULT_MAX_DEPTH`]; values above
    /// [`MAX_DEPTH_CEILING`] count as the ceiling). Deeper input is an [`ErrorKind::TooDeep`]
    /// error.
    pub max_depth: usize,
    /// Lone surrogate escapes: rejected by default.
    pub lone_surrogates: LoneSurrogates,
    /// Duplicate member names: the last value wins by default.
    pub duplicates: Duplicates,
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        ParseOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            lone_surrogates: LoneSurrogates::Reject,
            duplicates: Duplicates::KeepLast,
        }
    }
}

/// A JSON number, kept as the exact text it was written with (`1.50`, `1e400` and `-0` stay so).
///
/// The text always follows the JSON number grammar. Equality compares the text: `1.5` and
/// `1.50` are different numbers here (compare [`Number::to_decimal`] for numeric equality).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Number {
    text: Box<str>,
}

impl Number {
    /// `text` as a number when it is exactly one JSON number (no white space around it).
    ///
    /// ```
    /// use filtervm_vm::json::Number;
    /// assert_eq!(Number::from_text("1.50").unwrap().as_str(), "1.50");
    /// assert!(Number::from_text("01").is_none());
    /// assert!(Number::from_text(" 1").is_none());
    /// ```
    pub fn from_text(text: &str) -> Option<Number> {
        is_number_text(text).then(|| Number { text: text.into() })
    }

    /// A finite binary64 as a number, written as ECMAScript writes it (`1.5`, `1e+21`, `-0` as
    /// `0`); `None` for NaN and the infinities.
    pub fn from_f64(value: f64) -> Option<Number> {
        value.is_finite().then(|| Number {
            text: crate::number::canonical_number_text(value).into(),
        })
    }

    /// The exact text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The value rounded to the nearest binary64; `None` when that is not finite (`1e400`).
    pub fn as_f64(&self) -> Option<f64> {
        crate::number::parse_json_number(&self.text)
    }

    /// The value when it is written as an integer ([`Number::is_integer`]) that fits a `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        if self.is_integer() {
            self.text.parse().ok()
        } else {
            None
        }
    }

    /// The value when it is written as an integer ([`Number::is_integer`]) that fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        if self.is_integer() {
            self.text.parse().ok()
        } else {
            None
        }
    }

    /// Whether the number is written as an integer: no fraction and no exponent (`2` and `-0`
    /// are; `2.0` and `2e0` are not, like `serde_json`'s `is_u64`/`is_i64`).
    pub fn is_integer(&self) -> bool {
        !self.text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
    }

    /// The exact decimal value (`None` only when the exponent leaves the `i64` range, see
    /// [`Decimal::parse`]).
    pub fn to_decimal(&self) -> Option<Decimal> {
        Decimal::parse(&self.text)
    }
}

/// Whether `text` is exactly one JSON number.
fn is_number_text(text: &str) -> bool {
    let mut reader = Reader::new(text.as_bytes(), LoneSurrogates::Reject);
    matches!(reader.next(), Ok(Event::Number(n)) if n.bytes.len() == text.len())
        && matches!(reader.next(), Ok(Event::End))
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({})", self.text)
    }
}

impl std::str::FromStr for Number {
    type Err = Error;
    fn from_str(text: &str) -> Result<Number, Error> {
        Number::from_text(text).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidNumber,
                0,
                Detail::Number("exactly one JSON number"),
            )
        })
    }
}

macro_rules! number_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number {
                Number { text: n.to_string().into() }
            }
        }
    )*};
}
number_from_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// The room of the first allocation of an array's values, an object's members and the reader's
/// open containers: what `Vec` grows an empty vector of them to on its first push, allocated
/// directly (growing costs about 35 instructions more).
const FIRST_CAPACITY: usize = 4;

/// Objects with more members than this get a hash index for [`Map::get`].
const INDEX_FROM: usize = 16;

/// The members of a JSON object, in document order, each name once.
///
/// Reading an object that names a member twice keeps the last value at the position of the first
/// occurrence and remembers the name ([`Map::first_duplicate`]), so a caller can reject it.
/// Lookups are a scan for small objects and hashed for large ones, so building and reading a map
/// is linear in its size.
#[derive(Clone, Default)]
pub struct Map {
    entries: Vec<(String, Value)>,
    /// Name → position, for maps of more than [`INDEX_FROM`] members. Boxed, so that a map (and
    /// so every [`Value`]) stays small: a reader's arrays and objects hold values inline, and an
    /// object's entries of 128 bytes grew past the allocator's small sizes at eight members,
    /// where each growth cost several times a small allocation (BENCHMARKS.md "Compile").
    index: Option<Box<AHashMap<Box<str>, usize>>>,
    /// The first name the source gave twice.
    duplicate: Option<Box<str>>,
}

impl Map {
    /// An empty map.
    pub fn new() -> Map {
        Map::default()
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.entries.iter().position(|(k, _)| k == name),
        }
    }

    /// The value of member `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        let i = self.position(name)?;
        self.entries.get(i).map(|(_, v)| v)
    }

    /// The value of member `name`, mutable.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        let i = self.position(name)?;
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    /// The name and value of member `name`.
    pub fn get_key_value(&self, name: &str) -> Option<(&String, &Value)> {
        let i = self.position(name)?;
        self.entries.get(i).map(|(k, v)| (k, v))
    }

    /// Whether there is a member `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Sets member `name` to `value`: an existing member keeps its position and its old value is
    /// returned, a new one is appended.
    pub fn insert(&mut self, name: String, value: Value) -> Option<Value> {
        if let Some(i) = self.position(&name)
            && let Some((_, slot)) = self.entries.get_mut(i)
        {
            return Some(std::mem::replace(slot, value));
        }
        self.push_new(name, value);
        None
    }

    /// Appends member `name`, known not to be in the map, keeping the hash index (built once the
    /// map grows past [`INDEX_FROM`] members).
    fn push_new(&mut self, name: String, value: Value) {
        let i = self.entries.len();
        if let Some(index) = &mut self.index {
            index.insert(name.as_str().into(), i);
        }
        if self.entries.capacity() == 0 {
            self.entries = Vec::with_capacity(FIRST_CAPACITY);
        }
        self.entries.push((name, value));
        if self.index.is_none() && self.entries.len() > INDEX_FROM {
            // A name held twice (`Duplicates::KeepAll`) is found at its first position.
            let mut index = AHashMap::with_capacity(self.entries.len());
            for (i, (k, _)) in self.entries.iter().enumerate() {
                index.entry(k.as_str().into()).or_insert(i);
            }
            self.index = Some(Box::new(index));
        }
    }

    /// Removes member `name`, keeping the others in order (linear in the map's size).
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let i = self.position(name)?;
        if i >= self.entries.len() {
            return None;
        }
        let (_, value) = self.entries.remove(i);
        if let Some(index) = &mut self.index {
            index.clear();
            index.extend(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.as_str().into(), i)),
            );
        }
        Some(value)
    }

    /// The members in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    /// The members in order, values mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Value)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    /// The names in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The values in order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// Whether the source named some member more than once.
    pub fn has_duplicates(&self) -> bool {
        self.duplicate.is_some()
    }

    /// The first member name the source gave more than once (its last value is the one kept).
    pub fn first_duplicate(&self) -> Option<&str> {
        self.duplicate.as_deref()
    }
}

impl PartialEq for Map {
    /// Same members in the same order (how the map was read, including duplicates, is ignored).
    fn eq(&self, other: &Map) -> bool {
        self.entries == other.entries
    }
}

impl Eq for Map {}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// An iterator over a [`Map`]'s members in order.
#[derive(Debug, Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, (String, Value)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl FromIterator<(String, Value)> for Map {
    /// Later values of a repeated name replace earlier ones in place.
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Map {
        let mut map = Map::new();
        map.extend(iter);
        map
    }
}

impl Extend<(String, Value)> for Map {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

/// A JSON value as an owned tree (what policies are read into).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number with its exact text.
    Number(Number),
    /// A string (escapes decoded).
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, members in document order.
    Object(Map),
}

impl Value {
    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this is `true` or `false`.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    /// Whether this is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The number as a finite binary64 ([`Number::as_f64`]).
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number()?.as_f64()
    }

    /// The number as a `u64` ([`Number::as_u64`]).
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    /// The number as an `i64` ([`Number::as_i64`]).
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The elements, mutable, if this is an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The members, mutable, if this is an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Member `name`, if this is an object that has it.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.as_object()?.get(name)
    }

    /// The value a JSON Pointer (RFC 6901) names: `""` is the whole value, `/a/0` member `a`'s
    /// first element; `~1` stands for `/` and `~0` for `~` in a segment.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |cur, segment| {
            let segment = segment.replace("~1", "/").replace("~0", "~");
            match cur {
                Value::Object(map) => map.get(&segment),
                Value::Array(items) => {
                    if segment.len() > 1 && segment.starts_with('0') {
                        return None;
                    }
                    items.get(segment.parse::<usize>().ok()?)
                }
                _ => None,
            }
        })
    }

    /// The value as a `serde_json::Value`, as far as `serde_json` can hold it. With
    /// `serde_json`'s default features a number is an `i64`, `u64` or `f64`: an integer in those
    /// ranges stays exact, any other number is rounded to the nearest binary64 (`1.50` becomes
    /// 1.5, `12345678901234567890123` becomes 1.2345678901234568e22), and one beyond binary64
    /// (`1e400`) becomes its text as a string; members come in `serde_json::Map`'s order (sorted
    /// by name). Write the value with its `Display` instead to keep every number's text.
    pub fn to_serde_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => match n.as_str().parse::<serde_json::Number>() {
                Ok(n) => serde_json::Value::Number(n),
                Err(_) => serde_json::Value::String(n.as_str().to_owned()),
            },
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(Value::to_serde_json).collect())
            }
            Value::Object(map) => serde_json::Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), v.to_serde_json()))
                    .collect(),
            ),
        }
    }
}

impl From<&serde_json::Value> for Value {
    /// The same value, members in the map's order; a number takes the text `serde_json`'s
    /// `Display` writes for the number it holds: an integer's digits, a float's shortest text
    /// that reads back to it (`0.1`, `100.0`, `1e+22`). A number `serde_json` rounded when it read
    /// text stays rounded: to keep numbers as written, read the text with [`parse`].
    fn from(value: &serde_json::Value) -> Value {
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                let text = n.to_string();
                match Number::from_text(&text) {
                    Some(n) => Value::Number(n),
                    // serde_json writes every number it holds in the JSON grammar; should a
                    // future version not, keep the value rather than the text.
                    None => n
                        .as_f64()
                        .and_then(Number::from_f64)
                        .map_or(Value::Null, Value::Number),
                }
            }
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(items) => {
                Value::Array(items.iter().map(Value::from).collect())
            }
            serde_json::Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Value::from(v)))
                    .collect(),
            ),
        }
    }
}

impl From<serde_json::Value> for Value {
    fn from(value: serde_json::Value) -> Value {
        Value::from(&value)
    }
}

impl From<&Value> for serde_json::Value {
    fn from(value: &Value) -> serde_json::Value {
        value.to_serde_json()
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Value {
        Value::Object(map)
    }
}

impl std::str::FromStr for Value {
    type Err = Error;
    /// [`parse`] of the text.
    fn from_str(text: &str) -> Result<Value, Error> {
        parse(text.as_bytes())
    }
}

/// A string shown as a JSON string literal, written straight into the formatter (no copy, no
/// [`Value`]), escaped as `serde_json` escapes it.
///
/// ```
/// use filtervm_vm::json::Quoted;
/// assert_eq!(Quoted("a\"b\n").to_string(), r#""a\"b\n""#);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_json_string(f, self.0)
    }
}

/// Writes `items` as a compact JSON array, each as its `Display` writes it (the owned tree, the
/// borrowed one and the pruned document print alike).
pub(crate) fn write_json_array<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    items: impl IntoIterator<Item = T>,
) -> fmt::Result {
    f.write_char('[')?;
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        fmt::Display::fmt(&item, f)?;
    }
    f.write_char(']')
}

/// Writes `members` as a compact JSON object, as [`write_json_array`] writes an array.
pub(crate) fn write_json_object<'k, T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    members: impl IntoIterator<Item = (&'k str, T)>,
) -> fmt::Result {
    f.write_char('{')?;
    for (i, (name, value)) in members.into_iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        write_json_string(f, name)?;
        f.write_char(':')?;
        fmt::Display::fmt(&value, f)?;
    }
    f.write_char('}')
}

/// Writes `s` as a JSON string literal the way `serde_json` does: `"` and `\` escaped, control
/// characters as `\b` `\t` `\n` `\f` `\r` or `\u00xx`, everything else as is.
pub(crate) fn write_json_string(out: &mut impl fmt::Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut rest = s;
    while let Some(i) = rest
        .bytes()
        .position(|b| b < 0x20 || b == b'"' || b == b'\\')
    {
        out.write_str(rest.get(..i).unwrap_or_default())?;
        let b = rest.as_bytes().get(i).copied().unwrap_or(0);
        match b {
            b'"' => out.write_str("\\\"")?,
            b'\\' => out.write_str("\\\\")?,
            0x08 => out.write_str("\\b")?,
            0x09 => out.write_str("\\t")?,
            0x0a => out.write_str("\\n")?,
            0x0c => out.write_str("\\f")?,
            0x0d => out.write_str("\\r")?,
            _ => write!(out, "\\u{b:04x}")?,
        }
        rest = rest.get(i + 1..).unwrap_or_default();
    }
    out.write_str(rest)?;
    out.write_char('"')
}

impl fmt::Display for Value {
    /// Compact JSON (no white space), numbers in their exact text: what `serde_json::to_string`
    /// writes for the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => f.write_str(n.as_str()),
            Value::String(s) => write_json_string(f, s),
            Value::Array(items) => write_json_array(f, items),
            Value::Object(map) => write_json_object(f, map.iter().map(|(k, v)| (k.as_str(), v))),
        }
    }
}

/// Reads a whole JSON document into an owned tree with the default [`ParseOptions`] (depth 128,
/// lone surrogates rejected, the last of duplicate members kept).
///
/// ```
/// use filtervm_vm::json::{self, ErrorKind, Value};
/// let v = json::parse(br#"{"n": 1.50, "big": 1e400, "a": [true, null]}"#).unwrap();
/// assert_eq!(v.get("n").and_then(Value::as_number).unwrap().as_str(), "1.50");
/// assert_eq!(v.get("big").and_then(Value::as_f64), None);
/// assert_eq!(v.to_string(), r#"{"n":1.50,"big":1e400,"a":[true,null]}"#);
/// let e = json::parse(b"[1, 2]]").unwrap_err();
/// assert_eq!((e.kind(), e.offset()), (ErrorKind::TrailingCharacters, 6));
/// ```
pub fn parse(input: &[u8]) -> Result<Value, Error> {
    parse_with(input, &ParseOptions::default())
}

/// A container being read.
enum Frame {
    Array(Vec<Value>),
    /// The members so far and the pending member's name (with its offset).
    Object(Map, Option<(String, usize)>),
}

/// Reads a whole JSON document into an owned tree. Linear in the input; never recurses.
pub fn parse_with(input: &[u8], options: &ParseOptions) -> Result<Value, Error> {
    build(input, None, options)
}

/// [`parse_with`] of text already known to be UTF-8 (policy text): the same tree and the same
/// errors, but strings without escapes and numbers are copied out of `text` by slicing it, with
/// no second UTF-8 check of their bytes.
pub fn parse_str_with(text: &str, options: &ParseOptions) -> Result<Value, Error> {
    build(text.as_bytes(), Some(text), options)
}

/// The text of `len` bytes at `start` in `source`, when there is a source and the range falls on
/// character boundaries (it always does for what the reader checked; `None` falls back to
/// checking the bytes).
#[inline]
fn slice(source: Option<&str>, start: usize, len: usize) -> Option<&str> {
    source?.get(start..start.checked_add(len)?)
}

/// A string's value as an owned `String`: sliced out of `source` when it has no escapes.
#[inline]
fn owned_string(s: Str<'_>, source: Option<&str>) -> String {
    if !s.escaped
        && let Some(text) = slice(source, s.offset.wrapping_add(1), s.raw.len())
    {
        return text.to_owned();
    }
    s.to_owned_string()
}

/// The error for a container opened below `max_depth` others, at the bracket `reader` just read
/// (for the owned tree and the borrowed one alike).
pub(crate) fn too_deep(reader: &Reader<'_>, max_depth: usize) -> Error {
    Error::new(
        ErrorKind::TooDeep,
        reader.offset().saturating_sub(1),
        Detail::Depth(max_depth),
    )
}

/// The reader of [`parse_with`] and [`parse_str_with`]; `source` is `input` as text, if known.
fn build(input: &[u8], source: Option<&str>, options: &ParseOptions) -> Result<Value, Error> {
    let max_depth = options.max_depth.min(MAX_DEPTH_CEILING);
    let mut reader = Reader::new(input, options.lone_surrogates);
    let mut frames: Vec<Frame> = Vec::new();
    let mut root = None;
    loop {
        let value = match reader.next()? {
            Event::End => return Ok(root.unwrap_or_default()),
            event @ (Event::ObjectStart | Event::ArrayStart) => {
                if frames.len() >= max_depth {
                    return Err(too_deep(&reader, max_depth));
                }
                if frames.capacity() == 0 {
                    frames = Vec::with_capacity(FIRST_CAPACITY);
                }
                frames.push(match event {
                    Event::ObjectStart => Frame::Object(Map::new(), None),
                    _ => Frame::Array(Vec::new()),
                });
                continue;
            }
            Event::Name(name) => {
                if let Some(Frame::Object(_, pending)) = frames.last_mut() {
                    *pending = Some((owned_string(name, source), name.offset));
                }
                continue;
            }
            Event::ObjectEnd | Event::ArrayEnd => match frames.pop() {
                Some(Frame::Object(map, _)) => Value::Object(map),
                Some(Frame::Array(items)) => Value::Array(items),
                None => Value::Null,
            },
            Event::String(s) => Value::String(owned_string(s, source)),
            Event::Number(n) => Value::Number(Number {
                text: match slice(source, n.start, n.bytes.len()) {
                    Some(text) => text.into(),
                    None => n.text().into(),
                },
            }),
            Event::Bool(b) => Value::Bool(b),
            Event::Null => Value::Null,
        };
        match frames.last_mut() {
            None => root = Some(value),
            Some(Frame::Array(items)) => {
                if items.capacity() == 0 {
                    *items = Vec::with_capacity(FIRST_CAPACITY);
                }
                items.push(value);
            }
            Some(Frame::Object(map, pending)) => {
                let Some((name, at)) = pending.take() else {
                    continue;
                };
                // One search for the name: a new name (the usual case) is appended unsearched.
                let Some(i) = map.position(&name) else {
                    map.push_new(name, value);
                    continue;
                };
                if options.duplicates == Duplicates::Reject {
                    return Err(Error::duplicate(at, &name));
                }
                if map.duplicate.is_none() {
                    map.duplicate = Some(name.as_str().into());
                }
                if options.duplicates == Duplicates::KeepAll {
                    map.entries.push((name, value));
                    continue;
                }
                if let Some((_, slot)) = map.entries.get_mut(i) {
                    *slot = value;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_helpers() {
        let n = |t: &str| Number::from_text(t).unwrap();
        assert_eq!(n("1.50").as_f64(), Some(1.5));
        assert_eq!(n("1e400").as_f64(), None);
        assert_eq!(n("-0").as_f64().map(f64::is_sign_negative), Some(true));
        assert_eq!(n("18446744073709551615").as_u64(), Some(u64::MAX));
        assert_eq!(n("18446744073709551616").as_u64(), None);
        assert_eq!(n("-1").as_u64(), None);
        assert_eq!(n("-1").as_i64(), Some(-1));
        assert_eq!(n("-0").as_i64(), Some(0));
        assert_eq!(n("2.0").as_u64(), None);
        assert_eq!(n("2e0").as_u64(), None);
        assert!(n("2").is_integer() && !n("2.0").is_integer() && !n("2E0").is_integer());
        assert_eq!(n("5.0").to_decimal(), n("50e-1").to_decimal());
        for bad in [
            "", "-", "01", "1.", ".5", "+1", "1e", " 1", "1 ", "NaN", "0x1",
        ] {
            assert!(Number::from_text(bad).is_none(), "{bad}");
        }
        assert_eq!(Number::from_f64(1e21).unwrap().as_str(), "1e+21");
        assert!(Number::from_f64(f64::NAN).is_none());
        assert_eq!(Number::from(7u8).as_str(), "7");
        assert_eq!(Number::from(-7i64).as_str(), "-7");
    }

    #[test]
    fn map_keeps_order_and_indexes_large_maps() {
        let mut m = Map::new();
        for i in (0..40).rev() {
            assert_eq!(m.insert(format!("k{i}"), Value::from(i.to_string())), None);
        }
        assert_eq!(m.len(), 40);
        assert_eq!(m.keys().next().map(String::as_str), Some("k39"));
        assert_eq!(m.get("k3"), Some(&Value::from("3")));
        assert_eq!(m.insert("k39".into(), Value::Null), Some(Value::from("39")));
        assert_eq!(m.keys().next().map(String::as_str), Some("k39"));
        assert_eq!(m.remove("k39"), Some(Value::Null));
        assert_eq!(m.keys().next().map(String::as_str), Some("k38"));
        assert!(m.contains_key("k0") && !m.contains_key("k39"));
        assert_eq!(m.get("k0"), Some(&Value::from("0")));
        assert!(!m.has_duplicates());
    }

    #[test]
    fn duplicates_keep_the_last_value_at_the_first_position() {
        let v = parse(br#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(
            m.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>(),
            ["a=3", "b=2"]
        );
        assert_eq!(m.first_duplicate(), Some("a"));
        let options = ParseOptions {
            duplicates: Duplicates::Reject,
            ..ParseOptions::default()
        };
        let e = parse_with(br#"{"a": 1, "b": 2, "a": 3}"#, &options).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ErrorKind::DuplicateName, 17));
        assert_eq!(e.to_string(), "duplicate member name \"a\" at byte 17");
    }

    /// Text read as a `&str` gives the tree and the errors the bytes give, whatever the strings
    /// hold (escapes, non-ASCII characters, numbers in every form) and whatever the options do
    /// with repeated names.
    #[test]
    fn str_input_reads_as_bytes_do() {
        let texts = [
            r#"{"a": "x", "b\u00e9": "caf\u00e9 é ☃ 😀", "n": [-0, 1.50, 1e400, 2E-3]}"#,
            r#"{"a": 1, "b": {"a": 2, "a": [3]}, "a": "é", "c": "\"\\\/\b\f\n\r\t"}"#,
            r#"["ünïcödé", "", "\ud83d\ude00", {"": null, "é": true}]"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": [1, 2,]}"#,
            r#"{"a": "x" "b"}"#,
            "\"tab\there\"",
            "1.5e+3",
        ];
        for duplicates in [
            Duplicates::KeepLast,
            Duplicates::Reject,
            Duplicates::KeepAll,
        ] {
            let options = ParseOptions {
                duplicates,
                ..ParseOptions::default()
            };
            for text in texts {
                let bytes = parse_with(text.as_bytes(), &options);
                let text_read = parse_str_with(text, &options);
                assert_eq!(
                    format!("{bytes:?}"),
                    format!("{text_read:?}"),
                    "{duplicates:?} {text}"
                );
                if let (Ok(a), Ok(b)) = (&bytes, &text_read) {
                    let dup = |v: &Value| {
                        v.as_object()
                            .and_then(Map::first_duplicate)
                            .map(str::to_owned)
                    };
                    assert_eq!(dup(a), dup(b), "{text}");
                }
            }
        }
        assert_eq!(
            parse_str_with(r#"{"k": "é\n"}"#, &ParseOptions::default())
                .unwrap()
                .get("k")
                .and_then(Value::as_str),
            Some("é\n")
        );
    }

    /// Arrays, objects and the reader's stack start at the room `Vec` would grow them to on a
    /// first push, so a tree holds the same spare capacity as before they were allocated at once.
    #[test]
    #[expect(
        clippy::vec_init_then_push,
        reason = "the capacity an empty vector grows to on its first push is what is measured"
    )]
    fn first_allocations_are_what_a_first_push_grows_to() {
        let mut values = Vec::new();
        values.push(Value::Null);
        let mut members = Vec::new();
        members.push((String::new(), Value::Null));
        let mut frames = Vec::new();
        frames.push(Frame::Array(Vec::new()));
        assert_eq!(
            (values.capacity(), members.capacity(), frames.capacity()),
            (FIRST_CAPACITY, FIRST_CAPACITY, FIRST_CAPACITY)
        );
        let v = parse(br#"{"a": [1, [], {}]}"#).unwrap();
        let map = v.as_object().unwrap();
        assert_eq!(map.entries.capacity(), FIRST_CAPACITY);
        let items = map.get("a").and_then(Value::as_array).unwrap();
        assert_eq!(items.capacity(), FIRST_CAPACITY);
        assert_eq!(items[1].as_array().map(Vec::capacity), Some(0));
        assert_eq!(items[2].as_object().map(|m| m.entries.capacity()), Some(0));
    }

    /// A value is a few words (a map's hash index is boxed): arrays and objects hold their
    /// values inline, so their size is what a policy's tree allocates and copies as it grows.
    #[test]
    fn values_are_small() {
        assert!(
            std::mem::size_of::<Value>() <= 7 * std::mem::size_of::<usize>(),
            "{} bytes",
            std::mem::size_of::<Value>()
        );
    }

    #[test]
    fn depth_limit() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(deep(128).as_bytes()).is_ok());
        let e = parse(deep(129).as_bytes()).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ErrorKind::TooDeep, 128));
        let mut options = ParseOptions {
            max_depth: 2,
            ..ParseOptions::default()
        };
        assert!(parse_with(br#"{"a": [1]}"#, &options).is_ok());
        let e = parse_with(br#"{"a": [{}]}"#, &options).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ErrorKind::TooDeep, 7));
        assert_eq!(
            e.to_string(),
            "arrays and objects nested deeper than 2 levels at byte 7"
        );
        options.max_depth = usize::MAX;
        let e = parse_with(deep(MAX_DEPTH_CEILING + 1).as_bytes(), &options).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooDeep);
    }

    #[test]
    fn display_and_pointer() {
        let v = parse(br#"{"a/b": [1, "x\"\u0001\n"], "~": {"": -0.0e-0}}"#).unwrap();
        assert_eq!(
            v.to_string(),
            r#"{"a/b":[1,"x\"\u0001\n"],"~":{"":-0.0e-0}}"#
        );
        assert_eq!(
            v.pointer("/a~1b/1").and_then(Value::as_str),
            Some("x\"\u{1}\n")
        );
        assert_eq!(
            v.pointer("/~0/")
                .and_then(Value::as_number)
                .map(Number::as_str),
            Some("-0.0e-0")
        );
        assert_eq!(v.pointer(""), Some(&v));
        assert_eq!(v.pointer("/a~1b/01"), None);
        assert_eq!(v.pointer("a"), None);
    }

    #[test]
    fn serde_json_round_trip() {
        let text = r#"{"z": 1.50, "a": [1e400, -0, "s", null, false, {}], "m": {"k": 12345678901234567890123}}"#;
        let ours = parse(text.as_bytes()).unwrap();
        // Our tree keeps the text; `serde_json` (default features) holds numbers as
        // `i64`/`u64`/`f64`, rounds the rest to binary64, and cannot hold `1e400` at all.
        assert_eq!(ours.to_string(), text.replace(' ', ""));
        let theirs = ours.to_serde_json();
        assert_eq!(
            theirs,
            serde_json::json!({"z": 1.5, "a": ["1e400", -0.0, "s", null, false, {}],
                "m": {"k": 1.2345678901234568e22}})
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(text)
                .unwrap_err()
                .to_string(),
            "number out of range at line 1 column 23"
        );
        // Back from `serde_json`: the numbers it holds, in the text its `Display` writes, and its
        // map's member order (sorted by name).
        assert_eq!(
            Value::from(&theirs).to_string(),
            r#"{"a":["1e400",-0.0,"s",null,false,{}],"m":{"k":1.2345678901234568e+22},"z":1.5}"#
        );
    }
}

//! The reference interpreter's own JSON: a [`Value`] that keeps every number's exact text and
//! every object's member order, and a plain recursive-descent reader ([`parse`]).
//!
//! It shares no code with the product's reader (`filtervm_vm::json`): the oracle must not inherit
//! the parser it checks. It reads RFC 8259 JSON the obvious way:
//!
//! - white space is space, tab, line feed and carriage return; one value, nothing after it;
//! - numbers follow `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` and keep their text;
//! - strings: no raw control characters, the escapes of RFC 8259 §7, `\u` surrogate pairs joined;
//!   a lone surrogate is an error (as `serde_json` and the product's policy reader have it);
//! - an object that names a member twice keeps the last value at the first position;
//! - arrays and objects nest at most [`MAX_DEPTH`] levels (`serde_json`'s limit, which message
//!   bodies are read with): deeper text is an error, so the reader's recursion stays bounded.
//!
//! [`parse_with`] reads with other [`ReadOptions`]: another depth limit, and (for the
//! `eventbridge` dialect, whose patterns and events give a repeated member name a meaning,
//! `docs/dialects/eventbridge-patterns.md` EB-3, EB-7) every occurrence of a repeated name kept,
//! in order ([`Map::push`]), or a repeated name made an error (the strict policy readers).
//!
//! Conformance code builds values with the crate's [`json!`](crate::json) macro (the syntax of
//! `serde_json::json!`), and converts them to text with `Display`, exact numbers included.

use std::fmt::{self, Write as _};

/// Most arrays and objects nested in one another (`serde_json` reads 127 levels, not 128).
pub const MAX_DEPTH: usize = 127;

/// A JSON number, as the exact text it was written with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Number(String);

impl Number {
    /// `text` when it is one JSON number.
    pub fn from_text(text: &str) -> Option<Number> {
        let mut reader = Reader::new(text);
        let n = reader.number().ok()?;
        (reader.at == text.len()).then_some(n)
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value as a binary64 (Rust's correctly rounded reading; infinite when out of range).
    pub fn as_f64(&self) -> f64 {
        self.0.parse::<f64>().unwrap_or(f64::NAN)
    }

    /// The value when it is written as a non-negative integer that fits a `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        self.0.parse().ok()
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Objects with more members than this look names up through a hash index.
const INDEXED_FROM: usize = 8;

/// The members of an object, in order, each name once (unless a lossless reading pushed a
/// repeated name again, [`Map::push`]; lookups then find the last occurrence).
#[derive(Debug, Clone, Default)]
pub struct Map {
    entries: Vec<(String, Value)>,
    /// Name → position, once the object is larger than [`INDEXED_FROM`].
    index: Option<std::collections::HashMap<String, usize>>,
}

impl PartialEq for Map {
    /// The same members in the same order.
    fn eq(&self, other: &Map) -> bool {
        self.entries == other.entries
    }
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

    /// Where member `name` is (its last occurrence, when [`Map::push`] repeated it).
    fn position(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.entries.iter().rposition(|(k, _)| k == name),
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

    /// Whether there is a member `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Sets member `name`: an existing member keeps its place (its old value is returned), a new
    /// one goes last.
    pub fn insert(&mut self, name: String, value: Value) -> Option<Value> {
        if let Some(slot) = self.get_mut(&name) {
            return Some(std::mem::replace(slot, value));
        }
        self.push(name, value);
        None
    }

    /// Appends member `name` even when the map already has one: the lossless reading of an
    /// object that names a member twice ([`ReadOptions::keep_duplicates`]). Iteration yields
    /// every occurrence in order; [`Map::get`] and [`Map::insert`] find the last one.
    pub fn push(&mut self, name: String, value: Value) {
        if let Some(index) = &mut self.index {
            index.insert(name.clone(), self.entries.len());
        }
        self.entries.push((name, value));
        self.index_when_large();
    }

    /// Builds the name index once the map is larger than [`INDEXED_FROM`] (a later occurrence of
    /// a name overwrites an earlier one, so lookups find the last).
    fn index_when_large(&mut self) {
        if self.index.is_none() && self.entries.len() > INDEXED_FROM {
            self.index = Some(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.clone(), i))
                    .collect(),
            );
        }
    }

    /// Removes member `name`.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let i = self.position(name)?;
        if i >= self.entries.len() {
            return None;
        }
        let (_, value) = self.entries.remove(i);
        self.index = None;
        self.index_when_large();
        Some(value)
    }

    /// The members in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&String, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
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

    /// Adds the members of `other` (later names replace earlier ones in place).
    pub fn extend(&mut self, other: impl IntoIterator<Item = (String, Value)>) {
        for (k, v) in other {
            self.insert(k, v);
        }
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Value)>,
        fn(&'a (String, Value)) -> (&'a String, &'a Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
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
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Map {
        let mut map = Map::new();
        map.extend(iter);
        map
    }
}

/// A JSON value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, members in order.
    Object(Map),
}

/// What an index into a value that lacks it gives.
static NULL: Value = Value::Null;

impl Value {
    /// Member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.as_object()?.get(name)
    }

    /// Member `name` of an object, mutable.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.as_object_mut()?.get_mut(name)
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
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

    /// The number as a binary64, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().map(Number::as_f64)
    }

    /// The number as a `u64`, if this is one written as such.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The elements, mutable, if this is an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The members, mutable, if this is an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
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
}

impl std::ops::Index<&str> for Value {
    type Output = Value;
    /// Member `name`, or `null` when there is none.
    fn index(&self, name: &str) -> &Value {
        self.get(name).unwrap_or(&NULL)
    }
}

impl std::ops::Index<usize> for Value {
    type Output = Value;
    /// Element `i`, or `null` when there is none.
    fn index(&self, i: usize) -> &Value {
        self.as_array().and_then(|a| a.get(i)).unwrap_or(&NULL)
    }
}

impl std::ops::IndexMut<&str> for Value {
    /// Member `name`, added as `null` when missing; a value that is not an object becomes an
    /// empty object first.
    fn index_mut(&mut self, name: &str) -> &mut Value {
        if !self.is_object() {
            *self = Value::Object(Map::new());
        }
        match self {
            Value::Object(map) => {
                if !map.contains_key(name) {
                    map.insert(name.to_owned(), Value::Null);
                }
                match map.get_mut(name) {
                    Some(v) => v,
                    None => unreachable_member(),
                }
            }
            _ => unreachable_member(),
        }
    }
}

#[expect(
    clippy::panic,
    reason = "index_mut has just made the value an object holding the member"
)]
fn unreachable_member() -> ! {
    panic!("the member was just inserted")
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<&&str> for Value {
    fn from(s: &&str) -> Value {
        Value::String((*s).to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&Value> for Value {
    fn from(v: &Value) -> Value {
        v.clone()
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Value {
        Value::Object(map)
    }
}

impl From<()> for Value {
    fn from((): ()) -> Value {
        Value::Null
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(items: &[T]) -> Value {
        Value::Array(items.iter().cloned().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>, const N: usize> From<[T; N]> for Value {
    fn from(items: [T; N]) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

macro_rules! from_integer {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number(n.to_string()))
            }
        }
    )*};
}
from_integer!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl From<f64> for Value {
    /// The shortest text that reads back to `x` (`5.0`, `1e21`, `1e-7`); `null` when `x` is not
    /// finite.
    fn from(x: f64) -> Value {
        if x.is_finite() {
            Value::Number(Number(format!("{x:?}")))
        } else {
            Value::Null
        }
    }
}

impl From<&serde_json::Value> for Value {
    /// The same value, read from `serde_json`'s text of it.
    fn from(v: &serde_json::Value) -> Value {
        parse(&v.to_string()).unwrap_or(Value::Null)
    }
}

/// What [`json!`](crate::json) does with an expression: like `serde_json::json!`, it reads the
/// expression by reference and converts a copy, so using a variable does not move it.
#[doc(hidden)]
pub trait ToValue {
    /// The value of `self`.
    fn to_value(&self) -> Value;
}

impl<T: Clone + Into<Value>> ToValue for T {
    fn to_value(&self) -> Value {
        self.clone().into()
    }
}

impl FromIterator<Value> for Value {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Value {
        Value::Array(iter.into_iter().collect())
    }
}

/// Writes `s` as a JSON string: `"` and `\` escaped, control characters as `\b` `\t` `\n` `\f`
/// `\r` or `\u00xx`, everything else as is.
fn write_string(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\u{8}' => f.write_str("\\b")?,
            '\t' => f.write_str("\\t")?,
            '\n' => f.write_str("\\n")?,
            '\u{c}' => f.write_str("\\f")?,
            '\r' => f.write_str("\\r")?,
            c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

impl fmt::Display for Value {
    /// Compact JSON, numbers as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => f.write_str(n.as_str()),
            Value::String(s) => write_string(f, s),
            Value::Array(items) => {
                f.write_char('[')?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_char(']')
            }
            Value::Object(map) => {
                f.write_char('{')?;
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write_string(f, k)?;
                    write!(f, ":{v}")?;
                }
                f.write_char('}')
            }
        }
    }
}

/// Why text is not JSON: what, and at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The byte offset.
    pub at: usize,
    /// What was wrong.
    pub what: String,
    /// Whether the text was only nested deeper than the reader's limit (see [`parse_with`]).
    pub too_deep: bool,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// How [`parse_with`] reads text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Most arrays and objects nested in one another; deeper text is an error.
    pub max_depth: usize,
    /// Whether an object that names a member twice keeps every occurrence in order
    /// ([`Map::push`]) instead of the last value at the first position.
    pub keep_duplicates: bool,
    /// Whether an object that names a member twice is an error (checked before
    /// [`ReadOptions::keep_duplicates`]).
    pub reject_duplicates: bool,
}

impl Default for ReadOptions {
    /// What [`parse`] does: [`MAX_DEPTH`] levels, one member per name.
    fn default() -> ReadOptions {
        ReadOptions {
            max_depth: MAX_DEPTH,
            keep_duplicates: false,
            reject_duplicates: false,
        }
    }
}

/// Reads `text` as one JSON value (see the module documentation).
pub fn parse(text: &str) -> Result<Value, ParseError> {
    parse_with(text, ReadOptions::default())
}

/// Reads `text` as one JSON value, as `options` say.
pub fn parse_with(text: &str, options: ReadOptions) -> Result<Value, ParseError> {
    let mut reader = Reader::new(text);
    reader.options = options;
    reader.space();
    let value = reader.value(0)?;
    reader.space();
    if reader.at < text.len() {
        return Err(reader.error("text after the value"));
    }
    Ok(value)
}

/// A recursive-descent reader over the text's bytes (multi-byte characters only ever occur
/// inside strings, which are copied as text).
struct Reader<'a> {
    text: &'a str,
    at: usize,
    options: ReadOptions,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            at: 0,
            options: ReadOptions::default(),
        }
    }

    fn error(&self, what: &str) -> ParseError {
        ParseError {
            at: self.at,
            what: what.to_owned(),
            too_deep: false,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), ParseError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", char::from(byte))))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("unexpected end of the text")),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, ParseError> {
        if self
            .text
            .get(self.at..)
            .is_some_and(|rest| rest.starts_with(word))
        {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error(&format!("expected `{word}`")))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > self.options.max_depth {
            return Err(ParseError {
                too_deep: true,
                ..self.error("nested too deep")
            });
        }
        self.expect(b'{')?;
        let mut map = Map::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name"));
            }
            let name_at = self.at;
            let name = self.string()?;
            if self.options.reject_duplicates && map.contains_key(&name) {
                self.at = name_at;
                return Err(self.error(&format!("the member `{name}` is named twice")));
            }
            self.space();
            self.expect(b':')?;
            self.space();
            let value = self.value(depth)?;
            if self.options.keep_duplicates {
                map.push(name, value);
            } else {
                map.insert(name, value);
            }
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > self.options.max_depth {
            return Err(ParseError {
                too_deep: true,
                ..self.error("nested too deep")
            });
        }
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.space();
            items.push(self.value(depth)?);
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Number, ParseError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("expected a digit after `.`"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("expected a digit in the exponent"));
            }
        }
        let text = self.text.get(start..self.at).unwrap_or_default();
        Ok(Number(text.to_owned()))
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u32, ParseError> {
        let hex = self
            .text
            .get(self.at..self.at + 4)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("expected four hex digits"))?;
        self.at += 4;
        u32::from_str_radix(hex, 16).map_err(|_| self.error("expected four hex digits"))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let rest = self.text.get(self.at..).unwrap_or_default();
            let Some(c) = rest.chars().next() else {
                return Err(self.error("unterminated string"));
            };
            match c {
                '"' => {
                    self.at += 1;
                    return Ok(out);
                }
                '\\' => {
                    self.at += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error("unterminated escape"));
                    };
                    self.at += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let first = self.hex4()?;
                            let code = match first {
                                0xD800..=0xDBFF => {
                                    if self.text.get(self.at..self.at + 2) != Some("\\u") {
                                        return Err(self.error("lone surrogate"));
                                    }
                                    self.at += 2;
                                    let second = self.hex4()?;
                                    if !(0xDC00..=0xDFFF).contains(&second) {
                                        return Err(self.error("lone surrogate"));
                                    }
                                    0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                                }
                                0xDC00..=0xDFFF => return Err(self.error("lone surrogate")),
                                other => other,
                            };
                            out.push(char::from_u32(code).ok_or_else(|| self.error("bad escape"))?);
                        }
                        _ => return Err(self.error("bad escape")),
                    }
                }
                c if u32::from(c) < 0x20 => {
                    return Err(self.error("control character in a string"));
                }
                c => {
                    out.push(c);
                    self.at += c.len_utf8();
                }
            }
        }
    }
}

/// Builds a [`Value`] with the syntax of `serde_json::json!`: `null`, `true`, `false`, arrays,
/// objects (keys are expressions turned into strings with `Into<String>`) and any expression that
/// converts into a `Value` (strings, integers, `f64`, booleans, values, `Vec`s and `Option`s of
/// them). Numbers keep the text they are given: `json!(Number::from_text("1e400"))`.
#[macro_export]
macro_rules! json {
    ($($json:tt)+) => {
        $crate::json_internal!($($json)+)
    };
}

/// The machinery of [`json!`](crate::json) (adapted from `serde_json::json!`'s token muncher).
#[macro_export]
#[doc(hidden)]
macro_rules! json_internal {
    (@array [$($elems:expr,)*]) => {
        vec![$($elems,)*]
    };
    (@array [$($elems:expr),*]) => {
        vec![$($elems),*]
    };
    (@array [$($elems:expr,)*] null $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!(null)] $($rest)*)
    };
    (@array [$($elems:expr,)*] true $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!(true)] $($rest)*)
    };
    (@array [$($elems:expr,)*] false $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!(false)] $($rest)*)
    };
    (@array [$($elems:expr,)*] [$($array:tt)*] $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!([$($array)*])] $($rest)*)
    };
    (@array [$($elems:expr,)*] {$($map:tt)*} $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!({$($map)*})] $($rest)*)
    };
    (@array [$($elems:expr,)*] $next:expr, $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!($next),] $($rest)*)
    };
    (@array [$($elems:expr,)*] $last:expr) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!($last)])
    };
    (@array [$($elems:expr),*] , $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)*] $($rest)*)
    };

    (@object $object:ident () () ()) => {};
    (@object $object:ident [$($key:tt)+] ($value:expr) , $($rest:tt)*) => {
        let _ = $object.insert(($($key)+).into(), $value);
        $crate::json_internal!(@object $object () ($($rest)*) ($($rest)*));
    };
    (@object $object:ident [$($key:tt)+] ($value:expr)) => {
        let _ = $object.insert(($($key)+).into(), $value);
    };
    (@object $object:ident ($($key:tt)+) (: null $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!(null)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: true $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!(true)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: false $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!(false)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: [$($array:tt)*] $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!([$($array)*])) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: {$($map:tt)*} $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!({$($map)*})) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr , $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!($value)) , $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!($value)));
    };
    (@object $object:ident () (($key:expr) : $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object ($key) (: $($rest)*) (: $($rest)*));
    };
    (@object $object:ident ($($key:tt)*) ($tt:tt $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object ($($key)* $tt) ($($rest)*) ($($rest)*));
    };

    (null) => {
        $crate::reference::json::Value::Null
    };
    (true) => {
        $crate::reference::json::Value::Bool(true)
    };
    (false) => {
        $crate::reference::json::Value::Bool(false)
    };
    ([]) => {
        $crate::reference::json::Value::Array(vec![])
    };
    ([ $($tt:tt)+ ]) => {
        $crate::reference::json::Value::Array($crate::json_internal!(@array [] $($tt)+))
    };
    ({}) => {
        $crate::reference::json::Value::Object($crate::reference::json::Map::new())
    };
    ({ $($tt:tt)+ }) => {
        $crate::reference::json::Value::Object({
            let mut object = $crate::reference::json::Map::new();
            $crate::json_internal!(@object object () ($($tt)+) ($($tt)+));
            object
        })
    };
    ($other:expr) => {
        $crate::reference::json::ToValue::to_value(&$other)
    };
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn reads_and_writes_exactly() {
        let text = r#"{"z":1.50,"a":[1e400,-0,"s\"\u00e9\ud83d\ude00",null,false,{}],"m":{"k":12345678901234567890123}}"#;
        let v = parse(text).unwrap();
        assert_eq!(
            v.to_string(),
            "{\"z\":1.50,\"a\":[1e400,-0,\"s\\\"é😀\",null,false,{}],\"m\":{\"k\":12345678901234567890123}}"
        );
        assert_eq!(v["z"].as_number().unwrap().as_str(), "1.50");
        assert_eq!(v["a"][0].as_f64(), Some(f64::INFINITY));
        assert_eq!(v.as_object().unwrap().keys().next().unwrap(), "z");
        let dup = parse(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(dup.to_string(), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn rejects_what_is_not_json() {
        for bad in [
            "",
            " ",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "-",
            "1e",
            "[1 2]",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\u{1}\"",
            "nul",
            "[",
            "{\"a\"}",
            "1 2",
            "NaN",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(MAX_DEPTH)).is_ok());
        assert!(parse(&deep(MAX_DEPTH + 1)).is_err());
        assert!(parse(&deep(100_000)).is_err());
    }

    #[test]
    fn lossless_reading_keeps_repeated_names_and_reads_deeper() {
        let lossless = ReadOptions {
            max_depth: 1000,
            keep_duplicates: true,
            reject_duplicates: false,
        };
        let text = r#"{"a":1,"b":{"c":2,"c":3},"a":4}"#;
        let v = parse_with(text, lossless).unwrap();
        assert_eq!(v.to_string(), text);
        assert_eq!(v["a"], Value::from(4));
        assert_eq!(v["b"]["c"], Value::from(3));
        let names: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(names, ["a", "b", "a"]);
        // Past the hash index too: the last occurrence is found.
        let many: String = (0..12).map(|i| format!("\"k\":{i},")).collect();
        let v = parse_with(&format!("{{{many}\"z\":0}}"), lossless).unwrap();
        assert_eq!(v.as_object().unwrap().len(), 13);
        assert_eq!(v["k"], Value::from(11));
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse_with(&deep(1000), lossless).is_ok());
        assert!(parse_with(&deep(1001), lossless).is_err());
        assert!(parse(&deep(1000)).is_err());
    }

    #[test]
    fn the_macro_builds_ordered_values() {
        let key = "k";
        let v = crate::json!({"b": [1, 2.5, null, true], key: {"x": "y"}, "a": Number::from_text("1e400")});
        assert_eq!(
            v.to_string(),
            r#"{"b":[1,2.5,null,true],"k":{"x":"y"},"a":1e400}"#
        );
        assert_eq!(crate::json!(5.0).to_string(), "5.0");
        assert_eq!(crate::json!([]).to_string(), "[]");
    }
}

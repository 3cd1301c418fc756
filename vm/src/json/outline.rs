//! The top level of a JSON document, member by member, without building a tree.
//!
//! [`outline`] reads the start of a document and tells what its top-level value is. For an
//! object it gives the members one at a time ([`Members`]), for an array the elements
//! ([`Elements`]): each value as its exact source text ([`RawValue`]), checked against the
//! grammar but not kept. A caller that has seen enough (a member name that tells it what the
//! document is) stops there and pays nothing for the rest; one that reads to the end has checked
//! the whole document, as [`super::validate`] would (lone surrogate escapes are accepted and
//! decoded as U+FFFD, as in every message).
//!
//! ```
//! use filtervm_vm::json::{self, Outline, RawKind};
//! let Outline::Object(mut members) = json::outline(br#"{"Message": "hi", "n": 1.50}"#).unwrap()
//! else { unreachable!() };
//! let (name, value) = members.next().unwrap().unwrap();
//! assert_eq!((&*name.decode(), value.kind()), ("Message", RawKind::String));
//! assert_eq!(value.as_str().as_deref(), Some("hi"));
//! let (_, n) = members.next().unwrap().unwrap();
//! assert_eq!(n.text(), b"1.50");
//! assert!(members.next().is_none());
//! ```

use super::error::Error;
use super::read::{Event, LoneSurrogates, ReadMode, Reader, Str};
use std::borrow::Cow;

/// What a JSON document's top-level value is, with a reader positioned inside it.
#[derive(Debug)]
pub enum Outline<'a> {
    /// An object: its members follow.
    Object(Members<'a>),
    /// An array: its elements follow.
    Array(Elements<'a>),
    /// A string, number, `true`, `false` or `null`: the whole document, checked.
    Scalar(RawValue<'a>),
}

/// Starts reading `input` (one JSON document): an error when it does not start with a value,
/// or, for a scalar, when it is not one valid JSON document.
pub fn outline(input: &[u8]) -> Result<Outline<'_>, Error> {
    outline_with(input, ReadMode::Validating)
}

/// [`outline`], skipping the values no caller reads (those passed over by
/// [`Members::next_name`]) and what follows the last one read as `mode` says: in
/// [`ReadMode::Trusted`] by their structure alone, unchecked. The top level's own structure, the
/// names, and every value read are checked in both modes.
pub fn outline_with(input: &[u8], mode: ReadMode) -> Result<Outline<'_>, Error> {
    let mut reader = Reader::new(input, LoneSurrogates::Replace).with_mode(mode);
    let start = skip_white_space(input, 0);
    match reader.next()? {
        Event::ObjectStart => Ok(Outline::Object(Members {
            input,
            reader,
            done: false,
            value_due: false,
        })),
        Event::ArrayStart => Ok(Outline::Array(Elements {
            input,
            reader,
            done: false,
        })),
        event => {
            let value = finish_value(input, &mut reader, start, event)?;
            reader.finish()?;
            Ok(Outline::Scalar(value))
        }
    }
}

/// The members of a top-level object, in document order: each name and its value. After the
/// last member the rest of the input is checked (white space only); an error ends the
/// iteration. [`Members::next_name`] and [`Members::value`] read a member in two steps, so that a
/// caller can stop at a name without reading its value.
#[derive(Debug)]
pub struct Members<'a> {
    input: &'a [u8],
    reader: Reader<'a>,
    done: bool,
    /// A name was read and its value not yet.
    value_due: bool,
}

impl<'a> Iterator for Members<'a> {
    type Item = Result<(Name<'a>, RawValue<'a>), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let member = match self.next_name() {
            Ok(Some(name)) => self.value().map(|value| (name, value)),
            Ok(None) => return None,
            Err(e) => Err(e),
        };
        Some(member)
    }
}

impl<'a> Members<'a> {
    /// The next member's name (`None` after the last member, the rest of the input checked);
    /// its value is read next, by [`Members::value`] (or by the next call, which skips it).
    pub fn next_name(&mut self) -> Result<Option<Name<'a>>, Error> {
        if self.done {
            return Ok(None);
        }
        let read = self.name();
        if !matches!(read, Ok(Some(_))) {
            self.done = true;
        }
        read
    }

    fn name(&mut self) -> Result<Option<Name<'a>>, Error> {
        if self.value_due {
            // The previous member's value was not read: skip it.
            self.reader.skip_to(self.reader.depth())?;
            self.value_due = false;
        }
        match self.reader.next()? {
            Event::Name(name) => {
                self.value_due = true;
                Ok(Some(Name(name)))
            }
            _ => {
                // The object's end: nothing may follow it.
                self.reader.finish()?;
                Ok(None)
            }
        }
    }

    /// The value of the member whose name [`Members::next_name`] just gave.
    pub fn value(&mut self) -> Result<RawValue<'a>, Error> {
        self.value_due = false;
        let start = skip_white_space(self.input, self.reader.offset());
        let read = self
            .reader
            .next()
            .and_then(|event| finish_value(self.input, &mut self.reader, start, event));
        if read.is_err() {
            self.done = true;
        }
        read
    }
}

/// A member name, checked against the grammar; its escapes are decoded only on request.
#[derive(Debug, Clone, Copy)]
pub struct Name<'a>(Str<'a>);

impl<'a> Name<'a> {
    /// The name as written between its quotes (escapes not decoded).
    pub fn raw(&self) -> &'a [u8] {
        self.0.raw
    }

    /// Whether the name is written with escapes (then [`Name::raw`] is not its value).
    pub fn is_escaped(&self) -> bool {
        self.0.escaped
    }

    /// The name, escapes decoded (borrowed when it has none).
    pub fn decode(&self) -> Cow<'a, str> {
        decoded(self.0)
    }
}

/// The elements of a top-level array, in document order. After the last element the rest of
/// the input is checked (white space only); an error ends the iteration.
#[derive(Debug)]
pub struct Elements<'a> {
    input: &'a [u8],
    reader: Reader<'a>,
    done: bool,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<RawValue<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let result = self.element();
        if !matches!(result, Ok(Some(_))) {
            self.done = true;
        }
        result.transpose()
    }
}

impl<'a> Elements<'a> {
    fn element(&mut self) -> Result<Option<RawValue<'a>>, Error> {
        let start = skip_white_space(self.input, self.reader.offset());
        // After `[` or an element: `,` and white space come before the next element's text.
        let start = match self.input.get(start) {
            Some(b',') => skip_white_space(self.input, start + 1),
            _ => start,
        };
        match self.reader.next()? {
            Event::ArrayEnd => {
                self.reader.finish()?;
                Ok(None)
            }
            event => finish_value(self.input, &mut self.reader, start, event).map(Some),
        }
    }
}

/// The kind of a [`RawValue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RawKind {
    /// An object.
    Object,
    /// An array.
    Array,
    /// A string.
    String,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

/// One value of a document as its exact source text, checked against the grammar.
#[derive(Debug, Clone, Copy)]
pub struct RawValue<'a> {
    text: &'a [u8],
    offset: usize,
    kind: RawKind,
    /// A string value, to decode on request.
    string: Option<Str<'a>>,
}

impl<'a> RawValue<'a> {
    /// The value's text as written (a string with its quotes and escapes).
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// The byte offset of the value's first byte in the document.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What kind of value it is.
    pub fn kind(&self) -> RawKind {
        self.kind
    }

    /// A string's value, escapes decoded (borrowed when it has none; a lone surrogate escape
    /// reads as U+FFFD); `None` for any other kind.
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        self.string.map(decoded)
    }
}

/// A string's value: borrowed when it has no escapes.
fn decoded(s: Str<'_>) -> Cow<'_, str> {
    if s.escaped {
        Cow::Owned(s.to_owned_string())
    } else {
        Cow::Borrowed(s.raw_text())
    }
}

/// The offset of the first byte at or after `pos` that is not JSON white space.
fn skip_white_space(input: &[u8], mut pos: usize) -> usize {
    while input
        .get(pos)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        pos += 1;
    }
    pos
}

/// Completes the value that `event` (just read, starting at `start`) begins: a container is
/// read to its end, checked and kept nowhere.
fn finish_value<'a>(
    input: &'a [u8],
    reader: &mut Reader<'a>,
    start: usize,
    event: Event<'a>,
) -> Result<RawValue<'a>, Error> {
    let (kind, string) = match event {
        Event::ObjectStart | Event::ArrayStart => {
            reader.skip_to(reader.depth() - 1)?;
            let kind = if matches!(event, Event::ObjectStart) {
                RawKind::Object
            } else {
                RawKind::Array
            };
            (kind, None)
        }
        Event::String(s) => (RawKind::String, Some(s)),
        Event::Number(_) => (RawKind::Number, None),
        Event::Bool(_) => (RawKind::Bool, None),
        // `Reader::next` returns only values where a value is due; `null` is the one left.
        _ => (RawKind::Null, None),
    };
    Ok(RawValue {
        text: input.get(start..reader.offset()).unwrap_or_default(),
        offset: start,
        kind,
        string,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::ErrorKind;

    fn members(input: &str) -> Result<Vec<(String, String, RawKind)>, ErrorKind> {
        let Outline::Object(members) = outline(input.as_bytes()).map_err(|e| e.kind())? else {
            panic!("{input}: not an object");
        };
        members
            .map(|m| {
                m.map(|(name, value)| {
                    (
                        name.decode().into_owned(),
                        String::from_utf8(value.text().to_vec()).unwrap(),
                        value.kind(),
                    )
                })
                .map_err(|e| e.kind())
            })
            .collect()
    }

    fn elements(input: &str) -> Result<Vec<String>, ErrorKind> {
        let Outline::Array(elements) = outline(input.as_bytes()).map_err(|e| e.kind())? else {
            panic!("{input}: not an array");
        };
        elements
            .map(|e| {
                e.map(|v| String::from_utf8(v.text().to_vec()).unwrap())
                    .map_err(|e| e.kind())
            })
            .collect()
    }

    #[test]
    fn members_are_their_exact_text() {
        let got = members(
            " {\"a\" : 1.50 ,\"b\\u0041\":{\"x\": [1, {}]}, \"c\":\"t\\n\", \"d\": [ ] ,\"e\":null,\"f\":true} \n",
        )
        .unwrap();
        let want = [
            ("a", "1.50", RawKind::Number),
            ("bA", r#"{"x": [1, {}]}"#, RawKind::Object),
            ("c", r#""t\n""#, RawKind::String),
            ("d", "[ ]", RawKind::Array),
            ("e", "null", RawKind::Null),
            ("f", "true", RawKind::Bool),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(n, t, k)| (n.to_string(), t.to_string(), *k))
            .collect();
        assert_eq!(got, want);
        assert_eq!(members("{}").unwrap(), []);
    }

    #[test]
    fn elements_are_their_exact_text() {
        assert_eq!(
            elements(r#"[ {"a": 1} ,2,"x" , [3]]"#).unwrap(),
            [r#"{"a": 1}"#, "2", r#""x""#, "[3]"]
        );
        assert_eq!(elements("[]").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn strings_decode_on_request() {
        let Outline::Scalar(s) = outline(br#""a\"b\ud800""#).unwrap() else {
            panic!("scalar")
        };
        assert_eq!(s.as_str().as_deref(), Some("a\"b\u{FFFD}"));
        let Outline::Scalar(n) = outline(b" 1e400 ").unwrap() else {
            panic!("scalar")
        };
        assert_eq!((n.text(), n.as_str()), (&b"1e400"[..], None));
    }

    #[test]
    fn reading_to_the_end_checks_the_whole_document() {
        assert_eq!(members(r#"{"a": 1} x"#), Err(ErrorKind::TrailingCharacters));
        assert_eq!(
            members(r#"{"a": [1,]}"#),
            Err(ErrorKind::UnexpectedCharacter)
        );
        assert_eq!(members(r#"{"a": 1"#), Err(ErrorKind::UnexpectedEnd));
        assert_eq!(elements("[1, 2"), Err(ErrorKind::UnexpectedEnd));
        assert_eq!(elements("[1] 2"), Err(ErrorKind::TrailingCharacters));
        assert_eq!(
            outline(b"\"a\" 2").unwrap_err().kind(),
            ErrorKind::TrailingCharacters
        );
        assert_eq!(outline(b"").unwrap_err().kind(), ErrorKind::UnexpectedEnd);
        // Deep values are skipped without recursion.
        let deep = format!(
            r#"{{"a": {}1{}, "b": 2}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let got = members(&deep).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].1, "2");
    }

    #[test]
    fn a_member_read_in_two_steps_or_skipped() {
        let Outline::Object(mut m) = outline(br#"{"a\u0062": [1, {"x": 2}], "c": 3}"#).unwrap()
        else {
            panic!("object")
        };
        let name = m.next_name().unwrap().unwrap();
        assert_eq!((name.raw(), name.is_escaped()), (&br"a\u0062"[..], true));
        assert_eq!(name.decode(), "ab");
        // The value not read: the next name skips it.
        let name = m.next_name().unwrap().unwrap();
        assert_eq!(name.raw(), b"c");
        assert_eq!(m.value().unwrap().text(), b"3");
        assert!(m.next_name().unwrap().is_none());
        let Outline::Object(mut m) = outline(br#"{"a": [1,, "b": 2}"#).unwrap() else {
            panic!("object")
        };
        assert!(m.next_name().unwrap().is_some());
        assert!(m.next_name().is_err());
    }

    #[test]
    fn a_caller_may_stop_early() {
        // Only what was read is checked: the first member, then the caller stops.
        let Outline::Object(mut m) = outline(br#"{"a": 1, oops"#).unwrap() else {
            panic!("object")
        };
        assert!(m.next().unwrap().is_ok());
        assert!(m.next().unwrap().is_err());
        assert!(m.next().is_none());
    }
}

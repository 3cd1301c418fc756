//! The reader: one validating pass over JSON text as a stream of events, with a fast skip.
//!
//! The reader never recurses: open arrays and objects are one bit each on a [`BitStack`] (the
//! first 64 levels without allocating), so any depth is read in time linear in the input and
//! memory of one bit per level. The whole input is checked to be UTF-8 once, up front, by the
//! standard library; the reader then works on the valid prefix and reports the first invalid byte
//! only when it reaches it, so errors come in document order.

use super::error::{Detail, Error, ErrorKind};

/// What the reader does with a `\u` escape of a UTF-16 surrogate that is not half of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoneSurrogates {
    /// An error of kind [`ErrorKind::LoneSurrogate`] (policies, like `serde_json`).
    #[default]
    Reject,
    /// Accepted, and decoded as U+FFFD REPLACEMENT CHARACTER (messages).
    Replace,
}

/// A stack of bits, one per open container (`true` = object).
#[derive(Debug, Clone, Default)]
pub(crate) struct BitStack {
    /// The first 64 levels.
    low: u64,
    /// Levels 64 and deeper, 64 per word.
    high: Vec<u64>,
    len: usize,
}

impl BitStack {
    #[inline]
    fn push(&mut self, object: bool) {
        let bit = self.len % 64;
        if self.len < 64 {
            self.low = (self.low & !(1 << bit)) | (u64::from(object) << bit);
        } else {
            let word = self.len / 64 - 1;
            if word == self.high.len() {
                self.high.push(0);
            }
            if let Some(w) = self.high.get_mut(word) {
                *w = (*w & !(1 << bit)) | (u64::from(object) << bit);
            }
        }
        self.len += 1;
    }

    /// The top bit, if any.
    #[inline]
    fn top(&self) -> Option<bool> {
        let top = self.len.checked_sub(1)?;
        let word = if top < 64 {
            self.low
        } else {
            self.high.get(top / 64 - 1).copied().unwrap_or(0)
        };
        Some(word >> (top % 64) & 1 == 1)
    }

    #[inline]
    fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// The number of open containers.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

/// A string as written between its quotes, validated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Str<'a> {
    /// The text between the quotes, escapes as written.
    pub(crate) raw: &'a str,
    /// Whether `raw` contains a backslash (and so differs from the string's value).
    pub(crate) escaped: bool,
    /// The byte offset of the opening quote.
    pub(crate) offset: usize,
}

impl<'a> Str<'a> {
    /// The string's value appended to `out` (escapes decoded).
    pub(crate) fn unescape_into(&self, out: &mut String) {
        if self.escaped {
            unescape(self.raw, out);
        } else {
            out.push_str(self.raw);
        }
    }

    /// The string's value as an owned `String`.
    pub(crate) fn to_owned_string(self) -> String {
        if self.escaped {
            let mut out = String::with_capacity(self.raw.len());
            unescape(self.raw, &mut out);
            out
        } else {
            self.raw.to_owned()
        }
    }
}

/// One step of the reader.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event<'a> {
    /// `{`.
    ObjectStart,
    /// `}`.
    ObjectEnd,
    /// `[`.
    ArrayStart,
    /// `]`.
    ArrayEnd,
    /// A member name (its `:` already read); the member's value comes next.
    Name(Str<'a>),
    /// A string value.
    String(Str<'a>),
    /// A number value: its text, validated against the grammar.
    Number(&'a str),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// The end of the input, after the complete value and white space only.
    End,
}

/// What the grammar allows next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (at the start, after `:`, after `,` in an array).
    Value,
    /// A value or `]` (right after `[`).
    FirstElement,
    /// A member name or `}` (right after `{`).
    FirstMember,
    /// `,` or the container's end; at the top level, the end of the input.
    AfterValue,
    /// Nothing: [`Event::End`] was returned.
    Done,
}

/// The validating pull reader.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    /// The input's valid UTF-8 prefix (the whole input when it is valid).
    text: &'a str,
    /// `text` as bytes.
    bytes: &'a [u8],
    /// The offset of the first byte that is not UTF-8 (== `bytes.len()`), if any.
    bad_utf8: Option<usize>,
    pos: usize,
    expect: Expect,
    stack: BitStack,
    lone: LoneSurrogates,
    /// Whether the last string read had escapes.
    escaped: bool,
}

/// The ASCII white space JSON allows between tokens.
#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The index of the first `"`, `\` or control byte (below 0x20) at or after `from`, or
/// `bytes.len()`. Eight bytes a step: a byte of a word is flagged by carry-free bit tricks, and the
/// lowest flag is always a real match (a false flag can only sit above a real one).
#[inline]
fn find_string_special(bytes: &[u8], from: usize) -> usize {
    let rest = bytes.get(from..).unwrap_or_default();
    let mut chunks = rest.chunks_exact(8);
    let mut at = from;
    for chunk in &mut chunks {
        let w = <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes);
        let quote = w ^ (LO * u64::from(b'"'));
        let backslash = w ^ (LO * u64::from(b'\\'));
        let flags = ((quote.wrapping_sub(LO) & !quote)
            | (backslash.wrapping_sub(LO) & !backslash)
            | (w.wrapping_sub(LO * 0x20) & !w))
            & HI;
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    for &b in chunks.remainder() {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

/// The index after the ASCII digits starting at `from`.
#[inline]
fn digits_end(bytes: &[u8], from: usize) -> usize {
    from + bytes
        .get(from..)
        .map_or(0, |r| r.iter().take_while(|b| b.is_ascii_digit()).count())
}

/// The value of four hex digits.
#[inline]
fn hex4(digits: Option<&[u8]>) -> Option<u16> {
    let digits = digits?;
    if digits.len() != 4 {
        return None;
    }
    digits.iter().try_fold(0u16, |n, &d| {
        let v = char::from(d).to_digit(16)?;
        Some(n << 4 | u16::try_from(v).ok()?)
    })
}

fn is_high_surrogate(unit: u16) -> bool {
    (0xD800..=0xDBFF).contains(&unit)
}

fn is_low_surrogate(unit: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&unit)
}

/// Decodes the escapes of validated string text `raw` into `out`. A lone surrogate becomes
/// U+FFFD (the reader has already rejected it where that is the rule).
pub(crate) fn unescape(raw: &str, out: &mut String) {
    let mut rest = raw;
    while let Some(k) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(rest.get(..k).unwrap_or_default());
        let escape = rest.get(k + 1..).unwrap_or_default();
        let bytes = escape.as_bytes();
        let (decoded, used) = match bytes.first() {
            Some(b'"') => ('"', 1),
            Some(b'\\') => ('\\', 1),
            Some(b'/') => ('/', 1),
            Some(b'b') => ('\u{8}', 1),
            Some(b'f') => ('\u{c}', 1),
            Some(b'n') => ('\n', 1),
            Some(b'r') => ('\r', 1),
            Some(b't') => ('\t', 1),
            Some(b'u') => match hex4(bytes.get(1..5)) {
                Some(high) if is_high_surrogate(high) => {
                    let low = (bytes.get(5..7) == Some(b"\\u"))
                        .then(|| hex4(bytes.get(7..11)))
                        .flatten()
                        .filter(|&low| is_low_surrogate(low));
                    match low {
                        Some(low) => {
                            let c = 0x1_0000
                                + ((u32::from(high) - 0xD800) << 10)
                                + (u32::from(low) - 0xDC00);
                            (char::from_u32(c).unwrap_or('\u{FFFD}'), 11)
                        }
                        None => ('\u{FFFD}', 5),
                    }
                }
                Some(unit) => (char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}'), 5),
                None => ('\u{FFFD}', 1),
            },
            _ => ('\u{FFFD}', 1),
        };
        out.push(decoded);
        rest = escape.get(used..).unwrap_or_default();
    }
    out.push_str(rest);
}

impl<'a> Reader<'a> {
    /// A reader of `input`, treating lone surrogate escapes as `lone` says.
    pub(crate) fn new(input: &'a [u8], lone: LoneSurrogates) -> Reader<'a> {
        Reader::with_stack(input, lone, BitStack::default())
    }

    /// Like [`Reader::new`], reusing `stack`'s memory.
    pub(crate) fn with_stack(
        input: &'a [u8],
        lone: LoneSurrogates,
        mut stack: BitStack,
    ) -> Reader<'a> {
        stack.clear();
        let (text, bad_utf8) = match std::str::from_utf8(input) {
            Ok(text) => (text, None),
            Err(e) => {
                let valid = e.valid_up_to();
                let text = input
                    .get(..valid)
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .unwrap_or_default();
                (text, Some(valid))
            }
        };
        Reader {
            text,
            bytes: text.as_bytes(),
            bad_utf8,
            pos: 0,
            expect: Expect::Value,
            stack,
            lone,
            escaped: false,
        }
    }

    /// The stack, for reuse by the next reader.
    pub(crate) fn into_stack(self) -> BitStack {
        self.stack
    }

    /// The number of open arrays and objects.
    #[inline]
    pub(crate) fn depth(&self) -> usize {
        self.stack.len()
    }

    /// The offset of the next byte to read (after the last event).
    #[inline]
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    /// The next byte that is not white space (`None` at the end of the valid text).
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        loop {
            let b = *self.bytes.get(self.pos)?;
            if b > b' ' || !is_ws(b) {
                return Some(b);
            }
            self.pos += 1;
        }
    }

    /// The error for finding what is at `self.pos` where `expected` should be.
    #[cold]
    fn unexpected(&self, expected: &'static str) -> Error {
        match self.text.get(self.pos..).and_then(|t| t.chars().next()) {
            Some(c) => Error::new(
                ErrorKind::UnexpectedCharacter,
                self.pos,
                Detail::Found(Some(c), expected),
            ),
            None => self.at_end(expected, false),
        }
    }

    /// The error for reaching the end of the valid text while `expected` should come: the input
    /// ended, or an invalid UTF-8 byte stands there.
    #[cold]
    fn at_end(&self, expected: &'static str, in_string: bool) -> Error {
        match self.bad_utf8 {
            Some(at) => Error::new(ErrorKind::InvalidUtf8, at, Detail::Utf8 { in_string }),
            None => Error::new(
                ErrorKind::UnexpectedEnd,
                self.bytes.len(),
                Detail::Found(None, expected),
            ),
        }
    }

    /// Reads the next event.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Result<Event<'a>, Error> {
        let b = self.peek();
        match self.expect {
            Expect::Value => self.value(b),
            Expect::AfterValue => self.after_value(b),
            Expect::FirstMember => {
                if b == Some(b'}') {
                    self.pos += 1;
                    self.stack.pop();
                    self.expect = Expect::AfterValue;
                    return Ok(Event::ObjectEnd);
                }
                self.name(b, "a member name or `}`")
            }
            Expect::FirstElement => {
                if b == Some(b']') {
                    self.pos += 1;
                    self.stack.pop();
                    self.expect = Expect::AfterValue;
                    return Ok(Event::ArrayEnd);
                }
                self.value(b)
            }
            Expect::Done => Ok(Event::End),
        }
    }

    #[inline(always)]
    fn after_value(&mut self, b: Option<u8>) -> Result<Event<'a>, Error> {
        match (self.stack.top(), b) {
            (Some(true), Some(b',')) => {
                self.pos += 1;
                let b = self.peek();
                self.name(b, "a member name")
            }
            (Some(false), Some(b',')) => {
                self.pos += 1;
                let b = self.peek();
                self.value(b)
            }
            (Some(true), Some(b'}')) => {
                self.pos += 1;
                self.stack.pop();
                Ok(Event::ObjectEnd)
            }
            (Some(false), Some(b']')) => {
                self.pos += 1;
                self.stack.pop();
                Ok(Event::ArrayEnd)
            }
            (Some(true), _) => Err(self.unexpected("`,` or `}`")),
            (Some(false), _) => Err(self.unexpected("`,` or `]`")),
            (None, None) => match self.bad_utf8 {
                Some(at) => Err(Error::new(
                    ErrorKind::InvalidUtf8,
                    at,
                    Detail::Utf8 { in_string: false },
                )),
                None => {
                    self.expect = Expect::Done;
                    Ok(Event::End)
                }
            },
            (None, Some(_)) => {
                let found = self.text.get(self.pos..).and_then(|t| t.chars().next());
                Err(Error::new(
                    ErrorKind::TrailingCharacters,
                    self.pos,
                    Detail::Found(found, "the end of the input"),
                ))
            }
        }
    }

    /// Reads a member name and its `:` (`b` is the next byte).
    #[inline(always)]
    fn name(&mut self, b: Option<u8>, expected: &'static str) -> Result<Event<'a>, Error> {
        if b != Some(b'"') {
            return Err(self.unexpected(expected));
        }
        let name = self.string()?;
        if self.peek() != Some(b':') {
            return Err(self.unexpected("`:`"));
        }
        self.pos += 1;
        self.expect = Expect::Value;
        Ok(Event::Name(name))
    }

    /// Reads a value (`b` is its first byte).
    #[inline(always)]
    fn value(&mut self, b: Option<u8>) -> Result<Event<'a>, Error> {
        let event = match b {
            Some(b'"') => Event::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => Event::Number(self.number()?),
            Some(b'{') => {
                self.pos += 1;
                self.stack.push(true);
                self.expect = Expect::FirstMember;
                return Ok(Event::ObjectStart);
            }
            Some(b'[') => {
                self.pos += 1;
                self.stack.push(false);
                self.expect = Expect::FirstElement;
                return Ok(Event::ArrayStart);
            }
            Some(b't') => self.literal("true", Event::Bool(true))?,
            Some(b'f') => self.literal("false", Event::Bool(false))?,
            Some(b'n') => self.literal("null", Event::Null)?,
            _ => return Err(self.unexpected("a value")),
        };
        self.expect = Expect::AfterValue;
        Ok(event)
    }

    fn literal(&mut self, word: &'static str, event: Event<'a>) -> Result<Event<'a>, Error> {
        let end = self.pos + word.len();
        if self.bytes.get(self.pos..end) == Some(word.as_bytes()) {
            self.pos = end;
            Ok(event)
        } else {
            Err(Error::new(
                ErrorKind::InvalidLiteral,
                self.pos,
                Detail::Literal(word),
            ))
        }
    }

    /// Reads a number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (RFC 8259 §6).
    fn number(&mut self) -> Result<&'a str, Error> {
        let bytes = self.bytes;
        let start = self.pos;
        let mut i = start;
        let bad = |at: usize, expected: &'static str| {
            Error::new(ErrorKind::InvalidNumber, at, Detail::Number(expected))
        };
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        match bytes.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits_end(bytes, i + 1),
            _ => return Err(bad(i, "a digit")),
        }
        if bytes.get(i) == Some(&b'.') {
            let end = digits_end(bytes, i + 1);
            if end == i + 1 {
                return Err(bad(end, "a digit after `.`"));
            }
            i = end;
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let end = digits_end(bytes, i);
            if end == i {
                return Err(bad(end, "a digit in the exponent"));
            }
            i = end;
        }
        // Text that runs on where the grammar stopped (`01`, `1.2.3`, `1x`) is a bad number
        // rather than two tokens.
        if let Some(&b) = bytes.get(i)
            && (b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-' | b'_'))
        {
            let expected =
                if bytes.get(start..i) == Some(b"0") || bytes.get(start..i) == Some(b"-0") {
                    "no digit after a leading `0`"
                } else {
                    "the end of the number"
                };
            return Err(bad(i, expected));
        }
        self.pos = i;
        self.text
            .get(start..i)
            .ok_or_else(|| bad(start, "a number"))
    }

    /// Reads a string (`self.pos` is at its opening quote).
    #[inline(always)]
    fn string(&mut self) -> Result<Str<'a>, Error> {
        let open = self.pos;
        let close = self.string_end()?;
        let escaped = self.escaped;
        let raw = self.text.get(open + 1..close).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidUtf8,
                open + 1,
                Detail::Utf8 { in_string: true },
            )
        })?;
        Ok(Str {
            raw,
            escaped,
            offset: open,
        })
    }

    /// Checks the string whose opening quote is at `self.pos` and moves past it; returns the
    /// offset of its closing quote (and sets `self.escaped`). Returns one word, in registers.
    #[inline(always)]
    fn string_end(&mut self) -> Result<usize, Error> {
        let mut i = self.pos + 1;
        self.escaped = false;
        loop {
            i = find_string_special(self.bytes, i);
            match self.bytes.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(i);
                }
                Some(b'\\') => {
                    self.escaped = true;
                    i = self.escape(i)?;
                }
                Some(&c) => {
                    return Err(Error::new(
                        ErrorKind::ControlCharacter,
                        i,
                        Detail::Control(c),
                    ));
                }
                None => {
                    self.pos = i;
                    return Err(self.at_end("`\"` to close the string", true));
                }
            }
        }
    }

    /// Checks the escape whose backslash is at `at`; returns the offset after it.
    fn escape(&mut self, at: usize) -> Result<usize, Error> {
        let bytes = self.bytes;
        match bytes.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
            Some(b'u') => {
                let Some(unit) = hex4(bytes.get(at + 2..at + 6)) else {
                    let after = bytes.get(at + 2..).unwrap_or_default();
                    let hex = after.iter().take(4).take_while(|b| b.is_ascii_hexdigit());
                    if hex.count() == after.len() {
                        self.pos = bytes.len();
                        return Err(self.at_end("four hex digits after `\\u`", true));
                    }
                    return Err(Error::new(
                        ErrorKind::InvalidEscape,
                        at,
                        Detail::Escape(None),
                    ));
                };
                if !is_high_surrogate(unit) && !is_low_surrogate(unit) {
                    return Ok(at + 6);
                }
                if is_high_surrogate(unit)
                    && bytes.get(at + 6..at + 8) == Some(b"\\u")
                    && hex4(bytes.get(at + 8..at + 12)).is_some_and(is_low_surrogate)
                {
                    return Ok(at + 12);
                }
                match self.lone {
                    LoneSurrogates::Replace => Ok(at + 6),
                    LoneSurrogates::Reject => Err(Error::new(
                        ErrorKind::LoneSurrogate,
                        at,
                        Detail::Surrogate(unit),
                    )),
                }
            }
            Some(_) => {
                let c = self.text.get(at + 1..).and_then(|t| t.chars().next());
                Err(Error::new(ErrorKind::InvalidEscape, at, Detail::Escape(c)))
            }
            None => {
                self.pos = bytes.len();
                Err(self.at_end("an escape after `\\`", true))
            }
        }
    }

    /// Reads and checks the input until the stack is back to `depth` open containers with a value
    /// complete, keeping nothing: after a member name (or at the start), `skip_to(self.depth())`
    /// skips the value; right after [`Event::ObjectStart`] or [`Event::ArrayStart`],
    /// `skip_to(self.depth() - 1)` skips the rest of that container.
    ///
    /// The same grammar as [`Reader::next`], without building events: this loop is where a
    /// message reader spends most of its time.
    pub(crate) fn skip_to(&mut self, depth: usize) -> Result<(), Error> {
        loop {
            let b = self.peek();
            match self.expect {
                Expect::Value | Expect::FirstElement => {
                    match b {
                        Some(b'"') => {
                            self.string_end()?;
                        }
                        Some(b'-' | b'0'..=b'9') => {
                            self.number()?;
                        }
                        Some(b'{') => {
                            self.pos += 1;
                            self.stack.push(true);
                            self.expect = Expect::FirstMember;
                            continue;
                        }
                        Some(b'[') => {
                            self.pos += 1;
                            self.stack.push(false);
                            self.expect = Expect::FirstElement;
                            continue;
                        }
                        Some(b']') if self.expect == Expect::FirstElement => {
                            self.pos += 1;
                            self.stack.pop();
                        }
                        Some(b't') => {
                            self.literal("true", Event::Bool(true))?;
                        }
                        Some(b'f') => {
                            self.literal("false", Event::Bool(false))?;
                        }
                        Some(b'n') => {
                            self.literal("null", Event::Null)?;
                        }
                        _ => return Err(self.unexpected("a value")),
                    }
                    self.expect = Expect::AfterValue;
                }
                Expect::FirstMember => match b {
                    Some(b'}') => {
                        self.pos += 1;
                        self.stack.pop();
                        self.expect = Expect::AfterValue;
                    }
                    _ => {
                        self.skip_name(b, "a member name or `}`")?;
                        continue;
                    }
                },
                Expect::AfterValue => match (self.stack.top(), b) {
                    (Some(true), Some(b',')) => {
                        self.pos += 1;
                        let b = self.peek();
                        self.skip_name(b, "a member name")?;
                        continue;
                    }
                    (Some(false), Some(b',')) => {
                        self.pos += 1;
                        self.expect = Expect::Value;
                        continue;
                    }
                    (Some(true), Some(b'}')) | (Some(false), Some(b']')) => {
                        self.pos += 1;
                        self.stack.pop();
                    }
                    (None, _) => return Ok(()),
                    (Some(true), _) => return Err(self.unexpected("`,` or `}`")),
                    (Some(false), _) => return Err(self.unexpected("`,` or `]`")),
                },
                Expect::Done => return Ok(()),
            }
            if self.stack.len() <= depth {
                return Ok(());
            }
        }
    }

    /// Checks a member name and its `:` without keeping the name (`b` is the next byte).
    #[inline(always)]
    fn skip_name(&mut self, b: Option<u8>, expected: &'static str) -> Result<(), Error> {
        if b != Some(b'"') {
            return Err(self.unexpected(expected));
        }
        self.string_end()?;
        if self.peek() != Some(b':') {
            return Err(self.unexpected("`:`"));
        }
        self.pos += 1;
        self.expect = Expect::Value;
        Ok(())
    }

    /// Reads the rest of the input: the end, after white space only.
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        self.skip_to(0)?;
        match self.next()? {
            Event::End => Ok(()),
            _ => Err(self.unexpected("the end of the input")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &str) -> Result<Vec<String>, Error> {
        let mut r = Reader::new(input.as_bytes(), LoneSurrogates::Reject);
        let mut out = Vec::new();
        loop {
            let e = r.next()?;
            out.push(match e {
                Event::ObjectStart => "{".to_owned(),
                Event::ObjectEnd => "}".to_owned(),
                Event::ArrayStart => "[".to_owned(),
                Event::ArrayEnd => "]".to_owned(),
                Event::Name(s) => format!("{}:", s.to_owned_string()),
                Event::String(s) => format!("s{}", s.to_owned_string()),
                Event::Number(n) => format!("n{n}"),
                Event::Bool(b) => b.to_string(),
                Event::Null => "null".to_owned(),
                Event::End => return Ok(out),
            });
        }
    }

    #[test]
    fn events_of_a_document() {
        assert_eq!(
            events(r#" {"a": [1, -2.5e3, "x\n"], "b": {}, "c": [], "d": null, "e": true} "#)
                .unwrap(),
            [
                "{", "a:", "[", "n1", "n-2.5e3", "sx\n", "]", "b:", "{", "}", "c:", "[", "]", "d:",
                "null", "e:", "true", "}"
            ]
        );
    }

    #[test]
    fn swar_scan_finds_the_first_special_byte() {
        for len in 0..40 {
            for special in [b'"', b'\\', 0x1f, 0x00] {
                for at in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    // High bytes and bytes just above the special ones must not be flagged.
                    for (i, b) in bytes.iter_mut().enumerate() {
                        *b = [b'a', 0x80, 0xff, b'#', b']', 0x20, 0x21][i % 7];
                    }
                    if at < len {
                        bytes[at] = special;
                    }
                    assert_eq!(find_string_special(&bytes, 0), at, "{len} {special} {at}");
                }
            }
        }
    }

    #[test]
    fn bit_stack_beyond_one_word() {
        let mut s = BitStack::default();
        for i in 0..200 {
            s.push(i % 3 == 0);
        }
        for i in (0..200).rev() {
            assert_eq!(s.top(), Some(i % 3 == 0));
            s.pop();
        }
        assert_eq!(s.top(), None);
    }

    #[test]
    fn skip_to_skips_one_value_or_the_rest_of_a_container() {
        let input = br#"{"a": [1, {"x": [2]}], "b": 3}"#;
        let mut r = Reader::new(input, LoneSurrogates::Reject);
        assert!(matches!(r.next().unwrap(), Event::ObjectStart));
        assert!(matches!(r.next().unwrap(), Event::Name(n) if n.raw == "a"));
        r.skip_to(r.depth()).unwrap();
        assert!(matches!(r.next().unwrap(), Event::Name(n) if n.raw == "b"));
        assert!(matches!(r.next().unwrap(), Event::Number("3")));
        assert!(matches!(r.next().unwrap(), Event::ObjectEnd));
        assert!(matches!(r.next().unwrap(), Event::End));
        let mut r = Reader::new(input, LoneSurrogates::Reject);
        assert!(matches!(r.next().unwrap(), Event::ObjectStart));
        r.skip_to(r.depth() - 1).unwrap();
        assert!(matches!(r.next().unwrap(), Event::End));
    }
}

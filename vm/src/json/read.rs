//! The reader: one validating pass over JSON text as a stream of events, with a fast skip.
//!
//! The reader never recurses: open arrays and objects are one bit each on a [`BitStack`] (the
//! innermost 64 levels in one word), so any depth is read in time linear in the input and
//! memory of one bit per level. Outside strings the grammar is ASCII, so a byte of 0x80 or more
//! there is an error; inside a string, the eight-bytes-a-step scan that looks for the closing
//! quote also stops at such bytes, and only then is the string checked with the standard
//! library's UTF-8 validation. Errors come in document order.
//!
//! Three loops do almost all the work: [`Reader::skip_to`] (a value or the rest of a container,
//! kept nowhere), [`Reader::members`] (the members of an object the message reader keeps some
//! of) and [`Reader::next`] (events, for the policy reader). They share the scanning functions
//! below (strings, numbers, literals, white space), which take the input and an offset and
//! return an offset, so that the loops keep the offset in a register. On the message workloads
//! the time goes to the chain of dependent loads from one token to the next and to branches
//! that mispredict on the data (a string's length, a value's kind), more than to instruction
//! count: measure a change with wall-clock time as well as instruction counts (the `json` bench's
//! `FILTERVM_JSON_COUNT` and `FILTERVM_JSON_PASSES` modes), as several variants that ran fewer
//! instructions ran slower (two-word string steps, loop-free sixteen-byte number windows).

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

/// How a message reader treats the members no selector (no filter) reads.
///
/// - [`ReadMode::Validating`] (the default) checks the whole input against RFC 8259 (see the
///   [module documentation](super)): a document that is not JSON is an error wherever the
///   error is.
/// - [`ReadMode::Trusted`] is for input already validated upstream (a broker that parsed the
///   message when it was published, an archive written by a JSON encoder). What is read is
///   checked as in validating mode: the structure of every object the selector reads into (its
///   `{`, names, `:`, `,` and `}`), every member name with escapes a path may want (a name
///   without escapes is compared byte for byte with the paths' names, so one found is valid),
///   and every value kept. A
///   value nothing reads is passed over by its structure alone: a string to its closing quote
///   (a `\` passes over the byte after it), an array or object to the bracket that closes it (any
///   of `]` and `}` closes either; brackets inside strings do not count), anything else to the
///   next delimiter (white space, `,`, `:`, `]`, `}`, `"`, `[` or `{`; at least one byte).
///   Member names not found are passed over as strings. Nothing in what is passed over is
///   checked: not UTF-8, not escapes, not control bytes, not the number grammar, not the spelling
///   of `true`, `false` and `null`, not the order of names, `:` and `,` inside a skipped
///   container. A skip is still one forward pass (every step moves on by at least one byte) and
///   reads nothing past the input's end: an unclosed string or container is an error
///   ([`ErrorKind::UnexpectedEnd`]). Nesting inside a skipped container is counted, not stacked
///   (one integer, whatever the depth), and the deepest level reached is still measured, so the
///   depth limits that apply to messages (EventBridge's, EB-34) apply in both modes.
///   Once every member the selector wants of the top-level object has been read (and, reading
///   an object that is a top-level member's value, every member wanted in it, that member being
///   the last one wanted at the top level), the rest of the document is not read at all when it
///   holds no `\\`, no `"` followed by a name wanted at either level, and too few `[` and `{` to
///   open more than 64 levels at once: the input's last byte other than white space must be
///   `}`, and is taken for the end of the open objects; nothing before it is checked, not the
///   order of names, `:` and `,`, its brackets, nor that its strings are closed (in a valid
///   document such a rest is members none of which is wanted, and the depth measured is the
///   same). Otherwise (and where the top level's names fold case, as an Event Grid event's do)
///   the rest is read as above.
///
/// On a valid JSON document both modes give the same result; on other input, trusted mode may
/// give a result where validating mode gives an error, never the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum ReadMode {
    /// Check every byte (RFC 8259).
    #[default]
    Validating,
    /// Skip what no one reads by its structure alone, unchecked.
    Trusted,
}

/// A stack of bits, one per open container (`true` = object).
///
/// The innermost 64 levels are the bits of one word, the innermost at bit 0, so that a push or a
/// pop is a shift; deeper levels spill, 64 to a word, into `deep` (bit `i` of the spill is level
/// `i`).
#[derive(Debug, Clone, Default)]
pub(crate) struct BitStack {
    /// The innermost `min(len, 64)` levels, innermost at bit 0.
    recent: u64,
    /// The levels below the innermost 64.
    deep: Vec<u64>,
    len: usize,
    /// The most levels open at once since the last clear, when that was more than 64 (counted
    /// where levels spill, off the common path); 0 otherwise.
    deepest: usize,
}

impl BitStack {
    #[inline(always)]
    fn push(&mut self, object: bool) {
        if self.len >= 64 {
            self.spill();
        }
        self.recent = self.recent << 1 | u64::from(object);
        self.len += 1;
    }

    /// Moves the outermost of the innermost 64 levels into `deep` (before a push).
    #[cold]
    fn spill(&mut self) {
        self.deepest = self.deepest.max(self.len + 1);
        let level = self.len - 64;
        let (word, bit) = (level / 64, level % 64);
        if word == self.deep.len() {
            self.deep.push(0);
        }
        if let Some(w) = self.deep.get_mut(word) {
            *w = (*w & !(1 << bit)) | (self.recent >> 63) << bit;
        }
    }

    /// Brings the level below the innermost 64 back into `recent` (after a pop).
    #[cold]
    fn unspill(&mut self) {
        let level = self.len - 64;
        let word = self.deep.get(level / 64).copied().unwrap_or(0);
        self.recent |= (word >> (level % 64) & 1) << 63;
    }

    /// The top bit, if any.
    #[inline(always)]
    fn top(&self) -> Option<bool> {
        (self.len > 0).then_some(self.recent & 1 == 1)
    }

    /// Pops the top bit; returns the new top.
    #[inline(always)]
    fn pop(&mut self) -> Option<bool> {
        self.len = self.len.saturating_sub(1);
        self.recent >>= 1;
        if self.len >= 64 {
            self.unspill();
        }
        self.top()
    }

    /// The number of open containers.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.deepest = 0;
    }

    /// The most levels open at once since the last clear when more than 64 were, else 0.
    pub(crate) fn deepest(&self) -> usize {
        self.deepest
    }

    /// Notes that `levels` were open at once (counted by a trusted skip, not pushed).
    #[inline]
    fn reached(&mut self, levels: usize) {
        if levels > 64 {
            self.deepest = self.deepest.max(levels);
        }
    }
}

/// A string as written between its quotes, validated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Str<'a> {
    /// The bytes between the quotes (valid UTF-8), escapes as written.
    pub(crate) raw: &'a [u8],
    /// Whether `raw` contains a backslash (and so differs from the string's value).
    pub(crate) escaped: bool,
    /// The byte offset of the opening quote.
    pub(crate) offset: usize,
}

impl<'a> Str<'a> {
    /// The text between the quotes, escapes as written.
    #[inline]
    pub(crate) fn raw_text(&self) -> &'a str {
        // The reader checked the bytes; this only turns them into a `str`.
        std::str::from_utf8(self.raw).unwrap_or_default()
    }

    /// The string's value appended to `out` (escapes decoded).
    pub(crate) fn unescape_into(&self, out: &mut String) {
        if self.escaped {
            unescape(self.raw_text(), out);
        } else {
            out.push_str(self.raw_text());
        }
    }

    /// The string's value as an owned `String`.
    pub(crate) fn to_owned_string(self) -> String {
        let mut out = String::with_capacity(self.raw.len());
        self.unescape_into(&mut out);
        out
    }
}

/// Number text the reader checked (ASCII), with its offset in the input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) start: usize,
}

impl<'a> Span<'a> {
    /// The text.
    pub(crate) fn text(&self) -> &'a str {
        // The reader checked the bytes; this only turns them into a `str`.
        std::str::from_utf8(self.bytes).unwrap_or_default()
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
    Number(Span<'a>),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// The end of the input, after the complete value and white space only.
    End,
}

/// A scalar value, as [`Reader::members`] gives it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scalar<'a> {
    String(Str<'a>),
    Number(Span<'a>),
    Bool(bool),
    Null,
}

/// What [`Reader::members`] offers the members of an object to.
pub(crate) trait MemberSink<'a> {
    /// What a wanted name leads to.
    type Found;
    /// Whether a member whose name (without escapes) starts with `first` (`None`: the empty
    /// name) may be wanted; [`MemberSink::wanted`] is asked only then.
    fn may_want(&self, first: Option<u8>) -> bool;
    /// Whether the member `name` is wanted (its value is skipped when not).
    fn wanted(&mut self, name: Str<'a>) -> Option<Self::Found>;
    /// The scalar value of a wanted member.
    fn keep(&mut self, name: Str<'a>, found: Self::Found, value: Scalar<'a>);
    /// Whether every member this sink wants of the object has been read, so that the rest may
    /// be passed over if none of its names may be wanted (asked in trusted mode before each
    /// member after the first; see [`Reader::pass_rest`]).
    #[inline(always)]
    fn read_all(&mut self) -> bool {
        false
    }
    /// Whether some name this sink wants may occur in `rest`, spelled without escapes: asked
    /// only after [`MemberSink::read_all`] said yes.
    #[inline(always)]
    fn may_name(&self, _rest: &[u8]) -> bool {
        true
    }
}

/// Where [`Reader::members`] stopped.
pub(crate) enum MembersEnd<'a, F> {
    /// At the object's end.
    Closed,
    /// At the value of the wanted member `name`, which is no scalar.
    Container(Str<'a>, F),
}

#[cfg(test)]
thread_local! {
    /// How many rests [`Reader::pass_rest`] looked at, and passed over from the top level and
    /// from directly below it, on this thread (tests count them).
    static PASSED_RESTS: std::cell::Cell<[usize; 3]> = const { std::cell::Cell::new([0; 3]) };
}

/// How many rests trusted reads looked at, and passed over from the top level and from directly
/// below it, on this thread.
#[cfg(test)]
pub(crate) fn passed_rests() -> [usize; 3] {
    PASSED_RESTS.with(std::cell::Cell::get)
}

#[cfg(test)]
fn count_rest(which: usize) {
    PASSED_RESTS.with(|n| {
        let mut counts = n.get();
        if let Some(c) = counts.get_mut(which) {
            *c += 1;
        }
        n.set(counts);
    });
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
    bytes: &'a [u8],
    pos: usize,
    expect: Expect,
    stack: BitStack,
    /// Whether the innermost open container is an object (the stack's top, kept at hand).
    in_object: bool,
    lone: LoneSurrogates,
    /// [`ReadMode::Trusted`]: values nothing reads are skipped by their structure only.
    trusted: bool,
}

/// Whether `rest`, read inside `open` containers, holds no `\\` and too few `[` and `{`
/// (strings' included) to have more than 64 levels open at once. Found with `memchr3`, which a
/// flat rest (none of the three bytes) passes at once; the brackets then counted 128 bytes at a
/// time in one-byte counts (`[` is `{` without bit 0x20, and no other byte becomes `{` with it),
/// stopping as soon as there are too many.
fn rest_is_shallow(rest: &[u8], open: usize) -> bool {
    let Some(first) = memchr::memchr3(b'\\', b'[', b'{', rest) else {
        return true;
    };
    let (Some(tail), Some(openers)) = (rest.get(first..), 64usize.checked_sub(open)) else {
        return false;
    };
    let mut count = 0;
    for chunk in tail.chunks(128) {
        let in_chunk = chunk
            .iter()
            .fold(0u8, |n, &b| n.wrapping_add(u8::from(b | 0x20 == b'{')));
        count += usize::from(in_chunk);
        if count > openers {
            return false;
        }
    }
    memchr::memchr(b'\\', tail).is_none()
}

/// The ASCII white space JSON allows between tokens.
#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
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

/// The character starting at `at`: `Ok(None)` at the end, an [`ErrorKind::InvalidUtf8`] error
/// when the bytes there are not UTF-8.
fn char_at(bytes: &[u8], at: usize, in_string: bool) -> Result<Option<char>, Error> {
    let Some(&first) = bytes.get(at) else {
        return Ok(None);
    };
    if first < 0x80 {
        return Ok(Some(char::from(first)));
    }
    let width = match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    };
    bytes
        .get(at..at + width)
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.chars().next())
        .map(Some)
        .ok_or_else(|| Error::new(ErrorKind::InvalidUtf8, at, Detail::Utf8 { in_string }))
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
        Reader {
            bytes: input,
            pos: 0,
            expect: Expect::Value,
            stack,
            in_object: false,
            lone,
            trusted: false,
        }
    }

    /// This reader, skipping what nothing reads as `mode` says.
    pub(crate) fn with_mode(mut self, mode: ReadMode) -> Reader<'a> {
        self.trusted = mode == ReadMode::Trusted;
        self
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

    /// Whether the innermost open container is an object.
    #[inline]
    pub(crate) fn in_object(&self) -> bool {
        self.in_object
    }

    /// The offset of the next byte to read (after the last event).
    #[inline]
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    /// The member name that follows, checked as a validating read checks it, when one does
    /// (right after an object's `{`); the reader does not move.
    pub(crate) fn peek_name(&self) -> Option<Str<'a>> {
        let (pos, b) = skip_ws(self.bytes, self.pos);
        if b != Some(b'"') {
            return None;
        }
        let (close, escaped) = scan_string(self.bytes, pos, self.lone).ok()?;
        Some(Str {
            raw: self.bytes.get(pos + 1..close)?,
            escaped,
            offset: pos,
        })
    }

    /// The next byte that is not white space (`None` at the end of the input).
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        let (pos, b) = skip_ws(self.bytes, self.pos);
        self.pos = pos;
        b
    }

    #[inline(always)]
    fn push(&mut self, object: bool) {
        self.pos += 1;
        self.stack.push(object);
        self.in_object = object;
        self.expect = if object {
            Expect::FirstMember
        } else {
            Expect::FirstElement
        };
    }

    #[inline(always)]
    fn pop(&mut self) {
        self.pos += 1;
        self.in_object = self.stack.pop().unwrap_or(false);
        self.expect = Expect::AfterValue;
    }

    /// The error for finding what is at `self.pos` where `expected` should be.
    #[cold]
    fn unexpected(&self, expected: &'static str) -> Error {
        unexpected(self.bytes, self.pos, expected)
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
                    self.pop();
                    return Ok(Event::ObjectEnd);
                }
                Ok(Event::Name(self.member_name(b, "a member name or `}`")?))
            }
            Expect::FirstElement => {
                if b == Some(b']') {
                    self.pop();
                    return Ok(Event::ArrayEnd);
                }
                self.value(b)
            }
            Expect::Done => Ok(Event::End),
        }
    }

    /// Reads the members of the innermost open object, from where its next member or its end is
    /// due (after its `{` or a member's value): each name is offered to `sink`; the value of a
    /// member it does not want is checked and skipped, the scalar value of one it wants is given
    /// to it. Returns at the object's end (its `}` read), or at the value of a wanted member that
    /// is not a scalar (the reader then expects that value: [`Reader::next`] reads its start, or
    /// the error).
    ///
    /// The offset stays in a local from member to member: this loop and [`Reader::skip_to`] are
    /// where a message reader spends most of its time.
    #[inline(always)]
    pub(crate) fn members<S: MemberSink<'a>>(
        &mut self,
        sink: &mut S,
    ) -> Result<MembersEnd<'a, S::Found>, Error> {
        let bytes = self.bytes;
        let lone = self.lone;
        let trusted = self.trusted;
        let (mut pos, mut b) = skip_ws(bytes, self.pos);
        let mut expected = "a member name or `}`";
        match (self.expect, b) {
            (Expect::FirstMember, Some(b'"')) => {}
            (Expect::FirstMember | Expect::AfterValue, Some(b'}')) => {
                self.pos = pos;
                self.pop();
                return Ok(MembersEnd::Closed);
            }
            (Expect::FirstMember, _) => return Err(unexpected(bytes, pos, expected)),
            (Expect::AfterValue, Some(b',')) => {
                if trusted && sink.read_all() && self.pass_rest(&*sink, pos + 1) {
                    return Ok(MembersEnd::Closed);
                }
                (pos, b) = skip_ws(bytes, pos + 1);
                expected = "a member name";
            }
            (Expect::AfterValue, _) => return Err(unexpected(bytes, pos, "`,` or `}`")),
            _ => return Err(unexpected(bytes, pos, "a member name")),
        }
        loop {
            // A member name is due at `pos`, whose byte is `b`.
            if b != Some(b'"') {
                return Err(unexpected(bytes, pos, expected));
            }
            let (close, escaped) = if trusted {
                trusted_string_end(bytes, pos)?
            } else {
                scan_string(bytes, pos, lone)?
            };
            let colon = match skip_ws(bytes, close + 1) {
                (colon, Some(b':')) => colon,
                (other, _) => return Err(unexpected(bytes, other, "`:`")),
            };
            let (at, v) = skip_ws(bytes, colon + 1);
            // Most names are passed over on their first byte, before the name is made.
            let first = if close > pos + 1 {
                bytes.get(pos + 1).copied()
            } else {
                None
            };
            let wanted = if escaped || sink.may_want(first) {
                if trusted && escaped {
                    // A name with escapes is decoded before it is compared: checked first, as
                    // in validating mode (it ends at the same quote when it is valid). One
                    // without is compared byte for byte with the paths' (valid) names, so a
                    // name found is valid and one not found is skipped.
                    scan_string(bytes, pos, lone)?;
                }
                sink.wanted(Str {
                    raw: bytes.get(pos + 1..close).unwrap_or_default(),
                    escaped,
                    offset: pos,
                })
            } else {
                None
            };
            match wanted {
                None if trusted => pos = self.skip_trusted_value(at, v)?,
                None => {
                    pos = match scan_scalar(bytes, at, v, lone) {
                        Some(end) => end?,
                        None => {
                            self.pos = at;
                            self.expect = Expect::Value;
                            self.skip_to(self.stack.len())?;
                            self.pos
                        }
                    };
                }
                Some(found) => {
                    let name = Str {
                        raw: bytes.get(pos + 1..close).unwrap_or_default(),
                        escaped,
                        offset: pos,
                    };
                    let value = match v {
                        Some(b'"') => {
                            let (close, escaped) = scan_string(bytes, at, lone)?;
                            pos = close + 1;
                            Scalar::String(Str {
                                raw: bytes.get(at + 1..close).unwrap_or_default(),
                                escaped,
                                offset: at,
                            })
                        }
                        Some(b'-' | b'0'..=b'9') => {
                            pos = scan_number(bytes, at)?;
                            Scalar::Number(Span {
                                bytes: bytes.get(at..pos).unwrap_or_default(),
                                start: at,
                            })
                        }
                        Some(b't') => {
                            pos = scan_literal(bytes, at, "true")?;
                            Scalar::Bool(true)
                        }
                        Some(b'f') => {
                            pos = scan_literal(bytes, at, "false")?;
                            Scalar::Bool(false)
                        }
                        Some(b'n') => {
                            pos = scan_literal(bytes, at, "null")?;
                            Scalar::Null
                        }
                        _ => {
                            self.pos = at;
                            self.expect = Expect::Value;
                            return Ok(MembersEnd::Container(name, found));
                        }
                    };
                    sink.keep(name, found, value);
                }
            }
            (pos, b) = skip_ws(bytes, pos);
            match b {
                Some(b',') => {
                    if trusted && sink.read_all() && self.pass_rest(&*sink, pos + 1) {
                        return Ok(MembersEnd::Closed);
                    }
                    (pos, b) = skip_ws(bytes, pos + 1);
                    expected = "a member name";
                }
                Some(b'}') => {
                    self.pos = pos;
                    self.pop();
                    return Ok(MembersEnd::Closed);
                }
                _ => return Err(unexpected(bytes, pos, "`,` or `}`")),
            }
        }
    }

    /// In trusted mode, once `sink` has read every member it wants of an object at the top level
    /// or directly below it ([`MemberSink::read_all`]): passes over the rest of the document from
    /// `pos` (after a `,`) to the input's last `}`, when that rest holds no `\\`, none of the
    /// names the sink wants ([`MemberSink::may_name`]), and too few `[` and `{` to open more than
    /// 64 levels at once (so the depth a trusted read measures is the same: nothing beyond 64 is
    /// reported, see [`BitStack::deepest`]). In a valid document such a rest is the rest of the
    /// open objects, whose members are none of them wanted (a wanted name would be spelled `"`
    /// and the name, without escapes), so it is not read: at the top level that `}` closes the
    /// object; directly below it, the inner object is taken as closed and that `}` is left for
    /// the top-level object's own read. `true` when passed so; else nothing moved. (The sinks
    /// the selector gives say yes at most twice per document: see `Selector::settle_below_top`.)
    #[inline(never)]
    fn pass_rest<S: MemberSink<'a>>(&mut self, sink: &S, pos: usize) -> bool {
        let bytes = self.bytes;
        let body = bytes.trim_ascii_end();
        let Some((b'}', before)) = body.split_last() else {
            return false;
        };
        let Some(rest) = before.get(pos..) else {
            return false;
        };
        let open = self.stack.len();
        if !(1..=2).contains(&open) {
            return false;
        }
        #[cfg(test)]
        count_rest(0);
        if !rest_is_shallow(rest, open) || sink.may_name(rest) {
            return false;
        }
        self.in_object = self.stack.pop().unwrap_or(false);
        // At the top level, after the `}`; below it, at the `}` the top-level object reads.
        self.pos = if open == 1 { body.len() } else { before.len() };
        self.expect = Expect::AfterValue;
        #[cfg(test)]
        count_rest(open);
        true
    }

    #[inline(always)]
    fn after_value(&mut self, b: Option<u8>) -> Result<Event<'a>, Error> {
        if self.stack.len() == 0 {
            return match b {
                None => {
                    self.expect = Expect::Done;
                    Ok(Event::End)
                }
                Some(_) => Err(self.trailing()),
            };
        }
        match (self.in_object, b) {
            (true, Some(b',')) => {
                self.pos += 1;
                let b = self.peek();
                Ok(Event::Name(self.member_name(b, "a member name")?))
            }
            (false, Some(b',')) => {
                self.pos += 1;
                let b = self.peek();
                self.value(b)
            }
            (true, Some(b'}')) => {
                self.pop();
                Ok(Event::ObjectEnd)
            }
            (false, Some(b']')) => {
                self.pop();
                Ok(Event::ArrayEnd)
            }
            (true, _) => Err(self.unexpected("`,` or `}`")),
            (false, _) => Err(self.unexpected("`,` or `]`")),
        }
    }

    /// The error for something after the complete value.
    #[cold]
    fn trailing(&self) -> Error {
        match char_at(self.bytes, self.pos, false) {
            Ok(found) => Error::new(
                ErrorKind::TrailingCharacters,
                self.pos,
                Detail::Found(found, "the end of the input"),
            ),
            Err(e) => e,
        }
    }

    /// Reads a member name and its `:` (`b` is the next byte).
    #[inline(always)]
    fn member_name(&mut self, b: Option<u8>, expected: &'static str) -> Result<Str<'a>, Error> {
        if b != Some(b'"') {
            return Err(self.unexpected(expected));
        }
        let name = self.string()?;
        if self.peek() != Some(b':') {
            return Err(self.unexpected("`:`"));
        }
        self.pos += 1;
        self.expect = Expect::Value;
        Ok(name)
    }

    /// Reads a value (`b` is its first byte).
    #[inline(always)]
    fn value(&mut self, b: Option<u8>) -> Result<Event<'a>, Error> {
        let bytes = self.bytes;
        let at = self.pos;
        let event = match b {
            Some(b'"') => Event::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => {
                let end = scan_number(bytes, at)?;
                self.pos = end;
                Event::Number(Span {
                    bytes: bytes.get(at..end).unwrap_or_default(),
                    start: at,
                })
            }
            Some(b'{') => {
                self.push(true);
                return Ok(Event::ObjectStart);
            }
            Some(b'[') => {
                self.push(false);
                return Ok(Event::ArrayStart);
            }
            Some(b't') => {
                self.pos = scan_literal(bytes, at, "true")?;
                Event::Bool(true)
            }
            Some(b'f') => {
                self.pos = scan_literal(bytes, at, "false")?;
                Event::Bool(false)
            }
            Some(b'n') => {
                self.pos = scan_literal(bytes, at, "null")?;
                Event::Null
            }
            _ => return Err(self.unexpected("a value")),
        };
        self.expect = Expect::AfterValue;
        Ok(event)
    }

    /// Reads a string (`self.pos` is at its opening quote).
    #[inline(always)]
    fn string(&mut self) -> Result<Str<'a>, Error> {
        let open = self.pos;
        let (close, escaped) = scan_string(self.bytes, open, self.lone)?;
        self.pos = close + 1;
        Ok(Str {
            raw: self.bytes.get(open + 1..close).unwrap_or_default(),
            escaped,
            offset: open,
        })
    }

    /// Reads and checks the input until the stack is back to `depth` open containers with a value
    /// complete, keeping nothing: after a member name (or at the start), `skip_to(self.depth())`
    /// skips the value; right after [`Event::ObjectStart`] or [`Event::ArrayStart`],
    /// `skip_to(self.depth() - 1)` skips the rest of that container.
    ///
    /// The same grammar as [`Reader::next`], without building events. Written for the code the
    /// compiler makes of it: the offset and the depth in locals, the steps as loops that jump to
    /// each other (no state variable to test at each step), and nothing else live in the loop
    /// (the wording of an error is worked out when it happens).
    pub(crate) fn skip_to(&mut self, depth: usize) -> Result<(), Error> {
        if self.trusted {
            return self.skip_to_trusted(depth);
        }
        let bytes = self.bytes;
        let lone = self.lone;
        let mut pos = self.pos;
        let mut in_object = self.in_object;
        // The containers to close before the skip is over.
        let mut open = self.stack.len().saturating_sub(depth);
        // Whether a value is due (else one was just completed).
        let mut value_due = match self.expect {
            Expect::Done => return Ok(()),
            Expect::AfterValue => false,
            Expect::Value => true,
            Expect::FirstMember => match skip_ws(bytes, pos) {
                (close, Some(b'}')) => {
                    pos = close + 1;
                    in_object = pop_bit(&mut self.stack);
                    open = open.saturating_sub(1);
                    false
                }
                (at, b) => {
                    pos = member_name_end(bytes, at, b, lone)?;
                    true
                }
            },
            Expect::FirstElement => match skip_ws(bytes, pos) {
                (close, Some(b']')) => {
                    pos = close + 1;
                    in_object = pop_bit(&mut self.stack);
                    open = open.saturating_sub(1);
                    false
                }
                (at, _) => {
                    pos = at;
                    true
                }
            },
        };
        'value: loop {
            if value_due {
                let (at, b) = skip_ws(bytes, pos);
                pos = match scan_scalar(bytes, at, b, lone) {
                    Some(end) => end?,
                    None => match b {
                        Some(b'{') => match skip_ws(bytes, at + 1) {
                            (close, Some(b'}')) => {
                                // Open for a moment, so counted in the deepest nesting.
                                self.stack.reached(self.stack.len() + 1);
                                close + 1
                            }
                            (name, c) => {
                                push_bit(&mut self.stack, true);
                                open += 1;
                                in_object = true;
                                pos = member_name_end(bytes, name, c, lone)?;
                                continue 'value;
                            }
                        },
                        Some(b'[') => match skip_ws(bytes, at + 1) {
                            (close, Some(b']')) => {
                                self.stack.reached(self.stack.len() + 1);
                                close + 1
                            }
                            (first, _) => {
                                push_bit(&mut self.stack, false);
                                open += 1;
                                in_object = false;
                                pos = first;
                                continue 'value;
                            }
                        },
                        _ => return Err(unexpected(bytes, at, "a value")),
                    },
                };
            }
            value_due = true;
            // A value is complete: what follows it.
            loop {
                if open == 0 {
                    self.pos = pos;
                    self.in_object = in_object;
                    self.expect = Expect::AfterValue;
                    return Ok(());
                }
                let (at, b) = skip_ws(bytes, pos);
                pos = at + 1;
                match b {
                    Some(b',') => {
                        if in_object {
                            let (name, c) = skip_ws(bytes, pos);
                            pos = member_name_end(bytes, name, c, lone)?;
                        }
                        continue 'value;
                    }
                    Some(b'}') if in_object => {}
                    Some(b']') if !in_object => {}
                    _ => return Err(after_value_error(bytes, at, in_object)),
                }
                in_object = pop_bit(&mut self.stack);
                open -= 1;
            }
        }
    }

    /// [`Reader::skip_to`] in [`ReadMode::Trusted`]: the same end state, reached by the
    /// structure alone (see [`ReadMode`]).
    #[inline(never)]
    fn skip_to_trusted(&mut self, depth: usize) -> Result<(), Error> {
        let open = self.stack.len().saturating_sub(depth);
        let pos = match self.expect {
            Expect::Done => return Ok(()),
            Expect::AfterValue if open == 0 => return Ok(()),
            Expect::Value if open == 0 => {
                let (at, b) = skip_ws(self.bytes, self.pos);
                self.skip_trusted_value(at, b)?
            }
            // The rest of `open` containers (of a value due in the innermost one too).
            _ => {
                let (end, deepest) = close_trusted(self.bytes, self.pos, open)?;
                self.stack.reached(self.stack.len() + deepest);
                for _ in 0..open {
                    self.stack.pop();
                }
                self.in_object = self.stack.top().unwrap_or(false);
                end
            }
        };
        self.pos = pos;
        self.expect = Expect::AfterValue;
        Ok(())
    }

    /// Skips the value whose first byte `b` is at `at` by its structure alone; returns the offset
    /// after it.
    #[inline(always)]
    fn skip_trusted_value(&mut self, at: usize, b: Option<u8>) -> Result<usize, Error> {
        let bytes = self.bytes;
        match b {
            Some(b'"') => trusted_string_end(bytes, at).map(|(close, _)| close + 1),
            Some(b'{' | b'[') => {
                let (end, deepest) = close_trusted(bytes, at + 1, 1)?;
                // The open containers, this one, and those nested in it.
                self.stack.reached(self.stack.len() + 1 + deepest);
                Ok(end)
            }
            // A number's leading digits eight at a time, then the rest up to a delimiter.
            Some(b'-' | b'0'..=b'9') => Ok(scalar_run_end(bytes, digits_end(bytes, at + 1))),
            Some(b) if !is_delimiter(b) => Ok(scalar_run_end(bytes, at + 1)),
            _ => Err(unexpected(bytes, at, "a value")),
        }
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

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The eight bytes of `bytes` from `at` as one little-endian word (`None` when fewer than eight
/// remain there; `at` is an offset into the input or just past it, far from overflowing).
///
/// The scanning loops step an offset with it rather than a slice of the rest: such a slice costs
/// a dozen instructions to set up at each call (its start and length clamped to the input),
/// about what a short member name or value takes to scan ("Scanning words at an offset" in
/// BENCHMARKS.md).
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// The high bit of each byte of `w` that is `"`, `\`, a control byte (below 0x20) or 0x80 or
/// more, and perhaps of bytes above such a byte (never below): a byte is flagged when
/// subtracting 1 from it xor `"` (or `\`), or 0x20 from it, borrows, or when its own high bit is
/// set; a borrow that runs on into the next byte can flag it falsely, but only above a real
/// match, so the lowest flag is always real. (Without the high bytes, each difference would need
/// masking with the complement of its operand: see [`find_string_special`].)
#[inline(always)]
fn ascii_special(w: u64) -> u64 {
    let quote = w ^ (LO * u64::from(b'"'));
    let backslash = w ^ (LO * u64::from(b'\\'));
    (quote.wrapping_sub(LO) | backslash.wrapping_sub(LO) | w.wrapping_sub(LO * 0x20) | w) & HI
}

/// The index of the first `"`, `\`, control byte (below 0x20) or byte of 0x80 or more at or
/// after `from`, or `bytes.len()`: the end of a plain ASCII string.
///
/// Eight bytes a step ([`ascii_special`]); fewer than eight bytes from the end of the input, a
/// byte a step.
#[inline(always)]
fn find_ascii_special(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(w) = word_at(bytes, at) {
        let flags = ascii_special(w);
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b) {
            return at;
        }
        at += 1;
    }
    at
}

/// The index of the first `"`, `\` or control byte (below 0x20) at or after `from`, or
/// `bytes.len()`: bytes of 0x80 or more pass (the string's UTF-8 is checked separately). Eight
/// bytes a step, as [`find_ascii_special`] with each difference masked so that high bytes do not
/// flag.
#[inline(always)]
fn find_string_special(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(w) = word_at(bytes, at) {
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
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

/// The index after the ASCII digits starting at `from`: eight bytes a step while all eight are
/// digits (a byte is a digit when adding 0x46 leaves its high bit clear and subtracting 0x30 does
/// not borrow), then byte by byte.
#[inline(always)]
fn digits_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(w) = word_at(bytes, at) {
        let not_digit = (w.wrapping_add(LO * 0x46) | w.wrapping_sub(LO * 0x30)) & HI;
        if not_digit != 0 {
            return at + (not_digit.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

/// The offset of the next byte at or after `pos` that is not white space, and that byte (`None`
/// at the end of the input).
///
///
///
/// Tokens mostly follow each other directly or after one space: those are checked inline, longer
/// runs by [`ws_run_end`].
#[inline(always)]
fn skip_ws(bytes: &[u8], pos: usize) -> (usize, Option<u8>) {
    match bytes.get(pos) {
        Some(&b) if b > b' ' => return (pos, Some(b)),
        Some(b' ') => {
            if let Some(&b) = bytes.get(pos + 1)
                && b > b' '
            {
                return (pos + 1, Some(b));
            }
        }
        _ => {}
    }
    let end = ws_run_end(bytes, pos);
    (end, bytes.get(end).copied())
}

/// The offset of the first byte at or after `pos` that is not white space (or the end of the
/// input), a byte a step. Returns one word, in a register.
#[inline(never)]
fn ws_run_end(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|&b| is_ws(b)) {
        pos += 1;
    }
    pos
}

/// The error for finding what is at `at` where `expected` should be.
#[cold]
fn unexpected(bytes: &[u8], at: usize, expected: &'static str) -> Error {
    match char_at(bytes, at, false) {
        Ok(Some(c)) => Error::new(
            ErrorKind::UnexpectedCharacter,
            at,
            Detail::Found(Some(c), expected),
        ),
        Ok(None) => at_end(bytes, expected),
        Err(e) => e,
    }
}

/// What was expected where a member name is due at `at`: after `{` the object may also end.
#[cold]
fn name_expected(bytes: &[u8], at: usize) -> &'static str {
    let before = bytes.get(..at).unwrap_or_default();
    match before.iter().rev().find(|&&b| !is_ws(b)) {
        Some(b'{') => "a member name or `}`",
        _ => "a member name",
    }
}

/// Checks the member name starting at `at` (`b` is the byte there) and its `:`; returns the
/// offset after the `:`.
#[inline(always)]
fn member_name_end(
    bytes: &[u8],
    at: usize,
    b: Option<u8>,
    lone: LoneSurrogates,
) -> Result<usize, Error> {
    if b != Some(b'"') {
        return Err(unexpected(bytes, at, name_expected(bytes, at)));
    }
    let (close, _) = scan_string(bytes, at, lone)?;
    match skip_ws(bytes, close + 1) {
        (colon, Some(b':')) => Ok(colon + 1),
        (other, _) => Err(unexpected(bytes, other, "`:`")),
    }
}

/// The error for what stands at `at` after a value in an object (`in_object`) or an array.
#[cold]
fn after_value_error(bytes: &[u8], at: usize, in_object: bool) -> Error {
    unexpected(
        bytes,
        at,
        if in_object {
            "`,` or `}`"
        } else {
            "`,` or `]`"
        },
    )
}

/// Pushes a container (`object` or array) on `stack`: out of line, to keep registers free in
/// the loops that open containers now and then.
#[inline(never)]
fn push_bit(stack: &mut BitStack, object: bool) {
    stack.push(object);
}

/// Pops the innermost container off `stack`; returns whether the one now innermost is an
/// object (out of line, as [`push_bit`]).
#[inline(never)]
fn pop_bit(stack: &mut BitStack) -> bool {
    stack.pop().unwrap_or(false)
}

/// The error for reaching the end of the input while `expected` should come.
#[cold]
fn at_end(bytes: &[u8], expected: &'static str) -> Error {
    Error::new(
        ErrorKind::UnexpectedEnd,
        bytes.len(),
        Detail::Found(None, expected),
    )
}

/// Checks the string whose opening quote is at `open`; returns the offset of its closing quote
/// and whether the string has escapes. The plain ASCII string is checked inline; escapes, other
/// bytes and errors are left to [`scan_string_rest`].
#[inline(always)]
fn scan_string(bytes: &[u8], open: usize, lone: LoneSurrogates) -> Result<(usize, bool), Error> {
    let start = open + 1;
    let i = find_ascii_special(bytes, start);
    if bytes.get(i) == Some(&b'"') {
        return Ok((i, false));
    }
    scan_string_rest(bytes, start, i, lone)
}

/// [`scan_string`] from `i`, the first byte of the string starting at `start` that is not plain
/// ASCII text: an escape, a byte of 0x80 or more (the string is then checked as UTF-8 when its
/// end is found), or an error.
#[inline(never)]
fn scan_string_rest(
    bytes: &[u8],
    start: usize,
    mut i: usize,
    lone: LoneSurrogates,
) -> Result<(usize, bool), Error> {
    let mut escaped = false;
    // Whether every byte so far was ASCII.
    let mut ascii = true;
    loop {
        match bytes.get(i) {
            Some(b'"') => {
                if !ascii {
                    check_utf8(bytes, start, i)?;
                }
                return Ok((i, escaped));
            }
            Some(b'\\') => {
                escaped = true;
                i = match escape(bytes, i, lone) {
                    Ok(next) => next,
                    Err(e) => return Err(utf8_before(bytes, start, i, ascii).unwrap_or(e)),
                };
            }
            Some(&c) if c >= 0x80 => ascii = false,
            Some(&c) => {
                let e = Error::new(ErrorKind::ControlCharacter, i, Detail::Control(c));
                return Err(utf8_before(bytes, start, i, ascii).unwrap_or(e));
            }
            None => {
                let e = at_end(bytes, "`\"` to close the string");
                return Err(utf8_before(bytes, start, i, ascii).unwrap_or(e));
            }
        }
        i = if ascii {
            find_ascii_special(bytes, i)
        } else {
            find_string_special(bytes, i)
        };
    }
}

/// Checks that the string bytes `start..end` are UTF-8.
#[cold]
fn check_utf8(bytes: &[u8], start: usize, end: usize) -> Result<(), Error> {
    match std::str::from_utf8(bytes.get(start..end).unwrap_or_default()) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::new(
            ErrorKind::InvalidUtf8,
            start + e.valid_up_to(),
            Detail::Utf8 { in_string: true },
        )),
    }
}

/// The UTF-8 error among string bytes `start..end`, if any (where another error at `end` is
/// about to be reported: the earlier one wins).
#[cold]
fn utf8_before(bytes: &[u8], start: usize, end: usize, ascii: bool) -> Option<Error> {
    if ascii {
        return None;
    }
    // A sequence cut short by `end` is an error too: what stands at `end` is ASCII (or the end of
    // the input), never the continuation byte the sequence needs.
    check_utf8(bytes, start, end).err()
}

/// Checks the escape whose backslash is at `at`; returns the offset after it.
fn escape(bytes: &[u8], at: usize, lone: LoneSurrogates) -> Result<usize, Error> {
    match bytes.get(at + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
        Some(b'u') => {
            let Some(unit) = hex4(bytes.get(at + 2..at + 6)) else {
                let after = bytes.get(at + 2..).unwrap_or_default();
                let hex = after.iter().take(4).take_while(|b| b.is_ascii_hexdigit());
                if hex.count() == after.len() {
                    return Err(at_end(bytes, "four hex digits after `\\u`"));
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
            match lone {
                LoneSurrogates::Replace => Ok(at + 6),
                LoneSurrogates::Reject => Err(Error::new(
                    ErrorKind::LoneSurrogate,
                    at,
                    Detail::Surrogate(unit),
                )),
            }
        }
        Some(_) => match char_at(bytes, at + 1, true) {
            Ok(c) => Err(Error::new(ErrorKind::InvalidEscape, at, Detail::Escape(c))),
            Err(e) => Err(e),
        },
        None => Err(at_end(bytes, "an escape after `\\`")),
    }
}

/// Checks a number, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (RFC 8259 §6), starting at
/// `start`; returns the offset after it.
#[inline(always)]
fn scan_number(bytes: &[u8], start: usize) -> Result<usize, Error> {
    let mut i = start;
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    match bytes.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_end(bytes, i + 1),
        _ => return Err(bad_number(i, "a digit")),
    }
    if bytes.get(i) == Some(&b'.') {
        let end = digits_end(bytes, i + 1);
        if end == i + 1 {
            return Err(bad_number(end, "a digit after `.`"));
        }
        i = end;
    }
    // An exponent, or text that runs on where the grammar stopped (`01`, `1.2.3`, `1x`): one
    // look at the next byte for both, the rare cases out of line.
    match bytes.get(i) {
        Some(&b) if RUNS_ON.get(usize::from(b)) == Some(&true) => exponent_end(bytes, start, i),
        _ => Ok(i),
    }
}

/// The rest of the number starting at `start` from `i`, where a byte that may not end a number
/// stands: the exponent's end, or the error.
#[inline(never)]
fn exponent_end(bytes: &[u8], start: usize, mut i: usize) -> Result<usize, Error> {
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let end = digits_end(bytes, i);
        if end == i {
            return Err(bad_number(end, "a digit in the exponent"));
        }
        i = end;
    }
    // Text that runs on where the grammar stopped is a bad number rather than two tokens.
    if let Some(&b) = bytes.get(i)
        && RUNS_ON.get(usize::from(b)) == Some(&true)
    {
        return Err(run_on_number(bytes, start, i));
    }
    Ok(i)
}

/// The bytes that end a value passed over by its structure ([`ReadMode::Trusted`]): white space
/// and control bytes, `,`, `:`, `"`, `[`, `]`, `{` and `}`.
#[expect(
    clippy::indexing_slicing,
    reason = "computed at compile time: the index stays below the table's length, and a slip is a compile error"
)]
static DELIMITS: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c <= b' ' || matches!(c, b',' | b':' | b'"' | b'[' | b']' | b'{' | b'}');
        b += 1;
    }
    table
};

/// Whether `b` is one of [`DELIMITS`].
#[inline(always)]
fn is_delimiter(b: u8) -> bool {
    DELIMITS.get(usize::from(b)) != Some(&false)
}

/// The offset of the first delimiter ([`DELIMITS`]) at or after `from`, or the input's end.
#[inline(always)]
fn scalar_run_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(&b) = bytes.get(at) {
        if is_delimiter(b) {
            return at;
        }
        at += 1;
    }
    at
}

/// The closing quote of the string whose opening quote is at `open`, by its quotes and
/// backslashes alone (a `\` passes over the byte after it; nothing else is checked), and
/// whether it has a backslash. On a valid string, the quote [`scan_string`] finds.
#[inline(always)]
fn trusted_string_end(bytes: &[u8], open: usize) -> Result<(usize, bool), Error> {
    let mut at = open + 1;
    let mut escaped = false;
    loop {
        at = find_quote_or_backslash(bytes, at);
        match bytes.get(at) {
            Some(b'"') => return Ok((at, escaped)),
            Some(_) => {
                escaped = true;
                at += 2;
            }
            None => return Err(at_end(bytes, "`\"` (the string's end)")),
        }
    }
}

/// The index of the first `"` or `\` at or after `from`, or `bytes.len()` (also when `from` is
/// past the end). Eight bytes a step; the lowest flag of a word is always a real match (as in
/// [`find_string_special`]).
#[inline(always)]
fn find_quote_or_backslash(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(w) = word_at(bytes, at) {
        let quote = w ^ (LO * u64::from(b'"'));
        let backslash = w ^ (LO * u64::from(b'\\'));
        let flags =
            ((quote.wrapping_sub(LO) & !quote) | (backslash.wrapping_sub(LO) & !backslash)) & HI;
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' {
            return at;
        }
        at += 1;
    }
    bytes.len()
}

/// Passes over input from `pos` until `open` containers are closed, by the structure alone
/// ([`ReadMode::Trusted`]): strings by their quotes ([`trusted_string_end`]), nested containers
/// counted (any of `]` and `}` closes one). Returns the offset after the last closing bracket and
/// the most levels open at once beyond the `open` ones. One forward pass; an unclosed container
/// or string is an [`ErrorKind::UnexpectedEnd`].
///
/// Eight bytes a step to the next quote or bracket ([`find_structural`]); from there, the word
/// of eight bytes is read with exact masks of its quotes and brackets ([`bytes_equal`]) and its
/// brackets before its first quote are counted in it, lowest first, so that brackets close
/// together (`]], [[`) cost one stop, not one each ("Converting a kept text through an aligned
/// window" in BENCHMARKS.md; `tests` compares it with a stop at each bracket).
fn close_trusted(bytes: &[u8], mut pos: usize, open: usize) -> Result<(usize, usize), Error> {
    // `open` is at most the input's length (one bracket a level), so the counts cannot overflow.
    let mut depth = open;
    let mut deepest = open;
    while depth > 0 {
        pos = find_structural(bytes, pos);
        // The word from the quote or bracket found: its brackets before its first quote counted
        // in the word.
        if let Some(w) = word_at(bytes, pos) {
            let quotes = bytes_equal(w, b'"');
            // `[` and `]` are `{` and `}` without bit 0x20 (no other byte becomes either).
            let folded = w | (LO * 0x20);
            let opens = bytes_equal(folded, b'{');
            let closes = bytes_equal(folded, b'}');
            // The flags below the lowest quote's (all of them without a quote).
            let before_quote = (quotes & quotes.wrapping_neg()).wrapping_sub(1);
            let mut brackets = (opens | closes) & before_quote;
            while brackets != 0 {
                let bit = brackets & brackets.wrapping_neg();
                if opens & bit != 0 {
                    depth += 1;
                    deepest = deepest.max(depth);
                } else {
                    depth -= 1;
                    if depth == 0 {
                        let end = pos + (bit.trailing_zeros() / 8) as usize + 1;
                        return Ok((end, deepest.saturating_sub(open)));
                    }
                }
                brackets ^= bit;
            }
            pos = if quotes == 0 {
                pos + 8
            } else {
                let quote = pos + (quotes.trailing_zeros() / 8) as usize;
                trusted_string_end(bytes, quote)?.0 + 1
            };
            continue;
        }
        // Fewer than eight bytes left: a byte at a time.
        match bytes.get(pos) {
            Some(b'"') => pos = trusted_string_end(bytes, pos)?.0 + 1,
            Some(b'{' | b'[') => {
                depth += 1;
                deepest = deepest.max(depth);
                pos += 1;
            }
            Some(b'}' | b']') => {
                depth -= 1;
                pos += 1;
            }
            Some(_) => pos += 1,
            None => return Err(at_end(bytes, "`]` or `}` (a container's end)")),
        }
    }
    Ok((pos, deepest.saturating_sub(open)))
}

/// The high bit of each byte of `w` that equals `b`, exactly: adding 0x7F to a byte's low seven
/// bits sets its high bit unless they are all zero, and never carries into the next byte.
#[inline(always)]
fn bytes_equal(w: u64, b: u8) -> u64 {
    let x = w ^ (LO * u64::from(b));
    !(((x & !HI).wrapping_add(!HI)) | x) & HI
}

/// [`close_trusted`] as it was written before, a stop at each quote and bracket, found a byte
/// at a time: the tests compare the two.
#[cfg(test)]
fn close_trusted_by_stops(
    bytes: &[u8],
    mut pos: usize,
    open: usize,
) -> Result<(usize, usize), Error> {
    let mut depth = open;
    let mut deepest = open;
    while depth > 0 {
        while bytes
            .get(pos)
            .is_some_and(|b| !matches!(b, b'"' | b'[' | b']' | b'{' | b'}'))
        {
            pos += 1;
        }
        match bytes.get(pos) {
            Some(b'"') => pos = trusted_string_end(bytes, pos)?.0 + 1,
            Some(b'{' | b'[') => {
                depth += 1;
                deepest = deepest.max(depth);
                pos += 1;
            }
            Some(_) => {
                depth -= 1;
                pos += 1;
            }
            None => return Err(at_end(bytes, "`]` or `}` (a container's end)")),
        }
    }
    Ok((pos, deepest.saturating_sub(open)))
}

/// The index of the first `"`, `[`, `]`, `{` or `}` at or after `from` — or of a `Y`, `_`, `y`
/// or DEL byte before it —, or `bytes.len()`. Eight bytes a step, with two tests a word: one for
/// `"`, and one for the brackets: with bit 0x20 set and bits 0x06 cleared, `[`, `]`, `{` and `}`
/// all become `y` (0x79), and so do only `Y`, `_`, `y` and DEL. Outside strings (where the
/// trusted skip calls it) valid JSON holds none of those four, so a stop at one is rare and only
/// costs a look at its word: callers check the byte they stop at.
#[inline(always)]
fn find_structural(bytes: &[u8], from: usize) -> usize {
    // A byte whose test is zero borrows and sets its high bit; bytes of 0x80 or more (never one
    // of the stops) are masked out by `!w`. A borrow can flag a byte above a real match, never
    // below, so the lowest flag is real.
    let stops = |w: u64| {
        let brackets = ((w | (LO * 0x20)) & (LO * 0xF9)) ^ (LO * 0x79);
        let quote = w ^ (LO * u64::from(b'"'));
        (brackets.wrapping_sub(LO) | quote.wrapping_sub(LO)) & !w & HI
    };
    let mut at = from;
    // Two words a step (one bounds test and one branch for both), then the last word.
    while let Some(pair) = bytes.get(at..at + 16) {
        let pair: [u8; 16] = pair.try_into().unwrap_or_default();
        let pair = u128::from_le_bytes(pair);
        #[expect(clippy::cast_possible_truncation, reason = "the low and high words")]
        let (low, high) = (stops(pair as u64), stops((pair >> 64) as u64));
        if low | high != 0 {
            return if low != 0 {
                at + (low.trailing_zeros() / 8) as usize
            } else {
                at + 8 + (high.trailing_zeros() / 8) as usize
            };
        }
        at += 16;
    }
    if let Some(w) = word_at(bytes, at) {
        let flags = stops(w);
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if is_structural_stop(b) {
            return at;
        }
        at += 1;
    }
    bytes.len()
}

/// The bytes [`find_structural`] stops at: `"`, and those that become `y` with bit 0x20 set and
/// bits 0x06 cleared (`[`, `]`, `{`, `}`, `Y`, `_`, `y` and DEL).
#[inline(always)]
fn is_structural_stop(b: u8) -> bool {
    b == b'"' || (b | 0x20) & 0xF9 == 0x79
}

/// Checks the literal `word` at `at`; returns the offset after it.
#[inline(always)]
fn scan_literal(bytes: &[u8], at: usize, word: &'static str) -> Result<usize, Error> {
    let end = at + word.len();
    if bytes.get(at..end) == Some(word.as_bytes()) {
        Ok(end)
    } else {
        Err(Error::new(
            ErrorKind::InvalidLiteral,
            at,
            Detail::Literal(word),
        ))
    }
}

/// Checks a scalar value (string, number or literal) whose first byte `b` is at `at`; returns the
/// offset after it, or `None` when `b` starts no scalar (a container, or an error).
#[inline(always)]
fn scan_scalar(
    bytes: &[u8],
    at: usize,
    b: Option<u8>,
    lone: LoneSurrogates,
) -> Option<Result<usize, Error>> {
    Some(match b {
        Some(b'"') => scan_string(bytes, at, lone).map(|(close, _)| close + 1),
        Some(b'-' | b'0'..=b'9') => scan_number(bytes, at),
        Some(b't') => scan_literal(bytes, at, "true"),
        Some(b'f') => scan_literal(bytes, at, "false"),
        Some(b'n') => scan_literal(bytes, at, "null"),
        _ => return None,
    })
}

/// The bytes that, right after a number, continue it ungrammatically (letters, digits, `.`,
/// `+`, `-`, `_`), as a table: one load instead of a chain of comparisons.
#[expect(
    clippy::indexing_slicing,
    reason = "computed at compile time: the index stays below the table's length, and a slip is a compile error"
)]
static RUNS_ON: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_');
        b += 1;
    }
    table
};

#[cold]
fn bad_number(at: usize, expected: &'static str) -> Error {
    Error::new(ErrorKind::InvalidNumber, at, Detail::Number(expected))
}

/// The error for number text running on at `at` where the grammar stopped.
#[cold]
fn run_on_number(bytes: &[u8], start: usize, at: usize) -> Error {
    let expected = match bytes.get(start..at) {
        Some(b"0" | b"-0") => "no digit after a leading `0`",
        _ => "the end of the number",
    };
    bad_number(at, expected)
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
                Event::Number(n) => format!("n{}", n.text()),
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

    /// Checks a word-at-a-time finder against the byte-at-a-time definition: every length up
    /// to five words, the first special byte at every offset (and none), from every start
    /// offset within a word, with a second special byte after the first (a borrow from it must
    /// not flag anything below it).
    fn check_finder(
        find: fn(&[u8], usize) -> usize,
        is_special: fn(u8) -> bool,
        fillers: &[u8],
        specials: &[u8],
    ) {
        for len in 0..40 {
            for &special in specials {
                for at in 0..=len {
                    for from in 0..8.min(len + 1) {
                        let mut bytes: Vec<u8> =
                            (0..len).map(|i| fillers[i % fillers.len()]).collect();
                        if at < len {
                            bytes[at] = special;
                        }
                        if at + 3 < len {
                            bytes[at + 3] = specials[(at + len) % specials.len()];
                        }
                        let expected = (from..len).find(|&i| is_special(bytes[i])).unwrap_or(len);
                        assert_eq!(
                            find(&bytes, from),
                            expected,
                            "{len} {special:#x} at {at} from {from}: {bytes:x?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn swar_scan_of_ascii_strings_finds_the_first_special_byte() {
        // Fillers: ASCII bytes next to the special ones (a subtraction or xor slip flags them).
        check_finder(
            find_ascii_special,
            |b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b),
            &[
                b'a', b'#', b'!', b']', b'[', 0x20, 0x21, 0x7f, 0x23, 0x5d, 0x3c,
            ],
            &[b'"', b'\\', 0x1f, 0x00, 0x01, 0x80, 0xff, 0xa2, 0xdc, 0xc3],
        );
    }

    #[test]
    fn swar_scan_of_utf8_strings_finds_the_first_special_byte() {
        // Fillers: high bytes (which this finder passes over) and ASCII next to the specials.
        check_finder(
            find_string_special,
            |b| b == b'"' || b == b'\\' || b < 0x20,
            &[
                b'a', 0x80, 0xff, b'#', b']', 0x20, 0x21, 0xa2, 0xdc, 0xa0, 0x7f,
            ],
            &[b'"', b'\\', 0x1f, 0x00, 0x01],
        );
    }

    #[test]
    fn swar_scan_of_trusted_strings_finds_the_first_quote_or_backslash() {
        // Fillers: control and high bytes (which a trusted scan passes over) and ASCII next to
        // the specials.
        check_finder(
            find_quote_or_backslash,
            |b| b == b'"' || b == b'\\',
            &[
                b'a', 0x80, 0xff, 0x00, 0x1f, b'#', b']', 0x21, 0x23, 0x5b, 0x5d, 0xdc, 0xa2,
            ],
            b"\"\\",
        );
    }

    #[test]
    fn swar_scan_for_brackets_finds_the_first_quote_or_bracket() {
        // The stops are `"`, `[`, `]`, `{`, `}` and the four bytes that share the brackets'
        // folded form (`Y`, `_`, `y`, DEL); fillers: their neighbours, digits, white space,
        // control and high bytes.
        check_finder(
            find_structural,
            |b| b"\"[]{}Y_y\x7f".contains(&b),
            &[
                b'1',
                b'.',
                b',',
                b' ',
                b'-',
                b'e',
                0x5a,
                0x5c,
                0x7a,
                0x7c,
                0x7e,
                0x3b,
                0x3d,
                0x23,
                0x21,
                0x80,
                0xff,
                0xdb,
                0xfb,
                0x00,
                0x02,
                0x1b,
                0x7b ^ 0x80,
            ],
            b"\"[]{}Y_y\x7f",
        );
        for b in 0..=u8::MAX {
            assert_eq!(
                is_structural_stop(b),
                b"\"[]{}Y_y\x7f".contains(&b),
                "{b:#x}"
            );
        }
    }

    /// [`word_at`] reads the eight bytes from an offset, little-endian, and `None` where fewer
    /// than eight remain (also past the end).
    #[test]
    fn words_are_read_at_any_offset() {
        let bytes: Vec<u8> = (1..=20).collect();
        for at in 0..30 {
            let expected = bytes
                .get(at..at + 8)
                .map(|b| b.iter().rev().fold(0u64, |w, &x| w << 8 | u64::from(x)));
            assert_eq!(word_at(&bytes, at), expected, "at {at}");
        }
    }

    #[test]
    fn swar_digit_runs_stop_at_the_first_non_digit() {
        for len in 0..30 {
            for stop in [b'.', b'e', b'/', b':', b' ', 0x00, 0x80, 0xb9, 0xba, 0xff] {
                for at in 0..=len {
                    let mut bytes: Vec<u8> = (0..len).map(|i| b'0' + (i % 10) as u8).collect();
                    if at < len {
                        bytes[at] = stop;
                    }
                    assert_eq!(digits_end(&bytes, 0), at, "{len} {stop} {at}");
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
        assert!(matches!(r.next().unwrap(), Event::Name(n) if n.raw == b"a"));
        r.skip_to(r.depth()).unwrap();
        assert!(matches!(r.next().unwrap(), Event::Name(n) if n.raw == b"b"));
        assert!(matches!(r.next().unwrap(), Event::Number(n) if n.bytes == b"3"));
        assert!(matches!(r.next().unwrap(), Event::ObjectEnd));
        assert!(matches!(r.next().unwrap(), Event::End));
        let mut r = Reader::new(input, LoneSurrogates::Reject);
        assert!(matches!(r.next().unwrap(), Event::ObjectStart));
        r.skip_to(r.depth() - 1).unwrap();
        assert!(matches!(r.next().unwrap(), Event::End));
    }

    /// The trusted container skip that counts a word's brackets in the word ends where the one
    /// that stops at each bracket ends, with the same deepest level and the same error, on random
    /// runs of brackets, quotes, backslashes and other bytes (multi-byte characters and bytes that
    /// are not UTF-8 among them) from every start offset, for one to three open containers; and
    /// its masks flag exactly the bytes they name.
    #[test]
    fn trusted_skip_by_words_ends_where_the_skip_by_stops_ends() {
        for b in 0..=255u8 {
            for lane in 0..8 {
                let w =
                    (u64::from(b) << (8 * lane)) | ((LO * u64::from(b'x')) & !(0xFF << (8 * lane)));
                let expected = if b == b'"' {
                    HI & (0x80 << (8 * lane))
                } else {
                    0
                };
                assert_eq!(bytes_equal(w, b'"'), expected, "{b:#x} in lane {lane}");
            }
        }
        let alphabet: [&[u8]; 12] = [
            b"[",
            b"]",
            b"{",
            b"}",
            b"\"",
            b"\\",
            b"a",
            b" ",
            b"1,",
            "é".as_bytes(),
            b"\xff",
            b"y_",
        ];
        let mut state = 0x5eed_c105_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut closed = 0;
        for _ in 0..1500 {
            let mut input = Vec::new();
            for _ in 0..(next() % 60) {
                input.extend_from_slice(alphabet[(next() % 12) as usize]);
            }
            for from in 0..=input.len() {
                for open in 1..=3 {
                    let words = close_trusted(&input, from, open);
                    let stops = close_trusted_by_stops(&input, from, open);
                    closed += usize::from(words.is_ok());
                    assert_eq!(
                        words.as_ref().map_err(|e| (e.clone(), e.to_string())),
                        stops.as_ref().map_err(|e| (e.clone(), e.to_string())),
                        "{} from {from}, {open} open",
                        String::from_utf8_lossy(&input)
                    );
                }
            }
        }
        assert!(closed > 10_000, "{closed} skips closed their containers");
    }
}

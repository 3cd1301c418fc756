//! Subscription sets on the wire: [`SubscriptionSet::to_bytes`] and
//! [`SubscriptionSet::from_bytes`] — a whole set saved and read back without compiling a policy.
//!
//! A restarted broker reloads its topics from saved sets: reading one costs about what inserting
//! its distinct tests and filters into an empty set costs, not what compiling its policies costs.
//! A saved set holds what the set itself holds, per group (dialect and options) its interned tests
//! and its distinct filters' codes over them, and its subscriptions in insertion order with their
//! ids ([`SetId`]), their group and their filter; an `eventbridge` subscription judged on its
//! kept pattern when its group's rows cannot judge an event ([`Filter::pattern`](crate::Filter::pattern))
//! carries that pattern's text.
//!
//! # Format (version 2)
//!
//! `FVM-SET\n`, the format version, the body, and the FNV-1a 64 hash of everything before it
//! (8 bytes, little-endian). Counts, lengths and numbers are unsigned LEB128; texts and ids are a
//! length then their bytes. The body:
//!
//! - the number of groups, then per group, in the set's order: the dialect's name, the options'
//!   JSON form ([`Options::to_json`]), the tests (a count, then each a byte and its form: 1, the
//!   binary form of the common tests — a key and a string comparison, a numeric test, a shape,
//!   leaf types or a bool, see `put_binary_test` — or 0, the JSON form of an IR test node,
//!   [`crate::ir`], for the others), the distinct filters (a count, then each filter's code — a
//!   count of 32-bit little-endian words, whose test operands are positions in the group's test
//!   list —, its required tests: a count and positions, and the number of subscriptions holding
//!   it);
//! - the number of subscriptions, then each one: its group's position, its id, in an
//!   `eventbridge` group a byte (0: no kept pattern, 1: judged on its pattern but its filter kept
//!   none, 2: judged on the pattern that follows its filter's position), and its filter's position.
//!
//! Version 1 (every test as IR JSON, no subscriber counts; never released) is refused as an
//! unsupported version.
//!
//! # Loading is checked
//!
//! Any bytes may be given to [`SubscriptionSet::from_bytes`]: it never panics, allocates at most in
//! proportion to the bytes, and rejects every malformation with a stable code
//! ([`SetLoadError::code`]). The hash makes a corrupted byte an error. Beyond it, everything is
//! checked as if the bytes were hostile: the options as the command line reads them
//! ([`Options::from_json`]), each test as an IR test ([`crate::ir`]; a binary one as its IR JSON
//! would be: known kinds, texts sorted and distinct, bounds numbers) interned like an inserted
//! filter's (its one-test program generated and verified again, none is read from the bytes),
//! each filter code word by word (tests it reads exist and are read as their kind is answered,
//! jumps go forward within the code, each required test is one the code cannot hold without, so
//! anchoring a filter on it never skips a match), each kept pattern read and checked to compile
//! to the code of its subscription's filter, every index in range, each filter held by as many
//! subscriptions as its count says (the counts add up to the subscriptions), no id twice, no
//! test, filter or group unused. Loading builds the set's index and anchors as inserting does, so
//! the loaded set matches every message as the saved one did (the same ids, the same unjudged
//! groups) and takes inserts and removals as any set.
//!
//! ```
//! use filtervm_compiler::{compile_text, Dialect, MessageParts, Options, SetScratch,
//!     SubscriptionSet};
//! use filtervm_vm::message::AttributeType;
//!
//! let mut set = SubscriptionSet::new();
//! let sns = |policy| compile_text(Dialect::Sns, policy, &Options::from(Dialect::Sns)).unwrap();
//! set.insert("billing".to_string(), &sns(r#"{"event": ["order.paid"]}"#)).unwrap();
//! set.insert("audit".to_string(), &sns(r#"{"event": [{"prefix": "order."}]}"#)).unwrap();
//! let bytes = set.to_bytes();
//! let loaded = SubscriptionSet::<String>::from_bytes(&bytes).unwrap();
//!
//! let attributes = [("event", AttributeType::String, "order.paid")];
//! let message = MessageParts::attributes(&attributes[..]);
//! let mut scratch = SetScratch::new();
//! let ids: Vec<String> = loaded.matching(&mut scratch, &message).ids().cloned().collect();
//! assert_eq!(ids, ["billing", "audit"]);
//! assert!(SubscriptionSet::<String>::from_bytes(&bytes[..bytes.len() - 1]).is_err());
//! ```

use crate::dialect::Dialect;
use crate::dialect::eventbridge::exact::Pattern;
use crate::error::{CompileError, ErrorCode, excerpt};
use crate::ir::{Case, Node, NodeKind, NumSource, Pred, StrOp, Test};
use crate::options::Options;
use crate::set::{EngineParts, Holders};
use crate::subscriptions::SubscriptionSet;
use filtervm_vm::json::{self, Duplicates, ParseOptions};
use filtervm_vm::key::Key;
use filtervm_vm::program::Interval;
use filtervm_vm::value::{LeafTypes, Shapes};
use std::borrow::Cow;
use std::hash::Hash;
use std::sync::Arc;

/// The first bytes of a saved set.
pub const SET_MAGIC: [u8; 8] = *b"FVM-SET\n";

/// The version of the saved-set format [`SubscriptionSet::to_bytes`] writes (and the only one
/// [`SubscriptionSet::from_bytes`] reads: version 1, which shipped every test as IR JSON and no
/// subscriber counts and was never released, is refused with [`ErrorCode::InvalidProgram`]).
pub const SET_FORMAT_VERSION: u64 = 2;

/// The deepest JSON a saved test may nest (an IR test: its key and its predicate).
const TEST_DEPTH: usize = 64;

/// An id type a saved set can hold: written as bytes, read back from them.
pub trait SetId: Sized {
    /// The id's bytes.
    fn id_bytes(&self) -> Cow<'_, [u8]>;
    /// The id these bytes are, or `None` when they are none.
    fn from_id_bytes(bytes: &[u8]) -> Option<Self>;
}

impl SetId for String {
    /// The UTF-8 text.
    fn id_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.as_bytes())
    }

    fn from_id_bytes(bytes: &[u8]) -> Option<String> {
        std::str::from_utf8(bytes).ok().map(str::to_owned)
    }
}

impl SetId for Box<str> {
    /// The UTF-8 text.
    fn id_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.as_bytes())
    }

    fn from_id_bytes(bytes: &[u8]) -> Option<Box<str>> {
        std::str::from_utf8(bytes).ok().map(Box::from)
    }
}

impl SetId for Vec<u8> {
    /// The bytes themselves.
    fn id_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self)
    }

    fn from_id_bytes(bytes: &[u8]) -> Option<Vec<u8>> {
        Some(bytes.to_vec())
    }
}

impl SetId for u64 {
    /// Eight bytes, little-endian.
    fn id_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.to_le_bytes().to_vec())
    }

    fn from_id_bytes(bytes: &[u8]) -> Option<u64> {
        bytes.try_into().ok().map(u64::from_le_bytes)
    }
}

impl SetId for u32 {
    /// Four bytes, little-endian.
    fn id_bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.to_le_bytes().to_vec())
    }

    fn from_id_bytes(bytes: &[u8]) -> Option<u32> {
        bytes.try_into().ok().map(u32::from_le_bytes)
    }
}

/// Why bytes were not accepted as a saved set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetLoadError {
    /// Not a saved set's encoding: the magic, the version, a length or count past the end, the
    /// hash, bytes left over.
    #[error("invalid saved set: {0}")]
    Encoding(String),
    /// A well-formed encoding whose contents are not a set's: a test, a filter code, an index
    /// out of range, an id or a kept pattern.
    #[error("invalid saved set contents: {0}")]
    Contents(String),
    /// A group's options its dialect does not accept (each error has the code
    /// [`ErrorCode::InvalidOptions`]).
    #[error("invalid stored options: {0}")]
    Options(CompileError),
}

impl SetLoadError {
    /// The stable code, as for a filter's bytes ([`crate::wire::LoadError::code`]):
    /// [`ErrorCode::InvalidProgram`] for the encoding, [`ErrorCode::InvalidFilterMetadata`] for
    /// the contents, [`ErrorCode::InvalidOptions`] for the options.
    pub fn code(&self) -> ErrorCode {
        match self {
            SetLoadError::Encoding(_) => ErrorCode::InvalidProgram,
            SetLoadError::Contents(_) => ErrorCode::InvalidFilterMetadata,
            SetLoadError::Options(_) => ErrorCode::InvalidOptions,
        }
    }
}

fn encoding(why: impl Into<String>) -> SetLoadError {
    SetLoadError::Encoding(why.into())
}

fn contents(why: impl Into<String>) -> SetLoadError {
    SetLoadError::Contents(why.into())
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

fn put_count(out: &mut Vec<u8>, n: usize) {
    put_varint(out, n as u64);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_count(out, bytes.len());
    out.extend_from_slice(bytes);
}

/// How a saved test is written: its IR JSON (any test), or in the binary form below.
const TEST_JSON: u8 = 0;
/// A test as its key then its predicate, each a kind byte and its operands (see
/// [`put_binary_test`]).
const TEST_BINARY: u8 = 1;

/// Key kinds of a binary test, in the order of [`Key`]'s variants.
const KEY_ATTR_TEXT: u8 = 0;
const KEY_ATTR: u8 = 1;
const KEY_ANY_ATTRIBUTE: u8 = 2;
const KEY_HEADER: u8 = 3;
const KEY_BODY: u8 = 4;
const KEY_BODY_EACH: u8 = 5;
const KEY_FIELD: u8 = 6;
const KEY_FIELD_WITHIN: u8 = 7;
const KEY_BODY_IS_OBJECT: u8 = 8;
const KEY_EVENT: u8 = 9;
const KEY_EVENT_DATA: u8 = 10;

/// Predicate kinds of a binary test.
const PRED_STR: u8 = 0;
const PRED_NUM: u8 = 1;
const PRED_SHAPE: u8 = 2;
const PRED_HAS_TYPE: u8 = 3;
const PRED_BOOL: u8 = 4;

/// Whether a predicate has a binary form (the others are written as IR JSON).
fn is_binary(pred: &Pred) -> bool {
    matches!(
        pred,
        Pred::Str { .. } | Pred::Num { .. } | Pred::Shape(_) | Pred::HasType(_) | Pred::Bool(_)
    )
}

/// Writes a test whose predicate [`is_binary`]: the key (a kind byte, then its name or path as a
/// text; `field-within` its level count first; `event-data` a count of texts), then the
/// predicate: a string comparison (its operator 0–3: equal, prefix, suffix, contains; its case
/// handling 0 sensitive, 1 folded; a count of texts, sorted and distinct), a numeric test (its
/// source 0–2: number leaves, numeric text, comparable numbers; a count of intervals, each its
/// bounds' binary64 bits, 8 bytes little-endian each, and a byte: bit 0 the lower bound inside,
/// bit 1 the upper), a shape, leaf types or a bool (one byte).
fn put_binary_test(out: &mut Vec<u8>, key: &Key, pred: &Pred) {
    match key {
        Key::AttributeText(n) => {
            out.push(KEY_ATTR_TEXT);
            put_bytes(out, n.as_bytes());
        }
        Key::AttributeTyped(n) => {
            out.push(KEY_ATTR);
            put_bytes(out, n.as_bytes());
        }
        Key::AnyAttribute => out.push(KEY_ANY_ATTRIBUTE),
        Key::Header(n) => {
            out.push(KEY_HEADER);
            put_bytes(out, n.as_bytes());
        }
        Key::BodyPath(p) => {
            out.push(KEY_BODY);
            put_bytes(out, p.as_bytes());
        }
        Key::BodyPathEach(p) => {
            out.push(KEY_BODY_EACH);
            put_bytes(out, p.as_bytes());
        }
        Key::FieldPath(p, u32::MAX) => {
            out.push(KEY_FIELD);
            put_bytes(out, p.as_bytes());
        }
        Key::FieldPath(p, levels) => {
            out.push(KEY_FIELD_WITHIN);
            put_varint(out, u64::from(*levels));
            put_bytes(out, p.as_bytes());
        }
        Key::BodyIsObject => out.push(KEY_BODY_IS_OBJECT),
        Key::EventMember(n) => {
            out.push(KEY_EVENT);
            put_bytes(out, n.as_bytes());
        }
        Key::EventData(path) => {
            out.push(KEY_EVENT_DATA);
            put_count(out, path.len());
            for segment in path.iter() {
                put_bytes(out, segment.as_bytes());
            }
        }
    }
    match pred {
        Pred::Str { op, case, values } => {
            out.push(PRED_STR);
            out.push(match op {
                StrOp::Eq => 0,
                StrOp::Prefix => 1,
                StrOp::Suffix => 2,
                StrOp::Contains => 3,
            });
            out.push(u8::from(*case == Case::Fold));
            put_count(out, values.len());
            for v in values {
                put_bytes(out, v.as_bytes());
            }
        }
        Pred::Num { source, ranges } => {
            out.push(PRED_NUM);
            out.push(match source {
                NumSource::NumberLeaf => 0,
                NumSource::Text => 1,
                NumSource::Comparable => 2,
            });
            put_count(out, ranges.len());
            for r in ranges {
                out.extend_from_slice(&r.lo.to_bits().to_le_bytes());
                out.extend_from_slice(&r.hi.to_bits().to_le_bytes());
                out.push(u8::from(r.lo_inclusive) | (u8::from(r.hi_inclusive) << 1));
            }
        }
        Pred::Shape(shapes) => {
            out.push(PRED_SHAPE);
            out.push(shapes.0);
        }
        Pred::HasType(types) => {
            out.push(PRED_HAS_TYPE);
            out.push(types.0);
        }
        Pred::Bool(b) => {
            out.push(PRED_BOOL);
            out.push(u8::from(*b));
        }
        // Written as IR JSON (see `is_binary`).
        _ => {}
    }
}

/// Reads the body of a saved set; every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    #[inline]
    fn byte(&mut self) -> Result<u8, SetLoadError> {
        let (&b, rest) = self
            .bytes
            .split_first()
            .ok_or_else(|| encoding("truncated"))?;
        self.bytes = rest;
        Ok(b)
    }

    #[inline]
    fn varint(&mut self) -> Result<u64, SetLoadError> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                break;
            }
            n |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(encoding("a number does not fit 64 bits"))
    }

    #[inline]
    fn u32(&mut self) -> Result<u32, SetLoadError> {
        u32::try_from(self.varint()?).map_err(|_| encoding("a number does not fit 32 bits"))
    }

    /// A count of items each at least `least` bytes long: no more than the bytes left can hold.
    fn count(&mut self, least: usize) -> Result<usize, SetLoadError> {
        let n = self.varint()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.bytes.len() / least.max(1) => Ok(n),
            _ => Err(encoding(format!(
                "a count ({n}) larger than the bytes left can hold"
            ))),
        }
    }

    fn bytes(&mut self) -> Result<&'a [u8], SetLoadError> {
        let n = self.count(1)?;
        self.take(n)
    }

    fn text(&mut self, what: &str) -> Result<&'a str, SetLoadError> {
        std::str::from_utf8(self.bytes()?).map_err(|_| contents(format!("{what} is not UTF-8")))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], SetLoadError> {
        let (taken, rest) = self
            .bytes
            .split_at_checked(n)
            .ok_or_else(|| encoding("truncated"))?;
        self.bytes = rest;
        Ok(taken)
    }

    fn skip(&mut self, n: usize) -> Result<(), SetLoadError> {
        self.bytes = self.bytes.get(n..).ok_or_else(|| encoding("truncated"))?;
        Ok(())
    }

    #[inline]
    fn u64_le(&mut self) -> Result<u64, SetLoadError> {
        let (bits, rest) = self
            .bytes
            .split_first_chunk::<8>()
            .ok_or_else(|| encoding("truncated"))?;
        self.bytes = rest;
        Ok(u64::from_le_bytes(*bits))
    }
}

/// One group as read, before its subscriptions are placed.
struct SavedGroup<'a> {
    dialect: Dialect,
    tests: Vec<Test>,
    /// The distinct filters, in one list so that placing a subscription reads one entry.
    filters: Vec<SavedFilter<'a>>,
    /// The filters' code words in all.
    words: usize,
}

/// One distinct filter of a group as read.
struct SavedFilter<'a> {
    /// Its bytes (its code and required tests), taken when its first subscription is placed
    /// ([`read_filter`]).
    bytes: Option<&'a [u8]>,
    /// Its id in the group's engine, once placed.
    placed: Option<u32>,
    /// The number of subscriptions the bytes say hold it.
    declared: u32,
    /// The number placed so far.
    seen: u32,
}

/// Reads test `t` of group `g`.
fn read_test(text: &[u8], t: usize, g: usize) -> Result<Test, SetLoadError> {
    let at = || format!("test {t} of group {g}");
    let mut options = ParseOptions::default();
    options.duplicates = Duplicates::Reject;
    options.max_depth = TEST_DEPTH;
    let value = json::parse_with(text, &options)
        .map_err(|e| contents(format!("{} is not JSON text: {e}", at())))?;
    let node = crate::ir::json::from_json(&value, "")
        .map_err(|e| contents(format!("{} is not an IR test: {e}", at())))?;
    match node.kind {
        NodeKind::Test(test) => Ok(test),
        _ => Err(contents(format!("{} is not an IR test", at()))),
    }
}

/// Reads the key of a binary test ([`put_binary_test`]).
fn read_key(r: &mut Reader<'_>) -> Result<Key, SetLoadError> {
    let name = |r: &mut Reader<'_>| r.text("a key's name").map(Arc::<str>::from);
    Ok(match r.byte()? {
        KEY_ATTR_TEXT => Key::AttributeText(name(r)?),
        KEY_ATTR => Key::AttributeTyped(name(r)?),
        KEY_ANY_ATTRIBUTE => Key::AnyAttribute,
        KEY_HEADER => Key::Header(name(r)?),
        KEY_BODY => Key::BodyPath(name(r)?),
        KEY_BODY_EACH => Key::BodyPathEach(name(r)?),
        KEY_FIELD => Key::FieldPath(name(r)?, u32::MAX),
        KEY_FIELD_WITHIN => {
            let levels = r.u32()?;
            if levels == u32::MAX {
                return Err(contents("a level count of 2^32 - 1"));
            }
            Key::FieldPath(name(r)?, levels)
        }
        KEY_BODY_IS_OBJECT => Key::BodyIsObject,
        KEY_EVENT => Key::EventMember(name(r)?),
        KEY_EVENT_DATA => {
            let n = r.count(1)?;
            let mut path = Vec::with_capacity(n);
            for _ in 0..n {
                path.push(Box::<str>::from(r.text("a key's name")?));
            }
            Key::EventData(path.into())
        }
        other => return Err(contents(format!("unknown key kind {other}"))),
    })
}

/// Reads the predicate of a binary test ([`put_binary_test`]), checked as its IR JSON is: texts
/// sorted and distinct, bounds numbers, bit sets within their kind's bits.
fn read_pred(r: &mut Reader<'_>) -> Result<Pred, SetLoadError> {
    Ok(match r.byte()? {
        PRED_STR => {
            let op = match r.byte()? {
                0 => StrOp::Eq,
                1 => StrOp::Prefix,
                2 => StrOp::Suffix,
                3 => StrOp::Contains,
                other => return Err(contents(format!("unknown string operator {other}"))),
            };
            let case = match r.byte()? {
                0 => Case::Sensitive,
                1 => Case::Fold,
                other => return Err(contents(format!("unknown case handling {other}"))),
            };
            let n = r.count(1)?;
            let mut values: Vec<Arc<str>> = Vec::with_capacity(n);
            for _ in 0..n {
                let v = r.text("a string value")?;
                if values.last().is_some_and(|last| &**last >= v) {
                    return Err(contents("the strings are not sorted and distinct"));
                }
                values.push(v.into());
            }
            Pred::Str { op, case, values }
        }
        PRED_NUM => {
            let source = match r.byte()? {
                0 => NumSource::NumberLeaf,
                1 => NumSource::Text,
                2 => NumSource::Comparable,
                other => return Err(contents(format!("unknown number source {other}"))),
            };
            let n = r.count(17)?;
            let mut ranges = Vec::with_capacity(n);
            for _ in 0..n {
                let lo = f64::from_bits(r.u64_le()?);
                let hi = f64::from_bits(r.u64_le()?);
                let flags = r.byte()?;
                if lo.is_nan() || hi.is_nan() || flags > 3 {
                    return Err(contents("an interval that is not one"));
                }
                ranges.push(Interval {
                    lo,
                    lo_inclusive: flags & 1 != 0,
                    hi,
                    hi_inclusive: flags & 2 != 0,
                });
            }
            Pred::Num { source, ranges }
        }
        PRED_SHAPE => match r.byte()? {
            b if b & !Shapes::ALL.0 == 0 => Pred::Shape(Shapes(b)),
            _ => return Err(contents("a shape set beyond the shapes")),
        },
        PRED_HAS_TYPE => match r.byte()? {
            b if b & !LeafTypes::ALL.0 == 0 => Pred::HasType(LeafTypes(b)),
            _ => return Err(contents("a type set beyond the leaf types")),
        },
        PRED_BOOL => match r.byte()? {
            b @ (0 | 1) => Pred::Bool(b == 1),
            _ => return Err(contents("a bool that is neither 0 nor 1")),
        },
        other => return Err(contents(format!("unknown predicate kind {other}"))),
    })
}

/// Reads test `t` of group `g`: its tag, then its binary form or its IR JSON.
fn read_any_test(r: &mut Reader<'_>, t: usize, g: usize) -> Result<Test, SetLoadError> {
    match r.byte()? {
        TEST_JSON => read_test(r.bytes()?, t, g),
        TEST_BINARY => {
            let test = read_key(r).and_then(|key| {
                Ok(Test {
                    key,
                    pred: read_pred(r)?,
                })
            });
            test.map_err(|e| match e {
                SetLoadError::Contents(why) => contents(format!("test {t} of group {g}: {why}")),
                other => other,
            })
        }
        other => Err(contents(format!(
            "test {t} of group {g}: unknown test form {other}"
        ))),
    }
}

/// Reads a filter's code and required tests (bytes [`read_group`] delimited) into `code` and
/// `required`.
fn read_filter(
    bytes: &[u8],
    code: &mut Vec<u32>,
    required: &mut Vec<u32>,
) -> Result<(), SetLoadError> {
    let mut r = Reader { bytes };
    code.clear();
    required.clear();
    let n = r.count(4)?;
    let words = r.take(n * 4)?;
    code.extend(
        words
            .chunks_exact(4)
            .filter_map(|w| w.try_into().ok().map(u32::from_le_bytes)),
    );
    for _ in 0..r.count(1)? {
        required.push(r.u32()?);
    }
    Ok(())
}

fn read_group<'a>(r: &mut Reader<'a>, g: usize) -> Result<(Options, SavedGroup<'a>), SetLoadError> {
    let name = r.text("a dialect name")?;
    let dialect: Dialect = name
        .parse()
        .map_err(|_| contents(format!("group {g}: unknown dialect `{}`", excerpt(name))))?;
    let options = Options::from_json(dialect, r.text("options")?).map_err(SetLoadError::Options)?;
    let n = r.count(1)?;
    let mut tests = Vec::with_capacity(n);
    for t in 0..n {
        tests.push(read_any_test(r, t, g)?);
    }
    let n = r.count(3)?;
    let mut filters = Vec::with_capacity(n);
    let mut words = 0;
    for _ in 0..n {
        let start = r.bytes;
        let len = r.count(4)?;
        words += len;
        r.skip(len * 4)?;
        for _ in 0..r.count(1)? {
            r.u32()?;
        }
        let used = start.len() - r.bytes.len();
        filters.push(SavedFilter {
            bytes: start.get(..used),
            placed: None,
            declared: r.u32()?,
            seen: 0,
        });
    }
    Ok((
        options,
        SavedGroup {
            dialect,
            tests,
            filters,
            words,
        },
    ))
}

impl<Id: SetId> SubscriptionSet<Id> {
    /// Saves the set: its groups, tests, filters and subscriptions with their ids (see the
    /// [module documentation](crate::set_wire)). [`SubscriptionSet::from_bytes`] reads it back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&SET_MAGIC);
        put_varint(&mut out, SET_FORMAT_VERSION);
        let groups: Vec<(Dialect, EngineParts)> = self
            .saved_groups()
            .map(|(options, engine)| (options.dialect(), engine.parts()))
            .collect();
        // Filters are written in the order their first subscription comes, the order loading
        // adds them in: a loaded set saves to the same bytes.
        let mut order: Vec<Vec<u32>> = vec![Vec::new(); groups.len()];
        let mut position: Vec<Vec<u32>> = groups
            .iter()
            .map(|(_, parts)| vec![u32::MAX; parts.filter_at.len()])
            .collect();
        // Per group, per filter in `order`: its subscriptions.
        let mut subscribers: Vec<Vec<u32>> = vec![Vec::new(); groups.len()];
        for sub in self.saved() {
            let g = sub.group as usize;
            if let (Some(order), Some(at), Some(counts)) = (
                order.get_mut(g),
                position
                    .get_mut(g)
                    .and_then(|p| p.get_mut(sub.filter as usize)),
                subscribers.get_mut(g),
            ) {
                if *at == u32::MAX {
                    *at = u32::try_from(order.len()).unwrap_or(u32::MAX);
                    order.push(sub.filter);
                    counts.push(0);
                }
                if let Some(n) = counts.get_mut(*at as usize) {
                    *n += 1;
                }
            }
        }
        put_count(&mut out, groups.len());
        for ((((dialect, parts), (options, _)), order), counts) in groups
            .iter()
            .zip(self.saved_groups())
            .zip(&order)
            .zip(&subscribers)
        {
            put_bytes(&mut out, dialect.name().as_bytes());
            put_bytes(&mut out, options.to_json().to_string().as_bytes());
            put_count(&mut out, parts.tests.len());
            for test in &parts.tests {
                if is_binary(&test.pred) {
                    out.push(TEST_BINARY);
                    put_binary_test(&mut out, &test.key, &test.pred);
                } else {
                    out.push(TEST_JSON);
                    let node = Node::test(test.key.clone(), test.pred.clone(), "");
                    put_bytes(
                        &mut out,
                        crate::ir::json::to_json(&node).to_string().as_bytes(),
                    );
                }
            }
            put_count(&mut out, order.len());
            let filters = order.iter().filter_map(|&f| {
                let at = parts.filter_at.get(f as usize)?;
                parts.filters.get(*at as usize)
            });
            for ((code, required), &n) in filters.zip(counts) {
                put_count(&mut out, code.len());
                for w in code {
                    out.extend_from_slice(&w.to_le_bytes());
                }
                put_count(&mut out, required.len());
                for &t in required {
                    put_varint(&mut out, u64::from(t));
                }
                put_varint(&mut out, u64::from(n));
            }
        }
        put_count(&mut out, self.len());
        for sub in self.saved() {
            put_varint(&mut out, u64::from(sub.group));
            put_bytes(&mut out, &sub.id.id_bytes());
            let Some((dialect, _)) = groups.get(sub.group as usize) else {
                continue;
            };
            let filter = position
                .get(sub.group as usize)
                .and_then(|p| p.get(sub.filter as usize))
                .copied()
                .unwrap_or(u32::MAX);
            if *dialect == Dialect::EventBridge {
                out.push(match sub.pattern {
                    None => 0,
                    Some(None) => 1,
                    Some(Some(_)) => 2,
                });
            }
            put_varint(&mut out, u64::from(filter));
            if let Some(Some(pattern)) = sub.pattern {
                put_bytes(&mut out, pattern.text().as_bytes());
            }
        }
        let hash = fnv1a(&out);
        out.extend_from_slice(&hash.to_le_bytes());
        out
    }
}

impl<Id: SetId + Eq + Hash> SubscriptionSet<Id> {
    /// Loads a set saved by [`SubscriptionSet::to_bytes`].
    ///
    /// Safe on any input: never panics, allocates at most in proportion to `bytes`, and checks
    /// everything (see the [module documentation](crate::set_wire)), so the set matches messages
    /// as the saved one did. Costs about what inserting the set's distinct tests and filters
    /// costs, without compiling.
    pub fn from_bytes(bytes: &[u8]) -> Result<SubscriptionSet<Id>, SetLoadError> {
        let (body, hash) = bytes
            .split_last_chunk::<8>()
            .ok_or_else(|| encoding("too short"))?;
        let rest = body
            .strip_prefix(&SET_MAGIC)
            .ok_or_else(|| encoding("not a saved subscription set (no `FVM-SET` magic)"))?;
        if fnv1a(body) != u64::from_le_bytes(*hash) {
            return Err(encoding(
                "the hash does not match (the bytes were altered or cut)",
            ));
        }
        let mut r = Reader { bytes: rest };
        let version = r.varint()?;
        if version != SET_FORMAT_VERSION {
            return Err(encoding(format!(
                "unsupported saved set version {version} (this library reads version \
                 {SET_FORMAT_VERSION})"
            )));
        }
        let n = r.count(4)?;
        let mut options = Vec::with_capacity(n);
        let mut groups = Vec::with_capacity(n);
        for g in 0..n {
            let (o, group) = read_group(&mut r, g)?;
            if options.contains(&o) {
                return Err(contents(format!(
                    "group {g} repeats an earlier group's options"
                )));
            }
            options.push(o);
            groups.push(group);
        }
        let subscriptions = r.count(3)?;
        // Each filter's subscriber list is allocated once, at its size: the sizes add up to the
        // subscriptions, so a hostile count cannot allocate beyond them.
        let declared: u64 = groups
            .iter()
            .flat_map(|group| &group.filters)
            .map(|filter| u64::from(filter.declared))
            .sum();
        if declared != subscriptions as u64 {
            return Err(contents(format!(
                "the filters' subscriber counts add up to {declared}, not to the \
                 {subscriptions} subscriptions"
            )));
        }
        let mut set = SubscriptionSet::with_saved_groups(options, subscriptions);
        for (g, group) in groups.iter_mut().enumerate() {
            let engine = set
                .saved_engine(g as u32)
                .ok_or_else(|| contents("a group is missing"))?;
            engine.reserve(group.tests.len(), group.filters.len(), group.words);
            for (t, test) in std::mem::take(&mut group.tests).into_iter().enumerate() {
                let id = engine
                    .load_test(test)
                    .map_err(|e| contents(format!("test {t} of group {g}: {e}")))?;
                if id as usize != t {
                    return Err(contents(format!(
                        "test {t} of group {g} repeats an earlier test"
                    )));
                }
            }
        }
        let (mut code, mut required) = (Vec::new(), Vec::new());
        for s in 0..subscriptions {
            let g = r.u32()?;
            let id = Id::from_id_bytes(r.bytes()?)
                .ok_or_else(|| contents(format!("subscription {s}: not an id")))?;
            let group = groups
                .get_mut(g as usize)
                .ok_or_else(|| contents(format!("subscription {s}: no group {g}")))?;
            let kind = if group.dialect == Dialect::EventBridge {
                r.byte()?
            } else {
                0
            };
            let f = r.u32()? as usize;
            let (pattern, lowered) = match kind {
                0 => (None, None),
                1 => (Some(None), None),
                2 => {
                    let text = r.text("a kept pattern")?;
                    let (pattern, lowered) = Pattern::read(text).map_err(|e| {
                        contents(format!("subscription {s}: invalid kept pattern: {e}"))
                    })?;
                    (Some(Some(pattern)), Some(lowered))
                }
                other => {
                    return Err(contents(format!(
                        "subscription {s}: unknown pattern mark {other}"
                    )));
                }
            };
            let filter = group
                .filters
                .get_mut(f)
                .ok_or_else(|| contents(format!("subscription {s}: no filter {f} in group {g}")))?;
            if filter.seen >= filter.declared {
                return Err(contents(format!(
                    "subscription {s}: filter {f} of group {g} has more subscriptions than its \
                     count"
                )));
            }
            filter.seen += 1;
            let expected = filter.declared as usize;
            let saved = filter.bytes.take();
            let placed = &mut filter.placed;
            let (code, required) = (&mut code, &mut required);
            let pushed = set
                .push_saved(id, g, pattern, |engine, h, slots| {
                    match (*placed, saved) {
                        (Some(existing), _) => engine.load_subscriber(h, existing, slots, expected),
                        (None, Some(bytes)) => {
                            read_filter(bytes, code, required).map_err(|e| e.to_string())?;
                            engine.load_filter(h, code, required, slots)?;
                        }
                        (None, None) => return Err("a filter read twice".into()),
                    }
                    *placed = slots.holder(h).map(|holder| holder.filter);
                    Ok(())
                })
                .map_err(|e| contents(format!("subscription {s}: {e}")))?;
            if !pushed {
                return Err(contents(format!(
                    "subscription {s}: its id is there already"
                )));
            }
            if let Some(lowered) = lowered {
                let engine = set
                    .saved_engine(g)
                    .ok_or_else(|| contents("a group is missing"))?;
                let code = engine
                    .code_for(&crate::opt::optimize_copy(&lowered))
                    .map_err(|e| contents(e.to_string()))?;
                if Some(code.as_slice()) != placed.map(|f| engine.code_of(f)) {
                    return Err(contents(format!(
                        "subscription {s}: its kept pattern does not compile to its filter"
                    )));
                }
            }
        }
        if !r.bytes.is_empty() {
            return Err(encoding("bytes after the last subscription"));
        }
        if set.has_empty_group() {
            return Err(contents("a group without subscriptions"));
        }
        for (g, group) in groups.iter().enumerate() {
            if group.filters.iter().any(|filter| filter.bytes.is_some()) {
                return Err(contents(format!(
                    "group {g} has a filter no subscription holds"
                )));
            }
            let engine = set
                .saved_engine(g as u32)
                .ok_or_else(|| contents("a group is missing"))?;
            if engine.has_unused_tests() {
                return Err(contents(format!("group {g} has a test no filter reads")));
            }
            // Anchors are chosen once all the group's filters are in.
            engine.anchor_loaded();
        }
        Ok(set)
    }
}

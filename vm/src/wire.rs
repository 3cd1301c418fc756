//! Bytecode on the wire: [`Program::to_bytes`] and [`Program::from_bytes`].
//!
//! A broker control plane compiles a policy once and ships the program to every node. Nodes must
//! be safe against a corrupted or hostile encoding, so decoding is defensive from the first byte:
//!
//! - it never panics, on any input;
//! - it never allocates more than the input size implies: every length and count is checked
//!   against the bytes that remain *before* anything is allocated for it (a count of items is at
//!   most the remaining bytes divided by the smallest encoding of one item), and the instruction
//!   count is capped by [`MAX_INSTRUCTIONS`];
//! - it rejects bad magic bytes, unknown versions and flags, truncation anywhere, bytes left over in
//!   a section or after the last one, invalid UTF-8, unknown key kinds and opcodes, malformed
//!   operands, duplicate keys, unsorted or duplicate set members, unknown interval flags, decimal
//!   bounds that are not JSON numbers, and wildcards, segment patterns or CIDR blocks whose source
//!   text no longer compiles (they are shipped as source text and re-compiled on load);
//! - and finally it runs the verifier, [`Program::new`]: every register, slot, pool and jump index
//!   in bounds, jumps forward only, the stream ends in `ret`, sizes within limits, origins cover the
//!   code, no NaN interval bound.
//!
//! A program that passes is as safe as one built by the compiler: running it can never panic, read
//! out of bounds or loop (one step per instruction and binding row, each step linear in its pool
//! entry and the slot's leaves; a node that wants a tighter bound on hostile programs should cap
//! the encoding's size before decoding). So a fuzz target needs no precautions; the body of
//! `fuzz_target!(|data: &[u8]| { ... })` can be just:
//!
//! ```
//! use filtervm_vm::bind::Bindings;
//! use filtervm_vm::message::Message;
//! use filtervm_vm::program::Program;
//!
//! fn fuzz_one(data: &[u8], message: &Message) {
//!     if let Ok(program) = Program::from_bytes(data) {
//!         let mut bindings = Bindings::new();
//!         let bound = bindings.bind(program.keys(), message);
//!         let _ = program.eval(&bound, &mut Vec::new());
//!     }
//! }
//! fuzz_one(b"FVMP\x01\x00\x00\x00 arbitrary bytes", &Message::Unparsable);
//! ```
//!
//! # Layout (format version 1)
//!
//! All integers are little-endian. A *string* is a `u32` byte length and that many bytes of UTF-8;
//! a *count* is a `u32`. After the 8-byte header come twelve sections, each always present, in
//! this order (then the optional ones below), each framed as a `u8` section id and a `u32` body length:
//!
//! | id | section      | body                                                                  |
//! |----|--------------|-----------------------------------------------------------------------|
//! | —  | header       | magic `FVMP`, `u16` version (1), `u16` flags (0; others rejected)      |
//! | 1  | metadata     | opaque bytes for the layer above (the compiler puts dialect, options) |
//! | 2  | keys         | count, then per key a `u8` kind and its strings (see [`Key`] tags)   |
//! | 3  | strings      | count, strings                                                        |
//! | 4  | lists        | count, then per list: count, strings                                  |
//! | 5  | sets         | count, then per set: count, strings in strictly ascending byte order |
//! | 6  | ranges       | count, then per set: count, intervals (`u64` lo bits, `u64` hi bits, `u8` flags: bit 0 lo inclusive, bit 1 hi inclusive) |
//! | 7  | dec ranges   | count, then per set: count, intervals (display text, lo bound, hi bound; a bound is `u8` 0 none / 1 exclusive / 2 inclusive, then for 1 and 2 the decimal's text) |
//! | 8  | wildcards    | count, source strings                                                 |
//! | 9  | patterns     | count, source strings                                                 |
//! | 10 | cidrs        | count, source strings                                                 |
//! | 11 | code         | `u32` register count, count, instructions ([`Inst::encode`])          |
//! | 12 | origins      | count, source-pointer strings; count (0 or the code length), `u32` indexes |
//!
//! Then, each only when its pool is not empty (so a program without them encodes as before), in
//! this order:
//!
//! | id | section      | body                                                                  |
//! |----|--------------|-----------------------------------------------------------------------|
//! | 13 | blocks       | count, source strings (a CIDR block when it holds `/`, else one address; re-parsed) |
//! | 14 | case patterns| count, then per pattern a `u8` mode (0 equals, 1 prefix, 2 suffix) and its string |
//! | 15 | leaf tests   | count, then per list: count, instructions (tests of one leaf, verified) |
//!
//! Key kinds: 0 `AttributeText` (name), 1 `AttributeTyped` (name), 2 `AnyAttribute`, 3 `Header`
//! (name), 4 `BodyPath` (path), 5 `BodyIsObject`, 6 `EventMember` (name), 7 `EventData` (count,
//! segments), 8 `BodyPathEach` (path), 9 `FieldPath` (path, `u32` levels). Opcodes are the positions in [`crate::for_each_op!`]: new
//! instructions are appended at the end; renumbering or changing an operand needs a new
//! [`FORMAT_VERSION`].

use crate::address::Block;
use crate::bind::KeyTable;
use crate::case_pattern::{CaseMode, CasePattern};
use crate::cidr::Cidr;
use crate::excerpt::excerpt;
use crate::key::Key;
use crate::number::Decimal;
use crate::op::{Inst, Opcode, StrSet};
use crate::pattern::SegmentPattern;
use crate::program::{
    DecInterval, Interval, MAX_INSTRUCTIONS, Pools, Program, ProgramParts, VerifyError,
};
use crate::wildcard::Wildcard;
use std::sync::Arc;

/// The magic bytes every encoding starts with.
pub const MAGIC: [u8; 4] = *b"FVMP";

/// The format version this build writes and reads.
pub const FORMAT_VERSION: u16 = 1;

/// The header's length: magic, version and flags.
pub const HEADER_BYTES: usize = 8;

/// The smallest encoding of one instruction (`ret`: opcode and a register).
const MIN_INST_BYTES: usize = 5;

/// Section ids, in their order on the wire.
mod section {
    pub const METADATA: u8 = 1;
    pub const KEYS: u8 = 2;
    pub const STRINGS: u8 = 3;
    pub const LISTS: u8 = 4;
    pub const SETS: u8 = 5;
    pub const RANGES: u8 = 6;
    pub const DEC_RANGES: u8 = 7;
    pub const WILDCARDS: u8 = 8;
    pub const PATTERNS: u8 = 9;
    pub const CIDRS: u8 = 10;
    pub const CODE: u8 = 11;
    pub const ORIGINS: u8 = 12;
    pub const BLOCKS: u8 = 13;
    pub const CASES: u8 = 14;
    pub const LEAF_TESTS: u8 = 15;
}

/// Key kind tags.
mod tag {
    pub const ATTRIBUTE_TEXT: u8 = 0;
    pub const ATTRIBUTE_TYPED: u8 = 1;
    pub const ANY_ATTRIBUTE: u8 = 2;
    pub const HEADER: u8 = 3;
    pub const BODY_PATH: u8 = 4;
    pub const BODY_IS_OBJECT: u8 = 5;
    pub const EVENT_MEMBER: u8 = 6;
    pub const EVENT_DATA: u8 = 7;
    pub const BODY_PATH_EACH: u8 = 8;
    pub const FIELD_PATH: u8 = 9;
}

/// Interval flag bits.
const LO_INCLUSIVE: u8 = 1;
const HI_INCLUSIVE: u8 = 2;

/// Decimal bound tags.
const BOUND_NONE: u8 = 0;
const BOUND_EXCLUSIVE: u8 = 1;
const BOUND_INCLUSIVE: u8 = 2;

/// Why bytes were not accepted as a program (or a program could not be encoded).
///
/// `offset` fields are byte offsets into the input where the problem was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The input does not start with [`MAGIC`].
    #[error("not a filtervm program: bad magic bytes")]
    BadMagic,
    /// The format version is not [`FORMAT_VERSION`].
    #[error("unsupported format version {found} (this build reads version {FORMAT_VERSION})")]
    UnsupportedVersion {
        /// The version found.
        found: u16,
    },
    /// Flags this build does not know are set.
    #[error("unknown header flags {flags:#06x}")]
    UnknownFlags {
        /// The flags found.
        flags: u16,
    },
    /// The input ends (or a section ends) before something it declares.
    #[error("truncated at byte {offset}: {what} needs {needed} bytes, {available} remain")]
    Truncated {
        /// Where.
        offset: usize,
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes that remain.
        available: usize,
    },
    /// A section id other than the one expected at this point.
    #[error("byte {offset}: expected the {expected} section, found section id {found}")]
    UnexpectedSection {
        /// Where.
        offset: usize,
        /// The section expected.
        expected: &'static str,
        /// The id found.
        found: u8,
    },
    /// A declared count that the remaining bytes cannot hold, or above a limit.
    #[error("byte {offset}: {what} declares {count} items; at most {max} fit")]
    CountTooLarge {
        /// Where.
        offset: usize,
        /// What was counted.
        what: &'static str,
        /// The declared count.
        count: u64,
        /// The most the remaining input (or a limit) allows.
        max: u64,
    },
    /// A string that is not valid UTF-8.
    #[error("byte {offset}: {what} is not valid UTF-8")]
    InvalidUtf8 {
        /// Where.
        offset: usize,
        /// What the string is.
        what: &'static str,
    },
    /// A byte that is not an opcode.
    #[error("byte {offset}: instruction {index} has unknown opcode {byte:#04x}")]
    UnknownOpcode {
        /// Where.
        offset: usize,
        /// The instruction's index.
        index: usize,
        /// The byte found.
        byte: u8,
    },
    /// An instruction whose operands are truncated or malformed (e.g. a bool that is not 0 or 1).
    #[error("byte {offset}: instruction {index} ({mnemonic}) has truncated or malformed operands")]
    BadOperands {
        /// Where.
        offset: usize,
        /// The instruction's index.
        index: usize,
        /// Its mnemonic.
        mnemonic: &'static str,
    },
    /// A value that decodes but is not acceptable: an unknown key kind, a duplicate key, bad
    /// interval flags, a decimal bound that is not a JSON number, a pattern that no longer
    /// compiles, an unsorted set.
    #[error("byte {offset}: {what}: {reason}")]
    Invalid {
        /// Where.
        offset: usize,
        /// What was being read.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Bytes left over at the end of a section.
    #[error("byte {offset}: {count} unread bytes at the end of the {section} section")]
    SectionTrailing {
        /// Where.
        offset: usize,
        /// The section.
        section: &'static str,
        /// How many bytes.
        count: usize,
    },
    /// Bytes after the last section.
    #[error("byte {offset}: {count} trailing bytes after the last section")]
    TrailingBytes {
        /// Where.
        offset: usize,
        /// How many bytes.
        count: usize,
    },
    /// The decoded program failed verification.
    #[error("the decoded program is invalid: {0}")]
    Verify(#[from] VerifyError),
    /// Encoding only: a length does not fit the format's `u32` (a section over 4 GiB).
    #[error("the program is too large to encode: {what} is {len} bytes or items")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its size.
        len: usize,
    },
}

/// A decoded program and the metadata blob that came with it.
#[derive(Debug, Clone)]
pub struct Decoded<'a> {
    /// The verified program.
    pub program: Program,
    /// The opaque metadata section, borrowed from the input.
    pub metadata: &'a [u8],
}

impl Program {
    /// Encodes the program with an empty metadata blob (see the [module docs](crate::wire)).
    ///
    /// A program too large for the format (a section over 4 GiB) encodes to an empty vector, which
    /// [`Program::from_bytes`] rejects; use [`encode`] to get the error instead.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(self, &[]).unwrap_or_default()
    }

    /// Encodes the program with an opaque metadata blob (see [`Program::to_bytes`]).
    pub fn to_bytes_with_metadata(&self, metadata: &[u8]) -> Vec<u8> {
        encode(self, metadata).unwrap_or_default()
    }

    /// Decodes and verifies a program; the metadata blob is ignored (see [`decode`]).
    ///
    /// Safe on any input: never panics, allocates at most in proportion to `bytes`, and a program
    /// it returns can be run on any message without panicking, reading out of bounds or looping.
    pub fn from_bytes(bytes: &[u8]) -> Result<Program, WireError> {
        decode(bytes).map(|d| d.program)
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }

    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn len(&mut self, what: &'static str, len: usize) -> Result<(), WireError> {
        let v = u32::try_from(len).map_err(|_| WireError::TooLarge { what, len })?;
        self.u32(v);
        Ok(())
    }

    fn str(&mut self, what: &'static str, s: &str) -> Result<(), WireError> {
        self.len(what, s.len())?;
        self.out.extend_from_slice(s.as_bytes());
        Ok(())
    }

    fn strs<'s>(
        &mut self,
        what: &'static str,
        items: impl ExactSizeIterator<Item = &'s str>,
    ) -> Result<(), WireError> {
        self.len(what, items.len())?;
        for s in items {
            self.str(what, s)?;
        }
        Ok(())
    }

    /// Writes a section: its id, a length placeholder, the body, then patches the length.
    fn section(
        &mut self,
        id: u8,
        what: &'static str,
        body: impl FnOnce(&mut Writer) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        self.u8(id);
        let at = self.out.len();
        self.u32(0);
        body(self)?;
        let len = self.out.len().saturating_sub(at.saturating_add(4));
        let len = u32::try_from(len).map_err(|_| WireError::TooLarge { what, len })?;
        if let Some(slot) = self.out.get_mut(at..at.saturating_add(4)) {
            slot.copy_from_slice(&len.to_le_bytes());
        }
        Ok(())
    }
}

fn encode_key(w: &mut Writer, key: &Key) -> Result<(), WireError> {
    const WHAT: &str = "key";
    // Exhaustive on purpose: a new key kind must get a tag here (and in `decode_key`).
    match key {
        Key::AttributeText(n) => {
            w.u8(tag::ATTRIBUTE_TEXT);
            w.str(WHAT, n)
        }
        Key::AttributeTyped(n) => {
            w.u8(tag::ATTRIBUTE_TYPED);
            w.str(WHAT, n)
        }
        Key::AnyAttribute => {
            w.u8(tag::ANY_ATTRIBUTE);
            Ok(())
        }
        Key::Header(n) => {
            w.u8(tag::HEADER);
            w.str(WHAT, n)
        }
        Key::BodyPath(p) => {
            w.u8(tag::BODY_PATH);
            w.str(WHAT, p)
        }
        Key::BodyPathEach(p) => {
            w.u8(tag::BODY_PATH_EACH);
            w.str(WHAT, p)
        }
        Key::FieldPath(p, levels) => {
            w.u8(tag::FIELD_PATH);
            w.str(WHAT, p)?;
            w.u32(*levels);
            Ok(())
        }
        Key::BodyIsObject => {
            w.u8(tag::BODY_IS_OBJECT);
            Ok(())
        }
        Key::EventMember(n) => {
            w.u8(tag::EVENT_MEMBER);
            w.str(WHAT, n)
        }
        Key::EventData(path) => {
            w.u8(tag::EVENT_DATA);
            w.strs(WHAT, path.iter().map(|s| &**s))
        }
    }
}

fn encode_dec_bound(w: &mut Writer, bound: &Option<(Decimal, bool)>) -> Result<(), WireError> {
    match bound {
        None => w.u8(BOUND_NONE),
        Some((d, inclusive)) => {
            w.u8(if *inclusive {
                BOUND_INCLUSIVE
            } else {
                BOUND_EXCLUSIVE
            });
            w.str("decimal bound", &d.to_string())?;
        }
    }
    Ok(())
}

fn encode_pools(w: &mut Writer, pools: &Pools) -> Result<(), WireError> {
    w.section(section::STRINGS, "strings", |w| {
        w.strs("string", pools.strings.iter().map(|s| &**s))
    })?;
    w.section(section::LISTS, "lists", |w| {
        w.len("lists", pools.lists.len())?;
        pools
            .lists
            .iter()
            .try_for_each(|l| w.strs("list", l.iter().map(|s| &**s)))
    })?;
    w.section(section::SETS, "sets", |w| {
        w.len("sets", pools.sets.len())?;
        pools.sets.iter().try_for_each(|set| {
            // Sorted, so the encoding is deterministic whatever the hash order.
            let mut items: Vec<&str> = set.iter().map(|s| &**s).collect();
            items.sort_unstable();
            w.strs("set", items.into_iter())
        })
    })?;
    w.section(section::RANGES, "ranges", |w| {
        w.len("ranges", pools.ranges.len())?;
        pools.ranges.iter().try_for_each(|set| {
            w.len("ranges", set.len())?;
            for i in set {
                w.u64(i.lo.to_bits());
                w.u64(i.hi.to_bits());
                let mut flags = 0;
                if i.lo_inclusive {
                    flags |= LO_INCLUSIVE;
                }
                if i.hi_inclusive {
                    flags |= HI_INCLUSIVE;
                }
                w.u8(flags);
            }
            Ok(())
        })
    })?;
    w.section(section::DEC_RANGES, "dec ranges", |w| {
        w.len("dec ranges", pools.dec_ranges.len())?;
        pools.dec_ranges.iter().try_for_each(|set| {
            w.len("dec ranges", set.len())?;
            set.iter().try_for_each(|i| {
                w.str("dec range text", &i.text)?;
                encode_dec_bound(w, &i.lo)?;
                encode_dec_bound(w, &i.hi)
            })
        })
    })?;
    w.section(section::WILDCARDS, "wildcards", |w| {
        w.strs("wildcard", pools.wildcards.iter().map(Wildcard::source))
    })?;
    w.section(section::PATTERNS, "patterns", |w| {
        w.strs("pattern", pools.patterns.iter().map(SegmentPattern::source))
    })?;
    w.section(section::CIDRS, "cidrs", |w| {
        w.strs("cidr", pools.cidrs.iter().map(Cidr::source))
    })
}

/// Encodes a program and an opaque metadata blob; fails only when a length exceeds `u32`.
pub fn encode(program: &Program, metadata: &[u8]) -> Result<Vec<u8>, WireError> {
    let parts = program.parts();
    let mut w = Writer {
        out: Vec::with_capacity(64 + metadata.len() + parts.code.len() * 10),
    };
    w.out.extend_from_slice(&MAGIC);
    w.out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    w.out.extend_from_slice(&0u16.to_le_bytes());
    w.section(section::METADATA, "metadata", |w| {
        w.out.extend_from_slice(metadata);
        Ok(())
    })?;
    w.section(section::KEYS, "keys", |w| {
        w.len("keys", parts.keys.len())?;
        parts.keys.keys().iter().try_for_each(|k| encode_key(w, k))
    })?;
    encode_pools(&mut w, &parts.pools)?;
    w.section(section::CODE, "code", |w| {
        w.u32(parts.registers);
        w.len("code", parts.code.len())?;
        for inst in &parts.code {
            inst.encode(&mut w.out);
        }
        Ok(())
    })?;
    w.section(section::ORIGINS, "origins", |w| {
        w.strs("source pointer", parts.sources.iter().map(|s| &**s))?;
        w.len("origins", parts.origins.len())?;
        for &o in &parts.origins {
            w.u32(o);
        }
        Ok(())
    })?;
    encode_optional_pools(&mut w, &parts.pools)?;
    Ok(w.out)
}

/// The sections after `origins`, each written only when its pool is not empty, so that a
/// program without them encodes as the first layout did.
fn encode_optional_pools(w: &mut Writer, pools: &Pools) -> Result<(), WireError> {
    if !pools.blocks.is_empty() {
        w.section(section::BLOCKS, "blocks", |w| {
            w.strs("block", pools.blocks.iter().map(Block::source))
        })?;
    }
    if !pools.cases.is_empty() {
        w.section(section::CASES, "case patterns", |w| {
            w.len("case patterns", pools.cases.len())?;
            pools.cases.iter().try_for_each(|c| {
                w.u8(case_mode_tag(c.mode()));
                w.str("case pattern", c.source())
            })
        })?;
    }
    if !pools.leaf_tests.is_empty() {
        w.section(section::LEAF_TESTS, "leaf tests", |w| {
            w.len("leaf tests", pools.leaf_tests.len())?;
            pools.leaf_tests.iter().try_for_each(|tests| {
                w.len("leaf tests", tests.len())?;
                for inst in tests {
                    inst.encode(&mut w.out);
                }
                Ok(())
            })
        })?;
    }
    Ok(())
}

/// The wire tag of a case pattern's mode.
fn case_mode_tag(mode: CaseMode) -> u8 {
    match mode {
        CaseMode::Equals => 0,
        CaseMode::Prefix => 1,
        CaseMode::Suffix => 2,
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/// A cursor over the input that knows its absolute offset; every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len()
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        match self.bytes.split_at_checked(n) {
            Some((head, rest)) => {
                self.bytes = rest;
                self.offset = self.offset.saturating_add(n);
                Ok(head)
            }
            None => Err(WireError::Truncated {
                offset: self.offset,
                what,
                needed: n as u64,
                available: self.bytes.len(),
            }),
        }
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], WireError> {
        let bytes = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        self.array::<1>(what).map(|[b]| b)
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, WireError> {
        self.array(what).map(u16::from_le_bytes)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, WireError> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// Reads a count of items each at least `min_bytes` long, at most `limit`; checked against
    /// the remaining input before the caller allocates anything for it.
    fn count(
        &mut self,
        what: &'static str,
        min_bytes: usize,
        limit: usize,
    ) -> Result<usize, WireError> {
        let offset = self.offset;
        let count = self.u32(what)?;
        let max = (self.remaining() / min_bytes.max(1)).min(limit);
        match usize::try_from(count) {
            Ok(n) if n <= max => Ok(n),
            _ => Err(WireError::CountTooLarge {
                offset,
                what,
                count: u64::from(count),
                max: max as u64,
            }),
        }
    }

    fn str(&mut self, what: &'static str) -> Result<&'a str, WireError> {
        let len = self.u32(what)?;
        let offset = self.offset;
        let len = usize::try_from(len).map_err(|_| WireError::Truncated {
            offset,
            what,
            needed: u64::from(len),
            available: self.remaining(),
        })?;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|_| WireError::InvalidUtf8 { offset, what })
    }

    /// Reads `count` strings (count read first).
    /// [`Reader::strs`] as shared strings (a program's origins).
    fn shared_strs(&mut self, what: &'static str) -> Result<Vec<std::sync::Arc<str>>, WireError> {
        let n = self.count(what, 4, usize::MAX)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(self.str(what)?.into());
        }
        Ok(out)
    }

    fn strs<T: From<&'a str>>(&mut self, what: &'static str) -> Result<Vec<T>, WireError> {
        let n = self.count(what, 4, usize::MAX)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(self.str(what)?.into());
        }
        Ok(out)
    }

    /// Reads the framing of section `id` and returns a reader over its body.
    fn section(&mut self, id: u8, name: &'static str) -> Result<Reader<'a>, WireError> {
        let offset = self.offset;
        let found = self.u8(name)?;
        if found != id {
            return Err(WireError::UnexpectedSection {
                offset,
                expected: name,
                found,
            });
        }
        let len = self.u32(name)?;
        let body_offset = self.offset;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let bytes = self.take(len, name)?;
        Ok(Reader {
            bytes,
            offset: body_offset,
        })
    }

    /// Checks that a section was read to its end.
    fn finish(&self, section: &'static str) -> Result<(), WireError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(WireError::SectionTrailing {
                offset: self.offset,
                section,
                count: self.bytes.len(),
            })
        }
    }
}

fn invalid(offset: usize, what: &'static str, reason: String) -> WireError {
    WireError::Invalid {
        offset,
        what,
        reason,
    }
}

fn decode_key(r: &mut Reader<'_>) -> Result<Key, WireError> {
    const WHAT: &str = "key";
    let offset = r.offset;
    let key = match r.u8(WHAT)? {
        tag::ATTRIBUTE_TEXT => Key::AttributeText(r.str(WHAT)?.into()),
        tag::ATTRIBUTE_TYPED => Key::AttributeTyped(r.str(WHAT)?.into()),
        tag::ANY_ATTRIBUTE => Key::AnyAttribute,
        tag::HEADER => Key::Header(r.str(WHAT)?.into()),
        tag::BODY_PATH => Key::BodyPath(r.str(WHAT)?.into()),
        tag::BODY_IS_OBJECT => Key::BodyIsObject,
        tag::EVENT_MEMBER => Key::EventMember(r.str(WHAT)?.into()),
        tag::EVENT_DATA => Key::EventData(r.strs::<Box<str>>(WHAT)?.into()),
        tag::BODY_PATH_EACH => Key::BodyPathEach(r.str(WHAT)?.into()),
        tag::FIELD_PATH => {
            let path = r.str(WHAT)?.into();
            Key::FieldPath(path, r.u32(WHAT)?)
        }
        other => return Err(invalid(offset, WHAT, format!("unknown key kind {other}"))),
    };
    Ok(key)
}

fn decode_keys(r: &mut Reader<'_>) -> Result<KeyTable, WireError> {
    let n = r.count("keys", 1, usize::MAX)?;
    let mut keys = KeyTable::new();
    for i in 0..n {
        let offset = r.offset;
        let key = decode_key(r)?;
        // Interning a duplicate would shift every later slot: reject it.
        if keys.get(&key).is_some() {
            return Err(invalid(
                offset,
                "key",
                format!("slot {i} duplicates key {}", excerpt(&key)),
            ));
        }
        keys.intern(key);
    }
    Ok(keys)
}

fn decode_lists(r: &mut Reader<'_>) -> Result<Vec<Vec<Arc<str>>>, WireError> {
    let n = r.count("lists", 4, usize::MAX)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(r.strs("list")?);
    }
    Ok(out)
}

fn decode_sets(r: &mut Reader<'_>) -> Result<Vec<StrSet>, WireError> {
    let n = r.count("sets", 4, usize::MAX)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = r.count("set", 4, usize::MAX)?;
        let mut set = Vec::with_capacity(m);
        let mut previous: Option<&str> = None;
        for _ in 0..m {
            let offset = r.offset;
            let s = r.str("set member")?;
            if previous.is_some_and(|p| p >= s) {
                return Err(invalid(
                    offset,
                    "set member",
                    "members are not in strictly ascending order (unsorted or duplicate)".into(),
                ));
            }
            previous = Some(s);
            set.push(Arc::from(s));
        }
        out.push(set.into_iter().collect());
    }
    Ok(out)
}

fn decode_ranges(r: &mut Reader<'_>) -> Result<Vec<Vec<Interval>>, WireError> {
    const INTERVAL_BYTES: usize = 17;
    let n = r.count("ranges", 4, usize::MAX)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = r.count("interval set", INTERVAL_BYTES, usize::MAX)?;
        let mut set = Vec::with_capacity(m);
        for _ in 0..m {
            let lo = f64::from_bits(r.u64("interval")?);
            let hi = f64::from_bits(r.u64("interval")?);
            let offset = r.offset;
            let flags = r.u8("interval")?;
            if flags & !(LO_INCLUSIVE | HI_INCLUSIVE) != 0 {
                return Err(invalid(
                    offset,
                    "interval",
                    format!("unknown interval flags {flags:#04x}"),
                ));
            }
            // NaN bounds are rejected by the verifier.
            set.push(Interval {
                lo,
                lo_inclusive: flags & LO_INCLUSIVE != 0,
                hi,
                hi_inclusive: flags & HI_INCLUSIVE != 0,
            });
        }
        out.push(set);
    }
    Ok(out)
}

fn decode_dec_bound(r: &mut Reader<'_>) -> Result<Option<(Decimal, bool)>, WireError> {
    const WHAT: &str = "decimal bound";
    let offset = r.offset;
    let inclusive = match r.u8(WHAT)? {
        BOUND_NONE => return Ok(None),
        BOUND_EXCLUSIVE => false,
        BOUND_INCLUSIVE => true,
        other => return Err(invalid(offset, WHAT, format!("unknown bound kind {other}"))),
    };
    let offset = r.offset;
    let text = r.str(WHAT)?;
    match Decimal::parse(text) {
        Some(d) => Ok(Some((d, inclusive))),
        None => Err(invalid(
            offset,
            WHAT,
            format!("{} is not a JSON number", excerpt(format_args!("{text:?}"))),
        )),
    }
}

fn decode_dec_ranges(r: &mut Reader<'_>) -> Result<Vec<Vec<DecInterval>>, WireError> {
    // Display text length, and two one-byte bound kinds.
    const MIN_DEC_INTERVAL_BYTES: usize = 6;
    let n = r.count("dec ranges", 4, usize::MAX)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = r.count("decimal interval set", MIN_DEC_INTERVAL_BYTES, usize::MAX)?;
        let mut set = Vec::with_capacity(m);
        for _ in 0..m {
            let text: Box<str> = r.str("dec range text")?.into();
            let lo = decode_dec_bound(r)?;
            let hi = decode_dec_bound(r)?;
            set.push(DecInterval { lo, hi, text });
        }
        out.push(set);
    }
    Ok(out)
}

/// Reads source strings and compiles each with `compile` (a source that no longer compiles is
/// an error).
fn decode_compiled<T, E: std::fmt::Display>(
    r: &mut Reader<'_>,
    what: &'static str,
    compile: impl Fn(&str) -> Result<T, E>,
) -> Result<Vec<T>, WireError> {
    let n = r.count(what, 4, usize::MAX)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let offset = r.offset;
        let source = r.str(what)?;
        match compile(source) {
            Ok(v) => out.push(v),
            Err(e) => {
                return Err(invalid(
                    offset,
                    what,
                    format!(
                        "{} no longer compiles: {e}",
                        excerpt(format_args!("{source:?}"))
                    ),
                ));
            }
        }
    }
    Ok(out)
}

fn decode_code(r: &mut Reader<'_>) -> Result<(u32, Vec<Inst>), WireError> {
    let registers = r.u32("register count")?;
    let n = r.count("code", MIN_INST_BYTES, MAX_INSTRUCTIONS)?;
    let mut code = Vec::with_capacity(n);
    for index in 0..n {
        let offset = r.offset;
        let mut input = r.bytes;
        let Some(&byte) = input.first() else {
            return Err(WireError::Truncated {
                offset,
                what: "instruction",
                needed: 1,
                available: 0,
            });
        };
        let Some(opcode) = Opcode::from_byte(byte) else {
            return Err(WireError::UnknownOpcode {
                offset,
                index,
                byte,
            });
        };
        let Some(inst) = Inst::decode(&mut input) else {
            return Err(WireError::BadOperands {
                offset,
                index,
                mnemonic: opcode.mnemonic(),
            });
        };
        let used = r.bytes.len().saturating_sub(input.len());
        r.take(used, "instruction")?;
        code.push(inst);
    }
    Ok((registers, code))
}

fn decode_cases(r: &mut Reader<'_>) -> Result<Vec<CasePattern>, WireError> {
    // A mode byte and a string length.
    let n = r.count("case patterns", 5, usize::MAX)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let offset = r.offset;
        let mode = match r.u8("case pattern")? {
            0 => CaseMode::Equals,
            1 => CaseMode::Prefix,
            2 => CaseMode::Suffix,
            other => {
                return Err(invalid(
                    offset,
                    "case pattern",
                    format!("unknown case mode {other}"),
                ));
            }
        };
        out.push(CasePattern::new(r.str("case pattern")?, mode));
    }
    Ok(out)
}

fn decode_leaf_tests(r: &mut Reader<'_>) -> Result<Vec<Vec<Inst>>, WireError> {
    let n = r.count("leaf tests", 4, usize::MAX)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = r.count("leaf test", MIN_INST_BYTES, MAX_INSTRUCTIONS)?;
        let mut tests = Vec::with_capacity(m);
        for index in 0..m {
            let offset = r.offset;
            let mut input = r.bytes;
            let byte = input.first().copied().unwrap_or(0);
            let Some(opcode) = Opcode::from_byte(byte) else {
                return Err(WireError::UnknownOpcode {
                    offset,
                    index,
                    byte,
                });
            };
            let Some(inst) = Inst::decode(&mut input) else {
                return Err(WireError::BadOperands {
                    offset,
                    index,
                    mnemonic: opcode.mnemonic(),
                });
            };
            let used = r.bytes.len().saturating_sub(input.len());
            r.take(used, "leaf test")?;
            tests.push(inst);
        }
        out.push(tests);
    }
    Ok(out)
}

fn decode_origins(r: &mut Reader<'_>) -> Result<(Vec<std::sync::Arc<str>>, Vec<u32>), WireError> {
    let sources = r.shared_strs("source pointer")?;
    let n = r.count("origins", 4, MAX_INSTRUCTIONS)?;
    let mut origins = Vec::with_capacity(n);
    for _ in 0..n {
        origins.push(r.u32("origin")?);
    }
    Ok((sources, origins))
}

/// Decodes and verifies a program, returning it with its metadata blob.
///
/// See the [module documentation](crate::wire) for the layout and every check made. Safe on any
/// input: never panics, allocates at most in proportion to `bytes`, and the program returned is
/// verified.
pub fn decode(bytes: &[u8]) -> Result<Decoded<'_>, WireError> {
    let mut r = Reader { bytes, offset: 0 };
    if r.take(MAGIC.len(), "magic").ok() != Some(&MAGIC[..]) {
        return Err(WireError::BadMagic);
    }
    let version = r.u16("version")?;
    if version != FORMAT_VERSION {
        return Err(WireError::UnsupportedVersion { found: version });
    }
    let flags = r.u16("flags")?;
    if flags != 0 {
        return Err(WireError::UnknownFlags { flags });
    }

    /// Reads one section with `body`, which must consume it entirely.
    fn read<'a, T>(
        r: &mut Reader<'a>,
        id: u8,
        name: &'static str,
        body: impl FnOnce(&mut Reader<'a>) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        let mut s = r.section(id, name)?;
        let value = body(&mut s)?;
        s.finish(name)?;
        Ok(value)
    }

    let metadata = read(&mut r, section::METADATA, "metadata", |s| {
        let n = s.remaining();
        s.take(n, "metadata")
    })?;
    let keys = read(&mut r, section::KEYS, "keys", decode_keys)?;
    let strings = read(&mut r, section::STRINGS, "strings", |s| s.strs("string"))?;
    let lists = read(&mut r, section::LISTS, "lists", decode_lists)?;
    let sets = read(&mut r, section::SETS, "sets", decode_sets)?;
    let ranges = read(&mut r, section::RANGES, "ranges", decode_ranges)?;
    let dec_ranges = read(&mut r, section::DEC_RANGES, "dec ranges", decode_dec_ranges)?;
    let wildcards = read(&mut r, section::WILDCARDS, "wildcards", |s| {
        decode_compiled(s, "wildcard", Wildcard::compile)
    })?;
    let patterns = read(&mut r, section::PATTERNS, "patterns", |s| {
        decode_compiled(s, "pattern", SegmentPattern::compile)
    })?;
    let cidrs = read(&mut r, section::CIDRS, "cidrs", |s| {
        decode_compiled(s, "cidr", Cidr::parse)
    })?;
    let (registers, code) = read(&mut r, section::CODE, "code", decode_code)?;
    let (sources, origins) = read(&mut r, section::ORIGINS, "origins", decode_origins)?;
    // The optional sections, each at most once and in order.
    let mut blocks = Vec::new();
    let mut cases = Vec::new();
    let mut leaf_tests = Vec::new();
    let mut last = section::ORIGINS;
    while let Some(&id) = r.bytes.first() {
        if id <= last || id > section::LEAF_TESTS {
            break;
        }
        last = id;
        match id {
            section::BLOCKS => {
                blocks = read(&mut r, id, "blocks", |s| {
                    decode_compiled(s, "block", Block::from_source)
                })?;
            }
            section::CASES => cases = read(&mut r, id, "case patterns", decode_cases)?,
            _ => leaf_tests = read(&mut r, id, "leaf tests", decode_leaf_tests)?,
        }
    }
    if !r.bytes.is_empty() {
        return Err(WireError::TrailingBytes {
            offset: r.offset,
            count: r.remaining(),
        });
    }
    let program = Program::new(ProgramParts {
        keys,
        pools: Pools {
            strings,
            lists,
            sets,
            ranges,
            dec_ranges,
            wildcards,
            patterns,
            cidrs,
            blocks,
            cases,
            leaf_tests,
        },
        code,
        origins,
        sources,
        registers,
    })?;
    Ok(Decoded { program, metadata })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{Reg, SlotRef, StrRef};

    fn tiny() -> Program {
        let mut parts = ProgramParts::default();
        let slot = parts.keys.intern(Key::Header("h".into()));
        parts.pools.strings.push("v".into());
        parts.code = vec![
            Inst::StrEq {
                dst: Reg(0),
                slot: SlotRef(slot),
                s: StrRef(0),
            },
            Inst::Ret { src: Reg(0) },
        ];
        parts.origins = vec![0, u32::MAX];
        parts.sources = vec!["/h".into()];
        parts.registers = 1;
        Program::new(parts).unwrap()
    }

    #[test]
    fn header_is_magic_version_flags() {
        let bytes = tiny().to_bytes();
        assert_eq!(&bytes[..4], b"FVMP");
        assert_eq!(&bytes[4..6], &1u16.to_le_bytes());
        assert_eq!(&bytes[6..8], &[0, 0]);
        assert_eq!(bytes[HEADER_BYTES], section::METADATA);
    }

    #[test]
    fn metadata_round_trips_and_is_borrowed() {
        let bytes = tiny().to_bytes_with_metadata(b"hello");
        let d = decode(&bytes).unwrap();
        assert_eq!(d.metadata, b"hello");
        assert_eq!(d.program.origin(0), Some("/h"));
        assert_eq!(d.program.disassemble(), tiny().disassemble());
    }

    #[test]
    fn version_and_flags_are_checked() {
        let mut bytes = tiny().to_bytes();
        bytes[4] = 2;
        assert_eq!(
            Program::from_bytes(&bytes).unwrap_err(),
            WireError::UnsupportedVersion { found: 2 }
        );
        let mut bytes = tiny().to_bytes();
        bytes[6] = 1;
        assert_eq!(
            Program::from_bytes(&bytes).unwrap_err(),
            WireError::UnknownFlags { flags: 1 }
        );
        assert_eq!(Program::from_bytes(b"").unwrap_err(), WireError::BadMagic);
    }

    #[test]
    fn count_is_checked_before_allocating() {
        let mut r = Reader {
            bytes: &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
            offset: 0,
        };
        assert!(matches!(
            r.count("x", 4, usize::MAX),
            Err(WireError::CountTooLarge { max: 1, .. })
        ));
    }
}

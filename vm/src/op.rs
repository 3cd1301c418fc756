//! The instruction set, declared once.
//!
//! [`for_each_op!`](crate::for_each_op) lists every instruction with its doc comment, mnemonic and typed operands.
//! The [`Inst`] enum, its [`Opcode`], the byte encoder and decoder, the verifier's operand checks and
//! the disassembler are all generated from that one list, so adding an instruction is one line here
//! plus its handler in `exec.rs` (the compiler's codegen decides when to emit it).
//!
//! Naming: every test reads one slot and writes one boolean register `dst`; it holds when *some* leaf
//! of the slot satisfies it (a quantifier "no leaf" is `not` of it). `*_fold` variants compare
//! ignoring case against constants folded at compile time (EG-31).

use crate::address::Block;
use crate::bind::KeyTable;
use crate::case_pattern::CasePattern;
use crate::cidr::Cidr;
use crate::interval::{DecInterval, Interval};
use crate::pattern::SegmentPattern;
use crate::value::{LeafTypes, Shapes};
use crate::wildcard::Wildcard;
use ahash::AHashSet;
use std::fmt::{self, Write as _};
use std::sync::Arc;

/// A boolean register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reg(pub u32);
/// A slot of the key table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlotRef(pub u32);
/// A forward jump target (an instruction index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Target(pub u32);
/// An index into the string pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StrRef(pub u32);
/// An index into the string-list pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListRef(pub u32);
/// An index into the string-set (hash set) pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SetRef(pub u32);
/// An index into the binary64 interval-set pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RangesRef(pub u32);
/// An index into the exact-decimal interval-set pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecRangesRef(pub u32);
/// An index into the wildcard pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WildRef(pub u32);
/// An index into the segment-pattern pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PatRef(pub u32);
/// An index into the CIDR pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CidrRef(pub u32);
/// An index into the address-block pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockRef(pub u32);
/// An index into the case-pattern pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CaseRef(pub u32);
/// An index into the leaf-test pool (lists of test instructions run on one leaf).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TestsRef(pub u32);

/// Lists every instruction: `Name "mnemonic" { operand: Type, ... }` with its doc comment.
///
/// The opcode byte is the position in this list and is part of the wire format
/// ([`crate::wire`]): append new instructions at the end, never reorder or change operands
/// without bumping [`crate::wire::FORMAT_VERSION`].
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_op {
    ($m:ident) => {
        $m! {
            /// `dst = value`.
            Const "const" { dst: Reg, value: bool };
            /// `dst = shape(slot) ∈ shapes` (presence, null, array and object checks).
            Shape "shape" { dst: Reg, slot: SlotRef, shapes: Shapes };
            /// `dst = some leaf of slot has a type in types`.
            HasType "has_type" { dst: Reg, slot: SlotRef, types: LeafTypes };
            /// `dst = some string leaf equals the string`.
            StrEq "str_eq" { dst: Reg, slot: SlotRef, s: StrRef };
            /// `dst = some string leaf is in the hash set`.
            StrIn "str_in" { dst: Reg, slot: SlotRef, set: SetRef };
            /// `dst = some string leaf starts with one of the strings`.
            StrPrefix "str_prefix" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf ends with one of the strings`.
            StrSuffix "str_suffix" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf contains one of the strings`.
            StrContains "str_contains" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf equals one of the folded strings, ignoring case`.
            StrEqFold "str_eq_fold" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf starts with one of the folded strings, ignoring case`.
            StrPrefixFold "str_prefix_fold" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf ends with one of the folded strings, ignoring case`.
            StrSuffixFold "str_suffix_fold" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf contains one of the folded strings, ignoring case`.
            StrContainsFold "str_contains_fold" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf matches the SNS wildcard`.
            Wildcard "wildcard" { dst: Reg, slot: SlotRef, pat: WildRef };
            /// `dst = some string leaf matches the dot-segment pattern`.
            Segment "segment" { dst: Reg, slot: SlotRef, pat: PatRef };
            /// `dst = some string leaf is an IP address inside the CIDR block`.
            Cidr "cidr" { dst: Reg, slot: SlotRef, net: CidrRef };
            /// `dst = some number leaf lies in the binary64 interval set`.
            NumIn "num_in" { dst: Reg, slot: SlotRef, ranges: RangesRef };
            /// `dst = some string leaf parses as a JSON number (B-10, S9) inside the interval set`.
            TextNumIn "text_num_in" { dst: Reg, slot: SlotRef, ranges: RangesRef };
            /// `dst = some number leaf lies in the exact-decimal interval set (EG-33)`.
            DecIn "dec_in" { dst: Reg, slot: SlotRef, ranges: DecRangesRef };
            /// `dst = some bool leaf equals value`.
            BoolEq "bool_eq" { dst: Reg, slot: SlotRef, value: bool };
            /// `dst = a & b`.
            And "and" { dst: Reg, a: Reg, b: Reg };
            /// `dst = a | b`.
            Or "or" { dst: Reg, a: Reg, b: Reg };
            /// `dst = !src`.
            Not "not" { dst: Reg, src: Reg };
            /// Jump forward to `target` when `cond` is false.
            JumpIfFalse "jump_if_false" { cond: Reg, target: Target };
            /// Jump forward to `target` when `cond` is true.
            JumpIfTrue "jump_if_true" { cond: Reg, target: Target };
            /// Return `src` as the verdict.
            Ret "ret" { src: Reg };
            /// `dst = some number leaf is comparable (its text is its binary64's shortest form,
            /// EB-17) and lies in the binary64 interval set`.
            CmpNumIn "cmp_num_in" { dst: Reg, slot: SlotRef, ranges: RangesRef };
            /// `dst = some number leaf is written exactly as one of the strings`.
            NumTextIn "num_text_in" { dst: Reg, slot: SlotRef, list: ListRef };
            /// `dst = some string leaf is an IP address (EB-28) inside the block`.
            AddrIn "addr_in" { dst: Reg, slot: SlotRef, block: BlockRef };
            /// `dst = some string leaf matches the case pattern (full case mappings, EB-20)`.
            CaseIn "case_in" { dst: Reg, slot: SlotRef, pat: CaseRef };
            /// `dst = some leaf (of any type) satisfies none of the leaf tests`.
            Except "except" { dst: Reg, slot: SlotRef, tests: TestsRef };
        }
    };
}

/// An operand type: how it is encoded, checked and shown.
pub trait Operand: Sized + Copy {
    /// Appends the encoding.
    fn encode(self, out: &mut Vec<u8>);
    /// Reads the encoding.
    fn decode(input: &mut &[u8]) -> Option<Self>;
    /// Checks the operand against the parts of the program it sits in (instruction index `at`).
    fn check(self, program: &ProgramParts, at: usize) -> Result<(), String>;
    /// Writes the operand for the disassembly.
    fn show(self, program: &ProgramParts, out: &mut String);
    /// The register, when the operand is one.
    fn as_reg(self) -> Option<Reg> {
        None
    }
}

fn read_u32(input: &mut &[u8]) -> Option<u32> {
    let (head, rest) = input.split_first_chunk::<4>()?;
    *input = rest;
    Some(u32::from_le_bytes(*head))
}

fn read_u8(input: &mut &[u8]) -> Option<u8> {
    let (head, rest) = input.split_first()?;
    *input = rest;
    Some(*head)
}

fn quoted(s: &str) -> String {
    crate::json::Quoted(s).to_string()
}

/// Why an index operand is rejected: out of line, so that the checks of valid operands (all of
/// a program's, mostly) are inlined into [`Inst::check`] (BENCHMARKS.md, "The back
/// end, fourth round").
#[cold]
#[inline(never)]
fn out_of_range(prefix: &str, i: u32, len: usize) -> String {
    format!("{prefix}{i} out of range ({len} available)")
}

/// Why jump target `t` of the instruction at `at` (of `len`) is rejected; out of line, as
/// [`out_of_range`].
#[cold]
#[inline(never)]
fn bad_target(t: usize, at: usize, len: usize) -> String {
    if t <= at {
        format!("jump target @{t} does not lie forward of @{at}")
    } else {
        format!("jump target @{t} past the end ({len} instructions)")
    }
}

macro_rules! index_operand {
    ($ty:ident, $prefix:literal, |$p:ident| $len:expr, |$p2:ident, $i:ident, $out:ident| $show:expr, as_reg) => {
        index_operand!(@impl $ty, $prefix, |$p| $len, |$p2, $i, $out| $show, fn as_reg(self) -> Option<Reg> { Some(Reg(self.0)) });
    };
    ($ty:ident, $prefix:literal, |$p:ident| $len:expr, |$p2:ident, $i:ident, $out:ident| $show:expr) => {
        index_operand!(@impl $ty, $prefix, |$p| $len, |$p2, $i, $out| $show,);
    };
    (@impl $ty:ident, $prefix:literal, |$p:ident| $len:expr, |$p2:ident, $i:ident, $out:ident| $show:expr, $($extra:item)?) => {
        impl Operand for $ty {
            fn encode(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.0.to_le_bytes());
            }
            fn decode(input: &mut &[u8]) -> Option<Self> {
                read_u32(input).map($ty)
            }
            #[inline]
            fn check(self, $p: &ProgramParts, _at: usize) -> Result<(), String> {
                let len: usize = $len;
                if (self.0 as usize) < len {
                    Ok(())
                } else {
                    Err(out_of_range($prefix, self.0, len))
                }
            }
            fn show(self, $p2: &ProgramParts, $out: &mut String) {
                let $i = self.0 as usize;
                let _ = write!($out, "{}{}", $prefix, $i);
                #[allow(clippy::no_effect, clippy::unused_unit)]
                $show;
            }
            $($extra)?
        }
    };
}

index_operand!(Reg, "r", |p| p.register_count(), |_p, _i, _o| (), as_reg);
index_operand!(SlotRef, "slot", |p| p.keys().len(), |p, i, o| {
    if let Some(k) = p.keys().keys().get(i) {
        let _ = write!(o, "({k})");
    }
});
index_operand!(StrRef, "str", |p| p.pools().strings.len(), |p, i, o| {
    if let Some(s) = p.pools().strings.get(i) {
        let _ = write!(o, " {}", quoted(s));
    }
});
index_operand!(ListRef, "list", |p| p.pools().lists.len(), |p, i, o| {
    if let Some(l) = p.pools().lists.get(i) {
        let items: Vec<String> = l.iter().map(|s| quoted(s)).collect();
        let _ = write!(o, " [{}]", items.join(", "));
    }
});
index_operand!(SetRef, "set", |p| p.pools().sets.len(), |p, i, o| {
    if let Some(s) = p.pools().sets.get(i) {
        let mut items: Vec<String> = s.iter().map(|s| quoted(s)).collect();
        items.sort();
        let _ = write!(o, " {{{}}}", items.join(", "));
    }
});
index_operand!(
    RangesRef,
    "ranges",
    |p| p.pools().ranges.len(),
    |p, i, o| {
        if let Some(r) = p.pools().ranges.get(i) {
            let _ = write!(o, " {}", crate::interval::show_intervals(r));
        }
    }
);
index_operand!(
    DecRangesRef,
    "decs",
    |p| p.pools().dec_ranges.len(),
    |p, i, o| {
        if let Some(r) = p.pools().dec_ranges.get(i) {
            let _ = write!(o, " {}", crate::interval::show_dec_intervals(r));
        }
    }
);
index_operand!(WildRef, "wild", |p| p.pools().wildcards.len(), |p, i, o| {
    if let Some(w) = p.pools().wildcards.get(i) {
        let _ = write!(o, " {}", quoted(w.source()));
    }
});
index_operand!(PatRef, "pat", |p| p.pools().patterns.len(), |p, i, o| {
    if let Some(w) = p.pools().patterns.get(i) {
        let _ = write!(o, " {}", quoted(w.source()));
    }
});
index_operand!(CidrRef, "cidr", |p| p.pools().cidrs.len(), |p, i, o| {
    if let Some(w) = p.pools().cidrs.get(i) {
        let _ = write!(o, " {}", quoted(w.source()));
    }
});

index_operand!(BlockRef, "block", |p| p.pools().blocks.len(), |p, i, o| {
    if let Some(b) = p.pools().blocks.get(i) {
        let _ = write!(o, " {}", quoted(b.source()));
    }
});
index_operand!(CaseRef, "case", |p| p.pools().cases.len(), |p, i, o| {
    if let Some(c) = p.pools().cases.get(i) {
        let _ = write!(o, " {c}");
    }
});
index_operand!(
    TestsRef,
    "tests",
    |p| p.pools().leaf_tests.len(),
    |p, i, o| {
        if let Some(tests) = p.pools().leaf_tests.get(i) {
            let shown: Vec<String> = tests.iter().map(|t| t.show_leaf_test(p)).collect();
            let _ = write!(o, " [{}]", shown.join("; "));
        }
    }
);

impl Operand for Target {
    fn encode(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        read_u32(input).map(Target)
    }
    #[inline]
    fn check(self, program: &ProgramParts, at: usize) -> Result<(), String> {
        let t = self.0 as usize;
        if t <= at || t >= program.code().len() {
            Err(bad_target(t, at, program.code().len()))
        } else {
            Ok(())
        }
    }
    fn show(self, _program: &ProgramParts, out: &mut String) {
        let _ = write!(out, "@{}", self.0);
    }
}

impl Operand for bool {
    fn encode(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        match read_u8(input)? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn check(self, _program: &ProgramParts, _at: usize) -> Result<(), String> {
        Ok(())
    }
    fn show(self, _program: &ProgramParts, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

impl Operand for Shapes {
    fn encode(self, out: &mut Vec<u8>) {
        out.push(self.0);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        read_u8(input).map(Shapes)
    }
    fn check(self, _program: &ProgramParts, _at: usize) -> Result<(), String> {
        if self.0 & !Shapes::ALL.0 == 0 {
            Ok(())
        } else {
            Err(format!("bad shape mask {:#x}", self.0))
        }
    }
    fn show(self, _program: &ProgramParts, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

impl Operand for LeafTypes {
    fn encode(self, out: &mut Vec<u8>) {
        out.push(self.0);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        read_u8(input).map(LeafTypes)
    }
    fn check(self, _program: &ProgramParts, _at: usize) -> Result<(), String> {
        if self.0 & !LeafTypes::ALL.0 == 0 {
            Ok(())
        } else {
            Err(format!("bad type mask {:#x}", self.0))
        }
    }
    fn show(self, _program: &ProgramParts, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

macro_rules! define_inst {
    ($( $(#[$doc:meta])* $name:ident $mnemonic:literal { $($field:ident : $ty:ty),* } ;)*) => {
        /// One instruction (see [`for_each_op!`](crate::for_each_op) for the list).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Inst {
            $( $(#[$doc])* $name { $( #[allow(missing_docs)] $field: $ty ),* }, )*
        }

        /// The opcode byte of each instruction.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Opcode {
            $( $(#[$doc])* $name, )*
        }

        impl Opcode {
            /// Every opcode, in encoding order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name),*];

            /// The opcode of a byte, if it is one.
            pub fn from_byte(byte: u8) -> Option<Opcode> {
                Opcode::ALL.get(byte as usize).copied()
            }

            /// The mnemonic used by the disassembler.
            pub fn mnemonic(self) -> &'static str {
                match self { $( Opcode::$name => $mnemonic, )* }
            }
        }

        impl Inst {
            /// The instruction's opcode.
            pub fn opcode(&self) -> Opcode {
                match self { $( Inst::$name { .. } => Opcode::$name, )* }
            }

            /// Appends the byte encoding: the opcode, then each operand.
            pub fn encode(&self, out: &mut Vec<u8>) {
                match *self {
                    $( Inst::$name { $($field),* } => {
                        out.push(Opcode::$name as u8);
                        $( Operand::encode($field, out); )*
                    } )*
                }
            }

            /// Reads one instruction from the front of `input`.
            pub fn decode(input: &mut &[u8]) -> Option<Inst> {
                let (&byte, rest) = input.split_first()?;
                *input = rest;
                match Opcode::from_byte(byte)? {
                    $( Opcode::$name => Some(Inst::$name { $( $field: <$ty as Operand>::decode(input)? ),* }), )*
                }
            }

            /// Checks every operand against `program` (the instruction sits at index `at`).
            #[inline(always)]
            pub fn check(&self, program: &ProgramParts, at: usize) -> Result<(), String> {
                match *self {
                    $( Inst::$name { $($field),* } => {
                        $( Operand::check($field, program, at)?; )*
                        Ok(())
                    } )*
                }
            }

            /// The registers this instruction writes.
            pub fn written(&self) -> Option<Reg> {
                match *self {
                    $( Inst::$name { $($field),* } => {
                        $( if stringify!($field) == "dst" { return Operand::as_reg($field); } )*
                        None
                    } )*
                }
            }

            /// One disassembly line: mnemonic and operands.
            pub fn show(&self, program: &ProgramParts) -> String {
                let mut out = String::new();
                match *self {
                    $( Inst::$name { $($field),* } => {
                        out.push_str($mnemonic);
                        let mut first = true;
                        $(
                            out.push_str(if first { " " } else { ", " });
                            first = false;
                            Operand::show($field, program, &mut out);
                        )*
                        let _ = first;
                    } )*
                }
                out
            }

            /// One test of a leaf-test list (see [`Inst::Except`]): the mnemonic and its
            /// constant operands (the register and slot it is given are the enclosing
            /// instruction's).
            pub fn show_leaf_test(&self, program: &ProgramParts) -> String {
                let mut out = String::new();
                match *self {
                    $( Inst::$name { $($field),* } => {
                        out.push_str($mnemonic);
                        $(
                            if stringify!($field) != "dst" && stringify!($field) != "slot" {
                                out.push(' ');
                                Operand::show($field, program, &mut out);
                            }
                        )*
                    } )*
                }
                out
            }
        }
    };
}

for_each_op!(define_inst);

/// The constant pools a program's instructions index.
///
/// Strings are shared (`Arc`) with the IR they were generated from, so a pool entry is a
/// reference count, not a copy (BENCHMARKS.md, "Shared keys and constants on the compile path").
#[derive(Debug, Clone, Default)]
pub struct Pools {
    /// Single strings.
    pub strings: Vec<Arc<str>>,
    /// String lists (prefix, suffix, substring and folded alternatives).
    pub lists: Vec<Vec<Arc<str>>>,
    /// String sets (exact alternatives).
    pub sets: Vec<StrSet>,
    /// Binary64 interval sets.
    pub ranges: Vec<Vec<Interval>>,
    /// Exact-decimal interval sets.
    pub dec_ranges: Vec<Vec<DecInterval>>,
    /// SNS wildcards.
    pub wildcards: Vec<Wildcard>,
    /// Dot-segment patterns.
    pub patterns: Vec<SegmentPattern>,
    /// CIDR blocks.
    pub cidrs: Vec<Cidr>,
    /// Address blocks as EventBridge reads them (EB-13, EB-27).
    pub blocks: Vec<Block>,
    /// Case-insensitive patterns with full case mappings (EB-20, EB-21).
    pub cases: Vec<CasePattern>,
    /// Lists of test instructions an `except` runs on each leaf: each a test (not `except`),
    /// whose register and slot operands are ignored there (they must still be in range).
    pub leaf_tests: Vec<Vec<Inst>>,
}

/// The members of a string set ([`Pools::sets`], the alternatives a `str_in` instruction compares
/// with): a few in a sorted list, compared one by one, more in a hash set. Most policies' sets
/// are a few values, which a list holds in one allocation and finds with a length test per
/// member, where a hash set seeds its hasher and hashes every member to be made.
#[derive(Clone)]
pub enum StrSet {
    /// At most [`StrSet::FEW`] members, sorted, none twice.
    Few(Box<[Arc<str>]>),
    /// More than [`StrSet::FEW`] values were given (some may have been the same).
    Many(AHashSet<Arc<str>>),
}

impl StrSet {
    /// The most members a set holds in a list.
    pub const FEW: usize = 4;

    /// Whether `value` is a member.
    #[inline]
    pub fn contains(&self, value: &str) -> bool {
        match self {
            StrSet::Few(members) => members.iter().any(|m| **m == *value),
            StrSet::Many(members) => members.contains(value),
        }
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        match self {
            StrSet::Few(members) => members.len(),
            StrSet::Many(members) => members.len(),
        }
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members: in order for a list, in the hash set's order (which depends on its seed)
    /// for more.
    pub fn iter(&self) -> StrSetIter<'_> {
        match self {
            StrSet::Few(members) => StrSetIter::Few(members.iter()),
            StrSet::Many(members) => StrSetIter::Many(members.iter()),
        }
    }
}

impl FromIterator<Arc<str>> for StrSet {
    fn from_iter<I: IntoIterator<Item = Arc<str>>>(members: I) -> StrSet {
        let members = members.into_iter();
        if members.size_hint().0 > StrSet::FEW {
            return StrSet::Many(members.collect());
        }
        let mut list: Vec<Arc<str>> = members.collect();
        if list.len() > StrSet::FEW {
            return StrSet::Many(list.into_iter().collect());
        }
        // Most sets come sorted, without repeats (codegen's, of the optimizer's sorted values):
        // then there is nothing to sort or remove.
        if !list.is_sorted_by(|a, b| a < b) {
            list.sort_unstable();
            list.dedup();
        }
        StrSet::Few(list.into_boxed_slice())
    }
}

/// Two sets are equal when they have the same members (whichever form holds them).
impl PartialEq for StrSet {
    fn eq(&self, other: &StrSet) -> bool {
        self.len() == other.len() && self.iter().all(|m| other.contains(m))
    }
}

impl Eq for StrSet {}

/// Printed as a set (`{"a", "b"}`), as the hash set it replaces printed.
impl fmt::Debug for StrSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a StrSet {
    type Item = &'a Arc<str>;
    type IntoIter = StrSetIter<'a>;

    fn into_iter(self) -> StrSetIter<'a> {
        self.iter()
    }
}

/// The members of a [`StrSet`] ([`StrSet::iter`]).
pub enum StrSetIter<'a> {
    /// A list's.
    Few(std::slice::Iter<'a, Arc<str>>),
    /// A hash set's.
    Many(std::collections::hash_set::Iter<'a, Arc<str>>),
}

impl<'a> Iterator for StrSetIter<'a> {
    type Item = &'a Arc<str>;

    fn next(&mut self) -> Option<&'a Arc<str>> {
        match self {
            StrSetIter::Few(members) => members.next(),
            StrSetIter::Many(members) => members.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            StrSetIter::Few(members) => members.size_hint(),
            StrSetIter::Many(members) => members.size_hint(),
        }
    }
}

/// The parts a program is assembled from (by codegen, or by a decoder).
#[derive(Debug, Clone, Default)]
pub struct ProgramParts {
    /// The keys the program reads.
    pub keys: KeyTable,
    /// Constants.
    pub pools: Pools,
    /// The instruction stream; it must end in `ret`.
    pub code: Vec<Inst>,
    /// For each instruction, an index into `sources` (or `u32::MAX` for none).
    pub origins: Vec<u32>,
    /// JSON Pointers (or text spans) into the policy the instructions came from. Shared
    /// (`Arc`), so that a compiled program holds its IR's origins rather than copies of them.
    pub sources: Vec<Arc<str>>,
    /// Registers used.
    pub registers: u32,
}

impl Inst {
    /// Whether the instruction is a test: it reads a slot and writes its verdict to `dst`
    /// (everything but the control instructions `const`, `and`, `or`, `not`, the jumps and `ret`).
    pub fn is_test(&self) -> bool {
        !matches!(
            self,
            Inst::Const { .. }
                | Inst::And { .. }
                | Inst::Or { .. }
                | Inst::Not { .. }
                | Inst::JumpIfFalse { .. }
                | Inst::JumpIfTrue { .. }
                | Inst::Ret { .. }
        )
    }
}

impl ProgramParts {
    /// The key table.
    #[inline]
    pub fn keys(&self) -> &KeyTable {
        &self.keys
    }

    /// The constant pools.
    #[inline]
    pub fn pools(&self) -> &Pools {
        &self.pools
    }

    /// The instructions.
    #[inline]
    pub fn code(&self) -> &[Inst] {
        &self.code
    }

    /// The number of registers.
    #[inline]
    pub fn register_count(&self) -> usize {
        self.registers as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set of few values is a sorted list without repeats, of more values a hash set; either finds
    /// exactly its members, equals a set of the same members whatever its form, and prints as
    /// a set.
    #[test]
    fn a_str_set_holds_few_values_in_a_sorted_list_and_finds_exactly_its_members() {
        let set = |values: &[&str]| values.iter().map(|v| Arc::from(*v)).collect::<StrSet>();
        let few = set(&["b", "", "b", "ccc"]);
        let StrSet::Few(members) = &few else {
            panic!("{few:?} is a list");
        };
        let members: Vec<&str> = members.iter().map(|m| &**m).collect();
        assert_eq!(members, ["", "b", "ccc"]);
        assert_eq!(few.len(), 3);
        for value in ["", "b", "ccc"] {
            assert!(few.contains(value), "{value:?}");
        }
        for value in ["a", "c", "cc", "cccc", "B", "bb"] {
            assert!(!few.contains(value), "{value:?}");
        }
        assert_eq!(format!("{few:?}"), r#"{"", "b", "ccc"}"#);
        let many = set(&["a", "b", "c", "d", "e"]);
        assert!(matches!(many, StrSet::Many(_)), "{many:?}");
        assert_eq!(many.len(), 5);
        assert!(many.contains("e") && !many.contains("f"));
        // Five values, two of them the same: a hash set of four members, equal to the list of
        // the four.
        let repeated = set(&["a", "b", "c", "d", "d"]);
        assert!(matches!(repeated, StrSet::Many(_)), "{repeated:?}");
        assert_eq!(repeated, set(&["d", "c", "b", "a"]));
        assert_eq!(set(&["d", "c", "b", "a"]), repeated);
        assert_ne!(repeated, set(&["a", "b", "c", "e"]));
        assert_ne!(repeated, many);
        assert!(set(&[]).is_empty() && !set(&[]).contains(""));
        let mut printed: Vec<&str> = many.iter().map(|m| &**m).collect();
        printed.sort_unstable();
        assert_eq!(printed, ["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn every_opcode_round_trips_its_byte() {
        for (i, op) in Opcode::ALL.iter().enumerate() {
            assert_eq!(*op as u8 as usize, i);
            assert_eq!(Opcode::from_byte(i as u8), Some(*op));
        }
        assert_eq!(Opcode::from_byte(Opcode::ALL.len() as u8), None);
    }

    #[test]
    fn encode_decode_round_trip() {
        let insts = [
            Inst::Const {
                dst: Reg(3),
                value: true,
            },
            Inst::Shape {
                dst: Reg(1),
                slot: SlotRef(2),
                shapes: Shapes::PRESENT,
            },
            Inst::TextNumIn {
                dst: Reg(0),
                slot: SlotRef(0),
                ranges: RangesRef(7),
            },
            Inst::JumpIfFalse {
                cond: Reg(0),
                target: Target(9),
            },
            Inst::Ret { src: Reg(0) },
        ];
        let mut bytes = Vec::new();
        for i in &insts {
            i.encode(&mut bytes);
        }
        let mut input = bytes.as_slice();
        for i in &insts {
            assert_eq!(Inst::decode(&mut input).as_ref(), Some(i));
        }
        assert!(input.is_empty());
        // Truncated and unknown opcodes decode to None.
        assert_eq!(Inst::decode(&mut &bytes[..3]), None);
        assert_eq!(Inst::decode(&mut &[250u8][..]), None);
        assert_eq!(
            Inst::decode(&mut &[0u8, 0, 0, 0, 0, 7][..]),
            None,
            "bool operand must be 0 or 1"
        );
    }

    #[test]
    fn written_register_is_dst() {
        assert_eq!(
            Inst::And {
                dst: Reg(4),
                a: Reg(1),
                b: Reg(2)
            }
            .written(),
            Some(Reg(4))
        );
        assert_eq!(Inst::Ret { src: Reg(1) }.written(), None);
        assert_eq!(
            Inst::JumpIfTrue {
                cond: Reg(1),
                target: Target(3)
            }
            .written(),
            None
        );
    }
}

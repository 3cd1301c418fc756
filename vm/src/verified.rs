//! Verified programs ([`Verified`]): a program's parts once the verifier has checked them —
//! every register, slot and pool index in bounds, jumps forward only, sizes within limits — with
//! what evaluation derives from them (substring searchers, the key table's needs). Above the
//! instruction set; below the executor, the decision plans and [`crate::program::Program`].

use crate::bind::NO_ID;
use crate::op::{Inst, ProgramParts};
use crate::substring::Substrings;

/// Most instructions a program may hold.
pub const MAX_INSTRUCTIONS: usize = 1 << 20;
/// Most registers a program may use.
pub const MAX_REGISTERS: usize = 1 << 20;

/// A program's parts, verified, and the substring searchers its instructions read.
#[derive(Debug, Clone)]
pub struct Verified {
    parts: ProgramParts,
    /// The substring searcher of each list a `str_contains` or `str_contains_fold` instruction
    /// reads, indexed like `pools.lists` (`None` for the other lists); built here, once per
    /// list, so that evaluation never builds one (see [`crate::substring`]).
    substrings: Box<[Option<Substrings>]>,
}

impl Verified {
    /// Verifies `parts`: every register, slot and pool index in bounds, jumps forward only, the
    /// stream ends in `ret`, sizes within limits, origins cover the code, no interval bound is
    /// NaN. Then derives the substring searchers and records in the key table what binding must
    /// compute, in time and memory proportional to `parts`.
    pub fn new(parts: ProgramParts) -> Result<Verified, VerifyError> {
        let substrings = Verified::check(&parts)?;
        Ok(Verified::checked(
            parts,
            substrings,
            &mut ConstantIds::none(),
        ))
    }

    /// The checks of [`Verified::new`], made on borrowed parts (so that a caller moves the parts
    /// once, into the program, rather than in and out of each layer's result): the substring
    /// searchers the parts need, or why they are rejected.
    pub(crate) fn check(parts: &ProgramParts) -> Result<Box<[Option<Substrings>]>, VerifyError> {
        let n = parts.code.len();
        let whole = |reason: String| VerifyError { at: n, reason };
        if n == 0 || n > MAX_INSTRUCTIONS {
            return Err(whole(format!(
                "instruction count {n} outside 1..={MAX_INSTRUCTIONS}"
            )));
        }
        if parts.registers as usize > MAX_REGISTERS || parts.registers == 0 {
            return Err(whole(format!(
                "register count {} outside 1..={MAX_REGISTERS}",
                parts.registers
            )));
        }
        if !matches!(parts.code.last(), Some(Inst::Ret { .. })) {
            return Err(whole("the last instruction is not ret".to_owned()));
        }
        if !parts.origins.is_empty() && parts.origins.len() != n {
            return Err(whole("origins do not cover the code".to_owned()));
        }
        if let Some(bad) = parts
            .origins
            .iter()
            .find(|&&o| o != u32::MAX && o as usize >= parts.sources.len())
        {
            return Err(whole(format!("origin {bad} out of range")));
        }
        if let Some(i) = parts
            .pools
            .ranges
            .iter()
            .position(|set| set.iter().any(|r| r.lo.is_nan() || r.hi.is_nan()))
        {
            return Err(whole(format!("ranges{i} has a NaN bound")));
        }
        // Whether some instruction searches substrings, noted on the way: most programs need no
        // searcher, and are not walked again for them.
        let mut contains = false;
        for (at, inst) in parts.code.iter().enumerate() {
            inst.check(parts, at)
                .map_err(|reason| VerifyError { at, reason })?;
            contains |= matches!(
                inst,
                Inst::StrContains { .. } | Inst::StrContainsFold { .. }
            );
        }
        if !parts.pools.leaf_tests.is_empty() {
            check_leaf_tests(parts).map_err(whole)?;
        }
        if contains {
            substrings(parts)
        } else {
            Ok(Box::default())
        }
    }

    /// The verified program of parts [`Verified::check`] accepted, with `substrings`, the
    /// searchers it gave: records in the key table what binding must compute, and in `ids` the
    /// dictionary ids of the constants when they fit ([`ConstantIds`]).
    #[inline(always)]
    pub(crate) fn checked(
        mut parts: ProgramParts,
        substrings: Box<[Option<Substrings>]>,
        ids: &mut ConstantIds,
    ) -> Verified {
        needs(&mut parts, ids);
        Verified { parts, substrings }
    }

    /// Empty parts, not verified: for [`crate::program::Program::build`], which fills them in
    /// place and then calls [`Verified::check`] and [`Verified::finish`] before the program is
    /// used or returned. Inlined, so that the empty parts (about a kilobyte) are written where
    /// the program holds them rather than made here and copied there.
    #[inline(always)]
    pub(crate) fn unfinished() -> Verified {
        Verified {
            parts: ProgramParts::default(),
            substrings: Box::default(),
        }
    }

    /// The parts of an [`Verified::unfinished`] program, to fill.
    pub(crate) fn parts_to_fill(&mut self) -> &mut ProgramParts {
        &mut self.parts
    }

    /// [`Verified::checked`] of parts held in place: records in the key table what binding must
    /// compute (and in `ids` the constants' ids, when they fit), and keeps `substrings`, the
    /// searchers [`Verified::check`] gave for the parts.
    pub(crate) fn finish(&mut self, substrings: Box<[Option<Substrings>]>, ids: &mut ConstantIds) {
        needs(&mut self.parts, ids);
        self.substrings = substrings;
    }

    /// The substring searcher of list `list`, when a `str_contains` or `str_contains_fold`
    /// instruction reads it.
    #[inline]
    pub(crate) fn substrings(&self, list: u32) -> Option<&Substrings> {
        self.substrings.get(list as usize)?.as_ref()
    }

    /// The verified parts.
    #[inline]
    pub fn parts(&self) -> &ProgramParts {
        &self.parts
    }

    /// The key table.
    #[inline]
    pub fn keys(&self) -> &crate::bind::KeyTable {
        &self.parts.keys
    }

    /// The constant pools.
    #[inline]
    pub fn pools(&self) -> &crate::op::Pools {
        &self.parts.pools
    }

    /// The instructions.
    #[inline]
    pub fn code(&self) -> &[Inst] {
        &self.parts.code
    }

    /// The number of registers.
    #[inline]
    pub fn register_count(&self) -> usize {
        self.parts.registers as usize
    }
}

/// The searchers of the lists that substring instructions read (of a program whose operands are
/// verified), each built once however many instructions read it.
fn substrings(parts: &ProgramParts) -> Result<Box<[Option<Substrings>]>, VerifyError> {
    let mut searchers: Vec<Option<Substrings>> = Vec::new();
    for (at, inst) in parts.code.iter().enumerate() {
        let (Inst::StrContains { list, .. } | Inst::StrContainsFold { list, .. }) = *inst else {
            continue;
        };
        let i = list.0 as usize;
        if searchers.get(i).is_some_and(Option::is_some) {
            continue;
        }
        let Some(needles) = parts.pools.lists.get(i) else {
            continue;
        };
        let searcher = Substrings::new(needles).map_err(|e| VerifyError {
            at,
            reason: format!("list{i}: {e}"),
        })?;
        if searchers.is_empty() {
            searchers.resize_with(parts.pools.lists.len(), || None);
        }
        if let Some(slot) = searchers.get_mut(i) {
            *slot = Some(searcher);
        }
    }
    Ok(searchers.into_boxed_slice())
}

/// Most pool strings and set members whose ids [`ConstantIds`] holds.
const CONSTANT_IDS: usize = 64;
/// Most sets whose members' ids [`ConstantIds`] holds.
const CONSTANT_SETS: usize = 16;

/// The dictionary ids [`needs`] gave the constants of a program's `str_eq` and `str_in`
/// instructions as it added them to the key table, so that the decision plan takes them rather
/// than looking each constant up again ([`crate::plan::Plan::build`]; a program with more than
/// eight constants has them hashed). Held on the stack, for a program whose pools fit (a policy's
/// program); a larger program's are not recorded, and its plan looks its constants up.
pub(crate) struct ConstantIds {
    /// Whether the ids were recorded.
    recorded: bool,
    /// By pool string, then by member of each set (from the set's start), the id; [`NO_ID`]
    /// for a constant no instruction compares with.
    ids: [u32; CONSTANT_IDS],
    /// By set, where its members' ids start in `ids`.
    set_starts: [u32; CONSTANT_SETS],
}

impl ConstantIds {
    /// No ids recorded (yet).
    pub(crate) fn none() -> ConstantIds {
        ConstantIds {
            recorded: false,
            ids: [NO_ID; CONSTANT_IDS],
            set_starts: [0; CONSTANT_SETS],
        }
    }

    /// Room for the ids of `parts`' strings and sets, when they fit (else nothing is recorded).
    fn prepare(&mut self, parts: &ProgramParts) {
        let pools = &parts.pools;
        if pools.sets.len() > CONSTANT_SETS {
            return;
        }
        let mut at = pools.strings.len();
        for (set, start) in pools.sets.iter().zip(self.set_starts.iter_mut()) {
            *start = u32::try_from(at).unwrap_or(u32::MAX);
            at = at.saturating_add(set.len());
        }
        self.recorded = at <= CONSTANT_IDS;
    }

    /// Records `id` for pool string `s`.
    fn set_string(&mut self, s: u32, id: u32) {
        if let Some(at) = self.ids.get_mut(s as usize).filter(|_| self.recorded) {
            *at = id;
        }
    }

    /// Records `id` for the `member`th member of set `set`.
    fn set_member(&mut self, set: u32, member: usize, id: u32) {
        if !self.recorded {
            return;
        }
        let Some(&start) = self.set_starts.get(set as usize) else {
            return;
        };
        if let Some(at) = self.ids.get_mut((start as usize).saturating_add(member)) {
            *at = id;
        }
    }

    /// The id recorded for pool string `s`, if any.
    pub(crate) fn string(&self, s: u32) -> Option<u32> {
        let id = *self.ids.get(s as usize).filter(|_| self.recorded)?;
        (id != NO_ID).then_some(id)
    }

    /// The ids recorded for the `len` members of set `set` (in the set's order), if every one
    /// was.
    pub(crate) fn set(&self, set: u32, len: usize) -> Option<&[u32]> {
        if !self.recorded {
            return None;
        }
        let start = *self.set_starts.get(set as usize)? as usize;
        let ids = self.ids.get(start..start.checked_add(len)?)?;
        ids.iter().all(|&id| id != NO_ID).then_some(ids)
    }
}

/// Records in the program's key table what binding must compute for its tests (see
/// [`crate::bind`]): the constants of its `str_eq` and `str_in` instructions in the dictionary,
/// the slots they read as looked up there, and the slots `text_num_in` reads as numeric text.
/// Each pool entry and each slot is recorded once, however many instructions read it, so this
/// costs time in proportion to the program's size.
///
/// The ids the dictionary gives the constants are recorded in `ids`, when they fit.
fn needs(parts: &mut ProgramParts, ids: &mut ConstantIds) {
    // What was seen, in one buffer: a flag per string, per set, and per slot (bit 0: compared
    // with constants, bit 1: read as numeric text).
    const COMPARED: u8 = 1;
    const NUMERIC: u8 = 2;
    let (strings, sets) = (parts.pools.strings.len(), parts.pools.sets.len());
    // A policy's program fits the buffer on the stack; a larger one allocates its flags.
    let len = strings + sets + parts.keys.len();
    let mut small = [0u8; 64];
    let mut large = Vec::new();
    let seen: &mut [u8] = if len <= small.len() {
        small.get_mut(..len).unwrap_or_default()
    } else {
        large.resize(len, 0u8);
        &mut large
    };
    // Room for every value of the pools at once, so that the dictionary grows once (codegen
    // pools only what its `str_eq` and `str_in` instructions compare with, so this is their
    // count unless values repeat); the values are added in the order of the instructions that
    // first compare with them, and the change noted once.
    let values = strings + parts.pools.sets.iter().map(|set| set.len()).sum::<usize>();
    parts.keys.reserve_values(values);
    let mut new = false;
    ids.prepare(parts);
    for inst in &parts.code {
        let (slot, need) = match *inst {
            Inst::StrEq { slot, s, .. } => {
                if let Some(first) = seen.get_mut(s.0 as usize).filter(|seen| **seen == 0) {
                    *first = 1;
                    if let Some(v) = parts.pools.strings.get(s.0 as usize) {
                        let (id, added) = parts.keys.add_value_unstamped(v);
                        ids.set_string(s.0, id);
                        new |= added;
                    }
                }
                (slot, COMPARED)
            }
            Inst::StrIn { slot, set, .. } => {
                let at = strings.saturating_add(set.0 as usize);
                if let Some(first) = seen.get_mut(at).filter(|seen| **seen == 0) {
                    *first = 1;
                    if let Some(values) = parts.pools.sets.get(set.0 as usize) {
                        for (member, v) in values.iter().enumerate() {
                            let (id, added) = parts.keys.add_value_unstamped(v);
                            ids.set_member(set.0, member, id);
                            new |= added;
                        }
                    }
                }
                (slot, COMPARED)
            }
            Inst::TextNumIn { slot, .. } => (slot, NUMERIC),
            _ => continue,
        };
        if let Some(flags) = seen.get_mut(strings + sets + slot.0 as usize) {
            *flags |= need;
        }
    }
    for (slot, flags) in seen.iter().skip(strings + sets).enumerate() {
        let slot = u32::try_from(slot).unwrap_or(u32::MAX);
        if flags & COMPARED != 0 {
            new |= parts.keys.mark_constants_unstamped(slot);
        }
        if flags & NUMERIC != 0 {
            parts.keys.add_text_numbers(slot);
        }
    }
    // The new values and the slots newly compared with constants are one change to the table,
    // and so are keys interned without a stamp (`KeyTable::intern_ref_unstamped`, which leaves
    // the stamp 0: only an empty table keeps that).
    if new || (parts.keys.stamp() == 0 && !parts.keys.is_empty()) {
        parts.keys.changed();
    }
}

/// Whether `inst` can run on one leaf inside an `except`: a test of a leaf's value (not a shape,
/// a control instruction or another `except`).
pub fn is_leaf_test(inst: &Inst) -> bool {
    inst.is_test() && !matches!(inst, Inst::Shape { .. } | Inst::Except { .. })
}

/// Checks every leaf-test list: each entry a leaf test ([`is_leaf_test`]) whose operands are in
/// range.
fn check_leaf_tests(parts: &ProgramParts) -> Result<(), String> {
    for (i, tests) in parts.pools.leaf_tests.iter().enumerate() {
        for (j, inst) in tests.iter().enumerate() {
            if !is_leaf_test(inst) {
                return Err(format!(
                    "tests{i}[{j}]: {} is not a test of one leaf",
                    inst.opcode().mnemonic()
                ));
            }
            inst.check(parts, 0)
                .map_err(|reason| format!("tests{i}[{j}]: {reason}"))?;
        }
    }
    Ok(())
}

/// Why a program was rejected by the verifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid program at instruction {at}: {reason}")]
pub struct VerifyError {
    /// The instruction index (or the code length for whole-program errors).
    pub at: usize,
    /// What is wrong.
    pub reason: String,
}

//! Programs: a key table, constant pools and an instruction stream, verified before they run.

use crate::address::Block;
use crate::bind::KeyTable;
use crate::case_pattern::CasePattern;
use crate::cidr::Cidr;
use crate::number::Decimal;
use crate::op::Inst;
use crate::pattern::SegmentPattern;
use crate::substring::Substrings;
use crate::wildcard::Wildcard;
use ahash::AHashSet;
use std::fmt::{self, Write as _};

/// Most instructions a program may hold.
pub const MAX_INSTRUCTIONS: usize = 1 << 20;
/// Most registers a program may use.
pub const MAX_REGISTERS: usize = 1 << 20;

/// One end of an interval over binary64 values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower bound (`-inf` for none).
    pub lo: f64,
    /// Whether `lo` itself is inside.
    pub lo_inclusive: bool,
    /// Upper bound (`+inf` for none).
    pub hi: f64,
    /// Whether `hi` itself is inside.
    pub hi_inclusive: bool,
}

impl Interval {
    /// The interval holding only `x`.
    pub fn point(x: f64) -> Interval {
        Interval {
            lo: x,
            lo_inclusive: true,
            hi: x,
            hi_inclusive: true,
        }
    }

    /// Every finite number.
    pub const ALL: Interval = Interval {
        lo: f64::NEG_INFINITY,
        lo_inclusive: false,
        hi: f64::INFINITY,
        hi_inclusive: false,
    };

    /// Whether `x` lies inside (NaN never does).
    #[inline]
    pub fn contains(&self, x: f64) -> bool {
        let above = if self.lo_inclusive {
            x >= self.lo
        } else {
            x > self.lo
        };
        let below = if self.hi_inclusive {
            x <= self.hi
        } else {
            x < self.hi
        };
        above & below
    }

    /// Whether no number lies inside.
    pub fn is_empty(&self) -> bool {
        self.lo.is_nan()
            || self.hi.is_nan()
            || self.lo > self.hi
            || (self.lo == self.hi && !(self.lo_inclusive && self.hi_inclusive))
    }

    /// The intersection.
    pub fn intersect(&self, other: &Interval) -> Interval {
        let (lo, lo_inclusive) = if self.lo > other.lo {
            (self.lo, self.lo_inclusive)
        } else if other.lo > self.lo {
            (other.lo, other.lo_inclusive)
        } else {
            (self.lo, self.lo_inclusive && other.lo_inclusive)
        };
        let (hi, hi_inclusive) = if self.hi < other.hi {
            (self.hi, self.hi_inclusive)
        } else if other.hi < self.hi {
            (other.hi, other.hi_inclusive)
        } else {
            (self.hi, self.hi_inclusive && other.hi_inclusive)
        };
        Interval {
            lo,
            lo_inclusive,
            hi,
            hi_inclusive,
        }
    }
}

/// An [`Interval`] with both ends inside: an excluded end is moved inward to the next binary64
/// value, so that membership is two comparisons. It holds exactly the numbers the interval holds
/// (NaN in neither): `x > lo` is `x >= lo.next_up()` for every `x` but NaN, as long as `lo` is not
/// `+inf` — and an interval excluding a lower end of `+inf` (or an upper end of `-inf`) is empty,
/// which becomes an interval holding nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClosedInterval {
    lo: f64,
    hi: f64,
}

impl ClosedInterval {
    /// The closed form of `interval`.
    pub(crate) fn of(interval: &Interval) -> ClosedInterval {
        if interval.is_empty() {
            return ClosedInterval {
                lo: f64::INFINITY,
                hi: f64::NEG_INFINITY,
            };
        }
        ClosedInterval {
            lo: if interval.lo_inclusive {
                interval.lo
            } else {
                interval.lo.next_up()
            },
            hi: if interval.hi_inclusive {
                interval.hi
            } else {
                interval.hi.next_down()
            },
        }
    }
}

/// Membership of a binary64 value, for the numeric tests ([`crate::exec`]), whichever form the
/// intervals are held in.
pub(crate) trait Contains {
    /// Whether `x` lies inside (NaN never does).
    fn contains(&self, x: f64) -> bool;
}

impl Contains for Interval {
    #[inline(always)]
    fn contains(&self, x: f64) -> bool {
        Interval::contains(self, x)
    }
}

impl Contains for ClosedInterval {
    #[inline(always)]
    fn contains(&self, x: f64) -> bool {
        x >= self.lo && x <= self.hi
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lo == self.hi && self.lo_inclusive && self.hi_inclusive {
            return write!(f, "{{{}}}", self.lo);
        }
        f.write_str(if self.lo_inclusive { "[" } else { "(" })?;
        if self.lo == f64::NEG_INFINITY {
            f.write_str("-inf")?
        } else {
            write!(f, "{}", self.lo)?
        }
        f.write_str(", ")?;
        if self.hi == f64::INFINITY {
            f.write_str("+inf")?
        } else {
            write!(f, "{}", self.hi)?
        }
        f.write_str(if self.hi_inclusive { "]" } else { ")" })
    }
}

/// Writes an interval set as `[a, b) ∪ {c}`.
pub fn show_intervals(set: &[Interval]) -> String {
    if set.is_empty() {
        return "∅".to_owned();
    }
    set.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ∪ ")
}

/// An interval over exact decimals (EG-33); `None` bounds are unbounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecInterval {
    /// Lower bound and whether it is inside.
    pub lo: Option<(Decimal, bool)>,
    /// Upper bound and whether it is inside.
    pub hi: Option<(Decimal, bool)>,
    /// The bounds' texts, for display.
    pub text: Box<str>,
}

impl DecInterval {
    /// Whether `x` lies inside.
    pub fn contains(&self, x: &Decimal) -> bool {
        let above = match &self.lo {
            None => true,
            Some((lo, true)) => x >= lo,
            Some((lo, false)) => x > lo,
        };
        let below = match &self.hi {
            None => true,
            Some((hi, true)) => x <= hi,
            Some((hi, false)) => x < hi,
        };
        above && below
    }
}

/// Writes a decimal interval set.
pub fn show_dec_intervals(set: &[DecInterval]) -> String {
    if set.is_empty() {
        return "∅".to_owned();
    }
    set.iter()
        .map(|d| d.text.to_string())
        .collect::<Vec<_>>()
        .join(" ∪ ")
}

/// The constant pools a program's instructions index.
#[derive(Debug, Clone, Default)]
pub struct Pools {
    /// Single strings.
    pub strings: Vec<Box<str>>,
    /// String lists (prefix, suffix, substring and folded alternatives).
    pub lists: Vec<Vec<Box<str>>>,
    /// String hash sets (exact alternatives).
    pub sets: Vec<AHashSet<Box<str>>>,
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
    /// JSON Pointers (or text spans) into the policy the instructions came from.
    pub sources: Vec<Box<str>>,
    /// Registers used.
    pub registers: u32,
}

/// A verified program.
#[derive(Debug, Clone)]
pub struct Program {
    parts: ProgramParts,
    /// The decision graph the executor runs, for one-register programs (derived, see
    /// [`crate::plan`]).
    plan: Option<crate::plan::Plan>,
    /// For a plan of one test of one header's leaves, that test as borrowed headers are probed
    /// for it ([`Program::eval_headers`]); boxed, so that the check is one word.
    header_probe: Option<Box<crate::plan::HeaderProbe>>,
    /// The substring searcher of each list a `str_contains` or `str_contains_fold` instruction
    /// reads, indexed like `pools.lists` (`None` for the other lists); built here, once per
    /// list, so that evaluation never builds one (see [`crate::substring`]).
    substrings: Box<[Option<Substrings>]>,
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

/// Records in the program's key table what binding must compute for its tests (see
/// [`crate::bind`]): the constants of its `str_eq` and `str_in` instructions in the dictionary,
/// the slots they read as looked up there, and the slots `text_num_in` reads as numeric text.
/// Each pool entry and each slot is recorded once, however many instructions read it, so this
/// costs time in proportion to the program's size.
fn needs(parts: &mut ProgramParts) {
    // What was seen, in one buffer: a flag per string, per set, and per slot (bit 0: compared
    // with constants, bit 1: read as numeric text).
    const COMPARED: u8 = 1;
    const NUMERIC: u8 = 2;
    let (strings, sets) = (parts.pools.strings.len(), parts.pools.sets.len());
    let mut seen = vec![0u8; strings + sets + parts.keys.len()];
    for inst in &parts.code {
        let (slot, need) = match *inst {
            Inst::StrEq { slot, s, .. } => {
                if let Some(first) = seen.get_mut(s.0 as usize).filter(|seen| **seen == 0) {
                    *first = 1;
                    if let Some(v) = parts.pools.strings.get(s.0 as usize) {
                        parts.keys.add_value(v);
                    }
                }
                (slot, COMPARED)
            }
            Inst::StrIn { slot, set, .. } => {
                let at = strings.saturating_add(set.0 as usize);
                if let Some(first) = seen.get_mut(at).filter(|seen| **seen == 0) {
                    *first = 1;
                    if let Some(values) = parts.pools.sets.get(set.0 as usize) {
                        for v in values {
                            parts.keys.add_value(v);
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
            parts.keys.mark_constants(slot);
        }
        if flags & NUMERIC != 0 {
            parts.keys.add_text_numbers(slot);
        }
    }
}

/// Whether `inst` can run on one leaf inside an `except`: a test of a leaf's value (not a shape,
/// a control instruction or another `except`).
pub fn is_leaf_test(inst: &Inst) -> bool {
    !matches!(
        inst,
        Inst::Const { .. }
            | Inst::And { .. }
            | Inst::Or { .. }
            | Inst::Not { .. }
            | Inst::JumpIfFalse { .. }
            | Inst::JumpIfTrue { .. }
            | Inst::Ret { .. }
            | Inst::Shape { .. }
            | Inst::Except { .. }
    )
}

/// Checks every leaf-test list: each entry a leaf test ([`is_leaf_test`]) whose operands are in
/// range.
fn check_leaf_tests(program: &Program) -> Result<(), String> {
    for (i, tests) in program.parts.pools.leaf_tests.iter().enumerate() {
        for (j, inst) in tests.iter().enumerate() {
            if !is_leaf_test(inst) {
                return Err(format!(
                    "tests{i}[{j}]: {} is not a test of one leaf",
                    inst.opcode().mnemonic()
                ));
            }
            inst.check(program, 0)
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

impl Program {
    /// Verifies `parts` and makes a program of them: every register, slot and pool index in bounds,
    /// jumps forward only, the stream ends in `ret`, sizes within limits, origins cover the code,
    /// no interval bound is NaN. Then derives what evaluation needs — the decision plan and the
    /// substring searchers — in time and memory proportional to `parts`. What binding derives
    /// from the key table (the JSON selector, the name scan) is built on the first message bound
    /// to it, so a program only added to a set never builds it ([`KeyTable::prepare`] builds it
    /// now).
    pub fn new(parts: ProgramParts) -> Result<Program, VerifyError> {
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
        let mut program = Program {
            parts,
            plan: None,
            header_probe: None,
            substrings: Box::new([]),
        };
        for (at, inst) in program.parts.code.iter().enumerate() {
            inst.check(&program, at)
                .map_err(|reason| VerifyError { at, reason })?;
        }
        check_leaf_tests(&program).map_err(whole)?;
        program.substrings = substrings(&program.parts)?;
        needs(&mut program.parts);
        program.plan = crate::plan::Plan::build(&program);
        program.header_probe = program
            .plan
            .as_ref()
            .and_then(|plan| crate::plan::HeaderProbe::of(&program, plan))
            .map(Box::new);
        Ok(program)
    }

    /// The substring searcher of list `list`, when a `str_contains` or `str_contains_fold`
    /// instruction reads it.
    #[inline]
    pub(crate) fn substrings(&self, list: u32) -> Option<&Substrings> {
        self.substrings.get(list as usize)?.as_ref()
    }

    /// The decision graph the executor runs this program as, if it has one.
    pub(crate) fn plan(&self) -> Option<&crate::plan::Plan> {
        self.plan.as_ref()
    }

    /// The probe [`Program::eval_headers`] decides borrowed headers with, if it has one.
    #[cfg(test)]
    pub(crate) fn header_probe(&self) -> Option<&crate::plan::HeaderProbe> {
        self.header_probe.as_deref()
    }

    /// The number of tests on the decision graph the executor runs, or `None` when the program
    /// runs on the general register executor.
    pub fn plan_steps(&self) -> Option<usize> {
        self.plan.as_ref().map(crate::plan::Plan::len)
    }

    /// The verified parts (for encoders such as [`crate::wire`]).
    pub fn parts(&self) -> &ProgramParts {
        &self.parts
    }

    /// The key table.
    pub fn keys(&self) -> &KeyTable {
        &self.parts.keys
    }

    /// The constant pools.
    pub fn pools(&self) -> &Pools {
        &self.parts.pools
    }

    /// The instructions.
    pub fn code(&self) -> &[Inst] {
        &self.parts.code
    }

    /// The number of registers.
    pub fn register_count(&self) -> usize {
        self.parts.registers as usize
    }

    /// The policy location instruction `at` came from, if recorded.
    pub fn origin(&self, at: usize) -> Option<&str> {
        let o = *self.parts.origins.get(at)?;
        self.parts.sources.get(o as usize).map(|s| &**s)
    }

    /// The disassembly: one instruction a line with its index and origin.
    pub fn disassemble(&self) -> String {
        let mut out = String::new();
        for (i, key) in self.parts.keys.keys().iter().enumerate() {
            let _ = writeln!(out, "; slot{i} = {key}");
        }
        for (at, inst) in self.parts.code.iter().enumerate() {
            let text = inst.show(self);
            match self.origin(at) {
                Some(origin) => {
                    let _ = writeln!(out, "@{at:<3} {text:<50} ; {origin}");
                }
                None => {
                    let _ = writeln!(out, "@{at:<3} {text}");
                }
            }
        }
        out
    }

    /// Evaluates the program on a bound message: true when some row's run returns true. Bind
    /// the message to [`Program::keys`] (string equality then compares dictionary ids); a
    /// message bound to another table with the same slots is judged alike, comparing text.
    #[inline]
    pub fn eval(&self, bound: &crate::bind::Bound<'_>, registers: &mut Vec<bool>) -> bool {
        crate::exec::run(self, bound, registers)
    }

    /// Evaluates the program on headers as the broker holds them (any
    /// [`crate::message::Headers`]): binds them with `bindings` and runs [`Program::eval`]; a
    /// program of one test of one header's values (most one-clause stream and expr filters) is
    /// decided as the headers are read instead, without binding a row, with the same verdict.
    #[inline]
    pub fn eval_headers<H: crate::message::Headers + ?Sized>(
        &self,
        bindings: &mut crate::bind::Bindings,
        headers: &H,
        registers: &mut Vec<bool>,
    ) -> bool {
        match self.header_probe.as_deref() {
            Some(probe) => probe.decide(self, headers),
            None => self.bind_headers_and_eval(bindings, headers, registers),
        }
    }

    /// [`Program::eval_headers`] by binding, out of line.
    #[inline(never)]
    fn bind_headers_and_eval<H: crate::message::Headers + ?Sized>(
        &self,
        bindings: &mut crate::bind::Bindings,
        headers: &H,
        registers: &mut Vec<bool>,
    ) -> bool {
        let bound = bindings.bind_headers(self.keys(), headers);
        self.eval(&bound, registers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_intervals_hold_exactly_what_their_intervals_hold() {
        let ends = [
            f64::NEG_INFINITY,
            -f64::MAX,
            -1.5,
            -0.0,
            0.0,
            f64::from_bits(1),
            1.0,
            1.0f64.next_up(),
            2.0,
            f64::MAX,
            f64::INFINITY,
        ];
        let mut probes: Vec<f64> = ends
            .iter()
            .flat_map(|&x| [x, x.next_up(), x.next_down()])
            .collect();
        probes.push(f64::NAN);
        for &lo in &ends {
            for &hi in &ends {
                for (lo_inclusive, hi_inclusive) in
                    [(false, false), (false, true), (true, false), (true, true)]
                {
                    let interval = Interval {
                        lo,
                        lo_inclusive,
                        hi,
                        hi_inclusive,
                    };
                    let closed = ClosedInterval::of(&interval);
                    for &x in &probes {
                        assert_eq!(
                            Contains::contains(&closed, x),
                            interval.contains(x),
                            "{interval} at {x:e}"
                        );
                    }
                }
            }
        }
    }
}

//! The executor: runs a verified program over bound message rows.
//!
//! Tests write booleans into registers and are combined with `and`/`or`/`not`; the only branches
//! are forward jumps the compiler emits to skip work whose result can no longer matter. A verified
//! program never reads out of bounds here (every index was checked by [`Verified::new`]), and since
//! jumps only go forward, a run takes at most one step per instruction.
//!
//! Each test's meaning is written once, as a predicate over a slot (the `pub(crate)` functions
//! below), which both this general executor and the decision plans (module `plan`) call. The
//! general executor compares strings by text; a plan whose program's table bound the message
//! compares the dictionary ids binding computed for the same strings ([`crate::bind`]).

use crate::bind::{Bound, LeafKind, Slot};
use crate::bytes::{has_prefix, has_suffix, same};
use crate::interval::{Contains, DecInterval};
use crate::number::exact_f64;
use crate::op::{Inst, Reg, SlotRef};
use crate::verified::Verified;
use crate::wildcard::Wildcard;
use crate::{fold, number};

/// Programs with at most this many registers run on registers kept on the stack (codegen uses
/// one); larger programs use the caller's buffer.
const STACK_REGISTERS: usize = 8;

/// The general executor: instruction by instruction over boolean registers.
#[inline(never)]
pub(crate) fn run_registers(
    program: &Verified,
    bound: &Bound<'_>,
    registers: &mut Vec<bool>,
) -> bool {
    let count = program.register_count();
    let mut stack = [false; STACK_REGISTERS];
    let registers: &mut [bool] = match stack.get_mut(..count) {
        Some(r) => r,
        None => {
            registers.clear();
            registers.resize(count, false);
            registers
        }
    };
    (0..bound.rows()).any(|row| run_row(program, bound.row(row), registers))
}

/// Evaluates the test instruction at index `at` of `program` against key `slot` of row `row` of
/// `bound` — a slot of the bound message's own key table, which need not be the program's — and
/// returns its verdict (false for an instruction that is not a test, or an index out of range).
///
/// A subscription set keeps each distinct test once as a one-test program and checks it with this
/// against the key table all its subscriptions share.
pub fn eval_test(
    program: &Verified,
    at: usize,
    bound: &Bound<'_>,
    row: usize,
    slot: usize,
) -> bool {
    let slot = bound.slot(row, slot);
    program
        .code()
        .get(at)
        .and_then(|inst| test(inst, program, |_| slot))
        .is_some_and(|(_, verdict)| verdict)
}

/// The verdict of the test instruction at `at`, reading its own slot operand from `slots` (one
/// row); false for other instructions. Kept out of line: plans call it for their rarer tests.
#[inline(never)]
pub(crate) fn test_at(program: &Verified, at: usize, slots: &[Slot<'_>]) -> bool {
    program
        .code()
        .get(at)
        .and_then(|inst| test(inst, program, |s: SlotRef| row_slot(slots, s.0)))
        .is_some_and(|(_, verdict)| verdict)
}

/// Slot `i` of a row (absent when out of range).
#[inline(always)]
pub(crate) fn row_slot<'r, 'b>(slots: &'r [Slot<'b>], i: u32) -> &'r Slot<'b> {
    slots.get(i as usize).unwrap_or(&Slot::ABSENT)
}
#[inline(always)]
fn get(registers: &[bool], r: Reg) -> bool {
    registers.get(r.0 as usize).copied().unwrap_or(false)
}

#[inline(always)]
fn set(registers: &mut [bool], r: Reg, value: bool) {
    if let Some(slot) = registers.get_mut(r.0 as usize) {
        *slot = value;
    }
}

fn run_row(program: &Verified, slots: &[Slot<'_>], registers: &mut [bool]) -> bool {
    let code = program.code();
    let mut pc = 0usize;
    while let Some(inst) = code.get(pc) {
        pc += 1;
        match *inst {
            Inst::JumpIfFalse { cond, target } => {
                if !get(registers, cond) {
                    pc = target.0 as usize;
                }
            }
            Inst::JumpIfTrue { cond, target } => {
                if get(registers, cond) {
                    pc = target.0 as usize;
                }
            }
            Inst::Ret { src } => return get(registers, src),
            Inst::And { dst, a, b } => {
                let v = get(registers, a) & get(registers, b);
                set(registers, dst, v);
            }
            Inst::Or { dst, a, b } => {
                let v = get(registers, a) | get(registers, b);
                set(registers, dst, v);
            }
            Inst::Not { dst, src } => {
                let v = !get(registers, src);
                set(registers, dst, v);
            }
            Inst::Const { dst, value } => set(registers, dst, value),
            _ => {
                if let Some((dst, v)) = test(inst, program, |s: SlotRef| row_slot(slots, s.0)) {
                    set(registers, dst, v);
                }
            }
        }
    }
    false
}

// ---------------------------------------------------------------------------------------------
// The tests' meanings, over one slot: "some leaf satisfies ..." (the slot's inline first leaf is
// the empty leaf when it has none, which satisfies nothing).

/// `str_eq`, `str_in`: some string leaf equals one of `strings`.
#[inline(always)]
pub(crate) fn str_equal<S: AsRef<str>>(slot: &Slot<'_>, strings: &[S]) -> bool {
    any_str(slot, move |v| {
        strings
            .iter()
            .any(|c| same(v.as_bytes(), c.as_ref().as_bytes()))
    })
}

/// `str_eq`, by the dictionary id binding gave the string (same table only).
#[inline(always)]
pub(crate) fn id_equal(slot: &Slot<'_>, id: u32) -> bool {
    slot.any(move |l| l.eq_id() == id)
}

/// `str_in`, by dictionary ids (same table only): some leaf's id is `base + i` for a bit `i` of
/// `mask` (a leaf without an id, [`crate::bind::NO_ID`], is never within 64 of a constant's).
#[inline(always)]
pub(crate) fn id_in_mask(slot: &Slot<'_>, base: u32, mask: u64) -> bool {
    slot.any(move |l| {
        let i = l.eq_id().wrapping_sub(base);
        i < 64 && mask >> i & 1 == 1
    })
}

/// `str_in`, by dictionary ids (same table only): `ids` sorted; few are compared one by one,
/// more searched.
#[inline(always)]
pub(crate) fn id_in(slot: &Slot<'_>, ids: &[u32]) -> bool {
    if ids.len() <= 8 {
        slot.any(move |l| ids.contains(&l.eq_id()))
    } else {
        slot.any(move |l| ids.binary_search(&l.eq_id()).is_ok())
    }
}

/// `str_prefix`: some string leaf starts with one of `list`.
#[inline(always)]
pub(crate) fn prefix<S: AsRef<str>>(slot: &Slot<'_>, list: &[S]) -> bool {
    any_str(slot, move |v| {
        list.iter()
            .any(|p| has_prefix(v.as_bytes(), p.as_ref().as_bytes()))
    })
}

/// `str_suffix`: some string leaf ends with one of `list`.
#[inline(always)]
pub(crate) fn suffix<S: AsRef<str>>(slot: &Slot<'_>, list: &[S]) -> bool {
    any_str(slot, move |v| {
        list.iter()
            .any(|p| has_suffix(v.as_bytes(), p.as_ref().as_bytes()))
    })
}

/// `num_in`: some number leaf lies in the intervals.
#[inline(always)]
pub(crate) fn num_in<I: Contains>(slot: &Slot<'_>, set: &[I]) -> bool {
    slot.any(move |l| match l.as_f64() {
        Some(x) => set.iter().any(|i| i.contains(x)),
        None => false,
    })
}

/// `text_num_in`: some string leaf's text is a JSON number (B-10, S9) in the intervals (computed
/// at bind time where the table asked for it).
#[inline(always)]
pub(crate) fn text_num_in<I: Contains>(slot: &Slot<'_>, set: &[I]) -> bool {
    slot.any(move |l| {
        l.kind() == LeafKind::Str && {
            let x = l.text_number();
            set.iter().any(|i| i.contains(x))
        }
    })
}

/// `wildcard`: some string leaf matches the SNS wildcard.
#[inline(always)]
pub(crate) fn wildcard(slot: &Slot<'_>, w: &Wildcard) -> bool {
    any_str(slot, move |v| w.matches(v))
}

/// Some string leaf satisfies `f`.
#[inline(always)]
fn any_str(slot: &Slot<'_>, mut f: impl FnMut(&str) -> bool) -> bool {
    slot.any(move |l| match l.as_str() {
        Some(v) => f(v),
        None => false,
    })
}

/// The verdict of a test instruction, and the register it writes; `None` for other instructions.
/// `slot` resolves the instruction's slot operand.
#[inline(always)]
fn test<'s, 'b: 's>(
    inst: &Inst,
    program: &Verified,
    slot: impl Fn(SlotRef) -> &'s Slot<'b>,
) -> Option<(Reg, bool)> {
    let pools = program.pools();
    let list = |i: u32| {
        pools
            .lists
            .get(i as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    let ranges = |i: u32| {
        pools
            .ranges
            .get(i as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    Some(match *inst {
        Inst::Shape {
            dst,
            slot: s,
            shapes,
        } => (dst, shapes.has(slot(s).shape)),
        Inst::HasType {
            dst,
            slot: s,
            types,
        } => (dst, slot(s).any(|l| l.leaf_type().0 & types.0 != 0)),
        Inst::StrEq { dst, slot: s, s: c } => {
            let c = pools.strings.get(c.0 as usize).map(|c| &**c).unwrap_or("");
            (dst, str_equal(slot(s), &[c]))
        }
        Inst::StrIn {
            dst,
            slot: s,
            set: c,
        } => {
            let hit = pools
                .sets
                .get(c.0 as usize)
                .is_some_and(|set| any_str(slot(s), |v| set.contains(v)));
            (dst, hit)
        }
        Inst::StrPrefix {
            dst,
            slot: s,
            list: c,
        } => (dst, prefix(slot(s), list(c.0))),
        Inst::StrSuffix {
            dst,
            slot: s,
            list: c,
        } => (dst, suffix(slot(s), list(c.0))),
        Inst::StrContains {
            dst,
            slot: s,
            list: c,
        } => {
            // One pass over each value for all the list's strings (see `crate::substring`).
            let hit = program
                .substrings(c.0)
                .is_some_and(|n| any_str(slot(s), |v| n.found_in(v)));
            (dst, hit)
        }
        Inst::StrEqFold {
            dst,
            slot: s,
            list: c,
        } => {
            let l = list(c.0);
            (
                dst,
                any_str(slot(s), |v| l.iter().any(|p| fold::eq_folded(v, p))),
            )
        }
        Inst::StrPrefixFold {
            dst,
            slot: s,
            list: c,
        } => {
            let l = list(c.0);
            (
                dst,
                any_str(slot(s), |v| {
                    l.iter().any(|p| fold::starts_with_folded(v, p))
                }),
            )
        }
        Inst::StrSuffixFold {
            dst,
            slot: s,
            list: c,
        } => {
            let l = list(c.0);
            (
                dst,
                any_str(slot(s), |v| l.iter().any(|p| fold::ends_with_folded(v, p))),
            )
        }
        Inst::StrContainsFold {
            dst,
            slot: s,
            list: c,
        } => {
            // The value is folded once, as the searcher reads it.
            let hit = program
                .substrings(c.0)
                .is_some_and(|n| any_str(slot(s), |v| n.found_in_folded(v)));
            (dst, hit)
        }
        Inst::Wildcard { dst, slot: s, pat } => {
            let hit = pools
                .wildcards
                .get(pat.0 as usize)
                .is_some_and(|w| wildcard(slot(s), w));
            (dst, hit)
        }
        Inst::Segment { dst, slot: s, pat } => {
            let hit = pools
                .patterns
                .get(pat.0 as usize)
                .is_some_and(|p| any_str(slot(s), |v| p.matches(v)));
            (dst, hit)
        }
        Inst::Cidr { dst, slot: s, net } => {
            let hit = pools
                .cidrs
                .get(net.0 as usize)
                .is_some_and(|n| any_str(slot(s), |v| n.contains_text(v)));
            (dst, hit)
        }
        Inst::NumIn {
            dst,
            slot: s,
            ranges: r,
        } => (dst, num_in(slot(s), ranges(r.0))),
        Inst::TextNumIn {
            dst,
            slot: s,
            ranges: r,
        } => (dst, text_num_in(slot(s), ranges(r.0))),
        Inst::DecIn {
            dst,
            slot: s,
            ranges: r,
        } => {
            let set_ = pools
                .dec_ranges
                .get(r.0 as usize)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let hit = slot(s).any(|l| match l.number_text() {
                Some(text) => dec_in(set_, text),
                None => false,
            });
            (dst, hit)
        }
        Inst::BoolEq {
            dst,
            slot: s,
            value,
        } => (dst, slot(s).any(|l| l.as_bool() == Some(value))),
        Inst::CmpNumIn {
            dst,
            slot: s,
            ranges: r,
        } => (dst, comparable_num_in(slot(s), ranges(r.0))),
        Inst::NumTextIn {
            dst,
            slot: s,
            list: c,
        } => {
            let l = list(c.0);
            (
                dst,
                slot(s).any(|leaf| {
                    leaf.number_text()
                        .is_some_and(|t| l.iter().any(|c| same(t.as_bytes(), c.as_bytes())))
                }),
            )
        }
        Inst::AddrIn {
            dst,
            slot: s,
            block,
        } => {
            let hit = pools
                .blocks
                .get(block.0 as usize)
                .is_some_and(|b| any_str(slot(s), |v| b.contains_text(v)));
            (dst, hit)
        }
        Inst::CaseIn { dst, slot: s, pat } => {
            let hit = pools
                .cases
                .get(pat.0 as usize)
                .is_some_and(|p| any_str(slot(s), |v| p.matches(v)));
            (dst, hit)
        }
        Inst::Except {
            dst,
            slot: s,
            tests,
        } => {
            let tests = pools
                .leaf_tests
                .get(tests.0 as usize)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            (dst, except(program, tests, slot(s)))
        }
        Inst::Const { .. }
        | Inst::And { .. }
        | Inst::Or { .. }
        | Inst::Not { .. }
        | Inst::JumpIfFalse { .. }
        | Inst::JumpIfTrue { .. }
        | Inst::Ret { .. } => return None,
    })
}

/// `cmp_num_in`: some number leaf is comparable (EB-17) and lies in the intervals.
#[inline(always)]
pub(crate) fn comparable_num_in<I: Contains>(slot: &Slot<'_>, set: &[I]) -> bool {
    slot.any(move |l| match (l.as_f64(), l.number_text()) {
        (Some(x), Some(text)) => {
            set.iter().any(|i| i.contains(x)) && number::is_comparable(text, x)
        }
        _ => false,
    })
}

/// `except`: some leaf of `slot` (of any type) satisfies none of `tests`, each run on that leaf
/// alone (EB-25: `anything-but` holds when some value is not excluded). Kept out of line: it runs
/// the general test code once per leaf.
#[inline(never)]
fn except(program: &Verified, tests: &[Inst], slot: &Slot<'_>) -> bool {
    slot.any(|leaf| {
        // The empty leaf stands for none; a value that is not UTF-8 has nothing to compare.
        if matches!(leaf.kind(), LeafKind::Empty | LeafKind::Bytes) {
            return false;
        }
        let one = Slot::one(*leaf);
        !tests.iter().any(|inst| {
            // The verifier admits only leaf tests here (no nested `except`).
            !matches!(inst, Inst::Except { .. })
                && test(inst, program, |_| &one).is_some_and(|(_, verdict)| verdict)
        })
    })
}

/// EG-33: whether the number written `text` lies in one of the exact-decimal intervals.
///
/// Fast path, without allocating: when the number and an interval's bounds are all exactly
/// representable as binary64 ([`number::exact_f64`], [`number::Decimal::as_f64_exact`]), comparing the
/// binary64 values gives the exact answer. Otherwise (e.g. `9007199254740993`, `0.1`) the text is
/// parsed once as a [`number::Decimal`] and compared exactly.
fn dec_in(set: &[DecInterval], text: &str) -> bool {
    let fast = exact_f64(text);
    let mut exact: Option<Option<number::Decimal>> = None;
    set.iter().any(|interval| {
        if let Some(x) = fast
            && let Some(hit) = dec_contains_f64(interval, x)
        {
            return hit;
        }
        exact
            .get_or_insert_with(|| number::Decimal::parse(text))
            .as_ref()
            .is_some_and(|d| interval.contains(d))
    })
}

/// `interval` contains `x`, when both of its bounds are exact binary64 values (else `None`).
fn dec_contains_f64(interval: &DecInterval, x: f64) -> Option<bool> {
    let above = match &interval.lo {
        None => true,
        Some((lo, inclusive)) => {
            let lo = lo.as_f64_exact()?;
            if *inclusive { x >= lo } else { x > lo }
        }
    };
    let below = match &interval.hi {
        None => true,
        Some((hi, inclusive)) => {
            let hi = hi.as_f64_exact()?;
            if *inclusive { x <= hi } else { x < hi }
        }
    };
    Some(above && below)
}

#[cfg(test)]
mod dec_fast_path_tests {
    use super::*;
    use crate::number::Decimal;
    use DecInterval;

    fn point(text: &str) -> DecInterval {
        let d = Decimal::parse(text).unwrap();
        DecInterval {
            lo: Some((d.clone(), true)),
            hi: Some((d, true)),
            text: text.into(),
        }
    }

    #[test]
    fn eg_33_fallback_distinguishes_two_pow_53_plus_one() {
        let two53 = [point("9007199254740992")];
        assert!(dec_in(&two53, "9007199254740992"));
        assert!(dec_in(&two53, "9007199254740992.0"));
        assert!(!dec_in(&two53, "9007199254740993"));
        assert!(dec_in(&[point("9007199254740993")], "9007199254740993"));
        assert!(!dec_in(&[point("9007199254740993")], "9007199254740992"));
        // An inexact bound with an exact leaf falls back too.
        let lt = [DecInterval {
            lo: None,
            hi: Some((Decimal::parse("0.1").unwrap(), false)),
            text: "(-inf, 0.1)".into(),
        }];
        assert!(dec_in(&lt, "0.0999999999999999999999"));
        assert!(!dec_in(&lt, "0.1"));
        assert!(dec_in(&[point("5")], "5e0"));
    }
}

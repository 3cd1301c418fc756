//! The executor: runs a verified program over bound message rows.
//!
//! Tests write booleans into registers and are combined with `and`/`or`/`not`; the only branches
//! are forward jumps the compiler emits to skip work whose result can no longer matter. A verified
//! program never reads out of bounds here (every index was checked by `Program::new`), and since
//! jumps only go forward, a run takes at most one step per instruction.

use crate::bind::{Bindings, Slot};
use crate::op::{Inst, Reg, SlotRef};
use crate::program::Program;
use crate::value::Leaf;
use crate::{cidr, fold, number};

/// Runs `program` on every row of `bindings`; true when some row's run returns true.
pub fn run(program: &Program, bindings: &Bindings, registers: &mut Vec<bool>) -> bool {
    registers.clear();
    registers.resize(program.register_count(), false);
    for row in 0..bindings.rows() {
        if run_row(program, bindings, row, registers) {
            return true;
        }
    }
    false
}

#[inline]
fn get(registers: &[bool], r: Reg) -> bool {
    registers.get(r.0 as usize).copied().unwrap_or(false)
}

#[inline]
fn set(registers: &mut [bool], r: Reg, value: bool) {
    if let Some(slot) = registers.get_mut(r.0 as usize) {
        *slot = value;
    }
}

fn run_row(program: &Program, bindings: &Bindings, row: usize, registers: &mut [bool]) -> bool {
    let code = program.code();
    let pools = program.pools();
    let slot = |s: SlotRef| -> Slot { bindings.slot(row, s.0 as usize) };
    let leaves = |s: SlotRef| -> &[Leaf] { bindings.leaves(slot(s)) };
    let any_str = |s: SlotRef, f: &dyn Fn(&str) -> bool| -> bool {
        leaves(s).iter().any(|l| matches!(l, Leaf::Str(v) if f(v)))
    };
    let list = |i: u32| {
        pools
            .lists
            .get(i as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    let mut pc = 0usize;
    while let Some(inst) = code.get(pc) {
        pc += 1;
        match *inst {
            Inst::Const { dst, value } => set(registers, dst, value),
            Inst::Shape {
                dst,
                slot: s,
                shapes,
            } => set(registers, dst, shapes.has(slot(s).shape)),
            Inst::HasType {
                dst,
                slot: s,
                types,
            } => {
                let hit = leaves(s).iter().any(|l| l.leaf_type().0 & types.0 != 0);
                set(registers, dst, hit);
            }
            Inst::StrEq { dst, slot: s, s: c } => {
                let c = pools.strings.get(c.0 as usize).map(|c| &**c).unwrap_or("");
                set(registers, dst, any_str(s, &|v| v == c));
            }
            Inst::StrIn {
                dst,
                slot: s,
                set: c,
            } => {
                let hit = pools
                    .sets
                    .get(c.0 as usize)
                    .is_some_and(|set| any_str(s, &|v| set.contains(v)));
                set(registers, dst, hit);
            }
            Inst::StrPrefix {
                dst,
                slot: s,
                list: c,
            } => {
                let l = list(c.0);
                set(
                    registers,
                    dst,
                    any_str(s, &|v| l.iter().any(|p| v.starts_with(&**p))),
                );
            }
            Inst::StrSuffix {
                dst,
                slot: s,
                list: c,
            } => {
                let l = list(c.0);
                set(
                    registers,
                    dst,
                    any_str(s, &|v| l.iter().any(|p| v.ends_with(&**p))),
                );
            }
            Inst::StrContains {
                dst,
                slot: s,
                list: c,
            } => {
                let l = list(c.0);
                let hit = any_str(s, &|v| {
                    l.iter()
                        .any(|p| memchr::memmem::find(v.as_bytes(), p.as_bytes()).is_some())
                });
                set(registers, dst, hit);
            }
            Inst::StrEqFold {
                dst,
                slot: s,
                list: c,
            } => {
                let l = list(c.0);
                set(
                    registers,
                    dst,
                    any_str(s, &|v| l.iter().any(|p| fold::eq_folded(v, p))),
                );
            }
            Inst::StrPrefixFold {
                dst,
                slot: s,
                list: c,
            } => {
                let l = list(c.0);
                set(
                    registers,
                    dst,
                    any_str(s, &|v| l.iter().any(|p| fold::starts_with_folded(v, p))),
                );
            }
            Inst::StrSuffixFold {
                dst,
                slot: s,
                list: c,
            } => {
                let l = list(c.0);
                set(
                    registers,
                    dst,
                    any_str(s, &|v| l.iter().any(|p| fold::ends_with_folded(v, p))),
                );
            }
            Inst::StrContainsFold {
                dst,
                slot: s,
                list: c,
            } => {
                let l = list(c.0);
                set(
                    registers,
                    dst,
                    any_str(s, &|v| l.iter().any(|p| fold::contains_folded(v, p))),
                );
            }
            Inst::Wildcard { dst, slot: s, pat } => {
                let hit = pools
                    .wildcards
                    .get(pat.0 as usize)
                    .is_some_and(|w| any_str(s, &|v| w.matches(v)));
                set(registers, dst, hit);
            }
            Inst::Segment { dst, slot: s, pat } => {
                let hit = pools
                    .patterns
                    .get(pat.0 as usize)
                    .is_some_and(|p| any_str(s, &|v| p.matches(v)));
                set(registers, dst, hit);
            }
            Inst::Cidr { dst, slot: s, net } => {
                let hit = pools
                    .cidrs
                    .get(net.0 as usize)
                    .is_some_and(|n: &cidr::Cidr| any_str(s, &|v| n.contains_text(v)));
                set(registers, dst, hit);
            }
            Inst::NumIn {
                dst,
                slot: s,
                ranges,
            } => {
                let set_ = pools
                    .ranges
                    .get(ranges.0 as usize)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let hit = leaves(s).iter().any(|l| match l {
                    Leaf::Num(n) => set_.iter().any(|i| i.contains(n.value())),
                    _ => false,
                });
                set(registers, dst, hit);
            }
            Inst::TextNumIn {
                dst,
                slot: s,
                ranges,
            } => {
                let set_ = pools
                    .ranges
                    .get(ranges.0 as usize)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let hit = any_str(s, &|v| {
                    number::parse_json_number(v).is_some_and(|x| set_.iter().any(|i| i.contains(x)))
                });
                set(registers, dst, hit);
            }
            Inst::DecIn {
                dst,
                slot: s,
                ranges,
            } => {
                let set_ = pools
                    .dec_ranges
                    .get(ranges.0 as usize)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let hit = leaves(s).iter().any(|l| match l {
                    Leaf::Num(n) => number::Decimal::parse(n.text())
                        .is_some_and(|d| set_.iter().any(|i| i.contains(&d))),
                    _ => false,
                });
                set(registers, dst, hit);
            }
            Inst::BoolEq {
                dst,
                slot: s,
                value,
            } => {
                let hit = leaves(s)
                    .iter()
                    .any(|l| matches!(l, Leaf::Bool(b) if *b == value));
                set(registers, dst, hit);
            }
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
        }
    }
    false
}

//! Decision plans: the form the executor runs the programs codegen emits in.
//!
//! Codegen compiles a policy into one register: each test writes `r0`, `not` flips it, `const`
//! sets it, and `jump_if_false`/`jump_if_true` skip what can no longer matter, until `ret r0`.
//! In such a program the value of `r0` right after a test is that test's verdict, so where the
//! run goes next depends only on the verdict: the program is a decision graph over its tests.
//! [`Plan::build`] derives that graph once, when the program is verified; the executor then walks
//! it — one step per test, with no register traffic and no dispatch of `jump_*`, `not`, `const` or
//! `ret` — and the common tests (shape, string equality against a few strings, prefix, suffix,
//! binary64 intervals) read their constants from the step itself: each pool entry is converted
//! once and shared by every step that reads it, so the plan's size stays in proportion to the
//! program's. Other tests run
//! through the general executor's code for their instruction ([`crate::exec`]), so every
//! instruction keeps one implementation of its meaning.
//!
//! A program that touches a register other than `r0`, or reads `r0` before writing it, gets no
//! plan and runs on the general executor.

use crate::bind::{Bindings, Slot};
use crate::exec;
use crate::op::{Inst, Reg};
use crate::program::{Interval, Program};
use crate::value::{Leaf, Shapes};
use std::sync::Arc;

/// The "run returns true" end of a plan.
const TRUE: u32 = u32::MAX;
/// The "run returns false" end of a plan.
const FALSE: u32 = u32::MAX - 1;
/// Hash sets of at most this many strings are compared one by one instead (cheaper than hashing).
const SMALL_SET: usize = 8;

/// A program's decision graph (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    steps: Vec<Step>,
    /// The first step (or an end, for a program without tests).
    start: u32,
}

/// One test and where to go on each verdict.
#[derive(Debug, Clone)]
struct Step {
    kind: Kind,
    /// The slot read.
    slot: u32,
    on_true: u32,
    on_false: u32,
}

/// A list of strings (as bytes) shared by the steps that read it.
type Strings = Arc<[Box<[u8]>]>;

/// A test, with its constants in the step itself.
///
/// Constants taken from the program's pools are shared, not copied: every step that reads the
/// same pool entry holds the same [`Arc`] (built once per entry by [`SharedPools`]), so a plan
/// costs memory in proportion to the program (a hostile program of n instructions all reading one
/// n-item list would otherwise need n² copies). An `Arc<[T]>` is the same fat pointer as a
/// `Box<[T]>`, so reading the constants costs the step the same one load.
#[derive(Debug, Clone)]
enum Kind {
    /// The slot's shape is in the set.
    Shape(Shapes),
    /// Some string leaf equals one of the strings.
    StrAny(Strings),
    /// Some string leaf starts with one of the strings.
    Prefix(Strings),
    /// Some string leaf ends with one of the strings.
    Suffix(Strings),
    /// Some number leaf lies in the intervals.
    NumIn(Arc<[Interval]>),
    /// Some numeric string leaf lies in the intervals (parsed at bind time).
    TextNumIn(Arc<[Interval]>),
    /// The test instruction at this index, run by the general executor.
    Other(u32),
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn strings<'s>(items: impl IntoIterator<Item = &'s str>) -> Strings {
    items
        .into_iter()
        .map(|s| Box::<[u8]>::from(s.as_bytes()))
        .collect()
}

/// The plan's form of each pool entry its steps read, made once per entry and shared by every
/// step that reads it. Indexed like the pools; an entry is made on first use.
struct SharedPools {
    /// `strings[i]`, as a one-string list (`str_eq`).
    strings: Vec<Option<Strings>>,
    /// `sets[i]`, as a list (`str_in` with few members).
    sets: Vec<Option<Strings>>,
    /// `lists[i]` (`str_prefix`, `str_suffix`).
    lists: Vec<Option<Strings>>,
    /// `ranges[i]` (`num_in`, `text_num_in`).
    ranges: Vec<Option<Arc<[Interval]>>>,
}

/// The entry `i` of `cache`, made with `make` on first use; `None` when `i` is out of
/// range (never for a verified program).
fn share<T: ?Sized>(
    cache: &mut [Option<Arc<T>>],
    i: u32,
    make: impl FnOnce() -> Option<Arc<T>>,
) -> Option<Arc<T>> {
    let entry = cache.get_mut(i as usize)?;
    if entry.is_none() {
        *entry = make();
    }
    entry.clone()
}

impl Plan {
    /// The plan of a verified program, or `None` when it is not a one-register program.
    pub(crate) fn build(program: &Program) -> Option<Plan> {
        let code = program.code();
        let r0 = |r: Reg| r.0 == 0;
        let only_r0 = code.iter().all(|inst| match *inst {
            Inst::And { dst, a, b } | Inst::Or { dst, a, b } => r0(dst) && r0(a) && r0(b),
            Inst::Not { dst, src } => r0(dst) && r0(src),
            Inst::JumpIfFalse { cond, .. } | Inst::JumpIfTrue { cond, .. } => r0(cond),
            Inst::Ret { src } => r0(src),
            ref other => other.written().is_none_or(r0),
        });
        // Every row's run must write r0 before reading it: then runs of different rows share no
        // state, as the general executor's do not either for such programs.
        let writes_first = code
            .first()
            .is_some_and(|i| matches!(i, Inst::Const { .. }) || is_test(i));
        if !only_r0 || !writes_first {
            return None;
        }
        // Step numbers: tests in program order.
        let mut step_of = vec![FALSE; code.len()];
        let mut tests = Vec::new();
        for (pc, inst) in code.iter().enumerate() {
            if is_test(inst)
                && let Some(s) = step_of.get_mut(pc)
            {
                *s = idx(tests.len());
                tests.push(pc);
            }
        }
        // reach[pc][v]: the step (or end) reached when arriving at `pc` with `r0 == v`. Jumps go
        // forward only, so filling it from the end needs each entry once.
        let mut reach = vec![[FALSE; 2]; code.len() + 1];
        for pc in (0..code.len()).rev() {
            for v in [false, true] {
                let at = |p: usize, v: bool| {
                    reach
                        .get(p)
                        .and_then(|r| r.get(usize::from(v)))
                        .copied()
                        .unwrap_or(FALSE)
                };
                let to = match code.get(pc) {
                    Some(Inst::Ret { .. }) => {
                        if v {
                            TRUE
                        } else {
                            FALSE
                        }
                    }
                    Some(Inst::Not { .. }) => at(pc + 1, !v),
                    Some(Inst::Const { value, .. }) => at(pc + 1, *value),
                    Some(Inst::JumpIfFalse { target, .. }) if !v => at(target.0 as usize, v),
                    Some(Inst::JumpIfTrue { target, .. }) if v => at(target.0 as usize, v),
                    Some(Inst::JumpIfFalse { .. } | Inst::JumpIfTrue { .. })
                    | Some(Inst::And { .. } | Inst::Or { .. }) => at(pc + 1, v),
                    Some(_) => step_of.get(pc).copied().unwrap_or(FALSE),
                    None => FALSE,
                };
                if let Some(slot) = reach.get_mut(pc).and_then(|r| r.get_mut(usize::from(v))) {
                    *slot = to;
                }
            }
        }
        let pools = program.pools();
        let mut shared = SharedPools {
            strings: vec![None; pools.strings.len()],
            sets: vec![None; pools.sets.len()],
            lists: vec![None; pools.lists.len()],
            ranges: vec![None; pools.ranges.len()],
        };
        let mut steps = Vec::with_capacity(tests.len());
        for pc in tests {
            let next = reach.get(pc + 1).copied().unwrap_or([FALSE; 2]);
            let (kind, slot) = step(program, &mut shared, pc, code.get(pc)?);
            steps.push(Step {
                kind,
                slot,
                on_false: next[0],
                on_true: next[1],
            });
        }
        Some(Plan {
            steps,
            start: reach.first().map_or(FALSE, |r| r[0]),
        })
    }

    /// Runs the plan on every row of `bindings`: true when some row reaches the true end.
    #[inline]
    pub(crate) fn run(&self, program: &Program, bindings: &Bindings) -> bool {
        match bindings.only_row() {
            Some(slots) => self.run_row(program, bindings, slots),
            None => self.run_rows(program, bindings),
        }
    }

    /// Several rows (SNS bodies with arrays of objects): kept out of line so that the common one
    /// row path needs no stack frame.
    #[cold]
    #[inline(never)]
    fn run_rows(&self, program: &Program, bindings: &Bindings) -> bool {
        (0..bindings.rows()).any(|row| self.run_row(program, bindings, bindings.row(row)))
    }

    #[inline(never)]
    fn run_row(&self, program: &Program, bindings: &Bindings, slots: &[Slot]) -> bool {
        let mut at = self.start;
        while let Some(step) = self.steps.get(at as usize) {
            let slot = slots
                .get(step.slot as usize)
                .copied()
                .unwrap_or(Slot::ABSENT);
            let hit = match &step.kind {
                Kind::Shape(shapes) => shapes.has(slot.shape),
                Kind::StrAny(consts) => any_str(bindings.leaves(slot), |v| {
                    consts
                        .iter()
                        .any(|c| c.len() == v.len() && exec::same(v, c))
                }),
                Kind::Prefix(consts) => any_str(bindings.leaves(slot), |v| {
                    consts
                        .iter()
                        .any(|c| v.get(..c.len()).is_some_and(|head| exec::same(head, c)))
                }),
                Kind::Suffix(consts) => any_str(bindings.leaves(slot), |v| {
                    consts.iter().any(|c| {
                        v.len()
                            .checked_sub(c.len())
                            .and_then(|at| v.get(at..))
                            .is_some_and(|tail| exec::same(tail, c))
                    })
                }),
                Kind::NumIn(set) => bindings.leaves(slot).iter().any(|l| match l {
                    Leaf::Num(n) => set.iter().any(|i| i.contains(n.value())),
                    _ => false,
                }),
                Kind::TextNumIn(set) => bindings
                    .text_numbers(slot)
                    .iter()
                    .any(|&x| set.iter().any(|i| i.contains(x))),
                Kind::Other(pc) => exec::test_at(program, *pc as usize, bindings, slots),
            };
            at = if hit { step.on_true } else { step.on_false };
        }
        at == TRUE
    }

    /// The number of steps (tests).
    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }
}

/// The step kind and slot of test instruction `inst` at `pc`, its constants taken from (or put
/// into) `shared`.
fn step(program: &Program, shared: &mut SharedPools, pc: usize, inst: &Inst) -> (Kind, u32) {
    let pools = program.pools();
    let list = |i: u32| {
        pools
            .lists
            .get(i as usize)
            .map(|l| strings(l.iter().map(|s| &**s)))
    };
    let ranges = |i: u32| {
        pools
            .ranges
            .get(i as usize)
            .map(|r| Arc::from(r.as_slice()))
    };
    let kind = match *inst {
        Inst::Shape { slot, shapes, .. } => Some((Kind::Shape(shapes), slot)),
        Inst::StrEq { slot, s, .. } => share(&mut shared.strings, s.0, || {
            pools.strings.get(s.0 as usize).map(|s| strings([&**s]))
        })
        .map(|c| (Kind::StrAny(c), slot)),
        Inst::StrIn { slot, set, .. } => share(&mut shared.sets, set.0, || {
            pools
                .sets
                .get(set.0 as usize)
                .filter(|set| set.len() <= SMALL_SET)
                .map(|set| strings(set.iter().map(|s| &**s)))
        })
        .map(|c| (Kind::StrAny(c), slot)),
        Inst::StrPrefix { slot, list: l, .. } => {
            share(&mut shared.lists, l.0, || list(l.0)).map(|c| (Kind::Prefix(c), slot))
        }
        Inst::StrSuffix { slot, list: l, .. } => {
            share(&mut shared.lists, l.0, || list(l.0)).map(|c| (Kind::Suffix(c), slot))
        }
        Inst::NumIn {
            slot, ranges: r, ..
        } => share(&mut shared.ranges, r.0, || ranges(r.0)).map(|c| (Kind::NumIn(c), slot)),
        Inst::TextNumIn {
            slot, ranges: r, ..
        } => share(&mut shared.ranges, r.0, || ranges(r.0)).map(|c| (Kind::TextNumIn(c), slot)),
        _ => None,
    };
    match kind {
        Some((kind, slot)) => (kind, slot.0),
        None => (Kind::Other(idx(pc)), 0),
    }
}

fn is_test(inst: &Inst) -> bool {
    !matches!(
        inst,
        Inst::Const { .. }
            | Inst::And { .. }
            | Inst::Or { .. }
            | Inst::Not { .. }
            | Inst::JumpIfFalse { .. }
            | Inst::JumpIfTrue { .. }
            | Inst::Ret { .. }
    )
}

/// Some string leaf satisfies `f` (given its bytes).
#[inline(always)]
fn any_str(leaves: &[Leaf], mut f: impl FnMut(&[u8]) -> bool) -> bool {
    leaves.iter().any(|l| match l {
        Leaf::Str(v) => f(v.as_bytes()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;
    use crate::message::Message;
    use crate::op::{ListRef, RangesRef, SetRef, SlotRef, StrRef, Target};
    use crate::program::ProgramParts;

    /// A tiny seeded generator (xorshift), so the test needs no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn parts() -> ProgramParts {
        let mut p = ProgramParts::default();
        p.keys.intern(Key::Header("a".into()));
        p.keys.intern(Key::Header("b".into()));
        p.pools.strings.push("x".into());
        p.pools.strings.push("a-long-value-123".into());
        p.pools
            .sets
            .push(["x", "y", "zz"].into_iter().map(Into::into).collect());
        p.pools.lists.push(vec!["a-".into(), "x".into()]);
        p.pools.ranges.push(vec![crate::program::Interval {
            lo: 1.0,
            lo_inclusive: true,
            hi: 10.0,
            hi_inclusive: false,
        }]);
        p.registers = 1;
        p
    }

    fn random_test(rng: &mut Rng) -> Inst {
        let dst = Reg(0);
        let slot = SlotRef(rng.below(2) as u32);
        match rng.below(8) {
            0 => Inst::Shape {
                dst,
                slot,
                shapes: Shapes::PRESENT,
            },
            1 => Inst::StrEq {
                dst,
                slot,
                s: StrRef(rng.below(2) as u32),
            },
            2 => Inst::StrIn {
                dst,
                slot,
                set: SetRef(0),
            },
            3 => Inst::StrPrefix {
                dst,
                slot,
                list: ListRef(0),
            },
            4 => Inst::StrSuffix {
                dst,
                slot,
                list: ListRef(0),
            },
            5 => Inst::TextNumIn {
                dst,
                slot,
                ranges: RangesRef(0),
            },
            6 => Inst::StrContains {
                dst,
                slot,
                list: ListRef(0),
            },
            _ => Inst::HasType {
                dst,
                slot,
                types: crate::value::LeafTypes::STR,
            },
        }
    }

    /// A random one-register program: tests, `not`, `const`, forward jumps, `ret`.
    fn random_program(rng: &mut Rng) -> Program {
        let len = 2 + rng.below(12);
        let mut code = vec![random_test(rng)];
        while code.len() < len - 1 {
            let at = code.len();
            code.push(match rng.below(6) {
                0 => Inst::Not {
                    dst: Reg(0),
                    src: Reg(0),
                },
                1 => Inst::Const {
                    dst: Reg(0),
                    value: rng.below(2) == 0,
                },
                2 | 3 => {
                    let target = Target((at + 1 + rng.below(len - at - 1)) as u32);
                    if rng.below(2) == 0 {
                        Inst::JumpIfFalse {
                            cond: Reg(0),
                            target,
                        }
                    } else {
                        Inst::JumpIfTrue {
                            cond: Reg(0),
                            target,
                        }
                    }
                }
                _ => random_test(rng),
            });
        }
        code.push(Inst::Ret { src: Reg(0) });
        let mut p = parts();
        p.code = code;
        Program::new(p).expect("verifies")
    }

    fn random_message(rng: &mut Rng) -> Message {
        let values = [
            "x",
            "y",
            "zz",
            "a-long-value-123",
            "a-b",
            "5",
            "12",
            "",
            "bx",
        ];
        let mut headers = Vec::new();
        for name in ["a", "b"] {
            let n = rng.below(3);
            if n > 0 {
                headers.push(crate::message::Header {
                    name: name.into(),
                    values: (0..n)
                        .map(|_| values[rng.below(values.len())].to_owned())
                        .collect(),
                });
            }
        }
        Message::Headers(headers)
    }

    #[test]
    fn plan_agrees_with_the_register_executor_on_random_programs() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..3000 {
            let program = random_program(&mut rng);
            assert!(program.plan().is_some(), "{}", program.disassemble());
            for _ in 0..8 {
                let mut b = Bindings::new();
                b.bind(program.keys(), &random_message(&mut rng));
                assert_eq!(
                    program.plan().map(|p| p.run(&program, &b)),
                    Some(exec::run_registers(&program, &b, &mut Vec::new())),
                    "{}",
                    program.disassemble()
                );
            }
        }
    }

    #[test]
    fn programs_with_other_registers_or_reading_first_get_no_plan() {
        let mut p = parts();
        p.registers = 2;
        p.code = vec![
            Inst::Const {
                dst: Reg(1),
                value: true,
            },
            Inst::Ret { src: Reg(1) },
        ];
        assert!(Program::new(p).unwrap().plan().is_none());
        let mut p = parts();
        p.code = vec![
            Inst::Not {
                dst: Reg(0),
                src: Reg(0),
            },
            Inst::Ret { src: Reg(0) },
        ];
        assert!(Program::new(p).unwrap().plan().is_none());
    }

    #[test]
    fn steps_reading_one_pool_entry_share_its_constants() {
        let mut p = parts();
        let (dst, slot) = (Reg(0), SlotRef(0));
        let either = |target: u32| Inst::JumpIfTrue {
            cond: Reg(0),
            target: Target(target),
        };
        p.code = vec![
            Inst::StrPrefix {
                dst,
                slot,
                list: ListRef(0),
            },
            either(2),
            Inst::StrSuffix {
                dst,
                slot,
                list: ListRef(0),
            },
            either(4),
            Inst::StrEq {
                dst,
                slot,
                s: StrRef(1),
            },
            either(6),
            Inst::StrEq {
                dst,
                slot,
                s: StrRef(1),
            },
            Inst::Ret { src: Reg(0) },
        ];
        let program = Program::new(p).unwrap();
        let steps = &program.plan().unwrap().steps;
        match (
            &steps[0].kind,
            &steps[1].kind,
            &steps[2].kind,
            &steps[3].kind,
        ) {
            (Kind::Prefix(a), Kind::Suffix(b), Kind::StrAny(c), Kind::StrAny(d)) => {
                assert!(Arc::ptr_eq(a, b));
                assert!(Arc::ptr_eq(c, d));
                assert_eq!(**c, [Box::from(&b"a-long-value-123"[..])]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plan_steps_one_per_test() {
        let mut p = parts();
        p.code = vec![
            Inst::Shape {
                dst: Reg(0),
                slot: SlotRef(0),
                shapes: Shapes::PRESENT,
            },
            Inst::JumpIfFalse {
                cond: Reg(0),
                target: Target(3),
            },
            Inst::StrEq {
                dst: Reg(0),
                slot: SlotRef(0),
                s: StrRef(0),
            },
            Inst::Ret { src: Reg(0) },
        ];
        let program = Program::new(p).unwrap();
        assert_eq!(program.plan_steps(), Some(2));
        let mut b = Bindings::new();
        b.bind(program.keys(), &Message::headers([("a", "x")]));
        assert!(program.eval(&b, &mut Vec::new()));
        b.bind(program.keys(), &Message::headers([("a", "y")]));
        assert!(!program.eval(&b, &mut Vec::new()));
    }
}

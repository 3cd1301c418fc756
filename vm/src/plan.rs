//! Decision plans: the form the executor runs the programs codegen emits in.
//!
//! Codegen compiles a policy into one register: each test writes `r0`, `not` flips it, `const`
//! sets it, and `jump_if_false`/`jump_if_true` skip what can no longer matter, until `ret r0`.
//! In such a program the value of `r0` right after a test is that test's verdict, so where the
//! run goes next depends only on the verdict: the program is a decision graph over its tests.
//! [`Plan::build`] derives that graph once, when the program is verified; the executor then walks
//! it — one step per test, with no register traffic and no dispatch of `jump_*`, `not`, `const` or
//! `ret` — and the common tests (shape, string equality, prefix, suffix, binary64 intervals, SNS
//! wildcards) read their constants from the step itself: each pool entry is converted once and
//! shared by every step that reads it, so the plan's size stays in proportion to the program's.
//! Every step calls the general executor's predicate for its instruction ([`crate::exec`]), and
//! rarer tests run through the executor's code for the whole instruction, so every instruction
//! keeps one implementation of its meaning.
//!
//! String equality (`str_eq`, `str_in`) compares dictionary ids: the program's key table holds
//! its constants ([`crate::bind::KeyTable::add_constant`]), so binding a message to that table
//! gives each string leaf the id of the constant it equals, and a step compares the id with its
//! constants' ids. Ids mean something only for the table they come from: a message bound to
//! another table (another [`crate::bind::KeyTable::stamp`]) runs on the general executor, which
//! compares text.
//!
//! Binary64 intervals are held closed (an excluded end moved to the next value inward,
//! [`ClosedInterval`]), so membership is two comparisons.
//!
//! A plan of one test (most one-clause policies) comparing ids or shapes is decided where
//! [`Program::eval`] is inlined, without entering the loop. When that one test reads the leaves
//! of a header, borrowed headers need no bound row at all ([`HeaderProbe::decide`]): the test is
//! "some leaf satisfies ...", so it holds on the header's slot exactly when it holds on some single
//! value, bound as the binder binds it; the values are tested as the headers are read, and few
//! equality constants are compared as text rather than looked up for ids. A plan of a few such
//! tests (most stream and expr filters of a few clauses) is walked the same way, each step
//! probing its own header with its own constants ([`HeaderWalk`]).
//!
//! A program that touches a register other than `r0`, or reads `r0` before writing it, gets no
//! plan and runs on the general executor.

use crate::bind::{self, Bound, NO_ID, Slot, SlotNeeds};
use crate::bytes::{self, ShortText};
use crate::exec;
use crate::interval::ClosedInterval;
use crate::key::Key;
use crate::message::{HeaderValues, Headers, Text};
use crate::op::{Inst, Reg};
use crate::value::Shapes;
use crate::verified::{ConstantIds, Verified};
use crate::wildcard::Wildcard;
use std::sync::Arc;

/// The "run returns true" end of a plan.
const TRUE: u32 = u32::MAX;
/// The "run returns false" end of a plan.
const FALSE: u32 = u32::MAX - 1;

/// A program's decision graph (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    steps: Vec<Step>,
    /// The first step (or an end, for a program without tests).
    start: u32,
    /// The stamp of the program's key table when its ids were taken.
    stamp: u64,
}

/// A plan of one test of one header's leaves, decided on borrowed headers as they are read
/// ([`HeaderProbe::decide`]). [`crate::program::Program`] holds it beside its plan, so that
/// the borrowed-headers path tests one field before it starts reading.
#[derive(Debug, Clone)]
pub(crate) struct HeaderProbe {
    /// The header's name.
    name: Box<[u8]>,
    /// What binding computes for its values' leaves (no dictionary ids: see `test`).
    needs: SlotNeeds,
    /// The test of one leaf.
    test: ProbeTest,
    /// The verdict when some leaf passes the test, and when none does.
    on_hit: bool,
    on_miss: bool,
}

/// A plan of a few tests, each of one header's leaves, decided on borrowed headers as they are
/// read ([`HeaderWalk::decide`]): the plan's graph walked with each step a [`HeaderProbe`] of its
/// header, instead of binding a row first (which compares every header's name with every key and
/// looks every value up in the dictionary). [`crate::program::Program`] holds it beside its plan.
#[derive(Debug, Clone)]
pub(crate) struct HeaderWalk {
    /// By step: the probe of its test (answering whether some leaf passes) and where to go on
    /// each verdict, as in the plan.
    steps: Box<[(HeaderProbe, u32, u32)]>,
    /// The first step (or an end).
    start: u32,
}

/// Plans of at most this many steps are walked on borrowed headers: each step reads the headers
/// up to the first of its name (all of them, when none has a value that passes), so a walk costs
/// at most this many readings of the headers, where binding reads them once but compares each
/// name with every key.
const WALK_STEPS: usize = 16;

/// How a [`HeaderProbe`] tests a leaf.
///
/// With a tag of its own (not one hidden in a field's unused values), so that telling the kinds
/// apart is one compare.
#[derive(Debug, Clone)]
#[repr(u8)]
enum ProbeTest {
    /// [`ProbeTest::Equal`] where the header's name and every constant are short texts (most):
    /// each compare is a length test and two word compares.
    EqualShort(ShortProbe),
    /// String equality with few constants (`str_eq`, a small `str_in`), by their bytes: comparing
    /// the value with them costs less than looking it up in the table's dictionary for an id.
    Equal(Box<[Box<[u8]>]>),
    /// The step's own test (a kind [`Kind::is_leafwise`] accepts, without dictionary ids).
    Step(Kind),
}

/// [`ProbeTest::EqualShort`]: the header's name and the constants as short texts, and the
/// probe's verdicts (a copy of the [`HeaderProbe`]'s), so that its loops need this alone.
#[derive(Debug, Clone)]
struct ShortProbe {
    name: ShortText,
    /// The constants, then [`ShortText::NONE`]: held in place and compared all, so that the
    /// compares need no loop and no pointer to load.
    texts: [ShortText; PROBE_TEXTS],
    on_hit: bool,
    on_miss: bool,
}

/// Equality tests with at most this many constants are probed by text.
const PROBE_TEXTS: usize = 4;

/// One test and where to go on each verdict.
#[derive(Debug, Clone)]
struct Step {
    kind: Kind,
    /// The slot read.
    slot: u32,
    on_true: u32,
    on_false: u32,
}

/// A list of strings shared by the steps that read it (each string the pool's own, shared).
type Strings = Arc<[Arc<str>]>;

/// Sorted dictionary ids shared by the steps that read them.
type Ids = Arc<[u32]>;

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
    /// Some string leaf equals the constant of this dictionary id (`str_eq`).
    Eq(u32),
    /// Some string leaf equals a constant whose id is `base + i` for a bit `i` of `mask`
    /// (`str_in` whose constants' ids lie within 64 of each other: most).
    IdMask { base: u32, mask: u64 },
    /// Some string leaf equals a constant of these ids (`str_in`).
    In(Ids),
    /// Some string leaf starts with one of the strings.
    Prefix(Strings),
    /// Some string leaf starts with the string (a one-string list: most prefixes).
    Prefix1(Arc<str>),
    /// Some string leaf ends with one of the strings.
    Suffix(Strings),
    /// Some string leaf ends with the string (a one-string list).
    Suffix1(Arc<str>),
    /// Some number leaf lies in the intervals (held closed, see [`ClosedInterval`]).
    NumIn(Arc<[ClosedInterval]>),
    /// Some numeric string leaf lies in the intervals (parsed at bind time).
    TextNumIn(Arc<[ClosedInterval]>),
    /// Some comparable number leaf (EB-17) lies in the intervals.
    CmpNumIn(Arc<[ClosedInterval]>),
    /// Some string leaf matches the SNS wildcard.
    Wildcard(Arc<Wildcard>),
    /// The test instruction at this index, run by the general executor.
    Other(u32),
}

impl HeaderProbe {
    /// The probe of a program whose plan is one step (of the program's first test) testing the
    /// leaves of a header; `None` for other programs.
    pub(crate) fn of(program: &Verified, plan: &Plan) -> Option<HeaderProbe> {
        let ([step], 0) = (&*plan.steps, plan.start) else {
            return None;
        };
        let inst = program.code().iter().find(|inst| inst.is_test())?;
        HeaderProbe::of_step(
            program,
            inst,
            step,
            step.on_true == TRUE,
            step.on_false == TRUE,
        )
    }

    /// The probe of `step` (the plan's step of test instruction `inst`) when it tests the leaves
    /// of a header, answering `on_hit` when some leaf passes and `on_miss` when none does.
    fn of_step(
        program: &Verified,
        inst: &Inst,
        step: &Step,
        on_hit: bool,
        on_miss: bool,
    ) -> Option<HeaderProbe> {
        let keys = program.keys();
        let Some(Key::Header(name)) = keys.keys().get(step.slot as usize) else {
            return None;
        };
        let pools = program.pools();
        let bytes = |s: &str| Box::<[u8]>::from(s.as_bytes());
        let texts = match *inst {
            Inst::StrEq { s, .. } => pools
                .strings
                .get(s.0 as usize)
                .map(|s| Box::from([bytes(s)])),
            Inst::StrIn { set, .. } => pools
                .sets
                .get(set.0 as usize)
                .filter(|set| set.len() <= PROBE_TEXTS)
                .map(|set| {
                    // In a fixed order: the hash set's depends on its seed.
                    let mut texts: Vec<&str> = set.iter().map(|s| &**s).collect();
                    texts.sort_unstable();
                    texts.into_iter().map(bytes).collect()
                }),
            _ => None,
        };
        let short = |texts: &[Box<[u8]>]| -> Option<ProbeTest> {
            let mut places = [ShortText::NONE; PROBE_TEXTS];
            for (place, text) in places.iter_mut().zip(texts) {
                *place = ShortText::new(text)?;
            }
            Some(ProbeTest::EqualShort(ShortProbe {
                name: ShortText::new(name.as_bytes())?,
                texts: (texts.len() <= PROBE_TEXTS).then_some(places)?,
                on_hit,
                on_miss,
            }))
        };
        let test = match (texts, &step.kind) {
            (Some(texts), _) => short(&texts).unwrap_or(ProbeTest::Equal(texts)),
            // Equality by ids needs the ids binding gives: bound leaves, not probed ones.
            (None, Kind::Eq(_) | Kind::IdMask { .. } | Kind::In(_)) => return None,
            (None, kind) if kind.is_leafwise() => ProbeTest::Step(kind.clone()),
            (None, _) => return None,
        };
        Some(HeaderProbe {
            name: name.as_bytes().into(),
            needs: keys.needs(step.slot).without_ids(),
            test,
            on_hit,
            on_miss,
        })
    }

    /// The program's verdict on `headers`, read as they are, without binding a row: the test
    /// holds on the header's slot when it holds on some single one of its leaves (every kind
    /// [`Kind::is_leafwise`] accepts is "some leaf satisfies ..."), so each value is tested as
    /// the one leaf of a slot, bound as the binder binds it, and the first that holds decides.
    #[inline(always)]
    pub(crate) fn decide<H: Headers + ?Sized>(&self, program: &Verified, headers: &H) -> bool {
        match &self.test {
            ProbeTest::EqualShort(short) => short.decide(headers),
            ProbeTest::Equal(texts) => self.decide_equal(texts, headers),
            ProbeTest::Step(kind) => self.decide_step(program, kind, headers),
        }
    }

    /// [`HeaderProbe::decide`] for equality, out of line. A value is compared by its bytes,
    /// without checking that they are UTF-8: bytes equal to a constant (text) are that text, and
    /// bytes that are not UTF-8 equal no constant, as they satisfy no string test.
    #[inline(never)]
    fn decide_equal<H: Headers + ?Sized>(&self, texts: &[Box<[u8]>], headers: &H) -> bool {
        let name = &*self.name;
        for (n, values) in headers.entries() {
            if bytes::same(name, n.bytes()) {
                for v in values.values() {
                    let v = v.bytes();
                    if texts.iter().any(|t| bytes::same(v, t)) {
                        return self.on_hit;
                    }
                }
            }
        }
        self.on_miss
    }

    /// [`HeaderProbe::decide`] for the kinds other than equality, out of line.
    #[inline(never)]
    fn decide_step<H: Headers + ?Sized>(
        &self,
        program: &Verified,
        kind: &Kind,
        headers: &H,
    ) -> bool {
        let hit = bind::any_header_value(program.keys(), headers, &self.name, self.needs, |slot| {
            Plan::leafwise(kind, slot)
        });
        if hit { self.on_hit } else { self.on_miss }
    }
}

impl ShortProbe {
    /// [`HeaderProbe::decide_equal`] for a name and constants that are short texts. Up to the
    /// first header of the name (whose values most often decide) in a loop that calls nothing,
    /// so that it needs no registers saved; the headers after it in [`ShortProbe::decide_rest`].
    #[inline(never)]
    fn decide<H: Headers + ?Sized>(&self, headers: &H) -> bool {
        let mut entries = headers.entries();
        while let Some((n, values)) = entries.next() {
            if self.name.is(n.bytes()) {
                if self.any_value(values.values()) {
                    return self.on_hit;
                }
                return self.decide_rest(entries);
            }
        }
        self.on_miss
    }

    /// [`ShortProbe::decide`] on the headers after the first of the name.
    #[inline(never)]
    fn decide_rest<'h, N, V>(&self, entries: impl Iterator<Item = (&'h N, &'h V)>) -> bool
    where
        N: Text + ?Sized + 'h,
        V: HeaderValues + ?Sized + 'h,
    {
        for (n, values) in entries {
            if self.name.is(n.bytes()) && self.any_value(values.values()) {
                return self.on_hit;
            }
        }
        self.on_miss
    }

    /// Whether some of `values` equals some constant.
    #[inline(always)]
    fn any_value<T: Text>(&self, values: &[T]) -> bool {
        for v in values {
            let v = v.bytes();
            for t in &self.texts {
                if t.is(v) {
                    return true;
                }
            }
        }
        false
    }
}

impl HeaderWalk {
    /// The walk of a program whose plan has two to [`WALK_STEPS`] steps, each testing the leaves
    /// of a header (not its shape) in a way a [`HeaderProbe`] can; `None` for other programs.
    pub(crate) fn of(program: &Verified, plan: &Plan) -> Option<HeaderWalk> {
        if !(2..=WALK_STEPS).contains(&plan.steps.len()) {
            return None;
        }
        // Every step must test a header's leaves, not its shape (as `HeaderProbe::of_step`
        // requires): most programs that cannot be walked (of attributes or bodies, or with a shape
        // test first) are told so here, by their first step, before any probe is made.
        let keys = program.keys().keys();
        let probed = |step: &Step| {
            !matches!(step.kind, Kind::Shape(_))
                && matches!(keys.get(step.slot as usize), Some(Key::Header(_)))
        };
        if !plan.steps.iter().all(probed) {
            return None;
        }
        // Steps are the program's tests in program order (`Plan::build`).
        let tests = program.code().iter().filter(|inst| inst.is_test());
        let steps = tests
            .zip(&*plan.steps)
            .map(|(inst, step)| {
                let probe = HeaderProbe::of_step(program, inst, step, true, false)?;
                Some((probe, step.on_true, step.on_false))
            })
            .collect::<Option<Box<[_]>>>()?;
        (steps.len() == plan.steps.len()).then_some(HeaderWalk {
            steps,
            start: plan.start,
        })
    }

    /// The program's verdict on `headers`, read as they are, without binding a row: each step's
    /// test holds on its header's slot exactly when its probe finds a leaf that passes
    /// ([`HeaderProbe::decide`]), so the walk reaches the end the plan reaches on the bound row.
    /// Inlined into [`crate::program::Program`]'s out-of-line headers path, one call fewer.
    #[inline(always)]
    pub(crate) fn decide<H: Headers + ?Sized>(&self, program: &Verified, headers: &H) -> bool {
        let mut at = self.start;
        while let Some((probe, on_true, on_false)) = self.steps.get(at as usize) {
            at = if probe.decide(program, headers) {
                *on_true
            } else {
                *on_false
            };
        }
        at == TRUE
    }
}

impl Kind {
    /// Whether the test is "some leaf of the slot satisfies ...", so that it holds on a slot
    /// exactly when it holds on a slot of some single one of its leaves.
    fn is_leafwise(&self) -> bool {
        !matches!(self, Kind::Shape(_) | Kind::Other(_))
    }
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The plan's form of each pool entry its steps read, made once per entry and shared by every
/// step that reads it. A one-string list needs no entry here: its steps hold the pool's string.
/// Each entry is found in the step that first read it (the step's kind holds it), so this holds
/// only indexes: nothing to drop, and nothing cloned when an entry is made.
struct SharedPools {
    /// `sets[i]`, as the step kind of the `str_in` instructions reading it (its members' ids, as
    /// a mask or a sorted list).
    sets: Shared,
    /// `lists[i]` (`str_prefix`, `str_suffix`).
    lists: Shared,
    /// `ranges[i]` (`num_in`, `text_num_in`, `cmp_num_in`).
    ranges: Shared,
    /// `wildcards[i]`.
    wildcards: Shared,
}

/// How many entries of one pool [`Shared`] holds in place before it indexes them in a table.
const FEW_SHARED: usize = 8;

/// The steps that made the entries of one pool, by the entry's index: the first [`FEW_SHARED`]
/// distinct entries read held in place and found by comparing indexes (a policy's program reads
/// few: nothing allocated), the others in a table indexed like the pool, allocated once needed
/// (so a large program still costs time in proportion to its size).
struct Shared {
    /// (entry, step) for the first `few_len` entries made.
    few: [(u32, u32); FEW_SHARED],
    few_len: usize,
    /// By entry: one more than the step that made it (0: none), once `few` is full.
    many: Vec<u32>,
    /// The pool's length.
    len: usize,
}

impl Shared {
    fn new(len: usize) -> Shared {
        Shared {
            few: [(0, 0); FEW_SHARED],
            few_len: 0,
            many: Vec::new(),
            len,
        }
    }

    /// The entry `i`: taken with `held` from the step of `steps` that made it, or else made with
    /// `make` for the step about to be added (`steps.len()`); `None` when `i` is out of range
    /// (never for a verified program) or `make` gives none.
    fn share<T>(
        &mut self,
        i: u32,
        steps: &[Step],
        held: impl FnOnce(&Kind) -> Option<T>,
        make: impl FnOnce() -> Option<T>,
    ) -> Option<T> {
        if i as usize >= self.len {
            return None;
        }
        let few = self.few.get(..self.few_len).unwrap_or_default();
        let made_by = match few.iter().find(|(at, _)| *at == i) {
            Some(&(_, step)) => Some(step),
            None => self
                .many
                .get(i as usize)
                .and_then(|step| step.checked_sub(1)),
        };
        if let Some(made) = made_by
            .and_then(|step| steps.get(step as usize))
            .and_then(|step| held(&step.kind))
        {
            return Some(made);
        }
        let made = make()?;
        let step = idx(steps.len());
        match self.few.get_mut(self.few_len) {
            Some(place) => {
                *place = (i, step);
                self.few_len += 1;
            }
            None => {
                if self.many.is_empty() {
                    self.many.resize(self.len, 0);
                }
                if let Some(place) = self.many.get_mut(i as usize) {
                    *place = step.saturating_add(1);
                }
            }
        }
        Some(made)
    }
}

/// Programs of at most this many instructions fill [`Plan::build`]'s reach table on the stack.
const REACH_ON_STACK: usize = 64;

impl Plan {
    /// The plan of a verified program, or `None` when it is not a one-register program. The ids
    /// of its equality constants are taken from `ids` where recorded, else looked up in the key
    /// table (the same ids).
    pub(crate) fn build(program: &Verified, ids: &ConstantIds) -> Option<Plan> {
        let code = program.code();
        let r0 = |r: Reg| r.0 == 0;
        // Every row's run must write r0 before reading it: then runs of different rows share no
        // state, as the general executor's do not either for such programs.
        let writes_first = code
            .first()
            .is_some_and(|i| matches!(i, Inst::Const { .. }) || i.is_test());
        if !writes_first {
            return None;
        }
        // Every instruction must read and write r0 alone; the tests are counted on the way.
        let mut tests = 0usize;
        for inst in code {
            let only_r0 = match *inst {
                Inst::And { dst, a, b } | Inst::Or { dst, a, b } => r0(dst) && r0(a) && r0(b),
                Inst::Not { dst, src } => r0(dst) && r0(src),
                Inst::JumpIfFalse { cond, .. } | Inst::JumpIfTrue { cond, .. } => r0(cond),
                Inst::Ret { src } => r0(src),
                ref other => {
                    tests += usize::from(other.is_test());
                    other.written().is_none_or(r0)
                }
            };
            if !only_r0 {
                return None;
            }
        }
        // Step numbers: tests in program order. Counted down while `reach` is filled from the
        // end, so that no table of them is allocated.
        let mut test_step = tests;
        // reach[pc]: the step (or end) reached when arriving at `pc` with `r0` false, and with
        // `r0` true. Jumps go forward only, so filling it from the end needs each entry once. A
        // policy's program fits it on the stack; a larger one allocates it.
        let entries = code.len() + 1;
        let mut small = [[FALSE; 2]; REACH_ON_STACK];
        let mut large = Vec::new();
        let reach: &mut [[u32; 2]] = if entries <= REACH_ON_STACK {
            small.get_mut(..entries).unwrap_or_default()
        } else {
            large.resize(entries, [FALSE; 2]);
            &mut large
        };
        for (pc, inst) in code.iter().enumerate().rev() {
            let at = |p: usize| reach.get(p).copied().unwrap_or([FALSE; 2]);
            let next = at(pc + 1);
            let to = match *inst {
                Inst::Ret { .. } => [FALSE, TRUE],
                Inst::Not { .. } => [next[1], next[0]],
                Inst::Const { value, .. } => {
                    let to = if value { next[1] } else { next[0] };
                    [to, to]
                }
                Inst::JumpIfFalse { target, .. } => [at(target.0 as usize)[0], next[1]],
                Inst::JumpIfTrue { target, .. } => [next[0], at(target.0 as usize)[1]],
                Inst::And { .. } | Inst::Or { .. } => next,
                ref other if other.is_test() => {
                    test_step = test_step.saturating_sub(1);
                    [idx(test_step); 2]
                }
                _ => [FALSE; 2],
            };
            if let Some(entry) = reach.get_mut(pc) {
                *entry = to;
            }
        }
        let pools = program.pools();
        let mut shared = SharedPools {
            sets: Shared::new(pools.sets.len()),
            lists: Shared::new(pools.lists.len()),
            ranges: Shared::new(pools.ranges.len()),
            wildcards: Shared::new(pools.wildcards.len()),
        };
        let mut steps = Vec::with_capacity(tests);
        for (pc, inst) in code.iter().enumerate().filter(|(_, inst)| inst.is_test()) {
            let next = reach.get(pc + 1).copied().unwrap_or([FALSE; 2]);
            let (kind, slot) = step(program, ids, &mut shared, &steps, pc, inst);
            steps.push(Step {
                kind,
                slot,
                on_false: next[0],
                on_true: next[1],
            });
        }
        let start = reach.first().map_or(FALSE, |r| r[0]);
        Some(Plan {
            steps,
            start,
            stamp: program.keys().stamp(),
        })
    }

    /// The verdict of a step of a kind [`Kind::is_leafwise`] accepts (false for the others).
    #[inline(always)]
    fn leafwise(kind: &Kind, slot: &Slot<'_>) -> bool {
        match kind {
            Kind::Eq(id) => exec::id_equal(slot, *id),
            Kind::IdMask { base, mask } => exec::id_in_mask(slot, *base, *mask),
            Kind::In(ids) => exec::id_in(slot, ids),
            Kind::Prefix(consts) => exec::prefix(slot, consts),
            Kind::Prefix1(only) => exec::prefix(slot, std::slice::from_ref(only)),
            Kind::Suffix(consts) => exec::suffix(slot, consts),
            Kind::Suffix1(only) => exec::suffix(slot, std::slice::from_ref(only)),
            Kind::NumIn(set) => exec::num_in(slot, set),
            Kind::TextNumIn(set) => exec::text_num_in(slot, set),
            Kind::CmpNumIn(set) => exec::comparable_num_in(slot, set),
            Kind::Wildcard(w) => exec::wildcard(slot, w),
            Kind::Shape(_) | Kind::Other(_) => false,
        }
    }

    /// Runs the plan on every row of `bound`: true when some row reaches the true end. A message
    /// bound to another table than the program's runs on the general executor.
    #[inline(always)]
    pub(crate) fn run(
        &self,
        program: &Verified,
        bound: &Bound<'_>,
        registers: &mut Vec<bool>,
    ) -> bool {
        if bound.stamp() != self.stamp {
            return exec::run_registers(program, bound, registers);
        }
        let Some(slots) = bound.only_row() else {
            return self.run_rows(program, bound);
        };
        // A plan of one test comparing ids or shapes (most one-clause policies) is decided here,
        // inlined into the caller, without entering the loop.
        if let [step] = &*self.steps
            && self.start == 0
        {
            let slot = exec::row_slot(slots, step.slot);
            let hit = match step.kind {
                Kind::Eq(id) => Some(exec::id_equal(slot, id)),
                Kind::IdMask { base, mask } => Some(exec::id_in_mask(slot, base, mask)),
                Kind::Shape(shapes) => Some(shapes.has(slot.shape)),
                _ => None,
            };
            if let Some(hit) = hit {
                return (if hit { step.on_true } else { step.on_false }) == TRUE;
            }
        }
        self.run_row(program, slots)
    }

    /// Several rows (SNS bodies with arrays of objects): kept out of line so that the common one
    /// row path needs no stack frame.
    #[cold]
    #[inline(never)]
    fn run_rows(&self, program: &Verified, bound: &Bound<'_>) -> bool {
        (0..bound.rows()).any(|row| self.run_row(program, bound.row(row)))
    }

    /// One row. The common tests (shape, string equality, prefix, suffix, number intervals) are
    /// decided in this loop; the others by [`Plan::test`], kept out of line.
    #[inline(never)]
    fn run_row(&self, program: &Verified, slots: &[Slot<'_>]) -> bool {
        let mut at = self.start;
        while let Some(step) = self.steps.get(at as usize) {
            let slot = exec::row_slot(slots, step.slot);
            let hit = match &step.kind {
                Kind::Shape(shapes) => shapes.has(slot.shape),
                Kind::Eq(id) => exec::id_equal(slot, *id),
                Kind::IdMask { base, mask } => exec::id_in_mask(slot, *base, *mask),
                Kind::Prefix(consts) => exec::prefix(slot, consts),
                Kind::Prefix1(only) => exec::prefix(slot, std::slice::from_ref(only)),
                Kind::Suffix(consts) => exec::suffix(slot, consts),
                Kind::Suffix1(only) => exec::suffix(slot, std::slice::from_ref(only)),
                Kind::NumIn(set) => exec::num_in(slot, set),
                Kind::Wildcard(w) => exec::wildcard(slot, w),
                kind => Plan::test(program, kind, slot, slots),
            };
            at = if hit { step.on_true } else { step.on_false };
        }
        at == TRUE
    }

    /// The verdict of a step of the rarer kinds. Its arms repeat [`Plan::leafwise`]'s on purpose:
    /// delegating to it would dispatch on the kind twice (measured: +5 instructions on `seed`).
    #[inline(never)]
    fn test(program: &Verified, kind: &Kind, slot: &Slot<'_>, slots: &[Slot<'_>]) -> bool {
        match kind {
            Kind::Shape(shapes) => shapes.has(slot.shape),
            Kind::Eq(id) => exec::id_equal(slot, *id),
            Kind::IdMask { base, mask } => exec::id_in_mask(slot, *base, *mask),
            Kind::In(ids) => exec::id_in(slot, ids),
            Kind::Prefix(consts) => exec::prefix(slot, consts),
            Kind::Prefix1(only) => exec::prefix(slot, std::slice::from_ref(only)),
            Kind::Suffix(consts) => exec::suffix(slot, consts),
            Kind::Suffix1(only) => exec::suffix(slot, std::slice::from_ref(only)),
            Kind::NumIn(set) => exec::num_in(slot, set),
            Kind::TextNumIn(set) => exec::text_num_in(slot, set),
            Kind::CmpNumIn(set) => exec::comparable_num_in(slot, set),
            Kind::Wildcard(w) => exec::wildcard(slot, w),
            Kind::Other(pc) => exec::test_at(program, *pc as usize, slots),
        }
    }

    /// The number of steps (tests).
    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }
}

/// The step kind and slot of test instruction `inst` at `pc`, its constants taken from (or put
/// into) `shared`.
fn step(
    program: &Verified,
    ids: &ConstantIds,
    shared: &mut SharedPools,
    steps: &[Step],
    pc: usize,
    inst: &Inst,
) -> (Kind, u32) {
    let pools = program.pools();
    let list = |i: u32| {
        pools
            .lists
            .get(i as usize)
            .map(|l| l.iter().cloned().collect::<Strings>())
    };
    // The string of a list of one: the pool's, shared.
    let first = |i: u32| match pools.lists.get(i as usize).map(Vec::as_slice) {
        Some([only]) => Some(only.clone()),
        _ => None,
    };
    let ranges = |i: u32| {
        pools
            .ranges
            .get(i as usize)
            .map(|r| r.iter().map(ClosedInterval::of).collect::<Arc<[_]>>())
    };
    let keys = program.keys();
    let id = |s: &str| keys.constant_id(s).unwrap_or(NO_ID);
    // Each pool entry's form as held by the step that made it.
    let set_of = |kind: &Kind| match kind {
        Kind::IdMask { .. } | Kind::In(_) => Some(kind.clone()),
        _ => None,
    };
    let strings = |kind: &Kind| match kind {
        Kind::Prefix(c) | Kind::Suffix(c) => Some(c.clone()),
        _ => None,
    };
    let intervals = |kind: &Kind| match kind {
        Kind::NumIn(c) | Kind::TextNumIn(c) | Kind::CmpNumIn(c) => Some(c.clone()),
        _ => None,
    };
    let wildcard = |kind: &Kind| match kind {
        Kind::Wildcard(c) => Some(c.clone()),
        _ => None,
    };
    let kind = match *inst {
        Inst::Shape { slot, shapes, .. } => Some((Kind::Shape(shapes), slot)),
        // Every constant is in the dictionary (`Program::new` put it there); were one missing,
        // the step would compare text instead (`NO_ID` is the id of unresolved leaves).
        Inst::StrEq { slot, s, .. } => ids
            .string(s.0)
            .or_else(|| pools.strings.get(s.0 as usize).map(|s| id(s)))
            .filter(|&id| id != NO_ID)
            .map(|id| (Kind::Eq(id), slot)),
        Inst::StrIn { slot, set, .. } => shared
            .sets
            .share(set.0, steps, set_of, || {
                let members = pools.sets.get(set.0 as usize)?;
                match ids.set(set.0, members.len()) {
                    Some(recorded) => set_kind(recorded.iter().copied(), members.len()),
                    None => set_kind(members.iter().map(|s| id(s)), members.len()),
                }
            })
            .map(|kind| (kind, slot)),
        Inst::StrPrefix { slot, list: l, .. } => match first(l.0) {
            Some(only) => Some((Kind::Prefix1(only), slot)),
            None => shared
                .lists
                .share(l.0, steps, strings, || list(l.0))
                .map(|c| (Kind::Prefix(c), slot)),
        },
        Inst::StrSuffix { slot, list: l, .. } => match first(l.0) {
            Some(only) => Some((Kind::Suffix1(only), slot)),
            None => shared
                .lists
                .share(l.0, steps, strings, || list(l.0))
                .map(|c| (Kind::Suffix(c), slot)),
        },
        Inst::NumIn {
            slot, ranges: r, ..
        } => shared
            .ranges
            .share(r.0, steps, intervals, || ranges(r.0))
            .map(|c| (Kind::NumIn(c), slot)),
        Inst::TextNumIn {
            slot, ranges: r, ..
        } => shared
            .ranges
            .share(r.0, steps, intervals, || ranges(r.0))
            .map(|c| (Kind::TextNumIn(c), slot)),
        Inst::CmpNumIn {
            slot, ranges: r, ..
        } => shared
            .ranges
            .share(r.0, steps, intervals, || ranges(r.0))
            .map(|c| (Kind::CmpNumIn(c), slot)),
        Inst::Wildcard { slot, pat, .. } => shared
            .wildcards
            .share(pat.0, steps, wildcard, || {
                pools.wildcards.get(pat.0 as usize).cloned().map(Arc::new)
            })
            .map(|c| (Kind::Wildcard(c), slot)),
        _ => None,
    };
    match kind {
        Some((kind, slot)) => (kind, slot.0),
        None => (Kind::Other(idx(pc)), 0),
    }
}

/// Sets of at most this many constants have their ids sorted on the stack by [`set_kind`].
const IDS_ON_STACK: usize = 64;

/// The step kind of a `str_in` over the constants of these `len` dictionary ids; `None` when
/// one is missing from the dictionary ([`NO_ID`]). The ids are sorted and deduplicated on the
/// stack (for at most [`IDS_ON_STACK`] of them), so a set that becomes a mask (most) allocates
/// nothing.
fn set_kind(ids: impl Iterator<Item = u32>, len: usize) -> Option<Kind> {
    let mut small = [0u32; IDS_ON_STACK];
    let mut large: Vec<u32> = Vec::new();
    let ids: &mut [u32] = if len <= IDS_ON_STACK {
        let place = small.get_mut(..len).unwrap_or_default();
        for (at, id) in place.iter_mut().zip(ids) {
            *at = id;
        }
        place
    } else {
        large.extend(ids);
        &mut large
    };
    ids.sort_unstable();
    // Deduplicated in place: `kept` ids, each unlike the one kept before it.
    let mut kept = 0;
    for i in 0..ids.len() {
        let Some(id) = ids.get(i).copied() else {
            break;
        };
        if kept == 0 || ids.get(kept - 1) != Some(&id) {
            if let Some(at) = ids.get_mut(kept) {
                *at = id;
            }
            kept += 1;
        }
    }
    let ids = ids.get(..kept).unwrap_or_default();
    (ids.last() != Some(&NO_ID)).then(|| ids_kind(ids))
}

/// The step kind of a `str_in` over sorted, distinct `ids`: a mask when they lie within 64 of
/// each other.
fn ids_kind(ids: &[u32]) -> Kind {
    match (ids.first(), ids.last()) {
        // No constant at all (an empty set) holds on no leaf: an empty mask.
        (None, _) => Kind::IdMask { base: 0, mask: 0 },
        // `NO_ID` (a leaf equal to no constant) must stay out of every mask's range.
        (Some(&base), Some(&last)) if last - base < 64 && base < NO_ID - 64 => Kind::IdMask {
            base,
            mask: ids.iter().fold(0, |m, &id| m | 1u64 << (id - base)),
        },
        _ => Kind::In(Ids::from(ids)),
    }
}

#[cfg(test)]
mod tests;

//! `PolicySet`: many subscriptions compiled together and matched against a message at once.
//!
//! A broker evaluates every subscription of a topic for every message. One by one that costs
//! N × (bind + run). A [`PolicySet`] does better:
//!
//! - **one key table**: every subscription's keys are interned in one [`KeyTable`], so a message
//!   is bound once for all of them;
//! - **interned filters**: subscriptions whose filters are the same (the same optimized IR, up to
//!   the order of `and`/`or` children) share one entry, checked once per message; its verdict fans
//!   out to every subscription holding it (seed `004`: 4096 subscribers on one filter cost one
//!   evaluation);
//! - **interned tests**: identical tests (same key, same predicate) are one test, checked at most
//!   once per message (per binding row) whatever the number of filters reading it;
//! - **equality index**: string-equality tests (and numeric tests whose intervals are single
//!   points) are indexed by key and value. Binding a message and looking its values up in the index
//!   yields every such test that holds — without looking at the others. Each filter is *anchored*
//!   on one indexed test it cannot hold without (a top-level conjunct); only filters whose anchor
//!   holds are evaluated, plus the few that have no such conjunct. So the work follows the message,
//!   not the number of subscriptions;
//! - **incremental**: [`PolicySet::add`] and [`PolicySet::remove`] change one subscription without
//!   rebuilding anything else.
//!
//! The result of [`SetMatcher::matching`] is the set of subscription ids whose filter matches,
//! exactly the ids that evaluating each subscription's [`Filter`] on its own gives (a differential
//! test checks this on every dialect).
//!
//! ```
//! use filtervm_compiler::set::{PolicySet, SetMatcher};
//! use filtervm_compiler::{compile, Dialect};
//! use filtervm_vm::message::{AttributeType, Message};
//! use serde_json::json;
//!
//! let mut set = PolicySet::new();
//! for (id, event) in [(1, "order.paid"), (2, "order.created"), (3, "order.paid")] {
//!     let filter = compile(Dialect::Sns, &json!({"event": [event]}), &Dialect::Sns.into()).unwrap();
//!     set.add(id, &filter).unwrap();
//! }
//! assert_eq!(set.distinct_filters(), 2); // 1 and 3 share one filter
//!
//! let mut matcher = SetMatcher::new();
//! let message = Message::attributes([("event", AttributeType::String, "order.paid")]);
//! let mut ids = matcher.matching(&set, &message).to_vec();
//! ids.sort();
//! assert_eq!(ids, [1, 3]);
//! set.remove(1);
//! assert_eq!(matcher.matching(&set, &message), [3]);
//! ```
//!
//! How a filter is held: its optimized IR becomes a small term over interned test ids (children
//! of `and`/`or` sorted, duplicates dropped — the identity used for interning), emitted as a
//! code of one accumulator with forward jumps only (like the VM's programs), so evaluation is
//! bounded by the code's length. Tests other than the indexed and shape tests are kept as
//! one-test VM programs and run with [`filtervm_vm::exec::eval_test`] against the shared
//! bindings, so each predicate keeps exactly one implementation.

use crate::dialect::Dialect;
use crate::intern::canonical_options;
use crate::ir::{Case, Node, NodeKind, NumSource, Pred, StrOp, Test};
use crate::{Filter, codegen};
use ahash::{AHashMap, RandomState};
use filtervm_vm::bind::{Bindings, KeyTable};
use filtervm_vm::exec;
use filtervm_vm::message::Message;
use filtervm_vm::program::{Interval, Program};
use filtervm_vm::value::{Leaf, Shapes};

/// A subscription id, chosen by the caller.
pub type SubscriptionId = u64;

/// Why a filter could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    /// The filter was loaded from bytes and carries no IR (compile it from its policy instead).
    #[error("the filter carries no IR (it was loaded from bytes); compile it from its policy")]
    NoIr,
    /// The set holds filters of another dialect or other options: messages are read and bound
    /// one way for the whole set.
    #[error("the set holds {expected} filters with options {options}; this filter is {found}")]
    Mismatch {
        /// The set's dialect.
        expected: Dialect,
        /// The set's options (canonical JSON).
        options: String,
        /// The filter's dialect.
        found: Dialect,
    },
    /// More distinct tests or filters than the set's encoding allows (2^29 each).
    #[error("the set is full")]
    Full,
}

/// The largest test id or jump target a code word holds.
const OPERAND: u32 = (1 << 29) - 1;
/// Code opcodes (the top three bits of a word).
const OP_TEST: u32 = 0;
const OP_NOT: u32 = 1;
const OP_CONST: u32 = 2;
const OP_JF: u32 = 3;
const OP_JT: u32 = 4;
const OP_END: u32 = 5;
/// An indexed test: it holds iff marking the message's values found it.
const OP_MARKED: u32 = 6;
/// A conjunction of (possibly negated) tests: `word(OP_CONJ, n)` then `n` conjunct words.
const OP_CONJ: u32 = 7;
/// In a conjunct word: the test is negated.
const NEG: u32 = 1 << 31;
/// In a conjunct word: the test is indexed (answered by marking).
const IDX: u32 = 1 << 30;

fn word(op: u32, operand: u32) -> u32 {
    (op << 29) | (operand & OPERAND)
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// How an interned test is checked.
#[derive(Debug)]
enum Check {
    /// Some string leaf equals one of these values: answered by the equality index.
    StrEq(Box<[Box<str>]>),
    /// Some number leaf equals one of these values (binary64 bits, `-0` as `0`): answered by the
    /// numeric equality index.
    NumEq(Box<[u64]>),
    /// The slot's shape is in the set.
    Shape(Shapes),
    /// Some number leaf (or numeric string leaf) lies in the intervals.
    Num(NumSource, Box<[Interval]>),
    /// Anything else: a one-test program run against the shared bindings.
    Program(Box<Program>),
    /// A freed id (reused by the next new test).
    Free,
}

#[derive(Debug)]
struct TestEntry {
    /// The slot in the set's key table.
    slot: u32,
    check: Check,
    /// The number of distinct filters using the test.
    refs: u32,
    /// The filters anchored on this test (evaluated only when it holds).
    anchored: Vec<Posting>,
    /// The interning key (`(key pred)` text), to forget the test when it is freed.
    text: Box<str>,
}

/// A filter anchored on a test, with a second indexed conjunct (its *guard*, or `NO_GUARD`):
/// when the guard was not marked the filter cannot hold and is skipped without being looked at.
#[derive(Debug, Clone, Copy)]
struct Posting {
    filter: u32,
    guard: u32,
}

const NO_GUARD: u32 = u32::MAX;

/// The subscriptions of one distinct filter: most filters have one.
#[derive(Debug, Clone)]
enum Subs {
    One(SubscriptionId),
    Many(Vec<SubscriptionId>),
}

impl Subs {
    fn as_slice(&self) -> &[SubscriptionId] {
        match self {
            Subs::One(id) => std::slice::from_ref(id),
            Subs::Many(ids) => ids,
        }
    }
}

#[derive(Debug)]
struct FilterEntry {
    /// `code[start..start + len]` in the set's code arena; `len == 0` for a freed entry.
    start: u32,
    len: u32,
    /// The anchor test, or `NO_ANCHOR` (then the filter is in `always`).
    anchor: u32,
    /// The hash of the code (the identity map's key).
    hash: u64,
    subs: Subs,
}

const NO_ANCHOR: u32 = u32::MAX;

/// A canonical filter term over interned tests.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Term {
    /// Sort key first: indexed tests, shape tests, other tests, compound terms.
    Const(bool),
    Test(u8, u32),
    Not(u8, Box<Term>),
    And(Vec<Term>),
    Or(Vec<Term>),
}

impl Term {
    fn cost(&self) -> u8 {
        match self {
            Term::Const(_) => 0,
            Term::Test(c, _) | Term::Not(c, _) => *c,
            Term::And(_) | Term::Or(_) => 4,
        }
    }
}

/// Many subscriptions' filters, matched together (see the module documentation).
#[derive(Debug)]
pub struct PolicySet {
    keys: KeyTable,
    dialect: Option<(Dialect, String)>,
    tests: Vec<TestEntry>,
    test_ids: AHashMap<Box<str>, u32>,
    free_tests: Vec<u32>,
    /// Per slot with string-equality tests: value → the tests holding for it.
    str_index: AHashMap<u32, AHashMap<Box<str>, Vec<u32>>>,
    /// Per slot with numeric point tests: value bits → the tests holding for it.
    num_index: AHashMap<u32, AHashMap<u64, Vec<u32>>>,
    filters: Vec<FilterEntry>,
    /// Code hash → distinct filters with that hash (almost always one).
    filter_ids: AHashMap<u64, Vec<u32>>,
    free_filters: Vec<u32>,
    /// Filters without an anchor: evaluated for every message.
    always: Vec<u32>,
    code: Vec<u32>,
    /// Words of `code` no live filter uses (compacted when they outnumber the live ones).
    garbage: usize,
    subs: AHashMap<SubscriptionId, u32>,
    hasher: RandomState,
}

impl Default for PolicySet {
    fn default() -> PolicySet {
        PolicySet::new()
    }
}

impl PolicySet {
    /// An empty set.
    pub fn new() -> PolicySet {
        PolicySet {
            keys: KeyTable::new(),
            dialect: None,
            tests: Vec::new(),
            test_ids: AHashMap::new(),
            free_tests: Vec::new(),
            str_index: AHashMap::new(),
            num_index: AHashMap::new(),
            filters: Vec::new(),
            filter_ids: AHashMap::new(),
            free_filters: Vec::new(),
            always: Vec::new(),
            code: Vec::new(),
            garbage: 0,
            subs: AHashMap::new(),
            hasher: RandomState::with_seeds(0x5eed, 0xf1, 0x7e, 0x4d),
        }
    }

    /// The number of subscriptions.
    pub fn len(&self) -> usize {
        self.subs.len()
    }

    /// Whether the set holds no subscription.
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// The number of distinct filters (identical filters count once).
    pub fn distinct_filters(&self) -> usize {
        self.filters.len() - self.free_filters.len()
    }

    /// The number of distinct tests.
    pub fn distinct_tests(&self) -> usize {
        self.tests.len() - self.free_tests.len()
    }

    /// The number of filters without an indexed anchor (evaluated for every message).
    pub fn unanchored_filters(&self) -> usize {
        self.always.len()
    }

    /// For diagnostics: each indexed test (as `(key predicate)` text) with the number of distinct
    /// filters anchored on it, largest first.
    pub fn anchors(&self) -> Vec<(&str, usize)> {
        let mut out: Vec<(&str, usize)> = self
            .tests
            .iter()
            .filter(|t| !t.anchored.is_empty())
            .map(|t| (&*t.text, t.anchored.len()))
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }

    /// The key table all subscriptions share (a message is bound to it once).
    pub fn keys(&self) -> &KeyTable {
        &self.keys
    }

    /// The dialect of the set's filters (`None` while it is empty of any filter so far).
    pub fn dialect(&self) -> Option<Dialect> {
        self.dialect.as_ref().map(|(d, _)| *d)
    }

    /// Whether subscription `id` is in the set.
    pub fn contains(&self, id: SubscriptionId) -> bool {
        self.subs.contains_key(&id)
    }

    /// Adds subscription `id` with `filter`, replacing its filter if `id` is already there.
    ///
    /// Every filter of a set must have the same dialect and options (the first one added fixes
    /// them), since a message is read and bound once for all of them.
    pub fn add(&mut self, id: SubscriptionId, filter: &Filter) -> Result<(), SetError> {
        let ir = filter.ir().ok_or(SetError::NoIr)?;
        let options = canonical_options(filter.options());
        match &self.dialect {
            Some((d, o)) if *d != filter.dialect() || *o != options => {
                return Err(SetError::Mismatch {
                    expected: *d,
                    options: o.clone(),
                    found: filter.dialect(),
                });
            }
            Some(_) => {}
            None => self.dialect = Some((filter.dialect(), options)),
        }
        self.remove(id);
        let mut new_tests = Vec::new();
        let term = self.term(ir, &mut new_tests)?;
        let code = filter_code(&term);
        let hash = self.hasher.hash_one(&code);
        if let Some(f) = self.find_filter(hash, &code) {
            // An identical filter is already there: share it. The tests it interned are in use.
            if let Some(entry) = self.filters.get_mut(f as usize) {
                entry.subs = match std::mem::replace(&mut entry.subs, Subs::Many(Vec::new())) {
                    Subs::One(other) => Subs::Many(vec![other, id]),
                    Subs::Many(mut ids) => {
                        ids.push(id);
                        Subs::Many(ids)
                    }
                };
            }
            self.subs.insert(id, f);
            return Ok(());
        }
        // A new distinct filter.
        let f = match self.free_filters.pop() {
            Some(f) => f,
            None => {
                if self.filters.len() >= OPERAND as usize {
                    return Err(SetError::Full);
                }
                self.filters.push(FilterEntry {
                    start: 0,
                    len: 0,
                    anchor: NO_ANCHOR,
                    hash: 0,
                    subs: Subs::Many(Vec::new()),
                });
                idx(self.filters.len() - 1)
            }
        };
        let tests = distinct_tests(&code);
        for &t in &tests {
            if let Some(entry) = self.tests.get_mut(t as usize) {
                entry.refs += 1;
            }
        }
        let anchor = self.choose_anchor(&term);
        let start = idx(self.code.len());
        let len = idx(code.len());
        self.code.extend_from_slice(&code);
        if let Some(entry) = self.filters.get_mut(f as usize) {
            *entry = FilterEntry {
                start,
                len,
                anchor,
                hash,
                subs: Subs::One(id),
            };
        }
        self.filter_ids.entry(hash).or_default().push(f);
        self.attach(f, anchor);
        self.subs.insert(id, f);
        for t in tests {
            self.rebalance(t);
        }
        Ok(())
    }

    /// Removes subscription `id`; false when it was not in the set.
    pub fn remove(&mut self, id: SubscriptionId) -> bool {
        let Some(f) = self.subs.remove(&id) else {
            return false;
        };
        let Some(entry) = self.filters.get_mut(f as usize) else {
            return true;
        };
        let last = match &mut entry.subs {
            Subs::One(_) => true,
            Subs::Many(ids) => {
                ids.retain(|&s| s != id);
                if let [one] = ids.as_slice() {
                    entry.subs = Subs::One(*one);
                }
                false
            }
        };
        if last {
            self.free_filter(f);
        }
        true
    }

    /// The subscriptions whose filter matches `message` (a convenience that allocates its
    /// buffers; reuse a [`SetMatcher`] instead on a hot path). The order is unspecified.
    pub fn matching(&self, message: &Message) -> Vec<SubscriptionId> {
        SetMatcher::new().matching(self, message).to_vec()
    }

    /// An estimate of the heap bytes the set holds (its tables, codes, index and tests).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let map = |cap: usize, entry: usize| cap * (entry + 1);
        let mut n = self.code.capacity() * 4
            + self.filters.capacity() * size_of::<FilterEntry>()
            + self.tests.capacity() * size_of::<TestEntry>()
            + map(self.subs.capacity(), size_of::<(SubscriptionId, u32)>())
            + map(self.filter_ids.capacity(), size_of::<(u64, Vec<u32>)>())
            + map(self.test_ids.capacity(), size_of::<(Box<str>, u32)>())
            + (self.always.capacity() + self.free_filters.capacity() + self.free_tests.capacity())
                * 4;
        for ids in self.filter_ids.values() {
            n += ids.capacity() * 4;
        }
        for f in &self.filters {
            if let Subs::Many(ids) = &f.subs {
                n += ids.capacity() * 8;
            }
        }
        for (text, _) in self.test_ids.iter() {
            n += text.len();
        }
        for t in &self.tests {
            n += t.anchored.capacity() * size_of::<Posting>();
            n += match &t.check {
                Check::StrEq(v) => v.iter().map(|s| s.len() + 16).sum::<usize>(),
                Check::NumEq(v) => v.len() * 8,
                Check::Num(_, r) => r.len() * size_of::<Interval>(),
                // A one-test program: its parts, key and constants (a rough figure).
                Check::Program(_) => 512,
                Check::Shape(_) | Check::Free => 0,
            };
        }
        for index in self.str_index.values() {
            n += map(index.capacity(), size_of::<(Box<str>, Vec<u32>)>());
            for (value, tests) in index.iter() {
                n += value.len() + tests.capacity() * 4;
            }
        }
        for index in self.num_index.values() {
            n += map(index.capacity(), size_of::<(u64, Vec<u32>)>());
            for tests in index.values() {
                n += tests.capacity() * 4;
            }
        }
        n + self.keys.len() * 64
    }

    /// The distinct filter with this code, if there is one.
    fn find_filter(&self, hash: u64, code: &[u32]) -> Option<u32> {
        self.filter_ids.get(&hash)?.iter().copied().find(|&f| {
            self.filters.get(f as usize).is_some_and(|e| {
                self.code
                    .get(e.start as usize..(e.start + e.len) as usize)
                    .is_some_and(|c| c == code)
            })
        })
    }

    /// The canonical term of an IR node, interning its tests (new ones are listed in `new`).
    fn term(&mut self, node: &Node, new: &mut Vec<u32>) -> Result<Term, SetError> {
        Ok(match &node.kind {
            NodeKind::True => Term::Const(true),
            NodeKind::False => Term::Const(false),
            NodeKind::Test(test) => {
                let (t, cost) = self.intern_test(test, new)?;
                Term::Test(cost, t)
            }
            NodeKind::Not(child) => match self.term(child, new)? {
                Term::Const(b) => Term::Const(!b),
                Term::Not(_, inner) => *inner,
                other => Term::Not(other.cost(), Box::new(other)),
            },
            NodeKind::And(children) | NodeKind::Or(children) => {
                let is_and = matches!(node.kind, NodeKind::And(_));
                let mut terms = Vec::with_capacity(children.len());
                for c in children {
                    match self.term(c, new)? {
                        Term::And(inner) if is_and => terms.extend(inner),
                        Term::Or(inner) if !is_and => terms.extend(inner),
                        Term::Const(b) if b == is_and => {}
                        Term::Const(b) => return Ok(Term::Const(b)),
                        other => terms.push(other),
                    }
                }
                terms.sort_by(|a, b| a.cost().cmp(&b.cost()).then_with(|| a.cmp(b)));
                terms.dedup();
                match terms.len() {
                    0 => Term::Const(is_and),
                    1 => terms.pop().unwrap_or(Term::Const(is_and)),
                    _ if is_and => Term::And(terms),
                    _ => Term::Or(terms),
                }
            }
        })
    }

    /// Interns a test: its id and its cost class (0 indexed, 1 shape, 2 other).
    fn intern_test(&mut self, test: &Test, new: &mut Vec<u32>) -> Result<(u32, u8), SetError> {
        let text: Box<str> = format!("({} {})", test.key, test.pred).into();
        if let Some(&t) = self.test_ids.get(&text) {
            let cost = self.tests.get(t as usize).map_or(2, |e| cost_of(&e.check));
            return Ok((t, cost));
        }
        let slot = self.keys.intern(test.key.clone());
        let check = match &test.pred {
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values,
            } => Check::StrEq(values.clone().into_boxed_slice()),
            Pred::Num {
                source: NumSource::NumberLeaf,
                ranges,
            } if !ranges.is_empty()
                && ranges.iter().all(|r| {
                    r.lo == r.hi && r.lo_inclusive && r.hi_inclusive && r.lo.is_finite()
                }) =>
            {
                let mut bits: Vec<u64> = ranges.iter().map(|r| num_bits(r.lo)).collect();
                bits.sort_unstable();
                bits.dedup();
                Check::NumEq(bits.into_boxed_slice())
            }
            Pred::Num { source, ranges } => Check::Num(*source, ranges.clone().into_boxed_slice()),
            Pred::Shape(shapes) => Check::Shape(*shapes),
            _ => {
                let node = Node::test(test.key.clone(), test.pred.clone(), "");
                match codegen::generate(&node) {
                    Ok(p) => Check::Program(Box::new(p)),
                    // Cannot happen for a test the compiler generated once already; never match.
                    Err(_) => Check::Shape(Shapes(0)),
                }
            }
        };
        let cost = cost_of(&check);
        let t = match self.free_tests.pop() {
            Some(t) => t,
            None => {
                if self.tests.len() >= OPERAND as usize {
                    return Err(SetError::Full);
                }
                self.tests.push(TestEntry {
                    slot: 0,
                    check: Check::Free,
                    refs: 0,
                    anchored: Vec::new(),
                    text: "".into(),
                });
                idx(self.tests.len() - 1)
            }
        };
        match &check {
            Check::StrEq(values) => {
                let index = self.str_index.entry(slot).or_default();
                for v in values.iter() {
                    index.entry(v.clone()).or_default().push(t);
                }
            }
            Check::NumEq(bits) => {
                let index = self.num_index.entry(slot).or_default();
                for b in bits.iter() {
                    index.entry(*b).or_default().push(t);
                }
            }
            _ => {}
        }
        if let Some(entry) = self.tests.get_mut(t as usize) {
            *entry = TestEntry {
                slot,
                check,
                refs: 0,
                anchored: Vec::new(),
                text: text.clone(),
            };
        }
        self.test_ids.insert(text, t);
        new.push(t);
        Ok((t, cost))
    }

    /// The indexed top-level conjunct with the fewest filters using it (`NO_ANCHOR` if none).
    fn choose_anchor(&self, term: &Term) -> u32 {
        let candidates: &[Term] = match term {
            Term::And(children) => children,
            single => std::slice::from_ref(single),
        };
        candidates
            .iter()
            .filter_map(|c| match c {
                Term::Test(0, t) => Some(*t),
                _ => None,
            })
            .min_by_key(|&t| self.tests.get(t as usize).map_or(u32::MAX, |e| e.refs))
            .unwrap_or(NO_ANCHOR)
    }

    /// The indexed positive top-level conjuncts of filter `f`.
    fn indexed_conjuncts(&self, f: u32) -> Vec<u32> {
        let Some(e) = self.filters.get(f as usize) else {
            return Vec::new();
        };
        let code = self
            .code
            .get(e.start as usize..(e.start + e.len) as usize)
            .unwrap_or(&[]);
        let mut tests = top_conjunct_tests(code);
        tests.retain(|&c| {
            self.tests
                .get(c as usize)
                .is_some_and(|x| matches!(x.check, Check::StrEq(_) | Check::NumEq(_)))
        });
        tests
    }

    fn refs(&self, t: u32) -> u32 {
        self.tests.get(t as usize).map_or(u32::MAX, |e| e.refs)
    }

    fn attach(&mut self, f: u32, anchor: u32) {
        if anchor == NO_ANCHOR {
            self.always.push(f);
            return;
        }
        let guard = self
            .indexed_conjuncts(f)
            .into_iter()
            .filter(|&c| c != anchor)
            .min_by_key(|&c| self.refs(c))
            .unwrap_or(NO_GUARD);
        if let Some(entry) = self.tests.get_mut(anchor as usize) {
            entry.anchored.push(Posting { filter: f, guard });
        }
    }

    fn detach(&mut self, f: u32, anchor: u32) {
        match self.tests.get_mut(anchor as usize) {
            Some(entry) => {
                if let Some(at) = entry.anchored.iter().position(|p| p.filter == f) {
                    entry.anchored.swap_remove(at);
                }
            }
            None => {
                if let Some(at) = self.always.iter().position(|&x| x == f) {
                    self.always.swap_remove(at);
                }
            }
        }
    }

    /// When the number of filters using test `t` reaches a power of two (from 16 on), moves the
    /// filters anchored on it to a less used indexed conjunct if they have one: anchors chosen
    /// early, before the value frequencies were known, do not stay poor. Each list is revisited
    /// O(log n) times.
    fn rebalance(&mut self, t: u32) {
        let Some(entry) = self.tests.get(t as usize) else {
            return;
        };
        let n = entry.refs;
        if n < 16 || !n.is_power_of_two() || entry.anchored.is_empty() {
            return;
        }
        let refs = entry.refs;
        let members: Vec<u32> = entry.anchored.iter().map(|p| p.filter).collect();
        for f in members {
            let best = self
                .indexed_conjuncts(f)
                .into_iter()
                .min_by_key(|&c| self.refs(c));
            if let Some(best) = best
                && best != t
                && self.refs(best) < refs
            {
                self.detach(f, t);
                self.attach(f, best);
                if let Some(e) = self.filters.get_mut(f as usize) {
                    e.anchor = best;
                }
            }
        }
    }

    /// Frees a distinct filter whose last subscription left, and the tests only it used.
    fn free_filter(&mut self, f: u32) {
        let Some(entry) = self.filters.get(f as usize) else {
            return;
        };
        let (start, len, anchor, hash) = (entry.start, entry.len, entry.anchor, entry.hash);
        let code = self
            .code
            .get(start as usize..(start + len) as usize)
            .map(<[u32]>::to_vec)
            .unwrap_or_default();
        self.detach(f, anchor);
        if let Some(ids) = self.filter_ids.get_mut(&hash) {
            ids.retain(|&x| x != f);
            if ids.is_empty() {
                self.filter_ids.remove(&hash);
            }
        }
        for t in distinct_tests(&code) {
            let Some(test) = self.tests.get_mut(t as usize) else {
                continue;
            };
            test.refs = test.refs.saturating_sub(1);
            if test.refs == 0 {
                self.free_test(t);
            }
        }
        if let Some(entry) = self.filters.get_mut(f as usize) {
            entry.len = 0;
            entry.anchor = NO_ANCHOR;
            entry.subs = Subs::Many(Vec::new());
        }
        self.free_filters.push(f);
        self.garbage += len as usize;
        if self.garbage > 1024 && self.garbage * 2 > self.code.len() {
            self.compact();
        }
    }

    fn free_test(&mut self, t: u32) {
        let Some(entry) = self.tests.get_mut(t as usize) else {
            return;
        };
        let check = std::mem::replace(&mut entry.check, Check::Free);
        let text = std::mem::replace(&mut entry.text, "".into());
        let slot = entry.slot;
        entry.anchored = Vec::new();
        self.test_ids.remove(&text);
        match check {
            Check::StrEq(values) => {
                if let Some(index) = self.str_index.get_mut(&slot) {
                    for v in values.iter() {
                        if let Some(list) = index.get_mut(v) {
                            list.retain(|&x| x != t);
                            if list.is_empty() {
                                index.remove(v);
                            }
                        }
                    }
                }
            }
            Check::NumEq(bits) => {
                if let Some(index) = self.num_index.get_mut(&slot) {
                    for b in bits.iter() {
                        if let Some(list) = index.get_mut(b) {
                            list.retain(|&x| x != t);
                            if list.is_empty() {
                                index.remove(b);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        self.free_tests.push(t);
    }

    /// Rewrites the code arena without the words of freed filters.
    fn compact(&mut self) {
        let mut code = Vec::with_capacity(self.code.len() - self.garbage);
        for entry in &mut self.filters {
            if entry.len == 0 {
                continue;
            }
            let start = idx(code.len());
            if let Some(c) = self
                .code
                .get(entry.start as usize..(entry.start + entry.len) as usize)
            {
                code.extend_from_slice(c);
            }
            entry.start = start;
        }
        self.code = code;
        self.garbage = 0;
    }
}

fn cost_of(check: &Check) -> u8 {
    match check {
        Check::StrEq(_) | Check::NumEq(_) => 0,
        Check::Shape(_) => 1,
        _ => 2,
    }
}

/// Binary64 bits of a number for the numeric equality index (`-0` as `0`).
fn num_bits(x: f64) -> u64 {
    if x == 0.0 { 0 } else { x.to_bits() }
}

/// The code of a filter: a conjunction of tests and negated tests (most filters) as an
/// `OP_CONJ` list, anything else as accumulator code ending in `OP_END`.
fn filter_code(term: &Term) -> Vec<u32> {
    let conjunct = |t: &Term| match t {
        Term::Test(cost, id) => Some(id | if *cost == 0 { IDX } else { 0 }),
        Term::Not(_, inner) => match &**inner {
            Term::Test(cost, id) => Some(id | NEG | if *cost == 0 { IDX } else { 0 }),
            _ => None,
        },
        _ => None,
    };
    let conjuncts: Option<Vec<u32>> = match term {
        Term::And(children) => children.iter().map(conjunct).collect(),
        single => conjunct(single).map(|w| vec![w]),
    };
    let mut code = Vec::new();
    match conjuncts {
        Some(words) => {
            code.push(word(OP_CONJ, idx(words.len())));
            code.extend(words);
        }
        None => {
            emit(term, &mut code);
            code.push(word(OP_END, 0));
        }
    }
    code
}

/// Emits the code of a term (jump targets relative to the code's start).
fn emit(term: &Term, code: &mut Vec<u32>) {
    match term {
        Term::Const(b) => code.push(word(OP_CONST, u32::from(*b))),
        Term::Test(0, t) => code.push(word(OP_MARKED, *t)),
        Term::Test(_, t) => code.push(word(OP_TEST, *t)),
        Term::Not(_, inner) => {
            emit(inner, code);
            code.push(word(OP_NOT, 0));
        }
        Term::And(children) | Term::Or(children) => {
            let op = if matches!(term, Term::And(_)) {
                OP_JF
            } else {
                OP_JT
            };
            let mut jumps = Vec::new();
            for (i, c) in children.iter().enumerate() {
                emit(c, code);
                if i + 1 < children.len() {
                    jumps.push(code.len());
                    code.push(word(op, 0));
                }
            }
            let end = idx(code.len());
            for j in jumps {
                if let Some(w) = code.get_mut(j) {
                    *w = word(op, end);
                }
            }
        }
    }
}

/// The distinct test ids a code reads.
fn distinct_tests(code: &[u32]) -> Vec<u32> {
    let mut tests: Vec<u32> = match code.split_first() {
        Some((&head, conjuncts)) if head >> 29 == OP_CONJ => {
            conjuncts.iter().map(|&w| w & OPERAND).collect()
        }
        _ => code
            .iter()
            .filter(|&&w| matches!(w >> 29, OP_TEST | OP_MARKED))
            .map(|&w| w & OPERAND)
            .collect(),
    };
    tests.sort_unstable();
    tests.dedup();
    tests
}

/// The tests that are top-level conjuncts of a code (a test whose falsity makes the filter false
/// at once: the code's first word, or a test word followed by a jump-if-false to the end).
fn top_conjunct_tests(code: &[u32]) -> Vec<u32> {
    if let Some((&head, conjuncts)) = code.split_first()
        && head >> 29 == OP_CONJ
    {
        return conjuncts
            .iter()
            .filter(|&&w| w & NEG == 0)
            .map(|&w| w & OPERAND)
            .collect();
    }
    let end = idx(code.len().saturating_sub(1));
    let mut out = Vec::new();
    if let [only, last] = code
        && matches!(only >> 29, OP_TEST | OP_MARKED)
        && last >> 29 == OP_END
    {
        out.push(only & OPERAND);
        return out;
    }
    // An `and` at the top: every child jumps to the end when false; its last child is followed
    // directly by the end.
    let top_jf = |w: u32| w >> 29 == OP_JF && w & OPERAND == end;
    for (i, pair) in code.windows(2).enumerate() {
        if let [w, next] = pair
            && matches!(w >> 29, OP_TEST | OP_MARKED)
            && (top_jf(*next) || (idx(i + 1) == end && code.iter().any(|&x| top_jf(x))))
            && (i == 0 || code.get(i - 1).is_some_and(|&p| top_jf(p)))
        {
            out.push(w & OPERAND);
        }
    }
    out
}

/// Reusable buffers for matching messages against a [`PolicySet`]: the bindings, the per-test
/// verdicts of the current message and the result.
#[derive(Debug, Default)]
pub struct SetMatcher {
    bindings: Bindings,
    /// Per test: `epoch << 1 | verdict` when checked for the current row.
    memo: Vec<u32>,
    epoch: u32,
    /// Per filter: the message stamp when it last matched (so a match across rows counts once).
    matched: Vec<u32>,
    stamp: u32,
    marked: Vec<u32>,
    out: Vec<SubscriptionId>,
}

impl SetMatcher {
    /// New, empty buffers.
    pub fn new() -> SetMatcher {
        SetMatcher::default()
    }

    /// The bindings of the last message matched.
    pub fn bindings(&self) -> &Bindings {
        &self.bindings
    }

    /// The subscriptions of `set` whose filter matches `message`, in no particular order.
    pub fn matching(&mut self, set: &PolicySet, message: &Message) -> &[SubscriptionId] {
        self.bindings.bind(&set.keys, message);
        self.matching_bound(set)
    }

    /// Like [`SetMatcher::matching`], for a message already bound to `set.keys()` with
    /// [`SetMatcher::bind`].
    pub fn matching_bound(&mut self, set: &PolicySet) -> &[SubscriptionId] {
        self.out.clear();
        if self.memo.len() < set.tests.len() {
            self.memo.resize(set.tests.len(), 0);
        }
        if self.matched.len() < set.filters.len() {
            self.matched.resize(set.filters.len(), 0);
        }
        self.stamp = self.next_stamp();
        let message_stamp = self.stamp;
        let rows = self.bindings.rows();
        for row in 0..rows {
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch >= 1 << 30 || self.epoch == 0 {
                self.memo.iter_mut().for_each(|m| *m = 0);
                self.epoch = 1;
            }
            self.mark(set, row);
            let mut i = 0;
            while let Some(&t) = self.marked.get(i) {
                i += 1;
                let Some(test) = set.tests.get(t as usize) else {
                    continue;
                };
                let on = (self.epoch << 1) | 1;
                for p in &test.anchored {
                    if p.guard != NO_GUARD && self.memo.get(p.guard as usize) != Some(&on) {
                        continue;
                    }
                    self.consider(set, p.filter, row, message_stamp);
                }
            }
            for &f in &set.always {
                self.consider(set, f, row, message_stamp);
            }
        }
        &self.out
    }

    /// Binds `message` to the set's key table (for timing binding apart from matching).
    pub fn bind(&mut self, set: &PolicySet, message: &Message) {
        self.bindings.bind(&set.keys, message);
    }

    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.matched.iter_mut().for_each(|m| *m = 0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Marks every indexed test that holds on row `row` (and lists them in `marked`).
    fn mark(&mut self, set: &PolicySet, row: usize) {
        self.marked.clear();
        let on = (self.epoch << 1) | 1;
        let slots = self.bindings.row(row);
        for (&slot, index) in &set.str_index {
            let Some(&s) = slots.get(slot as usize) else {
                continue;
            };
            for leaf in self.bindings.leaves(s) {
                if let Leaf::Str(v) = leaf
                    && let Some(tests) = index.get(&**v)
                {
                    for &t in tests {
                        if let Some(m) = self.memo.get_mut(t as usize)
                            && *m != on
                        {
                            *m = on;
                            self.marked.push(t);
                        }
                    }
                }
            }
        }
        for (&slot, index) in &set.num_index {
            let Some(&s) = slots.get(slot as usize) else {
                continue;
            };
            for leaf in self.bindings.leaves(s) {
                if let Leaf::Num(n) = leaf
                    && let Some(tests) = index.get(&num_bits(n.value()))
                {
                    for &t in tests {
                        if let Some(m) = self.memo.get_mut(t as usize)
                            && *m != on
                        {
                            *m = on;
                            self.marked.push(t);
                        }
                    }
                }
            }
        }
    }

    /// Evaluates filter `f` on row `row` unless done for this row; records its subscriptions
    /// when it matches (once per message).
    ///
    /// A filter is anchored on one test (or none), and a test is marked once per row, so a filter
    /// comes up at most once per row; across rows, `matched` keeps a match from counting twice.
    #[inline]
    fn consider(&mut self, set: &PolicySet, f: u32, row: usize, msg_stamp: u32) {
        let fi = f as usize;
        if row > 0 && self.matched.get(fi) == Some(&msg_stamp) {
            return;
        }
        let Some(entry) = set.filters.get(fi) else {
            return;
        };
        let code = set
            .code
            .get(entry.start as usize..(entry.start + entry.len) as usize)
            .unwrap_or(&[]);
        if self.run(set, code, row) {
            if let Some(m) = self.matched.get_mut(fi) {
                *m = msg_stamp;
            }
            self.out.extend_from_slice(entry.subs.as_slice());
        }
    }

    /// Runs a filter's code: one accumulator, forward jumps only.
    fn run(&mut self, set: &PolicySet, code: &[u32], row: usize) -> bool {
        if let Some((&head, conjuncts)) = code.split_first()
            && head >> 29 == OP_CONJ
        {
            let on = (self.epoch << 1) | 1;
            for &w in conjuncts {
                let t = w & OPERAND;
                let holds = if w & IDX != 0 {
                    self.memo.get(t as usize) == Some(&on)
                } else {
                    self.test(set, t, row)
                };
                if holds == (w & NEG != 0) {
                    return false;
                }
            }
            return true;
        }
        let mut acc = false;
        let mut pc = 0usize;
        while let Some(&w) = code.get(pc) {
            pc += 1;
            let operand = w & OPERAND;
            match w >> 29 {
                OP_MARKED => {
                    acc = self.memo.get(operand as usize) == Some(&((self.epoch << 1) | 1));
                }
                OP_TEST => acc = self.test(set, operand, row),
                OP_NOT => acc = !acc,
                OP_CONST => acc = operand != 0,
                OP_JF => {
                    if !acc {
                        pc = operand as usize;
                    }
                }
                OP_JT => {
                    if acc {
                        pc = operand as usize;
                    }
                }
                _ => return acc,
            }
        }
        acc
    }

    /// The verdict of test `t` on row `row`, checked at most once per row.
    #[inline]
    fn test(&mut self, set: &PolicySet, t: u32, row: usize) -> bool {
        let epoch = self.epoch << 1;
        let Some(&m) = self.memo.get(t as usize) else {
            return false;
        };
        if m >> 1 == self.epoch {
            return m & 1 == 1;
        }
        let Some(test) = set.tests.get(t as usize) else {
            return false;
        };
        let slot = || self.bindings.slot(row, test.slot as usize);
        let verdict = match &test.check {
            // Indexed tests that hold were marked: unmarked ones do not hold.
            Check::StrEq(_) | Check::NumEq(_) | Check::Free => false,
            Check::Shape(shapes) => shapes.has(slot().shape),
            Check::Num(NumSource::NumberLeaf, ranges) => {
                self.bindings.leaves(slot()).iter().any(|l| match l {
                    Leaf::Num(n) => ranges.iter().any(|r| r.contains(n.value())),
                    _ => false,
                })
            }
            Check::Num(NumSource::Text, ranges) => self
                .bindings
                .text_numbers(slot())
                .iter()
                .any(|&x| ranges.iter().any(|r| r.contains(x))),
            Check::Program(p) => exec::eval_test(p, 0, &self.bindings, row, test.slot as usize),
        };
        if let Some(m) = self.memo.get_mut(t as usize) {
            *m = epoch | u32::from(verdict);
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Evaluator, compile};
    use filtervm_vm::message::AttributeType;
    use serde_json::json;

    fn sns(policy: serde_json::Value) -> Filter {
        compile(Dialect::Sns, &policy, &Dialect::Sns.into()).unwrap()
    }

    fn sorted(mut ids: Vec<SubscriptionId>) -> Vec<SubscriptionId> {
        ids.sort_unstable();
        ids
    }

    #[test]
    fn identical_filters_are_one_entry_and_fan_out() {
        let mut set = PolicySet::new();
        for id in 0..4096 {
            set.add(id, &sns(json!({"event": ["order.paid"], "env": ["prod"]})))
                .unwrap();
        }
        // Same filter written in another order.
        set.add(
            5000,
            &sns(json!({"env": ["prod"], "event": ["order.paid"]})),
        )
        .unwrap();
        assert_eq!(set.distinct_filters(), 1);
        assert_eq!(set.len(), 4097);
        let m = Message::attributes([
            ("event", AttributeType::String, "order.paid"),
            ("env", AttributeType::String, "prod"),
        ]);
        assert_eq!(set.matching(&m).len(), 4097);
        for id in 0..4096 {
            assert!(set.remove(id));
        }
        assert_eq!(set.matching(&m), [5000]);
        assert!(set.remove(5000));
        assert_eq!(set.distinct_filters(), 0);
        assert_eq!(set.distinct_tests(), 0);
        assert!(set.matching(&m).is_empty());
    }

    #[test]
    fn identical_tests_are_interned_across_filters() {
        let mut set = PolicySet::new();
        set.add(1, &sns(json!({"a": [{"prefix": "x"}], "b": ["1"]})))
            .unwrap();
        set.add(2, &sns(json!({"a": [{"prefix": "x"}], "b": ["2"]})))
            .unwrap();
        set.add(3, &sns(json!({"a": [{"prefix": "x"}]}))).unwrap();
        assert_eq!(set.distinct_filters(), 3);
        assert_eq!(set.distinct_tests(), 3);
        let m = Message::attributes([
            ("a", AttributeType::String, "xy"),
            ("b", AttributeType::String, "2"),
        ]);
        assert_eq!(sorted(set.matching(&m)), [2, 3]);
    }

    #[test]
    fn a_set_is_shared_by_threads_each_with_its_matcher() {
        fn shared<T: Send + Sync>() {}
        fn owned<T: Send>() {}
        shared::<PolicySet>();
        owned::<SetMatcher>();
    }

    #[test]
    fn add_replaces_and_remove_reports_absence() {
        let mut set = PolicySet::new();
        set.add(7, &sns(json!({"a": ["1"]}))).unwrap();
        set.add(7, &sns(json!({"a": ["2"]}))).unwrap();
        assert_eq!(set.len(), 1);
        let m = Message::attributes([("a", AttributeType::String, "2")]);
        assert_eq!(set.matching(&m), [7]);
        assert!(set.remove(7));
        assert!(!set.remove(7));
        assert_eq!(set.distinct_tests(), 0);
    }

    #[test]
    fn sets_hold_one_dialect_and_options() {
        let mut set = PolicySet::new();
        set.add(1, &sns(json!({"a": ["1"]}))).unwrap();
        let body = compile(
            Dialect::Sns,
            &json!({"a": ["1"]}),
            &crate::SnsScope::MessageBody.into(),
        )
        .unwrap();
        assert!(matches!(set.add(2, &body), Err(SetError::Mismatch { .. })));
        let basaltic = compile(
            Dialect::Basaltic,
            &json!({"a": ["1"]}),
            &Dialect::Basaltic.into(),
        )
        .unwrap();
        assert!(matches!(
            set.add(3, &basaltic),
            Err(SetError::Mismatch { .. })
        ));
    }

    #[test]
    fn numeric_points_are_indexed_and_ranges_memoized() {
        let mut set = PolicySet::new();
        set.add(1, &sns(json!({"p": [3, 4]}))).unwrap();
        set.add(2, &sns(json!({"p": [{"numeric": [">", 3]}]})))
            .unwrap();
        set.add(3, &sns(json!({"p": [{"anything-but": [4]}]})))
            .unwrap();
        let m = |v: &str| Message::attributes([("p", AttributeType::Number, v)]);
        assert_eq!(sorted(set.matching(&m("4.0"))), [1, 2]);
        assert_eq!(sorted(set.matching(&m("3"))), [1, 3]);
        assert_eq!(sorted(set.matching(&m("-0"))), [3]);
    }

    #[test]
    fn rebalancing_moves_anchors_off_common_values() {
        let mut set = PolicySet::new();
        // Every filter shares env=prod; events are distinct.
        for i in 0..256u64 {
            set.add(
                i,
                &sns(json!({"env": ["prod"], "event": [format!("e{i}")]})),
            )
            .unwrap();
        }
        let prod = set
            .test_ids
            .get("(attr \"env\" str-eq [\"prod\"])")
            .copied();
        let anchored_on_prod = prod
            .and_then(|t| set.tests.get(t as usize))
            .map_or(0, |e| e.anchored.len());
        assert!(anchored_on_prod < 16, "{anchored_on_prod}");
        let m = Message::attributes([
            ("env", AttributeType::String, "prod"),
            ("event", AttributeType::String, "e77"),
        ]);
        assert_eq!(set.matching(&m), [77]);
    }

    #[test]
    fn top_conjuncts_of_codes() {
        let mut code = Vec::new();
        emit(
            &Term::And(vec![
                Term::Test(0, 1),
                Term::Test(0, 2),
                Term::Or(vec![Term::Test(2, 3), Term::Test(2, 4)]),
                Term::Test(2, 5),
            ]),
            &mut code,
        );
        code.push(word(OP_END, 0));
        assert_eq!(top_conjunct_tests(&code), [1, 2, 5]);
        let single = [word(OP_MARKED, 9), word(OP_END, 0)];
        assert_eq!(top_conjunct_tests(&single), [9]);
    }

    /// Differential: the set returns exactly the ids one-by-one evaluation does.
    #[test]
    fn set_agrees_with_one_by_one_on_random_sns_attributes() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let values = ["a", "b", "c", "ab", "ba"];
        let keys = ["k1", "k2", "k3"];
        let mut set = PolicySet::new();
        let mut filters: Vec<(u64, Filter)> = Vec::new();
        for id in 0..300u64 {
            let mut policy = serde_json::Map::new();
            for _ in 0..1 + next(3) {
                let key = keys[next(keys.len())];
                let alt = match next(6) {
                    0 => json!({"prefix": values[next(5)]}),
                    1 => json!({"anything-but": [values[next(5)]]}),
                    2 => json!({"numeric": [">", next(5)]}),
                    3 => json!(next(5)),
                    4 => json!({"exists": next(2) == 0}),
                    _ => json!(values[next(5)]),
                };
                policy.insert(key.to_owned(), json!([alt, values[next(5)]]));
            }
            let filter = sns(serde_json::Value::Object(policy));
            set.add(id, &filter).unwrap();
            filters.push((id, filter));
            if next(10) == 0 {
                let (gone, _) = filters.swap_remove(next(filters.len()));
                assert!(set.remove(gone));
            }
        }
        let mut matcher = SetMatcher::new();
        let mut evaluator = Evaluator::new();
        for _ in 0..500 {
            let mut attrs = Vec::new();
            for key in keys {
                match next(4) {
                    0 => {}
                    1 => attrs.push((key, AttributeType::Number, next(6).to_string())),
                    _ => attrs.push((key, AttributeType::String, values[next(5)].to_owned())),
                }
            }
            let message = Message::Attributes(
                attrs
                    .into_iter()
                    .map(|(n, t, v)| filtervm_vm::message::Attribute {
                        name: n.into(),
                        data_type: t,
                        value: v,
                    })
                    .collect(),
            );
            let expected: Vec<u64> = filters
                .iter()
                .filter(|(_, f)| evaluator.matches(f, &message))
                .map(|(id, _)| *id)
                .collect();
            assert_eq!(
                sorted(matcher.matching(&set, &message).to_vec()),
                sorted(expected)
            );
        }
    }
}

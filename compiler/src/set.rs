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
//!   points) are indexed by key and value. The string constants are the set's key table's
//!   dictionary, so binding a message gives each string it reads the id of the constant it equals
//!   (see [`filtervm_vm::bind`]); looking those ids up in the index yields every such test that
//!   holds — without looking at the others (*marking*). Each filter is
//!   *anchored* on one indexed test it cannot hold without (see below); only filters whose anchor
//!   holds are evaluated, plus the few that have no such test. So the work follows the message,
//!   not the number of subscriptions;
//! - **incremental**: [`PolicySet::add`] and [`PolicySet::remove`] change one subscription without
//!   rebuilding anything else, and what nobody uses any more is released (see below).
//!
//! The result of [`SetMatcher::matching`] is the set of subscription ids whose filter matches,
//! exactly the ids that evaluating each subscription's [`Filter`] on its own gives (a differential
//! test checks this on every dialect, and the `policy_set` fuzz target).
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
//! # How a filter is held
//!
//! Its optimized IR becomes a small canonical term over interned test ids (children of `and`/`or`
//! flattened and sorted, duplicates dropped — the identity used for interning), emitted as a code
//! of one accumulator with forward jumps only (like the VM's programs), so evaluation is bounded
//! by the code's length; a plain conjunction of tests and negated tests is a flat list instead.
//! Tests other than the indexed and shape tests are kept as one-test VM programs and run with
//! [`filtervm_vm::exec::eval_test`] against the shared bindings, so each predicate keeps exactly
//! one implementation.
//!
//! # Anchors and guards: which filters are looked at
//!
//! A filter is evaluated for a message only when its *anchor* test holds, and — when it has one —
//! its *guard* test holds too; filters without an anchor are evaluated for every message. Both
//! are chosen among the filter's **required tests**: the indexed tests that every satisfying
//! assignment of the filter needs. They are read off the canonical term, never off the code: the
//! positive indexed tests among the conjuncts of a top-level `and` (or the whole term when it is
//! one indexed test). A test below an `or` or a `not` is never required, however deep, and however
//! the code that evaluates it is laid out. A filter keeps its required tests
//! (`FilterEntry::required`); the anchor is the one fewest filters use, the guard the next one.
//! When a test becomes common (its filter count reaches a power of two from 16 on), the filters
//! anchored on it move to a rarer required test of theirs (`PolicySet::rebalance`), choosing from
//! the same list. Skipping a filter whose anchor or guard does not hold is thus always right: the
//! filter cannot hold without them. Per binding row: a test is marked for the row whose values
//! hold it, and a filter comes up for a row only when its anchor is marked for that row.
//!
//! # Releasing what nobody uses
//!
//! Everything is reference-counted: a distinct filter is held by its subscriptions, a test by the
//! distinct filters whose code reads it (`TestEntry::refs`), a key of the key table by the tests
//! on it ([`KeyTable::intern`] / [`KeyTable::release`]), an equality-index entry by its test.
//! [`PolicySet::remove`] drops the subscription, and when it was its filter's last, the filter;
//! then each test only that filter read, each index entry only those tests held and each key only
//! those tests read. Every list a member leaves — a filter's subscribers, an anchor's filters, an
//! index value's tests — is unordered and every member knows its position in it, so leaving is a
//! `swap_remove` and one position update: a removal costs O(size of the removed filter).
//!
//! Freed test ids, filter ids and key slots are reused by later additions. When the dead entries
//! (free ids, released key slots, unused code words) outweigh the live ones (subscriptions,
//! filters, tests, keys, code words), `PolicySet::compact` renumbers the live ones densely and
//! shrinks every container. Its cost is proportional to what is live, which the removals since the
//! last compaction outweigh, so it adds O(1) per removed entry; and it keeps the memory and the
//! bound width of a set that went through any churn within a small factor of a fresh set with the
//! same subscriptions (an emptied set holds nothing). Containers that shrink without freeing ids
//! (subscriber lists, the subscription map, anchor lists) give memory back when they fall under a
//! quarter of their capacity.

use crate::dialect::Dialect;
use crate::error::MessageError;
use crate::intern::canonical_options;
use crate::ir::{Case, Node, NodeKind, NumSource, Pred, StrOp, Test};
use crate::{Filter, codegen};
use ahash::{AHashMap, RandomState};
use filtervm_vm::bind::{Bindings, Bound, Judgement, KeyTable, NO_ID, Slot, map_bytes};
use filtervm_vm::exec;
use filtervm_vm::message::{Attributes, Headers, Message};
use filtervm_vm::op::Inst;
use filtervm_vm::program::{Interval, Program};
use filtervm_vm::value::Shapes;
use std::hash::Hash;
use std::mem::size_of;

/// A subscription id, chosen by the caller.
pub type SubscriptionId = u64;

/// Why a filter could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    /// The filter was loaded from bytes of the first wire format, which shipped no IR (compile
    /// it from its policy, or write it again with this version).
    #[error(
        "the filter carries no IR (it was loaded from bytes of the first wire format); compile it from its policy"
    )]
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

/// "No such id" in the renumbering maps of [`PolicySet::compact`].
const GONE: u32 = u32::MAX;

/// How an interned test is checked.
#[derive(Debug)]
enum Check {
    /// Some string leaf equals one of these values (distinct), each with its id in the key
    /// table's dictionary, sorted by id: answered by the equality index.
    StrEq(Box<[(u32, Box<str>)]>),
    /// Some number leaf equals one of these values (binary64 bits, `-0` as `0`; sorted,
    /// distinct): answered by the numeric equality index.
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
    /// The slot in the set's key table (the test holds one reference to it).
    slot: u32,
    check: Check,
    /// The number of distinct filters whose code reads the test.
    refs: u32,
    /// The filters anchored on this test (evaluated only when it holds), in no order.
    anchored: Vec<Posting>,
    /// For an indexed test: its position in the index list of each of its values (parallel to
    /// the values of `check`).
    index_at: Box<[u32]>,
    /// The interning key (`(key pred)` text), to forget the test when it is freed.
    text: Box<str>,
    /// The test reads its slot's leaves as numeric text: it holds a reference to the key table's
    /// "compute text numbers" for the slot.
    text_numbers: bool,
}

impl TestEntry {
    fn free() -> TestEntry {
        TestEntry {
            slot: 0,
            check: Check::Free,
            refs: 0,
            anchored: Vec::new(),
            index_at: Box::default(),
            text: Box::default(),
            text_numbers: false,
        }
    }
}

/// A filter anchored on a test, with a second required test (its *guard*, or `NO_GUARD`): when
/// the guard was not marked the filter cannot hold and is skipped without being looked at.
#[derive(Debug, Clone, Copy)]
struct Posting {
    filter: u32,
    guard: u32,
}

const NO_GUARD: u32 = u32::MAX;

/// The subscriptions of one distinct filter (most filters have one), in no order.
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

/// Where a subscription is: its distinct filter and its position in that filter's [`Subs`].
#[derive(Debug, Clone, Copy)]
struct Holder {
    filter: u32,
    at: u32,
}

#[derive(Debug)]
struct FilterEntry {
    /// `code[start..start + len]` in the set's code arena; `len == 0` for a freed entry.
    start: u32,
    len: u32,
    /// The indexed tests every match of the filter needs (see the module documentation): the
    /// anchor and the guard are chosen among them, and only among them.
    required: Box<[u32]>,
    /// The anchor test, or `NO_ANCHOR` (then the filter is in `always`).
    anchor: u32,
    /// The position of the filter's posting in its anchor's `anchored` list (or in `always`).
    posting: u32,
    /// The hash of the code (the identity map's key).
    hash: u64,
    subs: Subs,
}

const NO_ANCHOR: u32 = u32::MAX;

impl FilterEntry {
    fn free() -> FilterEntry {
        FilterEntry {
            start: 0,
            len: 0,
            required: Box::default(),
            anchor: NO_ANCHOR,
            posting: 0,
            hash: 0,
            subs: Subs::Many(Vec::new()),
        }
    }
}

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

/// The tests every satisfying assignment of `term` needs, among the indexed ones (cost class 0):
/// the positive indexed conjuncts of a top-level `and`, or the term itself when it is one indexed
/// test. Terms are canonical, so nested `and`s are already flattened into the top one; anything
/// under an `or` or a `not` is left out.
fn required_tests(term: &Term) -> Vec<u32> {
    let conjuncts = match term {
        Term::And(children) => children.as_slice(),
        single => std::slice::from_ref(single),
    };
    conjuncts
        .iter()
        .filter_map(|c| match c {
            Term::Test(0, t) => Some(*t),
            _ => None,
        })
        .collect()
}

/// An equality index of one kind of value: per key slot, value → the tests holding for it (in no
/// order; each test knows its position in each list, `TestEntry::index_at`).
#[derive(Debug)]
struct EqIndex<V> {
    by_slot: AHashMap<u32, AHashMap<V, Vec<u32>>>,
}

impl<V> Default for EqIndex<V> {
    fn default() -> EqIndex<V> {
        EqIndex {
            by_slot: AHashMap::new(),
        }
    }
}

/// A test that moved in an index list when another left it: `test` is now at `at` in the list of
/// value `value` (an index into the leaving test's values).
struct IndexMove {
    test: u32,
    value: usize,
    at: u32,
}

impl<V: Hash + Eq + Clone> EqIndex<V> {
    /// Adds test `t` to the list of each of `values`; returns its positions.
    fn insert(&mut self, slot: u32, values: &[V], t: u32) -> Box<[u32]> {
        let index = self.by_slot.entry(slot).or_default();
        values
            .iter()
            .map(|v| {
                let list = index.entry(v.clone()).or_default();
                list.push(t);
                idx(list.len() - 1)
            })
            .collect()
    }

    /// Takes a test out of the list of each of `values`, at `positions`; returns the tests that
    /// moved into the vacated positions.
    fn remove(&mut self, slot: u32, values: &[V], positions: &[u32]) -> Vec<IndexMove> {
        let mut moves = Vec::new();
        let Some(index) = self.by_slot.get_mut(&slot) else {
            return moves;
        };
        for (value, (v, &at)) in values.iter().zip(positions).enumerate() {
            let Some(list) = index.get_mut(v) else {
                continue;
            };
            if (at as usize) < list.len() {
                list.swap_remove(at as usize);
            }
            if let Some(&test) = list.get(at as usize) {
                moves.push(IndexMove { test, value, at });
            }
            if list.is_empty() {
                index.remove(v);
            } else {
                shrink_sparse(list);
            }
        }
        if index.is_empty() {
            self.by_slot.remove(&slot);
        }
        moves
    }

    /// Renumbers slots and tests (after [`KeyTable::compact`] and the tests' compaction) and
    /// shrinks the maps.
    fn renumber(&mut self, slots: &[u32], tests: &[u32]) {
        let old = std::mem::take(&mut self.by_slot);
        self.by_slot = AHashMap::with_capacity(old.len());
        for (slot, mut index) in old {
            for list in index.values_mut() {
                for t in list.iter_mut() {
                    *t = tests.get(*t as usize).copied().unwrap_or(GONE);
                }
                list.shrink_to_fit();
            }
            index.shrink_to_fit();
            let slot = slots.get(slot as usize).copied().unwrap_or(GONE);
            self.by_slot.insert(slot, index);
        }
    }

    fn heap_bytes(&self, value_bytes: impl Fn(&V) -> usize) -> usize {
        let mut n = map_bytes(
            self.by_slot.capacity(),
            size_of::<(u32, AHashMap<V, Vec<u32>>)>(),
        );
        for index in self.by_slot.values() {
            n += map_bytes(index.capacity(), size_of::<(V, Vec<u32>)>());
            for (v, list) in index {
                n += value_bytes(v) + list.capacity() * 4;
            }
        }
        n
    }
}

/// Gives a vector's memory back when it uses less than a quarter of it (amortized O(1) per
/// removal: the vector lost at least half of its elements since it last grew or shrank).
fn shrink_sparse<T>(v: &mut Vec<T>) {
    let len = v.len();
    if v.capacity() > 8 && len * 4 < v.capacity() {
        v.shrink_to(len * 2);
    }
}

/// [`shrink_sparse`] for a hash map.
fn shrink_sparse_map<K: Hash + Eq, V>(m: &mut AHashMap<K, V>) {
    let len = m.len();
    if m.capacity() > 16 && len * 4 < m.capacity() {
        m.shrink_to(len * 2);
    }
}

/// Many subscriptions' filters, matched together (see the module documentation).
#[derive(Debug)]
pub struct PolicySet {
    keys: KeyTable,
    dialect: Option<(Dialect, String)>,
    /// What the set's filters read from raw JSON bytes (fixed by the first filter added).
    json_body: Option<crate::JsonBody>,
    tests: Vec<TestEntry>,
    test_ids: AHashMap<Box<str>, u32>,
    free_tests: Vec<u32>,
    /// String-equality tests by slot and dictionary id.
    str_index: EqIndex<u32>,
    /// Numeric point tests by slot and value bits.
    num_index: EqIndex<u64>,
    filters: Vec<FilterEntry>,
    /// Code hash → distinct filters with that hash (almost always one).
    filter_ids: AHashMap<u64, Vec<u32>>,
    free_filters: Vec<u32>,
    /// Filters without an anchor: evaluated for every message.
    always: Vec<u32>,
    code: Vec<u32>,
    /// Words of `code` no live filter uses.
    garbage: usize,
    subs: AHashMap<SubscriptionId, Holder>,
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
            json_body: None,
            tests: Vec::new(),
            test_ids: AHashMap::new(),
            free_tests: Vec::new(),
            str_index: EqIndex::default(),
            num_index: EqIndex::default(),
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

    /// The key table all subscriptions share (a message is bound to it once). It may hold a few
    /// released slots (see the module documentation).
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
            None => {
                self.dialect = Some((filter.dialect(), options));
                self.json_body = filter.json_body();
            }
        }
        self.remove(id);
        let mut new_tests = Vec::new();
        let term = match self.term(ir, &mut new_tests) {
            Ok(term) => term,
            Err(e) => {
                // The tests interned so far serve no filter.
                for t in new_tests {
                    self.free_test(t);
                }
                return Err(e);
            }
        };
        let code = filter_code(&term);
        let hash = self.hasher.hash_one(code.as_slice());
        if let Some(f) = self.find_filter(hash, &code) {
            // An identical filter is already there: share it. The tests it interned are in use.
            self.subscribe(id, f);
            return Ok(());
        }
        // A new distinct filter.
        let f = match self.free_filters.pop() {
            Some(f) => f,
            None => {
                if self.filters.len() >= OPERAND as usize {
                    for t in new_tests {
                        self.free_test(t);
                    }
                    return Err(SetError::Full);
                }
                self.filters.push(FilterEntry::free());
                idx(self.filters.len() - 1)
            }
        };
        let tests = distinct_tests(&code);
        for &t in &tests {
            if let Some(entry) = self.tests.get_mut(t as usize) {
                entry.refs += 1;
            }
        }
        let required = required_tests(&term);
        let anchor = self.least_used(&required, NO_ANCHOR).unwrap_or(NO_ANCHOR);
        let start = idx(self.code.len());
        let len = idx(code.len());
        self.code.extend_from_slice(&code);
        if let Some(entry) = self.filters.get_mut(f as usize) {
            *entry = FilterEntry {
                start,
                len,
                required: required.into_boxed_slice(),
                anchor: NO_ANCHOR,
                posting: 0,
                hash,
                subs: Subs::One(id),
            };
        }
        self.filter_ids.entry(hash).or_default().push(f);
        self.attach(f, anchor);
        self.subs.insert(id, Holder { filter: f, at: 0 });
        for t in tests {
            self.rebalance(t);
        }
        Ok(())
    }

    /// Removes subscription `id`; false when it was not in the set. Costs O(size of its filter)
    /// when it was the filter's last subscription, O(1) otherwise (amortized).
    pub fn remove(&mut self, id: SubscriptionId) -> bool {
        let Some(Holder { filter: f, at }) = self.subs.remove(&id) else {
            return false;
        };
        shrink_sparse_map(&mut self.subs);
        let Some(entry) = self.filters.get_mut(f as usize) else {
            return true;
        };
        let Subs::Many(ids) = &mut entry.subs else {
            self.free_filter(f);
            return true;
        };
        if (at as usize) < ids.len() {
            ids.swap_remove(at as usize);
        }
        let moved = ids.get(at as usize).copied();
        shrink_sparse(ids);
        if let [only] = ids.as_slice() {
            let only = *only;
            entry.subs = Subs::One(only);
        }
        if let Some(moved) = moved
            && let Some(holder) = self.subs.get_mut(&moved)
        {
            holder.at = at;
        }
        true
    }

    /// The subscriptions whose filter matches `message` (a convenience that allocates its
    /// buffers; reuse a [`SetMatcher`] instead on a hot path). The order is unspecified.
    pub fn matching(&self, message: &Message) -> Vec<SubscriptionId> {
        SetMatcher::new().matching(self, message).to_vec()
    }

    /// The heap bytes the set holds: its key table, tests (with their one-test programs, an
    /// estimate from their parts), equality index, filters, codes, subscriber lists and maps.
    /// Hash tables are counted by their buckets; allocator overhead is not counted.
    pub fn heap_bytes(&self) -> usize {
        let mut n = self.keys.heap_bytes()
            + self.code.capacity() * 4
            + self.filters.capacity() * size_of::<FilterEntry>()
            + self.tests.capacity() * size_of::<TestEntry>()
            + map_bytes(self.subs.capacity(), size_of::<(SubscriptionId, Holder)>())
            + map_bytes(self.filter_ids.capacity(), size_of::<(u64, Vec<u32>)>())
            + map_bytes(self.test_ids.capacity(), size_of::<(Box<str>, u32)>())
            + (self.always.capacity() + self.free_filters.capacity() + self.free_tests.capacity())
                * 4
            + self.str_index.heap_bytes(|_| 0)
            + self.num_index.heap_bytes(|_| 0)
            + self.dialect.as_ref().map_or(0, |(_, o)| o.capacity());
        for ids in self.filter_ids.values() {
            n += ids.capacity() * 4;
        }
        for f in &self.filters {
            n += f.required.len() * 4;
            if let Subs::Many(ids) = &f.subs {
                n += ids.capacity() * size_of::<SubscriptionId>();
            }
        }
        for t in &self.tests {
            // The text is held twice: by the entry and by the interning map.
            n += 2 * t.text.len() + t.anchored.capacity() * size_of::<Posting>();
            n += t.index_at.len() * 4;
            n += match &t.check {
                Check::StrEq(v) => v
                    .iter()
                    .map(|(_, s)| s.len() + size_of::<(u32, Box<str>)>())
                    .sum::<usize>(),
                Check::NumEq(v) => v.len() * 8,
                Check::Num(_, r) => r.len() * size_of::<Interval>(),
                Check::Program(p) => program_bytes(p),
                Check::Shape(_) | Check::Free => 0,
            };
        }
        n
    }

    /// The distinct filter with this code, if there is one.
    fn find_filter(&self, hash: u64, code: &[u32]) -> Option<u32> {
        self.filter_ids
            .get(&hash)?
            .iter()
            .copied()
            .find(|&f| self.code_of(f) == code)
    }

    /// The code of filter `f` (empty for a freed one).
    fn code_of(&self, f: u32) -> &[u32] {
        self.filters
            .get(f as usize)
            .and_then(|e| self.code.get(e.start as usize..(e.start + e.len) as usize))
            .unwrap_or(&[])
    }

    /// Adds subscription `id` to the existing filter `f`.
    fn subscribe(&mut self, id: SubscriptionId, f: u32) {
        let Some(entry) = self.filters.get_mut(f as usize) else {
            return;
        };
        let at = match &mut entry.subs {
            Subs::One(other) => {
                entry.subs = Subs::Many(vec![*other, id]);
                1
            }
            Subs::Many(ids) => {
                ids.push(id);
                idx(ids.len() - 1)
            }
        };
        self.subs.insert(id, Holder { filter: f, at });
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
        let t = match self.free_tests.pop() {
            Some(t) => t,
            None => {
                if self.tests.len() >= OPERAND as usize {
                    return Err(SetError::Full);
                }
                self.tests.push(TestEntry::free());
                idx(self.tests.len() - 1)
            }
        };
        let slot = self.keys.intern(test.key.clone());
        let check = match &test.pred {
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values,
            } => {
                let mut values = values.clone();
                values.sort_unstable();
                values.dedup();
                let mut with_ids: Vec<(u32, Box<str>)> = values
                    .into_iter()
                    .map(|v| (self.keys.add_constant(slot, &v), v))
                    .collect();
                with_ids.sort_unstable();
                Check::StrEq(with_ids.into_boxed_slice())
            }
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
        let index_at = match &check {
            Check::StrEq(values) => self.str_index.insert(slot, &ids(values), t),
            Check::NumEq(bits) => self.num_index.insert(slot, bits, t),
            _ => Box::default(),
        };
        let text_numbers = reads_text_numbers(&check);
        if text_numbers {
            self.keys.add_text_numbers(slot);
        }
        if let Some(entry) = self.tests.get_mut(t as usize) {
            *entry = TestEntry {
                slot,
                check,
                refs: 0,
                anchored: Vec::new(),
                index_at,
                text: text.clone(),
                text_numbers,
            };
        }
        self.test_ids.insert(text, t);
        new.push(t);
        Ok((t, cost))
    }

    /// The number of distinct filters using test `t`.
    fn refs(&self, t: u32) -> u32 {
        self.tests.get(t as usize).map_or(u32::MAX, |e| e.refs)
    }

    /// Of `tests`, other than `except`, the one the fewest filters use.
    fn least_used(&self, tests: &[u32], except: u32) -> Option<u32> {
        tests
            .iter()
            .copied()
            .filter(|&t| t != except)
            .min_by_key(|&t| self.refs(t))
    }

    /// Posts filter `f` on `anchor` (or in `always`), with the least used of its other required
    /// tests as its guard.
    fn attach(&mut self, f: u32, anchor: u32) {
        let required = self
            .filters
            .get(f as usize)
            .map_or(&[][..], |e| &e.required);
        let guard = self.least_used(required, anchor).unwrap_or(NO_GUARD);
        let posting = match self.tests.get_mut(anchor as usize) {
            Some(entry) if anchor != NO_ANCHOR => {
                entry.anchored.push(Posting { filter: f, guard });
                entry.anchored.len() - 1
            }
            _ => {
                self.always.push(f);
                self.always.len() - 1
            }
        };
        if let Some(e) = self.filters.get_mut(f as usize) {
            e.anchor = anchor;
            e.posting = idx(posting);
        }
    }

    /// Takes filter `f`'s posting off its anchor (or `always`): `swap_remove`, then the filter
    /// moved into its place learns its new position.
    fn detach(&mut self, f: u32) {
        let Some(&FilterEntry {
            anchor, posting, ..
        }) = self.filters.get(f as usize)
        else {
            return;
        };
        let at = posting as usize;
        let moved = match self.tests.get_mut(anchor as usize) {
            Some(entry) if anchor != NO_ANCHOR => {
                if at < entry.anchored.len() {
                    entry.anchored.swap_remove(at);
                }
                let moved = entry.anchored.get(at).map(|p| p.filter);
                shrink_sparse(&mut entry.anchored);
                moved
            }
            _ => {
                if at < self.always.len() {
                    self.always.swap_remove(at);
                }
                let moved = self.always.get(at).copied();
                shrink_sparse(&mut self.always);
                moved
            }
        };
        if let Some(m) = moved
            && let Some(e) = self.filters.get_mut(m as usize)
        {
            e.posting = posting;
        }
        if let Some(e) = self.filters.get_mut(f as usize) {
            e.anchor = NO_ANCHOR;
        }
    }

    /// When the number of filters using test `t` reaches a power of two (from 16 on), moves the
    /// filters anchored on it to a less used required test if they have one: anchors chosen
    /// early, before the value frequencies were known, do not stay poor. Each list is revisited
    /// O(log n) times.
    fn rebalance(&mut self, t: u32) {
        let Some(entry) = self.tests.get(t as usize) else {
            return;
        };
        let refs = entry.refs;
        if refs < 16 || !refs.is_power_of_two() || entry.anchored.is_empty() {
            return;
        }
        let members: Vec<u32> = entry.anchored.iter().map(|p| p.filter).collect();
        for f in members {
            let required = self
                .filters
                .get(f as usize)
                .map_or(&[][..], |e| &e.required);
            if let Some(best) = self.least_used(required, t)
                && self.refs(best) < refs
            {
                self.detach(f);
                self.attach(f, best);
            }
        }
    }

    /// Frees a distinct filter whose last subscription left, the tests only it used (with their
    /// index entries and keys), and compacts the set when the dead outweigh the live.
    fn free_filter(&mut self, f: u32) {
        self.detach(f);
        let Some(entry) = self.filters.get_mut(f as usize) else {
            return;
        };
        let (start, len, hash) = (entry.start, entry.len, entry.hash);
        *entry = FilterEntry::free();
        if let Some(ids) = self.filter_ids.get_mut(&hash) {
            ids.retain(|&x| x != f);
            if ids.is_empty() {
                self.filter_ids.remove(&hash);
            }
        }
        let code = self
            .code
            .get(start as usize..(start + len) as usize)
            .unwrap_or(&[]);
        for t in distinct_tests(code) {
            let Some(test) = self.tests.get_mut(t as usize) else {
                continue;
            };
            test.refs = test.refs.saturating_sub(1);
            if test.refs == 0 {
                self.free_test(t);
            }
        }
        self.free_filters.push(f);
        self.garbage += len as usize;
        if self.dead_weight() > self.live_weight() {
            self.compact();
        }
    }

    /// Frees test `t`: its index entries, its reference to its key, its interning entry.
    fn free_test(&mut self, t: u32) {
        let Some(entry) = self.tests.get_mut(t as usize) else {
            return;
        };
        let TestEntry {
            slot,
            check,
            index_at,
            text,
            text_numbers,
            ..
        } = std::mem::replace(entry, TestEntry::free());
        let moves = match &check {
            Check::StrEq(values) => self.str_index.remove(slot, &ids(values), &index_at),
            Check::NumEq(bits) => self.num_index.remove(slot, bits, &index_at),
            _ => Vec::new(),
        };
        for m in moves {
            let Some(moved) = self.tests.get_mut(m.test as usize) else {
                continue;
            };
            // The moved test holds the same value; find it among its own (sorted) values.
            let j = match (&check, &moved.check) {
                (Check::StrEq(values), Check::StrEq(own)) => values
                    .get(m.value)
                    .and_then(|(id, _)| own.binary_search_by_key(id, |(i, _)| *i).ok()),
                (Check::NumEq(values), Check::NumEq(own)) => {
                    values.get(m.value).and_then(|v| own.binary_search(v).ok())
                }
                _ => None,
            };
            if let Some(p) = j.and_then(|j| moved.index_at.get_mut(j)) {
                *p = m.at;
            }
        }
        if let Check::StrEq(values) = &check {
            for (_, v) in values.iter() {
                self.keys.release_constant(slot, v);
            }
        }
        if text_numbers {
            self.keys.release_text_numbers(slot);
        }
        self.keys.release(slot);
        self.test_ids.remove(&text);
        shrink_sparse_map(&mut self.test_ids);
        self.free_tests.push(t);
    }

    /// What a compaction keeps and rewrites: subscriptions, filters, tests, keys, dictionary
    /// constants, code words.
    fn live_weight(&self) -> usize {
        self.subs.len()
            + self.distinct_filters()
            + self.distinct_tests()
            + (self.keys.len() - self.keys.released())
            + self.keys.constants()
            + (self.code.len() - self.garbage)
    }

    /// What a compaction drops: free filter, test and dictionary ids, released key slots, unused
    /// code words.
    fn dead_weight(&self) -> usize {
        self.free_filters.len()
            + self.free_tests.len()
            + self.keys.released()
            + self.keys.free_constants()
            + self.garbage
    }

    /// Renumbers the live keys, tests and filters densely (in their current order), rewrites
    /// every reference to them, and shrinks every container to its contents.
    fn compact(&mut self) {
        let slots = self.keys.compact();
        let renumber = |map: &[u32], id: u32| map.get(id as usize).copied().unwrap_or(GONE);

        // Tests.
        let mut test_map = vec![GONE; self.tests.len()];
        let mut tests = Vec::with_capacity(self.distinct_tests());
        for (old, mut t) in std::mem::take(&mut self.tests).into_iter().enumerate() {
            if matches!(t.check, Check::Free) {
                continue;
            }
            t.slot = renumber(&slots, t.slot);
            if let Some(m) = test_map.get_mut(old) {
                *m = idx(tests.len());
            }
            tests.push(t);
        }

        // Filters and their codes.
        let mut filter_map = vec![GONE; self.filters.len()];
        let mut filters = Vec::with_capacity(self.distinct_filters());
        let mut code = Vec::with_capacity(self.code.len() - self.garbage);
        for (old, mut e) in std::mem::take(&mut self.filters).into_iter().enumerate() {
            if e.len == 0 {
                continue;
            }
            let start = code.len();
            if let Some(words) = self.code.get(e.start as usize..(e.start + e.len) as usize) {
                code.extend_from_slice(words);
            }
            let words = code.get_mut(start..).unwrap_or(&mut []);
            map_code_tests(words, |t| renumber(&test_map, t));
            e.start = idx(start);
            e.hash = self.hasher.hash_one(&*words);
            e.required = e.required.iter().map(|&t| renumber(&test_map, t)).collect();
            if e.anchor != NO_ANCHOR {
                e.anchor = renumber(&test_map, e.anchor);
            }
            if let Some(m) = filter_map.get_mut(old) {
                *m = idx(filters.len());
            }
            filters.push(e);
        }

        // Postings, the unanchored list, the index.
        for t in &mut tests {
            for p in &mut t.anchored {
                p.filter = renumber(&filter_map, p.filter);
                if p.guard != NO_GUARD {
                    p.guard = renumber(&test_map, p.guard);
                }
            }
            t.anchored.shrink_to_fit();
        }
        for f in &mut self.always {
            *f = renumber(&filter_map, *f);
        }
        self.always.shrink_to_fit();
        self.num_index.renumber(&slots, &test_map);
        // The dictionary was renumbered with the key table: the string index is built again.
        self.str_index = EqIndex::default();
        for (t, test) in tests.iter_mut().enumerate() {
            if let Check::StrEq(values) = &mut test.check {
                let mut renumbered: Vec<(u32, Box<str>)> = std::mem::take(values)
                    .into_vec()
                    .into_iter()
                    .map(|(_, v)| (self.keys.constant_id(&v).unwrap_or(NO_ID), v))
                    .collect();
                renumbered.sort_unstable();
                *values = renumbered.into_boxed_slice();
                test.index_at = self.str_index.insert(test.slot, &ids(values), idx(t));
            }
        }

        // The maps.
        for t in self.test_ids.values_mut() {
            *t = renumber(&test_map, *t);
        }
        self.test_ids.shrink_to_fit();
        self.filter_ids = AHashMap::with_capacity(filters.len());
        for (f, e) in filters.iter().enumerate() {
            self.filter_ids.entry(e.hash).or_default().push(idx(f));
        }
        for h in self.subs.values_mut() {
            h.filter = renumber(&filter_map, h.filter);
        }
        self.subs.shrink_to_fit();
        for e in &mut filters {
            if let Subs::Many(ids) = &mut e.subs {
                ids.shrink_to_fit();
            }
        }

        self.tests = tests;
        self.filters = filters;
        self.code = code;
        self.garbage = 0;
        self.free_tests = Vec::new();
        self.free_filters = Vec::new();
    }
}

/// An estimate of the heap bytes of a one-test program, from its parts (its decision plan, a
/// step or two, is counted as 64 bytes).
fn program_bytes(p: &Program) -> usize {
    let parts = p.parts();
    let pools = &parts.pools;
    let strings = |v: &[Box<str>]| {
        v.iter()
            .map(|s| s.len() + size_of::<Box<str>>())
            .sum::<usize>()
    };
    size_of::<Program>()
        + 64
        + parts.keys.heap_bytes()
        + parts.code.capacity() * size_of::<filtervm_vm::op::Inst>()
        + parts.origins.capacity() * 4
        + strings(&parts.sources)
        + strings(&pools.strings)
        + pools
            .lists
            .iter()
            .map(|l| strings(l) + size_of::<Vec<Box<str>>>())
            .sum::<usize>()
        + pools
            .sets
            .iter()
            .map(|s| {
                map_bytes(s.capacity(), size_of::<Box<str>>())
                    + s.iter().map(|x| x.len()).sum::<usize>()
            })
            .sum::<usize>()
        + pools
            .ranges
            .iter()
            .map(|r| r.len() * size_of::<Interval>())
            .sum::<usize>()
        + pools
            .dec_ranges
            .iter()
            .map(|r| r.len() * size_of::<filtervm_vm::program::DecInterval>())
            .sum::<usize>()
        + pools.wildcards.len() * size_of::<filtervm_vm::wildcard::Wildcard>()
        + pools.patterns.len() * size_of::<filtervm_vm::pattern::SegmentPattern>()
        + pools.cidrs.len() * size_of::<filtervm_vm::cidr::Cidr>()
}

/// The dictionary ids of a string-equality check's values.
fn ids(values: &[(u32, Box<str>)]) -> Vec<u32> {
    values.iter().map(|(id, _)| *id).collect()
}

/// Whether a check reads its slot's string leaves as numbers.
fn reads_text_numbers(check: &Check) -> bool {
    match check {
        Check::Num(NumSource::Text, _) => true,
        Check::Program(p) => p.code().iter().any(|i| matches!(i, Inst::TextNumIn { .. })),
        _ => false,
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

/// Whether word `i` of a code holds a test id: a conjunct word of an `OP_CONJ` list (`conj`), or
/// an `OP_TEST` / `OP_MARKED` word of accumulator code.
fn is_test_word(conj: bool, i: usize, w: u32) -> bool {
    if conj {
        i > 0
    } else {
        matches!(w >> 29, OP_TEST | OP_MARKED)
    }
}

fn is_conj(code: &[u32]) -> bool {
    code.first().is_some_and(|&head| head >> 29 == OP_CONJ)
}

/// The distinct test ids a code reads.
fn distinct_tests(code: &[u32]) -> Vec<u32> {
    let conj = is_conj(code);
    let mut tests: Vec<u32> = code
        .iter()
        .enumerate()
        .filter(|&(i, &w)| is_test_word(conj, i, w))
        .map(|(_, &w)| w & OPERAND)
        .collect();
    tests.sort_unstable();
    tests.dedup();
    tests
}

/// Rewrites the test ids of a code through `map` (flags and opcodes kept).
fn map_code_tests(code: &mut [u32], map: impl Fn(u32) -> u32) {
    let conj = is_conj(code);
    for (i, w) in code.iter_mut().enumerate() {
        if is_test_word(conj, i, *w) {
            *w = (*w & !OPERAND) | (map(*w & OPERAND) & OPERAND);
        }
    }
}

/// Reusable buffers for matching messages against a [`PolicySet`]: the binding scratch, the
/// per-test verdicts of the current message and the result. Keep one per thread: once warm,
/// matching a stream of messages allocates nothing.
#[derive(Debug, Default)]
pub struct SetMatcher {
    bindings: Bindings,
    state: MatchState,
}

/// What matching one message keeps apart from the bindings.
#[derive(Debug, Default)]
struct MatchState {
    /// Per test: `epoch << 1 | verdict` when checked for the current row.
    memo: Vec<u32>,
    epoch: u32,
    /// Per filter: the message stamp when it last matched (so a match across rows counts once).
    matched: Vec<u32>,
    stamp: u32,
    marked: Vec<u32>,
    out: Vec<SubscriptionId>,
    /// The width of the last message's rows.
    width: usize,
    /// How far the last message could be judged.
    judgement: Judgement,
}

impl SetMatcher {
    /// New, empty buffers.
    pub fn new() -> SetMatcher {
        SetMatcher::default()
    }

    /// The number of slots in a row of the last message matched (the set's key table's width).
    pub fn bound_width(&self) -> usize {
        self.state.width
    }

    /// How far the last message matched could be judged (an SNS body beyond the binding limits,
    /// or JSON bytes that are not JSON, fail closed: see [`Judgement`]).
    pub fn judgement(&self) -> &Judgement {
        &self.state.judgement
    }

    /// Whether the last message was an SNS body too complex to judge element by element
    /// ([`Judgement::Overflowed`]).
    pub fn overflowed(&self) -> bool {
        self.state.judgement == Judgement::Overflowed
    }

    /// The subscriptions of `set` whose filter matches `message`, in no particular order.
    pub fn matching(&mut self, set: &PolicySet, message: &Message) -> &[SubscriptionId] {
        let bound = self.bindings.bind(&set.keys, message);
        self.state.matching(set, &bound)
    }

    /// The subscriptions of `set` whose filter matches the raw JSON bytes `json` (an SNS body or
    /// an Event Grid event, as [`crate::Evaluator::matches_bytes`] reads them): bound once, to
    /// the set's key table, reading only what some subscription reads. Errors as
    /// [`crate::Evaluator::matches_bytes`] does; an empty set matches nothing.
    pub fn matching_bytes(
        &mut self,
        set: &PolicySet,
        json: &[u8],
    ) -> Result<&[SubscriptionId], MessageError> {
        let bound = self.bindings.bind_json(&set.keys, json);
        if let Some(e) = bound.not_json()
            && set.json_body == Some(crate::JsonBody::Event)
        {
            return Err(crate::not_json_error(Dialect::EventGrid, e));
        }
        if set.json_body.is_none() && !set.is_empty() {
            return Err(crate::not_json_dialect_error(
                set.dialect().unwrap_or(Dialect::Sns),
            ));
        }
        Ok(self.state.matching(set, &bound))
    }

    /// The subscriptions of `set` whose filter matches the typed attributes `attributes`,
    /// borrowed (see [`crate::Evaluator::matches_attributes`]).
    pub fn matching_attributes<A: Attributes + ?Sized>(
        &mut self,
        set: &PolicySet,
        attributes: &A,
    ) -> &[SubscriptionId] {
        let bound = self.bindings.bind_attributes(&set.keys, attributes);
        self.state.matching(set, &bound)
    }

    /// The subscriptions of `set` whose filter matches `headers`, borrowed (see
    /// [`crate::Evaluator::matches_headers`]).
    pub fn matching_headers<H: Headers + ?Sized>(
        &mut self,
        set: &PolicySet,
        headers: &H,
    ) -> &[SubscriptionId] {
        let bound = self.bindings.bind_headers(&set.keys, headers);
        self.state.matching(set, &bound)
    }

    /// Like [`SetMatcher::matching`], for a message the caller bound to `set.keys()` (with a
    /// [`Bindings`] of its own).
    pub fn matching_bound(&mut self, set: &PolicySet, bound: &Bound<'_>) -> &[SubscriptionId] {
        self.state.matching(set, bound)
    }

    /// Binds `message` to the set's key table and drops the result (for timing binding apart
    /// from matching); returns the number of rows.
    pub fn bind(&mut self, set: &PolicySet, message: &Message) -> usize {
        self.bindings.bind(&set.keys, message).rows()
    }
}

impl MatchState {
    fn matching(&mut self, set: &PolicySet, bound: &Bound<'_>) -> &[SubscriptionId] {
        self.out.clear();
        self.width = bound.width();
        if *bound.judgement() != self.judgement {
            self.judgement = bound.judgement().clone();
        }
        fit(&mut self.memo, set.tests.len());
        fit(&mut self.matched, set.filters.len());
        self.stamp = self.next_stamp();
        let message_stamp = self.stamp;
        for row in 0..bound.rows() {
            let slots = bound.row(row);
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch >= 1 << 30 || self.epoch == 0 {
                self.memo.iter_mut().for_each(|m| *m = 0);
                self.epoch = 1;
            }
            self.mark(set, slots);
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
                    self.consider(set, p.filter, bound, row, message_stamp);
                }
            }
            for &f in &set.always {
                self.consider(set, f, bound, row, message_stamp);
            }
        }
        &self.out
    }

    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.matched.iter_mut().for_each(|m| *m = 0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Marks every indexed test that holds on the row `slots` (and lists them in `marked`):
    /// string leaves by the dictionary id binding gave them, number leaves by value.
    fn mark(&mut self, set: &PolicySet, slots: &[Slot<'_>]) {
        self.marked.clear();
        let on = (self.epoch << 1) | 1;
        let MatchState { memo, marked, .. } = self;
        let mut hit = |tests: &[u32]| {
            for &t in tests {
                if let Some(m) = memo.get_mut(t as usize)
                    && *m != on
                {
                    *m = on;
                    marked.push(t);
                }
            }
        };
        for (&slot, index) in &set.str_index.by_slot {
            let Some(s) = slots.get(slot as usize) else {
                continue;
            };
            for leaf in s.leaves() {
                let id = leaf.eq_id();
                if id != NO_ID
                    && let Some(tests) = index.get(&id)
                {
                    hit(tests);
                }
            }
        }
        for (&slot, index) in &set.num_index.by_slot {
            let Some(s) = slots.get(slot as usize) else {
                continue;
            };
            for leaf in s.leaves() {
                if let Some(x) = leaf.as_f64()
                    && let Some(tests) = index.get(&num_bits(x))
                {
                    hit(tests);
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
    fn consider(&mut self, set: &PolicySet, f: u32, bound: &Bound<'_>, row: usize, msg_stamp: u32) {
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
        if self.run(set, code, bound, row) {
            if let Some(m) = self.matched.get_mut(fi) {
                *m = msg_stamp;
            }
            self.out.extend_from_slice(entry.subs.as_slice());
        }
    }

    /// Runs a filter's code: one accumulator, forward jumps only.
    fn run(&mut self, set: &PolicySet, code: &[u32], bound: &Bound<'_>, row: usize) -> bool {
        if let Some((&head, conjuncts)) = code.split_first()
            && head >> 29 == OP_CONJ
        {
            let on = (self.epoch << 1) | 1;
            for &w in conjuncts {
                let t = w & OPERAND;
                let holds = if w & IDX != 0 {
                    self.memo.get(t as usize) == Some(&on)
                } else {
                    self.test(set, t, bound, row)
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
                OP_TEST => acc = self.test(set, operand, bound, row),
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
    fn test(&mut self, set: &PolicySet, t: u32, bound: &Bound<'_>, row: usize) -> bool {
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
        let slot = bound.slot(row, test.slot as usize);
        let verdict = match &test.check {
            // Indexed tests that hold were marked: unmarked ones do not hold.
            Check::StrEq(_) | Check::NumEq(_) | Check::Free => false,
            Check::Shape(shapes) => shapes.has(slot.shape),
            Check::Num(NumSource::NumberLeaf, ranges) => slot.leaves().any(|l| {
                l.as_f64()
                    .is_some_and(|x| ranges.iter().any(|r| r.contains(x)))
            }),
            Check::Num(NumSource::Text, ranges) => slot.leaves().any(|l| {
                l.as_str().is_some() && {
                    let x = l.text_number();
                    ranges.iter().any(|r| r.contains(x))
                }
            }),
            Check::Program(p) => exec::eval_test(p, 0, bound, row, test.slot as usize),
        };
        if let Some(m) = self.memo.get_mut(t as usize) {
            *m = epoch | u32::from(verdict);
        }
        verdict
    }
}

/// Sizes a per-test or per-filter buffer of a [`SetMatcher`] for a set of `n` of them: grown to
/// `n`, and cut back when the set shrank to under a quarter of it (after a compaction). The
/// entries' meaning does not depend on the length (they are stamps of past rows and messages).
fn fit(buffer: &mut Vec<u32>, n: usize) {
    if buffer.len() < n {
        buffer.resize(n, 0);
    } else if buffer.len() > 64 && n * 4 < buffer.len() {
        buffer.truncate(n);
        buffer.shrink_to_fit();
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

    /// A test inside an `$or` branch is no conjunct of the filter: the set must not skip the
    /// filter when it does not hold.
    #[test]
    fn tests_inside_or_branches_are_never_guards_sns() {
        let policy = json!({"t": ["1"], "$or": [{"w": ["0"]}, {"x": ["1"], "z": ["0"]}]});
        let filter = sns(policy);
        let m = Message::attributes([
            ("t", AttributeType::String, "1"),
            ("w", AttributeType::String, "0"),
        ]);
        assert!(filter.matches(&m));
        let mut set = PolicySet::new();
        set.add(1, &filter).unwrap();
        assert_eq!(set.matching(&m), [1]);
    }

    #[test]
    fn tests_inside_or_branches_are_never_guards_expr() {
        let c = |k: &str| json!({"key": k, "op": "in", "value": ["1"]});
        let policy = json!({"op": "AND", "exp": [c("t"), {"op": "OR", "exp": [
            c("w"), {"op": "AND", "exp": [c("x"), c("z")]}]}]});
        let filter = compile(Dialect::Expr, &policy, &Dialect::Expr.into()).unwrap();
        let m = crate::message_from_json(
            Dialect::Expr,
            &Dialect::Expr.into(),
            &json!({"headers": {"t": "1", "w": "1"}}),
        )
        .unwrap();
        assert!(filter.matches(&m));
        let mut set = PolicySet::new();
        set.add(1, &filter).unwrap();
        assert_eq!(set.matching(&m), [1]);
    }

    #[test]
    fn required_tests_are_the_top_level_indexed_conjuncts_only() {
        let t = |c, id| Term::Test(c, id);
        // AND(1, 2, OR(3, AND(4, 5)), NOT 6, 7 (not indexed)): 4 and 5 end where the whole code
        // ends, but they are inside an OR.
        let term = Term::And(vec![
            t(0, 1),
            t(0, 2),
            Term::Not(0, Box::new(t(0, 6))),
            t(2, 7),
            Term::Or(vec![t(0, 3), Term::And(vec![t(0, 4), t(0, 5)])]),
        ]);
        assert_eq!(required_tests(&term), [1, 2]);
        assert_eq!(required_tests(&t(0, 9)), [9]);
        assert!(required_tests(&t(1, 9)).is_empty());
        assert!(required_tests(&Term::Or(vec![t(0, 1), t(0, 2)])).is_empty());
        assert!(required_tests(&Term::Not(0, Box::new(t(0, 1)))).is_empty());
    }

    /// Found by the `policy_set` fuzz target on the set that read guards off the code: `b`, in
    /// the second `$or` branch, was taken for a conjunct.
    #[test]
    fn fuzz_finding_nested_or_with_a_repeated_member() {
        let ip = "2001:0db8:0000:0000:0000:0000:0000:0001";
        let filter = sns(json!({"a.": [ip], "$or": [{"a.": [ip]},
            {"b": ["a\\c"], "$or": [{"a.": [ip]}, {"a.": [ip]}]}]}));
        let m = Message::attributes([
            ("a.", AttributeType::String, ip),
            ("b", AttributeType::String, ip),
        ]);
        assert!(filter.matches(&m));
        let mut set = PolicySet::new();
        set.add(1, &filter).unwrap();
        assert_eq!(set.matching(&m), [1]);
    }

    /// When a required test becomes common, rebalancing looks for a rarer one; a rare test inside
    /// an OR branch is none.
    #[test]
    fn rebalancing_never_anchors_on_a_test_inside_an_or() {
        let mut set = PolicySet::new();
        // 64 filters share env=prod, their only required test; their OR branches are rare.
        for i in 0..64u64 {
            let policy = json!({"env": ["prod"], "$or": [
                {"w": [format!("w{i}")]}, {"x": [format!("x{i}")], "z": ["0"]}]});
            set.add(i, &sns(policy)).unwrap();
        }
        for i in 0..64u64 {
            let w = format!("w{i}");
            let m = Message::attributes([
                ("env", AttributeType::String, "prod"),
                ("w", AttributeType::String, w.as_str()),
            ]);
            assert_eq!(set.matching(&m), [i]);
        }
        assert_eq!(set.anchors(), [("(attr \"env\" str-eq [\"prod\"])", 64)]);
    }

    /// The heap bytes of a set that held one subscription and lost it.
    fn emptied_set_bytes() -> usize {
        let mut set = PolicySet::new();
        set.add(1, &sns(json!({"a": ["1"]}))).unwrap();
        set.remove(1);
        set.heap_bytes()
    }

    /// Rounds of adding and removing subscriptions with keys of their own leave nothing behind:
    /// no key (the bound width is back to zero), no test, no index entry, no memory.
    #[test]
    fn removing_everything_releases_keys_tests_and_memory() {
        let mut set = PolicySet::new();
        let mut matcher = SetMatcher::new();
        for round in 0..5 {
            for i in 0..2000u64 {
                let policy = json!({ format!("k{round}_{i}"): ["v"], "event": [format!("e{i}")] });
                set.add(i, &sns(policy)).unwrap();
            }
            assert_eq!(set.keys().len(), 2001);
            for i in (0..2000u64).rev() {
                assert!(set.remove(i));
            }
            assert_eq!(set.keys().len(), 0, "round {round}");
            assert_eq!((set.distinct_tests(), set.distinct_filters()), (0, 0));
            let m = Message::attributes([("k0_0", AttributeType::String, "v")]);
            assert!(matcher.matching(&set, &m).is_empty());
            assert_eq!(matcher.bound_width(), 0);
        }
        // All that is left is what a set that ever held one subscription holds: its options.
        assert_eq!(set.heap_bytes(), emptied_set_bytes());
    }

    /// After churn, a set holds about what a fresh set with the surviving subscriptions holds:
    /// keys, tests and filters nobody uses are gone, and so is their memory.
    #[test]
    fn memory_after_churn_returns_to_a_fresh_set() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        // 3,000 distinct filters, each with a key of its own; "env" and "n" tests are shared.
        let filters: Vec<Filter> = (0..3000u64)
            .map(|i| {
                sns(json!({
                    format!("key{i}"): [format!("v{}", i % 7)],
                    "env": ["prod", format!("env{}", i % 100)],
                    "n": [{"numeric": [">", i % 50]}],
                }))
            })
            .collect();
        let mut set = PolicySet::new();
        let mut live: AHashMap<u64, usize> = AHashMap::new();
        for step in 0..22_000u64 {
            // Grow to about 6,000 subscriptions, then shrink to about 1,000.
            let grow = if step < 12_000 { 3 } else { 1 };
            if next(4) < grow {
                let i = next(3000) as usize;
                set.add(step, &filters[i]).unwrap();
                live.insert(step, i);
            } else if !live.is_empty() {
                let id = *live.keys().nth(next(live.len() as u64) as usize).unwrap();
                assert!(set.remove(id));
                live.remove(&id);
            }
        }
        let mut fresh = PolicySet::new();
        for (&id, &i) in &live {
            fresh.add(id, &filters[i]).unwrap();
        }
        assert_eq!(set.len(), fresh.len());
        assert_eq!(set.distinct_tests(), fresh.distinct_tests());
        assert_eq!(set.distinct_filters(), fresh.distinct_filters());
        // Dead entries never outweigh live ones, so at most twice the live keys are bound.
        assert!(
            set.keys().len() <= 2 * fresh.keys().len(),
            "{} keys, fresh {}",
            set.keys().len(),
            fresh.keys().len()
        );
        let (churned, new) = (set.heap_bytes(), fresh.heap_bytes());
        assert!(
            churned <= 2 * new,
            "{churned} bytes after churn, {new} fresh"
        );
        for id in live.keys() {
            set.remove(*id);
        }
        assert_eq!(set.heap_bytes(), emptied_set_bytes());
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

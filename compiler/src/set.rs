//! `PolicySet`: the engine of one group of a [`SubscriptionSet`](crate::SubscriptionSet) — the
//! subscriptions of one dialect and one options value, matched against a message at once.
//!
//! A broker evaluates every subscription of a topic for every message. One by one that costs
//! N × (bind + run). A `PolicySet` does better:
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
//!   (see [`filtervm_vm::bind`]). Each filter is *anchored* on one indexed test it cannot hold
//!   without (see below); the tests that anchor some filter are indexed a second time (the
//!   *anchor index*), and looking the message's ids up in it yields every anchor that holds —
//!   without looking at the other tests (*marking*). Only filters whose anchor holds are
//!   evaluated, plus the few that have no such test; their other indexed tests are decided when
//!   read, from the same ids. So the work follows the message, not the number of subscriptions;
//! - **incremental**: [`PolicySet::add`] and [`PolicySet::remove`] change one subscription without
//!   rebuilding anything else, and what nobody uses any more is released (see below).
//!
//! Subscriptions are *handles* (`u32`) the subscription set chooses; where each one sits in the
//! engine (its [`Holder`]: its distinct filter and its position in that filter's subscriber list)
//! is kept by the subscription set beside the handle ([`Holders`]), so that the engine needs no map
//! of its own. [`MatchState::matching`] appends the handles whose filter matches, exactly the ones
//! evaluating each subscription's [`Filter`] on its own gives (a differential test checks this on
//! every dialect, mixed in one set, and so does the `policy_set` fuzz target).
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
//! (`FilterEntry::required`); the anchor is the one expected to hold least often for a message,
//! the guard the next one (`PolicySet::rarest`). How often an equality test holds is estimated
//! from the set alone, taking a key's values as equally likely: the number of values it accepts
//! over the number of distinct values the set's equality tests name on its key — so a test on a
//! tenant (thousands of distinct values) anchors a filter before one on an event type (hundreds),
//! which comes before one on a region (a dozen) — and among equally frequent tests, the one
//! fewer filters use. The number of filters anchored on a test does not enter: a long list on a
//! rare test is walked rarely. As the set grows, the keys' numbers of values change, so anchors
//! are chosen again: the filters anchored on a test when its filter count reaches a power of two
//! from 16 on (`PolicySet::rebalance`), and every filter once the filters added since the last
//! such pass reach half the set (`PolicySet::reanchor`; O(1) per added filter). A saved set
//! being read back (`set_wire`) knows all its filters before matching: each group's anchors and
//! guards are chosen once, after its last filter (`PolicySet::anchor_loaded`, what a final
//! `reanchor` pass gives). All choose from the same list. Skipping a filter whose anchor or guard does not hold is thus always right: the
//! filter cannot hold without them.
//!
//! Per binding row: only tests that anchor some filter are marked (those that hold on the row);
//! a filter comes up for a row only when its anchor is marked for that row, and is skipped when
//! its guard does not hold. Every other test a filter reads — its guard, indexed or not — is
//! decided when first read on the row and remembered for the row (`MatchState::test`): an
//! indexed one from the dictionary ids (or numbers) binding gave the slot's leaves, exactly as
//! marking would have found it.
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

use crate::codegen;
use crate::error::ErrorCode;
use crate::ir::{Case, Node, NodeKind, NumSource, Pred, StrOp, Test};
use ahash::{AHashMap, RandomState};
use filtervm_vm::bind::{Bound, KeyTable, NO_ID, Slot, map_bytes};
use filtervm_vm::exec;
use filtervm_vm::op::{Inst, StrSet};
use filtervm_vm::program::{Interval, Program};
use filtervm_vm::value::Shapes;
use hashbrown::HashTable;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::hash::Hash;
use std::mem::size_of;
use std::sync::Arc;

/// Why a filter could not be inserted. The set is unchanged (an id already there keeps its
/// filter).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InsertError {
    /// The filter carries no IR: it was loaded from bytes of the first wire format, which
    /// shipped none, and a set builds its shared tests and index from the IR.
    #[error(
        "the filter carries no IR (it was loaded from bytes of the first wire format, which \
         shipped none): compile it from its policy again, or re-export it with `to_bytes` of this \
         version (wire format 2 carries the IR)"
    )]
    NoIr,
    /// More subscriptions (2^32 - 2), or more distinct tests or filters in one group (2^29 each),
    /// than the set's encoding allows.
    #[error("the subscription set is full")]
    Full,
    /// A test's own program was rejected by the verifier: a bug in this library, reported
    /// rather than left to match nothing.
    #[error("codegen produced an invalid program for a shared test: {0}")]
    Codegen(String),
}

impl InsertError {
    /// The stable error code: [`ErrorCode::FilterWithoutIr`] for [`InsertError::NoIr`],
    /// [`ErrorCode::InternalCodegen`] for [`InsertError::Codegen`]; `None` for a full set (a
    /// limit of this library, not an input error).
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            InsertError::NoIr => Some(ErrorCode::FilterWithoutIr),
            InsertError::Full => None,
            InsertError::Codegen(_) => Some(ErrorCode::InternalCodegen),
        }
    }
}

/// A subscription as the engine knows it: a handle the subscription set chose (its slot).
pub(crate) type Handle = u32;

/// Where a subscription sits in its group's engine: its distinct filter and its position in that
/// filter's subscriber list. Kept by the subscription set, one per handle ([`Holders`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Holder {
    pub(crate) filter: u32,
    pub(crate) at: u32,
}

/// The holders of the subscription set's handles: the engine reads and updates the holder of each
/// subscription it moves.
pub(crate) trait Holders {
    /// The holder of `handle` (`None` only for a handle the set never gave out).
    fn holder(&mut self, handle: Handle) -> Option<&mut Holder>;
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
/// An indexed test (answered from the ids binding gave its slot's leaves, or by marking).
const OP_MARKED: u32 = 6;
/// A conjunction of (possibly negated) tests: `word(OP_CONJ, n)` then `n` conjunct words.
const OP_CONJ: u32 = 7;
/// In a conjunct word: the test is negated.
const NEG: u32 = 1 << 31;
/// In a conjunct word: the test is indexed (answered from the ids binding gave, or by marking).
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
#[derive(Debug, Clone)]
enum Check {
    /// Some string leaf equals one of these values (distinct), each with its id in the key
    /// table's dictionary, sorted by id: answered by the equality index.
    StrEq(Box<[(u32, Arc<str>)]>),
    /// Some number leaf equals one of these values (binary64 bits, `-0` as `0`; sorted,
    /// distinct): answered by the numeric equality index.
    NumEq(Box<[u64]>),
    /// The slot's shape is in the set.
    Shape(Shapes),
    /// Some number leaf (or numeric string leaf) lies in the intervals.
    Num(NumSource, Box<[Interval]>),
    /// Anything else: a one-test program run against the shared bindings, with the predicate it
    /// was generated from (what a saved set ships, [`PolicySet::parts`]).
    Program(Arc<Program>, Box<Pred>),
    /// A freed id (reused by the next new test).
    Free,
}

#[derive(Debug, Clone)]
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
    /// For an indexed test that anchors some filter: its position in the anchor index list of
    /// each of its values (parallel to the values of `check`); empty otherwise.
    anchor_at: Box<[u32]>,
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
            anchor_at: Box::default(),
            text: Box::default(),
            text_numbers: false,
        }
    }
}

/// A filter anchored on a test, with a second required test (its *guard*, or `NO_GUARD`): when
/// the guard does not hold the filter cannot hold and is skipped without being looked at.
#[derive(Debug, Clone, Copy)]
struct Posting {
    filter: u32,
    guard: u32,
}

const NO_GUARD: u32 = u32::MAX;

/// The subscriptions of one distinct filter (most filters have one), in no order.
#[derive(Debug, Clone)]
enum Subs {
    One(Handle),
    Many(Vec<Handle>),
}

impl Subs {
    fn as_slice(&self) -> &[Handle] {
        match self {
            Subs::One(id) => std::slice::from_ref(id),
            Subs::Many(ids) => ids,
        }
    }
}

#[derive(Debug, Clone)]
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
    /// Which use of this entry it is (never 0 for a live one): a [`Known`] identity finds the
    /// filter only while the entry is in the use it was recorded for.
    incarnation: u64,
    subs: Subs,
}

/// A compiled filter's identity ([`Filter::identity`](crate::Filter)) and the distinct filter
/// it was added as ([`PolicySet::identities`]).
#[derive(Debug, Clone, Copy)]
struct Known {
    identity: u64,
    filter: u32,
    /// The filter entry's incarnation when the identity was recorded: once the entry is freed
    /// (and perhaps reused), the record finds nothing.
    incarnation: u64,
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
            incarnation: 0,
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
#[derive(Debug, Clone)]
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
    /// The number of distinct values indexed on `slot`.
    fn distinct(&self, slot: u32) -> usize {
        self.by_slot.get(&slot).map_or(0, |index| index.len())
    }

    /// Adds test `t` to the list of each of `values`; returns its positions.
    fn insert(
        &mut self,
        slot: u32,
        values: impl ExactSizeIterator<Item = V>,
        t: u32,
    ) -> Box<[u32]> {
        let index = self.by_slot.entry(slot).or_default();
        values
            .map(|v| {
                let list = index.entry(v).or_default();
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

/// The hash of filter `f`'s code (what [`PolicySet::filter_ids`] holds it under).
fn filter_hash(filters: &[FilterEntry], f: u32) -> u64 {
    filters.get(f as usize).map_or(0, |e| e.hash)
}

/// The interning text of test `t` (what [`PolicySet::test_ids`] holds it under).
fn test_text(tests: &[TestEntry], t: u32) -> &str {
    tests.get(t as usize).map_or("", |e| &e.text)
}

/// Many subscriptions' filters of one dialect and options value, matched together (see the
/// module documentation).
#[derive(Debug, Clone)]
pub(crate) struct PolicySet {
    keys: KeyTable,
    tests: Vec<TestEntry>,
    /// Interning: each live test by the hash of its text (held once, by its entry).
    test_ids: HashTable<u32>,
    /// The text of the test being interned (its identity in `test_ids`), kept between calls
    /// so that finding a test already held allocates nothing.
    test_text: String,
    free_tests: Vec<u32>,
    /// String-equality tests by slot and dictionary id.
    str_index: EqIndex<u32>,
    /// Numeric point tests by slot and value bits.
    num_index: EqIndex<u64>,
    /// The string-equality tests that anchor some filter, by slot and dictionary id: the only
    /// tests marking looks for.
    anchor_str: EqIndex<u32>,
    /// The numeric point tests that anchor some filter, by slot and value bits.
    anchor_num: EqIndex<u64>,
    filters: Vec<FilterEntry>,
    /// The distinct filters by the hash of their code (held by their entries): no allocation
    /// per filter.
    filter_ids: HashTable<u32>,
    /// The compiled filters added, by identity: a filter added again is found without reading
    /// its IR. Records of freed filters are dropped lazily (they find nothing).
    identities: HashTable<Known>,
    /// The incarnation the next new filter entry takes.
    incarnation: u64,
    free_filters: Vec<u32>,
    /// Filters without an anchor: evaluated for every message.
    always: Vec<u32>,
    code: Vec<u32>,
    /// Words of `code` no live filter uses.
    garbage: usize,
    /// The number of subscriptions.
    subscriptions: usize,
    /// Distinct filters added since every filter's anchor was last chosen again
    /// ([`PolicySet::reanchor`]).
    added: usize,
    hasher: RandomState,
}

impl Default for PolicySet {
    fn default() -> PolicySet {
        PolicySet::new()
    }
}

impl PolicySet {
    /// An empty set.
    pub(crate) fn new() -> PolicySet {
        PolicySet {
            keys: KeyTable::new(),
            tests: Vec::new(),
            test_ids: HashTable::new(),
            test_text: String::new(),
            free_tests: Vec::new(),
            str_index: EqIndex::default(),
            num_index: EqIndex::default(),
            anchor_str: EqIndex::default(),
            anchor_num: EqIndex::default(),
            filters: Vec::new(),
            filter_ids: HashTable::new(),
            identities: HashTable::new(),
            incarnation: 1,
            free_filters: Vec::new(),
            always: Vec::new(),
            code: Vec::new(),
            garbage: 0,
            subscriptions: 0,
            added: 0,
            hasher: RandomState::with_seeds(0x5eed, 0xf1, 0x7e, 0x4d),
        }
    }

    /// The number of subscriptions.
    pub(crate) fn len(&self) -> usize {
        self.subscriptions
    }

    /// Whether the set holds no subscription.
    pub(crate) fn is_empty(&self) -> bool {
        self.subscriptions == 0
    }

    /// The number of distinct filters (identical filters count once).
    pub(crate) fn distinct_filters(&self) -> usize {
        self.filters.len() - self.free_filters.len()
    }

    /// The number of distinct tests.
    pub(crate) fn distinct_tests(&self) -> usize {
        self.tests.len() - self.free_tests.len()
    }

    /// The number of filters without an indexed anchor (evaluated for every message).
    pub(crate) fn unanchored_filters(&self) -> usize {
        self.always.len()
    }

    /// The size of the per-test and per-filter buffers matching needs.
    pub(crate) fn buffer_sizes(&self) -> (usize, usize) {
        (self.tests.len(), self.filters.len())
    }

    /// For diagnostics: each indexed test (as `(key predicate)` text) with the number of distinct
    /// filters anchored on it, largest first.
    pub(crate) fn anchors(&self) -> Vec<(&str, usize)> {
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
    pub(crate) fn keys(&self) -> &KeyTable {
        &self.keys
    }

    /// Adds subscription `handle` (new to this set) with the filter whose optimized IR is `ir`
    /// and whose [`Filter::identity`](crate::Filter) is `identity` (0: none), and records where
    /// it sits in `holders`. On error nothing changed.
    ///
    /// A filter whose identity the set holds is the same compile as the one added under it, so
    /// it has the same code: it is subscribed to without interning its tests again (a lookup and
    /// a push).
    pub(crate) fn add(
        &mut self,
        handle: Handle,
        ir: &Node,
        identity: u64,
        holders: &mut impl Holders,
    ) -> Result<(), InsertError> {
        if let Some(f) = self.find_identity(identity) {
            self.subscribe(handle, f, holders);
            return Ok(());
        }
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
        let required = required_tests(&term);
        self.add_code(handle, &code, required, new_tests, identity, holders, true)
    }

    /// [`PolicySet::add`] once the filter's code and required tests are known: shares the
    /// distinct filter with this code, or adds it (`new_tests`: the tests interned for it, freed
    /// if it cannot be added). Without `anchor`, a new filter is put in `always` and its anchor
    /// is left to [`PolicySet::anchor_loaded`] (a saved set being loaded). The distinct filter
    /// (found or added) is then also found by `identity`, when not 0 ([`PolicySet::know`]).
    #[expect(
        clippy::too_many_arguments,
        reason = "the two callers differ in every argument; a struct would only rename them"
    )]
    fn add_code(
        &mut self,
        handle: Handle,
        code: &[u32],
        required: Vec<u32>,
        new_tests: Vec<u32>,
        identity: u64,
        holders: &mut impl Holders,
        anchor: bool,
    ) -> Result<(), InsertError> {
        let hash = self.hasher.hash_one(code);
        if let Some(f) = self.find_filter(hash, code) {
            // An identical filter is already there: share it. The tests it interned are in use.
            self.subscribe(handle, f, holders);
            self.know(f, identity);
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
                    return Err(InsertError::Full);
                }
                self.filters.push(FilterEntry::free());
                idx(self.filters.len() - 1)
            }
        };
        let tests = distinct_tests(code);
        for &t in tests.as_slice() {
            if let Some(entry) = self.tests.get_mut(t as usize) {
                entry.refs += 1;
            }
        }
        let chosen = if anchor {
            self.rarest(&required, NO_ANCHOR).unwrap_or(NO_ANCHOR)
        } else {
            NO_ANCHOR
        };
        let start = idx(self.code.len());
        let len = idx(code.len());
        self.code.extend_from_slice(code);
        if let Some(entry) = self.filters.get_mut(f as usize) {
            *entry = FilterEntry {
                start,
                len,
                required: required.into_boxed_slice(),
                anchor: NO_ANCHOR,
                posting: 0,
                hash,
                incarnation: self.incarnation,
                subs: Subs::One(handle),
            };
            self.incarnation += 1;
        }
        let filters = &self.filters;
        self.filter_ids
            .insert_unique(hash, f, |&g| filter_hash(filters, g));
        self.know(f, identity);
        if let Some(holder) = holders.holder(handle) {
            *holder = Holder { filter: f, at: 0 };
        }
        self.subscriptions += 1;
        if !anchor {
            self.always.push(f);
            if let Some(e) = self.filters.get_mut(f as usize) {
                e.posting = idx(self.always.len() - 1);
            }
            return Ok(());
        }
        self.attach(f, chosen);
        for &t in tests.as_slice() {
            self.rebalance(t);
        }
        self.added += 1;
        if self.added >= 16 && self.added >= self.distinct_filters() / 2 {
            self.reanchor();
        }
        Ok(())
    }

    /// Removes subscription `handle` (one of this set's). Costs O(size of its filter) when it was
    /// the filter's last subscription, O(1) otherwise (amortized).
    pub(crate) fn remove(&mut self, handle: Handle, holders: &mut impl Holders) {
        let Some(&mut Holder { filter: f, at }) = holders.holder(handle) else {
            return;
        };
        self.subscriptions = self.subscriptions.saturating_sub(1);
        let Some(entry) = self.filters.get_mut(f as usize) else {
            return;
        };
        let Subs::Many(ids) = &mut entry.subs else {
            self.free_filter(f, holders);
            return;
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
            && let Some(holder) = holders.holder(moved)
        {
            holder.at = at;
        }
    }

    /// Gives subscription `from` the handle `to`: `to`'s holder becomes `from`'s, and `from`'s
    /// place in its filter's subscriber list holds `to` (`to` is not in this set).
    pub(crate) fn rename(&mut self, from: Handle, to: Handle, holders: &mut impl Holders) {
        let Some(&mut holder) = holders.holder(from) else {
            return;
        };
        if let Some(entry) = self.filters.get_mut(holder.filter as usize) {
            match &mut entry.subs {
                Subs::One(h) => *h = to,
                Subs::Many(ids) => {
                    if let Some(h) = ids.get_mut(holder.at as usize) {
                        *h = to;
                    }
                }
            }
        }
        if let Some(h) = holders.holder(to) {
            *h = holder;
        }
    }

    /// Renumbers every handle through `map` (old handle → new), after the subscription set
    /// compacted its slots.
    pub(crate) fn renumber_handles(&mut self, map: &[Handle]) {
        let renumber = |h: &mut Handle| *h = map.get(*h as usize).copied().unwrap_or(*h);
        for entry in &mut self.filters {
            match &mut entry.subs {
                Subs::One(h) => renumber(h),
                Subs::Many(ids) => ids.iter_mut().for_each(renumber),
            }
        }
    }

    /// The heap bytes the set holds: its key table, tests (with their one-test programs, an
    /// estimate from their parts), equality index, filters, codes, subscriber lists and maps.
    /// Hash tables are counted by their buckets; allocator overhead is not counted.
    pub(crate) fn heap_bytes(&self) -> usize {
        let mut n = self.keys.heap_bytes()
            + self.code.capacity() * 4
            + self.filters.capacity() * size_of::<FilterEntry>()
            + self.tests.capacity() * size_of::<TestEntry>()
            + map_bytes(self.filter_ids.capacity(), size_of::<u32>())
            + map_bytes(self.identities.capacity(), size_of::<Known>())
            + map_bytes(self.test_ids.capacity(), size_of::<u32>())
            + self.test_text.capacity()
            + (self.always.capacity() + self.free_filters.capacity() + self.free_tests.capacity())
                * 4
            + self.str_index.heap_bytes(|_| 0)
            + self.num_index.heap_bytes(|_| 0)
            + self.anchor_str.heap_bytes(|_| 0)
            + self.anchor_num.heap_bytes(|_| 0);
        for f in &self.filters {
            n += f.required.len() * 4;
            if let Subs::Many(ids) = &f.subs {
                n += ids.capacity() * size_of::<Handle>();
            }
        }
        for t in &self.tests {
            n += t.text.len() + t.anchored.capacity() * size_of::<Posting>();
            n += (t.index_at.len() + t.anchor_at.len()) * 4;
            n += match &t.check {
                Check::StrEq(v) => v
                    .iter()
                    .map(|(_, s)| s.len() + size_of::<(u32, Box<str>)>())
                    .sum::<usize>(),
                Check::NumEq(v) => v.len() * 8,
                Check::Num(_, r) => r.len() * size_of::<Interval>(),
                Check::Program(p, pred) => program_bytes(p) + size_of::<Pred>() + pred_bytes(pred),
                Check::Shape(_) | Check::Free => 0,
            };
        }
        n
    }

    /// The live distinct filter a compiled filter with this `identity` was added as (never for
    /// 0).
    pub(crate) fn find_identity(&self, identity: u64) -> Option<u32> {
        if identity == 0 {
            return None;
        }
        let known = self
            .identities
            .find(self.hasher.hash_one(identity), |k| k.identity == identity)?;
        self.is_known(known).then_some(known.filter)
    }

    /// Whether `known` still finds its filter (the entry is in the use it was recorded for).
    fn is_known(&self, known: &Known) -> bool {
        self.filters
            .get(known.filter as usize)
            .is_some_and(|e| e.len != 0 && e.incarnation == known.incarnation)
    }

    /// Records that the compiled filter with `identity` (unless 0) is filter `f`.
    fn know(&mut self, f: u32, identity: u64) {
        let Some(incarnation) = self.filters.get(f as usize).map(|e| e.incarnation) else {
            return;
        };
        if identity == 0 {
            return;
        }
        // Bounded by twice the live filters: the records of freed filters go first; when that
        // is not enough (a filter compiled many times, each compile recorded), all go (a filter
        // added again is then found by its code, and recorded again). Amortized O(1) per record.
        let limit = 2 * self.distinct_filters() + 16;
        if self.identities.len() >= limit {
            let filters = &self.filters;
            self.identities.retain(|k| {
                filters
                    .get(k.filter as usize)
                    .is_some_and(|e| e.len != 0 && e.incarnation == k.incarnation)
            });
            if self.identities.len() > limit / 2 {
                self.identities.clear();
            }
        }
        let known = Known {
            identity,
            filter: f,
            incarnation,
        };
        let hasher = &self.hasher;
        match self.identities.entry(
            hasher.hash_one(identity),
            |k| k.identity == identity,
            |k| hasher.hash_one(k.identity),
        ) {
            hashbrown::hash_table::Entry::Occupied(mut old) => *old.get_mut() = known,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(known);
            }
        }
    }

    /// The distinct filter with this code, if there is one.
    fn find_filter(&self, hash: u64, code: &[u32]) -> Option<u32> {
        self.filter_ids
            .find(hash, |&f| {
                filter_hash(&self.filters, f) == hash && self.code_of(f) == code
            })
            .copied()
    }

    /// The code of filter `f` (empty for a freed one).
    pub(crate) fn code_of(&self, f: u32) -> &[u32] {
        self.filters
            .get(f as usize)
            .and_then(|e| self.code.get(e.start as usize..(e.start + e.len) as usize))
            .unwrap_or(&[])
    }

    /// Adds subscription `id` to the existing filter `f`.
    pub(crate) fn subscribe(&mut self, handle: Handle, f: u32, holders: &mut impl Holders) {
        let Some(entry) = self.filters.get_mut(f as usize) else {
            return;
        };
        let at = match &mut entry.subs {
            Subs::One(other) => {
                entry.subs = Subs::Many(vec![*other, handle]);
                1
            }
            Subs::Many(ids) => {
                ids.push(handle);
                idx(ids.len() - 1)
            }
        };
        if let Some(holder) = holders.holder(handle) {
            *holder = Holder { filter: f, at };
        }
        self.subscriptions += 1;
    }

    /// The canonical term of an IR node, interning its tests (new ones are listed in `new`).
    fn term(&mut self, node: &Node, new: &mut Vec<u32>) -> Result<Term, InsertError> {
        Ok(match &node.kind {
            NodeKind::True => Term::Const(true),
            NodeKind::False => Term::Const(false),
            NodeKind::Test(test) => {
                let (t, cost) = self.intern_test(Cow::Borrowed(test), new)?;
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

    /// Interns a test: its id and its cost class (0 indexed, 1 shape, 2 other). A test given
    /// owned (a saved set's) gives its key and values to the new entry instead of copies.
    fn intern_test(
        &mut self,
        test: Cow<'_, Test>,
        new: &mut Vec<u32>,
    ) -> Result<(u32, u8), InsertError> {
        self.test_text.clear();
        // Equality values are written as their check holds them, so tests that check the same
        // are one test, and a saved set's test ([`pred_of`]) is found again under its text.
        write_test_text(&mut self.test_text, &test.key, &canonical(&test.pred));
        let hash = self.hasher.hash_one(self.test_text.as_str());
        if let Some(&t) = self
            .test_ids
            .find(hash, |&t| test_text(&self.tests, t) == self.test_text)
        {
            let cost = self.tests.get(t as usize).map_or(2, |e| cost_of(&e.check));
            return Ok((t, cost));
        }
        let text: Box<str> = self.test_text.as_str().into();
        let t = match self.free_tests.pop() {
            Some(t) => t,
            None => {
                if self.tests.len() >= OPERAND as usize {
                    return Err(InsertError::Full);
                }
                self.tests.push(TestEntry::free());
                idx(self.tests.len() - 1)
            }
        };
        let Test { key, pred } = test.into_owned();
        let (slot, check) = match pred {
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                mut values,
            } => {
                let slot = self.keys.intern(key);
                values.sort_unstable();
                values.dedup();
                let mut with_ids: Vec<(u32, Arc<str>)> = values
                    .into_iter()
                    .map(|v| (self.keys.add_constant_shared(slot, &v), v))
                    .collect();
                with_ids.sort_unstable();
                (slot, Check::StrEq(with_ids.into_boxed_slice()))
            }
            Pred::Num {
                source: NumSource::NumberLeaf,
                ranges,
            } if is_points(&ranges) => {
                let mut bits: Vec<u64> = ranges.iter().map(|r| num_bits(r.lo)).collect();
                bits.sort_unstable();
                bits.dedup();
                (self.keys.intern(key), Check::NumEq(bits.into_boxed_slice()))
            }
            Pred::Num {
                source: source @ (NumSource::NumberLeaf | NumSource::Text),
                ranges,
            } => (
                self.keys.intern(key),
                Check::Num(source, ranges.into_boxed_slice()),
            ),
            Pred::Shape(shapes) => (self.keys.intern(key), Check::Shape(shapes)),
            pred => {
                let node = Node::test(key.clone(), pred.clone(), "");
                let check = match codegen::generate(&node) {
                    Ok(p) => Check::Program(Arc::new(p), Box::new(pred)),
                    // A bug (the verifier refused what codegen made): the slot taken above is
                    // free again, and the caller frees the tests interned before this one.
                    Err(e) => {
                        self.free_tests.push(t);
                        return Err(InsertError::Codegen(e.to_string()));
                    }
                };
                (self.keys.intern(key), check)
            }
        };
        let cost = cost_of(&check);
        let index_at = match &check {
            Check::StrEq(values) => self.str_index.insert(slot, str_ids(values), t),
            Check::NumEq(bits) => self.num_index.insert(slot, bits.iter().copied(), t),
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
                anchor_at: Box::default(),
                text,
                text_numbers,
            };
        }
        let (tests, hasher) = (&self.tests, &self.hasher);
        self.test_ids
            .insert_unique(hash, t, |&u| hasher.hash_one(test_text(tests, u)));
        new.push(t);
        Ok((t, cost))
    }

    /// The number of distinct filters using test `t`.
    fn refs(&self, t: u32) -> u32 {
        self.tests.get(t as usize).map_or(u32::MAX, |e| e.refs)
    }

    /// How often indexed test `t` is expected to hold for a message, as a fraction
    /// `(values, distinct)`: the number of values it accepts over the number of distinct values
    /// the set's equality tests on its key name. A test on a key of many values (a tenant) holds
    /// rarely; one on a key of few (a region), or accepting many of them, often. Values are taken
    /// as equally likely: the set never sees the traffic. `(1, 1)` for a test that is not indexed
    /// (not a candidate anchor).
    fn frequency(&self, t: u32) -> (u64, u64) {
        let Some(entry) = self.tests.get(t as usize) else {
            return (1, 1);
        };
        let (values, distinct) = match &entry.check {
            Check::StrEq(v) => (v.len(), self.str_index.distinct(entry.slot)),
            Check::NumEq(v) => (v.len(), self.num_index.distinct(entry.slot)),
            _ => (1, 1),
        };
        (values as u64, distinct.max(values).max(1) as u64)
    }

    /// Of `tests`, other than `except`, the one expected to hold least often
    /// ([`PolicySet::frequency`]); among equally frequent ones, the one the fewest filters use.
    fn rarest(&self, tests: &[u32], except: u32) -> Option<u32> {
        let mut best: Option<(u32, (u64, u64), u32)> = None;
        for &t in tests {
            if t == except {
                continue;
            }
            let (f, refs) = (self.frequency(t), self.refs(t));
            let better = match best {
                None => true,
                Some((_, (bv, bd), brefs)) => {
                    // f < best  <=>  f.0 / f.1 < bv / bd  <=>  f.0 · bd < bv · f.1.
                    let (l, r) = (
                        u128::from(f.0) * u128::from(bd),
                        u128::from(bv) * u128::from(f.1),
                    );
                    l < r || (l == r && refs < brefs)
                }
            };
            if better {
                best = Some((t, f, refs));
            }
        }
        best.map(|(t, _, _)| t)
    }

    /// Posts filter `f` on `anchor` (or in `always`), with the least used of its other required
    /// tests as its guard.
    fn attach(&mut self, f: u32, anchor: u32) {
        let required = self
            .filters
            .get(f as usize)
            .map_or(&[][..], |e| &e.required);
        let guard = self.rarest(required, anchor).unwrap_or(NO_GUARD);
        let posting = match self.tests.get_mut(anchor as usize) {
            Some(entry) if anchor != NO_ANCHOR => {
                entry.anchored.push(Posting { filter: f, guard });
                let at = entry.anchored.len() - 1;
                if at == 0 {
                    self.list_anchor(anchor);
                }
                at
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
                if entry.anchored.is_empty() {
                    self.unlist_anchor(anchor);
                }
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

    /// When the number of filters using test `t` reaches a power of two (from 16 on), moves each
    /// filter anchored on it to its rarest required test ([`PolicySet::rarest`]) and refreshes
    /// its guard: anchors chosen early, before the keys' numbers of distinct values were known,
    /// do not stay poor. Each list is revisited O(log n) times.
    fn rebalance(&mut self, t: u32) {
        let Some(entry) = self.tests.get(t as usize) else {
            return;
        };
        let refs = entry.refs;
        if refs < 16 || !refs.is_power_of_two() || entry.anchored.is_empty() {
            return;
        }
        let members: Vec<Posting> = entry.anchored.clone();
        for p in members {
            let required = self
                .filters
                .get(p.filter as usize)
                .map_or(&[][..], |e| &e.required);
            let Some(best) = self.rarest(required, NO_ANCHOR) else {
                continue;
            };
            let guard = self.rarest(required, best).unwrap_or(NO_GUARD);
            if best != t || guard != p.guard {
                self.detach(p.filter);
                self.attach(p.filter, best);
            }
        }
    }

    /// Chooses every filter's anchor and guard again ([`PolicySet::rarest`]), once as many
    /// distinct filters were added since the last time as half the set holds: the numbers of
    /// distinct values of the keys, on which the choice rests, have grown since the early filters
    /// chose. A pass costs O(distinct filters), so O(1) per added filter.
    fn reanchor(&mut self) {
        self.added = 0;
        for f in 0..idx(self.filters.len()) {
            let Some(entry) = self.filters.get(f as usize) else {
                continue;
            };
            if entry.len == 0 || entry.required.is_empty() {
                continue;
            }
            let (anchor, posting) = (entry.anchor, entry.posting);
            let Some(best) = self.rarest(&entry.required, NO_ANCHOR) else {
                continue;
            };
            let guard = self.rarest(&entry.required, best).unwrap_or(NO_GUARD);
            let current = self
                .tests
                .get(anchor as usize)
                .and_then(|t| t.anchored.get(posting as usize))
                .map(|p| p.guard);
            if best != anchor || current != Some(guard) {
                self.detach(f);
                self.attach(f, best);
            }
        }
    }

    /// Frees a distinct filter whose last subscription left, the tests only it used (with their
    /// index entries and keys), and compacts the set when the dead outweigh the live.
    fn free_filter(&mut self, f: u32, holders: &mut impl Holders) {
        self.detach(f);
        let Some(entry) = self.filters.get_mut(f as usize) else {
            return;
        };
        let (start, len, hash) = (entry.start, entry.len, entry.hash);
        *entry = FilterEntry::free();
        if let Ok(found) = self.filter_ids.find_entry(hash, |&x| x == f) {
            found.remove();
        }
        let code = self
            .code
            .get(start as usize..(start + len) as usize)
            .unwrap_or(&[]);
        for &t in distinct_tests(code).as_slice() {
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
            self.compact(holders);
        }
    }

    /// Lists indexed test `t` in the anchor index (a filter was just anchored on it).
    fn list_anchor(&mut self, t: u32) {
        let Some(entry) = self.tests.get(t as usize) else {
            return;
        };
        let at = match &entry.check {
            Check::StrEq(values) => self.anchor_str.insert(entry.slot, str_ids(values), t),
            Check::NumEq(bits) => self.anchor_num.insert(entry.slot, bits.iter().copied(), t),
            _ => return,
        };
        if let Some(entry) = self.tests.get_mut(t as usize) {
            entry.anchor_at = at;
        }
    }

    /// Takes test `t` out of the anchor index (no filter is anchored on it any more).
    fn unlist_anchor(&mut self, t: u32) {
        let Some(entry) = self.tests.get_mut(t as usize) else {
            return;
        };
        let at = std::mem::take(&mut entry.anchor_at);
        if at.is_empty() {
            return;
        }
        // Taken out while the tests that moved learn their positions (`t` is not one of them).
        let check = std::mem::replace(&mut entry.check, Check::Free);
        let slot = entry.slot;
        let moves = match &check {
            Check::StrEq(values) => self.anchor_str.remove(slot, &ids(values), &at),
            Check::NumEq(bits) => self.anchor_num.remove(slot, bits, &at),
            _ => Vec::new(),
        };
        self.fix_moves(&check, moves, true);
        if let Some(entry) = self.tests.get_mut(t as usize) {
            entry.check = check;
        }
    }

    /// Tells each test that moved in an index list (`anchors`: of the anchor index) when a test
    /// of check `leaving` left it, its new position.
    fn fix_moves(&mut self, leaving: &Check, moves: Vec<IndexMove>, anchors: bool) {
        for m in moves {
            let Some(moved) = self.tests.get_mut(m.test as usize) else {
                continue;
            };
            // The moved test holds the same value; find it among its own (sorted) values.
            let j = match (leaving, &moved.check) {
                (Check::StrEq(values), Check::StrEq(own)) => values
                    .get(m.value)
                    .and_then(|(id, _)| own.binary_search_by_key(id, |(i, _)| *i).ok()),
                (Check::NumEq(values), Check::NumEq(own)) => {
                    values.get(m.value).and_then(|v| own.binary_search(v).ok())
                }
                _ => None,
            };
            let positions = if anchors {
                &mut moved.anchor_at
            } else {
                &mut moved.index_at
            };
            if let Some(p) = j.and_then(|j| positions.get_mut(j)) {
                *p = m.at;
            }
        }
    }

    /// Frees test `t`: its index entries, its reference to its key, its interning entry.
    fn free_test(&mut self, t: u32) {
        // A test no filter reads anchors none; in case, it leaves the anchor index first.
        self.unlist_anchor(t);
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
        self.fix_moves(&check, moves, false);
        if let Check::StrEq(values) = &check {
            for (_, v) in values.iter() {
                self.keys.release_constant(slot, v);
            }
        }
        if text_numbers {
            self.keys.release_text_numbers(slot);
        }
        self.keys.release(slot);
        if let Ok(found) = self
            .test_ids
            .find_entry(self.hasher.hash_one(&*text), |&x| x == t)
        {
            found.remove();
        }
        let (tests, hasher) = (&self.tests, &self.hasher);
        let len = self.test_ids.len();
        if self.test_ids.capacity() > 16 && len * 4 < self.test_ids.capacity() {
            self.test_ids
                .shrink_to(len * 2, |&u| hasher.hash_one(test_text(tests, u)));
        }
        self.free_tests.push(t);
    }

    /// What a compaction keeps and rewrites: subscriptions, filters, tests, keys, dictionary
    /// constants, code words.
    fn live_weight(&self) -> usize {
        self.subscriptions
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
    fn compact(&mut self, holders: &mut impl Holders) {
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

        // Filters and their codes; the identities of freed filters are dropped.
        let old_filters = &self.filters;
        self.identities.retain(|k| {
            old_filters
                .get(k.filter as usize)
                .is_some_and(|e| e.len != 0 && e.incarnation == k.incarnation)
        });
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
                let mut renumbered: Vec<(u32, Arc<str>)> = std::mem::take(values)
                    .into_vec()
                    .into_iter()
                    .map(|(_, v)| (self.keys.constant_id(&v).unwrap_or(NO_ID), v))
                    .collect();
                renumbered.sort_unstable();
                *values = renumbered.into_boxed_slice();
                test.index_at = self.str_index.insert(test.slot, str_ids(values), idx(t));
            }
        }
        self.anchor_str = EqIndex::default();
        self.anchor_num = EqIndex::default();
        for (t, test) in tests.iter_mut().enumerate() {
            test.anchor_at = match &test.check {
                _ if test.anchored.is_empty() => Box::default(),
                Check::StrEq(values) => self.anchor_str.insert(test.slot, str_ids(values), idx(t)),
                Check::NumEq(bits) => {
                    self.anchor_num
                        .insert(test.slot, bits.iter().copied(), idx(t))
                }
                _ => Box::default(),
            };
        }

        // The maps.
        self.test_ids = HashTable::with_capacity(tests.len());
        for (t, test) in tests.iter().enumerate() {
            let hash = self.hasher.hash_one(&*test.text);
            self.test_ids.insert_unique(hash, idx(t), |&u| {
                self.hasher.hash_one(test_text(&tests, u))
            });
        }
        self.filter_ids = HashTable::with_capacity(filters.len());
        for (f, e) in filters.iter().enumerate() {
            self.filter_ids
                .insert_unique(e.hash, idx(f), |&g| filter_hash(&filters, g));
        }
        // The identities of live filters, renumbered (the entries keep their incarnations).
        for k in self.identities.iter_mut() {
            k.filter = renumber(&filter_map, k.filter);
        }
        self.identities
            .shrink_to_fit(|k| self.hasher.hash_one(k.identity));
        for (f, e) in filters.iter_mut().enumerate() {
            if let Subs::Many(ids) = &mut e.subs {
                ids.shrink_to_fit();
            }
            for &h in e.subs.as_slice() {
                if let Some(holder) = holders.holder(h) {
                    holder.filter = idx(f);
                }
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

/// A group's engine as a saved set ships it ([`PolicySet::parts`]): its live tests, in id
/// order, and its live distinct filters, whose codes read the tests by their position in that
/// list. Loading interns the tests in that order into an empty engine, so each gets its position
/// as its id, and the codes and their canonical order (children sorted by test id) hold as
/// written.
pub(crate) struct EngineParts {
    /// The live tests, in id order.
    pub(crate) tests: Vec<Test>,
    /// The live distinct filters, in id order: each one's code and required tests.
    pub(crate) filters: Vec<(Vec<u32>, Vec<u32>)>,
    /// Per filter id, its position in `filters` (`u32::MAX` for a freed id).
    pub(crate) filter_at: Vec<u32>,
}

/// Saving and loading (the set wire format, `crate::set_wire`).
impl PolicySet {
    /// The engine's tests and filters, renumbered densely (see [`EngineParts`]).
    pub(crate) fn parts(&self) -> EngineParts {
        let mut test_at = vec![GONE; self.tests.len()];
        let mut tests = Vec::with_capacity(self.distinct_tests());
        for (t, entry) in self.tests.iter().enumerate() {
            let (Some(pred), Some(key)) = (
                pred_of(&entry.check),
                self.keys.keys().get(entry.slot as usize),
            ) else {
                continue;
            };
            if let Some(at) = test_at.get_mut(t) {
                *at = idx(tests.len());
            }
            tests.push(Test {
                key: key.clone(),
                pred,
            });
        }
        let renumber = |t: u32| test_at.get(t as usize).copied().unwrap_or(GONE);
        let mut filter_at = vec![GONE; self.filters.len()];
        let mut filters = Vec::with_capacity(self.distinct_filters());
        for (f, entry) in self.filters.iter().enumerate() {
            if entry.len == 0 {
                continue;
            }
            let mut code = self.code_of(idx(f)).to_vec();
            map_code_tests(&mut code, renumber);
            let required = entry.required.iter().map(|&t| renumber(t)).collect();
            if let Some(at) = filter_at.get_mut(f) {
                *at = idx(filters.len());
            }
            filters.push((code, required));
        }
        EngineParts {
            tests,
            filters,
            filter_at,
        }
    }

    /// Makes room for a saved set's `tests` tests and `filters` filters of `words` code words.
    pub(crate) fn reserve(&mut self, tests: usize, filters: usize, words: usize) {
        self.tests.reserve_exact(tests);
        let (entries, hasher) = (&self.tests, &self.hasher);
        self.test_ids
            .reserve(tests, |&u| hasher.hash_one(test_text(entries, u)));
        self.filters.reserve_exact(filters);
        let entries = &self.filters;
        self.filter_ids
            .reserve(filters, |&g| filter_hash(entries, g));
        self.code.reserve_exact(words);
    }

    /// Interns a test of a saved set being loaded; its id.
    pub(crate) fn load_test(&mut self, test: Test) -> Result<u32, InsertError> {
        self.intern_test(Cow::Owned(test), &mut Vec::new())
            .map(|(t, _)| t)
    }

    /// Adds subscription `handle` with the filter whose code and required tests (ids of this
    /// engine) a saved set gives, once [`PolicySet::check_code`] accepted them; shares the
    /// distinct filter with that code when there is one.
    pub(crate) fn load_filter(
        &mut self,
        handle: Handle,
        code: &[u32],
        required: &[u32],
        holders: &mut impl Holders,
    ) -> Result<(), String> {
        self.check_code(code, required)?;
        self.add_code(
            handle,
            code,
            required.to_vec(),
            Vec::new(),
            0,
            holders,
            false,
        )
        .map_err(|e| e.to_string())
    }

    /// Once a saved set's filters are all loaded ([`PolicySet::load_filter`] leaves them in
    /// `always`): chooses each filter's anchor and guard once, from the whole set's numbers of
    /// distinct values — what a [`PolicySet::reanchor`] pass at the end of inserting them gives,
    /// without the passes and rebalancing inserting them one by one does on the way.
    pub(crate) fn anchor_loaded(&mut self) {
        self.added = 0;
        let waiting = std::mem::take(&mut self.always);
        // The choices rest on the tests' values and filter counts only, not on the postings: all
        // are made first, so that each anchor's list is allocated once, at its size.
        let anchors: Vec<u32> = waiting
            .iter()
            .map(|&f| {
                self.filters
                    .get(f as usize)
                    .and_then(|e| self.rarest(&e.required, NO_ANCHOR))
                    .unwrap_or(NO_ANCHOR)
            })
            .collect();
        let mut sizes = vec![0u32; self.tests.len()];
        let mut unanchored = 0;
        for &a in &anchors {
            match sizes.get_mut(a as usize) {
                Some(n) => *n += 1,
                None => unanchored += 1,
            }
        }
        for (entry, &n) in self.tests.iter_mut().zip(&sizes) {
            entry.anchored.reserve_exact(n as usize);
        }
        self.always.reserve_exact(unanchored);
        for (f, anchor) in waiting.into_iter().zip(anchors) {
            self.attach(f, anchor);
        }
    }

    /// Adds subscription `handle` of a saved set to its existing filter `f`, which `expected`
    /// subscriptions hold in all: the filter's subscriber list is allocated once, at that size.
    pub(crate) fn load_subscriber(
        &mut self,
        handle: Handle,
        f: u32,
        holders: &mut impl Holders,
        expected: usize,
    ) {
        if let Some(entry) = self.filters.get_mut(f as usize)
            && let Subs::One(first) = entry.subs
        {
            let mut ids = Vec::with_capacity(expected.max(2));
            ids.push(first);
            entry.subs = Subs::Many(ids);
        }
        self.subscribe(handle, f, holders);
    }

    /// Whether some test is read by no filter (a saved set lists only tests its filters read).
    pub(crate) fn has_unused_tests(&self) -> bool {
        self.tests
            .iter()
            .any(|t| !matches!(t.check, Check::Free) && t.refs == 0)
    }

    /// The code [`PolicySet::add`] gives the filter whose optimized IR is `ir` (its tests are
    /// interned; a test new to the engine stays unused).
    pub(crate) fn code_for(&mut self, ir: &Node) -> Result<Vec<u32>, InsertError> {
        let term = self.term(ir, &mut Vec::new())?;
        Ok(filter_code(&term))
    }

    /// Checks a filter code read from a saved set, so that running it is bounded and gives what
    /// the code the writer ran gives: every word well formed, every test it reads one of this
    /// engine's, read as indexed exactly when it is (`OP_MARKED`, `IDX`), jumps forward within
    /// the code, and each required test an indexed test without which the
    /// code cannot hold (so anchoring the filter on it skips it only when it cannot match).
    fn check_code(&self, code: &[u32], required: &[u32]) -> Result<(), String> {
        let indexed = |t: u32| match self.tests.get(t as usize) {
            Some(entry) if !matches!(entry.check, Check::Free) => Ok(cost_of(&entry.check) == 0),
            _ => Err(format!(
                "a filter reads test {t}, which its group does not have"
            )),
        };
        let Some((&head, rest)) = code.split_first() else {
            return Err("a filter has an empty code".into());
        };
        if code.len() > OPERAND as usize {
            return Err("a filter code is too long".into());
        }
        if head >> 29 == OP_CONJ {
            if head & OPERAND != idx(rest.len()) {
                return Err("a conjunction's length is not its number of words".into());
            }
            for &w in rest {
                if w & (1 << 29) != 0 || indexed(w & OPERAND)? != (w & IDX != 0) {
                    return Err(format!(
                        "a conjunct word {w:#x} does not match its test's kind"
                    ));
                }
            }
            for &r in required {
                if r > OPERAND || !rest.contains(&(r | IDX)) {
                    return Err(format!("test {r} is not a required conjunct of its filter"));
                }
            }
            return Ok(());
        }
        let last = code.len() - 1;
        for (pc, &w) in code.iter().enumerate() {
            let operand = w & OPERAND;
            let fine = match w >> 29 {
                OP_TEST => !indexed(operand)?,
                OP_MARKED => indexed(operand)?,
                OP_NOT => operand == 0,
                OP_CONST => operand <= 1,
                OP_JF | OP_JT => operand as usize > pc && operand as usize <= last,
                OP_END => operand == 0 && pc == last,
                _ => false,
            };
            if !fine {
                return Err(format!("word {pc} ({w:#x}) of a filter code is malformed"));
            }
        }
        if code.last().map(|w| w >> 29) != Some(OP_END) {
            return Err("a filter code does not end".into());
        }
        for &r in required {
            if !indexed(r)? || !false_without(code, r) {
                return Err(format!("test {r} is not required by its filter"));
            }
        }
        Ok(())
    }
}

/// Whether accumulator code (checked by [`PolicySet::check_code`]) can only end false when test
/// `r` does not hold. Every path is followed at once, with the set of values the accumulator may
/// have at each word, `r` false and any other test either way: a reading that forgets that two
/// readings of one test agree only adds paths, so "only false" is never claimed wrongly. Codes
/// jump forward only, so one pass in order sees every way into a word before the word.
fn false_without(code: &[u32], r: u32) -> bool {
    const F: u8 = 1;
    const T: u8 = 2;
    let mut at = vec![0u8; code.len() + 1];
    if let Some(first) = at.first_mut() {
        *first = F;
    }
    let mut ends = 0u8;
    for (pc, &w) in code.iter().enumerate() {
        let s = at.get(pc).copied().unwrap_or(0);
        if s == 0 {
            continue;
        }
        let operand = w & OPERAND;
        let next = match w >> 29 {
            OP_TEST | OP_MARKED if operand == r => F,
            OP_TEST | OP_MARKED => F | T,
            OP_NOT => ((s & F) << 1) | ((s & T) >> 1),
            OP_CONST if operand != 0 => T,
            OP_CONST => F,
            op @ (OP_JF | OP_JT) => {
                let jumps = if op == OP_JF { F } else { T };
                if let Some(target) = at.get_mut(operand as usize) {
                    *target |= s & jumps;
                }
                s & !jumps
            }
            _ => {
                ends |= s;
                continue;
            }
        };
        if let Some(n) = at.get_mut(pc + 1) {
            *n |= next;
        }
    }
    ends |= at.last().copied().unwrap_or(0);
    ends & T == 0
}

/// Writes a test's interning text, `(key predicate)`: exactly what `write!(out, "({key} {pred})")`
/// writes, with the most common tests (a key of one name and a string comparison whose texts need
/// no escaping) written directly, without the formatting machinery.
fn write_test_text(out: &mut String, key: &filtervm_vm::key::Key, pred: &Pred) {
    use filtervm_vm::key::Key;
    /// Written as is between quotes by [`filtervm_vm::json::Quoted`].
    fn plain(s: &str) -> bool {
        !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
    }
    fn quoted(out: &mut String, s: &str) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
    let key_parts = match key {
        Key::AttributeText(n) => Some(("attr-text ", Some(n))),
        Key::AttributeTyped(n) => Some(("attr ", Some(n))),
        Key::AnyAttribute => Some(("any-attribute", None)),
        Key::Header(n) => Some(("header ", Some(n))),
        Key::BodyPath(p) => Some(("body ", Some(p))),
        Key::BodyPathEach(p) => Some(("body-each ", Some(p))),
        Key::FieldPath(p, u32::MAX) => Some(("field ", Some(p))),
        Key::BodyIsObject => Some(("body-is-object", None)),
        Key::EventMember(n) => Some(("event ", Some(n))),
        Key::FieldPath(..) | Key::EventData(_) => None,
    };
    if let (Some((kind, name)), Pred::Str { op, case, values }) = (key_parts, pred)
        && name.is_none_or(|n| plain(n))
        && values.iter().all(|v| plain(v))
    {
        out.push('(');
        out.push_str(kind);
        if let Some(name) = name {
            quoted(out, name);
        }
        out.push_str(match op {
            StrOp::Eq => " str-eq",
            StrOp::Prefix => " str-prefix",
            StrOp::Suffix => " str-suffix",
            StrOp::Contains => " str-contains",
        });
        if *case == Case::Fold {
            out.push_str("-fold");
        }
        out.push_str(" [");
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            quoted(out, v);
        }
        out.push_str("])");
        return;
    }
    // Writing to a `String` cannot fail.
    let _ = write!(out, "({key} {pred})");
}

/// A predicate as its test's check holds it: string-equality values sorted and distinct, numeric
/// points sorted and distinct with `-0` as `0` (what [`pred_of`] gives back).
fn canonical(pred: &Pred) -> std::borrow::Cow<'_, Pred> {
    use std::borrow::Cow;
    match pred {
        Pred::Str {
            op: StrOp::Eq,
            case: Case::Sensitive,
            values,
        } if !values.is_sorted_by(|a, b| a < b) => {
            let mut values = values.clone();
            values.sort_unstable();
            values.dedup();
            Cow::Owned(Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values,
            })
        }
        Pred::Num {
            source: NumSource::NumberLeaf,
            ranges,
        } if is_points(ranges)
            && !(ranges.is_sorted_by(|a, b| a.lo < b.lo)
                && ranges.iter().all(|r| r.lo.to_bits() == num_bits(r.lo))) =>
        {
            let mut points: Vec<f64> = ranges
                .iter()
                .map(|r| f64::from_bits(num_bits(r.lo)))
                .collect();
            points.sort_unstable_by(f64::total_cmp);
            points.dedup();
            Cow::Owned(Pred::Num {
                source: NumSource::NumberLeaf,
                ranges: points.into_iter().map(Interval::point).collect(),
            })
        }
        other => Cow::Borrowed(other),
    }
}

/// Whether intervals are all single finite points (a numeric equality test).
fn is_points(ranges: &[Interval]) -> bool {
    !ranges.is_empty()
        && ranges
            .iter()
            .all(|r| r.lo == r.hi && r.lo_inclusive && r.hi_inclusive && r.lo.is_finite())
}

/// The predicate a test's check was made from (`None` for a freed test). String and numeric
/// equality give their values sorted, as lowering writes them.
fn pred_of(check: &Check) -> Option<Pred> {
    Some(match check {
        Check::StrEq(values) => {
            let mut values: Vec<Arc<str>> = values.iter().map(|(_, v)| v.clone()).collect();
            values.sort_unstable();
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values,
            }
        }
        Check::NumEq(bits) => {
            let mut points: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
            points.sort_unstable_by(f64::total_cmp);
            Pred::Num {
                source: NumSource::NumberLeaf,
                ranges: points.into_iter().map(Interval::point).collect(),
            }
        }
        Check::Num(source, ranges) => Pred::Num {
            source: *source,
            ranges: ranges.to_vec(),
        },
        Check::Shape(shapes) => Pred::Shape(*shapes),
        Check::Program(_, pred) => (**pred).clone(),
        Check::Free => return None,
    })
}

/// An estimate of the heap bytes a predicate holds (its value lists and intervals).
fn pred_bytes(pred: &Pred) -> usize {
    let strings = |v: &[Arc<str>]| {
        v.iter()
            .map(|s| s.len() + size_of::<Box<str>>())
            .sum::<usize>()
    };
    match pred {
        Pred::Str { values, .. } | Pred::NumText(values) => strings(values),
        Pred::Num { ranges, .. } => ranges.len() * size_of::<Interval>(),
        Pred::Dec(ranges) => ranges.len() * size_of::<filtervm_vm::program::DecInterval>(),
        Pred::Except(preds) => preds
            .iter()
            .map(|p| size_of::<Pred>() + pred_bytes(p))
            .sum(),
        _ => 0,
    }
}

/// An estimate of the heap bytes of a one-test program, from its parts (its decision plan, a
/// step or two, is counted as 64 bytes).
fn program_bytes(p: &Program) -> usize {
    let parts = p.parts();
    let pools = &parts.pools;
    let strings = |v: &[Arc<str>]| {
        v.iter()
            .map(|s| s.len() + size_of::<Box<str>>())
            .sum::<usize>()
    };
    size_of::<Program>()
        + 64
        + parts.keys.heap_bytes()
        + parts.code.capacity() * size_of::<filtervm_vm::op::Inst>()
        + parts.origins.capacity() * 4
        + parts
            .sources
            .iter()
            .map(|s| s.len() + size_of::<std::sync::Arc<str>>())
            .sum::<usize>()
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
                let table = match s {
                    StrSet::Few(members) => members.len() * size_of::<Arc<str>>(),
                    StrSet::Many(members) => map_bytes(members.capacity(), size_of::<Box<str>>()),
                };
                table + s.iter().map(|x| x.len()).sum::<usize>()
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
fn str_ids(values: &[(u32, Arc<str>)]) -> impl ExactSizeIterator<Item = u32> + '_ {
    values.iter().map(|(id, _)| *id)
}

/// [`str_ids`], collected.
fn ids(values: &[(u32, Arc<str>)]) -> Vec<u32> {
    values.iter().map(|(id, _)| *id).collect()
}

/// Whether a check reads its slot's string leaves as numbers.
fn reads_text_numbers(check: &Check) -> bool {
    match check {
        Check::Num(NumSource::Text, _) => true,
        Check::Program(p, _) => p.code().iter().any(|i| matches!(i, Inst::TextNumIn { .. })),
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

/// The distinct test ids of a code ([`distinct_tests`]), sorted: held inline when there are at
/// most [`FEW_TESTS`] (most filters read a handful), so adding or freeing a filter allocates
/// nothing for them.
enum TestIds {
    Few([u32; FEW_TESTS], usize),
    Many(Vec<u32>),
}

const FEW_TESTS: usize = 16;

impl TestIds {
    fn as_slice(&self) -> &[u32] {
        match self {
            TestIds::Few(ids, n) => ids.get(..*n).unwrap_or(&[]),
            TestIds::Many(ids) => ids,
        }
    }
}

/// The distinct test ids a code reads, sorted.
fn distinct_tests(code: &[u32]) -> TestIds {
    let conj = is_conj(code);
    let tests = code
        .iter()
        .enumerate()
        .filter(|&(i, &w)| is_test_word(conj, i, w))
        .map(|(_, &w)| w & OPERAND);
    let mut few = [0u32; FEW_TESTS];
    let mut n = 0;
    for t in tests.clone() {
        let Some(slot) = few.get_mut(n) else {
            let mut many: Vec<u32> = tests.collect();
            many.sort_unstable();
            many.dedup();
            return TestIds::Many(many);
        };
        *slot = t;
        n += 1;
    }
    if let Some(ids) = few.get_mut(..n) {
        ids.sort_unstable();
    }
    // Keep the first of each run of equal ids.
    let (mut kept, mut last) = (0, None);
    for i in 0..n {
        let Some(&id) = few.get(i) else {
            break;
        };
        if last != Some(id) {
            if let Some(slot) = few.get_mut(kept) {
                *slot = id;
            }
            kept += 1;
            last = Some(id);
        }
    }
    TestIds::Few(few, kept)
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

/// What matching messages keeps between them (apart from the bindings): the per-test verdicts of
/// the current row, the per-filter stamps of the current message. One serves every group of a
/// subscription set in turn: its entries are stamps, so an entry left by another group is stale,
/// never wrong.
#[derive(Debug, Default)]
pub(crate) struct MatchState {
    /// Per test: `epoch << 1 | verdict` when checked for the current row.
    memo: Vec<u32>,
    epoch: u32,
    /// Per filter: the message stamp when it last matched (so a match across rows counts once).
    matched: Vec<u32>,
    stamp: u32,
    marked: Vec<u32>,
    /// Distinct filters evaluated since the caller last reset it.
    pub(crate) evaluations: usize,
}

impl MatchState {
    /// Sizes the buffers for sets of at most `tests` tests and `filters` filters (the largest
    /// group's): grown as needed, cut back when they are four times too large.
    pub(crate) fn prepare(&mut self, tests: usize, filters: usize) {
        fit(&mut self.memo, tests);
        fit(&mut self.matched, filters);
    }

    /// Appends to `out` the subscriptions of `set` whose filter matches `bound` (a message bound
    /// to `set.keys()`), each once, in no particular order. Prepared for the largest group
    /// ([`MatchState::prepare`]), the buffers need not grow here.
    pub(crate) fn matching(&mut self, set: &PolicySet, bound: &Bound<'_>, out: &mut Vec<Handle>) {
        if self.memo.len() < set.tests.len() {
            self.memo.resize(set.tests.len(), 0);
        }
        if self.matched.len() < set.filters.len() {
            self.matched.resize(set.filters.len(), 0);
        }
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
                for p in &test.anchored {
                    if p.guard != NO_GUARD && !self.test(set, p.guard, bound, row) {
                        continue;
                    }
                    self.consider(set, p.filter, bound, row, message_stamp, out);
                }
            }
            for &f in &set.always {
                self.consider(set, f, bound, row, message_stamp, out);
            }
        }
    }

    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.matched.iter_mut().for_each(|m| *m = 0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Marks every test of the anchor index that holds on the row `slots` (and lists them in
    /// `marked`): string leaves by the dictionary id binding gave them, number leaves by value.
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
        for (&slot, index) in &set.anchor_str.by_slot {
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
        for (&slot, index) in &set.anchor_num.by_slot {
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
    fn consider(
        &mut self,
        set: &PolicySet,
        f: u32,
        bound: &Bound<'_>,
        row: usize,
        msg_stamp: u32,
        out: &mut Vec<Handle>,
    ) {
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
        self.evaluations += 1;
        if self.run(set, code, bound, row) {
            if let Some(m) = self.matched.get_mut(fi) {
                *m = msg_stamp;
            }
            out.extend_from_slice(entry.subs.as_slice());
        }
    }

    /// Runs a filter's code: one accumulator, forward jumps only.
    fn run(&mut self, set: &PolicySet, code: &[u32], bound: &Bound<'_>, row: usize) -> bool {
        if let Some((&head, conjuncts)) = code.split_first()
            && head >> 29 == OP_CONJ
        {
            for &w in conjuncts {
                if self.test(set, w & OPERAND, bound, row) == (w & NEG != 0) {
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
                OP_MARKED | OP_TEST => acc = self.test(set, operand, bound, row),
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
    #[inline(always)]
    fn test(&mut self, set: &PolicySet, t: u32, bound: &Bound<'_>, row: usize) -> bool {
        let Some(&m) = self.memo.get(t as usize) else {
            return false;
        };
        if m >> 1 == self.epoch {
            return m & 1 == 1;
        }
        self.decide(set, t, bound, row)
    }

    /// [`MatchState::test`] for a test not yet checked on this row: checks and records it.
    #[inline(never)]
    fn decide(&mut self, set: &PolicySet, t: u32, bound: &Bound<'_>, row: usize) -> bool {
        let epoch = self.epoch << 1;
        let Some(test) = set.tests.get(t as usize) else {
            return false;
        };
        let slot = bound.slot(row, test.slot as usize);
        let verdict = match &test.check {
            // Indexed tests that anchor a filter and hold were marked; the others are decided
            // here from the ids and numbers binding gave the slot's leaves, as marking would.
            Check::StrEq(values) => slot.leaves().any(|l| {
                let id = l.eq_id();
                id != NO_ID && values.binary_search_by_key(&id, |(i, _)| *i).is_ok()
            }),
            Check::NumEq(bits) => slot.leaves().any(|l| {
                l.as_f64()
                    .is_some_and(|x| bits.binary_search(&num_bits(x)).is_ok())
            }),
            Check::Free => false,
            Check::Shape(shapes) => shapes.has(slot.shape),
            Check::Num(NumSource::NumberLeaf, ranges) => slot.leaves().any(|l| {
                l.as_f64()
                    .is_some_and(|x| ranges.iter().any(|r| r.contains(x)))
            }),
            // Comparable numbers (EB-17) are checked by a program (`Check::Program`).
            Check::Num(NumSource::Comparable, _) => false,
            Check::Num(NumSource::Text, ranges) => slot.leaves().any(|l| {
                l.as_str().is_some() && {
                    let x = l.text_number();
                    ranges.iter().any(|r| r.contains(x))
                }
            }),
            Check::Program(p, _) => {
                exec::eval_test(p.verified(), 0, bound, row, test.slot as usize)
            }
        };
        if let Some(m) = self.memo.get_mut(t as usize) {
            *m = epoch | u32::from(verdict);
        }
        verdict
    }
}

/// Sizes a per-test or per-filter buffer of a [`MatchState`] for a set of `n` of them: grown to
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

    /// Holders for a bare engine: one per handle.
    struct Held(Vec<Holder>);

    impl Holders for Held {
        fn holder(&mut self, handle: Handle) -> Option<&mut Holder> {
            self.0.get_mut(handle as usize)
        }
    }

    /// `key == value`, as a header test.
    fn equals(key: &str, value: &str) -> Node {
        Node::test(
            filtervm_vm::key::Key::Header(key.into()),
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values: vec![value.into()],
            },
            "",
        )
    }

    #[test]
    fn a_filter_added_again_under_its_identity_is_found_without_its_ir() {
        let (a, b) = (equals("a", "x"), equals("b", "y"));
        let mut set = PolicySet::new();
        let mut held = Held(vec![Holder::default(); 16]);
        set.add(0, &a, 7, &mut held).unwrap();
        // Identity 7 names `a`'s compile: `b`'s IR under it is not read (one identity is one
        // compile, so a caller never gives another IR under it).
        set.add(1, &b, 7, &mut held).unwrap();
        assert_eq!((set.distinct_filters(), set.distinct_tests()), (1, 1));
        assert_eq!(held.0[1].filter, held.0[0].filter);
        // With its last subscriber gone, the filter and its identity are forgotten.
        set.remove(0, &mut held);
        set.remove(1, &mut held);
        assert_eq!(set.distinct_filters(), 0);
        set.add(2, &b, 7, &mut held).unwrap();
        set.add(3, &a, 0, &mut held).unwrap();
        assert_eq!((set.distinct_filters(), set.distinct_tests()), (2, 2));
        // A filter found by its code is found by each identity it was given.
        set.add(4, &a, 9, &mut held).unwrap();
        set.add(5, &a, 10, &mut held).unwrap();
        assert_eq!(held.0[4].filter, held.0[3].filter);
        assert_eq!(held.0[5].filter, held.0[3].filter);
        for (h, identity) in [(6, 9), (7, 10)] {
            set.add(h, &b, identity, &mut held).unwrap();
            assert_eq!(held.0[h as usize].filter, held.0[3].filter);
        }
        assert_eq!(set.distinct_filters(), 2);
        // Compacting keeps the identities of live filters (renumbered) and drops the others:
        // freeing `b`'s filter (identity 7) makes room for a new filter in its entry.
        set.remove(2, &mut held);
        set.compact(&mut held);
        set.add(8, &equals("c", "z"), 10, &mut held).unwrap();
        assert_eq!(held.0[8].filter, held.0[3].filter);
        assert_eq!((set.distinct_filters(), set.len()), (1, 6));
        set.add(9, &b, 7, &mut held).unwrap();
        assert_eq!(set.distinct_filters(), 2);
        assert_ne!(held.0[9].filter, held.0[3].filter);
    }

    #[test]
    fn a_test_codegen_refuses_is_an_error_and_leaves_the_set_as_it_was() {
        // No policy lowers to a NaN bound; the verifier refuses one (a bug, were it made).
        let nan = Node::test(
            filtervm_vm::key::Key::Header("n".into()),
            Pred::Num {
                source: NumSource::Comparable,
                ranges: vec![Interval {
                    lo: f64::NAN,
                    ..Interval::ALL
                }],
            },
            "",
        );
        let bad = Node::and(vec![equals("a", "x"), nan], "");
        let mut set = PolicySet::new();
        let mut held = Held(vec![Holder::default(); 4]);
        let e = set.add(0, &bad, 0, &mut held).unwrap_err();
        assert!(
            matches!(&e, InsertError::Codegen(m) if m.contains("NaN")),
            "{e}"
        );
        assert_eq!(e.code(), Some(ErrorCode::InternalCodegen));
        assert_eq!((set.distinct_filters(), set.distinct_tests()), (0, 0));
        // The slots it took are reused: the next filter's test is the only one.
        set.add(1, &equals("a", "x"), 0, &mut held).unwrap();
        assert_eq!((set.distinct_filters(), set.distinct_tests()), (1, 1));
        assert_eq!(
            set.tests.len(),
            2,
            "the two slots the refused filter took, reused"
        );
    }

    #[test]
    fn identity_records_stay_within_twice_the_filters() {
        let a = equals("a", "x");
        let mut set = PolicySet::new();
        let mut held = Held(vec![Holder::default(); 1000]);
        // One filter compiled 999 times (a cache forgetting its text): each compile is recorded,
        // at most 2 + 16 at a time, and the latest is always found.
        for h in 0..1000u32 {
            set.add(h, &a, u64::from(h) + 1, &mut held).unwrap();
            assert!(set.identities.len() <= 18, "{}", set.identities.len());
            assert_eq!(set.find_identity(u64::from(h) + 1), Some(held.0[0].filter));
        }
        assert_eq!((set.distinct_filters(), set.len()), (1, 1000));
    }

    #[test]
    fn distinct_tests_are_sorted_and_distinct_however_many() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for len in 0..40 {
            for _ in 0..20 {
                // A conjunction of `len` words over a few test ids (so some repeat).
                let mut code = vec![word(OP_CONJ, idx(len))];
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    code.push((x % 24) as u32 | if x & 1 << 40 != 0 { NEG } else { 0 });
                }
                let mut expected: Vec<u32> = code[1..].iter().map(|w| w & OPERAND).collect();
                expected.sort_unstable();
                expected.dedup();
                assert_eq!(distinct_tests(&code).as_slice(), expected, "{code:?}");
            }
        }
    }

    #[test]
    fn test_texts_written_directly_are_the_formatted_ones() {
        use filtervm_vm::key::Key;
        let keys = [
            Key::AttributeText("a".into()),
            Key::AttributeTyped("event".into()),
            Key::AnyAttribute,
            Key::Header("re\"gion".into()),
            Key::BodyPath("a.b".into()),
            Key::BodyPathEach("x\\y".into()),
            Key::FieldPath("detail.n".into(), u32::MAX),
            Key::FieldPath("detail.n".into(), 2),
            Key::BodyIsObject,
            Key::EventMember("subject".into()),
            Key::EventData(vec!["d".into(), "e".into()].into()),
        ];
        let values: [&[&str]; 5] = [&[], &["paid"], &["a", "b c", "é"], &["new\nline"], &["q\""]];
        let mut preds = vec![Pred::Shape(Shapes::PRESENT), Pred::Bool(true)];
        for op in [StrOp::Eq, StrOp::Prefix, StrOp::Suffix, StrOp::Contains] {
            for case in [Case::Sensitive, Case::Fold] {
                for v in values {
                    preds.push(Pred::Str {
                        op,
                        case,
                        values: v.iter().map(|&s| s.into()).collect(),
                    });
                }
            }
        }
        for key in &keys {
            for pred in &preds {
                let mut out = String::new();
                write_test_text(&mut out, key, pred);
                assert_eq!(out, format!("({key} {pred})"));
            }
        }
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

    #[test]
    fn a_saved_required_test_must_be_one_the_code_cannot_hold_without() {
        let t = |c, id| Term::Test(c, id);
        let or = filter_code(&Term::Or(vec![t(0, 1), t(0, 2)]));
        assert!(!false_without(&or, 1) && !false_without(&or, 2));
        let and = Term::And(vec![t(0, 1), Term::Or(vec![t(0, 2), t(2, 3)])]);
        let code = filter_code(&and);
        assert!(!is_conj(&code), "accumulator code");
        assert!(false_without(&code, 1));
        assert!(!false_without(&code, 2) && !false_without(&code, 3));
        assert!(!false_without(
            &filter_code(&Term::Not(4, Box::new(and))),
            1
        ));
        assert!(!false_without(&filter_code(&Term::Const(true)), 1));
        assert!(false_without(&filter_code(&Term::Const(false)), 1));
    }
}

//! [`SubscriptionSet`]: every subscription of a topic, of any dialect and options, matched
//! against each message at once; [`LiveSet`]: the same, updated while other threads match.
//!
//! A subscription is an id of the embedder's own type (`String`, `u64`, a struct: anything
//! `Eq + Hash + Clone`, like quamina's `Quamina<X>`) and a compiled [`Filter`]. The set keeps
//! what matching needs, not the filter itself:
//!
//! - **groups**: filters of one dialect and one options value form a group with one key table, so
//!   a message is read and bound once per group, from the part of the message its dialect reads
//!   ([`MessagePart::of`]: the JSON body's bytes once per body group, attributes and headers
//!   borrowed);
//! - **interning**: identical filters (the same dialect, options and optimized IR, `and`/`or`
//!   children in any order, as [`FilterIdentity`](crate::intern::FilterIdentity) has it) are
//!   stored and evaluated once per message however many ids subscribe to them, and identical
//!   tests are checked once per message whatever the number of filters reading them;
//! - **indexing**: equality tests are looked up by the values the message holds, and each filter
//!   is only evaluated when a test it cannot match without holds — so the work follows the
//!   message, not the number of subscriptions;
//! - **incremental**: [`SubscriptionSet::insert`] and [`SubscriptionSet::remove`] change one
//!   subscription, and what nobody uses any more (keys, tests, index entries, memory) is released:
//!   removal costs O(size of the removed filter), amortized, and a set that went through any
//!   churn holds about what a fresh set of the same subscriptions holds.
//!
//! ```
//! use filtervm_compiler::{compile_text, Dialect, MessageParts, Options, SetScratch, SnsScope,
//!     SubscriptionSet};
//! use filtervm_vm::message::AttributeType;
//!
//! let mut set = SubscriptionSet::new();
//! let sns = |policy| compile_text(Dialect::Sns, policy, &Options::from(Dialect::Sns)).unwrap();
//! set.insert("billing", &sns(r#"{"event": ["order.paid"]}"#)).unwrap();
//! set.insert("audit", &sns(r#"{"event": ["order.paid"]}"#)).unwrap(); // stored once
//! let body = Options::from(SnsScope::MessageBody);
//! set.insert("big", &compile_text(Dialect::Sns, r#"{"total": [{"numeric": [">", 100]}]}"#, &body)
//!     .unwrap()).unwrap();
//! set.insert("eu", &compile_text(Dialect::Stream, "region = eu-*", &Options::Stream).unwrap())
//!     .unwrap();
//!
//! let attributes = [("event", AttributeType::String, "order.paid")];
//! let headers = [("region", "eu-west")];
//! let message = MessageParts::body(br#"{"total": 250}"#)
//!     .with_attributes(&attributes[..])
//!     .with_headers(&headers[..]);
//! let mut scratch = SetScratch::new(); // one per thread: no allocation per message once warm
//! let matches = set.matching(&mut scratch, &message);
//! assert_eq!(matches.ids().copied().collect::<Vec<_>>(), ["billing", "audit", "big", "eu"]);
//!
//! // A message without headers: the stream subscriptions cannot judge it, and say so.
//! let message = MessageParts::body(br#"{"total": 5}"#).with_attributes(&attributes[..]);
//! let matches = set.matching(&mut scratch, &message);
//! assert_eq!(matches.ids().copied().collect::<Vec<_>>(), ["billing", "audit"]);
//! let unjudged: Vec<_> = matches.unjudged().collect();
//! assert_eq!((unjudged[0].subscriptions, unjudged[0].error.code.as_str()), (1, "MESSAGE_SHAPE"));
//! assert!(set.try_matching(&mut scratch, &message).is_err());
//! ```
//!
//! # What a message that does not fit gives
//!
//! Never a quiet "no match". A group whose part the message lacks, or that cannot judge it (an
//! Event Grid event that is not JSON, an SNS body with more combinations of array elements than
//! binding allows), is reported by [`Matches::unjudged`] with the error
//! ([`ErrorCode::MessageShape`] with a hint naming the likely fix, [`ErrorCode::MessageNotJson`],
//! [`ErrorCode::MessageTooComplex`]) and the number of subscriptions concerned, and
//! [`SubscriptionSet::try_matching`] makes any such group an error. An SNS body that is not JSON
//! keeps its dialect meaning: it is a verdict (it matches only policies that read nothing from the
//! body), as [`Evaluator::matches_parts`](crate::Evaluator::matches_parts) gives.
//!
//! # Live updates
//!
//! A [`LiveSet`] holds two copies of a set. Readers load the published one (a few atomic
//! operations, never a lock) and match; a writer applies each change to the other copy, which no
//! reader can see, publishes it with one atomic swap, and brings the now hidden copy up to date
//! at its next change. See [`LiveSet`] for the guarantees.

use crate::dialect::eventbridge::exact::Pattern;
use crate::error::{ErrorCode, MessageError};
use crate::parts::{
    MessagePart, MessageParts, NO_ATTRIBUTES, NO_HEADERS, SelectedPart, Unread, missing_part_error,
};
use crate::set::{Handle, Holder, Holders, InsertError, MatchState, PolicySet};
use crate::{Dialect, Filter, MessageShape, Options};
use arc_swap::ArcSwap;
use filtervm_vm::bind::{Bindings, Bound, Judgement, map_bytes};
use filtervm_vm::json::ReadMode;
use filtervm_vm::key::Key;
use filtervm_vm::message::{Attributes, Headers, Message};
use hashbrown::HashTable;
use std::borrow::{Borrow, Cow};
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::mem::size_of;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What [`SubscriptionSet::insert`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insertion {
    /// The id was new.
    Added,
    /// The id was there: its filter was replaced, and it keeps its place in the set's order.
    Replaced,
}

/// The most subscription slots a set holds at once (handles are `u32`, one is kept free for a
/// replacement in progress).
const MAX_SLOTS: usize = u32::MAX as usize - 1;

/// The group of a free slot.
const NO_GROUP: u32 = u32::MAX;

/// A subscription slot: its group and where it sits in the group's engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SubSlot {
    group: u32,
    holder: Holder,
}

impl SubSlot {
    const FREE: SubSlot = SubSlot {
        group: NO_GROUP,
        holder: Holder { filter: 0, at: 0 },
    };
}

/// The subscription slots of a set, by handle: the holders its engines update.
pub(crate) type Slots = Vec<SubSlot>;

impl Holders for Vec<SubSlot> {
    #[inline]
    fn holder(&mut self, handle: Handle) -> Option<&mut Holder> {
        self.get_mut(handle as usize).map(|s| &mut s.holder)
    }
}

/// The subscriptions of one options value (so of one dialect).
#[derive(Debug, Clone)]
struct Group {
    options: Options,
    part: MessagePart,
    engine: PolicySet,
    /// The `eventbridge` subscriptions whose filter judges an `exists: false` against array
    /// positions, by handle, with their kept pattern ([`Filter::pattern`]; `None` for a filter
    /// loaded from bytes written before patterns were kept): an event the group's rows cannot
    /// judge is judged on them (EB-8; [`exact_group`]).
    patterns: HashMap<Handle, Option<Pattern>>,
}

/// Many subscriptions of any dialects and options, matched against a message at once (see the
/// [module documentation](self)).
///
/// Ids are the embedder's own (`Id: Eq + Hash + Clone`). The set stores each id once; matching
/// gives the matching ids in **insertion order**: the order in which the ids were first inserted
/// (an id whose filter is replaced keeps its place; an id removed and inserted again goes last).
///
/// Cloning copies the set (its tables, codes and index; the one-test programs it holds are
/// shared, behind [`Arc`]): O(size of the set), the cost of building it again without
/// compiling. For a set that changes while other threads match, see [`LiveSet`].
#[derive(Clone)]
pub struct SubscriptionSet<Id> {
    /// The groups, by index (`None`: a group emptied and freed; its index is reused).
    groups: Vec<Option<Group>>,
    /// The handles of the live subscriptions, found by their id's hash.
    index: HashTable<Handle>,
    hasher: ahash::RandomState,
    /// Per handle: the id (`None` for a free slot). Handles are in insertion order.
    ids: Vec<Option<Id>>,
    /// Per handle: the group and the place in it.
    slots: Vec<SubSlot>,
    /// The number of subscriptions.
    live: usize,
}

impl<Id> Default for SubscriptionSet<Id> {
    fn default() -> SubscriptionSet<Id> {
        SubscriptionSet {
            groups: Vec::new(),
            index: HashTable::new(),
            hasher: ahash::RandomState::new(),
            ids: Vec::new(),
            slots: Vec::new(),
            live: 0,
        }
    }
}

impl<Id: fmt::Debug> fmt::Debug for SubscriptionSet<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriptionSet")
            .field("subscriptions", &self.live)
            .field(
                "groups",
                &self
                    .groups
                    .iter()
                    .flatten()
                    .map(|g| {
                        (
                            g.options.dialect(),
                            g.options.to_json().to_string(),
                            g.engine.len(),
                        )
                    })
                    .collect::<Vec<_>>(),
            )
            .field("distinct_filters", &self.distinct_filters())
            .finish_non_exhaustive()
    }
}

impl<Id> SubscriptionSet<Id> {
    /// An empty set.
    pub fn new() -> SubscriptionSet<Id> {
        SubscriptionSet::default()
    }

    /// The number of subscriptions.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the set holds no subscription.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The subscriptions' ids, in insertion order.
    pub fn ids(&self) -> impl Iterator<Item = &Id> + '_ {
        self.ids.iter().flatten()
    }

    /// The number of distinct filters held: subscriptions with identical filters count once.
    pub fn distinct_filters(&self) -> usize {
        self.groups
            .iter()
            .flatten()
            .map(|g| g.engine.distinct_filters())
            .sum()
    }

    /// The number of groups (distinct dialect and options values): a message is bound once per
    /// group.
    pub fn groups(&self) -> usize {
        self.groups.iter().flatten().count()
    }

    /// The options (so the dialects) of the set's groups: a message needs the part each reads
    /// ([`MessagePart::of`]).
    pub fn options(&self) -> impl Iterator<Item = &Options> + '_ {
        self.groups.iter().flatten().map(|g| &g.options)
    }

    /// The heap bytes the set holds: per group its key table, tests, equality index, filter
    /// codes, subscriber lists and kept `eventbridge` patterns (each counted in full, though
    /// subscriptions of one filter share its text); the id index and the per-subscription slots. Hash tables are
    /// counted by their buckets; allocator overhead, and heap memory the ids themselves own (the
    /// text of a `String` id), are not counted.
    pub fn heap_bytes(&self) -> usize {
        self.groups.capacity() * size_of::<Option<Group>>()
            + self
                .groups
                .iter()
                .flatten()
                .map(|g| {
                    g.engine.heap_bytes()
                        + map_bytes(
                            g.patterns.capacity(),
                            size_of::<(Handle, Option<Pattern>)>(),
                        )
                        + g.patterns
                            .values()
                            .flatten()
                            .map(Pattern::heap_bytes)
                            .sum::<usize>()
                })
                .sum::<usize>()
            + map_bytes(self.index.capacity(), size_of::<Handle>())
            + self.ids.capacity() * size_of::<Option<Id>>()
            + self.slots.capacity() * size_of::<SubSlot>()
    }

    /// For diagnostics and benchmarks: per group, its options, subscriptions, distinct filters,
    /// distinct tests, filters without an indexed anchor (evaluated for every message), and the
    /// indexed tests most filters are anchored on (`(key predicate)` text, with their counts).
    #[doc(hidden)]
    pub fn group_stats(&self) -> Vec<GroupStats<'_>> {
        self.groups
            .iter()
            .flatten()
            .map(|g| GroupStats {
                options: &g.options,
                subscriptions: g.engine.len(),
                distinct_filters: g.engine.distinct_filters(),
                distinct_tests: g.engine.distinct_tests(),
                unanchored_filters: g.engine.unanchored_filters(),
                keys: g.engine.keys().len(),
                anchors: g.engine.anchors(),
            })
            .collect()
    }

    /// The group with `options`, created when there is none.
    fn group_for(&mut self, options: &Options) -> u32 {
        if let Some(g) = self
            .groups
            .iter()
            .position(|g| g.as_ref().is_some_and(|g| g.options == *options))
        {
            return handle(g);
        }
        let group = Group {
            options: options.clone(),
            part: MessagePart::of(options),
            engine: PolicySet::new(),
            patterns: HashMap::new(),
        };
        match self.groups.iter().position(Option::is_none) {
            Some(g) => {
                if let Some(free) = self.groups.get_mut(g) {
                    *free = Some(group);
                }
                handle(g)
            }
            None => {
                self.groups.push(Some(group));
                handle(self.groups.len() - 1)
            }
        }
    }

    /// Frees group `g` when it holds no subscription (its engine's memory is released).
    fn release_group(&mut self, g: u32) {
        let Some(slot) = self.groups.get_mut(g as usize) else {
            return;
        };
        if slot.as_ref().is_some_and(|group| group.engine.is_empty()) {
            *slot = None;
        }
        while let Some(None) = self.groups.last() {
            self.groups.pop();
        }
        if self.groups.is_empty() {
            self.groups = Vec::new();
        }
    }
}

/// A subscription as a saved set ships it ([`SubscriptionSet::saved`]).
pub(crate) struct SavedSubscription<'a, Id> {
    /// The id.
    pub(crate) id: &'a Id,
    /// The position of its group among the live groups, in the set's order.
    pub(crate) group: u32,
    /// Its distinct filter's id in the group's engine.
    pub(crate) filter: u32,
    /// For an `eventbridge` subscription judged on its kept pattern when the rows cannot judge an
    /// event: the pattern (`Some(None)` when its filter kept none).
    pub(crate) pattern: Option<Option<&'a Pattern>>,
}

/// Saving and loading (the set wire format, `crate::set_wire`).
impl<Id> SubscriptionSet<Id> {
    /// The live groups in the set's order: their options and engines.
    pub(crate) fn saved_groups(&self) -> impl Iterator<Item = (&Options, &PolicySet)> + '_ {
        self.groups
            .iter()
            .flatten()
            .map(|g| (&g.options, &g.engine))
    }

    /// The subscriptions in insertion order (see [`SavedSubscription`]).
    pub(crate) fn saved(&self) -> impl Iterator<Item = SavedSubscription<'_, Id>> + '_ {
        let mut rank = Vec::with_capacity(self.groups.len());
        let mut live = 0u32;
        for g in &self.groups {
            rank.push(live);
            live += u32::from(g.is_some());
        }
        self.ids
            .iter()
            .zip(&self.slots)
            .enumerate()
            .filter_map(move |(h, (id, slot))| {
                let id = id.as_ref()?;
                let group = self.groups.get(slot.group as usize)?.as_ref()?;
                Some(SavedSubscription {
                    id,
                    group: rank.get(slot.group as usize).copied()?,
                    filter: slot.holder.filter,
                    pattern: group.patterns.get(&handle(h)).map(|p| p.as_ref()),
                })
            })
    }

    /// An empty set with these groups, in this order (each must be filled by
    /// [`SubscriptionSet::push_saved`]).
    pub(crate) fn with_saved_groups(options: Vec<Options>, subscriptions: usize) -> Self {
        let mut set = SubscriptionSet::new();
        set.groups = options
            .into_iter()
            .map(|options| {
                Some(Group {
                    part: MessagePart::of(&options),
                    options,
                    engine: PolicySet::new(),
                    patterns: HashMap::new(),
                })
            })
            .collect();
        set.ids.reserve(subscriptions);
        set.slots.reserve(subscriptions);
        set.index.reserve(subscriptions, |_| 0);
        set
    }

    /// The engine of group `g` (a position of [`SubscriptionSet::with_saved_groups`]).
    pub(crate) fn saved_engine(&mut self, g: u32) -> Option<&mut PolicySet> {
        self.groups
            .get_mut(g as usize)?
            .as_mut()
            .map(|group| &mut group.engine)
    }

    /// Whether some group holds no subscription (a saved set has none such).
    pub(crate) fn has_empty_group(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.as_ref().is_none_or(|g| g.engine.is_empty()))
    }
}

/// `n` as a handle or group index (every caller keeps `n` below [`MAX_SLOTS`]).
fn handle(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<Id: Eq + Hash> SubscriptionSet<Id> {
    /// Whether subscription `id` is in the set.
    pub fn contains<Q>(&self, id: &Q) -> bool
    where
        Id: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.find(id).is_some()
    }

    /// The handle of `id`, if it is in the set.
    fn find<Q>(&self, id: &Q) -> Option<Handle>
    where
        Id: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let ids = &self.ids;
        self.index
            .find(self.hasher.hash_one(id), |&h| is_id(ids, h, id))
            .copied()
    }

    /// Adds subscription `id` with `filter`, or replaces the filter of `id` when it is already
    /// there (it keeps its place in the set's order).
    ///
    /// The filter must carry its IR: every compiled filter does, and so does one loaded from
    /// bytes of the current wire format ([`Filter::from_bytes`]); one loaded from the first
    /// format is refused ([`InsertError::NoIr`]). On error the set is unchanged.
    ///
    /// Costs about what compiling the filter's tests into the group costs, O(size of the
    /// filter); a filter identical to one already held costs a lookup.
    pub fn insert(&mut self, id: Id, filter: &Filter) -> Result<Insertion, InsertError> {
        self.insert_filter(id, filter, false)
    }

    /// [`SubscriptionSet::insert`]; with `record`, the set also records the filter's identity
    /// ([`Filter::identity`]), so that [`SubscriptionSet::insert_held`] finds it
    /// ([`PolicyCache`](crate::PolicyCache) records; a plain insert does not, as the filter is
    /// usually dropped right after).
    pub(crate) fn insert_filter(
        &mut self,
        id: Id,
        filter: &Filter,
        record: bool,
    ) -> Result<Insertion, InsertError> {
        let ir = filter.ir().ok_or(InsertError::NoIr)?;
        let identity = if record { filter.identity() } else { 0 };
        let pattern = (filter.dialect() == Dialect::EventBridge
            && crate::dialect::eventbridge::judges_positions(filter.program()))
        .then(|| filter.pattern().cloned());
        self.insert_with(id, filter.options(), pattern, |engine, fresh, slots| {
            engine.add(fresh, ir, identity, slots)
        })
    }

    /// [`SubscriptionSet::insert`] of a filter known by its optimized IR ([`Filter::ir`]) and a
    /// fresh `identity` alone, for a dialect that keeps no pattern (every one but
    /// `eventbridge`): the set builds its code from the IR, so the filter's program is never
    /// needed ([`PolicyCache`](crate::PolicyCache) compiles no program for a set).
    pub(crate) fn insert_ir(
        &mut self,
        id: Id,
        options: &Options,
        ir: &crate::ir::Node,
        identity: u64,
    ) -> Result<Insertion, InsertError> {
        self.insert_with(id, options, None, |engine, fresh, slots| {
            engine.add(fresh, ir, identity, slots)
        })
    }

    /// Adds subscription `id` (or replaces its filter) with the filter this set holds under
    /// `identity` ([`Filter::identity`]) in the group of `options`, as [`SubscriptionSet::insert`]
    /// of that filter does, without it: `Err(id)` (the set unchanged) when the set holds no
    /// filter under that identity there. The filter must be one without a kept pattern
    /// ([`Filter::pattern`] `None`); [`PolicyCache`](crate::PolicyCache) keeps no other.
    pub(crate) fn insert_held(
        &mut self,
        id: Id,
        options: &Options,
        identity: u64,
    ) -> Result<Result<Insertion, InsertError>, Id> {
        let held = self
            .groups
            .iter()
            .flatten()
            .find(|g| g.options == *options)
            .and_then(|g| g.engine.find_identity(identity));
        let Some(f) = held else {
            return Err(id);
        };
        Ok(self.insert_with(id, options, None, |engine, fresh, slots| {
            engine.subscribe(fresh, f, slots);
            Ok(())
        }))
    }

    /// [`SubscriptionSet::insert`] of a filter with these `options`, added to its group's engine
    /// by `add` under a fresh handle; `pattern` is the `eventbridge` pattern kept for it, when
    /// its group keeps one ([`Group::patterns`]).
    fn insert_with(
        &mut self,
        id: Id,
        options: &Options,
        pattern: Option<Option<Pattern>>,
        add: impl FnOnce(&mut PolicySet, Handle, &mut Slots) -> Result<(), InsertError>,
    ) -> Result<Insertion, InsertError> {
        if self.slots.len() >= MAX_SLOTS {
            self.compact_slots();
            if self.slots.len() >= MAX_SLOTS {
                return Err(InsertError::Full);
            }
        }
        let hash = self.hasher.hash_one(&id);
        let existing = self.find(&id);
        let g = self.group_for(options);
        // The new filter joins its group under a fresh handle first: if that fails, nothing
        // changed (an id already there keeps its filter).
        let fresh = handle(self.slots.len());
        self.slots.push(SubSlot {
            group: g,
            holder: Holder::default(),
        });
        self.ids.push(None);
        let added = match self.groups.get_mut(g as usize).and_then(Option::as_mut) {
            Some(group) => add(&mut group.engine, fresh, &mut self.slots),
            None => Err(InsertError::Full),
        };
        if let Err(e) = added {
            self.slots.pop();
            self.ids.pop();
            self.release_group(g);
            return Err(e);
        }
        if let Some(pattern) = pattern
            && let Some(group) = self.groups.get_mut(g as usize).and_then(Option::as_mut)
        {
            group.patterns.insert(fresh, pattern);
        }
        let Some(old) = existing else {
            if let Some(slot) = self.ids.get_mut(fresh as usize) {
                *slot = Some(id);
            }
            let SubscriptionSet {
                index, ids, hasher, ..
            } = self;
            index.insert_unique(hash, fresh, |&h| rehash(hasher, ids, h));
            self.live += 1;
            return Ok(Insertion::Added);
        };
        // A replacement: the old subscription leaves its group, and the new one takes its
        // handle (so its place in the order).
        let old_group = self.slots.get(old as usize).map_or(NO_GROUP, |s| s.group);
        if let Some(group) = self
            .groups
            .get_mut(old_group as usize)
            .and_then(Option::as_mut)
        {
            group.engine.remove(old, &mut self.slots);
            group.patterns.remove(&old);
        }
        if let Some(group) = self.groups.get_mut(g as usize).and_then(Option::as_mut) {
            group.engine.rename(fresh, old, &mut self.slots);
            if let Some(pattern) = group.patterns.remove(&fresh) {
                group.patterns.insert(old, pattern);
            }
        }
        if let Some(slot) = self.slots.get_mut(old as usize) {
            slot.group = g;
        }
        self.slots.pop();
        self.ids.pop();
        if old_group != g {
            self.release_group(old_group);
        }
        Ok(Insertion::Replaced)
    }

    /// Adds subscription `id` of a saved set being loaded, last, to group `g`: `place` puts its
    /// handle into the group's engine. `Ok(false)` when `id` is there already or `g` is not a
    /// group; on error the set is left half-built (the loader drops it).
    pub(crate) fn push_saved(
        &mut self,
        id: Id,
        g: u32,
        pattern: Option<Option<Pattern>>,
        place: impl FnOnce(&mut PolicySet, Handle, &mut Slots) -> Result<(), String>,
    ) -> Result<bool, String> {
        let hash = self.hasher.hash_one(&id);
        let SubscriptionSet {
            groups,
            index,
            hasher,
            ids,
            slots,
            ..
        } = self;
        if slots.len() >= MAX_SLOTS {
            return Ok(false);
        }
        let Some(group) = groups.get_mut(g as usize).and_then(Option::as_mut) else {
            return Ok(false);
        };
        let hashbrown::hash_table::Entry::Vacant(entry) =
            index.entry(hash, |&h| is_id(ids, h, &id), |&h| rehash(hasher, ids, h))
        else {
            return Ok(false);
        };
        let h = handle(slots.len());
        slots.push(SubSlot {
            group: g,
            holder: Holder::default(),
        });
        place(&mut group.engine, h, slots)?;
        if let Some(pattern) = pattern {
            group.patterns.insert(h, pattern);
        }
        ids.push(Some(id));
        entry.insert(h);
        self.live += 1;
        Ok(true)
    }

    /// Removes subscription `id`; false when it was not in the set. Costs O(size of its filter)
    /// when it was its filter's last subscriber, O(1) otherwise (amortized: what the removals
    /// leave behind is compacted when it outweighs what is live).
    pub fn remove<Q>(&mut self, id: &Q) -> bool
    where
        Id: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hasher.hash_one(id);
        let ids = &self.ids;
        let Ok(entry) = self.index.find_entry(hash, |&h| is_id(ids, h, id)) else {
            return false;
        };
        let (h, _) = entry.remove();
        let g = self.slots.get(h as usize).map_or(NO_GROUP, |s| s.group);
        if let Some(group) = self.groups.get_mut(g as usize).and_then(Option::as_mut) {
            group.engine.remove(h, &mut self.slots);
            group.patterns.remove(&h);
        }
        if let Some(slot) = self.ids.get_mut(h as usize) {
            *slot = None;
        }
        if let Some(slot) = self.slots.get_mut(h as usize) {
            *slot = SubSlot::FREE;
        }
        self.live -= 1;
        self.release_group(g);
        if self.slots.len() - self.live > self.live {
            self.compact_slots();
        } else if self.index.capacity() > 16 && self.index.len() * 4 < self.index.capacity() {
            let SubscriptionSet {
                index, ids, hasher, ..
            } = self;
            index.shrink_to(index.len() * 2, |&h| rehash(hasher, ids, h));
        }
        true
    }

    /// Renumbers the live subscriptions' handles densely (keeping their order) and shrinks the
    /// per-handle vectors and the index: O(live + free slots), done when the free slots outweigh
    /// the live ones, so O(1) per removal amortized.
    fn compact_slots(&mut self) {
        let mut map = vec![Handle::MAX; self.slots.len()];
        let mut ids = Vec::with_capacity(self.live);
        let mut slots = Vec::with_capacity(self.live);
        for (h, (id, slot)) in std::mem::take(&mut self.ids)
            .into_iter()
            .zip(std::mem::take(&mut self.slots))
            .enumerate()
        {
            if let Some(id) = id {
                if let Some(m) = map.get_mut(h) {
                    *m = handle(ids.len());
                }
                ids.push(Some(id));
                slots.push(slot);
            }
        }
        self.ids = ids;
        self.slots = slots;
        for group in self.groups.iter_mut().flatten() {
            group.engine.renumber_handles(&map);
            if !group.patterns.is_empty() {
                group.patterns = std::mem::take(&mut group.patterns)
                    .into_iter()
                    .map(|(h, p)| (map.get(h as usize).copied().unwrap_or(h), p))
                    .collect();
            }
        }
        for h in self.index.iter_mut() {
            *h = map.get(*h as usize).copied().unwrap_or(*h);
        }
        let SubscriptionSet {
            index, ids, hasher, ..
        } = self;
        index.shrink_to_fit(|&h| rehash(hasher, ids, h));
    }

    /// The subscriptions whose filter matches `message`, in insertion order, each once; groups
    /// that could not judge the message are in [`Matches::unjudged`] (see the [module
    /// documentation](self)).
    ///
    /// Each group reads its part of the message ([`MessagePart::of`] its options): the JSON body
    /// is read from its bytes once per body group (only what the group's filters read, at any
    /// depth), attributes and headers are borrowed. With a `scratch` kept per thread, matching a
    /// stream of messages allocates nothing once warm (a group that cannot judge a message may:
    /// its error is built when [`Matches::unjudged`] is read, and an event that is not JSON keeps
    /// the reader's error).
    pub fn matching<'s, A, H>(
        &'s self,
        scratch: &'s mut SetScratch,
        message: &MessageParts<'_, A, H>,
    ) -> Matches<'s, Id>
    where
        A: Attributes + ?Sized,
        H: Headers + ?Sized,
    {
        scratch.begin(self);
        scratch.present = message.parts().fold(0, |mask, p| mask | part_bit(p));
        for (g, group) in self.groups.iter().enumerate() {
            let Some(group) = group.as_ref().filter(|g| !g.engine.is_empty()) else {
                continue;
            };
            match_group(group, handle(g), message, scratch, None);
        }
        self.done(scratch)
    }

    /// The subscriptions whose filter matches one JSON document as received, read as
    /// [`crate::read_message`] reads it (every shape), each group reading its part as
    /// [`crate::Evaluator::matches_document`] reads it for one of its filters. A document whose
    /// part some group reads is in the wrong form leaves that group unjudged (with the error)
    /// and the others judge it; a document that is not JSON leaves every group unjudged.
    pub fn matching_document<'s>(
        &'s self,
        scratch: &'s mut SetScratch,
        json: &[u8],
    ) -> Matches<'s, Id> {
        // Read once for every group; a part in the wrong form fails that reading, and then each
        // group reads the document as one of its filters would (only its part), so that only the
        // groups reading that part are unjudged.
        // An EventBridge group reads the whole document as its event (EB-1), whatever its member
        // names: a document in a wrapper shape is then read per group too.
        if let Ok(read) = crate::shape::read_for_all(json, scratch.bindings.read_mode())
            && (read.shape() == MessageShape::Document || !self.has_eventbridge())
        {
            return self.matching(scratch, &read.parts());
        }
        scratch.begin(self);
        for (g, group) in self.groups.iter().enumerate() {
            let Some(group) = group.as_ref().filter(|g| !g.engine.is_empty()) else {
                continue;
            };
            match crate::shape::read_for(json, &group.options, scratch.bindings.read_mode()) {
                Ok(read) => {
                    let parts = read.parts();
                    match_group(group, handle(g), &parts, scratch, Some(&parts));
                }
                Err(e) => scratch.unjudged.push(Unjudged {
                    group: handle(g),
                    reason: Reason::Invalid(e),
                }),
            }
        }
        self.done(scratch)
    }

    /// Whether a group of the set reads events ([`crate::read_messages`] splits a batch for
    /// its filters).
    fn reads_events(&self) -> bool {
        self.groups
            .iter()
            .flatten()
            .any(|g| crate::options::reads_events(&g.options) && !g.engine.is_empty())
    }

    /// Whether a group of the set holds EventBridge patterns.
    fn has_eventbridge(&self) -> bool {
        self.groups
            .iter()
            .flatten()
            .any(|g| g.options == Options::EventBridge && !g.engine.is_empty())
    }

    /// Matches every message of one JSON document as received — a line of a log — each group
    /// reading the document as [`crate::read_messages`] reads it for one of its filters, and
    /// calls `each` with the result of each message: in a set with a group that reads events
    /// (`eventgrid`), a document that is a batch of events (an array of objects) is matched
    /// event by event (`each(Some(index), ...)`: the groups that read events judge that event,
    /// the others the whole document, as each of their filters would); any other document, and
    /// every document of a set without such a group, once (`each(None, ...)`, as
    /// [`SubscriptionSet::matching_document`]). Only `eventgrid` filters read an array as a
    /// batch; to the others it is one message (an EventBridge event is one JSON object, EB-3,
    /// so an array is `INVALID_MESSAGE` to them). `filtervm route` reads its lines so, which is
    /// how it never disagrees with `filtervm match`.
    pub fn matching_messages<F>(&self, scratch: &mut SetScratch, json: &[u8], mut each: F)
    where
        F: FnMut(Option<usize>, &Matches<'_, Id>),
    {
        let batch = if self.reads_events() {
            crate::shape::batch(json)
        } else {
            Ok(None)
        };
        let events = match batch {
            Ok(Some(events)) => events,
            _ => {
                let matches = self.matching_document(scratch, json);
                each(None, &matches);
                return;
            }
        };
        // The whole document, for the groups that do not read events (read once; per group when
        // a part some group does not read is in the wrong form).
        let whole = crate::shape::read_for_all(json, scratch.bindings.read_mode());
        for (index, event) in events.iter().enumerate() {
            scratch.begin(self);
            let event = event.parts();
            for (g, group) in self.groups.iter().enumerate() {
                let Some(group) = group.as_ref().filter(|g| !g.engine.is_empty()) else {
                    continue;
                };
                if crate::options::reads_events(&group.options) {
                    match_group(group, handle(g), &event, scratch, Some(&event));
                    continue;
                }
                let own;
                let read = match &whole {
                    Ok(read) => read,
                    Err(_) => match crate::shape::read_for(
                        json,
                        &group.options,
                        scratch.bindings.read_mode(),
                    ) {
                        Ok(read) => {
                            own = read;
                            &own
                        }
                        Err(e) => {
                            scratch.unjudged.push(Unjudged {
                                group: handle(g),
                                reason: Reason::Invalid(e),
                            });
                            continue;
                        }
                    },
                };
                let parts = read.parts();
                match_group(group, handle(g), &parts, scratch, Some(&parts));
            }
            let matches = self.done(scratch);
            each(Some(index), &matches);
        }
    }

    /// Like [`SubscriptionSet::matching`], but a message some group could not judge is an
    /// error listing those groups (their subscriptions' verdicts are unknown, so no answer is
    /// given).
    pub fn try_matching<'s, A, H>(
        &'s self,
        scratch: &'s mut SetScratch,
        message: &MessageParts<'_, A, H>,
    ) -> Result<Matches<'s, Id>, UnjudgedError>
    where
        A: Attributes + ?Sized,
        H: Headers + ?Sized,
    {
        let matches = self.matching(scratch, message);
        if matches.is_complete() {
            Ok(matches)
        } else {
            Err(UnjudgedError {
                groups: matches.unjudged().collect(),
            })
        }
    }

    /// Matching for callers whose message format depends on the dialect reading it (the
    /// conformance vector shape, a `filtervm match` line, a message document per dialect): the
    /// set asks `read` for the message once per group, with the group's options, and binds what
    /// it returns. A group `read` fails for is unjudged with `read`'s error. Otherwise as
    /// [`SubscriptionSet::matching`].
    pub fn matching_with<'s, 'm, F>(
        &'s self,
        scratch: &'s mut SetScratch,
        mut read: F,
    ) -> Matches<'s, Id>
    where
        F: FnMut(&Options) -> Result<GroupMessage<'m>, MessageError>,
    {
        scratch.begin(self);
        for (g, group) in self.groups.iter().enumerate() {
            let Some(group) = group.as_ref().filter(|g| !g.engine.is_empty()) else {
                continue;
            };
            let SetScratch {
                bindings,
                state,
                hits,
                unjudged,
                ..
            } = &mut *scratch;
            let keys = group.engine.keys();
            // A body given as such: an SNS body that is not JSON keeps its dialect meaning.
            let strict = !matches!(group.options, Options::Sns(_));
            let owned;
            let message: &Message = match read(&group.options) {
                Ok(GroupMessage::Body(bytes)) => {
                    let bound = bindings.bind_json(keys, bytes);
                    let body = Some((bytes, strict));
                    let reason = judge(group, &bound, body);
                    let event = || body.map(|(bytes, _)| bytes.into());
                    record(
                        group,
                        handle(g),
                        &bound,
                        reason,
                        event,
                        state,
                        hits,
                        unjudged,
                    );
                    continue;
                }
                Ok(GroupMessage::Message(message)) => {
                    owned = message;
                    &owned
                }
                Ok(GroupMessage::Borrowed(message)) => message,
                Err(e) => {
                    unjudged.push(Unjudged {
                        group: handle(g),
                        reason: Reason::Invalid(e),
                    });
                    continue;
                }
            };
            let bound = bindings.bind(keys, message);
            let reason = judge(group, &bound, owned_body(message, strict));
            let event = || message_bytes(message);
            record(
                group,
                handle(g),
                &bound,
                reason,
                event,
                state,
                hits,
                unjudged,
            );
        }
        self.done(scratch)
    }

    /// Binds `message` to every group that reads a part it has, and drops the result (for timing
    /// binding apart from matching); returns the number of rows bound.
    #[doc(hidden)]
    pub fn bind_only<A, H>(
        &self,
        scratch: &mut SetScratch,
        message: &MessageParts<'_, A, H>,
    ) -> usize
    where
        A: Attributes + ?Sized,
        H: Headers + ?Sized,
    {
        let mut rows = 0;
        for group in self.groups.iter().flatten() {
            let keys = group.engine.keys();
            let bindings = &mut scratch.bindings;
            rows += match group.part {
                MessagePart::Body => message
                    .get_body()
                    .map(|b| bindings.bind_json(keys, b).rows()),
                MessagePart::Attributes => message
                    .get_attributes()
                    .map(|a| bindings.bind_attributes(keys, a).rows()),
                MessagePart::Headers => message
                    .get_headers()
                    .map(|h| bindings.bind_headers(keys, h).rows()),
            }
            .unwrap_or(0);
        }
        rows
    }

    /// The result of the message matched into `scratch`, in insertion order.
    fn done<'s>(&'s self, scratch: &'s mut SetScratch) -> Matches<'s, Id> {
        sort_handles(&mut scratch.hits, &mut scratch.words, self.ids.len());
        Matches { set: self, scratch }
    }
}

/// Matches `message` against `group` (index `g`): its part picked and checked by the dialect's
/// rules ([`MessageParts::pick`]), bound, judged. A part the group cannot read leaves the group
/// unjudged; its error is built when [`Matches::unjudged`] is read (`Missing`), or at once for
/// a message of one group's own reading (`own`: the parts the group's error names).
#[inline]
fn match_group<A: Attributes + ?Sized, H: Headers + ?Sized>(
    group: &Group,
    g: u32,
    message: &MessageParts<'_, A, H>,
    scratch: &mut SetScratch,
    own: Option<&MessageParts<'_>>,
) {
    let SetScratch {
        bindings,
        state,
        hits,
        unjudged,
        ..
    } = scratch;
    let keys = group.engine.keys();
    let (bound, body) = match message.pick(&group.options) {
        Ok(SelectedPart::Body { bytes, strict }) => {
            (bindings.bind_json(keys, bytes), Some((bytes, strict)))
        }
        Ok(SelectedPart::Attributes(attributes)) => (
            match attributes {
                Some(a) => bindings.bind_attributes(keys, a),
                None => bindings.bind_attributes(keys, NO_ATTRIBUTES),
            },
            None,
        ),
        Ok(SelectedPart::Headers(headers)) => (
            match headers {
                Some(h) => bindings.bind_headers(keys, h),
                None => bindings.bind_headers(keys, NO_HEADERS),
            },
            None,
        ),
        Err(Unread::Missing) if own.is_none() => {
            unjudged.push(Unjudged {
                group: g,
                reason: Reason::Missing,
            });
            return;
        }
        Err(unread) => {
            let error = match own {
                Some(parts) => parts.unread_error(&group.options, unread),
                None => message.unread_error(&group.options, unread),
            };
            unjudged.push(Unjudged {
                group: g,
                reason: Reason::Invalid(error),
            });
            return;
        }
    };
    let reason = judge(group, &bound, body);
    let event = || body.map(|(bytes, _)| bytes.into());
    record(group, g, &bound, reason, event, state, hits, unjudged);
}

/// Why `group` could not judge a message bound as `bound`, if it could not: an SNS body too
/// complex to judge, an event that is not JSON or not an object, a document read as the body
/// that is not JSON. An SNS body given as such that is not JSON keeps its dialect meaning
/// (bound with every body key absent, it is a verdict). `body`: the body's bytes and whether
/// they must be JSON ([`SelectedPart::Body`]).
fn judge(group: &Group, bound: &Bound<'_>, body: Option<(&[u8], bool)>) -> Option<Reason> {
    let strict = body.is_some_and(|(_, strict)| strict);
    match bound.judgement() {
        Judgement::Judged => {}
        Judgement::NotJson(_) if !strict => {}
        Judgement::NotJson(e) => return Some(Reason::NotJson(e.clone())),
        Judgement::Overflowed => return Some(Reason::TooComplex),
        // An event that is no object or nests too deep keeps that error (below); the others
        // are judged on the kept patterns when the group's filters have them (`record`).
        Judgement::Unsupported => {
            if let Err(e) = crate::dialect::eventbridge::judged_shape(bound) {
                return Some(Reason::Invalid(e));
            }
            return Some(Reason::Invalid(
                crate::dialect::eventbridge::unsupported_error(),
            ));
        }
    }
    if group.options.dialect() == Dialect::EventBridge
        && let Err(e) = crate::dialect::eventbridge::judged_event(bound)
    {
        return Some(Reason::Invalid(e));
    }
    if let Some((bytes, _)) = body
        && crate::options::json_body(&group.options) == Some(crate::options::JsonBody::Event)
        && let Some(e) = crate::message::event_shape_error(bytes)
    {
        return Some(Reason::Invalid(e));
    }
    None
}

/// The body of an owned message, and whether it must be JSON.
fn owned_body(message: &Message, strict: bool) -> Option<(&[u8], bool)> {
    match message {
        Message::Body(bytes) => Some((bytes, strict)),
        _ => None,
    }
}

/// Records the verdicts of a message `group` (index `g`) judged, or why it could not. An
/// EventBridge event whose `exists: false` the group's rows cannot judge is judged exactly
/// ([`exact_group`], on the event's bytes `event`) when every filter of the group that judges
/// absences against array positions kept its pattern.
#[expect(
    clippy::too_many_arguments,
    reason = "the group, its verdict and the scratch buffers it writes"
)]
fn record<'m>(
    group: &Group,
    g: u32,
    bound: &Bound<'_>,
    reason: Option<Reason>,
    event: impl FnOnce() -> Option<Cow<'m, [u8]>>,
    state: &mut MatchState,
    hits: &mut Vec<Handle>,
    unjudged: &mut Vec<Unjudged>,
) {
    match reason {
        None => state.matching(&group.engine, bound, hits),
        Some(reason) => {
            if bound.judgement() == &Judgement::Unsupported
                && crate::dialect::eventbridge::judged_shape(bound).is_ok()
                && let Some(bytes) = event()
                && let Some(judged) = exact_group(group, &bytes, state, hits)
            {
                if let Err(e) = judged {
                    unjudged.push(Unjudged {
                        group: g,
                        reason: Reason::Invalid(e),
                    });
                }
                return;
            }
            unjudged.push(Unjudged { group: g, reason });
        }
    }
}

/// The verdicts of an `eventbridge` group on an event whose `exists: false` its rows cannot
/// judge ([`Judgement::Unsupported`]), appended to `hits`; `None` when a filter of the group
/// that judges such absences kept no pattern (loaded from bytes written before patterns were
/// kept). Kept out of line: it runs only when binding gave up.
///
/// The event is bound again to the group's key table without its absence keys (the keys of
/// `exists: false` judged against array positions, EB-10), which the rows then judge exactly
/// for every filter without such an absence; the filters with one are judged by EB-8's search
/// on their kept pattern ([`Pattern::matches`]), each distinct pattern once.
#[cold]
#[inline(never)]
fn exact_group(
    group: &Group,
    bytes: &[u8],
    state: &mut MatchState,
    hits: &mut Vec<Handle>,
) -> Option<Result<(), MessageError>> {
    // A filter judging such absences without its pattern: the error stands.
    if group.patterns.values().any(Option::is_none) {
        return None;
    }
    let keys = group.engine.keys();
    let mut table = keys.clone();
    for (slot, key) in keys.keys().iter().enumerate() {
        if !matches!(key, Key::FieldPath(_, levels) if *levels != u32::MAX) {
            continue;
        }
        let slot = handle(slot);
        // Every reference (one per test on the key) is dropped.
        for _ in 0..=group.engine.distinct_tests() {
            if table.get(key) != Some(slot) || table.release(slot) {
                break;
            }
        }
    }
    let mut bindings = Bindings::new();
    let bound = bindings.bind_json(&table, bytes);
    if bound.judgement() != &Judgement::Judged {
        return Some(Err(crate::dialect::eventbridge::unsupported_error()));
    }
    let start = hits.len();
    state.matching(&group.engine, &bound, hits);
    let mut kept: Vec<Handle> = hits
        .drain(start..)
        .filter(|h| !group.patterns.contains_key(h))
        .collect();
    let mut options = filtervm_vm::json::ParseOptions::default();
    options.lone_surrogates = filtervm_vm::json::LoneSurrogates::Replace;
    options.duplicates = filtervm_vm::json::Duplicates::KeepAll;
    options.max_depth = crate::dialect::eventbridge::MAX_EVENT_DEPTH + 1;
    let event = match filtervm_vm::json::parse_with(bytes, &options) {
        Ok(event) => event,
        Err(e) => {
            return Some(Err(MessageError::new(
                "",
                format!("the event is not JSON: {e}"),
            )));
        }
    };
    let mut verdicts: HashMap<&str, bool> = HashMap::new();
    for (&h, pattern) in group
        .patterns
        .iter()
        .filter_map(|(h, p)| Some((h, p.as_ref()?)))
    {
        let verdict = match verdicts.get(pattern.text()) {
            Some(&v) => v,
            None => match pattern.matches(&event) {
                Ok(v) => *verdicts.entry(pattern.text()).or_insert(v),
                Err(e) => return Some(Err(e)),
            },
        };
        if verdict {
            kept.push(h);
        }
    }
    hits.extend(kept);
    Some(Ok(()))
}

/// The JSON bytes of an owned message (a `serde_json` value written out), for [`exact_group`].
fn message_bytes(message: &Message) -> Option<Cow<'_, [u8]>> {
    match message {
        Message::Body(bytes) => Some(bytes.as_slice().into()),
        Message::Json(value) => serde_json::to_vec(value).ok().map(Into::into),
        _ => None,
    }
}

/// Puts the matching handles (distinct: a filter's subscribers are added once per message, and a
/// subscription has one filter) in increasing order, the set's order. A few (under 32) are
/// sorted; more are marked in a bitmap of the handles below `bound` (the set's handle count)
/// with a summary bitmap of its words above it, and read back in order: the summary's
/// `bound / 4096` words, then only the words holding a hit, each cleared as it is read, so the
/// bitmap is all zeros between calls and costs nothing to clear (on 1,000,000 subscriptions and
/// 570 hits, 245 summary words and about 570 words instead of a comparison sort's 5,000
/// comparisons). When the summary would be long for the hits (over four words a hit), or a
/// handle is at or beyond `bound`, the handles are sorted.
fn sort_handles(hits: &mut Vec<Handle>, words: &mut Vec<u64>, bound: usize) {
    let n = hits.len();
    let word_count = bound.div_ceil(64);
    let summary_count = word_count.div_ceil(64);
    if n < 32 || summary_count > 4 * n || hits.iter().any(|&h| h as usize >= bound) {
        hits.sort_unstable();
        return;
    }
    // All zeros (every call leaves them so); grown with zeros, cut back when four times too long.
    let need = summary_count + word_count;
    if words.len() < need {
        words.resize(need, 0);
    } else if words.len() > 4 * need {
        words.truncate(need);
        words.shrink_to_fit();
    }
    let (summary, bits) = words.split_at_mut(summary_count);
    for &h in hits.iter() {
        let w = h as usize / 64;
        if let Some(word) = bits.get_mut(w) {
            *word |= 1 << (h % 64);
        }
        if let Some(s) = summary.get_mut(w / 64) {
            *s |= 1 << (w % 64);
        }
    }
    let mut written = 0;
    let mut slots = hits.iter_mut();
    for (si, s) in summary.iter_mut().enumerate() {
        let mut touched = std::mem::take(s);
        while touched != 0 {
            let w = si * 64 + touched.trailing_zeros() as usize;
            touched &= touched - 1;
            let Some(word) = bits.get_mut(w) else {
                continue;
            };
            let mut rest = std::mem::take(word);
            while rest != 0 {
                if let Some(slot) = slots.next() {
                    // Below `bound`, which handles (`u32`) index.
                    *slot = (w * 64) as Handle + rest.trailing_zeros();
                    written += 1;
                }
                rest &= rest - 1;
            }
        }
    }
    // Only a repeated handle (not made by matching) would leave slots unwritten.
    hits.truncate(written);
}

/// Whether handle `h` holds `id`.
#[inline]
fn is_id<Id: Borrow<Q>, Q: Eq + ?Sized>(ids: &[Option<Id>], h: Handle, id: &Q) -> bool {
    ids.get(h as usize)
        .and_then(Option::as_ref)
        .is_some_and(|held| held.borrow() == id)
}

/// The hash of handle `h`'s id (when the index grows or shrinks).
fn rehash<Id: Hash>(hasher: &ahash::RandomState, ids: &[Option<Id>], h: Handle) -> u64 {
    match ids.get(h as usize).and_then(Option::as_ref) {
        Some(id) => hasher.hash_one(id),
        None => 0,
    }
}

fn part_bit(part: MessagePart) -> u8 {
    match part {
        MessagePart::Attributes => 1,
        MessagePart::Body => 2,
        MessagePart::Headers => 4,
    }
}

/// A message as one group of a set reads it, for [`SubscriptionSet::matching_with`].
#[derive(Debug)]
pub enum GroupMessage<'m> {
    /// Raw JSON bytes: an SNS body (body scope) or an Event Grid event, read as
    /// [`SubscriptionSet::matching`] reads a message's body.
    Body(&'m [u8]),
    /// A message of the library's model (for example from [`crate::message_from_line`]).
    Message(Message),
    /// A message of the library's model, borrowed.
    Borrowed(&'m Message),
}

impl From<Message> for GroupMessage<'_> {
    fn from(message: Message) -> Self {
        GroupMessage::Message(message)
    }
}

/// Why a group could not judge a message.
#[derive(Debug, Clone)]
enum Reason {
    /// The message lacks the group's part.
    Missing,
    /// An SNS body beyond the binding limits.
    TooComplex,
    /// An event (or a document read as the body) that is not JSON.
    NotJson(filtervm_vm::json::Error),
    /// A part the group cannot read: in the wrong form, against the dialect's rules, given
    /// unreadable, an EventBridge event that is no JSON object, nests too deep (EB-3, EB-34) or
    /// has an `exists: false` the binder does not judge for a filter saved without its pattern,
    /// or the caller's reader failed
    /// ([`SubscriptionSet::matching_with`]).
    Invalid(MessageError),
}

#[derive(Debug, Clone)]
struct Unjudged {
    group: u32,
    reason: Reason,
}

/// Reusable buffers for matching messages against [`SubscriptionSet`]s: the binding scratch, the
/// per-test verdicts of the current message, the result. Keep one per thread (it serves any
/// set): once warm, matching a stream of messages allocates nothing.
#[derive(Debug, Default)]
pub struct SetScratch {
    bindings: Bindings,
    state: MatchState,
    /// The matching handles of the current message (sorted when done).
    hits: Vec<Handle>,
    /// A bitmap of handles, for putting many hits in order (see [`sort_handles`]).
    words: Vec<u64>,
    unjudged: Vec<Unjudged>,
    /// The parts the current message has (bits of [`part_bit`]).
    present: u8,
}

impl SetScratch {
    /// New, empty buffers.
    pub fn new() -> SetScratch {
        SetScratch::default()
    }

    /// Reads the JSON documents and bodies matched with this scratch from now on in `mode`
    /// ([`ReadMode::Validating`] until set); see [`ReadMode`] for what [`ReadMode::Trusted`]
    /// changes.
    pub fn set_read_mode(&mut self, mode: ReadMode) {
        self.bindings.set_read_mode(mode);
    }

    /// The mode JSON documents and bodies are read in.
    pub fn read_mode(&self) -> ReadMode {
        self.bindings.read_mode()
    }

    /// Clears the result and sizes the buffers for `set`'s largest group.
    fn begin<Id>(&mut self, set: &SubscriptionSet<Id>) {
        self.hits.clear();
        self.unjudged.clear();
        self.present = 0;
        self.state.evaluations = 0;
        let (tests, filters) = set
            .groups
            .iter()
            .flatten()
            .map(|g| g.engine.buffer_sizes())
            .fold((0, 0), |(t, f), (gt, gf)| (t.max(gt), f.max(gf)));
        self.state.prepare(tests, filters);
    }
}

/// The subscriptions matching one message, and the groups that could not judge it; borrowed
/// from the set and the scratch (see [`SubscriptionSet::matching`]).
pub struct Matches<'s, Id> {
    set: &'s SubscriptionSet<Id>,
    scratch: &'s SetScratch,
}

impl<'s, Id> Matches<'s, Id> {
    /// The matching subscriptions' ids, in insertion order, each once.
    pub fn ids(&self) -> MatchingIds<'s, Id> {
        MatchingIds {
            hits: self.scratch.hits.iter(),
            ids: &self.set.ids,
        }
    }

    /// The number of matching subscriptions.
    pub fn len(&self) -> usize {
        self.scratch.hits.len()
    }

    /// Whether no subscription matches.
    pub fn is_empty(&self) -> bool {
        self.scratch.hits.is_empty()
    }

    /// Whether every group judged the message (then [`Matches::ids`] is the whole answer).
    pub fn is_complete(&self) -> bool {
        self.scratch.unjudged.is_empty()
    }

    /// The groups that could not judge the message, each with the error saying why and the
    /// number of its subscriptions (none of which is in [`Matches::ids`]).
    pub fn unjudged(&self) -> impl Iterator<Item = UnjudgedGroup> + 's {
        let set = self.set;
        let present = self.scratch.present;
        self.scratch.unjudged.iter().filter_map(move |u| {
            let group = set.groups.get(u.group as usize)?.as_ref()?;
            let dialect = group.options.dialect();
            let error = match &u.reason {
                Reason::Missing => {
                    let present: Vec<MessagePart> = MessagePart::ALL
                        .into_iter()
                        .filter(|&p| present & part_bit(p) != 0)
                        .collect();
                    missing_part_error(&group.options, &present)
                }
                Reason::TooComplex => MessageError {
                    code: ErrorCode::MessageTooComplex,
                    pointer: String::new(),
                    message: format!(
                        "the body has too many combinations of array elements to judge element \
                         by element (more than {} slots)",
                        filtervm_vm::bind::MAX_ROW_SLOTS
                    ),
                },
                Reason::NotJson(e) => crate::message::not_json_error(dialect, e),
                Reason::Invalid(e) => e.clone(),
            };
            Some(UnjudgedGroup {
                options: group.options.clone(),
                subscriptions: group.engine.len(),
                error,
            })
        })
    }

    /// The number of distinct filters evaluated for the message (identical filters are
    /// evaluated once however many ids subscribe to them; filters whose indexed tests do not
    /// hold are not evaluated at all).
    pub fn filters_evaluated(&self) -> usize {
        self.scratch.state.evaluations
    }
}

impl<'s, Id> IntoIterator for &Matches<'s, Id> {
    type Item = &'s Id;
    type IntoIter = MatchingIds<'s, Id>;

    fn into_iter(self) -> MatchingIds<'s, Id> {
        self.ids()
    }
}

impl<Id: fmt::Debug> fmt::Debug for Matches<'_, Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Matches")
            .field("ids", &self.ids().collect::<Vec<_>>())
            .field("unjudged", &self.unjudged().collect::<Vec<_>>())
            .finish()
    }
}

/// The ids of [`Matches::ids`], in insertion order.
#[derive(Debug, Clone)]
pub struct MatchingIds<'s, Id> {
    hits: std::slice::Iter<'s, Handle>,
    ids: &'s [Option<Id>],
}

impl<'s, Id> Iterator for MatchingIds<'s, Id> {
    type Item = &'s Id;

    #[inline]
    fn next(&mut self) -> Option<&'s Id> {
        // Every hit is a live subscription's handle.
        self.hits
            .by_ref()
            .find_map(|&h| self.ids.get(h as usize).and_then(Option::as_ref))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.hits.len(), Some(self.hits.len()))
    }
}

impl<Id> ExactSizeIterator for MatchingIds<'_, Id> {}

/// A group of subscriptions (one dialect and options value) that could not judge a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnjudgedGroup {
    /// The group's options (its dialect is `options.dialect()`).
    pub options: Options,
    /// The number of its subscriptions, none of which was judged.
    pub subscriptions: usize,
    /// Why: [`ErrorCode::MessageShape`] (the message lacks the part the group reads; the message
    /// hints at the likely fix), [`ErrorCode::MessageNotJson`] (an Event Grid event that is not
    /// JSON), [`ErrorCode::MessageTooComplex`] (an SNS body beyond the binding limits), or the
    /// reader's error ([`SubscriptionSet::matching_with`]).
    pub error: MessageError,
}

impl fmt::Display for UnjudgedGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dialect = self.options.dialect();
        let plural = if self.subscriptions == 1 { "" } else { "s" };
        if self.options == Options::from(dialect) {
            write!(f, "{} {dialect} subscription{plural}", self.subscriptions)?;
        } else {
            write!(
                f,
                "{} {dialect} subscription{plural} with options {}",
                self.subscriptions, self.options
            )?;
        }
        write!(f, " could not judge the message: {}", self.error)
    }
}

/// The error of [`SubscriptionSet::try_matching`]: groups that could not judge the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnjudgedError {
    /// The groups, each with its error (at least one).
    pub groups: Vec<UnjudgedGroup>,
}

impl fmt::Display for UnjudgedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, group) in self.groups.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{group}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnjudgedError {}

/// One group's figures, for diagnostics ([`SubscriptionSet::group_stats`]).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct GroupStats<'a> {
    /// The group's options.
    pub options: &'a Options,
    /// Its subscriptions.
    pub subscriptions: usize,
    /// Its distinct filters.
    pub distinct_filters: usize,
    /// Its distinct tests.
    pub distinct_tests: usize,
    /// Its filters without an indexed anchor (evaluated for every message).
    pub unanchored_filters: usize,
    /// The slots of its key table (a bound message's width).
    pub keys: usize,
    /// Its indexed tests (`(key predicate)` text) with the number of filters anchored on each,
    /// largest first.
    pub anchors: Vec<(&'a str, usize)>,
}

/// One change to a [`LiveSet`], for [`LiveSet::apply`].
#[derive(Debug, Clone)]
pub enum Change<Id> {
    /// Insert or replace a subscription ([`SubscriptionSet::insert`]).
    Insert(Id, Arc<Filter>),
    /// Remove a subscription ([`SubscriptionSet::remove`]).
    Remove(Id),
}

/// What one [`Change`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// A new subscription.
    Added,
    /// An existing subscription's filter was replaced.
    Replaced,
    /// A subscription was removed.
    Removed,
    /// A removal of an id that was not there.
    NotFound,
}

/// How long a writer waits for readers still matching on the hidden copy before it copies the
/// published set instead (readers hold a copy for one match, microseconds; one that keeps a
/// [`LiveSet::snapshot`] longer costs the writer one copy).
const STRAGGLER_WAIT: Duration = Duration::from_millis(10);

/// A [`SubscriptionSet`] that threads match against while another thread updates it: **no reader
/// ever waits for a writer**.
///
/// ```
/// use filtervm_compiler::{compile_text, Dialect, LiveSet, MessageParts, Options, SetScratch};
/// use filtervm_vm::message::AttributeType;
/// use std::sync::Arc;
///
/// let live = Arc::new(LiveSet::new());
/// let filter = compile_text(Dialect::Sns, r#"{"event": ["paid"]}"#, &Options::from(Dialect::Sns))
///     .unwrap();
/// live.insert(1u64, filter.clone()).unwrap();
/// let reader = {
///     let live = Arc::clone(&live);
///     std::thread::spawn(move || {
///         let mut scratch = SetScratch::new();
///         let attributes = [("event", AttributeType::String, "paid")];
///         let set = live.load(); // a consistent snapshot, for this message
///         set.matching(&mut scratch, &MessageParts::attributes(&attributes[..])).len()
///     })
/// };
/// live.insert(2, filter).unwrap();
/// assert!((1..=2).contains(&reader.join().unwrap())); // before or after the second insert
/// assert_eq!(live.load().len(), 2);
/// ```
///
/// # How
///
/// Double buffering with atomic snapshots (the `arc-swap` crate). The live set holds two copies
/// of the set. Readers [`load`](LiveSet::load) the published copy — a few atomic operations,
/// lock-free, never blocked by a writer — and match against that consistent snapshot. Writers
/// (one at a time: a mutex orders them, readers never touch it) apply a batch of changes to the
/// other copy, which no reader can reach (the writer owns it exclusively, checked by `Arc`'s
/// count), publish it with one atomic swap, and keep the copy it replaced to bring up to date at
/// the next update, once the readers that were still matching on it have finished. A writer waits
/// for such stragglers at most 10 ms, then copies the published set instead, so a reader holding
/// a snapshot for long delays no writer.
///
/// Why not a lock around one set: every reader would wait for every update. Why not copy-on-write
/// of one set: each update would copy the whole set (O(size), tens of milliseconds for 100,000
/// subscriptions); here an update costs two applications of the change. Why not a persistent
/// (structurally shared) set: the matching tables are flat arrays, which is what makes matching
/// fast. The price of double buffering is memory: two copies of the set, plus the filters of the
/// last batch until they are applied to the second copy.
///
/// Guarantees: every answer a reader gets is the answer of one published set, a state after a
/// whole batch of changes (changes of one [`LiveSet::apply`] appear together); a reader that
/// loads after an update returned sees it; readers never block, nor are blocked by, writers.
pub struct LiveSet<Id> {
    published: ArcSwap<SubscriptionSet<Id>>,
    writer: Mutex<Writer<Id>>,
}

/// The writers' side of a [`LiveSet`].
struct Writer<Id> {
    /// The copy not published (`None` only while a writer works on it).
    hidden: Option<Arc<SubscriptionSet<Id>>>,
    /// The changes published but not yet applied to `hidden`.
    behind: Vec<Change<Id>>,
}

impl<Id: Eq + Hash + Clone> Default for LiveSet<Id> {
    fn default() -> LiveSet<Id> {
        LiveSet::from(SubscriptionSet::new())
    }
}

impl<Id: Eq + Hash + Clone> From<SubscriptionSet<Id>> for LiveSet<Id> {
    /// Publishes `set` (and keeps a copy of it to apply changes to).
    fn from(set: SubscriptionSet<Id>) -> LiveSet<Id> {
        LiveSet {
            writer: Mutex::new(Writer {
                hidden: Some(Arc::new(set.clone())),
                behind: Vec::new(),
            }),
            published: ArcSwap::from_pointee(set),
        }
    }
}

impl<Id: fmt::Debug> fmt::Debug for LiveSet<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveSet")
            .field("published", &**self.published.load())
            .finish_non_exhaustive()
    }
}

/// A consistent snapshot of a [`LiveSet`], for matching a message or a few: it dereferences to
/// the [`SubscriptionSet`] published when it was loaded. Drop it soon (a writer waits for it up
/// to 10 ms, then copies the set); [`LiveSet::snapshot`] is for holding one longer.
pub struct Snapshot<Id>(arc_swap::Guard<Arc<SubscriptionSet<Id>>>);

impl<Id> std::ops::Deref for Snapshot<Id> {
    type Target = SubscriptionSet<Id>;

    fn deref(&self) -> &SubscriptionSet<Id> {
        &self.0
    }
}

impl<Id: fmt::Debug> fmt::Debug for Snapshot<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<Id: Eq + Hash + Clone> LiveSet<Id> {
    /// An empty live set.
    pub fn new() -> LiveSet<Id> {
        LiveSet::default()
    }

    /// The published set, for matching: lock-free, never waits for a writer.
    pub fn load(&self) -> Snapshot<Id> {
        Snapshot(self.published.load())
    }

    /// The published set as an [`Arc`], to hold as long as wanted (a writer then copies the set
    /// once instead of reusing this copy).
    pub fn snapshot(&self) -> Arc<SubscriptionSet<Id>> {
        self.published.load_full()
    }

    /// Inserts (or replaces) subscription `id` and publishes the set ([`SubscriptionSet::insert`];
    /// the filter is kept until the second copy has it too).
    pub fn insert(&self, id: Id, filter: impl Into<Arc<Filter>>) -> Result<Insertion, InsertError> {
        let applied = self.apply([Change::Insert(id, filter.into())]);
        match applied.into_iter().next() {
            Some(Ok(Applied::Replaced)) => Ok(Insertion::Replaced),
            Some(Ok(_)) => Ok(Insertion::Added),
            Some(Err(e)) => Err(e),
            None => Err(InsertError::Full),
        }
    }

    /// Removes subscription `id` and publishes the set; false when it was not there.
    pub fn remove(&self, id: &Id) -> bool {
        let applied = self.apply([Change::Remove(id.clone())]);
        matches!(applied.first(), Some(Ok(Applied::Removed)))
    }

    /// Applies `changes` in order and publishes the result at once: readers see all of them or
    /// none. Returns what each change did. Nothing is published when no change changed anything.
    pub fn apply(
        &self,
        changes: impl IntoIterator<Item = Change<Id>>,
    ) -> Vec<Result<Applied, InsertError>> {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut set = self.take_hidden(&mut writer);
        // Catch up with what was published last time, then this batch.
        for change in writer.behind.drain(..) {
            let _ = apply_one(&mut set, &change);
        }
        let mut results = Vec::new();
        let mut done = Vec::new();
        for change in changes {
            let result = apply_one(&mut set, &change);
            if matches!(
                result,
                Ok(Applied::Added | Applied::Replaced | Applied::Removed)
            ) {
                done.push(change);
            }
            results.push(result);
        }
        if done.is_empty() {
            writer.hidden = Some(Arc::new(set));
            return results;
        }
        let previous = self.published.swap(Arc::new(set));
        writer.hidden = Some(previous);
        writer.behind = done;
        results
    }

    /// The hidden copy, owned: once no reader holds it any more (waiting up to
    /// [`STRAGGLER_WAIT`]), else a copy of the published set (which has every change).
    fn take_hidden(&self, writer: &mut Writer<Id>) -> SubscriptionSet<Id> {
        let deadline = Instant::now() + STRAGGLER_WAIT;
        let mut hidden = writer.hidden.take();
        loop {
            match hidden.map(Arc::try_unwrap) {
                Some(Ok(set)) => return set,
                Some(Err(shared)) if Instant::now() < deadline => {
                    hidden = Some(shared);
                    std::thread::yield_now();
                }
                _ => {
                    writer.behind.clear();
                    return SubscriptionSet::clone(&self.published.load());
                }
            }
        }
    }

    /// The number of subscriptions published.
    pub fn len(&self) -> usize {
        self.published.load().len()
    }

    /// Whether the published set is empty.
    pub fn is_empty(&self) -> bool {
        self.published.load().is_empty()
    }

    /// The heap bytes of both copies (see [`SubscriptionSet::heap_bytes`]).
    pub fn heap_bytes(&self) -> usize {
        let writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.published.load().heap_bytes()
            + writer.hidden.as_ref().map_or(0, |h| h.heap_bytes())
            + writer.behind.capacity() * size_of::<Change<Id>>()
    }
}

fn apply_one<Id: Eq + Hash + Clone>(
    set: &mut SubscriptionSet<Id>,
    change: &Change<Id>,
) -> Result<Applied, InsertError> {
    match change {
        Change::Insert(id, filter) => set.insert(id.clone(), filter).map(|i| match i {
            Insertion::Added => Applied::Added,
            Insertion::Replaced => Applied::Replaced,
        }),
        Change::Remove(id) => Ok(if set.remove(id) {
            Applied::Removed
        } else {
            Applied::NotFound
        }),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn many_hits_come_out_in_handle_order_like_a_sort() {
        let mut words = Vec::new();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for (count, spread) in [
            (0, 10),
            (1, 10),
            (63, 100),
            (64, 64),
            (64, 100_000),
            (500, 10_000),
            (3_000, 3_000),
            (40, 1_000_000),
            (570, 1_000_000),
            (32, 2_048),
            (200, 1 << 31),
        ] {
            let mut all: Vec<super::Handle> = Vec::new();
            while all.len() < count {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let h = (seed % spread) as super::Handle;
                if !all.contains(&h) {
                    all.push(h);
                }
            }
            let mut expected = all.clone();
            expected.sort_unstable();
            let bound = usize::try_from(spread).unwrap();
            super::sort_handles(&mut all, &mut words, bound);
            assert_eq!(all, expected, "{count} hits below {spread}");
            // The bitmap is left all zeros for the next message.
            assert!(words.iter().all(|&w| w == 0), "{count} hits below {spread}");
        }
        // A handle beyond the bound the caller gave is still placed (by the sort).
        let mut beyond: Vec<super::Handle> = (0..100).rev().collect();
        super::sort_handles(&mut beyond, &mut words, 64);
        assert_eq!(beyond, (0..100).collect::<Vec<_>>());
    }

    use super::*;
    use crate::{Dialect, Evaluator, SnsScope, compile, compile_text};
    use ahash::AHashMap;
    use filtervm_vm::message::AttributeType;
    use serde_json::json;

    fn sns(policy: serde_json::Value) -> Filter {
        compile(Dialect::Sns, &policy, &Dialect::Sns.into()).unwrap()
    }

    fn body_filter(policy: serde_json::Value) -> Filter {
        compile(Dialect::Sns, &policy, &SnsScope::MessageBody.into()).unwrap()
    }

    fn attrs<'a>(
        pairs: &'a [(&'a str, AttributeType, &'a str)],
    ) -> MessageParts<'a, [(&'a str, AttributeType, &'a str)]> {
        MessageParts::attributes(pairs)
    }

    fn ids<Id: Clone>(m: &Matches<'_, Id>) -> Vec<Id> {
        m.ids().cloned().collect()
    }

    /// The only group's figures.
    fn stats<Id>(set: &SubscriptionSet<Id>) -> (usize, usize, usize) {
        let all = set.group_stats();
        assert!(all.len() <= 1, "{} groups", all.len());
        all.first().map_or((0, 0, 0), |g| {
            (g.keys, g.distinct_tests, g.distinct_filters)
        })
    }

    #[test]
    fn seed_4096_subscribers_on_one_filter_cost_one_evaluation() {
        let mut set = SubscriptionSet::new();
        for id in 0..4096u64 {
            set.insert(id, &sns(json!({"event": ["order.paid"], "env": ["prod"]})))
                .unwrap();
        }
        // The same filter written in another order.
        set.insert(
            5000,
            &sns(json!({"env": ["prod"], "event": ["order.paid"]})),
        )
        .unwrap();
        assert_eq!(set.distinct_filters(), 1);
        assert_eq!(set.len(), 4097);
        let m = [
            ("event", AttributeType::String, "order.paid"),
            ("env", AttributeType::String, "prod"),
        ];
        let mut scratch = SetScratch::new();
        let matches = set.matching(&mut scratch, &attrs(&m));
        assert_eq!(matches.len(), 4097);
        assert_eq!(
            matches.filters_evaluated(),
            1,
            "one distinct filter, one evaluation"
        );
        // In insertion order.
        let expected: Vec<u64> = (0..4096).chain([5000]).collect();
        assert_eq!(ids(&matches), expected);
        for id in 0..4096 {
            assert!(set.remove(&id));
        }
        assert_eq!(ids(&set.matching(&mut scratch, &attrs(&m))), [5000]);
        assert!(set.remove(&5000));
        assert_eq!(set.distinct_filters(), 0);
        assert_eq!(stats(&set), (0, 0, 0));
        let matches = set.matching(&mut scratch, &attrs(&m));
        assert!(matches.is_empty() && matches.is_complete());
        assert_eq!(matches.filters_evaluated(), 0);
    }

    #[test]
    fn identical_tests_are_interned_across_filters() {
        let mut set = SubscriptionSet::new();
        set.insert(1, &sns(json!({"a": [{"prefix": "x"}], "b": ["1"]})))
            .unwrap();
        set.insert(2, &sns(json!({"a": [{"prefix": "x"}], "b": ["2"]})))
            .unwrap();
        set.insert(3, &sns(json!({"a": [{"prefix": "x"}]})))
            .unwrap();
        assert_eq!(set.distinct_filters(), 3);
        assert_eq!(stats(&set).1, 3);
        let m = [
            ("a", AttributeType::String, "xy"),
            ("b", AttributeType::String, "2"),
        ];
        assert_eq!(
            ids(&set.matching(&mut SetScratch::new(), &attrs(&m))),
            [2, 3]
        );
    }

    #[test]
    fn a_set_is_shared_by_threads_each_with_its_scratch() {
        fn shared<T: Send + Sync>() {}
        fn owned<T: Send>() {}
        shared::<SubscriptionSet<String>>();
        shared::<LiveSet<String>>();
        shared::<UnjudgedError>();
        owned::<SetScratch>();
    }

    #[test]
    fn insert_replaces_in_place_and_remove_reports_absence() {
        let mut set = SubscriptionSet::new();
        let m = [("a", AttributeType::String, "2")];
        let mut scratch = SetScratch::new();
        assert_eq!(
            set.insert("x".to_owned(), &sns(json!({"a": ["1"]}))),
            Ok(Insertion::Added)
        );
        assert_eq!(
            set.insert("y".to_owned(), &sns(json!({"a": ["2"]}))),
            Ok(Insertion::Added)
        );
        // Replaced: `x` keeps its place before `y`, and may move to another group.
        assert_eq!(
            set.insert("x".to_owned(), &sns(json!({"a": ["2"]}))),
            Ok(Insertion::Replaced)
        );
        assert_eq!(set.len(), 2);
        assert_eq!(ids(&set.matching(&mut scratch, &attrs(&m))), ["x", "y"]);
        let basaltic =
            compile(Dialect::Basaltic, &json!({"a": ["2"]}), &Options::Basaltic).unwrap();
        assert_eq!(
            set.insert("x".to_owned(), &basaltic),
            Ok(Insertion::Replaced)
        );
        assert_eq!(set.groups(), 2);
        assert_eq!(ids(&set.matching(&mut scratch, &attrs(&m))), ["x", "y"]);
        // Found by `&str`; removed and inserted again: last.
        assert!(set.contains("x"));
        assert!(set.remove("x"));
        assert!(!set.remove("x"));
        assert_eq!(set.groups(), 1, "the emptied basaltic group is freed");
        set.insert("x".to_owned(), &sns(json!({"a": ["2"]})))
            .unwrap();
        assert_eq!(ids(&set.matching(&mut scratch, &attrs(&m))), ["y", "x"]);
        assert_eq!(set.ids().collect::<Vec<_>>(), ["y", "x"]);
        assert!(set.remove("x") && set.remove("y"));
        assert_eq!(stats(&set), (0, 0, 0));
        assert_eq!(set.heap_bytes(), 0, "an emptied set holds nothing");
    }

    #[test]
    fn numeric_points_are_indexed_and_ranges_memoized() {
        let mut set = SubscriptionSet::new();
        set.insert(1, &sns(json!({"p": [3, 4]}))).unwrap();
        set.insert(2, &sns(json!({"p": [{"numeric": [">", 3]}]})))
            .unwrap();
        set.insert(3, &sns(json!({"p": [{"anything-but": [4]}]})))
            .unwrap();
        let mut scratch = SetScratch::new();
        let mut at = |v: &str| {
            let m = [("p", AttributeType::Number, v)];
            ids(&set.matching(&mut scratch, &attrs(&m)))
        };
        assert_eq!(at("4.0"), [1, 2]);
        assert_eq!(at("3"), [1, 3]);
        assert_eq!(at("-0"), [3]);
    }

    /// Every dialect and options value in one set; each group reads its part of the message.
    #[test]
    fn one_set_holds_every_dialect_and_reads_each_part() {
        let mut set = SubscriptionSet::new();
        set.insert("sns", &sns(json!({"event": ["paid"]}))).unwrap();
        // The default options spelled out are the same options: the same group.
        let spelled =
            Options::from_json(Dialect::Sns, r#"{"scope": "MessageAttributes"}"#).unwrap();
        set.insert(
            "sns2",
            &compile(Dialect::Sns, &json!({"event": ["paid"]}), &spelled).unwrap(),
        )
        .unwrap();
        set.insert(
            "basaltic",
            &compile(
                Dialect::Basaltic,
                &json!({"event": ["paid"]}),
                &Options::Basaltic,
            )
            .unwrap(),
        )
        .unwrap();
        set.insert(
            "body",
            &body_filter(json!({"total": [{"numeric": [">", 10]}]})),
        )
        .unwrap();
        set.insert(
            "grid",
            &compile_text(
                Dialect::EventGrid,
                r#"{"subjectBeginsWith": "/orders"}"#,
                &Dialect::EventGrid.into(),
            )
            .unwrap(),
        )
        .unwrap();
        set.insert(
            "stream",
            &compile_text(Dialect::Stream, "region = eu-*", &Options::Stream).unwrap(),
        )
        .unwrap();
        set.insert(
            "expr",
            &compile(
                Dialect::Expr,
                &json!({"key": "region", "op": "startsWith", "value": "eu"}),
                &Dialect::Expr.into(),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(set.groups(), 6);
        assert_eq!(set.distinct_filters(), 6, "sns and sns2 share their filter");
        let attributes = [("event", AttributeType::String, "paid")];
        let headers = [("region", "eu-west")];
        let body = br#"{"total": 12, "subject": "/orders/1"}"#;
        let full = MessageParts::body(body)
            .with_attributes(&attributes[..])
            .with_headers(&headers[..]);
        let mut scratch = SetScratch::new();
        let matches = set.matching(&mut scratch, &full);
        assert!(matches.is_complete(), "{matches:?}");
        assert_eq!(
            ids(&matches),
            ["sns", "sns2", "basaltic", "body", "grid", "stream", "expr"]
        );
        // The same answers one filter at a time.
        let mut evaluator = Evaluator::new();
        for filter in [
            sns(json!({"event": ["paid"]})),
            body_filter(json!({"total": [{"numeric": [">", 10]}]})),
        ] {
            assert_eq!(evaluator.matches_parts(&filter, &full), Ok(true));
        }

        // Without headers: the stream and expr groups cannot judge it, and say so.
        let no_headers = MessageParts::body(body).with_attributes(&attributes[..]);
        let matches = set.matching(&mut scratch, &no_headers);
        assert_eq!(ids(&matches), ["sns", "sns2", "basaltic", "body", "grid"]);
        assert!(!matches.is_complete());
        let unjudged: Vec<UnjudgedGroup> = matches.unjudged().collect();
        assert_eq!(
            unjudged
                .iter()
                .map(|u| (u.options.dialect(), u.subscriptions, u.error.code))
                .collect::<Vec<_>>(),
            [
                (Dialect::Stream, 1, ErrorCode::MessageShape),
                (Dialect::Expr, 1, ErrorCode::MessageShape)
            ]
        );
        assert!(
            unjudged[0]
                .error
                .message
                .contains("the message has attributes and body"),
            "{}",
            unjudged[0].error
        );
        let e = set.try_matching(&mut scratch, &no_headers).unwrap_err();
        assert_eq!(e.groups, unjudged);
        assert!(
            e.to_string()
                .starts_with("1 stream subscription could not judge the message: MESSAGE_SHAPE"),
            "{e}"
        );

        // A body alone: the sns and basaltic groups judge a message with no attributes (sns
        // rule 12, B-2), the body groups judge the body, the header groups report.
        let matches = set.matching(&mut scratch, &MessageParts::body(body));
        assert_eq!(ids(&matches), ["body", "grid"]);
        let dialects: Vec<Dialect> = matches.unjudged().map(|u| u.options.dialect()).collect();
        assert_eq!(dialects, [Dialect::Stream, Dialect::Expr]);

        // A stream header given two values: the stream group alone cannot judge it.
        let two = [("region", "eu-west"), ("region", "eu-north")];
        let matches = set.matching(
            &mut scratch,
            &MessageParts::body(body)
                .with_attributes(&attributes[..])
                .with_headers(&two[..]),
        );
        assert_eq!(
            ids(&matches),
            ["sns", "sns2", "basaltic", "body", "grid", "expr"]
        );
        let unjudged: Vec<UnjudgedGroup> = matches.unjudged().collect();
        assert_eq!(unjudged.len(), 1);
        assert_eq!(
            (
                unjudged[0].options.dialect(),
                unjudged[0].error.code,
                unjudged[0].error.pointer.as_str()
            ),
            (
                Dialect::Stream,
                ErrorCode::InvalidMessage,
                "/headers/region"
            )
        );

        // An Event Grid batch given whole: the grid group refuses it, the others judge.
        let batch = br#"[{"subject": "/orders/1"}, {"subject": "/orders/2"}]"#;
        let matches = set.matching_document(&mut scratch, batch);
        let grid = matches
            .unjudged()
            .find(|u| u.options.dialect() == Dialect::EventGrid)
            .unwrap();
        assert_eq!(grid.error.code, ErrorCode::InvalidMessage);
        assert!(
            grid.error.message.contains("read_messages"),
            "{}",
            grid.error
        );
        // Event by event, as `filtervm route` reads it: the grid group judges each event.
        let mut per_event = Vec::new();
        set.matching_messages(&mut scratch, batch, |event, matches| {
            per_event.push((event, ids(matches).contains(&"grid")));
        });
        assert_eq!(per_event, [(Some(0), true), (Some(1), true)]);
    }

    /// Only `eventgrid` filters read an array as a batch: a set without them judges an array
    /// line once, as `filtervm match` does, and an EventBridge group reports the one
    /// `INVALID_MESSAGE` an array is to it (EB-3); beside an `eventgrid` group the line is
    /// split, the EventBridge group judging the whole line for each event.
    #[test]
    fn an_array_is_a_batch_only_to_a_set_that_reads_events() {
        let mut set = SubscriptionSet::new();
        let pattern = compile(
            Dialect::EventBridge,
            &json!({"subject": ["/orders/1"]}),
            &Dialect::EventBridge.into(),
        )
        .unwrap();
        set.insert("eb", &pattern).unwrap();
        let mut scratch = SetScratch::new();
        let batch = br#"[{"subject": "/orders/1"}, {"subject": "/orders/2"}]"#;
        let mut seen = Vec::new();
        set.matching_messages(&mut scratch, batch, |event, matches| {
            let codes: Vec<ErrorCode> = matches.unjudged().map(|u| u.error.code).collect();
            seen.push((event, ids(matches).len(), codes));
        });
        assert_eq!(seen, [(None, 0, vec![ErrorCode::InvalidMessage])]);
        let grid = compile_text(
            Dialect::EventGrid,
            r#"{"subjectBeginsWith": "/orders/1"}"#,
            &Dialect::EventGrid.into(),
        )
        .unwrap();
        set.insert("grid", &grid).unwrap();
        let mut seen = Vec::new();
        set.matching_messages(&mut scratch, batch, |event, matches| {
            let codes: Vec<ErrorCode> = matches.unjudged().map(|u| u.error.code).collect();
            seen.push((event, ids(matches), codes));
        });
        assert_eq!(
            seen,
            [
                (Some(0), vec!["grid"], vec![ErrorCode::InvalidMessage]),
                (Some(1), vec![], vec![ErrorCode::InvalidMessage]),
            ]
        );
    }

    /// A document some group cannot read (its part in the wrong form) leaves that group
    /// unjudged; the others judge it.
    #[test]
    fn a_document_unreadable_for_one_group_is_judged_by_the_others() {
        let mut set = SubscriptionSet::new();
        set.insert("attrs", &sns(json!({"a": ["x"]}))).unwrap();
        set.insert("body", &body_filter(json!({"b": ["y"]})))
            .unwrap();
        let mut scratch = SetScratch::new();
        let doc =
            br#"{"attributes": {"a": {"Type": "Strung", "Value": "x"}}, "body": "{\"b\": \"y\"}"}"#;
        let matches = set.matching_document(&mut scratch, doc);
        assert_eq!(ids(&matches), ["body"]);
        let unjudged: Vec<UnjudgedGroup> = matches.unjudged().collect();
        assert_eq!(
            (unjudged[0].error.code, unjudged[0].error.pointer.as_str()),
            (ErrorCode::InvalidMessage, "/attributes/a/Type")
        );
        // Not JSON at all: every group reports it.
        let matches = set.matching_document(&mut scratch, b"{oops");
        assert!(matches.is_empty());
        assert!(
            matches
                .unjudged()
                .all(|u| u.error.code == ErrorCode::MessageNotJson)
        );
        assert_eq!(matches.unjudged().count(), 2);
    }

    #[test]
    fn bodies_that_cannot_be_judged_are_reported_sns_text_keeps_its_meaning() {
        let mut set = SubscriptionSet::new();
        set.insert(1, &body_filter(json!({}))).unwrap();
        set.insert(2, &body_filter(json!({"a": ["x"]}))).unwrap();
        set.insert(
            3,
            &compile_text(
                Dialect::EventGrid,
                r#"{"subjectBeginsWith": "/a"}"#,
                &Dialect::EventGrid.into(),
            )
            .unwrap(),
        )
        .unwrap();
        let mut scratch = SetScratch::new();
        // Not JSON: a verdict for SNS (only the policy reading nothing matches), an error for
        // the Event Grid group.
        let matches = set.matching(&mut scratch, &MessageParts::body(b"plain text"));
        assert_eq!(ids(&matches), [1]);
        let unjudged: Vec<_> = matches.unjudged().collect();
        assert_eq!(unjudged.len(), 1);
        assert_eq!(
            (unjudged[0].options.dialect(), unjudged[0].error.code),
            (Dialect::EventGrid, ErrorCode::MessageNotJson)
        );

        // Too many combinations of array elements: the SNS body group is unjudged.
        let mut set = SubscriptionSet::new();
        set.insert(
            1,
            &body_filter(json!({"A": {"x": [{"exists": false}]}, "B": {"y": [{"exists": false}]}})),
        )
        .unwrap();
        let side = |k: &str| {
            (0..1100)
                .map(|i| format!("{{\"{k}\": {i}}}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let body = format!(
            r#"{{"A": [{}, {{}}], "B": [{}, {{}}]}}"#,
            side("x"),
            side("y")
        );
        let matches = set.matching(&mut scratch, &MessageParts::body(body.as_bytes()));
        assert!(matches.is_empty());
        let unjudged: Vec<_> = matches.unjudged().collect();
        assert_eq!(unjudged[0].error.code, ErrorCode::MessageTooComplex);
        let one = Evaluator::new().matches_parts(
            &body_filter(json!({"A": {"x": [{"exists": false}]}, "B": {"y": [{"exists": false}]}})),
            &MessageParts::body(body.as_bytes()),
        );
        assert_eq!(
            one.unwrap_err().code,
            ErrorCode::MessageTooComplex,
            "as one filter says"
        );
    }

    #[test]
    fn filters_from_bytes_join_and_answer_like_the_compiled_ones() {
        let policies = [
            json!({"event": ["order.paid"], "amount": [{"numeric": [">", 5]}]}),
            json!({"event": [{"prefix": "order."}], "$or": [{"env": ["prod"]}, {"tier": ["gold"]}]}),
            json!({"event": [{"anything-but": ["order.paid"]}]}),
        ];
        let mut compiled = SubscriptionSet::new();
        let mut loaded = SubscriptionSet::new();
        for (i, policy) in policies.iter().enumerate() {
            let filter = sns(policy.clone());
            let from_bytes = Filter::from_bytes(&filter.to_bytes()).unwrap();
            compiled.insert(i, &filter).unwrap();
            loaded.insert(i, &from_bytes).unwrap();
        }
        let mut scratch = SetScratch::new();
        let mut other = SetScratch::new();
        let mut seen = 0;
        for m in [
            [
                ("event", AttributeType::String, "order.paid"),
                ("amount", AttributeType::Number, "7"),
            ],
            [
                ("event", AttributeType::String, "order.shipped"),
                ("tier", AttributeType::String, "gold"),
            ],
            [
                ("event", AttributeType::String, "user.login"),
                ("env", AttributeType::String, "prod"),
            ],
        ] {
            let a = ids(&compiled.matching(&mut scratch, &attrs(&m)));
            let b = ids(&loaded.matching(&mut other, &attrs(&m)));
            assert!(!a.is_empty());
            assert_eq!(a, b);
            seen += a.len();
        }
        assert_eq!(seen, 4);
        // The first wire format shipped no IR: refused, saying what to do.
        let filter = sns(json!({"a": ["x"]}));
        let v1 = filter
            .program()
            .to_bytes_with_metadata(br#"{"dialect":"sns","options":{}}"#);
        let old = Filter::from_bytes(&v1).unwrap();
        let e = loaded.insert(9, &old).unwrap_err();
        assert_eq!(e, InsertError::NoIr);
        assert_eq!(e.code(), Some(ErrorCode::FilterWithoutIr));
        assert!(e.to_string().contains("re-export"), "{e}");
        assert!(!loaded.contains(&9));
    }

    #[test]
    fn a_clone_is_independent() {
        let mut set = SubscriptionSet::new();
        set.insert(1, &sns(json!({"a": ["x"]}))).unwrap();
        let mut copy = set.clone();
        copy.insert(2, &sns(json!({"a": ["x", "y"]}))).unwrap();
        assert!(set.remove(&1));
        let m = [("a", AttributeType::String, "x")];
        let mut scratch = SetScratch::new();
        assert!(set.matching(&mut scratch, &attrs(&m)).is_empty());
        assert_eq!(ids(&copy.matching(&mut scratch, &attrs(&m))), [1, 2]);
    }

    #[test]
    fn matching_with_reads_one_message_per_group() {
        let mut set = SubscriptionSet::new();
        set.insert(1, &sns(json!({"a": ["x"]}))).unwrap();
        set.insert(
            2,
            &compile_text(Dialect::Stream, "h = y", &Options::Stream).unwrap(),
        )
        .unwrap();
        let line =
            r#"{"attributes": {"a": {"Type": "String", "Value": "x"}}, "headers": {"h": "y"}}"#;
        let mut scratch = SetScratch::new();
        let mut asked = Vec::new();
        let matches = set.matching_with(&mut scratch, |options| {
            asked.push(options.dialect());
            crate::message_from_line(options.dialect(), options, line).map(GroupMessage::from)
        });
        assert_eq!(ids(&matches), [1, 2]);
        assert_eq!(asked, [Dialect::Sns, Dialect::Stream]);
        let matches = set.matching_with(&mut scratch, |options| {
            crate::message_from_line(options.dialect(), options, "{oops").map(GroupMessage::from)
        });
        assert_eq!(matches.unjudged().count(), 2);
    }

    #[test]
    fn rebalancing_moves_anchors_off_common_values() {
        let mut set = SubscriptionSet::new();
        // Every filter shares env=prod; events are distinct.
        for i in 0..256u64 {
            set.insert(
                i,
                &sns(json!({"env": ["prod"], "event": [format!("e{i}")]})),
            )
            .unwrap();
        }
        let stats = set.group_stats();
        let on_prod = stats[0]
            .anchors
            .iter()
            .find(|(t, _)| *t == "(attr \"env\" str-eq [\"prod\"])")
            .map_or(0, |(_, n)| *n);
        assert!(on_prod < 16, "{on_prod}");
        let m = [
            ("env", AttributeType::String, "prod"),
            ("event", AttributeType::String, "e77"),
        ];
        assert_eq!(ids(&set.matching(&mut SetScratch::new(), &attrs(&m))), [77]);
    }

    /// A test inside an `$or` branch is no conjunct of the filter: the set must not skip the
    /// filter when it does not hold.
    #[test]
    fn tests_inside_or_branches_are_never_guards_sns() {
        let filter = sns(json!({"t": ["1"], "$or": [{"w": ["0"]}, {"x": ["1"], "z": ["0"]}]}));
        let m = [
            ("t", AttributeType::String, "1"),
            ("w", AttributeType::String, "0"),
        ];
        assert!(Evaluator::new().matches_attributes(&filter, &m[..]));
        let mut set = SubscriptionSet::new();
        set.insert(1, &filter).unwrap();
        assert_eq!(ids(&set.matching(&mut SetScratch::new(), &attrs(&m))), [1]);
    }

    #[test]
    fn tests_inside_or_branches_are_never_guards_expr() {
        let c = |k: &str| json!({"key": k, "op": "in", "value": ["1"]});
        let policy = json!({"op": "AND", "exp": [c("t"), {"op": "OR", "exp": [
            c("w"), {"op": "AND", "exp": [c("x"), c("z")]}]}]});
        let filter = compile(Dialect::Expr, &policy, &Dialect::Expr.into()).unwrap();
        let headers = [("t", "1"), ("w", "1")];
        assert!(Evaluator::new().matches_headers(&filter, &headers[..]));
        let mut set = SubscriptionSet::new();
        set.insert(1, &filter).unwrap();
        let m = MessageParts::headers(&headers[..]);
        assert_eq!(ids(&set.matching(&mut SetScratch::new(), &m)), [1]);
    }

    /// Found by the `policy_set` fuzz target on the set that read guards off the code: `b`, in
    /// the second `$or` branch, was taken for a conjunct.
    #[test]
    fn fuzz_finding_nested_or_with_a_repeated_member() {
        let ip = "2001:0db8:0000:0000:0000:0000:0000:0001";
        let filter = sns(json!({"a.": [ip], "$or": [{"a.": [ip]},
            {"b": ["a\\c"], "$or": [{"a.": [ip]}, {"a.": [ip]}]}]}));
        let m = [
            ("a.", AttributeType::String, ip),
            ("b", AttributeType::String, ip),
        ];
        assert!(Evaluator::new().matches_attributes(&filter, &m[..]));
        let mut set = SubscriptionSet::new();
        set.insert(1, &filter).unwrap();
        assert_eq!(ids(&set.matching(&mut SetScratch::new(), &attrs(&m))), [1]);
    }

    /// When a required test becomes common, rebalancing looks for a rarer one; a rare test inside
    /// an OR branch is none.
    #[test]
    fn rebalancing_never_anchors_on_a_test_inside_an_or() {
        let mut set = SubscriptionSet::new();
        // 64 filters share env=prod, their only required test; their OR branches are rare.
        for i in 0..64u64 {
            let policy = json!({"env": ["prod"], "$or": [
                {"w": [format!("w{i}")]}, {"x": [format!("x{i}")], "z": ["0"]}]});
            set.insert(i, &sns(policy)).unwrap();
        }
        let mut scratch = SetScratch::new();
        for i in 0..64u64 {
            let w = format!("w{i}");
            let m = [
                ("env", AttributeType::String, "prod"),
                ("w", AttributeType::String, w.as_str()),
            ];
            assert_eq!(ids(&set.matching(&mut scratch, &attrs(&m))), [i]);
        }
        assert_eq!(
            set.group_stats()[0].anchors,
            [("(attr \"env\" str-eq [\"prod\"])", 64)]
        );
    }

    /// Rounds of adding and removing subscriptions with keys of their own leave nothing behind:
    /// no key (the bound width is back to zero), no test, no index entry, no memory.
    #[test]
    fn removing_everything_releases_keys_tests_and_memory() {
        let mut set = SubscriptionSet::new();
        let mut scratch = SetScratch::new();
        for round in 0..5 {
            for i in 0..2000u64 {
                let policy = json!({ format!("k{round}_{i}"): ["v"], "event": [format!("e{i}")] });
                set.insert(i, &sns(policy)).unwrap();
            }
            assert_eq!(stats(&set).0, 2001);
            for i in (0..2000u64).rev() {
                assert!(set.remove(&i));
            }
            assert_eq!(stats(&set), (0, 0, 0), "round {round}");
            let m = [("k0_0", AttributeType::String, "v")];
            assert!(set.matching(&mut scratch, &attrs(&m)).is_empty());
            assert_eq!(set.heap_bytes(), 0, "round {round}");
        }
    }

    /// After churn, a set holds about what a fresh set with the surviving subscriptions holds:
    /// keys, tests, filters and slots nobody uses are gone, and so is their memory. Mixed
    /// dialects: the groups churn too.
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
                let policy = json!({
                    format!("key{i}"): [format!("v{}", i % 7)],
                    "env": ["prod", format!("env{}", i % 100)],
                    "n": [{"numeric": [">", i % 50]}],
                });
                if i % 3 == 0 {
                    body_filter(policy)
                } else {
                    sns(policy)
                }
            })
            .collect();
        let mut set = SubscriptionSet::new();
        let mut live: AHashMap<u64, usize> = AHashMap::new();
        for step in 0..22_000u64 {
            // Grow to about 6,000 subscriptions, then shrink to about 1,000.
            let grow = if step < 12_000 { 3 } else { 1 };
            if next(4) < grow {
                let i = next(3000) as usize;
                set.insert(step, &filters[i]).unwrap();
                live.insert(step, i);
            } else if !live.is_empty() {
                let id = *live.keys().nth(next(live.len() as u64) as usize).unwrap();
                assert!(set.remove(&id));
                live.remove(&id);
            }
        }
        let mut fresh = SubscriptionSet::new();
        let mut order: Vec<(&u64, &usize)> = live.iter().collect();
        order.sort();
        for (&id, &i) in order {
            fresh.insert(id, &filters[i]).unwrap();
        }
        assert_eq!(set.len(), fresh.len());
        assert_eq!(
            set.ids().collect::<Vec<_>>(),
            fresh.ids().collect::<Vec<_>>(),
            "insertion order"
        );
        assert_eq!(set.distinct_filters(), fresh.distinct_filters());
        let (churned_groups, fresh_groups) = (set.group_stats(), fresh.group_stats());
        assert_eq!(churned_groups.len(), 2);
        // Groups in the order each set created them, which churn can change: paired by options.
        let pairs = churned_groups.iter().map(|c| {
            let f = fresh_groups.iter().find(|f| f.options == c.options);
            (c, f.expect("the fresh set has the same groups"))
        });
        for (c, f) in pairs {
            assert_eq!(
                (c.distinct_tests, c.distinct_filters),
                (f.distinct_tests, f.distinct_filters)
            );
            // Dead entries never outweigh live ones, so at most twice the live keys are bound.
            assert!(c.keys <= 2 * f.keys, "{} keys, fresh {}", c.keys, f.keys);
        }
        let (churned, new) = (set.heap_bytes(), fresh.heap_bytes());
        assert!(
            churned <= 2 * new,
            "{churned} bytes after churn, {new} fresh"
        );
        let ids: Vec<u64> = live.keys().copied().collect();
        for id in ids {
            set.remove(&id);
        }
        assert_eq!(set.heap_bytes(), 0);
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
        let mut set = SubscriptionSet::new();
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
            set.insert(id, &filter).unwrap();
            filters.push((id, filter));
            if next(10) == 0 {
                let (gone, _) = filters.swap_remove(next(filters.len()));
                assert!(set.remove(&gone));
            }
        }
        filters.sort_by_key(|(id, _)| *id);
        let mut scratch = SetScratch::new();
        let mut evaluator = Evaluator::new();
        for _ in 0..500 {
            let mut owned = Vec::new();
            for key in keys {
                match next(4) {
                    0 => {}
                    1 => owned.push((key, AttributeType::Number, next(6).to_string())),
                    _ => owned.push((key, AttributeType::String, values[next(5)].to_owned())),
                }
            }
            let m: Vec<(&str, AttributeType, &str)> =
                owned.iter().map(|(k, t, v)| (*k, *t, v.as_str())).collect();
            let expected: Vec<u64> = filters
                .iter()
                .filter(|(_, f)| evaluator.matches_attributes(f, &m[..]))
                .map(|(id, _)| *id)
                .collect();
            assert_eq!(ids(&set.matching(&mut scratch, &attrs(&m))), expected);
        }
    }

    /// Differential, on a skewed multi-tenant topic that grows and shrinks: anchors chosen by
    /// how often their tests hold, moved by rebalancing, listed in and taken out of the anchor
    /// index, renumbered by compaction; the set returns exactly what one-by-one evaluation does,
    /// and a message of a tenant no subscription names looks at no filter.
    #[test]
    fn anchors_by_frequency_agree_with_one_by_one_through_churn() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        // Skewed picks: a few tenants, events and regions are most of them.
        let mut skewed = |n: usize| next(n).min(next(n)).min(next(n));
        let mut policies = Vec::new();
        for _ in 0..600 {
            let tenant = format!("t{}", skewed(60));
            let events: Vec<String> = (0..1 + skewed(3))
                .map(|_| format!("e{}", skewed(12)))
                .collect();
            let regions: Vec<String> = (0..1 + skewed(3))
                .map(|_| format!("r{}", skewed(4)))
                .collect();
            let kind = skewed(6);
            let policy = match kind {
                0 => json!({"tenant": [tenant]}),
                1 => json!({"tenant": [tenant], "$or": [{"event": events}, {"region": regions}]}),
                2 => json!({"tenant": [tenant], "amount": [{"numeric": [">=", skewed(9)]}]}),
                3 => json!({"tenant": [tenant], "event": [{"prefix": "e1"}], "region": regions}),
                4 => json!({"region": regions, "event": events}),
                _ => json!({"tenant": [tenant], "event": events, "region": regions}),
            };
            policies.push((body_filter(policy), kind != 4));
        }
        let mut set = SubscriptionSet::new();
        let mut live: Vec<(u64, usize)> = Vec::new();
        let mut scratch = SetScratch::new();
        let mut evaluator = Evaluator::new();
        let mut check = |set: &SubscriptionSet<u64>, live: &[(u64, usize)], round: usize| {
            for m in 0..30 {
                let tenant = if m % 4 == 0 {
                    format!("unknown{m}")
                } else {
                    format!("t{}", (m * 7 + round) % 60 / (1 + m % 3))
                };
                let body = json!({
                    "tenant": tenant,
                    "event": format!("e{}", (m + round) % 13),
                    "region": format!("r{}", m % 5),
                    "amount": (m * 3 + round) % 10,
                })
                .to_string();
                let mut expected: Vec<u64> = live
                    .iter()
                    .filter(|(_, i)| {
                        evaluator
                            .matches_bytes(&policies[*i].0, body.as_bytes())
                            .unwrap()
                    })
                    .map(|(id, _)| *id)
                    .collect();
                expected.sort_unstable();
                let matches = set.matching(&mut scratch, &MessageParts::body(body.as_bytes()));
                let mut got = ids(&matches);
                got.sort_unstable();
                assert_eq!(got, expected, "{body}");
            }
        };
        for step in 0..6_000u64 {
            // Grow to about 1,500 subscriptions, then shrink to a few hundred.
            let grow = if step < 3_500 { 3 } else { 1 };
            if next(4) < grow {
                let i = next(policies.len());
                set.insert(step, &policies[i].0).unwrap();
                live.push((step, i));
            } else if !live.is_empty() {
                let (id, _) = live.swap_remove(next(live.len()));
                assert!(set.remove(&id));
            }
            if step % 1_000 == 999 {
                check(&set, &live, step as usize / 1_000);
            }
        }
        // Every tenant's filters are anchored on their tenant (a key of many values), so a
        // message of an unknown tenant evaluates only the filters that name no tenant.
        let unknown = json!({"tenant": "nobody", "event": "e0", "region": "r0"}).to_string();
        let untenanted = live.iter().filter(|(_, i)| !policies[*i].1).count();
        let m = set.matching(&mut scratch, &MessageParts::body(unknown.as_bytes()));
        assert!(
            m.filters_evaluated() <= untenanted,
            "{} > {untenanted}",
            m.filters_evaluated()
        );
    }
}

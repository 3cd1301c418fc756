//! Binding: a message is resolved once against a key table.
//!
//! Each key of the table gets a [`Slot`] holding its [`Shape`] and its leaves; the VM then reads
//! slots by index, never a hash map. A subscription set shares one key table per group, so a message is bound once
//! for all of its programs. Most messages bind to one *row* of slots; an SNS body whose policy
//! reads several fields under one array of objects binds to one row per element combination, so
//! that conditions are satisfied by the same element (sns rule 18).
//!
//! # The bound form
//!
//! Binding is shaped for evaluation. A [`Slot`] holds its first leaf inline (most keys have one
//! value), and the rest, if any, as a slice; a [`BoundLeaf`] borrows its text from the message
//! (or from the per-message arena, for decoded escapes). Work a test would otherwise repeat on
//! every evaluation is done once per leaf, here, and only where a program needs it:
//!
//! - **String equality as ids.** A key table holds a dictionary of the string constants that its
//!   programs' (or set's) equality tests compare with ([`KeyTable::add_constant`]); a string leaf of
//!   a key that some equality test reads is looked up once, and carries the constant's id
//!   ([`BoundLeaf::eq_id`]). `str_eq` is then an id compare and `str_in` an id-set test.
//! - **Numeric text.** A string leaf of a key that a `text_num_in` test reads
//!   ([`KeyTable::add_text_numbers`]) carries its value as a JSON number (B-10, S9), parsed here.
//!
//! Ids are only meaningful against the table the message was bound to: a [`Bound`] carries the
//! table's [`KeyTable::stamp`], and the executor compares by id only when the program's own table
//! has the same stamp (the executor's decision plans); otherwise it compares text.
//!
//! # Scratch and lifetimes
//!
//! [`Bindings`] is the reusable scratch: a `bumpalo` arena reset for each message, the JSON
//! reader ([`crate::json::Extractor`]) and a few buffers. Binding returns a [`Bound`] that borrows
//! the scratch, the table and the message; once warm, binding a stream of messages allocates
//! nothing.

mod attributes;
mod body;
mod event;
mod headers;
mod tree;

pub use body::{MAX_COPIED_LEAVES, MAX_DEPTH, MAX_ROW_SLOTS};
pub(crate) use headers::any_value as any_header_value;

use crate::json::{self, Extractor, Selector};
use crate::key::Key;
use crate::message::{Attributes, Headers, Message};
use crate::value::{Leaf, LeafTypes, Num, Shape};
use ahash::AHashMap;
use bumpalo::Bump;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The id of no dictionary entry: a leaf that equals no constant (or was not looked up).
pub const NO_ID: u32 = u32::MAX;

/// Dictionaries of at most this many values are searched by comparing; larger ones by hash.
const SMALL_DICTIONARY: usize = 8;

/// The source of [`KeyTable::stamp`]s: every change of any table takes the next one.
static STAMPS: AtomicU64 = AtomicU64::new(1);

fn next_stamp() -> u64 {
    STAMPS.fetch_add(1, Ordering::Relaxed)
}

/// What binding computes for a slot beyond its key: how many equality constants and numeric
/// text readers it has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SlotNeeds {
    /// References to dictionary constants by tests reading this slot: when non-zero, the slot's
    /// string leaves are looked up in the dictionary.
    constants: u32,
    /// Tests reading this slot's leaves as numeric text: when non-zero, its string leaves carry
    /// their text's value as a JSON number.
    text_numbers: u32,
}

impl SlotNeeds {
    /// The same needs without dictionary look-ups (leaves whose ids nobody reads).
    pub(crate) fn without_ids(self) -> SlotNeeds {
        SlotNeeds {
            constants: 0,
            ..self
        }
    }
}

/// The string constants of a table's equality tests: value → id, reference-counted.
#[derive(Debug, Clone, Default)]
struct Dictionary {
    /// By id: the value and its references (0 for a free id, whose value is empty).
    entries: Vec<(Box<str>, u32)>,
    /// Value → id, once the dictionary holds more than [`SMALL_DICTIONARY`] values.
    index: Option<AHashMap<Box<str>, u32>>,
    /// Free ids, reused first.
    free: Vec<u32>,
    /// Bit `n` set when some value ever added was `n` bytes long (bit 63: 63 or more): most
    /// strings equal to no constant are told so without a look-up.
    lengths: u64,
}

impl Dictionary {
    /// The id of `text`, or [`NO_ID`]: a small dictionary is searched in place, a large one
    /// hashed.
    #[inline(always)]
    fn id_of(&self, text: &str) -> u32 {
        if self.lengths >> text.len().min(63) & 1 == 0 {
            return NO_ID;
        }
        if let Some(index) = &self.index {
            return Dictionary::hashed(index, text);
        }
        for (id, (value, refs)) in self.entries.iter().enumerate() {
            if *refs > 0 && crate::exec::same(value.as_bytes(), text.as_bytes()) {
                return idx(id);
            }
        }
        NO_ID
    }

    #[inline]
    fn hashed(index: &AHashMap<Box<str>, u32>, text: &str) -> u32 {
        index.get(text).copied().unwrap_or(NO_ID)
    }

    fn live(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// Adds a reference to `value`; returns its id and whether it is new.
    fn add(&mut self, value: &str) -> (u32, bool) {
        let id = self.id_of(value);
        if let Some((_, refs)) = self.entries.get_mut(id as usize) {
            *refs = refs.saturating_add(1);
            return (id, false);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.entries.push((Box::default(), 0));
                idx(self.entries.len() - 1)
            }
        };
        if let Some(entry) = self.entries.get_mut(id as usize) {
            *entry = (value.into(), 1);
        }
        self.lengths |= 1 << value.len().min(63);
        let live = self.live();
        match &mut self.index {
            Some(index) => {
                index.insert(value.into(), id);
            }
            None if live > SMALL_DICTIONARY => {
                self.index = Some(
                    self.entries
                        .iter()
                        .enumerate()
                        .filter(|(_, (_, refs))| *refs > 0)
                        .map(|(i, (v, _))| (v.clone(), idx(i)))
                        .collect(),
                );
            }
            None => {}
        }
        (id, true)
    }

    /// Drops a reference to `value`; returns whether its id was freed.
    fn release(&mut self, value: &str) -> bool {
        let id = self.id_of(value);
        let Some((stored, refs)) = self.entries.get_mut(id as usize) else {
            return false;
        };
        *refs -= 1;
        if *refs > 0 {
            return false;
        }
        *stored = Box::default();
        if let Some(index) = &mut self.index {
            index.remove(value);
        }
        self.free.push(id);
        if self.live() == 0 {
            *self = Dictionary::default();
        }
        true
    }

    /// The dictionary with its live values renumbered densely, in id order, and no spare
    /// capacity.
    fn compacted(&self) -> Dictionary {
        let mut out = Dictionary::default();
        out.entries.reserve_exact(self.live());
        for (value, refs) in &self.entries {
            if *refs > 0 {
                out.entries.push((value.clone(), *refs));
                out.lengths |= 1 << value.len().min(63);
            }
        }
        if out.entries.len() > SMALL_DICTIONARY {
            let mut index = AHashMap::with_capacity(out.entries.len());
            for (i, (v, _)) in out.entries.iter().enumerate() {
                index.insert(v.clone(), idx(i));
            }
            out.index = Some(index);
        }
        out
    }

    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let texts: usize = self.entries.iter().map(|(v, _)| v.len()).sum();
        self.entries.capacity() * size_of::<(Box<str>, u32)>()
            + self.free.capacity() * 4
            + texts
            + self.index.as_ref().map_or(0, |index| {
                map_bytes(index.capacity(), size_of::<(Box<str>, u32)>()) + texts
            })
    }
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The keys a program (or a set of programs) reads, each interned once, with what binding must
/// compute for them.
///
/// Each key has a *slot*, its index in the bound rows. A program's table only grows. A table
/// shared by many holders (a subscription set) counts references: every [`KeyTable::intern`] adds one,
/// [`KeyTable::release`] drops one, and a slot whose count reaches zero is *released*: its key is
/// forgotten and the slot holds [`KeyTable::released_key`], which nobody reads, until the next new
/// key reuses it. [`KeyTable::compact`] removes the released slots, renumbering the others, so
/// that the bound width shrinks with the table.
///
/// The table also holds the dictionary of equality constants and the per-slot needs described in
/// the module documentation, each reference-counted the same way, and the JSON [`Selector`] of
/// its body or event keys (built on first use after a change, shared by every message).
#[derive(Debug, Clone, Default)]
pub struct KeyTable {
    keys: Vec<Key>,
    /// Key → slot, once the table holds more than [`SMALL_TABLE`] live keys; smaller tables (a
    /// program's) are searched by comparing, so building one copies no key.
    index: Option<AHashMap<Key, u32>>,
    /// Attribute and header names → the slots of the keys that read them, so that binding looks
    /// each of the message's names up once instead of scanning the message once per key. Kept up
    /// to date once the table has more than [`SCAN_KEYS`] named keys; a smaller table is bound by
    /// scanning its names ([`NameScan`]) and builds its name index only when asked for it
    /// (`small_names`).
    names: Option<NameIndex>,
    /// The name index of a table without `names`, built on first use after a change.
    small_names: OnceLock<NameIndex>,
    /// The slot of [`Key::AnyAttribute`], if interned.
    any_attribute: Option<u32>,
    /// Per slot: the number of references (0 for a released slot).
    refs: Vec<u32>,
    /// The released slots, reused first by new keys.
    free: Vec<u32>,
    /// Per slot: what binding computes for its leaves.
    needs: Vec<SlotNeeds>,
    /// The equality constants.
    dictionary: Dictionary,
    /// How many keys read a JSON body (sns: [`Key::BodyPath`], [`Key::BodyPathEach`],
    /// [`Key::BodyIsObject`]); JSON is bound as an Event Grid event when there are none.
    body_keys: u32,
    /// Changes with every change of the table (see [`KeyTable::stamp`]).
    stamp: u64,
    /// The selector of the JSON keys, built on first use.
    selector: OnceLock<Selector>,
    /// How many attribute and header keys there are.
    named_keys: u32,
    /// The attribute and header keys as a list to scan, when there are few (built on first use).
    scan: OnceLock<Option<NameScan>>,
    /// The header keys as a list to scan, when there are few (built on first use).
    header_scan: OnceLock<Option<HeaderScan>>,
    /// The body keys, for the body binder (built on first use).
    body: OnceLock<body::BodyPlan>,
}

/// Name → the slots of the attribute and header keys that read it.
type NameIndex = AHashMap<Box<str>, Vec<u32>>;

/// Tables of at most this many live keys find a key by comparing it with each; larger ones
/// (a set's) by hash.
const SMALL_TABLE: usize = 16;

/// Attribute and header tables of at most this many named keys are bound by comparing each of
/// the message's names with the keys' ([`NameScan`]); larger ones look each name up in the
/// table's name index. Measured (iai, 8 attributes): hashing a name costs about as much as
/// comparing it against a dozen keys.
const SCAN_KEYS: usize = 12;

/// A table's attribute and header keys, for scanning.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameScan {
    /// Bit `n` is set when some key's name is `n` bytes long (bit 63: 63 or more), so most of a
    /// message's names are passed over after one test.
    lengths: u64,
    /// Name, slot and key.
    pub(crate) keys: Vec<(Box<str>, u32, Key)>,
}

impl NameScan {
    /// Whether some key's name may be `len` bytes long.
    #[inline(always)]
    pub(crate) fn may_have(&self, len: usize) -> bool {
        self.lengths >> len.min(63) & 1 == 1
    }
}

/// A table's header keys, for scanning: each name with its slot and what binding computes for
/// its leaves (a name has at most one header key).
#[derive(Debug, Clone, Default)]
pub(crate) struct HeaderScan {
    /// As [`NameScan`]'s.
    lengths: u64,
    /// Name, slot and needs (read as flags: only whether each count is zero matters, and every
    /// change that flips one rebuilds the scan).
    keys: Vec<(Box<str>, u32, SlotNeeds)>,
}

impl HeaderScan {
    /// Whether some key's name may be `len` bytes long.
    #[inline(always)]
    pub(crate) fn may_have(&self, len: usize) -> bool {
        self.lengths >> len.min(63) & 1 == 1
    }

    /// Name, slot and needs of each header key.
    #[inline(always)]
    pub(crate) fn keys(&self) -> &[(Box<str>, u32, SlotNeeds)] {
        &self.keys
    }
}

/// Two tables are equal when they hold the same keys in the same slots (reference counts,
/// dictionary and needs aside).
impl PartialEq for KeyTable {
    fn eq(&self, other: &KeyTable) -> bool {
        self.keys == other.keys
    }
}

impl KeyTable {
    /// The key a released slot holds until it is reused or compacted away: the text of an
    /// attribute named `""`. Binding headers, bodies and events ignores attribute keys; binding
    /// attributes may fill the slot for an attribute of that name, which nobody reads (the
    /// table's index does not know the slot).
    pub fn released_key() -> Key {
        Key::AttributeText(Box::default())
    }

    /// An empty table.
    pub fn new() -> KeyTable {
        KeyTable::default()
    }

    /// Notes a change: a new stamp, and the selector to be rebuilt.
    fn changed(&mut self) {
        self.stamp = next_stamp();
        if self.selector.get().is_some() {
            self.selector = OnceLock::new();
        }
        if self.scan.get().is_some() {
            self.scan = OnceLock::new();
        }
        if self.header_scan.get().is_some() {
            self.header_scan = OnceLock::new();
        }
        if self.small_names.get().is_some() {
            self.small_names = OnceLock::new();
        }
        if self.body.get().is_some() {
            self.body = OnceLock::new();
        }
    }

    /// Builds what binding derives from the keys (the selector of JSON keys, the scan list of
    /// names, the body plan) now rather than on the first message bound to the table, for a
    /// caller that wants the first message to cost what the others do.
    pub fn prepare(&self) {
        let json = self
            .keys
            .iter()
            .any(|k| matches!(k, Key::EventMember(_) | Key::EventData(_)));
        if json || self.reads_body() {
            self.selector();
        }
        if self.reads_body() {
            self.body_plan();
        }
        if self.named_keys > 0 {
            self.name_scan();
            self.header_scan();
        }
    }

    /// The body keys as the body binder reads them, built on first use after a change.
    #[inline]
    pub(crate) fn body_plan(&self) -> &body::BodyPlan {
        self.body.get_or_init(|| body::BodyPlan::new(&self.keys))
    }

    /// The attribute and header keys as a list to scan, when there are at most [`SCAN_KEYS`]
    /// (else `None`: look names up with [`KeyTable::slots_named`]). Built on first use after a
    /// change.
    #[inline]
    pub(crate) fn name_scan(&self) -> Option<&NameScan> {
        self.scan
            .get_or_init(|| {
                (self.named_keys as usize <= SCAN_KEYS).then(|| {
                    let mut scan = NameScan::default();
                    for (i, key) in self.keys.iter().enumerate() {
                        if let Key::AttributeText(n) | Key::AttributeTyped(n) | Key::Header(n) = key
                            && self.refs.get(i).is_some_and(|&r| r > 0)
                        {
                            scan.lengths |= 1 << n.len().min(63);
                            scan.keys.push((n.clone(), idx(i), key.clone()));
                        }
                    }
                    scan
                })
            })
            .as_ref()
    }

    /// The header keys as a list to scan, when the table has at most [`SCAN_KEYS`] attribute and
    /// header keys (else `None`: look names up with [`KeyTable::slots_named`]). Built on first
    /// use after a change.
    #[inline]
    pub(crate) fn header_scan(&self) -> Option<&HeaderScan> {
        self.header_scan
            .get_or_init(|| {
                (self.named_keys as usize <= SCAN_KEYS).then(|| {
                    let mut scan = HeaderScan::default();
                    for (i, key) in self.keys.iter().enumerate() {
                        if let Key::Header(n) = key
                            && self.refs.get(i).is_some_and(|&r| r > 0)
                        {
                            let slot = idx(i);
                            scan.lengths |= 1 << n.len().min(63);
                            scan.keys.push((n.clone(), slot, self.needs(slot)));
                        }
                    }
                    scan
                })
            })
            .as_ref()
    }

    /// Identifies the table's contents for binding: two tables with the same stamp bind every
    /// message alike (same slots, same dictionary ids, same needs). A clone keeps the stamp; any
    /// change that affects binding takes a new one. Empty tables share stamp 0.
    #[inline]
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Interns `key`, returning its slot index, and adds a reference to it.
    pub fn intern(&mut self, key: Key) -> u32 {
        if let Some(i) = self.add_reference(&key) {
            return i;
        }
        self.insert_new(key)
    }

    /// [`KeyTable::intern`] of a borrowed key: it is copied only when new to the table.
    pub fn intern_ref(&mut self, key: &Key) -> u32 {
        if let Some(i) = self.add_reference(key) {
            return i;
        }
        self.insert_new(key.clone())
    }

    /// Adds a reference to `key` when the table holds it; returns its slot.
    fn add_reference(&mut self, key: &Key) -> Option<u32> {
        let i = self.get(key)?;
        if let Some(r) = self.refs.get_mut(i as usize) {
            *r = r.saturating_add(1);
        }
        Some(i)
    }

    /// Puts `key`, which the table does not hold, in a slot with one reference.
    fn insert_new(&mut self, key: Key) -> u32 {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.keys.push(KeyTable::released_key());
                self.refs.push(0);
                self.needs.push(SlotNeeds::default());
                idx(self.keys.len() - 1)
            }
        };
        self.link(i, &key);
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), i);
        }
        if let Some(k) = self.keys.get_mut(i as usize) {
            *k = key;
        }
        if let Some(r) = self.refs.get_mut(i as usize) {
            *r = 1;
        }
        if self.index.is_none() && self.keys.len() - self.free.len() > SMALL_TABLE {
            self.index = Some(self.live_index());
        }
        self.changed();
        i
    }

    /// Key → slot of the live keys.
    fn live_index(&self) -> AHashMap<Key, u32> {
        self.keys
            .iter()
            .zip(&self.refs)
            .enumerate()
            .filter(|(_, (_, refs))| **refs > 0)
            .map(|(i, (key, _))| (key.clone(), idx(i)))
            .collect()
    }

    /// Drops a reference to the key in `slot`; when it was the last, the slot is released (see
    /// [`KeyTable::released_key`]). Returns whether it was.
    pub fn release(&mut self, slot: u32) -> bool {
        let Some(r) = self.refs.get_mut(slot as usize) else {
            return false;
        };
        if *r == 0 {
            return false;
        }
        *r -= 1;
        if *r > 0 {
            return false;
        }
        let Some(key) = self
            .keys
            .get_mut(slot as usize)
            .map(|k| std::mem::replace(k, KeyTable::released_key()))
        else {
            return false;
        };
        if let Some(n) = self.needs.get_mut(slot as usize) {
            *n = SlotNeeds::default();
        }
        if let Some(index) = &mut self.index {
            index.remove(&key);
        }
        self.unlink(slot, &key);
        self.free.push(slot);
        self.changed();
        true
    }

    /// Removes the released slots: the live keys move down, in order, to slots `0..live`; the
    /// dictionary's live values are renumbered densely too (look their new ids up with
    /// [`KeyTable::constant_id`]). Returns each old slot's new slot (`u32::MAX` for a released
    /// one). The table keeps no spare capacity.
    pub fn compact(&mut self) -> Vec<u32> {
        let old_keys = std::mem::take(&mut self.keys);
        let old_refs = std::mem::take(&mut self.refs);
        let old_needs = std::mem::take(&mut self.needs);
        let mut moved = Vec::with_capacity(old_keys.len());
        let live = old_refs.iter().filter(|&&r| r > 0).count();
        self.keys = Vec::with_capacity(live);
        self.refs = Vec::with_capacity(live);
        self.needs = Vec::with_capacity(live);
        self.index = None;
        self.names = None;
        self.any_attribute = None;
        self.body_keys = 0;
        self.named_keys = 0;
        self.free = Vec::new();
        for ((key, refs), needs) in old_keys.into_iter().zip(old_refs).zip(old_needs) {
            if refs == 0 {
                moved.push(u32::MAX);
                continue;
            }
            let i = idx(self.keys.len());
            moved.push(i);
            self.link(i, &key);
            self.keys.push(key);
            self.refs.push(refs);
            self.needs.push(needs);
        }
        if live > SMALL_TABLE {
            self.index = Some(self.live_index());
        }
        if let Some(names) = &mut self.names {
            names.shrink_to_fit();
        }
        self.dictionary = self.dictionary.compacted();
        self.changed();
        moved
    }

    /// Records `key`'s slot in the name index (or as the any-attribute slot).
    fn link(&mut self, slot: u32, key: &Key) {
        match key {
            Key::AttributeText(name) | Key::AttributeTyped(name) | Key::Header(name) => {
                self.named_keys += 1;
                if self.names.is_none() && self.named_keys as usize > SCAN_KEYS {
                    self.names = Some(self.live_names());
                }
                if let Some(names) = &mut self.names {
                    names.entry(name.clone()).or_default().push(slot);
                }
            }
            Key::AnyAttribute => self.any_attribute = Some(slot),
            Key::BodyPath(_) | Key::BodyPathEach(_) | Key::FieldPath(..) | Key::BodyIsObject => {
                self.body_keys += 1
            }
            _ => {}
        }
    }

    /// Forgets `key`'s slot in the name index (a name has at most one slot per key kind).
    fn unlink(&mut self, slot: u32, key: &Key) {
        match key {
            Key::AttributeText(name) | Key::AttributeTyped(name) | Key::Header(name) => {
                if let Some(names) = &mut self.names
                    && let Some(slots) = names.get_mut(name)
                {
                    slots.retain(|&s| s != slot);
                    if slots.is_empty() {
                        names.remove(name);
                    }
                }
                self.named_keys = self.named_keys.saturating_sub(1);
            }
            Key::AnyAttribute => self.any_attribute = None,
            Key::BodyPath(_) | Key::BodyPathEach(_) | Key::FieldPath(..) | Key::BodyIsObject => {
                self.body_keys = self.body_keys.saturating_sub(1);
            }
            _ => {}
        }
    }

    /// Adds a reference to the string constant `value`, compared with the leaves of `slot` by an
    /// equality test: those leaves are then looked up in the dictionary when bound. Returns the
    /// constant's id (`NO_ID` for a slot out of range).
    pub fn add_constant(&mut self, slot: u32, value: &str) -> u32 {
        if slot as usize >= self.needs.len() {
            return NO_ID;
        }
        self.mark_constants(slot);
        self.add_value(value)
    }

    /// The dictionary half of [`KeyTable::add_constant`]: a reference to `value`, its id.
    pub(crate) fn add_value(&mut self, value: &str) -> u32 {
        let (id, new) = self.dictionary.add(value);
        if new {
            self.changed();
        }
        id
    }

    /// The slot half of [`KeyTable::add_constant`]: `slot`'s leaves are looked up.
    pub(crate) fn mark_constants(&mut self, slot: u32) {
        if let Some(needs) = self.needs.get_mut(slot as usize) {
            needs.constants = needs.constants.saturating_add(1);
            if needs.constants == 1 {
                self.changed();
            }
        }
    }

    /// Drops a reference taken by [`KeyTable::add_constant`].
    pub fn release_constant(&mut self, slot: u32, value: &str) {
        let Some(needs) = self.needs.get_mut(slot as usize) else {
            return;
        };
        needs.constants = needs.constants.saturating_sub(1);
        let last = needs.constants == 0;
        if self.dictionary.release(value) || last {
            self.changed();
        }
    }

    /// The id of the constant `value`, if some equality test of the table compares with it.
    pub fn constant_id(&self, value: &str) -> Option<u32> {
        Some(self.dictionary.id_of(value)).filter(|&id| id != NO_ID)
    }

    /// The number of live constants in the dictionary.
    pub fn constants(&self) -> usize {
        self.dictionary.live()
    }

    /// The number of free dictionary ids (holes [`KeyTable::compact`] removes).
    pub fn free_constants(&self) -> usize {
        self.dictionary.free.len()
    }

    /// Adds a reference to "a test reads the string leaves of `slot` as numbers".
    pub fn add_text_numbers(&mut self, slot: u32) {
        if let Some(needs) = self.needs.get_mut(slot as usize) {
            needs.text_numbers = needs.text_numbers.saturating_add(1);
            if needs.text_numbers == 1 {
                self.changed();
            }
        }
    }

    /// Drops a reference taken by [`KeyTable::add_text_numbers`].
    pub fn release_text_numbers(&mut self, slot: u32) {
        if let Some(needs) = self.needs.get_mut(slot as usize) {
            needs.text_numbers = needs.text_numbers.saturating_sub(1);
            if needs.text_numbers == 0 {
                self.changed();
            }
        }
    }

    /// What binding computes for the string leaves of `slot`.
    #[inline]
    pub(crate) fn needs(&self, slot: u32) -> SlotNeeds {
        self.needs.get(slot as usize).copied().unwrap_or_default()
    }

    /// A string leaf of `slot`, with what the table needs computed.
    #[inline]
    pub(crate) fn str_leaf<'b>(&self, slot: u32, text: &'b str) -> BoundLeaf<'b> {
        self.str_leaf_with(self.needs(slot), text)
    }

    /// A string leaf with what `needs` asks computed.
    #[inline(always)]
    pub(crate) fn str_leaf_with<'b>(&self, needs: SlotNeeds, text: &'b str) -> BoundLeaf<'b> {
        let eq = if needs.constants > 0 {
            self.dictionary.id_of(text)
        } else {
            NO_ID
        };
        let mut leaf = BoundLeaf {
            text,
            num: f64::NAN,
            eq,
            kind: LeafKind::Str,
            text_num: false,
        };
        if needs.text_numbers > 0 {
            leaf.num = text_number(text);
            leaf.text_num = true;
        }
        leaf
    }

    /// The selector of the table's JSON keys ([`Selector::for_keys`]), built on first use after
    /// a change.
    pub fn selector(&self) -> &Selector {
        self.selector.get_or_init(|| Selector::for_keys(&self.keys))
    }

    /// Whether JSON is bound as an SNS body (else as an Event Grid event).
    #[inline]
    pub(crate) fn reads_body(&self) -> bool {
        self.body_keys > 0
    }

    /// The slots of the attribute and header keys that read the name `name`.
    #[inline]
    pub fn slots_named(&self, name: &str) -> &[u32] {
        let names = match &self.names {
            Some(names) => names,
            None => self.small_names.get_or_init(|| self.live_names()),
        };
        names.get(name).map_or(&[], Vec::as_slice)
    }

    /// The name index of the live attribute and header keys.
    fn live_names(&self) -> NameIndex {
        let mut names = NameIndex::default();
        for (i, (key, refs)) in self.keys.iter().zip(&self.refs).enumerate() {
            if let Key::AttributeText(name) | Key::AttributeTyped(name) | Key::Header(name) = key
                && *refs > 0
            {
                names.entry(name.clone()).or_default().push(idx(i));
            }
        }
        names
    }

    /// The slot index of `key`, if interned.
    pub fn get(&self, key: &Key) -> Option<u32> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self
                .keys
                .iter()
                .zip(&self.refs)
                .position(|(k, refs)| *refs > 0 && k == key)
                .map(idx),
        }
    }

    /// The keys in slot order (a released slot holds [`KeyTable::released_key`]).
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// The number of slots (the width of a bound row), released ones included.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The number of released slots (see [`KeyTable::compact`]).
    pub fn released(&self) -> usize {
        self.free.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The heap bytes the table holds: its slots, its indexes, the keys' names (held by the
    /// slots, again by the index of a large table, and by the name index), the dictionary and the
    /// selector (estimated from its paths).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let text = |k: &Key| match k {
            Key::AttributeText(n)
            | Key::AttributeTyped(n)
            | Key::Header(n)
            | Key::BodyPath(n)
            | Key::BodyPathEach(n)
            | Key::FieldPath(n, _)
            | Key::EventMember(n) => n.len(),
            Key::EventData(path) => {
                path.len() * size_of::<Box<str>>() + path.iter().map(|s| s.len()).sum::<usize>()
            }
            Key::AnyAttribute | Key::BodyIsObject => 0,
        };
        let texts: usize = self.keys.iter().map(text).sum();
        let names: usize = self
            .names
            .as_ref()
            .or(self.small_names.get())
            .map_or(0, |names| {
                map_bytes(names.capacity(), size_of::<(Box<str>, Vec<u32>)>())
                    + names
                        .iter()
                        .map(|(n, slots)| n.len() + slots.capacity() * 4)
                        .sum::<usize>()
            });
        let scan = self.scan.get().and_then(Option::as_ref).map_or(0, |scan| {
            scan.keys.capacity() * std::mem::size_of::<(Box<str>, u32, Key)>()
                + scan.keys.iter().map(|(n, _, _)| 2 * n.len()).sum::<usize>()
        });
        let header_scan = self
            .header_scan
            .get()
            .and_then(Option::as_ref)
            .map_or(0, |scan| {
                scan.keys.capacity() * std::mem::size_of::<(Box<str>, u32, SlotNeeds)>()
                    + scan.keys.iter().map(|(n, _, _)| n.len()).sum::<usize>()
            });
        let body = self.body.get().map_or(0, body::BodyPlan::heap_bytes);
        let selector = if self.selector.get().is_some() {
            // States, names and first-byte filters: a few dozen bytes per key.
            64 * self.body_keys as usize + texts
        } else {
            0
        };
        self.keys.capacity() * size_of::<Key>()
            + self.refs.capacity() * 4
            + self.free.capacity() * 4
            + self.needs.capacity() * size_of::<SlotNeeds>()
            + texts * if self.index.is_some() { 2 } else { 1 }
            + self.index.as_ref().map_or(0, |index| {
                map_bytes(index.capacity(), size_of::<(Key, u32)>())
            })
            + names
            + self.dictionary.heap_bytes()
            + selector
            + scan
            + header_scan
            + body
    }
}

/// The bytes of a hash table (hashbrown's layout, which `ahash`'s maps use) of `capacity` entries
/// of `entry` bytes: its buckets (capacity × 8/7, a power of two) and one control byte each.
pub fn map_bytes(capacity: usize, entry: usize) -> usize {
    let buckets = match capacity {
        0 => 0,
        c if c < 8 => (c + 1).next_power_of_two(),
        c => (c * 8 / 7).next_power_of_two(),
    };
    buckets * (entry + 1)
}

/// What a [`BoundLeaf`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LeafKind {
    /// No leaf: the inline first leaf of a slot that has none (absent, an object, an empty
    /// array). No test holds on it.
    Empty,
    /// A string.
    Str,
    /// A number (its text and binary64 value).
    Num,
    /// `false`.
    False,
    /// `true`.
    True,
    /// `null`.
    Null,
    /// A header or attribute value that is not UTF-8: present, but no test reads it.
    Bytes,
}

/// One leaf of a bound message, borrowing its text from the message or the binding arena.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundLeaf<'b> {
    /// The string, or the number's text; empty for other kinds.
    text: &'b str,
    /// A number's value; for a string leaf, its text as a JSON number when computed
    /// (`text_num`), NaN when it is not one.
    num: f64,
    /// A string leaf's dictionary id ([`NO_ID`] when it equals no constant or was not looked up).
    eq: u32,
    kind: LeafKind,
    /// Whether `num` holds a string leaf's numeric value.
    text_num: bool,
}

impl<'b> BoundLeaf<'b> {
    /// The leaf of nothing (see [`LeafKind::Empty`]).
    pub const EMPTY: BoundLeaf<'static> = BoundLeaf {
        text: "",
        num: f64::NAN,
        eq: NO_ID,
        kind: LeafKind::Empty,
        text_num: false,
    };

    /// A leaf of `kind` without text (`False`, `True`, `Null`, `Bytes`, `Empty`).
    pub(crate) const fn plain(kind: LeafKind) -> BoundLeaf<'static> {
        BoundLeaf {
            text: "",
            num: f64::NAN,
            eq: NO_ID,
            kind,
            text_num: false,
        }
    }

    /// A number leaf: its text and value.
    #[inline]
    pub(crate) fn num(text: &'b str, value: f64) -> BoundLeaf<'b> {
        BoundLeaf {
            text,
            num: value,
            eq: NO_ID,
            kind: LeafKind::Num,
            text_num: false,
        }
    }

    /// A string leaf not looked up (see [`KeyTable::str_leaf`] for one that is).
    #[inline]
    pub(crate) fn raw_str(text: &'b str) -> BoundLeaf<'b> {
        BoundLeaf {
            text,
            num: f64::NAN,
            eq: NO_ID,
            kind: LeafKind::Str,
            text_num: false,
        }
    }

    /// What the leaf is.
    #[inline]
    pub fn kind(&self) -> LeafKind {
        self.kind
    }

    /// The string, for a string leaf.
    #[inline]
    pub fn as_str(&self) -> Option<&'b str> {
        (self.kind == LeafKind::Str).then_some(self.text)
    }

    /// The number's binary64 value, for a number leaf.
    #[inline]
    pub fn as_f64(&self) -> Option<f64> {
        (self.kind == LeafKind::Num).then_some(self.num)
    }

    /// The number's text as it appeared, for a number leaf.
    #[inline]
    pub fn number_text(&self) -> Option<&'b str> {
        (self.kind == LeafKind::Num).then_some(self.text)
    }

    /// The boolean, for `true` and `false`.
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        match self.kind {
            LeafKind::True => Some(true),
            LeafKind::False => Some(false),
            _ => None,
        }
    }

    /// The dictionary id of a string leaf ([`NO_ID`] when it equals no constant of the table it
    /// was bound to, or its slot has no equality test).
    #[inline]
    pub fn eq_id(&self) -> u32 {
        self.eq
    }

    /// A string leaf's text as a JSON number (B-10, S9): computed at bind time when the table
    /// asked for it, else parsed now; NaN for other leaves and for text that is not one.
    #[inline]
    pub fn text_number(&self) -> f64 {
        match self.kind {
            LeafKind::Str if self.text_num => self.num,
            LeafKind::Str => text_number(self.text),
            _ => f64::NAN,
        }
    }

    /// The leaf's type as a bit of a [`LeafTypes`] mask (none for `Empty` and `Bytes`).
    #[inline]
    pub fn leaf_type(&self) -> LeafTypes {
        match self.kind {
            LeafKind::Str => LeafTypes::STR,
            LeafKind::Num => LeafTypes::NUM,
            LeafKind::True | LeafKind::False => LeafTypes::BOOL,
            LeafKind::Null => LeafTypes::NULL,
            LeafKind::Empty | LeafKind::Bytes => LeafTypes(0),
        }
    }

    /// An owned copy (`None` for `Empty` and `Bytes`, which have no value).
    pub fn to_leaf(&self) -> Option<Leaf> {
        Some(match self.kind {
            LeafKind::Str => Leaf::Str(self.text.into()),
            LeafKind::Num => Leaf::Num(Num::new(self.text, self.num)),
            LeafKind::True => Leaf::Bool(true),
            LeafKind::False => Leaf::Bool(false),
            LeafKind::Null => Leaf::Null,
            LeafKind::Empty | LeafKind::Bytes => return None,
        })
    }
}

/// The value of `text` as a JSON number ([`crate::number::parse_json_number`]), else NaN. Only
/// text starting with `-` or a digit can be one, so other strings cost one comparison.
#[inline]
fn text_number(text: &str) -> f64 {
    match text.as_bytes().first() {
        Some(b'-' | b'0'..=b'9') => crate::number::parse_json_number(text).unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// What one key resolved to in one row: its shape and its leaves, the first one inline.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'b> {
    /// The first leaf ([`BoundLeaf::EMPTY`] when there is none).
    pub(crate) first: BoundLeaf<'b>,
    /// The leaves after the first.
    pub(crate) rest: &'b [BoundLeaf<'b>],
    /// What the key named.
    pub shape: Shape,
}

impl<'b> Slot<'b> {
    /// The absent slot.
    pub const ABSENT: Slot<'static> = Slot {
        first: BoundLeaf::EMPTY,
        rest: &[],
        shape: Shape::Absent,
    };

    /// A slot of `shape` without leaves (absent, an object, an empty array).
    pub(crate) const fn bare(shape: Shape) -> Slot<'static> {
        Slot {
            first: BoundLeaf::EMPTY,
            rest: &[],
            shape,
        }
    }

    /// A slot of one leaf: `Null` for a null leaf, else `Scalar`.
    #[inline]
    pub(crate) fn one(leaf: BoundLeaf<'b>) -> Slot<'b> {
        let shape = if leaf.kind == LeafKind::Null {
            Shape::Null
        } else {
            Shape::Scalar
        };
        Slot {
            first: leaf,
            rest: &[],
            shape,
        }
    }

    /// A slot of `leaves` (at least one): one leaf as [`Slot::one`], more as an array.
    pub(crate) fn of(leaves: &'b [BoundLeaf<'b>]) -> Slot<'b> {
        match leaves {
            [] => Slot::ABSENT,
            [only] => Slot::one(*only),
            [first, rest @ ..] => Slot {
                first: *first,
                rest,
                shape: Shape::Array,
            },
        }
    }

    /// The leaves.
    #[inline]
    pub fn leaves(&self) -> impl Iterator<Item = &BoundLeaf<'b>> {
        let first = (self.first.kind != LeafKind::Empty).then_some(&self.first);
        first.into_iter().chain(self.rest)
    }

    /// The number of leaves.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.first.kind != LeafKind::Empty) + self.rest.len()
    }

    /// Whether the slot has no leaf.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.first.kind == LeafKind::Empty
    }

    /// Some leaf satisfies `f` (the slot's first leaf is [`BoundLeaf::EMPTY`] when it has none,
    /// which no test holds on).
    #[inline(always)]
    pub(crate) fn any(&self, mut f: impl FnMut(&BoundLeaf<'b>) -> bool) -> bool {
        f(&self.first) || (!self.rest.is_empty() && any_of(self.rest, f))
    }
}

/// Some leaf of `rest` satisfies `f`: the leaves after a slot's first, kept out of line so that
/// a test inlined into the executor's loop carries only its one-leaf case.
#[inline(never)]
fn any_of<'b>(rest: &[BoundLeaf<'b>], f: impl FnMut(&BoundLeaf<'b>) -> bool) -> bool {
    rest.iter().any(f)
}

/// How far a message could be judged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Judgement {
    /// Every key was bound.
    #[default]
    Judged,
    /// An SNS body needed more binding rows than [`MAX_ROW_SLOTS`] allow (sns rule 18): it was
    /// bound as if it were not a JSON object, so it matches only policies that read nothing
    /// from the body.
    Overflowed,
    /// An EventBridge event whose `exists: false`, judged against the array positions that the
    /// paths sorting before it fix (EB-10), the binder's rows cannot judge exactly: the event
    /// reaches a path by two routes (a repeated member name, or a dotted name beside its nested
    /// spelling, EB-3) where arrays of objects decide the absence, or a scalar in a nested array
    /// fixes an element for it. Bound like [`Judgement::Overflowed`] (every body key absent);
    /// the caller gets an error.
    Unsupported,
    /// JSON bytes that are not one JSON document: for an SNS body, a body that is not JSON
    /// (bound with every body key absent, so it matches only policies that read nothing from the
    /// body, sns rule 14); for an Event Grid event, an event that cannot be judged.
    NotJson(json::Error),
}

/// A message bound to a key table: rows of slots.
#[derive(Debug, Clone)]
pub struct Bound<'b> {
    slots: &'b [Slot<'b>],
    width: usize,
    stamp: u64,
    judgement: Judgement,
    /// Whether the JSON document's top level is an object (true for messages that are not
    /// JSON documents).
    root_object: bool,
    /// The JSON bytes' nesting depth when more than 64, else 0.
    deepest: usize,
}

impl<'b> Bound<'b> {
    fn new(table: &KeyTable, slots: &'b [Slot<'b>]) -> Bound<'b> {
        Bound {
            slots,
            width: table.len(),
            stamp: table.stamp(),
            judgement: Judgement::Judged,
            root_object: true,
            deepest: 0,
        }
    }

    /// Whether the message, when a JSON document, is an object at its top level (a JSON
    /// document that is not one binds every body key absent; EventBridge makes it an error,
    /// `docs/dialects/eventbridge-patterns.md` EB-3). True for messages that are not JSON
    /// documents, and for bytes that are not JSON (see [`Bound::not_json`]).
    pub fn root_is_object(&self) -> bool {
        self.root_object
    }

    /// The nesting depth of JSON bytes (the most arrays and objects open at once) when more
    /// than 64, else 0: bytes read by [`Bindings::bind_json`] are validated at any depth, and a
    /// dialect with a depth limit (EB-34) checks it here. 0 for other messages.
    pub fn deepest(&self) -> usize {
        self.deepest
    }

    /// How far the message could be judged.
    pub fn judgement(&self) -> &Judgement {
        &self.judgement
    }

    /// Whether the binder gave up on a body: judging its arrays of objects element by element
    /// (sns rule 18) would need more than [`MAX_ROW_SLOTS`] slots ([`Judgement::Overflowed`]),
    /// or rows cannot judge an EventBridge absence exactly ([`Judgement::Unsupported`]). Either
    /// way every body key is absent and the VM fails closed.
    pub fn overflowed(&self) -> bool {
        matches!(
            self.judgement,
            Judgement::Overflowed | Judgement::Unsupported
        )
    }

    /// The error of JSON bytes that are not one JSON document (see [`Judgement::NotJson`]).
    pub fn not_json(&self) -> Option<&json::Error> {
        match &self.judgement {
            Judgement::NotJson(e) => Some(e),
            _ => None,
        }
    }

    /// The [`KeyTable::stamp`] of the table bound to.
    #[inline]
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// The number of rows (at least one).
    pub fn rows(&self) -> usize {
        self.slots.len().checked_div(self.width).unwrap_or(1).max(1)
    }

    /// The number of slots in a row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The slot of key `key` in row `row` (absent when out of range).
    #[inline]
    pub fn slot(&self, row: usize, key: usize) -> &Slot<'b> {
        if key >= self.width {
            return &Slot::ABSENT;
        }
        self.slots
            .get(row * self.width + key)
            .unwrap_or(&Slot::ABSENT)
    }

    /// The slots of the only row, when there is one row (most messages), in key order.
    #[inline]
    pub fn only_row(&self) -> Option<&'b [Slot<'b>]> {
        (self.slots.len() == self.width).then_some(self.slots)
    }

    /// The slots of row `row`, in key order (empty when out of range).
    #[inline]
    pub fn row(&self, row: usize) -> &'b [Slot<'b>] {
        let start = row.saturating_mul(self.width);
        self.slots
            .get(start..start.saturating_add(self.width))
            .unwrap_or(&[])
    }
}

/// Reusable binding scratch: the per-message arena and the JSON reader. Keep one per thread (or
/// per evaluator) so that binding a stream of messages allocates nothing once warm.
#[derive(Debug, Default)]
pub struct Bindings {
    arena: Bump,
    extractor: Extractor,
    /// Leaves waiting for their slot (headers repeating a name), as `(slot, order, leaf)`; empty
    /// between messages (typed `'static` only to keep its memory, see [`recycle`]).
    pending: Vec<(u32, u32, BoundLeaf<'static>)>,
    /// Number texts of a tree being bound whole.
    text: String,
}

/// `v`'s memory as an empty vector of another lifetime: collecting an emptied vector's iterator
/// reuses its buffer (the standard library collects in place when the layouts match), so the
/// scratch keeps its capacity from one message to the next.
pub(crate) fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

impl Bindings {
    /// Empty scratch.
    pub fn new() -> Bindings {
        Bindings::default()
    }

    /// Bytes held by the arenas (for memory accounting).
    pub fn arena_bytes(&self) -> usize {
        self.arena.allocated_bytes() + self.extractor.arena_bytes()
    }

    /// Binds an owned `message` to `table`.
    pub fn bind<'b>(&'b mut self, table: &'b KeyTable, message: &'b Message) -> Bound<'b> {
        match message {
            Message::Attributes(attributes) => self.bind_attributes(table, attributes.as_slice()),
            Message::Headers(headers) => self.bind_headers(table, headers.as_slice()),
            Message::Body(bytes) => self.bind_json(table, bytes),
            Message::Json(value) => self.bind_serde(table, value),
            Message::Unparsable => self.bind_unparsable(table),
        }
    }

    /// Binds typed attributes (any [`Attributes`]), borrowing their values.
    pub fn bind_attributes<'b, A: Attributes + ?Sized>(
        &'b mut self,
        table: &'b KeyTable,
        attributes: &'b A,
    ) -> Bound<'b> {
        self.arena.reset();
        let arena: &'b Bump = &self.arena;
        let row = arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
        attributes::bind(table, row, attributes, arena);
        Bound::new(table, row)
    }

    /// Binds headers (any [`Headers`]), borrowing their values.
    pub fn bind_headers<'b, H: Headers + ?Sized>(
        &'b mut self,
        table: &'b KeyTable,
        headers: &'b H,
    ) -> Bound<'b> {
        let Bindings { arena, pending, .. } = self;
        arena.reset();
        let arena: &'b Bump = arena;
        let row = arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
        headers::bind(table, row, headers, arena, pending);
        Bound::new(table, row)
    }

    /// Binds JSON bytes as published (an SNS body when the table reads one, else an Event Grid
    /// event): one validating pass over the bytes keeps only what the table's keys read
    /// ([`KeyTable::selector`]), at any depth. Bytes that are not one JSON document bind every
    /// key absent and are reported ([`Judgement::NotJson`]).
    pub fn bind_json<'b>(&'b mut self, table: &'b KeyTable, json: &'b [u8]) -> Bound<'b> {
        let Bindings {
            arena, extractor, ..
        } = self;
        arena.reset();
        let arena: &'b Bump = arena;
        match extractor.extract_measured(table.selector(), json) {
            Ok((doc, deepest)) => {
                let mut bound = bind_document(table, doc, arena);
                bound.deepest = deepest;
                bound
            }
            Err(e) => {
                let row = arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
                let mut bound = Bound::new(table, row);
                bound.judgement = Judgement::NotJson(e);
                bound
            }
        }
    }

    /// Binds a whole JSON document (read by [`json::parse`]), without pruning: the same binders
    /// as [`Bindings::bind_json`] on the full tree.
    pub fn bind_tree<'b>(&'b mut self, table: &'b KeyTable, value: &'b json::Value) -> Bound<'b> {
        self.arena.reset();
        let arena: &'b Bump = &self.arena;
        let doc = tree::of_value(value, arena);
        bind_document(table, doc, arena)
    }

    /// Binds a whole `serde_json` document, without pruning (numbers by their `Display` text).
    pub fn bind_serde<'b>(
        &'b mut self,
        table: &'b KeyTable,
        value: &'b serde_json::Value,
    ) -> Bound<'b> {
        self.arena.reset();
        let arena: &'b Bump = &self.arena;
        let doc = tree::of_serde(value, arena, &mut self.text);
        bind_document(table, doc, arena)
    }

    /// Binds a message with no readable body: every key absent (an SNS body that is not JSON:
    /// it matches only policies that read nothing from the body).
    pub fn bind_unparsable<'b>(&'b mut self, table: &'b KeyTable) -> Bound<'b> {
        self.arena.reset();
        let row = self.arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
        Bound::new(table, row)
    }
}

/// Binds a JSON document (pruned or whole) with the binder the table's keys call for.
fn bind_document<'b>(table: &'b KeyTable, doc: json::Node<'b>, arena: &'b Bump) -> Bound<'b> {
    let root_object = matches!(doc, json::Node::Object(_));
    let mut bound = bind_document_rows(table, doc, arena);
    bound.root_object = root_object;
    bound
}

/// [`bind_document`]'s rows.
fn bind_document_rows<'b>(table: &'b KeyTable, doc: json::Node<'b>, arena: &'b Bump) -> Bound<'b> {
    if table.reads_body() {
        match body::bind(table, doc, arena) {
            Ok(slots) => Bound::new(table, slots),
            Err(why) => {
                let row = arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
                let mut bound = Bound::new(table, row);
                bound.judgement = match why {
                    body::Overflow::Caps => Judgement::Overflowed,
                    body::Overflow::Positions => Judgement::Unsupported,
                };
                bound
            }
        }
    } else {
        let row = arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
        event::bind(table, row, doc, arena);
        Bound::new(table, row)
    }
}

/// The leaf of a scalar JSON node (`None` for arrays and objects), not looked up in any
/// dictionary.
#[inline]
pub(crate) fn node_leaf<'b>(node: &json::Node<'b>) -> Option<BoundLeaf<'b>> {
    Some(match *node {
        json::Node::Null => BoundLeaf::plain(LeafKind::Null),
        json::Node::Bool(true) => BoundLeaf::plain(LeafKind::True),
        json::Node::Bool(false) => BoundLeaf::plain(LeafKind::False),
        json::Node::Number(text) => BoundLeaf::num(text, number_value(text)),
        json::Node::String(s) => BoundLeaf::raw_str(s),
        json::Node::Array(_) | json::Node::Object(_) => return None,
    })
}

/// The binary64 value of a JSON number's text (infinite beyond the range, as Rust's parser
/// rounds; NaN only for text that is not a number).
#[inline]
pub(crate) fn number_value(text: &str) -> f64 {
    // Most numbers are exact binary64 values (integers, short decimals such as `149.5`): read
    // without the general parser (the sign of `-0` kept).
    match crate::exec::exact_f64(text) {
        Some(x) if x == 0.0 && text.starts_with('-') => -0.0,
        Some(x) => x,
        None => text.parse::<f64>().unwrap_or(f64::NAN),
    }
}

/// Looks a string leaf up as the table needs for `slot` (a leaf of another kind is returned as
/// is).
#[inline]
pub(crate) fn finish_leaf<'b>(table: &KeyTable, slot: u32, leaf: BoundLeaf<'b>) -> BoundLeaf<'b> {
    if leaf.kind == LeafKind::Str {
        table.str_leaf(slot, leaf.text)
    } else {
        leaf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AttributeType, Message};

    #[test]
    fn key_table_interns_once() {
        let mut t = KeyTable::new();
        let a = t.intern(Key::Header("a".into()));
        let b = t.intern(Key::Header("b".into()));
        assert_eq!(t.intern(Key::Header("a".into())), a);
        assert_ne!(a, b);
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(&Key::Header("b".into())), Some(b));
    }

    #[test]
    fn small_and_large_tables_find_keys_and_names_alike() {
        // Small tables search their keys and names by comparing; past SMALL_TABLE keys and
        // SCAN_KEYS names they index them. Grow past both, release and compact back under them:
        // every look-up agrees with the keys held, and binding finds every header.
        let key = |i: usize| {
            if i.is_multiple_of(3) {
                Key::AttributeTyped(format!("n{}", i / 3 * 3).into())
            } else {
                Key::Header(format!("n{i}").into())
            }
        };
        let mut t = KeyTable::new();
        let slots: Vec<u32> = (0..40).map(|i| t.intern(key(i))).collect();
        assert!(t.index.is_some() && t.names.is_some());
        let check = |t: &KeyTable, live: &dyn Fn(usize) -> bool| {
            for i in 0..40 {
                let found = t.get(&key(i));
                assert_eq!(found.is_some(), live(i), "key {i}");
                if let Some(slot) = found {
                    assert_eq!(t.keys()[slot as usize], key(i));
                    let name = match key(i) {
                        Key::AttributeTyped(n) | Key::Header(n) => n,
                        _ => unreachable!(),
                    };
                    assert!(t.slots_named(&name).contains(&slot), "name of key {i}");
                }
            }
        };
        check(&t, &|_| true);
        // The same key again is a reference, not a new slot.
        assert_eq!(t.intern(key(7)), slots[7]);
        assert!(!t.release(slots[7]));
        for &slot in slots.iter().skip(4) {
            assert!(t.release(slot));
        }
        check(&t, &|i| i < 4);
        t.compact();
        assert_eq!(t.len(), 4);
        assert!(t.index.is_none() && t.names.is_none());
        check(&t, &|i| i < 4);
        let mut bindings = Bindings::new();
        let message = Message::headers([("n1", "x"), ("n2", "y")]);
        let bound = bindings.bind(&t, &message);
        assert_eq!(bound.slot(0, 1).shape, Shape::Scalar);
        assert_eq!(bound.slot(0, 2).shape, Shape::Scalar);
        assert_eq!(bound.slot(0, 0).shape, Shape::Absent);
        // Growing again indexes them again.
        for i in 4..40 {
            t.intern(key(i));
        }
        assert!(t.index.is_some() && t.names.is_some());
        check(&t, &|_| true);
    }

    #[test]
    fn released_slots_are_reused_and_compacted_away() {
        let mut t = KeyTable::new();
        let a = t.intern(Key::AttributeTyped("a".into()));
        let b = t.intern(Key::AttributeTyped("b".into()));
        let c = t.intern(Key::Header("c".into()));
        assert_eq!(t.intern(Key::AttributeTyped("a".into())), a);
        // `a` has two references: the first release keeps it.
        assert!(!t.release(a));
        assert!(t.release(a));
        assert!(!t.release(a), "a released slot has no references left");
        assert_eq!(t.get(&Key::AttributeTyped("a".into())), None);
        assert!(t.slots_named("a").is_empty());
        assert_eq!(t.keys()[a as usize], KeyTable::released_key());
        assert_eq!((t.len(), t.released()), (3, 1));
        // A new key takes the released slot.
        let d = t.intern(Key::AttributeTyped("d".into()));
        assert_eq!(d, a);
        assert!(t.release(d));
        assert!(t.release(b));
        let moved = t.compact();
        assert_eq!(moved, [u32::MAX, u32::MAX, 0]);
        assert_eq!(t.len(), 1);
        assert_eq!(t.released(), 0);
        assert_eq!(t.get(&Key::Header("c".into())), Some(0));
        assert_eq!(t.slots_named("c"), [0]);
        let _ = c;
        // Binding a message to the compacted table uses its width.
        let mut bindings = Bindings::new();
        let message = Message::headers([("c", "x")]);
        let bound = bindings.bind(&t, &message);
        assert_eq!(bound.width(), 1);
        assert_eq!(bound.slot(0, 0).shape, Shape::Scalar);
        assert!(t.release(0));
        t.compact();
        assert!(t.is_empty());
        assert_eq!(t.heap_bytes(), 0);
    }

    #[test]
    fn absent_key_binds_absent_and_out_of_range_is_absent() {
        let mut t = KeyTable::new();
        t.intern(Key::AttributeText("missing".into()));
        let mut b = Bindings::new();
        let message = Message::attributes([("x", AttributeType::String, "1")]);
        let bound = b.bind(&t, &message);
        assert_eq!(bound.rows(), 1);
        assert_eq!(bound.slot(0, 0).shape, Shape::Absent);
        assert_eq!(bound.slot(0, 7).shape, Shape::Absent);
        assert_eq!(bound.slot(9, 0).shape, Shape::Absent);
    }

    #[test]
    fn constants_are_looked_up_once_per_leaf_and_released() {
        let mut t = KeyTable::new();
        let a = t.intern(Key::Header("a".into()));
        let b = t.intern(Key::Header("b".into()));
        let before = t.stamp();
        let x = t.add_constant(a, "x");
        assert_ne!(
            t.stamp(),
            before,
            "a new constant changes how messages bind"
        );
        assert_eq!(t.add_constant(a, "x"), x);
        let y = t.add_constant(a, "y");
        assert_ne!(x, y);
        assert_eq!(t.constant_id("y"), Some(y));
        let mut scratch = Bindings::new();
        let headers = [("a", "y"), ("b", "y")];
        let bound = scratch.bind_headers(&t, &headers[..]);
        let ids = |slot: u32| -> Vec<u32> {
            bound
                .slot(0, slot as usize)
                .leaves()
                .map(BoundLeaf::eq_id)
                .collect()
        };
        // `b` has no equality test: its leaves are not looked up.
        assert_eq!((ids(a), ids(b)), (vec![y], vec![NO_ID]));
        t.release_constant(a, "x");
        assert_eq!(t.constant_id("x"), Some(x), "one reference is left");
        t.release_constant(a, "x");
        assert_eq!(t.constant_id("x"), None);
        assert_eq!((t.constants(), t.free_constants()), (1, 1));
        t.compact();
        assert_eq!((t.constants(), t.free_constants()), (1, 0));
        assert_eq!(t.constant_id("y"), Some(0));
        t.release_constant(a, "y");
        assert_eq!(t.constants(), 0);
    }

    #[test]
    fn large_dictionaries_are_hashed_and_agree_with_small_ones() {
        let mut t = KeyTable::new();
        let a = t.intern(Key::Header("a".into()));
        let values: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
        let ids: Vec<u32> = values.iter().map(|v| t.add_constant(a, v)).collect();
        for (v, id) in values.iter().zip(&ids) {
            assert_eq!(t.constant_id(v), Some(*id));
        }
        for v in values.iter().skip(5) {
            t.release_constant(a, v);
        }
        assert_eq!(t.constant_id("v3"), Some(ids[3]));
        assert_eq!(t.constant_id("v30"), None);
    }

    #[test]
    fn text_numbers_are_computed_only_where_read() {
        let mut t = KeyTable::new();
        let a = t.intern(Key::Header("a".into()));
        let b = t.intern(Key::Header("b".into()));
        t.add_text_numbers(a);
        let mut scratch = Bindings::new();
        let headers = [("a", "1.5"), ("b", "2")];
        let bound = scratch.bind_headers(&t, &headers[..]);
        let leaf = |slot: u32| *bound.slot(0, slot as usize).leaves().next().unwrap();
        assert!(leaf(a).text_num);
        assert!(!leaf(b).text_num);
        // Either way, the value is the same.
        assert_eq!(leaf(a).text_number(), 1.5);
        assert_eq!(leaf(b).text_number(), 2.0);
    }

    #[test]
    fn number_values_are_what_the_general_parser_reads() {
        for text in [
            "0",
            "-0",
            "1",
            "-7",
            "149.5",
            "1186.15",
            "1e5",
            "1E+5",
            "-2.5e-3",
            "0.0",
            "-0.0",
            "12345678901234567890",
            "9007199254740993",
            "1e400",
            "-1e400",
            "1e-400",
            "0.1",
            "5e-324",
            "123456.000",
            "7.0e1",
        ] {
            let expected = text.parse::<f64>().unwrap();
            let got = number_value(text);
            assert_eq!(got.to_bits(), expected.to_bits(), "{text}");
        }
    }

    #[test]
    fn stamps_follow_changes_and_clones() {
        let mut t = KeyTable::new();
        assert_eq!(t.stamp(), 0);
        t.intern(Key::Header("a".into()));
        let s = t.stamp();
        assert_eq!(t.clone().stamp(), s);
        t.intern(Key::Header("a".into()));
        assert_eq!(t.stamp(), s, "another reference to a key binds alike");
        t.add_text_numbers(0);
        assert_ne!(t.stamp(), s);
    }
}

//! The key table ([`KeyTable`]): the keys programs read, each with its slot, the dictionary of
//! equality constants and what binding must compute per slot, and the plans derived from them
//! (the JSON selector of body or event keys, [`BodyPlan`]).

use super::leaf::{BoundLeaf, LeafKind, NO_ID, text_number};
use crate::json::Selector;
use crate::key::Key;
use ahash::AHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

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
    pub(super) constants: u32,
    /// Tests reading this slot's leaves as numeric text: when non-zero, its string leaves carry
    /// their text's value as a JSON number.
    pub(super) text_numbers: u32,
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

/// Room for exactly `additional` more items in `v`. A vector with no allocation yet (a table
/// being built into a program: codegen reserves each column once, and `needs` the dictionary)
/// is allocated at that size directly, which costs about 40 instructions less than growing it
/// (BENCHMARKS.md, "The back end, fourth round").
fn reserve_exact<T>(v: &mut Vec<T>, additional: usize) {
    if v.capacity() == 0 {
        *v = Vec::with_capacity(additional);
    } else {
        v.reserve_exact(additional);
    }
}

/// The string constants of a table's equality tests: value → id, reference-counted.
#[derive(Debug, Clone, Default)]
struct Dictionary {
    /// By id: the value and its references (0 for a free id, whose value is empty). Values are
    /// shared (`Arc`): a program's dictionary holds the strings of its pools, not copies.
    entries: Vec<(Arc<str>, u32)>,
    /// Value → id, once the dictionary holds more than [`SMALL_DICTIONARY`] values.
    index: Option<AHashMap<Arc<str>, u32>>,
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
            if *refs > 0 && crate::bytes::same(value.as_bytes(), text.as_bytes()) {
                return idx(id);
            }
        }
        NO_ID
    }

    #[inline]
    fn hashed(index: &AHashMap<Arc<str>, u32>, text: &str) -> u32 {
        index.get(text).copied().unwrap_or(NO_ID)
    }

    fn live(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// Adds a reference to `value`; returns its id and whether it is new. A new value is held
    /// as `shared` makes it (called only then).
    fn add(&mut self, value: &str, shared: impl FnOnce() -> Arc<str>) -> (u32, bool) {
        let id = self.id_of(value);
        if let Some((_, refs)) = self.entries.get_mut(id as usize) {
            *refs = refs.saturating_add(1);
            return (id, false);
        }
        let value = shared();
        self.lengths |= 1 << value.len().min(63);
        let id = match self.free.pop() {
            Some(id) => id,
            None => idx(self.entries.len()),
        };
        if let Some(index) = &mut self.index {
            index.insert(value.clone(), id);
        }
        match self.entries.get_mut(id as usize) {
            Some(entry) => *entry = (value, 1),
            None => self.entries.push((value, 1)),
        }
        let live = self.live();
        if self.index.is_none() && live > SMALL_DICTIONARY {
            // Sized for the live values at once: collected from a filtered iterator, the map
            // would grow (and rehash) several times on the way to them.
            let mut index = AHashMap::with_capacity(live);
            for (i, (v, refs)) in self.entries.iter().enumerate() {
                if *refs > 0 {
                    index.insert(v.clone(), idx(i));
                }
            }
            self.index = Some(index);
        }
        (id, true)
    }

    /// Room for `additional` more values (free ids are reused first).
    fn reserve(&mut self, additional: usize) {
        reserve_exact(
            &mut self.entries,
            additional.saturating_sub(self.free.len()),
        );
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
        *stored = Arc::default();
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
        self.entries.capacity() * size_of::<(Arc<str>, u32)>()
            + self.free.capacity() * 4
            + texts
            + self.index.as_ref().map_or(0, |index| {
                map_bytes(index.capacity(), size_of::<(Arc<str>, u32)>()) + texts
            })
    }
}

pub(super) fn idx(n: usize) -> u32 {
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
    pub(super) any_attribute: Option<u32>,
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
    /// Boxed: a program's table is part of the program's verified parts, which a compile
    /// allocates as one block; with the plan inline that block outgrows what the allocator
    /// serves from its per-thread cache (BENCHMARKS.md, "The program's parts boxed").
    body: OnceLock<Box<BodyPlan>>,
}

/// Name → the slots of the attribute and header keys that read it.
type NameIndex = AHashMap<Arc<str>, Vec<u32>>;

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
    pub(crate) keys: Vec<(Arc<str>, u32, Key)>,
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
    keys: Vec<(Arc<str>, u32, SlotNeeds)>,
}

impl HeaderScan {
    /// Whether some key's name may be `len` bytes long.
    #[inline(always)]
    pub(crate) fn may_have(&self, len: usize) -> bool {
        self.lengths >> len.min(63) & 1 == 1
    }

    /// Name, slot and needs of each header key.
    #[inline(always)]
    pub(crate) fn keys(&self) -> &[(Arc<str>, u32, SlotNeeds)] {
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
    /// Whether the table indexes its keys and names ([`KeyTable::index`] and
    /// [`KeyTable::names`]) rather than searching them by comparing.
    #[cfg(test)]
    pub(super) fn indexes(&self) -> (bool, bool) {
        (self.index.is_some(), self.names.is_some())
    }

    /// The key a released slot holds until it is reused or compacted away: the text of an
    /// attribute named `""`. Binding headers, bodies and events ignores attribute keys; binding
    /// attributes may fill the slot for an attribute of that name, which nobody reads (the
    /// table's index does not know the slot).
    pub fn released_key() -> Key {
        Key::AttributeText(Arc::default())
    }

    /// An empty table.
    pub fn new() -> KeyTable {
        KeyTable::default()
    }

    /// Notes a change: a new stamp, and the selector to be rebuilt. Callers that make several
    /// changes without noting each ([`KeyTable::add_value_unstamped`],
    /// [`KeyTable::mark_constants_unstamped`]) call it once after them.
    pub(crate) fn changed(&mut self) {
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
    pub(crate) fn body_plan(&self) -> &BodyPlan {
        self.body.get_or_init(|| {
            Box::new(BodyPlan::new(&self.keys).with_flat(&self.keys, self.selector()))
        })
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

    /// [`KeyTable::intern_ref`] for a table being built into a program: a new key is not noted
    /// as a change. The table's stamp becomes 0, which a table holding keys never keeps:
    /// [`crate::program::Program::new`] notes the change once, for all the keys interned so,
    /// where each noted its own (a new stamp and the derived caches checked, per key). Bind
    /// nothing with the table before it is in a program.
    pub fn intern_ref_unstamped(&mut self, key: &Key) -> u32 {
        if let Some(i) = self.add_reference(key) {
            return i;
        }
        let i = self.insert_unstamped(key.clone());
        self.stamp = 0;
        i
    }

    /// Room for `additional` more keys in each of the slot columns (keys, references, needs),
    /// beyond the released slots, which are reused first: a caller that knows how many keys it
    /// will intern (codegen: at most one per test) grows the columns once, to their size, where
    /// pushing would allocate each column for four keys and again at five.
    pub fn reserve_keys(&mut self, additional: usize) {
        let more = additional.saturating_sub(self.free.len());
        reserve_exact(&mut self.keys, more);
        reserve_exact(&mut self.refs, more);
        reserve_exact(&mut self.needs, more);
    }

    /// Adds a reference to `key` when the table holds it; returns its slot.
    #[inline(always)]
    fn add_reference(&mut self, key: &Key) -> Option<u32> {
        let i = self.get(key)?;
        if let Some(r) = self.refs.get_mut(i as usize) {
            *r = r.saturating_add(1);
        }
        Some(i)
    }

    /// Puts `key`, which the table does not hold, in a slot with one reference.
    fn insert_new(&mut self, key: Key) -> u32 {
        let i = self.insert_unstamped(key);
        self.changed();
        i
    }

    /// [`KeyTable::insert_new`] without noting the change.
    #[inline(always)]
    fn insert_unstamped(&mut self, key: Key) -> u32 {
        let free = self.free.pop();
        let i = free.unwrap_or_else(|| idx(self.keys.len()));
        self.link(i, &key);
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), i);
        }
        match free {
            // A released slot: its key, references and needs replaced.
            Some(_) => {
                if let Some(k) = self.keys.get_mut(i as usize) {
                    *k = key;
                }
                if let Some(r) = self.refs.get_mut(i as usize) {
                    *r = 1;
                }
            }
            // A new slot, pushed with its key (not a released key then replaced: codegen interns
            // every key of a program this way).
            None => {
                self.keys.push(key);
                self.refs.push(1);
                self.needs.push(SlotNeeds::default());
            }
        }
        if self.index.is_none() && self.keys.len() - self.free.len() > SMALL_TABLE {
            self.index = Some(self.live_index());
        }
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
    #[inline(always)]
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

    /// [`KeyTable::add_constant`] of a value the caller holds as an `Arc<str>`: a value new to
    /// the dictionary is held shared (a reference added), not copied. The same id, references
    /// and change as [`KeyTable::add_constant`].
    pub fn add_constant_shared(&mut self, slot: u32, value: &Arc<str>) -> u32 {
        if slot as usize >= self.needs.len() {
            return NO_ID;
        }
        self.mark_constants(slot);
        let (id, new) = self.dictionary.add(value, || value.clone());
        if new {
            self.changed();
        }
        id
    }

    /// The dictionary half of [`KeyTable::add_constant`]: a reference to `value`, its id.
    pub(crate) fn add_value(&mut self, value: &str) -> u32 {
        let (id, new) = self.dictionary.add(value, || Arc::from(value));
        if new {
            self.changed();
        }
        id
    }

    /// Room for `additional` more values in the dictionary, for a caller about to add them
    /// one by one (the dictionary's contents are unchanged).
    pub(crate) fn reserve_values(&mut self, additional: usize) {
        self.dictionary.reserve(additional);
    }

    /// [`KeyTable::add_value`] without noting the change: for a caller adding several values,
    /// which then calls [`KeyTable::changed`] once if any was new. Returns the value's id (the
    /// one [`KeyTable::constant_id`] gives it until the dictionary changes) and whether `value`
    /// was new to the dictionary, which then holds `value` itself (shared, not copied).
    #[inline(always)]
    pub(crate) fn add_value_unstamped(&mut self, value: &Arc<str>) -> (u32, bool) {
        self.dictionary.add(value, || value.clone())
    }

    /// The slot half of [`KeyTable::add_constant`]: `slot`'s leaves are looked up.
    pub(crate) fn mark_constants(&mut self, slot: u32) {
        if self.mark_constants_unstamped(slot) {
            self.changed();
        }
    }

    /// [`KeyTable::mark_constants`] without noting the change: for a caller marking several
    /// slots, which then calls [`KeyTable::changed`] once if any was a change. Returns
    /// whether it was (the slot's first constant).
    pub(crate) fn mark_constants_unstamped(&mut self, slot: u32) -> bool {
        match self.needs.get_mut(slot as usize) {
            Some(needs) => {
                needs.constants = needs.constants.saturating_add(1);
                needs.constants == 1
            }
            None => false,
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
    #[inline(always)]
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
        let body = self.body.get().map_or(0, |plan| {
            std::mem::size_of::<BodyPlan>() + plan.heap_bytes()
        });
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

/// A table's body keys, as the binder reads them (built once per table change).
#[derive(Debug, Clone, Default)]
pub(crate) struct BodyPlan {
    /// The [`Key::BodyPath`], [`Key::BodyPathEach`] and [`Key::FieldPath`] keys: slot,
    /// whether judged per element everywhere (each), and the levels of a fixed key
    /// (`u32::MAX` for the others).
    pub(super) targets: Vec<(u32, bool, u32, bool)>,
    /// The slots of [`Key::BodyIsObject`].
    pub(super) is_object: Vec<u32>,
    /// Whether no body can make a choice point (see [`BodyPlan::new`]): then each key is bound
    /// alone, into one row.
    pub(super) single_row: bool,
    /// For a single-row table of many keys: first path segment → the targets (indexes into
    /// `targets`) whose path starts with it, so that each top-level member is matched with its
    /// keys only.
    pub(super) by_first: Option<ahash::AHashMap<Box<str>, Vec<u32>>>,
    /// For a table whose body paths are all one segment ([`Selector::is_flat_body`]): for each
    /// name the selector wants in the top-level object ([`Selector::top_names`], by index), the
    /// range of [`BodyPlan::flat_slots`] holding the slots of the keys of that path. A scalar
    /// member is then bound straight from the reader (`super::flat`).
    pub(super) flat: Option<Vec<(u32, u32)>>,
    /// The slots of [`BodyPlan::flat`]'s ranges (and of [`BodyPlan::flat_inner`]'s).
    pub(super) flat_slots: Vec<u32>,
    /// For a flat table whose selector reads two levels ([`Selector::is_two_level_body`]): for
    /// each name of [`BodyPlan::flat`], the keys below it, when it has any (empty for a
    /// selector of one level). A scalar member of an object kept there is then bound straight
    /// from the reader too.
    pub(super) flat_inner: Vec<Option<FlatInner>>,
}

/// The keys below one top-level name of a two-level flat table ([`BodyPlan::flat_inner`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct FlatInner {
    /// For each name wanted in an object that is the top-level name's value (by the index the
    /// reader gives, [`Selector::inner_names`]), the range of [`BodyPlan::flat_slots`] holding
    /// the slots of the keys `top.name`.
    pub(super) ranges: Vec<(u32, u32)>,
}

/// Single-row tables of more body keys than this bind by walking the top-level members once
/// ([`BodyPlan::by_first`]) rather than once per key.
pub(super) const WALK_PER_KEY: usize = 16;

impl BodyPlan {
    /// The plan of `keys`.
    ///
    /// A choice point is an array two keys continue below, or an each key does (module
    /// documentation). Two keys can only be at one node below the top-level object when the
    /// member names leading there spell a common prefix of both paths, so they share their
    /// first segment; both continue below such a node only if both have at least two segments;
    /// and an each key continues below a node only if it has at least two. So no body can make
    /// a choice point when no each key has two segments and no two keys of two segments or more
    /// share their first one.
    pub(crate) fn new(keys: &[Key]) -> BodyPlan {
        let mut plan = BodyPlan {
            single_row: true,
            ..BodyPlan::default()
        };
        let mut firsts: ahash::AHashSet<&str> = ahash::AHashSet::new();
        for (i, key) in keys.iter().enumerate() {
            let (path, each, fixed, field) = match key {
                Key::BodyPath(path) => (path, false, u32::MAX, false),
                Key::BodyPathEach(path) => (path, true, u32::MAX, false),
                Key::FieldPath(path, levels) => (path, false, *levels, true),
                Key::BodyIsObject => {
                    plan.is_object.push(idx(i));
                    continue;
                }
                _ => continue,
            };
            plan.targets.push((idx(i), each, fixed, field));
            // A field key ending at an array can meet one continuing below it (EB-3): field keys
            // of one segment count too.
            let first = path.split('.').next().unwrap_or("");
            let nested = path.contains('.');
            if (each && nested) || ((nested || field) && !firsts.insert(first)) {
                plan.single_row = false;
            }
        }
        if plan.single_row && plan.targets.len() > WALK_PER_KEY {
            let mut by_first: ahash::AHashMap<Box<str>, Vec<u32>> = ahash::AHashMap::new();
            for (t, &(slot, _, _, _)) in plan.targets.iter().enumerate() {
                let first = path_of(keys.get(slot as usize))
                    .split('.')
                    .next()
                    .unwrap_or("");
                by_first.entry(first.into()).or_default().push(idx(t));
            }
            plan.by_first = Some(by_first);
        }
        plan
    }

    /// This plan of `keys`, with [`BodyPlan::flat`] when `selector` (theirs) is flat, and with
    /// [`BodyPlan::flat_inner`] too when it reads two levels.
    pub(crate) fn with_flat(mut self, keys: &[Key], selector: &Selector) -> BodyPlan {
        let two_levels = !selector.is_flat_body() && selector.is_two_level_body();
        if !self.single_row || !(selector.is_flat_body() || two_levels) {
            return self;
        }
        let mut ranges = Vec::new();
        for name in selector.top_names() {
            let start = idx(self.flat_slots.len());
            for &(slot, _, _, _) in &self.targets {
                if path_of(keys.get(slot as usize)) == name {
                    self.flat_slots.push(slot);
                }
            }
            ranges.push((start, idx(self.flat_slots.len())));
        }
        self.flat = Some(ranges);
        if two_levels {
            for (top, inner) in selector.top_names().zip(selector.inner_names()) {
                let Some(inner) = inner else {
                    self.flat_inner.push(None);
                    continue;
                };
                let mut ranges = Vec::new();
                for name in inner {
                    let start = idx(self.flat_slots.len());
                    for &(slot, _, _, _) in &self.targets {
                        if path_of(keys.get(slot as usize)).split_once('.') == Some((top, name)) {
                            self.flat_slots.push(slot);
                        }
                    }
                    ranges.push((start, idx(self.flat_slots.len())));
                }
                self.flat_inner.push(Some(FlatInner { ranges }));
            }
        }
        self
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let index = self.by_first.as_ref().map_or(0, |by_first| {
            map_bytes(
                by_first.capacity(),
                std::mem::size_of::<(Box<str>, Vec<u32>)>(),
            ) + by_first
                .iter()
                .map(|(k, v)| k.len() + v.capacity() * 4)
                .sum::<usize>()
        });
        self.targets.capacity() * std::mem::size_of::<(u32, bool, u32, bool)>()
            + self.is_object.capacity() * 4
            + self.flat.as_ref().map_or(0, |f| f.capacity() * 8)
            + self.flat_slots.capacity() * 4
            + self.flat_inner.capacity() * std::mem::size_of::<Option<FlatInner>>()
            + self
                .flat_inner
                .iter()
                .flatten()
                .map(|inner| inner.ranges.capacity() * 8)
                .sum::<usize>()
            + index
    }
}

/// The path of a body key.
pub(super) fn path_of(key: Option<&Key>) -> &str {
    match key {
        Some(Key::BodyPath(path) | Key::BodyPathEach(path) | Key::FieldPath(path, _)) => path,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_columns_take_their_keys_without_growing() {
        let mut t = KeyTable::new();
        t.reserve_keys(3);
        let capacities = |t: &KeyTable| (t.keys.capacity(), t.refs.capacity(), t.needs.capacity());
        assert_eq!(capacities(&t), (3, 3, 3));
        for name in ["a", "b", "c"] {
            t.intern(Key::Header(name.into()));
        }
        t.intern(Key::Header("a".into()));
        assert_eq!(capacities(&t), (3, 3, 3));
        // A released slot is reused first: reserving one more key for it allocates nothing.
        t.release(1);
        t.reserve_keys(1);
        assert_eq!(capacities(&t), (3, 3, 3));
        assert_eq!(t.intern(Key::Header("d".into())), 1);
    }

    #[test]
    fn a_shared_value_is_held_not_copied() {
        let mut t = KeyTable::new();
        let value: Arc<str> = "tomato".into();
        assert_eq!(t.add_value_unstamped(&value), (0, true));
        assert_eq!(
            t.add_value_unstamped(&"tomato".into()),
            (0, false),
            "already there"
        );
        let held = |t: &KeyTable| {
            t.dictionary
                .entries
                .first()
                .map(|(v, refs)| (v.clone(), *refs))
        };
        let (stored, refs) = held(&t).unwrap();
        assert!(Arc::ptr_eq(&stored, &value));
        assert_eq!(refs, 2);
        // A value added by text is copied, and found by its text like the shared one.
        let id = t.add_value("potato");
        assert_eq!(t.constant_id("potato"), Some(id));
        assert_eq!(t.constant_id("tomato"), Some(0));
        // Past the small dictionary, the index holds the same shared values.
        let many: Vec<Arc<str>> = (0..SMALL_DICTIONARY)
            .map(|i| format!("v{i}").into())
            .collect();
        for v in &many {
            t.add_value_unstamped(v);
        }
        let index = t.dictionary.index.as_ref().unwrap();
        let (key, _) = index.get_key_value("v3").unwrap();
        assert!(Arc::ptr_eq(key, &many[3]));
        assert_eq!(t.constant_id("tomato"), Some(0));
    }

    #[test]
    fn a_shared_constant_is_held_not_copied_and_counted_as_a_copied_one() {
        let mut shared = KeyTable::new();
        let mut copied = KeyTable::new();
        for t in [&mut shared, &mut copied] {
            t.intern(Key::Header("a".into()));
        }
        let value: Arc<str> = "tomato".into();
        let stamp = shared.stamp();
        let id = shared.add_constant_shared(0, &value);
        assert_ne!(shared.stamp(), stamp, "a new constant is a change");
        assert_eq!(id, copied.add_constant(0, "tomato"));
        let (stored, refs) = shared.dictionary.entries.first().cloned().unwrap();
        assert!(Arc::ptr_eq(&stored, &value));
        assert_eq!(refs, 1);
        // Found again by text, and a second reference counted, either way.
        assert_eq!(shared.add_constant(0, "tomato"), id);
        assert_eq!(copied.add_constant_shared(0, &value), id);
        assert_eq!(shared.dictionary.entries, copied.dictionary.entries);
        assert_eq!(shared.constant_id("tomato"), Some(id));
        assert_eq!(shared.heap_bytes(), copied.heap_bytes());
        // A slot out of range adds nothing.
        assert_eq!(shared.add_constant_shared(5, &value), NO_ID);
        assert_eq!(shared.dictionary.entries.len(), 1);
    }
}

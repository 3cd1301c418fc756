//! Binding: a message is resolved once against a program's key table.
//!
//! Each key of the table gets a [`Slot`] holding its [`Shape`] and its leaves; the VM then reads
//! slots by index, never a hash map. A `PolicySet` shares one key table, so a message is bound once
//! for all of its programs. Most messages bind to one *row* of slots; an SNS body whose policy
//! reads several fields under one array of objects binds to one row per element combination, so
//! that conditions are satisfied by the same element (sns rule 18).

mod attributes;
mod body;

pub use body::{MAX_COPIED_LEAVES, MAX_ROW_SLOTS};
mod event;
mod headers;

use crate::key::Key;
use crate::message::Message;
use crate::value::{Leaf, Shape, Text};

/// At most this many leaf buffers are kept from one message for the next.
const MAX_SPARE: usize = 4096;
use ahash::AHashMap;

/// The keys a program (or a set of programs) reads, each interned once.
///
/// Each key has a *slot*, its index in the bound rows. A program's table only grows. A table
/// shared by many holders (a `PolicySet`) counts references: every [`KeyTable::intern`] adds one,
/// [`KeyTable::release`] drops one, and a slot whose count reaches zero is *released*: its key is
/// forgotten and the slot holds [`KeyTable::released_key`], which nobody reads, until the next new
/// key reuses it. [`KeyTable::compact`] removes the released slots, renumbering the others, so
/// that the bound width shrinks with the table.
#[derive(Debug, Clone, Default)]
pub struct KeyTable {
    keys: Vec<Key>,
    index: AHashMap<Key, u32>,
    /// Attribute and header names → the slots of the keys that read them, so that binding looks
    /// each of the message's names up once instead of scanning the message once per key.
    names: AHashMap<Box<str>, Vec<u32>>,
    /// The slot of [`Key::AnyAttribute`], if interned.
    any_attribute: Option<u32>,
    /// Per slot: the number of references (0 for a released slot).
    refs: Vec<u32>,
    /// The released slots, reused first by new keys.
    free: Vec<u32>,
}

/// Two tables are equal when they hold the same keys in the same slots (reference counts aside).
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

    /// Interns `key`, returning its slot index, and adds a reference to it.
    pub fn intern(&mut self, key: Key) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            if let Some(r) = self.refs.get_mut(i as usize) {
                *r = r.saturating_add(1);
            }
            return i;
        }
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.keys.push(KeyTable::released_key());
                self.refs.push(0);
                u32::try_from(self.keys.len() - 1).unwrap_or(u32::MAX)
            }
        };
        self.link(i, &key);
        if let Some(k) = self.keys.get_mut(i as usize) {
            *k = key.clone();
        }
        if let Some(r) = self.refs.get_mut(i as usize) {
            *r = 1;
        }
        self.index.insert(key, i);
        i
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
        self.index.remove(&key);
        self.unlink(slot, &key);
        self.free.push(slot);
        true
    }

    /// Removes the released slots: the live keys move down, in order, to slots `0..live`.
    /// Returns each old slot's new slot (`u32::MAX` for a released one). The table keeps no
    /// spare capacity.
    pub fn compact(&mut self) -> Vec<u32> {
        let old_keys = std::mem::take(&mut self.keys);
        let old_refs = std::mem::take(&mut self.refs);
        let mut moved = Vec::with_capacity(old_keys.len());
        let live = old_refs.iter().filter(|&&r| r > 0).count();
        self.keys = Vec::with_capacity(live);
        self.refs = Vec::with_capacity(live);
        self.index = AHashMap::with_capacity(live);
        self.names = AHashMap::new();
        self.any_attribute = None;
        self.free = Vec::new();
        for (key, refs) in old_keys.into_iter().zip(old_refs) {
            if refs == 0 {
                moved.push(u32::MAX);
                continue;
            }
            let i = u32::try_from(self.keys.len()).unwrap_or(u32::MAX);
            moved.push(i);
            self.link(i, &key);
            self.index.insert(key.clone(), i);
            self.keys.push(key);
            self.refs.push(refs);
        }
        self.names.shrink_to_fit();
        moved
    }

    /// Records `key`'s slot in the name index (or as the any-attribute slot).
    fn link(&mut self, slot: u32, key: &Key) {
        match key {
            Key::AttributeText(name) | Key::AttributeTyped(name) | Key::Header(name) => {
                self.names.entry(name.clone()).or_default().push(slot);
            }
            Key::AnyAttribute => self.any_attribute = Some(slot),
            _ => {}
        }
    }

    /// Forgets `key`'s slot in the name index (a name has at most one slot per key kind).
    fn unlink(&mut self, slot: u32, key: &Key) {
        match key {
            Key::AttributeText(name) | Key::AttributeTyped(name) | Key::Header(name) => {
                if let Some(slots) = self.names.get_mut(name) {
                    slots.retain(|&s| s != slot);
                    if slots.is_empty() {
                        self.names.remove(name);
                    }
                }
            }
            Key::AnyAttribute => self.any_attribute = None,
            _ => {}
        }
    }

    /// The slots of the attribute and header keys that read the name `name`.
    #[inline]
    pub fn slots_named(&self, name: &str) -> &[u32] {
        self.names.get(name).map_or(&[], Vec::as_slice)
    }

    /// The slot index of `key`, if interned.
    pub fn get(&self, key: &Key) -> Option<u32> {
        self.index.get(key).copied()
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

    /// The heap bytes the table holds: its slots, its two indexes and the keys' names (held
    /// twice, by the slots and by the index, and a third time by the name index).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let text = |k: &Key| match k {
            Key::AttributeText(n)
            | Key::AttributeTyped(n)
            | Key::Header(n)
            | Key::BodyPath(n)
            | Key::BodyPathEach(n)
            | Key::EventMember(n) => n.len(),
            Key::EventData(path) => {
                path.len() * size_of::<Box<str>>() + path.iter().map(|s| s.len()).sum::<usize>()
            }
            Key::AnyAttribute | Key::BodyIsObject => 0,
        };
        let texts: usize = self.keys.iter().map(text).sum();
        let names: usize = self
            .names
            .iter()
            .map(|(n, slots)| n.len() + slots.capacity() * 4)
            .sum();
        self.keys.capacity() * size_of::<Key>()
            + self.refs.capacity() * 4
            + self.free.capacity() * 4
            + 2 * texts
            + map_bytes(self.index.capacity(), size_of::<(Key, u32)>())
            + map_bytes(self.names.capacity(), size_of::<(Box<str>, Vec<u32>)>())
            + names
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

/// What one key resolved to in one row: its shape and a range of leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// What the key named.
    pub shape: Shape,
    start: u32,
    end: u32,
}

impl Slot {
    /// The absent slot.
    pub const ABSENT: Slot = Slot {
        shape: Shape::Absent,
        start: 0,
        end: 0,
    };
}

/// A message bound to a key table: rows of slots over a shared leaf store.
///
/// Reuse one `Bindings` across messages to keep its buffers.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    leaves: Vec<Leaf>,
    /// For each leaf, the value of its text as a JSON number when it is a string leaf that is one
    /// (B-10, S9), else NaN: computed once per bind so that `text_num_in` never parses.
    text_numbers: Vec<f64>,
    /// The string buffers of the previous message's leaves, reused by [`Bindings::text`].
    spare: Vec<String>,
    slots: Vec<Slot>,
    width: usize,
    /// Set when an SNS body needed more rows than `body::MAX_ROW_SLOTS` allows (see
    /// [`Bindings::overflowed`]).
    overflowed: bool,
}

impl Bindings {
    /// Empty bindings.
    pub fn new() -> Bindings {
        Bindings::default()
    }

    /// Binds `message` to `table`, replacing what was bound before.
    pub fn bind(&mut self, table: &KeyTable, message: &Message) {
        // In reverse, so that the next message's first leaf gets this one's first buffer: messages
        // of one shape then reuse each buffer for a value of about its size.
        for leaf in self.leaves.drain(..).rev() {
            let buffer = match leaf {
                Leaf::Str(text) => text.into_buffer(),
                Leaf::Num(n) => n.into_buffer(),
                Leaf::Bool(_) | Leaf::Null => continue,
            };
            if self.spare.len() < MAX_SPARE {
                self.spare.push(buffer);
            }
        }
        self.text_numbers.clear();
        self.slots.clear();
        self.width = table.len();
        self.overflowed = false;
        match message {
            Message::Attributes(attrs) => attributes::bind(self, table, attrs),
            Message::Headers(headers) => headers::bind(self, table, headers),
            Message::Json(doc) => {
                if table.keys().iter().any(|k| {
                    matches!(
                        k,
                        Key::BodyPath(_) | Key::BodyPathEach(_) | Key::BodyIsObject
                    )
                }) {
                    body::bind(self, table, doc);
                } else {
                    event::bind(self, table, doc);
                }
            }
            Message::Unparsable => {
                self.push_row();
            }
        }
        self.text_numbers
            .extend(self.leaves.iter().map(|leaf| match leaf {
                Leaf::Str(text) => text_number(text),
                _ => f64::NAN,
            }));
    }

    /// Whether the last [`Bindings::bind`] gave up on an SNS body because judging its arrays of
    /// objects element by element (sns rule 18) would need more than [`MAX_ROW_SLOTS`] slots. The
    /// body is then bound as if it were not a JSON object: one row, every body key absent, so it
    /// matches only policies that read nothing from the body (fail closed, never a silent match).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The number of rows (at least one after [`Bindings::bind`]).
    pub fn rows(&self) -> usize {
        self.slots.len().checked_div(self.width).unwrap_or(1).max(1)
    }

    /// The number of slots in a row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The slot of key `key` in row `row` (absent when out of range).
    pub fn slot(&self, row: usize, key: usize) -> Slot {
        if key >= self.width {
            return Slot::ABSENT;
        }
        self.slots
            .get(row * self.width + key)
            .copied()
            .unwrap_or(Slot::ABSENT)
    }

    /// The leaves of a slot.
    pub fn leaves(&self, slot: Slot) -> &[Leaf] {
        self.leaves
            .get(slot.start as usize..slot.end as usize)
            .unwrap_or(&[])
    }

    /// The slots of the only row, when there is one row (most messages), in key order.
    #[inline]
    pub fn only_row(&self) -> Option<&[Slot]> {
        (self.slots.len() == self.width).then_some(self.slots.as_slice())
    }

    /// The slots of row `row`, in key order (empty when out of range).
    #[inline]
    pub fn row(&self, row: usize) -> &[Slot] {
        let start = row.saturating_mul(self.width);
        self.slots
            .get(start..start.saturating_add(self.width))
            .unwrap_or(&[])
    }

    /// For each leaf of a slot: its text read as a JSON number (B-10, S9) when it is a string leaf
    /// whose whole text is one, else NaN (which no interval contains).
    #[inline]
    pub fn text_numbers(&self, slot: Slot) -> &[f64] {
        self.text_numbers
            .get(slot.start as usize..slot.end as usize)
            .unwrap_or(&[])
    }

    /// `text` as a leaf text, in a buffer kept from an earlier message when there is one (so a
    /// stream of messages is bound without allocating once the buffers are large enough).
    #[inline]
    pub(crate) fn text(&mut self, text: &str) -> Text {
        match self.spare.pop() {
            Some(buffer) => Text::in_buffer(buffer, text),
            None => Text::from(text),
        }
    }

    /// Sets a slot of `row` to `shape` holding the leaves pushed since `start`.
    fn close(&mut self, row: usize, key: u32, shape: Shape, start: usize) {
        let slot = Slot {
            shape,
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(self.leaves.len()).unwrap_or(u32::MAX),
        };
        if let Some(s) = self.slots.get_mut(row * self.width + key as usize) {
            *s = slot;
        }
    }

    /// Appends a row of absent slots and returns its index.
    fn push_row(&mut self) -> usize {
        let row = self.slots.len() / self.width.max(1);
        self.slots
            .extend(std::iter::repeat_n(Slot::ABSENT, self.width));
        row
    }

    /// Sets a slot of `row` to `shape` holding `leaves`.
    fn set(&mut self, row: usize, key: u32, shape: Shape, leaves: impl IntoIterator<Item = Leaf>) {
        let start = self.leaves.len();
        self.leaves.extend(leaves);
        let end = self.leaves.len();
        let slot = Slot {
            shape,
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(end).unwrap_or(u32::MAX),
        };
        if let Some(s) = self.slots.get_mut(row * self.width + key as usize) {
            *s = slot;
        }
    }
}

/// Classifies a JSON value into a shape and its leaves: scalars are one leaf, arrays give their
/// scalar elements (nested arrays and objects ignored), objects give none.
pub(crate) fn classify(value: &serde_json::Value) -> (Shape, Vec<Leaf>) {
    match value {
        serde_json::Value::Array(items) => {
            (Shape::Array, items.iter().filter_map(scalar_leaf).collect())
        }
        serde_json::Value::Object(_) => (Shape::Object, Vec::new()),
        serde_json::Value::Null => (Shape::Null, vec![Leaf::Null]),
        other => (Shape::Scalar, scalar_leaf(other).into_iter().collect()),
    }
}

/// The leaf of a scalar JSON value (`None` for arrays and objects).
pub(crate) fn scalar_leaf(value: &serde_json::Value) -> Option<Leaf> {
    match value {
        serde_json::Value::Null => Some(Leaf::Null),
        serde_json::Value::Bool(b) => Some(Leaf::Bool(*b)),
        serde_json::Value::Number(n) => Some(Leaf::Num(json_number(n))),
        serde_json::Value::String(s) => Some(Leaf::Str(s.as_str().into())),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => None,
    }
}

/// The value of `text` as a JSON number ([`crate::number::parse_json_number`]), else NaN. Only
/// text starting with `-` or a digit can be one, so other strings cost one comparison.
fn text_number(text: &str) -> f64 {
    match text.as_bytes().first() {
        Some(b'-' | b'0'..=b'9') => crate::number::parse_json_number(text).unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// A JSON number with its original text (serde_json keeps it with `arbitrary_precision`).
pub(crate) fn json_number(n: &serde_json::Number) -> crate::value::Num {
    let text = n.to_string();
    let value = text.parse::<f64>().unwrap_or(f64::NAN);
    crate::value::Num::new(text, value)
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
        bindings.bind(&t, &Message::headers([("c", "x")]));
        assert_eq!(bindings.width(), 1);
        assert_eq!(bindings.slot(0, 0).shape, Shape::Scalar);
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
        b.bind(
            &t,
            &Message::attributes([("x", AttributeType::String, "1")]),
        );
        assert_eq!(b.rows(), 1);
        assert_eq!(b.slot(0, 0).shape, Shape::Absent);
        assert_eq!(b.slot(0, 7).shape, Shape::Absent);
        assert_eq!(b.slot(9, 0).shape, Shape::Absent);
    }

    #[test]
    fn classify_json_values() {
        let v: serde_json::Value = serde_json::json!([1, "a", [2], {"b": 1}, null, true]);
        let (shape, leaves) = classify(&v);
        assert_eq!(shape, Shape::Array);
        assert_eq!(leaves.len(), 4);
        assert_eq!(classify(&serde_json::json!({"a": 1})).0, Shape::Object);
        assert_eq!(
            classify(&serde_json::json!(null)),
            (Shape::Null, vec![Leaf::Null])
        );
        let (shape, leaves) = classify(&serde_json::from_str("1.50").unwrap());
        assert_eq!(shape, Shape::Scalar);
        assert!(matches!(&leaves[0], Leaf::Num(n) if n.text() == "1.50" && n.value() == 1.5));
    }
}

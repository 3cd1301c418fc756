//! Binding: a message is resolved once against a key table.
//!
//! Each key of the table gets a [`Slot`] holding its [`Shape`](crate::value::Shape) and its leaves;
//! the VM then reads slots by index, never a hash map. A subscription set shares one key table per
//! group, so a message is bound once for all of its programs. Most messages bind to one *row* of
//! slots; an SNS body whose policy reads several fields under one array of objects binds to one row
//! per element combination, so that conditions are satisfied by the same element (sns rule 18).
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
#[cfg(test)]
mod body_tests;
mod bound;
mod event;
mod headers;
#[cfg(test)]
mod headers_tests;
mod leaf;
mod table;
mod tree;

pub use body::{MAX_COPIED_LEAVES, MAX_DEPTH, MAX_ROW_SLOTS};
pub use bound::{Bound, Judgement};
pub(crate) use headers::any_value as any_header_value;
pub use leaf::{BoundLeaf, LeafKind, NO_ID, Slot};
pub(crate) use table::SlotNeeds;
pub use table::{KeyTable, map_bytes};

use crate::json::{self, Extractor};
use crate::message::{Attributes, Headers, Message};
use bumpalo::Bump;

/// Reusable binding scratch: the per-message arena and the JSON reader. Keep one per thread (or
/// per evaluator) so that binding a stream of messages allocates nothing once warm.
#[derive(Debug, Default)]
pub struct Bindings {
    arena: Bump,
    extractor: Extractor,
    /// Leaves waiting for their slot (headers repeating a name), as `(slot, order, leaf)`; empty
    /// between messages (typed `'static` only to keep its memory, see [`leaf::recycle`]).
    pending: Vec<(u32, u32, BoundLeaf<'static>)>,
    /// Number texts of a tree being bound whole.
    text: String,
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

    /// Reads the JSON bytes bound from now on in `mode` ([`json::ReadMode::Validating`] until
    /// set): in [`json::ReadMode::Trusted`], members no key reads are skipped by their structure
    /// alone, unchecked (see [`json::ReadMode`] for what that changes).
    pub fn set_read_mode(&mut self, mode: json::ReadMode) {
        self.extractor.set_read_mode(mode);
    }

    /// The mode JSON bytes are read in.
    pub fn read_mode(&self) -> json::ReadMode {
        self.extractor.read_mode()
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
    /// event): one pass over the bytes (validating them, unless the read mode is trusted) keeps
    /// only what the table's keys read
    /// ([`KeyTable::selector`]), at any depth. Bytes that are not one JSON document bind every
    /// key absent and are reported ([`Judgement::NotJson`]).
    pub fn bind_json<'b>(&'b mut self, table: &'b KeyTable, json: &'b [u8]) -> Bound<'b> {
        let Bindings {
            arena, extractor, ..
        } = self;
        arena.reset();
        let arena: &'b Bump = arena;
        if let Some(flat) = flat_plan(table) {
            return bind_flat(table, flat, extractor, arena, json, None);
        }
        bound_json(
            table,
            extractor.extract_measured(table.selector(), json),
            arena,
        )
    }

    /// [`Bindings::bind_json`], noting in the same read whether the document is an object whose
    /// first member's name is not `listed` ([`Bound::first_name_unlisted`];
    /// [`json::Extractor::extract_noting_first_name`] says when that is known).
    pub fn bind_json_noting_first_name<'b>(
        &'b mut self,
        table: &'b KeyTable,
        json: &'b [u8],
        listed: json::NameTest,
    ) -> Bound<'b> {
        let Bindings {
            arena, extractor, ..
        } = self;
        arena.reset();
        let arena: &'b Bump = arena;
        if let Some(flat) = flat_plan(table) {
            return bind_flat(table, flat, extractor, arena, json, Some(listed));
        }
        let (read, unlisted) = extractor.extract_noting_first_name(table.selector(), json, listed);
        let mut bound = bound_json(table, read, arena);
        bound.first_unlisted = unlisted;
        bound
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

/// The flat plan of `table` ([`table::BodyPlan::flat`]), when it reads the body and has one.
#[inline(always)]
fn flat_plan(table: &KeyTable) -> Option<&table::BodyPlan> {
    if !table.reads_body() {
        return None;
    }
    let plan = table.body_plan();
    plan.flat.is_some().then_some(plan)
}

/// Binds JSON bytes to a table of one-segment body paths ([`table::BodyPlan::flat`]): each
/// scalar member the reader keeps is bound to its keys' slots as it is read, without building
/// the pruned document or walking it (a repeated name's last value wins, as in the document,
/// whose first position keeps the last value; with EventBridge field paths every occurrence
/// counts, as there). SNS tables of paths of two segments ([`table::BodyPlan::flat_inner`])
/// bind the scalar members of an object kept at the top level the same way. A document that
/// is no object, or keeps a member whose value is an array or object (beyond such a
/// two-level object), or, with two levels, a name twice or a dotted name, is read on into the
/// pruned document and bound by [`bind_document`] as always (the slots bound so far are
/// dropped). The reader takes the same
/// steps either way (see [`json::Extractor::extract_tapped`]), so the result and any error are
/// those of [`bound_json`] on the document; `bind::body_tests` compares the two.
///
/// A table whose selector keeps repeated names ([`json::Selector::keeps_repeats`]) reads with
/// a tap of its own ([`FlatTap`]'s `REPEATS`), so that SNS tables' member loop has no branch for
/// them.
fn bind_flat<'b>(
    table: &'b KeyTable,
    plan: &'b table::BodyPlan,
    extractor: &'b mut Extractor,
    arena: &'b Bump,
    json: &'b [u8],
    listed: Option<json::NameTest>,
) -> Bound<'b> {
    let row = arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
    let ((read, unlisted), row) = if table.selector().keeps_repeats() {
        FlatTap::<true, false>::new(table, plan, row, arena).read(extractor, json, listed)
    } else if plan.flat_inner.is_empty() {
        FlatTap::<false, false>::new(table, plan, row, arena).read(extractor, json, listed)
    } else {
        FlatTap::<false, true>::new(table, plan, row, arena).read(extractor, json, listed)
    };
    let mut bound = match read {
        Ok((json::Tapped::Flat, deepest)) => {
            for &slot in &plan.is_object {
                if let Some(s) = row.get_mut(slot as usize) {
                    *s = Slot::bare(crate::value::Shape::Scalar);
                }
            }
            let mut bound = Bound::new(table, row);
            bound.root_object = true;
            bound.deepest = deepest;
            bound
        }
        Ok((json::Tapped::Document(doc), deepest)) => bound_json(table, Ok((doc, deepest)), arena),
        Err(e) => bound_json(table, Err(e), arena),
    };
    bound.first_unlisted = unlisted;
    bound
}

/// Binds the scalar members of a flat body as the reader gives them ([`bind_flat`]).
///
/// `REPEATS` (EventBridge field paths, [`json::Selector::keeps_repeats`]): each occurrence of a
/// repeated name adds its leaf after the ones before, in `arena`, as the document's binder joins
/// them (an array of the values, in document order). Without, the last occurrence's value wins.
/// `TWO_LEVELS` ([`table::BodyPlan::flat_inner`]): the scalar members of objects kept at the top
/// level are bound too.
struct FlatTap<'b, const REPEATS: bool, const TWO_LEVELS: bool> {
    table: &'b KeyTable,
    ranges: &'b [(u32, u32)],
    /// The keys below each top-level name ([`table::BodyPlan::flat_inner`]).
    inner: &'b [Option<table::FlatInner>],
    slots: &'b [u32],
    row: &'b mut [Slot<'b>],
    arena: &'b Bump,
}

impl<'b, const REPEATS: bool, const TWO_LEVELS: bool> FlatTap<'b, REPEATS, TWO_LEVELS> {
    /// The tap of `plan`'s flat table, binding into `row`.
    #[inline(always)]
    fn new(
        table: &'b KeyTable,
        plan: &'b table::BodyPlan,
        row: &'b mut [Slot<'b>],
        arena: &'b Bump,
    ) -> Self {
        FlatTap {
            table,
            ranges: plan.flat.as_deref().unwrap_or_default(),
            inner: &plan.flat_inner,
            slots: &plan.flat_slots,
            row,
            arena,
        }
    }

    /// Reads `json` with this tap ([`json::Extractor::extract_tapped`]): what the extractor
    /// gives, and the row.
    #[inline(always)]
    fn read(
        mut self,
        extractor: &'b mut Extractor,
        json: &'b [u8],
        listed: Option<json::NameTest>,
    ) -> (FlatRead<'b>, &'b mut [Slot<'b>]) {
        let selector = self.table.selector();
        let read = extractor.extract_tapped(selector, json, listed, &mut self);
        (read, self.row)
    }

    /// Binds a scalar member's value to the slots of `flat_slots[start..end]`.
    #[inline(always)]
    fn bind(&mut self, start: u32, end: u32, value: &json::Node<'b>) {
        let Some(leaf) = leaf::node_leaf(value) else {
            return;
        };
        for &slot in self
            .slots
            .get(start as usize..end as usize)
            .unwrap_or_default()
        {
            let leaf = if leaf.kind == LeafKind::Str {
                self.table.str_leaf(slot, leaf.text)
            } else {
                leaf
            };
            if let Some(s) = self.row.get_mut(slot as usize) {
                *s = if REPEATS && s.shape != crate::value::Shape::Absent {
                    repeated(self.arena, *s, leaf)
                } else {
                    Slot::one(leaf)
                };
            }
        }
    }
}

/// What [`json::Extractor::extract_tapped`] gives: the read (flat or a document, with its
/// depth) and the first-name note.
type FlatRead<'b> = (Result<(json::Tapped<'b>, usize), json::Error>, bool);

impl<'b, const REPEATS: bool, const TWO_LEVELS: bool> json::Tap<'b>
    for FlatTap<'b, REPEATS, TWO_LEVELS>
{
    const ON: bool = true;
    const TWO_LEVELS: bool = TWO_LEVELS;

    #[inline(always)]
    fn scalar(&mut self, child: Option<u32>, value: json::Node<'b>) {
        // A flat selector matches whole names only; a dotted name (`None`, two-level selectors
        // only) sends the read to the document.
        let Some(&(start, end)) = child.and_then(|c| self.ranges.get(c as usize)) else {
            return;
        };
        self.bind(start, end, &value);
    }

    #[inline(always)]
    fn inner_scalar(&mut self, parent: u32, child: Option<u32>, value: json::Node<'b>) {
        let Some(Some(inner)) = self.inner.get(parent as usize) else {
            return;
        };
        let Some(&(start, end)) = child.and_then(|c| inner.ranges.get(c as usize)) else {
            return;
        };
        self.bind(start, end, &value);
    }
}

/// `slot` with `leaf` after its leaves (a repeated name's next occurrence; see [`FlatTap`]).
#[cold]
#[inline(never)]
fn repeated<'b>(arena: &'b Bump, slot: Slot<'b>, leaf: BoundLeaf<'b>) -> Slot<'b> {
    let mut all = slot.leaves().copied().chain(std::iter::once(leaf));
    let leaves =
        arena.alloc_slice_fill_with(slot.len() + 1, |_| all.next().unwrap_or(BoundLeaf::EMPTY));
    Slot::of(leaves)
}

/// The bound form of JSON bytes as the extractor read them (see [`Bindings::bind_json`]).
#[inline(always)]
fn bound_json<'b>(
    table: &'b KeyTable,
    read: Result<(json::Node<'b>, usize), json::Error>,
    arena: &'b Bump,
) -> Bound<'b> {
    match read {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;
    use crate::message::{AttributeType, Message};
    use crate::value::Shape;
    use leaf::number_value;

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
        assert_eq!(t.indexes(), (true, true));
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
        assert_eq!(t.indexes(), (false, false));
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
        assert_eq!(t.indexes(), (true, true));
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
            "437.5",
            "-0.000",
            "0.30000000000000004",
            "999999999999999",
            "99999999999999.9",
            "1234567890123456",
            "-123456789.012345",
            "0.000000000000001",
            "00012.5",
        ] {
            let expected = text.parse::<f64>().unwrap();
            let got = number_value(text);
            assert_eq!(got.to_bits(), expected.to_bits(), "{text}");
        }
    }

    #[test]
    fn short_decimals_are_what_the_general_parser_reads() {
        // Digits of every length up to 17 (past the short path's 15), the point anywhere.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 1 + (state % 17) as usize;
            let digits: String = (0..len)
                .map(|i| char::from(b'0' + ((state >> (i * 3 % 60)) % 10) as u8))
                .collect();
            let point = (state >> 40) as usize % (len + 1);
            let sign = if state >> 63 == 1 { "-" } else { "" };
            let text = if point == 0 || point == len {
                format!("{sign}{digits}")
            } else {
                format!("{sign}{}.{}", &digits[..point], &digits[point..])
            };
            let expected = text.parse::<f64>().unwrap();
            assert_eq!(number_value(&text).to_bits(), expected.to_bits(), "{text}");
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

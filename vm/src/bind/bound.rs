//! A message bound to a key table ([`Bound`]): its rows of slots and how far it could be judged.

use super::leaf::Slot;
use super::table::KeyTable;
use crate::json;

/// How far a message could be judged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Judgement {
    /// Every key was bound.
    #[default]
    Judged,
    /// An SNS body needed more binding rows than [`MAX_ROW_SLOTS`](crate::bind::MAX_ROW_SLOTS)
    /// allow (sns rule 18): it was bound as if it were not a JSON object, so it matches only
    /// policies that read nothing from the body.
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
    pub(super) judgement: Judgement,
    /// Whether the JSON document's top level is an object (true for messages that are not
    /// JSON documents).
    pub(super) root_object: bool,
    /// The JSON bytes' nesting depth when more than 64, else 0.
    pub(super) deepest: usize,
    /// See [`Bound::first_name_unlisted`].
    pub(super) first_unlisted: bool,
}

impl<'b> Bound<'b> {
    pub(super) fn new(table: &KeyTable, slots: &'b [Slot<'b>]) -> Bound<'b> {
        Bound {
            slots,
            width: table.len(),
            stamp: table.stamp(),
            judgement: Judgement::Judged,
            root_object: true,
            deepest: 0,
            first_unlisted: false,
        }
    }

    /// Whether the JSON bytes are an object whose first member's name is known not to be among
    /// the names given to
    /// [`Bindings::bind_json_noting_first_name`](crate::bind::Bindings::bind_json_noting_first_name)
    /// (false when not known, and for messages bound otherwise). Known also of bytes that are
    /// not JSON past that name ([`Bound::not_json`]).
    pub fn first_name_unlisted(&self) -> bool {
        self.first_unlisted
    }

    /// Whether the message, when a JSON document, is an object at its top level (a JSON
    /// document that is not one binds every body key absent; EventBridge makes it an error,
    /// `docs/dialects/eventbridge-patterns.md` EB-3). True for messages that are not JSON
    /// documents, and for bytes that are not JSON (see [`Bound::not_json`]).
    pub fn root_is_object(&self) -> bool {
        self.root_object
    }

    /// The nesting depth of JSON bytes (the most arrays and objects open at once) when more
    /// than 64, else 0: bytes read by [`Bindings::bind_json`](crate::bind::Bindings::bind_json) are
    /// validated at any depth, and a dialect with a depth limit (EB-34) checks it here. 0 for other
    /// messages.
    pub fn deepest(&self) -> usize {
        self.deepest
    }

    /// How far the message could be judged.
    pub fn judgement(&self) -> &Judgement {
        &self.judgement
    }

    /// Whether the binder gave up on a body: judging its arrays of objects element by element
    /// (sns rule 18) would need more than [`MAX_ROW_SLOTS`](crate::bind::MAX_ROW_SLOTS) slots
    /// ([`Judgement::Overflowed`]), or rows cannot judge an EventBridge absence exactly
    /// ([`Judgement::Unsupported`]). Either way every body key is absent and the VM fails closed.
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

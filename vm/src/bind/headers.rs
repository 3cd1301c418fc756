//! Binding headers (stream, expr), borrowed from any [`Headers`]: each value a string leaf.

use super::leaf::{BoundLeaf, LeafKind, Slot, recycle};
use super::table::{KeyTable, SlotNeeds, idx};
use crate::bytes::same;
use crate::key::Key;
use crate::message::{HeaderValues, Headers, Text};
use crate::value::Shape;
use bumpalo::Bump;

/// Binds `headers` into `row`: each entry's name is looked up once, its values borrowed. Several
/// entries of one name are one multimap entry: every value counts, in order (the values of
/// repeated names wait in `pending`, this scratch's memory, until they are gathered). A name
/// with one value is a scalar, with none (an empty list) or several an array.
///
/// Few header keys (most programs) are compared with each name in turn, one key by its length
/// and bytes alone; many are looked up in the table's name index.
pub(super) fn bind<'b, H: Headers + ?Sized>(
    table: &KeyTable,
    row: &mut [Slot<'b>],
    headers: &'b H,
    arena: &'b Bump,
    pending: &mut Vec<(u32, u32, BoundLeaf<'static>)>,
) {
    let mut waiting: Option<Vec<(u32, u32, BoundLeaf<'b>)>> = None;
    let mut bind_values = |slot, needs, values| {
        add(
            table,
            row,
            slot,
            needs,
            values,
            arena,
            &mut waiting,
            pending,
        );
    };
    match table.header_scan().map(|scan| (scan, scan.keys())) {
        Some((_, [])) => {}
        Some((_, [(key, slot, needs)])) => {
            let key = key.as_bytes();
            let mut entries = headers.entries();
            while let Some((_, values)) = entries.find(|(name, _)| same(key, name.bytes())) {
                bind_values(*slot, *needs, values.values());
            }
        }
        Some((scan, keys)) => {
            for (name, values) in headers.entries() {
                let name = name.bytes();
                if !scan.may_have(name.len()) {
                    continue;
                }
                if let Some((_, slot, needs)) = keys.iter().find(|(n, ..)| same(n.as_bytes(), name))
                {
                    bind_values(*slot, *needs, values.values());
                }
            }
        }
        None => {
            for (name, values) in headers.entries() {
                let Ok(name) = std::str::from_utf8(name.bytes()) else {
                    continue;
                };
                for &i in table.slots_named(name) {
                    if let Some(Key::Header(_)) = table.keys().get(i as usize) {
                        bind_values(i, table.needs(i), values.values());
                    }
                }
            }
        }
    }
    if let Some(mut waiting) = waiting {
        gather(row, arena, &mut waiting);
        *pending = recycle(waiting);
    }
}

/// Whether some value of the headers named `name` satisfies `test`, each value tested as the one
/// leaf of a slot, that leaf bound as [`bind`] binds it (for a slot with `needs`); in message
/// order, stopping at the first that does.
#[inline(always)]
pub(crate) fn any_value<H: Headers + ?Sized>(
    table: &KeyTable,
    headers: &H,
    name: &[u8],
    needs: SlotNeeds,
    mut test: impl FnMut(&Slot<'_>) -> bool,
) -> bool {
    for (n, values) in headers.entries() {
        if same(name, n.bytes()) {
            for v in values.values() {
                if test(&Slot::one(leaf(table, needs, v))) {
                    return true;
                }
            }
        }
    }
    false
}

/// A header value as a leaf of a slot with `needs`: a string, or [`LeafKind::Bytes`] when it is
/// not UTF-8.
#[inline(always)]
fn leaf<'b, V: Text>(table: &KeyTable, needs: SlotNeeds, value: &'b V) -> BoundLeaf<'b> {
    match value.text() {
        Ok(s) => table.str_leaf_with(needs, s),
        Err(_) => BoundLeaf::plain(LeafKind::Bytes),
    }
}

/// Binds one entry's values to `slot`: straight into the slot for the first entry of a name,
/// into `waiting` for a repeated one (taking the scratch's memory on first use).
#[inline(always)]
#[expect(
    clippy::too_many_arguments,
    reason = "the binder's state, passed to its inlined step"
)]
fn add<'b, V: Text>(
    table: &KeyTable,
    row: &mut [Slot<'b>],
    slot: u32,
    needs: SlotNeeds,
    values: &'b [V],
    arena: &'b Bump,
    waiting: &mut Option<Vec<(u32, u32, BoundLeaf<'b>)>>,
    pending: &mut Vec<(u32, u32, BoundLeaf<'static>)>,
) {
    let Some(s) = row.get_mut(slot as usize) else {
        return;
    };
    if s.shape != Shape::Absent {
        let waiting = waiting.get_or_insert_with(|| recycle(std::mem::take(pending)));
        for v in values {
            let seq = idx(waiting.len());
            waiting.push((slot, seq, leaf(table, needs, v)));
        }
        return;
    }
    *s = match values {
        [] => Slot::bare(Shape::Array),
        [only] => Slot::one(leaf(table, needs, only)),
        [first, rest @ ..] => Slot {
            first: leaf(table, needs, first),
            rest: arena.alloc_slice_fill_iter(rest.iter().map(|v| leaf(table, needs, v))),
            shape: Shape::Array,
        },
    };
}

/// Gives each slot of a repeated name all its values: the first entry's, then `pending`'s in
/// message order. `pending` is left empty.
fn gather<'b>(row: &mut [Slot<'b>], arena: &'b Bump, pending: &mut Vec<(u32, u32, BoundLeaf<'b>)>) {
    pending.sort_unstable_by_key(|&(slot, seq, _)| (slot, seq));
    let mut at = 0;
    while let Some(&(slot, _, _)) = pending.get(at) {
        let end = pending
            .get(at..)
            .and_then(|p| p.iter().position(|&(s, _, _)| s != slot))
            .map_or(pending.len(), |n| at + n);
        let more = pending.get(at..end).unwrap_or(&[]);
        if let Some(s) = row.get_mut(slot as usize) {
            let own = *s;
            let n = own.len();
            let leaves = arena.alloc_slice_fill_with(n + more.len(), |i| {
                let from_more = i.checked_sub(n).and_then(|j| more.get(j));
                match (i, from_more) {
                    (_, Some(&(_, _, l))) => l,
                    (0, None) => own.first,
                    (i, None) => own.rest.get(i - 1).copied().unwrap_or(BoundLeaf::EMPTY),
                }
            });
            *s = match &*leaves {
                [] => Slot::bare(Shape::Array),
                [only] => Slot::one(*only),
                [first, rest @ ..] => Slot {
                    first: *first,
                    rest,
                    shape: Shape::Array,
                },
            };
        }
        at = end;
    }
    pending.clear();
}

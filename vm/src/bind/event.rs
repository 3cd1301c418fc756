//! Binding Event Grid events (EG-16..EG-20), from a JSON document (pruned by the table's
//! selector, or whole).
//!
//! - [`Key::EventMember`]`(name)`: the top-level member `name`, matched ignoring ASCII case
//!   (EG-16, EG-17). The compiler writes `name` in a canonical spelling (`eventType`,
//!   `dataVersion`, CloudEvents attributes in lower case); a member spelled exactly so wins, and
//!   otherwise the first member (in document order) equal to it ignoring ASCII case
//!   **[implementation decision, for events carrying several case variants of one name]**.
//! - [`Key::EventData`]`(path)`: the top-level `data` member (found the same way), then one
//!   member per segment by **exact** name (EG-18); any non-object on the way, or a missing
//!   member, leaves the key absent. The empty path is the whole `data` value.
//!
//! The value found is classified: `null` → null, a scalar → one leaf, an array → its scalar
//! elements as leaves (objects and nested arrays inside are not leaves), an object → no leaves
//! (EG-20, EG-21). An event that is not a JSON object leaves every key absent.

use super::leaf::{BoundLeaf, Slot, node_leaf};
use super::table::{KeyTable, finish_leaf};
use crate::json::{Member, Node};
use crate::key::Key;
use crate::value::Shape;
use bumpalo::Bump;

/// The top-level member `name`: exact spelling first, then ignoring ASCII case.
fn member<'a, 'b>(event: &'a [Member<'b>], name: &str) -> Option<&'a Node<'b>> {
    event
        .iter()
        .find(|m| m.name == name)
        .or_else(|| event.iter().find(|m| m.name.eq_ignore_ascii_case(name)))
        .map(|m| &m.value)
}

/// Resolves one key against an event object.
fn resolve<'a, 'b>(event: &'a [Member<'b>], key: &Key) -> Option<&'a Node<'b>> {
    match key {
        Key::EventMember(name) => member(event, name),
        Key::EventData(path) => path
            .iter()
            .try_fold(member(event, "data")?, |cur, seg| cur.get(seg)),
        _ => None,
    }
}

/// Binds `doc` into `row`.
pub(super) fn bind<'b>(table: &KeyTable, row: &mut [Slot<'b>], doc: Node<'b>, arena: &'b Bump) {
    let Node::Object(event) = doc else {
        return;
    };
    for (i, key) in table.keys().iter().enumerate() {
        if let Some(value) = resolve(event, key)
            && let Some(slot) = row.get_mut(i)
        {
            *slot = classify(table, super::table::idx(i), value, arena);
        }
    }
}

/// The slot of a value found for `slot`.
fn classify<'b>(table: &KeyTable, slot: u32, value: &Node<'b>, arena: &'b Bump) -> Slot<'b> {
    match value {
        Node::Object(_) => Slot::bare(Shape::Object),
        Node::Array(items) => {
            let n = items.iter().filter(|i| node_leaf(i).is_some()).count();
            let mut leaves = items
                .iter()
                .filter_map(node_leaf)
                .map(|l| finish_leaf(table, slot, l));
            let leaves =
                arena.alloc_slice_fill_with(n, |_| leaves.next().unwrap_or(BoundLeaf::EMPTY));
            match &*leaves {
                [] => Slot::bare(Shape::Array),
                [first, rest @ ..] => Slot {
                    first: *first,
                    rest,
                    shape: Shape::Array,
                },
            }
        }
        scalar => match node_leaf(scalar) {
            Some(leaf) => Slot::one(finish_leaf(table, slot, leaf)),
            None => Slot::ABSENT,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::Bindings;
    use super::*;
    use crate::message::Message;
    use crate::value::Leaf;

    fn bind_all(keys: &[Key], doc: serde_json::Value) -> Vec<(Shape, Vec<Leaf>)> {
        let mut t = KeyTable::new();
        for k in keys {
            t.intern(k.clone());
        }
        let mut b = Bindings::new();
        let tree = Message::Json(doc.clone());
        let from_tree: Vec<(Shape, Vec<Leaf>)> = {
            let bound = b.bind(&t, &tree);
            (0..keys.len())
                .map(|k| {
                    let s = bound.slot(0, k);
                    (s.shape, s.leaves().filter_map(BoundLeaf::to_leaf).collect())
                })
                .collect()
        };
        // The raw bytes bind the same.
        let bytes = doc.to_string();
        let bound = b.bind_json(&t, bytes.as_bytes());
        for (k, expected) in from_tree.iter().enumerate() {
            let s = bound.slot(0, k);
            let got: (Shape, Vec<Leaf>) =
                (s.shape, s.leaves().filter_map(BoundLeaf::to_leaf).collect());
            assert_eq!(&got, expected, "key {k} of {bytes}");
        }
        from_tree
    }

    #[test]
    fn eg_16_members_ignore_case_and_data_walks_exactly() {
        let b = bind_all(
            &[
                Key::EventMember("subject".into()),
                Key::EventData(vec!["a".into(), "b".into()].into()),
                Key::EventData(vec!["A".into()].into()),
                Key::EventData(Vec::new().into()),
            ],
            serde_json::json!({"Subject": "s", "data": {"a": {"b": [1, 2]}}}),
        );
        assert_eq!(b[0].0, Shape::Scalar);
        assert_eq!(b[1].0, Shape::Array);
        assert_eq!(b[2].0, Shape::Absent);
        assert_eq!(b[3].0, Shape::Object);
    }

    #[test]
    fn eg_16_exact_spelling_wins_over_case_variants() {
        let b = bind_all(
            &[
                Key::EventMember("eventType".into()),
                Key::EventData(Vec::new().into()),
            ],
            serde_json::json!({"EVENTTYPE": "upper", "eventType": "exact", "DATA": 1, "Data": 2}),
        );
        assert_eq!(b[0].1, [Leaf::Str("exact".into())]);
        // No exact `data`: the first case variant in document order.
        assert!(matches!(&b[1].1[..], [Leaf::Num(n)] if n.text() == "1"));
    }

    #[test]
    fn eg_18_non_object_on_the_way_is_absent() {
        let b = bind_all(
            &[
                Key::EventData(vec!["s".into(), "x".into()].into()),
                Key::EventData(vec!["arr".into(), "0".into()].into()),
                Key::EventData(vec!["n".into()].into()),
            ],
            serde_json::json!({"data": {"s": "str", "arr": [{"0": 1}], "n": null}}),
        );
        assert_eq!(b[0].0, Shape::Absent);
        assert_eq!(b[1].0, Shape::Absent);
        assert_eq!(b[2].0, Shape::Null);
    }

    #[test]
    fn eg_20_non_object_event_binds_every_key_absent() {
        let b = bind_all(
            &[
                Key::EventMember("id".into()),
                Key::EventData(Vec::new().into()),
            ],
            serde_json::json!(["id", "data"]),
        );
        assert_eq!(b[0].0, Shape::Absent);
        assert_eq!(b[1].0, Shape::Absent);
    }

    #[test]
    fn arrays_keep_their_scalars_only() {
        let b = bind_all(
            &[Key::EventData(vec!["t".into()].into())],
            serde_json::json!({"data": {"t": [1, "a", [2], {"b": 1}, null, true]}}),
        );
        assert_eq!(b[0].0, Shape::Array);
        assert_eq!(b[0].1.len(), 4);
    }

    #[test]
    fn bytes_that_are_not_json_are_reported() {
        let mut t = KeyTable::new();
        t.intern(Key::EventMember("id".into()));
        let mut b = Bindings::new();
        let bound = b.bind_json(&t, b"{\"id\": ");
        assert!(bound.not_json().is_some());
        assert_eq!(bound.slot(0, 0).shape, Shape::Absent);
    }
}

//! Tests of the header binder (`headers.rs`), binding through [`super::Bindings`] as the
//! executor's callers do.

use super::Bindings;
use super::leaf::{BoundLeaf, LeafKind, Slot};
use super::table::KeyTable;
use crate::key::Key;
use crate::message::{Header, Message};
use crate::value::Leaf;
use crate::value::Shape;
use std::collections::{BTreeMap, HashMap};

fn leaves(slot: &Slot<'_>) -> Vec<Leaf> {
    slot.leaves().filter_map(BoundLeaf::to_leaf).collect()
}

#[test]
fn single_and_multi_valued_headers() {
    let mut t = KeyTable::new();
    t.intern(Key::Header("h".into()));
    t.intern(Key::Header("m".into()));
    t.intern(Key::Header("none".into()));
    let msg = Message::Headers(vec![
        Header {
            name: "h".into(),
            values: vec!["a".into()],
        },
        Header {
            name: "m".into(),
            values: vec!["x".into(), "y".into()],
        },
    ]);
    let mut b = Bindings::new();
    let bound = b.bind(&t, &msg);
    assert_eq!(bound.slot(0, 0).shape, Shape::Scalar);
    assert_eq!(bound.slot(0, 1).shape, Shape::Array);
    assert_eq!(bound.slot(0, 1).len(), 2);
    assert_eq!(bound.slot(0, 2).shape, Shape::Absent);
}

#[test]
fn repeated_names_merge_empty_entries_are_present_and_buffers_are_reused() {
    let mut t = KeyTable::new();
    t.intern(Key::Header("m".into()));
    t.intern(Key::Header("e".into()));
    let msg = Message::Headers(vec![
        Header {
            name: "m".into(),
            values: vec!["x".into()],
        },
        Header {
            name: "e".into(),
            values: vec![],
        },
        Header {
            name: "m".into(),
            values: vec!["y".into()],
        },
    ]);
    let mut b = Bindings::new();
    for _ in 0..2 {
        let bound = b.bind(&t, &msg);
        assert_eq!(bound.slot(0, 0).shape, Shape::Array);
        assert_eq!(
            leaves(bound.slot(0, 0)),
            [Leaf::Str("x".into()), Leaf::Str("y".into())]
        );
        assert_eq!(bound.slot(0, 1).shape, Shape::Array);
        assert!(bound.slot(0, 1).is_empty());
    }
}

#[test]
fn many_repeated_names_gather_in_message_order() {
    let mut t = KeyTable::new();
    for i in 0..20 {
        t.intern(Key::Header(format!("h{i}").into()));
    }
    // Three rounds of every name, the values numbered in message order.
    let entries: Vec<(String, Vec<String>)> = (0..60)
        .map(|n| (format!("h{}", n % 20), vec![n.to_string()]))
        .collect();
    let mut b = Bindings::new();
    let bound = b.bind_headers(&t, &entries);
    for i in 0..20usize {
        let expected: Vec<Leaf> = (0..3)
            .map(|round| Leaf::Str((round * 20 + i).to_string().into()))
            .collect();
        assert_eq!(leaves(bound.slot(0, i)), expected, "h{i}");
    }
}

#[test]
fn maps_and_slices_of_borrowed_pairs_bind_alike() {
    let mut t = KeyTable::new();
    t.intern(Key::Header("region".into()));
    t.intern(Key::Header("tags".into()));
    let mut b = Bindings::new();
    let expected = |bound: &super::Bound<'_>| {
        assert_eq!(leaves(bound.slot(0, 0)), [Leaf::Str("eu".into())]);
        assert_eq!(
            leaves(bound.slot(0, 1)),
            [Leaf::Str("a".into()), Leaf::Str("b".into())]
        );
    };
    let pairs = [("region", vec!["eu"]), ("tags", vec!["a", "b"])];
    expected(&b.bind_headers(&t, &pairs));
    let map: HashMap<&str, Vec<&str>> = pairs.iter().cloned().collect();
    expected(&b.bind_headers(&t, &map));
    let tree: BTreeMap<String, Vec<String>> = pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.iter().map(|s| s.to_string()).collect()))
        .collect();
    expected(&b.bind_headers(&t, &tree));
    let bytes: [(&[u8], &[u8]); 2] = [(b"region", b"\xff"), (b"\xfftags", b"x")];
    let bound = b.bind_headers(&t, &bytes);
    assert_eq!(bound.slot(0, 0).shape, Shape::Scalar);
    assert_eq!(
        bound.slot(0, 0).leaves().next().map(BoundLeaf::kind),
        Some(LeafKind::Bytes)
    );
    assert_eq!(bound.slot(0, 1).shape, Shape::Absent);
}

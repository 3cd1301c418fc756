//! Binding headers (stream, expr): each value a string leaf.

use super::{Bindings, KeyTable};
use crate::key::Key;
use crate::message::Header;
use crate::value::{Leaf, Shape};

pub(super) fn bind(b: &mut Bindings, table: &KeyTable, headers: &[Header]) {
    let row = b.push_row();
    for (i, key) in table.keys().iter().enumerate() {
        let slot = u32::try_from(i).unwrap_or(u32::MAX);
        if let Key::Header(name) = key {
            // Several entries of one name are one multimap entry: every value counts. Values are
            // copied into buffers kept from the previous message ([`Bindings::text`]).
            let start = b.leaves.len();
            let mut present = false;
            for h in headers.iter().filter(|h| *h.name == **name) {
                present = true;
                for v in &h.values {
                    let leaf = Leaf::Str(b.text(v));
                    b.leaves.push(leaf);
                }
            }
            if present {
                let shape = if b.leaves.len() - start == 1 {
                    Shape::Scalar
                } else {
                    Shape::Array
                };
                b.close(row, slot, shape, start);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

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
        b.bind(&t, &msg);
        assert_eq!(b.slot(0, 0).shape, Shape::Scalar);
        assert_eq!(b.slot(0, 1).shape, Shape::Array);
        assert_eq!(b.leaves(b.slot(0, 1)).len(), 2);
        assert_eq!(b.slot(0, 2).shape, Shape::Absent);
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
            b.bind(&t, &msg);
            assert_eq!(b.slot(0, 0).shape, Shape::Array);
            assert_eq!(
                b.leaves(b.slot(0, 0)),
                [Leaf::Str("x".into()), Leaf::Str("y".into())]
            );
            assert_eq!(b.slot(0, 1).shape, Shape::Array);
            assert!(b.leaves(b.slot(0, 1)).is_empty());
        }
    }
}

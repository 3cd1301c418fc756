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
            // Several entries of one name are one multimap entry: every value counts.
            let values: Vec<Leaf> = headers
                .iter()
                .filter(|h| *h.name == **name)
                .flat_map(|h| h.values.iter().map(|v| Leaf::Str(v.as_str().into())))
                .collect();
            match values.len() {
                0 if !headers.iter().any(|h| *h.name == **name) => {}
                1 => b.set(row, slot, Shape::Scalar, values),
                _ => b.set(row, slot, Shape::Array, values),
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
}

//! Binding typed attributes (basaltic, sns attribute scope).

use super::{Bindings, KeyTable};
use crate::key::Key;
use crate::message::{Attribute, AttributeType};
use crate::value::{Leaf, Num, Shape};

/// Tables of at most this many keys are bound by scanning the message once per key; larger ones
/// (a `PolicySet` over many attribute names) look each attribute's name up in the table's name
/// index instead. Measured (iai, 8 attributes): hashing a name costs about as much as comparing it
/// against a dozen keys.
const SCAN_KEYS: usize = 12;

pub(super) fn bind(b: &mut Bindings, table: &KeyTable, attrs: &[Attribute]) {
    let row = b.push_row();
    if table.len() <= SCAN_KEYS {
        for (i, key) in table.keys().iter().enumerate() {
            let slot = u32::try_from(i).unwrap_or(u32::MAX);
            if let Key::AttributeText(name) | Key::AttributeTyped(name) = key
                && let Some(a) = find(attrs, name)
            {
                bind_one_key(b, row, slot, key, a);
            }
        }
    } else {
        // Each attribute's name is looked up once ([`KeyTable::slots_named`]).
        for (i, a) in attrs.iter().enumerate() {
            let slots = table.slots_named(&a.name);
            if slots.is_empty() || is_replaced(attrs, i) {
                continue;
            }
            for &slot in slots {
                if let Some(key) = table.keys().get(slot as usize) {
                    bind_one_key(b, row, slot, key, a);
                }
            }
        }
    }
    if let Some(slot) = table.any_attribute
        && attrs.iter().any(|a| a.data_type != AttributeType::Binary)
    {
        b.set(row, slot, Shape::Scalar, []);
    }
}

#[inline(always)]
fn bind_one_key(b: &mut Bindings, row: usize, slot: u32, key: &Key, a: &Attribute) {
    match key {
        Key::AttributeText(_) => {
            let leaf = Leaf::Str(b.text(&a.value));
            b.set(row, slot, Shape::Scalar, [leaf]);
        }
        Key::AttributeTyped(_) => bind_typed(b, row, slot, a),
        _ => {}
    }
}

/// The last attribute of that name (a later duplicate replaces an earlier one, as in JSON).
fn find<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    attrs.iter().rev().find(|a| a.name == name)
}

/// Whether a later attribute has the same name as `attrs[i]` (then `attrs[i]` does not count).
fn is_replaced(attrs: &[Attribute], i: usize) -> bool {
    let name = attrs.get(i).map_or("", |a| a.name.as_str());
    attrs
        .get(i + 1..)
        .is_some_and(|later| later.iter().any(|a| a.name == name))
}

/// SNS typing (sns rules 5-8, D-6):
///
/// - `String` (and `String.x`): one string leaf, the value text as is;
/// - `Number` (and `Number.x`): one number leaf when the text, surrounding whitespace ignored, is
///   a JSON number finite as a binary64; otherwise absent (D-6: publishers cannot send one);
/// - `String.Array`: the value must be the JSON text of an array (else absent, rule 7); its
///   string, number, `true`, `false` and `null` elements are the leaves; nested arrays and objects
///   are not elements with a value; no such element (`[]` included) makes it absent (D-6);
/// - `Binary`: absent (rule 8).
fn bind_typed(b: &mut Bindings, row: usize, slot: u32, a: &Attribute) {
    match a.data_type {
        AttributeType::String => {
            let leaf = Leaf::Str(b.text(&a.value));
            b.set(row, slot, Shape::Scalar, [leaf]);
        }
        AttributeType::Number => {
            // D-6: a Number attribute whose value is not a valid number is absent.
            let text = a.value.trim();
            if let Some(value) = crate::number::parse_json_number(text) {
                let leaf = Leaf::Num(Num::new(b.text(text), value));
                b.set(row, slot, Shape::Scalar, [leaf]);
            }
        }
        AttributeType::StringArray => {
            // Rule 7: not the JSON text of an array → no values; D-6: `[]` → absent.
            if let Ok(serde_json::Value::Array(items)) =
                serde_json::from_str::<serde_json::Value>(&a.value)
            {
                let leaves: Vec<Leaf> = items.iter().filter_map(super::scalar_leaf).collect();
                if !leaves.is_empty() {
                    b.set(row, slot, Shape::Array, leaves);
                }
            }
        }
        AttributeType::Binary => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    fn bind_one(key: Key, msg: &Message) -> (Shape, Vec<Leaf>) {
        let mut t = KeyTable::new();
        t.intern(key);
        let mut b = Bindings::new();
        b.bind(&t, msg);
        let s = b.slot(0, 0);
        (s.shape, b.leaves(s).to_vec())
    }

    #[test]
    fn text_binding_ignores_declared_type() {
        let m = Message::attributes([("n", AttributeType::Number, "100.0")]);
        assert_eq!(
            bind_one(Key::AttributeText("n".into()), &m),
            (Shape::Scalar, vec![Leaf::Str("100.0".into())])
        );
    }

    #[test]
    fn typed_binding_follows_sns_types() {
        let m = Message::attributes([
            ("n", AttributeType::Number, "1e2"),
            ("bad", AttributeType::Number, "abc"),
            (
                "arr",
                AttributeType::StringArray,
                r#"["a", 1, true, null, {"o": 1}]"#,
            ),
            ("empty", AttributeType::StringArray, "[]"),
            ("bin", AttributeType::Binary, "AAAA"),
        ]);
        let (s, l) = bind_one(Key::AttributeTyped("n".into()), &m);
        assert_eq!(s, Shape::Scalar);
        assert!(matches!(&l[0], Leaf::Num(n) if n.value() == 100.0));
        assert_eq!(
            bind_one(Key::AttributeTyped("bad".into()), &m).0,
            Shape::Absent
        );
        let (s, l) = bind_one(Key::AttributeTyped("arr".into()), &m);
        assert_eq!((s, l.len()), (Shape::Array, 4));
        assert_eq!(
            bind_one(Key::AttributeTyped("empty".into()), &m).0,
            Shape::Absent
        );
        assert_eq!(
            bind_one(Key::AttributeTyped("bin".into()), &m).0,
            Shape::Absent
        );
    }

    #[test]
    fn rule_7_string_array_that_is_not_an_array_is_absent_d_6_padded_number_reads() {
        let m = Message::attributes([
            ("notarr", AttributeType::StringArray, r#"{"a": 1}"#),
            ("broken", AttributeType::StringArray, "[1,"),
            ("nested", AttributeType::StringArray, r#"[["a"], {"b": 1}]"#),
            ("padded", AttributeType::Number, " 5 "),
            ("inf", AttributeType::Number, "1e400"),
        ]);
        for name in ["notarr", "broken", "nested", "inf"] {
            assert_eq!(
                bind_one(Key::AttributeTyped(name.into()), &m).0,
                Shape::Absent,
                "{name}"
            );
        }
        let (s, l) = bind_one(Key::AttributeTyped("padded".into()), &m);
        assert_eq!(s, Shape::Scalar);
        assert!(matches!(&l[0], Leaf::Num(n) if n.value() == 5.0));
    }

    #[test]
    fn last_attribute_of_a_name_counts_and_both_key_kinds_bind() {
        let m = Message::attributes([
            ("n", AttributeType::Number, "1"),
            ("other", AttributeType::String, "x"),
            ("n", AttributeType::Number, "not a number"),
        ]);
        // D-6: the last `n` is not a number, so it is absent; the first one does not count.
        assert_eq!(
            bind_one(Key::AttributeTyped("n".into()), &m).0,
            Shape::Absent
        );
        let mut t = KeyTable::new();
        t.intern(Key::AttributeText("n".into()));
        t.intern(Key::AttributeTyped("other".into()));
        t.intern(Key::AttributeTyped("n".into()));
        let mut b = Bindings::new();
        b.bind(&t, &m);
        assert_eq!(b.leaves(b.slot(0, 0)), [Leaf::Str("not a number".into())]);
        assert_eq!(b.leaves(b.slot(0, 1)), [Leaf::Str("x".into())]);
        assert_eq!(b.slot(0, 2).shape, Shape::Absent);
    }

    #[test]
    fn large_tables_bind_through_the_name_index() {
        let mut t = KeyTable::new();
        for i in 0..40 {
            t.intern(Key::AttributeTyped(format!("k{i}").into()));
        }
        t.intern(Key::AttributeText("k7".into()));
        t.intern(Key::AnyAttribute);
        let m = Message::attributes([
            ("k7", AttributeType::Number, "1"),
            ("k3", AttributeType::String, "a"),
            ("k7", AttributeType::Number, "2"),
            ("zz", AttributeType::String, "b"),
        ]);
        let mut b = Bindings::new();
        b.bind(&t, &m);
        assert!(matches!(b.leaves(b.slot(0, 7)), [Leaf::Num(n)] if n.value() == 2.0));
        assert_eq!(b.leaves(b.slot(0, 3)), [Leaf::Str("a".into())]);
        assert_eq!(b.slot(0, 5).shape, Shape::Absent);
        assert_eq!(b.leaves(b.slot(0, 40)), [Leaf::Str("2".into())]);
        assert_eq!(b.slot(0, 41).shape, Shape::Scalar);
    }

    #[test]
    fn any_attribute_ignores_binary() {
        let only_binary = Message::attributes([("b", AttributeType::Binary, "AA")]);
        assert_eq!(bind_one(Key::AnyAttribute, &only_binary).0, Shape::Absent);
        let one = Message::attributes([("s", AttributeType::String, "x")]);
        assert_eq!(bind_one(Key::AnyAttribute, &one).0, Shape::Scalar);
    }
}

//! Binding typed attributes (basaltic, sns attribute scope).

use super::{Bindings, KeyTable};
use crate::key::Key;
use crate::message::{Attribute, AttributeType};
use crate::value::{Leaf, Num, Shape};

pub(super) fn bind(b: &mut Bindings, table: &KeyTable, attrs: &[Attribute]) {
    let row = b.push_row();
    for (i, key) in table.keys().iter().enumerate() {
        let slot = u32::try_from(i).unwrap_or(u32::MAX);
        match key {
            Key::AttributeText(name) => {
                if let Some(a) = find(attrs, name) {
                    b.set(
                        row,
                        slot,
                        Shape::Scalar,
                        [Leaf::Str(a.value.as_str().into())],
                    );
                }
            }
            Key::AttributeTyped(name) => {
                if let Some(a) = find(attrs, name) {
                    bind_typed(b, row, slot, a);
                }
            }
            Key::AnyAttribute if attrs.iter().any(|a| a.data_type != AttributeType::Binary) => {
                b.set(row, slot, Shape::Scalar, []);
            }
            _ => {}
        }
    }
}

/// The last attribute of that name (a later duplicate replaces an earlier one, as in JSON).
fn find<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    attrs.iter().rev().find(|a| a.name == name)
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
        AttributeType::String => b.set(
            row,
            slot,
            Shape::Scalar,
            [Leaf::Str(a.value.as_str().into())],
        ),
        AttributeType::Number => {
            // D-6: a Number attribute whose value is not a valid number is absent.
            if let Some(n) = Num::from_text(a.value.trim()) {
                b.set(row, slot, Shape::Scalar, [Leaf::Num(n)]);
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
    fn any_attribute_ignores_binary() {
        let only_binary = Message::attributes([("b", AttributeType::Binary, "AA")]);
        assert_eq!(bind_one(Key::AnyAttribute, &only_binary).0, Shape::Absent);
        let one = Message::attributes([("s", AttributeType::String, "x")]);
        assert_eq!(bind_one(Key::AnyAttribute, &one).0, Shape::Scalar);
    }
}

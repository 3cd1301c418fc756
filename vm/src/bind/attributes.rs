//! Binding typed attributes (basaltic, sns attribute scope), borrowed from any [`Attributes`].

use super::leaf::{BoundLeaf, LeafKind, Slot, number_value};
use super::table::KeyTable;
use crate::key::Key;
use crate::message::{AttributeType, Attributes, Text};
use crate::value::Shape;
use bumpalo::Bump;

/// Binds `attributes` into `row` (one slot per key of `table`): each attribute's name is looked
/// up once (by scanning few keys, [`KeyTable::name_scan`], or in the name index); of several
/// attributes with one name the last counts (as in JSON). When `attributes` prefers it
/// ([`Attributes::LOOKUP_NAMES`]) and the table reads few named attributes only, each key's name
/// is looked up in `attributes` instead ([`Attributes::named`]): the same slots.
#[inline]
pub(super) fn bind<'b, A: Attributes + ?Sized>(
    table: &KeyTable,
    row: &mut [Slot<'b>],
    attributes: &'b A,
    arena: &'b Bump,
) {
    let scan = table.name_scan();
    if A::LOOKUP_NAMES > 0
        && let Some(scan) = scan
        && scan.keys.len() <= A::LOOKUP_NAMES
        && table.any_attribute.is_none()
    {
        // Only named attributes are read: look each name up; the others are never read.
        for (n, i, key) in &scan.keys {
            if matches!(key, Key::AttributeText(_) | Key::AttributeTyped(_))
                && let Some((data_type, value)) = attributes.named(n.as_bytes())
                && let Some(slot) = row.get_mut(*i as usize)
            {
                *slot = bind_one(table, *i, key, data_type, value, arena);
            }
        }
        return;
    }
    let mut any = false;
    for (name, data_type, value) in attributes.entries() {
        any |= data_type != AttributeType::Binary;
        let name = name.bytes();
        match scan {
            Some(scan) => {
                if !scan.may_have(name.len()) {
                    continue;
                }
                for (n, i, key) in &scan.keys {
                    if matches!(key, Key::AttributeText(_) | Key::AttributeTyped(_))
                        && crate::bytes::same(n.as_bytes(), name)
                        && let Some(slot) = row.get_mut(*i as usize)
                    {
                        *slot = bind_one(table, *i, key, data_type, value, arena);
                    }
                }
            }
            None => {
                let Ok(name) = std::str::from_utf8(name) else {
                    continue;
                };
                for &i in table.slots_named(name) {
                    if let Some(key) = table.keys().get(i as usize)
                        && matches!(key, Key::AttributeText(_) | Key::AttributeTyped(_))
                        && let Some(slot) = row.get_mut(i as usize)
                    {
                        *slot = bind_one(table, i, key, data_type, value, arena);
                    }
                }
            }
        }
    }
    if let Some(i) = table.any_attribute
        && any
        && let Some(slot) = row.get_mut(i as usize)
    {
        *slot = Slot::bare(Shape::Scalar);
    }
}

/// The slot of one attribute for `key`.
#[inline(always)]
fn bind_one<'b, V: Text + ?Sized>(
    table: &KeyTable,
    slot: u32,
    key: &Key,
    data_type: AttributeType,
    value: &'b V,
    arena: &'b Bump,
) -> Slot<'b> {
    match key {
        Key::AttributeText(_) => Slot::one(text_leaf(table, slot, value)),
        Key::AttributeTyped(_) => typed(table, slot, data_type, value, arena),
        _ => Slot::ABSENT,
    }
}

/// A value's text as a string leaf, or a [`LeafKind::Bytes`] leaf when it is not UTF-8.
#[inline(always)]
fn text_leaf<'b, V: Text + ?Sized>(table: &KeyTable, slot: u32, value: &'b V) -> BoundLeaf<'b> {
    match value.text() {
        Ok(s) => table.str_leaf(slot, s),
        Err(_) => BoundLeaf::plain(LeafKind::Bytes),
    }
}

/// SNS typing (sns rules 5-11, D-6):
///
/// - `String` (and `String.x`): one string leaf, the value text as is;
/// - `Number` (and `Number.x`): one number leaf when the text, surrounding whitespace ignored, is
///   a JSON number finite as a binary64; otherwise absent (D-6: publishers cannot send one);
/// - `String.Array`: the value must be the JSON text of an array (else absent, rule 7); its
///   string, number, `true`, `false` and `null` elements are the leaves; nested arrays and objects
///   are not elements with a value; no such element (`[]` included) makes it absent (D-6);
/// - `Binary`: absent (rule 8).
///
/// A value that is not UTF-8 is a [`LeafKind::Bytes`] leaf as a `String`, and absent otherwise.
fn typed<'b, V: Text + ?Sized>(
    table: &KeyTable,
    slot: u32,
    data_type: AttributeType,
    value: &'b V,
    arena: &'b Bump,
) -> Slot<'b> {
    match data_type {
        AttributeType::String => Slot::one(text_leaf(table, slot, value)),
        AttributeType::Number => {
            // D-6: a Number attribute whose value is not a valid number is absent.
            let Ok(t) = value.text() else {
                return Slot::ABSENT;
            };
            let t = t.trim();
            match crate::number::parse_json_number(t) {
                Some(v) => Slot::one(BoundLeaf::num(t, v)),
                None => Slot::ABSENT,
            }
        }
        AttributeType::StringArray => {
            let Ok(t) = value.text() else {
                return Slot::ABSENT;
            };
            string_array(table, slot, t, arena)
        }
        AttributeType::Binary => Slot::ABSENT,
    }
}

/// The leaves of a `String.Array` value (rule 7, D-6), read by this crate's own reader
/// ([`crate::json`]): numbers keep their exact text, and the limits of a `serde_json` read stand
/// (127 levels, no lone surrogates), so deeper or such text is not an array. The elements are
/// copied into the arena.
fn string_array<'b>(table: &KeyTable, slot: u32, value: &str, arena: &'b Bump) -> Slot<'b> {
    use crate::json::{DEFAULT_MAX_DEPTH, ParseOptions, Value};
    let options = ParseOptions {
        // `serde_json`'s limit: the deepest array it reads, which the reference interpreter
        // shares.
        max_depth: DEFAULT_MAX_DEPTH - 1,
        ..ParseOptions::default()
    };
    // Rule 7: not the JSON text of an array → no values; D-6: `[]` → absent.
    let Ok(Value::Array(items)) = crate::json::parse_with(value.as_bytes(), &options) else {
        return Slot::ABSENT;
    };
    let scalar = |v: &Value| !matches!(v, Value::Array(_) | Value::Object(_));
    let n = items.iter().filter(|v| scalar(v)).count();
    let mut elements = items.iter().filter_map(|item| {
        Some(match item {
            Value::Null => BoundLeaf::plain(LeafKind::Null),
            Value::Bool(true) => BoundLeaf::plain(LeafKind::True),
            Value::Bool(false) => BoundLeaf::plain(LeafKind::False),
            Value::Number(n) => {
                let t: &'b str = arena.alloc_str(n.as_str());
                BoundLeaf::num(t, number_value(t))
            }
            Value::String(s) => table.str_leaf(slot, arena.alloc_str(s)),
            Value::Array(_) | Value::Object(_) => return None,
        })
    });
    let leaves = arena.alloc_slice_fill_with(n, |_| elements.next().unwrap_or(BoundLeaf::EMPTY));
    match &*leaves {
        [] => Slot::ABSENT,
        [first, rest @ ..] => Slot {
            first: *first,
            rest,
            shape: Shape::Array,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::Bindings;
    use super::*;
    use crate::message::Message;
    use crate::value::Leaf;

    fn bind_one(key: Key, msg: &Message) -> (Shape, Vec<Leaf>) {
        let mut t = KeyTable::new();
        t.intern(key);
        let mut b = Bindings::new();
        let bound = b.bind(&t, msg);
        let s = bound.slot(0, 0);
        (s.shape, s.leaves().filter_map(BoundLeaf::to_leaf).collect())
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

    /// `String.Array` elements are read by this crate's reader, whatever features `serde_json`
    /// is built with: numbers beyond binary64 are elements (present for `exists`), every number
    /// keeps its text, and the depth limit is `serde_json`'s (127 levels), as the reference's.
    #[test]
    fn string_array_numbers_keep_their_text_and_serde_json_limits_stand() {
        let nested =
            |levels: usize| format!("[1, {}{}]", "[".repeat(levels - 1), "]".repeat(levels - 1));
        let (deepest, too_deep) = (nested(127), nested(128));
        let m = Message::attributes([
            (
                "big",
                AttributeType::StringArray,
                "[-1e400, 1.50, -0, 12345678901234567890123]",
            ),
            ("deepest", AttributeType::StringArray, deepest.as_str()),
            ("too_deep", AttributeType::StringArray, too_deep.as_str()),
            ("lone", AttributeType::StringArray, r#"[1, "\ud800"]"#),
        ]);
        let (s, l) = bind_one(Key::AttributeTyped("big".into()), &m);
        assert_eq!(s, Shape::Array);
        let texts: Vec<String> = l.iter().map(ToString::to_string).collect();
        assert_eq!(texts, ["-1e400", "1.50", "-0", "12345678901234567890123"]);
        let (s, l) = bind_one(Key::AttributeTyped("deepest".into()), &m);
        assert_eq!((s, l.len()), (Shape::Array, 1));
        for name in ["too_deep", "lone"] {
            assert_eq!(
                bind_one(Key::AttributeTyped(name.into()), &m).0,
                Shape::Absent,
                "{name}"
            );
        }
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
        let bound = b.bind(&t, &m);
        let leaves = |k: usize| -> Vec<Leaf> {
            bound
                .slot(0, k)
                .leaves()
                .filter_map(BoundLeaf::to_leaf)
                .collect()
        };
        assert_eq!(leaves(0), [Leaf::Str("not a number".into())]);
        assert_eq!(leaves(1), [Leaf::Str("x".into())]);
        assert_eq!(bound.slot(0, 2).shape, Shape::Absent);
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
        let bound = b.bind(&t, &m);
        let first = |k: usize| {
            bound
                .slot(0, k)
                .leaves()
                .next()
                .and_then(BoundLeaf::to_leaf)
        };
        assert!(matches!(first(7), Some(Leaf::Num(n)) if n.value() == 2.0));
        assert_eq!(first(3), Some(Leaf::Str("a".into())));
        assert_eq!(bound.slot(0, 5).shape, Shape::Absent);
        assert_eq!(first(40), Some(Leaf::Str("2".into())));
        assert_eq!(bound.slot(0, 41).shape, Shape::Scalar);
    }

    /// Attributes that ask to be looked up by name ([`Attributes::LOOKUP_NAMES`]), counting
    /// the lookups.
    struct LookedUp<'a> {
        attributes: &'a [(&'a str, AttributeType, &'a str)],
        lookups: std::cell::Cell<usize>,
    }

    impl Attributes for LookedUp<'_> {
        type Name = str;
        type Value = str;
        fn entries(&self) -> impl Iterator<Item = (&str, AttributeType, &str)> {
            self.attributes.iter().map(|&(n, t, v)| (n, t, v))
        }
        const LOOKUP_NAMES: usize = 16;
        fn named(&self, name: &[u8]) -> Option<(AttributeType, &str)> {
            self.lookups.set(self.lookups.get() + 1);
            let found = self
                .entries()
                .filter(|(n, _, _)| n.as_bytes() == name)
                .last();
            found.map(|(_, t, v)| (t, v))
        }
    }

    /// Binding by lookup gives every slot walking gives: the last attribute of a name, both key
    /// kinds, absent names, types; a table with `exists: false`'s key is walked.
    #[test]
    fn looked_up_attributes_bind_as_walked_ones() {
        let attributes = [
            ("n", AttributeType::Number, "1"),
            ("s", AttributeType::String, "x"),
            ("n", AttributeType::Number, "2.5"),
            ("arr", AttributeType::StringArray, r#"["a", 1]"#),
            ("b", AttributeType::Binary, "AA"),
            ("s", AttributeType::String, "y"),
        ];
        let keys = [
            Key::AttributeTyped("n".into()),
            Key::AttributeText("n".into()),
            Key::AttributeTyped("s".into()),
            Key::AttributeTyped("arr".into()),
            Key::AttributeTyped("b".into()),
            Key::AttributeTyped("missing".into()),
            Key::Header("s".into()),
        ];
        let leaves = |bound: &super::super::Bound<'_>, n: usize| -> Vec<(Shape, Vec<Leaf>)> {
            (0..n)
                .map(|k| {
                    let s = bound.slot(0, k);
                    (s.shape, s.leaves().filter_map(BoundLeaf::to_leaf).collect())
                })
                .collect()
        };
        for any in [false, true] {
            let mut t = KeyTable::new();
            for key in &keys {
                t.intern(key.clone());
            }
            if any {
                t.intern(Key::AnyAttribute);
            }
            let mut walked = Bindings::new();
            let walked = walked.bind_attributes(&t, &attributes[..]);
            let looked_up = LookedUp {
                attributes: &attributes,
                lookups: std::cell::Cell::new(0),
            };
            let mut b = Bindings::new();
            let bound = b.bind_attributes(&t, &looked_up);
            assert_eq!(leaves(&bound, t.len()), leaves(&walked, t.len()), "{any}");
            // Six attribute keys looked up, none when `exists: false` reads every attribute.
            assert_eq!(looked_up.lookups.get(), if any { 0 } else { 6 });
        }
        // The default lookup finds the last attribute of a name.
        assert_eq!(
            Attributes::named(&attributes[..], b"n"),
            Some((AttributeType::Number, &"2.5"))
        );
        assert_eq!(Attributes::named(&attributes[..], b"nope"), None);
        let mut t = KeyTable::new();
        let n = t.intern(Key::AttributeTyped("n".into()));
        let mut b = Bindings::new();
        let looked_up = LookedUp {
            attributes: &attributes,
            lookups: std::cell::Cell::new(0),
        };
        let bound = b.bind_attributes(&t, &looked_up);
        let first = bound.slot(0, n as usize).leaves().next();
        assert!(
            matches!(first.and_then(BoundLeaf::to_leaf), Some(Leaf::Num(v)) if v.value() == 2.5)
        );
    }

    #[test]
    fn any_attribute_ignores_binary() {
        let only_binary = Message::attributes([("b", AttributeType::Binary, "AA")]);
        assert_eq!(bind_one(Key::AnyAttribute, &only_binary).0, Shape::Absent);
        let one = Message::attributes([("s", AttributeType::String, "x")]);
        assert_eq!(bind_one(Key::AnyAttribute, &one).0, Shape::Scalar);
    }

    #[test]
    fn borrowed_attributes_bind_like_owned_ones_and_bytes_that_are_not_utf8_read_as_nothing() {
        let mut t = KeyTable::new();
        let s = t.intern(Key::AttributeTyped("s".into()));
        let n = t.intern(Key::AttributeTyped("n".into()));
        let x = t.intern(Key::AttributeText("x".into()));
        let borrowed: [(&[u8], AttributeType, &[u8]); 3] = [
            (b"s", AttributeType::String, b"\xffbad"),
            (b"n", AttributeType::Number, b"\xff"),
            (b"x", AttributeType::String, b"ok"),
        ];
        let mut b = Bindings::new();
        let bound = b.bind_attributes(&t, &borrowed);
        let slot = bound.slot(0, s as usize);
        assert_eq!(slot.shape, Shape::Scalar);
        assert_eq!(
            slot.leaves().next().map(BoundLeaf::kind),
            Some(LeafKind::Bytes)
        );
        assert_eq!(bound.slot(0, n as usize).shape, Shape::Absent);
        assert_eq!(
            bound
                .slot(0, x as usize)
                .leaves()
                .next()
                .and_then(|l| l.as_str()),
            Some("ok")
        );
    }
}

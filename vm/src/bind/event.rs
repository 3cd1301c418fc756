//! Binding Event Grid events (EG-16..EG-20).
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
//! The value found is classified by [`classify`]: `null` → null, a scalar → one leaf, an array →
//! its scalar elements as leaves (objects and nested arrays inside are not leaves), an object →
//! no leaves (EG-20, EG-21). An event that is not a JSON object leaves every key absent.

use super::{Bindings, KeyTable, classify};
use crate::key::Key;
use serde_json::{Map, Value};

/// The top-level member `name`: exact spelling first, then ignoring ASCII case.
fn member<'a>(event: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    event.get(name).or_else(|| {
        event
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// Resolves one key against an event object.
fn resolve<'a>(event: &'a Map<String, Value>, key: &Key) -> Option<&'a Value> {
    match key {
        Key::EventMember(name) => member(event, name),
        Key::EventData(path) => path.iter().try_fold(member(event, "data")?, |cur, seg| {
            cur.as_object().and_then(|o| o.get(&**seg))
        }),
        _ => None,
    }
}

pub(super) fn bind(b: &mut Bindings, table: &KeyTable, doc: &Value) {
    let row = b.push_row();
    let Value::Object(event) = doc else {
        return;
    };
    for (i, key) in table.keys().iter().enumerate() {
        let slot = u32::try_from(i).unwrap_or(u32::MAX);
        if let Some(v) = resolve(event, key) {
            let (shape, leaves) = classify(v);
            b.set(row, slot, shape, leaves);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use crate::value::{Leaf, Shape};

    fn bind_one(keys: &[Key], doc: Value) -> Bindings {
        let mut t = KeyTable::new();
        for k in keys {
            t.intern(k.clone());
        }
        let mut b = Bindings::new();
        b.bind(&t, &Message::Json(doc));
        b
    }

    #[test]
    fn eg_16_members_ignore_case_and_data_walks_exactly() {
        let b = bind_one(
            &[
                Key::EventMember("subject".into()),
                Key::EventData(vec!["a".into(), "b".into()].into()),
                Key::EventData(vec!["A".into()].into()),
                Key::EventData(Vec::new().into()),
            ],
            serde_json::json!({"Subject": "s", "data": {"a": {"b": [1, 2]}}}),
        );
        assert_eq!(b.slot(0, 0).shape, Shape::Scalar);
        assert_eq!(b.slot(0, 1).shape, Shape::Array);
        assert_eq!(b.slot(0, 2).shape, Shape::Absent);
        assert_eq!(b.slot(0, 3).shape, Shape::Object);
    }

    #[test]
    fn eg_16_exact_spelling_wins_over_case_variants() {
        let b = bind_one(
            &[
                Key::EventMember("eventType".into()),
                Key::EventData(Vec::new().into()),
            ],
            serde_json::json!({"EVENTTYPE": "upper", "eventType": "exact", "DATA": 1, "Data": 2}),
        );
        assert_eq!(b.leaves(b.slot(0, 0)), &[Leaf::Str("exact".into())]);
        // No exact `data`: the first case variant in document order.
        assert!(matches!(b.leaves(b.slot(0, 1)), [Leaf::Num(n)] if n.text() == "1"));
    }

    #[test]
    fn eg_18_non_object_on_the_way_is_absent() {
        let b = bind_one(
            &[
                Key::EventData(vec!["s".into(), "x".into()].into()),
                Key::EventData(vec!["arr".into(), "0".into()].into()),
                Key::EventData(vec!["n".into()].into()),
            ],
            serde_json::json!({"data": {"s": "str", "arr": [{"0": 1}], "n": null}}),
        );
        assert_eq!(b.slot(0, 0).shape, Shape::Absent);
        assert_eq!(b.slot(0, 1).shape, Shape::Absent);
        assert_eq!(b.slot(0, 2).shape, Shape::Null);
    }

    #[test]
    fn eg_20_non_object_event_binds_every_key_absent() {
        let b = bind_one(
            &[
                Key::EventMember("id".into()),
                Key::EventData(Vec::new().into()),
            ],
            serde_json::json!(["id", "data"]),
        );
        assert_eq!(b.rows(), 1);
        assert_eq!(b.slot(0, 0).shape, Shape::Absent);
        assert_eq!(b.slot(0, 1).shape, Shape::Absent);
    }
}

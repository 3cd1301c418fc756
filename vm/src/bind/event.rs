//! Binding Event Grid events (EG-16..EG-20).

use super::{Bindings, KeyTable, classify};
use crate::key::Key;

pub(super) fn bind(b: &mut Bindings, table: &KeyTable, doc: &serde_json::Value) {
    let row = b.push_row();
    let serde_json::Value::Object(event) = doc else {
        return;
    };
    for (i, key) in table.keys().iter().enumerate() {
        let slot = u32::try_from(i).unwrap_or(u32::MAX);
        let value = match key {
            Key::EventMember(name) => event
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v),
            Key::EventData(path) => {
                let mut cur = event
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("data"))
                    .map(|(_, v)| v);
                for seg in path.iter() {
                    cur = match cur {
                        Some(serde_json::Value::Object(o)) => o.get(&**seg),
                        _ => None,
                    };
                }
                cur
            }
            _ => None,
        };
        if let Some(v) = value {
            let (shape, leaves) = classify(v);
            b.set(row, slot, shape, leaves);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use crate::value::Shape;

    #[test]
    fn members_ignore_case_and_data_walks_exactly() {
        let mut t = KeyTable::new();
        t.intern(Key::EventMember("subject".into()));
        t.intern(Key::EventData(vec!["a".into(), "b".into()].into()));
        t.intern(Key::EventData(vec!["A".into()].into()));
        t.intern(Key::EventData(Vec::new().into()));
        let doc = serde_json::json!({"Subject": "s", "data": {"a": {"b": [1, 2]}}});
        let mut b = Bindings::new();
        b.bind(&t, &Message::Json(doc));
        assert_eq!(b.slot(0, 0).shape, Shape::Scalar);
        assert_eq!(b.slot(0, 1).shape, Shape::Array);
        assert_eq!(b.slot(0, 2).shape, Shape::Absent);
        assert_eq!(b.slot(0, 3).shape, Shape::Object);
    }
}

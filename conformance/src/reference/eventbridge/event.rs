//! Events (`docs/dialects/eventbridge-patterns.md` EB-2, EB-3, EB-34): an event's values by path,
//! each with its positions.

use super::limits::MAX_DEPTH;
use crate::reference::json::{Map, Value};
use std::collections::HashMap;

/// One value of an event (a string, number, `true`, `false` or `null`) with its positions: for
/// every array it lies in through an element that is an object or an array, the pair (that
/// array, the element's index). Arrays are numbered in the order they are met, so every array
/// instance is a different array.
#[derive(Debug, Clone)]
pub(super) struct Leaf<'a> {
    /// The value.
    pub(super) value: &'a Value,
    /// (array, index) pairs.
    pub(super) positions: Vec<(usize, usize)>,
}

/// An event's values by path (EB-2: member names joined with `.`; arrays transparent).
pub(super) type Flat<'a> = HashMap<String, Vec<Leaf<'a>>>;

/// The deepest nesting of arrays and objects in `value` (the top one is level 1), measured
/// without recursion.
pub(super) fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(value, 1usize)];
    while let Some((v, d)) = todo.pop() {
        match v {
            Value::Array(items) => {
                deepest = deepest.max(d);
                todo.extend(items.iter().map(|i| (i, d + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(d);
                todo.extend(map.values().map(|i| (i, d + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// EB-2, EB-3: flattens an event; `Err` when it is not a JSON object (EB-3) or nests arrays and
/// objects deeper than [`MAX_DEPTH`] (EB-34).
pub(super) fn flatten(event: &Value) -> Result<Flat<'_>, String> {
    let Value::Object(map) = event else {
        return Err("the event is not a JSON object".to_owned());
    };
    let d = nesting(event);
    if d > MAX_DEPTH {
        return Err(format!(
            "the event nests arrays and objects {d} deep, more than {MAX_DEPTH}"
        ));
    }
    let mut flat = Flat::new();
    let mut walk = Walk {
        flat: &mut flat,
        positions: Vec::new(),
        arrays: 0,
    };
    walk.object(map, None);
    Ok(flat)
}

struct Walk<'a, 'f> {
    flat: &'f mut Flat<'a>,
    positions: Vec<(usize, usize)>,
    arrays: usize,
}

impl<'a> Walk<'a, '_> {
    fn object(&mut self, map: &'a Map, prefix: Option<&str>) {
        // A repeated member name: each occurrence contributes (EB-3).
        for (name, value) in map {
            let path = match prefix {
                Some(p) => format!("{p}.{name}"),
                None => name.clone(),
            };
            self.value(value, &path);
        }
    }

    fn value(&mut self, value: &'a Value, path: &str) {
        match value {
            Value::Object(map) => self.object(map, Some(path)),
            Value::Array(items) => {
                let array = self.arrays;
                self.arrays += 1;
                for (index, item) in items.iter().enumerate() {
                    if matches!(item, Value::Object(_) | Value::Array(_)) {
                        self.positions.push((array, index));
                        self.value(item, path);
                        self.positions.pop();
                    } else {
                        // A scalar directly in an array gets no position for it.
                        self.value(item, path);
                    }
                }
            }
            Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => {
                self.flat.entry(path.to_owned()).or_default().push(Leaf {
                    value,
                    positions: self.positions.clone(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::json;

    fn shown(flat: &Flat<'_>, path: &str) -> Vec<(String, Vec<(usize, usize)>)> {
        flat.get(path)
            .map(|vs| {
                vs.iter()
                    .map(|l| (l.value.to_string(), l.positions.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn arrays_are_transparent_and_give_positions_eb_2_eb_3() {
        let event = json!({"a": [1, [2, [3]]], "e": [], "o": {}, "d.x": 1, "d": {"x": 2}});
        let flat = flatten(&event).unwrap();
        assert_eq!(
            shown(&flat, "a"),
            vec![
                ("1".to_owned(), vec![]),
                ("2".to_owned(), vec![(0, 1)]),
                ("3".to_owned(), vec![(0, 1), (1, 1)]),
            ]
        );
        assert!(!flat.contains_key("e") && !flat.contains_key("o"));
        assert_eq!(shown(&flat, "d.x").len(), 2);
        let event = json!({"r": [{"a": 1}, {"a": 2, "q": [{"b": 3}]}]});
        let flat = flatten(&event).unwrap();
        assert_eq!(
            shown(&flat, "r.a"),
            vec![
                ("1".to_owned(), vec![(0, 0)]),
                ("2".to_owned(), vec![(0, 1)])
            ]
        );
        assert_eq!(
            shown(&flat, "r.q.b"),
            vec![("3".to_owned(), vec![(0, 1), (1, 0)])]
        );
    }

    #[test]
    fn repeated_names_each_contribute_eb_3() {
        let event = crate::reference::json::parse_with(
            r#"{"a": 1, "a": [2]}"#,
            crate::reference::json::ReadOptions {
                max_depth: 1000,
                keep_duplicates: true,
                reject_duplicates: false,
            },
        )
        .unwrap();
        assert_eq!(shown(&flatten(&event).unwrap(), "a").len(), 2);
    }

    #[test]
    fn not_an_object_or_too_deep_is_an_error() {
        for event in [json!([]), json!("x"), json!(1), json!(null)] {
            assert!(flatten(&event).is_err(), "{event}");
        }
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!({ "a": deep });
        }
        assert!(flatten(&deep).is_ok());
        let deeper = json!({ "a": deep });
        assert!(flatten(&deeper).is_err());
    }
}

//! Binding SNS message bodies (sns rules 14-21).
//!
//! PLACEHOLDER for the sns issue: one row, paths walked with arrays transparent.

use super::{Bindings, KeyTable, scalar_leaf};
use crate::key::Key;
use crate::value::{Leaf, Shape};

pub(super) fn bind(b: &mut Bindings, table: &KeyTable, doc: &serde_json::Value) {
    let row = b.push_row();
    let serde_json::Value::Object(_) = doc else {
        return;
    };
    for (i, key) in table.keys().iter().enumerate() {
        let slot = u32::try_from(i).unwrap_or(u32::MAX);
        match key {
            Key::BodyIsObject => b.set(row, slot, Shape::Scalar, []),
            Key::BodyPath(path) => {
                let mut leaves = Vec::new();
                collect(doc, path, &mut leaves);
                if !leaves.is_empty() {
                    b.set(row, slot, Shape::Array, leaves);
                }
            }
            _ => {}
        }
    }
}

fn collect(value: &serde_json::Value, path: &str, out: &mut Vec<Leaf>) {
    match value {
        serde_json::Value::Array(items) => {
            for item in items {
                collect(item, path, out);
            }
        }
        serde_json::Value::Object(map) if !path.is_empty() => {
            for (name, child) in map {
                if name == path {
                    collect(child, "", out);
                } else if let Some(rest) = path
                    .strip_prefix(name.as_str())
                    .and_then(|r| r.strip_prefix('.'))
                {
                    collect(child, rest, out);
                }
            }
        }
        serde_json::Value::Object(_) => {}
        scalar if path.is_empty() => out.extend(scalar_leaf(scalar)),
        _ => {}
    }
}

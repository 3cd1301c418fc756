//! Generates `expr` policies and messages (E1–E11): deep-ish AND/OR/NOT trees of conditions over
//! multi-valued headers, with empty operands, case and normalisation variants, and the
//! `startWith` alias and the null-op default.

use super::{Case, Source, word};
use crate::json;
use crate::reference::json::{Map, Value};
use filtervm_compiler::Dialect;

/// Header names (E8: non-empty; case-sensitive, E5).
const KEYS: &[&str] = &["k", "K", "env", "a.b", "\u{df}", " ", "\u{0}"];
/// Values drawn for both operands and headers, so they collide: empty strings, prefixes,
/// suffixes and infixes of each other, case and normalisation variants (E5, E6).
const VALUES: &[&str] = &[
    "", "a", "ab", "abc", "bc", "b", "A", "AB", "abcab", "\u{df}", "SS", "ss", "\u{e9}",
    "e\u{301}", "*", "a*", " ", "k", "\u{0}", "a\u{0}b",
];

fn value(s: &mut impl Source) -> Value {
    json!(word(s, VALUES))
}

fn condition(s: &mut impl Source) -> Value {
    let key = word(s, KEYS);
    match s.below(9) {
        0 => json!({"key": key, "op": "startsWith", "value": value(s)}),
        // E1: the seed's spelling is an exact alias.
        1 => json!({"key": key, "op": "startWith", "value": value(s)}),
        2 => json!({"key": key, "op": "endsWith", "value": value(s)}),
        3 => json!({"key": key, "op": "contains", "value": value(s)}),
        4 => json!({"key": key, "op": "exists"}),
        _ => {
            let n = 1 + s.below(4);
            let list: Vec<Value> = (0..n).map(|_| value(s)).collect();
            // A missing or null `op` means `in` (seed, E9).
            match s.below(3) {
                0 => json!({"key": key, "op": "in", "value": list}),
                1 => json!({"key": key, "op": null, "value": list}),
                _ => json!({"key": key, "value": list}),
            }
        }
    }
}

/// A node at most `depth` AND/OR/NOT levels deep.
fn node(s: &mut impl Source, depth: u32) -> Value {
    if depth == 0 || s.chance(30) {
        return condition(s);
    }
    match s.below(3) {
        // NOT takes exactly one element, always in an array (E10).
        0 => json!({"op": "NOT", "exp": [node(s, depth - 1)]}),
        k => {
            // E3: never empty; a one-operand AND/OR is valid.
            let n = 1 + s.below(3);
            let exp: Vec<Value> = (0..n).map(|_| node(s, depth - 1)).collect();
            json!({"op": if k == 1 { "AND" } else { "OR" }, "exp": exp})
        }
    }
}

/// The number of AND/OR/NOT levels on the longest path (E2).
fn depth_of(node: &Value) -> u64 {
    match node.get("exp").and_then(Value::as_array) {
        Some(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
        None => 0,
    }
}

/// A valid policy and a message drawn from the same small pools.
pub fn case(s: &mut impl Source) -> Case {
    let max = 1 + s.below(6);
    let policy = node(s, max);
    // E2: sometimes the exact depth as the limit, sometimes the default.
    let options = match s.below(4) {
        0 => json!({"max_depth": depth_of(&policy)}),
        1 => json!({}),
        _ => Value::Null,
    };
    let message = message(s, &[]);
    Case {
        dialect: Dialect::Expr,
        options,
        policy,
        message,
    }
}

/// A header value: from `pool` a third of the time when it is not empty, else from the pools.
fn header_value(s: &mut impl Source, pool: &[Value]) -> Value {
    if !pool.is_empty() && s.chance(35) {
        s.pick(pool).clone()
    } else {
        value(s)
    }
}

/// The operands of a policy's conditions (strings), for [`message`].
pub fn operands(policy: &Value, out: &mut Vec<Value>) {
    match policy.get("exp").and_then(Value::as_array) {
        Some(children) => children.iter().for_each(|c| operands(c, out)),
        None => match policy.get("value") {
            Some(Value::Array(items)) => {
                out.extend(items.iter().filter(|v| v.is_string()).cloned())
            }
            Some(v @ Value::String(_)) => out.push(v.clone()),
            _ => {}
        },
    }
}

/// A message of up to four headers drawn from the pools; with a non-empty `pool` (a policy's
/// [`operands`]) a value comes from it a third of the time. [`case`] passes an empty pool: its
/// messages do not depend on its policy.
pub fn message(s: &mut impl Source, pool: &[Value]) -> Value {
    let mut headers = Map::new();
    for _ in 0..s.below(5) {
        let v = if s.chance(25) {
            // A header given several values (a multimap): any value may satisfy a condition.
            Value::Array((0..1 + s.below(3)).map(|_| header_value(s, pool)).collect())
        } else {
            header_value(s, pool)
        };
        headers.insert(word(s, KEYS).to_owned(), v);
    }
    if headers.is_empty() && s.chance(30) {
        json!({})
    } else {
        json!({ "headers": headers })
    }
}

//! Generates basaltic policies and messages (B-1..B-13).

use super::{Case, Source};
use crate::json;
use crate::reference::json::{Map, Value};
use filtervm_compiler::Dialect;

const NAMES: &[&str] = &["event", "amount", "env", "test", "", "a.b"];
const STRINGS: &[&str] = &[
    "order.paid",
    "order.",
    "order",
    "Order.paid",
    "",
    "x",
    "paid",
    "\u{e9}",
    "e\u{301}",
    "*",
];
const NUMBER_TEXTS: &[&str] = &[
    "100",
    "100.0",
    "1e2",
    "99.99",
    "1000",
    "-0",
    "0",
    "-0.5",
    "1e21",
    "1e+21",
    "0.0000001",
    "1e-7",
    " 100",
    "+1",
    "01",
    "1.",
    ".5",
    "NaN",
    "1e400",
    "9007199254740993",
    "abc",
];
const POLICY_NUMBERS: &[&str] = &[
    "100",
    "100.0",
    "1e2",
    "0",
    "-0",
    "1000",
    "99.99",
    "1e21",
    "1e-7",
    "-0.5",
    "9007199254740993",
];

fn word<'a>(s: &mut impl Source, items: &[&'a str]) -> &'a str {
    s.pick::<&'a str>(items)
}

fn number(text: &str) -> Value {
    crate::reference::json::parse(text).unwrap_or(Value::Null)
}

fn alternative(s: &mut impl Source) -> Value {
    match s.below(9) {
        0 | 1 => json!(word(s, STRINGS)),
        2 => number(word(s, POLICY_NUMBERS)),
        3 => json!({"prefix": word(s, STRINGS.get(..4).unwrap_or(STRINGS))}),
        4 => json!({"suffix": word(s, &["paid", ".", "d", "0"])}),
        5 => {
            let n = 1 + s.below(3);
            let list: Vec<Value> = (0..n)
                .map(|_| {
                    if s.chance(30) {
                        number(word(s, POLICY_NUMBERS))
                    } else {
                        json!(word(s, STRINGS))
                    }
                })
                .collect();
            if n == 1 && s.chance(50) {
                json!({"anything-but": list.first().cloned().unwrap_or(Value::Null)})
            } else {
                json!({"anything-but": list})
            }
        }
        6 => json!({"exists": s.chance(50)}),
        _ => {
            let ops = ["=", "<", "<=", ">", ">="];
            let pairs = 1 + s.below(2);
            let mut items = Vec::new();
            for _ in 0..pairs {
                items.push(json!(word(s, &ops)));
                items.push(number(word(s, POLICY_NUMBERS)));
            }
            json!({ "numeric": items })
        }
    }
}

/// A valid policy and a message drawn from the same small pools.
pub fn case(s: &mut impl Source) -> Case {
    let mut policy = Map::new();
    for _ in 0..s.below(4) {
        let alternatives: Vec<Value> = (0..1 + s.below(3)).map(|_| alternative(s)).collect();
        policy.insert(word(s, NAMES).to_owned(), Value::Array(alternatives));
    }
    let message = message(s, &[]);
    Case {
        dialect: Dialect::Basaltic,
        options: Value::Null,
        policy: Value::Object(policy),
        message,
    }
}

/// A message of up to four attributes drawn from the pools; with a non-empty `pool` (a policy's
/// own operands, see [`harvest`](super::harvest)) a value comes from it a third of the time.
/// [`case`] passes an empty pool: its messages do not depend on its policy.
pub fn message(s: &mut impl Source, pool: &[Value]) -> Value {
    let mut attributes = Map::new();
    for _ in 0..s.below(5) {
        let value = if !pool.is_empty() && s.chance(35) {
            match s.pick(pool) {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            }
        } else if s.chance(50) {
            word(s, NUMBER_TEXTS).to_owned()
        } else {
            word(s, STRINGS).to_owned()
        };
        let ty = if s.chance(50) { "Number" } else { "String" };
        attributes.insert(
            word(s, NAMES).to_owned(),
            json!({"type": ty, "value": value}),
        );
    }
    json!({ "attributes": attributes })
}

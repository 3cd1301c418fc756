//! Generates `sns` policies and messages (rules 1–45, D-1..D-8), in both scopes.
//!
//! Attribute scope: `String`, `Number`, `String.Array` (valid and invalid array texts) and `Binary`
//! attributes, the empty attribute set (rule 12). Body scope: nested objects, dotted names in the
//! policy and the body (rule 16), arrays of scalars, of arrays and of objects (rules 17, 18, D-3),
//! `null`/`true`/`false` leaves, numbers with many spellings, bodies that are not JSON objects
//! (rule 14). Matchers: exact strings, bare numbers, literals, prefix, suffix, equals-ignore-case,
//! wildcards with escapes, every anything-but form, numeric ranges, CIDR edges, exists, `$or`.
//! Policies stay within the key (rule 42) and combination (rule 43) limits by construction.

use super::{Case, Source, harvest, word};
use crate::json;
use crate::reference::json::{Map, Value};
use filtervm_compiler::Dialect;

/// Attribute names and body member names (the same pool, so policies and messages collide).
const NAMES: &[&str] = &["a", "b", "c", "a.b", "b.c", "ip", "", "a."];
/// Strings: empty, case variants, escapes, normalisation variants, IP-looking and number-looking
/// text.
const STRINGS: &[&str] = &[
    "", "abc", "ABC", "aBc", "ab", "bc", "a*c", "*", "\\", "a\\c", "\u{df}", "SS", "ss", "\u{e9}",
    "\u{c9}", "e\u{301}", "10.0.0.1", "100", "1e2", "true", "null",
];
/// Number spellings as they appear in messages (body numbers, `Number` attributes, array
/// elements): equal values spelled differently, bounds, precision edges.
const NUMBER_TEXTS: &[&str] = &[
    "100",
    "100.0",
    "1e2",
    "1E2",
    "1.00e+2",
    "99.99999",
    "100.00001",
    "0",
    "-0",
    "0.0",
    "-5",
    "0.1",
    "1e9",
    "-1e9",
    "1000000000.5",
    "1e21",
    "9007199254740992",
    "9007199254740993",
    "5e-324",
    "1.7976931348623157e308",
    "1e400",
    "-1e400",
    "1e-400",
];
/// Number texts that only attributes carry (not JSON numbers: a `Number` attribute with such a
/// value is absent, D-6).
const BAD_NUMBER_TEXTS: &[&str] = &[" 100", "+1", "01", ".5", "1.", "abc", "0x10", "NaN", ""];
/// Policy numbers (finite JSON numbers, rule 31).
const POLICY_NUMBERS: &[&str] = &[
    "100",
    "100.0",
    "1e2",
    "0",
    "-0",
    "-5",
    "0.1",
    "99.99999",
    "1e9",
    "-1e9",
    "1e21",
    "9007199254740993",
    "5e-324",
];
/// IP addresses (valid and not) for the `cidr` edges.
const IPS: &[&str] = &[
    "10.0.0.0",
    "10.0.0.1",
    "10.0.0.255",
    "10.0.1.0",
    "10.255.255.255",
    "11.0.0.0",
    "9.255.255.255",
    "0.0.0.0",
    "255.255.255.255",
    "10.0.0.256",
    "10.0.0",
    "::",
    "::1",
    "2001:db8::",
    "2001:db8::1",
    "2001:0db8:0000:0000:0000:0000:0000:0001",
    "2001:db8:1234:1a00::5",
    "2001:db9::",
    "::ffff:10.0.0.1",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
];
/// CIDR blocks (valid: rule 40, D-5).
const CIDRS: &[&str] = &[
    "10.0.0.0/8",
    "10.0.0.0/24",
    "10.0.0.0/31",
    "10.0.0.1/32",
    "10.0.0.0/32",
    "0.0.0.0/0",
    "10.0.0.7/24",
    "255.255.255.255/32",
    "2001:db8::/32",
    "2001:db8::1/128",
    "2001:db8:1234:1a00::/64",
    "::/0",
    "::/128",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/127",
];
/// Pieces of wildcard patterns: literals, `\*` (a literal star) and `\\` (a literal backslash).
const WILDCARD_PIECES: &[&str] = &["a", "b", "c", "ab", "bc", "A", "\\*", "\\\\", "\u{e9}", "."];

fn number(text: &str) -> Value {
    crate::reference::json::parse(text).unwrap_or(Value::Null)
}

/// A wildcard pattern (rule 27): pieces and stars, never two unescaped stars in a row.
fn wildcard(s: &mut impl Source) -> String {
    let mut out = String::new();
    let mut last_star = false;
    for _ in 0..1 + s.below(5) {
        if !last_star && s.chance(40) {
            out.push('*');
            last_star = true;
        } else {
            out.push_str(word(s, WILDCARD_PIECES));
            last_star = false;
        }
    }
    out
}

/// A string operand: from the pool, or a piece of one.
fn string(s: &mut impl Source) -> String {
    word(s, STRINGS).to_owned()
}

fn nonempty_string(s: &mut impl Source) -> String {
    let w = word(s, STRINGS);
    if w.is_empty() {
        "a".to_owned()
    } else {
        w.to_owned()
    }
}

/// What the entries of an anything-but pattern list are.
#[derive(Clone, Copy)]
enum Entry {
    NonEmpty,
    Any,
    Wildcard,
}

fn entry(s: &mut impl Source, kind: Entry) -> Value {
    json!(match kind {
        Entry::NonEmpty => nonempty_string(s),
        Entry::Any => string(s),
        Entry::Wildcard => wildcard(s),
    })
}

/// A string or a non-empty list of strings (rule 41 DECISION).
fn one_or_list(s: &mut impl Source, kind: Entry) -> Value {
    if s.chance(50) {
        entry(s, kind)
    } else {
        Value::Array((0..1 + s.below(3)).map(|_| entry(s, kind)).collect())
    }
}

fn policy_number(s: &mut impl Source) -> Value {
    number(word(s, POLICY_NUMBERS))
}

fn anything_but(s: &mut impl Source) -> Value {
    let operand = match s.below(9) {
        0 => json!(string(s)),
        1 => policy_number(s),
        2 => Value::Array((0..1 + s.below(3)).map(|_| json!(string(s))).collect()),
        3 => Value::Array((0..1 + s.below(3)).map(|_| policy_number(s)).collect()),
        // Rule 41 DECISION: a string or a non-empty list of strings; prefix/suffix not empty.
        4 => json!({"prefix": one_or_list(s, Entry::NonEmpty)}),
        5 => json!({"suffix": one_or_list(s, Entry::NonEmpty)}),
        6 => json!({"wildcard": one_or_list(s, Entry::Wildcard)}),
        _ => json!({"equals-ignore-case": one_or_list(s, Entry::Any)}),
    };
    json!({ "anything-but": operand })
}

/// One alternative of a leaf list (rules 22–34).
fn alternative(s: &mut impl Source) -> Value {
    match s.below(16) {
        0 | 1 => json!(string(s)),
        2 => policy_number(s),
        3 => json!(*s.pick(&[Value::Bool(true), Value::Bool(false), Value::Null])),
        4 => json!({"prefix": string(s)}),
        5 => json!({"suffix": string(s)}),
        6 => json!({"equals-ignore-case": string(s)}),
        7 => json!({"wildcard": wildcard(s)}),
        8 | 9 => anything_but(s),
        10 | 11 => super::numeric(s, policy_number),
        12 => json!({"cidr": word(s, CIDRS)}),
        13 => json!({"exists": s.chance(50)}),
        14 => json!({"prefix": nonempty_string(s)}),
        _ => json!(word(s, IPS)),
    }
}

fn leaf_list(s: &mut impl Source) -> Value {
    Value::Array((0..1 + s.below(3)).map(|_| alternative(s)).collect())
}

/// A policy object. `depth` bounds nesting (body scope only); `leaves` counts the leaf lists
/// made so far and `max` bounds them, so that no policy names more than five leaf keys (rule 42,
/// counted conservatively: a repeated path counts again). Returns an empty object only when
/// `*leaves >= max` on entry.
fn object(
    s: &mut impl Source,
    body: bool,
    depth: u32,
    leaves: &mut u32,
    max: u32,
    in_or: bool,
) -> Value {
    let mut map = Map::new();
    let members = 1 + s.below(3);
    for _ in 0..members {
        if *leaves >= max {
            break;
        }
        let choice = s.below(10);
        if choice == 0 && max - *leaves >= 2 && (!in_or || s.chance(30)) {
            // `$or` (rule 34): two or three branches, each keeping one leaf in reserve for the
            // branches after it; sometimes nested in a branch.
            let k = (2 + s.below(2)).min(max - *leaves);
            let branches: Vec<Value> = (0..k)
                .map(|j| {
                    let branch_max = max - (k - j - 1);
                    let b = object(s, body, depth, leaves, branch_max, true);
                    if b.as_object().is_some_and(Map::is_empty) {
                        *leaves += 1;
                        json!({ word(s, NAMES): leaf_list(s) })
                    } else {
                        b
                    }
                })
                .collect();
            map.insert("$or".to_owned(), Value::Array(branches));
        } else if body && depth > 0 && choice <= 3 {
            let child = object(s, body, depth - 1, leaves, max, in_or);
            if child.as_object().is_some_and(|m| !m.is_empty()) {
                map.insert(word(s, NAMES).to_owned(), child);
            }
        } else {
            *leaves += 1;
            map.insert(word(s, NAMES).to_owned(), leaf_list(s));
        }
    }
    if map.is_empty() && *leaves < max {
        *leaves += 1;
        map.insert(word(s, NAMES).to_owned(), leaf_list(s));
    }
    Value::Object(map)
}

/// The combination count of rule 43 (as its text defines it, saturating).
fn combinations(object: &Map, depth: u64) -> u64 {
    object.iter().fold(1u64, |acc, (name, value)| {
        let factor = match value {
            Value::Array(items) if name == "$or" => items.iter().fold(0u64, |sum, b| {
                sum.saturating_add(b.as_object().map_or(1, |b| combinations(b, depth)))
            }),
            Value::Array(items) => {
                depth.saturating_mul(u64::try_from(items.len()).unwrap_or(u64::MAX))
            }
            Value::Object(child) => combinations(child, depth + 1),
            _ => 1,
        };
        acc.saturating_mul(factor)
    })
}

/// Cuts every leaf list to its first alternative (to get under the combination limit).
fn truncate_lists(value: &mut Value, in_or_list: bool) {
    match value {
        Value::Object(map) => {
            for (name, v) in map.iter_mut() {
                truncate_lists(v, name == "$or");
            }
        }
        Value::Array(items) if in_or_list => {
            for item in items {
                truncate_lists(item, false);
            }
        }
        Value::Array(items) => items.truncate(1),
        _ => {}
    }
}

/// A value from the policy's own operands (see [`harvest`]), made likelier to match: the
/// address of a CIDR block, a wildcard pattern with its stars dropped or filled.
fn from_pool(s: &mut impl Source, pool: &[Value]) -> Option<Value> {
    if pool.is_empty() || !s.chance(35) {
        return None;
    }
    let v = s.pick(pool).clone();
    Some(match &v {
        Value::String(text) if text.contains('/') && s.chance(70) => {
            json!(text.split('/').next().unwrap_or(""))
        }
        Value::String(text) if text.contains('*') => {
            let fill = word(s, &["", "x", "abc", "*"]);
            json!(
                text.replace("\\\\", "\\")
                    .replace("\\*", "\u{1}")
                    .replace('*', fill)
                    .replace('\u{1}', "*")
            )
        }
        _ => v,
    })
}

/// A scalar of a message (body leaf or `String.Array` element).
fn scalar(s: &mut impl Source, pool: &[Value]) -> Value {
    if let Some(v) = from_pool(s, pool) {
        return v;
    }
    match s.below(10) {
        0..=3 => json!(string(s)),
        4..=6 => number(word(s, NUMBER_TEXTS)),
        7 => json!(word(s, IPS)),
        8 => Value::Null,
        _ => Value::Bool(s.chance(50)),
    }
}

/// A body value: scalars, objects, arrays of scalars, arrays of arrays, arrays of objects.
fn body_value(s: &mut impl Source, pool: &[Value], depth: u32) -> Value {
    if depth == 0 {
        return scalar(s, pool);
    }
    match s.below(10) {
        0..=4 => scalar(s, pool),
        5 | 6 => body_object(s, pool, depth - 1),
        7 => Value::Array((0..s.below(4)).map(|_| scalar(s, pool)).collect()),
        8 => Value::Array(
            (0..s.below(4))
                .map(|_| body_object(s, pool, depth - 1))
                .collect(),
        ),
        _ => Value::Array(
            (0..s.below(3))
                .map(|_| body_value(s, pool, depth - 1))
                .collect(),
        ),
    }
}

fn body_object(s: &mut impl Source, pool: &[Value], depth: u32) -> Value {
    let mut map = Map::new();
    for _ in 0..1 + s.below(4) {
        map.insert(word(s, NAMES).to_owned(), body_value(s, pool, depth));
    }
    Value::Object(map)
}

/// A message attribute (rules 5–11, D-6).
fn attribute(s: &mut impl Source, pool: &[Value]) -> Value {
    match from_pool(s, pool) {
        Some(Value::Number(n)) if s.chance(80) => {
            return json!({"Type": "Number", "Value": n.to_string()});
        }
        Some(Value::String(text)) if s.chance(80) => {
            return json!({"Type": "String", "Value": text});
        }
        _ => {}
    }
    match s.below(10) {
        0 if s.chance(30) => {
            // Custom types and the AWS API spellings (rule 5).
            let ty = word(s, &["String.custom", "Number.custom", "Binary.x"]);
            let value = if ty.starts_with("Number") {
                word(s, NUMBER_TEXTS)
            } else {
                word(s, STRINGS)
            };
            json!({"DataType": ty, "StringValue": value})
        }
        0..=2 => json!({"Type": "String", "Value": string(s)}),
        3 | 4 => json!({"Type": "String", "Value": word(s, IPS)}),
        5 | 6 => {
            let text = if s.chance(85) {
                word(s, NUMBER_TEXTS)
            } else {
                word(s, BAD_NUMBER_TEXTS)
            };
            json!({"Type": "Number", "Value": text})
        }
        7 | 8 => {
            let text = match s.below(10) {
                0 => "not json".to_owned(),
                1 => "[]".to_owned(),
                2 => "{\"a\": 1}".to_owned(),
                3 => "\"abc\"".to_owned(),
                4 => {
                    // Nested arrays and objects inside a String.Array are no values (rule 7).
                    json!([scalar(s, pool), [scalar(s, pool)], {"a": scalar(s, pool)}]).to_string()
                }
                _ => {
                    Value::Array((0..1 + s.below(3)).map(|_| scalar(s, pool)).collect()).to_string()
                }
            };
            let ty = if s.chance(90) {
                "String.Array"
            } else {
                "String.Array.x"
            };
            json!({"Type": ty, "Value": text})
        }
        _ => json!({"Type": "Binary", "Value": "YWJj"}),
    }
}

/// A body that follows the policy's shape (each member present three times in four, one `$or`
/// branch followed), with values from `pool` or the pools, plus random members; sometimes an
/// object level becomes an array of such objects (rule 18).
fn follow(s: &mut impl Source, policy: &Map, pool: &[Value], depth: u32) -> Value {
    let mut map = match body_object(s, pool, depth.min(1)) {
        Value::Object(m) if s.chance(30) => m,
        _ => Map::new(),
    };
    for (name, v) in policy {
        match v {
            Value::Array(branches) if name == "$or" => {
                let i = s.below(u32::try_from(branches.len()).unwrap_or(0)) as usize;
                if let Some(Value::Object(branch)) = branches.get(i)
                    && let Value::Object(m) = follow(s, branch, pool, depth)
                {
                    map.extend(m);
                }
            }
            _ if !s.chance(75) => {}
            Value::Array(_) => {
                let leaf = match s.below(6) {
                    0 => Value::Array((0..s.below(4)).map(|_| scalar(s, pool)).collect()),
                    _ => scalar(s, pool),
                };
                map.insert(name.clone(), leaf);
            }
            Value::Object(child) => {
                let inner = if s.chance(25) {
                    Value::Array(
                        (0..1 + s.below(3))
                            .map(|_| follow(s, child, pool, depth.saturating_sub(1)))
                            .collect(),
                    )
                } else {
                    follow(s, child, pool, depth.saturating_sub(1))
                };
                map.insert(name.clone(), inner);
            }
            _ => {}
        }
    }
    Value::Object(map)
}

/// The names of a flat (attribute-scope) policy's leaves, `$or` branches included.
fn leaf_names<'a>(policy: &'a Map, out: &mut Vec<&'a str>) {
    for (name, v) in policy {
        match v {
            Value::Array(branches) if name == "$or" => {
                for b in branches.iter().filter_map(Value::as_object) {
                    leaf_names(b, out);
                }
            }
            _ => out.push(name),
        }
    }
}

/// A valid policy and a message drawn from the same small pools.
pub fn case(s: &mut impl Source) -> Case {
    let body = s.chance(50);
    let mut policy = json!({});
    if s.chance(95) {
        // Leaves three levels down count 3 each (rule 43): with five of them even single
        // alternatives make 243, so a policy that stays over the limit is drawn again, shallower.
        for depth in [2, 1] {
            let mut leaves = 0;
            policy = object(s, body, depth, &mut leaves, 5, false);
            if policy.as_object().is_some_and(|p| combinations(p, 1) > 150) {
                truncate_lists(&mut policy, false);
            }
            if policy
                .as_object()
                .is_some_and(|p| combinations(p, 1) <= 150)
            {
                break;
            }
        }
        if policy.as_object().is_some_and(|p| combinations(p, 1) > 150) {
            policy = json!({ word(s, NAMES): leaf_list(s) });
        }
    }
    let message = message(s, &policy, body);
    let options = if body {
        json!({"scope": "MessageBody"})
    } else {
        match s.below(3) {
            0 => json!({"scope": "MessageAttributes"}),
            1 => json!({}),
            _ => Value::Null,
        }
    };
    Case {
        dialect: Dialect::Sns,
        options,
        policy,
        message,
    }
}

/// A message for `policy`, in the body scope when `body`: values from the policy's own operands
/// now and then, a body that follows the policy's shape half of the time, attributes named by its
/// leaves.
pub fn message(s: &mut impl Source, policy: &Value, body: bool) -> Value {
    let mut pool = Vec::new();
    harvest(policy, &mut pool);
    if body {
        let text = match s.below(20) {
            0 => Value::String("not json".into()),
            1 => Value::String("\"a string\"".into()),
            2 => Value::String("[{\"a\": \"abc\"}]".into()),
            3 => Value::String(String::new()),
            4..=7 => Value::String(body_object(s, &pool, 3).to_string()),
            _ => {
                let empty = Map::new();
                let shape = policy.as_object().unwrap_or(&empty);
                Value::String(follow(s, shape, &pool, 3).to_string())
            }
        };
        json!({ "body": text })
    } else {
        let mut attributes = Map::new();
        let mut names = Vec::new();
        if let Some(p) = policy.as_object() {
            leaf_names(p, &mut names);
        }
        for name in names {
            if s.chance(70) {
                attributes.insert(name.to_owned(), attribute(s, &pool));
            }
        }
        for _ in 0..s.below(3) {
            attributes.insert(word(s, NAMES).to_owned(), attribute(s, &pool));
        }
        json!({ "attributes": attributes })
    }
}

/// Points an attribute-scope `message` at `policy`: half of the time, each attribute a leaf of
/// the policy names gets one of that leaf's own string or number operands (for checks that want
/// messages that match, see [`super::message_for`]).
pub fn aim(s: &mut impl Source, policy: &Value, message: &mut Value) {
    fn leaves<'a>(policy: &'a Map, out: &mut Vec<(&'a str, &'a Value)>) {
        for (name, v) in policy {
            match v {
                Value::Array(branches) if name == "$or" => {
                    for b in branches.iter().filter_map(Value::as_object) {
                        leaves(b, out);
                    }
                }
                _ => out.push((name, v)),
            }
        }
    }
    let mut named = Vec::new();
    if let Some(p) = policy.as_object() {
        leaves(p, &mut named);
    }
    let Some(attributes) = message.get_mut("attributes").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, leaf) in named {
        let mut operands = Vec::new();
        harvest(leaf, &mut operands);
        if operands.is_empty() || !s.chance(50) {
            continue;
        }
        let attribute = match s.pick(&operands) {
            Value::Number(n) => json!({"Type": "Number", "Value": n.to_string()}),
            Value::String(text) => json!({"Type": "String", "Value": text}),
            _ => continue,
        };
        attributes.insert(name.to_owned(), attribute);
    }
}

//! Generates `eventbridge` event patterns and events (`docs/dialects/eventbridge-patterns.md`
//! EB-1..EB-35), for the differential check.
//!
//! Patterns: nested objects, dotted names (EB-3), `$or` (nested too, EB-5), repeated paths —
//! a name written twice, a dotted name beside its nested spelling, a leaf beside a `$or` that
//! repeats it (EB-7) —, operator names used as ordinary names outside `$or`, and every matcher:
//! exact and IP-shaped strings, `exactly`, literals, bare numbers (comparable or not), prefix,
//! suffix, equals-ignore-case and their combinations, wildcards with escapes, every
//! `anything-but` form, numeric comparisons and ranges, CIDR blocks of both families, exists.
//! Patterns are valid by construction: no reserved name inside `$or`, comparable numeric bounds,
//! at most two `$or`s (nine branches) of few paths each (EB-32), and at most two distinct
//! wildcard operands on a path, each of at most four pieces with at most two stars: one such
//! operand scores at most 4 (every one the pieces can make was scored), and a path's states are
//! the union of its operands', so EB-33's score stays at 8 or below.
//!
//! Events follow a pattern's shape, with values drawn from its own operands and their other
//! spellings (numbers such as `3.0e2` for `300`, addresses such as `010.0.0.1`, case variants),
//! arrays of objects, nested arrays, arrays of scalars, `null`, empty strings, absent members,
//! repeated member names and dotted names spelled nested, so that they match about as often as
//! not.

use super::{Case, Source, harvest, word};
use crate::json;
use crate::reference::json::{Map, Number, Value};
use filtervm_compiler::Dialect;
use std::collections::{BTreeMap, BTreeSet};

/// Member names (empty, dotted, non-ASCII: U+1F600 sorts before U+E000 and U+FF61 in UTF-16).
const NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "a.b",
    "detail",
    "state",
    "x-y",
    "",
    "\u{1f600}",
    "\u{ff61}",
    "\u{e000}",
];
/// Operator names: ordinary names outside `$or` (EB-5), never drawn inside one.
const OPERATOR_NAMES: &[&str] = &["prefix", "numeric", "exists", "anything-but", "cidr"];
/// Strings: empty, case pairs (full mappings, EB-20), wildcard and escape characters,
/// number-looking and literal-looking text.
const STRINGS: &[&str] = &[
    "",
    "x",
    "X",
    "abc",
    "ABC",
    "aBc",
    "init",
    "terminated",
    "photo.png",
    "PHOTO.PNG",
    "\u{df}",
    "SS",
    "ss",
    "\u{1c5}",
    "\u{1c6}",
    "\u{1c4}",
    "\u{130}",
    "i\u{307}",
    "\u{3c2}",
    "\u{3a3}",
    "\u{3c3}",
    "\u{212a}",
    "k",
    "\u{1f600}",
    "a*b",
    "a\\b",
    "300",
    "true",
    "null",
];
/// Addresses and address-shaped text, in several spellings (EB-13, EB-28).
const IPS: &[&str] = &[
    "10.0.0.1",
    "010.0.0.1",
    "10.000.0.001",
    "::ffff:a00:1",
    "0:0:0:0:0:ffff:a00:1",
    "10.0.0.5",
    "10.0.0.4",
    "10.0.0.8",
    "10.0.1.0",
    "10.0.0.256",
    "::ffff:10.0.0.1",
    "2001:db8::1",
    "2001:DB8:0:0:0:0:0:1",
    "2001:0db8::0001",
    "2001:db8:ffff::1",
    "2001:db9::1",
    "::1",
    "1::2::3",
];
/// CIDR blocks (valid, EB-27): host bits set, `/0`, a trailing slash, IPv6, IPv4-mapped.
const CIDRS: &[&str] = &[
    "10.0.0.0/24",
    "10.0.0.5/30",
    "10.0.0.0/8/",
    "0.0.0.0/0",
    "10.0.0.1/31",
    "2001:db8::/32",
    "2001:db8::/127",
    "::/0",
    "::ffff:a00:0/24",
];
/// Number spellings that are equal as decimals: a pattern's number meets its other spellings.
const SPELLINGS: &[&[&str]] = &[
    &["300", "3.0e2", "30000e-2", "300.00", "3e2"],
    &["0", "-0", "0.0", "0e5"],
    &["1", "1.0", "1e0", "10e-1"],
    &["0.1", "1e-1", "0.10"],
    &["0.30000000000000004", "3.0000000000000004e-1"],
    &["-5", "-5.0", "-5e0"],
    &["5000000000", "5e9"],
    &["6000000000", "6e9", "6.0e9"],
    &["1152921504606847000", "1.152921504606847e18"],
    &["9007199254740992", "9.007199254740992e15"],
    // Not comparable (EB-17): only the same text matches.
    &["9007199254740993"],
    &["1152921504606846976"],
    &["1.00000000000000001"],
    &["1e400"],
];
/// Comparable numbers for numeric bounds and anything-but lists (EB-17).
const COMPARABLE: &[&str] = &[
    "0", "-0", "1", "1.0", "300", "3.0e2", "0.1", "0.3", "-5", "5e9", "6e9", "1e300", "4.9e-324",
];
/// Pieces of wildcard operands: literals, `\*` (a literal star), `\\` (a literal backslash).
const WILDCARD_PIECES: &[&str] = &["a", "b", "ab", "x", ".png", "\\*", "\\\\", "\u{e9}", ":"];

fn number(text: &str) -> Value {
    Number::from_text(text).map_or(Value::Null, Value::Number)
}

/// Another spelling of the same number, when the table knows one.
fn respell(s: &mut impl Source, text: &str) -> Option<&'static str> {
    let group = SPELLINGS.iter().find(|g| g.contains(&text))?;
    Some(*s.pick(group))
}

/// What the pattern drawn so far holds on each path: its distinct wildcard operands (plain and
/// anything-but kept apart, EB-33).
#[derive(Default)]
struct Drawn {
    wildcards: BTreeMap<String, BTreeSet<(bool, String)>>,
}

impl Drawn {
    /// Whether `operand` may go on `path` (at most two distinct operands a path).
    fn admit(&mut self, path: &str, negated: bool, operand: &str) -> bool {
        let set = self.wildcards.entry(path.to_owned()).or_default();
        let key = (negated, operand.to_owned());
        if set.contains(&key) {
            return true;
        }
        if set.len() >= 2 {
            return false;
        }
        set.insert(key);
        true
    }
}

/// A wildcard operand (EB-22): one to four pieces, at most two stars, never two in a row.
fn wildcard(s: &mut impl Source) -> String {
    let mut out = String::new();
    let (mut stars, mut last_star) = (0, false);
    for _ in 0..1 + s.below(4) {
        if !last_star && stars < 2 && s.chance(45) {
            out.push('*');
            stars += 1;
            last_star = true;
        } else {
            out.push_str(word(s, WILDCARD_PIECES));
            last_star = false;
        }
    }
    out
}

/// A wildcard operand admitted on `path`, or one already there; `None` when two are there and
/// the draw fell on neither.
fn wildcard_on(
    s: &mut impl Source,
    drawn: &mut Drawn,
    path: &str,
    negated: bool,
) -> Option<String> {
    let w = wildcard(s);
    drawn.admit(path, negated, &w).then_some(w)
}

fn string(s: &mut impl Source) -> String {
    if s.chance(20) {
        word(s, IPS).to_owned()
    } else {
        word(s, STRINGS).to_owned()
    }
}

fn nonempty(s: &mut impl Source) -> String {
    let w = string(s);
    if w.is_empty() { "in".to_owned() } else { w }
}

fn spelled(s: &mut impl Source) -> Value {
    let group = *s.pick(SPELLINGS);
    number(word(s, group))
}

fn comparable_number(s: &mut impl Source) -> Value {
    number(word(s, COMPARABLE))
}

/// `anything-but` (EB-23, EB-24) in every form; `None` when a wildcard form does not fit `path`.
fn anything_but(s: &mut impl Source, drawn: &mut Drawn, path: &str) -> Option<Value> {
    let list = |draw: &mut dyn FnMut() -> Option<Value>, n: u32| -> Option<Value> {
        (0..n)
            .map(|_| draw())
            .collect::<Option<Vec<Value>>>()
            .map(Value::Array)
    };
    let n = 1 + s.below(3);
    let single = s.chance(50);
    let operand = match s.below(8) {
        0 => json!(string(s)),
        1 => comparable_number(s),
        2 => list(&mut || Some(json!(string(s))), n)?,
        3 => list(&mut || Some(comparable_number(s)), n)?,
        4 | 5 => {
            let kind = word(s, &["prefix", "suffix", "equals-ignore-case"]);
            let mut draw = || {
                Some(json!(if kind == "equals-ignore-case" {
                    string(s)
                } else {
                    nonempty(s)
                }))
            };
            let v = if single { draw()? } else { list(&mut draw, n)? };
            json!({ kind: v })
        }
        _ => {
            let mut draw = || wildcard_on(s, drawn, path, true).map(Value::from);
            let v = if single { draw()? } else { list(&mut draw, n)? };
            json!({"wildcard": v})
        }
    };
    Some(json!({"anything-but": operand}))
}

/// One alternative of a leaf on `path` (EB-12..EB-30).
fn alternative(s: &mut impl Source, drawn: &mut Drawn, path: &str) -> Value {
    let drawn_alternative = match s.below(17) {
        0 | 1 => Some(json!(string(s))),
        2 => Some(spelled(s)),
        3 => Some(
            s.pick(&[Value::Bool(true), Value::Bool(false), Value::Null])
                .clone(),
        ),
        4 => Some(json!({"exactly": string(s)})),
        5 => Some(json!({"prefix": string(s)})),
        6 => Some(json!({"suffix": string(s)})),
        7 => Some(json!({"equals-ignore-case": string(s)})),
        8 => {
            let affix = word(s, &["prefix", "suffix"]);
            Some(json!({ affix: {"equals-ignore-case": string(s)} }))
        }
        9 | 10 => wildcard_on(s, drawn, path, false).map(|w| json!({"wildcard": w})),
        11 | 12 => anything_but(s, drawn, path),
        13 => Some(super::numeric(s, comparable_number)),
        14 => Some(json!({"cidr": word(s, CIDRS)})),
        _ => Some(json!({"exists": s.chance(50)})),
    };
    drawn_alternative.unwrap_or_else(|| json!({"prefix": string(s)}))
}

fn leaf(s: &mut impl Source, drawn: &mut Drawn, path: &str) -> Value {
    Value::Array(
        (0..1 + s.below(3))
            .map(|_| alternative(s, drawn, path))
            .collect(),
    )
}

fn join(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        Some(p) => format!("{p}.{name}"),
        None => name.to_owned(),
    }
}

/// A pattern object (or `$or` alternative, `in_or`) below `prefix`, never empty. `ors` bounds the
/// `$or`s still to draw (so that branches stay few, EB-32).
fn object(
    s: &mut impl Source,
    drawn: &mut Drawn,
    prefix: Option<&str>,
    depth: u32,
    in_or: bool,
    ors: &mut u32,
) -> Map {
    let mut map = Map::new();
    for _ in 0..1 + s.below(3) {
        let name = if !in_or && s.chance(5) {
            word(s, OPERATOR_NAMES)
        } else {
            word(s, NAMES)
        };
        let choice = s.below(10);
        if choice == 0 && *ors > 0 {
            *ors -= 1;
            let alternatives: Vec<Value> = (0..2 + s.below(2))
                .map(|_| {
                    Value::Object(object(s, drawn, prefix, depth.saturating_sub(1), true, ors))
                })
                .collect();
            map.push("$or".to_owned(), Value::Array(alternatives));
        } else if depth > 0 && choice <= 3 {
            let child = object(s, drawn, Some(&join(prefix, name)), depth - 1, in_or, ors);
            map.push(name.to_owned(), Value::Object(child));
        } else {
            // EB-7: now and then a name this object already has (a repeated path).
            let existing = map.keys().find(|k| *k != "$or").cloned();
            let name = match existing {
                Some(existing) if s.chance(10) => existing,
                _ => name.to_owned(),
            };
            let value = leaf(s, drawn, &join(prefix, &name));
            map.push(name, value);
        }
    }
    map
}

/// A case: a valid pattern ([`pattern`]) and an event aimed at it ([`event`]). The dialect takes
/// no options: they are `null`, or now and then the empty object (the same defaults).
pub fn case(s: &mut impl Source) -> Case {
    let options = if s.chance(10) {
        Value::Object(Map::new())
    } else {
        Value::Null
    };
    let policy = pattern(s);
    let message = event(s, &policy);
    Case {
        dialect: Dialect::EventBridge,
        options,
        policy,
        message,
    }
}

/// A valid event pattern (EB-4..EB-33 hold by construction).
pub fn pattern(s: &mut impl Source) -> Value {
    let mut drawn = Drawn::default();
    let mut ors = 2;
    let mut map = object(s, &mut drawn, None, 2, false, &mut ors);
    // EB-7: a dotted name beside its nested spelling.
    let nested = map
        .iter()
        .filter(|(k, _)| k.as_str() != "$or")
        .find_map(|(k, v)| {
            let inner = v.as_object()?.keys().find(|i| *i != "$or")?;
            Some(format!("{k}.{inner}"))
        });
    if let Some(path) = nested
        && s.chance(10)
    {
        let value = leaf(s, &mut drawn, &path);
        map.push(path, value);
    }
    Value::Object(map)
}

/// A value for a leaf whose operands are `operands`: one of them, another spelling of one, or a
/// value from the pools.
fn scalar(s: &mut impl Source, operands: &[Value]) -> Value {
    if !operands.is_empty() && s.chance(70) {
        let v = s.pick(operands).clone();
        return match v {
            Value::Number(n) => number(respell(s, n.as_str()).unwrap_or(n.as_str())),
            Value::String(text) => json!(aimed_string(s, &text)),
            other => other,
        };
    }
    match s.below(12) {
        0..=4 => json!(string(s)),
        5..=7 => spelled(s),
        8 => json!(word(s, IPS)),
        9 => Value::Null,
        10 => json!(""),
        _ => Value::Bool(s.chance(50)),
    }
}

/// A string made from a pattern's string operand to hit or nearly hit it.
fn aimed_string(s: &mut impl Source, text: &str) -> String {
    match s.below(9) {
        0 => text.to_uppercase(),
        1 => text.to_lowercase(),
        2 => format!("{text}{}", word(s, &["x", "", ".png", "\u{df}"])),
        3 => format!("{}{text}", word(s, &["x", "", "init"])),
        // A CIDR block's address, an address in another spelling.
        4 if text.contains('/') => text.split('/').next().unwrap_or("").to_owned(),
        4 => word(s, IPS).to_owned(),
        // A wildcard with its stars filled and its escapes read.
        5 if text.contains('*') => {
            let fill = word(s, &["", "x", "ab", "*"]);
            text.replace("\\\\", "\u{1}")
                .replace("\\*", "\u{2}")
                .replace('*', fill)
                .replace('\u{1}', "\\")
                .replace('\u{2}', "*")
        }
        _ => text.to_owned(),
    }
}

/// A value that satisfies `alternative` (a leaf alternative as [`alternative`] draws them), or
/// `None` for `{"exists": false}` (the member must be absent). Aimed, not guaranteed: a value
/// for an excluding or case-folding matcher may still miss.
fn hit(s: &mut impl Source, alternative: &Value) -> Option<Value> {
    let Value::Object(expression) = alternative else {
        return Some(match alternative {
            Value::Number(n) => number(respell(s, n.as_str()).unwrap_or(n.as_str())),
            Value::String(text) if s.chance(30) => json!(aimed_string(s, text)),
            other => other.clone(),
        });
    };
    let (op, operand) = expression.iter().next()?;
    let text = operand.as_str().unwrap_or_default();
    let inner = operand
        .get("equals-ignore-case")
        .and_then(Value::as_str)
        .map(str::to_uppercase);
    Some(match op.as_str() {
        "exactly" => json!(text),
        "prefix" => json!(format!(
            "{}{}",
            inner.as_deref().unwrap_or(text),
            word(s, &["", "x"])
        )),
        "suffix" => json!(format!(
            "{}{}",
            word(s, &["", "x"]),
            inner.as_deref().unwrap_or(text)
        )),
        "equals-ignore-case" => json!(if s.chance(50) {
            text.to_uppercase()
        } else {
            text.to_lowercase()
        }),
        "wildcard" => json!(aimed_string(s, text)),
        "cidr" => json!(text.split('/').next().unwrap_or_default()),
        "exists" if operand == &Value::Bool(false) => return None,
        "numeric" => {
            let items = operand.as_array()?;
            let bound = |i: usize| items.get(i).and_then(Value::as_f64);
            let op = items.first().and_then(Value::as_str).unwrap_or("=");
            let x = match (op, bound(1), bound(3)) {
                (_, Some(lo), Some(hi)) => lo + (hi - lo) / 2.0,
                (">" | ">=", Some(lo), None) => lo + 1.0,
                ("<" | "<=", Some(hi), None) => hi - 1.0,
                (_, Some(n), None) => n,
                _ => 0.0,
            };
            Value::from(x)
        }
        // `anything-but` and `exists: true`: most values pass.
        _ => scalar(s, &[]),
    })
}

/// A leaf's value in an event: a scalar, now and then an array of them (nested arrays too, or
/// empty).
fn leaf_value(s: &mut impl Source, operands: &[Value]) -> Value {
    match s.below(10) {
        0 | 1 => Value::Array((0..s.below(4)).map(|_| scalar(s, operands)).collect()),
        2 => json!([
            scalar(s, operands),
            [scalar(s, operands), [scalar(s, operands)]]
        ]),
        _ => scalar(s, operands),
    }
}

/// Noise: members the pattern does not name, with any kind of value.
fn noise(s: &mut impl Source, pool: &[Value], map: &mut Map) {
    for _ in 0..s.below(3) {
        let value = match s.below(4) {
            0 => json!({ word(s, NAMES): scalar(s, pool) }),
            1 => json!([{ word(s, NAMES): scalar(s, pool) }]),
            _ => leaf_value(s, pool),
        };
        map.push(word(s, NAMES).to_owned(), value);
    }
}

/// Puts `value` under `name`, a dotted name now and then spelled as nested objects (EB-3), a
/// name already present now and then given again (each occurrence counts, EB-3).
fn put(s: &mut impl Source, map: &mut Map, name: &str, value: Value) {
    let (name, value) = match name.split_once('.') {
        Some((head, tail)) if !head.is_empty() && s.chance(40) => {
            let mut inner = Map::new();
            put(s, &mut inner, tail, value);
            (head.to_owned(), Value::Object(inner))
        }
        _ => (name.to_owned(), value),
    };
    if map.contains_key(&name) && s.chance(30) {
        map.push(name, value);
    } else {
        map.insert(name, value);
    }
}

/// An event object that follows `pattern`'s shape.
fn follow(s: &mut impl Source, pattern: &Map, pool: &[Value], depth: u32) -> Map {
    let mut map = Map::new();
    if s.chance(30) {
        noise(s, pool, &mut map);
    }
    for (name, v) in pattern {
        match v {
            Value::Array(alternatives) if name == "$or" => {
                for _ in 0..1 + u32::from(s.chance(25)) {
                    if let Some(Value::Object(alternative)) = alternatives
                        .get(s.below(u32::try_from(alternatives.len()).unwrap_or(0)) as usize)
                    {
                        for (k, v) in follow(s, alternative, pool, depth) {
                            put(s, &mut map, &k, v);
                        }
                    }
                }
            }
            // Absent now and then (exists, anything-but).
            _ if s.chance(10) => {}
            Value::Array(alternatives) => {
                let value = if s.chance(50) {
                    // Aimed at one alternative, alone or among other values.
                    let target = s.pick(alternatives);
                    match hit(s, target) {
                        None => continue,
                        Some(v) if s.chance(25) => json!([scalar(s, pool), v]),
                        Some(v) => v,
                    }
                } else {
                    let mut operands = Vec::new();
                    harvest(v, &mut operands);
                    leaf_value(s, &operands)
                };
                put(s, &mut map, name, value);
            }
            Value::Object(child) => {
                let one =
                    |s: &mut _| Value::Object(follow(s, child, pool, depth.saturating_sub(1)));
                let value = match s.below(8) {
                    // Arrays of objects (EB-9), nested arrays of them, and empty ones.
                    0 | 1 => Value::Array((0..1 + s.below(3)).map(|_| one(s)).collect()),
                    2 => json!([[one(s), one(s)], [one(s)]]),
                    3 if s.chance(30) => json!([]),
                    _ => one(s),
                };
                put(s, &mut map, name, value);
            }
            _ => {}
        }
    }
    map
}

/// An event for `pattern` (a pattern as [`pattern`] makes them; any JSON object works): a JSON
/// object that follows its shape, aimed at its operands, about as likely to match as not.
pub fn event(s: &mut impl Source, pattern: &Value) -> Value {
    let mut pool = Vec::new();
    harvest(pattern, &mut pool);
    let empty = Map::new();
    let shape = pattern.as_object().unwrap_or(&empty);
    Value::Object(follow(s, shape, &pool, 3))
}

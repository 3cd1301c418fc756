//! The eventbridge dialect's structure (`docs/dialects/eventbridge-patterns.md` EB-2..EB-10)
//! checked against the spec read literally: patterns expanded into their branches (EB-5, EB-7),
//! events into values with their array positions (EB-2, EB-3), and each branch matched by the
//! walk of EB-8 with backtracking. The compiled filter never expands a branch nor walks
//! positions (rows, fixed levels and factored `$or`s stand for them), so agreeing on thousands of
//! random small patterns and events over a few names is evidence that the two readings coincide.
//!
//! The walk here knows only a few matchers (strings, numbers, `null`, `exists`, a string
//! `anything-but`): what is tested is the structure, not the operators (they have their own
//! tests and the conformance vectors).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{Dialect, Evaluator, Options, compile_text};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// A JSON value (events), printed by [`Json::write`].
#[derive(Debug, Clone)]
enum Json {
    Str(&'static str),
    Num(i64),
    Null,
    Bool(bool),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn write(&self, out: &mut String) {
        match self {
            Json::Str(s) => write!(out, "\"{s}\"").unwrap(),
            Json::Num(n) => write!(out, "{n}").unwrap(),
            Json::Null => out.push_str("null"),
            Json::Bool(b) => write!(out, "{b}").unwrap(),
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write!(out, "\"{k}\":").unwrap();
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

const NAMES: [&str; 4] = ["a", "b", "c", "r"];

/// A name, now and then a dotted one (EB-3: `{"r.a": v}` and `{"r": {"a": v}}` give one path).
fn name(rng: &mut Rng) -> String {
    if rng.chance(12) {
        return ["r.a", "r.b", "a.c"][rng.below(3)].to_owned();
    }
    NAMES[rng.below(NAMES.len())].to_owned()
}
const STRINGS: [&str; 3] = ["x", "y", "z"];

fn scalar(rng: &mut Rng) -> Json {
    match rng.below(6) {
        0..=2 => Json::Str(STRINGS[rng.below(3)]),
        3 => Json::Num(rng.below(3) as i64),
        4 => Json::Null,
        _ => Json::Bool(rng.chance(2)),
    }
}

fn event_value(rng: &mut Rng, depth: usize) -> Json {
    if depth >= 3 {
        return scalar(rng);
    }
    match rng.below(8) {
        0..=2 => scalar(rng),
        3 | 4 => event_object(rng, depth + 1),
        _ => Json::Arr(
            (0..rng.below(4))
                .map(|_| {
                    if rng.chance(3) {
                        scalar(rng)
                    } else {
                        event_value(rng, depth + 1)
                    }
                })
                .collect(),
        ),
    }
}

fn event_object(rng: &mut Rng, depth: usize) -> Json {
    let mut members: Vec<(String, Json)> = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let name = name(rng);
        // EB-3: a repeated member name is read at each occurrence; now and then one repeats.
        if members.iter().any(|(k, _)| *k == name) && !rng.chance(4) {
            continue;
        }
        members.push((name, event_value(rng, depth)));
    }
    Json::Obj(members)
}

/// A pattern alternative the walk knows.
#[derive(Debug, Clone, PartialEq)]
enum Alt {
    Str(&'static str),
    Num(i64),
    Null,
    Exists(bool),
    AnythingBut(&'static str),
}

/// A pattern member, in document order.
#[derive(Debug, Clone)]
enum Member {
    Leaf(String, Vec<Alt>),
    Nested(String, Vec<Member>),
    Or(Vec<Vec<Member>>),
}

fn alternative(rng: &mut Rng) -> Alt {
    match rng.below(9) {
        0..=2 => Alt::Str(STRINGS[rng.below(3)]),
        3 => Alt::Num(rng.below(3) as i64),
        4 => Alt::Null,
        5 => Alt::Exists(true),
        6 | 7 => Alt::Exists(false),
        _ => Alt::AnythingBut(STRINGS[rng.below(3)]),
    }
}

fn members(rng: &mut Rng, depth: usize, in_or: bool) -> Vec<Member> {
    let mut out = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let name = name(rng);
        match rng.below(10) {
            0 | 1 if depth < 2 => out.push(Member::Nested(name, members(rng, depth + 1, in_or))),
            2 if depth < 2 && !in_or => out.push(Member::Or(
                (0..2 + rng.below(2))
                    .map(|_| members(rng, depth + 1, true))
                    .collect(),
            )),
            _ => out.push(Member::Leaf(
                name,
                (0..1 + rng.below(2)).map(|_| alternative(rng)).collect(),
            )),
        }
    }
    out
}

fn write_members(members: &[Member], out: &mut String) {
    out.push('{');
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match m {
            Member::Leaf(name, alts) => {
                write!(out, "\"{name}\":[").unwrap();
                for (j, a) in alts.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    match a {
                        Alt::Str(s) => write!(out, "\"{s}\"").unwrap(),
                        Alt::Num(n) => write!(out, "{n}").unwrap(),
                        Alt::Null => out.push_str("null"),
                        Alt::Exists(b) => write!(out, "{{\"exists\":{b}}}").unwrap(),
                        Alt::AnythingBut(s) => write!(out, "{{\"anything-but\":\"{s}\"}}").unwrap(),
                    }
                }
                out.push(']');
            }
            Member::Nested(name, inner) => {
                write!(out, "\"{name}\":").unwrap();
                write_members(inner, out);
            }
            Member::Or(alternatives) => {
                out.push_str("\"$or\":[");
                for (j, alt) in alternatives.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    write_members(alt, out);
                }
                out.push(']');
            }
        }
    }
    out.push('}');
}

/// A leaf value of the event with its path and positions (EB-2, EB-3).
#[derive(Debug, Clone)]
struct Value {
    path: String,
    leaf: Json,
    positions: Vec<(usize, usize)>,
}

fn values(
    json: &Json,
    path: &str,
    positions: &mut Vec<(usize, usize)>,
    arrays: &mut usize,
    out: &mut Vec<Value>,
) {
    match json {
        Json::Obj(members) => {
            for (k, v) in members {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                values(v, &p, positions, arrays, out);
            }
        }
        Json::Arr(items) => {
            let id = *arrays;
            *arrays += 1;
            for (i, item) in items.iter().enumerate() {
                match item {
                    Json::Obj(_) | Json::Arr(_) => {
                        positions.push((id, i));
                        values(item, path, positions, arrays, out);
                        positions.pop();
                    }
                    scalar => out.push(Value {
                        path: path.to_owned(),
                        leaf: scalar.clone(),
                        positions: positions.clone(),
                    }),
                }
            }
        }
        scalar => out.push(Value {
            path: path.to_owned(),
            leaf: scalar.clone(),
            positions: positions.clone(),
        }),
    }
}

type Branch = BTreeMap<String, Vec<Alt>>;

/// EB-5, EB-7: reads `members` (below `prefix`) into every branch of `branches`.
fn expand(members: &[Member], prefix: &str, branches: Vec<Branch>) -> Vec<Branch> {
    let mut branches = branches;
    for m in members {
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}.{name}")
            }
        };
        match m {
            Member::Leaf(name, alts) => {
                for b in &mut branches {
                    b.insert(join(name), alts.clone());
                }
            }
            Member::Nested(name, inner) => branches = expand(inner, &join(name), branches),
            Member::Or(alternatives) => {
                branches = alternatives
                    .iter()
                    .flat_map(|alt| expand(alt, prefix, branches.clone()))
                    .collect();
            }
        }
    }
    branches
}

fn satisfies(alt: &Alt, leaf: &Json) -> bool {
    match (alt, leaf) {
        (Alt::Str(s), Json::Str(v)) => s == v,
        (Alt::Num(n), Json::Num(v)) => n == v,
        (Alt::Null, Json::Null) => true,
        (Alt::Exists(true), _) => true,
        (Alt::AnythingBut(s), Json::Str(v)) => s != v,
        (Alt::AnythingBut(_), _) => true,
        _ => false,
    }
}

fn agrees(positions: &[(usize, usize)], fixed: &BTreeMap<usize, usize>) -> bool {
    positions
        .iter()
        .all(|(array, index)| fixed.get(array).is_none_or(|i| i == index))
}

/// EB-8: the walk over the branch's paths in UTF-16 order, with backtracking.
fn walk(paths: &[(&String, &Vec<Alt>)], values: &[Value], fixed: &BTreeMap<usize, usize>) -> bool {
    let Some(((path, alts), rest)) = paths.split_first() else {
        return true;
    };
    let of_path: Vec<&Value> = values.iter().filter(|v| v.path == **path).collect();
    for v in &of_path {
        if agrees(&v.positions, fixed)
            && alts
                .iter()
                .any(|a| *a != Alt::Exists(false) && satisfies(a, &v.leaf))
        {
            let mut more = fixed.clone();
            more.extend(v.positions.iter().copied());
            if walk(rest, values, &more) {
                return true;
            }
        }
    }
    alts.contains(&Alt::Exists(false))
        && !of_path.iter().any(|v| agrees(&v.positions, fixed))
        && walk(rest, values, fixed)
}

fn spec_matches(pattern: &[Member], event: &Json) -> bool {
    let mut vals = Vec::new();
    values(event, "", &mut Vec::new(), &mut 0, &mut vals);
    expand(pattern, "", vec![Branch::new()]).iter().any(|b| {
        let mut paths: Vec<(&String, &Vec<Alt>)> = b.iter().collect();
        paths.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
        walk(&paths, &vals, &BTreeMap::new())
    })
}

#[test]
fn eb_8_random_patterns_agree_with_the_walk() {
    let mut rng = Rng(std::env::var("EB_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_CAFE_F00D_0001));
    let options = Options::from(Dialect::EventBridge);
    let mut evaluator = Evaluator::new();
    let (mut checked, mut matched) = (0, 0);
    for case in 0..(std::env::var("EB_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6000))
    {
        let pattern = members(&mut rng, 0, false);
        let mut text = String::new();
        write_members(&pattern, &mut text);
        let filter = match compile_text(Dialect::EventBridge, &text, &options) {
            Ok(f) => f,
            // Only reserved names inside `$or` (none here) or limits could reject it.
            Err(e) => panic!("case {case}: {text}: {e}"),
        };
        for _ in 0..4 {
            let event = event_object(&mut rng, 0);
            let mut bytes = String::new();
            event.write(&mut bytes);
            let expected = spec_matches(&pattern, &event);
            let got = match evaluator.try_matches_bytes(&filter, bytes.as_bytes()) {
                Ok(got) => got,
                Err(e) => panic!("{text} on {bytes}: {e}"),
            };
            assert_eq!(
                got,
                expected,
                "case {case}: pattern {text}\nevent {bytes}\nIR {}",
                filter.ir().map(ToString::to_string).unwrap_or_default()
            );
            checked += 1;
            matched += usize::from(got);
        }
    }
    assert!(checked > 10_000, "{checked} cases");
    eprintln!("{checked} checked, {matched} matched");
    assert!(
        matched > checked / 10 && matched < checked * 9 / 10,
        "{matched} of {checked} matched"
    );
}

//! Generates `stream` filters and messages (S1–S14, seed `004_0db22b3017d8b844.txt`).
//!
//! Patterns are built from segments — literal (empty ones included, S1), whole-segment `*` (S2),
//! in-segment `*` with a literal prefix and suffix (S3), and at most one `**` anywhere (S4) — over
//! a small alphabet that header values share, with characters that look special but are not
//! (S6). Numeric clauses meet values in every spelling of S9, parsed and not. Policies come in the
//! JSON form and, a third of the time, in the text form printed here by [`text_of`] (independently
//! of the compiler's printer), with random whitespace and optional quoting.

use super::{Case, Source, harvest, word};
use crate::json;
use crate::reference::json::{Map, Value};
use filtervm_compiler::Dialect;

/// Header names (S8: exact, case-sensitive, dots are ordinary; never empty).
const HEADERS: &[&str] = &[
    "region", "Region", "n", "a.b", "\u{e9}", "in", "x y", "AND", "or", "exists", "5", "\"",
];
/// Literal segments, shared by patterns and values.
const SEGMENTS: &[&str] = &[
    "", "a", "b", "ab", "eu", "eu-", "-1", "eu--1", "orders", "created", "\u{e9}", "e\u{301}", "?",
    "\\", "[x]", "A",
];
/// Prefixes and suffixes of in-segment `*` (S3), overlapping the segments above.
const AFFIXES: &[&str] = &["", "a", "b", "eu-", "-1", "e", "\u{e9}", "\\", "ab"];
/// Header values that are numbers or almost (S9), and other values.
const NUMBER_VALUES: &[&str] = &[
    "5",
    "-5",
    "5.0",
    "50e-1",
    "0",
    "-0",
    "1e3",
    "1E3",
    "1e+3",
    "1.5e-3",
    "4.999999999999999999",
    "9007199254740992",
    "9007199254740993",
    "1e308",
    "1e400",
    "-1e400",
    " 5",
    "5 ",
    "+5",
    ".5",
    "5.",
    "05",
    "00",
    "0x10",
    "NaN",
    "inf",
    "",
    "-",
    "1e",
    "\u{665}",
];
/// Comparison operands (any finite JSON number; S9, S10).
const OPERANDS: &[&str] = &[
    "5",
    "5.0",
    "5e0",
    "-2.5",
    "0",
    "-0",
    "1e3",
    "1E+3",
    "0.0015",
    "9007199254740992",
    "9007199254740993",
    "1e308",
    "-1e308",
    "4.9999999999999999",
];

/// One pattern segment, `**` allowed when `deep` is still available.
fn segment(s: &mut impl Source, deep: &mut bool) -> String {
    match s.below(10) {
        0 | 1 => "*".to_owned(),
        2 if *deep => {
            *deep = false;
            "**".to_owned()
        }
        3 | 4 => format!("{}*{}", word(s, AFFIXES), word(s, AFFIXES)),
        _ => word(s, SEGMENTS).to_owned(),
    }
}

/// A valid pattern (seed "Patterns", S1–S6): 1–4 segments, at most one `**`, at most one `*`
/// per segment; far below the 256-byte limit (S7).
fn pattern(s: &mut impl Source) -> String {
    let mut deep = true;
    let n = 1 + s.below(4);
    let segments: Vec<String> = (0..n).map(|_| segment(s, &mut deep)).collect();
    segments.join(".")
}

/// A header value: segments joined by dots (a `*` in a value is ordinary, S6), or a number.
fn value(s: &mut impl Source) -> String {
    if s.chance(25) {
        return word(s, NUMBER_VALUES).to_owned();
    }
    let n = 1 + s.below(4);
    let segments: Vec<String> = (0..n)
        .map(|_| {
            if s.chance(10) {
                "*".to_owned()
            } else {
                word(s, SEGMENTS).to_owned()
            }
        })
        .collect();
    segments.join(".")
}

fn clause(s: &mut impl Source) -> Value {
    let header = word(s, HEADERS);
    match s.below(12) {
        0 | 1 => json!({"op": "=", "header": header, "values": [pattern(s)]}),
        2 => json!({"op": "!=", "header": header, "values": [pattern(s)]}),
        3 | 4 => {
            let n = 1 + s.below(4);
            let list: Vec<Value> = (0..n).map(|_| json!(pattern(s))).collect();
            json!({"op": "in", "header": header, "values": list})
        }
        5 => match s.below(3) {
            0 => json!({"op": "exists", "header": header, "values": []}),
            _ => json!({"op": "exists", "header": header}),
        },
        6 => match s.below(3) {
            0 => json!({"op": "missing", "header": header, "values": []}),
            _ => json!({"op": "missing", "header": header}),
        },
        _ => {
            let op = word(s, &["<", "<=", ">", ">="]);
            let n = crate::reference::json::parse(word(s, OPERANDS)).unwrap_or(Value::Null);
            json!({"op": op, "header": header, "values": [n]})
        }
    }
}

/// Whether `s` may be written bare in the text form.
fn bare(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'*' | b':' | b'/' | b'@')
        })
        && !matches!(s, "and" | "or" | "in" | "exists" | "missing")
}

/// Whitespace between tokens: usually one space, sometimes tabs, newlines or several.
fn gap(s: &mut impl Source) -> &'static str {
    word(s, &[" ", " ", " ", " ", "  ", "\t", "\n", "\r\n "])
}

/// A name or pattern in the text form: bare when allowed (or quoted anyway, sometimes; and
/// sometimes every character written as a `\\u` escape, surrogate pairs included).
fn atom(s: &mut impl Source, text: &str) -> String {
    if bare(text) && s.chance(80) {
        text.to_owned()
    } else if s.chance(15) {
        let mut out = String::from("\"");
        for unit in text.encode_utf16() {
            out.push_str(&format!("\\u{unit:04x}"));
        }
        out.push('"');
        out
    } else {
        Value::String(text.to_owned()).to_string()
    }
}

/// The text form of a JSON-form filter (the grammar of `stream-filters.md`, "Text form"),
/// written independently of the compiler's printer: random whitespace and optional quoting;
/// numbers keep their JSON spelling. `None` if `policy` is not a JSON-form filter.
pub fn text_of(policy: &Value, s: &mut impl Source) -> Option<String> {
    let groups = policy.get("groups")?.as_array()?;
    let mut out = String::new();
    for (g, group) in groups.iter().enumerate() {
        if g > 0 {
            out.push_str(gap(s));
            out.push_str("or");
            out.push_str(gap(s));
        }
        for (c, clause) in group.as_array()?.iter().enumerate() {
            if c > 0 {
                out.push_str(gap(s));
                out.push_str("and");
                out.push_str(gap(s));
            }
            let op = clause.get("op")?.as_str()?;
            out.push_str(&atom(s, clause.get("header")?.as_str()?));
            out.push_str(gap(s));
            out.push_str(op);
            let values = clause.get("values").and_then(Value::as_array);
            match op {
                "exists" | "missing" => {}
                "in" => {
                    out.push_str(gap(s));
                    out.push('[');
                    for (i, v) in values?.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                            out.push_str(gap(s));
                        }
                        out.push_str(&atom(s, v.as_str()?));
                    }
                    out.push(']');
                }
                "=" | "!=" => {
                    out.push_str(gap(s));
                    out.push_str(&atom(s, values?.first()?.as_str()?));
                }
                _ => {
                    out.push_str(gap(s));
                    out.push_str(&values?.first()?.to_string());
                }
            }
        }
    }
    Some(out)
}

/// A valid JSON-form filter: 1–3 groups of 1–4 clauses (limits: 8 and 8, S14).
pub fn policy(s: &mut impl Source) -> Value {
    let groups: Vec<Value> = (0..1 + s.below(3))
        .map(|_| Value::Array((0..1 + s.below(4)).map(|_| clause(s)).collect()))
        .collect();
    json!({ "groups": groups })
}

/// A value a pattern may match: each `**` replaced by zero to two segments, each other `*` by a
/// piece of text (possibly empty, possibly with a dot, which makes it miss).
fn fill(s: &mut impl Source, pattern: &str) -> String {
    let deep = match s.below(3) {
        0 => String::new(),
        1 => word(s, SEGMENTS).to_owned(),
        _ => format!("{}.{}", word(s, SEGMENTS), word(s, SEGMENTS)),
    };
    let mut out = pattern.replace("**", "\u{1}");
    while out.contains('*') {
        let piece = word(s, &["", "x", "eu", "1", "a.b", "*"]);
        out = out.replacen('*', &piece.replace('*', "\u{2}"), 1);
    }
    out.replace('\u{1}', &deep).replace('\u{2}', "*")
}

/// A valid filter (JSON form, or its text form a third of the time) and a message drawn from
/// the same small pools.
pub fn case(s: &mut impl Source) -> Case {
    let json_form = policy(s);
    let policy = if s.chance(33) {
        text_of(&json_form, s).map_or_else(|| json_form.clone(), Value::String)
    } else {
        json_form.clone()
    };
    let message = message(s, &json_form);
    let options = if s.chance(20) { json!({}) } else { Value::Null };
    Case {
        dialect: Dialect::Stream,
        options,
        policy,
        message,
    }
}

/// A message for a JSON-form filter: the headers it names, most with values from its own
/// patterns (stars filled) or numbers, plus a few others.
pub fn message(s: &mut impl Source, json_form: &Value) -> Value {
    let mut pool = Vec::new();
    harvest(json_form, &mut pool);
    let mut headers = Map::new();
    // Headers the filter names, with values from its own patterns (stars filled) or numbers.
    let named = json_form
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|c| c.get("header").and_then(Value::as_str));
    let named: Vec<&str> = named.collect();
    for name in named {
        if s.chance(60) {
            let picked = if pool.is_empty() {
                Value::Null
            } else {
                s.pick(&pool).clone()
            };
            let v = match picked {
                Value::String(p) if s.chance(60) => fill(s, &p),
                Value::Number(n) if s.chance(50) => n.to_string(),
                _ => value(s),
            };
            headers.insert(name.to_owned(), json!(v));
        }
    }
    for _ in 0..s.below(3) {
        headers.insert(word(s, HEADERS).to_owned(), json!(value(s)));
    }
    json!({ "headers": headers })
}

//! Reference evaluation of `sns` policies (`docs/dialects/sns-filters.md`), straight from the JSON.
//!
//! Written the plain way and sharing nothing with the compiler or the VM: its own JSON-number
//! grammar, wildcard matcher (a dynamic program), CIDR parsing (`std::net`), case folding, and
//! same-element semantics by enumerating every choice of element of every array of objects a
//! policy path passes through (rule 18, D-3). It assumes the policy is valid.

use super::ReferenceError;
use super::json::{self, Map, Number, Value};
use super::number::parse_number;
use std::net::{Ipv4Addr, Ipv6Addr};

type R<T> = Result<T, ReferenceError>;

fn err<T>(message: impl Into<String>) -> R<T> {
    Err(ReferenceError(message.into()))
}

/// A value the policy compares: a scalar of the attribute or body.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
}

/// Evaluates a (valid) policy against a message in the vector shape.
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> R<bool> {
    let body_scope = match options.get("scope").and_then(Value::as_str) {
        None | Some("MessageAttributes") => false,
        Some("MessageBody") => true,
        Some(other) => return err(format!("unknown scope {other}")),
    };
    let parsed;
    let policy = match policy {
        Value::String(text) => {
            parsed = json::parse(text).map_err(|e| ReferenceError(format!("policy text: {e}")))?;
            &parsed
        }
        other => other,
    };
    let Some(policy) = policy.as_object() else {
        return err("the policy is not an object");
    };
    // Rule 2, D-2.
    if policy.is_empty() {
        return Ok(true);
    }
    if body_scope {
        evaluate_body(policy, message)
    } else {
        evaluate_attributes(policy, message)
    }
}

// ---------------------------------------------------------------------------------------------
// Attribute scope (rules 5-12)

fn evaluate_attributes(policy: &Map, message: &Value) -> R<bool> {
    let empty = Map::new();
    let attributes = match message.get("attributes") {
        Some(Value::Object(a)) => a,
        _ => &empty,
    };
    let typed = |a: &Value| -> (String, String) {
        let t = a
            .get("Type")
            .or_else(|| a.get("DataType"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let v = a
            .get("Value")
            .or_else(|| a.get("StringValue"))
            .or_else(|| a.get("BinaryValue"))
            .and_then(Value::as_str)
            .unwrap_or("");
        (t.to_owned(), v.to_owned())
    };
    // Rule 12: does the message carry some attribute that is not Binary?
    let any_attribute = attributes
        .values()
        .any(|a| base_type(&typed(a).0) != "Binary");
    let lookup = |name: &str| -> Vec<Val> {
        match attributes.get(name) {
            None => Vec::new(),
            Some(a) => {
                let (t, v) = typed(a);
                attribute_values(&t, &v)
            }
        }
    };
    eval_object(policy, None, &lookup, any_attribute)
}

/// `String.x` → `String`, but `String.Array` stays.
fn base_type(t: &str) -> &str {
    if t == "String.Array" {
        return t;
    }
    match t.split_once('.') {
        Some((base, _)) => base,
        None => t,
    }
}

/// The values of one attribute (rules 6-8, D-6); empty means absent.
fn attribute_values(t: &str, v: &str) -> Vec<Val> {
    match base_type(t) {
        "String" => vec![Val::Str(v.to_owned())],
        "Number" => parse_number(v.trim()).map(Val::Num).into_iter().collect(),
        "String.Array" => match json::parse(v) {
            Ok(Value::Array(items)) => items.iter().filter_map(scalar).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A JSON scalar as a value (arrays and objects are none).
fn scalar(v: &Value) -> Option<Val> {
    match v {
        Value::String(s) => Some(Val::Str(s.clone())),
        Value::Number(n) => Some(Val::Num(n.as_str().parse::<f64>().ok()?)),
        Value::Bool(b) => Some(Val::Bool(*b)),
        Value::Null => Some(Val::Null),
        Value::Array(_) | Value::Object(_) => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Body scope (rules 14-21)

fn evaluate_body(policy: &Map, message: &Value) -> R<bool> {
    let body = match message.get("body") {
        None | Some(Value::Null) => return Ok(false),
        Some(Value::String(text)) => match json::parse(text) {
            Ok(v) => v,
            Err(_) => return Ok(false),
        },
        Some(other) => other.clone(),
    };
    // Rule 14: only an object body can match a non-empty policy.
    if !body.is_object() {
        return Ok(false);
    }
    let mut paths = Vec::new();
    policy_paths(policy, None, &mut paths);
    let start: Vec<(usize, Option<String>)> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (i, Some(p.clone())))
        .collect();
    // Rule 18: try every choice of one element per array of objects on the way.
    for world in worlds(&body, &start) {
        let lookup = |path: &str| -> Vec<Val> {
            world
                .iter()
                .filter(|(i, _)| paths.get(*i).is_some_and(|p| p == path))
                .map(|(_, v)| v.clone())
                .collect()
        };
        if eval_object(policy, None, &lookup, true)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn join(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        None => name.to_owned(),
        Some(p) => format!("{p}.{name}"),
    }
}

/// Every leaf path of the policy, flattened with `.` (rule 16).
fn policy_paths(object: &Map, prefix: Option<&str>, out: &mut Vec<String>) {
    for (name, value) in object {
        if name == "$or" {
            for branch in value.as_array().into_iter().flatten() {
                if let Some(b) = branch.as_object() {
                    policy_paths(b, prefix, out);
                }
            }
            continue;
        }
        match value {
            Value::Object(child) => policy_paths(child, Some(&join(prefix, name)), out),
            _ => {
                let p = join(prefix, name);
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
}

/// Flattens nested arrays (rule 17).
fn flatten<'a>(items: &'a [Value], out: &mut Vec<&'a Value>) {
    for item in items {
        match item {
            Value::Array(inner) => flatten(inner, out),
            other => out.push(other),
        }
    }
}

/// Every world: for each way of choosing one object element in every array of objects met before
/// the end of a path, the (path, value) pairs visible. `paths` holds each path's index and what is
/// left of it (`None`: the value here is at the path's end).
fn worlds(value: &Value, paths: &[(usize, Option<String>)]) -> Vec<Vec<(usize, Val)>> {
    let at_end: Vec<usize> = paths
        .iter()
        .filter(|(_, rest)| rest.is_none())
        .map(|(i, _)| *i)
        .collect();
    let going_on: Vec<(usize, String)> = paths
        .iter()
        .filter_map(|(i, rest)| rest.clone().map(|r| (*i, r)))
        .collect();
    match value {
        Value::Object(map) => {
            // Rule 19: an object is no value at a path's end.
            let mut acc: Vec<Vec<(usize, Val)>> = vec![Vec::new()];
            for (name, child) in map {
                let mut below = Vec::new();
                for (i, rest) in &going_on {
                    if rest == name {
                        below.push((*i, None));
                    } else if let Some(r) = rest
                        .strip_prefix(name.as_str())
                        .and_then(|r| r.strip_prefix('.'))
                    {
                        below.push((*i, Some(r.to_owned())));
                    }
                }
                if below.is_empty() {
                    continue;
                }
                let child_worlds = worlds(child, &below);
                let mut next = Vec::new();
                for a in &acc {
                    for c in &child_worlds {
                        let mut w = a.clone();
                        w.extend(c.iter().cloned());
                        next.push(w);
                    }
                }
                acc = next;
            }
            acc
        }
        Value::Array(items) => {
            let mut flat = Vec::new();
            flatten(items, &mut flat);
            let mut here = Vec::new();
            for item in &flat {
                if let Some(v) = scalar(item) {
                    for i in &at_end {
                        here.push((*i, v.clone()));
                    }
                }
            }
            let objects: Vec<&&Value> = flat.iter().filter(|v| v.is_object()).collect();
            if going_on.is_empty() || objects.is_empty() {
                return vec![here];
            }
            let below: Vec<(usize, Option<String>)> = going_on
                .iter()
                .map(|(i, r)| (*i, Some(r.clone())))
                .collect();
            let mut out = Vec::new();
            for object in objects {
                for mut w in worlds(object, &below) {
                    w.extend(here.iter().cloned());
                    out.push(w);
                }
            }
            out
        }
        other => match scalar(other) {
            Some(v) => vec![at_end.iter().map(|i| (*i, v.clone())).collect()],
            None => vec![Vec::new()],
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Policy evaluation (rules 1, 4, 22-34)

fn eval_object(
    object: &Map,
    prefix: Option<&str>,
    lookup: &dyn Fn(&str) -> Vec<Val>,
    any_attribute: bool,
) -> R<bool> {
    for (name, value) in object {
        let holds = if name == "$or" {
            let mut any = false;
            for branch in value.as_array().into_iter().flatten() {
                let b = branch
                    .as_object()
                    .ok_or_else(|| ReferenceError("$or branch is not an object".into()))?;
                if eval_object(b, prefix, lookup, any_attribute)? {
                    any = true;
                    break;
                }
            }
            any
        } else {
            match value {
                Value::Object(child) => {
                    eval_object(child, Some(&join(prefix, name)), lookup, any_attribute)?
                }
                Value::Array(alternatives) => {
                    let values = lookup(&join(prefix, name));
                    let mut any = false;
                    for alt in alternatives {
                        if alternative(alt, &values, any_attribute)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
                _ => return err(format!("{name}: not an array or object")),
            }
        };
        if !holds {
            return Ok(false);
        }
    }
    Ok(true)
}

fn num_of(n: &Number) -> R<f64> {
    n.as_str()
        .parse::<f64>()
        .map_err(|_| ReferenceError(format!("bad number {n}")))
}

fn strs(values: &[Val]) -> impl Iterator<Item = &str> {
    values.iter().filter_map(|v| match v {
        Val::Str(s) => Some(s.as_str()),
        _ => None,
    })
}

fn nums(values: &[Val]) -> impl Iterator<Item = f64> + '_ {
    values.iter().filter_map(|v| match v {
        Val::Num(x) => Some(*x),
        _ => None,
    })
}

/// Whether one alternative holds for the values of a key (`values` empty: absent).
fn alternative(alt: &Value, values: &[Val], any_attribute: bool) -> R<bool> {
    let present = !values.is_empty();
    Ok(match alt {
        Value::String(s) => strs(values).any(|v| v == s),
        Value::Number(n) => {
            let x = num_of(n)?;
            nums(values).any(|v| v == x)
        }
        Value::Bool(b) => values.contains(&Val::Bool(*b)),
        Value::Null => values.contains(&Val::Null),
        Value::Object(op) => {
            let (name, operand) = op
                .iter()
                .next()
                .ok_or_else(|| ReferenceError("empty operator".into()))?;
            let text = || {
                operand
                    .as_str()
                    .ok_or_else(|| ReferenceError(format!("{name}: not a string")))
            };
            match name.as_str() {
                "prefix" => {
                    let p = text()?;
                    strs(values).any(|v| v.starts_with(p))
                }
                "suffix" => {
                    let p = text()?;
                    strs(values).any(|v| v.ends_with(p))
                }
                "equals-ignore-case" => {
                    let p = text()?;
                    strs(values).any(|v| same_ignoring_case(v, p))
                }
                "wildcard" => {
                    let p = text()?;
                    strs(values).any(|v| wildcard(p, v))
                }
                "cidr" => {
                    let p = text()?;
                    strs(values).any(|v| in_cidr(p, v))
                }
                "numeric" => {
                    let terms = operand
                        .as_array()
                        .ok_or_else(|| ReferenceError("numeric: not an array".into()))?;
                    let mut ok_values = nums(values).collect::<Vec<f64>>();
                    for pair in terms.chunks(2) {
                        let op = pair.first().and_then(Value::as_str).unwrap_or("");
                        let n = match pair.get(1) {
                            Some(Value::Number(n)) => num_of(n)?,
                            _ => return err("numeric operand"),
                        };
                        ok_values.retain(|&x| match op {
                            "=" => x == n,
                            "<" => x < n,
                            "<=" => x <= n,
                            ">" => x > n,
                            ">=" => x >= n,
                            _ => false,
                        });
                    }
                    !ok_values.is_empty()
                }
                "exists" => match operand {
                    Value::Bool(true) => present,
                    // Rule 12 (attribute scope only; `any_attribute` is true in body scope).
                    Value::Bool(false) => !present && any_attribute,
                    _ => return err("exists operand"),
                },
                "anything-but" => present && !values.iter().any(|v| excluded(operand, v)),
                other => return err(format!("unknown operator {other}")),
            }
        }
        Value::Array(_) => return err("nested array alternative"),
    })
}

/// Whether `anything-but`'s operand excludes one value (rules 28, 29, 41, D-1).
fn excluded(operand: &Value, v: &Val) -> bool {
    let list: Vec<&Value> = match operand {
        Value::Array(items) => items.iter().collect(),
        Value::Object(op) => {
            let Some((name, inner)) = op.iter().next() else {
                return false;
            };
            let entries: Vec<&str> = match inner {
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
                other => other.as_str().into_iter().collect(),
            };
            let Val::Str(s) = v else {
                return false;
            };
            return entries.iter().any(|e| match name.as_str() {
                "prefix" => s.starts_with(e),
                "suffix" => s.ends_with(e),
                "equals-ignore-case" => same_ignoring_case(s, e),
                "wildcard" => wildcard(e, s),
                _ => false,
            });
        }
        single => vec![single],
    };
    list.iter().any(|x| match (x, v) {
        (Value::String(a), Val::Str(b)) => a == b,
        (Value::Number(a), Val::Num(b)) => num_of(a).is_ok_and(|a| a == *b),
        _ => false,
    })
}

// ---------------------------------------------------------------------------------------------
// Matchers written again

/// Simple (one-to-one) Unicode uppercase of one character: the full mapping when it is one
/// character; otherwise the character itself, except the Greek letters with ypogegrammeni whose
/// simple mapping is their titlecase form.
fn upper(c: char) -> char {
    let mapped: Vec<char> = c.to_uppercase().collect();
    if let [one] = mapped.as_slice() {
        return *one;
    }
    let u = u32::from(c);
    let shifted = match u {
        0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => u + 8,
        0x1FB3 | 0x1FC3 | 0x1FF3 => u + 9,
        _ => u,
    };
    char::from_u32(shifted).unwrap_or(c)
}

/// equals-ignore-case (rule 26; the dialect's decision: per-character simple uppercase).
fn same_ignoring_case(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().map(upper).collect();
    let b: Vec<char> = b.chars().map(upper).collect();
    a == b
}

/// The wildcard (rule 27) as a table: `m[i][j]` = the first `i` tokens match the first `j`
/// characters.
fn wildcard(pattern: &str, value: &str) -> bool {
    // Tokens: None = `*`, Some(c) = the literal character c.
    let mut tokens: Vec<Option<char>> = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => tokens.push(None),
            '\\' => tokens.push(chars.next()),
            other => tokens.push(Some(other)),
        }
    }
    let v: Vec<char> = value.chars().collect();
    let mut m = vec![vec![false; v.len() + 1]; tokens.len() + 1];
    if let Some(row) = m.get_mut(0)
        && let Some(cell) = row.get_mut(0)
    {
        *cell = true;
    }
    for i in 1..=tokens.len() {
        for j in 0..=v.len() {
            let prev = |a: usize, b: usize, m: &Vec<Vec<bool>>| {
                m.get(a).and_then(|r| r.get(b)).copied().unwrap_or(false)
            };
            let cell = match tokens.get(i - 1).copied().flatten() {
                None => prev(i - 1, j, &m) || (j > 0 && prev(i, j - 1, &m)),
                Some(c) => j > 0 && v.get(j - 1) == Some(&c) && prev(i - 1, j - 1, &m),
            };
            if let Some(slot) = m.get_mut(i).and_then(|r| r.get_mut(j)) {
                *slot = cell;
            }
        }
    }
    m.get(tokens.len())
        .and_then(|r| r.get(v.len()))
        .copied()
        .unwrap_or(false)
}

/// Whether the IP address `value` lies in the block `cidr` (rule 32): same family only.
fn in_cidr(cidr: &str, value: &str) -> bool {
    let Some((addr, bits)) = cidr.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u32>() else {
        return false;
    };
    if let (Ok(net), Ok(ip)) = (addr.parse::<Ipv4Addr>(), value.parse::<Ipv4Addr>()) {
        let mask = if bits == 0 {
            0
        } else {
            u32::MAX << (32 - bits.min(32))
        };
        return u32::from(net) & mask == u32::from(ip) & mask;
    }
    if let (Ok(net), Ok(ip)) = (addr.parse::<Ipv6Addr>(), value.parse::<Ipv6Addr>()) {
        let mask = if bits == 0 {
            0
        } else {
            u128::MAX << (128 - bits.min(128))
        };
        return u128::from(net) & mask == u128::from(ip) & mask;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_table() {
        assert!(wildcard("*ball", "baseball"));
        assert!(wildcard("Simple*Service", "SimpleService"));
        assert!(!wildcard("Simple*Service", "SimpleQueueServices"));
        assert!(wildcard("a\\*b", "a*b"));
        assert!(!wildcard("a\\*b", "axb"));
        assert!(wildcard("a\\\\b", "a\\b"));
        assert!(wildcard("*", ""));
        assert!(!wildcard("a*b*c", "aXXcYYc"));
    }

    #[test]
    fn cidr_by_value() {
        assert!(in_cidr("10.0.0.0/24", "10.0.0.255"));
        assert!(!in_cidr("10.0.0.0/24", "10.0.0.256"));
        assert!(in_cidr(
            "2001:db8:1234:1a00::/64",
            "2001:0db8:1234:1a00:0000:0000:0000:0001"
        ));
        assert!(!in_cidr("10.0.0.0/8", "::ffff:10.0.0.1"));
        assert!(in_cidr("0.0.0.0/0", "1.2.3.4"));
    }

    #[test]
    fn case_and_numbers() {
        assert!(same_ignoring_case("Tennis", "tENNIS"));
        assert!(!same_ignoring_case("ß", "SS"));
        assert_eq!(parse_number("3.015e2"), Some(301.5));
        assert_eq!(parse_number("01"), None);
        assert_eq!(parse_number("1e400"), None);
    }
}

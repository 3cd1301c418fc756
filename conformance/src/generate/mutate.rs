//! Mutations of valid policies, for the validation check: the compiler and the reference's own
//! validation must accept and reject the same policies. A generated (valid) policy is changed in
//! one to three places — a node replaced by a value from a pool of troublemakers (wrong types,
//! empty lists, bad patterns, numbers beyond binary64, operator names), a member removed, renamed
//! or added, a list grown past a limit, a string edited, a value wrapped in a list or an object —
//! so that most results are invalid in some way and some stay valid. The stream text form is
//! edited as text.

use super::Source;
use crate::json;
use crate::reference::json::{Map, Number, Value};

/// Member names the dialects give meaning to, and a few they do not.
const NAMES: [&str; 30] = [
    "op",
    "header",
    "values",
    "value",
    "exp",
    "key",
    "groups",
    "operatorType",
    "advancedFilters",
    "includedEventTypes",
    "subjectBeginsWith",
    "isSubjectCaseSensitive",
    "enableAdvancedFilteringOnArrays",
    "prefix",
    "suffix",
    "anything-but",
    "numeric",
    "exists",
    "equals-ignore-case",
    "wildcard",
    "cidr",
    "$or",
    "AND",
    "in",
    "startsWith",
    "x",
    "a.b",
    "",
    "Prefix",
    "extra",
];

/// Strings that break one rule or another (or none).
const STRINGS: [&str; 26] = [
    "",
    "x",
    "*",
    "**",
    "a*b*c",
    "a**",
    "**.**",
    "eu-*",
    "a\\b",
    "a\\*b",
    "a**b",
    "10.0.0.0/24",
    "10.0.0.0/33",
    "10.0.0.256/8",
    "::1/128",
    "1.2.3.4",
    "<",
    ">=",
    "=",
    "AND",
    "NOT",
    "exists",
    "in",
    "StringIn",
    "NumberInRange",
    "All",
];

/// Number texts: ordinary, edges, beyond binary64.
const NUMBERS: [&str; 9] = [
    "0", "1", "-1", "1.5", "-0", "1e400", "-1e400", "5e-324", "1e2",
];

/// A value from the pool.
fn pooled(s: &mut impl Source) -> Value {
    match s.below(12) {
        0 => Value::Null,
        1 => Value::Bool(s.chance(50)),
        2 | 3 => number(s),
        4..=6 => Value::String((*s.pick(&STRINGS)).to_owned()),
        7 => Value::String("x".repeat(*s.pick(&[256usize, 257, 512, 513]))),
        8 => json!([]),
        9 => json!({}),
        10 => match s.below(6) {
            0 => json!(["x"]),
            1 => json!([1, 2]),
            2 => json!([[1, 2]]),
            3 => json!([[2, 1]]),
            4 => json!(["=", 5]),
            _ => json!([">", 5, "<", 1]),
        },
        _ => match s.below(6) {
            0 => json!({"prefix": "x"}),
            1 => json!({"exists": true}),
            2 => json!({"op": "exists", "header": "h"}),
            3 => json!({"key": "k", "op": "exists"}),
            4 => json!({"operatorType": "StringIn", "key": "data.k", "values": ["x"]}),
            _ => json!({"anything-but": {"prefix": ""}}),
        },
    }
}

/// A number from the pool (every entry is JSON number text).
fn number(s: &mut impl Source) -> Value {
    let text = *s.pick(&NUMBERS);
    Number::from_text(text).map_or(Value::Null, Value::Number)
}

/// The paths of every node of `value` (each a list of steps: member names or indices).
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Member(String),
    Index(usize),
}

fn paths(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(at.clone());
    match value {
        Value::Object(members) => {
            for (name, v) in members {
                at.push(Step::Member(name.clone()));
                paths(v, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                at.push(Step::Index(i));
                paths(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn node_at<'a>(value: &'a Value, path: &[Step]) -> Option<&'a Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(value);
    };
    let child = match (first, value) {
        (Step::Member(name), Value::Object(members)) => members.get(name)?,
        (Step::Index(i), Value::Array(items)) => items.get(*i)?,
        _ => return None,
    };
    node_at(child, rest)
}

fn node_mut<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(value);
    };
    let child = match (first, value) {
        (Step::Member(name), Value::Object(members)) => members.get_mut(name)?,
        (Step::Index(i), Value::Array(items)) => items.get_mut(*i)?,
        _ => return None,
    };
    node_mut(child, rest)
}

/// Edits a string: a character of the pool inserted, a character removed, or a long run added.
fn edit_string(text: &str, s: &mut impl Source) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = s.below(u32::try_from(chars.len() + 1).unwrap_or(u32::MAX)) as usize;
    let (head, tail) = chars.split_at(at.min(chars.len()));
    let head: String = head.iter().collect();
    let tail: String = tail.iter().collect();
    match s.below(4) {
        0 => format!(
            "{head}{}{tail}",
            s.pick(&["*", ".", "**", "\\", "/", "-", "\"", " "])
        ),
        1 => format!("{head}{}", tail.chars().skip(1).collect::<String>()),
        2 => format!("{head}{}{tail}", "y".repeat(300)),
        _ => String::new(),
    }
}

/// Edits stream text-form policy text: a token inserted, a stretch removed, or clauses repeated.
fn edit_text(text: &str, s: &mut impl Source) -> String {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let at = *s.pick(&boundaries);
    let (head, tail) = text.split_at(at);
    match s.below(4) {
        0 => {
            let token = s.pick(&[
                " and ", " or ", " = ", " != ", "[", "]", ",", "\"", "*", " ** ", " 1e400 ",
                " in [] ", " exists ", " < ", " \"5\" ", "é", " x ",
            ]);
            format!("{head}{token}{tail}")
        }
        1 => {
            let end = *s.pick(&boundaries);
            match text.get(at.min(end)..at.max(end)) {
                Some(cut) => text.replacen(cut, "", 1),
                None => text.to_owned(),
            }
        }
        2 => {
            let n = *s.pick(&[2usize, 8, 9]);
            vec![text; n].join(*s.pick(&[" or ", " and "]))
        }
        _ => edit_string(text, s),
    }
}

/// List lengths and member counts on either side of the dialects' limits (sns 5 keys and 150
/// combinations, basaltic 20 names and 50 alternatives, eventgrid 25 filters and values, stream 8
/// groups, 8 clauses and 32 `in` entries).
const SIZES: [usize; 16] = [2, 5, 6, 8, 9, 20, 21, 25, 26, 32, 33, 50, 51, 75, 150, 151];

/// One mutation of `policy`, in place.
fn mutate_once(policy: &mut Value, s: &mut impl Source) {
    if let Value::String(text) = policy {
        *text = edit_text(text, s);
        return;
    }
    let mut all = Vec::new();
    paths(policy, &mut Vec::new(), &mut all);
    // Strings (names, patterns, operands) are edited more often than their share of the nodes.
    let strings: Vec<Vec<Step>> = all
        .iter()
        .filter(|p| node_at(policy, p).is_some_and(Value::is_string))
        .cloned()
        .collect();
    if !strings.is_empty() && s.chance(25) {
        let path = s.pick(&strings).clone();
        if let Some(Value::String(text)) = node_mut(policy, &path) {
            *text = if s.chance(50) {
                edit_string(text, s)
            } else {
                (*s.pick(&STRINGS)).to_owned()
            };
        }
        return;
    }
    // Grow or shrink a list or an object to a size near a limit.
    let containers: Vec<Vec<Step>> = all
        .iter()
        .filter(|p| node_at(policy, p).is_some_and(|v| v.is_array() || v.is_object()))
        .cloned()
        .collect();
    if !containers.is_empty() && s.chance(20) {
        let path = s.pick(&containers).clone();
        let size = *s.pick(&SIZES);
        match node_mut(policy, &path) {
            Some(Value::Array(items)) if !items.is_empty() => {
                let copies: Vec<Value> = items.iter().cycle().take(size).cloned().collect();
                *items = copies;
            }
            Some(Value::Object(members)) if !members.is_empty() => {
                let first: Vec<(String, Value)> = members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let mut grown = Map::new();
                for i in 0..size {
                    if let Some((name, value)) = first.get(i % first.len()) {
                        let name = if i < first.len() {
                            name.clone()
                        } else {
                            format!("{name}{i}")
                        };
                        grown.insert(name, value.clone());
                    }
                }
                *members = grown;
            }
            _ => {}
        }
        return;
    }
    let path = s.pick(&all).clone();
    let Some(node) = node_mut(policy, &path) else {
        return;
    };
    match s.below(8) {
        // Replace the node.
        0 | 1 => *node = pooled(s),
        // Remove a member or an element.
        2 => match node {
            Value::Object(members) if !members.is_empty() => {
                let names: Vec<String> = members.keys().cloned().collect();
                let name = s.pick(&names).clone();
                members.remove(&name);
            }
            Value::Array(items) if !items.is_empty() => {
                let i = s.below(u32::try_from(items.len()).unwrap_or(u32::MAX)) as usize;
                if i < items.len() {
                    items.remove(i);
                }
            }
            other => *other = pooled(s),
        },
        // Add a member, or grow a list (past a limit, now and then).
        3 => match node {
            Value::Object(members) => {
                members.insert((*s.pick(&NAMES)).to_owned(), pooled(s));
            }
            Value::Array(items) => {
                let n = *s.pick(&[1usize, 7, 20, 26, 33, 51, 151]);
                let copy = match items.first() {
                    Some(first) if s.chance(70) => first.clone(),
                    _ => pooled(s),
                };
                items.extend(std::iter::repeat_n(copy, n));
            }
            other => *other = pooled(s),
        },
        // Rename a member.
        4 => {
            if let Value::Object(members) = node
                && !members.is_empty()
            {
                let names: Vec<String> = members.keys().cloned().collect();
                let old = s.pick(&names).clone();
                if let Some(v) = members.remove(&old) {
                    members.insert((*s.pick(&NAMES)).to_owned(), v);
                }
            }
        }
        // Edit a string or a number.
        5 => match node {
            Value::String(text) => *text = edit_string(text, s),
            Value::Number(_) => {
                *node = number(s);
            }
            other => *other = pooled(s),
        },
        // Wrap the node in a list or an object.
        6 => {
            let inner = std::mem::take(node);
            *node = if s.chance(50) {
                Value::Array(vec![inner])
            } else {
                Value::Object(Map::from_iter([((*s.pick(&NAMES)).to_owned(), inner)]))
            };
        }
        // Replace the node by a copy of another node of the policy.
        _ => {
            let source_path = s.pick(&all).clone();
            let copy = node_at(policy, &source_path).cloned();
            if let (Some(copy), Some(target)) = (copy, node_mut(policy, &path)) {
                *target = copy;
            }
        }
    }
}

/// `policy` changed in one to three places (one more often than not; see the module
/// documentation).
pub fn policy(policy: &Value, s: &mut impl Source) -> Value {
    let mut out = policy.clone();
    let times = match s.below(10) {
        0..=5 => 1,
        6..=8 => 2,
        _ => 3,
    };
    for _ in 0..times {
        mutate_once(&mut out, s);
    }
    out
}

/// Options now and then replaced by other options, valid or not, for any dialect.
pub fn options(options: &Value, s: &mut impl Source) -> Value {
    if !s.chance(10) {
        return options.clone();
    }
    match s.below(10) {
        0 => Value::Null,
        1 => json!({}),
        2 => json!({"scope": "MessageBody"}),
        3 => json!({"scope": "Body"}),
        4 => json!({"schema": "CloudEventSchemaV1_0"}),
        5 => json!({"max_depth": 0}),
        6 => json!({"max_depth": 63}),
        7 => json!({"max_depth": 2.0}),
        8 => json!([]),
        _ => json!({"nope": 1}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Rng;

    #[test]
    fn mutations_change_policies_and_stay_small() {
        let mut rng = Rng::new(3);
        let base = json!({"a": ["x", {"prefix": "y"}], "b": {"c": [1]}});
        let mut changed = 0;
        for _ in 0..500 {
            let m = policy(&base, &mut rng);
            changed += usize::from(m != base);
            assert!(m.to_string().len() < 64 * 1024, "{m}");
        }
        assert!(changed > 400, "{changed}");
        let text = Value::String("a = x and b exists".to_owned());
        assert!((0..50).any(|_| policy(&text, &mut rng) != text));
    }
}

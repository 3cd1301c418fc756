//! Reference validation and evaluation of `expr` policies (`docs/dialects/expr-filters.md`),
//! straight from the JSON.
//!
//! Validation follows E1-E11 node by node in policy order. The policy tree is walked as written:
//! `AND` is "all", `OR` "any", `NOT` "not the one operand"; a condition holds when any value of its
//! header satisfies it (headers are a multimap), and every condition but `exists` is false on a
//! missing header. Validation bounds the depth (E2); the walk still refuses trees deeper than
//! [`MAX_WALK_DEPTH`] rather than trusting that.

use super::json::{Map, Value};
use super::{Codes, ReferenceError, Rejection, options, pointer};

/// The deepest tree the walk follows (well above any `max_depth` validation accepts).
pub const MAX_WALK_DEPTH: usize = 256;

/// E1, E3-E11.
const INVALID: &str = "EXPR_INVALID_FILTER";
/// E2.
const TOO_DEEP: &str = "EXPR_TOO_DEEP";

/// The codes of policy text errors.
pub const CODES: Codes = Codes {
    invalid: INVALID,
    limit: INVALID,
};

/// E2: the default `max_depth`.
const DEFAULT_MAX_DEPTH: u64 = 32;
/// The largest `max_depth` the option takes (the README's ceiling: every tree that deep still
/// fits the 128 levels policy text may nest).
const MAX_DEPTH_CEILING: u64 = 62;

fn reject<T>(code: &'static str, at: &str, message: impl Into<String>) -> Result<T, Rejection> {
    Err(Rejection::new(code, at, message))
}

/// E2: `{"max_depth": N}`, N a non-negative integer written as one (no fraction, exponent or
/// sign), at most [`MAX_DEPTH_CEILING`].
fn max_depth(options: &Value) -> Result<u64, Rejection> {
    let members = options::members(options, &["max_depth"])?;
    let Some(value) = members.and_then(|m| m.get("max_depth")) else {
        return Ok(DEFAULT_MAX_DEPTH);
    };
    let n = value
        .as_number()
        .map(|n| n.as_str())
        .filter(|t| t.chars().all(|c| c.is_ascii_digit()))
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|n| *n <= MAX_DEPTH_CEILING);
    n.ok_or_else(|| {
        options::invalid(
            "/max_depth",
            format!("`max_depth` is an integer from 0 to {MAX_DEPTH_CEILING}, found {value}"),
        )
    })
}

/// Checks options and policy (E1-E11): the first violation in policy order.
pub fn validate(options: &Value, policy: &Value) -> Result<(), Rejection> {
    let max = max_depth(options)?;
    if policy.is_array() {
        return reject(INVALID, "", "a top-level array is not a policy (E11)");
    }
    check_node(policy, "", 0, max)
}

/// One node; `above` expressions enclose it.
fn check_node(node: &Value, at: &str, above: u64, max: u64) -> Result<(), Rejection> {
    let Value::Object(members) = node else {
        return reject(
            INVALID,
            at,
            "a node is a condition or an expression object (E9)",
        );
    };
    match (members.contains_key("exp"), members.contains_key("key")) {
        (true, true) => reject(INVALID, at, "a node with both `exp` and `key` (E9)"),
        (true, false) => check_expression(members, at, above, max),
        (false, true) => check_condition(members, at),
        (false, false) => reject(INVALID, at, "a node needs `exp` or `key` (E9)"),
    }
}

/// E2, E3, E9, E10.
fn check_expression(members: &Map, at: &str, above: u64, max: u64) -> Result<(), Rejection> {
    let items = members.get("exp").and_then(Value::as_array);
    // E2: this expression is at depth `above + 1`.
    if items.is_some() && above >= max {
        return reject(
            TOO_DEEP,
            at,
            format!("expressions nest deeper than max_depth {max} (E2)"),
        );
    }
    if let Some(name) = members.keys().find(|n| *n != "op" && *n != "exp") {
        return reject(
            INVALID,
            &pointer::push(at, name),
            format!("an expression has exactly `op` and `exp`, not `{name}` (E9)"),
        );
    }
    let op = match members.get("op") {
        Some(Value::String(op)) if ["AND", "OR", "NOT"].contains(&op.as_str()) => op.as_str(),
        Some(other) => {
            return reject(
                INVALID,
                &pointer::push(at, "op"),
                format!("an expression's op is AND, OR or NOT, not {other} (E5, E9, E10)"),
            );
        }
        None => return reject(INVALID, at, "an expression needs `op` (E9)"),
    };
    let exp_at = pointer::push(at, "exp");
    let Some(items) = items else {
        return reject(INVALID, &exp_at, "`exp` is an array, even for NOT (E10)");
    };
    if op == "NOT" && items.len() != 1 {
        return reject(INVALID, &exp_at, "NOT takes exactly one element");
    }
    if items.is_empty() {
        return reject(INVALID, &exp_at, "an empty AND or OR is invalid (E3)");
    }
    for (i, item) in items.iter().enumerate() {
        check_node(item, &pointer::index(&exp_at, i), above + 1, max)?;
    }
    Ok(())
}

/// E1, E4, E6-E9.
fn check_condition(members: &Map, at: &str) -> Result<(), Rejection> {
    if let Some(name) = members
        .keys()
        .find(|n| !["key", "op", "value"].contains(&n.as_str()))
    {
        return reject(
            INVALID,
            &pointer::push(at, name),
            format!("a condition has `key`, `op` and `value`, not `{name}` (E9)"),
        );
    }
    match members.get("key") {
        Some(Value::String(k)) if !k.is_empty() => {}
        _ => {
            return reject(
                INVALID,
                &pointer::push(at, "key"),
                "`key` is a non-empty string (E8)",
            );
        }
    }
    let op = match members.get("op") {
        None | Some(Value::Null) => "in",
        Some(Value::String(op))
            if [
                "startsWith",
                "startWith",
                "endsWith",
                "contains",
                "in",
                "exists",
            ]
            .contains(&op.as_str()) =>
        {
            op.as_str()
        }
        Some(other) => {
            return reject(
                INVALID,
                &pointer::push(at, "op"),
                format!("unknown condition op {other} (E1, E5)"),
            );
        }
    };
    let value_at = pointer::push(at, "value");
    match (op, members.get("value")) {
        // E7, E9.
        ("exists", None) => Ok(()),
        ("exists", Some(_)) => reject(INVALID, &value_at, "`exists` takes no `value` (E7)"),
        // E4.
        ("in", Some(Value::Array(items))) if !items.is_empty() => {
            match items.iter().position(|v| !v.is_string()) {
                Some(i) => reject(
                    INVALID,
                    &pointer::index(&value_at, i),
                    "`in` entries are strings (E4)",
                ),
                None => Ok(()),
            }
        }
        ("in", None) => reject(INVALID, at, "`in` needs a non-empty array of strings (E4)"),
        ("in", Some(_)) => reject(
            INVALID,
            &value_at,
            "`in` takes a non-empty array of strings (E4)",
        ),
        // E7.
        (_, Some(Value::String(_))) => Ok(()),
        (_, None) => reject(INVALID, at, format!("`{op}` needs a string `value` (E7)")),
        (_, Some(_)) => reject(INVALID, &value_at, format!("`{op}` takes one string (E7)")),
    }
}

/// Evaluates a valid policy against `{"headers": {NAME: VALUE}}`, VALUE a string or an array of
/// strings.
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let _ = options;
    let headers = read_headers(message)?;
    eval(policy, &headers, 0)
}

/// The message's headers as (name, values) pairs.
fn read_headers(message: &Value) -> Result<Vec<(String, Vec<String>)>, ReferenceError> {
    let mut out = Vec::new();
    let Some(h) = message.get("headers") else {
        return Ok(out);
    };
    if h.is_null() {
        return Ok(out);
    }
    let h = h
        .as_object()
        .ok_or_else(|| ReferenceError::failed("headers is not an object"))?;
    for (name, value) in h {
        let values = match value {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => {
                let mut vs = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => vs.push(s.clone()),
                        _ => {
                            return Err(ReferenceError::failed(format!(
                                "header {name}: not a string"
                            )));
                        }
                    }
                }
                vs
            }
            _ => return Err(ReferenceError::failed(format!("header {name}: bad value"))),
        };
        out.push((name.clone(), values));
    }
    Ok(out)
}

fn eval(
    node: &Value,
    headers: &[(String, Vec<String>)],
    depth: usize,
) -> Result<bool, ReferenceError> {
    if depth > MAX_WALK_DEPTH {
        return Err(ReferenceError::failed("policy nested too deep"));
    }
    let obj = node
        .as_object()
        .ok_or_else(|| ReferenceError::failed("node is not an object"))?;
    if let Some(exp) = obj.get("exp") {
        let items = exp
            .as_array()
            .ok_or_else(|| ReferenceError::failed("exp is not an array"))?;
        let op = obj.get("op").and_then(Value::as_str).unwrap_or("");
        return match op {
            "AND" => {
                for item in items {
                    if !eval(item, headers, depth + 1)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            "OR" => {
                for item in items {
                    if eval(item, headers, depth + 1)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            "NOT" => match items.as_slice() {
                [only] => Ok(!eval(only, headers, depth + 1)?),
                _ => Err(ReferenceError::failed("NOT needs one operand")),
            },
            other => Err(ReferenceError::failed(format!(
                "unknown expression op {other}"
            ))),
        };
    }
    let key = obj
        .get("key")
        .and_then(Value::as_str)
        .ok_or_else(|| ReferenceError::failed("condition without key"))?;
    // Every value of the header, from every entry with that name.
    let values: Vec<&str> = headers
        .iter()
        .filter(|(name, _)| name == key)
        .flat_map(|(_, vs)| vs.iter().map(String::as_str))
        .collect();
    let present = headers.iter().any(|(name, _)| name == key);
    let op = match obj.get("op") {
        None | Some(Value::Null) => "in",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(ReferenceError::failed("op is not a string")),
    };
    let operand = || {
        obj.get("value")
            .and_then(Value::as_str)
            .ok_or_else(|| ReferenceError::failed(format!("{op}: value is not a string")))
    };
    Ok(match op {
        "exists" => present,
        "startsWith" | "startWith" => {
            let p = operand()?;
            values.iter().any(|v| v.starts_with(p))
        }
        "endsWith" => {
            let s = operand()?;
            values.iter().any(|v| v.ends_with(s))
        }
        "contains" => {
            let s = operand()?;
            values.iter().any(|v| v.contains(s))
        }
        "in" => {
            let list = obj
                .get("value")
                .and_then(Value::as_array)
                .ok_or_else(|| ReferenceError::failed("in: value is not an array"))?;
            values
                .iter()
                .any(|v| list.iter().any(|x| x.as_str() == Some(*v)))
        }
        other => {
            return Err(ReferenceError::failed(format!(
                "unknown condition op {other}"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    #[test]
    fn multi_valued_header_any_value() {
        let p = json!({"key": "h", "op": "endsWith", "value": "b"});
        let m = json!({"headers": {"h": ["a", "xb"]}});
        assert_eq!(evaluate(&Value::Null, &p, &m), Ok(true));
        let not = json!({"op": "NOT", "exp": [p]});
        assert_eq!(evaluate(&Value::Null, &not, &m), Ok(false));
        let missing = json!({"headers": {}});
        assert_eq!(evaluate(&Value::Null, &not, &missing), Ok(true));
    }

    #[test]
    fn refuses_unbounded_depth() {
        let mut v = json!({"key": "a", "op": "exists"});
        for _ in 0..(MAX_WALK_DEPTH + 2) {
            v = json!({"op": "NOT", "exp": [v]});
        }
        assert!(evaluate(&Value::Null, &v, &json!({})).is_err());
    }
}

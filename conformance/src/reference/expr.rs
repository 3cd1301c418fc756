//! Reference evaluation of `expr` policies (`docs/dialects/expr-filters.md`), straight from the
//! JSON.
//!
//! The policy tree is walked as written: `AND` is "all", `OR` "any", `NOT` "not the one operand";
//! a condition holds when any value of its header satisfies it (headers are a multimap), and every
//! condition but `exists` is false on a missing header. The compiler validated the policy, which
//! bounds its depth; the walk still refuses trees deeper than [`MAX_WALK_DEPTH`] rather than
//! trusting that.

use super::ReferenceError;
use super::json::Value;

/// The deepest tree the walk follows (well above any `max_depth` the compiler accepts).
pub const MAX_WALK_DEPTH: usize = 256;

/// Evaluates a (valid) policy against `{"headers": {NAME: VALUE}}`, VALUE a string or an array
/// of strings.
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
        .ok_or_else(|| ReferenceError("headers is not an object".into()))?;
    for (name, value) in h {
        let values = match value {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => {
                let mut vs = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => vs.push(s.clone()),
                        _ => return Err(ReferenceError(format!("header {name}: not a string"))),
                    }
                }
                vs
            }
            _ => return Err(ReferenceError(format!("header {name}: bad value"))),
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
        return Err(ReferenceError("policy nested too deep".into()));
    }
    let obj = node
        .as_object()
        .ok_or_else(|| ReferenceError("node is not an object".into()))?;
    if let Some(exp) = obj.get("exp") {
        let items = exp
            .as_array()
            .ok_or_else(|| ReferenceError("exp is not an array".into()))?;
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
                _ => Err(ReferenceError("NOT needs one operand".into())),
            },
            other => Err(ReferenceError(format!("unknown expression op {other}"))),
        };
    }
    let key = obj
        .get("key")
        .and_then(Value::as_str)
        .ok_or_else(|| ReferenceError("condition without key".into()))?;
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
        Some(_) => return Err(ReferenceError("op is not a string".into())),
    };
    let operand = || {
        obj.get("value")
            .and_then(Value::as_str)
            .ok_or_else(|| ReferenceError(format!("{op}: value is not a string")))
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
                .ok_or_else(|| ReferenceError("in: value is not an array".into()))?;
            values
                .iter()
                .any(|v| list.iter().any(|x| x.as_str() == Some(*v)))
        }
        other => return Err(ReferenceError(format!("unknown condition op {other}"))),
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

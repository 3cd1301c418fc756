//! Reference validation and evaluation of `basaltic` policies
//! (`docs/dialects/basaltic-filters.md`), straight from the JSON.

use super::json::{Map, Number, Value};
use super::number::{js_number_text, parse_number};
use super::{Codes, ReferenceError, Rejection, options, pointer};

/// B-12: every violation has this one code.
const CODE: &str = "NOTIFICATION_INVALID_FILTER_POLICY";

/// The codes of policy text errors (B-12: one code for all).
pub const CODES: Codes = Codes {
    invalid: CODE,
    limit: CODE,
};

/// B-12: most attribute names in a policy.
const MAX_NAMES: usize = 20;
/// B-12: most alternatives of one attribute, and most `anything-but` values.
const MAX_LIST: usize = 50;

fn reject<T>(at: &str, message: impl Into<String>) -> Result<T, Rejection> {
    Err(Rejection::new(CODE, at, message))
}

/// Checks a policy against B-11 and B-12 (the dialect takes no options).
pub fn validate(options: &Value, policy: &Value) -> Result<(), Rejection> {
    options::members(options, &[])?;
    let Value::Object(names) = policy else {
        return reject("", "a filter policy is a JSON object");
    };
    for (i, (name, alternatives)) in names.iter().enumerate() {
        let at = pointer::push("", name);
        if i == MAX_NAMES {
            return reject(&at, format!("more than {MAX_NAMES} attribute names"));
        }
        // B-11: no `$or`.
        if name == "$or" {
            return reject(&at, "`$or` is not supported");
        }
        let Value::Array(items) = alternatives else {
            return reject(
                &at,
                "the value of an attribute name is an array of alternatives",
            );
        };
        list_length(items, &at, "the alternatives")?;
        for (j, item) in items.iter().enumerate() {
            alternative(item, &pointer::index(&at, j))?;
        }
    }
    Ok(())
}

/// B-12: a list of 1 to 50 entries; too long points at the first entry past the limit.
fn list_length(items: &[Value], at: &str, what: &str) -> Result<(), Rejection> {
    if items.is_empty() {
        return reject(at, format!("{what} must not be empty"));
    }
    if items.len() > MAX_LIST {
        return reject(
            &pointer::index(at, MAX_LIST),
            format!("{what}: more than {MAX_LIST} entries"),
        );
    }
    Ok(())
}

/// B-6 DECISION: a policy number has a canonical text only when it is finite as a binary64.
fn finite_number(n: &Number, at: &str) -> Result<(), Rejection> {
    match n.as_str().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(()),
        _ => reject(at, format!("the number {n} is not finite as a binary64")),
    }
}

fn alternative(item: &Value, at: &str) -> Result<(), Rejection> {
    match item {
        Value::String(_) => Ok(()),
        Value::Number(n) => finite_number(n, at),
        Value::Object(op) => {
            let mut members = op.iter();
            let (Some((name, operand)), None) = (members.next(), members.next()) else {
                return reject(
                    at,
                    format!(
                        "an operator object holds exactly one operator, found {}",
                        op.len()
                    ),
                );
            };
            operator(name, operand, &pointer::push(at, name))
        }
        // B-12: `null`, `true`, arrays are invalid alternatives.
        Value::Null | Value::Bool(_) | Value::Array(_) => reject(
            at,
            "an alternative is a string, a number or an operator object",
        ),
    }
}

fn operator(name: &str, operand: &Value, at: &str) -> Result<(), Rejection> {
    match name {
        // B-7, B-12.
        "prefix" | "suffix" => match operand {
            Value::String(s) if !s.is_empty() => Ok(()),
            _ => reject(at, format!("`{name}` takes a non-empty string")),
        },
        // B-9, B-12.
        "exists" => match operand {
            Value::Bool(_) => Ok(()),
            _ => reject(at, "`exists` takes true or false"),
        },
        // B-8, B-11, B-12.
        "anything-but" => match operand {
            Value::Array(items) => {
                list_length(items, at, "the `anything-but` values")?;
                for (i, item) in items.iter().enumerate() {
                    excluded_value(item, &pointer::index(at, i))?;
                }
                Ok(())
            }
            single => excluded_value(single, at),
        },
        // B-10, B-12.
        "numeric" => {
            let Value::Array(items) = operand else {
                return reject(at, "`numeric` takes an array of operator/number pairs");
            };
            if items.is_empty() || items.len() % 2 != 0 {
                return reject(
                    at,
                    "`numeric` takes one or more complete operator/number pairs",
                );
            }
            for (i, pair) in items.chunks(2).enumerate() {
                let op_at = pointer::index(at, 2 * i);
                match pair.first() {
                    Some(Value::String(op))
                        if ["=", "<", "<=", ">", ">="].contains(&op.as_str()) => {}
                    _ => return reject(&op_at, "a numeric operator is one of =, <, <=, >, >="),
                }
                let n_at = pointer::index(at, 2 * i + 1);
                match pair.get(1) {
                    Some(Value::Number(n)) => finite_number(n, &n_at)?,
                    _ => return reject(&n_at, "a numeric operand is a JSON number"),
                }
            }
            Ok(())
        }
        // B-11: wildcards, equals-ignore-case, cidr, ... are not supported; unknown operators
        // are invalid (B-12).
        other => reject(at, format!("the operator `{other}` is not supported")),
    }
}

/// B-8: an `anything-but` value is a string or a (finite) number; B-11: no operator inside.
fn excluded_value(value: &Value, at: &str) -> Result<(), Rejection> {
    match value {
        Value::String(_) => Ok(()),
        Value::Number(n) => finite_number(n, at),
        _ => reject(at, "`anything-but` values are strings or numbers"),
    }
}

/// Evaluates a valid policy against `{"attributes": {NAME: {"type", "value"}}}`.
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let _ = options;
    let policy = policy
        .as_object()
        .ok_or_else(|| ReferenceError::failed("policy is not an object"))?;
    let empty = Map::new();
    let attributes = match message.get("attributes") {
        Some(Value::Object(a)) => a,
        _ => &empty,
    };
    // B-1: every named attribute must match (AND); any alternative may (OR).
    for (name, alternatives) in policy {
        let value: Option<&str> = attributes
            .get(name)
            .and_then(|a| super::attribute_fields(a).1);
        let alternatives = alternatives
            .as_array()
            .ok_or_else(|| ReferenceError::failed(format!("{name}: not an array")))?;
        let mut any = false;
        for alt in alternatives {
            if alternative_holds(alt, value)? {
                any = true;
                break;
            }
        }
        if !any {
            return Ok(false);
        }
    }
    Ok(true)
}

fn alternative_holds(alt: &Value, value: Option<&str>) -> Result<bool, ReferenceError> {
    Ok(match alt {
        Value::String(s) => value == Some(s.as_str()),
        Value::Number(n) => value == Some(js_number_text(as_f64(n)?).as_str()),
        Value::Object(op) => {
            let (name, operand) = op
                .iter()
                .next()
                .ok_or_else(|| ReferenceError::failed("empty operator"))?;
            match (name.as_str(), operand) {
                ("exists", Value::Bool(wanted)) => value.is_some() == *wanted,
                ("prefix", Value::String(p)) => value.is_some_and(|v| v.starts_with(p.as_str())),
                ("suffix", Value::String(p)) => value.is_some_and(|v| v.ends_with(p.as_str())),
                ("anything-but", excluded) => match value {
                    None => false,
                    Some(v) => {
                        let list = match excluded {
                            Value::Array(items) => items.clone(),
                            single => vec![single.clone()],
                        };
                        let mut hit = false;
                        for x in &list {
                            let text = match x {
                                Value::String(s) => s.clone(),
                                Value::Number(n) => js_number_text(as_f64(n)?),
                                _ => return Err(ReferenceError::failed("bad anything-but value")),
                            };
                            hit |= text == v;
                        }
                        !hit
                    }
                },
                ("numeric", Value::Array(items)) => match value.and_then(parse_number) {
                    None => false,
                    Some(x) => {
                        let mut all = true;
                        let mut i = 0;
                        while i + 1 < items.len() {
                            let op = items.get(i).and_then(Value::as_str).unwrap_or("");
                            let n = match items.get(i + 1) {
                                Some(Value::Number(n)) => as_f64(n)?,
                                _ => return Err(ReferenceError::failed("bad numeric operand")),
                            };
                            all &= match op {
                                "=" => x == n,
                                "<" => x < n,
                                "<=" => x <= n,
                                ">" => x > n,
                                ">=" => x >= n,
                                _ => {
                                    return Err(ReferenceError::failed(format!(
                                        "bad numeric operator {op}"
                                    )));
                                }
                            };
                            i += 2;
                        }
                        all
                    }
                },
                (other, _) => {
                    return Err(ReferenceError::failed(format!(
                        "unsupported operator {other}"
                    )));
                }
            }
        }
        _ => return Err(ReferenceError::failed("bad alternative")),
    })
}

fn as_f64(n: &Number) -> Result<f64, ReferenceError> {
    n.as_str()
        .parse::<f64>()
        .map_err(|_| ReferenceError::failed(format!("bad number {n}")))
}

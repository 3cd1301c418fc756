//! Reference evaluation of `basaltic` policies (`docs/dialects/basaltic-filters.md`), straight
//! from the JSON.

use super::ReferenceError;
use super::json::{Map, Number, Value};
use super::number::{js_number_text, parse_number};

/// Evaluates a (valid) policy against `{"attributes": {NAME: {"type", "value"}}}`.
pub fn evaluate(policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let policy = policy
        .as_object()
        .ok_or_else(|| ReferenceError("policy is not an object".into()))?;
    let empty = Map::new();
    let attributes = match message.get("attributes") {
        Some(Value::Object(a)) => a,
        _ => &empty,
    };
    // B-1: every named attribute must match (AND); any alternative may (OR).
    for (name, alternatives) in policy {
        let value: Option<&str> = attributes
            .get(name)
            .and_then(|a| a.get("value"))
            .and_then(Value::as_str);
        let alternatives = alternatives
            .as_array()
            .ok_or_else(|| ReferenceError(format!("{name}: not an array")))?;
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
                .ok_or_else(|| ReferenceError("empty operator".into()))?;
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
                                _ => return Err(ReferenceError("bad anything-but value".into())),
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
                                _ => return Err(ReferenceError("bad numeric operand".into())),
                            };
                            all &= match op {
                                "=" => x == n,
                                "<" => x < n,
                                "<=" => x <= n,
                                ">" => x > n,
                                ">=" => x >= n,
                                _ => {
                                    return Err(ReferenceError(format!(
                                        "bad numeric operator {op}"
                                    )));
                                }
                            };
                            i += 2;
                        }
                        all
                    }
                },
                (other, _) => return Err(ReferenceError(format!("unsupported operator {other}"))),
            }
        }
        _ => return Err(ReferenceError("bad alternative".into())),
    })
}

fn as_f64(n: &Number) -> Result<f64, ReferenceError> {
    n.as_str()
        .parse::<f64>()
        .map_err(|_| ReferenceError(format!("bad number {n}")))
}

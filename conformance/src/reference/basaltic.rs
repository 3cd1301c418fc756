//! Reference evaluation of `basaltic` policies (specs/basaltic-filters.md), straight from the JSON.

use super::ReferenceError;
use serde_json::{Map, Value};

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

fn as_f64(n: &serde_json::Number) -> Result<f64, ReferenceError> {
    n.to_string()
        .parse::<f64>()
        .map_err(|_| ReferenceError(format!("bad number {n}")))
}

/// B-10: the whole text must be a JSON number (checked character class by character class) and
/// finite as a binary64.
fn parse_number(text: &str) -> Option<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied();
    if at(i) == Some('-') {
        i += 1;
    }
    match at(i) {
        Some('0') => i += 1,
        Some('1'..='9') => {
            while matches!(at(i), Some('0'..='9')) {
                i += 1;
            }
        }
        _ => return None,
    }
    if at(i) == Some('.') {
        i += 1;
        if !matches!(at(i), Some('0'..='9')) {
            return None;
        }
        while matches!(at(i), Some('0'..='9')) {
            i += 1;
        }
    }
    if matches!(at(i), Some('e' | 'E')) {
        i += 1;
        if matches!(at(i), Some('+' | '-')) {
            i += 1;
        }
        if !matches!(at(i), Some('0'..='9')) {
            return None;
        }
        while matches!(at(i), Some('0'..='9')) {
            i += 1;
        }
    }
    if i != chars.len() {
        return None;
    }
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// B-6: how JavaScript prints a number. Rust's `{}` prints the shortest round-trip digits without
/// an exponent; JavaScript uses that form for 1e-7 < |x| < 1e21 and exponent form otherwise.
fn js_number_text(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    let magnitude = x.abs();
    if (1e-7..1e21).contains(&magnitude) && magnitude != 1e-7 {
        return format!("{x}");
    }
    // Exponent form: Rust writes `1e21`, `1.5e-7`; JavaScript writes `1e+21`, `1.5e-7`.
    let s = format!("{x:e}");
    match s.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_text_matches_javascript() {
        for (x, s) in [
            (100.0, "100"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-0.0, "0"),
            (1.5, "1.5"),
            (-2.5e-8, "-2.5e-8"),
        ] {
            assert_eq!(js_number_text(x), s, "{x}");
        }
    }

    #[test]
    fn number_grammar() {
        assert_eq!(parse_number("149.50"), Some(149.5));
        for bad in ["", "+1", "01", ".5", "5.", "1e", " 1", "1e400", "NaN"] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
    }
}

//! Reference evaluation of `stream` policies (`docs/dialects/stream-filters.md`, building on
//! `docs/dialects/004_0db22b3017d8b844.txt`), straight from the JSON form.
//!
//! The text form is turned into the JSON form by the compiler's text-form *parser* (front end,
//! shared on purpose); everything after that — the pattern matcher, the number grammar, the clause
//! semantics — is written again here, the obvious way.

use super::ReferenceError;
use super::json::{self, Value};
use super::number::parse_number;

/// Evaluates a (valid) policy against `{"headers": {NAME: VALUE}}`.
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let _ = options;
    let policy = match policy {
        Value::String(text) => {
            let filter = filtervm_compiler::dialect::stream::parse_text(text)
                .map_err(|e| ReferenceError(format!("text form rejected: {e}")))?;
            json::parse(&filter.to_json().to_string())
                .map_err(|e| ReferenceError(format!("the JSON form of the text form: {e}")))?
        }
        other => other.clone(),
    };
    let groups = policy
        .get("groups")
        .and_then(Value::as_array)
        .ok_or_else(|| ReferenceError("policy has no groups array".into()))?;
    let headers = message.get("headers").and_then(Value::as_object);
    let header =
        |name: &str| -> Option<&str> { headers.and_then(|h| h.get(name)).and_then(Value::as_str) };
    // A record matches when any group matches; a group when all its clauses match.
    for group in groups {
        let clauses = group
            .as_array()
            .ok_or_else(|| ReferenceError("a group is not an array".into()))?;
        let mut all = true;
        for clause in clauses {
            if !clause_holds(clause, &header)? {
                all = false;
                break;
            }
        }
        if all {
            return Ok(true);
        }
    }
    Ok(false)
}

fn clause_holds<'m>(
    clause: &Value,
    header: &dyn Fn(&str) -> Option<&'m str>,
) -> Result<bool, ReferenceError> {
    let op = clause
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| ReferenceError("clause without op".into()))?;
    let name = clause
        .get("header")
        .and_then(Value::as_str)
        .ok_or_else(|| ReferenceError("clause without header".into()))?;
    let values: Vec<Value> = clause
        .get("values")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let value = header(name);
    let first_string = || -> Result<String, ReferenceError> {
        values
            .first()
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ReferenceError(format!("`{op}` without a string operand")))
    };
    let first_number = || -> Result<f64, ReferenceError> {
        match values.first() {
            Some(Value::Number(n)) => n
                .as_str()
                .parse::<f64>()
                .map_err(|_| ReferenceError(format!("bad number {n}"))),
            _ => Err(ReferenceError(format!("`{op}` without a number operand"))),
        }
    };
    Ok(match op {
        // "The header is present and its value matches the pattern".
        "=" => match value {
            None => false,
            Some(v) => pattern_matches(&first_string()?, v),
        },
        // "The header is missing, or its value does not match".
        "!=" => match value {
            None => true,
            Some(v) => !pattern_matches(&first_string()?, v),
        },
        // "The header's value is one of the listed patterns" (S11: needs the header).
        "in" => match value {
            None => false,
            Some(v) => values
                .iter()
                .filter_map(Value::as_str)
                .any(|p| pattern_matches(p, v)),
        },
        "exists" => value.is_some(),
        "missing" => value.is_none(),
        // "The value parses as a number and compares true" (S9).
        "<" | "<=" | ">" | ">=" => {
            let bound = first_number()?;
            match value.and_then(parse_number) {
                None => false,
                Some(x) => match op {
                    "<" => x < bound,
                    "<=" => x <= bound,
                    ">" => x > bound,
                    _ => x >= bound,
                },
            }
        }
        other => return Err(ReferenceError(format!("unknown op {other}"))),
    })
}

/// Whether `value` matches `pattern`: both split on every `.` (S1), then segment by segment.
fn pattern_matches(pattern: &str, value: &str) -> bool {
    let p: Vec<&str> = pattern.split('.').collect();
    let v: Vec<&str> = value.split('.').collect();
    segments_match(&p, &v)
}

/// Recursive over the segment lists. A pattern holds at most one `**`, so the one loop below runs
/// at most once per call chain: quadratic at worst.
fn segments_match(pattern: &[&str], value: &[&str]) -> bool {
    match pattern.split_first() {
        None => value.is_empty(),
        // S4: `**` takes zero or more segments.
        Some((&"**", rest)) => (0..=value.len()).any(|skip| {
            value
                .get(skip..)
                .is_some_and(|tail| segments_match(rest, tail))
        }),
        Some((seg, rest)) => match value.split_first() {
            None => false,
            Some((v, vrest)) => segment_matches(seg, v) && segments_match(rest, vrest),
        },
    }
}

/// One pattern segment against one value segment.
fn segment_matches(pattern: &str, value: &str) -> bool {
    if pattern == "*" {
        // S2: any one segment, the empty one included.
        return true;
    }
    match pattern.find('*') {
        // S6, S7: no `*`: byte-exact equality.
        None => pattern == value,
        // S3: prefix, zero or more characters, suffix; prefix and suffix may not overlap.
        Some(star) => {
            let prefix = pattern.get(..star).unwrap_or("");
            let suffix = pattern.get(star + 1..).unwrap_or("");
            value.len() >= prefix.len() + suffix.len()
                && value.starts_with(prefix)
                && value.ends_with(suffix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_table_through_the_reference_matcher() {
        let rows: &[(&str, &[&str], &[&str])] = &[
            ("eu-*", &["eu-west", "eu-central"], &["us-east", "eu.west"]),
            ("*-west", &["eu-west", "us-west"], &["eu-west-1"]),
            (
                "orders.*.created",
                &["orders.eu.created"],
                &["orders.created", "orders.eu.west.created"],
            ),
            (
                "orders.**",
                &["orders", "orders.eu", "orders.eu.created"],
                &["billing.orders"],
            ),
            (
                "**.created",
                &["created", "orders.eu.created"],
                &["orders.created.v2"],
            ),
            (
                "orders.**.created",
                &["orders.created", "orders.eu.west.created"],
                &["orders.eu.updated"],
            ),
        ];
        for (p, yes, no) in rows {
            for v in *yes {
                assert!(pattern_matches(p, v), "{p} {v}");
            }
            for v in *no {
                assert!(!pattern_matches(p, v), "{p} {v}");
            }
        }
    }

    #[test]
    fn s1_to_s4_edge_cases() {
        assert!(pattern_matches("a.*.b", "a..b"));
        assert!(pattern_matches("*", ""));
        assert!(pattern_matches("*.*", "."));
        assert!(pattern_matches("eu-*-1", "eu--1"));
        assert!(!pattern_matches("eu-*-1", "eu-1"));
        assert!(!pattern_matches("a*a", "a"));
        assert!(pattern_matches("orders.**", "orders."));
        assert!(pattern_matches("**.", ""));
        assert!(!pattern_matches("**.", "a"));
        assert!(pattern_matches(".**", ".a"));
        assert!(!pattern_matches(".**", "a"));
        assert!(pattern_matches("*.**", ""));
        assert!(pattern_matches("", ""));
        assert!(!pattern_matches("", "."));
    }

    #[test]
    fn s9_number_grammar() {
        for t in [
            "5", "-5", "5.0", "0", "-0", "1e3", "1E3", "1e+3", "1.5e-3", "50e-1",
        ] {
            assert!(parse_number(t).is_some(), "{t}");
        }
        for t in [
            " 5", "5 ", "+5", ".5", "5.", "05", "00", "0x10", "1_000", "NaN", "inf", "", "-", "1e",
            "e3", "--5", "1.2.3", "1e400", "-1e400", "\u{661}",
        ] {
            assert!(parse_number(t).is_none(), "{t}");
        }
    }
}

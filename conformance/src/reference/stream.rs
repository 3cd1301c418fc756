//! Reference validation and evaluation of `stream` policies (`docs/dialects/stream-filters.md`,
//! building on `docs/dialects/004_0db22b3017d8b844.txt`), straight from the JSON form; the text
//! form is read into the JSON form by the reference's own reader ([`super::stream_text`]).
//!
//! Nothing is shared with the compiler: the checks of S7-S14 and the seed's pattern rules, the
//! pattern matcher, the number grammar and the clause semantics are written again here.

use super::json::Value;
use super::number::parse_number;
use super::stream_rules::{
    INVALID, LIMIT, MAX_CLAUSES, MAX_GROUPS, MAX_IN_ENTRIES, check_header, check_pattern,
};
use super::{Codes, ReferenceError, Rejection, options, pointer, stream_text};
use std::borrow::Cow;

/// The codes of policy text errors.
pub const CODES: Codes = Codes {
    invalid: INVALID,
    limit: LIMIT,
};

fn reject<T>(code: &'static str, at: &str, message: impl Into<String>) -> Result<T, Rejection> {
    Err(Rejection::new(code, at, message))
}

/// The policy's JSON form: itself, or the text form read into it.
fn json_form(policy: &Value) -> Result<Cow<'_, Value>, Rejection> {
    match policy {
        Value::String(text) => stream_text::parse(text).map(Cow::Owned),
        other => Ok(Cow::Borrowed(other)),
    }
}

/// Checks options (none) and policy: the first violation.
pub fn validate(options: &Value, policy: &Value) -> Result<(), Rejection> {
    options::members(options, &[])?;
    let policy = json_form(policy)?;
    let Value::Object(filter) = policy.as_ref() else {
        return reject(
            INVALID,
            "",
            "a filter is an object {\"groups\": [...]} or the text form",
        );
    };
    if let Some(name) = filter.keys().find(|k| *k != "groups") {
        return reject(
            INVALID,
            &pointer::push("", name),
            format!("unknown member `{name}` (S8)"),
        );
    }
    let groups = match filter.get("groups") {
        Some(Value::Array(groups)) => groups,
        Some(_) => return reject(INVALID, "/groups", "`groups` is an array of groups"),
        None => return reject(INVALID, "", "a filter needs `groups`"),
    };
    // S12.
    if groups.is_empty() {
        return reject(INVALID, "/groups", "`groups` is empty (S12)");
    }
    if groups.len() > MAX_GROUPS {
        return reject(
            LIMIT,
            &pointer::index("/groups", MAX_GROUPS),
            format!("a filter holds at most {MAX_GROUPS} groups"),
        );
    }
    for (g, group) in groups.iter().enumerate() {
        let at = pointer::index("/groups", g);
        let Value::Array(clauses) = group else {
            return reject(INVALID, &at, "a group is an array of clauses");
        };
        if clauses.is_empty() {
            return reject(INVALID, &at, "the group is empty (S12)");
        }
        if clauses.len() > MAX_CLAUSES {
            return reject(
                LIMIT,
                &pointer::index(&at, MAX_CLAUSES),
                format!("a group holds at most {MAX_CLAUSES} clauses"),
            );
        }
        for (c, clause) in clauses.iter().enumerate() {
            check_clause(clause, &pointer::index(&at, c))?;
        }
    }
    Ok(())
}

/// S8, S10, S11, S13 for one clause of the JSON form.
fn check_clause(clause: &Value, at: &str) -> Result<(), Rejection> {
    let Value::Object(clause) = clause else {
        return reject(
            INVALID,
            at,
            "a clause is an object {\"op\", \"header\", \"values\"}",
        );
    };
    if let Some(name) = clause
        .keys()
        .find(|k| !["op", "header", "values"].contains(&k.as_str()))
    {
        return reject(
            INVALID,
            &pointer::push(at, name),
            format!("unknown member `{name}` (S8)"),
        );
    }
    let op = match clause.get("op") {
        Some(Value::String(op))
            if ["=", "!=", "in", "exists", "missing", "<", "<=", ">", ">="]
                .contains(&op.as_str()) =>
        {
            op.as_str()
        }
        Some(other) => {
            return reject(
                INVALID,
                &pointer::push(at, "op"),
                format!("unknown operator {other} (S13)"),
            );
        }
        None => return reject(INVALID, at, "the clause has no `op` (S8)"),
    };
    let header_at = pointer::push(at, "header");
    match clause.get("header") {
        Some(Value::String(h)) => {
            check_header(h).map_err(|(code, message)| Rejection::new(code, &header_at, message))?;
        }
        Some(_) => return reject(INVALID, &header_at, "`header` is a string (S8)"),
        None => return reject(INVALID, at, "the clause has no `header` (S8)"),
    }
    let values_at = pointer::push(at, "values");
    let values: &[Value] = match clause.get("values") {
        None => &[],
        Some(Value::Array(values)) => values,
        Some(_) => return reject(INVALID, &values_at, "`values` is an array (S8)"),
    };
    let count_at = if clause.contains_key("values") {
        values_at.as_str()
    } else {
        at
    };
    let pattern = |v: &Value, at: &str| -> Result<(), Rejection> {
        match v {
            Value::String(p) => {
                check_pattern(p).map_err(|(code, message)| Rejection::new(code, at, message))
            }
            _ => reject(INVALID, at, format!("`{op}` takes string patterns (S10)")),
        }
    };
    match op {
        "=" | "!=" => match values {
            [only] => pattern(only, &pointer::index(&values_at, 0)),
            _ => reject(
                INVALID,
                count_at,
                format!("`{op}` takes exactly one pattern (S10)"),
            ),
        },
        "in" => {
            if values.is_empty() {
                return reject(
                    INVALID,
                    count_at,
                    "an `in` list needs 1 to 32 patterns (S11)",
                );
            }
            if values.len() > MAX_IN_ENTRIES {
                return reject(
                    LIMIT,
                    &pointer::index(&values_at, MAX_IN_ENTRIES),
                    format!("an `in` list holds at most {MAX_IN_ENTRIES} patterns"),
                );
            }
            for (i, v) in values.iter().enumerate() {
                pattern(v, &pointer::index(&values_at, i))?;
            }
            Ok(())
        }
        "exists" | "missing" => {
            if values.is_empty() {
                Ok(())
            } else {
                reject(INVALID, &values_at, format!("`{op}` takes no values (S10)"))
            }
        }
        _ => match values {
            [Value::Number(n)] if n.as_str().parse::<f64>().is_ok_and(f64::is_finite) => Ok(()),
            [Value::Number(n)] => reject(
                INVALID,
                &pointer::index(&values_at, 0),
                format!("the number {n} is not finite as a binary64 (S9)"),
            ),
            [_] => reject(
                INVALID,
                &pointer::index(&values_at, 0),
                format!("`{op}` takes one JSON number (S10)"),
            ),
            _ => reject(
                INVALID,
                count_at,
                format!("`{op}` takes exactly one number (S10)"),
            ),
        },
    }
}

/// Evaluates a valid policy against `{"headers": {NAME: VALUE}}`.
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let _ = options;
    let policy = json_form(policy)?;
    let groups = policy
        .get("groups")
        .and_then(Value::as_array)
        .ok_or_else(|| ReferenceError::failed("policy has no groups array"))?;
    let headers = message.get("headers").and_then(Value::as_object);
    let header =
        |name: &str| -> Option<&str> { headers.and_then(|h| h.get(name)).and_then(Value::as_str) };
    // A record matches when any group matches; a group when all its clauses match.
    for group in groups {
        let clauses = group
            .as_array()
            .ok_or_else(|| ReferenceError::failed("a group is not an array"))?;
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
        .ok_or_else(|| ReferenceError::failed("clause without op"))?;
    let name = clause
        .get("header")
        .and_then(Value::as_str)
        .ok_or_else(|| ReferenceError::failed("clause without header"))?;
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
            .ok_or_else(|| ReferenceError::failed(format!("`{op}` without a string operand")))
    };
    let first_number = || -> Result<f64, ReferenceError> {
        match values.first() {
            Some(Value::Number(n)) => n
                .as_str()
                .parse::<f64>()
                .map_err(|_| ReferenceError::failed(format!("bad number {n}"))),
            _ => Err(ReferenceError::failed(format!(
                "`{op}` without a number operand"
            ))),
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
        other => return Err(ReferenceError::failed(format!("unknown op {other}"))),
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

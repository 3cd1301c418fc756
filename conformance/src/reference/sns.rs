//! Reference validation and evaluation of `sns` policies (`docs/dialects/sns-filters.md`),
//! straight from the JSON.
//!
//! Written the plain way and sharing nothing with the compiler or the VM: its own checks of rules
//! 13 and 34-43a (in the order of rule 13: structure and operators in policy order, then the scope,
//! then the 5-key rule, then the 150-combination rule; AWS's wording in every message), its own
//! JSON-number grammar, wildcard matcher (a dynamic program), CIDR parsing (`std::net`), case
//! folding, and same-element semantics by enumerating every choice of element of every array of
//! objects a policy path passes through (rule 18, D-3).

use super::json::{self, Map, Number, Value};
use super::number::parse_number;
use super::{Codes, MAX_POLICY_TEXT_BYTES, ReferenceError, Rejection, options, pointer};
use std::net::{Ipv4Addr, Ipv6Addr};

type R<T> = Result<T, ReferenceError>;

fn err<T>(message: impl Into<String>) -> R<T> {
    Err(ReferenceError::failed(message))
}

/// Not JSON, or not shaped like a filter policy.
const SYNTAX: &str = "SNS_SYNTAX_ERROR";
/// An operand of the wrong JSON type.
const TYPE: &str = "SNS_TYPE_ERROR";
/// An operator that does not exist.
const UNKNOWN: &str = "SNS_UNKNOWN_OPERATOR";
/// An operand of the right type with a bad value.
const VALUE: &str = "SNS_INVALID_VALUE";
/// Rules 42-44.
const LIMIT: &str = "SNS_LIMIT_EXCEEDED";

/// The codes of policy text errors (rules 35, 44).
pub const CODES: Codes = Codes {
    invalid: SYNTAX,
    limit: LIMIT,
};

/// Rule 42: most distinct leaf keys.
const MAX_KEYS: usize = 5;
/// Rule 43: most value combinations.
const MAX_COMBINATIONS: u64 = 150;
/// The operators of rules 25-33, which are also the names reserved inside `$or` (rule 34).
const OPERATORS: [&str; 8] = [
    "prefix",
    "suffix",
    "anything-but",
    "numeric",
    "exists",
    "equals-ignore-case",
    "wildcard",
    "cidr",
];
/// The most ways of choosing one element per array of objects that body evaluation enumerates
/// (rule 18); more is a limit of the reference ([`ReferenceError::Limit`]).
pub const MAX_WORLDS: usize = 1 << 16;

/// A value the policy compares: a scalar of the attribute or body.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
}

/// Whether the options say body scope (rule 3); invalid options are an error.
fn body_scope(options: &Value) -> Result<bool, Rejection> {
    let members = options::members(options, &["scope"])?;
    Ok(
        options::one_of(members, "scope", &["MessageAttributes", "MessageBody"])?
            == Some("MessageBody"),
    )
}

/// A policy given as a JSON string is the policy's text (as the product reads it): read it.
fn policy_value(policy: &Value) -> Result<std::borrow::Cow<'_, Value>, Rejection> {
    match policy {
        Value::String(text) => {
            if text.len() > MAX_POLICY_TEXT_BYTES {
                return Err(Rejection::new(
                    LIMIT,
                    "",
                    format!(
                        "the policy is {} bytes; the limit is 256 KiB (rule 44)",
                        text.len()
                    ),
                ));
            }
            json::parse_with(
                text,
                json::ReadOptions {
                    max_depth: super::MAX_POLICY_TEXT_DEPTH,
                    ..json::ReadOptions::default()
                },
            )
            .map(std::borrow::Cow::Owned)
            .map_err(|e| Rejection::new(SYNTAX, "", format!("failed to parse JSON. ({e})")))
        }
        other => Ok(std::borrow::Cow::Borrowed(other)),
    }
}

/// Evaluates a valid policy against a message in the vector shape.
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> R<bool> {
    let body_scope = body_scope(options)?;
    let policy = policy_value(policy)?;
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
// Validation (rules 1, 13, 15, 25-44, D-4, D-5, D-7)

fn reject<T>(code: &'static str, at: &str, message: impl Into<String>) -> Result<T, Rejection> {
    Err(Rejection::new(code, at, message))
}

/// Checks options and policy: the first violation, in the order of rule 13.
pub fn validate(options: &Value, policy: &Value) -> Result<(), Rejection> {
    let body = body_scope(options)?;
    let policy = policy_value(policy)?;
    let Value::Object(root) = policy.as_ref() else {
        return reject(
            SYNTAX,
            "",
            "Filter is not an object: a policy is a JSON object (rule 1)",
        );
    };
    check_object(root, "", false)?;
    if !body {
        check_no_nesting(root, "")?;
    }
    check_keys(root)?;
    let n = combinations(root, 1);
    if n > MAX_COMBINATIONS {
        return reject(
            LIMIT,
            "",
            format!(
                "Filter policy is too complex: {n} combinations, the limit is {MAX_COMBINATIONS}"
            ),
        );
    }
    Ok(())
}

/// Rules 1, 15, 34, 36, D-4: members in policy order.
fn check_object(object: &Map, at: &str, in_or: bool) -> Result<(), Rejection> {
    for (name, value) in object {
        let at = pointer::push(at, name);
        if name == "$or" {
            check_or(value, &at)?;
            continue;
        }
        // Rule 34 DECISION.
        if in_or && OPERATORS.contains(&name.as_str()) {
            return reject(
                SYNTAX,
                &at,
                format!("{name} is Ruler reserved fieldName which cannot be used inside $or."),
            );
        }
        match value {
            Value::Object(child) if child.is_empty() => {
                return reject(SYNTAX, &at, "Empty objects are not allowed");
            }
            Value::Object(child) => check_object(child, &at, in_or)?,
            Value::Array(items) => check_alternatives(items, &at)?,
            _ => {
                return reject(
                    SYNTAX,
                    &at,
                    format!("\"{name}\" must be an object or an array"),
                );
            }
        }
    }
    Ok(())
}

/// Rule 34: an array of two or more (non-empty) objects.
fn check_or(value: &Value, at: &str) -> Result<(), Rejection> {
    let Value::Array(branches) = value else {
        return reject(SYNTAX, at, "$or must be an array of objects");
    };
    for (i, branch) in branches.iter().enumerate() {
        let at = pointer::index(at, i);
        match branch {
            Value::Object(b) if b.is_empty() => {
                return reject(SYNTAX, &at, "Empty objects are not allowed");
            }
            Value::Object(b) => check_object(b, &at, true)?,
            _ => return reject(SYNTAX, &at, "every branch of $or is a JSON object"),
        }
    }
    if branches.len() < 2 {
        return reject(
            SYNTAX,
            at,
            "There must have at least 2 Objects in $or relationship.",
        );
    }
    Ok(())
}

/// Rule 37: a non-empty list of alternatives.
fn check_alternatives(items: &[Value], at: &str) -> Result<(), Rejection> {
    if items.is_empty() {
        return reject(SYNTAX, at, "Empty arrays are not allowed");
    }
    for (i, item) in items.iter().enumerate() {
        check_alternative(item, &pointer::index(at, i))?;
    }
    Ok(())
}

/// Rule 31 DECISION: a policy number is finite as a binary64.
fn finite(n: &Number, at: &str) -> Result<f64, Rejection> {
    match n.as_str().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => reject(
            VALUE,
            at,
            format!("the number {n} is out of range (not finite as a binary64)"),
        ),
    }
}

/// Rules 22-24, 37: one alternative.
fn check_alternative(item: &Value, at: &str) -> Result<(), Rejection> {
    const MATCH_VALUE: &str = "Match value must be String, number, true, false, or null";
    match item {
        Value::String(_) | Value::Bool(_) | Value::Null => Ok(()),
        Value::Number(n) => finite(n, at).map(drop),
        Value::Array(_) => reject(TYPE, at, MATCH_VALUE),
        Value::Object(op) => {
            let mut members = op.iter();
            let Some((name, operand)) = members.next() else {
                return reject(SYNTAX, at, format!("{MATCH_VALUE} (an empty object)"));
            };
            check_operator(name, operand, &pointer::push(at, name))?;
            if let Some((second, _)) = members.next() {
                return reject(
                    SYNTAX,
                    &pointer::push(at, second),
                    "Only one key allowed in match expression",
                );
            }
            Ok(())
        }
    }
}

/// Rules 25-33 and their errors (37-41, 43a).
fn check_operator(name: &str, operand: &Value, at: &str) -> Result<(), Rejection> {
    let string = |what: &str| -> Result<&str, Rejection> {
        operand.as_str().ok_or_else(|| {
            Rejection::new(TYPE, at, format!("{what} match pattern must be a string"))
        })
    };
    match name {
        "prefix" | "suffix" | "equals-ignore-case" => string(name).map(drop),
        "wildcard" => check_wildcard(string(name)?, at),
        // Rule 40 (1): event-ruler says "prefix" here.
        "cidr" => check_cidr(string("prefix")?, at),
        "exists" => match operand {
            Value::Bool(_) => Ok(()),
            _ => reject(
                TYPE,
                at,
                "exists match pattern must be either true or false.",
            ),
        },
        "numeric" => check_numeric(operand, at),
        "anything-but" => check_anything_but(operand, at),
        other => reject(UNKNOWN, at, format!("Unrecognized match type {other}")),
    }
}

/// Rule 27, 43a: no two `*` in a row; `\` escapes only `*` and `\`.
fn check_wildcard(pattern: &str, at: &str) -> Result<(), Rejection> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut previous_star = false;
    while let Some(&c) = chars.get(i) {
        match c {
            '*' if previous_star => {
                return reject(
                    VALUE,
                    at,
                    format!("Consecutive wildcard characters at pos {i}"),
                );
            }
            '*' => previous_star = true,
            '\\' => {
                if !matches!(chars.get(i + 1), Some('*' | '\\')) {
                    return reject(VALUE, at, format!("Invalid escape character at pos {i}"));
                }
                i += 1;
                previous_star = false;
            }
            _ => previous_star = false,
        }
        i += 1;
    }
    Ok(())
}

/// Rule 40 in its order, then D-5.
fn check_cidr(text: &str, at: &str) -> Result<(), Rejection> {
    let parts: Vec<&str> = text.split('/').collect();
    let [address, mask] = parts.as_slice() else {
        return reject(VALUE, at, "Malformed CIDR, one '/' required");
    };
    if mask.is_empty() || !mask.chars().all(|c| c.is_ascii_digit()) {
        return reject(VALUE, at, "Malformed CIDR, mask bits must be an integer");
    }
    let most = if address.parse::<Ipv4Addr>().is_ok() {
        32
    } else if address.parse::<Ipv6Addr>().is_ok() {
        128
    } else {
        return reject(VALUE, at, format!("Nonstandard IP address: {address}"));
    };
    // All digits: more than three of them (after leading zeros) is above 128.
    let significant = mask.trim_start_matches('0');
    let bits: u32 = if significant.len() > 3 {
        u32::MAX
    } else {
        significant.parse().unwrap_or(0)
    };
    if bits > most {
        return reject(
            VALUE,
            at,
            format!("Malformed CIDR, mask bits must be between 0 and {most}"),
        );
    }
    Ok(())
}

/// Rule 38 (and 43a's wording), element by element as event-ruler reads it.
fn check_numeric(operand: &Value, at: &str) -> Result<(), Rejection> {
    let Value::Array(items) = operand else {
        return reject(TYPE, at, "Value of numeric must be an array.");
    };
    // The pointer of element `i`, or of the array when there is none.
    let ptr = |i: usize| {
        if i < items.len() {
            pointer::index(at, i)
        } else {
            at.to_owned()
        }
    };
    let spelled = |op: &str| {
        if op == "=" {
            "equals".to_owned()
        } else {
            op.to_owned()
        }
    };
    let number = |i: usize, op: &str| -> Result<f64, Rejection> {
        match items.get(i) {
            Some(Value::Number(n)) => finite(n, &ptr(i)),
            _ => reject(
                TYPE,
                &ptr(i),
                format!("Value of {} must be numeric", spelled(op)),
            ),
        }
    };
    let op = match items.first() {
        Some(Value::String(op)) => op.as_str(),
        None => return reject(SYNTAX, &ptr(0), "Invalid member in numeric match: ]"),
        Some(other) => {
            let shown = match other {
                Value::Array(_) => "[".to_owned(),
                Value::Object(_) => "{".to_owned(),
                scalar => scalar.to_string(),
            };
            return reject(
                SYNTAX,
                &ptr(0),
                format!("Invalid member in numeric match: {shown}"),
            );
        }
    };
    match op {
        "=" | "<" | "<=" => {
            number(1, op)?;
            if items.len() > 2 {
                return reject(SYNTAX, &ptr(2), "Too many elements in numeric expression");
            }
            Ok(())
        }
        ">" | ">=" => {
            let bottom = number(1, op)?;
            let Some(second) = items.get(2) else {
                return Ok(());
            };
            let Value::String(op2) = second else {
                return reject(
                    SYNTAX,
                    &ptr(2),
                    format!("Bad value in numeric range: {second}"),
                );
            };
            if op2 != "<" && op2 != "<=" {
                return reject(
                    UNKNOWN,
                    &ptr(2),
                    format!("Bad numeric range operator: {op2}"),
                );
            }
            let top = number(3, op2)?;
            if items.len() > 4 {
                return reject(
                    SYNTAX,
                    &ptr(4),
                    "Too many terms in numeric range expression",
                );
            }
            if bottom >= top {
                return reject(VALUE, at, "Bottom must be less than top");
            }
            Ok(())
        }
        other => reject(
            UNKNOWN,
            &ptr(0),
            format!("Unrecognized numeric range operator: {other}"),
        ),
    }
}

/// Rules 28, 41, 43a.
fn check_anything_but(operand: &Value, at: &str) -> Result<(), Rejection> {
    match operand {
        Value::String(_) => Ok(()),
        Value::Number(n) => finite(n, at).map(drop),
        Value::Bool(_) | Value::Null => reject(
            TYPE,
            at,
            format!(
                "Inside anything but, {operand} is not supported (a string, a number or a list of them)"
            ),
        ),
        Value::Array(items) => {
            if items.is_empty() {
                return reject(SYNTAX, at, "an anything but list must not be empty");
            }
            let (mut strings, mut numbers) = (false, false);
            for (i, item) in items.iter().enumerate() {
                let item_at = pointer::index(at, i);
                match item {
                    Value::String(_) => strings = true,
                    Value::Number(n) => {
                        finite(n, &item_at)?;
                        numbers = true;
                    }
                    other => {
                        let what = match other {
                            Value::Bool(_) => "boolean",
                            Value::Null => "null",
                            Value::Object(_) => "object",
                            _ => "array",
                        };
                        return reject(
                            TYPE,
                            &item_at,
                            format!("Inside anything but list, {what} is not supported."),
                        );
                    }
                }
                if strings && numbers {
                    return reject(
                        TYPE,
                        &item_at,
                        "anything but list must contain only strings or only numbers",
                    );
                }
            }
            Ok(())
        }
        Value::Object(op) => {
            let mut members = op.iter();
            let Some((name, inner)) = members.next() else {
                return reject(
                    SYNTAX,
                    at,
                    "Inside anything but, an empty object names no pattern",
                );
            };
            let inner_at = pointer::push(at, name);
            if !["prefix", "suffix", "wildcard", "equals-ignore-case"].contains(&name.as_str()) {
                return reject(
                    UNKNOWN,
                    &inner_at,
                    format!("Unsupported anything-but pattern: {name}"),
                );
            }
            // Rule 41 DECISION: a string or a non-empty array of strings.
            let entries: Vec<(&str, String)> = match inner {
                Value::String(s) => vec![(s.as_str(), inner_at.clone())],
                Value::Array(items) if !items.is_empty() => {
                    let mut entries = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        let item_at = pointer::index(&inner_at, i);
                        let Value::String(s) = item else {
                            return reject(
                                TYPE,
                                &item_at,
                                format!("{name} match pattern must be a string"),
                            );
                        };
                        entries.push((s.as_str(), item_at));
                    }
                    entries
                }
                _ => {
                    return reject(
                        TYPE,
                        &inner_at,
                        format!("{name} match pattern must be a string"),
                    );
                }
            };
            for (entry, entry_at) in &entries {
                match name.as_str() {
                    // event-ruler (where the spec is silent): an empty prefix or suffix would
                    // exclude every string.
                    "prefix" | "suffix" if entry.is_empty() => {
                        return reject(VALUE, entry_at, "Null prefix/suffix not allowed");
                    }
                    "wildcard" => check_wildcard(entry, entry_at)?,
                    _ => {}
                }
            }
            if let Some((second, _)) = members.next() {
                return reject(
                    SYNTAX,
                    &pointer::push(at, second),
                    "Only one key allowed in match expression",
                );
            }
            Ok(())
        }
    }
}

/// Rule 13: in attribute scope no member is a nested object (at any `$or` depth).
fn check_no_nesting(object: &Map, at: &str) -> Result<(), Rejection> {
    for (name, value) in object {
        let at = pointer::push(at, name);
        if name == "$or" {
            for (i, branch) in value.as_array().into_iter().flatten().enumerate() {
                if let Some(b) = branch.as_object() {
                    check_no_nesting(b, &pointer::index(&at, i))?;
                }
            }
        } else if value.is_object() {
            return reject(
                SYNTAX,
                &at,
                "Filter policy scope MessageAttributes does not support nested filter policy",
            );
        }
    }
    Ok(())
}

/// Every leaf list: its flattened path (rule 16) and pointer, in policy order.
fn leaf_lists(object: &Map, prefix: Option<&str>, at: &str, out: &mut Vec<(String, String)>) {
    for (name, value) in object {
        let member_at = pointer::push(at, name);
        if name == "$or" {
            for (i, branch) in value.as_array().into_iter().flatten().enumerate() {
                if let Some(b) = branch.as_object() {
                    leaf_lists(b, prefix, &pointer::index(&member_at, i), out);
                }
            }
            continue;
        }
        match value {
            Value::Object(child) => {
                leaf_lists(child, Some(&join(prefix, name)), &member_at, out);
            }
            _ => out.push((join(prefix, name), member_at)),
        }
    }
}

/// Rule 42 DECISION: at most five distinct leaf paths across all `$or` branches; the error points
/// at the first list of the sixth path.
fn check_keys(root: &Map) -> Result<(), Rejection> {
    let mut lists = Vec::new();
    leaf_lists(root, None, "", &mut lists);
    let mut distinct: Vec<&str> = Vec::new();
    for (path, at) in &lists {
        if !distinct.contains(&path.as_str()) {
            distinct.push(path);
            if distinct.len() > MAX_KEYS {
                return reject(
                    LIMIT,
                    at,
                    format!("Filter policy can not have more than {MAX_KEYS} keys"),
                );
            }
        }
    }
    Ok(())
}

/// Rule 43 and D-7: a leaf list counts its length times its depth (root members at depth 1); a
/// nested object its own count one level deeper; `$or` the sum of its branches at the same
/// depth; an object the product of its members. Saturating.
fn combinations(object: &Map, depth: u64) -> u64 {
    let mut product: u64 = 1;
    for (name, value) in object {
        let factor = if name == "$or" {
            value
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .map(|b| combinations(b, depth))
                .fold(0u64, u64::saturating_add)
        } else {
            match value {
                Value::Object(child) => combinations(child, depth.saturating_add(1)),
                Value::Array(items) => depth.saturating_mul(items.len() as u64),
                _ => 1,
            }
        };
        product = product.saturating_mul(factor);
    }
    product
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
        let (t, v) = super::attribute_fields(a);
        (t.unwrap_or("").to_owned(), v.unwrap_or("").to_owned())
    };
    // A String.Array value too deep for the reader is the JSON text of an array all the same:
    // a limit of the reference, not an absent attribute (rule 7).
    for a in attributes.values() {
        let (t, v) = typed(a);
        if base_type(&t) == "String.Array"
            && let Err(e) = json::parse(&v)
            && e.too_deep
        {
            return Err(super::message_text_error("a String.Array value", &e));
        }
    }
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
            // A body too deep for the reader is JSON all the same: a limit of the reference.
            Err(e) if e.too_deep => return Err(super::message_text_error("the body", &e)),
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
    for world in worlds(&body, &start)? {
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
fn worlds(value: &Value, paths: &[(usize, Option<String>)]) -> R<Vec<Vec<(usize, Val)>>> {
    let too_many = || {
        ReferenceError::Limit(format!(
            "the body has more than {MAX_WORLDS} ways of choosing one element per array of objects"
        ))
    };
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
                let child_worlds = worlds(child, &below)?;
                if acc.len().saturating_mul(child_worlds.len()) > MAX_WORLDS {
                    return Err(too_many());
                }
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
            Ok(acc)
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
                return Ok(vec![here]);
            }
            let below: Vec<(usize, Option<String>)> = going_on
                .iter()
                .map(|(i, r)| (*i, Some(r.clone())))
                .collect();
            let mut out = Vec::new();
            for object in objects {
                for mut w in worlds(object, &below)? {
                    w.extend(here.iter().cloned());
                    out.push(w);
                }
                if out.len() > MAX_WORLDS {
                    return Err(too_many());
                }
            }
            Ok(out)
        }
        other => Ok(match scalar(other) {
            Some(v) => vec![at_end.iter().map(|i| (*i, v.clone())).collect()],
            None => vec![Vec::new()],
        }),
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
                    .ok_or_else(|| ReferenceError::failed("$or branch is not an object"))?;
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
        .map_err(|_| ReferenceError::failed(format!("bad number {n}")))
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
                .ok_or_else(|| ReferenceError::failed("empty operator"))?;
            let text = || {
                operand
                    .as_str()
                    .ok_or_else(|| ReferenceError::failed(format!("{name}: not a string")))
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
                        .ok_or_else(|| ReferenceError::failed("numeric: not an array"))?;
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

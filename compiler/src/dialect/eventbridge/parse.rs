//! Reading and validating an event pattern (`docs/dialects/eventbridge-patterns.md` EB-4, EB-5,
//! EB-12..EB-31).
//!
//! The checks are event-ruler's `JsonRuleCompiler`'s, in its order: the pattern is read in
//! document order, depth first, and the first error is reported (EB-31), with event-ruler's
//! message in its text, a JSON Pointer to the offending member, operator or element, and a code
//! for its kind ([the dialect's error table](super)). Inside a match expression the operand is
//! validated before a second member is reported.
//!
//! The result is the pattern as a sequence of [`Item`]s: nested objects are flattened into
//! leaves with dotted paths (EB-4), `$or` members keep their alternatives (EB-5), and every
//! member keeps its place in document order (EB-7 needs it).

use crate::error::{ErrorCode, PolicyError, excerpt, pointer, suggestion};
use filtervm_vm::address::Block;
use filtervm_vm::json::{Map, Value};
use filtervm_vm::number::comparable;
use filtervm_vm::wildcard::Wildcard;

const SYNTAX: ErrorCode = ErrorCode::EventBridgeSyntaxError;
const TYPE: ErrorCode = ErrorCode::EventBridgeTypeError;
const UNKNOWN: ErrorCode = ErrorCode::EventBridgeUnknownOperator;
const VALUE: ErrorCode = ErrorCode::EventBridgeInvalidValue;

/// The `$or` keyword (EB-5): always the operator, never a field name.
pub const OR: &str = "$or";

/// The match types a match expression may name (EB-12..EB-30).
pub const OPERATORS: [&str; 9] = [
    "exactly",
    "prefix",
    "suffix",
    "equals-ignore-case",
    "wildcard",
    "anything-but",
    "numeric",
    "cidr",
    "exists",
];

/// The operators `anything-but` takes inside it (EB-24).
pub const ANYTHING_BUT_OPERATORS: [&str; 4] =
    ["equals-ignore-case", "prefix", "suffix", "wildcard"];

/// Names that may not be field names inside a `$or` alternative, at any depth (EB-5).
pub const RESERVED_IN_OR: [&str; 24] = [
    "exactly",
    "equals-ignore-case",
    "prefix",
    "suffix",
    "anything-but",
    "exists",
    "wildcard",
    "numeric",
    "cidr",
    "=",
    "<",
    "<=",
    ">",
    ">=",
    "regex",
    "not-wildcard",
    "not-equals-ignore-case",
    "date-after",
    "date-on-or-after",
    "date-before",
    "date-on-or-before",
    "in-date-range",
    "ip-address-in-range",
    "ip-address-not-in-range",
];

/// A pattern: its members in document order, nested objects flattened (EB-4).
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// The members.
    pub items: Vec<Item>,
}

/// One member of a pattern.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A leaf: a path and its alternatives.
    Leaf(Leaf),
    /// A `$or` member: one of its alternatives is read in its place (EB-5).
    Or(Or),
}

/// A leaf member `"name": [alternatives]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// The flattened path (member names joined with `.`, EB-3, EB-4).
    pub path: String,
    /// JSON Pointer of the member.
    pub pointer: String,
    /// The alternatives (ORed) with their pointers.
    pub alternatives: Vec<(Matcher, String)>,
    /// The member's place among the pattern's leaves, in document order.
    pub order: usize,
}

/// A `$or` member.
#[derive(Debug, Clone, PartialEq)]
pub struct Or {
    /// JSON Pointer of the member.
    pub pointer: String,
    /// The alternatives: each its members and its pointer.
    pub alternatives: Vec<(Vec<Item>, String)>,
}

/// A numeric bound (EB-26) and what `anything-but` excludes (EB-23, EB-24): the same as in an
/// SNS policy (`docs/dialects/sns-filters.md` rules 31, 28, 29 and 41), the pattern language both
/// dialects share.
pub use crate::dialect::sns::parse::{Bound, Exclusion};

/// One alternative of a leaf (EB-12..EB-30).
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// `"s"`: the exact string (EB-12).
    Exact(String),
    /// `"s"` where `s` is an IP address: the same address in any spelling (EB-13).
    Address(Block),
    /// `{"exactly": s}` (EB-14).
    Exactly(String),
    /// A bare number (EB-16): its text, and its value when comparable (EB-17).
    Number {
        /// The number as written.
        text: String,
        /// Its value, when comparable.
        value: Option<f64>,
    },
    /// `true` / `false` (EB-15).
    Bool(bool),
    /// `null` (EB-15).
    Null,
    /// `{"prefix": s}` (EB-19).
    Prefix(String),
    /// `{"suffix": s}` (EB-19).
    Suffix(String),
    /// `{"prefix": {"equals-ignore-case": s}}` (EB-21).
    PrefixIgnoreCase(String),
    /// `{"suffix": {"equals-ignore-case": s}}` (EB-21).
    SuffixIgnoreCase(String),
    /// `{"equals-ignore-case": s}` (EB-20).
    EqualsIgnoreCase(String),
    /// `{"wildcard": s}` (EB-22).
    Wildcard(Wildcard),
    /// `{"anything-but": ...}` (EB-23..EB-25).
    AnythingBut(Exclusion),
    /// `{"numeric": [...]}` (EB-26): either bound may be missing.
    Numeric {
        /// The lower bound.
        lo: Option<Bound>,
        /// The upper bound.
        hi: Option<Bound>,
    },
    /// `{"cidr": s}` (EB-27).
    Cidr(Block),
    /// `{"exists": b}` (EB-30).
    Exists(bool),
}

/// The text event-ruler quotes for a token (`T` in EB-31).
fn token(v: Option<&Value>) -> String {
    match v {
        None => "]".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.as_str().to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Object(_)) => "{".to_owned(),
        Some(Value::Array(_)) => "[".to_owned(),
    }
}

/// EB-22: checks a wildcard operand as event-ruler's parser reads it, byte by byte, positions
/// counted in the operand's UTF-8 bytes plus one (event-ruler reads it with its opening quote).
pub fn check_wildcard(operand: &str) -> Result<(), String> {
    let b = operand.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'*' if b.get(i + 1) == Some(&b'*') => {
                return Err(format!("Consecutive wildcard characters at pos {}", i + 1));
            }
            b'\\' => match b.get(i + 1) {
                Some(b'*' | b'\\') => i += 1,
                _ => return Err(format!("Invalid escape character at pos {}", i + 1)),
            },
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

type Parsed<T> = Result<T, PolicyError>;

fn fail<T>(code: ErrorCode, at: &str, message: impl Into<String>) -> Parsed<T> {
    Err(PolicyError::new(code, at, message))
}

/// "Cannot compare number : TEXT" unless `text` is comparable (EB-17).
fn comparable_bound(text: &str, at: &str) -> Parsed<f64> {
    match comparable(text) {
        Some(x) => Ok(x),
        None => fail(
            VALUE,
            at,
            format!("Cannot compare number : {}", excerpt(text)),
        ),
    }
}

/// Reads patterns, numbering their leaves in document order.
#[derive(Debug, Default)]
pub struct Parser {
    leaves: usize,
}

impl Parser {
    /// Reads a whole pattern (EB-4): a JSON object with at least one member.
    pub fn pattern(&mut self, policy: &Value) -> Parsed<Pattern> {
        let Value::Object(map) = policy else {
            return fail(SYNTAX, "", "Filter is not an object");
        };
        Ok(Pattern {
            items: self.object(map, "", None, false)?,
        })
    }

    /// The members of an object at `at`, below path `prefix` (`None` at the top); `in_or`
    /// inside a `$or` alternative.
    fn object(
        &mut self,
        map: &Map,
        at: &str,
        prefix: Option<&str>,
        in_or: bool,
    ) -> Parsed<Vec<Item>> {
        let mut items = Vec::with_capacity(map.len());
        for (name, value) in map.iter() {
            let here = pointer::push(at, name);
            if name == OR {
                items.push(Item::Or(self.or(value, &here, prefix)?));
                continue;
            }
            if in_or && RESERVED_IN_OR.contains(&name.as_str()) {
                return fail(
                    SYNTAX,
                    &here,
                    format!(
                        "{} is Ruler reserved fieldName which cannot be used inside $or.",
                        excerpt(name)
                    ),
                );
            }
            let path = match prefix {
                None => name.clone(),
                Some(p) => format!("{p}.{name}"),
            };
            match value {
                Value::Object(child) => {
                    items.extend(self.object(child, &here, Some(&path), in_or)?);
                }
                Value::Array(alternatives) => {
                    let alternatives = self.alternatives(alternatives, &here)?;
                    let order = self.leaves;
                    self.leaves += 1;
                    items.push(Item::Leaf(Leaf {
                        path,
                        pointer: here,
                        alternatives,
                        order,
                    }));
                }
                _ => {
                    return fail(
                        SYNTAX,
                        &here,
                        format!("\"{}\" must be an object or an array", excerpt(name)),
                    );
                }
            }
        }
        if map.is_empty() {
            return fail(SYNTAX, at, "Empty objects are not allowed");
        }
        Ok(items)
    }

    /// A `$or` member's value: an array of at least two objects (EB-5).
    fn or(&mut self, value: &Value, at: &str, prefix: Option<&str>) -> Parsed<Or> {
        let Value::Array(elements) = value else {
            return fail(SYNTAX, at, "It must be an Array followed with $or.");
        };
        let mut alternatives = Vec::with_capacity(elements.len());
        for (i, element) in elements.iter().enumerate() {
            let here = pointer::index(at, i);
            let Value::Object(map) = element else {
                return fail(
                    SYNTAX,
                    &here,
                    "Only JSON object is allowed in array of $or relationship.",
                );
            };
            let items = self.object(map, &here, prefix, true)?;
            alternatives.push((items, here));
        }
        if alternatives.len() < 2 {
            return fail(
                SYNTAX,
                at,
                "There must have at least 2 Objects in $or relationship.",
            );
        }
        Ok(Or {
            pointer: at.to_owned(),
            alternatives,
        })
    }

    /// A leaf's alternatives (EB-12..EB-30): a non-empty array of values and match expressions.
    fn alternatives(&mut self, items: &[Value], at: &str) -> Parsed<Vec<(Matcher, String)>> {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let here = pointer::index(at, i);
            let matcher = match item {
                Value::Object(expression) => self.expression(expression, &here)?,
                Value::String(s) => match Block::address(s) {
                    Some(block) => Matcher::Address(block),
                    None => Matcher::Exact(s.clone()),
                },
                Value::Number(n) => Matcher::Number {
                    text: n.as_str().to_owned(),
                    value: comparable(n.as_str()),
                },
                Value::Bool(b) => Matcher::Bool(*b),
                Value::Null => Matcher::Null,
                Value::Array(_) => {
                    return fail(
                        SYNTAX,
                        &here,
                        "Match value must be String, number, true, false, or null",
                    );
                }
            };
            out.push((matcher, here));
        }
        if out.is_empty() {
            return fail(SYNTAX, at, "Empty arrays are not allowed");
        }
        Ok(out)
    }

    /// A match expression `{op: operand}` (EB-31's order).
    fn expression(&mut self, map: &Map, at: &str) -> Parsed<Matcher> {
        let mut members = map.iter();
        let Some((name, operand)) = members.next() else {
            return fail(SYNTAX, at, "Match expression name not found");
        };
        let here = pointer::push(at, name);
        // A second member, reported once the first is valid.
        let second = members.next().map(|(n, _)| pointer::push(at, n));
        let only_one = |matcher: Matcher| match &second {
            Some(p) => fail(SYNTAX, p, "Only one key allowed in match expression"),
            None => Ok(matcher),
        };
        let too_many = |matcher: Matcher| match &second {
            Some(p) => fail(SYNTAX, p, "Too many elements in numeric expression"),
            None => Ok(matcher),
        };
        let string = |message: &str| match operand {
            Value::String(s) => Ok(s.clone()),
            _ => fail(TYPE, &here, message),
        };
        match name.as_str() {
            "exactly" => only_one(Matcher::Exactly(string(
                "exact match pattern must be a string",
            )?)),
            "prefix" | "suffix" => {
                let prefix = name == "prefix";
                if let Value::Object(inner) = operand {
                    let ignore_case = self.ignore_case_object(inner, &here, prefix)?;
                    return only_one(if prefix {
                        Matcher::PrefixIgnoreCase(ignore_case)
                    } else {
                        Matcher::SuffixIgnoreCase(ignore_case)
                    });
                }
                let s = string(&format!("{name} match pattern must be a string"))?;
                only_one(if prefix {
                    Matcher::Prefix(s)
                } else {
                    Matcher::Suffix(s)
                })
            }
            "numeric" => {
                let Value::Array(terms) = operand else {
                    return fail(TYPE, &here, "Value of numeric must be an array.");
                };
                let (lo, hi) = numeric(terms, &here)?;
                too_many(Matcher::Numeric { lo, hi })
            }
            "anything-but" => {
                let exclusion = self.anything_but(operand, &here)?;
                too_many(Matcher::AnythingBut(exclusion))
            }
            "exists" => match operand {
                Value::Bool(b) => only_one(Matcher::Exists(*b)),
                _ => fail(
                    TYPE,
                    &here,
                    "exists match pattern must be either true or false.",
                ),
            },
            "cidr" => {
                // event-ruler's wording (sic): cidr shares prefix's message.
                let s = string("prefix match pattern must be a string")?;
                match Block::cidr(&s) {
                    Ok(block) => only_one(Matcher::Cidr(block)),
                    Err(e) => fail(VALUE, &here, e.message),
                }
            }
            "equals-ignore-case" => only_one(Matcher::EqualsIgnoreCase(string(
                "equals-ignore-case match pattern must be a string",
            )?)),
            "wildcard" => {
                let s = string("wildcard match pattern must be a string")?;
                only_one(Matcher::Wildcard(wildcard(&s, &here)?))
            }
            other => fail(
                UNKNOWN,
                &here,
                format!(
                    "Unrecognized match type {}{}",
                    excerpt(other),
                    suggestion(other, &OPERATORS)
                ),
            ),
        }
    }

    /// `{"prefix": {"equals-ignore-case": s}}` or the `suffix` one (EB-21): the inner object.
    fn ignore_case_object(&mut self, inner: &Map, at: &str, prefix: bool) -> Parsed<String> {
        let (upper, lower) = if prefix {
            ("Prefix", "prefix")
        } else {
            ("Suffix", "suffix")
        };
        let mut members = inner.iter();
        let Some((name, operand)) = members.next() else {
            return fail(SYNTAX, at, format!("{upper} expression name not found"));
        };
        let here = pointer::push(at, name);
        if name != "equals-ignore-case" {
            return fail(
                UNKNOWN,
                &here,
                format!(
                    "Unsupported {lower} pattern: {}{}",
                    excerpt(name),
                    suggestion(name, &["equals-ignore-case"])
                ),
            );
        }
        let Value::String(s) = operand else {
            return fail(
                TYPE,
                &here,
                "equals-ignore-case match pattern must be a string",
            );
        };
        if let Some((second, _)) = members.next() {
            return fail(
                SYNTAX,
                &pointer::push(at, second),
                "Only one key allowed in match expression",
            );
        }
        Ok(s.clone())
    }

    /// `anything-but`'s operand (EB-23, EB-24).
    fn anything_but(&mut self, operand: &Value, at: &str) -> Parsed<Exclusion> {
        const OPERAND: &str =
            "Value of anything-but must be an array or single string/number value.";
        if let Value::Object(inner) = operand {
            let mut members = inner.iter();
            let Some((name, value)) = members.next() else {
                return fail(SYNTAX, at, "Anything-But expression name not found");
            };
            let here = pointer::push(at, name);
            if !ANYTHING_BUT_OPERATORS.contains(&name.as_str()) {
                return fail(
                    UNKNOWN,
                    &here,
                    format!(
                        "Unsupported anything-but pattern: {}{}",
                        excerpt(name),
                        suggestion(name, &ANYTHING_BUT_OPERATORS)
                    ),
                );
            }
            let exclusion = self.anything_but_set(name, value, &here)?;
            if let Some((second, _)) = members.next() {
                return fail(
                    SYNTAX,
                    &pointer::push(at, second),
                    "Too many elements in numeric expression",
                );
            }
            return Ok(exclusion);
        }
        let (value, value_at) = (operand, at);
        match value {
            Value::String(s) => Ok(Exclusion::Strings(vec![s.clone()])),
            Value::Number(n) => Ok(Exclusion::Numbers(vec![comparable_bound(
                n.as_str(),
                value_at,
            )?])),
            Value::Array(items) => {
                let mut strings = Vec::new();
                let mut numbers = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let here = pointer::index(value_at, i);
                    match item {
                        Value::String(s) => strings.push(s.clone()),
                        Value::Number(n) => numbers.push(comparable_bound(n.as_str(), &here)?),
                        _ => {
                            return fail(
                                TYPE,
                                &here,
                                "Inside anything but list, start|null|boolean is not supported.",
                            );
                        }
                    }
                }
                match (strings.is_empty(), numbers.is_empty()) {
                    (false, true) => Ok(Exclusion::Strings(strings)),
                    (true, false) => Ok(Exclusion::Numbers(numbers)),
                    _ => fail(
                        TYPE,
                        value_at,
                        "Inside anything but list, either all values are number or string, \
                         mixed type is not supported",
                    ),
                }
            }
            _ => fail(TYPE, value_at, OPERAND),
        }
    }

    /// `{"anything-but": {op: operand}}` (EB-24): a string or an array of strings.
    fn anything_but_set(&mut self, op: &str, value: &Value, at: &str) -> Parsed<Exclusion> {
        let not_string = match op {
            "equals-ignore-case" => {
                "Inside anything-but/equals-ignore-case list, number|start|null|boolean is not supported."
            }
            "wildcard" => "wildcard match pattern must be a string",
            _ => "prefix/suffix match pattern must be a string",
        };
        let affix = matches!(op, "prefix" | "suffix");
        let mut strings: Vec<(String, String)> = Vec::new();
        let mut take = |s: &str, here: &str| -> Parsed<()> {
            if affix && s.is_empty() {
                return fail(VALUE, here, "Null prefix/suffix not allowed");
            }
            strings.push((s.to_owned(), here.to_owned()));
            Ok(())
        };
        match value {
            Value::String(s) => take(s, at)?,
            Value::Number(_) => return fail(TYPE, at, not_string),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let here = pointer::index(at, i);
                    match item {
                        Value::String(s) => take(s, &here)?,
                        _ => return fail(TYPE, &here, not_string),
                    }
                }
                if items.is_empty() {
                    // EB-24 DECISION: event-ruler accepts it and then fails matching.
                    return fail(
                        VALUE,
                        at,
                        format!(
                            "Inside anything-but/{op} list, an empty list is not supported: \
                             it would exclude nothing"
                        ),
                    );
                }
            }
            _ => {
                return fail(
                    TYPE,
                    at,
                    "Value of anything-but must be an array or single string/number value.",
                );
            }
        }
        let texts = || strings.iter().map(|(s, _)| s.clone()).collect();
        Ok(match op {
            "equals-ignore-case" => Exclusion::EqualsIgnoreCase(texts()),
            "prefix" => Exclusion::Prefixes(texts()),
            "suffix" => Exclusion::Suffixes(texts()),
            _ => Exclusion::Wildcards(
                strings
                    .iter()
                    .map(|(s, here)| wildcard(s, here))
                    .collect::<Parsed<Vec<Wildcard>>>()?,
            ),
        })
    }
}

/// A wildcard operand (EB-22), checked with event-ruler's messages.
fn wildcard(operand: &str, at: &str) -> Parsed<Wildcard> {
    if let Err(message) = check_wildcard(operand) {
        return fail(VALUE, at, message);
    }
    match Wildcard::compile(operand) {
        Ok(w) => Ok(w),
        // The two grammars agree (a property test checks it); were they to differ, the operand
        // is still rejected.
        Err(e) => fail(VALUE, at, e.message),
    }
}

/// A `numeric` array (EB-26, EB-31's order): its bounds.
fn numeric(terms: &[Value], at: &str) -> Parsed<(Option<Bound>, Option<Bound>)> {
    let term_at = |i: usize| pointer::index(at, i);
    let Some(Value::String(op)) = terms.first() else {
        return fail(
            SYNTAX,
            &term_at(0),
            format!(
                "Invalid member in numeric match: {}",
                excerpt(token(terms.first()))
            ),
        );
    };
    // The operand of `op` at `i`: a number, else "Value of OP must be numeric".
    let operand = |i: usize, shown: &str| -> Parsed<&str> {
        match terms.get(i) {
            Some(Value::Number(n)) => Ok(n.as_str()),
            _ => fail(
                TYPE,
                &term_at(i),
                format!("Value of {} must be numeric", excerpt(shown)),
            ),
        }
    };
    let too_many = |i: usize| -> Parsed<()> {
        match terms.get(i) {
            Some(_) => fail(
                SYNTAX,
                &term_at(i),
                "Too many elements in numeric expression",
            ),
            None => Ok(()),
        }
    };
    let bound = |text: &str, i: usize, inclusive: bool| -> Parsed<Bound> {
        Ok(Bound {
            value: comparable_bound(text, &term_at(i))?,
            inclusive,
        })
    };
    match op.as_str() {
        "=" => {
            let text = operand(1, "equals")?;
            too_many(2)?;
            let b = bound(text, 1, true)?;
            Ok((Some(b), Some(b)))
        }
        "<" | "<=" => {
            let text = operand(1, op)?;
            too_many(2)?;
            Ok((None, Some(bound(text, 1, op == "<=")?)))
        }
        ">" | ">=" => {
            let lo_text = operand(1, op)?;
            let Some(second) = terms.get(2) else {
                return Ok((Some(bound(lo_text, 1, op == ">=")?), None));
            };
            let Value::String(op2) = second else {
                return fail(
                    SYNTAX,
                    &term_at(2),
                    format!(
                        "Bad value in numeric range: {}",
                        excerpt(token(Some(second)))
                    ),
                );
            };
            if op2 != "<" && op2 != "<=" {
                return fail(
                    UNKNOWN,
                    &term_at(2),
                    format!("Bad numeric range operator: {}", excerpt(op2)),
                );
            }
            let hi_text = operand(3, op2)?;
            if terms.get(4).is_some() {
                return fail(
                    SYNTAX,
                    &term_at(4),
                    "Too many terms in numeric range expression",
                );
            }
            let lo = bound(lo_text, 1, op == ">=")?;
            let hi = bound(hi_text, 3, op2 == "<=")?;
            if lo.value >= hi.value {
                return fail(VALUE, at, "Bottom must be less than top");
            }
            Ok((Some(lo), Some(hi)))
        }
        other => fail(
            UNKNOWN,
            &term_at(0),
            format!(
                "Unrecognized numeric range operator: {}{}",
                excerpt(other),
                suggestion(other, &["=", "<", "<=", ">", ">="])
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_error(text: &str) -> (ErrorCode, String, String) {
        let policy = filtervm_vm::json::parse(text.as_bytes()).unwrap();
        let e = Parser::default().pattern(&policy).unwrap_err();
        (e.code, e.pointer, e.message)
    }

    #[test]
    fn eb_22_wildcard_positions_are_utf8_bytes_plus_one() {
        assert_eq!(
            check_wildcard("arn:aws:events:us-east-1:**:event-bus/*"),
            Err("Consecutive wildcard characters at pos 26".into())
        );
        assert_eq!(
            check_wildcard("é**"),
            Err("Consecutive wildcard characters at pos 3".into())
        );
        assert_eq!(
            check_wildcard("a\\b"),
            Err("Invalid escape character at pos 2".into())
        );
        assert_eq!(
            check_wildcard("a\\"),
            Err("Invalid escape character at pos 2".into())
        );
        assert_eq!(check_wildcard("a\\*\\\\*"), Ok(()));
        assert_eq!(check_wildcard(""), Ok(()));
    }

    #[test]
    fn eb_31_first_error_in_document_order() {
        // The first member's error, though the second has one too.
        let (code, at, message) = first_error(r#"{"a": [], "b": "x"}"#);
        assert_eq!((code, at.as_str()), (SYNTAX, "/a"));
        assert_eq!(message, "Empty arrays are not allowed");
        // Depth first: a nested error before a later sibling's.
        let (_, at, message) = first_error(r#"{"a": {"b": {}}, "c": []}"#);
        assert_eq!(
            (at.as_str(), message.as_str()),
            ("/a/b", "Empty objects are not allowed")
        );
        // The operand before a second member.
        let (code, at, _) = first_error(r#"{"a": [{"prefix": 1, "suffix": "b"}]}"#);
        assert_eq!((code, at.as_str()), (TYPE, "/a/0/prefix"));
        let (code, at, message) = first_error(r#"{"a": [{"prefix": "a", "suffix": "b"}]}"#);
        assert_eq!((code, at.as_str()), (SYNTAX, "/a/0/suffix"));
        assert_eq!(message, "Only one key allowed in match expression");
        // A $or element that is not an object, before the count.
        let (_, at, message) = first_error(r#"{"$or": ["b"]}"#);
        assert_eq!(at, "/$or/0");
        assert!(message.starts_with("Only JSON object is allowed"));
        // Reserved names before the value's shape.
        let (_, at, message) = first_error(r#"{"$or": [{"x": {"<": 5}}, {"b": ["2"]}]}"#);
        assert_eq!(at, "/$or/0/x/<");
        assert_eq!(
            message,
            "< is Ruler reserved fieldName which cannot be used inside $or."
        );
    }

    #[test]
    fn eb_31_numeric_messages_in_order() {
        for (operand, expected) in [
            ("[]", "Invalid member in numeric match: ]"),
            ("[5]", "Invalid member in numeric match: 5"),
            ("[{}]", "Invalid member in numeric match: {"),
            (r#"["=", "5"]"#, "Value of equals must be numeric"),
            (r#"["<"]"#, "Value of < must be numeric"),
            (r#"["=", 5, 6]"#, "Too many elements in numeric expression"),
            (r#"[">", 0, 5]"#, "Bad value in numeric range: 5"),
            (r#"[">", 0, ">", 5]"#, "Bad numeric range operator: >"),
            (r#"[">", 0, "<"]"#, "Value of < must be numeric"),
            (
                r#"[">", 0, "<", 5, 6]"#,
                "Too many terms in numeric range expression",
            ),
            (
                r#"[">", 9007199254740993, "<", 1e400]"#,
                "Cannot compare number : 9007199254740993",
            ),
            (r#"[">", 0, "<", 1e400]"#, "Cannot compare number : 1e400"),
            (r#"[">=", 5, "<=", 5]"#, "Bottom must be less than top"),
            (r#"["!=", 5]"#, "Unrecognized numeric range operator: !="),
            (
                r#"["=", 0.30000000000000001]"#,
                "Cannot compare number : 0.30000000000000001",
            ),
        ] {
            let (_, _, message) = first_error(&format!(r#"{{"x": [{{"numeric": {operand}}}]}}"#));
            assert!(message.starts_with(expected), "{operand}: {message}");
        }
        // After a valid operand, a second member.
        let (_, at, message) = first_error(r#"{"x": [{"numeric": ["<", 5], "y": 1}]}"#);
        assert_eq!(
            (at.as_str(), message.as_str()),
            ("/x/0/y", "Too many elements in numeric expression")
        );
    }

    #[test]
    fn eb_31_anything_but_messages() {
        for (operand, expected) in [
            (
                "null",
                "Value of anything-but must be an array or single string/number value.",
            ),
            (
                "true",
                "Value of anything-but must be an array or single string/number value.",
            ),
            ("{}", "Anything-But expression name not found"),
            (
                r#"{"exists": true}"#,
                "Unsupported anything-but pattern: exists",
            ),
            (
                r#"{"prefix": {"equals-ignore-case": "a"}}"#,
                "Value of anything-but must be",
            ),
            (
                r#"{"prefix": 5}"#,
                "prefix/suffix match pattern must be a string",
            ),
            (r#"{"suffix": [""]}"#, "Null prefix/suffix not allowed"),
            (
                r#"{"equals-ignore-case": [1]}"#,
                "Inside anything-but/equals-ignore-case list, number|start|null|boolean is not supported.",
            ),
            (
                r#"{"wildcard": [1]}"#,
                "wildcard match pattern must be a string",
            ),
            (
                r#"{"wildcard": "a**"}"#,
                "Consecutive wildcard characters at pos 2",
            ),
            (
                r#"{"prefix": []}"#,
                "Inside anything-but/prefix list, an empty list",
            ),
            (
                r#"["a", null]"#,
                "Inside anything but list, start|null|boolean is not supported.",
            ),
            (
                "[]",
                "Inside anything but list, either all values are number or string",
            ),
            (r#"["a", 1]"#, "mixed type is not supported"),
            (
                "[9007199254740993]",
                "Cannot compare number : 9007199254740993",
            ),
            ("1e400", "Cannot compare number : 1e400"),
        ] {
            let (_, _, message) =
                first_error(&format!(r#"{{"x": [{{"anything-but": {operand}}}]}}"#));
            assert!(message.contains(expected), "{operand}: {message}");
        }
        let (_, at, message) =
            first_error(r#"{"x": [{"anything-but": {"prefix": "a", "suffix": "b"}}]}"#);
        assert_eq!(
            (at.as_str(), message.as_str()),
            (
                "/x/0/anything-but/suffix",
                "Too many elements in numeric expression"
            )
        );
    }

    #[test]
    fn leaves_are_flattened_in_document_order() {
        let policy = filtervm_vm::json::parse(
            br#"{"a": {"b": ["x"], "c.d": [1]}, "$or": [{"e": [null]}, {"f": {"g": [true]}}], "h": [{"exists": false}]}"#,
        )
        .unwrap();
        let p = Parser::default().pattern(&policy).unwrap();
        let paths: Vec<(String, usize)> = p
            .items
            .iter()
            .flat_map(|i| match i {
                Item::Leaf(l) => vec![(l.path.clone(), l.order)],
                Item::Or(o) => o
                    .alternatives
                    .iter()
                    .flat_map(|(items, _)| {
                        items.iter().filter_map(|i| match i {
                            Item::Leaf(l) => Some((l.path.clone(), l.order)),
                            Item::Or(_) => None,
                        })
                    })
                    .collect(),
            })
            .collect();
        assert_eq!(
            paths,
            [
                ("a.b".into(), 0),
                ("a.c.d".into(), 1),
                ("e".into(), 2),
                ("f.g".into(), 3),
                ("h".into(), 4)
            ]
        );
    }

    #[test]
    fn eb_13_address_strings_and_eb_17_numbers() {
        let policy =
            filtervm_vm::json::parse(br#"{"a": ["10.0.0.1", "1:2", 300, 9007199254740993]}"#)
                .unwrap();
        let p = Parser::default().pattern(&policy).unwrap();
        let Some(Item::Leaf(leaf)) = p.items.first() else {
            panic!("{p:?}")
        };
        let m: Vec<&Matcher> = leaf.alternatives.iter().map(|(m, _)| m).collect();
        assert!(matches!(m[0], Matcher::Address(b) if b.is_single()));
        assert_eq!(m[1], &Matcher::Exact("1:2".into()));
        assert_eq!(
            m[2],
            &Matcher::Number {
                text: "300".into(),
                value: Some(300.0)
            }
        );
        assert_eq!(
            m[3],
            &Matcher::Number {
                text: "9007199254740993".into(),
                value: None
            }
        );
    }
}

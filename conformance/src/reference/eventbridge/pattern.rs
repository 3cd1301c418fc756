//! Reading an event pattern (`docs/dialects/eventbridge-patterns.md` §2, §5): validation in
//! document order, depth first, first error reported (EB-31), into a list of members (leaves and
//! `$or`s) that [`expand`] turns into branches (EB-5, EB-7); then the limits EB-32 and EB-33.
//!
//! The reading follows event-ruler's `JsonRuleCompiler` step by step: where it reads a token,
//! this reads a value, and every check happens at the token it is made on, so that the first
//! error is the same one.

use super::address::{self, Block, Reading};
use super::number::comparable;
use super::text::{Piece, complexity, parse_wildcard};
use super::{
    INVALID_PATTERN, LIMIT_EXCEEDED, MAX_BRANCHES, MAX_COMPLEXITY, MAX_DEPTH, MAX_PATHS_PER_BRANCH,
    MAX_PATTERN_DEPTH, PATTERN_TOO_COMPLEX, PatternError, REFERENCE_LIMIT,
};
use crate::reference::json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// EB-5: member names that are invalid inside a `$or` alternative, at any depth.
const RESERVED_IN_OR: &[&str] = &[
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

/// A numeric bound (EB-26).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bound {
    pub(super) value: f64,
    pub(super) inclusive: bool,
}

/// What an `anything-but` excludes (EB-23, EB-24).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Excluded {
    /// Strings, exactly (no address reading).
    Strings(Vec<String>),
    /// Comparable numbers, numerically.
    Numbers(Vec<f64>),
    /// Strings starting with one of these.
    Prefixes(Vec<String>),
    /// Strings ending with one of these.
    Suffixes(Vec<String>),
    /// Strings EB-20 accepts for one of these.
    IgnoringCase(Vec<String>),
    /// Strings one of these wildcards matches (each kept with its operand text for EB-33).
    Wildcards(Vec<(String, Vec<Piece>)>),
}

/// One alternative of a leaf (EB-12..EB-30).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Alternative {
    /// A string compared exactly (EB-12); also `exactly` (EB-14).
    Exact(String),
    /// A string that is an IP address, compared as an address (EB-13).
    Address(address::Address),
    /// `true`, `false` or `null` (EB-15).
    Literal(Value),
    /// A bare number: its text, and its value when comparable (EB-16).
    Number {
        text: String,
        comparable: Option<f64>,
    },
    /// `prefix` (EB-19).
    Prefix(String),
    /// `suffix` (EB-19).
    Suffix(String),
    /// `equals-ignore-case` (EB-20).
    EqualsIgnoreCase(String),
    /// `prefix` + `equals-ignore-case` (EB-21).
    PrefixIgnoreCase(String),
    /// `suffix` + `equals-ignore-case` (EB-21).
    SuffixIgnoreCase(String),
    /// `wildcard` (EB-22): the operand and its pieces.
    Wildcard(String, Vec<Piece>),
    /// `anything-but` (EB-23..EB-25).
    AnythingBut(Excluded),
    /// `numeric` (EB-26): lower and upper bounds.
    Numeric(Option<Bound>, Option<Bound>),
    /// `cidr` (EB-27).
    Cidr(Block),
    /// `exists` (EB-30).
    Exists(bool),
}

/// A leaf: its alternatives, ORed.
pub(super) type Leaf = Rc<Vec<Alternative>>;

/// A member of a pattern object, its nested objects flattened into it in document order.
#[derive(Debug, Clone)]
pub(super) enum Member {
    /// A leaf at a path (EB-3: names joined with `.`).
    Leaf(String, Leaf),
    /// A `$or`: each alternative's members.
    Or(Vec<Vec<Member>>),
}

/// A branch (EB-5): path → leaf, each path once (EB-7).
pub(super) type Branch = BTreeMap<String, Leaf>;

/// A token as event-ruler's messages write it (T in EB-31): a number's text, `true`, `{`, ...;
/// `]` when the array has ended.
fn token(value: Option<&Value>) -> String {
    match value {
        None => "]".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.as_str().to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(_)) => "[".to_owned(),
        Some(Value::Object(_)) => "{".to_owned(),
    }
}

/// RFC 6901 escaping of one pointer segment.
fn segment(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The reader: where it is (a JSON Pointer, as segments) and how deep.
struct Reader {
    pointer: Vec<String>,
}

type Read<T> = Result<T, PatternError>;

impl Reader {
    fn error(&self, message: impl Into<String>) -> PatternError {
        PatternError {
            code: INVALID_PATTERN,
            pointer: self.pointer.iter().map(|s| format!("/{s}")).collect(),
            message: message.into(),
        }
    }

    /// Runs `f` one pointer segment down.
    fn at<T>(&mut self, segment_text: String, f: impl FnOnce(&mut Reader) -> Read<T>) -> Read<T> {
        self.pointer.push(segment_text);
        let out = f(self);
        self.pointer.pop();
        out
    }

    /// Reading `value` as a token at nesting `depth` (1 for the pattern object): an array or
    /// object there is one level deeper than Jackson reads (EB-34).
    fn read_token(&self, value: &Value, depth: usize) -> Read<()> {
        if matches!(value, Value::Array(_) | Value::Object(_)) && depth > MAX_DEPTH {
            return Err(self.error(format!(
                "Document nesting depth ({depth}) exceeds the maximum allowed ({MAX_DEPTH})"
            )));
        }
        Ok(())
    }

    /// EB-4: a pattern object (or `$or` alternative, when `in_or`) at nesting `depth`, its
    /// members appended to `out`; `prefix` is the path so far (`None` at the top).
    fn object(
        &mut self,
        map: &Map,
        prefix: Option<&str>,
        in_or: bool,
        depth: usize,
        out: &mut Vec<Member>,
    ) -> Read<()> {
        for (name, value) in map {
            self.at(segment(name), |r| {
                if name == "$or" {
                    let alternatives = r.or(value, prefix, depth)?;
                    out.push(Member::Or(alternatives));
                    return Ok(());
                }
                if in_or && RESERVED_IN_OR.contains(&name.as_str()) {
                    return Err(r.error(format!(
                        "{name} is Ruler reserved fieldName which cannot be used inside $or."
                    )));
                }
                r.read_token(value, depth + 1)?;
                let path = match prefix {
                    Some(p) => format!("{p}.{name}"),
                    None => name.clone(),
                };
                match value {
                    Value::Object(child) => r.object(child, Some(&path), in_or, depth + 1, out),
                    Value::Array(items) => {
                        let leaf = r.leaf(items, depth + 1)?;
                        out.push(Member::Leaf(path, Rc::new(leaf)));
                        Ok(())
                    }
                    _ => Err(r.error(format!("\"{name}\" must be an object or an array"))),
                }
            })?;
        }
        if map.is_empty() {
            return Err(self.error("Empty objects are not allowed"));
        }
        Ok(())
    }

    /// EB-5: the value of a `$or` member of an object at nesting `depth`.
    fn or(&mut self, value: &Value, prefix: Option<&str>, depth: usize) -> Read<Vec<Vec<Member>>> {
        self.read_token(value, depth + 1)?;
        let Value::Array(items) = value else {
            return Err(self.error("It must be an Array followed with $or."));
        };
        let mut alternatives = Vec::new();
        for (i, item) in items.iter().enumerate() {
            self.at(i.to_string(), |r| {
                r.read_token(item, depth + 2)?;
                let Value::Object(map) = item else {
                    return Err(
                        r.error("Only JSON object is allowed in array of $or relationship.")
                    );
                };
                let mut members = Vec::new();
                r.object(map, prefix, true, depth + 2, &mut members)?;
                alternatives.push(members);
                Ok(())
            })?;
        }
        if items.len() < 2 {
            return Err(self.error("There must have at least 2 Objects in $or relationship."));
        }
        Ok(alternatives)
    }

    /// EB-4: a leaf's array (at nesting `depth`) of alternatives.
    fn leaf(&mut self, items: &[Value], depth: usize) -> Read<Vec<Alternative>> {
        let mut alternatives = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let alternative = self.at(i.to_string(), |r| {
                r.read_token(item, depth + 1)?;
                match item {
                    Value::Object(map) => r.match_expression(map, depth + 1),
                    Value::String(s) => Ok(match address::read(s) {
                        Reading::Address(a) => Alternative::Address(a),
                        Reading::NotShaped | Reading::Invalid => Alternative::Exact(s.clone()),
                    }),
                    Value::Number(n) => Ok(Alternative::Number {
                        text: n.as_str().to_owned(),
                        comparable: comparable(n.as_str()),
                    }),
                    Value::Bool(_) | Value::Null => Ok(Alternative::Literal(item.clone())),
                    Value::Array(_) => {
                        Err(r.error("Match value must be String, number, true, false, or null"))
                    }
                }
            })?;
            alternatives.push(alternative);
        }
        if alternatives.is_empty() {
            return Err(self.error("Empty arrays are not allowed"));
        }
        Ok(alternatives)
    }

    /// Fails when `rest` holds another member ("second member after a valid operand").
    fn only_one(
        &mut self,
        rest: &mut dyn Iterator<Item = (&String, &Value)>,
        message: &str,
    ) -> Read<()> {
        match rest.next() {
            Some((name, _)) => {
                let name = segment(name);
                self.at(name, |r| Err(r.error(message)))
            }
            None => Ok(()),
        }
    }

    /// A match expression object (an alternative that is an object) at nesting `depth`.
    fn match_expression(&mut self, map: &Map, depth: usize) -> Read<Alternative> {
        const ONE_KEY: &str = "Only one key allowed in match expression";
        const TOO_MANY: &str = "Too many elements in numeric expression";
        let mut members = map.iter();
        let Some((name, operand)) = members.next() else {
            return Err(self.error("Match expression name not found"));
        };
        let alternative = self.at(segment(name), |r| {
            r.read_token(operand, depth + 1)?;
            let string = |r: &Reader, message: &str| match operand {
                Value::String(s) => Ok(s.clone()),
                _ => Err(r.error(message)),
            };
            Ok(match name.as_str() {
                "exactly" => Alternative::Exact(string(r, "exact match pattern must be a string")?),
                "prefix" | "suffix" => {
                    if let Value::Object(inner) = operand {
                        return r.affix_ignoring_case(name, inner, depth + 1);
                    }
                    let s = string(r, &format!("{name} match pattern must be a string"))?;
                    if name == "prefix" {
                        Alternative::Prefix(s)
                    } else {
                        Alternative::Suffix(s)
                    }
                }
                "numeric" => {
                    let Value::Array(items) = operand else {
                        return Err(r.error("Value of numeric must be an array."));
                    };
                    r.numeric(items, depth + 1)?
                }
                "anything-but" => r.anything_but(operand, depth + 1)?,
                "exists" => match operand {
                    Value::Bool(b) => Alternative::Exists(*b),
                    _ => return Err(r.error("exists match pattern must be either true or false.")),
                },
                "cidr" => {
                    let s = string(r, "prefix match pattern must be a string")?;
                    Alternative::Cidr(address::cidr(&s).map_err(|m| r.error(m))?)
                }
                "equals-ignore-case" => Alternative::EqualsIgnoreCase(string(
                    r,
                    "equals-ignore-case match pattern must be a string",
                )?),
                "wildcard" => {
                    let s = string(r, "wildcard match pattern must be a string")?;
                    let pieces = parse_wildcard(&s).map_err(|m| r.error(m))?;
                    Alternative::Wildcard(s, pieces)
                }
                _ => return Err(r.error(format!("Unrecognized match type {name}"))),
            })
        })?;
        let second = match alternative {
            Alternative::Numeric(..) | Alternative::AnythingBut(_) => TOO_MANY,
            _ => ONE_KEY,
        };
        self.only_one(&mut members, second)?;
        Ok(alternative)
    }

    /// EB-21: `{"prefix": {"equals-ignore-case": s}}` and the `suffix` form, from the inner
    /// object (at nesting `depth`).
    fn affix_ignoring_case(&mut self, op: &str, inner: &Map, depth: usize) -> Read<Alternative> {
        let title = if op == "prefix" { "Prefix" } else { "Suffix" };
        let mut members = inner.iter();
        let Some((name, operand)) = members.next() else {
            return Err(self.error(format!("{title} expression name not found")));
        };
        let s = self.at(segment(name), |r| {
            if name != "equals-ignore-case" {
                return Err(r.error(format!("Unsupported {op} pattern: {name}")));
            }
            r.read_token(operand, depth + 1)?;
            match operand {
                Value::String(s) => Ok(s.clone()),
                _ => Err(r.error("equals-ignore-case match pattern must be a string")),
            }
        })?;
        self.only_one(&mut members, "Only one key allowed in match expression")?;
        Ok(if op == "prefix" {
            Alternative::PrefixIgnoreCase(s)
        } else {
            Alternative::SuffixIgnoreCase(s)
        })
    }

    /// A numeric bound's value: comparable (EB-17), else "Cannot compare number".
    fn bound(&self, n: &Value) -> Read<f64> {
        let text = token(Some(n));
        comparable(&text).ok_or_else(|| self.error(format!("Cannot compare number : {text}")))
    }

    /// EB-26: the array of a `numeric` expression (at nesting `depth`).
    fn numeric(&mut self, items: &[Value], depth: usize) -> Read<Alternative> {
        const TOO_MANY: &str = "Too many elements in numeric expression";
        let at = |i: usize| items.get(i);
        let first = at(0);
        if let Some(v) = first {
            self.read_token(v, depth + 1)?;
        }
        let Some(Value::String(op)) = first else {
            return Err(self.error(format!("Invalid member in numeric match: {}", token(first))));
        };
        let operand = at(1);
        if let Some(v) = operand {
            self.read_token(v, depth + 1)?;
        }
        let number = |r: &Reader, shown: &str| match operand {
            Some(n @ Value::Number(_)) => Ok(n),
            _ => Err(r.error(format!("Value of {shown} must be numeric"))),
        };
        // After a one-sided operand: nothing may follow.
        let end = |r: &Reader| match at(2) {
            Some(v) => {
                r.read_token(v, depth + 1)?;
                Err(r.error(TOO_MANY))
            }
            None => Ok(()),
        };
        let bound = |value: f64, inclusive: bool| Some(Bound { value, inclusive });
        match op.as_str() {
            "=" => {
                let n = number(self, "equals")?;
                end(self)?;
                let v = self.bound(n)?;
                Ok(Alternative::Numeric(bound(v, true), bound(v, true)))
            }
            "<" | "<=" => {
                let n = number(self, op)?;
                end(self)?;
                let v = self.bound(n)?;
                Ok(Alternative::Numeric(None, bound(v, op == "<=")))
            }
            ">" | ">=" => {
                let lo = number(self, op)?;
                let Some(second) = at(2) else {
                    let v = self.bound(lo)?;
                    return Ok(Alternative::Numeric(bound(v, op == ">="), None));
                };
                self.read_token(second, depth + 1)?;
                let Value::String(op2) = second else {
                    return Err(self.error(format!(
                        "Bad value in numeric range: {}",
                        token(Some(second))
                    )));
                };
                if op2 != "<" && op2 != "<=" {
                    return Err(self.error(format!("Bad numeric range operator: {op2}")));
                }
                let hi = at(3);
                if let Some(v) = hi {
                    self.read_token(v, depth + 1)?;
                }
                let Some(hi @ Value::Number(_)) = hi else {
                    return Err(self.error(format!("Value of {op2} must be numeric")));
                };
                if let Some(v) = at(4) {
                    self.read_token(v, depth + 1)?;
                    return Err(self.error("Too many terms in numeric range expression"));
                }
                let (lo, hi) = (self.bound(lo)?, self.bound(hi)?);
                if lo >= hi {
                    return Err(self.error("Bottom must be less than top"));
                }
                Ok(Alternative::Numeric(
                    bound(lo, op == ">="),
                    bound(hi, op2 == "<="),
                ))
            }
            _ => Err(self.error(format!("Unrecognized numeric range operator: {op}"))),
        }
    }

    /// EB-23, EB-24: the operand of `anything-but` (at nesting `depth`).
    fn anything_but(&mut self, operand: &Value, depth: usize) -> Read<Alternative> {
        let Value::Object(inner) = operand else {
            return self
                .anything_but_values(operand, depth)
                .map(Alternative::AnythingBut);
        };
        let mut members = inner.iter();
        let Some((name, nested)) = members.next() else {
            return Err(self.error("Anything-But expression name not found"));
        };
        let excluded = self.at(segment(name), |r| {
            let kind = match name.as_str() {
                "equals-ignore-case" | "prefix" | "suffix" | "wildcard" => name.as_str(),
                _ => return Err(r.error(format!("Unsupported anything-but pattern: {name}"))),
            };
            r.read_token(nested, depth + 1)?;
            r.anything_but_set(kind, nested, depth + 1)
        })?;
        self.only_one(&mut members, "Too many elements in numeric expression")?;
        Ok(Alternative::AnythingBut(excluded))
    }

    /// The operand of a plain `anything-but`: a string, a number, or a non-empty list of only
    /// strings or only numbers (each number comparable).
    fn anything_but_values(&mut self, operand: &Value, depth: usize) -> Read<Excluded> {
        let (mut strings, mut numbers) = (Vec::new(), Vec::new());
        match operand {
            Value::String(s) => strings.push(s.clone()),
            Value::Number(_) => numbers.push(self.bound(operand)?),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.at(i.to_string(), |r| {
                        r.read_token(item, depth + 1)?;
                        match item {
                            Value::String(s) => strings.push(s.clone()),
                            Value::Number(_) => numbers.push(r.bound(item)?),
                            _ => {
                                return Err(r.error(
                                    "Inside anything but list, start|null|boolean is not supported.",
                                ));
                            }
                        }
                        Ok(())
                    })?;
                }
                if strings.is_empty() == numbers.is_empty() {
                    return Err(self.error(
                        "Inside anything but list, either all values are number or string, mixed type is not supported",
                    ));
                }
            }
            _ => return Err(self.error(ANYTHING_BUT_TYPE)),
        }
        Ok(if numbers.is_empty() {
            Excluded::Strings(strings)
        } else {
            Excluded::Numbers(numbers)
        })
    }

    /// The nested operand of `anything-but` with `kind` (`prefix`, `suffix`,
    /// `equals-ignore-case`, `wildcard`): a string or a non-empty list of strings.
    fn anything_but_set(&mut self, kind: &str, operand: &Value, depth: usize) -> Read<Excluded> {
        let not_string = match kind {
            "equals-ignore-case" => {
                "Inside anything-but/equals-ignore-case list, number|start|null|boolean is not supported."
            }
            "wildcard" => "wildcard match pattern must be a string",
            _ => "prefix/suffix match pattern must be a string",
        };
        let affix = kind == "prefix" || kind == "suffix";
        let check = |r: &Reader, item: &Value| match item {
            Value::String(s) if affix && s.is_empty() => {
                Err(r.error("Null prefix/suffix not allowed"))
            }
            Value::String(s) => Ok(s.clone()),
            _ => Err(r.error(not_string)),
        };
        let mut strings = Vec::new();
        match operand {
            Value::String(_) | Value::Number(_) => strings.push(check(self, operand)?),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let s = self.at(i.to_string(), |r| {
                        r.read_token(item, depth + 1)?;
                        check(r, item)
                    })?;
                    strings.push(s);
                }
                // DECISION (EB-24): an empty list is invalid.
                if strings.is_empty() {
                    return Err(self.error(format!(
                        "Inside anything-but/{kind} list, an empty list is not allowed"
                    )));
                }
            }
            _ => return Err(self.error(ANYTHING_BUT_TYPE)),
        }
        Ok(match kind {
            "prefix" => Excluded::Prefixes(strings),
            "suffix" => Excluded::Suffixes(strings),
            "equals-ignore-case" => Excluded::IgnoringCase(strings),
            _ => {
                // Every element's type first, then the wildcard syntax (EB-31).
                let mut wildcards = Vec::new();
                for (i, s) in strings.into_iter().enumerate() {
                    let pieces = match parse_wildcard(&s) {
                        Ok(p) => p,
                        Err(m) if operand.is_array() => {
                            return self.at(i.to_string(), |r| Err(r.error(m)));
                        }
                        Err(m) => return Err(self.error(m)),
                    };
                    wildcards.push((s, pieces));
                }
                Excluded::Wildcards(wildcards)
            }
        })
    }
}

const ANYTHING_BUT_TYPE: &str =
    "Value of anything-but must be an array or single string/number value.";

/// The first array or object (in document order) nested deeper than [`MAX_PATTERN_DEPTH`]
/// levels (the pattern object is level 1): `LIMIT_EXCEEDED` at its pointer, before anything else
/// is read (the compiler reads pattern text no deeper; EB-34 bounds events, not patterns).
/// Iterative, so that any depth is safe.
fn too_deep(policy: &Value) -> Read<()> {
    let mut stack: Vec<(&Value, usize, String)> = vec![(policy, 1, String::new())];
    while let Some((value, depth, pointer)) = stack.pop() {
        let children: Vec<(&Value, String)> = match value {
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| (v, format!("{pointer}/{}", segment(k))))
                .collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (v, format!("{pointer}/{i}")))
                .collect(),
            _ => continue,
        };
        if depth > MAX_PATTERN_DEPTH {
            return Err(PatternError {
                code: LIMIT_EXCEEDED,
                pointer,
                message: format!(
                    "the pattern nests arrays and objects deeper than {MAX_PATTERN_DEPTH} levels"
                ),
            });
        }
        for (child, at) in children.into_iter().rev() {
            stack.push((child, depth + 1, at));
        }
    }
    Ok(())
}

/// EB-31: reads and validates a pattern into its members, after the depth bound
/// ([`MAX_PATTERN_DEPTH`]).
pub(super) fn read(policy: &Value) -> Read<Vec<Member>> {
    too_deep(policy)?;
    let mut reader = Reader {
        pointer: Vec::new(),
    };
    let Value::Object(map) = policy else {
        return Err(reader.error("Filter is not an object"));
    };
    let mut members = Vec::new();
    reader.object(map, None, false, 1, &mut members)?;
    Ok(members)
}

/// EB-5, EB-7: the branches of a pattern's members, in order: reading members in document
/// order with a list of branches (initially one empty branch), a leaf is written into every
/// current branch (replacing the path's earlier leaf), and `$or` replaces the list by, for each
/// alternative in order, copies of the current branches with its members read into them.
/// `Err` beyond [`MAX_BRANCHES`] branches (the reference's bound, not a pattern error).
pub(super) fn expand(members: &[Member]) -> Read<Vec<Branch>> {
    fn apply(members: &[Member], branches: &mut Vec<Branch>) -> Read<()> {
        for member in members {
            match member {
                Member::Leaf(path, leaf) => {
                    for branch in branches.iter_mut() {
                        branch.insert(path.clone(), Rc::clone(leaf));
                    }
                }
                Member::Or(alternatives) => {
                    let current = std::mem::take(branches);
                    for alternative in alternatives {
                        let mut copies = current.clone();
                        apply(alternative, &mut copies)?;
                        branches.extend(copies);
                        if branches.len() > MAX_BRANCHES {
                            return Err(PatternError {
                                code: REFERENCE_LIMIT,
                                pointer: String::new(),
                                message: format!(
                                    "the pattern expands into more than {MAX_BRANCHES} branches, more than the reference interpreter materialises"
                                ),
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }
    let mut branches = vec![Branch::new()];
    apply(members, &mut branches)?;
    Ok(branches)
}

/// EB-32 then EB-33, on a pattern that passed EB-31.
pub(super) fn check_limits(branches: &[Branch]) -> Read<()> {
    if let Some(n) = branches
        .iter()
        .map(BTreeMap::len)
        .find(|&n| n > MAX_PATHS_PER_BRANCH)
    {
        return Err(PatternError {
            code: LIMIT_EXCEEDED,
            pointer: String::new(),
            message: format!(
                "Size of rule exceeds max value of {MAX_PATHS_PER_BRANCH}: one branch of the pattern has {n} paths"
            ),
        });
    }
    // EB-33: per path, the distinct wildcard operands of the leaves that survive in some branch
    // (plain and anything-but kept apart).
    let mut operands: BTreeMap<&str, BTreeSet<(bool, &str)>> = BTreeMap::new();
    let mut pieces: BTreeMap<(bool, &str), &[Piece]> = BTreeMap::new();
    let mut seen_leaves = BTreeSet::new();
    for branch in branches {
        for (path, leaf) in branch {
            if !seen_leaves.insert((path.as_str(), Rc::as_ptr(leaf))) {
                continue;
            }
            for alternative in leaf.iter() {
                match alternative {
                    Alternative::Wildcard(text, p) => {
                        operands
                            .entry(path)
                            .or_default()
                            .insert((false, text.as_str()));
                        pieces.insert((false, text.as_str()), p);
                    }
                    Alternative::AnythingBut(Excluded::Wildcards(list)) => {
                        for (text, p) in list {
                            operands
                                .entry(path)
                                .or_default()
                                .insert((true, text.as_str()));
                            pieces.insert((true, text.as_str()), p);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    for (path, set) in operands {
        let list: Vec<Vec<Piece>> = set
            .iter()
            .filter_map(|key| pieces.get(key).map(|p| p.to_vec()))
            .collect();
        let score = complexity(&list, MAX_COMPLEXITY).map_err(|m| PatternError {
            code: REFERENCE_LIMIT,
            pointer: String::new(),
            message: m,
        })?;
        if score > MAX_COMPLEXITY {
            return Err(PatternError {
                code: PATTERN_TOO_COMPLEX,
                pointer: String::new(),
                message: format!(
                    "Rule is too complex - try using fewer wildcard characters or fewer repeating character sequences after a wildcard character (path `{path}` scores above {MAX_COMPLEXITY})"
                ),
            });
        }
    }
    Ok(())
}

//! The `basaltic` dialect: the notification service's filter policies
//! (`docs/dialects/basaltic-filters.md`, building on `docs/dialects/000_e1d4924fe41b969f.txt`).
//!
//! A policy maps attribute names to non-empty arrays of alternatives; names are ANDed,
//! alternatives ORed (B-1). Every matcher reads the attribute's value *text* (B-4), so lowering
//! uses [`Key::AttributeText`]; bare numbers compare their canonical text (B-6) and `numeric`
//! parses the text with the JSON number grammar (B-10).

use crate::error::pointer::{self, Lazy};
use crate::error::{CompileError, ErrorCode, MessageError, PolicyError, excerpt};
use crate::ir::{Case, IntoOrigin, Node, NumSource, Pred, StrOp};
use crate::options::Options;
use filtervm_vm::json::{Arena, NumberRef, Value, ValueRef};
use filtervm_vm::key::Key;
use filtervm_vm::message::{AttributeType, Message};
use filtervm_vm::number::canonical_number_text;
use filtervm_vm::program::Interval;
use filtervm_vm::value::Shapes;
use std::sync::Arc;

/// The code of every policy error (B-12).
const CODE: ErrorCode = ErrorCode::NotificationInvalidFilterPolicy;
/// The operators of B-7..B-10.
pub const OPERATORS: [&str; 5] = ["prefix", "suffix", "anything-but", "exists", "numeric"];
/// Most attribute names in a policy (B-12) and attributes on a message (B-13).
pub const MAX_NAMES: usize = 20;
/// Most alternatives for one attribute, and most `anything-but` values (B-12).
pub const MAX_ALTERNATIVES: usize = 50;
/// Longest attribute name on a message, in bytes (B-13).
pub const MAX_ATTRIBUTE_NAME_BYTES: usize = 256;
/// Longest attribute value on a message, in bytes (B-13).
pub const MAX_ATTRIBUTE_VALUE_BYTES: usize = 1024;

/// A validated policy. Its names, pointers and strings are shared (`Arc<str>`): the lowered IR
/// holds them as its keys, origins and constants without copying them.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Attribute conditions in policy order: name, pointer, alternatives.
    pub attributes: Vec<AttributeCondition>,
}

/// One attribute's alternatives.
///
/// [`parse`] and [`parse_ref`] give every pointer. Only the policy lowered straight for the
/// optimizer (`compile_text`) is parsed without the pointers its tree does not read
/// (`Reads`): those are `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeCondition {
    /// The attribute name.
    pub name: Arc<str>,
    /// Its JSON Pointer.
    pub pointer: Option<Arc<str>>,
    /// The alternatives (ORed) with their pointers.
    pub alternatives: Vec<(Matcher, Option<Arc<str>>)>,
}

/// A comparison operator of `numeric` (B-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `=`
    Eq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// One alternative.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// `"s"` (B-5).
    Exact(Arc<str>),
    /// A bare number, kept as its canonical text (B-6).
    Number(Arc<str>),
    /// `{"prefix": s}` (B-7).
    Prefix(Arc<str>),
    /// `{"suffix": s}` (B-7).
    Suffix(Arc<str>),
    /// `{"anything-but": ...}`: the excluded texts (B-8).
    AnythingBut(Vec<Arc<str>>),
    /// `{"exists": b}` (B-9).
    Exists(bool),
    /// `{"numeric": [op, n, ...]}` (B-10).
    Numeric(Vec<(Cmp, f64)>),
}

/// Parses and validates a policy, collecting every error (B-12).
pub fn parse(policy: &Value) -> Result<Policy, CompileError> {
    Arena::with_local(|arena| parse_ref(arena.value(policy)))
}

/// Parses and validates a policy read as a borrowed tree, collecting every error (B-12).
pub fn parse_ref(policy: ValueRef<'_>) -> Result<Policy, CompileError> {
    parse_ref_with(policy, false)
}

/// [`parse_ref`]; `to_optimize`: only the pointers [`lower_to_optimize`] reads are made (see
/// [`Reads`]), the others are `None`. The errors are the same.
fn parse_ref_with(policy: ValueRef<'_>, to_optimize: bool) -> Result<Policy, CompileError> {
    let mut errors = Vec::new();
    let ValueRef::Object(members) = policy else {
        return Err(CompileError::one(
            CODE,
            "",
            "a filter policy must be a JSON object",
        ));
    };
    let mut attributes = Vec::with_capacity(members.len().min(MAX_NAMES));
    // Each member's and alternative's pointer is written in place into this one buffer (an
    // alternative's after its member's, truncated back after) and copied once, into the
    // `Arc<str>` the policy and the IR nodes lowered from it share.
    let mut buffer = String::with_capacity(64);
    for (i, (name, value)) in members.iter().enumerate() {
        buffer.clear();
        pointer::push_token(&mut buffer, name);
        if i == MAX_NAMES {
            errors.push(PolicyError::new(
                CODE,
                buffer.as_str(),
                format!("a filter policy names at most {MAX_NAMES} attributes"),
            ));
        }
        if *name == "$or" {
            errors.push(PolicyError::new(
                CODE,
                buffer.as_str(),
                "`$or` is not supported by this service: names are always ANDed",
            ));
            continue;
        }
        if let Some(mut alternatives) =
            parse_alternatives(value, &mut buffer, to_optimize, &mut errors)
        {
            // `buffer` holds the attribute's pointer again.
            let reads = if to_optimize {
                Reads::of(&alternatives)
            } else {
                Reads::All
            };
            // The alternatives' pointers it reads and `parse_alternatives` left out.
            let missing = match reads {
                Reads::First => 1,
                Reads::All if to_optimize => alternatives.len(),
                Reads::Member | Reads::All => 0,
            };
            let len = buffer.len();
            for (i, (_, at)) in alternatives.iter_mut().enumerate().take(missing) {
                pointer::push_index(&mut buffer, i);
                *at = Some(buffer.as_str().into());
                buffer.truncate(len);
            }
            attributes.push(AttributeCondition {
                name: (*name).into(),
                pointer: (reads != Reads::First).then(|| buffer.as_str().into()),
                alternatives,
            });
        }
    }
    if errors.is_empty() {
        Ok(Policy { attributes })
    } else {
        Err(errors.into())
    }
}

/// An attribute's alternatives, each with its pointer (written after the attribute's, which
/// `buffer` holds, then shared), unless `to_optimize` (the caller makes the pointers
/// [`lower_to_optimize`] reads). `buffer` is left holding the attribute's pointer.
fn parse_alternatives(
    value: &ValueRef<'_>,
    buffer: &mut String,
    to_optimize: bool,
    errors: &mut Vec<PolicyError>,
) -> Option<Vec<(Matcher, Option<Arc<str>>)>> {
    let at = buffer.as_str();
    let ValueRef::Array(items) = value else {
        let what = if matches!(value, ValueRef::Object(_)) {
            "nested objects (body matching) are not supported; the value must be an array of alternatives"
        } else {
            "the value must be an array of alternatives"
        };
        errors.push(PolicyError::new(CODE, at, what));
        return None;
    };
    if !list_length_ok(items, at, "an attribute's alternatives", errors) {
        return None;
    }
    let before = errors.len();
    let mut alternatives = Vec::with_capacity(items.len());
    let len = buffer.len();
    for (i, item) in items.iter().enumerate() {
        pointer::push_index(buffer, i);
        if let Some(m) = parse_matcher(item, buffer, errors) {
            alternatives.push((m, (!to_optimize).then(|| buffer.as_str().into())));
        }
        buffer.truncate(len);
    }
    (errors.len() == before).then_some(alternatives)
}

/// B-12: an alternatives or `anything-but` list holds 1 to [`MAX_ALTERNATIVES`] entries; the
/// error points at the list when it is empty and at the first entry past the limit otherwise.
fn list_length_ok(
    items: &[ValueRef<'_>],
    at: &str,
    what: &str,
    errors: &mut Vec<PolicyError>,
) -> bool {
    if items.is_empty() {
        errors.push(PolicyError::new(
            CODE,
            at,
            format!("{what} must not be empty"),
        ));
        return false;
    }
    if items.len() > MAX_ALTERNATIVES {
        errors.push(PolicyError::new(
            CODE,
            pointer::index(at, MAX_ALTERNATIVES),
            format!(
                "{what}: at most {MAX_ALTERNATIVES} entries, found {}",
                items.len()
            ),
        ));
        return false;
    }
    true
}

fn number_text(n: &NumberRef<'_>, at: &str, errors: &mut Vec<PolicyError>) -> Option<Arc<str>> {
    match finite(n) {
        Some(x) => Some(canonical_number_text(x).into()),
        None => {
            errors.push(PolicyError::new(
                CODE,
                at,
                format!("the number {} is not finite as a binary64", excerpt(n)),
            ));
            None
        }
    }
}

fn finite(n: &NumberRef<'_>) -> Option<f64> {
    n.as_f64()
}

fn parse_matcher(item: &ValueRef<'_>, at: &str, errors: &mut Vec<PolicyError>) -> Option<Matcher> {
    match item {
        ValueRef::String(s) => Some(Matcher::Exact((*s).into())),
        ValueRef::Number(n) => number_text(n, at, errors).map(Matcher::Number),
        ValueRef::Object(op) => {
            if op.len() != 1 {
                errors.push(PolicyError::new(
                    CODE,
                    at,
                    format!(
                        "an operator object holds exactly one operator, found {}",
                        op.len()
                    ),
                ));
                return None;
            }
            let (name, operand) = op.iter().next()?;
            // The operator's pointer names only its errors: written when one is reported.
            parse_operator(name, operand, &Lazy::new(at).token(name), errors)
        }
        ValueRef::Null | ValueRef::Bool(_) | ValueRef::Array(_) => {
            errors.push(PolicyError::new(
                CODE,
                at,
                "an alternative must be a string, a number or an operator object (null, booleans and arrays are not allowed)",
            ));
            None
        }
    }
}

fn parse_operator(
    name: &str,
    operand: &ValueRef<'_>,
    at: &Lazy<'_>,
    errors: &mut Vec<PolicyError>,
) -> Option<Matcher> {
    let mut fail = |message: String| {
        errors.push(PolicyError::new(CODE, at, message));
        None
    };
    match name {
        "prefix" | "suffix" => match operand {
            ValueRef::String(s) if !s.is_empty() => Some(if name == "prefix" {
                Matcher::Prefix((*s).into())
            } else {
                Matcher::Suffix((*s).into())
            }),
            ValueRef::String(_) => fail(format!("`{name}` must not be empty")),
            _ => fail(format!("`{name}` takes a non-empty string")),
        },
        "exists" => match operand {
            ValueRef::Bool(b) => Some(Matcher::Exists(*b)),
            _ => fail("`exists` takes true or false".to_owned()),
        },
        "anything-but" => parse_anything_but(operand, at, errors),
        "numeric" => parse_numeric(operand, at, errors),
        "wildcard" | "equals-ignore-case" | "cidr" | "$or" => fail(format!(
            "the `{name}` operator is not supported by this service"
        )),
        other => fail(format!(
            "unknown operator `{}`{}",
            excerpt(other),
            crate::error::suggestion(other, &OPERATORS)
        )),
    }
}

fn parse_anything_but(
    operand: &ValueRef<'_>,
    at: &Lazy<'_>,
    errors: &mut Vec<PolicyError>,
) -> Option<Matcher> {
    let value_text =
        |v: &ValueRef<'_>, at: &Lazy<'_>, errors: &mut Vec<PolicyError>| -> Option<Arc<str>> {
            match v {
                ValueRef::String(s) => Some((*s).into()),
                ValueRef::Number(n) => match finite(n) {
                    Some(x) => Some(canonical_number_text(x).into()),
                    None => number_text(n, &at.get(), errors),
                },
                ValueRef::Object(_) => {
                    errors.push(PolicyError::new(
                        CODE,
                        at,
                        "`anything-but` with an operator inside is not supported",
                    ));
                    None
                }
                _ => {
                    errors.push(PolicyError::new(
                        CODE,
                        at,
                        "`anything-but` values must be strings or numbers",
                    ));
                    None
                }
            }
        };
    match operand {
        ValueRef::Array(items) => {
            // The pointer is built only for the error (a list of the right length needs none).
            let length_ok = (1..=MAX_ALTERNATIVES).contains(&items.len())
                || list_length_ok(items, &at.get(), "the `anything-but` values", errors);
            if !length_ok {
                return None;
            }
            let before = errors.len();
            let texts: Vec<Arc<str>> = items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| value_text(v, &at.index(i), errors))
                .collect();
            (errors.len() == before).then_some(Matcher::AnythingBut(texts))
        }
        single => value_text(single, at, errors).map(|t| Matcher::AnythingBut(vec![t])),
    }
}

fn parse_numeric(
    operand: &ValueRef<'_>,
    at: &Lazy<'_>,
    errors: &mut Vec<PolicyError>,
) -> Option<Matcher> {
    let ValueRef::Array(items) = operand else {
        errors.push(PolicyError::new(
            CODE,
            at,
            "`numeric` takes an array of operator/number pairs",
        ));
        return None;
    };
    if items.is_empty() || items.len() % 2 != 0 {
        errors.push(PolicyError::new(
            CODE,
            at,
            "`numeric` needs one or more complete operator/number pairs, like [\">=\", 100, \"<\", 1000]",
        ));
        return None;
    }
    let before = errors.len();
    let mut pairs = Vec::with_capacity(items.len() / 2);
    for (i, pair) in items.chunks(2).enumerate() {
        let (op_at, n_at) = (at.index(2 * i), at.index(2 * i + 1));
        let op = match pair.first() {
            Some(ValueRef::String(s)) => match *s {
                "=" => Some(Cmp::Eq),
                "<" => Some(Cmp::Lt),
                "<=" => Some(Cmp::Le),
                ">" => Some(Cmp::Gt),
                ">=" => Some(Cmp::Ge),
                other => {
                    errors.push(PolicyError::new(
                        CODE,
                        &op_at,
                        format!(
                            "unknown numeric operator `{}` (use =, <, <=, >, >=)",
                            excerpt(other)
                        ),
                    ));
                    None
                }
            },
            _ => {
                errors.push(PolicyError::new(
                    CODE,
                    &op_at,
                    "a numeric operator must be one of \"=\", \"<\", \"<=\", \">\", \">=\"",
                ));
                None
            }
        };
        let n = match pair.get(1) {
            Some(ValueRef::Number(n)) => match finite(n) {
                Some(x) => Some(x),
                None => {
                    errors.push(PolicyError::new(
                        CODE,
                        &n_at,
                        format!("the number {} is not finite as a binary64", excerpt(n)),
                    ));
                    None
                }
            },
            _ => {
                errors.push(PolicyError::new(
                    CODE,
                    &n_at,
                    "a numeric operand must be a JSON number",
                ));
                None
            }
        };
        if let (Some(op), Some(n)) = (op, n) {
            pairs.push((op, n));
        }
    }
    (errors.len() == before).then_some(Matcher::Numeric(pairs))
}

/// The interval one comparison admits.
fn interval(op: Cmp, n: f64) -> Interval {
    let all = Interval::ALL;
    match op {
        Cmp::Eq => Interval::point(n),
        Cmp::Lt => Interval {
            hi: n,
            hi_inclusive: false,
            ..all
        },
        Cmp::Le => Interval {
            hi: n,
            hi_inclusive: true,
            ..all
        },
        Cmp::Gt => Interval {
            lo: n,
            lo_inclusive: false,
            ..all
        },
        Cmp::Ge => Interval {
            lo: n,
            lo_inclusive: true,
            ..all
        },
    }
}

/// Lowers a validated policy to IR.
pub fn lower_policy(policy: &Policy) -> Node {
    lower_owned(policy.clone())
}

/// [`lower_policy`] taking the policy: its shared names, pointers and strings move into the IR
/// rather than being counted up and then down again (what the compile path, which has no further
/// use for the policy, does).
fn lower_owned(policy: Policy) -> Node {
    lower_with(policy, false)
}

/// [`lower_owned`] for a tree given straight to [`crate::opt::optimize`]: what the optimizer
/// would first do to an attribute's `or` is done while lowering, so the `or`, and the tests it
/// would merge away, are never made. The optimized tree is the same (see [`lower_condition`]).
fn lower_to_optimize(policy: Policy) -> Node {
    lower_with(policy, true)
}

/// [`lower_owned`] (`to_optimize` false) or [`lower_to_optimize`] (true).
fn lower_with(policy: Policy, to_optimize: bool) -> Node {
    let conditions = policy
        .attributes
        .into_iter()
        .map(|attr| {
            let key = Key::AttributeText(attr.name);
            if to_optimize {
                return lower_condition(key, attr.pointer, attr.alternatives);
            }
            let alternatives = attr
                .alternatives
                .into_iter()
                .map(|(m, at)| lower_matcher(&key, m, &origin(at)))
                .collect();
            Node::or(alternatives, origin(attr.pointer))
        })
        .collect();
    // B-2: the empty policy is `and []`, which is true.
    Node::and(conditions, "")
}

/// A pointer as an origin. `None` is a pointer not made, which only a tree lowered for the
/// optimizer has, where nothing reads it ([`Reads`]): the root's origin stands in.
fn origin(pointer: Option<Arc<str>>) -> Arc<str> {
    pointer.unwrap_or_else(|| "".into_origin())
}

/// Which of an attribute's pointers its condition lowered for the optimizer
/// ([`lower_condition`]) reads; the policy parsed for it makes only those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// The first alternative's (one alternative, or one string test of one value).
    First,
    /// The attribute's (one string test of two values or more).
    Member,
    /// Every one (an `or`).
    All,
}

impl Reads {
    /// What [`lower_condition`] reads of `alternatives`.
    fn of<P>(alternatives: &[(Matcher, P)]) -> Reads {
        if alternatives.len() == 1 {
            return Reads::First;
        }
        if alternatives.len() < 2 || one_string_op(alternatives).is_none() {
            return Reads::All;
        }
        let mut texts = alternatives.iter().filter_map(|(m, _)| string_of(m));
        let first = texts.next();
        if texts.all(|t| Some(t) == first) {
            Reads::First
        } else {
            Reads::Member
        }
    }
}

/// The string an exact, number, prefix or suffix alternative tests with.
fn string_of(m: &Matcher) -> Option<&Arc<str>> {
    match m {
        Matcher::Exact(s) | Matcher::Number(s) | Matcher::Prefix(s) | Matcher::Suffix(s) => Some(s),
        _ => None,
    }
}

/// One attribute's condition lowered for the optimizer: the tree it makes of the `or` of the
/// alternatives (at `pointer`), made directly ([`Reads`] names the pointers each case reads).
///
/// - One alternative: that alternative's node, at its own pointer (the optimizer replaces an
///   `or` of one child with the child).
/// - Two or more, all exact texts (strings or numbers), or all prefixes, or all suffixes: one
///   string test of their values, in order and without repeats, which is what the optimizer's
///   dedup (repeated alternatives dropped, the first kept) and merge (the others' values put
///   into the first test, which takes the `or`'s pointer) leave of the `or`. When every value is
///   the same, dedup leaves one test, nothing is merged, and it keeps the first alternative's
///   pointer.
/// - Anything else: the `or`, as [`lower_owned`] makes it.
fn lower_condition(
    key: Key,
    pointer: Option<Arc<str>>,
    mut alternatives: Vec<(Matcher, Option<Arc<str>>)>,
) -> Node {
    let reads = Reads::of(&alternatives);
    if alternatives.len() == 1
        && let Some((m, at)) = alternatives.pop()
    {
        return lower_matcher(&key, m, &origin(at));
    }
    if reads != Reads::All
        && let Some(op) = one_string_op(&alternatives)
    {
        let mut first_at = None;
        let mut values = Vec::with_capacity(alternatives.len());
        for (m, at) in alternatives {
            if first_at.is_none() {
                first_at = Some(at);
            }
            if let Matcher::Exact(s)
            | Matcher::Number(s)
            | Matcher::Prefix(s)
            | Matcher::Suffix(s) = m
            {
                values.push(s);
            }
        }
        values.sort();
        values.dedup();
        let at = match reads {
            Reads::First => first_at.flatten(),
            Reads::Member | Reads::All => pointer,
        };
        let pred = Pred::Str {
            op,
            case: Case::Sensitive,
            values,
        };
        return Node::test(key, pred, origin(at));
    }
    let alternatives = alternatives
        .into_iter()
        .map(|(m, at)| lower_matcher(&key, m, &origin(at)))
        .collect();
    Node::or(alternatives, origin(pointer))
}

/// The string operator every alternative tests with, if they are all exact texts (strings or
/// numbers), all prefixes or all suffixes.
fn one_string_op<P>(alternatives: &[(Matcher, P)]) -> Option<StrOp> {
    let op = |m: &Matcher| match m {
        Matcher::Exact(_) | Matcher::Number(_) => Some(StrOp::Eq),
        Matcher::Prefix(_) => Some(StrOp::Prefix),
        Matcher::Suffix(_) => Some(StrOp::Suffix),
        _ => None,
    };
    let (first, rest) = alternatives.split_first()?;
    let first = op(&first.0)?;
    rest.iter()
        .all(|(m, _)| op(m) == Some(first))
        .then_some(first)
}

fn str_test(key: &Key, op: StrOp, mut values: Vec<Arc<str>>, at: &Arc<str>) -> Node {
    values.sort();
    values.dedup();
    Node::test(
        key.clone(),
        Pred::Str {
            op,
            case: Case::Sensitive,
            values,
        },
        at,
    )
}

fn lower_matcher(key: &Key, matcher: Matcher, at: &Arc<str>) -> Node {
    match matcher {
        // B-5, B-6: exact text; a bare number is its canonical text.
        Matcher::Exact(s) | Matcher::Number(s) => str_test(key, StrOp::Eq, vec![s], at),
        Matcher::Prefix(s) => str_test(key, StrOp::Prefix, vec![s], at),
        Matcher::Suffix(s) => str_test(key, StrOp::Suffix, vec![s], at),
        // B-8, B-3: present, and equal to none of the texts.
        Matcher::AnythingBut(texts) => Node::and(
            vec![
                Node::test(key.clone(), Pred::Shape(Shapes::PRESENT), at),
                Node::negation(str_test(key, StrOp::Eq, texts, at)),
            ],
            at,
        ),
        // B-9.
        Matcher::Exists(true) => Node::test(key.clone(), Pred::Shape(Shapes::PRESENT), at),
        Matcher::Exists(false) => Node::test(key.clone(), Pred::Shape(Shapes::ABSENT), at),
        // B-10: every pair must hold: one interval, the intersection (possibly empty).
        Matcher::Numeric(pairs) => {
            let range = pairs.iter().fold(Interval::ALL, |acc, &(op, n)| {
                acc.intersect(&interval(op, n))
            });
            Node::test(
                key.clone(),
                Pred::Num {
                    source: NumSource::Text,
                    ranges: vec![range],
                },
                at,
            )
        }
    }
}

/// Parses, validates and lowers.
pub(crate) fn lower(policy: &Value) -> Result<Node, CompileError> {
    Ok(lower_owned(parse(policy)?))
}

/// Reads, validates and lowers policy text: what reading it into a value
/// ([`parse_policy_text`](super::parse_policy_text)) and then [`lower`] do, with the same errors,
/// through a borrowed tree in this thread's arena (no allocation for the tree, nothing to drop).
pub(crate) fn lower_text(text: &str, options: &Options) -> Result<Node, CompileError> {
    Ok(lower_owned(parse_text(text, options, false)?))
}

/// [`lower_text`] for a tree given straight to [`crate::opt::optimize`] ([`lower_to_optimize`]):
/// the same optimized tree, with less made and freed on the way.
pub(crate) fn lower_text_to_optimize(text: &str, options: &Options) -> Result<Node, CompileError> {
    Ok(lower_to_optimize(parse_text(text, options, true)?))
}

/// The validated policy of [`lower_text`] (`to_optimize` false) or [`lower_text_to_optimize`]
/// (true: without the pointers its tree does not read, see [`parse_ref_with`]).
fn parse_text(text: &str, options: &Options, to_optimize: bool) -> Result<Policy, CompileError> {
    Arena::with_local(|arena| {
        parse_ref_with(
            super::parse_policy_ref(super::Dialect::Basaltic, text, options, arena)?,
            to_optimize,
        )
    })
}

/// The publish-time check of B-13: at most 20 attributes, names of 1-256 bytes, values of at
/// most 1,024 bytes, types `String` or `Number`. Evaluation never needs it.
pub fn validate_message(message: &Message) -> Result<(), MessageError> {
    let err = |pointer: String, message: String| MessageError {
        code: ErrorCode::NotificationInvalidMessageAttributes,
        pointer,
        message,
    };
    let Message::Attributes(attrs) = message else {
        return Err(err(
            String::new(),
            "a notification message carries attributes".to_owned(),
        ));
    };
    if attrs.len() > MAX_NAMES {
        return Err(err(
            "/attributes".to_owned(),
            format!(
                "a message carries at most {MAX_NAMES} attributes, found {}",
                attrs.len()
            ),
        ));
    }
    for a in attrs {
        let at = pointer::push("/attributes", &a.name);
        if a.name.is_empty() || a.name.len() > MAX_ATTRIBUTE_NAME_BYTES {
            return Err(err(
                at,
                format!("an attribute name is 1-{MAX_ATTRIBUTE_NAME_BYTES} bytes"),
            ));
        }
        if a.value.len() > MAX_ATTRIBUTE_VALUE_BYTES {
            return Err(err(
                pointer::push(&at, "value"),
                format!("an attribute value is at most {MAX_ATTRIBUTE_VALUE_BYTES} bytes"),
            ));
        }
        if !matches!(a.data_type, AttributeType::String | AttributeType::Number) {
            return Err(err(
                pointer::push(&at, "type"),
                "the attribute type must be String or Number".to_owned(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::NodeKind;

    fn policy(text: &str) -> Policy {
        let value = filtervm_vm::json::parse(text.as_bytes()).unwrap_or(Value::Null);
        parse(&value).unwrap_or(Policy {
            attributes: Vec::new(),
        })
    }

    /// The lowered IR holds the validated policy's names, pointers and strings, not copies.
    #[test]
    fn lowering_shares_the_policys_strings() {
        let policy = policy(r#"{"a": ["x", {"prefix": "p"}], "b": [{"anything-but": ["y"]}]}"#);
        assert_eq!(policy.attributes.len(), 2);
        let lowered = lower_policy(&policy);
        let NodeKind::And(conditions) = &lowered.kind else {
            panic!("an and of the attributes: {lowered:?}");
        };
        assert_eq!(conditions.len(), 2);
        for (attr, condition) in policy.attributes.iter().zip(conditions) {
            let pointer = attr.pointer.as_ref().expect("parse makes every pointer");
            assert!(Arc::ptr_eq(pointer, &condition.origin));
            let NodeKind::Or(alternatives) = &condition.kind else {
                panic!("an or of the alternatives: {condition:?}");
            };
            assert_eq!(alternatives.len(), attr.alternatives.len());
            for ((matcher, at), node) in attr.alternatives.iter().zip(alternatives) {
                let at = at.as_ref().expect("parse makes every pointer");
                assert!(Arc::ptr_eq(at, &node.origin));
                let test = match (&node.kind, matcher) {
                    (NodeKind::Test(test), _) => test,
                    // `anything-but`: present, and not equal to the texts.
                    (NodeKind::And(parts), Matcher::AnythingBut(_)) => match parts.get(1) {
                        Some(Node {
                            kind: NodeKind::Not(negated),
                            ..
                        }) => match &negated.kind {
                            NodeKind::Test(test) => test,
                            other => panic!("a test under the negation: {other:?}"),
                        },
                        other => panic!("a negation: {other:?}"),
                    },
                    other => panic!("a test: {other:?}"),
                };
                let Key::AttributeText(name) = &test.key else {
                    panic!("an attribute's text: {:?}", test.key);
                };
                assert!(Arc::ptr_eq(name, &attr.name));
                let Pred::Str { values, .. } = &test.pred else {
                    panic!("a string test: {:?}", test.pred);
                };
                let held = match matcher {
                    Matcher::Exact(s) | Matcher::Prefix(s) => vec![s],
                    Matcher::AnythingBut(texts) => texts.iter().collect(),
                    other => panic!("no such alternative here: {other:?}"),
                };
                assert_eq!(values.len(), held.len());
                for (value, held) in values.iter().zip(held) {
                    assert!(Arc::ptr_eq(value, held));
                }
            }
        }
    }
}

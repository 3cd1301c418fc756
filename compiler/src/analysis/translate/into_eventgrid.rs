//! The closest Event Grid filter of an SNS body policy or an EventBridge pattern (one syntax for
//! what both have, `docs/dialects/eventbridge-patterns.md` §6), for [`super::translate`] to prove
//! by diff or refuse.
//!
//! Each field of the pattern becomes the advanced filters (ANDed, EG-2) that say on its key what
//! its list of alternatives says — one filter ORs the values of one operator (EG-14), so the
//! alternatives of a field must share one: bare numbers become `NumberIn`, one `numeric` range
//! `NumberGreaterThan[OrEquals]` / `NumberLessThan[OrEquals]` (or `NumberInRange` when both
//! bounds are inclusive), several closed ranges and numbers `NumberInRange` pairs, a boolean
//! `BoolEquals`, strings `StringIn`, `prefix` / `suffix` `StringBeginsWith` / `StringEndsWith`,
//! `exists: true` `IsNotNull`, `exists: false` (and `null`) `IsNullOrUndefined`, `anything-but`
//! numbers or strings `NumberNotIn` / `StringNotIn` with `IsNotNull` (EG-22: they hold on a
//! missing key, which no pattern field does), `anything-but` a prefix or suffix
//! `StringNotBeginsWith` / `StringNotEndsWith`. The event type's strings become
//! `includedEventTypes` (EG-7, EG-8), one case-sensitive `prefix` or `suffix` of the subject
//! `subjectBeginsWith` / `subjectEndsWith` with `isSubjectCaseSensitive` (EG-11).
//!
//! A `$or` whose branches all test the same one field is that field's alternatives.
//!
//! What Event Grid has no form for is an error naming the construct's JSON Pointer and why: any
//! other `$or` (filters are only ANDed, EG-2), alternatives of different operators, a case-sensitive string
//! holding an ASCII letter (every advanced filter ignores case, EG-31), a key that names nothing
//! in the event schema (EG-16..EG-19), a member name holding `.` (EG-15), wildcards, addresses,
//! and the limits (EG-40 items 7-9). The rest is only a candidate: the proof decides (Event
//! Grid's case-insensitive reading of a string without ASCII letters, of `equals-ignore-case`,
//! its null and array semantics, EG-20..EG-24).

use super::eventgrid::Candidate;
use super::{TranslateError, error};
use crate::Dialect;
use crate::analysis::model::{Loc, Reads, reads};
use crate::dialect::eventgrid::{self, MAX_FILTERS, MAX_STRING_CHARS, MAX_VALUES};
use crate::error::pointer;
use crate::options::EventGridSchema;
use filtervm_vm::json::{Map, Value};
use std::collections::BTreeMap;

/// A string comparison of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StrKind {
    /// Whole-string equality.
    Eq,
    /// `prefix`.
    Prefix,
    /// `suffix`.
    Suffix,
}

impl StrKind {
    fn name(self) -> &'static str {
        match self {
            StrKind::Eq => "equality",
            StrKind::Prefix => "prefix",
            StrKind::Suffix => "suffix",
        }
    }
}

/// A bound of a numeric range: the number and whether it is inclusive.
type Bound = Option<(Value, bool)>;

/// One alternative of a pattern field.
#[derive(Debug, Clone)]
enum Alt {
    /// A string comparison (`fold`: `equals-ignore-case`).
    Str {
        kind: StrKind,
        fold: bool,
        value: String,
    },
    /// A bare number (or `numeric` `=`).
    Num(Value),
    /// A `numeric` range.
    Range { lo: Bound, hi: Bound },
    /// A boolean.
    Bool(bool),
    /// `null`.
    Null,
    /// `exists`.
    Exists(bool),
    /// `anything-but` numbers.
    NotNums(Vec<Value>),
    /// `anything-but` strings, prefixes or suffixes.
    NotStrs {
        kind: StrKind,
        fold: bool,
        values: Vec<String>,
    },
}

impl Alt {
    /// What kind of Event Grid filter the alternative needs: alternatives of one field must need
    /// the same.
    fn family(&self) -> &'static str {
        match self {
            Alt::Str { kind, .. } => match kind {
                StrKind::Eq => "a string",
                StrKind::Prefix => "a prefix",
                StrKind::Suffix => "a suffix",
            },
            Alt::Num(_) | Alt::Range { .. } => "a number",
            Alt::Bool(_) => "a boolean",
            Alt::Null | Alt::Exists(false) => "a missing or null value",
            Alt::Exists(true) => "a present value",
            Alt::NotNums(_) | Alt::NotStrs { .. } => "`anything-but`",
        }
    }
}

fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map>(),
    )
}

/// One advanced filter and the pattern construct it says.
struct Entry {
    filter: Value,
    /// The values it counts towards the limit (EG-40 item 8).
    values: usize,
    /// Whether it is a positive operator other than the null ones (EG-13), which reads arrays'
    /// elements with `enableAdvancedFilteringOnArrays` as a pattern does (EG-21, EG-23).
    positive: bool,
    origin: String,
}

fn entry(op: &str, operand: Option<(&str, Value)>, origin: &str) -> Entry {
    let values = match &operand {
        Some(("values", Value::Array(v))) => v.len(),
        Some(_) => 1,
        None => 0,
    };
    let positive = !op.contains("Not") && !op.contains("Null");
    let mut members = vec![("operatorType", Value::from(op)), ("key", Value::Null)];
    if let Some((name, v)) = operand {
        members.push((name, v));
    }
    Entry {
        filter: object(members),
        values,
        positive,
        origin: origin.to_owned(),
    }
}

/// The Event Grid filter being built.
#[derive(Default)]
struct Builder {
    event_types: Option<(Vec<Value>, String)>,
    subject: Vec<(&'static str, String, bool, String)>,
    filters: Vec<(String, Entry)>,
}

/// The closest Event Grid filter (for `schema`) of the `from` pattern `policy`.
pub(super) fn filter_of(
    policy: &Value,
    from: Dialect,
    schema: EventGridSchema,
) -> Result<Candidate, TranslateError> {
    let mut b = Builder::default();
    let Value::Object(root) = policy else {
        return Err(error(
            "TRANSLATE_INEXPRESSIBLE",
            "",
            "the policy is not a JSON object",
        ));
    };
    fields(root, &mut Vec::new(), "", from, schema, &mut b)?;
    assemble(b)
}

fn fields(
    obj: &Map,
    path: &mut Vec<String>,
    at: &str,
    from: Dialect,
    schema: EventGridSchema,
    b: &mut Builder,
) -> Result<(), TranslateError> {
    for (name, value) in obj.iter() {
        let here = pointer::push(at, name);
        if name == "$or" {
            // Branches that each test the same one field are that field's alternatives, in
            // order (`{"$or": [{"a": [1]}, {"a": [2]}]}` says `{"a": [1, 2]}`); any other `$or`
            // has no Event Grid form.
            let Some((rel, alts)) = one_field_branches(value, &here) else {
                return Err(error(
                    "TRANSLATE_INEXPRESSIBLE",
                    &here,
                    "Event Grid has no form for `$or` over several fields: its filters are only \
                     ANDed (EG-2) and one filter ORs only the values of one operator on one key \
                     (EG-14)",
                ));
            };
            let depth = path.len();
            path.extend(rel);
            field(path, &alts, &here, from, schema, b)?;
            path.truncate(depth);
            continue;
        }
        path.push(name.clone());
        match value {
            Value::Object(m) => fields(m, path, &here, from, schema, b)?,
            Value::Array(alts) => {
                let alts: Alternatives<'_> = alts
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v, pointer::push(&here, &i.to_string())))
                    .collect();
                field(path, &alts, &here, from, schema, b)?
            }
            _ => {
                return Err(error(
                    "TRANSLATE_INEXPRESSIBLE",
                    &here,
                    "a field's value is neither an object nor a list of alternatives",
                ));
            }
        }
        path.pop();
    }
    Ok(())
}

/// The Event Grid key reading the pattern field at `path`, or why there is none.
fn key_of(path: &[String], at: &str, schema: EventGridSchema) -> Result<String, TranslateError> {
    let label = path.join(".");
    if let Some(seg) = path.iter().find(|s| s.contains('.')) {
        return Err(error(
            "TRANSLATE_INEXPRESSIBLE",
            at,
            format!(
                "Event Grid splits every key on `.` with no escape (EG-15): no key reads the \
                 member `{seg}`"
            ),
        ));
    }
    let nothing = || {
        error(
            "TRANSLATE_INEXPRESSIBLE",
            at,
            format!(
                "no Event Grid key reads `{label}` in {} (EG-19): {}",
                schema.name(),
                match schema {
                    EventGridSchema::EventGrid =>
                        "a one-segment key names `id`, `topic`, `subject`, `eventType`, \
                         `dataVersion` or `data` (EG-16), a longer one walks only into `data` \
                         (EG-18)",
                    EventGridSchema::CloudEvents =>
                        "a one-segment key names a context or extension attribute, never \
                         `eventType` (EG-17), a longer one walks only into `data` (EG-18)",
                }
            ),
        )
    };
    let key = eventgrid::resolve_key(schema, &label).ok_or_else(nothing)?;
    match reads(&key, &mut BTreeMap::new()) {
        Reads::At(Loc::Path(p)) if p == path => Ok(label),
        Reads::At(loc) => Err(error(
            "TRANSLATE_INEXPRESSIBLE",
            at,
            format!(
                "Event Grid's key `{label}` reads the member `{}` (EG-16, EG-17: top-level \
                 names are found ignoring ASCII case), not `{label}` by its exact name",
                loc.label()
            ),
        )),
        _ => Err(nothing()),
    }
}

fn inexpressible(at: &str, why: String) -> TranslateError {
    error("TRANSLATE_INEXPRESSIBLE", at, why)
}

/// The alternative a pattern matcher says, or why Event Grid has none.
fn alt_of(v: &Value, at: &str) -> Result<Alt, TranslateError> {
    let no_operator = |what: &str| {
        inexpressible(
            at,
            format!("Event Grid has no operator for {what} (its 19 operators, EG-13)"),
        )
    };
    Ok(match v {
        Value::String(s) => Alt::Str {
            kind: StrKind::Eq,
            fold: false,
            value: s.clone(),
        },
        Value::Number(_) => Alt::Num(v.clone()),
        Value::Bool(b) => Alt::Bool(*b),
        Value::Null => Alt::Null,
        Value::Object(m) if m.len() == 1 => {
            let Some((name, arg)) = m.iter().next() else {
                return Err(no_operator("an empty matcher"));
            };
            let ignoring_case = |arg: &Value| match arg {
                Value::Object(inner) if inner.len() == 1 => inner
                    .get("equals-ignore-case")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                _ => None,
            };
            match (name.as_str(), arg) {
                ("prefix" | "suffix", _) => {
                    let kind = if name == "prefix" {
                        StrKind::Prefix
                    } else {
                        StrKind::Suffix
                    };
                    match (arg.as_str(), ignoring_case(arg)) {
                        (Some(s), _) => Alt::Str {
                            kind,
                            fold: false,
                            value: s.to_owned(),
                        },
                        (None, Some(s)) => Alt::Str {
                            kind,
                            fold: true,
                            value: s,
                        },
                        _ => return Err(no_operator(&format!("this `{name}`"))),
                    }
                }
                ("equals-ignore-case", Value::String(s)) => Alt::Str {
                    kind: StrKind::Eq,
                    fold: true,
                    value: s.clone(),
                },
                // `exactly` (EventBridge): the string itself, case-sensitive, never an address.
                ("exactly", Value::String(s)) => Alt::Str {
                    kind: StrKind::Eq,
                    fold: false,
                    value: s.clone(),
                },
                ("exists", Value::Bool(b)) => Alt::Exists(*b),
                ("numeric", Value::Array(parts)) => numeric(parts, at)?,
                ("anything-but", arg) => anything_but(arg, at)?,
                ("cidr", _) => {
                    return Err(no_operator(
                        "an address block (`cidr`): it compares strings and numbers only",
                    ));
                }
                ("wildcard", _) => {
                    return Err(no_operator(
                        "a `wildcard`: its strings are literals, `*` matches only itself \
                         (EG-10, EG-31)",
                    ));
                }
                (other, _) => return Err(no_operator(&format!("`{other}`"))),
            }
        }
        _ => return Err(no_operator("this matcher")),
    })
}

fn numeric(parts: &[Value], at: &str) -> Result<Alt, TranslateError> {
    let (mut lo, mut hi): (Bound, Bound) = (None, None);
    for pair in parts.chunks(2) {
        let (Some(op), Some(n)) = (pair.first().and_then(Value::as_str), pair.get(1)) else {
            return Err(inexpressible(at, "a `numeric` list not in pairs".into()));
        };
        match op {
            "=" if parts.len() == 2 => return Ok(Alt::Num(n.clone())),
            ">" | ">=" => lo = Some((n.clone(), op == ">=")),
            "<" | "<=" => hi = Some((n.clone(), op == "<=")),
            _ => {
                return Err(inexpressible(
                    at,
                    format!("Event Grid has no numeric comparison `{op}` (EG-13)"),
                ));
            }
        }
    }
    Ok(Alt::Range { lo, hi })
}

fn anything_but(arg: &Value, at: &str) -> Result<Alt, TranslateError> {
    let strs = |v: &[Value]| -> Option<Vec<String>> {
        v.iter().map(|s| s.as_str().map(str::to_owned)).collect()
    };
    let list = match arg {
        Value::Array(v) => v.clone(),
        Value::Object(_) => Vec::new(),
        other => vec![other.clone()],
    };
    if !list.is_empty() {
        if list.iter().all(Value::is_number) {
            return Ok(Alt::NotNums(list));
        }
        if let Some(values) = strs(&list) {
            return Ok(Alt::NotStrs {
                kind: StrKind::Eq,
                fold: false,
                values,
            });
        }
    }
    if let Value::Object(m) = arg
        && m.len() == 1
        && let Some((name, inner)) = m.iter().next()
    {
        let kind = match name.as_str() {
            "prefix" => Some(StrKind::Prefix),
            "suffix" => Some(StrKind::Suffix),
            "equals-ignore-case" => Some(StrKind::Eq),
            _ => None,
        };
        let values = match inner {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(v) => strs(v),
            _ => None,
        };
        if let (Some(kind), Some(values)) = (kind, values) {
            return Ok(Alt::NotStrs {
                kind,
                fold: kind == StrKind::Eq,
                values,
            });
        }
    }
    Err(inexpressible(
        at,
        "Event Grid's negated operators exclude numbers, strings, prefixes or suffixes of one \
         kind (NumberNotIn, StringNotIn, StringNotBeginsWith, StringNotEndsWith, EG-13): not \
         this `anything-but`"
            .into(),
    ))
}

/// The other ASCII case of `value` (upper, or lower when it is upper already).
fn other_case(value: &str) -> String {
    let upper = value.to_ascii_uppercase();
    if upper == value {
        value.to_ascii_lowercase()
    } else {
        upper
    }
}

/// An error when a case-sensitive string holds an ASCII letter: every Event Grid string operator
/// equates it with its other case (EG-31), which the source tells apart.
fn case_sensitive(value: &str, from: Dialect, at: &str) -> Result<(), TranslateError> {
    if value.chars().any(|c| c.is_ascii_alphabetic()) {
        return Err(inexpressible(
            at,
            format!(
                "Event Grid compares every string of an advanced filter ignoring case (EG-31): \
                 no filter tells {} from {}, which this case-sensitive {from} string does \
                 (`equals-ignore-case` says what Event Grid can)",
                Value::from(value),
                Value::from(other_case(value).as_str())
            ),
        ));
    }
    Ok(())
}

/// The advanced filters (or envelope members) saying the field at `path` with the
/// alternatives `alts`.
/// Alternatives of a field, each with its JSON Pointer.
type Alternatives<'p> = Vec<(&'p Value, String)>;

/// The one field path (relative to the `$or`) every branch of the `$or` at `at` tests, and the
/// alternatives of all branches with their pointers, in order; `None` when a branch tests
/// another field, several fields or a nested `$or`.
fn one_field_branches<'p>(
    branches: &'p Value,
    at: &str,
) -> Option<(Vec<String>, Alternatives<'p>)> {
    let Value::Array(branches) = branches else {
        return None;
    };
    let mut common: Option<Vec<String>> = None;
    let mut alts = Vec::new();
    for (i, branch) in branches.iter().enumerate() {
        let mut here = pointer::push(at, &i.to_string());
        let mut rel = Vec::new();
        let mut node = branch;
        // Down a chain of one-member objects to the list of alternatives.
        let list = loop {
            match node {
                Value::Object(m) if m.len() == 1 => {
                    let (name, value) = m.iter().next()?;
                    if name == "$or" {
                        return None;
                    }
                    here = pointer::push(&here, name);
                    rel.push(name.clone());
                    node = value;
                }
                Value::Array(list) if !rel.is_empty() => break list,
                _ => return None,
            }
        };
        if common.get_or_insert_with(|| rel.clone()) != &rel {
            return None;
        }
        alts.extend(
            list.iter()
                .enumerate()
                .map(|(j, v)| (v, pointer::push(&here, &j.to_string()))),
        );
    }
    common.map(|rel| (rel, alts))
}

fn field(
    path: &[String],
    alts: &[(&Value, String)],
    at: &str,
    from: Dialect,
    schema: EventGridSchema,
    b: &mut Builder,
) -> Result<(), TranslateError> {
    let key = key_of(path, at, schema)?;
    let parsed: Vec<(Alt, String)> = alts
        .iter()
        .map(|(v, here)| alt_of(v, here).map(|a| (a, here.clone())))
        .collect::<Result<_, _>>()?;
    let Some((first, first_at)) = parsed.first() else {
        return Err(inexpressible(at, "a field with no alternative".into()));
    };
    // The null operators: `null` and `exists: false` together are `IsNullOrUndefined`.
    let nullish = |a: &Alt| matches!(a, Alt::Null | Alt::Exists(false));
    if let Some((other, other_at)) = parsed.iter().find(|(a, _)| {
        a.family() != first.family()
            && !(matches!(first, Alt::Num(_) | Alt::Range { .. })
                && matches!(a, Alt::Num(_) | Alt::Range { .. }))
            && !(nullish(first) && nullish(a))
    }) {
        return Err(inexpressible(
            other_at,
            format!(
                "Event Grid has no one filter holding for {} or {} on `{key}`: one filter ORs \
                 the values of one operator (EG-14), filters are only ANDed (EG-2)",
                first.family(),
                other.family()
            ),
        ));
    }
    let single = parsed.len() == 1;
    let mut out: Vec<Entry> = Vec::new();
    let mut push = |e: Entry| out.push(e);
    match first {
        Alt::Str { kind, fold, value } => {
            // One case-sensitive prefix or suffix of the subject: the subject filter (EG-9,
            // EG-11), case-sensitive if asked; an empty one imposes no condition there (EG-9).
            let subject = path.len() == 1 && path.first().is_some_and(|p| p == "subject");
            if single && subject && *kind != StrKind::Eq && !value.is_empty() {
                let member = if *kind == StrKind::Prefix {
                    "subjectBeginsWith"
                } else {
                    "subjectEndsWith"
                };
                b.subject
                    .push((member, value.clone(), !fold, first_at.clone()));
                return Ok(());
            }
            let mut values = Vec::new();
            for (a, here) in &parsed {
                if let Alt::Str {
                    kind: k,
                    fold,
                    value,
                } = a
                {
                    if k != kind {
                        return Err(inexpressible(
                            here,
                            format!(
                                "Event Grid has no one filter holding for a string {} or {} \
                                 on `{key}` (EG-14)",
                                kind.name(),
                                k.name()
                            ),
                        ));
                    }
                    if !fold {
                        case_sensitive(value, from, here)?;
                    }
                    values.push(Value::from(value.as_str()));
                }
            }
            let event_type = path.len() == 1
                && path
                    .first()
                    .is_some_and(|p| p == schema.event_type_member());
            let all = values
                .iter()
                .any(|v| v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("All")));
            if *kind == StrKind::Eq && event_type && !all && b.event_types.is_none() {
                // The event-type filter compares as StringIn does (EG-7, EG-8; `All` would
                // admit every type, EG-6).
                b.event_types = Some((values, at.to_owned()));
                return Ok(());
            }
            let op = match kind {
                StrKind::Eq => "StringIn",
                StrKind::Prefix => "StringBeginsWith",
                StrKind::Suffix => "StringEndsWith",
            };
            push(entry(op, Some(("values", Value::Array(values))), at));
        }
        Alt::Num(_) | Alt::Range { .. } => {
            if let (true, Alt::Range { lo, hi }) = (single, first) {
                match (lo, hi) {
                    // NumberInRange takes `low <= high` only (EG-40 item 6).
                    (Some((l, true)), Some((h, true)))
                        if l.as_f64().zip(h.as_f64()).is_some_and(|(l, h)| l <= h) =>
                    {
                        push(entry(
                            "NumberInRange",
                            Some((
                                "values",
                                Value::Array(vec![Value::Array(vec![l.clone(), h.clone()])]),
                            )),
                            at,
                        ))
                    }
                    _ => {
                        if let Some((l, inclusive)) = lo {
                            let op = if *inclusive {
                                "NumberGreaterThanOrEquals"
                            } else {
                                "NumberGreaterThan"
                            };
                            push(entry(op, Some(("value", l.clone())), at));
                        }
                        if let Some((h, inclusive)) = hi {
                            let op = if *inclusive {
                                "NumberLessThanOrEquals"
                            } else {
                                "NumberLessThan"
                            };
                            push(entry(op, Some(("value", h.clone())), at));
                        }
                    }
                }
            } else if parsed.iter().all(|(a, _)| matches!(a, Alt::Num(_))) {
                let values = parsed
                    .iter()
                    .filter_map(|(a, _)| match a {
                        Alt::Num(n) => Some(n.clone()),
                        _ => None,
                    })
                    .collect();
                push(entry(
                    "NumberIn",
                    Some(("values", Value::Array(values))),
                    at,
                ));
            } else {
                let mut pairs = Vec::new();
                for (a, here) in &parsed {
                    pairs.push(Value::Array(match a {
                        Alt::Num(n) => vec![n.clone(), n.clone()],
                        Alt::Range {
                            lo: Some((l, true)),
                            hi: Some((h, true)),
                        } => vec![l.clone(), h.clone()],
                        _ => {
                            return Err(inexpressible(
                                here,
                                format!(
                                    "Event Grid ORs numeric conditions on `{key}` only as \
                                     NumberIn values or NumberInRange's closed [low, high] \
                                     pairs (EG-13, EG-14): this range has an open or \
                                     exclusive bound"
                                ),
                            ));
                        }
                    }));
                }
                push(entry(
                    "NumberInRange",
                    Some(("values", Value::Array(pairs))),
                    at,
                ));
            }
        }
        Alt::Bool(v) => {
            if parsed
                .iter()
                .any(|(a, _)| !matches!(a, Alt::Bool(x) if x == v))
            {
                return Err(inexpressible(
                    at,
                    format!(
                        "Event Grid's BoolEquals takes one value (EG-13): no filter holds for \
                         either boolean on `{key}` alone"
                    ),
                ));
            }
            push(entry("BoolEquals", Some(("value", Value::Bool(*v))), at));
        }
        Alt::Null | Alt::Exists(false) => push(entry("IsNullOrUndefined", None, at)),
        Alt::Exists(true) => {
            if !single {
                return Err(inexpressible(at, "`exists` listed twice".into()));
            }
            push(entry("IsNotNull", None, at));
        }
        Alt::NotNums(values) => {
            if !single {
                return Err(inexpressible(
                    at,
                    format!("Event Grid has no one filter ORing two `anything-but` on `{key}`"),
                ));
            }
            push(entry(
                "NumberNotIn",
                Some(("values", Value::Array(values.clone()))),
                at,
            ));
            // NumberNotIn holds on a missing key (EG-22); `anything-but` does not.
            push(entry("IsNotNull", None, at));
        }
        Alt::NotStrs { kind, fold, values } => {
            if !single {
                return Err(inexpressible(
                    at,
                    format!("Event Grid has no one filter ORing two `anything-but` on `{key}`"),
                ));
            }
            if !fold {
                for v in values {
                    case_sensitive(v, from, first_at)?;
                }
            }
            let list = Value::Array(values.iter().map(|v| Value::from(v.as_str())).collect());
            match kind {
                StrKind::Eq => {
                    push(entry("StringNotIn", Some(("values", list)), at));
                    // StringNotIn holds on a missing key (EG-22); `anything-but` does not.
                    push(entry("IsNotNull", None, at));
                }
                StrKind::Prefix => push(entry("StringNotBeginsWith", Some(("values", list)), at)),
                StrKind::Suffix => push(entry("StringNotEndsWith", Some(("values", list)), at)),
            }
        }
    }
    b.filters.extend(out.into_iter().map(|e| (key.clone(), e)));
    Ok(())
}

/// The filter object of what was built, each part's origin kept; the limits checked (EG-40
/// items 7-9) with the construct that passes one named.
fn assemble(b: Builder) -> Result<Candidate, TranslateError> {
    let mut root = Map::new();
    let mut origins = Vec::new();
    if let Some((types, origin)) = b.event_types {
        root.insert("includedEventTypes".into(), Value::Array(types));
        origins.push(("/includedEventTypes".to_owned(), origin));
    }
    for (member, value, case_sensitive, origin) in &b.subject {
        root.insert((*member).to_owned(), Value::from(value.as_str()));
        origins.push((pointer::push("", member), origin.clone()));
        if *case_sensitive {
            root.insert("isSubjectCaseSensitive".into(), Value::Bool(true));
        }
    }
    if b.filters.len() > MAX_FILTERS
        && let Some((_, e)) = b.filters.get(MAX_FILTERS)
    {
        return Err(inexpressible(
            &e.origin,
            format!(
                "Event Grid allows at most {MAX_FILTERS} advanced filters (EG-40 item 7, its \
                 limit): this policy needs {}, the {}th from here",
                b.filters.len(),
                MAX_FILTERS + 1
            ),
        ));
    }
    let mut total = 0;
    for (_, e) in &b.filters {
        total += e.values;
        if total > MAX_VALUES {
            return Err(inexpressible(
                &e.origin,
                format!(
                    "Event Grid allows at most {MAX_VALUES} filter values across all advanced \
                     filters (EG-40 item 8, its limit): this policy needs {} by here",
                    total
                ),
            ));
        }
        let long = |v: &Value| {
            v.as_str()
                .is_some_and(|s| s.chars().count() > MAX_STRING_CHARS)
        };
        if let Some(Value::Array(vs)) = e.filter.get("values")
            && vs.iter().any(long)
        {
            return Err(inexpressible(
                &e.origin,
                format!(
                    "Event Grid allows strings of at most {MAX_STRING_CHARS} characters in a \
                     filter (EG-40 item 9, its limit)"
                ),
            ));
        }
    }
    // Positive operators read array elements as a pattern does only with the flag (EG-21,
    // EG-24); negative ones read them otherwise either way.
    if !b.filters.is_empty() && b.filters.iter().all(|(_, e)| e.positive) {
        root.insert("enableAdvancedFilteringOnArrays".into(), Value::Bool(true));
    }
    if !b.filters.is_empty() {
        let mut list = Vec::new();
        for (i, (key, mut e)) in b.filters.into_iter().enumerate() {
            if let Value::Object(m) = &mut e.filter {
                m.insert("key".into(), Value::from(key.as_str()));
            }
            list.push(e.filter);
            origins.push((format!("/advancedFilters/{i}"), e.origin));
        }
        root.insert("advancedFilters".into(), Value::Array(list));
    }
    Ok(Candidate {
        pattern: Value::Object(root),
        origins,
    })
}

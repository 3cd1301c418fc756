//! The closest EventBridge pattern of an Event Grid filter (an SNS body policy too: the two share
//! the syntax of what both have, `docs/dialects/eventbridge-patterns.md` §6), for
//! [`super::translate`] to prove by diff or refuse.
//!
//! Each condition says on its field what the Event Grid condition says on its key: the event
//! type and advanced string filters ignore case (EG-8, EG-31) and become `equals-ignore-case`
//! (bare, or under `prefix` / `suffix`, EB-20, EB-21); numbers become bare numbers and
//! `numeric` ranges; `BoolEquals` a literal; `IsNullOrUndefined` `null` or `exists: false`;
//! `NumberNotIn` / `StringNotIn` an `anything-but` or `exists: false` (EG-22: they hold on a
//! missing key). What has no such form is an error naming the entry: substring tests, the other
//! negations, `IsNotNull` (EG-23: it holds on objects and arrays, which no pattern sees, EB-2) and
//! two conditions on one key (a pattern keeps one list per field, EB-7).
//!
//! The result is only a candidate: Event Grid reads top-level member names ignoring ASCII case
//! (EG-16), arrays only with `enableAdvancedFilteringOnArrays` (EG-24) and `data` as objects
//! only (EG-18), and folds `ſ` and `ı` to `S` and `I` (EG-31, which `equals-ignore-case` does
//! not, EB-20), so over every document the proof fails, with a witness message; over canonical
//! documents without arrays ([`crate::analysis::Assumptions`]) it holds for filters whose
//! case-insensitive strings hold neither `s` nor `i`.

use super::{TranslateError, error};
use crate::Dialect;
use crate::dialect::eventgrid::{self, Operand, Operator, PolicyNumber};
use crate::error::pointer;
use crate::options::EventGridSchema;
use filtervm_vm::json::{Map, Number, Value};
use filtervm_vm::key::Key;

/// A candidate pattern, and for each of its fields (the field's pointer in the pattern) the
/// pointer of the Event Grid construct it says.
pub(super) struct Candidate {
    /// The pattern (EventBridge and SNS body syntax).
    pub(super) pattern: Value,
    /// `(pointer in the pattern, pointer in the Event Grid filter)`, one per field.
    pub(super) origins: Vec<(String, String)>,
}

/// One field of the pattern being built: its path, its alternatives and the source construct.
struct Field {
    path: Vec<String>,
    alternatives: Vec<Value>,
    origin: String,
}

fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map>(),
    )
}

fn number(n: &PolicyNumber) -> Value {
    Number::from_text(&n.text).map_or(Value::Null, Value::Number)
}

fn ignoring_case(op: &str, value: &str) -> Value {
    let inner = object([("equals-ignore-case", Value::from(value))]);
    if op.is_empty() {
        inner
    } else {
        object([(op, inner)])
    }
}

fn numeric(parts: Vec<Value>) -> Value {
    object([("numeric", Value::Array(parts))])
}

fn exists(present: bool) -> Value {
    object([("exists", Value::Bool(present))])
}

/// The most `equals-ignore-case` spellings one Event Grid string becomes ([`spellings`]).
const MAX_SPELLINGS: usize = 16;

/// The EventBridge `equals-ignore-case` operands that together accept exactly the strings Event
/// Grid's ignore-case comparison equates with `value` (EG-31: simple uppercase mapping): each
/// `s` or `S` is also spelled `ſ`, each `i` or `I` also `ı`, whose simple uppercase is `S` and
/// `I` — EB-20 lets a pattern `s` accept `s` and `S`, a pattern `ſ` accept `ſ` and `S`, so the
/// two spellings together accept the three. Every other ASCII character is equated with its
/// other case alone in both. For an sns body target, when more than [`MAX_SPELLINGS`] would be
/// needed, or without `expand` (the proof cannot hold anyway: documents with arrays or repeated
/// members tell the dialects apart), `value` alone (the proof then shows a message telling them
/// apart).
fn spellings(value: &str, target: Dialect, expand: bool) -> Vec<String> {
    let folding = value
        .chars()
        .filter(|c| matches!(c, 's' | 'S' | 'i' | 'I'))
        .count();
    let fits = u32::try_from(folding)
        .ok()
        .and_then(|n| 1usize.checked_shl(n))
        .is_some_and(|n| n <= MAX_SPELLINGS);
    if !expand || target != Dialect::EventBridge || folding == 0 || !fits {
        return vec![value.to_owned()];
    }
    let mut out = vec![String::new()];
    for c in value.chars() {
        let other = match c {
            's' | 'S' => Some('\u{17F}'),
            'i' | 'I' => Some('\u{131}'),
            _ => None,
        };
        out = out
            .into_iter()
            .flat_map(|prefix| {
                let mut next = vec![format!("{prefix}{c}")];
                next.extend(other.map(|o| format!("{prefix}{o}")));
                next
            })
            .collect();
    }
    out
}

/// A prefix or suffix test ignoring case (`op`: `prefix` or `suffix`) in the target's syntax:
/// EventBridge's `{op: {"equals-ignore-case": v}}` (EB-21); for an SNS body, whose `prefix` and
/// `suffix` are case-sensitive and take no `equals-ignore-case` (sns rule 25), the plain test
/// when `v` holds no letter (ASCII characters other than letters: no character folds to one,
/// EG-31), otherwise none (the error says why).
fn ignoring_case_affix(op: &str, value: &str, target: Dialect) -> Result<Value, String> {
    if target != Dialect::Sns {
        return Ok(ignoring_case(op, value));
    }
    if value
        .chars()
        .all(|c| c.is_ascii() && !c.is_ascii_alphabetic())
    {
        return Ok(object([(op, Value::from(value))]));
    }
    Err(format!(
        "an SNS policy has no {op} test that ignores case: its `{op}` is case-sensitive and \
         takes no `equals-ignore-case` (sns rule 25), while Event Grid compares {} ignoring \
         case (EG-31)",
        Value::from(value)
    ))
}

/// The pattern's alternatives for one advanced filter entry in `target`'s syntax, or why there
/// is none.
fn alternatives(
    op: Operator,
    operand: &Operand,
    target: Dialect,
    expand: bool,
) -> Result<Vec<Value>, String> {
    use Operator::*;
    let strings = |values: &[String], op: &str| -> Result<Vec<Value>, String> {
        let mut out = Vec::new();
        for v in values {
            for spelled in spellings(v, target, expand) {
                out.push(if op.is_empty() {
                    ignoring_case(op, &spelled)
                } else {
                    ignoring_case_affix(op, &spelled, target)?
                });
            }
        }
        Ok(out)
    };
    Ok(match (op, operand) {
        (StringIn, Operand::Strings(v)) => strings(v, "")?,
        (StringBeginsWith, Operand::Strings(v)) => strings(v, "prefix")?,
        (StringEndsWith, Operand::Strings(v)) => strings(v, "suffix")?,
        (StringNotIn, Operand::Strings(v)) => vec![
            object([(
                "anything-but",
                object([(
                    "equals-ignore-case",
                    Value::Array(
                        v.iter()
                            .flat_map(|s| spellings(s, target, expand))
                            .map(Value::from)
                            .collect(),
                    ),
                )]),
            )]),
            exists(false),
        ],
        (NumberIn, Operand::Numbers(v)) => v.iter().map(number).collect(),
        (NumberNotIn, Operand::Numbers(v)) => vec![
            object([("anything-but", Value::Array(v.iter().map(number).collect()))]),
            exists(false),
        ],
        (NumberLessThan, Operand::Number(n)) => vec![numeric(vec!["<".into(), number(n)])],
        (NumberLessThanOrEquals, Operand::Number(n)) => {
            vec![numeric(vec!["<=".into(), number(n)])]
        }
        (NumberGreaterThan, Operand::Number(n)) => vec![numeric(vec![">".into(), number(n)])],
        (NumberGreaterThanOrEquals, Operand::Number(n)) => {
            vec![numeric(vec![">=".into(), number(n)])]
        }
        (NumberInRange, Operand::Ranges(pairs)) => pairs
            .iter()
            .map(|(lo, hi)| {
                if lo.value == hi.value {
                    number(lo)
                } else {
                    numeric(vec![">=".into(), number(lo), "<=".into(), number(hi)])
                }
            })
            .collect(),
        (BoolEquals, Operand::Bool(b)) => vec![Value::Bool(*b)],
        (IsNullOrUndefined, _) => vec![Value::Null, exists(false)],
        (StringContains, _) => {
            return Err(
                "EventBridge has no substring test that ignores case (its `wildcard` \
                        is case-sensitive, EB-22; Event Grid's strings always ignore case, \
                        EG-31)"
                    .to_owned(),
            );
        }
        (StringNotContains | StringNotBeginsWith | StringNotEndsWith, _) => {
            return Err(format!(
                "EventBridge has no negated substring, prefix or suffix test that ignores case \
                 and fails on a missing field as `{}` does (EB-24: `anything-but` prefix and \
                 suffix are case-sensitive; EG-22)",
                op.name()
            ));
        }
        (NumberNotInRange, _) => {
            return Err(
                "EventBridge's `anything-but` excludes numbers, not ranges (EB-23)".to_owned(),
            );
        }
        (IsNotNull, _) => {
            return Err(
                "`IsNotNull` holds on objects and arrays (EG-23), which an EventBridge \
                        pattern never sees as values (EB-2, EB-30)"
                    .to_owned(),
            );
        }
        (op, _) => return Err(format!("`{}` with an unexpected operand", op.name())),
    })
}

/// The path an Event Grid key reads, as a pattern's field: an envelope member in its canonical
/// spelling, or `data` and the members below it.
fn path_of(key: &Key) -> Vec<String> {
    match key {
        Key::EventMember(n) => vec![n.to_string()],
        Key::EventData(p) => std::iter::once("data".to_owned())
            .chain(p.iter().map(|s| s.to_string()))
            .collect(),
        other => vec![other.to_string()],
    }
}

/// The closest pattern of the Event Grid filter `policy` (valid for `schema`) in `target`'s
/// syntax (EventBridge, or an SNS body policy); with `expand`, each case-insensitive string in
/// every spelling EventBridge needs to fold as Event Grid does ([`spellings`]).
pub(super) fn pattern_of(
    policy: &Value,
    schema: EventGridSchema,
    target: Dialect,
    expand: bool,
) -> Result<Candidate, TranslateError> {
    let inexpressible = |at: &str, why: String| error("TRANSLATE_INEXPRESSIBLE", at, why);
    let parsed = eventgrid::parse(policy, schema)
        .map_err(|e| error("TRANSLATE_UNSUPPORTED", "", e.to_string()))?;
    let mut fields: Vec<Field> = Vec::new();
    let mut add = |field: Field| -> Result<(), TranslateError> {
        if let Some(other) = fields.iter().find(|f| {
            let n = f.path.len().min(field.path.len());
            f.path.get(..n) == field.path.get(..n)
        }) {
            return Err(inexpressible(
                &field.origin,
                format!(
                    "`{}` is also tested at {}: Event Grid ANDs the two, while an EventBridge \
                     pattern keeps one list of alternatives per field, a later one replacing \
                     the earlier (EB-7), and cannot test a field and a field below it",
                    field.path.join("."),
                    other.origin
                ),
            ));
        }
        fields.push(field);
        Ok(())
    };
    if let Some(types) = &parsed.event_types {
        add(Field {
            path: vec![schema.event_type_member().to_owned()],
            alternatives: types
                .iter()
                .flat_map(|t| spellings(t, target, expand))
                .map(|t| ignoring_case("", &t))
                .collect(),
            origin: "/includedEventTypes".to_owned(),
        })?;
    }
    for (value, op, member) in [
        (&parsed.subject_begins_with, "prefix", "subjectBeginsWith"),
        (&parsed.subject_ends_with, "suffix", "subjectEndsWith"),
    ] {
        if value.is_empty() {
            continue;
        }
        let alternatives = if parsed.subject_case_sensitive {
            vec![object([(op, Value::from(value.as_str()))])]
        } else {
            spellings(value, target, expand)
                .iter()
                .map(|v| ignoring_case_affix(op, v, target))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| inexpressible(&pointer::push("", member), why))?
        };
        add(Field {
            path: vec!["subject".to_owned()],
            alternatives,
            origin: pointer::push("", member),
        })?;
    }
    for f in &parsed.filters {
        let key = eventgrid::resolve_key(schema, &f.key).ok_or_else(|| {
            inexpressible(
                &pointer::push(&f.pointer, "key"),
                format!(
                    "the key `{}` names nothing in the event schema (EG-19): it is always \
                     undefined, which no pattern field is",
                    f.key
                ),
            )
        })?;
        let alternatives = alternatives(f.operator, &f.operand, target, expand)
            .map_err(|why| inexpressible(&pointer::push(&f.pointer, "operatorType"), why))?;
        add(Field {
            path: path_of(&key),
            alternatives,
            origin: f.pointer.clone(),
        })?;
    }
    let mut root = Map::new();
    let mut origins = Vec::new();
    for field in fields {
        let Some((last, parents)) = field.path.split_last() else {
            continue;
        };
        let mut here = &mut root;
        let mut at = String::new();
        for seg in parents {
            at = pointer::push(&at, seg);
            if !here.contains_key(seg) {
                here.insert(seg.clone(), Value::Object(Map::new()));
            }
            here = match here.get_mut(seg) {
                Some(Value::Object(m)) => m,
                _ => {
                    return Err(inexpressible(
                        &field.origin,
                        "a field below a tested field".into(),
                    ));
                }
            };
        }
        origins.push((pointer::push(&at, last), field.origin));
        here.insert(last.clone(), Value::Array(field.alternatives));
    }
    Ok(Candidate {
        pattern: Value::Object(root),
        origins,
    })
}

//! The JSON form: `{"groups": [[{"op", "header", "values"}, ...], ...]}`.
//!
//! Validation collects every error it finds, each with a code and a JSON Pointer (for example
//! `/groups/2/0/values/3`). Items past a bound are reported once (at the first one past it,
//! S14: items are counted as written) and not validated further.

use super::ast::{
    CODE, Clause, CmpOp, Cond, LIMIT_CODE, MAX_CLAUSES, MAX_GROUPS, MAX_IN_VALUES, StreamFilter,
    check_header, check_pattern, operand,
};
use crate::dialect::Members;
use crate::error::pointer::{self, Lazy};
use crate::error::{CompileError, PolicyError, excerpt};
use filtervm_vm::json::{Arena, Value, ValueRef};
use filtervm_vm::pattern::SegmentPattern;
use std::sync::Arc;

/// Parses and validates the JSON form, collecting every error.
pub fn parse(policy: &Value) -> Result<StreamFilter, CompileError> {
    Arena::with_local(|arena| parse_ref(arena.value(policy)))
}

/// Parses and validates the JSON form read as a borrowed tree, collecting every error.
pub fn parse_ref(policy: ValueRef<'_>) -> Result<StreamFilter, CompileError> {
    let mut errors = Vec::new();
    let filter = parse_filter(&policy, &mut errors);
    match filter {
        Some(f) if errors.is_empty() => Ok(f),
        _ => {
            if errors.is_empty() {
                errors.push(PolicyError::new(CODE, "", "the filter is invalid"));
            }
            Err(errors.into())
        }
    }
}

fn parse_filter(policy: &ValueRef<'_>, errors: &mut Vec<PolicyError>) -> Option<StreamFilter> {
    let ValueRef::Object(top) = *policy else {
        errors.push(PolicyError::new(
            CODE,
            "",
            "a stream filter is a JSON object {\"groups\": [[CLAUSE, ...], ...]} or the text form \
             as a JSON string",
        ));
        return None;
    };
    let top = Members(top);
    for name in top.keys().filter(|k| *k != "groups") {
        errors.push(PolicyError::new(
            CODE,
            pointer::push("", name),
            format!(
                "unknown member `{}`: a filter holds only `groups`",
                excerpt(name)
            ),
        ));
    }
    let groups = match top.get("groups") {
        Some(ValueRef::Array(groups)) => groups,
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                "/groups",
                "`groups` must be an array of groups, each an array of clauses",
            ));
            return None;
        }
        None => {
            errors.push(PolicyError::new(
                CODE,
                "",
                "a filter needs `groups`: an array of groups, each an array of clauses",
            ));
            return None;
        }
    };
    if groups.is_empty() {
        errors.push(PolicyError::new(
            CODE,
            "/groups",
            "`groups` is empty; a filter needs at least one group (an empty filter \
             is not \"no filter\")",
        ));
        return None;
    }
    if groups.len() > MAX_GROUPS {
        errors.push(PolicyError::new(
            LIMIT_CODE,
            pointer::index("/groups", MAX_GROUPS),
            format!(
                "the filter has {} groups; a filter holds at most {MAX_GROUPS} groups",
                groups.len()
            ),
        ));
    }
    let before = errors.len();
    let parsed: Vec<Vec<Clause>> = groups
        .iter()
        .take(MAX_GROUPS)
        .enumerate()
        .filter_map(|(g, group)| parse_group(group, &pointer::index("/groups", g), errors))
        .collect();
    (errors.len() == before).then_some(StreamFilter { groups: parsed })
}

fn parse_group(
    group: &ValueRef<'_>,
    at: &str,
    errors: &mut Vec<PolicyError>,
) -> Option<Vec<Clause>> {
    let ValueRef::Array(clauses) = *group else {
        errors.push(PolicyError::new(
            CODE,
            at,
            "a group must be an array of clauses (ANDed)",
        ));
        return None;
    };
    if clauses.is_empty() {
        errors.push(PolicyError::new(
            CODE,
            at,
            "the group is empty; a group needs at least one clause",
        ));
        return None;
    }
    if clauses.len() > MAX_CLAUSES {
        errors.push(PolicyError::new(
            LIMIT_CODE,
            pointer::index(at, MAX_CLAUSES),
            format!(
                "the group has {} clauses; a group holds at most {MAX_CLAUSES} clauses of any \
                 kind",
                clauses.len()
            ),
        ));
    }
    let before = errors.len();
    let parsed: Vec<Clause> = clauses
        .iter()
        .take(MAX_CLAUSES)
        .enumerate()
        .filter_map(|(c, clause)| parse_clause(clause, &pointer::index(at, c), errors))
        .collect();
    (errors.len() == before).then_some(parsed)
}

/// The operator of a clause, before its operands are read.
#[derive(Clone, Copy)]
enum Op {
    Eq,
    Ne,
    In,
    Exists,
    Missing,
    Cmp(CmpOp),
}

fn op_of(name: &str) -> Option<Op> {
    Some(match name {
        "=" => Op::Eq,
        "!=" => Op::Ne,
        "in" => Op::In,
        "exists" => Op::Exists,
        "missing" => Op::Missing,
        "<" => Op::Cmp(CmpOp::Lt),
        "<=" => Op::Cmp(CmpOp::Le),
        ">" => Op::Cmp(CmpOp::Gt),
        ">=" => Op::Cmp(CmpOp::Ge),
        _ => return None,
    })
}

fn parse_clause(clause: &ValueRef<'_>, at: &str, errors: &mut Vec<PolicyError>) -> Option<Clause> {
    let ValueRef::Object(m) = *clause else {
        errors.push(PolicyError::new(
            CODE,
            at,
            "a clause must be an object {\"op\", \"header\", \"values\"}",
        ));
        return None;
    };
    let m = Members(m);
    let before = errors.len();
    for name in m.keys() {
        if !matches!(name, "op" | "header" | "values") {
            errors.push(PolicyError::new(
                CODE,
                pointer::push(at, name),
                format!(
                    "unknown member `{}`: a clause holds only `op`, `header` and `values`",
                    excerpt(name)
                ),
            ));
        }
    }
    // The pointers of `op` and `header` name only their errors: written when one is reported.
    let clause_at = Lazy::new(at);
    let op_at = clause_at.token("op");
    let op = match m.get("op") {
        Some(ValueRef::String(s)) => {
            let op = op_of(s);
            if op.is_none() {
                errors.push(PolicyError::new(
                    CODE,
                    &op_at,
                    format!(
                        "unknown operator `{}`{}; operators are exactly =, !=, in, exists, \
                         missing, <, <=, >, >=",
                        excerpt(s),
                        crate::error::suggestion(s, &super::ast::NAMED_OPERATORS)
                    ),
                ));
            }
            op
        }
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                &op_at,
                "`op` must be a string: one of =, !=, in, exists, missing, <, <=, >, >=",
            ));
            None
        }
        None => {
            errors.push(PolicyError::new(CODE, at, "the clause has no `op`"));
            None
        }
    };
    let header_at = clause_at.token("header");
    let header = match m.get("header") {
        Some(ValueRef::String(s)) => match check_header(s) {
            Ok(()) => Some(Arc::from(s)),
            Err((code, message)) => {
                errors.push(PolicyError::new(code, &header_at, message));
                None
            }
        },
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                &header_at,
                "`header` must be a string: the header name",
            ));
            None
        }
        None => {
            errors.push(PolicyError::new(CODE, at, "the clause has no `header`"));
            None
        }
    };
    let values_at = pointer::push(at, "values");
    let values: Option<&[ValueRef<'_>]> = match m.get("values") {
        None => Some(&[]),
        Some(ValueRef::Array(v)) => Some(v),
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                &values_at,
                "`values` must be an array",
            ));
            None
        }
    };
    let cond = match (op, values) {
        (Some(op), Some(values)) => parse_cond(op, values, m, at, &values_at, errors),
        _ => None,
    };
    let (header, cond) = (header?, cond?);
    (errors.len() == before).then_some(Clause { header, cond })
}

fn parse_cond(
    op: Op,
    values: &[ValueRef<'_>],
    clause: Members<'_>,
    at: &str,
    values_at: &str,
    errors: &mut Vec<PolicyError>,
) -> Option<Cond> {
    // Where a count error points: at `values` when it is written, else at the clause.
    let count_at = if clause.contains_key("values") {
        values_at
    } else {
        at
    };
    let mut fail = |at: &str, message: String| {
        errors.push(PolicyError::new(CODE, at, message));
        None
    };
    match op {
        Op::Eq | Op::Ne => {
            let name = if matches!(op, Op::Eq) { "=" } else { "!=" };
            let [only] = values else {
                return fail(
                    count_at,
                    format!(
                        "`{name}` takes exactly one pattern in `values`, found {}",
                        values.len()
                    ),
                );
            };
            let p = pattern_value(only, &pointer::index(values_at, 0), name, errors)?;
            Some(if matches!(op, Op::Eq) {
                Cond::Eq(p)
            } else {
                Cond::Ne(p)
            })
        }
        Op::In => {
            if values.is_empty() {
                return fail(
                    count_at,
                    "an `in` list needs 1 to 32 patterns; an empty list can never match".to_owned(),
                );
            }
            let before = errors.len();
            if values.len() > MAX_IN_VALUES {
                errors.push(PolicyError::new(
                    LIMIT_CODE,
                    pointer::index(values_at, MAX_IN_VALUES),
                    format!(
                        "the `in` list has {} entries; it holds at most {MAX_IN_VALUES}",
                        values.len()
                    ),
                ));
            }
            let patterns: Vec<SegmentPattern> = values
                .iter()
                .take(MAX_IN_VALUES)
                .enumerate()
                .filter_map(|(i, v)| pattern_value(v, &pointer::index(values_at, i), "in", errors))
                .collect();
            (errors.len() == before).then_some(Cond::In(patterns))
        }
        Op::Exists | Op::Missing => {
            let name = if matches!(op, Op::Exists) {
                "exists"
            } else {
                "missing"
            };
            if values.is_empty() {
                Some(if matches!(op, Op::Exists) {
                    Cond::Exists
                } else {
                    Cond::Missing
                })
            } else {
                fail(
                    values_at,
                    format!("`{name}` takes no values; leave `values` out or write []"),
                )
            }
        }
        Op::Cmp(cmp) => {
            let name = cmp.symbol();
            let [only] = values else {
                return fail(
                    count_at,
                    format!(
                        "`{name}` takes exactly one JSON number in `values`, found {}",
                        values.len()
                    ),
                );
            };
            let at0 = pointer::index(values_at, 0);
            match only {
                ValueRef::Number(n) => match n.as_f64().and_then(operand) {
                    Some(x) => Some(Cond::Cmp(cmp, x)),
                    None => fail(
                        &at0,
                        format!("the number {} is not finite as a binary64", excerpt(n)),
                    ),
                },
                other => fail(
                    &at0,
                    format!(
                        "`{name}` takes a JSON number, not {} (a numeric string \
                         such as \"5\" is invalid)",
                        kind(other)
                    ),
                ),
            }
        }
    }
}

/// A pattern operand of `=`, `!=` or `in`: a string (S10), compiled (S7, seed "Patterns").
fn pattern_value(
    v: &ValueRef<'_>,
    at: &str,
    op: &str,
    errors: &mut Vec<PolicyError>,
) -> Option<SegmentPattern> {
    match v {
        ValueRef::String(s) => match check_pattern(s) {
            Ok(p) => Some(p),
            Err((code, message)) => {
                errors.push(PolicyError::new(code, at, message));
                None
            }
        },
        other => {
            errors.push(PolicyError::new(
                CODE,
                at,
                format!(
                    "`{op}` takes string patterns, not {} (numbers go to <, <=, >, >=)",
                    kind(other)
                ),
            ));
            None
        }
    }
}

fn kind(v: &ValueRef<'_>) -> &'static str {
    match v {
        ValueRef::Null => "null",
        ValueRef::Bool(_) => "a boolean",
        ValueRef::Number(_) => "a number",
        ValueRef::String(_) => "a string",
        ValueRef::Array(_) => "an array",
        ValueRef::Object(_) => "an object",
    }
}

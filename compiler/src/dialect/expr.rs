//! The `expr` dialect: nested AND/OR/NOT condition trees over message headers
//! (`docs/dialects/expr-filters.md` E1–E11, building on
//! `docs/dialects/002_9b34c5755797312a.txt`).
//!
//! A policy is a *condition* `{"key", "op", "value"}` (ops `startsWith` — alias `startWith`
//! (E1) — `endsWith`, `contains`, `in`, `exists`; an absent or null `op` means `in`) or an
//! *expression* `{"op": "AND" | "OR" | "NOT", "exp": [...]}` nested up to `max_depth` levels (E2).
//! Headers are a multimap: a condition holds when **any** value of its header satisfies it, and
//! every condition except `exists` is false when its header is missing (so `NOT` of it is true).
//! Lowering reads headers with [`Key::Header`]; "some value satisfies" is exactly the IR's
//! "some leaf" reading of [`Pred::Str`], so no dialect quirk needs extra nodes.
//!
//! # Options
//! [`ExprOptions`]: `{"max_depth": N}`, N a non-negative integer, at most [`MAX_DEPTH_CEILING`];
//! default [`DEFAULT_MAX_DEPTH`] (E2). Depth is the number of AND/OR/NOT nodes on the longest
//! root-to-leaf path; a bare condition has depth 0. Any other option, or a `max_depth` that is not
//! an integer in `0..=MAX_DEPTH_CEILING`, is rejected with
//! [`INVALID_OPTIONS`](ErrorCode::InvalidOptions) and a pointer to the option.
//!
//! # Error codes
//! - [`EXPR_INVALID_FILTER`](ErrorCode::ExprInvalidFilter): every shape, operator and operand
//!   error (E1, E3–E11; an unknown operator with a suggestion when a known one is close), and
//!   policy text that is too large or not JSON.
//! - [`EXPR_TOO_DEEP`](ErrorCode::ExprTooDeep): an expression nested deeper than `max_depth`
//!   (E2); the pointer names the first expression beyond the limit (e.g. `/exp/0/exp/0`).
//! - [`INVALID_OPTIONS`](ErrorCode::InvalidOptions): bad dialect options.
//!
//! Every error carries a JSON Pointer: to the offending member (`/exp/1/op`, `/exp/0/value/2`),
//! or to the node when a required member is missing.
//!
//! # Deep trees
//! Nothing here recurses deeper than `max_depth` + 1 ≤ [`MAX_DEPTH_CEILING`] + 1: validation stops
//! at the first expression beyond the limit, and lowering only sees validated trees. Policy text is
//! scanned first (`compile_text`), before JSON parsing, so a text nested 10,000 levels deep is rejected
//! with `EXPR_TOO_DEEP` in one linear pass (the JSON reader would otherwise refuse it with a
//! generic nesting error).

use super::Members;
use crate::error::pointer::{self, Lazy};
use crate::error::{CompileError, ErrorCode, PolicyError, excerpt};
use crate::ir::{Case, Node, Pred, StrOp};
use crate::options::{ExprOptions, Options};
use filtervm_vm::json::{Arena, Value, ValueRef};
use filtervm_vm::key::Key;
use filtervm_vm::value::Shapes;
use std::sync::Arc;

/// The code of every policy error except depth (E1, E3–E11).
const CODE: ErrorCode = ErrorCode::ExprInvalidFilter;
/// The code of an expression nested deeper than `max_depth` (E2).
const TOO_DEEP: ErrorCode = ErrorCode::ExprTooDeep;
/// The condition operators (E1: `startWith` is an alias of `startsWith`).
pub const CONDITION_OPERATORS: [&str; 5] = ["startsWith", "endsWith", "contains", "in", "exists"];
/// The expression operators.
pub const EXPRESSION_OPERATORS: [&str; 3] = ["AND", "OR", "NOT"];
pub use crate::options::{DEFAULT_MAX_DEPTH, MAX_DEPTH_CEILING};

/// A validated policy node and its JSON Pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What the node is.
    pub kind: ExprKind,
    /// Its JSON Pointer in the policy.
    pub pointer: String,
}

/// The node kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A condition on one header.
    Condition(Condition),
    /// `AND`: every operand holds (at least one operand, E3).
    And(Vec<Expr>),
    /// `OR`: some operand holds (at least one operand, E3).
    Or(Vec<Expr>),
    /// `NOT`: the single operand does not hold.
    Not(Box<Expr>),
}

/// A condition `{"key", "op", "value"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The header name (non-empty, E8).
    pub key: String,
    /// The operator and its operand.
    pub op: CondOp,
}

/// A condition operator with its operand.
#[derive(Debug, Clone, PartialEq)]
pub enum CondOp {
    /// `startsWith` / `startWith` (E1).
    StartsWith(String),
    /// `endsWith`.
    EndsWith(String),
    /// `contains`.
    Contains(String),
    /// `in` (or an absent/null op): a non-empty list of literal texts (E4).
    In(Vec<String>),
    /// `exists`: the header is present.
    Exists,
}

/// Parses and validates a policy, collecting every error in policy order.
pub fn parse(policy: &Value, options: &ExprOptions) -> Result<Expr, CompileError> {
    Arena::with_local(|arena| parse_ref(arena.value(policy), options))
}

/// Parses and validates a policy read as a borrowed tree, collecting every error in policy
/// order.
pub fn parse_ref(policy: ValueRef<'_>, options: &ExprOptions) -> Result<Expr, CompileError> {
    let mut errors = Vec::new();
    if matches!(policy, ValueRef::Array(_)) {
        // E11.
        return Err(CompileError::one(
            CODE,
            "",
            "a policy must be one condition or expression object; top-level arrays are not allowed (there is no implicit AND; wrap them in {\"op\": \"AND\", \"exp\": [...]})",
        ));
    }
    let parsed = parse_node(&policy, "", 0, options.max_depth, &mut errors);
    match parsed {
        Some(expr) if errors.is_empty() => Ok(expr),
        _ if errors.is_empty() => Err(CompileError::one(CODE, "", "invalid policy")),
        _ => Err(errors.into()),
    }
}

/// Reports an error at `at`: a written pointer, or a [`Lazy`] one, written now.
fn err(
    errors: &mut Vec<PolicyError>,
    code: ErrorCode,
    at: impl Into<String>,
    message: impl Into<String>,
) {
    errors.push(PolicyError::new(code, at, message));
}

/// `depth` is the number of expressions above this node.
fn parse_node(
    value: &ValueRef<'_>,
    at: &str,
    depth: usize,
    max_depth: usize,
    errors: &mut Vec<PolicyError>,
) -> Option<Expr> {
    let ValueRef::Object(members) = *value else {
        err(
            errors,
            CODE,
            at,
            "a node must be a condition object {\"key\", \"op\", \"value\"} or an expression object {\"op\", \"exp\"}",
        );
        return None;
    };
    let members = Members(members);
    let has_exp = members.contains_key("exp");
    let has_key = members.contains_key("key");
    match (has_exp, has_key) {
        (true, true) => {
            err(
                errors,
                CODE,
                at,
                "a node is either an expression (`exp`) or a condition (`key`), not both",
            );
            None
        }
        (true, false) => parse_expression(members, at, depth, max_depth, errors),
        (false, true) => parse_condition(members, at, errors),
        (false, false) => {
            let message = if members.contains_key("values") {
                "`values` is upstream vocabulary; an expression takes `exp` (an array) and a condition takes `key`"
            } else if members.contains_key("value")
                && matches!(members.get("op"), Some(ValueRef::String(op)) if is_logical(op))
            {
                "`NOT`/`AND`/`OR` take their operands in the array `exp`, not in `value`"
            } else {
                "a node needs `exp` (an expression) or `key` (a condition)"
            };
            err(errors, CODE, at, message);
            None
        }
    }
}

fn is_logical(op: &str) -> bool {
    matches!(
        op.to_ascii_uppercase().as_str(),
        "AND" | "OR" | "NOT" | "NAND" | "NOR"
    )
}

#[derive(Clone, Copy)]
enum Logic {
    And,
    Or,
    Not,
}

fn parse_expression(
    members: Members<'_>,
    at: &str,
    depth: usize,
    max_depth: usize,
    errors: &mut Vec<PolicyError>,
) -> Option<Expr> {
    let exp = members.get("exp");
    // E2: this expression sits at level depth + 1; stop before descending any further.
    if let Some(ValueRef::Array(_)) = exp
        && depth >= max_depth
    {
        err(
            errors,
            TOO_DEEP,
            at,
            format!(
                "expressions are nested more than {max_depth} levels deep (option `max_depth`)"
            ),
        );
        return None;
    }
    let before = errors.len();
    // E9: exactly `op` and `exp`.
    for name in members.keys() {
        if name != "op" && name != "exp" {
            let hint = if name == "values" || name == "value" {
                " (upstream vocabulary is not accepted)"
            } else {
                ""
            };
            err(
                errors,
                CODE,
                pointer::push(at, name),
                format!(
                    "unknown member `{}` in an expression: its members are exactly `op` and `exp`{hint}",
                    excerpt(name)
                ),
            );
        }
    }
    // The pointers of `op` and `exp` name only their errors: written when one is reported (a
    // child's pointer, its origin, is written from `exp`'s).
    let node_at = Lazy::new(at);
    let op_at = node_at.token("op");
    let logic = match members.get("op") {
        None => {
            err(
                errors,
                CODE,
                at,
                "an expression needs `op`: \"AND\", \"OR\" or \"NOT\"",
            );
            None
        }
        Some(ValueRef::String(op)) => match op {
            "AND" => Some(Logic::And),
            "OR" => Some(Logic::Or),
            "NOT" => Some(Logic::Not),
            "NAND" | "NOR" => {
                err(
                    errors,
                    CODE,
                    &op_at,
                    format!("`{op}` is upstream vocabulary and is not accepted; use NOT of AND/OR"),
                );
                None
            }
            other if matches!(other.to_ascii_uppercase().as_str(), "AND" | "OR" | "NOT") => {
                err(
                    errors,
                    CODE,
                    &op_at,
                    format!(
                        "expression operators are upper-case: write `{}`, not `{other}`",
                        other.to_ascii_uppercase()
                    ),
                );
                None
            }
            other => {
                err(
                    errors,
                    CODE,
                    &op_at,
                    format!(
                        "unknown expression operator `{}`{} (use \"AND\", \"OR\" or \"NOT\")",
                        excerpt(other),
                        crate::error::suggestion(other, &EXPRESSION_OPERATORS)
                    ),
                );
                None
            }
        },
        Some(ValueRef::Null) => {
            err(
                errors,
                CODE,
                &op_at,
                "an expression's `op` must not be null: the null-op default (`in`) applies only to conditions",
            );
            None
        }
        Some(_) => {
            err(
                errors,
                CODE,
                &op_at,
                "an expression's `op` must be \"AND\", \"OR\" or \"NOT\"",
            );
            None
        }
    };
    let exp_at = node_at.token("exp");
    let Some(ValueRef::Array(items)) = exp else {
        err(
            errors,
            CODE,
            &exp_at,
            "`exp` must be an array of conditions and expressions, even for NOT",
        );
        return None;
    };
    match logic {
        Some(Logic::And | Logic::Or) if items.is_empty() => err(
            errors,
            CODE,
            &exp_at,
            "an AND or OR needs at least one operand; empty ones are not allowed",
        ),
        Some(Logic::Not) if items.len() != 1 => err(
            errors,
            CODE,
            &exp_at,
            format!(
                "NOT takes exactly one operand in `exp`, found {}",
                items.len()
            ),
        ),
        _ => {}
    }
    let children: Vec<Expr> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            parse_node(item, &exp_at.index(i).get(), depth + 1, max_depth, errors)
        })
        .collect();
    if errors.len() != before {
        return None;
    }
    let kind = match logic? {
        Logic::And => ExprKind::And(children),
        Logic::Or => ExprKind::Or(children),
        Logic::Not => ExprKind::Not(Box::new(children.into_iter().next()?)),
    };
    Some(Expr {
        kind,
        pointer: at.to_owned(),
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    StartsWith,
    EndsWith,
    Contains,
    In,
    Exists,
}

fn parse_condition(members: Members<'_>, at: &str, errors: &mut Vec<PolicyError>) -> Option<Expr> {
    let before = errors.len();
    // E9: allowed members are `key`, `op` and `value`.
    for name in members.keys() {
        if !matches!(name, "key" | "op" | "value") {
            let hint = if name == "values" {
                " (upstream vocabulary is not accepted)"
            } else {
                ""
            };
            err(
                errors,
                CODE,
                pointer::push(at, name),
                format!(
                    "unknown member `{}` in a condition: its members are `key`, `op` and `value`{hint}",
                    excerpt(name)
                ),
            );
        }
    }
    // E8.
    let key = match members.get("key") {
        Some(ValueRef::String(k)) if !k.is_empty() => Some(k.to_owned()),
        _ => {
            err(
                errors,
                CODE,
                pointer::push(at, "key"),
                "`key` must be a non-empty string",
            );
            None
        }
    };
    // The pointer of `op` names only its errors: written when one is reported.
    let node_at = Lazy::new(at);
    let op_at = node_at.token("op");
    let op = match members.get("op") {
        // The seed: a null (or absent) op is `in`.
        None | Some(ValueRef::Null) => Some(Op::In),
        Some(ValueRef::String(op)) => match op {
            "startsWith" | "startWith" => Some(Op::StartsWith),
            "endsWith" => Some(Op::EndsWith),
            "contains" => Some(Op::Contains),
            "in" => Some(Op::In),
            "exists" => Some(Op::Exists),
            other => {
                let hint = match other {
                    "endWith" => " (`startWith` is the only alias; write `endsWith`)".to_owned(),
                    "AND" | "OR" | "NOT" => " (an expression takes `exp`, not `key`)".to_owned(),
                    _ => match CONDITION_OPERATORS
                        .into_iter()
                        .find(|known| known.eq_ignore_ascii_case(other))
                    {
                        Some(known) => {
                            format!(" (operator names are case-sensitive: `{known}`)")
                        }
                        None => crate::error::suggestion(other, &CONDITION_OPERATORS),
                    },
                };
                err(
                    errors,
                    CODE,
                    &op_at,
                    format!(
                        "unknown condition operator `{}`: use startsWith, endsWith, contains, in or exists{hint}",
                        excerpt(other)
                    ),
                );
                None
            }
        },
        Some(_) => {
            err(
                errors,
                CODE,
                &op_at,
                "a condition's `op` must be a string (or null, meaning `in`)",
            );
            None
        }
    };
    let value_at = pointer::push(at, "value");
    let value = members.get("value");
    let cond_op = match op {
        None => None,
        Some(Op::Exists) => match value {
            None => Some(CondOp::Exists),
            Some(_) => {
                err(errors, CODE, &value_at, "`exists` takes no `value`");
                None
            }
        },
        Some(Op::In) => parse_in(value, at, &value_at, errors).map(CondOp::In),
        Some(op) => {
            let name = match op {
                Op::StartsWith => "startsWith",
                Op::EndsWith => "endsWith",
                _ => "contains",
            };
            match value {
                Some(ValueRef::String(s)) => Some(match op {
                    Op::StartsWith => CondOp::StartsWith(s.to_owned()),
                    Op::EndsWith => CondOp::EndsWith(s.to_owned()),
                    _ => CondOp::Contains(s.to_owned()),
                }),
                None => {
                    err(errors, CODE, at, format!("`{name}` needs a string `value`"));
                    None
                }
                Some(_) => {
                    err(
                        errors,
                        CODE,
                        &value_at,
                        format!(
                            "`{name}` takes one string `value`; numbers, arrays and null are not accepted"
                        ),
                    );
                    None
                }
            }
        }
    };
    if errors.len() != before {
        return None;
    }
    Some(Expr {
        kind: ExprKind::Condition(Condition {
            key: key?,
            op: cond_op?,
        }),
        pointer: at.to_owned(),
    })
}

/// E4: a non-empty array of strings.
fn parse_in(
    value: Option<ValueRef<'_>>,
    at: &str,
    value_at: &str,
    errors: &mut Vec<PolicyError>,
) -> Option<Vec<String>> {
    match value {
        None => {
            err(
                errors,
                CODE,
                at,
                "`in` (the default op) needs `value`: a non-empty array of strings",
            );
            None
        }
        Some(ValueRef::Array([])) => {
            err(errors, CODE, value_at, "the `in` array must not be empty");
            None
        }
        Some(ValueRef::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            let mut ok = true;
            for (i, item) in items.iter().enumerate() {
                match item {
                    ValueRef::String(s) => out.push((*s).to_owned()),
                    _ => {
                        ok = false;
                        err(
                            errors,
                            CODE,
                            pointer::index(value_at, i),
                            "every `in` entry must be a string",
                        );
                    }
                }
            }
            ok.then_some(out)
        }
        Some(_) => {
            err(
                errors,
                CODE,
                value_at,
                "`in` takes a non-empty array of strings, not a bare value (write [\"x\"] for equality)",
            );
            None
        }
    }
}

/// Lowers a validated policy to IR. Every condition reads its header's values as string leaves;
/// each predicate holds when some value satisfies it, so a missing header fails every condition
/// but `exists` (and `NOT` of it holds).
pub fn lower_policy(expr: &Expr) -> Node {
    let at = expr.pointer.as_str();
    match &expr.kind {
        ExprKind::And(children) => Node::and(children.iter().map(lower_policy).collect(), at),
        ExprKind::Or(children) => Node::or(children.iter().map(lower_policy).collect(), at),
        ExprKind::Not(child) => {
            let inner = lower_policy(child);
            Node::new(crate::ir::NodeKind::Not(Box::new(inner)), at)
        }
        ExprKind::Condition(c) => {
            let key = Key::Header(c.key.as_str().into());
            let str_test = |op: StrOp, values: Vec<Arc<str>>| {
                let mut values = values;
                values.sort();
                values.dedup();
                Node::test(
                    key.clone(),
                    Pred::Str {
                        op,
                        case: Case::Sensitive, // E5: no folding, no normalisation.
                        values,
                    },
                    at,
                )
            };
            match &c.op {
                // E6: "" is a prefix/suffix/substring of every present value.
                CondOp::StartsWith(s) => str_test(StrOp::Prefix, vec![s.as_str().into()]),
                CondOp::EndsWith(s) => str_test(StrOp::Suffix, vec![s.as_str().into()]),
                CondOp::Contains(s) => str_test(StrOp::Contains, vec![s.as_str().into()]),
                CondOp::In(values) => str_test(
                    StrOp::Eq,
                    values.iter().map(|v| v.as_str().into()).collect(),
                ),
                CondOp::Exists => Node::test(key.clone(), Pred::Shape(Shapes::PRESENT), at),
            }
        }
    }
}

/// Parses, validates and lowers.
pub(crate) fn lower(policy: &Value, options: ExprOptions) -> Result<Node, CompileError> {
    Ok(lower_policy(&parse(policy, &options)?))
}

/// Reads, validates and lowers policy text: what reading it into a value
/// ([`parse_policy_text`](super::parse_policy_text)) and then [`lower`] do, with the same errors,
/// through a borrowed tree in this thread's arena (no allocation for the tree, nothing to drop).
pub(crate) fn lower_text(text: &str, options: &Options) -> Result<Node, CompileError> {
    let expr = Arena::with_local(|arena| {
        parse_ref(
            super::parse_policy_ref(super::Dialect::Expr, text, options, arena)?,
            &options.expr(),
        )
    })?;
    Ok(lower_policy(&expr))
}

/// One open JSON container seen by [`check_text`].
struct Frame {
    is_object: bool,
    /// On the chain root object → `exp` array → element object → `exp` array → ...
    on_chain: bool,
    /// Objects: the next string is a member name.
    expect_key: bool,
    /// Objects: the last member name was `exp`.
    key_is_exp: bool,
    /// Arrays: the index of the current element.
    index: usize,
}

/// Checks raw policy text before it is parsed as JSON (E2): one linear scan of the bracket
/// structure, following the chain of `exp` arrays from the root, rejects a text whose
/// expressions nest deeper than `max_depth` with [`EXPR_TOO_DEEP`](ErrorCode::ExprTooDeep) and the pointer of the first
/// expression beyond the limit — so a policy nested 10,000 levels deep fails quickly with the
/// depth error instead of the JSON reader's generic nesting error. Strings (and their escapes)
/// are skipped; malformed text is left to the JSON reader.
pub(crate) fn check_text(text: &str, options: ExprOptions) -> Result<(), CompileError> {
    let max_depth = options.max_depth;
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut level = 0usize; // on-chain `exp` arrays open
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                let mut escaped = false;
                while let Some(&c) = bytes.get(j) {
                    match c {
                        b'\\' => {
                            escaped = true;
                            j += 2;
                        }
                        b'"' => break,
                        _ => j += 1,
                    }
                }
                if let Some(top) = stack.last_mut()
                    && top.is_object
                    && top.expect_key
                {
                    let raw = text.get(start..j.min(bytes.len())).unwrap_or("");
                    top.key_is_exp = if escaped {
                        text.get(i..=j)
                            .and_then(|quoted| filtervm_vm::json::parse(quoted.as_bytes()).ok())
                            .is_some_and(|k| k.as_str() == Some("exp"))
                    } else {
                        raw == "exp"
                    };
                    top.expect_key = false;
                }
                i = j + 1;
                continue;
            }
            b'{' => {
                let on_chain = match stack.last() {
                    None => true,
                    Some(parent) => !parent.is_object && parent.on_chain,
                };
                stack.push(Frame {
                    is_object: true,
                    on_chain,
                    expect_key: true,
                    key_is_exp: false,
                    index: 0,
                });
            }
            b'[' => {
                let on_chain = stack
                    .last()
                    .is_some_and(|p| p.is_object && p.on_chain && p.key_is_exp);
                if on_chain {
                    level += 1;
                    if level > max_depth {
                        let at: String = stack
                            .iter()
                            .filter(|f| !f.is_object)
                            .map(|f| format!("/exp/{}", f.index))
                            .collect();
                        return Err(CompileError::one(
                            TOO_DEEP,
                            at,
                            format!(
                                "expressions are nested more than {max_depth} levels deep (option `max_depth`)"
                            ),
                        ));
                    }
                }
                stack.push(Frame {
                    is_object: false,
                    on_chain,
                    expect_key: false,
                    key_is_exp: false,
                    index: 0,
                });
            }
            b'}' | b']' => {
                if let Some(f) = stack.pop()
                    && !f.is_object
                    && f.on_chain
                {
                    level = level.saturating_sub(1);
                }
                if stack.is_empty() {
                    // The end of the top-level value; anything after it is the parser's business.
                    break;
                }
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    if top.is_object {
                        top.expect_key = true;
                        top.key_is_exp = false;
                    } else {
                        top.index += 1;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod suggestion_tests;

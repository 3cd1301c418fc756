//! The `stream` dialect: stream subscription clause groups (`docs/dialects/stream-filters.md`,
//! building on `docs/dialects/004_0db22b3017d8b844.txt`).
//!
//! A filter is a list of groups; a record matches when any group matches, and a group matches
//! when all its clauses match. A policy is given either as JSON (`{"groups": [[CLAUSE, ...], ...]}`,
//! [`json`]) or as the text form (`region = eu-* and n >= 5 or test missing`, [`text`]); both parse
//! to the same [`StreamFilter`], which lowers to IR with [`Key::Header`] keys.
//!
//! # Lowering (what each clause compiles to)
//!
//! | clause | IR | opcode |
//! |---|---|---|
//! | `h = p`, `p` without `*` | `Str{Eq}` on the header | `str_eq` (`str_in` once merged) |
//! | `h = p`, `p` with `*` | `Segment(p)` | `segment` |
//! | `h != p` | `not` of the `=` test: true when the header is missing (seed) | `… ; not` |
//! | `h in [..]` | `or` of the entries' tests; literal entries become one string set (S11) | `str_in`/`segment` |
//! | `h exists` / `h missing` | `Shape(present)` / `Shape(absent)` | `shape` |
//! | `h < n` … | `Num{source: Text}` with one interval: the header text must parse (S9) | `text_num_in` |
//!
//! IR origins are the JSON Pointers of the equivalent JSON form (`/groups/G/C`, `/groups/G/C/values/I`)
//! for both forms. Errors from the JSON form carry a JSON Pointer; errors from the text form carry
//! the byte span `bytes A..B` of the offending token.
//!
//! # Error codes
//!
//! | code | when |
//! |---|---|
//! | [`STREAM_INVALID_FILTER`](crate::ErrorCode::StreamInvalidFilter) | shape errors: not an object, unknown members, missing or non-string `op`/`header`, empty header name (S8), unknown operator (S13), wrong operand count or type (S10), empty `in` list (S11), empty filter or group (S12), non-finite number (S9) |
//! | [`STREAM_LIMIT_EXCEEDED`](crate::ErrorCode::StreamLimitExceeded) | more than 8 groups, more than 8 clauses in a group, more than 32 `in` entries, a pattern over 256 UTF-8 bytes (seed bounds, S7, S14) |
//! | [`STREAM_INVALID_PATTERN`](crate::ErrorCode::StreamInvalidPattern) | several `*` in one segment, `**` joined to other text, more than one `**` (seed "Patterns") |
//! | [`STREAM_SYNTAX_ERROR`](crate::ErrorCode::StreamSyntaxError) | the text form does not lex or parse (unexpected token, unterminated string, bad escape) |

pub(crate) mod ast;
pub mod json;
pub mod text;

use crate::error::{CompileError, pointer};
use crate::ir::{Case, Node, NumSource, Pred, StrOp};
use crate::options::Options;
use filtervm_vm::json::{Arena, Value, ValueRef};
use filtervm_vm::key::Key;
use filtervm_vm::pattern::SegmentPattern;
use filtervm_vm::program::Interval;
use filtervm_vm::value::Shapes;
use std::sync::Arc;

pub use ast::{
    Clause, CmpOp, Cond, MAX_CLAUSES, MAX_GROUPS, MAX_IN_VALUES, NAMED_OPERATORS, StreamFilter,
};
pub use text::{parse_text, to_text};

/// Parses and validates a policy: the JSON form (an object) or the text form (a string).
pub fn parse(policy: &Value) -> Result<StreamFilter, CompileError> {
    match policy {
        Value::String(s) => parse_text(s),
        other => json::parse(other),
    }
}

/// Parses and validates a policy read as a borrowed tree: the JSON form (an object) or the text
/// form (a string).
pub fn parse_ref(policy: ValueRef<'_>) -> Result<StreamFilter, CompileError> {
    match policy {
        ValueRef::String(s) => parse_text(s),
        other => json::parse_ref(other),
    }
}

/// The test of one pattern: string equality for a pattern without `*` (sharing its text), else a
/// segment match (taking the pattern).
fn pattern_test(key: &Key, p: SegmentPattern, at: &Arc<str>) -> Node {
    let pred = if p.is_literal() {
        Pred::Str {
            op: StrOp::Eq,
            case: Case::Sensitive,
            values: vec![Arc::clone(p.shared_source())],
        }
    } else {
        Pred::Segment(p)
    };
    Node::test(key.clone(), pred, at)
}

fn interval(op: CmpOp, n: f64) -> Interval {
    let all = Interval::ALL;
    match op {
        CmpOp::Lt => Interval {
            hi: n,
            hi_inclusive: false,
            ..all
        },
        CmpOp::Le => Interval {
            hi: n,
            hi_inclusive: true,
            ..all
        },
        CmpOp::Gt => Interval {
            lo: n,
            lo_inclusive: false,
            ..all
        },
        CmpOp::Ge => Interval {
            lo: n,
            lo_inclusive: true,
            ..all
        },
    }
}

/// Lowers one clause, taking its patterns (a segment test holds its pattern as parsed). `buffer`
/// holds the clause's pointer (`at`); an `in` list's pointers are written after it in place and
/// copied once each, and the buffer is left as it was given.
fn lower_clause(clause: Clause, at: &Arc<str>, buffer: &mut String) -> Node {
    let key = Key::Header(clause.header);
    match clause.cond {
        // Seed: "the header is present and its value matches": a test needs a leaf.
        Cond::Eq(p) => pattern_test(&key, p, at),
        // Seed: `!=` is exactly "not `=`", so a missing header matches.
        Cond::Ne(p) => Node::negation(pattern_test(&key, p, at)),
        // S11: present and matching some entry. Literal entries form one string set.
        Cond::In(ps) => {
            let clause_len = buffer.len();
            buffer.push_str("/values");
            let values_len = buffer.len();
            // Room for every entry at once: each may be a literal.
            let mut literals: Vec<Arc<str>> = Vec::with_capacity(ps.len());
            for p in &ps {
                if p.is_literal() {
                    literals.push(Arc::clone(p.shared_source()));
                }
            }
            // The string set first, then a test per distinct pattern with `*`: made at its
            // final size.
            let patterns = ps.len().saturating_sub(literals.len());
            let mut alternatives =
                Vec::with_capacity(patterns.saturating_add(usize::from(!literals.is_empty())));
            if !literals.is_empty() {
                // Sorted without repeats, as a string set's values are; a list written so (as
                // most are) is left as it is, at one comparison per entry.
                if !literals.is_sorted_by(|a, b| a < b) {
                    literals.sort();
                    literals.dedup();
                }
                let set = Pred::Str {
                    op: StrOp::Eq,
                    case: Case::Sensitive,
                    values: literals,
                };
                alternatives.push(Node::test(key.clone(), set, buffer.as_str()));
            }
            if patterns > 0 {
                for (i, p) in ps.iter().enumerate() {
                    if !p.is_literal() && !ps.iter().take(i).any(|q| q == p) {
                        pointer::push_index(buffer, i);
                        let entry_at: Arc<str> = buffer.as_str().into();
                        buffer.truncate(values_len);
                        alternatives.push(pattern_test(&key, p.clone(), &entry_at));
                    }
                }
            }
            buffer.truncate(clause_len);
            Node::or(alternatives, at)
        }
        Cond::Exists => Node::test(key, Pred::Shape(Shapes::PRESENT), at),
        Cond::Missing => Node::test(key, Pred::Shape(Shapes::ABSENT), at),
        // S9: the header text must parse as a JSON number and compare true as binary64.
        Cond::Cmp(op, n) => Node::test(
            key,
            Pred::Num {
                source: NumSource::Text,
                ranges: vec![interval(op, n)],
            },
            at,
        ),
    }
}

/// Lowers a validated filter to IR: `or` of groups, each an `and` of clauses.
pub fn lower_filter(filter: &StreamFilter) -> Node {
    lower_owned(filter.clone())
}

/// [`lower_filter`] taking the filter: its names and patterns move into the IR rather than being
/// copied (what the compile path, which has no further use for the filter, does).
fn lower_owned(filter: StreamFilter) -> Node {
    // Each group's and clause's pointer is written in place into this one buffer (a clause's
    // index after its group's, a group's after `/groups`, each truncated back after) and copied
    // once, into the origin its nodes share.
    let mut buffer = String::with_capacity(32);
    buffer.push_str("/groups");
    let groups_len = buffer.len();
    let mut groups = Vec::with_capacity(filter.groups.len());
    for (g, clauses) in filter.groups.into_iter().enumerate() {
        pointer::push_index(&mut buffer, g);
        let group_at: Arc<str> = buffer.as_str().into();
        let group_len = buffer.len();
        let mut lowered = Vec::with_capacity(clauses.len());
        for (c, clause) in clauses.into_iter().enumerate() {
            pointer::push_index(&mut buffer, c);
            let at: Arc<str> = buffer.as_str().into();
            lowered.push(lower_clause(clause, &at, &mut buffer));
            buffer.truncate(group_len);
        }
        groups.push(Node::and(lowered, group_at));
        buffer.truncate(groups_len);
    }
    Node::or(groups, "")
}

/// Parses, validates and lowers (the JSON form, or the text form given as a JSON string).
pub(crate) fn lower(policy: &Value) -> Result<Node, CompileError> {
    Ok(lower_owned(parse(policy)?))
}

/// Reads, validates and lowers policy text: what reading it into a value
/// ([`parse_policy_text`](super::parse_policy_text)) and then [`lower`] do, with the same errors,
/// through a borrowed tree in this thread's arena (no allocation for the tree, nothing to drop;
/// the text form is parsed from the text itself).
pub(crate) fn lower_text(text: &str, options: &Options) -> Result<Node, CompileError> {
    let filter = Arena::with_local(|arena| {
        parse_ref(super::parse_policy_ref(
            super::Dialect::Stream,
            text,
            options,
            arena,
        )?)
    })?;
    Ok(lower_owned(filter))
}

#[cfg(test)]
mod tests;

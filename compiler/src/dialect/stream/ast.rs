//! The `stream` dialect's syntax tree ([`StreamFilter`]), its bounds and error codes, and the
//! checks both forms share (header names, patterns, operands). Below the JSON form ([`super::json`]),
//! the text form ([`super::text`]) and the lowering.

use crate::error::ErrorCode;
use filtervm_vm::json::{Map, Number, Value};
use filtervm_vm::pattern::{MAX_PATTERN_BYTES, SegmentPattern};
use std::sync::Arc;

/// The code of shape and operand errors (see the module documentation).
pub(crate) const CODE: ErrorCode = ErrorCode::StreamInvalidFilter;
/// The code of a bound from the seed exceeded (groups, clauses, `in` entries, pattern bytes).
pub(crate) const LIMIT_CODE: ErrorCode = ErrorCode::StreamLimitExceeded;
/// The code of a pattern that breaks the seed's `*`/`**` rules.
pub(crate) const PATTERN_CODE: ErrorCode = ErrorCode::StreamInvalidPattern;
/// The code of text-form lexing and grammar errors.
pub(crate) const SYNTAX_CODE: ErrorCode = ErrorCode::StreamSyntaxError;

/// The operators with names (the others are `=`, `!=`, `<`, `<=`, `>`, `>=`), S13.
pub const NAMED_OPERATORS: [&str; 3] = ["in", "exists", "missing"];

/// Most groups in a filter (seed bounds).
pub const MAX_GROUPS: usize = 8;
/// Most clauses in a group (seed bounds; every kind of clause counts).
pub const MAX_CLAUSES: usize = 8;
/// Most entries in an `in` list (seed bounds, S11).
pub const MAX_IN_VALUES: usize = 32;

/// A validated filter: groups (ORed) of clauses (ANDed).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamFilter {
    /// The groups, each non-empty, at most [`MAX_GROUPS`] of them.
    pub groups: Vec<Vec<Clause>>,
}

/// One clause: a header and a condition on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    /// The header name: non-empty, compared exactly (S8). Shared, so that the lowered key holds
    /// it without a copy.
    pub header: Arc<str>,
    /// The condition.
    pub cond: Cond,
}

/// A clause's condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    /// `=`: present and matching the pattern.
    Eq(SegmentPattern),
    /// `!=`: missing, or not matching the pattern.
    Ne(SegmentPattern),
    /// `in`: present and matching one of 1 to 32 patterns (S11; duplicates kept, S14).
    In(Vec<SegmentPattern>),
    /// `exists`: present.
    Exists,
    /// `missing`: absent.
    Missing,
    /// `<`, `<=`, `>`, `>=`: the value parses as a number (S9) and compares true. The operand is
    /// finite, and `-0` is stored as `0` (they compare equal as binary64).
    Cmp(CmpOp, f64),
}

/// A numeric comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

impl Cond {
    /// The operator name as written in both forms (S13).
    pub fn op_name(&self) -> &'static str {
        match self {
            Cond::Eq(_) => "=",
            Cond::Ne(_) => "!=",
            Cond::In(_) => "in",
            Cond::Exists => "exists",
            Cond::Missing => "missing",
            Cond::Cmp(op, _) => op.symbol(),
        }
    }
}

impl StreamFilter {
    /// The filter in the JSON form (`{"groups": [[{"op", "header", "values"}]]}`); `exists` and
    /// `missing` are written without `values`.
    pub fn to_json(&self) -> Value {
        let groups = self
            .groups
            .iter()
            .map(|g| Value::Array(g.iter().map(Clause::to_json).collect()))
            .collect();
        let mut m = Map::new();
        m.insert("groups".into(), Value::Array(groups));
        Value::Object(m)
    }
}

impl Clause {
    fn to_json(&self) -> Value {
        let pat = |p: &SegmentPattern| Value::String(p.source().to_owned());
        let values: Option<Vec<Value>> = match &self.cond {
            Cond::Eq(p) | Cond::Ne(p) => Some(vec![pat(p)]),
            Cond::In(ps) => Some(ps.iter().map(pat).collect()),
            Cond::Exists | Cond::Missing => None,
            Cond::Cmp(_, n) => Some(vec![
                Number::from_f64(*n).map_or(Value::Null, Value::Number),
            ]),
        };
        let mut m = Map::new();
        m.insert("op".into(), Value::String(self.cond.op_name().into()));
        m.insert("header".into(), Value::String(self.header.to_string()));
        if let Some(v) = values {
            m.insert("values".into(), Value::Array(v));
        }
        Value::Object(m)
    }
}

/// Checks a header name (S8): non-empty. Returns the error code and message.
pub(crate) fn check_header(name: &str) -> Result<(), (ErrorCode, String)> {
    if name.is_empty() {
        Err((
            CODE,
            "the header name is empty; a clause names a non-empty header".to_owned(),
        ))
    } else {
        Ok(())
    }
}

/// Compiles a pattern, checking the 256-byte bound (S7) and the `*` rules. Returns the error code
/// and message.
pub(crate) fn check_pattern(source: &str) -> Result<SegmentPattern, (ErrorCode, String)> {
    if source.len() > MAX_PATTERN_BYTES {
        return Err((
            LIMIT_CODE,
            format!(
                "the pattern is {} bytes long; a pattern is at most {MAX_PATTERN_BYTES} bytes of \
                 UTF-8",
                source.len()
            ),
        ));
    }
    SegmentPattern::compile(source).map_err(|e| {
        (
            PATTERN_CODE,
            format!(
                "{}. The old matcher's `*` crossed dots and allowed several per segment; now `*` \
                 is one segment or one run inside a segment, and `**` (a whole segment, once) \
                 spans segments: write `orders.**` for the old `orders.*`",
                e.message
            ),
        )
    })
}

/// A finite numeric operand, `-0` stored as `0` (S9: they compare equal).
pub(crate) fn operand(x: f64) -> Option<f64> {
    if !x.is_finite() {
        None
    } else if x == 0.0 {
        Some(0.0)
    } else {
        Some(x)
    }
}

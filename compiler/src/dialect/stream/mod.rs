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
//! | [`STREAM_INVALID_FILTER`](ErrorCode::StreamInvalidFilter) | shape errors: not an object, unknown members, missing or non-string `op`/`header`, empty header name (S8), unknown operator (S13), wrong operand count or type (S10), empty `in` list (S11), empty filter or group (S12), non-finite number (S9) |
//! | [`STREAM_LIMIT_EXCEEDED`](ErrorCode::StreamLimitExceeded) | more than 8 groups, more than 8 clauses in a group, more than 32 `in` entries, a pattern over 256 UTF-8 bytes (seed bounds, S7, S14) |
//! | [`STREAM_INVALID_PATTERN`](ErrorCode::StreamInvalidPattern) | several `*` in one segment, `**` joined to other text, more than one `**` (seed "Patterns") |
//! | [`STREAM_SYNTAX_ERROR`](ErrorCode::StreamSyntaxError) | the text form does not lex or parse (unexpected token, unterminated string, bad escape) |

pub mod json;
pub mod text;

use crate::error::{CompileError, ErrorCode, pointer};
use crate::ir::{Case, Node, NumSource, Pred, StrOp};
use filtervm_vm::json::{Map, Number, Value};
use filtervm_vm::key::Key;
use filtervm_vm::pattern::{MAX_PATTERN_BYTES, SegmentPattern};
use filtervm_vm::program::Interval;
use filtervm_vm::value::Shapes;
use std::fmt;

pub use text::{parse_text, to_text};

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
    /// The header name: non-empty, compared exactly (S8).
    pub header: String,
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
        m.insert("header".into(), Value::String(self.header.clone()));
        if let Some(v) = values {
            m.insert("values".into(), Value::Array(v));
        }
        Value::Object(m)
    }
}

impl fmt::Display for StreamFilter {
    /// The canonical text form (see [`text`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text::print(self, f)
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

/// Parses and validates a policy: the JSON form (an object) or the text form (a string).
pub fn parse(policy: &Value) -> Result<StreamFilter, CompileError> {
    match policy {
        Value::String(s) => parse_text(s),
        other => json::parse(other),
    }
}

/// The test of one pattern: string equality for a pattern without `*`, else a segment match.
fn pattern_test(key: &Key, p: &SegmentPattern, at: &str) -> Node {
    let pred = if p.is_literal() {
        Pred::Str {
            op: StrOp::Eq,
            case: Case::Sensitive,
            values: vec![p.source().into()],
        }
    } else {
        Pred::Segment(p.clone())
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

fn lower_clause(clause: &Clause, at: &str) -> Node {
    let key = Key::Header(clause.header.as_str().into());
    match &clause.cond {
        // Seed: "the header is present and its value matches": a test needs a leaf.
        Cond::Eq(p) => pattern_test(&key, p, at),
        // Seed: `!=` is exactly "not `=`", so a missing header matches.
        Cond::Ne(p) => Node::negation(pattern_test(&key, p, at)),
        // S11: present and matching some entry. Literal entries form one string set.
        Cond::In(ps) => {
            let values_at = pointer::push(at, "values");
            let mut literals: Vec<Box<str>> = Vec::new();
            let mut alternatives = Vec::new();
            for (i, p) in ps.iter().enumerate() {
                if p.is_literal() {
                    literals.push(p.source().into());
                } else if !ps.iter().take(i).any(|q| q == p) {
                    alternatives.push(pattern_test(&key, p, &pointer::index(&values_at, i)));
                }
            }
            if !literals.is_empty() {
                literals.sort();
                literals.dedup();
                let set = Pred::Str {
                    op: StrOp::Eq,
                    case: Case::Sensitive,
                    values: literals,
                };
                alternatives.insert(0, Node::test(key.clone(), set, values_at.as_str()));
            }
            Node::or(alternatives, at)
        }
        Cond::Exists => Node::test(key, Pred::Shape(Shapes::PRESENT), at),
        Cond::Missing => Node::test(key, Pred::Shape(Shapes::ABSENT), at),
        // S9: the header text must parse as a JSON number and compare true as binary64.
        Cond::Cmp(op, n) => Node::test(
            key,
            Pred::Num {
                source: NumSource::Text,
                ranges: vec![interval(*op, *n)],
            },
            at,
        ),
    }
}

/// Lowers a validated filter to IR: `or` of groups, each an `and` of clauses.
pub fn lower_filter(filter: &StreamFilter) -> Node {
    let groups = filter
        .groups
        .iter()
        .enumerate()
        .map(|(g, clauses)| {
            let gat = pointer::index("/groups", g);
            let clauses = clauses
                .iter()
                .enumerate()
                .map(|(c, clause)| lower_clause(clause, &pointer::index(&gat, c)))
                .collect();
            Node::and(clauses, gat)
        })
        .collect();
    Node::or(groups, "")
}

/// Parses, validates and lowers (the JSON form, or the text form given as a JSON string).
pub(crate) fn lower(policy: &Value) -> Result<Node, CompileError> {
    Ok(lower_filter(&parse(policy)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dialect, Evaluator, Options, compile};
    use filtervm_vm::message::{Header, Message};
    use serde_json::{Value, json};

    fn hdrs(pairs: &[(&str, &str)]) -> Message {
        Message::headers(pairs.iter().copied())
    }

    fn eval(policy: &Value, msg: &Message) -> bool {
        match compile(Dialect::Stream, policy, &Options::Stream) {
            Ok(f) => Evaluator::new().matches(&f, msg),
            Err(e) => panic!("{policy} rejected: {e}"),
        }
    }

    fn clause(op: &str, header: &str, values: Value) -> Value {
        json!({"groups": [[{"op": op, "header": header, "values": values}]]})
    }

    #[test]
    fn s8_header_names_exact_and_dotted() {
        let p = clause("=", "Region", json!(["eu"]));
        assert!(eval(&p, &hdrs(&[("Region", "eu")])));
        assert!(!eval(&p, &hdrs(&[("region", "eu")])));
        let p = clause("exists", "a.b", json!([]));
        assert!(eval(&p, &hdrs(&[("a.b", "")])));
        assert!(!eval(&p, &hdrs(&[("a", "b")])));
    }

    #[test]
    fn s9_numeric_text_grammar() {
        let p = clause(">=", "n", json!([5]));
        for yes in ["5", "5.0", "50e-1", "1e3", "1E3", "1e+3"] {
            assert!(eval(&p, &hdrs(&[("n", yes)])), "{yes}");
        }
        for no in [
            " 5", "5 ", "+5", ".5", "5.", "05", "0x10", "1e400", "NaN", "", "4",
        ] {
            assert!(!eval(&p, &hdrs(&[("n", no)])), "{no}");
        }
        let p = clause(">", "n", json!([9007199254740992u64]));
        assert!(!eval(&p, &hdrs(&[("n", "9007199254740993")])));
        let p = clause("<=", "n", json!([0]));
        assert!(eval(&p, &hdrs(&[("n", "-0")])));
    }

    #[test]
    fn seed_not_equal_matches_missing_and_multi_valued_headers() {
        let p = clause("!=", "h", json!(["a.*"]));
        assert!(eval(&p, &hdrs(&[])));
        assert!(eval(&p, &hdrs(&[("h", "b.x")])));
        assert!(!eval(&p, &hdrs(&[("h", "a.x")])));
        // A multi-valued header: `=` holds when some value matches; `!=` is its negation.
        let multi = Message::Headers(vec![Header {
            name: "h".into(),
            values: vec!["b".into(), "a.x".into()],
        }]);
        assert!(!eval(&p, &multi));
        assert!(eval(&clause("=", "h", json!(["a.*"])), &multi));
    }

    #[test]
    fn lowering_uses_string_equality_for_literals() {
        let f = parse(&(&clause("in", "h", json!(["b", "a", "x.*", "b", "x.*"]))).into());
        let f = match f {
            Ok(f) => f,
            Err(e) => panic!("{e}"),
        };
        let ir = lower_filter(&f).to_string();
        assert!(ir.contains("str-eq [\"a\", \"b\"]"), "{ir}");
        assert_eq!(ir.matches("segment \"x.*\"").count(), 1, "{ir}");
        let f = match parse(&(&clause("=", "h", json!(["a.b"]))).into()) {
            Ok(f) => f,
            Err(e) => panic!("{e}"),
        };
        assert!(lower_filter(&f).to_string().contains("str-eq [\"a.b\"]"));
    }

    #[test]
    fn canonical_text_examples() {
        let cases = [
            (
                json!("region=eu-*   and subject = \"orders.*.created\"or priority>=5.0"),
                "region = eu-* and subject = orders.*.created or priority >= 5",
            ),
            (
                json!({"groups": [[
                    {"op": "in", "header": "in", "values": ["a", "b c", ""]},
                    {"op": "exists", "header": "trace", "values": []}
                ]]}),
                r#""in" in [a, "b c", ""] and trace exists"#,
            ),
            (
                json!(r#""caf\u00e9" != "x\"y" or n < 1e+21 and n > -0 and n <= 0.000001"#),
                r#""café" != "x\"y" or n < 1e21 and n > 0 and n <= 0.000001"#,
            ),
        ];
        for (policy, canonical) in cases {
            match parse(&(&policy).into()) {
                Ok(f) => {
                    assert_eq!(f.to_string(), canonical);
                    assert_eq!(to_text(&f), canonical);
                    assert_eq!(parse_text(canonical).ok(), Some(f));
                }
                Err(e) => panic!("{policy}: {e}"),
            }
        }
    }

    #[test]
    fn options_are_rejected() {
        let e = Options::from_json(Dialect::Stream, &json!({"x": 1})).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidOptions));
    }
}

//! Translation of a policy into another dialect of the same message model, proved equivalent by
//! [`super::diff`] before it is returned.
//!
//! - headers: `stream` ↔ `expr`, emitted from the source's IR (as lowered, so the structure of
//!   the policy is kept): each test becomes the target's condition or clause that lowers to the
//!   same test; a test the target has no condition for is an error naming its JSON Pointer;
//! - attributes: `sns` (attribute scope) ↔ `basaltic`, whose policies share one syntax for what
//!   both have: the policy is compiled as the target dialect, and the target's own validation
//!   names what it lacks (`$or`, `cidr`, ...); where the two read a message differently (basaltic
//!   compares every attribute's text, B-4), the proof fails with a witness message;
//! - documents: `sns` (body scope) ↔ `eventbridge` alike (one syntax for what both have,
//!   `docs/dialects/eventbridge-patterns.md` §6), `eventgrid` → `eventbridge` / `sns` through
//!   the closest pattern (`translate/eventgrid.rs`), `sns` / `eventbridge` → `eventgrid` through
//!   the closest filter (`translate/into_eventgrid.rs`: each field's alternatives as the advanced
//!   filters of one operator, the event type as `includedEventTypes`, a case-sensitive subject
//!   prefix or suffix as the subject filter; `$or`, alternatives of two operators, case-sensitive
//!   strings holding a letter (EG-31), keys the event schema has no name for (EG-16..EG-19) and
//!   the limits (EG-40) are errors naming the construct and why). The proof refuses them with a
//!   witness wherever the two read a document differently — a member named twice (sns the last,
//!   EB-3 every one, Event Grid the first), Event Grid's member names of another case (EG-16),
//!   numbers beyond binary64's shortest forms (EB-17, EG-33), `anything-but` on arrays (EB-25,
//!   sns rule 28), Event Grid's null read as undefined (EG-20) and arrays (EG-18, EG-24) — which
//!   for a policy reading any member is always. [`translate_assuming`] proves the candidate over
//!   the documents named [`Assumptions`] admit (`canonical-documents`: no repeated member,
//!   numbers in their shortest round-trip form, member names as the filters spell them;
//!   `no-arrays`), says so in [`Translation::assumptions`], and still refuses, with such a
//!   document as the witness, a candidate that differs on one.

mod eventgrid;
mod into_eventgrid;

use super::model::Model;
use super::{Assumptions, Verdict, Witness};
use crate::ir::{Case, Node, NodeKind, Pred, StrOp};
use crate::{Dialect, Filter, Options, compile_value};
use filtervm_vm::json::{Map, Value};
use filtervm_vm::key::Key;
use filtervm_vm::value::Shapes;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A policy in the target dialect, proved to match exactly the messages the source matches.
#[derive(Debug, Clone)]
pub struct Translation {
    /// The policy in the target dialect's JSON form.
    pub policy: Value,
    /// The policy compiled.
    pub filter: Filter,
    /// What the proof assumed of the documents (nothing, outside the document dialects or
    /// within one dialect): the two match exactly the same messages among those it admits.
    pub assumptions: Assumptions,
}

/// Why a policy cannot be translated.
#[derive(Debug, Clone)]
pub struct TranslateError {
    /// A stable code: `TRANSLATE_MODEL` (the target reads another part of a message),
    /// `TRANSLATE_INEXPRESSIBLE` (a part of the policy the target has no form for; `pointer`
    /// names it), `TRANSLATE_NOT_EQUIVALENT` (the target reads messages differently: `witness`
    /// shows one), `TRANSLATE_UNPROVED` (no difference found, but the search was bounded),
    /// `TRANSLATE_UNSUPPORTED` (a pair of dialects not translated yet).
    pub code: &'static str,
    /// A JSON Pointer into the source policy (`""`: the whole).
    pub pointer: String,
    /// What cannot be expressed, and why.
    pub message: String,
    /// A message the source and the candidate translation judge differently.
    pub witness: Option<Box<Witness>>,
    /// The candidate translation refused (with `TRANSLATE_NOT_EQUIVALENT` and
    /// `TRANSLATE_UNPROVED`): the policy the witness tells from the source.
    pub candidate: Option<Box<Value>>,
}

impl fmt::Display for TranslateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(policy)"
        } else {
            &self.pointer
        };
        write!(f, "{} at {at}: {}", self.code, self.message)
    }
}

impl std::error::Error for TranslateError {}

fn error(code: &'static str, pointer: &str, message: impl Into<String>) -> TranslateError {
    TranslateError {
        code,
        pointer: pointer.to_owned(),
        message: message.into(),
        witness: None,
        candidate: None,
    }
}

/// Translates `source` (compiled from `policy`) into a policy for `to`, proved equivalent on
/// every message.
pub fn translate(
    source: &Filter,
    policy: &Value,
    to: &Options,
) -> Result<Translation, TranslateError> {
    translate_assuming(source, policy, to, Assumptions::NONE)
}

/// Translates `source` (compiled from `policy`) into a policy for `to`, proved equivalent on
/// every document `assume` admits ([`super::diff_assuming`]); a candidate that differs on such a
/// document is refused with it as the witness. Assumptions narrow documents only: between
/// dialects of another model, or within one dialect, nothing is assumed.
pub fn translate_assuming(
    source: &Filter,
    policy: &Value,
    to: &Options,
    assume: Assumptions,
) -> Result<Translation, TranslateError> {
    let (from_model, to_model) = (Model::of(source.options()), Model::of(to));
    if from_model != to_model {
        return Err(error(
            "TRANSLATE_MODEL",
            "",
            format!(
                "a {} policy reads {}, a {} policy reads {}: a policy translates only within one \
                 message model",
                source.dialect(),
                from_model.name(),
                to.dialect(),
                to_model.name()
            ),
        ));
    }
    let lowered = source.lowered_ir().ok_or_else(|| {
        error(
            "TRANSLATE_UNSUPPORTED",
            "",
            "the filter was loaded without its IR",
        )
    })?;
    // Where each part of the candidate comes from in the source (pointer prefixes): the
    // candidate's own pointers, unless it was built in another shape.
    let mut origins: Vec<(String, String)> = Vec::new();
    let candidate = match (source.dialect(), to.dialect()) {
        (from, target) if from == target => policy.clone(),
        (_, Dialect::Expr) if to_model == Model::Headers => expr_of(lowered)?,
        (_, Dialect::Stream) if to_model == Model::Headers => stream_of(lowered)?,
        (Dialect::Sns | Dialect::Basaltic, Dialect::Sns | Dialect::Basaltic) => policy.clone(),
        (Dialect::Sns | Dialect::EventBridge, Dialect::Sns | Dialect::EventBridge) => {
            policy.clone()
        }
        (Dialect::EventGrid, Dialect::Sns | Dialect::EventBridge) => {
            let schema = match source.options() {
                Options::EventGrid(o) => o.schema,
                _ => crate::options::EventGridSchema::EventGrid,
            };
            // Event Grid's folding needs several spellings in a pattern (EG-31, EB-20), worth
            // their cost only where a proof can hold: documents without arrays or repeated
            // members.
            let expand = assume.canonical_documents && assume.no_arrays;
            let c = eventgrid::pattern_of(policy, schema, to.dialect(), expand)?;
            origins = c.origins;
            c.pattern
        }
        (Dialect::Sns | Dialect::EventBridge, Dialect::EventGrid) => {
            let schema = match to {
                Options::EventGrid(o) => o.schema,
                _ => crate::options::EventGridSchema::EventGrid,
            };
            let c = into_eventgrid::filter_of(policy, source.dialect(), schema)?;
            origins = c.origins;
            c.pattern
        }
        (from, target) => {
            return Err(error(
                "TRANSLATE_UNSUPPORTED",
                "",
                format!("translating {from} policies into {target} is not implemented yet"),
            ));
        }
    };
    let source_pointer = |at: &str| -> String {
        origins
            .iter()
            .filter(|(c, _)| at == c || at.starts_with(&format!("{c}/")))
            .max_by_key(|(c, _)| c.len())
            .map_or_else(
                || {
                    if origins.is_empty() {
                        at.to_owned()
                    } else {
                        String::new()
                    }
                },
                |(_, s)| s.clone(),
            )
    };
    let filter = compile_value(to.dialect(), &candidate, to).map_err(|e| {
        let first = e.errors.first();
        error(
            "TRANSLATE_INEXPRESSIBLE",
            &source_pointer(first.map_or("", |p| p.pointer.as_str())),
            format!(
                "{} cannot express this policy{}: {}",
                to.dialect(),
                if origins.is_empty() {
                    String::new()
                } else {
                    format!(" (its closest {} form is {candidate})", to.dialect())
                },
                first.map_or_else(|| e.to_string(), |p| format!("{} ({})", p.message, p.code))
            ),
        )
    })?;
    let assume = if to_model == Model::Document && source.dialect() != to.dialect() {
        assume
    } else {
        Assumptions::NONE
    };
    let on = if assume.is_none() {
        String::new()
    } else {
        format!(" (even assuming {})", assume.names().join(", "))
    };
    let d = super::diff_assuming(source, &filter, assume)
        .map_err(|e| error("TRANSLATE_UNPROVED", "", e.to_string()))?;
    match d.verdict {
        Verdict::Same => Ok(Translation {
            policy: candidate,
            filter,
            assumptions: assume,
        }),
        Verdict::Different => Err(TranslateError {
            code: "TRANSLATE_NOT_EQUIVALENT",
            // The construct reading the first key the two judge differently.
            pointer: d
                .keys
                .first()
                .and_then(|k| test_reading(lowered, &k.key))
                .unwrap_or_default(),
            message: format!(
                "{} reads messages differently from {}{}{on}: the closest {} policy, \
                 {candidate}, matches other messages (see the witness)",
                to.dialect(),
                source.dialect(),
                {
                    let mut keys: Vec<&str> = Vec::new();
                    for k in &d.keys {
                        if !keys.contains(&k.key.as_str()) {
                            keys.push(&k.key);
                        }
                    }
                    if keys.is_empty() {
                        String::new()
                    } else {
                        format!(" at `{}`", keys.join("`, `"))
                    }
                },
                to.dialect()
            ),
            witness: d.first_only.or(d.second_only).map(Box::new),
            candidate: Some(Box::new(candidate)),
        }),
        Verdict::Unknown => Err(TranslateError {
            candidate: Some(Box::new(candidate.clone())),
            ..error(
                "TRANSLATE_UNPROVED",
                "",
                format!(
                    "the translation {candidate} could not be proved equivalent{}: {}",
                    if assume.is_none() {
                        String::new()
                    } else {
                        format!(" assuming {}", assume.names().join(", "))
                    },
                    match d.exactness {
                        super::Exactness::Bounded(why) => why,
                        super::Exactness::Exact => String::new(),
                    }
                ),
            )
        }),
    }
}

/// The origin of the first test of `root` whose key reads the location labelled `label` (as
/// [`super::KeyDifference::key`] names it; Event Grid's member names ignoring ASCII case).
fn test_reading(root: &Node, label: &str) -> Option<String> {
    let mut spelled = BTreeMap::new();
    let mut found = None;
    root.walk(&mut |n| {
        if found.is_none()
            && let NodeKind::Test(t) = &n.kind
            && let super::model::Reads::At(loc) = super::model::reads(&t.key, &mut spelled)
            && (loc.label().eq_ignore_ascii_case(label)
                || loc
                    .label()
                    .get(..label.len() + 1)
                    .is_some_and(|p| p.eq_ignore_ascii_case(&format!("{label}."))))
        {
            found = Some(n.origin.to_string());
        }
    });
    found
}

fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map>(),
    )
}

fn strings(values: &[Arc<str>]) -> Value {
    Value::Array(values.iter().map(|v| Value::from(&**v)).collect())
}

fn header(key: &Key, at: &str) -> Result<String, TranslateError> {
    match key {
        Key::Header(name) => Ok(name.to_string()),
        other => Err(error(
            "TRANSLATE_INEXPRESSIBLE",
            at,
            format!("the key {other} is not a header"),
        )),
    }
}

/// An expr expression of an IR tree.
fn expr_of(node: &Node) -> Result<Value, TranslateError> {
    let at = &*node.origin;
    let many = |op: &str, cs: &[Node]| -> Result<Value, TranslateError> {
        let mut items = cs.iter().map(expr_of).collect::<Result<Vec<_>, _>>()?;
        if items.len() == 1 {
            return items
                .pop()
                .ok_or_else(|| error("TRANSLATE_INEXPRESSIBLE", at, "empty"));
        }
        Ok(object([
            ("op", Value::from(op)),
            ("exp", Value::Array(items)),
        ]))
    };
    let not = |v: Value| object([("op", Value::from("NOT")), ("exp", Value::Array(vec![v]))]);
    Ok(match &node.kind {
        NodeKind::And(cs) if !cs.is_empty() => many("AND", cs)?,
        NodeKind::Or(cs) if !cs.is_empty() => many("OR", cs)?,
        NodeKind::Not(c) => not(expr_of(c)?),
        NodeKind::Test(t) => {
            let key = header(&t.key, at)?;
            let cond = |op: &str, value: Option<Value>| {
                let mut m = Map::new();
                m.insert("key".into(), Value::from(key.as_str()));
                m.insert("op".into(), Value::from(op));
                if let Some(v) = value {
                    m.insert("value".into(), v);
                }
                Value::Object(m)
            };
            match &t.pred {
                Pred::Str {
                    op,
                    case: Case::Sensitive,
                    values,
                } => {
                    let name = match op {
                        StrOp::Eq => return Ok(cond("in", Some(strings(values)))),
                        StrOp::Prefix => "startsWith",
                        StrOp::Suffix => "endsWith",
                        StrOp::Contains => "contains",
                    };
                    let mut alts: Vec<Value> = values
                        .iter()
                        .map(|v| cond(name, Some(Value::from(&**v))))
                        .collect();
                    if alts.len() == 1 {
                        alts.pop().unwrap_or(Value::Null)
                    } else {
                        object([("op", Value::from("OR")), ("exp", Value::Array(alts))])
                    }
                }
                Pred::Shape(s) if *s == Shapes::PRESENT => cond("exists", None),
                Pred::Shape(s) if *s == Shapes::ABSENT => not(cond("exists", None)),
                other => {
                    return Err(error(
                        "TRANSLATE_INEXPRESSIBLE",
                        at,
                        format!(
                            "expr has no condition for `{other}` on header `{key}` (its \
                             conditions are startsWith, endsWith, contains, in and exists, on \
                             exact text: no patterns, no numbers)"
                        ),
                    ));
                }
            }
        }
        NodeKind::True | NodeKind::False | NodeKind::And(_) | NodeKind::Or(_) => {
            return Err(error(
                "TRANSLATE_INEXPRESSIBLE",
                at,
                "expr has no constant expression (a policy that matches every or no message)",
            ));
        }
    })
}

/// The most groups a stream filter may have (its bounds: 8 groups of 8 clauses).
const STREAM_GROUPS: usize = 8;

/// A literal of a stream clause: a test, negated or not.
type Literal<'a> = (&'a Node, bool);

/// A stream filter (JSON form) of an IR tree: its disjunctive normal form, each literal a clause.
fn stream_of(node: &Node) -> Result<Value, TranslateError> {
    let groups = dnf(node, false)?;
    let mut out = Vec::new();
    for group in groups {
        let mut clauses = Vec::new();
        for (test, negated) in group {
            clauses.extend(stream_clauses(test, negated)?);
        }
        out.push(Value::Array(clauses));
    }
    Ok(object([("groups", Value::Array(out))]))
}

fn dnf<'a>(node: &'a Node, negated: bool) -> Result<Vec<Vec<Literal<'a>>>, TranslateError> {
    let at = &*node.origin;
    let too_many = || {
        error(
            "TRANSLATE_INEXPRESSIBLE",
            at,
            format!(
                "stream needs more than {STREAM_GROUPS} groups (clause groups ORed) to say this"
            ),
        )
    };
    let product =
        |parts: Vec<Vec<Vec<Literal<'a>>>>| -> Result<Vec<Vec<Literal<'a>>>, TranslateError> {
            let mut acc: Vec<Vec<Literal<'a>>> = vec![Vec::new()];
            for p in parts {
                let mut next = Vec::new();
                for a in &acc {
                    for b in &p {
                        let mut g = a.clone();
                        g.extend(b.iter().copied());
                        next.push(g);
                        if next.len() > STREAM_GROUPS {
                            return Err(too_many());
                        }
                    }
                }
                acc = next;
            }
            Ok(acc)
        };
    let union =
        |parts: Vec<Vec<Vec<Literal<'a>>>>| -> Result<Vec<Vec<Literal<'a>>>, TranslateError> {
            let all: Vec<_> = parts.into_iter().flatten().collect();
            if all.len() > STREAM_GROUPS {
                return Err(too_many());
            }
            Ok(all)
        };
    match (&node.kind, negated) {
        (NodeKind::And(cs), false) | (NodeKind::Or(cs), true) => product(
            cs.iter()
                .map(|c| dnf(c, negated))
                .collect::<Result<_, _>>()?,
        ),
        (NodeKind::Or(cs), false) | (NodeKind::And(cs), true) => union(
            cs.iter()
                .map(|c| dnf(c, negated))
                .collect::<Result<_, _>>()?,
        ),
        (NodeKind::Not(c), n) => dnf(c, !n),
        (NodeKind::Test(_), n) => Ok(vec![vec![(node, n)]]),
        (NodeKind::True, false) | (NodeKind::False, true) => Ok(vec![Vec::new()]),
        (NodeKind::True, true) | (NodeKind::False, false) => Ok(Vec::new()),
    }
}

fn stream_clauses(node: &Node, negated: bool) -> Result<Vec<Value>, TranslateError> {
    let at = &*node.origin;
    let NodeKind::Test(t) = &node.kind else {
        return Err(error("TRANSLATE_INEXPRESSIBLE", at, "not a test"));
    };
    let name = header(&t.key, at)?;
    let clause = |op: &str, values: Option<Vec<Value>>| {
        let mut m = Map::new();
        m.insert("op".into(), Value::from(op));
        m.insert("header".into(), Value::from(name.as_str()));
        if let Some(v) = values {
            m.insert("values".into(), Value::Array(v));
        }
        Value::Object(m)
    };
    let inexpressible = |why: String| Err(error("TRANSLATE_INEXPRESSIBLE", at, why));
    match (&t.pred, negated) {
        (
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values,
            },
            n,
        ) => {
            if let Some(v) = values.iter().find(|v| v.contains('*')) {
                return inexpressible(format!(
                    "the value {} holds `*`, which a stream pattern always reads as a wildcard \
                     (stream-filters.md S2-S4: no pattern matches only a literal `*`)",
                    Value::from(&**v)
                ));
            }
            let vals: Vec<Value> = values.iter().map(|v| Value::from(&**v)).collect();
            Ok(match (n, vals.len()) {
                (false, 1) => vec![clause("=", Some(vals))],
                (false, _) => vec![clause("in", Some(vals))],
                (true, _) => vals
                    .into_iter()
                    .map(|v| clause("!=", Some(vec![v])))
                    .collect(),
            })
        }
        (Pred::Segment(p), n) => Ok(vec![clause(
            if n { "!=" } else { "=" },
            Some(vec![Value::from(p.source())]),
        )]),
        (Pred::Shape(s), n) if *s == Shapes::PRESENT || *s == Shapes::ABSENT => {
            let present = (*s == Shapes::PRESENT) != n;
            Ok(vec![clause(
                if present { "exists" } else { "missing" },
                None,
            )])
        }
        (
            Pred::Num {
                source: crate::ir::NumSource::Text,
                ranges,
            },
            false,
        ) if ranges.len() == 1 => {
            let mut out = Vec::new();
            for r in ranges {
                if r.lo.is_finite() {
                    let op = if r.lo_inclusive { ">=" } else { ">" };
                    out.push(clause(op, Some(vec![number(r.lo)])));
                }
                if r.hi.is_finite() {
                    let op = if r.hi_inclusive { "<=" } else { "<" };
                    out.push(clause(op, Some(vec![number(r.hi)])));
                }
            }
            Ok(out)
        }
        (pred, n) => inexpressible(format!(
            "stream has no clause for {}`{pred}` on header `{name}` (its clauses are =, !=, in \
             with dot-segment patterns, exists, missing and one-sided numeric comparisons: no \
             prefix, suffix or substring across segments, no negated comparison)",
            if n { "not " } else { "" }
        )),
    }
}

fn number(x: f64) -> Value {
    filtervm_vm::json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

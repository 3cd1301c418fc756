//! Lint: warnings about a policy that compiles but probably does not mean what its author
//! thinks (README.md, "Explain").
//!
//! Every warning has a stable code, the JSON Pointer of the policy part it is about and a one-line
//! fix. Warnings never block compiling. Most checks work on the IR as lowered from the policy, so
//! they serve every dialect:
//!
//! | code | what |
//! |---|---|
//! | [`NEVER_HOLDS`] | a condition that folds to `false` (an empty numeric range, a key that names nothing) |
//! | [`ALWAYS_HOLDS`] | a condition that folds to `true`, or alternatives that cover every case (`exists: true` or `exists: false`) |
//! | [`CONTRADICTION`] | two conditions that can never hold together (an `in` list and an exclusion that cancel, presence and absence) |
//! | [`DUPLICATE`] | an alternative or condition equivalent to an earlier one |
//! | [`SUBSUMED`] | an alternative whose every match is also a match of another alternative |
//! | [`REDUNDANT`] | a condition that holds whenever another condition beside it holds |
//!
//! Dialect-specific checks read the policy JSON:
//!
//! | code | dialect | what |
//! |---|---|---|
//! | [`PREFIX_SUFFIX_OR`] | basaltic, sns | a `prefix` and a `suffix` in one array: they mean OR, not AND (seed 000) |
//! | [`EXISTS_FALSE_NO_ATTRIBUTES`] | sns | `exists: false` in attribute scope fails on a message with no attributes (rule 12) |
//! | [`NEGATIVE_ON_MISSING_KEY`] | eventgrid | `StringNotContains`/`NotBeginsWith`/`NotEndsWith` on a key that may be absent: false when it is (EG-22) |
//! | [`UNKNOWN_KEY`] | eventgrid | a key that names nothing in the schema, so it is always undefined (EG-19) |
//! | [`DUPLICATE_MEMBER`] | all (JSON form) | an object of the policy names a member twice: only the last value counts |
//! | [`NATS_WILDCARD`] | stream | a pattern segment `>`: NATS's multi-level wildcard is a literal character here |
//! | [`STAR_WITHIN_SEGMENT`] | stream | a `*` at either end of a dotted pattern (`orders.*`, `orders.eu*`, `*.created`): it no longer crosses dots, as the old matcher's did |
//! | [`REPLACED_MEMBER`] | eventbridge | a member every branch replaces by a later member naming the same path (EB-7): it never counts |
//! | [`EXISTS_FALSE_ORDER`] | eventbridge | an `exists: false` that sorts before a field it shares an array with: judged over every element, not the one that field matched (EB-10) |
//! | [`ALWAYS_HOLDS`] | eventbridge | alternatives of which an `anything-but` admits every value the others exclude (or two `anything-but`s that exclude nothing in common) |
//!
//! The IR checks use the optimizer's own passes ([`opt::optimize`] of a subtree folding to a
//! constant), structural equality ([`Node::same`]) and a per-leaf implication between predicates of
//! one key (`a ⇒ b` when every leaf satisfying `a` satisfies `b`): since a test holds when *some*
//! leaf satisfies its predicate, `a ⇒ b` makes `test a` imply `test b` and contradict `not test b`.

use crate::dialect::Dialect;
use crate::dialect::eventgrid;
use crate::error::pointer;
use crate::ir::{Node, NodeKind, NumSource, Pred, StrOp};
use crate::opt;
use crate::options::{EventGridSchema as Schema, Options, SnsScope};
use crate::{CompileError, Filter, compile_value};
use filtervm_vm::json::{Map, Value};
use filtervm_vm::key::Key;
use filtervm_vm::number::Decimal;
use filtervm_vm::program::{DecInterval, Interval};
use filtervm_vm::value::{LeafTypes, Shapes};
use std::cmp::Ordering;
use std::fmt;

/// A condition that can never hold.
pub const NEVER_HOLDS: &str = "NEVER_HOLDS";
/// A condition that always holds.
pub const ALWAYS_HOLDS: &str = "ALWAYS_HOLDS";
/// Two conditions that can never hold together.
pub const CONTRADICTION: &str = "CONTRADICTION";
/// A condition or alternative equivalent to an earlier one.
pub const DUPLICATE: &str = "DUPLICATE";
/// An alternative covered by another alternative.
pub const SUBSUMED: &str = "SUBSUMED";
/// A condition implied by another condition beside it.
pub const REDUNDANT: &str = "REDUNDANT";
/// A `prefix` and a `suffix` in one array (they mean OR).
pub const PREFIX_SUFFIX_OR: &str = "PREFIX_SUFFIX_OR";
/// sns `exists: false` in attribute scope (rule 12).
pub const EXISTS_FALSE_NO_ATTRIBUTES: &str = "EXISTS_FALSE_NO_ATTRIBUTES";
/// An Event Grid negative string operator on a key that may be absent (EG-22).
pub const NEGATIVE_ON_MISSING_KEY: &str = "NEGATIVE_ON_MISSING_KEY";
/// An Event Grid key that names nothing (EG-19).
pub const UNKNOWN_KEY: &str = "UNKNOWN_KEY";
/// An object of the policy that names a member twice (the JSON reader keeps the last value).
pub const DUPLICATE_MEMBER: &str = "DUPLICATE_MEMBER";

/// An eventbridge member that every branch replaces (EB-7).
pub const REPLACED_MEMBER: &str = crate::dialect::eventbridge::lint::REPLACED_MEMBER;
/// An eventbridge `exists: false` judged before a field it shares an array with (EB-10).
pub const EXISTS_FALSE_ORDER: &str = crate::dialect::eventbridge::lint::EXISTS_FALSE_ORDER;

/// A stream pattern segment `>` (NATS's multi-level wildcard, a literal character here).
pub const NATS_WILDCARD: &str = "NATS_WILDCARD";
/// A stream `*` at either end of a dotted pattern, where the old matcher's `*` crossed dots.
pub const STAR_WITHIN_SEGMENT: &str = "STAR_WITHIN_SEGMENT";

/// One warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// A stable code (the constants of this module).
    pub code: &'static str,
    /// The JSON Pointer of the policy part (`""` = the whole policy; for the stream text form, the
    /// pointer into the equivalent JSON form).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// What to do, in one line.
    pub fix: String,
}

impl Warning {
    fn new(code: &'static str, pointer: &str, message: String, fix: impl Into<String>) -> Warning {
        Warning {
            code,
            pointer: pointer.to_owned(),
            message,
            fix: fix.into(),
        }
    }

    /// The machine-readable form: `{"code", "pointer", "message", "fix"}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), Value::from(self.code));
        m.insert("pointer".into(), Value::from(self.pointer.as_str()));
        m.insert("message".into(), Value::from(self.message.as_str()));
        m.insert("fix".into(), Value::from(self.fix.as_str()));
        Value::Object(m)
    }
}

impl fmt::Display for Warning {
    /// `CODE /pointer: message (fix: ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(policy)"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{} {at}: {} (fix: {})",
            self.code, self.message, self.fix
        )
    }
}

/// Compiles `policy` and lints it (the compile errors when it does not compile).
pub fn lint(
    dialect: Dialect,
    policy: &Value,
    options: &Options,
) -> Result<Vec<Warning>, CompileError> {
    let filter = compile_value(dialect, policy, options)?;
    Ok(lint_filter(&filter, policy))
}

/// Lints a compiled filter; `policy` is the policy it was compiled from (for the dialect checks).
pub fn lint_filter(filter: &Filter, policy: &Value) -> Vec<Warning> {
    let mut specific = Vec::new();
    duplicate_members(policy, "", &mut specific);
    match filter.dialect() {
        Dialect::Basaltic => {
            if let Value::Object(members) = policy {
                for (name, value) in members {
                    if let Value::Array(items) = value {
                        prefix_suffix(
                            Dialect::Basaltic,
                            items,
                            &pointer::push("", name),
                            &mut specific,
                        );
                    }
                }
            }
        }
        Dialect::Sns => {
            let body = filter.options().sns().scope == SnsScope::MessageBody;
            if let Value::Object(members) = policy {
                sns_object(members, "", !body, &mut specific);
            }
        }
        Dialect::EventGrid => {
            eventgrid_checks(policy, filter.options().eventgrid().schema, &mut specific);
        }
        Dialect::Stream => stream_patterns(policy, &mut specific),
        Dialect::Expr => {}
        Dialect::EventBridge => {
            for (code, at, message, fix) in crate::dialect::eventbridge::lint::check(policy) {
                specific.push(Warning::new(code, &at, message, fix));
            }
        }
    }
    let mut generic = Vec::new();
    if let Some(ir) = filter.lowered_ir() {
        constants(ir, true, &mut generic);
        pairs(ir, &mut generic);
    }
    // A specific warning explains a constant at its pointer better than the generic one.
    generic.retain(|g| {
        !specific
            .iter()
            .any(|s| s.pointer == g.pointer && matches!(g.code, NEVER_HOLDS | ALWAYS_HOLDS))
    });
    let mut out: Vec<Warning> = Vec::new();
    for w in specific.into_iter().chain(generic) {
        if !out
            .iter()
            .any(|o| o.code == w.code && o.pointer == w.pointer)
        {
            out.push(w);
        }
    }
    out.sort_by(|a, b| pointer_order(&a.pointer, &b.pointer));
    out
}

/// Orders pointers token by token, numbers numerically.
fn pointer_order(a: &str, b: &str) -> Ordering {
    let mut x = a.split('/');
    let mut y = b.split('/');
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    _ => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Constants: subtrees the optimizer folds to true or false.

fn constant(node: &Node) -> Option<bool> {
    match opt::optimize_copy(node).kind {
        NodeKind::True => Some(true),
        NodeKind::False => Some(false),
        _ => None,
    }
}

fn constants(node: &Node, root: bool, out: &mut Vec<Warning>) {
    match constant(node) {
        Some(true)
            if root
                && (matches!(node.kind, NodeKind::True)
                    || matches!(&node.kind, NodeKind::And(c) if c.is_empty())) =>
        {
            // The empty policy matches everything by design (basaltic B-2, sns rule 2, EG-2).
        }
        Some(v) => {
            report_constant(node, v, root && !v, out);
            // The parts that did not make it constant may hold constants of their own.
            if !matches!(node.kind, NodeKind::Not(_)) {
                for c in children(node) {
                    if constant(c) != Some(v) {
                        constants(c, false, out);
                    }
                }
            }
        }
        None => {
            for c in children(node) {
                // An always-true part of a lowered condition (same pointer, inside an `and`) is
                // the lowering being explicit (a shape test that admits every shape), not a
                // condition of the policy.
                let internal = matches!(node.kind, NodeKind::And(_))
                    && c.origin == node.origin
                    && constant(c) == Some(true);
                if !internal {
                    constants(c, false, out);
                }
            }
        }
    }
}

fn children(node: &Node) -> &[Node] {
    match &node.kind {
        NodeKind::And(c) | NodeKind::Or(c) => c,
        NodeKind::Not(c) => std::slice::from_ref(&**c),
        _ => &[],
    }
}

/// Reports the innermost nodes that make `node` the constant `v`.
fn report_constant(node: &Node, v: bool, whole: bool, out: &mut Vec<Warning>) {
    let sources: Vec<(&Node, bool)> = match &node.kind {
        NodeKind::And(c) | NodeKind::Or(c) => c
            .iter()
            .filter(|k| constant(k) == Some(v))
            .map(|k| (k, v))
            .collect(),
        NodeKind::Not(c) if constant(c) == Some(!v) => vec![(&**c, !v)],
        _ => Vec::new(),
    };
    if !sources.is_empty() {
        for (k, kv) in sources {
            report_constant(k, kv, whole, out);
        }
        return;
    }
    let what = match &node.kind {
        NodeKind::Test(t) => match &t.pred {
            Pred::Num { ranges, .. } if ranges.iter().all(Interval::is_empty) => {
                format!("the numeric range of {} is empty", t.key)
            }
            other => format!("{} {other}", t.key),
        },
        NodeKind::Or(_) => "its alternatives cover every case".to_owned(),
        _ => "this condition".to_owned(),
    };
    let w = if v {
        Warning::new(
            ALWAYS_HOLDS,
            &node.origin,
            format!("this condition always holds ({what}), so it filters nothing"),
            "remove it, or write the condition you meant",
        )
    } else {
        let tail = if whole {
            ", so the policy never matches"
        } else {
            ""
        };
        Warning::new(
            NEVER_HOLDS,
            &node.origin,
            format!("this condition can never hold ({what}){tail}"),
            "fix the bounds or values, or remove the condition",
        )
    };
    out.push(w);
}

// ---------------------------------------------------------------------------------------------
// Pairs: contradictions, duplicates, subsumed and redundant conditions.

/// A test or its negation.
#[derive(Debug, Clone, Copy)]
struct Lit<'a> {
    key: &'a Key,
    pred: &'a Pred,
    positive: bool,
}

impl Lit<'_> {
    fn flip(self) -> Self {
        Lit {
            positive: !self.positive,
            ..self
        }
    }
}

/// The literals of a conjunction (`None` when the node is not one).
fn conjunction(node: &Node) -> Option<Vec<Lit<'_>>> {
    match &node.kind {
        NodeKind::Test(t) => Some(vec![Lit {
            key: &t.key,
            pred: &t.pred,
            positive: true,
        }]),
        NodeKind::Not(c) => match &c.kind {
            NodeKind::Test(t) => Some(vec![Lit {
                key: &t.key,
                pred: &t.pred,
                positive: false,
            }]),
            _ => None,
        },
        NodeKind::And(c) => {
            let mut out = Vec::new();
            for k in c {
                out.extend(conjunction(k)?);
            }
            Some(out)
        }
        NodeKind::Or(c) if c.len() == 1 => c.first().and_then(conjunction),
        _ => None,
    }
}

/// Whether `a` holding implies `b` holding (same key).
fn lit_implies(a: Lit<'_>, b: Lit<'_>) -> bool {
    if a.key != b.key {
        return false;
    }
    match (a.positive, b.positive) {
        (true, true) => pred_implies(a.pred, b.pred),
        (false, false) => pred_implies(b.pred, a.pred),
        (true, false) => pred_excludes(a.pred, b.pred),
        (false, true) => match (a.pred, b.pred) {
            (Pred::Shape(sa), Pred::Shape(sb)) => subset(sa.complement(), *sb),
            _ => false,
        },
    }
}

fn subset(a: Shapes, b: Shapes) -> bool {
    a.0 & !b.0 == 0
}

/// The leaf types a leaf predicate can hold on (`None` for shape predicates).
fn leaf_types(pred: &Pred) -> Option<LeafTypes> {
    Some(match pred {
        Pred::Shape(_) => return None,
        Pred::HasType(t) => *t,
        Pred::Str { .. }
        | Pred::Wildcard(_)
        | Pred::Segment(_)
        | Pred::Cidr(_)
        | Pred::Address(_)
        | Pred::IgnoreCase(_) => LeafTypes::STR,
        Pred::Num {
            source: NumSource::Text,
            ..
        } => LeafTypes::STR,
        Pred::Num {
            source: NumSource::NumberLeaf | NumSource::Comparable,
            ..
        }
        | Pred::Dec(_)
        | Pred::NumText(_) => LeafTypes::NUM,
        Pred::Bool(_) => LeafTypes::BOOL,
        Pred::Except(_) => LeafTypes::ALL,
    })
}

/// Whether `a` holding makes `b` fail (same key).
fn pred_excludes(a: &Pred, b: &Pred) -> bool {
    match (a, b) {
        (Pred::Shape(sa), Pred::Shape(sb)) => sa.0 & sb.0 == 0,
        // A leaf needs the key present.
        (Pred::Shape(s), leafy) | (leafy, Pred::Shape(s)) if leaf_types(leafy).is_some() => {
            subset(*s, Shapes::ABSENT)
        }
        _ => false,
    }
}

/// Whether every leaf (or slot, for shapes) satisfying `a` satisfies `b`.
fn pred_implies(a: &Pred, b: &Pred) -> bool {
    if a == b {
        return true;
    }
    match (a, b) {
        (Pred::Shape(sa), Pred::Shape(sb)) => subset(*sa, *sb),
        (_, Pred::Shape(sb)) => subset(Shapes::PRESENT, *sb),
        (_, Pred::HasType(tb)) => leaf_types(a).is_some_and(|ta| ta.0 & !tb.0 == 0),
        (
            Pred::Str {
                op: oa,
                case: ca,
                values: va,
            },
            Pred::Str {
                op: ob,
                case: cb,
                values: vb,
            },
        ) if ca == cb => va
            .iter()
            .all(|x| vb.iter().any(|y| str_implies(*oa, x, *ob, y))),
        (
            Pred::Str {
                op: StrOp::Eq,
                case: crate::ir::Case::Sensitive,
                values,
            },
            Pred::Wildcard(w),
        ) => values.iter().all(|x| w.matches(x)),
        (
            Pred::Str {
                op: StrOp::Eq,
                case: crate::ir::Case::Sensitive,
                values,
            },
            Pred::Segment(p),
        ) => values.iter().all(|x| p.matches(x)),
        (
            Pred::Num {
                source: sa,
                ranges: ra,
            },
            Pred::Num {
                source: sb,
                ranges: rb,
            },
        ) if sa == sb => ra
            .iter()
            .all(|x| x.is_empty() || rb.iter().any(|y| interval_within(x, y))),
        (Pred::Dec(ra), Pred::Dec(rb)) => ra.iter().all(|x| rb.iter().any(|y| dec_within(x, y))),
        _ => false,
    }
}

/// Whether "leaf `op_a` x" implies "leaf `op_b` y".
fn str_implies(op_a: StrOp, x: &str, op_b: StrOp, y: &str) -> bool {
    use StrOp::*;
    match (op_a, op_b) {
        (Eq, Eq) => x == y,
        (Eq | Prefix, Prefix) => x.starts_with(y),
        (Eq | Suffix, Suffix) => x.ends_with(y),
        (_, Contains) => x.contains(y),
        _ => false,
    }
}

fn interval_within(x: &Interval, y: &Interval) -> bool {
    let lo_ok = y.lo < x.lo || (y.lo == x.lo && (y.lo_inclusive || !x.lo_inclusive));
    let hi_ok = y.hi > x.hi || (y.hi == x.hi && (y.hi_inclusive || !x.hi_inclusive));
    lo_ok && hi_ok
}

fn dec_within(x: &DecInterval, y: &DecInterval) -> bool {
    let lo_ok = match (&y.lo, &x.lo) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some((yl, yi)), Some((xl, xi))) => {
            cmp_dec(yl, xl) == Ordering::Less || (yl == xl && (*yi || !*xi))
        }
    };
    let hi_ok = match (&y.hi, &x.hi) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some((yh, yi)), Some((xh, xi))) => {
            cmp_dec(yh, xh) == Ordering::Greater || (yh == xh && (*yi || !*xi))
        }
    };
    lo_ok && hi_ok
}

fn cmp_dec(a: &Decimal, b: &Decimal) -> Ordering {
    a.partial_cmp(b).unwrap_or(Ordering::Equal)
}

fn conj_implies(a: &[Lit<'_>], b: &[Lit<'_>]) -> bool {
    b.iter().all(|lb| a.iter().any(|la| lit_implies(*la, *lb)))
}

fn contradicts(a: &[Lit<'_>], b: &[Lit<'_>]) -> bool {
    a.iter()
        .any(|la| b.iter().any(|lb| lit_implies(*la, lb.flip())))
}

fn shown(p: &str) -> &str {
    if p.is_empty() { "(policy)" } else { p }
}

fn pairs(node: &Node, out: &mut Vec<Warning>) {
    match &node.kind {
        NodeKind::And(c) => and_pairs(c, out),
        NodeKind::Or(c) => or_pairs(node, c, out),
        _ => {}
    }
    children(node).iter().for_each(|c| pairs(c, out));
}

fn and_pairs(units: &[Node], out: &mut Vec<Warning>) {
    let conj: Vec<Option<Vec<Lit<'_>>>> = units
        .iter()
        .map(|u| conjunction(u).filter(|c| !c.is_empty()))
        .collect();
    // Each condition gets at most one warning from this pass.
    let mut reported = vec![false; units.len()];
    for (i, j) in candidate_pairs(&conj) {
        let (Some(ui), Some(uj)) = (units.get(i), units.get(j)) else {
            continue;
        };
        let (Some(Some(ci)), Some(Some(cj))) = (conj.get(i), conj.get(j)) else {
            continue;
        };
        if ui.origin == uj.origin
            || reported.get(i).copied().unwrap_or(true)
            || reported.get(j).copied().unwrap_or(true)
        {
            continue;
        }
        if contradicts(ci, cj) {
            out.push(Warning::new(
                CONTRADICTION,
                &uj.origin,
                format!(
                    "this condition and {} can never hold together, so neither can the \
                         conditions around them",
                    shown(&ui.origin)
                ),
                "remove one of them, or move them into alternatives",
            ));
            mark(&mut reported, j);
            continue;
        }
        let (i_j, j_i) = (conj_implies(ci, cj), conj_implies(cj, ci));
        if i_j && j_i {
            out.push(Warning::new(
                DUPLICATE,
                &uj.origin,
                format!("this condition repeats {}", shown(&ui.origin)),
                "remove the repetition",
            ));
            mark(&mut reported, j);
        } else if i_j {
            out.push(Warning::new(
                REDUNDANT,
                &uj.origin,
                format!(
                    "this condition holds whenever {} holds, so it adds nothing",
                    shown(&ui.origin)
                ),
                "remove it",
            ));
            mark(&mut reported, j);
        } else if j_i {
            out.push(Warning::new(
                REDUNDANT,
                &ui.origin,
                format!(
                    "this condition holds whenever {} holds, so it adds nothing",
                    shown(&uj.origin)
                ),
                "remove it",
            ));
            mark(&mut reported, i);
        }
    }
}

/// Most parts compared pairwise without regard to keys, and most parts per key compared.
const PAIRWISE: usize = 64;

/// The pairs `(i, j)`, `i < j`, ordered by `j` then `i`, worth comparing: every pair of a small
/// node; for a large one (an expr policy may be wide) only conjunctions sharing a key, at most
/// [`PAIRWISE`] per key, so the pass stays near linear.
fn candidate_pairs(conj: &[Option<Vec<Lit<'_>>>]) -> Vec<(usize, usize)> {
    if conj.len() <= PAIRWISE {
        return (0..conj.len())
            .flat_map(|j| (0..j).map(move |i| (i, j)))
            .collect();
    }
    let mut buckets: std::collections::HashMap<&Key, Vec<usize>> = std::collections::HashMap::new();
    for (i, c) in conj.iter().enumerate() {
        for lit in c.iter().flatten() {
            let bucket = buckets.entry(lit.key).or_default();
            if bucket.len() < PAIRWISE && bucket.last() != Some(&i) {
                bucket.push(i);
            }
        }
    }
    let mut pairs = std::collections::BTreeSet::new();
    for bucket in buckets.values() {
        for (n, &j) in bucket.iter().enumerate() {
            for &i in bucket.iter().take(n) {
                pairs.insert((j, i));
            }
        }
    }
    pairs.into_iter().map(|(j, i)| (i, j)).collect()
}

fn mark(reported: &mut [bool], i: usize) {
    if let Some(r) = reported.get_mut(i) {
        *r = true;
    }
}

fn or_pairs(node: &Node, alternatives: &[Node], out: &mut Vec<Warning>) {
    let conj: Vec<Option<Vec<Lit<'_>>>> = alternatives
        .iter()
        .map(|a| conjunction(a).filter(|c| !c.is_empty()))
        .collect();
    let mut always = false;
    let mut reported = vec![false; alternatives.len()];
    for (i, j) in candidate_pairs(&conj) {
        let (Some(ai), Some(aj)) = (alternatives.get(i), alternatives.get(j)) else {
            continue;
        };
        if ai.origin == aj.origin
            || reported.get(i).copied().unwrap_or(true)
            || reported.get(j).copied().unwrap_or(true)
        {
            continue;
        }
        if ai.same(aj) {
            out.push(Warning::new(
                DUPLICATE,
                &aj.origin,
                format!("this alternative repeats {}", shown(&ai.origin)),
                "remove the repetition",
            ));
            mark(&mut reported, j);
            continue;
        }
        let (Some(Some(ci)), Some(Some(cj))) = (conj.get(i), conj.get(j)) else {
            continue;
        };
        if let ([li], [lj]) = (ci.as_slice(), cj.as_slice())
            && lit_implies(li.flip(), *lj)
        {
            always = true;
        }
        let (i_j, j_i) = (conj_implies(ci, cj), conj_implies(cj, ci));
        let subsumed = |small: &Node, big: &Node| {
            Warning::new(
                SUBSUMED,
                &small.origin,
                format!(
                    "every message this alternative accepts is accepted by {} too",
                    shown(&big.origin)
                ),
                "remove it, or narrow the other alternative",
            )
        };
        if i_j && j_i {
            out.push(Warning::new(
                DUPLICATE,
                &aj.origin,
                format!("this alternative is equivalent to {}", shown(&ai.origin)),
                "remove the repetition",
            ));
            mark(&mut reported, j);
        } else if i_j {
            out.push(subsumed(ai, aj));
            mark(&mut reported, i);
        } else if j_i {
            out.push(subsumed(aj, ai));
            mark(&mut reported, j);
        }
    }
    if always {
        out.push(Warning::new(
            ALWAYS_HOLDS,
            &node.origin,
            "these alternatives cover every case, so the condition always holds".to_owned(),
            "remove the condition, or the alternative that makes it total",
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// Dialect checks on the policy JSON.

/// Every object of the policy that names a member twice (its first such name): the reader kept
/// the last value, silently dropping the earlier ones.
fn duplicate_members(value: &Value, at: &str, out: &mut Vec<Warning>) {
    match value {
        Value::Object(members) => {
            if let Some(name) = members.first_duplicate() {
                let here = pointer::push(at, name);
                out.push(Warning::new(
                    DUPLICATE_MEMBER,
                    &here,
                    format!(
                        "the member {} is given more than once in one object; only its last \
                         value counts",
                        Value::from(crate::error::excerpt(name).to_string())
                    ),
                    "merge the values into one member, or remove the repetition",
                ));
            }
            for (name, member) in members {
                duplicate_members(member, &pointer::push(at, name), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                duplicate_members(item, &pointer::index(at, i), out);
            }
        }
        _ => {}
    }
}

/// Stream patterns written with another broker's wildcard habits: NATS's `>` (a literal
/// character here), and a `*` at either end of a dotted pattern, which the old matcher let cross
/// dots (seed 004). Pointers are those of the JSON form (`/groups/G/C/values/I`) for both forms.
fn stream_patterns(policy: &Value, out: &mut Vec<Warning>) {
    use crate::dialect::stream::{Cond, parse};
    let Ok(filter) = parse(policy) else {
        return;
    };
    for (g, group) in filter.groups.iter().enumerate() {
        for (c, clause) in group.iter().enumerate() {
            let patterns = match &clause.cond {
                Cond::Eq(p) | Cond::Ne(p) => std::slice::from_ref(p),
                Cond::In(ps) => ps.as_slice(),
                Cond::Exists | Cond::Missing | Cond::Cmp(..) => &[],
            };
            for (i, p) in patterns.iter().enumerate() {
                let at = format!("/groups/{g}/{c}/values/{i}");
                stream_pattern(p.source(), &at, out);
            }
        }
    }
}

/// The checks of [`stream_patterns`] on one pattern.
fn stream_pattern(source: &str, at: &str, out: &mut Vec<Warning>) {
    let quoted = |s: &str| Value::from(crate::error::excerpt(s).to_string()).to_string();
    let segments: Vec<&str> = source.split('.').collect();
    let spans = segments.contains(&"**");
    if let Some(gt) = segments.iter().position(|s| *s == ">") {
        let fix = if gt + 1 == segments.len() && !spans {
            let head = segments.get(..gt).unwrap_or_default().join(".");
            let (one_or_more, any) = if head.is_empty() {
                ("*.**".to_owned(), "**".to_owned())
            } else {
                (format!("{head}.*.**"), format!("{head}.**"))
            };
            format!(
                "write {} for one or more further segments (NATS's meaning), or {} for zero or more",
                quoted(&one_or_more),
                quoted(&any)
            )
        } else {
            "use `**` (a whole segment, once per pattern) to span segments".to_owned()
        };
        out.push(Warning::new(
            NATS_WILDCARD,
            at,
            format!(
                "{} uses `>`, NATS's multi-level wildcard; in stream patterns `>` is an ordinary \
                 character, so this matches only values with a literal `>` segment",
                quoted(source)
            ),
            fix,
        ));
        return;
    }
    if segments.len() < 2 || spans {
        return;
    }
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        return;
    };
    let (star_end, fix) = if last.ends_with('*') {
        (*last, format!("{source}.**"))
    } else if first.starts_with('*') {
        (*first, format!("**.{source}"))
    } else {
        return;
    };
    let within = if star_end == "*" {
        "matches exactly one segment"
    } else {
        "matches within its segment only"
    };
    out.push(Warning::new(
        STAR_WITHIN_SEGMENT,
        at,
        format!(
            "the `*` of {} {within}: it no longer crosses dots as the old matcher's did, so \
             deeper values (more segments) do not match",
            quoted(source)
        ),
        format!(
            "write {} to also match any number of further segments; keep the pattern if one \
             segment is meant",
            quoted(&fix)
        ),
    ));
}

fn operator<'a>(item: &'a Value, name: &str) -> Option<&'a str> {
    item.as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get(name))
        .and_then(Value::as_str)
}

/// Seed 000: a `prefix` and a `suffix` in one array mean OR.
fn prefix_suffix(dialect: Dialect, items: &[Value], at: &str, out: &mut Vec<Warning>) {
    let prefix = items.iter().find_map(|i| operator(i, "prefix"));
    let suffix = items.iter().find_map(|i| operator(i, "suffix"));
    let (Some(p), Some(s)) = (prefix, suffix) else {
        return;
    };
    let fix = if dialect == Dialect::Sns {
        let escape = |t: &str| t.replace('\\', "\\\\").replace('*', "\\*");
        format!(
            "to require both, use one {{\"wildcard\": {}}}",
            Value::String(format!("{}*{}", escape(p), escape(s)))
        )
    } else {
        "to require both, publish a separate routing attribute with the combined classification"
            .to_owned()
    };
    out.push(Warning::new(
        PREFIX_SUFFIX_OR,
        at,
        format!(
            "prefix {} and suffix {} in one array are alternatives (OR): a value matching either \
             passes",
            Value::String(p.to_owned()),
            Value::String(s.to_owned())
        ),
        fix,
    ));
}

/// Walks an sns policy object: alternatives arrays, nested objects and `$or` branches.
fn sns_object(members: &Map, at: &str, attributes: bool, out: &mut Vec<Warning>) {
    for (name, value) in members {
        let here = pointer::push(at, name);
        match value {
            Value::Array(items) if name == "$or" => {
                for (i, item) in items.iter().enumerate() {
                    if let Value::Object(branch) = item {
                        sns_object(branch, &pointer::index(&here, i), attributes, out);
                    }
                }
            }
            Value::Array(items) => {
                prefix_suffix(Dialect::Sns, items, &here, out);
                if attributes {
                    for (i, item) in items.iter().enumerate() {
                        let exists_false = item
                            .as_object()
                            .filter(|o| o.len() == 1)
                            .and_then(|o| o.get("exists"))
                            == Some(&Value::Bool(false));
                        if exists_false {
                            out.push(Warning::new(
                                EXISTS_FALSE_NO_ATTRIBUTES,
                                &pointer::index(&here, i),
                                format!(
                                    "`exists: false` does not match a message that carries no \
                                     attributes at all, although {} is absent there",
                                    Value::String(name.clone())
                                ),
                                "make sure every message carries at least one attribute",
                            ));
                        }
                    }
                }
            }
            Value::Object(nested) => sns_object(nested, &here, attributes, out),
            _ => {}
        }
    }
}

/// Event Grid: negative string operators on keys that may be absent (EG-22), keys naming nothing
/// (EG-19).
fn eventgrid_checks(policy: &Value, schema: Schema, out: &mut Vec<Warning>) {
    let Some(filters) = policy.get("advancedFilters").and_then(Value::as_array) else {
        return;
    };
    for (i, entry) in filters.iter().enumerate() {
        let at = pointer::index("/advancedFilters", i);
        let (Some(op), Some(key)) = (
            entry.get("operatorType").and_then(Value::as_str),
            entry.get("key").and_then(Value::as_str),
        ) else {
            continue;
        };
        let Some(resolved) = eventgrid::resolve_key(schema, key) else {
            let members = match schema {
                Schema::EventGrid => "id, topic, subject, eventType, dataVersion".to_owned(),
                Schema::CloudEvents if key.eq_ignore_ascii_case("eventtype") => {
                    "`type`, the CloudEvents event type".to_owned()
                }
                Schema::CloudEvents => "a CloudEvents attribute".to_owned(),
            };
            let holds = eventgrid::Operator::from_name(op).is_some_and(|o| o.on_missing());
            out.push(Warning::new(
                UNKNOWN_KEY,
                &at,
                format!(
                    "the key {} names nothing in this schema, so it is always undefined and this \
                     entry {}",
                    Value::String(key.to_owned()),
                    if holds { "always holds" } else { "never holds" }
                ),
                format!("write `data.{key}` for a field of the event's data, or use {members}"),
            ));
            continue;
        };
        if !matches!(
            op,
            "StringNotContains" | "StringNotBeginsWith" | "StringNotEndsWith"
        ) {
            continue;
        }
        let may_be_absent = match (&resolved, schema) {
            (Key::EventData(_), _) => true,
            (Key::EventMember(_), Schema::EventGrid) => false,
            (Key::EventMember(m), Schema::CloudEvents) => {
                !matches!(m.as_ref(), "id" | "source" | "type" | "specversion")
            }
            _ => true,
        };
        if may_be_absent {
            out.push(Warning::new(
                NEGATIVE_ON_MISSING_KEY,
                &at,
                format!(
                    "{op} is false when {} is missing or null, so events without it are \
                     dropped; NumberNotIn and StringNotIn pass them",
                    Value::String(key.to_owned())
                ),
                "make publishers always set the key, or accept that events without it are dropped",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_order_numbers_numerically() {
        assert_eq!(pointer_order("/a/2", "/a/10"), Ordering::Less);
        assert_eq!(pointer_order("", "/a"), Ordering::Less);
        assert_eq!(pointer_order("/b", "/a/1"), Ordering::Greater);
    }

    #[test]
    fn string_implications() {
        assert!(str_implies(
            StrOp::Eq,
            "order.paid",
            StrOp::Prefix,
            "order."
        ));
        assert!(str_implies(StrOp::Prefix, "order.", StrOp::Prefix, "ord"));
        assert!(!str_implies(StrOp::Prefix, "ord", StrOp::Prefix, "order."));
        assert!(str_implies(
            StrOp::Suffix,
            ".failed",
            StrOp::Contains,
            "fail"
        ));
        assert!(!str_implies(StrOp::Contains, "fail", StrOp::Suffix, "fail"));
    }

    #[test]
    fn interval_containment() {
        let all = Interval::ALL;
        let ge5 = Interval {
            lo: 5.0,
            lo_inclusive: true,
            ..all
        };
        let gt5 = Interval {
            lo: 5.0,
            lo_inclusive: false,
            ..all
        };
        assert!(interval_within(&gt5, &ge5));
        assert!(!interval_within(&ge5, &gt5));
        assert!(interval_within(&Interval::point(7.0), &gt5));
    }
}

//! Lowering a normalized pattern to IR (`docs/dialects/eventbridge-patterns.md` EB-8..EB-30).
//!
//! - **Keys.** A path's values are read by [`Key::FieldPath`], which reads a body as the SNS body
//!   key does (arrays transparent, dotted names reached in nested and flat forms, objects and
//!   empty arrays no value) and besides counts every occurrence of a repeated member name and
//!   gives scalars of nested arrays their element's position (EB-2, EB-3). Binding runs the program once per *row* (one element chosen for every
//!   array of objects two keys read below), so "some value in the row" for each path of a branch
//!   is EB-8's walk for the paths that take a value: the values chosen must agree on every array
//!   (EB-9).
//! - **`{"exists": false}`** (EB-8 b, EB-10) is judged against the positions fixed by the paths
//!   of the branch that sort before it (UTF-16 order) and took a value. Those are the arrays on
//!   the common prefix of the two paths above the earlier one's leaf
//!   ([`fixed_levels`]): within that many leading segments the
//!   absence is judged element by element, below them over every element. That is
//!   [`Key::FieldPath`] with those levels, tested `absent`. Which earlier paths took a value
//!   depends on the row: a path without `exists: false` always does (else the branch fails), one
//!   with it does when some value in the row satisfies it (taking a value never hurts a later
//!   absence, which it only narrows). So with `L0` the levels the former fix, `p`'s absence is
//!   `absent(p, L0) ∨ ⋁ (sat(j) ∧ absent(p, max(L0, levels(j))))` over the latter `j`.
//! - **Values** (EB-12..EB-30): exact strings and prefix/suffix as SNS; an IP-shaped string as
//!   an address ([`Pred::Address`]); bare numbers numerically when comparable, else by text
//!   ([`NumSource::Comparable`], [`Pred::NumText`]); `numeric` over comparable numbers; the
//!   equals-ignore-case family with full case mappings ([`Pred::IgnoreCase`]); `anything-but`
//!   as "some value is not excluded" ([`Pred::Except`], EB-25).

use super::branches::{Seq, fixed_levels, has_absence, has_positive, segments, sorts_before};
use super::parse::{Exclusion, Leaf, Matcher};
use crate::ir::{Case, Node, NumSource, Pred, StrOp};
use filtervm_vm::case_pattern::{CaseMode, CasePattern};
use filtervm_vm::key::Key;
use filtervm_vm::program::Interval;
use filtervm_vm::value::{LeafTypes, Shapes};
use filtervm_vm::wildcard::Wildcard;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Lowers a normalized pattern. Like an SNS body-scope policy it first requires the document
/// to be a JSON object ([`Key::BodyIsObject`]): an event that is not one (EB-3), or one the
/// binder gave up on (every key absent), then matches nothing even through `exists: false`.
pub fn lower_pattern(seq: &Seq) -> Node {
    Node::and(
        vec![
            Node::test(Key::BodyIsObject, Pred::Shape(Shapes::PRESENT), ""),
            lower_seq(seq, &[], ""),
        ],
        "",
    )
}

/// A sequence: its leaves and its `$or`s, ANDed. `outer` holds the leaves of the enclosing
/// sequences (always in the same branch).
fn lower_seq(seq: &Seq, outer: &[&Leaf], at: &str) -> Node {
    let mut mates: Vec<&Leaf> = outer.to_vec();
    mates.extend(seq.leaves.iter());
    let mut children: Vec<Node> = seq
        .leaves
        .iter()
        .map(|leaf| lower_leaf(leaf, &mates))
        .collect();
    for or in &seq.ors {
        children.push(Node::or(
            or.alternatives
                .iter()
                .map(|(alt, alt_at)| lower_seq(alt, &mates, alt_at))
                .collect(),
            or.pointer.as_str(),
        ));
    }
    match children.len() {
        1 => children.pop().unwrap_or_else(|| Node::constant(true, at)),
        _ => Node::and(children, at),
    }
}

/// The key of `path`'s values (EB-2, EB-3), judged element by element wherever it shares an
/// array with another key.
fn key(path: &str) -> Key {
    Key::FieldPath(path.into(), u32::MAX)
}

/// The positive alternatives of a leaf, ORed (EB-8 a): `false` when it has none.
fn satisfied(leaf: &Leaf) -> Node {
    let k = key(&leaf.path);
    let alternatives: Vec<Node> = leaf
        .alternatives
        .iter()
        .filter(|(m, _)| !matches!(m, Matcher::Exists(false)))
        .map(|(m, at)| matcher(&k, m, at))
        .collect();
    match alternatives.len() {
        0 => Node::constant(false, leaf.pointer.as_str()),
        _ => Node::or(alternatives, leaf.pointer.as_str()),
    }
}

/// A leaf of a branch whose leaves are `mates` (EB-8).
fn lower_leaf(leaf: &Leaf, mates: &[&Leaf]) -> Node {
    let sat = satisfied(leaf);
    if !has_absence(leaf) {
        return sat;
    }
    let p = leaf.path.as_str();
    // The earlier paths that can fix arrays above `p`: always (no `exists: false`, so they take
    // a value in every branch that matches), or when satisfied.
    let mut always = 0usize;
    let mut when: BTreeMap<usize, Vec<&Leaf>> = BTreeMap::new();
    for j in mates.iter().copied() {
        if j.path == leaf.path || !has_positive(j) || !sorts_before(&j.path, p) {
            continue;
        }
        let levels = fixed_levels(p, &j.path);
        if levels == 0 {
            continue;
        }
        if has_absence(j) {
            when.entry(levels).or_default().push(j);
        } else {
            always = always.max(levels);
        }
    }
    let at = leaf
        .alternatives
        .iter()
        .find(|(m, _)| matches!(m, Matcher::Exists(false)))
        .map_or(leaf.pointer.as_str(), |(_, at)| at.as_str());
    let mut absent = vec![absence(p, always, at)];
    for (levels, fixers) in when.into_iter().filter(|(l, _)| *l > always) {
        absent.push(Node::and(
            vec![
                Node::or(fixers.iter().map(|j| satisfied(j)).collect(), at),
                absence(p, levels, at),
            ],
            at,
        ));
    }
    let absent = match absent.len() {
        1 => absent.pop().unwrap_or_else(|| Node::constant(false, at)),
        _ => Node::or(absent, at),
    };
    if !has_positive(leaf) {
        return absent;
    }
    Node::or(vec![sat, absent], leaf.pointer.as_str())
}

/// `p` has no value agreeing with the arrays fixed within its first `levels` segments (EB-10).
/// Values only fix arrays above their leaf position, so the array at `p`'s own leaf position is
/// never fixed for it: `levels` stays below `p`'s segment count, and the key never reads the
/// elements of that array apart (as the values' key does, EB-3).
fn absence(p: &str, levels: usize, at: &str) -> Node {
    let levels = levels.min(segments(p) - 1);
    let key = Key::FieldPath(p.into(), u32::try_from(levels).unwrap_or(u32::MAX - 1));
    Node::test(key, Pred::Shape(Shapes::ABSENT), at)
}

fn str_test(key: &Key, op: StrOp, values: &[String], at: &str) -> Node {
    let mut values: Vec<Arc<str>> = values.iter().map(|v| v.as_str().into()).collect();
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

/// A wildcard (EB-22) as a predicate: a pattern without `*` is string equality.
fn wildcard_pred(w: &Wildcard) -> Pred {
    match w.literal() {
        Some(lit) => Pred::Str {
            op: StrOp::Eq,
            case: Case::Sensitive,
            values: vec![lit.into()],
        },
        None => Pred::Wildcard(w.clone()),
    }
}

/// Comparable numbers equal to one of `values` (EB-16, EB-23).
fn numbers(values: &[f64]) -> Pred {
    Pred::Num {
        source: NumSource::Comparable,
        ranges: values.iter().map(|&x| Interval::point(x)).collect(),
    }
}

/// The predicate of `excluded` strings or numbers, one per kind (EB-23, EB-24).
fn excluded(exclusion: &Exclusion) -> Vec<Pred> {
    let strings = |op: StrOp, v: &[String]| {
        let mut values: Vec<Arc<str>> = v.iter().map(|s| s.as_str().into()).collect();
        values.sort();
        values.dedup();
        vec![Pred::Str {
            op,
            case: Case::Sensitive,
            values,
        }]
    };
    match exclusion {
        Exclusion::Strings(v) => strings(StrOp::Eq, v),
        Exclusion::Numbers(v) => vec![numbers(v)],
        Exclusion::Prefixes(v) => strings(StrOp::Prefix, v),
        Exclusion::Suffixes(v) => strings(StrOp::Suffix, v),
        Exclusion::EqualsIgnoreCase(v) => v
            .iter()
            .map(|s| Pred::IgnoreCase(CasePattern::new(s, CaseMode::Equals)))
            .collect(),
        Exclusion::Wildcards(v) => v.iter().map(wildcard_pred).collect(),
    }
}

/// One positive alternative on `key`.
fn matcher(key: &Key, m: &Matcher, at: &str) -> Node {
    let test = |pred: Pred| Node::test(key.clone(), pred, at);
    match m {
        Matcher::Exact(s) | Matcher::Exactly(s) => {
            str_test(key, StrOp::Eq, std::slice::from_ref(s), at)
        }
        Matcher::Address(block) | Matcher::Cidr(block) => test(Pred::Address(block.clone())),
        Matcher::Number { value: Some(x), .. } => test(numbers(&[*x])),
        Matcher::Number { text, value: None } => test(Pred::NumText(vec![text.as_str().into()])),
        Matcher::Bool(b) => test(Pred::Bool(*b)),
        Matcher::Null => test(Pred::HasType(LeafTypes::NULL)),
        Matcher::Prefix(s) => str_test(key, StrOp::Prefix, std::slice::from_ref(s), at),
        Matcher::Suffix(s) => str_test(key, StrOp::Suffix, std::slice::from_ref(s), at),
        Matcher::PrefixIgnoreCase(s) => {
            test(Pred::IgnoreCase(CasePattern::new(s, CaseMode::Prefix)))
        }
        Matcher::SuffixIgnoreCase(s) => {
            test(Pred::IgnoreCase(CasePattern::new(s, CaseMode::Suffix)))
        }
        Matcher::EqualsIgnoreCase(s) => {
            test(Pred::IgnoreCase(CasePattern::new(s, CaseMode::Equals)))
        }
        Matcher::Wildcard(w) => test(wildcard_pred(w)),
        Matcher::Numeric { lo, hi } => test(Pred::Num {
            source: NumSource::Comparable,
            ranges: vec![crate::dialect::sns::lower::interval(*lo, *hi)],
        }),
        Matcher::Exists(true) => test(Pred::Shape(Shapes::PRESENT)),
        // Lowered by `lower_leaf`; never a positive alternative.
        Matcher::Exists(false) => Node::constant(false, at),
        Matcher::AnythingBut(exclusion) => test(Pred::Except(excluded(exclusion))),
    }
}

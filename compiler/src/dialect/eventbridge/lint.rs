//! EventBridge pitfalls for [`crate::lint`] (`docs/dialects/eventbridge-patterns.md`): patterns
//! that compile but do not mean what they seem to.
//!
//! - a member that every branch replaces (EB-7): it never counts;
//! - alternatives that admit every value (an `anything-but` whose exclusions the other
//!   alternatives, or another `anything-but`, let back in): the field matches whenever it has a
//!   value, as `{"exists": true}`;
//! - an `{"exists": false}` that sorts before a field it shares an array with (EB-10): it is
//!   judged over every element, not the one that field matched.

use super::branches::{Seq, fixed_levels, has_positive, normalize, sorts_before};
use super::parse::{Exclusion, Item, Leaf, Matcher, Parser};
use filtervm_vm::json::Value;
use std::collections::HashSet;

/// One finding: a lint code, the pointer, the message and the fix.
pub type Finding = (&'static str, String, String, String);

/// A member no branch keeps (EB-7).
pub const REPLACED_MEMBER: &str = "REPLACED_MEMBER";
/// An `exists: false` judged before a field it shares an array with (EB-10).
pub const EXISTS_FALSE_ORDER: &str = "EXISTS_FALSE_ORDER";
/// Alternatives that admit every value (the generic code).
pub const ALWAYS_HOLDS: &str = "ALWAYS_HOLDS";

/// The findings for a (valid) pattern; none for one that does not parse.
pub fn check(policy: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let Ok(pattern) = Parser::default().pattern(policy) else {
        return out;
    };
    let Ok(seq) = normalize(&pattern.items) else {
        return out;
    };
    replaced(&pattern.items, &seq, &mut out);
    let mut leaves = Vec::new();
    all_leaves(&pattern.items, &mut leaves);
    for leaf in &leaves {
        admits_everything(leaf, &mut out);
    }
    order(&seq, &[], &mut out);
    out
}

fn all_leaves<'a>(items: &'a [Item], out: &mut Vec<&'a Leaf>) {
    for item in items {
        match item {
            Item::Leaf(l) => out.push(l),
            Item::Or(or) => {
                for (alternative, _) in &or.alternatives {
                    all_leaves(alternative, out);
                }
            }
        }
    }
}

fn kept_orders(seq: &Seq, out: &mut HashSet<usize>) {
    out.extend(seq.leaves.iter().map(|l| l.order));
    for or in &seq.ors {
        for (alternative, _) in &or.alternatives {
            kept_orders(alternative, out);
        }
    }
}

/// EB-7: leaves that no branch keeps.
fn replaced(items: &[Item], seq: &Seq, out: &mut Vec<Finding>) {
    let mut kept = HashSet::new();
    kept_orders(seq, &mut kept);
    let mut leaves = Vec::new();
    all_leaves(items, &mut leaves);
    for leaf in leaves {
        if kept.contains(&leaf.order) {
            continue;
        }
        out.push((
            REPLACED_MEMBER,
            leaf.pointer.clone(),
            format!(
                "`{}` is named again later in every branch that holds this member, and the later \
                 one replaces it (EB-7): this member never counts",
                leaf.path
            ),
            "remove it, or merge its alternatives into the later member".to_owned(),
        ));
    }
}

/// Strings some `anything-but` of the leaf excludes, as far as they can be listed.
fn excluded_strings(exclusion: &Exclusion) -> Option<&[String]> {
    match exclusion {
        Exclusion::Strings(v) => Some(v),
        _ => None,
    }
}

/// Whether some positive alternative of `leaf` (other than `skip`) accepts the string `s`.
fn accepted_string(leaf: &Leaf, skip: usize, s: &str) -> bool {
    leaf.alternatives.iter().enumerate().any(|(i, (m, _))| {
        i != skip
            && match m {
                Matcher::Exact(x) | Matcher::Exactly(x) => x == s,
                Matcher::Address(b) => b.contains_text(s),
                Matcher::Prefix(p) => s.starts_with(p.as_str()),
                Matcher::Suffix(p) => s.ends_with(p.as_str()),
                Matcher::Wildcard(w) => w.matches(s),
                Matcher::Exists(true) => true,
                Matcher::AnythingBut(e) => !excludes_string(e, s),
                _ => false,
            }
    })
}

/// Whether some positive alternative of `leaf` (other than `skip`) accepts the comparable
/// number `x`.
fn accepted_number(leaf: &Leaf, skip: usize, x: f64) -> bool {
    leaf.alternatives.iter().enumerate().any(|(i, (m, _))| {
        i != skip
            && match m {
                Matcher::Number { value: Some(v), .. } => *v == x,
                Matcher::Numeric { lo, hi } => {
                    lo.is_none_or(|b| {
                        if b.inclusive {
                            x >= b.value
                        } else {
                            x > b.value
                        }
                    }) && hi.is_none_or(|b| {
                        if b.inclusive {
                            x <= b.value
                        } else {
                            x < b.value
                        }
                    })
                }
                Matcher::Exists(true) => true,
                Matcher::AnythingBut(e) => !excludes_number(e, x),
                _ => false,
            }
    })
}

fn excludes_string(e: &Exclusion, s: &str) -> bool {
    match e {
        Exclusion::Strings(v) => v.iter().any(|x| x == s),
        Exclusion::Numbers(_) => false,
        Exclusion::Prefixes(v) => v.iter().any(|p| s.starts_with(p.as_str())),
        Exclusion::Suffixes(v) => v.iter().any(|p| s.ends_with(p.as_str())),
        Exclusion::EqualsIgnoreCase(v) => v.iter().any(|p| {
            filtervm_vm::case_pattern::CasePattern::new(
                p,
                filtervm_vm::case_pattern::CaseMode::Equals,
            )
            .matches(s)
        }),
        Exclusion::Wildcards(v) => v.iter().any(|w| w.matches(s)),
    }
}

fn excludes_number(e: &Exclusion, x: f64) -> bool {
    matches!(e, Exclusion::Numbers(v) if v.contains(&x))
}

/// Whether some value is excluded by both `a` and `b` (conservatively `true` when unsure).
fn overlap(a: &Exclusion, b: &Exclusion) -> bool {
    use Exclusion as E;
    match (a, b) {
        (E::Numbers(x), E::Numbers(y)) => x.iter().any(|v| y.contains(v)),
        (E::Numbers(_), _) | (_, E::Numbers(_)) => false,
        (E::Strings(x), other) | (other, E::Strings(x)) => {
            x.iter().any(|s| excludes_string(other, s))
        }
        (E::Prefixes(x), E::Prefixes(y)) => x.iter().any(|p| {
            y.iter()
                .any(|q| p.starts_with(q.as_str()) || q.starts_with(p.as_str()))
        }),
        (E::Suffixes(x), E::Suffixes(y)) => x.iter().any(|p| {
            y.iter()
                .any(|q| p.ends_with(q.as_str()) || q.ends_with(p.as_str()))
        }),
        _ => true,
    }
}

/// Alternatives that admit every value: an `anything-but` whose every exclusion another
/// alternative accepts, or two `anything-but`s that exclude nothing in common.
fn admits_everything(leaf: &Leaf, out: &mut Vec<Finding>) {
    let excluding: Vec<(usize, &Exclusion)> = leaf
        .alternatives
        .iter()
        .enumerate()
        .filter_map(|(i, (m, _))| match m {
            Matcher::AnythingBut(e) => Some((i, e)),
            _ => None,
        })
        .collect();
    let covered = excluding.iter().any(|&(i, e)| {
        let strings =
            excluded_strings(e).is_some_and(|v| v.iter().all(|s| accepted_string(leaf, i, s)));
        let numbers =
            matches!(e, Exclusion::Numbers(v) if v.iter().all(|&x| accepted_number(leaf, i, x)));
        strings || numbers
    }) || excluding
        .iter()
        .enumerate()
        .any(|(k, &(_, a))| excluding.iter().skip(k + 1).any(|&(_, b)| !overlap(a, b)));
    if !covered {
        return;
    }
    let absent = leaf
        .alternatives
        .iter()
        .any(|(m, _)| matches!(m, Matcher::Exists(false)));
    let (message, fix) = if absent {
        (
            format!(
                "the alternatives of `{}` admit every value, and `{{\"exists\": false}}` its \
                 absence: this member always holds",
                leaf.path
            ),
            "remove the member, or narrow an anything-but".to_owned(),
        )
    } else {
        (
            format!(
                "the alternatives of `{}` admit every value (an anything-but lets back what the \
                 others exclude): the member holds whenever the field has a value, as \
                 {{\"exists\": true}}",
                leaf.path
            ),
            "write {\"exists\": true}, or narrow an anything-but".to_owned(),
        )
    };
    out.push((ALWAYS_HOLDS, leaf.pointer.clone(), message, fix));
}

/// EB-10: an absence that sorts before a field of its branch that shares an array with it.
fn order(seq: &Seq, outer: &[&Leaf], out: &mut Vec<Finding>) {
    let mut mates: Vec<&Leaf> = outer.to_vec();
    mates.extend(seq.leaves.iter());
    for p in &seq.leaves {
        let Some((_, at)) = p
            .alternatives
            .iter()
            .find(|(m, _)| matches!(m, Matcher::Exists(false)))
        else {
            continue;
        };
        let later = mates.iter().find(|j| {
            j.path != p.path
                && has_positive(j)
                && sorts_before(&p.path, &j.path)
                && fixed_levels(&p.path, &j.path) > 0
        });
        if let Some(j) = later {
            out.push((
                EXISTS_FALSE_ORDER,
                at.clone(),
                format!(
                    "`{}` sorts before `{}`, so its `exists: false` is judged before that field \
                     fixes an array element (EB-10): under an array of objects it needs `{}` \
                     absent from every element, not only from the element `{}` matched",
                    p.path, j.path, p.path, j.path
                ),
                "expect the field absent from the whole array; per-element absence needs the \
                 absent field to sort after the one that picks the element"
                    .to_owned(),
            ));
        }
    }
    for or in &seq.ors {
        for (alternative, _) in &or.alternatives {
            order(alternative, &mates, out);
        }
    }
}

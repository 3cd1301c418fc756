//! `$or` without expanding it (`docs/dialects/eventbridge-patterns.md` EB-5..EB-8, EB-10).
//!
//! EB-5 defines a pattern's meaning by expanding it into *branches*: reading members in document
//! order, a leaf is written into every current branch, and a `$or` replaces the branches by one
//! copy per alternative. Sequential `$or`s multiply, so the expansion is exponential in the
//! pattern's size. It is not materialised here: a pattern stays a tree of *sequences* ([`Seq`]:
//! leaves ANDed, `$or`s each ORing its alternatives' sequences), which is the expansion factored,
//! as long as no `$or` *interacts* with a sibling. Two sibling members interact when
//!
//! - they name a common path: which one a branch keeps depends on the alternative chosen (EB-7,
//!   the later occurrence replaces the earlier one); or
//! - one holds an `{"exists": false}` on a path `p` and the other is a `$or` holding a path `j`
//!   that sorts before `p` and can fix an array above `p` (EB-10): whether `j` is in the branch
//!   decides what `p`'s absence is judged against.
//!
//! A `$or` that interacts with siblings is distributed over them: the siblings connected to it
//! (through any chain of interactions) are moved into each of its alternatives, in document
//! order, and each alternative is normalized again. After this every `$or` is independent of its
//! siblings, so `AND(siblings, OR(alternatives))` is exactly the OR of the expanded branches,
//! every path occurs at most once along any chain of nested sequences (within one sequence the
//! later leaf replaces the earlier, EB-7), and a leaf's branch-mates that sort before it are the
//! leaves of its own sequence and of the sequences enclosing it.
//!
//! Distribution copies the moved siblings once per alternative. Patterns whose alternatives
//! replace or fix each other's fields along a chain of `$or`s therefore still grow exponentially,
//! and they must: deciding whether such a pattern matches an event is NP-hard (a 3-SAT clause
//! `x1 ∨ ¬x2 ∨ x3` is a field `c: ["never"]` that one alternative of `$or` number 1, 2 or 3
//! replaces by `c: [{"exists": false}]`), so no compiled form polynomial in the pattern's size
//! can decide them in time linear in that form. The copies are counted and compiling stops at
//! [`MAX_EXPANDED_LEAVES`] with [`ErrorCode::EventBridgeLimitExceeded`]; patterns without such
//! chains (alternatives over distinct fields, however many `$or`s) stay linear.

use super::parse::{Item, Leaf, Matcher, Or};
use crate::error::{ErrorCode, PolicyError};
use std::collections::HashMap;

/// Most leaves (counted with their copies) distributing `$or`s may produce.
pub const MAX_EXPANDED_LEAVES: usize = 1 << 16;

/// A normalized sequence: its leaves (one per path, the last occurrence in document order) and
/// its `$or`s, none of which interacts with another member.
#[derive(Debug, Clone, PartialEq)]
pub struct Seq {
    /// The leaves, in document order.
    pub leaves: Vec<Leaf>,
    /// The `$or`s.
    pub ors: Vec<SeqOr>,
}

/// A normalized `$or`: its alternatives, each a [`Seq`].
#[derive(Debug, Clone, PartialEq)]
pub struct SeqOr {
    /// JSON Pointer of the `$or` member.
    pub pointer: String,
    /// The alternatives and their pointers.
    pub alternatives: Vec<(Seq, String)>,
}

/// Whether `leaf` has an `{"exists": false}` alternative.
pub fn has_absence(leaf: &Leaf) -> bool {
    leaf.alternatives
        .iter()
        .any(|(m, _)| matches!(m, Matcher::Exists(false)))
}

/// Whether `leaf` has an alternative other than `{"exists": false}`: it can take a value and fix
/// positions (EB-8 a).
pub fn has_positive(leaf: &Leaf) -> bool {
    leaf.alternatives
        .iter()
        .any(|(m, _)| !matches!(m, Matcher::Exists(false)))
}

/// The number of path segments.
pub fn segments(path: &str) -> usize {
    path.bytes().filter(|&b| b == b'.').count() + 1
}

/// The number of leading segments `a` and `b` share.
pub fn common_segments(a: &str, b: &str) -> usize {
    a.split('.')
        .zip(b.split('.'))
        .take_while(|(x, y)| x == y)
        .count()
}

/// The array levels along `p` a value of `j` can fix (EB-3, EB-10): the arrays on their common
/// prefix that lie above `j`'s leaf position (a value sitting directly in an array gets no
/// position for it).
pub fn fixed_levels(p: &str, j: &str) -> usize {
    common_segments(p, j).min(segments(j) - 1)
}

/// `a` sorts before `b` comparing UTF-16 code units (Java `String` order, EB-8).
pub fn sorts_before(a: &str, b: &str) -> bool {
    a.encode_utf16().lt(b.encode_utf16())
}

/// A member during normalization, with what decides its interactions.
#[derive(Debug, Clone)]
enum Member {
    Leaf(Leaf),
    Or {
        pointer: String,
        alternatives: Vec<(Vec<Member>, String)>,
        /// Every path below it.
        paths: Vec<String>,
        /// Its paths that have an `{"exists": false}`.
        absent: Vec<String>,
        /// The first leaf order below it (its place in document order).
        order: usize,
    },
}

impl Member {
    fn order(&self) -> usize {
        match self {
            Member::Leaf(l) => l.order,
            Member::Or { order, .. } => *order,
        }
    }

    fn paths(&self) -> Vec<&str> {
        match self {
            Member::Leaf(l) => vec![l.path.as_str()],
            Member::Or { paths, .. } => paths.iter().map(String::as_str).collect(),
        }
    }

    fn absent(&self) -> Vec<&str> {
        match self {
            Member::Leaf(l) if has_absence(l) => vec![l.path.as_str()],
            Member::Leaf(_) => Vec::new(),
            Member::Or { absent, .. } => absent.iter().map(String::as_str).collect(),
        }
    }

    fn is_or(&self) -> bool {
        matches!(self, Member::Or { .. })
    }

    fn leaf_count(&self) -> usize {
        match self {
            Member::Leaf(_) => 1,
            Member::Or { alternatives, .. } => alternatives
                .iter()
                .flat_map(|(members, _)| members.iter())
                .map(Member::leaf_count)
                .sum(),
        }
    }

    /// An `$or` member, its summaries computed.
    fn or(pointer: String, alternatives: Vec<(Vec<Member>, String)>) -> Member {
        let mut paths = Vec::new();
        let mut absent = Vec::new();
        let mut order = usize::MAX;
        for member in alternatives.iter().flat_map(|(m, _)| m.iter()) {
            paths.extend(member.paths().into_iter().map(str::to_owned));
            absent.extend(member.absent().into_iter().map(str::to_owned));
            order = order.min(member.order());
        }
        paths.sort_unstable();
        paths.dedup();
        absent.sort_unstable();
        absent.dedup();
        Member::Or {
            pointer,
            alternatives,
            paths,
            absent,
            order,
        }
    }

    fn of(item: &Item) -> Member {
        match item {
            Item::Leaf(l) => Member::Leaf(l.clone()),
            Item::Or(Or {
                pointer,
                alternatives,
            }) => Member::or(
                pointer.clone(),
                alternatives
                    .iter()
                    .map(|(items, at)| (items.iter().map(Member::of).collect(), at.clone()))
                    .collect(),
            ),
        }
    }
}

/// A union-find over sibling members.
struct Components(Vec<usize>);

impl Components {
    fn find(&mut self, mut i: usize) -> usize {
        while let Some(&parent) = self.0.get(i) {
            if parent == i {
                break;
            }
            let grand = self.0.get(parent).copied().unwrap_or(parent);
            if let Some(slot) = self.0.get_mut(i) {
                *slot = grand;
            }
            i = parent;
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb
            && let Some(slot) = self.0.get_mut(ra.max(rb))
        {
            *slot = ra.min(rb);
        }
    }
}

/// Normalizes a pattern's members (see the module documentation).
pub fn normalize(items: &[Item]) -> Result<Seq, PolicyError> {
    let members: Vec<Member> = items.iter().map(Member::of).collect();
    let mut budget = members.iter().map(Member::leaf_count).sum::<usize>();
    seq(members, &mut budget)
}

fn over_budget() -> PolicyError {
    PolicyError::new(
        ErrorCode::EventBridgeLimitExceeded,
        "",
        format!(
            "the pattern's $or alternatives replace or fix one another's fields in more \
             combinations than this compiler expands ({MAX_EXPANDED_LEAVES} copies of leaves); \
             give the alternatives distinct fields, or move a field repeated beside a $or into \
             each of its alternatives"
        ),
    )
}

/// Normalizes one sequence of sibling members.
fn seq(mut members: Vec<Member>, budget: &mut usize) -> Result<Seq, PolicyError> {
    while let Some(component) = interacting(&members) {
        // Distribute the first `$or` of the component over the rest of it.
        let Some(&first_or) = component
            .iter()
            .find(|&&i| members.get(i).is_some_and(Member::is_or))
        else {
            break;
        };
        let mut moved: Vec<Member> = Vec::new();
        let mut target = None;
        let mut kept = Vec::with_capacity(members.len());
        for (i, m) in members.into_iter().enumerate() {
            if i == first_or {
                target = Some(m);
            } else if component.contains(&i) {
                moved.push(m);
            } else {
                kept.push(m);
            }
        }
        let Some(Member::Or {
            pointer,
            alternatives,
            ..
        }) = target
        else {
            return Err(over_budget());
        };
        let copies = moved.iter().map(Member::leaf_count).sum::<usize>();
        *budget =
            budget.saturating_add(copies.saturating_mul(alternatives.len().saturating_sub(1)));
        if *budget > MAX_EXPANDED_LEAVES {
            return Err(over_budget());
        }
        let alternatives = alternatives
            .into_iter()
            .map(|(mut inside, at)| {
                inside.extend(moved.iter().cloned());
                inside.sort_by_key(Member::order);
                (inside, at)
            })
            .collect();
        kept.push(Member::or(pointer, alternatives));
        kept.sort_by_key(Member::order);
        members = kept;
    }
    let mut leaves: Vec<Leaf> = Vec::new();
    let mut ors = Vec::new();
    for member in members {
        match member {
            Member::Leaf(leaf) => leaves.push(leaf),
            Member::Or {
                pointer,
                alternatives,
                ..
            } => {
                let alternatives = alternatives
                    .into_iter()
                    .map(|(inside, at)| Ok((seq(inside, budget)?, at)))
                    .collect::<Result<Vec<_>, PolicyError>>()?;
                ors.push(SeqOr {
                    pointer,
                    alternatives,
                });
            }
        }
    }
    // EB-7: of one path's leaves, the last in document order stays.
    leaves.sort_by_key(|l| l.order);
    let mut last: HashMap<&str, usize> = HashMap::new();
    for l in &leaves {
        last.insert(l.path.as_str(), l.order);
    }
    let keep: Vec<usize> = leaves
        .iter()
        .map(|l| last.get(l.path.as_str()).copied().unwrap_or(usize::MAX))
        .collect();
    let leaves = leaves
        .into_iter()
        .zip(keep)
        .filter(|(l, last)| l.order == *last)
        .map(|(l, _)| l)
        .collect();
    Ok(Seq { leaves, ors })
}

/// The members (indexes) of the first group of interacting siblings that holds a `$or` and
/// something else, if any.
fn interacting(members: &[Member]) -> Option<Vec<usize>> {
    if !members.iter().any(Member::is_or) {
        return None;
    }
    let mut components = Components((0..members.len()).collect());
    // Common paths (EB-7).
    let mut by_path: HashMap<&str, usize> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        for path in m.paths() {
            match by_path.get(path) {
                Some(&j) => components.union(i, j),
                None => {
                    by_path.insert(path, i);
                }
            }
        }
    }
    // A `$or`'s path that can fix an array above a sibling's `exists: false` (EB-10).
    for (y, or) in members.iter().enumerate().filter(|(_, m)| m.is_or()) {
        let or_paths = or.paths();
        for (x, m) in members.iter().enumerate() {
            if x == y {
                continue;
            }
            let couples = m.absent().into_iter().any(|p| {
                or_paths
                    .iter()
                    .any(|j| sorts_before(j, p) && fixed_levels(p, j) > 0)
            });
            if couples {
                components.union(x, y);
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..members.len() {
        let root = components.find(i);
        groups.entry(root).or_default().push(i);
    }
    let mut candidates: Vec<Vec<usize>> = groups
        .into_values()
        .filter(|g| g.len() > 1 && g.iter().any(|&i| members.get(i).is_some_and(Member::is_or)))
        .collect();
    candidates.sort();
    candidates.into_iter().next()
}

/// The most distinct paths any branch of `seq` holds (EB-32): its own leaves and, for each `$or`,
/// its largest alternative (no path is shared across them after normalization).
pub fn max_paths(seq: &Seq) -> usize {
    seq.leaves.len()
        + seq
            .ors
            .iter()
            .map(|or| {
                or.alternatives
                    .iter()
                    .map(|(s, _)| max_paths(s))
                    .max()
                    .unwrap_or(0)
            })
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::super::parse::Parser;
    use super::*;

    fn normalized(text: &str) -> Seq {
        let policy = filtervm_vm::json::parse(text.as_bytes()).unwrap();
        let pattern = Parser::default().pattern(&policy).unwrap();
        normalize(&pattern.items).unwrap()
    }

    /// The branches of a normalized sequence, each its paths with the pointer of the leaf kept,
    /// sorted (the expansion, for checking).
    fn branches(seq: &Seq) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> =
            vec![seq.leaves.iter().map(|l| l.pointer.clone()).collect()];
        for or in &seq.ors {
            let mut next = Vec::new();
            for b in &out {
                for (alt, _) in &or.alternatives {
                    for ab in branches(alt) {
                        let mut merged = b.clone();
                        merged.extend(ab);
                        next.push(merged);
                    }
                }
            }
            out = next;
        }
        for b in &mut out {
            b.sort();
        }
        out.sort();
        out
    }

    #[test]
    fn eb_7_a_leaf_beside_a_or_is_replaced_in_the_alternative_that_repeats_it() {
        let s = normalized(r#"{"a": ["x"], "$or": [{"a": ["y"]}, {"b": ["z"]}]}"#);
        assert_eq!(
            branches(&s),
            [
                vec!["/$or/0/a".to_owned()],
                vec!["/$or/1/b".into(), "/a".into()]
            ]
        );
        let s = normalized(r#"{"$or": [{"a": ["y"]}, {"b": ["z"]}], "a": ["x"]}"#);
        assert_eq!(
            branches(&s),
            [vec!["/$or/1/b".to_owned(), "/a".into()], vec!["/a".into()]]
        );
    }

    #[test]
    fn eb_7_dotted_and_nested_spellings_are_one_path() {
        let s = normalized(r#"{"a.b": ["x"], "a": {"b": ["y"]}}"#);
        assert_eq!(branches(&s), [vec!["/a/b".to_owned()]]);
    }

    #[test]
    fn independent_ors_stay_factored() {
        // 20 $or members of two alternatives each: 2^20 branches, 40 leaves.
        let members: Vec<String> = (0..20)
            .map(|i| format!(r#""k{i}": {{"$or": [{{"a": ["1"]}}, {{"b": ["1"]}}]}}"#))
            .collect();
        let s = normalized(&format!("{{{}}}", members.join(",")));
        assert!(s.leaves.is_empty());
        assert_eq!(s.ors.len(), 20);
        assert_eq!(max_paths(&s), 20);
    }

    #[test]
    fn eb_10_a_or_fixing_an_absence_is_distributed() {
        let s = normalized(
            r#"{"r": {"c": [{"exists": false}]}, "$or": [{"r": {"b": ["y"]}}, {"z": ["1"]}]}"#,
        );
        assert!(s.ors.len() == 1 && s.leaves.is_empty(), "{s:?}");
        // r.z sorts after r.c: no coupling.
        let s = normalized(
            r#"{"r": {"c": [{"exists": false}]}, "$or": [{"r": {"z": ["y"]}}, {"z": ["1"]}]}"#,
        );
        assert_eq!(s.leaves.len(), 1);
    }

    #[test]
    fn chains_of_replacing_ors_stop_at_the_budget() {
        let ors: Vec<String> = (0..40)
            .map(|i| format!(r#""x{i}": {{"$or": [{{"c": ["{i}"]}}, {{"d{i}": ["1"]}}]}}"#))
            .collect();
        // Nested objects give each $or its own prefix: no interaction.
        let s = normalized(&format!("{{{}}}", ors.join(",")));
        assert_eq!(s.ors.len(), 40);
        let flat: Vec<String> = (0..40)
            .map(|i| format!(r#""$or": [{{"c": ["{i}"]}}, {{"d{i}": ["1"]}}]"#))
            .collect();
        let text = format!("{{\"c\": [\"0\"], {}}}", flat.join(","));
        let policy = filtervm_vm::json::parse_with(text.as_bytes(), &{
            let mut o = filtervm_vm::json::ParseOptions::default();
            o.duplicates = filtervm_vm::json::Duplicates::KeepAll;
            o
        })
        .unwrap();
        let pattern = Parser::default().pattern(&policy).unwrap();
        let e = normalize(&pattern.items).unwrap_err();
        assert_eq!(e.code, ErrorCode::EventBridgeLimitExceeded);
    }

    #[test]
    fn utf16_order() {
        assert!(sorts_before("r.\u{1F600}", "r.\u{FF61}"));
        assert!("r.\u{1F600}" > "r.\u{FF61}");
        assert!(sorts_before("a", "a.b"));
        assert_eq!(fixed_levels("r.c", "r.b"), 1);
        assert_eq!(fixed_levels("r.a", "r"), 0);
        assert_eq!(fixed_levels("r.q.c", "r.q.b"), 2);
        assert_eq!(fixed_levels("r.q.c", "r.x"), 1);
    }
}

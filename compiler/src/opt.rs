//! The optimizer: small passes over the IR, each its own function with its own tests.
//!
//! [`optimize`] runs them to a fixed point: [`push_negations`] (negations to the leaves, so
//! `not` of `and`/`or` becomes the forms the VM short-circuits best), [`flatten`],
//! [`fold_constants`], [`dedup`], [`merge_alternatives`] (a key's alternatives in one `or` become
//! one test: string sets, prefix/suffix sets, numeric interval unions) and finally [`order`]
//! (cheap and selective tests first).

use crate::ir::{Node, NodeKind, Pred, StrOp, Test};
use filtervm_vm::program::Interval;
use filtervm_vm::value::Shapes;

/// Runs every pass until nothing changes (bounded rounds), then orders children by cost.
pub fn optimize(node: Node) -> Node {
    let mut node = push_negations(node);
    for _ in 0..8 {
        let before = node.size();
        node = merge_alternatives(dedup(fold_constants(flatten(node))));
        if node.size() == before {
            break;
        }
    }
    order(node)
}

/// Rebuilds `node` bottom-up with `f` applied to every rebuilt node.
fn rebuild(node: Node, f: &dyn Fn(Node) -> Node) -> Node {
    let Node { kind, origin } = node;
    let kind = match kind {
        NodeKind::And(c) => NodeKind::And(c.into_iter().map(|c| rebuild(c, f)).collect()),
        NodeKind::Or(c) => NodeKind::Or(c.into_iter().map(|c| rebuild(c, f)).collect()),
        NodeKind::Not(c) => NodeKind::Not(Box::new(rebuild(*c, f))),
        other => other,
    };
    f(Node { kind, origin })
}

/// Pushes `not` to the leaves (De Morgan), removes double negation, and turns `not` of a shape
/// test into the complementary shape test.
pub fn push_negations(node: Node) -> Node {
    let Node { kind, origin } = node;
    match kind {
        NodeKind::Not(child) => negate(*child),
        NodeKind::And(c) => Node::new(
            NodeKind::And(c.into_iter().map(push_negations).collect()),
            origin,
        ),
        NodeKind::Or(c) => Node::new(
            NodeKind::Or(c.into_iter().map(push_negations).collect()),
            origin,
        ),
        other => Node::new(other, origin),
    }
}

fn negate(node: Node) -> Node {
    let Node { kind, origin } = node;
    match kind {
        NodeKind::True => Node::new(NodeKind::False, origin),
        NodeKind::False => Node::new(NodeKind::True, origin),
        NodeKind::Not(child) => push_negations(*child),
        NodeKind::And(c) => Node::new(NodeKind::Or(c.into_iter().map(negate).collect()), origin),
        NodeKind::Or(c) => Node::new(NodeKind::And(c.into_iter().map(negate).collect()), origin),
        NodeKind::Test(Test {
            key,
            pred: Pred::Shape(s),
        }) => Node::test(key, Pred::Shape(s.complement()), origin),
        test @ NodeKind::Test(_) => Node::negation(Node::new(test, origin)),
    }
}

/// Flattens nested `and`/`or` of the same kind, unwraps one-child `and`/`or`, and removes
/// double negation.
pub fn flatten(node: Node) -> Node {
    rebuild(node, &|n| {
        let Node { kind, origin } = n;
        match kind {
            NodeKind::And(c) => one_or(splice(c, true), origin, true),
            NodeKind::Or(c) => one_or(splice(c, false), origin, false),
            NodeKind::Not(c) => match c.kind {
                NodeKind::Not(inner) => *inner,
                other => Node::new(
                    NodeKind::Not(Box::new(Node {
                        kind: other,
                        origin: c.origin,
                    })),
                    origin,
                ),
            },
            other => Node::new(other, origin),
        }
    })
}

fn splice(children: Vec<Node>, and: bool) -> Vec<Node> {
    let mut out = Vec::with_capacity(children.len());
    for c in children {
        match c.kind {
            NodeKind::And(inner) if and => out.extend(inner),
            NodeKind::Or(inner) if !and => out.extend(inner),
            kind => out.push(Node {
                kind,
                origin: c.origin,
            }),
        }
    }
    out
}

fn one_or(mut children: Vec<Node>, origin: Box<str>, and: bool) -> Node {
    if children.len() == 1
        && let Some(only) = children.pop()
    {
        return only;
    }
    Node::new(
        if and {
            NodeKind::And(children)
        } else {
            NodeKind::Or(children)
        },
        origin,
    )
}

/// Folds constants: `and` with `false` is `false`, `true` children vanish, an empty `and` is
/// `true`; dually for `or`; `not` of a constant; an empty numeric range or string set is `false`.
pub fn fold_constants(node: Node) -> Node {
    rebuild(node, &|n| {
        let Node { kind, origin } = n;
        match kind {
            NodeKind::And(c) => {
                if c.iter().any(|c| matches!(c.kind, NodeKind::False)) {
                    return Node::new(NodeKind::False, origin);
                }
                let c: Vec<Node> = c
                    .into_iter()
                    .filter(|c| !matches!(c.kind, NodeKind::True))
                    .collect();
                if c.is_empty() {
                    Node::new(NodeKind::True, origin)
                } else {
                    one_or(c, origin, true)
                }
            }
            NodeKind::Or(c) => {
                if c.iter().any(|c| matches!(c.kind, NodeKind::True)) {
                    return Node::new(NodeKind::True, origin);
                }
                let c: Vec<Node> = c
                    .into_iter()
                    .filter(|c| !matches!(c.kind, NodeKind::False))
                    .collect();
                if c.is_empty() {
                    Node::new(NodeKind::False, origin)
                } else {
                    one_or(c, origin, false)
                }
            }
            NodeKind::Not(c) => match c.kind {
                NodeKind::True => Node::new(NodeKind::False, origin),
                NodeKind::False => Node::new(NodeKind::True, origin),
                other => Node::new(
                    NodeKind::Not(Box::new(Node {
                        kind: other,
                        origin: c.origin,
                    })),
                    origin,
                ),
            },
            NodeKind::Test(t) if never_holds(&t.pred) => Node::new(NodeKind::False, origin),
            NodeKind::Test(Test {
                pred: Pred::Shape(s),
                ..
            }) if s == Shapes::ALL => Node::new(NodeKind::True, origin),
            other => Node::new(other, origin),
        }
    })
}

fn never_holds(pred: &Pred) -> bool {
    match pred {
        Pred::Shape(s) => s.0 == 0,
        Pred::HasType(t) => t.0 == 0,
        Pred::Str { values, .. } => values.is_empty(),
        Pred::Num { ranges, .. } => ranges.iter().all(Interval::is_empty),
        Pred::Dec(r) => r.is_empty(),
        _ => false,
    }
}

/// Removes structurally equal children of `and`/`or` (the first one stays).
pub fn dedup(node: Node) -> Node {
    rebuild(node, &|n| {
        let Node { kind, origin } = n;
        let dedup_children = |c: Vec<Node>| {
            let mut out: Vec<Node> = Vec::with_capacity(c.len());
            for child in c {
                if !out.iter().any(|o| o.same(&child)) {
                    out.push(child);
                }
            }
            out
        };
        match kind {
            NodeKind::And(c) => one_or(dedup_children(c), origin, true),
            NodeKind::Or(c) => one_or(dedup_children(c), origin, false),
            other => Node::new(other, origin),
        }
    })
}

/// Merges the alternatives of one key inside an `or`: string tests of the same kind and case
/// become one test over the union of their values, numeric tests of the same source one test
/// over the union of their intervals, shape tests one test over the union of shapes. (Inside an
/// `and` nothing is merged: "some leaf in A and some leaf in B" is not "some leaf in A ∩ B".)
pub fn merge_alternatives(node: Node) -> Node {
    rebuild(node, &|n| {
        let Node { kind, origin } = n;
        match kind {
            NodeKind::Or(c) => {
                let merged = merge_or(c, &origin);
                one_or(merged, origin, false)
            }
            other => Node::new(other, origin),
        }
    })
}

/// Merges tests of one key; a merged test takes the origin of the `or` it stands for.
fn merge_or(children: Vec<Node>, or_origin: &str) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::with_capacity(children.len());
    for child in children {
        let merged = match &child.kind {
            NodeKind::Test(t) => out.iter_mut().any(|o| {
                let done = match &mut o.kind {
                    NodeKind::Test(into) if into.key == t.key => {
                        merge_pred(&mut into.pred, &t.pred)
                    }
                    _ => false,
                };
                if done {
                    o.origin = or_origin.into();
                }
                done
            }),
            _ => false,
        };
        if !merged {
            out.push(child);
        }
    }
    out
}

/// Merges `from` into `into` when both are the same mergeable kind; returns whether it did.
fn merge_pred(into: &mut Pred, from: &Pred) -> bool {
    match (into, from) {
        (
            Pred::Str { op, case, values },
            Pred::Str {
                op: op2,
                case: case2,
                values: v2,
            },
        ) if op == op2 && case == case2 => {
            values.extend(v2.iter().cloned());
            values.sort();
            values.dedup();
            true
        }
        (
            Pred::Num { source, ranges },
            Pred::Num {
                source: s2,
                ranges: r2,
            },
        ) if source == s2 => {
            ranges.extend(r2.iter().copied());
            ranges.retain(|r| !r.is_empty());
            true
        }
        (Pred::Dec(r), Pred::Dec(r2)) => {
            r.extend(r2.iter().cloned());
            true
        }
        (Pred::Shape(s), Pred::Shape(s2)) => {
            *s = s.union(*s2);
            true
        }
        (Pred::HasType(t), Pred::HasType(t2)) => {
            *t = t.union(*t2);
            true
        }
        _ => false,
    }
}

/// Orders the children of every `and`/`or` by estimated cost, cheapest first (stable).
pub fn order(node: Node) -> Node {
    rebuild(node, &|n| {
        let Node { kind, origin } = n;
        match kind {
            NodeKind::And(mut c) => {
                c.sort_by_key(cost);
                Node::new(NodeKind::And(c), origin)
            }
            NodeKind::Or(mut c) => {
                c.sort_by_key(cost);
                Node::new(NodeKind::Or(c), origin)
            }
            other => Node::new(other, origin),
        }
    })
}

/// A rough cost: shape checks are cheapest, then equality, then scans, then patterns;
/// compound nodes cost the sum of their children.
pub fn cost(node: &Node) -> u32 {
    match &node.kind {
        NodeKind::True | NodeKind::False => 0,
        NodeKind::And(c) | NodeKind::Or(c) => c.iter().map(cost).sum::<u32>().saturating_add(1),
        NodeKind::Not(c) => cost(c).saturating_add(1),
        NodeKind::Test(t) => match &t.pred {
            Pred::Shape(_) | Pred::HasType(_) => 1,
            Pred::Bool(_) => 2,
            Pred::Str { op: StrOp::Eq, .. } => 3,
            Pred::Str {
                op: StrOp::Prefix | StrOp::Suffix,
                ..
            } => 4,
            Pred::Num { .. } => 4,
            Pred::Dec(_) => 6,
            Pred::Str {
                op: StrOp::Contains,
                ..
            } => 8,
            Pred::Segment(_) | Pred::Cidr(_) => 8,
            Pred::Wildcard(_) => 10,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Case, NumSource};
    use filtervm_vm::key::Key;

    fn key(n: &str) -> Key {
        Key::Header(n.into())
    }
    fn eq(k: &str, v: &str) -> Node {
        Node::test(
            key(k),
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values: vec![v.into()],
            },
            "/x",
        )
    }
    fn text(n: &Node) -> String {
        n.to_string()
            .lines()
            .map(|l| l.split(" ; ").next().unwrap_or("").trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn flatten_splices_nested_and_or_and_unwraps_singletons() {
        let n = Node::and(
            vec![
                eq("a", "1"),
                Node::and(vec![eq("b", "2"), Node::or(vec![eq("c", "3")], "")], ""),
            ],
            "",
        );
        assert_eq!(
            text(&flatten(n)),
            "and\n  test header \"a\" str-eq [\"1\"]\n  test header \"b\" str-eq [\"2\"]\n  test header \"c\" str-eq [\"3\"]"
        );
        let double = Node::negation(Node::negation(eq("a", "1")));
        assert_eq!(text(&flatten(double)), "test header \"a\" str-eq [\"1\"]");
    }

    #[test]
    fn fold_constants_and_or_not() {
        assert!(matches!(
            fold_constants(Node::and(vec![eq("a", "1"), Node::constant(false, "")], "")).kind,
            NodeKind::False
        ));
        assert!(matches!(
            fold_constants(Node::or(vec![eq("a", "1"), Node::constant(true, "")], "")).kind,
            NodeKind::True
        ));
        assert!(matches!(
            fold_constants(Node::and(vec![], "")).kind,
            NodeKind::True
        ));
        assert!(matches!(
            fold_constants(Node::or(vec![], "")).kind,
            NodeKind::False
        ));
        assert!(matches!(
            fold_constants(Node::negation(Node::constant(true, ""))).kind,
            NodeKind::False
        ));
        let kept = fold_constants(Node::and(vec![eq("a", "1"), Node::constant(true, "")], ""));
        assert_eq!(text(&kept), "test header \"a\" str-eq [\"1\"]");
        let empty_range = Node::test(
            key("n"),
            Pred::Num {
                source: NumSource::Text,
                ranges: vec![Interval {
                    lo: 10.0,
                    lo_inclusive: false,
                    hi: 5.0,
                    hi_inclusive: false,
                }],
            },
            "",
        );
        assert!(matches!(fold_constants(empty_range).kind, NodeKind::False));
    }

    #[test]
    fn dedup_removes_repeated_children() {
        let n = Node::or(vec![eq("a", "1"), eq("a", "1"), eq("b", "1")], "");
        assert_eq!(
            text(&dedup(n)),
            "or\n  test header \"a\" str-eq [\"1\"]\n  test header \"b\" str-eq [\"1\"]"
        );
    }

    #[test]
    fn merge_alternatives_unions_values_of_one_key_in_or_only() {
        let n = Node::or(vec![eq("a", "2"), eq("b", "1"), eq("a", "1")], "");
        assert_eq!(
            text(&merge_alternatives(n)),
            "or\n  test header \"a\" str-eq [\"1\", \"2\"]\n  test header \"b\" str-eq [\"1\"]"
        );
        let and = Node::and(vec![eq("a", "2"), eq("a", "1")], "");
        assert_eq!(merge_alternatives(and).size(), 3, "and is never merged");
        let nums = Node::or(
            vec![
                Node::test(
                    key("n"),
                    Pred::Num {
                        source: NumSource::Text,
                        ranges: vec![Interval::point(1.0)],
                    },
                    "",
                ),
                Node::test(
                    key("n"),
                    Pred::Num {
                        source: NumSource::Text,
                        ranges: vec![Interval::point(2.0)],
                    },
                    "",
                ),
                Node::test(
                    key("n"),
                    Pred::Num {
                        source: NumSource::NumberLeaf,
                        ranges: vec![Interval::point(3.0)],
                    },
                    "",
                ),
            ],
            "",
        );
        assert_eq!(
            text(&merge_alternatives(nums)),
            "or\n  test header \"n\" text-num {1} ∪ {2}\n  test header \"n\" num {3}"
        );
        let shapes = Node::or(
            vec![
                Node::test(key("n"), Pred::Shape(Shapes::ABSENT), ""),
                Node::test(key("n"), Pred::Shape(Shapes::NULL), ""),
            ],
            "",
        );
        assert_eq!(
            text(&merge_alternatives(shapes)),
            "test header \"n\" shape absent|null"
        );
    }

    #[test]
    fn push_negations_applies_de_morgan_and_complements_shapes() {
        let n = Node::negation(Node::and(
            vec![
                eq("a", "1"),
                Node::or(
                    vec![
                        eq("b", "2"),
                        Node::test(key("c"), Pred::Shape(Shapes::ABSENT), ""),
                    ],
                    "",
                ),
            ],
            "",
        ));
        assert_eq!(
            text(&push_negations(n)),
            "or\n  not\n    test header \"a\" str-eq [\"1\"]\n  and\n    not\n      test header \"b\" str-eq [\"2\"]\n    test header \"c\" shape present"
        );
    }

    #[test]
    fn order_puts_cheap_tests_first() {
        let wild = Node::test(
            key("w"),
            Pred::Wildcard(filtervm_vm::wildcard::Wildcard::compile("a*").unwrap()),
            "",
        );
        let n = Node::and(
            vec![
                wild,
                Node::test(key("p"), Pred::Shape(Shapes::PRESENT), ""),
                eq("a", "1"),
            ],
            "",
        );
        assert_eq!(
            text(&order(n)),
            "and\n  test header \"p\" shape present\n  test header \"a\" str-eq [\"1\"]\n  test header \"w\" wildcard \"a*\""
        );
    }

    #[test]
    fn optimize_reaches_a_fixed_point() {
        let n = Node::and(
            vec![
                Node::or(vec![eq("a", "1"), Node::or(vec![eq("a", "2")], "")], ""),
                Node::constant(true, ""),
            ],
            "",
        );
        assert_eq!(
            text(&optimize(n)),
            "test header \"a\" str-eq [\"1\", \"2\"]"
        );
    }
}

//! The optimizer: small passes over the IR, each its own function with its own tests.
//!
//! [`optimize`] runs them to a fixed point: [`push_negations`] (negations to the leaves, so
//! `not` of `and`/`or` becomes the forms the VM short-circuits best), [`flatten`],
//! [`fold_constants`], [`dedup`], [`merge_alternatives`] (a key's alternatives in one `or` become
//! one test: string sets, prefix/suffix sets, numeric interval unions) and finally [`order`]
//! (cheap and selective tests first).

use crate::ir::{Node, NodeKind, Pred, StrOp, Test};
use filtervm_vm::key::Key;
use filtervm_vm::program::Interval;
use filtervm_vm::value::Shapes;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

/// Runs every pass until nothing changes (bounded rounds), then orders children by cost.
///
/// Negations are pushed and nested `and`/`or` flattened in one walk over the tree in its place
/// (`negations_in_place`), and the first round leaves out its flatten, which would change
/// nothing: the tree is the one [`push_negations`] and every round from the first give (see
/// [`optimize_copy`], which does the same on a copy).
pub fn optimize(mut node: Node) -> Node {
    negations_in_place(&mut node, false);
    normalize(&mut node, true);
    node
}

/// [`optimize`] of a tree kept by the caller (a filter keeps its IR as lowered): negations are
/// pushed and nested `and`/`or` flattened while copying, so the tree is copied once and a
/// one-child `and`/`or` is never copied at all.
///
/// The copy is the first round's [`flatten`] of the tree [`push_negations`] gives (each node
/// flattened as it is made, children first, as the pass goes), and flattening is idempotent, so
/// every round gives the tree it gave when the copy was not flattened. Only the size the first
/// round is compared with differs: a first round that changes nothing after a flattening copy
/// stops, where it would have taken a second round that changes nothing (BENCHMARKS.md,
/// "Compile").
pub fn optimize_copy(node: &Node) -> Node {
    let mut node = negations_pushed(node, false);
    normalize(&mut node, true);
    node
}

/// The rounds of [`optimize`] after [`push_negations`], and the ordering. The passes rewrite the
/// tree in place: a node a pass leaves alone is neither moved nor reallocated, so a round that
/// changes nothing (the last one, always) costs one walk per pass.
///
/// The rounds stop at the first that leaves the tree's size (its number of nodes) as it was. No
/// pass ever adds a node, so the size is unchanged exactly when no pass removed one: each pass
/// says whether it removed a node where it ran, and the tree is not walked to count its size.
///
/// A round is not run on a tree that no pass would change ([`pending`] names no pass): it would
/// leave the tree as it is and stop the rounds, so they stop there, after one walk that changes
/// nothing instead of four. (So the round that ends the rounds, which every compile used to pay
/// in full, costs one walk when the tree is settled.) A round that runs leaves out the passes
/// that would change nothing ([`pending`]) until one that may have changed the tree has run.
/// `flattened` says the tree is as [`flatten`] leaves it (the copy [`optimize_copy`] makes):
/// then the first round's flatten, which would change nothing, is not run either.
fn normalize(node: &mut Node, flattened: bool) {
    for i in 0..8 {
        let work = pending(node);
        if work == 0 || !round(node, flattened && i == 0, work) {
            break;
        }
    }
    in_place(node, &order_node);
}

/// [`pending`]'s bits: the passes of a round.
const FLATTEN: u8 = 1;
const FOLD: u8 = 2;
const DEDUP: u8 = 4;
const MERGE: u8 = 8;
/// Every pass: a full round.
const EVERY: u8 = FLATTEN | FOLD | DEDUP | MERGE;

/// One round of the passes; returns whether it removed a node (changed the tree's size). The
/// flatten pass is left out when `flattened` (the tree is as it leaves it). `work` names the
/// passes that may change the tree as it is when the round starts ([`pending`]; [`EVERY`] for
/// all): a pass not named is left out while no earlier pass of the round has run, as it would
/// leave the tree as it is; once one has run, the tree may have changed, and every later pass
/// runs.
fn round(node: &mut Node, flattened: bool, work: u8) -> bool {
    let mut ran = false;
    let mut run = |pass: u8| {
        ran |= work & pass != 0;
        ran
    };
    let mut removed = false;
    if !flattened && run(FLATTEN) {
        removed |= in_place(node, &flatten_node);
    }
    if run(FOLD) {
        removed |= in_place(node, &fold_node);
    }
    if run(DEDUP) {
        removed |= in_place(node, &dedup_node);
    }
    if run(MERGE) {
        removed |= in_place(node, &merge_node);
    }
    removed
}

/// Whether no pass of a round would change `node` or a node below it: a round would leave the
/// tree as it is ([`pending`] names no pass).
#[cfg(test)]
fn settled(node: &Node) -> bool {
    pending(node) == 0
}

/// The passes of a round ([`FLATTEN`], [`FOLD`], [`DEDUP`], [`MERGE`]) that may change `node`
/// or a node below it; a pass not named would leave the tree as it is. Each condition is the
/// one its pass acts on ([`flatten_node`]: a one-child `and`/`or`, a child junction of the same
/// kind, a double negation; [`fold_node`]: a constant child, an empty junction, `not` of a
/// constant, a test that never or always holds; [`dedup_node`]: two children the same;
/// [`merge_node`]: two tests of one key in an `or` that [`mergeable`] says merge). Any
/// condition of flatten or fold, a one-child junction (which every pass unwraps) and a
/// junction of [`DEDUP_BY_HASH_FROM`] children or more (which dedup and merge look at through
/// hashes) name [`EVERY`] pass: only the two pair conditions name their own pass.
fn pending(node: &Node) -> u8 {
    // One walk looks at every condition: two children the same are looked for as the walk
    // goes (by their prints, so that few pairs are compared), and a tree that is not settled
    // stops it at the first local condition it fails (a one-child junction, say).
    let mut work = 0;
    if !shaped(node, &mut work) {
        return EVERY;
    }
    work
}

/// [`pending`]'s conditions: `false` for one of [`flatten_node`]'s or [`fold_node`]'s, or a
/// junction's width; a mergeable pair sets [`MERGE`] in `work`, two children of a junction the
/// same ([`dedup_node`]'s) [`DEDUP`].
fn shaped(node: &Node, work: &mut u8) -> bool {
    match &node.kind {
        NodeKind::True | NodeKind::False => true,
        NodeKind::Not(c) => {
            !matches!(c.kind, NodeKind::Not(_) | NodeKind::True | NodeKind::False)
                && shaped(c, work)
        }
        NodeKind::Test(t) => shaped_test(t),
        NodeKind::And(c) => shaped_junction(c, true, work),
        NodeKind::Or(c) => shaped_junction(c, false, work),
    }
}

/// [`shaped`] of a test: one that never or always holds is folded.
#[inline]
fn shaped_test(t: &Test) -> bool {
    !never_holds(&t.pred) && !matches!(t.pred, Pred::Shape(s) if s == Shapes::ALL)
}

/// [`shaped`] of an `and` (`and` true) or `or` of `children`.
fn shaped_junction(children: &[Node], and: bool, work: &mut u8) -> bool {
    if !(2..DEDUP_BY_HASH_FROM).contains(&children.len()) {
        return false;
    }
    // The children's prints, while no two children of a junction are known to be the same.
    let mut prints = [0u64; DEDUP_BY_HASH_FROM];
    for (i, child) in children.iter().enumerate() {
        // A test child is looked at here, not by a call.
        let shaped_child = match &child.kind {
            NodeKind::True | NodeKind::False => false,
            NodeKind::And(_) if and => false,
            NodeKind::Or(_) if !and => false,
            NodeKind::Test(t) => shaped_test(t),
            _ => shaped(child, work),
        };
        if !shaped_child {
            return false;
        }
        if !and
            && *work & MERGE == 0
            && let NodeKind::Test(t) = &child.kind
            && children.get(..i).unwrap_or_default().iter().any(|o| {
                matches!(&o.kind, NodeKind::Test(into) if into.key == t.key && mergeable(&into.pred, &t.pred))
            })
        {
            *work |= MERGE;
        }
        // Two children are compared ([`Node::same`]) only when their prints are equal.
        if *work & DEDUP == 0 {
            let p = print(child);
            let earlier = prints.get(..i).unwrap_or_default();
            if earlier
                .iter()
                .zip(children)
                .any(|(&q, o)| q == p && o.same(child))
            {
                *work |= DEDUP;
            } else if let Some(slot) = prints.get_mut(i) {
                *slot = p;
            }
        }
    }
    true
}

/// A number equal for nodes that are the same ([`Node::same`]: same kind, junctions of as many
/// children, tests of the same kind of predicate with as many values, the first of the same
/// length and first byte, or patterns of the same length and first byte, shapes of the same
/// bits, numeric tests of one source with as many intervals) and different for most children
/// of one junction that are not: [`shaped_junction`] compares it first, so that `same` runs for
/// few pairs.
fn print(node: &Node) -> u64 {
    match &node.kind {
        NodeKind::True => 1,
        NodeKind::False => 2,
        NodeKind::Not(_) => 3,
        NodeKind::And(c) => 4 | (c.len() as u64) << 8,
        NodeKind::Or(c) => 5 | (c.len() as u64) << 8,
        // The predicates most often met beside each other in one junction print apart: string
        // sets by their values, and (a stream filter's patterns and `exists`/`missing` tests,
        // say) a pattern by its text's length and first byte, a shape by its bits, a numeric
        // test by its source and number of intervals (all equal for tests that are the same).
        NodeKind::Test(t) => match &t.pred {
            Pred::Str { op, case, values } => {
                print_values(1 | (*op as u64) << 4 | (*case as u64) << 6, values)
            }
            Pred::NumText(values) => print_values(2, values),
            Pred::Segment(p) => {
                let source = p.source();
                let first = u64::from(source.as_bytes().first().copied().unwrap_or(0));
                8 | first << 8 | (source.len() as u64) << 16
            }
            Pred::Shape(s) => 9 | u64::from(s.0) << 8,
            Pred::Num { source, ranges } => {
                10 | (*source as u64) << 8 | (ranges.len() as u64) << 16
            }
            _ => 7,
        },
    }
}

/// [`print`] of a test of `values` (a string set or number texts, `kind` telling which).
#[inline]
fn print_values(kind: u64, values: &[Arc<str>]) -> u64 {
    let first = values.first().map_or(0, |v| {
        (v.len() as u64) << 16 | u64::from(v.as_bytes().first().copied().unwrap_or(0)) << 8
    });
    6 | kind << 8 | (values.len() as u64) << 16 | first << 24
}

/// Applies `f` to every node, children before their parent (the order the passes are defined
/// in: `f` sees a node's children already rewritten); returns whether some call of `f` removed
/// a node (each call says so for its own node). Generic, so that each pass is inlined into its
/// own walk rather than called through a pointer at every node.
fn in_place<F: Fn(&mut Node) -> bool>(node: &mut Node, f: &F) -> bool {
    let mut removed = false;
    match &mut node.kind {
        NodeKind::And(c) | NodeKind::Or(c) => {
            for c in c.iter_mut() {
                // A child without children is given to `f` here, not walked by a call.
                removed |= match c.kind {
                    NodeKind::And(_) | NodeKind::Or(_) | NodeKind::Not(_) => in_place(c, f),
                    _ => f(c),
                };
            }
        }
        NodeKind::Not(c) => removed = in_place(c, f),
        _ => {}
    }
    f(node) | removed
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

/// [`push_negations`] (`negated` false) or [`negate`] (true) of a borrowed tree, as a new tree,
/// each `and`/`or` flattened ([`flatten_node`]) as it is made.
fn negations_pushed(node: &Node, negated: bool) -> Node {
    match (&node.kind, negated) {
        (NodeKind::Not(child), _) => return negations_pushed(child, !negated),
        (NodeKind::And(c), false) | (NodeKind::Or(c), true) => {
            return flat_junction(c, negated, true, &node.origin);
        }
        (NodeKind::Or(c), false) | (NodeKind::And(c), true) => {
            return flat_junction(c, negated, false, &node.origin);
        }
        _ => {}
    }
    let origin = node.origin.clone();
    match (&node.kind, negated) {
        (NodeKind::True, true) => Node::new(NodeKind::False, origin),
        (NodeKind::False, true) => Node::new(NodeKind::True, origin),
        (
            NodeKind::Test(Test {
                key,
                pred: Pred::Shape(s),
            }),
            true,
        ) => Node::test(key.clone(), Pred::Shape(s.complement()), origin),
        (NodeKind::Test(_), true) => Node::negation(Node::new(node.kind.clone(), origin)),
        (kind, _) => Node::new(kind.clone(), origin),
    }
}

/// [`negations_pushed`] of a tree given up by the caller, made in its place: a node the walk
/// leaves alone (most of them: a policy has few negations) is not moved, a negated junction
/// changes kind keeping its list of children, and each `and`/`or` is flattened
/// ([`flatten_node`]) once its children are, as [`flat_junction`] flattens the copy.
fn negations_in_place(node: &mut Node, negated: bool) {
    match &mut node.kind {
        // `not` of a test that is not a shape test, not itself negated: the walk would negate
        // the test into a new `not` (its origin the test's) and put that in the node's place.
        // The node is that already, but perhaps for its origin: it keeps its box.
        NodeKind::Not(child)
            if !negated
                && matches!(&child.kind, NodeKind::Test(t) if !matches!(t.pred, Pred::Shape(_))) =>
        {
            if node.origin != child.origin {
                node.origin = child.origin.clone();
            }
        }
        NodeKind::Not(child) => {
            negations_in_place(child, !negated);
            // The pushed child takes the node's place (its own origin, as in the copy).
            if let NodeKind::Not(child) = std::mem::replace(&mut node.kind, NodeKind::True) {
                *node = *child;
            }
        }
        NodeKind::And(c) | NodeKind::Or(c) => {
            for c in c.iter_mut() {
                // A test not negated is left as it is: it is passed over here, not by a call.
                if negated || !matches!(c.kind, NodeKind::Test(_)) {
                    negations_in_place(c, negated);
                }
            }
            if negated {
                node.kind = match std::mem::replace(&mut node.kind, NodeKind::True) {
                    NodeKind::And(c) => NodeKind::Or(c),
                    NodeKind::Or(c) => NodeKind::And(c),
                    other => other,
                };
            }
            flatten_node(node);
        }
        _ if !negated => {}
        NodeKind::True => node.kind = NodeKind::False,
        NodeKind::False => node.kind = NodeKind::True,
        NodeKind::Test(Test {
            pred: Pred::Shape(s),
            ..
        }) => *s = s.complement(),
        NodeKind::Test(_) => {
            let test = std::mem::replace(&mut node.kind, NodeKind::True);
            node.kind = NodeKind::Not(Box::new(Node {
                kind: test,
                origin: node.origin.clone(),
            }));
        }
    }
}

/// The copy of an `and` (`and` true) or `or` of `children` (each copied by [`negations_pushed`]
/// with `negated`) with origin `origin`, as [`flatten_node`] leaves it.
fn flat_junction(children: &[Node], negated: bool, and: bool, origin: &Arc<str>) -> Node {
    if let [only] = children {
        // `flatten_node` of a junction of one (flattened) child: the child itself, or, when it is
        // a junction of the same kind, its children under this origin. No list is made for it.
        let child = negations_pushed(only, negated);
        let same = match child.kind {
            NodeKind::And(_) => and,
            NodeKind::Or(_) => !and,
            _ => false,
        };
        if !same {
            return child;
        }
        let mut node = Node {
            kind: child.kind,
            origin: origin.clone(),
        };
        unwrap_single(&mut node);
        return node;
    }
    let copies = children
        .iter()
        .map(|c| negations_pushed(c, negated))
        .collect();
    let mut node = Node::new(
        if and {
            NodeKind::And(copies)
        } else {
            NodeKind::Or(copies)
        },
        origin.clone(),
    );
    flatten_node(&mut node);
    node
}

/// Flattens nested `and`/`or` of the same kind, unwraps one-child `and`/`or`, and removes
/// double negation.
pub fn flatten(mut node: Node) -> Node {
    in_place(&mut node, &flatten_node);
    node
}

/// [`flatten`] at one node whose children are flattened; returns whether it removed a node.
fn flatten_node(node: &mut Node) -> bool {
    match &mut node.kind {
        NodeKind::And(c) => {
            let spliced = splice(c, true);
            unwrap_single(node) | spliced
        }
        NodeKind::Or(c) => {
            let spliced = splice(c, false);
            unwrap_single(node) | spliced
        }
        NodeKind::Not(c) if matches!(c.kind, NodeKind::Not(_)) => {
            // The grandchild takes the node's place.
            if let NodeKind::Not(inner) = std::mem::replace(&mut c.kind, NodeKind::True) {
                *node = *inner;
            }
            true
        }
        _ => false,
    }
}

/// Puts the children of `and` children of an `and` (`or` of an `or`) in their place; returns
/// whether there was one (a node removed).
fn splice(children: &mut Vec<Node>, and: bool) -> bool {
    let same = |c: &Node| match c.kind {
        NodeKind::And(_) => and,
        NodeKind::Or(_) => !and,
        _ => false,
    };
    if !children.iter().any(same) {
        return false;
    }
    // The spliced list's length, so that it is allocated once.
    let total: usize = children
        .iter()
        .map(|c| match &c.kind {
            NodeKind::And(inner) if and => inner.len(),
            NodeKind::Or(inner) if !and => inner.len(),
            _ => 1,
        })
        .sum();
    let old = std::mem::take(children);
    children.reserve(total);
    for c in old {
        match c.kind {
            NodeKind::And(inner) if and => children.extend(inner),
            NodeKind::Or(inner) if !and => children.extend(inner),
            kind => children.push(Node {
                kind,
                origin: c.origin,
            }),
        }
    }
    true
}

/// An `and`/`or` of one child becomes that child; returns whether it did (a node removed).
fn unwrap_single(node: &mut Node) -> bool {
    if let NodeKind::And(c) | NodeKind::Or(c) = &mut node.kind
        && c.len() == 1
        && let Some(only) = c.pop()
    {
        *node = only;
        return true;
    }
    false
}

/// Folds constants: `and` with `false` is `false`, `true` children vanish, an empty `and` is
/// `true`; dually for `or`; `not` of a constant; an empty numeric range or string set is `false`.
pub fn fold_constants(mut node: Node) -> Node {
    in_place(&mut node, &fold_node);
    node
}

/// [`fold_constants`] at one node whose children are folded; returns whether it removed a node
/// (a test folded to a constant is replaced, not removed).
fn fold_node(node: &mut Node) -> bool {
    // The constant the node folds to, if any, and whether children were removed (an `and`/`or`
    // that folds to a constant loses all it had; an empty one loses none).
    let (constant, removed) = match &mut node.kind {
        NodeKind::And(c) => fold_junction(c, true),
        NodeKind::Or(c) => fold_junction(c, false),
        NodeKind::Not(c) => match c.kind {
            NodeKind::True => (Some(false), true),
            NodeKind::False => (Some(true), true),
            _ => (None, false),
        },
        NodeKind::Test(t) if never_holds(&t.pred) => (Some(false), false),
        NodeKind::Test(Test {
            pred: Pred::Shape(s),
            ..
        }) if *s == Shapes::ALL => (Some(true), false),
        _ => (None, false),
    };
    match constant {
        Some(value) => {
            node.kind = if value {
                NodeKind::True
            } else {
                NodeKind::False
            };
            removed
        }
        None => unwrap_single(node) | removed,
    }
}

/// [`fold_children`], and whether a child was removed.
fn fold_junction(children: &mut Vec<Node>, and: bool) -> (Option<bool>, bool) {
    let len = children.len();
    let constant = fold_children(children, and);
    (
        constant,
        len > 0 && (constant.is_some() || children.len() < len),
    )
}

/// The constant an `and` (`and` true) or `or` of `children` folds to, if any; otherwise the
/// neutral constants are removed from `children`.
fn fold_children(children: &mut Vec<Node>, and: bool) -> Option<bool> {
    // `false` absorbs an `and` and is neutral in an `or`; `true` dually.
    let (absorbing, neutral) = (!and, and);
    let is = |n: &Node, value: bool| match n.kind {
        NodeKind::True => value,
        NodeKind::False => !value,
        _ => false,
    };
    if children.iter().any(|c| is(c, absorbing)) {
        return Some(absorbing);
    }
    children.retain(|c| !is(c, neutral));
    children.is_empty().then_some(neutral)
}

fn never_holds(pred: &Pred) -> bool {
    match pred {
        Pred::Shape(s) => s.0 == 0,
        Pred::HasType(t) => t.0 == 0,
        Pred::Str { values, .. } => values.is_empty(),
        Pred::Num { ranges, .. } => ranges.iter().all(Interval::is_empty),
        Pred::Dec(r) => r.is_empty(),
        Pred::NumText(values) => values.is_empty(),
        _ => false,
    }
}

/// Removes structurally equal children of `and`/`or` (the first one stays).
pub fn dedup(mut node: Node) -> Node {
    in_place(&mut node, &dedup_node);
    node
}

/// Below this many children [`dedup_node`] compares each child with the kept ones directly
/// (no hashing, no allocation: what most policies' nodes need); from it on, only with the kept
/// children of the same [`structure_hash`], so a wide node costs time linear in its children.
const DEDUP_BY_HASH_FROM: usize = 16;

/// [`dedup`] at one node. A child is dropped when it is the same ([`Node::same`]) as a child
/// kept before it; with [`DEDUP_BY_HASH_FROM`] children or more it is compared only with the
/// kept children of the same [`structure_hash`], so a wide `and`/`or` costs time linear in its
/// children, not quadratic. Returns whether it removed a node.
fn dedup_node(node: &mut Node) -> bool {
    if let NodeKind::And(c) | NodeKind::Or(c) = &mut node.kind {
        let len = c.len();
        let mut by_hash: Option<HashMap<u64, Vec<usize>>> =
            (c.len() >= DEDUP_BY_HASH_FROM).then(HashMap::new);
        let mut kept = 0;
        for i in 0..c.len() {
            let (earlier, rest) = c.split_at_mut(i);
            let Some(child) = rest.first_mut() else {
                break;
            };
            let seen = match &mut by_hash {
                None => earlier.iter().take(kept).any(|o| o.same(child)),
                Some(by_hash) => {
                    let positions = by_hash.entry(structure_hash(child)).or_default();
                    let seen = positions
                        .iter()
                        .any(|&k| earlier.get(k).is_some_and(|o| o.same(child)));
                    if !seen {
                        positions.push(kept);
                    }
                    seen
                }
            };
            if !seen {
                if kept < i
                    && let Some(slot) = earlier.get_mut(kept)
                {
                    std::mem::swap(slot, child);
                }
                kept += 1;
            }
        }
        c.truncate(kept);
        let removed = kept < len;
        return unwrap_single(node) | removed;
    }
    false
}

/// A hash of a node's structure that agrees with [`Node::same`]: nodes that are the same hash
/// the same (origins are ignored; `-0` and `0` bounds hash alike, as they compare equal).
fn structure_hash(node: &Node) -> u64 {
    let mut hasher = DefaultHasher::new();
    hash_node(node, &mut hasher);
    hasher.finish()
}

fn hash_node(node: &Node, h: &mut DefaultHasher) {
    std::mem::discriminant(&node.kind).hash(h);
    match &node.kind {
        NodeKind::True | NodeKind::False => {}
        NodeKind::And(c) | NodeKind::Or(c) => {
            c.len().hash(h);
            c.iter().for_each(|c| hash_node(c, h));
        }
        NodeKind::Not(c) => hash_node(c, h),
        NodeKind::Test(t) => {
            t.key.hash(h);
            hash_pred(&t.pred, h);
        }
    }
}

fn hash_pred(pred: &Pred, h: &mut DefaultHasher) {
    std::mem::discriminant(pred).hash(h);
    let bound = |x: f64| if x == 0.0 { 0 } else { x.to_bits() };
    match pred {
        Pred::Shape(s) => s.hash(h),
        Pred::HasType(l) => l.hash(h),
        Pred::Str { op, case, values } => (op, case, values).hash(h),
        Pred::Wildcard(w) => w.source().hash(h),
        Pred::Segment(p) => p.source().hash(h),
        Pred::Cidr(c) => c.hash(h),
        Pred::Num { source, ranges } => {
            source.hash(h);
            for r in ranges {
                (bound(r.lo), bound(r.hi), r.lo_inclusive, r.hi_inclusive).hash(h);
            }
        }
        Pred::Dec(ranges) => ranges.len().hash(h),
        Pred::Bool(b) => b.hash(h),
        Pred::NumText(texts) => texts.hash(h),
        Pred::Address(block) => block.hash(h),
        Pred::IgnoreCase(pattern) => pattern.hash(h),
        Pred::Except(tests) => {
            tests.len().hash(h);
            tests.iter().for_each(|p| hash_pred(p, h));
        }
    }
}

/// Merges the alternatives of one key inside an `or`: string tests of the same kind and case
/// become one test over the union of their values, numeric tests of the same source one test
/// over the union of their intervals, shape tests one test over the union of shapes. (Inside an
/// `and` nothing is merged: "some leaf in A and some leaf in B" is not "some leaf in A ∩ B".)
pub fn merge_alternatives(mut node: Node) -> Node {
    in_place(&mut node, &merge_node);
    node
}

/// [`merge_alternatives`] at one node; returns whether it removed a node.
fn merge_node(node: &mut Node) -> bool {
    let Node { kind, origin } = node;
    if let NodeKind::Or(c) = kind {
        let len = c.len();
        merge_or(c, origin);
        let merged = c.len() < len;
        return unwrap_single(node) | merged;
    }
    false
}

/// Merges tests of one key, in place: each test is merged into the first earlier (kept) test of
/// its key that takes it, and a merged test takes the origin of the `or` it stands for. The kept
/// tests of each key are found by looking at the kept children in turn (below
/// [`DEDUP_BY_HASH_FROM`] children) or through a map, and merged values are put in order once at
/// the end, so a wide `or` costs time linear in its children (times the log of a merged list's
/// length).
fn merge_or(children: &mut Vec<Node>, or_origin: &Arc<str>) {
    let mut kept = 0;
    let mut by_key: Option<HashMap<Key, Vec<usize>>> =
        (children.len() >= DEDUP_BY_HASH_FROM).then(HashMap::new);
    // The kept children that took a merge: the first 64 as bits (no allocation, what most `or`s
    // need), the others listed.
    let mut merged_low: u64 = 0;
    let mut merged_into: Vec<usize> = Vec::new();
    for i in 0..children.len() {
        let (earlier, rest) = children.split_at_mut(i);
        let Some(child) = rest.first_mut() else {
            break;
        };
        let mut merged = false;
        if let NodeKind::Test(t) = &child.kind {
            // The kept tests of this key, in the order they were kept: from the map, or every
            // kept child (those of other keys are passed over below).
            let mapped = by_key
                .as_ref()
                .map(|m| m.get(&t.key).map_or(&[][..], Vec::as_slice));
            for j in 0..mapped.map_or(kept, <[usize]>::len) {
                let Some(k) = mapped.map_or(Some(j), |positions| positions.get(j).copied()) else {
                    break;
                };
                let Some(o) = earlier.get_mut(k) else {
                    continue;
                };
                let done = match &mut o.kind {
                    NodeKind::Test(into) if into.key == t.key => {
                        merge_pred(&mut into.pred, &t.pred)
                    }
                    _ => false,
                };
                if done {
                    if o.origin != *or_origin {
                        o.origin = or_origin.clone();
                    }
                    match u32::try_from(k).ok().and_then(|k| 1u64.checked_shl(k)) {
                        Some(bit) => merged_low |= bit,
                        None => merged_into.push(k),
                    }
                    merged = true;
                    break;
                }
            }
        }
        if !merged {
            if let (NodeKind::Test(t), Some(by_key)) = (&child.kind, &mut by_key) {
                by_key.entry(t.key.clone()).or_default().push(kept);
            }
            if kept < i
                && let Some(slot) = earlier.get_mut(kept)
            {
                std::mem::swap(slot, child);
            }
            kept += 1;
        }
    }
    children.truncate(kept);
    merged_into.sort_unstable();
    merged_into.dedup();
    // The marked children in order: the set bits, lowest first, then the listed ones (each bit
    // found directly, not by testing all 64: this runs for every `or` of every round).
    let low = std::iter::successors((merged_low != 0).then_some(merged_low), |&bits| {
        let rest = bits & (bits - 1);
        (rest != 0).then_some(rest)
    })
    .map(|bits| bits.trailing_zeros() as usize);
    for k in low.chain(merged_into) {
        if let Some(Node {
            kind: NodeKind::Test(t),
            ..
        }) = children.get_mut(k)
        {
            tidy_merged(&mut t.pred);
        }
    }
}

/// Whether [`merge_pred`] merges `from` into `into` (the kinds it merges, alike).
fn mergeable(into: &Pred, from: &Pred) -> bool {
    match (into, from) {
        (
            Pred::Str { op, case, .. },
            Pred::Str {
                op: op2,
                case: case2,
                ..
            },
        ) => op == op2 && case == case2,
        (Pred::Num { source, .. }, Pred::Num { source: s2, .. }) => source == s2,
        (Pred::Dec(_), Pred::Dec(_))
        | (Pred::Shape(_), Pred::Shape(_))
        | (Pred::HasType(_), Pred::HasType(_)) => true,
        _ => false,
    }
}

/// Merges `from` into `into` when both are the same mergeable kind; returns whether it did. The
/// merged values are put in order by [`tidy_merged`] once every merge of the `or` is done.
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

/// A test that took merges: string values sorted and deduplicated, empty intervals dropped.
fn tidy_merged(pred: &mut Pred) {
    match pred {
        Pred::Str { values, .. } => {
            values.sort();
            values.dedup();
        }
        Pred::Num { ranges, .. } => ranges.retain(|r| !r.is_empty()),
        _ => {}
    }
}

/// Orders the children of every `and`/`or` by estimated cost, cheapest first (stable).
pub fn order(mut node: Node) -> Node {
    in_place(&mut node, &order_node);
    node
}

/// [`order`] at one node (which removes none).
fn order_node(node: &mut Node) -> bool {
    if let NodeKind::And(c) | NodeKind::Or(c) = &mut node.kind {
        sort_by_cost(c);
    }
    false
}

/// Below this many children [`sort_by_cost`] computes each child's [`cost`] once, into an array
/// on the stack, and sorts the children by it there; a wider list is sorted by `sort_by_key`.
const SORT_BY_COSTS_BELOW: usize = 32;

/// `children.sort_by_key(cost)`: the same stable order by [`cost`]. A narrow list (most are:
/// a policy's `and`/`or`s have a few children) has each child's cost computed once, not twice
/// per comparison as `sort_by_key` does (a compound child's cost walks its subtree), and is
/// sorted by insertion, moving a child and its cost together: a list already in order (the
/// common case) costs one comparison per child.
fn sort_by_cost(children: &mut [Node]) {
    if children.len() >= SORT_BY_COSTS_BELOW {
        children.sort_by_key(cost);
        return;
    }
    let mut costs = [0u32; SORT_BY_COSTS_BELOW];
    for (slot, child) in costs.iter_mut().zip(children.iter()) {
        // A test's cost is looked up here, not by a call.
        *slot = match &child.kind {
            NodeKind::Test(t) => test_cost(t),
            _ => cost(child),
        };
    }
    for i in 1..children.len() {
        // Moves child `i` down past the earlier children that cost more (stable: not past one
        // that costs as much).
        let mut j = i;
        while let Some(before) = j.checked_sub(1)
            && let (Some(&a), Some(&b)) = (costs.get(before), costs.get(j))
            && a > b
        {
            costs.swap(before, j);
            children.swap(before, j);
            j = before;
        }
    }
}

/// A rough cost: shape checks are cheapest, then equality, then scans, then patterns;
/// compound nodes cost the sum of their children.
pub fn cost(node: &Node) -> u32 {
    match &node.kind {
        NodeKind::True | NodeKind::False => 0,
        NodeKind::And(c) | NodeKind::Or(c) => c.iter().map(cost).sum::<u32>().saturating_add(1),
        NodeKind::Not(c) => cost(c).saturating_add(1),
        NodeKind::Test(t) => test_cost(t),
    }
}

/// [`cost`] of a test.
#[inline]
fn test_cost(t: &Test) -> u32 {
    match &t.pred {
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
        Pred::NumText(_) => 4,
        Pred::Segment(_) | Pred::Cidr(_) | Pred::Address(_) | Pred::IgnoreCase(_) => 8,
        Pred::Wildcard(_) => 10,
        Pred::Except(preds) => preds.len() as u32 * 8 + 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Case, NumSource};
    use filtervm_vm::key::Key;

    /// Numbers below `n`, drawn by xorshift from `seed`: the random trees' choices.
    fn draws(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

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

    /// Children `i % distinct` over `n` children: the expected result keeps the first
    /// `distinct` in order, whether the node is below [`DEDUP_BY_HASH_FROM`] children (compared
    /// directly) or not (compared by hash).
    #[test]
    fn dedup_and_merge_agree_below_and_above_the_hashing_width() {
        for n in [
            3,
            DEDUP_BY_HASH_FROM - 1,
            DEDUP_BY_HASH_FROM,
            3 * DEDUP_BY_HASH_FROM,
        ] {
            for distinct in [1, 2, 5] {
                let children = |k: &dyn Fn(usize) -> String| {
                    (0..n)
                        .map(|i| eq(&k(i % distinct), &format!("v{}", i % distinct)))
                        .collect::<Vec<_>>()
                };
                let deduped = dedup(Node::and(children(&|i| format!("k{i}")), ""));
                let expect: Vec<String> = (0..distinct.min(n))
                    .map(|i| text(&eq(&format!("k{i}"), &format!("v{i}"))))
                    .collect();
                let got: Vec<String> = match &deduped.kind {
                    NodeKind::And(c) => c.iter().map(text).collect(),
                    _ => vec![text(&deduped)],
                };
                assert_eq!(got, expect, "dedup of {n} children, {distinct} distinct");
                // One key, `distinct` values: an `or` merges them into one test of the values
                // in order.
                let merged = merge_alternatives(Node::or(children(&|_| "k".into()), ""));
                let values: Vec<String> =
                    (0..distinct.min(n)).map(|i| format!("\"v{i}\"")).collect();
                assert_eq!(
                    text(&merged),
                    format!("test header \"k\" str-eq [{}]", values.join(", ")),
                    "merge of {n} children, {distinct} distinct"
                );
            }
        }
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

    /// The copy [`optimize_copy`] makes is flattened as it is made; the tree it gives, origins
    /// included, is the one [`optimize`] gives of the same tree: for one-child `and`/`or` of
    /// every kind of child (a test, a junction of the same kind, of the other kind, an empty
    /// one), under negations, and for trees the first round leaves alone.
    #[test]
    fn optimize_copy_gives_what_optimize_gives() {
        let t = |k: &str, v: &str, at: &str| {
            let mut n = eq(k, v);
            n.origin = at.into();
            n
        };
        let one = |and: bool, child: Node, at: &str| {
            if and {
                Node::and(vec![child], at)
            } else {
                Node::or(vec![child], at)
            }
        };
        let mut trees = Vec::new();
        for and in [true, false] {
            for inner_and in [true, false] {
                let inner = |at: &str| {
                    if inner_and {
                        Node::and(vec![t("a", "1", "/a"), t("b", "2", "/b")], at)
                    } else {
                        Node::or(vec![t("a", "1", "/a"), t("a", "2", "/a2")], at)
                    }
                };
                trees.push(one(and, inner("/inner"), "/outer"));
                trees.push(one(and, one(!and, inner("/in"), "/mid"), "/outer"));
                trees.push(Node::negation(one(and, inner("/inner"), "/outer")));
                trees.push(Node::and(
                    vec![one(and, inner("/x"), "/y"), t("c", "3", "/c")],
                    "/root",
                ));
            }
            trees.push(one(and, t("a", "1", "/a"), "/outer"));
            trees.push(one(and, Node::and(vec![], "/empty"), "/outer"));
            trees.push(one(and, Node::or(vec![], "/empty"), "/outer"));
            trees.push(Node::negation(one(
                and,
                Node::negation(one(!and, t("a", "1", "/a"), "/n")),
                "/outer",
            )));
        }
        trees.push(Node::test(key("n"), Pred::Shape(Shapes::ABSENT), "/shape"));
        // `not` of a test under an origin of its own (the pushed `not` takes the test's), alone,
        // in a junction and under another `not`.
        let not_at = |at: &str| Node::new(NodeKind::Not(Box::new(t("a", "1", "/a"))), at);
        trees.push(not_at("/not"));
        trees.push(not_at("/a"));
        trees.push(Node::and(vec![not_at("/not"), t("b", "2", "/b")], "/and"));
        trees.push(Node::negation(not_at("/not")));
        trees.push(Node::and(
            vec![t("a", "1", "/a"), t("b", "2", "/b")],
            "/flat",
        ));
        for tree in trees {
            let want = reference(tree.clone()).to_string();
            assert_eq!(optimize_copy(&tree).to_string(), want, "{tree}");
            assert_eq!(optimize(tree.clone()).to_string(), want, "{tree}");
        }
    }

    /// The optimizer as its passes define it: [`push_negations`], then the rounds from a first
    /// one that runs every pass, then the ordering. [`optimize`] and [`optimize_copy`] flatten
    /// as they push negations, and skip the first round's flatten.
    fn reference(node: Node) -> Node {
        let mut node = push_negations(node);
        normalize(&mut node, false);
        node
    }

    /// A round says it removed a node exactly when it changed the tree's size (the rule the
    /// rounds stop by), on random trees of every node kind: constants, empty and one-child
    /// `and`/`or`, double negations, tests that never or always hold, repeated and mergeable
    /// tests.
    #[test]
    fn a_round_says_it_removed_a_node_exactly_when_the_size_changed() {
        let mut next = draws(0x2545_f491_4f6c_dd1du64);
        fn tree(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> Node {
            let leaf = depth == 0 || next(3) == 0;
            if leaf {
                return match next(8) {
                    0 => Node::constant(next(2) == 0, "/c"),
                    1 => Node::test(key("s"), Pred::Shape(Shapes::ALL), "/all"),
                    2 => Node::test(
                        key("s"),
                        Pred::Shape(if next(2) == 0 {
                            Shapes::ABSENT
                        } else {
                            Shapes::NULL
                        }),
                        "/shape",
                    ),
                    3 => Node::test(
                        key("n"),
                        Pred::Str {
                            op: StrOp::Eq,
                            case: Case::Sensitive,
                            values: vec![],
                        },
                        "/never",
                    ),
                    _ => eq(
                        ["a", "b"][next(2) as usize],
                        ["1", "2", "3"][next(3) as usize],
                    ),
                };
            }
            match next(4) {
                0 => Node::negation(tree(next, depth - 1)),
                k => {
                    let children = (0..next(4)).map(|_| tree(next, depth - 1)).collect();
                    if k == 1 {
                        Node::and(children, "/and")
                    } else {
                        Node::or(children, "/or")
                    }
                }
            }
        }
        let mut changed = 0;
        for _ in 0..3000 {
            let mut node = tree(&mut next, 5);
            // The optimizer's walks that push negations and flatten at once give what the
            // passes do one after the other, origins included.
            let want = reference(node.clone());
            assert_eq!(
                format!("{:?}", optimize_copy(&node)),
                format!("{want:?}"),
                "{node}"
            );
            assert_eq!(
                format!("{:?}", optimize(node.clone())),
                format!("{want:?}"),
                "{node}"
            );
            for _ in 0..8 {
                let before = node.size();
                let removed = round(&mut node, false, EVERY);
                assert_eq!(removed, node.size() != before, "{node}");
                if !removed {
                    break;
                }
                changed += 1;
            }
        }
        assert!(
            changed > 1000,
            "the trees exercise the passes ({changed} rounds changed)"
        );
    }

    /// A tree [`settled`] says no pass changes is left as it is by a round (origins included),
    /// and many of the random trees are settled after a round or two; a round that leaves out
    /// the passes [`pending`] does not name gives what the full round gives; the merge kinds
    /// [`mergeable`] names are the ones [`merge_pred`] merges.
    #[test]
    fn a_settled_tree_is_left_as_it_is_by_a_round() {
        let mut next = draws(0x9e37_79b9_7f4a_7c15u64);
        let preds = || {
            vec![
                Pred::Shape(Shapes::ABSENT),
                Pred::HasType(filtervm_vm::value::LeafTypes(1)),
                Pred::Bool(true),
                Pred::Str {
                    op: StrOp::Eq,
                    case: Case::Sensitive,
                    values: vec!["x".into()],
                },
                Pred::Str {
                    op: StrOp::Prefix,
                    case: Case::Sensitive,
                    values: vec!["y".into()],
                },
                Pred::Str {
                    op: StrOp::Eq,
                    case: Case::Fold,
                    values: vec!["z".into()],
                },
                Pred::Num {
                    source: NumSource::NumberLeaf,
                    ranges: vec![Interval::point(1.0)],
                },
                Pred::Num {
                    source: NumSource::Text,
                    ranges: vec![Interval::point(2.0)],
                },
                Pred::NumText(vec!["3".into()]),
                // Distinct from the ones above, and mergeable with them.
                Pred::Shape(Shapes::NULL),
                Pred::Str {
                    op: StrOp::Eq,
                    case: Case::Sensitive,
                    values: vec!["w".into()],
                },
                Pred::Num {
                    source: NumSource::NumberLeaf,
                    ranges: vec![Interval::point(5.0)],
                },
            ]
        };
        for a in preds() {
            for b in preds() {
                assert_eq!(
                    mergeable(&a, &b),
                    merge_pred(&mut a.clone(), &b),
                    "{a} / {b}"
                );
            }
        }
        // `plain` trees have no constants, no tests that always hold and no junction of fewer
        // than two children, so that many are settled but for one condition (a mergeable pair,
        // a repeated child).
        fn tree(next: &mut dyn FnMut(u64) -> u64, preds: &[Pred], depth: u32, plain: bool) -> Node {
            if depth == 0 || next(3) == 0 {
                return match next(6) + 2 * u64::from(plain) {
                    0 => Node::constant(next(2) == 0, "/c"),
                    1 => Node::test(key("s"), Pred::Shape(Shapes::ALL), "/all"),
                    _ => {
                        let pred = preds.get(next(preds.len() as u64) as usize).cloned();
                        let k = ["a", "b"][next(2) as usize];
                        Node::test(key(k), pred.unwrap_or(Pred::Bool(false)), "/t")
                    }
                };
            }
            match next(4) {
                0 => Node::negation(tree(next, preds, depth - 1, plain)),
                k => {
                    let width = if plain { 2 + next(3) } else { next(5) };
                    let children = (0..width)
                        .map(|_| tree(next, preds, depth - 1, plain))
                        .collect();
                    let at = ["/j", "/k"][next(2) as usize];
                    if k == 1 {
                        Node::and(children, at)
                    } else {
                        Node::or(children, at)
                    }
                }
            }
        }
        let preds = preds();
        let mut settled_trees = 0;
        let mut partial_rounds = 0;
        for i in 0..10000 {
            let mut node = tree(&mut next, &preds, 4, i % 2 == 0);
            if i % 4 == 0 {
                // No nested junction of the same kind either: a tree that only a pair condition
                // keeps from being settled, whose round `pending` runs in part.
                node = flatten(node);
            }
            for _ in 0..8 {
                let before = node.to_string();
                let was_settled = settled(&node);
                // The passes `pending` leaves out would change nothing: the round without them
                // gives what the full round gives, origins included.
                let work = pending(&node);
                let mut partial = node.clone();
                let partial_removed = round(&mut partial, false, work);
                let removed = round(&mut node, false, EVERY);
                assert_eq!(format!("{partial:?}"), format!("{node:?}"), "{before}");
                assert_eq!(partial_removed, removed, "{before}");
                if work != 0 && work != EVERY {
                    partial_rounds += 1;
                }
                if was_settled {
                    assert_eq!(node.to_string(), before);
                    assert!(!removed);
                    settled_trees += 1;
                    break;
                }
                if !removed {
                    break;
                }
            }
        }
        assert!(
            settled_trees > 4000,
            "{settled_trees} trees were found settled"
        );
        assert!(
            partial_rounds > 500,
            "{partial_rounds} rounds left a pass out"
        );
    }

    /// [`sort_by_cost`] gives the order `sort_by_key(cost)` gives, ties kept in order (the
    /// origins tell tied children apart), below and above [`SORT_BY_COSTS_BELOW`] children.
    #[test]
    fn sort_by_cost_is_the_stable_sort_by_cost() {
        let mut next = draws(0x1234_5678_9abc_def1u64);
        for _ in 0..2000 {
            let len = next(2 * SORT_BY_COSTS_BELOW as u64) as usize;
            let children: Vec<Node> = (0..len)
                .map(|i| {
                    let at = format!("/{i}");
                    match next(4) {
                        0 => Node::test(key("s"), Pred::Shape(Shapes::ABSENT), at.as_str()),
                        1 => Node::negation(eq("a", "1")),
                        2 => Node::and(vec![eq("a", "1"), eq("b", "2")], at.as_str()),
                        _ => {
                            let mut n = eq("a", "1");
                            n.origin = at.into();
                            n
                        }
                    }
                })
                .collect();
            let mut want = children.clone();
            want.sort_by_key(cost);
            let mut got = children;
            sort_by_cost(&mut got);
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
        }
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

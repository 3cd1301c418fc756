//! Lowering a validated SNS policy to IR.
//!
//! Every SNS quirk becomes explicit here:
//!
//! - keys: attribute scope reads [`Key::AttributeTyped`] (rules 5-11); body scope reads
//!   [`Key::BodyPath`] of the flattened path (rule 16), or [`Key::BodyPathEach`] for a path read by
//!   a negative matcher or tested in more than one leaf list, so that arrays of objects above it are
//!   judged per element (rule 18, D-3; see `filtervm_vm::bind` for the rows);
//! - every matcher but `exists: false` needs the key present (rule 4): the "some leaf satisfies"
//!   predicates are false on an absent key by themselves, and `anything-but` tests presence;
//! - numbers: bare numbers, `numeric` and numeric `anything-but` read number leaves only
//!   (rules 10, 23, 29: `Pred::Num` with `NumSource::NumberLeaf`), strings read string leaves only;
//! - `anything-but` passes a present key none of whose leaves is excluded (rule 28 DECISION, D-1);
//! - `exists: false` in attribute scope also needs some (non-Binary) attribute (rule 12);
//! - body scope: nothing but the empty policy matches a body that is not a JSON object (rule 14,
//!   D-2), through [`Key::BodyIsObject`].

use super::Scope;
use super::limits::{FLAT_LISTS, join, leaf_lists};
use super::parse::{
    Alternatives, Bound, Exclusion, Matcher, Member, Object, element_pointer, list_pointer,
};
use crate::ir::{Case, IntoOrigin, Node, NumSource, Pred, StrOp};
use filtervm_vm::fold::fold;
use filtervm_vm::key::Key;
use filtervm_vm::program::Interval;
use filtervm_vm::value::{LeafTypes, Shapes};
use std::cell::Cell;
use std::sync::Arc;

struct Lowering {
    scope: Scope,
    /// Body paths that must be judged per element (read as [`Key::BodyPathEach`]), each once.
    /// A validated policy names at most five distinct leaf paths (rule 42 DECISION), so this is
    /// searched in turn: no hashing, one allocation at most.
    each: Vec<String>,
    /// Whether a leaf list of one alternative lowers to that alternative's node alone, rather
    /// than to an `or` of it ([`lower_to_optimize`]).
    unwrap_singles: bool,
    /// The buffer the pointers of the elements of lists of two or more are written in
    /// ([`Lowering::element`]); allocated when the first is.
    buffer: Cell<String>,
}

/// Lowers a validated policy for `scope`.
pub fn lower_policy(scope: Scope, root: &Object) -> Node {
    lower_owned(scope, root.clone())
}

/// [`lower_policy`] taking the policy: its shared names, pointers and strings move into the IR
/// rather than being counted up and then down again, and nothing is left to drop (what the
/// compile path, which has no further use for the policy, does).
pub(crate) fn lower_owned(scope: Scope, root: Object) -> Node {
    lower_with(scope, root, false)
}

/// [`lower_owned`] for a tree given straight to [`crate::opt::optimize`]: a leaf list of one
/// alternative lowers to that alternative's node, not to an `or` of it, so its list is neither
/// made nor freed. The optimized tree is the same: the optimizer's first step (pushing negations
/// in place) flattens each `and`/`or` once its children are, and so replaces an `or` of one
/// child with that child (its own origin) before anything else reads it; the child, an `or`-free
/// test or `and`, is walked in the same place either way. The tree a filter shows as lowered is
/// [`lower_owned`]'s.
pub(crate) fn lower_to_optimize(scope: Scope, root: Object) -> Node {
    lower_with(scope, root, true)
}

/// [`lower_owned`] (`unwrap_singles` false) or [`lower_to_optimize`] (true).
fn lower_with(scope: Scope, root: Object, unwrap_singles: bool) -> Node {
    if root.members.is_empty() {
        // Rule 2, D-2: the empty policy matches every message, in both scopes.
        return Node::constant(true, "");
    }
    let l = Lowering {
        scope,
        // Attribute scope has no arrays of objects to judge per element.
        each: match scope {
            Scope::MessageBody => per_element_paths(&root),
            Scope::MessageAttributes => Vec::new(),
        },
        unwrap_singles,
        buffer: Cell::new(String::new()),
    };
    // Rule 14: the body must be a JSON object.
    let is_object = || Node::test(Key::BodyIsObject, Pred::Shape(Shapes::PRESENT), "");
    match scope {
        Scope::MessageAttributes => l.object(root, None, "".into_origin(), false),
        // For the optimizer, the test stands beside the policy's members in one `and`, as
        // flattening leaves `and(test, and(members))` (the outer origin, the test, then the
        // members in order; a member that is itself an `and` is spliced by the optimizer's
        // first walk either way), so that the optimizer has no list to splice.
        Scope::MessageBody if unwrap_singles => {
            Node::and(l.members(root, None, Some(is_object()), false), "")
        }
        Scope::MessageBody => Node::and(
            vec![is_object(), l.object(root, None, "".into_origin(), false)],
            "",
        ),
    }
}

/// Whether a matcher is negative: it can hold because of leaves that are *not* there.
fn negative(m: &Matcher) -> bool {
    matches!(m, Matcher::Exists(false) | Matcher::AnythingBut(_))
}

/// The paths read by a negative matcher or by more than one leaf list (D-3, D-8): for them "some
/// element satisfies" is not "the union of the elements satisfies". Each path once; the leaf
/// lists' paths are compared in turn (a validated policy has at most five distinct ones, rule 42
/// DECISION).
fn per_element_paths(root: &Object) -> Vec<String> {
    let mut each: Vec<String> = Vec::new();
    // A flat policy's paths are its member names: one walk compares each with the names before
    // it (borrowed, on the stack: no list allocated) and looks at its matchers.
    let mut names = [""; FLAT_LISTS];
    if flat_paths(root, &mut names, &mut 0, &mut each) {
        return each;
    }
    each.clear();
    let mut lists = Vec::new();
    leaf_lists(root, None, &mut lists);
    let mut seen: Vec<&str> = Vec::new();
    for (path, _) in &lists {
        if seen.contains(&&**path) {
            add_path(&mut each, path);
        } else {
            seen.push(path);
        }
    }
    negative_paths(root, None, &mut each);
    each
}

/// [`per_element_paths`] of a policy without nested objects, whose paths are its leaf lists'
/// names: each name repeated or read by a negative matcher is added to `each` (once), the
/// names seen so far held in `names` (`n` of them). `false` (`each` then holds some of the
/// paths) when the policy nests objects or has more than [`FLAT_LISTS`] leaf lists.
fn flat_paths<'a>(
    object: &'a Object,
    names: &mut [&'a str; FLAT_LISTS],
    n: &mut usize,
    each: &mut Vec<String>,
) -> bool {
    object.members.iter().all(|member| match member {
        Member::Leaf {
            name, alternatives, ..
        } => {
            let repeated = names.get(..*n).unwrap_or_default().contains(&&**name);
            if repeated || alternatives.matchers().iter().any(negative) {
                add_path(each, name);
            }
            match names.get_mut(*n) {
                Some(place) => {
                    *place = name;
                    *n += 1;
                    true
                }
                None => false,
            }
        }
        Member::Nested { .. } => false,
        Member::Or { branches, .. } => branches.iter().all(|(b, _)| flat_paths(b, names, n, each)),
    })
}

/// Adds `path` to `paths` unless it is there.
fn add_path(paths: &mut Vec<String>, path: &str) {
    if !paths.iter().any(|p| p == path) {
        paths.push(path.to_owned());
    }
}

fn negative_paths(object: &Object, prefix: Option<&str>, out: &mut Vec<String>) {
    for member in &object.members {
        match member {
            Member::Leaf {
                name, alternatives, ..
            } => {
                if alternatives.matchers().iter().any(negative) {
                    add_path(out, &join(prefix, name));
                }
            }
            Member::Nested { name, object, .. } => {
                negative_paths(object, Some(&join(prefix, name)), out);
            }
            Member::Or { branches, .. } => {
                for (b, _) in branches {
                    negative_paths(b, prefix, out);
                }
            }
        }
    }
}

/// The string operator of every alternative of a list of two or more, if they are all exact
/// strings, all prefixes or all suffixes (case-sensitive).
fn one_string_op(alternatives: &[Matcher]) -> Option<StrOp> {
    let op = |m: &Matcher| match m {
        Matcher::Exact(_) => Some(StrOp::Eq),
        Matcher::Prefix(_) => Some(StrOp::Prefix),
        Matcher::Suffix(_) => Some(StrOp::Suffix),
        _ => None,
    };
    let (first, rest) = alternatives.split_first()?;
    let first = op(first)?;
    (!rest.is_empty() && rest.iter().all(|m| op(m) == Some(first))).then_some(first)
}

/// A leaf list of two alternatives or more, all case-sensitive strings of `op`
/// ([`one_string_op`]), as the optimizer leaves its `or` (at `pointer`) in an `and`: one test of
/// its values in order without repeats, which is what its dedup (a repeated alternative dropped,
/// the first kept) and merge (the other tests' values put into the first, which takes the `or`'s
/// origin, then sorted and deduplicated) leave, the `or` of one test then replaced by the test.
/// When every value is the same, dedup leaves one test, nothing is merged, and it keeps the first
/// alternative's pointer.
fn merged_strings(key: Key, op: StrOp, alternatives: Alternatives, pointer: Arc<str>) -> Node {
    let mut values = Vec::with_capacity(alternatives.matchers().len());
    let mut take = |m: Matcher| {
        if let Matcher::Exact(s) | Matcher::Prefix(s) | Matcher::Suffix(s) = m {
            values.push(s);
        }
    };
    // The first alternative's pointer, which a list of one keeps (a longer one's is made when
    // it is the test's).
    let mut first_at = None;
    match alternatives {
        Alternatives::One(one, at) => {
            take(one);
            first_at = Some(at);
        }
        Alternatives::Two([a, b]) => {
            take(a);
            take(b);
        }
        Alternatives::Many(many) => many.into_iter().for_each(take),
    }
    values.sort();
    values.dedup();
    let at = match first_at {
        _ if values.len() != 1 => pointer,
        Some(first) => first,
        None => element_pointer(&mut String::new(), &pointer, 0),
    };
    let pred = Pred::Str {
        op,
        case: Case::Sensitive,
        values,
    };
    Node::test(key, pred, at)
}

/// A case-sensitive test of one string the validated policy held (moved, not copied), its list
/// of values made with room for `room` (see [`Rooms`]).
fn one_str_test(key: &Key, op: StrOp, value: Arc<str>, at: &Arc<str>, room: usize) -> Node {
    let mut values = Vec::with_capacity(room.max(1));
    values.push(value);
    let pred = Pred::Str {
        op,
        case: Case::Sensitive,
        values,
    };
    Node::test(key.clone(), pred, at)
}

fn str_test(key: &Key, op: StrOp, case: Case, values: &[String], at: &Arc<str>) -> Node {
    let mut values: Vec<Arc<str>> = values
        .iter()
        .map(|v| match case {
            Case::Fold => fold(v).into(),
            Case::Sensitive => v.as_str().into(),
        })
        .collect();
    values.sort();
    values.dedup();
    Node::test(key.clone(), Pred::Str { op, case, values }, at)
}

/// Number leaves equal to one of `values` (rules 23, 29).
fn num_points(key: &Key, values: &[f64], at: &Arc<str>) -> Node {
    Node::test(
        key.clone(),
        Pred::Num {
            source: NumSource::NumberLeaf,
            ranges: values.iter().map(|&x| Interval::point(x)).collect(),
        },
        at,
    )
}

fn wildcard_test(key: &Key, w: &filtervm_vm::wildcard::Wildcard, at: &Arc<str>) -> Node {
    match w.literal() {
        Some(lit) => str_test(key, StrOp::Eq, Case::Sensitive, &[lit.to_owned()], at),
        None => Node::test(key.clone(), Pred::Wildcard(w.clone()), at),
    }
}

/// For each case-sensitive string matcher of a leaf list (exact, prefix, suffix), the room the
/// list of values of its next test is made with. The optimizer merges the tests of one key in an
/// `or` into the first that takes them, whose values then grow in place: lowered for
/// [`lower_to_optimize`], a list's first test of each kind is made with room for every string of
/// that kind in the list, so that merging does not reallocate it; any other test, and every test
/// of [`lower_owned`]'s tree (kept, not merged), with room for its one.
#[derive(Default)]
struct Rooms([usize; 3]);

impl Rooms {
    /// The rooms of the tests of `alternatives`, counted when `count` (for [`lower_to_optimize`]).
    fn of(alternatives: &[Matcher], count: bool) -> Rooms {
        let mut rooms = Rooms::default();
        if count {
            for m in alternatives {
                if let Some(room) = rooms.slot(m) {
                    *room += 1;
                }
            }
        }
        rooms
    }

    /// The count of `m`'s kind, if it is a case-sensitive string matcher.
    fn slot(&mut self, m: &Matcher) -> Option<&mut usize> {
        let [exact, prefix, suffix] = &mut self.0;
        match m {
            Matcher::Exact(_) => Some(exact),
            Matcher::Prefix(_) => Some(prefix),
            Matcher::Suffix(_) => Some(suffix),
            _ => None,
        }
    }

    /// The room of the next test of `m`'s kind: the count for the first, one for the others.
    fn take(&mut self, m: &Matcher) -> usize {
        self.slot(m).map_or(1, |room| std::mem::replace(room, 1))
    }
}

impl Lowering {
    /// The pointer of element `i` of the list at `list` (see [`element_pointer`]).
    fn element(&self, list: &str, i: usize) -> Arc<str> {
        let mut buffer = self.buffer.take();
        let at = element_pointer(&mut buffer, list, i);
        self.buffer.set(buffer);
        at
    }

    /// The key of member `name` below `prefix`: a member of the root reads its name as the
    /// validated policy holds it (shared, not copied).
    fn key(&self, prefix: Option<&str>, name: Arc<str>) -> Key {
        let path: Arc<str> = match prefix {
            None => name,
            Some(_) => join(prefix, &name).into(),
        };
        match self.scope {
            Scope::MessageAttributes => Key::AttributeTyped(path),
            Scope::MessageBody if self.each.iter().any(|p| **p == *path) => Key::BodyPathEach(path),
            Scope::MessageBody => Key::BodyPath(path),
        }
    }

    /// The IR of `object`; its nodes share the policy's pointers as their origins (`at` and the
    /// members'), so lowering copies none. `in_or`: flattened, an `and` of one child would
    /// leave that child in an `or` (see [`Lowering::members`]).
    fn object(&self, object: Object, prefix: Option<&str>, at: Arc<str>, in_or: bool) -> Node {
        Node::and(self.members(object, prefix, None, in_or), at)
    }

    /// The IR of `object`'s members, in order, after `first` when given (in one list, made
    /// once).
    ///
    /// `in_or` says that the optimizer's flattening, which replaces an `and` of one child with
    /// that child, would leave the child of `object`'s `and` in an `or` (a `$or` branch's, or
    /// a lone nested object's in one): the root's is not (nothing or an `and` holds it). For
    /// [`lower_to_optimize`], a leaf list of strings of one kind whose `or` the optimizer
    /// leaves in an `and` is lowered as that `or` is optimized ([`merged_strings`]); one that
    /// would be spliced into an `or` is not, as the optimizer merges it with its new siblings.
    fn members(
        &self,
        object: Object,
        prefix: Option<&str>,
        first: Option<Node>,
        in_or: bool,
    ) -> Vec<Node> {
        // A lone member is in an `or` when its object's `and` is (`first` is a sibling).
        let in_or = in_or && first.is_none() && object.members.len() == 1;
        let mut members = Vec::with_capacity(object.members.len() + usize::from(first.is_some()));
        members.extend(first);
        members.extend(object.members.into_iter().map(|m| {
            match m {
                Member::Leaf {
                    name,
                    pointer,
                    alternatives,
                } => {
                    let key = self.key(prefix, name);
                    let alternatives = match alternatives {
                        Alternatives::One(m, at) if self.unwrap_singles => {
                            return self.matcher(&key, m, at, &mut Rooms::default());
                        }
                        other => other,
                    };
                    // A list of one alternative keeps no pointer: it is made here.
                    let pointer =
                        pointer.unwrap_or_else(|| list_pointer(None, &alternatives).into_origin());
                    if self.unwrap_singles
                        && !in_or
                        && let Some(op) = one_string_op(alternatives.matchers())
                    {
                        return merged_strings(key, op, alternatives, pointer);
                    }
                    let mut rooms = Rooms::of(alternatives.matchers(), self.unwrap_singles);
                    let rooms = &mut rooms;
                    // The elements' pointers of a longer list are made from the list's.
                    let at = |i| self.element(&pointer, i);
                    let alts = match alternatives {
                        Alternatives::One(m, at) => vec![self.matcher(&key, m, at, rooms)],
                        Alternatives::Two([m0, m1]) => vec![
                            self.matcher(&key, m0, at(0), rooms),
                            self.matcher(&key, m1, at(1), rooms),
                        ],
                        Alternatives::Many(many) => many
                            .into_iter()
                            .enumerate()
                            .map(|(i, m)| self.matcher(&key, m, at(i), rooms))
                            .collect(),
                    };
                    Node::or(alts, pointer)
                }
                Member::Nested {
                    name,
                    pointer,
                    object,
                } => self.object(object, Some(&join(prefix, &name)), pointer, in_or),
                // Rule 34: the branches are ORed; D-8: the whole is ANDed with the siblings.
                Member::Or { pointer, branches } => Node::or(
                    branches
                        .into_iter()
                        .map(|(b, at)| self.object(b, prefix, at, true))
                        .collect(),
                    pointer,
                ),
            }
        }));
        members
    }

    /// The IR of one alternative of the leaf list that reads `key`, at `at`: what the matcher
    /// holds moves into it; a string test's values are made with the room `rooms` gives it.
    fn matcher(&self, key: &Key, m: Matcher, at: Arc<str>, rooms: &mut Rooms) -> Node {
        let at = &at;
        let room = rooms.take(&m);
        let test = |pred: Pred| Node::test(key.clone(), pred, at);
        match m {
            Matcher::Exact(s) => one_str_test(key, StrOp::Eq, s, at, room),
            Matcher::Number(x) => num_points(key, &[x], at),
            Matcher::Bool(b) => test(Pred::Bool(b)),
            Matcher::Null => test(Pred::HasType(LeafTypes::NULL)),
            Matcher::Prefix(s) => one_str_test(key, StrOp::Prefix, s, at, room),
            Matcher::Suffix(s) => one_str_test(key, StrOp::Suffix, s, at, room),
            Matcher::EqualsIgnoreCase(s) => {
                str_test(key, StrOp::Eq, Case::Fold, std::slice::from_ref(&s), at)
            }
            Matcher::Wildcard(w) => wildcard_test(key, &w, at),
            Matcher::Cidr(c) => test(Pred::Cidr(*c)),
            Matcher::Numeric { lo, hi } => test(Pred::Num {
                source: NumSource::NumberLeaf,
                ranges: vec![interval(lo, hi)],
            }),
            Matcher::Exists(true) => test(Pred::Shape(Shapes::PRESENT)),
            Matcher::Exists(false) => match self.scope {
                // Rule 12: a message with no attributes fails even `exists: false`.
                Scope::MessageAttributes => Node::and(
                    vec![
                        test(Pred::Shape(Shapes::ABSENT)),
                        Node::test(Key::AnyAttribute, Pred::Shape(Shapes::PRESENT), at),
                    ],
                    at,
                ),
                Scope::MessageBody => test(Pred::Shape(Shapes::ABSENT)),
            },
            Matcher::AnythingBut(excl) => {
                let excluded = match excl {
                    Exclusion::Strings(v) => str_test(key, StrOp::Eq, Case::Sensitive, &v, at),
                    Exclusion::Numbers(v) => num_points(key, &v, at),
                    Exclusion::Prefixes(v) => str_test(key, StrOp::Prefix, Case::Sensitive, &v, at),
                    Exclusion::Suffixes(v) => str_test(key, StrOp::Suffix, Case::Sensitive, &v, at),
                    Exclusion::EqualsIgnoreCase(v) => str_test(key, StrOp::Eq, Case::Fold, &v, at),
                    Exclusion::Wildcards(v) => {
                        Node::or(v.iter().map(|w| wildcard_test(key, w, at)).collect(), at)
                    }
                };
                // Rules 4, 28, D-1: present, and no leaf excluded.
                Node::and(
                    vec![test(Pred::Shape(Shapes::PRESENT)), Node::negation(excluded)],
                    at,
                )
            }
        }
    }
}

/// The interval of a `numeric` condition's bounds (rule 31; EventBridge's EB-26 alike). Open ends
/// include the infinities, so a body number too large for a binary64 (read as infinity) compares
/// like any other number.
pub(crate) fn interval(lo: Option<Bound>, hi: Option<Bound>) -> Interval {
    let (lo, lo_inclusive) = lo.map_or((f64::NEG_INFINITY, true), |b| (b.value, b.inclusive));
    let (hi, hi_inclusive) = hi.map_or((f64::INFINITY, true), |b| (b.value, b.inclusive));
    Interval {
        lo,
        lo_inclusive,
        hi,
        hi_inclusive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::sns::validate;
    use serde_json::{Value, json};

    fn ir(scope: Scope, policy: &Value) -> String {
        let root = validate(scope, &filtervm_vm::json::Value::from(policy)).unwrap();
        lower_policy(scope, &root)
            .to_string()
            .lines()
            .map(|l| l.split(" ; ").next().unwrap_or("").trim_end().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn per_element_paths_are_negative_or_repeated() {
        let p = json!({"R": {"a": ["1"], "b": [{"exists": false}], "c": [{"anything-but": "x"}]},
            "d": ["1"], "$or": [{"d": ["2"]}, {"e": ["3"]}]});
        let root = validate(Scope::MessageBody, &filtervm_vm::json::Value::from(&p)).unwrap();
        let mut each: Vec<String> = per_element_paths(&root).into_iter().collect();
        each.sort();
        assert_eq!(each, ["R.b", "R.c", "d"]);
        // Flat: repeated across `$or` branches, negative, both, and neither.
        let p = json!({"a": ["1"], "b": [{"exists": false}], "c": [{"anything-but": "x"}, "y"],
            "$or": [{"a": ["2"], "c": ["3"]}, {"e": ["3"], "f": ["4"]}, {"b": ["5"]}]});
        let root = validate(Scope::MessageBody, &filtervm_vm::json::Value::from(&p)).unwrap();
        let mut each = per_element_paths(&root);
        each.sort();
        assert_eq!(each, ["a", "b", "c"]);
        let root = validate(
            Scope::MessageBody,
            &filtervm_vm::json::Value::from(&json!({"a": ["1"], "b": [2]})),
        )
        .unwrap();
        assert!(per_element_paths(&root).is_empty());
    }

    #[test]
    fn golden_attribute_ir() {
        let p = json!({"k": ["a", 1, null, {"anything-but": {"prefix": "x"}}], "m": [{"exists": false}]});
        assert_eq!(
            ir(Scope::MessageAttributes, &p),
            "and
  or
    test attr \"k\" str-eq [\"a\"]
    test attr \"k\" num {1}
    test attr \"k\" has-type null
    and
      test attr \"k\" shape present
      not
        test attr \"k\" str-prefix [\"x\"]
  or
    and
      test attr \"m\" shape absent
      test any-attribute shape present"
        );
    }

    #[test]
    fn golden_body_ir() {
        let p = json!({"a": {"b": [{"equals-ignore-case": "xY"}], "c": [{"exists": false}]}});
        assert_eq!(
            ir(Scope::MessageBody, &p),
            "and
  test body-is-object shape present
  and
    and
      or
        test body \"a.b\" str-eq-fold [\"XY\"]
      or
        test body-each \"a.c\" shape absent"
        );
        assert_eq!(ir(Scope::MessageBody, &json!({})), "true");
    }
}

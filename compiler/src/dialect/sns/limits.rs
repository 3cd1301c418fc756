//! Policy-wide checks, made once the structure is valid and in the order of rule 13: nested
//! objects in attribute scope (rule 13), then the key limit (rule 42), then the combination limit
//! (rule 43, D-7).

use super::Scope;
use super::parse::{Member, Object, list_pointer};
pub use super::shape::Shape;
use crate::error::{ErrorCode, PolicyError};
use std::borrow::Cow;

/// Most distinct leaf keys a policy may name (rule 42).
pub const MAX_KEYS: usize = 5;

/// Most value combinations a policy may have (rule 43).
pub const MAX_COMBINATIONS: u64 = 150;

/// The flattened path of member `name` below `prefix` (rule 16): `None` is the root.
pub fn join(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        None => name.to_owned(),
        Some(p) => format!("{p}.{name}"),
    }
}

/// Rule 13: attribute scope has no nested policies. Reports every nested member (at any `$or`
/// depth); the structure inside it was already checked as if it were body scope.
pub fn check_scope(scope: Scope, object: &Object, errors: &mut Vec<PolicyError>) {
    if scope != Scope::MessageAttributes {
        return;
    }
    for member in &object.members {
        match member {
            Member::Leaf { .. } => {}
            Member::Nested { pointer, .. } => errors.push(PolicyError::new(
                ErrorCode::SnsSyntaxError,
                &**pointer,
                "Filter policy scope MessageAttributes does not support nested filter policy",
            )),
            Member::Or { branches, .. } => {
                for (branch, _) in branches {
                    check_scope(scope, branch, errors);
                }
            }
        }
    }
}

/// Every leaf list of the policy, in policy order: its flattened path (rule 16; a member of the
/// root is its own name, borrowed) and pointer.
pub fn leaf_lists<'a>(
    object: &'a Object,
    prefix: Option<&str>,
    out: &mut Vec<(Cow<'a, str>, &'a str)>,
) {
    for member in &object.members {
        match member {
            Member::Leaf {
                name,
                pointer,
                alternatives,
            } => out.push((
                match prefix {
                    None => Cow::Borrowed(&**name),
                    Some(_) => Cow::Owned(join(prefix, name)),
                },
                list_pointer(pointer.as_deref(), alternatives),
            )),
            Member::Nested { name, object, .. } => {
                leaf_lists(object, Some(&join(prefix, name)), out);
            }
            Member::Or { branches, .. } => {
                for (branch, _) in branches {
                    leaf_lists(branch, prefix, out);
                }
            }
        }
    }
}

/// Most leaf lists [`flat_leaf_names`] holds (repeats counted): more than any policy within the
/// limits of rules 42 and 43 usually has.
pub(super) const FLAT_LISTS: usize = 16;

/// The paths of the leaf lists of a policy without nested objects (each its member's name), in
/// policy order, borrowed: on the stack, so that the checks and lowering of such a policy (every
/// attribute-scope policy, most body-scope ones) allocate nothing for them. `None` when the
/// policy nests objects or has more than [`FLAT_LISTS`] leaf lists: [`leaf_lists`] then lists
/// them.
pub(super) fn flat_leaf_names(object: &Object) -> Option<([&str; FLAT_LISTS], usize)> {
    fn visit<'a>(object: &'a Object, names: &mut [&'a str; FLAT_LISTS], n: &mut usize) -> bool {
        object.members.iter().all(|member| match member {
            Member::Leaf { name, .. } => match names.get_mut(*n) {
                Some(place) => {
                    *place = &**name;
                    *n += 1;
                    true
                }
                None => false,
            },
            Member::Nested { .. } => false,
            Member::Or { branches, .. } => branches.iter().all(|(b, _)| visit(b, names, n)),
        })
    }
    let mut names = [""; FLAT_LISTS];
    let mut n = 0;
    visit(object, &mut names, &mut n).then_some((names, n))
}

/// Rule 42 DECISION: at most five distinct leaf paths, counted across every `$or` branch.
pub fn check_keys(object: &Object, errors: &mut Vec<PolicyError>) {
    // Each leaf list names one path: a policy of at most five leaf lists names at most five
    // distinct paths, whatever they are (no names compared).
    if leaf_list_count(object) <= MAX_KEYS {
        return;
    }
    // Most policies are flat and well within the limit: counted without allocating. Any other
    // (and every policy over the limit, whose error names the count) is counted below.
    if let Some((names, n)) = flat_leaf_names(object) {
        let names = names.get(..n).unwrap_or_default();
        let distinct = names
            .iter()
            .enumerate()
            .filter(|&(i, name)| !names.get(..i).unwrap_or_default().contains(name))
            .count();
        if distinct <= MAX_KEYS {
            return;
        }
    }
    let mut lists = Vec::new();
    leaf_lists(object, None, &mut lists);
    let mut distinct: Vec<&str> = Vec::new();
    let mut first_extra = None;
    for (path, at) in &lists {
        if !distinct.contains(&&**path) {
            distinct.push(path);
            if distinct.len() == MAX_KEYS + 1 {
                first_extra = Some(*at);
            }
        }
    }
    if let Some(at) = first_extra {
        errors.push(PolicyError::new(
            ErrorCode::SnsLimitExceeded,
            at,
            format!(
                "Filter policy can not have more than {MAX_KEYS} keys (it names {} distinct leaf keys)",
                distinct.len()
            ),
        ));
    }
}

/// The number of leaf lists of `object`, at any depth and in every `$or` branch (saturating).
fn leaf_list_count(object: &Object) -> usize {
    object.members.iter().fold(0usize, |n, member| {
        n.saturating_add(match member {
            Member::Leaf { .. } => 1,
            Member::Nested { object, .. } => leaf_list_count(object),
            Member::Or { branches, .. } => branches
                .iter()
                .fold(0usize, |sum, (b, _)| sum.saturating_add(leaf_list_count(b))),
        })
    })
}

/// The number of value combinations (rule 43): the product over an object's members, where a leaf
/// list counts its length times its nesting depth (the root's members are at depth 1), a nested
/// object counts its own combinations one level deeper, and `$or` counts the sum of its branches
/// at the same depth (D-7: `$or` and dotted names add no depth). Saturates instead of overflowing.
pub fn combinations(object: &Object, depth: u64) -> u64 {
    object.members.iter().fold(1u64, |acc, member| {
        let factor = match member {
            Member::Leaf { alternatives, .. } => depth
                .saturating_mul(u64::try_from(alternatives.matchers().len()).unwrap_or(u64::MAX)),
            Member::Nested { object, .. } => combinations(object, depth.saturating_add(1)),
            Member::Or { branches, .. } => branches.iter().fold(0u64, |sum, (b, _)| {
                sum.saturating_add(combinations(b, depth))
            }),
        };
        acc.saturating_mul(factor)
    })
}

/// The shape of a validated policy, found by walking it (the parser gathers the same while it
/// reads: `Parser::root_shaped`).
impl Shape {
    /// The shape of the root `object`.
    pub fn of(object: &Object) -> Shape {
        Shape::at(object, 1)
    }

    /// The shape of `object` at `depth` (see [`combinations`]).
    fn at(object: &Object, depth: u64) -> Shape {
        let mut shape = Shape {
            nested: false,
            leaf_lists: 0,
            combinations: 1,
        };
        for member in &object.members {
            let (nested, lists, factor) = match member {
                Member::Leaf { alternatives, .. } => (
                    false,
                    1,
                    depth.saturating_mul(
                        u64::try_from(alternatives.matchers().len()).unwrap_or(u64::MAX),
                    ),
                ),
                Member::Nested { object, .. } => {
                    let inner = Shape::at(object, depth.saturating_add(1));
                    (true, inner.leaf_lists, inner.combinations)
                }
                Member::Or { branches, .. } => {
                    branches
                        .iter()
                        .fold((false, 0usize, 0u64), |(nested, lists, sum), (b, _)| {
                            let inner = Shape::at(b, depth);
                            (
                                nested || inner.nested,
                                lists.saturating_add(inner.leaf_lists),
                                sum.saturating_add(inner.combinations),
                            )
                        })
                }
            };
            shape.add(nested, lists, factor);
        }
        shape
    }
}

/// Rule 43: at most 150 combinations.
pub fn check_combinations(object: &Object, errors: &mut Vec<PolicyError>) {
    let n = combinations(object, 1);
    if n > MAX_COMBINATIONS {
        errors.push(PolicyError::new(
            ErrorCode::SnsLimitExceeded,
            "",
            format!(
                "Filter policy is too complex ({n} value combinations; the limit is {MAX_COMBINATIONS})"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::sns::parse::Parser;
    use serde_json::{Value, json};

    fn object(policy: &Value) -> Object {
        let mut p = Parser::default();
        let o = p.root(&filtervm_vm::json::Value::from(policy)).unwrap();
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        o
    }

    fn list(n: usize) -> Value {
        (0..n).map(|i| json!(i.to_string())).collect()
    }

    /// The one walk of [`Shape`] gives what each check computes by itself: the combinations,
    /// the leaf lists, and whether attribute scope would report a nested member.
    #[test]
    fn shape_agrees_with_each_check() {
        for p in [
            json!({}),
            json!({"a": list(3), "b": list(1), "c": list(2)}),
            json!({"a": list(1), "b": list(1), "c": list(1),
                "d": list(1), "e": list(1), "f": list(1)}),
            json!({"a": list(200)}),
            json!({"R": {"a": list(2), "S": {"b": list(3)}}, "c": list(2)}),
            json!({"s": list(4), "$or": [{"m": list(6)},
                {"t": list(4), "$or": [{"i": list(4)}, {"sp": list(4)}]}]}),
            json!({"$or": [{"a": list(1)}, {"B": {"c": list(2)}}]}),
            json!({"$or": [{"a": list(1)}, {"b": list(2)}]}),
        ] {
            let o = object(&p);
            let shape = Shape::of(&o);
            // The shape the parser gathers while reading is the walk's.
            let read = filtervm_vm::json::Value::from(&p);
            let shaped = filtervm_vm::json::Arena::with_local(|arena| {
                Parser::default().root_shaped(arena.value(&read))
            });
            assert_eq!(shaped, Some((o.clone(), shape)), "{p}");
            assert_eq!(shape.combinations, combinations(&o, 1), "{p}");
            assert_eq!(shape.leaf_lists, leaf_list_count(&o), "{p}");
            let mut errors = Vec::new();
            check_scope(Scope::MessageAttributes, &o, &mut errors);
            assert_eq!(shape.nested, !errors.is_empty(), "{p}");
        }
    }

    #[test]
    fn rule_43_flat_policies_multiply_list_lengths() {
        let p = json!({"a": list(3), "b": list(1), "c": list(2)});
        assert_eq!(combinations(&object(&p), 1), 6);
    }

    #[test]
    fn rule_43_or_sums_branches_times_enclosing_factors() {
        let or = |s, m, t, i, sp| {
            json!({"source": list(s), "$or": [{"metricName": list(m)},
                {"metricType": list(t), "$or": [{"metricId": list(i)}, {"spaceId": list(sp)}]}]})
        };
        assert_eq!(combinations(&object(&or(4, 6, 4, 4, 4)), 1), 152);
        assert_eq!(combinations(&object(&or(3, 6, 4, 4, 7)), 1), 150);
    }

    #[test]
    fn rule_43_nesting_multiplies_by_depth_d_7_or_adds_none() {
        let nested = json!({"key_a": {"key_b": {"key_c": list(4)}}, "key_d": {"key_e": list(3)}});
        assert_eq!(combinations(&object(&nested), 1), 72);
        let mut with_f = nested.clone();
        with_f["key_f"] = list(3);
        assert_eq!(combinations(&object(&with_f), 1), 216);
        let or = json!({"$or": [{"m": list(3)}, {"n": list(2)}],
            "detail": {"scope": list(2), "$or": [{"source": list(1)}, {"type": list(3)}]}});
        assert_eq!(combinations(&object(&or), 1), 160);
        assert_eq!(combinations(&object(&json!({"a.b.c": list(7)})), 1), 7);
        assert_eq!(combinations(&object(&json!({})), 1), 1);
    }

    #[test]
    fn combinations_saturate() {
        let mut m = serde_json::Map::new();
        for i in 0..40 {
            m.insert(format!("k{i}"), list(150));
        }
        assert_eq!(combinations(&object(&Value::Object(m)), 1), u64::MAX);
    }

    #[test]
    fn rule_42_counts_distinct_flattened_leaf_paths() {
        // As text: the order of the members is the policy's order.
        let text =
            r#"{"a": {"b": ["1"]}, "a.b": ["2"], "$or": [{"c": ["1"]}, {"c": ["2"], "d": ["3"]}]}"#;
        let mut p = Parser::default();
        let o = p
            .root(&filtervm_vm::json::parse(text.as_bytes()).unwrap())
            .unwrap();
        let mut lists = Vec::new();
        leaf_lists(&o, None, &mut lists);
        let paths: Vec<&str> = lists.iter().map(|(p, _)| &**p).collect();
        assert_eq!(paths, ["a.b", "a.b", "c", "c", "d"]);
        let mut errors = Vec::new();
        check_keys(&o, &mut errors);
        assert!(errors.is_empty());
    }

    /// Flat policies (counted on the stack, up to [`FLAT_LISTS`] leaf lists) and the others
    /// (listed) get the same answer: no error up to five distinct paths however often each
    /// repeats, else the error at the sixth path's first list, naming the count.
    #[test]
    fn rule_42_flat_and_listed_policies_are_counted_alike() {
        // `branches` `$or` branches, branch `i` testing the path `k{i % names}`, after a member
        // `a` holding a nested object or not. As text: the order of the members is the policy's.
        let policy = |branches: usize, names: usize, nested: bool| {
            let or: Vec<String> = (0..branches)
                .map(|i| format!(r#"{{"k{}": ["1"]}}"#, i % names))
                .collect();
            let a = if nested {
                r#"{"b": ["1"]}"#
            } else {
                r#"["1"]"#
            };
            let text = format!(r#"{{"a": {a}, "$or": [{}]}}"#, or.join(", "));
            let mut p = Parser::default();
            let o = p
                .root(&filtervm_vm::json::parse(text.as_bytes()).unwrap())
                .unwrap();
            assert!(p.errors.is_empty(), "{:?}", p.errors);
            o
        };
        for branches in [
            2,
            FLAT_LISTS - 2,
            FLAT_LISTS - 1,
            FLAT_LISTS,
            3 * FLAT_LISTS,
        ] {
            for names in [1, 2, 4, 5, 6] {
                for nested in [false, true] {
                    let o = policy(branches, names, nested);
                    assert_eq!(leaf_list_count(&o), branches + 1);
                    assert_eq!(
                        flat_leaf_names(&o).is_some(),
                        !nested && branches < FLAT_LISTS,
                        "{branches} {names} {nested}"
                    );
                    let mut errors = Vec::new();
                    check_keys(&o, &mut errors);
                    let distinct = 1 + names.min(branches);
                    if distinct <= MAX_KEYS {
                        assert!(errors.is_empty(), "{branches} {names}: {errors:?}");
                        continue;
                    }
                    let [e] = errors.as_slice() else {
                        panic!("{branches} {names}: {errors:?}");
                    };
                    assert_eq!(
                        e.pointer,
                        format!("/$or/{}/k{}", MAX_KEYS - 1, MAX_KEYS - 1)
                    );
                    assert!(
                        e.message
                            .contains(&format!("it names {distinct} distinct leaf keys")),
                        "{}",
                        e.message
                    );
                }
            }
        }
    }
}

//! Binding SNS message bodies (sns rules 14-21, D-3).
//!
//! The body is a parsed JSON document. Only the paths of the program's [`Key::BodyPath`] and
//! [`Key::BodyPathEach`] keys are extracted, in one walk over the parts of the document those
//! paths can reach.
//!
//! # Paths
//!
//! A key's path is the policy's leaf path flattened with `.` (rule 16). At an object, a member
//! named `N` continues the path when the remaining path equals `N` (the member's value is then at
//! the *leaf position*) or starts with `N.` (the walk continues inside the value with the rest).
//! So `"a.b.c"` reaches `{"a": {"b": {"c": v}}}`, `{"a.b.c": v}`, `{"a.b": {"c": v}}` and
//! `{"a": {"b.c": v}}`, and all of them when several are present.
//!
//! At the leaf position a scalar (string, number, `true`, `false`, `null`) is a leaf; an object is
//! no leaf (rule 19: `exists` applies to leaves only); an array contributes its scalar elements,
//! arrays of arrays flattened at every depth (rule 17), objects inside it ignored. A key with no
//! leaf is absent, so an empty array is absent (rule 20) while `""` and `null` are present
//! (rule 21). Before the leaf position, arrays are transparent too: the walk continues into every
//! object element (nested arrays flattened), and scalar elements there are ignored.
//!
//! # Rows: conditions on the same element (rule 18, D-3)
//!
//! Conditions below one array of objects must be satisfied by the same element. The program is
//! therefore run once per *row*, a row being one choice of element for every array of objects on
//! the way to the keys, and the message matches when some row does. Choosing is only needed where
//! it can change the verdict, so an array (met before the leaf position) is a *choice point* only
//! when
//!
//! - two or more keys continue below it (for example `Records.a` and `Records.b`), or
//! - a [`Key::BodyPathEach`] key continues below it: the compiler uses that key for paths read by a
//!   negative matcher (`exists: false`, `anything-but`: judged per element, D-3) or tested in more
//!   than one place.
//!
//! Below any other array a single key, tested once by "some leaf satisfies" predicates, is the only
//! reader, and "some element has a satisfying leaf" equals "the union of the elements' leaves has
//! one", so all elements are merged into one row. Choice points nest: the rows of an element are
//! combined with the rows of its siblings (a cross product), and the rows of a choice point are
//! the union of its elements' rows. An array of objects with no object element offers no choice.
//! A subtree read by a single plain key can hold no choice point, so it is bound straight into
//! its row without building rows at all (the common case costs one pass and no allocation per
//! node).
//!
//! # Bounds
//!
//! Binding never recurses on arrays (nested arrays are flattened with an explicit stack) and
//! recurses on objects only where a path continues, so the depth is at most the number of object
//! levels a path crosses; it is capped at [`MAX_DEPTH`] (bodies parsed by `serde_json::from_str`
//! are at most 128 levels deep anyway). The number of rows is the product of the choice points'
//! element counts, which can grow fast (two sibling arrays of 1,000 elements each, each read by two
//! keys, make 1,000,000 rows); rows × keys is capped at [`MAX_ROW_SLOTS`], and leaves copied to
//! give a key one contiguous range in a row are capped at [`MAX_COPIED_LEAVES`]. A body beyond any
//! of these caps is **not** bound approximately: it is bound like a body that is not a JSON object
//! (one row, every body key absent, `BodyIsObject` absent), so it matches only policies that read
//! nothing from the body, and [`Bindings::overflowed`] reports it.

use super::{Bindings, KeyTable, Slot, scalar_leaf};
use crate::key::Key;
use crate::value::{Leaf, Shape};
use serde_json::Value;

/// Most slots (rows × keys of the table) one body may bind to; beyond it the body overflows.
pub const MAX_ROW_SLOTS: usize = 1 << 20;

/// Most leaves one body may copy while giving keys fed from several places of a row one
/// contiguous range; beyond it the body overflows.
pub const MAX_COPIED_LEAVES: usize = 1 << 20;

/// Deepest object nesting a path is followed into; deeper bodies overflow.
pub const MAX_DEPTH: usize = 256;

/// The body could not be bound within the caps.
struct Overflow;

/// One key of the table that reads the body.
struct Target<'t> {
    slot: u32,
    path: &'t str,
    /// A [`Key::BodyPathEach`] key: every array of objects above it is a choice point.
    each: bool,
}

/// A key (index into the targets) at a node of the walk, and what is left of its path there:
/// `None` at the leaf position, `Some(rest)` while members named by `rest` are still to be found.
#[derive(Clone, Copy)]
struct Active<'t> {
    target: usize,
    rest: Option<&'t str>,
}

/// A run of leaves of the store given to one slot.
#[derive(Clone, Copy)]
struct Frag {
    slot: u32,
    start: u32,
    end: u32,
}

/// One row under construction: the leaf runs of each slot, in walk order.
type World = Vec<Frag>;

struct Walker<'t, 'b> {
    b: &'b mut Bindings,
    targets: Vec<Target<'t>>,
    max_rows: usize,
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Appends `frag` to `world`, extending the last run when it continues it.
fn push_frag(world: &mut World, frag: Frag) {
    if let Some(last) = world.last_mut()
        && last.slot == frag.slot
        && last.end == frag.start
    {
        last.end = frag.end;
        return;
    }
    world.push(frag);
}

impl<'t> Walker<'t, '_> {
    /// Whether an array met before the leaf position by `inner` keys is a choice point.
    fn is_choice_point(&self, inner: &[Active<'t>]) -> bool {
        inner.len() >= 2
            || inner
                .iter()
                .any(|a| self.targets.get(a.target).is_some_and(|t| t.each))
    }

    /// Rows of `a` combined with rows of `b` (every pair).
    fn product(&self, a: Vec<World>, b: Vec<World>) -> Result<Vec<World>, Overflow> {
        if let [only] = b.as_slice() {
            let mut a = a;
            for w in &mut a {
                only.iter().for_each(|f| push_frag(w, *f));
            }
            return Ok(a);
        }
        if a.len().saturating_mul(b.len()) > self.max_rows {
            return Err(Overflow);
        }
        let mut out = Vec::with_capacity(a.len() * b.len());
        for x in &a {
            for y in &b {
                let mut w = x.clone();
                y.iter().for_each(|f| push_frag(&mut w, *f));
                out.push(w);
            }
        }
        Ok(out)
    }

    /// Pushes one leaf for every key at its leaf position here.
    fn leaf_frags(&mut self, leaf_keys: &[usize], start: usize) -> World {
        let end = self.b.leaves.len();
        if end == start {
            return World::new();
        }
        leaf_keys
            .iter()
            .filter_map(|&t| self.targets.get(t))
            .map(|t| Frag {
                slot: t.slot,
                start: idx(start),
                end: idx(end),
            })
            .collect()
    }

    /// Whether `active` is one plain key: no choice point can lie below it, so its subtree binds
    /// to a single row and [`Walker::collect`] can bind it without building rows.
    fn single_plain(&self, active: &[Active<'t>]) -> Option<Active<'t>> {
        match active {
            [only] if self.targets.get(only.target).is_some_and(|t| !t.each) => Some(*only),
            _ => None,
        }
    }

    /// Binds one plain key below `value` into `out` (the one-row case of [`Walker::walk`]).
    fn collect(
        &mut self,
        value: &Value,
        key: Active<'t>,
        out: &mut World,
        depth: usize,
    ) -> Result<(), Overflow> {
        if depth > MAX_DEPTH {
            return Err(Overflow);
        }
        let slot = self.targets.get(key.target).map_or(u32::MAX, |t| t.slot);
        match (value, key.rest) {
            (Value::Object(map), Some(rest)) => {
                for (name, child) in map {
                    let below = if rest == name {
                        None
                    } else if let Some(r) = rest
                        .strip_prefix(name.as_str())
                        .and_then(|r| r.strip_prefix('.'))
                    {
                        Some(r)
                    } else {
                        continue;
                    };
                    let key = Active {
                        target: key.target,
                        rest: below,
                    };
                    self.collect(child, key, out, depth + 1)?;
                }
            }
            (Value::Array(items), rest) => {
                // Rule 17: nested arrays flattened. At the leaf position the scalars are the
                // leaves; before it the walk continues into the objects.
                let start = self.b.leaves.len();
                let mut stack = vec![items.iter()];
                while let Some(top) = stack.last_mut() {
                    let Some(item) = top.next() else {
                        stack.pop();
                        continue;
                    };
                    match (item, rest) {
                        (Value::Array(nested), _) => stack.push(nested.iter()),
                        (Value::Object(_), Some(_)) => self.collect(item, key, out, depth + 1)?,
                        (Value::Object(_), None) | (_, Some(_)) => {}
                        (scalar, None) => self.b.leaves.extend(scalar_leaf(scalar)),
                    }
                }
                let end = self.b.leaves.len();
                if rest.is_none() && end > start {
                    push_frag(
                        out,
                        Frag {
                            slot,
                            start: idx(start),
                            end: idx(end),
                        },
                    );
                }
            }
            (Value::Object(_), None) => {}
            (_, Some(_)) => {}
            (scalar, None) => {
                let start = self.b.leaves.len();
                self.b.leaves.extend(scalar_leaf(scalar));
                push_frag(
                    out,
                    Frag {
                        slot,
                        start: idx(start),
                        end: idx(self.b.leaves.len()),
                    },
                );
            }
        }
        Ok(())
    }

    /// The rows of `value` for the keys `active` at it.
    fn walk(
        &mut self,
        value: &Value,
        active: &[Active<'t>],
        depth: usize,
    ) -> Result<Vec<World>, Overflow> {
        if depth > MAX_DEPTH {
            return Err(Overflow);
        }
        if let Some(only) = self.single_plain(active) {
            let mut row = World::new();
            self.collect(value, only, &mut row, depth)?;
            return Ok(vec![row]);
        }
        let leaf_keys: Vec<usize> = active
            .iter()
            .filter(|a| a.rest.is_none())
            .map(|a| a.target)
            .collect();
        let inner: Vec<Active<'t>> = active
            .iter()
            .filter(|a| a.rest.is_some())
            .copied()
            .collect();
        match value {
            Value::Object(map) => {
                // Rule 19: an object at the leaf position is no leaf.
                let mut rows = vec![World::new()];
                if inner.is_empty() {
                    return Ok(rows);
                }
                for (name, child) in map {
                    let below: Vec<Active<'t>> = inner
                        .iter()
                        .filter_map(|a| {
                            let rest = a.rest?;
                            if rest == name {
                                Some(Active {
                                    target: a.target,
                                    rest: None,
                                })
                            } else {
                                rest.strip_prefix(name.as_str())
                                    .and_then(|r| r.strip_prefix('.'))
                                    .map(|r| Active {
                                        target: a.target,
                                        rest: Some(r),
                                    })
                            }
                        })
                        .collect();
                    if below.is_empty() {
                        continue;
                    }
                    if let (Some(only), [row]) = (self.single_plain(&below), rows.as_mut_slice()) {
                        self.collect(child, only, row, depth + 1)?;
                        continue;
                    }
                    let child_rows = self.walk(child, &below, depth + 1)?;
                    rows = self.product(rows, child_rows)?;
                }
                Ok(rows)
            }
            Value::Array(items) => {
                // Rule 17: nested arrays are flattened (explicit stack, no recursion).
                let start = self.b.leaves.len();
                let mut objects: Vec<&Value> = Vec::new();
                let mut stack = vec![items.iter()];
                while let Some(top) = stack.last_mut() {
                    match top.next() {
                        None => {
                            stack.pop();
                        }
                        Some(Value::Array(nested)) => stack.push(nested.iter()),
                        Some(object @ Value::Object(_)) => {
                            if !inner.is_empty() {
                                objects.push(object);
                            }
                        }
                        Some(scalar) => {
                            if !leaf_keys.is_empty() {
                                self.b.leaves.extend(scalar_leaf(scalar));
                            }
                        }
                    }
                }
                let here = self.leaf_frags(&leaf_keys, start);
                if objects.is_empty() {
                    return Ok(vec![here]);
                }
                if self.is_choice_point(&inner) {
                    // Rule 18: one row per element (and per row of that element).
                    let mut rows = Vec::new();
                    for object in objects {
                        for mut row in self.walk(object, &inner, depth + 1)? {
                            here.iter().for_each(|f| push_frag(&mut row, *f));
                            rows.push(row);
                        }
                        if rows.len() > self.max_rows {
                            return Err(Overflow);
                        }
                    }
                    Ok(rows)
                } else {
                    let mut rows = vec![here];
                    for object in objects {
                        let element_rows = self.walk(object, &inner, depth + 1)?;
                        rows = self.product(rows, element_rows)?;
                    }
                    Ok(rows)
                }
            }
            scalar => {
                let start = self.b.leaves.len();
                if !leaf_keys.is_empty() {
                    self.b.leaves.extend(scalar_leaf(scalar));
                }
                Ok(vec![self.leaf_frags(&leaf_keys, start)])
            }
        }
    }
}

pub(super) fn bind(b: &mut Bindings, table: &KeyTable, doc: &Value) {
    let Value::Object(_) = doc else {
        // Rule 14: a body that is not a JSON object has no keys (not even `BodyIsObject`).
        b.push_row();
        return;
    };
    if bind_object(b, table, doc).is_err() {
        b.leaves.clear();
        b.slots.clear();
        b.overflowed = true;
        b.push_row();
    }
}

fn bind_object(b: &mut Bindings, table: &KeyTable, doc: &Value) -> Result<(), Overflow> {
    let mut targets = Vec::new();
    let mut is_object = Vec::new();
    for (i, key) in table.keys().iter().enumerate() {
        let slot = idx(i);
        match key {
            Key::BodyPath(path) => targets.push(Target {
                slot,
                path,
                each: false,
            }),
            Key::BodyPathEach(path) => targets.push(Target {
                slot,
                path,
                each: true,
            }),
            Key::BodyIsObject => is_object.push(slot),
            _ => {}
        }
    }
    let active: Vec<Active<'_>> = targets
        .iter()
        .enumerate()
        .map(|(target, t)| Active {
            target,
            rest: Some(t.path),
        })
        .collect();
    let max_rows = MAX_ROW_SLOTS / b.width.max(1);
    let mut walker = Walker {
        b,
        targets,
        max_rows,
    };
    let rows = if active.is_empty() {
        vec![World::new()]
    } else {
        walker.walk(doc, &active, 0)?
    };
    if rows.len() > max_rows {
        return Err(Overflow);
    }
    let b = walker.b;
    let width = b.width;
    let mut copied = 0usize;
    let mut runs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); width];
    for world in rows {
        let row = b.push_row();
        for &slot in &is_object {
            b.set(row, slot, Shape::Scalar, []);
        }
        runs.iter_mut().for_each(Vec::clear);
        for f in world {
            if let Some(r) = runs.get_mut(f.slot as usize) {
                r.push((f.start, f.end));
            }
        }
        for (slot, slot_runs) in runs.iter().enumerate() {
            let (start, end) = match slot_runs.as_slice() {
                [] => continue,
                [(start, end)] => (*start, *end),
                several => {
                    let start = b.leaves.len();
                    for &(s, e) in several {
                        let n = (e - s) as usize;
                        copied = copied.saturating_add(n);
                        if copied > MAX_COPIED_LEAVES {
                            return Err(Overflow);
                        }
                        let piece: Vec<Leaf> = b
                            .leaves
                            .get(s as usize..e as usize)
                            .map(<[Leaf]>::to_vec)
                            .unwrap_or_default();
                        b.leaves.extend(piece);
                    }
                    (idx(start), idx(b.leaves.len()))
                }
            };
            let shape = match b.leaves.get(start as usize..end as usize) {
                Some([Leaf::Null]) => Shape::Null,
                Some([_]) => Shape::Scalar,
                Some([]) | None => continue,
                Some(_) => Shape::Array,
            };
            if let Some(s) = b.slots.get_mut(row * width + slot) {
                *s = Slot { shape, start, end };
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    /// Binds `body` to the given keys; returns, per row, each key's leaves as display text
    /// (`None` when absent).
    fn rows(keys: &[Key], body: &str) -> (Vec<Vec<Option<String>>>, bool) {
        let mut t = KeyTable::new();
        for k in keys {
            t.intern(k.clone());
        }
        let doc: Value = serde_json::from_str(body).unwrap();
        let mut b = Bindings::new();
        b.bind(&t, &Message::Json(doc));
        let out = (0..b.rows())
            .map(|r| {
                (0..keys.len())
                    .map(|k| {
                        let s = b.slot(r, k);
                        (s.shape != Shape::Absent).then(|| {
                            b.leaves(s)
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                    })
                    .collect()
            })
            .collect();
        (out, b.overflowed())
    }

    fn path(p: &str) -> Key {
        Key::BodyPath(p.into())
    }
    fn each(p: &str) -> Key {
        Key::BodyPathEach(p.into())
    }
    fn s(x: &str) -> Option<String> {
        Some(x.to_owned())
    }

    #[test]
    fn rule_16_dotted_paths_match_nested_flat_and_mixed_forms() {
        let body = r#"{"a": {"b": {"c": 1}}, "a.b.c": 2, "a.b": {"c": 3}, "x": {"a": {"b.c": 4}}}"#;
        let (r, _) = rows(&[path("a.b.c"), path("x.a.b.c")], body);
        assert_eq!(r, vec![vec![s("1,2,3"), s("4")]]);
    }

    #[test]
    fn rule_17_arrays_are_transparent_at_every_depth() {
        let body =
            r#"{"a": [[1, [2]], {"b": 9}, "x"], "o": [[{"k": "v1"}], {"k": ["v2", ["v3"]]}]}"#;
        let (r, _) = rows(&[path("a"), path("o.k")], body);
        assert_eq!(r, vec![vec![s(r#"1,2,"x""#), s(r#""v1","v2","v3""#)]]);
    }

    #[test]
    fn rule_19_and_20_objects_and_empty_arrays_are_absent_rule_21_null_and_empty_present() {
        let body = r#"{"o": {"x": 1}, "e": [], "n": null, "s": "", "eo": [{}]}"#;
        let (r, _) = rows(
            &[path("o"), path("e"), path("n"), path("s"), path("eo")],
            body,
        );
        assert_eq!(r, vec![vec![None, None, s("null"), s(r#""""#), None]]);
    }

    #[test]
    fn rule_18_two_keys_below_an_array_make_one_row_per_element() {
        let body = r#"{"R": [{"a": 1, "b": 2}, {"a": 3}], "top": "t"}"#;
        let (r, _) = rows(&[path("R.a"), path("R.b"), path("top")], body);
        assert_eq!(
            r,
            vec![
                vec![s("1"), s("2"), s(r#""t""#)],
                vec![s("3"), None, s(r#""t""#)]
            ]
        );
    }

    #[test]
    fn one_plain_key_below_an_array_needs_no_rows() {
        let body = r#"{"R": [{"a": 1}, {"a": 3}, {"b": 0}], "S": [{"c": 1}, {"c": 2}]}"#;
        let (r, _) = rows(&[path("R.a"), path("S.c")], body);
        assert_eq!(r, vec![vec![s("1,3"), s("1,2")]]);
    }

    #[test]
    fn d_3_an_each_key_is_judged_per_element() {
        let body = r#"{"R": [{"a": 1}, {"b": 2}]}"#;
        let (r, _) = rows(&[each("R.a")], body);
        assert_eq!(r, vec![vec![s("1")], vec![None]]);
    }

    #[test]
    fn sibling_choice_points_multiply_and_nested_ones_sum() {
        let body =
            r#"{"A": [{"x": 1, "y": 1}, {"x": 2, "y": 2}], "B": [{"z": 1}, {"z": 2}, {"z": 3}]}"#;
        let (r, _) = rows(&[path("A.x"), path("A.y"), each("B.z")], body);
        assert_eq!(r.len(), 6);
        let nested = r#"{"R": [{"I": [{"a": 1, "b": 1}, {"a": 2}]}, {"I": [{"a": 3}]}]}"#;
        let (r, _) = rows(&[path("R.I.a"), path("R.I.b")], nested);
        assert_eq!(r.len(), 3);
        assert_eq!(r[2], vec![s("3"), None]);
    }

    #[test]
    fn an_array_of_scalars_is_no_choice_point() {
        let (r, _) = rows(&[each("a")], r#"{"a": ["x", "y"]}"#);
        assert_eq!(r, vec![vec![s(r#""x","y""#)]]);
    }

    #[test]
    fn rule_14_a_body_that_is_not_an_object_binds_nothing() {
        let (r, _) = rows(&[Key::BodyIsObject, path("a")], r#"["a"]"#);
        assert_eq!(r, vec![vec![None, None]]);
        let (r, _) = rows(&[Key::BodyIsObject, path("a")], r#"{"a": 1}"#);
        assert_eq!(r, vec![vec![Some(String::new()), s("1")]]);
    }

    #[test]
    fn empty_path_segments_are_names() {
        let (r, _) = rows(&[path("a."), path("")], r#"{"a": {"": 1}, "": 2, "a.": 3}"#);
        assert_eq!(r, vec![vec![s("1,3"), s("2")]]);
    }

    #[test]
    fn too_many_rows_overflow_explicitly_and_bind_nothing() {
        // Two sibling arrays of 1,100 elements, each judged per element: 1,210,000 rows.
        let elems: Vec<String> = (0..1100).map(|i| format!(r#"{{"x": {i}}}"#)).collect();
        let list = elems.join(",");
        let body = format!(r#"{{"A": [{list}], "B": [{list}]}}"#);
        let (r, overflowed) = rows(&[Key::BodyIsObject, each("A.x"), each("B.x")], &body);
        assert!(overflowed);
        assert_eq!(r, vec![vec![None, None, None]]);
        // Just under the cap still binds every row.
        let small: Vec<String> = (0..500).map(|i| format!(r#"{{"x": {i}}}"#)).collect();
        let list = small.join(",");
        let body = format!(r#"{{"A": [{list}], "B": [{list}]}}"#);
        let (r, overflowed) = rows(&[each("A.x"), each("B.x")], &body);
        assert!(!overflowed);
        assert_eq!(r.len(), 250_000);
    }

    #[test]
    fn programmatic_bodies_deeper_than_the_cap_overflow() {
        let mut doc = serde_json::json!(1);
        let mut p = String::from("a");
        for _ in 0..MAX_DEPTH + 2 {
            doc = serde_json::json!({ "a": doc });
            p.push_str(".a");
        }
        let mut t = KeyTable::new();
        t.intern(path(&p));
        let mut b = Bindings::new();
        b.bind(&t, &Message::Json(doc));
        assert!(b.overflowed());
        assert_eq!(b.slot(0, 0).shape, Shape::Absent);
    }
}

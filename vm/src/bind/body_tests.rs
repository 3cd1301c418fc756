//! Tests of the body binder (`body.rs`), binding through [`super::Bindings`] as the executor's
//! callers do.

use super::Bindings;
use super::body::{MAX_DEPTH, general, single_row};
use super::leaf::{BoundLeaf, Slot};
use super::table::WALK_PER_KEY;
use super::table::{BodyPlan, KeyTable};
use crate::key::Key;
use crate::message::Message;
use crate::value::Shape;
use bumpalo::Bump;

/// Binds `body` to the given keys; returns, per row, each key's leaves as display text
/// (`None` when absent), and whether it overflowed. Binds the raw bytes and the whole tree
/// read by [`crate::json::parse`], and checks that they agree.
fn rows(keys: &[Key], body: &str) -> (Vec<Vec<Option<String>>>, bool) {
    let mut t = KeyTable::new();
    for k in keys {
        t.intern(k.clone());
    }
    let show = |bound: &super::Bound<'_>| -> (Vec<Vec<Option<String>>>, bool) {
        let out = (0..bound.rows())
            .map(|r| {
                (0..keys.len())
                    .map(|k| {
                        let s = bound.slot(r, k);
                        (s.shape != Shape::Absent).then(|| {
                            s.leaves()
                                .filter_map(BoundLeaf::to_leaf)
                                .map(|l| l.to_string())
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                    })
                    .collect()
            })
            .collect();
        (out, bound.overflowed())
    };
    let mut b = Bindings::new();
    let from_bytes = show(&b.bind_json(&t, body.as_bytes()));
    // A field key counts every occurrence of a repeated member name (EB-3): so does the tree.
    let mut options = crate::json::ParseOptions::default();
    if keys.iter().any(|k| matches!(k, Key::FieldPath(..))) {
        options.duplicates = crate::json::Duplicates::KeepAll;
    }
    let doc = crate::json::parse_with(body.as_bytes(), &options).unwrap();
    let from_tree = show(&b.bind_tree(&t, &doc));
    assert_eq!(from_bytes, from_tree, "{body}");
    from_tree
}

/// A slot's shape and leaves with their dictionary ids.
type SlotSeen = (Shape, Vec<(crate::value::Leaf, u32)>);

/// A xorshift generator from `seed`: each call gives a number below its argument.
fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut rng = seed;
    move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    }
}

/// On random bodies and tables where no choice point can arise, binding each key alone
/// ([`single_row`]) gives what the row-building walk ([`general`]) gives.
#[test]
fn keys_bound_alone_agree_with_the_row_building_walk() {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
    let names = ["a", "b", "a.b", "c", "", "b.c"];
    fn value(next: &mut dyn FnMut(u64) -> u64, names: &[&str], depth: u32) -> serde_json::Value {
        match if depth > 3 { next(4) } else { next(7) } {
            0 => serde_json::json!(next(3)),
            1 => serde_json::json!(["x", "y", "1"][next(3) as usize]),
            2 => serde_json::Value::Null,
            3 => serde_json::json!(next(2) == 0),
            4 | 5 => {
                let mut map = serde_json::Map::new();
                for _ in 0..next(4) {
                    let name = names[next(names.len() as u64) as usize];
                    map.insert(name.to_owned(), value(next, names, depth + 1));
                }
                serde_json::Value::Object(map)
            }
            _ => serde_json::Value::Array(
                (0..next(4))
                    .map(|_| value(next, names, depth + 1))
                    .collect(),
            ),
        }
    }
    let (mut checked, mut indexed) = (0, 0);
    for _ in 0..3000 {
        let mut t = KeyTable::new();
        if next(2) == 0 {
            t.intern(Key::BodyIsObject);
        }
        for _ in 0..1 + next(4) {
            let segments: Vec<&str> = (0..1 + next(3))
                .map(|_| ["a", "b", "c", ""][next(4) as usize])
                .collect();
            let p = segments.join(".");
            t.intern(if next(4) == 0 { each(&p) } else { path(&p) });
        }
        if next(3) == 0 {
            t.add_constant(0, "x");
        }
        // Past `WALK_PER_KEY` keys, members are matched through the first-segment index.
        if next(2) == 0 {
            for i in 0..=WALK_PER_KEY {
                t.intern(path(&format!("z{i}")));
            }
        }
        let plan = BodyPlan::new(t.keys());
        if !plan.single_row {
            continue;
        }
        let mut doc = serde_json::Map::new();
        for _ in 0..1 + next(4) {
            let name = names[next(names.len() as u64) as usize];
            doc.insert(name.to_owned(), value(&mut next, &names, 1));
        }
        let text = serde_json::Value::Object(doc).to_string();
        let arena = Bump::new();
        let node = crate::json::parse(text.as_bytes()).unwrap();
        let node = super::tree::of_value(&node, &arena);
        let alone = single_row(&t, &plan, &node, &arena).ok();
        let walked = general(&t, &plan, &node, &arena).ok();
        let show = |slots: Option<&[Slot<'_>]>| -> Option<Vec<SlotSeen>> {
            slots.map(|slots| {
                slots
                    .iter()
                    .map(|s| {
                        (
                            s.shape,
                            s.leaves()
                                .map(|l| (l.to_leaf().unwrap(), l.eq_id()))
                                .collect(),
                        )
                    })
                    .collect()
            })
        };
        assert_eq!(show(alone), show(walked), "keys {:?} body {text}", t.keys());
        checked += 1;
        indexed += usize::from(plan.by_first.is_some());
    }
    assert!(checked > 1000, "{checked} single-row tables");
    assert!(indexed > 300, "{indexed} of them indexed");
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
    let body = r#"{"a": [[1, [2]], {"b": 9}, "x"], "o": [[{"k": "v1"}], {"k": ["v2", ["v3"]]}]}"#;
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

fn fixed(p: &str, levels: u32) -> Key {
    Key::FieldPath(p.into(), levels)
}

#[test]
fn eb_10_fixed_keys_are_per_element_only_within_their_levels() {
    let body = r#"{"r": [{"c": 1, "b": "x"}, {"b": "y"}]}"#;
    // Fixed over the array below `r` (level 1): judged element by element.
    let (r, _) = rows(&[path("r.b"), fixed("r.c", 1)], body);
    assert_eq!(r, vec![vec![s(r#""x""#), s("1")], vec![s(r#""y""#), None]]);
    // Fixed over no level: every element's leaves in every row (and `r.b`, alone below the
    // array then, needs no rows).
    let (r, _) = rows(&[path("r.b"), fixed("r.c", 0)], body);
    assert_eq!(r, vec![vec![s(r#""x","y""#), s("1")]]);
    let (r, _) = rows(&[path("r.b"), path("r.a"), fixed("r.c", 0)], body);
    assert_eq!(
        r,
        vec![
            vec![s(r#""x""#), None, s("1")],
            vec![s(r#""y""#), None, s("1")]
        ]
    );
    // Level 1 fixes the outer array, not the inner one.
    let nested = r#"{"r": [{"a": "x", "q": [{"b": 1}, {"c": 2}]}, {"a": "z", "q": [{"c": 3}]}]}"#;
    let (r, _) = rows(&[path("r.a"), path("r.q.c"), fixed("r.q.b", 1)], nested);
    assert_eq!(
        r,
        vec![
            vec![s(r#""x""#), s("2"), s("1")],
            vec![s(r#""z""#), s("3"), None]
        ]
    );
    // Fixed over both levels: per element of the inner array too.
    let (r, _) = rows(&[path("r.a"), path("r.q.c"), fixed("r.q.b", 2)], nested);
    assert_eq!(
        r,
        vec![
            vec![s(r#""x""#), None, s("1")],
            vec![s(r#""x""#), s("2"), None],
            vec![s(r#""z""#), s("3"), None]
        ]
    );
    // A dotted member name consumes its segments at once.
    let dotted = r#"{"r.q": [{"b": 1}, {"c": 2}]}"#;
    let (r, _) = rows(&[path("r.q.c"), fixed("r.q.b", 1)], dotted);
    assert_eq!(r, vec![vec![s("2"), s("1")]]);
    let (r, _) = rows(&[path("r.q.c"), fixed("r.q.b", 2)], dotted);
    assert_eq!(r, vec![vec![None, s("1")], vec![s("2"), None]]);
}

/// Where a row cannot stand for EB-8's choices, the body is not bound (module documentation,
/// "Where rows fall short").
#[test]
fn eb_10_absences_rows_cannot_judge_overflow() {
    let field = |p: &str| fixed(p, u32::MAX);
    let keys = [field("r.b"), fixed("r.c", 1)];
    // `r.c` is absent from element 1 only; a value of `r.b` on another route (flat, or a
    // repeated `r`) is in no element of that array.
    for body in [
        r#"{"r": [{"c": 1}, {"b": "x"}], "r.b": "y"}"#,
        r#"{"r": [{"c": 1}, {"b": "x"}], "r": {"b": "y"}}"#,
        r#"{"r.b": "y", "r": [{"c": 1}, {"b": "x"}]}"#,
    ] {
        assert!(rows(&keys, body).1, "{body}");
    }
    for body in [
        // The other route has no value of `r.b`.
        r#"{"r": [{"c": 1}, {"b": "x"}], "r.z": "y"}"#,
        // No row leaves `r.c` absent where another has it.
        r#"{"r": [{"c": 1, "b": "x"}, {"c": 2}], "r.b": "y"}"#,
        // One route.
        r#"{"r": [{"c": 1}, {"b": "x"}]}"#,
    ] {
        assert!(!rows(&keys, body).1, "{body}");
    }
    // Any key sorting before the absence can fix for it.
    assert!(
        rows(
            &[field("r.a"), fixed("r.c", 1)],
            r#"{"r": [{"c": 1}, {"a": 2}], "r.a": 3}"#
        )
        .1
    );
    // A key sorting after the absence fixes nothing for it.
    assert!(
        !rows(
            &[field("r.d"), fixed("r.c", 1)],
            r#"{"r": [{"c": 1}, {"d": 2}], "r.d": 3}"#
        )
        .1
    );
    // A scalar in a nested array at `r` has its element's position and could fix it for
    // `r.x`, whose value lies in another element.
    let nested = [field("r"), fixed("r.x", 0)];
    assert!(rows(&nested, r#"{"r": [["x"], {"x": 2}]}"#).1);
    assert!(!rows(&nested, r#"{"r": ["x", {"x": 2}]}"#).1);
    assert!(!rows(&nested, r#"{"r": [["x"], {"y": 2}]}"#).1);
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
fn bodies_deeper_than_the_cap_along_a_path_overflow() {
    let mut doc = serde_json::json!(1);
    let mut p = String::from("a");
    for _ in 0..MAX_DEPTH + 2 {
        doc = serde_json::json!({ "a": doc });
        p.push_str(".a");
    }
    let mut t = KeyTable::new();
    t.intern(path(&p));
    let mut b = Bindings::new();
    let bytes = doc.to_string();
    let message = Message::Json(doc);
    let bound = b.bind(&t, &message);
    assert!(bound.overflowed());
    assert_eq!(bound.slot(0, 0).shape, Shape::Absent);
    let bound = b.bind_json(&t, bytes.as_bytes());
    assert!(bound.overflowed());
    assert_eq!(bound.slot(0, 0).shape, Shape::Absent);
}

#[test]
fn depth_and_lone_surrogates_where_no_path_leads_cost_nothing() {
    // A member no key reads, nested 200 and 100,000 levels, and a lone surrogate in an
    // unrelated string: the body is judged, the key read.
    for depth in [200, 100_000] {
        let body = format!(
            r#"{{"deep": {}1{}, "k": "v"}}"#,
            "[{\"x\": ".repeat(depth),
            "}]".repeat(depth)
        );
        let (r, overflowed) = rows_of_bytes(&[path("k")], &body);
        assert_eq!(
            (r, overflowed),
            (vec![vec![s(r#""v""#)]], false),
            "depth {depth}"
        );
    }
    let (r, _) = rows_of_bytes(&[path("k")], r#"{"note": "\ud800", "k": "v"}"#);
    assert_eq!(r, vec![vec![s(r#""v""#)]]);
}

/// [`rows`] from the bytes only (for bodies `serde_json` cannot read).
fn rows_of_bytes(keys: &[Key], body: &str) -> (Vec<Vec<Option<String>>>, bool) {
    let mut t = KeyTable::new();
    for k in keys {
        t.intern(k.clone());
    }
    let mut b = Bindings::new();
    let bound = b.bind_json(&t, body.as_bytes());
    assert!(bound.not_json().is_none(), "{:?}", bound.not_json());
    let out = (0..bound.rows())
        .map(|r| {
            (0..keys.len())
                .map(|k| {
                    let s = bound.slot(r, k);
                    (s.shape != Shape::Absent).then(|| {
                        s.leaves()
                            .filter_map(BoundLeaf::to_leaf)
                            .map(|l| l.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                })
                .collect()
        })
        .collect();
    (out, bound.overflowed())
}

#[test]
fn rule_14_a_body_that_is_not_json_binds_nothing_and_is_reported() {
    let mut t = KeyTable::new();
    t.intern(Key::BodyIsObject);
    t.intern(path("a"));
    let mut b = Bindings::new();
    let bound = b.bind_json(&t, b"{\"a\": 1,}");
    assert!(bound.not_json().is_some());
    assert_eq!(bound.slot(0, 0).shape, Shape::Absent);
    assert_eq!(bound.slot(0, 1).shape, Shape::Absent);
}

/// What a bound message carries, as text: every slot of every row (shape, leaves with their
/// numbers, ids and text numbers), the judgement (the error with its offset and message), whether
/// the body is an object, the depth and the first-name note.
fn everything(bound: &super::Bound<'_>, width: usize) -> String {
    let mut out = format!(
        "{:?} object={} deepest={} unlisted={} rows={}",
        bound.judgement(),
        bound.root_object,
        bound.deepest,
        bound.first_unlisted,
        bound.rows()
    );
    if let Some(e) = bound.not_json() {
        out.push_str(&format!(" error={e}"));
    }
    for r in 0..bound.rows() {
        for k in 0..width {
            out.push_str(&format!("\n{r}/{k}: {:?}", bound.slot(r, k)));
        }
    }
    out
}

/// [`Bindings::bind_json_noting_first_name`] without the flat binder: the pruned document,
/// bound by the general binders.
fn bound_by_document<'b>(
    b: &'b mut Bindings,
    t: &'b KeyTable,
    json: &'b [u8],
    listed: crate::json::NameTest,
) -> super::Bound<'b> {
    let Bindings {
        arena, extractor, ..
    } = b;
    arena.reset();
    let (read, unlisted) = extractor.extract_noting_first_name(t.selector(), json, listed);
    let mut bound = super::bound_json(t, read, arena);
    bound.first_unlisted = unlisted;
    bound
}

/// The first-name test of the differential tests: `a` and `x` are listed.
fn listed_a_x(name: &[u8]) -> bool {
    name == b"a" || name == b"x"
}

/// Binds `body` to `t` with the flat binder (through both entry points) and through the pruned
/// document, in both read modes; asserts they agree. Returns whether the body was JSON.
fn flat_agrees(t: &KeyTable, body: &[u8]) -> bool {
    let width = t.len();
    let mut json = false;
    for mode in [
        crate::json::ReadMode::Validating,
        crate::json::ReadMode::Trusted,
    ] {
        let mut fast = Bindings::new();
        let mut slow = Bindings::new();
        fast.set_read_mode(mode);
        slow.set_read_mode(mode);
        let expected = everything(&bound_by_document(&mut slow, t, body, listed_a_x), width);
        let got = everything(
            &fast.bind_json_noting_first_name(t, body, listed_a_x),
            width,
        );
        let shown = String::from_utf8_lossy(body);
        assert_eq!(got, expected, "{mode:?}, {:?}: {shown}", t.keys());
        // Without the note, the same again (the note stays false).
        let plain = everything(&fast.bind_json(t, body), width);
        let Bindings {
            arena, extractor, ..
        } = &mut slow;
        arena.reset();
        let read = extractor.extract_measured(t.selector(), body);
        let expected = everything(&super::bound_json(t, read, arena), width);
        assert_eq!(
            plain,
            expected,
            "{mode:?} (no note), {:?}: {shown}",
            t.keys()
        );
        json |= mode == crate::json::ReadMode::Validating
            && fast.bind_json(t, body).not_json().is_none();
    }
    json
}

/// A random SNS body for the flat binder: mostly objects whose members the tables read, with
/// scalars of every kind (escapes, numbers the short-decimal path reads and others), repeated
/// and escaped names, dotted names, arrays and objects as values, white space here and there.
fn flat_body(next: &mut dyn FnMut(u64) -> u64, depth: u32, out: &mut String) {
    const NAMES: &[&str] = &[
        "a", "b", "c", "x", "", "a.b", "\\u0061", "b\\\"", "A", "é", "\\u00e9", "c.",
    ];
    const SCALARS: &[&str] = &[
        "1",
        "-0.5",
        "1e3",
        "437.5",
        "0",
        "12345678901234567890",
        "true",
        "false",
        "null",
        "\"s\"",
        "\"x\"",
        "\"1.5\"",
        "\"\\u0073\"",
        "\"é\"",
        "\"\"",
        "\"\\ud800\"",
    ];
    const WS: &[&str] = &["", "", "", " ", "\n\t"];
    let pick = |next: &mut dyn FnMut(u64) -> u64, items: &[&'static str]| {
        items[next(items.len() as u64) as usize]
    };
    match next(if depth > 2 {
        1
    } else if depth == 0 {
        12
    } else {
        4
    }) {
        0 => out.push_str(pick(next, SCALARS)),
        1 => {
            out.push('[');
            for i in 0..next(4) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(pick(next, WS));
                flat_body(next, depth + 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..next(7) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(pick(next, WS));
                out.push('"');
                out.push_str(pick(next, NAMES));
                out.push('"');
                out.push_str(pick(next, WS));
                out.push(':');
                out.push_str(pick(next, WS));
                // Mostly scalars at the top level (the flat case), containers now and then.
                if depth == 0 && next(5) != 0 {
                    out.push_str(pick(next, SCALARS));
                } else {
                    flat_body(next, depth + 1, out);
                }
            }
            out.push('}');
        }
    }
}

/// Gives some slots of `t` a constant or text numbers (the dictionaries a flat binder looks
/// strings up in).
fn add_constants(t: &mut KeyTable, next: &mut dyn FnMut(u64) -> u64) {
    for slot in 0..t.len() {
        let slot = u32::try_from(slot).unwrap();
        match next(4) {
            0 => {
                t.add_constant(slot, ["x", "s", "é"][next(3) as usize]);
            }
            1 => t.add_text_numbers(slot),
            _ => {}
        }
    }
}

/// `text` with up to two bytes removed, doubled or replaced by structural or odd ones.
fn corrupted(next: &mut dyn FnMut(u64) -> u64, text: String) -> Vec<u8> {
    let mut bytes = text.into_bytes();
    for _ in 0..next(3).saturating_sub(1) {
        if bytes.is_empty() {
            break;
        }
        let at = next(bytes.len() as u64) as usize;
        match next(3) {
            0 => {
                bytes.remove(at);
            }
            1 => bytes.insert(at, bytes[at]),
            _ => bytes[at] = b"{}[],:\"\\ 0-.etu\x01\xff"[next(17) as usize],
        }
    }
    bytes
}

/// Tables of one-segment body paths bind raw bytes straight from the reader's member loop
/// (`bind_flat`): on random and chosen bodies (valid, with containers where a path ends, not
/// objects, and corrupted anywhere), in both read modes, every slot, leaf, id, text number,
/// judgement, error, depth and note is what binding the pruned document gives.
#[test]
fn flat_tables_bind_bytes_as_the_document_does() {
    let mut next = xorshift(0x2545_F491_4F6C_DD1Du64);
    let chosen: &[&[u8]] = &[
        br#"{"a":1,"b":"s","a":2}"#,
        br#"{"a":1,"a":[2,3]}"#,
        br#"{"a":[1],"a":2}"#,
        br#"{"a":{"b":1},"b":2}"#,
        br#"{"\u0061":"x","a.b":1,"b":null}"#,
        br#"{"a":"\u0078","b":"1.5","c":true,"x":false}"#,
        br#"[{"a":1}]"#,
        br#""a""#,
        b"{}",
        b" {\"a\" : 437.5 } \n",
        br#"{"a":1,}"#,
        br#"{"a":1} x"#,
        br#"{"b":tru,"a":1}"#,
        br#"{"a":"x"#,
        b"{\"a\":\"\xff\"}",
        b"{\"b\":\"\xff\",\"a\":1}",
        b"",
    ];
    let (mut flat, mut json, mut not_json, mut field_tables) = (0, 0, 0, 0);
    for case in 0..3000 {
        let mut t = KeyTable::new();
        if next(2) == 0 {
            t.intern(Key::BodyIsObject);
        }
        // One table in three reads EventBridge field paths (a repeated name counts at each
        // occurrence), now and then beside SNS paths.
        let fields = next(3) == 0;
        for _ in 0..1 + next(4) {
            let p = ["a", "b", "c", "", "é"][next(5) as usize];
            t.intern(match next(4) {
                0 if fields => fixed(p, next(2) as u32 * u32::MAX),
                0 => each(p),
                1 | 2 if fields => fixed(p, u32::MAX),
                _ => path(p),
            });
        }
        add_constants(&mut t, &mut next);
        if t.body_plan().flat.is_none() {
            continue;
        }
        flat += 1;
        field_tables += usize::from(t.selector().keeps_repeats());
        let bodies: Vec<Vec<u8>> = if case < 50 {
            chosen.iter().map(|b| b.to_vec()).collect()
        } else {
            let mut text = String::new();
            flat_body(&mut next, 0, &mut text);
            vec![corrupted(&mut next, text)]
        };
        for body in &bodies {
            if flat_agrees(&t, body) {
                json += 1;
            } else {
                not_json += 1;
            }
        }
    }
    assert!(
        flat > 2000 && json > 2000 && not_json > 500 && field_tables > 500,
        "{flat} flat tables ({field_tables} with field paths), {json} JSON bodies, {not_json} others"
    );
}

/// A random SNS body for two-level tables: an object whose members are mostly scalars or
/// objects of scalars, now and then an array, a deeper container, a repeated or dotted name.
fn two_level_body(next: &mut dyn FnMut(u64) -> u64, depth: u32, out: &mut String) {
    const NAMES: &[&str] = &["a", "b", "c", "x", "", "a.b", "\\u0061", "A", "é", "c."];
    const SCALARS: &[&str] = &[
        "1",
        "-0.5",
        "true",
        "null",
        "\"s\"",
        "\"x\"",
        "\"\\u0073\"",
        "\"é\"",
    ];
    const WS: &[&str] = &["", "", "", " ", "\n\t"];
    let pick = |next: &mut dyn FnMut(u64) -> u64, items: &[&'static str]| {
        items[next(items.len() as u64) as usize]
    };
    let kind = if depth == 0 {
        2
    } else {
        next(if depth > 2 { 2 } else { 6 })
    };
    match kind {
        0 | 3..=5 => out.push_str(pick(next, SCALARS)),
        1 => {
            out.push('[');
            for i in 0..next(3) {
                if i > 0 {
                    out.push(',');
                }
                two_level_body(next, depth + 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..next(6) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(pick(next, WS));
                out.push('"');
                out.push_str(pick(next, NAMES));
                out.push_str("\":");
                out.push_str(pick(next, WS));
                // At the top level, objects half the time (the two-level case).
                if depth == 0 && next(2) == 0 {
                    out.push('{');
                    for j in 0..next(4) {
                        if j > 0 {
                            out.push(',');
                        }
                        out.push('"');
                        out.push_str(pick(next, NAMES));
                        out.push_str("\":");
                        two_level_body(next, depth + 2, out);
                    }
                    out.push('}');
                } else {
                    two_level_body(next, depth + 1, out);
                }
            }
            out.push('}');
        }
    }
}

/// SNS tables of paths of one and two segments (`a`, `a.b`, ...) bind the scalar members of an
/// object kept at the top level straight from the reader too (`bind_flat`'s second member
/// loop): on random and chosen bodies (objects of scalars, repeated and dotted names, arrays
/// and deeper containers where a path ends, corrupted anywhere), in both read modes,
/// everything bound is what binding the pruned document gives.
#[test]
fn two_level_tables_bind_bytes_as_the_document_does() {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let chosen: &[&[u8]] = &[
        br#"{"a":{"b":1,"c":"s"},"b":2}"#,
        br#"{"a":{"b":1},"a":{"c":2}}"#,
        br#"{"a":{"b":1},"a":3}"#,
        br#"{"a":3,"a":{"b":1}}"#,
        br#"{"a":{"b":[1,2]},"x":1}"#,
        br#"{"a":{"b":{"c":1}}}"#,
        br#"{"a.b":1,"a":{"b":2}}"#,
        br#"{"a":{"b":1,"b":2}}"#,
        br#"{"a":[{"b":1}]}"#,
        br#"{"a":{"b":"x"},"b":{"a":true}}"#,
        br#"{"a":{}}"#,
        br#"{"a":{"b":1}"#,
        br#"{"a":{"b":tru}}"#,
        b"{\"a\":{\"b\":\"\xff\"}}",
        b"",
    ];
    let paths = ["a", "b", "c", "a.b", "a.c", "b.a", "x.a", "a.", "é.a"];
    let (mut tables, mut json, mut not_json, mut two_level_flat) = (0, 0, 0, 0);
    for case in 0..2000 {
        let mut t = KeyTable::new();
        if next(3) == 0 {
            t.intern(Key::BodyIsObject);
        }
        for _ in 0..1 + next(3) {
            let p = paths[next(paths.len() as u64) as usize];
            t.intern(if next(4) == 0 && !p.contains('.') {
                each(p)
            } else {
                path(p)
            });
        }
        add_constants(&mut t, &mut next);
        if t.body_plan().flat_inner.is_empty() {
            continue;
        }
        tables += 1;
        let bodies: Vec<Vec<u8>> = if case < 40 {
            chosen.iter().map(|b| b.to_vec()).collect()
        } else {
            let mut text = String::new();
            two_level_body(&mut next, 0, &mut text);
            vec![corrupted(&mut next, text)]
        };
        for body in &bodies {
            if flat_agrees(&t, body) {
                json += 1;
            } else {
                not_json += 1;
            }
            // Read flat with an object kept at the top level: the second member loop ran.
            two_level_flat +=
                usize::from(reads_flat(&t, body) && body.windows(2).any(|w| w == b":{"));
        }
    }
    assert!(
        tables > 800 && json > 1000 && not_json > 300 && two_level_flat > 300,
        "{tables} two-level tables, {json} JSON bodies, {not_json} others, \
         {two_level_flat} read flat with an object"
    );
}

/// Whether the flat binder of `t` reads `body` without building the document.
fn reads_flat(t: &KeyTable, body: &[u8]) -> bool {
    let mut extractor = crate::json::Extractor::new();
    let arena = Bump::new();
    let row = arena.alloc_slice_fill_copy(t.len(), Slot::ABSENT);
    let tap = super::FlatTap::<false, true>::new(t, t.body_plan(), row, &arena);
    let ((read, _), _) = tap.read(&mut extractor, body, None);
    matches!(read, Ok((crate::json::Tapped::Flat, _)))
}

/// A two-level table reads an object of scalars kept at the top level without building the
/// document (`json::Tapped::Flat`), and leaves to the document what it cannot bind that way.
#[test]
fn two_level_reads_stay_flat_for_objects_of_scalars() {
    let mut t = KeyTable::new();
    t.intern(path("a.b"));
    t.intern(path("c"));
    let plan = t.body_plan();
    assert!(
        plan.flat.is_some() && plan.flat_inner.len() == 2,
        "{plan:?}"
    );
    let flat = |body: &[u8]| reads_flat(&t, body);
    assert!(flat(br#"{"c":1,"a":{"x":[1],"b":"s"},"d":{"e":[]}}"#));
    assert!(flat(br#"{"a":{}}"#));
    assert!(
        !flat(br#"{"a":{"b":[1]}}"#),
        "a container where a path ends"
    );
    assert!(!flat(br#"{"a":{"b":1},"a":2}"#), "a name twice");
    assert!(!flat(br#"{"a.b":1}"#), "a dotted name");
    assert!(!flat(br#"{"a":[{"b":1}]}"#), "an array of objects");
}

/// String members against small dictionaries (searched in place) and large ones (hashed): on
/// random flat tables with several keys on one name, constants and text numbers, and bodies
/// whose strings equal a constant, differ from one by a byte, are escaped or not UTF-8 (and
/// bodies cut short), in both read modes, everything the flat binder binds is what binding the
/// pruned document gives; and string leaves do carry constants' ids (the look-up is exercised).
#[test]
fn flat_strings_against_small_and_hashed_dictionaries_bind_as_the_document_does() {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
    const TEXTS: &[&str] = &[
        "s",
        "x",
        "é",
        "1.5",
        "",
        "order.paid",
        "order.pai",
        "order.paid2",
        "ab",
        "b",
    ];
    let value = |next: &mut dyn FnMut(u64) -> u64| -> String {
        match next(8) {
            0 => "\"\\u0073\"".to_owned(),
            1 => "\"order.pa\\u0069d\"".to_owned(),
            2 => "1.5".to_owned(),
            3 => "true".to_owned(),
            _ => format!("\"{}\"", TEXTS[next(TEXTS.len() as u64) as usize]),
        }
    };
    // Slots bound with a constant's id, from small and from hashed dictionaries.
    let (mut ids_small, mut ids_hashed, mut bodies) = (0, 0, 0);
    for case in 0..1500 {
        let mut t = KeyTable::new();
        for _ in 0..1 + next(4) {
            let p = ["a", "b", "c"][next(3) as usize];
            t.intern(if next(4) == 0 { each(p) } else { path(p) });
        }
        // Past eight values a dictionary is hashed; below, searched in place.
        let fillers = if case % 2 == 0 { 0 } else { 20 };
        for slot in 0..t.len() {
            let slot = u32::try_from(slot).unwrap();
            for _ in 0..next(3) {
                t.add_constant(slot, TEXTS[next(TEXTS.len() as u64) as usize]);
            }
            for i in 0..fillers {
                t.add_constant(slot, &format!("filler{i}"));
            }
            if next(4) == 0 {
                t.add_text_numbers(slot);
            }
        }
        if t.body_plan().flat.is_none() {
            continue;
        }
        for _ in 0..4 {
            let mut body = String::from("{");
            for i in 0..1 + next(5) {
                if i > 0 {
                    body.push(',');
                }
                let name = ["a", "b", "c", "d"][next(4) as usize];
                body.push_str(&format!("\"{name}\":{}", value(&mut next)));
            }
            body.push('}');
            let mut bytes = body.into_bytes();
            match next(8) {
                // A byte that is not UTF-8 in a name or a string, or a body cut short.
                0 => {
                    let quotes = bytes.iter().filter(|&&b| b == b'"').count() as u64;
                    if let Some((at, _)) = bytes
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| **b == b'"')
                        .nth(next(quotes) as usize)
                    {
                        bytes.insert(at + 1, 0xff);
                    }
                }
                1 => {
                    let at = next(bytes.len() as u64) as usize;
                    bytes.truncate(at);
                }
                _ => {}
            }
            flat_agrees(&t, &bytes);
            bodies += 1;
            let mut b = Bindings::new();
            let bound = b.bind_json(&t, &bytes);
            let ids = (0..t.len())
                .filter(|&k| bound.slot(0, k).leaves().any(|l| l.eq != super::NO_ID))
                .count();
            if fillers > 0 {
                ids_hashed += ids;
            } else {
                ids_small += ids;
            }
        }
    }
    assert!(
        ids_small > 200 && ids_hashed > 200 && bodies > 3000,
        "{ids_small} + {ids_hashed} slots with ids (small, hashed), {bodies} bodies"
    );
}

/// A random object without escapes, whose members are mostly scalars, now and then an object,
/// its names mostly distinct: what most messages are, and where a trusted read passes over the
/// members after the wanted ones.
fn plain_body(next: &mut dyn FnMut(u64) -> u64, out: &mut String) {
    const NAMES: &[&str] = &["a", "b", "c", "x", "y", "z", "w", "a.b", "ab", "", "é"];
    const VALUES: &[&str] = &[
        "1",
        "-2.5",
        "\"s\"",
        "true",
        "null",
        "\"a\"",
        "\"}\"",
        "{\"b\":1}",
        "[1]",
        "\"é\"",
    ];
    out.push('{');
    for i in 0..next(8) {
        if i > 0 {
            out.push_str([",", ", ", ",\n"][next(3) as usize]);
        }
        out.push('"');
        out.push_str(NAMES[next(NAMES.len() as u64) as usize]);
        out.push_str("\":");
        out.push_str(VALUES[next(VALUES.len() as u64) as usize]);
    }
    out.push_str(["}", "} ", "}\n"][next(3) as usize]);
}

/// In trusted mode, once every member a table wants of the top-level object (and of an object
/// directly below it) has been read, the rest of the document is passed over without reading its
/// members (`Reader::pass_rest`): on random tables (paths of one, two and three segments) and
/// valid bodies (names repeated after the wanted ones, escaped or dotted; wanted names as values;
/// brackets in strings; containers in the rest, up to and beyond the 64 levels past which the
/// depth is reported), everything bound in trusted mode (the depth included) is what the
/// validating read binds; on corrupted bodies, a trusted read errs only where the validating
/// read does; and hundreds of trusted reads did pass over a rest, from both levels.
#[test]
fn trusted_reads_pass_over_the_rest_as_validating_reads_read_it() {
    use crate::json::ReadMode;
    let mut next = xorshift(0xD1B5_4A32_D192_ED03);
    let deep = format!("{{\"a\":1,\"x\":{}{}}}", "[".repeat(70), "]".repeat(70));
    // Open levels at once: 1 + 63 (not reported) and 1 + 64 (reported); below the top level,
    // 2 + 62 and 2 + 63.
    let nested = |open: usize, inner: bool| {
        let brackets = format!("{}{}", "[".repeat(open), "]".repeat(open));
        if inner {
            format!("{{\"a\":{{\"b\":1,\"x\":{brackets}}}}}")
        } else {
            format!("{{\"a\":1,\"b\":2,\"x\":{brackets}}}")
        }
    };
    let (at_63, at_64, inner_62, inner_63) = (
        nested(63, false),
        nested(64, false),
        nested(62, true),
        nested(63, true),
    );
    let chosen: Vec<Vec<u8>> = [
        br#"{"a":1,"b":2,"a":3}"#.as_slice(),
        br#"{"a":1,"b":2,"\u0061":3}"#,
        br#"{"a":1,"b":"a","x":"b"}"#,
        br#"{"a":1,"b":2,"x":[1,{"a":2}]}"#,
        br#"{"a":1,"b":2,"x":"}","y":"{"}"#,
        b"{\"a\":1,\"b\":2,\"x\":\"y\"}  \n",
        br#"{"a":{"b":1,"c":2},"b":2,"x":{"b":3}}"#,
        br#"{"a":1,"b":2,"a.b":3}"#,
        br#"{"a":{"b":1},"b":2,"a.b":3}"#,
        br#"{"a":1,"b":2,"x":"\u00e9"}"#,
        br#"{"a":1,"b":2,"x":2}x"#,
        br#"{"a":1,"b":2,"x":2"#,
        br#"{"a":1,"b":2,"x":2]"#,
        deep.as_bytes(),
        at_63.as_bytes(),
        at_64.as_bytes(),
        inner_62.as_bytes(),
        inner_63.as_bytes(),
        br#"{"a":{"b":1,"c":2,"x":[1,{"y":2}]},"x":{"z":[3]}}"#,
        br#"{"a":{"b":1,"x":2},"a":{"b":3}}"#,
        br#"{"a":{"b":1,"x":2},"x":{"a":{"b":3}}}"#,
        br#"{"a":{"b":1,"x":{"b":5}}}"#,
        br#"{"a":{"b":1,"x":"b"},"y":1}"#,
        br#"{"a":{"b":1,"x":1},"y":1,"a":{"b":2}}"#,
        br#"{"a":{"b":1,"b.c":2,"x":1}}"#,
        br#"{"a":{"b":1,"x":1},"a.b":2}"#,
        br#"{"a":[{"b":1,"x":1}],"y":{"b":2}}"#,
        br#"[{"a":{"b":1,"x":1}}]"#,
    ]
    .iter()
    .map(|b| b.to_vec())
    .collect();
    let paths = ["a", "b", "c", "", "a.b", "a.c", "b.a", "a.b.c", "x.a"];
    let [_, top_before, inner_before] = crate::json::passed_rests();
    let (mut valid, mut invalid) = (0, 0);
    for case in 0..8000 {
        let mut t = KeyTable::new();
        // Half the tables read the top level only (where a rest may be passed over).
        let choices = if next(2) == 0 { 4 } else { paths.len() as u64 };
        for _ in 0..1 + next(3) {
            let p = paths[next(choices) as usize];
            t.intern(if next(4) == 0 { each(p) } else { path(p) });
        }
        add_constants(&mut t, &mut next);
        let width = t.len();
        let bodies: Vec<Vec<u8>> = if case < 40 {
            chosen.clone()
        } else {
            let mut text = String::new();
            match next(3) {
                0 => flat_body(&mut next, 0, &mut text),
                1 => two_level_body(&mut next, 0, &mut text),
                _ => plain_body(&mut next, &mut text),
            }
            if next(4) == 0 {
                vec![corrupted(&mut next, text)]
            } else {
                vec![text.into_bytes()]
            }
        };
        for body in &bodies {
            let bound = |mode: ReadMode| {
                let mut b = Bindings::new();
                b.set_read_mode(mode);
                let by_bytes = everything(&b.bind_json(&t, body), width);
                let mut d = Bindings::new();
                d.set_read_mode(mode);
                let by_document =
                    everything(&bound_by_document(&mut d, &t, body, listed_a_x), width);
                (
                    by_bytes,
                    by_document,
                    b.bind_json(&t, body).not_json().is_some(),
                )
            };
            let (checked, checked_document, checked_err) = bound(ReadMode::Validating);
            let (trusted, trusted_document, trusted_err) = bound(ReadMode::Trusted);
            let shown = String::from_utf8_lossy(body);
            // Where the validating read errs, a trusted read may bind (see `ReadMode`).
            if checked_err {
                invalid += 1;
                continue;
            }
            valid += 1;
            assert!(!trusted_err, "{:?}: {shown}", t.keys());
            assert_eq!(trusted, checked, "{:?}: {shown}", t.keys());
            assert_eq!(
                trusted_document,
                checked_document,
                "{:?}: {shown}",
                t.keys()
            );
        }
    }
    let [_, top, inner] = crate::json::passed_rests();
    let (top, inner) = (top - top_before, inner - inner_before);
    assert!(
        valid > 6000 && invalid > 500 && top > 250 && inner > 10,
        "{valid} valid bodies, {invalid} others, {top} and {inner} rests passed over"
    );
}

/// A trusted read looks at two rests of a document at most, however many members after the
/// wanted ones repeat a wanted name (at the top level or below it, as containers or scalars), so
/// repeats cannot make it read the input over and over: bodies of 2,000 repeated members bind
/// as the validating read binds them, after one or two looks.
#[test]
fn trusted_reads_look_at_two_rests_at_most() {
    use crate::json::ReadMode;
    for (wanted, member, around) in [
        ("a.b", r#""a":{"b":1,"x":2}"#, ("{", "}")),
        ("a.b", r#""a":{"b":1},"x":{"y":[2]}"#, ("{", "}")),
        ("a", r#""a":1,"x":[2]"#, ("{", "}")),
        ("a.b.c", r#""b":{"c":1,"x":2},"y":3"#, (r#"{"a":{"#, "}}")),
        ("a.b", r#""b":1,"x":2"#, (r#"{"a":{"#, r#"},"y":[1]}"#)),
    ] {
        let mut t = KeyTable::new();
        t.intern(path(wanted));
        let width = t.len();
        let body = format!("{}{}{}", around.0, vec![member; 2000].join(","), around.1);
        let bound = |mode: ReadMode| {
            let mut b = Bindings::new();
            b.set_read_mode(mode);
            everything(&b.bind_json(&t, body.as_bytes()), width)
        };
        let checked = bound(ReadMode::Validating);
        let [looked_before, ..] = crate::json::passed_rests();
        let trusted = bound(ReadMode::Trusted);
        let [looked, ..] = crate::json::passed_rests();
        assert_eq!(trusted, checked, "{wanted}: {member}");
        assert!(
            (1..=2).contains(&(looked - looked_before)),
            "{wanted}: {member}: {} looks",
            looked - looked_before
        );
    }
}

/// A table that wants more than 63 top-level names never has a trusted read pass over a rest
/// (its read cannot tell when every wanted name was read): with 70 names wanted and all of them
/// in the body, followed by more members (a wanted one repeated), the trusted read binds what
/// the validating read binds.
#[test]
fn trusted_reads_of_many_wanted_names_read_the_rest() {
    use crate::json::ReadMode;
    let mut t = KeyTable::new();
    for i in 0..70 {
        t.intern(path(&format!("k{i}")));
    }
    let width = t.len();
    let members: Vec<String> = (0..70).map(|i| format!("\"k{i}\":{i}")).collect();
    let body = format!("{{{},\"x\":1,\"k69\":\"last\"}}", members.join(","));
    let bound = |mode: ReadMode| {
        let mut b = Bindings::new();
        b.set_read_mode(mode);
        everything(&b.bind_json(&t, body.as_bytes()), width)
    };
    let trusted = bound(ReadMode::Trusted);
    assert_eq!(trusted, bound(ReadMode::Validating));
    assert!(trusted.contains("last"), "{trusted}");
}

//! The message reader keeps exactly enough: on random documents and random key tables (with
//! random equality constants and numeric-text readers), binding the raw bytes — read by the
//! table's selector into a pruned document — gives exactly the bindings the whole document gives
//! (read by `json::parse`), shapes, leaves, dictionary ids and text numbers alike; a document
//! given as a `serde_json::Value` binds as the tree `serde_json` made of it. And the policy reader agrees with `serde_json` on random and corrupted documents
//! (`json::check_against_serde_json`).

#![expect(
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    reason = "test code: a failed index or assertion is a test failure"
)]

use filtervm_vm::bind::{Bindings, Bound as BoundMessage, KeyTable};
use filtervm_vm::json::{self, Extractor, LoneSurrogates, Node, ReadMode, Selector};
use filtervm_vm::key::Key;
use filtervm_vm::message::Message;
use filtervm_vm::value::{Leaf, Shape};

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Member names of SNS bodies: path segments, dotted names, case variants.
const BODY_NAMES: &[&str] = &[
    "a", "b", "c", "a.b", "b.c", "a.b.c", "", ".", "a.", "A", "x", "é",
];

/// Member names of events: case variants of envelope names and `data`, and `data` segments.
const EVENT_NAMES: &[&str] = &[
    "data",
    "Data",
    "DATA",
    "subject",
    "Subject",
    "eventType",
    "EVENTTYPE",
    "id",
    "a",
    "b",
    "c",
    "a.b",
    "A",
];

/// A member name: one of the first four (the hot ones) more often than the rest.
fn name<'a>(rng: &mut Rng, names: &[&'a str]) -> &'a str {
    if rng.chance(60) {
        rng.pick(&names[..4])
    } else {
        rng.pick(names)
    }
}

/// Names for the generic corruption test.
const NAMES: &[&str] = &["a", "b", "a.b", "", "data", "Subject", "é"];

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "2",
    "-7",
    "1.50",
    "1.5",
    "15e-1",
    "1e5",
    "1E+5",
    "-2.5e-3",
    "0.0",
    "12345678901234567890",
    "9007199254740993",
    "1e400",
];

const STRINGS: &[&str] = &["", "x", "eu-west", "a.b", "é€😀", "1", "null", "true"];

/// A JSON string literal for `s`, with some characters escaped at random.
fn string_literal(rng: &mut Rng, s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if rng.chance(15) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{:04X}", unit));
                }
            }
            '/' if rng.chance(50) => out.push_str("\\/"),
            c => out.push(c),
        }
    }
    if rng.chance(2) {
        out.push_str(rng.pick(&["\\n", "\\t", "\\/", "\\\\", "\\\""]));
    }
    out.push('"');
    out
}

fn ws(rng: &mut Rng) -> &'static str {
    rng.pick(&["", "", "", " ", "\n  ", "\t", "\r\n"])
}

fn value(rng: &mut Rng, names: &[&str], depth: usize, out: &mut String) {
    let kind = if depth >= 5 {
        rng.below(4)
    } else {
        rng.below(9)
    };
    match kind {
        0 => out.push_str(rng.pick(NUMBERS)),
        1 => {
            let s = rng.pick(STRINGS);
            out.push_str(&string_literal(rng, s));
        }
        2 => out.push_str(rng.pick(&["true", "false", "null"])),
        3 => out.push_str(rng.pick(NUMBERS)),
        4..=6 => {
            out.push('{');
            let n = rng.below(5);
            for i in 0..n {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(ws(rng));
                let name = name(rng, names);
                out.push_str(&string_literal(rng, name));
                out.push_str(ws(rng));
                out.push(':');
                out.push_str(ws(rng));
                value(rng, names, depth + 1, out);
            }
            out.push_str(ws(rng));
            out.push('}');
        }
        _ => {
            out.push('[');
            let n = rng.below(5);
            for i in 0..n {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(ws(rng));
                if rng.chance(40) && depth < 5 {
                    // Arrays of objects (sns rule 18 rows).
                    out.push('{');
                    let name = name(rng, names);
                    out.push_str(&string_literal(rng, name));
                    out.push(':');
                    value(rng, names, depth + 1, out);
                    out.push('}');
                } else {
                    value(rng, names, depth + 1, out);
                }
            }
            out.push(']');
        }
    }
}

/// A random document: usually an object at the top level.
fn document(rng: &mut Rng, names: &[&str]) -> String {
    let mut out = String::new();
    out.push_str(ws(rng));
    if rng.chance(90) {
        out.push('{');
        let n = 1 + rng.below(6);
        for i in 0..n {
            if i > 0 {
                out.push_str(", ");
            }
            let name = name(rng, names);
            out.push_str(&string_literal(rng, name));
            out.push_str(": ");
            value(rng, names, 1, &mut out);
        }
        out.push('}');
    } else {
        value(rng, names, 1, &mut out);
    }
    out.push_str(ws(rng));
    out
}

const SEGMENTS: &[&str] = &["a", "b", "c", "", "A", "x", "é"];

fn body_keys(rng: &mut Rng) -> Vec<Key> {
    let mut keys = Vec::new();
    if rng.chance(50) {
        keys.push(Key::BodyIsObject);
    }
    for _ in 0..1 + rng.below(4) {
        let n = 1 + rng.below(3);
        let path: Vec<&str> = (0..n)
            .map(|_| {
                if rng.chance(70) {
                    rng.pick(&["a", "b"])
                } else {
                    rng.pick(SEGMENTS)
                }
            })
            .collect();
        let path = path.join(".");
        keys.push(if rng.chance(40) {
            Key::BodyPathEach(path.into())
        } else {
            Key::BodyPath(path.into())
        });
    }
    keys
}

/// EventBridge field keys (EB-2, EB-3, EB-10), with their levels.
fn field_keys(rng: &mut Rng) -> Vec<Key> {
    body_keys(rng)
        .into_iter()
        .map(|k| match k {
            Key::BodyPath(p) | Key::BodyPathEach(p) => {
                Key::FieldPath(p, rng.pick(&[u32::MAX, u32::MAX, 0, 1, 2]))
            }
            other => other,
        })
        .collect()
}

fn event_keys(rng: &mut Rng) -> Vec<Key> {
    let mut keys = Vec::new();
    for _ in 0..rng.below(3) {
        let name = rng.pick(&["subject", "eventType", "id", "a", "data", "x.y", "é"]);
        keys.push(Key::EventMember(name.into()));
    }
    for _ in 0..rng.below(3) {
        let n = rng.below(3);
        let path: Vec<Box<str>> = (0..n)
            .map(|_| (rng.pick(&["a", "b", "c", "a.b", "A", "data"])).into())
            .collect();
        keys.push(Key::EventData(path.into()));
    }
    if keys.is_empty() {
        keys.push(Key::EventMember("subject".into()));
    }
    keys
}

/// One leaf as the binders computed it: its value, its dictionary id and its text number.
type LeafSeen = (Leaf, u32, u64);

/// Everything the binders computed: per row, per key, shape and leaves; and the overflow flag.
type Bound = (Vec<Vec<(Shape, Vec<LeafSeen>)>>, bool);

fn seen(table: &KeyTable, bound: &BoundMessage<'_>) -> Bound {
    let rows = (0..bound.rows())
        .map(|r| {
            (0..table.len())
                .map(|k| {
                    let slot = bound.slot(r, k);
                    let leaves = slot
                        .leaves()
                        .map(|l| {
                            let leaf = l.to_leaf().unwrap();
                            (leaf, l.eq_id(), l.text_number().to_bits())
                        })
                        .collect();
                    (slot.shape, leaves)
                })
                .collect()
        })
        .collect();
    (rows, bound.overflowed())
}

fn check_pruned_binds_like_full(
    seed: u64,
    cases: usize,
    keys_of: fn(&mut Rng) -> Vec<Key>,
    names: &[&str],
    min_multi_row: usize,
) {
    let mut rng = Rng(seed);
    let mut extractor = Extractor::new();
    let mut kept_bytes = 0usize;
    let mut full_bytes = 0usize;
    let mut rows_seen = 0usize;
    let mut present = 0usize;
    let mut multi_row = 0usize;
    let mut serde_held = 0usize;
    for case in 0..cases {
        let text = document(&mut rng, names);
        let keys = keys_of(&mut rng);
        let mut table = KeyTable::new();
        for k in &keys {
            table.intern(k.clone());
        }
        // Some equality constants and numeric-text readers, on random slots.
        for _ in 0..rng.below(4) {
            let slot = rng.below(table.len()) as u32;
            table.add_constant(slot, rng.pick(STRINGS));
        }
        if rng.chance(30) {
            table.add_text_numbers(rng.below(table.len()) as u32);
        }
        // EventBridge field keys count every occurrence of a repeated name (EB-3): the full tree
        // keeps them all too.
        let mut options = json::ParseOptions::default();
        if keys.iter().any(|k| matches!(k, Key::FieldPath(..))) {
            options.duplicates = json::Duplicates::KeepAll;
        }
        options.max_depth = json::MAX_DEPTH_CEILING;
        let full = json::parse_with(text.as_bytes(), &options)
            .unwrap_or_else(|e| panic!("case {case}: generated invalid JSON ({e}): {text}"));
        // `serde_json` (default features) cannot hold a number beyond binary64 (`1e400`).
        let full_serde = serde_json::from_str::<serde_json::Value>(&text).ok();
        let pruned = extractor
            .extract(table.selector(), text.as_bytes())
            .unwrap_or_else(|e| panic!("case {case}: {e}: {text}"));
        let pruned_text = pruned.to_string();
        let mut scratch = Bindings::new();
        let expected = seen(&table, &scratch.bind_tree(&table, &full));
        let got = seen(&table, &scratch.bind_json(&table, text.as_bytes()));
        assert_eq!(
            got, expected,
            "case {case}: keys {keys:?}\ndocument {text}\npruned   {pruned_text}"
        );
        // Trusted mode reads a valid document exactly as the validating mode does: the same
        // bindings and the same measured depth.
        let validating = scratch.bind_json(&table, text.as_bytes()).deepest();
        scratch.set_read_mode(ReadMode::Trusted);
        let trusted = scratch.bind_json(&table, text.as_bytes());
        assert_eq!(
            (seen(&table, &trusted), trusted.deepest()),
            (got, validating),
            "case {case}, trusted: keys {keys:?}\ndocument {text}"
        );
        scratch.set_read_mode(ReadMode::Validating);
        // A document given as a `serde_json::Value` binds as the same tree read by `json::parse`
        // would, once it holds what `serde_json` made of the text: its numbers (rounded to
        // binary64, in the text its `Display` writes) and its member order (sorted by name).
        if let Some(full_serde) = full_serde {
            let as_serde_holds_it = json::Value::from(&full_serde);
            let message = Message::Json(full_serde);
            let from_serde = seen(&table, &scratch.bind(&table, &message));
            assert_eq!(
                from_serde,
                seen(&table, &scratch.bind_tree(&table, &as_serde_holds_it)),
                "case {case}: serde_json tree {text}"
            );
            serde_held += 1;
        }
        kept_bytes += pruned_text.len();
        full_bytes += text.len();
        rows_seen += expected.0.len();
        multi_row += usize::from(expected.0.len() > 1);
        present += expected
            .0
            .iter()
            .flatten()
            .filter(|(shape, _)| *shape != Shape::Absent)
            .count();
    }
    // The generator must exercise pruning and rows, or the property says little.
    assert!(kept_bytes * 2 < full_bytes, "{kept_bytes} of {full_bytes}");
    eprintln!(
        "{rows_seen} rows, {multi_row} multi-row cases, {present} present slots, kept {kept_bytes} of {full_bytes} bytes"
    );
    assert!(
        multi_row >= min_multi_row,
        "{multi_row} cases of several rows in {cases}"
    );
    assert!(
        present > cases / 2,
        "{present} present slots in {cases} cases"
    );
    assert!(
        serde_held > cases / 2,
        "serde_json held {serde_held} of {cases} documents"
    );
}

#[test]
fn pruned_sns_bodies_bind_like_full_ones() {
    check_pruned_binds_like_full(0x5eed_0001, 20_000, body_keys, BODY_NAMES, 400);
}

#[test]
fn pruned_eventbridge_fields_bind_like_full_ones() {
    check_pruned_binds_like_full(0x5eed_0003, 20_000, field_keys, BODY_NAMES, 200);
}

#[test]
fn pruned_events_bind_like_full_ones() {
    check_pruned_binds_like_full(0x5eed_0002, 20_000, event_keys, EVENT_NAMES, 0);
}

#[test]
fn policy_reader_agrees_with_serde_json_on_random_and_corrupted_documents() {
    let mut rng = Rng(0x5eed_0003);
    let mut rejected = 0;
    for _ in 0..20_000 {
        let mut bytes = document(&mut rng, NAMES).into_bytes();
        json::check_against_serde_json(&bytes)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
        // One random edit: delete, duplicate, or replace a byte with a grammar character.
        if !bytes.is_empty() {
            let at = rng.below(bytes.len());
            match rng.below(3) {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, bytes[at]),
                _ => {
                    bytes[at] = rng.pick(b"{}[],:\"\\ 0-.eE+tfnu\x01\xff\xc3");
                }
            }
        }
        json::check_against_serde_json(&bytes)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
        // The message reader validates exactly as `validate` does.
        let mut x = Extractor::new();
        let extracted = x.extract(&Selector::body_paths(["a"]), &bytes).map(|_| ());
        assert_eq!(
            extracted,
            json::validate(&bytes, LoneSurrogates::Replace),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
        rejected += usize::from(extracted.is_err());
    }
    assert!(
        rejected > 5_000,
        "only {rejected} corrupted documents rejected"
    );
}

#[test]
fn duplicates_resolve_as_in_the_full_document() {
    let mut x = Extractor::new();
    let selector = Selector::body_paths(["a.b", "c"]);
    let doc = x
        .extract(
            &selector,
            br#"{"a": {"b": 1}, "c": 2, "a": 5, "a": {"b": 3, "b": 4}}"#,
        )
        .unwrap();
    assert_eq!(doc.to_string(), r#"{"a":{"b":4},"c":2}"#);
    // Many members of one name (the hashed path).
    let mut text = String::from("{");
    for i in 0..100 {
        text.push_str(&format!(r#""k{}": {i}, "#, i % 40));
    }
    text.push_str(r#""z": 0}"#);
    let paths: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    let selector = Selector::body_paths(&paths);
    let doc = x.extract(&selector, text.as_bytes()).unwrap();
    let Node::Object(members) = doc else {
        panic!("not an object")
    };
    assert_eq!(members.len(), 40);
    assert_eq!(members[0].name, "k0");
    assert_eq!(members[0].value, Node::Number("80"));
    assert_eq!(members[39].value, Node::Number("79"));
}

#[test]
fn top_level_values_other_than_objects_keep_their_kind_only() {
    let mut x = Extractor::new();
    let sel = Selector::body_paths(["a"]);
    assert_eq!(x.extract(&sel, br#"[{"a": 1}]"#).unwrap(), Node::Array(&[]));
    assert_eq!(x.extract(&sel, br#" "s" "#).unwrap(), Node::String("s"));
    assert_eq!(x.extract(&sel, b"1.50").unwrap(), Node::Number("1.50"));
    assert_eq!(x.extract(&sel, b"null").unwrap(), Node::Null);
    let sel = Selector::event(["subject"], [[""; 0]]);
    assert_eq!(x.extract(&sel, br#"[1]"#).unwrap(), Node::Array(&[]));
    assert_eq!(
        x.extract(&sel, br#"{"data": [1, {"a": 1}, [2]], "id": 1}"#)
            .unwrap()
            .to_string(),
        r#"{"data":[1]}"#
    );
}

#[test]
fn a_warm_extractor_reuses_its_memory() {
    let mut x = Extractor::new();
    let sel = Selector::body_paths(["R.a", "R.b", "s"]);
    let body = br#"{"R": [{"a": 1, "b": "\u0041"}, {"a": 2}], "s": "x\ny", "skip": [1, 2, 3]}"#;
    let first = x.extract(&sel, body).unwrap().to_string();
    let arena = x.arena_bytes();
    for _ in 0..1000 {
        assert_eq!(x.extract(&sel, body).unwrap().to_string(), first);
    }
    assert_eq!(x.arena_bytes(), arena);
    assert_eq!(first, r#"{"R":[{"a":1,"b":"A"},{"a":2}],"s":"x\ny"}"#);
}

#[test]
fn many_wanted_names_use_the_hashed_lookups() {
    // Event Grid: more top-level names than the linear scan takes, found ignoring case, every
    // case variant kept, no variant taken for a duplicate of another.
    let names: Vec<String> = (0..20).map(|i| format!("name{i}")).collect();
    let selector = Selector::event(&names, [["x"]]);
    let mut x = Extractor::new();
    let doc = x
        .extract(
            &selector,
            br#"{"NAME3": 1, "name3": 2, "Name3": 3, "name30": 4, "DaTa": {"x": 5, "y": 6}, "name19": 7}"#,
        )
        .unwrap();
    assert_eq!(
        doc.to_string(),
        r#"{"NAME3":1,"name3":2,"Name3":3,"DaTa":{"x":5},"name19":7}"#
    );
    // SNS: more wanted children than the duplicate bitmask has bits.
    let paths: Vec<String> = (0..70).map(|i| format!("p{i}")).collect();
    let selector = Selector::body_paths(&paths);
    let doc = x
        .extract(
            &selector,
            br#"{"p69": 1, "p1": 2, "p69": 3, "p68": 4, "p1": 5}"#,
        )
        .unwrap();
    assert_eq!(doc.to_string(), r#"{"p69":3,"p1":5,"p68":4}"#);
}

#[test]
fn selectors_from_key_tables() {
    let mut x = Extractor::new();
    let keys = [
        Key::BodyIsObject,
        Key::BodyPath("a.b".into()),
        Key::BodyPathEach("c".into()),
        Key::AttributeText("ignored".into()),
    ];
    let selector = Selector::for_keys(&keys);
    let doc = x
        .extract(
            &selector,
            br#"{"a": {"b": 1, "z": 0}, "a.b": 2, "c": [3], "d": 4}"#,
        )
        .unwrap();
    assert_eq!(doc.to_string(), r#"{"a":{"b":1},"a.b":2,"c":[3]}"#);
    let keys = [
        Key::EventMember("eventType".into()),
        Key::EventData(vec!["a".into()].into()),
    ];
    let selector = Selector::for_keys(&keys);
    let doc = x
        .extract(
            &selector,
            br#"{"EventType": "t", "a": 0, "data": {"a": [1, [2]], "b": 3}}"#,
        )
        .unwrap();
    assert_eq!(doc.to_string(), r#"{"EventType":"t","data":{"a":[1]}}"#);
}

/// One random edit of `bytes`: delete, duplicate, or replace a byte with a grammar character
/// (or a byte that is not ASCII).
fn corrupt(rng: &mut Rng, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    let at = rng.below(bytes.len());
    match rng.below(3) {
        0 => {
            bytes.remove(at);
        }
        1 => bytes.insert(at, bytes[at]),
        _ => bytes[at] = rng.pick(b"{}[],:\"\\ 0-.eE+tfnu\x01\xff\xc3"),
    }
}

/// Trusted mode on corrupted documents (a few random edits each, and random bytes): it never
/// panics; where the validating reader accepts the input, the trusted one keeps the same pruned
/// document with the same measured depth; where the validating reader rejects it, the trusted
/// one may accept it, and that must happen (the skip is unchecked), on selectors of every kind.
/// The outline (how a document's shape is told) behaves the same way.
#[test]
fn trusted_reader_agrees_where_the_validating_one_accepts() {
    let mut rng = Rng(0x5eed_0004);
    let selectors = [
        Selector::body_paths(["a", "a.b", "b"]),
        Selector::body_paths(["x"]),
        Selector::event(["subject"], [["a", "b"]]),
    ];
    let mut validating = Extractor::new();
    let mut trusted = Extractor::new();
    trusted.set_read_mode(ReadMode::Trusted);
    let (mut both, mut only_trusted, mut neither) = (0, 0, 0);
    for case in 0..30_000 {
        let mut bytes = if rng.chance(10) {
            (0..rng.below(40))
                .map(|_| rng.pick(b"{}[]\"\\:, ax0\xff"))
                .collect()
        } else {
            let names = if rng.chance(50) {
                BODY_NAMES
            } else {
                EVENT_NAMES
            };
            document(&mut rng, names).into_bytes()
        };
        for _ in 0..rng.below(4) {
            corrupt(&mut rng, &mut bytes);
        }
        let selector = &selectors[case % selectors.len()];
        let checked = validating
            .extract_measured(selector, &bytes)
            .map(|(node, deepest)| (node.to_string(), deepest));
        let skipped = trusted
            .extract_measured(selector, &bytes)
            .map(|(node, deepest)| (node.to_string(), deepest));
        match (&checked, &skipped) {
            (Ok(_), _) => {
                assert_eq!(
                    skipped,
                    checked,
                    "case {case}: {}",
                    String::from_utf8_lossy(&bytes)
                );
                both += 1;
            }
            (Err(_), Ok(_)) => only_trusted += 1,
            (Err(_), Err(_)) => neither += 1,
        }
        // The outline: the same top-level members where the validating one reads them all.
        let outline = |mode| -> Result<Vec<String>, json::Error> {
            match json::outline_with(&bytes, mode)? {
                json::Outline::Object(members) => members
                    .map(|m| m.map(|(name, value)| format!("{}={:?}", name.decode(), value.text())))
                    .collect(),
                json::Outline::Array(elements) => elements
                    .map(|e| e.map(|value| format!("{:?}", value.text())))
                    .collect(),
                json::Outline::Scalar(value) => Ok(vec![format!("{:?}", value.text())]),
            }
        };
        if let Ok(members) = outline(ReadMode::Validating) {
            assert_eq!(
                outline(ReadMode::Trusted).as_ref(),
                Ok(&members),
                "case {case}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
    eprintln!(
        "{both} accepted by both, {only_trusted} by the trusted reader only, {neither} by neither"
    );
    assert!(both > 5_000 && only_trusted > 1_000 && neither > 1_000);
}

/// The trusted skip's edges: what it passes over unchecked, what it still rejects (an unclosed
/// string or container, a value that is not there), and depth measured in both modes.
#[test]
fn trusted_skip_edges() {
    let selector = Selector::body_paths(["a"]);
    let read = |mode, input: &[u8]| {
        let mut x = Extractor::new();
        x.set_read_mode(mode);
        x.extract_measured(&selector, input)
            .map(|(node, deepest)| (node.to_string(), deepest))
    };
    // Passed over unchecked: bad numbers, literals, escapes, UTF-8, control bytes, commas,
    // mismatched brackets, brackets and quotes in strings.
    for skipped in [
        &b"01"[..],
        b"tru",
        b"\"\\x\"",
        b"\"\xff\x01\"",
        b"[1,,2}",
        b"{\"k\" 1 2]",
        b"[\"]\" \"\\\"]\"}",
        b"-",
    ] {
        let mut input = b"{\"z\": ".to_vec();
        input.extend_from_slice(skipped);
        input.extend_from_slice(b", \"a\": 1}");
        let shown = String::from_utf8_lossy(&input).into_owned();
        assert!(read(ReadMode::Validating, &input).is_err(), "{shown}");
        assert_eq!(
            read(ReadMode::Trusted, &input),
            Ok((r#"{"a":1}"#.to_owned(), 0)),
            "{shown}"
        );
    }
    // Still errors: what a filter reads, the structure of the object it reads, unclosed values.
    for bad in [
        &br#"{"a": 01}"#[..],
        br#"{"a": tru}"#,
        br#"{"a": "\x"}"#,
        br#"{"z": 1 "a": 1}"#,
        br#"{"z": , "a": 1}"#,
        br#"{"z": "open, "a": 1}"#,
        br#"{"z": [[1], "a": 1}"#,
        br#"{"z": "\"#,
        br#"{"z": 1, "a": 1} x"#,
        br#"{"a\x": 1}"#,
    ] {
        assert!(
            read(ReadMode::Trusted, bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    // Depth beyond 64 levels is measured the same way in a skipped value.
    for levels in [63, 64, 65, 200, 10_000] {
        let deep = format!(
            r#"{{"z": {}{}, "a": 2}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        );
        let validating = read(ReadMode::Validating, deep.as_bytes());
        assert_eq!(
            read(ReadMode::Trusted, deep.as_bytes()),
            validating,
            "{levels}"
        );
        let expected = if levels + 1 > 64 { levels + 1 } else { 0 };
        assert_eq!(validating.map(|(_, d)| d), Ok(expected), "{levels}");
    }
    // Unbalanced: many opens never closed is an error, not a loop or a stack.
    let open = format!(r#"{{"z": {}"#, "[{".repeat(100_000));
    assert!(read(ReadMode::Trusted, open.as_bytes()).is_err());
}

/// `Extractor::extract_noting_first_name` notes, in the same read, whether the top-level
/// object's first member name fails the test (escapes decoded, the name checked as a validating
/// read checks it, in both modes), and the document read is the one `extract` reads.
#[test]
fn the_first_member_name_is_noted_in_the_same_read() {
    fn listed(name: &[u8]) -> bool {
        name == b"Message" || name == b"body"
    }
    let selector = Selector::body_paths(["store"]);
    let cases: [(&[u8], bool); 11] = [
        (br#"{"store": "x", "body": 1}"#, true),
        (br#" { "\u0073tore" : "x"}"#, true),
        (br#"{"": 1, "store": "x"}"#, true),
        (br#"{"store": "x", "n": [01]}"#, true),
        (br#"{"body": 1, "store": "x"}"#, false),
        (br#"{"\u0062ody": 1}"#, false),
        (br#"{"Message": "m"}"#, false),
        (b"{\"st\x01ore\": 1}", false),
        (b"{\"st\xc3\xa9\": 1}", true),
        (br#"[{"store": "x"}]"#, false),
        (b"{}", false),
    ];
    for mode in [ReadMode::Validating, ReadMode::Trusted] {
        for (doc, unlisted) in cases {
            let mut noting = Extractor::new();
            noting.set_read_mode(mode);
            let mut plain = Extractor::new();
            plain.set_read_mode(mode);
            let (read, noted) = noting.extract_noting_first_name(&selector, doc, listed);
            let expected = plain.extract(&selector, doc);
            assert_eq!(noted, unlisted, "{mode:?} {}", String::from_utf8_lossy(doc));
            assert_eq!(
                read.map(|(node, _)| node.to_value())
                    .map_err(|e| e.to_string()),
                expected
                    .map(|node| node.to_value())
                    .map_err(|e| e.to_string())
            );
        }
    }
}

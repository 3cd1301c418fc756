//! EventBridge events whose `exists: false` the binder's rows cannot judge (EB-10; module `body`
//! of `filtervm_vm::bind`, "Where rows fall short") get a verdict, the reference interpreter's,
//! through every entry point: a [`Filter`] (bytes, owned message, try and plain), the same filter
//! after a wire round trip, a [`SubscriptionSet`] and a [`LiveSet`] (beside a filter without
//! `exists: false` in the same group, and a second subscriber of the same filter). Each case is
//! checked to reach that fallback: the filter's own key table binds the event
//! [`Judgement::Unsupported`].

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use filtervm_compiler::{
    Dialect, ErrorCode, Evaluator, Filter, LiveSet, MessageParts, Options, SetScratch,
    SubscriptionSet, compile_text,
};
use filtervm_conformance::reference;
use filtervm_vm::bind::{Bindings, Judgement};
use filtervm_vm::message::Message;

fn compile(pattern: &str) -> Filter {
    compile_text(Dialect::EventBridge, pattern, &Options::EventBridge)
        .unwrap_or_else(|e| panic!("{pattern}: {e}"))
}

fn reference(pattern: &str, event: &str) -> bool {
    reference::evaluate_text(Dialect::EventBridge, "null", pattern, event)
        .unwrap_or_else(|e| panic!("the reference on {pattern} / {event}: {e}"))
}

/// A pattern without `exists: false` sharing the group (its verdict comes from the rows of the
/// group's table without the absence keys).
const COMPANION: &str = r#"{"r": {"b": ["y"]}}"#;

/// Checks every entry point on `pattern` and `event`; returns the reference's verdict.
fn check(shape: &str, pattern: &str, event: &str) -> bool {
    let filter = compile(pattern);
    assert!(filter.pattern().is_some(), "{shape}: the pattern is kept");
    let mut bindings = Bindings::new();
    assert_eq!(
        bindings
            .bind_json(filter.program().keys(), event.as_bytes())
            .judgement(),
        &Judgement::Unsupported,
        "{shape}: {event} does not reach the exact search"
    );
    let expected = reference(pattern, event);
    let context = format!("{shape}: {pattern} on {event}");
    let mut evaluator = Evaluator::new();
    let loaded = Filter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(loaded.pattern(), filter.pattern(), "{context}");
    for (name, f) in [("compiled", &filter), ("loaded", &loaded)] {
        assert_eq!(
            evaluator.try_matches_bytes(f, event.as_bytes()),
            Ok(expected),
            "{context} ({name}, bytes)"
        );
        assert_eq!(
            evaluator.matches_bytes(f, event.as_bytes()),
            Ok(expected),
            "{context} ({name})"
        );
        let message = Message::Body(event.as_bytes().to_vec());
        assert_eq!(
            evaluator.try_matches(f, &message),
            Ok(expected),
            "{context} ({name}, owned)"
        );
        assert_eq!(evaluator.matches(f, &message), expected, "{context}");
    }
    // A set and a live set: the filter (twice, and its loaded copy) beside a companion.
    let companion = reference(COMPANION, event);
    let mut want: Vec<&str> = Vec::new();
    if expected {
        want.extend(["a", "b", "c"]);
    }
    if companion {
        want.push("d");
    }
    let mut set: SubscriptionSet<&str> = SubscriptionSet::new();
    set.insert("a", &filter).unwrap();
    set.insert("b", &filter).unwrap();
    set.insert("c", &loaded).unwrap();
    set.insert("d", &compile(COMPANION)).unwrap();
    let mut scratch = SetScratch::default();
    let parts = MessageParts::body(event.as_bytes());
    let matches = set.matching(&mut scratch, &parts);
    assert_eq!(matches.unjudged().count(), 0, "{context} (set)");
    let got: Vec<&str> = matches.ids().copied().collect();
    assert_eq!(got, want, "{context} (set)");
    let live: LiveSet<&str> = LiveSet::new();
    live.insert("a", filter.clone()).unwrap();
    live.insert("b", filter).unwrap();
    live.insert("c", loaded).unwrap();
    live.insert("d", compile(COMPANION)).unwrap();
    let snapshot = live.load();
    let matches = snapshot.matching(&mut scratch, &parts);
    assert_eq!(matches.unjudged().count(), 0, "{context} (live set)");
    let got: Vec<&str> = matches.ids().copied().collect();
    assert_eq!(got, want, "{context} (live set)");
    expected
}

/// Each shape with events of both verdicts.
#[test]
fn absences_rows_cannot_judge_get_the_reference_verdict() {
    let fixed = r#"{"r": {"b": ["y"], "c": [{"exists": false}]}}"#;
    let nested = r#"{"r": ["x"], "r.x": [{"exists": false}]}"#;
    let deep = r#"{"d": {"r": {"b": ["y"], "c": [{"exists": false}]}}}"#;
    let cases: &[(&str, &str, &str)] = &[
        (
            "repeated member",
            fixed,
            r#"{"r": [{"c": 1}, {"b": "x"}], "r": {"b": "y"}}"#,
        ),
        (
            "repeated member",
            fixed,
            r#"{"r": [{"c": 1}, {"b": "y"}], "r": {"b": "q"}}"#,
        ),
        (
            "dotted beside nested",
            fixed,
            r#"{"r": [{"c": 1}, {"b": "x"}], "r.b": "y"}"#,
        ),
        (
            "dotted beside nested",
            fixed,
            r#"{"r": [{"c": 1}, {"b": "y"}], "r.b": "z"}"#,
        ),
        (
            "scalars in nested arrays",
            nested,
            r#"{"r": [["x"], {"x": 2}]}"#,
        ),
        (
            "scalars in nested arrays",
            nested,
            r#"{"r": [["x", {"x": 2}]]}"#,
        ),
        (
            "arrays of objects",
            deep,
            r#"{"d": [{"r": [{"c": 1}, {"b": "x"}]}, {"r": [{"c": 2}]}], "d": {"r": {"b": "y"}}}"#,
        ),
        (
            "arrays of objects",
            deep,
            r#"{"d": [{"r": [{"c": 1}, {"b": "y"}]}, {"r": [{"b": "x", "c": 2}]}], "d.r": {"b": "q"}}"#,
        ),
    ];
    let mut verdicts = Vec::new();
    for &(shape, pattern, event) in cases {
        verdicts.push((shape, check(shape, pattern, event)));
    }
    for shape in [
        "repeated member",
        "dotted beside nested",
        "scalars in nested arrays",
        "arrays of objects",
    ] {
        let of: Vec<bool> = verdicts
            .iter()
            .filter(|(s, _)| *s == shape)
            .map(|&(_, v)| v)
            .collect();
        assert!(
            of.contains(&true) && of.contains(&false),
            "{shape}: the cases should cover both verdicts, they give {of:?}"
        );
    }
}

/// A filter saved before patterns were kept (metadata version 2) loads cleanly, without its
/// pattern; an event its rows cannot judge then stays an error that says why.
#[test]
fn filters_saved_without_their_pattern_load_and_say_why() {
    let pattern = r#"{"r": {"b": ["y"], "c": [{"exists": false}]}}"#;
    let filter = compile(pattern);
    let bytes = filter.to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    assert!(text.contains(r#""version":3"#), "{text}");
    assert!(text.contains(r#""pattern":"#), "{text}");
    // Rewrite the metadata as version 2 wrote it: no `pattern`.
    let decoded = filtervm_vm::wire::decode(&bytes).unwrap();
    let metadata = String::from_utf8(decoded.metadata.to_vec()).unwrap();
    let at = metadata.find(r#","pattern":"#).unwrap();
    let old = format!("{}}}", &metadata[..at]).replace(r#""version":3"#, r#""version":2"#);
    let old = filter.program().to_bytes_with_metadata(old.as_bytes());
    let loaded = Filter::from_bytes(&old).unwrap();
    assert!(loaded.pattern().is_none());
    let event = r#"{"r": [{"c": 1}, {"b": "x"}], "r": {"b": "y"}}"#;
    let e = Evaluator::new()
        .try_matches_bytes(&loaded, event.as_bytes())
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageTooComplex);
    // In a set, the group holding it reports the event unjudged.
    let mut set: SubscriptionSet<u32> = SubscriptionSet::new();
    set.insert(1, &loaded).unwrap();
    set.insert(2, &filter).unwrap();
    let mut scratch = SetScratch::default();
    let matches = set.matching(&mut scratch, &MessageParts::body(event.as_bytes()));
    assert_eq!(matches.unjudged().count(), 1);
    // A version 3 file whose pattern does not lower to its IR is refused.
    let other = metadata.replace(r#"\"y\""#, r#"\"z\""#);
    assert_ne!(other, metadata);
    let tampered = filter.program().to_bytes_with_metadata(other.as_bytes());
    let e = Filter::from_bytes(&tampered).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFilterMetadata);
    assert!(e.to_string().contains("does not lower to the IR"), "{e}");
    // Filters that never need their pattern keep writing version 2.
    let plain = compile(r#"{"r": {"b": ["y"]}}"#);
    assert!(plain.pattern().is_none());
    assert!(String::from_utf8_lossy(&plain.to_bytes()).contains(r#""version":2"#));
}

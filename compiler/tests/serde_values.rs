//! What the library makes of a `serde_json::Value` (built with `serde_json`'s default features),
//! as `compile`, `message_from_json` and `Message::Json` document it: numbers as the value holds
//! them (integers exactly, floats as the shortest text that reads back to them), members in the
//! map's order; exact number text and member order come only from bytes or text.

#![expect(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a test failure"
)]

use filtervm_compiler::{
    Dialect, Evaluator, Options, compile, compile_text, message_from_json, message_from_line,
};
use serde_json::json;

fn eventgrid(filter: &str) -> filtervm_compiler::Filter {
    compile_text(
        Dialect::EventGrid,
        &format!(r#"{{"advancedFilters": [{filter}]}}"#),
        &Options::from(Dialect::EventGrid),
    )
    .unwrap()
}

/// Event Grid compares decimals exactly: the event's bytes keep 9007199254740992.5, a
/// `serde_json::Value` holds the nearest binary64, 9007199254740992.
#[test]
fn a_number_serde_json_rounded_stays_rounded_bytes_keep_it() {
    let filter = eventgrid(
        r#"{"operatorType": "NumberGreaterThan", "key": "data.n", "value": 9007199254740992}"#,
    );
    let text = r#"{"data": {"n": 9007199254740992.5}}"#;
    let mut evaluator = Evaluator::new();
    assert!(evaluator.matches_bytes(&filter, text.as_bytes()).unwrap());
    let line = message_from_line(Dialect::EventGrid, filter.options(), text).unwrap();
    assert!(evaluator.matches(&filter, &line));
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(value["data"]["n"].to_string(), "9007199254740992.0");
    assert!(!evaluator.matches_json(&filter, &value).unwrap());
    // A number beyond binary64 cannot be held at all: only bytes carry it.
    assert!(serde_json::from_str::<serde_json::Value>(r#"{"data": {"n": 1e400}}"#).is_err());
    assert!(
        evaluator
            .matches_bytes(&filter, br#"{"data": {"n": 1e400}}"#)
            .unwrap()
    );
}

/// What a `Value` holds is read without change: integers of the whole `u64`/`i64` range exactly,
/// and a float as its shortest text (`0.1` is the decimal 0.1, not 0.1000000000000000055...).
#[test]
fn what_a_value_holds_is_read_unchanged() {
    let big = eventgrid(
        r#"{"operatorType": "NumberIn", "key": "data.n", "values": [18446744073709551615, -9223372036854775808]}"#,
    );
    let tenth = eventgrid(r#"{"operatorType": "NumberIn", "key": "data.n", "values": [0.1]}"#);
    let mut evaluator = Evaluator::new();
    for n in [json!(u64::MAX), json!(i64::MIN)] {
        assert!(
            evaluator
                .matches_json(&big, &json!({"data": {"n": n}}))
                .unwrap(),
            "{n}"
        );
    }
    assert!(
        !evaluator
            .matches_json(&big, &json!({"data": {"n": u64::MAX - 1}}))
            .unwrap()
    );
    assert!(
        evaluator
            .matches_json(&tenth, &json!({"data": {"n": 0.1}}))
            .unwrap()
    );
    assert!(
        !evaluator
            .matches_json(&tenth, &json!({"data": {"n": 0.1 + 0.2 - 0.2}}))
            .unwrap()
    );
}

/// Members come in the map's order: with `serde_json`'s default features sorted by name, so of
/// two case variants of an Event Grid name (read ignoring case, the first one wins) a `Value`
/// offers `DATA` before `Data` whatever the text said; the bytes keep the text's order.
#[test]
fn members_come_in_the_maps_order() {
    let filter = eventgrid(r#"{"operatorType": "StringIn", "key": "data.k", "values": ["first"]}"#);
    let text = r#"{"Data": {"k": "first"}, "DATA": {"k": "second"}}"#;
    let mut evaluator = Evaluator::new();
    assert!(evaluator.matches_bytes(&filter, text.as_bytes()).unwrap());
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    let message = message_from_json(Dialect::EventGrid, filter.options(), &value).unwrap();
    assert!(!evaluator.matches(&filter, &message));
}

/// A policy built with `json!` is compiled as the map orders it (sorted by name); its text keeps
/// the order it was written in, and so do the IR and the errors.
#[test]
fn a_policy_value_is_compiled_in_the_maps_order() {
    let options = Options::from(Dialect::Basaltic);
    let text = r#"{"z": [{"prefix": ""}], "a": [{"prefix": ""}]}"#;
    let from_text = compile_text(Dialect::Basaltic, text, &options).unwrap_err();
    let pointers: Vec<&str> = from_text
        .errors
        .iter()
        .map(|e| e.pointer.as_str())
        .collect();
    assert_eq!(pointers, ["/z/0/prefix", "/a/0/prefix"]);
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    let from_value = compile(Dialect::Basaltic, &value, &options).unwrap_err();
    let pointers: Vec<&str> = from_value
        .errors
        .iter()
        .map(|e| e.pointer.as_str())
        .collect();
    assert_eq!(pointers, ["/a/0/prefix", "/z/0/prefix"]);
}

//! An embedder's serde types beside filtervm. With `arbitrary_precision`, `serde_json` hands
//! numbers to `untagged` and `flatten` as a private map, so both fail ("data did not match any
//! variant", "invalid type: map, expected f64"); with `preserve_order`, maps keep insertion order.
//! filtervm enables neither (it reads exact number text and member order itself), so an
//! embedder's `serde_json` keeps its default behaviour. Under `cargo test --workspace` these tests
//! also see the features of every other member of the workspace.

use filtervm_compiler::{Dialect, Evaluator, Options, compile_text};
use filtervm_embedder_test::{Delivery, Price, Subscription};

#[test]
fn untagged_enums_with_numbers_round_trip() {
    let text = r#"[1999,19.99,"free",-5,0.5]"#;
    let prices: Vec<Price> = serde_json::from_str(text).unwrap();
    assert_eq!(
        prices,
        [
            Price::Cents(1999),
            Price::Amount(19.99),
            Price::Text("free".to_owned()),
            Price::Cents(-5),
            Price::Amount(0.5),
        ]
    );
    assert_eq!(serde_json::to_string(&prices).unwrap(), text);
    // Through a `Value` too (the form a broker often holds).
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    let again: Vec<Price> = serde_json::from_value(value).unwrap();
    assert_eq!(again, prices);
}

#[test]
fn flattened_structs_with_numbers_round_trip() {
    let text = r#"{"id":7,"price":12.5,"retries":3,"backoff":0.25,"region":"eu","weight":2}"#;
    let subscription: Subscription = serde_json::from_str(text).unwrap();
    assert_eq!(subscription.id, 7);
    assert_eq!(subscription.price, Price::Amount(12.5));
    assert_eq!(
        subscription.delivery,
        Delivery {
            retries: 3,
            backoff: 0.25
        }
    );
    assert_eq!(subscription.extra["weight"], serde_json::json!(2));
    let written = serde_json::to_string(&subscription).unwrap();
    assert_eq!(
        serde_json::from_str::<Subscription>(&written).unwrap(),
        subscription
    );
}

/// Without `preserve_order`, `serde_json::Map` is a `BTreeMap`: members come sorted by name,
/// whatever order they were inserted or written in.
#[test]
fn serde_json_maps_keep_sorted_order() {
    let value: serde_json::Value = serde_json::from_str(r#"{"b":1,"c":2,"a":3}"#).unwrap();
    assert_eq!(value.to_string(), r#"{"a":3,"b":1,"c":2}"#);
    let mut map = serde_json::Map::new();
    map.insert("zeta".to_owned(), serde_json::json!(1));
    map.insert("alpha".to_owned(), serde_json::json!(2));
    let keys: Vec<&String> = map.keys().collect();
    assert_eq!(keys, ["alpha", "zeta"]);
}

/// Without `arbitrary_precision`, numbers are `i64`/`u64`/`f64`: `1.50` is read as 1.5 and a
/// number beyond binary64 is an error.
#[test]
fn serde_json_numbers_are_binary() {
    let value: serde_json::Value = serde_json::from_str("1.50").unwrap();
    assert_eq!(value.to_string(), "1.5");
    assert!(value.is_f64());
    assert!(serde_json::from_str::<serde_json::Value>("1e400").is_err());
}

/// filtervm, in the same build, still reads exact numbers and member order from text and bytes.
#[test]
fn filtervm_reads_exact_numbers_itself() {
    let filter = compile_text(
        Dialect::EventGrid,
        r#"{"advancedFilters": [{"operatorType": "NumberGreaterThan", "key": "data.n", "value": 9007199254740992}]}"#,
        &Options::from(Dialect::EventGrid),
    )
    .unwrap();
    let mut evaluator = Evaluator::new();
    for (event, expected) in [
        (&br#"{"data": {"n": 9007199254740992.5}}"#[..], true),
        (br#"{"data": {"n": 9007199254740992}}"#, false),
        (br#"{"data": {"n": 1e400}}"#, true),
    ] {
        assert_eq!(
            evaluator.matches_bytes(&filter, event).unwrap(),
            expected,
            "{}",
            String::from_utf8_lossy(event)
        );
    }
}

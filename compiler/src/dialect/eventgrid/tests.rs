use super::*;
use crate::{Dialect, Evaluator, Options, compile, compile_text};
use serde_json::{Value, json};

fn event() -> Value {
    json!({
        "id": "evt-001", "topic": "/t", "subject": "/a/B/c.JPG",
        "eventType": "Microsoft.Storage.BlobCreated", "eventTime": "2024-01-01T00:00:00Z",
        "dataVersion": "1.0", "metadataVersion": "1",
        "data": {"counter": 5, "tags": ["red", "Green"], "key1": "Azure Data Factory",
                 "big": 9007199254740993u64, "nothing": null, "obj": {"a": 1}}
    })
}

fn check(policy: Value, options: Value, message: &Value) -> bool {
    let options = Options::from_json(Dialect::EventGrid, &options).unwrap();
    let filter = compile(Dialect::EventGrid, &policy, &options)
        .unwrap_or_else(|e| panic!("{policy} should compile: {e}"));
    Evaluator::new()
        .matches_json(&filter, message)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn eg(policy: Value) -> bool {
    check(policy, Value::Null, &event())
}

fn af(op: &str, key: &str, operand: Value) -> Value {
    let mut entry = json!({"operatorType": op, "key": key});
    if let (Some(e), Some(o)) = (entry.as_object_mut(), operand.as_object()) {
        e.extend(o.clone());
    }
    json!({"advancedFilters": [entry]})
}

fn errors(policy: Value) -> Vec<(ErrorCode, String, String)> {
    match compile(
        Dialect::EventGrid,
        &policy,
        &Options::from(Dialect::EventGrid),
    ) {
        Ok(_) => panic!("{policy} should be rejected"),
        Err(e) => e
            .errors
            .into_iter()
            .map(|e| (e.code, e.pointer, e.message))
            .collect(),
    }
}

#[test]
fn eg_16_resolve_envelope_keys_ignoring_ascii_case() {
    let r = |k| resolve_key(Schema::EventGrid, k);
    assert_eq!(r("ID"), Some(Key::EventMember("id".into())));
    assert_eq!(r("EVENTTYPE"), Some(Key::EventMember("eventType".into())));
    assert_eq!(
        r("DataVersion"),
        Some(Key::EventMember("dataVersion".into()))
    );
    assert_eq!(r("Data"), Some(Key::EventData(Vec::new().into())));
    assert_eq!(
        r("data.a.B"),
        Some(Key::EventData(vec!["a".into(), "B".into()].into()))
    );
    assert_eq!(r("eventTime"), None);
    assert_eq!(r("metadataVersion"), None);
    assert_eq!(r("subject.x"), None);
}

#[test]
fn eg_17_resolve_cloudevents_keys() {
    let r = |k| resolve_key(Schema::CloudEvents, k);
    assert_eq!(r("Source"), Some(Key::EventMember("source".into())));
    assert_eq!(
        r("ComExampleExtension1"),
        Some(Key::EventMember("comexampleextension1".into()))
    );
    assert_eq!(
        r("datacontenttype"),
        Some(Key::EventMember("datacontenttype".into()))
    );
    assert_eq!(r("eventType"), None);
    assert_eq!(r("data.x"), Some(Key::EventData(vec!["x".into()].into())));
}

#[test]
fn eg_22_missing_key_answers() {
    for (op, expect) in [
        ("StringNotIn", true),
        ("NumberNotIn", true),
        ("NumberNotInRange", true),
        ("StringNotContains", false),
        ("StringNotBeginsWith", false),
        ("StringNotEndsWith", false),
        ("StringIn", false),
        ("NumberIn", false),
    ] {
        let operand = match op {
            "NumberNotInRange" => json!({"values": [[1, 2]]}),
            o if o.starts_with("Number") => json!({"values": [1]}),
            _ => json!({"values": ["x"]}),
        };
        assert_eq!(
            eg(af(op, "data.missing", operand.clone())),
            expect,
            "{op} missing"
        );
        assert_eq!(
            eg(af(op, "data.nothing", operand.clone())),
            expect,
            "{op} null"
        );
        assert_eq!(eg(af(op, "foo", operand)), expect, "{op} names nothing");
    }
}

#[test]
fn eg_24_array_without_flag_is_false_except_null_operators() {
    assert!(!eg(af(
        "StringNotIn",
        "data.tags",
        json!({"values": ["x"]})
    )));
    assert!(!eg(af("StringIn", "data.tags", json!({"values": ["red"]}))));
    assert!(eg(af("IsNotNull", "data.tags", json!({}))));
    assert!(!eg(af("IsNullOrUndefined", "data.tags", json!({}))));
}

#[test]
fn eg_33_exact_decimal_numbers() {
    assert!(!eg(af(
        "NumberIn",
        "data.big",
        json!({"values": [9007199254740992u64]})
    )));
    assert!(eg(af(
        "NumberIn",
        "data.big",
        json!({"values": [9007199254740993u64]})
    )));
    assert!(eg(af(
        "NumberGreaterThan",
        "data.big",
        json!({"value": 9007199254740992u64})
    )));
    // Written as text, so that the spellings reach the front end as written.
    let five = r#"{"advancedFilters": [{"operatorType": "NumberIn", "key": "data.counter",
            "values": [5e0, 5.0, 50e-1, 4.99999999999999999999]}]}"#;
    let filter =
        compile_text(Dialect::EventGrid, five, &Options::from(Dialect::EventGrid)).unwrap();
    assert!(
        filter
            .lowered_ir()
            .unwrap()
            .to_string()
            .contains("4.99999999999999999999")
    );
    assert!(Evaluator::new().matches_json(&filter, &event()).unwrap());
}

#[test]
fn eg_31_folded_constants_at_compile_time() {
    let f = compile(
        Dialect::EventGrid,
        &af(
            "StringIn",
            "data.key1",
            json!({"values": ["azure data factory", "Straße"]}),
        ),
        &Options::from(Dialect::EventGrid),
    )
    .unwrap();
    let ir = f.lowered_ir().unwrap().to_string();
    assert!(ir.contains("\"AZURE DATA FACTORY\""), "{ir}");
    assert!(ir.contains("\"STRAßE\""), "{ir}");
}

#[test]
fn eg_40_codes_and_pointers() {
    let e = errors(json!({"advancedFilters": [
        {"operatorType": "StringIn", "key": "k", "values": ["a"]},
        {"operatorType": "NumberInRange", "key": "k", "values": [[1, 2], [3, "x"]]},
        {"operatorType": "Nope", "key": ""},
        {"key": "k"},
        7
    ]}));
    let got: Vec<(ErrorCode, &str)> = e.iter().map(|(c, p, _)| (*c, p.as_str())).collect();
    assert_eq!(
        got,
        vec![
            (CODE, "/advancedFilters/1/values/1/1"),
            (CODE, "/advancedFilters/2/operatorType"),
            (CODE, "/advancedFilters/2/key"),
            (CODE, "/advancedFilters/3/operatorType"),
            (CODE, "/advancedFilters/4"),
        ]
    );
    assert!(e[0].2.contains("range"));
    assert!(e[1].2.contains("operator"));
    assert!(e[2].2.contains("key"));
    let e = errors(af("StringNotBeginWith", "k", json!({"values": ["a"]})));
    assert!(
        e[0].2.contains("did you mean `StringNotBeginsWith`?"),
        "{}",
        e[0].2
    );
}

#[test]
fn eg_40_limits() {
    let long = "é".repeat(513);
    let e = errors(af("StringIn", "k", json!({"values": ["ok", long]})));
    assert_eq!(e[0].0, LIMIT_CODE);
    assert_eq!(e[0].1, "/advancedFilters/0/values/1");
    assert!(e[0].2.contains("512") && e[0].2.contains("limit"));
    let ok = af("StringIn", "k", json!({"values": ["é".repeat(512)]}));
    assert!(compile(Dialect::EventGrid, &ok, &Options::from(Dialect::EventGrid)).is_ok());

    let filters: Vec<Value> = (0..26)
        .map(|_| json!({"operatorType": "IsNotNull", "key": "id"}))
        .collect();
    let e = errors(json!({ "advancedFilters": filters }));
    assert_eq!(
        (e[0].0, e[0].1.as_str()),
        (LIMIT_CODE, "/advancedFilters/25")
    );

    let e = errors(json!({"advancedFilters": [
        {"operatorType": "NumberIn", "key": "k", "values": (0..20).collect::<Vec<i32>>()},
        {"operatorType": "NumberLessThan", "key": "k", "value": 1},
        {"operatorType": "NumberInRange", "key": "k", "values": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]}
    ]}));
    assert_eq!(
        (e[0].0, e[0].1.as_str()),
        (LIMIT_CODE, "/advancedFilters/2/values/4")
    );
    assert!(e[0].2.contains("limit") && e[0].2.contains("25"));
}

#[test]
fn options_schema_and_invalid_options() {
    let ce = json!({"type": "t", "subject": "s"});
    assert!(check(
        json!({"includedEventTypes": ["T"]}),
        json!({"schema": "CloudEventSchemaV1_0"}),
        &ce
    ));
    for bad in [json!({"schema": "Custom"}), json!({"scope": "x"}), json!(3)] {
        let e = Options::from_json(Dialect::EventGrid, &bad).unwrap_err();
        assert_eq!(e.errors[0].code, ErrorCode::InvalidOptions);
    }
}

#[test]
fn message_from_line_rejects_non_json() {
    assert!(message_from_line("{not json").is_err());
    assert_eq!(message_from_line("[1]"), Ok(Message::Body(b"[1]".to_vec())));
}

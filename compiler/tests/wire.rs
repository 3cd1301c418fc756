//! Filters on the wire (`Filter::to_bytes`, README.md "The library"): every conformance vector's
//! filter survives `to_bytes`/`from_bytes` and gives the same verdicts; generated policies of the
//! header and attribute dialects behave the same before and after the trip; corrupt filter
//! encodings are rejected or run safely; and the CLI's `compile --output` / `match --program` round
//! trip.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::wire::LoadError;
use filtervm_compiler::{
    Dialect, Evaluator, Filter, Options, compile, compile_value, message_from_json,
};
use filtervm_vm::json;
use filtervm_vm::message::Message;
use filtervm_vm::wire::WireError;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use support::all_cases;

mod support;

/// A tiny deterministic PRNG (xorshift64*), so the tests need no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Round-trips `filter` and checks the loaded copy: same dialect, options, program and IR (the
/// IR's text form shows every node with its origin).
fn round_trip(filter: &Filter) -> Filter {
    let bytes = filter.to_bytes();
    let loaded = Filter::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("round trip failed: {e}\n{}", filter.program().disassemble()));
    assert_eq!(loaded.dialect(), filter.dialect());
    assert_eq!(loaded.options(), filter.options());
    assert_eq!(
        loaded.program().disassemble(),
        filter.program().disassemble()
    );
    let text = |f: &Filter| {
        (
            f.lowered_ir().map(ToString::to_string),
            f.ir().map(ToString::to_string),
        )
    };
    assert!(loaded.lowered_ir().is_some(), "the IR travels");
    assert_eq!(text(&loaded), text(filter));
    assert_eq!(loaded.to_bytes(), bytes, "the encoding is canonical");
    loaded
}

#[test]
fn every_conformance_filter_round_trips_with_the_same_verdicts() {
    let mut per_dialect: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut evaluator = Evaluator::new();
    for case in all_cases() {
        let text = |name: &str| case.get(name).and_then(json::Value::as_str).unwrap_or("?");
        let id = text("id").to_owned();
        let Ok(dialect) = text("dialect").parse::<Dialect>() else {
            continue;
        };
        let Ok(options) =
            Options::from_json(dialect, case.get("options").unwrap_or(&json::Value::Null))
        else {
            continue;
        };
        let Some(Ok(filter)) = case
            .get("policy")
            .map(|p| compile_value(dialect, p, &options))
        else {
            continue;
        };
        let loaded = round_trip(&filter);
        if let Some(message) = case.get("message").map(json::Value::to_serde_json) {
            let message = &message;
            let read = message_from_json(dialect, &options, message);
            let read_loaded = message_from_json(loaded.dialect(), loaded.options(), message);
            assert_eq!(read.is_ok(), read_loaded.is_ok(), "{id}");
            if let (Ok(m), Ok(ml)) = (read, read_loaded) {
                assert_eq!(
                    evaluator.matches(&loaded, &ml),
                    evaluator.matches(&filter, &m),
                    "{id}: the loaded filter disagrees with the compiled one"
                );
                *per_dialect.entry(dialect.name()).or_default() += 1;
            }
        }
    }
    // Every dialect is covered by the vectors' policies and messages (each has at least 54 today).
    for dialect in Dialect::ALL {
        assert!(
            per_dialect.get(dialect.name()).copied().unwrap_or(0) >= 40,
            "{dialect}: too few vectors round-tripped and evaluated: {per_dialect:?}"
        );
    }
    eprintln!("round-tripped and evaluated: {per_dialect:?}");
}

// ---------------------------------------------------------------------------------------------
// Generated policies and messages
// ---------------------------------------------------------------------------------------------

const NAMES: &[&str] = &["event", "amount", "region", "test"];
const STRINGS: &[&str] = &[
    "order.paid",
    "order.created",
    "eu-west",
    "EU-West",
    "us-east",
    "",
    "100",
    "1e2",
    "99.5",
    "-3",
    "true",
    "ß",
];
const NUMBERS: &[f64] = &[-3.0, 0.0, 1.0, 99.5, 100.0, 1000.0, 1e300];

fn number(rng: &mut XorShift) -> Value {
    json!(*rng.pick(NUMBERS))
}

fn string(rng: &mut XorShift) -> Value {
    json!(*rng.pick(STRINGS))
}

fn basaltic_policy(rng: &mut XorShift) -> Value {
    let mut policy = serde_json::Map::new();
    for _ in 0..1 + rng.below(3) {
        let alternatives: Vec<Value> = (0..1 + rng.below(3))
            .map(|_| match rng.below(8) {
                0 | 1 => string(rng),
                2 => number(rng),
                3 => json!({"prefix": rng.pick(&["order.", "eu", "1"])}),
                4 => json!({"suffix": rng.pick(&[".paid", "west", "0"])}),
                5 => {
                    if rng.chance(50) {
                        json!({"anything-but": string(rng)})
                    } else {
                        json!({"anything-but": [string(rng), number(rng)]})
                    }
                }
                6 => json!({"exists": rng.chance(50)}),
                _ => {
                    let ops = [">", ">=", "<", "<=", "="];
                    if rng.chance(50) {
                        json!({"numeric": [rng.pick(&ops), number(rng)]})
                    } else {
                        json!({"numeric": [">=", number(rng), "<", number(rng)]})
                    }
                }
            })
            .collect();
        policy.insert(rng.pick(NAMES).to_string(), Value::Array(alternatives));
    }
    Value::Object(policy)
}

fn basaltic_message(rng: &mut XorShift) -> Value {
    let mut attrs = serde_json::Map::new();
    for _ in 0..rng.below(4) {
        let ty = *rng.pick(&["String", "Number"]);
        attrs.insert(
            rng.pick(NAMES).to_string(),
            json!({"type": ty, "value": rng.pick(STRINGS)}),
        );
    }
    json!({ "attributes": attrs })
}

fn stream_policy(rng: &mut XorShift) -> Value {
    let groups: Vec<Value> = (0..1 + rng.below(3))
        .map(|_| {
            (0..1 + rng.below(3))
                .map(|_| {
                    let header = *rng.pick(NAMES);
                    match rng.below(6) {
                        0 => json!({"op": "exists", "header": header}),
                        1 => json!({"op": "missing", "header": header}),
                        2 => json!({"op": "in", "header": header,
                                    "values": [rng.pick(&["eu-*", "order.*", "us-east"]), string(rng)]}),
                        3 => json!({"op": rng.pick(&["<", "<=", ">", ">="]), "header": header,
                                    "values": [number(rng)]}),
                        4 => json!({"op": "!=", "header": header, "values": [string(rng)]}),
                        _ => json!({"op": "=", "header": header,
                                    "values": [rng.pick(&["eu-*", "order.**", "*.paid", "us-east"])]}),
                    }
                })
                .collect()
        })
        .collect();
    json!({ "groups": groups })
}

fn expr_policy(rng: &mut XorShift, depth: usize) -> Value {
    if depth > 0 && rng.chance(40) {
        let op = *rng.pick(&["AND", "OR", "NOT"]);
        let n = if op == "NOT" { 1 } else { 1 + rng.below(3) };
        let exp: Vec<Value> = (0..n).map(|_| expr_policy(rng, depth - 1)).collect();
        return json!({"op": op, "exp": exp});
    }
    let key = *rng.pick(NAMES);
    match rng.below(5) {
        0 => json!({"key": key, "op": "exists"}),
        1 => json!({"key": key, "op": "in", "value": [string(rng), string(rng)]}),
        2 => json!({"key": key, "op": "startsWith", "value": rng.pick(&["order.", "eu", ""])}),
        3 => json!({"key": key, "op": "endsWith", "value": rng.pick(&[".paid", "west"])}),
        _ => json!({"key": key, "op": "contains", "value": rng.pick(&["-", "der"])}),
    }
}

fn headers_message(rng: &mut XorShift) -> Value {
    let mut headers = serde_json::Map::new();
    for _ in 0..rng.below(4) {
        headers.insert(rng.pick(NAMES).to_string(), string(rng));
    }
    json!({ "headers": headers })
}

/// Compiles generated policies; each that compiles is round-tripped and compared on generated
/// messages. Returns how many policies compiled.
fn property(
    dialect: Dialect,
    seed: u64,
    cases: usize,
    policy: impl Fn(&mut XorShift) -> Value,
    message: impl Fn(&mut XorShift) -> Value,
) -> usize {
    let mut rng = XorShift(seed);
    let mut evaluator = Evaluator::new();
    let mut compiled = 0;
    for case in 0..cases {
        let p = policy(&mut rng);
        let Ok(filter) = compile(dialect, &p, &Options::from(dialect)) else {
            continue;
        };
        compiled += 1;
        let loaded = round_trip(&filter);
        for _ in 0..12 {
            let m = message(&mut rng);
            let (Ok(a), Ok(b)) = (
                message_from_json(dialect, filter.options(), &m),
                message_from_json(loaded.dialect(), loaded.options(), &m),
            ) else {
                continue;
            };
            assert_eq!(
                evaluator.matches(&loaded, &b),
                evaluator.matches(&filter, &a),
                "{dialect} case {case}: policy {p} message {m}"
            );
        }
    }
    compiled
}

#[test]
fn property_generated_basaltic_policies_behave_the_same_after_the_trip() {
    let compiled = property(
        Dialect::Basaltic,
        0x5eed_0001,
        300,
        basaltic_policy,
        basaltic_message,
    );
    assert!(
        compiled >= 150,
        "only {compiled} generated policies compiled"
    );
}

#[test]
fn property_generated_stream_and_expr_policies_behave_the_same_after_the_trip() {
    let stream = property(
        Dialect::Stream,
        0x5eed_0002,
        200,
        stream_policy,
        headers_message,
    );
    let expr = property(
        Dialect::Expr,
        0x5eed_0003,
        200,
        |rng| expr_policy(rng, 3),
        headers_message,
    );
    assert!(
        stream >= 50 && expr >= 50,
        "compiled: stream {stream}, expr {expr}"
    );
}

// ---------------------------------------------------------------------------------------------
// Corruption and metadata
// ---------------------------------------------------------------------------------------------

fn sample_filter() -> Filter {
    compile(
        Dialect::Basaltic,
        &json!({
            "event": ["order.created", "order.paid"],
            "amount": [{"numeric": [">=", 100, "<", 1000]}],
            "region": [{"prefix": "eu"}, {"anything-but": ["eu-north", 5]}],
            "test": [{"exists": false}]
        }),
        &Options::Basaltic,
    )
    .unwrap()
}

#[test]
fn every_truncation_of_a_filter_is_rejected() {
    let bytes = sample_filter().to_bytes();
    for len in 0..bytes.len() {
        assert!(Filter::from_bytes(&bytes[..len]).is_err(), "length {len}");
    }
}

#[test]
fn flipping_any_byte_of_a_filter_never_panics() {
    let bytes = sample_filter().to_bytes();
    let mut rng = XorShift(3);
    let messages: Vec<Value> = (0..6).map(|_| basaltic_message(&mut rng)).collect();
    let mut evaluator = Evaluator::new();
    for at in 0..bytes.len() {
        for mask in [0x01u8, 0x20, 0xff] {
            let mut corrupt = bytes.clone();
            corrupt[at] ^= mask;
            if let Ok(f) = Filter::from_bytes(&corrupt) {
                for m in &messages {
                    let _ = evaluator.matches_json(&f, m);
                }
                let _ = evaluator.matches(&f, &Message::Unparsable);
            }
        }
    }
}

#[test]
fn a_program_without_filter_metadata_is_rejected() {
    let program = sample_filter().program().clone();
    assert!(matches!(
        Filter::from_bytes(&program.to_bytes()),
        Err(LoadError::Metadata(_))
    ));
    assert!(matches!(
        Filter::from_bytes(b"FVMP\x09\x00\x00\x00"),
        Err(LoadError::Program(WireError::UnsupportedVersion {
            found: 9
        }))
    ));
}

#[test]
fn options_travel_with_the_filter() {
    let cases = [
        (
            Dialect::Sns,
            json!({"scope": "MessageBody"}),
            json!({"a": ["x"]}),
        ),
        (
            Dialect::EventGrid,
            json!({"schema": "CloudEventSchemaV1_0"}),
            json!({"includedEventTypes": ["T"]}),
        ),
        (
            Dialect::Expr,
            json!({"max_depth": 4}),
            json!({"key": "a", "op": "exists"}),
        ),
    ];
    for (dialect, options, policy) in cases {
        let options = Options::from_json(dialect, &options).unwrap();
        let filter = compile(dialect, &policy, &options).unwrap();
        let loaded = round_trip(&filter);
        assert_eq!(loaded.options(), &options);
        assert_ne!(loaded.options(), &Options::from(dialect));
    }
}

#[test]
fn loaded_filters_intern_like_compiled_ones() {
    use filtervm_compiler::intern::FilterIdentity;
    let a = Filter::from_bytes(&sample_filter().to_bytes()).unwrap();
    let b = Filter::from_bytes(&sample_filter().to_bytes()).unwrap();
    let other = compile(
        Dialect::Basaltic,
        &json!({"event": ["x"]}),
        &Options::Basaltic,
    )
    .unwrap();
    let c = Filter::from_bytes(&other.to_bytes()).unwrap();
    assert_eq!(FilterIdentity::of(&a), FilterIdentity::of(&b));
    assert_ne!(FilterIdentity::of(&a), FilterIdentity::of(&c));
    // The IR travels, so a loaded filter is the same filter as the one compiled.
    assert_eq!(FilterIdentity::of(&a), FilterIdentity::of(&sample_filter()));
}

/// A filter loaded from bytes joins a subscription set (its IR travels) and is the same
/// subscription there as the filter it was written from: compile → to_bytes → from_bytes →
/// insert gives the answers of the compiled filter, and the two share one stored filter.
#[test]
fn loaded_filters_join_a_set_and_share_with_compiled_ones() {
    use filtervm_compiler::{MessageParts, SetScratch, SubscriptionSet};
    use filtervm_vm::message::{Attribute, AttributeType};
    let policies = [
        json!({"event": ["order.paid"], "amount": [{"numeric": [">", 5]}]}),
        json!({"event": [{"prefix": "order."}], "$or": [{"env": ["prod"]}, {"tier": ["gold"]}]}),
        json!({"event": [{"anything-but": ["order.paid"]}]}),
    ];
    let mut set = SubscriptionSet::new();
    let mut one_by_one = Vec::new();
    for (i, policy) in policies.iter().enumerate() {
        let compiled = compile(Dialect::Sns, policy, &Options::from(Dialect::Sns)).unwrap();
        let loaded = Filter::from_bytes(&compiled.to_bytes()).unwrap();
        set.insert(2 * i as u64, &compiled).unwrap();
        set.insert(2 * i as u64 + 1, &loaded).unwrap();
        one_by_one.push((2 * i as u64 + 1, loaded));
    }
    assert_eq!(
        set.distinct_filters(),
        policies.len(),
        "loaded and compiled intern together"
    );
    let mut evaluator = Evaluator::new();
    let mut scratch = SetScratch::new();
    let attribute = |name: &str, data_type, value: &str| Attribute {
        name: name.into(),
        data_type,
        value: value.into(),
    };
    for attrs in [
        vec![
            attribute("event", AttributeType::String, "order.paid"),
            attribute("amount", AttributeType::Number, "7"),
        ],
        vec![
            attribute("event", AttributeType::String, "order.shipped"),
            attribute("tier", AttributeType::String, "gold"),
        ],
        vec![attribute("event", AttributeType::String, "user.login")],
    ] {
        let message = MessageParts::attributes(attrs.as_slice());
        let got: Vec<u64> = set
            .matching(&mut scratch, &message)
            .ids()
            .copied()
            .collect();
        let expected: Vec<u64> = one_by_one
            .iter()
            .filter(|(_, f)| evaluator.matches_parts(f, &message) == Ok(true))
            .flat_map(|(id, _)| [id - 1, *id])
            .collect();
        assert!(
            !expected.is_empty(),
            "every message matches some policy: {attrs:?}"
        );
        assert_eq!(got, expected, "{attrs:?}");
    }
}

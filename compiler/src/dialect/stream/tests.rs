use super::*;
use crate::error::ErrorCode;
use crate::{Dialect, Evaluator, Options, compile};
use filtervm_vm::message::{Header, Message};
use serde_json::{Value, json};

fn hdrs(pairs: &[(&str, &str)]) -> Message {
    Message::headers(pairs.iter().copied())
}

fn eval(policy: &Value, msg: &Message) -> bool {
    match compile(Dialect::Stream, policy, &Options::Stream) {
        Ok(f) => Evaluator::new().matches(&f, msg),
        Err(e) => panic!("{policy} rejected: {e}"),
    }
}

fn clause(op: &str, header: &str, values: Value) -> Value {
    json!({"groups": [[{"op": op, "header": header, "values": values}]]})
}

#[test]
fn s8_header_names_exact_and_dotted() {
    let p = clause("=", "Region", json!(["eu"]));
    assert!(eval(&p, &hdrs(&[("Region", "eu")])));
    assert!(!eval(&p, &hdrs(&[("region", "eu")])));
    let p = clause("exists", "a.b", json!([]));
    assert!(eval(&p, &hdrs(&[("a.b", "")])));
    assert!(!eval(&p, &hdrs(&[("a", "b")])));
}

#[test]
fn s9_numeric_text_grammar() {
    let p = clause(">=", "n", json!([5]));
    for yes in ["5", "5.0", "50e-1", "1e3", "1E3", "1e+3"] {
        assert!(eval(&p, &hdrs(&[("n", yes)])), "{yes}");
    }
    for no in [
        " 5", "5 ", "+5", ".5", "5.", "05", "0x10", "1e400", "NaN", "", "4",
    ] {
        assert!(!eval(&p, &hdrs(&[("n", no)])), "{no}");
    }
    let p = clause(">", "n", json!([9007199254740992u64]));
    assert!(!eval(&p, &hdrs(&[("n", "9007199254740993")])));
    let p = clause("<=", "n", json!([0]));
    assert!(eval(&p, &hdrs(&[("n", "-0")])));
}

#[test]
fn seed_not_equal_matches_missing_and_multi_valued_headers() {
    let p = clause("!=", "h", json!(["a.*"]));
    assert!(eval(&p, &hdrs(&[])));
    assert!(eval(&p, &hdrs(&[("h", "b.x")])));
    assert!(!eval(&p, &hdrs(&[("h", "a.x")])));
    // A multi-valued header: `=` holds when some value matches; `!=` is its negation.
    let multi = Message::Headers(vec![Header {
        name: "h".into(),
        values: vec!["b".into(), "a.x".into()],
    }]);
    assert!(!eval(&p, &multi));
    assert!(eval(&clause("=", "h", json!(["a.*"])), &multi));
}

#[test]
fn lowering_uses_string_equality_for_literals() {
    let f = parse(&(&clause("in", "h", json!(["b", "a", "x.*", "b", "x.*"]))).into());
    let f = match f {
        Ok(f) => f,
        Err(e) => panic!("{e}"),
    };
    let ir = lower_filter(&f).to_string();
    assert!(ir.contains("str-eq [\"a\", \"b\"]"), "{ir}");
    assert_eq!(ir.matches("segment \"x.*\"").count(), 1, "{ir}");
    let f = match parse(&(&clause("=", "h", json!(["a.b"]))).into()) {
        Ok(f) => f,
        Err(e) => panic!("{e}"),
    };
    assert!(lower_filter(&f).to_string().contains("str-eq [\"a.b\"]"));
}

#[test]
fn canonical_text_examples() {
    let cases = [
        (
            json!("region=eu-*   and subject = \"orders.*.created\"or priority>=5.0"),
            "region = eu-* and subject = orders.*.created or priority >= 5",
        ),
        (
            json!({"groups": [[
                {"op": "in", "header": "in", "values": ["a", "b c", ""]},
                {"op": "exists", "header": "trace", "values": []}
            ]]}),
            r#""in" in [a, "b c", ""] and trace exists"#,
        ),
        (
            json!(r#""caf\u00e9" != "x\"y" or n < 1e+21 and n > -0 and n <= 0.000001"#),
            r#""café" != "x\"y" or n < 1e21 and n > 0 and n <= 0.000001"#,
        ),
    ];
    for (policy, canonical) in cases {
        match parse(&(&policy).into()) {
            Ok(f) => {
                assert_eq!(f.to_string(), canonical);
                assert_eq!(to_text(&f), canonical);
                assert_eq!(parse_text(canonical).ok(), Some(f));
            }
            Err(e) => panic!("{policy}: {e}"),
        }
    }
}

#[test]
fn options_are_rejected() {
    let e = Options::from_json(Dialect::Stream, &json!({"x": 1})).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidOptions));
}

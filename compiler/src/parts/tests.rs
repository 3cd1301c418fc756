use super::*;
use crate::{Dialect, Evaluator, Filter, compile_text};
use filtervm_vm::message::AttributeType;

fn filter(dialect: Dialect, options: Options, policy: &str) -> Filter {
    compile_text(dialect, policy, &options).unwrap()
}

#[test]
fn each_filter_reads_its_own_part_of_one_message() {
    let attributes = [("a", AttributeType::String, "x")];
    let headers = [("h", "y")];
    let message = MessageParts::body(br#"{"b": "z"}"#)
        .with_attributes(&attributes[..])
        .with_headers(&headers[..]);
    let mut e = Evaluator::new();
    let cases = [
        (Dialect::Basaltic, Options::Basaltic, r#"{"a": ["x"]}"#),
        (Dialect::Sns, Options::from(Dialect::Sns), r#"{"a": ["x"]}"#),
        (
            Dialect::Sns,
            Options::from(SnsScope::MessageBody),
            r#"{"b": ["z"]}"#,
        ),
        (Dialect::Stream, Options::Stream, "h = y"),
    ];
    for (dialect, options, policy) in cases {
        let f = filter(dialect, options, policy);
        assert_eq!(
            e.matches_parts(&f, &message),
            Ok(true),
            "{dialect} {policy}"
        );
    }
}

#[test]
fn a_message_without_attributes_has_none_sns_rule_12_basaltic_b_2() {
    let mut e = Evaluator::new();
    let body_only = MessageParts::body(b"{\"a\": \"x\"}");
    let headers = [("h", "v")];
    let headers_only = MessageParts::headers(&headers[..]);
    for (dialect, options) in [
        (Dialect::Sns, Options::from(Dialect::Sns)),
        (Dialect::Basaltic, Options::Basaltic),
    ] {
        assert_eq!(Absent::of(&options), Absent::Empty);
        let on_a = filter(dialect, options.clone(), r#"{"a": ["x"]}"#);
        let everything = filter(dialect, options.clone(), "{}");
        let not_a = filter(dialect, options.clone(), r#"{"a": [{"exists": false}]}"#);
        for message in [&body_only, &MessageParts::new()] {
            assert_eq!(e.matches_parts(&on_a, message), Ok(false), "{dialect}");
            assert_eq!(e.matches_parts(&everything, message), Ok(true), "{dialect}");
        }
        assert_eq!(e.matches_parts(&everything, &headers_only), Ok(true));
        // sns rule 12: `exists: false` fails a message with no attributes; basaltic B-9:
        // it holds.
        assert_eq!(
            e.matches_parts(&not_a, &body_only),
            Ok(dialect == Dialect::Basaltic),
            "{dialect}"
        );
    }
}

#[test]
fn a_missing_body_or_headers_is_an_error_with_a_hint_not_a_verdict() {
    let mut e = Evaluator::new();
    let stream = filter(Dialect::Stream, Options::Stream, "store missing");
    let err = e
        .matches_parts(&stream, &MessageParts::body(b"{}"))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::MessageShape);
    assert!(err.message.contains("read headers"), "{err}");

    let body = filter(
        Dialect::Sns,
        Options::from(SnsScope::MessageBody),
        r#"{"a": ["x"]}"#,
    );
    let attributes = [("a", AttributeType::String, "x")];
    let err = e
        .matches_parts(&body, &MessageParts::attributes(&attributes[..]))
        .unwrap_err();
    assert!(err.message.contains("MessageAttributes"), "{err}");
    let err = e.matches_parts(&body, &MessageParts::new()).unwrap_err();
    assert!(err.message.ends_with("the message has nothing"), "{err}");
    for options in [
        Options::from(Dialect::EventGrid),
        Options::Stream,
        Options::from(Dialect::Expr),
        Options::from(SnsScope::MessageBody),
    ] {
        assert_eq!(Absent::of(&options), Absent::Missing, "{options}");
    }
}

#[test]
fn a_stream_header_has_one_value_expr_reads_several() {
    let mut e = Evaluator::new();
    let stream = filter(Dialect::Stream, Options::Stream, "r = x");
    let expr = filter(
        Dialect::Expr,
        Options::from(Dialect::Expr),
        r#"{"key": "r", "op": "in", "value": ["y"]}"#,
    );
    let list = std::collections::BTreeMap::from([("r", vec!["x", "y"])]);
    let repeated = [("r", "x"), ("other", "z"), ("r", "y")];
    for err in [
        e.matches_parts(&stream, &MessageParts::headers(&list)),
        e.matches_parts(&stream, &MessageParts::headers(&repeated[..])),
    ] {
        let err = err.unwrap_err();
        assert_eq!(
            (err.code, err.pointer.as_str()),
            (ErrorCode::InvalidMessage, "/headers/r")
        );
        assert!(err.message.contains("header `r` is given"), "{err}");
    }
    assert_eq!(
        e.matches_parts(&expr, &MessageParts::headers(&list)),
        Ok(true)
    );
    assert_eq!(
        e.matches_parts(&expr, &MessageParts::headers(&repeated[..])),
        Ok(true)
    );
    // Many headers: a repeated name is found through the hash set too.
    let many: Vec<(String, &str)> = (0..40)
        .map(|i| (format!("h{i}"), "v"))
        .chain([("h3".to_owned(), "w")])
        .collect();
    let err = e
        .matches_parts(&stream, &MessageParts::headers(&many))
        .unwrap_err();
    assert_eq!(err.pointer, "/headers/h3");
    let distinct: Vec<(String, &str)> = (0..40).map(|i| (format!("h{i}"), "v")).collect();
    assert_eq!(
        e.matches_parts(&stream, &MessageParts::headers(&distinct)),
        Ok(false)
    );
    // No value at all: an error for both.
    let empty = std::collections::BTreeMap::from([("r", Vec::<&str>::new())]);
    for f in [&stream, &expr] {
        let err = e
            .matches_parts(f, &MessageParts::headers(&empty))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidMessage);
    }
}

#[test]
fn basaltic_attributes_are_strings_and_numbers_b_4() {
    let mut e = Evaluator::new();
    let basaltic = filter(Dialect::Basaltic, Options::Basaltic, r#"{"a": ["x"]}"#);
    let sns = filter(Dialect::Sns, Options::from(Dialect::Sns), r#"{"a": ["x"]}"#);
    let attributes = [
        ("a", AttributeType::String, "x"),
        ("b/c", AttributeType::Binary, ""),
    ];
    let err = e
        .matches_parts(&basaltic, &MessageParts::attributes(&attributes[..]))
        .unwrap_err();
    assert_eq!(
        (err.code, err.pointer.as_str()),
        (ErrorCode::InvalidMessage, "/attributes/b~1c")
    );
    assert_eq!(
        e.matches_parts(&sns, &MessageParts::attributes(&attributes[..])),
        Ok(true)
    );
}

#[test]
fn an_unreadable_part_fails_its_readers_only() {
    let mut e = Evaluator::new();
    let sns = filter(Dialect::Sns, Options::from(Dialect::Sns), "{}");
    let body = filter(Dialect::Sns, Options::from(SnsScope::MessageBody), "{}");
    let error = MessageError::new("/attributes/a/Type", "unknown type");
    let message = MessageParts::body(b"{}").with_unreadable(MessagePart::Attributes, &error);
    assert!(message.has(MessagePart::Attributes));
    assert_eq!(e.matches_parts(&sns, &message), Err(error.clone()));
    assert_eq!(e.matches_parts(&body, &message), Ok(true));
}

#[test]
fn an_sns_body_that_is_not_json_keeps_its_meaning_an_event_does_not() {
    let mut e = Evaluator::new();
    let everything = filter(Dialect::Sns, Options::from(SnsScope::MessageBody), "{}");
    let on_a = filter(
        Dialect::Sns,
        Options::from(SnsScope::MessageBody),
        r#"{"a": ["x"]}"#,
    );
    let text = MessageParts::body(b"plain text");
    assert_eq!(e.matches_parts(&everything, &text), Ok(true));
    assert_eq!(e.matches_parts(&on_a, &text), Ok(false));
    let event = filter(
        Dialect::EventGrid,
        Options::from(Dialect::EventGrid),
        r#"{"includedEventTypes": ["a"]}"#,
    );
    let err = e.matches_parts(&event, &text).unwrap_err();
    assert_eq!(err.code, ErrorCode::MessageNotJson);
}

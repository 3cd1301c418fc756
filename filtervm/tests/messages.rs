//! Messages through the library: a message without the part a filter reads is judged where the
//! dialect gives that a meaning (an SNS message with no attributes) and an error with a hint
//! otherwise (never a quiet verdict), the shapes real systems emit are read, and explain reads a
//! message as matching does.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use filtervm::{
    AttributeType, Dialect, ErrorCode, EventGridSchema, Filter, Matcher, Message, MessageShape,
    SnsScope, read_message, read_messages,
};
use std::collections::{BTreeMap, HashMap};

/// A flat event given to an sns filter in attribute scope: a message with no attributes (sns
/// rule 12: only `{}` matches it), and explain names the likely mistake.
#[test]
fn a_flat_event_to_an_attribute_scope_filter_has_no_attributes() {
    let filter = Filter::new(Dialect::Sns, r#"{"store": ["x"]}"#).unwrap();
    let event = Message::json(br#"{"store": "x", "total": 5}"#);
    assert_eq!(filter.matches(&event), Ok(false));
    assert_eq!(
        filter.explain(&event).unwrap().hints[0].code,
        "SCOPE_MISMATCH"
    );
    let everything = Filter::new(Dialect::Sns, "{}").unwrap();
    assert_eq!(everything.matches(&event), Ok(true));
    // With the hint followed, the event is the body.
    let filter = Filter::new(SnsScope::MessageBody, r#"{"store": ["x"]}"#).unwrap();
    assert_eq!(
        filter.matches(&Message::json(br#"{"store": "x", "total": 5}"#)),
        Ok(true)
    );
}

/// AWS's shapes: Publish API attributes (`DataType` with `StringValue` or `BinaryValue`), as
/// delivered to SQS/Lambda (`Type`/`Value`), and the notification envelope.
#[test]
fn aws_shapes_are_read_and_matched() {
    let on_store = Filter::new(Dialect::Sns, r#"{"store": ["x"]}"#).unwrap();
    let publish = br#"{"Message": "hello", "MessageAttributes": {
        "store": {"DataType": "String", "StringValue": "x"},
        "img": {"DataType": "Binary", "BinaryValue": "AQID"}}}"#;
    let delivered = br#"{"MessageAttributes": {"store": {"Type": "String", "Value": "x"}}}"#;
    let envelope =
        br#"{"Type": "Notification", "MessageId": "m-1", "TopicArn": "arn:aws:sns:eu-west-1:1:t",
        "Message": "{\"total\": 150.50}", "Timestamp": "2024-01-01T00:00:00.000Z",
        "MessageAttributes": {"store": {"Type": "String", "Value": "y"}}}"#;
    assert_eq!(on_store.matches(&Message::json(publish)), Ok(true));
    assert_eq!(on_store.matches(&Message::json(delivered)), Ok(true));
    assert_eq!(on_store.matches(&Message::json(envelope)), Ok(false));
    for doc in [&publish[..], delivered, envelope] {
        assert_eq!(read_message(doc).unwrap().shape(), MessageShape::Sns);
    }
    // Binary attributes are invisible to SNS filtering; the envelope's body is its Message.
    let on_img = Filter::new(Dialect::Sns, r#"{"img": [{"exists": true}]}"#).unwrap();
    assert_eq!(on_img.matches(&Message::json(publish)), Ok(false));
    let on_total = Filter::new(
        SnsScope::MessageBody,
        r#"{"total": [{"numeric": [">", 150.49]}]}"#,
    )
    .unwrap();
    assert_eq!(on_total.matches(&Message::json(envelope)), Ok(true));
    // Attribute values keep their text: "1.50" and "1.5" are one number, two strings.
    let priced =
        br#"{"MessageAttributes": {"price": {"DataType": "Number", "StringValue": "1.50"}}}"#;
    let number = Filter::new(Dialect::Sns, r#"{"price": [{"numeric": ["=", 1.5]}]}"#).unwrap();
    let text = Filter::new(Dialect::Sns, r#"{"price": ["1.5"]}"#).unwrap();
    assert_eq!(number.matches(&Message::json(priced)), Ok(true));
    assert_eq!(text.matches(&Message::json(priced)), Ok(false));
}

/// A stream filter `store missing` on a JSON message without headers: an error, not `true`.
#[test]
fn a_stream_filter_on_a_message_without_headers_is_an_error() {
    let filter = Filter::new(Dialect::Stream, "store missing").unwrap();
    let e = filter
        .matches(&Message::json(br#"{"store": "x"}"#))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageShape);
    assert!(e.message.contains("reads headers"), "{e}");
    assert_eq!(
        filter.matches(&Message::json(br#"{"headers": {"region": "eu"}}"#)),
        Ok(true)
    );
    // The same through a body given as such, and through the compiler's serde_json entry.
    let e = filter
        .matches(&Message::body(br#"{"store": "x"}"#))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageShape);
}

/// The library's JSON entries read `{"store": "x"}` as the body in body scope (not `Ok(false)`).
#[test]
fn a_bare_document_is_the_body_in_body_scope() {
    let filter = Filter::new(SnsScope::MessageBody, r#"{"store": ["x"]}"#).unwrap();
    assert_eq!(
        filter.matches(&Message::json(br#"{"store": "x"}"#)),
        Ok(true)
    );
    assert_eq!(
        filter.matches(&Message::json(br#"{"body": "{\"store\": \"x\"}"}"#)),
        Ok(true)
    );
    assert_eq!(
        filter.matches(&Message::json(br#"{"store": "y"}"#)),
        Ok(false)
    );
    // The compiler's entry for serde_json values reads the same way.
    let compiled = filtervm_compiler::compile_text(
        Dialect::Sns,
        r#"{"store": ["x"]}"#,
        &SnsScope::MessageBody.into(),
    )
    .unwrap();
    let mut evaluator = filtervm_compiler::Evaluator::new();
    assert_eq!(
        evaluator.matches_json(&compiled, &serde_json::json!({"store": "x"})),
        Ok(true)
    );
    // Bytes that are not JSON, given as a document: an error, not SNS's "not JSON" meaning.
    let e = filter
        .matches(&Message::json(b"{\"store\": \"x\", oops"))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageNotJson);
    // Given as a raw body, they keep it: only a policy reading nothing from the body matches.
    assert_eq!(filter.matches(&Message::body(b"plain text")), Ok(false));
}

/// Attribute scope given only a body, in every form: a message with no attributes, judged.
#[test]
fn attribute_scope_given_only_a_body_judges_no_attributes() {
    let filter = Filter::new(Dialect::Sns, r#"{"store": ["x"]}"#).unwrap();
    let everything = Filter::new(Dialect::Sns, "{}").unwrap();
    for message in [
        Message::body(br#"{"store": "x"}"#),
        Message::json(br#"{"body": "{\"store\": \"x\"}"}"#),
    ] {
        assert_eq!(filter.matches(&message), Ok(false), "{message:?}");
        assert_eq!(everything.matches(&message), Ok(true), "{message:?}");
    }
    // An AWS message always has attributes, maybe none: published without any, it is judged
    // (SNS would not deliver it), and explain points at the scope.
    let published = Message::json(br#"{"Message": "{\"store\": \"x\"}"}"#);
    assert_eq!(filter.matches(&published), Ok(false));
    let why = filter.explain(&published).unwrap();
    assert_eq!(why.hints[0].code, "SCOPE_MISMATCH");
    assert!(
        why.hints[0].message.contains("MessageBody"),
        "{}",
        why.hints[0].message
    );
    // The other way round: a body filter given only attributes names the attribute scope.
    let on_body = Filter::new(SnsScope::MessageBody, r#"{"store": ["x"]}"#).unwrap();
    let attributes = [("store", AttributeType::String, "x")];
    let e = on_body
        .matches(&Message::attributes(&attributes))
        .unwrap_err();
    assert!(e.message.contains("MessageAttributes"), "{e}");
}

/// An Event Grid array of events and a CloudEvents batch: one verdict per event, read with
/// `read_messages`; given whole to `matches`, an error.
#[test]
fn event_grid_batches_give_one_verdict_per_event() {
    let filter = Filter::new(Dialect::EventGrid, r#"{"subjectBeginsWith": "orders/"}"#).unwrap();
    let batch = br#"[{"id": "1", "subject": "orders/1"}, {"id": "2", "subject": "users/1"}, {"id": "3", "subject": "orders/2"}]"#;
    let events = read_messages(batch, filter.options()).unwrap();
    assert!(events.is_batch());
    let verdicts: Vec<bool> = events
        .map(|e| filter.matches(&Message::from(&e)).unwrap())
        .collect();
    assert_eq!(verdicts, [true, false, true]);
    // Given whole, a batch is no event: INVALID_MESSAGE naming the way to split it; so are
    // scalars, given as a document or as a body.
    for message in [Message::json(batch), Message::body(batch)] {
        let e = filter.matches(&message).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMessage);
        assert!(e.message.contains("read_messages"), "{e}");
    }
    for scalar in [&b"5"[..], b"\"x\"", b"null", b" [] "] {
        for message in [Message::json(scalar), Message::body(scalar)] {
            let e = filter.matches(&message).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidMessage, "{message:?}");
            assert!(e.message.contains("one JSON object"), "{e}");
        }
    }
    // A truncated event is not JSON: MESSAGE_NOT_JSON, whatever door it came through.
    for message in [
        Message::json(b"{\"subject\": "),
        Message::body(b"{\"subject\": "),
    ] {
        assert_eq!(
            filter.matches(&message).unwrap_err().code,
            ErrorCode::MessageNotJson
        );
    }
    let cloud = Filter::new(
        EventGridSchema::CloudEvents,
        r#"{"includedEventTypes": ["order.paid"]}"#,
    )
    .unwrap();
    let batch = br#"[{"specversion": "1.0", "type": "order.paid", "source": "/s", "id": "1"},
                     {"specversion": "1.0", "type": "order.created", "source": "/s", "id": "2"}]"#;
    let verdicts: Vec<bool> = read_messages(batch, cloud.options())
        .unwrap()
        .map(|e| cloud.matches(&Message::from(&e)).unwrap())
        .collect();
    assert_eq!(verdicts, [true, false]);
}

/// The broker's own types, borrowed; explain reads what matches reads (same verdict, same
/// errors); a Matcher is the same as the per-thread cache.
#[test]
fn borrowed_parts_explain_and_matcher_agree_with_matches() {
    let basaltic = Filter::new(Dialect::Basaltic, r#"{"event": [{"prefix": "order."}]}"#).unwrap();
    let expr = Filter::new(
        Dialect::Expr,
        r#"{"key": "tags", "op": "in", "value": ["vip"]}"#,
    )
    .unwrap();
    let attributes = HashMap::from([("event", (AttributeType::String, "order.paid"))]);
    let headers = BTreeMap::from([("tags", vec!["new", "vip"])]);
    let both = Message::attributes(&attributes).with_headers(&headers);
    let mut matcher = Matcher::new();
    for filter in [&basaltic, &expr] {
        assert_eq!(filter.matches(&both), Ok(true));
        assert_eq!(matcher.matches(filter, &both), Ok(true));
        assert!(filter.explain(&both).unwrap().matched);
    }
    let json = br#"{"attributes": {"event": {"Type": "Binary", "Value": "x"}}}"#;
    let e = basaltic.matches(&Message::json(json)).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidMessage);
    let explained = basaltic.explain(&Message::json(json)).unwrap_err();
    assert_eq!(explained.code(), e.code);
    assert_eq!(explained.to_string(), e.to_string());
}

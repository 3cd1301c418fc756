use super::*;
use crate::{Dialect, SnsScope};

fn attrs(message: &ReadMessage<'_>) -> Vec<(String, AttributeType, String)> {
    message
        .attributes()
        .unwrap()
        .iter()
        .map(|a| (a.name.clone(), a.data_type, a.value.clone()))
        .collect()
}

#[test]
fn the_parts_shape_in_every_spelling() {
    let m = read_message(
            br#"{"attributes": {"a": {"Type": "Number", "Value": "1.50"},
                "b": {"type": "String", "value": "x"}, "c": {"DataType": "Binary", "BinaryValue": "AQ=="},
                "d": {"DataType": "String.Array", "StringValue": "[1]"}},
              "headers": {"h": "v", "m": ["1", "2"]}, "body": "{\"k\": 1}"}"#,
        )
        .unwrap();
    assert_eq!(m.shape(), MessageShape::Parts);
    assert_eq!(
        attrs(&m),
        [
            ("a".into(), AttributeType::Number, "1.50".into()),
            ("b".into(), AttributeType::String, "x".into()),
            ("c".into(), AttributeType::Binary, "AQ==".into()),
            ("d".into(), AttributeType::StringArray, "[1]".into()),
        ]
    );
    let headers = m.headers().unwrap();
    assert_eq!(headers[1].values, ["1", "2"]);
    assert_eq!(m.body(), Some(&br#"{"k": 1}"#[..]));
    // Absent and null members are parts the message does not have.
    let m = read_message(br#"{"body": null, "headers": {}}"#).unwrap();
    assert_eq!((m.body(), m.attributes()), (None, None));
    assert_eq!(m.headers(), Some(&[][..]));
    let m = read_message(br#"{"attributes": null, "headers": null}"#).unwrap();
    assert_eq!(
        (m.attributes(), m.headers()),
        (Some(&[][..]), Some(&[][..]))
    );
    // A body given as JSON is the body as written.
    let m = read_message(br#"{"body": {"n": 1.50}}"#).unwrap();
    assert_eq!(m.body(), Some(&br#"{"n": 1.50}"#[..]));
}

#[test]
fn aws_shapes() {
    let publish = read_message(
        br#"{"TopicArn": "arn:aws:sns:us-east-1:1:t", "Message": "hello",
                "MessageAttributes": {"store": {"DataType": "String", "StringValue": "x"},
                "n": {"DataType": "Number", "StringValue": "1e400"}}}"#,
    )
    .unwrap();
    assert_eq!(publish.shape(), MessageShape::Sns);
    assert_eq!(publish.body(), Some(&b"hello"[..]));
    assert_eq!(
        attrs(&publish),
        [
            ("store".into(), AttributeType::String, "x".into()),
            ("n".into(), AttributeType::Number, "1e400".into()),
        ]
    );
    let delivered =
        read_message(br#"{"MessageAttributes": {"store": {"Type": "String", "Value": "x"}}}"#)
            .unwrap();
    assert_eq!(delivered.body(), None);
    assert_eq!(attrs(&delivered).len(), 1);
    let envelope = read_message(
        br#"{"Type": "Notification", "MessageId": "m", "Message": "{\"a\": \"\u00e9\"}",
                "Timestamp": "2024-01-01T00:00:00.000Z", "SignatureVersion": "1"}"#,
    )
    .unwrap();
    assert_eq!(envelope.body(), Some("{\"a\": \"é\"}".as_bytes()));
    // An AWS message always has attributes, maybe none.
    assert_eq!(envelope.attributes(), Some(&[][..]));
    let e = read_message(br#"{"Type": "SubscriptionConfirmation", "Message": "x"}"#).unwrap_err();
    assert_eq!(
        (e.code, e.pointer.as_str()),
        (ErrorCode::MessageShape, "/Type")
    );
}

#[test]
fn other_documents_are_the_body() {
    for doc in [
        &br#"{"store": "x"}"#[..],
        br#"{"body": "x", "store": "y"}"#,
        br#"{"Message": "x", "store": "y"}"#,
        br#"{"Subject": "only envelope names, but no message"}"#,
        br#"[{"a": 1}]"#,
        br#""text""#,
        b" 5 ",
    ] {
        let m = read_message(doc).unwrap();
        assert_eq!(m.shape(), MessageShape::Document);
        assert_eq!(m.body(), Some(doc));
        assert_eq!((m.attributes(), m.headers()), (None, None));
    }
    let empty = read_message(b"{}").unwrap();
    assert_eq!(empty.body(), Some(&b"{}"[..]));
    assert_eq!(empty.attributes(), Some(&[][..]));
    assert_eq!(empty.headers(), Some(&[][..]));
}

#[test]
fn wrong_parts_are_errors_with_pointers() {
    for (doc, code, pointer) in [
        (&b"{oops"[..], ErrorCode::MessageNotJson, ""),
        (b"", ErrorCode::MessageNotJson, ""),
        (
            br#"{"attributes": [1]}"#,
            ErrorCode::InvalidMessage,
            "/attributes",
        ),
        (
            br#"{"attributes": {"a": 5}}"#,
            ErrorCode::InvalidMessage,
            "/attributes/a",
        ),
        (
            br#"{"attributes": {"a": {"Type": "Nope", "Value": "x"}}}"#,
            ErrorCode::InvalidMessage,
            "/attributes/a/Type",
        ),
        (
            br#"{"attributes": {"a": {"Type": "Number", "Value": true}}}"#,
            ErrorCode::InvalidMessage,
            "/attributes/a/Value",
        ),
        (
            br#"{"MessageAttributes": {"a/b": {"DataType": "String"}}}"#,
            ErrorCode::InvalidMessage,
            "/MessageAttributes/a~1b/Value",
        ),
        (
            br#"{"headers": {"h": 5}}"#,
            ErrorCode::InvalidMessage,
            "/headers/h",
        ),
        (
            br#"{"headers": {"h": []}}"#,
            ErrorCode::InvalidMessage,
            "/headers/h",
        ),
        (
            br#"{"headers": {"h": ["a", 1]}}"#,
            ErrorCode::InvalidMessage,
            "/headers/h/1",
        ),
        (
            br#"{"headers": "h"}"#,
            ErrorCode::InvalidMessage,
            "/headers",
        ),
        (br#"{"headers": {}} x"#, ErrorCode::MessageNotJson, ""),
    ] {
        let e = read_message(doc).unwrap_err();
        assert_eq!(
            (e.code, e.pointer.as_str()),
            (code, pointer),
            "{}: {e}",
            String::from_utf8_lossy(doc)
        );
    }
}

#[test]
fn batches_split_for_event_grid_filters_only() {
    let batch = br#"[{"id": "1"}, {"id": "2"}]"#;
    let events: Vec<_> = read_messages(batch, &Options::from(Dialect::EventGrid))
        .unwrap()
        .collect();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].shape(), MessageShape::BatchEvent);
    assert_eq!(events[1].body(), Some(&br#"{"id": "2"}"#[..]));
    // For an SNS body filter the array is the body; an array of non-objects is one event.
    let sns = read_messages(batch, &Options::from(SnsScope::MessageBody)).unwrap();
    assert!(!sns.is_batch());
    assert_eq!(sns.count(), 1);
    for one in [&b"[1, 2]"[..], b"[]", b"[{}, 1]"] {
        let m = read_messages(one, &Options::from(Dialect::EventGrid)).unwrap();
        assert!(!m.is_batch());
        assert_eq!(m.count(), 1);
    }
    let e = read_messages(b"[{}, ", &Options::from(Dialect::EventGrid)).unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageNotJson);
}

#[test]
fn dialect_rules_apply_when_a_filter_reads_the_part_not_when_reading() {
    // Read whatever the filter: the dialects' own rules are checked when the part is matched
    // (`crate::parts`), the same for a document as for a message of parts.
    let binary = br#"{"attributes": {"a": {"type": "Binary", "value": "x"}}}"#;
    assert!(read_messages(binary, &Options::Basaltic).is_ok());
    let basaltic = crate::compile_text(Dialect::Basaltic, "{}", &Options::Basaltic).unwrap();
    let e = crate::Evaluator::new()
        .matches_document(&basaltic, binary)
        .unwrap_err();
    assert_eq!(
        (e.code, e.pointer.as_str()),
        (ErrorCode::InvalidMessage, "/attributes/a")
    );
    let multi = br#"{"headers": {"a": ["x", "y"]}}"#;
    assert!(read_messages(multi, &Options::Stream).is_ok());
    let stream = crate::compile_text(Dialect::Stream, "a exists", &Options::Stream).unwrap();
    let e = crate::Evaluator::new()
        .matches_document(&stream, multi)
        .unwrap_err();
    assert_eq!(e.pointer, "/headers/a");
    assert!(e.message.contains("a stream header has one value"), "{e}");
}

#[test]
fn a_typed_attribute_value_given_as_a_number_is_its_text() {
    let m = read_message(
            br#"{"attributes": {"a": {"Type": "Number", "Value": 301.50}, "b": {"DataType": "String", "StringValue": 1e400}}}"#,
        )
        .unwrap();
    assert_eq!(
        attrs(&m),
        [
            ("a".into(), AttributeType::Number, "301.50".into()),
            ("b".into(), AttributeType::String, "1e400".into()),
        ]
    );
    let e = read_message(br#"{"attributes": {"price": {"Type": "Number", "Value": [1]}}}"#)
        .unwrap_err();
    assert_eq!(e.pointer, "/attributes/price/Value");
    assert!(e.message.contains("attribute `price`"), "{e}");
}

#[test]
fn a_document_carries_its_attributes_and_headers_members() {
    let line = br#"{"attributes": {"a": {"type": "String", "value": "x"}}, "headers": {"h": "v"}, "subject": "s"}"#;
    let m = read_message(line).unwrap();
    assert_eq!(m.shape(), MessageShape::Document);
    assert_eq!(m.body(), Some(&line[..]));
    assert_eq!(attrs(&m), [("a".into(), AttributeType::String, "x".into())]);
    assert_eq!(m.headers().unwrap()[0].values, ["v"]);
    // A filter on the body reads no further than it needs; one on a part reads that part,
    // which must then be in its form.
    let odd = br#"{"subject": "s", "attributes": {"color": "red"}}"#;
    let body = read_messages(odd, &Options::from(SnsScope::MessageBody)).unwrap();
    assert_eq!(body.count(), 1);
    assert_eq!(read_message(odd).unwrap().attributes(), None);
    let e = read_messages(odd, &Options::Basaltic).unwrap_err();
    assert_eq!(e.pointer, "/attributes/color");
    // Without them, a document has neither.
    let m = read_messages(br#"{"store": "x"}"#, &Options::Stream)
        .unwrap()
        .next()
        .unwrap();
    assert_eq!((m.attributes(), m.headers()), (None, None));
}

#[test]
fn a_part_the_filter_does_not_read_may_be_in_any_form() {
    let line = br#"{"attributes": {"event": 5}, "headers": {"region": "us"}}"#;
    assert_eq!(read_message(line).unwrap_err().pointer, "/attributes/event");
    assert_eq!(
        read_messages(line, &Options::Basaltic).unwrap_err().pointer,
        "/attributes/event"
    );
    let m = read_messages(line, &Options::Stream)
        .unwrap()
        .next()
        .unwrap();
    assert_eq!(
        (m.attributes(), m.headers().map(<[_]>::len)),
        (None, Some(1))
    );
}

/// `Evaluator::matches_body_document` gives what reading the document by its shape first gives
/// (`read_messages`, then the message's parts matched), verdict and error alike, in both read
/// modes; and it gives it for the documents that are plainly the body, leaving the others to the
/// shape reader.
#[test]
fn one_read_gives_what_reading_the_shape_first_gives() {
    let filters = [
        (
            Dialect::Sns,
            r#"{"store": ["x"], "total": [{"numeric": [">", 1]}]}"#,
            Options::from(SnsScope::MessageBody),
        ),
        (
            Dialect::Sns,
            r#"{"store": [{"exists": false}]}"#,
            Options::from(SnsScope::MessageBody),
        ),
        (
            Dialect::EventGrid,
            r#"{"subject": "x"}"#,
            Options::from(Dialect::EventGrid),
        ),
        (
            Dialect::EventBridge,
            r#"{"store": ["x"]}"#,
            Options::from(Dialect::EventBridge),
        ),
        (
            Dialect::Sns,
            r#"{"store": ["x"]}"#,
            Options::from(Dialect::Sns),
        ),
        (Dialect::Stream, "store exists", Options::Stream),
    ];
    // (document, whether it is plainly the body to a filter on the body)
    let documents: [(&[u8], bool); 24] = [
        (br#"{"store": "x", "total": 5}"#, true),
        (br#" {"subject": "x", "store": "y"} "#, true),
        (br#"{"\u0073tore": "x"}"#, true),
        (br#"{"store": "x", "Message": "{\"store\": \"y\"}"}"#, true),
        (
            br#"{"store": "x", "attributes": 5, "headers": {"h": 1}}"#,
            true,
        ),
        (br#"{"store": "x", "items": [01]}"#, true),
        (br#"{"store": "x", "items": [tru]}"#, true),
        (br#"{"store": "x"} trailing"#, true),
        (br#"{"store": "x""#, true),
        (br#"{"": "x"}"#, true),
        (br#"{"\u0062ody": "{\"store\": \"x\"}"}"#, false),
        (br#"{"body": "{\"store\": \"x\"}", "store": "y"}"#, false),
        (
            br#"{"Message": "{\"store\": \"x\"}", "Type": "Notification"}"#,
            false,
        ),
        (
            br#"{"Type": "SubscriptionConfirmation", "Message": "x"}"#,
            false,
        ),
        (br#"{"Subject": "envelope names only"}"#, false),
        (
            br#"{"attributes": {"store": {"Type": "String", "Value": "x"}}}"#,
            false,
        ),
        (b"{\"st\x01ore\": \"x\"}", false),
        (b"{\"st\xffore\": \"x\", \"store\": \"x\"}", false),
        (b"{}", false),
        (br#"[{"store": "x"}, {"subject": "x"}]"#, false),
        (br#""text""#, false),
        (b"not json", false),
        (b"", false),
        (br#"{"st\ore": "x"}"#, false),
    ];
    for (dialect, policy, options) in &filters {
        let filter = crate::compile_text(*dialect, policy, options).unwrap();
        let on_body = MessagePart::of(options) == MessagePart::Body;
        for mode in [ReadMode::Validating, ReadMode::Trusted] {
            let mut evaluator = crate::Evaluator::new();
            evaluator.set_read_mode(mode);
            for (doc, plain) in documents {
                let fast = evaluator.matches_body_document(&filter, doc);
                let eventbridge = *dialect == Dialect::EventBridge;
                assert_eq!(
                    fast.is_some(),
                    on_body && (plain || eventbridge),
                    "{dialect:?} {mode:?} {}",
                    String::from_utf8_lossy(doc)
                );
                let Some(fast) = fast else { continue };
                let slow = match read_messages(doc, options) {
                    Ok(messages) => {
                        assert!(!messages.is_batch());
                        let verdicts: Vec<_> = messages
                            .map(|m| evaluator.matches_parts(&filter, &m.parts()))
                            .collect();
                        assert_eq!(verdicts.len(), 1);
                        verdicts.into_iter().next().unwrap()
                    }
                    Err(e) => Err(e),
                };
                assert_eq!(
                    fast,
                    slow,
                    "{dialect:?} {mode:?} {}",
                    String::from_utf8_lossy(doc)
                );
                assert_eq!(fast, evaluator.matches_document(&filter, doc));
            }
        }
    }
}

use super::{ErrorCategory, ErrorCode};
use crate::dialect::Dialect;
use crate::{Evaluator, Filter, Options, compile_text, explain, message_from_json};
use filtervm_vm::message::{AttributeType, Message};
use std::collections::HashSet;

/// The first code of compiling `text` in `dialect` with `options` (JSON text).
fn policy(dialect: Dialect, options: &str, text: &str) -> ErrorCode {
    let options = Options::from_json(dialect, options).expect("valid options");
    compile_text(dialect, text, &options)
        .err()
        .and_then(|e| e.code())
        .unwrap_or_else(|| panic!("{dialect} {text} compiled"))
}

/// An input, as small as it gets, that makes the library emit `code`: the example each
/// variant's documentation names.
fn trigger(code: ErrorCode) -> ErrorCode {
    use ErrorCode as C;
    match code {
        C::SnsSyntaxError => policy(Dialect::Sns, "{}", "[]"),
        C::SnsTypeError => policy(Dialect::Sns, "{}", r#"{"a":[{"prefix":1}]}"#),
        C::SnsUnknownOperator => policy(Dialect::Sns, "{}", r#"{"a":[{"x":1}]}"#),
        C::SnsInvalidValue => policy(Dialect::Sns, "{}", r#"{"a":[{"cidr":"x"}]}"#),
        C::SnsLimitExceeded => policy(
            Dialect::Sns,
            "{}",
            r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}"#,
        ),
        C::NotificationInvalidFilterPolicy => policy(Dialect::Basaltic, "{}", "[]"),
        C::EventGridInvalidFilter => policy(Dialect::EventGrid, "{}", "[]"),
        C::EventGridLimitExceeded => policy(
            Dialect::EventGrid,
            "{}",
            &format!(
                r#"{{"advancedFilters":[{{"operatorType":"StringIn","key":"k","values":["{}"]}}]}}"#,
                "x".repeat(513)
            ),
        ),
        C::StreamInvalidFilter => policy(Dialect::Stream, "{}", "[]"),
        C::StreamLimitExceeded => policy(
            Dialect::Stream,
            "{}",
            "a exists or b exists or c exists or d exists or e exists or f exists or \
                 g exists or h exists or i exists",
        ),
        C::StreamInvalidPattern => policy(Dialect::Stream, "{}", "a = **x"),
        C::StreamSyntaxError => policy(Dialect::Stream, "{}", "a ="),
        C::ExprInvalidFilter => policy(Dialect::Expr, "{}", "[]"),
        C::ExprTooDeep => policy(
            Dialect::Expr,
            r#"{"max_depth":0}"#,
            r#"{"op":"NOT","exp":[{"key":"a","op":"exists"}]}"#,
        ),
        C::EventBridgeSyntaxError => policy(Dialect::EventBridge, "{}", "[]"),
        C::EventBridgeTypeError => policy(Dialect::EventBridge, "{}", r#"{"a":[{"prefix":1}]}"#),
        C::EventBridgeUnknownOperator => policy(Dialect::EventBridge, "{}", r#"{"a":[{"x":1}]}"#),
        C::EventBridgeInvalidValue => policy(Dialect::EventBridge, "{}", r#"{"a":[{"cidr":"x"}]}"#),
        C::EventBridgeLimitExceeded => policy(
            Dialect::EventBridge,
            "{}",
            r#"{"a":[{"wildcard":"*:*:*:*:*:b/*"}]}"#,
        ),
        C::InvalidOptions => Options::from_json(Dialect::Sns, "[]")
            .err()
            .and_then(|e| e.code())
            .expect("rejected"),
        C::InvalidMessage => {
            message_from_json(
                Dialect::Basaltic,
                &Options::Basaltic,
                &serde_json::json!({"attributes": []}),
            )
            .expect_err("rejected")
            .code
        }
        C::MessageTooComplex => {
            // Two sibling arrays of objects judged per element: their rows multiply past
            // the binder's limit.
            let options = Options::from(crate::SnsScope::MessageBody);
            let policy = r#"{"A": {"x": [{"exists": false}]}, "B": {"y": [{"exists": false}]}}"#;
            let filter = compile_text(Dialect::Sns, policy, &options).expect("compiles");
            let side = |k: &str| vec![format!("{{\"{k}\": 1}}"); 1100].join(",");
            let body = format!(r#"{{"A": [{}], "B": [{}]}}"#, side("x"), side("y"));
            let message = serde_json::json!({ "body": body });
            let message = message_from_json(Dialect::Sns, &options, &message).expect("read");
            Evaluator::new()
                .try_matches(&filter, &message)
                .expect_err("too complex")
                .code
        }
        C::MessageNotJson => {
            let options = Options::from(Dialect::EventGrid);
            let filter = compile_text(Dialect::EventGrid, "{}", &options).expect("compiles");
            Evaluator::new()
                .matches_bytes(&filter, b"{")
                .expect_err("not JSON")
                .code
        }
        C::MessageShape => {
            let filter =
                compile_text(Dialect::Basaltic, "{}", &Options::Basaltic).expect("compiles");
            Evaluator::new()
                .matches_bytes(&filter, b"{}")
                .expect_err("not a JSON-body dialect")
                .code
        }
        C::NotificationInvalidMessageAttributes => {
            let message = Message::attributes([("", AttributeType::String, "x")]);
            crate::dialect::basaltic::validate_message(&message)
                .expect_err("rejected")
                .code
        }
        C::InvalidProgram => Filter::from_bytes(b"").expect_err("rejected").code(),
        C::InvalidFilterMetadata => {
            let filter =
                compile_text(Dialect::Basaltic, "{}", &Options::Basaltic).expect("compiles");
            let bytes = filter.program().to_bytes_with_metadata(b"[]");
            Filter::from_bytes(&bytes).expect_err("rejected").code()
        }
        C::FilterWithoutIr => {
            let filter =
                compile_text(Dialect::Basaltic, "{}", &Options::Basaltic).expect("compiles");
            let bytes = filter
                .program()
                .to_bytes_with_metadata(br#"{"dialect":"basaltic","options":{}}"#);
            let loaded = Filter::from_bytes(&bytes).expect("loads");
            let message = serde_json::json!({"attributes": {}});
            explain::explain_json(&loaded, None, &message)
                .expect_err("no IR")
                .code()
        }
        C::InternalCodegen => crate::filter::tests::verifier_rejects_a_nan_bound(),
    }
}

#[test]
fn every_code_is_unique_documented_and_reachable() {
    let mut texts = HashSet::new();
    for &code in ErrorCode::ALL {
        let text = code.as_str();
        assert!(texts.insert(text), "{text} is listed twice");
        assert_eq!(code.to_string(), text);
        assert_eq!(ErrorCode::from_text(text), Some(code));
        assert!(
            text.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
            "{text}"
        );
        let doc = code
            .description()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            doc.contains("Smallest input"),
            "{text} documents no input: {doc}"
        );
        assert_eq!(
            trigger(code),
            code,
            "{text}: its documented input gives another code"
        );
    }
    assert_eq!(ErrorCode::from_text("SNS_INVALID_FILTER_POLICY"), None);
    assert_eq!(ErrorCode::InvalidOptions.category(), ErrorCategory::Options);
    assert_eq!(
        ErrorCode::SnsLimitExceeded.category(),
        ErrorCategory::Policy
    );
    assert_eq!(ErrorCode::SnsTypeError, "SNS_TYPE_ERROR");
}

//! Reading SNS messages: the conformance vector shape and `filtervm match` lines.

use super::Scope;
use crate::error::{MessageError, pointer};
use filtervm_vm::message::{Attribute, AttributeType, Message};
use serde_json::Value;

/// Reads a message in the vector shape `{"attributes": {NAME: {"Type": T, "Value": V}}, "body": B}`.
///
/// - Attribute scope reads `attributes` (absent or `null`: no attributes). `T` is `String`,
///   `Number`, `String.Array`, `Binary` or a custom `String.x` / `Number.x` / `Binary.x` type;
///   `V` is a string. The AWS API spellings `DataType` and `StringValue` / `BinaryValue` are
///   accepted too.
/// - Body scope reads `body`: a JSON string holding the raw body text, kept as its bytes
///   ([`Message::Body`]) and read when bound, at any depth (text that is not JSON matches only
///   policies that read nothing from the body, rule 14, and binding reports it); a missing or
///   `null` body is [`Message::Unparsable`]. A `body` given as any other JSON value is taken as
///   the already parsed body, its numbers as the `serde_json::Value` holds them
///   ([`Message::Json`]; give the body as text to keep them exact).
pub fn from_json(scope: Scope, message: &Value) -> Result<Message, MessageError> {
    let Value::Object(top) = message else {
        return Err(MessageError::new(
            "",
            "an sns message must be a JSON object {\"attributes\": {...}, \"body\": \"...\"}",
        ));
    };
    match scope {
        Scope::MessageBody => Ok(match top.get("body") {
            None | Some(Value::Null) => Message::Unparsable,
            Some(Value::String(text)) => body(text),
            Some(parsed) => Message::Json(parsed.clone()),
        }),
        Scope::MessageAttributes => attributes(top.get("attributes")),
    }
}

/// A raw body text, as its bytes: read when bound, keeping only what the policy reads (a body
/// that is not JSON is rule 14's non-object body, and binding reports it).
pub fn body(text: &str) -> Message {
    Message::Body(text.as_bytes().to_vec())
}

fn attributes(value: Option<&Value>) -> Result<Message, MessageError> {
    let attrs = match value {
        None | Some(Value::Null) => return Ok(Message::Attributes(Vec::new())),
        Some(Value::Object(attrs)) => attrs,
        Some(_) => {
            return Err(MessageError::new(
                "/attributes",
                "`attributes` must be an object",
            ));
        }
    };
    let mut out = Vec::with_capacity(attrs.len());
    for (name, attr) in attrs {
        let at = pointer::push("/attributes", name);
        let Value::Object(fields) = attr else {
            return Err(MessageError::new(
                at,
                "an attribute must be an object {\"Type\": ..., \"Value\": ...}",
            ));
        };
        let type_name = ["Type", "DataType"]
            .iter()
            .find_map(|k| fields.get(*k).map(|v| (*k, v)));
        let data_type = match type_name {
            Some((_, Value::String(t))) => AttributeType::from_name(t),
            _ => None,
        };
        let Some(data_type) = data_type else {
            let field = type_name.map_or("Type", |(k, _)| k);
            return Err(MessageError::new(
                pointer::push(&at, field),
                "`Type` must be \"String\", \"Number\", \"String.Array\" or \"Binary\" (or a custom `String.x`, `Number.x`, `Binary.x` type)",
            ));
        };
        let value = ["Value", "StringValue", "BinaryValue"]
            .iter()
            .find_map(|k| fields.get(*k).map(|v| (*k, v)));
        let Some((_, Value::String(value))) = value else {
            let field = value.map_or("Value", |(k, _)| k);
            return Err(MessageError::new(
                pointer::push(&at, field),
                "`Value` must be a string",
            ));
        };
        out.push(Attribute {
            name: name.clone(),
            data_type,
            value: value.clone(),
        });
    }
    Ok(Message::Attributes(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn body_scope_reads_the_body_text() {
        assert_eq!(
            from_json(Scope::MessageBody, &json!({"body": "{\"a\": 1}"})).unwrap(),
            Message::Body(br#"{"a": 1}"#.to_vec())
        );
        assert_eq!(
            from_json(Scope::MessageBody, &json!({"body": "{oops"})).unwrap(),
            Message::Body(b"{oops".to_vec())
        );
        assert_eq!(
            from_json(Scope::MessageBody, &json!({})).unwrap(),
            Message::Unparsable
        );
        assert!(matches!(
            from_json(Scope::MessageBody, &json!({"body": {"a": 1}})).unwrap(),
            Message::Json(_)
        ));
    }

    /// Valid bodies of any depth, and with lone surrogate escapes, are judged: a body nested
    /// 200 and 100,000 levels deep in a member no policy reads, or with `"\ud800"` in an
    /// unrelated string, matches a policy on another member (through `match` too, see the CLI
    /// tests). Bodies that are not JSON match only policies that read nothing from the body, and
    /// `try_matches` reports them.
    #[test]
    fn deep_bodies_and_lone_surrogates_are_judged() {
        use crate::{Dialect, Evaluator, Options, SnsScope, compile};
        let options = Options::from(SnsScope::MessageBody);
        let filter = compile(Dialect::Sns, &json!({"k": ["v"]}), &options).unwrap();
        let mut evaluator = Evaluator::new();
        for depth in [200, 100_000] {
            let deep = format!(
                r#"{{"other": {}1{}, "k": "v"}}"#,
                "[{\"x\": ".repeat(depth),
                "}]".repeat(depth)
            );
            let message = body(&deep);
            assert_eq!(
                evaluator.try_matches(&filter, &message),
                Ok(true),
                "depth {depth}"
            );
            assert_eq!(
                evaluator.try_matches_bytes(&filter, deep.as_bytes()),
                Ok(true)
            );
            let vector = from_json(Scope::MessageBody, &json!({ "body": deep })).unwrap();
            assert!(evaluator.matches(&filter, &vector));
        }
        let lone = r#"{"note": "\ud800", "k": "v"}"#;
        assert_eq!(evaluator.try_matches(&filter, &body(lone)), Ok(true));
        assert_eq!(evaluator.matches_bytes(&filter, lone.as_bytes()), Ok(true));
        // Not JSON: judged by rule 14 (no match but for the empty policy), on every path.
        assert!(!evaluator.matches(&filter, &body("{oops")));
        assert_eq!(evaluator.matches_bytes(&filter, b"{oops"), Ok(false));
        assert_eq!(evaluator.try_matches(&filter, &body("{oops")), Ok(false));
        assert_eq!(evaluator.try_matches_bytes(&filter, b"{oops"), Ok(false));
        let empty =
            crate::compile_text(Dialect::Sns, "{}", &Options::from(SnsScope::MessageBody)).unwrap();
        assert_eq!(evaluator.try_matches(&empty, &body("{oops")), Ok(true));
        assert_eq!(evaluator.try_matches_bytes(&empty, b"{oops"), Ok(true));
    }

    #[test]
    fn attribute_scope_reads_typed_attributes() {
        let m = from_json(
            Scope::MessageAttributes,
            &json!({"attributes": {"a": {"Type": "String.Array", "Value": "[1]"},
                "b": {"DataType": "Binary", "BinaryValue": "AQ=="}}}),
        )
        .unwrap();
        let Message::Attributes(attrs) = m else {
            panic!("attributes")
        };
        assert_eq!(attrs[0].data_type, AttributeType::StringArray);
        assert_eq!(attrs[1].data_type, AttributeType::Binary);
        let e = from_json(
            Scope::MessageAttributes,
            &json!({"attributes": {"a": {"Type": "Nope", "Value": "1"}}}),
        )
        .unwrap_err();
        assert_eq!(e.pointer, "/attributes/a/Type");
    }
}

//! The dialect front ends. Each module parses its dialect's JSON (or text) into its own AST,
//! validates every rule and limit, lowers the AST to IR, and reads messages in its shape.

pub mod basaltic;
pub mod eventbridge;
pub mod eventgrid;
pub mod expr;
pub mod sns;
pub mod stream;

use crate::error::{CompileError, ErrorCode, JsonTextError, MessageError};
use crate::ir::Node;
use crate::options::Options;
use crate::parts::{MessageParts, SelectedPart};
use filtervm_vm::json::{self, ParseOptions};
use filtervm_vm::message::{Attribute, Attributes, Header, HeaderValues, Headers, Message, Text};
use std::fmt;
use std::str::FromStr;

/// The filter dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// AWS SNS-compatible subscription filter policies.
    Sns,
    /// The notification service's filter policies.
    Basaltic,
    /// Event Grid subscription filters.
    EventGrid,
    /// Stream header clause groups.
    Stream,
    /// Nested condition/expression trees over headers.
    Expr,
    /// Amazon EventBridge event patterns (as aws/event-ruler evaluates them).
    EventBridge,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 6] = [
        Dialect::Sns,
        Dialect::Basaltic,
        Dialect::EventGrid,
        Dialect::Stream,
        Dialect::Expr,
        Dialect::EventBridge,
    ];

    /// The code of the dialect's policy errors when no more specific code applies (policy text
    /// that is not JSON, for one).
    pub fn invalid_code(self) -> ErrorCode {
        match self {
            Dialect::Sns => ErrorCode::SnsSyntaxError,
            Dialect::Basaltic => ErrorCode::NotificationInvalidFilterPolicy,
            Dialect::EventGrid => ErrorCode::EventGridInvalidFilter,
            Dialect::Stream => ErrorCode::StreamInvalidFilter,
            Dialect::Expr => ErrorCode::ExprInvalidFilter,
            Dialect::EventBridge => ErrorCode::EventBridgeSyntaxError,
        }
    }

    /// The code of a breached limit in the dialect's policies (policy text over 256 KiB, for
    /// one); dialects without a limit code use [`Dialect::invalid_code`].
    pub fn limit_code(self) -> ErrorCode {
        match self {
            Dialect::Sns => ErrorCode::SnsLimitExceeded,
            Dialect::EventBridge => ErrorCode::EventBridgeLimitExceeded,
            Dialect::EventGrid => ErrorCode::EventGridLimitExceeded,
            Dialect::Stream => ErrorCode::StreamLimitExceeded,
            Dialect::Basaltic | Dialect::Expr => self.invalid_code(),
        }
    }

    /// The dialect's name as written in vectors and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sns => "sns",
            Dialect::Basaltic => "basaltic",
            Dialect::EventGrid => "eventgrid",
            Dialect::Stream => "stream",
            Dialect::Expr => "expr",
            Dialect::EventBridge => "eventbridge",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown dialect name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown dialect `{}` (expected sns, basaltic, eventgrid, stream, expr or eventbridge)",
    crate::error::excerpt(&.0)
)]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;
    fn from_str(s: &str) -> Result<Dialect, UnknownDialect> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

/// Parses, validates and lowers a policy of `dialect` to IR (`options` are `dialect`'s).
pub(crate) fn lower(
    dialect: Dialect,
    policy: &json::Value,
    options: &Options,
) -> Result<Node, CompileError> {
    match dialect {
        Dialect::Basaltic => basaltic::lower(policy),
        Dialect::Sns => sns::lower(policy, options.sns()),
        Dialect::EventGrid => eventgrid::lower(policy, options.eventgrid()),
        Dialect::Stream => stream::lower(policy),
        Dialect::Expr => expr::lower(policy, options.expr()),
        Dialect::EventBridge => eventbridge::lower(policy),
    }
}

/// Reads policy text into a JSON value: at most [`crate::MAX_POLICY_BYTES`] (else the
/// dialect's limit code), at most [`crate::MAX_POLICY_DEPTH`] levels, numbers in their exact
/// text, lone surrogate escapes rejected with their line, column and JSON Pointer. `expr` text is
/// first scanned for expressions nested beyond `max_depth` (E2), and `stream` text that is not
/// JSON is the text form, returned as a JSON string.
pub(crate) fn parse_policy_text(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<json::Value, CompileError> {
    if text.len() > crate::MAX_POLICY_BYTES {
        return Err(CompileError::one(
            dialect.limit_code(),
            "",
            format!(
                "the policy is {} bytes; the limit is {} bytes (256 KiB)",
                text.len(),
                crate::MAX_POLICY_BYTES
            ),
        ));
    }
    if dialect == Dialect::Expr {
        expr::check_text(text, options.expr())?;
    }
    let mut read = ParseOptions::default();
    read.max_depth = crate::MAX_POLICY_DEPTH;
    if dialect == Dialect::EventBridge {
        // EB-7: a repeated member name is read in its place; the later one replaces.
        read.duplicates = json::Duplicates::KeepAll;
    }
    match json::parse_with(text.as_bytes(), &read) {
        Ok(policy) => Ok(policy),
        // The stream dialect's text form (`region = eu-* and n > 5`) is policy text too.
        Err(_) if dialect == Dialect::Stream && !text.trim_start().starts_with(['{', '[']) => Ok(
            json::Value::String(text.trim_end_matches(['\n', '\r']).to_owned()),
        ),
        Err(e) => {
            let e = JsonTextError::new(text, &e);
            let message = match dialect {
                // AWS's wording (sns rule 35).
                Dialect::Sns => format!("{} ({})", sns::NOT_JSON, e.message),
                _ => format!("the policy is not valid JSON: {}", e.message),
            };
            Err(CompileError::one(
                dialect.invalid_code(),
                e.pointer,
                message,
            ))
        }
    }
}

/// Reads a message given as a `serde_json` value: the value's JSON text read as one message by
/// [`crate::read_message`] (every shape it accepts, checked by the dialect's rules), then the
/// part filters with `options` read, owned. For `eventgrid` the document is one event, an array
/// included (see [`crate::read_messages`] to split a batch).
///
/// `options` are the filter's (`dialect`'s; options of another dialect are an error). An Event
/// Grid event, or an SNS body given as a JSON value, is read as the `serde_json::Value` holds it
/// ([`Message::Json`] says how: numbers as binary64 at best, members in the map's order); for
/// exact number text pass bytes or text ([`message_from_line`],
/// [`Evaluator::matches_bytes`](crate::Evaluator::matches_bytes)).
pub fn message_from_json(
    dialect: Dialect,
    options: &Options,
    message: &serde_json::Value,
) -> Result<Message, MessageError> {
    check_message_options(dialect, options)?;
    let json = serde_json::to_vec(message).map_err(|e| MessageError::new("", e.to_string()))?;
    owned_part(
        options,
        &crate::shape::read_for(&json, options, filtervm_vm::json::ReadMode::Validating)?.parts(),
    )
}

/// Reads one line of a message log as the dialect's part, owned, the way `filtervm route` reads
/// its lines: for sns in body scope the line is the raw body and for eventgrid the event (both
/// kept as bytes, read when bound: no shape is told); for the other dialects the line's
/// `attributes` or `headers` member (the other members ignored, an absent one read as none),
/// checked by the dialect's rules.
///
/// `filtervm match` and `explain` read lines with [`crate::read_messages`] instead, which tells
/// the line's shape and reports a line without the filter's part.
pub fn message_from_line(
    dialect: Dialect,
    options: &Options,
    line: &str,
) -> Result<Message, MessageError> {
    check_message_options(dialect, options)?;
    match options {
        Options::Sns(sns) if sns.scope == crate::SnsScope::MessageBody => {
            Ok(sns::message::body(line))
        }
        Options::EventGrid(_) | Options::EventBridge => eventgrid::message_from_line(line),
        _ => owned_part(
            options,
            &crate::shape::read_member_parts(line.as_bytes(), options)?.parts(),
        ),
    }
}

/// The part of `message` filters with `options` read, as an owned [`Message`] (names and
/// values that are not UTF-8 are converted lossily).
pub(crate) fn owned_part<A: Attributes + ?Sized, H: Headers + ?Sized>(
    options: &Options,
    message: &MessageParts<'_, A, H>,
) -> Result<Message, MessageError> {
    fn text<T: Text + ?Sized>(t: &T) -> String {
        String::from_utf8_lossy(t.bytes()).into_owned()
    }
    Ok(match message.select(options)? {
        SelectedPart::Body { bytes, .. } => Message::Body(bytes.to_vec()),
        SelectedPart::Attributes(None) => Message::Attributes(Vec::new()),
        SelectedPart::Headers(None) => Message::Headers(Vec::new()),
        SelectedPart::Attributes(Some(attributes)) => Message::Attributes(
            attributes
                .entries()
                .map(|(name, data_type, value)| Attribute {
                    name: text(name),
                    data_type,
                    value: text(value),
                })
                .collect(),
        ),
        SelectedPart::Headers(Some(headers)) => Message::Headers(
            headers
                .entries()
                .map(|(name, values)| Header {
                    name: text(name),
                    values: values.values().iter().map(text).collect(),
                })
                .collect(),
        ),
    })
}

/// Messages are read with the filter's options: options of another dialect are a mistake.
fn check_message_options(dialect: Dialect, options: &Options) -> Result<(), MessageError> {
    if options.dialect() == dialect {
        return Ok(());
    }
    Err(MessageError {
        code: ErrorCode::InvalidOptions,
        pointer: String::new(),
        message: format!(
            "a {dialect} message read with {} options ({options})",
            options.dialect()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, compile_text};
    use serde_json::json;

    /// A policy each dialect accepts with its default options.
    fn valid_policy(dialect: Dialect) -> serde_json::Value {
        match dialect {
            Dialect::Sns | Dialect::Basaltic | Dialect::EventBridge => json!({"a": ["x"]}),
            Dialect::EventGrid => json!({"subjectBeginsWith": "a"}),
            Dialect::Stream => json!("a = x"),
            Dialect::Expr => json!({"key": "a", "op": "exists"}),
        }
    }

    #[test]
    fn every_option_error_in_every_dialect_is_invalid_options() {
        let mut cases: Vec<(Dialect, serde_json::Value, &str)> = Vec::new();
        for dialect in Dialect::ALL {
            // Not an object, and an unknown option.
            cases.push((dialect, json!([1]), ""));
            cases.push((dialect, json!("MessageBody"), ""));
            cases.push((dialect, json!({"nope": 1}), "/nope"));
        }
        // A dialect without options given another dialect's option.
        cases.push((Dialect::Basaltic, json!({"scope": "MessageBody"}), "/scope"));
        cases.push((Dialect::Stream, json!({"max_depth": 3}), "/max_depth"));
        // Wrong types and values out of range.
        cases.push((Dialect::Sns, json!({"scope": 5}), "/scope"));
        cases.push((Dialect::Sns, json!({"scope": "Body"}), "/scope"));
        cases.push((Dialect::EventGrid, json!({"schema": true}), "/schema"));
        cases.push((
            Dialect::EventGrid,
            json!({"schema": "CustomInputSchema"}),
            "/schema",
        ));
        cases.push((Dialect::Expr, json!({"max_depth": "3"}), "/max_depth"));
        cases.push((Dialect::Expr, json!({"max_depth": -1}), "/max_depth"));
        cases.push((Dialect::Expr, json!({"max_depth": 63}), "/max_depth"));
        for (dialect, options, pointer) in cases {
            for (how, result) in [
                ("value", Options::from_json(dialect, &options)),
                (
                    "text",
                    Options::from_json(dialect, options.to_string().as_str()),
                ),
            ] {
                let e = result.expect_err("invalid options are rejected");
                let first = e.first().expect("one error");
                assert_eq!(
                    (first.code, first.pointer.as_str()),
                    (ErrorCode::InvalidOptions, pointer),
                    "{dialect} {options} via {how}: {e}"
                );
            }
        }
        // Options of another dialect, given to compile, compile_text or a message reader.
        for dialect in Dialect::ALL {
            let policy = valid_policy(dialect);
            let text = match &policy {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let own = Options::from(dialect);
            assert!(compile(dialect, &policy, &own).is_ok(), "{dialect}");
            assert!(compile_text(dialect, &text, &own).is_ok(), "{dialect}");
            for other in Dialect::ALL.into_iter().filter(|d| *d != dialect) {
                let options = Options::from(other);
                for result in [
                    compile(dialect, &policy, &options).map(drop),
                    compile_text(dialect, &text, &options).map(drop),
                ] {
                    let e = result.expect_err("another dialect's options");
                    assert_eq!(e.code(), Some(ErrorCode::InvalidOptions), "{dialect}: {e}");
                }
                let e = message_from_json(dialect, &options, &json!({})).unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidOptions);
            }
        }
    }

    #[test]
    fn policy_text_errors_have_the_dialect_codes() {
        let huge = format!("{{\"a\": [\"{}\"]}}", "x".repeat(crate::MAX_POLICY_BYTES));
        for dialect in Dialect::ALL {
            let options = Options::from(dialect);
            let e = compile_text(dialect, &huge, &options).unwrap_err();
            assert_eq!(e.code(), Some(dialect.limit_code()), "{dialect}");
            let e = compile_text(dialect, "{\"a\": [1,]}", &options).unwrap_err();
            assert_eq!(e.code(), Some(dialect.invalid_code()), "{dialect}");
            assert_eq!(e.errors[0].pointer, "/a/1", "{dialect}: {e}");
            assert!(
                e.to_string().contains("line 1 column 10: unexpected `]`"),
                "{dialect}: {e}"
            );
            let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
            let e = compile_text(dialect, &deep, &options).unwrap_err();
            assert!(e.to_string().contains("deeper than 128"), "{dialect}: {e}");
        }
        let e = compile_text(Dialect::Sns, "{oops", &Options::from(Dialect::Sns)).unwrap_err();
        assert!(e.to_string().contains("failed to parse JSON."), "{e}");
    }
}

#[cfg(test)]
mod lone_surrogate_tests {
    use super::Dialect;
    use crate::{Options, compile_text};

    #[test]
    fn a_lone_surrogate_in_policy_text_is_named_with_its_pointer() {
        for (text, escape, pointer) in [
            (r#"{"a": ["\ud800"]}"#, r"\ud800", "/a/0"),
            (r#"{"a": ["x\ud800y"]}"#, r"\ud800", "/a/0"),
            (r#"{"a": ["\udc00"]}"#, r"\udc00", "/a/0"),
            (r#"{"a": ["\ud800\u0041"]}"#, r"\ud800", "/a/0"),
            (r#"{"a": ["ok\ud83d\ude00", "\uDBFF"]}"#, r"\uDBFF", "/a/1"),
            (
                r#"{"a": {"b\\": [1, {"c": "\\\ud800"}]}}"#,
                r"\ud800",
                "/a/b\\/1/c",
            ),
            (r#"{"a\ud800": ["x"]}"#, r"\ud800", ""),
        ] {
            for dialect in Dialect::ALL {
                let e = compile_text(dialect, text, &Options::from(dialect)).expect_err(text);
                let first = e.first().expect("an error");
                assert!(
                    first
                        .message
                        .contains(&format!("lone surrogate `{escape}` at line 1 column")),
                    "{dialect} {text}: {e}"
                );
                assert_eq!(first.pointer, pointer, "{dialect} {text}: {e}");
            }
        }
    }
}

//! The dialect front ends. Each module parses its dialect's JSON (or text) into its own AST,
//! validates every rule and limit, lowers the AST to IR, and reads messages in its shape.

pub mod basaltic;
pub mod eventgrid;
pub mod expr;
pub mod sns;
pub mod stream;

use crate::error::{CompileError, MessageError};
use crate::ir::Node;
use filtervm_vm::message::Message;
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
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 5] = [
        Dialect::Sns,
        Dialect::Basaltic,
        Dialect::EventGrid,
        Dialect::Stream,
        Dialect::Expr,
    ];

    /// The dialect's name as written in vectors and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sns => "sns",
            Dialect::Basaltic => "basaltic",
            Dialect::EventGrid => "eventgrid",
            Dialect::Stream => "stream",
            Dialect::Expr => "expr",
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
    "unknown dialect `{}` (expected sns, basaltic, eventgrid, stream or expr)",
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

/// The error code of a dialect the library does not implement yet.
pub const NOT_IMPLEMENTED: &str = "DIALECT_NOT_IMPLEMENTED";

/// The error code of every option error, in every dialect: options that are not an object, an
/// unknown option, a value of the wrong type or out of range ([`check_options`]).
pub const INVALID_OPTIONS: &str = "INVALID_OPTIONS";

/// Parses, validates and lowers a policy of `dialect` to IR.
pub(crate) fn lower(
    dialect: Dialect,
    policy: &serde_json::Value,
    options: &serde_json::Value,
) -> Result<Node, CompileError> {
    match dialect {
        Dialect::Basaltic => basaltic::lower(policy, options),
        Dialect::Sns => sns::lower(policy, options),
        Dialect::EventGrid => eventgrid::lower(policy, options),
        Dialect::Stream => stream::lower(policy, options),
        Dialect::Expr => expr::lower(policy, options),
    }
}

/// Checks raw policy text before JSON parsing (dialects with text-level limits).
pub(crate) fn check_text(
    dialect: Dialect,
    text: &str,
    options: &serde_json::Value,
) -> Result<(), CompileError> {
    match dialect {
        Dialect::Expr => expr::check_text(text, options),
        Dialect::Sns => sns::check_text(text, options),
        _ => Ok(()),
    }
}

/// The object member `member` of a message in the vector shape (`{"attributes": {..}}`,
/// `{"headers": {..}}`): `None` when it is absent or null; an error naming the expected `shape`
/// when the message or the member is not an object.
pub(crate) fn message_member<'a>(
    message: &'a serde_json::Value,
    member: &str,
    shape: &str,
) -> Result<Option<&'a serde_json::Map<String, serde_json::Value>>, MessageError> {
    let serde_json::Value::Object(top) = message else {
        return Err(MessageError::new(
            "",
            format!("a message must be a JSON object {shape}"),
        ));
    };
    match top.get(member) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(MessageError::new(
            crate::error::pointer::push("", member),
            format!("`{member}` must be an object: the message shape is {shape}"),
        )),
    }
}

/// Reads a message given as JSON in the dialect's shape (conformance `FORMAT.md`).
pub fn message_from_json(
    dialect: Dialect,
    options: &serde_json::Value,
    message: &serde_json::Value,
) -> Result<Message, MessageError> {
    match dialect {
        Dialect::Basaltic => basaltic::message_from_json(message),
        Dialect::Sns => sns::message_from_json(options, message),
        Dialect::EventGrid => eventgrid::message_from_json(options, message),
        Dialect::Stream => stream::message_from_json(options, message),
        Dialect::Expr => expr::message_from_json(options, message),
    }
}

/// Reads one line of a `filtervm match` input: the dialect's natural message form (for most
/// dialects the same JSON as [`message_from_json`]).
pub fn message_from_line(
    dialect: Dialect,
    options: &serde_json::Value,
    line: &str,
) -> Result<Message, MessageError> {
    match dialect {
        Dialect::Basaltic => {
            let value: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| MessageError::new("", format!("not JSON: {e}")))?;
            basaltic::message_from_json(&value)
        }
        Dialect::Sns => sns::message_from_line(options, line),
        Dialect::EventGrid => eventgrid::message_from_line(options, line),
        Dialect::Stream => stream::message_from_line(options, line),
        Dialect::Expr => expr::message_from_line(options, line),
    }
}

/// Validates `options` for `dialect` the way compiling does: every option error, whatever the
/// dialect, has the code [`INVALID_OPTIONS`] and a pointer to the option (`""` when `options` is
/// not an object). `null` and `{}` are the defaults everywhere.
pub fn check_options(dialect: Dialect, options: &serde_json::Value) -> Result<(), CompileError> {
    match dialect {
        Dialect::Basaltic | Dialect::Stream => no_options(options),
        Dialect::Sns => sns::scope(options).map(drop).map_err(CompileError::from),
        Dialect::EventGrid => eventgrid::Schema::from_options(options).map(drop),
        Dialect::Expr => expr::parse_options(options).map(drop),
    }
}

/// Rejects options other than an empty object (for dialects without options).
pub(crate) fn no_options(options: &serde_json::Value) -> Result<(), CompileError> {
    match options {
        serde_json::Value::Null => Ok(()),
        serde_json::Value::Object(o) if o.is_empty() => Ok(()),
        serde_json::Value::Object(o) => {
            let name = o.keys().next().map(String::as_str).unwrap_or("");
            Err(CompileError::one(
                INVALID_OPTIONS,
                crate::error::pointer::push("", name),
                format!(
                    "unknown option `{}`: this dialect takes no options",
                    crate::error::excerpt(name)
                ),
            ))
        }
        _ => Err(CompileError::one(
            INVALID_OPTIONS,
            "",
            "options must be a JSON object",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, compile_text};
    use serde_json::json;

    /// A policy each dialect accepts with its default options.
    fn valid_policy(dialect: Dialect) -> serde_json::Value {
        match dialect {
            Dialect::Sns | Dialect::Basaltic => json!({"a": ["x"]}),
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
            let policy = valid_policy(dialect);
            let text = match &policy {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            for (how, result) in [
                ("compile", compile(dialect, &policy, &options).map(drop)),
                (
                    "compile_text",
                    compile_text(dialect, &text, &options).map(drop),
                ),
                ("check_options", check_options(dialect, &options)),
            ] {
                let e = result.expect_err("invalid options are rejected");
                let first = e.first().expect("one error");
                assert_eq!(
                    (first.code, first.pointer.as_str()),
                    (INVALID_OPTIONS, pointer),
                    "{dialect} {options} via {how}: {e}"
                );
            }
        }
        for dialect in Dialect::ALL {
            assert!(check_options(dialect, &json!({})).is_ok());
            assert!(check_options(dialect, &serde_json::Value::Null).is_ok());
        }
    }
}

#[cfg(test)]
mod lone_surrogate_tests {
    use super::Dialect;
    use crate::compile_text;
    use serde_json::json;

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
                let e = compile_text(dialect, text, &json!({})).expect_err(text);
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

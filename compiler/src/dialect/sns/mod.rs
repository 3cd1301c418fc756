//! The `sns` dialect: AWS SNS-compatible subscription filter policies
//! (`specs/sns-filters.md`, seed `001_81d11ed311e5129b.txt`).
//!
//! A policy maps property names to lists of alternatives (ORed); names are ANDed; `$or` adds
//! alternatives across keys. With the option `{"scope": "MessageAttributes"}` (the default) it
//! reads typed message attributes; with `{"scope": "MessageBody"}` it reads the JSON body, and
//! nested policy objects mirror the body's structure.
//!
//! - [`parse`]: structure and operators, with AWS's wording (rules 35-41, 43a);
//! - [`limits`]: the scope check for nested objects, the 5-key and the 150-combination rules
//!   (rules 13, 42, 43), checked in that order after the structure;
//! - [`lower`]: the IR, every SNS quirk made explicit;
//! - [`message`]: reading messages in the vector shape or as `filtervm match` lines.
//!
//! # Errors
//!
//! Every policy error has the code [`CODE`] (`SNS_INVALID_FILTER_POLICY`; AWS answers all of them
//! with `InvalidParameter`), a JSON Pointer to the offending member, operator or element, and a
//! message containing AWS's wording (for example "Filter policy can not have more than 5 keys",
//! "Filter policy is too complex", "Empty arrays are not allowed"). Bad options have the code
//! [`INVALID_OPTIONS`](super::INVALID_OPTIONS). The 256 KiB size limit (rule 44) is checked on the
//! policy text by `compile_text`, and here too when the policy is given as a JSON string holding
//! its text.
//!
//! # Decisions
//!
//! - **equals-ignore-case** (rule 26) compares with the simple one-to-one Unicode uppercase
//!   mapping of [`filtervm_vm::fold`] (the same as Event Grid's EG-31). event-ruler accepts, for
//!   each character `c` of the pattern, `c` lowercased or uppercased (full mappings). The two agree
//!   on every character whose case mappings are single characters that map back (ASCII, Latin-1
//!   but `ß`/`ÿ`, Greek, Cyrillic, ...); they differ on the rare rest: `ß` does not match `SS` here,
//!   `ſ` matches `s`/`S`, final `ς` matches `Σ`, the Kelvin sign matches only itself.
//! - **anything-but** (rule 28): a present value passes when none of its leaves is excluded and it
//!   has at least one leaf of a comparable type; every scalar leaf (string, number, boolean, null)
//!   is comparable (D-1: a string passes a numeric exclusion list), and binding gives a key no
//!   value without a scalar leaf, so this is "present and no leaf excluded".
//! - **numbers**: a policy number must be finite as a binary64; a body or `String.Array` number
//!   too large for a binary64 reads as an infinity and compares like any other number.

pub mod limits;
pub mod lower;
pub mod message;
pub mod parse;

use crate::error::{CompileError, MessageError, PolicyError, excerpt};
use crate::ir::Node;
use filtervm_vm::message::Message;
use serde_json::Value;

/// The error code of every policy error (AWS: `InvalidParameter`).
pub const CODE: &str = "SNS_INVALID_FILTER_POLICY";

/// The AWS wording of a policy that is not JSON (rule 35).
pub const NOT_JSON: &str = "failed to parse JSON.";

/// What a policy filters (rule 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Message attributes (the default).
    #[default]
    MessageAttributes,
    /// The JSON message body.
    MessageBody,
}

/// Reads the options: `null`, `{}`, or `{"scope": "MessageAttributes" | "MessageBody"}`.
pub fn scope(options: &Value) -> Result<Scope, PolicyError> {
    let bad = |at: &str, message: String| PolicyError::new(super::INVALID_OPTIONS, at, message);
    let map = match options {
        Value::Null => return Ok(Scope::default()),
        Value::Object(map) => map,
        _ => return Err(bad("", "options must be a JSON object".to_owned())),
    };
    let mut scope = Scope::default();
    for (name, value) in map {
        let at = crate::error::pointer::push("", name);
        if name != "scope" {
            return Err(bad(
                &at,
                format!(
                    "unknown option `{}`: the sns dialect takes only `scope`",
                    excerpt(name)
                ),
            ));
        }
        scope = match value.as_str() {
            Some("MessageAttributes") => Scope::MessageAttributes,
            Some("MessageBody") => Scope::MessageBody,
            _ => {
                // AWS shows a string without its quotes.
                let shown = match value.as_str() {
                    Some(text) => excerpt(text).to_string(),
                    None => excerpt(value).to_string(),
                };
                return Err(bad(
                    &at,
                    format!(
                        "FilterPolicyScope: Invalid value [{shown}]. Please use either MessageBody or MessageAttributes"
                    ),
                ));
            }
        };
    }
    Ok(scope)
}

/// Parses policy text (rule 35: "failed to parse JSON.", rule 44: 256 KiB).
pub fn parse_text(text: &str) -> Result<Value, CompileError> {
    if text.len() > crate::MAX_POLICY_BYTES {
        return Err(CompileError::one(
            CODE,
            "",
            format!(
                "the policy is {} bytes; the limit is {} bytes (256 KiB)",
                text.len(),
                crate::MAX_POLICY_BYTES
            ),
        ));
    }
    serde_json::from_str(text).map_err(|e| {
        let e = crate::error::JsonTextError::new(text, &e);
        CompileError::one(CODE, e.pointer, format!("{NOT_JSON} ({})", e.message))
    })
}

/// Checks policy text before `compile_text` parses it, so that malformed JSON gets AWS's wording.
pub(crate) fn check_text(text: &str, options: &Value) -> Result<(), CompileError> {
    scope(options).map_err(|e| CompileError { errors: vec![e] })?;
    parse_text(text).map(|_| ())
}

/// Parses and validates a policy for `scope`, in the order of rule 13.
pub fn validate(scope: Scope, policy: &Value) -> Result<parse::Object, CompileError> {
    let mut parser = parse::Parser::default();
    let root = parser.root(policy);
    let Some(root) = root.filter(|_| parser.errors.is_empty()) else {
        return Err(parser.errors.into());
    };
    let mut errors = Vec::new();
    limits::check_scope(scope, &root, &mut errors);
    if errors.is_empty() {
        limits::check_keys(&root, &mut errors);
    }
    if errors.is_empty() {
        limits::check_combinations(&root, &mut errors);
    }
    if errors.is_empty() {
        Ok(root)
    } else {
        Err(errors.into())
    }
}

/// Parses, validates and lowers. A policy given as a JSON string is read as the policy text.
pub(crate) fn lower(policy: &Value, options: &Value) -> Result<Node, CompileError> {
    let scope = scope(options).map_err(|e| CompileError { errors: vec![e] })?;
    let parsed;
    let policy = match policy {
        Value::String(text) => {
            parsed = parse_text(text)?;
            &parsed
        }
        other => other,
    };
    let root = validate(scope, policy)?;
    Ok(lower::lower_policy(scope, &root))
}

fn message_scope(options: &Value) -> Result<Scope, MessageError> {
    scope(options).map_err(|e| MessageError {
        code: e.code,
        pointer: e.pointer,
        message: e.message,
    })
}

/// Reads a message in the vector shape (`FORMAT.md`); see [`message::from_json`].
pub fn message_from_json(options: &Value, message: &Value) -> Result<Message, MessageError> {
    message::from_json(message_scope(options)?, message)
}

/// Reads one line of `filtervm match` input: in body scope the line is the raw body text (so a
/// plain NDJSON event log can be filtered), in attribute scope it is the vector shape.
pub fn message_from_line(options: &Value, line: &str) -> Result<Message, MessageError> {
    match message_scope(options)? {
        Scope::MessageBody => Ok(message::body(line)),
        Scope::MessageAttributes => {
            let value: Value = serde_json::from_str(line)
                .map_err(|e| MessageError::new("", format!("not JSON: {e}")))?;
            message::from_json(Scope::MessageAttributes, &value)
        }
    }
}

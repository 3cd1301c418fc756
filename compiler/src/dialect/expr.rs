//! The `expr` dialect (PLACEHOLDER: not implemented yet).

use crate::error::{CompileError, MessageError};
use crate::ir::Node;
use filtervm_vm::message::Message;
use serde_json::Value;

/// The error code of policy errors in this dialect.
pub const CODE: &str = super::NOT_IMPLEMENTED;

/// Parses, validates and lowers a policy.
pub(crate) fn lower(policy: &Value, options: &Value) -> Result<Node, CompileError> {
    let _ = (policy, options);
    Err(CompileError::one(
        super::NOT_IMPLEMENTED,
        "",
        "the expr dialect is not implemented yet",
    ))
}

/// Reads a message in the vector shape (`FORMAT.md`).
pub fn message_from_json(options: &Value, message: &Value) -> Result<Message, MessageError> {
    let _ = (options, message);
    Err(MessageError::new(
        "",
        "the expr dialect is not implemented yet",
    ))
}

/// Reads one line of `filtervm match` input.
pub fn message_from_line(options: &Value, line: &str) -> Result<Message, MessageError> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| MessageError::new("", format!("not JSON: {e}")))?;
    message_from_json(options, &value)
}

/// Checks raw policy text before it is parsed as JSON (for example its nesting depth, so that a
/// policy nested far beyond `max_depth` is rejected with the depth error, not a JSON error).
pub(crate) fn check_text(text: &str, options: &Value) -> Result<(), CompileError> {
    let _ = (text, options);
    Ok(())
}

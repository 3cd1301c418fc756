//! Reference evaluation of `expr` policies (PLACEHOLDER: not implemented yet).

use super::ReferenceError;
use serde_json::Value;

/// Evaluates a (valid) policy against a message in the vector shape.
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let _ = (options, policy, message);
    Err(ReferenceError(
        "the reference interpreter has no expr dialect yet".into(),
    ))
}

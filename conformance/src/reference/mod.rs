//! The reference interpreter: evaluates a policy's JSON directly against a message's JSON, as
//! plainly as each spec reads.
//!
//! It shares no code with the compiler's lowering, optimizer or codegen, nor with the VM's
//! binding, matchers or executor: the JSON reader ([`json`]), number grammars, canonical number
//! text, patterns and case folding are written again here, the obvious way. That is what makes the differential check
//! (VM versus reference) mean something. It trusts the compiler's *validation*: it is only asked
//! about policies the front end accepted.

pub mod basaltic;
pub mod eventbridge;
pub mod eventgrid;
pub mod expr;
pub mod json;
pub mod number;
pub mod sns;
pub mod stream;

use filtervm_compiler::Dialect;
use json::Value;

/// Why the reference interpreter could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceError(pub String);

impl std::fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Evaluates `policy` against `message` (both in the vector format's JSON shapes), given as
/// JSON text: each is read by the reference's own reader ([`json::parse`]); `options` may be
/// empty for the dialect's defaults.
pub fn evaluate_text(
    dialect: Dialect,
    options: &str,
    policy: &str,
    message: &str,
) -> Result<bool, ReferenceError> {
    let read = |what: &str, text: &str| {
        json::parse(text).map_err(|e| ReferenceError(format!("{what} is not JSON: {e}")))
    };
    let options = if options.trim().is_empty() {
        Value::Null
    } else {
        read("the options", options)?
    };
    evaluate(
        dialect,
        &options,
        &read("the policy", policy)?,
        &read("the message", message)?,
    )
}

/// Evaluates `policy` against `message` (both in the vector format's JSON shapes).
pub fn evaluate(
    dialect: Dialect,
    options: &Value,
    policy: &Value,
    message: &Value,
) -> Result<bool, ReferenceError> {
    match dialect {
        Dialect::Basaltic => basaltic::evaluate(policy, message),
        Dialect::Sns => sns::evaluate(options, policy, message),
        Dialect::EventGrid => eventgrid::evaluate(options, policy, message),
        Dialect::Stream => stream::evaluate(options, policy, message),
        Dialect::Expr => expr::evaluate(options, policy, message),
    }
}

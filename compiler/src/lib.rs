//! The filtervm compiler: dialect front ends, the common IR, the optimizer and codegen to the
//! `filtervm-vm` bytecode — and the `filtervm` command-line tool (feature `cli`).
//!
//! ```
//! use filtervm_compiler::{compile, Dialect, Evaluator};
//! use filtervm_vm::message::{AttributeType, Message};
//! use serde_json::json;
//!
//! let policy = json!({
//!     "event": ["order.created", "order.paid"],
//!     "amount": [{"numeric": [">=", 100, "<", 1000]}],
//!     "test": [{"exists": false}]
//! });
//! let filter = compile(Dialect::Basaltic, &policy, &json!({})).unwrap();
//!
//! // A message built without JSON...
//! let message = Message::attributes([
//!     ("event", AttributeType::String, "order.paid"),
//!     ("amount", AttributeType::Number, "149.50"),
//! ]);
//! assert!(filter.matches(&message));
//!
//! // ...or from JSON in the dialect's shape, evaluated with reusable buffers.
//! let json = json!({"attributes": {"event": {"type": "String", "value": "order.refunded"}}});
//! let mut evaluator = Evaluator::new();
//! assert!(!evaluator.matches_json(&filter, &json).unwrap());
//!
//! // Errors carry a stable code and a JSON Pointer.
//! let err = compile(Dialect::Basaltic, &json!({"a": [{"prefix": ""}]}), &json!({})).unwrap_err();
//! assert_eq!(err.errors[0].code, "NOTIFICATION_INVALID_FILTER_POLICY");
//! assert_eq!(err.errors[0].pointer, "/a/0/prefix");
//! ```

pub mod codegen;
pub mod dialect;
pub mod error;
pub mod explain;
pub mod intern;
pub mod ir;
pub mod lint;
pub mod opt;
pub mod set;
pub mod wire;

pub use dialect::{Dialect, message_from_json, message_from_line};
pub use error::{CompileError, MessageError, PolicyError};

use filtervm_vm::bind::Bindings;
use filtervm_vm::message::Message;
use filtervm_vm::program::Program;

/// The largest policy text accepted, in bytes (basaltic B-12, sns rule 44).
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// The error code of a message too complex to evaluate within the binding limits.
pub const MESSAGE_TOO_COMPLEX: &str = "MESSAGE_TOO_COMPLEX";

/// The error code for policy text that is too large or not JSON.
pub const INVALID_POLICY_TEXT: &str = "INVALID_POLICY_TEXT";

/// A compiled filter: its IR (before and after optimization) and its program.
///
/// A filter loaded from bytes ([`Filter::from_bytes`]) has its program but no IR.
#[derive(Debug, Clone)]
pub struct Filter {
    dialect: Dialect,
    options: serde_json::Value,
    /// `None` for a filter loaded from bytes (the IR does not travel).
    lowered: Option<ir::Node>,
    /// `None` for a filter loaded from bytes.
    optimized: Option<ir::Node>,
    program: Program,
}

impl Filter {
    /// The dialect the filter was written in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The dialect options the filter was compiled with.
    pub fn options(&self) -> &serde_json::Value {
        &self.options
    }

    /// A filter loaded from bytes: its program, dialect and options, and no IR.
    pub(crate) fn loaded(dialect: Dialect, options: serde_json::Value, program: Program) -> Filter {
        Filter {
            dialect,
            options,
            lowered: None,
            optimized: None,
            program,
        }
    }

    /// The IR as lowered from the policy, before optimization (`None` when loaded from bytes).
    pub fn lowered_ir(&self) -> Option<&ir::Node> {
        self.lowered.as_ref()
    }

    /// The optimized IR the program was generated from (`None` when loaded from bytes).
    pub fn ir(&self) -> Option<&ir::Node> {
        self.optimized.as_ref()
    }

    /// The bytecode program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Whether `message` matches (allocates fresh buffers; see [`Evaluator`] to reuse them).
    pub fn matches(&self, message: &Message) -> bool {
        Evaluator::new().matches(self, message)
    }
}

/// Reusable evaluation buffers: bindings and registers.
#[derive(Debug, Default)]
pub struct Evaluator {
    bindings: Bindings,
    registers: Vec<bool>,
}

impl Evaluator {
    /// New, empty buffers.
    pub fn new() -> Evaluator {
        Evaluator::default()
    }

    /// Binds `message` to the filter's keys and runs its program.
    ///
    /// Fails closed: an SNS body too complex to judge element by element (more rows than
    /// `filtervm_vm::bind::MAX_ROW_SLOTS` allow, sns rule 18) is bound as a non-object and
    /// matches only the empty policy. [`Evaluator::try_matches`] reports that case instead.
    pub fn matches(&mut self, filter: &Filter, message: &Message) -> bool {
        self.bindings.bind(filter.program.keys(), message);
        filter.program.eval(&self.bindings, &mut self.registers)
    }

    /// Like [`Evaluator::matches`], but a message the binder had to give up on is an error.
    pub fn try_matches(
        &mut self,
        filter: &Filter,
        message: &Message,
    ) -> Result<bool, MessageError> {
        let verdict = self.matches(filter, message);
        if self.bindings.overflowed() {
            return Err(MessageError {
                code: MESSAGE_TOO_COMPLEX,
                pointer: String::new(),
                message: format!(
                    "the body has too many combinations of array elements to judge element by element \
                     (more than {} slots); it was treated as not matching",
                    filtervm_vm::bind::MAX_ROW_SLOTS
                ),
            });
        }
        Ok(verdict)
    }

    /// Reads `message` in the dialect's JSON shape, then matches it.
    pub fn matches_json(
        &mut self,
        filter: &Filter,
        message: &serde_json::Value,
    ) -> Result<bool, MessageError> {
        let message = message_from_json(filter.dialect, &filter.options, message)?;
        Ok(self.matches(filter, &message))
    }
}

/// Compiles a policy given as JSON, with dialect options (a JSON object, or `null` for none).
pub fn compile(
    dialect: Dialect,
    policy: &serde_json::Value,
    options: &serde_json::Value,
) -> Result<Filter, CompileError> {
    let lowered = dialect::lower(dialect, policy, options)?;
    let optimized = opt::optimize(lowered.clone());
    let program = codegen::generate(&optimized).map_err(|e| {
        CompileError::one(
            "INTERNAL_CODEGEN",
            "",
            format!("codegen produced an invalid program: {e}"),
        )
    })?;
    Ok(Filter {
        dialect,
        options: options.clone(),
        lowered: Some(lowered),
        optimized: Some(optimized),
        program,
    })
}

/// Compiles policy text: checks the size limit, parses the JSON, then [`compile`]s it.
pub fn compile_text(
    dialect: Dialect,
    text: &str,
    options: &serde_json::Value,
) -> Result<Filter, CompileError> {
    let code = error_code(dialect);
    if text.len() > MAX_POLICY_BYTES {
        return Err(CompileError::one(
            code,
            "",
            format!(
                "the policy is {} bytes; the limit is {MAX_POLICY_BYTES} bytes (256 KiB)",
                text.len()
            ),
        ));
    }
    dialect::check_text(dialect, text, options)?;
    let policy: serde_json::Value = match serde_json::from_str(text) {
        Ok(policy) => policy,
        // The stream dialect's text form (`region = eu-* and n > 5`) is policy text too.
        Err(_) if dialect == Dialect::Stream && !text.trim_start().starts_with(['{', '[']) => {
            serde_json::Value::String(text.trim_end_matches(['\n', '\r']).to_owned())
        }
        Err(e) => {
            let e = error::JsonTextError::new(text, &e);
            return Err(CompileError::one(
                code,
                e.pointer,
                format!("the policy is not valid JSON: {}", e.message),
            ));
        }
    };
    compile(dialect, &policy, options)
}

/// The code a dialect's policy errors carry when no more specific code applies.
pub fn error_code(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Basaltic => dialect::basaltic::CODE,
        Dialect::Sns => dialect::sns::CODE,
        Dialect::EventGrid => dialect::eventgrid::CODE,
        Dialect::Stream => dialect::stream::CODE,
        Dialect::Expr => dialect::expr::CODE,
    }
}

//! Every error a binding reports, as a flat record: a [`FailureKind`] (which each binding turns
//! into its status or its exception class) and one or more [`Detail`]s, each a stable code, a
//! JSON Pointer and a message.
//!
//! The codes are the library's ([`ErrorCode::as_str`]: the one table of codes, documented on
//! [`ErrorCode`]) and three of the bindings' own: [`INVALID_ARGUMENT`], [`SET_FULL`] and
//! [`PANIC`]. Every conversion from a library error is here, so that a situation has one code
//! in every binding.

use filtervm::{
    CompileError, ErrorCategory, ErrorCode, ExplainError, InsertError, LoadError, MessageError,
};
use std::fmt;

/// The code of an argument a binding rejects before the library sees it (an unknown dialect
/// name, a null pointer, a message given both as a document and as parts).
pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
/// The code of a set that cannot take one more distinct filter or test.
pub const SET_FULL: &str = "SET_FULL";
/// The code of a bug in filtervm caught at a binding's boundary.
pub const PANIC: &str = "PANIC";

/// What a [`Failure`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The policy or its options: every error of the policy is listed.
    Policy,
    /// A message that could not be read or judged.
    Message,
    /// Bytes that are not a filter, or a loaded filter asked for what it does not carry.
    Load,
    /// An argument of the binding itself (an unknown dialect name, a null pointer).
    Argument,
    /// A set that cannot take the filter.
    Set,
}

/// One error: a stable code, a JSON Pointer and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// The stable code (`SNS_SYNTAX_ERROR`, `INVALID_MESSAGE`, [`INVALID_ARGUMENT`], ...).
    pub code: &'static str,
    /// A JSON Pointer into the policy or the message (`""` for the whole of it; for the stream
    /// text form a byte span `bytes A..B`).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// Why an operation failed: a kind and at least one [`Detail`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What the failure is about.
    pub kind: FailureKind,
    /// The errors, at least one.
    pub details: Vec<Detail>,
}

impl Failure {
    /// A failure of one detail.
    pub fn one(
        kind: FailureKind,
        code: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Failure {
        Failure {
            kind,
            details: vec![Detail {
                code,
                pointer: pointer.into(),
                message: message.into(),
            }],
        }
    }

    /// A failure of the binding's own arguments (code [`INVALID_ARGUMENT`]).
    pub fn argument(message: impl Into<String>) -> Failure {
        Failure::one(FailureKind::Argument, INVALID_ARGUMENT, "", message)
    }

    /// The first detail's code.
    pub fn code(&self) -> &'static str {
        self.details.first().map_or("", |d| d.code)
    }
}

/// The kind of failure an error of `code` is.
pub fn kind_of(code: ErrorCode) -> FailureKind {
    match code.category() {
        ErrorCategory::Policy | ErrorCategory::Options | ErrorCategory::Internal => {
            FailureKind::Policy
        }
        ErrorCategory::Message => FailureKind::Message,
        ErrorCategory::Load => FailureKind::Load,
    }
}

impl From<CompileError> for Failure {
    fn from(e: CompileError) -> Failure {
        let kind = e.code().map_or(FailureKind::Policy, kind_of);
        Failure {
            kind,
            details: e
                .errors
                .into_iter()
                .map(|e| Detail {
                    code: e.code.as_str(),
                    pointer: e.pointer,
                    message: e.message,
                })
                .collect(),
        }
    }
}

impl From<MessageError> for Failure {
    fn from(e: MessageError) -> Failure {
        Failure::one(kind_of(e.code), e.code.as_str(), e.pointer, e.message)
    }
}

impl From<LoadError> for Failure {
    /// Bytes that are not a filter are a load failure whatever their code (stored options that
    /// are invalid are `INVALID_OPTIONS`, and still a load failure).
    fn from(e: LoadError) -> Failure {
        Failure::one(FailureKind::Load, e.code().as_str(), "", e.to_string())
    }
}

impl From<ExplainError> for Failure {
    fn from(e: ExplainError) -> Failure {
        match e {
            ExplainError::Message(e) => Failure::from(e),
            other => {
                let code = other.code();
                Failure::one(kind_of(code), code.as_str(), "", other.to_string())
            }
        }
    }
}

impl From<InsertError> for Failure {
    fn from(e: InsertError) -> Failure {
        match e.code() {
            Some(code) => Failure::one(kind_of(code), code.as_str(), "", e.to_string()),
            None => Failure::one(FailureKind::Set, SET_FULL, "", e.to_string()),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.details.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            if d.pointer.is_empty() {
                write!(f, "{}: {}", d.code, d.message)?;
            } else {
                write!(f, "{} at {}: {}", d.code, d.pointer, d.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_library_code_has_a_kind_by_its_category() {
        for &code in ErrorCode::ALL {
            let expected = match code.category() {
                ErrorCategory::Message => FailureKind::Message,
                ErrorCategory::Load => FailureKind::Load,
                _ => FailureKind::Policy,
            };
            assert_eq!(kind_of(code), expected, "{code}");
        }
        let e = Failure::from(MessageError::new("/a", "x"));
        assert_eq!(
            (e.kind, e.code()),
            (FailureKind::Message, "INVALID_MESSAGE")
        );
        assert_eq!(e.to_string(), "INVALID_MESSAGE at /a: x");
    }
}

//! Policy errors: a stable code, a JSON Pointer (or byte span) and a message a person can act on.

use std::fmt;

/// User input quoted in an error message: every message that quotes a key, a value, a number or
/// an option does it through [`excerpt`], which cuts it to [`EXCERPT_CHARS`] characters.
pub use filtervm_vm::excerpt::{EXCERPT_CHARS, excerpt};

/// One thing wrong with a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// A stable code (for example `NOTIFICATION_INVALID_FILTER_POLICY`).
    pub code: &'static str,
    /// A JSON Pointer to the offending part of the policy (`""` is the whole policy), or for the
    /// stream text form a byte span written `bytes A..B`.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl PolicyError {
    /// A new error.
    pub fn new(
        code: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> PolicyError {
        PolicyError {
            code,
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{} at {}: {}", self.code, at, self.message)
    }
}

/// A policy that did not compile: every error found, in policy order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// The errors (at least one).
    pub errors: Vec<PolicyError>,
}

impl CompileError {
    /// A compile error of one policy error.
    pub fn one(
        code: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> CompileError {
        CompileError {
            errors: vec![PolicyError::new(code, pointer, message)],
        }
    }

    /// The first error.
    pub fn first(&self) -> Option<&PolicyError> {
        self.errors.first()
    }
}

impl From<PolicyError> for CompileError {
    fn from(error: PolicyError) -> CompileError {
        CompileError {
            errors: vec![error],
        }
    }
}

impl From<Vec<PolicyError>> for CompileError {
    fn from(errors: Vec<PolicyError>) -> CompileError {
        CompileError { errors }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CompileError {}

/// A message that could not be read in the dialect's shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code} at {}: {message}", if pointer.is_empty() { "(root)" } else { pointer.as_str() })]
pub struct MessageError {
    /// A stable code (`INVALID_MESSAGE`, or a dialect's own).
    pub code: &'static str,
    /// A JSON Pointer into the message.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl MessageError {
    /// The generic code for a message not in the dialect's shape.
    pub const INVALID_MESSAGE: &'static str = "INVALID_MESSAGE";

    /// A message-shape error.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> MessageError {
        MessageError {
            code: MessageError::INVALID_MESSAGE,
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// JSON Pointer helpers (RFC 6901).
pub mod pointer {
    /// Escapes one reference token (`~` → `~0`, `/` → `~1`).
    pub fn escape(token: &str) -> String {
        token.replace('~', "~0").replace('/', "~1")
    }

    /// `base` extended by one token.
    pub fn push(base: &str, token: &str) -> String {
        format!("{base}/{}", escape(token))
    }

    /// `base` extended by an array index.
    pub fn index(base: &str, i: usize) -> String {
        format!("{base}/{i}")
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn escapes_tokens() {
            assert_eq!(super::push("", "a/b~c"), "/a~1b~0c");
            assert_eq!(super::index("/x", 3), "/x/3");
        }
    }
}

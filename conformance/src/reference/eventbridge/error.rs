//! The `eventbridge` reference's error codes and pattern errors.

use crate::reference::ReferenceError;
use std::fmt;

/// An invalid pattern: every row of EB-31's table (event-ruler's message text), the empty nested
/// anything-but list of EB-24, a pattern nested deeper than EB-34's 1,000 levels.
pub const INVALID_PATTERN: &str = "EVENTBRIDGE_INVALID_PATTERN";
/// EB-32: a branch with more than 256 paths ("exceeds max value of 256").
pub const LIMIT_EXCEEDED: &str = "EVENTBRIDGE_LIMIT_EXCEEDED";
/// EB-33: a wildcard complexity score above 10 ("Rule is too complex ...").
pub const PATTERN_TOO_COMPLEX: &str = "EVENTBRIDGE_PATTERN_TOO_COMPLEX";
/// An event that is not a JSON object (EB-3) or is nested deeper than 1,000 levels (EB-34).
pub const INVALID_MESSAGE: &str = "INVALID_MESSAGE";
/// The reference interpreter's own bounds
/// ([`MAX_BRANCHES`](crate::reference::eventbridge::MAX_BRANCHES), the search step and state-set
/// limits): it cannot answer, which says nothing about the input.
pub const REFERENCE_LIMIT: &str = "REFERENCE_LIMIT";

/// Why a pattern is invalid (or, with [`REFERENCE_LIMIT`], why the reference cannot judge it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// The code ([`INVALID_PATTERN`], [`LIMIT_EXCEEDED`], [`PATTERN_TOO_COMPLEX`] or
    /// [`REFERENCE_LIMIT`]).
    pub code: &'static str,
    /// A JSON Pointer to the offending part (empty for the whole pattern).
    pub pointer: String,
    /// The message (event-ruler's text where EB-31 quotes it).
    pub message: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at `{}`: {}", self.code, self.pointer, self.message)
    }
}

impl From<PatternError> for ReferenceError {
    fn from(e: PatternError) -> ReferenceError {
        ReferenceError(e.to_string())
    }
}

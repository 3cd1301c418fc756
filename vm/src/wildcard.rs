//! SNS wildcard patterns (sns rule 27).
//!
//! PLACEHOLDER: being written by a helper. Signatures are fixed.

/// A compiled wildcard pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Wildcard {
    source: Box<str>,
}

/// Why a wildcard was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WildcardError {
    /// AWS wording ("Consecutive wildcard characters", "Invalid escape character").
    pub message: String,
}

impl Wildcard {
    /// Compiles a wildcard pattern.
    pub fn compile(source: &str) -> Result<Wildcard, WildcardError> {
        Ok(Wildcard { source: source.into() })
    }
    /// Whether `value` matches (anchored at both ends).
    pub fn matches(&self, value: &str) -> bool {
        *self.source == *value
    }
    /// The pattern's source text.
    pub fn source(&self) -> &str {
        &self.source
    }
}

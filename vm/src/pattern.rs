//! Dot-segment patterns (stream dialect, seed 004, rules S1-S7).
//!
//! PLACEHOLDER: being written by a helper. Signatures are fixed.

/// A compiled segment pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SegmentPattern {
    source: Box<str>,
}

/// Why a pattern was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PatternError {
    /// What is wrong, pointing at the rule.
    pub message: String,
}

impl SegmentPattern {
    /// Compiles a pattern.
    pub fn compile(source: &str) -> Result<SegmentPattern, PatternError> {
        Ok(SegmentPattern { source: source.into() })
    }
    /// Whether `value` matches.
    pub fn matches(&self, value: &str) -> bool {
        *self.source == *value
    }
    /// The pattern's source text.
    pub fn source(&self) -> &str {
        &self.source
    }
}

//! Number text: the JSON number grammar (basaltic B-10, stream S9), canonical text (basaltic B-6)
//! and exact decimal comparison (Event Grid EG-33).
//!
//! PLACEHOLDER: being written by a helper. Signatures are fixed.

use std::cmp::Ordering;

/// Parses `text` as a number iff the whole text matches the JSON number grammar
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` and is finite as a binary64.
pub fn parse_json_number(text: &str) -> Option<f64> {
    let _ = text;
    None
}

/// The canonical text of a number (basaltic B-6): the shortest decimal that reads back to the
/// same binary64, written the way JavaScript's `Number.prototype.toString` writes it.
pub fn canonical_number_text(value: f64) -> String {
    format!("{value}")
}

/// An exact decimal value parsed from JSON number text (Event Grid EG-33).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decimal {
    _private: (),
}

impl Decimal {
    /// Parses JSON number text exactly. `None` when `text` is not a JSON number.
    pub fn parse(text: &str) -> Option<Decimal> {
        let _ = text;
        None
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, _other: &Self) -> Ordering {
        Ordering::Equal
    }
}

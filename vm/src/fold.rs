//! Ordinal ignore-case comparison (Event Grid EG-31): simple 1:1 Unicode uppercase mapping.
//!
//! PLACEHOLDER: being written by a helper. Signatures are fixed.

/// Maps one character with the simple (1:1) Unicode uppercase mapping.
pub fn simple_upper(c: char) -> char {
    c.to_ascii_uppercase()
}

/// Folds a whole string (used at compile time on policy constants).
pub fn fold(s: &str) -> String {
    s.chars().map(simple_upper).collect()
}

/// `value` equals `folded` (already folded) ignoring case; does not allocate.
pub fn eq_folded(value: &str, folded: &str) -> bool {
    fold(value) == folded
}

/// `value` starts with `folded` ignoring case; does not allocate.
pub fn starts_with_folded(value: &str, folded: &str) -> bool {
    fold(value).starts_with(folded)
}

/// `value` ends with `folded` ignoring case; does not allocate.
pub fn ends_with_folded(value: &str, folded: &str) -> bool {
    fold(value).ends_with(folded)
}

/// `value` contains `folded` ignoring case; does not allocate.
pub fn contains_folded(value: &str, folded: &str) -> bool {
    fold(value).contains(folded)
}

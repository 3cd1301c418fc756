//! The `eventbridge` reference's error codes and pattern errors.

use crate::reference::Rejection;
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
pub const REFERENCE_LIMIT: &str = crate::reference::REFERENCE_LIMIT;

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

impl PatternError {
    /// The product's code for this error (`filtervm_compiler::ErrorCode`, as its documentation
    /// sorts EB-31's messages): `EVENTBRIDGE_SYNTAX_ERROR` for a pattern not shaped like one,
    /// `EVENTBRIDGE_TYPE_ERROR` for an operand of the wrong JSON type,
    /// `EVENTBRIDGE_UNKNOWN_OPERATOR` for an operator that does not exist,
    /// `EVENTBRIDGE_INVALID_VALUE` for an operand of the right type but a bad value, and
    /// `EVENTBRIDGE_LIMIT_EXCEEDED` for EB-32 and EB-33. [`REFERENCE_LIMIT`] stays itself; a
    /// message no list sorts is [`UNSORTED`], never a guess.
    pub fn product_code(&self) -> &'static str {
        match self.code {
            LIMIT_EXCEEDED | PATTERN_TOO_COMPLEX => LIMIT,
            REFERENCE_LIMIT => REFERENCE_LIMIT,
            _ => message_code(&self.message),
        }
    }

    /// The error as the reference's [`Rejection`], with the product's code
    /// ([`PatternError::product_code`]).
    pub fn rejection(&self) -> Rejection {
        Rejection::new(
            self.product_code(),
            self.pointer.clone(),
            self.message.clone(),
        )
    }
}

/// `EVENTBRIDGE_SYNTAX_ERROR`: pattern text that is not JSON, or a pattern not shaped like one.
pub const SYNTAX: &str = "EVENTBRIDGE_SYNTAX_ERROR";
/// `EVENTBRIDGE_TYPE_ERROR`: an operand of the wrong JSON type.
pub const TYPE: &str = "EVENTBRIDGE_TYPE_ERROR";
/// `EVENTBRIDGE_UNKNOWN_OPERATOR`: an operator that does not exist.
pub const UNKNOWN_OPERATOR: &str = "EVENTBRIDGE_UNKNOWN_OPERATOR";
/// `EVENTBRIDGE_INVALID_VALUE`: an operand of the right type but a bad value.
pub const INVALID_VALUE: &str = "EVENTBRIDGE_INVALID_VALUE";
/// `EVENTBRIDGE_LIMIT_EXCEEDED`: EB-32, EB-33, pattern text over 256 KiB.
pub const LIMIT: &str = "EVENTBRIDGE_LIMIT_EXCEEDED";

/// The product's code of an EB-31 message (event-ruler's text, the table's rows).
fn message_code(message: &str) -> &'static str {
    const TYPES: &[&str] = &[
        "match pattern must be a string",
        "exists match pattern must be either true or false.",
        "Value of numeric must be an array.",
        "Value of anything-but must be an array or single string/number value.",
        "Inside anything but list, start|null|boolean is not supported.",
        "mixed type is not supported",
        "list, number|start|null|boolean is not supported.",
    ];
    const UNKNOWN: &[&str] = &[
        "Unrecognized match type",
        "Unsupported anything-but pattern",
        "Unsupported prefix pattern",
        "Unsupported suffix pattern",
        "Unrecognized numeric range operator",
        "Bad numeric range operator",
    ];
    const VALUES: &[&str] = &[
        "Cannot compare number",
        "Bottom must be less than top",
        "Null prefix/suffix not allowed",
        "Consecutive wildcard characters",
        "Invalid escape character",
        "Malformed CIDR",
        "Nonstandard IP address",
        "Invalid IP address",
        "mask bits must be <",
    ];
    // Not shaped like a pattern (EB-4, EB-5, the structure rows of EB-31), and a pattern nested
    // deeper than EB-34's 1,000 levels (JSON the reader refuses, as text that is not JSON).
    const SYNTAXES: &[&str] = &[
        "Filter is not an object",
        "Empty objects are not allowed",
        " must be an object or an array",
        "Empty arrays are not allowed",
        "Match value must be String, number, true, false, or null",
        "It must be an Array followed with $or.",
        "Only JSON object is allowed in array of $or relationship.",
        "There must have at least 2 Objects in $or relationship.",
        "is Ruler reserved fieldName which cannot be used inside $or.",
        "expression name not found",
        "Only one key allowed in match expression",
        "Too many elements in numeric expression",
        "Invalid member in numeric match: ",
        "Bad value in numeric range: ",
        "Too many terms in numeric range expression",
        "Document nesting depth (",
    ];
    let has = |list: &[&str]| list.iter().any(|m| message.contains(m));
    let numeric_operand = message.starts_with("Value of ") && message.ends_with(" must be numeric");
    if has(TYPES) || numeric_operand {
        TYPE
    } else if has(UNKNOWN) {
        UNKNOWN_OPERATOR
    } else if has(VALUES) || (message.contains("anything-but") && message.contains("empty")) {
        INVALID_VALUE
    } else if has(SYNTAXES) {
        SYNTAX
    } else {
        // A message none of the lists sorts is a gap in this table, not a syntax error: a code
        // no product error has, so that comparing codes (the vectors' runner, the conformance
        // test of EB-31's rows) reports it instead of passing it off as the likeliest code.
        UNSORTED
    }
}

/// The code [`PatternError::product_code`] gives a message its table does not sort (never a
/// product code: a gap in the reference, reported wherever codes are compared).
pub const UNSORTED: &str = "EVENTBRIDGE_UNSORTED_MESSAGE";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_sorted_by_their_lists_and_unknown_ones_are_not_syntax_errors() {
        assert_eq!(message_code("Empty objects are not allowed"), SYNTAX);
        assert_eq!(message_code("Prefix expression name not found"), SYNTAX);
        assert_eq!(
            message_code("Document nesting depth (1001) exceeds the maximum allowed (1000)"),
            SYNTAX
        );
        assert_eq!(message_code("Value of >= must be numeric"), TYPE);
        assert_eq!(
            message_code("Unrecognized match type EXISTS"),
            UNKNOWN_OPERATOR
        );
        assert_eq!(message_code("IPv4 mask bits must be < 32"), INVALID_VALUE);
        assert_eq!(message_code("something event-ruler never says"), UNSORTED);
    }
}

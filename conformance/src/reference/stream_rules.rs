//! The `stream` dialect's rules shared by its JSON form (`super::stream`) and its text form
//! (`super::stream_text`): the error codes, the seed's bounds, and the checks of header names and
//! patterns (`docs/dialects/stream-filters.md` S7, S8 and the seed's "Patterns").

/// Shape and operand errors (S8, S10-S13).
pub const INVALID: &str = "STREAM_INVALID_FILTER";
/// The seed's bounds (groups, clauses, `in` entries, pattern bytes) and policy text over 256 KiB.
pub const LIMIT: &str = "STREAM_LIMIT_EXCEEDED";
/// A pattern that breaks the seed's `*`/`**` rules.
pub const PATTERN: &str = "STREAM_INVALID_PATTERN";
/// Text form that does not read.
pub const SYNTAX: &str = "STREAM_SYNTAX_ERROR";

/// Seed bounds: groups per filter, clauses per group, entries per `in` list, bytes per pattern.
pub const MAX_GROUPS: usize = 8;
/// Seed bounds.
pub const MAX_CLAUSES: usize = 8;
/// Seed bounds (S11).
pub const MAX_IN_ENTRIES: usize = 32;
/// Seed bounds (S7: UTF-8 bytes).
pub const MAX_PATTERN_BYTES: usize = 256;

/// S8: the header name is not empty. The error's code and message.
pub fn check_header(name: &str) -> Result<(), (&'static str, String)> {
    if name.is_empty() {
        return Err((INVALID, "the header name is empty (S8)".to_owned()));
    }
    Ok(())
}

/// S7 and the seed's "Patterns": at most 256 bytes; per segment (split on `.`, S1) at most one
/// `*`, `**` only as a whole segment, and at most one `**`. The error's code and message.
pub fn check_pattern(pattern: &str) -> Result<(), (&'static str, String)> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err((
            LIMIT,
            format!(
                "the pattern is {} bytes; the limit is {MAX_PATTERN_BYTES} bytes (S7)",
                pattern.len()
            ),
        ));
    }
    let mut double_stars = 0;
    for segment in pattern.split('.') {
        if segment == "**" {
            double_stars += 1;
            if double_stars > 1 {
                return Err((PATTERN, format!("`{pattern}` has more than one `**`")));
            }
            continue;
        }
        let stars = segment.matches('*').count();
        if stars > 1 {
            let why = if segment.contains("**") {
                "joins `**` to other text"
            } else {
                "has more than one `*` in the segment"
            };
            return Err((PATTERN, format!("`{pattern}` {why} `{segment}`")));
        }
    }
    Ok(())
}

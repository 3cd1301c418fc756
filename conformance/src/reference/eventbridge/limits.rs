//! The `eventbridge` dialect's limits (`docs/dialects/eventbridge-patterns.md` EB-32..EB-34) and
//! the reference's own bounds, one constant each.

/// EB-34: most arrays and objects nested in one another in an event (Jackson's default, which
/// event-ruler reads with; the top object is level 1).
pub const MAX_DEPTH: usize = 1000;
/// Most arrays and objects nested in one another in a pattern (the pattern object is level 1):
/// filtervm reads policy text of every dialect to 128 levels. EB-34 bounds events only; deeper
/// patterns are `LIMIT_EXCEEDED` (event-ruler would read them to Jackson's 1,000).
pub const MAX_PATTERN_DEPTH: usize = 128;
/// EB-32: most paths in one branch.
pub const MAX_PATHS_PER_BRANCH: usize = 256;
/// EB-33: the highest wildcard complexity score allowed.
pub const MAX_COMPLEXITY: usize = 10;
/// Most branches the reference materialises (EB-6 sets no limit; beyond this the reference
/// answers [`REFERENCE_LIMIT`](crate::reference::eventbridge::REFERENCE_LIMIT)).
pub const MAX_BRANCHES: usize = 10_000;

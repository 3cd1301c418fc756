//! The `eventbridge` dialect's limits (`docs/dialects/eventbridge-patterns.md` EB-32..EB-34) and
//! the reference's own bounds, one constant each.

/// EB-34: most arrays and objects nested in one another, in a pattern or an event (Jackson's
/// default, which event-ruler reads with; the top object is level 1).
pub const MAX_DEPTH: usize = 1000;
/// EB-32: most paths in one branch.
pub const MAX_PATHS_PER_BRANCH: usize = 256;
/// EB-33: the highest wildcard complexity score allowed.
pub const MAX_COMPLEXITY: usize = 10;
/// Most branches the reference materialises (EB-6 sets no limit; beyond this the reference
/// answers [`REFERENCE_LIMIT`](crate::reference::eventbridge::REFERENCE_LIMIT)).
pub const MAX_BRANCHES: usize = 10_000;

//! Policy analysis: a message a filter matches (or does not), and whether two filters match
//! exactly the same messages — with witness messages where they do not.
//!
//! ```
//! use filtervm::analysis::{self, Verdict};
//! use filtervm::{Dialect, Filter};
//!
//! let before = Filter::new(Dialect::Sns, r#"{"amount": [{"numeric": [">=", 150]}]}"#)?;
//! let after = Filter::new(Dialect::Sns, r#"{"amount": [{"numeric": [">=", 100]}]}"#)?;
//! let d = analysis::diff(&before, &after)?;
//! assert_eq!(d.verdict, Verdict::Different);
//! // A message only the new policy lets through, judged by the VM.
//! let w = d.second_only.unwrap();
//! assert_eq!(w.verdicts, vec![false, true]);
//! assert!(after.matches(&filtervm::Message::json(w.document.to_string().as_bytes()))?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The operator classes decided exactly and those searched within a bound are listed in
//! [`filtervm_compiler::analysis`].

use crate::Filter;
pub use filtervm_compiler::analysis::{
    AnalysisError, Diff, Exactness, Example, KeyDifference, Verdict, Witness, diff_json,
    example_json,
};

/// A message `filter` matches (`matching`), or one it does not; or that none exists.
pub fn example(filter: &Filter, matching: bool) -> Result<Example, AnalysisError> {
    filtervm_compiler::analysis::example(filter.compiled(), matching)
}

/// Whether `first` and `second` (filters reading the same part of a message) match the same
/// messages; witnesses for each side where they do not.
pub fn diff(first: &Filter, second: &Filter) -> Result<Diff, AnalysisError> {
    filtervm_compiler::analysis::diff(first.compiled(), second.compiled())
}

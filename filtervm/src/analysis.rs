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
    AnalysisError, Assumptions, Diff, Exactness, Example, KeyDifference, Verdict, Witness,
    diff_json, example_json,
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

/// [`diff`] over the documents `assume` admits (e.g. `canonical-documents`: no repeated member,
/// numbers in their shortest round-trip form, member names as the filters spell them): the
/// witness space holds no other document, so "same" is a proof over every one admitted.
///
/// ```
/// use filtervm::analysis::{self, Assumptions, Verdict};
/// use filtervm::{Dialect, Filter, SnsScope};
///
/// let sns = Filter::new(SnsScope::MessageBody, r#"{"state": ["running"]}"#)?;
/// let eb = Filter::new(Dialect::EventBridge, r#"{"state": ["running"]}"#)?;
/// // sns keeps the last of a repeated member, EventBridge every one: they differ...
/// assert_eq!(analysis::diff(&sns, &eb)?.verdict, Verdict::Different);
/// // ...but not on documents a JSON encoder writes, holding no arrays.
/// let assume = Assumptions::parse("canonical-documents,no-arrays")?;
/// assert_eq!(analysis::diff_assuming(&sns, &eb, assume)?.verdict, Verdict::Same);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn diff_assuming(
    first: &Filter,
    second: &Filter,
    assume: Assumptions,
) -> Result<Diff, AnalysisError> {
    filtervm_compiler::analysis::diff_assuming(first.compiled(), second.compiled(), assume)
}

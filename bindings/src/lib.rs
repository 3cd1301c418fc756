//! The language bindings' adapter to the `filtervm` facade: the one place where a binding's
//! arguments become the facade's messages and the facade's answers and errors become what a
//! binding reports. The C ABI (`capi/`) and the Python package (`python/`) call filtervm only
//! through this crate, and the Java (JNI) and Go (cgo, over the C ABI) bindings are to do the
//! same:
//!
//! - **Messages** ([`Input`]): one JSON document as received, or the parts the caller holds —
//!   a body's bytes, typed attributes and headers through the facade's borrowed
//!   [`filtervm::Attributes`] and [`filtervm::Headers`] traits (each binding implements them
//!   for what its language holds: C byte strings, Python `str`), nothing copied. The facade
//!   reads them by its one reading path, so a message means the same through every binding.
//! - **Sets** ([`Set`]): the ids of the subscriptions that match and each group that could not
//!   judge the message ([`Unjudged`]: dialect, options, subscription count, code, message) —
//!   never all or nothing.
//! - **Errors** ([`Failure`]): every library error with its stable code
//!   (`filtervm::ErrorCode`), and the bindings' own three ([`INVALID_ARGUMENT`], [`SET_FULL`],
//!   [`PANIC`]), in one module.
//! - **Analysis** ([`example`], [`diff`]): answers as JSON text, errors with the analysis's
//!   codes (`ANALYSIS_MODEL_MISMATCH`, ...).
//! - **Batches** ([`read_events`]): the events of an Event Grid array of events, each matched
//!   on its own.

mod analysis;
mod error;
mod filter;
mod message;
mod set;

pub use analysis::{diff, diff_assuming, example};
pub use error::{Detail, Failure, FailureKind, INVALID_ARGUMENT, PANIC, SET_FULL, kind_of};
pub use filter::{Filter, dialect, dialects, lint, options};
pub use message::{
    DocumentInput, HeaderValue, Input, Parts, attribute_type, read_events, unknown_attribute_type,
};
pub use set::{Set, Unjudged};

/// The facade, for the types the bindings implement its traits for (`Attributes`, `Headers`,
/// `Text`) and name in their signatures.
pub use filtervm;

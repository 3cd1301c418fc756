//! Conformance for filtervm: the reference interpreter, the vector runner (`FORMAT.md`) and the
//! differential checker (VM versus reference).

pub mod generate;
pub mod growth;
pub mod paths;
pub mod reference;
pub mod runner;
pub mod serve;

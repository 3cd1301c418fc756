//! vm
pub mod cidr;
pub mod fold;
pub mod number;
pub mod pattern;
pub mod wildcard;

//! A broker's own JSON types, as an embedder of filtervm would write them: an `untagged` enum
//! whose variants differ by number type and a struct with `flatten`ed members. Both depend on
//! `serde_json`'s default number and map representation; `tests/serde_beside_filtervm.rs` checks
//! that they still round-trip in a build that also compiles and runs filters.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A price as publishers send it: an integer number of cents, a decimal amount, or text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Price {
    /// Whole cents, e.g. `1999`.
    Cents(i64),
    /// An amount, e.g. `19.99`.
    Amount(f64),
    /// Anything else, e.g. `"free"`.
    Text(String),
}

/// A subscription record: fixed members plus every other member kept as it came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    /// The subscriber's id.
    pub id: u64,
    /// The price the subscriber pays.
    pub price: Price,
    /// Delivery settings, written inline in the same object.
    #[serde(flatten)]
    pub delivery: Delivery,
    /// Members the broker does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Delivery settings, flattened into [`Subscription`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// Retries before giving up.
    pub retries: u32,
    /// Seconds between retries.
    pub backoff: f64,
}

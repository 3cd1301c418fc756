//! filtervm inside Apache DataFusion and Apache Ballista: replay subscriptions over event
//! archives (NDJSON or Parquet) with SQL, on one machine or a cluster.
//!
//! - [`udf`]: the scalar functions `filtervm_match(dialect, policy, options, message)` and
//!   `filtervm_route(message)`;
//! - [`session`]: sessions that know them, and archives registered as tables;
//! - [`cluster`]: Ballista schedulers and executors that know them, in-process or standalone;
//! - [`adapter`]: every call into the filtervm library, in one module;
//! - [`columns`]: reading messages out of Arrow arrays.
//!
//! The `filtervm-replay` binary runs a query or routes a subscription set over an archive
//! (see the repository README, "Replay an archive").

pub mod adapter;
pub mod cluster;
pub mod columns;
pub mod session;
pub mod udf;

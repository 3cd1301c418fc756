//! A PolicySet under churn versus one-by-one evaluation: see `README.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::policy_set::policy_set(data));

//! Arbitrary bytes read in trusted mode against the validating mode: see `README.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::trusted::check(data));

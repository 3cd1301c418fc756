//! Arbitrary and mutated bytes as a filter / program: see `README.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::program_bytes(data));

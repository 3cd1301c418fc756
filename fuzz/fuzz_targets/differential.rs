//! Generated policy/message pairs, VM versus reference: see `README.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::differential(data));

//! Arbitrary and edited bytes as a saved subscription set: see `README.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::set_bytes::set_bytes(data));

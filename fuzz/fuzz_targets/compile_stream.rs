//! Arbitrary bytes as a `stream` policy (the first byte picks the options): see `README.md`.
#![no_main]

use filtervm_compiler::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::compile_bytes(Dialect::Stream, data));

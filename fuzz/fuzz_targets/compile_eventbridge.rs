//! Arbitrary bytes as an `eventbridge` pattern (the first byte is ignored): see `README.md`.
#![no_main]

use filtervm_compiler::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::compile_bytes(Dialect::EventBridge, data));

//! The stream text form: print → parse → print is stable: see `README.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::stream_text(data));

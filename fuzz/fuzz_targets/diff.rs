//! A generated policy and a mutation of it: diff's verdict against sampled evaluation, every
//! witness judged by the VM and the reference: see `README.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| filtervm_fuzz::analysis::diff(data));

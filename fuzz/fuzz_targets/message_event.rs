//! Arbitrary bytes as an Event Grid event (both schemas): see `README.md`.
#![no_main]

use filtervm_compiler::Dialect;
use filtervm_conformance::reference::json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (line, small) = filtervm_fuzz::line(data);
    let event = if small { json::parse(&line).ok() } else { None };
    filtervm_fuzz::message_line(Dialect::EventGrid, |_| true, &line, event.as_ref());
});

//! Arbitrary bytes as an Event Grid event (both schemas): see `README.md`.
#![no_main]

use filtervm_compiler::Dialect;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let (line, small) = filtervm_fuzz::line(data);
    let json: Option<Value> = if small {
        serde_json::from_str(&line).ok()
    } else {
        None
    };
    filtervm_fuzz::message_line(Dialect::EventGrid, |_| true, &line, json.as_ref());
});

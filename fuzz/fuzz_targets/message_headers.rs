//! Arbitrary bytes as a header message (stream, expr): see `README.md`.
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
    filtervm_fuzz::message_line(Dialect::Stream, |_| true, &line, json.as_ref());
    filtervm_fuzz::message_line(Dialect::Expr, |_| true, &line, json.as_ref());
});

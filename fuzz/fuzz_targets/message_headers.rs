//! Arbitrary bytes as a header message (stream, expr): see `README.md`.
#![no_main]

use filtervm_compiler::Dialect;
use filtervm_conformance::reference::json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (line, small) = filtervm_fuzz::line(data);
    let message = if small { json::parse(&line).ok() } else { None };
    filtervm_fuzz::message_line(Dialect::Stream, |_| true, &line, message.as_ref());
    filtervm_fuzz::message_line(Dialect::Expr, |_| true, &line, message.as_ref());
});

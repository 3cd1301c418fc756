//! Arbitrary bytes as an attribute message (sns attribute scope, basaltic): see `README.md`.
#![no_main]

use filtervm_compiler::{Dialect, Options, SnsScope};
use filtervm_conformance::reference::json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (line, small) = filtervm_fuzz::line(data);
    let message = if small { json::parse(&line).ok() } else { None };
    let attribute_scope = |o: &Options| o.sns().scope == SnsScope::MessageAttributes;
    filtervm_fuzz::message_line(Dialect::Sns, attribute_scope, &line, message.as_ref());
    filtervm_fuzz::message_line(Dialect::Basaltic, |_| true, &line, message.as_ref());
});

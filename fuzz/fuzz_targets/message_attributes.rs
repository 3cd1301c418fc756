//! Arbitrary bytes as an attribute message (sns attribute scope, basaltic): see `README.md`.
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
    let attribute_scope = |o: &Value| o.get("scope").and_then(Value::as_str) != Some("MessageBody");
    filtervm_fuzz::message_line(Dialect::Sns, attribute_scope, &line, json.as_ref());
    filtervm_fuzz::message_line(Dialect::Basaltic, |_| true, &line, json.as_ref());
});

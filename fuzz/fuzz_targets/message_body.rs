//! Arbitrary bytes as an SNS message body (body scope): see `README.md`.
#![no_main]

use filtervm_compiler::Dialect;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let (line, small) = filtervm_fuzz::line(data);
    let message = json!({ "body": line });
    let body_scope = |o: &Value| o.get("scope").and_then(Value::as_str) == Some("MessageBody");
    filtervm_fuzz::message_line(Dialect::Sns, body_scope, &line, small.then_some(&message));
});

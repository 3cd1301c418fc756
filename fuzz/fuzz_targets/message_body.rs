//! Arbitrary bytes as an SNS message body (body scope): see `README.md`.
#![no_main]

use filtervm_compiler::{Dialect, Options, SnsScope};
use filtervm_conformance::json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (line, small) = filtervm_fuzz::line(data);
    let message = json!({ "body": line });
    let body_scope = |o: &Options| o.sns().scope == SnsScope::MessageBody;
    filtervm_fuzz::message_line(Dialect::Sns, body_scope, &line, small.then_some(&message));
});

//! Per-message cost in Rust, for comparison with the same work through the C ABI
//! (`capi/bench/per_message.c`) and through Python (`python/bench/per_message.py`).
//!
//! ```sh
//! python3 bench/workloads.py bench-data      # attrs.jsonl, pol1c.jsonl, ...
//! cargo run --release -p filtervm-capi --example per_message -- bench-data/pol1c.jsonl bench-data/attrs.jsonl
//! ```
//!
//! The policy (sns syntax) runs on the first 10,000 lines of the messages file, each a flat JSON
//! object: as attributes (strings → String, numbers → Number) with the policy in attribute
//! scope, and as the raw body with the policy in `MessageBody` scope. Prints `name: ns` lines,
//! the median of 5 rounds of at least 0.3 s each:
//!
//! - `rust_library_bound`: the library on a message built beforehand (`Evaluator::matches`:
//!   bind + run), the figure BENCHMARKS.md's single-policy tables split into bind and eval;
//! - `rust_library_built`: the same, building the message's attributes from their text on each
//!   call (what any binding has to do with a message it is handed);
//! - `rust_adapter_attributes`: through the bindings' adapter (`engine::Filter::matches`), the
//!   work the C ABI and Python do after reading their arguments;
//! - `rust_library_body` / `rust_adapter_body`: the raw body, read by the library's line reader
//!   (`message_from_line`) or through the adapter.

use filtervm_capi::engine::{self, Attribute, Message};
use filtervm_compiler::{Dialect, Evaluator, Options, compile_text, message_from_line};
use filtervm_vm::message::{Attribute as VmAttribute, AttributeType, Message as VmMessage};
use std::hint::black_box;
use std::time::Instant;

const MESSAGES: usize = 10_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [policy_path, messages_path] = args.as_slice() else {
        return Err("usage: per_message POLICY.jsonl MESSAGES.jsonl".into());
    };
    let policy = std::fs::read_to_string(policy_path)?;
    let policy = policy.lines().next().ok_or("no policy")?.to_owned();
    let lines: Vec<String> = std::fs::read_to_string(messages_path)?
        .lines()
        .take(MESSAGES)
        .map(str::to_owned)
        .collect();
    let triples: Vec<Vec<(String, &'static str, String)>> =
        lines.iter().map(|l| triples(l)).collect::<Result<_, _>>()?;

    let attribute_scope = Options::from(Dialect::Sns);
    let body_scope = Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#)?;
    let library = compile_text(Dialect::Sns, &policy, &attribute_scope)?;
    let library_body = compile_text(Dialect::Sns, &policy, &body_scope)?;
    let adapter = engine::compile("sns", policy.as_bytes(), None)?;
    let adapter_body = engine::compile(
        "sns",
        policy.as_bytes(),
        Some(br#"{"scope": "MessageBody"}"#.as_slice()),
    )?;

    let bound: Vec<VmMessage> = triples.iter().map(|t| vm_message(t)).collect();
    let mut evaluator = Evaluator::new();
    let mut matched = 0usize;
    report("rust_library_bound", lines.len(), || {
        for m in &bound {
            matched += usize::from(evaluator.matches(&library, black_box(m)));
        }
    });
    report("rust_library_built", lines.len(), || {
        for t in &triples {
            matched += usize::from(evaluator.matches(&library, &vm_message(black_box(t))));
        }
    });
    report("rust_adapter_attributes", lines.len(), || {
        for t in &triples {
            // As the C ABI and the Python package build them: one vector, one attribute each.
            let mut attributes = Vec::with_capacity(t.len());
            for (n, ty, v) in black_box(t) {
                if let Ok(a) = Attribute::new(n.clone(), ty, v.clone()) {
                    attributes.push(a);
                }
            }
            let message = Message {
                attributes: Some(attributes),
                ..Message::default()
            };
            matched += usize::from(adapter.matches(message).unwrap_or(false));
        }
    });
    report("rust_library_body", lines.len(), || {
        for l in &lines {
            if let Ok(m) = message_from_line(Dialect::Sns, &body_scope, black_box(l)) {
                matched += usize::from(evaluator.matches(&library_body, &m));
            }
        }
    });
    report("rust_adapter_body", lines.len(), || {
        for l in &lines {
            let message = Message {
                body: Some(black_box(l.as_bytes())),
                ..Message::default()
            };
            matched += usize::from(adapter_body.matches(message).unwrap_or(false));
        }
    });
    let per_route = bound
        .iter()
        .filter(|m| evaluator.matches(&library, m))
        .count();
    println!("messages: {}", lines.len());
    println!("matches_per_round: {per_route}");
    black_box(matched);
    Ok(())
}

/// A flat JSON object's members as (name, type, value text); other members are left out.
fn triples(line: &str) -> Result<Vec<(String, &'static str, String)>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(line)?;
    let mut out = Vec::new();
    if let serde_json::Value::Object(members) = value {
        for (name, v) in members {
            match v {
                serde_json::Value::String(s) => out.push((name, "String", s)),
                serde_json::Value::Number(n) => out.push((name, "Number", n.to_string())),
                _ => {}
            }
        }
    }
    Ok(out)
}

fn vm_message(triples: &[(String, &'static str, String)]) -> VmMessage {
    VmMessage::Attributes(
        triples
            .iter()
            .map(|(name, ty, value)| VmAttribute {
                name: name.clone(),
                data_type: if *ty == "Number" {
                    AttributeType::Number
                } else {
                    AttributeType::String
                },
                value: value.clone(),
            })
            .collect(),
    )
}

/// Runs `round` (one pass over the messages) for 5 rounds of at least 0.3 s each and prints
/// the median nanoseconds per message. With `FILTERVM_ROUTE=NAME` only that route runs, one
/// pass, untimed (for `valgrind --tool=callgrind`).
fn report(name: &str, messages: usize, mut round: impl FnMut()) {
    if let Ok(only) = std::env::var("FILTERVM_ROUTE") {
        if only == name {
            round();
        }
        return;
    }
    let mut per_message = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut passes = 0u32;
        while start.elapsed().as_secs_f64() < 0.3 {
            round();
            passes += 1;
        }
        let ns = start.elapsed().as_secs_f64() * 1e9 / f64::from(passes) / messages as f64;
        per_message.push(ns);
    }
    per_message.sort_by(f64::total_cmp);
    println!(
        "{name}: {:.1}",
        per_message.get(2).copied().unwrap_or(f64::NAN)
    );
}

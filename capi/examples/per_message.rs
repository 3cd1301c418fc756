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
//! - `rust_library_borrowed`: the library on the attributes as a broker holds them, borrowed
//!   (`(name, type, value)` triples of text, `filtervm::Matcher`: bind + run, nothing copied) —
//!   the Rust figure the bindings are compared with;
//! - `rust_library_bytes`: the same with the triples' text as byte strings, as C holds it
//!   (the value a filter reads is checked to be UTF-8 when it is bound);
//! - `rust_library_built`: the library on an owned message built from the attributes' text on
//!   each call (what the bindings did before they passed the caller's bytes through);
//! - `rust_adapter_attributes`: through the bindings' adapter (`filtervm-bindings`) on the same
//!   borrowed triples, the work the C ABI and Python do after reading their arguments;
//! - `rust_library_body` / `rust_adapter_body`: the raw body, through the library's
//!   `Message::body` or through the adapter;
//! - `rust_library_set1k` (with a third argument, a policies file such as
//!   `bench-data/pol10k_mixed.jsonl`): its first 1,000 policies as one `SubscriptionSet`
//!   (attribute scope) matched with the borrowed triples, the Rust figure the Go binding's set
//!   route (`bindings/go/bench`) is compared with.

use filtervm::{AttributeType, Dialect, Matcher, Message, SetScratch, SnsScope, SubscriptionSet};
use filtervm_bindings::{Filter as AdapterFilter, Input, Parts};
use filtervm_compiler::{Evaluator, Options, compile_text};
use filtervm_vm::message::{Attribute as VmAttribute, Message as VmMessage};
use std::hint::black_box;
use std::time::Instant;

const MESSAGES: usize = 10_000;

/// The policies of the optional set file matched as one set (`rust_library_set1k`).
const SET_POLICIES: usize = 1_000;

/// Attributes as triples of text.
type Triples<'a> = [(&'a str, AttributeType, &'a str)];

/// One attribute as byte strings.
type ByteTriple<'a> = (&'a [u8], AttributeType, &'a [u8]);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (policy_path, messages_path, set_path) = match args.as_slice() {
        [policy, messages] => (policy, messages, None),
        [policy, messages, set] => (policy, messages, Some(set)),
        _ => return Err("usage: per_message POLICY.jsonl MESSAGES.jsonl [SET.jsonl]".into()),
    };
    let policy = std::fs::read_to_string(policy_path)?;
    let policy = policy.lines().next().ok_or("no policy")?.to_owned();
    let lines: Vec<String> = std::fs::read_to_string(messages_path)?
        .lines()
        .take(MESSAGES)
        .map(str::to_owned)
        .collect();
    let triples: Vec<Vec<(String, AttributeType, String)>> =
        lines.iter().map(|l| triples(l)).collect::<Result<_, _>>()?;
    let borrowed: Vec<Vec<(&str, AttributeType, &str)>> = triples
        .iter()
        .map(|t| {
            t.iter()
                .map(|(n, ty, v)| (n.as_str(), *ty, v.as_str()))
                .collect()
        })
        .collect();

    let library = compile_text(Dialect::Sns, &policy, &Options::from(Dialect::Sns))?;
    let facade = filtervm::Filter::new(Dialect::Sns, &policy)?;
    let facade_body = filtervm::Filter::new(SnsScope::MessageBody, &policy)?;
    let adapter = AdapterFilter::compile("sns", policy.as_bytes(), None)?;
    let adapter_body = AdapterFilter::compile(
        "sns",
        policy.as_bytes(),
        Some(br#"{"scope": "MessageBody"}"#.as_slice()),
    )?;

    let bound: Vec<VmMessage> = triples.iter().map(|t| vm_message(t)).collect();
    let mut evaluator = Evaluator::new();
    let mut matcher = Matcher::new();
    let mut matched = 0usize;
    report("rust_library_bound", lines.len(), || {
        for m in &bound {
            matched += usize::from(evaluator.matches(&library, black_box(m)));
        }
    });
    report("rust_library_borrowed", lines.len(), || {
        for m in &borrowed {
            let message = Message::attributes(black_box(&m[..]));
            matched += usize::from(matcher.matches(&facade, &message).unwrap_or(false));
        }
    });
    // The same triples as byte strings, as a C caller holds them (read where they lie; a value
    // a filter reads is checked to be UTF-8).
    let bytes: Vec<Vec<ByteTriple<'_>>> = borrowed
        .iter()
        .map(|t| {
            t.iter()
                .map(|(n, ty, v)| (n.as_bytes(), *ty, v.as_bytes()))
                .collect()
        })
        .collect();
    report("rust_library_bytes", lines.len(), || {
        for m in &bytes {
            let message = Message::attributes(black_box(&m[..]));
            matched += usize::from(matcher.matches(&facade, &message).unwrap_or(false));
        }
    });
    report("rust_library_built", lines.len(), || {
        for t in &triples {
            matched += usize::from(evaluator.matches(&library, &vm_message(black_box(t))));
        }
    });
    report("rust_adapter_attributes", lines.len(), || {
        for m in &borrowed {
            let input: Input<'_, Triples<'_>, [(&str, &str)]> = Input::Parts(Parts {
                attributes: Some(black_box(&m[..])),
                ..Parts::default()
            });
            matched += usize::from(adapter.matches(&input).unwrap_or(false));
        }
    });
    report("rust_library_body", lines.len(), || {
        for l in &lines {
            let message = Message::body(black_box(l.as_bytes()));
            matched += usize::from(matcher.matches(&facade_body, &message).unwrap_or(false));
        }
    });
    report("rust_adapter_body", lines.len(), || {
        for l in &lines {
            let input: Input<'_, Triples<'_>, [(&str, &str)]> = Input::Parts(Parts {
                body: Some(black_box(l.as_bytes())),
                ..Parts::default()
            });
            matched += usize::from(adapter_body.matches(&input).unwrap_or(false));
        }
    });
    if let Some(set_path) = set_path {
        // The first 1,000 policies of the file as one set (attribute scope), matched with the
        // borrowed triples: the Rust figure the bindings' set routes are compared with.
        let mut set = SubscriptionSet::new();
        for (id, line) in std::fs::read_to_string(set_path)?
            .lines()
            .take(SET_POLICIES)
            .enumerate()
        {
            set.insert(id as u64, &filtervm::Filter::new(Dialect::Sns, line)?)?;
        }
        let mut scratch = SetScratch::new();
        report("rust_library_set1k", lines.len(), || {
            for m in &borrowed {
                let message = Message::attributes(black_box(&m[..]));
                matched += set.matching(&mut scratch, &message).ids().count();
            }
        });
    }
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
fn triples(line: &str) -> Result<Vec<(String, AttributeType, String)>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(line)?;
    let mut out = Vec::new();
    if let serde_json::Value::Object(members) = value {
        for (name, v) in members {
            match v {
                serde_json::Value::String(s) => out.push((name, AttributeType::String, s)),
                serde_json::Value::Number(n) => {
                    out.push((name, AttributeType::Number, n.to_string()));
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

fn vm_message(triples: &[(String, AttributeType, String)]) -> VmMessage {
    VmMessage::Attributes(
        triples
            .iter()
            .map(|(name, data_type, value)| VmAttribute {
                name: name.clone(),
                data_type: *data_type,
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

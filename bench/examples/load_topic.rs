//! Loads a realistic multi-tenant topic ([`filtervm_bench::topic`]) into a `SubscriptionSet`:
//! compile each policy (SNS, body scope), insert it, drop the filter — what a restarted broker
//! does before it can deliver. Prints the time per subscription, the set's memory
//! (`heap_bytes`) per subscription and the distinct filters:
//! `cargo run --release --manifest-path bench/Cargo.toml --example load_topic -- 1000000`
//! (under `/usr/bin/time -v` for the CPU time and peak memory of the whole run).
#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::topic::realistic_topic;
use filtervm_compiler::{Dialect, Options, SnsScope, SubscriptionSet, compile_text};
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("a subscription count"));
    let started = Instant::now();
    let texts = realistic_topic(n, 7);
    let generated = started.elapsed();
    let body = Options::from(SnsScope::MessageBody);
    let started = Instant::now();
    let mut set = SubscriptionSet::new();
    for (id, text) in texts.iter().enumerate() {
        let filter = compile_text(Dialect::Sns, text, &body).expect("compiles");
        set.insert(id as u64, &filter).expect("inserts");
    }
    let loaded = started.elapsed();
    let started = Instant::now();
    let mut compile_only = 0usize;
    for text in texts.iter().take(n.min(100_000)) {
        compile_only += compile_text(Dialect::Sns, text, &body)
            .expect("compiles")
            .program()
            .code()
            .len();
    }
    let compiled = started.elapsed();
    println!(
        "subscriptions: {n} ({} distinct filters)",
        set.distinct_filters()
    );
    println!(
        "generated in {:.2} s (not counted)",
        generated.as_secs_f64()
    );
    println!(
        "loaded (compile + insert + drop) in {:.2} s: {:.2} µs per subscription",
        loaded.as_secs_f64(),
        loaded.as_secs_f64() * 1e6 / n as f64
    );
    println!(
        "compile alone: {:.2} µs per policy (first {} policies, {compile_only} instructions)",
        compiled.as_secs_f64() * 1e6 / n.min(100_000) as f64,
        n.min(100_000)
    );
    println!(
        "heap_bytes: {} ({:.0} per subscription)",
        set.heap_bytes(),
        set.heap_bytes() as f64 / n as f64
    );
}

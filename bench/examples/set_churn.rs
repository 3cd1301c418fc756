//! A `SubscriptionSet` under churn: time and memory of adding and removing many subscriptions. Run one
//! scenario per process, under `/usr/bin/time -v` for the peak memory:
//!
//! ```sh
//! cargo build --release --manifest-path bench/Cargo.toml --example set_churn
//! /usr/bin/time -v bench/target/release/examples/set_churn distinct-keys
//! /usr/bin/time -v bench/target/release/examples/set_churn one-filter
//! /usr/bin/time -v bench/target/release/examples/set_churn one-anchor
//! ```
//!
//! - `distinct-keys`: 5 rounds of adding 100,000 subscriptions, each reading a key no other one
//!   reads, then removing them all; then one message matched against the empty set.
//! - `one-filter`: 100,000 subscriptions sharing one filter, removed one by one.
//! - `one-anchor`: 100,000 distinct filters all anchored on one indexed test (`event` equals
//!   `order.paid`, plus a numeric range of their own), removed one by one.
//!
//! `N=<count>` changes the 100,000.

use filtervm_compiler::{Dialect, Filter, MessageParts, SetScratch, SubscriptionSet, compile};
use filtervm_vm::message::AttributeType;
use serde_json::json;
use std::time::Instant;

fn sns(policy: serde_json::Value) -> Filter {
    compile(Dialect::Sns, &policy, &Dialect::Sns.into()).expect("a valid policy")
}

fn seconds(t: Instant) -> String {
    format!("{:.3} s", t.elapsed().as_secs_f64())
}

/// `0..n` in a fixed pseudo-random order (removals in insertion order would favour some layouts).
fn shuffled(n: u64) -> Vec<u64> {
    let mut ids: Vec<u64> = (0..n).collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..ids.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ids.swap(i, (x % (i as u64 + 1)) as usize);
    }
    ids
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    let n: u64 = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let mut set = SubscriptionSet::new();
    // The slots of the only group's key table.
    let keys = |set: &SubscriptionSet<u64>| set.group_stats().first().map_or(0, |g| g.keys);
    match scenario.as_str() {
        "distinct-keys" => {
            for round in 0..5u64 {
                let filters: Vec<Filter> = (0..n)
                    .map(|i| sns(json!({ format!("k{round}_{i}"): ["v"] })))
                    .collect();
                let t = Instant::now();
                for (i, f) in filters.iter().enumerate() {
                    set.insert(i as u64, f).expect("add");
                }
                let added = seconds(t);
                let t = Instant::now();
                for i in shuffled(n) {
                    assert!(set.remove(&i));
                }
                println!("round {round}: add {added}, remove {}", seconds(t));
            }
            let attributes = [
                ("event", AttributeType::String, "order.paid"),
                ("k0_0", AttributeType::String, "v"),
            ];
            let message = MessageParts::attributes(&attributes[..]);
            let mut scratch = SetScratch::new();
            let t = Instant::now();
            let matched = set.matching(&mut scratch, &message).len();
            let first = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            set.matching(&mut scratch, &message);
            println!(
                "empty set: {} keys, {} bytes (heap_bytes); first match {first:.3} ms, next {:.3} ms, {matched} ids",
                keys(&set),
                set.heap_bytes(),
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        "one-filter" => {
            let filter = sns(json!({"event": ["order.paid"], "env": ["prod"]}));
            let t = Instant::now();
            for i in 0..n {
                set.insert(i, &filter).expect("add");
            }
            let added = seconds(t);
            let t = Instant::now();
            for i in shuffled(n) {
                assert!(set.remove(&i));
            }
            println!("one filter: add {added}, remove {}", seconds(t));
        }
        "one-anchor" => {
            let filters: Vec<Filter> = (0..n)
                .map(|i| sns(json!({"event": ["order.paid"], "amount": [{"numeric": [">", i]}]})))
                .collect();
            let t = Instant::now();
            for (i, f) in filters.iter().enumerate() {
                set.insert(i as u64, f).expect("add");
            }
            let added = seconds(t);
            let anchors = set
                .group_stats()
                .first()
                .and_then(|g| g.anchors.first().map(|a| a.1))
                .unwrap_or(0);
            let t = Instant::now();
            for i in shuffled(n) {
                assert!(set.remove(&i));
            }
            println!(
                "one anchor ({anchors} filters on the busiest anchor): add {added}, remove {}",
                seconds(t)
            );
        }
        _ => {
            eprintln!("usage: set_churn distinct-keys|one-filter|one-anchor");
            std::process::exit(2);
        }
    }
    println!(
        "after: {} subscriptions, {} keys, heap_bytes {}",
        set.len(),
        keys(&set),
        set.heap_bytes()
    );
}

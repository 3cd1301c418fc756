//! Loads a realistic multi-tenant topic ([`filtervm_bench::topic`]) into a `SubscriptionSet`:
//! compile each policy (SNS, body scope), insert it, drop the filter — what a restarted broker
//! does before it can deliver. Prints the time per subscription, the set's memory
//! (`heap_bytes`) per subscription and the distinct filters:
//! `cargo run --release --manifest-path bench/Cargo.toml --example load_topic -- 1000000`
//! (under `/usr/bin/time -v` for the CPU time and peak memory of the whole run).
//!
//! With `reload` after the count, the loaded set is then saved (`SubscriptionSet::to_bytes`) and
//! read back (`SubscriptionSet::from_bytes`) three times: prints the saved size, the CPU time of
//! each reading (this thread's, from `/proc/thread-self/schedstat`) and their median, the
//! reloaded set's `heap_bytes` per subscription, and checks that the reloaded set delivers 2,000
//! published messages as the loaded one does. `reload FILE` also writes the saved set to `FILE`,
//! and `load_topic --read FILE` only reads a saved set back (for profiling the reading alone).
//!
//! With `cached [CAPACITY]` after the count, each subscription is inserted through a
//! [`PolicyCache`] of `CAPACITY` texts (default 1,000,000), as a broker that compiles each
//! distinct text once does: a subscription whose text was given before is subscribed to the
//! filter the set holds for it, without compiling. The cache is dropped inside the measured load.
//! Prints the cache's hits and misses too. The CPU time of the load (this thread's) is printed
//! in every mode.
#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::topic::{realistic_messages, realistic_topic};
use filtervm_compiler::{
    Dialect, MessageParts, Options, PolicyCache, SetScratch, SnsScope, SubscriptionSet,
    compile_text,
};
use std::time::{Duration, Instant};

/// This thread's CPU time so far (the first field of `/proc/thread-self/schedstat`, in ns).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    let ns = stat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("CPU time in ns");
    Duration::from_nanos(ns)
}

/// Saves `set`, reads it back three times, prints the figures (see the module documentation).
fn reload(set: &SubscriptionSet<u64>, n: usize) {
    let started = Instant::now();
    let bytes = set.to_bytes();
    println!(
        "saved in {:.2} s: {} bytes ({:.1} per subscription)",
        started.elapsed().as_secs_f64(),
        bytes.len(),
        bytes.len() as f64 / n as f64
    );
    let mut times = Vec::new();
    let mut loaded = None;
    for _ in 0..3 {
        drop(loaded.take());
        let before = cpu_time();
        let set = SubscriptionSet::<u64>::from_bytes(&bytes).expect("reads back");
        times.push(cpu_time() - before);
        loaded = Some(set);
    }
    let loaded = loaded.expect("read back");
    times.sort();
    println!(
        "read back in {:.3} s CPU (median of 3: {})",
        times[1].as_secs_f64(),
        times
            .iter()
            .map(|t| format!("{:.3}", t.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(" / ")
    );
    println!(
        "heap_bytes after reading back: {} ({:.0} per subscription)",
        loaded.heap_bytes(),
        loaded.heap_bytes() as f64 / n as f64
    );
    assert!(loaded.ids().eq(set.ids()), "the same ids in the same order");
    let mut scratch = SetScratch::new();
    let mut delivered = 0;
    for message in realistic_messages(2_000, 7) {
        let parts = MessageParts::body(message.as_bytes());
        let expected: Vec<u64> = set.matching(&mut scratch, &parts).ids().copied().collect();
        let got: Vec<u64> = loaded
            .matching(&mut scratch, &parts)
            .ids()
            .copied()
            .collect();
        assert_eq!(got, expected, "{message}");
        delivered += got.len();
    }
    println!("2,000 messages: the same {delivered} deliveries from both sets");
}

/// Reads the saved set in `path` back three times; prints the CPU time of each.
fn read_only(path: &str) {
    let bytes = std::fs::read(path).expect("a saved set");
    for _ in 0..3 {
        let before = cpu_time();
        let set = SubscriptionSet::<u64>::from_bytes(&bytes).expect("reads back");
        let took = cpu_time() - before;
        println!(
            "{} subscriptions read back in {:.3} s CPU",
            set.len(),
            took.as_secs_f64()
        );
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--read") {
        read_only(&std::env::args().nth(2).expect("a file"));
        return;
    }
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("a subscription count"));
    let reloading = std::env::args().nth(2).as_deref() == Some("reload");
    let cache_capacity = (std::env::args().nth(2).as_deref() == Some("cached")).then(|| {
        std::env::args()
            .nth(3)
            .map_or(1_000_000, |a| a.parse().expect("a cache capacity"))
    });
    let started = Instant::now();
    let texts = realistic_topic(n, 7);
    let generated = started.elapsed();
    let body = Options::from(SnsScope::MessageBody);
    let started = Instant::now();
    let cpu_before = cpu_time();
    let mut set = SubscriptionSet::new();
    let mut cache_counts = None;
    if let Some(capacity) = cache_capacity {
        let mut cache = PolicyCache::new(capacity);
        for (id, text) in texts.iter().enumerate() {
            cache
                .insert(&mut set, id as u64, Dialect::Sns, text, &body)
                .expect("compiles and inserts");
        }
        cache_counts = Some((capacity, cache.hits(), cache.misses(), cache.len()));
    } else {
        for (id, text) in texts.iter().enumerate() {
            let filter = compile_text(Dialect::Sns, text, &body).expect("compiles");
            set.insert(id as u64, &filter).expect("inserts");
        }
    }
    let loaded = started.elapsed();
    let load_cpu = cpu_time() - cpu_before;
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
    if let Some((capacity, hits, misses, held)) = cache_counts {
        println!(
            "cache of {capacity}: {hits} hits, {misses} compiles, {held} texts held at the end"
        );
    }
    println!(
        "loaded (compile + insert + drop) in {:.2} s CPU",
        load_cpu.as_secs_f64()
    );
    if reloading {
        reload(&set, n);
        if let Some(path) = std::env::args().nth(3) {
            std::fs::write(path, set.to_bytes()).expect("written");
        }
    }
}

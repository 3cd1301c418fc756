//! Before/after figures of the subscription set, from the workloads (`FILTERVM_BENCH_DATA`):
//!
//! - per message, `pol10k_exact` and `pol10k_num` as one body-scope set matched from the raw
//!   bytes of 1,000 `attrs` lines (the median and the fastest of 21 passes): `set_measure time`;
//!   `set_measure count [NAME]` runs one warm pass each (or of `NAME` only), for instruction
//!   counts under callgrind (`valgrind --tool=callgrind --toggle-collect='set_measure::run_matching'`,
//!   1,000 messages per workload);
//! - `heap_bytes` of 100,000 subscriptions: on the 10,000 `pol10k_exact` filters (ten ids each),
//!   and 100,000 distinct filters (each `pol10k_exact` policy with a `tenant` member of its own):
//!   `set_measure memory`.
//!
//! ```sh
//! cargo build --release --manifest-path bench/Cargo.toml --example set_measure
//! bench/target/release/examples/set_measure
//! ```

use filtervm_bench::lines;
use filtervm_compiler::{
    Dialect, Filter, MessageParts, Options, SetScratch, SnsScope, SubscriptionSet, compile,
};
use std::time::Instant;

fn filters(name: &str, options: &Options) -> Vec<Filter> {
    lines(name, usize::MAX)
        .iter()
        .map(|l| {
            let policy = serde_json::from_str(l).expect("a policy");
            compile(Dialect::Sns, &policy, options).expect("compiles")
        })
        .collect()
}

/// One pass over the bodies: the matches.
#[inline(always)]
fn pass(set: &SubscriptionSet<u64>, scratch: &mut SetScratch, bodies: &[Vec<u8>]) -> usize {
    let mut n = 0;
    for b in bodies {
        n += set
            .try_matching(scratch, &MessageParts::body(std::hint::black_box(b)))
            .map_or(0, |m| m.len());
    }
    n
}

/// A pass to measure (callgrind collects this function only).
#[inline(never)]
fn run_matching(set: &SubscriptionSet<u64>, scratch: &mut SetScratch, bodies: &[Vec<u8>]) -> usize {
    pass(set, scratch, bodies)
}

/// Two passes that warm the scratch and the caches (two, so that the compiler does not fold
/// this function into [`run_matching`]).
#[inline(never)]
fn warm_up(set: &SubscriptionSet<u64>, scratch: &mut SetScratch, bodies: &[Vec<u8>]) -> usize {
    pass(set, scratch, bodies);
    pass(set, scratch, bodies)
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let bodies: Vec<Vec<u8>> = lines("attrs", 1000)
        .into_iter()
        .map(String::into_bytes)
        .collect();
    let body = Options::from(SnsScope::MessageBody);
    if mode != "memory" {
        let only = std::env::args().nth(2);
        for name in ["pol10k_exact", "pol10k_num"] {
            if only.as_deref().is_some_and(|o| o != name) {
                continue;
            }
            let fs = filters(name, &body);
            let mut set = SubscriptionSet::new();
            for (i, f) in fs.iter().enumerate() {
                set.insert(i as u64, f).expect("inserts");
            }
            let mut scratch = SetScratch::new();
            let total = warm_up(&set, &mut scratch, &bodies);
            if mode == "count" {
                println!(
                    "{name}: {total}, {}",
                    run_matching(&set, &mut scratch, &bodies)
                );
                continue;
            }
            let mut times: Vec<f64> = (0..21)
                .map(|_| {
                    let t = Instant::now();
                    run_matching(&set, &mut scratch, &bodies);
                    t.elapsed().as_nanos() as f64 / bodies.len() as f64
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!(
                "{name}: median {:.0} ns/msg (min {:.0}), {:.3} matches/msg",
                times[10],
                times[0],
                total as f64 / bodies.len() as f64
            );
        }
    }
    if mode == "memory" || mode.is_empty() {
        let attributes = Options::from(Dialect::Sns);
        let base: Vec<serde_json::Value> = lines("pol10k_exact", usize::MAX)
            .iter()
            .map(|l| serde_json::from_str(l).expect("a policy"))
            .collect();
        let fs: Vec<Filter> = base
            .iter()
            .map(|p| compile(Dialect::Sns, p, &attributes).expect("compiles"))
            .collect();
        let mut shared = SubscriptionSet::new();
        for i in 0..100_000usize {
            shared.insert(i as u64, &fs[i % fs.len()]).expect("inserts");
        }
        println!(
            "100k subscriptions on 10k filters: {} bytes ({:.0}/subscription)",
            shared.heap_bytes(),
            shared.heap_bytes() as f64 / 1e5
        );
        drop(shared);
        let mut distinct = SubscriptionSet::new();
        for i in 0..100_000usize {
            let mut p = base[i % base.len()].clone();
            if let Some(members) = p.as_object_mut() {
                members.insert("tenant".into(), serde_json::json!([format!("t{i}")]));
            }
            let f = compile(Dialect::Sns, &p, &attributes).expect("compiles");
            distinct.insert(i as u64, &f).expect("inserts");
        }
        println!(
            "100k distinct subscriptions: {} bytes ({:.0}/subscription), {} distinct filters",
            distinct.heap_bytes(),
            distinct.heap_bytes() as f64 / 1e5,
            distinct.distinct_filters()
        );
    }
}

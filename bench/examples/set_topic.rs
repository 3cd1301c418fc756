//! A realistic topic ([`filtervm_bench::topic`]) as one `SubscriptionSet`, matched from the raw
//! bytes of published messages: what a delivery costs per matched subscription, and what a
//! message that matches nothing costs, at the set sizes given (default 10,000, 100,000 and
//! 1,000,000 subscriptions). For each size: the set is loaded, then 2,000 realistic messages
//! (skewed like the subscriptions: popular tenants get most traffic) and 2,000 messages of
//! unknown tenants are matched, seven passes each; the median pass is reported.
//!
//! ```sh
//! cargo build --release --manifest-path bench/Cargo.toml --example set_topic
//! bench/target/release/examples/set_topic 10000 100000 1000000
//! # --stats: the group's anchors and the filters evaluated for a few unmatched messages
//! # instructions: one pass of each kind under callgrind
//! valgrind --tool=callgrind --toggle-collect='set_topic::pass_realistic' \
//!   bench/target/release/examples/set_topic --once 100000   # or set_topic::pass_unmatched
//! # --wait (with --once): after loading, print `loaded N` and wait for a line on standard input,
//! # so that a large set loads under `valgrind --instr-atstart=no` and instrumentation is turned
//! # on (`callgrind_control -i on PID`) only for the passes (BENCHMARKS.md, "Sets at scale")
//! ```
#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::topic::{realistic_messages, realistic_topic, unmatched_messages};
use filtervm_compiler::{
    Dialect, MessageParts, Options, SetScratch, SnsScope, SubscriptionSet, compile_text,
};
use std::time::Instant;

const MESSAGES: usize = 2_000;
const PASSES: usize = 7;

/// Matches every message once; the number of deliveries.
#[inline(never)]
fn run_pass(set: &SubscriptionSet<u64>, scratch: &mut SetScratch, messages: &[String]) -> usize {
    let mut delivered = 0;
    for m in messages {
        let matches = set
            .try_matching(
                scratch,
                &MessageParts::body(std::hint::black_box(m.as_bytes())),
            )
            .expect("every message is judged");
        delivered += matches.len();
    }
    delivered
}

/// [`run_pass`] over the realistic messages (a callgrind toggle of its own).
#[inline(never)]
fn pass_realistic(
    set: &SubscriptionSet<u64>,
    scratch: &mut SetScratch,
    messages: &[String],
) -> usize {
    run_pass(set, scratch, messages)
}

/// [`run_pass`] over the messages that match nothing (a callgrind toggle of its own; the check
/// keeps the compiler from folding it into [`pass_realistic`]).
#[inline(never)]
fn pass_unmatched(
    set: &SubscriptionSet<u64>,
    scratch: &mut SetScratch,
    messages: &[String],
) -> usize {
    let delivered = run_pass(set, scratch, messages);
    assert_eq!(delivered, 0, "unknown tenants match nothing");
    delivered
}

/// The median of `PASSES` passes, in nanoseconds per message, and the deliveries of a pass.
fn timed(
    set: &SubscriptionSet<u64>,
    scratch: &mut SetScratch,
    messages: &[String],
) -> (f64, usize) {
    let delivered = run_pass(set, scratch, messages);
    let mut times: Vec<f64> = (0..PASSES)
        .map(|_| {
            let started = Instant::now();
            let again = run_pass(set, scratch, messages);
            assert_eq!(again, delivered, "the same deliveries each pass");
            started.elapsed().as_secs_f64() * 1e9 / messages.len() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (
        times.get(PASSES / 2).copied().unwrap_or(f64::NAN),
        delivered,
    )
}

fn main() {
    let (mut once, mut stats, mut wait) = (false, false, false);
    let mut sizes = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--once" {
            once = true;
        } else if arg == "--stats" {
            stats = true;
        } else if arg == "--wait" {
            wait = true;
        } else {
            sizes.push(arg.parse::<usize>().expect("a subscription count"));
        }
    }
    if sizes.is_empty() {
        sizes = vec![10_000, 100_000, 1_000_000];
    }
    let body = Options::from(SnsScope::MessageBody);
    let realistic = realistic_messages(MESSAGES, 11);
    let unmatched = unmatched_messages(MESSAGES, 13);
    println!(
        "| subscriptions | distinct filters | deliveries per message | ns per message | ns per delivery | ns per unmatched message |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        let mut set = SubscriptionSet::new();
        for (id, text) in realistic_topic(n, 7).iter().enumerate() {
            let filter = compile_text(Dialect::Sns, text, &body).expect("compiles");
            set.insert(id as u64, &filter).expect("inserts");
        }
        if stats {
            for g in set.group_stats() {
                println!(
                    "unanchored {} tests {} top anchors {:?}",
                    g.unanchored_filters,
                    g.distinct_tests,
                    g.anchors.iter().take(8).collect::<Vec<_>>()
                );
            }
            let mut scratch = SetScratch::new();
            for m in unmatched.iter().take(3) {
                let r = set
                    .try_matching(&mut scratch, &MessageParts::body(m.as_bytes()))
                    .expect("judged");
                println!("{m}: {} evaluated", r.filters_evaluated());
            }
        }
        let mut scratch = SetScratch::new();
        if once {
            if wait {
                // Loaded: wait for a line on standard input (time to turn callgrind's
                // instrumentation on, `callgrind_control -i on`, after a load run without it).
                println!("loaded {n}");
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .expect("standard input");
            }
            // Warm: the scratch's buffers grow to the set's size on the first message.
            run_pass(&set, &mut scratch, &realistic);
            let delivered = pass_realistic(&set, &mut scratch, &realistic);
            let none = pass_unmatched(&set, &mut scratch, &unmatched);
            assert_eq!(none, 0, "unknown tenants match nothing");
            println!("{n}: {delivered} deliveries for {MESSAGES} messages");
            continue;
        }
        let (per_message, delivered) = timed(&set, &mut scratch, &realistic);
        let (per_unmatched, none) = timed(&set, &mut scratch, &unmatched);
        assert_eq!(none, 0, "unknown tenants match nothing");
        let per_delivery = per_message * MESSAGES as f64 / delivered.max(1) as f64;
        println!(
            "| {n} | {} | {:.1} | {per_message:.0} | {per_delivery:.1} | {per_unmatched:.0} |",
            set.distinct_filters(),
            delivered as f64 / MESSAGES as f64,
        );
    }
}

//! Quick timing of a SubscriptionSet against one-by-one on the 10k sets (the criterion bench `wall` is
//! the reference; this prints a summary fast).
use filtervm_bench::parts;
use filtervm_bench::{attributes, lines};
use filtervm_compiler::{Dialect, Evaluator, SetScratch, SubscriptionSet, compile};
use std::time::Instant;

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() {
        vec![
            "pol10k_exact".into(),
            "pol10k_num".into(),
            "pol10k_mixed".into(),
        ]
    } else {
        names
    };
    let messages: Vec<_> = lines("attrs", 2000)
        .iter()
        .map(|l| attributes(&serde_json::from_str(l).unwrap()))
        .collect();
    for name in names {
        let t = Instant::now();
        let filters: Vec<_> = lines(&name, usize::MAX)
            .iter()
            .map(|l| {
                compile(
                    Dialect::Sns,
                    &serde_json::from_str(l).unwrap(),
                    &Dialect::Sns.into(),
                )
                .unwrap()
            })
            .collect();
        let compile_ns = t.elapsed().as_nanos() as f64 / filters.len() as f64;
        let t = Instant::now();
        let mut set = SubscriptionSet::new();
        for (i, f) in filters.iter().enumerate() {
            set.insert(i as u64, f).unwrap();
        }
        let add_ns = t.elapsed().as_nanos() as f64 / filters.len() as f64;
        let all = set.group_stats();
        let stats = &all[0];
        if std::env::var_os("ANCHORS").is_some() {
            for (t, n) in stats
                .anchors
                .iter()
                .filter(|(t, _)| !t.contains("\"event\""))
                .take(12)
            {
                println!("  {n:6} {t}");
            }
        }
        let mut m = SetScratch::new();
        let mut total = 0usize;
        let t = Instant::now();
        for msg in &messages {
            total += set.matching(&mut m, &parts(msg)).len();
        }
        let set_ns = t.elapsed().as_nanos() as f64 / messages.len() as f64;
        let mut e = Evaluator::new();
        let few = &messages[..100];
        let t = Instant::now();
        let mut total1 = 0usize;
        for msg in few {
            total1 += filters.iter().filter(|f| e.matches(f, msg)).count();
        }
        let one_ns = t.elapsed().as_nanos() as f64 / few.len() as f64;
        println!(
            "{name}: compile {compile_ns:.0} ns/policy, add {add_ns:.0} ns, set {set_ns:.0} ns/msg, one-by-one {one_ns:.0} ns/msg ({:.1}x), matches/msg {:.2} (check {:.2}), distinct filters {}, tests {}, unanchored {}, bytes/sub {:.0}",
            one_ns / set_ns,
            total as f64 / messages.len() as f64,
            total1 as f64 / few.len() as f64,
            set.distinct_filters(),
            stats.distinct_tests,
            stats.unanchored_filters,
            set.heap_bytes() as f64 / set.len() as f64,
        );
    }
}

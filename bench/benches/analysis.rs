//! Wall clock (criterion): the policy analysis (`filtervm_compiler::analysis`).
//!
//! - `analysis/diff_sns_5_keys`: `diff` of two 5-key SNS policies (attribute scope), the second a
//!   typical change of the first (a value added to a set, a numeric bound moved, a prefix
//!   widened): the two searches (first only, second only), each witness judged by the VM and
//!   read back from its document, and the per-key summary.
//! - `analysis/diff_sns_5_keys_same`: `diff` of the policy with itself (the full exact search,
//!   no witness).
//! - `analysis/example_sns_5_keys`: `example` (a matching message) of the same policy.
//!
//! Run: `cargo bench --manifest-path bench/Cargo.toml --bench analysis`.

use criterion::{Criterion, criterion_group, criterion_main};
use filtervm_compiler::analysis::{self, Verdict};
use filtervm_compiler::{Dialect, Filter, Options, compile_text};
use std::hint::black_box;

/// The policy before the change.
pub const BEFORE: &str = r#"{
    "store": ["example_corp", "acme"],
    "event": [{"prefix": "order."}],
    "amount": [{"numeric": [">=", 150, "<", 5000]}],
    "region": [{"anything-but": ["cn-north-1", "cn-northwest-1"]}],
    "channel": ["web", "mobile", {"exists": false}]
}"#;

/// The policy after the change.
pub const AFTER: &str = r#"{
    "store": ["example_corp", "acme", "globex"],
    "event": [{"prefix": "order"}],
    "amount": [{"numeric": [">=", 100, "<", 5000]}],
    "region": [{"anything-but": ["cn-north-1"]}],
    "channel": ["web", "mobile", {"exists": false}]
}"#;

fn sns(text: &str) -> Filter {
    match compile_text(Dialect::Sns, text, &Options::from(Dialect::Sns)) {
        Ok(f) => f,
        Err(e) => panic!("{e}"),
    }
}

fn bench(c: &mut Criterion) {
    let (before, after) = (sns(BEFORE), sns(AFTER));
    let check = analysis::diff(&before, &after).map(|d| d.verdict);
    assert!(matches!(check, Ok(Verdict::Different)), "{check:?}");
    let mut g = c.benchmark_group("analysis");
    g.bench_function("diff_sns_5_keys", |b| {
        b.iter(|| analysis::diff(black_box(&before), black_box(&after)))
    });
    g.bench_function("diff_sns_5_keys_same", |b| {
        b.iter(|| analysis::diff(black_box(&before), black_box(&before)))
    });
    g.bench_function("example_sns_5_keys", |b| {
        b.iter(|| analysis::example(black_box(&before), true))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

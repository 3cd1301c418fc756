//! Wall clock (criterion): the policy analysis (`filtervm_compiler::analysis`).
//!
//! - `analysis/diff_sns_5_keys`: `diff` of two 5-key SNS policies (attribute scope), the second a
//!   typical change of the first (a value added to a set, a numeric bound moved, a prefix
//!   widened): the two searches (first only, second only), each witness judged by the VM and
//!   read back from its document, and the per-key summary.
//! - `analysis/diff_sns_5_keys_same`: `diff` of the policy with itself (the full exact search,
//!   no witness).
//! - `analysis/example_sns_5_keys`: `example` (a matching message) of the same policy.
//! - `analysis/diff_eventgrid_eventbridge_assuming`: `diff` of an Event Grid filter (event type,
//!   subject prefix, three advanced filters) and its EventBridge translation, across dialects
//!   under `canonical-documents,no-arrays` (same: the whole exact search) — what `translate`
//!   spends on its proof.
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

/// An Event Grid filter (`examples/analysis/payment-completed.eventgrid.json`).
pub const EVENTGRID: &str = r#"{"includedEventTypes": ["Acme.Payment.Completed"],
    "subjectBeginsWith": "/tenants/eu/", "isSubjectCaseSensitive": true,
    "advancedFilters": [
        {"operatorType": "StringIn", "key": "data.currency", "values": ["EUR", "GBP"]},
        {"operatorType": "NumberGreaterThanOrEquals", "key": "data.amount", "value": 100},
        {"operatorType": "BoolEquals", "key": "data.captured", "value": true}]}"#;

/// Its EventBridge translation.
pub const EVENTBRIDGE: &str = r#"{"eventType": [{"equals-ignore-case": "Acme.Payment.Completed"}],
    "subject": [{"prefix": "/tenants/eu/"}],
    "data": {"currency": [{"equals-ignore-case": "EUR"}, {"equals-ignore-case": "GBP"}],
        "amount": [{"numeric": [">=", 100]}], "captured": [true]}}"#;

fn compiled(dialect: Dialect, text: &str) -> Filter {
    match compile_text(dialect, text, &Options::from(dialect)) {
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
    let (eg, eb) = (
        compiled(Dialect::EventGrid, EVENTGRID),
        compiled(Dialect::EventBridge, EVENTBRIDGE),
    );
    let assume = match analysis::Assumptions::parse("canonical-documents,no-arrays") {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    let check = analysis::diff_assuming(&eg, &eb, assume).map(|d| d.verdict);
    assert!(matches!(check, Ok(Verdict::Same)), "{check:?}");
    g.bench_function("diff_eventgrid_eventbridge_assuming", |b| {
        b.iter(|| analysis::diff_assuming(black_box(&eg), black_box(&eb), assume))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

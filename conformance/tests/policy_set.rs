//! Differential check of `PolicySet`: on seeded generated policies and messages of every dialect,
//! matching the whole set returns exactly the subscription ids that evaluating each subscription's
//! filter on its own returns — with identical filters interned, tests shared, subscriptions
//! removed and re-added along the way.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::intern::canonical_options;
use filtervm_compiler::set::{PolicySet, SetMatcher, SubscriptionId};
use filtervm_compiler::{Dialect, Evaluator, Filter, Options};
use filtervm_conformance::generate::{self, Rng, Source};
use filtervm_conformance::reference::json::Value;
use filtervm_conformance::runner::{compile, product_message};
use std::collections::BTreeMap;

/// Generates `cases` cases of `dialect`, builds one set per options value, and compares every
/// message of that options value against the set and against one-by-one evaluation.
fn check(dialect: Dialect, cases: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    // options (canonical) → (options, filters, messages)
    let mut groups: BTreeMap<String, (Options, Vec<Filter>, Vec<Value>)> = BTreeMap::new();
    for _ in 0..cases {
        let case = generate::case(dialect, &mut rng).expect("generator");
        let Ok(filter) = compile(dialect, &case.policy, &case.options) else {
            continue;
        };
        let options = filter.options().clone();
        let group = groups
            .entry(canonical_options(&options))
            .or_insert_with(|| (options, Vec::new(), Vec::new()));
        // Every policy twice in a while, so that interning is exercised.
        if rng.chance(20) {
            group.1.push(filter.clone());
        }
        group.1.push(filter);
        group.2.push(case.message);
    }
    let mut compared = 0usize;
    let mut total_matches = 0usize;
    for (options_text, (options, filters, messages)) in groups {
        let mut set = PolicySet::new();
        let mut live: Vec<(SubscriptionId, usize)> = Vec::new();
        for (i, filter) in filters.iter().enumerate() {
            let id = i as SubscriptionId * 7 + 3;
            set.add(id, filter).unwrap();
            live.push((id, i));
            // Churn: remove one now and then, and re-add some under a new id.
            if rng.chance(10) && !live.is_empty() {
                let at = rng.below(live.len() as u32) as usize;
                let (gone, which) = live.swap_remove(at);
                assert!(set.remove(gone));
                if rng.chance(50) {
                    let again = gone + 1_000_000;
                    set.add(again, &filters[which]).unwrap();
                    live.push((again, which));
                }
            }
        }
        assert_eq!(set.len(), live.len());
        let mut matcher = SetMatcher::new();
        let mut evaluator = Evaluator::new();
        for message in &messages {
            let read = product_message(message)
                .and_then(|m| filtervm_compiler::message_from_json(dialect, &options, &m));
            let Ok(m) = read else {
                continue;
            };
            let mut expected: Vec<SubscriptionId> = live
                .iter()
                .filter(|(_, i)| evaluator.matches(&filters[*i], &m))
                .map(|(id, _)| *id)
                .collect();
            expected.sort_unstable();
            let mut got = matcher.matching(&set, &m).to_vec();
            got.sort_unstable();
            assert_eq!(
                got, expected,
                "{dialect} options {options_text}: message {message}"
            );
            compared += 1;
            total_matches += got.len();
        }
    }
    assert!(compared > cases / 2, "{dialect}: only {compared} messages");
    assert!(total_matches > 0, "{dialect}: nothing ever matched");
}

#[test]
fn policy_set_equals_one_by_one_basaltic() {
    check(Dialect::Basaltic, 300, 11);
}

#[test]
fn policy_set_equals_one_by_one_sns() {
    check(Dialect::Sns, 300, 12);
}

#[test]
fn policy_set_equals_one_by_one_eventgrid() {
    check(Dialect::EventGrid, 300, 13);
}

#[test]
fn policy_set_equals_one_by_one_stream() {
    check(Dialect::Stream, 300, 14);
}

#[test]
fn policy_set_equals_one_by_one_expr() {
    check(Dialect::Expr, 300, 15);
}

//! Differential check of `PolicySet`: on seeded generated policies and messages of every dialect,
//! matching the whole set returns exactly the subscription ids that evaluating each subscription's
//! filter on its own returns.
//!
//! Each dialect's generated policies are grouped by options (a set holds one dialect and one
//! options value); `sns` and `expr` policies are also combined into nested trees (`$or` inside
//! `$or`, AND/OR/NOT inside each other), `stream` ones into more groups. A random walk over the
//! set's operations — add, remove, re-add a removed id, replace an id's filter, add an id sharing
//! a live filter — checks messages along the way. Messages are generated for a live subscription's
//! policy from its own operands (`generate::message_for`), and preferably one that matches it, so
//! most messages match something: a subscription the set drops is seen. At the end the set is
//! emptied and must hold no key, test or filter.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::intern::canonical_options;
use filtervm_compiler::set::{PolicySet, SetMatcher, SubscriptionId};
use filtervm_compiler::{Dialect, Evaluator, Filter};
use filtervm_conformance::generate::{self, Rng, Source};
use filtervm_conformance::reference::json::Value;
use filtervm_conformance::runner::{compile, read_message as message_from_json};
use std::collections::BTreeMap;

/// The policies of one options value.
struct Group {
    options: Value,
    policies: Vec<(Value, Filter)>,
    /// `policies[nested..]` are the nested combinations.
    nested: usize,
}

/// What a run saw.
#[derive(Default)]
struct Tally {
    messages: usize,
    /// Messages matching at least one subscription.
    matching: usize,
    /// Subscription ids delivered in all (one-by-one).
    deliveries: usize,
    /// Messages where the set and one-by-one evaluation disagree.
    disagreements: usize,
    first: Vec<String>,
    nested: usize,
    /// Messages drawn for a target policy that match it.
    hits: usize,
}

/// Generates `cases` cases of `dialect`, adds nested combinations, and runs the churn walk on each
/// options group.
fn check(dialect: Dialect, cases: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for _ in 0..cases {
        let case = generate::case(dialect, &mut rng).expect("generator");
        let Ok(filter) = compile(dialect, &case.policy, &case.options) else {
            continue;
        };
        groups
            .entry(canonical_options(filter.options()))
            .or_insert_with(|| Group {
                options: case.options.clone(),
                policies: Vec::new(),
                nested: 0,
            })
            .policies
            .push((case.policy, filter));
    }
    let mut tally = Tally::default();
    for group in groups.values_mut() {
        group.nested = group.policies.len();
        tally.nested += add_nested(dialect, group, &mut rng);
        churn(dialect, group, &mut rng, &mut tally);
    }
    eprintln!(
        "{dialect}: {} messages, {} matching their target, {} matching at least one subscription, {} deliveries, {} nested policies",
        tally.messages, tally.hits, tally.matching, tally.deliveries, tally.nested
    );
    assert_eq!(
        tally.disagreements,
        0,
        "{dialect}: the set disagrees with one-by-one evaluation on {} of {} messages; first:\n{}",
        tally.disagreements,
        tally.messages,
        tally.first.join("\n")
    );
    assert!(tally.messages >= cases * 3, "{dialect}: too few messages");
    // Messages are drawn to match: nearly all deliver to someone, and at least one in five
    // matches the very policy it was drawn for (the seeded runs give 28-70% per dialect).
    assert!(
        tally.matching * 10 >= tally.messages * 9,
        "{dialect}: only {} of {} messages match anything",
        tally.matching,
        tally.messages
    );
    assert!(
        tally.hits * 5 > tally.messages,
        "{dialect}: only {} of {} messages match their target",
        tally.hits,
        tally.messages
    );
    if matches!(dialect, Dialect::Sns | Dialect::Expr | Dialect::Stream) {
        assert!(
            tally.nested >= cases / 10,
            "{dialect}: only {} nested",
            tally.nested
        );
    }
}

/// Adds nested policies made of the group's own (`generate::nested`); combinations the compiler
/// rejects (limits) are left out. Returns how many were added.
fn add_nested(dialect: Dialect, group: &mut Group, rng: &mut Rng) -> usize {
    let parts: Vec<Value> = group.policies.iter().map(|(p, _)| p.clone()).collect();
    if parts.len() < 4 {
        return 0;
    }
    let mut added = 0;
    for _ in 0..parts.len() {
        let Some(combined) = generate::nested(dialect, &parts, rng) else {
            continue;
        };
        if let Ok(filter) = compile(dialect, &combined, &group.options) {
            group.policies.push((combined, filter));
            added += 1;
        }
    }
    added
}

/// A random walk over the set's operations, checking messages along the way and at the end.
fn churn(dialect: Dialect, group: &Group, rng: &mut Rng, tally: &mut Tally) {
    let n = group.policies.len();
    if n == 0 {
        return;
    }
    let mut set = PolicySet::new();
    // Live subscriptions: id → policy index. Removed ids, for re-adding.
    let mut live: BTreeMap<SubscriptionId, usize> = BTreeMap::new();
    let mut removed: Vec<SubscriptionId> = Vec::new();
    let mut next_id: SubscriptionId = 1;
    let mut matcher = SetMatcher::new();
    let mut evaluator = Evaluator::new();
    let random_live = |rng: &mut Rng, live: &BTreeMap<SubscriptionId, usize>| {
        let at = rng.below(live.len() as u32) as usize;
        live.iter().nth(at).map(|(&id, &p)| (id, p))
    };
    for _ in 0..4 * n {
        match rng.below(24) {
            // Add a new subscription.
            0..=8 => {
                let p = rng.below(n as u32) as usize;
                set.add(next_id, &group.policies[p].1).unwrap();
                live.insert(next_id, p);
                next_id += 1;
            }
            // Remove one.
            9..=12 => {
                if let Some((id, _)) = random_live(rng, &live) {
                    assert!(set.remove(id));
                    live.remove(&id);
                    removed.push(id);
                }
            }
            // Re-add a removed id, with any policy.
            13 => {
                if let Some(id) = removed.pop() {
                    let p = rng.below(n as u32) as usize;
                    set.add(id, &group.policies[p].1).unwrap();
                    live.insert(id, p);
                }
            }
            // Replace a live id's filter.
            14 => {
                if let Some((id, _)) = random_live(rng, &live) {
                    let p = rng.below(n as u32) as usize;
                    set.add(id, &group.policies[p].1).unwrap();
                    live.insert(id, p);
                }
            }
            // Another subscriber to a live filter.
            15 => {
                if let Some((_, p)) = random_live(rng, &live) {
                    set.add(next_id, &group.policies[p].1).unwrap();
                    live.insert(next_id, p);
                    next_id += 1;
                }
            }
            _ => {
                let message = draw_message(dialect, group, &live, rng, &mut evaluator, tally);
                compare(
                    dialect,
                    group,
                    &set,
                    &live,
                    &message,
                    &mut matcher,
                    &mut evaluator,
                    tally,
                );
            }
        }
        assert_eq!(set.len(), live.len());
    }
    for _ in 0..2 * n {
        let message = draw_message(dialect, group, &live, rng, &mut evaluator, tally);
        compare(
            dialect,
            group,
            &set,
            &live,
            &message,
            &mut matcher,
            &mut evaluator,
            tally,
        );
    }
    // Emptied, in random order, the set holds no key, test or filter and matches nothing.
    while let Some((id, _)) = random_live(rng, &live) {
        assert!(set.remove(id));
        live.remove(&id);
    }
    assert_eq!(
        (
            set.keys().len(),
            set.distinct_tests(),
            set.distinct_filters()
        ),
        (0, 0, 0),
        "{dialect}: an emptied set keeps keys, tests or filters"
    );
    let message = draw_message(dialect, group, &live, rng, &mut evaluator, tally);
    if let Ok(m) = message_from_json(dialect, &group.options, &message) {
        assert!(matcher.matching(&set, &m).is_empty());
    }
}

/// A message generated for a live subscription's policy (any policy when none is live; a nested
/// one half of the time): of
/// [`TRIES`] candidates, the first that matches that policy, else the last.
/// How many messages are drawn for a target policy, at most, to find one it matches.
const TRIES: usize = 16;

fn draw_message(
    dialect: Dialect,
    group: &Group,
    live: &BTreeMap<SubscriptionId, usize>,
    rng: &mut Rng,
    evaluator: &mut Evaluator,
    tally: &mut Tally,
) -> Value {
    // Half of the time a nested policy, when one is live.
    let nested: Vec<usize> = live
        .values()
        .copied()
        .filter(|&p| p >= group.nested)
        .collect();
    let target = match live.len() {
        0 => rng.below(group.policies.len() as u32) as usize,
        _ if !nested.is_empty() && rng.chance(50) => {
            nested[rng.below(nested.len() as u32) as usize]
        }
        k => *live.values().nth(rng.below(k as u32) as usize).unwrap(),
    };
    let (policy, filter) = &group.policies[target];
    let mut message = Value::Null;
    for _ in 0..TRIES {
        message = generate::message_for(dialect, policy, &group.options, rng);
        if message_from_json(dialect, &group.options, &message)
            .is_ok_and(|m| evaluator.matches(filter, &m))
        {
            tally.hits += 1;
            break;
        }
    }
    message
}

#[allow(clippy::too_many_arguments)]
fn compare(
    dialect: Dialect,
    group: &Group,
    set: &PolicySet,
    live: &BTreeMap<SubscriptionId, usize>,
    message: &Value,
    matcher: &mut SetMatcher,
    evaluator: &mut Evaluator,
    tally: &mut Tally,
) {
    let Ok(m) = message_from_json(dialect, &group.options, message) else {
        return;
    };
    let expected: Vec<SubscriptionId> = live
        .iter()
        .filter(|(_, p)| evaluator.matches(&group.policies[**p].1, &m))
        .map(|(id, _)| *id)
        .collect();
    let mut got = matcher.matching(set, &m).to_vec();
    got.sort_unstable();
    tally.messages += 1;
    tally.deliveries += expected.len();
    tally.matching += usize::from(!expected.is_empty());
    if got != expected {
        tally.disagreements += 1;
        if tally.first.len() < 3 {
            let missed: Vec<String> = expected
                .iter()
                .filter(|id| !got.contains(id))
                .map(|id| group.policies[live[id]].0.to_string())
                .collect();
            tally.first.push(format!(
                "options {}: message {message}: set {got:?}, one by one {expected:?}; policies missed: {missed:?}",
                group.options
            ));
        }
    }
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

//! Differential check of `SubscriptionSet`: on seeded generated policies and messages, matching the
//! whole set returns exactly the subscription ids that evaluating each subscription's filter on
//! its own returns, in the set's order, and reports exactly the groups that cannot judge the
//! message (`generate::set_walk`).
//!
//! One set per dialect (holding every options value its generator draws: `{}` and
//! `{"scope":"MessageBody"}`, both Event Grid schemas, several expr depths), and one set mixing
//! all five dialects. `sns` and `expr` policies are also combined into nested trees (`$or` inside
//! `$or`, AND/OR/NOT inside each other), `stream` ones into more groups. A random walk over the
//! set's operations — add, remove, re-add a removed id, replace an id's filter, add an id sharing
//! a live filter, save the set and go on with the copy read back — checks messages along the way,
//! per group and by parts. Messages are generated
//! for a live subscription's policy from its own operands, and preferably one that matches it, so
//! most messages match something: a subscription the set drops is seen. At the end the set is
//! emptied and must hold nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::Dialect;
use filtervm_conformance::generate::Rng;
use filtervm_conformance::generate::set_walk::{Walk, policies};

/// Builds the pool of `dialects` (`cases` policies each, and nested combinations), walks
/// `4 × pool` operations, checks `2 × pool` more messages, then empties the set.
fn check(name: &str, dialects: &[Dialect], cases: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let pool = policies(dialects, cases, None, &mut rng);
    let n = pool.len();
    let nested = pool.iter().filter(|p| p.nested).count();
    assert!(n >= cases * dialects.len() / 2, "{name}: only {n} policies");
    let mut walk = Walk::new(pool);
    let mut findings = Vec::new();
    for _ in 0..4 * n {
        if let Err(f) = walk.step(&mut rng) {
            findings.push(f);
        }
    }
    for _ in 0..2 * n {
        if let Err(f) = walk.check(&mut rng) {
            findings.push(f);
        }
    }
    if let Err(f) = walk.empty(&mut rng) {
        findings.push(f);
    }
    let t = &walk.tally;
    eprintln!(
        "{name}: {n} policies ({nested} nested), {} comparisons, {} matching, {} deliveries, {} of {} drawn messages matching their target, {} unjudged groups, {} subscriptions in too complex bodies, up to {} groups, {} comparisons read trusted too",
        t.messages,
        t.matching,
        t.deliveries,
        t.hits,
        t.drawn,
        t.unjudged,
        t.too_complex,
        t.most_groups,
        t.trusted
    );
    assert!(
        findings.is_empty(),
        "{name}: the set disagrees with one-by-one evaluation {} times; first:\n{}",
        findings.len(),
        findings
            .iter()
            .take(3)
            .map(|f| format!("{f:.4000}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(t.messages >= cases * 3, "{name}: too few messages");
    // Messages are drawn to match: nearly all deliver to someone, and at least one in five
    // matches the very policy it was drawn for.
    assert!(
        t.matching * 10 >= t.messages * 8,
        "{name}: only {} of {} messages match anything",
        t.matching,
        t.messages
    );
    assert!(
        t.hits * 5 > t.drawn,
        "{name}: only {} of {} messages match their target",
        t.hits,
        t.drawn
    );
    // Parts left out now and then: missing parts are seen reported (a message without
    // attributes has the empty attribute set, sns rule 12 and B-2, and is judged: a set of
    // basaltic filters alone judges every message it is given).
    // The walk saved the set and went on with the copy read back, more than once.
    assert!(
        t.reloads >= 2,
        "{name}: the set was read back {} times",
        t.reloads
    );
    // Every set holding a group that reads JSON bodies compared its trusted read too.
    if dialects
        .iter()
        .any(|d| matches!(d, Dialect::Sns | Dialect::EventGrid | Dialect::EventBridge))
    {
        assert!(
            t.trusted * 2 >= t.messages,
            "{name}: only {} of {} comparisons were read trusted too",
            t.trusted,
            t.messages
        );
    }
    if dialects != [Dialect::Basaltic] {
        assert!(t.unjudged > 0, "{name}: no group was ever unjudged");
    }
    if dialects
        .iter()
        .any(|d| matches!(d, Dialect::Sns | Dialect::Expr | Dialect::Stream))
    {
        assert!(nested >= cases / 10, "{name}: only {nested} nested");
    }
}

#[test]
fn policy_set_equals_one_by_one_basaltic() {
    check("basaltic", &[Dialect::Basaltic], 300, 11);
}

#[test]
fn policy_set_equals_one_by_one_sns() {
    check("sns", &[Dialect::Sns], 300, 12);
}

#[test]
fn policy_set_equals_one_by_one_eventgrid() {
    check("eventgrid", &[Dialect::EventGrid], 300, 13);
}

#[test]
fn policy_set_equals_one_by_one_stream() {
    check("stream", &[Dialect::Stream], 300, 14);
}

#[test]
fn policy_set_equals_one_by_one_expr() {
    check("expr", &[Dialect::Expr], 300, 15);
}

/// Every dialect in one set: groups come and go as their last subscription leaves.
#[test]
fn policy_set_equals_one_by_one_eventbridge() {
    check("eventbridge", &[Dialect::EventBridge], 300, 17);
}

#[test]
fn policy_set_equals_one_by_one_mixed_dialects() {
    check("mixed", &Dialect::ALL, 80, 16);
}

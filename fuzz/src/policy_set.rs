//! `policy_set`: a `SubscriptionSet` of mixed dialects under churn, against evaluating each
//! subscription on its own.
//!
//! The first byte picks the dialects (its low six bits, a set of `Dialect::ALL`; none set means
//! all six), unless `FILTERVM_FUZZ_DIALECT` names one (then every byte is a choice). The rest
//! are the choices (`generate::Bytes`) of: up to 24 generated policies in all, with the options
//! each generator draws (one set holds every options value), a few nested combinations per
//! (dialect, options) group (`generate::nested`: `$or` in `$or`, AND/OR/NOT trees, more stream
//! groups), then a walk of up to 96 operations — add a subscription, remove one, re-add a
//! removed id, replace an id's filter, add another subscriber to a live filter, check a message
//! (`generate::set_walk`). A message is drawn per group for a live subscription's policy from its
//! own operands (`generate::message_for`), preferably one that matches it, so most messages
//! deliver; each check compares the set's ids (in its order) and the groups it reports unjudged
//! with one-by-one evaluation, per group and by message parts (parts left out now and then). At
//! the end the set is emptied and must hold nothing. A finding prints the subscriptions (dialect,
//! options, policy), the message and what is wrong as JSON, then panics.

use filtervm_compiler::Dialect;
use filtervm_conformance::generate::set_walk::{Walk, policies};
use filtervm_conformance::generate::{Bytes, Source};
use std::sync::OnceLock;

const MAX_POLICIES: u32 = 24;
const MAX_NESTED: u32 = 8;
const MAX_OPS: usize = 96;

/// The target (see the module documentation).
pub fn policy_set(data: &[u8]) {
    static FORCED: OnceLock<Option<Dialect>> = OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        std::env::var("FILTERVM_FUZZ_DIALECT")
            .ok()
            .and_then(|d| d.parse().ok())
    });
    let (dialects, rest): (Vec<Dialect>, &[u8]) = match (forced, data.split_first()) {
        (Some(d), _) => (vec![d], data),
        (None, Some((&b, rest))) => {
            let chosen: Vec<Dialect> = Dialect::ALL
                .iter()
                .enumerate()
                .filter(|(i, _)| b & (1 << i) != 0)
                .map(|(_, &d)| d)
                .collect();
            let chosen = if chosen.is_empty() {
                Dialect::ALL.to_vec()
            } else {
                chosen
            };
            (chosen, rest)
        }
        (None, None) => return,
    };
    let mut s = Bytes::new(rest);
    let per_dialect = 1 + s.below(MAX_POLICIES) as usize / dialects.len();
    let nested = s.below(MAX_NESTED) as usize;
    let pool = policies(&dialects, per_dialect, Some(nested), &mut s);
    if pool.is_empty() {
        return;
    }
    let mut walk = Walk::new(pool);
    let found = |f: String| -> ! {
        eprintln!("{f}");
        panic!("the subscription set disagrees with one-by-one evaluation (see above)");
    };
    for _ in 0..MAX_OPS {
        if s.is_empty() {
            break;
        }
        if let Err(f) = walk.step(&mut s) {
            found(f);
        }
    }
    // A last look with every subscription in place, then empty the set.
    for _ in 0..4 {
        if let Err(f) = walk.check(&mut s) {
            found(f);
        }
    }
    if let Err(f) = walk.empty(&mut s) {
        found(f);
    }
}

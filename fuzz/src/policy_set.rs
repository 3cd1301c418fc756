//! `policy_set`: a `PolicySet` under churn, against evaluating each subscription on its own.
//!
//! The first byte picks the dialect (`% 5`, the order of `Dialect::ALL`), unless
//! `FILTERVM_FUZZ_DIALECT` names one (then every byte is a choice). The rest are the choices
//! (`generate::Bytes`) of: up to 24 generated policies with one options value (a set holds one),
//! a few nested combinations of them (`generate::nested`: `$or` in `$or`, AND/OR/NOT trees, more
//! stream groups), then a walk of up to 96 operations — add a subscription, remove one, re-add a
//! removed id, replace an id's filter, add another subscriber to a live filter, check a message.
//! A message is drawn for a live subscription's policy from its own operands
//! (`generate::message_for`), the first of up to eight that matches it, so most messages deliver.
//! Every check compares the set's ids with one-by-one evaluation; at the end the set is emptied and
//! must hold no key, test or filter. A finding prints the dialect, the options, the live policies
//! and the message, then panics.

use filtervm_compiler::intern::canonical_options;
use filtervm_compiler::set::{PolicySet, SetMatcher, SubscriptionId};
use filtervm_compiler::{Dialect, Evaluator, Filter};
use filtervm_conformance::generate::{self, Bytes, Source};
use filtervm_conformance::json;
use filtervm_conformance::reference::json::{Map, Value};
use filtervm_conformance::runner::{compile, options as read_options, read_message};
use std::collections::BTreeMap;
use std::sync::OnceLock;

const MAX_POLICIES: u32 = 24;
const MAX_NESTED: u32 = 8;
const MAX_OPS: usize = 96;
const TRIES: usize = 8;

/// The state of one run.
struct Run {
    dialect: Dialect,
    options: Value,
    policies: Vec<(Value, Filter)>,
    set: PolicySet,
    /// Live subscriptions: id → policy index.
    live: BTreeMap<SubscriptionId, usize>,
    removed: Vec<SubscriptionId>,
    next_id: SubscriptionId,
    matcher: SetMatcher,
    evaluator: Evaluator,
}

/// The target (see the module documentation).
pub fn policy_set(data: &[u8]) {
    static FORCED: OnceLock<Option<Dialect>> = OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        std::env::var("FILTERVM_FUZZ_DIALECT")
            .ok()
            .and_then(|d| d.parse().ok())
    });
    let (dialect, rest) = match (forced, data.split_first()) {
        (Some(d), _) => (d, data),
        (None, Some((&b, rest))) => (Dialect::ALL[usize::from(b) % Dialect::ALL.len()], rest),
        (None, None) => return,
    };
    let mut s = Bytes::new(rest);
    let Some(mut run) = policies(dialect, &mut s) else {
        return;
    };
    for _ in 0..MAX_OPS {
        if s.is_empty() {
            break;
        }
        run.step(&mut s);
    }
    // A last look with every subscription in place, then empty the set.
    for _ in 0..4 {
        run.check(&mut s);
    }
    let ids: Vec<SubscriptionId> = run.live.keys().copied().collect();
    for id in ids {
        assert!(run.set.remove(id), "live subscription {id} not in the set");
    }
    assert_eq!(
        (
            run.set.keys().len(),
            run.set.distinct_tests(),
            run.set.distinct_filters()
        ),
        (0, 0, 0),
        "an emptied set keeps keys, tests or filters"
    );
}

/// Generated policies sharing the first one's options, and nested combinations of them.
fn policies(dialect: Dialect, s: &mut Bytes<'_>) -> Option<Run> {
    let wanted = 1 + s.below(MAX_POLICIES) as usize;
    let mut options: Option<(Value, String)> = None;
    let mut policies = Vec::new();
    for _ in 0..2 * wanted {
        if policies.len() >= wanted || s.is_empty() {
            break;
        }
        let case = generate::case(dialect, s)?;
        let Ok(typed) = read_options(dialect, &case.options) else {
            continue;
        };
        let canonical = canonical_options(&typed);
        match &options {
            Some((_, c)) if *c != canonical => continue,
            Some(_) => {}
            None => options = Some((case.options.clone(), canonical)),
        }
        // A policy the compiler rejects is a generator bug, which `differential` reports.
        if let Ok(filter) = compile(dialect, &case.policy, &case.options) {
            policies.push((case.policy, filter));
        }
    }
    let (options, _) = options?;
    let parts: Vec<Value> = policies.iter().map(|(p, _)| p.clone()).collect();
    for _ in 0..s.below(MAX_NESTED) {
        if let Some(p) = generate::nested(dialect, &parts, s)
            && let Ok(filter) = compile(dialect, &p, &options)
        {
            policies.push((p, filter));
        }
    }
    (!policies.is_empty()).then(|| Run {
        dialect,
        options,
        policies,
        set: PolicySet::new(),
        live: BTreeMap::new(),
        removed: Vec::new(),
        next_id: 1,
        matcher: SetMatcher::new(),
        evaluator: Evaluator::new(),
    })
}

impl Run {
    fn policy(&self, s: &mut Bytes<'_>) -> usize {
        s.below(u32::try_from(self.policies.len()).unwrap_or(u32::MAX)) as usize
    }

    fn some_live(&self, s: &mut Bytes<'_>) -> Option<(SubscriptionId, usize)> {
        let at = s.below(u32::try_from(self.live.len()).unwrap_or(u32::MAX)) as usize;
        self.live.iter().nth(at).map(|(&id, &p)| (id, p))
    }

    fn add(&mut self, id: SubscriptionId, p: usize) {
        if let Some((_, filter)) = self.policies.get(p) {
            self.set
                .add(id, filter)
                .unwrap_or_else(|e| panic!("add {id}: {e}"));
            self.live.insert(id, p);
        }
    }

    /// One operation.
    fn step(&mut self, s: &mut Bytes<'_>) {
        match s.below(8) {
            0 | 1 => {
                let (id, p) = (self.next_id, self.policy(s));
                self.next_id += 1;
                self.add(id, p);
            }
            2 => {
                if let Some((id, _)) = self.some_live(s) {
                    assert!(self.set.remove(id), "remove {id}: not in the set");
                    self.live.remove(&id);
                    self.removed.push(id);
                }
            }
            3 => {
                if let Some(id) = self.removed.pop() {
                    let p = self.policy(s);
                    self.add(id, p);
                }
            }
            4 => {
                if let Some((id, _)) = self.some_live(s) {
                    let p = self.policy(s);
                    self.add(id, p);
                }
            }
            5 => {
                if let Some((_, p)) = self.some_live(s) {
                    let id = self.next_id;
                    self.next_id += 1;
                    self.add(id, p);
                }
            }
            _ => self.check(s),
        }
        assert_eq!(self.set.len(), self.live.len(), "the set's size");
    }

    /// Draws a message for a live subscription's policy and compares the set with one by one.
    fn check(&mut self, s: &mut Bytes<'_>) {
        let target = match self.some_live(s) {
            Some((_, p)) => p,
            None => self.policy(s),
        };
        let Some((policy, filter)) = self.policies.get(target) else {
            return;
        };
        let mut message = None;
        for _ in 0..TRIES {
            let json = generate::message_for(self.dialect, policy, &self.options, s);
            let Ok(m) = read_message(self.dialect, &self.options, &json) else {
                continue;
            };
            let hit = self.evaluator.matches(filter, &m);
            message = Some((json, m));
            if hit || s.is_empty() {
                break;
            }
        }
        let Some((json, m)) = message else {
            return;
        };
        let expected: Vec<SubscriptionId> = self
            .live
            .iter()
            .filter(|(_, p)| {
                self.policies
                    .get(**p)
                    .is_some_and(|(_, f)| self.evaluator.matches(f, &m))
            })
            .map(|(id, _)| *id)
            .collect();
        let mut got = self.matcher.matching(&self.set, &m).to_vec();
        got.sort_unstable();
        if got != expected {
            let subscriptions: Map = self
                .live
                .iter()
                .filter_map(|(id, p)| Some((id.to_string(), self.policies.get(*p)?.0.clone())))
                .collect();
            eprintln!(
                "{}",
                json!({
                    "dialect": self.dialect.name(),
                    "options": self.options,
                    "subscriptions": subscriptions,
                    "message": json,
                    "set": got,
                    "one_by_one": expected,
                })
            );
            panic!("the set gives {got:?}, one-by-one evaluation {expected:?}");
        }
    }
}

//! A random walk over a [`SubscriptionSet`] holding generated policies of several dialects and
//! options, checked against evaluating each subscription's filter on its own: the seeded
//! `policy_set` tests and the `policy_set` fuzz target share it.
//!
//! The pool ([`policies`]) holds generated policies of the chosen dialects with whatever options
//! their generators draw, plus nested combinations of each (dialect, options) group's own
//! policies ([`super::nested`]: `$or` inside `$or`, AND/OR/NOT trees, more stream groups). The
//! walk ([`Walk::step`]) adds a subscription, removes one, re-adds a removed id, replaces an id's
//! filter, adds another subscriber to a live filter, saves the set and goes on with the copy read
//! back ([`Walk::reload`]), or checks a message ([`Walk::check`]).
//!
//! A message is drawn per group of the set, for a live subscription's policy from its own
//! operands ([`super::message_for`], preferably one that matches it), so most messages deliver
//! and a subscription the set drops is seen. Each check compares twice:
//!
//! - **per group** ([`SubscriptionSet::matching_with`]): each group reads its own drawn message;
//! - **by parts** ([`SubscriptionSet::matching`]): one message of attributes, a body and headers,
//!   each part taken from one group's drawn message (now and then left out, so that groups
//!   missing their part are seen reported).
//!
//! The set's ids (in its order) must be those whose filter matches one by one, and the groups it
//! reports unjudged those whose filters cannot judge the message one by one, with the same code.
//! Both comparisons are made again with a scratch that reads in [`ReadMode::Trusted`]: wherever
//! every body the message holds is JSON, the trusted read must give the set's validating answer
//! exactly, ids and unjudged groups alike (the facade's documentation, "Trusted input").
//! One tolerance: a group whose bound SNS body exceeds the binding limits is unjudged as a whole
//! (`MESSAGE_TOO_COMPLEX`) even when one filter's smaller key table would not exceed them; its
//! subscriptions are then not compared ([`Tally::too_complex`] counts them). None for
//! `eventbridge` groups: a valid event always gets a verdict there (EB-8).

use super::{Source, case, message_for, nested};
use crate::reference::json::{Map, Value};
use crate::runner::{compile, read_message};
use filtervm_compiler::{
    Dialect, ErrorCode, Evaluator, Filter, GroupMessage, MessagePart, MessageParts, Options,
    ReadMode, SetScratch, SubscriptionSet,
};
use filtervm_vm::json::{LoneSurrogates, validate};
use filtervm_vm::message::Message;
use std::collections::BTreeMap;

/// One policy of the pool.
#[derive(Debug)]
pub struct Policy {
    /// Its dialect.
    pub dialect: Dialect,
    /// Its options as generated.
    pub options: Value,
    /// The options, read.
    pub typed: Options,
    /// The policy.
    pub policy: Value,
    /// The compiled filter.
    pub filter: Filter,
    /// Whether it is a nested combination of others.
    pub nested: bool,
}

/// Generates `cases` policies of each of `dialects` (those the compiler rejects are left out: a
/// generator bug, which the differential check reports), then up to `nested_per_group` nested
/// combinations per (dialect, options) group of at least four policies (`None`: as many as the
/// group has policies).
pub fn policies<S: Source>(
    dialects: &[Dialect],
    cases: usize,
    nested_per_group: Option<usize>,
    s: &mut S,
) -> Vec<Policy> {
    let mut pool = Vec::new();
    for &dialect in dialects {
        for _ in 0..cases {
            let case = case(dialect, s);
            let Ok(filter) = compile(dialect, &case.policy, &case.options) else {
                continue;
            };
            pool.push(Policy {
                dialect,
                typed: filter.options().clone(),
                options: case.options,
                policy: case.policy,
                filter,
                nested: false,
            });
        }
    }
    let mut groups: Vec<(Options, Value, Vec<Value>)> = Vec::new();
    for p in &pool {
        match groups.iter_mut().find(|(o, _, _)| *o == p.typed) {
            Some((_, _, parts)) => parts.push(p.policy.clone()),
            None => groups.push((p.typed.clone(), p.options.clone(), vec![p.policy.clone()])),
        }
    }
    for (typed, options, parts) in groups {
        if parts.len() < 4 {
            continue;
        }
        let dialect = typed.dialect();
        for _ in 0..nested_per_group.unwrap_or(parts.len()) {
            let Some(combined) = nested(dialect, &parts, s) else {
                continue;
            };
            if let Ok(filter) = compile(dialect, &combined, &options) {
                pool.push(Policy {
                    dialect,
                    typed: typed.clone(),
                    options: options.clone(),
                    policy: combined,
                    filter,
                    nested: true,
                });
            }
        }
    }
    pool
}

/// What a walk saw.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Comparisons of the set with one-by-one evaluation (two per check).
    pub messages: usize,
    /// Comparisons where at least one subscription matched.
    pub matching: usize,
    /// Subscription ids delivered in all (one by one).
    pub deliveries: usize,
    /// Messages drawn for a target policy that match it.
    pub hits: usize,
    /// Messages drawn in all.
    pub drawn: usize,
    /// Groups reported unjudged, as one-by-one evaluation expects.
    pub unjudged: usize,
    /// Subscriptions not compared: their group's SNS body exceeded the binding limits.
    pub too_complex: usize,
    /// Most groups the set held at one check.
    pub most_groups: usize,
    /// Times the set was saved and read back ([`Walk::reload`]).
    pub reloads: usize,
    /// Comparisons made again in [`ReadMode::Trusted`] (a message holding a body, every body
    /// JSON).
    pub trusted: usize,
}

/// How many messages are drawn for a target policy, at most, to find one it matches.
const TRIES: usize = 12;

/// The set under test and what it must hold.
#[derive(Debug)]
pub struct Walk {
    pool: Vec<Policy>,
    set: SubscriptionSet<u64>,
    /// Live subscriptions: id → policy index.
    live: BTreeMap<u64, usize>,
    /// The live ids in the order they were first inserted (the set's order).
    order: Vec<u64>,
    removed: Vec<u64>,
    next_id: u64,
    scratch: SetScratch,
    /// The same buffers reading in [`ReadMode::Trusted`].
    trusted: SetScratch,
    evaluator: Evaluator,
    /// What the walk saw so far.
    pub tally: Tally,
}

/// A disagreement, as JSON text: the subscriptions, the message(s), both answers.
pub type Finding = String;

impl Walk {
    /// A walk over an empty set, drawing subscriptions from `pool`.
    pub fn new(pool: Vec<Policy>) -> Walk {
        Walk {
            pool,
            set: SubscriptionSet::new(),
            live: BTreeMap::new(),
            order: Vec::new(),
            removed: Vec::new(),
            next_id: 1,
            scratch: SetScratch::new(),
            trusted: {
                let mut trusted = SetScratch::new();
                trusted.set_read_mode(ReadMode::Trusted);
                trusted
            },
            evaluator: Evaluator::new(),
            tally: Tally::default(),
        }
    }

    /// The number of live subscriptions (and the set's, checked).
    pub fn len(&self) -> Result<usize, Finding> {
        if self.set.len() != self.live.len() || self.order.len() != self.live.len() {
            return Err(format!(
                "the set holds {} subscriptions, {} are live",
                self.set.len(),
                self.live.len()
            ));
        }
        Ok(self.live.len())
    }

    /// Whether no subscription is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    fn some_policy<S: Source>(&self, s: &mut S) -> usize {
        s.below(u32::try_from(self.pool.len()).unwrap_or(u32::MAX)) as usize
    }

    fn some_live<S: Source>(&self, s: &mut S) -> Option<(u64, usize)> {
        let at = s.below(u32::try_from(self.live.len()).unwrap_or(u32::MAX)) as usize;
        self.live.iter().nth(at).map(|(&id, &p)| (id, p))
    }

    fn insert(&mut self, id: u64, p: usize) -> Result<(), Finding> {
        let Some(policy) = self.pool.get(p) else {
            return Ok(());
        };
        self.set
            .insert(id, &policy.filter)
            .map_err(|e| format!("insert {id} ({}): {e}", policy.policy))?;
        if self.live.insert(id, p).is_none() {
            self.order.push(id);
        }
        Ok(())
    }

    fn remove(&mut self, id: u64) -> Result<(), Finding> {
        if !self.set.remove(&id) {
            return Err(format!("remove {id}: not in the set"));
        }
        self.live.remove(&id);
        self.order.retain(|&x| x != id);
        Ok(())
    }

    /// One operation (see the module documentation).
    pub fn step<S: Source>(&mut self, s: &mut S) -> Result<(), Finding> {
        match s.below(24) {
            // Add a new subscription.
            0..=8 => {
                let (id, p) = (self.next_id, self.some_policy(s));
                self.next_id += 1;
                self.insert(id, p)?;
            }
            // Remove one.
            9..=12 => {
                if let Some((id, _)) = self.some_live(s) {
                    self.remove(id)?;
                    self.removed.push(id);
                }
            }
            // Re-add a removed id, with any policy.
            13 => {
                if let Some(id) = self.removed.pop() {
                    let p = self.some_policy(s);
                    self.insert(id, p)?;
                }
            }
            // Replace a live id's filter.
            14 => {
                if let Some((id, _)) = self.some_live(s) {
                    let p = self.some_policy(s);
                    self.insert(id, p)?;
                }
            }
            // Another subscriber to a live filter.
            15 => {
                if let Some((_, p)) = self.some_live(s) {
                    let id = self.next_id;
                    self.next_id += 1;
                    self.insert(id, p)?;
                }
            }
            // Save the set and go on with the copy read back.
            16 => self.reload()?,
            _ => self.check(s)?,
        }
        self.len().map(|_| ())
    }

    /// Saves the set ([`SubscriptionSet::to_bytes`]) and goes on with the set read back
    /// ([`SubscriptionSet::from_bytes`]): it must hold the same ids in the same order, the same
    /// groups in the same order and the same distinct filters; the checks that follow compare it
    /// with one-by-one evaluation, and the operations that follow change it.
    pub fn reload(&mut self) -> Result<(), Finding> {
        let bytes = self.set.to_bytes();
        let loaded = SubscriptionSet::<u64>::from_bytes(&bytes).map_err(|e| {
            format!(
                "reading back a saved set of {} subscriptions: {e}",
                self.set.len()
            )
        })?;
        if !loaded.ids().eq(self.set.ids())
            || !loaded.options().eq(self.set.options())
            || loaded.distinct_filters() != self.set.distinct_filters()
        {
            return Err(format!(
                "the set read back differs: ids {:?} / {:?}, groups {:?} / {:?}, filters {} / {}",
                loaded.ids().collect::<Vec<_>>(),
                self.set.ids().collect::<Vec<_>>(),
                loaded
                    .options()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>(),
                self.set
                    .options()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>(),
                loaded.distinct_filters(),
                self.set.distinct_filters()
            ));
        }
        if loaded.to_bytes() != bytes {
            return Err("the set read back saves to other bytes".into());
        }
        self.set = loaded;
        self.tally.reloads += 1;
        Ok(())
    }

    /// Removes every live subscription, in an order drawn from `s`; the emptied set must hold
    /// nothing (no group, key, test, filter or memory).
    pub fn empty<S: Source>(&mut self, s: &mut S) -> Result<(), Finding> {
        while let Some((id, _)) = self.some_live(s) {
            self.remove(id)?;
        }
        if self.set.groups() != 0 || self.set.heap_bytes() != 0 {
            return Err(format!(
                "the emptied set keeps {} groups, {} bytes",
                self.set.groups(),
                self.set.heap_bytes()
            ));
        }
        Ok(())
    }

    /// Draws a message per group of the set and compares the set with one-by-one evaluation,
    /// per group and by parts (see the module documentation).
    pub fn check<S: Source>(&mut self, s: &mut S) -> Result<(), Finding> {
        // The groups, in the order their first live subscription appears.
        let mut groups: Vec<Options> = Vec::new();
        for p in self.live.values().filter_map(|&p| self.pool.get(p)) {
            if !groups.contains(&p.typed) {
                groups.push(p.typed.clone());
            }
        }
        if groups.is_empty() {
            return Ok(());
        }
        self.tally.most_groups = self.tally.most_groups.max(groups.len());
        let mut drawn: Vec<(Options, Value, Message)> = Vec::new();
        for options in &groups {
            if let Some((json, message)) = self.draw(options, s) {
                drawn.push((options.clone(), json, message));
            }
        }
        self.per_group(&drawn)?;
        self.by_parts(&drawn, s)
    }

    /// A message for a live subscription of the group with `options` (a nested one half of the
    /// time, when one is live): of [`TRIES`] candidates, the first that matches it, else the
    /// last.
    fn draw<S: Source>(&mut self, options: &Options, s: &mut S) -> Option<(Value, Message)> {
        let members: Vec<usize> = self
            .live
            .values()
            .copied()
            .filter(|&p| self.pool.get(p).is_some_and(|x| x.typed == *options))
            .collect();
        let nested: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&p| self.pool.get(p).is_some_and(|x| x.nested))
            .collect();
        let from = if !nested.is_empty() && s.chance(50) {
            &nested
        } else {
            &members
        };
        let target = self
            .pool
            .get(*from.get(s.below(u32::try_from(from.len()).unwrap_or(0)) as usize)?)?;
        self.tally.drawn += 1;
        let mut last = None;
        for _ in 0..TRIES {
            let json = message_for(target.dialect, &target.policy, &target.options, s);
            let Ok(message) = read_message(target.dialect, &target.options, &json) else {
                continue;
            };
            let hit = self.evaluator.matches(&target.filter, &message);
            last = Some((json, message));
            if hit {
                self.tally.hits += 1;
                break;
            }
        }
        last
    }

    /// Each group reads its own drawn message.
    fn per_group(&mut self, drawn: &[(Options, Value, Message)]) -> Result<(), Finding> {
        let of = |options: &Options| drawn.iter().find(|(o, _, _)| o == options);
        let read = |options: &Options| match of(options) {
            Some((_, _, message)) => Ok(GroupMessage::Borrowed(message)),
            None => Err(filtervm_compiler::MessageError {
                code: ErrorCode::InvalidMessage,
                pointer: String::new(),
                message: "no message drawn for this group".to_owned(),
            }),
        };
        let (got, unjudged) = answer(&self.set.matching_with(&mut self.scratch, read));
        let bodies: Vec<&[u8]> = drawn
            .iter()
            .filter_map(|(_, _, m)| match m {
                Message::Body(b) => Some(b.as_slice()),
                _ => None,
            })
            .collect();
        let trusted = trusted_comparable(&bodies)
            .then(|| answer(&self.set.matching_with(&mut self.trusted, read)));
        let evaluator = &mut self.evaluator;
        let expected = expect(&self.order, &self.live, &self.pool, |filter| {
            let Some((_, _, message)) = of(filter.options()) else {
                return Some(Err(ErrorCode::InvalidMessage));
            };
            Some(match evaluator.try_matches(filter, message) {
                Err(e)
                    if e.code == ErrorCode::MessageNotJson && filter.dialect() == Dialect::Sns =>
                {
                    Ok(evaluator.matches(filter, message))
                }
                other => other.map_err(|e| e.code),
            })
        });
        let message = || {
            Value::Array(
                drawn
                    .iter()
                    .map(|(o, json, _)| {
                        let mut m = Map::new();
                        m.insert("options".into(), Value::String(o.to_json().to_string()));
                        m.insert("message".into(), json.clone());
                        Value::Object(m)
                    })
                    .collect(),
            )
        };
        self.compare("per group", (&got, &unjudged), trusted, expected, message)
    }

    /// One message of parts, each from one group's drawn message; each part left out now and
    /// then.
    fn by_parts<S: Source>(
        &mut self,
        drawn: &[(Options, Value, Message)],
        s: &mut S,
    ) -> Result<(), Finding> {
        let mut pick = |part: MessagePart| -> Option<&Message> {
            let readers: Vec<&Message> = drawn
                .iter()
                .filter(|(o, _, _)| MessagePart::of(o) == part)
                .map(|(_, _, m)| m)
                .collect();
            if readers.is_empty() || s.chance(10) {
                return None;
            }
            readers
                .get(s.below(u32::try_from(readers.len()).unwrap_or(0)) as usize)
                .copied()
        };
        let attributes = match pick(MessagePart::Attributes) {
            Some(Message::Attributes(a)) => Some(a.as_slice()),
            _ => None,
        };
        let headers = match pick(MessagePart::Headers) {
            Some(Message::Headers(h)) => Some(h.as_slice()),
            _ => None,
        };
        let body: Option<Vec<u8>> = match pick(MessagePart::Body) {
            Some(Message::Body(b)) => Some(b.clone()),
            Some(Message::Json(v)) => serde_json::to_vec(v).ok(),
            _ => None,
        };
        let mut parts = MessageParts::new();
        if let Some(b) = &body {
            parts = parts.with_body(b);
        }
        if let Some(a) = attributes {
            parts = parts.with_attributes(a);
        }
        if let Some(h) = headers {
            parts = parts.with_headers(h);
        }
        let (got, unjudged) = answer(&self.set.matching(&mut self.scratch, &parts));
        let trusted = trusted_comparable(body.as_deref().as_slice())
            .then(|| answer(&self.set.matching(&mut self.trusted, &parts)));
        let evaluator = &mut self.evaluator;
        let expected = expect(&self.order, &self.live, &self.pool, |filter| {
            Some(evaluator.matches_parts(filter, &parts).map_err(|e| e.code))
        });
        let message = || {
            let mut m = Map::new();
            if let Some(b) = &body {
                m.insert(
                    "body".into(),
                    Value::String(String::from_utf8_lossy(b).into_owned()),
                );
            }
            m.insert(
                "attributes".into(),
                Value::String(format!("{attributes:?}")),
            );
            m.insert("headers".into(), Value::String(format!("{headers:?}")));
            Value::Object(m)
        };
        self.compare("by parts", (&got, &unjudged), trusted, expected, message)
    }

    /// Compares the set's answer with the expected one, and its answer read in trusted mode
    /// (when there is one to compare) with its validating one (see the module documentation).
    fn compare(
        &mut self,
        path: &str,
        (got, unjudged): (&[u64], &[(Options, ErrorCode)]),
        trusted: Option<Answer>,
        expected: Vec<Expected>,
        message: impl Fn() -> Value,
    ) -> Result<(), Finding> {
        self.tally.messages += 1;
        let mut want = Vec::new();
        let mut want_unjudged: Vec<(Options, ErrorCode)> = Vec::new();
        let mut problems = Vec::new();
        if let Some((trusted_ids, trusted_unjudged)) = trusted {
            self.tally.trusted += 1;
            if trusted_ids != got || trusted_unjudged != unjudged {
                problems.push(format!(
                    "read trusted, the set gives {trusted_ids:?} and reports {trusted_unjudged:?} \
                     unjudged; validating, {got:?} and {unjudged:?}"
                ));
            }
        }
        for (id, p, verdict) in expected {
            let Some(policy) = self.pool.get(p) else {
                continue;
            };
            let reported = unjudged.iter().find(|(o, _)| *o == policy.typed);
            match (verdict, reported) {
                // An EventBridge group always judges a valid event (EB-8): no tolerance.
                (_, Some((o, ErrorCode::MessageTooComplex)))
                    if o.dialect() != Dialect::EventBridge =>
                {
                    self.tally.too_complex += 1
                }
                (Some(Ok(true)), None) => want.push(id),
                (Some(Ok(_)), None) => {}
                (Some(Err(code)), _) => {
                    if !want_unjudged.iter().any(|(o, _)| *o == policy.typed) {
                        want_unjudged.push((policy.typed.clone(), code));
                    }
                }
                (Some(Ok(_)), Some((_, code))) => problems.push(format!(
                    "subscription {id} judged one by one, its group unjudged by the set ({code})"
                )),
                (None, _) => {}
            }
        }
        for (options, code) in &want_unjudged {
            if !unjudged.iter().any(|(o, c)| o == options && c == code) {
                problems.push(format!(
                    "the group {options} cannot judge the message one by one ({code}), the set \
                     does not report it so"
                ));
            }
        }
        for (options, code) in unjudged {
            if (*code != ErrorCode::MessageTooComplex || options.dialect() == Dialect::EventBridge)
                && !want_unjudged.iter().any(|(o, c)| o == options && c == code)
            {
                problems.push(format!(
                    "the set reports the group {options} unjudged ({code})"
                ));
            }
        }
        self.tally.unjudged += unjudged.len();
        self.tally.deliveries += want.len();
        self.tally.matching += usize::from(!want.is_empty());
        if got != want.as_slice() {
            problems.push(format!("the set gives {got:?}, one by one {want:?}"));
        }
        if problems.is_empty() {
            return Ok(());
        }
        let subscriptions: Map = self
            .set
            .ids()
            .filter_map(|id| {
                let p = self.pool.get(*self.live.get(id)?)?;
                let mut m = Map::new();
                m.insert("dialect".into(), Value::String(p.dialect.name().into()));
                m.insert("options".into(), p.options.clone());
                m.insert("policy".into(), p.policy.clone());
                Some((id.to_string(), Value::Object(m)))
            })
            .collect();
        let mut finding = Map::new();
        finding.insert("path".into(), Value::String(path.into()));
        finding.insert(
            "problems".into(),
            Value::Array(problems.into_iter().map(Value::String).collect()),
        );
        finding.insert("subscriptions".into(), Value::Object(subscriptions));
        finding.insert("message".into(), message());
        Err(Value::Object(finding).to_string())
    }
}

/// A set's answer: the ids it delivers to, in its order, and the groups it reports unjudged.
type Answer = (Vec<u64>, Vec<(Options, ErrorCode)>);

fn answer(matches: &filtervm_compiler::Matches<'_, u64>) -> Answer {
    (
        matches.ids().copied().collect(),
        matches
            .unjudged()
            .map(|u| (u.options.clone(), u.error.code))
            .collect(),
    )
}

/// Whether a message holding `bodies` is one whose trusted read must give the validating answer:
/// it holds a body (else the read mode plays no part), and every body is JSON (trusted mode may
/// judge what is not; the facade's documentation, "Trusted input").
fn trusted_comparable(bodies: &[&[u8]]) -> bool {
    !bodies.is_empty()
        && bodies
            .iter()
            .all(|b| validate(b, LoneSurrogates::Replace).is_ok())
}

/// A live subscription's id, policy index and verdict one by one (`None` when it has none; the
/// code of the error when its filter cannot judge the message).
type Expected = (u64, usize, Option<Result<bool, ErrorCode>>);

/// Each live subscription in the order of first insertion (the set's order), with its policy
/// index and its verdict one by one (`None` when it has none).
fn expect(
    order: &[u64],
    live: &BTreeMap<u64, usize>,
    pool: &[Policy],
    mut verdict: impl FnMut(&Filter) -> Option<Result<bool, ErrorCode>>,
) -> Vec<Expected> {
    order
        .iter()
        .filter_map(|&id| {
            let p = *live.get(&id)?;
            let policy = pool.get(p)?;
            Some((id, p, verdict(&policy.filter)))
        })
        .collect()
}

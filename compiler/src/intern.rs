//! Filter interning: identical filters are compiled into one shared [`Filter`] and checked once
//! per message (seed `004_0db22b3017d8b844.txt`: "Identical filters are interned and checked once
//! per record, with the result shared by every subscriber holding that filter").
//!
//! # What counts as identical
//!
//! Two filters are identical when they have the same [`FilterIdentity`]:
//!
//! - the same dialect;
//! - the same [`Options`] (typed, so `{}` and `{"scope": "MessageAttributes"}` are the same
//!   options);
//! - the same **optimized IR** in a canonical text: origins (JSON Pointers, text spans) left out,
//!   and the children of every `and`/`or` sorted and de-duplicated (both are commutative and
//!   idempotent, and tests have no side effects). A filter loaded from bytes carries its IR and
//!   interns like the filter it was written from; one from the first wire format has none, and its
//!   program's encoding, origins left out, stands in for it, so such filters intern with each
//!   other only when their programs are the same.
//!
//! So two spellings of one filter intern together: the stream dialect's JSON form and its text
//! form, clauses or groups written in another order, `in [a, b]` and `in [b, a]`, a literal
//! pattern written as `=` or as a one-entry `in`. Filters that differ only in meaning never do. A
//! shared filter keeps the origins and options of the first spelling compiled.
//!
//! # Lifetime
//!
//! The interner holds [`Weak`] references: a filter is released when its last holder drops its
//! [`Arc`], and the dead entry is pruned on a later [`FilterInterner::intern`] (amortized) or by
//! [`FilterInterner::purge`]. [`FilterInterner::len`] counts live filters only.
//!
//! [`InternedSet`] evaluates a set of subscribers that hold interned filters: each distinct filter
//! runs once per message and its verdict fans out to every subscriber holding it.

use crate::dialect::Dialect;
use crate::error::CompileError;
use crate::ir::{Node, NodeKind};
use crate::options::Options;
use crate::{Evaluator, Filter, compile_value};
use ahash::AHashMap;
use filtervm_vm::json::Value;
use filtervm_vm::message::Message;
use std::fmt::Write as _;
use std::sync::{Arc, Weak};

/// What makes two compiled filters the same (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FilterIdentity {
    dialect: Dialect,
    options: String,
    ir: String,
}

impl FilterIdentity {
    /// The identity of a compiled filter.
    pub fn of(filter: &Filter) -> FilterIdentity {
        FilterIdentity {
            dialect: filter.dialect(),
            options: canonical_options(filter.options()),
            ir: filter.ir().map_or_else(
                || crate::wire::program_identity(filter.program()),
                canonical_ir,
            ),
        }
    }

    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The canonical options text ([`canonical_options`]).
    pub fn options_text(&self) -> &str {
        &self.options
    }

    /// The canonical IR text (no origins, `and`/`or` children sorted).
    pub fn ir_text(&self) -> &str {
        &self.ir
    }
}

/// Options as canonical JSON text: every option written out ([`Options::to_json`]), so equal
/// options give equal texts whatever JSON they were read from.
pub fn canonical_options(options: &Options) -> String {
    options.to_json().to_string()
}

/// The canonical text of an IR tree: no origins; `and`/`or` children sorted and de-duplicated.
pub fn canonical_ir(node: &Node) -> String {
    match &node.kind {
        NodeKind::True => "true".to_owned(),
        NodeKind::False => "false".to_owned(),
        NodeKind::Test(t) => {
            let mut s = String::new();
            let _ = write!(s, "({} {})", t.key, t.pred);
            s
        }
        NodeKind::Not(child) => format!("not{}", canonical_ir(child)),
        NodeKind::And(children) | NodeKind::Or(children) => {
            let mut parts: Vec<String> = children.iter().map(canonical_ir).collect();
            parts.sort();
            parts.dedup();
            let head = if matches!(node.kind, NodeKind::And(_)) {
                "and"
            } else {
                "or"
            };
            format!("{head}[{}]", parts.join(","))
        }
    }
}

/// Interns compiled filters so that identical filters share one [`Arc<Filter>`].
///
/// ```
/// use filtervm_compiler::intern::FilterInterner;
/// use filtervm_compiler::{Dialect, Options};
/// use filtervm_vm::json::{self, Value};
/// use std::sync::Arc;
///
/// let mut interner = FilterInterner::new();
/// let text = Value::from("region = eu-* and tier = gold");
/// let a = interner.intern(Dialect::Stream, &text, &Options::Stream).unwrap();
/// let b = interner.intern(Dialect::Stream, &json::parse(br#"{"groups": [[
///     {"op": "=", "header": "tier", "values": ["gold"]},
///     {"op": "=", "header": "region", "values": ["eu-*"]}
/// ]]}"#).unwrap(), &Options::Stream).unwrap();
/// assert!(Arc::ptr_eq(&a, &b));
/// assert_eq!(interner.len(), 1);
/// drop((a, b));
/// assert_eq!(interner.len(), 0);
/// ```
#[derive(Debug, Default)]
pub struct FilterInterner {
    filters: AHashMap<FilterIdentity, Weak<Filter>>,
    prune_at: usize,
}

impl FilterInterner {
    /// An empty interner.
    pub fn new() -> FilterInterner {
        FilterInterner::default()
    }

    /// Compiles a policy and returns the shared filter identical to it (compiling it the first
    /// time it is seen).
    pub fn intern(
        &mut self,
        dialect: Dialect,
        policy: &Value,
        options: &Options,
    ) -> Result<Arc<Filter>, CompileError> {
        let filter = compile_value(dialect, policy, options)?;
        Ok(self.intern_filter(filter))
    }

    /// Returns the shared filter identical to `filter`, or shares `filter` itself.
    pub fn intern_filter(&mut self, filter: Filter) -> Arc<Filter> {
        let id = FilterIdentity::of(&filter);
        if let Some(existing) = self.filters.get(&id).and_then(Weak::upgrade) {
            return existing;
        }
        let shared = Arc::new(filter);
        self.filters.insert(id, Arc::downgrade(&shared));
        if self.filters.len() >= self.prune_at {
            self.purge();
            self.prune_at = self.filters.len().saturating_mul(2).max(16);
        }
        shared
    }

    /// The live shared filter with this identity, if any.
    pub fn get(&self, id: &FilterIdentity) -> Option<Arc<Filter>> {
        self.filters.get(id).and_then(Weak::upgrade)
    }

    /// The number of distinct live filters.
    pub fn len(&self) -> usize {
        self.filters
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }

    /// Whether no live filter is interned.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets filters whose last holder has dropped them.
    pub fn purge(&mut self) {
        self.filters.retain(|_, w| w.strong_count() > 0);
    }
}

/// A subscriber id.
pub type SubId = u64;

/// One distinct filter and the subscribers holding it.
#[derive(Debug)]
struct Shared {
    filter: Arc<Filter>,
    subs: Vec<SubId>,
}

/// Subscribers holding interned filters, evaluated so that each distinct filter (the same
/// [`Arc`]) runs once per message and its verdict is shared by all its subscribers.
///
/// Filters are distinct by pointer: intern them with one [`FilterInterner`] first so identical
/// filters are one [`Arc`].
#[derive(Debug, Default)]
pub struct InternedSet {
    shared: Vec<Shared>,
    /// `Arc` address → index in `shared`.
    by_filter: AHashMap<usize, usize>,
    /// Subscriber → (index in `shared`, position in its `subs`).
    by_sub: AHashMap<SubId, (usize, usize)>,
    evaluator: Evaluator,
    evaluations: u64,
}

fn address(filter: &Arc<Filter>) -> usize {
    Arc::as_ptr(filter) as usize
}

impl InternedSet {
    /// An empty set.
    pub fn new() -> InternedSet {
        InternedSet::default()
    }

    /// Adds a subscriber holding `filter`; a subscriber already present is moved to `filter`.
    pub fn add(&mut self, sub: SubId, filter: Arc<Filter>) {
        self.remove(sub);
        let i = match self.by_filter.get(&address(&filter)) {
            Some(&i) => i,
            None => {
                let i = self.shared.len();
                self.by_filter.insert(address(&filter), i);
                self.shared.push(Shared {
                    filter,
                    subs: Vec::new(),
                });
                i
            }
        };
        if let Some(shared) = self.shared.get_mut(i) {
            self.by_sub.insert(sub, (i, shared.subs.len()));
            shared.subs.push(sub);
        }
    }

    /// Removes a subscriber; returns whether it was present. A filter no subscriber holds any
    /// more is dropped from the set (releasing the set's reference).
    pub fn remove(&mut self, sub: SubId) -> bool {
        let Some((i, pos)) = self.by_sub.remove(&sub) else {
            return false;
        };
        let Some(shared) = self.shared.get_mut(i) else {
            return true;
        };
        shared.subs.swap_remove(pos);
        if let Some(&moved) = shared.subs.get(pos) {
            self.by_sub.insert(moved, (i, pos));
        }
        if shared.subs.is_empty() {
            let gone = self.shared.swap_remove(i);
            self.by_filter.remove(&address(&gone.filter));
            if let Some(moved) = self.shared.get(i) {
                self.by_filter.insert(address(&moved.filter), i);
                for (p, s) in moved.subs.iter().enumerate() {
                    self.by_sub.insert(*s, (i, p));
                }
            }
        }
        true
    }

    /// The number of subscribers.
    pub fn len(&self) -> usize {
        self.by_sub.len()
    }

    /// Whether the set has no subscribers.
    pub fn is_empty(&self) -> bool {
        self.by_sub.is_empty()
    }

    /// The number of distinct filters held.
    pub fn distinct_filters(&self) -> usize {
        self.shared.len()
    }

    /// How many filter evaluations [`InternedSet::matching`] has run so far.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// The subscribers whose filter matches `message`, in ascending order. Each distinct filter is
    /// evaluated once.
    pub fn matching(&mut self, message: &Message) -> Vec<SubId> {
        let mut out = Vec::new();
        for shared in &self.shared {
            self.evaluations = self.evaluations.saturating_add(1);
            if self.evaluator.matches(&shared.filter, message) {
                out.extend_from_slice(&shared.subs);
            }
        }
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stream(interner: &mut FilterInterner, policy: serde_json::Value) -> Arc<Filter> {
        match interner.intern(Dialect::Stream, &Value::from(&policy), &Options::Stream) {
            Ok(f) => f,
            Err(e) => panic!("{policy}: {e}"),
        }
    }

    #[test]
    fn identical_filters_share_one_arc() {
        let mut i = FilterInterner::new();
        let a = stream(&mut i, json!("region = eu-* and n >= 5"));
        let b = stream(&mut i, json!("region = eu-* and n >= 5"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(i.len(), 1);
        // Other spellings of the same filter: the JSON form, clause order, number spelling.
        let c = stream(
            &mut i,
            json!({"groups": [[{"op": ">=", "header": "n", "values": [5.0]},
                               {"op": "=", "header": "region", "values": ["eu-*"]}]]}),
        );
        assert!(Arc::ptr_eq(&a, &c));
        let d = stream(&mut i, json!("n >= 50e-1 and region = eu-*"));
        assert!(Arc::ptr_eq(&a, &d));
        assert_eq!(i.len(), 1);
        // `in` order and `=` as a one-entry `in`.
        let e = stream(&mut i, json!("h in [a, b]"));
        let f = stream(&mut i, json!("h in [b, a, a]"));
        assert!(Arc::ptr_eq(&e, &f));
        let g = stream(&mut i, json!("h = a"));
        let h = stream(&mut i, json!("h in [a]"));
        assert!(Arc::ptr_eq(&g, &h));
        assert_eq!(i.len(), 3);
    }

    #[test]
    fn different_filters_do_not_share() {
        let mut i = FilterInterner::new();
        let a = stream(&mut i, json!("region = eu-*"));
        let b = stream(&mut i, json!("region = eu-*."));
        let c = stream(&mut i, json!("region != eu-*"));
        let d = stream(&mut i, json!("Region = eu-*"));
        let e = stream(&mut i, json!("n > 5"));
        let f = stream(&mut i, json!("n >= 5"));
        assert!(!Arc::ptr_eq(&a, &b) && !Arc::ptr_eq(&a, &c) && !Arc::ptr_eq(&a, &d));
        assert!(!Arc::ptr_eq(&e, &f));
        assert_eq!(i.len(), 6);
    }

    #[test]
    fn released_when_the_last_holder_drops() {
        let mut i = FilterInterner::new();
        let a = stream(&mut i, json!("h exists"));
        let b = stream(&mut i, json!("h exists"));
        let weak = Arc::downgrade(&a);
        drop(a);
        assert_eq!(i.len(), 1, "b still holds it");
        drop(b);
        assert!(
            weak.upgrade().is_none(),
            "the interner holds no strong reference"
        );
        assert_eq!(i.len(), 0);
        assert!(i.is_empty());
        i.purge();
        assert!(i.filters.is_empty());
        let c = stream(&mut i, json!("h exists"));
        assert_eq!(i.len(), 1);
        assert!(i.get(&FilterIdentity::of(&c)).is_some());
    }

    #[test]
    fn dead_entries_are_pruned_while_interning() {
        let mut i = FilterInterner::new();
        for n in 0..1000 {
            let _dropped = stream(&mut i, json!(format!("h = v{n}")));
        }
        assert!(i.filters.len() <= 32, "{} entries kept", i.filters.len());
        assert_eq!(i.len(), 0);
    }

    #[test]
    fn options_compare_as_canonical_json() {
        let read = |text: &str| Options::from_json(Dialect::Sns, text).unwrap();
        assert_eq!(
            canonical_options(&read("null")),
            r#"{"scope":"MessageAttributes"}"#
        );
        assert_eq!(
            canonical_options(&read("{}")),
            canonical_options(&read(r#"{"scope": "MessageAttributes"}"#))
        );
        assert_ne!(
            canonical_options(&read("{}")),
            canonical_options(&read(r#"{"scope": "MessageBody"}"#))
        );
        assert_eq!(canonical_options(&Options::Stream), "{}");
        // Two spellings of the default options intern together.
        let mut i = FilterInterner::new();
        let policy = Value::from(&json!({"a": ["b"]}));
        let a = i.intern(Dialect::Sns, &policy, &read("{}")).unwrap();
        let b = i
            .intern(
                Dialect::Sns,
                &policy,
                &read(r#"{"scope": "MessageAttributes"}"#),
            )
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn seed_4096_subscribers_sharing_one_filter_cost_one_evaluation() {
        let mut i = FilterInterner::new();
        let mut set = InternedSet::new();
        for sub in 0..4096u64 {
            let f = stream(
                &mut i,
                json!("subject = orders.*.created and region = eu-*"),
            );
            set.add(sub, f);
        }
        assert_eq!(i.len(), 1);
        assert_eq!(set.distinct_filters(), 1);
        assert_eq!(set.len(), 4096);
        let hit = Message::headers([("subject", "orders.x.created"), ("region", "eu-west")]);
        let got = set.matching(&hit);
        assert_eq!(set.evaluations(), 1, "one distinct filter, one evaluation");
        assert_eq!(got.len(), 4096);
        assert_eq!(got, (0..4096u64).collect::<Vec<_>>());
        let miss = Message::headers([("subject", "orders.x.created")]);
        assert!(set.matching(&miss).is_empty());
        assert_eq!(set.evaluations(), 2);
    }

    #[test]
    fn set_fans_out_per_distinct_filter_and_removes() {
        let mut i = FilterInterner::new();
        let mut set = InternedSet::new();
        let eu = stream(&mut i, json!("region = eu-*"));
        let us = stream(&mut i, json!("region = us-*"));
        for sub in 0..10u64 {
            set.add(sub, if sub % 2 == 0 { eu.clone() } else { us.clone() });
        }
        assert_eq!(set.distinct_filters(), 2);
        let m = Message::headers([("region", "eu-west")]);
        assert_eq!(set.matching(&m), vec![0, 2, 4, 6, 8]);
        assert_eq!(set.evaluations(), 2);
        assert!(set.remove(4));
        assert!(!set.remove(4));
        assert_eq!(set.matching(&m), vec![0, 2, 6, 8]);
        // Moving a subscriber to another filter.
        set.add(1, eu.clone());
        assert_eq!(set.matching(&m), vec![0, 1, 2, 6, 8]);
        // Removing every holder of a filter drops it from the set.
        for sub in [0u64, 1, 2, 6, 8] {
            assert!(set.remove(sub));
        }
        assert_eq!(set.distinct_filters(), 1);
        assert!(set.matching(&m).is_empty());
        assert_eq!(
            set.matching(&Message::headers([("region", "us-east")])),
            vec![3, 5, 7, 9]
        );
        drop((eu, us));
        assert_eq!(i.len(), 1, "the set still holds the us filter");
        for sub in [3u64, 5, 7, 9] {
            set.remove(sub);
        }
        assert!(set.is_empty());
        assert_eq!(i.len(), 0);
    }
}

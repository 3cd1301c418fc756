//! Filter interning: identical filters are compiled into one shared [`Filter`] (seed
//! `004_0db22b3017d8b844.txt`: "Identical filters are interned and checked once per record, with
//! the result shared by every subscriber holding that filter"). A
//! [`SubscriptionSet`](crate::SubscriptionSet) interns the filters it holds by the same identity
//! itself: each distinct filter is stored and evaluated once per message, its verdict fanning out
//! to every id subscribed to it.
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

use crate::dialect::Dialect;
use crate::error::CompileError;
use crate::ir::{Node, NodeKind};
use crate::options::Options;
use crate::{Filter, compile_value};
use ahash::AHashMap;
use filtervm_vm::json::Value;
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
}

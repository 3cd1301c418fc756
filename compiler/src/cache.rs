//! Compiled filters by policy text ([`PolicyCache`]): a broker loading many subscriptions compiles
//! each distinct policy text once, and hands every subscription with that text the same
//! [`Filter`]. Above the compile functions ([`filter`](crate::filter)), beside the sets.
//!
//! Many subscriptions of a topic carry byte-identical policies (a popular tenant's
//! `{"tenant": ["t1"], "event": ["order.created"]}` is written by many subscribers); compiling
//! the text again gives a filter identical to the first one, so the cache gives the first one
//! back instead. The filter it gives is shared ([`Arc`]): inserting it into a
//! [`SubscriptionSet`](crate::SubscriptionSet) that already holds it is a lookup, not a walk of
//! its IR (see [`Filter`]'s identity). How much a load saves depends on how many of its texts
//! repeat (BENCHMARKS.md, "Loading a realistic topic").
//!
//! The key is the dialect's options (which name the dialect) and the text, byte for byte: two
//! texts that differ only in spacing or member order are compiled separately (they may give the
//! same program, which a set then shares by its code), and a text is never given a filter compiled
//! under other options or another dialect. Errors are not kept: a text that does not compile is
//! compiled (and refused) each time it is given.

use crate::dialect::Dialect;
use crate::error::CompileError;
use crate::filter::{Filter, compile_text};
use crate::options::Options;
use hashbrown::HashTable;
use std::sync::Arc;

/// One cached compile: the options and text it was compiled from, and the filter.
struct Cached {
    /// The hash of `(options, text)` (the table's key).
    hash: u64,
    options: Options,
    text: Box<str>,
    filter: Arc<Filter>,
}

/// Compiled filters by `(options, policy text)`, at most `capacity` of them (see the
/// [module documentation](self)).
///
/// The filters used least recently are dropped first, by halves: the cache keeps two
/// generations of at most `capacity / 2` entries each; when the young one is full, the old one is
/// dropped and the young one becomes old; a text found in the old generation moves to the young
/// one. So a text given again within the last `capacity / 2` distinct texts is always found.
/// [`PolicyCache::clear`] drops everything (a broker keeps a cache for a load, then clears it or
/// drops it: the filters it holds are the memory of their IR and programs, a few kilobytes each,
/// which a set does not keep).
///
/// ```
/// use filtervm_compiler::{Dialect, Options, PolicyCache, SnsScope, SubscriptionSet};
/// use std::sync::Arc;
///
/// let body = Options::from(SnsScope::MessageBody);
/// let mut cache = PolicyCache::new(10_000);
/// let mut set = SubscriptionSet::new();
/// for (id, text) in [r#"{"a": ["x"]}"#, r#"{"b": ["y"]}"#, r#"{"a": ["x"]}"#].iter().enumerate() {
///     let filter = cache.compile_text(Dialect::Sns, text, &body).unwrap();
///     set.insert(id as u64, &filter).unwrap();
/// }
/// assert_eq!((cache.hits(), cache.misses()), (1, 2));
/// assert_eq!(set.distinct_filters(), 2);
/// // The same text under other options is compiled again.
/// let attributes = Options::from(Dialect::Sns);
/// let a = cache.compile_text(Dialect::Sns, r#"{"a": ["x"]}"#, &attributes).unwrap();
/// let b = cache.compile_text(Dialect::Sns, r#"{"a": ["x"]}"#, &body).unwrap();
/// assert!(!Arc::ptr_eq(&a, &b));
/// ```
pub struct PolicyCache {
    young: HashTable<Cached>,
    old: HashTable<Cached>,
    /// The most entries one generation holds (at least 1).
    generation: usize,
    hasher: ahash::RandomState,
    hits: u64,
    misses: u64,
}

impl std::fmt::Debug for PolicyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyCache")
            .field("len", &self.len())
            .field("capacity", &(self.generation * 2))
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish()
    }
}

impl PolicyCache {
    /// An empty cache holding at most `capacity` filters (at least 2: one per generation).
    pub fn new(capacity: usize) -> PolicyCache {
        PolicyCache {
            young: HashTable::new(),
            old: HashTable::new(),
            generation: (capacity / 2).max(1),
            hasher: ahash::RandomState::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// The filter [`compile_text`] gives for `text`, compiled now or given before for the same
    /// `options` and text (then shared: the same [`Arc`]). Errors are [`compile_text`]'s, never
    /// kept.
    pub fn compile_text(
        &mut self,
        dialect: Dialect,
        text: &str,
        options: &Options,
    ) -> Result<Arc<Filter>, CompileError> {
        if options.dialect() != dialect {
            // compile_text refuses them (the options name the dialect the cache is keyed by).
            return compile_text(dialect, text, options).map(Arc::new);
        }
        let hash = self.hasher.hash_one((options, text));
        let same = |c: &Cached| c.hash == hash && &c.options == options && &*c.text == text;
        if let Some(found) = self.young.find(hash, same) {
            self.hits += 1;
            return Ok(Arc::clone(&found.filter));
        }
        if let Ok(entry) = self.old.find_entry(hash, same) {
            self.hits += 1;
            let (cached, _) = entry.remove();
            let filter = Arc::clone(&cached.filter);
            self.keep(cached);
            return Ok(filter);
        }
        self.misses += 1;
        let filter = Arc::new(compile_text(dialect, text, options)?);
        self.keep(Cached {
            hash,
            options: options.clone(),
            text: text.into(),
            filter: Arc::clone(&filter),
        });
        Ok(filter)
    }

    /// Puts `cached` (not in either generation) into the young generation, turning it old first
    /// when it is full.
    fn keep(&mut self, cached: Cached) {
        if self.young.len() >= self.generation {
            self.old = std::mem::take(&mut self.young);
        }
        self.young
            .insert_unique(cached.hash, cached, |c: &Cached| c.hash);
    }

    /// The number of filters held.
    pub fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    /// Whether the cache holds no filter.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every filter held (the hit and miss counts stay).
    pub fn clear(&mut self) {
        self.young = HashTable::new();
        self.old = HashTable::new();
    }

    /// How many [`PolicyCache::compile_text`] calls gave a filter held already.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// How many [`PolicyCache::compile_text`] calls compiled (including those that failed).
    pub fn misses(&self) -> u64 {
        self.misses
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::options::SnsScope;
    use crate::parts::MessageParts;
    use crate::subscriptions::{SetScratch, SubscriptionSet};

    const A: &str = r#"{"a": ["x"]}"#;

    #[test]
    fn a_text_given_again_is_the_same_filter_and_compiles_as_compile_text_does() {
        let body = Options::from(SnsScope::MessageBody);
        let mut cache = PolicyCache::new(8);
        let first = cache.compile_text(Dialect::Sns, A, &body).unwrap();
        let again = cache.compile_text(Dialect::Sns, A, &body).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!((cache.hits(), cache.misses(), cache.len()), (1, 1, 1));
        let fresh = compile_text(Dialect::Sns, A, &body).unwrap();
        assert_eq!(first.to_bytes(), fresh.to_bytes());
        assert_eq!(first.options(), &body);
    }

    #[test]
    fn other_options_dialects_and_texts_never_share() {
        let mut cache = PolicyCache::new(100);
        let body = Options::from(SnsScope::MessageBody);
        let attributes = Options::from(Dialect::Sns);
        let basaltic = Options::from(Dialect::Basaltic);
        let in_body = cache.compile_text(Dialect::Sns, A, &body).unwrap();
        let in_attributes = cache.compile_text(Dialect::Sns, A, &attributes).unwrap();
        let as_basaltic = cache.compile_text(Dialect::Basaltic, A, &basaltic).unwrap();
        // The same text, spaced otherwise: compiled again (the program is the same).
        let spaced = cache
            .compile_text(Dialect::Sns, r#"{"a":["x"]}"#, &body)
            .unwrap();
        assert_eq!(cache.hits(), 0);
        assert_eq!(cache.len(), 4);
        assert_eq!(in_attributes.options(), &attributes);
        assert_eq!(as_basaltic.options(), &basaltic);
        assert_eq!(in_body.options(), &body);
        assert!(!Arc::ptr_eq(&in_body, &spaced));
        assert_eq!(in_body.program().code(), spaced.program().code());
        // A dialect its options do not name is refused, as compile_text refuses it, and not kept.
        let e = cache.compile_text(Dialect::Basaltic, A, &body).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidOptions));
        assert_eq!(cache.len(), 4);
    }

    #[test]
    fn errors_are_given_each_time_and_not_kept() {
        let mut cache = PolicyCache::new(8);
        let sns = Options::from(Dialect::Sns);
        for _ in 0..2 {
            let e = cache.compile_text(Dialect::Sns, "{", &sns).unwrap_err();
            assert_eq!(e.code(), Some(ErrorCode::SnsSyntaxError));
        }
        assert_eq!((cache.hits(), cache.misses(), cache.len()), (0, 2, 0));
    }

    #[test]
    fn it_holds_at_most_its_capacity_and_keeps_the_recently_used() {
        let sns = Options::from(Dialect::Sns);
        let text = |i: usize| format!(r#"{{"k{i}": ["v"]}}"#);
        let mut cache = PolicyCache::new(4);
        let kept = cache.compile_text(Dialect::Sns, &text(0), &sns).unwrap();
        for i in 1..20 {
            cache.compile_text(Dialect::Sns, &text(i), &sns).unwrap();
            assert!(cache.len() <= 4, "{} held", cache.len());
            // Text 0, used after every other text, is never dropped.
            let again = cache.compile_text(Dialect::Sns, &text(0), &sns).unwrap();
            assert!(Arc::ptr_eq(&kept, &again), "text 0 compiled again at {i}");
        }
        // Text 1 was dropped long ago: compiled again.
        let misses = cache.misses();
        cache.compile_text(Dialect::Sns, &text(1), &sns).unwrap();
        assert_eq!(cache.misses(), misses + 1);
        cache.clear();
        assert!(cache.is_empty());
        let after = cache.compile_text(Dialect::Sns, &text(0), &sns).unwrap();
        assert!(!Arc::ptr_eq(&kept, &after));
    }

    #[test]
    fn a_set_given_the_same_filter_again_delivers_as_with_fresh_compiles() {
        let body = Options::from(SnsScope::MessageBody);
        let texts = [
            r#"{"tenant": ["t1"], "event": ["order.paid"]}"#,
            r#"{"tenant": ["t2"]}"#,
            r#"{"tenant": ["t1"], "event": ["order.paid"]}"#,
            r#"{"tenant": ["t1"], "event": [{"prefix": "order."}]}"#,
            r#"{"tenant": ["t2"]}"#,
            // The same program as the first text, written otherwise.
            r#"{"event": ["order.paid"], "tenant": ["t1"]}"#,
            r#"{"tenant": ["t1"], "event": ["order.paid"]}"#,
        ];
        let mut cache = PolicyCache::new(100);
        let mut shared = SubscriptionSet::new();
        let mut fresh = SubscriptionSet::new();
        for (id, text) in texts.iter().enumerate() {
            let filter = cache.compile_text(Dialect::Sns, text, &body).unwrap();
            shared.insert(id as u64, &filter).unwrap();
            fresh
                .insert(id as u64, &compile_text(Dialect::Sns, text, &body).unwrap())
                .unwrap();
        }
        assert_eq!(cache.hits(), 3);
        assert_eq!(shared.distinct_filters(), 3);
        assert_eq!(fresh.distinct_filters(), 3);
        assert_eq!(shared.to_bytes(), fresh.to_bytes());
        // Removing and replacing subscriptions of a shared filter leaves the others delivered.
        assert!(shared.remove(&0));
        assert!(fresh.remove(&0));
        let other = cache.compile_text(Dialect::Sns, texts[1], &body).unwrap();
        shared.insert(2, &other).unwrap();
        fresh
            .insert(2, &compile_text(Dialect::Sns, texts[1], &body).unwrap())
            .unwrap();
        let mut scratch = SetScratch::new();
        for message in [
            r#"{"tenant": "t1", "event": "order.paid"}"#,
            r#"{"tenant": "t2", "event": "order.paid"}"#,
            r#"{"tenant": "t1", "event": "order.sent"}"#,
        ] {
            let parts = MessageParts::body(message.as_bytes());
            let a: Vec<u64> = shared
                .matching(&mut scratch, &parts)
                .ids()
                .copied()
                .collect();
            let b: Vec<u64> = fresh
                .matching(&mut scratch, &parts)
                .ids()
                .copied()
                .collect();
            assert_eq!(a, b, "{message}");
        }
        assert_eq!(shared.to_bytes(), fresh.to_bytes());
    }
}

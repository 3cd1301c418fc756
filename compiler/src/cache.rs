//! Loading many subscriptions without compiling a policy text twice ([`PolicyCache`]): a broker
//! restoring a topic inserts each subscription's policy text through the cache, which compiles a
//! text only when the set does not already hold the filter compiled from it. On top, beside the
//! set it serves ([`subscriptions`](crate::subscriptions)).
//!
//! Many subscriptions of a topic carry byte-identical policies (a popular tenant's
//! `{"tenant": ["t1"], "event": ["order.created"]}` is written by many subscribers). Compiling
//! the text again gives a filter with the same program, which the set would find and share
//! anyway, after interning its tests again; the cache skips both: it remembers, per text, the
//! identity of the filter compiled from it ([`Filter`](crate::Filter)'s identity), and a set that holds that
//! filter subscribes the new id to it directly. How much a load saves depends on how many of its
//! texts repeat (BENCHMARKS.md, "Loading a realistic topic").
//!
//! A text the cache does compile is compiled only as far as the set reads it: validated,
//! lowered and optimized, with no program generated (nor dropped), since the set builds its own
//! code from the optimized IR. The set it gives is byte for byte the one `compile_text` and
//! `insert` give, and so are the errors (an `eventbridge` text, whose kept pattern depends on its
//! program, is compiled whole).
//!
//! The cache holds texts, not filters: a filter is dropped once inserted, as when compiling
//! without the cache (holding the filters of a large topic would take kilobytes each). The key
//! is the dialect's options (which name the dialect) and the text, byte for byte: two texts that
//! differ only in spacing or member order are compiled separately (they may give the same
//! program, which the set then shares by its code), and a text is never given a filter compiled
//! under other options. Errors are not kept: a text that does not compile is compiled (and
//! refused) each time it is given. A cache may serve several sets: a set that does not hold a
//! text's filter compiles it (and the cache then remembers the new filter, so the other set will
//! compile that text again once).

use crate::dialect::Dialect;
use crate::error::CompileError;
use crate::filter::{compile_text, next_identity, optimized_ir};
use crate::options::Options;
use crate::set::InsertError;
use crate::subscriptions::{Insertion, SubscriptionSet};
use hashbrown::HashTable;
use std::fmt;
use std::hash::Hash;

/// One remembered text: the options and text compiled, and the identity of the filter.
struct Cached {
    /// The hash of `(options, text)` (the table's key).
    hash: u64,
    options: Options,
    text: Box<str>,
    identity: u64,
}

/// Why [`PolicyCache::insert`] did not insert a subscription (the set is unchanged).
#[derive(Debug)]
pub enum CachedInsertError {
    /// The text does not compile.
    Compile(CompileError),
    /// The set refused the filter ([`SubscriptionSet::insert`]).
    Insert(InsertError),
}

impl fmt::Display for CachedInsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CachedInsertError::Compile(e) => e.fmt(f),
            CachedInsertError::Insert(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CachedInsertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CachedInsertError::Compile(e) => Some(e),
            CachedInsertError::Insert(e) => Some(e),
        }
    }
}

/// The policy texts given to [`PolicyCache::insert`], each with the filter compiled from it, at
/// most `capacity` of them (see the [module documentation](self)).
///
/// The texts used least recently are forgotten first, by halves: the cache keeps two
/// generations of at most `capacity / 2` texts each; when the young one is full, the old one is
/// dropped and the young one becomes old; a text found in the old generation moves to the young
/// one. So a text given again within the last `capacity / 2` distinct texts is always found. Each
/// text costs its length and about 70 bytes; [`PolicyCache::clear`] forgets everything (a broker
/// keeps a cache for a load, then drops it, or keeps it for the texts it will be given again).
///
/// ```
/// use filtervm_compiler::{Dialect, Options, PolicyCache, SnsScope, SubscriptionSet};
///
/// let body = Options::from(SnsScope::MessageBody);
/// let mut cache = PolicyCache::new(10_000);
/// let mut set = SubscriptionSet::new();
/// for (id, text) in [r#"{"a": ["x"]}"#, r#"{"b": ["y"]}"#, r#"{"a": ["x"]}"#].iter().enumerate() {
///     cache.insert(&mut set, id as u64, Dialect::Sns, text, &body).unwrap();
/// }
/// // The third subscription shares the first one's filter, compiled once.
/// assert_eq!((cache.hits(), cache.misses()), (1, 2));
/// assert_eq!((set.len(), set.distinct_filters()), (3, 2));
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

impl fmt::Debug for PolicyCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyCache")
            .field("len", &self.len())
            .field("capacity", &(self.generation * 2))
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish()
    }
}

impl PolicyCache {
    /// An empty cache remembering at most `capacity` texts (at least 2: one per generation).
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

    /// Adds subscription `id` to `set` (or replaces its filter) with the filter of policy `text`,
    /// as `set.insert(id, &compile_text(dialect, text, options)?)` does: without compiling when
    /// the cache was given this text with these options before and `set` still holds the filter
    /// compiled then. On error the set is unchanged.
    pub fn insert<Id: Eq + Hash + Clone>(
        &mut self,
        set: &mut SubscriptionSet<Id>,
        id: Id,
        dialect: Dialect,
        text: &str,
        options: &Options,
    ) -> Result<Insertion, CachedInsertError> {
        let hash = self.hasher.hash_one((options, text));
        let mut id = id;
        if options.dialect() == dialect
            && let Some(identity) = self.find(hash, options, text)
        {
            match set.insert_held(id, options, identity) {
                Ok(inserted) => {
                    self.hits += 1;
                    return inserted.map_err(CachedInsertError::Insert);
                }
                // The set no longer holds that filter (or never did): compile.
                Err(back) => id = back,
            }
        }
        self.misses += 1;
        let (inserted, identity) = if dialect == Dialect::EventBridge {
            let filter =
                compile_text(dialect, text, options).map_err(CachedInsertError::Compile)?;
            let inserted = set
                .insert_filter(id, &filter, true)
                .map_err(CachedInsertError::Insert)?;
            // A filter with a kept pattern is compiled each time: the set keeps its pattern
            // per subscription, from the filter.
            (
                inserted,
                filter.pattern().is_none().then(|| filter.identity()),
            )
        } else {
            // The set builds its code from the optimized IR: no program is generated (nor
            // dropped) for it.
            let ir = optimized_ir(dialect, text, options).map_err(CachedInsertError::Compile)?;
            let identity = next_identity();
            let inserted = set
                .insert_ir(id, options, &ir, identity)
                .map_err(CachedInsertError::Insert)?;
            (inserted, Some(identity))
        };
        if let Some(identity) = identity {
            self.remember(Cached {
                hash,
                options: options.clone(),
                text: text.into(),
                identity,
            });
        }
        Ok(inserted)
    }

    /// The identity remembered for `(options, text)`, moving it to the young generation.
    fn find(&mut self, hash: u64, options: &Options, text: &str) -> Option<u64> {
        let same = |c: &Cached| c.hash == hash && c.options == *options && &*c.text == text;
        if let Some(found) = self.young.find(hash, same) {
            return Some(found.identity);
        }
        let (cached, _) = self.old.find_entry(hash, same).ok()?.remove();
        let identity = cached.identity;
        self.remember(cached);
        Some(identity)
    }

    /// Puts `cached` (in neither generation, or a newer filter for a text in the young one) into
    /// the young generation, turning it old first when it is full.
    fn remember(&mut self, cached: Cached) {
        let same = |c: &Cached| {
            c.hash == cached.hash && c.options == cached.options && c.text == cached.text
        };
        if let Some(found) = self.young.find_mut(cached.hash, same) {
            found.identity = cached.identity;
            return;
        }
        if let Ok(found) = self.old.find_entry(cached.hash, same) {
            found.remove();
        }
        if self.young.len() >= self.generation {
            self.old = std::mem::take(&mut self.young);
        }
        self.young
            .insert_unique(cached.hash, cached, |c: &Cached| c.hash);
    }

    /// The number of texts remembered.
    pub fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    /// Whether the cache remembers no text.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every text (the hit and miss counts stay).
    pub fn clear(&mut self) {
        self.young = HashTable::new();
        self.old = HashTable::new();
    }

    /// How many [`PolicyCache::insert`] calls inserted without compiling.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// How many [`PolicyCache::insert`] calls compiled (including those that failed).
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
    use crate::subscriptions::SetScratch;

    const TEXTS: [&str; 7] = [
        r#"{"tenant": ["t1"], "event": ["order.paid"]}"#,
        r#"{"tenant": ["t2"]}"#,
        r#"{"tenant": ["t1"], "event": ["order.paid"]}"#,
        r#"{"tenant": ["t1"], "event": [{"prefix": "order."}]}"#,
        r#"{"tenant": ["t2"]}"#,
        // The same program as the first text, written otherwise.
        r#"{"event": ["order.paid"], "tenant": ["t1"]}"#,
        r#"{"tenant": ["t1"], "event": ["order.paid"]}"#,
    ];

    const MESSAGES: [&str; 4] = [
        r#"{"tenant": "t1", "event": "order.paid"}"#,
        r#"{"tenant": "t2", "event": "order.paid"}"#,
        r#"{"tenant": "t1", "event": "order.sent"}"#,
        r#"{"tenant": "t3"}"#,
    ];

    fn body() -> Options {
        Options::from(SnsScope::MessageBody)
    }

    /// The ids of `set` that `message` (a JSON body) matches.
    fn matching(set: &SubscriptionSet<u64>, message: &str) -> Vec<u64> {
        let parts = MessageParts::body(message.as_bytes());
        let mut scratch = SetScratch::new();
        set.matching(&mut scratch, &parts).ids().copied().collect()
    }

    /// A set of `TEXTS` inserted one by one, each compiled.
    fn compiled(ids: impl Iterator<Item = (u64, &'static str)>) -> SubscriptionSet<u64> {
        let mut set = SubscriptionSet::new();
        for (id, text) in ids {
            set.insert(id, &compile_text(Dialect::Sns, text, &body()).unwrap())
                .unwrap();
        }
        set
    }

    #[test]
    fn a_text_given_again_is_not_compiled_and_the_set_is_as_if_it_were() {
        let mut cache = PolicyCache::new(100);
        let mut set = SubscriptionSet::new();
        for (id, text) in TEXTS.iter().enumerate() {
            cache
                .insert(&mut set, id as u64, Dialect::Sns, text, &body())
                .unwrap();
        }
        assert_eq!((cache.hits(), cache.misses(), cache.len()), (3, 4, 4));
        let fresh = compiled(TEXTS.iter().enumerate().map(|(i, t)| (i as u64, *t)));
        assert_eq!(set.distinct_filters(), 3);
        assert_eq!(set.to_bytes(), fresh.to_bytes());
        for message in MESSAGES {
            assert_eq!(
                matching(&set, message),
                matching(&fresh, message),
                "{message}"
            );
        }
        assert_eq!(matching(&set, MESSAGES[0]), [0, 2, 3, 5, 6]);
        // Replacing a subscription's filter through the cache keeps its place.
        let replaced = cache
            .insert(&mut set, 0, Dialect::Sns, TEXTS[1], &body())
            .unwrap();
        assert_eq!(replaced, Insertion::Replaced);
        assert_eq!(cache.hits(), 4);
        assert_eq!(matching(&set, MESSAGES[1]), [0, 1, 4]);
    }

    #[test]
    fn a_filter_the_set_let_go_is_compiled_again() {
        let mut cache = PolicyCache::new(100);
        let mut set = SubscriptionSet::new();
        cache
            .insert(&mut set, 1, Dialect::Sns, TEXTS[1], &body())
            .unwrap();
        assert!(set.remove(&1));
        assert_eq!(set.distinct_filters(), 0);
        cache
            .insert(&mut set, 2, Dialect::Sns, TEXTS[1], &body())
            .unwrap();
        assert_eq!((cache.hits(), cache.misses()), (0, 2));
        assert_eq!(matching(&set, MESSAGES[1]), [2]);
        // Another set the cache serves compiles the text once, then finds it.
        let mut other = SubscriptionSet::new();
        for id in [7, 8] {
            cache
                .insert(&mut other, id, Dialect::Sns, TEXTS[1], &body())
                .unwrap();
        }
        assert_eq!((cache.hits(), cache.misses()), (1, 3));
        assert_eq!(matching(&other, MESSAGES[1]), [7, 8]);
        assert_eq!(matching(&set, MESSAGES[1]), [2]);
    }

    #[test]
    fn other_options_dialects_and_texts_never_share() {
        let mut cache = PolicyCache::new(100);
        let mut set = SubscriptionSet::new();
        let a = r#"{"a": ["x"]}"#;
        let attributes = Options::from(Dialect::Sns);
        let basaltic = Options::from(Dialect::Basaltic);
        cache.insert(&mut set, 0, Dialect::Sns, a, &body()).unwrap();
        cache
            .insert(&mut set, 1, Dialect::Sns, a, &attributes)
            .unwrap();
        cache
            .insert(&mut set, 2, Dialect::Basaltic, a, &basaltic)
            .unwrap();
        // The same text, spaced otherwise: compiled again (the set shares the program).
        cache
            .insert(&mut set, 3, Dialect::Sns, r#"{"a":["x"]}"#, &body())
            .unwrap();
        assert_eq!((cache.hits(), cache.misses(), cache.len()), (0, 4, 4));
        assert_eq!(set.groups(), 3);
        assert_eq!(set.distinct_filters(), 3);
        assert_eq!(matching(&set, r#"{"a": "x"}"#), [0, 3]);
        // A dialect its options do not name is refused as compile_text refuses it; not kept.
        let e = cache
            .insert(&mut set, 4, Dialect::Basaltic, a, &body())
            .unwrap_err();
        let CachedInsertError::Compile(e) = e else {
            panic!("{e:?}")
        };
        assert_eq!(e.code(), Some(ErrorCode::InvalidOptions));
        assert_eq!((cache.len(), set.len()), (4, 4));
    }

    #[test]
    fn errors_are_given_each_time_and_not_kept() {
        let mut cache = PolicyCache::new(8);
        let mut set = SubscriptionSet::<u64>::new();
        for id in 0..2 {
            let e = cache
                .insert(&mut set, id, Dialect::Sns, "{", &body())
                .unwrap_err();
            assert!(
                e.to_string().contains("SNS") || e.to_string().contains("JSON"),
                "{e}"
            );
            let CachedInsertError::Compile(e) = e else {
                panic!("{e:?}")
            };
            assert_eq!(e.code(), Some(ErrorCode::SnsSyntaxError));
        }
        assert_eq!((cache.hits(), cache.misses(), cache.len()), (0, 2, 0));
        assert!(set.is_empty());
    }

    #[test]
    fn it_holds_at_most_its_capacity_and_keeps_the_recently_used() {
        let text = |i: usize| format!(r#"{{"k{i}": ["v"]}}"#);
        let mut cache = PolicyCache::new(4);
        let mut set = SubscriptionSet::new();
        let mut id = 0u64;
        let mut insert = |cache: &mut PolicyCache, i: usize| {
            id += 1;
            cache
                .insert(&mut set, id, Dialect::Sns, &text(i), &body())
                .unwrap();
        };
        insert(&mut cache, 0);
        for i in 1..20 {
            insert(&mut cache, i);
            assert!(cache.len() <= 4, "{} held", cache.len());
            // Text 0, given after every other text, is never compiled again.
            let misses = cache.misses();
            insert(&mut cache, 0);
            assert_eq!(cache.misses(), misses, "text 0 compiled again at {i}");
        }
        // Text 1 was forgotten long ago: compiled again.
        let misses = cache.misses();
        insert(&mut cache, 1);
        assert_eq!(cache.misses(), misses + 1);
        cache.clear();
        assert!(cache.is_empty());
        insert(&mut cache, 0);
        assert_eq!(cache.misses(), misses + 2);
    }

    #[test]
    fn eventbridge_filters_that_keep_their_pattern_are_compiled_each_time() {
        let eb = Options::from(Dialect::EventBridge);
        let kept = r#"{"r": {"b": ["y"], "c": [{"exists": false}]}}"#;
        let plain = r#"{"r": {"b": ["y"]}}"#;
        let mut cache = PolicyCache::new(100);
        let mut set = SubscriptionSet::new();
        for (id, text) in [kept, plain, kept, plain].iter().enumerate() {
            cache
                .insert(&mut set, id as u64, Dialect::EventBridge, text, &eb)
                .unwrap();
        }
        assert_eq!((cache.hits(), cache.misses()), (1, 3));
        // Judged exactly on the kept pattern for both of its subscriptions (EB-8): "y" fixes
        // element 1 of `r`, where `r.c` is absent.
        let event = r#"{"r": [{"c": 1}, {"b": "y"}], "r": {"b": "q"}}"#;
        assert_eq!(matching(&set, event), [0, 1, 2, 3]);
        let event = r#"{"r": [{"c": 1}, {"b": "x"}], "r.b": "y"}"#;
        assert_eq!(matching(&set, event), [1, 3]);
    }
}

//! Many subscriptions matched together: [`SubscriptionSet`] and, for sets that change while
//! messages flow, [`LiveSet`].

use crate::filter::{Filter, Message, Repr};
use filtervm_compiler as compiler;
use filtervm_vm::message::{Attributes, Headers};
use std::fmt;
use std::hash::Hash;

pub use filtervm_compiler::{
    Applied, CachedInsertError, InsertError, Insertion, Matches, MatchingIds, PolicyCache,
    SET_FORMAT_VERSION, SetId, SetLoadError, SetScratch, UnjudgedError, UnjudgedGroup,
};

/// Subscriptions of every dialect and option set in one structure, keyed by the embedder's own
/// ids (`String`, `u64`, a struct: any `Eq + Hash + Clone` type).
///
/// A message is read once per group of subscriptions with the same dialect and options; their
/// filters share tests, an equality index and one key table, so a message costs far less than
/// matching each filter in turn. Identical filters are stored and evaluated once however many
/// ids subscribe to them. Matching takes `&self` (any number of threads at once, each with its
/// own [`SetScratch`]); for a set that changes while it is matched, see [`LiveSet`].
///
/// ```
/// use filtervm::{Dialect, Filter, Message, SetScratch, SnsScope, SubscriptionSet};
///
/// let mut set = SubscriptionSet::new();
/// set.insert("eu-orders", &Filter::new(SnsScope::MessageBody, r#"{"region": [{"prefix": "eu-"}]}"#)?)?;
/// set.insert("big-orders", &Filter::new(Dialect::Sns, r#"{"total": [{"numeric": [">", 100]}]}"#)?)?;
/// set.insert("audit", &Filter::new(Dialect::Stream, "source = billing")?)?;
///
/// // An SNS notification as delivered: its body and its attributes; no headers.
/// let delivered = br#"{"Type": "Notification", "Message": "{\"region\": \"eu-west-1\"}",
///     "MessageAttributes": {"total": {"Type": "Number", "Value": "250"}}}"#;
/// let mut scratch = SetScratch::new();
/// let matches = set.matching(&mut scratch, &Message::json(delivered));
/// assert_eq!(matches.ids().collect::<Vec<_>>(), [&"eu-orders", &"big-orders"]);
/// // The stream subscription could not judge a message without headers: reported, not dropped.
/// assert!(!matches.is_complete());
/// assert_eq!(matches.unjudged().next().map(|g| g.subscriptions), Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct SubscriptionSet<Id> {
    inner: compiler::SubscriptionSet<Id>,
}

impl<Id: fmt::Debug> fmt::Debug for SubscriptionSet<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<Id: SetId> SubscriptionSet<Id> {
    /// Saves the whole set — its groups, shared tests, filter codes, ids in order and kept
    /// `eventbridge` patterns — for [`SubscriptionSet::from_bytes`] (the format:
    /// `filtervm_compiler::set_wire`).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes()
    }
}

impl<Id: SetId + Eq + Hash> SubscriptionSet<Id> {
    /// Reads back a set saved by [`SubscriptionSet::to_bytes`], without compiling: it matches
    /// every message as the saved one. Safe on any bytes (checked as hostile; never panics,
    /// allocates in proportion to the bytes); a malformed set is refused with
    /// [`SetLoadError::code`] `INVALID_PROGRAM`, `INVALID_FILTER_METADATA` or `INVALID_OPTIONS`.
    ///
    /// ```
    /// use filtervm::{Dialect, Filter, SubscriptionSet};
    ///
    /// let mut set = SubscriptionSet::new();
    /// set.insert("a".to_string(), &Filter::new(Dialect::Sns, r#"{"e": ["x"]}"#)?)?;
    /// let loaded = SubscriptionSet::<String>::from_bytes(&set.to_bytes())?;
    /// assert_eq!(loaded.ids().collect::<Vec<_>>(), ["a"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<SubscriptionSet<Id>, SetLoadError> {
        compiler::SubscriptionSet::from_bytes(bytes).map(|inner| SubscriptionSet { inner })
    }
}

impl<Id> SubscriptionSet<Id> {
    /// An empty set.
    pub fn new() -> SubscriptionSet<Id> {
        SubscriptionSet {
            inner: compiler::SubscriptionSet::new(),
        }
    }

    /// The number of subscriptions.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the set holds no subscription.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The subscriptions' ids, in insertion order.
    pub fn ids(&self) -> impl Iterator<Item = &Id> + '_ {
        self.inner.ids()
    }

    /// The options of the set's groups, one per group of subscriptions with the same dialect and
    /// options (each reads its part of a message: `MessagePart::of`).
    pub fn options(&self) -> impl Iterator<Item = &compiler::Options> + '_ {
        self.inner.options()
    }

    /// The number of distinct filters stored (identical filters count once).
    pub fn distinct_filters(&self) -> usize {
        self.inner.distinct_filters()
    }

    /// The heap memory the set holds, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }
}

impl<Id: Eq + Hash + Clone> SubscriptionSet<Id> {
    /// Adds subscription `id` with `filter`, or replaces the filter of an existing `id` (which
    /// keeps its place in the order). On error nothing changes. A filter loaded from bytes of
    /// the first wire format carries no IR and is refused ([`InsertError::NoIr`]).
    pub fn insert(&mut self, id: Id, filter: &Filter) -> Result<Insertion, InsertError> {
        self.inner.insert(id, &filter.inner)
    }

    /// Adds subscription `id` (or replaces its filter) with the filter of policy `text`, as
    /// `insert(id, &Filter::compile_text(...)?)` does, through `cache`: the text is compiled only
    /// when `cache` was not given it with these options before or this set no longer holds the
    /// filter compiled then. A broker loading a topic whose subscriptions repeat policy texts
    /// compiles each distinct text once (see [`PolicyCache`]). On error nothing changes.
    ///
    /// ```
    /// use filtervm::{Dialect, Options, PolicyCache, SnsScope, SubscriptionSet};
    ///
    /// let body = Options::from(SnsScope::MessageBody);
    /// let mut cache = PolicyCache::new(100_000);
    /// let mut set = SubscriptionSet::new();
    /// for (id, text) in [r#"{"a": ["x"]}"#, r#"{"a": ["x"]}"#].iter().enumerate() {
    ///     set.insert_text(&mut cache, id as u64, Dialect::Sns, text, &body).unwrap();
    /// }
    /// assert_eq!((cache.misses(), cache.hits()), (1, 1));
    /// assert_eq!((set.len(), set.distinct_filters()), (2, 1));
    /// ```
    pub fn insert_text(
        &mut self,
        cache: &mut PolicyCache,
        id: Id,
        dialect: compiler::Dialect,
        text: &str,
        options: &compiler::Options,
    ) -> Result<Insertion, CachedInsertError> {
        cache.insert(&mut self.inner, id, dialect, text, options)
    }

    /// Removes subscription `id`; false when it was not there.
    pub fn remove<Q>(&mut self, id: &Q) -> bool
    where
        Id: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.inner.remove(id)
    }

    /// Whether subscription `id` is in the set.
    pub fn contains<Q>(&self, id: &Q) -> bool
    where
        Id: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.inner.contains(id)
    }

    /// The subscriptions whose filter matches `message`, in insertion order, each once.
    ///
    /// Every group reads its part of the message: a filter on attributes its attributes, a
    /// filter on the body the body's bytes, a filter on headers its headers, each read as
    /// [`Filter::matches`] reads it for one of the group's filters. A group that cannot judge the
    /// message (its part is missing where the dialect gives that no meaning, or breaks the
    /// dialect's rules; a document it cannot read) is listed by [`Matches::unjudged`] with the
    /// error and the number of subscriptions concerned, and the other groups still deliver:
    /// never all or nothing, never a quiet "no match". [`Matches::is_complete`] says whether
    /// every group judged it; [`SubscriptionSet::try_matching`] makes an unjudged group an
    /// error.
    pub fn matching<'s, A, H>(
        &'s self,
        scratch: &'s mut SetScratch,
        message: &Message<'_, A, H>,
    ) -> Matches<'s, Id>
    where
        A: Attributes + ?Sized,
        H: Headers + ?Sized,
    {
        match_in(&self.inner, scratch, message)
    }

    /// [`SubscriptionSet::matching`], strict: a message that some group could not judge is an
    /// error listing those groups (their subscriptions' verdicts are unknown).
    pub fn try_matching<'s, A, H>(
        &'s self,
        scratch: &'s mut SetScratch,
        message: &Message<'_, A, H>,
    ) -> Result<Matches<'s, Id>, UnjudgedError>
    where
        A: Attributes + ?Sized,
        H: Headers + ?Sized,
    {
        strict(match_in(&self.inner, scratch, message))
    }
}

impl<Id: Eq + Hash + Clone> SubscriptionSet<Id> {
    /// Matches every message of one JSON document as received — a line of a log — and calls
    /// `each` with each result: a document that is a batch of events (an array of objects, how
    /// Event Grid delivers them) is matched event by event (`each(Some(index), ...)`: the groups
    /// that read events judge that event, the others the whole document, exactly as each of
    /// their filters reads it with [`crate::read_messages`]); any other document once
    /// (`each(None, ...)`, as [`SubscriptionSet::matching`] of [`Message::json`]). This is how
    /// `filtervm route` reads a line, and why it never disagrees with `filtervm match`.
    pub fn matching_messages<F>(&self, scratch: &mut SetScratch, json: &[u8], each: F)
    where
        F: FnMut(Option<usize>, &Matches<'_, Id>),
    {
        self.inner.matching_messages(scratch, json, each);
    }
}

/// Matches `message` against `set`: a message of parts by its parts, a document read once for
/// every group (each group reading its part as one of its filters would).
fn match_in<'s, Id: Eq + Hash + Clone, A: Attributes + ?Sized, H: Headers + ?Sized>(
    set: &'s compiler::SubscriptionSet<Id>,
    scratch: &'s mut SetScratch,
    message: &Message<'_, A, H>,
) -> Matches<'s, Id> {
    match &message.repr {
        Repr::Parts(parts) => set.matching(scratch, parts),
        Repr::Json(json) => set.matching_document(scratch, json),
    }
}

/// `matches`, or the error of its unjudged groups.
fn strict<Id>(matches: Matches<'_, Id>) -> Result<Matches<'_, Id>, UnjudgedError> {
    if matches.is_complete() {
        Ok(matches)
    } else {
        Err(UnjudgedError {
            groups: matches.unjudged().collect(),
        })
    }
}

/// A [`SubscriptionSet`] that changes while it is matched: readers never wait for writers.
///
/// [`LiveSet::load`] gives the published set, lock-free; writers ([`LiveSet::insert`],
/// [`LiveSet::remove`], [`LiveSet::apply`] for a batch published at once) are serialized among
/// themselves and apply each change to a second copy that no reader holds, then publish it with
/// one atomic swap. A reader sees every change of a batch or none.
///
/// ```
/// use filtervm::{Dialect, Filter, LiveSet, Message, SetScratch};
/// use std::sync::Arc;
///
/// let live = Arc::new(LiveSet::new());
/// live.insert(1u64, &Filter::new(Dialect::Stream, "region = eu-*")?)?;
/// let reader = {
///     let live = Arc::clone(&live);
///     std::thread::spawn(move || {
///         let mut scratch = SetScratch::new();
///         let headers = [("region", "eu-west")];
///         let snapshot = live.load();
///         let ids: Vec<u64> = snapshot
///             .matching(&mut scratch, &Message::headers(&headers[..]))
///             .ids()
///             .copied()
///             .collect();
///         ids
///     })
/// };
/// live.insert(2, &Filter::new(Dialect::Stream, "region exists")?)?;
/// let seen = reader.join().unwrap();
/// assert!(seen == [1] || seen == [1, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LiveSet<Id> {
    inner: compiler::LiveSet<Id>,
}

impl<Id: Eq + Hash + Clone> Default for LiveSet<Id> {
    fn default() -> LiveSet<Id> {
        LiveSet {
            inner: compiler::LiveSet::new(),
        }
    }
}

impl<Id: fmt::Debug> fmt::Debug for LiveSet<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<Id: Eq + Hash + Clone> From<SubscriptionSet<Id>> for LiveSet<Id> {
    fn from(set: SubscriptionSet<Id>) -> LiveSet<Id> {
        LiveSet {
            inner: compiler::LiveSet::from(set.inner),
        }
    }
}

/// A change to a [`LiveSet`], for [`LiveSet::apply`].
#[derive(Debug, Clone)]
pub enum Change<Id> {
    /// Add subscription `id` with a filter, or replace the filter of an existing `id`.
    Insert(Id, Filter),
    /// Remove subscription `id`.
    Remove(Id),
}

impl<Id: Eq + Hash + Clone> LiveSet<Id> {
    /// An empty live set.
    pub fn new() -> LiveSet<Id> {
        LiveSet::default()
    }

    /// The published set, for matching: lock-free, never waits for a writer. Hold it for one
    /// message (or a batch); a writer does not wait for it either (it copies the set instead).
    pub fn load(&self) -> Snapshot<Id> {
        Snapshot {
            inner: self.inner.load(),
        }
    }

    /// Adds (or replaces) subscription `id` and publishes the set.
    pub fn insert(&self, id: Id, filter: &Filter) -> Result<Insertion, InsertError> {
        self.inner.insert(id, std::sync::Arc::clone(&filter.inner))
    }

    /// Removes subscription `id` and publishes the set; false when it was not there.
    pub fn remove(&self, id: &Id) -> bool {
        self.inner.remove(id)
    }

    /// Applies `changes` in order and publishes them at once (readers see all or none);
    /// returns what each change did.
    pub fn apply(
        &self,
        changes: impl IntoIterator<Item = Change<Id>>,
    ) -> Vec<Result<Applied, InsertError>> {
        self.inner
            .apply(changes.into_iter().map(|change| match change {
                Change::Insert(id, filter) => compiler::Change::Insert(id, filter.inner),
                Change::Remove(id) => compiler::Change::Remove(id),
            }))
    }

    /// The number of subscriptions published.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the published set is empty.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }
}

/// The set a [`LiveSet`] published, as [`LiveSet::load`] gave it.
pub struct Snapshot<Id> {
    inner: compiler::Snapshot<Id>,
}

impl<Id: fmt::Debug> fmt::Debug for Snapshot<Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<Id: Eq + Hash + Clone> Snapshot<Id> {
    /// [`SubscriptionSet::matching`] on this snapshot.
    pub fn matching<'s, A, H>(
        &'s self,
        scratch: &'s mut SetScratch,
        message: &Message<'_, A, H>,
    ) -> Matches<'s, Id>
    where
        A: Attributes + ?Sized,
        H: Headers + ?Sized,
    {
        match_in(&self.inner, scratch, message)
    }

    /// [`SubscriptionSet::try_matching`] on this snapshot.
    pub fn try_matching<'s, A, H>(
        &'s self,
        scratch: &'s mut SetScratch,
        message: &Message<'_, A, H>,
    ) -> Result<Matches<'s, Id>, UnjudgedError>
    where
        A: Attributes + ?Sized,
        H: Headers + ?Sized,
    {
        strict(match_in(&self.inner, scratch, message))
    }

    /// The number of subscriptions in this snapshot.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether this snapshot holds no subscription.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Whether subscription `id` is in this snapshot.
    pub fn contains(&self, id: &Id) -> bool {
        self.inner.contains(id)
    }
}

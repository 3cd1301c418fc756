//! Reading messages: the members a [`Selector`] names, into a pruned document borrowed from the
//! input and a per-message arena ([`Extractor`]).

use super::error::Error;
use super::read::{
    BitStack, Event, LoneSurrogates, MemberSink, MembersEnd, ReadMode, Reader, Scalar, Str,
};
use super::value::{Map, Number, Value};
use crate::key::Key;
use ahash::AHashMap;
use bumpalo::Bump;
use memchr::memmem;

/// What a wanted member leads to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Want {
    /// A path ends at the member's value (the *leaf position*).
    leaf: bool,
    /// A path continues inside the member's value: the state whose names are wanted there.
    next: Option<u32>,
}

/// A selector state stands for one object position of the wanted paths: the names wanted there.
#[derive(Debug, Clone, Default)]
struct State {
    /// Wanted names (segments) and what each leads to.
    children: Vec<(Box<str>, Want)>,
    /// Name (ASCII lower case when `fold_case`) → child, for states with many children.
    index: Option<AHashMap<Box<[u8]>, usize>>,
    /// Names are compared ignoring ASCII case (the Event Grid top level).
    fold_case: bool,
    /// The bytes a wanted member name can start with (bit `b` of the 256), so that most unwanted
    /// names are passed over after one look: each child's first byte (both cases when
    /// `fold_case`), and `.` when the empty segment is wanted (a name `.x` starts with it).
    first: [u64; 4],
    /// Whether the empty name is wanted.
    empty: bool,
    /// Whether a path continues below some child: only then can a name with dots be wanted
    /// ([`Selector::lookup_dotted`] needs a child to continue from).
    nested: bool,
    /// For a state of [`BY_FIRST_FROM`] to [`INDEX_FROM`] children without `fold_case` (empty
    /// otherwise): by a name's first byte,
    /// the first child starting with it (its index + 1; 0 for none), so that a name is compared
    /// only with the children it may be.
    by_first: Vec<u8>,
    /// By child: the next child with the same first byte (index + 1; 0 for none).
    same_first: Vec<u8>,
    /// The `seen` bits ([`Frame::Object`]'s) of every child, when the state has fewer than 64
    /// children and does not fold case (where a later name could differ from a wanted one in
    /// case alone); else [`NEVER_ALL_SEEN`]: once `seen` is this (and a child's value that is a
    /// container has been read), nothing more is wanted of the object unless a name comes twice.
    all_seen: u64,
    /// For the top-level state and the states of its children, when [`State::all_seen`] can
    /// tell (theirs and the top level's): the names wanted there, each to be searched after a `"`
    /// (and, below the top level, at the top level). Where none finds anything in the rest of a
    /// document, no member in it is wanted, so a trusted read may pass over it once it has read
    /// every wanted member ([`Reader::members`](super::read::Reader::members)).
    rest_names: Option<RestNames>,
}

/// The names a look at the rest of a document searches for, each after a `"`
/// ([`State::rest_names`]). Several names are searched for in one pass over the rest (one
/// substring search for each cost about 130 instructions a name on a 150-byte rest; a look at
/// each quote in the rest, to compare its name with all of them, cost more still: "The rest of
/// the document passed over, trusted" in BENCHMARKS.md). That pass looks for the first
/// [`NAME_START`] bytes of each quoted name and compares the whole name where one is found:
/// the packed searcher's work per byte grows with the length of what it looks for (on a
/// ~600-byte rest, two names cost it ~820 instructions whole and ~520 by their first two bytes:
/// "Names found by their first bytes" in BENCHMARKS.md).
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per selector state, built once; the one-name searcher, the common case, is \
              read in place when a rest is passed rather than through a box"
)]
enum RestNames {
    /// No names: nothing in a rest can be wanted.
    None,
    /// One name, searched for with a substring searcher.
    One(memmem::Finder<'static>),
    /// Two or more names, searched for together in one pass (a packed, SIMD multi-substring
    /// searcher; where it cannot be built, a substring searcher for each).
    Many(Box<NameStarts>),
    /// A substring searcher for each name.
    Each(Vec<memmem::Finder<'static>>),
}

/// Two or more names searched for by their starts ([`RestNames::Many`]; boxed: the selector's
/// states, read by every message, stay small).
#[derive(Debug, Clone)]
struct NameStarts {
    /// Finds the first [`NAME_START`] bytes of the quoted names (each distinct start once).
    starts: aho_corasick::packed::Searcher,
    /// The quoted names, by the pattern id of their start in `starts`.
    names: Vec<Vec<Vec<u8>>>,
}

impl NameStarts {
    /// [`RestNames::in_text`]: each place `starts` finds is compared with the whole names that
    /// begin there. (Not inlined: the member loop that passes a rest reads most messages.)
    #[inline(never)]
    fn in_text(&self, text: &[u8]) -> bool {
        let mut from = 0;
        while let Some(found) = text.get(from..).and_then(|t| self.starts.find(t)) {
            let at = from + found.start();
            let here = text.get(at..).unwrap_or_default();
            if self
                .names
                .get(found.pattern().as_usize())
                .is_some_and(|names| names.iter().any(|q| here.starts_with(q)))
            {
                return true;
            }
            from = at + 1;
        }
        false
    }
}

/// How many bytes of a quoted name [`RestNames::Many`] searches for: the `"` and the first
/// letter.
const NAME_START: usize = 2;

impl RestNames {
    fn new<'n>(names: impl IntoIterator<Item = &'n str>) -> RestNames {
        let quoted: Vec<Vec<u8>> = names
            .into_iter()
            .map(|name| [b"\"", name.as_bytes()].concat())
            .collect();
        // The empty name is found at every quote: a search for the others adds nothing (and
        // every start searched for below is then two bytes, so one pattern is found at a place).
        let empty = quoted.iter().any(|q| q.len() < NAME_START);
        match quoted.as_slice() {
            [] => RestNames::None,
            _ if empty => RestNames::One(memmem::Finder::new(b"\"").into_owned()),
            [one] => RestNames::One(memmem::Finder::new(one).into_owned()),
            many => match RestNames::by_start(many) {
                Some((starts, names)) => RestNames::Many(Box::new(NameStarts { starts, names })),
                None => RestNames::Each(
                    many.iter()
                        .map(|q| memmem::Finder::new(q).into_owned())
                        .collect(),
                ),
            },
        }
    }

    /// A searcher for the distinct starts of `quoted` and, by its pattern ids, the names that
    /// begin with each (`None` where the searcher cannot be built).
    fn by_start(quoted: &[Vec<u8>]) -> Option<(aho_corasick::packed::Searcher, Vec<Vec<Vec<u8>>>)> {
        let mut starts: Vec<&[u8]> = Vec::new();
        let mut names: Vec<Vec<Vec<u8>>> = Vec::new();
        for q in quoted {
            let start = q.get(..NAME_START).unwrap_or(q);
            match starts.iter().position(|&s| s == start) {
                Some(i) => names.get_mut(i)?.push(q.clone()),
                None => {
                    starts.push(start);
                    names.push(vec![q.clone()]);
                }
            }
        }
        Some((aho_corasick::packed::Searcher::new(starts)?, names))
    }

    /// Whether `text` holds `"` followed by one of the names.
    #[inline(always)]
    fn in_text(&self, text: &[u8]) -> bool {
        match self {
            RestNames::None => false,
            RestNames::One(name) => name.find(text).is_some(),
            RestNames::Many(by_start) => by_start.in_text(text),
            RestNames::Each(names) => names.iter().any(|name| name.find(text).is_some()),
        }
    }
}

impl State {
    fn note_first_byte(&mut self, b: u8) {
        if let Some(word) = self.first.get_mut(usize::from(b >> 6)) {
            *word |= 1 << (b & 63);
        }
    }

    #[inline(always)]
    fn may_start(&self, b: u8) -> bool {
        self.first
            .get(usize::from(b >> 6))
            .is_some_and(|word| word >> (b & 63) & 1 == 1)
    }
}

/// [`State::all_seen`] for a state whose `seen` bits cannot tell that every child was read: no
/// object's `seen` has every bit set, as only the first 63 children have a bit
/// ([`ObjectSink::name`]; a later child counts as a possible duplicate instead).
const NEVER_ALL_SEEN: u64 = u64::MAX;

/// States with more wanted names than this look names up by hash.
const INDEX_FROM: usize = 12;

/// States with at least this many wanted names (and no more than [`INDEX_FROM`]) find a name's
/// candidates by its first byte ([`State::by_first`]); fewer are walked in order, which costs
/// less (callgrind on the attrs lines: the table saves 140 instructions a message on pol8c, eight
/// names wanted, and cost 35 on pol1c and pol3c, one and three; "Raw bytes, third pass" in
/// BENCHMARKS.md).
const BY_FIRST_FROM: usize = 4;

/// The members a message reader keeps: SNS body paths or Event Grid members and `data` paths.
///
/// Built once per key table (or subscription set) and shared by every message and thread. See
/// the module documentation for what each kind keeps.
#[derive(Debug, Clone)]
pub struct Selector {
    /// State 0 is the top-level object.
    states: Vec<State>,
    /// SNS: a member name may consume several dotted segments, and arrays below the top level
    /// are transparent (their elements are read with the array's own paths).
    sns: bool,
    /// The number of wanted names a path ends at (about how many texts a message keeps).
    leaves: usize,
    /// EventBridge field paths (`Key::FieldPath`, EB-3): an object's repeated member names are
    /// all kept, in document order (each occurrence counts), rather than the last value at the
    /// first position; and an array nested in a kept array is kept as an element, not flattened
    /// into it (its scalars carry that element's position).
    fields: bool,
}

impl Selector {
    /// The selector of SNS MessageBody paths (`a.b.c`, matched as sns rules 14-21 say): at an
    /// object, a member named `N` continues a remaining path `r` when `r == N` (the value is at
    /// the leaf position) or `r` starts with `N.`, so one member name may consume several
    /// segments; arrays are transparent before and at the leaf position.
    ///
    /// ```
    /// use filtervm_vm::json::{Extractor, Selector};
    /// let selector = Selector::body_paths(["a.b.c"]);
    /// let mut reader = Extractor::new();
    /// let doc = reader.extract(&selector, br#"{"a": {"b.c": 1, "x": 2}, "a.b": [{"c": 3}]}"#)?;
    /// assert_eq!(doc.to_string(), r#"{"a":{"b.c":1},"a.b":[{"c":3}]}"#);
    /// # Ok::<(), filtervm_vm::json::Error>(())
    /// ```
    pub fn body_paths<I, S>(paths: I) -> Selector
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut selector = Selector {
            states: vec![State::default()],
            sns: true,
            leaves: 0,
            fields: false,
        };
        for path in paths {
            selector.add_path(0, path.as_ref().split('.'));
        }
        selector.finish()
    }

    /// The selector of Event Grid keys: top-level `members` matched ignoring ASCII case (every
    /// case variant is kept), and `data_paths`: the top-level `data` member (ignoring case), then
    /// one member per segment by exact name. Arrays are not transparent.
    ///
    /// ```
    /// use filtervm_vm::json::{Extractor, Selector};
    /// let selector = Selector::event(["subject"], [["a", "b"]]);
    /// let mut reader = Extractor::new();
    /// let doc = reader.extract(&selector, br#"{"Subject": "s", "subject": "t", "id": 1, "DATA": {"a": {"b": [1, {}], "c": 2}, "a.b": 3}}"#)?;
    /// assert_eq!(doc.to_string(), r#"{"Subject":"s","subject":"t","DATA":{"a":{"b":[1]}}}"#);
    /// # Ok::<(), filtervm_vm::json::Error>(())
    /// ```
    pub fn event<M, D, P, S, T>(members: M, data_paths: D) -> Selector
    where
        M: IntoIterator<Item = S>,
        S: AsRef<str>,
        D: IntoIterator<Item = P>,
        P: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        let mut selector = Selector {
            states: vec![State {
                fold_case: true,
                ..State::default()
            }],
            sns: false,
            leaves: 0,
            fields: false,
        };
        for member in members {
            selector.add_path(0, [member.as_ref()]);
        }
        for path in data_paths {
            let segments: Vec<T> = path.into_iter().collect();
            selector.add_path(
                0,
                std::iter::once("data").chain(segments.iter().map(AsRef::as_ref)),
            );
        }
        selector.finish()
    }

    /// The selector of a program's (or set's) keys, as the binder reads them: the SNS body
    /// selector of its [`Key::BodyPath`], [`Key::BodyPathEach`] and [`Key::FieldPath`] paths when
    /// it has any body key ([`Key::BodyIsObject`] included; with field paths, repeated member
    /// names and nested arrays kept as they are), else the Event Grid selector of its [`Key::EventMember`]
    /// and [`Key::EventData`] keys. Other keys are not read from JSON and are ignored.
    pub fn for_keys(keys: &[Key]) -> Selector {
        let body = keys.iter().any(|k| {
            matches!(
                k,
                Key::BodyPath(_) | Key::BodyPathEach(_) | Key::FieldPath(..) | Key::BodyIsObject
            )
        });
        if body {
            let mut selector = Selector::body_paths(keys.iter().filter_map(|k| match k {
                Key::BodyPath(p) | Key::BodyPathEach(p) | Key::FieldPath(p, _) => Some(&**p),
                _ => None,
            }));
            selector.fields = keys.iter().any(|k| matches!(k, Key::FieldPath(..)));
            selector
        } else {
            Selector::event(
                keys.iter().filter_map(|k| match k {
                    Key::EventMember(name) => Some(&**name),
                    _ => None,
                }),
                keys.iter().filter_map(|k| match k {
                    Key::EventData(path) => Some(path.iter().map(|s| &**s)),
                    _ => None,
                }),
            )
        }
    }

    /// Adds the path of `segments` below `state`.
    fn add_path<'s>(&mut self, mut state: u32, segments: impl IntoIterator<Item = &'s str>) {
        let mut segments = segments.into_iter().peekable();
        while let Some(segment) = segments.next() {
            let last = segments.peek().is_none();
            let new_state = u32::try_from(self.states.len()).unwrap_or(u32::MAX);
            let Some(st) = self.states.get_mut(state as usize) else {
                return;
            };
            let fold = st.fold_case;
            let i = match st.children.iter().position(|(name, _)| {
                if fold {
                    name.eq_ignore_ascii_case(segment)
                } else {
                    **name == *segment
                }
            }) {
                Some(i) => i,
                None => {
                    st.children.push((segment.into(), Want::default()));
                    st.children.len() - 1
                }
            };
            let Some((_, want)) = st.children.get_mut(i) else {
                return;
            };
            if last {
                want.leaf = true;
                return;
            }
            state = match want.next {
                Some(next) => next,
                None => {
                    want.next = Some(new_state);
                    self.states.push(State::default());
                    new_state
                }
            };
        }
    }

    fn finish(mut self) -> Selector {
        self.leaves = self
            .states
            .iter()
            .flat_map(|st| &st.children)
            .filter(|(_, want)| want.leaf)
            .count();
        for st in &mut self.states {
            st.nested = st.children.iter().any(|(_, want)| want.next.is_some());
            st.all_seen = match st.children.len() {
                _ if st.fold_case => NEVER_ALL_SEEN,
                0 => 0,
                n @ 1..=63 => u64::MAX >> (64 - n),
                _ => NEVER_ALL_SEEN,
            };
            let firsts: Vec<Option<u8>> = st
                .children
                .iter()
                .map(|(name, _)| name.bytes().next())
                .collect();
            for first in firsts {
                match first {
                    Some(b) if st.fold_case => {
                        st.note_first_byte(b.to_ascii_lowercase());
                        st.note_first_byte(b.to_ascii_uppercase());
                    }
                    Some(b) => st.note_first_byte(b),
                    None => {
                        st.empty = true;
                        st.note_first_byte(b'.');
                    }
                }
            }
            if !st.fold_case && (BY_FIRST_FROM..=INDEX_FROM).contains(&st.children.len()) {
                st.by_first = vec![0; 256];
                st.same_first = vec![0; st.children.len()];
                for (i, (name, _)) in st.children.iter().enumerate().rev() {
                    if let (Some(b), Ok(i1)) = (name.bytes().next(), u8::try_from(i + 1))
                        && let Some(head) = st.by_first.get_mut(usize::from(b))
                        && let Some(next) = st.same_first.get_mut(i)
                    {
                        *next = *head;
                        *head = i1;
                    }
                }
            }
            if st.children.len() > INDEX_FROM {
                let fold = st.fold_case;
                st.index = Some(
                    st.children
                        .iter()
                        .enumerate()
                        .map(|(i, (name, _))| {
                            let key: Box<[u8]> = if fold {
                                name.to_ascii_lowercase().into_bytes().into()
                            } else {
                                name.as_bytes().into()
                            };
                            (key, i)
                        })
                        .collect(),
                );
            }
        }
        self.add_rest_names();
        self
    }

    /// [`State::rest_names`]: for the top-level state, and for each state of its children, of
    /// their own names and the top level's, where a rest may be passed over (both states'
    /// [`State::all_seen`] tell when every wanted name has been read).
    fn add_rest_names(&mut self) {
        let Some(top) = self
            .states
            .first()
            .filter(|top| top.all_seen != NEVER_ALL_SEEN)
        else {
            return;
        };
        let at_top: Vec<Box<str>> = top.children.iter().map(|(n, _)| n.clone()).collect();
        let below: Vec<u32> = top.children.iter().filter_map(|(_, w)| w.next).collect();
        for i in below {
            if let Some(st) = self.states.get_mut(i as usize)
                && st.all_seen != NEVER_ALL_SEEN
            {
                let here = st.children.iter().map(|(n, _)| &**n);
                st.rest_names = Some(RestNames::new(here.chain(at_top.iter().map(|n| &**n))));
            }
        }
        if let Some(top) = self.states.first_mut() {
            top.rest_names = Some(RestNames::new(at_top.iter().map(|n| &**n)));
        }
    }

    /// [`State::all_seen`] of the top-level object's state.
    #[inline(always)]
    fn settle_at_top(&self) -> u64 {
        self.states.first().map_or(NEVER_ALL_SEEN, |st| st.all_seen)
    }

    /// [`ObjectSink::settle`] for the top-level object, whose frame is `top`
    /// ([`Frame::Object`]): [`State::all_seen`], unless a name came twice. A look at the rest
    /// is worth it once every wanted name has been read; and once a name came twice, no look
    /// is taken again (in a valid document, a rest would be looked at after each repeat of a
    /// wanted container, each look a pass over the input).
    #[inline(always)]
    fn settle_at_top_after(&self, maybe_duplicates: bool) -> u64 {
        if maybe_duplicates {
            NEVER_ALL_SEEN
        } else {
            self.settle_at_top()
        }
    }

    /// [`ObjectSink::settle`] for an object directly below the top level, at `state`, where the
    /// top-level object's frame has `top_seen` bits and `top_duplicates`: its state's
    /// [`State::all_seen`] once every member wanted at the top level has been read, no name
    /// twice (else a later top-level member is wanted, and a look at the rest would find its
    /// name; and as [`Selector::settle_at_top_after`] says). Only the object of the last name
    /// wanted at the top level may so be armed: a later one repeats a name.
    #[inline(always)]
    fn settle_below_top(&self, state: u32, top_seen: u64, top_duplicates: bool) -> u64 {
        match self.state(state) {
            Some(st) if top_seen == self.settle_at_top_after(top_duplicates) => st.all_seen,
            _ => NEVER_ALL_SEEN,
        }
    }

    /// Whether this selects body paths none of which has two segments (a name with dots is then
    /// never wanted): each member the top-level object keeps is then one of
    /// [`Selector::top_names`], whole. With EventBridge field paths
    /// ([`Selector::keeps_repeats`]) a repeated name is kept at each occurrence.
    pub(crate) fn is_flat_body(&self) -> bool {
        self.sns && self.states.len() == 1
    }

    /// Whether an object's repeated member names are all kept, in document order (EventBridge
    /// field paths, EB-3), rather than the last value at the first position.
    pub(crate) fn keeps_repeats(&self) -> bool {
        self.fields
    }

    /// The same selector with no first-byte tables ([`State::by_first`]): every name is looked
    /// for by walking the children in order (the tests compare the two).
    #[cfg(test)]
    pub(super) fn without_first_tables(mut self) -> Selector {
        for st in &mut self.states {
            st.by_first = Vec::new();
            st.same_first = Vec::new();
        }
        self
    }

    /// How many states have a first-byte table.
    #[cfg(test)]
    pub(super) fn first_tables(&self) -> usize {
        self.states
            .iter()
            .filter(|st| !st.by_first.is_empty())
            .count()
    }

    /// Whether this selects SNS body paths of at most two segments, none of them EventBridge
    /// field paths: each member the top-level object keeps is one of [`Selector::top_names`]
    /// (whole, or a dotted name read segment by segment), and an object kept there keeps only
    /// scalars or containers where a path ends ([`Selector::inner_names`]). [`Extractor::extract_tapped`]
    /// then reads such an object's members in a second member loop (flat selectors,
    /// [`Selector::is_flat_body`], are the case without one).
    pub(crate) fn is_two_level_body(&self) -> bool {
        self.sns && !self.fields && self.states.iter().skip(1).all(|st| !st.nested)
    }

    /// For each name of [`Selector::top_names`], the names wanted in an object that is its
    /// value (in the order of the indexes [`Extractor::extract_tapped`] gives them), or `None`
    /// where the name's value is wanted whole only.
    pub(crate) fn inner_names(&self) -> impl Iterator<Item = Option<impl Iterator<Item = &str>>> {
        self.states
            .first()
            .into_iter()
            .flat_map(|st| &st.children)
            .map(|(_, want)| {
                let st = want.next.and_then(|next| self.states.get(next as usize))?;
                Some(st.children.iter().map(|(name, _)| &**name))
            })
    }

    /// The names wanted in the top-level object, in the order of the indexes
    /// [`Extractor::extract_tapped`] gives.
    pub(crate) fn top_names(&self) -> impl Iterator<Item = &str> {
        self.states
            .first()
            .into_iter()
            .flat_map(|st| st.children.iter().map(|(name, _)| &**name))
    }

    /// The child of `st` named `name` (its index).
    #[inline(always)]
    fn child(&self, st: &State, name: &[u8], lower: &mut Vec<u8>) -> Option<usize> {
        let i = match &st.index {
            None if st.fold_case => st.children.iter().position(|(n, _)| {
                n.len() == name.len() && n.as_bytes().eq_ignore_ascii_case(name)
            })?,
            None if !st.by_first.is_empty() && !name.is_empty() => {
                // The children starting with the name's first byte, in order.
                let b = name.first().copied().unwrap_or_default();
                let mut next = st.by_first.get(usize::from(b)).copied().unwrap_or(0);
                let mut found = None;
                while let Some(i) = usize::from(next).checked_sub(1) {
                    let Some((n, _)) = st.children.get(i) else {
                        break;
                    };
                    if eq_short(n.as_bytes(), name) {
                        found = Some(i);
                        break;
                    }
                    next = st.same_first.get(i).copied().unwrap_or(0);
                }
                found?
            }
            None => {
                // A plain loop rather than `position`, which the compiler leaves out of line.
                let mut found = None;
                for (i, (n, _)) in st.children.iter().enumerate() {
                    if eq_short(n.as_bytes(), name) {
                        found = Some(i);
                        break;
                    }
                }
                found?
            }
            Some(index) if st.fold_case => {
                lower.clear();
                lower.extend(name.iter().map(u8::to_ascii_lowercase));
                *index.get(lower.as_slice())?
            }
            Some(index) => *index.get(name)?,
        };
        Some(i)
    }

    /// The state `state`.
    #[inline(always)]
    fn state(&self, state: u32) -> Option<&State> {
        self.states.get(state as usize)
    }

    /// What the member `name` leads to at state `st` (SNS: through as many dotted segments as
    /// the name has). The reader has already passed over names whose first byte no wanted name
    /// starts with ([`State::may_start`]).
    #[inline(always)]
    fn lookup<'s>(&'s self, st: &'s State, name: &[u8], lower: &mut Vec<u8>) -> Option<Found<'s>> {
        // A wanted segment never contains a dot, so a whole-name match needs no splitting.
        if let Some(i) = self.child(st, name, lower) {
            let (stored, want) = st.children.get(i)?;
            let same_spelling = !st.fold_case || eq_short(stored.as_bytes(), name);
            return Some(Found {
                want: *want,
                child: u32::try_from(i).ok(),
                name: same_spelling.then_some(&**stored),
            });
        }
        if !self.sns || !st.nested || !has_dot(name) {
            return None;
        }
        self.lookup_dotted(st, name, lower)
    }

    /// [`Selector::lookup`] of a name with dots, segment by segment.
    fn lookup_dotted<'s>(
        &'s self,
        mut st: &'s State,
        name: &[u8],
        lower: &mut Vec<u8>,
    ) -> Option<Found<'s>> {
        let mut segments = name.split(|&b| b == b'.');
        let mut segment = segments.next()?;
        loop {
            let i = self.child(st, segment, lower)?;
            let want = st.children.get(i).map(|(_, want)| *want)?;
            match segments.next() {
                None => {
                    return Some(Found {
                        want,
                        child: None,
                        name: None,
                    });
                }
                Some(next) => {
                    st = self.states.get(want.next? as usize)?;
                    segment = next;
                }
            }
        }
    }
}

/// Whether `name` contains a `.`. Names are short: a plain scan beats `<[u8]>::contains`,
/// which calls a vectorized search whose setup costs more than the scan (measured with
/// callgrind on the attrs workload: about 40 instructions per member name).
#[expect(
    clippy::manual_contains,
    reason = "contains() calls memchr, slower on short names (see the doc)"
)]
#[inline(always)]
fn has_dot(name: &[u8]) -> bool {
    name.iter().any(|&b| b == b'.')
}

/// `a == b` for short byte strings (member names) without a call to `memcmp`, whose fixed cost
/// dominates at these lengths: up to 16 bytes as two overlapping words (or half-words), longer
/// ones eight bytes a step.
#[inline(always)]
fn eq_short(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() <= 16 {
        if let (Some(a0), Some(b0), Some(a1), Some(b1)) = (
            a.first_chunk::<8>(),
            b.first_chunk::<8>(),
            a.last_chunk::<8>(),
            b.last_chunk::<8>(),
        ) {
            return a0 == b0 && a1 == b1;
        }
        if let (Some(a0), Some(b0), Some(a1), Some(b1)) = (
            a.first_chunk::<4>(),
            b.first_chunk::<4>(),
            a.last_chunk::<4>(),
            b.last_chunk::<4>(),
        ) {
            return a0 == b0 && a1 == b1;
        }
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let mut a8 = a.chunks_exact(8);
    let mut b8 = b.chunks_exact(8);
    for (x, y) in (&mut a8).zip(&mut b8) {
        if x != y {
            return false;
        }
    }
    a8.remainder()
        .iter()
        .zip(b8.remainder())
        .all(|(x, y)| x == y)
}

/// A member name the selector wants.
struct Found<'s> {
    want: Want,
    /// The index of the child the whole name matched at this state (`None` for a dotted name
    /// matched segment by segment): two members of one object that name the same child may be
    /// duplicates, members naming different children never are.
    child: Option<u32>,
    /// The selector's own copy of the name, when it is spelled the same.
    name: Option<&'s str>,
}

/// A value of a pruned message document (see the module documentation for what is kept).
///
/// Strings and numbers borrow the input where they can (a string with escapes is decoded into
/// the [`Extractor`]'s arena); arrays and objects are slices in the arena. An array or object whose
/// contents were not wanted is kept empty, so its kind is still known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Node<'d> {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number: its exact text.
    Number(&'d str),
    /// A string, escapes decoded.
    String(&'d str),
    /// An array: the wanted elements (see the module documentation).
    Array(&'d [Node<'d>]),
    /// An object: the wanted members, in document order, each name once (the last value of a
    /// repeated name, at the first one's position).
    Object(&'d [Member<'d>]),
}

/// A member of a pruned object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member<'d> {
    /// The name, escapes decoded.
    pub name: &'d str,
    /// The value.
    pub value: Node<'d>,
}

impl<'d> Node<'d> {
    /// Member `name` (exact spelling), if this is an object that kept it.
    pub fn get(&self, name: &str) -> Option<&Node<'d>> {
        match self {
            Node::Object(members) => members.iter().find(|m| m.name == name).map(|m| &m.value),
            _ => None,
        }
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Node::Object(_))
    }

    /// This node as an owned [`Value`] (test and debugging aid: nodes nest no deeper than the
    /// selector's paths, so the recursion is bounded).
    pub fn to_value(&self) -> Value {
        match *self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Number(text) => Number::from_text(text).map_or(Value::Null, Value::Number),
            Node::String(s) => Value::String(s.to_owned()),
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|m| (m.name.to_owned(), m.value.to_value()))
                    .collect::<Map>(),
            ),
        }
    }
}

impl std::fmt::Display for Node<'_> {
    /// Compact JSON, numbers in their exact text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::value::{write_json_array, write_json_object, write_json_string};
        match *self {
            Node::Null => f.write_str("null"),
            Node::Bool(b) => write!(f, "{b}"),
            Node::Number(text) => f.write_str(text),
            Node::String(s) => write_json_string(f, s),
            Node::Array(items) => write_json_array(f, items),
            Node::Object(members) => {
                write_json_object(f, members.iter().map(|m| (m.name, &m.value)))
            }
        }
    }
}

/// A kept container being read.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// An object at selector state `state`; its members so far start at `start` in the member
    /// stack. `seen` has bit `i` set once a member named child `i`; `maybe_duplicates` once
    /// a member named a child already seen (or one [`Found::child`] cannot tell).
    Object {
        state: u32,
        start: usize,
        seen: u64,
        maybe_duplicates: bool,
    },
    /// An array whose elements are read with `want`; its elements so far start at `start` in the
    /// node stack. `flattened` counts nested arrays being read into it (SNS).
    Array {
        want: Want,
        transparent: bool,
        start: usize,
        flattened: u32,
    },
}

/// Reads messages with a [`Selector`]: validates the whole input (or, in [`ReadMode::Trusted`],
/// what the selector reads), keeps only what is wanted.
///
/// Holds the per-message arena and scratch stacks; reuse one per thread so that reading a stream
/// of messages allocates nothing once warm.
#[derive(Debug, Default)]
pub struct Extractor {
    arena: Bump,
    stack: BitStack,
    frames: Vec<Frame>,
    /// Scratch stacks of the elements and members of open kept containers (empty between
    /// messages; typed `'static` only to keep their memory, see [`recycle`]).
    nodes: Vec<Node<'static>>,
    members: Vec<Member<'static>>,
    text: String,
    lower: Vec<u8>,
    /// How members the selector does not read are skipped.
    mode: ReadMode,
}

/// `v`'s memory as an empty vector of another lifetime: collecting an emptied vector's iterator
/// reuses its buffer (the standard library collects in place when the layouts match), so the
/// scratch stacks keep their capacity from one message to the next.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

/// The root is read like the value of a member whose path continues at state 0.
const ROOT: Want = Want {
    leaf: false,
    next: Some(0),
};

impl Extractor {
    /// A reader with empty buffers.
    pub fn new() -> Extractor {
        Extractor::default()
    }

    /// Reads the following messages in `mode` ([`ReadMode::Validating`] until set).
    pub fn set_read_mode(&mut self, mode: ReadMode) {
        self.mode = mode;
    }

    /// The mode messages are read in.
    pub fn read_mode(&self) -> ReadMode {
        self.mode
    }

    /// Bytes held by the arena (for memory accounting).
    pub fn arena_bytes(&self) -> usize {
        self.arena.allocated_bytes()
    }

    /// Reads `input` (one JSON document) and returns what `selector` wants of it.
    ///
    /// The whole input is validated (RFC 8259; lone surrogate escapes accepted as U+FFFD; in
    /// [`ReadMode::Trusted`] only what the selector reads, the rest skipped by its structure), at
    /// any depth and in time linear in its length; the returned document borrows `input`, this
    /// reader's arena (which the next call resets) and `selector` (names spelled as the selector
    /// spells them are its copies).
    pub fn extract<'d>(
        &'d mut self,
        selector: &'d Selector,
        input: &'d [u8],
    ) -> Result<Node<'d>, Error> {
        self.extract_measured(selector, input).map(|(node, _)| node)
    }

    /// [`Extractor::extract`], and the document's nesting depth (the most arrays and objects
    /// open at once) when it is more than 64, else 0.
    pub fn extract_measured<'d>(
        &'d mut self,
        selector: &'d Selector,
        input: &'d [u8],
    ) -> Result<(Node<'d>, usize), Error> {
        self.extract_noting(selector, input, None).0
    }

    /// [`Extractor::extract_measured`], also telling, in the same read, whether the document is
    /// an object whose first member's name is not `listed` (the name with its escapes decoded,
    /// and checked valid in both read modes): a caller that tells a document's shape by its
    /// top-level names (the message reader: a plain body, or an envelope) knows from it, for
    /// most documents, that there is no envelope to read, without reading the document again.
    /// The flag is false when that is not known: the document is no object, an empty one, or
    /// one whose first name is not valid JSON text (checked as a validating read checks it, in
    /// [`ReadMode::Trusted`] too, which does not check the names no path wants). It is given
    /// with the error, too, of a document that is not JSON past its first name.
    pub fn extract_noting_first_name<'d>(
        &'d mut self,
        selector: &'d Selector,
        input: &'d [u8],
        listed: NameTest,
    ) -> (Result<(Node<'d>, usize), Error>, bool) {
        self.extract_noting(selector, input, Some(listed))
    }

    fn extract_noting<'d>(
        &'d mut self,
        selector: &'d Selector,
        input: &'d [u8],
        listed: Option<NameTest>,
    ) -> (Result<(Node<'d>, usize), Error>, bool) {
        self.extract_by(selector, input, listed, false)
    }

    /// [`Extractor::extract_noting`], the top-level object's members read by
    /// [`Run::run_document`], or, when `general`, by [`Run::run`] alone (the tests compare the
    /// two).
    pub(super) fn extract_by<'d>(
        &'d mut self,
        selector: &'d Selector,
        input: &'d [u8],
        listed: Option<NameTest>,
        general: bool,
    ) -> (Result<(Node<'d>, usize), Error>, bool) {
        self.read_with(selector, input, listed, |run| {
            if general {
                run.run()
            } else {
                run.run_document(&mut NoTap).map(|read| match read {
                    // Never without a tap: the document is then always built.
                    Tapped::Flat => Node::Null,
                    Tapped::Document(node) => node,
                })
            }
        })
    }

    /// Reads `input` as [`Extractor::extract_noting`] does, giving each scalar member the
    /// top-level object keeps to `tap` as it is read (the index of the selector's top-level name
    /// it matched, [`Selector::top_names`], or `None` for a dotted name matched segment by
    /// segment; and its value), in document order, repeated names included. When every member
    /// kept is a scalar (and the document is an object), no document is built:
    /// [`Tapped::Flat`]. Otherwise the document is read on as always and returned whole
    /// ([`Tapped::Document`]; `tap` has then seen the scalar members before the first that is
    /// not one). The reader takes the same steps as [`Extractor::extract_noting`], so errors,
    /// depth and the first-name note are the same.
    #[inline(always)]
    pub(crate) fn extract_tapped<'d, T: Tap<'d>>(
        &'d mut self,
        selector: &'d Selector,
        input: &'d [u8],
        listed: Option<NameTest>,
        tap: &mut T,
    ) -> (Result<(Tapped<'d>, usize), Error>, bool) {
        self.read_with(selector, input, listed, |run| run.run_document(tap))
    }

    /// Sets a run up over this reader's buffers (reset arena, recycled stacks), reads `input`
    /// with `read`, and puts the buffers back: what `read` gives, with the document's depth, and
    /// the first-name note.
    #[inline(always)]
    fn read_with<'d, R>(
        &'d mut self,
        selector: &'d Selector,
        input: &'d [u8],
        listed: Option<NameTest>,
        read: impl FnOnce(&mut Run<'d, 'd>) -> Result<R, Error>,
    ) -> (Result<(R, usize), Error>, bool) {
        let Extractor {
            arena,
            stack,
            frames,
            nodes,
            members,
            text,
            lower,
            mode,
        } = self;
        arena.reset();
        let arena: &'d Bump = arena;
        frames.clear();
        let mut run = Run {
            reader: Reader::with_stack(input, LoneSurrogates::Replace, std::mem::take(stack))
                .with_mode(*mode),
            frames,
            keep: Keep {
                selector,
                arena,
                input,
                window: None,
                one_by_one: texts_one_by_one(selector, input),
                nodes: recycle(std::mem::take(nodes)),
                members: recycle(std::mem::take(members)),
                text,
                lower,
                first_name: listed,
                first_unlisted: false,
            },
        };
        let result = read(&mut run);
        let first_unlisted = run.keep.first_unlisted;
        *nodes = recycle(run.keep.nodes);
        *members = recycle(run.keep.members);
        *stack = run.reader.into_stack();
        let deepest = stack.deepest();
        (result.map(|read| (read, deepest)), first_unlisted)
    }
}

/// What [`Extractor::extract_tapped`] read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tapped<'d> {
    /// An object whose kept members are all scalars, each given to the tap; nothing else kept.
    Flat,
    /// Any other document, pruned as [`Extractor::extract`] keeps it.
    Document(Node<'d>),
}

/// What receives the scalar members of the top-level object as they are read
/// ([`Extractor::extract_tapped`]), and, with a two-level selector
/// ([`Selector::is_two_level_body`]), those of the objects kept there.
pub(crate) trait Tap<'d> {
    /// Whether members are tapped at all (else the document is always built).
    const ON: bool;
    /// Whether the objects kept at the top level are tapped too (a two-level selector,
    /// [`Selector::is_two_level_body`]; [`Tap::inner_scalar`]).
    const TWO_LEVELS: bool;
    /// A scalar member: the top-level name it matched (`None`: a dotted name), and its value.
    fn scalar(&mut self, child: Option<u32>, value: Node<'d>);
    /// A scalar member of an object that is the value of the top-level name `parent`: the name
    /// it matched there ([`Selector::inner_names`]), and its value.
    fn inner_scalar(&mut self, parent: u32, child: Option<u32>, value: Node<'d>);
}

/// No tap: the document is always built.
struct NoTap;

impl<'d> Tap<'d> for NoTap {
    const ON: bool = false;
    const TWO_LEVELS: bool = false;
    #[inline(always)]
    fn scalar(&mut self, _: Option<u32>, _: Node<'d>) {}
    #[inline(always)]
    fn inner_scalar(&mut self, _: u32, _: Option<u32>, _: Node<'d>) {}
}

/// [`ObjectSink`] of the top-level object (`INNER` false) or of an object that is the value of
/// its member `parent` (`INNER` true, [`Tap::inner_scalar`]), its scalar members also given to
/// a [`Tap`].
struct TapSink<'t, 'k, 'd, 's, T, const INNER: bool> {
    inner: ObjectSink<'k, 'd, 's>,
    tap: &'t mut T,
    parent: u32,
}

impl<'d, T: Tap<'d>, const INNER: bool> MemberSink<'d> for TapSink<'_, '_, 'd, '_, T, INNER> {
    type Found = Found<'d>;

    #[inline(always)]
    fn may_want(&self, first: Option<u8>) -> bool {
        self.inner.may_want(first)
    }

    #[inline(always)]
    fn wanted(&mut self, name: Str<'d>) -> Option<Found<'d>> {
        self.inner.wanted(name)
    }

    #[inline(always)]
    fn read_all(&mut self) -> bool {
        self.inner.read_all()
    }

    #[inline(always)]
    fn may_name(&self, rest: &[u8]) -> bool {
        self.inner.may_name(rest)
    }

    #[inline(always)]
    fn keep(&mut self, name: Str<'d>, found: Found<'d>, value: Scalar<'d>) {
        let child = found.child;
        self.inner.keep(name, found, value);
        if let Some(m) = self.inner.keep.members.last() {
            if INNER {
                self.tap.inner_scalar(self.parent, child, m.value);
            } else {
                self.tap.scalar(child, m.value);
            }
        }
    }
}

/// Where [`Run::inner_members`] stopped: the object's frame, and the member's container (what
/// it leads to, and its first event).
struct InnerStop<'d> {
    frame: Frame,
    want: Want,
    event: Event<'d>,
}

/// One message being read: the reader, the kept containers open, and what is kept.
struct Run<'d, 's> {
    reader: Reader<'d>,
    frames: &'s mut Vec<Frame>,
    keep: Keep<'d, 's>,
}

/// What a message run keeps, and where.
struct Keep<'d, 's> {
    selector: &'d Selector,
    arena: &'d Bump,
    input: &'d [u8],
    /// The input or a prefix of it as a `str`, once converted (see [`Keep::convert`]).
    window: Option<&'d str>,
    /// Kept texts still to convert one by one (see [`Keep::text`]).
    one_by_one: u32,
    nodes: Vec<Node<'d>>,
    members: Vec<Member<'d>>,
    text: &'s mut String,
    lower: &'s mut Vec<u8>,
    /// The test of the top-level object's first member name, until that name is read
    /// ([`Extractor::extract_noting_first_name`]).
    first_name: Option<NameTest>,
    /// Whether that name was read, checked valid, and failed the test.
    first_unlisted: bool,
}

/// A test on a member name (escapes decoded): [`Extractor::extract_noting_first_name`].
pub type NameTest = fn(&[u8]) -> bool;

/// What converting text to `str` costs, in instructions (callgrind on the standard library's
/// `from_utf8`, ASCII text): about [`UTF8_CALL`] a call for a short text, and about
/// [`UTF8_CALL_WHOLE`] plus one per two bytes for a whole message (125 for 163 bytes, 370 for
/// 700).
const UTF8_CALL: usize = 100;
const UTF8_CALL_WHOLE: usize = 50;

/// How many kept texts to convert one by one before converting the whole input at once: as many
/// as the selector has leaves when that costs less than converting the whole input, else none.
fn texts_one_by_one(selector: &Selector, input: &[u8]) -> u32 {
    let leaves = selector.leaves;
    if leaves.saturating_mul(UTF8_CALL) < UTF8_CALL_WHOLE + input.len() / 2 {
        u32::try_from(leaves).unwrap_or(u32::MAX)
    } else {
        0
    }
}

/// The bytes of a machine word.
const WORD: usize = std::mem::size_of::<usize>();

/// How many bytes of the input a selector of at most [`FEW_LEAVES`] leaves converts at its first
/// kept text at least ([`prefix_end`]): enough for the few texts such a selector keeps near the
/// start of a small message, fewer bytes than the whole message.
const WINDOW: usize = 96;
/// Selectors of more leaves than this convert the whole input at the first kept text (their
/// texts are likely spread over all of it).
const FEW_LEAVES: usize = 4;

/// Where a converted prefix of `input` that holds a text ending at `end` ends
/// ([`Keep::convert`]): at least `reach` bytes and the text, up to a boundary of two words of
/// memory (or the input's end), and past any bytes that continue a character there, so that a
/// prefix of UTF-8 input is UTF-8.
///
/// The standard library's check reads ASCII two words at a time between the word boundaries of
/// memory, and a byte at a time (about four to nine instructions) before the first and after
/// the last full step: a prefix ending at a boundary has no such tail.
#[inline(always)]
pub(super) fn prefix_end(input: &[u8], end: usize, reach: usize) -> usize {
    let addr = input.as_ptr().addr();
    let mut to = (addr.wrapping_add(end.max(reach)).wrapping_add(2 * WORD - 1) & !(2 * WORD - 1))
        .wrapping_sub(addr)
        .min(input.len());
    while input.get(to).is_some_and(|&b| b & 0xC0 == 0x80) {
        to += 1;
    }
    to
}

/// `input[start..start + len]` as a `str`, converted by `str::from_utf8` over a wider window
/// that starts at a word boundary of memory and spans a multiple of two words: `None` when the
/// window is not UTF-8 (a character cut at either edge, or unchecked bytes after the text in
/// trusted mode), and the caller converts the text alone.
///
/// The standard library's check reads ASCII two words at a time only from a word-aligned
/// position, and a byte at a time (about nine instructions a byte) before that and after the
/// last full pair of words: a 15-byte text costs it 132 to 162 instructions by its alignment,
/// the 16 or 32 aligned bytes around it about 40 ("Converting a kept text through an aligned
/// window" in BENCHMARKS.md). The text is the same bytes either way, sliced from the window.
#[inline(always)]
pub(super) fn aligned_text(input: &[u8], start: usize, len: usize) -> Option<&str> {
    // Offsets into a slice are at most `isize::MAX`: none of these sums overflows. Powers of
    // two: `%` and rounding up are masks.
    let lead = input.as_ptr().addr().wrapping_add(start) & (WORD - 1);
    let from = start.saturating_sub(lead);
    let end = start + len;
    let to = (from + ((end - from + 2 * WORD - 1) & !(2 * WORD - 1))).min(input.len());
    let window = std::str::from_utf8(input.get(from..to)?).ok()?;
    window.get(start - from..end - from)
}

impl<'d> Keep<'d, '_> {
    /// Checked input bytes `bytes` (at offset `start`) as a `str` borrowed from the input.
    ///
    /// Safe Rust turns bytes into a `str` only through UTF-8 validation, which costs a fixed
    /// overhead per call (about what converting a whole 160-byte message costs): kept texts are
    /// converted one by one only while that is expected to cost less than converting the input
    /// once ([`texts_one_by_one`]); after that, texts are sliced from a converted prefix of the
    /// input, or the whole input ([`Keep::convert`]).
    #[inline(always)]
    fn text(&mut self, bytes: &'d [u8], start: usize) -> &'d str {
        if let Some(window) = self.window
            && let Some(text) = window.get(start..start + bytes.len())
        {
            return text;
        }
        self.convert(bytes, start)
    }

    /// [`Keep::text`] of a text past the converted prefix: converted alone while
    /// [`texts_one_by_one`] says so; else, for a selector of few leaves, the first such text
    /// converts a prefix of the input that holds it ([`prefix_end`], at least [`WINDOW`] bytes),
    /// and a text past that prefix the whole input (at most two conversions of the input, so
    /// the time stays linear); for other selectors the first converts the whole input.
    #[inline(never)]
    fn convert(&mut self, bytes: &'d [u8], start: usize) -> &'d str {
        let converted = self.window.map_or(0, str::len);
        if self.one_by_one == 0 && start + bytes.len() > converted {
            let to = if converted == 0 && self.selector.leaves <= FEW_LEAVES {
                prefix_end(self.input, start + bytes.len(), WINDOW)
            } else {
                self.input.len()
            };
            match self.input.get(..to).map(std::str::from_utf8) {
                Some(Ok(window)) => {
                    self.window = Some(window);
                    if let Some(text) = window.get(start..start + bytes.len()) {
                        return text;
                    }
                }
                // Bytes not checked (trusted mode) or not read yet: convert every text on its
                // own from now on (once, so that the time stays linear).
                _ => self.one_by_one = u32::MAX,
            }
        }
        self.one_by_one = self.one_by_one.saturating_sub(1);
        match aligned_text(self.input, start, bytes.len()) {
            Some(text) => text,
            None => std::str::from_utf8(bytes).unwrap_or_default(),
        }
    }

    /// A string's value: borrowed from the input, or decoded into the arena.
    #[inline(always)]
    fn string(&mut self, s: Str<'d>) -> &'d str {
        if s.escaped {
            self.unescape(s)
        } else {
            self.text(s.raw, s.offset + 1)
        }
    }

    /// The value of a string with escapes, decoded into the arena.
    #[inline(never)]
    fn unescape(&mut self, s: Str<'d>) -> &'d str {
        self.text.clear();
        s.unescape_into(self.text);
        self.arena.alloc_str(self.text.as_str())
    }

    /// A scalar as a node.
    #[inline(always)]
    fn scalar(&mut self, value: Scalar<'d>) -> Node<'d> {
        match value {
            Scalar::String(s) => Node::String(self.string(s)),
            Scalar::Number(n) => Node::Number(self.text(n.bytes, n.start)),
            Scalar::Bool(b) => Node::Bool(b),
            Scalar::Null => Node::Null,
        }
    }

    /// The kept object whose members start at `start` in the member stack, as a node (its
    /// members moved to the arena).
    fn close_object(&mut self, start: usize, maybe_duplicates: bool) -> Node<'d> {
        let kept = if maybe_duplicates && !self.selector.fields {
            collapse_duplicates(&mut self.members, start)
        } else {
            self.members.len()
        };
        let slice = self
            .arena
            .alloc_slice_copy(self.members.get(start..kept).unwrap_or_default());
        self.members.truncate(start);
        Node::Object(slice)
    }
}

/// The members of a kept object as the reader offers them: wanted names are looked up at the
/// object's selector state, scalar values kept.
struct ObjectSink<'k, 'd, 's> {
    keep: &'k mut Keep<'d, 's>,
    /// The object's selector state (`None` only for a state the selector lacks, which wants
    /// nothing).
    state: Option<&'d State>,
    /// As [`Frame::Object`]'s.
    seen: u64,
    maybe_duplicates: bool,
    /// For the top-level object: the `seen` bits at which every wanted member has been read, so
    /// that the rest may be passed over ([`MemberSink::read_all`], [`State::all_seen`]; set to
    /// [`NEVER_ALL_SEEN`] once it said so, and for other objects).
    settle: u64,
}

impl<'d> ObjectSink<'_, 'd, '_> {
    /// The name of a wanted member, noting which child it named (see [`Frame::Object`]).
    #[inline(always)]
    fn name(&mut self, name: Str<'d>, found: &Found<'d>) -> &'d str {
        // Children from the 64th on set no bit (see `NEVER_ALL_SEEN`).
        let bit = found.child.filter(|&i| i < 63).map_or(0, |i| 1u64 << i);
        if bit == 0 || self.seen & bit != 0 {
            self.maybe_duplicates = true;
        }
        self.seen |= bit;
        match found.name {
            Some(stored) if !name.escaped => stored,
            _ => self.keep.string(name),
        }
    }
}

impl<'d> MemberSink<'d> for ObjectSink<'_, 'd, '_> {
    type Found = Found<'d>;

    /// Every wanted name of this object read (and of the top-level object, for an object
    /// directly below it), with no member open: nothing more is wanted in the rest of the
    /// document unless a later member repeats a wanted name (which the reader looks for before
    /// it passes over the rest). A name wanted here or at the top level starts with one of the
    /// names the selector wants there (a name with dots may consume several segments of a
    /// path), and a member wanted deeper is inside one so named: `"` and that name are in the
    /// input ([`State::rest_names`] look for both levels' names).
    #[inline(always)]
    fn may_name(&self, rest: &[u8]) -> bool {
        match self.state.and_then(|st| st.rest_names.as_ref()) {
            Some(names) => names.in_text(rest),
            None => true,
        }
    }

    #[inline(always)]
    fn read_all(&mut self) -> bool {
        if self.settle == self.seen {
            self.settle = NEVER_ALL_SEEN;
            return true;
        }
        false
    }

    #[inline(always)]
    fn may_want(&self, first: Option<u8>) -> bool {
        match (first, self.state) {
            (Some(b), Some(st)) => st.may_start(b),
            (None, Some(st)) => st.empty,
            (_, None) => false,
        }
    }

    #[inline(always)]
    fn wanted(&mut self, name: Str<'d>) -> Option<Found<'d>> {
        let st = self.state?;
        let keep = &mut *self.keep;
        let selector: &'d Selector = keep.selector;
        if name.escaped {
            keep.text.clear();
            name.unescape_into(keep.text);
            selector.lookup(st, keep.text.as_bytes(), keep.lower)
        } else {
            selector.lookup(st, name.raw, keep.lower)
        }
    }

    #[inline(always)]
    fn keep(&mut self, name: Str<'d>, found: Found<'d>, value: Scalar<'d>) {
        let name = self.name(name, &found);
        let value = self.keep.scalar(value);
        self.keep.members.push(Member { name, value });
    }
}

impl<'d> Run<'d, '_> {
    /// Notes whether the first member's name of the object just opened fails `listed`
    /// ([`Extractor::extract_noting_first_name`]): the name is checked as a validating read
    /// checks it (in both modes: a trusted read does not check the names it does not want), its
    /// escapes decoded; the members are then read as always.
    #[inline(never)]
    fn note_first_name(&mut self, listed: NameTest) {
        let Some(name) = self.reader.peek_name() else {
            return;
        };
        let keep = &mut self.keep;
        keep.first_unlisted = if name.escaped {
            keep.text.clear();
            name.unescape_into(keep.text);
            !listed(keep.text.as_bytes())
        } else {
            !listed(name.raw)
        };
    }

    /// Skips the rest of the container whose start was just read.
    fn skip_container(&mut self) -> Result<(), Error> {
        let depth = self.reader.depth().saturating_sub(1);
        self.reader.skip_to(depth)
    }

    /// Gives a complete value to its container; at the top level, checks the end of the input
    /// and returns the document.
    #[inline]
    fn deliver(&mut self, node: Node<'d>) -> Result<Option<Node<'d>>, Error> {
        match self.frames.last() {
            None => {
                // Only white space may follow (the reader errs on anything else).
                self.reader.next()?;
                return Ok(Some(node));
            }
            Some(Frame::Object { .. }) => {
                if let Some(m) = self.keep.members.last_mut() {
                    m.value = node;
                }
            }
            Some(Frame::Array { .. }) => self.keep.nodes.push(node),
        }
        Ok(None)
    }

    /// Reads the document. Most messages are an object whose wanted members are scalars: its
    /// members are read here by one call of [`Reader::members`], outside the general loop of
    /// [`Run::run`] (whose frames and dispatch cost more than that call on a small flat
    /// message). The steps are the ones [`Run::run`] takes, in the same order on the same reader,
    /// so the result and any error are the same; the first value that is not a scalar member of
    /// the top-level object (or a top level that is no object) is handed to [`Run::step`], and
    /// the rest of the document to [`Run::run`], with the state it would have reached itself.
    fn run_document<T: Tap<'d>>(&mut self, tap: &mut T) -> Result<Tapped<'d>, Error> {
        let event = self.reader.next()?;
        let Event::ObjectStart = event else {
            return self.document_from(ROOT, event);
        };
        if let Some(listed) = self.keep.first_name.take() {
            self.note_first_name(listed);
        }
        let selector: &'d Selector = self.keep.selector;
        let start = self.keep.members.len();
        let inner = ObjectSink {
            keep: &mut self.keep,
            state: selector.state(0),
            seen: 0,
            maybe_duplicates: false,
            settle: selector.settle_at_top(),
        };
        let mut sink = TapSink::<T, false> {
            inner,
            tap,
            parent: 0,
        };
        let end = if T::ON {
            self.reader.members(&mut sink)?
        } else {
            self.reader.members(&mut sink.inner)?
        };
        let sink = sink.inner;
        match end {
            // With two levels ([`Tap::TWO_LEVELS`]), a name met twice (an object then a scalar, say) or
            // a dotted name (`a.b`, which the document binds beside `{"a": {"b": ..}}`) is left
            // to the document: `ObjectSink::name` notes both as possible duplicates.
            MembersEnd::Closed if T::ON && !(T::TWO_LEVELS && sink.maybe_duplicates) => {
                // As [`Run::deliver`] at the top level: only white space may follow.
                self.reader.next()?;
                Ok(Tapped::Flat)
            }
            MembersEnd::Closed => {
                let duplicates = sink.maybe_duplicates;
                let node = self.keep.close_object(start, duplicates);
                // As [`Run::deliver`] at the top level: only white space may follow.
                self.reader.next()?;
                Ok(Tapped::Document(node))
            }
            MembersEnd::Container(name, found) => {
                let mut sink = sink;
                let name = sink.name(name, &found);
                let top = Frame::Object {
                    state: 0,
                    start,
                    seen: sink.seen,
                    maybe_duplicates: sink.maybe_duplicates,
                };
                // The member's value is given when the container closes.
                self.keep.members.push(Member {
                    name,
                    value: Node::Null,
                });
                let event = self.reader.next()?;
                if T::TWO_LEVELS {
                    return self.two_levels(tap, top, found, event);
                }
                self.frames.push(top);
                self.document_from(found.want, event)
            }
        }
    }

    /// [`Run::run_document`] from a member of the top-level object whose value is a container
    /// (`found`; `event`, its first event; `top`, the object's frame), for a tapped read whose
    /// selector reads two levels: an object kept there has its members read by
    /// [`Run::inner_members`] and the top-level members after it by this loop, as long as
    /// every member kept below the top level is a scalar (and no name comes twice or dotted);
    /// else the rest is read into the document, as [`Run::run`] would.
    #[inline(never)]
    fn two_levels<T: Tap<'d>>(
        &mut self,
        tap: &mut T,
        mut top: Frame,
        mut found: Found<'d>,
        mut event: Event<'d>,
    ) -> Result<Tapped<'d>, Error> {
        let selector: &'d Selector = self.keep.selector;
        while let (
            Event::ObjectStart,
            Some(parent),
            Some(state),
            Frame::Object {
                seen: top_seen,
                maybe_duplicates: top_duplicates,
                ..
            },
        ) = (&event, found.child, found.want.next, top)
        {
            let top_settle = (top_seen, top_duplicates);
            if let Some(inner) = self.inner_members(tap, parent, state, top_settle)? {
                self.frames.push(top);
                self.frames.push(inner.frame);
                return self.document_from(inner.want, inner.event);
            }
            let Frame::Object {
                start,
                seen,
                maybe_duplicates,
                ..
            } = top
            else {
                break;
            };
            let mut sink = TapSink::<T, false> {
                inner: ObjectSink {
                    keep: &mut self.keep,
                    state: selector.state(0),
                    seen,
                    maybe_duplicates,
                    settle: selector.settle_at_top_after(maybe_duplicates),
                },
                tap,
                parent: 0,
            };
            let end = self.reader.members(&mut sink)?;
            let mut sink = sink.inner;
            match end {
                MembersEnd::Closed if !sink.maybe_duplicates => {
                    self.reader.next()?;
                    return Ok(Tapped::Flat);
                }
                MembersEnd::Closed => {
                    let duplicates = sink.maybe_duplicates;
                    let node = self.keep.close_object(start, duplicates);
                    self.reader.next()?;
                    return Ok(Tapped::Document(node));
                }
                MembersEnd::Container(name, next) => {
                    let name = sink.name(name, &next);
                    top = Frame::Object {
                        state: 0,
                        start,
                        seen: sink.seen,
                        maybe_duplicates: sink.maybe_duplicates,
                    };
                    self.keep.members.push(Member {
                        name,
                        value: Node::Null,
                    });
                    found = next;
                    event = self.reader.next()?;
                }
            }
        }
        self.frames.push(top);
        self.document_from(found.want, event)
    }

    /// Reads the members of an object kept as the value of the top-level name `parent` (at
    /// selector state `state`), giving its scalar members to `tap`
    /// ([`Tap::inner_scalar`]): `None` when it closed (its node is then the value of the last
    /// kept member), or where it stopped at a member whose value is a container: its frame, and
    /// what the container leads to with its first event (the member's name kept). `top`: the
    /// top-level object's `seen` bits and `maybe_duplicates` ([`Frame::Object`]).
    fn inner_members<T: Tap<'d>>(
        &mut self,
        tap: &mut T,
        parent: u32,
        state: u32,
        top: (u64, bool),
    ) -> Result<Option<InnerStop<'d>>, Error> {
        let selector: &'d Selector = self.keep.selector;
        let start = self.keep.members.len();
        let mut sink = TapSink::<T, true> {
            inner: ObjectSink {
                keep: &mut self.keep,
                state: selector.state(state),
                seen: 0,
                maybe_duplicates: false,
                settle: selector.settle_below_top(state, top.0, top.1),
            },
            tap,
            parent,
        };
        let end = self.reader.members(&mut sink)?;
        let mut sink = sink.inner;
        match end {
            MembersEnd::Closed => {
                let duplicates = sink.maybe_duplicates;
                let node = self.keep.close_object(start, duplicates);
                if let Some(m) = self.keep.members.last_mut() {
                    m.value = node;
                }
                Ok(None)
            }
            MembersEnd::Container(name, found) => {
                let name = sink.name(name, &found);
                let frame = Frame::Object {
                    state,
                    start,
                    seen: sink.seen,
                    maybe_duplicates: sink.maybe_duplicates,
                };
                self.keep.members.push(Member {
                    name,
                    value: Node::Null,
                });
                let event = self.reader.next()?;
                Ok(Some(InnerStop {
                    frame,
                    want: found.want,
                    event,
                }))
            }
        }
    }

    /// The document, from a value whose first event `event` was just read (`want`: what it
    /// leads to) with the open frames: [`Run::step`], then [`Run::run`] for the rest.
    #[inline(always)]
    fn document_from(&mut self, want: Want, event: Event<'d>) -> Result<Tapped<'d>, Error> {
        match self.step(want, None, event)? {
            Some(doc) => Ok(Tapped::Document(doc)),
            None => self.run().map(Tapped::Document),
        }
    }

    /// Reads the rest of the document, from the open frames.
    fn run(&mut self) -> Result<Node<'d>, Error> {
        loop {
            // What the value about to be read leads to, whether it is an array element (of a
            // transparent array or not), and its first event.
            let selector: &'d Selector = self.keep.selector;
            // As in the fast drivers: armed for the top-level object and an object directly
            // below it.
            let settle = match *self.frames.as_slice() {
                [
                    Frame::Object {
                        maybe_duplicates, ..
                    },
                ] => selector.settle_at_top_after(maybe_duplicates),
                [
                    Frame::Object {
                        seen: top_seen,
                        maybe_duplicates: top_duplicates,
                        ..
                    },
                    Frame::Object {
                        state,
                        maybe_duplicates: false,
                        ..
                    },
                ] => selector.settle_below_top(state, top_seen, top_duplicates),
                _ => NEVER_ALL_SEEN,
            };
            let (want, element, event) = match self.frames.last_mut() {
                None => (ROOT, None, self.reader.next()?),
                Some(&mut Frame::Object {
                    state,
                    start,
                    ref mut seen,
                    ref mut maybe_duplicates,
                }) => {
                    let mut sink = ObjectSink {
                        keep: &mut self.keep,
                        state: selector.state(state),
                        seen: *seen,
                        maybe_duplicates: *maybe_duplicates,
                        settle,
                    };
                    match self.reader.members(&mut sink)? {
                        MembersEnd::Closed => {
                            let duplicates = sink.maybe_duplicates;
                            self.frames.pop();
                            let node = self.keep.close_object(start, duplicates);
                            match self.deliver(node)? {
                                Some(doc) => return Ok(doc),
                                None => continue,
                            }
                        }
                        MembersEnd::Container(name, found) => {
                            let name = sink.name(name, &found);
                            *seen = sink.seen;
                            *maybe_duplicates = sink.maybe_duplicates;
                            // The member's value is given when the container closes.
                            self.keep.members.push(Member {
                                name,
                                value: Node::Null,
                            });
                            (found.want, None, self.reader.next()?)
                        }
                    }
                }
                Some(&mut Frame::Array {
                    want, transparent, ..
                }) => (want, Some(transparent), self.reader.next()?),
            };
            if let Some(doc) = self.step(want, element, event)? {
                return Ok(doc);
            }
        }
    }

    /// Reads the value whose first event `event` was just read (`want`: what it leads to;
    /// `element`: whether it is an array element, of a transparent array or not): keeps it, or
    /// opens its frame. Returns the document once complete.
    #[inline(always)]
    fn step(
        &mut self,
        want: Want,
        element: Option<bool>,
        event: Event<'d>,
    ) -> Result<Option<Node<'d>>, Error> {
        // Scalars in an array are leaves only where a path ends.
        let keep_scalar = element.is_none() || want.leaf;
        let node = match event {
            Event::String(s) if keep_scalar => Node::String(self.keep.string(s)),
            Event::Number(n) if keep_scalar => Node::Number(self.keep.text(n.bytes, n.start)),
            Event::Bool(b) if keep_scalar => Node::Bool(b),
            Event::Null if keep_scalar => Node::Null,
            Event::String(_) | Event::Number(_) | Event::Bool(_) | Event::Null => return Ok(None),
            Event::ObjectStart => match want.next {
                Some(state) => {
                    if self.frames.is_empty()
                        && let Some(listed) = self.keep.first_name.take()
                    {
                        // The top-level object: its first member's name.
                        self.note_first_name(listed);
                    }
                    self.frames.push(Frame::Object {
                        state,
                        start: self.keep.members.len(),
                        seen: 0,
                        maybe_duplicates: false,
                    });
                    return Ok(None);
                }
                None => {
                    self.skip_container()?;
                    if element.is_some() {
                        // An object at the leaf position inside an array is no leaf.
                        return Ok(None);
                    }
                    Node::Object(&[])
                }
            },
            Event::ArrayStart => match element {
                Some(true) if self.keep.selector.fields => {
                    self.frames.push(Frame::Array {
                        want,
                        transparent: true,
                        start: self.keep.nodes.len(),
                        flattened: 0,
                    });
                    return Ok(None);
                }
                Some(true) => {
                    if let Some(Frame::Array { flattened, .. }) = self.frames.last_mut() {
                        *flattened = flattened.saturating_add(1);
                    }
                    return Ok(None);
                }
                Some(false) => {
                    // A nested array inside an Event Grid array is no leaf.
                    self.skip_container()?;
                    return Ok(None);
                }
                None if self.frames.is_empty() || !(self.keep.selector.sns || want.leaf) => {
                    // The top level, or an Event Grid array no path ends at.
                    self.skip_container()?;
                    Node::Array(&[])
                }
                None => {
                    let sns = self.keep.selector.sns;
                    self.frames.push(Frame::Array {
                        want: if sns {
                            want
                        } else {
                            Want {
                                leaf: true,
                                next: None,
                            }
                        },
                        transparent: sns,
                        start: self.keep.nodes.len(),
                        flattened: 0,
                    });
                    return Ok(None);
                }
            },
            Event::ArrayEnd => {
                match self.frames.last_mut() {
                    Some(Frame::Array { flattened, .. }) if *flattened > 0 => {
                        *flattened -= 1;
                        return Ok(None);
                    }
                    _ => {}
                }
                let Some(Frame::Array { start, .. }) = self.frames.pop() else {
                    return Ok(None);
                };
                let nodes = &mut self.keep.nodes;
                let slice = self
                    .keep
                    .arena
                    .alloc_slice_copy(nodes.get(start..).unwrap_or_default());
                nodes.truncate(start);
                Node::Array(slice)
            }
            // Members and object ends are read by `Reader::members` above.
            Event::Name(_) | Event::ObjectEnd | Event::End => return Ok(None),
        };
        self.deliver(node)
    }
}

/// Collapses repeated names among `members[start..]`: the first occurrence's position keeps the
/// last occurrence's value (as `serde_json` with `preserve_order` reads them). Returns the end of
/// the collapsed members (the rest is to be dropped).
fn collapse_duplicates(members: &mut [Member<'_>], start: usize) -> usize {
    let Some(object) = members.get_mut(start..) else {
        return start;
    };
    let mut kept = 0;
    if object.len() <= 32 {
        for i in 0..object.len() {
            let Some(&m) = object.get(i) else { break };
            match object
                .get(..kept)
                .and_then(|k| k.iter().position(|seen| seen.name == m.name))
            {
                Some(j) => {
                    if let Some(seen) = object.get_mut(j) {
                        seen.value = m.value;
                    }
                }
                None => {
                    if let Some(slot) = object.get_mut(kept) {
                        *slot = m;
                    }
                    kept += 1;
                }
            }
        }
    } else {
        let mut first: AHashMap<&str, usize> = AHashMap::with_capacity(object.len());
        for i in 0..object.len() {
            let Some(&m) = object.get(i) else { break };
            match first.get(m.name) {
                Some(&j) => {
                    if let Some(seen) = object.get_mut(j) {
                        seen.value = m.value;
                    }
                }
                None => {
                    first.insert(m.name, kept);
                    if let Some(slot) = object.get_mut(kept) {
                        *slot = m;
                    }
                    kept += 1;
                }
            }
        }
    }
    start + kept
}

#[cfg(test)]
mod rest_names_tests {
    use super::RestNames;

    /// Whether `text` holds `"` followed by one of `names`, the plain way.
    fn holds(names: &[&str], text: &[u8]) -> bool {
        names.iter().any(|name| {
            let quoted = [b"\"", name.as_bytes()].concat();
            text.windows(quoted.len()).any(|w| w == quoted)
        })
    }

    /// However many names are searched for (none, one, or several searched for together), and
    /// however long the text (shorter and longer than a packed searcher's smallest haystack),
    /// a search finds a name exactly where the plain search does: drawn from an alphabet of
    /// quotes and the names' letters, so that near misses are common.
    #[test]
    fn rest_names_find_a_quoted_name_where_a_plain_search_does() {
        let pool = [
            "a",
            "b",
            "ab",
            "event",
            "region",
            "environment",
            "ba",
            "x",
            "zz",
            "ev",
            "",
            "environ",
        ];
        let alphabet = b"\"abenvtgiorx:,z";
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let (mut found, mut missed) = (0, 0);
        for _ in 0..20_000 {
            let count = next(6) as usize;
            let names: Vec<&str> = (0..count)
                .map(|_| pool[next(pool.len() as u64) as usize])
                .collect();
            let searcher = RestNames::new(names.iter().copied());
            let len = next(120) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                .collect();
            let expected = holds(&names, &text);
            assert_eq!(
                searcher.in_text(&text),
                expected,
                "{names:?} in {}",
                String::from_utf8_lossy(&text)
            );
            if expected { found += 1 } else { missed += 1 }
        }
        assert!(
            found > 2_000 && missed > 2_000,
            "{found} found, {missed} missed"
        );
    }
}

//! The exact judgement of one event: EB-8's search over a filter's normalized pattern
//! (`docs/dialects/eventbridge-patterns.md` EB-2, EB-3, EB-8..EB-10), for the events the binder's
//! rows cannot judge ([`Judgement::Unsupported`](filtervm_vm::bind::Judgement::Unsupported)).
//!
//! The compiled program judges an event with the binder's rows (one element chosen per array of
//! objects read by two keys), a value of an earlier-sorted path standing in for the element it lies
//! in. Two kinds of event break that (module `body` of `filtervm_vm::bind`, "Where rows fall
//! short"); the binder says so and the event is judged here instead, element by element, exactly
//! as EB-8 walks it:
//!
//! - each value of the event is found at its path with its **positions** (EB-3): for every array
//!   it lies in through an element that is an object or an array, that array and the element's
//!   index. Every occurrence of a repeated member name and every spelling of a dotted path
//!   (`{"a.b": ..}` beside `{"a": {"b": ..}}`) contributes its values, each with the positions of
//!   its own route;
//! - each branch (EB-5, enumerated from the factored [`Seq`]) walks its paths in UTF-16 order
//!   ([`super::branches::sorts_before`]) carrying the positions P fixed so far: a path either takes a value that
//!   agrees with P and satisfies one of its positive alternatives (adding its positions), or, when
//!   it has `{"exists": false}`, has no value agreeing with P (EB-10).
//!
//! This module shares no code with the reference interpreter (`conformance`); the value tests
//! are the VM's own predicates where the VM has them (wildcards, case patterns, addresses,
//! comparable numbers), so a value satisfies an alternative here exactly when it does in a row.
//!
//! # Bounds
//!
//! The search backtracks over the values of each path; two values with the same positions lead
//! to the same state and only the first is tried, and a state (path, P) found to fail is not
//! searched again. A value's positions are a chain of shared links (values in one element share
//! them), so finding every value of a path costs time and memory in proportion to the event.
//! Every step (a branch begun, a value, a position link or a remembered position looked at)
//! counts against [`MAX_SEARCH_STEPS`]; an event that would need more is an error
//! ([`ErrorCode::MessageTooComplex`]), never a guess, as the binder's own caps are. The walk of
//! the event follows the pattern's paths only, recursing at most once per level of the event it
//! descends (EB-34 bounds an event's nesting at 1,000 levels); the walk of a branch recurses
//! once per path (EB-32: at most 256).

use super::branches::{Seq, SeqOr, has_absence};
use super::parse::{Exclusion, Leaf, Matcher};
use crate::error::{CompileError, ErrorCode, MessageError};
use filtervm_vm::case_pattern::{CaseMode, CasePattern};
use filtervm_vm::json::{self, Value};
use filtervm_vm::number;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

/// Most steps (branches begun; values, position links and remembered positions looked at) one
/// event's search may take.
pub const MAX_SEARCH_STEPS: usize = 1 << 22;

/// A filter's pattern, kept so that an event its rows cannot judge is judged exactly: the pattern
/// text as compiled (member order and number spellings kept, EB-1) and, once first needed, its
/// normalized form. Cloning shares both.
#[derive(Debug, Clone)]
pub struct Pattern {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    text: Box<str>,
    seq: OnceLock<Result<Seq, String>>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.inner.text == other.inner.text
    }
}

impl Pattern {
    /// The pattern of `policy`, as its compact JSON text (member order, repeated names and number
    /// spellings kept).
    pub fn of(policy: &Value) -> Pattern {
        Pattern::from_text(policy.to_string().into())
    }

    fn from_text(text: Box<str>) -> Pattern {
        Pattern {
            inner: Arc::new(Inner {
                text,
                seq: OnceLock::new(),
            }),
        }
    }

    /// Reads a pattern back from its text ([`Pattern::text`]), validating it (EB-31..EB-33);
    /// returns it with its lowered IR, which a loader compares with the IR shipped beside it.
    pub fn read(text: &str) -> Result<(Pattern, crate::ir::Node), CompileError> {
        let policy = super::parse_text(text)?;
        let lowered = super::lower(&policy)?;
        let (seq, _) = super::validate(&policy)?;
        let pattern = Pattern::from_text(text.into());
        let _ = pattern.inner.seq.set(Ok(seq));
        Ok((pattern, lowered))
    }

    /// The pattern text.
    pub fn text(&self) -> &str {
        &self.inner.text
    }

    /// The heap bytes the pattern holds (its text; the normalized form once built is not
    /// counted).
    pub fn heap_bytes(&self) -> usize {
        self.inner.text.len()
    }

    fn seq(&self) -> Result<&Seq, MessageError> {
        self.inner
            .seq
            .get_or_init(|| {
                super::parse_text(&self.inner.text)
                    .and_then(|p| super::validate(&p))
                    .map(|(seq, _)| seq)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| {
                MessageError::new("", format!("the filter's stored pattern is invalid: {e}"))
            })
    }

    /// Judges `event` (a whole JSON document, every occurrence of a repeated member name kept)
    /// by EB-8's search. Errors: an event that is not a JSON object (EB-3,
    /// [`ErrorCode::InvalidMessage`]); a search beyond [`MAX_SEARCH_STEPS`]
    /// ([`ErrorCode::MessageTooComplex`]).
    pub fn matches(&self, event: &Value) -> Result<bool, MessageError> {
        if !matches!(event, Value::Object(_)) {
            return Err(MessageError::new(
                "",
                "an EventBridge event must be a JSON object (EB-3); this one is another JSON value",
            ));
        }
        let seq = self.seq()?;
        let mut search = Search::new(event);
        let mut leaves: Vec<&Leaf> = Vec::new();
        let mut pending: Vec<&SeqOr> = Vec::new();
        leaves.extend(seq.leaves.iter());
        pending.extend(seq.ors.iter());
        search
            .branches(&mut leaves, &mut pending)
            .map_err(|TooManySteps| too_complex())
    }

    /// Judges the JSON bytes of an event ([`Pattern::matches`]), read whole as the binder reads
    /// them: lone surrogate escapes as U+FFFD, every occurrence of a repeated member name kept.
    pub fn matches_bytes(&self, bytes: &[u8]) -> Result<bool, MessageError> {
        let mut options = json::ParseOptions::default();
        options.lone_surrogates = json::LoneSurrogates::Replace;
        options.duplicates = json::Duplicates::KeepAll;
        options.max_depth = super::MAX_EVENT_DEPTH + 1;
        let event = json::parse_with(bytes, &options).map_err(|e| MessageError {
            code: ErrorCode::MessageNotJson,
            pointer: String::new(),
            message: format!("the event is not JSON: {e}"),
        })?;
        self.matches(&event)
    }
}

/// The error of a search beyond [`MAX_SEARCH_STEPS`].
fn too_complex() -> MessageError {
    MessageError {
        code: ErrorCode::MessageTooComplex,
        pointer: String::new(),
        message: format!(
            "judging the event's `exists: false` element by element (EB-8, EB-10) needs more \
             than {MAX_SEARCH_STEPS} steps; it was treated as not matching"
        ),
    }
}

/// The search ran out of steps.
struct TooManySteps;

/// An array (its address) and an element's index: one entry of P.
type Position = (usize, usize);

/// One array element a value lies in (EB-3): the array (its address in the event tree, unique
/// while the tree lives), the element's index, and the element it lies in in turn, if any. A
/// value's positions are the chain of links from its innermost one up, so values in one element
/// share their links and the positions of all values take memory in proportion to the event.
struct Link {
    array: usize,
    index: usize,
    up: Option<usize>,
}

/// A value of a path and its innermost position (`None`: in no array through an element).
struct Found<'e> {
    value: &'e Value,
    at: Option<usize>,
}

struct Search<'e> {
    event: &'e Value,
    /// Every position met, chained ([`Link::up`]).
    links: Vec<Link>,
    /// Each path's values, found once per event.
    values: HashMap<String, Vec<Found<'e>>>,
    /// The positions fixed so far (P): array → index.
    fixed: HashMap<usize, usize>,
    /// The arrays of `fixed`, in the order they were fixed (undone when the walk backs up).
    order: Vec<usize>,
    /// The states of the current branch known to fail: the walk's place and P (sorted).
    failed: HashSet<(usize, Vec<Position>)>,
    steps: usize,
}

impl<'e> Search<'e> {
    fn new(event: &'e Value) -> Search<'e> {
        Search {
            event,
            links: Vec::new(),
            values: HashMap::new(),
            fixed: HashMap::new(),
            order: Vec::new(),
            failed: HashSet::new(),
            steps: 0,
        }
    }

    /// Counts `n` steps against [`MAX_SEARCH_STEPS`].
    fn step(&mut self, n: usize) -> Result<(), TooManySteps> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > MAX_SEARCH_STEPS {
            return Err(TooManySteps);
        }
        Ok(())
    }

    /// Whether some branch made of `leaves` and one alternative of each `$or` in `pending`
    /// (recursively) matches (EB-5).
    fn branches<'s>(
        &mut self,
        leaves: &mut Vec<&'s Leaf>,
        pending: &mut Vec<&'s SeqOr>,
    ) -> Result<bool, TooManySteps> {
        self.step(1)?;
        let Some(or) = pending.pop() else {
            return self.branch(leaves);
        };
        let mut matched = false;
        for (alternative, _) in &or.alternatives {
            let (l, p) = (leaves.len(), pending.len());
            leaves.extend(alternative.leaves.iter());
            pending.extend(alternative.ors.iter());
            matched = self.branches(leaves, pending)?;
            leaves.truncate(l);
            pending.truncate(p);
            if matched {
                break;
            }
        }
        pending.push(or);
        Ok(matched)
    }

    /// EB-8 on one branch.
    fn branch(&mut self, leaves: &[&Leaf]) -> Result<bool, TooManySteps> {
        let mut sorted: Vec<&Leaf> = leaves.to_vec();
        // UTF-16 order (Java `String` order, EB-8; `branches::sorts_before`).
        sorted.sort_by(|a, b| a.path.encode_utf16().cmp(b.path.encode_utf16()));
        for leaf in &sorted {
            if !self.values.contains_key(&leaf.path) {
                let mut found = Vec::new();
                let before = self.links.len();
                follow(self.event, &leaf.path, None, &mut self.links, &mut found);
                self.step(found.len() + (self.links.len() - before))?;
                self.values.insert(leaf.path.clone(), found);
            }
        }
        self.failed.clear();
        self.fixed.clear();
        self.order.clear();
        self.walk(&sorted, 0)
    }

    /// Whether the value whose innermost position is `at` agrees with P: no array is given two
    /// indices (EB-8). Counts the links it reads.
    fn agrees(&mut self, mut at: Option<usize>) -> Result<bool, TooManySteps> {
        let mut read = 0;
        let mut agrees = true;
        while let Some(link) = at.and_then(|i| self.links.get(i)) {
            read += 1;
            if self
                .fixed
                .get(&link.array)
                .is_some_and(|&i| i != link.index)
            {
                agrees = false;
                break;
            }
            at = link.up;
        }
        self.step(read)?;
        Ok(agrees)
    }

    /// Adds the positions of the value at `at` to P (it agrees with P).
    fn fix(&mut self, mut at: Option<usize>) {
        while let Some(link) = at.and_then(|i| self.links.get(i)) {
            if let std::collections::hash_map::Entry::Vacant(e) = self.fixed.entry(link.array) {
                e.insert(link.index);
                self.order.push(link.array);
            }
            at = link.up;
        }
    }

    /// Takes P back to its first `n` arrays.
    fn unfix(&mut self, n: usize) {
        for array in self.order.drain(n..) {
            self.fixed.remove(&array);
        }
    }

    /// EB-8's walk from the `k`-th path of `leaves` on, with P fixed so far.
    fn walk(&mut self, leaves: &[&Leaf], k: usize) -> Result<bool, TooManySteps> {
        let Some(leaf) = leaves.get(k) else {
            return Ok(true);
        };
        let mut p: Vec<Position> = self.fixed.iter().map(|(&a, &i)| (a, i)).collect();
        p.sort_unstable();
        self.step(p.len())?;
        let state = (k, p);
        if self.failed.contains(&state) {
            return Ok(false);
        }
        let count = self.values.get(&leaf.path).map_or(0, Vec::len);
        let mut any_agrees = false;
        // Values with the same innermost position have the same positions: one is tried.
        let mut tried: HashSet<Option<usize>> = HashSet::new();
        for i in 0..count {
            self.step(1)?;
            let Some((value, at)) = self
                .values
                .get(&leaf.path)
                .and_then(|v| v.get(i))
                .map(|f| (f.value, f.at))
            else {
                continue;
            };
            if !self.agrees(at)? {
                continue;
            }
            any_agrees = true;
            if tried.contains(&at) || !positive(leaf, value) {
                continue;
            }
            tried.insert(at);
            let n = self.order.len();
            self.fix(at);
            let matched = self.walk(leaves, k + 1)?;
            self.unfix(n);
            if matched {
                return Ok(true);
            }
        }
        // (b): `exists: false` holds when no value of the path agrees with P (EB-10).
        if has_absence(leaf) && !any_agrees && self.walk(leaves, k + 1)? {
            return Ok(true);
        }
        self.failed.insert(state);
        Ok(false)
    }
}

/// An array's address in the event tree: it identifies the array while the tree lives.
fn array_id(items: &Vec<Value>) -> usize {
    std::ptr::from_ref(items).addr()
}

/// Finds the values at `rest` of the path from `node`, which lies in the element `at` (EB-2,
/// EB-3): a member named `N` continues the path when `rest` is `N` (the member's value is at the
/// leaf position) or starts with `N.`; before the leaf position arrays are transparent (scalar
/// elements ignored), each object or array element adding its position. Recurses once per level
/// of the event it descends (EB-34 bounds them).
fn follow<'e>(
    node: &'e Value,
    rest: &str,
    at: Option<usize>,
    links: &mut Vec<Link>,
    out: &mut Vec<Found<'e>>,
) {
    match node {
        Value::Object(members) => {
            for (name, value) in members {
                if name == rest {
                    leaf(value, at, links, out);
                } else if let Some(below) = rest
                    .strip_prefix(name.as_str())
                    .and_then(|r| r.strip_prefix('.'))
                {
                    follow(value, below, at, links, out);
                }
            }
        }
        Value::Array(items) => {
            let array = array_id(items);
            for (index, item) in items.iter().enumerate() {
                if matches!(item, Value::Object(_) | Value::Array(_)) {
                    links.push(Link {
                        array,
                        index,
                        up: at,
                    });
                    follow(item, rest, Some(links.len() - 1), links, out);
                }
            }
        }
        _ => {}
    }
}

/// The values at a leaf position in the element `at`: a scalar is one; an array gives its
/// scalars (no position for the array they sit in directly) and those of nested arrays (with the
/// nested array's element position, EB-3); objects are no values.
fn leaf<'e>(node: &'e Value, at: Option<usize>, links: &mut Vec<Link>, out: &mut Vec<Found<'e>>) {
    match node {
        Value::Object(_) => {}
        Value::Array(items) => {
            let array = array_id(items);
            for (index, item) in items.iter().enumerate() {
                match item {
                    Value::Object(_) => {}
                    Value::Array(_) => {
                        links.push(Link {
                            array,
                            index,
                            up: at,
                        });
                        leaf(item, Some(links.len() - 1), links, out);
                    }
                    _ => out.push(Found { value: item, at }),
                }
            }
        }
        _ => out.push(Found { value: node, at }),
    }
}

/// Whether `value` satisfies one of `leaf`'s alternatives other than `{"exists": false}` (EB-8 a).
fn positive(leaf: &Leaf, value: &Value) -> bool {
    leaf.alternatives.iter().any(|(m, _)| holds(m, value))
}

/// The comparable value of a number (EB-17), `None` for other values and non-comparable numbers.
fn comparable(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => number::comparable(n.as_str()),
        _ => None,
    }
}

/// Whether `value` satisfies alternative `m` (EB-12..EB-30).
fn holds(m: &Matcher, value: &Value) -> bool {
    let text = match value {
        Value::String(s) => Some(s.as_str()),
        _ => None,
    };
    let case = |s: &str, mode: CaseMode| text.is_some_and(|t| CasePattern::new(s, mode).matches(t));
    match m {
        Matcher::Exact(s) | Matcher::Exactly(s) => text == Some(s.as_str()),
        Matcher::Address(block) | Matcher::Cidr(block) => {
            text.is_some_and(|t| block.contains_text(t))
        }
        Matcher::Number { value: Some(x), .. } => comparable(value) == Some(*x),
        Matcher::Number {
            text: t,
            value: None,
        } => {
            matches!(value, Value::Number(n) if n.as_str() == t)
        }
        Matcher::Bool(b) => matches!(value, Value::Bool(v) if v == b),
        Matcher::Null => value.is_null(),
        Matcher::Prefix(s) => text.is_some_and(|t| t.starts_with(s.as_str())),
        Matcher::Suffix(s) => text.is_some_and(|t| t.ends_with(s.as_str())),
        Matcher::PrefixIgnoreCase(s) => case(s, CaseMode::Prefix),
        Matcher::SuffixIgnoreCase(s) => case(s, CaseMode::Suffix),
        Matcher::EqualsIgnoreCase(s) => case(s, CaseMode::Equals),
        Matcher::Wildcard(w) => text.is_some_and(|t| w.matches(t)),
        Matcher::Numeric { lo, hi } => comparable(value)
            .is_some_and(|x| crate::dialect::sns::lower::interval(*lo, *hi).contains(x)),
        Matcher::Exists(true) => true,
        Matcher::Exists(false) => false,
        Matcher::AnythingBut(exclusion) => !excluded(exclusion, value, text),
    }
}

/// Whether `anything-but` excludes `value` (EB-23, EB-24); every other value passes (EB-25).
fn excluded(exclusion: &Exclusion, value: &Value, text: Option<&str>) -> bool {
    let any = |f: &dyn Fn(&str) -> bool| text.is_some_and(f);
    match exclusion {
        Exclusion::Strings(v) => any(&|t| v.iter().any(|s| s == t)),
        Exclusion::Numbers(v) => comparable(value).is_some_and(|x| v.contains(&x)),
        Exclusion::Prefixes(v) => any(&|t| v.iter().any(|s| t.starts_with(s.as_str()))),
        Exclusion::Suffixes(v) => any(&|t| v.iter().any(|s| t.ends_with(s.as_str()))),
        Exclusion::EqualsIgnoreCase(v) => any(&|t| {
            v.iter()
                .any(|s| CasePattern::new(s, CaseMode::Equals).matches(t))
        }),
        Exclusion::Wildcards(v) => any(&|t| v.iter().any(|w| w.matches(t))),
    }
}

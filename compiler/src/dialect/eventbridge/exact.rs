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
//! searched again. Every step (a branch begun, a value looked at) counts against
//! [`MAX_SEARCH_STEPS`]; an event that would need more is an error
//! ([`ErrorCode::MessageTooComplex`]), never a guess, as the binder's own caps are. The walk of
//! the event follows the pattern's paths only, recursing at most once per object level of a path
//! and once per nested array (EB-34 bounds an event's nesting at 1,000 levels).

use super::branches::{Seq, SeqOr, has_absence};
use super::parse::{Exclusion, Leaf, Matcher};
use crate::error::{CompileError, ErrorCode, MessageError};
use filtervm_vm::case_pattern::{CaseMode, CasePattern};
use filtervm_vm::json::{self, Value};
use filtervm_vm::number;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

/// Most steps (branches begun, values looked at) one event's search may take.
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
        let mut search = Search {
            event,
            values: HashMap::new(),
            failed: HashSet::new(),
            steps: 0,
        };
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

/// One array element a value lies in: the array (its address in the event tree, unique while
/// the tree lives) and the element's index.
type Position = (usize, usize);

/// A value of a path and its positions (EB-3).
struct Found<'e> {
    value: &'e Value,
    positions: Vec<Position>,
}

struct Search<'e> {
    event: &'e Value,
    /// Each path's values, found once per event.
    values: HashMap<String, Vec<Found<'e>>>,
    /// The states of the current branch known to fail: the walk's place and P (sorted).
    failed: HashSet<(usize, Vec<Position>)>,
    steps: usize,
}

impl<'e> Search<'e> {
    fn step(&mut self) -> Result<(), TooManySteps> {
        self.steps += 1;
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
        self.step()?;
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
                let mut positions = Vec::new();
                follow(self.event, &leaf.path, &mut positions, &mut found);
                self.values.insert(leaf.path.clone(), found);
            }
        }
        self.failed.clear();
        let mut fixed = Vec::new();
        self.walk(&sorted, 0, &mut fixed)
    }

    /// EB-8's walk from path `k` on, with positions `fixed` (P) fixed so far.
    fn walk(
        &mut self,
        leaves: &[&Leaf],
        k: usize,
        fixed: &mut Vec<Position>,
    ) -> Result<bool, TooManySteps> {
        let Some(leaf) = leaves.get(k) else {
            return Ok(true);
        };
        let mut state = fixed.clone();
        state.sort_unstable();
        let state = (k, state);
        if self.failed.contains(&state) {
            return Ok(false);
        }
        let count = self.values.get(&leaf.path).map_or(0, Vec::len);
        let mut any_agrees = false;
        let mut tried: Vec<Vec<Position>> = Vec::new();
        for i in 0..count {
            self.step()?;
            let (agrees, candidate) = match self.values.get(&leaf.path).and_then(|v| v.get(i)) {
                Some(found) => {
                    let agrees = agree(&found.positions, fixed);
                    let candidate = agrees
                        && !tried.contains(&found.positions)
                        && positive(leaf, found.value);
                    (agrees, candidate.then(|| found.positions.clone()))
                }
                None => (false, None),
            };
            any_agrees |= agrees;
            let Some(positions) = candidate else {
                continue;
            };
            let before = fixed.len();
            fixed.extend(positions.iter().copied());
            let matched = self.walk(leaves, k + 1, fixed)?;
            fixed.truncate(before);
            if matched {
                return Ok(true);
            }
            tried.push(positions);
        }
        // (b): `exists: false` holds when no value of the path agrees with P (EB-10).
        if has_absence(leaf) && !any_agrees && self.walk(leaves, k + 1, fixed)? {
            return Ok(true);
        }
        self.failed.insert(state);
        Ok(false)
    }
}

/// Whether a value with `positions` agrees with `fixed`: no array is given two indices (EB-8).
fn agree(positions: &[Position], fixed: &[Position]) -> bool {
    positions
        .iter()
        .all(|&(array, index)| fixed.iter().all(|&(a, i)| a != array || i == index))
}

/// The address of an array in the event tree: it identifies the array while the tree lives.
fn array_id(items: &Vec<Value>) -> usize {
    std::ptr::from_ref(items).addr()
}

/// Finds the values at `rest` of the path from `node` (EB-2, EB-3): a member named `N`
/// continues the path when `rest` is `N` (the member's value is at the leaf position) or starts
/// with `N.`; before the leaf position arrays are transparent (scalar elements ignored), each
/// object or array element adding its position.
fn follow<'e>(node: &'e Value, rest: &str, positions: &mut Vec<Position>, out: &mut Vec<Found<'e>>) {
    match node {
        Value::Object(members) => {
            for (name, value) in members {
                if name == rest {
                    leaf(value, positions, out);
                } else if let Some(below) = rest
                    .strip_prefix(name.as_str())
                    .and_then(|r| r.strip_prefix('.'))
                {
                    follow(value, below, positions, out);
                }
            }
        }
        Value::Array(items) => {
            let id = array_id(items);
            for (i, item) in items.iter().enumerate() {
                if matches!(item, Value::Object(_) | Value::Array(_)) {
                    positions.push((id, i));
                    follow(item, rest, positions, out);
                    positions.pop();
                }
            }
        }
        _ => {}
    }
}

/// The values at a leaf position: a scalar is one; an array gives its scalars (no position for
/// the array they sit in directly) and those of nested arrays (with the nested array's element
/// position, EB-3); objects are no values.
fn leaf<'e>(node: &'e Value, positions: &mut Vec<Position>, out: &mut Vec<Found<'e>>) {
    match node {
        Value::Object(_) => {}
        Value::Array(items) => {
            let id = array_id(items);
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::Object(_) => {}
                    Value::Array(_) => {
                        positions.push((id, i));
                        leaf(item, positions, out);
                        positions.pop();
                    }
                    _ => out.push(Found {
                        value: item,
                        positions: positions.clone(),
                    }),
                }
            }
        }
        _ => out.push(Found {
            value: node,
            positions: positions.clone(),
        }),
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
        Matcher::Number { text: t, value: None } => {
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

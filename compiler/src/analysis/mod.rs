//! Policy analysis: a message a filter matches (or does not), whether two filters match exactly
//! the same messages (and witness messages where they do not), and what a subscription set holds
//! that can never or always match.
//!
//! A filter's IR is a boolean formula over typed tests on keys. Each location a key reads (an
//! attribute, a header, a path into the document) has finitely many classes of values that the
//! filters' constants tell apart ([`classes`]), so whether some message makes a formula hold is
//! decided by searching one class per location ([`search`]). Every message the search returns
//! is judged by the VM (as the VM's [`Message`] and as the JSON document shown) before it is
//! returned; the caller can judge it by the reference interpreter too ([`Witness::vectors`] are
//! the conformance vector shape, `conformance/FORMAT.md`).
//!
//! Exact — a proof over every message, not a sample — for equality, sets, prefix, suffix,
//! equals-ignore-case on ASCII constants, numeric ranges, exists / absent, CIDR blocks, types,
//! anything-but and their and / or / not combinations. Bounded, and said so
//! ([`Exactness::Bounded`]), for wildcards, substring tests, dot-segment patterns, ignore-case
//! constants beyond ASCII, exact-decimal bounds beyond binary64, SNS bodies' arrays of objects
//! (judged element by element, sns rule 18), paths nested in one another, and documents compared
//! across dialects: they read a member named twice (sns the last, EventBridge every one, EB-3,
//! Event Grid the first) and Event Grid's member names of another case (EG-16) differently,
//! which the search tries only as variants of the messages it finds.
//!
//! Documents compared across dialects can be decided exactly under named [`Assumptions`] about
//! the documents, enforced in the witness space (the search never builds a document the
//! assumption excludes, and searches every other class exactly): `canonical-documents` (as a
//! JSON encoder writes them: no member named twice, numbers in their shortest round-trip form,
//! member names spelled as the filters spell them) and `no-arrays` (no array at or on the way
//! to a member the filters read). [`diff_assuming`] names them in its answer.

mod assume;
pub mod audit;
pub mod classes;
pub mod model;
pub mod search;
pub mod translate;

use crate::{Filter, Options};
pub use assume::Assumptions;
use filtervm_vm::json::{Map, Value};
use filtervm_vm::message::Message;
use model::Model;
use search::{Formula, Found, Space};
use std::fmt;

/// Whether an answer that found no message is a proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exactness {
    /// Every class of every location was searched: the answer holds for every message.
    Exact,
    /// Only a bounded set of candidate values was searched; the reason says which.
    Bounded(String),
}

impl Exactness {
    fn of(why_not: Option<String>) -> Exactness {
        why_not.map_or(Exactness::Exact, Exactness::Bounded)
    }
}

/// A message found by the analysis, judged by the VM.
#[derive(Debug, Clone)]
pub struct Witness {
    /// The message as the VM reads it.
    pub message: Message,
    /// The message as a JSON document in the first filter's dialect shape (what `filtervm
    /// match` reads).
    pub document: Value,
    /// The message in the conformance vector shape of each filter's dialect (what the
    /// reference interpreter reads), one per filter analysed.
    pub vectors: Vec<Value>,
    /// The VM's verdict of each filter analysed on it.
    pub verdicts: Vec<bool>,
}

/// Why an analysis could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalysisError {
    /// A stable code: `ANALYSIS_MODEL_MISMATCH` (filters reading different message parts),
    /// `ANALYSIS_NO_IR` (a filter loaded without its IR), `ANALYSIS_VERIFY` (a witness the VM
    /// judged otherwise when read back from its document: a bug).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for AnalysisError {}

/// The answer of [`example`].
#[derive(Debug, Clone)]
pub enum Example {
    /// A message with the verdict asked for.
    Found(Witness),
    /// No message has that verdict: the filter never matches (asked for a match) or matches
    /// every message (asked for a non-match) — a proof when [`Exactness::Exact`].
    NoneExists(Exactness),
}

/// A message `filter` matches (`matching`), or one it does not.
pub fn example(filter: &Filter, matching: bool) -> Result<Example, AnalysisError> {
    let space = space(vec![filter], Assumptions::NONE)?;
    let f = space
        .formulas
        .first()
        .cloned()
        .unwrap_or(Formula::Const(false));
    let target = if matching {
        f
    } else {
        Formula::Not(Box::new(f))
    };
    let judge = move |v: &[bool]| v.first() == Some(&matching);
    Ok(match space.search(&target, &judge) {
        Found::Yes(message, _) => Example::Found(witness(&space, message)?),
        Found::No { why_not_exact } => Example::NoneExists(Exactness::of(why_not_exact)),
    })
}

/// Whether two filters match the same messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// They match exactly the same messages (proved).
    Same,
    /// Some message is matched by one and not the other (a witness shows it).
    Different,
    /// No difference was found within a bounded search.
    Unknown,
}

impl Verdict {
    /// The verdict's name in JSON and on the command line: `same`, `different`, `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Different => "different",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One location's part in a difference.
#[derive(Debug, Clone)]
pub struct KeyDifference {
    /// The attribute, header or path (`amount`, `data.size`).
    pub key: String,
    /// Values of the key (one per class, with the tests they satisfy and fail) that the first
    /// filter admits and the second does not, every other key as in a message both match (or,
    /// when none exists, as in a witness).
    pub first_only: Vec<String>,
    /// The same, admitted by the second filter and not the first.
    pub second_only: Vec<String>,
}

/// The answer of [`diff`].
#[derive(Debug, Clone)]
pub struct Diff {
    /// Same, different or unknown.
    pub verdict: Verdict,
    /// A message the first filter matches and the second does not.
    pub first_only: Option<Witness>,
    /// A message the second filter matches and the first does not.
    pub second_only: Option<Witness>,
    /// Per key, the values that make the difference (empty when the filters are the same).
    pub keys: Vec<KeyDifference>,
    /// Why a side with no witness is not proved (`Exact`: every side without a witness is).
    pub exactness: Exactness,
    /// What was assumed of the documents: "same" holds for every document they admit, and
    /// each witness is such a document.
    pub assumptions: Assumptions,
}

/// Compares two filters over the same message model.
pub fn diff(first: &Filter, second: &Filter) -> Result<Diff, AnalysisError> {
    diff_assuming(first, second, Assumptions::NONE)
}

/// Compares two filters over the same message model, over the documents `assume` admits: the
/// search builds no other document, so "same" is a proof over every document admitted and each
/// witness is one of them ([`Diff::assumptions`] names what was assumed).
pub fn diff_assuming(
    first: &Filter,
    second: &Filter,
    assume: Assumptions,
) -> Result<Diff, AnalysisError> {
    let space = space(vec![first, second], assume)?;
    // Assumptions narrow documents only: for attributes and headers nothing is assumed.
    let assume = if space.model == Model::Document {
        assume
    } else {
        Assumptions::NONE
    };
    let (a, b) = match space.formulas.as_slice() {
        [a, b] => (a.clone(), b.clone()),
        _ => return Err(internal("two formulas expected")),
    };
    let only =
        |x: &Formula, y: &Formula| Formula::And(vec![x.clone(), Formula::Not(Box::new(y.clone()))]);
    let mut witnesses = Vec::new();
    let mut why_not = None;
    let mut choices: Vec<Vec<usize>> = Vec::new();
    for (side, target) in [(0usize, only(&a, &b)), (1, only(&b, &a))] {
        let judge = move |v: &[bool]| matches!((side, v), (0, [true, false]) | (1, [false, true]));
        match space.search(&target, &judge) {
            Found::Yes(message, choice) => {
                choices.push(choice);
                witnesses.push(Some(witness(&space, message)?));
            }
            Found::No { why_not_exact } => {
                witnesses.push(None);
                if why_not.is_none() {
                    why_not = why_not_exact;
                }
            }
        }
    }
    let mut respelled_keys: Vec<(String, String, bool)> = Vec::new();
    let mut it = witnesses.into_iter();
    let (mut first_only, mut second_only) = (it.next().flatten(), it.next().flatten());
    if (space.respell || space.duplicates) && (first_only.is_none() || second_only.is_none()) {
        for (message, key, what) in variants(&space, &[a.clone(), b.clone()]) {
            let first = match space.verdicts(&message).as_deref() {
                Some([true, false]) if first_only.is_none() => true,
                Some([false, true]) if second_only.is_none() => false,
                _ => continue,
            };
            let w = Some(witness(&space, message)?);
            if first {
                first_only = w;
            } else {
                second_only = w;
            }
            respelled_keys.push((key, what, first));
        }
    }
    let verdict = if first_only.is_some() || second_only.is_some() {
        Verdict::Different
    } else if why_not.is_none() {
        Verdict::Same
    } else {
        Verdict::Unknown
    };
    let keys = if verdict == Verdict::Different {
        // Per key, from a message both match (else from a witness): the values of that key
        // alone that one filter admits and the other does not.
        let both = Formula::And(vec![a.clone(), b.clone()]);
        let base = match space.search(&both, &|v: &[bool]| v == [true, true]) {
            Found::Yes(_, choice) if !choice.is_empty() => Some(choice),
            _ => choices.into_iter().find(|c| !c.is_empty()),
        };
        let mut keys = Vec::new();
        // A varied member first: the witness shown for that side is its message.
        for (key, what, first) in respelled_keys {
            keys.push(KeyDifference {
                key,
                first_only: if first {
                    vec![what.clone()]
                } else {
                    Vec::new()
                },
                second_only: if first { Vec::new() } else { vec![what] },
            });
        }
        keys.extend(base.map(|c| summary(&space, &c)).unwrap_or_default());
        keys
    } else {
        Vec::new()
    };
    Ok(Diff {
        verdict,
        first_only,
        second_only,
        keys,
        exactness: Exactness::of(why_not),
        assumptions: assume,
    })
}

/// `exact` (a proof) and `reason` (why not: `null` when exact) of an answer, into `out` (the
/// JSON forms of `example`, `diff` and `audit`).
pub fn exactness_json(out: &mut Map, exact: &Exactness) {
    out.insert("exact".into(), Value::Bool(*exact == Exactness::Exact));
    out.insert(
        "reason".into(),
        match exact {
            Exactness::Exact => Value::Null,
            Exactness::Bounded(why) => Value::from(why.as_str()),
        },
    );
}

/// The JSON form of an [`example`] answer asked with `matching`, as `filtervm example --json`
/// and the bindings give it: `{"found": true, "matches", "message"}` (the message in the
/// filter's dialect shape) or `{"found": false, "matches", "exact", "reason"}`.
pub fn example_json(answer: &Example, matching: bool) -> Value {
    let mut out = Map::new();
    match answer {
        Example::Found(w) => {
            out.insert("found".into(), Value::Bool(true));
            out.insert("matches".into(), Value::Bool(matching));
            out.insert("message".into(), w.document.clone());
        }
        Example::NoneExists(exact) => {
            out.insert("found".into(), Value::Bool(false));
            out.insert("matches".into(), Value::Bool(matching));
            exactness_json(&mut out, exact);
        }
    }
    Value::Object(out)
}

/// The JSON form of a [`Diff`], as `filtervm diff --json` and the bindings give it:
/// `{"verdict": "same" | "different" | "unknown", "exact", "reason", "first_only",
/// "second_only" (a message or `null`), "keys": [{"key", "first_only", "second_only"}]}`, and
/// `"assuming": [NAME, ...]` when something was assumed ([`diff_assuming`]).
pub fn diff_json(d: &Diff) -> Value {
    let mut out = Map::new();
    out.insert("verdict".into(), Value::from(d.verdict.name()));
    exactness_json(&mut out, &d.exactness);
    let doc = |w: &Option<Witness>| w.as_ref().map_or(Value::Null, |w| w.document.clone());
    out.insert("first_only".into(), doc(&d.first_only));
    out.insert("second_only".into(), doc(&d.second_only));
    let strings = |v: &[String]| Value::Array(v.iter().map(|s| Value::from(s.as_str())).collect());
    let keys = d
        .keys
        .iter()
        .map(|k| {
            Value::Object(Map::from_iter([
                ("key".to_owned(), Value::from(k.key.as_str())),
                ("first_only".to_owned(), strings(&k.first_only)),
                ("second_only".to_owned(), strings(&k.second_only)),
            ]))
        })
        .collect();
    out.insert("keys".into(), Value::Array(keys));
    if !d.assumptions.is_none() {
        out.insert("assuming".into(), d.assumptions.to_json());
    }
    Value::Object(out)
}

/// Variants of the messages the search finds on either side of each formula, each with the
/// member it varies (its location's label) and how, for what the search does not build:
///
/// - top-level member names respelled ([`Space::respell`]): Event Grid finds a member ignoring
///   ASCII case (EG-16), the other dialects only by its exact name; one variant per member the
///   Event Grid filter reads, and one with all of them respelled;
/// - a member named twice ([`Space::duplicates`]): sns keeps the last occurrence, EventBridge
///   every one (EB-3), Event Grid the first; for each two messages found holding a member with
///   different values, the first with that member repeated, the other's value before or after.
fn variants(space: &Space<'_>, formulas: &[Formula]) -> Vec<(Message, String, String)> {
    let mut bases: Vec<Vec<(String, Value)>> = Vec::new();
    for f in formulas {
        for want in [true, false] {
            let target = if want {
                f.clone()
            } else {
                Formula::Not(Box::new(f.clone()))
            };
            let found = space.search(&target, &|_| true);
            let Found::Yes(Message::Body(bytes), _) = found else {
                continue;
            };
            if let Ok(Value::Object(members)) = filtervm_vm::json::parse(&bytes) {
                bases.push(
                    members
                        .iter()
                        .map(|(n, v)| (n.clone(), v.clone()))
                        .collect(),
                );
            }
        }
    }
    let text = |members: &[(String, Value)]| {
        let body: Vec<String> = members
            .iter()
            .map(|(n, v)| format!("{}:{v}", Value::from(n.as_str())))
            .collect();
        Message::Body(format!("{{{}}}", body.join(",")).into_bytes())
    };
    let mut out = Vec::new();
    if space.respell {
        let read = |name: &str| {
            let lower = name.to_ascii_lowercase();
            lower == "data" || space.spelled.contains_key(&lower)
        };
        let other = |name: &str| {
            let upper = name.to_ascii_uppercase();
            if upper == name {
                name.to_ascii_lowercase()
            } else {
                upper
            }
        };
        for members in &bases {
            let names: Vec<&String> = members
                .iter()
                .map(|(n, _)| n)
                .filter(|n| read(n) && other(n) != **n)
                .collect();
            let each = names.iter().map(|n| vec![*n]);
            for renamed in each.chain((names.len() > 1).then(|| names.clone())) {
                let varied: Vec<(String, Value)> = members
                    .iter()
                    .map(|(n, v)| {
                        let n = if renamed.contains(&n) {
                            other(n)
                        } else {
                            n.clone()
                        };
                        (n, v.clone())
                    })
                    .collect();
                let first = renamed.first().map_or_else(String::new, |n| (*n).clone());
                let what = format!(
                    "the member spelled `{}` instead of `{first}` (Event Grid finds it \
                     ignoring ASCII case, EG-16; the other dialect only as spelled)",
                    other(&first)
                );
                out.push((text(&varied), first.to_ascii_lowercase(), what));
            }
        }
    }
    if space.duplicates {
        // Other values of a top-level member: a few plain ones, and each class of each location
        // below it as the member's value (at most `MAX_ALTERNATES`).
        const MAX_ALTERNATES: usize = 64;
        let alternates = |name: &str| -> Vec<Value> {
            // Values no constant tells apart from one another, then the classes'.
            let mut out: Vec<Value> = vec![Value::from(""), Value::Null, Value::Bool(false)];
            for c in &space.locs {
                let model::Loc::Path(p) = &c.loc else {
                    continue;
                };
                if p.first().map(String::as_str) != Some(name) {
                    continue;
                }
                for class in &c.classes {
                    let Some(v) = &class.value else { continue };
                    let doc = model::document(&vec![(&c.loc, v)]);
                    if let Some(member) = doc.as_ref().and_then(|d| d.get(name))
                        && !out.contains(member)
                        && out.len() < MAX_ALTERNATES
                    {
                        out.push(member.clone());
                    }
                }
            }
            out
        };
        for members in &bases {
            for (k, (name, value)) in members.iter().enumerate() {
                for alt in alternates(name).iter().filter(|a| *a != value) {
                    for (before, after) in [(alt, value), (value, alt)] {
                        let mut varied = members.clone();
                        varied.splice(
                            k..=k,
                            [
                                (name.clone(), before.clone()),
                                (name.clone(), after.clone()),
                            ],
                        );
                        let what = format!(
                            "the member `{name}` named twice, {before} then {after} (sns reads \
                             the last, EventBridge every one, EB-3, Event Grid the first)"
                        );
                        out.push((text(&varied), name.clone(), what));
                    }
                }
            }
        }
    }
    out
}

/// The message model of `options` (for messages and errors).
pub fn model_of(options: &Options) -> Model {
    Model::of(options)
}

fn space<'f>(filters: Vec<&'f Filter>, assume: Assumptions) -> Result<Space<'f>, AnalysisError> {
    let model = filters
        .first()
        .map(|f| Model::of(f.options()))
        .ok_or_else(|| internal("no filter"))?;
    for f in &filters {
        let m = Model::of(f.options());
        if m != model {
            return Err(AnalysisError {
                code: "ANALYSIS_MODEL_MISMATCH",
                message: format!(
                    "a {} filter ({}) reads {}, a {} filter ({}) reads {}: filters can be \
                     compared only when they read the same part of a message",
                    filters
                        .first()
                        .map_or("?".into(), |f| f.dialect().to_string()),
                    filters
                        .first()
                        .map_or("?".into(), |f| f.options().to_string()),
                    model.name(),
                    f.dialect(),
                    f.options(),
                    m.name()
                ),
            });
        }
    }
    Space::new(model, filters, assume).map_err(|message| AnalysisError {
        code: "ANALYSIS_NO_IR",
        message,
    })
}

fn internal(message: &str) -> AnalysisError {
    AnalysisError {
        code: "ANALYSIS_VERIFY",
        message: message.to_owned(),
    }
}

/// The witness of a message the search returned: its document, read back and judged by the VM
/// again, must give the same verdicts as the message.
fn witness(space: &Space<'_>, message: Message) -> Result<Witness, AnalysisError> {
    let verdicts = space
        .verdicts(&message)
        .ok_or_else(|| internal("the VM could not judge a witness it built"))?;
    let first = space.filters.first().ok_or_else(|| internal("no filter"))?;
    let document = model::document_of(first.options(), &message);
    let mut ev = crate::Evaluator::new();
    for (f, v) in space.filters.iter().zip(&verdicts) {
        let doc = model::document_of(f.options(), &message);
        let read = ev
            .matches_document(f, doc.to_string().as_bytes())
            .map_err(|e| internal(&format!("the witness {doc} cannot be read back: {e}")))?;
        if read != *v {
            return Err(internal(&format!(
                "the witness {doc} read back as a document gets another verdict ({read}) than \
                 the message built ({v})"
            )));
        }
    }
    let vectors = space
        .filters
        .iter()
        .map(|f| model::vector_message(f.options(), &message))
        .collect();
    Ok(Witness {
        message,
        document,
        vectors,
        verdicts,
    })
}

/// Per location, with every other location as in `base`: the classes (described) the first
/// filter alone matches, and those the second alone matches; locations with neither are left
/// out.
fn summary(space: &Space<'_>, base: &[usize]) -> Vec<KeyDifference> {
    let mut out = Vec::new();
    for (i, c) in space.locs.iter().enumerate() {
        if c.tests.is_empty() {
            continue;
        }
        let (mut first_only, mut second_only) = (Vec::new(), Vec::new());
        for (k, class) in c.classes.iter().enumerate() {
            let mut alt = base.to_vec();
            if let Some(slot) = alt.get_mut(i) {
                *slot = k;
            }
            match space
                .message_of(&alt)
                .and_then(|m| space.verdicts(&m))
                .as_deref()
            {
                Some([true, false]) => first_only.push(describe(class, &c.tests)),
                Some([false, true]) => second_only.push(describe(class, &c.tests)),
                _ => {}
            }
        }
        if !first_only.is_empty() || !second_only.is_empty() {
            out.push(KeyDifference {
                key: c.loc.label(),
                first_only,
                second_only,
            });
        }
    }
    out
}

/// A class as a person reads it: its value, the tests it satisfies and those it does not (each
/// test with its key when the location is read by more than one kind of key).
fn describe(class: &classes::Class, tests: &[(filtervm_vm::key::Key, crate::ir::Pred)]) -> String {
    let value = match &class.value {
        None => "absent".to_owned(),
        Some(Value::Object(m)) if m.len() == 1 && m.get(model::NUMBER_TEXT).is_some() => format!(
            "a Number attribute {}",
            m.get(model::NUMBER_TEXT)
                .map_or_else(String::new, Value::to_string)
        ),
        Some(v) => v.to_string(),
    };
    let keyed = tests
        .iter()
        .any(|(k, _)| tests.first().is_some_and(|(f, _)| f != k));
    let parts: Vec<String> = tests
        .iter()
        .zip(&class.bits)
        .map(|((k, p), held)| {
            let test = if keyed {
                format!("{k} {p}")
            } else {
                p.to_string()
            };
            if *held { test } else { format!("not {test}") }
        })
        .collect();
    format!("{value} ({})", parts.join("; "))
}

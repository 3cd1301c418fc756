//! The search: a choice of one class per location that makes a target formula hold, found by
//! depth-first search with three-valued evaluation (a branch is cut as soon as the formula is
//! false whatever the remaining locations hold), each complete choice then built into a message
//! and judged by the VM.

use super::assume::Assumptions;
use super::classes::{self, Allow, Classes};
use super::model::{self, Loc, Model, Reads};
use crate::ir::{Node, NodeKind, Pred};
use crate::{Evaluator, Filter, Options};
use filtervm_vm::json::Value;
use filtervm_vm::key::Key;
use filtervm_vm::message::Message;
use std::collections::BTreeMap;

/// The most choices (complete or not) one search visits before it gives up.
pub(crate) const MAX_STEPS: usize = 2_000_000;

/// A formula over class choices.
#[derive(Debug, Clone)]
pub(crate) enum Formula {
    Const(bool),
    And(Vec<Formula>),
    Or(Vec<Formula>),
    Not(Box<Formula>),
    /// Test `bit` of location `loc`.
    Atom(usize, usize),
    /// Some attribute location is present (sns rule 12).
    AnyAttribute,
}

/// The search space of a set of filters over one model.
pub(crate) struct Space<'f> {
    pub(crate) model: Model,
    pub(crate) filters: Vec<&'f Filter>,
    pub(crate) locs: Vec<Classes>,
    pub(crate) formulas: Vec<Formula>,
    pub(crate) spelled: BTreeMap<String, String>,
    /// Why a search that finds nothing is not a proof (`None`: it is).
    pub(crate) bounded: Option<String>,
    /// Messages judged as wholes before the search (an SNS body that is not an object).
    pub(crate) wholes: Vec<Message>,
    /// Whether an Event Grid filter (top-level member names read ignoring ASCII case, EG-16) is
    /// compared with a filter reading them by exact name: messages found are then worth
    /// trying with their members respelled ([`super::diff`]).
    pub(crate) respell: bool,
    /// Whether documents are compared by dialects that read a member named twice differently
    /// (sns keeps the last, EventBridge every one, EB-3, Event Grid the first spelled exactly
    /// so): messages found are then worth trying with a member repeated ([`super::diff`]).
    pub(crate) duplicates: bool,
}

/// How a search ended.
pub(crate) enum Found {
    /// A message the target holds on, judged by the VM, and the class chosen per location.
    Yes(Message, Vec<usize>),
    /// None: `exact` when the search covered every class of every location.
    No { why_not_exact: Option<String> },
}

impl<'f> Space<'f> {
    /// The space of `filters` (all of `model`), narrowed to the documents `assume` admits.
    pub(crate) fn new(
        model: Model,
        filters: Vec<&'f Filter>,
        assume: Assumptions,
    ) -> Result<Space<'f>, String> {
        let documents = model == Model::Document;
        // Assumptions narrow documents only.
        let canonical = documents && assume.canonical_documents;
        let no_arrays = documents && assume.no_arrays;
        // Documents read by two dialects (sns bodies, EventBridge, Event Grid).
        let across = documents
            && filters
                .iter()
                .any(|f| filters.first().is_some_and(|g| g.dialect() != f.dialect()));
        let mut spelled = BTreeMap::new();
        let mut bounded: Option<String> = None;
        let mut per_loc: BTreeMap<Loc, Vec<(Key, Pred)>> = BTreeMap::new();
        // Whether some key is judged element by element in arrays of objects (sns rule 18,
        // EventBridge EB-9, EB-10).
        let mut each = false;
        // Event Grid reads top-level member names ignoring ASCII case (EG-16), the other
        // dialects by exact name: compared, the spellings the search does not try matter.
        let (mut member_any_case, mut member_exact) = (false, false);
        let mut roots = Vec::new();
        for f in &filters {
            let root = f
                .ir()
                .ok_or("the filter was loaded without its IR (first wire format)")?;
            for (key, pred) in model::tests(root) {
                if matches!(key, Key::BodyPathEach(_) | Key::FieldPath(..)) {
                    each = true;
                }
                // `data` itself is found ignoring ASCII case too (EG-16, EG-18).
                member_any_case |= matches!(key, Key::EventMember(_) | Key::EventData(_));
                member_exact |= matches!(
                    key,
                    Key::BodyPath(_) | Key::BodyPathEach(_) | Key::FieldPath(..)
                );
                // One SNS path read element by element in several places (sns rule 18): the
                // rows of an array of objects on it tell it from an array of values.
                if let Key::BodyPathEach(p) = &key
                    && p.contains('.')
                    && !no_arrays
                {
                    bounded.get_or_insert_with(|| {
                        format!(
                            "`{p}` is judged element by element in arrays of objects (sns rule \
                             18), which are not searched"
                        )
                    });
                }
                if let Reads::At(loc) = model::reads(&key, &mut spelled) {
                    let tests = per_loc.entry(loc).or_default();
                    if !tests.iter().any(|(k, p)| *k == key && *p == pred) {
                        tests.push((key, pred));
                    }
                }
            }
            roots.push(root);
        }
        let allow = |f: &Filter| match f.options() {
            Options::Basaltic | Options::Stream => Allow {
                arrays: false,
                strings_only: matches!(f.options(), Options::Stream),
                json: false,
                canonical_numbers: false,
            },
            Options::Expr(_) => Allow {
                arrays: true,
                strings_only: true,
                json: false,
                canonical_numbers: false,
            },
            Options::Sns(_) if model == Model::Attributes => Allow {
                arrays: true,
                strings_only: false,
                json: false,
                canonical_numbers: false,
            },
            _ => Allow {
                arrays: true,
                strings_only: false,
                json: true,
                canonical_numbers: false,
            },
        };
        // The values every filter's dialect can carry: the narrowest.
        let allow = filters.iter().map(|f| allow(f)).fold(
            Allow {
                arrays: true,
                strings_only: false,
                json: true,
                canonical_numbers: false,
            },
            |a, b| Allow {
                arrays: a.arrays && b.arrays,
                strings_only: a.strings_only || b.strings_only,
                json: a.json && b.json,
                canonical_numbers: false,
            },
        );
        // What the assumptions exclude is never built: no array at a location (none on the way
        // to one is ever built), no number but in its shortest round-trip form.
        let allow = Allow {
            arrays: allow.arrays && !no_arrays,
            canonical_numbers: canonical,
            ..allow
        };
        // Under canonical-documents, member names are spelled as the filters spell them: the
        // case variants Event Grid alone finds are excluded, not merely unsearched.
        let respell = member_any_case && member_exact && !canonical;
        if respell {
            bounded.get_or_insert_with(|| {
                "Event Grid reads member names ignoring ASCII case (EG-16) and the other dialect \
                 by exact name; member names are searched only as the policies spell them"
                    .to_owned()
            });
        }
        // Under canonical-documents no member is named twice.
        let duplicates = across && !canonical;
        if duplicates {
            bounded.get_or_insert_with(|| {
                "the dialects read a member named twice differently (sns the last, EventBridge \
                 every one, EB-3, Event Grid the first): messages repeating a member are tried \
                 only as variants of the messages found"
                    .to_owned()
            });
        }
        if across && !no_arrays {
            // Arrays holding objects or arrays are not built, and the dialects read them
            // differently: Event Grid finds nothing through an array (EG-18), sns and
            // EventBridge look through them, judging `exists: false` per element (sns D-3) or
            // across elements (EB-10). Arrays of values are searched.
            bounded.get_or_insert_with(|| {
                "the dialects read arrays of objects and arrays in arrays differently (EG-18; sns \
                 D-3 against EB-10), which are not searched (assume no-arrays to exclude them)"
                    .to_owned()
            });
        }
        let paths: Vec<&Loc> = per_loc.keys().collect();
        for a in &paths {
            for b in &paths {
                if let (Loc::Path(x), Loc::Path(y)) = (a, b)
                    && a < b
                    && each
                    && !no_arrays
                    && x.len() > 1
                    && y.len() > 1
                    && x.first() == y.first()
                {
                    bounded.get_or_insert_with(|| {
                        format!(
                            "`{}` and `{}` could meet in one array of objects, judged element by \
                             element; arrays of objects are not searched",
                            a.label(),
                            b.label()
                        )
                    });
                }
                if let (Loc::Path(x), Loc::Path(y)) = (a, b)
                    && x.len() < y.len()
                    && y.starts_with(x)
                {
                    bounded.get_or_insert_with(|| {
                        format!(
                            "`{}` and `{}` overlap: values of one nested in the other are \
                             searched only as objects",
                            a.label(),
                            b.label()
                        )
                    });
                }
            }
        }
        let mut locs: Vec<Classes> = per_loc
            .into_iter()
            .map(|(loc, tests)| classes::classes(model, allow, &loc, tests))
            .collect();
        for c in &locs {
            if let Some(why) = &c.bounded {
                bounded.get_or_insert_with(|| {
                    format!(
                        "`{}`: {why} (within {} candidate values)",
                        c.loc.label(),
                        c.candidates
                    )
                });
            }
        }
        let mut any_attribute = false;
        let mut formulas = Vec::new();
        for root in roots {
            let f = formula(root, &locs, &mut spelled, &mut any_attribute)?;
            formulas.push(f);
        }
        if any_attribute {
            // An attribute no filter names: present or not, it decides rule 12 alone.
            let mut name = "other".to_owned();
            while locs
                .iter()
                .any(|c| c.loc == Loc::Attr(name.as_str().into()))
            {
                name.push('_');
            }
            let loc = Loc::Attr(name.into());
            locs.push(classes::classes(model, allow, &loc, Vec::new()));
            if let Some(last) = locs.last_mut() {
                last.classes.push(classes::Class {
                    value: Some(Value::from("x")),
                    bits: Vec::new(),
                });
            }
        }
        let mut wholes = Vec::new();
        if model == Model::Document && filters.iter().all(|f| f.dialect() == crate::Dialect::Sns) {
            // An SNS body need not be a JSON object (sns rule 14).
            wholes.push(Message::Body(b"not JSON".to_vec()));
            wholes.push(Message::Body(b"[1]".to_vec()));
        }
        Ok(Space {
            model,
            filters,
            locs,
            formulas,
            spelled,
            bounded,
            wholes,
            respell,
            duplicates,
        })
    }

    /// The message of a complete choice.
    pub(crate) fn message_of(&self, choice: &[usize]) -> Option<Message> {
        let picked: model::Choice<'_> = self
            .locs
            .iter()
            .zip(choice)
            .filter_map(|(c, &i)| {
                let value = c.classes.get(i)?.value.as_ref()?;
                Some((&c.loc, value))
            })
            .collect();
        model::message(self.model, &picked)
    }

    /// The VM's verdict of each filter on `message`; `None` when one cannot judge it.
    pub(crate) fn verdicts(&self, message: &Message) -> Option<Vec<bool>> {
        let mut ev = Evaluator::new();
        self.filters
            .iter()
            .map(|f| ev.try_matches(f, message).ok())
            .collect()
    }

    /// A choice on which `target` (over the formulas) holds and whose message the VM judges so
    /// (`judge` over the verdicts).
    pub(crate) fn search(&self, target: &Formula, judge: &dyn Fn(&[bool]) -> bool) -> Found {
        for whole in &self.wholes {
            if self.verdicts(whole).is_some_and(|v| judge(&v)) {
                return Found::Yes(whole.clone(), Vec::new());
            }
        }
        let mut st = State {
            choice: vec![None; self.locs.len()],
            steps: 0,
            misses: 0,
        };
        if let Some((m, c)) = self.dfs(0, target, judge, &mut st) {
            return Found::Yes(m, c);
        }
        let why_not_exact = if st.steps >= MAX_STEPS {
            Some(format!("the search stopped after {MAX_STEPS} steps"))
        } else if st.misses > 0 {
            Some(format!(
                "{} choices of values could not be made one message the VM judged as predicted",
                st.misses
            ))
        } else {
            self.bounded.clone()
        };
        Found::No { why_not_exact }
    }

    fn dfs(
        &self,
        depth: usize,
        target: &Formula,
        judge: &dyn Fn(&[bool]) -> bool,
        st: &mut State,
    ) -> Option<(Message, Vec<usize>)> {
        st.steps += 1;
        if st.steps >= MAX_STEPS {
            return None;
        }
        match self.eval(target, &st.choice) {
            Some(false) => return None,
            Some(true) | None if depth >= self.locs.len() => {
                let full: Vec<usize> = st.choice.iter().map(|c| c.unwrap_or(0)).collect();
                match self.message_of(&full) {
                    Some(m) if self.verdicts(&m).is_some_and(|v| judge(&v)) => {
                        return Some((m, full));
                    }
                    _ => {
                        st.misses += 1;
                        return None;
                    }
                }
            }
            _ => {}
        }
        let n = self.locs.get(depth).map_or(0, |c| c.classes.len());
        for i in 0..n {
            if let Some(slot) = st.choice.get_mut(depth) {
                *slot = Some(i);
            }
            if let Some(found) = self.dfs(depth + 1, target, judge, st) {
                return Some(found);
            }
            if st.steps >= MAX_STEPS {
                break;
            }
        }
        if let Some(slot) = st.choice.get_mut(depth) {
            *slot = None;
        }
        None
    }

    /// Three-valued evaluation: `None` while the choice leaves it open.
    pub(crate) fn eval(&self, f: &Formula, choice: &[Option<usize>]) -> Option<bool> {
        match f {
            Formula::Const(b) => Some(*b),
            Formula::Atom(loc, bit) => {
                let class = (*choice.get(*loc)?)?;
                self.locs
                    .get(*loc)?
                    .classes
                    .get(class)?
                    .bits
                    .get(*bit)
                    .copied()
            }
            Formula::Not(c) => self.eval(c, choice).map(|b| !b),
            Formula::And(cs) => {
                let mut open = false;
                for c in cs {
                    match self.eval(c, choice) {
                        Some(false) => return Some(false),
                        None => open = true,
                        Some(true) => {}
                    }
                }
                if open { None } else { Some(true) }
            }
            Formula::Or(cs) => {
                let mut open = false;
                for c in cs {
                    match self.eval(c, choice) {
                        Some(true) => return Some(true),
                        None => open = true,
                        Some(false) => {}
                    }
                }
                if open { None } else { Some(false) }
            }
            Formula::AnyAttribute => {
                let mut open = false;
                for (c, chosen) in self.locs.iter().zip(choice) {
                    match chosen {
                        Some(i) if c.classes.get(*i).is_some_and(|k| k.value.is_some()) => {
                            return Some(true);
                        }
                        Some(_) => {}
                        None => open = true,
                    }
                }
                if open { None } else { Some(false) }
            }
        }
    }
}

struct State {
    choice: Vec<Option<usize>>,
    steps: usize,
    misses: usize,
}

/// The formula of an IR tree over the locations' classes.
fn formula(
    node: &Node,
    locs: &[Classes],
    spelled: &mut BTreeMap<String, String>,
    any_attribute: &mut bool,
) -> Result<Formula, String> {
    let all = |cs: &[Node], spelled: &mut BTreeMap<String, String>, any: &mut bool| {
        cs.iter()
            .map(|c| formula(c, locs, spelled, any))
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(match &node.kind {
        NodeKind::True => Formula::Const(true),
        NodeKind::False => Formula::Const(false),
        NodeKind::And(cs) => Formula::And(all(cs, spelled, any_attribute)?),
        NodeKind::Or(cs) => Formula::Or(all(cs, spelled, any_attribute)?),
        NodeKind::Not(c) => Formula::Not(Box::new(formula(c, locs, spelled, any_attribute)?)),
        NodeKind::Test(t) => match model::reads(&t.key, spelled) {
            Reads::AnyAttribute => {
                *any_attribute = true;
                Formula::AnyAttribute
            }
            // Bodies searched are objects; bodies that are not are judged whole first.
            Reads::BodyIsObject => Formula::Const(true),
            Reads::At(loc) => {
                let (i, c) = locs
                    .iter()
                    .enumerate()
                    .find(|(_, c)| c.loc == loc)
                    .ok_or_else(|| format!("no classes for {}", loc.label()))?;
                let bit = c
                    .tests
                    .iter()
                    .position(|(k, p)| *k == t.key && *p == t.pred)
                    .ok_or_else(|| format!("no test {} at {}", t.pred, loc.label()))?;
                Formula::Atom(i, bit)
            }
        },
    })
}

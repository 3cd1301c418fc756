//! A subscription set as the bindings hold it: the facade's [`SubscriptionSet`] keyed by
//! `u64` (each binding maps its own ids onto them), matched with the ids of the subscriptions
//! that match and the groups that could not judge the message — never all or nothing.

use crate::error::{Detail, Failure, FailureKind};
use crate::filter::Filter;
use crate::message::Input;
use filtervm::{Attributes, Headers, ReadMode, SetScratch, SubscriptionSet, UnjudgedGroup};
use std::cell::RefCell;
use std::collections::HashMap;

/// A group of subscriptions (one dialect and options value) that could not judge a message:
/// its subscriptions are in no result, and the caller is told why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unjudged {
    /// The group's dialect (`stream`, ...).
    pub dialect: &'static str,
    /// The group's options as JSON text, every option written out.
    pub options: String,
    /// The number of its subscriptions.
    pub subscriptions: usize,
    /// The stable code of why (`MESSAGE_SHAPE`, `INVALID_MESSAGE`, ...).
    pub code: &'static str,
    /// A JSON Pointer into the message.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl From<UnjudgedGroup> for Unjudged {
    fn from(group: UnjudgedGroup) -> Unjudged {
        Unjudged {
            dialect: group.options.dialect().name(),
            options: group.options.to_json().to_string(),
            subscriptions: group.subscriptions,
            code: group.error.code.as_str(),
            pointer: group.error.pointer,
            message: group.error.message,
        }
    }
}

impl Unjudged {
    /// The error of a strict match (Python's `matching(strict=True)`, Java's
    /// `matchingStrict`): a message failure with one detail per group that could not judge the
    /// message, each naming the group.
    pub fn strict_failure(groups: &[Unjudged]) -> Failure {
        Failure {
            kind: FailureKind::Message,
            details: groups
                .iter()
                .map(|g| Detail {
                    code: g.code,
                    pointer: g.pointer.clone(),
                    message: format!(
                        "{} {} subscription{} with options {} could not judge the message: {}",
                        g.subscriptions,
                        g.dialect,
                        if g.subscriptions == 1 { "" } else { "s" },
                        g.options,
                        g.message
                    ),
                })
                .collect(),
        }
    }
}

thread_local! {
    /// Each thread's matching buffers (they serve any set).
    static SCRATCH: RefCell<SetScratch> = RefCell::new(SetScratch::new());
    /// The same, reading in [`ReadMode::Trusted`].
    static TRUSTED_SCRATCH: RefCell<SetScratch> = RefCell::new(scratch_in(ReadMode::Trusted));
}

/// New matching buffers that read in `mode`.
fn scratch_in(mode: ReadMode) -> SetScratch {
    let mut scratch = SetScratch::new();
    scratch.set_read_mode(mode);
    scratch
}

/// Many subscriptions of any dialects and options, matched together; ids are the caller's.
/// `add` and `remove` take `&mut self`; `matching` takes `&self` and may run on several threads at
/// once (each thread matches with its own buffers).
#[derive(Debug, Default)]
pub struct Set {
    set: SubscriptionSet<u64>,
    /// Per subscription: the names of the attributes its filter reads (`None`: it reads more
    /// of the attributes, [`filtervm::Filter::attribute_names`]).
    names: HashMap<u64, Option<Box<[Box<str>]>>>,
    /// Changes with every change of the set.
    generation: u64,
}

impl Set {
    /// An empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// The number of subscriptions.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether the set holds no subscription.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Whether subscription `id` is in the set.
    pub fn contains(&self, id: u64) -> bool {
        self.set.contains(&id)
    }

    /// Adds subscription `id` with `filter`, replacing its filter if `id` is already there. A
    /// filter loaded from bytes of the first wire format (no IR) is refused
    /// (`FILTER_WITHOUT_IR`); a set that cannot take one more filter is `SET_FULL`.
    pub fn add(&mut self, id: u64, filter: &Filter) -> Result<(), Failure> {
        self.set.insert(id, filter.facade())?;
        let names = filter
            .attribute_names()
            .map(|names| names.into_iter().map(Box::from).collect());
        self.names.insert(id, names);
        self.generation = self.generation.wrapping_add(1);
        Ok(())
    }

    /// Removes subscription `id`; false when it was not in the set.
    pub fn remove(&mut self, id: u64) -> bool {
        self.names.remove(&id);
        self.generation = self.generation.wrapping_add(1);
        self.set.remove(&id)
    }

    /// A number that changes with every `add` and `remove`: what [`Set::attribute_names`] says
    /// holds while it stays the same.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The names of the attributes whose values the set's filters read, each once, when they
    /// are all the filters read of a message's attributes (`None`: some filter reads more; see
    /// [`filtervm::Filter::attribute_names`]). A binding whose caller gives attributes as a map
    /// looks up these names only.
    pub fn attribute_names(&self) -> Option<Vec<&str>> {
        let mut all = std::collections::HashSet::new();
        for names in self.names.values() {
            all.extend(names.as_deref()?.iter().map(|name| &**name));
        }
        Some(all.into_iter().collect())
    }

    /// Appends to `ids` the ids whose filter matches `input`, in the order they were first
    /// added, and to `unjudged` each group of subscriptions that could not judge it (the facade's
    /// [`SubscriptionSet::matching`]: each group reads its part, and the other groups still
    /// deliver). Returns whether every group judged the message.
    pub fn matching<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &self,
        input: &Input<'_, A, H>,
        ids: &mut Vec<u64>,
        unjudged: &mut Vec<Unjudged>,
    ) -> bool {
        self.matching_in(input, ReadMode::Validating, ids, unjudged)
    }

    /// [`Set::matching`], reading a JSON document or body in `mode` (with
    /// [`ReadMode::Trusted`], members no filter reads are skipped by their structure alone: the
    /// facade's [`SetScratch::set_read_mode`]).
    pub fn matching_in<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &self,
        input: &Input<'_, A, H>,
        mode: ReadMode,
        ids: &mut Vec<u64>,
        unjudged: &mut Vec<Unjudged>,
    ) -> bool {
        let message = input.message();
        let mut run = |scratch: &mut SetScratch| {
            let matches = self.set.matching(scratch, &message);
            ids.extend(matches.ids());
            let before = unjudged.len();
            unjudged.extend(matches.unjudged().map(Unjudged::from));
            unjudged.len() == before
        };
        let buffers = match mode {
            ReadMode::Validating => &SCRATCH,
            ReadMode::Trusted => &TRUSTED_SCRATCH,
        };
        let cached =
            buffers.try_with(|scratch| scratch.try_borrow_mut().ok().map(|mut s| run(&mut s)));
        match cached {
            Ok(Some(complete)) => complete,
            // Another match on this thread holds the buffers (or the thread is ending): fresh
            // ones.
            _ => run(&mut scratch_in(mode)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DocumentInput;

    #[test]
    fn a_strict_failure_names_each_group_that_could_not_judge() {
        let mut set = Set::new();
        let stream = Filter::compile("stream", b"a = x", None).unwrap();
        let sns = Filter::compile("sns", b"{}", None).unwrap();
        set.add(1, &stream).unwrap();
        set.add(2, &stream).unwrap();
        set.add(3, &sns).unwrap();
        let (mut ids, mut unjudged) = (Vec::new(), Vec::new());
        let input: DocumentInput<'_> = Input::Document(br#"{"attributes": {}}"#);
        assert!(!set.matching(&input, &mut ids, &mut unjudged));
        assert_eq!(ids, [3]);
        let failure = Unjudged::strict_failure(&unjudged);
        assert_eq!(failure.kind, FailureKind::Message);
        assert_eq!(failure.details.len(), 1);
        let detail = failure.details.first().unwrap();
        assert_eq!(detail.code, "MESSAGE_SHAPE");
        assert!(
            detail
                .message
                .starts_with("2 stream subscriptions with options"),
            "{}",
            detail.message
        );
    }

    #[test]
    fn a_set_reads_the_attribute_names_of_the_filters_it_holds() {
        let filter = |dialect: &str, policy: &str| {
            Filter::compile(dialect, policy.as_bytes(), None).unwrap()
        };
        let mut set = Set::new();
        let sorted = |set: &Set| {
            set.attribute_names().map(|mut names| {
                names.sort_unstable();
                names.into_iter().map(str::to_owned).collect::<Vec<_>>()
            })
        };
        assert_eq!(sorted(&set), Some(vec![]));
        let start = set.generation();
        set.add(1, &filter("sns", r#"{"a": ["x"], "b": ["y"]}"#))
            .unwrap();
        set.add(2, &filter("sns", r#"{"b": ["z"]}"#)).unwrap();
        set.add(3, &filter("stream", "h = v")).unwrap();
        assert_ne!(set.generation(), start);
        assert_eq!(sorted(&set), Some(vec!["a".to_owned(), "b".to_owned()]));
        // A filter that reads whether the message has any attribute needs them all.
        set.add(4, &filter("sns", r#"{"c": [{"exists": false}]}"#))
            .unwrap();
        assert_eq!(sorted(&set), None);
        let before = set.generation();
        assert!(set.remove(4));
        assert_ne!(set.generation(), before);
        set.remove(1);
        assert_eq!(sorted(&set), Some(vec!["b".to_owned()]));
    }
}

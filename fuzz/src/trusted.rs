//! `message_trusted`: arbitrary bytes read in trusted mode ([`ReadMode::Trusted`]), against the
//! validating mode.
//!
//! The first byte picks a selector; the rest is the document. Checked, on any input: nothing
//! panics (nor loops or overflows: libFuzzer's `-timeout` and `-rss_limit_mb`), and wherever the
//! validating mode accepts the input, the trusted mode gives exactly its answer:
//!
//! - the message reader ([`Extractor`]) with that selector: the same pruned document and the
//!   same measured depth;
//! - every fixed policy of the public vectors that reads a JSON body (SNS in body scope, Event
//!   Grid in both schemas), through [`Evaluator::matches_document`] and
//!   [`Evaluator::matches_bytes`]: the same verdict or error;
//! - all those policies as one [`SubscriptionSet`]: the same ids, and the same unjudged groups
//!   with the same errors.
//!
//! When the validating mode rejects the input (it is not JSON), trusted mode may judge it: only
//! "no panic" applies, as the facade's documentation ("Trusted input") says.

use crate::{Fixed, policies};
use filtervm_compiler::{
    Dialect, Evaluator, Options, ReadMode, SetScratch, SnsScope, SubscriptionSet,
};
use filtervm_vm::json::{self, Extractor, LoneSurrogates, Selector};
use std::sync::OnceLock;

/// Selectors of every kind: SNS body paths (dotted, several), none, Event Grid members and
/// `data` paths, and a path into arrays.
fn selectors() -> &'static [Selector] {
    static SELECTORS: OnceLock<Vec<Selector>> = OnceLock::new();
    SELECTORS.get_or_init(|| {
        vec![
            Selector::body_paths(["a", "a.b", "b"]),
            Selector::body_paths(["x.y.z"]),
            Selector::body_paths(Vec::<&str>::new()),
            Selector::event(["subject", "eventType"], [["a", "b"]]),
            Selector::body_paths(["detail.items.name", "source"]),
        ]
    })
}

/// The fixed policies that read a JSON body.
fn body_policies() -> &'static [&'static Fixed] {
    static POLICIES: OnceLock<Vec<&'static Fixed>> = OnceLock::new();
    POLICIES.get_or_init(|| {
        let mut all = policies(Dialect::Sns, |o: &Options| {
            o.sns().scope == SnsScope::MessageBody
        });
        all.extend(policies(Dialect::EventGrid, |_| true));
        all
    })
}

/// The body policies as one set (ids: their index).
fn set() -> &'static SubscriptionSet<usize> {
    static SET: OnceLock<SubscriptionSet<usize>> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = SubscriptionSet::new();
        for (id, fixed) in body_policies().iter().enumerate() {
            set.insert(id, &fixed.filter)
                .expect("a vector's policy joins a set");
        }
        set
    })
}

/// The `message_trusted` target (see the module documentation).
pub fn check(data: &[u8]) {
    let Some((&choice, doc)) = data.split_first() else {
        return;
    };
    let shown = || String::from_utf8_lossy(doc).into_owned();
    let valid = json::validate(doc, LoneSurrogates::Replace).is_ok();

    let selectors = selectors();
    let selector = &selectors[usize::from(choice) % selectors.len()];
    let mut validating = Extractor::new();
    let mut trusted = Extractor::new();
    trusted.set_read_mode(ReadMode::Trusted);
    let checked = validating
        .extract_measured(selector, doc)
        .map(|(node, deepest)| (node.to_string(), deepest));
    let skipped = trusted
        .extract_measured(selector, doc)
        .map(|(node, deepest)| (node.to_string(), deepest));
    assert_eq!(
        checked.is_ok(),
        valid,
        "the reader and validate differ on {:?}",
        shown()
    );
    if checked.is_ok() {
        assert_eq!(skipped, checked, "reader, selector {choice}: {:?}", shown());
    }

    let mut validating = Evaluator::new();
    let mut trusted = Evaluator::new();
    trusted.set_read_mode(ReadMode::Trusted);
    for fixed in body_policies() {
        let filter = &fixed.filter;
        let document = (
            validating.matches_document(filter, doc),
            trusted.matches_document(filter, doc),
        );
        let bytes = (
            validating.matches_bytes(filter, doc),
            trusted.matches_bytes(filter, doc),
        );
        if valid {
            assert_eq!(
                document.1,
                document.0,
                "document, {}: {:?}",
                fixed.policy,
                shown()
            );
            assert_eq!(bytes.1, bytes.0, "bytes, {}: {:?}", fixed.policy, shown());
        }
    }

    let set = set();
    let mut scratch = SetScratch::new();
    let seen = |scratch: &mut SetScratch| {
        let matches = set.matching_document(scratch, doc);
        let ids: Vec<usize> = matches.ids().copied().collect();
        let unjudged: Vec<String> = matches
            .unjudged()
            .map(|u| format!("{u}: {} {}", u.error.code.as_str(), u.error.message))
            .collect();
        (ids, unjudged)
    };
    let checked = seen(&mut scratch);
    scratch.set_read_mode(ReadMode::Trusted);
    let skipped = seen(&mut scratch);
    if valid {
        assert_eq!(skipped, checked, "set: {:?}", shown());
    }
}

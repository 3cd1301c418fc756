//! Every situation of the message table (`filtervm/MESSAGES.md`) through the Rust API, from the
//! fixture every entry point reads (`tests/situations.jsonl`; the C ABI, Python, `filtervm match`
//! and `route`, and replay run the same cases and must give the same verdicts and codes).
//!
//! A case is a JSON object: `situation` (the table's id), `dialect`, `options` (optional),
//! `policy` (JSON; a string is the stream text form), and a message: `parts` — `{"body": TEXT,
//! "attributes": [[NAME, TYPE, VALUE], ...], "headers": {NAME: VALUE or [VALUES]}}`, each part
//! optional — or `document`, one JSON document's text. `expect` is `match`, `no-match` or the
//! stable code of the error. A message of parts is also given as the document of those parts,
//! `parts_document` (`{"body", "attributes": {NAME: {"Type", "Value"}}, "headers"}`; this test
//! checks it is that document), which must mean the same — unless the case gives
//! `parts_document_expect`, the outcome of that document where the dialect reads a document
//! otherwise than parts (an `eventbridge` filter: the whole document is the event, EB-1, so
//! `{"attributes": ...}` is an event with a member `attributes`).
//! `lines_split`: for a batch given whole, the verdict of each event when `filtervm match` and
//! `route` split the line.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm::{
    AttributeType, Dialect, Filter, Message, MessageError, MessagePart, Options, SetScratch,
    SubscriptionSet,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// The fixture's cases.
fn cases() -> Vec<Value> {
    let text = include_str!("../../tests/situations.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn filter(case: &Value) -> Filter {
    let dialect: Dialect = case["dialect"].as_str().unwrap().parse().unwrap();
    let options = Options::from_json(dialect, case.get("options").unwrap_or(&Value::Null)).unwrap();
    let policy = match &case["policy"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    Filter::new(options, &policy).unwrap()
}

/// The document form of a message of parts (what the fixture's `parts_document` must hold).
fn document_of(parts: &Value) -> Value {
    let mut doc = serde_json::Map::new();
    if let Some(body) = parts.get("body") {
        doc.insert("body".into(), body.clone());
    }
    if let Some(attributes) = parts.get("attributes") {
        let mut map = serde_json::Map::new();
        for a in attributes.as_array().unwrap() {
            map.insert(
                a[0].as_str().unwrap().into(),
                serde_json::json!({"Type": a[1], "Value": a[2]}),
            );
        }
        doc.insert("attributes".into(), Value::Object(map));
    }
    if let Some(headers) = parts.get("headers") {
        doc.insert("headers".into(), headers.clone());
    }
    Value::Object(doc)
}

/// A verdict or a code, as the fixture writes it.
fn outcome(result: Result<bool, MessageError>) -> String {
    match result {
        Ok(true) => "match".into(),
        Ok(false) => "no-match".into(),
        Err(e) => e.code.as_str().into(),
    }
}

/// Runs `f` on the case's message of parts, borrowed as a broker holds it (an attribute of a
/// type the library does not know is the part given unreadable, as the bindings give it).
fn with_parts<R>(
    parts: &Value,
    f: impl FnOnce(&Message<'_, [(&str, AttributeType, &str)], BTreeMap<&str, Vec<&str>>>) -> R,
) -> R {
    let mut unreadable = None;
    let attributes: Option<Vec<(&str, AttributeType, &str)>> = parts.get("attributes").map(|a| {
        a.as_array()
            .unwrap()
            .iter()
            .filter_map(|a| {
                let name = a[0].as_str().unwrap();
                match AttributeType::from_name(a[1].as_str().unwrap()) {
                    Some(t) => Some((name, t, a[2].as_str().unwrap())),
                    None => {
                        unreadable = Some(MessageError::new(
                            format!("/attributes/{name}/Type"),
                            "unknown attribute type",
                        ));
                        None
                    }
                }
            })
            .collect()
    });
    let headers: Option<BTreeMap<&str, Vec<&str>>> = parts.get("headers").map(|h| {
        h.as_object()
            .unwrap()
            .iter()
            .map(|(name, v)| {
                let values = match v {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(items) => items.iter().map(|i| i.as_str().unwrap()).collect(),
                    _ => panic!("a header value is a string or a list"),
                };
                (name.as_str(), values)
            })
            .collect()
    });
    let body = parts.get("body").map(|b| b.as_str().unwrap().as_bytes());
    let message = Message::from_parts(body, attributes.as_deref(), headers.as_ref());
    match &unreadable {
        Some(e) => f(&message.with_unreadable(MessagePart::Attributes, e)),
        None => f(&message),
    }
}

/// What a case's filter, alone and in a set beside `witness`, makes of one form of its message.
struct Check<'a> {
    name: &'a str,
    want: &'a str,
    filter: &'a Filter,
    witness: &'a Filter,
    set: &'a SubscriptionSet<&'static str>,
}

impl Check<'_> {
    fn run<A, H>(&self, scratch: &mut SetScratch, message: &Message<'_, A, H>, form: &str)
    where
        A: filtervm::Attributes + ?Sized,
        H: filtervm::Headers + ?Sized,
    {
        let (name, want) = (self.name, self.want);
        let got = outcome(self.filter.matches(message));
        assert_eq!(got, want, "{name} ({form})");
        // explain reads what matches reads.
        if let Err(e) = self.filter.explain(message) {
            assert_eq!(e.code().as_str(), want, "{name} ({form}, explain)");
        }
        // In a set: exactly the one-by-one answers, never all or nothing.
        let matches = self.set.matching(scratch, message);
        let ids: Vec<&str> = matches.ids().copied().collect();
        let witness_says = outcome(self.witness.matches(message));
        let mut expected = Vec::new();
        if want == "match" {
            expected.push("case");
        }
        if witness_says == "match" {
            expected.push("witness");
        }
        assert_eq!(ids, expected, "{name} ({form}, set)");
        let mut codes: Vec<String> = matches
            .unjudged()
            .map(|g| g.error.code.as_str().to_owned())
            .collect();
        codes.sort();
        let mut expected_codes: Vec<String> = [want, witness_says.as_str()]
            .into_iter()
            .filter(|o| *o != "match" && *o != "no-match")
            .map(str::to_owned)
            .collect();
        expected_codes.sort();
        if self.filter.options() == self.witness.options() {
            // One group: one error, whichever filter's.
            expected_codes.dedup();
        }
        assert_eq!(codes, expected_codes, "{name} ({form}, set unjudged)");
    }
}

#[test]
fn every_situation_has_its_verdict_or_code_in_every_form() {
    let cases = cases();
    assert!(cases.len() >= 30, "{}", cases.len());
    // A filter that judges every message with attributes or none (sns rule 2): in a set beside
    // the case's filter, it must deliver whatever the case's filter cannot judge.
    let witness = Filter::new(Dialect::Sns, "{}").unwrap();
    let mut scratch = SetScratch::new();
    for case in &cases {
        let name = format!("{}: {case}", case["situation"]);
        let filter = filter(case);
        let mut set = SubscriptionSet::new();
        set.insert("case", &filter).unwrap();
        set.insert("witness", &witness).unwrap();
        let check = Check {
            name: &name,
            want: case["expect"].as_str().unwrap(),
            filter: &filter,
            witness: &witness,
            set: &set,
        };
        match (case.get("parts"), case.get("document")) {
            (Some(parts), None) => {
                with_parts(parts, |message| check.run(&mut scratch, message, "parts"));
                // The fixture writes the document of the parts for the entry points that take
                // one document (a line, a cell); it must be that document.
                let document = case["parts_document"].as_str().unwrap();
                assert_eq!(
                    serde_json::from_str::<Value>(document).unwrap(),
                    document_of(parts),
                    "{name}: parts_document"
                );
                let document_check = Check {
                    want: case
                        .get("parts_document_expect")
                        .map_or(check.want, |w| w.as_str().unwrap()),
                    ..check
                };
                document_check.run(
                    &mut scratch,
                    &Message::json(document.as_bytes()),
                    "document of the parts",
                );
            }
            (None, Some(document)) => {
                let document = document.as_str().unwrap().as_bytes();
                check.run(&mut scratch, &Message::json(document), "document");
            }
            _ => panic!("{name}: a case has parts or a document"),
        }
    }
}

#[test]
fn the_table_and_the_fixture_name_the_same_situations() {
    let table = include_str!("../MESSAGES.md");
    let cases = cases();
    let mut ids: Vec<&str> = cases
        .iter()
        .map(|c| c["situation"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for id in &ids {
        assert!(
            table.contains(&format!("(`{id}`)")),
            "the table has no situation `{id}`"
        );
    }
    // Every situation the table names with an id has a case.
    for (i, _) in table.match_indices("(`") {
        let rest = &table[i + 2..];
        let id = &rest[..rest.find('`').unwrap()];
        if id.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            assert!(ids.contains(&id), "no case for the table's `{id}`");
        }
    }
}

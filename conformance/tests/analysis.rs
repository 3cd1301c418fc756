//! The analysis (`filtervm_compiler::analysis`) as properties over generated policies of every
//! dialect, each witness judged by the reference interpreter too:
//!
//! - `example` yields messages with the verdict asked for (VM and reference), and a "none
//!   exists" proof is never contradicted by generated messages;
//! - `diff(P, P)` is never "different", and "same" whenever the search is exact;
//! - `diff(P, mutate(P))` agrees with brute force over generated messages: when some message is
//!   matched by one and not the other, diff says "different" — or, only when the search was
//!   bounded, "unknown" — and never "same"; every witness it gives is one the reference judges
//!   the same way;
//! - `translate` between stream and expr, sns bodies and eventbridge, eventgrid and eventbridge,
//!   sns bodies and eventbridge into eventgrid (both schemas): whatever it returns compiles,
//!   `diff(P, translate(P))` is "same", and the two agree on messages generated for P; a
//!   translation the target can express is found for a share of the generated policies, and
//!   every refusal into eventgrid names the construct (a pointer into P) or shows a witness.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::analysis::{self, Assumptions, Exactness, Example, Verdict, Witness};
use filtervm_compiler::{Dialect, Evaluator, Filter};
use filtervm_conformance::generate::{self, Rng, mutate};
use filtervm_conformance::reference::{self, json::Value};
use filtervm_conformance::runner;

/// The reference's verdict of `policy` on a witness's vector message (`None` at one of the
/// reference's documented limits).
fn reference_verdict(
    dialect: Dialect,
    options: &Value,
    policy: &Value,
    vector: &str,
) -> Option<bool> {
    // EventBridge reads every occurrence of a repeated member name (EB-3).
    let message = if dialect == Dialect::EventBridge {
        reference::json::parse_with(vector, reference::eventbridge::READ_OPTIONS).unwrap()
    } else {
        reference::json::parse(vector).unwrap()
    };
    match reference::evaluate(dialect, options, policy, &message) {
        Ok(v) => Some(v),
        Err(e) if e.is_limit() => None,
        Err(e) => panic!("the reference cannot judge the witness {vector}: {e}"),
    }
}

fn check_witness(dialect: Dialect, options: &Value, policies: &[&Value], w: &Witness) {
    for (i, policy) in policies.iter().enumerate() {
        let vector = w.vectors[i].to_string();
        if let Some(r) = reference_verdict(dialect, options, policy, &vector) {
            assert_eq!(r, w.verdicts[i], "reference vs VM on {vector} for {policy}");
        }
    }
}

/// The VM's verdict on a generated message (`None`: it cannot read it).
fn vm(dialect: Dialect, options: &Value, filter: &Filter, message: &Value) -> Option<bool> {
    let m = runner::read_message(dialect, options, message).ok()?;
    Evaluator::new().try_matches(filter, &m).ok()
}

struct Tally {
    examples: usize,
    none: usize,
    same: usize,
    different: usize,
    unknown: usize,
    brute_differences: usize,
}

fn run(dialect: Dialect, cases: usize, seed: u64) -> Tally {
    let mut rng = Rng::new(seed);
    let mut t = Tally {
        examples: 0,
        none: 0,
        same: 0,
        different: 0,
        unknown: 0,
        brute_differences: 0,
    };
    for _ in 0..cases {
        let case = generate::case(dialect, &mut rng);
        let Ok(f) = runner::compile(dialect, &case.policy, &case.options) else {
            continue;
        };
        let samples: Vec<Value> = (0..40)
            .map(|_| generate::message_for(dialect, &case.policy, &case.options, &mut rng))
            .collect();
        for want in [true, false] {
            match analysis::example(&f, want).unwrap() {
                Example::Found(w) => {
                    assert_eq!(w.verdicts, vec![want]);
                    check_witness(dialect, &case.options, &[&case.policy], &w);
                    t.examples += 1;
                }
                Example::NoneExists(exact) => {
                    t.none += 1;
                    if exact == Exactness::Exact {
                        for m in &samples {
                            assert_ne!(
                                vm(dialect, &case.options, &f, m),
                                Some(want),
                                "proved that no message has verdict {want}, but {m} has, for {}",
                                case.policy
                            );
                        }
                    }
                }
            }
        }
        let same = analysis::diff(&f, &f).unwrap();
        assert_ne!(
            same.verdict,
            Verdict::Different,
            "diff(P, P) for {}",
            case.policy
        );
        if same.exactness == Exactness::Exact {
            assert_eq!(same.verdict, Verdict::Same, "{}", case.policy);
        }
        let p2 = mutate::policy(&case.policy, &mut rng);
        let Ok(g) = runner::compile(dialect, &p2, &case.options) else {
            continue;
        };
        let d = analysis::diff(&f, &g).unwrap();
        for w in [&d.first_only, &d.second_only].into_iter().flatten() {
            assert_ne!(w.verdicts[0], w.verdicts[1]);
            check_witness(dialect, &case.options, &[&case.policy, &p2], w);
        }
        let more: Vec<Value> = (0..40)
            .map(|_| generate::message_for(dialect, &p2, &case.options, &mut rng))
            .collect();
        let differing = samples.iter().chain(&more).find(|m| {
            let (a, b) = (
                vm(dialect, &case.options, &f, m),
                vm(dialect, &case.options, &g, m),
            );
            a.is_some() && b.is_some() && a != b
        });
        if let Some(m) = differing {
            t.brute_differences += 1;
            assert_ne!(
                d.verdict,
                Verdict::Same,
                "diff says same, but {m} tells {} from {p2}",
                case.policy
            );
        }
        match d.verdict {
            Verdict::Same => t.same += 1,
            Verdict::Different => t.different += 1,
            Verdict::Unknown => t.unknown += 1,
        }
    }
    eprintln!(
        "{dialect}: {} examples, {} none-exists, diff(P, mutate(P)): {} same, {} different, {} unknown; brute force found {} differences",
        t.examples, t.none, t.same, t.different, t.unknown, t.brute_differences
    );
    t
}

/// How the translations of one pair of dialects came out.
#[derive(Debug, Default)]
struct Translations {
    /// Translated: proved the same (under the assumptions), and brute-forced.
    done: usize,
    /// Refused with a witness the two judge differently (`TRANSLATE_NOT_EQUIVALENT`).
    witnessed: usize,
    /// The target has no form for a part of the policy (`TRANSLATE_INEXPRESSIBLE`).
    inexpressible: usize,
    /// No difference found, but the search was bounded (`TRANSLATE_UNPROVED`).
    unproved: usize,
    /// Other refusals (`TRANSLATE_MODEL`: an sns policy of attribute scope).
    other: usize,
    /// The reason of each `TRANSLATE_UNPROVED`, with how often it came.
    unproved_why: Vec<(String, usize)>,
}

/// Translates generated policies of `from` into `to` (with `to_options`), proved under
/// `assume`. Each translation compiles, diff finds it the same as its source under `assume`,
/// and the two agree on the messages generated for the source that `assume` admits (brute
/// force, independent of the diff's proof); each witness of a refusal is a document `assume`
/// admits, which the VM and the reference interpreter both judge differently for the source
/// and the candidate.
fn translations(
    from: Dialect,
    to: Dialect,
    to_options: &str,
    cases: usize,
    seed: u64,
    assume: Assumptions,
) -> Translations {
    let mut rng = Rng::new(seed);
    let mut t = Translations::default();
    let target = filtervm_compiler::Options::from_json(to, to_options).unwrap();
    let target_options = runner_options(to_options);
    for i in 0..cases {
        let mut case = generate::case(from, &mut rng);
        if to == Dialect::EventGrid && i % 2 == 0 {
            // Every other policy under `data`, the part of an event where Event Grid reads
            // nested members (EG-18); as generated, its top-level names mostly name nothing in
            // the event schema (EG-19).
            let mut data = reference::json::Map::new();
            data.insert("data".to_owned(), case.policy.clone());
            case.policy = Value::Object(data);
        }
        let Ok(f) = runner::compile(from, &case.policy, &case.options) else {
            continue;
        };
        let text = case.policy.to_string();
        let policy = match filtervm_vm::json::parse(text.as_bytes()) {
            Ok(p) => p,
            Err(_) => continue,
        };
        let answer = analysis::translate::translate_assuming(&f, &policy, &target, assume);
        match &answer {
            Err(e) if e.code == "TRANSLATE_NOT_EQUIVALENT" => {
                // A refusal's witness: a document the assumptions admit, which the source and
                // the candidate judge differently — the VM (the verdicts) and the reference
                // interpreter (each policy on its own vector message) alike.
                let w = e.witness.as_ref().expect("a refusal with a witness");
                assert_ne!(w.verdicts[0], w.verdicts[1], "{e}");
                check_witness(from, &case.options, &[&case.policy], w);
                let candidate = runner_options(&e.candidate.as_ref().unwrap().to_string());
                let vector = w.vectors[1].to_string();
                if let Some(r) = reference_verdict(to, &target_options, &candidate, &vector) {
                    assert_eq!(
                        r, w.verdicts[1],
                        "reference vs VM on {vector} for {candidate}"
                    );
                }
                let doc = document_text(to, &runner_options(&w.vectors[1].to_string()));
                assert!(
                    admitted(&doc, assume),
                    "{doc} is not a document {assume:?} admits"
                );
                t.witnessed += 1;
            }
            Err(e) if e.code == "TRANSLATE_INEXPRESSIBLE" => {
                // Into Event Grid, every refusal names the construct of the source it cannot
                // say: a pointer into the policy.
                if to == Dialect::EventGrid {
                    assert!(
                        !e.pointer.is_empty() && policy.pointer(&e.pointer).is_some(),
                        "{e}: no construct of {} named",
                        case.policy
                    );
                }
                t.inexpressible += 1;
            }
            Err(e) if e.code == "TRANSLATE_UNPROVED" => {
                t.unproved += 1;
                let why = e.message.rsplit(": ").next().unwrap_or("").to_owned();
                match t.unproved_why.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, n)) => *n += 1,
                    None => t.unproved_why.push((why, 1)),
                }
            }
            Err(_) => t.other += 1,
            Ok(_) => {}
        }
        if let Ok(tr) = answer {
            assert_eq!(tr.assumptions, assume, "{}", case.policy);
            let g = filtervm_compiler::compile_text(to, &tr.policy.to_string(), &target).unwrap();
            assert_eq!(
                analysis::diff_assuming(&f, &g, assume).unwrap().verdict,
                Verdict::Same,
                "{} translated to {}",
                case.policy,
                tr.policy
            );
            for _ in 0..40 {
                let m = generate::message_for(from, &case.policy, &case.options, &mut rng);
                let Some(m2) = reshaped(from, to, &m) else {
                    continue;
                };
                if !admitted(&document_text(from, &m), assume) {
                    continue;
                }
                let (Some(a), Some(b)) = (
                    vm(from, &case.options, &f, &m),
                    vm(to, &target_options, &g, &m2),
                ) else {
                    continue;
                };
                assert_eq!(
                    a, b,
                    "{} and its translation {} on {m}",
                    case.policy, tr.policy
                );
            }
            t.done += 1;
        }
    }
    eprintln!(
        "{from} -> {to} assuming {:?}: {} of {cases} translated; refused: {} with a witness, {} \
         inexpressible, {} unproved {:?}, {} other",
        assume.names(),
        t.done,
        t.witnessed,
        t.inexpressible,
        t.unproved,
        t.unproved_why,
        t.other
    );
    t
}

/// Whether the JSON document `text` is one `assume` admits: with `canonical-documents`, no
/// member named twice, every number in its shortest round-trip form, no member name holding a
/// `.`, and no top-level name that is a case variant of an Event Grid member (EG-16); with
/// `no-arrays`, no array at all (stricter than the assumption: enough for brute force).
fn admitted(text: &str, assume: Assumptions) -> bool {
    let strict = reference::json::ReadOptions {
        reject_duplicates: true,
        ..reference::json::ReadOptions::default()
    };
    let Ok(doc) = reference::json::parse_with(text, strict) else {
        return !assume.canonical_documents && reference::json::parse(text).is_ok();
    };
    const EVENT_MEMBERS: [&str; 14] = [
        "id",
        "topic",
        "subject",
        "eventType",
        "dataVersion",
        "data",
        "source",
        "type",
        "specversion",
        "time",
        "datacontenttype",
        "dataschema",
        "eventTime",
        "metadataVersion",
    ];
    fn walk(v: &Value, top: bool, assume: Assumptions) -> bool {
        match v {
            Value::Number(n) => {
                !assume.canonical_documents || filtervm_vm::number::comparable(n.as_str()).is_some()
            }
            Value::Array(items) => {
                !assume.no_arrays && items.iter().all(|i| walk(i, false, assume))
            }
            Value::Object(m) => m.iter().all(|(name, value)| {
                let respelled = top
                    && EVENT_MEMBERS
                        .iter()
                        .any(|e| e.eq_ignore_ascii_case(name) && e != name);
                (!assume.canonical_documents || (!name.contains('.') && !respelled))
                    && walk(value, false, assume)
            }),
            _ => true,
        }
    }
    walk(&doc, true, assume)
}

/// A generated message of `from` in `to`'s vector shape: an SNS body (`{"body": TEXT}`) is
/// the event its text is (`None` when it is not a JSON object), an event is an SNS body of its
/// text; within one shape, itself.
fn reshaped(from: Dialect, to: Dialect, m: &Value) -> Option<Value> {
    let events = [Dialect::EventBridge, Dialect::EventGrid];
    match (from, to) {
        (Dialect::Sns, t) if events.contains(&t) => {
            let text = m.get("body")?.as_str()?;
            let event = reference::json::parse(text).ok()?;
            event.as_object().is_some().then_some(event)
        }
        (f, Dialect::Sns) if events.contains(&f) => {
            let mut body = reference::json::Map::new();
            body.insert("body".to_owned(), Value::String(m.to_string()));
            Some(Value::Object(body))
        }
        _ => Some(m.clone()),
    }
}

/// The document of a vector message of `dialect`: an SNS body's text, an event itself.
fn document_text(dialect: Dialect, m: &Value) -> String {
    match (dialect, m.get("body").and_then(Value::as_str)) {
        (Dialect::Sns, Some(body)) => body.to_owned(),
        _ => m.to_string(),
    }
}

fn runner_options(text: &str) -> Value {
    reference::json::parse(text).unwrap()
}

#[test]
fn stream_and_expr_translate_both_ways() {
    let none = Assumptions::NONE;
    assert!(translations(Dialect::Expr, Dialect::Stream, "{}", 200, 21, none).done >= 10);
    assert!(translations(Dialect::Stream, Dialect::Expr, "{}", 200, 22, none).done >= 5);
}

const BODY: &str = r#"{"scope": "MessageBody"}"#;

const CLOUD_EVENTS: &str = r#"{"schema": "CloudEventSchemaV1_0"}"#;

/// The pairs of document dialects translated.
const DOCUMENT_PAIRS: [(Dialect, Dialect, &str, u64); 8] = [
    (Dialect::Sns, Dialect::EventBridge, "{}", 23),
    (Dialect::EventBridge, Dialect::Sns, BODY, 24),
    (Dialect::EventGrid, Dialect::EventBridge, "{}", 25),
    (Dialect::EventGrid, Dialect::Sns, BODY, 26),
    (Dialect::EventBridge, Dialect::EventGrid, "{}", 27),
    (Dialect::EventBridge, Dialect::EventGrid, CLOUD_EVENTS, 28),
    (Dialect::Sns, Dialect::EventGrid, "{}", 29),
    (Dialect::Sns, Dialect::EventGrid, CLOUD_EVENTS, 30),
];

#[test]
fn document_dialects_translate_only_what_is_proved() {
    // With no assumption, sns bodies, eventbridge and eventgrid read a member named twice
    // differently (sns the last, EB-3 every one, Event Grid the first), Event Grid member
    // names ignoring case (EG-16): every refusal has a witness or a reason; whatever is
    // translated is brute-forced.
    let mut witnessed = 0;
    for (from, to, options, seed) in DOCUMENT_PAIRS {
        witnessed += translations(from, to, options, 150, seed, Assumptions::NONE).witnessed;
    }
    assert!(witnessed >= 20, "only {witnessed} refusals with a witness");
}

#[test]
fn document_dialects_translate_on_canonical_documents() {
    // Under canonical-documents alone, arrays of objects stay unsearched across dialects:
    // refusals are genuine (a canonical witness) or unproved, never a false "same".
    let canonical = Assumptions::parse("canonical-documents").unwrap();
    let mut witnessed = 0;
    for (from, to, options, seed) in DOCUMENT_PAIRS {
        let t = translations(from, to, options, 150, seed, canonical);
        witnessed += t.witnessed;
    }
    assert!(witnessed >= 20, "only {witnessed} refusals with a witness");
}

#[test]
fn document_dialects_translate_on_canonical_documents_without_arrays() {
    // Under canonical-documents and no-arrays the dialects read alike what is left, but for
    // what the policies say differently: each pair translates a share
    // of generated policies, each proved and brute-forced, and every refusal that remains is a
    // witness document both engines judge differently, or an inexpressible construct.
    let assume = Assumptions::parse("canonical-documents,no-arrays").unwrap();
    let mut into_eventgrid = 0;
    for (from, to, options, seed) in DOCUMENT_PAIRS {
        let t = translations(from, to, options, 150, seed, assume);
        if to == Dialect::EventGrid {
            // Generated strings mostly hold letters (case-sensitive, EG-31), names dots
            // (EG-15) or `$or`: few patterns have an Event Grid form, each one proved.
            into_eventgrid += t.done;
        } else {
            assert!(t.done >= 10, "{from} -> {to}: only {} translated", t.done);
        }
    }
    assert!(
        into_eventgrid >= 8,
        "only {into_eventgrid} translated into eventgrid"
    );
}

#[test]
fn sns() {
    let t = run(Dialect::Sns, 150, 11);
    assert!(
        t.examples > 100 && t.different >= 10,
        "too few answers to mean something"
    );
}

#[test]
fn basaltic() {
    let t = run(Dialect::Basaltic, 150, 12);
    assert!(t.examples > 100 && t.different >= 10);
}

#[test]
fn eventgrid() {
    let t = run(Dialect::EventGrid, 150, 13);
    assert!(t.examples > 100 && t.different >= 10);
}

#[test]
fn stream() {
    let t = run(Dialect::Stream, 150, 14);
    assert!(t.examples > 100 && t.different >= 10);
}

#[test]
fn expr() {
    let t = run(Dialect::Expr, 150, 15);
    assert!(t.examples > 100 && t.different >= 10);
}

#[test]
fn eventbridge() {
    let t = run(Dialect::EventBridge, 100, 16);
    assert!(t.examples > 80 && t.different >= 10);
}

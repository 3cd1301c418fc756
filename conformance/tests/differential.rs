//! The differential property in `cargo test`: for thousands of generated policy/message pairs per
//! dialect, the VM and the reference interpreter give the same verdict — the VM by every path a
//! message takes (`filtervm_conformance::paths`): the owned message, the raw JSON bytes (SNS
//! bodies, Event Grid events: pruned while read), the same bytes as a whole tree, and borrowed
//! attributes and headers. A disagreement prints the case as a ready-to-paste conformance vector
//! line. Cases where the reference stops at one of its documented limits are counted and may be at
//! most 1 in 100 (any other reference error fails the case), so the property cannot pass by the
//! reference not answering.
//!
//! The validation property: the compiler and the reference's own validation accept and reject the
//! same policies, on the generated (valid) policies and on mutations of them that are often
//! invalid (`generate::mutate`).
//!
//! The cases are seeded and deterministic. `soak` (ignored) runs many more, for a release-mode
//! search: `FILTERVM_SOAK=200000 FILTERVM_SEED=7 cargo test --release -p filtervm-conformance
//! --test differential -- --ignored --nocapture`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::Dialect;
use filtervm_conformance::generate::{self, Outcome, Rng, Source};
use filtervm_conformance::paths;

/// What a search found.
struct Found {
    /// Cases every path and the reference judged a match.
    matched: usize,
    /// Cases where the reference stopped at a documented limit.
    limited: usize,
    /// The failures (at most 5).
    failures: Vec<String>,
}

/// Runs `cases` generated cases.
fn search(dialect: Dialect, cases: usize, seed: u64) -> Found {
    let mut rng = Rng::new(seed);
    let (mut matched, mut limited, mut failures) = (0usize, 0usize, Vec::new());
    for i in 0..cases {
        let case = generate::case(dialect, &mut rng);
        let id = format!("{}-diff-{seed}-{i}", dialect.name());
        match paths::check(case.dialect, &case.options, &case.policy, &case.message) {
            Ok(c) => {
                matched += usize::from(c.verdict);
                limited += usize::from(c.reference_limited);
            }
            Err(e) => {
                let reference = filtervm_conformance::reference::evaluate(
                    case.dialect,
                    &case.options,
                    &case.policy,
                    &case.message,
                )
                .unwrap_or(false);
                failures.push(format!("{e}:\n{}", case.to_vector(&id, reference)))
            }
        }
        if failures.len() >= 5 {
            break;
        }
    }
    Found {
        matched,
        limited,
        failures,
    }
}

fn run(dialect: Dialect, cases: usize, seed: u64) {
    let Found {
        matched,
        limited,
        failures,
    } = search(dialect, cases, seed);
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Only a few cases may go unjudged by the reference (its documented limits).
    assert!(
        limited <= cases / 100,
        "the reference stopped at a limit on {limited} of {cases} cases"
    );
    // The generator must exercise both verdicts, or the property says little.
    assert!(
        matched > cases / 20 && matched < cases - cases / 20,
        "only {matched} of {cases} matched"
    );
}

#[test]
fn basaltic_vm_agrees_with_reference() {
    run(Dialect::Basaltic, 5000, 1);
}

#[test]
fn expr_vm_agrees_with_reference() {
    run(Dialect::Expr, 5000, 2);
}

#[test]
fn sns_vm_agrees_with_reference() {
    run(Dialect::Sns, 5000, 3);
}

#[test]
fn eventgrid_vm_agrees_with_reference() {
    run(Dialect::EventGrid, 5000, 4);
}

#[test]
fn stream_vm_agrees_with_reference() {
    run(Dialect::Stream, 5000, 5);
}

#[test]
fn eventbridge_vm_agrees_with_reference() {
    run(Dialect::EventBridge, 5000, 6);
}

/// The compiler and the reference's validation agree on generated policies and on mutations of
/// them: `cases` policies of `dialect` from `seed`, half of them mutated. Returns how many each
/// accepted and rejected, and the disagreements (at most 5).
fn validate_search(dialect: Dialect, cases: usize, seed: u64) -> (usize, usize, Vec<String>) {
    use generate::{Validation, mutate};
    let mut rng = Rng::new(seed);
    let (mut accepted, mut rejected, mut limited, mut failures) = (0, 0, 0, Vec::new());
    for _ in 0..cases {
        let case = generate::case(dialect, &mut rng);
        let (options, policy) = if rng.chance(50) {
            (
                mutate::options(&case.options, &mut rng),
                mutate::policy(&case.policy, &mut rng),
            )
        } else {
            (case.options.clone(), case.policy.clone())
        };
        match generate::validation(dialect, &options, &policy) {
            Validation::BothAccept => accepted += 1,
            Validation::BothReject => rejected += 1,
            // The reference's own bound (an eventbridge pattern of more than 10,000 branches):
            // not compared, and at most 1 in 100.
            Validation::Limit(_) => limited += 1,
            Validation::Disagree(why) => {
                failures.push(format!("{why}\n  options: {options}\n  policy: {policy}"));
                if failures.len() >= 5 {
                    break;
                }
            }
        }
    }
    if limited > cases / 100 {
        failures.push(format!(
            "the reference stopped at its own bound on {limited} of {cases} policies"
        ));
    }
    (accepted, rejected, failures)
}

#[test]
fn compiler_and_reference_validation_agree() {
    for (i, dialect) in Dialect::ALL.into_iter().enumerate() {
        let cases = 6000;
        let (accepted, rejected, failures) = validate_search(dialect, cases, 20 + i as u64);
        assert!(
            failures.is_empty(),
            "{dialect}: {} disagreements, first ones:\n{}",
            failures.len(),
            failures.join("\n")
        );
        // Both outcomes must be common, or the check says little.
        assert!(
            accepted > cases / 2 && rejected > cases / 5,
            "{dialect}: {accepted} accepted, {rejected} rejected of {cases}"
        );
    }
}

/// The generated cases exercise every path: the raw bytes and the whole tree for SNS bodies and
/// Event Grid events, borrowed tuples for attributes and headers.
#[test]
fn every_path_runs() {
    let expected: [(Dialect, &[&str]); 6] = [
        (Dialect::Sns, &["message", "bytes", "tree", "borrowed"]),
        (Dialect::EventGrid, &["message", "bytes", "tree"]),
        (Dialect::EventBridge, &["message", "bytes", "tree"]),
        (Dialect::Basaltic, &["message", "borrowed"]),
        (Dialect::Stream, &["message", "borrowed"]),
        (Dialect::Expr, &["message", "borrowed"]),
    ];
    for (dialect, names) in expected {
        let mut rng = Rng::new(11);
        let mut seen = std::collections::BTreeMap::new();
        for _ in 0..500 {
            let case = generate::case(dialect, &mut rng);
            let filter =
                filtervm_conformance::runner::compile(case.dialect, &case.policy, &case.options)
                    .unwrap();
            let v = paths::verdicts(
                case.dialect,
                &case.options,
                &case.policy,
                &filter,
                &case.message,
            )
            .unwrap();
            for (name, _) in v.paths {
                *seen.entry(name).or_insert(0usize) += 1;
            }
        }
        for name in names {
            assert!(
                seen.get(name).is_some_and(|&n| n >= 50),
                "{dialect}: path {name} ran {seen:?}"
            );
        }
    }
}

/// The fuzzer's source of choices ([`generate::Bytes`]) gives valid cases too: from the empty
/// input (every choice 0), saturated bytes, and short random inputs that run out mid-case.
#[test]
fn byte_source_gives_valid_cases() {
    let mut rng = Rng::new(7);
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), vec![0xFF; 64], vec![0x80; 300]];
    for _ in 0..400 {
        let len = rng.below(300) as usize;
        inputs.push((0..len).map(|_| rng.below(256) as u8).collect());
    }
    for dialect in Dialect::ALL {
        for input in &inputs {
            let case = generate::case(dialect, &mut generate::Bytes::new(input));
            match generate::check(&case) {
                // Declining to judge is failing closed, by design.
                Outcome::Agree(_) | Outcome::Unjudged(_) => {}
                other => panic!("{other:?}:\n{}", case.to_vector("bytes", false)),
            }
            match paths::check(case.dialect, &case.options, &case.policy, &case.message) {
                Ok(c) => assert!(!c.reference_limited, "{}", case.to_vector("bytes", false)),
                Err(e) => panic!("{e}:\n{}", case.to_vector("bytes", false)),
            }
        }
    }
}

/// The stream text form (printed here, independently of the compiler's printer, with random
/// whitespace and quoting) parses to the same filter as the JSON form, and the compiler's
/// canonical text is stable: print → parse → print gives the same text and the same filter.
#[test]
fn stream_text_form_agrees_with_json_form() {
    use filtervm_compiler::dialect::stream;
    let mut rng = Rng::new(6);
    for i in 0..3000 {
        let json_form = generate::stream::policy(&mut rng);
        let text = generate::stream::text_of(&json_form, &mut rng).unwrap();
        let product_form = filtervm_vm::json::parse(json_form.to_string().as_bytes()).unwrap();
        let from_json = stream::parse(&product_form)
            .unwrap_or_else(|e| panic!("case {i}: JSON form rejected ({e}): {json_form}"));
        let from_text = stream::parse_text(&text)
            .unwrap_or_else(|e| panic!("case {i}: text form rejected ({e}): {text:?}"));
        assert_eq!(from_json, from_text, "case {i}: {text:?} vs {json_form}");
        let canonical = stream::to_text(&from_text);
        let again = stream::parse_text(&canonical)
            .unwrap_or_else(|e| panic!("case {i}: canonical text rejected ({e}): {canonical:?}"));
        assert_eq!(again, from_text, "case {i}: {canonical:?}");
        assert_eq!(stream::to_text(&again), canonical, "case {i}");
    }
}

/// Many more cases per dialect, from `FILTERVM_SEED` (default 1), `FILTERVM_SOAK` cases each
/// (default 100,000); prints the match rate and every failure found.
#[test]
#[ignore = "a long search; run in release mode (see the module docs)"]
fn soak() {
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let cases = usize::try_from(var("FILTERVM_SOAK", 100_000)).unwrap();
    let seed = var("FILTERVM_SEED", 1);
    let mut all = Vec::new();
    for dialect in Dialect::ALL {
        let (accepted, rejected, disagreements) = validate_search(dialect, cases, seed);
        println!(
            "{dialect}: validation: {accepted} accepted and {rejected} rejected by both, {} disagreements",
            disagreements.len()
        );
        all.extend(disagreements);
        let found = search(dialect, cases, seed);
        println!(
            "{dialect}: {} of {cases} matched, {} unjudged by the reference (a limit), {} failures",
            found.matched,
            found.limited,
            found.failures.len()
        );
        all.extend(found.failures);
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

//! The `diff` target: a generated policy and a mutation of it, compared by the analysis
//! (`filtervm_compiler::analysis::diff`) and by sampled evaluation. A "same" verdict that a
//! sampled message contradicts, a witness the VM or the reference judges otherwise, or
//! `diff(P, P)` saying "different" is a finding.

use filtervm_compiler::analysis::{self, Verdict, Witness};
use filtervm_compiler::{Dialect, Evaluator, Filter};
use filtervm_conformance::generate::{self, Bytes, mutate};
use filtervm_conformance::reference::{self, json::Value};
use filtervm_conformance::runner;

fn vm(dialect: Dialect, options: &Value, filter: &Filter, message: &Value) -> Option<bool> {
    let m = runner::read_message(dialect, options, message).ok()?;
    Evaluator::new().try_matches(filter, &m).ok()
}

fn check_witness(dialect: Dialect, options: &Value, policies: [&Value; 2], w: &Witness) {
    for (i, policy) in policies.iter().enumerate() {
        let (Some(vector), Some(expected)) = (w.vectors.get(i), w.verdicts.get(i)) else {
            continue;
        };
        let message = reference::json::parse(&vector.to_string()).unwrap();
        match reference::evaluate(dialect, options, policy, &message) {
            Ok(r) => assert_eq!(
                r, *expected,
                "reference vs VM on witness {vector} for {policy}"
            ),
            Err(e) if e.is_limit() => {}
            Err(e) => panic!("the reference cannot judge the witness {vector}: {e}"),
        }
    }
}

/// The target (see the module documentation). The first byte picks the dialect.
pub fn diff(data: &[u8]) {
    let Some((&b, rest)) = data.split_first() else {
        return;
    };
    let dialect = Dialect::ALL[usize::from(b) % Dialect::ALL.len()];
    let mut s = Bytes::new(rest);
    let case = generate::case(dialect, &mut s);
    let Ok(f) = runner::compile(dialect, &case.policy, &case.options) else {
        return;
    };
    let same = analysis::diff(&f, &f).unwrap();
    assert_ne!(
        same.verdict,
        Verdict::Different,
        "diff(P, P) for {}",
        case.policy
    );
    let p2 = mutate::policy(&case.policy, &mut s);
    let Ok(g) = runner::compile(dialect, &p2, &case.options) else {
        return;
    };
    let d = analysis::diff(&f, &g).unwrap();
    for w in [&d.first_only, &d.second_only].into_iter().flatten() {
        check_witness(dialect, &case.options, [&case.policy, &p2], w);
    }
    if d.verdict == Verdict::Same {
        for _ in 0..16 {
            let policy = if s.is_empty() { &case.policy } else { &p2 };
            let m = generate::message_for(dialect, policy, &case.options, &mut s);
            let (x, y) = (
                vm(dialect, &case.options, &f, &m),
                vm(dialect, &case.options, &g, &m),
            );
            if x.is_some() && y.is_some() {
                assert_eq!(
                    x, y,
                    "diff says same, but {m} tells {} from {p2}",
                    case.policy
                );
            }
        }
    }
}

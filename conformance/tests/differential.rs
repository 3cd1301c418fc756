//! The differential property in `cargo test`: for thousands of generated policy/message pairs per
//! dialect, the VM and the reference interpreter give the same verdict. A disagreement prints the
//! case as a ready-to-paste conformance vector line.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::Dialect;
use filtervm_conformance::generate::{self, Outcome, Rng};

fn run(dialect: Dialect, cases: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let (mut matched, mut failures) = (0usize, Vec::new());
    for i in 0..cases {
        let case = generate::case(dialect, &mut rng).expect("the dialect has a generator");
        match generate::check(&case) {
            Outcome::Agree(m) => matched += usize::from(m),
            Outcome::Disagree { vm, reference } => failures.push(format!(
                "VM says {vm}, reference says {reference}:\n{}",
                case.to_vector(&format!("{}-diff-{seed}-{i}", dialect.name()), reference)
            )),
            Outcome::Rejected(e) => failures.push(format!(
                "generated an invalid policy ({e}):\n{}",
                case.policy
            )),
            Outcome::Error(e) => {
                failures.push(format!("error {e}:\n{}", case.to_vector("error", false)))
            }
        }
        if failures.len() >= 5 {
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures.join("\n")
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

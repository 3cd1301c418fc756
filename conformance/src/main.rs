//! `filtervm-conformance FILE...`: runs conformance vectors through the VM and the reference
//! interpreter; prints `FAIL id: ...` per failing case and `N passed, M failed`, and fails when
//! any case fails or none ran (`FILTERVM_CASES=TEXT` keeps the cases whose id contains TEXT).
//!
//! `filtervm-conformance --reference ...` runs the reference interpreter over a message stream for
//! `filtervm bench` (see `filtervm_conformance::serve`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.first().is_some_and(|a| a == "--reference") {
        return filtervm_conformance::serve::main(files.get(1..).unwrap_or(&[]));
    }
    if files.is_empty() {
        eprintln!("usage: filtervm-conformance FILE.jsonl...");
        return ExitCode::from(2);
    }
    let filter = std::env::var("FILTERVM_CASES").ok();
    let paths: Vec<&std::path::Path> = files.iter().map(std::path::Path::new).collect();
    let summary = filtervm_conformance::runner::run_files(&paths, filter.as_deref());
    for failure in &summary.failures {
        println!("{failure}");
    }
    println!(
        "{} passed, {} failed",
        summary.passed,
        summary.failures.len()
    );
    if summary.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

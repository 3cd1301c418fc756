//! `filtervm-conformance FILE...`: runs conformance vectors through the VM and the reference
//! interpreter; prints `FAIL id: ...` per failing case and `N passed, M failed`.
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
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        let results = match filtervm_conformance::runner::run_file(std::path::Path::new(file)) {
            Ok(r) => r,
            Err(e) => {
                println!("FAIL {file}: cannot read: {e}");
                failed += 1;
                continue;
            }
        };
        for r in results {
            if filter.as_ref().is_some_and(|f| !r.id.contains(f.as_str())) {
                continue;
            }
            match r.failure {
                None => passed += 1,
                Some(why) => {
                    println!("FAIL {}: {why}", r.id);
                    failed += 1;
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

//! What several integration tests share: the conformance vectors, read as the product reads
//! policies.

use filtervm_vm::json;
use std::path::PathBuf;

/// Every case of every vector file (public and local), read as the product reads policies
/// (numbers and member order as written), files in name order.
pub fn all_cases() -> Vec<json::Value> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/vectors");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("local")] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                if e.path().extension().is_some_and(|x| x == "jsonl") {
                    files.push(e.path());
                }
            }
        }
    }
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            cases.push(json::parse(line.as_bytes()).unwrap());
        }
    }
    cases
}

//! Compiles each policy-text workload (`filtervm_bench::compile_workloads`) in a loop and prints
//! the median nanoseconds per `compile_text` of 7 rounds of about 0.2 s; with `profile NAME
//! COUNT`, compiles that workload COUNT times for callgrind:
//! `valgrind --tool=callgrind --toggle-collect='compile_time::profile*'
//!  bench/target/release/examples/compile_time profile pol3c 2000`.
#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::{CompileWorkload, compile_workloads};
use filtervm_compiler::compile_text;
use std::hint::black_box;
use std::time::Instant;

#[inline(never)]
fn profile(w: &CompileWorkload, count: usize) -> usize {
    let mut n = 0;
    for _ in 0..count {
        let f = compile_text(w.dialect, black_box(&w.text), &w.options).expect("compiles");
        n += f.program().code().len();
    }
    n
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let workloads = compile_workloads();
    if args.first().map(String::as_str) == Some("profile") {
        let name = args.get(1).expect("a workload name");
        let count = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(1000);
        let w = workloads
            .iter()
            .find(|w| w.name == name)
            .expect("a known workload");
        println!("{}", profile(w, count));
        return;
    }
    for w in &workloads {
        if !args.is_empty() && !args.contains(&w.name.to_owned()) {
            continue;
        }
        let mut rounds = Vec::new();
        for _ in 0..7 {
            let start = Instant::now();
            let mut n = 0u64;
            while start.elapsed().as_millis() < 200 {
                for _ in 0..100 {
                    let f =
                        compile_text(w.dialect, black_box(&w.text), &w.options).expect("compiles");
                    black_box(&f);
                    n += 1;
                }
            }
            rounds.push(start.elapsed().as_nanos() as f64 / n as f64);
        }
        rounds.sort_by(f64::total_cmp);
        println!("{:<16} {:>9.0} ns", w.name, rounds[3]);
    }
}

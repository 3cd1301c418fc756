//! Runs one single-policy workload's evaluation many times, for profiling under callgrind:
//! `valgrind --tool=callgrind --dump-instr=yes --toggle-collect='filtervm_vm::exec::run'
//!  target/release/examples/profile INDEX` (INDEX as in `benches/instructions.rs`).
use filtervm_bench::{single_message, singles};
use filtervm_vm::bind::Bindings;
use std::hint::black_box;

fn main() {
    let index: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let single = singles().into_iter().nth(index).expect("workload");
    let mut bindings = Bindings::new();
    bindings.bind(single.program.keys(), &single_message(&single));
    let mut registers = Vec::new();
    let mut hits = 0usize;
    for _ in 0..1000 {
        hits += usize::from(black_box(&single.program).eval(black_box(&bindings), &mut registers));
    }
    println!("{} {hits}", single.name);
}

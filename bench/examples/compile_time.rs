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
    if args.first().map(String::as_str) == Some("count") {
        for w in &workloads {
            if args.len() > 1 && !args.contains(&w.name.to_owned()) {
                continue;
            }
            let before = counting::now();
            let f = compile_text(w.dialect, &w.text, &w.options).expect("compiles");
            let compiled = counting::now() - before;
            println!(
                "{:<16} {compiled} allocations and reallocations per compile_text",
                w.name
            );
            drop(f);
            if w.dialect != filtervm_compiler::Dialect::Sns {
                continue;
            }
            let scope = w.options.sns().scope;
            let mut at = counting::now();
            let mut stage = |name: &str| {
                let now = counting::now();
                println!("  {name:<12} {}", now - at);
                at = now;
            };
            let value = filtervm_vm::json::parse(w.text.as_bytes()).expect("json");
            stage("json");
            let root = filtervm_compiler::dialect::sns::validate(scope, &value).expect("valid");
            stage("validate");
            let lowered = filtervm_compiler::dialect::sns::lower::lower_policy(scope, &root);
            stage("lower");
            let optimized = filtervm_compiler::opt::optimize_copy(&lowered);
            stage("optimize");
            let program = filtervm_compiler::codegen::generate(&optimized).expect("codegen");
            stage("codegen");
            drop((value, root, lowered, optimized, program));
        }
        return;
    }
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

/// Counts allocations, for `compile_time count NAME` (the allocations of each compile stage of
/// an SNS workload).
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

    pub struct Counting;

    // SAFETY: forwards to the system allocator.
    #[expect(unsafe_code, reason = "a counting allocator for a measurement")]
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the caller's contract.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: the caller's contract.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the caller's contract.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    pub fn now() -> usize {
        ALLOCATIONS.load(Ordering::Relaxed)
    }
}

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

//! Compiles each policy-text workload (`filtervm_bench::compile_workloads`) in a loop and prints
//! the median nanoseconds per `compile_text` of 7 rounds of about 0.2 s; with `profile NAME
//! COUNT`, compiles that workload COUNT times for callgrind:
//! `valgrind --tool=callgrind --toggle-collect='compile_time::profile*'
//!  bench/target/release/examples/compile_time profile pol3c 2000`. `count [NAME]` prints the
//! allocations of each workload's `compile_text` (and of each stage for the SNS ones, the text
//! read into the thread's arena as `compile_text` reads it); `bump NAME
//! COUNT` is `profile` with every allocation served by a bump pointer and never freed: the floor
//! an arena for everything the compile path allocates could reach. `staged NAME COUNT` compiles
//! an SNS workload stage by stage (policy text → JSON tree → validated policy → lowered IR →
//! optimized IR → program) with the allocator, and `arena NAME COUNT` the same with the
//! temporaries (the JSON tree and the validated policy) bump-allocated: what an arena for them
//! would save (`--toggle-collect='compile_time::staged*'`).
#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::{CompileWorkload, compile_workloads};
use filtervm_compiler::compile_text;
use std::hint::black_box;
use std::time::Instant;

/// The SNS pipeline stage by stage, `count` times; with `arena`, the JSON tree and the validated
/// policy are bump-allocated (and their drop frees nothing).
#[inline(never)]
fn staged(w: &CompileWorkload, count: usize, arena: bool) -> usize {
    let scope = w.options.sns().scope;
    let mut n = 0;
    for _ in 0..count {
        if arena {
            counting::bump_on();
        }
        let value = filtervm_vm::json::parse(black_box(w.text.as_bytes())).expect("json");
        let root = filtervm_compiler::dialect::sns::validate(scope, &value).expect("valid");
        counting::bump_off();
        let lowered = filtervm_compiler::dialect::sns::lower::lower_policy(scope, &root);
        drop((root, value));
        // As `compile_text` does: the lowered tree is optimized in place (the filter keeps the
        // text, not the lowered tree).
        let optimized = filtervm_compiler::opt::optimize(lowered);
        let program = filtervm_compiler::codegen::generate(&optimized).expect("codegen");
        n += program.code().len();
        drop((optimized, program));
    }
    n
}

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
            // As `compile_text` reads SNS text: into a borrowed tree in this thread's arena
            // (set up by the compile above), read as `dialect::parse_policy_text` reads it.
            let mut read = filtervm_vm::json::ParseOptions::default();
            read.max_depth = filtervm_compiler::dialect::MAX_POLICY_DEPTH;
            filtervm_vm::json::Arena::with_local(|arena| {
                let value = arena.parse_str(&w.text, &read).expect("json");
                stage("json");
                let root =
                    filtervm_compiler::dialect::sns::validate_ref(scope, value).expect("valid");
                stage("validate");
                let lowered = filtervm_compiler::dialect::sns::lower::lower_policy(scope, &root);
                stage("lower");
                let optimized = filtervm_compiler::opt::optimize(lowered);
                stage("optimize");
                let program = filtervm_compiler::codegen::generate(&optimized).expect("codegen");
                stage("codegen");
                drop((root, optimized, program));
            });
        }
        return;
    }
    if let Some(mode @ ("staged" | "arena")) = args.first().map(String::as_str) {
        let name = args.get(1).expect("a workload name");
        let count = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(1000);
        let w = workloads
            .iter()
            .find(|w| w.name == name && w.dialect == filtervm_compiler::Dialect::Sns)
            .expect("a known SNS workload");
        counting::bump(512 << 20);
        counting::bump_off();
        println!("{}", staged(w, count, mode == "arena"));
        return;
    }
    if let Some(mode @ ("profile" | "bump")) = args.first().map(String::as_str) {
        let name = args.get(1).expect("a workload name");
        let count = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(1000);
        let w = workloads
            .iter()
            .find(|w| w.name == name)
            .expect("a known workload");
        if mode == "bump" {
            counting::bump(512 << 20);
        }
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
#[expect(unsafe_code, reason = "a measuring allocator")]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
    /// The bump region (start, end) and its next free byte, once `bump` was called.
    static BUMP_NEXT: AtomicUsize = AtomicUsize::new(0);
    static BUMP_END: AtomicUsize = AtomicUsize::new(0);
    /// Whether allocations are bumped now (after `bump`, until `bump_off`).
    static BUMPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// Allocate from the bump region again.
    pub fn bump_on() {
        BUMPING.store(true, Ordering::Relaxed);
    }

    /// Allocate from the system allocator again (bumped blocks are still not freed).
    pub fn bump_off() {
        BUMPING.store(false, Ordering::Relaxed);
    }

    pub struct Counting;

    /// From now on, serve allocations from one region of `bytes` and never free them.
    pub fn bump(bytes: usize) {
        let layout = Layout::from_size_align(bytes, 4096).expect("layout");
        // SAFETY: a non-zero size.
        let start = unsafe { System.alloc(layout) } as usize;
        assert!(start != 0, "the bump region");
        BUMP_END.store(start + bytes, Ordering::SeqCst);
        BUMP_NEXT.store(start, Ordering::SeqCst);
        BUMPING.store(true, Ordering::SeqCst);
    }

    fn bumped(layout: Layout) -> Option<*mut u8> {
        let mut next = BUMP_NEXT.load(Ordering::Relaxed);
        if next == 0 || !BUMPING.load(Ordering::Relaxed) {
            return None;
        }
        loop {
            let start = (next + layout.align() - 1) & !(layout.align() - 1);
            let end = start + layout.size();
            assert!(
                end <= BUMP_END.load(Ordering::Relaxed),
                "bump region exhausted"
            );
            match BUMP_NEXT.compare_exchange_weak(next, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(start as *mut u8),
                Err(now) => next = now,
            }
        }
    }

    fn in_bump(ptr: *mut u8) -> bool {
        let p = ptr as usize;
        let end = BUMP_END.load(Ordering::Relaxed);
        end != 0 && p < end && p >= end - (512 << 20)
    }

    // SAFETY: forwards to the system allocator, or hands out disjoint parts of one region.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            if let Some(p) = bumped(layout) {
                return p;
            }
            // SAFETY: the caller's contract.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            if in_bump(ptr) {
                return;
            }
            // SAFETY: the caller's contract.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            if in_bump(ptr)
                || (BUMP_NEXT.load(Ordering::Relaxed) != 0 && BUMPING.load(Ordering::Relaxed))
            {
                let new = Layout::from_size_align(new_size, layout.align()).expect("layout");
                // SAFETY: a non-zero size (the caller's contract).
                let Some(p) = bumped(new).or_else(|| Some(unsafe { System.alloc(new) })) else {
                    return std::ptr::null_mut();
                };
                // SAFETY: both regions are valid for the smaller size and do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size)) };
                if !in_bump(ptr) {
                    // SAFETY: the caller's contract.
                    unsafe { System.dealloc(ptr, layout) };
                }
                return p;
            }
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

//! Measures the heap a `SubscriptionSet` really holds (a counting allocator around the system one),
//! next to its own estimate (`heap_bytes`): `cargo run --release --example set_memory`.
#![allow(unsafe_code)] // GlobalAlloc is an unsafe trait; this only counts, then delegates.

use filtervm_bench::lines;
use filtervm_compiler::SubscriptionSet;
use filtervm_compiler::{Dialect, compile};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    for name in ["pol10k", "pol10k_exact", "pol10k_num", "pol10k_mixed"] {
        let filters: Vec<_> = lines(name, usize::MAX)
            .iter()
            .map(|l| {
                compile(
                    Dialect::Sns,
                    &serde_json::from_str(l).unwrap(),
                    &Dialect::Sns.into(),
                )
                .unwrap()
            })
            .collect();
        let before = LIVE.load(Ordering::Relaxed);
        let mut set = SubscriptionSet::new();
        for (i, f) in filters.iter().enumerate() {
            set.insert(i as u64, f).unwrap();
        }
        let held = LIVE.load(Ordering::Relaxed) - before;
        println!(
            "{name}: {} subscriptions, {} distinct filters, {} tests: {held} bytes allocated, {} estimated ({:.0} / {:.0} bytes/subscription)",
            set.len(),
            set.distinct_filters(),
            set.group_stats()[0].distinct_tests,
            set.heap_bytes(),
            held as f64 / set.len() as f64,
            set.heap_bytes() as f64 / set.len() as f64
        );
        // Churn: remove every other subscription, add them back under new ids, remove the new
        // ones again; the set then holds the first half, as a fresh set of them would.
        for i in (0..filters.len()).step_by(2) {
            set.remove(&(i as u64));
        }
        for (i, f) in filters.iter().enumerate().step_by(2) {
            set.insert((filters.len() + i) as u64, f).unwrap();
        }
        for i in (0..filters.len()).step_by(2) {
            set.remove(&((filters.len() + i) as u64));
        }
        let churned = LIVE.load(Ordering::Relaxed) - before;
        let fresh_before = LIVE.load(Ordering::Relaxed);
        let mut fresh = SubscriptionSet::new();
        for (i, f) in filters.iter().enumerate().skip(1).step_by(2) {
            fresh.insert(i as u64, f).unwrap();
        }
        let fresh_held = LIVE.load(Ordering::Relaxed) - fresh_before;
        println!(
            "  after churn: {} subscriptions, {churned} bytes allocated, {} estimated; a fresh set of them: {fresh_held} allocated, {} estimated",
            set.len(),
            set.heap_bytes(),
            fresh.heap_bytes()
        );
    }
}

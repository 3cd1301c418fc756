//! Loading a program allocates in proportion to its encoding.
//!
//! `Program::from_bytes` promises to allocate at most in proportion to the bytes it reads
//! (`wire.rs`). The bytes bound what the decoder itself allocates; this test checks everything
//! loading builds on top — the decision plan (`plan.rs`) and the substring searchers — on the
//! programs that stress it most: thousands of instructions all reading one large pool entry.
//!
//! The measurement is a counting global allocator, so this binary holds a single test: nothing
//! else may allocate while it measures.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_vm::bind::Bindings;
use filtervm_vm::key::Key;
use filtervm_vm::message::{Header, Message};
use filtervm_vm::op::{Inst, ListRef, RangesRef, Reg, SetRef, SlotRef, StrRef};
use filtervm_vm::program::{Interval, Program, ProgramParts};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live now and the most live since the last reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[expect(
    unsafe_code,
    reason = "a GlobalAlloc is an unsafe trait; this one only forwards to System and counts"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator, under the same contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator, under the same contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator, under the same contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes live at once while `f` runs, beyond those live when it starts (what it
/// returns included).
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(before))
}

/// Loading may use at most this many bytes of memory per byte of encoding. The decoder's own
/// data structures take a few (a one-byte string is a 16-byte `Box<str>` plus its allocation)
/// and the plan a few more; the most per byte is a substring searcher for a one-string list
/// (an automaton of ~750 bytes, for 22 bytes of list and instruction).
const BYTES_PER_ENCODED_BYTE: usize = 64;

/// The instruction every program repeats.
#[derive(Clone, Copy, Debug)]
enum Reads {
    Prefix,
    Suffix,
    Contains,
    ContainsFold,
    EqFold,
    TextNumbers,
    Numbers,
    SmallSet,
    OneString,
}

/// `count` instructions of kind `reads`, all on slot 0 and one pool entry of `entries` items,
/// joined by `or` jumps so that every one is a step of the plan.
fn program(reads: Reads, count: usize, entries: usize) -> Program {
    let mut p = ProgramParts::default();
    p.keys.intern(Key::Header("h".into()));
    p.registers = 1;
    // Short distinct strings, so that substring searchers have real work; a few of them empty
    // would make every search trivially true, so none is.
    let strings: Vec<std::sync::Arc<str>> =
        (0..entries).map(|i| format!("{i:X}!").into()).collect();
    p.pools.lists.push(strings);
    p.pools.ranges.push(
        (0..entries)
            .map(|i| Interval::point(i as f64))
            .collect::<Vec<_>>(),
    );
    p.pools.sets.push(
        ["a", "b", "c"]
            .into_iter()
            .map(std::sync::Arc::from)
            .collect(),
    );
    p.pools.strings.push("x".repeat(entries).into());
    let (dst, slot) = (Reg(0), SlotRef(0));
    let list = ListRef(0);
    let ranges = RangesRef(0);
    let test = match reads {
        Reads::Prefix => Inst::StrPrefix { dst, slot, list },
        Reads::Suffix => Inst::StrSuffix { dst, slot, list },
        Reads::Contains => Inst::StrContains { dst, slot, list },
        Reads::ContainsFold => Inst::StrContainsFold { dst, slot, list },
        Reads::EqFold => Inst::StrEqFold { dst, slot, list },
        Reads::TextNumbers => Inst::TextNumIn { dst, slot, ranges },
        Reads::Numbers => Inst::NumIn { dst, slot, ranges },
        Reads::SmallSet => Inst::StrIn {
            dst,
            slot,
            set: SetRef(0),
        },
        Reads::OneString => Inst::StrEq {
            dst,
            slot,
            s: StrRef(0),
        },
    };
    for _ in 0..count {
        let at = p.code.len() as u32;
        p.code.push(test);
        p.code.push(Inst::JumpIfTrue {
            cond: Reg(0),
            target: filtervm_vm::op::Target(at + 2),
        });
    }
    p.code.push(Inst::Ret { src: Reg(0) });
    Program::new(p).expect("verifies")
}

#[test]
fn loading_allocates_in_proportion_to_the_encoding() {
    let all = [
        Reads::Prefix,
        Reads::Suffix,
        Reads::Contains,
        Reads::ContainsFold,
        Reads::EqFold,
        Reads::TextNumbers,
        Reads::Numbers,
        Reads::SmallSet,
        Reads::OneString,
    ];
    let mut report = Vec::new();
    // 8,000 instructions on one 8,000-entry pool entry, then twice that: a plan that copies the
    // entry into each step needs 64 million and 256 million copies.
    for n in [8_000, 16_000] {
        for reads in all {
            let bytes = program(reads, n, n).to_bytes();
            let (loaded, peak) = peak_during(|| Program::from_bytes(&bytes).expect("loads"));
            report.push(format!(
                "{reads:?} {n}×{n}: {} bytes encoded, {peak} bytes at peak ({} per byte)",
                bytes.len(),
                peak / bytes.len()
            ));
            assert!(
                peak <= BYTES_PER_ENCODED_BYTE * bytes.len(),
                "{}",
                report.join("\n")
            );
            // What was loaded still runs, and answers.
            let mut bindings = Bindings::new();
            let message = Message::Headers(vec![Header {
                name: "h".into(),
                values: vec!["1F!".into(), "31".into()],
            }]);
            let bound = bindings.bind(loaded.keys(), &message);
            let expected = !matches!(reads, Reads::SmallSet | Reads::OneString | Reads::Numbers);
            assert_eq!(loaded.eval(&bound, &mut Vec::new()), expected, "{reads:?}");
        }
    }
    // Substring searchers: one list whose strings nest (an automaton keeps every string that
    // ends at a state: `a` × n with `a`, `aa`, … would keep 31 per state), one of long strings
    // over every byte value, and thousands of one-string lists each read by one instruction.
    let n = 16_000;
    let mut nested: Vec<std::sync::Arc<str>> = vec!["a".repeat(n).into()];
    nested.extend((1..32).map(|i| "a".repeat(i).into()));
    let every_byte: String = (1..=127u8)
        .map(char::from)
        .chain('\u{80}'..'\u{400}')
        .collect();
    let long: Vec<std::sync::Arc<str>> =
        (0..64).map(|i| format!("{i}{every_byte}").into()).collect();
    for (name, lists) in [
        ("nested strings", vec![nested]),
        ("long strings over every byte", vec![long]),
        (
            "one-string lists",
            (0..4_000).map(|i| vec![format!("{i}").into()]).collect(),
        ),
    ] {
        for fold in [false, true] {
            let bytes = contains_program(lists.clone(), fold).to_bytes();
            let (_, peak) = peak_during(|| Program::from_bytes(&bytes).expect("loads"));
            report.push(format!(
                "{name} (fold {fold}): {} bytes encoded, {peak} bytes at peak ({} per byte)",
                bytes.len(),
                peak / bytes.len()
            ));
            assert!(
                peak <= BYTES_PER_ENCODED_BYTE * bytes.len(),
                "{}",
                report.join("\n")
            );
        }
    }
    println!("{}", report.join("\n"));
}

/// One substring instruction per list (and nothing else, so that the searchers' share of the
/// memory per byte is the largest it can be).
fn contains_program(lists: Vec<Vec<std::sync::Arc<str>>>, fold: bool) -> Program {
    let mut p = ProgramParts::default();
    p.keys.intern(Key::Header("h".into()));
    p.registers = 1;
    let (dst, slot) = (Reg(0), SlotRef(0));
    for i in 0..lists.len() {
        let list = ListRef(i as u32);
        p.code.push(if fold {
            Inst::StrContainsFold { dst, slot, list }
        } else {
            Inst::StrContains { dst, slot, list }
        });
    }
    p.pools.lists = lists;
    p.code.push(Inst::Ret { src: Reg(0) });
    Program::new(p).expect("verifies")
}

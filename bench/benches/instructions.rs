//! Instruction counts (iai-callgrind): one policy evaluated on a message already bound to it, and
//! binding measured on its own. Budgets (issue "Performance"): ≤ 60 instructions for one clause,
//! ≤ 150 for three, ≤ 400 for eight.
//!
//! Run: `cargo bench --manifest-path bench/Cargo.toml --bench instructions` (needs valgrind and
//! `cargo install iai-callgrind-runner --version 0.16.1`).

#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::{
    HandBound, Single, attributes, branch_free, decode, hand, lines, single_event, single_message,
    singles,
};
use filtervm_compiler::set::{PolicySet, SetMatcher};
use filtervm_compiler::{Dialect, Evaluator, Filter, compile};
use filtervm_vm::bind::Bindings;
use filtervm_vm::message::Message;
use iai_callgrind::{LibraryBenchmarkConfig, library_benchmark, library_benchmark_group, main};
use std::hint::black_box;

/// A program with its message bound, and register space; leaked so that nothing is dropped
/// inside the measured function.
struct Bound {
    single: Single,
    bindings: Bindings,
    registers: Vec<bool>,
}

fn bound(index: usize) -> &'static mut Bound {
    let single = singles().into_iter().nth(index).expect("workload");
    let mut bindings = Bindings::new();
    bindings.bind(single.program.keys(), &single_message(&single));
    let mut registers = Vec::new();
    // Warm the register buffer the way a broker's reused evaluator has it.
    assert!(single.program.eval(&bindings, &mut registers));
    Box::leak(Box::new(Bound {
        single,
        bindings,
        registers,
    }))
}

struct ToBind {
    single: Single,
    message: Message,
    bindings: Bindings,
}

fn to_bind(index: usize) -> &'static mut ToBind {
    let single = singles().into_iter().nth(index).expect("workload");
    let message = single_message(&single);
    let mut bindings = Bindings::new();
    bindings.bind(single.program.keys(), &message);
    Box::leak(Box::new(ToBind {
        single,
        message,
        bindings,
    }))
}

#[library_benchmark]
#[bench::seed(setup = bound, args = (0))]
#[bench::pol1c(setup = bound, args = (1))]
#[bench::pol3c(setup = bound, args = (2))]
#[bench::pol8c(setup = bound, args = (3))]
#[bench::pol1n(setup = bound, args = (4))]
#[bench::pol3n(setup = bound, args = (5))]
#[bench::pol8n(setup = bound, args = (6))]
fn eval(b: &'static mut Bound) -> bool {
    black_box(b.single.program.eval(&b.bindings, &mut b.registers))
}

/// The hand-written checks, for scale: on the same bound message, and on a decoded struct.
struct Hands {
    bound: HandBound,
    bindings: Bindings,
    decoded: filtervm_bench::Decoded,
    hand: filtervm_bench::Hand,
}

fn hands(index: usize) -> &'static Hands {
    let single = singles().into_iter().nth(index).expect("workload");
    let mut bindings = Bindings::new();
    bindings.bind(single.program.keys(), &single_message(&single));
    Box::leak(Box::new(Hands {
        bound: HandBound::new(&single).expect("hand bound"),
        decoded: decode(&single_event(&single)),
        hand: hand(&single.name).expect("hand"),
        bindings,
    }))
}

#[library_benchmark]
#[bench::seed(setup = hands, args = (0))]
#[bench::pol1c(setup = hands, args = (1))]
#[bench::pol3c(setup = hands, args = (2))]
#[bench::pol8c(setup = hands, args = (3))]
#[bench::pol1n(setup = hands, args = (4))]
#[bench::pol3n(setup = hands, args = (5))]
#[bench::pol8n(setup = hands, args = (6))]
fn hand_bound(h: &'static Hands) -> bool {
    black_box(h.bound.check(&h.bindings))
}

#[library_benchmark]
#[bench::seed(setup = hands, args = (0))]
#[bench::pol1c(setup = hands, args = (1))]
#[bench::pol3c(setup = hands, args = (2))]
#[bench::pol8c(setup = hands, args = (3))]
#[bench::pol1n(setup = hands, args = (4))]
#[bench::pol3n(setup = hands, args = (5))]
#[bench::pol8n(setup = hands, args = (6))]
fn hand_decoded(h: &'static Hands) -> bool {
    black_box((h.hand)(&h.decoded))
}

fn bound_branch_free(index: usize) -> &'static mut Bound {
    let b = bound(index);
    b.single.program = branch_free(&b.single.program).expect("an AND chain");
    b.registers = Vec::with_capacity(64);
    b
}

// The same programs without jumps: every test into its own register, combined with `and`, run by
// the register executor (a dispatch alternative, measured against the plan).
#[library_benchmark]
#[bench::seed(setup = bound_branch_free, args = (0))]
#[bench::pol1c(setup = bound_branch_free, args = (1))]
#[bench::pol3c(setup = bound_branch_free, args = (2))]
#[bench::pol8c(setup = bound_branch_free, args = (3))]
#[bench::pol1n(setup = bound_branch_free, args = (4))]
#[bench::pol3n(setup = bound_branch_free, args = (5))]
#[bench::pol8n(setup = bound_branch_free, args = (6))]
fn eval_branch_free(b: &'static mut Bound) -> bool {
    black_box(b.single.program.eval(&b.bindings, &mut b.registers))
}

#[library_benchmark]
#[bench::seed(setup = to_bind, args = (0))]
#[bench::pol3n(setup = to_bind, args = (5))]
#[bench::pol8n(setup = to_bind, args = (6))]
fn bind(b: &'static mut ToBind) -> usize {
    b.bindings.bind(b.single.program.keys(), &b.message);
    black_box(b.bindings.rows())
}

/// Messages matched per run of the set benchmarks (the figure per message is the count / 100).
const SET_MESSAGES: usize = 100;

struct Set {
    set: PolicySet,
    filters: Vec<Filter>,
    matcher: SetMatcher,
    evaluator: Evaluator,
    messages: Vec<Message>,
}

fn set_of(name: &str) -> &'static mut Set {
    let filters: Vec<Filter> = lines(name, usize::MAX)
        .iter()
        .map(|l| {
            let p: serde_json::Value = serde_json::from_str(l).expect("policy");
            compile(Dialect::Sns, &p, &Dialect::Sns.into()).expect("compiles")
        })
        .collect();
    let mut set = PolicySet::new();
    for (i, f) in filters.iter().enumerate() {
        set.add(i as u64, f).expect("adds");
    }
    let messages: Vec<Message> = lines("attrs", SET_MESSAGES)
        .iter()
        .map(|l| attributes(&serde_json::from_str(l).expect("message")))
        .collect();
    let mut matcher = SetMatcher::new();
    // Warm the buffers as a broker's long-lived matcher has them.
    for m in &messages {
        matcher.matching(&set, m);
    }
    Box::leak(Box::new(Set {
        set,
        filters,
        matcher,
        evaluator: Evaluator::new(),
        messages,
    }))
}

// `PolicySet` matching (binding included) of 100 messages; divide by 100.
#[library_benchmark]
#[bench::pol10k_exact(setup = set_of, args = ("pol10k_exact"))]
#[bench::pol10k_num(setup = set_of, args = ("pol10k_num"))]
#[bench::pol10k_mixed(setup = set_of, args = ("pol10k_mixed"))]
fn set_100_messages(s: &'static mut Set) -> usize {
    let mut n = 0;
    for m in &s.messages {
        n += s.matcher.matching(&s.set, m).len();
    }
    black_box(n)
}

// One-by-one evaluation (bind and run each of the 10k programs) of one message.
#[library_benchmark]
#[bench::pol10k_exact(setup = set_of, args = ("pol10k_exact"))]
#[bench::pol10k_num(setup = set_of, args = ("pol10k_num"))]
#[bench::pol10k_mixed(setup = set_of, args = ("pol10k_mixed"))]
fn one_by_one_1_message(s: &'static mut Set) -> usize {
    let m = &s.messages[0];
    let evaluator = &mut s.evaluator;
    black_box(s.filters.iter().filter(|f| evaluator.matches(f, m)).count())
}

library_benchmark_group!(name = single; benchmarks = eval, eval_branch_free, bind, hand_bound, hand_decoded);
library_benchmark_group!(name = sets; benchmarks = set_100_messages, one_by_one_1_message);

main!(
    config = LibraryBenchmarkConfig::default().pass_through_env("FILTERVM_BENCH_DATA");
    library_benchmark_groups = single, sets
);

//! Instruction counts (iai-callgrind): one policy evaluated on a message already bound to it,
//! binding measured on its own, whole paths from what the broker holds (raw JSON bytes, borrowed
//! headers) to the verdict, sets, and compiling policy text (`compile_text`). Budgets: ≤ 60
//! instructions for one clause, ≤ 150 for three, ≤ 400 for eight, on a bound message.
//!
//! Run: `cargo bench --manifest-path bench/Cargo.toml --bench instructions` (needs valgrind and
//! `cargo install iai-callgrind-runner --version 0.16.1`).

#![allow(missing_docs, clippy::expect_used)]

use filtervm_bench::{
    CompileWorkload, E2E_MESSAGES, HandBound, PASSING_HEADERS, SET_MESSAGES, Single, attributes,
    body_single, branch_free, cityfeat_sample, compile_workloads, decode, eventbridge_filter, hand,
    hand_headers, header_filter, lines, passing_event_bytes, single_event, single_message, singles,
};
use filtervm_compiler::{Dialect, Evaluator, Filter, ReadMode, compile, compile_text};
use filtervm_compiler::{MessageParts, SetScratch, SubscriptionSet};
use filtervm_vm::bind::{Bindings, Bound};
use filtervm_vm::message::Message;
use iai_callgrind::{LibraryBenchmarkConfig, library_benchmark, library_benchmark_group, main};
use std::hint::black_box;

/// `value`, leaked: what a bound message borrows must outlive the benchmark.
fn leak<T>(value: T) -> &'static mut T {
    Box::leak(Box::new(value))
}

/// A program with its message bound, and register space; leaked so that nothing is dropped
/// inside the measured function.
struct Evaluated {
    single: &'static Single,
    bound: Bound<'static>,
    registers: Vec<bool>,
}

fn bound_message(single: &'static Single) -> Bound<'static> {
    let message = leak(single_message(single));
    leak(Bindings::new()).bind(single.program.keys(), message)
}

fn bound(index: usize) -> &'static mut Evaluated {
    let single = leak(singles().into_iter().nth(index).expect("workload"));
    let bound = bound_message(single);
    let mut registers = Vec::new();
    // Warm the register buffer the way a broker's reused evaluator has it.
    assert!(single.program.eval(&bound, &mut registers));
    leak(Evaluated {
        single,
        bound,
        registers,
    })
}

#[library_benchmark]
#[bench::seed(setup = bound, args = (0))]
#[bench::pol1c(setup = bound, args = (1))]
#[bench::pol3c(setup = bound, args = (2))]
#[bench::pol8c(setup = bound, args = (3))]
#[bench::pol1n(setup = bound, args = (4))]
#[bench::pol3n(setup = bound, args = (5))]
#[bench::pol8n(setup = bound, args = (6))]
fn eval(b: &'static mut Evaluated) -> bool {
    black_box(b.single.program.eval(&b.bound, &mut b.registers))
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
    leak(ToBind {
        single,
        message,
        bindings,
    })
}

/// The hand-written checks, for scale: on the same bound message, and on a decoded struct.
struct Hands {
    bound: HandBound,
    message: Bound<'static>,
    decoded: filtervm_bench::Decoded<'static>,
    hand: filtervm_bench::Hand,
}

fn hands(index: usize) -> &'static Hands {
    let single = leak(singles().into_iter().nth(index).expect("workload"));
    leak(Hands {
        bound: HandBound::new(single).expect("hand bound"),
        decoded: decode(&single_event(single)),
        hand: hand(&single.name).expect("hand"),
        message: bound_message(single),
    })
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
    black_box(h.bound.check(&h.message))
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

fn bound_branch_free(index: usize) -> &'static mut Evaluated {
    let single = leak(singles().into_iter().nth(index).expect("workload"));
    single.program = branch_free(&single.program).expect("an AND chain");
    let single: &'static Single = single;
    leak(Evaluated {
        single,
        bound: bound_message(single),
        registers: Vec::with_capacity(64),
    })
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
fn eval_branch_free(b: &'static mut Evaluated) -> bool {
    black_box(b.single.program.eval(&b.bound, &mut b.registers))
}

#[library_benchmark]
#[bench::seed(setup = to_bind, args = (0))]
#[bench::pol3n(setup = to_bind, args = (5))]
#[bench::pol8n(setup = to_bind, args = (6))]
fn bind(b: &'static mut ToBind) -> usize {
    black_box(b.bindings.bind(b.single.program.keys(), &b.message).rows())
}

/// Raw JSON bodies (the first [`E2E_MESSAGES`] lines of `attrs.jsonl`, the lines the wall-clock
/// end-to-end rows run) and a body-scope program, with warm buffers.
struct FromBytes {
    single: Single,
    lines: Vec<Vec<u8>>,
    bindings: Bindings,
    registers: Vec<bool>,
}

fn from_bytes(clauses: usize, mode: ReadMode) -> &'static mut FromBytes {
    let single = body_single(clauses);
    let lines: Vec<Vec<u8>> = lines("attrs", E2E_MESSAGES)
        .into_iter()
        .map(String::into_bytes)
        .collect();
    let mut bindings = Bindings::new();
    bindings.set_read_mode(mode);
    let mut registers = Vec::new();
    // Warm the buffers over every line, as a broker's long-lived evaluator has them. (Which lines
    // match varies: `pol8c` matches none of them, as in the wall-clock row over the same lines.)
    for l in &lines {
        let bound = bindings.bind_json(single.program.keys(), l);
        single.program.eval(&bound, &mut registers);
    }
    leak(FromBytes {
        single,
        lines,
        bindings,
        registers,
    })
}

// Raw JSON bytes (SNS bodies, ~165 bytes each) → verdict: read, bind, evaluate (what
// `Evaluator::matches_bytes` does; the 8-clause policy is past SNS's 5 keys, so the program is
// compiled clause by clause and run directly), for each of the [`E2E_MESSAGES`] lines; divide by
// that.
//
// `*_trusted`: the same lines read in `ReadMode::Trusted` (members no key reads skipped by their
// structure, unchecked), for input validated upstream.
#[library_benchmark]
#[bench::pol1c(setup = from_bytes, args = (1, ReadMode::Validating))]
#[bench::pol3c(setup = from_bytes, args = (3, ReadMode::Validating))]
#[bench::pol8c(setup = from_bytes, args = (8, ReadMode::Validating))]
#[bench::pol1c_trusted(setup = from_bytes, args = (1, ReadMode::Trusted))]
#[bench::pol3c_trusted(setup = from_bytes, args = (3, ReadMode::Trusted))]
#[bench::pol8c_trusted(setup = from_bytes, args = (8, ReadMode::Trusted))]
fn bytes_to_verdict_1000_messages(b: &'static mut FromBytes) -> usize {
    let program = &b.single.program;
    let mut n = 0;
    for line in &b.lines {
        let bound = b.bindings.bind_json(program.keys(), black_box(line));
        n += usize::from(program.eval(&bound, &mut b.registers));
    }
    black_box(n)
}

/// The same raw bytes and the `pol{clauses}c` policy as an EventBridge pattern, through the
/// library's entry point (`Evaluator::matches_bytes`: read, bind, evaluate, and the event checked
/// to be an object within the depth limit), with warm buffers.
struct EventBridgeBytes {
    filter: Filter,
    bytes: Vec<u8>,
    evaluator: Evaluator,
}

fn eventbridge_bytes(clauses: usize) -> &'static mut EventBridgeBytes {
    let (_, filter) = eventbridge_filter(clauses);
    let bytes = passing_event_bytes();
    let mut evaluator = Evaluator::new();
    assert_eq!(evaluator.matches_bytes(&filter, &bytes), Ok(true));
    leak(EventBridgeBytes {
        filter,
        bytes,
        evaluator,
    })
}

/// The SNS body-scope program of `pol{clauses}c` through the same entry point.
fn sns_body_bytes(clauses: usize) -> &'static mut EventBridgeBytes {
    let single = body_single(clauses);
    let filter = compile_text(
        Dialect::Sns,
        &single.policy.to_string(),
        &filtervm_bench::body_scope(),
    )
    .expect("at most 5 keys");
    let bytes = passing_event_bytes();
    let mut evaluator = Evaluator::new();
    assert_eq!(evaluator.matches_bytes(&filter, &bytes), Ok(true));
    leak(EventBridgeBytes {
        filter,
        bytes,
        evaluator,
    })
}

// Raw JSON bytes → verdict through `Evaluator::matches_bytes`: an EventBridge pattern against the
// same policy as an SNS body-scope policy (EventBridge's `pol8c` has no SNS counterpart: past 5
// keys).
#[library_benchmark]
#[bench::eventbridge_pol1c(setup = eventbridge_bytes, args = (1))]
#[bench::eventbridge_pol3c(setup = eventbridge_bytes, args = (3))]
#[bench::eventbridge_pol8c(setup = eventbridge_bytes, args = (8))]
#[bench::sns_body_pol1c(setup = sns_body_bytes, args = (1))]
#[bench::sns_body_pol3c(setup = sns_body_bytes, args = (3))]
fn matches_bytes(b: &'static mut EventBridgeBytes) -> bool {
    black_box(b.evaluator.matches_bytes(&b.filter, black_box(&b.bytes))) == Ok(true)
}

/// quamina-rs with the `pol{clauses}c` pattern and the same raw lines as
/// [`bytes_to_verdict_1000_messages`].
struct QuaminaBytes {
    quamina: quamina::Quamina<u64>,
    lines: Vec<Vec<u8>>,
}

fn quamina_bytes(clauses: usize) -> &'static mut QuaminaBytes {
    let single = body_single(clauses);
    let mut quamina = quamina::Quamina::<u64>::new();
    quamina
        .add_pattern(0, &single.policy.to_string())
        .expect("quamina takes the pattern");
    let lines: Vec<Vec<u8>> = lines("attrs", E2E_MESSAGES)
        .into_iter()
        .map(String::into_bytes)
        .collect();
    let program = &single.program;
    let mut bindings = Bindings::new();
    let expected: usize = lines
        .iter()
        .map(|l| usize::from(program.eval(&bindings.bind_json(program.keys(), l), &mut Vec::new())))
        .sum();
    let mut seen = 0;
    for l in &lines {
        seen += quamina.matches_for_event(l).map_or(0, |m| m.len());
    }
    assert_eq!(seen, expected, "quamina and filtervm agree on every line");
    leak(QuaminaBytes { quamina, lines })
}

// The peer on the same bytes: quamina-rs `matches_for_event` (it reads only what its patterns
// name and checks nothing else), for each of the [`E2E_MESSAGES`] lines; divide by that.
#[library_benchmark]
#[bench::pol1c(setup = quamina_bytes, args = (1))]
#[bench::pol3c(setup = quamina_bytes, args = (3))]
#[bench::pol8c(setup = quamina_bytes, args = (8))]
fn quamina_1000_messages(q: &'static mut QuaminaBytes) -> usize {
    let mut n = 0;
    for line in &q.lines {
        n += q
            .quamina
            .matches_for_event(black_box(line))
            .map_or(0, |m| m.len());
    }
    black_box(n)
}

/// cityfeat as SNS bodies: [`E2E_MESSAGES`] features ([`cityfeat_sample`]) as raw bodies, the
/// 5 `cl_exact` patterns as body-scope SNS policies in one set, read in `mode`; and quamina with
/// the same patterns.
struct CityfeatBodies {
    set: SubscriptionSet<u64>,
    scratch: SetScratch,
    quamina: quamina::Quamina<u64>,
    bodies: Vec<Vec<u8>>,
}

fn cityfeat_bodies(mode: ReadMode) -> &'static mut CityfeatBodies {
    let bodies: Vec<Vec<u8>> = cityfeat_sample()
        .into_iter()
        .map(String::into_bytes)
        .collect();
    let patterns = lines("cl_exact", 5);
    let mut set = SubscriptionSet::new();
    let mut quamina = quamina::Quamina::<u64>::new();
    for (i, p) in patterns.iter().enumerate() {
        let filter =
            compile_text(Dialect::Sns, p, &filtervm_bench::body_scope()).expect("compiles");
        set.insert(i as u64, &filter).expect("joins the set");
        quamina
            .add_pattern(i as u64, p)
            .expect("quamina takes the pattern");
    }
    let mut scratch = SetScratch::new();
    scratch.set_read_mode(mode);
    let (mut ours, mut theirs) = (0, 0);
    for b in &bodies {
        ours += set
            .try_matching(&mut scratch, &MessageParts::body(b))
            .map_or(0, |m| m.len());
        theirs += quamina.matches_for_event(b).map_or(0, |m| m.len());
    }
    assert!(
        ours > 0 && ours == theirs,
        "{ours} deliveries, quamina {theirs}"
    );
    leak(CityfeatBodies {
        set,
        scratch,
        quamina,
        bodies,
    })
}

// cityfeat features (~700 bytes) as raw SNS bodies through a set of 5 body-scope policies, per
// read mode, and quamina-rs on the same bytes; divide by [`E2E_MESSAGES`].
#[library_benchmark]
#[bench::validating(setup = cityfeat_bodies, args = (ReadMode::Validating))]
#[bench::trusted(setup = cityfeat_bodies, args = (ReadMode::Trusted))]
fn cityfeat_sns_set_1000_messages(c: &'static mut CityfeatBodies) -> usize {
    let mut n = 0;
    for body in &c.bodies {
        n += c
            .set
            .try_matching(&mut c.scratch, &MessageParts::body(black_box(body)))
            .map_or(0, |m| m.len());
    }
    black_box(n)
}

#[library_benchmark]
#[bench::quamina(setup = cityfeat_bodies, args = (ReadMode::Validating))]
fn cityfeat_sns_quamina_1000_messages(c: &'static mut CityfeatBodies) -> usize {
    let mut n = 0;
    for body in &c.bodies {
        n += c
            .quamina
            .matches_for_event(black_box(body))
            .map_or(0, |m| m.len());
    }
    black_box(n)
}

/// Borrowed headers and a one-clause stream filter, with warm buffers.
struct FromHeaders {
    filter: Filter,
    evaluator: Evaluator,
}

fn from_headers() -> &'static mut FromHeaders {
    let filter = header_filter();
    let mut evaluator = Evaluator::new();
    assert!(evaluator.matches_headers(&filter, &PASSING_HEADERS));
    assert!(hand_headers(&PASSING_HEADERS));
    leak(FromHeaders { filter, evaluator })
}

// Borrowed headers (a slice of 8 pairs of `&str`, as the hand-written check takes them, so
// neither loop is unrolled over a known length) → verdict for one clause, the header lookup
// included.
#[library_benchmark]
#[bench::pol1c(setup = from_headers)]
fn headers_to_verdict(h: &'static mut FromHeaders) -> bool {
    black_box(
        h.evaluator
            .matches_headers(&h.filter, black_box(&PASSING_HEADERS[..])),
    )
}

// The same check written by hand over the same header slice.
#[library_benchmark]
#[bench::pol1c()]
fn headers_by_hand() -> bool {
    black_box(hand_headers(black_box(&PASSING_HEADERS)))
}

/// The passing headers in reverse order: the header the one-clause filter reads comes last, so
/// every name is compared (the passing order finds it first).
const PASSING_HEADERS_LAST: [(&str, &str); 8] = {
    let mut reversed = PASSING_HEADERS;
    let mut i = 0;
    while i < 4 {
        let swap = reversed[i];
        reversed[i] = reversed[7 - i];
        reversed[7 - i] = swap;
        i += 1;
    }
    reversed
};

// The one-clause filter over the 8 headers with its header last (every name compared).
#[library_benchmark]
#[bench::pol1c_last(setup = from_headers)]
fn headers_last_to_verdict(h: &'static mut FromHeaders) -> bool {
    black_box(
        h.evaluator
            .matches_headers(&h.filter, black_box(&PASSING_HEADERS_LAST[..])),
    )
}

// The same check written by hand over the same reversed slice.
#[library_benchmark]
#[bench::pol1c_last()]
fn headers_last_by_hand() -> bool {
    black_box(hand_headers(black_box(&PASSING_HEADERS_LAST)))
}

/// Three equality clauses over headers (stream): more than one test, so the plan is walked on
/// the headers, each step reading its own header.
const HEADER_FILTER_3C: &str =
    "event in [order.paid, order.created] and environment = production and source = web";

/// [`HEADER_FILTER_3C`] written by hand over the same header slice.
#[inline]
fn hand_headers_3c(headers: &[(&str, &str)]) -> bool {
    let has =
        |name: &str, ok: &dyn Fn(&str) -> bool| headers.iter().any(|(n, v)| *n == name && ok(v));
    has("event", &|v| v == "order.paid" || v == "order.created")
        && has("environment", &|v| v == "production")
        && has("source", &|v| v == "web")
}

/// A stream header filter compiled, checked to pass [`PASSING_HEADERS`] as `hand` does.
fn from_header_filter(text: &str, hand: fn(&[(&str, &str)]) -> bool) -> &'static mut FromHeaders {
    let filter =
        filtervm_compiler::compile_text(Dialect::Stream, text, &filtervm_compiler::Options::Stream)
            .expect("compiles");
    let mut evaluator = Evaluator::new();
    assert!(evaluator.matches_headers(&filter, &PASSING_HEADERS));
    assert!(hand(&PASSING_HEADERS));
    leak(FromHeaders { filter, evaluator })
}

fn from_headers_3c() -> &'static mut FromHeaders {
    from_header_filter(HEADER_FILTER_3C, hand_headers_3c)
}

/// Eight equality clauses over headers (stream), one on each of the 8 headers.
const HEADER_FILTER_8C: &str = "event in [order.paid, order.created] and environment = production \
     and amount = 149.5 and region = eu-west-1 and subject = orders.eu.created \
     and customer = c123 and priority = 5 and source = web";

/// [`HEADER_FILTER_8C`] written by hand over the same header slice.
#[inline]
fn hand_headers_8c(headers: &[(&str, &str)]) -> bool {
    let has =
        |name: &str, ok: &dyn Fn(&str) -> bool| headers.iter().any(|(n, v)| *n == name && ok(v));
    has("event", &|v| v == "order.paid" || v == "order.created")
        && has("environment", &|v| v == "production")
        && has("amount", &|v| v == "149.5")
        && has("region", &|v| v == "eu-west-1")
        && has("subject", &|v| v == "orders.eu.created")
        && has("customer", &|v| v == "c123")
        && has("priority", &|v| v == "5")
        && has("source", &|v| v == "web")
}

fn from_headers_8c() -> &'static mut FromHeaders {
    from_header_filter(HEADER_FILTER_8C, hand_headers_8c)
}

// Borrowed headers → verdict for three and eight clauses: the plan walked on the headers.
#[library_benchmark]
#[bench::pol3c(setup = from_headers_3c)]
#[bench::pol8c(setup = from_headers_8c)]
fn headers_clauses_to_verdict(h: &'static mut FromHeaders) -> bool {
    black_box(
        h.evaluator
            .matches_headers(&h.filter, black_box(&PASSING_HEADERS[..])),
    )
}

// The same three clauses written by hand over the same header slice (each check its own
// function, so that it is inlined as a broker's own code would be).
#[library_benchmark]
#[bench::pol3c()]
fn headers_3c_by_hand() -> bool {
    black_box(hand_headers_3c(black_box(&PASSING_HEADERS)))
}

// The same eight clauses written by hand.
#[library_benchmark]
#[bench::pol8c()]
fn headers_8c_by_hand() -> bool {
    black_box(hand_headers_8c(black_box(&PASSING_HEADERS)))
}

struct Set {
    set: SubscriptionSet<u64>,
    filters: Vec<Filter>,
    matcher: SetScratch,
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
    let mut set = SubscriptionSet::new();
    for (i, f) in filters.iter().enumerate() {
        set.insert(i as u64, f).expect("adds");
    }
    let messages: Vec<Message> = lines("attrs", SET_MESSAGES)
        .iter()
        .map(|l| attributes(&serde_json::from_str(l).expect("message")))
        .collect();
    let mut matcher = SetScratch::new();
    // Warm the buffers as a broker's long-lived matcher has them.
    for m in &messages {
        set.matching(&mut matcher, &filtervm_bench::parts(m));
    }
    // And each filter, as one evaluated message after message has it: its key table's binding
    // caches are built on its first message.
    let mut evaluator = Evaluator::new();
    for f in &filters {
        evaluator.matches(f, &messages[0]);
    }
    leak(Set {
        set,
        filters,
        matcher,
        evaluator,
        messages,
    })
}

// `SubscriptionSet` matching (binding included) of 100 messages; divide by 100.
#[library_benchmark]
#[bench::pol10k_exact(setup = set_of, args = ("pol10k_exact"))]
#[bench::pol10k_num(setup = set_of, args = ("pol10k_num"))]
#[bench::pol10k_mixed(setup = set_of, args = ("pol10k_mixed"))]
fn set_100_messages(s: &'static mut Set) -> usize {
    let mut n = 0;
    for m in &s.messages {
        n += s
            .set
            .matching(&mut s.matcher, &filtervm_bench::parts(m))
            .len();
    }
    black_box(n)
}

/// A set of body-scope filters and raw JSON lines.
struct BytesSet {
    set: SubscriptionSet<u64>,
    matcher: SetScratch,
    lines: Vec<Vec<u8>>,
}

fn bytes_set_of(name: &str, mode: ReadMode) -> &'static mut BytesSet {
    let body = filtervm_bench::body_scope();
    let mut set = SubscriptionSet::new();
    for (i, l) in lines(name, usize::MAX).iter().enumerate() {
        let p: serde_json::Value = serde_json::from_str(l).expect("policy");
        let f = compile(Dialect::Sns, &p, &body).expect("compiles");
        set.insert(i as u64, &f).expect("adds");
    }
    let lines: Vec<Vec<u8>> = lines("attrs", SET_MESSAGES)
        .into_iter()
        .map(String::into_bytes)
        .collect();
    let mut matcher = SetScratch::new();
    matcher.set_read_mode(mode);
    for l in &lines {
        set.try_matching(&mut matcher, &MessageParts::body(l))
            .expect("JSON");
    }
    leak(BytesSet {
        set,
        matcher,
        lines,
    })
}

// `SubscriptionSet` (SNS body scope) from raw JSON lines, 100 messages; divide by 100.
// `*_trusted`: the lines read in `ReadMode::Trusted`.
#[library_benchmark]
#[bench::pol10k_exact(setup = bytes_set_of, args = ("pol10k_exact", ReadMode::Validating))]
#[bench::pol10k_num(setup = bytes_set_of, args = ("pol10k_num", ReadMode::Validating))]
#[bench::pol10k_exact_trusted(setup = bytes_set_of, args = ("pol10k_exact", ReadMode::Trusted))]
#[bench::pol10k_num_trusted(setup = bytes_set_of, args = ("pol10k_num", ReadMode::Trusted))]
fn set_from_bytes_100_messages(s: &'static mut BytesSet) -> usize {
    let mut n = 0;
    for l in &s.lines {
        n += s
            .set
            .try_matching(&mut s.matcher, &MessageParts::body(l))
            .map_or(0, |m| m.len());
    }
    black_box(n)
}

// One-by-one evaluation (bind and run each of the 10k programs) of the same 100 messages as
// `set_100_messages`; divide by 100.
#[library_benchmark]
#[bench::pol10k_exact(setup = set_of, args = ("pol10k_exact"))]
#[bench::pol10k_num(setup = set_of, args = ("pol10k_num"))]
#[bench::pol10k_mixed(setup = set_of, args = ("pol10k_mixed"))]
fn one_by_one_100_messages(s: &'static mut Set) -> usize {
    let evaluator = &mut s.evaluator;
    let mut n = 0;
    for m in &s.messages {
        n += s.filters.iter().filter(|f| evaluator.matches(f, m)).count();
    }
    black_box(n)
}

library_benchmark_group!(name = single; benchmarks = eval, eval_branch_free, bind, hand_bound, hand_decoded);
library_benchmark_group!(
    name = boundary;
    benchmarks = bytes_to_verdict_1000_messages, quamina_1000_messages, cityfeat_sns_set_1000_messages,
        cityfeat_sns_quamina_1000_messages, matches_bytes, headers_to_verdict, headers_by_hand, headers_last_to_verdict,
        headers_last_by_hand, headers_clauses_to_verdict, headers_3c_by_hand,
        headers_8c_by_hand
);
/// A compile workload (by index into `compile_workloads`).
fn compile_workload(index: usize) -> &'static CompileWorkload {
    let w = leak(
        compile_workloads()
            .into_iter()
            .nth(index)
            .expect("workload"),
    );
    // Warm the allocator the way a running broker has it.
    assert!(compile_text(w.dialect, &w.text, &w.options).is_ok());
    w
}

#[library_benchmark]
#[bench::pol1c(setup = compile_workload, args = (0))]
#[bench::pol3c(setup = compile_workload, args = (1))]
#[bench::pol3n(setup = compile_workload, args = (2))]
#[bench::pol3c_body(setup = compile_workload, args = (3))]
#[bench::seed(setup = compile_workload, args = (4))]
#[bench::pol8c_basaltic(setup = compile_workload, args = (5))]
#[bench::pol8n_basaltic(setup = compile_workload, args = (6))]
#[bench::pol8c_stream(setup = compile_workload, args = (7))]
fn compile_policy_text(w: &'static CompileWorkload) -> usize {
    // The filter is dropped inside the measurement, as a caller that adds it to a set drops it.
    black_box(compile_text(w.dialect, black_box(&w.text), &w.options))
        .map_or(0, |f| f.program().code().len())
}

library_benchmark_group!(name = compile; benchmarks = compile_policy_text);
library_benchmark_group!(name = sets; benchmarks = set_100_messages, set_from_bytes_100_messages, one_by_one_100_messages);

main!(
    config = LibraryBenchmarkConfig::default().pass_through_env("FILTERVM_BENCH_DATA");
    library_benchmark_groups = single, boundary, sets, compile
);

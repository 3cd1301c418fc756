//! Runs one workload many times, for profiling under callgrind:
//! `valgrind --tool=callgrind --dump-instr=yes --toggle-collect='profile::run*'
//!  target/release/examples/profile MODE INDEX`:
//!
//! - `eval INDEX`: a single-policy workload's evaluation on its bound message (INDEX as in
//!   `benches/instructions.rs`);
//! - `bytes CLAUSES`: the `pol{CLAUSES}c` body-scope program from the attrs lines' raw bytes
//!   (read, bind, evaluate); `trusted-bytes CLAUSES`: the same, read in `ReadMode::Trusted`;
//! - `eventbridge-bytes CLAUSES` / `sns-evaluator-bytes CLAUSES`: the `pol{CLAUSES}c` policy as
//!   an EventBridge pattern / as an SNS body-scope policy, each attrs line through
//!   `Evaluator::matches_bytes` (the library's entry point);
//! - `headers`: the one-clause header filter over the 8 borrowed passing headers;
//! - `set NAME` / `setbytes NAME`: the `NAME` policies (e.g. `pol10k_exact`) as a `SubscriptionSet`,
//!   matched against the attrs lines as attributes / as raw SNS bodies (body scope);
//! - `onebyone NAME`: the same policies evaluated one by one on one message (bind and run each);
//! - `quamina CLAUSES`: quamina-rs `matches_for_event` with the `pol{CLAUSES}c` pattern on the same
//!   attrs lines as `bytes`; `serde CLAUSES`: the hand-written floor on them (`serde_json` into
//!   [`Decoded`], then the check);
//! - `cityfeat` / `quamina-cityfeat` / `serde-cityfeat`: the 5 `StringIn` Event Grid filters on the
//!   first 1,000 cityfeat features as events (a `SubscriptionSet` from the bytes), quamina's 5
//!   patterns on the same events, and the floor that reads `data.properties.MAPBLKLOT` alone;
//! - `cityfeat-sns` / `trusted-cityfeat-sns` / `quamina-cityfeat-sns`: the features of
//!   `cityfeat_sample` as raw SNS bodies through a set of the 5 `cl_exact` patterns as body-scope
//!   SNS policies (read validating / in `ReadMode::Trusted`), and quamina's 5 patterns on the same
//!   bodies (the `cityfeat_sns_*` rows of `benches/instructions.rs`).
//!
//! Each mode runs 20,000 messages: divide the collected instructions by 20,000.
use filtervm_bench::{
    CityfeatFloor, Decoded, PASSING_HEADERS, body_single, cityfeat_event, cityfeat_filters,
    eventbridge_filter, hand, header_filter, lines, single_message, singles,
};
use filtervm_compiler::{Evaluator, MessageParts, SetScratch, SubscriptionSet};
use filtervm_vm::bind::Bindings;
use filtervm_vm::json::ReadMode;
use filtervm_vm::program::Program;
use std::hint::black_box;

#[inline(never)]
fn run_eval(program: &Program, bound: &filtervm_vm::bind::Bound<'_>) -> usize {
    let mut registers = Vec::new();
    let mut hits = 0;
    for _ in 0..1000 {
        hits += usize::from(black_box(program).eval(black_box(bound), &mut registers));
    }
    hits
}

#[inline(never)]
fn run_bytes(program: &Program, lines: &[Vec<u8>], mode: ReadMode) -> usize {
    let mut bindings = Bindings::new();
    bindings.set_read_mode(mode);
    let mut registers = Vec::new();
    let mut hits = 0;
    for line in lines.iter().cycle().take(20_000) {
        let bound = bindings.bind_json(program.keys(), black_box(line));
        hits += usize::from(program.eval(&bound, &mut registers));
    }
    hits
}

#[inline(never)]
fn run_headers(filter: &filtervm_compiler::Filter) -> usize {
    let mut evaluator = Evaluator::new();
    let mut hits = 0;
    for _ in 0..20_000 {
        hits += usize::from(evaluator.matches_headers(filter, black_box(&PASSING_HEADERS[..])));
    }
    hits
}

#[inline(never)]
fn run_set(set: &SubscriptionSet<u64>, messages: &[filtervm_vm::message::Message]) -> usize {
    let mut scratch = SetScratch::new();
    let mut n = 0;
    for m in messages.iter().cycle().take(20_000) {
        n += set
            .matching(&mut scratch, &filtervm_bench::parts(black_box(m)))
            .len();
    }
    n
}

#[inline(never)]
fn run_set_bytes(set: &SubscriptionSet<u64>, lines: &[Vec<u8>]) -> usize {
    let mut scratch = SetScratch::new();
    let mut n = 0;
    for l in lines.iter().cycle().take(20_000) {
        n += set
            .try_matching(&mut scratch, &MessageParts::body(black_box(l)))
            .map_or(0, |m| m.len());
    }
    n
}

#[inline(never)]
fn run_one_by_one(
    filters: &[filtervm_compiler::Filter],
    message: &filtervm_vm::message::Message,
) -> usize {
    let mut evaluator = Evaluator::new();
    let mut n = 0;
    for _ in 0..3 {
        n += filters
            .iter()
            .filter(|f| evaluator.matches(f, black_box(message)))
            .count();
    }
    n
}

/// Each line through `Evaluator::matches_bytes` (the library's entry point), 20,000 in all.
#[inline(never)]
fn run_evaluator(filter: &filtervm_compiler::Filter, lines: &[Vec<u8>]) -> usize {
    let mut evaluator = Evaluator::new();
    let mut n = 0;
    for l in lines.iter().cycle().take(20_000) {
        n += usize::from(evaluator.matches_bytes(filter, black_box(l)) == Ok(true));
    }
    n
}

#[inline(never)]
fn run_set_bytes_in(set: &SubscriptionSet<u64>, lines: &[Vec<u8>], mode: ReadMode) -> usize {
    let mut scratch = SetScratch::new();
    scratch.set_read_mode(mode);
    let mut n = 0;
    for l in lines.iter().cycle().take(20_000) {
        n += set
            .try_matching(&mut scratch, &MessageParts::body(black_box(l)))
            .map_or(0, |m| m.len());
    }
    n
}

#[inline(never)]
fn run_quamina(q: &quamina::Quamina<u64>, lines: &[Vec<u8>]) -> usize {
    let mut n = 0;
    for l in lines.iter().cycle().take(20_000) {
        n += q.matches_for_event(black_box(l)).map_or(0, |m| m.len());
    }
    n
}

#[inline(never)]
fn run_serde(check: filtervm_bench::Hand, lines: &[Vec<u8>]) -> usize {
    let mut n = 0;
    for l in lines.iter().cycle().take(20_000) {
        n += usize::from(
            serde_json::from_slice::<Decoded<'_>>(black_box(l)).is_ok_and(|d| check(&d)),
        );
    }
    n
}

#[inline(never)]
fn run_serde_cityfeat(floor: &CityfeatFloor, events: &[Vec<u8>]) -> usize {
    let mut n = 0;
    for e in events.iter().cycle().take(20_000) {
        n += floor.event_matches(black_box(e));
    }
    n
}

fn set_of(name: &str, options: &filtervm_compiler::Options) -> SubscriptionSet<u64> {
    let mut set = SubscriptionSet::new();
    for (i, l) in lines(name, usize::MAX).iter().enumerate() {
        let p: serde_json::Value = serde_json::from_str(l).expect("policy");
        let f = filtervm_compiler::compile(filtervm_compiler::Dialect::Sns, &p, options)
            .expect("compiles");
        set.insert(i as u64, &f).expect("adds");
    }
    set
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "eval".to_owned());
    let index: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    match mode.as_str() {
        "bytes" | "trusted-bytes" => {
            let mode = if mode == "bytes" {
                ReadMode::Validating
            } else {
                ReadMode::Trusted
            };
            let single = body_single(index);
            let lines: Vec<Vec<u8>> = lines("attrs", 1000)
                .into_iter()
                .map(String::into_bytes)
                .collect();
            println!(
                "{} bytes {}",
                single.name,
                run_bytes(&single.program, &lines, mode)
            );
        }
        "eventbridge-bytes" | "sns-evaluator-bytes" => {
            // The same `pol{N}c` policy as an EventBridge pattern, or as an SNS body-scope
            // policy, through `Evaluator::matches_bytes`.
            let filter = if mode == "eventbridge-bytes" {
                eventbridge_filter(index).1
            } else {
                filtervm_compiler::compile_text(
                    filtervm_compiler::Dialect::Sns,
                    &body_single(index).policy.to_string(),
                    &filtervm_bench::body_scope(),
                )
                .expect("compiles")
            };
            let lines: Vec<Vec<u8>> = lines("attrs", 1000)
                .into_iter()
                .map(String::into_bytes)
                .collect();
            println!("{mode} {index} {}", run_evaluator(&filter, &lines));
        }
        "headers" => println!("headers {}", run_headers(&header_filter())),
        "quamina" | "serde" => {
            let single = body_single(index);
            let lines: Vec<Vec<u8>> = lines("attrs", 1000)
                .into_iter()
                .map(String::into_bytes)
                .collect();
            if mode == "serde" {
                let check = hand(&single.name).expect("a hand-written check");
                println!("{} serde {}", single.name, run_serde(check, &lines));
            } else {
                let mut q = quamina::Quamina::<u64>::new();
                q.add_pattern(0, &single.policy.to_string())
                    .expect("quamina pattern");
                println!("{} quamina {}", single.name, run_quamina(&q, &lines));
            }
        }
        "cityfeat" | "quamina-cityfeat" | "serde-cityfeat" => {
            let specs = cityfeat_filters();
            let events: Vec<Vec<u8>> = lines("cityfeat", 1000)
                .iter()
                .map(|l| cityfeat_event(l))
                .collect();
            let n = match mode.as_str() {
                "cityfeat" => {
                    let mut set = SubscriptionSet::new();
                    for (i, (f, _)) in specs.iter().enumerate() {
                        let filter = filtervm_compiler::compile(
                            filtervm_compiler::Dialect::EventGrid,
                            f,
                            &filtervm_compiler::Dialect::EventGrid.into(),
                        )
                        .expect("compiles");
                        set.insert(i as u64, &filter).expect("adds");
                    }
                    run_set_bytes(&set, &events)
                }
                "quamina-cityfeat" => {
                    let mut q = quamina::Quamina::<u64>::new();
                    for (i, (_, p)) in specs.iter().enumerate() {
                        q.add_pattern(i as u64, p).expect("quamina pattern");
                    }
                    run_quamina(&q, &events)
                }
                _ => run_serde_cityfeat(&CityfeatFloor::new(&specs), &events),
            };
            println!("{mode} {n}");
        }
        "cityfeat-sns" | "trusted-cityfeat-sns" | "quamina-cityfeat-sns" => {
            let bodies: Vec<Vec<u8>> = filtervm_bench::cityfeat_sample()
                .into_iter()
                .map(String::into_bytes)
                .collect();
            let patterns = lines("cl_exact", 5);
            let n = if mode == "quamina-cityfeat-sns" {
                let mut q = quamina::Quamina::<u64>::new();
                for (i, p) in patterns.iter().enumerate() {
                    q.add_pattern(i as u64, p).expect("quamina pattern");
                }
                run_quamina(&q, &bodies)
            } else {
                let mut set = SubscriptionSet::new();
                for (i, p) in patterns.iter().enumerate() {
                    let filter = filtervm_compiler::compile_text(
                        filtervm_compiler::Dialect::Sns,
                        p,
                        &filtervm_bench::body_scope(),
                    )
                    .expect("compiles");
                    set.insert(i as u64, &filter).expect("adds");
                }
                let read = if mode == "cityfeat-sns" {
                    ReadMode::Validating
                } else {
                    ReadMode::Trusted
                };
                run_set_bytes_in(&set, &bodies, read)
            };
            println!("{mode} {n}");
        }
        "onebyone" => {
            let name = std::env::args()
                .nth(2)
                .unwrap_or_else(|| "pol10k_exact".into());
            let filters: Vec<_> = lines(&name, usize::MAX)
                .iter()
                .map(|l| {
                    let p: serde_json::Value = serde_json::from_str(l).expect("policy");
                    filtervm_compiler::compile(
                        filtervm_compiler::Dialect::Sns,
                        &p,
                        &filtervm_compiler::Options::from(filtervm_compiler::Dialect::Sns),
                    )
                    .expect("compiles")
                })
                .collect();
            let message = filtervm_bench::attributes(
                &serde_json::from_str(&lines("attrs", 1)[0]).expect("JSON"),
            );
            println!("{name} one by one {}", run_one_by_one(&filters, &message));
        }
        "set" | "setbytes" => {
            let name = std::env::args()
                .nth(2)
                .unwrap_or_else(|| "pol10k_exact".into());
            let attrs = lines("attrs", 1000);
            if mode == "set" {
                let set = set_of(
                    &name,
                    &filtervm_compiler::Options::from(filtervm_compiler::Dialect::Sns),
                );
                let messages: Vec<_> = attrs
                    .iter()
                    .map(|l| filtervm_bench::attributes(&serde_json::from_str(l).expect("JSON")))
                    .collect();
                println!("{name} {}", run_set(&set, &messages));
            } else {
                let set = set_of(&name, &filtervm_bench::body_scope());
                let lines: Vec<Vec<u8>> = attrs.into_iter().map(String::into_bytes).collect();
                println!("{name} bytes {}", run_set_bytes(&set, &lines));
            }
        }
        _ => {
            let single = singles().into_iter().nth(index).expect("workload");
            let message = single_message(&single);
            let mut bindings = Bindings::new();
            let bound = bindings.bind(single.program.keys(), &message);
            println!("{} {}", single.name, run_eval(&single.program, &bound));
        }
    }
}

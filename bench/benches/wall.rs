//! Wall clock (criterion): filtervm against its peers in the same process, and a
//! `SubscriptionSet` against one-by-one evaluation.
//!
//! - `single/<workload>/<engine>`: one policy, one message every clause of which runs.
//!   `filtervm` evaluates the program on the message already bound (binding is
//!   `filtervm_bind`); `hand` is a hand-written Rust check of the same condition on a decoded
//!   struct; `quamina_match` is quamina's automaton on the event already flattened (its JSON
//!   flattening is `quamina_flatten`); `cel` executes a compiled CEL program on a prebuilt
//!   context; `reference` is filtervm's reference interpreter (policy JSON on message JSON).
//! - `set/<workload>/<engine>`: 10k subscriptions; one iteration runs the first
//!   [`SET_MESSAGES`] lines of `attrs.jsonl` (the same messages as the instruction counts):
//!   `filtervm_set` binds once and matches the whole `SubscriptionSet`; `one_by_one` binds and runs
//!   each of the 10k programs; `quamina_match` runs quamina's automaton of the 10k patterns on the
//!   pre-flattened event. The set's ids are checked equal to one-by-one's on every message first.
//!
//! - `e2e/<workload>/<engine>`: from what the broker holds to the verdict; one iteration runs
//!   every line of the sample ([`E2E_MESSAGES`] NDJSON lines as bytes; the 10k sets: the
//!   [`SET_MESSAGES`] lines the instruction counts run), every engine's answer checked equal to
//!   filtervm one-by-one's on every line first. `pol{1,3,8}c` on attrs lines as SNS bodies (body scope):
//!   `filtervm_bytes` reads the raw bytes (validating all of them), binds what the program reads
//!   and runs it; `filtervm_trusted` reads them in `ReadMode::Trusted` (members no key reads
//!   skipped by their structure, unchecked: input validated upstream); `quamina` is quamina-rs
//!   `matches_for_event` on the same bytes. `cityfeat`:
//!   each feature wrapped as an Event Grid event (`data`), 5 `StringIn` filters on
//!   `data.properties.MAPBLKLOT` (from `cl_exact`): `filtervm_set_bytes` matches them as one
//!   `SubscriptionSet` (one read), `filtervm_bytes_each` one by one; `quamina` has the 5 patterns.
//!   `hand_serde` is the floor: the same condition written by hand over a struct `serde_json`
//!   derives from the bytes (borrowed text, every byte validated, unread members skipped).
//!   `cityfeat_sns_5`: the same features as raw SNS bodies and the `cl_exact` patterns as 5
//!   body-scope SNS policies (quamina reads the patterns as they are); `filtervm_set_trusted`
//!   is the same set read in `ReadMode::Trusted`.
//!   `eventbridge_pol{1,3,8}c`: the `pol{1,3,8}c` policies as EventBridge patterns, on the same
//!   attrs lines through `Evaluator::matches_bytes` (`filtervm_bytes`), against quamina with the
//!   same patterns.
//!   `pol10k_*`: the 10k policies as one body-scope `SubscriptionSet` from raw attrs lines
//!   (`filtervm_set_trusted`: read in `ReadMode::Trusted`).
//!   `headers_1c`: one clause (`event in [...]`) over 8 borrowed `(&str, &str)` headers, the
//!   lookup included (`filtervm_headers`), against the same check written by hand (`hand`).
//! - `compile/<workload>/compile_text`: policy text to a filter (`compile_text`, the filter
//!   dropped inside the timing), on `filtervm_bench::compile_workloads`. `compile/set_add/*`:
//!   compiling a `pol10k_exact` policy (body scope) and adding it to a `SubscriptionSet`, then removing
//!   it, with the set empty (`empty`) and holding the other 9,999 (`of_10k`): the two stay alike
//!   when adding costs in proportion to the policy, not the set.
//!
//! A peer that panics or disagrees with filtervm on a workload is reported "peer failed" and left
//! out; the run goes on. Each group whose iteration runs several messages prints
//! `per-iteration: GROUP N`, for `scripts/bench_report.py` to divide by. `scripts/bench.sh` runs
//! this and writes `BENCHMARKS.md`.

#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

use cel_interpreter::objects::Map as CelMap;
use cel_interpreter::{Context, Program as CelProgram, Value as CelValue};
use criterion::{Criterion, criterion_group, criterion_main};
use filtervm_bench::{
    CityfeatFloor, Decoded, E2E_MESSAGES, HandBound, PASSING_HEADERS, SET_MESSAGES, Single,
    attributes, body_scope, body_single, cel, cityfeat_event, cityfeat_filters, cityfeat_sample,
    compile_workloads, decode, eventbridge_filter, hand, hand_headers, header_filter, lines, parts,
    reference_message, single_event, single_message, singles,
};
use filtervm_compiler::{Dialect, Evaluator, Filter, ReadMode, compile, compile_text};
use filtervm_compiler::{MessageParts, SetScratch, SubscriptionSet};
use filtervm_vm::bind::Bindings;
use quamina::Quamina;
use quamina::automaton::NfaBuffers;
use quamina::flatten_json::{Field, State};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hint::black_box;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

/// Runs a peer's setup and first answer, catching a panic; `None` (and a "peer failed" line)
/// when it panics, errs or disagrees with filtervm.
fn peer<T>(
    name: &str,
    workload: &str,
    expected: bool,
    setup: impl FnOnce() -> Result<(T, bool), String>,
) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(setup)) {
        Ok(Ok((t, verdict))) if verdict == expected => Some(t),
        Ok(Ok((_, verdict))) => {
            println!("peer failed: {name} on {workload}: says {verdict}, filtervm says {expected}");
            None
        }
        Ok(Err(e)) => {
            println!("peer failed: {name} on {workload}: {e}");
            None
        }
        Err(_) => {
            println!("peer failed: {name} on {workload}: panicked");
            None
        }
    }
}

/// A flat JSON object as a CEL map (numbers as doubles).
fn cel_context(event: &Value) -> Context<'static> {
    let mut map: HashMap<String, CelValue> = HashMap::new();
    if let Value::Object(members) = event {
        for (k, v) in members {
            let v = match v {
                Value::String(s) => CelValue::String(Arc::new(s.clone())),
                Value::Number(n) => CelValue::Float(n.as_f64().unwrap_or(f64::NAN)),
                Value::Bool(b) => CelValue::Bool(*b),
                _ => CelValue::Null,
            };
            map.insert(k.clone(), v);
        }
    }
    let mut context = Context::default();
    context.add_variable_from_value("m", CelValue::Map(CelMap::from(map)));
    context
}

/// quamina's flattened fields of an event, sorted by path as its matcher wants them.
fn flatten<'a>(q: &Quamina<u64>, event: &'a [u8]) -> Result<Vec<Field<'a>>, String> {
    let mut state = State::new();
    let fields = state
        .flatten(event, q.segments_tree())
        .map_err(|e| e.to_string())?;
    let mut fields = fields.to_vec();
    fields.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Ok(fields)
}

fn configure(c: &mut Criterion) -> Criterion {
    std::mem::take(c)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

fn single(c: &mut Criterion, s: &Single) {
    let event = single_event(s);
    let event_bytes = event.to_string().into_bytes();
    let message = single_message(s);
    let mut scratch = Bindings::new();
    let bindings = scratch.bind(s.program.keys(), &message);
    let mut registers = Vec::new();
    let expected = s.program.eval(&bindings, &mut registers);
    let mut group = c.benchmark_group(format!("single/{}", s.name));

    group.bench_function("filtervm", |b| {
        b.iter(|| s.program.eval(black_box(&bindings), &mut registers))
    });
    let mut bind_buffer = Bindings::new();
    group.bench_function("filtervm_bind", |b| {
        b.iter(|| {
            bind_buffer
                .bind(s.program.keys(), black_box(&message))
                .rows()
        })
    });

    if let Some(check) = hand(&s.name) {
        let decoded = decode(&event);
        if peer("hand", &s.name, expected, || Ok(((), check(&decoded)))).is_some() {
            group.bench_function("hand", |b| b.iter(|| check(black_box(&decoded))));
        }
    }

    if let Some(bound) = HandBound::new(s)
        && peer("hand_bound", &s.name, expected, || {
            Ok(((), bound.check(&bindings)))
        })
        .is_some()
    {
        group.bench_function("hand_bound", |b| {
            b.iter(|| bound.check(black_box(&bindings)))
        });
    }

    let quamina = peer("quamina", &s.name, expected, || {
        let mut q = Quamina::<u64>::new();
        q.add_pattern(1, &s.policy.to_string())
            .map_err(|e| e.to_string())?;
        let verdict = !q
            .matches_for_event(&event_bytes)
            .map_err(|e| e.to_string())?
            .is_empty();
        Ok((q, verdict))
    });
    if let Some(q) = quamina {
        let fields = flatten(&q, &event_bytes).expect("flattens");
        let mut bufs = NfaBuffers::new();
        let direct = !q
            .automaton()
            .matches_for_fields_direct(&fields, &mut bufs)
            .is_empty();
        if direct == expected {
            group.bench_function("quamina_match", |b| {
                b.iter(|| {
                    q.automaton()
                        .matches_for_fields_direct(black_box(&fields), &mut bufs)
                        .len()
                })
            });
            let mut state = State::new();
            group.bench_function("quamina_flatten", |b| {
                b.iter(|| {
                    state
                        .flatten(black_box(&event_bytes), q.segments_tree())
                        .map(|f| f.len())
                })
            });
        } else {
            println!(
                "peer failed: quamina (pre-flattened) on {}: disagrees",
                s.name
            );
        }
    }

    if let Some(expr) = cel(&s.name) {
        let cel_peer = peer("cel", &s.name, expected, || {
            let program = CelProgram::compile(&expr).map_err(|e| format!("{e:?}"))?;
            let context = cel_context(&event);
            let verdict = matches!(
                program.execute(&context).map_err(|e| format!("{e:?}"))?,
                CelValue::Bool(true)
            );
            Ok(((program, context), verdict))
        });
        if let Some((program, context)) = cel_peer {
            group.bench_function("cel", |b| {
                b.iter(|| program.execute(black_box(&context)).is_ok())
            });
        }
    }

    let vector = if s.name == "seed" {
        json!({"attributes": {
            "event": {"type": "String", "value": "order.paid"},
            "environment": {"type": "String", "value": "production"},
            "amount": {"type": "Number", "value": "149.50"}}})
    } else {
        reference_message(s.dialect, &event)
    };
    // The reference reads its own JSON values.
    use filtervm_conformance::reference::json::Value as ReferenceValue;
    let options = ReferenceValue::Null;
    let (policy, vector) = (
        ReferenceValue::from(&s.policy),
        ReferenceValue::from(&vector),
    );
    // Validated once (as the policy is compiled once); the timing is evaluation only.
    let reference = peer("reference", &s.name, expected, || {
        let v = filtervm_conformance::reference::evaluate(s.dialect, &options, &policy, &vector)
            .map_err(|e| e.to_string())?;
        Ok(((), v))
    });
    if reference.is_some() {
        group.bench_function("reference", |b| {
            b.iter(|| {
                filtervm_conformance::reference::evaluate_valid(
                    s.dialect,
                    &options,
                    black_box(&policy),
                    black_box(&vector),
                )
            })
        });
    }
    group.finish();
}

fn singles_bench(c: &mut Criterion) {
    let mut c = configure(c);
    for s in singles() {
        single(&mut c, &s);
    }
}

fn set(c: &mut Criterion, name: &str) {
    let policies: Vec<Value> = lines(name, usize::MAX)
        .iter()
        .map(|l| serde_json::from_str(l).expect("policy"))
        .collect();
    let filters: Vec<_> = policies
        .iter()
        .map(|p| compile(Dialect::Sns, p, &Dialect::Sns.into()).expect("compiles"))
        .collect();
    let mut set = SubscriptionSet::new();
    for (i, f) in filters.iter().enumerate() {
        set.insert(i as u64, f).expect("adds");
    }
    let events: Vec<Value> = lines("attrs", SET_MESSAGES)
        .iter()
        .map(|l| serde_json::from_str(l).expect("message"))
        .collect();
    let messages: Vec<_> = events.iter().map(attributes).collect();
    let event_bytes: Vec<Vec<u8>> = events.iter().map(|e| e.to_string().into_bytes()).collect();

    // The set agrees with one-by-one evaluation on every message the bench runs.
    let mut matcher = SetScratch::new();
    let mut evaluator = Evaluator::new();
    let mut expected_counts = Vec::new();
    for m in &messages {
        let got: Vec<u64> = set
            .matching(&mut matcher, &parts(m))
            .ids()
            .copied()
            .collect();
        let want: Vec<u64> = filters
            .iter()
            .enumerate()
            .filter(|(_, f)| evaluator.matches(f, m))
            .map(|(i, _)| i as u64)
            .collect();
        assert_eq!(got, want, "{name}: the set disagrees with one-by-one");
        expected_counts.push(got.len());
    }

    let group_name = format!("set/{name}");
    println!("per-iteration: {group_name} {}", messages.len());
    let mut group = c.benchmark_group(group_name);
    group.bench_function("filtervm_set", |b| {
        b.iter(|| {
            messages
                .iter()
                .map(|m| set.matching(&mut matcher, &parts(black_box(m))).len())
                .sum::<usize>()
        })
    });
    group.bench_function("filtervm_bind", |b| {
        b.iter(|| {
            for m in &messages {
                set.bind_only(&mut matcher, &parts(black_box(m)));
            }
        })
    });

    let quamina = peer("quamina", name, true, || {
        let mut q = Quamina::<u64>::new();
        for (i, p) in policies.iter().enumerate() {
            q.add_pattern(i as u64, &p.to_string())
                .map_err(|e| format!("pattern {i}: {e}"))?;
        }
        // It must find the same number of matches as the set, message by message.
        let mut bufs = NfaBuffers::new();
        for (bytes, want) in event_bytes.iter().zip(&expected_counts) {
            let fields = flatten(&q, bytes)?;
            let got = q
                .automaton()
                .matches_for_fields_direct(&fields, &mut bufs)
                .len();
            if got != *want {
                return Ok((q, false));
            }
        }
        Ok((q, true))
    });
    if let Some(q) = quamina {
        let flattened: Vec<Vec<Field<'_>>> = event_bytes
            .iter()
            .map(|b| flatten(&q, b).expect("flattens"))
            .collect();
        let mut bufs = NfaBuffers::new();
        group.bench_function("quamina_match", |b| {
            b.iter(|| {
                flattened
                    .iter()
                    .map(|f| {
                        q.automaton()
                            .matches_for_fields_direct(black_box(f), &mut bufs)
                            .len()
                    })
                    .sum::<usize>()
            })
        });
    }

    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("one_by_one", |b| {
        b.iter(|| {
            let mut n = 0;
            for m in &messages {
                n += filters
                    .iter()
                    .filter(|f| evaluator.matches(f, black_box(m)))
                    .count();
            }
            n
        })
    });
    group.finish();
}

fn sets_bench(c: &mut Criterion) {
    let mut c = configure(c);
    for name in ["pol10k_exact", "pol10k_num", "pol10k_mixed"] {
        set(&mut c, name);
    }
}

/// quamina-rs with `patterns`, checked to agree with `expected` (per line: the number of
/// matches) on every line.
fn quamina_of(
    name: &str,
    patterns: &[String],
    lines: &[Vec<u8>],
    expected: &[usize],
) -> Option<Quamina<u64>> {
    peer("quamina", name, true, || {
        let mut q = Quamina::<u64>::new();
        for (i, p) in patterns.iter().enumerate() {
            q.add_pattern(i as u64, p)
                .map_err(|e| format!("pattern {i}: {e}"))?;
        }
        for (line, want) in lines.iter().zip(expected) {
            let got = q.matches_for_event(line).map_err(|e| e.to_string())?.len();
            if got != *want {
                return Ok((q, false));
            }
        }
        Ok((q, true))
    })
}

/// A benchmark group of end-to-end rows whose every iteration runs all `lines` (printed for the
/// report to divide by).
fn e2e_group<'a>(
    c: &'a mut Criterion,
    name: &str,
    lines: usize,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let group = format!("e2e/{name}");
    println!("per-iteration: {group} {lines}");
    c.benchmark_group(group)
}

/// Times `engine` over every line of `lines` as one iteration.
fn bench_lines(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    lines: &[Vec<u8>],
    mut engine: impl FnMut(&[u8]) -> usize,
) {
    group.bench_function(name, |b| {
        b.iter(|| lines.iter().map(|l| engine(black_box(l))).sum::<usize>())
    });
}

fn bench_quamina(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    q: &Quamina<u64>,
    lines: &[Vec<u8>],
) {
    bench_lines(group, "quamina", lines, |l| {
        q.matches_for_event(l).map_or(0, |m| m.len())
    });
}

/// The matches of each body-scope filter in `filters`, one by one, on each line: what every other
/// engine of a row must find.
fn one_by_one_bytes(filters: &[Filter], lines: &[Vec<u8>]) -> Vec<usize> {
    let mut evaluator = Evaluator::new();
    lines
        .iter()
        .map(|l| {
            filters
                .iter()
                .filter(|f| evaluator.matches_bytes(f, l) == Ok(true))
                .count()
        })
        .collect()
}

/// A set of `filters` (ids in order), checked to find on every line what one-by-one finds.
fn checked_set(
    name: &str,
    filters: &[Filter],
    lines: &[Vec<u8>],
    expected: &[usize],
) -> SubscriptionSet<u64> {
    let mut set = SubscriptionSet::new();
    for (i, f) in filters.iter().enumerate() {
        set.insert(i as u64, f).expect("adds");
    }
    let mut matcher = SetScratch::new();
    for (line, want) in lines.iter().zip(expected) {
        let got = set
            .try_matching(&mut matcher, &MessageParts::body(line))
            .map_or(0, |m| m.len());
        assert_eq!(got, *want, "{name}: the set disagrees with one-by-one");
    }
    set
}

/// `set` matched from each line read in [`ReadMode::Trusted`] (`filtervm_set_trusted`), checked
/// first to find on every line what one-by-one finds.
fn bench_set_trusted(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    set: &SubscriptionSet<u64>,
    lines: &[Vec<u8>],
    expected: &[usize],
) {
    let mut scratch = SetScratch::new();
    scratch.set_read_mode(ReadMode::Trusted);
    let mut engine = |l: &[u8]| {
        set.try_matching(&mut scratch, &MessageParts::body(l))
            .map_or(0, |m| m.len())
    };
    let got: Vec<usize> = lines.iter().map(|l| engine(l)).collect();
    assert_eq!(
        got, expected,
        "the set read trusted disagrees with one-by-one"
    );
    bench_lines(group, "filtervm_set_trusted", lines, engine);
}

/// Raw JSON bytes → verdict, against quamina-rs on the same bytes.
fn e2e_bench(c: &mut Criterion) {
    let mut c = configure(c);
    let attrs: Vec<Vec<u8>> = lines("attrs", E2E_MESSAGES)
        .into_iter()
        .map(String::into_bytes)
        .collect();
    for clauses in [1, 3, 8] {
        let single = body_single(clauses);
        let program = &single.program;
        let mut bindings = Bindings::new();
        let mut registers = Vec::new();
        let expected: Vec<usize> = attrs
            .iter()
            .map(|l| {
                let bound = bindings.bind_json(program.keys(), l);
                usize::from(program.eval(&bound, &mut registers))
            })
            .collect();
        let mut group = e2e_group(&mut c, &single.name, attrs.len());
        bench_lines(&mut group, "filtervm_bytes", &attrs, |l| {
            let bound = bindings.bind_json(program.keys(), l);
            usize::from(program.eval(&bound, &mut registers))
        });
        let mut trusted = Bindings::new();
        trusted.set_read_mode(ReadMode::Trusted);
        let mut by_trusted = |l: &[u8]| {
            let bound = trusted.bind_json(program.keys(), l);
            usize::from(program.eval(&bound, &mut registers))
        };
        let from_trusted: Vec<usize> = attrs.iter().map(|l| by_trusted(l)).collect();
        assert_eq!(
            from_trusted, expected,
            "{}: the trusted read disagrees",
            single.name
        );
        bench_lines(&mut group, "filtervm_trusted", &attrs, by_trusted);
        if let Some(q) = quamina_of(
            &single.name,
            &[single.policy.to_string()],
            &attrs,
            &expected,
        ) {
            bench_quamina(&mut group, &q, &attrs);
        }
        // The floor: the same condition written by hand over a struct `serde_json` reads from
        // the bytes (borrowed text, every byte validated, unread members skipped).
        let check = hand(&single.name).expect("a hand-written check");
        let by_hand =
            |line: &[u8]| serde_json::from_slice::<Decoded<'_>>(line).is_ok_and(|d| check(&d));
        let from_hand: Vec<usize> = attrs.iter().map(|l| usize::from(by_hand(l))).collect();
        assert_eq!(
            from_hand, expected,
            "{}: the hand-written floor disagrees",
            single.name
        );
        bench_lines(&mut group, "hand_serde", &attrs, |l| {
            usize::from(by_hand(l))
        });
        group.finish();
    }
    // The same policies as EventBridge patterns (eventbridge; `pol8c` too: no key limit), through
    // `Evaluator::matches_bytes`, against quamina with the same patterns on the same bytes.
    for clauses in [1, 3, 8] {
        let (pattern, filter) = eventbridge_filter(clauses);
        let mut evaluator = Evaluator::new();
        let expected: Vec<usize> = attrs
            .iter()
            .map(|l| usize::from(evaluator.matches_bytes(&filter, l) == Ok(true)))
            .collect();
        // (No attrs line holds all eight clauses: `pol8c` is the cost of deciding no-match.)
        assert!(
            clauses == 8 || expected.contains(&1),
            "eventbridge pol{clauses}c matches some line"
        );
        let name = format!("eventbridge_pol{clauses}c");
        let mut group = e2e_group(&mut c, &name, attrs.len());
        bench_lines(&mut group, "filtervm_bytes", &attrs, |l| {
            usize::from(evaluator.matches_bytes(&filter, l) == Ok(true))
        });
        if let Some(q) = quamina_of(&name, &[pattern.to_string()], &attrs, &expected) {
            bench_quamina(&mut group, &q, &attrs);
        }
        group.finish();
    }

    // Event Grid on cityfeat: 5 StringIn filters. The sample holds the features they name (5 of
    // 50,000) and the first ones of the file.
    let specs = cityfeat_filters();
    let sample = cityfeat_sample();
    let events: Vec<Vec<u8>> = sample.iter().map(|l| cityfeat_event(l)).collect();
    let filters: Vec<Filter> = specs
        .iter()
        .map(|(f, _)| compile(Dialect::EventGrid, f, &Dialect::EventGrid.into()).expect("compiles"))
        .collect();
    let expected = one_by_one_bytes(&filters, &events);
    assert!(
        expected.iter().any(|&m| m > 0),
        "some cityfeat event matches"
    );
    let set = checked_set("cityfeat", &filters, &events, &expected);
    let mut matcher = SetScratch::new();
    let mut evaluator = Evaluator::new();
    let mut group = e2e_group(&mut c, "cityfeat_eventgrid_5", events.len());
    bench_lines(&mut group, "filtervm_set_bytes", &events, |e| {
        set.try_matching(&mut matcher, &MessageParts::body(e))
            .map_or(0, |m| m.len())
    });
    bench_lines(&mut group, "filtervm_bytes_each", &events, |e| {
        filters
            .iter()
            .filter(|f| evaluator.matches_bytes(f, e) == Ok(true))
            .count()
    });
    let patterns: Vec<String> = specs.iter().map(|(_, p)| p.clone()).collect();
    if let Some(q) = quamina_of("cityfeat", &patterns, &events, &expected) {
        bench_quamina(&mut group, &q, &events);
    }
    // The floor: `data.properties.MAPBLKLOT` read by `serde_json` into a struct.
    let floor = CityfeatFloor::new(&specs);
    let from_hand: Vec<usize> = events.iter().map(|e| floor.event_matches(e)).collect();
    assert_eq!(
        from_hand, expected,
        "cityfeat: the hand-written floor disagrees"
    );
    bench_lines(&mut group, "hand_serde", &events, |e| {
        floor.event_matches(e)
    });
    group.finish();

    // The same features as raw SNS bodies, the `cl_exact` patterns as 5 body-scope SNS policies
    // (quamina reads them as they are): bigger documents, most members skipped.
    let bodies: Vec<Vec<u8>> = sample.iter().map(|l| l.as_bytes().to_vec()).collect();
    let patterns = lines("cl_exact", 5);
    let filters: Vec<Filter> = patterns
        .iter()
        .map(|p| {
            let policy: Value = serde_json::from_str(p).expect("pattern");
            compile(Dialect::Sns, &policy, &body_scope()).expect("compiles")
        })
        .collect();
    let expected = one_by_one_bytes(&filters, &bodies);
    assert!(
        expected.iter().any(|&m| m > 0),
        "some cityfeat body matches"
    );
    let set = checked_set("cityfeat_sns", &filters, &bodies, &expected);
    let mut group = e2e_group(&mut c, "cityfeat_sns_5", bodies.len());
    bench_lines(&mut group, "filtervm_set_bytes", &bodies, |b| {
        set.try_matching(&mut matcher, &MessageParts::body(b))
            .map_or(0, |m| m.len())
    });
    bench_set_trusted(&mut group, &set, &bodies, &expected);
    if let Some(q) = quamina_of("cityfeat_sns", &patterns, &bodies, &expected) {
        bench_quamina(&mut group, &q, &bodies);
    }
    // The floor: `properties.MAPBLKLOT` read by `serde_json`, compared exactly (SNS equality).
    let from_hand: Vec<usize> = bodies.iter().map(|b| floor.body_matches(b)).collect();
    assert_eq!(
        from_hand, expected,
        "cityfeat as SNS bodies: the hand-written floor disagrees"
    );
    bench_lines(&mut group, "hand_serde", &bodies, |b| floor.body_matches(b));
    group.finish();

    // 10k subscriptions from raw JSON, one set (body scope), on the lines the instruction counts
    // run; every line checked against one-by-one first.
    let set_lines: Vec<Vec<u8>> = attrs.iter().take(SET_MESSAGES).cloned().collect();
    for name in ["pol10k_exact", "pol10k_num"] {
        let policies = lines(name, usize::MAX);
        let filters: Vec<Filter> = policies
            .iter()
            .map(|l| {
                let p: Value = serde_json::from_str(l).expect("policy");
                compile(Dialect::Sns, &p, &body_scope()).expect("compiles")
            })
            .collect();
        let expected = one_by_one_bytes(&filters, &set_lines);
        let set = checked_set(name, &filters, &set_lines, &expected);
        let mut matcher = SetScratch::new();
        let mut group = e2e_group(&mut c, name, set_lines.len());
        bench_lines(&mut group, "filtervm_set_bytes", &set_lines, |l| {
            set.try_matching(&mut matcher, &MessageParts::body(l))
                .map_or(0, |m| m.len())
        });
        bench_set_trusted(&mut group, &set, &set_lines, &expected);
        if let Some(q) = quamina_of(name, &policies, &set_lines, &expected) {
            bench_quamina(&mut group, &q, &set_lines);
        }
        group.finish();
    }

    // Borrowed headers, one clause, the lookup included.
    let filter = header_filter();
    let mut evaluator = Evaluator::new();
    assert!(evaluator.matches_headers(&filter, &PASSING_HEADERS));
    assert!(hand_headers(&PASSING_HEADERS));
    let mut group = c.benchmark_group("e2e/headers_1c");
    group.bench_function("filtervm_headers", |b| {
        b.iter(|| evaluator.matches_headers(&filter, black_box(&PASSING_HEADERS[..])))
    });
    group.bench_function("hand", |b| {
        b.iter(|| hand_headers(black_box(&PASSING_HEADERS)))
    });
    group.finish();
}

/// Policy text to filter, and adding to a set.
fn compile_bench(c: &mut Criterion) {
    let mut c = configure(c);
    for w in compile_workloads() {
        let mut group = c.benchmark_group(format!("compile/{}", w.name));
        group.bench_function("compile_text", |b| {
            b.iter(|| compile_text(w.dialect, black_box(&w.text), &w.options).is_ok())
        });
        group.finish();
    }
    let policies = lines("pol10k_exact", usize::MAX);
    let last = policies.len() as u64 - 1;
    let text = policies.last().expect("policies").clone();
    let mut empty = SubscriptionSet::new();
    let mut full = SubscriptionSet::new();
    for (i, l) in policies.iter().enumerate().take(policies.len() - 1) {
        let f = compile_text(Dialect::Sns, l, &body_scope()).expect("compiles");
        full.insert(i as u64, &f).expect("adds");
    }
    let mut group = c.benchmark_group("compile/set_add");
    for (name, set) in [("empty", &mut empty), ("of_10k", &mut full)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let f =
                    compile_text(Dialect::Sns, black_box(&text), &body_scope()).expect("compiles");
                set.insert(last, &f).expect("adds");
                set.remove(&last)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, singles_bench, sets_bench, e2e_bench, compile_bench);
criterion_main!(benches);

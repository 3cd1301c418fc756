//! Wall clock (criterion): filtervm's JSON reader against serde_json, sonic-rs and simd-json, on
//! the message workloads (`attrs.jsonl`, ~160 B flat events; `cityfeat.jsonl`, ~700 B GeoJSON
//! features), each message one NDJSON line as bytes. One iteration reads every line of a sample of
//! 1,000, so a median in µs is the median in ns per message. Run with
//! `FILTERVM_BENCH_DATA=DIR cargo bench --manifest-path bench/Cargo.toml --bench json`.
//!
//! - `filtervm/validate`: the whole line checked, nothing kept.
//! - `filtervm/extract_*`: the whole line checked, the wanted paths kept in a pruned document
//!   (`pol1c`: `event`; `pol3c`: `event`, `environment`, `region`; `pol8c`: the 8 keys of the
//!   generated 8-clause policy; `cityfeat5`: `type` and 4 `properties`/`geometry` paths).
//! - `memchr/quotes_utf8_controls`: a floor for memchr-based skipping (quotes and backslashes
//!   found with `memchr2`, UTF-8 and control bytes checked; no structure).
//! - `serde_json/ignored_any`, `serde_json/value`: serde_json as the bench workspace builds it
//!   (`preserve_order`).
//! - `sonic_rs/get_*`: the lazy `get`/`get_many` API (stops reading after the last wanted value:
//!   it does not validate the rest of the line).
//! - `simd_json/borrowed_value`: `to_borrowed_value` on a copy of the line (simd-json parses in
//!   place), with reused buffers.
//! - `quamina/matches_for_event_*`: the whole raw-bytes → verdict path of quamina-rs, the target
//!   of the message path (the generated 1/3/8-clause policy on attrs; the 5 `cl_exact` patterns
//!   on cityfeat), for a ratio measured in the same run.
//!
//! **Instruction counts.** With `FILTERVM_JSON_COUNT=WORKLOAD/CASE` (for example
//! `attrs/extract_pol1c`, `attrs/validate`, `cityfeat/quamina`, `attrs/quamina_pol3c`;
//! `attrs/extract_none` wants a path no line has) the bench
//! reads the sample once to warm up, then reads it once more inside [`counted`] and exits, for
//! callgrind to count that one call:
//!
//! ```text
//! FILTERVM_BENCH_DATA=DIR FILTERVM_JSON_COUNT=attrs/extract_pol1c valgrind --tool=callgrind \
//!   --callgrind-out-file=/dev/null --collect-atstart=no --toggle-collect='json::counted*' \
//!   bench/target/release/deps/json-HASH 2>&1 | grep Collected
//! ```
//!
//! and divide by the sample (1,000 lines).

use criterion::{Criterion, criterion_group};
use filtervm_vm::json::{self, Extractor, LoneSurrogates, Node, Selector};
use std::hint::black_box;

/// Messages per iteration.
const SAMPLE: usize = 1000;

const POL1C: &[&str] = &["event"];
const POL3C: &[&str] = &["event", "environment", "region"];
const POL8C: &[&str] = &[
    "event",
    "environment",
    "region",
    "source",
    "subject",
    "customer",
    "priority",
    "amount",
];
const CITYFEAT5: &[&str] = &[
    "type",
    "properties.MAPBLKLOT",
    "properties.STREET",
    "properties.BLOCK_NUM",
    "geometry.type",
];

fn lines(name: &str) -> Vec<Vec<u8>> {
    filtervm_bench::lines(name, SAMPLE)
        .into_iter()
        .map(String::into_bytes)
        .collect()
}

/// The number of members kept at the top level and one level down (so nothing is optimized
/// away, and the bench checks that the paths were found).
fn kept(doc: Node<'_>) -> usize {
    match doc {
        Node::Object(members) => members
            .iter()
            .map(|m| match m.value {
                Node::Object(inner) => inner.len(),
                _ => 1,
            })
            .sum(),
        _ => 0,
    }
}

fn sonic_tree(paths: &[&str]) -> sonic_rs::PointerTree {
    let mut tree = sonic_rs::PointerTree::new();
    for p in paths {
        tree.add_path(p.split('.').collect::<Vec<_>>());
    }
    tree
}

/// quamina-rs with `patterns` added, and its bench on the lines.
fn bench_quamina(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: &str,
    patterns: &[String],
    lines: &[Vec<u8>],
) {
    let mut q = quamina::Quamina::<u64>::new();
    for (i, p) in patterns.iter().enumerate() {
        q.add_pattern(i as u64, p)
            .expect("quamina takes the pattern");
    }
    assert!(
        lines.iter().all(|l| q.matches_for_event(l).is_ok()),
        "quamina {label} reads every line"
    );
    group.bench_function(format!("quamina/matches_for_event_{label}"), |b| {
        b.iter(|| {
            let mut n = 0;
            for line in lines {
                if let Ok(m) = q.matches_for_event(black_box(line)) {
                    n += m.len();
                }
            }
            black_box(n)
        })
    });
}

fn bench_workload(
    c: &mut Criterion,
    name: &str,
    selectors: &[(&str, &[&str])],
    quamina: &[(&str, Vec<String>)],
) {
    let lines = lines(name);
    assert_eq!(lines.len(), SAMPLE, "{name}: fewer lines than the sample");
    // Every reader's answer on every line is checked before it is timed: a reader that fails or
    // finds nothing is not measured.
    assert!(
        lines
            .iter()
            .all(|l| json::validate(l, LoneSurrogates::Replace).is_ok()),
        "{name}: filtervm validates every line"
    );
    assert!(
        lines.iter().all(
            |l| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok()
                && serde_json::from_slice::<serde_json::Value>(l).is_ok()
        ),
        "{name}: serde_json reads every line"
    );
    let mut group = c.benchmark_group(format!("json_{name}"));

    group.bench_function("filtervm/validate", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(json::validate(black_box(line), LoneSurrogates::Replace)).ok();
            }
        })
    });
    for (label, paths) in selectors {
        let selector = Selector::body_paths(paths.iter().copied());
        let mut extractor = Extractor::new();
        let found: usize = lines
            .iter()
            .map(|l| kept(extractor.extract(&selector, l).expect("valid line")))
            .sum();
        assert_eq!(
            found,
            SAMPLE * paths.len(),
            "{name} {label}: paths not found"
        );
        group.bench_function(format!("filtervm/extract_{label}"), |b| {
            b.iter(|| {
                let mut n = 0;
                for line in &lines {
                    if let Ok(doc) = extractor.extract(&selector, black_box(line)) {
                        n += kept(doc);
                    }
                }
                black_box(n)
            })
        });
    }

    // A floor for memchr-based skipping: only finding the quotes and backslashes (memchr2) and
    // checking the line is UTF-8 with no control byte, with no structure read at all. A skipper
    // built on memchr does at least this much; if it is not faster than `filtervm/validate`, which
    // does all of it and the structure in one pass of 8-byte words, memchr cannot win.
    group.bench_function("memchr/quotes_utf8_controls", |b| {
        b.iter(|| {
            for line in &lines {
                let line = black_box(line.as_slice());
                let quotes = memchr::memchr2_iter(b'"', b'\\', line).count();
                let text = std::str::from_utf8(line).is_ok();
                let controls = line.iter().fold(false, |any, &b| any | (b < 0x20));
                black_box((quotes, text, controls));
            }
        })
    });
    group.bench_function("serde_json/ignored_any", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(serde_json::from_slice::<serde::de::IgnoredAny>(black_box(
                    line,
                )))
                .ok();
            }
        })
    });
    group.bench_function("serde_json/value", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(serde_json::from_slice::<serde_json::Value>(black_box(line))).ok();
            }
        })
    });

    for (label, paths) in selectors {
        if let [only] = paths {
            let found = lines
                .iter()
                .filter(|l| sonic_rs::get(l.as_slice(), [*only]).is_ok())
                .count();
            assert_eq!(found, SAMPLE, "sonic-rs {label}: the path on every line");
            group.bench_function(format!("sonic_rs/get_{label}"), |b| {
                b.iter(|| {
                    for line in &lines {
                        black_box(sonic_rs::get(black_box(line.as_slice()), [*only])).ok();
                    }
                })
            });
        } else {
            let tree = sonic_tree(paths);
            let found = lines
                .iter()
                .filter_map(|l| sonic_rs::get_many(l.as_slice(), &tree).ok())
                .flatten()
                .flatten()
                .count();
            assert_eq!(found, SAMPLE * paths.len(), "sonic-rs {label}");
            group.bench_function(format!("sonic_rs/get_{label}"), |b| {
                b.iter(|| {
                    for line in &lines {
                        black_box(sonic_rs::get_many(black_box(line.as_slice()), &tree)).ok();
                    }
                })
            });
        }
    }

    let mut buffers = simd_json::Buffers::new(4096);
    let mut copy = Vec::new();
    let parsed = lines
        .iter()
        .filter(|l| {
            copy.clear();
            copy.extend_from_slice(l);
            simd_json::value::borrowed::to_value_with_buffers(&mut copy, &mut buffers).is_ok()
        })
        .count();
    assert_eq!(parsed, SAMPLE, "simd-json reads every line");
    group.bench_function("simd_json/borrowed_value", |b| {
        b.iter(|| {
            for line in &lines {
                copy.clear();
                copy.extend_from_slice(black_box(line));
                let value =
                    simd_json::value::borrowed::to_value_with_buffers(&mut copy, &mut buffers);
                black_box(value.is_ok());
            }
        })
    });
    for (label, patterns) in quamina {
        bench_quamina(&mut group, label, patterns, &lines);
    }
    group.finish();
}

fn json_readers(c: &mut Criterion) {
    let policy = |clauses| vec![filtervm_bench::sns_policy('c', clauses).to_string()];
    bench_workload(
        c,
        "attrs",
        &[("pol1c", POL1C), ("pol3c", POL3C), ("pol8c", POL8C)],
        &[
            ("pol1c", policy(1)),
            ("pol3c", policy(3)),
            ("pol8c", policy(8)),
        ],
    );
    bench_workload(
        c,
        "cityfeat",
        &[("cityfeat5", CITYFEAT5)],
        &[("cl_exact", filtervm_bench::lines("cl_exact", 5))],
    );
}

/// Reads every line of `lines` with `read` (the one call callgrind counts).
#[inline(never)]
fn counted(lines: &[Vec<u8>], read: &mut dyn FnMut(&[u8]) -> usize) -> usize {
    lines.iter().map(|l| read(black_box(l))).sum()
}

/// The warm-up before [`counted`] (not counted).
#[inline(never)]
fn warm(lines: &[Vec<u8>], read: &mut dyn FnMut(&[u8]) -> usize) -> usize {
    lines.iter().map(|l| read(black_box(l))).sum()
}

/// The instruction-count mode (see the module documentation): `case` is `WORKLOAD/CASE`.
fn count_one(case: &str) {
    let (workload, what) = case.split_once('/').expect("WORKLOAD/CASE");
    let lines = lines(workload);
    let paths: &[&str] = match (workload, what) {
        (_, "validate") | (_, "quamina") => &[],
        ("attrs", "extract_pol1c") => POL1C,
        ("attrs", "extract_pol3c") => POL3C,
        ("attrs", "extract_pol8c") => POL8C,
        ("cityfeat", "extract_cityfeat5") => CITYFEAT5,
        // A path no line has: the reader's cost through the extractor, nothing kept.
        (_, "extract_none") => &["absent.path"],
        (_, w) if w.starts_with("quamina_") => &[],
        _ => panic!("unknown case {case}"),
    };
    // With FILTERVM_JSON_PASSES=N, N timed passes instead (after the counted one): the fastest
    // and the median pass, in ns a line (a quick A/B check between two builds on a busy machine).
    let passes: usize = std::env::var("FILTERVM_JSON_PASSES")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let timed = |read: &mut dyn FnMut(&[u8]) -> usize| {
        let mut times: Vec<f64> = (0..passes)
            .map(|_| {
                let start = std::time::Instant::now();
                black_box(counted(&lines, read));
                start.elapsed().as_nanos() as f64 / lines.len() as f64
            })
            .collect();
        times.sort_by(f64::total_cmp);
        if let (Some(min), Some(median)) = (times.first(), times.get(times.len() / 2)) {
            println!("{case}: fastest {min:.1} ns/line, median {median:.1} over {passes} passes");
        }
    };
    let n = if what == "validate" {
        let mut read = |l: &[u8]| usize::from(json::validate(l, LoneSurrogates::Replace).is_ok());
        warm(&lines, &mut read);
        let n = counted(&lines, &mut read);
        timed(&mut read);
        n
    } else if let Some(label) = what.strip_prefix("quamina") {
        let patterns = match label.strip_prefix('_') {
            Some(pol) => {
                let clauses = pol
                    .trim_start_matches("pol")
                    .trim_end_matches('c')
                    .parse()
                    .expect("polNc");
                vec![filtervm_bench::sns_policy('c', clauses).to_string()]
            }
            None => filtervm_bench::lines("cl_exact", 5),
        };
        let mut q = quamina::Quamina::<u64>::new();
        for (i, p) in patterns.iter().enumerate() {
            q.add_pattern(i as u64, p)
                .expect("quamina takes the pattern");
        }
        let mut read = |l: &[u8]| q.matches_for_event(l).map_or(0, |m| m.len());
        warm(&lines, &mut read);
        let n = counted(&lines, &mut read);
        timed(&mut read);
        n
    } else {
        let selector = Selector::body_paths(paths.iter().copied());
        let mut extractor = Extractor::new();
        let mut read = |l: &[u8]| extractor.extract(&selector, l).map_or(0, kept);
        warm(&lines, &mut read);
        let n = counted(&lines, &mut read);
        timed(&mut read);
        n
    };
    println!("{case}: {n} over {} lines", lines.len());
}

criterion_group!(benches, json_readers);

fn main() {
    if let Ok(case) = std::env::var("FILTERVM_JSON_COUNT") {
        count_one(&case);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

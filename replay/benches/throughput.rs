//! Rows per second of `filtervm_match` and `filtervm_route` (10,000 subscriptions) in DataFusion
//! over NDJSON and Parquet, against the same filters written with DataFusion's JSON functions
//! (`datafusion-functions-json`), on 1 and 2 partitions and on 1 and 2 Ballista executors.
//!
//! ```sh
//! python3 bench/workloads.py /tmp/bench-data
//! cargo bench --manifest-path replay/Cargo.toml --features bench-peers --bench throughput -- /tmp/bench-data
//! ```
//!
//! `FILTERVM_BENCH_COPIES=N` makes the archive N times larger; `FILTERVM_BENCH_ONLY=local` or
//! `ballista` runs one part.
//!
//! Each figure is the median of `FILTERVM_BENCH_RUNS` runs (default 5) after one warm-up run:
//! `rows_per_s` from wall time, `rows_per_cpu_s` from the CPU time the process used (all
//! threads), which is rows per second per core busy and does not change when other processes
//! share the machine. Every query's answer is checked against the others' (filtervm against the
//! JSON functions; the cluster against the JSON functions on one local partition) before its
//! figures are printed, and the bench fails when they disagree. Prints `name: value` lines.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a benchmark: missing workload files or a failed query should stop it loudly"
)]

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::execution::FunctionRegistry;
use datafusion::prelude::{SessionConfig, SessionContext};
use filtervm_replay::adapter::Subscriptions;
use filtervm_replay::{cluster, session};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The single filter (SNS body scope): the workloads' 3-clause policy.
const POLICY: &str = r#"{"event":["order.paid"],"environment":["production"],"amount":[{"numeric":[">=",100,"<",1000]}]}"#;
const OPTIONS: &str = r#"{"scope":"MessageBody"}"#;

/// The same filter with DataFusion's JSON functions.
const PEER_FILTER: &str = "json_get_str(message, 'event') = 'order.paid' \
    AND json_get_str(message, 'environment') = 'production' \
    AND json_get_float(message, 'amount') >= 100 AND json_get_float(message, 'amount') < 1000";

/// Whether to run `part` (`local` or `ballista`): `FILTERVM_BENCH_ONLY` names one, or is unset
/// for both.
fn only(part: &str) -> bool {
    std::env::var("FILTERVM_BENCH_ONLY").map_or(true, |only| only == part)
}

fn runs() -> usize {
    std::env::var("FILTERVM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

fn count(batches: &[RecordBatch]) -> i64 {
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

/// The CPU time this process has used (all threads, those that ended included; user +
/// system), in microseconds from `getrusage`. Unlike wall time it does not grow when other
/// processes share the cores.
#[expect(
    unsafe_code,
    reason = "getrusage fills a zeroed struct it is handed; there is no safe wrapper in the tree"
)]
fn cpu_seconds() -> f64 {
    // SAFETY: `rusage` is plain data, valid when zeroed, and getrusage writes only into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF and a valid pointer to a rusage are what getrusage expects.
    let status = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(status, 0, "getrusage failed");
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// One query's figures: median wall seconds and median CPU seconds over `runs()` runs after a
/// warm-up, and its answer.
struct Timing {
    wall: f64,
    cpu: f64,
    answer: i64,
}

async fn time(ctx: &SessionContext, sql: &str) -> Timing {
    let answer = count(&ctx.sql(sql).await.unwrap().collect().await.unwrap());
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..runs() {
        let (started, cpu_before) = (Instant::now(), cpu_seconds());
        let again = count(&ctx.sql(sql).await.unwrap().collect().await.unwrap());
        wall.push(started.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - cpu_before);
        assert_eq!(again, answer, "{sql}: the answer changed between runs");
    }
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    Timing {
        wall: wall[wall.len() / 2],
        cpu: cpu[cpu.len() / 2],
        answer,
    }
}

/// The figure lines of one query (printed only once its answer was checked).
fn figure_lines(label: &str, rows: usize, timing: &Timing) -> [String; 3] {
    [
        format!("{label}_rows_per_s: {:.0}", rows as f64 / timing.wall),
        format!("{label}_rows_per_cpu_s: {:.0}", rows as f64 / timing.cpu),
        format!("{label}_answer: {}", timing.answer),
    ]
}

/// A local DataFusion session on `partitions` partitions with the filtervm functions, the JSON
/// functions and the archive at `path` as `events`.
async fn local(subs: &Arc<Subscriptions>, path: &Path, partitions: usize) -> SessionContext {
    let config = SessionConfig::new().with_target_partitions(partitions);
    let (mut state, _) = session::session_state(config, Some(Arc::clone(subs))).unwrap();
    datafusion_functions_json::register_all(&mut state as &mut dyn FunctionRegistry).unwrap();
    let ctx = SessionContext::new_with_state(state);
    session::register_archive(&ctx, "events", path, None)
        .await
        .unwrap();
    ctx
}

/// The archive: `copies` copies of `file` (a workload) as NDJSON files (one per copy), and the
/// same rows as one Parquet file of a `message` column with a row group per copy. DataFusion
/// splits a Parquet file between partitions by row groups (and NDJSON by files or byte ranges):
/// a file of one row group is read by one core however many partitions there are.
async fn archive(data: &Path, file: &str, out: &Path, copies: usize) -> (PathBuf, PathBuf, usize) {
    let lines = std::fs::read_to_string(data.join(file)).expect("the workload file");
    let out = out.join(file);
    let ndjson = out.join("ndjson");
    std::fs::create_dir_all(&ndjson).unwrap();
    for copy in 0..copies {
        std::fs::write(ndjson.join(format!("part-{copy}.ndjson")), &lines).unwrap();
    }
    let rows = lines.lines().count() * copies;
    let parquet = out.join("parquet");
    std::fs::create_dir_all(&parquet).unwrap();
    let ctx = SessionContext::new();
    session::register_archive(&ctx, "events", &ndjson, None)
        .await
        .unwrap();
    let group_rows = lines.lines().count();
    ctx.sql(&format!(
        "COPY (SELECT message FROM events) TO '{}/events.parquet' STORED AS PARQUET \
         OPTIONS ('format.max_row_group_size' '{group_rows}')",
        parquet.display()
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    (ndjson, parquet, rows)
}

/// pol10k_exact.jsonl as a subscriptions file (sns, body scope) and as two relational tables
/// of the exact values (the 8,000 event × environment × priority policies and the 2,000
/// event × region × source ones), for the peer's join.
fn subscriptions(data: &Path, out: &Path) -> (Arc<Subscriptions>, String, String) {
    let text = std::fs::read_to_string(data.join("pol10k_exact.jsonl")).expect("pol10k_exact");
    let mut subs = String::new();
    let (mut by_priority, mut by_region) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        let policy: serde_json::Value = serde_json::from_str(line).unwrap();
        subs.push_str(
            &serde_json::json!({"id": i, "dialect": "sns", "policy": policy, "options": {"scope": "MessageBody"}})
                .to_string(),
        );
        subs.push('\n');
        let field = |name: &str| policy[name][0].clone();
        if policy.get("priority").is_some() {
            by_priority.push(
                format!(
                    "({}, {}, {})",
                    field("event"),
                    field("environment"),
                    field("priority")
                )
                .replace('"', "'"),
            );
        } else {
            by_region.push(
                format!(
                    "({}, {}, {})",
                    field("event"),
                    field("region"),
                    field("source")
                )
                .replace('"', "'"),
            );
        }
    }
    std::fs::write(out.join("subscriptions.ndjson"), &subs).unwrap();
    (
        Arc::new(Subscriptions::from_ndjson(&subs).unwrap()),
        by_priority.join(", "),
        by_region.join(", "),
    )
}

/// One message workload: its file, how many copies make the archive, a policy (sns, body scope)
/// and the same filter with DataFusion's JSON functions.
struct Workload {
    name: &'static str,
    file: &'static str,
    copies: usize,
    policy: &'static str,
    peer_filter: &'static str,
}

const WORKLOADS: [Workload; 2] = [
    Workload {
        name: "attrs",
        file: "attrs.jsonl",
        copies: 4,
        policy: POLICY,
        peer_filter: PEER_FILTER,
    },
    Workload {
        name: "cityfeat",
        file: "cityfeat.jsonl",
        copies: 1,
        policy: r#"{"properties":{"STREET":[{"prefix":"BL"}]}}"#,
        peer_filter: "starts_with(json_get_str(message, 'properties', 'STREET'), 'BL')",
    },
];

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let data = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/bench-data"));
    let scale: usize = std::env::var("FILTERVM_BENCH_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let scratch = tempfile::tempdir().unwrap();
    let (subs, by_priority, by_region) = subscriptions(&data, scratch.path());
    println!("subscriptions: {}", subs.len());
    let route_sql =
        "SELECT CAST(sum(cardinality(filtervm_route(message))) AS BIGINT) FROM events".to_owned();
    let scan_sql = "SELECT count(*) FROM events WHERE length(message) > 0".to_owned();
    // Reading every body into the library's message (the JSON parse) with a filter that
    // tests nothing: what a message costs before any test runs.
    let parse_sql = format!(
        "SELECT count(*) FROM events WHERE filtervm_match('sns', '{{}}', '{OPTIONS}', message)"
    );
    // Every (event, environment, priority) and (event, region, source) subscription an event
    // equals: the same matches as the 10k exact policies, as two hash joins.
    let peer_route_sql = format!(
        "WITH e AS (SELECT json_get_str(message, 'event') AS event, \
           json_get_str(message, 'environment') AS environment, \
           json_get_int(message, 'priority') AS priority, \
           json_get_str(message, 'region') AS region, json_get_str(message, 'source') AS source \
           FROM events), \
         p(event, environment, priority) AS (VALUES {by_priority}), \
         r(event, region, source) AS (VALUES {by_region}) \
         SELECT (SELECT count(*) FROM e JOIN p ON e.event = p.event \
                   AND e.environment = p.environment AND e.priority = p.priority) \
              + (SELECT count(*) FROM e JOIN r ON e.event = r.event \
                   AND e.region = r.region AND e.source = r.source)"
    );

    for workload in &WORKLOADS {
        let (ndjson, parquet, rows) = archive(
            &data,
            workload.file,
            scratch.path(),
            workload.copies * scale,
        )
        .await;
        let name = workload.name;
        println!("{name}_rows: {rows}");
        let match_sql = format!(
            "SELECT count(*) FROM events WHERE filtervm_match('sns', '{}', '{OPTIONS}', message)",
            workload.policy
        );
        let peer_match_sql = format!("SELECT count(*) FROM events WHERE {}", workload.peer_filter);
        let mut queries = vec![
            ("scan", &scan_sql),
            ("parse", &parse_sql),
            ("match", &match_sql),
            ("match_json_functions", &peer_match_sql),
        ];
        if name == "attrs" {
            queries.push(("route10k", &route_sql));
            queries.push(("route10k_json_functions_join", &peer_route_sql));
        }
        let formats = if only("local") {
            vec![("ndjson", &ndjson), ("parquet", &parquet)]
        } else {
            Vec::new()
        };
        for (format, path) in formats {
            let mut answers: Vec<(&str, i64)> = Vec::new();
            // Printed once every answer has been compared.
            let mut figures = Vec::new();
            for partitions in [1, 2] {
                let ctx = local(&subs, path, partitions).await;
                for (query, sql) in &queries {
                    let timing = time(&ctx, sql).await;
                    answers.push((query, timing.answer));
                    figures.push(figure_lines(
                        &format!("{name}_{format}_{query}_p{partitions}"),
                        rows,
                        &timing,
                    ));
                }
            }
            let answer = |query: &str| {
                let found: Vec<i64> = answers
                    .iter()
                    .filter(|(q, _)| *q == query)
                    .map(|(_, a)| *a)
                    .collect();
                assert!(found.windows(2).all(|w| w[0] == w[1]), "{query}: {found:?}");
                found.first().copied()
            };
            assert_eq!(
                answer("match"),
                answer("match_json_functions"),
                "{name}: match"
            );
            assert_eq!(
                answer("route10k"),
                answer("route10k_json_functions_join"),
                "{name}: route"
            );
            figures.iter().flatten().for_each(|l| println!("{l}"));
        }

        // Ballista: 1 and 2 executors of one task slot each, in this process, over NDJSON.
        if name != "attrs" || !only("ballista") {
            continue;
        }
        // The answers the cluster must give: the JSON functions' on one local partition.
        let reference = local(&subs, &ndjson, 1).await;
        let mut expected = Vec::new();
        for sql in [&peer_match_sql, &peer_route_sql] {
            expected.push(count(
                &reference.sql(sql).await.unwrap().collect().await.unwrap(),
            ));
        }
        for executors in [1, 2] {
            let started = cluster::start_in_process(executors, 1, Some(Arc::clone(&subs)))
                .await
                .unwrap();
            let (ctx, _) = cluster::connect(&started.url, Some(Arc::clone(&subs)))
                .await
                .unwrap();
            session::register_archive(&ctx, "events", &ndjson, None)
                .await
                .unwrap();
            for ((query, sql), want) in [("match", &match_sql), ("route10k", &route_sql)]
                .into_iter()
                .zip(&expected)
            {
                let timing = time(&ctx, sql).await;
                assert_eq!(
                    timing.answer, *want,
                    "{name}: Ballista {query}, {executors} executors"
                );
                let label = format!("{name}_ballista_ndjson_{query}_e{executors}");
                figure_lines(&label, rows, &timing)
                    .iter()
                    .for_each(|l| println!("{l}"));
            }
        }
    }
}

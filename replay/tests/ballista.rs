//! A Ballista cluster in this process (a scheduler and two executors on loopback) runs replay
//! queries over a partitioned archive; the answers equal local DataFusion's and one-by-one
//! evaluation with the filtervm library.

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers: a failed query should fail the test loudly"
)]

mod common;

use common::{SUBSCRIPTIONS, events, match_line, route_line, write_partitioned};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::prelude::{SessionConfig, SessionContext};
use filtervm_replay::adapter::Subscriptions;
use filtervm_replay::{cluster, session};
use std::collections::BTreeMap;
use std::sync::Arc;

const PAID_EU: &str = r#"{"eventType":["order.paid"],"data":{"region":[{"prefix":"eu-"}]}}"#;
const BODY: &str = r#"{"scope":"MessageBody"}"#;

/// (message, ids) of every row: the ids as one comma-joined text, `None` for a null list.
fn routed(batches: &[RecordBatch]) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    for batch in batches {
        let messages = datafusion::arrow::compute::cast(batch.column(0), &DataType::Utf8).unwrap();
        let messages = messages.as_string::<i32>();
        let ids = batch.column(1).as_list::<i32>();
        for row in 0..batch.num_rows() {
            let joined = (!ids.is_null(row)).then(|| {
                let list = ids.value(row);
                let list = list.as_string::<i32>();
                list.iter()
                    .map(|s| s.unwrap().to_owned())
                    .collect::<Vec<_>>()
                    .join(",")
            });
            out.insert(messages.value(row).to_owned(), joined);
        }
    }
    out
}

fn count(batches: &[RecordBatch]) -> i64 {
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ballista_cluster_equals_local_and_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let lines = events(2000, 11, true);
    write_partitioned(dir.path(), &lines, 8);
    let subscriptions = Arc::new(Subscriptions::from_ndjson(SUBSCRIPTIONS).unwrap());

    let cluster = cluster::start_in_process(2, 1, Some(Arc::clone(&subscriptions)))
        .await
        .unwrap();
    let (remote, client) = cluster::connect(&cluster.url, Some(Arc::clone(&subscriptions)))
        .await
        .unwrap();
    session::register_archive(&remote, "events", dir.path(), None)
        .await
        .unwrap();

    let (state, _) = session::session_state(
        SessionConfig::new().with_target_partitions(4),
        Some(subscriptions),
    )
    .unwrap();
    let local = SessionContext::new_with_state(state);
    session::register_archive(&local, "events", dir.path(), None)
        .await
        .unwrap();

    let route = "SELECT message, filtervm_route(message) FROM events";
    let matched = format!(
        "SELECT count(*) FROM events WHERE filtervm_match('sns', '{PAID_EU}', '{BODY}', message)"
    );
    let per_id = "SELECT id, count(*) AS n FROM (SELECT unnest(filtervm_route(message)) AS id \
                  FROM events) GROUP BY id ORDER BY id";

    let on_cluster = remote.sql(route).await.unwrap().collect().await.unwrap();
    let on_cluster = routed(&on_cluster);
    let locally = routed(&local.sql(route).await.unwrap().collect().await.unwrap());
    assert_eq!(on_cluster.len(), lines.len(), "every line is one row");
    assert_eq!(on_cluster, locally);
    for line in &lines {
        let expected = route_line(SUBSCRIPTIONS, line).map(|ids| ids.join(","));
        assert_eq!(on_cluster[line], expected, "{line}");
    }

    let expected = lines
        .iter()
        .filter(|l| match_line("sns", PAID_EU, BODY, l) == Some(true))
        .count() as i64;
    assert!(expected > 0);
    assert_eq!(
        count(&remote.sql(&matched).await.unwrap().collect().await.unwrap()),
        expected
    );
    assert_eq!(
        count(&local.sql(&matched).await.unwrap().collect().await.unwrap()),
        expected
    );

    let grouped = |batches: Vec<RecordBatch>| {
        let mut out = Vec::new();
        for batch in batches {
            let ids = datafusion::arrow::compute::cast(batch.column(0), &DataType::Utf8).unwrap();
            let counts = batch.column(1).as_primitive::<Int64Type>();
            for row in 0..batch.num_rows() {
                out.push((
                    ids.as_string::<i32>().value(row).to_owned(),
                    counts.value(row),
                ));
            }
        }
        out
    };
    let remote_groups = grouped(remote.sql(per_id).await.unwrap().collect().await.unwrap());
    assert_eq!(
        remote_groups,
        grouped(local.sql(per_id).await.unwrap().collect().await.unwrap())
    );
    assert_eq!(
        remote_groups.len(),
        6,
        "every subscription matched something: {remote_groups:?}"
    );

    // The executors evaluated the functions, the client only planned: every row of the match
    // query was evaluated on an executor, and both executors took part.
    assert_eq!(client.matcher.rows_evaluated(), 0);
    let per_executor: Vec<u64> = cluster
        .executors
        .iter()
        .map(|e| e.matcher.rows_evaluated())
        .collect();
    assert_eq!(
        per_executor.iter().sum::<u64>(),
        lines.len() as u64,
        "{per_executor:?}"
    );
    assert!(
        per_executor.iter().all(|&rows| rows > 0),
        "both executors worked: {per_executor:?}"
    );
}

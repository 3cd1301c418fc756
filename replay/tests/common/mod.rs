//! Test data and the one-by-one oracle: each message matched against each filter with the
//! filtervm library directly (no DataFusion, no subscription set), read as `filtervm match`
//! reads a line (`Message::json`).

#![allow(dead_code, reason = "each test file uses part of the helpers")]
#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers: a malformed fixture should fail the test loudly"
)]

use filtervm::{Dialect, Filter, Message, Options};
use std::path::Path;

/// A deterministic pseudo-random sequence (64-bit LCG).
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() as usize) % items.len()]
    }
}

/// `n` Event Grid-shaped events as NDJSON lines (also readable as SNS bodies), with a few lines
/// that are not JSON objects mixed in when `odd_lines` is set.
pub fn events(n: usize, seed: u64, odd_lines: bool) -> Vec<String> {
    let mut r = Lcg::new(seed);
    let types = [
        "order.created",
        "order.paid",
        "order.shipped",
        "order.refunded",
    ];
    let areas = [
        ("eu", "eu-west-1"),
        ("eu", "eu-central-1"),
        ("us", "us-east-1"),
        ("ap", "ap-south-1"),
    ];
    (0..n)
        .map(|i| {
            if odd_lines && i % 97 == 13 {
                return match (i / 97) % 4 {
                    0 => format!("not json at all {i}"),
                    1 => format!("[1,2,{i}]"),
                    2 => format!("\"a string {i}\""),
                    _ => format!("{{\"eventType\": {i}}}"),
                };
            }
            let (area, region) = *r.pick(&areas);
            let kind = *r.pick(&types);
            let amount = (r.next() % 100_000) as f64 / 100.0;
            let customer = r.next() % 50;
            format!(
                r#"{{"id":"e{i}","subject":"/orders/{area}/{i}","eventType":"{kind}","eventTime":"2024-05-01T00:00:00Z","dataVersion":"1","metadataVersion":"1","data":{{"amount":{amount},"region":"{region}","customer":"c{customer}","note":"tab\there, comma, \"quote\" é"}}}}"#
            )
        })
        .collect()
}

/// The subscriptions the tests route through: mixed dialects (sns body scope and eventgrid).
pub const SUBSCRIPTIONS: &str = r#"{"id":"paid-eu","dialect":"sns","policy":{"eventType":["order.paid"],"data":{"region":[{"prefix":"eu-"}]}},"options":{"scope":"MessageBody"}}
{"id":"big","dialect":"sns","policy":{"data":{"amount":[{"numeric":[">=",800]}]}},"options":{"scope":"MessageBody"}}
{"id":"refunds","dialect":"eventgrid","policy":{"includedEventTypes":["order.refunded"]}}
{"id":"us-shipped","dialect":"eventgrid","policy":{"includedEventTypes":["order.shipped"],"subjectBeginsWith":"/orders/us/"}}
{"id":7,"dialect":"eventgrid","policy":{"advancedFilters":[{"operatorType":"StringIn","key":"data.customer","values":["c7","c42"]}]}}
{"id":"paid-eu-again","dialect":"sns","policy":{"eventType":["order.paid"],"data":{"region":[{"prefix":"eu-"}]}},"options":{"scope":"MessageBody"}}
"#;

/// One policy matched against one line, as `filtervm match` does: `None` when the filter cannot
/// judge the line.
pub fn match_line(dialect: &str, policy: &str, options: &str, line: &str) -> Option<bool> {
    let dialect: Dialect = dialect.parse().unwrap();
    let options = if options.is_empty() {
        Options::from(dialect)
    } else {
        Options::from_json(dialect, options).unwrap()
    };
    let filter = Filter::new(options, policy).unwrap();
    filter.matches(&Message::json(line.as_bytes())).ok()
}

/// Every subscription of `subscriptions` matched one by one against `line`: the ids that match,
/// in file order, of the subscriptions that can judge it; `None` when none can.
pub fn route_line(subscriptions: &str, line: &str) -> Option<Vec<String>> {
    let mut ids = Vec::new();
    let mut judged = false;
    for sub in subscriptions.lines().filter(|l| !l.trim().is_empty()) {
        let sub: serde_json::Value = serde_json::from_str(sub).unwrap();
        let dialect: Dialect = sub["dialect"].as_str().unwrap().parse().unwrap();
        let options = Options::from_json(
            dialect,
            sub.get("options").unwrap_or(&serde_json::Value::Null),
        )
        .unwrap();
        let filter = Filter::from_value(options, &sub["policy"]).unwrap();
        let Ok(verdict) = filter.matches(&Message::json(line.as_bytes())) else {
            continue;
        };
        judged = true;
        if verdict {
            ids.push(match &sub["id"] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
    }
    judged.then_some(ids)
}

/// Writes `lines` into `files` NDJSON files under `dir` (round robin), returning `dir`.
pub fn write_partitioned(dir: &Path, lines: &[String], files: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut parts = vec![String::new(); files];
    for (i, line) in lines.iter().enumerate() {
        parts[i % files].push_str(line);
        parts[i % files].push('\n');
    }
    for (i, part) in parts.iter().enumerate() {
        std::fs::write(dir.join(format!("part-{i}.ndjson")), part).unwrap();
    }
}

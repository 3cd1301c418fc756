//! A realistic multi-tenant topic: SNS body-scope subscriptions as a broker with many tenants
//! holds them, for measuring how long loading a topic takes (`examples/load_topic.rs`).
//!
//! Deterministic for a seed. The vocabulary is skewed the way real topics are: a few tenants,
//! regions and event types own most subscriptions (each pick is `len · u³` for a uniform `u`, so
//! about half of the picks fall in the first eighth of the vocabulary). Each policy has 1–3 keys:
//! always `tenant`, then `event` (one to three types, one in ten a prefix such as `order.`),
//! `region` (one to three names, one in seven a prefix such as `eu-`), or an `amount` range; one
//! policy in ten puts `event` and `region` under `$or`.

use serde_json::{Value, json};

/// Tenants, event types and regions in the vocabulary.
pub const TENANTS: usize = 50_000;
/// Event types (`{domain}.{verb}`).
pub const EVENT_TYPES: usize = 400;
/// Regions.
pub const REGIONS: [&str; 16] = [
    "eu-west-1",
    "us-east-1",
    "us-west-2",
    "eu-central-1",
    "ap-southeast-1",
    "ap-northeast-1",
    "eu-north-1",
    "us-east-2",
    "ca-central-1",
    "sa-east-1",
    "ap-south-1",
    "eu-west-2",
    "eu-west-3",
    "af-south-1",
    "me-south-1",
    "ap-east-1",
];
const DOMAINS: [&str; 20] = [
    "order",
    "payment",
    "invoice",
    "shipment",
    "user",
    "account",
    "cart",
    "refund",
    "stock",
    "price",
    "review",
    "session",
    "device",
    "ticket",
    "booking",
    "subscription",
    "report",
    "alert",
    "message",
    "file",
];
const VERBS: [&str; 20] = [
    "created",
    "updated",
    "deleted",
    "paid",
    "failed",
    "shipped",
    "cancelled",
    "refunded",
    "opened",
    "closed",
    "approved",
    "rejected",
    "expired",
    "renewed",
    "viewed",
    "sent",
    "received",
    "archived",
    "restored",
    "flagged",
];

/// A seeded xorshift generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An index in `0..len`, skewed toward 0 (`len · u³`).
    fn skewed(&mut self, len: usize) -> usize {
        let u = self.unit();
        ((len as f64 * u * u * u) as usize).min(len.saturating_sub(1))
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

fn event_type(i: usize) -> String {
    let domain = DOMAINS.get(i % DOMAINS.len()).copied().unwrap_or("order");
    let verb = VERBS
        .get(i / DOMAINS.len() % VERBS.len())
        .copied()
        .unwrap_or("created");
    format!("{domain}.{verb}")
}

fn events(rng: &mut Rng) -> Value {
    if rng.one_in(10) {
        let domain = DOMAINS
            .get(rng.skewed(DOMAINS.len()))
            .copied()
            .unwrap_or("order");
        return json!([{"prefix": format!("{domain}.")}]);
    }
    let count = 1 + rng.skewed(3);
    Value::Array(
        (0..count)
            .map(|_| Value::String(event_type(rng.skewed(EVENT_TYPES))))
            .collect(),
    )
}

fn regions(rng: &mut Rng) -> Value {
    if rng.one_in(7) {
        let region = REGIONS
            .get(rng.skewed(REGIONS.len()))
            .copied()
            .unwrap_or("eu-west-1");
        let area = region.split('-').next().unwrap_or("eu");
        return json!([{"prefix": format!("{area}-")}]);
    }
    let count = 1 + rng.skewed(3);
    Value::Array(
        (0..count)
            .map(|_| {
                Value::String(
                    REGIONS
                        .get(rng.skewed(REGIONS.len()))
                        .copied()
                        .unwrap_or("eu-west-1")
                        .to_owned(),
                )
            })
            .collect(),
    )
}

fn amount(rng: &mut Rng) -> Value {
    let lo = 10 * (1 + rng.skewed(100));
    json!([{"numeric": [">=", lo, "<", lo * 10]}])
}

/// `n` subscription policies (SNS, body scope) of the topic, as JSON text.
pub fn realistic_topic(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed.max(1));
    (0..n)
        .map(|_| {
            let mut policy = serde_json::Map::new();
            policy.insert(
                "tenant".into(),
                json!([format!("t{}", rng.skewed(TENANTS))]),
            );
            if rng.one_in(10) {
                policy.insert(
                    "$or".into(),
                    json!([{"event": events(&mut rng)}, {"region": regions(&mut rng)}]),
                );
            } else {
                let more = rng.skewed(3);
                let mut keys = ["event", "region", "amount"];
                // Rotate so that the second key is mostly `event`, sometimes the others.
                keys.rotate_left(rng.skewed(3));
                for key in keys.iter().take(more) {
                    let value = match *key {
                        "event" => events(&mut rng),
                        "region" => regions(&mut rng),
                        _ => amount(&mut rng),
                    };
                    policy.insert((*key).into(), value);
                }
            }
            Value::Object(policy).to_string()
        })
        .collect()
}

/// `n` messages (SNS bodies) published to the topic, as JSON text: each names a tenant, an event
/// type and a region picked with the same skew as the subscriptions (so popular tenants get most
/// traffic and most subscriptions), an amount, and a few members no policy reads.
pub fn realistic_messages(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed.max(1));
    (0..n)
        .map(|i| {
            let region = REGIONS
                .get(rng.skewed(REGIONS.len()))
                .copied()
                .unwrap_or("eu-west-1");
            json!({
                "tenant": format!("t{}", rng.skewed(TENANTS)),
                "event": event_type(rng.skewed(EVENT_TYPES)),
                "region": region,
                "amount": (rng.next() % 2_000) as f64 / 2.0,
                "id": format!("m-{seed}-{i}"),
                "source": "orders-service",
                "attempt": 1 + rng.next() % 3,
            })
            .to_string()
        })
        .collect()
}

/// `n` messages like [`realistic_messages`] whose tenant no subscription names (`tenant` is in
/// every policy): each matches nothing.
pub fn unmatched_messages(n: usize, seed: u64) -> Vec<String> {
    realistic_messages(n, seed)
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let mut v: Value = serde_json::from_str(&m).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("tenant".into(), Value::String(format!("unknown-{i}")));
            }
            v.to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use filtervm_compiler::{Dialect, Options, SnsScope, compile_text};

    #[test]
    fn the_topic_is_deterministic_skewed_and_compiles() {
        let a = realistic_topic(5_000, 7);
        assert_eq!(a, realistic_topic(5_000, 7));
        assert_ne!(a, realistic_topic(5_000, 8));
        let body = Options::from(SnsScope::MessageBody);
        let mut keys = [0usize; 4];
        let (mut or, mut prefix, mut range) = (0, 0, 0);
        let mut tenants = std::collections::HashMap::new();
        for text in &a {
            compile_text(Dialect::Sns, text, &body).expect("every policy compiles");
            let policy: Value = serde_json::from_str(text).expect("JSON");
            let members = policy.as_object().expect("an object");
            assert!(members.contains_key("tenant"));
            let n = members.len();
            assert!((1..=3).contains(&n), "{text}");
            if let Some(k) = keys.get_mut(n) {
                *k += 1;
            }
            or += usize::from(members.contains_key("$or"));
            prefix += usize::from(text.contains("prefix"));
            range += usize::from(text.contains("numeric"));
            *tenants
                .entry(members["tenant"].to_string())
                .or_insert(0usize) += 1;
        }
        // Every size of policy occurs, and each feature the generator promises.
        assert!(keys[1] > 500 && keys[2] > 500 && keys[3] > 200, "{keys:?}");
        assert!((300..800).contains(&or), "{or}");
        assert!(prefix > 200 && range > 100, "{prefix} {range}");
        // Skewed: the most popular tenant holds far more than a uniform share (0.1 of 5,000).
        let top = tenants.values().copied().max().unwrap_or(0);
        assert!(top > 20, "{top}");
        // ...while the topic still spans many tenants.
        assert!(tenants.len() > 1_000, "{}", tenants.len());
    }

    #[test]
    fn messages_reach_popular_tenants_and_unmatched_ones_reach_none() {
        let a = realistic_messages(2_000, 3);
        assert_eq!(a, realistic_messages(2_000, 3));
        let mut t0 = 0;
        for m in &a {
            let v: Value = serde_json::from_str(m).expect("JSON");
            for key in ["tenant", "event", "region", "amount"] {
                assert!(v.get(key).is_some(), "{m}");
            }
            t0 += usize::from(v["tenant"] == "t0");
        }
        // P(tenant t0) = (1 / 50,000)^(1/3), about 2.7 %.
        assert!((20..110).contains(&t0), "{t0}");
        let policies = realistic_topic(3_000, 7);
        let body = Options::from(SnsScope::MessageBody);
        let filters: Vec<_> = policies
            .iter()
            .map(|p| compile_text(Dialect::Sns, p, &body).expect("compiles"))
            .collect();
        let mut evaluator = filtervm_compiler::Evaluator::new();
        let matched = |m: &String, evaluator: &mut filtervm_compiler::Evaluator| {
            filters
                .iter()
                .filter(|f| evaluator.matches_bytes(f, m.as_bytes()).expect("judged"))
                .count()
        };
        let delivered: usize = a.iter().take(200).map(|m| matched(m, &mut evaluator)).sum();
        assert!(delivered > 200, "{delivered}");
        for m in unmatched_messages(50, 3) {
            assert_eq!(matched(&m, &mut evaluator), 0, "{m}");
        }
    }
}

//! A broker's use of filtervm: subscriptions of several dialects in one live set, two delivery
//! threads matching published messages while a control thread adds and removes subscriptions.
//!
//! ```sh
//! cargo run --release -p filtervm --example broker
//! ```
//!
//! Every message is checked against the subscriptions of the snapshot it was matched on, one by
//! one with `Filter::matches`; the example exits non-zero on any difference (CI runs it).

use filtervm::{
    AttributeType, Change, Dialect, Filter, LiveSet, Message, SetScratch, SnsScope, SubscriptionSet,
};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A subscription as the broker's control plane knows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct SubscriptionId {
    tenant: &'static str,
    name: String,
}

/// The subscriptions the broker starts with: four dialects, several option sets.
fn initial() -> Result<Vec<(SubscriptionId, Filter)>, filtervm::CompileError> {
    let id = |tenant, name: &str| SubscriptionId {
        tenant,
        name: name.to_owned(),
    };
    Ok(vec![
        (
            id("shop", "paid-orders"),
            Filter::new(Dialect::Sns, r#"{"event": ["order.paid"]}"#)?,
        ),
        (
            id("shop", "big-eu-bodies"),
            Filter::new(
                SnsScope::MessageBody,
                r#"{"region": [{"prefix": "eu-"}], "total": [{"numeric": [">=", 100]}]}"#,
            )?,
        ),
        (
            id("ops", "billing-audit"),
            Filter::new(Dialect::Stream, "source = billing and priority >= 3")?,
        ),
        (
            id("ops", "gold-tier"),
            Filter::new(
                Dialect::Expr,
                r#"{"op": "OR", "exp": [{"key": "tier", "op": "in", "value": ["gold"]},
                                       {"key": "priority", "op": "in", "value": ["8", "9"]}]}"#,
            )?,
        ),
        (
            id("crm", "not-test"),
            Filter::new(Dialect::Basaltic, r#"{"test": [{"exists": false}]}"#)?,
        ),
    ])
}

/// One published message: a JSON body, typed attributes and headers, as the broker holds them.
struct Published {
    body: String,
    attributes: Vec<(String, AttributeType, String)>,
    headers: Vec<(String, String)>,
}

/// Deterministic messages that exercise every subscription.
fn messages(n: usize) -> Vec<Published> {
    let regions = ["eu-west-1", "us-east-1", "eu-central-1"];
    let events = ["order.paid", "order.created", "order.refunded"];
    (0..n)
        .map(|i| {
            let total = (i * 37) % 250;
            let mut attributes = vec![(
                "event".to_owned(),
                AttributeType::String,
                events
                    .get(i % events.len())
                    .copied()
                    .unwrap_or_default()
                    .to_owned(),
            )];
            if i % 5 == 0 {
                attributes.push(("test".to_owned(), AttributeType::String, "yes".to_owned()));
            }
            Published {
                body: format!(
                    r#"{{"region": "{}", "total": {total}, "items": [{{"sku": "a{i}"}}]}}"#,
                    regions.get(i % regions.len()).copied().unwrap_or_default()
                ),
                attributes,
                headers: vec![
                    (
                        "source".to_owned(),
                        if i % 2 == 0 { "billing" } else { "web" }.to_owned(),
                    ),
                    ("priority".to_owned(), (i % 10).to_string()),
                    (
                        "tier".to_owned(),
                        if i % 7 == 0 { "gold" } else { "basic" }.to_owned(),
                    ),
                ],
            }
        })
        .collect()
}

/// A message borrowed from a [`Published`].
type BrokerMessage<'m> = Message<'m, [(String, AttributeType, String)], [(String, String)]>;

/// The ids whose filter matches `message`, checked one by one (the set must agree).
fn one_by_one(
    filters: &BTreeMap<SubscriptionId, Filter>,
    snapshot_ids: &[SubscriptionId],
    message: &BrokerMessage<'_>,
) -> Result<Vec<SubscriptionId>, filtervm::MessageError> {
    let mut matched = Vec::new();
    for id in snapshot_ids {
        if let Some(filter) = filters.get(id)
            && filter.matches(message)?
        {
            matched.push(id.clone());
        }
    }
    matched.sort();
    Ok(matched)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("broker example: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let start = initial()?;
    // Every filter ever used, by id, so that the delivery threads can check the set's answers.
    let mut all: BTreeMap<SubscriptionId, Filter> = start.iter().cloned().collect();
    let extra = SubscriptionId {
        tenant: "shop",
        name: "refunds".to_owned(),
    };
    let refunds = Filter::new(Dialect::Sns, r#"{"event": ["order.refunded"]}"#)?;
    all.insert(extra.clone(), refunds.clone());
    let all = Arc::new(all);

    let mut set = SubscriptionSet::new();
    for (id, filter) in &start {
        set.insert(id.clone(), filter)?;
    }
    let live = Arc::new(LiveSet::from(set));
    let messages = Arc::new(messages(2_000));
    let stop = Arc::new(AtomicBool::new(false));
    let delivered = Arc::new(AtomicUsize::new(0));

    // Two delivery threads: each message is matched on the snapshot published at that moment.
    let delivery: Vec<_> = (0..2)
        .map(|thread| {
            let (live, messages, all, stop, delivered) = (
                Arc::clone(&live),
                Arc::clone(&messages),
                Arc::clone(&all),
                Arc::clone(&stop),
                Arc::clone(&delivered),
            );
            std::thread::spawn(move || -> Result<usize, String> {
                let mut scratch = SetScratch::new();
                let mut rounds = 0;
                while !stop.load(Ordering::Relaxed) || rounds == 0 {
                    for (i, m) in messages.iter().enumerate().skip(thread).step_by(2) {
                        let message = Message::body(m.body.as_bytes())
                            .with_attributes(&m.attributes[..])
                            .with_headers(&m.headers[..]);
                        let snapshot = live.load();
                        let matches = snapshot
                            .try_matching(&mut scratch, &message)
                            .map_err(|e| format!("message {i}: {e}"))?;
                        let mut got: Vec<SubscriptionId> = matches.ids().cloned().collect();
                        got.sort();
                        let ids: Vec<SubscriptionId> = all
                            .keys()
                            .filter(|id| snapshot.contains(id))
                            .cloned()
                            .collect();
                        let want = one_by_one(&all, &ids, &message)
                            .map_err(|e| format!("message {i}: {e}"))?;
                        if got != want {
                            return Err(format!(
                                "message {i}: the set says {got:?}, one by one {want:?}"
                            ));
                        }
                        delivered.fetch_add(got.len(), Ordering::Relaxed);
                    }
                    rounds += 1;
                }
                Ok(rounds)
            })
        })
        .collect();

    // The control plane: subscriptions come and go while messages are delivered.
    for round in 0..200 {
        if round % 2 == 0 {
            live.insert(extra.clone(), &refunds)?;
        } else {
            live.remove(&extra);
        }
        if round % 50 == 25 {
            // A tenant's subscriptions replaced in one batch: readers see all of it or none.
            let gold = SubscriptionId {
                tenant: "ops",
                name: "gold-tier".to_owned(),
            };
            let filter = all.get(&gold).ok_or("gold-tier is known")?.clone();
            live.apply([Change::Remove(gold.clone()), Change::Insert(gold, filter)]);
        }
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Relaxed);
    let mut rounds = 0;
    for thread in delivery {
        rounds += thread.join().map_err(|_| "a delivery thread panicked")??;
    }
    println!(
        "{} subscriptions live at the end, {} deliveries over {rounds} rounds of {} messages on 2 \
         threads; every answer equalled one-by-one matching",
        live.len(),
        delivered.load(Ordering::Relaxed),
        messages.len()
    );
    Ok(())
}

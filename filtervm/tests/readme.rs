//! The README's library example, run: this test holds the example's code and checks that the
//! README shows exactly it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_readme_library_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    // README example start
    use filtervm::{AttributeType, Dialect, Filter, Matcher, Message, SnsScope};

    let paid = Filter::new(
        Dialect::Sns,
        r#"{"event": ["order.paid"], "amount": [{"numeric": [">=", 100]}]}"#,
    )?;

    // A JSON document as received: here a notification as SNS delivers it to an SQS queue.
    let delivered = br#"{"Type": "Notification", "Message": "{\"order\": 7}",
        "MessageAttributes": {"event": {"Type": "String", "Value": "order.paid"},
                              "amount": {"Type": "Number", "Value": "149.50"}}}"#;
    assert!(paid.matches(&Message::json(delivered))?);

    // Or what the broker holds, borrowed: attributes, headers, a raw body.
    let attributes = [
        ("event", AttributeType::String, "order.paid"),
        ("amount", AttributeType::Number, "99"),
    ];
    assert!(!paid.matches(&Message::attributes(&attributes))?);
    let eu = Filter::new(
        Dialect::Stream,
        "region = eu-* and subject = orders.*.created",
    )?;
    assert!(eu.matches(&Message::headers(&[
        ("region", "eu-west"),
        ("subject", "orders.eu.created")
    ]))?);
    let big = Filter::new(
        SnsScope::MessageBody,
        r#"{"total": [{"numeric": [">", 1000]}]}"#,
    )?;
    let mut matcher = Matcher::new(); // scratch you hold (else cached per thread)
    assert!(matcher.matches(&big, &Message::body(br#"{"order": 8, "total": 1250.00}"#))?);

    // A message without attributes has none (sns rule 12): here a plain JSON event, which
    // a filter on attributes judges, and explain says what was probably meant.
    let event = Message::json(br#"{"event": "order.paid", "amount": 150}"#);
    assert!(!paid.matches(&event)?);
    assert_eq!(paid.explain(&event)?.hints[0].code, "SCOPE_MISMATCH");
    // A message a filter cannot judge is an error naming the fix, never a quiet "no match".
    let e = eu.matches(&event).unwrap_err();
    assert_eq!(e.code.as_str(), "MESSAGE_SHAPE");
    // README example end
    Ok(())
}

#[test]
fn the_readme_set_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    // README set example start
    use filtervm::{Dialect, Filter, LiveSet, Message, SetScratch, SnsScope, SubscriptionSet};

    // One set for every dialect and option set; ids are yours (here `&str`).
    let mut set = SubscriptionSet::new();
    set.insert(
        "paid",
        &Filter::new(Dialect::Sns, r#"{"event": ["order.paid"]}"#)?,
    )?;
    set.insert(
        "eu-bodies",
        &Filter::new(SnsScope::MessageBody, r#"{"region": [{"prefix": "eu-"}]}"#)?,
    )?;
    set.insert("audit", &Filter::new(Dialect::Stream, "source = billing")?)?;
    set.insert(
        "also-paid",
        &Filter::new(Dialect::Sns, r#"{"event": ["order.paid"]}"#)?,
    )?; // stored once

    let attributes = [("event", filtervm::AttributeType::String, "order.paid")];
    let headers = [("source", "web")];
    let message = Message::body(br#"{"region": "eu-west-1"}"#)
        .with_attributes(&attributes)
        .with_headers(&headers);
    let mut scratch = SetScratch::new(); // one per thread
    let matches = set.matching(&mut scratch, &message);
    assert_eq!(
        matches.ids().copied().collect::<Vec<_>>(),
        ["paid", "eu-bodies", "also-paid"]
    );
    assert!(matches.is_complete()); // every group could read its part of the message

    // Without headers the stream group cannot judge the message: the others still deliver.
    let no_headers = Message::body(br#"{"region": "eu-west-1"}"#).with_attributes(&attributes);
    let matches = set.matching(&mut scratch, &no_headers);
    assert_eq!(matches.len(), 3);
    let unjudged: Vec<_> = matches.unjudged().collect();
    assert_eq!(
        (unjudged[0].subscriptions, unjudged[0].error.code.as_str()),
        (1, "MESSAGE_SHAPE")
    );

    // Live updates: readers load a snapshot lock-free while writers publish changes.
    let live = LiveSet::from(set);
    live.remove(&"audit");
    let snapshot = live.load();
    assert_eq!(snapshot.matching(&mut scratch, &message).len(), 3);
    // README set example end
    Ok(())
}

/// The code between `// README <name> start` and `// README <name> end` in this file, unindented.
fn example(name: &str) -> String {
    let this = include_str!("readme.rs");
    let start = format!("README {name} start\n");
    let from = this.find(&start).unwrap() + start.len();
    let to = this.find(&format!("\n    // README {name} end")).unwrap();
    let code: Vec<&str> = this[from..to]
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    code.join("\n")
}

#[test]
fn the_readme_shows_these_examples() {
    let readme = include_str!("../../README.md");
    let blocks: Vec<&str> = readme
        .split("```rust\n")
        .skip(1)
        .filter_map(|rest| rest.split("\n```").next())
        .collect();
    assert_eq!(blocks.first().copied(), Some(example("example").as_str()));
    assert_eq!(
        blocks.get(1).copied(),
        Some(example("set example").as_str())
    );
}

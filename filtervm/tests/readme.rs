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

    // A message the filter cannot read is an error naming the fix, never a quiet "no match".
    let e = paid
        .matches(&Message::json(br#"{"event": "order.paid"}"#))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "MESSAGE_SHAPE");
    // README example end
    Ok(())
}

#[test]
fn the_readme_shows_this_example() {
    let readme = include_str!("../../README.md");
    let start = readme.find("```rust\n").expect("a Rust block") + "```rust\n".len();
    let end = start + readme[start..].find("\n```").expect("its end");
    let this = include_str!("readme.rs");
    let from = this.find("README example start\n").unwrap() + "README example start\n".len();
    let to = this.find("\n    // README example end").unwrap();
    let code: Vec<&str> = this[from..to]
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    assert_eq!(readme[start..end], code.join("\n"));
}

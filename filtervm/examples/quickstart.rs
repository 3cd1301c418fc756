//! Compile filters and match messages from bytes, attributes and headers.
//!
//! `cargo run -p filtervm --example quickstart`

use filtervm::{AttributeType, Dialect, Filter, Message, SnsScope};
use std::collections::HashMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // An SNS subscription filter policy on message attributes.
    let paid = Filter::new(
        Dialect::Sns,
        r#"{"event": ["order.paid"], "amount": [{"numeric": [">=", 100]}]}"#,
    )?;

    // From bytes: a notification as SNS delivers it to an SQS queue.
    let delivered = br#"{"Type": "Notification", "Message": "{\"order\": 7}",
        "MessageAttributes": {"event": {"Type": "String", "Value": "order.paid"},
                              "amount": {"Type": "Number", "Value": "149.50"}}}"#;
    println!(
        "delivered notification: {}",
        paid.matches(&Message::json(delivered))?
    );

    // From the attributes a broker holds, borrowed.
    let attributes = HashMap::from([
        ("event", (AttributeType::String, "order.paid")),
        ("amount", (AttributeType::Number, "99")),
    ]);
    println!(
        "attributes: {}",
        paid.matches(&Message::attributes(&attributes))?
    );

    // The same policy language on the JSON body: a plain event is the body.
    let big = Filter::new(
        SnsScope::MessageBody,
        r#"{"total": [{"numeric": [">", 1000]}]}"#,
    )?;
    println!(
        "body: {}",
        big.matches(&Message::json(br#"{"order": 8, "total": 1250.00}"#))?
    );

    // Headers, for the stream dialect (its text form) and expr.
    let eu = Filter::new(
        Dialect::Stream,
        "region = eu-* and subject = orders.*.created",
    )?;
    let headers = [("region", "eu-west"), ("subject", "orders.eu.created")];
    println!("headers: {}", eu.matches(&Message::headers(&headers))?);

    // A message the filter cannot read is an error naming the fix.
    if let Err(e) = paid.matches(&Message::json(br#"{"event": "order.paid"}"#)) {
        println!("flat event to an attribute filter: {e}");
    }

    // Why not?
    let why = paid.explain(&Message::attributes(&attributes))?;
    print!("{why}");
    Ok(())
}

use super::*;

fn message(policy: &str) -> String {
    let policy = filtervm_vm::json::parse(policy.as_bytes()).unwrap();
    let e = parse(&policy, &ExprOptions::default()).unwrap_err();
    e.errors[0].message.clone()
}

#[test]
fn misspelled_operators_get_a_suggestion() {
    assert!(
        message(r#"{"key": "a", "op": "contians", "value": "x"}"#)
            .contains("did you mean `contains`?")
    );
    assert!(
        message(r#"{"key": "a", "op": "StartsWith", "value": "x"}"#)
            .contains("case-sensitive: `startsWith`")
    );
    assert!(
        message(r#"{"op": "ADN", "exp": [{"key": "a", "op": "exists"}]}"#)
            .contains("did you mean `AND`?")
    );
    assert!(!message(r#"{"key": "a", "op": "regex", "value": "x"}"#).contains("did you mean"));
}

//! A raw SNS body as a message.

use filtervm_vm::message::Message;

/// A raw body text, as its bytes: read when bound, keeping only what the policy reads (a body
/// that is not JSON is rule 14's non-object body, and binding reports it).
pub fn body(text: &str) -> Message {
    Message::Body(text.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Valid bodies of any depth, and with lone surrogate escapes, are judged: a body nested
    /// 200 and 100,000 levels deep in a member no policy reads, or with `"\ud800"` in an
    /// unrelated string, matches a policy on another member (through `match` too, see the CLI
    /// tests). Bodies that are not JSON match only policies that read nothing from the body, and
    /// `try_matches` reports them.
    #[test]
    fn deep_bodies_and_lone_surrogates_are_judged() {
        use crate::{Dialect, Evaluator, Options, SnsScope, compile};
        let options = Options::from(SnsScope::MessageBody);
        let filter = compile(Dialect::Sns, &json!({"k": ["v"]}), &options).unwrap();
        let mut evaluator = Evaluator::new();
        for depth in [200, 100_000] {
            let deep = format!(
                r#"{{"other": {}1{}, "k": "v"}}"#,
                "[{\"x\": ".repeat(depth),
                "}]".repeat(depth)
            );
            let message = body(&deep);
            assert_eq!(
                evaluator.try_matches(&filter, &message),
                Ok(true),
                "depth {depth}"
            );
            assert_eq!(
                evaluator.try_matches_bytes(&filter, deep.as_bytes()),
                Ok(true)
            );
            let vector = json!({ "body": deep });
            assert!(evaluator.matches_json(&filter, &vector).unwrap());
        }
        let lone = r#"{"note": "\ud800", "k": "v"}"#;
        assert_eq!(evaluator.try_matches(&filter, &body(lone)), Ok(true));
        assert_eq!(evaluator.matches_bytes(&filter, lone.as_bytes()), Ok(true));
        // Not JSON: judged by rule 14 (no match but for the empty policy), on every path.
        assert!(!evaluator.matches(&filter, &body("{oops")));
        assert_eq!(evaluator.matches_bytes(&filter, b"{oops"), Ok(false));
        assert_eq!(evaluator.try_matches(&filter, &body("{oops")), Ok(false));
        assert_eq!(evaluator.try_matches_bytes(&filter, b"{oops"), Ok(false));
        let empty =
            crate::compile_text(Dialect::Sns, "{}", &Options::from(SnsScope::MessageBody)).unwrap();
        assert_eq!(evaluator.try_matches(&empty, &body("{oops")), Ok(true));
        assert_eq!(evaluator.try_matches_bytes(&empty, b"{oops"), Ok(true));
    }
}

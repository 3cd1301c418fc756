use super::Dialect;
use crate::{Options, compile_text};

#[test]
fn a_lone_surrogate_in_policy_text_is_named_with_its_pointer() {
    for (text, escape, pointer) in [
        (r#"{"a": ["\ud800"]}"#, r"\ud800", "/a/0"),
        (r#"{"a": ["x\ud800y"]}"#, r"\ud800", "/a/0"),
        (r#"{"a": ["\udc00"]}"#, r"\udc00", "/a/0"),
        (r#"{"a": ["\ud800\u0041"]}"#, r"\ud800", "/a/0"),
        (r#"{"a": ["ok\ud83d\ude00", "\uDBFF"]}"#, r"\uDBFF", "/a/1"),
        (
            r#"{"a": {"b\\": [1, {"c": "\\\ud800"}]}}"#,
            r"\ud800",
            "/a/b\\/1/c",
        ),
        (r#"{"a\ud800": ["x"]}"#, r"\ud800", ""),
    ] {
        for dialect in Dialect::ALL {
            let e = compile_text(dialect, text, &Options::from(dialect)).expect_err(text);
            let first = e.first().expect("an error");
            assert!(
                first
                    .message
                    .contains(&format!("lone surrogate `{escape}` at line 1 column")),
                "{dialect} {text}: {e}"
            );
            assert_eq!(first.pointer, pointer, "{dialect} {text}: {e}");
        }
    }
}

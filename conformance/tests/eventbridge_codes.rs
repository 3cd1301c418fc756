//! The codes of invalid `eventbridge` patterns: for one pattern per row of EB-31's table
//! (`docs/dialects/eventbridge-patterns.md`), and for EB-32, EB-33, the reference's validation
//! gives the code the compiler gives (the compiler's documentation sorts event-ruler's messages
//! into `EVENTBRIDGE_*` codes; the reference sorts them on its own), with event-ruler's text.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::Dialect;

/// `(pattern text, the product's code, text the message contains)`, one per EB-31 row and per
/// variant of a row.
const ROWS: &[(&str, &str, &str)] = &[
    (
        r#"[1]"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Filter is not an object",
    ),
    (
        r#"{}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Empty objects are not allowed",
    ),
    (
        r#"{"a": {}}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Empty objects are not allowed",
    ),
    (
        r#"{"a": 1}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "must be an object or an array",
    ),
    (
        r#"{"a": []}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Empty arrays are not allowed",
    ),
    (
        r#"{"a": [[1]]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Match value must be String",
    ),
    (
        r#"{"$or": 1}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "It must be an Array followed with $or.",
    ),
    (
        r#"{"$or": [1, {"a": ["x"]}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Only JSON object is allowed",
    ),
    (
        r#"{"$or": [{"a": ["x"]}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "There must have at least 2 Objects",
    ),
    (
        r#"{"$or": [{"prefix": ["x"]}, {"a": ["y"]}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Ruler reserved fieldName",
    ),
    (
        r#"{"a": [{}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Match expression name not found",
    ),
    (
        r#"{"a": [{"EXISTS": true}]}"#,
        "EVENTBRIDGE_UNKNOWN_OPERATOR",
        "Unrecognized match type EXISTS",
    ),
    (
        r#"{"a": [{"prefix": "x", "suffix": "y"}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Only one key allowed in match expression",
    ),
    (
        r#"{"a": [{"numeric": ["=", 1, 2]}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Too many elements in numeric expression",
    ),
    (
        r#"{"a": [{"anything-but": "x", "b": 1}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Too many elements in numeric expression",
    ),
    (
        r#"{"a": [{"prefix": 1}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "prefix match pattern must be a string",
    ),
    (
        r#"{"a": [{"exactly": 1}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "exact match pattern must be a string",
    ),
    (
        r#"{"a": [{"cidr": 1}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "prefix match pattern must be a string",
    ),
    (
        r#"{"a": [{"prefix": {}}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Prefix expression name not found",
    ),
    (
        r#"{"a": [{"suffix": {"x": "y"}}]}"#,
        "EVENTBRIDGE_UNKNOWN_OPERATOR",
        "Unsupported suffix pattern: x",
    ),
    (
        r#"{"a": [{"prefix": {"equals-ignore-case": 1}}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "equals-ignore-case match pattern must be a string",
    ),
    (
        r#"{"a": [{"wildcard": "a**"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Consecutive wildcard characters at pos",
    ),
    (
        r#"{"a": [{"wildcard": "a\\b"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Invalid escape character at pos",
    ),
    (
        r#"{"a": [{"numeric": 1}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "Value of numeric must be an array.",
    ),
    (
        r#"{"a": [{"numeric": [1]}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Invalid member in numeric match: 1",
    ),
    (
        r#"{"a": [{"numeric": ["~", 1]}]}"#,
        "EVENTBRIDGE_UNKNOWN_OPERATOR",
        "Unrecognized numeric range operator: ~",
    ),
    (
        r#"{"a": [{"numeric": ["<", "x"]}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "Value of < must be numeric",
    ),
    (
        r#"{"a": [{"numeric": [">", 1, 2]}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Bad value in numeric range: 2",
    ),
    (
        r#"{"a": [{"numeric": [">", 1, ">", 2]}]}"#,
        "EVENTBRIDGE_UNKNOWN_OPERATOR",
        "Bad numeric range operator: >",
    ),
    (
        r#"{"a": [{"numeric": [">", 1, "<", 2, 3]}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Too many terms in numeric range expression",
    ),
    (
        r#"{"a": [{"numeric": [">", 2, "<", 1]}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Bottom must be less than top",
    ),
    (
        r#"{"a": [9007199254740993, {"numeric": ["<", 9007199254740993]}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Cannot compare number : 9007199254740993",
    ),
    (
        r#"{"a": [{"anything-but": {}}]}"#,
        "EVENTBRIDGE_SYNTAX_ERROR",
        "Anything-But expression name not found",
    ),
    (
        r#"{"a": [{"anything-but": {"x": "y"}}]}"#,
        "EVENTBRIDGE_UNKNOWN_OPERATOR",
        "Unsupported anything-but pattern: x",
    ),
    (
        r#"{"a": [{"anything-but": true}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "Value of anything-but must be an array or single string/number value.",
    ),
    (
        r#"{"a": [{"anything-but": [true]}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "Inside anything but list, start|null|boolean is not supported.",
    ),
    (
        r#"{"a": [{"anything-but": ["x", 1]}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "mixed type is not supported",
    ),
    (
        r#"{"a": [{"anything-but": {"prefix": 1}}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "prefix/suffix match pattern must be a string",
    ),
    (
        r#"{"a": [{"anything-but": {"equals-ignore-case": [1]}}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "Inside anything-but/equals-ignore-case list",
    ),
    (
        r#"{"a": [{"anything-but": {"wildcard": 1}}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "wildcard match pattern must be a string",
    ),
    (
        r#"{"a": [{"anything-but": {"prefix": ""}}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Null prefix/suffix not allowed",
    ),
    (
        r#"{"a": [{"anything-but": {"suffix": []}}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "empty",
    ),
    (
        r#"{"a": [{"exists": 1}]}"#,
        "EVENTBRIDGE_TYPE_ERROR",
        "exists match pattern must be either true or false.",
    ),
    (
        r#"{"a": [{"cidr": "10.0.0.0"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Malformed CIDR, one '/' required",
    ),
    (
        r#"{"a": [{"cidr": "10.0.0.0/x"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Malformed CIDR, mask bits must be an integer",
    ),
    (
        r#"{"a": [{"cidr": "10.0.0.0/-1"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Malformed CIDR, mask bits must not be negative",
    ),
    (
        r#"{"a": [{"cidr": "x/8"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Nonstandard IP address: x",
    ),
    (
        r#"{"a": [{"cidr": "10.0.0.256/8"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "Invalid IP address: 10.0.0.256",
    ),
    (
        r#"{"a": [{"cidr": "10.0.0.1/32"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "IPv4 mask bits must be < 32",
    ),
    (
        r#"{"a": [{"cidr": "::1/128"}]}"#,
        "EVENTBRIDGE_INVALID_VALUE",
        "IPv6 mask bits must be < 128",
    ),
    (
        r#"{"a": [{"wildcard": "*:*:*:*:*:event-bus/*"}]}"#,
        "EVENTBRIDGE_LIMIT_EXCEEDED",
        "Rule is too complex",
    ),
];

#[test]
fn every_eb31_row_has_the_same_code_in_the_compiler_and_the_reference() {
    let mut wrong = Vec::new();
    for &(text, code, says) in ROWS {
        let compiled = filtervm_compiler::compile_text(
            Dialect::EventBridge,
            text,
            &Dialect::EventBridge.into(),
        );
        let reference =
            filtervm_conformance::reference::validate_text(Dialect::EventBridge, "{}", text);
        let compiler_code = compiled.err().map(|e| e.errors[0].code.as_str().to_owned());
        let (reference_code, reference_says) = match reference {
            Err(r) => (Some(r.code.to_owned()), r.message),
            Ok(_) => (None, String::new()),
        };
        if compiler_code.as_deref() != Some(code)
            || reference_code.as_deref() != Some(code)
            || !reference_says.contains(says)
        {
            wrong.push(format!("{text}: want {code}; compiler {compiler_code:?}, reference {reference_code:?} ({reference_says})"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

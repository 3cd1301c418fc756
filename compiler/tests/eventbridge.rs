//! The eventbridge dialect, rule by rule with the spec's own examples
//! (`docs/dialects/eventbridge-patterns.md`), through the library's entry points: compiling
//! pattern text, matching event bytes, subscription sets, explain and lint.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{
    Dialect, ErrorCode, Evaluator, Filter, Options, SubscriptionSet, compile_text, lint,
    read_policy_text,
};

fn compile(pattern: &str) -> Filter {
    compile_text(Dialect::EventBridge, pattern, &Options::EventBridge)
        .unwrap_or_else(|e| panic!("{pattern}: {e}"))
}

fn matches(pattern: &str, event: &str) -> bool {
    Evaluator::new()
        .try_matches_bytes(&compile(pattern), event.as_bytes())
        .unwrap_or_else(|e| panic!("{pattern} on {event}: {e}"))
}

/// The first error: its code, pointer and message.
fn error(pattern: &str) -> (ErrorCode, String, String) {
    let e = compile_text(Dialect::EventBridge, pattern, &Options::EventBridge)
        .err()
        .unwrap_or_else(|| panic!("{pattern} compiled"));
    let first = e.first().unwrap();
    (first.code, first.pointer.clone(), first.message.clone())
}

fn yes(pattern: &str, event: &str) {
    assert!(matches(pattern, event), "{pattern} should match {event}");
}

fn no(pattern: &str, event: &str) {
    assert!(
        !matches(pattern, event),
        "{pattern} should not match {event}"
    );
}

#[test]
fn eb_2_eb_3_values_paths_and_arrays() {
    yes(r#"{"a": [3]}"#, r#"{"a": [1, [2, [3]]]}"#);
    no(r#"{"detail": ["x"]}"#, r#"{"detail": {"b": "x"}}"#);
    no(r#"{"a": [{"exists": true}]}"#, r#"{"a": []}"#);
    yes(r#"{"a": {"b": ["1"]}}"#, r#"{"a.b": "1"}"#);
    yes(r#"{"a.b": ["1"]}"#, r#"{"a": {"b": "1"}}"#);
    // A repeated member name in the event: each occurrence's values count.
    yes(r#"{"a": ["2"]}"#, r#"{"a": "1", "a": "2"}"#);
}

#[test]
fn eb_3_an_event_that_is_not_an_object_is_an_error() {
    let filter = compile(r#"{"a": [{"exists": false}]}"#);
    let mut evaluator = Evaluator::new();
    for event in ["[]", "5", "\"x\"", "null", "[{\"a\": 1}]"] {
        let e = evaluator
            .try_matches_bytes(&filter, event.as_bytes())
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMessage, "{event}");
        let e = evaluator
            .matches_bytes(&filter, event.as_bytes())
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMessage, "{event}");
    }
    let e = evaluator.try_matches_bytes(&filter, b"{").unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageNotJson);
}

/// Where the binder's rows cannot judge an EB-10 absence (two routes to a path, scalars of
/// nested arrays), the event is judged by EB-8's search over the filter's kept pattern: a verdict,
/// never an error.
#[test]
fn eb_10_absences_rows_cannot_judge_are_judged_exactly() {
    let pattern = r#"{"r": {"b": ["y"], "c": [{"exists": false}]}}"#;
    assert!(compile(pattern).pattern().is_some(), "the pattern is kept");
    // Two routes to `r.b`: "y" comes from the flat `r.b`, in no element of `r`, so it fixes
    // nothing and `r.c` exists (EB-8: no match); a row would pair "y" with element 1.
    no(pattern, r#"{"r": [{"c": 1}, {"b": "x"}], "r.b": "y"}"#);
    no(pattern, r#"{"r": [{"c": 1}, {"b": "x"}], "r": {"b": "y"}}"#);
    // The same, but "y" fixes element 1 of the array: EB-8 matches.
    yes(pattern, r#"{"r": [{"c": 1}, {"b": "y"}], "r": {"b": "q"}}"#);
    // A second route that holds no value of `r.b` changes nothing.
    yes(pattern, r#"{"r": [{"c": 1}, {"b": "y"}], "r.z": "y"}"#);
    yes(pattern, r#"{"r": [{"c": 1}, {"b": "y"}], "r": {"z": "q"}}"#);
    // A scalar in a nested array has its element's position (EB-3): "x" fixes element 0 for
    // `r.x`, whose value is in element 1 (EB-8: match).
    let nested = r#"{"r": ["x"], "r.x": [{"exists": false}]}"#;
    yes(nested, r#"{"r": [["x"], {"x": 2}]}"#);
    // ... and in the same element as the value of `r.x`: no match.
    no(nested, r#"{"r": [["x", {"x": 2}]]}"#);
    // A scalar directly in `r` fixes nothing (no match), and without a value of `r.x` there is
    // nothing to fix.
    no(nested, r#"{"r": ["x", {"x": 2}]}"#);
    yes(nested, r#"{"r": [["x"], {"y": 2}]}"#);
    // Patterns without `exists: false` never need their pattern.
    assert!(compile(r#"{"r": {"b": ["y"]}}"#).pattern().is_none());
}

#[test]
fn eb_34_events_deeper_than_1000_levels_are_errors() {
    let filter = compile(r#"{"a": ["x"]}"#);
    let mut evaluator = Evaluator::new();
    let deep = |n: usize| format!(r#"{{"a": "x", "z": {}1{}}}"#, "[".repeat(n), "]".repeat(n));
    // 999 arrays under the top-level object: 1,000 levels.
    assert_eq!(
        evaluator.try_matches_bytes(&filter, deep(999).as_bytes()),
        Ok(true)
    );
    let e = evaluator
        .try_matches_bytes(&filter, deep(1000).as_bytes())
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::MessageTooComplex);
    assert!(e.message.contains("the limit is 1000"), "{}", e.message);
}

#[test]
fn eb_4_pattern_structure() {
    for (pattern, message) in [
        ("{}", "Empty objects are not allowed"),
        (r#"{"detail": {}}"#, "Empty objects are not allowed"),
        ("[]", "Filter is not an object"),
        ("5", "Filter is not an object"),
        (r#""{\"a\": [1]}""#, "Filter is not an object"),
        (
            r#"{"string": "my-value"}"#,
            "\"string\" must be an object or an array",
        ),
        (r#"{"resources": []}"#, "Empty arrays are not allowed"),
        (
            r#"{"a": [[1]]}"#,
            "Match value must be String, number, true, false, or null",
        ),
        (r#"{"a": [{}]}"#, "Match expression name not found"),
    ] {
        let (code, _, got) = error(pattern);
        assert_eq!(code, ErrorCode::EventBridgeSyntaxError, "{pattern}");
        assert!(got.contains(message), "{pattern}: {got}");
    }
    yes(
        r#"{"source": ["aws.ec2"], "detail": {"state": ["terminated"]}}"#,
        r#"{"source": "aws.ec2", "region": "x", "detail": {"state": "terminated"}}"#,
    );
}

#[test]
fn eb_5_or_and_its_rules() {
    let p = r#"{"source": ["aws.cloudwatch"], "$or": [{"metricName": ["CPUUtilization", "ReadLatency"]}, {"namespace": ["AWS/EC2", "AWS/ES"]}]}"#;
    yes(
        p,
        r#"{"source": "aws.cloudwatch", "metricName": "ReadLatency"}"#,
    );
    yes(p, r#"{"source": "aws.cloudwatch", "namespace": "AWS/ES"}"#);
    no(p, r#"{"source": "aws.ec2", "metricName": "ReadLatency"}"#);
    yes(
        r#"{"$or": [{"a": ["1"]}, {"a": [{"exists": false}]}]}"#,
        r#"{"b": "2"}"#,
    );
    for (pattern, message) in [
        (
            r#"{"$or": [{"a": ["1"]}]}"#,
            "There must have at least 2 Objects in $or relationship.",
        ),
        (
            r#"{"$or": {"a": ["1"]}}"#,
            "It must be an Array followed with $or.",
        ),
        (
            r#"{"$or": [{"a": ["1"]}, "b"]}"#,
            "Only JSON object is allowed in array of $or relationship.",
        ),
        (
            r#"{"$or": [{"prefix": ["1"]}, {"b": ["2"]}]}"#,
            "prefix is Ruler reserved fieldName which cannot be used inside $or.",
        ),
        (
            r#"{"$or": [{"a": {"numeric": ["1"]}}, {"b": ["2"]}]}"#,
            "numeric is Ruler reserved fieldName",
        ),
        (
            r#"{"$or": [{"a": {"date-after": ["1"]}}, {"b": ["2"]}]}"#,
            "date-after is Ruler reserved fieldName",
        ),
    ] {
        let (code, _, got) = error(pattern);
        assert_eq!(code, ErrorCode::EventBridgeSyntaxError, "{pattern}");
        assert!(got.contains(message), "{pattern}: {got}");
    }
    // Outside `$or` reserved names are ordinary.
    yes(r#"{"prefix": ["x"]}"#, r#"{"prefix": "x"}"#);
}

#[test]
fn eb_6_many_or_members_compile_without_expanding() {
    // 60 `$or`s of two alternatives: 2^60 branches.
    let members: Vec<String> = (0..60)
        .map(|i| format!(r#""k{i}": {{"$or": [{{"a": ["{i}"]}}, {{"b": ["{i}"]}}]}}"#))
        .collect();
    let pattern = format!("{{{}}}", members.join(","));
    let filter = compile(&pattern);
    assert!(filter.program().code().len() < 2000);
    let event: Vec<String> = (0..60)
        .map(|i| format!(r#""k{i}": {{"b": "{i}"}}"#))
        .collect();
    let event = format!("{{{}}}", event.join(","));
    assert_eq!(
        Evaluator::new().try_matches_bytes(&filter, event.as_bytes()),
        Ok(true)
    );
}

#[test]
fn eb_7_the_later_occurrence_replaces() {
    yes(
        r#"{"a.b": ["x"], "a": {"b": ["y"]}}"#,
        r#"{"a": {"b": "y"}}"#,
    );
    no(
        r#"{"a.b": ["x"], "a": {"b": ["y"]}}"#,
        r#"{"a": {"b": "x"}}"#,
    );
    let before = r#"{"a": ["x"], "$or": [{"a": ["y"]}, {"b": ["z"]}]}"#;
    yes(before, r#"{"a": "y"}"#);
    yes(before, r#"{"a": "x", "b": "z"}"#);
    no(before, r#"{"a": "x"}"#);
    let after = r#"{"$or": [{"a": ["y"]}, {"b": ["z"]}], "a": ["x"]}"#;
    yes(after, r#"{"a": "x"}"#);
    no(after, r#"{"a": "y"}"#);
    // A member name repeated in the pattern text is read in its place.
    yes(
        r#"{"a": ["x"], "b": ["1"], "a": ["y"]}"#,
        r#"{"a": "y", "b": "1"}"#,
    );
    no(
        r#"{"a": ["x"], "b": ["1"], "a": ["y"]}"#,
        r#"{"a": "x", "b": "1"}"#,
    );
    // ... and the first occurrence is still validated (EB-31 reads in document order).
    let (_, at, message) = error(r#"{"a": [], "a": ["y"]}"#);
    assert_eq!(
        (at.as_str(), message.as_str()),
        ("/a", "Empty arrays are not allowed")
    );
    let kept = read_policy_text(
        Dialect::EventBridge,
        r#"{"a": [1], "a": [2]}"#,
        &Options::EventBridge,
    )
    .unwrap();
    assert_eq!(kept.as_object().unwrap().len(), 2);
}

#[test]
fn eb_9_array_consistency() {
    let employees = r#"{"employees": [{"firstName": "John", "lastName": "Doe"}, {"firstName": "Anna", "lastName": "Smith"}, {"firstName": "Peter", "lastName": "Jones"}]}"#;
    no(
        r#"{"employees": {"firstName": ["Anna"], "lastName": ["Jones"]}}"#,
        employees,
    );
    yes(
        r#"{"employees": {"firstName": ["Anna"], "lastName": ["Smith"]}}"#,
        employees,
    );
    no(
        r#"{"r": {"a": [{"exists": true}], "b": ["y"]}}"#,
        r#"{"r": [{"a": 1}, {"b": "y"}]}"#,
    );
    yes(
        r#"{"r": {"a": ["x"]}, "s": {"b": ["y"]}}"#,
        r#"{"r": [{"a": "x"}], "s": [{"b": "z"}, {"b": "y"}]}"#,
    );
    no(
        r#"{"r": {"a": ["x"], "q": {"b": ["y"]}}}"#,
        r#"{"r": [{"a": "x", "q": [{"b": "n"}]}, {"a": "n", "q": [{"b": "y"}]}]}"#,
    );
    yes(
        r#"{"employees": {"firstName": ["Anna"], "lastName": ["Smith"]}}"#,
        r#"{"employees": [[{"firstName": "John", "lastName": "Doe"}, {"firstName": "Anna", "lastName": "Smith"}], [{"firstName": "Peter", "lastName": "Jones"}]]}"#,
    );
}

#[test]
fn eb_10_exists_false_against_earlier_sorted_paths() {
    yes(
        r#"{"r": {"b": ["y"], "c": [{"exists": false}]}}"#,
        r#"{"r": [{"c": 1, "b": "x"}, {"b": "y"}]}"#,
    );
    no(
        r#"{"r": {"a": [{"exists": false}], "b": ["y"]}}"#,
        r#"{"r": [{"a": 1, "b": "x"}, {"b": "y"}]}"#,
    );
    no(
        r#"{"a": {"b": [{"exists": false}]}}"#,
        r#"{"a": [{"b": 1}, {"c": 2}]}"#,
    );
    // UTF-16 order: U+1F600 sorts before U+FF61.
    no(
        r#"{"r": {"😀": [{"exists": false}], "｡": ["y"]}}"#,
        r#"{"r": [{"😀": 1, "｡": "x"}, {"｡": "y"}]}"#,
    );
    yes(
        r#"{"r": {"a": ["y"], "😀": [{"exists": false}]}}"#,
        r#"{"r": [{"😀": 1, "a": "x"}, {"a": "y"}]}"#,
    );
    // A fixer with `exists: false` of its own fixes the element only when it takes a value.
    let p = r#"{"r": {"a": ["x", {"exists": false}], "b": [{"exists": false}]}}"#;
    yes(p, r#"{"r": [{"a": "x"}, {"b": 1}]}"#);
    no(p, r#"{"r": [{"a": "q"}, {"b": 1}]}"#);
}

#[test]
fn eb_12_to_eb_15_strings_addresses_literals() {
    yes(r#"{"a": [""]}"#, r#"{"a": ""}"#);
    no(r#"{"a": [""]}"#, r#"{"a": null}"#);
    no(r#"{"a": ["5"]}"#, r#"{"a": 5}"#);
    no(r#"{"a": ["true"]}"#, r#"{"a": true}"#);
    yes(r#"{"a": ["é"]}"#, "{\"a\": \"\\u00e9\"}");
    yes(r#"{"ip": ["10.0.0.1"]}"#, r#"{"ip": "010.0.0.1"}"#);
    yes(
        r#"{"ip": ["2001:db8::1"]}"#,
        r#"{"ip": "2001:DB8:0:0:0:0:0:1"}"#,
    );
    no(r#"{"ip": ["10.0.0.1"]}"#, r#"{"ip": "10.0.0.2"}"#);
    no(
        r#"{"ip": [{"exactly": "10.0.0.1"}]}"#,
        r#"{"ip": "010.0.0.1"}"#,
    );
    yes(
        r#"{"ip": [{"exactly": "10.0.0.1"}]}"#,
        r#"{"ip": "10.0.0.1"}"#,
    );
    yes(r#"{"a": [null]}"#, r#"{"a": null}"#);
    no(r#"{"a": [null]}"#, r#"{"b": null}"#);
    no(r#"{"a": [null]}"#, r#"{"a": ""}"#);
    yes(r#"{"f": [true]}"#, r#"{"f": true}"#);
    no(r#"{"f": [true]}"#, r#"{"f": false}"#);
}

#[test]
fn eb_16_eb_17_numbers() {
    for event in ["300", "3e2", "3.0e2", "300.00", "30000e-2"] {
        yes(r#"{"n": [300]}"#, &format!(r#"{{"n": {event}}}"#));
    }
    no(r#"{"n": [300]}"#, r#"{"n": "300"}"#);
    yes(r#"{"n": [0]}"#, r#"{"n": -0}"#);
    yes(r#"{"n": [9007199254740993]}"#, r#"{"n": 9007199254740993}"#);
    no(r#"{"n": [9007199254740993]}"#, r#"{"n": 9007199254740992}"#);
    no(
        r#"{"n": [9007199254740993]}"#,
        r#"{"n": 9.007199254740993e15}"#,
    );
    no(r#"{"n": [1]}"#, r#"{"n": 1.00000000000000001}"#);
    no(r#"{"n": [1.00000000000000001]}"#, r#"{"n": 1}"#);
    yes(
        r#"{"n": [0.30000000000000004]}"#,
        r#"{"n": 0.30000000000000004}"#,
    );
}

#[test]
fn eb_18_eb_26_numeric() {
    let p = r#"{"x": [{"numeric": [">", 0, "<=", 5]}]}"#;
    yes(p, r#"{"x": 5}"#);
    no(p, r#"{"x": 0}"#);
    no(p, r#"{"x": "3"}"#);
    yes(r#"{"x": [{"numeric": [">", 5e9]}]}"#, r#"{"x": 6e9}"#);
    yes(r#"{"x": [{"numeric": ["<", 1e300]}]}"#, r#"{"x": 1e299}"#);
    yes(
        r#"{"x": [{"numeric": [">", 0.1234567]}]}"#,
        r#"{"x": 0.1234568}"#,
    );
    no(
        r#"{"x": [{"numeric": ["=", 0.3]}]}"#,
        r#"{"x": 0.30000000000000004}"#,
    );
    // Non-comparable event numbers satisfy no numeric test.
    no(
        r#"{"x": [{"numeric": [">", 0]}]}"#,
        r#"{"x": 3.1415926535897932}"#,
    );
    yes(
        r#"{"x": [{"numeric": [">", 0]}]}"#,
        r#"{"x": 3.141592653589793}"#,
    );
    no(
        r#"{"x": [{"numeric": [">", 0]}]}"#,
        r#"{"x": 123456789012345678}"#,
    );
    yes(r#"{"x": [{"numeric": [">", 100]}]}"#, r#"{"x": [1, 150]}"#);
    for (pattern, code, message) in [
        (
            r#"{"x": [{"numeric": ["<", 0.30000000000000001]}]}"#,
            ErrorCode::EventBridgeInvalidValue,
            "Cannot compare number : 0.30000000000000001",
        ),
        (
            r#"{"x": [{"numeric": [">=", 5, "<=", 5]}]}"#,
            ErrorCode::EventBridgeInvalidValue,
            "Bottom must be less than top",
        ),
        (
            r#"{"x": [{"numeric": [">", 0, ">", 0]}]}"#,
            ErrorCode::EventBridgeUnknownOperator,
            "Bad numeric range operator: >",
        ),
        (
            r#"{"x": [{"numeric": 10}]}"#,
            ErrorCode::EventBridgeTypeError,
            "Value of numeric must be an array.",
        ),
        (
            r#"{"x": [{"numeric": []}]}"#,
            ErrorCode::EventBridgeSyntaxError,
            "Invalid member in numeric match: ]",
        ),
        (
            r#"{"x": [{"numeric": ["=", "5"]}]}"#,
            ErrorCode::EventBridgeTypeError,
            "Value of equals must be numeric",
        ),
        (
            r#"{"x": [{"NUMERIC": ["=", 5]}]}"#,
            ErrorCode::EventBridgeUnknownOperator,
            "Unrecognized match type NUMERIC",
        ),
    ] {
        let (got_code, _, got) = error(pattern);
        assert_eq!(got_code, code, "{pattern}: {got}");
        assert!(got.contains(message), "{pattern}: {got}");
    }
}

#[test]
fn eb_19_to_eb_21_prefix_suffix_ignore_case() {
    yes(
        r#"{"t": [{"prefix": "2017-10-02"}]}"#,
        r#"{"t": "2017-10-02T18:43:48Z"}"#,
    );
    no(r#"{"r": [{"prefix": "US-"}]}"#, r#"{"r": "us-west-1"}"#);
    no(r#"{"n": [{"prefix": "1"}]}"#, r#"{"n": 123}"#);
    yes(r#"{"a": [{"prefix": ""}]}"#, r#"{"a": ""}"#);
    no(r#"{"a": [{"prefix": ""}]}"#, r#"{"a": 1}"#);
    yes(r#"{"w": [{"suffix": "雨"}]}"#, r#"{"w": "大雨"}"#);
    yes(
        r#"{"s": [{"equals-ignore-case": "AWS.EC2"}]}"#,
        r#"{"s": "aws.ec2"}"#,
    );
    yes(r#"{"a": [{"equals-ignore-case": "ß"}]}"#, r#"{"a": "SS"}"#);
    no(r#"{"a": [{"equals-ignore-case": "ß"}]}"#, r#"{"a": "ss"}"#);
    no(r#"{"a": [{"equals-ignore-case": "ǅ"}]}"#, r#"{"a": "ǅ"}"#);
    yes(r#"{"a": [{"equals-ignore-case": "ǅ"}]}"#, r#"{"a": "ǆ"}"#);
    no(r#"{"a": [{"equals-ignore-case": "Σ"}]}"#, r#"{"a": "ς"}"#);
    yes(
        r#"{"a": [{"equals-ignore-case": "İ"}]}"#,
        "{\"a\": \"i\\u0307\"}",
    );
    no(
        r#"{"a": [{"equals-ignore-case": "k"}]}"#,
        "{\"a\": \"\\u212a\"}",
    );
    yes(
        r#"{"s": [{"prefix": {"equals-ignore-case": "EventB"}}]}"#,
        r#"{"s": "eventbridge"}"#,
    );
    yes(
        r#"{"f": [{"suffix": {"equals-ignore-case": ".png"}}]}"#,
        r#"{"f": "PHOTO.PNG"}"#,
    );
    for (pattern, message) in [
        (
            r#"{"a": [{"prefix": {"suffix": "a"}}]}"#,
            "Unsupported prefix pattern: suffix",
        ),
        (
            r#"{"a": [{"prefix": {}}]}"#,
            "Prefix expression name not found",
        ),
        (
            r#"{"a": [{"suffix": {}}]}"#,
            "Suffix expression name not found",
        ),
        (
            r#"{"a": [{"prefix": {"equals-ignore-case": 1}}]}"#,
            "equals-ignore-case match pattern must be a string",
        ),
        (
            r#"{"a": [{"equals-ignore-case": ["x"]}]}"#,
            "equals-ignore-case match pattern must be a string",
        ),
        (
            r#"{"a": [{"prefix": ["x"]}]}"#,
            "prefix match pattern must be a string",
        ),
        (
            r#"{"a": [{"suffix": 1}]}"#,
            "suffix match pattern must be a string",
        ),
        (
            r#"{"a": [{"exactly": 1}]}"#,
            "exact match pattern must be a string",
        ),
    ] {
        let (_, _, got) = error(pattern);
        assert!(got.contains(message), "{pattern}: {got}");
    }
}

#[test]
fn eb_22_wildcard() {
    yes(
        r#"{"f": [{"wildcard": "dir/*.png"}]}"#,
        r#"{"f": "dir/photo.png"}"#,
    );
    no(
        r#"{"f": [{"wildcard": "dir/*.png"}]}"#,
        r#"{"f": "dir/photo.png.bak"}"#,
    );
    yes(r#"{"a": [{"wildcard": "*"}]}"#, r#"{"a": ""}"#);
    no(r#"{"a": [{"wildcard": "*"}]}"#, r#"{"a": 5}"#);
    yes(r#"{"a": [{"wildcard": "*\\**"}]}"#, r#"{"a": "x*y"}"#);
    yes(r#"{"a": ["a*"]}"#, r#"{"a": "a*"}"#);
    no(r#"{"a": ["a*"]}"#, r#"{"a": "ab"}"#);
    for (pattern, message) in [
        (
            r#"{"a": [{"wildcard": "é**"}]}"#,
            "Consecutive wildcard characters at pos 3",
        ),
        (
            r#"{"a": [{"wildcard": "a\\b"}]}"#,
            "Invalid escape character at pos 2",
        ),
        (
            r#"{"a": [{"wildcard": 1}]}"#,
            "wildcard match pattern must be a string",
        ),
    ] {
        let (_, _, got) = error(pattern);
        assert!(got.contains(message), "{pattern}: {got}");
    }
}

#[test]
fn eb_23_to_eb_25_anything_but() {
    yes(
        r#"{"c": [{"anything-but": ["no-message"]}]}"#,
        r#"{"c": null}"#,
    );
    yes(r#"{"a": [{"anything-but": "100"}]}"#, r#"{"a": 100}"#);
    no(r#"{"a": [{"anything-but": "x"}]}"#, r#"{"b": "x"}"#);
    no(r#"{"a": [{"anything-but": "x"}]}"#, r#"{"a": []}"#);
    no(r#"{"a": [{"anything-but": "x"}]}"#, r#"{"a": {"b": 1}}"#);
    yes(r#"{"a": [{"anything-but": [1, 2]}]}"#, r#"{"a": [1, 3]}"#);
    no(r#"{"a": [{"anything-but": [1, 2]}]}"#, r#"{"a": [1, 2]}"#);
    no(r#"{"x": [{"anything-but": [100, 200]}]}"#, r#"{"x": 1e2}"#);
    // A non-comparable number passes numeric exclusions.
    yes(
        r#"{"x": [{"anything-but": [9007199254740992]}]}"#,
        r#"{"x": 9007199254740993}"#,
    );
    // No address reading in exclusions.
    yes(
        r#"{"ip": [{"anything-but": "10.0.0.1"}]}"#,
        r#"{"ip": "010.0.0.1"}"#,
    );
    yes(
        r#"{"a": [{"anything-but": {"prefix": "x"}}, {"exists": false}]}"#,
        r#"{"b": 1}"#,
    );
    no(
        r#"{"s": [{"anything-but": {"prefix": ["init", "term"]}}]}"#,
        r#"{"s": "terminated"}"#,
    );
    no(
        r#"{"i": [{"anything-but": {"suffix": ["1234", "6789"]}}]}"#,
        r#"{"i": "i-6789"}"#,
    );
    no(
        r#"{"s": [{"anything-but": {"equals-ignore-case": "TERMINATED"}}]}"#,
        r#"{"s": "terminated"}"#,
    );
    yes(
        r#"{"s": [{"anything-but": {"equals-ignore-case": ["A", "B"]}}]}"#,
        r#"{"s": ["a", "c"]}"#,
    );
    no(
        r#"{"f": [{"anything-but": {"wildcard": "*/lib/*"}}]}"#,
        r#"{"f": "/usr/lib/x.so"}"#,
    );
    yes(
        r#"{"f": [{"anything-but": {"wildcard": ["*/lib/*", ""]}}]}"#,
        r#"{"f": "x"}"#,
    );
    for (pattern, message) in [
        (
            r#"{"a": [{"anything-but": {"prefix": ""}}]}"#,
            "Null prefix/suffix not allowed",
        ),
        (
            r#"{"a": [{"anything-but": {"prefix": []}}]}"#,
            "anything-but",
        ),
        (
            r#"{"a": [{"anything-but": {"prefix": 123}}]}"#,
            "prefix/suffix match pattern must be a string",
        ),
        (
            r#"{"a": [{"anything-but": {"equals-ignore-case": [123, 456]}}]}"#,
            "Inside anything-but/equals-ignore-case list, number|start|null|boolean is not supported.",
        ),
        (
            r#"{"a": [{"anything-but": {"prefix": {"equals-ignore-case": "f"}}}]}"#,
            "Value of anything-but must be an array or single string/number value.",
        ),
        (
            r#"{"a": [{"anything-but": {"exists": true}}]}"#,
            "Unsupported anything-but pattern: exists",
        ),
        (
            r#"{"a": [{"anything-but": null}]}"#,
            "Value of anything-but must be an array or single string/number value.",
        ),
        (
            r#"{"a": [{"anything-but": ["stopped", null]}]}"#,
            "Inside anything but list, start|null|boolean is not supported.",
        ),
        (
            r#"{"a": [{"anything-but": ["a", 1]}]}"#,
            "either all values are number or string",
        ),
        (
            r#"{"a": [{"anything-but": [9007199254740993]}]}"#,
            "Cannot compare number : 9007199254740993",
        ),
    ] {
        let (_, _, got) = error(pattern);
        assert!(
            got.to_lowercase().contains(&message.to_lowercase()),
            "{pattern}: {got}"
        );
    }
    let (_, _, got) = error(r#"{"a": [{"anything-but": {"prefix": []}}]}"#);
    assert!(got.contains("empty"), "{got}");
}

#[test]
fn eb_27_to_eb_29_cidr() {
    yes(
        r#"{"ip": [{"cidr": "10.0.0.0/24"}]}"#,
        r#"{"ip": "10.0.0.255"}"#,
    );
    no(
        r#"{"ip": [{"cidr": "10.0.0.0/24"}]}"#,
        r#"{"ip": "10.0.1.0"}"#,
    );
    yes(
        r#"{"ip": [{"cidr": "10.0.0.5/30"}]}"#,
        r#"{"ip": "10.0.0.4"}"#,
    );
    yes(
        r#"{"ip": [{"cidr": "0.0.0.0/0"}]}"#,
        r#"{"ip": "203.0.113.9"}"#,
    );
    no(r#"{"ip": [{"cidr": "0.0.0.0/0"}]}"#, r#"{"ip": 5}"#);
    no(r#"{"ip": [{"cidr": "0.0.0.0/0"}]}"#, r#"{"ip": "::1"}"#);
    yes(
        r#"{"ip": [{"cidr": "10.0.0.0/24"}]}"#,
        r#"{"ip": "::ffff:a00:1"}"#,
    );
    no(
        r#"{"ip": [{"cidr": "10.0.0.0/24"}]}"#,
        r#"{"ip": "::ffff:10.0.0.1"}"#,
    );
    yes(
        r#"{"ip": [{"cidr": "2001:db8::/32"}]}"#,
        r#"{"ip": "2001:DB8:ffff::1"}"#,
    );
    yes(
        r#"{"ip": [{"cidr": "10.0.0.0/8/"}]}"#,
        r#"{"ip": "10.1.2.3"}"#,
    );
    for (pattern, message) in [
        (
            r#"{"ip": [{"cidr": "bad-filter"}]}"#,
            "Malformed CIDR, one '/' required",
        ),
        (
            r#"{"ip": [{"cidr": "bad-/64filter"}]}"#,
            "Malformed CIDR, mask bits must be an integer",
        ),
        (
            r#"{"ip": [{"cidr": "10.0.0.0/-1"}]}"#,
            "Malformed CIDR, mask bits must not be negative",
        ),
        (
            r#"{"ip": [{"cidr": "xx.11.xx/8"}]}"#,
            "Nonstandard IP address: xx.11.xx",
        ),
        (
            r#"{"ip": [{"cidr": "10.0.0.256/24"}]}"#,
            "Invalid IP address: 10.0.0.256",
        ),
        (
            r#"{"ip": [{"cidr": "10.0.0.1/32"}]}"#,
            "IPv4 mask bits must be < 32",
        ),
        (
            r#"{"ip": [{"cidr": "::/128"}]}"#,
            "IPv6 mask bits must be < 128",
        ),
        (
            r#"{"ip": [{"cidr": ["x"]}]}"#,
            "prefix match pattern must be a string",
        ),
    ] {
        let (_, _, got) = error(pattern);
        assert!(got.contains(message), "{pattern}: {got}");
    }
}

#[test]
fn eb_30_exists() {
    yes(r#"{"a": [{"exists": true}]}"#, r#"{"a": null}"#);
    yes(r#"{"a": [{"exists": true}]}"#, r#"{"a": ""}"#);
    yes(r#"{"a": [{"exists": true}]}"#, r#"{"a": false}"#);
    no(r#"{"a": [{"exists": false}]}"#, r#"{"a": null}"#);
    yes(r#"{"a": [{"exists": false}]}"#, r#"{"a": []}"#);
    no(r#"{"a": [{"exists": true}]}"#, r#"{"a": [{"b": 1}]}"#);
    yes(
        r#"{"d": {"c": [{"exists": false}]}}"#,
        r#"{"d": {"c": {"c1": 100}}}"#,
    );
    no(r#"{"a": ["x", {"exists": false}]}"#, r#"{"a": "y"}"#);
    yes(r#"{"a": ["x", {"exists": false}]}"#, r#"{"b": "y"}"#);
    let (_, _, got) = error(r#"{"a": [{"exists": "true"}]}"#);
    assert!(got.contains("exists match pattern must be either true or false."));
}

#[test]
fn eb_31_errors_carry_pointers_and_codes() {
    let (code, at, _) = error(r#"{"a": {"b": [{"prefix": 1}]}}"#);
    assert_eq!(
        (code, at.as_str()),
        (ErrorCode::EventBridgeTypeError, "/a/b/0/prefix")
    );
    let (code, at, message) = error(r#"{"a": [{"exsits": true}]}"#);
    assert_eq!(
        (code, at.as_str()),
        (ErrorCode::EventBridgeUnknownOperator, "/a/0/exsits")
    );
    assert!(message.contains("did you mean `exists`"), "{message}");
    let (code, _, _) = error("{oops");
    assert_eq!(code, ErrorCode::EventBridgeSyntaxError);
}

#[test]
fn eb_32_eb_33_limits() {
    let fields = |n: usize| {
        let members: Vec<String> = (0..n).map(|i| format!(r#""k{i}": ["v"]"#)).collect();
        format!("{{{}}}", members.join(","))
    };
    compile(&fields(256));
    let (code, _, message) = error(&fields(257));
    assert_eq!(code, ErrorCode::EventBridgeLimitExceeded);
    assert!(message.contains("exceeds max value of 256"), "{message}");
    // Across `$or`: a branch counts its own fields and the enclosing ones, not the other
    // alternatives'.
    let branch = |prefix: &str, n: usize| {
        let members: Vec<String> = (0..n).map(|i| format!(r#""{prefix}{i}": ["v"]"#)).collect();
        format!("{{{}}}", members.join(","))
    };
    compile(&format!(
        r#"{{"top": ["x"], "$or": [{}, {}]}}"#,
        branch("a", 255),
        branch("b", 255)
    ));
    let (_, _, message) = error(&format!(
        r#"{{"top": ["x"], "$or": [{}, {}]}}"#,
        branch("a", 256),
        branch("b", 1)
    ));
    assert!(message.contains("exceeds max value of 256"), "{message}");
    // EB-33, after EB-31: a pattern invalid on both counts reports EB-31's error.
    let (code, _, message) = error(r#"{"e": [{"wildcard": "*:*:*:*:*:event-bus/*"}]}"#);
    assert_eq!(code, ErrorCode::EventBridgeLimitExceeded);
    assert!(message.starts_with("Rule is too complex"), "{message}");
    let (code, _, _) = error(r#"{"e": [{"wildcard": "*:*:*:*:*:event-bus/*"}], "f": []}"#);
    assert_eq!(code, ErrorCode::EventBridgeSyntaxError);
    compile(r#"{"f": [{"wildcard": "/Users/*/dir/dir/dir/dir/dir/doc.txt"}]}"#);
    let (code, _, _) = error(
        r#"{"s": [{"wildcard": "*:stack/Shared/*"}, {"wildcard": "*:stack/Api/*"}, {"wildcard": "*:stack/Data/*"}, {"wildcard": "*:stack/Monitoring/*"}]}"#,
    );
    assert_eq!(code, ErrorCode::EventBridgeLimitExceeded);
    // The operands of one path count together, wherever they are in the pattern.
    let (code, _, _) = error(
        r#"{"$or": [{"s": [{"wildcard": "*:stack/Shared/*"}, {"wildcard": "*:stack/Api/*"}]}, {"s": [{"wildcard": "*:stack/Data/*"}, {"anything-but": {"wildcard": "*:stack/Monitoring/*"}}]}]}"#,
    );
    assert_eq!(code, ErrorCode::EventBridgeLimitExceeded);
}

#[test]
fn subscription_sets_hold_eventbridge_groups() {
    let mut set: SubscriptionSet<&str> = SubscriptionSet::new();
    set.insert("ec2", &compile(r#"{"source": ["aws.ec2"]}"#))
        .unwrap();
    set.insert("pair", &compile(r#"{"r": {"a": ["x"], "b": ["y"]}}"#))
        .unwrap();
    let mut scratch = filtervm_compiler::SetScratch::default();
    let ids: Vec<&str> = set
        .matching(
            &mut scratch,
            &filtervm_compiler::MessageParts::body(
                br#"{"source": "aws.ec2", "r": [{"a": "x", "b": "z"}, {"a": "w", "b": "y"}]}"#,
            ),
        )
        .ids()
        .copied()
        .collect();
    assert_eq!(ids, ["ec2"]);
    let matches = set.matching(&mut scratch, &filtervm_compiler::MessageParts::body(b"[1]"));
    assert_eq!(matches.ids().count(), 0);
    let unjudged: Vec<_> = matches.unjudged().collect();
    assert_eq!(unjudged.len(), 1);
    assert_eq!(unjudged[0].subscriptions, 2);
    assert_eq!(unjudged[0].error.code, ErrorCode::InvalidMessage);
}

#[test]
fn the_wire_keeps_eventbridge_filters_whole() {
    let filter = compile(
        r#"{"a": [{"anything-but": {"equals-ignore-case": ["X"]}}, {"cidr": "10.0.0.0/8"}, 1e400, 300], "r": {"b": ["y"], "c": [{"exists": false}]}}"#,
    );
    let loaded = Filter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(loaded.dialect(), Dialect::EventBridge);
    let mut evaluator = Evaluator::new();
    for event in [
        r#"{"a": "y", "r": [{"b": "y"}]}"#,
        r#"{"a": "x", "r": [{"b": "y"}]}"#,
        r#"{"a": "10.1.1.1", "r": [{"b": "y", "c": 1}, {"b": "y"}]}"#,
        r#"{"a": 3e2, "r": [{"b": "y", "c": 1}]}"#,
        r#"{"a": 1e400, "r": {"b": "y"}}"#,
    ] {
        assert_eq!(
            evaluator.try_matches_bytes(&filter, event.as_bytes()),
            evaluator.try_matches_bytes(&loaded, event.as_bytes()),
            "{event}"
        );
    }
}

#[test]
fn lint_names_eventbridge_pitfalls() {
    let policy = read_policy_text(
        Dialect::EventBridge,
        r#"{"a.b": ["x"], "a": {"b": ["y"]}, "c": [{"anything-but": "x"}, "x"], "r": {"a": [{"exists": false}], "b": ["y"]}}"#,
        &Options::EventBridge,
    )
    .unwrap();
    let warnings = lint::lint(Dialect::EventBridge, &policy, &Options::EventBridge).unwrap();
    let seen: Vec<(&str, &str)> = warnings
        .iter()
        .map(|w| (w.code, w.pointer.as_str()))
        .collect();
    assert!(seen.contains(&(lint::REPLACED_MEMBER, "/a.b")), "{seen:?}");
    assert!(seen.contains(&(lint::ALWAYS_HOLDS, "/c")), "{seen:?}");
    assert!(
        seen.contains(&(lint::EXISTS_FALSE_ORDER, "/r/a/0")),
        "{seen:?}"
    );
    // A clean pattern has none of them.
    let clean = read_policy_text(
        Dialect::EventBridge,
        r#"{"r": {"b": ["y"], "c": [{"exists": false}]}, "d": [{"anything-but": ["x", "y"]}]}"#,
        &Options::EventBridge,
    )
    .unwrap();
    let warnings = lint::lint(Dialect::EventBridge, &clean, &Options::EventBridge).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn explain_shows_the_eventbridge_verdict() {
    let filter = compile(r#"{"r": {"a": [{"exists": false}], "b": ["y"]}}"#);
    let explanation = filtervm_compiler::explain::explain_bytes(
        &filter,
        None,
        br#"{"r": [{"a": 1, "b": "x"}, {"b": "y"}]}"#,
    )
    .unwrap();
    assert!(!explanation.matched);
    let codes: Vec<&str> = explanation.hints.iter().map(|h| h.code).collect();
    assert!(
        codes.contains(&filtervm_compiler::explain::HINT_ABSENT_ELSEWHERE),
        "{codes:?}"
    );
    let numbers = compile(r#"{"n": [{"numeric": [">", 0]}]}"#);
    let explanation =
        filtervm_compiler::explain::explain_bytes(&numbers, None, br#"{"n": 3.1415926535897932}"#)
            .unwrap();
    let codes: Vec<&str> = explanation.hints.iter().map(|h| h.code).collect();
    assert!(
        codes.contains(&filtervm_compiler::explain::HINT_NOT_COMPARABLE),
        "{codes:?}"
    );
    let e = filtervm_compiler::explain::explain_bytes(&filter, None, b"[1]").unwrap_err();
    assert!(e.to_string().contains("INVALID_MESSAGE"), "{e}");
}

/// EB-8's search on events the rows cannot judge stays bounded: many paths, wide arrays of
/// objects and deep nesting give a verdict (or, past the search's step budget, an error), never
/// a long search.
#[test]
fn eb_8_the_exact_search_is_bounded() {
    // Ten paths under one array of 300 objects, each path's value in every element but the
    // last path's absence decided against the element the others fix; a second route to `r`.
    let pattern = format!(
        "{{\"r\": {{{}, \"z\": [{{\"exists\": false}}]}}}}",
        (0..10)
            .map(|i| format!("\"k{i}\": [\"v\"]"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let element = (0..10)
        .map(|i| format!("\"k{i}\": \"v\""))
        .collect::<Vec<_>>()
        .join(", ");
    let elements = vec![format!("{{{element}, \"z\": 1}}"); 300].join(", ");
    let filter = compile(&pattern);
    let route = r#""r": {"k0": "v"}"#;
    let cases = [
        // Only an element with `z` has all ten values; the one without has just `"k0": "x"`:
        // no match (the second route's value fixes nothing).
        (
            format!("{{\"r\": [{elements}, {{\"k0\": \"x\"}}], {route}}}"),
            false,
        ),
        // One element without `z` at the end: a match.
        (
            format!("{{\"r\": [{elements}, {{{element}}}], {route}}}"),
            true,
        ),
        // The values nested 900 arrays deep beside an element with `z`: a match.
        (
            format!(
                "{{\"r\": [{{\"z\": 1}}, {}{{{element}}}{}], {route}}}",
                "[".repeat(900),
                "]".repeat(900)
            ),
            true,
        ),
    ];
    let mut evaluator = Evaluator::new();
    let mut bindings = filtervm_vm::bind::Bindings::new();
    for (i, (event, expected)) in cases.iter().enumerate() {
        // The rows cannot judge it: the search does.
        assert_eq!(
            bindings
                .bind_json(filter.program().keys(), event.as_bytes())
                .judgement(),
            &filtervm_vm::bind::Judgement::Unsupported,
            "case {i}"
        );
        assert_eq!(
            evaluator.try_matches_bytes(&filter, event.as_bytes()),
            Ok(*expected),
            "case {i}"
        );
    }
}

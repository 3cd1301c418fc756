//! The `eventbridge` reference interpreter (`docs/dialects/eventbridge-patterns.md`): every public
//! and local vector through it (validate, then evaluate), and unit cases for the rules the
//! vectors cover thinly, each named after its rule.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_conformance::reference::eventbridge::{
    self, INVALID_MESSAGE, INVALID_PATTERN, LIMIT_EXCEEDED, PATTERN_TOO_COMPLEX, check, evaluate,
    evaluate_text, read, validate_text, wildcard_complexity,
};
use filtervm_conformance::reference::json::Value;
use std::path::PathBuf;

fn vectors(name: &str) -> Vec<(String, Value)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("vectors")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            let at = format!("{}:{}", path.display(), n + 1);
            // The whole line is one level deeper than its policy and message.
            let case = filtervm_conformance::reference::json::parse_with(
                line,
                filtervm_conformance::reference::json::ReadOptions {
                    max_depth: eventbridge::READ_OPTIONS.max_depth + 1,
                    keep_duplicates: true,
                    reject_duplicates: false,
                },
            )
            .unwrap_or_else(|e| panic!("{at}: {e}"));
            (at, case)
        })
        .collect()
}

/// Runs one vector through the reference: `None` when it passes, else why not.
fn run(case: &Value) -> Option<String> {
    let policy = &case["policy"];
    let expect = case["expect"].as_str().unwrap();
    match (expect, eventbridge::check(policy)) {
        ("invalid", Ok(())) => Some("expected invalid, the reference accepts it".to_owned()),
        ("invalid", Err(e)) => {
            if e.code == eventbridge::REFERENCE_LIMIT {
                return Some(format!("the reference cannot judge it: {e}"));
            }
            let word = case["error"].as_str().unwrap_or("").to_lowercase();
            let text = e.to_string().to_lowercase();
            (!text.contains(&word)).then(|| format!("expected an error with `{word}`, got: {e}"))
        }
        (_, Err(e)) => Some(format!("expected {expect}, got: {e}")),
        (_, Ok(())) => match evaluate(&Value::Null, policy, &case["message"]) {
            Ok(v) if v == (expect == "match") => None,
            Ok(v) => Some(format!("expected {expect}, got {v}")),
            Err(e) => Some(format!("expected {expect}, got: {e}")),
        },
    }
}

fn run_file(name: &str) -> usize {
    let cases = vectors(name);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(at, case)| run(case).map(|f| format!("{at} ({}): {f}", case["id"])))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

#[test]
fn every_public_vector_passes() {
    assert_eq!(run_file("eventbridge.jsonl"), 200);
}

#[test]
fn every_local_vector_passes() {
    assert!(run_file("local/eventbridge.jsonl") >= 100);
}

/// Whether the event matches the pattern (both as text, read keeping repeated names).
fn m(pattern: &str, event: &str) -> bool {
    evaluate_text(pattern, event).unwrap_or_else(|e| panic!("{pattern} on {event}: {e}"))
}

/// The error a pattern gets: (code, pointer, message).
fn err(pattern: &str) -> (&'static str, String, String) {
    let e = check(&read(pattern).unwrap()).expect_err(pattern);
    (e.code, e.pointer, e.message)
}

/// The message of the error a pattern gets, which must be an EB-31 error.
fn invalid(pattern: &str) -> String {
    let (code, _, message) = err(pattern);
    assert_eq!(code, INVALID_PATTERN, "{pattern}: {message}");
    message
}

#[test]
fn eb_7_a_later_occurrence_replaces_an_earlier_one() {
    // Repeated names: the last is used.
    let p = r#"{"a": ["x"], "a": ["y"]}"#;
    assert!(m(p, r#"{"a": "y"}"#));
    assert!(!m(p, r#"{"a": "x"}"#));
    // A dotted name meeting its nested spelling, either order.
    let p = r#"{"a": {"b": ["y"]}, "a.b": ["x"]}"#;
    assert!(m(p, r#"{"a": {"b": "x"}}"#));
    assert!(!m(p, r#"{"a": {"b": "y"}}"#));
    // A leaf before `$or`: replaced in the alternative that repeats it; branches {a:y}, {a:x, b:z}.
    let p = r#"{"a": ["x"], "$or": [{"a": ["y"]}, {"b": ["z"]}]}"#;
    assert!(m(p, r#"{"a": "y"}"#));
    assert!(m(p, r#"{"a": "x", "b": "z"}"#));
    assert!(!m(p, r#"{"a": "x"}"#));
    assert!(!m(p, r#"{"a": "w", "b": "z"}"#));
    // The same members with `$or` first: branches {a:x}, {a:x, b:z}.
    let p = r#"{"$or": [{"a": ["y"]}, {"b": ["z"]}], "a": ["x"]}"#;
    assert!(m(p, r#"{"a": "x"}"#));
    assert!(!m(p, r#"{"a": "y"}"#));
    assert!(!m(p, r#"{"a": "y", "b": "z"}"#));
    // A name repeated around a `$or`: document order, not the last value at the first place
    // (branches {a:w}, {a:w, b:z}; the `$or`'s a=y is gone).
    let p = r#"{"a": ["x"], "$or": [{"a": ["y"]}, {"b": ["z"]}], "a": ["w"]}"#;
    assert!(m(p, r#"{"a": "w"}"#));
    assert!(!m(p, r#"{"a": "y"}"#));
    assert!(!m(p, r#"{"a": "x", "b": "z"}"#));
    // Nested `$or` multiplies; an inner alternative replaces what the outer one wrote.
    let p = r#"{"$or": [{"a": ["1"], "$or": [{"a": ["2"]}, {"b": ["2"]}]}, {"c": ["3"]}]}"#;
    assert!(m(p, r#"{"a": "2"}"#));
    assert!(m(p, r#"{"a": "1", "b": "2"}"#));
    assert!(!m(p, r#"{"a": "1"}"#));
    assert!(m(p, r#"{"c": "3"}"#));
    // `$or` inside a nested object: paths relative to it; a sibling replaces the alternative.
    let p = r#"{"d": {"$or": [{"s": ["a"]}, {"t": ["b"]}], "s": ["c"]}}"#;
    assert!(m(p, r#"{"d": {"s": "c"}}"#));
    assert!(!m(p, r#"{"d": {"s": "a"}}"#));
    assert!(m(p, r#"{"d": {"s": "c", "t": "b"}}"#));
}

#[test]
fn eb_8_eb_9_arrays_of_objects_must_agree_on_elements() {
    let employees = r#"{"employees": [{"firstName": "John", "lastName": "Doe"},
        {"firstName": "Anna", "lastName": "Smith"}, {"firstName": "Peter", "lastName": "Jones"}]}"#;
    assert!(m(
        r#"{"employees": {"firstName": ["Anna"], "lastName": ["Smith"]}}"#,
        employees
    ));
    assert!(!m(
        r#"{"employees": {"firstName": ["Anna"], "lastName": ["Jones"]}}"#,
        employees
    ));
    // Every array level: the inner array's element and the outer one's.
    let nested = r#"{"r": [{"a": "x", "q": [{"b": "n", "c": 1}, {"b": "y", "c": 2}]},
        {"a": "z", "q": [{"b": "y", "c": 1}]}]}"#;
    assert!(m(
        r#"{"r": {"a": ["x"], "q": {"b": ["y"], "c": [2]}}}"#,
        nested
    ));
    assert!(!m(
        r#"{"r": {"a": ["x"], "q": {"b": ["y"], "c": [1]}}}"#,
        nested
    ));
    assert!(m(
        r#"{"r": {"a": ["z"], "q": {"b": ["y"], "c": [1]}}}"#,
        nested
    ));
    assert!(!m(r#"{"r": {"a": ["z"], "q": {"c": [2]}}}"#, nested));
    // Nested arrays of objects: an element of an inner array is in one outer element.
    let arrays = r#"{"e": [[{"f": "A", "l": "S"}, {"f": "J", "l": "D"}], [{"f": "P", "l": "J"}]]}"#;
    assert!(m(r#"{"e": {"f": ["J"], "l": ["D"]}}"#, arrays));
    assert!(!m(r#"{"e": {"f": ["A"], "l": ["J"]}}"#, arrays));
    // Scalars directly in an array get no position: they never constrain each other.
    let scalars = r#"{"v": [{"k": "a", "n": [1, 2]}, {"k": "b", "n": [3, [4]]}]}"#;
    assert!(m(r#"{"v": {"k": ["a"], "n": [2]}}"#, scalars));
    assert!(!m(r#"{"v": {"k": ["a"], "n": [3]}}"#, scalars));
    assert!(m(r#"{"v": {"k": ["b"], "n": [4]}}"#, scalars));
    assert!(!m(r#"{"v": {"k": ["a"], "n": [4]}}"#, scalars));
    // Conditions under different arrays are independent.
    assert!(m(
        r#"{"r": {"a": ["x"]}, "s": {"b": ["y"]}}"#,
        r#"{"r": [{"a": "x"}], "s": [{"b": "z"}, {"b": "y"}]}"#
    ));
    // The search backtracks: the first value that matches `a` is not the one that works.
    assert!(m(
        r#"{"r": {"a": [{"prefix": "x"}], "b": ["y"]}}"#,
        r#"{"r": [{"a": "x1", "b": "n"}, {"a": "x2", "b": "y"}]}"#
    ));
    // Two array instances at one path (a repeated member name) are different arrays: values
    // from one never constrain values from the other.
    assert!(m(
        r#"{"r": {"a": ["1"], "b": ["2"]}}"#,
        r#"{"r": [{"a": "1"}], "r": [{"b": "2"}]}"#
    ));
    assert!(!m(
        r#"{"r": {"a": ["1"], "b": ["2"]}}"#,
        r#"{"r": [{"a": "1"}, {"b": "2"}], "r": [{"a": "x"}]}"#
    ));
}

/// Independent arrays do not multiply the search: three arrays of 300 objects each, every
/// element a candidate, and a last path that fails.
#[test]
fn eb_8_search_stays_linear_over_independent_arrays() {
    let array = |name: &str| {
        let items: Vec<String> = (0..300).map(|i| format!(r#"{{"{name}": {i}}}"#)).collect();
        format!("[{}]", items.join(", "))
    };
    let event = format!(
        r#"{{"r": {}, "s": {}, "t": {}, "z": "no"}}"#,
        array("a"),
        array("b"),
        array("c")
    );
    let pattern = r#"{"r": {"a": [{"exists": true}]}, "s": {"b": [{"anything-but": -1}]},
        "t": {"c": [{"numeric": [">=", 0]}]}, "z": ["yes"]}"#;
    assert!(!m(pattern, &event));
    assert!(m(&pattern.replace("\"yes\"", "\"no\""), &event));
}

#[test]
fn eb_9_exists_true_and_anything_but_fix_the_element() {
    // EB-9's example.
    assert!(!m(
        r#"{"r": {"a": [{"exists": true}], "b": ["y"]}}"#,
        r#"{"r": [{"a": 1}, {"b": "y"}]}"#
    ));
    assert!(m(
        r#"{"r": {"a": [{"exists": true}], "b": ["y"]}}"#,
        r#"{"r": [{"a": 1}, {"b": "y", "a": null}]}"#
    ));
    assert!(!m(
        r#"{"r": {"a": [{"anything-but": "q"}], "b": ["y"]}}"#,
        r#"{"r": [{"a": "z"}, {"b": "y"}]}"#
    ));
}

#[test]
fn eb_10_exists_false_is_judged_against_earlier_sorted_paths() {
    // The spec's two examples.
    assert!(m(
        r#"{"r": {"b": ["y"], "c": [{"exists": false}]}}"#,
        r#"{"r": [{"c": 1, "b": "x"}, {"b": "y"}]}"#
    ));
    assert!(!m(
        r#"{"r": {"a": [{"exists": false}], "b": ["y"]}}"#,
        r#"{"r": [{"a": 1, "b": "x"}, {"b": "y"}]}"#
    ));
    // The order is the paths' sorted order, not the pattern's.
    assert!(m(
        r#"{"r": {"c": [{"exists": false}], "b": ["y"]}}"#,
        r#"{"r": [{"c": 1, "b": "x"}, {"b": "y"}]}"#
    ));
    // Alone under an array of objects: no element may have the field.
    assert!(!m(
        r#"{"a": {"b": [{"exists": false}]}}"#,
        r#"{"a": [{"b": 1}, {"c": 2}]}"#
    ));
    assert!(m(
        r#"{"a": {"b": [{"exists": false}]}}"#,
        r#"{"a": [{"c": 1}, {"c": 2}]}"#
    ));
    // A value that agrees blocks `exists: false` even when it matches nothing else.
    assert!(!m(r#"{"a": ["x", {"exists": false}]}"#, r#"{"a": "y"}"#));
    assert!(m(r#"{"a": ["x", {"exists": false}]}"#, r#"{"a": "x"}"#));
    assert!(m(r#"{"a": ["x", {"exists": false}]}"#, r#"{"b": "y"}"#));
    // Paths sort by UTF-16 code units: U+1F600 before U+FF61.
    let p = "{\"r\": {\"\u{1f600}\": [{\"exists\": false}], \"\u{ff61}\": [\"y\"]}}";
    let e = "{\"r\": [{\"\u{1f600}\": 1, \"\u{ff61}\": \"x\"}, {\"\u{ff61}\": \"y\"}]}";
    assert!(!m(p, e));
    let p = "{\"r\": {\"\u{e000}\": [{\"exists\": false}], \"\u{1f600}\": [\"y\"]}}";
    let e = "{\"r\": [{\"\u{e000}\": 1, \"\u{1f600}\": \"x\"}, {\"\u{1f600}\": \"y\"}]}";
    assert!(
        m(p, e),
        "U+1F600 sorts before U+E000, so exists:false comes second"
    );
}

#[test]
fn eb_2_eb_3_event_values_and_paths() {
    assert!(m(r#"{"a": [3]}"#, r#"{"a": [1, [2, [3]]]}"#));
    assert!(!m(r#"{"detail": ["x"]}"#, r#"{"detail": {"b": "x"}}"#));
    assert!(m(
        r#"{"detail": {"state": ["x"]}}"#,
        r#"{"detail.state": "x"}"#
    ));
    assert!(m(r#"{"a.b": ["x"]}"#, r#"{"a": [{"b": "x"}]}"#));
    // A repeated member name in the event: each occurrence contributes.
    assert!(m(r#"{"a": ["x"]}"#, r#"{"a": "x", "a": "y"}"#));
    assert!(m(r#"{"a": ["y"]}"#, r#"{"a": "x", "a": "y"}"#));
    // Empty names are ordinary names (EB-35 e).
    assert!(m(r#"{"a": {"": ["x"]}}"#, r#"{"a": {"": "x"}}"#));
    assert!(m(r#"{"": {"a": ["x"]}}"#, r#"{".a": "x"}"#));
}

#[test]
fn eb_3_eb_34_events_that_cannot_be_judged() {
    for event in ["[]", "\"x\"", "1", "null", "[{\"a\": \"x\"}]"] {
        let e = evaluate_text(r#"{"a": ["x"]}"#, event).unwrap_err();
        assert!(e.to_string().contains(INVALID_MESSAGE), "{event}: {e}");
    }
    // 999 objects around an array: 1,000 levels, the most an event may nest.
    let nest = |n: usize| format!("{}[\"x\"]{}", "{\"a\": ".repeat(n), "}".repeat(n));
    // The pattern names the same path flat (patterns nest at most 128 levels).
    let pattern = format!("{{\"{}\": [\"x\"]}}", vec!["a"; 999].join("."));
    assert!(m(&pattern, &nest(999)));
    let e = evaluate_text(&pattern, &nest(1000)).unwrap_err();
    assert!(e.to_string().contains(INVALID_MESSAGE), "{e}");
    let arrays = format!("{{\"a\": {}1{}}}", "[".repeat(999), "]".repeat(999));
    assert!(m(r#"{"a": [1]}"#, &arrays));
    let arrays = format!("{{\"a\": {}1{}}}", "[".repeat(1000), "]".repeat(1000));
    assert!(evaluate_text(r#"{"a": [1]}"#, &arrays).is_err());
}

#[test]
fn eb_12_eb_15_strings_and_literals() {
    assert!(m(r#"{"a": [""]}"#, r#"{"a": ""}"#));
    assert!(!m(r#"{"a": [""]}"#, r#"{"a": null}"#));
    assert!(!m(r#"{"a": [null]}"#, r#"{"a": ""}"#));
    assert!(m(r#"{"a": [null]}"#, r#"{"a": [null]}"#));
    assert!(!m(r#"{"a": [null]}"#, r#"{"b": 1}"#));
    assert!(!m(r#"{"a": ["5"]}"#, r#"{"a": 5}"#));
    assert!(!m(r#"{"a": [false]}"#, r#"{"a": "false"}"#));
    assert!(m(r#"{"a": ["\u00e9"]}"#, "{\"a\": \"\u{e9}\"}"));
    // Exact means code point for code point: no normalisation.
    assert!(!m("{\"a\": [\"\u{e9}\"]}", "{\"a\": \"e\u{301}\"}"));
    // EB-22: a `*` in a plain string is literal.
    assert!(m(r#"{"a": ["a*"]}"#, r#"{"a": "a*"}"#));
    assert!(!m(r#"{"a": ["a*"]}"#, r#"{"a": "ab"}"#));
}

#[test]
fn eb_13_eb_14_eb_28_ip_shaped_strings_compare_as_addresses() {
    let p = r#"{"ip": ["10.0.0.1"]}"#;
    for same in [
        "10.0.0.1",
        "010.0.0.1",
        "10.000.0.001",
        "::ffff:a00:1",
        "0:0:0:0:0:FFFF:0A00:0001",
    ] {
        assert!(m(p, &format!(r#"{{"ip": "{same}"}}"#)), "{same}");
    }
    for other in [
        "10.0.0.2",
        "10.0.0.1 ",
        "::ffff:10.0.0.1",
        "10.0.0.01.0",
        "::a00:1",
    ] {
        assert!(!m(p, &format!(r#"{{"ip": "{other}"}}"#)), "{other}");
    }
    assert!(!m(p, r#"{"ip": 10}"#));
    let p = r#"{"ip": ["2001:db8::1"]}"#;
    assert!(m(p, r#"{"ip": "2001:DB8:0:0:0:0:0:1"}"#));
    assert!(m(p, r#"{"ip": "2001:0db8::0:1"}"#));
    assert!(!m(p, r#"{"ip": "2001:db8::1:0"}"#));
    // Address-shaped but no address: an ordinary string.
    let p = r#"{"ip": ["10.0.0.256"]}"#;
    assert!(m(p, r#"{"ip": "10.0.0.256"}"#));
    assert!(!m(p, r#"{"ip": "010.0.0.256"}"#));
    // `exactly` never reads addresses.
    let p = r#"{"ip": [{"exactly": "10.0.0.1"}]}"#;
    assert!(m(p, r#"{"ip": "10.0.0.1"}"#));
    assert!(!m(p, r#"{"ip": "010.0.0.1"}"#));
    // An IPv4-mapped pattern is the IPv4 address.
    assert!(m(r#"{"ip": ["::ffff:a00:1"]}"#, r#"{"ip": "10.0.0.1"}"#));
}

#[test]
fn eb_27_eb_29_cidr() {
    let v4 = r#"{"ip": [{"cidr": "10.0.0.5/30"}]}"#;
    for inside in ["10.0.0.4", "10.0.0.7", "010.0.0.6", "::ffff:a00:5"] {
        assert!(m(v4, &format!(r#"{{"ip": "{inside}"}}"#)), "{inside}");
    }
    for outside in ["10.0.0.3", "10.0.0.8", "::a00:5", "10.0.0.5/30", "x"] {
        assert!(!m(v4, &format!(r#"{{"ip": "{outside}"}}"#)), "{outside}");
    }
    assert!(!m(r#"{"ip": [{"cidr": "0.0.0.0/0"}]}"#, r#"{"ip": 5}"#));
    assert!(!m(r#"{"ip": [{"cidr": "0.0.0.0/0"}]}"#, r#"{"ip": "::1"}"#));
    assert!(!m(r#"{"ip": [{"cidr": "::/0"}]}"#, r#"{"ip": "10.0.0.1"}"#));
    assert!(m(r#"{"ip": [{"cidr": "::/0"}]}"#, r#"{"ip": "1::"}"#));
    assert!(m(
        r#"{"ip": [{"cidr": "2001:db8::/127"}]}"#,
        r#"{"ip": "2001:db8::1"}"#
    ));
    assert!(m(
        r#"{"ip": [{"cidr": "10.0.0.0/8/"}]}"#,
        r#"{"ip": "10.9.9.9"}"#
    ));
    assert_eq!(
        invalid(r#"{"ip": [{"cidr": "10.0.0.1/32"}]}"#),
        "IPv4 mask bits must be < 32"
    );
    assert_eq!(
        invalid(r#"{"ip": [{"cidr": "::/128"}]}"#),
        "IPv6 mask bits must be < 128"
    );
    assert_eq!(
        invalid(r#"{"ip": [{"cidr": "1::2::3/64"}]}"#),
        "Invalid IP address: 1::2::3"
    );
    assert_eq!(
        invalid(r#"{"ip": [{"cidr": "10.0.0.0/8", "x": 1}]}"#),
        "Only one key allowed in match expression"
    );
}

#[test]
fn eb_16_eb_17_eb_18_numbers() {
    // 300 = 3.0e2 both ways, and through `numeric`.
    assert!(m(r#"{"n": [300]}"#, r#"{"n": 3.0e2}"#));
    assert!(m(r#"{"n": [3.0e2]}"#, r#"{"n": 300}"#));
    assert!(m(r#"{"n": [300]}"#, r#"{"n": 30000e-2}"#));
    assert!(m(
        r#"{"n": [{"numeric": ["=", 3.0e2]}]}"#,
        r#"{"n": 300.00}"#
    ));
    assert!(!m(r#"{"n": [300]}"#, r#"{"n": "300"}"#));
    // 9007199254740993 is not comparable: only identical text matches.
    let p = r#"{"n": [9007199254740993]}"#;
    assert!(m(p, r#"{"n": 9007199254740993}"#));
    assert!(!m(p, r#"{"n": 9007199254740992}"#));
    assert!(!m(p, r#"{"n": 9.007199254740993e15}"#));
    assert!(!m(
        r#"{"n": [9007199254740992]}"#,
        r#"{"n": 9007199254740993}"#
    ));
    assert!(!m(
        r#"{"n": [{"numeric": [">", 0]}]}"#,
        r#"{"n": 9007199254740993}"#
    ));
    // 2^60: its shortest form is 1.152921504606847e18, so the exact integer is not comparable.
    assert!(!m(
        r#"{"n": [1152921504606846976]}"#,
        r#"{"n": 1.152921504606847e18}"#
    ));
    assert!(m(
        r#"{"n": [1152921504606847000]}"#,
        r#"{"n": 1.152921504606847e18}"#
    ));
    assert!(m(
        r#"{"n": [1152921504606846976]}"#,
        r#"{"n": 1152921504606846976}"#
    ));
    assert_eq!(
        invalid(r#"{"n": [{"numeric": ["<", 1152921504606846976]}]}"#),
        "Cannot compare number : 1152921504606846976"
    );
    // 0.30000000000000004 is the shortest form of 0.1 + 0.2: comparable, and not 0.3.
    let p = r#"{"n": [{"numeric": ["=", 0.30000000000000004]}]}"#;
    assert!(m(p, r#"{"n": 0.30000000000000004}"#));
    assert!(!m(p, r#"{"n": 0.3}"#));
    assert!(!m(p, r#"{"n": 0.30000000000000001}"#));
    assert!(m(
        r#"{"n": [{"numeric": [">", 0.3]}]}"#,
        r#"{"n": 0.30000000000000004}"#
    ));
    assert_eq!(
        invalid(r#"{"n": [{"numeric": ["=", 0.30000000000000001]}]}"#),
        "Cannot compare number : 0.30000000000000001"
    );
    // Zero of either sign; the whole binary64 range (EB-18).
    assert!(m(r#"{"n": [-0.0]}"#, r#"{"n": 0}"#));
    assert!(m(
        r#"{"n": [{"numeric": [">", 5e9, "<", 1e300]}]}"#,
        r#"{"n": 6e9}"#
    ));
    assert!(m(
        r#"{"n": [{"numeric": ["<", -1e300]}]}"#,
        r#"{"n": -1.5e300}"#
    ));
    assert!(!m(r#"{"n": [{"numeric": ["<", 0]}]}"#, r#"{"n": -1e400}"#));
    // A non-comparable number passes numeric anything-but (EB-18, EB-25).
    assert!(m(
        r#"{"n": [{"anything-but": [1]}]}"#,
        r#"{"n": 1.00000000000000001}"#
    ));
    assert!(!m(r#"{"n": [{"anything-but": [1]}]}"#, r#"{"n": 1.0e0}"#));
    assert!(m(r#"{"n": [{"anything-but": [1]}]}"#, r#"{"n": "1"}"#));
}

#[test]
fn eb_20_eb_21_equals_ignore_case() {
    let eic = |op: &str, value: &str| {
        m(
            &format!(r#"{{"a": [{{"equals-ignore-case": "{op}"}}]}}"#),
            &format!(r#"{{"a": "{value}"}}"#),
        )
    };
    assert!(eic("\u{df}", "\u{df}") && eic("\u{df}", "SS"));
    assert!(!eic("\u{df}", "ss") && !eic("\u{df}", "Ss") && !eic("SS", "\u{df}"));
    assert!(eic("\u{1c5}", "\u{1c6}") && eic("\u{1c5}", "\u{1c4}") && !eic("\u{1c5}", "\u{1c5}"));
    assert!(eic("\u{130}", "\u{130}") && eic("\u{130}", "i\u{307}") && !eic("\u{130}", "i"));
    assert!(eic("\u{3c2}", "\u{3c2}") && eic("\u{3c2}", "\u{3a3}") && !eic("\u{3c2}", "\u{3c3}"));
    assert!(eic("\u{3a3}", "\u{3a3}") && eic("\u{3a3}", "\u{3c3}") && !eic("\u{3a3}", "\u{3c2}"));
    assert!(!eic("k", "\u{212a}") && !eic("K", "\u{212a}") && eic("\u{212a}", "k"));
    assert!(eic("\u{1f600}", "\u{1f600}") && !eic("\u{1f600}", "??"));
    assert!(eic("", "") && !eic("", " "));
    assert!(!m(r#"{"a": [{"equals-ignore-case": "1"}]}"#, r#"{"a": 1}"#));
    // EB-21.
    let p = r#"{"a": [{"prefix": {"equals-ignore-case": "stra\u00df"}}]}"#;
    assert!(m(p, r#"{"a": "STRASSE-1"}"#));
    assert!(!m(p, r#"{"a": "strasse-1"}"#));
    let p = r#"{"a": [{"suffix": {"equals-ignore-case": ".PNG"}}]}"#;
    assert!(m(p, r#"{"a": "photo.png"}"#));
    assert!(!m(p, r#"{"a": "photo.png "}"#));
    assert!(!m(p, r#"{"a": "photo.pn"}"#));
}

#[test]
fn eb_19_eb_22_prefix_suffix_wildcard() {
    assert!(m(r#"{"a": [{"prefix": ""}]}"#, r#"{"a": ""}"#));
    assert!(!m(r#"{"a": [{"prefix": ""}]}"#, r#"{"a": 1}"#));
    assert!(m(r#"{"a": [{"suffix": "abc"}]}"#, r#"{"a": "abc"}"#));
    assert!(!m(r#"{"a": [{"suffix": "abc"}]}"#, r#"{"a": "ABC"}"#));
    assert!(m(r#"{"a": [{"wildcard": ""}]}"#, r#"{"a": ""}"#));
    assert!(!m(r#"{"a": [{"wildcard": ""}]}"#, r#"{"a": "x"}"#));
    assert!(m(r#"{"a": [{"wildcard": "*"}]}"#, r#"{"a": ""}"#));
    assert!(!m(r#"{"a": [{"wildcard": "*"}]}"#, r#"{"a": null}"#));
    assert!(m(r#"{"a": [{"wildcard": "a\\*b*"}]}"#, r#"{"a": "a*bcd"}"#));
    assert!(!m(
        r#"{"a": [{"wildcard": "a\\*b*"}]}"#,
        r#"{"a": "axbcd"}"#
    ));
    assert!(m(r#"{"a": [{"wildcard": "*\\\\"}]}"#, r#"{"a": "x\\"}"#));
    assert_eq!(
        invalid(r#"{"a": [{"wildcard": "x\\"}]}"#),
        "Invalid escape character at pos 2"
    );
}

#[test]
fn eb_23_eb_25_anything_but() {
    // Needs a value; every value not excluded passes, whatever its type.
    assert!(!m(r#"{"a": [{"anything-but": "x"}]}"#, r#"{"b": "x"}"#));
    assert!(!m(
        r#"{"a": [{"anything-but": "x"}]}"#,
        r#"{"a": [{"b": 1}]}"#
    ));
    assert!(!m(r#"{"a": [{"anything-but": "x"}]}"#, r#"{"a": []}"#));
    for passes in ["null", "true", "5", "\"y\"", "\"X\""] {
        assert!(
            m(
                r#"{"a": [{"anything-but": "x"}]}"#,
                &format!(r#"{{"a": {passes}}}"#)
            ),
            "{passes}"
        );
    }
    assert!(m(r#"{"a": [{"anything-but": [5]}]}"#, r#"{"a": "5"}"#));
    assert!(!m(r#"{"a": [{"anything-but": [5]}]}"#, r#"{"a": 5.0}"#));
    // Strings are excluded exactly, without address reading (EB-23).
    assert!(m(
        r#"{"a": [{"anything-but": "10.0.0.1"}]}"#,
        r#"{"a": "010.0.0.1"}"#
    ));
    // On an array the field passes when some element passes.
    assert!(m(
        r#"{"a": [{"anything-but": ["x", "y"]}]}"#,
        r#"{"a": ["x", "z"]}"#
    ));
    assert!(!m(
        r#"{"a": [{"anything-but": ["x", "y"]}]}"#,
        r#"{"a": ["x", "y"]}"#
    ));
    // The object forms exclude strings only.
    let p = r#"{"a": [{"anything-but": {"prefix": ["in", "te"]}}]}"#;
    assert!(!m(p, r#"{"a": "init"}"#));
    assert!(m(p, r#"{"a": "xin"}"#));
    assert!(m(p, r#"{"a": 5}"#));
    let p = r#"{"a": [{"anything-but": {"equals-ignore-case": ["stra\u00df", ""]}}]}"#;
    assert!(!m(p, r#"{"a": "STRASS"}"#));
    assert!(!m(p, r#"{"a": ""}"#));
    assert!(m(p, r#"{"a": "strass"}"#));
    assert!(m(p, r#"{"a": "STRASSE"}"#));
    let p = r#"{"a": [{"anything-but": {"wildcard": ["*.png", ""]}}]}"#;
    assert!(!m(p, r#"{"a": "x.png"}"#));
    assert!(!m(p, r#"{"a": ""}"#));
    assert!(m(p, r#"{"a": "x.jpg"}"#));
    assert!(m(p, r#"{"a": null}"#));
    let p = r#"{"a": [{"anything-but": {"suffix": "g"}}]}"#;
    assert!(!m(p, r#"{"a": "png"}"#));
    assert!(m(p, r#"{"a": "pnG"}"#));
}

#[test]
fn eb_30_exists() {
    for present in ["null", "\"\"", "false", "0", "[1]", "[[null]]"] {
        assert!(
            m(
                r#"{"a": [{"exists": true}]}"#,
                &format!(r#"{{"a": {present}}}"#)
            ),
            "{present}"
        );
        assert!(
            !m(
                r#"{"a": [{"exists": false}]}"#,
                &format!(r#"{{"a": {present}}}"#)
            ),
            "{present}"
        );
    }
    for absent in ["{}", "[]", "[{}]", "[[]]", "{\"b\": 1}"] {
        assert!(
            !m(
                r#"{"a": [{"exists": true}]}"#,
                &format!(r#"{{"a": {absent}}}"#)
            ),
            "{absent}"
        );
        assert!(
            m(
                r#"{"a": [{"exists": false}]}"#,
                &format!(r#"{{"a": {absent}}}"#)
            ),
            "{absent}"
        );
    }
    // exists:true and exists:false together: always.
    let p = r#"{"a": [{"exists": true}, {"exists": false}]}"#;
    assert!(m(p, r#"{"a": 1}"#) && m(p, r#"{"b": 1}"#));
}

#[test]
fn eb_31_messages_in_document_order() {
    let cases: &[(&str, &str, &str)] = &[
        ("[]", "", "Filter is not an object"),
        ("\"x\"", "", "Filter is not an object"),
        ("{}", "", "Empty objects are not allowed"),
        (
            r#"{"a": {"b": {}}}"#,
            "/a/b",
            "Empty objects are not allowed",
        ),
        (
            r#"{"$or": [{}, {"a": ["x"]}]}"#,
            "/$or/0",
            "Empty objects are not allowed",
        ),
        (r#"{"a": 1}"#, "/a", "\"a\" must be an object or an array"),
        (
            r#"{"a": null}"#,
            "/a",
            "\"a\" must be an object or an array",
        ),
        (r#"{"a": []}"#, "/a", "Empty arrays are not allowed"),
        (
            r#"{"a": [[]]}"#,
            "/a/0",
            "Match value must be String, number, true, false, or null",
        ),
        (r#"{"a": [{}]}"#, "/a/0", "Match expression name not found"),
        (
            r#"{"a": [{"Exists": true}]}"#,
            "/a/0/Exists",
            "Unrecognized match type Exists",
        ),
        (
            r#"{"$or": "x"}"#,
            "/$or",
            "It must be an Array followed with $or.",
        ),
        (
            r#"{"$or": [{"a": ["1"]}, []]}"#,
            "/$or/1",
            "Only JSON object is allowed in array of $or relationship.",
        ),
        (
            r#"{"$or": [{"a": ["1"]}]}"#,
            "/$or",
            "There must have at least 2 Objects in $or relationship.",
        ),
        (
            r#"{"$or": [{"a": {"b": {"=": ["1"]}}}, {"c": ["1"]}]}"#,
            "/$or/0/a/b/=",
            "= is Ruler reserved fieldName which cannot be used inside $or.",
        ),
        (
            r#"{"$or": [{"a": ["1"]}, {"$or": [{"cidr": ["1"]}, {"b": ["1"]}]}]}"#,
            "/$or/1/$or/0/cidr",
            "cidr is Ruler reserved fieldName which cannot be used inside $or.",
        ),
        (
            r#"{"a": [{"exactly": 1}]}"#,
            "/a/0/exactly",
            "exact match pattern must be a string",
        ),
        (
            r#"{"a": [{"exactly": "x", "prefix": "y"}]}"#,
            "/a/0/prefix",
            "Only one key allowed in match expression",
        ),
        (
            r#"{"a": [{"prefix": null}]}"#,
            "/a/0/prefix",
            "prefix match pattern must be a string",
        ),
        (
            r#"{"a": [{"suffix": {"equals-ignore-case": 1}}]}"#,
            "/a/0/suffix/equals-ignore-case",
            "equals-ignore-case match pattern must be a string",
        ),
        (
            r#"{"a": [{"suffix": {}}]}"#,
            "/a/0/suffix",
            "Suffix expression name not found",
        ),
        (
            r#"{"a": [{"suffix": {"prefix": "x"}}]}"#,
            "/a/0/suffix/prefix",
            "Unsupported suffix pattern: prefix",
        ),
        (
            r#"{"a": [{"prefix": {"equals-ignore-case": "x", "y": 1}}]}"#,
            "/a/0/prefix/y",
            "Only one key allowed in match expression",
        ),
        (
            r#"{"a": [{"prefix": {"equals-ignore-case": "x"}, "y": 1}]}"#,
            "/a/0/y",
            "Only one key allowed in match expression",
        ),
        (
            r#"{"a": [{"numeric": [5]}]}"#,
            "/a/0/numeric",
            "Invalid member in numeric match: 5",
        ),
        (
            r#"{"a": [{"numeric": [{"x": 1}]}]}"#,
            "/a/0/numeric",
            "Invalid member in numeric match: {",
        ),
        (
            r#"{"a": [{"numeric": [null]}]}"#,
            "/a/0/numeric",
            "Invalid member in numeric match: null",
        ),
        (
            r#"{"a": [{"numeric": ["="]}]}"#,
            "/a/0/numeric",
            "Value of equals must be numeric",
        ),
        (
            r#"{"a": [{"numeric": ["<=", true]}]}"#,
            "/a/0/numeric",
            "Value of <= must be numeric",
        ),
        (
            r#"{"a": [{"numeric": ["<", 1, 2]}]}"#,
            "/a/0/numeric",
            "Too many elements in numeric expression",
        ),
        (
            r#"{"a": [{"numeric": ["<", 1e400, 2]}]}"#,
            "/a/0/numeric",
            "Too many elements in numeric expression",
        ),
        (
            r#"{"a": [{"numeric": ["<", 1e400]}]}"#,
            "/a/0/numeric",
            "Cannot compare number : 1e400",
        ),
        (
            r#"{"a": [{"numeric": [">", 1, 2]}]}"#,
            "/a/0/numeric",
            "Bad value in numeric range: 2",
        ),
        (
            r#"{"a": [{"numeric": [">", 1, []]}]}"#,
            "/a/0/numeric",
            "Bad value in numeric range: [",
        ),
        (
            r#"{"a": [{"numeric": [">", 1, "="]}]}"#,
            "/a/0/numeric",
            "Bad numeric range operator: =",
        ),
        (
            r#"{"a": [{"numeric": [">=", 1, "<="]}]}"#,
            "/a/0/numeric",
            "Value of <= must be numeric",
        ),
        (
            r#"{"a": [{"numeric": [">=", 1, "<=", 2, 3]}]}"#,
            "/a/0/numeric",
            "Too many terms in numeric range expression",
        ),
        (
            r#"{"a": [{"numeric": [">=", 1e400, "<=", 1e401]}]}"#,
            "/a/0/numeric",
            "Cannot compare number : 1e400",
        ),
        (
            r#"{"a": [{"numeric": [">=", 1, "<=", 1e401]}]}"#,
            "/a/0/numeric",
            "Cannot compare number : 1e401",
        ),
        (
            r#"{"a": [{"numeric": [">", 2, "<", 1]}]}"#,
            "/a/0/numeric",
            "Bottom must be less than top",
        ),
        (
            r#"{"a": [{"numeric": ["==", 2]}]}"#,
            "/a/0/numeric",
            "Unrecognized numeric range operator: ==",
        ),
        (
            r#"{"a": [{"numeric": [">", 1], "x": 1}]}"#,
            "/a/0/x",
            "Too many elements in numeric expression",
        ),
        (
            r#"{"a": [{"anything-but": {}}]}"#,
            "/a/0/anything-but",
            "Anything-But expression name not found",
        ),
        (
            r#"{"a": [{"anything-but": {"numeric": [1]}}]}"#,
            "/a/0/anything-but/numeric",
            "Unsupported anything-but pattern: numeric",
        ),
        (
            r#"{"a": [{"anything-but": true}]}"#,
            "/a/0/anything-but",
            "Value of anything-but must be an array or single string/number value.",
        ),
        (
            r#"{"a": [{"anything-but": {"suffix": null}}]}"#,
            "/a/0/anything-but/suffix",
            "Value of anything-but must be an array or single string/number value.",
        ),
        (
            r#"{"a": [{"anything-but": ["x", {}]}]}"#,
            "/a/0/anything-but/1",
            "Inside anything but list, start|null|boolean is not supported.",
        ),
        (
            r#"{"a": [{"anything-but": []}]}"#,
            "/a/0/anything-but",
            "Inside anything but list, either all values are number or string, mixed type is not supported",
        ),
        (
            r#"{"a": [{"anything-but": [1, 1e400, null]}]}"#,
            "/a/0/anything-but/1",
            "Cannot compare number : 1e400",
        ),
        (
            r#"{"a": [{"anything-but": 1e400}]}"#,
            "/a/0/anything-but",
            "Cannot compare number : 1e400",
        ),
        (
            r#"{"a": [{"anything-but": {"suffix": ["x", ""]}}]}"#,
            "/a/0/anything-but/suffix/1",
            "Null prefix/suffix not allowed",
        ),
        (
            r#"{"a": [{"anything-but": {"suffix": 5}}]}"#,
            "/a/0/anything-but/suffix",
            "prefix/suffix match pattern must be a string",
        ),
        (
            r#"{"a": [{"anything-but": {"equals-ignore-case": ["x", null]}}]}"#,
            "/a/0/anything-but/equals-ignore-case/1",
            "Inside anything-but/equals-ignore-case list, number|start|null|boolean is not supported.",
        ),
        (
            r#"{"a": [{"anything-but": {"wildcard": [1]}}]}"#,
            "/a/0/anything-but/wildcard/0",
            "wildcard match pattern must be a string",
        ),
        (
            r#"{"a": [{"anything-but": {"wildcard": ["a**", 1]}}]}"#,
            "/a/0/anything-but/wildcard/1",
            "wildcard match pattern must be a string",
        ),
        (
            r#"{"a": [{"anything-but": {"wildcard": ["x", "a**"]}}]}"#,
            "/a/0/anything-but/wildcard/1",
            "Consecutive wildcard characters at pos 2",
        ),
        (
            r#"{"a": [{"anything-but": {"wildcard": "\\x"}}]}"#,
            "/a/0/anything-but/wildcard",
            "Invalid escape character at pos 1",
        ),
        (
            r#"{"a": [{"anything-but": {"prefix": "x", "y": 1}}]}"#,
            "/a/0/anything-but/y",
            "Too many elements in numeric expression",
        ),
        (
            r#"{"a": [{"anything-but": {"prefix": "x"}, "y": 1}]}"#,
            "/a/0/y",
            "Too many elements in numeric expression",
        ),
        (
            r#"{"a": [{"anything-but": "x", "y": 1}]}"#,
            "/a/0/y",
            "Too many elements in numeric expression",
        ),
        (
            r#"{"a": [{"exists": null}]}"#,
            "/a/0/exists",
            "exists match pattern must be either true or false.",
        ),
        (
            r#"{"a": [{"exists": false, "y": 1}]}"#,
            "/a/0/y",
            "Only one key allowed in match expression",
        ),
        (
            r#"{"a": [{"wildcard": "a**", "y": 1}]}"#,
            "/a/0/wildcard",
            "Consecutive wildcard characters at pos 2",
        ),
        (
            r#"{"a": [{"equals-ignore-case": "x", "y": 1}]}"#,
            "/a/0/y",
            "Only one key allowed in match expression",
        ),
        (
            r#"{"a": [{"cidr": "10.0.0.0/33", "y": 1}]}"#,
            "/a/0/cidr",
            "IPv4 mask bits must be < 32",
        ),
        (
            r#"{"a~/b": [{"x": 1}]}"#,
            "/a~0~1b/0/x",
            "Unrecognized match type x",
        ),
        // The first error in document order wins.
        (
            r#"{"a": [{"prefix": 1}], "b": {}}"#,
            "/a/0/prefix",
            "prefix match pattern must be a string",
        ),
        (
            r#"{"b": {}, "a": [{"prefix": 1}]}"#,
            "/b",
            "Empty objects are not allowed",
        ),
        (
            r#"{"a": ["x", [1], {}]}"#,
            "/a/1",
            "Match value must be String, number, true, false, or null",
        ),
        (
            r#"{"$or": [{"a": [{}]}], "b": 1}"#,
            "/$or/0/a/0",
            "Match expression name not found",
        ),
    ];
    let mut failures = Vec::new();
    for &(pattern, pointer, message) in cases {
        let got = err(pattern);
        if got != (INVALID_PATTERN, pointer.to_owned(), message.to_owned()) {
            failures.push(format!(
                "{pattern}: expected {pointer} {message:?}, got {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // DECISION (EB-24): an empty nested anything-but list is invalid.
    for kind in ["prefix", "suffix", "equals-ignore-case", "wildcard"] {
        let message = invalid(&format!(
            r#"{{"a": [{{"anything-but": {{"{kind}": []}}}}]}}"#
        ));
        assert!(
            message.contains("anything-but") && message.contains("empty"),
            "{message}"
        );
    }
    // Outside `$or` the reserved names are ordinary.
    for name in ["prefix", "numeric", "=", "regex", "html", "anything-but"] {
        assert!(m(
            &format!(r#"{{"{name}": ["x"]}}"#),
            &format!(r#"{{"{name}": "x"}}"#)
        ));
    }
    // Inside `$or`, only EB-5's names are reserved (event-ruler's newer `html` is not in it).
    assert!(validate_text(r#"{"$or": [{"html": ["x"]}, {"b": ["y"]}]}"#).is_ok());
}

/// Patterns nest at most 128 levels (the pattern object is level 1), as the compiler reads
/// them; EB-34's 1,000 levels bound events. Deeper is `LIMIT_EXCEEDED` at the first container
/// too deep, before any other check.
#[test]
fn patterns_nest_at_most_128_levels() {
    let nested = |n: usize| format!("{}[\"x\"]{}", "{\"a\": ".repeat(n), "}".repeat(n));
    // 127 objects in the pattern object: the leaf array is level 128.
    assert!(validate_text(&nested(127)).is_ok());
    let (code, pointer, message) = err(&nested(128));
    assert_eq!(code, LIMIT_EXCEEDED);
    assert_eq!(pointer, "/a".repeat(128));
    assert!(message.contains("deeper than 128 levels"), "{message}");
    // A match expression at level 128, then 129.
    let expression = |n: usize| {
        format!(
            "{}[{{\"exists\": true}}]{}",
            "{\"a\": ".repeat(n),
            "}".repeat(n)
        )
    };
    assert!(validate_text(&expression(126)).is_ok());
    let (code, pointer, _) = err(&expression(127));
    assert_eq!(code, LIMIT_EXCEEDED);
    assert_eq!(pointer, format!("{}/0", "/a".repeat(127)));
    // The depth is checked first: an invalid member before the deep one does not hide it.
    let (code, _, _) = err(&format!("{{\"b\": 1, \"c\": {}}}", nested(200)));
    assert_eq!(code, LIMIT_EXCEEDED);
    // Far deeper (event-ruler would read it: 901 levels) is the same error.
    assert_eq!(err(&nested(900)).0, LIMIT_EXCEEDED);
}

#[test]
fn eb_32_at_most_256_paths_per_branch() {
    let fields = |range: std::ops::Range<usize>| {
        range
            .map(|i| format!("\"k{i}\": [\"v\"]"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert!(validate_text(&format!("{{{}}}", fields(0..256))).is_ok());
    let (code, _, message) = err(&format!("{{{}}}", fields(0..257)));
    assert_eq!(code, LIMIT_EXCEEDED);
    assert!(message.contains("exceeds max value of 256"), "{message}");
    // A repeated path counts once (EB-7).
    assert!(validate_text(&format!("{{{}, \"k0\": [\"w\"]}}", fields(0..256))).is_ok());
    // Per branch: 200 shared paths and an alternative with 57 more.
    let p = format!(
        "{{{}, \"$or\": [{{{}}}, {{\"x\": [\"1\"]}}]}}",
        fields(0..200),
        fields(200..257)
    );
    assert_eq!(err(&p).0, LIMIT_EXCEEDED);
    let p = format!(
        "{{{}, \"$or\": [{{{}}}, {{{}}}]}}",
        fields(0..200),
        fields(200..256),
        fields(300..356)
    );
    assert!(validate_text(&p).is_ok());
    // EB-31 errors come first, wherever they are.
    let p = format!("{{{}, \"z\": []}}", fields(0..300));
    assert_eq!(err(&p).0, INVALID_PATTERN);
}

#[test]
fn eb_33_wildcard_complexity() {
    assert_eq!(wildcard_complexity(&["*"]).unwrap(), 2);
    assert_eq!(wildcard_complexity(&["*a*b*"]).unwrap(), 4);
    assert_eq!(
        wildcard_complexity(&["/Users/*/dir/dir/dir/dir/dir/doc.txt"]).unwrap(),
        7
    );
    assert_eq!(wildcard_complexity(&["*:*:*:*:*:event-bus/*"]).unwrap(), 11);
    let too_complex = r#"{"a": [{"wildcard": "*:*:*:*:*:event-bus/*"}]}"#;
    let (code, _, message) = err(too_complex);
    assert_eq!(code, PATTERN_TOO_COMPLEX);
    assert!(message.starts_with("Rule is too complex"), "{message}");
    assert!(validate_text(r#"{"a": [{"wildcard": "*:*:*:*:event-bus/*"}]}"#).is_ok());
    // Per path, across branches: two operands on one path add up; on two paths they do not.
    let stack = |name: &str| format!("*:stack/{name}/*");
    let ops: Vec<String> = ["Shared", "Api", "Data", "Monitoring"].map(stack).to_vec();
    let p = format!(
        r#"{{"$or": [{{"s": [{{"wildcard": "{}"}}, {{"wildcard": "{}"}}]}}, {{"s": [{{"wildcard": "{}"}}, {{"wildcard": "{}"}}]}}]}}"#,
        ops[0], ops[1], ops[2], ops[3]
    );
    assert_eq!(err(&p).0, PATTERN_TOO_COMPLEX);
    let p = format!(
        r#"{{"s": [{{"wildcard": "{}"}}, {{"wildcard": "{}"}}], "t": [{{"wildcard": "{}"}}, {{"wildcard": "{}"}}]}}"#,
        ops[0], ops[1], ops[2], ops[3]
    );
    assert!(validate_text(&p).is_ok());
    // The same operand twice counts once; anything-but wildcards count too.
    let p = format!(
        r#"{{"s": [{{"wildcard": "{0}"}}, {{"wildcard": "{0}"}}, {{"wildcard": "{1}"}}, {{"anything-but": {{"wildcard": ["{2}", "{3}"]}}}}]}}"#,
        ops[0], ops[1], ops[2], ops[3]
    );
    assert_eq!(err(&p).0, PATTERN_TOO_COMPLEX);
    let p = format!(
        r#"{{"s": [{{"wildcard": "{0}"}}, {{"wildcard": "{0}"}}, {{"wildcard": "{1}"}}, {{"wildcard": "{2}"}}]}}"#,
        ops[0], ops[1], ops[2]
    );
    assert!(validate_text(&p).is_ok());
    // A leaf replaced in every branch (EB-7) is not in the pattern's machine.
    let p = r#"{"a": [{"wildcard": "*:*:*:*:*:event-bus/*"}], "a": ["x"]}"#;
    assert!(validate_text(p).is_ok());
}

/// The generator (`generate::eventbridge`) makes valid patterns and events that match about as
/// often as not, and the reference judges every pair.
#[test]
fn generated_patterns_are_valid_and_events_both_match_and_miss() {
    use filtervm_conformance::generate::{Rng, eventbridge as generator};
    let (mut matched, mut missed) = (0usize, 0usize);
    let mut features = std::collections::BTreeMap::<&str, usize>::new();
    const CASES: u64 = 3000;
    for seed in 1..=CASES {
        let mut rng = Rng::new(seed);
        let pattern = generator::pattern(&mut rng);
        if let Err(e) = check(&pattern) {
            panic!("seed {seed}: the pattern {pattern} is invalid: {e}");
        }
        // The text both engines read gives the same pattern back, repeated names included.
        assert_eq!(read(&pattern.to_string()).unwrap(), pattern, "seed {seed}");
        let text = pattern.to_string();
        for (feature, needle) in [
            ("$or", "\"$or\""),
            ("anything-but", "anything-but"),
            ("wildcard", "wildcard"),
            ("numeric", "\"numeric\":["),
            ("cidr", "\"cidr\":\""),
            ("exists:false", "\"exists\":false"),
            ("equals-ignore-case", "equals-ignore-case"),
        ] {
            if text.contains(needle) {
                *features.entry(feature).or_default() += 1;
            }
        }
        for _ in 0..3 {
            let event = generator::event(&mut rng, &pattern);
            assert!(event.is_object(), "seed {seed}");
            match evaluate(&Value::Null, &pattern, &event) {
                Ok(true) => matched += 1,
                Ok(false) => missed += 1,
                Err(e) => panic!("seed {seed}: {pattern} on {event}: {e}"),
            }
        }
    }
    let total = matched + missed;
    assert!(
        matched * 4 > total && missed * 4 > total,
        "{matched} matched, {missed} missed"
    );
    for (feature, n) in &features {
        assert!(
            *n as u64 > CASES / 50,
            "{feature} in only {n} patterns: {features:?}"
        );
    }
    assert_eq!(features.len(), 7, "{features:?}");
    eprintln!("{matched} matched, {missed} missed; {features:?}");
}

/// The fuzzer's source of choices gives valid patterns too, from the empty input up.
#[test]
fn generated_from_bytes_are_valid() {
    use filtervm_conformance::generate::{Bytes, Rng, Source, eventbridge as generator};
    let mut rng = Rng::new(7);
    for n in 0..300usize {
        let input: Vec<u8> = (0..n % 97).map(|_| rng.below(256) as u8).collect();
        let mut source = Bytes::new(&input);
        let pattern = generator::pattern(&mut source);
        check(&pattern).unwrap_or_else(|e| panic!("{input:?}: {pattern}: {e}"));
        let event = generator::event(&mut source, &pattern);
        evaluate(&Value::Null, &pattern, &event).unwrap_or_else(|e| panic!("{input:?}: {e}"));
    }
}

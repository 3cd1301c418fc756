//! Stream dialect rules S1-S14 (`docs/dialects/stream-filters.md`) through both engines: the
//! compiled program on the VM and the reference interpreter. Every match check runs the JSON form and the
//! canonical text form of the same filter.

// An integration-test crate: its helpers panic on purpose to fail the test that calls them.
#![allow(
    clippy::panic,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used
)]

use filtervm_compiler::dialect::stream;
use filtervm_compiler::{Dialect, ErrorCode};
use filtervm_conformance::reference;
use filtervm_conformance::runner::compile;

const CODE: ErrorCode = ErrorCode::StreamInvalidFilter;
const LIMIT_CODE: ErrorCode = ErrorCode::StreamLimitExceeded;
const PATTERN_CODE: ErrorCode = ErrorCode::StreamInvalidPattern;
const SYNTAX_CODE: ErrorCode = ErrorCode::StreamSyntaxError;
use filtervm_conformance::json;
use filtervm_conformance::reference::json::{Map, Value};

fn one(policy: &Value, message: &Value) -> bool {
    let filter = match compile(Dialect::Stream, policy, &Value::Null) {
        Ok(f) => f,
        Err(e) => panic!("{policy} rejected: {e}"),
    };
    let vm = match filtervm_conformance::runner::matches(&filter, message) {
        Ok(b) => b,
        Err(e) => panic!("{message}: {e}"),
    };
    let reference = match reference::evaluate(Dialect::Stream, &Value::Null, policy, message) {
        Ok(b) => b,
        Err(e) => panic!("reference failed on {policy}: {e}"),
    };
    assert_eq!(
        vm, reference,
        "VM and reference disagree: {policy} on {message}"
    );
    vm
}

/// Evaluates the policy (and its canonical text form) against headers; asserts both engines
/// agree with each other and with the text form, and returns the verdict.
fn eval(policy: &Value, headers: &[(&str, &str)]) -> bool {
    let mut h = Map::new();
    for (k, v) in headers {
        h.insert((*k).to_owned(), Value::String((*v).to_owned()));
    }
    let message = json!({ "headers": Value::Object(h) });
    let verdict = one(policy, &message);
    let product_form = filtervm_vm::json::parse(policy.to_string().as_bytes()).unwrap();
    let text = match stream::parse(&product_form) {
        Ok(f) => f.to_string(),
        Err(e) => panic!("{e}"),
    };
    let via_text = one(&Value::String(text.clone()), &message);
    assert_eq!(
        verdict, via_text,
        "text form {text:?} disagrees with {policy}"
    );
    verdict
}

fn clause(op: &str, header: &str, values: Value) -> Value {
    json!({"groups": [[{"op": op, "header": header, "values": values}]]})
}

fn eq(pattern: &str) -> Value {
    clause("=", "h", json!([pattern]))
}

fn yes(pattern: &str, values: &[&str]) {
    for v in values {
        assert!(
            eval(&eq(pattern), &[("h", v)]),
            "{pattern:?} should match {v:?}"
        );
    }
}

fn no(pattern: &str, values: &[&str]) {
    for v in values {
        assert!(
            !eval(&eq(pattern), &[("h", v)]),
            "{pattern:?} should not match {v:?}"
        );
    }
}

/// Asserts the policy is rejected with `code` at `pointer` (among its errors).
fn invalid(policy: &Value, code: ErrorCode, pointer: &str) {
    match compile(Dialect::Stream, policy, &Value::Null) {
        Ok(_) => panic!("{policy} accepted"),
        Err(e) => assert!(
            e.errors
                .iter()
                .any(|pe| pe.code == code && pe.pointer == pointer),
            "{policy}: expected {code} at {pointer}, got {e}"
        ),
    }
}

#[test]
fn seed_pattern_table() {
    yes("eu-*", &["eu-west", "eu-central"]);
    no("eu-*", &["us-east", "eu.west"]);
    yes("*-west", &["eu-west", "us-west"]);
    no("*-west", &["eu-west-1"]);
    yes("orders.*.created", &["orders.eu.created"]);
    no(
        "orders.*.created",
        &["orders.created", "orders.eu.west.created"],
    );
    yes("orders.**", &["orders", "orders.eu", "orders.eu.created"]);
    no("orders.**", &["billing.orders"]);
    yes("**.created", &["created", "orders.eu.created"]);
    no("**.created", &["orders.created.v2"]);
    yes(
        "orders.**.created",
        &["orders.created", "orders.eu.west.created"],
    );
    no("orders.**.created", &["orders.eu.updated"]);
    // The dot change.
    no("orders.*", &["orders.eu.created"]);
    yes("**", &["", "a.b.c"]);
}

#[test]
fn seed_pattern_errors_point_at_the_new_rules() {
    for (p, code) in [
        ("a*b*c", PATTERN_CODE),
        ("eu-*-*", PATTERN_CODE),
        ("**.orders.**", PATTERN_CODE),
        ("orders.**x", PATTERN_CODE),
    ] {
        invalid(&eq(p), code, "/groups/0/0/values/0");
        let e = compile(Dialect::Stream, &eq(p), &Value::Null).err();
        let msg = e.and_then(|e| e.errors.first().map(|pe| pe.message.clone()));
        assert!(
            msg.is_some_and(|m| m.contains("stream rule") && m.contains("orders.**")),
            "{p}"
        );
    }
}

#[test]
fn s1_segments_split_on_ascii_dot_only() {
    yes("a..b", &["a..b"]);
    no("a..b", &["a.b"]);
    yes("*", &["a\u{3002}b", "a\u{ff0e}b"]);
    no("*.*", &["a\u{3002}b"]);
    yes(".", &["."]);
    no(".", &[""]);
    yes("*.*.*", &["a..b", ".."]);
}

#[test]
fn s2_whole_segment_star() {
    yes("a.*.b", &["a..b", "a.x.b"]);
    no("a.*.b", &["a.b", "a.x.y.b"]);
    yes("*", &["", "x"]);
    yes("*.*", &["."]);
    no("*", &["."]);
}

#[test]
fn s3_in_segment_star() {
    yes("eu-*", &["eu-"]);
    yes("*-west", &["-west"]);
    yes("eu-*-1", &["eu--1"]);
    no("eu-*-1", &["eu-1"]);
    no("a*a", &["a"]);
    yes("a*a", &["aa"]);
}

#[test]
fn s4_double_star() {
    yes("orders.**", &["orders.", "orders.."]);
    yes("**.", &["", "a."]);
    no("**.", &["a"]);
    yes(".**", &[".a"]);
    no(".**", &["a"]);
    yes("*.**", &[""]);
    no("a.**.a", &["a"]);
}

#[test]
fn s5_empty_pattern() {
    yes("", &[""]);
    no("", &[".", " "]);
    assert!(!eval(&eq(""), &[]), "`=` still needs the header");
    assert!(eval(&clause("in", "h", json!(["", "x"])), &[("h", "")]));
    assert!(!eval(&clause("!=", "h", json!([""])), &[("h", "")]));
    assert!(eval(&clause("!=", "h", json!([""])), &[("h", "x")]));
}

#[test]
fn s6_no_other_metacharacters_and_no_escapes() {
    yes("a\\*", &["a\\", "a\\x"]);
    no("a\\*", &["a*", "a"]);
    yes("a?c", &["a?c"]);
    no("a?c", &["abc"]);
    yes("[ab]", &["[ab]"]);
    no("[ab]", &["a"]);
    yes("x*", &["x*"]);
    yes("*", &["*"]);
}

#[test]
fn s7_exact_comparison_and_byte_limit() {
    no("caf\u{e9}", &["cafe\u{301}", "CAF\u{c9}"]);
    yes("caf\u{e9}", &["caf\u{e9}"]);
    no("Eu-*", &["eu-west"]);
    yes(&"\u{e9}".repeat(128), &[&"\u{e9}".repeat(128)]);
    invalid(
        &eq(&"\u{e9}".repeat(129)),
        LIMIT_CODE,
        "/groups/0/0/values/0",
    );
    invalid(
        &eq(&"\u{20ac}".repeat(100)),
        LIMIT_CODE,
        "/groups/0/0/values/0",
    );
}

#[test]
fn s8_header_names() {
    let p = clause("=", "Region", json!(["eu"]));
    assert!(eval(&p, &[("Region", "eu")]));
    assert!(!eval(&p, &[("region", "eu")]));
    assert!(eval(&clause("exists", "a.b", json!([])), &[("a.b", "x")]));
    assert!(!eval(&clause("exists", "a.b", json!([])), &[("a", "b")]));
    invalid(&clause("exists", "", json!([])), CODE, "/groups/0/0/header");
    invalid(
        &json!({"groups": [[{"op": "exists"}]]}),
        CODE,
        "/groups/0/0",
    );
    invalid(&json!({"groups": [[{"header": "h"}]]}), CODE, "/groups/0/0");
    invalid(
        &json!({"groups": [[{"op": "exists", "header": 5}]]}),
        CODE,
        "/groups/0/0/header",
    );
    invalid(
        &json!({"groups": [[{"op": "exists", "header": "h", "value": ["x"]}]]}),
        CODE,
        "/groups/0/0/value",
    );
    invalid(
        &json!({"groups": [[{"op": "exists", "header": "h"}]], "extra": 1}),
        CODE,
        "/extra",
    );
    invalid(&clause("=", "h", json!("x")), CODE, "/groups/0/0/values");
}

#[test]
fn s9_numeric_syntax_and_comparison() {
    let ge5 = clause(">=", "n", json!([5]));
    for v in ["5", "5.0", "50e-1", "1e3", "1E3", "1e+3", "6"] {
        assert!(eval(&ge5, &[("n", v)]), "{v}");
    }
    for v in [
        " 5", "5 ", "\t5", "5\n", "+5", ".5", "5.", "05", "00", "0x10", "1_000", "1,000",
        "\u{665}", "NaN", "inf", "Infinity", "-inf", "", "-", "1e", "e3", "--5", "1.2.3", "1e400",
    ] {
        assert!(!eval(&ge5, &[("n", v)]), "{v:?} does not parse");
    }
    assert!(!eval(&clause("<", "n", json!([0])), &[("n", "-1e400")]));
    assert!(eval(&clause("<=", "n", json!([0])), &[("n", "-0")]));
    assert!(!eval(&clause("<", "n", json!([0])), &[("n", "-0")]));
    assert!(!eval(
        &clause(">", "n", json!([9007199254740992u64])),
        &[("n", "9007199254740993")]
    ));
    assert!(eval(&clause("<=", "n", json!([5])), &[("n", "5")]));
    assert!(!eval(&clause("<", "n", json!([5])), &[("n", "5")]));
    assert!(eval(&clause(">", "n", json!([-2.5])), &[("n", "-2")]));
    assert!(eval(&clause("<", "n", json!([1e3])), &[("n", "999.9")]));
    // A numeric clause on a missing header never matches.
    assert!(!eval(&ge5, &[]));
    let huge: Value = match filtervm_conformance::reference::json::parse(
        r#"{"groups": [[{"op": "<", "header": "n", "values": [1e400]}]]}"#,
    ) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    };
    invalid(&huge, CODE, "/groups/0/0/values/0");
}

#[test]
fn s10_operand_types() {
    for (op, values, at) in [
        ("=", json!([5]), "/groups/0/0/values/0"),
        ("!=", json!([true]), "/groups/0/0/values/0"),
        ("in", json!(["a", 5]), "/groups/0/0/values/1"),
        ("=", json!(["a", "b"]), "/groups/0/0/values"),
        ("=", json!([]), "/groups/0/0/values"),
        ("<", json!(["5"]), "/groups/0/0/values/0"),
        ("<=", json!([null]), "/groups/0/0/values/0"),
        (">", json!([true]), "/groups/0/0/values/0"),
        (">=", json!([1, 2]), "/groups/0/0/values"),
        ("exists", json!(["x"]), "/groups/0/0/values"),
        ("missing", json!([""]), "/groups/0/0/values"),
    ] {
        invalid(&clause(op, "h", values), CODE, at);
    }
    invalid(
        &json!({"groups": [[{"op": "=", "header": "h"}]]}),
        CODE,
        "/groups/0/0",
    );
    // `values` may be absent or [] for exists/missing.
    assert!(eval(
        &json!({"groups": [[{"op": "exists", "header": "h"}]]}),
        &[("h", "")]
    ));
    assert!(eval(&clause("missing", "h", json!([])), &[]));
    assert!(!eval(&clause("missing", "h", json!([])), &[("h", "")]));
}

#[test]
fn s11_in_lists() {
    invalid(&clause("in", "h", json!([])), CODE, "/groups/0/0/values");
    let v32: Vec<String> = (1..=32).map(|i| format!("v{i}")).collect();
    assert!(eval(&clause("in", "k", json!(v32)), &[("k", "v32")]));
    let v33: Vec<String> = (1..=33).map(|i| format!("v{i}")).collect();
    invalid(
        &clause("in", "k", json!(v33)),
        LIMIT_CODE,
        "/groups/0/0/values/32",
    );
    assert!(eval(&clause("in", "h", json!(["a", "a"])), &[("h", "a")]));
    invalid(
        &clause("in", "h", json!(["ok", "a*b*"])),
        PATTERN_CODE,
        "/groups/0/0/values/1",
    );
    // Even `**` needs the header present.
    assert!(!eval(&clause("in", "h", json!(["**"])), &[]));
    assert!(eval(&clause("in", "h", json!(["**"])), &[("h", "")]));
    assert!(eval(
        &clause("in", "h", json!(["x", "eu-*", "a.**"])),
        &[("h", "a.b.c")]
    ));
    assert!(!eval(
        &clause("in", "h", json!(["x", "eu-*", "a.**"])),
        &[("h", "b")]
    ));
}

#[test]
fn s12_empty_structure() {
    invalid(&json!({"groups": []}), CODE, "/groups");
    invalid(
        &json!({"groups": [[{"op": "exists", "header": "h"}], []]}),
        CODE,
        "/groups/1",
    );
    invalid(&json!({}), CODE, "");
    invalid(&json!({"groups": {}}), CODE, "/groups");
    invalid(&json!([]), CODE, "");
    invalid(&json!(""), CODE, "bytes 0..0");
}

#[test]
fn s13_operator_names_are_exact() {
    for op in ["IN", "==", "contains", "EXISTS", "=~", ""] {
        invalid(&clause(op, "h", json!(["x"])), CODE, "/groups/0/0/op");
    }
    invalid(
        &json!({"groups": [[{"op": 1, "header": "h"}]]}),
        CODE,
        "/groups/0/0/op",
    );
}

#[test]
fn s14_counting_as_written() {
    let c = json!({"op": "exists", "header": "h"});
    let nine_groups = json!({"groups": vec![json!([c.clone()]); 9]});
    invalid(&nine_groups, LIMIT_CODE, "/groups/8");
    let nine_clauses = json!({"groups": [vec![c.clone(); 9]]});
    invalid(&nine_clauses, LIMIT_CODE, "/groups/0/8");
    invalid(
        &clause("in", "h", json!(vec!["a"; 33])),
        LIMIT_CODE,
        "/groups/0/0/values/32",
    );
    let eight = json!({"groups": vec![json!(vec![c.clone(); 8]); 8]});
    assert!(eval(&eight, &[("h", "x")]));
}

#[test]
fn seed_clause_kinds_and_groups() {
    // `!=` matches when the header is missing.
    let ne = clause("!=", "region", json!(["eu-*"]));
    assert!(eval(&ne, &[("tier", "gold")]));
    assert!(eval(&ne, &[("region", "us-east")]));
    assert!(!eval(&ne, &[("region", "eu-west")]));
    // Groups are ORed, clauses ANDed; every kind of clause counts toward the 8.
    let p = json!({"groups": [
        [{"op": "=", "header": "subject", "values": ["orders.**"]},
         {"op": ">=", "header": "priority", "values": [5]}],
        [{"op": "=", "header": "subject", "values": ["billing.**"]},
         {"op": "missing", "header": "test"}]
    ]});
    assert!(eval(
        &p,
        &[("subject", "orders.eu.created"), ("priority", "7")]
    ));
    assert!(!eval(
        &p,
        &[("subject", "orders.eu.created"), ("priority", "2")]
    ));
    assert!(eval(&p, &[("subject", "billing.invoice")]));
    assert!(!eval(&p, &[("subject", "billing.invoice"), ("test", "1")]));
    let all_kinds = json!({"groups": [[
        {"op": "=", "header": "a", "values": ["x.*"]},
        {"op": "!=", "header": "b", "values": ["y"]},
        {"op": "in", "header": "c", "values": ["1", "2.**"]},
        {"op": "exists", "header": "d"},
        {"op": "missing", "header": "e"},
        {"op": "<", "header": "f", "values": [10]},
        {"op": ">", "header": "g", "values": [0]},
        {"op": "<=", "header": "h", "values": [1e3]}
    ]]});
    let m = [
        ("a", "x.1"),
        ("c", "2.x"),
        ("d", ""),
        ("f", "9.5"),
        ("g", "1e-3"),
        ("h", "1000"),
    ];
    assert!(eval(&all_kinds, &m));
    assert!(!eval(
        &all_kinds,
        &[("a", "x.1"), ("b", "y"), ("c", "2.x"), ("d", "")]
    ));
}

#[test]
fn text_form_errors_carry_byte_spans() {
    let cases = [
        ("region = eu-* and", SYNTAX_CODE, "bytes 17..17"),
        ("region == eu", SYNTAX_CODE, "bytes 8..9"),
        ("region = caf\u{e9}", SYNTAX_CODE, "bytes 12..14"),
        ("region = \"eu", SYNTAX_CODE, "bytes 9..12"),
        ("region = a*b*", PATTERN_CODE, "bytes 9..13"),
        ("n < 1e400", CODE, "bytes 4..9"),
        ("\"\" exists", CODE, "bytes 0..2"),
        ("h in []", CODE, "bytes 5..7"),
        ("h IN [a]", SYNTAX_CODE, "bytes 2..4"),
    ];
    for (text, code, at) in cases {
        invalid(&json!(text), code, at);
    }
}

#[test]
fn text_form_and_json_form_are_one_filter() {
    let text = "region = eu-* and subject = orders.*.created or priority >= 5";
    let json_form = json!({"groups": [
        [{"op": "=", "header": "region", "values": ["eu-*"]},
         {"op": "=", "header": "subject", "values": ["orders.*.created"]}],
        [{"op": ">=", "header": "priority", "values": [5]}]
    ]});
    let a = compile(Dialect::Stream, &json!(text), &Value::Null);
    let b = compile(Dialect::Stream, &json_form, &Value::Null);
    match (a, b) {
        (Ok(a), Ok(b)) => assert_eq!(a.ir().unwrap().to_string(), b.ir().unwrap().to_string()),
        (a, b) => panic!("{:?} {:?}", a.err(), b.err()),
    }
    for headers in [
        vec![("region", "eu-west"), ("subject", "orders.x.created")],
        vec![("priority", "5")],
        vec![("region", "eu-west")],
    ] {
        assert_eq!(eval(&json!(text), &headers), eval(&json_form, &headers));
    }
}

/// A tiny deterministic PRNG (xorshift64).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn random_string(rng: &mut XorShift, alphabet: &[&str], max: usize) -> String {
    let len = rng.below(max + 1);
    (0..len).map(|_| rng.pick(alphabet)).collect()
}

fn random_pattern(rng: &mut XorShift) -> String {
    loop {
        let p = random_string(rng, &["a", "b", ".", "*", "*", "-"], 8);
        if filtervm_vm::pattern::SegmentPattern::compile(&p).is_ok() {
            return p;
        }
    }
}

#[test]
fn differential_random_filters_vm_vs_reference() {
    let mut rng = XorShift(0xDEAD_BEEF_1234_5678);
    let numbers = [
        "5",
        "-0",
        "0",
        "1e3",
        "2.5",
        "-7",
        "05",
        " 5",
        "abc",
        "",
        "1e400",
        "9007199254740993",
    ];
    for case in 0..3000 {
        let groups: Vec<Value> = (0..1 + rng.below(3))
            .map(|_| {
                let clauses: Vec<Value> = (0..1 + rng.below(3))
                    .map(|_| {
                        let header = rng.pick(&["h", "k"]);
                        match rng.below(9) {
                            0 => json!({"op": "=", "header": header, "values": [random_pattern(&mut rng)]}),
                            1 => json!({"op": "!=", "header": header, "values": [random_pattern(&mut rng)]}),
                            2 => {
                                let n = 1 + rng.below(3);
                                let ps: Vec<String> = (0..n).map(|_| random_pattern(&mut rng)).collect();
                                json!({"op": "in", "header": header, "values": ps})
                            }
                            3 => json!({"op": "exists", "header": header}),
                            4 => json!({"op": "missing", "header": header}),
                            k => {
                                let op = ["<", "<=", ">", ">="][k - 5];
                                let bound = [0.0, 5.0, -0.0, 1000.0, 2.5, -7.0, 9007199254740992.0][rng.below(7)];
                                json!({"op": op, "header": header, "values": [bound]})
                            }
                        }
                    })
                    .collect();
                Value::Array(clauses)
            })
            .collect();
        let policy = json!({ "groups": groups });
        let mut headers = Vec::new();
        let values: Vec<String> = (0..2)
            .map(|_| {
                if rng.below(3) == 0 {
                    rng.pick(&numbers).to_owned()
                } else {
                    random_string(&mut rng, &["a", "b", ".", "-", "*"], 8)
                }
            })
            .collect();
        if rng.below(4) != 0 {
            headers.push(("h", values[0].as_str()));
        }
        if rng.below(4) != 0 {
            headers.push(("k", values[1].as_str()));
        }
        // `eval` asserts the VM, the reference and the text form agree.
        let _ = (case, eval(&policy, &headers));
    }
}

//! Hostile input: huge lines, many attributes, deep nesting, every limit and one past
//! it, a 10,000-star wildcard against a 1 MB value, numbers with 10,000 digits. Each gets a clear
//! error (with a code) or a correct answer, within a time bound. Where the reference interpreter
//! can answer in reasonable time, the VM's answer is also checked against it.
//!
//! The whole file runs in seconds in debug mode; the 100 MB line is `#[ignore]`d here (it runs
//! in `cli/tests/cli.rs` through the CLI too) and runs in release mode in `.ci/run`:
//! `cargo test --release -p filtervm-conformance --test hostile -- --ignored`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{
    CompileError, Dialect, ErrorCode, Evaluator, Filter, Options, SnsScope, compile_text,
};
use filtervm_conformance::growth::assert_linear;
use filtervm_conformance::json;
use filtervm_conformance::reference;
use filtervm_conformance::reference::json::{Map, Value};
use filtervm_conformance::runner::{compile, product_message};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};

/// The system allocator, counting the current thread's allocations (for the test that matching
/// a stream allocates nothing once warm; tests run on several threads).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

#[expect(
    unsafe_code,
    reason = "a global allocator is an unsafe trait; this one forwards"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// Once warm, matching a stream of messages allocates nothing: raw JSON bytes (SNS bodies, Event
/// Grid events), borrowed attributes and headers, one filter at a time, and a subscription set of
/// mixed dialects (a body, an event, attribute and header groups) read through a live set's
/// snapshot.
#[test]
fn matching_a_stream_allocates_nothing_once_warm() {
    use filtervm_compiler::{LiveSet, MessageParts, SetScratch, SubscriptionSet};
    use filtervm_vm::message::AttributeType;
    let sns_body = compiles(
        Dialect::Sns,
        &json!({"event": ["order.paid"], "items": {"sku": [{"prefix": "a"}]}}),
        &body(),
    );
    let event = compiles(
        Dialect::EventGrid,
        &json!({"subjectBeginsWith": "/a", "advancedFilters": [
            {"operatorType": "NumberIn", "key": "data.n", "values": [1, 2, 3]}]}),
        &Value::Null,
    );
    let attributes = compiles(
        Dialect::Basaltic,
        &json!({"event": ["order.paid"], "amount": [{"numeric": [">", 1]}]}),
        &Value::Null,
    );
    // expr: the headers below repeat a name (a header of two values), which expr reads and a
    // stream filter refuses.
    let headers = compiles(
        Dialect::Expr,
        &json!({"op": "AND", "exp": [
            {"key": "region", "op": "startsWith", "value": "eu-"},
            {"key": "event", "op": "in", "value": ["order.paid", "x"]}]}),
        &Value::Null,
    );
    let mut set = SubscriptionSet::new();
    for i in 0..200u64 {
        let policy = json!({"event": [format!("e{}", i % 20)], "n": [{"numeric": [">", i % 7]}]});
        set.insert(
            format!("body-{i}"),
            &compiles(Dialect::Sns, &policy, &body()),
        )
        .unwrap();
    }
    for (id, filter) in [
        ("event", &event),
        ("attributes", &attributes),
        ("headers", &headers),
    ] {
        set.insert(id.to_owned(), filter).unwrap();
    }
    let live = LiveSet::from(set);
    let bodies: Vec<String> = (0..40)
        .map(|i| {
            format!(
                r#"{{"event": "e{}", "n": {}, "items": [{{"sku": "a{i}"}}, {{"sku": "b"}}], "deep": [[[{{"x": "\ud800"}}]]]}}"#,
                i % 20,
                i % 9
            )
        })
        .collect();
    let events: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"subject": "/a/{i}", "data": {{"n": {}}}}}"#, i % 4))
        .collect();
    let attrs = [
        ("event", AttributeType::String, "order.paid"),
        ("amount", AttributeType::Number, "2"),
    ];
    let pairs = [
        ("region", "eu-west"),
        ("event", "order.paid"),
        ("event", "x"),
    ];
    let mut evaluator = Evaluator::new();
    let mut scratch = SetScratch::new();
    let mut run = || {
        let mut n = 0usize;
        for (b, e) in bodies.iter().zip(&events) {
            n += usize::from(evaluator.matches_bytes(&sns_body, b.as_bytes()).unwrap());
            n += usize::from(evaluator.try_matches_bytes(&event, e.as_bytes()).unwrap());
            n += usize::from(evaluator.matches_attributes(&attributes, &attrs));
            n += usize::from(evaluator.matches_headers(&headers, &pairs[..]));
            let parts = MessageParts::body(b.as_bytes())
                .with_attributes(&attrs[..])
                .with_headers(&pairs[..]);
            let set = live.load();
            let matches = set.try_matching(&mut scratch, &parts).unwrap();
            n += matches.len() + matches.ids().filter(|id| id.len() < 6).count();
        }
        n
    };
    let warm = run();
    assert!(warm > 100, "{warm}");
    assert_eq!(allocations(|| assert_eq!(run(), warm)), 0);
    // The counter counts.
    assert!(allocations(|| drop(vec![1u8])) > 0);
}

/// Generous: debug builds on a loaded two-core machine.
const BOUND: Duration = Duration::from_secs(20);

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < BOUND, "{what} took {took:?}");
    out
}

fn compiles(dialect: Dialect, policy: &Value, options: &Value) -> Filter {
    compile(dialect, policy, options).unwrap_or_else(|e| {
        panic!(
            "{dialect} policy rejected: {e}\n{:.300}",
            policy.to_string()
        )
    })
}

fn rejected(dialect: Dialect, policy: &Value, options: &Value, code: ErrorCode) -> CompileError {
    match compile(dialect, policy, options) {
        Ok(_) => panic!("{dialect} policy accepted, expected {code}"),
        Err(e) => {
            assert!(
                e.errors.iter().any(|x| x.code == code),
                "expected {code}, got {e}"
            );
            e
        }
    }
}

/// The VM's verdict on a vector-shaped message, read from its text (every number as written).
fn vm(filter: &Filter, message: &Value) -> bool {
    filtervm_conformance::runner::matches(filter, message)
        .unwrap_or_else(|e| panic!("message rejected: {e}"))
}

/// The VM's verdict, checked against the reference's.
fn both(dialect: Dialect, options: &Value, policy: &Value, message: &Value) -> bool {
    let filter = compiles(dialect, policy, options);
    let verdict = vm(&filter, message);
    let expected = reference::evaluate(dialect, options, policy, message)
        .unwrap_or_else(|e| panic!("the reference failed: {e}"));
    assert_eq!(verdict, expected, "VM versus reference on {policy}");
    verdict
}

fn body() -> Value {
    json!({"scope": "MessageBody"})
}

fn body_options() -> Options {
    Options::from(SnsScope::MessageBody)
}

// ---------------------------------------------------------------------------------------------
// A 100 MB message line

fn big_line_case(mb: usize) {
    let value = "a".repeat(mb << 20);
    let line = format!(r#"{{"headers": {{"k": "{value}", "z": "end"}}}}"#);
    let policy = json!({"op": "AND", "exp": [
        {"key": "k", "op": "endsWith", "value": "aaa"},
        {"key": "z", "op": "in", "value": ["end"]}
    ]});
    let filter = compiles(Dialect::Expr, &policy, &Value::Null);
    let matched = timed("a big line", || {
        let message = filtervm_compiler::message_from_line(
            Dialect::Expr,
            &Options::from(Dialect::Expr),
            &line,
        )
        .expect("a big line is a message");
        Evaluator::new().matches(&filter, &message)
    });
    assert!(matched);
    // The same size in an SNS body: read once, only the paths the policy names are bound.
    let body_line = format!(r#"{{"big": "{value}", "a": {{"b": 5}}}}"#);
    let filter = compiles(
        Dialect::Sns,
        &json!({"a": {"b": [{"numeric": [">", 4]}]}}),
        &body(),
    );
    let matched = timed("a big body", || {
        let message =
            filtervm_compiler::message_from_line(Dialect::Sns, &body_options(), &body_line)
                .expect("a body line is a message");
        Evaluator::new().matches(&filter, &message)
    });
    assert!(matched);
}

#[test]
fn big_line_8_mb() {
    big_line_case(8);
}

#[test]
#[ignore = "100 MB: run in release (cargo test --release ... -- --ignored)"]
fn big_line_100_mb() {
    big_line_case(100);
}

// ---------------------------------------------------------------------------------------------
// 100,000 attributes / headers

#[test]
fn a_hundred_thousand_attributes() {
    const N: usize = 100_000;
    let mut sns = Map::new();
    let mut basaltic = Map::new();
    let mut headers = Map::new();
    for i in 0..N {
        let name = format!("attr{i}");
        sns.insert(
            name.clone(),
            json!({"Type": "Number", "Value": i.to_string()}),
        );
        basaltic.insert(
            name.clone(),
            json!({"type": "Number", "value": i.to_string()}),
        );
        headers.insert(name, json!(i.to_string()));
    }
    let sns_message = json!({ "attributes": sns });
    let last = format!("attr{}", N - 1);
    let sns_policy = json!({
        last.clone(): [{"numeric": [">=", 99_999]}],
        "attr0": [0],
        "missing": [{"exists": false}]
    });
    let f = compiles(Dialect::Sns, &sns_policy, &Value::Null);
    assert!(timed("sns, 100,000 attributes", || vm(&f, &sns_message)));
    let f = compiles(
        Dialect::Sns,
        &json!({ last.clone(): [{"numeric": ["<", 5]}] }),
        &Value::Null,
    );
    assert!(!timed("sns, 100,000 attributes", || vm(&f, &sns_message)));

    let basaltic_message = json!({ "attributes": basaltic });
    let f = compiles(
        Dialect::Basaltic,
        &json!({ last.clone(): ["99999"], "attr5": [{"numeric": ["=", 5]}] }),
        &Value::Null,
    );
    assert!(timed("basaltic, 100,000 attributes", || vm(
        &f,
        &basaltic_message
    )));

    let header_message = json!({ "headers": headers });
    let f = compiles(
        Dialect::Expr,
        &json!({"op": "AND", "exp": [
            {"key": last.clone(), "op": "startsWith", "value": "999"},
            {"key": "attr0", "value": ["0"]}
        ]}),
        &Value::Null,
    );
    assert!(timed("expr, 100,000 headers", || vm(&f, &header_message)));
    let f = compiles(
        Dialect::Stream,
        &Value::String(format!("{last} >= 99999 and attr7 = 7 and nope missing")),
        &Value::Null,
    );
    assert!(timed("stream, 100,000 headers", || vm(&f, &header_message)));
}

// ---------------------------------------------------------------------------------------------
// sns rule 18 on a body whose arrays of objects multiply: an answer, or a clear error

#[test]
fn arrays_of_objects_that_multiply() {
    // Three sibling arrays of 200 objects: 8,000,000 combinations of elements from a 20 KB
    // body, far more rows than the binder allows.
    let list = |name: &str| {
        let items: Vec<String> = (0..200).map(|i| format!(r#"{{"{name}":{i}}}"#)).collect();
        format!("[{}]", items.join(","))
    };
    let text = format!(
        r#"{{"a":{},"b":{},"c":{}}}"#,
        list("x"),
        list("y"),
        list("z")
    );
    let policy =
        json!({"a": {"x": [199]}, "b": {"y": [199]}, "c": {"z": [{"numeric": [">", 198]}]}});
    let filter = compiles(Dialect::Sns, &policy, &body());
    let message =
        filtervm_compiler::message_from_line(Dialect::Sns, &body_options(), &text).unwrap();
    let mut evaluator = Evaluator::new();
    let result = timed("a body of 8,000,000 element combinations", || {
        evaluator.try_matches(&filter, &message)
    });
    match result {
        Ok(verdict) => assert!(verdict),
        // Too complex to judge element by element: a clear error, and no silent match.
        Err(e) => {
            assert_eq!(e.code, ErrorCode::MessageTooComplex, "{e}");
            assert!(!evaluator.matches(&filter, &message));
        }
    }
    // A body with fewer combinations (10 × 10 × 10) gets the reference's answer.
    let small = json!({"a": (0..10).map(|i| json!({"x": i, "b": (0..10).map(|j| json!({"y": j, "c": (0..10).map(|k| json!({"z": k})).collect::<Vec<_>>()})).collect::<Vec<_>>()})).collect::<Vec<_>>()});
    let small_policy = json!({"a": {"x": [9], "b": {"y": [8], "c": {"z": [7]}}}});
    assert!(both(
        Dialect::Sns,
        &body(),
        &small_policy,
        &json!({"body": small.to_string()})
    ));
    let crossed = json!({"a": {"x": [9], "b": {"y": [8], "c": {"z": [70]}}}});
    assert!(!both(
        Dialect::Sns,
        &body(),
        &crossed,
        &json!({"body": small.to_string()})
    ));
}

// ---------------------------------------------------------------------------------------------
// Keys of 50,000 segments

#[test]
fn keys_of_fifty_thousand_segments() {
    let path = vec!["a"; 50_000].join(".");
    // An event nested as deep as serde_json reads (128), under a 50,000-segment key: undefined.
    let deep = reference::json::parse(&format!(
        "{{\"data\":{}1{}}}",
        r#"{"a":"#.repeat(100),
        "}".repeat(100)
    ))
    .unwrap();
    let policy = json!({"advancedFilters": [
        {"operatorType": "IsNullOrUndefined", "key": format!("data.{path}")},
        {"operatorType": "NumberIn", "key": format!("data.{}", vec!["a"; 100].join(".")), "values": [1]}
    ]});
    assert!(timed("a 50,000-segment Event Grid key", || both(
        Dialect::EventGrid,
        &Value::Null,
        &policy,
        &deep
    )));
    // sns body scope: a dotted policy name (rule 16) against a body of dotted names and nesting.
    let policy = json!({ path.clone(): [{"exists": false}], "b": ["x"] });
    let body_text = format!(r#"{{"a.a": {{"a": {{"a.a.a": 1}}}}, "b": "x", "{path}": null}}"#);
    let message = json!({ "body": body_text });
    let filter = compiles(Dialect::Sns, &policy, &body());
    let got = timed("a 50,000-segment sns key", || vm(&filter, &message));
    let expected = reference::evaluate(Dialect::Sns, &body(), &policy, &message).unwrap();
    assert_eq!(got, expected);
    // stream and expr: a 100 KB header name.
    let message = json!({"headers": { path.clone(): path.clone() }});
    let policy = json!({"groups": [[{"op": "=", "header": path.clone(), "values": ["a.*.**"]}]]});
    assert!(both(Dialect::Stream, &Value::Null, &policy, &message));
    let policy = json!({"key": path.clone(), "op": "endsWith", "value": "a.a"});
    assert!(both(Dialect::Expr, &Value::Null, &policy, &message));
}

// ---------------------------------------------------------------------------------------------
// Nesting 100,000 levels

fn nested(depth: usize, inner: &str) -> String {
    let mut s = String::with_capacity(depth * 7 + inner.len());
    for _ in 0..depth {
        s.push_str(r#"{"a":"#);
    }
    s.push_str(inner);
    for _ in 0..depth {
        s.push('}');
    }
    s
}

#[test]
fn body_nested_a_hundred_thousand_levels() {
    let deep = nested(100_000, "1");
    // SNS body scope: the body is JSON, read at any depth without recursion; `a.a` is an object,
    // not a leaf (rule 19), so `exists: true` does not hold — and `{}` matches (D-2).
    let policy = json!({"a": {"a": [{"exists": true}]}});
    let filter = compiles(Dialect::Sns, &policy, &body());
    let message = json!({ "body": deep });
    assert!(!timed("a deep body", || vm(&filter, &message)));
    let anything = compiles(Dialect::Sns, &json!({}), &body());
    assert!(vm(&anything, &message));
    let line_message = filtervm_compiler::message_from_line(Dialect::Sns, &body_options(), &deep)
        .expect("a body line");
    assert_eq!(
        Evaluator::new().try_matches(&filter, &line_message),
        Ok(false),
        "judged, not reported"
    );
    // An Event Grid event is read from its bytes too: judged (not an event with a subject).
    let eventgrid = compiles(
        Dialect::EventGrid,
        &json!({"subjectBeginsWith": "a"}),
        &Value::Null,
    );
    let event = filtervm_compiler::message_from_line(
        Dialect::EventGrid,
        &Options::from(Dialect::EventGrid),
        &deep,
    )
    .expect("a deep event is JSON");
    assert_eq!(Evaluator::new().try_matches(&eventgrid, &event), Ok(false));
    // The other dialects read only the line's `attributes` or `headers` member, skipping the
    // rest at any depth without recursion: the line has neither. `match` reads it as a body,
    // which these filters cannot read: a clear error.
    for dialect in [
        Dialect::Expr,
        Dialect::Stream,
        Dialect::Basaltic,
        Dialect::Sns,
    ] {
        let options = Options::from(dialect);
        let result = timed("a deep line", || {
            filtervm_compiler::message_from_line(dialect, &options, &deep)
        });
        assert!(
            matches!(result, Ok(filtervm_vm::message::Message::Attributes(ref a)) if a.is_empty())
                || matches!(result, Ok(filtervm_vm::message::Message::Headers(ref h)) if h.is_empty()),
            "{dialect}: {result:?}"
        );
        let read = timed("a deep line, as match reads it", || {
            filtervm_compiler::read_messages(deep.as_bytes(), &options).map(|mut m| {
                m.next()
                    .map(|m| m.parts().has(filtervm_compiler::MessagePart::of(&options)))
            })
        });
        assert_eq!(read, Ok(Some(false)), "{dialect}");
    }
}

/// Valid SNS bodies are judged whatever they hold where no policy reads: a member nested 200 or
/// 100,000 levels deep, or a lone surrogate escape (`"\ud800"`) in an unrelated string, used to
/// make the whole body "not JSON" (serde_json's limits), silently matching nothing. Through the
/// vector shape, the raw bytes and the message reader of `filtervm match` (whose CLI test is in
/// `cli/tests/cli.rs`), a policy on another member matches. An Event Grid event likewise.
#[test]
fn deep_or_lone_surrogate_members_nobody_reads_do_not_stop_a_match() {
    let deep = |depth: usize| {
        format!(
            r#"{{"other": {}1{}, "k": "v"}}"#,
            "[{\"x\": ".repeat(depth),
            "}]".repeat(depth)
        )
    };
    let lone = r#"{"note": "\ud800 \udc00x", "k": "v"}"#.to_owned();
    let filter = compiles(Dialect::Sns, &json!({"k": ["v"]}), &body());
    let eventgrid = compiles(
        Dialect::EventGrid,
        &json!({"advancedFilters": [{"operatorType": "StringIn", "key": "data.k", "values": ["v"]}]}),
        &Value::Null,
    );
    let mut evaluator = Evaluator::new();
    for text in [deep(200), deep(100_000), lone] {
        let what = &text[..text.len().min(40)];
        assert!(
            vm(&filter, &json!({ "body": text })),
            "vector shape: {what}"
        );
        assert_eq!(
            evaluator.try_matches_bytes(&filter, text.as_bytes()),
            Ok(true),
            "{what}"
        );
        let line =
            filtervm_compiler::message_from_line(Dialect::Sns, &body_options(), &text).unwrap();
        assert_eq!(
            evaluator.try_matches(&filter, &line),
            Ok(true),
            "line: {what}"
        );
        let event = format!(r#"{{"subject": "s", "data": {text}}}"#);
        assert_eq!(
            evaluator.try_matches_bytes(&eventgrid, event.as_bytes()),
            Ok(true),
            "event: {what}"
        );
    }
}

#[test]
fn policy_nested_a_hundred_thousand_levels() {
    // Under the 256 KiB text limit: 40,000 levels of `{"a":` is 200 KB.
    let deep = nested(40_000, "[1]");
    for dialect in Dialect::ALL {
        let e = timed("a deep policy", || {
            compile_text(dialect, &deep, &Options::from(dialect))
        })
        .err()
        .unwrap_or_else(|| panic!("{dialect}: a 40,000-level policy compiled"));
        assert!(e.errors.iter().all(|x| !x.code.as_str().is_empty()), "{e}");
    }
    // 100,000 levels of `[` is under the limit too.
    let brackets = "[".repeat(100_000);
    for dialect in Dialect::ALL {
        let e = compile_text(dialect, &brackets, &Options::from(dialect)).unwrap_err();
        assert!(e.errors.iter().all(|x| !x.code.as_str().is_empty()), "{e}");
    }
    // expr: a 10,000-level NOT chain (240 KB) fails with the depth error, not the JSON parser's
    // (E2).
    let mut chain = String::new();
    for _ in 0..10_000 {
        chain.push_str(r#"{"op": "NOT", "exp": ["#);
    }
    chain.push_str(r#"{"key": "k", "op": "exists"}"#);
    for _ in 0..10_000 {
        chain.push_str("]}");
    }
    let e = compile_text(Dialect::Expr, &chain, &Options::from(Dialect::Expr)).unwrap_err();
    assert_eq!(e.errors[0].code, ErrorCode::ExprTooDeep);
}

// ---------------------------------------------------------------------------------------------
// Every limit, and one past it

#[test]
fn policy_text_size_limit() {
    let max = filtervm_compiler::MAX_POLICY_BYTES;
    // `{"k": ["xxx…"]}` padded with spaces to exactly the limit, then one byte more.
    for dialect in [Dialect::Basaltic, Dialect::Sns] {
        let base = r#"{"k": ["x"]}"#;
        let at = format!("{base}{}", " ".repeat(max - base.len()));
        assert_eq!(at.len(), max);
        assert!(
            compile_text(dialect, &at, &Options::from(dialect)).is_ok(),
            "{dialect} at the limit"
        );
        let past = format!("{at} ");
        let e = compile_text(dialect, &past, &Options::from(dialect)).unwrap_err();
        assert_eq!(e.errors[0].code, dialect.limit_code());
    }
    let texts = [
        (Dialect::EventGrid, r#"{"subjectBeginsWith": "a"}"#),
        (Dialect::Expr, r#"{"key": "k", "op": "exists"}"#),
        (
            Dialect::Stream,
            r#"{"groups": [[{"op": "exists", "header": "k"}]]}"#,
        ),
    ];
    for (dialect, base) in texts {
        let at = format!("{base}{}", " ".repeat(max - base.len()));
        assert!(
            compile_text(dialect, &at, &Options::from(dialect)).is_ok(),
            "{dialect} at the limit"
        );
        let e = compile_text(dialect, &format!("{at} "), &Options::from(dialect)).unwrap_err();
        assert_eq!(e.errors[0].code, dialect.limit_code());
    }
}

/// Condition `i` of the wide expr policies: on distinct and repeated keys, `in`s and NOTs.
fn wide_condition(i: usize) -> Value {
    match i % 4 {
        0 => json!({"key": format!("k{}", i % 97), "op": "startsWith", "value": format!("v{i}")}),
        1 => json!({"key": format!("k{}", i % 89), "value": [format!("a{i}"), format!("b{i}")]}),
        2 => json!({"key": "k", "op": "contains", "value": format!("{i}")}),
        _ => json!({"op": "NOT", "exp": [{"key": format!("k{i}"), "op": "exists"}]}),
    }
}

/// The widest policy each dialect admits near the 256 KiB text limit compiles, and runs, in
/// bounded time, and the optimizer is not quadratic in the number of conditions (the cost of
/// compiling 4 times as many grows about 4 times).
#[test]
fn widest_policies_compile_in_bounded_time() {
    let max = filtervm_compiler::MAX_POLICY_BYTES;
    // expr: an OR of ~4,000 conditions on distinct and repeated keys, and an AND of `in`s.
    let conditions: Vec<Value> = (0..4_000).map(wide_condition).collect();
    for op in ["OR", "AND"] {
        let texts: Vec<String> = [1_000, 4_000]
            .iter()
            .map(|&n| json!({"op": op, "exp": conditions[..n].to_vec()}).to_string())
            .collect();
        assert_linear(&format!("compiling an {op} of n conditions"), 1_000, |n| {
            let text = if n == 1_000 { &texts[0] } else { &texts[1] };
            compile_text(Dialect::Expr, text, &Options::from(Dialect::Expr)).unwrap();
        });
    }
    for op in ["OR", "AND"] {
        let policy = json!({"op": op, "exp": conditions});
        let text = policy.to_string();
        assert!(text.len() <= max, "{}", text.len());
        let filter = timed("a wide expr policy", || {
            compile_text(Dialect::Expr, &text, &Options::from(Dialect::Expr)).unwrap()
        });
        let message = json!({"headers": {"k": "v123", "k5": "a5"}});
        let got = timed("a wide expr policy", || vm(&filter, &message));
        let expected = reference::evaluate(Dialect::Expr, &Value::Null, &policy, &message).unwrap();
        assert_eq!(got, expected);
    }
    // sns: 150 long wildcard and prefix alternatives on one key (150 combinations).
    let alternatives: Vec<Value> = (0..150)
        .map(|i| match i % 3 {
            0 => json!({"wildcard": format!("*{}*{i}*", "x".repeat(500))}),
            1 => json!({"prefix": format!("{}{i}", "p".repeat(500))}),
            _ => json!({"anything-but": {"suffix": [format!("{i}{}", "s".repeat(500))]}}),
        })
        .collect();
    let policy = json!({ "k": alternatives });
    assert!(policy.to_string().len() <= max);
    let filter = timed("a wide sns policy", || {
        compiles(Dialect::Sns, &policy, &Value::Null)
    });
    let message = json!({"attributes": {"k": {"Type": "String", "Value": "x".repeat(10_000)}}});
    assert!(timed("a wide sns policy", || vm(&filter, &message)));
    // basaltic: 20 names × 50 alternatives.
    let mut wide = Map::new();
    for n in 0..20 {
        let alts: Vec<Value> = (0..50)
            .map(|i| match i % 4 {
                0 => json!(format!("v{i}")),
                1 => json!({"prefix": format!("p{i}")}),
                2 => json!({"numeric": [">", i, "<=", i * 10]}),
                _ => json!({"anything-but": (0..50).map(|j| json!(j * i)).collect::<Vec<_>>()}),
            })
            .collect();
        wide.insert(format!("n{n}"), Value::Array(alts));
    }
    let policy = Value::Object(wide);
    let filter = timed("a wide basaltic policy", || {
        compiles(Dialect::Basaltic, &policy, &Value::Null)
    });
    let message = json!({"attributes": {"n0": {"type": "Number", "value": "5"}}});
    assert!(!timed("a wide basaltic policy", || vm(&filter, &message)));
    // stream: 8 groups × 8 `in` clauses × 32 patterns.
    let clause = |g: usize, c: usize| {
        let values: Vec<Value> = (0..32)
            .map(|v| json!(format!("g{g}.c{c}.*.v{v}-*.**")))
            .collect();
        json!({"op": "in", "header": format!("h{c}"), "values": values})
    };
    let groups: Vec<Value> = (0..8)
        .map(|g| Value::Array((0..8).map(|c| clause(g, c)).collect()))
        .collect();
    let policy = json!({ "groups": groups });
    let filter = timed("a wide stream policy", || {
        compiles(Dialect::Stream, &policy, &Value::Null)
    });
    let message = json!({"headers": {"h0": "g7.c0.x.v31-y.z"}});
    assert!(!timed("a wide stream policy", || vm(&filter, &message)));
    // eventgrid: 25 entries of one value and 512-character strings.
    let entries: Vec<Value> = (0..25)
        .map(|i| json!({"operatorType": "StringNotContains", "key": format!("data.k{}", i % 2), "values": [format!("{i}{}", "\u{e9}".repeat(510))]}))
        .collect();
    let policy = json!({ "advancedFilters": entries, "enableAdvancedFilteringOnArrays": true });
    let filter = timed("a wide eventgrid policy", || {
        compiles(Dialect::EventGrid, &policy, &Value::Null)
    });
    let event = json!({"data": {"k0": ["\u{c9}".repeat(100_000)], "k1": "x"}});
    assert!(both(Dialect::EventGrid, &Value::Null, &policy, &event));
    assert!(timed("a wide eventgrid policy", || vm(&filter, &event)));
}

#[test]
fn basaltic_limits() {
    let code = ErrorCode::NotificationInvalidFilterPolicy;
    let names = |n: usize| {
        let mut m = Map::new();
        for i in 0..n {
            m.insert(format!("k{i}"), json!(["v"]));
        }
        Value::Object(m)
    };
    // B-12: 20 attribute names.
    compiles(Dialect::Basaltic, &names(20), &Value::Null);
    rejected(Dialect::Basaltic, &names(21), &Value::Null, code);
    // B-12: 50 alternatives.
    let alts = |n: usize| json!({"k": (0..n).map(|i| json!(format!("v{i}"))).collect::<Vec<_>>()});
    compiles(Dialect::Basaltic, &alts(50), &Value::Null);
    rejected(Dialect::Basaltic, &alts(51), &Value::Null, code);
    // B-8: anything-but with 50 values.
    let but =
        |n: usize| json!({"k": [{"anything-but": (0..n).map(|i| json!(i)).collect::<Vec<_>>()}]});
    compiles(Dialect::Basaltic, &but(50), &Value::Null);
    rejected(Dialect::Basaltic, &but(51), &Value::Null, code);
}

#[test]
fn basaltic_message_limits() {
    use filtervm_compiler::dialect::basaltic::validate_message;
    use filtervm_compiler::{Options, message_from_json};
    let message = |n: usize, name_bytes: usize, value_bytes: usize| {
        let mut m = Map::new();
        for i in 0..n {
            let name = format!("{i:0>width$}", width = name_bytes);
            m.insert(
                name,
                json!({"type": "String", "value": "v".repeat(value_bytes)}),
            );
        }
        let message = product_message(&json!({ "attributes": m })).unwrap();
        message_from_json(Dialect::Basaltic, &Options::Basaltic, &message).unwrap()
    };
    // B-13: 20 attributes, names of 1-256 bytes, values of at most 1,024 bytes.
    assert!(validate_message(&message(20, 256, 1024)).is_ok());
    for past in [message(21, 3, 1), message(1, 257, 1), message(1, 3, 1025)] {
        assert_eq!(
            validate_message(&past).unwrap_err().code,
            ErrorCode::NotificationInvalidMessageAttributes
        );
    }
    // Evaluation never fails on a message past the limits (B-13).
    let filter = compiles(
        Dialect::Basaltic,
        &json!({"000": [{"exists": true}]}),
        &Value::Null,
    );
    assert!(Evaluator::new().matches(&filter, &message(21, 3, 1025)));
}

#[test]
fn sns_limits() {
    let code = ErrorCode::SnsLimitExceeded;
    // Rule 42: 5 keys, in both scopes, nested and with `$or`.
    let keys = |n: usize| {
        let mut m = Map::new();
        for i in 0..n {
            m.insert(format!("k{i}"), json!(["v"]));
        }
        Value::Object(m)
    };
    compiles(Dialect::Sns, &keys(5), &Value::Null);
    rejected(Dialect::Sns, &keys(6), &Value::Null, code);
    // a.b, a.c, d, e (a.b again): four distinct leaf paths; then a.b, a.c, d, e, f, a.g: six.
    let nested5 = json!({"a": {"b": ["1"], "c": ["1"]}, "$or": [{"d": ["1"]}, {"e": ["1"], "a": {"b": ["2"]}}]});
    compiles(Dialect::Sns, &nested5, &body());
    let nested6 = json!({"a": {"b": ["1"], "c": ["1"]}, "$or": [{"d": ["1"]}, {"e": ["1"], "f": ["2"], "a": {"g": ["3"]}}]});
    rejected(Dialect::Sns, &nested6, &body(), code);
    // Rule 43: 150 combinations (150 values on one key; 3·6 + 3·4·4 + 3·4·7 with `$or`).
    let values =
        |n: usize| json!({"k": (0..n).map(|i| json!(format!("v{i}"))).collect::<Vec<_>>()});
    compiles(Dialect::Sns, &values(150), &Value::Null);
    rejected(Dialect::Sns, &values(151), &Value::Null, code);
    let list = |n: usize| (0..n).map(|i| json!(i)).collect::<Vec<_>>();
    let or150 = json!({"a": list(3), "$or": [
        {"b": list(6)},
        {"c": list(4), "d": list(4)},
        {"c": list(4), "e": list(7)}
    ]});
    compiles(Dialect::Sns, &or150, &Value::Null);
    let or152 = json!({"a": list(4), "$or": [
        {"b": list(6)},
        {"c": list(4), "d": list(4)},
        {"c": list(4), "e": list(4)}
    ]});
    rejected(Dialect::Sns, &or152, &Value::Null, code);
    // A 150-combination policy still answers like the reference.
    let message = json!({"attributes": {
        "a": {"Type": "Number", "Value": "2"},
        "c": {"Type": "Number", "Value": "3"},
        "e": {"Type": "Number", "Value": "6"}
    }});
    assert!(both(Dialect::Sns, &Value::Null, &or150, &message));
}

#[test]
fn eventgrid_limits() {
    let limit = ErrorCode::EventGridLimitExceeded;
    let entries = |n: usize| {
        let list: Vec<Value> = (0..n)
            .map(|i| json!({"operatorType": "NumberLessThan", "key": format!("data.k{i}"), "value": i}))
            .collect();
        json!({ "advancedFilters": list })
    };
    // EG-40.7: 25 entries (of one value each: also 25 values, EG-40.8).
    compiles(Dialect::EventGrid, &entries(25), &Value::Null);
    rejected(Dialect::EventGrid, &entries(26), &Value::Null, limit);
    // EG-40.8: 25 values across entries; null operators count 0.
    let values = |n: usize| {
        json!({"advancedFilters": [
            {"operatorType": "StringIn", "key": "data.s", "values": (0..n).map(|i| json!(format!("v{i}"))).collect::<Vec<_>>()},
            {"operatorType": "IsNotNull", "key": "data.s"}
        ]})
    };
    compiles(Dialect::EventGrid, &values(25), &Value::Null);
    rejected(Dialect::EventGrid, &values(26), &Value::Null, limit);
    // EG-40.9: 512 characters (not bytes).
    let long = |n: usize| json!({"advancedFilters": [{"operatorType": "StringContains", "key": "subject", "values": ["\u{e9}".repeat(n)]}]});
    let at = long(512);
    compiles(Dialect::EventGrid, &at, &Value::Null);
    let e = rejected(Dialect::EventGrid, &long(513), &Value::Null, limit);
    assert!(e.to_string().contains("512"), "{e}");
    let event = json!({"subject": format!("x{}y", "\u{c9}".repeat(512))});
    assert!(both(Dialect::EventGrid, &Value::Null, &at, &event));
}

#[test]
fn stream_limits() {
    let limit = ErrorCode::StreamLimitExceeded;
    let clause = json!({"op": "exists", "header": "h"});
    let groups = |g: usize, c: usize| json!({"groups": vec![vec![clause.clone(); c]; g]});
    // 8 groups of 8 clauses.
    compiles(Dialect::Stream, &groups(8, 8), &Value::Null);
    rejected(Dialect::Stream, &groups(9, 1), &Value::Null, limit);
    rejected(Dialect::Stream, &groups(1, 9), &Value::Null, limit);
    // 32 `in` entries.
    let ins = |n: usize| json!({"groups": [[{"op": "in", "header": "h", "values": (0..n).map(|i| json!(format!("v{i}.*"))).collect::<Vec<_>>()}]]});
    compiles(Dialect::Stream, &ins(32), &Value::Null);
    rejected(Dialect::Stream, &ins(33), &Value::Null, limit);
    // S7: 256 bytes of pattern (128 × `é` is 256 bytes; 129 is not).
    let pat = |p: String| json!({"groups": [[{"op": "=", "header": "h", "values": [p]}]]});
    compiles(Dialect::Stream, &pat("\u{e9}".repeat(128)), &Value::Null);
    rejected(
        Dialect::Stream,
        &pat("\u{e9}".repeat(129)),
        &Value::Null,
        limit,
    );
    // The longest all-star pattern: 128 whole-segment stars, against a value of 128 segments.
    let stars = vec!["*"; 128].join(".");
    assert_eq!(stars.len(), 255);
    let policy = pat(stars);
    let value = vec!["x"; 128].join(".");
    assert!(both(
        Dialect::Stream,
        &Value::Null,
        &policy,
        &json!({"headers": {"h": value}})
    ));
    let mut value = vec!["x"; 127].join(".");
    value.push_str(&".y".repeat(500_000));
    let filter = compiles(Dialect::Stream, &policy, &Value::Null);
    assert!(!timed("128 stars against 500,000 segments", || vm(
        &filter,
        &json!({"headers": {"h": value}})
    )));
}

#[test]
fn expr_depth_limits() {
    let too_deep = ErrorCode::ExprTooDeep;
    let chain = |n: usize| {
        let mut node = json!({"key": "k", "op": "exists"});
        for _ in 0..n {
            node = json!({"op": "NOT", "exp": [node]});
        }
        node
    };
    // E2: 32 levels by default, 33 rejected; `max_depth` up to its ceiling of 62.
    compiles(Dialect::Expr, &chain(32), &Value::Null);
    rejected(Dialect::Expr, &chain(33), &Value::Null, too_deep);
    let ceiling = filtervm_compiler::dialect::expr::MAX_DEPTH_CEILING;
    let options = json!({ "max_depth": ceiling });
    compiles(Dialect::Expr, &chain(ceiling), &options);
    rejected(Dialect::Expr, &chain(ceiling + 1), &options, too_deep);
    let over = json!({ "max_depth": ceiling + 1 });
    rejected(Dialect::Expr, &chain(1), &over, ErrorCode::InvalidOptions);
    // The deepest accepted tree, as text, answers like the reference.
    let filter = compiles(Dialect::Expr, &chain(ceiling), &options);
    let message = json!({"headers": {"k": "v"}});
    assert_eq!(
        vm(&filter, &message),
        reference::evaluate(Dialect::Expr, &options, &chain(ceiling), &message).unwrap()
    );
    // E4: no bound on `in` lists (100,000 entries).
    let list: Vec<Value> = (0..100_000).map(|i| json!(format!("v{i}"))).collect();
    let policy = json!({"key": "k", "op": "in", "value": list});
    let filter = compiles(Dialect::Expr, &policy, &Value::Null);
    assert!(vm(&filter, &json!({"headers": {"k": "v99999"}})));
    assert!(!vm(&filter, &json!({"headers": {"k": "v100000"}})));
}

// ---------------------------------------------------------------------------------------------
// Event Grid string tests at the limits (25 values of 512 characters) against long values

/// 25 values of 512 characters, each `unit` 511 times and then a character of its own: each
/// starts where the value does, almost matches everywhere, and (unless the value ends with its
/// last character) never occurs. A search that tries every value at every position does
/// 25 × 512 steps per character of the value.
fn near_misses(unit: char) -> Vec<String> {
    "0123456789!#$%&()+,-;=@[]"
        .chars()
        .map(|end| format!("{}{end}", unit.to_string().repeat(511)))
        .collect()
}

/// Every string operator with the 25 near misses on `key`, against `value`, checked against the
/// reference; then the same value with the last needle's last character appended, which
/// contains that needle (ignoring case) at its very end.
fn string_operators_at_the_limits(value: &str, unit: char) {
    let needles = near_misses(unit);
    assert_eq!(needles.len(), 25);
    assert!(needles.iter().all(|n| n.chars().count() == 512));
    let hit = format!("{value}{}", needles[24].chars().last().unwrap());
    for op in [
        "StringContains",
        "StringNotContains",
        "StringBeginsWith",
        "StringNotBeginsWith",
        "StringEndsWith",
        "StringNotEndsWith",
        "StringIn",
        "StringNotIn",
    ] {
        let policy = json!({"advancedFilters": [
            {"operatorType": op, "key": "subject", "values": needles}
        ]});
        let positive = !op.contains("Not");
        let on_miss = both(
            Dialect::EventGrid,
            &Value::Null,
            &policy,
            &json!({"subject": value}),
        );
        assert_eq!(on_miss, !positive, "{op} on {} bytes", value.len());
        let on_hit = both(
            Dialect::EventGrid,
            &Value::Null,
            &policy,
            &json!({"subject": hit}),
        );
        let hits = matches!(
            op,
            "StringContains" | "StringNotContains" | "StringEndsWith" | "StringNotEndsWith"
        );
        assert_eq!(
            on_hit,
            positive == hits,
            "{op} on {} bytes ending in a value",
            hit.len()
        );
    }
}

#[test]
fn eventgrid_string_tests_at_the_limits_on_a_megabyte_of_ascii() {
    // Lower-case value, upper-case values: every comparison ignores case (EG-31).
    string_operators_at_the_limits(&"a".repeat(1 << 20), 'A');
}

#[test]
fn eventgrid_string_tests_at_the_limits_on_32_kb_of_non_ascii() {
    // `é` folds to `É` (both two bytes); `ı` folds to ASCII `I` (two bytes to one).
    string_operators_at_the_limits(&"\u{e9}".repeat(16 << 10), '\u{c9}');
    string_operators_at_the_limits(&"\u{131}".repeat(16 << 10), 'I');
}

// ---------------------------------------------------------------------------------------------
// A 10,000-star wildcard against a 1 MB value

#[test]
fn ten_thousand_star_wildcard_against_a_megabyte() {
    let mb = 1 << 20;
    // `*a*a…*a*`: 10,001 stars around 10,000 `a`s.
    let mut pattern = "*a".repeat(10_000);
    pattern.push('*');
    let hit = "a".repeat(mb);
    // A megabyte with too few `a`s to fill the pattern: 9,999 of them.
    let miss = format!("{}{}", "a".repeat(9_999), "b".repeat(mb - 9_999));
    let cases = [
        (json!({"k": [{"wildcard": pattern.clone()}]}), true, false),
        (
            json!({"k": [{"anything-but": {"wildcard": pattern.clone()}}]}),
            false,
            true,
        ),
    ];
    for (policy, on_hit, on_miss) in cases {
        let filter = compiles(Dialect::Sns, &policy, &Value::Null);
        for (value, expected) in [(&hit, on_hit), (&miss, on_miss)] {
            let message = json!({"attributes": {"k": {"Type": "String", "Value": value}}});
            let got = timed("a 10,000-star wildcard", || vm(&filter, &message));
            assert_eq!(got, expected, "{}", &policy.to_string()[..40]);
        }
    }
    // The worst case for the greedy matcher: every piece is found, the last one is missing.
    let mut pattern = "*ab".repeat(5_000);
    pattern.push_str("*c");
    let filter = compiles(
        Dialect::Sns,
        &json!({"k": [{"wildcard": pattern}]}),
        &Value::Null,
    );
    let value = "ab".repeat(mb / 2);
    let message = json!({"attributes": {"k": {"Type": "String", "Value": value}}});
    assert!(!timed("a wildcard that fails at the end", || vm(
        &filter, &message
    )));
    // Consecutive stars stay invalid however many there are.
    rejected(
        Dialect::Sns,
        &json!({"k": [{"wildcard": "*".repeat(10_000)}]}),
        &Value::Null,
        ErrorCode::SnsInvalidValue,
    );
}

// ---------------------------------------------------------------------------------------------
// Numbers with 10,000 digits

/// 10,000-digit numbers: huge (overflows binary64), long but ordinary, tiny (underflows).
fn long_numbers() -> [String; 4] {
    [
        format!("1{}", "0".repeat(9_999)),
        format!("1.{}", "1".repeat(9_998)),
        format!("0.{}1", "0".repeat(9_997)),
        format!("-{}", "9".repeat(10_000)),
    ]
}

fn number(text: &str) -> Value {
    reference::json::parse(text).unwrap()
}

/// Compiles `policy` (an error must carry a code); if it compiles, the VM agrees with the
/// reference on every message.
fn settle(dialect: Dialect, options: &Value, policy: &Value, messages: &[Value]) {
    let compiled = timed("a long-number policy", || compile(dialect, policy, options));
    let filter = match compiled {
        Ok(f) => f,
        Err(e) => {
            assert!(e.errors.iter().all(|x| !x.code.as_str().is_empty()), "{e}");
            // The reference's own validation rejects it too.
            assert!(
                reference::validate(dialect, options, policy).is_err(),
                "{dialect}: the compiler rejects {policy} ({e}), the reference accepts it"
            );
            return;
        }
    };
    for message in messages {
        let got = timed("a long-number message", || vm(&filter, message));
        let expected = reference::evaluate(dialect, options, policy, message).unwrap();
        assert_eq!(got, expected, "{dialect}: {policy} on {message}");
    }
}

#[test]
fn ten_thousand_digit_numbers() {
    let texts = long_numbers();
    for text in &texts {
        let n = number(text);
        let others = texts.iter().map(|t| t.as_str()).chain(["0", "1", "-1e308"]);
        let others: Vec<&str> = others.collect();

        // basaltic: numeric ranges and canonical text (B-6, B-10).
        let msgs: Vec<Value> = others
            .iter()
            .map(|t| json!({"attributes": {"n": {"type": "Number", "value": t}}}))
            .collect();
        for policy in [
            json!({"n": [{"numeric": [">", n.clone()]}]}),
            json!({"n": [n.clone()]}),
            json!({"n": [{"anything-but": [n.clone()]}]}),
        ] {
            settle(Dialect::Basaltic, &Value::Null, &policy, &msgs);
        }

        // sns: numeric and bare numbers, attributes and bodies (rules 6, 23, 31).
        let attrs: Vec<Value> = others
            .iter()
            .map(|t| json!({"attributes": {"n": {"Type": "Number", "Value": t}}}))
            .collect();
        let bodies: Vec<Value> = others
            .iter()
            .map(|t| json!({ "body": format!(r#"{{"n": {t}}}"#) }))
            .collect();
        for policy in [
            json!({"n": [{"numeric": ["<", n.clone()]}]}),
            json!({"n": [n.clone()]}),
            json!({"n": [{"anything-but": n.clone()}]}),
        ] {
            settle(Dialect::Sns, &Value::Null, &policy, &attrs);
            settle(Dialect::Sns, &body(), &policy, &bodies);
        }

        // eventgrid: exact decimal comparison (EG-33).
        let events: Vec<Value> = others
            .iter()
            .map(|t| json!({"data": {"n": number(t)}}))
            .collect();
        for policy in [
            json!({"advancedFilters": [{"operatorType": "NumberIn", "key": "data.n", "values": [n.clone()]}]}),
            json!({"advancedFilters": [{"operatorType": "NumberGreaterThan", "key": "data.n", "value": n.clone()}]}),
            json!({"advancedFilters": [{"operatorType": "NumberInRange", "key": "data.n", "values": [[n.clone(), n.clone()]]}]}),
        ] {
            settle(Dialect::EventGrid, &Value::Null, &policy, &events);
        }

        // stream: header text parsed by S9, operands in both forms.
        let headers: Vec<Value> = others
            .iter()
            .map(|t| json!({"headers": {"n": t}}))
            .collect();
        settle(
            Dialect::Stream,
            &Value::Null,
            &json!({"groups": [[{"op": ">=", "header": "n", "values": [n.clone()]}]]}),
            &headers,
        );
        settle(
            Dialect::Stream,
            &Value::Null,
            &Value::String(format!("n <= {text}")),
            &headers,
        );
        // S9, text form: an operand that overflows binary64 is invalid, in both forms.
        if n.as_f64().is_none_or(|x| !x.is_finite()) {
            let code = ErrorCode::StreamInvalidFilter;
            let text_form = Value::String(format!("n > {text}"));
            assert!(compile(Dialect::Stream, &text_form, &Value::Null).is_err());
            let json_form =
                json!({"groups": [[{"op": ">", "header": "n", "values": [n.clone()]}]]});
            rejected(Dialect::Stream, &json_form, &Value::Null, code);
        }
    }
}

#[test]
fn exact_decimals_with_ten_thousand_digits() {
    // EG-33: equal to the last of 10,000 digits, and different only there.
    let a = format!("1.{}1", "0".repeat(9_998));
    let b = format!("1.{}2", "0".repeat(9_998));
    let policy = json!({"advancedFilters": [{"operatorType": "NumberIn", "key": "data.n", "values": [number(&a)]}]});
    assert!(both(
        Dialect::EventGrid,
        &Value::Null,
        &policy,
        &json!({"data": {"n": number(&a)}})
    ));
    assert!(!both(
        Dialect::EventGrid,
        &Value::Null,
        &policy,
        &json!({"data": {"n": number(&b)}})
    ));
}

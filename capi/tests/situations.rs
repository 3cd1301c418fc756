//! The C ABI on the message table's situations (the fixture every entry point reads,
//! `tests/situations.jsonl`; the format is described in `filtervm/tests/situations.rs`), and a
//! property: a set of random mixed-dialect filters, matched with random subsets of a message's
//! parts, returns exactly the ids that matching each filter on its own returns among the filters
//! that can read the message, with `FVM_PARTIAL` and one error detail per group of the others.
//! Every call goes through the exported `extern "C"` functions, as a C program calls them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    unsafe_code
)]

use filtervm_capi::*;
use serde_json::Value;
use std::ffi::{CStr, CString};

/// A filter compiled through `fvm_compile`.
struct Filter(*mut FvmFilter);

impl Filter {
    fn compile(dialect: &str, policy: &str, options: Option<&str>) -> Filter {
        let dialect = CString::new(dialect).unwrap();
        let mut out = std::ptr::null_mut();
        let mut error = std::ptr::null_mut();
        let (options_ptr, options_len) =
            options.map_or((std::ptr::null(), 0), |o| (o.as_ptr(), o.len()));
        // SAFETY: valid pointers and lengths for the call.
        let status = unsafe {
            fvm_compile(
                dialect.as_ptr(),
                policy.as_ptr(),
                policy.len(),
                options_ptr,
                options_len,
                &mut out,
                &mut error,
            )
        };
        assert_eq!(status, FVM_OK, "{policy}: {}", codes(error).join(", "));
        Filter(out)
    }

    /// `match`, `no-match`, or the error's first code.
    fn matches(&self, message: &CMessage) -> String {
        let mut error = std::ptr::null_mut();
        // SAFETY: a live filter, a message valid for the call.
        let status = unsafe { fvm_filter_matches(self.0, &message.raw, &mut error) };
        match status {
            FVM_MATCH => "match".to_owned(),
            FVM_NO_MATCH => "no-match".to_owned(),
            _ => codes(error).remove(0),
        }
    }
}

impl Drop for Filter {
    fn drop(&mut self) {
        // SAFETY: made by `fvm_compile`, freed once.
        unsafe { fvm_filter_free(self.0) };
    }
}

/// The codes of an error object (and frees it).
fn codes(error: *mut FvmError) -> Vec<String> {
    // SAFETY: NULL or a live error, freed once here.
    unsafe {
        let codes = (0..fvm_error_count(error))
            .map(|i| {
                CStr::from_ptr(fvm_error_code(error, i))
                    .to_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        fvm_error_free(error);
        codes
    }
}

/// A C message and the memory it points into.
struct CMessage {
    raw: FvmMessage,
    _attributes: Vec<FvmAttribute>,
    _headers: Vec<FvmHeader>,
    _texts: Vec<Vec<u8>>,
    _types: Vec<CString>,
}

impl CMessage {
    /// A message of one JSON document.
    fn document(json: &str) -> CMessage {
        let text = json.as_bytes().to_vec();
        let raw = FvmMessage {
            parts: FVM_PART_JSON,
            json: text.as_ptr(),
            json_len: text.len(),
            body: std::ptr::null(),
            body_len: 0,
            attributes: std::ptr::null(),
            attribute_count: 0,
            headers: std::ptr::null(),
            header_count: 0,
        };
        CMessage {
            raw,
            _attributes: Vec::new(),
            _headers: Vec::new(),
            _texts: vec![text],
            _types: Vec::new(),
        }
    }

    /// A message of parts: a body, `(name, type, value)` attributes, `(name, value)` header
    /// pairs (a repeated name is a header of several values).
    fn parts(
        body: Option<&str>,
        attributes: Option<&[(&str, &str, &str)]>,
        headers: Option<&[(&str, &str)]>,
    ) -> CMessage {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        let mut types = Vec::new();
        let mut keep = |s: &str| {
            texts.push(s.as_bytes().to_vec());
            let t = texts.last().unwrap();
            (t.as_ptr(), t.len())
        };
        let mut parts = 0;
        let (body_ptr, body_len) = match body {
            Some(b) => {
                parts |= FVM_PART_BODY;
                keep(b)
            }
            None => (std::ptr::null(), 0),
        };
        let c_attributes: Vec<FvmAttribute> = attributes
            .unwrap_or_default()
            .iter()
            .map(|(n, t, v)| {
                let (name, name_len) = keep(n);
                let (value, value_len) = keep(v);
                types.push(CString::new(*t).unwrap());
                FvmAttribute {
                    name,
                    name_len,
                    data_type: types.last().unwrap().as_ptr(),
                    value,
                    value_len,
                }
            })
            .collect();
        if attributes.is_some() {
            parts |= FVM_PART_ATTRIBUTES;
        }
        let c_headers: Vec<FvmHeader> = headers
            .unwrap_or_default()
            .iter()
            .map(|(n, v)| {
                let (name, name_len) = keep(n);
                let (value, value_len) = keep(v);
                FvmHeader {
                    name,
                    name_len,
                    value,
                    value_len,
                }
            })
            .collect();
        if headers.is_some() {
            parts |= FVM_PART_HEADERS;
        }
        let raw = FvmMessage {
            parts,
            json: std::ptr::null(),
            json_len: 0,
            body: body_ptr,
            body_len,
            attributes: c_attributes.as_ptr(),
            attribute_count: c_attributes.len(),
            headers: c_headers.as_ptr(),
            header_count: c_headers.len(),
        };
        CMessage {
            raw,
            _attributes: c_attributes,
            _headers: c_headers,
            _texts: texts,
            _types: types,
        }
    }
}

/// A set built through `fvm_set_*`.
struct Set(*mut FvmSet);

impl Set {
    fn new() -> Set {
        Set(fvm_set_new())
    }

    fn add(&self, id: u64, filter: &Filter) {
        // SAFETY: a live set and filter.
        assert_eq!(
            unsafe { fvm_set_add(self.0, id, filter.0, std::ptr::null_mut()) },
            FVM_OK
        );
    }

    /// The ids, and each unjudged group's (code, dialect, subscription count).
    fn matching(&self, message: &CMessage) -> (Vec<u64>, Vec<(String, String, usize)>) {
        let mut ids = vec![0u64; 64];
        let mut count = 0;
        let mut error = std::ptr::null_mut();
        // SAFETY: a live set; buffers valid for their lengths.
        let status = unsafe {
            fvm_set_matching(
                self.0,
                &message.raw,
                ids.as_mut_ptr(),
                ids.len(),
                &mut count,
                &mut error,
            )
        };
        ids.truncate(count);
        let mut groups = Vec::new();
        match status {
            FVM_OK => assert!(error.is_null()),
            FVM_PARTIAL => {
                // SAFETY: a live error, freed once below.
                unsafe {
                    for i in 0..fvm_error_count(error) {
                        groups.push((
                            CStr::from_ptr(fvm_error_code(error, i))
                                .to_str()
                                .unwrap()
                                .to_owned(),
                            CStr::from_ptr(fvm_error_dialect(error, i))
                                .to_str()
                                .unwrap()
                                .to_owned(),
                            fvm_error_subscriptions(error, i),
                        ));
                    }
                    fvm_error_free(error);
                }
            }
            other => panic!("fvm_set_matching: status {other}: {:?}", codes(error)),
        }
        (ids, groups)
    }
}

impl Drop for Set {
    fn drop(&mut self) {
        // SAFETY: made by `fvm_set_new`, freed once.
        unsafe { fvm_set_free(self.0) };
    }
}

fn case_filter(case: &Value) -> Filter {
    let policy = match &case["policy"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let options = case.get("options").map(Value::to_string);
    Filter::compile(
        case["dialect"].as_str().unwrap(),
        &policy,
        options.as_deref(),
    )
}

/// The C form of a case's message of parts; `None` when C cannot say it (a header given no
/// value: a C header is a name and one value).
fn case_parts(parts: &Value) -> Option<CMessage> {
    let attributes: Option<Vec<(&str, &str, &str)>> = parts.get("attributes").map(|a| {
        a.as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a[0].as_str().unwrap(),
                    a[1].as_str().unwrap(),
                    a[2].as_str().unwrap(),
                )
            })
            .collect()
    });
    let mut headers: Option<Vec<(&str, &str)>> = None;
    if let Some(h) = parts.get("headers") {
        let mut pairs = Vec::new();
        for (name, v) in h.as_object().unwrap() {
            match v {
                Value::String(s) => pairs.push((name.as_str(), s.as_str())),
                Value::Array(items) if items.is_empty() => return None,
                Value::Array(items) => {
                    pairs.extend(items.iter().map(|i| (name.as_str(), i.as_str().unwrap())));
                }
                _ => panic!("a header value is a string or a list"),
            }
        }
        headers = Some(pairs);
    }
    Some(CMessage::parts(
        parts.get("body").map(|b| b.as_str().unwrap()),
        attributes.as_deref(),
        headers.as_deref(),
    ))
}

#[test]
fn every_situation_has_the_same_verdict_or_code_through_c() {
    let fixture = include_str!("../../tests/situations.jsonl");
    let witness = Filter::compile("sns", "{}", None);
    let mut checked = 0;
    for line in fixture.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let want = case["expect"].as_str().unwrap();
        let filter = case_filter(&case);
        let message = match (case.get("parts"), case.get("document")) {
            (Some(parts), _) => match case_parts(parts) {
                Some(message) => message,
                None => continue,
            },
            (None, Some(document)) => CMessage::document(document.as_str().unwrap()),
            _ => panic!("{line}: parts or a document"),
        };
        assert_eq!(filter.matches(&message), want, "{line}");
        // In a set beside a filter that judges every message: never all or nothing.
        let set = Set::new();
        set.add(1, &filter);
        set.add(2, &witness);
        let (ids, groups) = set.matching(&message);
        let witness_says = witness.matches(&message);
        let mut expected = Vec::new();
        if want == "match" {
            expected.push(1);
        }
        if witness_says == "match" {
            expected.push(2);
        }
        assert_eq!(ids, expected, "{line} (set)");
        let judged = |o: &str| o == "match" || o == "no-match";
        assert_eq!(
            groups.iter().any(|(code, ..)| code == want),
            !judged(want),
            "{line} (set, unjudged: {groups:?})"
        );
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
}

/// A 64-bit LCG: deterministic random choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn coin(&mut self) -> bool {
        self.next().is_multiple_of(2)
    }
}

/// Policies of every dialect over the fields `a`, `b`, `n` (dialect, options, policy).
const POLICIES: &[(&str, Option<&str>, &str)] = &[
    ("sns", None, r#"{"a": ["x"]}"#),
    ("sns", None, r#"{"b": [{"exists": false}]}"#),
    ("sns", None, "{}"),
    (
        "sns",
        None,
        r#"{"a": [{"prefix": "x"}], "n": [{"numeric": [">", 0]}]}"#,
    ),
    (
        "sns",
        Some(r#"{"scope": "MessageBody"}"#),
        r#"{"a": ["x"]}"#,
    ),
    ("sns", Some(r#"{"scope": "MessageBody"}"#), "{}"),
    (
        "sns",
        Some(r#"{"scope": "MessageBody"}"#),
        r#"{"n": [{"numeric": [">", 1]}]}"#,
    ),
    ("basaltic", None, r#"{"a": ["x"]}"#),
    ("basaltic", None, r#"{"b": [{"exists": false}]}"#),
    ("eventgrid", None, "{}"),
    ("eventgrid", None, r#"{"subjectBeginsWith": "x"}"#),
    ("eventgrid", None, r#"{"includedEventTypes": ["t"]}"#),
    ("eventbridge", None, r#"{"a": ["x"]}"#),
    ("eventbridge", None, r#"{"b": [{"exists": false}]}"#),
    ("eventbridge", None, r#"{"n": [{"numeric": [">", 1]}]}"#),
    ("stream", None, "a = x"),
    ("stream", None, "b missing"),
    ("expr", None, r#"{"key": "a", "op": "in", "value": ["x"]}"#),
    (
        "expr",
        None,
        r#"{"op": "NOT", "exp": [{"key": "b", "op": "exists"}]}"#,
    ),
];

const BODIES: &[&str] = &[
    r#"{"a": "x", "subject": "x1", "eventType": "t", "n": 2}"#,
    r#"{"a": "y", "n": 1}"#,
    r#"[{"subject": "x"}]"#,
    "5",
    "not json",
    r#"{"subject": "#,
];

const ATTRIBUTES: &[&[(&str, &str, &str)]] = &[
    &[("a", "String", "x")],
    &[
        ("a", "String", "y"),
        ("b", "Number", "1"),
        ("n", "Number", "3"),
    ],
    &[],
    &[("a", "Strung", "x")],
    &[("a", "Binary", "x")],
    &[("a", "String", "xyz"), ("n", "Number", "1e400")],
];

const HEADERS: &[&[(&str, &str)]] = &[
    &[("a", "x")],
    &[("a", "x"), ("a", "y")],
    &[("b", "z")],
    &[],
    &[("a", "y"), ("b", "1")],
];

#[test]
fn a_set_returns_exactly_the_one_by_one_ids_of_the_filters_that_can_read_the_message() {
    let mut rng = Rng(21);
    let filters: Vec<Filter> = POLICIES
        .iter()
        .map(|(d, o, p)| Filter::compile(d, p, *o))
        .collect();
    let (mut partial, mut complete) = (0, 0);
    for _ in 0..300 {
        // A random set of the filters (ids in insertion order)...
        let set = Set::new();
        let mut members: Vec<(u64, usize)> = Vec::new();
        for _ in 0..1 + rng.below(10) {
            let f = rng.below(filters.len());
            let id = members.len() as u64 + 100;
            set.add(id, &filters[f]);
            members.push((id, f));
        }
        // ...and random messages of a random subset of their parts.
        for _ in 0..8 {
            let (mut body, mut attributes, mut headers) = (None, None, None);
            while body.is_none() && attributes.is_none() && headers.is_none() {
                body = rng.coin().then(|| BODIES[rng.below(BODIES.len())]);
                attributes = rng.coin().then(|| ATTRIBUTES[rng.below(ATTRIBUTES.len())]);
                headers = rng.coin().then(|| HEADERS[rng.below(HEADERS.len())]);
            }
            let message = CMessage::parts(body, attributes, headers);
            let (ids, groups) = set.matching(&message);
            let one_by_one: Vec<(u64, String)> = members
                .iter()
                .map(|&(id, f)| (id, filters[f].matches(&message)))
                .collect();
            let expected: Vec<u64> = one_by_one
                .iter()
                .filter(|(_, o)| o == "match")
                .map(|(id, _)| *id)
                .collect();
            let what = format!("{body:?} {attributes:?} {headers:?}, set {members:?}");
            assert_eq!(ids, expected, "{what}: one by one {one_by_one:?}");
            // Every subscription that cannot read it is in exactly one unjudged group, with the
            // code it gets alone.
            let cannot: usize = one_by_one
                .iter()
                .filter(|(_, o)| o != "match" && o != "no-match")
                .count();
            assert_eq!(
                groups.iter().map(|(.., n)| n).sum::<usize>(),
                cannot,
                "{what}: {groups:?} / {one_by_one:?}"
            );
            for (id, o) in one_by_one
                .iter()
                .filter(|(_, o)| o != "match" && o != "no-match")
            {
                let f = members.iter().find(|(m, _)| m == id).unwrap().1;
                assert!(
                    groups
                        .iter()
                        .any(|(code, dialect, _)| code == o && dialect == POLICIES[f].0),
                    "{what}: {id} says {o} alone, the set {groups:?}"
                );
            }
            if groups.is_empty() {
                complete += 1;
            } else {
                partial += 1;
            }
        }
    }
    assert!(
        partial > 200 && complete > 200,
        "{partial} partial, {complete} complete"
    );
}

/// `fvm_filter_example` / `fvm_filter_diff`: the JSON answer (status, buffer) or the error's
/// status and codes.
fn analysis(
    call: impl FnOnce(*mut *mut u8, *mut usize, *mut *mut FvmError) -> i32,
) -> Result<Value, (i32, Vec<String>)> {
    let (mut out, mut len, mut error) = (std::ptr::null_mut(), 0usize, std::ptr::null_mut());
    let status = call(&mut out, &mut len, &mut error);
    if status != FVM_OK {
        assert!(out.is_null());
        return Err((status, codes(error)));
    }
    // SAFETY: a buffer of `len` bytes from the call, freed once here.
    let text = unsafe {
        let text = std::slice::from_raw_parts(out, len).to_vec();
        fvm_bytes_free(out, len);
        text
    };
    Ok(serde_json::from_slice(&text).unwrap())
}

/// The analysis through C: an example each filter matches (and does not) that the filter then
/// judges so through `fvm_filter_matches_json`; a diff with a witness per side, a filter loaded
/// from bytes analysed like the original, and the error codes of the CLI and the library for
/// filters of two models and NULL arguments.
#[test]
fn example_and_diff_answer_as_json_through_c() {
    let before = Filter::compile("sns", r#"{"amount": [{"numeric": [">=", 150]}]}"#, None);
    let after = Filter::compile("sns", r#"{"amount": [{"numeric": [">=", 100]}]}"#, None);
    for (matching, verdict) in [(1, FVM_MATCH), (0, FVM_NO_MATCH)] {
        // SAFETY: a live filter and valid out-pointers.
        let v =
            analysis(|o, l, e| unsafe { fvm_filter_example(before.0, matching, o, l, e) }).unwrap();
        assert_eq!(v["found"], true, "{v}");
        assert_eq!(v["matches"], matching == 1);
        let message = v["message"].to_string();
        let mut error = std::ptr::null_mut();
        // SAFETY: a live filter, `message.len()` bytes.
        let got = unsafe {
            fvm_filter_matches_json(before.0, message.as_ptr(), message.len(), &mut error)
        };
        assert_eq!(got, verdict, "{message}");
    }
    let never = Filter::compile(
        "stream",
        r#"{"groups": [[{"op": "=", "header": "a", "values": ["x"]}, {"op": "missing", "header": "a"}]]}"#,
        None,
    );
    // SAFETY: as above.
    let v = analysis(|o, l, e| unsafe { fvm_filter_example(never.0, 1, o, l, e) }).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"found": false, "matches": true, "exact": true, "reason": null})
    );

    // SAFETY: live filters and valid out-pointers.
    let d = analysis(|o, l, e| unsafe { fvm_filter_diff(before.0, after.0, o, l, e) }).unwrap();
    assert_eq!(d["verdict"], "different");
    assert_eq!(d["exact"], true);
    assert!(d["first_only"].is_null());
    let only_after = d["second_only"].to_string();
    let mut error = std::ptr::null_mut();
    // SAFETY: live filters, `only_after.len()` bytes.
    unsafe {
        assert_eq!(
            fvm_filter_matches_json(after.0, only_after.as_ptr(), only_after.len(), &mut error),
            FVM_MATCH
        );
        assert_eq!(
            fvm_filter_matches_json(before.0, only_after.as_ptr(), only_after.len(), &mut error),
            FVM_NO_MATCH
        );
    }
    assert_eq!(d["keys"][0]["key"], "amount");
    // SAFETY: as above.
    let same = analysis(|o, l, e| unsafe { fvm_filter_diff(after.0, after.0, o, l, e) }).unwrap();
    assert_eq!(same["verdict"], "same");

    // A filter loaded from bytes carries its IR: it is analysed like the original.
    // Errors: two message models, NULL arguments.
    // SAFETY: as above.
    let e = analysis(|o, l, e| unsafe { fvm_filter_diff(before.0, never.0, o, l, e) }).unwrap_err();
    assert_eq!(
        e,
        (FVM_ERR_ARGUMENT, vec!["ANALYSIS_MODEL_MISMATCH".to_owned()])
    );
    let loaded = {
        let (mut bytes, mut len, mut error) = (std::ptr::null_mut(), 0usize, std::ptr::null_mut());
        let mut out = std::ptr::null_mut();
        // SAFETY: a live filter, valid out-pointers; the buffer freed once.
        unsafe {
            assert_eq!(
                fvm_filter_to_bytes(before.0, &mut bytes, &mut len, &mut error),
                FVM_OK
            );
            assert_eq!(
                fvm_filter_from_bytes(bytes, len, &mut out, &mut error),
                FVM_OK
            );
            fvm_bytes_free(bytes, len);
        }
        Filter(out)
    };
    // SAFETY: as above.
    let d = analysis(|o, l, e| unsafe { fvm_filter_diff(loaded.0, before.0, o, l, e) }).unwrap();
    assert_eq!(d["verdict"], "same");
    // SAFETY: NULL filters are refused before any use.
    let e = analysis(|o, l, e| unsafe { fvm_filter_diff(std::ptr::null(), after.0, o, l, e) })
        .unwrap_err();
    assert_eq!(e, (FVM_ERR_ARGUMENT, vec!["INVALID_ARGUMENT".to_owned()]));
}

/// `fvm_filter_diff_assuming`: an sns body policy and the same EventBridge pattern differ on
/// some document (a member named twice), are the same on canonical documents without arrays
/// (named in the answer), and an unknown assumption is an argument error.
#[test]
fn diff_assuming_names_what_it_assumed_through_c() {
    let sns = Filter::compile(
        "sns",
        r#"{"state": ["running"]}"#,
        Some(r#"{"scope": "MessageBody"}"#),
    );
    let eb = Filter::compile("eventbridge", r#"{"state": ["running"]}"#, None);
    // SAFETY: live filters and valid out-pointers; a NULL `assume` assumes nothing.
    let d = analysis(|o, l, e| unsafe {
        fvm_filter_diff_assuming(sns.0, eb.0, std::ptr::null(), o, l, e)
    })
    .unwrap();
    assert_eq!(d["verdict"], "different");
    assert!(d.get("assuming").is_none(), "{d}");
    let both = CString::new("canonical-documents,no-arrays").unwrap();
    // SAFETY: as above, `both` NUL-terminated.
    let d = analysis(|o, l, e| unsafe {
        fvm_filter_diff_assuming(sns.0, eb.0, both.as_ptr(), o, l, e)
    })
    .unwrap();
    assert_eq!(d["verdict"], "same", "{d}");
    assert_eq!(
        d["assuming"],
        serde_json::json!(["canonical-documents", "no-arrays"])
    );
    let bad = CString::new("tidy").unwrap();
    // SAFETY: as above.
    let e =
        analysis(|o, l, e| unsafe { fvm_filter_diff_assuming(sns.0, eb.0, bad.as_ptr(), o, l, e) })
            .unwrap_err();
    assert_eq!(
        e,
        (FVM_ERR_ARGUMENT, vec!["ANALYSIS_ASSUMPTION".to_owned()])
    );
}

//! `fvm_attribute` arrays through `fvm_filter_matches`: filters that read a few named attributes
//! look them up by name, the others walk every attribute; either way the verdict or code is the
//! Rust library's on the same attributes, and every attribute's pointers and type are checked
//! whatever the filter reads (README, "Attributes a filter does not read").

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    unsafe_code
)]

use filtervm::{AttributeType, Dialect, Message, Options};
use filtervm_capi::*;
use std::ffi::{CStr, CString, c_char};

/// A filter compiled through `fvm_compile`.
struct Filter(*mut FvmFilter);

impl Filter {
    fn compile(dialect: &str, policy: &str) -> Filter {
        let dialect = CString::new(dialect).unwrap();
        let mut out = std::ptr::null_mut();
        let mut error = std::ptr::null_mut();
        // SAFETY: valid pointers and lengths for the call.
        let status = unsafe {
            fvm_compile(
                dialect.as_ptr(),
                policy.as_ptr(),
                policy.len(),
                std::ptr::null(),
                0,
                &mut out,
                &mut error,
            )
        };
        assert_eq!(status, FVM_OK, "{policy}");
        Filter(out)
    }

    /// `match`, `no-match`, or the error's code and message.
    fn matches(&self, attributes: &[FvmAttribute]) -> String {
        let message = FvmMessage {
            parts: FVM_PART_ATTRIBUTES,
            json: std::ptr::null(),
            json_len: 0,
            body: std::ptr::null(),
            body_len: 0,
            attributes: attributes.as_ptr(),
            attribute_count: attributes.len(),
            headers: std::ptr::null(),
            header_count: 0,
        };
        let mut error = std::ptr::null_mut();
        // SAFETY: a live filter, a message valid for the call.
        let status = unsafe { fvm_filter_matches(self.0, &message, &mut error) };
        match status {
            FVM_MATCH => "match".to_owned(),
            FVM_NO_MATCH => "no-match".to_owned(),
            // SAFETY: a live error, freed once.
            _ => unsafe {
                let code = CStr::from_ptr(fvm_error_code(error, 0)).to_str().unwrap();
                let text = CStr::from_ptr(fvm_error_message(error, 0, std::ptr::null_mut()))
                    .to_str()
                    .unwrap();
                let out = format!("{code}: {text}");
                fvm_error_free(error);
                out
            },
        }
    }
}

impl Drop for Filter {
    fn drop(&mut self) {
        // SAFETY: made by `fvm_compile`, freed once.
        unsafe { fvm_filter_free(self.0) };
    }
}

fn attribute(name: &[u8], data_type: &CStr, value: &[u8]) -> FvmAttribute {
    FvmAttribute {
        name: name.as_ptr(),
        name_len: name.len(),
        data_type: data_type.as_ptr(),
        value: value.as_ptr(),
        value_len: value.len(),
    }
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Policies reading one, two, four and five named attributes (looked up or walked), every
/// attribute (`exists: false`), and basaltic's (every attribute's type).
const POLICIES: &[(&str, &str)] = &[
    ("sns", r#"{"a": ["x"]}"#),
    (
        "sns",
        r#"{"a": [{"prefix": "x"}], "n": [{"numeric": [">", 1]}]}"#,
    ),
    (
        "sns",
        r#"{"$or": [{"a": ["x", "y"], "b": [{"exists": true}]}, {"n": [{"numeric": [">", 1]}], "s": ["x"]}]}"#,
    ),
    (
        "sns",
        r#"{"$or": [{"a": [{"anything-but": "q"}], "b": [{"exists": true}]}, {"n": [{"numeric": [">=", 0]}], "s": ["x"], "t": [{"exists": true}]}]}"#,
    ),
    ("sns", r#"{"a": ["x"], "zz": [{"exists": false}]}"#),
    ("sns", "{}"),
    ("basaltic", r#"{"a": ["x"]}"#),
];

/// A type name of C (every name a `String`, `Number`, `String.Array`, `Binary`, or not a type).
const TYPES: &[&str] = &["String", "Number", "String.Array", "Binary", "Strung"];

#[test]
fn looked_up_and_walked_attributes_give_the_rust_librarys_verdicts() {
    let filters: Vec<(Filter, filtervm::Filter)> = POLICIES
        .iter()
        .map(|(d, p)| {
            let dialect: Dialect = d.parse().unwrap();
            (
                Filter::compile(d, p),
                filtervm::Filter::new(Options::from(dialect), p).unwrap(),
            )
        })
        .collect();
    // Each type name once, and again at another address: the pointer cache sees both.
    let types: Vec<CString> = TYPES
        .iter()
        .chain(TYPES)
        .map(|t| CString::new(*t).unwrap())
        .collect();
    let names: [&[u8]; 8] = [b"a", b"b", b"n", b"s", b"t", b"u", b"zz", b"\xffa"];
    let values: [&[u8]; 8] = [b"x", b"y", b"2", b" 1 ", b"[1]", b"[\"x\"]", b"", b"x\xff"];
    let mut rng = Rng(8);
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..3000 {
        let n = rng.below(12);
        let chosen: Vec<(usize, usize, usize)> = (0..n)
            .map(|_| {
                // Unknown types are rare, so most messages are judged.
                let t = if rng.below(8) == 0 { 4 } else { rng.below(4) };
                (
                    rng.below(names.len()),
                    t + 5 * rng.below(2),
                    rng.below(values.len()),
                )
            })
            .collect();
        let c: Vec<FvmAttribute> = chosen
            .iter()
            .map(|&(n, t, v)| attribute(names[n], &types[t], values[v]))
            .collect();
        let unknown = chosen.iter().any(|&(_, t, _)| t % 5 == 4);
        let rust: Vec<(&[u8], AttributeType, &[u8])> = chosen
            .iter()
            .filter(|&&(_, t, _)| t % 5 != 4)
            .map(|&(n, t, v)| {
                let data_type = AttributeType::from_name(TYPES[t % 5]).unwrap();
                (names[n], data_type, values[v])
            })
            .collect();
        for (i, (c_filter, rust_filter)) in filters.iter().enumerate() {
            let got = c_filter.matches(&c);
            let want = if unknown {
                "INVALID_MESSAGE".to_owned()
            } else {
                match rust_filter.matches(&Message::attributes(&rust[..])) {
                    Ok(true) => "match".to_owned(),
                    Ok(false) => "no-match".to_owned(),
                    Err(e) => e.code.as_str().to_owned(),
                }
            };
            let got_code = got.split(':').next().unwrap();
            assert_eq!(got_code, want, "{}: {chosen:?}: {got}", POLICIES[i].1);
            *seen.entry((i, got_code.to_owned())).or_insert(0) += 1;
        }
    }
    // Every filter matched some message and failed to match another (`{}` matches every
    // message it can read); every filter saw an unreadable one.
    for (i, (_, policy)) in POLICIES.iter().enumerate() {
        for verdict in ["match", "no-match", "INVALID_MESSAGE"] {
            if verdict != "no-match" || *policy != "{}" {
                assert!(seen.contains_key(&(i, verdict.to_owned())), "{i} {verdict}");
            }
        }
    }
}

/// An attribute whose pointers cannot be read, or without a type, is an argument error whatever
/// the filter reads: the first such attribute is named; an unknown type before it does not hide
/// it.
#[test]
fn unreadable_attributes_are_argument_errors_even_when_no_filter_reads_them() {
    let one = Filter::compile("sns", r#"{"a": ["x"]}"#);
    let string = CString::new("String").unwrap();
    let strung = CString::new("Strung").unwrap();
    let good = || attribute(b"a", &string, b"x");
    let null_value = || FvmAttribute {
        value: std::ptr::null(),
        ..attribute(b"other", &string, b"xy")
    };
    let null_name = || FvmAttribute {
        name: std::ptr::null(),
        ..attribute(b"other", &string, b"x")
    };
    let null_type = || FvmAttribute {
        data_type: std::ptr::null::<c_char>(),
        ..attribute(b"other", &string, b"x")
    };
    let unknown = || attribute(b"c", &strung, b"x");
    assert_eq!(one.matches(&[good()]), "match");
    for (attributes, message) in [
        (
            vec![good(), null_value()],
            "an attribute value is NULL with a length of 2",
        ),
        (
            vec![null_name(), good()],
            "an attribute name is NULL with a length of 5",
        ),
        (vec![good(), null_type()], "an attribute type is NULL"),
        (vec![null_type(), null_value()], "an attribute type is NULL"),
        (
            vec![null_value(), null_type()],
            "an attribute value is NULL",
        ),
        (
            vec![unknown(), good(), null_value()],
            "an attribute value is NULL",
        ),
        (vec![unknown(), null_name()], "an attribute name is NULL"),
        (
            vec![null_type(), good(), good(), good()],
            "an attribute type is NULL",
        ),
    ] {
        let got = one.matches(&attributes);
        assert!(got.starts_with("INVALID_ARGUMENT: "), "{got}");
        assert!(got.contains(message), "{got} ≠ {message}");
    }
    // An unknown type: the message cannot be read by filters of attributes, read or not.
    let got = one.matches(&[good(), unknown()]);
    assert!(got.starts_with("INVALID_MESSAGE: attribute `c`"), "{got}");
}

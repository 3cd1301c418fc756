//! The JSON reader's grammar: every error kind with its offset and message, every escape, the
//! number grammar's edge cases, lone surrogates in both readers, and hostile depth.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed index or assertion is a test failure"
)]

use filtervm_vm::json::{
    self, Error, ErrorKind, Extractor, LoneSurrogates, Node, ParseOptions, Selector, Value,
};
use std::time::{Duration, Instant};

fn err(input: &[u8]) -> Error {
    json::parse(input).expect_err(&String::from_utf8_lossy(input))
}

/// `input` fails with `kind` at `offset` in the policy reader, the message reader and validation.
#[track_caller]
fn fails(input: &[u8], kind: ErrorKind, offset: usize) -> Error {
    let e = err(input);
    assert_eq!(
        (e.kind(), e.offset()),
        (kind, offset),
        "{:?}: {e}",
        String::from_utf8_lossy(input)
    );
    let v = json::validate(input, LoneSurrogates::Reject).unwrap_err();
    assert_eq!(
        v,
        e,
        "validate disagrees on {:?}",
        String::from_utf8_lossy(input)
    );
    if kind != ErrorKind::LoneSurrogate {
        let mut x = Extractor::new();
        let m = x.extract(&Selector::body_paths(["a"]), input).unwrap_err();
        assert_eq!(
            m,
            e,
            "extract disagrees on {:?}",
            String::from_utf8_lossy(input)
        );
    }
    e
}

#[test]
fn unexpected_end_at_the_input_length() {
    let e = fails(b"", ErrorKind::UnexpectedEnd, 0);
    assert_eq!(
        e.to_string(),
        "unexpected end of input at byte 0 (expected a value)"
    );
    fails(b"   ", ErrorKind::UnexpectedEnd, 3);
    fails(b"[1,", ErrorKind::UnexpectedEnd, 3);
    fails(b"[1", ErrorKind::UnexpectedEnd, 2);
    fails(br#"{"a""#, ErrorKind::UnexpectedEnd, 4);
    fails(br#"{"a":"#, ErrorKind::UnexpectedEnd, 5);
    fails(br#"{"a":1"#, ErrorKind::UnexpectedEnd, 6);
    let e = fails(br#"["abc"#, ErrorKind::UnexpectedEnd, 5);
    assert_eq!(
        e.to_string(),
        "unexpected end of input at byte 5 (expected `\"` to close the string)"
    );
    fails(br#""\"#, ErrorKind::UnexpectedEnd, 2);
    fails(br#""\u12"#, ErrorKind::UnexpectedEnd, 5);
    fails(b"[[[[[[[[", ErrorKind::UnexpectedEnd, 8);
}

#[test]
fn unexpected_characters_name_what_was_expected() {
    let e = fails(br#"{"items": [1, 2,]}"#, ErrorKind::UnexpectedCharacter, 16);
    assert_eq!(
        e.to_string(),
        "unexpected `]` at byte 16 (expected a value)"
    );
    let e = fails(br#"{"a": 1,}"#, ErrorKind::UnexpectedCharacter, 8);
    assert_eq!(
        e.to_string(),
        "unexpected `}` at byte 8 (expected a member name)"
    );
    let e = fails(b"[1 2]", ErrorKind::UnexpectedCharacter, 3);
    assert_eq!(
        e.to_string(),
        "unexpected `2` at byte 3 (expected `,` or `]`)"
    );
    fails(br#"{"a": 1 "b": 2}"#, ErrorKind::UnexpectedCharacter, 8);
    fails(br#"{"a" 1}"#, ErrorKind::UnexpectedCharacter, 5);
    fails(b"{1: 2}", ErrorKind::UnexpectedCharacter, 1);
    fails(b"{'a': 2}", ErrorKind::UnexpectedCharacter, 1);
    fails(b"]", ErrorKind::UnexpectedCharacter, 0);
    fails(b"[,1]", ErrorKind::UnexpectedCharacter, 1);
    fails(b".5", ErrorKind::UnexpectedCharacter, 0);
    fails(b"+1", ErrorKind::UnexpectedCharacter, 0);
    fails(b"True", ErrorKind::UnexpectedCharacter, 0);
    fails(b"[1]\n[", ErrorKind::TrailingCharacters, 4);
    // No byte-order mark, no comments, no exotic white space.
    fails("\u{feff}{}".as_bytes(), ErrorKind::UnexpectedCharacter, 0);
    fails(b"[1 /* c */]", ErrorKind::UnexpectedCharacter, 3);
    let e = fails(b"[\x0c1]", ErrorKind::UnexpectedCharacter, 1);
    assert_eq!(
        e.to_string(),
        "unexpected character U+000C at byte 1 (expected a value)"
    );
    fails("[\u{a0}1]".as_bytes(), ErrorKind::UnexpectedCharacter, 1);
    let e = fails("[é]".as_bytes(), ErrorKind::UnexpectedCharacter, 1);
    assert_eq!(e.to_string(), "unexpected `é` at byte 1 (expected a value)");
}

#[test]
fn trailing_characters_after_the_value() {
    let e = fails(b"{} x", ErrorKind::TrailingCharacters, 3);
    assert_eq!(
        e.to_string(),
        "unexpected `x` after the JSON value at byte 3"
    );
    fails(b"1 2", ErrorKind::TrailingCharacters, 2);
    fails(b"[1]]", ErrorKind::TrailingCharacters, 3);
    fails(b"nullnull", ErrorKind::TrailingCharacters, 4);
    fails(b"\"a\"\"b\"", ErrorKind::TrailingCharacters, 3);
    fails(b"0\x00", ErrorKind::TrailingCharacters, 1);
    assert!(json::parse(b" \t\r\n[ 1 , { \"a\" : 2 } ] \t\r\n").is_ok());
}

#[test]
fn invalid_utf8_inside_and_outside_strings() {
    let e = fails(b"[\"ok\", \"caf\xc3\"]", ErrorKind::InvalidUtf8, 11);
    assert_eq!(e.to_string(), "invalid UTF-8 in a string at byte 11");
    fails(b"\"\xff\"", ErrorKind::InvalidUtf8, 1);
    // Overlong encodings, UTF-8-encoded surrogates and truncated sequences.
    fails(b"\"\xc0\x80\"", ErrorKind::InvalidUtf8, 1);
    fails(b"\"\xed\xa0\x80\"", ErrorKind::InvalidUtf8, 1);
    fails(b"\"ab\xe2\x82", ErrorKind::InvalidUtf8, 3);
    fails(b"{\"\xff\": 1}", ErrorKind::InvalidUtf8, 2);
    let e = fails(b"[1, \xff]", ErrorKind::InvalidUtf8, 4);
    assert_eq!(e.to_string(), "invalid UTF-8 at byte 4");
    fails(b"[1] \xff", ErrorKind::InvalidUtf8, 4);
    // An earlier syntax error is reported first.
    fails(b"[1 x \"\xff\"]", ErrorKind::UnexpectedCharacter, 3);
    // Valid multi-byte text is fine, in names too.
    let v = json::parse("{\"日本\": \"€😀\"}".as_bytes()).unwrap();
    assert_eq!(v.get("日本").and_then(Value::as_str), Some("€😀"));
}

#[test]
fn raw_control_characters_in_strings() {
    let e = fails(b"[\"a\nb\"]", ErrorKind::ControlCharacter, 3);
    assert_eq!(
        e.to_string(),
        "unescaped control character U+000A in a string at byte 3 (write it as \\u000a)"
    );
    fails(b"\"\x00\"", ErrorKind::ControlCharacter, 1);
    fails(b"\"\x1f\"", ErrorKind::ControlCharacter, 1);
    fails(b"{\"a\tb\": 1}", ErrorKind::ControlCharacter, 3);
    // DEL and C1 controls are not JSON control characters.
    assert_eq!(
        json::parse("\"\x7f\u{85}\"".as_bytes()).unwrap(),
        Value::from("\x7f\u{85}")
    );
    // Long strings: the control character is found past the first eight-byte words.
    let mut long = b"\"".to_vec();
    long.extend_from_slice(&[b'x'; 37]);
    long.push(0x01);
    long.extend_from_slice(b"\"");
    fails(&long, ErrorKind::ControlCharacter, 38);
}

#[test]
fn invalid_escapes() {
    let e = fails(br#"["\x"]"#, ErrorKind::InvalidEscape, 2);
    assert_eq!(e.to_string(), r"invalid escape `\x` at byte 2");
    let e = fails(br#""\u12g4""#, ErrorKind::InvalidEscape, 1);
    assert_eq!(
        e.to_string(),
        r"invalid escape at byte 1: `\u` must be followed by four hex digits"
    );
    fails(br#""\U0041""#, ErrorKind::InvalidEscape, 1);
    fails(br#""\'""#, ErrorKind::InvalidEscape, 1);
    fails(br#""\u 123""#, ErrorKind::InvalidEscape, 1);
    fails(b"\"\\\xc3\xa9\"", ErrorKind::InvalidEscape, 1);
    fails(br#"{"a\q": 1}"#, ErrorKind::InvalidEscape, 3);
}

#[test]
fn every_escape_decodes() {
    let v = json::parse(br#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00\uDBFF\uDFFF\u0000""#)
        .unwrap();
    assert_eq!(v, Value::from("\"\\/\u{8}\u{c}\n\r\tAé€😀\u{10FFFF}\u{0}"));
    // Escaped names are decoded and looked up by their value.
    let v = json::parse(br#"{"\u0061\n": 1}"#).unwrap();
    assert!(v.get("a\n").is_some());
    // The message reader decodes them the same way.
    let mut x = Extractor::new();
    let selector = Selector::body_paths(["a\n"]);
    let doc = x
        .extract(&selector, br#"{"\u0061\n": "\ud83d\ude00\t", "b": 1}"#)
        .unwrap();
    assert_eq!(doc.get("a\n"), Some(&Node::String("😀\t")));
}

#[test]
fn lone_surrogates_are_rejected_in_policies_and_replaced_in_messages() {
    let e = fails(br#"{"a": "x\ud800"}"#, ErrorKind::LoneSurrogate, 8);
    assert_eq!(e.to_string(), r"lone surrogate `\ud800` at byte 8");
    fails(br#""\udc00""#, ErrorKind::LoneSurrogate, 1);
    fails(br#""\ud800\u0041""#, ErrorKind::LoneSurrogate, 1);
    fails(br#""\ud800\ud800\udc00""#, ErrorKind::LoneSurrogate, 1);
    fails(br#""\udc00\ud800""#, ErrorKind::LoneSurrogate, 1);
    fails(br#"{"\uDFFF": 1}"#, ErrorKind::LoneSurrogate, 2);

    let mut options = ParseOptions::default();
    options.lone_surrogates = LoneSurrogates::Replace;
    let cases: [(&[u8], &str); 6] = [
        (br#""\ud800""#, "\u{FFFD}"),
        (br#""\udc00x""#, "\u{FFFD}x"),
        (br#""\ud800\u0041""#, "\u{FFFD}A"),
        (br#""\ud800\ud800\udc00""#, "\u{FFFD}\u{10000}"),
        (br#""\udc00\ud800""#, "\u{FFFD}\u{FFFD}"),
        (br#""\ud800\n""#, "\u{FFFD}\n"),
    ];
    for (input, expected) in cases {
        assert_eq!(
            json::parse_with(input, &options).unwrap(),
            Value::from(expected)
        );
        assert!(json::validate(input, LoneSurrogates::Replace).is_ok());
    }
    // A message body with a lone surrogate in an unrelated member is judged, and a wanted one
    // reads as U+FFFD.
    let mut x = Extractor::new();
    let selector = Selector::body_paths(["a"]);
    let doc = x
        .extract(&selector, br#"{"other": "\ud800", "a": "b\udfffc"}"#)
        .unwrap();
    assert_eq!(doc.to_string(), "{\"a\":\"b\u{FFFD}c\"}");
}

#[test]
fn number_grammar() {
    for ok in [
        "0",
        "-0",
        "1",
        "-1",
        "10",
        "1.5",
        "1.50",
        "0.0",
        "-0.0e-0",
        "1e5",
        "1E5",
        "1e+5",
        "1e-5",
        "1.5E300",
        "1e400",
        "-1e-400",
        "123456789012345678901234567890",
        "0.000000000000000000000000000001",
    ] {
        let v = json::parse(ok.as_bytes()).unwrap();
        assert_eq!(v.as_number().map(|n| n.as_str()), Some(ok), "{ok}");
        assert_eq!(v.to_string(), ok);
    }
    let bad: [(&str, ErrorKind, usize); 16] = [
        ("01", ErrorKind::InvalidNumber, 1),
        ("-01", ErrorKind::InvalidNumber, 2),
        ("00", ErrorKind::InvalidNumber, 1),
        ("-", ErrorKind::InvalidNumber, 1),
        ("-a", ErrorKind::InvalidNumber, 1),
        ("- 1", ErrorKind::InvalidNumber, 1),
        ("1.", ErrorKind::InvalidNumber, 2),
        ("1.e5", ErrorKind::InvalidNumber, 2),
        ("1e", ErrorKind::InvalidNumber, 2),
        ("1e+", ErrorKind::InvalidNumber, 3),
        ("1e-x", ErrorKind::InvalidNumber, 3),
        ("1x", ErrorKind::InvalidNumber, 1),
        ("1.2.3", ErrorKind::InvalidNumber, 3),
        ("0x10", ErrorKind::InvalidNumber, 1),
        ("[1_000]", ErrorKind::InvalidNumber, 2),
        ("[-Infinity]", ErrorKind::InvalidNumber, 2),
    ];
    for (input, kind, offset) in bad {
        fails(input.as_bytes(), kind, offset);
    }
    assert_eq!(
        err(b"01").to_string(),
        "invalid number at byte 1: expected no digit after a leading `0`"
    );
    assert_eq!(
        err(b"[1.]").to_string(),
        "invalid number at byte 3: expected a digit after `.`"
    );
    // NaN and Infinity are no literals.
    fails(b"NaN", ErrorKind::UnexpectedCharacter, 0);
    fails(b"Infinity", ErrorKind::UnexpectedCharacter, 0);
}

#[test]
fn literals() {
    assert_eq!(json::parse(b"true").unwrap(), Value::Bool(true));
    assert_eq!(json::parse(b"false").unwrap(), Value::Bool(false));
    assert_eq!(json::parse(b"null").unwrap(), Value::Null);
    let e = fails(b"[tru]", ErrorKind::InvalidLiteral, 1);
    assert_eq!(e.to_string(), "invalid literal at byte 1 (expected `true`)");
    fails(b"nul", ErrorKind::InvalidLiteral, 0);
    fails(b"fals", ErrorKind::InvalidLiteral, 0);
    fails(b"{\"a\": nil}", ErrorKind::InvalidLiteral, 6);
    fails(b"truex", ErrorKind::TrailingCharacters, 4);
}

/// `n` levels of `open`, then `inner`, then the closing brackets.
fn nested(open: &str, close: &str, n: usize, inner: &str) -> Vec<u8> {
    let mut s = open.repeat(n).into_bytes();
    s.extend_from_slice(inner.as_bytes());
    s.extend_from_slice(close.repeat(n).as_bytes());
    s
}

/// Runs `f` and checks it took less than `limit` (a quadratic reading of a million levels would
/// take hours).
fn timed<T>(limit: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < limit, "took {took:?}");
    out
}

const MILLION: usize = 1_000_000;

#[test]
fn a_million_levels_in_a_skipped_member_are_read_without_recursion() {
    let limit = Duration::from_secs(20);
    let mut body = br#"{"skip": "#.to_vec();
    body.extend(nested("[", "]", MILLION, "1"));
    body.extend_from_slice(br#", "deep": "#);
    body.extend(nested(r#"{"x": "#, "}", MILLION, "[]"));
    body.extend_from_slice(br#", "a": "kept"}"#);
    timed(limit, || {
        assert!(json::validate(&body, LoneSurrogates::Reject).is_ok());
    });
    let mut x = Extractor::new();
    let doc = timed(limit, || {
        x.extract(&Selector::body_paths(["a"]), &body)
            .unwrap()
            .to_string()
    });
    assert_eq!(doc, r#"{"a":"kept"}"#);
    let e = timed(limit, || json::parse(&body).unwrap_err());
    assert_eq!((e.kind(), e.offset()), (ErrorKind::TooDeep, 9 + 127));
    // Invalid deep input fails just as fast, wherever it goes wrong.
    let mut broken = nested("[", "]", MILLION, "1");
    let middle = broken.len() - MILLION / 2;
    broken[middle] = b'}';
    let e = timed(limit, || {
        json::validate(&broken, LoneSurrogates::Reject).unwrap_err()
    });
    assert_eq!(
        (e.kind(), e.offset()),
        (ErrorKind::UnexpectedCharacter, middle)
    );
    let unclosed = "[".repeat(MILLION);
    let e = timed(limit, || {
        x.extract(&Selector::body_paths(["a"]), unclosed.as_bytes())
            .unwrap_err()
    });
    assert_eq!((e.kind(), e.offset()), (ErrorKind::UnexpectedEnd, MILLION));
}

#[test]
fn a_million_levels_inside_a_wanted_path_keep_a_shallow_document() {
    let limit = Duration::from_secs(20);
    let mut x = Extractor::new();
    // SNS: arrays are transparent and flatten into one.
    let mut body = br#"{"a": "#.to_vec();
    body.extend(nested("[", "]", MILLION, r#"1, {"b": 2}, "s""#));
    body.push(b'}');
    let doc = timed(limit, || {
        x.extract(&Selector::body_paths(["a", "a.b"]), &body)
            .unwrap()
            .to_string()
    });
    assert_eq!(doc, r#"{"a":[1,{"b":2},"s"]}"#);
    // Objects continue only while a path does.
    let deep = nested(r#"{"a": "#, "}", MILLION, "1");
    let doc = timed(limit, || {
        x.extract(&Selector::body_paths(["a.a.a"]), &deep)
            .unwrap()
            .to_string()
    });
    assert_eq!(doc, r#"{"a":{"a":{"a":{}}}}"#);
    let doc = timed(limit, || {
        x.extract(&Selector::body_paths(["a.a.a"]), &deep[..deep.len() - 1])
            .unwrap_err()
    });
    assert_eq!(doc.kind(), ErrorKind::UnexpectedEnd);
    // Event Grid: a leaf array keeps its scalars only.
    let mut event = br#"{"data": {"v": "#.to_vec();
    event.extend(nested("[", "]", MILLION, "1"));
    event.extend_from_slice(br#"}, "subject": [0, [1], {"x": 2}]}"#);
    let doc = timed(limit, || {
        x.extract(&Selector::event(["subject"], [["v"]]), &event)
            .unwrap()
            .to_string()
    });
    assert_eq!(doc, r#"{"data":{"v":[]},"subject":[0]}"#);
}

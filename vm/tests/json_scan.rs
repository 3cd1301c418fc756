//! The word-at-a-time scanning of the JSON reader at its edges: strings whose special bytes
//! (escapes, control bytes, non-ASCII text, invalid UTF-8) sit at every offset of the words the
//! reader looks at, white space runs of every length, numbers at the end of the input and before
//! every kind of byte, nesting around the 64 levels the container stack keeps in one word, and
//! corruption at every byte of representative messages.
//!
//! Each input goes through the three paths over the bytes (the policy reader `parse`, which reads
//! events; `validate`, which skips; and the message reader `Extractor`, with a selector that keeps
//! and one that skips), which must agree with each other, with `serde_json` on what is JSON, and
//! with the offsets the grammar dictates.

#![expect(
    clippy::indexing_slicing,
    reason = "test code: a failed index is a test failure"
)]

use filtervm_vm::json::{self, Error, ErrorKind, Extractor, LoneSurrogates, Node, Selector};

/// The result of every reader on `input`: the error they agree on, or `Ok` with the document as
/// the message reader keeps it with `keep` (compact JSON).
fn read_all(input: &[u8], keep: &[&str]) -> Result<String, Error> {
    let shown = String::from_utf8_lossy(input);
    let validated = json::validate(input, LoneSurrogates::Replace);
    let mut x = Extractor::new();
    for skip_all in [&["absent"][..], &["a", "b.c"]] {
        let skipped = x
            .extract(&Selector::body_paths(skip_all), input)
            .map(|_| ());
        assert_eq!(
            skipped, validated,
            "extract {skip_all:?} vs validate on {shown:?}"
        );
    }
    // The policy reader also rejects lone surrogates, and nesting deeper than its owned tree.
    let parsed = json::parse(input).map(|_| ());
    match (&parsed, &validated) {
        (Err(e), _) if matches!(e.kind(), ErrorKind::TooDeep | ErrorKind::LoneSurrogate) => {}
        _ => assert_eq!(parsed, validated, "parse vs validate on {shown:?}"),
    }
    let kept = x
        .extract(&Selector::body_paths(keep), input)
        .map(|doc| doc.to_string());
    assert_eq!(
        kept.clone().map(|_| ()),
        validated,
        "extract {keep:?} on {shown:?}"
    );
    kept
}

/// Whether `serde_json` reads `input` as JSON. A number it cannot hold (beyond binary64, with its
/// default features) is grammatical JSON all the same: then the whole input is read again into
/// `IgnoredAny`, for which `serde_json` checks the grammar without holding any number.
fn serde_reads(input: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(input) {
        Ok(_) => true,
        Err(e) if e.to_string().starts_with("number out of range") => {
            serde_json::from_slice::<serde::de::IgnoredAny>(input).is_ok()
        }
        Err(_) => false,
    }
}

/// A string's contents with `special` at `offset` among `len` bytes of plain ASCII text.
fn text_with(len: usize, offset: usize, special: &[u8]) -> Vec<u8> {
    let mut text: Vec<u8> = (0..len).map(|i| b"abcdefgh-_.#~ 12"[i % 16]).collect();
    text.splice(offset..offset, special.iter().copied());
    text
}

/// What stands inside strings: escapes (with the text they decode to) and raw text.
const VALID: &[(&[u8], &str)] = &[
    (br#"\""#, "\""),
    (br"\\", "\\"),
    (br"\/", "/"),
    (br"\n", "\n"),
    (br"\t", "\t"),
    (br"\u00e9", "é"),
    (br"\u20AC", "€"),
    (br"\ud83d\ude00", "😀"),
    ("é".as_bytes(), "é"),
    ("€".as_bytes(), "€"),
    ("😀".as_bytes(), "😀"),
    (b"\x7f", "\u{7f}"),
];

/// Bytes that make a string invalid, with the error and its offset from the bad byte.
const INVALID: &[(&[u8], ErrorKind, usize)] = &[
    (b"\x00", ErrorKind::ControlCharacter, 0),
    (b"\x1f", ErrorKind::ControlCharacter, 0),
    (b"\n", ErrorKind::ControlCharacter, 0),
    (b"\xff", ErrorKind::InvalidUtf8, 0),
    (b"\xc3", ErrorKind::InvalidUtf8, 0),
    (b"\xe2\x82", ErrorKind::InvalidUtf8, 0),
    (b"\xed\xa0\x80", ErrorKind::InvalidUtf8, 0),
    (b"\xc0\x80", ErrorKind::InvalidUtf8, 0),
    (br"\x", ErrorKind::InvalidEscape, 0),
    (br"\u12g4", ErrorKind::InvalidEscape, 0),
];

#[test]
fn strings_with_a_special_byte_at_every_offset_of_the_words_read() {
    let mut checked = 0;
    for len in 0..=40 {
        for offset in 0..=len {
            for &(special, decoded) in VALID {
                let text = text_with(len, offset, special);
                let expected = {
                    let plain = String::from_utf8(text_with(len, offset, b"")).unwrap();
                    let (head, tail) = plain.split_at(offset);
                    format!("{head}{decoded}{tail}")
                };
                // As a kept value, a skipped value, an array element and a member name.
                let mut doc = br#"{"z": ["#.to_vec();
                doc.push(b'"');
                doc.extend_from_slice(&text);
                doc.extend_from_slice(br#""], "a": ""#);
                doc.extend_from_slice(&text);
                doc.extend_from_slice(br#"", ""#);
                doc.extend_from_slice(&text);
                doc.extend_from_slice(br#"": 1}"#);
                assert!(serde_reads(&doc), "{}", String::from_utf8_lossy(&doc));
                let kept = read_all(&doc, &["a"]).unwrap();
                let value: serde_json::Value = serde_json::from_str(&kept).unwrap();
                assert_eq!(value["a"], expected.as_str(), "{kept}");
                // A name the selector wants, spelled with the special in it.
                let kept = read_all(&doc, &[expected.as_str()]).unwrap();
                let value: serde_json::Value = serde_json::from_str(&kept).unwrap();
                assert_eq!(value[expected.as_str()], 1, "{kept}");
                checked += 1;
            }
            for &(bad, kind, delta) in INVALID {
                let text = text_with(len, offset, bad);
                for (prefix, suffix) in [
                    (&br#"{"a": ""#[..], &br#""}"#[..]),
                    (br#"{"z": ""#, br#""}"#),
                    (br#"{""#, br#"": 1}"#),
                    (br#"[1, ""#, br#""]"#),
                ] {
                    let doc = [prefix, &text, suffix].concat();
                    assert!(!serde_reads(&doc), "{}", String::from_utf8_lossy(&doc));
                    let e = read_all(&doc, &["a"]).unwrap_err();
                    assert_eq!(
                        (e.kind(), e.offset()),
                        (kind, prefix.len() + offset + delta),
                        "{}",
                        String::from_utf8_lossy(&doc)
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 15_000, "{checked}");
}

#[test]
fn strings_cut_short_at_every_length() {
    for len in 0..=40 {
        for special in [&b""[..], b"\\", br"\u12", "é".as_bytes(), b"\xe2\x82"] {
            let mut doc = br#"{"a": ""#.to_vec();
            doc.extend_from_slice(&text_with(len, len, special));
            let e = read_all(&doc, &["a"]).unwrap_err();
            // A UTF-8 sequence cut short is found at its start; anything else at the end.
            let expected = if special == b"\xe2\x82" {
                (ErrorKind::InvalidUtf8, doc.len() - 2)
            } else {
                (ErrorKind::UnexpectedEnd, doc.len())
            };
            assert_eq!(
                (e.kind(), e.offset()),
                expected,
                "{}",
                String::from_utf8_lossy(&doc)
            );
        }
    }
}

#[test]
fn white_space_runs_of_every_length_between_every_token() {
    let tokens: &[&str] = &[
        "{", r#""a""#, ":", "[", "1", ",", r#""s""#, ",", "true", "]", ",", r#""b""#, ":", "{",
        r#""c""#, ":", "-2.5e3", "}", ",", r#""d""#, ":", "null", "}",
    ];
    let runs = [
        "",
        " ",
        "  ",
        "   ",
        "\t",
        "\n",
        "\r\n",
        " \t\n\r ",
        "         ",
        "\x0c",
    ];
    for gap in 0..=tokens.len() {
        for run in runs {
            let mut doc = String::new();
            for (i, token) in tokens.iter().enumerate() {
                if i == gap {
                    doc.push_str(run);
                }
                doc.push_str(token);
            }
            if gap == tokens.len() {
                doc.push_str(run);
            }
            let result = read_all(doc.as_bytes(), &["a", "b.c"]);
            if run == "\x0c" {
                // Form feed is no JSON white space.
                let e = result.unwrap_err();
                assert_eq!(e.offset(), doc.find('\x0c').unwrap(), "{doc:?}");
            } else {
                assert_eq!(
                    result.unwrap(),
                    r#"{"a":[1,"s",true],"b":{"c":-2.5e3}}"#,
                    "{doc:?}"
                );
            }
        }
    }
}

#[test]
fn numbers_at_the_end_of_the_input_and_before_every_byte() {
    let numbers = [
        "0",
        "-0",
        "7",
        "-7",
        "10",
        "123456789",
        "1234567890123456789012345",
        "0.5",
        "-0.5",
        "1.25",
        "3.14159265358979323846",
        "1e5",
        "1E+5",
        "1e-5",
        "-1.5e10",
        "0e0",
        "01",
        "-01",
        "1.",
        "-",
        "-.5",
        ".5",
        "1e",
        "1e+",
        "1.e5",
        "+1",
        "1.2.3",
        "0x1",
        "1ee5",
        "00",
        "1234567.",
        "12345678.9",
        "123456789012345.1234567890123456",
    ];
    for number in numbers {
        // At the top level, alone (its end is the end of the input) and before white space.
        for doc in [
            number.to_owned(),
            format!("{number} "),
            format!("{number}\n"),
        ] {
            let result = read_all(doc.as_bytes(), &["a"]);
            assert_eq!(result.is_ok(), serde_reads(doc.as_bytes()), "{doc:?}");
            if let Ok(kept) = result {
                assert_eq!(kept, number);
            }
        }
        // In containers, before every byte that can and cannot follow a number.
        for next in [
            "", ",", "]", "}", " ", "x", ".", "e", "-", "+", "0", "\"", "\u{e9}",
        ] {
            for (prefix, suffix) in [("[", "]"), (r#"{"a": "#, "}"), (r#"{"z": "#, "}")] {
                let doc = format!("{prefix}{number}{next}{suffix}");
                let result = read_all(doc.as_bytes(), &["a"]);
                assert_eq!(result.is_ok(), serde_reads(doc.as_bytes()), "{doc:?}");
                if let Ok(kept) = result
                    && prefix.contains("\"a\"")
                {
                    // The kept text is the number's text, exactly.
                    let text = &doc[prefix.len()..];
                    let end = text
                        .find(|c: char| !"0123456789+-.eE".contains(c))
                        .unwrap_or(text.len());
                    assert_eq!(kept, format!(r#"{{"a":{}}}"#, &text[..end]), "{doc:?}");
                }
            }
        }
    }
}

/// `depth` containers, objects where `object(level)`, around `inner`.
fn nest(depth: usize, object: impl Fn(usize) -> bool, inner: &str) -> String {
    let mut doc = String::new();
    for level in 0..depth {
        doc.push_str(if object(level) { r#"{"a": "# } else { "[" });
    }
    doc.push_str(inner);
    for level in (0..depth).rev() {
        doc.push_str(if object(level) { "}" } else { "]" });
    }
    doc
}

#[test]
fn nesting_around_the_levels_the_stack_keeps_in_one_word() {
    let patterns: [fn(usize) -> bool; 4] = [
        |_| true,
        |_| false,
        |level| level % 2 == 0,
        |level| level % 3 == 1 || level == 64,
    ];
    for depth in (58..=70).chain(124..=132) {
        for object in patterns {
            let doc = nest(depth, object, r#"[1, {"b": 2}]"#);
            read_all(doc.as_bytes(), &["a.a"]).unwrap();
            assert!(serde_reads(doc.as_bytes()) || depth > 120);
            // The wrong closer at every level is found, and where.
            for level in 0..depth {
                let closers = doc.len() - depth;
                let at = closers + (depth - 1 - level);
                let mut bad = doc.clone().into_bytes();
                bad[at] = if bad[at] == b'}' { b']' } else { b'}' };
                let e = read_all(&bad, &["a.a"]).unwrap_err();
                assert_eq!(
                    (e.kind(), e.offset()),
                    (ErrorKind::UnexpectedCharacter, at),
                    "depth {depth}, level {level}"
                );
            }
        }
    }
}

#[test]
fn corruption_at_every_byte_of_representative_messages() {
    let messages: &[&[u8]] = &[
        br#"{"event":"order.cancelled","environment":"test","amount":1186.15,"region":"eu-west-1","subject":"users.ap.deleted","customer":"c82415","priority":0,"source":"web"}"#,
        br#"{"type": "Feature", "properties": {"MAPBLKLOT": "1974125", "STREET": "CHGFKJC", "BLOCK_NUM": "1974"}, "geometry": {"type": "Polygon", "coordinates": [[[-122.43383698549171, 37.77906066796271, 0.0], [-122.434382, 37.779014525014425, 0.0]]]}}"#,
        "{\"a\": [\"\\u00e9\\n\", \"日本\", {\"b\": [true, false, null, -0.0e-0]}], \"c\": {}, \"d\": [], \"e\": \"\\ud83d\\ude00\"}".as_bytes(),
    ];
    let replacements = b"{}[],:\" \\0-.eEtfnu\x01\x1f\xff\xc3\xe2";
    let mut rejected = 0;
    for message in messages {
        read_all(message, &["event", "geometry.type", "a.b"]).unwrap();
        for at in 0..message.len() {
            let mut variants = vec![message[..at].to_vec()];
            let mut deleted = message.to_vec();
            deleted.remove(at);
            variants.push(deleted);
            for &b in replacements {
                let mut replaced = message.to_vec();
                replaced[at] = b;
                variants.push(replaced);
            }
            for doc in variants {
                let result = read_all(&doc, &["event", "geometry.type", "a.b"]);
                // `serde_json` rejects lone surrogates, as the policy reader does.
                assert_eq!(
                    json::parse(&doc).is_ok(),
                    serde_reads(&doc),
                    "{}",
                    String::from_utf8_lossy(&doc)
                );
                rejected += usize::from(result.is_err());
            }
        }
    }
    assert!(rejected > 5_000, "{rejected}");
}

#[test]
fn kept_texts_are_the_input_text_whether_converted_one_by_one_or_with_the_whole_input() {
    // One wanted leaf on a long input converts texts one by one; many wanted leaves on a short
    // input convert the whole input once. Both give the same texts, non-ASCII ones too.
    let long_tail = format!(r#", "pad": "{}""#, "x".repeat(2_000));
    for paths in [&["a"][..], &["a", "b", "c", "d", "e", "f"]] {
        for tail in ["", long_tail.as_str()] {
            let doc = format!(
                r#"{{"a": "ünïcode", "b": 1.50, "c": ["€", 2], "d": "x\ny", "e": -0, "f": true{tail}}}"#
            );
            let mut x = Extractor::new();
            let selector = Selector::body_paths(paths.iter().copied());
            let kept = x.extract(&selector, doc.as_bytes()).unwrap();
            let Node::Object(members) = kept else {
                panic!("{kept}")
            };
            let expected: serde_json::Value = serde_json::from_str(&doc).unwrap();
            for m in members {
                let value: serde_json::Value = serde_json::from_str(&m.value.to_string()).unwrap();
                assert_eq!(value, expected[m.name], "{}", m.name);
            }
            assert_eq!(members.len(), paths.len());
            // Each number keeps its text exactly.
            if paths.len() > 1 {
                assert_eq!(kept.get("b"), Some(&Node::Number("1.50")));
                assert_eq!(kept.get("e"), Some(&Node::Number("-0")));
            }
        }
    }
}

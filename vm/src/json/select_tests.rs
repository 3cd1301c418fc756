//! The message reader's two drivers agree: [`Extractor`] reads a top-level object's members by
//! one call of the reader's member loop and hands anything else to the general loop; read by the
//! general loop alone, every input gives the same pruned document, measured depth, first-name
//! note and error (kind, offset, message), in both read modes.

use super::{Extractor, ReadMode, Selector};
use crate::key::Key;

/// What one read gives, comparable: the document as text and its depth, or the error with its
/// message; and the first-name note.
type Outcome = (Result<(String, usize), (super::Error, String)>, bool);

/// A name test for the first-name note: the names `a` and `b` are listed.
fn listed(name: &[u8]) -> bool {
    name == b"a" || name == b"b"
}

fn read(x: &mut Extractor, selector: &Selector, input: &[u8], general: bool) -> Outcome {
    let (result, unlisted) = x.extract_by(selector, input, Some(listed), general);
    (
        result
            .map(|(node, deepest)| (node.to_string(), deepest))
            .map_err(|e| (e.clone(), e.to_string())),
        unlisted,
    )
}

/// Reads `input` with both drivers in `mode`; asserts they agree and returns the outcome.
fn both(selector: &Selector, mode: ReadMode, input: &[u8]) -> Outcome {
    let mut fast = Extractor::new();
    let mut general = Extractor::new();
    fast.set_read_mode(mode);
    general.set_read_mode(mode);
    let got = read(&mut fast, selector, input, false);
    let expected = read(&mut general, selector, input, true);
    assert_eq!(
        got,
        expected,
        "{mode:?}, {selector:?}: {}",
        String::from_utf8_lossy(input)
    );
    got
}

/// The selectors the tests read with: one-segment paths only (the common SNS shape), nested
/// paths, a dotted name's paths, EventBridge field paths, and the Event Grid selector.
fn selectors() -> Vec<Selector> {
    vec![
        Selector::body_paths(["a"]),
        Selector::body_paths(["a", "b", ""]),
        Selector::body_paths(["a", "a.b", "b"]),
        Selector::body_paths(["a.b.c", "x"]),
        Selector::for_keys(&[
            Key::FieldPath("a".into(), u32::MAX),
            Key::FieldPath("b.c".into(), u32::MAX),
        ]),
        Selector::event(["subject", "a"], [["a", "b"]]),
    ]
}

/// Hand-picked inputs: duplicates, escapes in names and values, nested wanted and unwanted
/// values, white space, numbers, literals, empty and non-object documents, and malformed input
/// of every kind the member loop reports.
const CASES: &[&str] = &[
    r#"{"a":1,"b":2}"#,
    r#"{"a":1,"b":2,"a":3}"#,
    r#"{"a":1,"a":[2,3],"a":4}"#,
    r#"{"a":{"b":1},"a":2}"#,
    r#"{"a":2,"a":{"b":1}}"#,
    r#"{"a":[1,[2,{"b":3}]],"b":{"c":[4]}}"#,
    r#"{"\u0061":1,"a":2}"#,
    r#"{"a":1,"\u0061":2}"#,
    r#"{"a\"b":1,"a\\":2,"\/a":3}"#,
    r#"{"a":"x\ny\u00e9\ud83d\ude00\ud800","b":"\"\\"}"#,
    r#"{"a.b":1,"a":{"b":2},"a.b.c":3,"a.":4,".a":5,"":6}"#,
    r#"{"x":{"a":1,"b":[{"a":2}]},"y":[[[{}]]],"a":true}"#,
    " \t\r\n{ \"a\" \t:\n 1 , \"b\"\r: [ 2 ] ,\"c\" : { } }\n ",
    r#"{"a":-0.5e+10,"b":0,"c":-1,"d":1E2,"a":12345678901234567890}"#,
    r#"{"a":true,"b":false,"c":null,"a":null}"#,
    r#"{"A":1,"Subject":"s","subject":"t","DATA":{"a":{"b":[1,{}]}}}"#,
    r#"{"é":1,"a":"é"}"#,
    "{}",
    " { } ",
    "[]",
    r#"[{"a":1}]"#,
    r#""a""#,
    "1",
    "-1.5",
    "true",
    "null",
    "",
    " ",
    "{",
    "}",
    r#"{"a""#,
    r#"{"a":"#,
    r#"{"a":1"#,
    r#"{"a":1,"#,
    r#"{"a":1,}"#,
    r#"{,"a":1}"#,
    r#"{"a" 1}"#,
    r#"{"a":1 "b":2}"#,
    r#"{"a":1]"#,
    r#"{"b":1]"#,
    r#"{a:1}"#,
    r#"{"a":01}"#,
    r#"{"b":01}"#,
    r#"{"a":1.}"#,
    r#"{"b":-}"#,
    r#"{"a":tru}"#,
    r#"{"b":nul}"#,
    r#"{"a":"x"#,
    r#"{"b":"x"#,
    r#"{"a":"\x"}"#,
    r#"{"b":"\x"}"#,
    r#"{"\x":1}"#,
    r#"{"a":"\u12"}"#,
    "{\"a\":\"\u{1}\"}",
    "{\"b\":\"\u{1}\"}",
    "{\"\u{1}\":1}",
    r#"{"a":1}x"#,
    r#"{"a":1}{}"#,
    r#"{"a":1} ,"#,
    r#"{"a":[1,2}"#,
    r#"{"b":[1,2}"#,
    r#"{"a":{"b":1]}"#,
    r#"{"b":{"c":1]}"#,
    r#"{"a":[}"#,
    r#"{"b":{"#,
    r#"{"a":1,"a"}"#,
];

#[test]
fn both_drivers_agree_on_chosen_inputs() {
    let mut errors = 0;
    for selector in &selectors() {
        for mode in [ReadMode::Validating, ReadMode::Trusted] {
            for case in CASES {
                errors += usize::from(both(selector, mode, case.as_bytes()).0.is_err());
            }
            // Bytes that are not UTF-8, in a name and in a value, wanted and not.
            for input in [
                &b"{\"a\":\"\xff\"}"[..],
                b"{\"b\":\"\xc3\"}",
                b"{\"\xff\":1}",
                b"{\"a\xe9\":1}",
                b"{\"a\":1,\xff}",
            ] {
                errors += usize::from(both(selector, mode, input).0.is_err());
            }
        }
    }
    // Most malformed cases are errors in both modes (the trusted one skips some unchecked).
    assert!(errors > 300, "{errors} errors");
}

/// What the reader keeps of some inputs, as the module documentation says: a repeated name's
/// last value at its first position, wanted containers kept by kind, escapes decoded.
#[test]
fn both_drivers_keep_what_the_documentation_says() {
    let flat = Selector::body_paths(["a", "b"]);
    let nested = Selector::body_paths(["a.b", "c"]);
    let doc = |selector: &Selector, mode, input: &str| match both(selector, mode, input.as_bytes())
    {
        (Ok((text, _)), _) => text,
        (Err((_, e)), _) => format!("error: {e}"),
    };
    for mode in [ReadMode::Validating, ReadMode::Trusted] {
        assert_eq!(
            doc(&flat, mode, r#"{"a":1,"x":2,"b":3,"a":4}"#),
            r#"{"a":4,"b":3}"#
        );
        assert_eq!(
            doc(&flat, mode, r#"{"a":[1,"y"],"b":{"c":1}}"#),
            r#"{"a":[1,"y"],"b":{}}"#
        );
        assert_eq!(
            doc(&flat, mode, r#"{"\u0062":"\u00e9","a":"\n"}"#),
            r#"{"b":"é","a":"\n"}"#
        );
        assert_eq!(doc(&flat, mode, r#"{"b":{"x":1},"b":2}"#), r#"{"b":2}"#);
        assert_eq!(
            doc(&flat, mode, r#"{"a":2,"b":{"x":1},"a":[3]}"#),
            r#"{"a":[3],"b":{}}"#
        );
        assert_eq!(
            doc(&nested, mode, r#"{"a":{"b":1,"c":2},"c":3,"a.b":4}"#),
            r#"{"a":{"b":1},"c":3,"a.b":4}"#
        );
        // No path continues below `a` or `b`: a dotted name is never wanted there.
        assert_eq!(doc(&flat, mode, r#"{"a.b":1,"b.":2,"a":3}"#), r#"{"a":3}"#);
        assert_eq!(doc(&flat, mode, "[1]"), "[]");
        assert_eq!(doc(&flat, mode, "{}"), "{}");
        assert_eq!(
            doc(&flat, mode, r#"{"a":1,}"#),
            "error: unexpected `}` at byte 7 (expected a member name)"
        );
        assert_eq!(
            doc(&flat, mode, r#"{"a":tru}"#),
            "error: invalid literal at byte 5 (expected `true`)"
        );
    }
    // Validating mode checks what it skips; trusted mode does not.
    assert!(doc(&flat, ReadMode::Validating, r#"{"x":tru,"a":1}"#).starts_with("error"));
    assert_eq!(
        doc(&flat, ReadMode::Trusted, r#"{"x":tru,"a":1}"#),
        r#"{"a":1}"#
    );
}

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// A random value: mostly objects whose names the selectors want, some not, with scalars of
/// every kind and white space here and there.
fn value(rng: &mut Rng, depth: usize, out: &mut String) {
    const NAMES: &[&str] = &[
        "a", "b", "c", "x", "a.b", "b.c", "", "\\u0061", "a\\\"", "A", "subject", "é",
    ];
    const SCALARS: &[&str] = &[
        "1",
        "-0.5",
        "1e3",
        "0",
        "true",
        "false",
        "null",
        "\"s\"",
        "\"\\u00e9\\n\"",
        "\"é\"",
        "\"\"",
    ];
    const WS: &[&str] = &["", "", "", " ", "\n\t"];
    match rng.below(if depth > 3 { 1 } else { 4 }) {
        0 => out.push_str(rng.pick(SCALARS)),
        1 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(rng.pick(WS));
                value(rng, depth + 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(6) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(rng.pick(WS));
                out.push('"');
                out.push_str(rng.pick(NAMES));
                out.push('"');
                out.push_str(rng.pick(WS));
                out.push(':');
                out.push_str(rng.pick(WS));
                value(rng, depth + 1, out);
            }
            out.push('}');
        }
    }
}

/// Random documents, some with a few random edits (so malformed anywhere), read with every
/// selector in both modes: the drivers agree on each.
#[test]
fn both_drivers_agree_on_random_and_corrupted_documents() {
    let selectors = selectors();
    let mut rng = Rng(0x5eed_f1a7);
    let (mut ok, mut errors) = (0, 0);
    for case in 0..6_000 {
        let mut text = String::new();
        value(&mut rng, if case % 4 == 0 { 1 } else { 0 }, &mut text);
        let mut bytes = text.into_bytes();
        for _ in 0..rng.below(3) {
            if bytes.is_empty() {
                break;
            }
            let at = rng.below(bytes.len());
            match rng.below(3) {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, bytes[at]),
                _ => bytes[at] = rng.pick(b"{}[],:\"\\ 0-.eEtfnu\x01\xff\xc3"),
            }
        }
        for selector in &selectors {
            for mode in [ReadMode::Validating, ReadMode::Trusted] {
                match both(selector, mode, &bytes).0 {
                    Ok(_) => ok += 1,
                    Err(_) => errors += 1,
                }
            }
        }
    }
    // Both kinds of outcome are exercised.
    assert!(ok > 20_000 && errors > 10_000, "{ok} read, {errors} errors");
}

/// Names looked up by their first byte ([`Selector`] states of four to twelve names) keep what
/// walking the names in order keeps: random selectors over names that share first bytes (at the
/// top level and one level down), random and corrupted documents over the same names, both read
/// modes, both drivers; the document, depth, error and note are the same.
#[test]
fn names_found_by_first_byte_are_the_names_found_in_order() {
    const NAMES: &[&str] = &[
        "a", "ab", "abc", "b", "ba", "", "é", "éa", "x", "subject", "sub", "A", "c", "cd",
    ];
    const SCALARS: &[&str] = &["1", "-0.5", "true", "null", "\"s\"", "\"é\"", "\"\""];
    fn object(rng: &mut Rng, depth: usize, out: &mut String) {
        out.push('{');
        for i in 0..rng.below(9) {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            match rng.below(12) {
                0 => out.push('o'),
                1 => out.push_str("\\u0061b"),
                _ => out.push_str(rng.pick(NAMES)),
            }
            out.push_str("\":");
            if depth < 2 && rng.below(6) == 0 {
                object(rng, depth + 1, out);
            } else {
                out.push_str(rng.pick(SCALARS));
            }
        }
        out.push('}');
    }
    let mut rng = Rng(0xf1a7_b17e);
    let (mut tables, mut ok, mut errors) = (0, 0, 0);
    for case in 0..3_000 {
        let mut paths: Vec<String> = Vec::new();
        for _ in 0..3 + rng.below(10) {
            let name = rng.pick(NAMES);
            if case % 3 == 0 && rng.below(2) == 0 {
                paths.push(format!("o.{name}"));
            } else {
                paths.push(name.to_owned());
            }
        }
        let selector = Selector::body_paths(&paths);
        tables += selector.first_tables();
        let walked = selector.clone().without_first_tables();
        for _ in 0..4 {
            let mut text = String::new();
            object(&mut rng, 0, &mut text);
            let mut bytes = text.into_bytes();
            if rng.below(4) == 0 && !bytes.is_empty() {
                let at = rng.below(bytes.len());
                bytes[at] = rng.pick(b"{}[],:\"\\ 0\xff");
            }
            for mode in [ReadMode::Validating, ReadMode::Trusted] {
                let got = both(&selector, mode, &bytes);
                let expected = both(&walked, mode, &bytes);
                assert_eq!(
                    got,
                    expected,
                    "{mode:?}, {paths:?}: {}",
                    String::from_utf8_lossy(&bytes)
                );
                match got.0 {
                    Ok(_) => ok += 1,
                    Err(_) => errors += 1,
                }
            }
        }
    }
    assert!(
        tables > 1_000 && ok > 10_000 && errors > 1_000,
        "{tables} first-byte tables, {ok} read, {errors} errors"
    );
}

/// What the text-conversion tests build their inputs of: ASCII (the first three), multi-byte
/// characters (the next three) and bytes that are not UTF-8 (the last two).
const TEXT_PIECES: [&[u8]; 8] = [
    b"a",
    b"\"",
    b"0",
    "é".as_bytes(),
    "€".as_bytes(),
    "😀".as_bytes(),
    b"\xff",
    b"\x80",
];

/// A buffer of `offset` filler bytes, then fewer than `most` pieces drawn from the first `kinds`
/// of [`TEXT_PIECES`]: the input is the buffer from `offset` on, so that inputs start at every
/// alignment of their allocation.
fn offset_input(rng: &mut Rng, offset: usize, most: usize, kinds: usize) -> Vec<u8> {
    let mut buffer = vec![b'x'; offset];
    for _ in 0..rng.below(most) {
        buffer.extend_from_slice(rng.pick(&TEXT_PIECES[..kinds]));
    }
    buffer
}

/// A kept text converted through an aligned window ([`super::select::aligned_text`]) is the text
/// `str::from_utf8` makes of its bytes alone, at the same address, whenever the window gives one;
/// the window gives one for every ASCII text (the fast path is taken) and never for bytes that
/// are not UTF-8. Texts at every offset and length up to 40, in inputs that start at every
/// alignment, next to multi-byte characters and bytes that are not UTF-8.
#[test]
fn texts_converted_through_an_aligned_window_are_the_texts_alone() {
    let mut rng = Rng(0xa119_7e47);
    let mut windows = 0;
    for case in 0..300 {
        let ascii_only = case % 3 == 0;
        let kinds = if ascii_only { 3 } else { TEXT_PIECES.len() };
        let buffer = offset_input(&mut rng, case % 8, 48, kinds);
        let input = buffer.get(case % 8..).unwrap_or_default();
        for start in 0..=input.len() {
            for len in 0..=40.min(input.len() - start) {
                let bytes = &input[start..start + len];
                let alone = std::str::from_utf8(bytes).ok();
                match super::select::aligned_text(input, start, len) {
                    Some(text) => {
                        windows += 1;
                        assert_eq!(Some(text), alone, "{input:?} {start} {len}");
                        assert_eq!(text.as_ptr(), bytes.as_ptr());
                    }
                    None => assert!(
                        !ascii_only,
                        "an ASCII text fell back: {input:?} {start} {len}"
                    ),
                }
            }
        }
    }
    assert!(windows > 10_000, "{windows} texts converted by a window");
}

/// A prefix converted for the kept texts ([`super::select::prefix_end`]) holds the text it is
/// made for and `reach` bytes (within the input), ends at a boundary of two words of memory,
/// the input's end, or past the bytes that continue a character there, and is UTF-8 whenever
/// the input is: the texts sliced from it are the texts converted alone, at their addresses.
#[test]
fn prefixes_converted_for_kept_texts_hold_them_and_stay_utf8() {
    let mut rng = Rng(0x3e1d_0b57);
    let mut sliced = 0;
    for case in 0..300 {
        // ASCII, UTF-8 with multi-byte characters, or bytes that are not UTF-8 as well.
        let kinds = [3, 6, TEXT_PIECES.len()][case % 3];
        let buffer = offset_input(&mut rng, case % 8, 160, kinds);
        let input = buffer.get(case % 8..).unwrap_or_default();
        let whole = std::str::from_utf8(input).ok();
        for reach in [0, 16, 96] {
            for end in 0..=input.len() {
                let to = super::select::prefix_end(input, end, reach);
                assert!(to >= end.max(reach).min(input.len()) && to <= input.len());
                let at = input.as_ptr().addr() + to;
                let continues = |i: usize| input.get(i).is_some_and(|&b| b & 0xC0 == 0x80);
                assert!(
                    to == input.len()
                        || (!continues(to) && (at.is_multiple_of(16) || continues(to - 1))),
                    "{input:?} {end} {reach} {to}"
                );
                let Some(whole) = whole else { continue };
                let prefix = std::str::from_utf8(&input[..to]);
                assert!(
                    prefix.is_ok(),
                    "a prefix of UTF-8 input is not: {input:?} {to}"
                );
                let Ok(prefix) = prefix else { continue };
                for start in (0..=end).filter(|&i| whole.is_char_boundary(i)) {
                    if !whole.is_char_boundary(end) {
                        break;
                    }
                    let text = prefix.get(start..end);
                    assert_eq!(text, whole.get(start..end));
                    assert_eq!(text.map(str::as_ptr), Some(input[start..].as_ptr()));
                    sliced += 1;
                }
            }
        }
    }
    assert!(sliced > 100_000, "{sliced} texts sliced from a prefix");
}

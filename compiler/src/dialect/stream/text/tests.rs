use super::*;
use crate::dialect::stream::{ast::PATTERN_CODE, json};

fn ok(text: &str) -> StreamFilter {
    match parse_text(text) {
        Ok(f) => f,
        Err(e) => panic!("{text:?} rejected: {e}"),
    }
}

fn err(text: &str) -> (ErrorCode, String) {
    match parse_text(text) {
        Ok(f) => panic!("{text:?} accepted: {f:?}"),
        Err(e) => match e.errors.first() {
            Some(pe) => (pe.code, pe.pointer.clone()),
            None => panic!("no error"),
        },
    }
}

fn pat(s: &str) -> SegmentPattern {
    match SegmentPattern::compile(s) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn spec_example_is_two_groups() {
    let f = ok("region = eu-* and subject = orders.*.created or priority >= 5");
    assert_eq!(f.groups.len(), 2);
    assert_eq!(f.groups.first().map(Vec::len), Some(2));
    assert_eq!(
        f.to_string(),
        "region = eu-* and subject = orders.*.created or priority >= 5"
    );
}

#[test]
fn same_filter_as_json_form() {
    let text = ok(
        r#"a = x and "b c" != "" or n in [p.*, "in", q] and h exists or k missing and z < -2.5"#,
    );
    let json = match json::parse(&(&serde_json::json!({"groups": [
            [{"op": "=", "header": "a", "values": ["x"]}, {"op": "!=", "header": "b c", "values": [""]}],
            [{"op": "in", "header": "n", "values": ["p.*", "in", "q"]}, {"op": "exists", "header": "h", "values": []}],
            [{"op": "missing", "header": "k"}, {"op": "<", "header": "z", "values": [-2.5]}]
        ]})).into()) {
            Ok(f) => f,
            Err(e) => panic!("{e}"),
        };
    assert_eq!(text, json);
    assert_eq!(
        text.to_string(),
        r#"a = x and "b c" != "" or n in [p.*, "in", q] and h exists or k missing and z < -2.5"#
    );
}

#[test]
fn tokens_that_look_like_numbers_are_patterns() {
    let f = ok("n = 5 and m = 1e+3 and k = -0");
    let g = f.groups.first().cloned().unwrap_or_default();
    let pats: Vec<String> = g
        .iter()
        .map(|c| match &c.cond {
            Cond::Eq(p) => p.source().to_owned(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(pats, ["5", "1e+3", "-0"]);
    assert_eq!(f.to_string(), r#"n = 5 and m = "1e+3" and k = -0"#);
}

#[test]
fn keywords_lowercase_only() {
    let f = ok("AND = OR and IN in [IN]");
    assert_eq!(f.to_string(), "AND = OR and IN in [IN]");
    assert_eq!(err("and = x").1, "bytes 0..3");
    assert_eq!(err("x = or").1, "bytes 4..6");
    let f = ok(r#""and" = "or""#);
    assert_eq!(f.to_string(), r#""and" = "or""#);
}

#[test]
fn quoting_never_makes_star_literal() {
    assert_eq!(ok(r#"h = "eu-*""#), ok("h = eu-*"));
    assert_eq!(
        err(r#"h = "a*b*""#),
        (PATTERN_CODE, "bytes 4..10".to_owned())
    );
}

#[test]
fn numbers_read_and_print_shortest() {
    let cases = [
        ("n < 1e21", "n < 1e21"),
        ("n < 1e+21", "n < 1e21"),
        ("n < 1000000000000000000000", "n < 1e21"),
        ("n < 5e-324", "n < 5e-324"),
        ("n < -0", "n < 0"),
        ("n < 0.10", "n < 0.1"),
        ("n < 1E3", "n < 1000"),
        ("n <= 9007199254740993", "n <= 9007199254740992"),
    ];
    for (input, canon) in cases {
        assert_eq!(ok(input).to_string(), canon, "{input}");
    }
    assert_eq!(err("n < 1e400"), (CODE, "bytes 4..9".to_owned()));
    assert_eq!(err("n < -1e+400"), (CODE, "bytes 4..11".to_owned()));
    assert_eq!(err("n < \"5\""), (CODE, "bytes 4..7".to_owned()));
    assert_eq!(err("n < abc"), (CODE, "bytes 4..7".to_owned()));
    assert_eq!(err("n < 05"), (CODE, "bytes 4..6".to_owned()));
    assert_eq!(err("n < +5").0, SYNTAX_CODE);
}

#[test]
fn error_spans() {
    assert_eq!(err(""), (CODE, "bytes 0..0".to_owned()));
    assert_eq!(err("  "), (CODE, "bytes 0..2".to_owned()));
    assert_eq!(err("h"), (SYNTAX_CODE, "bytes 1..1".to_owned()));
    assert_eq!(err("h == x"), (SYNTAX_CODE, "bytes 3..4".to_owned()));
    assert_eq!(err("h = café"), (SYNTAX_CODE, "bytes 7..9".to_owned()));
    assert_eq!(err("h = \"abc"), (SYNTAX_CODE, "bytes 4..8".to_owned()));
    assert_eq!(
        err("h = \"a\\qb\""),
        (SYNTAX_CODE, "bytes 4..10".to_owned())
    );
    assert_eq!(
        err("h = \"a\u{1}\""),
        (SYNTAX_CODE, "bytes 4..8".to_owned())
    );
    assert_eq!(err("\"\" exists"), (CODE, "bytes 0..2".to_owned()));
    assert_eq!(err("h in []"), (CODE, "bytes 5..7".to_owned()));
    assert_eq!(err("h in [a"), (SYNTAX_CODE, "bytes 5..7".to_owned()));
    assert_eq!(err("h in [a b]"), (SYNTAX_CODE, "bytes 8..9".to_owned()));
    assert_eq!(err("h in a"), (SYNTAX_CODE, "bytes 5..6".to_owned()));
    assert_eq!(err("h exists x"), (SYNTAX_CODE, "bytes 9..10".to_owned()));
    assert_eq!(
        err("h exists and"),
        (SYNTAX_CODE, "bytes 12..12".to_owned())
    );
    assert_eq!(err("h exists or"), (SYNTAX_CODE, "bytes 11..11".to_owned()));
    assert_eq!(err("h = a**"), (PATTERN_CODE, "bytes 4..7".to_owned()));
    let long = format!("h = {}", "a".repeat(257));
    assert_eq!(err(&long), (LIMIT_CODE, "bytes 4..261".to_owned()));
    assert!(parse_text(&format!("h = {}", "a".repeat(256))).is_ok());
    assert!(parse_text(&format!("h = \"{}\"", "\u{e9}".repeat(128))).is_ok());
    assert_eq!(
        err(&format!("h = \"{}\"", "\u{20ac}".repeat(100))).0,
        LIMIT_CODE
    );
}

#[test]
fn s14_bounds_in_text() {
    let groups: Vec<String> = (0..9).map(|i| format!("g = {i}")).collect();
    let text = groups.join(" or ");
    let start = text.find("g = 8").unwrap_or(0);
    assert_eq!(
        err(&text),
        (LIMIT_CODE, format!("bytes {start}..{}", text.len()))
    );
    assert!(parse_text(&groups[..8].join(" or ")).is_ok());
    let clauses: Vec<String> = (0..9).map(|i| format!("h{i} exists")).collect();
    let text = format!("{} or x exists", clauses.join(" and "));
    let start = text.find("h8").unwrap_or(0);
    assert_eq!(
        err(&text),
        (LIMIT_CODE, format!("bytes {start}..{}", text.len()))
    );
    let values: Vec<String> = (0..33).map(|i| format!("v{i}")).collect();
    let text = format!("k in [{}]", values.join(", "));
    let start = text.find("v32").unwrap_or(0);
    assert_eq!(
        err(&text),
        (LIMIT_CODE, format!("bytes {start}..{}", start + 3))
    );
    let dup = format!("k in [{}]", vec!["a"; 32].join(","));
    assert!(
        parse_text(&dup).is_ok(),
        "S14: duplicates count but 32 is fine"
    );
}

#[test]
fn whitespace_is_ascii_only() {
    assert_eq!(ok("\th\r\n=\nx "), ok("h = x"));
    assert_eq!(err("h\u{a0}= x").0, SYNTAX_CODE);
    assert_eq!(err("h\u{c}= x").0, SYNTAX_CODE);
}

#[test]
fn strings_use_json_escapes() {
    let f = ok(r#""a\"b" = "\u00e9\n\\" and "\ud83d\ude00" exists"#);
    assert_eq!(
        f.groups
            .first()
            .and_then(|g| g.first())
            .map(|c| c.header.to_string()),
        Some("a\"b".to_owned())
    );
    assert_eq!(f.to_string(), "\"a\\\"b\" = \"é\\n\\\\\" and \"😀\" exists");
    assert_eq!(err(r#""\ud800" exists"#).0, SYNTAX_CODE);
}

#[test]
fn pattern_positions_accept_all_word_chars() {
    let f = ok("a_b-c.d*:e/f@g = x:y/z@w.*");
    assert_eq!(f.to_string(), "a_b-c.d*:e/f@g = x:y/z@w.*");
    let cond = f
        .groups
        .first()
        .and_then(|g| g.first())
        .map(|c| c.cond.clone());
    assert_eq!(cond, Some(Cond::Eq(pat("x:y/z@w.*"))));
}

// ---- property test: print → parse gives the same filter, printing is stable ----

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
        usize::try_from(self.next() % (n as u64)).unwrap_or(0)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items.get(self.below(items.len())).copied().unwrap_or("")
    }
}

const SPECIAL: &[&str] = &[
    "and",
    "or",
    "in",
    "exists",
    "missing",
    "AND",
    "OR",
    "IN",
    "Exists",
    "",
    " ",
    "café",
    "\u{3002}",
    "a b",
    "x\"y",
    "\\",
    "\n",
    "\t",
    "\u{1}",
    "\u{7f}",
    "5",
    "-0",
    "1e21",
    "1e+3",
    "5e-324",
    "region",
    "a.b",
    "orders.**",
    "eu-*",
    "*",
    "**",
    "😀",
    "=",
    "!=",
    "[",
    "]",
    ",",
    "<=",
    "a,b",
    "\u{ffff}",
    "null",
];
const CHARS: &[&str] = &[
    "a", "Z", "0", "9", "_", "-", ".", "*", ":", "/", "@", " ", "é", "€", "\"", "\\", "\u{0}",
    "\u{1f}", ",", "[", "]", "=", "!", "<", ">", "+", "😀", "\u{ff0e}",
];

fn random_text(rng: &mut XorShift) -> String {
    if rng.below(3) == 0 {
        return rng.pick(SPECIAL).to_owned();
    }
    let len = rng.below(12);
    (0..len).map(|_| rng.pick(CHARS)).collect()
}

fn random_header(rng: &mut XorShift) -> String {
    loop {
        let h = random_text(rng);
        if !h.is_empty() {
            return h;
        }
    }
}

fn random_pattern(rng: &mut XorShift) -> SegmentPattern {
    loop {
        if let Ok(p) = SegmentPattern::compile(&random_text(rng)) {
            return p;
        }
    }
}

fn random_number(rng: &mut XorShift) -> f64 {
    let fixed = [
        1e21,
        -0.0,
        0.0,
        5e-324,
        -5e-324,
        0.1,
        -1.5,
        1e-7,
        123456789012345680000.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        9007199254740993.0,
        1e300,
        2.5e-8,
    ];
    if rng.below(2) == 0 {
        let x = fixed.get(rng.below(fixed.len())).copied().unwrap_or(1.0);
        return operand(x).unwrap_or(1.0);
    }
    loop {
        let x = f64::from_bits(rng.next());
        if let Some(x) = operand(x) {
            return x;
        }
    }
}

fn random_filter(rng: &mut XorShift) -> StreamFilter {
    let groups = (0..1 + rng.below(MAX_GROUPS))
        .map(|_| {
            (0..1 + rng.below(MAX_CLAUSES))
                .map(|_| {
                    let header = random_header(rng);
                    let cond = match rng.below(9) {
                        0 => Cond::Eq(random_pattern(rng)),
                        1 => Cond::Ne(random_pattern(rng)),
                        2 => Cond::In(
                            (0..1 + rng.below(MAX_IN_VALUES))
                                .map(|_| random_pattern(rng))
                                .collect(),
                        ),
                        3 => Cond::Exists,
                        4 => Cond::Missing,
                        5 => Cond::Cmp(CmpOp::Lt, random_number(rng)),
                        6 => Cond::Cmp(CmpOp::Le, random_number(rng)),
                        7 => Cond::Cmp(CmpOp::Gt, random_number(rng)),
                        _ => Cond::Cmp(CmpOp::Ge, random_number(rng)),
                    };
                    Clause {
                        header: header.into(),
                        cond,
                    }
                })
                .collect()
        })
        .collect();
    StreamFilter { groups }
}

fn bits(f: &StreamFilter) -> Vec<u64> {
    f.groups
        .iter()
        .flatten()
        .filter_map(|c| match c.cond {
            Cond::Cmp(_, n) => Some(n.to_bits()),
            _ => None,
        })
        .collect()
}

#[test]
fn arbitrary_text_never_panics_and_accepted_text_round_trips() {
    const PIECES: &[&str] = &[
        "a", "h", "*", ".", "**", " ", "\t", "\n", "=", "!=", "!", "<", "<=", ">", ">=", "[", "]",
        ",", "\"", "\\", "\\u", "d83d", "and", "or", "in", "exists", "missing", "5", "-", "e", "+",
        "1e400", "é", "\u{0}", "😀", "\u{a0}",
    ];
    let mut rng = XorShift(0x0123_4567_89AB_CDEF);
    for _ in 0..20_000 {
        let len = rng.below(16);
        let text: String = (0..len).map(|_| rng.pick(PIECES)).collect();
        match parse_text(&text) {
            Ok(f) => {
                let printed = f.to_string();
                assert_eq!(
                    parse_text(&printed).ok(),
                    Some(f),
                    "{text:?} -> {printed:?}"
                );
            }
            Err(e) => {
                let pe = e.errors.first().cloned();
                let at = pe.map(|p| p.pointer).unwrap_or_default();
                let (a, b) = at
                    .strip_prefix("bytes ")
                    .and_then(|r| r.split_once(".."))
                    .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
                    .unwrap_or((usize::MAX, 0));
                assert!(a <= b && b <= text.len(), "{text:?}: bad span {at}");
            }
        }
    }
}

#[test]
fn property_print_parse_round_trip() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for i in 0..1500 {
        let f = random_filter(&mut rng);
        let printed = f.to_string();
        let back = match parse_text(&printed) {
            Ok(b) => b,
            Err(e) => panic!("case {i}: {printed:?} did not parse: {e}"),
        };
        assert_eq!(back, f, "case {i}: {printed:?}");
        assert_eq!(bits(&back), bits(&f), "case {i}: numbers keep their bits");
        assert_eq!(back.to_string(), printed, "case {i}: printing is stable");
        // The JSON form reads back to the same filter too.
        let via_json = match json::parse(&f.to_json()) {
            Ok(j) => j,
            Err(e) => panic!("case {i}: JSON form rejected: {e}"),
        };
        assert_eq!(via_json, f, "case {i}");
    }
}

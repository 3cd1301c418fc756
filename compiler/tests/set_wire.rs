//! Saved subscription sets (`SubscriptionSet::to_bytes` / `from_bytes`): a set read back matches
//! every message as the saved one (the same ids in the same order, the same unjudged groups),
//! takes inserts and removals like any set, and bytes that are not a saved set — cut anywhere,
//! a byte changed, a part rewritten — are refused with a stable code, never a panic. The
//! `policy_set` walk (conformance crate) also saves and reloads its sets of generated policies.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{
    Dialect, ErrorCode, Filter, MessageParts, Options, SetLoadError, SetScratch, SnsScope,
    SubscriptionSet, compile_text,
};
use filtervm_vm::message::{AttributeType, Attributes, Headers};

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const EVENTS: [&str; 4] = ["paid", "created", "refunded", "paid.late"];
const REGIONS: [&str; 4] = ["eu-west", "eu-north", "us-east", "ap"];

/// A random policy of a random dialect (with options), compiled.
fn policy(r: &mut Rng) -> Filter {
    let e = r.pick(&EVENTS);
    let g = r.pick(&REGIONS);
    let n = r.below(40);
    let (dialect, options, text) = match r.below(9) {
        0 => (
            Dialect::Sns,
            Options::from(Dialect::Sns),
            format!(r#"{{"event": ["{e}", {{"prefix": "{}"}}]}}"#, &e[..2]),
        ),
        1 => (
            Dialect::Sns,
            Options::from(SnsScope::MessageBody),
            format!(
                r#"{{"total": [{{"numeric": [">", {n}]}}], "region": ["{g}"], "$or": [{{"event": ["{e}"]}}, {{"n": [{n}, 7]}}]}}"#
            ),
        ),
        2 => (
            Dialect::Basaltic,
            Options::Basaltic,
            format!(r#"{{"event": ["{e}"], "n": [{{"numeric": ["<", {n}]}}]}}"#),
        ),
        3 => (
            Dialect::Stream,
            Options::Stream,
            format!("region = {}* and event != {e}", &g[..2]),
        ),
        4 => (
            Dialect::Expr,
            Dialect::Expr.into(),
            format!(
                r#"{{"key": "region", "op": "startsWith", "value": "{}"}}"#,
                &g[..1]
            ),
        ),
        5 => (
            Dialect::EventGrid,
            Dialect::EventGrid.into(),
            format!(r#"{{"subjectBeginsWith": "/{e}"}}"#),
        ),
        6 => (
            Dialect::EventBridge,
            Dialect::EventBridge.into(),
            format!(r#"{{"detail": {{"event": ["{e}"], "n": [{{"numeric": [">=", {n}]}}]}}}}"#),
        ),
        // An `exists: false` judged against array positions: the group keeps the pattern.
        7 => (
            Dialect::EventBridge,
            Dialect::EventBridge.into(),
            format!(r#"{{"r": {{"b": ["{e}"], "c": [{{"exists": false}}]}}}}"#),
        ),
        _ => (
            Dialect::Sns,
            Options::from(SnsScope::MessageBody),
            format!(r#"{{"region": [{{"anything-but": ["{g}"]}}], "n": [{{"exists": true}}]}}"#),
        ),
    };
    compile_text(dialect, &text, &options).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A random message of every part (each left out now and then), as its parts' owned data.
struct Message {
    body: Option<String>,
    attributes: Option<Vec<(String, AttributeType, String)>>,
    headers: Option<Vec<(String, String)>>,
}

fn message(r: &mut Rng) -> Message {
    let e = r.pick(&EVENTS);
    let g = r.pick(&REGIONS);
    let n = r.below(40);
    let body = match r.below(4) {
        0 => format!(
            r#"{{"total": {n}, "region": "{g}", "event": "{e}", "n": {n}, "subject": "/{e}/1", "detail": {{"event": "{e}", "n": {n}}}}}"#
        ),
        1 => format!(r#"{{"r": [{{"c": 1, "b": "x"}}, {{"b": "{e}"}}], "region": "{g}"}}"#),
        2 => format!(r#"{{"r": [{{"b": "{e}"}}], "n": [{n}, 7]}}"#),
        _ => format!(r#"[{{"r": {{"b": "{e}"}}}}]"#),
    };
    let attributes = vec![
        ("event".to_string(), AttributeType::String, e.to_string()),
        ("n".to_string(), AttributeType::Number, n.to_string()),
    ];
    let headers = vec![
        ("region".to_string(), g.to_string()),
        ("event".to_string(), e.to_string()),
    ];
    Message {
        body: (r.below(6) != 0).then_some(body),
        attributes: (r.below(6) != 0).then_some(attributes),
        headers: (r.below(6) != 0).then_some(headers),
    }
}

/// What a set answers for a message: the ids and the unjudged groups.
type Answer = (Vec<u64>, Vec<(Dialect, usize, ErrorCode)>);

fn answer(set: &SubscriptionSet<u64>, scratch: &mut SetScratch, m: &Message) -> Answer {
    let attributes: Option<Vec<(&str, AttributeType, &str)>> = m.attributes.as_ref().map(|a| {
        a.iter()
            .map(|(k, t, v)| (k.as_str(), *t, v.as_str()))
            .collect()
    });
    let headers: Option<Vec<(&str, &str)>> = m
        .headers
        .as_ref()
        .map(|h| h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect());
    let mut base = MessageParts::new();
    if let Some(body) = &m.body {
        base = base.with_body(body.as_bytes());
    }
    match (&attributes, &headers) {
        (Some(a), Some(h)) => answer_parts(
            set,
            scratch,
            &base.with_attributes(&a[..]).with_headers(&h[..]),
        ),
        (Some(a), None) => answer_parts(set, scratch, &base.with_attributes(&a[..])),
        (None, Some(h)) => answer_parts(set, scratch, &base.with_headers(&h[..])),
        (None, None) => answer_parts(set, scratch, &base),
    }
}

fn answer_parts<A: Attributes + ?Sized, H: Headers + ?Sized>(
    set: &SubscriptionSet<u64>,
    scratch: &mut SetScratch,
    parts: &MessageParts<'_, A, H>,
) -> Answer {
    let matches = set.matching(scratch, parts);
    (
        matches.ids().copied().collect(),
        matches
            .unjudged()
            .map(|u| (u.options.dialect(), u.subscriptions, u.error.code))
            .collect(),
    )
}

/// A random set of `n` subscriptions (some sharing a filter, some replaced, some removed).
fn random_set(r: &mut Rng, n: usize) -> SubscriptionSet<u64> {
    let mut set = SubscriptionSet::new();
    let mut next = 0u64;
    while set.len() < n {
        match r.below(10) {
            0 if !set.is_empty() => {
                let victim = *set.ids().nth(r.below(set.len())).unwrap();
                set.remove(&victim);
            }
            1 if !set.is_empty() => {
                let id = *set.ids().nth(r.below(set.len())).unwrap();
                set.insert(id, &policy(r)).unwrap();
            }
            _ => {
                set.insert(next, &policy(r)).unwrap();
                next += 1;
            }
        }
    }
    set
}

fn reload(set: &SubscriptionSet<u64>) -> SubscriptionSet<u64> {
    SubscriptionSet::from_bytes(&set.to_bytes()).unwrap_or_else(|e| panic!("{e}"))
}

/// The FNV-1a 64 hash a saved set ends with (to rewrite parts of one).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `bytes` with the first `from` replaced by `to` (of the same length), the hash made right.
fn rewrite(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let at = bytes
        .windows(from.len())
        .position(|w| w == from.as_bytes())
        .unwrap_or_else(|| panic!("no {from}"));
    let mut out = bytes.to_vec();
    out[at..at + to.len()].copy_from_slice(to.as_bytes());
    rehash(out)
}

fn rehash(mut bytes: Vec<u8>) -> Vec<u8> {
    let body = bytes.len() - 8;
    let hash = fnv1a(&bytes[..body]);
    bytes[body..].copy_from_slice(&hash.to_le_bytes());
    bytes
}

#[test]
fn a_set_read_back_answers_every_message_as_the_saved_one() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut scratch = SetScratch::new();
    for round in 0..6 {
        let mut set = random_set(&mut r, 20 + 40 * round);
        let mut loaded = reload(&set);
        assert_eq!(loaded.len(), set.len());
        assert!(loaded.ids().eq(set.ids()), "insertion order kept");
        assert!(loaded.options().eq(set.options()), "groups kept in order");
        assert_eq!(loaded.distinct_filters(), set.distinct_filters());
        assert_eq!(loaded.to_bytes(), set.to_bytes(), "saves to the same bytes");
        let mut delivered = 0;
        for step in 0..150 {
            let m = message(&mut r);
            let expected = answer(&set, &mut scratch, &m);
            delivered += expected.0.len();
            assert_eq!(answer(&loaded, &mut scratch, &m), expected, "round {round}");
            // Both take the same changes.
            if step % 10 == 0 {
                let f = policy(&mut r);
                let id = 1_000 + step as u64;
                assert_eq!(set.insert(id, &f), loaded.insert(id, &f));
                let victim = *set.ids().nth(r.below(set.len())).unwrap();
                assert!(set.remove(&victim) && loaded.remove(&victim));
            }
        }
        assert!(delivered > 100, "messages deliver ({delivered})");
        assert!(loaded.heap_bytes() <= set.heap_bytes() * 2);
    }
}

#[test]
fn kept_eventbridge_patterns_travel_with_the_set() {
    let options: Options = Dialect::EventBridge.into();
    let pattern = r#"{"r": {"b": ["y"], "c": [{"exists": false}]}}"#;
    let filter = compile_text(Dialect::EventBridge, pattern, &options).unwrap();
    assert!(filter.pattern().is_some());
    let mut set = SubscriptionSet::new();
    set.insert(1u64, &filter).unwrap();
    set.insert(2u64, &filter).unwrap();
    let loaded = reload(&set);
    let mut scratch = SetScratch::new();
    // Judged on the pattern: the rows cannot tell which array element holds `c`.
    for (event, ids) in [
        (r#"{"r": [{"c": 1, "b": "x"}, {"b": "y"}]}"#, vec![1, 2]),
        (r#"{"r": [{"c": 1, "b": "y"}]}"#, vec![]),
    ] {
        let parts = MessageParts::body(event.as_bytes());
        for s in [&set, &loaded] {
            let got: Vec<u64> = s.matching(&mut scratch, &parts).ids().copied().collect();
            assert_eq!(got, ids, "{event}");
        }
    }
    // The pattern is in the bytes, and one that does not compile to its filter is refused.
    let bytes = set.to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    let kept = r#"{"r":{"b":["y"],"c":[{"exists":false}]}}"#;
    assert_eq!(text.matches(kept).count(), 2, "{text:?}");
    let other = r#"{"r":{"b":["z"],"c":[{"exists":false}]}}"#;
    let tampered = rewrite(&bytes, kept, other);
    let e = SubscriptionSet::<u64>::from_bytes(&tampered).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFilterMetadata, "{e}");
    assert!(
        e.to_string().contains("does not compile to its filter"),
        "{e}"
    );
}

#[test]
fn cut_or_changed_bytes_are_refused() {
    let mut r = Rng(7);
    let set = random_set(&mut r, 12);
    let bytes = set.to_bytes();
    for cut in 0..bytes.len() {
        let e = SubscriptionSet::<u64>::from_bytes(&bytes[..cut]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidProgram, "cut at {cut}: {e}");
    }
    for at in 0..bytes.len() {
        let mut changed = bytes.clone();
        changed[at] ^= 1 << (at % 8);
        assert!(
            SubscriptionSet::<u64>::from_bytes(&changed).is_err(),
            "byte {at} changed"
        );
    }
}

/// With the hash made right again, a changed byte reaches the checks of the contents: the set is
/// refused, or it is a set (one whose ids, values or numbers differ) that works like any other.
#[test]
fn changed_contents_are_checked_beyond_the_hash() {
    let mut r = Rng(11);
    let set = random_set(&mut r, 10);
    let bytes = set.to_bytes();
    let mut scratch = SetScratch::new();
    let (mut refused, mut accepted) = (0, 0);
    for at in 8..bytes.len() - 8 {
        for flip in [1u8, 0x80, 0xff] {
            let mut changed = bytes.clone();
            changed[at] ^= flip;
            match SubscriptionSet::<u64>::from_bytes(&rehash(changed)) {
                Err(e) => {
                    refused += 1;
                    assert!(
                        matches!(
                            e.code(),
                            ErrorCode::InvalidProgram
                                | ErrorCode::InvalidFilterMetadata
                                | ErrorCode::InvalidOptions
                        ),
                        "{e}"
                    );
                }
                Ok(mut loaded) => {
                    accepted += 1;
                    // A set that works: it answers, saves and reloads to itself, changes.
                    for _ in 0..4 {
                        answer(&loaded, &mut scratch, &message(&mut r));
                    }
                    assert_eq!(reload(&loaded).to_bytes(), loaded.to_bytes());
                    loaded.insert(u64::MAX, &policy(&mut r)).unwrap();
                    let ids: Vec<u64> = loaded.ids().copied().collect();
                    for id in ids {
                        assert!(loaded.remove(&id));
                    }
                    assert_eq!(loaded.heap_bytes(), 0);
                }
            }
        }
    }
    assert!(refused > accepted, "{refused} refused, {accepted} accepted");
}

#[test]
fn each_malformation_has_its_code() {
    let mut set = SubscriptionSet::new();
    let sns = Options::from(Dialect::Sns);
    set.insert(
        "a".to_string(),
        &compile_text(Dialect::Sns, r#"{"event": ["paid", "sent"]}"#, &sns).unwrap(),
    )
    .unwrap();
    let bytes = set.to_bytes();
    // The end of the bytes: the filter's subscriber count (1), the number of subscriptions (1),
    // the subscription (group 0, id "a", filter 0), the hash.
    let n = bytes.len();
    assert_eq!(&bytes[n - 14..n - 8], b"\x01\x01\x00\x01a\x00");
    let mut counted_twice = bytes.clone();
    counted_twice[n - 14] = 2;
    // A test the binary form does not hold is shipped as IR JSON.
    let mut wild = SubscriptionSet::new();
    wild.insert(
        "w".to_string(),
        &compile_text(Dialect::Sns, r#"{"event": [{"wildcard": "pa*d"}]}"#, &sns).unwrap(),
    )
    .unwrap();
    let wild = wild.to_bytes();
    assert!(
        String::from_utf8_lossy(&wild).contains(r#"["wildcard","pa*d"]"#),
        "{wild:?}"
    );
    let cases: Vec<(Vec<u8>, ErrorCode, &str)> = vec![
        (b"".to_vec(), ErrorCode::InvalidProgram, "too short"),
        (
            rehash([b"FVM-SEX\n".as_slice(), &bytes[8..]].concat()),
            ErrorCode::InvalidProgram,
            "magic",
        ),
        (
            rehash([&bytes[..8], &[3u8], &bytes[9..]].concat()),
            ErrorCode::InvalidProgram,
            "unsupported saved set version 3",
        ),
        (
            rehash([&bytes[..8], &[1u8], &bytes[9..]].concat()),
            ErrorCode::InvalidProgram,
            "unsupported saved set version 1",
        ),
        (
            [&bytes[..bytes.len() - 8], b"x", &bytes[bytes.len() - 8..]].concat(),
            ErrorCode::InvalidProgram,
            "hash",
        ),
        (
            rewrite(&bytes, r#"{"scope""#, r#"{"scopf""#),
            ErrorCode::InvalidOptions,
            "scopf",
        ),
        (
            rewrite(&wild, "\"wildcard\"", "\"wildcarx\""),
            ErrorCode::InvalidFilterMetadata,
            "not an IR test",
        ),
        // The binary test: key `attr "event"`, string equality of "paid" and "sent".
        (
            rewrite(&bytes, "\x01\x05event\x00\x00", "\x01\x05event\x00\x04"),
            ErrorCode::InvalidFilterMetadata,
            "test 0 of group 0: unknown string operator 4",
        ),
        (
            rewrite(&bytes, "\x01\x05event\x00", "\x0b\x05event\x00"),
            ErrorCode::InvalidFilterMetadata,
            "unknown key kind 11",
        ),
        (
            rewrite(&bytes, "\x04paid\x04sent", "\x04sent\x04paid"),
            ErrorCode::InvalidFilterMetadata,
            "not sorted and distinct",
        ),
        (
            rewrite(&bytes, "\x04paid\x04sent", "\x04paid\x04paid"),
            ErrorCode::InvalidFilterMetadata,
            "not sorted and distinct",
        ),
        (
            rewrite(&bytes, "\x01\x01\x01\x05event", "\x01\x02\x01\x05event"),
            ErrorCode::InvalidFilterMetadata,
            "unknown test form 2",
        ),
        (
            rehash(counted_twice),
            ErrorCode::InvalidFilterMetadata,
            "subscriber counts add up to 2, not to the 1 subscriptions",
        ),
        (
            rewrite(&bytes, "\x03sns", "\x03snx"),
            ErrorCode::InvalidFilterMetadata,
            "unknown dialect",
        ),
    ];
    for (bytes, code, why) in cases {
        let e: SetLoadError = SubscriptionSet::<String>::from_bytes(&bytes).unwrap_err();
        assert_eq!(e.code(), code, "{why}: {e}");
        assert!(e.to_string().contains(why), "{why}: {e}");
    }
    // Ids of another type do not read.
    let e = SubscriptionSet::<u64>::from_bytes(&bytes).unwrap_err();
    assert!(e.to_string().contains("not an id"), "{e}");
    // The empty set saves and reads back.
    let empty = SubscriptionSet::<String>::new();
    let loaded = SubscriptionSet::<String>::from_bytes(&empty.to_bytes()).unwrap();
    assert!(loaded.is_empty() && loaded.groups() == 0);
}

/// A set read back chooses its anchors once all its filters are in: each filter is anchored on
/// its rarest required test (a tenant, of 200 distinct values, not a region, of 4), none is left
/// evaluated for every message, and the anchors are those the set built by inserting ended with.
#[test]
fn a_set_read_back_anchors_every_filter_on_its_rarest_test() {
    let mut set = SubscriptionSet::<u64>::new();
    for i in 0..200u64 {
        let g = REGIONS[i as usize % REGIONS.len()];
        let text = format!(r#"{{"tenant": ["t{i}"], "region": ["{g}"]}}"#);
        let f = compile_text(Dialect::Sns, &text, &Options::from(Dialect::Sns)).unwrap();
        set.insert(i, &f).unwrap();
    }
    let loaded = SubscriptionSet::<u64>::from_bytes(&set.to_bytes()).unwrap();
    let (built, read) = (set.group_stats(), loaded.group_stats());
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].unanchored_filters, 0);
    assert_eq!(read[0].anchors.len(), 200, "{:?}", read[0].anchors);
    assert!(
        read[0]
            .anchors
            .iter()
            .all(|(test, n)| test.contains("tenant") && *n == 1),
        "{:?}",
        read[0].anchors
    );
    assert_eq!(read[0].anchors, built[0].anchors);
    assert_eq!(loaded.to_bytes(), set.to_bytes());
}

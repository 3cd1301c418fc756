//! Dot-segment patterns (stream dialect, seed 004, rules S1-S7).
//!
//! A pattern and a value are both split on every ASCII `.` (S1); empty segments are ordinary
//! segments. Pattern segments are:
//!
//! - a literal (no `*`): equal to the value segment, byte for byte (S6, S7);
//! - `*` alone: exactly one value segment, possibly empty (S2);
//! - one `*` inside other text (`eu-*`, `*-west`, `eu-*-1`): a literal prefix and suffix around a run
//!   of zero or more bytes, prefix and suffix not overlapping (S3);
//! - `**` alone, at most once per pattern, anywhere: zero or more value segments (S4).
//!
//! A pattern is compiled into the segments before `**` (the head) and, when there is a `**`, the
//! segments after it (the tail). Matching compares the head with the value's first segments and the
//! tail with its last segments, requiring that they do not overlap. A pattern without `*` is kept as
//! its text alone and compared whole. There is no backtracking, no allocation, and the cost is
//! linear in the value's length.
//!
//! There are no escapes (S6): a backslash is an ordinary character, `a\*` is the in-segment pattern
//! with prefix `a\`. Patterns are at most [`MAX_PATTERN_BYTES`] UTF-8 bytes long (S7).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The longest accepted pattern, in UTF-8 bytes (seed 004 bounds, S7).
pub const MAX_PATTERN_BYTES: usize = 256;

/// The rule text appended to every segment error, pointing at the new rules.
const SEGMENT_RULE: &str =
    "stream rule: one `*` per segment, `**` only as a whole segment, at most once per pattern";

/// A part of a pattern's source text, by byte offsets (a pattern is at most
/// [`MAX_PATTERN_BYTES`] long, so they fit in `u16`). Segments refer to their text this way rather
/// than each holding a copy: compiling `orders.*.created` allocates the source and the segment
/// list, not also a string per literal part.
#[derive(Debug, Clone, Copy)]
struct Part {
    /// Offset of the first byte.
    start: u16,
    /// Offset just past the last byte.
    end: u16,
}

impl Part {
    /// The part `start..end` of a source within [`MAX_PATTERN_BYTES`].
    fn new(start: usize, end: usize) -> Part {
        Part {
            start: u16::try_from(start).unwrap_or(u16::MAX),
            end: u16::try_from(end).unwrap_or(u16::MAX),
        }
    }

    /// The part's text in `source` (the source it was made from: its offsets are char
    /// boundaries there, so this is never the empty fallback).
    fn text(self, source: &str) -> &str {
        source
            .get(usize::from(self.start)..usize::from(self.end))
            .unwrap_or("")
    }
}

/// One compiled pattern segment (everything except `**`); its text is in the pattern's source.
#[derive(Debug, Clone, Copy)]
enum Segment {
    /// No `*`: the value segment must be equal (S6, S7).
    Literal(Part),
    /// `*` alone: any one segment, empty included (S2).
    Any,
    /// One `*` with text around it: `prefix` + zero or more bytes + `suffix` (S3).
    Glob {
        /// Text before the `*`.
        prefix: Part,
        /// Text after the `*`.
        suffix: Part,
    },
}

impl Segment {
    /// Whether one value segment (no dots in it) matches this pattern segment of `source`.
    fn matches(self, source: &str, value: &str) -> bool {
        match self {
            Segment::Literal(lit) => lit.text(source) == value,
            Segment::Any => true,
            // S3: the prefix and suffix may not overlap.
            Segment::Glob { prefix, suffix } => {
                let (prefix, suffix) = (prefix.text(source), suffix.text(source));
                value.len() >= prefix.len().saturating_add(suffix.len())
                    && value.starts_with(prefix)
                    && value.ends_with(suffix)
            }
        }
    }
}

/// A compiled segment pattern.
///
/// Equality and hashing use the source text only.
#[derive(Debug, Clone)]
pub struct SegmentPattern {
    /// The text as written; shared, so that a string test made from a pattern without `*` (see
    /// [`SegmentPattern::shared_source`]) holds it without a copy.
    source: Arc<str>,
    /// Segments before the `**` (all segments when there is none); empty for a pattern without
    /// `*` (which matches its source exactly). Splitting a source on dots gives at least one
    /// segment, so a compiled head is never empty.
    head: Box<[Segment]>,
    /// Segments after the `**`; `None` when the pattern has no `**`.
    tail: Option<Box<[Segment]>>,
}

impl PartialEq for SegmentPattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for SegmentPattern {}

impl Hash for SegmentPattern {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.source.hash(state);
    }
}

impl fmt::Display for SegmentPattern {
    /// Prints the pattern's source text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Why a pattern was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PatternError {
    /// What is wrong, pointing at the rule.
    pub message: String,
}

impl PatternError {
    fn new(message: String) -> PatternError {
        PatternError { message }
    }
}

/// How many times `byte` occurs in `text`. Patterns are short (at most [`MAX_PATTERN_BYTES`]), so a
/// plain loop, which the compiler vectorizes, beats `memchr`'s dispatch and setup here.
fn count_byte(text: &str, byte: u8) -> usize {
    text.bytes().filter(|&b| b == byte).count()
}

/// Compiles one segment that is not `**`: `seg`, which starts at byte `start` of `source`.
fn compile_segment(source: &str, seg: &str, start: usize) -> Result<Segment, PatternError> {
    let end = start.saturating_add(seg.len());
    let stars = count_byte(seg, b'*');
    match stars {
        0 => Ok(Segment::Literal(Part::new(start, end))),
        1 if seg == "*" => Ok(Segment::Any),
        1 => {
            let star = start.saturating_add(seg.bytes().position(|b| b == b'*').unwrap_or(0));
            Ok(Segment::Glob {
                prefix: Part::new(start, star),
                suffix: Part::new(star.saturating_add(1), end),
            })
        }
        2 if seg.contains("**") => Err(PatternError::new(format!(
            "pattern `{source}`: segment `{seg}` joins `**` to other text; `**` must be a whole \
             segment between dots ({SEGMENT_RULE})"
        ))),
        _ => Err(PatternError::new(format!(
            "pattern `{source}`: segment `{seg}` has more than one `*`; a segment holds at most \
             one `*` ({SEGMENT_RULE})"
        ))),
    }
}

impl SegmentPattern {
    /// Compiles a pattern.
    ///
    /// Errors: a pattern longer than [`MAX_PATTERN_BYTES`] UTF-8 bytes (S7); a segment with more
    /// than one `*` (`a*b*`, `***`); `**` joined to other text (`a**`, `**b`); more than one `**`.
    /// The empty pattern is valid and matches only the empty value (S5).
    pub fn compile(source: &str) -> Result<SegmentPattern, PatternError> {
        if source.len() > MAX_PATTERN_BYTES {
            return Err(PatternError::new(format!(
                "pattern is {} bytes long; a pattern is at most {MAX_PATTERN_BYTES} bytes of UTF-8 \
                 (stream pattern length limit)",
                source.len()
            )));
        }
        if !source.as_bytes().contains(&b'*') {
            // No `*`: every segment is a literal, so the pattern matches exactly its source text
            // (the tests compare this with the dot-separated segments). It is kept as the source
            // alone, with an empty head (an empty boxed slice allocates nothing), which `matches`
            // compares whole: one allocation rather than three.
            return Ok(SegmentPattern {
                source: source.into(),
                head: Box::new([]),
                tail: None,
            });
        }
        SegmentPattern::compile_segments(source)
    }

    /// [`SegmentPattern::compile`] of a pattern within the length limit, segment by segment.
    fn compile_segments(source: &str) -> Result<SegmentPattern, PatternError> {
        // The head and tail are built at their final sizes, so that neither grows nor is
        // shrunk when boxed: `segments` in all, the head those before the first `**`, which
        // is looked for only when there are two `*` to make one.
        let segments = count_byte(source, b'.').saturating_add(1);
        let head_len = if count_byte(source, b'*') >= 2 {
            source
                .split('.')
                .position(|seg| seg == "**")
                .unwrap_or(segments)
        } else {
            segments
        };
        let mut head: Vec<Segment> = Vec::with_capacity(head_len);
        let mut tail: Option<Vec<Segment>> = None;
        // S1: split on every ASCII '.', and nothing else. Each segment is found by a plain loop
        // over the bytes from where the last one ended (a pattern is short, and `split`'s
        // searcher costs more to set up than such a loop costs to run).
        let mut seg_start = 0usize;
        loop {
            let rest = source.get(seg_start..).unwrap_or("");
            let dot = rest.bytes().position(|b| b == b'.');
            let seg = rest.get(..dot.unwrap_or(rest.len())).unwrap_or("");
            if seg == "**" {
                if tail.is_some() {
                    return Err(PatternError::new(format!(
                        "pattern `{source}` has more than one `**`; a pattern holds at most one \
                         `**` ({SEGMENT_RULE})"
                    )));
                }
                tail = Some(Vec::with_capacity(
                    segments.saturating_sub(head_len).saturating_sub(1),
                ));
            } else {
                let compiled = compile_segment(source, seg, seg_start)?;
                match tail.as_mut() {
                    Some(t) => t.push(compiled),
                    None => head.push(compiled),
                }
            }
            match dot {
                Some(dot) => seg_start = seg_start.saturating_add(dot).saturating_add(1),
                None => break,
            }
        }
        Ok(SegmentPattern {
            source: source.into(),
            head: head.into_boxed_slice(),
            tail: tail.map(Vec::into_boxed_slice),
        })
    }

    /// Whether `value` matches.
    ///
    /// Linear in the length of `value`, with no allocation.
    pub fn matches(&self, value: &str) -> bool {
        if self.head.is_empty() && self.tail.is_none() {
            // A pattern without `*`: the source itself.
            return *self.source == *value;
        }
        // Front: the head's segments in order, each up to the next '.' (S1). `rest` is the unread
        // part of the value, `None` once its last segment has been read.
        let mut rest = Some(value);
        for seg in self.head.iter() {
            let Some(unread) = rest else { return false };
            rest = match seg {
                // A literal is compared in place: no search for the dot that ends it.
                Segment::Literal(lit) => match unread.strip_prefix(lit.text(&self.source)) {
                    Some("") => None,
                    Some(after) => match after.strip_prefix('.') {
                        Some(after) => Some(after),
                        None => return false,
                    },
                    None => return false,
                },
                _ => {
                    let (segment, after) = match memchr::memchr(b'.', unread.as_bytes()) {
                        Some(dot) => (unread.get(..dot).unwrap_or(""), unread.get(dot + 1..)),
                        None => (unread, None),
                    };
                    if !seg.matches(&self.source, segment) {
                        return false;
                    }
                    after
                }
            };
        }
        match &self.tail {
            // Without `**` the head must account for every segment.
            None => rest.is_none(),
            // S4: `**` takes whatever the head and tail leave, zero segments included; the tail is
            // matched from the back within what the head left, so the two never share a segment.
            Some(tail) => {
                for seg in tail.iter().rev() {
                    let Some(unread) = rest else { return false };
                    rest = match seg {
                        Segment::Literal(lit) => {
                            match unread.strip_suffix(lit.text(&self.source)) {
                                Some("") => None,
                                Some(before) => match before.strip_suffix('.') {
                                    Some(before) => Some(before),
                                    None => return false,
                                },
                                None => return false,
                            }
                        }
                        _ => {
                            let (segment, before) = match memchr::memrchr(b'.', unread.as_bytes()) {
                                Some(dot) => {
                                    (unread.get(dot + 1..).unwrap_or(""), unread.get(..dot))
                                }
                                None => (unread, None),
                            };
                            if !seg.matches(&self.source, segment) {
                                return false;
                            }
                            before
                        }
                    };
                }
                true
            }
        }
    }

    /// The pattern's source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The pattern's source text, shared: cloning it copies no text.
    pub fn shared_source(&self) -> &Arc<str> {
        &self.source
    }

    /// Whether the pattern holds a `**` segment.
    pub fn has_double_star(&self) -> bool {
        self.tail.is_some()
    }

    /// Whether the pattern has no `*` at all, so that it matches exactly its source text.
    /// Inlined where it is asked (a front end asks it of each pattern it lowers).
    #[inline]
    pub fn is_literal(&self) -> bool {
        self.tail.is_none() && self.head.iter().all(|s| matches!(s, Segment::Literal(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(p: &str) -> SegmentPattern {
        match SegmentPattern::compile(p) {
            Ok(c) => c,
            Err(e) => panic!("pattern {p:?} rejected: {e}"),
        }
    }

    fn yes(p: &str, values: &[&str]) {
        let c = pat(p);
        for v in values {
            assert!(c.matches(v), "pattern {p:?} should match {v:?}");
        }
    }

    fn no(p: &str, values: &[&str]) {
        let c = pat(p);
        for v in values {
            assert!(!c.matches(v), "pattern {p:?} should not match {v:?}");
        }
    }

    fn err(p: &str) -> String {
        match SegmentPattern::compile(p) {
            Ok(_) => panic!("pattern {p:?} should be rejected"),
            Err(e) => e.message,
        }
    }

    // ---- seed 004 "Patterns" table, every row, both columns ----

    #[test]
    fn seed_table_eu_star() {
        yes("eu-*", &["eu-west", "eu-central"]);
        no("eu-*", &["us-east", "eu.west"]);
    }

    #[test]
    fn seed_table_star_west() {
        yes("*-west", &["eu-west", "us-west"]);
        no("*-west", &["eu-west-1"]);
    }

    #[test]
    fn seed_table_orders_star_created() {
        yes("orders.*.created", &["orders.eu.created"]);
        no(
            "orders.*.created",
            &["orders.created", "orders.eu.west.created"],
        );
    }

    #[test]
    fn seed_table_orders_double_star() {
        yes("orders.**", &["orders", "orders.eu", "orders.eu.created"]);
        no("orders.**", &["billing.orders"]);
    }

    #[test]
    fn seed_table_double_star_created() {
        yes("**.created", &["created", "orders.eu.created"]);
        no("**.created", &["orders.created.v2"]);
    }

    #[test]
    fn seed_table_orders_double_star_created() {
        yes(
            "orders.**.created",
            &["orders.created", "orders.eu.west.created"],
        );
        no("orders.**.created", &["orders.eu.updated"]);
    }

    #[test]
    fn seed_text_examples() {
        // "A pattern with no * matches that exact value."
        yes("orders.eu.created", &["orders.eu.created"]);
        no(
            "orders.eu.created",
            &["orders.eu.created.", "orders.eu", "Orders.eu.created"],
        );
        // "* no longer crosses a dot"
        no("orders.*", &["orders.eu.created"]);
        // "** alone matches any value"
        yes("**", &["", "a", "a.b.c", "...", "orders.eu.created"]);
        // A value without dots is a single segment.
        yes("eu-*", &["eu-"]);
    }

    // ---- S1: segments ----

    #[test]
    fn s1_only_ascii_dot_separates() {
        // U+3002 and U+FF0E are ordinary characters.
        yes("*", &["a\u{3002}b", "a\u{FF0E}b"]);
        yes("a\u{3002}b", &["a\u{3002}b"]);
        no("a.b", &["a\u{3002}b"]);
        no("*.*", &["a\u{3002}b"]);
    }

    #[test]
    fn s1_empty_segments_are_ordinary() {
        yes("a..b", &["a..b"]);
        no("a..b", &["a.b", "a...b"]);
        yes(".", &["."]);
        no(".", &["", ".."]);
        yes("a.", &["a."]);
        no("a.", &["a"]);
    }

    // ---- S2: whole-segment * ----

    #[test]
    fn s2_whole_segment_star() {
        yes("a.*.b", &["a..b", "a.x.b"]);
        no("a.*.b", &["a.b", "a.x.y.b"]);
        yes("*", &["", "abc"]);
        no("*", &[".", "a.b"]);
        yes("*.*", &[".", "a.b", "a.", ".b"]);
        no("*.*", &["", "a", "a.b.c"]);
    }

    // ---- S3: in-segment * ----

    #[test]
    fn s3_in_segment_star() {
        yes("eu-*", &["eu-", "eu-west", "eu-*"]);
        no("eu-*", &["eu", "eu.west", "xeu-west"]);
        yes("*-west", &["-west", "eu-west"]);
        no("*-west", &["west", "eu-westx"]);
        yes("eu-*-1", &["eu--1", "eu-west-1"]);
        no("eu-*-1", &["eu-1", "eu-west-2", "eu.x-1"]);
        no("a*a", &["a"]);
        yes("a*a", &["aa", "aba"]);
    }

    #[test]
    fn s3_in_segment_star_with_other_segments() {
        yes(
            "orders.eu-*.created",
            &["orders.eu-.created", "orders.eu-west.created"],
        );
        no(
            "orders.eu-*.created",
            &["orders.eu-west.x.created", "orders.us.created"],
        );
    }

    // ---- S4: ** ----

    #[test]
    fn s4_double_star() {
        yes(
            "orders.**",
            &["orders", "orders.", "orders..", "orders.a.b"],
        );
        no("orders.**", &["order", "ordersx", ".orders"]);
        yes("**.", &["", "a.", "a.b."]);
        no("**.", &["a", "a.b"]);
        yes(".**", &[".a", ".", ""]);
        no(".**", &["a", "a."]);
        yes("*.**", &["", "a", "a.b"]);
        yes("**", &[""]);
    }

    #[test]
    fn s4_double_star_head_and_tail_do_not_overlap() {
        no("a.**.a", &["a"]);
        yes("a.**.a", &["a.a", "a.x.a"]);
        no("a.b.**.b.c", &["a.b.c"]);
        yes("a.b.**.b.c", &["a.b.b.c", "a.b.x.b.c"]);
        yes("**.a.b", &["a.b", "x.a.b"]);
        no("**.a.b", &["b", "a"]);
    }

    #[test]
    fn s4_double_star_with_globs() {
        yes("eu-*.**.*-1", &["eu-x.y-1", "eu-.a.b.-1"]);
        no("eu-*.**.*-1", &["eu-x", "eu-1"]);
    }

    // ---- S5: empty pattern ----

    #[test]
    fn s5_empty_pattern() {
        yes("", &[""]);
        no("", &[".", "a", " "]);
        assert!(pat("").is_literal());
    }

    // ---- S6: no escapes, no other metacharacters ----

    #[test]
    fn s6_backslash_is_literal() {
        // `a\*` is the in-segment pattern with prefix `a\`.
        yes("a\\*", &["a\\", "a\\x", "a\\*"]);
        no("a\\*", &["a*", "a", "ax"]);
        yes("a\\.b", &["a\\.b"]);
        no("a\\.b", &["a.b"]);
        assert!(!pat("a\\*").is_literal());
    }

    #[test]
    fn s6_other_metacharacters_are_literal() {
        yes("a?c", &["a?c"]);
        no("a?c", &["abc"]);
        yes("[ab]", &["[ab]"]);
        no("[ab]", &["a"]);
        yes("a+b|c^$(x)", &["a+b|c^$(x)"]);
        no("a+b|c^$(x)", &["aab"]);
        yes("a{1}", &["a{1}"]);
        // A `*` in a value is an ordinary character.
        yes("x*", &["x*", "x**"]);
        yes("*", &["*"]);
    }

    // ---- S7: exact comparison and the byte limit ----

    #[test]
    fn s7_case_and_normalisation() {
        no("Eu-*", &["eu-west"]);
        no("caf\u{e9}", &["cafe\u{301}", "CAF\u{c9}"]);
        yes("caf\u{e9}", &["caf\u{e9}"]);
        yes("caf*", &["cafe\u{301}"]);
    }

    #[test]
    fn s7_length_limit_counts_bytes() {
        assert!(SegmentPattern::compile(&"a".repeat(256)).is_ok());
        assert!(SegmentPattern::compile(&"a".repeat(257)).is_err());
        assert!(SegmentPattern::compile(&"\u{e9}".repeat(128)).is_ok());
        assert!(SegmentPattern::compile(&"\u{e9}".repeat(129)).is_err());
        assert!(SegmentPattern::compile(&"\u{20ac}".repeat(100)).is_err());
        let m = err(&"\u{20ac}".repeat(100));
        assert!(m.contains("300 bytes") && m.contains("256"), "{m}");
        assert!(SegmentPattern::compile(&"*.".repeat(128)).is_ok());
    }

    // ---- S8, S9: the matcher sees the value's text exactly ----

    #[test]
    fn s8_values_compared_exactly_no_trimming() {
        // Like header names (S8), values are taken as given: no trimming, no case folding.
        no("eu", &[" eu", "eu ", "EU", "eu\n"]);
        yes("eu", &["eu"]);
        // Dots split the value, whatever the header is called.
        no("a.b", &["a.b.c", "ab"]);
    }

    #[test]
    fn s9_numeric_looking_values_are_text_to_patterns() {
        // Patterns compare text; only `<`, `<=`, `>`, `>=` read numbers (S9).
        yes("5", &["5"]);
        no("5", &["5.0", "05", "+5", "5e0"]);
        no("0", &["-0"]);
        // A decimal point is a segment separator (S1): `1.5` is two segments.
        no("*", &["1.5"]);
        yes("*.*", &["1.5"]);
        yes("1.*", &["1.5", "1."]);
        yes("1e*", &["1e3", "1e"]);
    }

    #[test]
    fn s6_no_pattern_matches_only_a_literal_star() {
        // Every pattern that matches "*" also matches some other value.
        for p in ["*", "**", "*.**", "**.*"] {
            yes(p, &["*", "x"]);
        }
        yes("x*", &["x*", "x"]);
        yes("*x", &["*x", "x"]);
    }

    // ---- compile errors ----

    #[test]
    fn error_several_stars_in_a_segment() {
        for p in ["a*b*", "***", "*a*", "x.a*b*.y", "****"] {
            let m = err(p);
            assert!(m.contains("more than one `*`"), "{p}: {m}");
            assert!(m.contains("one `*` per segment"), "{p}: {m}");
        }
        let m = err("a*b*");
        assert!(
            m.starts_with("pattern `a*b*`: segment `a*b*` has more than one `*`"),
            "{m}"
        );
        let m = err("x.a*b*.y");
        assert!(m.contains("segment `a*b*`"), "{m}");
    }

    #[test]
    fn error_double_star_joined_to_text() {
        for p in ["a**", "**b", "x**y", "a.**b", "a.b**.c"] {
            let m = err(p);
            assert!(m.contains("joins `**` to other text"), "{p}: {m}");
            assert!(m.contains("whole segment"), "{p}: {m}");
        }
    }

    #[test]
    fn error_more_than_one_double_star() {
        for p in ["**.**", "a.**.b.**", "**.a.**"] {
            let m = err(p);
            assert!(m.contains("more than one `**`"), "{p}: {m}");
        }
    }

    #[test]
    fn valid_edge_patterns() {
        for p in [
            "", ".", "*", "**", "*.**", "**.*", "a.**", "**.a", "a.**.b", "*a", "a*", "*.*.*",
        ] {
            assert!(SegmentPattern::compile(p).is_ok(), "{p}");
        }
        // `*-*` has two stars in one segment.
        assert!(SegmentPattern::compile("*-*").is_err());
    }

    // ---- public helpers ----

    #[test]
    fn helpers() {
        assert!(pat("a.b").is_literal());
        assert!(pat("").is_literal());
        assert!(!pat("a.*").is_literal());
        assert!(!pat("a.**").is_literal());
        assert!(!pat("eu-*").is_literal());
        assert!(pat("a.**").has_double_star());
        assert!(pat("**").has_double_star());
        assert!(!pat("a.*").has_double_star());
        assert_eq!(pat("a.**.b").to_string(), "a.**.b");
        assert_eq!(pat("a.**.b").source(), "a.**.b");
        assert_eq!(pat("a.*"), pat("a.*"));
        assert_ne!(pat("a.*"), pat("a.**"));
        let mut set = std::collections::HashSet::new();
        set.insert(pat("x.*"));
        assert!(set.contains(&pat("x.*")));
    }

    #[test]
    fn literal_pattern_is_string_equality() {
        for p in ["", ".", "a.b", "a..b", "caf\u{e9}", "a\\b"] {
            let c = pat(p);
            assert!(c.is_literal());
            for v in ["", ".", "a.b", "a..b", "caf\u{e9}", "a\\b", "x"] {
                assert_eq!(c.matches(v), p == v, "{p:?} vs {v:?}");
            }
        }
    }

    #[test]
    fn literal_pattern_as_one_segment_matches_as_its_segments() {
        // A pattern without `*` is kept as its source alone (no segments); compiled segment by
        // segment (as before) it must give the same answer for every value.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        const PIECES: [&str; 7] = ["a", "b", ".", ".", "\\", "\u{e9}", "ab"];
        let mut compared = 0;
        for _ in 0..2000 {
            let len = next(7);
            let p: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
            let one = pat(&p);
            let split = match SegmentPattern::compile_segments(&p) {
                Ok(c) => c,
                Err(e) => panic!("pattern {p:?} rejected: {e}"),
            };
            assert!(one.head.is_empty() && one.tail.is_none(), "{p:?}");
            assert_eq!(split.head.len(), p.split('.').count(), "{p:?}");
            assert!(one.is_literal() && split.is_literal(), "{p:?}");
            let mut values: Vec<String> = vec![
                p.clone(),
                format!("{p}."),
                format!(".{p}"),
                format!("{p}a"),
                format!("a{p}"),
            ];
            // The pattern with one character left out.
            let chars: Vec<char> = p.chars().collect();
            if !chars.is_empty() {
                let k = next(chars.len());
                values.push(
                    chars
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != k)
                        .map(|(_, c)| c)
                        .collect(),
                );
            }
            for _ in 0..4 {
                let len = next(7);
                values.push((0..len).map(|_| PIECES[next(PIECES.len())]).collect());
            }
            for v in &values {
                assert_eq!(one.matches(v), split.matches(v), "{p:?} vs {v:?}");
                assert_eq!(one.matches(v), *v == p, "{p:?} vs {v:?}");
                compared += 1;
            }
        }
        assert!(compared > 10_000);
    }

    // ---- performance sanity ----

    #[test]
    fn large_value_with_many_dots() {
        // About 1 MB with 100k dots: "a." then 99_998 segments of 9 bytes, then "z".
        let mut value = String::with_capacity(1_000_100);
        value.push('a');
        for i in 0..99_999u32 {
            value.push('.');
            if i == 99_998 {
                value.push('z');
            } else {
                value.push_str(&format!("{:09}", i));
            }
        }
        assert_eq!(memchr::memchr_iter(b'.', value.as_bytes()).count(), 99_999);
        assert!(value.len() >= 900_000);
        let c = pat("a.**.z");
        assert!(c.matches(&value));
        assert!(pat("**").matches(&value));
        assert!(pat("a.*.**").matches(&value));
        assert!(!pat("a.**.y").matches(&value));
        assert!(!pat("a.*").matches(&value));
        assert!(pat("a.**.*97.z").matches(&value));
        let mut long = value.clone();
        long.push('.');
        assert!(!c.matches(&long));
        assert!(pat("a.**.z.").matches(&long));
    }
}

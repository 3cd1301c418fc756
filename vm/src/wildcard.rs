//! SNS wildcard patterns (sns rule 27, error wordings 43a).
//!
//! `*` matches zero or more characters and the match is anchored at both ends. Several `*` may
//! appear, but not two in a row ("Consecutive wildcard characters"). `\*` is a literal star and `\\`
//! a literal backslash; any other escape, a trailing lone backslash included, is rejected ("Invalid
//! escape character").
//!
//! A pattern is compiled into its literal pieces: the text between the stars, escapes resolved.
//! Matching is the greedy algorithm for star-only globs: the first piece must be a prefix of the
//! value, the last piece a suffix (not overlapping the prefix), and every middle piece is found
//! left to right at its leftmost occurrence after the previous one. For patterns whose only
//! metacharacter is `*` the leftmost choice is always safe, so there is no backtracking; each piece
//! is searched with a precompiled [`memchr::memmem::Finder`].
//!
//! Matching works on the UTF-8 bytes. Since the pieces and the value are valid UTF-8, a piece can
//! only be found at a character boundary, so a `*` always stands for a whole run of characters.

use std::fmt;
use std::hash::{Hash, Hasher};

use memchr::memmem::Finder;

/// A compiled wildcard pattern.
///
/// Equality and hashing use the source text only.
#[derive(Debug, Clone)]
pub struct Wildcard {
    source: Box<str>,
    /// Literal text before the first `*` (the whole pattern when there is no `*`).
    first: Box<str>,
    /// Literal text after the last `*`; `None` when the pattern has no `*`.
    last: Option<Box<str>>,
    /// Searchers for the non-empty pieces between stars, in order.
    middle: Box<[Finder<'static>]>,
}

impl PartialEq for Wildcard {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for Wildcard {}

impl Hash for Wildcard {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.source.hash(state);
    }
}

impl fmt::Display for Wildcard {
    /// Prints the pattern's source text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Why a wildcard was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WildcardError {
    /// AWS wording ("Consecutive wildcard characters", "Invalid escape character").
    pub message: String,
}

impl Wildcard {
    /// Compiles a wildcard pattern.
    ///
    /// Errors (positions count characters of the source, from 0, like event-ruler):
    /// - two unescaped `*` in a row: "Consecutive wildcard characters at pos N" (N: the first);
    /// - a backslash followed by anything but `*` or `\`, or by nothing: "Invalid escape character
    ///   at pos N" (N: the backslash).
    pub fn compile(source: &str) -> Result<Wildcard, WildcardError> {
        let mut pieces: Vec<String> = Vec::new();
        let mut current = String::new();
        // Whether the previous token was an unescaped `*`.
        let mut after_star = false;
        let mut chars = source.chars().enumerate();
        while let Some((pos, c)) = chars.next() {
            match c {
                '*' => {
                    if after_star {
                        return Err(WildcardError {
                            message: format!(
                                "Consecutive wildcard characters at pos {}",
                                pos.saturating_sub(1)
                            ),
                        });
                    }
                    pieces.push(std::mem::take(&mut current));
                    after_star = true;
                }
                '\\' => {
                    match chars.next() {
                        Some((_, e @ ('*' | '\\'))) => current.push(e),
                        _ => {
                            return Err(WildcardError {
                                message: format!("Invalid escape character at pos {pos}"),
                            });
                        }
                    }
                    after_star = false;
                }
                other => {
                    current.push(other);
                    after_star = false;
                }
            }
        }
        pieces.push(current);
        // `pieces` holds (number of stars + 1) entries, so it is never empty.
        let mut iter = pieces.into_iter();
        let first: Box<str> = iter.next().unwrap_or_default().into();
        let last: Option<Box<str>> = iter.next_back().map(String::into_boxed_str);
        // Middle pieces are never empty (no two stars in a row); skip empties anyway.
        let middle: Box<[Finder<'static>]> = iter
            .filter(|p| !p.is_empty())
            .map(|p| Finder::new(p.as_bytes()).into_owned())
            .collect();
        Ok(Wildcard {
            source: source.into(),
            first,
            last,
            middle,
        })
    }

    /// Whether `value` matches (anchored at both ends).
    ///
    /// Linear in the length of `value` for each piece searched, with no backtracking.
    pub fn matches(&self, value: &str) -> bool {
        let Some(last) = &self.last else {
            // No star: plain equality.
            return *self.first == *value;
        };
        let bytes = value.as_bytes();
        let (first, last) = (self.first.as_bytes(), last.as_bytes());
        // The first and last pieces must not share bytes of the value.
        if bytes.len() < first.len().saturating_add(last.len())
            || !crate::bytes::has_prefix(bytes, first)
            || !crate::bytes::has_suffix(bytes, last)
        {
            return false;
        }
        // One star (most patterns): the prefix and suffix decide, without the searchers' frame.
        if self.middle.is_empty() {
            return true;
        }
        self.middle_found(bytes.get(first.len()..bytes.len().saturating_sub(last.len())))
    }

    /// Whether the middle pieces are found in turn in `rest`, the value between the first and
    /// last pieces (`None`: they overlap).
    #[inline(never)]
    fn middle_found(&self, rest: Option<&[u8]>) -> bool {
        let Some(mut rest) = rest else {
            return false;
        };
        for finder in self.middle.iter() {
            let Some(at) = finder.find(rest) else {
                return false;
            };
            match rest.get(at.saturating_add(finder.needle().len())..) {
                Some(r) => rest = r,
                None => return false,
            }
        }
        true
    }

    /// The pattern's source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the pattern has no `*` wildcard, so that it matches exactly one value.
    pub fn is_literal(&self) -> bool {
        self.last.is_none()
    }

    /// The literal text the pattern matches when it has no `*` wildcard (escapes resolved).
    pub fn literal(&self) -> Option<&str> {
        match self.last {
            None => Some(&self.first),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wc(p: &str) -> Wildcard {
        match Wildcard::compile(p) {
            Ok(w) => w,
            Err(e) => panic!("wildcard {p:?} rejected: {e}"),
        }
    }

    fn yes(p: &str, values: &[&str]) {
        let w = wc(p);
        for v in values {
            assert!(w.matches(v), "wildcard {p:?} should match {v:?}");
        }
    }

    fn no(p: &str, values: &[&str]) {
        let w = wc(p);
        for v in values {
            assert!(!w.matches(v), "wildcard {p:?} should not match {v:?}");
        }
    }

    fn err(p: &str) -> String {
        match Wildcard::compile(p) {
            Ok(_) => panic!("wildcard {p:?} should be rejected"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn rule27_star_alone() {
        yes("*", &["", "a", "abc", "*", "a.b/c"]);
    }

    #[test]
    fn rule27_no_star_is_equality() {
        yes("abc", &["abc"]);
        no("abc", &["", "ab", "abcd", "ABC", "xabc"]);
        yes("", &[""]);
        no("", &["a"]);
        assert!(wc("abc").is_literal());
        assert_eq!(wc("a\\*b").literal(), Some("a*b"));
        assert_eq!(wc("a*b").literal(), None);
    }

    #[test]
    fn rule27_anchored_prefix_and_suffix() {
        yes("a*", &["a", "ab", "abc", "a*"]);
        no("a*", &["", "ba", "A"]);
        yes("*a", &["a", "ba", "aa"]);
        no("*a", &["", "ab"]);
        yes("a*b", &["ab", "axb", "abab", "a*b"]);
        no("a*b", &["a", "b", "ba", "abx", "xab"]);
    }

    #[test]
    fn rule27_several_stars() {
        yes("*a*b*", &["ab", "xaybz", "ba b", "aab", "abb", "bab"]);
        no("*a*b*", &["", "a", "b", "ba", "bba"]);
        yes("a*b*c", &["abc", "aXbYc", "abbc", "acbc", "abcbc"]);
        no("a*b*c", &["ac", "abcx", "acb"]);
        yes("*.png*", &["x.png", ".png", "a.png.bak"]);
        yes("*is*wild*", &["this is wild", "iswild"]);
        no("*is*wild*", &["wild is"]);
    }

    #[test]
    fn first_and_last_pieces_do_not_overlap() {
        no("ab*ba", &["aba", "ab", "ba"]);
        yes("ab*ba", &["abba", "abxba"]);
        no("aa*aa", &["aaa"]);
        yes("aa*aa", &["aaaa"]);
        // A middle piece must fit between the prefix and the suffix.
        no("a*bc*d", &["abc", "abd", "ad"]);
        yes("a*bc*d", &["abcd", "axbcxd"]);
        no("a*b*a", &["ab"]);
        no("x*aa*x", &["xaa", "xax"]);
        yes("x*aa*x", &["xaax"]);
    }

    #[test]
    fn escapes() {
        yes("a\\*b", &["a*b"]);
        no("a\\*b", &["ab", "axb", "a\\*b", "a\\b"]);
        yes("a\\\\b", &["a\\b"]);
        no("a\\\\b", &["a\\\\b", "ab"]);
        // `\\*`: a literal backslash, then a star.
        yes("a\\\\*", &["a\\", "a\\xyz"]);
        no("a\\\\*", &["a", "ax"]);
        // `\**`: a literal star, then a wildcard; not two wildcards in a row.
        yes("\\**", &["*", "*abc"]);
        no("\\**", &["", "abc"]);
        // `*\*`: a wildcard, then a literal star.
        yes("*\\*", &["*", "x*"]);
        no("*\\*", &["x"]);
        // `*\**`: the literal star sits between two wildcards.
        yes("*\\**", &["*", "a*b"]);
        no("*\\**", &["ab"]);
    }

    #[test]
    fn error_consecutive_wildcards() {
        for p in ["**", "a**", "**a", "a***b", "a*b**c", "\\***"] {
            let m = err(p);
            assert!(m.contains("Consecutive wildcard characters"), "{p}: {m}");
        }
        assert_eq!(err("h**o"), "Consecutive wildcard characters at pos 1");
    }

    #[test]
    fn error_invalid_escape() {
        for p in [
            "\\", "a\\", "a\\b", "\\n", "\\.", "*\\", "a\\\\\\", "\\\u{e9}",
        ] {
            let m = err(p);
            assert!(m.contains("Invalid escape character"), "{p}: {m}");
        }
        assert_eq!(err("ab\\c"), "Invalid escape character at pos 2");
    }

    #[test]
    fn utf8_values() {
        yes("caf*", &["caf\u{e9}", "caf"]);
        yes("*\u{e9}*", &["\u{e9}", "caf\u{e9}s"]);
        no("*\u{e9}*", &["e\u{301}"]);
        yes(
            "\u{20ac}*\u{20ac}",
            &["\u{20ac}\u{20ac}", "\u{20ac}x\u{20ac}"],
        );
        no("\u{20ac}*\u{20ac}", &["\u{20ac}"]);
    }

    #[test]
    fn identity_and_display() {
        assert_eq!(wc("a*b"), wc("a*b"));
        assert_ne!(wc("a*b"), wc("a\\*b"));
        assert_eq!(wc("a\\*b").to_string(), "a\\*b");
        assert_eq!(wc("a*b").source(), "a*b");
        let mut set = std::collections::HashSet::new();
        set.insert(wc("x*"));
        assert!(set.contains(&wc("x*")));
    }

    #[test]
    fn many_stars_against_a_large_value() {
        let pattern = "a*".repeat(10_000);
        let w = wc(&pattern);
        assert!(!w.is_literal());
        let all_a = "a".repeat(1_000_000);
        assert!(w.matches(&all_a));
        // Only 9_999 `a`s in a 1 MB value: cannot match, and must fail fast.
        let mut sparse = String::with_capacity(1_000_000);
        for i in 0..1_000_000u32 {
            sparse.push(if i % 101 == 0 && i / 101 < 9_999 {
                'a'
            } else {
                'b'
            });
        }
        assert!(!w.matches(&sparse));
        // Exactly 10_000 `a`s, the first at the start: matches.
        let mut enough = String::from("a");
        enough.push_str(&"b".repeat(99));
        for _ in 0..9_999 {
            enough.push('a');
            enough.push_str(&"b".repeat(99));
        }
        assert_eq!(enough.len(), 1_000_000);
        assert!(w.matches(&enough));
        // A value that does not start with `a` never matches.
        let mut shifted = String::from("b");
        shifted.push_str(&enough);
        assert!(!w.matches(&shifted));
    }

    #[test]
    fn adversarial_middle_pieces() {
        // Classic backtracking killer for naive matchers: many `*a` pieces and a value of `a`s
        // ending in `b`.
        let pattern = format!("{}b", "*a".repeat(50));
        let w = wc(&pattern);
        let mut value = "a".repeat(100_000);
        assert!(!w.matches(&value));
        value.push('b');
        assert!(w.matches(&value));
    }
}

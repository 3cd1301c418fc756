//! Ordinal ignore-case comparison (Event Grid EG-31): simple 1:1 Unicode uppercase mapping.
//!
//! Both sides are mapped character by character with the *simple* uppercase mapping of
//! `UnicodeData.txt` and then compared code point by code point. There is no normalisation and
//! no 1:n mapping: `ß` stays `ß` (so `"ß"` does not equal `"SS"`), `ﬀ` stays `ﬀ`.
//!
//! Policy constants are folded once at compile time with [`fold`]; message values are compared
//! against the folded constant with [`eq_folded`], [`starts_with_folded`] and [`ends_with_folded`],
//! which fold the value on the fly, never allocate, and stop at the constant's end (so cost at
//! most the constant's length, whatever the value's). Their `folded` argument must be the output
//! of [`fold`] (a constant with lower-case letters in it matches nothing where those letters
//! are). Substring search reads the value once for all its constants: [`folded_bytes`] streams
//! the folded value into the searcher (`crate::substring`).

/// Characters whose full uppercase mapping (`SpecialCasing.txt`) has more than one character but
/// whose simple mapping (`UnicodeData.txt`) is not the identity: the Greek letters with
/// ypogegrammeni, which map to their titlecase (prosgegrammeni) form. Pairs of (first, last,
/// offset to add). Every other character with a multi-character full mapping (`ß`, `ŉ`, `ǰ`,
/// `ΐ`, `ﬀ`, ...) has no simple uppercase mapping and maps to itself.
const SIMPLE_ONLY: [(char, char, u32); 6] = [
    ('\u{1F80}', '\u{1F87}', 8),
    ('\u{1F90}', '\u{1F97}', 8),
    ('\u{1FA0}', '\u{1FA7}', 8),
    ('\u{1FB3}', '\u{1FB3}', 9),
    ('\u{1FC3}', '\u{1FC3}', 9),
    ('\u{1FF3}', '\u{1FF3}', 9),
];

/// Maps one character with the simple (1:1) Unicode uppercase mapping.
///
/// ASCII maps with `to_ascii_uppercase`. Otherwise the result of `char::to_uppercase` is used when
/// it is exactly one character; when it is several (a full, 1:n mapping) the character maps to
/// itself, except for the 27 Greek letters with ypogegrammeni (`ᾀ`–`ᾇ`, `ᾐ`–`ᾗ`, `ᾠ`–`ᾧ`, `ᾳ`,
/// `ῃ`, `ῳ`) whose simple mapping is their titlecase form (`ᾳ` → `ᾼ`), taken from a small table.
/// The result is exactly the `UnicodeData.txt` simple uppercase mapping of the Unicode version
/// of the standard library. Titlecase digraphs map to the uppercase digraph (`ǅ` → `Ǆ`), `ς` and
/// `σ` both map to `Σ`, dotless `ı` and `i` both map to `I`, `ſ` maps to `S`, and the Kelvin sign
/// `K` (U+212A) maps to itself, not to `K`.
pub fn simple_upper(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    let mut upper = c.to_uppercase();
    if upper.len() == 1 {
        return upper.next().unwrap_or(c);
    }
    for &(first, last, offset) in &SIMPLE_ONLY {
        if first <= c && c <= last {
            return char::from_u32(u32::from(c) + offset).unwrap_or(c);
        }
    }
    c
}

/// Folds a whole string (used at compile time on policy constants).
pub fn fold(s: &str) -> String {
    s.chars().map(simple_upper).collect()
}

/// If `value` starts with `folded` ignoring case, the byte length of the matching prefix of
/// `value` (which may differ from `folded.len()`: `ı` is two bytes, `I` one).
fn match_prefix(value: &str, folded: &str) -> Option<usize> {
    let vb = value.as_bytes();
    let fb = folded.as_bytes();
    let (mut i, mut j) = (0usize, 0usize);
    loop {
        let Some(&f) = fb.get(j) else {
            return Some(i);
        };
        let &v = vb.get(i)?;
        if v.is_ascii() {
            // An ASCII byte folds to an ASCII byte, which cannot equal a non-ASCII lead byte.
            if v.to_ascii_uppercase() != f {
                return None;
            }
            i += 1;
            j += 1;
        } else {
            // `i` and `j` are always on character boundaries.
            let vc = value.get(i..)?.chars().next()?;
            let fc = folded.get(j..)?.chars().next()?;
            if simple_upper(vc) != fc {
                return None;
            }
            i += vc.len_utf8();
            j += fc.len_utf8();
        }
    }
}

/// If `value` ends with `folded` ignoring case, the byte offset in `value` where the match starts.
fn match_suffix(value: &str, folded: &str) -> Option<usize> {
    let vb = value.as_bytes();
    let fb = folded.as_bytes();
    // Byte lengths of the unmatched heads of `value` and `folded`.
    let (mut i, mut j) = (vb.len(), fb.len());
    loop {
        if j == 0 {
            return Some(i);
        }
        if i == 0 {
            return None;
        }
        let (&v, &f) = (vb.get(i - 1)?, fb.get(j - 1)?);
        if v.is_ascii() {
            if v.to_ascii_uppercase() != f {
                return None;
            }
            i -= 1;
            j -= 1;
        } else {
            let vc = value.get(..i)?.chars().next_back()?;
            let fc = folded.get(..j)?.chars().next_back()?;
            if simple_upper(vc) != fc {
                return None;
            }
            i -= vc.len_utf8();
            j -= fc.len_utf8();
        }
    }
}

/// `value` equals `folded` (already folded) ignoring case; does not allocate.
pub fn eq_folded(value: &str, folded: &str) -> bool {
    match_prefix(value, folded) == Some(value.len())
}

/// `value` starts with `folded` ignoring case; does not allocate.
pub fn starts_with_folded(value: &str, folded: &str) -> bool {
    match_prefix(value, folded).is_some()
}

/// `value` ends with `folded` ignoring case; does not allocate.
pub fn ends_with_folded(value: &str, folded: &str) -> bool {
    match_suffix(value, folded).is_some()
}

/// The UTF-8 bytes of [`fold`]`(value)`, produced as they are read, without allocating: one pass
/// over `value` folds it for a search that reads it once (the substring searchers of
/// `str_contains_fold`).
pub fn folded_bytes(value: &str) -> FoldedBytes<'_> {
    FoldedBytes {
        value,
        at: 0,
        pending: [0; 4],
        pending_at: 0,
        pending_len: 0,
    }
}

/// The iterator of [`folded_bytes`]: ASCII bytes map one to one; a non-ASCII character is folded
/// and its UTF-8 bytes are given one by one.
#[derive(Debug, Clone)]
pub struct FoldedBytes<'a> {
    value: &'a str,
    /// The byte offset of the next character of `value` (always a character boundary).
    at: usize,
    /// The folded UTF-8 bytes of the last non-ASCII character, `pending_at..pending_len` unread.
    pending: [u8; 4],
    pending_at: u8,
    pending_len: u8,
}

impl Iterator for FoldedBytes<'_> {
    type Item = u8;

    #[inline]
    fn next(&mut self) -> Option<u8> {
        if self.pending_at < self.pending_len {
            let byte = self.pending.get(usize::from(self.pending_at)).copied();
            self.pending_at += 1;
            return byte;
        }
        let byte = *self.value.as_bytes().get(self.at)?;
        if byte.is_ascii() {
            self.at += 1;
            return Some(byte.to_ascii_uppercase());
        }
        let c = self.value.get(self.at..)?.chars().next()?;
        self.at += c.len_utf8();
        let folded = simple_upper(c).encode_utf8(&mut self.pending);
        // 2 to 4 bytes: the first now, the rest from `pending`.
        self.pending_len = u8::try_from(folded.len()).unwrap_or(0);
        self.pending_at = 1;
        self.pending.first().copied()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Values and constants whose folding differs from ASCII or from full case mapping: the
    /// corpus the folded comparisons here, and the folded search in `crate::substring`, are
    /// checked against `fold` on.
    pub(crate) const SAMPLES: &[&str] = &[
        "",
        "a",
        "A",
        "ab",
        "Azure",
        "azure data",
        "ß",
        "SS",
        "straße",
        "ı",
        "i",
        "I",
        "İ",
        "ſ",
        "s",
        "σ",
        "ς",
        "Σ",
        "ᾳ",
        "ᾼ",
        "ΑΙ",
        "ǅ",
        "Ǆ",
        "\u{212A}",
        "k",
        "K",
        "ɐ",
        "Ɐ",
        "aı",
        "ıa",
        "ﬀ",
        "FF",
        "ab\u{0301}",
        "😀a",
        "a😀",
        "é",
        "É",
        "e\u{0301}",
    ];

    /// Checks every operation against the allocating reference `fold(value)`.
    fn check_against_fold(value: &str, constant: &str) {
        let folded = fold(constant);
        let value_folded = fold(value);
        assert_eq!(
            eq_folded(value, &folded),
            value_folded == folded,
            "eq {value:?} {constant:?}"
        );
        assert_eq!(
            starts_with_folded(value, &folded),
            value_folded.starts_with(&folded),
            "starts {value:?} {constant:?}"
        );
        assert_eq!(
            ends_with_folded(value, &folded),
            value_folded.ends_with(&folded),
            "ends {value:?} {constant:?}"
        );
        assert_eq!(
            folded_bytes(value).collect::<Vec<u8>>(),
            value_folded.as_bytes(),
            "folded bytes of {value:?}"
        );
    }

    #[test]
    fn ascii() {
        assert_eq!(fold("Hello, World! 123"), "HELLO, WORLD! 123");
        assert!(eq_folded("hello", &fold("HeLLo")));
        assert!(eq_folded("HELLO", &fold("hello")));
        assert!(!eq_folded("hello", &fold("hell")));
        assert!(!eq_folded("hell", &fold("hello")));
        assert!(!eq_folded("hello!", &fold("hello?")));
        assert!(eq_folded("", ""));
        assert!(starts_with_folded("Microsoft.Storage", &fold("microsoft.")));
        assert!(!starts_with_folded("Micro", &fold("microsoft.")));
        assert!(ends_with_folded("photo.JPG", &fold(".jpg")));
        assert!(!ends_with_folded("photo.png", &fold(".jpg")));
        assert!(!ends_with_folded("jpg", &fold(".jpg")));
        // Punctuation next to letters: '[' (0x5B) and '{' (0x7B) are not a case pair.
        assert!(!eq_folded("{", "["));
        assert!(!eq_folded("@", "`"));
    }

    #[test]
    fn empty_constant_matches_everything() {
        for value in ["", "a", "straße", "ᾳ"] {
            assert!(starts_with_folded(value, ""));
            assert!(ends_with_folded(value, ""));
        }
        assert!(eq_folded("", ""));
        assert!(!eq_folded("a", ""));
        assert!(!starts_with_folded("", "A"));
        assert!(!ends_with_folded("", "A"));
    }

    #[test]
    fn sharp_s_has_no_one_to_many_mapping() {
        assert_eq!(simple_upper('ß'), 'ß');
        assert!(!eq_folded("ß", &fold("SS")));
        assert!(!eq_folded("SS", &fold("ß")));
        assert!(eq_folded("straße", &fold("STRAßE")));
        assert!(eq_folded("STRAßE", &fold("straße")));
        assert!(!eq_folded("strasse", &fold("straße")));
        assert!(ends_with_folded("Die Straße", &fold("ßE")));
        assert_eq!(simple_upper('ﬀ'), 'ﬀ');
        assert_eq!(simple_upper('ŉ'), 'ŉ');
        assert_eq!(simple_upper('ǰ'), 'ǰ');
    }

    #[test]
    fn greek_sigma() {
        assert_eq!(simple_upper('σ'), 'Σ');
        assert_eq!(simple_upper('ς'), 'Σ');
        assert!(eq_folded("ς", &fold("σ")));
        assert!(eq_folded("σ", &fold("ς")));
        assert!(eq_folded("ΟΔΥΣΣΕΥΣ", &fold("οδυσσευς")));
        assert!(ends_with_folded("Ὀδυσσεύς", &fold("ΣΕΎΣ")));
        assert!(starts_with_folded("Ὀδυσσεύς", &fold("ὀΔ")));
    }

    #[test]
    fn greek_ypogegrammeni_use_the_simple_mapping() {
        // Full uppercase of ᾳ is "ΑΙ"; its simple uppercase is ᾼ (U+1FBC).
        assert_eq!(simple_upper('\u{1FB3}'), '\u{1FBC}');
        assert_eq!(simple_upper('\u{1FC3}'), '\u{1FCC}');
        assert_eq!(simple_upper('\u{1FF3}'), '\u{1FFC}');
        assert_eq!(simple_upper('\u{1F80}'), '\u{1F88}');
        assert_eq!(simple_upper('\u{1F97}'), '\u{1F9F}');
        assert_eq!(simple_upper('\u{1FA5}'), '\u{1FAD}');
        // The titlecase forms are their own simple uppercase, as are ᾲ, ᾴ, ᾶ (no simple mapping).
        assert_eq!(simple_upper('\u{1F88}'), '\u{1F88}');
        assert_eq!(simple_upper('\u{1FBC}'), '\u{1FBC}');
        assert_eq!(simple_upper('\u{1FB2}'), '\u{1FB2}');
        assert_eq!(simple_upper('\u{1FB6}'), '\u{1FB6}');
        assert!(eq_folded("ᾳ", &fold("ᾼ")));
        assert!(!eq_folded("ᾳ", &fold("ΑΙ")));
    }

    #[test]
    fn turkish_dotless_i() {
        // Simple uppercase of U+0131 'ı' is 'I', the same as for 'i': so under EG-31 they are
        // equal ignoring case. The dotted capital 'İ' (U+0130) is its own uppercase and differs.
        assert_eq!(simple_upper('ı'), 'I');
        assert!(eq_folded("ı", &fold("i")));
        assert!(eq_folded("i", &fold("ı")));
        assert!(eq_folded("ıstanbul", "ISTANBUL"));
        assert!(ends_with_folded("xı", "I"));
        assert_eq!(simple_upper('İ'), 'İ');
        assert!(!eq_folded("İ", &fold("i")));
        // Long s folds to 'S'.
        assert!(eq_folded("ſ", "S"));
    }

    #[test]
    fn kelvin_sign() {
        // 'K' (U+212A) is uppercase already; 'k' uppercases to ASCII 'K' (U+004B).
        assert_eq!(simple_upper('\u{212A}'), '\u{212A}');
        assert_eq!(simple_upper('k'), 'K');
        assert!(!eq_folded("k", &fold("\u{212A}")));
        assert!(!eq_folded("\u{212A}", &fold("k")));
        assert!(!eq_folded("K", &fold("\u{212A}")));
    }

    #[test]
    fn titlecase_digraphs() {
        assert_eq!(simple_upper('ǅ'), 'Ǆ');
        assert_eq!(simple_upper('ǆ'), 'Ǆ');
        assert_eq!(simple_upper('ǈ'), 'Ǉ');
        assert_eq!(simple_upper('ǋ'), 'Ǌ');
        assert_eq!(simple_upper('ǲ'), 'Ǳ');
        assert!(eq_folded("ǅ", &fold("ǆ")));
    }

    #[test]
    fn byte_length_changes_under_folding() {
        // 'ɐ' (2 bytes) -> 'Ɐ' (3 bytes); 'ı' (2 bytes) -> 'I' (1 byte).
        assert_eq!(simple_upper('ɐ'), 'Ɐ');
        assert!(eq_folded("ɐı", &fold("ⱯI")));
        assert!(starts_with_folded("ɐıx", "ⱯI"));
        assert!(ends_with_folded("xɐı", "ⱯI"));
    }

    #[test]
    fn agrees_with_allocating_fold() {
        for &value in SAMPLES {
            for &constant in SAMPLES {
                check_against_fold(value, constant);
                let joined = format!("{value}{constant}{value}");
                check_against_fold(&joined, constant);
                check_against_fold(value, &joined);
            }
        }
    }

    #[test]
    fn simple_upper_is_idempotent_and_agrees_with_std_where_single() {
        let mut to_ascii = Vec::new();
        for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
            let u = simple_upper(c);
            assert_eq!(simple_upper(u), u, "{c:?}");
            let full: Vec<char> = c.to_uppercase().collect();
            if full.len() == 1 {
                assert_eq!(full, [u], "{c:?}");
            }
            if !c.is_ascii() && u.is_ascii() {
                to_ascii.push(c);
            }
        }
        // Only these non-ASCII characters fold into ASCII.
        assert_eq!(to_ascii, ['ı', 'ſ']);
    }
}

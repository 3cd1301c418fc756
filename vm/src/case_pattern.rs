//! Case-insensitive patterns with full case mappings, per UTF-16 code unit (`docs/dialects/
//! eventbridge-patterns.md` EB-20, EB-21).
//!
//! A pattern `s` is split into UTF-16 code units `c1..cn`. Each unit that is not half of a
//! surrogate pair accepts exactly two strings: the full lowercase and the full uppercase mapping of
//! the one-character string `ci` (locale-independent, Rust's `char::to_lowercase` /
//! `to_uppercase`); these may be longer than one character. A supplementary character (a surrogate
//! pair) accepts only itself. A value *equals* the pattern when it is `a1..an` with each `ai`
//! accepted by `ci`; it *starts with* (ends with) the pattern when a prefix (suffix) of it does.
//!
//! So `ß` accepts `ß` and `SS` (not `ss`), `ǅ` accepts `ǆ` and `Ǆ` but not itself, `Σ` accepts
//! `Σ` and `σ` (not `ς`), and `k` does not accept the Kelvin sign. This is not "fold both sides and
//! compare" ([`crate::fold`], EG-31): the relation is not symmetric.
//!
//! Matching reads the value's bytes once per unit over the set of offsets reached so far (one,
//! unless a unit's two strings both match at one offset, which Unicode's mappings make rare), with
//! no allocation while that set stays small. A pattern of ASCII only is compared with ASCII case
//! folding: for an ASCII unit both mappings are the ASCII letter in either case (or the unit
//! itself), one byte each.

use std::fmt;

/// Where a [`CasePattern`] must match in the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaseMode {
    /// The whole value (`equals-ignore-case`, EB-20).
    Equals,
    /// A prefix of the value (`{"prefix": {"equals-ignore-case": s}}`, EB-21).
    Prefix,
    /// A suffix of the value (`{"suffix": {"equals-ignore-case": s}}`, EB-21).
    Suffix,
}

impl CaseMode {
    /// Every mode.
    pub const ALL: [CaseMode; 3] = [CaseMode::Equals, CaseMode::Prefix, CaseMode::Suffix];

    /// The mode's name, as the IR and the disassembly write it.
    pub fn name(self) -> &'static str {
        match self {
            CaseMode::Equals => "equals",
            CaseMode::Prefix => "prefix",
            CaseMode::Suffix => "suffix",
        }
    }
}

/// The strings one code unit accepts (one or two).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Unit {
    lower: Box<str>,
    /// `None` when the uppercase mapping is the lowercase one.
    upper: Option<Box<str>>,
}

impl Unit {
    fn of(c: char) -> Unit {
        if u32::from(c) > 0xFFFF {
            // A surrogate pair in UTF-16: each half is its own unit, and event-ruler's halves are
            // unmatchable; this dialect lets the pair accept only itself (EB-20 DECISION).
            return Unit {
                lower: c.to_string().into(),
                upper: None,
            };
        }
        let lower: String = c.to_lowercase().collect();
        let upper: String = c.to_uppercase().collect();
        Unit {
            upper: (upper != lower).then(|| upper.into()),
            lower: lower.into(),
        }
    }

    fn strings(&self) -> impl Iterator<Item = &str> {
        std::iter::once(&*self.lower).chain(self.upper.as_deref())
    }
}

/// A compiled case-insensitive pattern (EB-20, EB-21). Equality and hashing follow the source
/// text and the mode.
#[derive(Debug, Clone)]
pub struct CasePattern {
    source: Box<str>,
    mode: CaseMode,
    /// Whether the source is ASCII (then matching folds ASCII case and reads no units).
    ascii: bool,
    units: Box<[Unit]>,
}

impl PartialEq for CasePattern {
    fn eq(&self, other: &CasePattern) -> bool {
        self.source == other.source && self.mode == other.mode
    }
}

impl Eq for CasePattern {}

impl std::hash::Hash for CasePattern {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.source.hash(state);
        self.mode.hash(state);
    }
}

impl fmt::Display for CasePattern {
    /// The mode and the source, quoted: `prefix "EventB"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}",
            self.mode.name(),
            crate::json::Quoted(&self.source)
        )
    }
}

/// Offsets into the value reached so far, kept sorted and distinct; a few inline, more on the
/// heap.
struct Offsets {
    inline: [usize; 4],
    len: usize,
    spill: Vec<usize>,
}

impl Offsets {
    fn one(at: usize) -> Offsets {
        Offsets {
            inline: [at, 0, 0, 0],
            len: 1,
            spill: Vec::new(),
        }
    }

    fn empty() -> Offsets {
        Offsets {
            inline: [0; 4],
            len: 0,
            spill: Vec::new(),
        }
    }

    fn as_slice(&self) -> &[usize] {
        if self.spill.is_empty() {
            self.inline.get(..self.len).unwrap_or(&[])
        } else {
            &self.spill
        }
    }

    fn insert(&mut self, at: usize) {
        if self.as_slice().contains(&at) {
            return;
        }
        if self.spill.is_empty() {
            if let Some(slot) = self.inline.get_mut(self.len) {
                *slot = at;
                self.len += 1;
                return;
            }
            self.spill.extend_from_slice(&self.inline);
        }
        self.spill.push(at);
    }

    fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
}

impl CasePattern {
    /// Compiles `source` for `mode`.
    pub fn new(source: &str, mode: CaseMode) -> CasePattern {
        CasePattern {
            source: source.into(),
            mode,
            ascii: source.is_ascii(),
            units: source.chars().map(Unit::of).collect(),
        }
    }

    /// The pattern as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Where it must match.
    pub fn mode(&self) -> CaseMode {
        self.mode
    }

    /// Whether `value` matches (as [`CasePattern::mode`] says).
    pub fn matches(&self, value: &str) -> bool {
        let v = value.as_bytes();
        if self.ascii {
            let p = self.source.as_bytes();
            let part = match self.mode {
                CaseMode::Equals if v.len() != p.len() => return false,
                CaseMode::Equals | CaseMode::Prefix => v.get(..p.len()),
                CaseMode::Suffix => v.len().checked_sub(p.len()).and_then(|at| v.get(at..)),
            };
            return part.is_some_and(|part| part.eq_ignore_ascii_case(p));
        }
        match self.mode {
            CaseMode::Equals => self.forward(v).as_slice().contains(&v.len()),
            CaseMode::Prefix => !self.forward(v).is_empty(),
            CaseMode::Suffix => !self.backward(v).is_empty(),
        }
    }

    /// The offsets reached by reading the units from the start of `v`.
    fn forward(&self, v: &[u8]) -> Offsets {
        let mut reached = Offsets::one(0);
        for unit in self.units.iter() {
            let mut next = Offsets::empty();
            for &at in reached.as_slice() {
                let rest = v.get(at..).unwrap_or_default();
                for s in unit.strings() {
                    if rest.starts_with(s.as_bytes()) {
                        next.insert(at + s.len());
                    }
                }
            }
            if next.is_empty() {
                return next;
            }
            reached = next;
        }
        reached
    }

    /// The offsets reached by reading the units backwards from the end of `v`.
    fn backward(&self, v: &[u8]) -> Offsets {
        let mut reached = Offsets::one(v.len());
        for unit in self.units.iter().rev() {
            let mut next = Offsets::empty();
            for &at in reached.as_slice() {
                let head = v.get(..at).unwrap_or_default();
                for s in unit.strings() {
                    if head.ends_with(s.as_bytes()) {
                        next.insert(at - s.len());
                    }
                }
            }
            if next.is_empty() {
                return next;
            }
            reached = next;
        }
        reached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eq(p: &str, v: &str) -> bool {
        CasePattern::new(p, CaseMode::Equals).matches(v)
    }

    #[test]
    fn eb_20_examples() {
        assert!(eq("AWS.EC2", "aws.ec2"));
        assert!(!eq("AWS", "aws.ec2"));
        assert!(eq("ÉCOLE", "école"));
        assert!(eq("ß", "ß") && eq("ß", "SS"));
        assert!(!eq("ß", "ss") && !eq("SS", "ß"));
        assert!(eq("ǅ", "ǆ") && eq("ǅ", "Ǆ") && !eq("ǅ", "ǅ"));
        assert!(eq("İ", "İ") && eq("İ", "i\u{307}"));
        assert!(eq("ς", "ς") && eq("ς", "Σ"));
        assert!(eq("Σ", "Σ") && eq("Σ", "σ") && !eq("Σ", "ς"));
        assert!(!eq("k", "\u{212A}"));
        assert!(eq("😀", "😀") && !eq("😀", "??"));
        assert!(eq("", "") && !eq("", "a"));
        assert!(eq("straße", "STRASSE") && eq("straße", "strasse".replace("ss", "ß").as_str()));
        assert!(!eq("a", "ab") && !eq("ab", "a"));
    }

    #[test]
    fn eb_21_prefix_and_suffix() {
        let p = CasePattern::new("EventB", CaseMode::Prefix);
        assert!(p.matches("eventbridge") && p.matches("EVENTB") && !p.matches("event"));
        let s = CasePattern::new(".png", CaseMode::Suffix);
        assert!(s.matches("PHOTO.PNG") && s.matches(".png") && !s.matches("png"));
        let ss = CasePattern::new("ß", CaseMode::Suffix);
        assert!(ss.matches("GROSS") && ss.matches("groß") && !ss.matches("gross"));
        let pi = CasePattern::new("İx", CaseMode::Prefix);
        assert!(pi.matches("i\u{307}XYZ") && pi.matches("İx") && !pi.matches("ix"));
        assert!(CasePattern::new("", CaseMode::Suffix).matches("anything"));
    }

    #[test]
    fn ascii_path_agrees_with_units() {
        // The ASCII fast path gives what reading units gives.
        let values = [
            "",
            "a",
            "A",
            "ab",
            "AB",
            "aB",
            "abc",
            "ab\u{212A}",
            "k",
            "K",
            "\u{17F}",
        ];
        for p in ["", "a", "Ab", "ABC", "k", "s", "1a"] {
            for mode in CaseMode::ALL {
                let fast = CasePattern::new(p, mode);
                let mut slow = fast.clone();
                slow.ascii = false;
                for v in values {
                    assert_eq!(fast.matches(v), slow.matches(v), "{p:?} {mode:?} {v:?}");
                }
            }
        }
    }
}

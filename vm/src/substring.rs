//! Substring tests over a list of strings: `str_contains` and `str_contains_fold`.
//!
//! A [`Substrings`] searcher answers "does the value contain one of the list's strings" in one
//! pass over the value, for all the strings at once: an Aho-Corasick automaton (the
//! `aho-corasick` crate's DFA when its table is small next to the list, [`DFA_BYTES_PER_BYTE`],
//! its contiguous NFA otherwise), walked one byte at a time. Ignoring case (`str_contains_fold`,
//! EG-31), the value is folded character by character as it is read ([`fold::folded_bytes`]) and
//! the folded bytes are walked the same way, so the fold happens once per value and nothing is
//! allocated. Each byte costs amortized constant time, so a test is linear in the value whatever
//! the list (Event Grid's limits allow 25 strings of 512 characters; a value may be megabytes).
//! A list of one string is searched exactly with `memchr`'s two-way searcher instead, linear too.
//!
//! Searchers are built once per list, when the program is verified (`Program::new`, which
//! decoding runs too), never per evaluation. Their memory must stay in proportion to the list,
//! even for a hostile program, so the list is prepared first:
//!
//! - an empty string is contained in every string: such a list needs no automaton;
//! - the strings are taken in groups of at most [`GROUP`] (one group for any policy within the
//!   dialect limits; a longer list from a hostile program costs one pass per group);
//! - within a group, a string that contains another string of the group is dropped: it can only
//!   occur where the shorter one occurs too. What is left is substring-free, so no state of the
//!   automaton matches more than one string. (The automaton keeps, for each state, every string
//!   that ends there; for a group like `a`, `aa`, …, `a` × 1000 that is quadratic.)
//!
//! Dropping costs `GROUP` substring searches per string, each linear: building is linear in the
//! list's bytes.

use crate::fold;
use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::{contiguous, noncontiguous};
use aho_corasick::{Anchored, MatchKind, StartKind, dfa};
use memchr::memmem::Finder;
use std::fmt;
use std::sync::Arc;

/// The most strings one automaton holds (at least Event Grid's 25 values, so that any policy
/// within the dialect limits is searched in one pass).
pub const GROUP: usize = 32;

/// A group is searched with a DFA (one table lookup per byte) when its transition table takes
/// at most this many bytes per byte of the group's encoding (each string's 4-byte length and its
/// bytes), and building it at most [`DFA_STEPS_PER_BYTE`] steps; otherwise with the compact NFA
/// (a few steps per byte, memory about that of the strings, built in linear time). Lists of a few
/// short strings, what policies hold, get the DFA.
const DFA_BYTES_PER_BYTE: usize = 128;

/// The most steps per byte of a group's encoding that building its DFA may take. Each entry of
/// the table (states × alphabet) that has no transition of its own follows failure links, at
/// most the longest string's length of them: for long strings (`a` × 50,000) that is quadratic.
const DFA_STEPS_PER_BYTE: usize = 1024;

/// The automaton of one group of strings.
#[derive(Clone)]
enum Group {
    Dfa(dfa::DFA),
    Nfa(contiguous::NFA),
}

impl Group {
    /// Walks `bytes` through the automaton: true as soon as one of its strings has been seen.
    #[inline]
    fn found(&self, bytes: impl Iterator<Item = u8>) -> bool {
        match self {
            Group::Dfa(dfa) => walk(dfa, bytes),
            Group::Nfa(nfa) => walk(nfa, bytes),
        }
    }
}

/// The searcher of one string list (see the module documentation).
#[derive(Clone)]
pub struct Substrings {
    /// Some string of the list is empty, so every value contains one.
    has_empty: bool,
    /// For a list of one string, its `memchr` searcher: the exact search (`found_in`) then needs
    /// no automaton, and runs at memory speed (two-way search, linear in the worst case).
    single: Option<Finder<'static>>,
    /// One automaton per group of strings.
    automata: Box<[Group]>,
}

impl fmt::Debug for Substrings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Substrings")
            .field("has_empty", &self.has_empty)
            .field("single", &self.single.is_some())
            .field("automata", &self.automata.len())
            .finish()
    }
}

/// Why a list could not be made into a searcher (more states than the automaton can number;
/// no list of a program within [`crate::program::MAX_INSTRUCTIONS`]-sized encodings gets there
/// in practice, but the verifier rejects it rather than fail later).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the strings cannot be searched: {0}")]
pub struct SubstringsError(String);

impl Substrings {
    /// Builds the searcher of `needles`.
    pub fn new(needles: &[Arc<str>]) -> Result<Substrings, SubstringsError> {
        Substrings::with_dfa_budget(needles, DFA_BYTES_PER_BYTE)
    }

    /// [`Substrings::new`] with [`DFA_BYTES_PER_BYTE`] given (tests force each kind with it).
    fn with_dfa_budget(
        needles: &[Arc<str>],
        dfa_bytes_per_byte: usize,
    ) -> Result<Substrings, SubstringsError> {
        if needles.iter().any(|n| n.is_empty()) {
            return Ok(Substrings {
                has_empty: true,
                single: None,
                automata: Box::new([]),
            });
        }
        // No dense states in the trie under construction: a dense state costs a row of the whole
        // alphabet. The finished automaton has one, its start state, which every byte of a value
        // that is not inside a match goes through; its row is at most twice the distinct bytes of
        // the group long, so still in proportion to the group.
        let mut trie = noncontiguous::Builder::new();
        trie.match_kind(MatchKind::Standard)
            .prefilter(false)
            .dense_depth(0);
        let mut compact = contiguous::Builder::new();
        compact.dense_depth(1);
        let mut table = dfa::Builder::new();
        table.start_kind(StartKind::Unanchored);
        let automata = needles
            .chunks(GROUP)
            .map(|group| {
                let kept = substring_free(group);
                let encoded: usize = group.iter().map(|n| 4 + n.len()).sum();
                let built = trie
                    .build(kept.iter().map(|n| n.as_bytes()))
                    .and_then(|nfa| {
                        let (table_bytes, build_steps) = dfa_bounds(&kept);
                        if table_bytes <= dfa_bytes_per_byte.saturating_mul(encoded)
                            && build_steps <= DFA_STEPS_PER_BYTE.saturating_mul(encoded)
                        {
                            table.build_from_noncontiguous(&nfa).map(Group::Dfa)
                        } else {
                            compact.build_from_noncontiguous(&nfa).map(Group::Nfa)
                        }
                    });
                built.map_err(|e| SubstringsError(e.to_string()))
            })
            .collect::<Result<Box<[_]>, SubstringsError>>()?;
        let single = match needles {
            [one] => Some(Finder::new(one.as_bytes()).into_owned()),
            _ => None,
        };
        Ok(Substrings {
            has_empty: false,
            single,
            automata,
        })
    }

    /// `value` contains one of the strings.
    #[inline]
    pub fn found_in(&self, value: &str) -> bool {
        if let Some(finder) = &self.single {
            return finder.find(value.as_bytes()).is_some();
        }
        self.has_empty || self.automata.iter().any(|group| group.found(value.bytes()))
    }

    /// The simple uppercase fold of `value` ([`fold::fold`]) contains one of the strings (which
    /// the compiler folded: a string with lower-case letters matches nothing where they are).
    #[inline]
    pub fn found_in_folded(&self, value: &str) -> bool {
        self.has_empty
            || self
                .automata
                .iter()
                .any(|group| group.found(fold::folded_bytes(value)))
    }
}

/// Walks `bytes` through `automaton`: true as soon as one of its strings has been seen.
#[inline]
fn walk(automaton: &impl Automaton, bytes: impl Iterator<Item = u8>) -> bool {
    let Ok(mut state) = automaton.start_state(Anchored::No) else {
        return false;
    };
    if automaton.is_match(state) {
        return true;
    }
    for byte in bytes {
        state = automaton.next_state(Anchored::No, state, byte);
        if automaton.is_match(state) {
            return true;
        }
    }
    false
}

/// Upper bounds, for a DFA of `strings`, of the bytes of its transition table and of the steps
/// building it takes. The table has a row per state (one per node of the strings' trie, counted
/// from the sorted strings and their common prefixes, and four special ones), each of the
/// alphabet's size rounded up to a power of two, where each distinct byte adds at most two
/// classes of bytes. Building fills each entry following at most as many failure links as the
/// longest string is long.
fn dfa_bounds(strings: &[&str]) -> (usize, usize) {
    let mut seen = [false; 256];
    for &byte in strings.iter().flat_map(|s| s.as_bytes()) {
        if let Some(slot) = seen.get_mut(usize::from(byte)) {
            *slot = true;
        }
    }
    let distinct = seen.iter().filter(|&&s| s).count();
    let stride = (2 * distinct + 1).min(256).next_power_of_two();
    let mut sorted: Vec<&[u8]> = strings.iter().map(|s| s.as_bytes()).collect();
    sorted.sort_unstable();
    let mut states = 4usize;
    let mut previous: &[u8] = &[];
    for s in sorted {
        let common = s.iter().zip(previous).take_while(|(a, b)| a == b).count();
        states += s.len() - common;
        previous = s;
    }
    let entries = states.saturating_mul(stride);
    let longest = strings.iter().map(|s| s.len()).max().unwrap_or(0);
    (
        entries.saturating_mul(4),
        entries.saturating_mul(longest + 1),
    )
}

/// The strings of `group` that contain no other string of it (of two equal strings, the first).
/// Each string's searcher is built once; each string is searched for every other: at most
/// [`GROUP`] linear searches per string.
fn substring_free(group: &[Arc<str>]) -> Vec<&str> {
    let finders: Vec<Finder<'_>> = group.iter().map(|n| Finder::new(n.as_bytes())).collect();
    let contains_another = |i: usize, s: &str| {
        group
            .iter()
            .zip(&finders)
            .enumerate()
            .any(|(j, (other, finder))| {
                j != i
                    && other.len() <= s.len()
                    && (other.len() < s.len() || j < i)
                    && finder.find(s.as_bytes()).is_some()
            })
    };
    group
        .iter()
        .enumerate()
        .filter(|&(i, s)| !contains_another(i, s))
        .map(|(_, s)| &**s)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Substring search ignoring case, the way `str_contains_fold` runs it: the constant folded
    /// (`fold::fold`) into the searcher, the value folded as it is read.
    fn contains_folded(value: &str, folded: &str) -> bool {
        Substrings::new(&[folded.into()])
            .unwrap()
            .found_in_folded(value)
    }

    #[test]
    fn folded_search() {
        use fold::fold;
        assert!(contains_folded("Azure Data Factory", &fold("azure")));
        assert!(contains_folded("Azure Data Factory", &fold("DATA f")));
        assert!(contains_folded("Azure Data Factory", &fold("factory")));
        assert!(!contains_folded("Azure Data Factory", &fold("factoryy")));
        assert!(!contains_folded("Azure Data Factory", &fold("azure  data")));
        assert!(contains_folded("aaaab", &fold("AAB")));
        assert!(!contains_folded("aaaa", &fold("AAB")));
        // Punctuation next to letters: '[' (0x5B) and '{' (0x7B) are not a case pair.
        assert!(!contains_folded("a{b", "A[B"));
        // An empty constant is found in every value.
        for value in ["", "a", "straße", "ᾳ"] {
            assert!(contains_folded(value, ""));
        }
        assert!(!contains_folded("", "A"));
        // ß has no one-to-many mapping; both sigmas fold to Σ.
        assert!(contains_folded("Die Straße", &fold("STRAß")));
        assert!(contains_folded("ὀδυσσεύς", &fold("ΥΣΣ")));
        // Dotless ı folds to 'I'.
        assert!(contains_folded("ıı", "I"));
        assert!(contains_folded("xıy", "IY"));
        // Byte length changes under folding: 'ɐ' (2 bytes) -> 'Ɐ' (3 bytes), 'ı' (2) -> 'I' (1).
        assert!(contains_folded("xxɐıx", "ⱯI"));
        assert!(!contains_folded("xxɐx", "ⱯI"));
    }

    #[test]
    fn folded_search_agrees_with_allocating_fold() {
        use fold::fold;
        let check = |value: &str, constant: &str| {
            let folded = fold(constant);
            assert_eq!(
                contains_folded(value, &folded),
                fold(value).contains(&folded),
                "contains {value:?} {constant:?}"
            );
        };
        for &value in fold::tests::SAMPLES {
            for &constant in fold::tests::SAMPLES {
                check(value, constant);
                let joined = format!("{value}{constant}{value}");
                check(&joined, constant);
                check(value, &joined);
            }
        }
    }

    fn searcher(needles: &[&str]) -> Substrings {
        let needles: Vec<Arc<str>> = needles.iter().map(|&n| n.into()).collect();
        Substrings::new(&needles).unwrap()
    }

    /// The searcher of `needles` with only DFAs (`true`) or only NFAs.
    fn searcher_of_kind(needles: &[&str], dfa: bool) -> Substrings {
        let needles: Vec<Arc<str>> = needles.iter().map(|&n| n.into()).collect();
        let budget = if dfa { usize::MAX } else { 0 };
        let s = Substrings::with_dfa_budget(&needles, budget).unwrap();
        assert!(s.automata.iter().all(|g| matches!(g, Group::Dfa(_)) == dfa));
        s
    }

    /// The definition: some needle is a substring (of the folded value, when folding).
    fn naive(needles: &[&str], value: &str, folded: bool) -> bool {
        let value = if folded {
            fold::fold(value)
        } else {
            value.to_owned()
        };
        needles.iter().any(|n| value.contains(n))
    }

    /// A tiny seeded generator (xorshift), so the test needs no dependency.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        fn string(&mut self, alphabet: &[&str], max: usize) -> String {
            let len = self.below(max + 1);
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len())])
                .collect()
        }
    }

    #[test]
    fn agrees_with_the_definition_on_random_lists() {
        // Few letters, so that needles overlap, nest and repeat; letters whose fold changes their
        // byte length (ı → I, ɐ → Ɐ) and ones without a simple mapping (ß).
        let alphabet = ["a", "b", "A", "B", "ı", "I", "ɐ", "Ɐ", "ß", "σ", "Σ", "ς"];
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for round in 0..3000 {
            // Up to twice a group, so that lists of several groups are covered.
            let count = 1 + rng.below(2 * GROUP);
            let mut needles: Vec<String> = (0..count)
                .map(|_| {
                    let n = rng.string(&alphabet, 4);
                    if n.is_empty() { "a".into() } else { n }
                })
                .collect();
            if round % 500 == 0 {
                needles.push(String::new());
            }
            let folded_needles: Vec<String> = needles.iter().map(|n| fold::fold(n)).collect();
            let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
            let folded_needles: Vec<&str> = folded_needles.iter().map(String::as_str).collect();
            let dfa = round % 2 == 0;
            let plain = searcher_of_kind(&needles, dfa);
            let folded = searcher_of_kind(&folded_needles, dfa);
            for _ in 0..8 {
                let value = rng.string(&alphabet, 12);
                assert_eq!(
                    plain.found_in(&value),
                    naive(&needles, &value, false),
                    "{needles:?} in {value:?}"
                );
                assert_eq!(
                    folded.found_in_folded(&value),
                    naive(&folded_needles, &value, true),
                    "{folded_needles:?} in fold({value:?})"
                );
                // An unfolded list is searched as written in the folded value.
                assert_eq!(
                    plain.found_in_folded(&value),
                    naive(&needles, &value, true),
                    "{needles:?} in fold({value:?})"
                );
            }
        }
    }

    #[test]
    fn edge_cases() {
        let s = searcher(&["abc", "bcd", "x"]);
        assert!(s.found_in("zabcz"));
        assert!(s.found_in("abx"));
        assert!(s.found_in("abcd"));
        assert!(!s.found_in("abdc"));
        assert!(!s.found_in(""));
        // The empty string is in every string, the empty one included.
        let e = searcher(&["abc", ""]);
        assert!(e.found_in(""));
        assert!(e.found_in_folded("zz"));
        // An empty list finds nothing.
        assert!(!searcher(&[]).found_in("abc"));
        // Folding: the value is folded, the needles are taken as written.
        let f = searcher(&["STRAßE", "ΣΑΣ"]);
        assert!(f.found_in_folded("die straße"));
        assert!(f.found_in_folded("σας"));
        assert!(!f.found_in("die straße"));
        assert!(!searcher(&["strasse"]).found_in_folded("straße"));
        assert!(!searcher(&["a"]).found_in_folded("a"), "lower-case needle");
        assert!(searcher(&["I"]).found_in_folded("ı"));
    }

    #[test]
    fn dfa_bounds_count_shared_prefixes_once() {
        // Trie nodes: a, ab, abc, abd, x (5), plus 4 special states; 5 distinct bytes give at
        // most 11 classes, a stride of 16.
        assert_eq!(dfa_bounds(&["abd", "x", "abc"]), (9 * 16 * 4, 9 * 16 * 4));
        // Event Grid's limit: 25 strings of 512 that share 511 characters.
        let limit = near_limit();
        let strings: Vec<&str> = limit.iter().map(String::as_str).collect();
        assert_eq!(
            dfa_bounds(&strings),
            ((4 + 511 + 25) * 64 * 4, (4 + 511 + 25) * 64 * 513)
        );
    }

    #[test]
    fn long_strings_get_the_nfa() {
        // A DFA of `a` × 50,000 would take 50,000² steps to build (each entry follows failure
        // links back through the run of `a`s); the NFA is built in linear time.
        let long = "a".repeat(50_000);
        let needles: Vec<Arc<str>> = vec![long.as_str().into(), "b".into()];
        let s = Substrings::new(&needles).unwrap();
        assert!(matches!(&*s.automata, [Group::Nfa(_)]));
        assert!(s.found_in(&format!("x{long}")));
        assert!(!s.found_in(&long[1..]));
        assert!(s.found_in("xby"));
        // Event Grid's limit (25 strings sharing 511 characters) is over the build budget, so
        // takes the NFA too; a list of a few short strings takes the DFA.
        let limit: Vec<Arc<str>> = near_limit().into_iter().map(Arc::from).collect();
        assert!(matches!(
            &*Substrings::new(&limit).unwrap().automata,
            [Group::Nfa(_)]
        ));
        let short: Vec<Arc<str>> = vec!["/VIDEOS/".into(), "/ARCHIVE/".into(), ".PNG".into()];
        assert!(matches!(
            &*Substrings::new(&short).unwrap().automata,
            [Group::Dfa(_)]
        ));
    }

    fn near_limit() -> Vec<String> {
        "0123456789!#$%&()+,-;=@[]"
            .chars()
            .map(|end| format!("{}{end}", "A".repeat(511)))
            .collect()
    }

    #[test]
    fn nested_needles_are_dropped() {
        let group: Vec<Arc<str>> = ["aaa", "a", "aa", "ba", "a", "b"]
            .into_iter()
            .map(Arc::from)
            .collect();
        assert_eq!(substring_free(&group), ["a", "b"]);
        let group: Vec<Arc<str>> = ["xy", "xy", "yx"].into_iter().map(Arc::from).collect();
        assert_eq!(substring_free(&group), ["xy", "yx"]);
    }
}

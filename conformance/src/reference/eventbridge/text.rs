//! String matchers (`docs/dialects/eventbridge-patterns.md` EB-19..EB-22) and the wildcard
//! complexity measure (EB-33).

use std::collections::{BTreeSet, HashSet};

/// EB-20: the strings one character of an `equals-ignore-case` operand accepts: its full
/// lowercase and full uppercase mappings when it is one UTF-16 code unit; a supplementary
/// character (a surrogate pair) accepts only itself (DECISION, EB-35 a).
fn accepted(c: char) -> Vec<String> {
    if u32::from(c) > 0xFFFF {
        return vec![c.to_string()];
    }
    vec![c.to_lowercase().collect(), c.to_uppercase().collect()]
}

/// The byte offsets of `value` where a string EB-20 accepts for `operand`, starting at
/// `start`, can end.
fn ends(operand: &str, value: &str, start: usize) -> BTreeSet<usize> {
    let mut at = BTreeSet::from([start]);
    for c in operand.chars() {
        let options = accepted(c);
        let mut next = BTreeSet::new();
        for &i in &at {
            let rest = value.get(i..).unwrap_or_default();
            for option in &options {
                if rest.starts_with(option.as_str()) {
                    next.insert(i + option.len());
                }
            }
        }
        if next.is_empty() {
            return next;
        }
        at = next;
    }
    at
}

/// EB-20: `value` is a string EB-20 accepts for `operand`.
pub(super) fn equals_ignore_case(operand: &str, value: &str) -> bool {
    ends(operand, value, 0).contains(&value.len())
}

/// EB-21: `value` starts with a string EB-20 accepts for `operand`.
pub(super) fn prefix_ignore_case(operand: &str, value: &str) -> bool {
    !ends(operand, value, 0).is_empty()
}

/// EB-21: `value` ends with a string EB-20 accepts for `operand`.
pub(super) fn suffix_ignore_case(operand: &str, value: &str) -> bool {
    value
        .char_indices()
        .map(|(i, _)| i)
        .chain([value.len()])
        .any(|start| ends(operand, value, start).contains(&value.len()))
}

/// One piece of a wildcard operand (EB-22).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Piece {
    /// `*`: any run of characters, possibly empty.
    Star,
    /// A byte that must be there (`\*` and `\\` give a literal `*` and `\`).
    Byte(u8),
}

/// EB-22: reads a wildcard operand byte by byte (UTF-8), or gives event-ruler's message. N in
/// "at pos N" is the byte offset of the offending star or backslash within the operand, plus
/// one (event-ruler reads the operand with a leading quote).
pub(super) fn parse_wildcard(operand: &str) -> Result<Vec<Piece>, String> {
    let bytes = operand.as_bytes();
    let mut pieces = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'*' => {
                if bytes.get(i + 1) == Some(&b'*') {
                    return Err(format!("Consecutive wildcard characters at pos {}", i + 1));
                }
                pieces.push(Piece::Star);
            }
            b'\\' => match bytes.get(i + 1) {
                Some(&next @ (b'*' | b'\\')) => {
                    pieces.push(Piece::Byte(next));
                    i += 1;
                }
                _ => return Err(format!("Invalid escape character at pos {}", i + 1)),
            },
            _ => pieces.push(Piece::Byte(b)),
        }
        i += 1;
    }
    Ok(pieces)
}

/// EB-22: the whole of `value` matches the pieces (anchored at both ends).
pub(super) fn wildcard_matches(pieces: &[Piece], value: &str) -> bool {
    let bytes = value.as_bytes();
    // reach[j]: the pieces read so far can match exactly the first j bytes.
    let mut reach = vec![false; bytes.len() + 1];
    if let Some(first) = reach.first_mut() {
        *first = true;
    }
    for piece in pieces {
        let mut next = vec![false; bytes.len() + 1];
        match piece {
            Piece::Star => {
                let mut seen = false;
                for (j, slot) in next.iter_mut().enumerate() {
                    seen |= reach.get(j).copied().unwrap_or(false);
                    *slot = seen;
                }
            }
            Piece::Byte(b) => {
                for j in 0..bytes.len() {
                    if reach.get(j).copied().unwrap_or(false)
                        && bytes.get(j) == Some(b)
                        && let Some(slot) = next.get_mut(j + 1)
                    {
                        *slot = true;
                    }
                }
            }
        }
        reach = next;
    }
    reach.last().copied().unwrap_or(false)
}

/// Most state sets [`complexity`] visits before it gives up.
pub(super) const MAX_COMPLEXITY_SETS: usize = 200_000;

/// EB-33: the complexity score of one path's distinct wildcard operands, each given as its
/// pieces. Each operand w is read as t = `"` + w + `"`; states are (w, i); a star at t[i] lets
/// (w, i) also be (w, i+1) for free; a state right after a star stays put on any byte; (w, i)
/// moves to (w, i+1) on byte t[i]. From the set of all (w, 0), read bytes: the score is the
/// largest number of states in a non-empty set reached after at least one byte.
///
/// The search stops once the score exceeds `stop_above` (the answer is then some score above
/// it); `Err` when it would visit more than [`MAX_COMPLEXITY_SETS`] sets.
pub(super) fn complexity(operands: &[Vec<Piece>], stop_above: usize) -> Result<usize, String> {
    let texts: Vec<Vec<Piece>> = operands
        .iter()
        .map(|w| {
            let mut t = vec![Piece::Byte(b'"')];
            t.extend_from_slice(w);
            t.push(Piece::Byte(b'"'));
            t
        })
        .collect();
    let piece = |k: usize, i: usize| texts.get(k).and_then(|t| t.get(i)).copied();
    // Closes a set under the free moves past stars.
    let close = |set: &mut BTreeSet<(usize, usize)>| {
        let mut todo: Vec<(usize, usize)> = set.iter().copied().collect();
        while let Some((k, i)) = todo.pop() {
            if piece(k, i) == Some(Piece::Star) && set.insert((k, i + 1)) {
                todo.push((k, i + 1));
            }
        }
    };
    // The bytes that can move a state; every other byte behaves alike (`None`).
    let mut alphabet: Vec<Option<u8>> = texts
        .iter()
        .flatten()
        .filter_map(|p| match p {
            Piece::Byte(b) => Some(*b),
            Piece::Star => None,
        })
        .collect::<BTreeSet<u8>>()
        .into_iter()
        .map(Some)
        .collect();
    alphabet.push(None);

    let mut start: BTreeSet<(usize, usize)> = (0..texts.len()).map(|k| (k, 0)).collect();
    close(&mut start);
    let mut seen: HashSet<BTreeSet<(usize, usize)>> = HashSet::from([start.clone()]);
    let mut todo = vec![start];
    let mut score = 0;
    while let Some(set) = todo.pop() {
        for &byte in &alphabet {
            let mut next = BTreeSet::new();
            for &(k, i) in &set {
                if i > 0 && piece(k, i - 1) == Some(Piece::Star) {
                    next.insert((k, i));
                }
                if let (Some(b), Some(Piece::Byte(t))) = (byte, piece(k, i))
                    && b == t
                {
                    next.insert((k, i + 1));
                }
            }
            if next.is_empty() {
                continue;
            }
            close(&mut next);
            score = score.max(next.len());
            if score > stop_above {
                return Ok(score);
            }
            if !seen.contains(&next) {
                if seen.len() >= MAX_COMPLEXITY_SETS {
                    return Err(format!(
                        "the wildcard complexity search visited more than {MAX_COMPLEXITY_SETS} state sets"
                    ));
                }
                seen.insert(next.clone());
                todo.push(next);
            }
        }
    }
    Ok(score)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn equals_ignore_case_eb_20() {
        let yes = |p: &str, v: &str| assert!(equals_ignore_case(p, v), "{p} accepts {v}");
        let no = |p: &str, v: &str| assert!(!equals_ignore_case(p, v), "{p} rejects {v}");
        yes("AWS.EC2", "aws.ec2");
        yes("aws", "AWS");
        yes("aws", "AwS");
        no("aws", "awx");
        yes("\u{df}", "\u{df}");
        yes("\u{df}", "SS");
        no("\u{df}", "ss");
        no("SS", "\u{df}");
        yes("\u{1c5}", "\u{1c6}");
        yes("\u{1c5}", "\u{1c4}");
        no("\u{1c5}", "\u{1c5}");
        yes("\u{130}", "\u{130}");
        yes("\u{130}", "i\u{307}");
        no("\u{130}", "i");
        yes("\u{3c2}", "\u{3c2}");
        yes("\u{3c2}", "\u{3a3}");
        yes("\u{3a3}", "\u{3c3}");
        no("\u{3a3}", "\u{3c2}");
        no("k", "\u{212a}");
        yes("\u{212a}", "k");
        yes("\u{1f600}", "\u{1f600}");
        no("\u{1f600}", "??");
        yes("", "");
        no("", "a");
        yes("\u{df}x", "SSX");
        no("\u{df}x", "SSx\u{df}");
    }

    #[test]
    fn prefix_and_suffix_ignore_case_eb_21() {
        assert!(prefix_ignore_case("EventB", "eventbridge"));
        assert!(!prefix_ignore_case("EventBx", "eventbridge"));
        assert!(suffix_ignore_case(".png", "PHOTO.PNG"));
        assert!(suffix_ignore_case("\u{df}", "gro\u{df}"));
        assert!(suffix_ignore_case("\u{df}", "GROSS"));
        assert!(!suffix_ignore_case("\u{df}", "gross"));
        assert!(suffix_ignore_case("", "x"));
        assert!(prefix_ignore_case("", ""));
    }

    #[test]
    fn wildcards_eb_22() {
        let m = |p: &str, v: &str| wildcard_matches(&parse_wildcard(p).unwrap(), v);
        assert!(m("dir/*.png", "dir/photo.png"));
        assert!(!m("dir/*.png", "dir/photo.png.bak"));
        assert!(m("a*b*c", "abc"));
        assert!(!m("a*b*c", "abcb"));
        assert!(m("*", ""));
        assert!(m("*", "anything"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("*\\**", "x*y"));
        assert!(!m("*\\**", "xy"));
        assert!(m("a\\\\b", "a\\b"));
        assert!(m("\u{e9}*", "\u{e9}t\u{e9}"));
        assert_eq!(
            parse_wildcard("arn:aws:events:us-east-1:**:event-bus/*").unwrap_err(),
            "Consecutive wildcard characters at pos 26"
        );
        assert_eq!(
            parse_wildcard("\u{e9}**").unwrap_err(),
            "Consecutive wildcard characters at pos 3"
        );
        assert_eq!(
            parse_wildcard("a\\b").unwrap_err(),
            "Invalid escape character at pos 2"
        );
        assert_eq!(
            parse_wildcard("ab\\").unwrap_err(),
            "Invalid escape character at pos 3"
        );
        assert!(parse_wildcard("\\**").is_ok());
        assert_eq!(
            parse_wildcard("\\\\**").unwrap_err(),
            "Consecutive wildcard characters at pos 3"
        );
    }

    #[test]
    fn complexity_scores_eb_33() {
        let score = |ops: &[&str]| {
            let pieces: Vec<Vec<Piece>> = ops.iter().map(|o| parse_wildcard(o).unwrap()).collect();
            complexity(&pieces, usize::MAX).unwrap()
        };
        assert_eq!(score(&["*"]), 2);
        assert_eq!(score(&["*a*b*"]), 4);
        assert_eq!(score(&["/Users/*/dir/dir/dir/dir/dir/doc.txt"]), 7);
        assert_eq!(score(&["*:*:*:*:*:event-bus/*"]), 11);
        assert_eq!(score(&["abc"]), 1);
        assert_eq!(score(&[]), 0);
        assert_eq!(
            score(&[
                "*:stack/Shared/*",
                "*:stack/Api/*",
                "*:stack/Data/*",
                "*:stack/Monitoring/*"
            ]),
            12
        );
        assert_eq!(
            score(&["*:stack/Shared/*", "*:stack/Api/*", "*:stack/Data/*"]),
            9
        );
    }
}

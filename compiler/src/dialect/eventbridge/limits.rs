//! Pattern-wide limits, checked once the whole pattern has passed EB-31 and in this order
//! (`docs/dialects/eventbridge-patterns.md` EB-32, EB-33): at most 256 paths in a branch, then
//! the wildcard complexity.

use super::branches::{Seq, max_paths};
use super::parse::{Exclusion, Item, Matcher};
use crate::error::{ErrorCode, PolicyError};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// Most paths one branch may hold (EB-32).
pub const MAX_PATHS: usize = 256;

/// The highest wildcard complexity accepted (EB-33 DECISION).
pub const MAX_COMPLEXITY: usize = 10;

/// Most sets of states [`complexity`] explores before it calls a path too complex.
pub const MAX_EXPLORED: usize = 100_000;

/// The event-ruler message of EB-33.
pub const TOO_COMPLEX: &str = "Rule is too complex - try using fewer wildcard characters or \
                               fewer repeating character sequences after a wildcard character";

/// EB-32: no branch holds more than [`MAX_PATHS`] paths.
pub fn check_paths(seq: &Seq) -> Result<(), PolicyError> {
    let most = max_paths(seq);
    if most > MAX_PATHS {
        return Err(PolicyError::new(
            ErrorCode::EventBridgeLimitExceeded,
            "",
            format!(
                "a branch of the pattern has {most} fields, which exceeds max value of \
                 {MAX_PATHS}"
            ),
        ));
    }
    Ok(())
}

/// A wildcard operand as EB-33 reads it: `"` + operand + `"`, a sequence of bytes and stars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    Byte(u8),
    Star,
}

/// The symbols of a (valid, EB-22) wildcard operand, quoted.
fn symbols(operand: &str) -> Vec<Sym> {
    let mut out = vec![Sym::Byte(b'"')];
    let mut bytes = operand.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'*' => out.push(Sym::Star),
            b'\\' => out.push(Sym::Byte(bytes.next().unwrap_or(b'\\'))),
            other => out.push(Sym::Byte(other)),
        }
    }
    out.push(Sym::Byte(b'"'));
    out
}

/// EB-33: the largest number of NFA states any non-empty set reached after at least one byte
/// holds, reading the operands of one path together; `None` when more than [`MAX_EXPLORED`]
/// sets would have to be explored to tell.
pub fn complexity(operands: &[&str]) -> Option<usize> {
    let words: Vec<Vec<Sym>> = operands.iter().map(|w| symbols(w)).collect();
    // A state is (word, position); its successors on byte `b`.
    let after_star =
        |w: usize, i: usize| i > 0 && words.get(w).and_then(|t| t.get(i - 1)) == Some(&Sym::Star);
    let close = |set: &mut BTreeSet<(usize, usize)>| {
        let mut stack: Vec<(usize, usize)> = set.iter().copied().collect();
        while let Some((w, i)) = stack.pop() {
            if words.get(w).and_then(|t| t.get(i)) == Some(&Sym::Star) && set.insert((w, i + 1)) {
                stack.push((w, i + 1));
            }
        }
    };
    let mut alphabet: Vec<u8> = words
        .iter()
        .flatten()
        .filter_map(|s| match s {
            Sym::Byte(b) => Some(*b),
            Sym::Star => None,
        })
        .collect::<BTreeSet<u8>>()
        .into_iter()
        .collect();
    // One byte no operand names stands for all of them.
    if let Some(other) = (0..=255u8).find(|b| !alphabet.contains(b)) {
        alphabet.push(other);
    }
    let mut start: BTreeSet<(usize, usize)> = (0..words.len()).map(|w| (w, 0)).collect();
    close(&mut start);
    let mut seen: HashSet<BTreeSet<(usize, usize)>> = HashSet::new();
    let mut queue = vec![start];
    let mut most = 0;
    while let Some(set) = queue.pop() {
        for &b in &alphabet {
            let mut next = BTreeSet::new();
            for &(w, i) in &set {
                if after_star(w, i) {
                    next.insert((w, i));
                }
                if words.get(w).and_then(|t| t.get(i)) == Some(&Sym::Byte(b)) {
                    next.insert((w, i + 1));
                }
            }
            if next.is_empty() {
                continue;
            }
            close(&mut next);
            most = most.max(next.len());
            if most > MAX_COMPLEXITY {
                return Some(most);
            }
            if seen.insert(next.clone()) {
                if seen.len() > MAX_EXPLORED {
                    return None;
                }
                queue.push(next);
            }
        }
    }
    Some(most)
}

/// Every wildcard operand of `items`, by path: plain ones and anything-but ones apart.
fn wildcards<'a>(items: &'a [Item], out: &mut BTreeMap<&'a str, BTreeSet<(bool, &'a str)>>) {
    for item in items {
        match item {
            Item::Leaf(leaf) => {
                for (m, _) in &leaf.alternatives {
                    match m {
                        Matcher::Wildcard(w) => {
                            out.entry(&leaf.path)
                                .or_default()
                                .insert((false, w.source()));
                        }
                        Matcher::AnythingBut(Exclusion::Wildcards(ws)) => {
                            for w in ws {
                                out.entry(&leaf.path)
                                    .or_default()
                                    .insert((true, w.source()));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Item::Or(or) => {
                for (alternative, _) in &or.alternatives {
                    wildcards(alternative, out);
                }
            }
        }
    }
}

/// EB-33: every path's wildcard complexity is at most [`MAX_COMPLEXITY`].
pub fn check_wildcards(items: &[Item]) -> Result<(), PolicyError> {
    let mut by_path = BTreeMap::new();
    wildcards(items, &mut by_path);
    for (path, operands) in by_path {
        let operands: Vec<&str> = operands.into_iter().map(|(_, w)| w).collect();
        match complexity(&operands) {
            Some(score) if score <= MAX_COMPLEXITY => {}
            score => {
                let detail = match score {
                    Some(score) => format!("complexity {score} on `{path}`"),
                    None => format!("the wildcards on `{path}`"),
                };
                return Err(PolicyError::new(
                    ErrorCode::EventBridgeLimitExceeded,
                    "",
                    format!("{TOO_COMPLEX} ({detail}; the limit is {MAX_COMPLEXITY})"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eb_33_scores_of_the_spec() {
        assert_eq!(complexity(&["*"]), Some(2));
        assert_eq!(complexity(&["*a*b*"]), Some(4));
        assert_eq!(
            complexity(&["/Users/*/dir/dir/dir/dir/dir/doc.txt"]),
            Some(7)
        );
        assert!(complexity(&["*:*:*:*:*:event-bus/*"]).is_some_and(|s| s > 10));
        // Three `*:stack/NAME/*` in one list: 9, accepted; four: rejected.
        let three = ["*:stack/Shared/*", "*:stack/Api/*", "*:stack/Data/*"];
        assert_eq!(complexity(&three), Some(9));
        let four = [
            "*:stack/Shared/*",
            "*:stack/Api/*",
            "*:stack/Data/*",
            "*:stack/Monitoring/*",
        ];
        assert!(complexity(&four).is_some_and(|s| s > 10));
        assert_eq!(complexity(&["abc"]), Some(1));
        assert_eq!(complexity(&[]), Some(0));
    }
}

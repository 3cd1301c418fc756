//! Matching a branch against an event (`docs/dialects/eventbridge-patterns.md` EB-8..EB-10) and
//! each alternative against a value (EB-12..EB-30).

use super::address::{self, Address};
use super::event::{Flat, Leaf as EventLeaf};
use super::number::comparable;
use super::pattern::{Alternative, Bound, Branch, Excluded};
use super::text::{equals_ignore_case, prefix_ignore_case, suffix_ignore_case, wildcard_matches};
use crate::reference::json::Value;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

/// Most steps the branch search takes before the reference gives up (an error, never a guess).
pub(super) const MAX_SEARCH_STEPS: usize = 5_000_000;

/// The string value's address, if it is one (EB-28).
fn address_of(value: &Value) -> Option<Address> {
    value.as_str().and_then(address::address)
}

/// A comparable number's value (EB-17).
fn number_of(value: &Value) -> Option<f64> {
    value.as_number().and_then(|n| comparable(n.as_str()))
}

fn within(x: f64, lower: Option<Bound>, upper: Option<Bound>) -> bool {
    let above = lower.is_none_or(|b| {
        if b.inclusive {
            x >= b.value
        } else {
            x > b.value
        }
    });
    let below = upper.is_none_or(|b| {
        if b.inclusive {
            x <= b.value
        } else {
            x < b.value
        }
    });
    above && below
}

/// Whether `excluded` excludes `value` (EB-23, EB-24).
fn excludes(excluded: &Excluded, value: &Value) -> bool {
    let text = value.as_str();
    let any_string = |f: &dyn Fn(&str) -> bool| text.is_some_and(f);
    match excluded {
        Excluded::Strings(list) => any_string(&|v| list.iter().any(|s| s == v)),
        Excluded::Numbers(list) => number_of(value).is_some_and(|x| list.contains(&x)),
        Excluded::Prefixes(list) => any_string(&|v| list.iter().any(|s| v.starts_with(s.as_str()))),
        Excluded::Suffixes(list) => any_string(&|v| list.iter().any(|s| v.ends_with(s.as_str()))),
        Excluded::IgnoringCase(list) => {
            any_string(&|v| list.iter().any(|s| equals_ignore_case(s, v)))
        }
        Excluded::Wildcards(list) => {
            any_string(&|v| list.iter().any(|(_, p)| wildcard_matches(p, v)))
        }
    }
}

/// Whether `value` (a string, number, `true`, `false` or `null` of the event) satisfies
/// `alternative`. `{"exists": false}` is no test of a value (EB-8 b) and satisfies nothing here.
pub(super) fn satisfies(alternative: &Alternative, value: &Value) -> bool {
    let text = value.as_str();
    match alternative {
        // EB-12, EB-14.
        Alternative::Exact(s) => text == Some(s.as_str()),
        // EB-13: the same address in any spelling.
        Alternative::Address(a) => address_of(value) == Some(*a),
        // EB-15.
        Alternative::Literal(l) => value == l,
        // EB-16: both comparable and numerically equal, or the same text.
        Alternative::Number {
            text: pattern_text,
            comparable: n,
        } => value.as_number().is_some_and(|v| {
            v.as_str() == pattern_text
                || n.is_some_and(|n| comparable(v.as_str()).is_some_and(|x| x == n))
        }),
        // EB-19.
        Alternative::Prefix(s) => text.is_some_and(|v| v.starts_with(s.as_str())),
        Alternative::Suffix(s) => text.is_some_and(|v| v.ends_with(s.as_str())),
        // EB-20, EB-21.
        Alternative::EqualsIgnoreCase(s) => text.is_some_and(|v| equals_ignore_case(s, v)),
        Alternative::PrefixIgnoreCase(s) => text.is_some_and(|v| prefix_ignore_case(s, v)),
        Alternative::SuffixIgnoreCase(s) => text.is_some_and(|v| suffix_ignore_case(s, v)),
        // EB-22.
        Alternative::Wildcard(_, pieces) => text.is_some_and(|v| wildcard_matches(pieces, v)),
        // EB-25: every value not excluded passes, whatever its type.
        Alternative::AnythingBut(excluded) => !excludes(excluded, value),
        // EB-26: only comparable numbers.
        Alternative::Numeric(lower, upper) => {
            number_of(value).is_some_and(|x| within(x, *lower, *upper))
        }
        // EB-29: an address of the block's family inside it.
        Alternative::Cidr(block) => address_of(value).is_some_and(|a| block.contains(a)),
        // EB-30: any value.
        Alternative::Exists(true) => true,
        Alternative::Exists(false) => false,
    }
}

/// Java's `String` order: UTF-16 code units.
fn utf16_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// One path of a branch, ready for the search: its values, each with its positions and whether
/// it satisfies an alternative other than `{"exists": false}`; and whether the alternatives
/// include `{"exists": false}`.
struct Step<'e> {
    values: Vec<(&'e [(usize, usize)], bool)>,
    absent_allowed: bool,
}

/// Whether `positions` agree with `fixed`: no array is given two different indices.
fn agrees(positions: &[(usize, usize)], fixed: &BTreeMap<usize, usize>) -> bool {
    positions
        .iter()
        .all(|(array, index)| fixed.get(array).is_none_or(|i| i == index))
}

struct Search<'s, 'e> {
    steps: &'s [Step<'e>],
    /// For each step, the arrays that the values of it and the steps after it lie in: only the
    /// fixed positions in those arrays can change what happens from that step on.
    ahead: Vec<HashSet<usize>>,
    /// (step, fixed positions in the arrays ahead) from which no sequence of choices reaches
    /// the end.
    failed: HashSet<(usize, Vec<(usize, usize)>)>,
    taken: usize,
}

impl Search<'_, '_> {
    /// EB-8: from step `i` with positions `fixed`, can some sequence of choices reach the end?
    fn from(&mut self, i: usize, fixed: &mut BTreeMap<usize, usize>) -> Result<bool, String> {
        let Some(step) = self.steps.get(i) else {
            return Ok(true);
        };
        self.taken += 1;
        if self.taken > MAX_SEARCH_STEPS {
            return Err(format!(
                "matching took more than {MAX_SEARCH_STEPS} search steps, more than the reference interpreter takes"
            ));
        }
        let ahead = self.ahead.get(i);
        let key = (
            i,
            fixed
                .iter()
                .filter(|(a, _)| ahead.is_some_and(|arrays| arrays.contains(a)))
                .map(|(a, x)| (*a, *x))
                .collect::<Vec<_>>(),
        );
        if self.failed.contains(&key) {
            return Ok(false);
        }
        let mut any_agrees = false;
        for &(positions, satisfied) in &step.values {
            if !agrees(positions, fixed) {
                continue;
            }
            any_agrees = true;
            if !satisfied {
                continue;
            }
            // (a) take this value and add its positions.
            let mut added = Vec::new();
            for &(array, index) in positions {
                if fixed.insert(array, index).is_none() {
                    added.push(array);
                }
            }
            let reached = self.from(i + 1, fixed)?;
            for array in added {
                fixed.remove(&array);
            }
            if reached {
                return Ok(true);
            }
        }
        // (b) `{"exists": false}` holds when no value of the path agrees; nothing is fixed.
        if step.absent_allowed && !any_agrees && self.from(i + 1, fixed)? {
            return Ok(true);
        }
        self.failed.insert(key);
        Ok(false)
    }
}

/// EB-8: whether `branch` matches the event's values `flat`.
pub(super) fn branch_matches(branch: &Branch, flat: &Flat<'_>) -> Result<bool, String> {
    let mut paths: Vec<(&String, _)> = branch.iter().collect();
    paths.sort_by(|(a, _), (b, _)| utf16_order(a, b));
    let none: Vec<EventLeaf<'_>> = Vec::new();
    let steps: Vec<Step<'_>> = paths
        .iter()
        .map(|(path, leaf)| {
            let values = flat.get(path.as_str()).unwrap_or(&none);
            Step {
                values: values
                    .iter()
                    .map(|v| {
                        let satisfied = leaf.iter().any(|alt| satisfies(alt, v.value));
                        (v.positions.as_slice(), satisfied)
                    })
                    .collect(),
                absent_allowed: leaf.contains(&Alternative::Exists(false)),
            }
        })
        .collect();
    let mut ahead = vec![HashSet::new(); steps.len()];
    let mut arrays = HashSet::new();
    for (step, slot) in steps.iter().zip(ahead.iter_mut()).rev() {
        for (positions, _) in &step.values {
            arrays.extend(positions.iter().map(|&(array, _)| array));
        }
        slot.clone_from(&arrays);
    }
    let mut search = Search {
        steps: &steps,
        ahead,
        failed: HashSet::new(),
        taken: 0,
    };
    search.from(0, &mut BTreeMap::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_sort_by_utf16_code_units() {
        // U+1F600 is D83D DE00 in UTF-16, below U+FF61; by code point it is above.
        assert_eq!(utf16_order("\u{1f600}", "\u{ff61}"), Ordering::Less);
        assert_eq!(
            "\u{1f600}".cmp("\u{ff61}"),
            Ordering::Greater,
            "code point order differs"
        );
        assert_eq!(utf16_order("a", "a.b"), Ordering::Less);
        assert_eq!(utf16_order("a.b", "a-b"), Ordering::Greater);
    }
}

//! The value classes of one location: the finitely many kinds of value the filters' constants
//! tell apart there, each with a representative value.
//!
//! The tests on a location (equality, sets, prefix, suffix, equals-ignore-case, numeric ranges,
//! exists, cidr, types, shapes) each hold on a set of values; two values every test treats alike
//! are in one class. Candidates are built from the constants (every constant, each prefix and
//! suffix joined by a character no constant holds, every numeric bound and a number between
//! and beyond each pair of neighbouring bounds, each CIDR block's first and last address and
//! their outside neighbours, `true`, `false`, `null`, `{}`, `[]`, and arrays joining classes),
//! and each candidate's class is what the VM says of every test on it (each test compiled alone).
//! For those tests the candidates reach every class, so a search over classes is exact.
//! EventBridge's numbers compared by their text, IP addresses and case patterns draw their
//! candidates the same way. Wildcards, substring tests, dot-segment patterns, case folding of
//! constants beyond ASCII and exact-decimal bounds beyond binary64 are not covered that way: the candidates then are a
//! bounded sample, and the classes say why (`Classes::bounded`).

use super::model::{self, Loc, Model};
use crate::codegen;
use crate::ir::{Case, Node, Pred, StrOp};
use filtervm_vm::bind::Bindings;
use filtervm_vm::case_pattern::CaseMode;
use filtervm_vm::json::{Number, Value};
use filtervm_vm::key::Key;
use filtervm_vm::number::{canonical_number_text, comparable};
use filtervm_vm::program::Program;
use std::collections::BTreeSet;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The most classes kept for one location (arrays joining classes stop there).
pub(crate) const MAX_CLASSES: usize = 512;
/// The most string candidates built from prefix × suffix pairs for one location.
const MAX_PAIRS: usize = 4096;

/// One class: a representative value (`None`: the location absent) and the truth of each test
/// of the location on it.
#[derive(Debug, Clone)]
pub(crate) struct Class {
    pub(crate) value: Option<Value>,
    pub(crate) bits: Vec<bool>,
}

/// The classes of one location.
#[derive(Debug, Clone)]
pub(crate) struct Classes {
    pub(crate) loc: Loc,
    /// The tests read at the location, in the order of `Class::bits`.
    pub(crate) tests: Vec<(Key, Pred)>,
    pub(crate) classes: Vec<Class>,
    /// Why the classes may not be all there are (`None`: they are).
    pub(crate) bounded: Option<String>,
    /// How many candidate values were tried.
    pub(crate) candidates: usize,
}

/// A test compiled alone.
struct Probe {
    program: Program,
}

impl Probe {
    fn new(key: &Key, pred: &Pred) -> Option<Probe> {
        let node = Node::test(key.clone(), pred.clone(), "");
        Some(Probe {
            program: codegen::generate(&node).ok()?,
        })
    }

    fn holds(
        &self,
        bindings: &mut Bindings,
        registers: &mut Vec<bool>,
        msg: &filtervm_vm::message::Message,
    ) -> bool {
        let bound = bindings.bind(self.program.keys(), msg);
        self.program.eval(&bound, registers)
    }
}

/// What the model lets a location hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allow {
    /// Arrays (sns String.Array, JSON arrays, multi-valued expr headers).
    pub(crate) arrays: bool,
    /// Only strings (headers).
    pub(crate) strings_only: bool,
    /// JSON-only values: `true`, `false`, `null`, `{}`.
    pub(crate) json: bool,
    /// Only numbers in their shortest round-trip form (EventBridge's comparable numbers,
    /// EB-17), as canonical documents hold them ([`super::Assumptions`]).
    pub(crate) canonical_numbers: bool,
}

/// The classes of `loc` under `tests` (every test reading it, from every filter compared).
pub(crate) fn classes(model: Model, allow: Allow, loc: &Loc, tests: Vec<(Key, Pred)>) -> Classes {
    let mut bounded = None;
    let scalars = scalar_candidates(
        tests.iter().map(|(_, p)| p),
        &mut bounded,
        allow.canonical_numbers,
    );
    let probes: Vec<Option<Probe>> = tests.iter().map(|(k, p)| Probe::new(k, p)).collect();
    if probes.iter().any(Option::is_none) {
        bounded = Some("a test could not be compiled alone".to_owned());
    }
    let mut bindings = Bindings::new();
    let mut registers = Vec::new();
    let mut eval = |value: Option<&Value>| -> Option<Vec<bool>> {
        let choice: model::Choice<'_> = value.map(|v| vec![(loc, v)]).unwrap_or_default();
        let msg = model::message(model, &choice)?;
        Some(
            probes
                .iter()
                .map(|p| {
                    p.as_ref()
                        .is_some_and(|p| p.holds(&mut bindings, &mut registers, &msg))
                })
                .collect(),
        )
    };
    let mut out: Vec<Class> = Vec::new();
    let mut seen: BTreeSet<Vec<bool>> = BTreeSet::new();
    let mut candidates = 0usize;
    let mut add = |value: Option<Value>,
                   out: &mut Vec<Class>,
                   eval: &mut dyn FnMut(Option<&Value>) -> Option<Vec<bool>>| {
        if let Some(bits) = eval(value.as_ref())
            && seen.insert(bits.clone())
        {
            out.push(Class { value, bits });
        }
    };
    add(None, &mut out, &mut eval);
    candidates += 1;
    let mut singles: Vec<Value> = Vec::new();
    for s in scalars {
        let keep = match &s {
            Value::String(_) => true,
            Value::Number(n) => {
                !allow.strings_only
                    && (!allow.canonical_numbers || comparable(n.as_str()).is_some())
            }
            _ => allow.json && !allow.strings_only,
        };
        if keep {
            singles.push(s);
        }
    }
    if allow.json && !allow.strings_only {
        singles.push(Value::Object(filtervm_vm::json::Map::new()));
    }
    if model == Model::Attributes {
        // A `Number` attribute may carry any text: basaltic compares its text (B-4).
        let texts: Vec<Value> = singles
            .iter()
            .filter_map(|v| match v {
                Value::String(s) if Number::from_text(s).is_none() => Some(Value::Object(
                    [(model::NUMBER_TEXT.to_owned(), Value::String(s.clone()))]
                        .into_iter()
                        .collect(),
                )),
                _ => None,
            })
            .collect();
        singles.extend(texts);
    }
    for s in &singles {
        candidates += 1;
        add(Some(s.clone()), &mut out, &mut eval);
    }
    if allow.arrays {
        // Arrays: the empty one, one of each class's value, then arrays joining two classes
        // until no new class appears (bounded by MAX_CLASSES).
        let element = |c: &Class| match &c.value {
            Some(Value::Array(items)) => Some(items.clone()),
            Some(Value::Object(_)) => None,
            Some(v) => Some(vec![v.clone()]),
            None => None,
        };
        candidates += 1;
        add(Some(Value::Array(Vec::new())), &mut out, &mut eval);
        let firsts: Vec<Vec<Value>> = out.iter().filter_map(element).collect();
        for items in firsts {
            candidates += 1;
            add(Some(Value::Array(items)), &mut out, &mut eval);
        }
        // Every class's elements joined with every other's (scalars too: an array of a value
        // excluded and one not is neither's class, sns rule 28 against EB-25), then the new
        // classes with every class, until no new class appears.
        let mut new_from = 0;
        loop {
            let before = out.len();
            let snapshot: Vec<(usize, Vec<Value>)> = out
                .iter()
                .enumerate()
                .filter_map(|(i, c)| element(c).map(|e| (i, e)))
                .collect();
            'pairs: for (x, (i, a)) in snapshot.iter().enumerate() {
                for (j, b) in snapshot.iter().skip(x + 1) {
                    if *i < new_from && *j < new_from {
                        continue;
                    }
                    if out.len() >= MAX_CLASSES {
                        bounded.get_or_insert_with(|| {
                            format!("more than {MAX_CLASSES} classes of arrays")
                        });
                        break 'pairs;
                    }
                    let mut joined = a.clone();
                    joined.extend(b.iter().cloned());
                    candidates += 1;
                    add(Some(Value::Array(joined)), &mut out, &mut eval);
                }
            }
            if out.len() == before || out.len() >= MAX_CLASSES {
                break;
            }
            new_from = before;
        }
    }
    Classes {
        loc: loc.clone(),
        tests,
        classes: out,
        bounded,
        candidates,
    }
}

/// The most positions of an ignore-case constant whose spellings are enumerated ([`folding`]).
const MAX_FOLDING: usize = 4;

/// The characters one ignore-case position holding `c` is told apart by, where Event Grid's
/// folding (simple uppercase, EG-31) and EventBridge's (each pattern character's own case
/// mappings, EB-20) differ: `s`, `S` and `ſ` (simple uppercase `S`), `i`, `I` and `ı`
/// (simple uppercase `I`); `None` for every other character.
fn folding(c: char) -> Option<[char; 3]> {
    match c {
        's' | 'S' | '\u{17F}' => Some(['s', 'S', '\u{17F}']),
        'i' | 'I' | '\u{131}' => Some(['i', 'I', '\u{131}']),
        _ => None,
    }
}

/// Whether an ignore-case constant holds a character beyond ASCII other than `ſ` and `ı`
/// (whose classes [`folding`] enumerates).
fn beyond_ascii(v: &str) -> bool {
    v.chars().any(|c| !c.is_ascii() && folding(c).is_none())
}

fn too_many_folding_reason() -> &'static str {
    "an ignore-case constant holding more than 4 of `s` and `i`, compared by two case foldings \
     (EG-31, EB-20)"
}

/// A character none of `constants` holds (joins a prefix and a suffix into a value equal to no
/// constant and starting or ending with no longer one).
fn fresh_char(constants: &[&str]) -> char {
    ['~', '#', 'q', 'Z', '_', '%', '7', 'x', 'é', '\u{2603}']
        .into_iter()
        .find(|c| !constants.iter().any(|k| k.contains(*c)))
        .unwrap_or('\u{10FFFD}')
}

/// Scalar candidates (strings, numbers, `true`, `false`, `null`) for predicates `preds`; with
/// `canonical_numbers`, no number spelled beyond binary64's precision.
fn scalar_candidates<'a>(
    preds: impl Iterator<Item = &'a Pred>,
    bounded: &mut Option<String>,
    canonical_numbers: bool,
) -> Vec<Value> {
    // EventBridge's anything-but (EB-25) holds the predicates it excludes: their constants
    // draw the classes as their own would.
    let mut preds: Vec<&Pred> = preds.collect();
    let mut i = 0;
    while let Some(p) = preds.get(i) {
        if let Pred::Except(inner) = p {
            preds.extend(inner.iter());
        }
        i += 1;
    }
    let mut number_texts: Vec<String> = Vec::new();
    let mut constants: Vec<String> = Vec::new();
    let (mut prefixes, mut suffixes) = (vec![String::new()], vec![String::new()]);
    let mut contains: Vec<String> = Vec::new();
    let mut patterns: Vec<String> = Vec::new();
    let mut bounds: Vec<f64> = Vec::new();
    let mut ips: Vec<String> = Vec::new();
    // Whether a test reads a number's decimal text beyond its binary64 (EventBridge's
    // comparability, EB-16, EB-17; Event Grid's exact decimals, EG-33).
    let mut beyond_binary64 = false;
    // A constant compared ignoring case: as written, in lower and upper case, and with the
    // letters some non-ASCII character folds to respelled so (`ſ` and `ı`, whose simple
    // uppercase is `S` and `I`): Event Grid's ignore-case (simple uppercase, EG-31) finds them,
    // EventBridge's `equals-ignore-case` (each pattern character's own case mappings, EB-20)
    // does not.
    //
    // Where the two foldings meet (an Event Grid fold test and an EventBridge ignore-case
    // pattern on one location), each `s`, `i` (or `ſ`, `ı`) matters on its own: every spelling
    // from `{s, S, ſ}` and `{i, I, ı}` at each such position is a candidate, up to
    // `MAX_FOLDING` positions (beyond, the search is bounded and says so). Every other ASCII
    // letter is equated with its other case alone by both, so its case needs no enumeration.
    let mixed_folds = preds.iter().any(|p| {
        matches!(
            p,
            Pred::Str {
                case: Case::Fold,
                ..
            }
        )
    }) && preds.iter().any(|p| matches!(p, Pred::IgnoreCase(_)));
    let variants = |s: &str| {
        let mut v = vec![s.to_owned(), s.to_ascii_lowercase(), s.to_ascii_uppercase()];
        let folded: String = s
            .chars()
            .map(|c| match c {
                's' | 'S' => '\u{17F}',
                'i' | 'I' => '\u{131}',
                c => c,
            })
            .collect();
        v.push(folded);
        if mixed_folds && s.chars().filter(|c| folding(*c).is_some()).count() <= MAX_FOLDING {
            let mut all = vec![String::new()];
            for c in s.chars() {
                let options: Vec<char> = folding(c).map_or_else(|| vec![c], |f| f.to_vec());
                all = all
                    .into_iter()
                    .flat_map(|prefix| options.iter().map(move |o| format!("{prefix}{o}")))
                    .collect();
            }
            v.extend(all);
        }
        v.sort();
        v.dedup();
        v
    };
    let too_many_folding = |values: &[&str]| {
        mixed_folds
            && values
                .iter()
                .any(|v| v.chars().filter(|c| folding(*c).is_some()).count() > MAX_FOLDING)
    };
    for pred in &preds {
        match pred {
            Pred::Str { op, case, values } => {
                if *case == Case::Fold && values.iter().any(|v| beyond_ascii(v)) {
                    bounded.get_or_insert_with(|| {
                        "ignore-case comparison of constants beyond ASCII".to_owned()
                    });
                }
                if *case == Case::Fold
                    && too_many_folding(&values.iter().map(|v| &**v).collect::<Vec<_>>())
                {
                    bounded.get_or_insert_with(|| too_many_folding_reason().to_owned());
                }
                for v in values {
                    let vs = if *case == Case::Fold {
                        variants(v)
                    } else {
                        vec![v.to_string()]
                    };
                    match op {
                        StrOp::Eq => constants.extend(vs),
                        StrOp::Prefix => prefixes.extend(vs),
                        StrOp::Suffix => suffixes.extend(vs),
                        StrOp::Contains => {
                            bounded.get_or_insert_with(|| "a substring test".to_owned());
                            contains.extend(vs);
                        }
                    }
                }
            }
            Pred::Wildcard(w) => {
                bounded.get_or_insert_with(|| "a wildcard".to_owned());
                patterns.push(w.source().to_owned());
            }
            Pred::Segment(p) => {
                bounded.get_or_insert_with(|| "a dot-segment pattern".to_owned());
                patterns.push(p.source().to_owned());
            }
            Pred::Cidr(c) => ips.extend(cidr_edges(c.source())),
            Pred::Num { ranges, source } => {
                beyond_binary64 |= *source == crate::ir::NumSource::Comparable;
                for r in ranges {
                    bounds.extend([r.lo, r.hi].into_iter().filter(|b| b.is_finite()));
                }
            }
            Pred::Dec(ranges) => {
                beyond_binary64 = true;
                for r in ranges {
                    for (d, _) in [&r.lo, &r.hi].into_iter().flatten() {
                        match d.as_f64_exact() {
                            Some(x) => bounds.push(x),
                            None => {
                                bounded.get_or_insert_with(|| {
                                    "a decimal bound binary64 does not hold exactly".to_owned()
                                });
                                if let Ok(x) = d.to_string().parse::<f64>() {
                                    bounds.push(x);
                                }
                            }
                        }
                    }
                }
            }
            Pred::NumText(texts) => {
                beyond_binary64 = true;
                for t in texts {
                    number_texts.push(t.to_string());
                    if let Some(x) = Number::from_text(t).and_then(|n| n.as_f64()) {
                        bounds.push(x);
                    }
                }
            }
            Pred::Address(block) => {
                // EventBridge reads an IPv4-mapped IPv6 address as IPv4 (EB-28): the block's
                // edges are then IPv4 ones.
                let source = block.source();
                let (addr, bits) = source.split_once('/').unwrap_or((source, ""));
                let mapped = addr
                    .parse::<Ipv6Addr>()
                    .ok()
                    .and_then(|a| a.to_ipv4_mapped())
                    .map(|v4| {
                        if bits.is_empty() {
                            v4.to_string()
                        } else {
                            format!("{v4}/{bits}")
                        }
                    });
                ips.extend(cidr_edges(mapped.as_deref().unwrap_or(source)));
                ips.push(addr.to_owned());
            }
            Pred::IgnoreCase(p) => {
                if beyond_ascii(p.source()) {
                    bounded.get_or_insert_with(|| {
                        "ignore-case comparison of constants beyond ASCII".to_owned()
                    });
                }
                if too_many_folding(&[p.source()]) {
                    bounded.get_or_insert_with(|| too_many_folding_reason().to_owned());
                }
                let vs = variants(p.source());
                match p.mode() {
                    CaseMode::Equals => constants.extend(vs),
                    CaseMode::Prefix => prefixes.extend(vs),
                    CaseMode::Suffix => suffixes.extend(vs),
                }
            }
            Pred::Shape(_) | Pred::HasType(_) | Pred::Bool(_) | Pred::Except(_) => {}
        }
    }
    // Numeric text among the string constants is a number bound too (a text compared as a
    // number by one filter and as a string by another).
    for c in constants.iter().chain(&prefixes).chain(&suffixes) {
        if let Some(n) = Number::from_text(c).and_then(|n| n.as_f64()) {
            bounds.push(n);
        }
    }
    let all: Vec<&str> = constants
        .iter()
        .chain(&prefixes)
        .chain(&suffixes)
        .chain(&contains)
        .chain(&patterns)
        .map(String::as_str)
        .collect();
    let f = fresh_char(&all).to_string();
    let mut strings: BTreeSet<String> = BTreeSet::new();
    strings.insert(String::new());
    strings.insert(f.clone());
    for c in &constants {
        strings.insert(c.clone());
        strings.insert(format!("{c}{f}"));
        strings.insert(format!("{f}{c}"));
        for v in variants(c) {
            strings.insert(v);
        }
    }
    prefixes.sort();
    prefixes.dedup();
    suffixes.sort();
    suffixes.dedup();
    if prefixes.len().saturating_mul(suffixes.len()) > MAX_PAIRS {
        bounded.get_or_insert_with(|| format!("more than {MAX_PAIRS} prefix and suffix pairs"));
    }
    let mut pairs = 0;
    'outer: for p in &prefixes {
        strings.insert(p.clone());
        for s in &suffixes {
            pairs += 1;
            if pairs > MAX_PAIRS {
                break 'outer;
            }
            strings.insert(format!("{p}{f}{s}"));
            strings.insert(format!("{p}{s}"));
        }
    }
    for s in &suffixes {
        strings.insert(s.clone());
    }
    for c in &contains {
        strings.insert(c.clone());
        strings.insert(format!("{f}{c}{f}"));
    }
    for p in &patterns {
        strings.insert(p.replace('*', ""));
        strings.insert(p.replace('*', &f));
        strings.insert(p.replace('*', "."));
        strings.insert(format!("{}{f}", p.replace('*', "")));
    }
    strings.extend(ips);
    // Numbers: every bound, a number between each two neighbouring bounds, one beyond each end.
    bounds.retain(|b| b.is_finite());
    bounds.sort_by(f64::total_cmp);
    bounds.dedup();
    let mut numbers: Vec<f64> = bounds.clone();
    for w in bounds.windows(2) {
        if let [a, b] = w {
            numbers.push(a / 2.0 + b / 2.0);
        }
    }
    match (bounds.first(), bounds.last()) {
        (Some(lo), Some(hi)) => {
            numbers.push(lo - 1.0 - lo.abs());
            numbers.push(hi + 1.0 + hi.abs());
        }
        _ => numbers.push(0.0),
    }
    let mut out: Vec<Value> = Vec::new();
    // Numbers compared by their text (EB-16): each text as written, as a number and a string.
    for t in number_texts {
        if let Some(n) = Number::from_text(&t) {
            out.push(Value::Number(n));
        }
        strings.insert(t);
    }
    for x in numbers {
        if !x.is_finite() {
            continue;
        }
        let text = canonical_number_text(x);
        let mut spellings = vec![text.clone()];
        if !text.contains(['.', 'e', 'E']) {
            // The same number spelled otherwise: told apart by tests comparing the text.
            spellings.push(format!("{text}.0"));
        }
        if beyond_binary64 && !canonical_numbers {
            // A number binary64 rounds to `x` but that is not `x`: equal to `x` where numbers
            // are read as binary64 (sns rule 31), another number exactly (EG-33) and not
            // comparable (EB-17).
            spellings.push(beyond_binary64_text(&text));
        }
        for t in spellings {
            if let Some(n) = Number::from_text(&t) {
                out.push(Value::Number(n));
            }
            strings.insert(t);
        }
    }
    out.extend(strings.into_iter().map(Value::String));
    out.extend([Value::Bool(true), Value::Bool(false), Value::Null]);
    out
}

/// `text` (a number's shortest form) with a digit appended far beyond binary64's precision:
/// `6` → `6.00000000000000000001`, `1.5e300` → `1.500000000000000000001e300`.
fn beyond_binary64_text(text: &str) -> String {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let point = if mantissa.contains('.') { "" } else { "." };
    format!("{mantissa}{point}00000000000000000001{exponent}")
}

/// IP addresses at a CIDR block's edges: its first and last address and the address just
/// outside each (a block is an interval of addresses, so these reach every class).
fn cidr_edges(source: &str) -> Vec<String> {
    // One address (EventBridge's IP-shaped string, EB-13) is a block of one.
    let (addr, bits) = match source.split_once('/') {
        Some((addr, bits)) => (addr, bits.parse::<u32>().ok()),
        None => (source, Some(if source.contains(':') { 128 } else { 32 })),
    };
    let Some(bits) = bits else {
        return Vec::new();
    };
    if let Ok(a) = addr.parse::<Ipv4Addr>() {
        let mask = u32::MAX
            .checked_shl(32u32.saturating_sub(bits))
            .unwrap_or(0);
        let first = u32::from(a) & mask;
        let last = first | !mask;
        let mut out = vec![first, last];
        out.extend(first.checked_sub(1));
        out.extend(last.checked_add(1));
        return out
            .into_iter()
            .map(|x| Ipv4Addr::from(x).to_string())
            .collect();
    }
    if let Ok(a) = addr.parse::<Ipv6Addr>() {
        let mask = u128::MAX
            .checked_shl(128u32.saturating_sub(bits))
            .unwrap_or(0);
        let first = u128::from(a) & mask;
        let last = first | !mask;
        let mut out = vec![first, last];
        out.extend(first.checked_sub(1));
        out.extend(last.checked_add(1));
        return out
            .into_iter()
            .map(|x| Ipv6Addr::from(x).to_string())
            .collect();
    }
    Vec::new()
}

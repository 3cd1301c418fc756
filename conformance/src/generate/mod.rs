//! Generators of valid policies and messages for the differential check (VM versus reference).
//!
//! Each dialect has a generator that draws from a [`Source`] of choices: a seeded PRNG in
//! `cargo test` ([`Rng`]), or the fuzzer's bytes under cargo-fuzz. Generators aim at the interesting
//! cases — absent versus null, arrays, numbers near bounds and with many spellings, case variants,
//! empty strings, patterns with `*` and `**`, wildcards with escapes, CIDR edges — by drawing keys
//! and values from small pools, so that policies and messages collide often.

pub mod basaltic;
pub mod eventgrid;
pub mod expr;
pub mod sns;
pub mod stream;

use crate::reference::json::Value;
use filtervm_compiler::Dialect;

/// A source of choices.
pub trait Source {
    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: u32) -> u32;

    /// A uniformly chosen element of a non-empty slice (the first when exhausted).
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T
    where
        Self: Sized,
    {
        let n = u32::try_from(items.len()).unwrap_or(u32::MAX);
        let i = self.below(n) as usize;
        // `items` is non-empty by contract; fall back to the first element.
        items
            .get(i)
            .or_else(|| items.first())
            .unwrap_or_else(|| unreachable_empty())
    }

    /// True with probability about `percent`/100.
    fn chance(&mut self, percent: u32) -> bool
    where
        Self: Sized,
    {
        self.below(100) < percent
    }
}

#[expect(
    clippy::panic,
    reason = "generators are only called with non-empty pools, a programming error otherwise"
)]
fn unreachable_empty() -> ! {
    panic!("Source::pick on an empty slice")
}

/// A small deterministic PRNG (xorshift64*), for seeded property tests.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced by a fixed non-zero seed).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

impl Source for Rng {
    fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            return 0;
        }
        u32::try_from(self.next() % u64::from(n)).unwrap_or(0)
    }
}

/// A [`Source`] over a byte slice (the fuzzer's input): each choice consumes up to four bytes,
/// and an exhausted slice answers 0, so every input — even the empty one — gives a case.
#[derive(Debug, Clone)]
pub struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    /// Choices drawn from `bytes`.
    pub fn new(bytes: &'a [u8]) -> Bytes<'a> {
        Bytes(bytes)
    }

    /// Whether every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Source for Bytes<'_> {
    fn below(&mut self, n: u32) -> u32 {
        if n <= 1 {
            return 0;
        }
        // As many bytes as `n - 1` needs, little-endian, then reduced modulo `n`.
        let width = (32 - (n - 1).leading_zeros()).div_ceil(8) as usize;
        let take = width.min(self.0.len());
        let (head, rest) = self.0.split_at(take);
        self.0 = rest;
        let x = head
            .iter()
            .rev()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        u32::try_from(x % u64::from(n)).unwrap_or(0)
    }
}

/// An element of a pool of words.
pub(crate) fn word<'a>(s: &mut impl Source, items: &[&'a str]) -> &'a str {
    s.pick::<&'a str>(items)
}

/// Every string and number in `value` (object keys excepted), in order: generators draw message
/// values from the policy's own operands now and then, so that more messages match.
pub(crate) fn harvest(value: &Value, out: &mut Vec<Value>) {
    match value {
        Value::String(_) | Value::Number(_) => out.push(value.clone()),
        Value::Array(items) => items.iter().for_each(|v| harvest(v, out)),
        Value::Object(members) => members.values().for_each(|v| harvest(v, out)),
        Value::Bool(_) | Value::Null => {}
    }
}

/// One generated case. Its values keep exact number text and member order, and print as the
/// JSON both engines read.
#[derive(Debug, Clone)]
pub struct Case {
    /// The dialect.
    pub dialect: Dialect,
    /// Dialect options (`null` for the defaults).
    pub options: Value,
    /// The policy (valid for the dialect).
    pub policy: Value,
    /// The message, in the vector shape.
    pub message: Value,
}

impl Case {
    /// The case as a ready-to-paste conformance vector line (`expect` is what `verdict` says).
    pub fn to_vector(&self, id: &str, verdict: bool) -> String {
        let mut case = crate::json!({
            "id": id,
            "dialect": self.dialect.name(),
            "policy": self.policy,
            "message": self.message,
            "expect": if verdict { "match" } else { "no-match" },
            "source": "differential generator",
        });
        if !self.options.is_null()
            && let Some(fields) = case.as_object_mut()
        {
            fields.insert("options".to_owned(), self.options.clone());
        }
        case.to_string()
    }
}

/// Generates a case of `dialect`, or `None` for a dialect without a generator yet.
pub fn case(dialect: Dialect, source: &mut impl Source) -> Option<Case> {
    match dialect {
        Dialect::Basaltic => Some(basaltic::case(source)),
        Dialect::Expr => Some(expr::case(source)),
        Dialect::Sns => Some(sns::case(source)),
        Dialect::EventGrid => Some(eventgrid::case(source)),
        Dialect::Stream => Some(stream::case(source)),
    }
}

/// The outcome of checking one case through both engines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Both engines agree.
    Agree(bool),
    /// The policy did not compile (a generator bug, not an engine disagreement).
    Rejected(String),
    /// The engines disagree: the VM's verdict, then the reference's.
    Disagree {
        /// The VM's verdict.
        vm: bool,
        /// The reference's verdict.
        reference: bool,
    },
    /// The message could not be read or the reference could not answer.
    Error(String),
}

/// Runs a case through the compiler + VM and through the reference interpreter. The product
/// reads the policy and options from their text (as from a vector or a command line); the
/// message as a `serde_json::Value`, the form its message readers take.
pub fn check(case: &Case) -> Outcome {
    let filter = match crate::runner::compile(case.dialect, &case.policy, &case.options) {
        Ok(filter) => filter,
        Err(e) => return Outcome::Rejected(e.to_string()),
    };
    let message = match crate::runner::read_message(case.dialect, &case.options, &case.message) {
        Ok(m) => m,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    let vm = filtervm_compiler::Evaluator::new().matches(&filter, &message);
    match crate::reference::evaluate(case.dialect, &case.options, &case.policy, &case.message) {
        Ok(reference) if reference == vm => Outcome::Agree(vm),
        Ok(reference) => Outcome::Disagree { vm, reference },
        Err(e) => Outcome::Error(e.0),
    }
}

//! Generators of valid policies and messages for the differential check (VM versus reference).
//!
//! Each dialect has a generator that draws from a [`Source`] of choices: a seeded PRNG in
//! `cargo test` ([`Rng`]), or the fuzzer's bytes under cargo-fuzz. Generators aim at the interesting
//! cases — absent versus null, arrays, numbers near bounds and with many spellings, case variants,
//! empty strings, patterns with `*` and `**`, wildcards with escapes, CIDR edges — by drawing keys
//! and values from small pools, so that policies and messages collide often.

pub mod basaltic;
pub mod eventbridge;
pub mod eventgrid;
pub mod expr;
pub mod mutate;
pub mod set_walk;
pub mod sns;
pub mod stream;

use crate::reference::json::{Map, Value};
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

/// A `numeric` expression (sns rules 31, 38; eventbridge EB-26) over numbers drawn by `number`:
/// one comparison, or a range whose bottom is below its top.
pub(crate) fn numeric<S: Source>(s: &mut S, number: impl Fn(&mut S) -> Value) -> Value {
    let a = number(s);
    if s.chance(40) {
        let b = number(s);
        let f = |v: &Value| v.as_f64().unwrap_or(0.0);
        let (lo, hi) = if f(&a) <= f(&b) { (a, b) } else { (b, a) };
        if f(&lo) < f(&hi) {
            let op1 = if s.chance(50) { ">" } else { ">=" };
            let op2 = if s.chance(50) { "<" } else { "<=" };
            return crate::json!({"numeric": [op1, lo, op2, hi]});
        }
        return crate::json!({"numeric": ["=", lo]});
    }
    let op = word(s, &["=", "<", "<=", ">", ">="]);
    crate::json!({"numeric": [op, a]})
}

/// Every string and number in `value` (object keys excepted), in order: generators draw message
/// values from the policy's own operands now and then, so that more messages match.
pub fn harvest(value: &Value, out: &mut Vec<Value>) {
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

/// Generates a case of `dialect`.
pub fn case(dialect: Dialect, source: &mut impl Source) -> Case {
    match dialect {
        Dialect::Basaltic => basaltic::case(source),
        Dialect::Expr => expr::case(source),
        Dialect::Sns => sns::case(source),
        Dialect::EventGrid => eventgrid::case(source),
        Dialect::Stream => stream::case(source),
        Dialect::EventBridge => eventbridge::case(source),
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
    /// The reference stopped at one of its documented limits (`reference` module docs): nothing
    /// was compared.
    Limit(String),
    /// The message could not be read, or the reference gave no verdict for another reason
    /// (rejecting a policy the compiler accepted, for one).
    Error(String),
    /// The VM declined to judge the message (`MESSAGE_TOO_COMPLEX`: an SNS body beyond the
    /// binding caps; `INVALID_MESSAGE`: an event that is not one JSON object): it fails closed
    /// by design. Never `MESSAGE_TOO_COMPLEX` for an EventBridge event: [`check`] reports that as
    /// an error.
    Unjudged(String),
}

/// Runs a case through the compiler + VM and through the reference interpreter. The product
/// reads the policy, options and message from their text (as from a vector or a command line;
/// the message by [`crate::runner::read_message`]).
pub fn check(case: &Case) -> Outcome {
    let filter = match crate::runner::compile(case.dialect, &case.policy, &case.options) {
        Ok(filter) => filter,
        Err(e) => return Outcome::Rejected(e.to_string()),
    };
    let message = match crate::runner::read_message(case.dialect, &case.options, &case.message) {
        Ok(m) => m,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    let vm = match filtervm_compiler::Evaluator::new().try_matches(&filter, &message) {
        // An EventBridge event is never too complex: it gets a verdict (EB-8), even where the
        // binder's rows cannot judge its `exists: false`.
        Err(e)
            if e.code == filtervm_compiler::ErrorCode::MessageTooComplex
                && case.dialect == Dialect::EventBridge =>
        {
            return Outcome::Error(format!("a valid event was not judged: {e}"));
        }
        // An SNS body beyond the binding caps, or an event that is not one JSON object (the
        // generators now and then make one; Event Grid and EventBridge give it no verdict,
        // `filtervm/MESSAGES.md`).
        Err(e)
            if matches!(
                e.code,
                filtervm_compiler::ErrorCode::MessageTooComplex
                    | filtervm_compiler::ErrorCode::InvalidMessage
            ) =>
        {
            return Outcome::Unjudged(e.to_string());
        }
        verdict => verdict.unwrap_or(false),
    };
    match crate::reference::evaluate(case.dialect, &case.options, &case.policy, &case.message) {
        Ok(reference) if reference == vm => Outcome::Agree(vm),
        Ok(reference) => Outcome::Disagree { vm, reference },
        Err(crate::reference::ReferenceError::Limit(e)) => Outcome::Limit(e),
        Err(e) => Outcome::Error(e.to_string()),
    }
}

/// How the compiler and the reference's own validation judged one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validation {
    /// Both accept it.
    BothAccept,
    /// Both reject it.
    BothReject,
    /// One accepts what the other rejects: a finding (what each said).
    Disagree(String),
    /// The compiler accepts it and the reference stopped at one of its own bounds
    /// ([`crate::reference::Rejection::is_limit`]): nothing was compared.
    Limit(String),
}

/// Compiles `policy` with `options` (as [`crate::runner::compile`] reads a vector's) and validates
/// it with the reference ([`crate::reference::validate`]); a policy one accepts and the other
/// rejects is a disagreement, and so is an `eventbridge` pattern both reject with different codes
/// (both sort event-ruler's messages into its `EVENTBRIDGE_*` codes, each on its own).
pub fn validation(dialect: Dialect, options: &Value, policy: &Value) -> Validation {
    let compiler = crate::runner::compile(dialect, policy, options);
    let reference = crate::reference::validate(dialect, options, policy);
    match (compiler, reference) {
        (Ok(_), Ok(())) => Validation::BothAccept,
        (Err(e), Err(r))
            if dialect == Dialect::EventBridge
                && !r.is_limit()
                && e.errors.first().map(|p| p.code.as_str()) != Some(r.code) =>
        {
            Validation::Disagree(format!(
                "both reject the pattern, with different codes: the compiler {e}, the reference {r}"
            ))
        }
        (Err(_), Err(_)) => Validation::BothReject,
        (Ok(_), Err(r)) if r.is_limit() => Validation::Limit(r.to_string()),
        (Ok(_), Err(r)) => Validation::Disagree(format!(
            "the compiler accepts the policy, the reference rejects it: {r}"
        )),
        (Err(e), Ok(())) => Validation::Disagree(format!(
            "the reference accepts the policy, the compiler rejects it: {e}"
        )),
    }
}

/// Another message for `policy` (a policy of `dialect` with `options`, as [`case`] makes them),
/// drawn as [`case`] draws its messages, with values taken from the policy's own operands now and
/// then (for `basaltic` and `expr` too, whose [`case`] messages ignore the policy; `sns`
/// attributes are also aimed at their leaves, [`sns::aim`]): for checks that need many messages
/// per policy, many of them matching (the subscription set tests, [`set_walk`]).
pub fn message_for(
    dialect: Dialect,
    policy: &Value,
    options: &Value,
    source: &mut impl Source,
) -> Value {
    match dialect {
        Dialect::Basaltic => {
            let mut pool = Vec::new();
            harvest(policy, &mut pool);
            basaltic::message(source, &pool)
        }
        Dialect::Expr => {
            let mut pool = Vec::new();
            expr::operands(policy, &mut pool);
            expr::message(source, &pool)
        }
        Dialect::Sns => {
            let body = options.get("scope").and_then(Value::as_str) == Some("MessageBody");
            let mut message = sns::message(source, policy, body);
            if !body {
                sns::aim(source, policy, &mut message);
            }
            message
        }
        Dialect::EventGrid => {
            let cloud =
                options.get("schema").and_then(Value::as_str) == Some("CloudEventSchemaV1_0");
            eventgrid::event(source, policy, cloud)
        }
        Dialect::EventBridge => eventbridge::event(source, policy),
        Dialect::Stream => {
            // The text form is read back to the JSON form, whose clauses name the headers.
            let json_form = match policy {
                Value::String(text) => {
                    crate::reference::stream_text::parse(text).unwrap_or(Value::Null)
                }
                other => other.clone(),
            };
            stream::message(source, &json_form)
        }
    }
}

/// A nested policy made of parts of `policies` (valid policies of `dialect`, as [`case`] makes
/// them), for the dialects that nest: `sns` `{m0, "$or": [{m1}, {m2, m3}]}` or
/// `{m0, "$or": [{m1}, {m2, "$or": [{m3}, {m4}]}]}` of single members (each a member of a policy,
/// or an exact match of one of its names on one of its string operands); `expr`
/// `AND(p0, OR(p1, …))` with AND, OR and NOT below; `stream` the groups of two filters as one.
/// `None` for the other dialects, an empty `policies`, or a draw that does not fit. The result
/// may exceed the dialect's limits (the caller compiles it and skips it then).
pub fn nested<S: Source>(dialect: Dialect, policies: &[Value], s: &mut S) -> Option<Value> {
    if policies.is_empty() {
        return None;
    }
    let pick = |s: &mut S| s.pick(policies).clone();
    match dialect {
        Dialect::Sns => {
            let member = |s: &mut S| sns_member(&pick(s), s);
            let (mut m0, m1, mut m2, m3, m4) =
                (member(s)?, member(s)?, member(s)?, member(s)?, member(s)?);
            if m0.contains_key("$or") || m2.contains_key("$or") {
                return None;
            }
            if s.chance(50) {
                m2.extend(m3);
            } else {
                m2.insert("$or".into(), Value::Array(vec![m3.into(), m4.into()]));
            }
            m0.insert("$or".into(), Value::Array(vec![m1.into(), m2.into()]));
            Some(Value::Object(m0))
        }
        Dialect::Expr => {
            let (p0, p1, p2, p3) = (pick(s), pick(s), pick(s), pick(s));
            let inner = match s.below(3) {
                0 => crate::json!({"op": "AND", "exp": [p2, {"op": "NOT", "exp": [p3]}]}),
                1 => crate::json!({"op": "AND", "exp": [p2, p3]}),
                _ => crate::json!({"op": "OR", "exp": [{"op": "AND", "exp": [p2, p3]}, p0]}),
            };
            Some(crate::json!({"op": "AND", "exp": [p0, {"op": "OR", "exp": [p1, inner]}]}))
        }
        Dialect::Stream => {
            let (p0, p1) = (pick(s), pick(s));
            let a = p0.get("groups")?.as_array()?;
            let b = p1.get("groups")?.as_array()?;
            Some(crate::json!({"groups": a.iter().chain(b).cloned().collect::<Vec<_>>()}))
        }
        Dialect::Basaltic | Dialect::EventGrid | Dialect::EventBridge => None,
    }
}

/// One member of an `sns` policy, as a one-member object: as it is, or (three times in five,
/// when it is no `$or`) an exact match of its name on one of its string operands.
fn sns_member(policy: &Value, s: &mut impl Source) -> Option<Map> {
    let members: Vec<(&String, &Value)> = policy.as_object()?.iter().collect();
    if members.is_empty() {
        return None;
    }
    let &(name, value) = s.pick(&members);
    let mut strings = Vec::new();
    harvest(value, &mut strings);
    strings.retain(Value::is_string);
    let value = if name != "$or" && !strings.is_empty() && s.chance(60) {
        Value::Array(vec![s.pick(&strings).clone()])
    } else {
        value.clone()
    };
    Some(Map::from_iter([(name.clone(), value)]))
}

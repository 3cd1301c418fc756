//! Shared code of the filtervm fuzz targets (see `README.md` for the table of targets).
//!
//! Every check panics on a finding, after printing what to paste: a conformance vector line for
//! a VM/reference disagreement, or the offending policy/message.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

pub mod analysis;
pub mod policy_set;
pub mod program;
pub mod set_bytes;
pub mod trusted;

use filtervm_compiler::{
    Dialect, Evaluator, EventGridSchema, ExprOptions, Filter, Options, SnsScope, compile_text,
    compile_value,
};
use filtervm_conformance::generate::{self, Bytes, Case, Outcome};
use filtervm_conformance::reference::json::Value;
use filtervm_conformance::reference::{self, ReferenceError};
use filtervm_conformance::runner;
use filtervm_vm::bind::Bindings;
use filtervm_vm::message::Message;
use filtervm_vm::program::Program;
use std::sync::OnceLock;

/// The public conformance vectors, the source of the fixed policies and messages.
const VECTORS: [(Dialect, &str); 5] = [
    (
        Dialect::Sns,
        include_str!("../../conformance/vectors/sns.jsonl"),
    ),
    (
        Dialect::Basaltic,
        include_str!("../../conformance/vectors/basaltic.jsonl"),
    ),
    (
        Dialect::EventGrid,
        include_str!("../../conformance/vectors/eventgrid.jsonl"),
    ),
    (
        Dialect::Stream,
        include_str!("../../conformance/vectors/stream.jsonl"),
    ),
    (
        Dialect::Expr,
        include_str!("../../conformance/vectors/expr.jsonl"),
    ),
];

/// A compiled policy from the vectors.
pub struct Fixed {
    /// Its dialect.
    pub dialect: Dialect,
    /// Its options.
    pub options: Options,
    /// Its options as the vector wrote them (`null` for none), for the reference.
    pub options_json: Value,
    /// The policy as written.
    pub policy: Value,
    /// The compiled filter.
    pub filter: Filter,
}

/// A message from the vectors, in the vector shape.
pub struct Sample {
    /// Its dialect.
    pub dialect: Dialect,
    /// The options of the vector it came from.
    pub options: Options,
    /// The message JSON.
    pub json: Value,
    /// The message, read.
    pub message: Message,
}

struct Vectors {
    policies: Vec<Fixed>,
    samples: Vec<Sample>,
}

fn vectors() -> &'static Vectors {
    static V: OnceLock<Vectors> = OnceLock::new();
    V.get_or_init(|| {
        let mut policies: Vec<Fixed> = Vec::new();
        let mut samples: Vec<Sample> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (dialect, text) in VECTORS {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let Ok(case) = reference::json::parse(line) else {
                    continue;
                };
                let options_json = case.get("options").cloned().unwrap_or(Value::Null);
                let Ok(options) = runner::options(dialect, &options_json) else {
                    continue;
                };
                let policy = case.get("policy").cloned().unwrap_or(Value::Null);
                if case.get("expect").and_then(Value::as_str) != Some("invalid")
                    && seen.insert(format!("{dialect}|{options}|{policy}"))
                    && let Ok(filter) = runner::compile(dialect, &policy, &options_json)
                {
                    policies.push(Fixed {
                        dialect,
                        options: options.clone(),
                        options_json: options_json.clone(),
                        policy,
                        filter,
                    });
                }
                if let Some(json) = case.get("message")
                    && seen.insert(format!("message {dialect}|{options}|{json}"))
                    && let Ok(message) = runner::read_message(dialect, &options_json, json)
                {
                    samples.push(Sample {
                        dialect,
                        options,
                        json: json.clone(),
                        message,
                    });
                }
            }
        }
        Vectors { policies, samples }
    })
}

/// The fixed policies of `dialect` whose options satisfy `keep`.
pub fn policies(dialect: Dialect, keep: impl Fn(&Options) -> bool) -> Vec<&'static Fixed> {
    vectors()
        .policies
        .iter()
        .filter(|p| p.dialect == dialect && keep(&p.options))
        .collect()
}

/// The fixed messages of `dialect` whose options satisfy `keep`.
pub fn samples(dialect: Dialect, keep: impl Fn(&Options) -> bool) -> Vec<&'static Sample> {
    vectors()
        .samples
        .iter()
        .filter(|m| m.dialect == dialect && keep(&m.options))
        .collect()
}

/// Every fixed message.
pub fn all_samples() -> &'static [Sample] {
    &vectors().samples
}

/// The options a compile target uses, chosen by the input's first byte.
pub fn options_for(dialect: Dialect, selector: u8) -> Options {
    match dialect {
        Dialect::Sns if selector % 2 == 1 => SnsScope::MessageBody.into(),
        Dialect::EventGrid if selector % 2 == 1 => EventGridSchema::CloudEvents.into(),
        Dialect::Expr => match selector % 4 {
            1 => ExprOptions::default().with_max_depth(0).into(),
            2 => ExprOptions::default().with_max_depth(2).into(),
            3 => ExprOptions::default().with_max_depth(62).into(),
            _ => dialect.into(),
        },
        _ => dialect.into(),
    }
}

/// The same options for reading messages (expr's `max_depth` does not matter there).
fn same_options(a: &Options, b: &Options) -> bool {
    matches!((a, b), (Options::Expr(_), Options::Expr(_))) || a == b
}

/// Options as the reference reads them.
fn options_json(options: &Options) -> Value {
    reference::json::parse(&options.to_string()).unwrap_or(Value::Null)
}

/// Runs `filter` on `message` the way the VM does, and says whether the bindings overflowed (an
/// SNS body too large to judge element by element: the VM fails closed, the reference does not).
/// An EventBridge event whose `exists: false` the rows cannot judge is judged on the filter's
/// kept pattern (EB-8), as the evaluator does: a verdict, not an overflow.
pub fn run(filter: &Filter, message: &Message) -> (bool, bool) {
    let (verdict, overflowed) = run_program(filter.program(), message);
    if overflowed
        && filter.pattern().is_some()
        && let Ok(exact) = Evaluator::new().try_matches(filter, message)
    {
        return (exact, false);
    }
    (verdict, overflowed)
}

/// [`run`] for a bare program.
pub fn run_program(program: &Program, message: &Message) -> (bool, bool) {
    let mut bindings = Bindings::new();
    let bound = bindings.bind(program.keys(), message);
    let mut registers = Vec::new();
    let verdict = program.eval(&bound, &mut registers);
    (verdict, bound.overflowed())
}

/// Checks that the VM's verdict equals the reference's. The reference may stop only at one of its
/// documented limits ([`ReferenceError::Limit`]); any other error is a finding (a policy the
/// compiler accepted and the reference rejects, or a message the product read and the reference
/// cannot).
pub fn agree(dialect: Dialect, options: &Value, policy: &Value, message: &Value, vm: bool) {
    let case = || Case {
        dialect,
        options: options.clone(),
        policy: policy.clone(),
        message: message.clone(),
    };
    match reference::evaluate(dialect, options, policy, message) {
        Ok(expected) if expected != vm => {
            eprintln!("{}", case().to_vector("fuzz-finding", expected));
            panic!("VM says {vm}, reference says {expected}");
        }
        Ok(_) | Err(ReferenceError::Limit(_)) => {}
        Err(e) => {
            eprintln!("{}", case().to_vector("fuzz-finding", vm));
            panic!("VM says {vm}, the reference gives no verdict: {e}");
        }
    }
}

/// `compile_<dialect>`: arbitrary bytes as policy text. The first byte picks the options.
///
/// Compiling returns a filter or errors that each carry a code, and the reference's own
/// validation accepts exactly the policies the compiler accepts. A filter survives the wire
/// (`to_bytes` → `from_bytes` gives the same verdicts), and on the vectors' messages the VM
/// agrees with the reference. For `stream`, the text form (a JSON string policy) is compiled too.
pub fn compile_bytes(dialect: Dialect, data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let options = options_for(dialect, selector);
    let text = String::from_utf8_lossy(rest);
    let compiled = compile_text(dialect, &text, &options);
    let validated = reference::validate_text(dialect, &options.to_string(), &text);
    same_validation(
        dialect,
        &text,
        compiled.as_ref().err(),
        validated.as_ref().err(),
    );
    check_compiled(dialect, &options, compiled, || {
        validated.ok().map(|(_, policy)| policy)
    });
    if dialect == Dialect::Stream {
        let policy = Value::String(text.clone().into_owned());
        let product_policy = filtervm_vm::json::Value::String(text.clone().into_owned());
        let compiled = compile_value(dialect, &product_policy, &options);
        let validated = reference::validate(dialect, &options_json(&options), &policy);
        same_validation(
            dialect,
            &text,
            compiled.as_ref().err(),
            validated.as_ref().err(),
        );
        check_compiled(dialect, &options, compiled, || Some(policy.clone()));
    }
}

/// The compiler and the reference's validation accept and reject the same policies.
fn same_validation(
    dialect: Dialect,
    text: &str,
    compiler: Option<&filtervm_compiler::CompileError>,
    reference: Option<&reference::Rejection>,
) {
    match (compiler, reference) {
        // A bound of the reference itself (`Rejection::is_limit`): nothing to compare.
        (None, Some(r)) if r.is_limit() => {}
        (None, Some(r)) => {
            panic!("{dialect}: the compiler accepts {text:?}, the reference rejects it: {r}")
        }
        (Some(e), None) => {
            panic!("{dialect}: the reference accepts {text:?}, the compiler rejects it: {e}")
        }
        _ => {}
    }
}

fn check_compiled(
    dialect: Dialect,
    options: &Options,
    result: Result<Filter, filtervm_compiler::CompileError>,
    policy: impl FnOnce() -> Option<Value>,
) {
    let filter = match result {
        Ok(filter) => filter,
        Err(e) => {
            assert!(!e.errors.is_empty(), "an error without errors");
            for error in &e.errors {
                assert!(
                    !error.code.as_str().is_empty(),
                    "an error without a code: {error:?}"
                );
            }
            return;
        }
    };
    let loaded = Filter::from_bytes(&filter.to_bytes())
        .unwrap_or_else(|e| panic!("a compiled filter does not load from its bytes: {e}"));
    let policy = policy();
    let reference_options = options_json(options);
    let mut evaluator = Evaluator::new();
    for sample in samples(dialect, |o| same_options(o, options)) {
        let vm = evaluator.matches(&filter, &sample.message);
        assert_eq!(
            vm,
            evaluator.matches(&loaded, &sample.message),
            "the loaded filter disagrees"
        );
        if let Some(policy) = &policy
            && !run(&filter, &sample.message).1
        {
            agree(dialect, &reference_options, policy, &sample.json, vm);
        }
    }
}

/// `differential`: a generated case (dialect from the first byte, or `FILTERVM_FUZZ_DIALECT`),
/// through both engines, the VM by every path a message takes
/// (`filtervm_conformance::paths`): the owned message, the raw JSON bytes, the whole tree, and
/// borrowed attributes and headers.
pub fn differential(data: &[u8]) {
    static FORCED: OnceLock<Option<Dialect>> = OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        std::env::var("FILTERVM_FUZZ_DIALECT")
            .ok()
            .and_then(|d| d.parse().ok())
    });
    let (dialect, rest) = match (forced, data.split_first()) {
        (Some(d), _) => (d, data),
        (None, Some((&b, rest))) => (Dialect::ALL[usize::from(b) % Dialect::ALL.len()], rest),
        (None, None) => return,
    };
    let mut source = Bytes::new(rest);
    let case = generate::case(dialect, &mut source);
    match generate::check(&case) {
        Outcome::Agree(_) => {}
        Outcome::Disagree { vm, reference } => {
            eprintln!("{}", case.to_vector("fuzz-finding", reference));
            panic!("VM says {vm}, reference says {reference}");
        }
        Outcome::Rejected(e) => {
            eprintln!("{}", case.to_vector("fuzz-generator", false));
            panic!("the generator made an invalid policy: {e}");
        }
        Outcome::Error(e) => {
            eprintln!("{}", case.to_vector("fuzz-error", false));
            panic!("the message or the reference failed: {e}");
        }
        // The VM declined to judge the message: it fails closed by design.
        Outcome::Unjudged(_) => {}
        // A documented limit of the reference: the VM's paths are still compared below.
        Outcome::Limit(_) => {}
    }
    if let Err(e) =
        filtervm_conformance::paths::check(case.dialect, &case.options, &case.policy, &case.message)
    {
        eprintln!("{}", case.to_vector("fuzz-finding", false));
        panic!("{e}");
    }
    // The same policy, mutated (often invalid): the compiler and the reference's validation
    // accept and reject the same ones.
    let options = generate::mutate::options(&case.options, &mut source);
    let policy = generate::mutate::policy(&case.policy, &mut source);
    if let generate::Validation::Disagree(why) = generate::validation(dialect, &options, &policy) {
        panic!("{why}\n  options: {options}\n  policy: {policy}");
    }
}

/// Reads `line` as a message for each fixed policy of `dialect` (options filtered by `keep`),
/// runs it, and compares with the reference on the vector-shaped `json` when there is one.
pub fn message_line(
    dialect: Dialect,
    keep: impl Fn(&Options) -> bool,
    line: &str,
    json: Option<&Value>,
) {
    for fixed in policies(dialect, keep) {
        let Ok(message) = filtervm_compiler::message_from_line(dialect, &fixed.options, line)
        else {
            continue;
        };
        let (vm, overflowed) = run(&fixed.filter, &message);
        if let Some(json) = json
            && !overflowed
        {
            agree(dialect, &fixed.options_json, &fixed.policy, json, vm);
        }
    }
}

/// The input as a message line: lossy UTF-8, and only the reference's inputs are kept small
/// (the reference is slow on purpose; the VM is not).
pub fn line(data: &[u8]) -> (String, bool) {
    (
        String::from_utf8_lossy(data).into_owned(),
        data.len() <= 4096,
    )
}

/// `stream_text_roundtrip`: the first byte picks the mode. Arbitrary text: whatever parses
/// prints to a canonical text that parses to the same filter and prints the same again, and the
/// JSON form of the filter parses to the same filter. Generated: a JSON-form filter, written as
/// text by the generator, parses to the same filter as the JSON form.
pub fn stream_text(data: &[u8]) {
    use filtervm_compiler::dialect::stream;
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let text = String::from_utf8_lossy(rest);
        let Ok(filter) = stream::parse_text(&text) else {
            return;
        };
        let canonical = stream::to_text(&filter);
        let again = stream::parse_text(&canonical)
            .unwrap_or_else(|e| panic!("canonical text {canonical:?} rejected: {e}"));
        assert_eq!(again, filter, "{text:?} → {canonical:?}");
        assert_eq!(stream::to_text(&again), canonical);
        let json = filter.to_json();
        let from_json = stream::parse(&json)
            .unwrap_or_else(|e| panic!("JSON form {json} of {text:?} rejected: {e}"));
        assert_eq!(from_json, filter, "{text:?} → {json}");
    } else {
        let mut source = Bytes::new(rest);
        let json = generate::stream::policy(&mut source);
        let Some(text) = generate::stream::text_of(&json, &mut source) else {
            return;
        };
        let product_form = filtervm_vm::json::parse(json.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{json} is not JSON: {e}"));
        let a = stream::parse(&product_form).unwrap_or_else(|e| panic!("{json} rejected: {e}"));
        let b = stream::parse_text(&text).unwrap_or_else(|e| panic!("{text:?} rejected: {e}"));
        assert_eq!(a, b, "{json} vs {text:?}");
    }
}

/// `program_from_bytes`: the first byte picks the mode. Raw (even): arbitrary bytes as a filter
/// and as a bare program; whatever loads runs on the vectors' messages. Mutated (`% 4 == 1`): a
/// generated policy is compiled, encoded, and then bytes are changed as the rest of the input
/// says; unchanged bytes must load and give the same verdicts, changed ones must load or be
/// rejected, never panic. Structured (`% 4 == 3`): a program chosen by the input directly, large
/// ones included ([`program::structured`]).
pub fn program_bytes(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 4 == 3 {
        program::structured(rest);
        return;
    }
    if mode % 2 == 0 {
        if let Ok(filter) = Filter::from_bytes(rest) {
            let mut evaluator = Evaluator::new();
            for sample in all_samples().iter().take(64) {
                let _ = evaluator.matches(&filter, &sample.message);
                if let Ok(json) = runner::product_message(&sample.json) {
                    let _ = evaluator.matches_json(&filter, &json);
                }
            }
        }
        if let Ok(program) = Program::from_bytes(rest) {
            for sample in all_samples().iter().take(64) {
                let _ = run_program(&program, &sample.message);
            }
        }
        return;
    }
    let mut source = Bytes::new(rest);
    let dialect = Dialect::ALL[usize::from(mode / 4) % Dialect::ALL.len()];
    let case = generate::case(dialect, &mut source);
    let Ok(filter) = runner::compile(case.dialect, &case.policy, &case.options) else {
        return;
    };
    let mut bytes = filter.to_bytes();
    let mut changed = false;
    use filtervm_conformance::generate::Source;
    while !source.is_empty() && !bytes.is_empty() {
        let at = source.below(u32::try_from(bytes.len()).unwrap_or(u32::MAX)) as usize;
        let xor = u8::try_from(source.below(256)).unwrap_or(1);
        if let Some(b) = bytes.get_mut(at) {
            *b ^= xor;
            changed |= xor != 0;
        }
    }
    let samples = samples(dialect, |_| true);
    match Filter::from_bytes(&bytes) {
        Ok(loaded) => {
            let mut evaluator = Evaluator::new();
            for sample in &samples {
                let verdict = evaluator.matches(&loaded, &sample.message);
                if !changed {
                    assert_eq!(verdict, evaluator.matches(&filter, &sample.message));
                }
            }
        }
        Err(e) => assert!(changed, "a filter's own bytes do not load: {e}"),
    }
}

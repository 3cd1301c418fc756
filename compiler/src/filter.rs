//! A compiled filter ([`Filter`]) and the compile functions: a policy read, lowered by its dialect's
//! front end, optimized and generated to a verified program. Below the message reading and the
//! evaluator; above the dialects, the IR, the optimizer and codegen.

use crate::dialect::{self, Dialect, MAX_POLICY_DEPTH};
use crate::error::{CompileError, ErrorCode};
use crate::options::{JsonBody, Options, json_body};
use crate::{codegen, ir, opt};
use filtervm_vm::json;
use filtervm_vm::program::Program;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// A compiled filter: its IR (before and after optimization) and its program.
///
/// A filter loaded from bytes ([`Filter::from_bytes`]) has its IR too, unless it was written in
/// the first wire format, which shipped none.
///
/// A filter is immutable once built. Each compile (and each [`Filter::from_bytes`]) gives it an
/// identity of its own, which its clones share: a [`PolicyCache`](crate::PolicyCache) remembers
/// the identity of the filter it compiled for a policy text, and the set that filter was inserted
/// into finds it again by that identity, without compiling the text or reading the IR again.
#[derive(Clone)]
pub struct Filter {
    /// This filter's identity (see [`Filter::identity`]).
    identity: u64,
    options: Options,
    /// `None` for a filter loaded from the first wire format (which shipped no IR).
    lowered: Option<ir::Node>,
    /// `None` for a filter loaded from the first wire format.
    optimized: Option<ir::Node>,
    program: Program,
    /// What the filter reads from raw JSON bytes (from its dialect and options).
    json_body: Option<JsonBody>,
    /// An `eventbridge` filter's pattern, kept when its program judges an `exists: false` against
    /// array positions (the events its rows cannot judge are judged on it exactly, EB-8;
    /// [`dialect::eventbridge::exact`]).
    pattern: Option<dialect::eventbridge::exact::Pattern>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The identity is left out: two compiles of one policy print the same.
        f.debug_struct("Filter")
            .field("options", &self.options)
            .field("lowered", &self.lowered)
            .field("optimized", &self.optimized)
            .field("program", &self.program)
            .field("json_body", &self.json_body)
            .field("pattern", &self.pattern)
            .finish_non_exhaustive()
    }
}

/// The next filter identity: never 0 (a set's "no identity") and never repeated in a process.
/// A compile that makes no [`Filter`] ([`optimized_ir`], for a set) takes one too.
pub(crate) fn next_identity() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Filter {
    /// The identity this filter shares with its clones and with no other filter built in this
    /// process (never 0). Two filters with one identity are the same compile, so the same
    /// program, IR and options.
    pub(crate) fn identity(&self) -> u64 {
        self.identity
    }

    /// The dialect the filter was written in.
    pub fn dialect(&self) -> Dialect {
        self.options.dialect()
    }

    /// The dialect options the filter was compiled with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// A filter loaded from bytes with its IR (checked to compile to `program`).
    pub(crate) fn with_ir(
        options: Options,
        lowered: ir::Node,
        optimized: ir::Node,
        program: Program,
    ) -> Filter {
        Filter {
            identity: next_identity(),
            json_body: json_body(&options),
            options,
            lowered: Some(lowered),
            optimized: Some(optimized),
            program,
            pattern: None,
        }
    }

    /// A filter loaded from bytes of the first wire format: its program, dialect and options, and
    /// no IR.
    pub(crate) fn loaded(options: Options, program: Program) -> Filter {
        Filter {
            identity: next_identity(),
            json_body: json_body(&options),
            options,
            lowered: None,
            optimized: None,
            program,
            pattern: None,
        }
    }

    /// The filter with `pattern` kept (see [`Filter::pattern`]).
    pub(crate) fn with_pattern(
        mut self,
        pattern: Option<dialect::eventbridge::exact::Pattern>,
    ) -> Filter {
        self.pattern = pattern;
        self
    }

    /// An `eventbridge` filter's pattern, kept when the filter judges an `exists: false` against
    /// array positions (EB-10): an event its rows cannot judge is judged on it exactly
    /// ([`Pattern::matches`](dialect::eventbridge::exact::Pattern::matches)). `None` for other
    /// filters, and for a filter loaded from bytes written before patterns were kept.
    pub fn pattern(&self) -> Option<&dialect::eventbridge::exact::Pattern> {
        self.pattern.as_ref()
    }

    /// The IR as lowered from the policy, before optimization (`None` when loaded from the first wire format).
    pub fn lowered_ir(&self) -> Option<&ir::Node> {
        self.lowered.as_ref()
    }

    /// The optimized IR the program was generated from (`None` when loaded from the first wire format).
    pub fn ir(&self) -> Option<&ir::Node> {
        self.optimized.as_ref()
    }

    /// The bytecode program.
    #[inline]
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Whether the filter reads a JSON body from raw bytes (sns in body scope, eventgrid): then
    /// [`Evaluator::matches_bytes`](crate::Evaluator::matches_bytes) matches a message as published.
    pub fn reads_json_body(&self) -> bool {
        self.json_body.is_some()
    }

    /// What the filter's dialect reads from raw JSON bytes, if anything.
    #[inline]
    pub(crate) fn json_body(&self) -> Option<JsonBody> {
        self.json_body
    }
}

/// Compiles a policy given as a `serde_json` value (for example built with `serde_json::json!`).
///
/// The value is converted to [`json::Value`] first; numbers keep the text `serde_json` gives
/// them, so a policy whose numbers must stay exact (`1e400`, `9007199254740993.5`) is better
/// given as text ([`compile_text`]). `options` must be `dialect`'s (else
/// [`ErrorCode::InvalidOptions`]); `Options::from(dialect)` gives the defaults.
pub fn compile(
    dialect: Dialect,
    policy: &serde_json::Value,
    options: &Options,
) -> Result<Filter, CompileError> {
    check_options(dialect, options)?;
    let too_deep = || {
        CompileError::one(
            dialect.invalid_code(),
            "",
            format!("the policy nests arrays and objects deeper than {MAX_POLICY_DEPTH} levels"),
        )
    };
    let mut cut = false;
    let policy = policy_from_serde(policy, MAX_POLICY_DEPTH, &mut cut);
    // expr rejects nesting by its own rule (E2, `max_depth` at most 62 expressions, 126 JSON
    // levels): its front end sees the tree down to the cut and says EXPR_TOO_DEEP.
    if cut && dialect != Dialect::Expr {
        return Err(too_deep());
    }
    match compile_value(dialect, &policy, options) {
        Ok(_) if cut => Err(too_deep()),
        compiled => compiled,
    }
}

/// Compiles a policy read by [`filtervm_vm::json`] (numbers in their exact text).
pub fn compile_value(
    dialect: Dialect,
    policy: &json::Value,
    options: &Options,
) -> Result<Filter, CompileError> {
    check_options(dialect, options)?;
    let lowered = dialect::lower(dialect, policy, options)?;
    let optimized = opt::optimize_copy(&lowered);
    let program = generate(&optimized)?;
    let pattern = (dialect == Dialect::EventBridge
        && dialect::eventbridge::judges_positions(&program))
    .then(|| dialect::eventbridge::exact::Pattern::of(policy));
    Ok(Filter {
        identity: next_identity(),
        json_body: json_body(options),
        options: options.clone(),
        lowered: Some(lowered),
        optimized: Some(optimized),
        program,
        pattern,
    })
}

/// The optimized IR [`compile_value`] gives a filter, without generating its program: what a
/// [`SubscriptionSet`](crate::SubscriptionSet) reads of a filter, as it builds its own code
/// from the IR. The same errors as [`compile_value`], except the one that reports a bug
/// ([`ErrorCode::InternalCodegen`]), which only generating a program can give. An
/// `eventbridge` filter's kept pattern depends on its program: compile those with
/// [`compile_value`].
pub(crate) fn optimized_ir(
    dialect: Dialect,
    policy: &json::Value,
    options: &Options,
) -> Result<ir::Node, CompileError> {
    check_options(dialect, options)?;
    let lowered = dialect::lower(dialect, policy, options)?;
    Ok(opt::optimize(lowered))
}

/// Compiles policy text: checks the size limit (256 KiB), reads the JSON (numbers keep their
/// exact text; lone surrogate escapes are errors naming their line, column and JSON Pointer),
/// then compiles it. For `stream`, text that is not JSON is the text form
/// (`region = eu-* and n > 5`).
pub fn compile_text(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<Filter, CompileError> {
    let policy = read_policy_text(dialect, text, options)?;
    compile_value(dialect, &policy, options)
}

/// Reads policy text as [`compile_text`] reads it, without compiling it: the size limit, the JSON
/// (numbers in their exact text), and for `stream` the text form as a JSON string. The value is
/// the policy explain and lint show ([`explain::explain_parts`](crate::explain::explain_parts), [`lint::lint_filter`](crate::lint::lint_filter)), and
/// [`compile_value`] of it is [`compile_text`] of the text.
pub fn read_policy_text(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<json::Value, CompileError> {
    check_options(dialect, options)?;
    dialect::parse_policy_text(dialect, text, options)
}

/// Rejects options of another dialect, and options out of range.
fn check_options(dialect: Dialect, options: &Options) -> Result<(), CompileError> {
    if options.dialect() != dialect {
        return Err(CompileError::one(
            ErrorCode::InvalidOptions,
            "",
            format!(
                "these are {} options ({options}), but the policy is {dialect}: give {dialect} \
                 options (`Options::from(Dialect)` for its defaults)",
                options.dialect()
            ),
        ));
    }
    options.check()
}

/// Generates and verifies the program of an optimized IR tree; a program the verifier rejects
/// is a bug ([`ErrorCode::InternalCodegen`]).
fn generate(optimized: &ir::Node) -> Result<Program, CompileError> {
    codegen::generate(optimized).map_err(|e| {
        CompileError::one(
            ErrorCode::InternalCodegen,
            "",
            format!("codegen produced an invalid program: {e}"),
        )
    })
}

/// `value` as a policy value, with arrays and objects more than `levels` deep cut off (as
/// `null`, and `cut` set): the recursion is bounded whatever the depth of `value`.
fn policy_from_serde(value: &serde_json::Value, levels: usize, cut: &mut bool) -> json::Value {
    match value {
        serde_json::Value::Array(_) | serde_json::Value::Object(_) if levels == 0 => {
            *cut = true;
            json::Value::Null
        }
        serde_json::Value::Array(items) => json::Value::Array(
            items
                .iter()
                .map(|item| policy_from_serde(item, levels - 1, cut))
                .collect(),
        ),
        serde_json::Value::Object(members) => json::Value::Object(
            members
                .iter()
                .map(|(name, member)| (name.clone(), policy_from_serde(member, levels - 1, cut)))
                .collect(),
        ),
        scalar => json::Value::from(scalar),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ir::{Node, NumSource, Pred};
    use filtervm_vm::key::Key;
    use filtervm_vm::program::Interval;

    /// Generating a program with a NaN interval bound (no policy lowers to one): the code of
    /// the error.
    pub(crate) fn verifier_rejects_a_nan_bound() -> ErrorCode {
        let nan = Interval {
            lo: f64::NAN,
            ..Interval::ALL
        };
        let node = Node::test(
            Key::Header("a".into()),
            Pred::Num {
                source: NumSource::Text,
                ranges: vec![nan],
            },
            "",
        );
        let e = generate(&node).unwrap_err();
        assert!(e.to_string().contains("NaN"), "{e}");
        e.code().unwrap()
    }

    /// The shared strings of `node`'s tests: key names and string constants.
    fn shared_strings(node: &Node, out: &mut Vec<std::sync::Arc<str>>) {
        match &node.kind {
            crate::ir::NodeKind::And(c) | crate::ir::NodeKind::Or(c) => {
                c.iter().for_each(|c| shared_strings(c, out))
            }
            crate::ir::NodeKind::Not(c) => shared_strings(c, out),
            crate::ir::NodeKind::Test(t) => {
                if let Key::AttributeTyped(n) | Key::BodyPath(n) | Key::BodyPathEach(n) = &t.key {
                    out.push(n.clone());
                }
                if let Pred::Str { values, .. } = &t.pred {
                    out.extend(values.iter().cloned());
                }
            }
            _ => {}
        }
    }

    /// The optimized IR and the program hold the lowered IR's key names and string constants
    /// themselves (a reference count each), not copies of them (BENCHMARKS.md, "Shared keys and
    /// constants on the compile path").
    #[test]
    fn the_optimized_ir_and_the_program_share_the_lowered_strings() {
        let text = r#"{"region": ["eu-west", {"prefix": "us-"}], "kind": ["a", "b"], "n": [{"suffix": "x"}]}"#;
        for options in [
            Options::from(Dialect::Sns),
            Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap(),
        ] {
            let f = compile_text(Dialect::Sns, text, &options).unwrap();
            let (mut lowered, mut optimized) = (Vec::new(), Vec::new());
            shared_strings(f.lowered_ir().unwrap(), &mut lowered);
            shared_strings(f.ir().unwrap(), &mut optimized);
            let shared =
                |s: &std::sync::Arc<str>| lowered.iter().any(|l| std::sync::Arc::ptr_eq(l, s));
            // Four tests (`region` in two) and five strings, each found in the optimized tree.
            assert_eq!(optimized.len(), 9, "{optimized:?}");
            for s in &optimized {
                assert!(shared(s), "{s:?} is a copy");
            }
            let program = f.program();
            let mut held: Vec<std::sync::Arc<str>> = program.pools().strings.clone();
            held.extend(program.pools().lists.iter().flatten().cloned());
            held.extend(program.pools().sets.iter().flatten().cloned());
            for key in program.keys().keys() {
                if let Key::AttributeTyped(n) | Key::BodyPath(n) | Key::BodyPathEach(n) = key {
                    held.push(n.clone());
                }
            }
            // Three keys and five strings.
            assert_eq!(held.len(), 8, "{held:?}");
            for s in &held {
                assert!(shared(s), "the program copies {s:?}");
            }
        }
    }

    #[test]
    fn a_program_the_verifier_rejects_is_an_internal_error() {
        assert_eq!(verifier_rejects_a_nan_bound(), ErrorCode::InternalCodegen);
    }

    #[test]
    fn options_of_another_dialect_are_rejected() {
        let e = compile_text(Dialect::Basaltic, "{}", &Options::from(Dialect::Sns)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidOptions));
        assert!(e.to_string().contains("these are sns options"), "{e}");
    }

    #[test]
    fn serde_values_deeper_than_the_text_limit_are_rejected_without_recursing() {
        let deep = |levels: usize, leaf: serde_json::Value| {
            let mut v = leaf;
            for _ in 0..levels {
                v = serde_json::Value::Array(vec![v]);
            }
            v
        };
        let sns = Options::from(Dialect::Sns);
        let value = deep(200_000, serde_json::json!({"a": ["x"]}));
        let e = compile(Dialect::Sns, &value, &sns).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::SnsSyntaxError));
        assert!(e.to_string().contains("deeper than 128 levels"), "{e}");
        // serde_json drops a value this deep recursively; leak it rather than overflow the stack.
        std::mem::forget(value);
        // 128 levels are read (and this one is not an object policy).
        let e = compile(Dialect::Sns, &deep(127, serde_json::json!([])), &sns).unwrap_err();
        assert!(!e.to_string().contains("deeper than"), "{e}");
        let ok = serde_json::json!({"a": [{"numeric": [">", 1]}]});
        assert!(compile(Dialect::Sns, &ok, &sns).is_ok());
        // expr says its own depth error (E2) for a deep expression chain.
        // Built by moving: `json!` would serialize the inner value again on every level.
        let mut chain = serde_json::json!({"key": "a", "op": "exists"});
        for _ in 0..10_000 {
            let mut node = serde_json::Map::new();
            node.insert("op".into(), "NOT".into());
            node.insert("exp".into(), serde_json::Value::Array(vec![chain]));
            chain = serde_json::Value::Object(node);
        }
        let e = compile(Dialect::Expr, &chain, &Options::from(Dialect::Expr)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::ExprTooDeep));
        assert_eq!(e.errors[0].pointer, "/exp/0".repeat(32));
        std::mem::forget(chain);
    }
}

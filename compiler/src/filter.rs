//! A compiled filter ([`Filter`]) and the compile functions: a policy read, lowered by its dialect's
//! front end, optimized and generated to a verified program. Below the message reading and the
//! evaluator; above the dialects, the IR, the optimizer and codegen.

use crate::dialect::{self, Dialect, MAX_POLICY_DEPTH};
use crate::error::{CompileError, ErrorCode};
use crate::options::{JsonBody, Options, json_body};
use crate::{codegen, ir, opt};
use filtervm_vm::json;
use filtervm_vm::program::Program;
use filtervm_vm::verified::VerifyError;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// A compiled filter: its IR (before and after optimization) and its program.
///
/// A filter loaded from bytes ([`Filter::from_bytes`]) has its IR too, unless it was written in
/// the first wire format, which shipped none.
///
/// A filter compiled from text ([`compile_text`]) keeps the text rather than the IR as lowered,
/// which a broker matching messages never reads: [`Filter::lowered_ir`] lowers the text again
/// when first asked (and keeps that tree), so a compile optimizes the lowered tree in place
/// instead of copying it, and drops one tree less.
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
    /// The IR as lowered from the policy, or what it takes to lower it again.
    lowered: Lowered,
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
            .field("lowered", &self.lowered_ir())
            .field("optimized", &self.optimized)
            .field("program", &self.program)
            .field("json_body", &self.json_body)
            .field("pattern", &self.pattern)
            .finish_non_exhaustive()
    }
}

/// A filter's IR as lowered from its policy ([`Filter::lowered_ir`]).
#[derive(Clone)]
struct Lowered {
    /// The tree: set when the filter is made ([`compile_value`], a filter loaded from bytes with
    /// its IR), or when first asked for (a filter with `text`). Unset and never set for a filter
    /// loaded from the first wire format (no `text` either).
    tree: OnceLock<ir::Node>,
    /// The policy text of a [`compile_text`] filter, read and lowered again (with the filter's
    /// dialect and options) the first time the tree is asked for: the same steps as the
    /// compile, which succeeded, so the same tree.
    text: Option<Arc<str>>,
}

impl Lowered {
    /// A tree kept as it is.
    fn tree(tree: ir::Node) -> Lowered {
        Lowered {
            tree: OnceLock::from(tree),
            text: None,
        }
    }

    /// No tree (the first wire format).
    fn none() -> Lowered {
        Lowered {
            tree: OnceLock::new(),
            text: None,
        }
    }

    /// The tree `text` lowers to, made when first asked for.
    fn text(text: &str) -> Lowered {
        Lowered {
            tree: OnceLock::new(),
            text: Some(Arc::from(text)),
        }
    }

    /// The tree, lowered from the text first if it has not been yet.
    fn get(&self, options: &Options) -> Option<&ir::Node> {
        if let Some(tree) = self.tree.get() {
            return Some(tree);
        }
        let text = self.text.as_deref()?;
        let dialect = options.dialect();
        // The text compiled once with these options, so neither step fails; a tree two threads
        // both lower is the same tree, and the first kept is the one every caller sees.
        let tree = dialect::lower_text(dialect, text, options).ok()?;
        Some(self.tree.get_or_init(|| tree))
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
            lowered: Lowered::tree(lowered),
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
            lowered: Lowered::none(),
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
    ///
    /// A filter compiled from text lowers its text again the first time this is asked (the
    /// same tree the compile lowered), and keeps the tree for the next times.
    pub fn lowered_ir(&self) -> Option<&ir::Node> {
        self.lowered.get(&self.options)
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
    compile_policy(dialect, policy, options, None)
}

/// [`compile_value`] of `policy`, whose options are checked already. Given `text`, the policy
/// read from it, the filter keeps the text for its lowered IR (made again when asked for) and
/// the lowered tree is optimized in place; else the filter keeps the lowered tree, and the
/// optimizer works on a copy.
fn compile_policy(
    dialect: Dialect,
    policy: &json::Value,
    options: &Options,
    text: Option<&str>,
) -> Result<Filter, CompileError> {
    let lowered = dialect::lower(dialect, policy, options)?;
    compile_lowered(dialect, lowered, Some(policy), options, text)
}

/// [`compile_policy`] from the lowered tree: `policy` is needed only for an `eventbridge`
/// filter's kept pattern.
fn compile_lowered(
    dialect: Dialect,
    lowered: ir::Node,
    policy: Option<&json::Value>,
    options: &Options,
    text: Option<&str>,
) -> Result<Filter, CompileError> {
    let (lowered, optimized) = match text {
        Some(text) => (Lowered::text(text), opt::optimize(lowered)),
        None => {
            let optimized = opt::optimize_copy(&lowered);
            (Lowered::tree(lowered), optimized)
        }
    };
    // Matched rather than `?`-ed through a mapped result: each layer's result would be a copy
    // of the program (about a kilobyte) on the way into the filter.
    let program = match codegen::generate(&optimized) {
        Ok(program) => program,
        Err(e) => return Err(codegen_error(&e)),
    };
    let pattern = policy
        .filter(|_| {
            dialect == Dialect::EventBridge && dialect::eventbridge::judges_positions(&program)
        })
        .map(dialect::eventbridge::exact::Pattern::of);
    Ok(Filter {
        identity: next_identity(),
        json_body: json_body(options),
        options: options.clone(),
        lowered,
        optimized: Some(optimized),
        program,
        pattern,
    })
}

/// The optimized IR [`compile_text`] gives a filter of policy text, without generating its
/// program: what a [`SubscriptionSet`](crate::SubscriptionSet) reads of a filter, as it builds
/// its own code from the IR. The text is read as [`compile_text`] reads it (a policy of any
/// dialect but `eventbridge` into a borrowed tree). The same errors as [`compile_text`], except
/// the one that reports a bug ([`ErrorCode::InternalCodegen`]), which only generating a program
/// can give. An `eventbridge` filter's kept pattern depends on its program: compile those with
/// [`compile_text`].
pub(crate) fn optimized_ir(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<ir::Node, CompileError> {
    check_options(dialect, options)?;
    let lowered = lower_text_to_optimize(dialect, text, options)?;
    Ok(opt::optimize(lowered))
}

/// [`dialect::lower_text`] for a tree given straight to [`opt::optimize`]: the same optimized
/// tree, lowered with less to make where a front end knows a shortcut
/// ([`dialect::sns::lower_text_to_optimize`], [`dialect::basaltic::lower_text_to_optimize`]). A
/// filter shows [`dialect::lower_text`]'s tree as its lowered IR.
fn lower_text_to_optimize(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<ir::Node, CompileError> {
    match dialect {
        Dialect::Sns => dialect::sns::lower_text_to_optimize(text, options.sns()),
        Dialect::Basaltic => dialect::basaltic::lower_text_to_optimize(text, options),
        _ => dialect::lower_text(dialect, text, options),
    }
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
    if dialect == Dialect::EventBridge {
        // Its filter keeps a pattern read from the owned value.
        let policy = read_policy_text(dialect, text, options)?;
        return compile_policy(dialect, &policy, options, Some(text));
    }
    // Every front end but `eventbridge`'s reads the text into a borrowed tree: the same IR and
    // errors as lowering `read_policy_text`'s value.
    check_options(dialect, options)?;
    let lowered = lower_text_to_optimize(dialect, text, options)?;
    compile_lowered(dialect, lowered, None, options, Some(text))
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

/// The error of a program the verifier rejected: generated from an optimized IR tree, that is
/// a bug ([`ErrorCode::InternalCodegen`]).
fn codegen_error(e: &VerifyError) -> CompileError {
    CompileError::one(
        ErrorCode::InternalCodegen,
        "",
        format!("codegen produced an invalid program: {e}"),
    )
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
        let e = codegen_error(&codegen::generate(&node).unwrap_err());
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

    /// The strings the program holds (key names and string constants).
    fn program_strings(program: &Program) -> Vec<std::sync::Arc<str>> {
        let mut held: Vec<std::sync::Arc<str>> = program.pools().strings.clone();
        held.extend(program.pools().lists.iter().flatten().cloned());
        held.extend(program.pools().sets.iter().flatten().cloned());
        for key in program.keys().keys() {
            if let Key::AttributeTyped(n) | Key::BodyPath(n) | Key::BodyPathEach(n) = key {
                held.push(n.clone());
            }
        }
        held
    }

    /// What a filter holds shares the key names and string constants lowering made (a
    /// reference count each), rather than copies of them (BENCHMARKS.md, "Shared keys and
    /// constants on the compile path"): the program holds the optimized IR's strings, and a
    /// filter that keeps its lowered tree ([`compile_value`]) holds them in that tree too. (A
    /// [`compile_text`] filter keeps the text instead, and a lowered tree made from it when
    /// asked for has strings of its own.)
    #[test]
    fn the_optimized_ir_and_the_program_share_the_lowered_strings() {
        let text = r#"{"region": ["eu-west", {"prefix": "us-"}], "kind": ["a", "b"], "n": [{"suffix": "x"}]}"#;
        for options in [
            Options::from(Dialect::Sns),
            Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap(),
        ] {
            let policy = read_policy_text(Dialect::Sns, text, &options).unwrap();
            let from_text = compile_text(Dialect::Sns, text, &options).unwrap();
            let from_value = compile_value(Dialect::Sns, &policy, &options).unwrap();
            for f in [&from_text, &from_value] {
                let mut optimized = Vec::new();
                shared_strings(f.ir().unwrap(), &mut optimized);
                // Four tests (`region` in two) and five strings.
                assert_eq!(optimized.len(), 9, "{optimized:?}");
                let in_optimized = |s: &std::sync::Arc<str>| {
                    optimized.iter().any(|o| std::sync::Arc::ptr_eq(o, s))
                };
                let held = program_strings(f.program());
                // Three keys and five strings.
                assert_eq!(held.len(), 8, "{held:?}");
                for s in &held {
                    assert!(in_optimized(s), "the program copies {s:?}");
                }
            }
            let mut lowered = Vec::new();
            shared_strings(from_value.lowered_ir().unwrap(), &mut lowered);
            let mut optimized = Vec::new();
            shared_strings(from_value.ir().unwrap(), &mut optimized);
            for s in &optimized {
                assert!(
                    lowered.iter().any(|l| std::sync::Arc::ptr_eq(l, s)),
                    "{s:?} is a copy"
                );
            }
        }
    }

    /// A filter compiled from text gives the lowered IR a filter compiled from the policy read
    /// from it keeps, the same tree each time it is asked (and to its clones, made before or after
    /// the first time), prints it as that filter does (asked or not), and writes the same bytes.
    #[test]
    fn a_text_filter_lowers_its_text_again_when_asked_and_keeps_the_tree() {
        let cases = [
            (
                Dialect::Sns,
                r#"{"region": ["eu-west", {"prefix": "us-"}], "n": [{"numeric": [">", 9007199254740993.5]}], "k": [{"exists": false}]}"#,
            ),
            (
                Dialect::Basaltic,
                r#"{"event": ["order.paid"], "amount": [{"numeric": [">", 5]}]}"#,
            ),
            (Dialect::Stream, "region = eu-* and n > 5"),
            (
                Dialect::EventBridge,
                r#"{"detail": {"state": [{"anything-but": ["x"]}], "n": [{"exists": false}]}}"#,
            ),
            (
                Dialect::Expr,
                r#"{"op": "NOT", "exp": [{"key": "a", "op": "exists"}]}"#,
            ),
        ];
        for (dialect, text) in cases {
            let options = Options::from(dialect);
            let policy = read_policy_text(dialect, text, &options).unwrap();
            let from_value = compile_value(dialect, &policy, &options).unwrap();
            let from_text = compile_text(dialect, text, &options).unwrap();
            let early_clone = from_text.clone();
            let want = from_value.lowered_ir().unwrap().to_string();
            let first = from_text.lowered_ir().unwrap();
            assert_eq!(first.to_string(), want, "{dialect}: {text}");
            // Kept: the second ask gives the very tree of the first.
            assert!(std::ptr::eq(first, from_text.lowered_ir().unwrap()));
            let late_clone = from_text.clone();
            for clone in [&early_clone, &late_clone] {
                assert_eq!(clone.lowered_ir().unwrap().to_string(), want);
                assert_eq!(clone.identity(), from_text.identity());
            }
            assert_eq!(
                from_text.ir().map(ToString::to_string),
                from_value.ir().map(ToString::to_string)
            );
            // Debug prints the lowered tree as a filter that kept it does (the key tables'
            // stamps differ from compile to compile, so not the whole text).
            let lowered = format!(
                "lowered: Some({:?}), optimized",
                from_value.lowered_ir().unwrap()
            );
            assert!(format!("{from_value:?}").contains(&lowered));
            let fresh = compile_text(dialect, text, &options).unwrap();
            for f in [&from_text, &early_clone, &fresh] {
                assert!(format!("{f:?}").contains(&lowered), "{f:?}");
            }
            assert_eq!(from_text.to_bytes(), from_value.to_bytes());
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

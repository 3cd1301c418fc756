//! Explain: why a message did or did not match a filter (README.md, "Explain").
//!
//! [`explain`] answers "why did this subscriber (not) get my message?" for every dialect: the
//! verdict, and for every condition of the policy — attribute or key test, alternative, group,
//! clause, sub-expression — whether it held, the value(s) it saw and the JSON Pointer (for the
//! stream text form, the pointer into the equivalent JSON form and the clause's text) of that part
//! of the policy; the conditions that decided the verdict; and hints for the classic mistakes.
//!
//! # Derived from the compiled program, not a second evaluator
//!
//! - The verdict is the filter's own program run on the message ([`Program::eval`]), exactly what
//!   [`crate::Evaluator::matches`] returns.
//! - The structure is the IR as lowered from the policy ([`Filter::lowered_ir`]): every node
//!   carries the pointer of the policy part it came from, including the and/or/not structure.
//! - Each test's truth comes from the same backend and executor: the test is compiled alone by
//!   [`codegen::generate`] (one instruction), its slot renumbered into the filter's key table, and
//!   run with [`Program::eval`] on the message bound to that table. (The filter's own program has
//!   merged the alternatives of a key into one instruction — `str_in` over `/event` — so a
//!   per-alternative answer needs an instruction per alternative.) An `and`, `or` or `not`
//!   combines its parts exactly as the program's instructions do.
//! - The instruction trace ([`Explanation::instructions`]) runs every test instruction of the
//!   filter's own program alone (`[inst → r0, ret r0]`, same keys, the constants it reads).
//! - The values seen are the bound slots' leaves ([`Slot::leaves`](filtervm_vm::bind::Slot::leaves)).
//!
//! A test in `tests/explain.rs` checks, on every conformance vector, that the verdict equals
//! `matches` and that the root condition's truth equals the verdict.
//!
//! # Rows (sns bodies, rule 18)
//!
//! An sns body whose policy reads several fields under an array of objects binds to one row per
//! element; the program matches when some row does. With several rows, every condition (and, or,
//! not included) is compiled alone by codegen and run over all rows, together with its negation, so
//! [`Held`] tells whether it held in every, some or none of the rows that matter: the matching rows
//! when the message matched (the condition conjoined with the policy), else all rows. An `and` that
//! held in no row while each of its parts held in some row is the rule-18 case: no single element
//! satisfied all of them.
//!
//! # Cost
//!
//! One instruction per test, a boolean per `and`/`or`/`not`. A one-instruction program carries a
//! key table as long as the slot it reads, so for a table of more than 64 independently resolved
//! keys (attributes, headers, event members; never an sns body) the message is bound again in
//! batches of 64 keys, keeping a test's cost independent of the policy's size.
//!
//! # JSON shape (`filtervm explain --json`)
//!
//! ```text
//! {"dialect": "basaltic", "matched": false, "verdict": "no-match", "rows": 1,
//!  "decided_by": [CONDITION, ...],        // the conditions that decided the verdict
//!  "hints": [{"code": "VALUE_CASE", "pointer": "/event/0", "message": "..."}],
//!  "conditions": CONDITION,               // the policy's structure, root first
//!  "instructions": [{"at": 2, "inst": "str_in r0, slot1(...) ...", "origin": "/event", "held": true}]}
//! CONDITION = {"kind": "and" | "or" | "not" | "test" | "true" | "false",
//!              "pointer": "/amount/0", "held": true | false | "some-rows",
//!              "policy": "{\"numeric\":[\">=\",100,\"<\",1000]}",   // when the policy is known
//!              "test": "attr-text \"amount\" text-num [100, 1000)",   // tests only: key and predicate
//!              "seen": {"shapes": ["scalar"], "values": ["1000"], "more": 0},  // tests only
//!              "instructions": [6],   // the program's test instructions from this pointer
//!              "children": [CONDITION, ...]}
//! ```
//! `seen.values` are JSON values (strings, numbers as written, booleans, null); `shapes` are
//! `absent`, `null`, `scalar`, `array` or `object`, one per distinct shape over the rows.

use crate::Filter;
use crate::codegen;
use crate::dialect::{Dialect, stream};
use crate::error::MessageError;
use crate::ir::{Case, Node, NodeKind, NumSource, Pred, StrOp, Test};
use crate::parts::{MessageParts, SelectedPart};
use filtervm_vm::bind::{Bindings, Bound, BoundLeaf, Judgement, KeyTable};
use filtervm_vm::exec;
use filtervm_vm::fold::fold;
use filtervm_vm::json::Quoted;
use filtervm_vm::json::{Map, Number, Value};
use filtervm_vm::key::Key;
use filtervm_vm::message::{Attributes, Headers, Message, Text};
use filtervm_vm::number::{Decimal, parse_json_number};
use filtervm_vm::op::{
    BlockRef, CaseRef, CidrRef, DecRangesRef, Inst, ListRef, PatRef, RangesRef, Reg, SetRef,
    SlotRef, StrRef, Target, TestsRef, WildRef,
};
use filtervm_vm::pattern::SegmentPattern;
use filtervm_vm::program::{Pools, Program, ProgramParts};
use filtervm_vm::value::{Leaf, LeafTypes, Shape, Shapes};
use filtervm_vm::wildcard::Wildcard;
use std::collections::HashSet;
use std::fmt::{self, Write as _};

/// Hint: the message's JSON bytes are not JSON (an sns body: it matches only policies that read
/// nothing from the body, rule 14).
pub const HINT_NOT_JSON: &str = "NOT_JSON";
/// Hint: a key is absent, but the message carries a name that differs only in case.
pub const HINT_KEY_CASE: &str = "KEY_CASE";
/// Hint: a string condition would hold if case were ignored.
pub const HINT_VALUE_CASE: &str = "VALUE_CASE";
/// Hint: sns attribute scope, the attribute is absent, the body has a field of that name (or the
/// other way round).
pub const HINT_SCOPE: &str = "SCOPE_MISMATCH";
/// Hint: sns body scope and the body is not a JSON object (rule 14).
pub const HINT_BODY_NOT_OBJECT: &str = "BODY_NOT_OBJECT";
/// Hint: sns `exists: false` on a message with no attributes (rule 12).
pub const HINT_NO_ATTRIBUTES: &str = "EXISTS_FALSE_NO_ATTRIBUTES";
/// Hint: a Number versus String type mismatch (a numeric condition on a string, a quoted number).
pub const HINT_TYPE: &str = "TYPE_MISMATCH";
/// Hint: a numeric condition on text that does not parse as a JSON number (basaltic B-10, stream S9).
pub const HINT_NOT_A_NUMBER: &str = "NOT_A_NUMBER";
/// Hint: a stream pattern that would have matched under the old dot-crossing `*` (seed 004).
pub const HINT_OLD_STAR: &str = "OLD_STAR";
/// Hint: an sns body too large to judge element by element was bound as not an object.
pub const HINT_BODY_OVERFLOW: &str = "BODY_OVERFLOW";
/// Hint: an Event Grid key is missing or null, which fails most operators (EG-22).
pub const HINT_MISSING_KEY: &str = "MISSING_KEY";
/// Hint: a number lies exactly on an exclusive bound of a numeric condition.
pub const HINT_EXCLUSIVE_BOUND: &str = "EXCLUSIVE_BOUND";
/// Hint: eventbridge `exists: false` judged over every element of an array above it, since no
/// field sorting before it fixed an element there (EB-10).
pub const HINT_ABSENT_ELSEWHERE: &str = "ABSENT_ELSEWHERE";
/// Hint: an eventbridge number that is not comparable (more digits than its binary64 holds,
/// EB-17): it satisfies no numeric condition and equals only its own spelling.
pub const HINT_NOT_COMPARABLE: &str = "NOT_COMPARABLE";

/// Whether a condition held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// It held (in every row that matters).
    True,
    /// It did not hold (in any row that matters).
    False,
    /// With several binding rows (sns rule 18): it held in some of the rows that matter, not all.
    SomeRows,
}

impl Held {
    fn of(value: bool) -> Held {
        if value { Held::True } else { Held::False }
    }

    /// The mark used in the text rendering: `✓`, `✗` or `~`.
    pub fn mark(self) -> &'static str {
        match self {
            Held::True => "✓",
            Held::False => "✗",
            Held::SomeRows => "~",
        }
    }

    fn to_json(self) -> Value {
        match self {
            Held::True => Value::Bool(true),
            Held::False => Value::Bool(false),
            Held::SomeRows => Value::String("some-rows".into()),
        }
    }
}

/// The kind of a condition (an IR node kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// All parts must hold.
    And,
    /// Some part must hold.
    Or,
    /// The part must not hold.
    Not,
    /// A test of one key.
    Test,
    /// Always holds.
    True,
    /// Never holds.
    False,
}

impl Kind {
    /// The name used in both renderings.
    pub fn name(self) -> &'static str {
        match self {
            Kind::And => "and",
            Kind::Or => "or",
            Kind::Not => "not",
            Kind::Test => "test",
            Kind::True => "true",
            Kind::False => "false",
        }
    }
}

/// What a test's key held in the message.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// The distinct shapes over the rows (one shape with a single row).
    pub shapes: Vec<Shape>,
    /// The distinct leaf values over the rows (at most [`MAX_SEEN`]).
    pub values: Vec<Leaf>,
    /// How many further values were left out (past [`MAX_SEEN`], not deduplicated).
    pub more: usize,
}

/// Most distinct values listed per test.
pub const MAX_SEEN: usize = 32;

impl Seen {
    /// Whether the key was absent in every row.
    pub fn absent(&self) -> bool {
        self.shapes.iter().all(|s| *s == Shape::Absent)
    }

    fn string_leaves(&self) -> impl Iterator<Item = &str> {
        self.values.iter().filter_map(|l| match l {
            Leaf::Str(s) => Some(&**s),
            _ => None,
        })
    }
}

/// One condition of the policy: an IR node, its truth and what it saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The node kind.
    pub kind: Kind,
    /// The JSON Pointer of the policy part (`""` = the whole policy; for the stream text form the
    /// pointer into the equivalent JSON form).
    pub pointer: String,
    /// Whether it held.
    pub held: Held,
    /// For tests: the key read and the predicate.
    pub test: Option<Test>,
    /// For tests: what the key held.
    pub seen: Option<Seen>,
    /// The policy text at `pointer` (compact JSON, or the stream clause's text form), when the
    /// policy was given to [`explain`].
    pub policy: Option<String>,
    /// The indices of the filter program's test instructions that came from this part of the
    /// policy (their origin is `pointer`; listed on the outermost condition with that pointer). A
    /// merged instruction — one `str_in` for all of `/event` — sits on the group it stands for.
    pub instructions: Vec<usize>,
    /// The parts.
    pub children: Vec<Condition>,
}

/// A hint about a classic mistake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// A stable code (`HINT_*`).
    pub code: &'static str,
    /// The pointer of the condition it is about.
    pub pointer: String,
    /// What is probably wrong and what to do.
    pub message: String,
}

/// One test instruction of the filter's own program, run alone on the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The instruction index.
    pub at: usize,
    /// The disassembly of the instruction.
    pub text: String,
    /// The pointer it came from.
    pub origin: Option<String>,
    /// Whether it held (over all rows).
    pub held: Held,
}

/// Why a message did or did not match.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The filter's dialect.
    pub dialect: Dialect,
    /// The verdict: the filter's program on the message.
    pub matched: bool,
    /// The number of binding rows (more than one only for sns bodies, rule 18).
    pub rows: usize,
    /// The policy's structure with each part's truth (the lowered IR).
    pub root: Condition,
    /// The conditions that decided the verdict: for a non-match the innermost failing conditions
    /// that made the policy fail (every one of them would have to change); for a match the
    /// innermost conditions that held on the way.
    pub decided_by: Vec<Condition>,
    /// Hints for the classic mistakes (for a non-match).
    pub hints: Vec<Hint>,
    /// The filter's own test instructions, each run alone.
    pub instructions: Vec<Step>,
}

/// Why a message could not be explained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExplainError {
    /// The filter was loaded from bytes of the first wire format, which shipped no IR.
    #[error(
        "the filter carries no IR (it was loaded from bytes of the first wire format): compile the policy, or write it again with this version, to explain it"
    )]
    NoIr,
    /// The message is not in the dialect's shape.
    #[error(transparent)]
    Message(#[from] MessageError),
    /// A condition could not be compiled on its own (a bug).
    #[error("internal: {0}")]
    Internal(String),
}

impl ExplainError {
    /// The stable code: [`ErrorCode::FilterWithoutIr`](crate::ErrorCode::FilterWithoutIr), the message error's code, or
    /// [`ErrorCode::InternalCodegen`](crate::ErrorCode::InternalCodegen).
    pub fn code(&self) -> crate::ErrorCode {
        match self {
            ExplainError::NoIr => crate::ErrorCode::FilterWithoutIr,
            ExplainError::Message(e) => e.code,
            ExplainError::Internal(_) => crate::ErrorCode::InternalCodegen,
        }
    }
}

/// What [`explain`] may read besides the filter and the message.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// The policy as compiled (JSON; for `stream` the text form as a JSON string): each
    /// condition then shows its part of the policy.
    pub policy: Option<&'a Value>,
    /// The message as JSON in the dialect's shape: some hints look at parts of it the filter does
    /// not read (the body of an sns attribute-scope message).
    pub message: Option<&'a serde_json::Value>,
}

/// Reads `message` as [`crate::read_message`] reads a JSON document and explains it, exactly as
/// [`crate::Evaluator::matches_json`] matches it; `policy` is the policy as compiled, if known.
pub fn explain_json(
    filter: &Filter,
    policy: Option<&Value>,
    message: &serde_json::Value,
) -> Result<Explanation, ExplainError> {
    let json = serde_json::to_vec(message)
        .map_err(|e| ExplainError::Message(MessageError::new("", e.to_string())))?;
    explain_document(filter, policy, &json)
}

/// Reads one JSON document as received, as [`crate::Evaluator::matches_document`] reads it, and
/// explains it; `policy` is the policy as compiled, if known.
pub fn explain_document(
    filter: &Filter,
    policy: Option<&Value>,
    json: &[u8],
) -> Result<Explanation, ExplainError> {
    let message = crate::shape::read_for(
        json,
        filter.options(),
        filtervm_vm::json::ReadMode::Validating,
    )?;
    explain_parts(filter, policy, &message.parts())
}

/// Explains a message given by its parts, read as [`crate::Evaluator::matches_parts`] reads
/// them: the filter's part (a missing one is the same [`ErrorCode::MessageShape`] error, a
/// document read as the body that is not JSON the same [`ErrorCode::MessageNotJson`] error), and
/// the other parts for the hints that look at them (an sns attribute the body has). This is how
/// `filtervm explain` explains each message it reads with [`crate::read_messages`].
///
/// [`ErrorCode::MessageShape`]: crate::ErrorCode::MessageShape
/// [`ErrorCode::MessageNotJson`]: crate::ErrorCode::MessageNotJson
pub fn explain_parts<A: Attributes + ?Sized, H: Headers + ?Sized>(
    filter: &Filter,
    policy: Option<&Value>,
    message: &MessageParts<'_, A, H>,
) -> Result<Explanation, ExplainError> {
    if let SelectedPart::Body { bytes, strict } = message.select(filter.options())? {
        if strict
            && let Err(e) =
                filtervm_vm::json::validate(bytes, filtervm_vm::json::LoneSurrogates::Replace)
        {
            return Err(crate::message::not_json_error(filter.dialect(), &e).into());
        }
        if filter.json_body() == Some(crate::options::JsonBody::Event)
            && let Some(e) = crate::message::event_shape_error(bytes)
        {
            return Err(e.into());
        }
    }
    let part = crate::message::owned_part(filter.options(), message)?;
    let others = OtherParts {
        body: message
            .get_body()
            .and_then(|b| filtervm_vm::json::parse(b).ok()),
        attribute_names: message.get_attributes().map(|a| {
            a.entries()
                .map(|(name, _, _)| String::from_utf8_lossy(name.bytes()).into_owned())
                .collect()
        }),
    };
    explain_with(filter, &part, policy, Some(others))
}

/// Explains raw JSON bytes as published — an SNS body (body scope) or an Event Grid event — read
/// as [`crate::Evaluator::matches_bytes`] reads them; `policy` is the policy as compiled, if
/// known. An Event Grid event that is not JSON is an error; an SNS body that is not JSON is
/// explained (it matches only policies that read nothing from the body).
pub fn explain_bytes(
    filter: &Filter,
    policy: Option<&Value>,
    json: &[u8],
) -> Result<Explanation, ExplainError> {
    if matches!(
        filter.json_body(),
        Some(crate::options::JsonBody::Event | crate::options::JsonBody::EventBridge)
    ) && let Err(e) =
        filtervm_vm::json::validate(json, filtervm_vm::json::LoneSurrogates::Replace)
    {
        return Err(crate::message::not_json_error(filter.dialect(), &e).into());
    }
    if filter.json_body() == Some(crate::options::JsonBody::Event)
        && let Some(e) = crate::message::event_shape_error(json)
    {
        return Err(e.into());
    }
    explain(
        filter,
        &Message::Body(json.to_vec()),
        Sources {
            policy,
            message: None,
        },
    )
}

/// Explains why `message` does or does not match `filter`.
pub fn explain(
    filter: &Filter,
    message: &Message,
    sources: Sources<'_>,
) -> Result<Explanation, ExplainError> {
    let others = sources.message.and_then(|raw| {
        let json = serde_json::to_vec(raw).ok()?;
        let read = crate::read_message(&json).ok()?;
        let parts = read.parts();
        Some(OtherParts {
            body: parts
                .get_body()
                .and_then(|b| filtervm_vm::json::parse(b).ok()),
            attribute_names: parts
                .get_attributes()
                .map(|a| a.iter().map(|a| a.name.clone()).collect()),
        })
    });
    explain_with(filter, message, sources.policy, others)
}

/// The parts of a message a filter does not read, for the hints that look at them.
struct OtherParts {
    /// The body, when it is JSON.
    body: Option<Value>,
    /// The attribute names.
    attribute_names: Option<Vec<String>>,
}

/// [`explain`], with the message's other parts.
fn explain_with(
    filter: &Filter,
    message: &Message,
    policy: Option<&Value>,
    others: Option<OtherParts>,
) -> Result<Explanation, ExplainError> {
    let lowered = filter.lowered_ir().ok_or(ExplainError::NoIr)?;
    let program = filter.program();
    let mut scratch = Bindings::new();
    let bound = scratch.bind(program.keys(), message);
    // An EventBridge event whose `exists: false` the rows cannot judge is judged by EB-8's
    // search over the filter's kept pattern: its verdict, the conditions below as the rows saw
    // them (every key absent) and a hint saying so.
    let mut exact = None;
    if filter.dialect() == Dialect::EventBridge
        && let Err(e) = crate::evaluator::judged(filter, &bound)
    {
        // An event that cannot be judged (not JSON, not an object, too deep, EB-3, EB-34) has no
        // explanation but its error.
        match crate::evaluator::exactly(filter, &bound, || crate::evaluator::message_bytes(message))
        {
            Some(Ok(verdict)) => exact = Some(verdict),
            Some(Err(e)) => return Err(e.into()),
            None => return Err(e.into()),
        }
    }
    let mut registers = Vec::new();
    let matched = exact.unwrap_or_else(|| program.eval(&bound, &mut registers));
    let program_tests = Runner {
        table: program.keys(),
        bound: bound.clone(),
        registers: Vec::new(),
    };
    let instructions = steps(program, &program_tests)?;

    // The lowered IR may read keys the optimizer dropped (a subtree folded away): explain over the
    // program's key table extended by those keys, binding again only when there are some.
    let mut table = program.keys().clone();
    let before = table.len();
    lowered.walk(&mut |n| {
        if let NodeKind::Test(t) = &n.kind {
            table.intern(t.key.clone());
        }
    });
    let mut extended_scratch = Bindings::new();
    let runner = if table.len() > before {
        Runner {
            bound: extended_scratch.bind(&table, message),
            table: &table,
            registers: Vec::new(),
        }
    } else {
        program_tests
    };
    let mut engine = Engine {
        lowered,
        runner,
        matched,
        view: PolicyView::new(filter.dialect(), policy),
    };
    let mut root = engine.condition(lowered)?;
    attach(&mut root, &instructions, &mut HashSet::new());
    let mut decided_by = Vec::new();
    deciders(&root, matched, &mut decided_by);
    let bound = &engine.runner.bound;
    let hints = if matched {
        Vec::new()
    } else {
        let ctx = HintContext {
            dialect: filter.dialect(),
            message,
            others: others.as_ref(),
        };
        let mut hints = Vec::new();
        if let Some(e) = bound.not_json() {
            hints.push(Hint {
                code: HINT_NOT_JSON,
                pointer: String::new(),
                message: if filter.dialect() == Dialect::Sns {
                    format!(
                        "the body is not JSON ({e}), so no condition on the body can hold; publish \
                         the body as a JSON object"
                    )
                } else {
                    format!("the message is not JSON ({e}), so no condition on it can hold")
                },
            });
        }
        if bound.judgement() == &Judgement::Unsupported {
            hints.push(Hint {
                code: HINT_BODY_OVERFLOW,
                pointer: String::new(),
                message: "the event reaches a field of an `exists: false` judged against array \
                          positions (EB-10) by two routes, or holds scalars in nested arrays \
                          where that absence is decided: the verdict is EB-8's search over the \
                          pattern, and the conditions shown saw the event bound with every key \
                          absent"
                    .to_owned(),
            });
        } else if bound.overflowed() {
            hints.push(Hint {
                code: HINT_BODY_OVERFLOW,
                pointer: String::new(),
                message: format!(
                    "the body's arrays of objects need more than {} binding slots to be judged \
                     element by element, so it was bound as if it were not a JSON \
                     object and no condition on it can hold",
                    filtervm_vm::bind::MAX_ROW_SLOTS
                ),
            });
        }
        for d in &decided_by {
            ctx.collect(d, &mut hints);
        }
        hints
    };
    Ok(Explanation {
        dialect: filter.dialect(),
        matched,
        rows: bound.rows(),
        root,
        decided_by,
        hints,
        instructions,
    })
}

// ---------------------------------------------------------------------------------------------
// Instructions: operand helpers generated from the one instruction list.

/// What explain needs to know of an operand: the slot it reads, and how to rewrite it.
trait ExplainOperand: Copy {
    fn slot(self) -> Option<u32> {
        None
    }
    fn to_r0(self, _field: &str) -> Self {
        self
    }
    fn remap(self, _map: &dyn Fn(u32) -> Option<u32>) -> Option<Self> {
        Some(self)
    }
    /// Copies the constant this operand refers to from `from` into `into`, pointing at the copy.
    fn extract(self, _from: &Pools, _into: &mut Pools) -> Option<Self> {
        Some(self)
    }
}

impl ExplainOperand for SlotRef {
    fn slot(self) -> Option<u32> {
        Some(self.0)
    }
    fn remap(self, map: &dyn Fn(u32) -> Option<u32>) -> Option<Self> {
        map(self.0).map(SlotRef)
    }
}

impl ExplainOperand for Reg {
    fn to_r0(self, field: &str) -> Self {
        if field == "dst" { Reg(0) } else { self }
    }
}

impl ExplainOperand for Target {}

/// Pool operands: `extract` copies the one constant into a fresh pool.
macro_rules! pool_operand {
    ($($ty:ident => $pool:ident),* $(,)?) => {
        $(
            impl ExplainOperand for $ty {
                fn extract(self, from: &Pools, into: &mut Pools) -> Option<Self> {
                    let item = from.$pool.get(self.0 as usize)?.clone();
                    into.$pool.push(item);
                    u32::try_from(into.$pool.len() - 1).ok().map($ty)
                }
            }
        )*
    };
}

pool_operand!(
    StrRef => strings,
    ListRef => lists,
    SetRef => sets,
    RangesRef => ranges,
    DecRangesRef => dec_ranges,
    WildRef => wildcards,
    PatRef => patterns,
    CidrRef => cidrs,
    BlockRef => blocks,
    CaseRef => cases,
);

impl ExplainOperand for TestsRef {
    /// Copies the leaf tests and the constants they read.
    fn extract(self, from: &Pools, into: &mut Pools) -> Option<Self> {
        let tests = from.leaf_tests.get(self.0 as usize)?.clone();
        let copied = tests
            .into_iter()
            .map(|t| inst_extract(t, from, into))
            .collect::<Option<Vec<Inst>>>()?;
        into.leaf_tests.push(copied);
        u32::try_from(into.leaf_tests.len() - 1).ok().map(TestsRef)
    }
}
impl ExplainOperand for bool {}
impl ExplainOperand for Shapes {}
impl ExplainOperand for LeafTypes {}

macro_rules! inst_helpers {
    ($( $(#[$doc:meta])* $name:ident $mnemonic:literal { $($field:ident : $ty:ty),* } ;)*) => {
        /// The slot a test instruction reads (`None` for logic, jumps and `ret`).
        fn inst_slot(inst: &Inst) -> Option<u32> {
            match *inst {
                $( Inst::$name { $($field),* } => None $( .or(ExplainOperand::slot($field)) )*, )*
            }
        }

        /// The instruction with its destination register set to `r0`.
        fn inst_to_r0(inst: Inst) -> Inst {
            match inst {
                $( Inst::$name { $($field),* } => Inst::$name {
                    $( $field: ExplainOperand::to_r0($field, stringify!($field)) ),*
                }, )*
            }
        }

        /// The instruction with its constants copied from `from` into `into`.
        fn inst_extract(inst: Inst, from: &Pools, into: &mut Pools) -> Option<Inst> {
            match inst {
                $( Inst::$name { $($field),* } => Some(Inst::$name {
                    $( $field: ExplainOperand::extract($field, from, into)? ),*
                }), )*
            }
        }

        /// The instruction with its slots renumbered (`None` when a slot has no image).
        fn inst_remap(inst: Inst, map: &dyn Fn(u32) -> Option<u32>) -> Option<Inst> {
            match inst {
                $( Inst::$name { $($field),* } => Some(Inst::$name {
                    $( $field: ExplainOperand::remap($field, map)? ),*
                }), )*
            }
        }
    };
}

filtervm_vm::for_each_op!(inst_helpers);

/// Runs verified `parts` and, with several rows, its negation: whether it held in every, some or
/// none of the rows.
fn some_all(
    parts: ProgramParts,
    bound: &Bound<'_>,
    registers: &mut Vec<bool>,
) -> Result<Held, ExplainError> {
    let internal = |e: filtervm_vm::program::VerifyError| ExplainError::Internal(e.to_string());
    if bound.rows() <= 1 {
        let p = Program::new(parts).map_err(internal)?;
        return Ok(Held::of(p.eval(bound, registers)));
    }
    let mut negated = parts.clone();
    let ret = negated.code.pop();
    if let Some(Inst::Ret { src }) = ret {
        negated.code.push(Inst::Not { dst: src, src });
        negated.code.push(Inst::Ret { src });
    }
    negated.origins.clear();
    negated.sources.clear();
    let some = Program::new(parts)
        .map_err(internal)?
        .eval(bound, registers);
    let all = !Program::new(negated)
        .map_err(internal)?
        .eval(bound, registers);
    Ok(if all {
        Held::True
    } else if some {
        Held::SomeRows
    } else {
        Held::False
    })
}

/// Runs single test instructions on a message bound to a key table, through the VM's executor.
///
/// A test instruction is compiled into a one-test program over a table of just its key, and run
/// by the executor against the bound message's slot for that key ([`exec::eval_test`], as a
/// subscription set runs its tests), so each test costs O(1) in the size of the table.
struct Runner<'a> {
    table: &'a KeyTable,
    bound: Bound<'a>,
    registers: Vec<bool>,
}

impl Runner<'_> {
    /// Runs one test instruction (its slot indexes `self.table`, its constants are in `pools`):
    /// whether it held in every, some or none of the rows.
    fn test(&self, inst: Inst, pools: Pools) -> Result<Held, ExplainError> {
        let inst = inst_to_r0(inst);
        let slot = inst_slot(&inst)
            .ok_or_else(|| ExplainError::Internal("not a test instruction".into()))?;
        let key = self
            .table
            .keys()
            .get(slot as usize)
            .ok_or_else(|| ExplainError::Internal("slot out of range".into()))?;
        let mut keys = KeyTable::new();
        keys.intern(key.clone());
        let inst = inst_remap(inst, &|s| (s == slot).then_some(0))
            .ok_or_else(|| ExplainError::Internal("slot remap".into()))?;
        let program = Program::new(ProgramParts {
            keys,
            pools,
            code: vec![inst, Inst::Ret { src: Reg(0) }],
            origins: Vec::new(),
            sources: Vec::new(),
            registers: 1,
        })
        .map_err(|e| ExplainError::Internal(e.to_string()))?;
        let held_in = |row| exec::eval_test(program.verified(), 0, &self.bound, row, slot as usize);
        let rows = self.bound.rows();
        let some = (0..rows).any(held_in);
        let all = (0..rows).all(held_in);
        Ok(if all {
            Held::True
        } else if some {
            Held::SomeRows
        } else {
            Held::False
        })
    }
}

/// Every test instruction of `program`, run alone (with just the constants it reads).
fn steps(program: &Program, runner: &Runner<'_>) -> Result<Vec<Step>, ExplainError> {
    let mut out = Vec::new();
    for (at, inst) in program.code().iter().enumerate() {
        if inst_slot(inst).is_none() {
            continue;
        }
        let mut pools = Pools::default();
        let alone = inst_extract(*inst, program.pools(), &mut pools)
            .ok_or_else(|| ExplainError::Internal(format!("constants of @{at}")))?;
        out.push(Step {
            at,
            text: inst.show(program.parts()),
            origin: program.origin(at).map(str::to_owned),
            held: runner.test(alone, pools)?,
        });
    }
    Ok(out)
}

/// Compiles `node` alone into program parts over `table` (slots renumbered into it).
fn sub_program(node: &Node, table: &KeyTable) -> Result<ProgramParts, ExplainError> {
    let program =
        codegen::generate(node).map_err(|e| ExplainError::Internal(format!("codegen: {e}")))?;
    let mut parts = program.parts().clone();
    let keys = parts.keys.keys().to_vec();
    let map = |s: u32| keys.get(s as usize).and_then(|k| table.get(k));
    parts.code = parts
        .code
        .into_iter()
        .map(|i| inst_remap(i, &map))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| ExplainError::Internal("a key is missing from the table".into()))?;
    parts.keys = table.clone();
    Ok(parts)
}

// ---------------------------------------------------------------------------------------------
// The condition tree.

struct Engine<'a> {
    lowered: &'a Node,
    runner: Runner<'a>,
    matched: bool,
    view: PolicyView<'a>,
}

impl Engine<'_> {
    /// A test's truth: the test compiled alone by codegen (one instruction), run by the executor.
    fn test(&mut self, node: &Node) -> Result<Held, ExplainError> {
        let program =
            codegen::generate(node).map_err(|e| ExplainError::Internal(format!("codegen: {e}")))?;
        let keys = program.keys().keys();
        let table = &self.runner.table;
        let map = |s: u32| keys.get(s as usize).and_then(|k| table.get(k));
        let inst = program
            .code()
            .iter()
            .find(|i| inst_slot(i).is_some())
            .and_then(|i| inst_remap(*i, &map))
            .ok_or_else(|| ExplainError::Internal("a test compiled to no test".into()))?;
        self.runner.test(inst, program.pools().clone())
    }

    /// With several rows (an sns body, rule 18): whether `node` held in the rows that matter (the
    /// matching rows when the message matched, else all rows), `node` compiled alone by codegen and
    /// run by the executor over every row.
    fn held_in_rows(&mut self, node: &Node) -> Result<Held, ExplainError> {
        let table = self.runner.table;
        if !self.matched {
            let parts = sub_program(node, table)?;
            return some_all(parts, &self.runner.bound, &mut self.runner.registers);
        }
        // some = a matching row where node holds; all = no matching row where it fails.
        let within = |n: Node| Node::and(vec![self.lowered.clone(), n], "");
        let some = sub_program(&within(node.clone()), table)?;
        let fails = sub_program(&within(Node::negation(node.clone())), table)?;
        let registers = &mut self.runner.registers;
        let bound = &self.runner.bound;
        let eval = |parts: ProgramParts, registers: &mut Vec<bool>| {
            Program::new(parts)
                .map(|p| p.eval(bound, registers))
                .map_err(|e| ExplainError::Internal(e.to_string()))
        };
        let some = eval(some, registers)?;
        let fails = eval(fails, registers)?;
        Ok(if !fails {
            Held::True
        } else if some {
            Held::SomeRows
        } else {
            Held::False
        })
    }

    fn seen(&self, key: &Key) -> Seen {
        let mut seen = Seen {
            shapes: Vec::new(),
            values: Vec::new(),
            more: 0,
        };
        let bound = &self.runner.bound;
        let Some(index) = self.runner.table.get(key) else {
            return seen;
        };
        for row in 0..bound.rows() {
            let slot = bound.slot(row, index as usize);
            if !seen.shapes.contains(&slot.shape) {
                seen.shapes.push(slot.shape);
            }
            for leaf in slot.leaves().filter_map(BoundLeaf::to_leaf) {
                if seen.values.contains(&leaf) {
                    continue;
                }
                if seen.values.len() < MAX_SEEN {
                    seen.values.push(leaf);
                } else {
                    seen.more += 1;
                }
            }
        }
        seen
    }

    fn condition(&mut self, node: &Node) -> Result<Condition, ExplainError> {
        let (kind, children, test) = match &node.kind {
            NodeKind::True => (Kind::True, Vec::new(), None),
            NodeKind::False => (Kind::False, Vec::new(), None),
            NodeKind::And(c) => (Kind::And, self.conditions(c)?, None),
            NodeKind::Or(c) => (Kind::Or, self.conditions(c)?, None),
            NodeKind::Not(c) => (Kind::Not, vec![self.condition(c)?], None),
            NodeKind::Test(t) => (Kind::Test, Vec::new(), Some(t.clone())),
        };
        let held = if self.runner.bound.rows() > 1 {
            self.held_in_rows(node)?
        } else {
            // One row: a test runs as one instruction; and/or/not combine their parts' values
            // exactly as the program's and/or/not instructions do.
            let is = |c: &Condition| c.held == Held::True;
            match kind {
                Kind::Test => self.test(node)?,
                Kind::True => Held::True,
                Kind::False => Held::False,
                Kind::And => Held::of(children.iter().all(is)),
                Kind::Or => Held::of(children.iter().any(is)),
                Kind::Not => Held::of(!children.iter().all(is)),
            }
        };
        let seen = test.as_ref().map(|t| self.seen(&t.key));
        Ok(Condition {
            kind,
            pointer: node.origin.to_string(),
            held,
            test,
            seen,
            policy: self.view.fragment(&node.origin),
            instructions: Vec::new(),
            children,
        })
    }

    fn conditions(&mut self, nodes: &[Node]) -> Result<Vec<Condition>, ExplainError> {
        nodes.iter().map(|n| self.condition(n)).collect()
    }
}

/// Lists each program test instruction on the outermost condition with its origin.
fn attach(c: &mut Condition, steps: &[Step], done: &mut HashSet<String>) {
    if done.insert(c.pointer.clone()) {
        c.instructions = steps
            .iter()
            .filter(|s| s.origin.as_deref() == Some(c.pointer.as_str()))
            .map(|s| s.at)
            .collect();
    }
    for k in &mut c.children {
        attach(k, steps, done);
    }
}

/// The innermost conditions that gave `c` its value `want`.
fn deciders(c: &Condition, want: bool, out: &mut Vec<Condition>) {
    let is = |h: Held| {
        if want {
            h == Held::True
        } else {
            h == Held::False
        }
    };
    match c.kind {
        Kind::Test | Kind::True | Kind::False => out.push(c.clone()),
        // A `not` decides as a whole: its part held (or failed), shown under it.
        Kind::Not => out.push(c.clone()),
        Kind::And | Kind::Or => {
            // An `and` fails through its failing parts, an `or` holds through its holding parts;
            // otherwise every part decided.
            let through_some = (c.kind == Kind::And) != want;
            let parts: Vec<&Condition> = if through_some {
                c.children.iter().filter(|k| is(k.held)).collect()
            } else {
                c.children.iter().collect()
            };
            if parts.is_empty() || (!through_some && !parts.iter().all(|k| is(k.held))) {
                // Several rows: every part held somewhere, never together (sns rule 18).
                out.push(c.clone());
            } else {
                for p in parts {
                    deciders(p, want, out);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The policy text of a pointer.

enum PolicyView<'a> {
    None,
    Json(&'a Value),
    Stream(stream::StreamFilter),
}

impl<'a> PolicyView<'a> {
    fn new(dialect: Dialect, policy: Option<&'a Value>) -> PolicyView<'a> {
        match policy {
            None => PolicyView::None,
            Some(Value::String(_)) if dialect == Dialect::Stream => policy
                .and_then(|p| stream::parse(p).ok())
                .map_or(PolicyView::None, PolicyView::Stream),
            Some(p) => PolicyView::Json(p),
        }
    }

    fn fragment(&self, pointer: &str) -> Option<String> {
        if pointer.is_empty() {
            return None;
        }
        match self {
            PolicyView::None => None,
            PolicyView::Json(p) => p.pointer(pointer).map(Value::to_string),
            PolicyView::Stream(f) => stream_fragment(f, pointer),
        }
    }
}

/// The text form of the group, clause or value at a `/groups/..` pointer.
fn stream_fragment(filter: &stream::StreamFilter, pointer: &str) -> Option<String> {
    let mut parts = pointer.strip_prefix("/groups/")?.split('/');
    let g: usize = parts.next()?.parse().ok()?;
    let group = filter.groups.get(g)?;
    let Some(c) = parts.next() else {
        let one = stream::StreamFilter {
            groups: vec![group.clone()],
        };
        return Some(one.to_string());
    };
    let clause = group.get(c.parse::<usize>().ok()?)?;
    let one = stream::StreamFilter {
        groups: vec![vec![clause.clone()]],
    };
    match (parts.next(), parts.next()) {
        (None, _) => Some(one.to_string()),
        (Some("values"), None) => one
            .to_json()
            .pointer("/groups/0/0/values")
            .map(Value::to_string),
        (Some("values"), Some(i)) => one
            .to_json()
            .pointer(&format!("/groups/0/0/values/{i}"))
            .map(Value::to_string),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Hints.

struct HintContext<'a> {
    dialect: Dialect,
    message: &'a Message,
    others: Option<&'a OtherParts>,
}

impl HintContext<'_> {
    /// Hints for the failing tests under a deciding condition (not inside a failing `not`).
    fn collect(&self, c: &Condition, out: &mut Vec<Hint>) {
        match c.kind {
            Kind::Test => {
                // Only a test that failed everywhere: the values seen then all failed it.
                if c.held == Held::False
                    && let (Some(test), Some(seen)) = (&c.test, &c.seen)
                {
                    for hint in self.test_hints(&c.pointer, test, seen) {
                        if !out.contains(&hint) {
                            out.push(hint);
                        }
                    }
                }
            }
            Kind::Not => {}
            _ => c.children.iter().for_each(|k| self.collect(k, out)),
        }
    }

    fn test_hints(&self, pointer: &str, test: &Test, seen: &Seen) -> Vec<Hint> {
        let mut out = Vec::new();
        let mut hint = |code: &'static str, message: String| {
            out.push(Hint {
                code,
                pointer: pointer.to_owned(),
                message,
            })
        };
        if seen.absent() {
            if let Some(m) = self.key_case(&test.key) {
                hint(HINT_KEY_CASE, m);
            }
            if let Some(m) = self.scope_mismatch(&test.key) {
                hint(HINT_SCOPE, m);
            }
        }
        match (&test.key, &test.pred) {
            (Key::AnyAttribute, _) => hint(
                HINT_NO_ATTRIBUTES,
                "the message carries no attributes, and `exists: false` matches only a message \
                 with at least one (non-Binary) attribute; publish some attribute, \
                 for example a routing attribute every message carries"
                    .into(),
            ),
            (Key::EventMember(_) | Key::EventData(_), Pred::Shape(shapes))
                if !shapes.has(Shape::Absent)
                    && seen
                        .shapes
                        .iter()
                        .all(|s| matches!(s, Shape::Absent | Shape::Null)) =>
            {
                hint(
                    HINT_MISSING_KEY,
                    "the key is missing or null in this event: every operator but NumberNotIn, \
                     StringNotIn, NumberNotInRange and IsNullOrUndefined is false then, \
                     StringNotContains, StringNotBeginsWith and StringNotEndsWith included"
                        .into(),
                )
            }
            (Key::BodyIsObject, _) => hint(
                HINT_BODY_NOT_OBJECT,
                "the body is not a JSON object, so no body-scope policy but `{}` can match; \
                 publish the body as a JSON object"
                    .into(),
            ),
            _ => {}
        }
        if let Some(m) = value_case(self.dialect, &test.pred, seen) {
            hint(HINT_VALUE_CASE, m);
        }
        if let Some(m) = type_mismatch(self.dialect, &test.pred, seen) {
            hint(HINT_TYPE, m);
        }
        if let Some(m) = not_a_number(&test.pred, seen) {
            hint(HINT_NOT_A_NUMBER, m);
        }
        if let Some(m) = old_star(&test.pred, seen) {
            hint(HINT_OLD_STAR, m);
        }
        if let Some(m) = exclusive_bound(&test.pred, seen) {
            hint(HINT_EXCLUSIVE_BOUND, m);
        }
        if let (Key::FieldPath(path, levels), Pred::Shape(shapes)) = (&test.key, &test.pred)
            && *shapes == Shapes::ABSENT
            && !seen.absent()
        {
            hint(
                HINT_ABSENT_ELSEWHERE,
                format!(
                    "`{path}` has a value, so `exists: false` fails: it is judged element by \
                    element only at the arrays within its first {levels} segment(s), the ones a \
                    field sorting before it fixed (EB-10); elsewhere any element's value counts"
                ),
            );
        }
        if let Pred::Num {
            source: NumSource::Comparable,
            ..
        } = &test.pred
            && let Some(text) = seen.values.iter().find_map(|l| match l {
                Leaf::Num(n) if !filtervm_vm::number::is_comparable(n.text(), n.value()) => {
                    Some(n.text().to_owned())
                }
                _ => None,
            })
        {
            hint(
                HINT_NOT_COMPARABLE,
                format!(
                    "the number {text} has more digits than its binary64 value holds (it is not \
                    that value's shortest form, EB-17): it satisfies no numeric condition and \
                    equals only the same spelling"
                ),
            );
        }
        out
    }

    /// The key is absent, but the message has a name differing only in case.
    fn key_case(&self, key: &Key) -> Option<String> {
        let (wanted, what) = match key {
            Key::AttributeText(n) | Key::AttributeTyped(n) => (&**n, "attribute"),
            Key::Header(n) => (&**n, "header"),
            _ => return None,
        };
        let names: Vec<&str> = match self.message {
            Message::Attributes(a) => a.iter().map(|a| a.name.as_str()).collect(),
            Message::Headers(h) => h.iter().map(|h| h.name.as_str()).collect(),
            _ => return None,
        };
        let lower = wanted.to_lowercase();
        let found = names
            .into_iter()
            .find(|n| *n != wanted && n.to_lowercase() == lower)?;
        Some(format!(
            "the message has no {what} {}, but it has {}: names are case-sensitive; use the \
             publisher's spelling in the policy",
            quote(wanted),
            quote(found)
        ))
    }

    /// sns: attribute scope reading an absent attribute that the body has, or body scope reading
    /// an absent field that the attributes have.
    fn scope_mismatch(&self, key: &Key) -> Option<String> {
        if self.dialect != Dialect::Sns {
            return None;
        }
        let others = self.others?;
        match key {
            Key::AttributeTyped(name) => {
                let body = others.body.as_ref()?;
                json_has_path(body, name).then(|| {
                    format!(
                        "the message has no attribute {n}, but its body has a field {n}: this \
                         policy filters message attributes (FilterPolicyScope \
                         MessageAttributes); set the scope to MessageBody to filter on the body, \
                         or publish {n} as a message attribute",
                        n = quote(name)
                    )
                })
            }
            Key::BodyPath(path) | Key::BodyPathEach(path) => {
                let names = others.attribute_names.as_ref()?;
                names.iter().any(|n| **n == **path).then(|| {
                    format!(
                        "the body has no field {p}, but the message has an attribute {p}: this \
                         policy filters the body (FilterPolicyScope MessageBody); set the scope to \
                         MessageAttributes to filter on attributes, or put {p} in the body",
                        p = quote(path)
                    )
                })
            }
            _ => None,
        }
    }
}

fn quote(s: &str) -> String {
    Quoted(s).to_string()
}

/// Whether a JSON document has a value at a dotted path in any of the sns rule-16 forms (nested,
/// flat, mixed), arrays transparent (rule 17).
fn json_has_path(doc: &Value, path: &str) -> bool {
    fn walk(v: &Value, path: &str, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        match v {
            Value::Array(items) => items.iter().any(|i| walk(i, path, depth + 1)),
            Value::Object(members) => members.iter().any(|(k, child)| {
                if k == path {
                    return true;
                }
                path.strip_prefix(k.as_str())
                    .and_then(|rest| rest.strip_prefix('.'))
                    .is_some_and(|rest| walk(child, rest, depth + 1))
            }),
            _ => false,
        }
    }
    walk(doc, path, 0)
}

fn str_op(op: StrOp, leaf: &str, value: &str) -> bool {
    match op {
        StrOp::Eq => leaf == value,
        StrOp::Prefix => leaf.starts_with(value),
        StrOp::Suffix => leaf.ends_with(value),
        StrOp::Contains => leaf.contains(value),
    }
}

/// A case-sensitive string condition that would hold ignoring case.
fn value_case(dialect: Dialect, pred: &Pred, seen: &Seen) -> Option<String> {
    let (leaf, wanted) = match pred {
        Pred::Str {
            op,
            case: Case::Sensitive,
            values,
        } => seen.string_leaves().find_map(|v| {
            let fv = fold(v);
            values
                .iter()
                .find(|w| str_op(*op, &fv, &fold(w)))
                .map(|w| (v.to_owned(), w.to_string()))
        })?,
        Pred::Wildcard(w) => {
            let folded = Wildcard::compile(&fold(w.source())).ok()?;
            let v = seen.string_leaves().find(|v| folded.matches(&fold(v)))?;
            (v.to_owned(), w.source().to_owned())
        }
        Pred::Segment(p) => {
            let folded = SegmentPattern::compile(&fold(p.source())).ok()?;
            let v = seen.string_leaves().find(|v| folded.matches(&fold(v)))?;
            (v.to_owned(), p.source().to_owned())
        }
        _ => return None,
    };
    let fix = match dialect {
        Dialect::Sns => format!(
            "sns string matching is case-sensitive; use {{\"equals-ignore-case\": {}}} \
             for an exact value, or publish the policy's spelling",
            quote(&wanted)
        ),
        Dialect::Basaltic => "string matches are case-sensitive and there is no case-insensitive \
                              matcher: list each spelling, or publish one spelling"
            .to_owned(),
        Dialect::EventGrid => "with isSubjectCaseSensitive true the subject filters compare case; \
                               set it to false to ignore case"
            .to_owned(),
        Dialect::Stream => "comparison is case-sensitive: list each spelling in an \
                            `in` clause, or publish one spelling"
            .to_owned(),
        Dialect::Expr => "comparison is case-sensitive: list each spelling in an `in` \
                          value, or publish one spelling"
            .to_owned(),
        Dialect::EventBridge => format!(
            "event pattern matching is case-sensitive; use {{\"equals-ignore-case\": {}}} \
             for an exact value, or publish the pattern's spelling",
            quote(&wanted)
        ),
    };
    Some(format!(
        "{} differs from the policy's {} only in case: {fix}",
        quote(&leaf),
        quote(&wanted)
    ))
}

/// A Number versus String mismatch.
fn type_mismatch(dialect: Dialect, pred: &Pred, seen: &Seen) -> Option<String> {
    let rule = match dialect {
        Dialect::Sns => "SNS compares types strictly",
        Dialect::EventGrid => "Event Grid compares types strictly",
        _ => "the dialect compares types strictly",
    };
    match pred {
        Pred::Num {
            source: NumSource::NumberLeaf,
            ranges,
        } => {
            let v = seen.string_leaves().find(|v| {
                parse_json_number(v).is_some_and(|x| ranges.iter().any(|r| r.contains(x)))
            })?;
            Some(format!(
                "the value {} is a string, and numeric conditions read only numbers ({rule}): \
                 publish it as a number (attribute Type Number, or an unquoted JSON number)",
                quote(v)
            ))
        }
        Pred::Dec(ranges) => {
            let v = seen.string_leaves().find(|v| {
                Decimal::parse(v).is_some_and(|x| ranges.iter().any(|r| r.contains(&x)))
            })?;
            Some(format!(
                "the value {} is a string, and Number operators read only JSON numbers ({rule}): \
                 publish it as an unquoted number",
                quote(v)
            ))
        }
        Pred::Str { op, case, values } => {
            let number = seen.values.iter().find_map(|l| {
                let text = match l {
                    Leaf::Num(n) => n.text().to_owned(),
                    Leaf::Bool(b) => b.to_string(),
                    _ => return None,
                };
                let cmp = match case {
                    Case::Fold => fold(&text),
                    Case::Sensitive => text.clone(),
                };
                values.iter().any(|w| str_op(*op, &cmp, w)).then_some(text)
            })?;
            let fix = if dialect == Dialect::Sns {
                format!("write it unquoted in the policy ({number}) to match the number")
            } else {
                "publish it as a string, or use the dialect's number operator".to_owned()
            };
            Some(format!(
                "the value {number} is not a string, and string conditions read only strings \
                 ({rule}): {fix}"
            ))
        }
        Pred::Bool(b) => {
            let v = seen.string_leaves().find(|v| *v == b.to_string())?;
            Some(format!(
                "the value {} is a string, and BoolEquals reads only JSON booleans ({rule}): \
                 publish an unquoted {b}",
                quote(v)
            ))
        }
        _ => None,
    }
}

/// A numeric condition on text that does not parse as a JSON number.
fn not_a_number(pred: &Pred, seen: &Seen) -> Option<String> {
    let Pred::Num {
        source: NumSource::Text,
        ..
    } = pred
    else {
        return None;
    };
    let v = seen
        .string_leaves()
        .find(|v| parse_json_number(v).is_none())?;
    let why = if parse_json_number(v.trim()).is_some() {
        " (it has surrounding whitespace)"
    } else {
        ""
    };
    Some(format!(
        "the value {} does not parse as a JSON number{why}, so no numeric condition can hold: \
         publish plain JSON number text such as 1000 or 1.5e3",
        quote(v)
    ))
}

/// A number lying exactly on an exclusive bound (`<` or `>`) of a failing numeric condition.
fn exclusive_bound(pred: &Pred, seen: &Seen) -> Option<String> {
    let Pred::Num { source, ranges } = pred else {
        return None;
    };
    let numbers = seen.values.iter().filter_map(|l| match (l, source) {
        (Leaf::Num(n), NumSource::NumberLeaf) => Some((n.text().to_owned(), n.value())),
        (Leaf::Str(s), NumSource::Text) => parse_json_number(s).map(|x| (s.to_string(), x)),
        _ => None,
    });
    for (text, x) in numbers {
        for r in ranges {
            let (bound, op, fix) = if !r.hi_inclusive && r.hi == x {
                (r.hi, "<", "<=")
            } else if !r.lo_inclusive && r.lo == x {
                (r.lo, ">", ">=")
            } else {
                continue;
            };
            return Some(format!(
                "the value {text} lies on the bound {bound}, which is exclusive (`{op}`): write \
                 `{fix}` to include the bound"
            ));
        }
    }
    None
}

/// Whether `value` matches `pattern` under the old matcher: `*` is any run of characters,
/// dots included (seed 004, "today's filter").
pub fn old_glob_matches(pattern: &str, value: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let v: Vec<char> = value.chars().collect();
    // The classic star-only glob with one backtrack point: O(len(p) × len(v)).
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while j < v.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(c) if Some(c) == v.get(j) => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p.get(i..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// A stream pattern that would have matched under the old dot-crossing `*`.
fn old_star(pred: &Pred, seen: &Seen) -> Option<String> {
    let Pred::Segment(p) = pred else {
        return None;
    };
    let v = seen
        .string_leaves()
        .find(|v| old_glob_matches(p.source(), v))?;
    // Suggest the pattern with one whole-segment `*` widened to `**`, when that matches.
    let segments: Vec<&str> = p.source().split('.').collect();
    let suggestion = (0..segments.len()).rev().find_map(|i| {
        if segments.get(i) != Some(&"*") {
            return None;
        }
        let mut s: Vec<&str> = segments.clone();
        if let Some(seg) = s.get_mut(i) {
            *seg = "**";
        }
        let candidate = s.join(".");
        SegmentPattern::compile(&candidate)
            .ok()
            .filter(|c| c.matches(v))
            .map(|_| candidate)
    });
    let fix = match suggestion {
        Some(s) => format!("write {} to span segments", quote(&s)),
        None => "use `**` (a whole segment) to span segments".to_owned(),
    };
    Some(format!(
        "{} matches {} only under the old matcher, where `*` crossed dots; now `*` stays inside \
         one segment: {fix}",
        quote(p.source()),
        quote(v)
    ))
}

// ---------------------------------------------------------------------------------------------
// Rendering.

fn leaf_json(leaf: &Leaf) -> Value {
    match leaf {
        Leaf::Str(s) => Value::String(s.to_string()),
        // The number as the message wrote it (text that is not a JSON number stays a string).
        Leaf::Num(n) => {
            Number::from_text(n.text()).map_or_else(|| Value::from(n.text()), Value::Number)
        }
        Leaf::Bool(b) => Value::Bool(*b),
        Leaf::Null => Value::Null,
    }
}

/// A JSON object of `members`, in this order.
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
    )
}

/// A JSON number of a count.
fn count(n: usize) -> Value {
    Value::Number(Number::from(n))
}

fn array<T>(items: &[T], each: impl Fn(&T) -> Value) -> Value {
    Value::Array(items.iter().map(each).collect())
}

/// The name of a shape.
pub fn shape_name(shape: Shape) -> &'static str {
    match shape {
        Shape::Absent => "absent",
        Shape::Null => "null",
        Shape::Scalar => "scalar",
        Shape::Array => "array",
        Shape::Object => "object",
    }
}

impl Seen {
    fn to_json(&self) -> Value {
        object([
            (
                "shapes",
                array(&self.shapes, |s| Value::from(shape_name(*s))),
            ),
            ("values", array(&self.values, leaf_json)),
            ("more", count(self.more)),
        ])
    }
}

impl fmt::Display for Seen {
    /// `absent`, `"order.paid"`, `["a", "b"] (array)`, `an object`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.absent() {
            return f.write_str("absent");
        }
        let values: Vec<String> = self.values.iter().map(ToString::to_string).collect();
        let mut text = match values.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        if self.more > 0 {
            let _ = write!(text, " (+{} more)", self.more);
        }
        if text.is_empty() {
            // Present without leaves: say what it was.
            let shapes: Vec<&str> = self
                .shapes
                .iter()
                .map(|s| match s {
                    Shape::Absent => "absent",
                    Shape::Null => "null",
                    Shape::Scalar => "present",
                    Shape::Array => "an array with no values",
                    Shape::Object => "an object",
                })
                .collect();
            return f.write_str(&shapes.join(" / "));
        }
        let shapes: Vec<&str> = self
            .shapes
            .iter()
            .filter(|s| !matches!(s, Shape::Scalar | Shape::Null))
            .map(|s| shape_name(*s))
            .collect();
        if shapes.is_empty() {
            f.write_str(&text)
        } else {
            write!(f, "{text} ({})", shapes.join(" / "))
        }
    }
}

impl Condition {
    /// The machine-readable form (see the module documentation).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), Value::from(self.kind.name()));
        m.insert("pointer".into(), Value::from(self.pointer.as_str()));
        m.insert("held".into(), self.held.to_json());
        if let Some(p) = &self.policy {
            m.insert("policy".into(), Value::from(p.as_str()));
        }
        if let Some(t) = &self.test {
            m.insert("test".into(), Value::from(format!("{} {}", t.key, t.pred)));
        }
        if let Some(s) = &self.seen {
            m.insert("seen".into(), s.to_json());
        }
        if !self.instructions.is_empty() {
            m.insert(
                "instructions".into(),
                array(&self.instructions, |i| count(*i)),
            );
        }
        if !self.children.is_empty() {
            m.insert(
                "children".into(),
                Value::Array(self.children.iter().map(Condition::to_json).collect()),
            );
        }
        Value::Object(m)
    }

    fn head(&self) -> String {
        let mut line = format!("{} {}", self.held.mark(), self.kind.name());
        if self.pointer.is_empty() {
            line.push_str(" (policy)");
        } else {
            let _ = write!(line, " {}", self.pointer);
        }
        line
    }

    fn detail(&self) -> Option<String> {
        let t = self.test.as_ref()?;
        let mut s = format!("{} {}", t.key, t.pred);
        if let Some(seen) = &self.seen {
            let _ = write!(s, "; saw {seen}");
        }
        Some(s)
    }

    fn render(&self, depth: usize, parent: Option<&str>, out: &mut String) {
        let pad = "  ".repeat(depth);
        let mut line = format!("{pad}{}", self.head());
        if parent != Some(self.pointer.as_str())
            && let Some(p) = &self.policy
        {
            let _ = write!(line, "  {}", shorten(p, 72));
        }
        out.push_str(&line);
        out.push('\n');
        if let Some(d) = self.detail() {
            let _ = writeln!(out, "{pad}    {d}");
        }
        for c in &self.children {
            c.render(depth + 1, Some(&self.pointer), out);
        }
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

impl Explanation {
    /// The machine-readable form (see the module documentation for the shape).
    pub fn to_json(&self) -> Value {
        let verdict = if self.matched { "match" } else { "no-match" };
        object([
            ("dialect", Value::from(self.dialect.name())),
            ("matched", Value::Bool(self.matched)),
            ("verdict", Value::from(verdict)),
            ("rows", count(self.rows)),
            ("decided_by", array(&self.decided_by, Condition::to_json)),
            (
                "hints",
                array(&self.hints, |h| {
                    object([
                        ("code", Value::from(h.code)),
                        ("pointer", Value::from(h.pointer.as_str())),
                        ("message", Value::from(h.message.as_str())),
                    ])
                }),
            ),
            ("conditions", self.root.to_json()),
            (
                "instructions",
                array(&self.instructions, |s| {
                    object([
                        ("at", count(s.at)),
                        ("inst", Value::from(s.text.as_str())),
                        (
                            "origin",
                            s.origin.as_deref().map_or(Value::Null, Value::from),
                        ),
                        ("held", s.held.to_json()),
                    ])
                }),
            ),
        ])
    }

    /// The instruction trace as text: one test instruction a line with its result.
    pub fn render_instructions(&self) -> String {
        let mut out = String::new();
        for s in &self.instructions {
            let origin = s.origin.as_deref().unwrap_or("");
            let _ = writeln!(out, "{} @{:<3} {} ; {origin}", s.held.mark(), s.at, s.text);
        }
        out
    }
}

impl fmt::Display for Explanation {
    /// The text form: verdict, deciding conditions, hints, then the condition tree.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.matched { "match" } else { "no match" };
        write!(f, "{verdict} ({} policy", self.dialect)?;
        if self.rows > 1 {
            write!(
                f,
                "; the body binds to {} rows, one per element of its arrays of objects (sns rule \
                 18): a condition holds in a row when one element satisfies it",
                self.rows
            )?;
        }
        writeln!(f, ")")?;
        writeln!(
            f,
            "\n{}",
            if self.matched {
                "matched because:"
            } else {
                "did not match because:"
            }
        )?;
        let mut out = String::new();
        for d in &self.decided_by {
            let mut line = format!("  {}", d.head());
            if let Some(p) = &d.policy {
                let _ = write!(line, "  {}", shorten(p, 72));
            }
            out.push_str(&line);
            out.push('\n');
            if let Some(detail) = d.detail() {
                let _ = writeln!(out, "      {detail}");
            }
            if d.kind == Kind::Not
                && let Some(child) = d.children.first()
            {
                match child.detail() {
                    Some(detail) => {
                        let _ = writeln!(out, "      not: {detail}");
                    }
                    None => {
                        let _ = writeln!(out, "      its part {}", child.head());
                    }
                }
            }
            if matches!(d.kind, Kind::And | Kind::Or) {
                let _ = writeln!(
                    out,
                    "      each part held in some row, but no single row satisfied them together"
                );
            }
        }
        f.write_str(&out)?;
        if !self.hints.is_empty() {
            writeln!(f, "\nhints:")?;
            for h in &self.hints {
                writeln!(
                    f,
                    "  [{}] {}: {}",
                    h.code,
                    display_pointer(&h.pointer),
                    h.message
                )?;
            }
        }
        writeln!(
            f,
            "\nconditions (✓ held, ✗ did not hold{}):",
            if self.rows > 1 {
                ", ~ held in some rows only"
            } else {
                ""
            }
        )?;
        let mut tree = String::new();
        self.root.render(1, None, &mut tree);
        f.write_str(&tree)
    }
}

fn display_pointer(p: &str) -> &str {
    if p.is_empty() { "(policy)" } else { p }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_glob_star_crosses_dots() {
        assert!(old_glob_matches("orders.*", "orders.eu.created"));
        assert!(old_glob_matches("*", ""));
        assert!(old_glob_matches("eu-*-1", "eu-west-1"));
        assert!(!old_glob_matches("eu-*-1", "eu-1"));
        assert!(!old_glob_matches("orders.*", "billing.orders"));
        assert!(old_glob_matches("a*b*c", "a.x.b.y.c"));
        assert!(!old_glob_matches("abc", "abd"));
    }

    #[test]
    fn json_paths_in_every_rule_16_form() {
        let doc =
            filtervm_vm::json::parse(br#"{"a": {"b": 1}, "c.d": 2, "e": [{"f": {"g.h": 3}}]}"#)
                .unwrap();
        assert!(json_has_path(&doc, "a.b"));
        assert!(json_has_path(&doc, "c.d"));
        assert!(json_has_path(&doc, "e.f.g.h"));
        assert!(!json_has_path(&doc, "a.c"));
    }

    #[test]
    fn instruction_helpers_read_and_rewrite_operands() {
        let inst = Inst::StrEq {
            dst: Reg(3),
            slot: SlotRef(2),
            s: StrRef(0),
        };
        assert_eq!(inst_slot(&inst), Some(2));
        assert_eq!(
            inst_to_r0(inst),
            Inst::StrEq {
                dst: Reg(0),
                slot: SlotRef(2),
                s: StrRef(0)
            }
        );
        assert_eq!(
            inst_remap(inst, &|s| Some(s + 5)),
            Some(Inst::StrEq {
                dst: Reg(3),
                slot: SlotRef(7),
                s: StrRef(0)
            })
        );
        assert_eq!(inst_remap(inst, &|_| None), None);
        assert_eq!(inst_slot(&Inst::Ret { src: Reg(0) }), None);
    }

    #[test]
    fn raw_bytes_are_explained_as_match_reads_them() {
        use crate::{Options, SnsScope, compile_text};
        let body = compile_text(
            Dialect::Sns,
            r#"{"k": ["v"]}"#,
            &Options::from(SnsScope::MessageBody),
        )
        .unwrap();
        let deep = format!(
            r#"{{"x": {}1{}, "k": "v"}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        let e = explain_bytes(&body, None, deep.as_bytes()).unwrap();
        assert!(e.matched);
        let e = explain_bytes(&body, None, b"{not json").unwrap();
        assert!(!e.matched);
        assert_eq!(e.hints.first().map(|h| h.code), Some(HINT_NOT_JSON));
        let event = compile_text(
            Dialect::EventGrid,
            r#"{"subjectBeginsWith": "a"}"#,
            &Options::from(Dialect::EventGrid),
        )
        .unwrap();
        assert!(
            explain_bytes(&event, None, br#"{"subject": "ab"}"#)
                .unwrap()
                .matched
        );
        assert!(matches!(
            explain_bytes(&event, None, b"{"),
            Err(ExplainError::Message(e)) if e.code == crate::ErrorCode::MessageNotJson
        ));
    }
}

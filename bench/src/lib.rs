//! Workloads shared by the benchmarks (`benches/instructions.rs`, `benches/wall.rs`).
//!
//! The data comes from `bench/workloads.py` (a copy of the shared deterministic generator): run
//! once into `bench-data/` at the repository root (or `$FILTERVM_BENCH_DATA`), generated on first
//! use when `python3` is there. The 1/3/8-clause policies are also written out below, so that the
//! instruction-count benches (which run under valgrind with a cleared environment) need no files;
//! a test checks they equal what the generator writes.

#![allow(clippy::expect_used)]

pub mod topic;

use filtervm_compiler::ir::Node;
use filtervm_compiler::{Dialect, Filter, MessageParts, Options, SnsScope, codegen, compile, opt};
use filtervm_vm::bind::Bound;
use filtervm_vm::key::Key;
use filtervm_vm::message::{AttributeType, Message};
use filtervm_vm::program::Program;
use filtervm_vm::value::Shape;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::path::PathBuf;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// Where the generated workloads are (generating them when missing).
pub fn data_dir() -> PathBuf {
    let dir = std::env::var_os("FILTERVM_BENCH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("bench-data"));
    if !dir.join("pol10k_num.jsonl").exists() {
        let script = repo_root().join("bench/workloads.py");
        let status = std::process::Command::new("python3")
            .arg(&script)
            .arg(&dir)
            .status()
            .expect("run python3 bench/workloads.py (set FILTERVM_BENCH_DATA to generated data)");
        assert!(status.success(), "bench/workloads.py failed");
    }
    dir
}

/// Messages every set benchmark (wall clock and instruction counts) runs per iteration: the first
/// lines of `attrs.jsonl`, the same for the set and for one-by-one, so that their ratio divides
/// like by like. Figures per message are the iteration's cost divided by this.
pub const SET_MESSAGES: usize = 100;

/// Lines every end-to-end benchmark (raw bytes to verdict; wall clock and instruction counts) runs
/// per iteration: the first lines of `attrs.jsonl` (or the cityfeat sample).
pub const E2E_MESSAGES: usize = 1000;

/// The lines of a generated file (`name` without `.jsonl`), at most `limit`.
pub fn lines(name: &str, limit: usize) -> Vec<String> {
    let path = data_dir().join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(limit)
        .map(str::to_owned)
        .collect()
}

/// The generated `pol{1,3,8}c` clauses (exact, prefix, anything-but, wildcard, number list, exists).
pub const COMMON: &str = r#"{"event": ["order.paid", "order.created"], "environment": ["production"], "region": [{"prefix": "eu-"}], "source": [{"anything-but": ["batch"]}], "subject": [{"wildcard": "orders.*.created"}], "customer": [{"prefix": "c1"}], "priority": [3, 4, 5, 6, 7, 8, 9], "amount": [{"exists": true}]}"#;
/// The generated `pol{1,3,8}n` clauses (the same with numeric ranges).
pub const NUMERIC: &str = r#"{"event": ["order.paid", "order.created"], "environment": ["production"], "amount": [{"numeric": [">=", 100, "<", 1000]}], "region": [{"prefix": "eu-"}], "priority": [{"numeric": [">", 2]}], "source": [{"anything-but": ["batch"]}], "subject": [{"wildcard": "orders.*.created"}], "customer": [{"prefix": "c1"}]}"#;

/// The seed's complete example (`000_e1d4924fe41b969f.txt`, basaltic).
pub const SEED_POLICY: &str = r#"{"event": ["order.created", "order.paid"], "environment": ["production"], "amount": [{"numeric": [">=", 100, "<", 1000]}], "test": [{"exists": false}]}"#;

/// A single-policy workload: the policy (SNS syntax) cut to its first `clauses` keys.
pub fn sns_policy(kind: char, clauses: usize) -> Value {
    let all: Map<String, Value> =
        serde_json::from_str(if kind == 'n' { NUMERIC } else { COMMON }).expect("policy");
    Value::Object(all.into_iter().take(clauses).collect())
}

/// A message every clause of the `pol*` policies holds on (so every clause runs), as a flat object.
pub fn passing_event() -> Value {
    json!({"event": "order.paid", "environment": "production", "amount": 149.5,
           "region": "eu-west-1", "subject": "orders.eu.created", "customer": "c123",
           "priority": 5, "source": "web"})
}

/// The seed's matching message.
pub fn seed_message() -> Message {
    Message::attributes([
        ("event", AttributeType::String, "order.paid"),
        ("environment", AttributeType::String, "production"),
        ("amount", AttributeType::Number, "149.50"),
    ])
}

/// An owned message's part as a subscription set reads it: its attributes, headers or body (an
/// empty message for the other forms).
pub fn parts(message: &Message) -> MessageParts<'_> {
    match message {
        Message::Attributes(a) => MessageParts::new().with_attributes(a.as_slice()),
        Message::Headers(h) => MessageParts::new().with_headers(h.as_slice()),
        Message::Body(b) => MessageParts::body(b),
        Message::Json(_) | Message::Unparsable => MessageParts::new(),
    }
}

/// A flat JSON object as SNS/basaltic attributes: strings → `String`, numbers → `Number` (their
/// JSON text), booleans → `String` (`true`/`false`); other members are left out.
pub fn attributes(object: &Value) -> Message {
    let mut attrs = Vec::new();
    if let Value::Object(map) = object {
        for (name, v) in map {
            let (t, text) = match v {
                Value::String(s) => (AttributeType::String, s.clone()),
                Value::Number(n) => (AttributeType::Number, n.to_string()),
                Value::Bool(b) => (AttributeType::String, b.to_string()),
                _ => continue,
            };
            attrs.push(filtervm_vm::message::Attribute {
                name: name.clone(),
                data_type: t,
                value: text,
            });
        }
    }
    Message::Attributes(attrs)
}

/// The same object in the vector shape the reference interpreter reads (`sns`: `Type`/`Value`,
/// `basaltic`: `type`/`value`).
pub fn reference_message(dialect: Dialect, object: &Value) -> Value {
    let (t, v) = if dialect == Dialect::Basaltic {
        ("type", "value")
    } else {
        ("Type", "Value")
    };
    let mut attrs = Map::new();
    if let Value::Object(map) = object {
        for (name, value) in map {
            let (ty, text) = match value {
                Value::String(s) => ("String", s.clone()),
                Value::Number(n) => ("Number", n.to_string()),
                Value::Bool(b) => ("String", b.to_string()),
                _ => continue,
            };
            attrs.insert(name.clone(), json!({t: ty, v: text}));
        }
    }
    json!({ "attributes": attrs })
}

/// A basaltic translation of an SNS policy: the clauses basaltic has (exact strings, prefix,
/// anything-but, exists, numeric); number lists become their text (`[3]` matches `"3"`, the same
/// on integer-valued messages). `wildcard` has no basaltic form and is left out.
pub fn basaltic_translation(policy: &Value) -> Value {
    let mut out = Map::new();
    if let Value::Object(map) = policy {
        for (name, alts) in map {
            let Value::Array(items) = alts else { continue };
            if items.iter().any(|a| a.get("wildcard").is_some()) {
                continue;
            }
            let items: Vec<Value> = items
                .iter()
                .map(|a| match a {
                    Value::Number(n) => Value::String(n.to_string()),
                    other => other.clone(),
                })
                .collect();
            out.insert(name.clone(), Value::Array(items));
        }
    }
    Value::Object(out)
}

/// A compiled single-policy workload.
pub struct Single {
    /// A name (`pol3n`, `seed`, ...).
    pub name: String,
    /// The dialect compiled.
    pub dialect: Dialect,
    /// The policy (for the reference interpreter and the peers).
    pub policy: Value,
    /// The number of clauses (policy keys) the program checks.
    pub clauses: usize,
    /// The program.
    pub program: Program,
}

/// Compiles a policy of any number of keys: each key is compiled as its own policy (so SNS's
/// 5-key limit, rule 42, does not reject the 8-clause workloads) and the lowered trees are ANDed,
/// optimized and generated exactly as `compile` does. For policies within the limits this gives
/// the program `compile` gives.
pub fn compile_clauses(dialect: Dialect, policy: &Value) -> Program {
    compile_clauses_with(dialect, policy, &dialect.into())
}

/// [`compile_clauses`] with dialect options.
pub fn compile_clauses_with(dialect: Dialect, policy: &Value, options: &Options) -> Program {
    let Value::Object(map) = policy else {
        panic!("policy is not an object")
    };
    match compile(dialect, policy, options) {
        Ok(f) => return f.program().clone(),
        // SNS takes at most 5 keys (rule 42): the 8-clause workloads are compiled key by key.
        Err(e)
            if e.errors
                .iter()
                .all(|x| x.message.contains("can not have more than 5 keys")) => {}
        Err(e) => panic!("{policy}: {e}"),
    }
    let parts: Vec<Node> = map
        .iter()
        .map(|(k, v)| {
            let one = json!({ k.clone(): v.clone() });
            let f: Filter =
                compile(dialect, &one, options).unwrap_or_else(|e| panic!("{one}: {e:?}"));
            f.lowered_ir()
                .expect("compiled filters keep their IR")
                .clone()
        })
        .collect();
    codegen::generate(&opt::optimize(Node::and(parts, ""))).expect("codegen")
}

/// The branch-free form of an AND-chain program (each clause `test [not] jump_if_false`, as codegen
/// emits for these policies): every test into its own register, combined with `and`, no jumps.
/// `None` for other shapes. For measuring dispatch alternatives only.
pub fn branch_free(program: &Program) -> Option<Program> {
    use filtervm_vm::op::{Inst, Reg};
    let mut parts = program.parts().clone();
    let mut code = Vec::new();
    let mut regs = 0u32;
    for inst in program.code() {
        match *inst {
            Inst::JumpIfFalse { .. } => {}
            Inst::Not { .. } => code.push(Inst::Not {
                dst: Reg(regs.checked_sub(1)?),
                src: Reg(regs.checked_sub(1)?),
            }),
            Inst::Ret { .. } => break,
            Inst::And { .. } | Inst::Or { .. } | Inst::JumpIfTrue { .. } | Inst::Const { .. } => {
                return None;
            }
            mut test => {
                set_dst(&mut test, Reg(regs))?;
                code.push(test);
                regs += 1;
            }
        }
    }
    for r in 1..regs {
        code.push(Inst::And {
            dst: Reg(0),
            a: Reg(0),
            b: Reg(r),
        });
    }
    code.push(Inst::Ret { src: Reg(0) });
    parts.origins = Vec::new();
    parts.code = code;
    parts.registers = regs.max(1);
    Program::new(parts).ok()
}

fn set_dst(inst: &mut filtervm_vm::op::Inst, r: filtervm_vm::op::Reg) -> Option<()> {
    use filtervm_vm::op::Inst;
    match inst {
        Inst::Shape { dst, .. }
        | Inst::HasType { dst, .. }
        | Inst::StrEq { dst, .. }
        | Inst::StrIn { dst, .. }
        | Inst::StrPrefix { dst, .. }
        | Inst::StrSuffix { dst, .. }
        | Inst::StrContains { dst, .. }
        | Inst::StrEqFold { dst, .. }
        | Inst::StrPrefixFold { dst, .. }
        | Inst::StrSuffixFold { dst, .. }
        | Inst::StrContainsFold { dst, .. }
        | Inst::Wildcard { dst, .. }
        | Inst::Segment { dst, .. }
        | Inst::Cidr { dst, .. }
        | Inst::NumIn { dst, .. }
        | Inst::TextNumIn { dst, .. }
        | Inst::DecIn { dst, .. }
        | Inst::BoolEq { dst, .. }
        | Inst::CmpNumIn { dst, .. }
        | Inst::NumTextIn { dst, .. }
        | Inst::AddrIn { dst, .. }
        | Inst::CaseIn { dst, .. }
        | Inst::Except { dst, .. } => *dst = r,
        _ => return None,
    }
    Some(())
}

/// The single-policy workloads: the seed (basaltic) and `pol{1,3,8}{c,n}` in SNS (a policy that
/// does not compile fails loudly in `compile_clauses`, never turns into another workload).
pub fn singles() -> Vec<Single> {
    let mut out = Vec::new();
    let seed: Value = serde_json::from_str(SEED_POLICY).expect("seed");
    out.push(Single {
        name: "seed".into(),
        dialect: Dialect::Basaltic,
        clauses: 4,
        program: compile_clauses(Dialect::Basaltic, &seed),
        policy: seed,
    });
    for kind in ['c', 'n'] {
        for clauses in [1, 3, 8] {
            let policy = sns_policy(kind, clauses);
            out.push(Single {
                name: format!("pol{clauses}{kind}"),
                dialect: Dialect::Sns,
                clauses,
                program: compile_clauses(Dialect::Sns, &policy),
                policy,
            });
        }
    }
    out
}

/// The message a single workload is measured on: the seed's own, or [`passing_event`].
pub fn single_message(single: &Single) -> Message {
    if single.name == "seed" {
        seed_message()
    } else {
        attributes(&passing_event())
    }
}

/// SNS options for MessageBody scope (the raw-bytes workloads: each attrs line is a body).
pub fn body_scope() -> Options {
    Options::from(SnsScope::MessageBody)
}

/// The `pol{clauses}c` policy compiled for SNS body scope (the raw-bytes workloads).
pub fn body_single(clauses: usize) -> Single {
    let policy = sns_policy('c', clauses);
    Single {
        name: format!("pol{clauses}c"),
        dialect: Dialect::Sns,
        clauses,
        program: compile_clauses_with(Dialect::Sns, &policy, &body_scope()),
        policy,
    }
}

/// The `pol{clauses}c` policy as an EventBridge pattern (the same JSON: every clause is valid
/// pattern syntax), compiled whole (EventBridge has no key limit), for the raw-bytes workloads
/// against the SNS body-scope program of [`body_single`] and quamina.
pub fn eventbridge_filter(clauses: usize) -> (Value, Filter) {
    let policy = sns_policy('c', clauses);
    let filter = filtervm_compiler::compile_text(
        Dialect::EventBridge,
        &policy.to_string(),
        &Options::EventBridge,
    )
    .expect("an eventbridge pattern");
    (policy, filter)
}

/// [`passing_event`] as the bytes of one JSON line.
pub fn passing_event_bytes() -> Vec<u8> {
    passing_event().to_string().into_bytes()
}

/// [`passing_event`] as headers (numbers as their text), in the order of the JSON line.
pub const PASSING_HEADERS: [(&str, &str); 8] = [
    ("event", "order.paid"),
    ("environment", "production"),
    ("amount", "149.5"),
    ("region", "eu-west-1"),
    ("subject", "orders.eu.created"),
    ("customer", "c123"),
    ("priority", "5"),
    ("source", "web"),
];

/// The one-clause header filter of the borrowed-headers workload (stream):
/// `event in [order.paid, order.created]`, the header counterpart of `pol1c`.
pub const HEADER_FILTER: &str = "event in [order.paid, order.created]";

/// [`HEADER_FILTER`] compiled.
pub fn header_filter() -> Filter {
    filtervm_compiler::compile_text(Dialect::Stream, HEADER_FILTER, &Options::Stream)
        .expect("compiles")
}

/// [`HEADER_FILTER`] written by hand over the same header slice: some header named `event` has
/// one of the two values.
#[inline]
pub fn hand_headers(headers: &[(&str, &str)]) -> bool {
    headers
        .iter()
        .any(|(n, v)| *n == "event" && (*v == "order.paid" || *v == "order.created"))
}

/// The cityfeat features the end-to-end rows read: those the 5 `cl_exact` patterns name (5 of
/// 50,000), then the first ones of the file, [`E2E_MESSAGES`] in all.
pub fn cityfeat_sample() -> Vec<String> {
    let wanted: Vec<String> = cityfeat_filters()
        .iter()
        .filter_map(|(f, _)| {
            f.pointer("/advancedFilters/0/values/0")?
                .as_str()
                .map(str::to_owned)
        })
        .map(|v| format!(r#""MAPBLKLOT": "{v}""#))
        .collect();
    let all = lines("cityfeat", usize::MAX);
    let mut sample: Vec<String> = all
        .iter()
        .filter(|l| wanted.iter().any(|w| l.contains(w.as_str())))
        .cloned()
        .collect();
    sample.extend(all.into_iter().take(E2E_MESSAGES - sample.len()));
    sample
}

/// A cityfeat line as an Event Grid event (the feature is the event's `data`).
pub fn cityfeat_event(feature: &str) -> Vec<u8> {
    format!(
        r#"{{"id": "1", "eventType": "CityLots.Feature", "subject": "/lots", "eventTime": "2024-01-01T00:00:00Z", "dataVersion": "1", "data": {feature}}}"#
    )
    .into_bytes()
}

/// The `cl_exact` patterns (`{"properties": {"MAPBLKLOT": [v]}}`) as Event Grid `StringIn`
/// filters on `data.properties.MAPBLKLOT`, and as quamina patterns on the same event
/// (`{"data": ...}`).
pub fn cityfeat_filters() -> Vec<(Value, String)> {
    lines("cl_exact", 5)
        .iter()
        .map(|line| {
            let pattern: Value = serde_json::from_str(line).expect("pattern");
            let mut path = vec!["data".to_owned()];
            let mut at = &pattern;
            while let Value::Object(map) = at {
                let (k, v) = map.iter().next().expect("one member");
                path.push(k.clone());
                at = v;
            }
            let filter = json!({"advancedFilters": [
                {"operatorType": "StringIn", "key": path.join("."), "values": at}
            ]});
            (filter, json!({ "data": pattern }).to_string())
        })
        .collect()
}

/// The hand-written floor of the cityfeat workloads: `data.properties.MAPBLKLOT` (an Event Grid
/// event) or `properties.MAPBLKLOT` (the feature as an SNS body) read by `serde_json` into a
/// struct (the rest validated and skipped), then compared with each filter's values.
pub struct CityfeatFloor {
    /// Each filter's values (from [`cityfeat_filters`]).
    values: Vec<Vec<String>>,
}

#[derive(serde::Deserialize)]
struct LotEvent<'a> {
    #[serde(borrow)]
    data: Option<LotData<'a>>,
}

#[derive(serde::Deserialize)]
struct LotData<'a> {
    #[serde(borrow)]
    properties: Option<LotProperties<'a>>,
}

#[derive(serde::Deserialize)]
struct LotProperties<'a> {
    #[serde(borrow, rename = "MAPBLKLOT")]
    lot: Option<Cow<'a, str>>,
}

impl CityfeatFloor {
    /// The floor of the filters [`cityfeat_filters`] returns.
    pub fn new(filters: &[(Value, String)]) -> CityfeatFloor {
        let values = filters
            .iter()
            .map(|(f, _)| {
                f.pointer("/advancedFilters/0/values")
                    .and_then(Value::as_array)
                    .expect("values")
                    .iter()
                    .map(|v| v.as_str().expect("a string").to_owned())
                    .collect()
            })
            .collect();
        CityfeatFloor { values }
    }

    /// How many filters an Event Grid event matches (`StringIn`: ASCII case-insensitively; the
    /// values are ASCII).
    pub fn event_matches(&self, event: &[u8]) -> usize {
        let lot = serde_json::from_slice::<LotEvent<'_>>(event)
            .ok()
            .and_then(|e| e.data?.properties?.lot);
        self.count(lot, |v, lot| v.eq_ignore_ascii_case(lot))
    }

    /// How many filters a feature read as an SNS body matches (SNS equality: exact).
    pub fn body_matches(&self, body: &[u8]) -> usize {
        let lot = serde_json::from_slice::<LotData<'_>>(body)
            .ok()
            .and_then(|d| d.properties?.lot);
        self.count(lot, |v, lot| v == lot)
    }

    fn count(&self, lot: Option<Cow<'_, str>>, equal: impl Fn(&str, &str) -> bool) -> usize {
        lot.map_or(0, |lot| {
            self.values
                .iter()
                .filter(|vs| vs.iter().any(|v| equal(v, &lot)))
                .count()
        })
    }
}

/// A message decoded into typed fields, the input of the hand-written checks (the counterpart of
/// a bound message: decoding is done before timing, as binding is for filtervm). [`decode`]
/// builds it from a parsed message (owned text); `serde_json::from_slice` builds it straight from
/// a message's bytes (text borrowed where it has no escapes, every member validated, the others
/// skipped): the hand-written floor from raw JSON.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Decoded<'a> {
    /// `event`.
    #[serde(borrow)]
    pub event: Option<Cow<'a, str>>,
    /// `environment`.
    #[serde(borrow)]
    pub environment: Option<Cow<'a, str>>,
    /// `amount`.
    pub amount: Option<f64>,
    /// `region`.
    #[serde(borrow)]
    pub region: Option<Cow<'a, str>>,
    /// `priority`.
    pub priority: Option<f64>,
    /// `source`.
    #[serde(borrow)]
    pub source: Option<Cow<'a, str>>,
    /// `subject`.
    #[serde(borrow)]
    pub subject: Option<Cow<'a, str>>,
    /// `customer`.
    #[serde(borrow)]
    pub customer: Option<Cow<'a, str>>,
    /// `test`, when present (its value is not read).
    pub test: Option<serde::de::IgnoredAny>,
}

/// Decodes a flat message object.
pub fn decode(object: &Value) -> Decoded<'static> {
    let s = |k: &str| {
        object
            .get(k)
            .and_then(Value::as_str)
            .map(|t| Cow::Owned(t.to_owned()))
    };
    let n = |k: &str| {
        object.get(k).and_then(|v| match v {
            Value::Number(n) => n.as_f64(),
            Value::String(t) => t.parse().ok(),
            _ => None,
        })
    };
    Decoded {
        event: s("event"),
        environment: s("environment"),
        amount: n("amount"),
        region: s("region"),
        priority: n("priority"),
        source: s("source"),
        subject: s("subject"),
        customer: s("customer"),
        test: object.get("test").map(|_| serde::de::IgnoredAny),
    }
}

/// A hand-written Rust check.
pub type Hand = fn(&Decoded<'_>) -> bool;

fn is(v: &Option<Cow<'_, str>>, f: impl Fn(&str) -> bool) -> bool {
    v.as_deref().is_some_and(f)
}

fn event(d: &Decoded<'_>) -> bool {
    is(&d.event, |e| e == "order.paid" || e == "order.created")
}

fn common(d: &Decoded<'_>, clauses: usize) -> bool {
    let all: [&dyn Fn(&Decoded<'_>) -> bool; 8] = [
        &event,
        &|d| is(&d.environment, |e| e == "production"),
        &|d| is(&d.region, |r| r.starts_with("eu-")),
        &|d| is(&d.source, |s| s != "batch"),
        &|d| {
            is(&d.subject, |s| {
                s.len() >= "orders..created".len()
                    && s.starts_with("orders.")
                    && s.ends_with(".created")
            })
        },
        &|d| is(&d.customer, |c| c.starts_with("c1")),
        &|d| {
            d.priority
                .is_some_and(|p| (3.0..=9.0).contains(&p) && p.fract() == 0.0)
        },
        &|d| d.amount.is_some(),
    ];
    all.iter().take(clauses).all(|c| c(d))
}

fn numeric(d: &Decoded<'_>, clauses: usize) -> bool {
    let all: [&dyn Fn(&Decoded<'_>) -> bool; 8] = [
        &event,
        &|d| is(&d.environment, |e| e == "production"),
        &|d| d.amount.is_some_and(|a| (100.0..1000.0).contains(&a)),
        &|d| is(&d.region, |r| r.starts_with("eu-")),
        &|d| d.priority.is_some_and(|p| p > 2.0),
        &|d| is(&d.source, |s| s != "batch"),
        &|d| {
            is(&d.subject, |s| {
                s.len() >= "orders..created".len()
                    && s.starts_with("orders.")
                    && s.ends_with(".created")
            })
        },
        &|d| is(&d.customer, |c| c.starts_with("c1")),
    ];
    all.iter().take(clauses).all(|c| c(d))
}

/// The hand-written check of a single workload (written out per workload, as a service would:
/// plain comparisons on decoded fields, no interpretation).
pub fn hand(name: &str) -> Option<Hand> {
    Some(match name {
        "seed" => |d| {
            event(d)
                && is(&d.environment, |e| e == "production")
                && d.amount.is_some_and(|a| (100.0..1000.0).contains(&a))
                && d.test.is_none()
        },
        "pol1c" => |d| event(d),
        "pol3c" => |d| {
            event(d)
                && is(&d.environment, |e| e == "production")
                && is(&d.region, |r| r.starts_with("eu-"))
        },
        "pol8c" => |d| common(d, 8),
        "pol1n" => |d| event(d),
        "pol3n" => |d| {
            event(d)
                && is(&d.environment, |e| e == "production")
                && d.amount.is_some_and(|a| (100.0..1000.0).contains(&a))
        },
        "pol8n" => |d| numeric(d, 8),
        _ => return None,
    })
}

/// The same conditions hand-written over the *bound* message: direct reads of the slots and
/// leaves the VM reads (slot indices looked up once), no interpretation. The VM's overhead over
/// this is its dispatch; over [`hand`] it is also the generic binding.
pub struct HandBound {
    name: String,
    slots: Vec<usize>,
}

impl HandBound {
    /// The hand-written bound check of a single workload, for its program's key table.
    pub fn new(single: &Single) -> Option<HandBound> {
        let keys: &[&str] = match single.name.as_str() {
            "seed" => &["event", "environment", "amount", "test"],
            "pol1c" | "pol1n" => &["event"],
            "pol3c" => &["event", "environment", "region"],
            "pol3n" => &["event", "environment", "amount"],
            "pol8c" | "pol8n" => &[
                "event",
                "environment",
                "amount",
                "region",
                "priority",
                "source",
                "subject",
                "customer",
            ],
            _ => return None,
        };
        let table = single.program.keys();
        let slots = keys
            .iter()
            .map(|k| {
                let key = if single.dialect == Dialect::Basaltic {
                    Key::AttributeText((*k).into())
                } else {
                    Key::AttributeTyped((*k).into())
                };
                table.get(&key).map_or(usize::MAX, |s| s as usize)
            })
            .collect();
        Some(HandBound {
            name: single.name.clone(),
            slots,
        })
    }

    /// Runs the check.
    #[inline]
    pub fn check(&self, b: &Bound<'_>) -> bool {
        let slot = |i: usize| b.slot(0, self.slots.get(i).copied().unwrap_or(usize::MAX));
        let strs = |i: usize, f: &dyn Fn(&str) -> bool| {
            slot(i).leaves().any(|l| l.as_str().is_some_and(f))
        };
        let nums =
            |i: usize, f: &dyn Fn(f64) -> bool| slot(i).leaves().any(|l| l.as_f64().is_some_and(f));
        let event = || strs(0, &|v| v == "order.paid" || v == "order.created");
        let env = || strs(1, &|v| v == "production");
        let wildcard = |v: &str| {
            v.len() >= "orders..created".len()
                && v.starts_with("orders.")
                && v.ends_with(".created")
        };
        match self.name.as_str() {
            "seed" => {
                event()
                    && env()
                    && slot(2)
                        .leaves()
                        .any(|l| l.as_str().is_some() && (100.0..1000.0).contains(&l.text_number()))
                    && slot(3).shape == Shape::Absent
            }
            "pol1c" | "pol1n" => event(),
            "pol3c" => event() && env() && strs(2, &|v| v.starts_with("eu-")),
            "pol3n" => event() && env() && nums(2, &|x| (100.0..1000.0).contains(&x)),
            "pol8c" => {
                slot(5).shape != Shape::Absent
                    && slot(2).shape != Shape::Absent
                    && event()
                    && env()
                    && strs(3, &|v| v.starts_with("eu-"))
                    && !strs(5, &|v| v == "batch")
                    && strs(7, &|v| v.starts_with("c1"))
                    && nums(4, &|x| (3.0..=9.0).contains(&x) && x.fract() == 0.0)
                    && strs(6, &wildcard)
            }
            "pol8n" => {
                slot(5).shape != Shape::Absent
                    && event()
                    && env()
                    && nums(2, &|x| (100.0..1000.0).contains(&x))
                    && strs(3, &|v| v.starts_with("eu-"))
                    && nums(4, &|x| x > 2.0)
                    && !strs(5, &|v| v == "batch")
                    && strs(7, &|v| v.starts_with("c1"))
                    && strs(6, &wildcard)
            }
            _ => false,
        }
    }
}

/// The same conditions in CEL, over a map `m` of the message's fields (numbers as doubles).
pub fn cel(name: &str) -> Option<String> {
    let clause = |key: &str| -> String {
        match key {
            "event" => r#"has(m.event) && m.event in ["order.paid", "order.created"]"#.into(),
            "environment" => r#"has(m.environment) && m.environment == "production""#.into(),
            "region" => r#"has(m.region) && m.region.startsWith("eu-")"#.into(),
            "source" => r#"has(m.source) && m.source != "batch""#.into(),
            "subject" => r#"has(m.subject) && m.subject.matches("^orders\\..*\\.created$")"#.into(),
            "customer" => r#"has(m.customer) && m.customer.startsWith("c1")"#.into(),
            "priority_list" => {
                "has(m.priority) && m.priority in [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]".into()
            }
            "priority_gt" => "has(m.priority) && m.priority > 2.0".into(),
            "amount_exists" => "has(m.amount)".into(),
            "amount_range" => "has(m.amount) && m.amount >= 100.0 && m.amount < 1000.0".into(),
            "no_test" => "!has(m.test)".into(),
            _ => "false".into(),
        }
    };
    let keys: Vec<&str> = match name {
        "seed" => vec!["event", "environment", "amount_range", "no_test"],
        "pol1c" | "pol1n" => vec!["event"],
        "pol3c" => vec!["event", "environment", "region"],
        "pol3n" => vec!["event", "environment", "amount_range"],
        "pol8c" => vec![
            "event",
            "environment",
            "region",
            "source",
            "subject",
            "customer",
            "priority_list",
            "amount_exists",
        ],
        "pol8n" => vec![
            "event",
            "environment",
            "amount_range",
            "region",
            "priority_gt",
            "source",
            "subject",
            "customer",
        ],
        _ => return None,
    };
    Some(
        keys.into_iter()
            .map(|k| format!("({})", clause(k)))
            .collect::<Vec<_>>()
            .join(" && "),
    )
}

/// A policy-text workload of the compile benches: what `compile_text` is given.
#[derive(Debug, Clone)]
pub struct CompileWorkload {
    /// A name (`pol3c`, `pol3c_body`, ...).
    pub name: &'static str,
    /// The dialect.
    pub dialect: Dialect,
    /// Its options.
    pub options: Options,
    /// The policy text.
    pub text: String,
}

/// `pol8c`'s eight clauses in the stream text form (SNS allows five keys per policy, rule 42;
/// stream allows eight clauses per group).
pub const POL8C_STREAM: &str = "event in [order.paid, order.created] and environment = production and region = eu-* and source != batch and subject = orders.*.created and customer = c1* and priority in [3, 4, 5, 6, 7, 8, 9] and amount exists";

/// The compile workloads: `pol{1,3}c` and `pol3n` as SNS policy text (attribute scope), `pol3c`
/// in body scope, the seed (basaltic, 4 clauses), and the eight-clause policies, which SNS rejects
/// (more than five keys, rule 42): `pol8c` and `pol8n` in their basaltic translation (7 clauses
/// each: basaltic has no wildcard) and `pol8c` in the stream text form (8 clauses).
pub fn compile_workloads() -> Vec<CompileWorkload> {
    let sns = |name, kind, n, options: Options| CompileWorkload {
        name,
        dialect: Dialect::Sns,
        options,
        text: sns_policy(kind, n).to_string(),
    };
    let basaltic = |name, text: String| CompileWorkload {
        name,
        dialect: Dialect::Basaltic,
        options: Options::Basaltic,
        text,
    };
    vec![
        sns("pol1c", 'c', 1, Dialect::Sns.into()),
        sns("pol3c", 'c', 3, Dialect::Sns.into()),
        sns("pol3n", 'n', 3, Dialect::Sns.into()),
        sns("pol3c_body", 'c', 3, body_scope()),
        basaltic("seed", SEED_POLICY.to_owned()),
        basaltic(
            "pol8c_basaltic",
            basaltic_translation(&sns_policy('c', 8)).to_string(),
        ),
        basaltic(
            "pol8n_basaltic",
            basaltic_translation(&sns_policy('n', 8)).to_string(),
        ),
        CompileWorkload {
            name: "pol8c_stream",
            dialect: Dialect::Stream,
            options: Options::Stream,
            text: POL8C_STREAM.to_owned(),
        },
    ]
}

/// The message of a single workload as a flat JSON object (for the peers).
pub fn single_event(single: &Single) -> Value {
    if single.name == "seed" {
        json!({"event": "order.paid", "environment": "production", "amount": 149.50})
    } else {
        passing_event()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated workloads: `lines` generates them (`data_dir`) when they are missing, so
    /// these checks always run.
    #[test]
    fn embedded_policies_equal_the_generated_ones() {
        for kind in ['c', 'n'] {
            for n in [1, 3, 8] {
                let line = &lines(&format!("pol{n}{kind}"), 1)[0];
                let generated: Value = serde_json::from_str(line).unwrap();
                assert_eq!(generated, sns_policy(kind, n), "pol{n}{kind}");
            }
        }
    }

    #[test]
    fn every_compile_workload_compiles() {
        for w in compile_workloads() {
            let f = filtervm_compiler::compile_text(w.dialect, &w.text, &w.options)
                .unwrap_or_else(|e| panic!("{}: {e}", w.name));
            assert!(f.program().code().len() > 1, "{}", w.name);
        }
    }

    /// The workloads take the first clauses in the order `COMMON` and `NUMERIC` write them (as
    /// `workloads.py` does): a map that sorts its keys would make `pol1c` an `exists` test.
    #[test]
    fn workload_policies_keep_the_written_order_of_clauses() {
        let keys = |kind, n| -> Vec<String> {
            sns_policy(kind, n)
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(keys('c', 3), ["event", "environment", "region"]);
        assert_eq!(keys('n', 3), ["event", "environment", "amount"]);
    }

    /// The cityfeat floor reads the lot where each form holds it and compares as its dialect
    /// does: `StringIn` case-insensitively, SNS equality exactly.
    #[test]
    fn the_cityfeat_floor_compares_as_each_dialect_does() {
        let filter = json!({"advancedFilters": [{"operatorType": "StringIn",
            "key": "data.properties.MAPBLKLOT", "values": ["ab1", "x"]}]});
        let floor = CityfeatFloor::new(&[(filter.clone(), String::new()), (filter, String::new())]);
        assert_eq!(
            floor.event_matches(br#"{"data": {"properties": {"MAPBLKLOT": "AB1"}}}"#),
            2
        );
        assert_eq!(
            floor.event_matches(br#"{"data": {"properties": {"LOT": "ab1"}}}"#),
            0
        );
        assert_eq!(
            floor.event_matches(br#"{"data": {"properties": {"MAPBLKLOT": "ab1"}"#),
            0
        );
        assert_eq!(
            floor.body_matches(br#"{"properties": {"MAPBLKLOT": "ab1"}}"#),
            2
        );
        assert_eq!(
            floor.body_matches(br#"{"properties": {"MAPBLKLOT": "AB1"}}"#),
            0
        );
    }

    #[test]
    fn every_single_workload_matches_its_message() {
        for s in singles() {
            let mut scratch = filtervm_vm::bind::Bindings::new();
            let message = single_message(&s);
            let b = scratch.bind(s.program.keys(), &message);
            assert!(s.program.eval(&b, &mut Vec::new()), "{}", s.name);
            let hand = hand(&s.name).unwrap();
            assert!(hand(&decode(&single_event(&s))), "hand {}", s.name);
            assert!(
                HandBound::new(&s).unwrap().check(&b),
                "hand bound {}",
                s.name
            );
        }
    }

    #[test]
    fn hand_checks_agree_with_filtervm_on_generated_messages() {
        let messages: Vec<Value> = lines("attrs", 3000)
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for s in singles().into_iter().filter(|s| s.name != "seed") {
            let hand = hand(&s.name).unwrap();
            let bound = HandBound::new(&s).unwrap();
            let mut scratch = filtervm_vm::bind::Bindings::new();
            for m in &messages {
                let message = attributes(m);
                let b = scratch.bind(s.program.keys(), &message);
                let vm = s.program.eval(&b, &mut Vec::new());
                assert_eq!(vm, hand(&decode(m)), "{} on {m}", s.name);
                assert_eq!(vm, bound.check(&b), "{} bound on {m}", s.name);
            }
        }
    }
}

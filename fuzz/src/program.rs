//! The structured generator of the `program_from_bytes` target (see `README.md`).
//!
//! Raw bytes rarely get past the decoder's framing, and a generated policy compiles to a small
//! program; neither reaches what only large programs show (a load that allocates more than the
//! encoding implies, a plan whose size is not linear in the program's). Here the fuzz bytes
//! choose a program directly: keys, every pool (entries that a few bytes can make thousands of
//! items long), and a block of instructions repeated up to thousands of times, with forward jumps
//! and registers other than `r0` now and then. The program is verified and encoded with the real
//! encoder; the bytes left over edit the encoding. Checked:
//!
//! - the unedited encoding loads, encodes to the same bytes again, and gives the same verdicts as
//!   the program it came from;
//! - the decision plan and the general register executor agree: the same program with one more
//!   register written first gets no plan and must answer the same on every message;
//! - an edited encoding loads or is rejected, never panics, and what loads runs.
//!
//! Memory and time are libFuzzer's to bound (`-rss_limit_mb`, `-timeout`): loading must stay in
//! proportion to the encoding, so a program of n instructions reading one n-item list must not
//! cost n² to load. Evaluating such a program may (each step is linear in the pool entry it reads,
//! see `vm/src/wire.rs`), so verdicts are only compared when instructions × largest entry stays
//! under [`EVALUATION_BUDGET`].

use filtervm_conformance::generate::{Bytes, Source};
use filtervm_vm::address::Block;
use filtervm_vm::bind::Bindings;
use filtervm_vm::case_pattern::{CaseMode, CasePattern};
use filtervm_vm::cidr::Cidr;
use filtervm_vm::key::Key;
use filtervm_vm::message::{Attribute, AttributeType, Header, Message};
use filtervm_vm::number::Decimal;
use filtervm_vm::op::{
    BlockRef, CaseRef, CidrRef, DecRangesRef, Inst, ListRef, PatRef, RangesRef, Reg, SetRef,
    SlotRef, StrRef, Target, TestsRef, WildRef,
};
use filtervm_vm::pattern::SegmentPattern;
use filtervm_vm::program::{DecInterval, Interval, Program, ProgramParts};
use filtervm_vm::value::{LeafTypes, Shapes};
use filtervm_vm::wildcard::Wildcard;
use serde_json::{Value, json};

/// Verdicts are compared only when the code length times the largest pool entry is at most this.
pub const EVALUATION_BUDGET: usize = 1 << 22;

/// The most items a long pool entry, and the most repetitions of the instruction block.
const LONG: u32 = 1 << 14;

/// Pieces of strings: case pairs, letters whose fold changes their length (`ı`, `ɐ`) or that have
/// none (`ß`), the separators of wildcards and segment patterns, numbers.
const ATOMS: [&str; 20] = [
    "a", "A", "b", "é", "É", "ı", "I", "ɐ", "Ɐ", "ß", "σ", "Σ", ".", "*", "-", "1", "10", "2.5",
    "e3", "",
];

const NAMES: [&str; 3] = ["a", "b", "c"];

/// The most bytes of strings in one many-item pool entry (a megabyte; long runs of atoms make
/// single strings of up to 64 KB).
const MANY_BYTES: usize = 1 << 20;

fn string(src: &mut Bytes<'_>) -> String {
    if src.chance(10) {
        // A long run of one atom: long values and long constants.
        let atom = *src.pick(&ATOMS);
        return atom.repeat(src.below(LONG) as usize);
    }
    short_string(src)
}

fn short_string(src: &mut Bytes<'_>) -> String {
    (0..src.below(5)).map(|_| *src.pick(&ATOMS)).collect()
}

fn number(src: &mut Bytes<'_>) -> f64 {
    *src.pick(&[
        0.0,
        -1.0,
        1.0,
        2.5,
        10.0,
        1e3,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ])
}

/// The items of a pool entry: a few, or (one time in five) up to [`LONG`].
fn items<T>(src: &mut Bytes<'_>, mut make: impl FnMut(&mut Bytes<'_>, usize) -> T) -> Vec<T> {
    let count = if src.chance(20) {
        src.below(LONG)
    } else {
        src.below(5)
    };
    (0..count as usize).map(|i| make(src, i)).collect()
}

/// Strings of a list or set: a few of any length, or many short ones, or many copies of one
/// template with their index appended (distinct, sharing their beginning: the worst case for
/// prefix search and for substring automata), at most [`MANY_BYTES`] in all.
fn strings(src: &mut Bytes<'_>) -> Vec<std::sync::Arc<str>> {
    match src.below(5) {
        0 => {
            let template = string(src);
            let count = (src.below(LONG) as usize).min(MANY_BYTES / (template.len() + 8));
            (0..count)
                .map(|i| format!("{template}{i}").into())
                .collect()
        }
        1 => (0..src.below(LONG))
            .map(|_| short_string(src).into())
            .collect(),
        _ => (0..src.below(5)).map(|_| string(src).into()).collect(),
    }
}

fn interval(src: &mut Bytes<'_>) -> Interval {
    let (a, b) = (number(src), number(src));
    Interval {
        lo: a.min(b),
        lo_inclusive: src.chance(50),
        hi: a.max(b),
        hi_inclusive: src.chance(50),
    }
}

fn dec_interval(src: &mut Bytes<'_>) -> DecInterval {
    let texts = ["0", "-1", "1.5", "9007199254740993", "1e400", "0.1"];
    let bound = |src: &mut Bytes<'_>| {
        if src.chance(20) {
            return None;
        }
        let text = *src.pick(&texts);
        Decimal::parse(text).map(|d| (d, src.chance(50)))
    };
    let (lo, hi) = (bound(src), bound(src));
    DecInterval {
        lo,
        hi,
        text: "generated".into(),
    }
}

fn pools(src: &mut Bytes<'_>, p: &mut ProgramParts) {
    let pools = &mut p.pools;
    for _ in 0..=src.below(3) {
        pools.strings.push(string(src).into());
        pools.lists.push(strings(src));
        pools.sets.push(strings(src).into_iter().collect());
        pools.ranges.push(items(src, |src, _| interval(src)));
        pools
            .dec_ranges
            .push(items(src, |src, _| dec_interval(src)));
        if let Ok(w) = Wildcard::compile(&string(src)) {
            pools.wildcards.push(w);
        }
        if let Ok(s) = SegmentPattern::compile(&string(src)) {
            pools.patterns.push(s);
        }
        let cidr = *src.pick(&["10.0.0.0/8", "192.168.1.0/24", "::1/128", "2001:db8::/32"]);
        if let Ok(c) = Cidr::parse(cidr) {
            pools.cidrs.push(c);
        }
        // EventBridge: address blocks (EB-13, EB-27) and full-mapping case patterns (EB-20).
        let block = *src.pick(&["10.0.0.0/8", "010.0.0.1", "::ffff:a00:0/104", "2001:db8::1"]);
        if let Ok(b) = Block::from_source(block) {
            pools.blocks.push(b);
        }
        let mode = *src.pick(&CaseMode::ALL);
        pools.cases.push(CasePattern::new(&string(src), mode));
    }
    // Leaf tests for `except`: tests of one leaf on the constants above (r0 and slot 0, which
    // codegen writes there too).
    for _ in 0..=src.below(2) {
        let tests: Vec<Inst> = (0..src.below(3))
            .map(|_| match src.below(4) {
                0 => Inst::StrIn {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    set: SetRef(index(src, pools.sets.len())),
                },
                1 => Inst::CmpNumIn {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    ranges: RangesRef(index(src, pools.ranges.len())),
                },
                2 => Inst::CaseIn {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    pat: CaseRef(index(src, pools.cases.len())),
                },
                _ => Inst::StrPrefix {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    list: ListRef(index(src, pools.lists.len())),
                },
            })
            .collect();
        pools.leaf_tests.push(tests);
    }
    // Every pool non-empty, so that any instruction can be made.
    if pools.wildcards.is_empty()
        && let Ok(w) = Wildcard::compile("a*")
    {
        pools.wildcards.push(w);
    }
    if pools.patterns.is_empty()
        && let Ok(s) = SegmentPattern::compile("a.*")
    {
        pools.patterns.push(s);
    }
    if pools.blocks.is_empty()
        && let Ok(b) = Block::cidr("10.0.0.0/8")
    {
        pools.blocks.push(b);
    }
}

fn keys(src: &mut Bytes<'_>, p: &mut ProgramParts) {
    for _ in 0..=src.below(4) {
        let name: std::sync::Arc<str> = (*src.pick(&NAMES)).into();
        let key = match src.below(4) {
            0 => Key::Header(name),
            1 => Key::EventMember(name),
            2 => Key::FieldPath(name, src.below(3)),
            _ => Key::AttributeTyped(name),
        };
        p.keys.intern(key);
    }
}

fn index(src: &mut Bytes<'_>, len: usize) -> u32 {
    src.below(u32::try_from(len).unwrap_or(u32::MAX))
}

/// One instruction of the block; jumps get a forward distance, made absolute later.
enum Planned {
    Inst(Inst),
    Jump {
        if_true: bool,
        cond: Reg,
        ahead: u32,
    },
}

fn reg(src: &mut Bytes<'_>) -> Reg {
    // Mostly r0 (programs that get a plan), sometimes another register (ones that do not).
    Reg(if src.chance(90) { 0 } else { 1 + src.below(3) })
}

fn planned(src: &mut Bytes<'_>, p: &ProgramParts) -> Planned {
    let dst = reg(src);
    let slot = SlotRef(index(src, p.keys.len()));
    let pools = &p.pools;
    let list = ListRef(index(src, pools.lists.len()));
    let ranges = RangesRef(index(src, pools.ranges.len()));
    Planned::Inst(match src.below(29) {
        0 => Inst::Shape {
            dst,
            slot,
            shapes: Shapes(u8::try_from(src.below(u32::from(Shapes::ALL.0) + 1)).unwrap_or(0)),
        },
        1 => Inst::HasType {
            dst,
            slot,
            types: LeafTypes(u8::try_from(src.below(u32::from(LeafTypes::ALL.0) + 1)).unwrap_or(0)),
        },
        2 => Inst::StrEq {
            dst,
            slot,
            s: StrRef(index(src, pools.strings.len())),
        },
        3 => Inst::StrIn {
            dst,
            slot,
            set: SetRef(index(src, pools.sets.len())),
        },
        4 => Inst::StrPrefix { dst, slot, list },
        5 => Inst::StrSuffix { dst, slot, list },
        6 => Inst::StrContains { dst, slot, list },
        7 => Inst::StrEqFold { dst, slot, list },
        8 => Inst::StrPrefixFold { dst, slot, list },
        9 => Inst::StrSuffixFold { dst, slot, list },
        10 => Inst::StrContainsFold { dst, slot, list },
        11 => Inst::Wildcard {
            dst,
            slot,
            pat: WildRef(index(src, pools.wildcards.len())),
        },
        12 => Inst::Segment {
            dst,
            slot,
            pat: PatRef(index(src, pools.patterns.len())),
        },
        13 => Inst::Cidr {
            dst,
            slot,
            net: CidrRef(index(src, pools.cidrs.len())),
        },
        14 => Inst::NumIn { dst, slot, ranges },
        15 => Inst::TextNumIn { dst, slot, ranges },
        16 => Inst::DecIn {
            dst,
            slot,
            ranges: DecRangesRef(index(src, pools.dec_ranges.len())),
        },
        17 => Inst::BoolEq {
            dst,
            slot,
            value: src.chance(50),
        },
        18 => Inst::Not { dst, src: reg(src) },
        19 => Inst::Const {
            dst,
            value: src.chance(50),
        },
        20 => Inst::And {
            dst,
            a: reg(src),
            b: reg(src),
        },
        21 => Inst::Or {
            dst,
            a: reg(src),
            b: reg(src),
        },
        22 => Inst::CmpNumIn { dst, slot, ranges },
        23 => Inst::NumTextIn { dst, slot, list },
        24 => Inst::AddrIn {
            dst,
            slot,
            block: BlockRef(index(src, pools.blocks.len())),
        },
        25 => Inst::CaseIn {
            dst,
            slot,
            pat: CaseRef(index(src, pools.cases.len())),
        },
        26 => Inst::Except {
            dst,
            slot,
            tests: TestsRef(index(src, pools.leaf_tests.len())),
        },
        _ => {
            return Planned::Jump {
                if_true: src.chance(50),
                cond: reg(src),
                ahead: 1 + src.below(8),
            };
        }
    })
}

/// A program chosen by `src`, or `None` when the verifier rejects it.
pub fn program(src: &mut Bytes<'_>) -> Option<ProgramParts> {
    let mut p = ProgramParts::default();
    keys(src, &mut p);
    pools(src, &mut p);
    let block: Vec<Planned> = (0..=src.below(16)).map(|_| planned(src, &p)).collect();
    let repeat = if src.chance(25) {
        src.below(LONG)
    } else {
        src.below(4)
    };
    let len = block.len() * (repeat as usize + 1) + 1;
    let last = u32::try_from(len - 1).ok()?;
    for at in 0..len - 1 {
        let here = u32::try_from(at).ok()?;
        p.code.push(match block.get(at % block.len())? {
            Planned::Inst(inst) => *inst,
            &Planned::Jump {
                if_true,
                cond,
                ahead,
            } => {
                let target = Target(here.saturating_add(ahead).min(last));
                if if_true {
                    Inst::JumpIfTrue { cond, target }
                } else {
                    Inst::JumpIfFalse { cond, target }
                }
            }
        });
    }
    p.code.push(Inst::Ret { src: reg(src) });
    p.registers = 4;
    Some(p)
}

/// The same program with a register of its own written first: it gets no decision plan, so it
/// runs on the general register executor (see `vm/src/plan.rs`).
fn without_plan(parts: &ProgramParts) -> Option<Program> {
    let mut p = parts.clone();
    let extra = Reg(p.registers);
    p.registers += 1;
    for inst in &mut p.code {
        if let Inst::JumpIfFalse { target, .. } | Inst::JumpIfTrue { target, .. } = inst {
            target.0 += 1;
        }
    }
    p.code.insert(
        0,
        Inst::Const {
            dst: extra,
            value: false,
        },
    );
    Program::new(p).ok()
}

/// Messages for the generated keys: headers, an event and typed attributes with the same values.
fn messages(src: &mut Bytes<'_>) -> Vec<Message> {
    let mut headers = Vec::new();
    let mut event = serde_json::Map::new();
    let mut attributes = Vec::new();
    for name in NAMES {
        if src.chance(25) {
            continue;
        }
        let values: Vec<String> = (0..=src.below(2)).map(|_| string(src)).collect();
        let first = values.first().cloned().unwrap_or_default();
        event.insert(
            name.to_owned(),
            match src.below(4) {
                0 => json!(first),
                1 => json!(values),
                2 => first
                    .parse::<serde_json::Number>()
                    .map_or(Value::Null, Value::Number),
                _ => json!(src.chance(50)),
            },
        );
        attributes.push(Attribute {
            name: name.to_owned(),
            data_type: if first.parse::<f64>().is_ok() && src.chance(50) {
                AttributeType::Number
            } else {
                AttributeType::String
            },
            value: first,
        });
        headers.push(Header {
            name: name.to_owned(),
            values,
        });
    }
    vec![
        Message::Headers(headers),
        Message::Json(Value::Object(event)),
        Message::Attributes(attributes),
    ]
}

fn verdict(program: &Program, message: &Message) -> bool {
    let mut bindings = Bindings::new();
    let bound = bindings.bind(program.keys(), message);
    program.eval(&bound, &mut Vec::new())
}

/// The largest pool entry, in items (or bytes, for single strings).
fn largest_entry(p: &ProgramParts) -> usize {
    let pools = &p.pools;
    let lists = pools
        .lists
        .iter()
        .map(|l| l.len().max(l.iter().map(|s| s.len()).max().unwrap_or(0)));
    let sets = pools.sets.iter().map(|s| s.len());
    let ranges = pools.ranges.iter().map(Vec::len);
    let decs = pools.dec_ranges.iter().map(Vec::len);
    let strings = pools.strings.iter().map(|s| s.len());
    lists
        .chain(sets)
        .chain(ranges)
        .chain(decs)
        .chain(strings)
        .max()
        .unwrap_or(0)
        .max(1)
}

/// The structured mode of `program_from_bytes` (see the module documentation).
pub fn structured(data: &[u8]) {
    let mut src = Bytes::new(data);
    let Some(parts) = program(&mut src) else {
        return;
    };
    let Ok(program) = Program::new(parts.clone()) else {
        return;
    };
    let bytes = program.to_bytes();
    let loaded = Program::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("a program's own encoding does not load: {e}"));
    // The same program: it encodes to the same bytes. (Not the disassembly: it writes each
    // instruction's pool entry in full, so it is instructions × entry long.)
    assert!(
        loaded.to_bytes() == bytes,
        "the loaded program encodes differently"
    );
    let evaluate = program.code().len().saturating_mul(largest_entry(&parts)) <= EVALUATION_BUDGET;
    let messages = messages(&mut src);
    if evaluate {
        let general = without_plan(&parts).expect("the program with one more register verifies");
        for message in &messages {
            let expected = verdict(&general, message);
            assert_eq!(
                verdict(&program, message),
                expected,
                "plan versus register executor on {message:?}\n{}",
                program.disassemble()
            );
            assert_eq!(verdict(&loaded, message), expected, "the loaded program");
        }
    }
    // Edits: the rest of the input flips bytes of the encoding.
    let mut edited = bytes;
    let mut changed = false;
    while !src.is_empty() && !edited.is_empty() {
        let at = src.below(u32::try_from(edited.len()).unwrap_or(u32::MAX)) as usize;
        let xor = u8::try_from(src.below(256)).unwrap_or(1);
        if let Some(b) = edited.get_mut(at) {
            *b ^= xor;
            changed |= xor != 0;
        }
    }
    if !changed {
        return;
    }
    if let Ok(program) = Program::from_bytes(&edited)
        && program
            .code()
            .len()
            .saturating_mul(largest_entry(program.parts()))
            <= EVALUATION_BUDGET
    {
        for message in &messages {
            let _ = verdict(&program, message);
        }
    }
}

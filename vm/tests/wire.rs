//! Bytecode on the wire (the format `vm/src/wire.rs` documents): round trips over every opcode and
//! pool kind, random programs, corruption (every truncation, every byte flipped) and hand-crafted
//! hostile programs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_vm::address::Block;
use filtervm_vm::bind::Bindings;
use filtervm_vm::case_pattern::{CaseMode, CasePattern};
use filtervm_vm::cidr::Cidr;
use filtervm_vm::key::Key;
use filtervm_vm::message::{AttributeType, Header, Message};
use filtervm_vm::number::Decimal;
use filtervm_vm::op::*;
use filtervm_vm::pattern::SegmentPattern;
use filtervm_vm::program::{DecInterval, Interval, Program, ProgramParts};
use filtervm_vm::value::{LeafTypes, Shapes};
use filtervm_vm::wildcard::Wildcard;
use filtervm_vm::wire::{self, FORMAT_VERSION, WireError};
use serde_json::json;

/// A tiny deterministic PRNG (xorshift64*), so the tests need no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn dec(text: &str) -> Decimal {
    Decimal::parse(text).expect("decimal")
}

/// The mnemonics of format version 1, in opcode order. New instructions may be appended to
/// `for_each_op!`; anything else changes the meaning of shipped bytes.
const V1_OPCODES: &[&str] = &[
    "const",
    "shape",
    "has_type",
    "str_eq",
    "str_in",
    "str_prefix",
    "str_suffix",
    "str_contains",
    "str_eq_fold",
    "str_prefix_fold",
    "str_suffix_fold",
    "str_contains_fold",
    "wildcard",
    "segment",
    "cidr",
    "num_in",
    "text_num_in",
    "dec_in",
    "bool_eq",
    "and",
    "or",
    "not",
    "jump_if_false",
    "jump_if_true",
    "ret",
];

#[test]
fn opcode_numbering_is_pinned_for_format_version_1() {
    assert_eq!(FORMAT_VERSION, 1);
    for (i, name) in V1_OPCODES.iter().enumerate() {
        assert_eq!(
            Opcode::ALL.get(i).map(|o| o.mnemonic()),
            Some(*name),
            "opcode {i} changed: append new instructions at the end of for_each_op!, or bump \
             wire::FORMAT_VERSION"
        );
    }
}

/// A program holding every key kind, every pool kind (two entries each) and every opcode.
fn every_opcode_parts() -> ProgramParts {
    let mut p = ProgramParts::default();
    let h = p.keys.intern(Key::Header("h".into()));
    let n = p.keys.intern(Key::Header("n".into()));
    let b = p.keys.intern(Key::Header("b".into()));
    p.keys.intern(Key::AttributeText("at".into()));
    p.keys.intern(Key::AttributeTyped("ty".into()));
    p.keys.intern(Key::AnyAttribute);
    p.keys.intern(Key::BodyPath("a.b".into()));
    p.keys.intern(Key::BodyPathEach("a.c".into()));
    p.keys.intern(Key::FieldPath("a.d.e".into(), 1));
    p.keys.intern(Key::BodyIsObject);
    p.keys.intern(Key::EventMember("eventType".into()));
    p.keys
        .intern(Key::EventData(vec!["x".into(), "y é".into()].into()));
    p.keys.intern(Key::EventData(Vec::new().into()));
    let pools = &mut p.pools;
    pools.strings = vec!["eu-west".into(), "ünïcode".into()];
    pools.lists = vec![
        vec!["eu".into(), "us".into()],
        vec!["WEST".into(), "".into()],
    ];
    pools.sets = vec![
        ["eu-west", "us-east", "b", "a"]
            .into_iter()
            .map(std::sync::Arc::from)
            .collect::<StrSet>(),
        std::iter::empty().collect(),
    ];
    pools.ranges = vec![
        vec![
            Interval {
                lo: 1.0,
                lo_inclusive: true,
                hi: 10.0,
                hi_inclusive: false,
            },
            Interval::point(-0.0),
        ],
        vec![Interval::ALL, Interval::point(f64::MAX)],
    ];
    pools.dec_ranges = vec![
        vec![DecInterval {
            lo: Some((dec("9007199254740993"), true)),
            hi: Some((dec("1e400"), false)),
            text: "[9007199254740993, 1e400)".into(),
        }],
        vec![
            DecInterval {
                lo: None,
                hi: Some((dec("-0.1"), true)),
                text: "(-inf, -0.1]".into(),
            },
            DecInterval {
                lo: Some((dec("5"), false)),
                hi: None,
                text: "(5, +inf)".into(),
            },
        ],
    ];
    pools.wildcards = vec![
        Wildcard::compile("eu-*").unwrap(),
        Wildcard::compile(r"a\*b*c").unwrap(),
    ];
    pools.patterns = vec![
        SegmentPattern::compile("eu.*.x").unwrap(),
        SegmentPattern::compile("**.west").unwrap(),
    ];
    pools.cidrs = vec![
        Cidr::parse("10.0.0.0/8").unwrap(),
        Cidr::parse("::ffff:0:0/96").unwrap(),
    ];
    pools.blocks = vec![
        Block::cidr("10.0.0.5/30").unwrap(),
        Block::address("2001:db8::1").unwrap(),
    ];
    pools.cases = vec![
        CasePattern::new("ß", CaseMode::Equals),
        CasePattern::new("EventB", CaseMode::Prefix),
    ];
    pools.leaf_tests = vec![
        vec![
            Inst::StrIn {
                dst: Reg(0),
                slot: SlotRef(0),
                set: SetRef(0),
            },
            Inst::CaseIn {
                dst: Reg(0),
                slot: SlotRef(0),
                pat: CaseRef(1),
            },
        ],
        Vec::new(),
    ];
    let (sh, sn, sb) = (SlotRef(h), SlotRef(n), SlotRef(b));
    p.code = vec![
        Inst::Const {
            dst: Reg(0),
            value: false,
        },
        Inst::Shape {
            dst: Reg(1),
            slot: sh,
            shapes: Shapes::PRESENT,
        },
        Inst::HasType {
            dst: Reg(2),
            slot: sn,
            types: LeafTypes::STR,
        },
        Inst::StrEq {
            dst: Reg(3),
            slot: sh,
            s: StrRef(0),
        },
        Inst::StrIn {
            dst: Reg(4),
            slot: sh,
            set: SetRef(0),
        },
        Inst::StrPrefix {
            dst: Reg(5),
            slot: sh,
            list: ListRef(0),
        },
        Inst::StrSuffix {
            dst: Reg(6),
            slot: sh,
            list: ListRef(1),
        },
        Inst::StrContains {
            dst: Reg(7),
            slot: sh,
            list: ListRef(0),
        },
        Inst::StrEqFold {
            dst: Reg(8),
            slot: sh,
            list: ListRef(1),
        },
        Inst::StrPrefixFold {
            dst: Reg(9),
            slot: sh,
            list: ListRef(1),
        },
        Inst::StrSuffixFold {
            dst: Reg(10),
            slot: sh,
            list: ListRef(1),
        },
        Inst::StrContainsFold {
            dst: Reg(11),
            slot: sh,
            list: ListRef(1),
        },
        Inst::Wildcard {
            dst: Reg(12),
            slot: sh,
            pat: WildRef(0),
        },
        Inst::Segment {
            dst: Reg(13),
            slot: sh,
            pat: PatRef(1),
        },
        Inst::Cidr {
            dst: Reg(14),
            slot: sh,
            net: CidrRef(0),
        },
        Inst::NumIn {
            dst: Reg(15),
            slot: sn,
            ranges: RangesRef(0),
        },
        Inst::TextNumIn {
            dst: Reg(16),
            slot: sn,
            ranges: RangesRef(0),
        },
        Inst::DecIn {
            dst: Reg(17),
            slot: sn,
            ranges: DecRangesRef(1),
        },
        Inst::BoolEq {
            dst: Reg(18),
            slot: sb,
            value: true,
        },
        Inst::CmpNumIn {
            dst: Reg(22),
            slot: sn,
            ranges: RangesRef(1),
        },
        Inst::NumTextIn {
            dst: Reg(23),
            slot: sn,
            list: ListRef(0),
        },
        Inst::AddrIn {
            dst: Reg(24),
            slot: sh,
            block: BlockRef(1),
        },
        Inst::CaseIn {
            dst: Reg(25),
            slot: sh,
            pat: CaseRef(0),
        },
        Inst::Except {
            dst: Reg(26),
            slot: sh,
            tests: TestsRef(0),
        },
        // r19 = r1 & r3; r20 = r12 | r14; r21 = !r16
        Inst::And {
            dst: Reg(19),
            a: Reg(1),
            b: Reg(3),
        },
        Inst::Or {
            dst: Reg(20),
            a: Reg(12),
            b: Reg(14),
        },
        Inst::Not {
            dst: Reg(21),
            src: Reg(16),
        },
        Inst::JumpIfTrue {
            cond: Reg(19),
            target: Target(30),
        },
        Inst::JumpIfFalse {
            cond: Reg(20),
            target: Target(31),
        },
        Inst::Ret { src: Reg(21) },
        Inst::Ret { src: Reg(19) },
        Inst::Ret { src: Reg(0) },
    ];
    p.registers = 27;
    p.sources = vec!["/h".into(), "/n/0".into(), "".into()];
    p.origins = (0..p.code.len() as u32)
        .map(|i| if i % 4 == 3 { u32::MAX } else { i % 3 })
        .collect();
    p
}

fn headers(h: &str, n: &str, b: &str) -> Message {
    Message::Headers(vec![
        Header {
            name: "h".into(),
            values: vec![h.into()],
        },
        Header {
            name: "n".into(),
            values: vec![n.into(), "x".into()],
        },
        Header {
            name: "b".into(),
            values: vec![b.into()],
        },
    ])
}

/// Messages of every shape, for running decoded programs.
fn sample_messages() -> Vec<Message> {
    let mut out = vec![
        headers("eu-west", "5", "true"),
        headers("EU-WEST", "1e400", "x"),
        headers("a.b.west", "9007199254740993", ""),
        headers("10.1.2.3", "-0.1", ""),
        headers("ünïcode", "3", "y"),
        Message::Headers(Vec::new()),
        Message::attributes([
            ("at", AttributeType::String, "eu-west"),
            ("ty", AttributeType::Number, "7"),
            ("h", AttributeType::StringArray, r#"["eu-west", 5]"#),
        ]),
        Message::Json(json!({"a": {"b": "eu-west", "c": [1, {"d": 2}]}, "h": "eu-west"})),
        Message::Json(json!({"a": [{"b": 1, "c": 2}, {"b": "x", "c": true}]})),
        Message::Json(json!({"eventType": "eu-west", "data": {"x": {"y é": 5}}})),
        Message::Json(json!([1, 2])),
        Message::Unparsable,
    ];
    out.push(Message::Json(json!("scalar")));
    out
}

fn verdicts(program: &Program, messages: &[Message]) -> Vec<bool> {
    let mut bindings = Bindings::new();
    let mut registers = Vec::new();
    messages
        .iter()
        .map(|m| program.eval(&bindings.bind(program.keys(), m), &mut registers))
        .collect()
}

/// Checks that `decoded` holds exactly the parts of `original`.
fn assert_same_parts(original: &Program, decoded: &Program) {
    let (a, b) = (original.parts(), decoded.parts());
    assert_eq!(a.keys.keys(), b.keys.keys());
    assert_eq!(a.pools.strings, b.pools.strings);
    assert_eq!(a.pools.lists, b.pools.lists);
    assert_eq!(a.pools.sets, b.pools.sets);
    assert_eq!(a.pools.ranges.len(), b.pools.ranges.len());
    for (x, y) in a.pools.ranges.iter().zip(&b.pools.ranges) {
        assert_eq!(x.len(), y.len());
        for (i, j) in x.iter().zip(y) {
            assert_eq!(i.lo.to_bits(), j.lo.to_bits());
            assert_eq!(i.hi.to_bits(), j.hi.to_bits());
            assert_eq!(
                (i.lo_inclusive, i.hi_inclusive),
                (j.lo_inclusive, j.hi_inclusive)
            );
        }
    }
    assert_eq!(a.pools.dec_ranges, b.pools.dec_ranges);
    assert_eq!(a.pools.wildcards, b.pools.wildcards);
    assert_eq!(a.pools.patterns, b.pools.patterns);
    assert_eq!(a.pools.cidrs, b.pools.cidrs);
    assert_eq!(a.pools.blocks, b.pools.blocks);
    assert_eq!(a.pools.cases, b.pools.cases);
    assert_eq!(a.pools.leaf_tests, b.pools.leaf_tests);
    assert_eq!(a.code, b.code);
    assert_eq!(a.origins, b.origins);
    assert_eq!(a.sources, b.sources);
    assert_eq!(a.registers, b.registers);
    assert_eq!(original.disassemble(), decoded.disassemble());
}

#[test]
fn round_trip_every_opcode_and_every_pool_kind() {
    let parts = every_opcode_parts();
    let used: std::collections::HashSet<Opcode> = parts.code.iter().map(Inst::opcode).collect();
    for op in Opcode::ALL {
        assert!(
            used.contains(op),
            "the round-trip program lacks `{}`: add it to every_opcode_parts",
            op.mnemonic()
        );
    }
    let program = Program::new(parts).expect("verifies");
    let bytes = program.to_bytes_with_metadata(b"\x00meta\xff");
    let decoded = wire::decode(&bytes).expect("decodes");
    assert_eq!(decoded.metadata, b"\x00meta\xff");
    assert_same_parts(&program, &decoded.program);
    // Canonical: encoding the decoded program gives the same bytes (sets are written sorted).
    assert_eq!(
        decoded.program.to_bytes_with_metadata(b"\x00meta\xff"),
        bytes
    );
    let messages = sample_messages();
    let expected = verdicts(&program, &messages);
    assert_eq!(verdicts(&decoded.program, &messages), expected);
    assert!(expected.iter().any(|v| *v) && expected.iter().any(|v| !*v));
    // `from_bytes` ignores the metadata.
    assert_same_parts(&program, &Program::from_bytes(&bytes).expect("decodes"));
}

#[test]
fn golden_encoding_of_a_tiny_program() {
    let mut parts = ProgramParts::default();
    parts.keys.intern(Key::Header("h".into()));
    parts.pools.strings.push("v".into());
    parts.code = vec![
        Inst::StrEq {
            dst: Reg(0),
            slot: SlotRef(0),
            s: StrRef(0),
        },
        Inst::Ret { src: Reg(0) },
    ];
    parts.registers = 1;
    let bytes = Program::new(parts).unwrap().to_bytes_with_metadata(b"m");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        concat!(
            "46564d50", "0100", "0000", // magic FVMP, version 1, flags 0
            "01", "01000000", "6d", // metadata: "m"
            "02", "0a000000", "01000000", "03", "01000000", "68", // keys: header "h"
            "03", "09000000", "01000000", "01000000", "76", // strings: "v"
            "04", "04000000", "00000000", // lists
            "05", "04000000", "00000000", // sets
            "06", "04000000", "00000000", // ranges
            "07", "04000000", "00000000", // dec ranges
            "08", "04000000", "00000000", // wildcards
            "09", "04000000", "00000000", // patterns
            "0a", "04000000", "00000000", // cidrs
            "0b", "1a000000", "01000000", "02000000", // code: 1 register, 2 instructions
            "03", "00000000", "00000000", "00000000", // str_eq r0, slot0, str0
            "18", "00000000", // ret r0
            "0c", "08000000", "00000000", "00000000", // origins: none
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Random programs
// ---------------------------------------------------------------------------------------------

const WORDS: &[&str] = &[
    "", "a", "ab", "a.b", "eu-west", "EU-WEST", "10.0.0.1", "::1", "5", "5.0", "-3", "1e3", "true",
    "x.y.z", "ß", "ǅ",
];

fn random_parts(rng: &mut XorShift) -> ProgramParts {
    let mut p = ProgramParts::default();
    let names = ["h", "n", "b", "a.b", "", ".", "a..b", "é"];
    for _ in 0..1 + rng.below(4) {
        let name = *rng.pick(&names);
        let key = match rng.below(10) {
            0 => Key::AttributeText(name.into()),
            8 => Key::FieldPath(name.into(), rng.below(3) as u32),
            1 => Key::AttributeTyped(name.into()),
            2 => Key::AnyAttribute,
            3 => Key::BodyPath(name.into()),
            4 => Key::BodyPathEach(name.into()),
            5 => Key::EventMember(name.into()),
            6 => Key::EventData(name.split('.').map(Box::from).collect()),
            _ => Key::Header(name.into()),
        };
        p.keys.intern(key);
    }
    let word = |rng: &mut XorShift| std::sync::Arc::<str>::from(*rng.pick(WORDS));
    let pools = &mut p.pools;
    for _ in 0..1 + rng.below(3) {
        pools.strings.push(word(rng));
        pools
            .lists
            .push((0..rng.below(4)).map(|_| word(rng)).collect());
        pools
            .sets
            .push((0..rng.below(4)).map(|_| word(rng)).collect());
        let bound = |rng: &mut XorShift| *rng.pick(&[-3.0, 0.0, 1.0, 5.0, 1e3, f64::INFINITY]);
        pools.ranges.push(
            (0..rng.below(3))
                .map(|_| Interval {
                    lo: -bound(rng),
                    lo_inclusive: rng.chance(50),
                    hi: bound(rng),
                    hi_inclusive: rng.chance(50),
                })
                .collect(),
        );
        let dbound = |rng: &mut XorShift| {
            rng.chance(80).then(|| {
                (
                    dec(rng.pick::<&str>(&["-3", "0", "5", "5.5", "1e3", "9007199254740993"])),
                    rng.chance(50),
                )
            })
        };
        pools.dec_ranges.push(
            (0..rng.below(3))
                .map(|_| DecInterval {
                    lo: dbound(rng),
                    hi: dbound(rng),
                    text: "random".into(),
                })
                .collect(),
        );
        pools.wildcards.push(
            Wildcard::compile(rng.pick::<&str>(&["*", "a*", "*.b", "e*-*t", r"\\"])).unwrap(),
        );
        pools.patterns.push(
            SegmentPattern::compile(rng.pick::<&str>(&["*", "a.*", "**", "**.z", "e*t"])).unwrap(),
        );
        pools.cidrs.push(
            Cidr::parse(rng.pick::<&str>(&["10.0.0.0/8", "0.0.0.0/0", "::/0", "::1/128"])).unwrap(),
        );
        pools.blocks.push(
            Block::from_source(rng.pick::<&str>(&["10.0.0.0/8", "010.0.0.1", "::1", "::/0"]))
                .unwrap(),
        );
        pools.cases.push(CasePattern::new(
            rng.pick::<&str>(&["", "a", "ß", "EventB", "İx"]),
            *rng.pick(&CaseMode::ALL),
        ));
    }
    // Leaf tests for `except`: each a test of one leaf, on constants made above.
    for _ in 0..1 + rng.below(2) {
        let tests = (0..rng.below(3))
            .map(|_| match rng.below(4) {
                0 => Inst::StrIn {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    set: SetRef(rng.below(p.pools.sets.len()) as u32),
                },
                1 => Inst::CmpNumIn {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    ranges: RangesRef(rng.below(p.pools.ranges.len()) as u32),
                },
                2 => Inst::CaseIn {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    pat: CaseRef(rng.below(p.pools.cases.len()) as u32),
                },
                _ => Inst::Wildcard {
                    dst: Reg(0),
                    slot: SlotRef(0),
                    pat: WildRef(rng.below(p.pools.wildcards.len()) as u32),
                },
            })
            .collect();
        p.pools.leaf_tests.push(tests);
    }
    let pools = &mut p.pools;
    let registers = 1 + rng.below(6) as u32;
    let len = 1 + rng.below(30);
    let reg = |rng: &mut XorShift| Reg(rng.below(registers as usize) as u32);
    let slot = |rng: &mut XorShift| SlotRef(rng.below(p.keys.len()) as u32);
    let mut code = Vec::new();
    for at in 0..len {
        let np = 3;
        let idx = |rng: &mut XorShift| rng.below(np) as u32;
        let target = |rng: &mut XorShift| Target((at + 1 + rng.below(len - at)) as u32);
        let op = *rng.pick(Opcode::ALL);
        let (d, s) = (reg(rng), slot(rng));
        let inst = match op {
            Opcode::Const => Inst::Const {
                dst: d,
                value: rng.chance(50),
            },
            Opcode::Shape => Inst::Shape {
                dst: d,
                slot: s,
                shapes: Shapes(rng.below(32) as u8),
            },
            Opcode::HasType => Inst::HasType {
                dst: d,
                slot: s,
                types: LeafTypes(rng.below(16) as u8),
            },
            Opcode::StrEq => Inst::StrEq {
                dst: d,
                slot: s,
                s: StrRef(rng.below(pools.strings.len()) as u32),
            },
            Opcode::StrIn => Inst::StrIn {
                dst: d,
                slot: s,
                set: SetRef(rng.below(pools.sets.len()) as u32),
            },
            Opcode::StrPrefix
            | Opcode::StrSuffix
            | Opcode::StrContains
            | Opcode::StrEqFold
            | Opcode::StrPrefixFold
            | Opcode::StrSuffixFold
            | Opcode::StrContainsFold => {
                let list = ListRef(rng.below(pools.lists.len()) as u32);
                match op {
                    Opcode::StrPrefix => Inst::StrPrefix {
                        dst: d,
                        slot: s,
                        list,
                    },
                    Opcode::StrSuffix => Inst::StrSuffix {
                        dst: d,
                        slot: s,
                        list,
                    },
                    Opcode::StrContains => Inst::StrContains {
                        dst: d,
                        slot: s,
                        list,
                    },
                    Opcode::StrEqFold => Inst::StrEqFold {
                        dst: d,
                        slot: s,
                        list,
                    },
                    Opcode::StrPrefixFold => Inst::StrPrefixFold {
                        dst: d,
                        slot: s,
                        list,
                    },
                    Opcode::StrSuffixFold => Inst::StrSuffixFold {
                        dst: d,
                        slot: s,
                        list,
                    },
                    _ => Inst::StrContainsFold {
                        dst: d,
                        slot: s,
                        list,
                    },
                }
            }
            Opcode::Wildcard => Inst::Wildcard {
                dst: d,
                slot: s,
                pat: WildRef(idx(rng).min(pools.wildcards.len() as u32 - 1)),
            },
            Opcode::Segment => Inst::Segment {
                dst: d,
                slot: s,
                pat: PatRef(idx(rng).min(pools.patterns.len() as u32 - 1)),
            },
            Opcode::Cidr => Inst::Cidr {
                dst: d,
                slot: s,
                net: CidrRef(idx(rng).min(pools.cidrs.len() as u32 - 1)),
            },
            Opcode::NumIn => Inst::NumIn {
                dst: d,
                slot: s,
                ranges: RangesRef(rng.below(pools.ranges.len()) as u32),
            },
            Opcode::TextNumIn => Inst::TextNumIn {
                dst: d,
                slot: s,
                ranges: RangesRef(rng.below(pools.ranges.len()) as u32),
            },
            Opcode::DecIn => Inst::DecIn {
                dst: d,
                slot: s,
                ranges: DecRangesRef(rng.below(pools.dec_ranges.len()) as u32),
            },
            Opcode::BoolEq => Inst::BoolEq {
                dst: d,
                slot: s,
                value: rng.chance(50),
            },
            Opcode::And => Inst::And {
                dst: d,
                a: reg(rng),
                b: reg(rng),
            },
            Opcode::Or => Inst::Or {
                dst: d,
                a: reg(rng),
                b: reg(rng),
            },
            Opcode::Not => Inst::Not {
                dst: d,
                src: reg(rng),
            },
            Opcode::JumpIfFalse => Inst::JumpIfFalse {
                cond: d,
                target: target(rng),
            },
            Opcode::JumpIfTrue => Inst::JumpIfTrue {
                cond: d,
                target: target(rng),
            },
            Opcode::Ret => Inst::Ret { src: d },
            Opcode::CmpNumIn => Inst::CmpNumIn {
                dst: d,
                slot: s,
                ranges: RangesRef(rng.below(pools.ranges.len()) as u32),
            },
            Opcode::NumTextIn => Inst::NumTextIn {
                dst: d,
                slot: s,
                list: ListRef(rng.below(pools.lists.len()) as u32),
            },
            Opcode::AddrIn => Inst::AddrIn {
                dst: d,
                slot: s,
                block: BlockRef(rng.below(pools.blocks.len()) as u32),
            },
            Opcode::CaseIn => Inst::CaseIn {
                dst: d,
                slot: s,
                pat: CaseRef(rng.below(pools.cases.len()) as u32),
            },
            Opcode::Except => Inst::Except {
                dst: d,
                slot: s,
                tests: TestsRef(rng.below(pools.leaf_tests.len()) as u32),
            },
        };
        code.push(inst);
    }
    code.push(Inst::Ret { src: reg(rng) });
    if rng.chance(50) {
        p.sources = vec!["/a".into(), "/b/0".into()];
        p.origins = (0..code.len())
            .map(|_| *rng.pick(&[0, 1, u32::MAX]))
            .collect();
    }
    p.code = code;
    p.registers = registers;
    p
}

fn random_message(rng: &mut XorShift) -> Message {
    let names = ["h", "n", "b", "a.b", "x", "a", ""];
    match rng.below(3) {
        0 => Message::Headers(
            (0..rng.below(4))
                .map(|_| Header {
                    name: rng.pick(&names).to_string(),
                    values: (0..1 + rng.below(2))
                        .map(|_| rng.pick(WORDS).to_string())
                        .collect(),
                })
                .collect(),
        ),
        1 => {
            let types = [
                AttributeType::String,
                AttributeType::Number,
                AttributeType::StringArray,
                AttributeType::Binary,
            ];
            Message::Attributes(
                (0..rng.below(4))
                    .map(|_| filtervm_vm::message::Attribute {
                        name: rng.pick(&names).to_string(),
                        data_type: *rng.pick(&types),
                        value: rng.pick(WORDS).to_string(),
                    })
                    .collect(),
            )
        }
        _ => {
            let mut obj = serde_json::Map::new();
            for _ in 0..rng.below(4) {
                let v = match rng.below(5) {
                    0 => json!(rng.pick(WORDS)),
                    1 => json!(rng.below(10)),
                    2 => json!(rng.chance(50)),
                    3 => json!([rng.pick(WORDS), 5, null]),
                    4 if rng.chance(50) => {
                        json!([{"b": rng.pick(WORDS)}, {"b": 5, "h": [true]}, [{"b": "a"}]])
                    }
                    _ => json!({"b": rng.pick(WORDS), "h": 3}),
                };
                obj.insert(rng.pick(&names).to_string(), v);
            }
            if rng.chance(30) {
                let inner = serde_json::Value::Object(obj.clone());
                obj.insert("data".into(), inner);
            }
            Message::Json(serde_json::Value::Object(obj))
        }
    }
}

#[test]
fn property_random_programs_round_trip_and_behave_the_same() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for case in 0..400 {
        let program = Program::new(random_parts(&mut rng))
            .unwrap_or_else(|e| panic!("case {case}: generated program does not verify: {e}"));
        let bytes = program.to_bytes();
        let decoded = Program::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("case {case}: round trip failed: {e}"));
        assert_same_parts(&program, &decoded);
        assert_eq!(decoded.to_bytes(), bytes, "case {case}: not canonical");
        let messages: Vec<Message> = (0..8).map(|_| random_message(&mut rng)).collect();
        assert_eq!(
            verdicts(&decoded, &messages),
            verdicts(&program, &messages),
            "case {case}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Corruption
// ---------------------------------------------------------------------------------------------

#[test]
fn every_truncation_is_rejected() {
    let bytes = Program::new(every_opcode_parts())
        .unwrap()
        .to_bytes_with_metadata(b"meta");
    for len in 0..bytes.len() {
        assert!(
            wire::decode(&bytes[..len]).is_err(),
            "a truncation to {len} of {} bytes was accepted",
            bytes.len()
        );
    }
    assert!(wire::decode(&bytes).is_ok());
}

#[test]
fn flipping_any_byte_never_panics() {
    let messages = sample_messages();
    let mut rng = XorShift(7);
    let mut programs = vec![Program::new(every_opcode_parts()).unwrap()];
    for _ in 0..8 {
        programs.push(Program::new(random_parts(&mut rng)).unwrap());
    }
    let mut accepted = 0usize;
    let mut rejected = 0usize;
    for program in &programs {
        let bytes = program.to_bytes_with_metadata(b"{}");
        for at in 0..bytes.len() {
            for mask in [0x01u8, 0x80, 0xff, 0x10] {
                let mut corrupt = bytes.clone();
                corrupt[at] ^= mask;
                match Program::from_bytes(&corrupt) {
                    Ok(p) => {
                        accepted += 1;
                        // A verified program runs on anything without panicking.
                        let _ = verdicts(&p, &messages);
                        let _ = p.disassemble();
                    }
                    Err(e) => {
                        rejected += 1;
                        assert!(!e.to_string().is_empty());
                    }
                }
            }
        }
    }
    assert!(accepted > 0 && rejected > 0, "{accepted} / {rejected}");
}

#[test]
fn random_garbage_and_random_splices_never_panic() {
    let mut rng = XorShift(42);
    let valid = Program::new(every_opcode_parts()).unwrap().to_bytes();
    // FILTERVM_WIRE_ITERATIONS raises the count for a longer local run.
    let iterations = std::env::var("FILTERVM_WIRE_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000usize);
    for _ in 0..iterations {
        let mut bytes = valid.clone();
        // Overwrite a random run with random bytes, or cut and splice.
        match rng.below(3) {
            0 => {
                let at = rng.below(bytes.len());
                for b in bytes.iter_mut().skip(at).take(1 + rng.below(8)) {
                    *b = rng.next() as u8;
                }
            }
            1 => {
                let a = rng.below(bytes.len());
                let b = rng.below(bytes.len());
                let piece = bytes[a.min(b)..a.max(b)].to_vec();
                let at = rng.below(bytes.len());
                bytes.splice(at..at, piece);
            }
            _ => {
                bytes = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
                if rng.chance(50) {
                    bytes.splice(0..0, *b"FVMP\x01\x00\x00\x00");
                }
            }
        }
        if let Ok(p) = Program::from_bytes(&bytes) {
            let _ = verdicts(&p, &sample_messages());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-crafted hostile programs
// ---------------------------------------------------------------------------------------------

/// Section bodies of a program, written by hand (independently of the encoder).
struct Raw {
    sections: Vec<(u8, Vec<u8>)>,
}

fn u32le(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

fn string(s: &[u8]) -> Vec<u8> {
    let mut out = u32le(s.len() as u32);
    out.extend_from_slice(s);
    out
}

fn code_body(registers: u32, code: &[Inst]) -> Vec<u8> {
    let mut out = u32le(registers);
    out.extend(u32le(code.len() as u32));
    for i in code {
        i.encode(&mut out);
    }
    out
}

impl Raw {
    /// One header key `h`, no pools, `code` with `registers`, no origins.
    fn new(registers: u32, code: &[Inst]) -> Raw {
        let mut keys = u32le(1);
        keys.push(3);
        keys.extend(string(b"h"));
        let mut sections = vec![(1, Vec::new()), (2, keys)];
        for id in 3..=10 {
            sections.push((id, u32le(0)));
        }
        sections.push((11, code_body(registers, code)));
        let mut origins = u32le(0);
        origins.extend(u32le(0));
        sections.push((12, origins));
        Raw { sections }
    }

    fn set(mut self, id: u8, body: Vec<u8>) -> Raw {
        for s in &mut self.sections {
            if s.0 == id {
                s.1 = body.clone();
            }
        }
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = b"FVMP\x01\x00\x00\x00".to_vec();
        for (id, body) in &self.sections {
            out.push(*id);
            out.extend(u32le(body.len() as u32));
            out.extend_from_slice(body);
        }
        out
    }
}

fn ret0() -> Vec<Inst> {
    vec![Inst::Ret { src: Reg(0) }]
}

fn verify_reason(raw: &Raw) -> String {
    match Program::from_bytes(&raw.bytes()) {
        Err(WireError::Verify(e)) => e.to_string(),
        other => panic!("expected a verifier error, got {other:?}"),
    }
}

#[test]
fn hand_written_minimal_program_is_accepted() {
    let raw = Raw::new(1, &ret0());
    let p = Program::from_bytes(&raw.bytes()).expect("valid");
    assert_eq!(p.code(), &ret0()[..]);
}

#[test]
fn hostile_backward_jump_is_rejected() {
    let code = [
        Inst::Const {
            dst: Reg(0),
            value: true,
        },
        Inst::JumpIfTrue {
            cond: Reg(0),
            target: Target(0),
        },
        Inst::Ret { src: Reg(0) },
    ];
    let reason = verify_reason(&Raw::new(1, &code));
    assert!(
        reason.contains("instruction 1") && reason.contains("forward"),
        "{reason}"
    );
}

#[test]
fn hostile_jump_to_self_is_rejected() {
    let code = [
        Inst::JumpIfFalse {
            cond: Reg(0),
            target: Target(0),
        },
        Inst::Ret { src: Reg(0) },
    ];
    let reason = verify_reason(&Raw::new(1, &code));
    assert!(reason.contains("does not lie forward"), "{reason}");
}

#[test]
fn hostile_jump_past_the_end_is_rejected() {
    let code = [
        Inst::JumpIfFalse {
            cond: Reg(0),
            target: Target(2),
        },
        Inst::Ret { src: Reg(0) },
    ];
    assert!(verify_reason(&Raw::new(1, &code)).contains("past the end"));
}

#[test]
fn hostile_slot_out_of_range_is_rejected() {
    let code = [
        Inst::Shape {
            dst: Reg(0),
            slot: SlotRef(1),
            shapes: Shapes::PRESENT,
        },
        Inst::Ret { src: Reg(0) },
    ];
    assert!(verify_reason(&Raw::new(1, &code)).contains("slot1 out of range"));
}

#[test]
fn hostile_register_out_of_range_is_rejected() {
    let code = [Inst::Ret { src: Reg(5) }];
    assert!(verify_reason(&Raw::new(1, &code)).contains("r5 out of range"));
    let code = [
        Inst::Not {
            dst: Reg(u32::MAX),
            src: Reg(0),
        },
        Inst::Ret { src: Reg(0) },
    ];
    assert!(verify_reason(&Raw::new(1, &code)).contains("out of range"));
}

#[test]
fn hostile_pool_index_out_of_range_is_rejected() {
    let code = [
        Inst::StrEq {
            dst: Reg(0),
            slot: SlotRef(0),
            s: StrRef(0),
        },
        Inst::Ret { src: Reg(0) },
    ];
    assert!(verify_reason(&Raw::new(1, &code)).contains("str0 out of range"));
}

#[test]
fn hostile_register_counts_are_rejected() {
    assert!(verify_reason(&Raw::new(0, &ret0())).contains("register count"));
    assert!(verify_reason(&Raw::new(u32::MAX, &ret0())).contains("register count"));
}

#[test]
fn hostile_code_without_ret_or_empty_is_rejected() {
    let code = [Inst::Const {
        dst: Reg(0),
        value: true,
    }];
    assert!(verify_reason(&Raw::new(1, &code)).contains("not ret"));
    assert!(verify_reason(&Raw::new(1, &[])).contains("instruction count"));
}

#[test]
fn hostile_huge_declared_counts_are_rejected_before_allocating() {
    // Instruction count.
    let mut body = u32le(1);
    body.extend(u32le(u32::MAX));
    let err = Program::from_bytes(&Raw::new(1, &ret0()).set(11, body).bytes()).unwrap_err();
    assert!(
        matches!(err, WireError::CountTooLarge { what: "code", count, .. } if count == u64::from(u32::MAX)),
        "{err:?}"
    );
    // Key count, string count, list count, nested list count.
    for (id, body) in [
        (2, u32le(u32::MAX)),
        (3, u32le(0x4000_0000)),
        (4, u32le(1_000_000)),
        (4, [u32le(1), u32le(u32::MAX)].concat()),
        (5, [u32le(1), u32le(u32::MAX)].concat()),
        (6, [u32le(1), u32le(2)].concat()),
        (7, [u32le(1), u32le(9)].concat()),
        (8, u32le(2)),
    ] {
        let err = Program::from_bytes(&Raw::new(1, &ret0()).set(id, body).bytes()).unwrap_err();
        assert!(
            matches!(err, WireError::CountTooLarge { .. }),
            "section {id}: {err:?}"
        );
    }
    // A string length far beyond the input.
    let err = Program::from_bytes(
        &Raw::new(1, &ret0())
            .set(3, [u32le(1), u32le(u32::MAX)].concat())
            .bytes(),
    )
    .unwrap_err();
    assert!(matches!(err, WireError::Truncated { .. }), "{err:?}");
    // A section length beyond the input.
    let mut bytes = Raw::new(1, &ret0()).bytes();
    bytes[9..13].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        Program::from_bytes(&bytes),
        Err(WireError::Truncated {
            what: "metadata",
            ..
        })
    ));
}

#[test]
fn hostile_bytes_in_the_instruction_stream_are_rejected() {
    let mut body = u32le(1);
    body.extend(u32le(1));
    body.extend([0xee, 0, 0, 0, 0]);
    let err = Program::from_bytes(&Raw::new(1, &ret0()).set(11, body).bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            WireError::UnknownOpcode {
                index: 0,
                byte: 0xee,
                ..
            }
        ),
        "{err:?}"
    );
    // const r0, 7: a bool operand must be 0 or 1.
    let mut body = u32le(1);
    body.extend(u32le(2));
    body.extend([0, 0, 0, 0, 0, 7]);
    body.extend([24, 0, 0, 0, 0]);
    let err = Program::from_bytes(&Raw::new(1, &ret0()).set(11, body).bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            WireError::BadOperands {
                index: 0,
                mnemonic: "const",
                ..
            }
        ),
        "{err:?}"
    );
    // A shape mask with unknown bits decodes, and the verifier rejects it.
    let code = [
        Inst::Shape {
            dst: Reg(0),
            slot: SlotRef(0),
            shapes: Shapes(0x80),
        },
        Inst::Ret { src: Reg(0) },
    ];
    assert!(verify_reason(&Raw::new(1, &code)).contains("shape mask"));
    // Fewer instructions than declared, and more bytes than declared.
    let mut body = code_body(1, &ret0());
    body[4] = 2;
    assert!(Program::from_bytes(&Raw::new(1, &ret0()).set(11, body).bytes()).is_err());
    let mut body = code_body(1, &ret0());
    body.push(0);
    assert!(matches!(
        Program::from_bytes(&Raw::new(1, &ret0()).set(11, body).bytes()),
        Err(WireError::SectionTrailing {
            section: "code",
            count: 1,
            ..
        })
    ));
}

#[test]
fn hostile_constants_are_rejected() {
    let reject = |id: u8, body: Vec<u8>| -> WireError {
        Program::from_bytes(&Raw::new(1, &ret0()).set(id, body).bytes()).unwrap_err()
    };
    // Invalid UTF-8.
    let err = reject(3, [u32le(1), string(b"\xff\xfe")].concat());
    assert!(
        matches!(err, WireError::InvalidUtf8 { what: "string", .. }),
        "{err:?}"
    );
    // Sources that no longer compile.
    for (id, src) in [(8u8, &b"a**"[..]), (9, b"a*b*"), (10, b"10.0.0.0/33")] {
        let err = reject(id, [u32le(1), string(src)].concat());
        assert!(
            matches!(&err, WireError::Invalid { reason, .. } if reason.contains("no longer compiles")),
            "{err:?}"
        );
    }
    // A decimal bound that is not a JSON number, and an unknown bound kind.
    let interval = [string(b"t"), vec![2], string(b"1.2.3"), vec![0]].concat();
    let err = reject(7, [u32le(1), u32le(1), interval].concat());
    assert!(
        matches!(
            err,
            WireError::Invalid {
                what: "decimal bound",
                ..
            }
        ),
        "{err:?}"
    );
    let interval = [string(b"t"), vec![3], vec![0, 0, 0, 0], vec![0]].concat();
    let err = reject(7, [u32le(1), u32le(1), interval].concat());
    assert!(
        matches!(
            err,
            WireError::Invalid {
                what: "decimal bound",
                ..
            }
        ),
        "{err:?}"
    );
    // Interval flags with unknown bits.
    let interval = [
        1f64.to_bits().to_le_bytes().to_vec(),
        2f64.to_bits().to_le_bytes().to_vec(),
        vec![4],
    ]
    .concat();
    let err = reject(6, [u32le(1), u32le(1), interval].concat());
    assert!(
        matches!(
            err,
            WireError::Invalid {
                what: "interval",
                ..
            }
        ),
        "{err:?}"
    );
    // A NaN bound passes decoding and is caught by the verifier.
    let interval = [
        f64::NAN.to_bits().to_le_bytes().to_vec(),
        2f64.to_bits().to_le_bytes().to_vec(),
        vec![3],
    ]
    .concat();
    let err = reject(6, [u32le(1), u32le(1), interval].concat());
    assert!(
        matches!(&err, WireError::Verify(e) if e.reason.contains("NaN")),
        "{err:?}"
    );
    // Unsorted and duplicate set members.
    for members in [[&b"b"[..], b"a"], [b"a", b"a"]] {
        let body = [u32le(1), u32le(2), string(members[0]), string(members[1])].concat();
        let err = reject(5, body);
        assert!(
            matches!(
                err,
                WireError::Invalid {
                    what: "set member",
                    ..
                }
            ),
            "{err:?}"
        );
    }
}

#[test]
fn hostile_key_tables_are_rejected() {
    let reject = |body: Vec<u8>| -> WireError {
        Program::from_bytes(&Raw::new(1, &ret0()).set(2, body).bytes()).unwrap_err()
    };
    // A duplicate key would shift the slots after it.
    let key = [vec![3], string(b"h")].concat();
    let err = reject([u32le(2), key.clone(), key].concat());
    assert!(
        matches!(&err, WireError::Invalid { what: "key", reason, .. } if reason.contains("duplicates")),
        "{err:?}"
    );
    // An unknown key kind.
    let err = reject([u32le(1), vec![200]].concat());
    assert!(
        matches!(err, WireError::Invalid { what: "key", .. }),
        "{err:?}"
    );
}

#[test]
fn hostile_origins_are_rejected() {
    let code = [
        Inst::Const {
            dst: Reg(0),
            value: true,
        },
        Inst::Ret { src: Reg(0) },
    ];
    // Shorter than the code.
    let origins = [u32le(1), string(b"/a"), u32le(1), u32le(0)].concat();
    let reason = verify_reason(&Raw::new(1, &code).set(12, origins));
    assert!(reason.contains("origins do not cover"), "{reason}");
    // An index past the source pointers.
    let origins = [u32le(1), string(b"/a"), u32le(2), u32le(0), u32le(1)].concat();
    let reason = verify_reason(&Raw::new(1, &code).set(12, origins));
    assert!(reason.contains("origin 1 out of range"), "{reason}");
}

#[test]
fn framing_errors_are_reported() {
    let good = Raw::new(1, &ret0()).bytes();
    // Trailing bytes after the last section.
    let mut bytes = good.clone();
    bytes.extend([0, 0]);
    assert!(matches!(
        Program::from_bytes(&bytes),
        Err(WireError::TrailingBytes { count: 2, .. })
    ));
    // Sections out of order.
    let mut raw = Raw::new(1, &ret0());
    raw.sections.swap(2, 3);
    assert!(matches!(
        Program::from_bytes(&raw.bytes()),
        Err(WireError::UnexpectedSection {
            expected: "strings",
            found: 4,
            ..
        })
    ));
    // Bad magic, unknown version and flags.
    let mut bytes = good.clone();
    bytes[0] = b'X';
    assert_eq!(
        Program::from_bytes(&bytes).unwrap_err(),
        WireError::BadMagic
    );
    let mut bytes = good.clone();
    bytes[4..6].copy_from_slice(&2u16.to_le_bytes());
    assert_eq!(
        Program::from_bytes(&bytes).unwrap_err(),
        WireError::UnsupportedVersion { found: 2 }
    );
    let mut bytes = good;
    bytes[6..8].copy_from_slice(&0x8000u16.to_le_bytes());
    assert_eq!(
        Program::from_bytes(&bytes).unwrap_err(),
        WireError::UnknownFlags { flags: 0x8000 }
    );
}

#[test]
fn errors_read_clearly() {
    let mut body = u32le(1);
    body.extend(u32le(u32::MAX));
    let err = Program::from_bytes(&Raw::new(1, &ret0()).set(11, body).bytes()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("code declares 4294967295 items"), "{text}");
}

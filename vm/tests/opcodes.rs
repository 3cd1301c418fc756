//! One test per opcode (run through the executor on real bindings), and the verifier's checks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_vm::bind::Bindings;
use filtervm_vm::cidr::Cidr;
use filtervm_vm::key::Key;
use filtervm_vm::message::{Header, Message};
use filtervm_vm::number::Decimal;
use filtervm_vm::op::*;
use filtervm_vm::pattern::SegmentPattern;
use filtervm_vm::program::{DecInterval, Interval, Program, ProgramParts};
use filtervm_vm::value::{LeafTypes, Shapes};
use filtervm_vm::wildcard::Wildcard;

/// A program over headers `h` (slot 0) and a JSON event's `data.x` (slot 1 is unused by headers).
fn parts() -> ProgramParts {
    let mut p = ProgramParts::default();
    p.keys.intern(Key::Header("h".into()));
    p.registers = 2;
    p
}

fn run_on(parts: ProgramParts, code: Vec<Inst>, message: &Message) -> bool {
    let mut parts = parts;
    parts.code = code;
    parts.code.push(Inst::Ret { src: Reg(0) });
    let program = Program::new(parts).expect("verifies");
    let mut b = Bindings::new();
    program.eval(&b.bind(program.keys(), message), &mut Vec::new())
}

fn headers(values: &[&str]) -> Message {
    Message::Headers(vec![Header {
        name: "h".into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }])
}

fn one(parts: ProgramParts, inst: Inst, values: &[&str]) -> bool {
    run_on(parts, vec![inst], &headers(values))
}

const D: Reg = Reg(0);
const S: SlotRef = SlotRef(0);

#[test]
fn const_sets_register() {
    assert!(one(
        parts(),
        Inst::Const {
            dst: D,
            value: true
        },
        &[]
    ));
    assert!(!one(
        parts(),
        Inst::Const {
            dst: D,
            value: false
        },
        &[]
    ));
}

#[test]
fn shape_tests_slot_shape() {
    assert!(!one(
        parts(),
        Inst::Shape {
            dst: D,
            slot: S,
            shapes: Shapes::ABSENT
        },
        &[]
    ));
    assert!(run_on(
        parts(),
        vec![Inst::Shape {
            dst: D,
            slot: S,
            shapes: Shapes::ABSENT
        }],
        &Message::Headers(vec![])
    ));
    assert!(one(
        parts(),
        Inst::Shape {
            dst: D,
            slot: S,
            shapes: Shapes::SCALAR
        },
        &["a"]
    ));
    assert!(one(
        parts(),
        Inst::Shape {
            dst: D,
            slot: S,
            shapes: Shapes::ARRAY
        },
        &["a", "b"]
    ));
}

#[test]
fn has_type_tests_leaf_types() {
    assert!(one(
        parts(),
        Inst::HasType {
            dst: D,
            slot: S,
            types: LeafTypes::STR
        },
        &["a"]
    ));
    assert!(!one(
        parts(),
        Inst::HasType {
            dst: D,
            slot: S,
            types: LeafTypes::NUM
        },
        &["5"]
    ));
}

#[test]
fn str_eq_and_str_in() {
    let mut p = parts();
    p.pools.strings.push("b".into());
    assert!(one(
        p.clone(),
        Inst::StrEq {
            dst: D,
            slot: S,
            s: StrRef(0)
        },
        &["a", "b"]
    ));
    assert!(!one(
        p,
        Inst::StrEq {
            dst: D,
            slot: S,
            s: StrRef(0)
        },
        &["a"]
    ));
    let mut p = parts();
    p.pools
        .sets
        .push(["x".into(), "y".into()].into_iter().collect());
    assert!(one(
        p.clone(),
        Inst::StrIn {
            dst: D,
            slot: S,
            set: SetRef(0)
        },
        &["y"]
    ));
    assert!(!one(
        p,
        Inst::StrIn {
            dst: D,
            slot: S,
            set: SetRef(0)
        },
        &["z"]
    ));
}

fn with_list(values: &[&str]) -> ProgramParts {
    let mut p = parts();
    p.pools
        .lists
        .push(values.iter().map(|v| (*v).into()).collect());
    p
}

#[test]
fn prefix_suffix_contains() {
    let l = ListRef(0);
    assert!(one(
        with_list(&["ab", "x"]),
        Inst::StrPrefix {
            dst: D,
            slot: S,
            list: l
        },
        &["abc"]
    ));
    assert!(!one(
        with_list(&["ab"]),
        Inst::StrPrefix {
            dst: D,
            slot: S,
            list: l
        },
        &["cab"]
    ));
    assert!(one(
        with_list(&["bc"]),
        Inst::StrSuffix {
            dst: D,
            slot: S,
            list: l
        },
        &["abc"]
    ));
    assert!(!one(
        with_list(&["ab"]),
        Inst::StrSuffix {
            dst: D,
            slot: S,
            list: l
        },
        &["abc"]
    ));
    assert!(one(
        with_list(&["b"]),
        Inst::StrContains {
            dst: D,
            slot: S,
            list: l
        },
        &["abc"]
    ));
    assert!(!one(
        with_list(&["d"]),
        Inst::StrContains {
            dst: D,
            slot: S,
            list: l
        },
        &["abc"]
    ));
}

#[test]
fn folded_string_ops_ignore_case() {
    let l = ListRef(0);
    assert!(one(
        with_list(&["ABC"]),
        Inst::StrEqFold {
            dst: D,
            slot: S,
            list: l
        },
        &["aBc"]
    ));
    assert!(!one(
        with_list(&["ABC"]),
        Inst::StrEqFold {
            dst: D,
            slot: S,
            list: l
        },
        &["abd"]
    ));
    assert!(one(
        with_list(&["AB"]),
        Inst::StrPrefixFold {
            dst: D,
            slot: S,
            list: l
        },
        &["abc"]
    ));
    assert!(one(
        with_list(&["BC"]),
        Inst::StrSuffixFold {
            dst: D,
            slot: S,
            list: l
        },
        &["abc"]
    ));
    assert!(one(
        with_list(&["DATA"]),
        Inst::StrContainsFold {
            dst: D,
            slot: S,
            list: l
        },
        &["Azure Data Factory"]
    ));
    assert!(!one(
        with_list(&["SS"]),
        Inst::StrEqFold {
            dst: D,
            slot: S,
            list: l
        },
        &["ß"]
    ));
}

#[test]
fn wildcard_segment_cidr() {
    let mut p = parts();
    p.pools.wildcards.push(Wildcard::compile("a*c").unwrap());
    assert!(one(
        p.clone(),
        Inst::Wildcard {
            dst: D,
            slot: S,
            pat: WildRef(0)
        },
        &["abbc"]
    ));
    assert!(!one(
        p,
        Inst::Wildcard {
            dst: D,
            slot: S,
            pat: WildRef(0)
        },
        &["abcd"]
    ));
    let mut p = parts();
    p.pools
        .patterns
        .push(SegmentPattern::compile("orders.*.created").unwrap());
    assert!(one(
        p.clone(),
        Inst::Segment {
            dst: D,
            slot: S,
            pat: PatRef(0)
        },
        &["orders.eu.created"]
    ));
    assert!(!one(
        p,
        Inst::Segment {
            dst: D,
            slot: S,
            pat: PatRef(0)
        },
        &["orders.eu.west.created"]
    ));
    let mut p = parts();
    p.pools.cidrs.push(Cidr::parse("10.0.0.0/24").unwrap());
    assert!(one(
        p.clone(),
        Inst::Cidr {
            dst: D,
            slot: S,
            net: CidrRef(0)
        },
        &["10.0.0.7"]
    ));
    assert!(!one(
        p,
        Inst::Cidr {
            dst: D,
            slot: S,
            net: CidrRef(0)
        },
        &["10.0.1.7"]
    ));
}

#[test]
fn numeric_ops() {
    let range = Interval {
        lo: 100.0,
        lo_inclusive: true,
        hi: 1000.0,
        hi_inclusive: false,
    };
    let mut p = parts();
    p.pools.ranges.push(vec![range]);
    assert!(one(
        p.clone(),
        Inst::TextNumIn {
            dst: D,
            slot: S,
            ranges: RangesRef(0)
        },
        &["149.50"]
    ));
    assert!(!one(
        p.clone(),
        Inst::TextNumIn {
            dst: D,
            slot: S,
            ranges: RangesRef(0)
        },
        &["1000"]
    ));
    assert!(!one(
        p.clone(),
        Inst::TextNumIn {
            dst: D,
            slot: S,
            ranges: RangesRef(0)
        },
        &[" 150"]
    ));
    // num_in reads number leaves only: header strings are never numbers.
    assert!(!one(
        p.clone(),
        Inst::NumIn {
            dst: D,
            slot: S,
            ranges: RangesRef(0)
        },
        &["150"]
    ));
    let mut event = p.clone();
    let slot = event.keys.intern(Key::EventData(vec!["x".into()].into()));
    let doc: serde_json::Value = serde_json::from_str(r#"{"data": {"x": 150}}"#).unwrap();
    assert!(run_on(
        event,
        vec![Inst::NumIn {
            dst: D,
            slot: SlotRef(slot),
            ranges: RangesRef(0)
        }],
        &Message::Json(doc)
    ));
}

#[test]
fn dec_in_compares_exact_decimals() {
    let mut p = parts();
    let slot = p.keys.intern(Key::EventData(vec!["x".into()].into()));
    let point = Decimal::parse("9007199254740993").unwrap();
    p.pools.dec_ranges.push(vec![DecInterval {
        lo: Some((point.clone(), true)),
        hi: Some((point, true)),
        text: "{9007199254740993}".into(),
    }]);
    let program = vec![Inst::DecIn {
        dst: D,
        slot: SlotRef(slot),
        ranges: DecRangesRef(0),
    }];
    // The event as bytes: every number keeps its text.
    let run = |text: &str| {
        let event = format!(r#"{{"data": {{"x": {text}}}}}"#).into_bytes();
        run_on(p.clone(), program.clone(), &Message::Body(event))
    };
    assert!(run("9007199254740993"));
    assert!(run("9.007199254740993e15"));
    assert!(!run("9007199254740992"));
    assert!(!run("9007199254740993.000000000000000001"));
    // A `serde_json::Value` holds what `serde_json` made of the text: the integer exactly, the
    // same number written with an exponent as the nearest binary64, 9007199254740992.
    let run_serde = |text: &str| {
        let doc = serde_json::from_str(&format!(r#"{{"data": {{"x": {text}}}}}"#)).unwrap();
        run_on(p.clone(), program.clone(), &Message::Json(doc))
    };
    assert!(run_serde("9007199254740993"));
    assert!(!run_serde("9.007199254740993e15"));
}

#[test]
fn bool_eq_reads_bool_leaves() {
    let mut p = parts();
    let slot = p.keys.intern(Key::EventData(vec!["b".into()].into()));
    let doc: serde_json::Value = serde_json::from_str(r#"{"data": {"b": true}}"#).unwrap();
    assert!(run_on(
        p.clone(),
        vec![Inst::BoolEq {
            dst: D,
            slot: SlotRef(slot),
            value: true
        }],
        &Message::Json(doc.clone())
    ));
    assert!(!run_on(
        p,
        vec![Inst::BoolEq {
            dst: D,
            slot: SlotRef(slot),
            value: false
        }],
        &Message::Json(doc)
    ));
}

#[test]
fn and_or_not() {
    let t = |value| Inst::Const { dst: Reg(1), value };
    let f = Inst::Const {
        dst: D,
        value: false,
    };

    assert!(run_on(
        parts(),
        vec![
            Inst::Const {
                dst: D,
                value: true
            },
            t(true),
            Inst::And {
                dst: D,
                a: D,
                b: Reg(1)
            }
        ],
        &headers(&[])
    ));
    assert!(!run_on(
        parts(),
        vec![
            Inst::Const {
                dst: D,
                value: true
            },
            t(false),
            Inst::And {
                dst: D,
                a: D,
                b: Reg(1)
            }
        ],
        &headers(&[])
    ));
    assert!(run_on(
        parts(),
        vec![
            f,
            t(true),
            Inst::Or {
                dst: D,
                a: D,
                b: Reg(1)
            }
        ],
        &headers(&[])
    ));
    assert!(!run_on(
        parts(),
        vec![
            f,
            t(false),
            Inst::Or {
                dst: D,
                a: D,
                b: Reg(1)
            }
        ],
        &headers(&[])
    ));
    assert!(run_on(
        parts(),
        vec![f, Inst::Not { dst: D, src: D }],
        &headers(&[])
    ));
}

#[test]
fn jumps_skip_forward() {
    // r0 = false; if !r0 goto @3; r0 = true; ret r0  → false (the true is skipped)
    let code = vec![
        Inst::Const {
            dst: D,
            value: false,
        },
        Inst::JumpIfFalse {
            cond: D,
            target: Target(3),
        },
        Inst::Const {
            dst: D,
            value: true,
        },
    ];
    assert!(!run_on(parts(), code, &headers(&[])));
    let code = vec![
        Inst::Const {
            dst: D,
            value: true,
        },
        Inst::JumpIfTrue {
            cond: D,
            target: Target(3),
        },
        Inst::Const {
            dst: D,
            value: false,
        },
    ];
    assert!(run_on(parts(), code, &headers(&[])));
}

#[test]
fn ret_returns_its_register() {
    let mut p = parts();
    p.code = vec![
        Inst::Const {
            dst: Reg(1),
            value: true,
        },
        Inst::Ret { src: Reg(1) },
    ];
    let program = Program::new(p).unwrap();
    let mut b = Bindings::new();
    let message = headers(&[]);
    assert!(program.eval(&b.bind(program.keys(), &message), &mut Vec::new()));
}

fn verify(code: Vec<Inst>) -> Result<Program, filtervm_vm::program::VerifyError> {
    let mut p = parts();
    p.code = code;
    Program::new(p)
}

#[test]
fn verifier_rejects_out_of_range_and_backward_jumps() {
    let ret = Inst::Ret { src: D };
    assert!(verify(vec![]).is_err(), "empty program");
    assert!(
        verify(vec![Inst::Const {
            dst: D,
            value: true
        }])
        .is_err(),
        "no ret at the end"
    );
    assert_eq!(
        verify(vec![
            Inst::Const {
                dst: Reg(2),
                value: true
            },
            ret
        ])
        .unwrap_err()
        .at,
        0,
        "register out of range"
    );
    assert!(
        verify(vec![
            Inst::Shape {
                dst: D,
                slot: SlotRef(1),
                shapes: Shapes::ABSENT
            },
            ret
        ])
        .is_err(),
        "slot out of range"
    );
    assert!(
        verify(vec![
            Inst::StrEq {
                dst: D,
                slot: S,
                s: StrRef(0)
            },
            ret
        ])
        .is_err(),
        "pool index out of range"
    );
    assert!(
        verify(vec![
            Inst::Shape {
                dst: D,
                slot: S,
                shapes: Shapes(0x40)
            },
            ret
        ])
        .is_err(),
        "bad mask"
    );
    assert!(
        verify(vec![
            Inst::JumpIfFalse {
                cond: D,
                target: Target(0)
            },
            ret
        ])
        .is_err(),
        "jump to itself"
    );
    assert!(
        verify(vec![
            Inst::Const {
                dst: D,
                value: true
            },
            Inst::JumpIfTrue {
                cond: D,
                target: Target(0)
            },
            ret
        ])
        .is_err(),
        "backward jump"
    );
    assert!(
        verify(vec![
            Inst::JumpIfTrue {
                cond: D,
                target: Target(5)
            },
            ret
        ])
        .is_err(),
        "jump past the end"
    );
    assert!(
        verify(vec![
            Inst::JumpIfTrue {
                cond: D,
                target: Target(1)
            },
            ret
        ])
        .is_ok()
    );
}

#[test]
fn disassembly_names_every_operand() {
    let mut p = parts();
    p.pools.strings.push("v".into());
    p.code = vec![
        Inst::StrEq {
            dst: D,
            slot: S,
            s: StrRef(0),
        },
        Inst::Ret { src: D },
    ];
    p.origins = vec![0, 0];
    p.sources = vec!["/h/0".into()];
    let text = Program::new(p).unwrap().disassemble();
    assert!(text.contains("; slot0 = header \"h\""), "{text}");
    assert!(
        text.contains("str_eq r0, slot0(header \"h\"), str0 \"v\""),
        "{text}"
    );
    assert!(text.contains("; /h/0"), "{text}");
}

/// Runs one test instruction on the JSON body `{"v": VALUE}` read by the key `body "v"`.
fn on_body(parts_of: impl FnOnce(&mut ProgramParts), inst: Inst, value: &str) -> bool {
    let mut p = ProgramParts::default();
    p.keys.intern(Key::BodyPath("v".into()));
    p.registers = 1;
    parts_of(&mut p);
    p.code = vec![inst, Inst::Ret { src: Reg(0) }];
    let program = Program::new(p).expect("verifies");
    let body = format!(r#"{{"v": {value}}}"#);
    let mut b = Bindings::new();
    program.eval(
        &b.bind_json(program.keys(), body.as_bytes()),
        &mut Vec::new(),
    )
}

#[test]
fn cmp_num_in_reads_comparable_number_leaves_only() {
    let inst = Inst::CmpNumIn {
        dst: D,
        slot: S,
        ranges: RangesRef(0),
    };
    let pools = |p: &mut ProgramParts| p.pools.ranges.push(vec![Interval::point(300.0)]);
    for (value, expected) in [
        ("300", true),
        ("3.0e2", true),
        ("30000e-2", true),
        ("[1, 300]", true),
        ("\"300\"", false),
        ("301", false),
    ] {
        assert_eq!(on_body(pools, inst, value), expected, "{value}");
    }
    let big = |p: &mut ProgramParts| {
        p.pools
            .ranges
            .push(vec![Interval::point(9007199254740992.0)])
    };
    // 9007199254740993 reads as 2^53, but it is not comparable (EB-17).
    assert!(on_body(big, inst, "9007199254740992"));
    assert!(!on_body(big, inst, "9007199254740993"));
}

#[test]
fn num_text_in_compares_number_text() {
    let inst = Inst::NumTextIn {
        dst: D,
        slot: S,
        list: ListRef(0),
    };
    let pools = |p: &mut ProgramParts| p.pools.lists.push(vec!["9007199254740993".into()]);
    assert!(on_body(pools, inst, "9007199254740993"));
    assert!(!on_body(pools, inst, "9007199254740992"));
    assert!(!on_body(pools, inst, "\"9007199254740993\""));
}

#[test]
fn addr_in_reads_addresses_in_any_spelling() {
    let inst = Inst::AddrIn {
        dst: D,
        slot: S,
        block: BlockRef(0),
    };
    let cidr = |p: &mut ProgramParts| {
        p.pools
            .blocks
            .push(filtervm_vm::address::Block::cidr("10.0.0.0/24").unwrap())
    };
    assert!(on_body(cidr, inst, "\"010.0.0.7\""));
    assert!(on_body(cidr, inst, "\"::ffff:a00:1\""));
    assert!(!on_body(cidr, inst, "\"10.0.1.7\""));
    assert!(!on_body(cidr, inst, "5"));
}

#[test]
fn case_in_uses_full_case_mappings() {
    let inst = Inst::CaseIn {
        dst: D,
        slot: S,
        pat: CaseRef(0),
    };
    let sharp = |p: &mut ProgramParts| {
        p.pools
            .cases
            .push(filtervm_vm::case_pattern::CasePattern::new(
                "ß",
                filtervm_vm::case_pattern::CaseMode::Equals,
            ))
    };
    assert!(on_body(sharp, inst, "\"SS\""));
    assert!(!on_body(sharp, inst, "\"ss\""));
}

#[test]
fn except_holds_when_some_leaf_passes_no_test() {
    let inst = Inst::Except {
        dst: D,
        slot: S,
        tests: TestsRef(0),
    };
    let pools = |p: &mut ProgramParts| {
        p.pools
            .sets
            .push(["a", "b"].into_iter().map(std::sync::Arc::from).collect());
        p.pools.leaf_tests.push(vec![Inst::StrIn {
            dst: D,
            slot: S,
            set: SetRef(0),
        }]);
    };
    for (value, expected) in [
        ("\"c\"", true),
        ("\"a\"", false),
        ("[\"a\", \"b\"]", false),
        ("[\"a\", \"c\"]", true),
        ("null", true),
        ("5", true),
        ("[]", false),
        ("{}", false),
    ] {
        assert_eq!(on_body(pools, inst, value), expected, "{value}");
    }
    // Absent: no leaf at all.
    let mut p = ProgramParts::default();
    p.keys.intern(Key::BodyPath("v".into()));
    p.registers = 1;
    pools(&mut p);
    p.code = vec![inst, Inst::Ret { src: Reg(0) }];
    let program = Program::new(p).unwrap();
    let mut b = Bindings::new();
    assert!(!program.eval(
        &b.bind_json(program.keys(), br#"{"w": 1}"#),
        &mut Vec::new()
    ));
}

#[test]
fn the_verifier_admits_only_leaf_tests_in_except() {
    for inner in [
        Inst::Ret { src: D },
        Inst::Shape {
            dst: D,
            slot: S,
            shapes: Shapes::PRESENT,
        },
        Inst::Except {
            dst: D,
            slot: S,
            tests: TestsRef(0),
        },
        Inst::StrEq {
            dst: D,
            slot: SlotRef(5),
            s: StrRef(0),
        },
    ] {
        let mut p = parts();
        p.pools.strings.push("x".into());
        p.pools.leaf_tests.push(vec![inner]);
        p.code = vec![
            Inst::Except {
                dst: D,
                slot: S,
                tests: TestsRef(0),
            },
            Inst::Ret { src: D },
        ];
        assert!(Program::new(p).is_err(), "{inner:?} accepted inside except");
    }
}

#[test]
fn a_program_built_in_place_is_the_program_of_its_parts() {
    // A string test of `h` and a plan: `Program::build` fills the parts where the program holds
    // them and must give what `Program::new` gives for the same parts, stamp aside.
    let fill = |p: &mut ProgramParts| {
        *p = parts();
        p.pools.strings.push("v".into());
        p.code = vec![
            Inst::StrEq {
                dst: Reg(0),
                slot: SlotRef(0),
                s: StrRef(0),
            },
            Inst::Ret { src: Reg(0) },
        ];
    };
    let mut given = ProgramParts::default();
    fill(&mut given);
    let new = Program::new(given).expect("verifies");
    let built = Program::build(fill).expect("verifies");
    let shown = |p: &Program| format!("{:?} {:?}", p.parts().code, p.keys().keys());
    assert_eq!(shown(&built), shown(&new));
    assert_eq!(built.plan_steps(), new.plan_steps());
    assert!(built.plan_steps().is_some());
    assert_ne!(built.keys().stamp(), 0);
    let mut b = Bindings::new();
    let run = |m: &Message, b: &mut Bindings| built.eval(&b.bind(built.keys(), m), &mut Vec::new());
    assert!(run(&headers(&["v"]), &mut b));
    assert!(!run(&headers(&["w"]), &mut b));
    // Parts the verifier rejects give its error, as `Program::new` does.
    let err = Program::build(|p| *p = parts()).expect_err("no code");
    assert_eq!(Some(err), Program::new(parts()).err());
}

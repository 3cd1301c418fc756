use super::*;
use crate::bind::Bindings;
use crate::key::Key;
use crate::message::Message;
use crate::op::{ListRef, RangesRef, SetRef, SlotRef, StrRef, Target};
use crate::program::{Program, ProgramParts};

/// A tiny seeded generator (xorshift), so the test needs no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The code of a program that is `str_in` of the first key's values in the first set pool.
fn str_in_first_set() -> Vec<Inst> {
    vec![
        Inst::StrIn {
            dst: Reg(0),
            slot: SlotRef(0),
            set: SetRef(0),
        },
        Inst::Ret { src: Reg(0) },
    ]
}

fn parts() -> ProgramParts {
    let mut p = ProgramParts::default();
    p.keys.intern(Key::Header("a".into()));
    p.keys.intern(Key::Header("b".into()));
    // Longer than a short text: its equality probe compares bytes.
    p.keys
        .intern(Key::Header("a-header-named-at-length".into()));
    p.pools.strings.push("x".into());
    p.pools.strings.push("a-long-value-123".into());
    p.pools.strings.push("a-long-value-1234".into());
    p.pools
        .sets
        .push(["x", "y", "zz"].into_iter().map(Into::into).collect());
    p.pools.sets.push(
        ["x", "a-long-value-1234"]
            .into_iter()
            .map(Into::into)
            .collect(),
    );
    p.pools.lists.push(vec!["a-".into(), "x".into()]);
    p.pools.ranges.push(vec![crate::program::Interval {
        lo: 1.0,
        lo_inclusive: true,
        hi: 10.0,
        hi_inclusive: false,
    }]);
    p.registers = 1;
    p
}

fn random_test(rng: &mut Rng) -> Inst {
    let dst = Reg(0);
    let slot = SlotRef(rng.below(3) as u32);
    match rng.below(8) {
        0 => Inst::Shape {
            dst,
            slot,
            shapes: Shapes::PRESENT,
        },
        1 => Inst::StrEq {
            dst,
            slot,
            s: StrRef(rng.below(3) as u32),
        },
        2 => Inst::StrIn {
            dst,
            slot,
            set: SetRef(rng.below(2) as u32),
        },
        3 => Inst::StrPrefix {
            dst,
            slot,
            list: ListRef(0),
        },
        4 => Inst::StrSuffix {
            dst,
            slot,
            list: ListRef(0),
        },
        5 => Inst::TextNumIn {
            dst,
            slot,
            ranges: RangesRef(0),
        },
        6 => Inst::StrContains {
            dst,
            slot,
            list: ListRef(0),
        },
        _ => Inst::HasType {
            dst,
            slot,
            types: crate::value::LeafTypes::STR,
        },
    }
}

/// A random one-register program: tests, `not`, `const`, forward jumps, `ret`.
fn random_program(rng: &mut Rng) -> Program {
    random_program_within(rng, 13)
}

/// [`random_program`] of 2 to `most` instructions.
fn random_program_within(rng: &mut Rng, most: usize) -> Program {
    let len = 2 + rng.below(most - 1);
    let mut code = vec![random_test(rng)];
    while code.len() < len - 1 {
        let at = code.len();
        code.push(match rng.below(6) {
            0 => Inst::Not {
                dst: Reg(0),
                src: Reg(0),
            },
            1 => Inst::Const {
                dst: Reg(0),
                value: rng.below(2) == 0,
            },
            2 | 3 => {
                let target = Target((at + 1 + rng.below(len - at - 1)) as u32);
                if rng.below(2) == 0 {
                    Inst::JumpIfFalse {
                        cond: Reg(0),
                        target,
                    }
                } else {
                    Inst::JumpIfTrue {
                        cond: Reg(0),
                        target,
                    }
                }
            }
            _ => random_test(rng),
        });
    }
    code.push(Inst::Ret { src: Reg(0) });
    let mut p = parts();
    p.code = code;
    Program::new(p).expect("verifies")
}

fn random_message(rng: &mut Rng) -> Message {
    let values = [
        "x",
        "y",
        "zz",
        "a-long-value-123",
        "a-b",
        "5",
        "12",
        "",
        "bx",
    ];
    let mut headers = Vec::new();
    for name in ["a", "b"] {
        let n = rng.below(3);
        if n > 0 {
            headers.push(crate::message::Header {
                name: name.into(),
                values: (0..n)
                    .map(|_| values[rng.below(values.len())].to_owned())
                    .collect(),
            });
        }
    }
    Message::Headers(headers)
}

/// Fewer than `most` headers of `names`, each with zero to two of `values`: names repeat, value
/// lists may be empty, values need not be UTF-8.
fn random_headers<'a>(
    rng: &mut Rng,
    most: usize,
    names: &[&'a [u8]],
    values: &[&'a [u8]],
) -> Vec<(&'a [u8], Vec<&'a [u8]>)> {
    (0..rng.below(most))
        .map(|_| {
            let name = names[rng.below(names.len())];
            let n = rng.below(3);
            (
                name,
                (0..n).map(|_| values[rng.below(values.len())]).collect(),
            )
        })
        .collect()
}

/// Asserts that `program` judges `headers` as they are (probed, walked or bound) as the register
/// executor judges them bound to a row.
fn assert_headers_judged_as_bound(program: &Program, headers: &[(&[u8], Vec<&[u8]>)]) {
    let mut b = Bindings::new();
    let expected = {
        let bound = b.bind_headers(program.keys(), headers);
        exec::run_registers(program.verified(), &bound, &mut Vec::new())
    };
    assert_eq!(
        program.eval_headers(&mut b, headers, &mut Vec::new()),
        expected,
        "{}{headers:?}",
        program.disassemble()
    );
}

#[test]
fn probed_headers_agree_with_bound_headers() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    // Values equal to the constants, and of their lengths differing in one byte.
    let values: [&[u8]; 15] = [
        b"x",
        b"zz",
        b"zy",
        b"a-b",
        b"5",
        b"12",
        b"",
        b"bx",
        b"\xffx",
        b"a-long-value-123",
        b"a-long-valuf-123",
        b"a-long-value-1234",
        b"a-long-value-1x34",
        b"a-long-v\xffue-1234",
        b"xa-long-value-123",
    ];
    let names: [&[u8]; 6] = [
        b"a",
        b"b",
        b"\xff",
        b"a-header-named-at-length",
        b"a-header-named-at-lengtx",
        b"a-header-named-at-lengt",
    ];
    let mut probed = [0; 3];
    for _ in 0..2000 {
        // One test, then maybe `not` or a jump over a `const`, then `ret`.
        let mut code = vec![random_test(&mut rng)];
        match rng.below(3) {
            0 => code.push(Inst::Not {
                dst: Reg(0),
                src: Reg(0),
            }),
            1 => code.extend([
                Inst::JumpIfTrue {
                    cond: Reg(0),
                    target: Target(2),
                },
                Inst::Const {
                    dst: Reg(0),
                    value: rng.below(2) == 0,
                },
            ]),
            _ => {}
        }
        code.push(Inst::Ret { src: Reg(0) });
        let mut p = parts();
        p.code = code;
        let program = Program::new(p).unwrap();
        if let Some(probe) = program.header_probe() {
            probed[match probe.test {
                ProbeTest::EqualShort(_) => 0,
                ProbeTest::Equal(_) => 1,
                ProbeTest::Step(_) => 2,
            }] += 1;
        }
        for _ in 0..8 {
            let headers = random_headers(&mut rng, 5, &names, &values);
            assert_headers_judged_as_bound(&program, &headers);
        }
    }
    // Every kind of probe is exercised.
    assert!(
        probed.iter().all(|&n| n > 100),
        "{probed:?} programs probed"
    );
}

#[test]
fn walked_headers_agree_with_bound_headers() {
    let mut rng = Rng(0x6C07_8965_5D1F_3A2B);
    let values: [&[u8]; 9] = [
        b"x",
        b"zz",
        b"a-b",
        b"5",
        b"",
        b"\xffx",
        b"a-long-value-123",
        b"a-long-value-1234",
        b"xa-long-value-123",
    ];
    let names: [&[u8]; 4] = [b"a", b"b", b"\xff", b"a-header-named-at-length"];
    let mut walked = 0;
    for _ in 0..3000 {
        let program = random_program(&mut rng);
        if program.header_walk().is_some() {
            walked += 1;
        }
        for _ in 0..8 {
            let headers = random_headers(&mut rng, 6, &names, &values);
            assert_headers_judged_as_bound(&program, &headers);
        }
    }
    // Programs with shape tests, `contains` or `has_type` steps are bound instead; the others
    // (several steps of probed kinds) are walked.
    assert!(walked > 200, "{walked} programs walked");
}

#[test]
fn a_plan_of_shape_tests_or_too_many_steps_is_not_walked() {
    let test = |slot: u32, s: u32| Inst::StrEq {
        dst: Reg(0),
        slot: SlotRef(slot),
        s: StrRef(s),
    };
    let and_of = |tests: Vec<Inst>| {
        let n = tests.len();
        let mut code = Vec::new();
        for (i, t) in tests.into_iter().enumerate() {
            code.push(t);
            if i + 1 < n {
                code.push(Inst::JumpIfFalse {
                    cond: Reg(0),
                    target: Target((2 * n - 1) as u32),
                });
            }
        }
        code.push(Inst::Ret { src: Reg(0) });
        let mut p = parts();
        p.code = code;
        Program::new(p).unwrap()
    };
    assert!(and_of(vec![test(0, 0), test(1, 1)]).header_walk().is_some());
    assert!(
        and_of((0..WALK_STEPS as u32).map(|i| test(i % 3, i % 3)).collect())
            .header_walk()
            .is_some()
    );
    assert!(
        and_of(
            (0..=WALK_STEPS as u32)
                .map(|i| test(i % 3, i % 3))
                .collect()
        )
        .header_walk()
        .is_none()
    );
    let shape = Inst::Shape {
        dst: Reg(0),
        slot: SlotRef(1),
        shapes: Shapes::PRESENT,
    };
    assert!(and_of(vec![test(0, 0), shape]).header_walk().is_none());
}

#[test]
fn plan_agrees_with_the_register_executor_on_random_programs() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let program = random_program(&mut rng);
        assert!(program.plan().is_some(), "{}", program.disassemble());
        for _ in 0..8 {
            let mut b = Bindings::new();
            let message = random_message(&mut rng);
            let bound = b.bind(program.keys(), &message);
            assert_eq!(
                program
                    .plan()
                    .map(|p| p.run(program.verified(), &bound, &mut Vec::new())),
                Some(exec::run_registers(
                    program.verified(),
                    &bound,
                    &mut Vec::new()
                )),
                "{}",
                program.disassemble()
            );
        }
    }
}

/// Programs longer than the reach table [`Plan::build`] keeps on the stack (and shorter ones)
/// are planned alike: the plan decides every message as the register executor does.
#[test]
fn plan_agrees_with_the_register_executor_on_long_random_programs() {
    let mut rng = Rng(0x2F3A_11C5_9B0D_4E67);
    let mut long = 0;
    for _ in 0..300 {
        let program = random_program_within(&mut rng, 3 * REACH_ON_STACK);
        long += usize::from(program.code().len() >= REACH_ON_STACK);
        let plan = program.plan().expect("a one-register program has a plan");
        for _ in 0..8 {
            let mut b = Bindings::new();
            let message = random_message(&mut rng);
            let bound = b.bind(program.keys(), &message);
            assert_eq!(
                plan.run(program.verified(), &bound, &mut Vec::new()),
                exec::run_registers(program.verified(), &bound, &mut Vec::new()),
                "{}",
                program.disassemble()
            );
        }
    }
    assert!(
        long > 100,
        "only {long} programs reached the allocated table"
    );
}

/// More lists than [`SharedPools`] holds in place, each read by two steps: the two steps share
/// one copy, whichever of its tables holds it, and steps of different lists share nothing.
#[test]
fn steps_share_constants_beyond_the_entries_held_in_place() {
    let mut p = parts();
    p.pools.lists.clear();
    let lists = 3 * FEW_SHARED;
    for i in 0..lists {
        p.pools.lists.push(vec![format!("p{i}").into(), "q".into()]);
    }
    let (dst, slot) = (Reg(0), SlotRef(0));
    p.code.clear();
    for i in 0..lists {
        let list = ListRef(i as u32);
        p.code.push(Inst::StrPrefix { dst, slot, list });
        p.code.push(Inst::JumpIfTrue {
            cond: Reg(0),
            target: Target(p.code.len() as u32 + 1),
        });
        p.code.push(Inst::StrSuffix { dst, slot, list });
        if i + 1 < lists {
            p.code.push(Inst::JumpIfTrue {
                cond: Reg(0),
                target: Target(p.code.len() as u32 + 1),
            });
        }
    }
    p.code.push(Inst::Ret { src: Reg(0) });
    let program = Program::new(p).unwrap();
    let steps = &program.plan().unwrap().steps;
    assert_eq!(steps.len(), 2 * lists);
    let mut firsts: Vec<&Strings> = Vec::new();
    for pair in steps.chunks(2) {
        match (&pair[0].kind, &pair[1].kind) {
            (Kind::Prefix(a), Kind::Suffix(b)) => {
                assert!(Arc::ptr_eq(a, b), "{a:?} {b:?}");
                assert!(firsts.iter().all(|other| !Arc::ptr_eq(other, a)));
                firsts.push(a);
            }
            other => panic!("{other:?}"),
        }
    }
}

/// A `str_in` over constants whose ids lie within 64 of each other is a mask, over more it is
/// the sorted list of their ids; both decide as the register executor does.
#[test]
fn str_in_steps_are_masks_or_sorted_ids() {
    for size in [3, 64, 65, 200] {
        let mut p = parts();
        let values: Vec<String> = (0..size).map(|i| format!("v{i}")).collect();
        p.pools.sets = vec![values.iter().map(|v| v.as_str().into()).collect()];
        p.code = str_in_first_set();
        let program = Program::new(p).unwrap();
        let plan = program.plan().unwrap();
        match &plan.steps[0].kind {
            Kind::IdMask { mask, .. } => {
                assert!(size <= 64, "{size} constants in a mask");
                assert_eq!(mask.count_ones() as usize, size);
            }
            Kind::In(ids) => {
                assert!(size > 64, "{size} constants not in a mask");
                assert_eq!(ids.len(), size);
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
            }
            other => panic!("{other:?}"),
        }
        for value in ["v0", "v63", "v64", "v199", "w"] {
            let message = Message::Headers(vec![crate::message::Header {
                name: "a".into(),
                values: vec![value.to_owned()],
            }]);
            let mut b = Bindings::new();
            let bound = b.bind(program.keys(), &message);
            let expected = values.iter().any(|v| v == value);
            assert_eq!(
                plan.run(program.verified(), &bound, &mut Vec::new()),
                expected
            );
            assert_eq!(
                exec::run_registers(program.verified(), &bound, &mut Vec::new()),
                expected
            );
        }
    }
}

#[test]
fn programs_with_other_registers_or_reading_first_get_no_plan() {
    let mut p = parts();
    p.registers = 2;
    p.code = vec![
        Inst::Const {
            dst: Reg(1),
            value: true,
        },
        Inst::Ret { src: Reg(1) },
    ];
    assert!(Program::new(p).unwrap().plan().is_none());
    let mut p = parts();
    p.code = vec![
        Inst::Not {
            dst: Reg(0),
            src: Reg(0),
        },
        Inst::Ret { src: Reg(0) },
    ];
    assert!(Program::new(p).unwrap().plan().is_none());
}

#[test]
fn steps_reading_one_pool_entry_share_its_constants() {
    let mut p = parts();
    let (dst, slot) = (Reg(0), SlotRef(0));
    let either = |target: u32| Inst::JumpIfTrue {
        cond: Reg(0),
        target: Target(target),
    };
    p.code = vec![
        Inst::StrPrefix {
            dst,
            slot,
            list: ListRef(0),
        },
        either(2),
        Inst::StrSuffix {
            dst,
            slot,
            list: ListRef(0),
        },
        either(4),
        Inst::StrEq {
            dst,
            slot,
            s: StrRef(1),
        },
        either(6),
        Inst::StrEq {
            dst,
            slot,
            s: StrRef(1),
        },
        Inst::Ret { src: Reg(0) },
    ];
    let program = Program::new(p).unwrap();
    let steps = &program.plan().unwrap().steps;
    match (
        &steps[0].kind,
        &steps[1].kind,
        &steps[2].kind,
        &steps[3].kind,
    ) {
        (Kind::Prefix(a), Kind::Suffix(b), Kind::Eq(c), Kind::Eq(d)) => {
            assert!(Arc::ptr_eq(a, b));
            assert_eq!(c, d);
            assert_eq!(program.keys().constant_id("a-long-value-123"), Some(*c));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn plan_steps_one_per_test() {
    let mut p = parts();
    p.code = vec![
        Inst::Shape {
            dst: Reg(0),
            slot: SlotRef(0),
            shapes: Shapes::PRESENT,
        },
        Inst::JumpIfFalse {
            cond: Reg(0),
            target: Target(3),
        },
        Inst::StrEq {
            dst: Reg(0),
            slot: SlotRef(0),
            s: StrRef(0),
        },
        Inst::Ret { src: Reg(0) },
    ];
    let program = Program::new(p).unwrap();
    assert_eq!(program.plan_steps(), Some(2));
    let mut b = Bindings::new();
    let x = Message::headers([("a", "x")]);
    assert!(program.eval(&b.bind(program.keys(), &x), &mut Vec::new()));
    let y = Message::headers([("a", "y")]);
    assert!(!program.eval(&b.bind(program.keys(), &y), &mut Vec::new()));
}

#[test]
fn a_message_bound_to_another_table_is_judged_by_text() {
    let mut p = parts();
    p.code = str_in_first_set();
    let program = Program::new(p).unwrap();
    // The same keys, but a dictionary of its own: ids differ, text does not.
    let mut other = program.keys().clone();
    other.add_constant(0, "unrelated");
    other.add_constant(0, "zz");
    assert_ne!(other.stamp(), program.keys().stamp());
    let mut b = Bindings::new();
    for (value, expected) in [("zz", true), ("y", true), ("unrelated", false)] {
        let m = Message::headers([("a", value)]);
        assert_eq!(program.eval(&b.bind(&other, &m), &mut Vec::new()), expected);
        assert_eq!(
            program.eval(&b.bind(program.keys(), &m), &mut Vec::new()),
            expected
        );
    }
}

#[test]
fn a_plan_takes_the_ids_the_table_gave_as_it_would_look_them_up() {
    // `Program::new` records the constants' ids as the key table is told of them (when they
    // fit); a plan built looking each up instead is the same plan.
    let mut rng = Rng(0x1d5);
    let mut programs: Vec<Program> = (0..200).map(|_| random_program(&mut rng)).collect();
    for size in [3, 61, 64, 65, 200] {
        let mut p = parts();
        p.pools.sets = vec![(0..size).map(|i| format!("v{i}").into()).collect()];
        p.code = str_in_first_set();
        programs.push(Program::new(p).unwrap());
    }
    for program in &programs {
        let looked_up = Plan::build(program.verified(), &ConstantIds::none());
        assert_eq!(
            format!("{:?}", program.plan()),
            format!("{looked_up:?}"),
            "{}",
            program.disassemble()
        );
    }
}

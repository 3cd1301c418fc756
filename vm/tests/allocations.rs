//! Binding a stream of messages allocates nothing once warm: the arena is reset, the JSON reader
//! and the scratch keep their memory. Counted with a global allocator that counts this thread's
//! allocations (tests run on several threads).

#![expect(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a test failure"
)]

use filtervm_vm::bind::{Bindings, KeyTable};
use filtervm_vm::key::Key;
use filtervm_vm::message::{AttributeType, Message};
use filtervm_vm::op::{Inst, Reg, SlotRef, StrRef};
use filtervm_vm::program::{Program, ProgramParts};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the current thread's allocations.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

#[expect(
    unsafe_code,
    reason = "a global allocator is an unsafe trait; this one forwards"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// A one-test program over `key` (`str_eq` against "v"), so that binding looks strings up.
fn program(keys: &[Key]) -> Program {
    let mut parts = ProgramParts::default();
    for k in keys {
        parts.keys.intern(k.clone());
    }
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
    Program::new(parts).unwrap()
}

#[test]
fn json_bodies_and_events_bind_without_allocating_once_warm() {
    // SNS bodies: a single-row table, and one whose arrays of objects make rows (sns rule 18).
    let single = program(&[Key::BodyPath("a.b".into()), Key::BodyIsObject]);
    let rows = program(&[
        Key::BodyPathEach("r.x".into()),
        Key::BodyPath("r.y".into()),
        Key::BodyPath("s".into()),
    ]);
    let event = program(&[
        Key::EventMember("subject".into()),
        Key::EventData(vec!["k".into()].into()),
    ]);
    let messages: Vec<String> = (0..50)
        .map(|i| {
            format!(
                r#"{{"a": {{"b": ["v", {i}, "w\u00e9"]}}, "r": [{{"x": "v", "y": {i}}}, {{"x": "{i}"}}], "s": "v", "subject": "v", "data": {{"k": [{i}, "v"]}}, "deep": [[[[{{"z": "\ud800"}}]]]]}}"#
            )
        })
        .collect();
    let mut scratch = Bindings::new();
    let mut registers = Vec::new();
    for program in [&single, &rows, &event] {
        let mut verdicts = 0usize;
        let run = |scratch: &mut Bindings, registers: &mut Vec<bool>, verdicts: &mut usize| {
            for m in &messages {
                let bound = scratch.bind_json(program.keys(), m.as_bytes());
                assert!(bound.not_json().is_none());
                *verdicts += usize::from(program.eval(&bound, registers));
            }
        };
        run(&mut scratch, &mut registers, &mut verdicts);
        let n = allocations(|| run(&mut scratch, &mut registers, &mut verdicts));
        assert_eq!(n, 0, "{}", program.disassemble());
        assert!(verdicts > 0, "{}", program.disassemble());
    }
}

#[test]
fn borrowed_attributes_and_headers_bind_without_allocating_once_warm() {
    let attrs = program(&[
        Key::AttributeTyped("a".into()),
        Key::AttributeText("n".into()),
        Key::AnyAttribute,
    ]);
    let headers = program(&[Key::Header("h".into()), Key::Header("m".into())]);
    let attributes = [
        ("a", AttributeType::String, "v"),
        ("n", AttributeType::Number, "1.5"),
        ("x", AttributeType::Binary, "AA"),
    ];
    // A repeated name and a multi-valued one, as a slice of pairs and as owned headers.
    let pairs = [("h", vec!["v", "w"]), ("m", vec!["x"]), ("h", vec!["y"])];
    let owned = Message::Headers(
        pairs
            .iter()
            .map(|(n, v)| filtervm_vm::message::Header {
                name: n.to_string(),
                values: v.iter().map(|s| s.to_string()).collect(),
            })
            .collect(),
    );
    let mut scratch = Bindings::new();
    let mut registers = Vec::new();
    let mut run = |scratch: &mut Bindings| {
        let mut verdicts = 0;
        for _ in 0..20 {
            let b = scratch.bind_attributes(attrs.keys(), &attributes);
            verdicts += usize::from(attrs.eval(&b, &mut registers));
            let b = scratch.bind_headers(headers.keys(), &pairs);
            verdicts += usize::from(headers.eval(&b, &mut registers));
            let b = scratch.bind(headers.keys(), &owned);
            verdicts += usize::from(headers.eval(&b, &mut registers));
        }
        verdicts
    };
    assert_eq!(run(&mut scratch), 60);
    assert_eq!(allocations(|| assert_eq!(run(&mut scratch), 60)), 0);
}

#[test]
fn the_counter_counts() {
    // The test above would pass vacuously if the allocator did not count.
    let mut table = KeyTable::new();
    assert!(
        allocations(|| {
            table.intern(Key::Header("x".into()));
        }) > 0
    );
}

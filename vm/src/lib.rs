//! The filtervm virtual machine: values, message binding, the register bytecode, its verifier and
//! its executor.
//!
//! # Layers
//!
//! `vm` is everything done per message without the IR: the compiler (`filtervm-compiler`) hands
//! it a verified [`program::Program`], and it never imports the compiler. Its files import
//! downward, bottom-up:
//!
//! 1. Reading: the JSON reader ([`json`]), keys ([`key`]), quoting input ([`excerpt`]).
//! 2. Value tests as plain functions: byte comparisons (`bytes`), numbers ([`number`]), case
//!    folding ([`fold`]), substring search (`substring`), wildcards ([`wildcard`]), segment and
//!    case patterns ([`pattern`], [`case_pattern`]), CIDR blocks and addresses ([`cidr`],
//!    [`address`]); then the leaves and shapes they judge ([`value`]) and messages as the broker
//!    holds them ([`message`]).
//! 3. Binding a message to a program's key table ([`bind`]).
//! 4. Programs, bottom-up: interval sets ([`interval`]); the bytecode and the parts a program is
//!    assembled from ([`op`]: instructions are checked and shown against those parts); verified
//!    parts ([`verified`]); the executor ([`exec`]: each test's meaning, and the general
//!    register machine); the decision plans (`plan`), which call the executor's tests; the
//!    program ([`program`]: verified parts with their plan); the wire format of programs
//!    ([`wire`]) on top.
//!
//! Inside [`bind`], the leaves and slots (`leaf`) sit below the key table (`table`), the bound
//! form (`bound`), the binders of each message part, and [`bind::Bindings`] on top. Unit tests
//! that need a higher layer than their file's sit in a child file (`plan/tests.rs`).
//! `python3 scripts/check_layers.py` finds any files that import each other in a circle, in
//! every crate (`scripts/test.sh` runs it).
//!
//! This is an implementation crate of `filtervm`; its API has no stability guarantee — depend on
//! `filtervm`. The bytecode (module `op`) is an internal of the compiler and the executor.
//!
//! Rule labels in this documentation (sns rule 18, D-3, EG-22, B-10, S7, E2) name the rules of the
//! dialect references in the repository's `docs/dialects/`; "seed 000" and the like name the
//! source documents there (`docs/dialects/000_e1d4924fe41b969f.txt`).
//!
//! A [`program::Program`] is produced by `filtervm-compiler` (or decoded and verified); a message
//! — borrowed attributes or headers ([`message::Attributes`], [`message::Headers`]), raw JSON
//! bytes, or an owned [`message::Message`] — is bound once to the program's key table
//! ([`bind::Bindings`] → [`bind::Bound`]) and the executor reads slots by index.
//!
//! ```
//! use filtervm_vm::bind::{Bindings, KeyTable};
//! use filtervm_vm::key::Key;
//! use filtervm_vm::message::{AttributeType, Message};
//! use filtervm_vm::op::{Inst, Reg, SlotRef, StrRef};
//! use filtervm_vm::program::{Program, ProgramParts};
//!
//! let mut parts = ProgramParts::default();
//! let slot = parts.keys.intern(Key::AttributeText("event".into()));
//! parts.pools.strings.push("order.paid".into());
//! parts.code = vec![
//!     Inst::StrEq { dst: Reg(0), slot: SlotRef(slot), s: StrRef(0) },
//!     Inst::Ret { src: Reg(0) },
//! ];
//! parts.registers = 1;
//! let program = Program::new(parts).unwrap();
//!
//! let mut bindings = Bindings::new();
//! let message = Message::attributes([("event", AttributeType::String, "order.paid")]);
//! assert!(program.eval(&bindings.bind(program.keys(), &message), &mut Vec::new()));
//!
//! // Borrowed attributes, nothing copied.
//! let attributes = [("event", AttributeType::String, "order.created")];
//! assert!(!program.eval(&bindings.bind_attributes(program.keys(), &attributes), &mut Vec::new()));
//!
//! // Raw JSON bytes, for a table of body or event keys.
//! let mut event = KeyTable::new();
//! event.intern(Key::EventMember("subject".into()));
//! let bound = bindings.bind_json(&event, br#"{"subject": "a", "data": [[[{"deep": 1}]]]}"#);
//! assert_eq!(bound.slot(0, 0).leaves().next().and_then(|l| l.as_str()), Some("a"));
//! ```

pub mod address;
pub mod bind;
mod bytes;
pub mod case_pattern;
pub mod cidr;
pub mod excerpt;
pub mod exec;
pub mod fold;
pub mod interval;
pub mod json;
pub mod key;
pub mod message;
pub mod number;
#[doc(hidden)]
pub mod op;
pub mod pattern;
mod plan;
pub mod program;
mod substring;
pub mod value;
pub mod verified;
pub mod wildcard;
pub mod wire;

//! The filtervm virtual machine: values, message binding, the register bytecode, its verifier and
//! its executor.
//!
//! A [`program::Program`] is produced by `filtervm-compiler` (or decoded and verified); a
//! [`message::Message`] is bound once to the program's key table ([`bind::Bindings`]) and the
//! executor reads slots by index.
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
//! bindings.bind(program.keys(), &Message::attributes([("event", AttributeType::String, "order.paid")]));
//! assert!(program.eval(&bindings, &mut Vec::new()));
//! ```

pub mod bind;
pub mod cidr;
pub mod excerpt;
pub mod exec;
pub mod fold;
pub mod json;
pub mod key;
pub mod message;
pub mod number;
pub mod op;
pub mod pattern;
mod plan;
pub mod program;
mod substring;
pub mod value;
pub mod wildcard;
pub mod wire;

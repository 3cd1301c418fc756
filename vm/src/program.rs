//! Programs: a key table, constant pools and an instruction stream, verified before they run
//! ([`crate::verified`]), with the decision plan the executor runs them as. The top of the VM's
//! per-program layers: it holds what is below (instructions, verification, plans, the executor)
//! and nothing below holds it.

use crate::bind::KeyTable;
use crate::op::Inst;
use crate::plan::{HeaderProbe, HeaderWalk, Plan};
use crate::verified::{ConstantIds, Verified};
use std::fmt::Write as _;

pub use crate::interval::{DecInterval, Interval, show_dec_intervals, show_intervals};
pub use crate::op::{Pools, ProgramParts};
pub use crate::verified::{MAX_INSTRUCTIONS, MAX_REGISTERS, VerifyError, is_leaf_test};

/// A verified program.
#[derive(Debug, Clone)]
pub struct Program {
    /// Boxed: the parts are about a kilobyte, and a program (a compiled filter holds one) is
    /// moved through results and into sets; a move is then a few words, not a `memcpy` of the
    /// parts.
    verified: Box<Verified>,
    /// The decision graph the executor runs, for one-register programs (derived, see
    /// [`crate::plan`]).
    plan: Option<Plan>,
    /// For a plan of one test of one header's leaves, that test as borrowed headers are probed
    /// for it ([`Program::eval_headers`]); boxed, so that the check is one word.
    header_probe: Option<Box<HeaderProbe>>,
    /// For a plan of a few tests, each of one header's leaves, the plan as borrowed headers are
    /// walked for it ([`Program::eval_headers`]).
    header_walk: Option<Box<HeaderWalk>>,
}

impl Program {
    /// Verifies `parts` and makes a program of them ([`Verified::new`] says what is checked).
    /// Then derives what evaluation needs — the decision plan and the substring searchers — in
    /// time and memory proportional to `parts`. What binding derives from the key table (the JSON
    /// selector, the name scan) is built on the first message bound to it, so a program only
    /// added to a set never builds it ([`KeyTable::prepare`] builds it now).
    pub fn new(parts: ProgramParts) -> Result<Program, VerifyError> {
        // The parts are checked where they lie and moved once, into the program: a program is
        // about a kilobyte, so each move through a layer's `Result` is a `memcpy` of it.
        // The program is made in the result it is returned in, and what is derived from the
        // verified parts is added there.
        let substrings = Verified::check(&parts)?;
        let mut ids = ConstantIds::none();
        let mut made = Ok(Program {
            verified: Box::new(Verified::checked(parts, substrings, &mut ids)),
            plan: None,
            header_probe: None,
            header_walk: None,
        });
        if let Ok(program) = &mut made {
            program.derive(&ids);
        }
        made
    }

    /// [`Program::new`] of the parts `fill` writes, filled where the program holds them: a
    /// caller that generates its parts (codegen) does not move them (about a kilobyte) into the
    /// program, nor the program through a layer's `Result`.
    pub fn build(fill: impl FnOnce(&mut ProgramParts)) -> Result<Program, VerifyError> {
        let mut made = Ok(Program {
            verified: Box::new(Verified::unfinished()),
            plan: None,
            header_probe: None,
            header_walk: None,
        });
        let checked = match &mut made {
            Ok(program) => {
                let parts = program.verified.parts_to_fill();
                fill(parts);
                Verified::check(parts).map(|substrings| {
                    let mut ids = ConstantIds::none();
                    program.verified.finish(substrings, &mut ids);
                    program.derive(&ids);
                })
            }
            Err(_) => Ok(()),
        };
        if let Err(e) = checked {
            made = Err(e);
        }
        made
    }

    /// Adds what is derived from the verified parts: the plan (with the constants' ids recorded
    /// when the key table was told of them, `ids`) and the header probes.
    fn derive(&mut self, ids: &ConstantIds) {
        self.plan = Plan::build(&self.verified, ids);
        if let Some(plan) = &self.plan {
            self.header_probe = HeaderProbe::of(&self.verified, plan).map(Box::new);
            self.header_walk = HeaderWalk::of(&self.verified, plan).map(Box::new);
        }
    }

    /// The verified program the executor and plans run ([`crate::exec::eval_test`] takes it).
    #[inline]
    pub fn verified(&self) -> &Verified {
        &self.verified
    }

    /// The decision graph the executor runs this program as, if it has one.
    #[cfg(test)]
    pub(crate) fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    /// The probe [`Program::eval_headers`] decides borrowed headers with, if it has one.
    #[cfg(test)]
    pub(crate) fn header_probe(&self) -> Option<&crate::plan::HeaderProbe> {
        self.header_probe.as_deref()
    }

    /// The walk [`Program::eval_headers`] decides borrowed headers with, if it has one.
    #[cfg(test)]
    pub(crate) fn header_walk(&self) -> Option<&crate::plan::HeaderWalk> {
        self.header_walk.as_deref()
    }

    /// The number of tests on the decision graph the executor runs, or `None` when the program
    /// runs on the general register executor.
    pub fn plan_steps(&self) -> Option<usize> {
        self.plan.as_ref().map(crate::plan::Plan::len)
    }

    /// The verified parts (for encoders such as [`crate::wire`]).
    pub fn parts(&self) -> &ProgramParts {
        self.verified.parts()
    }

    /// The key table.
    pub fn keys(&self) -> &KeyTable {
        self.verified.keys()
    }

    /// The constant pools.
    pub fn pools(&self) -> &Pools {
        self.verified.pools()
    }

    /// The instructions.
    pub fn code(&self) -> &[Inst] {
        self.verified.code()
    }

    /// The number of registers.
    pub fn register_count(&self) -> usize {
        self.verified.parts().registers as usize
    }

    /// The policy location instruction `at` came from, if recorded.
    pub fn origin(&self, at: usize) -> Option<&str> {
        let o = *self.verified.parts().origins.get(at)?;
        self.verified.parts().sources.get(o as usize).map(|s| &**s)
    }

    /// The disassembly: one instruction a line with its index and origin.
    pub fn disassemble(&self) -> String {
        let mut out = String::new();
        for (i, key) in self.verified.parts().keys.keys().iter().enumerate() {
            let _ = writeln!(out, "; slot{i} = {key}");
        }
        for (at, inst) in self.verified.parts().code.iter().enumerate() {
            let text = inst.show(self.verified.parts());
            match self.origin(at) {
                Some(origin) => {
                    let _ = writeln!(out, "@{at:<3} {text:<50} ; {origin}");
                }
                None => {
                    let _ = writeln!(out, "@{at:<3} {text}");
                }
            }
        }
        out
    }

    /// Evaluates the program on a bound message: true when some row's run returns true. Bind
    /// the message to [`Program::keys`] (string equality then compares dictionary ids); a
    /// message bound to another table with the same slots is judged alike, comparing text.
    #[inline]
    pub fn eval(&self, bound: &crate::bind::Bound<'_>, registers: &mut Vec<bool>) -> bool {
        match &self.plan {
            Some(plan) => plan.run(&self.verified, bound, registers),
            None => crate::exec::run_registers(&self.verified, bound, registers),
        }
    }

    /// Evaluates the program on headers as the broker holds them (any
    /// [`crate::message::Headers`]): binds them with `bindings` and runs [`Program::eval`]; a
    /// program of one test of one header's values (most one-clause stream and expr filters) is
    /// decided as the headers are read instead, without binding a row, with the same verdict, and
    /// so is a program of a few such tests (their plan walked on the headers).
    #[inline]
    pub fn eval_headers<H: crate::message::Headers + ?Sized>(
        &self,
        bindings: &mut crate::bind::Bindings,
        headers: &H,
        registers: &mut Vec<bool>,
    ) -> bool {
        match self.header_probe.as_deref() {
            Some(probe) => probe.decide(&self.verified, headers),
            None => self.bind_headers_and_eval(bindings, headers, registers),
        }
    }

    /// [`Program::eval_headers`] by walking the plan on the headers as they are, or by binding,
    /// out of line.
    #[inline(never)]
    fn bind_headers_and_eval<H: crate::message::Headers + ?Sized>(
        &self,
        bindings: &mut crate::bind::Bindings,
        headers: &H,
        registers: &mut Vec<bool>,
    ) -> bool {
        if let Some(walk) = self.header_walk.as_deref() {
            return walk.decide(&self.verified, headers);
        }
        let bound = bindings.bind_headers(self.keys(), headers);
        self.eval(&bound, registers)
    }
}

//! Codegen: IR → [`Program`].
//!
//! Every node is computed into one register. `and` evaluates its children in order and jumps to
//! its end as soon as one is false (the register then already holds `false`); `or` dually with
//! `true`. So a whole policy needs a single register, and no test runs once the verdict is known.
//! Constants are interned in the program's pools; keys in its key table.

use crate::ir::{Case, Node, NodeKind, NumSource, Pred, StrOp};
use ahash::AHashMap;
use filtervm_vm::op::{
    BlockRef, CaseRef, CidrRef, DecRangesRef, Inst, ListRef, PatRef, RangesRef, Reg, SetRef,
    SlotRef, StrRef, Target, TestsRef, WildRef,
};
use filtervm_vm::program::{Program, ProgramParts, VerifyError};
use std::sync::Arc;

/// Generates a verified program for an (optimized) IR tree.
pub fn generate(root: &Node) -> Result<Program, VerifyError> {
    // The parts are filled where the program holds them (`Program::build`), not moved into it
    // (a program's parts are about a kilobyte).
    Program::build(|parts| {
        // Most nodes emit one instruction, and an `and`/`or` one jump per child but the last;
        // each node adds at most one source (its origin), so the sources are never reallocated
        // either. Each test interns at most one key: the key table's columns are allocated
        // once. The keys are interned without a stamp each; the program stamps the table once.
        let (size, tests) = size_and_tests(root);
        let estimate = 2 * size;
        reserve(&mut parts.code, estimate);
        reserve(&mut parts.origins, estimate);
        reserve(&mut parts.sources, size);
        parts.keys.reserve_keys(tests);
        let mut g = Gen {
            parts,
            tests,
            source_index: Seen::default(),
            string_index: Seen::default(),
            list_index: Seen::default(),
        };
        g.node(root, Reg(0));
        g.emit(Inst::Ret { src: Reg(0) }, &root.origin);
        parts.registers = 1;
    })
}

/// The number of nodes of the tree under `node` ([`Node::size`]) and how many of them are tests.
fn size_and_tests(node: &Node) -> (usize, usize) {
    match &node.kind {
        // A leaf child (most: a policy's clauses are tests) is counted here, without a call.
        NodeKind::And(c) | NodeKind::Or(c) => c.iter().fold((1, 0), |(size, tests), c| {
            let (s, t) = match c.kind {
                NodeKind::Test(_) => (1, 1),
                NodeKind::True | NodeKind::False => (1, 0),
                _ => size_and_tests(c),
            };
            (size + s, tests + t)
        }),
        NodeKind::Not(c) => {
            let (size, tests) = size_and_tests(c);
            (size + 1, tests)
        }
        NodeKind::Test(_) => (1, 1),
        _ => (1, 0),
    }
}

/// The program being generated, and the constants already in its pools (keyed by the IR's own
/// strings, so that looking one up allocates nothing).
struct Gen<'ir, 'p> {
    parts: &'p mut ProgramParts,
    /// The number of tests: no pool gets more entries than that.
    tests: usize,
    source_index: Seen<'ir, str>,
    string_index: Seen<'ir, str>,
    list_index: Seen<'ir, [Arc<str>]>,
}

/// How many entries [`Seen`] compares in turn before it hashes them.
const FEW: usize = 16;

/// Pool entries already made, by value: the first [`FEW`] in an array compared in turn (a
/// policy's pools are small: no allocation), the rest hashed (the map made once needed, so a
/// small program does not even seed its hasher).
struct Seen<'ir, K: ?Sized> {
    few: [Option<(&'ir K, u32)>; FEW],
    many: Option<AHashMap<&'ir K, u32>>,
}

impl<K: ?Sized> Default for Seen<'_, K> {
    fn default() -> Self {
        Seen {
            few: [None; FEW],
            many: None,
        }
    }
}

impl<'ir, K: ?Sized + Eq + std::hash::Hash> Seen<'ir, K> {
    #[inline(always)]
    fn get(&self, key: &K) -> Option<u32> {
        for entry in &self.few {
            match entry {
                Some((k, i)) if *k == key => return Some(*i),
                Some(_) => {}
                None => return None,
            }
        }
        self.many.as_ref()?.get(key).copied()
    }

    fn insert(&mut self, key: &'ir K, i: u32) {
        match self.few.iter_mut().find(|e| e.is_none()) {
            Some(free) => *free = Some((key, i)),
            None => {
                self.many.get_or_insert_with(AHashMap::new).insert(key, i);
            }
        }
    }
}

/// Room for `additional` more items in `v`, allocated at that size when `v` has no allocation
/// yet (the parts `Program::build` gives are empty): allocating a vector directly costs about 40
/// instructions less than growing an empty one (BENCHMARKS.md, "The back end, fourth round").
fn reserve<T>(v: &mut Vec<T>, additional: usize) {
    if v.capacity() == 0 {
        *v = Vec::with_capacity(additional);
    } else {
        v.reserve(additional);
    }
}

/// Pushes `item` onto the pool `v`, which is first allocated (directly, see [`reserve`]) for
/// `most` entries: each test adds at most one pool entry (an `except` one per predicate), so a
/// pool seldom grows past that.
fn push<T>(v: &mut Vec<T>, item: T, most: usize) {
    if v.capacity() == 0 {
        *v = Vec::with_capacity(most.max(1));
    }
    v.push(item);
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<'ir> Gen<'ir, '_> {
    /// Appends `inst`, recording the origin it came from (the IR's own, shared: not copied).
    /// Inlined, as is [`Seen::get`], which it calls for every instruction: a call each cost more
    /// than the work (BENCHMARKS.md, "The back end, fourth round").
    #[inline(always)]
    fn emit(&mut self, inst: Inst, origin: &'ir Arc<str>) -> usize {
        let o = match self.source_index.get(origin) {
            Some(o) => o,
            None => {
                let o = idx(self.parts.sources.len());
                self.parts.sources.push(origin.clone());
                self.source_index.insert(origin, o);
                o
            }
        };
        self.parts.code.push(inst);
        self.parts.origins.push(o);
        self.parts.code.len() - 1
    }

    fn here(&self) -> u32 {
        idx(self.parts.code.len())
    }

    fn node(&mut self, node: &'ir Node, dst: Reg) {
        match &node.kind {
            NodeKind::True => {
                self.emit(Inst::Const { dst, value: true }, &node.origin);
            }
            NodeKind::False => {
                self.emit(Inst::Const { dst, value: false }, &node.origin);
            }
            NodeKind::Not(child) => {
                self.node(child, dst);
                self.emit(Inst::Not { dst, src: dst }, &node.origin);
            }
            NodeKind::And(children) | NodeKind::Or(children) => {
                let is_and = matches!(node.kind, NodeKind::And(_));
                // The node's jumps are chained through their own targets until its end is known:
                // each holds one more than the index of the jump emitted before it (0: none), so
                // no list of them is allocated.
                let mut last_jump = 0u32;
                let last = children.len().saturating_sub(1);
                if children.is_empty() {
                    self.emit(Inst::Const { dst, value: is_and }, &node.origin);
                }
                for (i, child) in children.iter().enumerate() {
                    self.node(child, dst);
                    if i < last {
                        let placeholder = Target(last_jump);
                        let inst = if is_and {
                            Inst::JumpIfFalse {
                                cond: dst,
                                target: placeholder,
                            }
                        } else {
                            Inst::JumpIfTrue {
                                cond: dst,
                                target: placeholder,
                            }
                        };
                        last_jump = idx(self.emit(inst, &node.origin)).saturating_add(1);
                    }
                }
                let end = Target(self.here());
                while let Some(j) = last_jump.checked_sub(1) {
                    last_jump = match self.parts.code.get_mut(j as usize) {
                        Some(
                            Inst::JumpIfFalse { target, .. } | Inst::JumpIfTrue { target, .. },
                        ) => std::mem::replace(target, end).0,
                        _ => 0,
                    };
                }
            }
            NodeKind::Test(test) => {
                let slot = SlotRef(self.parts.keys.intern_ref_unstamped(&test.key));
                let inst = self.test(&test.pred, dst, slot);
                self.emit(inst, &node.origin);
            }
        }
    }

    /// The pool entry of `s` (the IR's string, shared: not copied).
    fn string(&mut self, s: &'ir Arc<str>) -> StrRef {
        if let Some(i) = self.string_index.get(s) {
            return StrRef(i);
        }
        let i = idx(self.parts.pools.strings.len());
        push(&mut self.parts.pools.strings, s.clone(), self.tests);
        self.string_index.insert(s, i);
        StrRef(i)
    }

    fn list(&mut self, values: &'ir [Arc<str>]) -> ListRef {
        if let Some(i) = self.list_index.get(values) {
            return ListRef(i);
        }
        let i = idx(self.parts.pools.lists.len());
        push(&mut self.parts.pools.lists, values.to_vec(), self.tests);
        self.list_index.insert(values, i);
        ListRef(i)
    }

    fn test(&mut self, pred: &'ir Pred, dst: Reg, slot: SlotRef) -> Inst {
        let most = self.tests;
        let pools = &mut self.parts.pools;
        match pred {
            Pred::Shape(shapes) => Inst::Shape {
                dst,
                slot,
                shapes: *shapes,
            },
            Pred::HasType(types) => Inst::HasType {
                dst,
                slot,
                types: *types,
            },
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values,
            } if let [s] = values.as_slice() => Inst::StrEq {
                dst,
                slot,
                s: self.string(s),
            },
            Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values,
            } => {
                let set = SetRef(idx(pools.sets.len()));
                push(&mut pools.sets, values.iter().cloned().collect(), most);
                Inst::StrIn { dst, slot, set }
            }
            Pred::Str { op, case, values } => {
                let list = self.list(values);
                match (op, case) {
                    (StrOp::Prefix, Case::Sensitive) => Inst::StrPrefix { dst, slot, list },
                    (StrOp::Suffix, Case::Sensitive) => Inst::StrSuffix { dst, slot, list },
                    (StrOp::Contains, Case::Sensitive) => Inst::StrContains { dst, slot, list },
                    (StrOp::Eq, Case::Fold) => Inst::StrEqFold { dst, slot, list },
                    (StrOp::Prefix, Case::Fold) => Inst::StrPrefixFold { dst, slot, list },
                    (StrOp::Suffix, Case::Fold) => Inst::StrSuffixFold { dst, slot, list },
                    (StrOp::Contains, Case::Fold) => Inst::StrContainsFold { dst, slot, list },
                    (StrOp::Eq, Case::Sensitive) => Inst::StrEqFold { dst, slot, list },
                }
            }
            Pred::Wildcard(w) => {
                let pat = WildRef(idx(pools.wildcards.len()));
                push(&mut pools.wildcards, w.clone(), most);
                Inst::Wildcard { dst, slot, pat }
            }
            Pred::Segment(p) => {
                let pat = PatRef(idx(pools.patterns.len()));
                push(&mut pools.patterns, p.clone(), most);
                Inst::Segment { dst, slot, pat }
            }
            Pred::Cidr(c) => {
                let net = CidrRef(idx(pools.cidrs.len()));
                push(&mut pools.cidrs, c.clone(), most);
                Inst::Cidr { dst, slot, net }
            }
            Pred::Num { source, ranges: r } => {
                let ranges = RangesRef(idx(pools.ranges.len()));
                push(&mut pools.ranges, r.clone(), most);
                match source {
                    NumSource::NumberLeaf => Inst::NumIn { dst, slot, ranges },
                    NumSource::Text => Inst::TextNumIn { dst, slot, ranges },
                    NumSource::Comparable => Inst::CmpNumIn { dst, slot, ranges },
                }
            }
            Pred::Dec(r) => {
                let ranges = DecRangesRef(idx(pools.dec_ranges.len()));
                push(&mut pools.dec_ranges, r.clone(), most);
                Inst::DecIn { dst, slot, ranges }
            }
            Pred::Bool(value) => Inst::BoolEq {
                dst,
                slot,
                value: *value,
            },
            Pred::NumText(values) => Inst::NumTextIn {
                dst,
                slot,
                list: self.list(values),
            },
            Pred::Address(b) => {
                let block = BlockRef(idx(pools.blocks.len()));
                push(&mut pools.blocks, b.clone(), most);
                Inst::AddrIn { dst, slot, block }
            }
            Pred::IgnoreCase(c) => {
                let pat = CaseRef(idx(pools.cases.len()));
                push(&mut pools.cases, c.clone(), most);
                Inst::CaseIn { dst, slot, pat }
            }
            Pred::Except(preds) => {
                // Each predicate becomes a test run on one leaf; its register and slot operands
                // are not read there, and are written `r0` and `slot0` (which every program with
                // this test has), so that a copy of the test into another program stays valid.
                let tests: Vec<Inst> = preds
                    .iter()
                    .map(|p| self.test(p, Reg(0), SlotRef(0)))
                    .collect();
                let pools = &mut self.parts.pools;
                let tests_ref = TestsRef(idx(pools.leaf_tests.len()));
                push(&mut pools.leaf_tests, tests, most);
                Inst::Except {
                    dst,
                    slot,
                    tests: tests_ref,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Test;
    use filtervm_vm::key::Key;

    fn node(kind: NodeKind) -> Node {
        Node {
            kind,
            origin: "".into(),
        }
    }

    fn test(name: &str) -> Node {
        node(NodeKind::Test(Test {
            key: Key::Header(name.into()),
            pred: Pred::Str {
                op: StrOp::Eq,
                case: Case::Sensitive,
                values: vec!["v".into()],
            },
        }))
    }

    #[test]
    fn size_and_tests_counts_the_nodes_and_the_tests() {
        // and(a, or(b, not(a)), true, not(false)): nine nodes, three of them tests.
        let tree = node(NodeKind::And(vec![
            test("a"),
            node(NodeKind::Or(vec![
                test("b"),
                node(NodeKind::Not(Box::new(test("a")))),
            ])),
            node(NodeKind::True),
            node(NodeKind::Not(Box::new(node(NodeKind::False)))),
        ]));
        assert_eq!(size_and_tests(&tree), (tree.size(), 3));
        assert_eq!(tree.size(), 9);
        assert_eq!(size_and_tests(&test("c")), (1, 1));
        assert_eq!(size_and_tests(&node(NodeKind::True)), (1, 0));
        // Three tests of two keys: the table, reserved for three, holds two.
        let program = generate(&tree).unwrap();
        assert_eq!(program.keys().len(), 2);
    }

    #[test]
    fn a_generated_program_s_key_table_is_stamped_once_for_its_keys() {
        // Codegen interns without a stamp; the program notes the change, with or without
        // constants compared (a `bool` test adds nothing to the dictionary).
        let boolean = |name: &str| {
            node(NodeKind::Test(Test {
                key: Key::Header(name.into()),
                pred: Pred::Bool(true),
            }))
        };
        let tables = [
            generate(&test("a")).unwrap(),
            generate(&boolean("a")).unwrap(),
            generate(&node(NodeKind::Or(vec![boolean("a"), boolean("b")]))).unwrap(),
        ];
        let stamps: Vec<u64> = tables.iter().map(|p| p.keys().stamp()).collect();
        assert!(stamps.iter().all(|&s| s != 0), "{stamps:?}");
        assert!(stamps.windows(2).all(|w| w[0] != w[1]), "{stamps:?}");
        // A program of no test keeps the empty table's stamp.
        assert_eq!(generate(&node(NodeKind::True)).unwrap().keys().stamp(), 0);
    }
}

//! The common IR: one boolean language for every dialect.
//!
//! `And`, `Or`, `Not`, `True`, `False` and `Test(key, predicate)`. Every dialect quirk — what a
//! missing key means, type mismatches, "any element" versus "no element", case folding — is made
//! explicit while lowering, so nothing downstream knows which dialect a node came from. Each node
//! carries the JSON Pointer (or text span) of the policy part it came from.
//!
//! Predicates hold when **some leaf** of the key's slot satisfies them ([`Pred::Shape`] looks at
//! the slot's shape instead). "No leaf satisfies" is `Not(Test(..))`.

pub(crate) mod json;

use filtervm_vm::address::Block;
use filtervm_vm::case_pattern::CasePattern;
use filtervm_vm::cidr::Cidr;
use filtervm_vm::json::Quoted;
use filtervm_vm::key::Key;
use filtervm_vm::pattern::SegmentPattern;
use filtervm_vm::program::{DecInterval, Interval, show_dec_intervals, show_intervals};
use filtervm_vm::value::{LeafTypes, Shapes};
use filtervm_vm::wildcard::Wildcard;
use std::fmt::{self, Write as _};
use std::sync::{Arc, LazyLock};

/// An IR node and the policy location it came from.
#[derive(Debug, Clone)]
pub struct Node {
    /// What the node computes.
    pub kind: NodeKind,
    /// A JSON Pointer (or text span) into the policy. Shared, so that the nodes lowered from one
    /// part of a policy, and the optimizer's copy of a tree, hold one copy of it.
    pub origin: Arc<str>,
}

/// What a node's origin can be made from: text (copied, unless empty) or an origin already
/// shared.
pub trait IntoOrigin {
    /// The origin.
    fn into_origin(self) -> Arc<str>;
}

/// The empty origin (the policy's root), shared by every node that has it.
fn root_origin() -> Arc<str> {
    static ROOT: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from(""));
    ROOT.clone()
}

impl IntoOrigin for &str {
    fn into_origin(self) -> Arc<str> {
        if self.is_empty() {
            root_origin()
        } else {
            Arc::from(self)
        }
    }
}

impl IntoOrigin for &String {
    fn into_origin(self) -> Arc<str> {
        self.as_str().into_origin()
    }
}

impl IntoOrigin for String {
    fn into_origin(self) -> Arc<str> {
        self.as_str().into_origin()
    }
}

impl IntoOrigin for Box<str> {
    fn into_origin(self) -> Arc<str> {
        (&*self).into_origin()
    }
}

impl IntoOrigin for Arc<str> {
    fn into_origin(self) -> Arc<str> {
        self
    }
}

impl IntoOrigin for &Arc<str> {
    fn into_origin(self) -> Arc<str> {
        self.clone()
    }
}

/// The node kinds.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// Always holds.
    True,
    /// Never holds.
    False,
    /// All children hold.
    And(Vec<Node>),
    /// Some child holds.
    Or(Vec<Node>),
    /// The child does not hold.
    Not(Box<Node>),
    /// A test on one key.
    Test(Test),
}

/// A test of one key.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// The key read.
    pub key: Key,
    /// What must hold.
    pub pred: Pred,
}

/// String comparison kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StrOp {
    /// Whole-string equality.
    Eq,
    /// Starts with.
    Prefix,
    /// Ends with.
    Suffix,
    /// Contains as a substring.
    Contains,
}

/// Case handling for string comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Case {
    /// Exact code points.
    Sensitive,
    /// Ordinal ignore-case, simple uppercase mapping (EG-31); constants are stored folded.
    Fold,
}

/// Where a numeric test reads its numbers from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NumSource {
    /// Number leaves only (sns rule 10).
    NumberLeaf,
    /// String leaves whose whole text is a JSON number (basaltic B-10, stream S9).
    Text,
    /// Number leaves that are comparable: written as their binary64's shortest form
    /// (EventBridge EB-17; [`filtervm_vm::number::is_comparable`]).
    Comparable,
}

/// A predicate over one slot.
#[derive(Debug, Clone, PartialEq)]
pub enum Pred {
    /// The slot's shape is one of these.
    Shape(Shapes),
    /// Some leaf has one of these types.
    HasType(LeafTypes),
    /// Some string leaf compares true with one of `values` (sorted, deduplicated).
    Str {
        /// The comparison.
        op: StrOp,
        /// Case handling; with [`Case::Fold`] the values are folded.
        case: Case,
        /// The alternatives (shared: the optimizer's copy and the program's pools hold these).
        values: Vec<Arc<str>>,
    },
    /// Some string leaf matches the SNS wildcard.
    Wildcard(Wildcard),
    /// Some string leaf matches the dot-segment pattern.
    Segment(SegmentPattern),
    /// Some string leaf is an IP address inside the block.
    Cidr(Cidr),
    /// Some number lies in one of the intervals (binary64).
    Num {
        /// Where the numbers come from.
        source: NumSource,
        /// The intervals (a union).
        ranges: Vec<Interval>,
    },
    /// Some number leaf lies in one of the exact-decimal intervals (EG-33).
    Dec(Vec<DecInterval>),
    /// Some bool leaf equals the value.
    Bool(bool),
    /// Some number leaf is written exactly as one of the texts (sorted, deduplicated): a number
    /// compared by its text (EB-16).
    NumText(Vec<Arc<str>>),
    /// Some string leaf is an IP address inside the block (EB-13, EB-27..EB-29).
    Address(Block),
    /// Some string leaf matches the case pattern (full case mappings, EB-20, EB-21).
    IgnoreCase(CasePattern),
    /// Some leaf, of any type, satisfies none of the predicates (each a test of one leaf's
    /// value: not [`Pred::Shape`] nor another `Except`). EventBridge's `anything-but` (EB-25):
    /// a field passes when some value is not excluded.
    Except(Vec<Pred>),
}

impl Node {
    /// A node.
    pub fn new(kind: NodeKind, origin: impl IntoOrigin) -> Node {
        Node {
            kind,
            origin: origin.into_origin(),
        }
    }

    /// A test node.
    pub fn test(key: Key, pred: Pred, origin: impl IntoOrigin) -> Node {
        Node::new(NodeKind::Test(Test { key, pred }), origin)
    }

    /// `And` of children.
    pub fn and(children: Vec<Node>, origin: impl IntoOrigin) -> Node {
        Node::new(NodeKind::And(children), origin)
    }

    /// `Or` of children.
    pub fn or(children: Vec<Node>, origin: impl IntoOrigin) -> Node {
        Node::new(NodeKind::Or(children), origin)
    }

    /// `Not` of a child (keeps the child's origin).
    pub fn negation(child: Node) -> Node {
        let origin = child.origin.clone();
        Node::new(NodeKind::Not(Box::new(child)), origin)
    }

    /// A constant.
    pub fn constant(value: bool, origin: impl IntoOrigin) -> Node {
        Node::new(
            if value {
                NodeKind::True
            } else {
                NodeKind::False
            },
            origin,
        )
    }

    /// Structural equality, ignoring origins.
    pub fn same(&self, other: &Node) -> bool {
        match (&self.kind, &other.kind) {
            (NodeKind::True, NodeKind::True) | (NodeKind::False, NodeKind::False) => true,
            (NodeKind::And(a), NodeKind::And(b)) | (NodeKind::Or(a), NodeKind::Or(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
            }
            (NodeKind::Not(a), NodeKind::Not(b)) => a.same(b),
            (NodeKind::Test(a), NodeKind::Test(b)) => a == b,
            _ => false,
        }
    }

    /// The number of nodes.
    pub fn size(&self) -> usize {
        1 + match &self.kind {
            NodeKind::And(c) | NodeKind::Or(c) => c.iter().map(Node::size).sum(),
            NodeKind::Not(c) => c.size(),
            _ => 0,
        }
    }

    /// Visits every node, parents first.
    pub fn walk(&self, f: &mut dyn FnMut(&Node)) {
        f(self);
        match &self.kind {
            NodeKind::And(c) | NodeKind::Or(c) => c.iter().for_each(|c| c.walk(f)),
            NodeKind::Not(c) => c.walk(f),
            _ => {}
        }
    }
}

impl fmt::Display for Pred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pred::Shape(s) => write!(f, "shape {s}"),
            Pred::HasType(t) => write!(f, "has-type {t}"),
            Pred::Str { op, case, values } => {
                let op = match op {
                    StrOp::Eq => "eq",
                    StrOp::Prefix => "prefix",
                    StrOp::Suffix => "suffix",
                    StrOp::Contains => "contains",
                };
                let case = if *case == Case::Fold { "-fold" } else { "" };
                write!(f, "str-{op}{case} ")?;
                quoted_list(f, values)
            }
            Pred::Wildcard(w) => write!(f, "wildcard {}", Quoted(w.source())),
            Pred::Segment(p) => write!(f, "segment {}", Quoted(p.source())),
            Pred::Cidr(c) => write!(f, "cidr {}", Quoted(c.source())),
            Pred::Num { source, ranges } => {
                let src = match source {
                    NumSource::Text => "text-num",
                    NumSource::NumberLeaf => "num",
                    NumSource::Comparable => "cmp-num",
                };
                write!(f, "{src} {}", show_intervals(ranges))
            }
            Pred::Dec(r) => write!(f, "dec {}", show_dec_intervals(r)),
            Pred::Bool(b) => write!(f, "bool {b}"),
            Pred::NumText(values) => {
                f.write_str("num-text ")?;
                quoted_list(f, values)
            }
            Pred::Address(b) => write!(f, "addr {}", Quoted(b.source())),
            Pred::IgnoreCase(c) => write!(f, "case {c}"),
            Pred::Except(preds) => {
                f.write_str("except [")?;
                for (i, p) in preds.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    fmt::Display::fmt(p, f)?;
                }
                f.write_str("]")
            }
        }
    }
}

/// `["a", "b"]`: strings as JSON literals, comma and space between.
fn quoted_list(f: &mut fmt::Formatter<'_>, values: &[impl AsRef<str>]) -> fmt::Result {
    f.write_str("[")?;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{}", Quoted(v.as_ref()))?;
    }
    f.write_str("]")
}

impl fmt::Display for Node {
    /// The stable text form: one node a line, children indented, origin after `;`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        print(self, 0, &mut out);
        f.write_str(&out)
    }
}

fn print(node: &Node, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let head = match &node.kind {
        NodeKind::True => "true".to_owned(),
        NodeKind::False => "false".to_owned(),
        NodeKind::And(_) => "and".to_owned(),
        NodeKind::Or(_) => "or".to_owned(),
        NodeKind::Not(_) => "not".to_owned(),
        NodeKind::Test(t) => format!("test {} {}", t.key, t.pred),
    };
    let origin = if node.origin.is_empty() {
        "(root)"
    } else {
        &node.origin
    };
    let _ = writeln!(
        out,
        "{pad}{head:<w$} ; {origin}",
        w = 60usize.saturating_sub(pad.len())
    );
    match &node.kind {
        NodeKind::And(c) | NodeKind::Or(c) => c.iter().for_each(|c| print(c, depth + 1, out)),
        NodeKind::Not(c) => print(c, depth + 1, out),
        _ => {}
    }
}

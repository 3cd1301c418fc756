//! Parsing and structural validation of SNS filter policies (sns rules 1, 15, 22-41, 43a, D-4).
//!
//! The checks follow event-ruler's compiler (the spec's \[ER\]), in its order: members are read in
//! policy order, and inside one operator object the first operator is validated before a second
//! key is reported. Every message quotes the AWS wording the spec names, so a team moving from AWS
//! finds the text it knows; each error also carries a JSON Pointer and a code for its kind
//! (syntax, type, unknown operator, invalid value: see the [dialect's error table](super)).
//! Errors in different members are all collected; inside one alternative, checking stops at the
//! first.

use super::shape::Shape;
use crate::error::pointer::Lazy;
use crate::error::{ErrorCode, PolicyError, excerpt, pointer, suggestion};
use filtervm_vm::cidr::Cidr;
use filtervm_vm::json::{Arena, NumberRef, Value, ValueRef};
use filtervm_vm::wildcard::Wildcard;
use std::cell::Cell;
use std::sync::Arc;

const SYNTAX: ErrorCode = ErrorCode::SnsSyntaxError;
const TYPE: ErrorCode = ErrorCode::SnsTypeError;
const UNKNOWN: ErrorCode = ErrorCode::SnsUnknownOperator;
const VALUE: ErrorCode = ErrorCode::SnsInvalidValue;

/// The operators of a match expression (rules 25-33).
pub const OPERATORS: [&str; 8] = RESERVED_IN_OR;

/// The operators `anything-but` takes inside it (rule 41).
pub const ANYTHING_BUT_OPERATORS: [&str; 4] =
    ["prefix", "suffix", "wildcard", "equals-ignore-case"];

/// The `$or` keyword (rule 34): always the operator, never a field name.
pub const OR: &str = "$or";

/// Operator names that may not be field names inside `$or` branches (rule 34 DECISION).
pub const RESERVED_IN_OR: [&str; 8] = [
    "prefix",
    "suffix",
    "anything-but",
    "numeric",
    "exists",
    "equals-ignore-case",
    "wildcard",
    "cidr",
];

/// A policy object: its members are ANDed (rule 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// The members, in policy order.
    pub members: Vec<Member>,
}

/// One member of a policy object.
#[derive(Debug, Clone, PartialEq)]
pub enum Member {
    /// `"name": [alternatives]`: the alternatives are ORed (rule 1).
    Leaf {
        /// The property name (shared with the keys lowered from it).
        name: Arc<str>,
        /// JSON Pointer of the member (shared with the IR lowered from it); `None` for a list
        /// of one alternative, whose member's pointer is its alternative's without the last
        /// token (see [`list_pointer`]): the optimized IR never keeps it (the optimizer unwraps
        /// an `or` of one child), so it is not allocated for every such list.
        pointer: Option<Arc<str>>,
        /// The alternatives with their pointers.
        alternatives: Alternatives,
    },
    /// `"name": {...}`: a nested body policy (rule 15).
    Nested {
        /// The property name (shared with the keys lowered from it).
        name: Arc<str>,
        /// JSON Pointer of the member (shared with the IR lowered from it).
        pointer: Arc<str>,
        /// The nested object.
        object: Object,
    },
    /// `"$or": [{...}, {...}, ...]`: the branches are ORed, and the whole is ANDed with the
    /// siblings (rule 34).
    Or {
        /// JSON Pointer of the `$or` member (shared with the IR lowered from it).
        pointer: Arc<str>,
        /// The branches with their pointers.
        branches: Vec<(Object, Arc<str>)>,
    },
}

/// The alternatives of a leaf list. Most lists hold one or two alternatives, kept inline: the
/// list then allocates nothing. A list of one alternative keeps that alternative's pointer (its
/// member keeps none, see [`list_pointer`]); a list of two or more keeps none for its elements:
/// its member keeps the list's, and an element's is the list's with the element's index
/// appended ([`element_pointer`]), made only by a lowering that keeps it (the tests of a list
/// of strings of one kind merged into one test keep the list's).
#[derive(Debug, Clone, PartialEq)]
pub enum Alternatives {
    /// A list of one alternative, with its pointer.
    One(Matcher, Arc<str>),
    /// A list of two alternatives.
    Two([Matcher; 2]),
    /// Any other list.
    Many(Vec<Matcher>),
}

impl Alternatives {
    /// The matchers, in list order.
    pub fn matchers(&self) -> &[Matcher] {
        match self {
            Alternatives::One(one, _) => std::slice::from_ref(one),
            Alternatives::Two(two) => two,
            Alternatives::Many(many) => many,
        }
    }
}

/// The JSON Pointer of a leaf list's member: its `pointer` ([`Member::Leaf`]'s), or for a list
/// of one alternative, which keeps none, the pointer of its alternative without its last
/// reference token (`/0`).
pub fn list_pointer<'a>(pointer: Option<&'a str>, alternatives: &'a Alternatives) -> &'a str {
    pointer.unwrap_or_else(|| match alternatives {
        Alternatives::One(_, at) => at.strip_suffix("/0").unwrap_or(at),
        Alternatives::Two(_) | Alternatives::Many(_) => "",
    })
}

/// The JSON Pointer of element `i` of the list at `list`, written in `buffer` (cleared first)
/// and shared (one allocation): what validation would have written for it.
pub fn element_pointer(buffer: &mut String, list: &str, i: usize) -> Arc<str> {
    buffer.clear();
    buffer.push_str(list);
    pointer::push_index(buffer, i);
    Arc::from(buffer.as_str())
}

/// A comparison of `numeric` (rule 31).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// The number.
    pub value: f64,
    /// Whether the number itself is inside.
    pub inclusive: bool,
}

/// What `anything-but` excludes (rules 28, 29, 41).
#[derive(Debug, Clone, PartialEq)]
pub enum Exclusion {
    /// String leaves equal to one of these.
    Strings(Vec<String>),
    /// Number leaves numerically equal to one of these.
    Numbers(Vec<f64>),
    /// String leaves starting with one of these.
    Prefixes(Vec<String>),
    /// String leaves ending with one of these.
    Suffixes(Vec<String>),
    /// String leaves equal to one of these ignoring case.
    EqualsIgnoreCase(Vec<String>),
    /// String leaves matching one of these wildcards.
    Wildcards(Vec<Wildcard>),
}

/// One alternative of a leaf list (rules 22-33).
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// `"s"`: exact string (rule 22); shared with the IR lowered from it.
    Exact(Arc<str>),
    /// A bare number: numeric equality on number leaves (rule 23).
    Number(f64),
    /// `true` / `false` (rule 24).
    Bool(bool),
    /// `null` (rule 24).
    Null,
    /// `{"prefix": s}` (rule 25); shared with the IR lowered from it.
    Prefix(Arc<str>),
    /// `{"suffix": s}` (rule 25); shared with the IR lowered from it.
    Suffix(Arc<str>),
    /// `{"equals-ignore-case": s}` (rule 26).
    EqualsIgnoreCase(String),
    /// `{"wildcard": s}` (rule 27). Boxed, as [`Matcher::Cidr`] is: the two are the largest
    /// matchers by far, and every leaf list holds its matchers inline.
    Wildcard(Box<Wildcard>),
    /// `{"cidr": s}` (rule 32).
    Cidr(Box<Cidr>),
    /// `{"numeric": [...]}`: lower and upper bounds, either may be missing (rule 31).
    Numeric {
        /// The lower bound.
        lo: Option<Bound>,
        /// The upper bound.
        hi: Option<Bound>,
    },
    /// `{"exists": b}` (rule 33).
    Exists(bool),
    /// `{"anything-but": ...}` (rules 28-30).
    AnythingBut(Exclusion),
}

/// Collects errors while parsing. Nested objects are parsed in both scopes; whether the scope
/// allows them is checked afterwards (rule 13).
#[derive(Debug)]
pub struct Parser {
    /// Errors found so far.
    pub errors: Vec<PolicyError>,
    /// The pointer of what is being read: extended by one reference token when a member or an
    /// element is entered, copied once into the `Arc` the policy and its IR share, and truncated
    /// back when it is left (see [`Parser::enter_member`]). Between two reads of a root it is
    /// empty.
    scratch: String,
}

/// The room a parser's pointer buffer starts with: more than most policies' longest pointer,
/// so that it is allocated once.
const SCRATCH: usize = 64;

impl Default for Parser {
    fn default() -> Parser {
        Parser {
            errors: Vec::new(),
            scratch: String::with_capacity(SCRATCH),
        }
    }
}

thread_local! {
    /// A pointer buffer kept between parsers on this thread ([`Parser::with_local_buffer`]).
    static BUFFER: Cell<String> = const { Cell::new(String::new()) };
}

impl Parser {
    /// Calls `f` with a parser whose pointer buffer is this thread's, kept for the next parser
    /// when `f` returns: a thread that has parsed a policy parses the next without allocating
    /// the buffer. The parser is the same as [`Parser::default`] in every other way.
    pub fn with_local_buffer<R>(f: impl FnOnce(&mut Parser) -> R) -> R {
        let mut scratch = BUFFER.try_with(Cell::take).unwrap_or_default();
        scratch.clear();
        scratch.reserve(SCRATCH);
        let mut parser = Parser {
            errors: Vec::new(),
            scratch,
        };
        let out = f(&mut parser);
        let _ = BUFFER.try_with(|cell| cell.set(std::mem::take(&mut parser.scratch)));
        out
    }
}

impl Parser {
    /// Enters member `name` of what is being read: returns the length to [`Parser::leave`] to.
    /// The member's pointer is written in place after its parent's, which the buffer already
    /// holds; [`Parser::shared`] copies it when the member keeps it.
    fn enter_member(&mut self, name: &str) -> usize {
        let len = self.scratch.len();
        pointer::push_token(&mut self.scratch, name);
        len
    }

    /// The pointer of what is being read, shared (one allocation).
    fn shared(&self) -> Arc<str> {
        Arc::from(self.scratch.as_str())
    }

    /// The pointer of what is being read, for an error.
    fn here(&self) -> String {
        self.scratch.clone()
    }

    /// Enters element `i` of what is being read (see [`Parser::enter_member`]).
    fn enter_element(&mut self, i: usize) -> (usize, Arc<str>) {
        let len = self.scratch.len();
        pointer::push_index(&mut self.scratch, i);
        (len, Arc::from(self.scratch.as_str()))
    }

    /// Leaves what was entered at `len`: the buffer holds its parent's pointer again.
    fn leave(&mut self, len: usize) {
        self.scratch.truncate(len);
    }
}

/// The members of a policy object, in policy order.
type Members<'a> = &'a [(&'a str, ValueRef<'a>)];

/// The branches of a `$or`, each with its pointer ([`Member::Or`]).
type Branches = Vec<(Object, Arc<str>)>;

fn text_of(v: &ValueRef<'_>) -> String {
    match v {
        ValueRef::String(s) => (*s).to_owned(),
        ValueRef::Number(n) => n.to_string(),
        ValueRef::Bool(b) => b.to_string(),
        ValueRef::Null => "null".to_owned(),
        ValueRef::Object(_) => "{".to_owned(),
        ValueRef::Array(_) => "[".to_owned(),
    }
}

/// A policy number as a binary64: `None` when it is not finite (rule 31 DECISION).
fn finite(n: &NumberRef<'_>) -> Option<f64> {
    n.as_f64()
}

impl Parser {
    /// Reports an error at `at`: a written pointer, or a [`Lazy`] one, written now.
    fn fail<T>(
        &mut self,
        code: ErrorCode,
        at: impl Into<String>,
        message: impl Into<String>,
    ) -> Option<T> {
        self.errors.push(PolicyError::new(code, at, message));
        None
    }

    fn not_finite<T>(&mut self, at: impl Into<String>, n: &NumberRef<'_>) -> Option<T> {
        self.fail(
            VALUE,
            at,
            format!(
                "the number {} is out of range: it is not finite as a binary64",
                excerpt(n)
            ),
        )
    }

    /// Parses the policy root (rule 1; rule 2: `{}` is the empty policy), given as an owned
    /// tree: [`Parser::root_ref`] of it.
    pub fn root(&mut self, policy: &Value) -> Option<Object> {
        Arena::with_local(|arena| self.root_ref(arena.value(policy)))
    }

    /// Parses the policy root (rule 1; rule 2: `{}` is the empty policy).
    pub fn root_ref(&mut self, policy: ValueRef<'_>) -> Option<Object> {
        self.root_shaped(policy).map(|(root, _)| root)
    }

    /// [`Parser::root_ref`], with the root's [`Shape`] (what [`Shape::of`] gives), gathered
    /// while the policy is read rather than in a walk of its own.
    pub(crate) fn root_shaped(&mut self, policy: ValueRef<'_>) -> Option<(Object, Shape)> {
        let ValueRef::Object(map) = policy else {
            return self.fail(
                SYNTAX,
                "",
                "Filter is not an object: a filter policy is a JSON object",
            );
        };
        self.scratch.clear();
        self.object(map, false, 1)
    }

    /// Parses an object's members (rule 1, 15, 34, 36); the buffer holds the object's pointer.
    /// The object is at `depth` (the root at 1), as [`Shape`] counts it.
    fn object(&mut self, map: Members<'_>, in_or: bool, depth: u64) -> Option<(Object, Shape)> {
        let before = self.errors.len();
        let mut members = Vec::with_capacity(map.len());
        let mut shape = Shape {
            nested: false,
            leaf_lists: 0,
            combinations: 1,
        };
        for &(name, value) in map {
            let len = self.enter_member(name);
            self.member(name, value, in_or, depth, &mut members, &mut shape);
            self.leave(len);
        }
        (self.errors.len() == before).then_some((Object { members }, shape))
    }

    /// One member of an object at `depth`, at the pointer the buffer holds, added to `members`
    /// and to the object's `shape` (as [`Shape::of`] adds it) when it is valid.
    fn member(
        &mut self,
        name: &str,
        value: ValueRef<'_>,
        in_or: bool,
        depth: u64,
        members: &mut Vec<Member>,
        shape: &mut Shape,
    ) {
        if name == OR {
            let at = self.shared();
            if let Some((branches, inner)) = self.or(value, &at, depth) {
                shape.add(inner.nested, inner.leaf_lists, inner.combinations);
                members.push(Member::Or {
                    pointer: at,
                    branches,
                });
            }
            return;
        }
        if in_or && RESERVED_IN_OR.contains(&name) {
            self.fail::<()>(
                SYNTAX,
                self.here(),
                format!("{name} is Ruler reserved fieldName which cannot be used inside $or."),
            );
            return;
        }
        match value {
            ValueRef::Object([]) => {
                // D-4.
                self.fail::<()>(SYNTAX, self.here(), "Empty objects are not allowed");
            }
            ValueRef::Object(child) => {
                let at = self.shared();
                if let Some((object, inner)) = self.object(child, in_or, depth.saturating_add(1)) {
                    shape.add(true, inner.leaf_lists, inner.combinations);
                    members.push(Member::Nested {
                        name: name.into(),
                        pointer: at,
                        object,
                    });
                }
            }
            ValueRef::Array(items) => {
                // A list of one alternative keeps no pointer of its own (`list_pointer`): an
                // empty list, the only one whose error names the member, is not one.
                let pointer = (items.len() != 1).then(|| self.shared());
                let at = pointer.as_deref().unwrap_or_default();
                if let Some(alternatives) = self.alternatives(items, at) {
                    let n = u64::try_from(alternatives.matchers().len()).unwrap_or(u64::MAX);
                    shape.add(false, 1, depth.saturating_mul(n));
                    members.push(Member::Leaf {
                        name: name.into(),
                        pointer,
                        alternatives,
                    });
                }
            }
            _ => {
                // Rule 36.
                self.fail::<()>(
                    SYNTAX,
                    self.here(),
                    format!("\"{}\" must be an object or an array", excerpt(name)),
                );
            }
        }
    }

    /// Parses a `$or` value: an array of two or more non-empty objects (rule 34), with what its
    /// branches add to their object's [`Shape`]: whether one is nested, their leaf lists, and
    /// the sum of their combinations (their own at `depth`, the `$or`'s).
    fn or(&mut self, value: ValueRef<'_>, at: &str, depth: u64) -> Option<(Branches, Shape)> {
        let ValueRef::Array(items) = value else {
            return self.fail(SYNTAX, at, "It must be an Array followed with $or.");
        };
        let before = self.errors.len();
        let mut branches = Vec::with_capacity(items.len());
        let mut shape = Shape {
            nested: false,
            leaf_lists: 0,
            combinations: 0,
        };
        for (i, item) in items.iter().enumerate() {
            let (len, at) = self.enter_element(i);
            match item {
                ValueRef::Object([]) => {
                    self.fail::<()>(SYNTAX, &*at, "Empty objects are not allowed");
                }
                ValueRef::Object(map) => {
                    if let Some((object, inner)) = self.object(map, true, depth) {
                        shape.nested |= inner.nested;
                        shape.leaf_lists = shape.leaf_lists.saturating_add(inner.leaf_lists);
                        shape.combinations = shape.combinations.saturating_add(inner.combinations);
                        branches.push((object, at));
                    }
                }
                _ => {
                    self.fail::<()>(
                        SYNTAX,
                        &*at,
                        "Only JSON object is allowed in array of $or relationship.",
                    );
                }
            }
            self.leave(len);
        }
        if items.len() < 2 {
            self.fail::<()>(
                SYNTAX,
                at,
                "There must have at least 2 Objects in $or relationship.",
            );
        }
        (self.errors.len() == before).then_some((branches, shape))
    }

    /// Parses a leaf list (rules 1, 37).
    fn alternatives(&mut self, items: &[ValueRef<'_>], at: &str) -> Option<Alternatives> {
        if items.is_empty() {
            return self.fail(SYNTAX, at, "Empty arrays are not allowed");
        }
        let before = self.errors.len();
        if let [item] = items {
            let (len, at) = self.enter_element(0);
            let one = self.alternative(item, &Lazy::new(&at));
            self.leave(len);
            return (self.errors.len() == before).then(|| match one {
                Some(m) => Alternatives::One(m, at),
                None => Alternatives::Many(Vec::new()),
            });
        }
        // The elements of a list of two or more keep no pointer: each names its pointer, the
        // list's (`at`) with its index, to its errors only, written when one is reported.
        let list = Lazy::new(at);
        if let [first, second] = items {
            let first = self.alternative(first, &list.index(0));
            let second = self.alternative(second, &list.index(1));
            return (self.errors.len() == before).then(|| match (first, second) {
                (Some(a), Some(b)) => Alternatives::Two([a, b]),
                _ => Alternatives::Many(Vec::new()),
            });
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if let Some(m) = self.alternative(item, &list.index(i)) {
                out.push(m);
            }
        }
        (self.errors.len() == before).then_some(Alternatives::Many(out))
    }

    /// One alternative of a leaf list, at `at` (see [`Parser::alternatives`]).
    fn alternative(&mut self, item: &ValueRef<'_>, at: &Lazy<'_>) -> Option<Matcher> {
        const MATCH_VALUE: &str = "Match value must be String, number, true, false, or null";
        match item {
            ValueRef::String(s) => Some(Matcher::Exact((*s).into())),
            ValueRef::Number(n) => match finite(n) {
                Some(x) => Some(Matcher::Number(x)),
                None => self.not_finite(at, n),
            },
            ValueRef::Bool(b) => Some(Matcher::Bool(*b)),
            ValueRef::Null => Some(Matcher::Null),
            ValueRef::Array(_) => self.fail(TYPE, at, MATCH_VALUE),
            ValueRef::Object(op) => {
                let mut entries = op.iter();
                let Some(&(name, operand)) = entries.next() else {
                    return self.fail(
                        SYNTAX,
                        at,
                        format!("{MATCH_VALUE} (an empty object is no operator)"),
                    );
                };
                // The operator's pointer names only its errors (the IR's origin is the
                // element's pointer): written when one is reported.
                let matcher = self.operator(name, operand, &at.token(name))?;
                if let Some((second, _)) = entries.next() {
                    return self.fail(
                        SYNTAX,
                        &at.token(second),
                        "Only one key allowed in match expression",
                    );
                }
                Some(matcher)
            }
        }
    }

    /// One operator (rules 25-33, 37-41, 43a).
    fn operator(&mut self, name: &str, operand: ValueRef<'_>, at: &Lazy<'_>) -> Option<Matcher> {
        // The operand's text, borrowed: each matcher copies what it keeps, once.
        fn text<'v>(
            p: &mut Parser,
            operand: ValueRef<'v>,
            at: &Lazy<'_>,
            what: &str,
        ) -> Option<&'v str> {
            match operand {
                ValueRef::String(s) => Some(s),
                _ => p.fail(TYPE, at, format!("{what} match pattern must be a string")),
            }
        }
        let string = |p: &mut Parser, what: &str| text(p, operand, at, what);
        match name {
            "prefix" => string(self, "prefix").map(|s| Matcher::Prefix(s.into())),
            "suffix" => string(self, "suffix").map(|s| Matcher::Suffix(s.into())),
            "equals-ignore-case" => {
                string(self, "equals-ignore-case").map(|s| Matcher::EqualsIgnoreCase(s.to_owned()))
            }
            "wildcard" => {
                let s = string(self, "wildcard")?;
                match Wildcard::compile(s) {
                    Ok(w) => Some(Matcher::Wildcard(Box::new(w))),
                    Err(e) => self.fail(VALUE, at, e.message),
                }
            }
            "cidr" => {
                // Rule 40 (1): sic, event-ruler says "prefix" here.
                let s = string(self, "prefix")?;
                match Cidr::parse(s) {
                    Ok(c) => Some(Matcher::Cidr(Box::new(c))),
                    Err(e) => self.fail(VALUE, at, e.message),
                }
            }
            "exists" => match operand {
                ValueRef::Bool(b) => Some(Matcher::Exists(b)),
                _ => self.fail(
                    TYPE,
                    at,
                    "exists match pattern must be either true or false.",
                ),
            },
            "numeric" => self.numeric(operand, at),
            "anything-but" => self.anything_but(operand, at).map(Matcher::AnythingBut),
            other => self.fail(
                UNKNOWN,
                at,
                format!(
                    "Unrecognized match type {}{}",
                    excerpt(other),
                    suggestion(other, &OPERATORS)
                ),
            ),
        }
    }

    /// `numeric` (rules 31, 38, 43a), token by token as event-ruler reads it.
    fn numeric(&mut self, operand: ValueRef<'_>, at: &Lazy<'_>) -> Option<Matcher> {
        let ValueRef::Array(items) = operand else {
            return self.fail(TYPE, at, "Value of numeric must be an array.");
        };
        // The pointer of element `i`, or of the array itself when the element is missing.
        let ptr = |i: usize| {
            if i < items.len() {
                at.index(i).get()
            } else {
                at.get()
            }
        };
        let Some(&ValueRef::String(op)) = items.first() else {
            let text = items.first().map_or("]".to_owned(), text_of);
            return self.fail(
                SYNTAX,
                ptr(0),
                format!("Invalid member in numeric match: {}", excerpt(text)),
            );
        };
        let spelled = |op: &str| {
            if op == "=" {
                "equals".to_owned()
            } else {
                op.to_owned()
            }
        };
        // The operand after the operator at `i`.
        let number = |p: &mut Parser, i: usize, op: &str| -> Option<f64> {
            match items.get(i) {
                Some(ValueRef::Number(n)) => match finite(n) {
                    Some(x) => Some(x),
                    None => p.not_finite(ptr(i), n),
                },
                _ => p.fail(
                    TYPE,
                    ptr(i),
                    format!("Value of {} must be numeric", spelled(op)),
                ),
            }
        };
        let too_many = |p: &mut Parser, i: usize| -> Option<Matcher> {
            p.fail(SYNTAX, ptr(i), "Too many elements in numeric expression")
        };
        match op {
            "=" => {
                let x = number(self, 1, op)?;
                if items.len() > 2 {
                    return too_many(self, 2);
                }
                let b = Some(Bound {
                    value: x,
                    inclusive: true,
                });
                Some(Matcher::Numeric { lo: b, hi: b })
            }
            "<" | "<=" => {
                let x = number(self, 1, op)?;
                if items.len() > 2 {
                    return too_many(self, 2);
                }
                Some(Matcher::Numeric {
                    lo: None,
                    hi: Some(Bound {
                        value: x,
                        inclusive: op == "<=",
                    }),
                })
            }
            ">" | ">=" => {
                let lo = Bound {
                    value: number(self, 1, op)?,
                    inclusive: op == ">=",
                };
                let Some(second) = items.get(2) else {
                    return Some(Matcher::Numeric {
                        lo: Some(lo),
                        hi: None,
                    });
                };
                let &ValueRef::String(op2) = second else {
                    return self.fail(
                        SYNTAX,
                        ptr(2),
                        format!("Bad value in numeric range: {}", excerpt(text_of(second))),
                    );
                };
                if op2 != "<" && op2 != "<=" {
                    return self.fail(
                        UNKNOWN,
                        ptr(2),
                        format!("Bad numeric range operator: {}", excerpt(op2)),
                    );
                }
                let top = number(self, 3, op2)?;
                if items.len() > 4 {
                    return self.fail(SYNTAX, ptr(4), "Too many terms in numeric range expression");
                }
                if lo.value >= top {
                    return self.fail(VALUE, at, "Bottom must be less than top");
                }
                Some(Matcher::Numeric {
                    lo: Some(lo),
                    hi: Some(Bound {
                        value: top,
                        inclusive: op2 == "<=",
                    }),
                })
            }
            other => self.fail(
                UNKNOWN,
                ptr(0),
                format!("Unrecognized numeric range operator: {}", excerpt(other)),
            ),
        }
    }

    /// `anything-but` (rules 28-30, 41, 43a).
    fn anything_but(&mut self, operand: ValueRef<'_>, at: &Lazy<'_>) -> Option<Exclusion> {
        match operand {
            ValueRef::String(s) => Some(Exclusion::Strings(vec![s.to_owned()])),
            ValueRef::Number(n) => match finite(&n) {
                Some(x) => Some(Exclusion::Numbers(vec![x])),
                None => self.not_finite(at, &n),
            },
            ValueRef::Array(items) => self.anything_but_list(items, at),
            ValueRef::Object(op) => {
                let mut entries = op.iter();
                let Some(&(name, inner)) = entries.next() else {
                    return self.fail(SYNTAX, at, "Anything-But expression name not found");
                };
                let excl = self.anything_but_pattern(name, inner, &at.token(name))?;
                if let Some((second, _)) = entries.next() {
                    return self.fail(
                        SYNTAX,
                        &at.token(second),
                        "Only one key allowed in match expression",
                    );
                }
                Some(excl)
            }
            ValueRef::Bool(_) | ValueRef::Null => {
                let what = if operand.is_null() { "null" } else { "boolean" };
                self.fail(
                    TYPE,
                    at,
                    format!(
                        "Value of anything-but must be an array or single string/number value (inside anything but, {what} is not supported)"
                    ),
                )
            }
        }
    }

    fn anything_but_list(&mut self, items: &[ValueRef<'_>], at: &Lazy<'_>) -> Option<Exclusion> {
        const MIXED: &str = "Inside anything but list, either all values are number or string, mixed type is not supported";
        if items.is_empty() {
            return self.fail(SYNTAX, at, format!("{MIXED} (the list is empty)"));
        }
        let mut strings = Vec::new();
        let mut numbers = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_at = at.index(i);
            match item {
                ValueRef::String(s) => strings.push((*s).to_owned()),
                ValueRef::Number(n) => match finite(n) {
                    Some(x) => numbers.push(x),
                    None => return self.not_finite(&item_at, n),
                },
                other => {
                    let what = match other {
                        ValueRef::Bool(_) => "boolean",
                        ValueRef::Null => "null",
                        ValueRef::Object(_) => "object",
                        _ => "array",
                    };
                    return self.fail(
                        TYPE,
                        &item_at,
                        format!("Inside anything but list, {what} is not supported."),
                    );
                }
            }
            if !strings.is_empty() && !numbers.is_empty() {
                return self.fail(TYPE, &item_at, MIXED);
            }
        }
        Some(if numbers.is_empty() {
            Exclusion::Strings(strings)
        } else {
            Exclusion::Numbers(numbers)
        })
    }

    /// `{"anything-but": {op: operand}}` (rule 41 DECISION: a string or a non-empty list of
    /// strings; a value is excluded when it matches any entry).
    fn anything_but_pattern(
        &mut self,
        name: &str,
        operand: ValueRef<'_>,
        at: &Lazy<'_>,
    ) -> Option<Exclusion> {
        if !ANYTHING_BUT_OPERATORS.contains(&name) {
            return self.fail(
                UNKNOWN,
                at,
                format!(
                    "Unsupported anything-but pattern: {}{}",
                    excerpt(name),
                    suggestion(name, &ANYTHING_BUT_OPERATORS)
                ),
            );
        }
        // Each entry with its index in the list (`None`: the operand is the one entry).
        let entries: Vec<(String, Option<usize>)> = match operand {
            ValueRef::String(s) => vec![(s.to_owned(), None)],
            ValueRef::Array(items) if !items.is_empty() => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item {
                        ValueRef::String(s) => out.push(((*s).to_owned(), Some(i))),
                        _ => {
                            return self.fail(
                                TYPE,
                                &at.index(i),
                                format!("{name} match pattern must be a string"),
                            );
                        }
                    }
                }
                out
            }
            _ => return self.fail(TYPE, at, format!("{name} match pattern must be a string")),
        };
        let entry_at = |i: Option<usize>| i.map_or_else(|| at.get(), |i| at.index(i).get());
        // Where the spec is silent, event-ruler: an empty anything-but prefix or suffix would
        // exclude every string.
        if matches!(name, "prefix" | "suffix")
            && let Some((_, p)) = entries.iter().find(|(s, _)| s.is_empty())
        {
            return self.fail(VALUE, entry_at(*p), "Null prefix/suffix not allowed");
        }
        let strings = || entries.iter().map(|(s, _)| s.clone()).collect();
        Some(match name {
            "prefix" => Exclusion::Prefixes(strings()),
            "suffix" => Exclusion::Suffixes(strings()),
            "equals-ignore-case" => Exclusion::EqualsIgnoreCase(strings()),
            _ => {
                let mut patterns = Vec::with_capacity(entries.len());
                for (s, p) in &entries {
                    match Wildcard::compile(s) {
                        Ok(w) => patterns.push(w),
                        Err(e) => return self.fail(VALUE, entry_at(*p), e.message),
                    }
                }
                Exclusion::Wildcards(patterns)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(alt: serde_json::Value) -> Result<Matcher, Vec<(String, String)>> {
        one_text(&json!({ "k": [alt] }).to_string())
    }

    fn one_text(policy: &str) -> Result<Matcher, Vec<(String, String)>> {
        let mut p = Parser::default();
        let root = p.root(&filtervm_vm::json::parse(policy.as_bytes()).unwrap());
        match root {
            Some(Object { members }) if p.errors.is_empty() => match members.into_iter().next() {
                Some(Member::Leaf { alternatives, .. }) => Ok(alternatives.matchers()[0].clone()),
                other => panic!("{other:?}"),
            },
            _ => Err(p
                .errors
                .into_iter()
                .map(|e| (e.pointer, e.message))
                .collect()),
        }
    }

    /// An operator's pointer is written only when the operator reports an error: every error
    /// still names the operator (or a part of its operand) by its pointer, and a valid operator
    /// gives the matcher it gives in a policy.
    #[test]
    fn operators_report_errors_with_their_pointer() {
        for (op, pointer) in [
            (json!({"prefix": 1}), "/k/0/prefix"),
            (json!({"exists": "true"}), "/k/0/exists"),
            (json!({"wildcard": "a**"}), "/k/0/wildcard"),
            (json!({"cidr": "10.0.0.0/33"}), "/k/0/cidr"),
            (json!({"numeric": [">", 5, "<", 1]}), "/k/0/numeric"),
            (json!({"numeric": [">", "x"]}), "/k/0/numeric/1"),
            (json!({"anything-but": [1, "a"]}), "/k/0/anything-but/1"),
            (
                json!({"anything-but": {"suffix": [""]}}),
                "/k/0/anything-but/suffix/0",
            ),
            (json!({"a/b~": 1}), "/k/0/a~1b~0"),
        ] {
            assert_eq!(
                one(op.clone()).map_err(|e| e.into_iter().map(|(p, _)| p).collect::<Vec<_>>()),
                Err(vec![pointer.to_owned()]),
                "{op}"
            );
        }
        for op in [
            json!({"prefix": "a/~b"}),
            json!({"exists": false}),
            json!({"wildcard": "a*b"}),
            json!({"cidr": "10.0.0.0/8"}),
            json!({"numeric": [">=", 1, "<", 2]}),
            json!({"anything-but": {"wildcard": ["x*", "y"]}}),
        ] {
            let mut p = Parser::default();
            let operand = Value::from(&op);
            let arena = Arena::new();
            let operand = arena.value(&operand);
            let &(name, operand) = operand.as_object().unwrap().first().unwrap();
            let with_pointer = p.operator(name, operand, &Lazy::new("/k/0").token("op"));
            assert!(p.errors.is_empty(), "{op}");
            assert_eq!(one(op.clone()).ok(), with_pointer, "{op}");
        }
    }

    /// A parser with the thread's pointer buffer reads as a new one does, and the buffer (empty,
    /// with its room) is the next such parser's.
    #[test]
    fn the_thread_buffer_is_kept_between_parsers() {
        let policy = Value::from(&json!({"a": [{"prefix": 1}], "b": {"c": ["x", 2]}, "d": [3]}));
        let mut fresh = Parser::default();
        let expected = (fresh.root(&policy), fresh.errors);
        let read = || {
            Parser::with_local_buffer(|p| {
                assert!(p.scratch.is_empty() && p.scratch.capacity() >= SCRATCH);
                let root = p.root(&policy);
                (root, std::mem::take(&mut p.errors), p.scratch.as_ptr())
            })
        };
        let (first, second) = (read(), read());
        assert!(!expected.1.is_empty());
        assert_eq!((first.0, first.1), expected);
        assert_eq!((second.0, second.1), expected);
        assert_eq!(first.2, second.2);
    }

    /// The matchers of `alternatives`, in order, each with its pointer: a list of one keeps its
    /// element's, a longer one's are made from the list's (`pointer`).
    fn pointed<'a>(
        alternatives: &'a Alternatives,
        pointer: Option<&str>,
    ) -> Vec<(&'a Matcher, String)> {
        let list = list_pointer(pointer, alternatives);
        match alternatives {
            Alternatives::One(m, at) => vec![(m, at.to_string())],
            other => other
                .matchers()
                .iter()
                .enumerate()
                .map(|(i, m)| (m, element_pointer(&mut String::new(), list, i).to_string()))
                .collect(),
        }
    }

    /// A list of one or two alternatives is held inline, a longer one in a vector; all read as the
    /// slice of the list's matchers, in order, whose pointers are the element's (a list of one) or
    /// made from the list's.
    #[test]
    fn leaf_lists_read_as_slices() {
        let mut p = Parser::default();
        let root = p
            .root(
                &filtervm_vm::json::parse(br#"{"a": ["x"], "b": ["x", 2, {"prefix": "p"}]}"#)
                    .unwrap(),
            )
            .unwrap();
        let lists: Vec<(&Alternatives, Vec<(&Matcher, String)>)> = root
            .members
            .iter()
            .map(|m| match m {
                Member::Leaf {
                    alternatives,
                    pointer,
                    ..
                } => (alternatives, pointed(alternatives, pointer.as_deref())),
                other => panic!("{other:?}"),
            })
            .collect();
        let [(one, a), (many, b)] = lists.as_slice() else {
            panic!("{lists:?}");
        };
        assert!(matches!(one, Alternatives::One(..)));
        assert!(matches!(many, Alternatives::Many(_)));
        let mut p = Parser::default();
        let root = p
            .root(&filtervm_vm::json::parse(br#"{"a": ["x", {"prefix": "p"}]}"#).unwrap())
            .unwrap();
        let Some(Member::Leaf {
            alternatives,
            pointer,
            ..
        }) = root.members.first()
        else {
            panic!("{root:?}");
        };
        assert!(matches!(alternatives, Alternatives::Two(_)));
        assert_eq!(
            pointed(alternatives, pointer.as_deref()),
            [
                (&Matcher::Exact("x".into()), "/a/0".to_owned()),
                (&Matcher::Prefix("p".into()), "/a/1".to_owned()),
            ]
        );
        // Errors in both alternatives of a two-alternative list are both reported, in order.
        let mut p = Parser::default();
        let policy = filtervm_vm::json::parse(br#"{"a": [[1], {"prefix": 2}]}"#).unwrap();
        assert!(p.root(&policy).is_none());
        let pointers: Vec<&str> = p.errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(pointers, ["/a/0", "/a/1/prefix"]);
        assert_eq!(a, &[(&Matcher::Exact("x".into()), "/a/0".to_owned())]);
        assert_eq!(
            b,
            &[
                (&Matcher::Exact("x".into()), "/b/0".to_owned()),
                (&Matcher::Number(2.0), "/b/1".to_owned()),
                (&Matcher::Prefix("p".into()), "/b/2".to_owned()),
            ]
        );
    }

    /// Every leaf list holds its matchers inline (one or two in place, more in a vector): a
    /// matcher is no larger than its largest unboxed operand, the exclusion lists of
    /// `anything-but`, and a wildcard and a CIDR block (boxed) are still read as before.
    #[test]
    fn matchers_are_small() {
        assert!(
            std::mem::size_of::<Matcher>() <= std::mem::size_of::<Exclusion>() + 8,
            "{}",
            std::mem::size_of::<Matcher>()
        );
        assert_eq!(
            one(json!({"wildcard": "a*b"})),
            Ok(Matcher::Wildcard(Box::new(
                Wildcard::compile("a*b").unwrap()
            )))
        );
        assert_eq!(
            one(json!({"cidr": "10.0.0.0/8"})),
            Ok(Matcher::Cidr(Box::new(Cidr::parse("10.0.0.0/8").unwrap())))
        );
    }

    #[test]
    fn rule_31_numeric_bounds() {
        let b = |value, inclusive| Some(Bound { value, inclusive });
        assert_eq!(
            one(json!({"numeric": [">", 0, "<=", 150]})),
            Ok(Matcher::Numeric {
                lo: b(0.0, false),
                hi: b(150.0, true)
            })
        );
        assert_eq!(
            one(json!({"numeric": ["=", 3.015e2]})),
            Ok(Matcher::Numeric {
                lo: b(301.5, true),
                hi: b(301.5, true)
            })
        );
        assert_eq!(
            one(json!({"numeric": ["<", 5]})),
            Ok(Matcher::Numeric {
                lo: None,
                hi: b(5.0, false)
            })
        );
    }

    #[test]
    fn rule_28_anything_but_forms() {
        assert_eq!(
            one(json!({"anything-but": "a"})),
            Ok(Matcher::AnythingBut(Exclusion::Strings(vec!["a".into()])))
        );
        assert_eq!(
            one(json!({"anything-but": [1, 2.5]})),
            Ok(Matcher::AnythingBut(Exclusion::Numbers(vec![1.0, 2.5])))
        );
        assert_eq!(
            one(json!({"anything-but": {"suffix": ["a", "b"]}})),
            Ok(Matcher::AnythingBut(Exclusion::Suffixes(vec![
                "a".into(),
                "b".into()
            ])))
        );
        assert_eq!(
            one(json!({"anything-but": {"prefix": ""}})),
            Err(vec![(
                "/k/0/anything-but/prefix".into(),
                "Null prefix/suffix not allowed".into()
            )])
        );
    }

    #[test]
    fn rule_31_policy_numbers_must_be_finite() {
        for policy in [
            r#"{"k": [1e400]}"#,
            r#"{"k": [{"numeric": [">", 1e400]}]}"#,
            r#"{"k": [{"anything-but": [-1e400]}]}"#,
        ] {
            let e = one_text(policy).unwrap_err();
            assert!(e[0].1.contains("is out of range"), "{policy}: {e:?}");
        }
    }

    #[test]
    fn errors_have_a_code_per_kind() {
        let code = |alt: serde_json::Value| {
            let mut p = Parser::default();
            p.root(&Value::from(&json!({ "k": [alt] })));
            p.errors.first().map(|e| (e.code, e.message.clone()))
        };
        for (alt, expected, words) in [
            (json!([1]), TYPE, "Match value must be"),
            (
                json!({"prefix": 1}),
                TYPE,
                "prefix match pattern must be a string",
            ),
            (
                json!({"numeric": ">"}),
                TYPE,
                "Value of numeric must be an array.",
            ),
            (
                json!({"anything-but": true}),
                TYPE,
                "boolean is not supported",
            ),
            (json!({"anything-but": [1, "a"]}), TYPE, "mixed type"),
            (json!({}), SYNTAX, "an empty object is no operator"),
            (
                json!({"prefix": "a", "suffix": "b"}),
                SYNTAX,
                "Only one key allowed",
            ),
            (
                json!({"numeric": [5]}),
                SYNTAX,
                "Invalid member in numeric match: 5",
            ),
            (json!({"numeric": ["<", 1, 2]}), SYNTAX, "Too many elements"),
            (
                json!({"numric": [">", 1]}),
                UNKNOWN,
                "Unrecognized match type numric (did you mean `numeric`?)",
            ),
            (json!({"Prefix": "a"}), UNKNOWN, "(did you mean `prefix`?)"),
            (
                json!({"regex": "a"}),
                UNKNOWN,
                "Unrecognized match type regex",
            ),
            (
                json!({"numeric": ["=>", 1]}),
                UNKNOWN,
                "Unrecognized numeric range operator: =>",
            ),
            (
                json!({"numeric": [">", 1, ">", 2]}),
                UNKNOWN,
                "Bad numeric range operator: >",
            ),
            (
                json!({"anything-but": {"exists": true}}),
                UNKNOWN,
                "Unsupported anything-but pattern: exists",
            ),
            (
                json!({"anything-but": {"sufix": "a"}}),
                UNKNOWN,
                "(did you mean `suffix`?)",
            ),
            (json!({"cidr": "10.0.0.0/33"}), VALUE, ""),
            (
                json!({"wildcard": "a**"}),
                VALUE,
                "Consecutive wildcard characters",
            ),
            (
                json!({"numeric": [">", 5, "<", 1]}),
                VALUE,
                "Bottom must be less than top",
            ),
            (
                json!({"anything-but": {"prefix": ""}}),
                VALUE,
                "Null prefix/suffix not allowed",
            ),
        ] {
            let (got, message) = code(alt.clone()).unwrap_or_else(|| panic!("{alt} accepted"));
            assert_eq!(got, expected, "{alt}: {message}");
            assert!(message.contains(words), "{alt}: {message}");
        }
        let mut p = Parser::default();
        p.root(&Value::from(&json!({"a": []})));
        assert_eq!(p.errors[0].code, SYNTAX);
        let mut p = Parser::default();
        p.root(&Value::from(&json!([])));
        assert_eq!(p.errors[0].code, SYNTAX);
    }

    #[test]
    fn errors_in_several_members_are_all_reported_in_order() {
        let mut p = Parser::default();
        assert!(
            p.root(
                &filtervm_vm::json::parse(br#"{"a": [], "b": "x", "$or": [{"c": [{"bad": 1}]}]}"#)
                    .unwrap()
            )
            .is_none()
        );
        let pointers: Vec<&str> = p.errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(pointers, ["/a", "/b", "/$or/0/c/0/bad", "/$or"]);
    }

    /// The parser writes each pointer after its parent's in one buffer and truncates it back:
    /// errors after a nested object, after an element past index 9, after an operator's error
    /// and in a second policy read by the same parser still name their own member or element.
    #[test]
    fn pointers_are_written_in_place_and_left() {
        let mut p = Parser::default();
        let policy = br#"{"a/~": {"b": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, {"pre": 1}]},
            "c": [{"prefix": 1}, {"prefix": "x", "suffix": "y"}, 1e400], "d": [],
            "$or": [{"e": ["1"]}, {"f": [2]}, 3]}"#;
        assert!(p.root(&filtervm_vm::json::parse(policy).unwrap()).is_none());
        let pointers: Vec<&str> = p.errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/a~1~0/b/11/pre",
                "/c/0/prefix",
                "/c/1/suffix",
                "/c/2",
                "/d",
                "/$or/2",
            ]
        );
        let mut again = Parser::default();
        let policy = filtervm_vm::json::parse(
            br#"{"g": {"h": ["x", 2]}, "$or": [{"i": [true]}, {"j": [null]}]}"#,
        )
        .unwrap();
        for parser in [&mut p, &mut again] {
            parser.errors.clear();
            let root = parser.root(&policy).unwrap();
            assert!(parser.errors.is_empty());
            let Some(Member::Nested {
                pointer, object, ..
            }) = root.members.first()
            else {
                panic!("{root:?}");
            };
            assert_eq!(&**pointer, "/g");
            let Some(Member::Leaf {
                pointer,
                alternatives,
                ..
            }) = object.members.first()
            else {
                panic!("{object:?}");
            };
            assert_eq!(pointer.as_deref(), Some("/g/h"));
            assert_eq!(list_pointer(pointer.as_deref(), alternatives), "/g/h");
            let at: Vec<String> = pointed(alternatives, pointer.as_deref())
                .into_iter()
                .map(|(_, at)| at)
                .collect();
            assert_eq!(at, ["/g/h/0", "/g/h/1"]);
            let Some(Member::Or { pointer, branches }) = root.members.get(1) else {
                panic!("{root:?}");
            };
            assert_eq!(&**pointer, "/$or");
            let leaves: Vec<(&str, &str)> = branches
                .iter()
                .map(|(b, at)| match b.members.first() {
                    // A list of one alternative keeps no pointer: its member's is derived.
                    Some(Member::Leaf {
                        pointer: None,
                        alternatives,
                        ..
                    }) => (&**at, list_pointer(None, alternatives)),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(leaves, [("/$or/0", "/$or/0/i"), ("/$or/1", "/$or/1/j")]);
        }
    }
}

//! The IR as JSON, for the wire format of filters ([`crate::wire`]).
//!
//! A filter ships its lowered IR so that a node that loads it has everything compiling gave: the
//! optimized IR and the program are derived from it again ([`crate::wire`] checks that they give
//! back the shipped program byte for byte), explain sees the policy's structure, and a
//! subscription set can intern the filter's tests.
//!
//! Every node is an array whose first element names its kind and whose second is its origin (a
//! JSON Pointer into the policy):
//!
//! ```text
//! ["true", ORIGIN]   ["false", ORIGIN]   ["not", ORIGIN, NODE]
//! ["and", ORIGIN, [NODE, ...]]           ["or", ORIGIN, [NODE, ...]]
//! ["test", ORIGIN, KEY, PRED]
//! KEY  = ["attr-text", NAME] | ["attr", NAME] | ["any-attribute"] | ["header", NAME]
//!      | ["body", PATH] | ["body-each", PATH] | ["body-is-object"] | ["event", NAME]
//!      | ["event-data", [SEGMENT, ...]]
//! PRED = ["shape", BITS] | ["has-type", BITS] | ["bool", true | false]
//!      | ["str", "eq" | "prefix" | "suffix" | "contains", "sensitive" | "fold", [STRING, ...]]
//!      | ["wildcard", SOURCE] | ["segment", SOURCE] | ["cidr", SOURCE]
//!      | ["num", "number" | "text", [[LO, LO_INCLUSIVE, HI, HI_INCLUSIVE], ...]]
//!      | ["dec", [[LO | null, LO_INCLUSIVE, HI | null, HI_INCLUSIVE, TEXT], ...]]
//! ```
//!
//! Binary64 bounds are JSON numbers in Rust's shortest round-trip exponent form (`1e2`, `-2.5e-1`),
//! or the strings `"-inf"` and `"inf"`; exact-decimal bounds are their normalized decimal text.
//! Wildcards, segment patterns and CIDR blocks travel as source text and are compiled again on
//! reading, so a node never trusts a compiled form it did not build.
//!
//! Reading is defensive: any JSON value may be given, nothing panics, every unknown kind, operator,
//! bit, malformed bound or uncompilable source is an error naming where it is, and the recursion
//! follows the JSON tree, whose depth the caller's reader bounds.

use super::{Case, Node, NodeKind, NumSource, Pred, StrOp, Test};
use filtervm_vm::address::Block;
use filtervm_vm::case_pattern::{CaseMode, CasePattern};
use filtervm_vm::cidr::Cidr;
use filtervm_vm::json::{Number, Value};
use filtervm_vm::key::Key;
use filtervm_vm::number::Decimal;
use filtervm_vm::pattern::SegmentPattern;
use filtervm_vm::program::{DecInterval, Interval};
use filtervm_vm::value::{LeafTypes, Shapes};
use filtervm_vm::wildcard::Wildcard;
use std::sync::Arc;

/// The IR node as JSON (see the module documentation).
pub(crate) fn to_json(node: &Node) -> Value {
    let origin = Value::String(node.origin.to_string());
    let items = match &node.kind {
        NodeKind::True => vec!["true".into(), origin],
        NodeKind::False => vec!["false".into(), origin],
        NodeKind::Not(child) => vec!["not".into(), origin, to_json(child)],
        NodeKind::And(children) | NodeKind::Or(children) => {
            let kind = if matches!(node.kind, NodeKind::And(_)) {
                "and"
            } else {
                "or"
            };
            let children = children.iter().map(to_json).collect();
            vec![kind.into(), origin, Value::Array(children)]
        }
        NodeKind::Test(test) => vec![
            "test".into(),
            origin,
            key_to_json(&test.key),
            pred_to_json(&test.pred),
        ],
    };
    Value::Array(items)
}

fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Value {
    Value::Array(items.into_iter().map(Value::from).collect())
}

fn key_to_json(key: &Key) -> Value {
    let (kind, operand): (&str, Option<Value>) = match key {
        Key::AttributeText(name) => ("attr-text", Some((&**name).into())),
        Key::AttributeTyped(name) => ("attr", Some((&**name).into())),
        Key::AnyAttribute => ("any-attribute", None),
        Key::Header(name) => ("header", Some((&**name).into())),
        Key::BodyPath(path) => ("body", Some((&**path).into())),
        Key::BodyPathEach(path) => ("body-each", Some((&**path).into())),
        Key::FieldPath(path, u32::MAX) => ("field", Some((&**path).into())),
        Key::FieldPath(path, levels) => {
            return Value::Array(vec![
                "field-within".into(),
                (&**path).into(),
                Number::from(*levels).into(),
            ]);
        }
        Key::BodyIsObject => ("body-is-object", None),
        Key::EventMember(name) => ("event", Some((&**name).into())),
        Key::EventData(path) => ("event-data", Some(strings(path.iter().map(|s| &**s)))),
    };
    Value::Array(std::iter::once(kind.into()).chain(operand).collect())
}

/// A binary64 bound: the shortest round-trip text in exponent form, or `"inf"`/`"-inf"`.
fn float_to_json(x: f64) -> Value {
    if x == f64::INFINITY {
        return "inf".into();
    }
    if x == f64::NEG_INFINITY {
        return "-inf".into();
    }
    Number::from_text(&format!("{x:e}")).map_or(Value::Null, Value::Number)
}

fn decimal_to_json(bound: &Option<(Decimal, bool)>) -> (Value, Value) {
    match bound {
        Some((d, inclusive)) => (
            Number::from_text(&d.to_string()).map_or(Value::Null, Value::Number),
            Value::Bool(*inclusive),
        ),
        None => (Value::Null, Value::Bool(false)),
    }
}

fn pred_to_json(pred: &Pred) -> Value {
    let items: Vec<Value> = match pred {
        Pred::Shape(s) => vec!["shape".into(), Number::from(s.0).into()],
        Pred::HasType(t) => vec!["has-type".into(), Number::from(t.0).into()],
        Pred::Bool(b) => vec!["bool".into(), Value::Bool(*b)],
        Pred::Str { op, case, values } => {
            let op = match op {
                StrOp::Eq => "eq",
                StrOp::Prefix => "prefix",
                StrOp::Suffix => "suffix",
                StrOp::Contains => "contains",
            };
            let case = match case {
                Case::Sensitive => "sensitive",
                Case::Fold => "fold",
            };
            vec![
                "str".into(),
                op.into(),
                case.into(),
                strings(values.iter().map(|v| &**v)),
            ]
        }
        Pred::Wildcard(w) => vec!["wildcard".into(), w.source().into()],
        Pred::Segment(p) => vec!["segment".into(), p.source().into()],
        Pred::Cidr(c) => vec!["cidr".into(), c.source().into()],
        Pred::Num { source, ranges } => {
            let source = match source {
                NumSource::NumberLeaf => "number",
                NumSource::Text => "text",
                NumSource::Comparable => "comparable",
            };
            let ranges = ranges
                .iter()
                .map(|r| {
                    Value::Array(vec![
                        float_to_json(r.lo),
                        Value::Bool(r.lo_inclusive),
                        float_to_json(r.hi),
                        Value::Bool(r.hi_inclusive),
                    ])
                })
                .collect();
            vec!["num".into(), source.into(), Value::Array(ranges)]
        }
        Pred::Dec(ranges) => {
            let ranges = ranges
                .iter()
                .map(|r| {
                    let (lo, lo_inclusive) = decimal_to_json(&r.lo);
                    let (hi, hi_inclusive) = decimal_to_json(&r.hi);
                    Value::Array(vec![
                        lo,
                        lo_inclusive,
                        hi,
                        hi_inclusive,
                        Value::String(r.text.to_string()),
                    ])
                })
                .collect();
            vec!["dec".into(), Value::Array(ranges)]
        }
        Pred::NumText(values) => vec!["num-text".into(), strings(values.iter().map(|v| &**v))],
        Pred::Address(b) => vec!["addr".into(), b.source().into()],
        Pred::IgnoreCase(c) => vec!["case".into(), c.mode().name().into(), c.source().into()],
        Pred::Except(preds) => vec![
            "except".into(),
            Value::Array(preds.iter().map(pred_to_json).collect()),
        ],
    };
    Value::Array(items)
}

/// Why a JSON value is not an IR node: what was wrong and the JSON Pointer of where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IrError {
    /// Where in the IR's JSON.
    pub(crate) pointer: String,
    /// What is wrong.
    pub(crate) message: String,
}

impl std::fmt::Display for IrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{}: {}", at, self.message)
    }
}

type Read<T> = Result<T, IrError>;

fn fail<T>(pointer: &Ptr<'_>, message: impl Into<String>) -> Read<T> {
    Err(IrError {
        pointer: pointer.to_string(),
        message: message.into(),
    })
}

/// The elements of an array of exactly `n` elements.
fn tuple<'v>(value: &'v Value, n: usize, at: &Ptr<'_>, what: &str) -> Read<&'v [Value]> {
    match value {
        Value::Array(items) if items.len() == n => Ok(items),
        _ => fail(at, format!("expected {what} ({n} elements)")),
    }
}

fn text<'v>(value: Option<&'v Value>, at: &Ptr<'_>) -> Read<&'v str> {
    match value {
        Some(Value::String(s)) => Ok(s),
        _ => fail(at, "expected a string"),
    }
}

fn flag(value: Option<&Value>, at: &Ptr<'_>) -> Read<bool> {
    match value {
        Some(Value::Bool(b)) => Ok(*b),
        _ => fail(at, "expected `true` or `false`"),
    }
}

fn list<'v>(value: Option<&'v Value>, at: &Ptr<'_>) -> Read<&'v [Value]> {
    match value {
        Some(Value::Array(items)) => Ok(items),
        _ => fail(at, "expected an array"),
    }
}

fn bits(value: Option<&Value>, all: u8, at: &Ptr<'_>) -> Read<u8> {
    match value
        .and_then(Value::as_u64)
        .and_then(|b| u8::try_from(b).ok())
    {
        Some(b) if b & !all == 0 => Ok(b),
        _ => fail(at, format!("expected a bit set within {all}")),
    }
}

/// A JSON Pointer being read: written out only when an error names it, so reading builds no
/// text.
#[derive(Clone, Copy)]
enum Ptr<'a> {
    /// The pointer the caller gave.
    Root(&'a str),
    /// Element `i` of the array at the first pointer.
    Child(&'a Ptr<'a>, usize),
}

impl std::fmt::Display for Ptr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ptr::Root(text) => f.write_str(text),
            Ptr::Child(base, i) => write!(f, "{base}/{i}"),
        }
    }
}

fn at<'a>(base: &'a Ptr<'a>, i: usize) -> Ptr<'a> {
    Ptr::Child(base, i)
}

/// Reads an IR node written by [`to_json`]; errors name where, under `pointer`.
pub(crate) fn from_json(value: &Value, pointer: &str) -> Read<Node> {
    node_from_json(value, &Ptr::Root(pointer))
}

fn node_from_json(value: &Value, pointer: &Ptr<'_>) -> Read<Node> {
    let Value::Array(items) = value else {
        return fail(pointer, "expected a node (an array)");
    };
    let kind = text(items.first(), &at(pointer, 0))?;
    let origin = text(items.get(1), &at(pointer, 1))?;
    let expect_len = |n: usize| -> Read<()> {
        if items.len() == n {
            Ok(())
        } else {
            fail(pointer, format!("a `{kind}` node has {n} elements"))
        }
    };
    let kind = match kind {
        "true" | "false" => {
            expect_len(2)?;
            if kind == "true" {
                NodeKind::True
            } else {
                NodeKind::False
            }
        }
        "not" => {
            expect_len(3)?;
            let child = items.get(2).map_or(&Value::Null, |v| v);
            NodeKind::Not(Box::new(node_from_json(child, &at(pointer, 2))?))
        }
        "and" | "or" => {
            expect_len(3)?;
            let base = at(pointer, 2);
            let children = list(items.get(2), &base)?
                .iter()
                .enumerate()
                .map(|(i, c)| node_from_json(c, &at(&base, i)))
                .collect::<Read<Vec<Node>>>()?;
            if kind == "and" {
                NodeKind::And(children)
            } else {
                NodeKind::Or(children)
            }
        }
        "test" => {
            expect_len(4)?;
            let key = key_from_json(items.get(2).map_or(&Value::Null, |v| v), &at(pointer, 2))?;
            let pred = pred_from_json(items.get(3).map_or(&Value::Null, |v| v), &at(pointer, 3))?;
            NodeKind::Test(Test { key, pred })
        }
        other => {
            return fail(
                &at(pointer, 0),
                format!("unknown node kind `{}`", crate::error::excerpt(other)),
            );
        }
    };
    Ok(Node::new(kind, origin))
}

fn key_from_json(value: &Value, pointer: &Ptr<'_>) -> Read<Key> {
    let Value::Array(items) = value else {
        return fail(pointer, "expected a key (an array)");
    };
    let kind = text(items.first(), &at(pointer, 0))?;
    let arity = match kind {
        "any-attribute" | "body-is-object" => 1,
        "field-within" => 3,
        _ => 2,
    };
    if items.len() != arity {
        return fail(pointer, format!("a `{kind}` key has {arity} elements"));
    }
    let operand = || text(items.get(1), &at(pointer, 1)).map(Arc::<str>::from);
    Ok(match kind {
        "attr-text" => Key::AttributeText(operand()?),
        "attr" => Key::AttributeTyped(operand()?),
        "any-attribute" => Key::AnyAttribute,
        "header" => Key::Header(operand()?),
        "body" => Key::BodyPath(operand()?),
        "body-each" => Key::BodyPathEach(operand()?),
        "field" => Key::FieldPath(operand()?, u32::MAX),
        "field-within" => {
            let p2 = at(pointer, 2);
            let levels = match items.get(2) {
                Some(Value::Number(n)) => n.as_str().parse::<u32>().ok(),
                _ => None,
            };
            match levels {
                Some(levels) if levels != u32::MAX => Key::FieldPath(operand()?, levels),
                _ => return fail(&p2, "expected a level count (an integer below 2^32 - 1)"),
            }
        }
        "body-is-object" => Key::BodyIsObject,
        "event" => Key::EventMember(operand()?),
        "event-data" => {
            let base = at(pointer, 1);
            let segments = list(items.get(1), &base)?
                .iter()
                .enumerate()
                .map(|(i, s)| text(Some(s), &at(&base, i)).map(Box::<str>::from))
                .collect::<Read<Vec<Box<str>>>>()?;
            Key::EventData(segments.into())
        }
        other => {
            return fail(
                &at(pointer, 0),
                format!("unknown key kind `{}`", crate::error::excerpt(other)),
            );
        }
    })
}

fn float_from_json(value: Option<&Value>, at: &Ptr<'_>) -> Read<f64> {
    match value {
        Some(Value::String(s)) if s == "inf" => Ok(f64::INFINITY),
        Some(Value::String(s)) if s == "-inf" => Ok(f64::NEG_INFINITY),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) => Ok(x),
            None => fail(at, "a bound beyond binary64"),
        },
        _ => fail(at, "expected a number, `\"inf\"` or `\"-inf\"`"),
    }
}

fn decimal_from_json(
    value: Option<&Value>,
    inclusive: Option<&Value>,
    at: &Ptr<'_>,
    at_flag: &Ptr<'_>,
) -> Read<Option<(Decimal, bool)>> {
    let inclusive = flag(inclusive, at_flag)?;
    match value {
        Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match Decimal::parse(n.as_str()) {
            Some(d) => Ok(Some((d, inclusive))),
            None => fail(at, "not a decimal"),
        },
        _ => fail(at, "expected a number or null"),
    }
}

fn pred_from_json(value: &Value, pointer: &Ptr<'_>) -> Read<Pred> {
    let Value::Array(items) = value else {
        return fail(pointer, "expected a predicate (an array)");
    };
    let kind = text(items.first(), &at(pointer, 0))?;
    let arity = match kind {
        "str" => 4,
        "num" | "case" => 3,
        _ => 2,
    };
    if items.len() != arity {
        return fail(
            pointer,
            format!("a `{kind}` predicate has {arity} elements"),
        );
    }
    let p1 = at(pointer, 1);
    let source = || text(items.get(1), &p1);
    Ok(match kind {
        "shape" => Pred::Shape(Shapes(bits(items.get(1), Shapes::ALL.0, &p1)?)),
        "has-type" => Pred::HasType(LeafTypes(bits(items.get(1), LeafTypes::ALL.0, &p1)?)),
        "bool" => Pred::Bool(flag(items.get(1), &p1)?),
        "str" => {
            let op = match text(items.get(1), &p1)? {
                "eq" => StrOp::Eq,
                "prefix" => StrOp::Prefix,
                "suffix" => StrOp::Suffix,
                "contains" => StrOp::Contains,
                _ => return fail(&p1, "unknown string operator"),
            };
            let p2 = at(pointer, 2);
            let case = match text(items.get(2), &p2)? {
                "sensitive" => Case::Sensitive,
                "fold" => Case::Fold,
                _ => return fail(&p2, "unknown case handling"),
            };
            let p3 = at(pointer, 3);
            let values = list(items.get(3), &p3)?
                .iter()
                .enumerate()
                .map(|(i, v)| text(Some(v), &at(&p3, i)).map(Arc::<str>::from))
                .collect::<Read<Vec<Arc<str>>>>()?;
            if values.windows(2).any(|w| matches!(w, [a, b] if a >= b)) {
                return fail(&p3, "the strings are not sorted and distinct");
            }
            Pred::Str { op, case, values }
        }
        "wildcard" => match Wildcard::compile(source()?) {
            Ok(w) => Pred::Wildcard(w),
            Err(e) => return fail(&p1, e.message),
        },
        "segment" => match SegmentPattern::compile(source()?) {
            Ok(p) => Pred::Segment(p),
            Err(e) => return fail(&p1, e.message),
        },
        "cidr" => match Cidr::parse(source()?) {
            Ok(c) => Pred::Cidr(c),
            Err(e) => return fail(&p1, e.message),
        },
        "num" => {
            let source = match text(items.get(1), &p1)? {
                "number" => NumSource::NumberLeaf,
                "text" => NumSource::Text,
                "comparable" => NumSource::Comparable,
                _ => return fail(&p1, "unknown number source"),
            };
            let p2 = at(pointer, 2);
            let ranges = list(items.get(2), &p2)?
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let here = at(&p2, i);
                    let r = tuple(r, 4, &here, "an interval")?;
                    Ok(Interval {
                        lo: float_from_json(r.first(), &at(&here, 0))?,
                        lo_inclusive: flag(r.get(1), &at(&here, 1))?,
                        hi: float_from_json(r.get(2), &at(&here, 2))?,
                        hi_inclusive: flag(r.get(3), &at(&here, 3))?,
                    })
                })
                .collect::<Read<Vec<Interval>>>()?;
            Pred::Num { source, ranges }
        }
        "dec" => {
            let ranges = list(items.get(1), &p1)?
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let here = at(&p1, i);
                    let r = tuple(r, 5, &here, "a decimal interval")?;
                    Ok(DecInterval {
                        lo: decimal_from_json(r.first(), r.get(1), &at(&here, 0), &at(&here, 1))?,
                        hi: decimal_from_json(r.get(2), r.get(3), &at(&here, 2), &at(&here, 3))?,
                        text: text(r.get(4), &at(&here, 4))?.into(),
                    })
                })
                .collect::<Read<Vec<DecInterval>>>()?;
            Pred::Dec(ranges)
        }
        "num-text" => {
            let values = list(items.get(1), &p1)?
                .iter()
                .enumerate()
                .map(|(i, v)| text(Some(v), &at(&p1, i)).map(Arc::<str>::from))
                .collect::<Read<Vec<Arc<str>>>>()?;
            if values.windows(2).any(|w| matches!(w, [a, b] if a >= b)) {
                return fail(&p1, "the texts are not sorted and distinct");
            }
            if let Some(i) = values.iter().position(|v| Decimal::parse(v).is_none()) {
                return fail(&at(&p1, i), "not a JSON number");
            }
            Pred::NumText(values)
        }
        "addr" => match Block::from_source(source()?) {
            Ok(b) => Pred::Address(b),
            Err(e) => return fail(&p1, e.message),
        },
        "case" => {
            let mode = match text(items.get(1), &p1)? {
                "equals" => CaseMode::Equals,
                "prefix" => CaseMode::Prefix,
                "suffix" => CaseMode::Suffix,
                _ => return fail(&p1, "unknown case mode"),
            };
            Pred::IgnoreCase(CasePattern::new(text(items.get(2), &at(pointer, 2))?, mode))
        }
        "except" => {
            let preds = list(items.get(1), &p1)?
                .iter()
                .enumerate()
                .map(|(i, v)| pred_from_json(v, &at(&p1, i)))
                .collect::<Read<Vec<Pred>>>()?;
            if let Some(i) = preds
                .iter()
                .position(|p| matches!(p, Pred::Shape(_) | Pred::Except(_)))
            {
                return fail(&at(&p1, i), "not a test of one leaf");
            }
            Pred::Except(preds)
        }
        other => {
            return fail(
                &at(pointer, 0),
                format!("unknown predicate `{}`", crate::error::excerpt(other)),
            );
        }
    })
}

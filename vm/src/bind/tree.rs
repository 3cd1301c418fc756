//! Whole JSON trees (an owned [`json::Value`] or a `serde_json::Value`) as unpruned documents
//! ([`Node`]) in the binding arena, so that the binders read them exactly as they read what the
//! message reader keeps of raw bytes. Built without recursion, so any depth is safe.

use crate::json::{self, Member, Node};
use bumpalo::Bump;

/// What a tree value is, as the builder needs it.
enum Step<'a, T: Tree + 'a> {
    /// A scalar, as its node.
    Leaf(Node<'a>),
    /// An array: its elements.
    Array(std::slice::Iter<'a, T>),
    /// An object: its members, in order, each name once.
    Object(T::Members<'a>),
}

/// A JSON tree the builder can read.
trait Tree: Sized {
    /// The members of an object.
    type Members<'a>: Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a;
    /// What `self` is (a number's text goes into the arena when the tree does not keep it).
    fn step<'a>(&'a self, arena: &'a Bump, text: &mut String) -> Step<'a, Self>;
}

type JsonMembers<'a> =
    std::iter::Map<json::Iter<'a>, fn((&'a String, &'a json::Value)) -> (&'a str, &'a json::Value)>;

impl Tree for json::Value {
    type Members<'a> = JsonMembers<'a>;
    fn step<'a>(&'a self, _arena: &'a Bump, _text: &mut String) -> Step<'a, json::Value> {
        match self {
            json::Value::Null => Step::Leaf(Node::Null),
            json::Value::Bool(b) => Step::Leaf(Node::Bool(*b)),
            json::Value::Number(n) => Step::Leaf(Node::Number(n.as_str())),
            json::Value::String(s) => Step::Leaf(Node::String(s)),
            json::Value::Array(items) => Step::Array(items.iter()),
            json::Value::Object(map) => {
                let member: fn((&'a String, &'a json::Value)) -> (&'a str, &'a json::Value) =
                    |(k, v)| (k.as_str(), v);
                Step::Object(map.iter().map(member))
            }
        }
    }
}

type SerdeMembers<'a> = std::iter::Map<
    serde_json::map::Iter<'a>,
    fn((&'a String, &'a serde_json::Value)) -> (&'a str, &'a serde_json::Value),
>;

impl Tree for serde_json::Value {
    type Members<'a> = SerdeMembers<'a>;
    fn step<'a>(&'a self, arena: &'a Bump, text: &mut String) -> Step<'a, serde_json::Value> {
        use std::fmt::Write as _;
        match self {
            serde_json::Value::Null => Step::Leaf(Node::Null),
            serde_json::Value::Bool(b) => Step::Leaf(Node::Bool(*b)),
            serde_json::Value::Number(n) => {
                text.clear();
                let _ = write!(text, "{n}");
                Step::Leaf(Node::Number(arena.alloc_str(text)))
            }
            serde_json::Value::String(s) => Step::Leaf(Node::String(s)),
            serde_json::Value::Array(items) => Step::Array(items.iter()),
            serde_json::Value::Object(map) => {
                let member: fn(
                    (&'a String, &'a serde_json::Value),
                ) -> (&'a str, &'a serde_json::Value) = |(k, v)| (k.as_str(), v);
                Step::Object(map.iter().map(member))
            }
        }
    }
}

/// An open container.
enum Frame<'a, T: Tree + 'a> {
    /// Its elements so far start at this index of the node stack.
    Array(std::slice::Iter<'a, T>, usize),
    /// Its members so far start at this index of the member stack.
    Object(T::Members<'a>, usize),
}

/// `value` as a whole document.
pub(super) fn of_value<'a>(value: &'a json::Value, arena: &'a Bump) -> Node<'a> {
    build(value, arena, &mut String::new())
}

/// `value` as a whole document (numbers written by their `Display`, through `text`).
pub(super) fn of_serde<'a>(
    value: &'a serde_json::Value,
    arena: &'a Bump,
    text: &mut String,
) -> Node<'a> {
    build(value, arena, text)
}

fn build<'a, T: Tree>(root: &'a T, arena: &'a Bump, text: &mut String) -> Node<'a> {
    let mut nodes: Vec<Node<'a>> = Vec::new();
    let mut members: Vec<Member<'a>> = Vec::new();
    let mut stack: Vec<Frame<'a, T>> = Vec::new();
    let mut open = root;
    loop {
        let mut done = match open.step(arena, text) {
            Step::Leaf(node) => Some(node),
            Step::Array(items) => {
                stack.push(Frame::Array(items, nodes.len()));
                None
            }
            Step::Object(children) => {
                stack.push(Frame::Object(children, members.len()));
                None
            }
        };
        // Deliver finished values to their containers until a container has a child to open.
        loop {
            if let Some(node) = done.take() {
                match stack.last() {
                    None => return node,
                    Some(Frame::Array(..)) => nodes.push(node),
                    Some(Frame::Object(..)) => {
                        if let Some(m) = members.last_mut() {
                            m.value = node;
                        }
                    }
                }
            }
            match stack.last_mut() {
                None => return Node::Null,
                Some(Frame::Array(items, start)) => match items.next() {
                    Some(child) => {
                        open = child;
                        break;
                    }
                    None => {
                        let start = *start;
                        let slice = arena.alloc_slice_copy(nodes.get(start..).unwrap_or(&[]));
                        nodes.truncate(start);
                        stack.pop();
                        done = Some(Node::Array(slice));
                    }
                },
                Some(Frame::Object(children, start)) => match children.next() {
                    Some((name, child)) => {
                        members.push(Member {
                            name,
                            value: Node::Null,
                        });
                        open = child;
                        break;
                    }
                    None => {
                        let start = *start;
                        let slice = arena.alloc_slice_copy(members.get(start..).unwrap_or(&[]));
                        members.truncate(start);
                        stack.pop();
                        done = Some(Node::Object(slice));
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_trees_keep_everything_in_order() {
        let text = r#"{"b": [1, [2.50, {"c": null}], "x"], "a": {"d": true, "e": {}}, "n": -0}"#;
        let arena = Bump::new();
        let ours = json::parse(text.as_bytes()).unwrap();
        assert_eq!(of_value(&ours, &arena).to_string(), text.replace(' ', ""));
        // A `serde_json::Value` is bound as it holds the document: with `serde_json`'s default
        // features, members sorted by name and numbers as `i64`/`u64`/`f64`, each written as its
        // `Display` writes it (`2.50` was read as the binary64 2.5, `-0` as -0.0).
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        let serde = of_serde(&theirs, &arena, &mut String::new());
        assert_eq!(
            serde.to_string(),
            r#"{"a":{"d":true,"e":{}},"b":[1,[2.5,{"c":null}],"x"],"n":-0.0}"#
        );
        let converted = json::Value::from(&theirs);
        assert_eq!(serde.to_value(), of_value(&converted, &arena).to_value());
    }

    #[test]
    fn deep_trees_are_built_without_recursion() {
        let depth = 100_000;
        let mut value = json::Value::Null;
        for _ in 0..depth {
            value = json::Value::Array(vec![value]);
        }
        let arena = Bump::new();
        let mut node = of_value(&value, &arena);
        let mut levels = 0;
        while let Node::Array([inner]) = node {
            node = *inner;
            levels += 1;
        }
        assert_eq!(levels, depth);
        // The owned tree is dropped level by level, without recursion either.
        while let json::Value::Array(mut items) = value {
            value = items.pop().unwrap_or(json::Value::Null);
        }
    }
}

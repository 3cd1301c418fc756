//! The message model of an analysis: where each key of a filter reads from (its location), and
//! how a choice of values per location becomes a message in a dialect's own shape.
//!
//! Three models share locations across dialects (`docs/dialects/README.md`): typed attributes
//! (sns in attribute scope, basaltic), a JSON document (sns in body scope, eventgrid) and headers
//! (stream, expr). Two filters can be compared only within one model.

use crate::ir::{Node, NodeKind, Pred};
use crate::{Dialect, Options, SnsScope};
use filtervm_vm::json::{Map, Value};
use filtervm_vm::key::Key;
use filtervm_vm::message::{Attribute, AttributeType, Header, Message};
use std::collections::BTreeMap;

/// What part of a message a dialect's filters read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Typed message attributes (sns in attribute scope, basaltic).
    Attributes,
    /// A JSON document (sns in body scope, eventgrid, eventbridge).
    Document,
    /// Headers, each with one or more values (stream, expr).
    Headers,
}

impl Model {
    /// The model of filters compiled with `options`.
    pub fn of(options: &Options) -> Model {
        match options {
            Options::Sns(sns) if sns.scope == SnsScope::MessageBody => Model::Document,
            Options::Sns(_) | Options::Basaltic => Model::Attributes,
            Options::EventGrid(_) | Options::EventBridge => Model::Document,
            Options::Stream | Options::Expr(_) => Model::Headers,
        }
    }

    /// The model's name, as the command line shows it.
    pub fn name(self) -> &'static str {
        match self {
            Model::Attributes => "message attributes",
            Model::Document => "a JSON document",
            Model::Headers => "headers",
        }
    }
}

/// Where a key reads from: one attribute, one header, or one path into the document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Loc {
    /// An attribute by name.
    Attr(Box<str>),
    /// A header by name.
    Header(Box<str>),
    /// A path of member names into the JSON document.
    Path(Vec<String>),
}

impl Loc {
    /// The location as a person reads it (`amount`, `data.size`).
    pub(crate) fn label(&self) -> String {
        match self {
            Loc::Attr(n) | Loc::Header(n) => n.to_string(),
            Loc::Path(p) => p.join("."),
        }
    }
}

/// What a key reads: one location, or the message as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reads {
    /// One location.
    At(Loc),
    /// Whether the message carries any attribute that is not `Binary` (sns rule 12).
    AnyAttribute,
    /// Whether the body is a JSON object (sns rule 14).
    BodyIsObject,
}

/// What a key reads. Event members are found ignoring ASCII case (EG-16); their keys hold one
/// canonical spelling (`eventType`, `subject`), which is their location, so that a field of
/// another dialect spelled so reads the same member. `spelled` maps each member's lowercase
/// name to that spelling: the members [`super::diff`] tries respelled.
pub(crate) fn reads(key: &Key, spelled: &mut BTreeMap<String, String>) -> Reads {
    match key {
        Key::AttributeText(n) | Key::AttributeTyped(n) => Reads::At(Loc::Attr((**n).into())),
        Key::AnyAttribute => Reads::AnyAttribute,
        Key::Header(n) => Reads::At(Loc::Header((**n).into())),
        Key::BodyPath(p) | Key::BodyPathEach(p) | Key::FieldPath(p, _) => {
            Reads::At(Loc::Path(p.split('.').map(str::to_owned).collect()))
        }
        Key::BodyIsObject => Reads::BodyIsObject,
        Key::EventMember(n) => {
            spelled
                .entry(n.to_ascii_lowercase())
                .or_insert_with(|| n.to_string());
            Reads::At(Loc::Path(vec![n.to_string()]))
        }
        Key::EventData(path) => {
            let mut p = vec!["data".to_owned()];
            p.extend(path.iter().map(|s| s.to_string()));
            Reads::At(Loc::Path(p))
        }
    }
}

/// Every test (key and predicate) of a tree, in order of first appearance, without repeats.
pub(crate) fn tests(root: &Node) -> Vec<(Key, Pred)> {
    let mut out: Vec<(Key, Pred)> = Vec::new();
    root.walk(&mut |n| {
        if let NodeKind::Test(t) = &n.kind
            && !out.iter().any(|(k, p)| *k == t.key && *p == t.pred)
        {
            out.push((t.key.clone(), t.pred.clone()));
        }
    });
    out
}

/// One choice of values: a value per present location (absent locations are left out).
pub(crate) type Choice<'a> = Vec<(&'a Loc, &'a Value)>;

/// The VM's message for a choice, in `model`; `None` when the choice cannot be one message (a
/// path given a value and a longer path below it given another).
pub(crate) fn message(model: Model, choice: &Choice<'_>) -> Option<Message> {
    Some(match model {
        Model::Attributes => Message::Attributes(
            choice
                .iter()
                .filter_map(|(loc, v)| match loc {
                    Loc::Attr(name) => attribute(name, v),
                    _ => None,
                })
                .collect(),
        ),
        Model::Headers => Message::Headers(
            choice
                .iter()
                .filter_map(|(loc, v)| match loc {
                    Loc::Header(name) => Some(Header {
                        name: name.to_string(),
                        values: header_values(v)?,
                    }),
                    _ => None,
                })
                .collect(),
        ),
        Model::Document => Message::Body(document(choice)?.to_string().into_bytes()),
    })
}

/// The member of a one-member object that stands, among attribute candidates, for a `Number`
/// attribute whose text is not a number (basaltic reads its text, B-4; sns does not).
pub(crate) const NUMBER_TEXT: &str = "\u{0}Number";

/// An attribute holding `value`: a string is a `String`, a number a `Number` (its text), an
/// array a `String.Array` (its JSON text), `{NUMBER_TEXT: text}` a `Number` of any text.
fn attribute(name: &str, value: &Value) -> Option<Attribute> {
    let (data_type, text) = match value {
        Value::Object(m) if m.len() == 1 => (
            AttributeType::Number,
            m.get(NUMBER_TEXT)?.as_str()?.to_owned(),
        ),
        Value::String(s) => (AttributeType::String, s.clone()),
        Value::Number(n) => (AttributeType::Number, n.as_str().to_owned()),
        Value::Array(_) => (AttributeType::StringArray, value.to_string()),
        _ => return None,
    };
    Some(Attribute {
        name: name.to_owned(),
        data_type,
        value: text,
    })
}

/// A header's values: a string, or an array of strings.
fn header_values(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => None,
    }
}

/// The JSON document of a choice of values at paths; `None` when two paths collide (a value
/// given at `a` and at `a.b`, `a` not an object).
pub(crate) fn document(choice: &Choice<'_>) -> Option<Value> {
    let mut root = Map::new();
    for (loc, value) in choice {
        let Loc::Path(path) = loc else { continue };
        let (last, parents) = path.split_last()?;
        let mut here = &mut root;
        for seg in parents {
            if here.get(seg).is_none() {
                here.insert(seg.clone(), Value::Object(Map::new()));
            }
            here = match here.get_mut(seg) {
                Some(Value::Object(m)) => m,
                _ => return None,
            };
        }
        let last = last.clone();
        match (here.get_mut(&last), value) {
            (None, _) => {
                here.insert(last, (*value).clone());
            }
            // A value that is an object (`{}`) merges with what longer paths put below it.
            (Some(Value::Object(_)), Value::Object(m)) if m.is_empty() => {}
            _ => return None,
        }
    }
    Some(Value::Object(root))
}

/// A message (the VM's form) as a JSON document in the dialect's own shape, the one `filtervm
/// match` reads: attributes as `{"attributes": {NAME: {"Type", "Value"}}}` (basaltic: `type`,
/// `value`), headers as `{"headers": {NAME: VALUE or [VALUES]}}`, a body or an event as itself.
/// An SNS body that is not JSON (`Message::Body` of other text) is `{"body": TEXT}`.
pub fn document_of(options: &Options, message: &Message) -> Value {
    let object = |members: Vec<(String, Value)>| Value::Object(members.into_iter().collect());
    match message {
        Message::Attributes(attrs) => {
            let (t, v) = if options.dialect() == Dialect::Basaltic {
                ("type", "value")
            } else {
                ("Type", "Value")
            };
            let members = attrs
                .iter()
                .map(|a| {
                    let entry = object(vec![
                        (t.to_owned(), Value::from(a.data_type.to_string().as_str())),
                        (v.to_owned(), Value::from(a.value.as_str())),
                    ]);
                    (a.name.clone(), entry)
                })
                .collect();
            object(vec![("attributes".to_owned(), object(members))])
        }
        Message::Headers(headers) => {
            let members = headers
                .iter()
                .map(|h| {
                    let value = match h.values.as_slice() {
                        [one] => Value::from(one.as_str()),
                        many => {
                            Value::Array(many.iter().map(|s| Value::from(s.as_str())).collect())
                        }
                    };
                    (h.name.clone(), value)
                })
                .collect();
            object(vec![("headers".to_owned(), object(members))])
        }
        // A member named twice stays twice: the dialects read it differently (sns the last,
        // EventBridge every one, EB-3).
        Message::Body(bytes) => match filtervm_vm::json::parse_with(bytes, &{
            let mut o = filtervm_vm::json::ParseOptions::default();
            o.duplicates = filtervm_vm::json::Duplicates::KeepAll;
            o
        }) {
            Ok(value @ Value::Object(_)) => value,
            _ => object(vec![(
                "body".to_owned(),
                Value::from(String::from_utf8_lossy(bytes).as_ref()),
            )]),
        },
        Message::Json(v) => Value::from(v),
        Message::Unparsable => Value::Null,
    }
}

/// The message in the conformance vector shape the reference interpreter reads
/// (`conformance/FORMAT.md`): an SNS body is `{"body": TEXT}`, everything else as
/// [`document_of`].
pub fn vector_message(options: &Options, message: &Message) -> Value {
    match (options, message) {
        (Options::Sns(_), Message::Body(bytes)) => Value::Object(
            [(
                "body".to_owned(),
                Value::from(String::from_utf8_lossy(bytes).as_ref()),
            )]
            .into_iter()
            .collect(),
        ),
        _ => document_of(options, message),
    }
}

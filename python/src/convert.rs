//! Python values into what the adapter takes: policies and options as JSON text, messages as the
//! adapter's [`Input`] — a document's bytes, or the parts borrowed from the caller's objects
//! (`str` and `bytes` read where they lie; only numbers get a text of their own).

use crate::plain;
use filtervm_bindings::filtervm::{AttributeType, Attributes, Headers, MessagePart, Text};
use filtervm_bindings::{HeaderValue, Input, Parts, attribute_type, unknown_attribute_type};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple,
    PyType,
};
use std::fmt::Write as _;
use std::sync::OnceLock;

/// Policies and options written from Python values are cut at this depth: the text then nests
/// deeper than the library's limit (128 levels), so the library rejects it with the dialect's
/// own error code, and the walk here stays bounded however deep the value is.
const MAX_WRITTEN_DEPTH: usize = 200;

/// Message documents given as Python values may nest this deep (the library's limit for
/// message JSON); deeper is a `MessageError`, never a cut document.
const MAX_DOCUMENT_DEPTH: usize = 128;

/// What [`write_json`] does with a value nested too deep.
#[derive(Debug, Clone, Copy)]
enum TooDeep {
    /// Writes `null` below [`MAX_WRITTEN_DEPTH`] (policies and options).
    Cut,
    /// Fails with a `MessageError` below [`MAX_DOCUMENT_DEPTH`] (message documents).
    Fail,
}

static DECIMAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn is_decimal(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let decimal = DECIMAL.import(value.py(), "decimal", "Decimal")?;
    value.is_instance(decimal)
}

/// A policy or options argument as JSON text: `str` and `bytes` as they are, anything else
/// (`dict`, `list`, ...) written as JSON.
pub fn json_text(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_str()?.as_bytes().to_vec());
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(bytes) = value.cast::<PyByteArray>() {
        return Ok(bytes.to_vec());
    }
    let mut out = String::new();
    write_json(value, 0, TooDeep::Cut, &mut out)?;
    Ok(out.into_bytes())
}

/// Writes `value` as JSON: `None`, `bool`, `int` (any size), finite `float`, `Decimal`, `str`,
/// `list`/`tuple`, and `dict` with `str` keys (in their order).
fn write_json(
    value: &Bound<'_, PyAny>,
    depth: usize,
    too_deep: TooDeep,
    out: &mut String,
) -> PyResult<()> {
    match too_deep {
        TooDeep::Cut if depth > MAX_WRITTEN_DEPTH => {
            out.push_str("null");
            return Ok(());
        }
        TooDeep::Fail if depth > MAX_DOCUMENT_DEPTH => {
            return Err(crate::message_error(format!(
                "the message nests deeper than {MAX_DOCUMENT_DEPTH} levels"
            )));
        }
        _ => {}
    }
    if value.is_none() {
        out.push_str("null");
    } else if let Ok(b) = value.cast::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if let Ok(s) = value.cast::<PyString>() {
        write_string(s.to_str()?, out);
    } else if value.is_instance_of::<PyInt>() {
        out.push_str(&int_text(value)?);
    } else if let Ok(f) = value.cast::<PyFloat>() {
        out.push_str(&float_text(f.value())?);
    } else if let Ok(list) = value.cast::<PyList>() {
        write_items(list.iter(), depth, too_deep, out)?;
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        write_items(tuple.iter(), depth, too_deep, out)?;
    } else if let Ok(dict) = value.cast::<PyDict>() {
        out.push('{');
        for (i, (k, v)) in dict.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let key = k.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "JSON object keys must be str, not {}",
                    type_name(&k)
                ))
            })?;
            write_string(key.to_str()?, out);
            out.push(':');
            write_json(&v, depth + 1, too_deep, out)?;
        }
        out.push('}');
    } else if is_decimal(value)? {
        out.push_str(&decimal_text(value)?);
    } else {
        return Err(PyTypeError::new_err(format!(
            "cannot write a {} as JSON (use dict, list, str, int, float, Decimal, bool or None)",
            type_name(value)
        )));
    }
    Ok(())
}

fn write_items<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    depth: usize,
    too_deep: TooDeep,
    out: &mut String,
) -> PyResult<()> {
    out.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json(&item, depth + 1, too_deep, out)?;
    }
    out.push(']');
    Ok(())
}

/// An `int` as JSON text: any size, exactly.
fn int_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    match value.extract::<i64>() {
        Ok(n) => Ok(n.to_string()),
        Err(_) => Ok(value.str()?.to_str()?.to_owned()),
    }
}

/// A float as JSON text: the shortest round-trip form (as Python's `repr`), finite only.
fn float_text(value: f64) -> PyResult<String> {
    if !value.is_finite() {
        return Err(PyValueError::new_err(format!(
            "JSON has no {value}: numbers must be finite"
        )));
    }
    // Rust's `{:?}` of an f64 is the shortest text that reads back to the same value, like
    // Python's repr; JSON needs an exponent without `+` and a mantissa with digits.
    Ok(format!("{value:?}"))
}

/// A `Decimal` as JSON text: its `str`, finite only.
fn decimal_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = value.str()?;
    let text = text.to_str()?;
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return Err(PyValueError::new_err(format!(
            "a Decimal in JSON must be finite, not {text}"
        )));
    }
    Ok(text.to_owned())
}

fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "value".to_owned(), |n| n.to_string())
}

/// A text argument (`body=`, a document given as text): `str` and `bytes` read where they lie
/// (the object is kept alive while the message is matched), a `bytearray` copied (it may
/// change).
enum TextArg<'py> {
    /// A `str` or `bytes` object.
    Object(Bound<'py, PyAny>),
    /// A copy: of a `bytearray`, or a document written from a `dict`.
    Owned(Vec<u8>),
}

impl TextArg<'_> {
    fn bytes(&self) -> PyResult<&[u8]> {
        match self {
            TextArg::Owned(v) => Ok(v),
            TextArg::Object(obj) => {
                if let Ok(s) = obj.cast::<PyString>() {
                    Ok(s.to_str()?.as_bytes())
                } else if let Ok(b) = obj.cast::<PyBytes>() {
                    Ok(b.as_bytes())
                } else {
                    Err(PyTypeError::new_err("expected str or bytes"))
                }
            }
        }
    }
}

fn text_arg<'py>(value: &Bound<'py, PyAny>, what: &str) -> PyResult<TextArg<'py>> {
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        Ok(TextArg::Object(value.clone()))
    } else if let Ok(b) = value.cast::<PyByteArray>() {
        Ok(TextArg::Owned(b.to_vec()))
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be str or bytes, not {}",
            type_name(value)
        )))
    }
}

/// Text held by a Python `str`, read where it lies (the object is held, and a `str` never
/// changes).
pub struct PyText(PyBackedStr);

impl PyText {
    fn new(s: Bound<'_, PyString>) -> PyResult<PyText> {
        PyBackedStr::try_from(s).map(PyText)
    }
}

impl Text for PyText {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        Ok(self.0.as_str())
    }
}

/// An attribute value as read from Python.
pub enum AttributeValue {
    /// A `str`, read where it lies.
    Str(PyText),
    /// Text made here: a list's JSON text, a `Decimal`'s or a big `int`'s text.
    Owned(String),
    /// A number whose text is made when a filter reads it.
    Number(LazyNumber),
    /// None: a Binary value (never read by a filter).
    Empty,
}

impl Text for AttributeValue {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        Ok(match self {
            AttributeValue::Str(s) => s.0.as_str(),
            AttributeValue::Owned(s) => s,
            AttributeValue::Number(n) => n.text(),
            AttributeValue::Empty => "",
        })
    }
}

/// An `int` or a finite `float`, whose text is made when a filter reads it: most attributes a
/// message carries are not read by the filters matching it, and a float's shortest text costs
/// more than matching the message.
pub struct LazyNumber {
    number: Number,
    text: OnceLock<String>,
}

/// A number as Python gave it.
#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
}

impl LazyNumber {
    fn new(number: Number) -> LazyNumber {
        LazyNumber {
            number,
            text: OnceLock::new(),
        }
    }

    /// The number's text: an `int`'s digits, a `float`'s shortest round-trip text (as
    /// Python's `repr`, which JSON reads back as the same number).
    fn text(&self) -> &str {
        self.text.get_or_init(|| match self.number {
            Number::Int(n) => n.to_string(),
            Number::Float(f) => format!("{f:?}"),
        })
    }
}

/// One typed attribute as read from Python.
pub struct AttributeArg {
    name: PyText,
    data_type: AttributeType,
    value: AttributeValue,
}

/// A message's attributes as read from Python: the facade reads them where they lie.
pub enum AttributeList {
    /// No attribute or one: the attribute looked up by the one name a filter reads (held
    /// without an allocation).
    One(Option<AttributeArg>),
    /// Any number of attributes.
    Many(Vec<AttributeArg>),
}

impl Attributes for AttributeList {
    type Name = PyText;
    type Value = AttributeValue;

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&PyText, AttributeType, &AttributeValue)> {
        let (one, many): (Option<&AttributeArg>, &[AttributeArg]) = match self {
            AttributeList::One(one) => (one.as_ref(), &[]),
            AttributeList::Many(many) => (None, many),
        };
        one.into_iter()
            .chain(many)
            .map(|a| (&a.name, a.data_type, &a.value))
    }
}

/// One header as read from Python: its name and its value or values.
pub struct HeaderArg {
    name: PyText,
    values: HeaderValue<PyText>,
}

/// A message's headers as read from Python (a name given several times is one header with
/// several values).
pub struct HeaderList(Vec<HeaderArg>);

impl Headers for HeaderList {
    type Name = PyText;
    type Values = HeaderValue<PyText>;

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&PyText, &HeaderValue<PyText>)> {
        self.0.iter().map(|h| (&h.name, &h.values))
    }
}

/// The parts of a message as given to `matches`, `explain` and `matching`, read from Python: the
/// objects are held, and [`MessageArgs::with_input`] lends their text to the adapter.
pub struct MessageArgs<'py> {
    document: Option<TextArg<'py>>,
    body: Option<TextArg<'py>>,
    attributes: Option<AttributeList>,
    headers: Option<HeaderList>,
    /// The attributes, given but unreadable (an unknown type name), and why.
    unreadable: Option<(MessagePart, filtervm_bindings::filtervm::MessageError)>,
}

/// The adapter's message with attributes and headers read where Python holds them.
pub type PyInput<'a> = Input<'a, AttributeList, HeaderList>;

impl<'py> MessageArgs<'py> {
    /// Reads the arguments: `message` a `dict` (a document: written as JSON text, ints of any
    /// size and `Decimal`s exactly, members in the dict's order) or JSON text (`str`/`bytes`);
    /// or the parts `attributes`, `headers` (mappings) and `body` (text). A document and parts
    /// together are an error: a message is one or the other.
    ///
    /// `names`: the names of the attributes whose values the filters read, when they are all
    /// the filters read of the attributes ([`AttributeNames::get`]); attributes given as a
    /// `dict` of plain values are then looked up by these names instead of read whole.
    pub fn new<'a>(
        message: Option<&'a Bound<'py, PyAny>>,
        attributes: Option<&'a Bound<'py, PyAny>>,
        headers: Option<&'a Bound<'py, PyAny>>,
        body: Option<&'a Bound<'py, PyAny>>,
        names: Option<&[Py<PyString>]>,
    ) -> PyResult<MessageArgs<'py>> {
        let given = |v: Option<&'a Bound<'py, PyAny>>| v.filter(|v| !v.is_none());
        let (message, attributes, headers, body) = (
            given(message),
            given(attributes),
            given(headers),
            given(body),
        );
        let parts = attributes.is_some() || headers.is_some() || body.is_some();
        if message.is_some() && parts {
            return Err(PyTypeError::new_err(
                "a message is a document (the first argument) or its parts (attributes=, \
                 headers=, body=), not both: put the parts into the document \
                 ({\"attributes\": ..., \"headers\": ..., \"body\": ...}) or pass only the parts",
            ));
        }
        let document = match &message {
            None => None,
            Some(m) if m.is_instance_of::<PyDict>() => {
                let mut out = String::new();
                write_json(m, 0, TooDeep::Fail, &mut out)?;
                Some(TextArg::Owned(out.into_bytes()))
            }
            Some(m) => Some(text_arg(m, "a message").map_err(|_| {
                PyTypeError::new_err(format!(
                    "a message is a dict or JSON text (str or bytes), not {}; give attributes=, \
                     headers= or body= for the other forms",
                    type_name(m)
                ))
            })?),
        };
        let body = body.map(|b| text_arg(b, "body")).transpose()?;
        let mut unreadable = None;
        let attributes = attributes
            .map(
                |a| match names.and_then(|names| looked_up(a, names).transpose()) {
                    Some(looked_up) => looked_up,
                    None => read_attributes(a, &mut unreadable),
                },
            )
            .transpose()?;
        let headers = headers.map(|h| read_headers(h)).transpose()?;
        if document.is_none() && body.is_none() && attributes.is_none() && headers.is_none() {
            return Err(PyTypeError::new_err(
                "no message given: pass a message (dict or JSON text), or attributes=, headers= \
                 or body=",
            ));
        }
        Ok(MessageArgs {
            document,
            body,
            attributes,
            headers,
            unreadable,
        })
    }

    /// Runs `f` on the adapter's message, its text borrowed from the objects held here (`f` may
    /// release the GIL: the objects stay alive, and `str` and `bytes` do not change).
    pub fn with_input<R>(&self, f: impl FnOnce(&PyInput<'_>) -> R) -> PyResult<R> {
        if let Some(document) = &self.document {
            return Ok(f(&Input::Document(document.bytes()?)));
        }
        let parts = Parts {
            body: self.body.as_ref().map(TextArg::bytes).transpose()?,
            attributes: self.attributes.as_ref(),
            headers: self.headers.as_ref(),
            unreadable: self.unreadable.clone(),
        };
        Ok(f(&Input::Parts(parts)))
    }

    /// The total size of the text parts (a document, a body), in bytes.
    pub fn text_len(&self) -> PyResult<usize> {
        let mut n = 0;
        for t in [&self.document, &self.body].into_iter().flatten() {
            n += t.bytes()?.len();
        }
        Ok(n)
    }
}

/// `attributes`: a mapping of name to value. A value is a `str` (String), an `int`, `float` or
/// `Decimal` (Number, read as its text), a `list`/`tuple` (String.Array, written as JSON),
/// `bytes` (Binary, which filters never see), or a `dict` in the AWS form `{"DataType": T,
/// "StringValue": V}` (also `{"Type": T, "Value": V}`, and `{"type", "value"}` as basaltic
/// vectors write it), whose value may be a number (read as its text). An unknown type name makes
/// the attributes unreadable for the filters that read them (`unreadable`, `INVALID_MESSAGE`); a
/// value of a type no attribute has is a `TypeError` naming the attribute.
fn read_attributes<'py>(
    value: &Bound<'py, PyAny>,
    unreadable: &mut Option<(MessagePart, filtervm_bindings::filtervm::MessageError)>,
) -> PyResult<AttributeList> {
    let mut out = Vec::with_capacity(value.len().unwrap_or(0));
    let mut add = |name: Bound<'py, PyAny>, value: Bound<'py, PyAny>| -> PyResult<()> {
        let name = name
            .cast_into::<PyString>()
            .map_err(|_| PyTypeError::new_err("attribute names must be str"))?;
        let (data_type, text) = match attribute_value(&name, value)? {
            Ok(read) => read,
            Err(e) => {
                unreadable.get_or_insert((MessagePart::Attributes, e));
                (AttributeType::Binary, AttributeValue::Empty)
            }
        };
        out.push(AttributeArg {
            name: PyText::new(name)?,
            data_type,
            value: text,
        });
        Ok(())
    };
    // A dict is walked directly; other mappings through their items.
    if let Ok(dict) = value.cast::<PyDict>() {
        for (name, value) in dict.iter() {
            add(name, value)?;
        }
        return Ok(AttributeList::Many(out));
    }
    let mapping = value.cast::<PyMapping>().map_err(|_| {
        PyTypeError::new_err(format!(
            "attributes must be a mapping of name to value, not {}",
            type_name(value)
        ))
    })?;
    for item in mapping.items()?.iter() {
        let (name, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
        add(name, value)?;
    }
    Ok(AttributeList::Many(out))
}

/// The attributes of `value` named `names`, when `value` is a `dict` whose every name and
/// value [`plain::is_plain`] accepts (`None` otherwise: read it whole with [`read_attributes`]).
/// Such a dict gives no error and no unknown type, and the filters read nothing of it but the
/// values of `names` ([`AttributeNames::get`]), so the attributes of the other names are
/// checked for their type and never read.
fn looked_up<'py>(
    value: &Bound<'py, PyAny>,
    names: &[Py<PyString>],
) -> PyResult<Option<AttributeList>> {
    let Ok(dict) = value.cast::<PyDict>() else {
        return Ok(None);
    };
    if !plain::is_plain(dict) {
        return Ok(None);
    }
    let py = value.py();
    let mut out = Vec::new();
    for name in names {
        let name = name.bind(py);
        if let Some(value) = dict.get_item(name)? {
            let Ok((data_type, value)) = attribute_value(name, value)? else {
                // Not for a plain value; read the attributes whole.
                return Ok(None);
            };
            let attribute = AttributeArg {
                name: PyText::new(name.clone())?,
                data_type,
                value,
            };
            if let [_] = names {
                return Ok(Some(AttributeList::One(Some(attribute))));
            }
            out.push(attribute);
        }
    }
    Ok(Some(match names {
        [_] => AttributeList::One(None),
        _ => AttributeList::Many(out),
    }))
}

/// What is done with the attributes [`with_looked_up`] finds: a function of any borrowed
/// attribute set (one type for a single name, another for several).
pub trait OnAttributes {
    /// What the function gives.
    type Output;
    /// Runs on the attributes found.
    fn call<A: Attributes + Sync + ?Sized>(self, attributes: &A) -> Self::Output;
}

/// Runs `f` on the attributes `value` holds for `names` (the names the filters read, at most
/// [`plain::MAX_NAMES`]), when `value` is a `dict` whose every name and value
/// [`plain::is_plain`] accepts: the same attributes [`looked_up`] makes for these names, with
/// each name and ASCII value read where it lies (nothing is copied or converted). `None` (and
/// `f` not run) for any other `value` or more names: read it as [`MessageArgs::new`] does.
#[inline]
pub fn with_looked_up<F: OnAttributes>(
    value: &Bound<'_, PyAny>,
    names: &[Py<PyString>],
    f: F,
) -> PyResult<Option<F::Output>> {
    if let [name] = names {
        return with_one_looked_up(value, name.bind(value.py()), |attributes| {
            f.call(attributes)
        });
    }
    let Ok(dict) = value.cast::<PyDict>() else {
        return Ok(None);
    };
    with_several_looked_up(dict, names, f)
}

/// [`with_looked_up`] of one name, `f` a closure (a filter that reads one attribute: the
/// call a broker makes most).
#[inline]
pub fn with_one_looked_up<R>(
    value: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    f: impl FnOnce(&OneAttribute<'_>) -> R,
) -> PyResult<Option<R>> {
    let Ok(dict) = value.cast::<PyDict>() else {
        return Ok(None);
    };
    let Some(text) = name_text(name) else {
        return Ok(None);
    };
    // The old shape of this function, kept as it was: its code is what the goal of the
    // bindings (BENCHMARKS.md, "Python and C bindings") was measured on.
    let value = match plain::find(dict, text) {
        None => return Ok(None),
        Some(plain::Found::Missing) => return Ok(Some(f(&OneAttribute(None)))),
        Some(plain::Found::Ascii(ascii)) => (AttributeType::String, OneValue::Ascii(ascii)),
        Some(plain::Found::Other(found)) => match attribute_value(name, found)? {
            Ok((data_type, value)) => (data_type, OneValue::Read(value)),
            // Not for a plain value; read the attributes whole.
            Err(_) => return Ok(None),
        },
    };
    Ok(Some(f(&OneAttribute(Some((text, value.0, value.1))))))
}

/// [`with_looked_up`] of any number of names but one.
fn with_several_looked_up<F: OnAttributes>(
    dict: &Bound<'_, PyDict>,
    names: &[Py<PyString>],
    f: F,
) -> PyResult<Option<F::Output>> {
    if names.len() > plain::MAX_NAMES {
        return Ok(None);
    }
    let py = dict.py();
    let mut texts = [""; plain::MAX_NAMES];
    for (text, name) in texts.iter_mut().zip(names) {
        let Some(read) = name_text(name.bind(py)) else {
            return Ok(None);
        };
        *text = read;
    }
    let texts = texts.get(..names.len()).unwrap_or_default();
    let Some(finds) = plain::find_several(dict, texts) else {
        return Ok(None);
    };
    let mut looked_up = LookedUp {
        found: Default::default(),
        len: 0,
    };
    for (i, (text, name)) in texts.iter().zip(names).enumerate() {
        let (data_type, value) = match read_found(name.bind(py), finds.get(i))? {
            Found::Missing => continue,
            Found::Value(data_type, value) => (data_type, value),
            Found::NotPlain => return Ok(None),
        };
        if let Some(slot) = looked_up.found.get_mut(looked_up.len) {
            *slot = Some((*text, data_type, value));
            looked_up.len += 1;
        }
    }
    Ok(Some(f.call(&looked_up)))
}

/// The text of an attribute name (`None`: a `str` that is not UTF-8, never a plain name).
#[inline]
fn name_text<'a>(name: &'a Bound<'_, PyString>) -> Option<&'a str> {
    plain::ascii(name).map_or_else(|| name.to_str().ok(), Some)
}

/// A value a walk found, read.
enum Found<'a> {
    /// No attribute has the name.
    Missing,
    /// Its type and text.
    Value(AttributeType, OneValue<'a>),
    /// A value [`attribute_value`] does not read without an error: the attributes are read
    /// whole.
    NotPlain,
}

/// Reads the value `found` of attribute `name`.
#[inline]
fn read_found<'a>(name: &Bound<'_, PyString>, found: plain::Found<'a, '_>) -> PyResult<Found<'a>> {
    Ok(match found {
        plain::Found::Missing => Found::Missing,
        plain::Found::Ascii(ascii) => Found::Value(AttributeType::String, OneValue::Ascii(ascii)),
        plain::Found::Other(found) => match attribute_value(name, found)? {
            Ok((data_type, value)) => Found::Value(data_type, OneValue::Read(value)),
            Err(_) => Found::NotPlain,
        },
    })
}

/// The attribute a filter reads when it reads one only, looked up in the caller's `dict` and
/// read where it lies ([`with_looked_up`]).
pub struct OneAttribute<'a>(Option<(&'a str, AttributeType, OneValue<'a>)>);

impl<'a> Attributes for OneAttribute<'a> {
    type Name = str;
    type Value = OneValue<'a>;

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&str, AttributeType, &OneValue<'a>)> {
        self.0
            .iter()
            .map(|(name, data_type, value)| (*name, *data_type, value))
    }
}

/// The attributes a filter or a set reads when it reads several, looked up by their names in
/// the caller's `dict` and read where they lie ([`with_looked_up`]): the first `len` entries,
/// one per name found.
pub struct LookedUp<'a> {
    found: [Option<(&'a str, AttributeType, OneValue<'a>)>; plain::MAX_NAMES],
    len: usize,
}

impl<'a> Attributes for LookedUp<'a> {
    type Name = str;
    type Value = OneValue<'a>;

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&str, AttributeType, &OneValue<'a>)> {
        self.found
            .get(..self.len)
            .unwrap_or_default()
            .iter()
            .flatten()
            .map(|(name, data_type, value)| (*name, *data_type, value))
    }
}

/// The value of an attribute looked up ([`OneAttribute`], [`LookedUp`]).
pub enum OneValue<'a> {
    /// An ASCII `str`, read where it lies.
    Ascii(&'a str),
    /// Any other value, as [`attribute_value`] reads it.
    Read(AttributeValue),
}

impl Text for OneValue<'_> {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        match self {
            OneValue::Ascii(s) => Ok(s),
            OneValue::Read(v) => v.text(),
        }
    }
}

/// The names of the attributes the filters of a call read, as Python strings: made once per
/// filter (or per state of a set) and looked up in each message's `dict` ([`looked_up`]).
#[derive(Default)]
pub struct AttributeNames(std::sync::OnceLock<Option<Vec<Py<PyString>>>>);

impl AttributeNames {
    /// The names (`None`: the filters read more than these attributes' values, such as whether
    /// the message has any attribute: read every attribute), made from `names` on first use.
    pub fn get<'a>(
        &self,
        py: Python<'_>,
        names: impl FnOnce() -> Option<Vec<&'a str>>,
    ) -> Option<&[Py<PyString>]> {
        self.0
            .get_or_init(|| {
                names().map(|names| {
                    names
                        .into_iter()
                        .map(|n| PyString::intern(py, n).unbind())
                        .collect()
                })
            })
            .as_deref()
    }
}

/// An attribute value read: its type and where its text is, or the message error of an
/// unknown type name.
type ReadValue<'py> =
    Result<(AttributeType, AttributeValue), filtervm_bindings::filtervm::MessageError>;

/// The type and text of attribute `name`'s value.
fn attribute_value<'py>(
    name: &Bound<'py, PyString>,
    value: Bound<'py, PyAny>,
) -> PyResult<ReadValue<'py>> {
    let wrong = |what: String| {
        PyTypeError::new_err(format!(
            "attribute `{}`: {what}",
            name.to_str().unwrap_or("?")
        ))
    };
    if value.is_instance_of::<PyString>() {
        let s = value.cast_into::<PyString>().map_err(PyErr::from)?;
        return Ok(Ok((
            AttributeType::String,
            AttributeValue::Str(PyText::new(s)?),
        )));
    }
    if value.is_instance_of::<PyBool>() {
        return Err(wrong(
            "a bool has no attribute type; give \"true\" (String) or {\"DataType\": ..., \
             \"StringValue\": ...}"
                .to_owned(),
        ));
    }
    if let Ok(fields) = value.cast::<PyDict>() {
        return typed_attribute(name, fields);
    }
    if let Some(number) = number(&value).map_err(|e| named(name, e))? {
        return Ok(Ok((AttributeType::Number, number)));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut out = String::new();
        write_json(&value, 0, TooDeep::Cut, &mut out)?;
        return Ok(Ok((AttributeType::StringArray, AttributeValue::Owned(out))));
    }
    if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Ok(Ok((AttributeType::Binary, AttributeValue::Empty)));
    }
    Err(wrong(format!(
        "a value is str, int, float, Decimal, list, bytes or a typed dict, not {}",
        type_name(&value)
    )))
}

/// `e`, of the same exception class, with the name of the attribute it is about.
fn named(name: &Bound<'_, PyString>, e: PyErr) -> PyErr {
    let py = name.py();
    let message = format!(
        "attribute `{}`: {}",
        name.to_str().unwrap_or("?"),
        e.value(py)
    );
    if e.is_instance_of::<PyValueError>(py) {
        PyValueError::new_err(message)
    } else {
        PyTypeError::new_err(message)
    }
}

/// A number (`int`, finite `float`, `Decimal`) as an attribute value's text, `None` for another
/// value.
fn number<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<AttributeValue>> {
    if value.is_instance_of::<PyBool>() {
        return Ok(None);
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(Some(match value.extract::<i64>() {
            Ok(n) => AttributeValue::Number(LazyNumber::new(Number::Int(n))),
            Err(_) => AttributeValue::Owned(int_text(value)?),
        }));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        let f = f.value();
        if !f.is_finite() {
            return Err(PyValueError::new_err(format!(
                "a Number is finite, not {f}"
            )));
        }
        return Ok(Some(AttributeValue::Number(LazyNumber::new(
            Number::Float(f),
        ))));
    }
    if is_decimal(value)? {
        return decimal_text(value).map(|t| Some(AttributeValue::Owned(t)));
    }
    Ok(None)
}

/// A typed attribute: `{"DataType": T, "StringValue": V}` (AWS's Publish API), `{"Type": T,
/// "Value": V}` (delivered to SQS/Lambda), `{"type": T, "value": V}` (basaltic vectors).
/// `BinaryValue` stands for the value of a Binary attribute; a value given as a number is read
/// as its text.
fn typed_attribute<'py>(
    name: &Bound<'py, PyString>,
    fields: &Bound<'py, PyDict>,
) -> PyResult<ReadValue<'py>> {
    let py = fields.py();
    let shown = || name.to_str().unwrap_or("?").to_owned();
    // The member of the first of three names that `fields` has; the names after the first
    // are made only when it is missing (AWS's Publish API uses the first).
    let first = |first: &Bound<'py, PyString>,
                 others: &dyn Fn() -> [&'py Bound<'py, PyString>; 2]|
     -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some(v) = fields.get_item(first)? {
            return Ok(Some(v));
        }
        for k in others() {
            if let Some(v) = fields.get_item(k)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    };
    let data_type = first(intern!(py, "DataType"), &|| {
        [intern!(py, "Type"), intern!(py, "type")]
    })?
    .ok_or_else(|| {
        PyValueError::new_err(format!(
            "attribute `{}`: a typed attribute needs \"DataType\" (or \"Type\")",
            shown()
        ))
    })?;
    let data_type = data_type
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("attribute `{}`: the type is a str", shown())))?;
    let given = data_type.to_str()?;
    let Some(data_type) = attribute_type(given.as_bytes()) else {
        return Ok(Err(unknown_attribute_type(
            name.to_str()?.as_bytes(),
            given.as_bytes(),
        )));
    };
    let value = first(intern!(py, "StringValue"), &|| {
        [intern!(py, "Value"), intern!(py, "value")]
    })?;
    let text = match value {
        Some(v) if v.is_instance_of::<PyString>() => AttributeValue::Str(PyText::new(
            v.cast_into::<PyString>().map_err(PyErr::from)?,
        )?),
        Some(v) => match number(&v).map_err(|e| named(name, e))? {
            Some(text) => text,
            None => {
                return Err(PyTypeError::new_err(format!(
                    "attribute `{}`: the value is a str (or a number, read as its text), not {}",
                    shown(),
                    type_name(&v)
                )));
            }
        },
        None if fields.contains(intern!(py, "BinaryValue"))? => AttributeValue::Empty,
        None => {
            return Err(PyValueError::new_err(format!(
                "attribute `{}`: a typed attribute needs \"StringValue\" (or \"Value\")",
                shown()
            )));
        }
    };
    Ok(Ok((data_type, text)))
}

/// `headers`: a mapping of name to a `str` or a list of `str` (a header with several values),
/// or an iterable of `(name, value)` pairs (a repeated name adds a value).
fn read_headers<'py>(value: &Bound<'py, PyAny>) -> PyResult<HeaderList> {
    let string = |name: &Bound<'py, PyString>, v: Bound<'py, PyAny>| {
        let v = v.cast_into::<PyString>().map_err(|e| {
            PyTypeError::new_err(format!(
                "header `{}`: values are str, not {}",
                name.to_str().unwrap_or("?"),
                type_name(&e.into_inner())
            ))
        })?;
        PyText::new(v)
    };
    let header_name = |n: Bound<'py, PyAny>| {
        n.cast_into::<PyString>()
            .map_err(|_| PyTypeError::new_err("header names must be str"))
    };
    // A dict is walked directly; other mappings through their items.
    let mut out = Vec::new();
    let mut add = |name: Bound<'py, PyAny>, v: Bound<'py, PyAny>| -> PyResult<()> {
        let name = header_name(name)?;
        let values = if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
            HeaderValue::Many(
                v.try_iter()?
                    .map(|x| string(&name, x?))
                    .collect::<PyResult<Vec<_>>>()?,
            )
        } else {
            HeaderValue::One(string(&name, v)?)
        };
        out.push(HeaderArg {
            name: PyText::new(name)?,
            values,
        });
        Ok(())
    };
    if let Ok(dict) = value.cast::<PyDict>() {
        for (name, v) in dict.iter() {
            add(name, v)?;
        }
    } else if let Ok(mapping) = value.cast::<PyMapping>() {
        for item in mapping.items()?.iter() {
            let (name, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
            add(name, v)?;
        }
    } else {
        for pair in value.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "headers must be a mapping or (name, value) pairs, not {}",
                type_name(value)
            ))
        })? {
            let (name, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = pair?.extract()?;
            let name = header_name(name)?;
            let v = string(&name, v)?;
            out.push(HeaderArg {
                name: PyText::new(name)?,
                values: HeaderValue::One(v),
            });
        }
    }
    Ok(HeaderList(out))
}

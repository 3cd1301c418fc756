//! Python values into what the adapter takes: policies and options as JSON text, messages as
//! the adapter's parts (a document, a body, attributes, headers).

use filtervm_capi::engine::{Attribute, AttributeKind, Document, Header, Message};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple,
    PyType,
};
use std::fmt::Write as _;

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

/// A message document given as a `dict`, as JSON text: ints of any size and `Decimal`s exactly,
/// members in the dict's order, so that the library reads every number as written.
fn document_text(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let mut out = String::new();
    write_json(value, 0, TooDeep::Fail, &mut out)?;
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
            ))?);
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
        match value.extract::<i64>() {
            Ok(n) => {
                let _ = write!(out, "{n}");
            }
            Err(_) => out.push_str(value.str()?.to_str()?),
        }
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
        out.push_str(text);
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

/// A float as JSON text: Python's shortest round-trip form (`repr`), finite only.
fn float_text(value: f64) -> PyResult<String> {
    if !value.is_finite() {
        return Err(PyValueError::new_err(format!(
            "JSON has no {value}: numbers must be finite"
        )));
    }
    // Rust's `{:?}` of an f64 is the shortest text that reads back to the same value, like
    // Python's repr; JSON needs an exponent without `+` and a mantissa with digits.
    let text = format!("{value:?}");
    Ok(text)
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

/// Bytes of a `str`, `bytes` or `bytearray` argument, borrowed where Python allows it.
pub enum Text<'py> {
    /// Borrowed from a `str` or `bytes` object.
    Borrowed(Bound<'py, PyAny>),
    /// Copied from a `bytearray` (mutable, so not borrowed).
    Owned(Vec<u8>),
}

impl Text<'_> {
    /// The bytes.
    pub fn bytes(&self) -> PyResult<&[u8]> {
        match self {
            Text::Owned(v) => Ok(v),
            Text::Borrowed(obj) => {
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

fn text<'py>(value: &Bound<'py, PyAny>, what: &str) -> PyResult<Text<'py>> {
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        Ok(Text::Borrowed(value.clone()))
    } else if let Ok(b) = value.cast::<PyByteArray>() {
        Ok(Text::Owned(b.to_vec()))
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be str or bytes, not {}",
            type_name(value)
        )))
    }
}

/// The parts of a message as given to `matches`, `explain` and `matching`, read from Python
/// (the text parts stay borrowed from their objects).
pub struct MessageArgs<'py> {
    /// The message as JSON text: as given, or a `dict` written as JSON (ints of any size and
    /// `Decimal`s exactly, members in the dict's order), so that the library reads every number
    /// as written.
    document: Option<Text<'py>>,
    body: Option<Text<'py>>,
    attributes: Option<Vec<Attribute>>,
    headers: Option<Vec<Header>>,
}

impl<'py> MessageArgs<'py> {
    /// Reads the arguments: `message` a `dict` (a document in the dialect's shape) or JSON text
    /// (`str`/`bytes`); `attributes` and `headers` mappings; `body` text.
    pub fn new(
        message: Option<&Bound<'py, PyAny>>,
        attributes: Option<&Bound<'py, PyAny>>,
        headers: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
        reads: Option<&dyn Fn(&str) -> bool>,
    ) -> PyResult<MessageArgs<'py>> {
        let document = match message.filter(|m| !m.is_none()) {
            None => None,
            Some(m) if m.is_instance_of::<PyDict>() => Some(Text::Owned(document_text(m)?)),
            Some(m) => Some(text(m, "a message").map_err(|_| {
                PyTypeError::new_err(format!(
                    "a message is a dict or JSON text (str or bytes), not {}; give attributes=, \
                     headers= or body= for the other forms",
                    type_name(m)
                ))
            })?),
        };
        let body = body
            .filter(|b| !b.is_none())
            .map(|b| text(b, "body"))
            .transpose()?;
        let attributes = attributes
            .filter(|a| !a.is_none())
            .map(|a| read_attributes(a, reads))
            .transpose()?;
        let headers = headers
            .filter(|h| !h.is_none())
            .map(read_headers)
            .transpose()?;
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
        })
    }

    /// The adapter's message: the parsed parts moved out, the text parts borrowed.
    pub fn take(&mut self) -> PyResult<Message<'_>> {
        let attributes = self.attributes.take();
        let headers = self.headers.take();
        let this: &Self = self;
        let document = match &this.document {
            None => None,
            Some(t) => Some(Document::Json(t.bytes()?)),
        };
        Ok(Message {
            document,
            body: this.body.as_ref().map(Text::bytes).transpose()?,
            attributes,
            headers,
        })
    }

    /// The total size of the text parts (JSON document and body), in bytes.
    pub fn text_len(&self) -> PyResult<usize> {
        let mut n = 0;
        if let Some(t) = &self.document {
            n += t.bytes()?.len();
        }
        if let Some(t) = &self.body {
            n += t.bytes()?.len();
        }
        Ok(n)
    }
}

/// `attributes`: a mapping of name to value. A value is a `str` (String), an `int`, `float` or
/// `Decimal` (Number), a `list`/`tuple` (String.Array, written as JSON), `bytes` (Binary, which
/// filters never see), or a `dict` in the AWS form `{"DataType": T, "StringValue": V}` (also
/// `{"Type": T, "Value": V}`, and `{"type", "value"}` as basaltic vectors write it). Values of
/// names `reads` rejects are left out (the adapter's `Filter::reads_attribute`); their types
/// still count.
fn read_attributes(
    value: &Bound<'_, PyAny>,
    reads: Option<&dyn Fn(&str) -> bool>,
) -> PyResult<Vec<Attribute>> {
    let mut out = Vec::new();
    let mut add = |name: Bound<'_, PyAny>, value: Bound<'_, PyAny>| -> PyResult<()> {
        let name = name
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("attribute names must be str"))?
            .to_str()?;
        let read = reads.is_none_or(|reads| reads(name));
        let (data_type, text) = attribute_value(name, &value, read)?;
        let name = name.to_owned();
        out.push(match data_type {
            Type::Kind(kind) => Attribute::of_kind(name, kind, text),
            Type::Named(data_type) => {
                Attribute::new(name, &data_type, text).map_err(crate::failure)?
            }
        });
        Ok(())
    };
    // A dict is walked directly; other mappings through their items.
    if let Ok(dict) = value.cast::<PyDict>() {
        for (name, value) in dict.iter() {
            add(name, value)?;
        }
        return Ok(out);
    }
    let mapping = value.cast::<PyMapping>().map_err(|_| {
        PyTypeError::new_err(format!(
            "attributes must be a mapping of name to value, not {}",
            type_name(value)
        ))
    })?;
    for item in mapping.items()?.iter() {
        let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        add(name, value)?;
    }
    Ok(out)
}

/// An attribute's type: a base type known from the Python value, or a name to read.
enum Type {
    Kind(AttributeKind),
    Named(String),
}

/// The type and value text of an attribute value (the text empty when `read` is false).
fn attribute_value(name: &str, value: &Bound<'_, PyAny>, read: bool) -> PyResult<(Type, String)> {
    let text = |make: &dyn Fn() -> PyResult<String>| if read { make() } else { Ok(String::new()) };
    if let Ok(s) = value.cast::<PyString>() {
        return Ok((
            Type::Kind(AttributeKind::String),
            text(&|| Ok(s.to_str()?.to_owned()))?,
        ));
    }
    if value.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "attribute `{name}`: a bool has no attribute type; give \"true\" (String) or \
             {{\"DataType\": ..., \"StringValue\": ...}}"
        )));
    }
    if let Ok(fields) = value.cast::<PyDict>() {
        return typed_attribute(name, fields, read);
    }
    let number = Type::Kind(AttributeKind::Number);
    if value.is_instance_of::<PyInt>() {
        return Ok((
            number,
            text(&|| match value.extract::<i64>() {
                Ok(n) => Ok(n.to_string()),
                Err(_) => Ok(value.str()?.to_str()?.to_owned()),
            })?,
        ));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        if !f.value().is_finite() {
            return Err(PyValueError::new_err(format!(
                "attribute `{name}`: a Number is finite, not {}",
                f.value()
            )));
        }
        return Ok((number, text(&|| float_text(f.value()))?));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        return Ok((
            Type::Kind(AttributeKind::StringArray),
            text(&|| {
                let mut out = String::new();
                write_json(value, 0, TooDeep::Cut, &mut out)?;
                Ok(out)
            })?,
        ));
    }
    if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        return Ok((Type::Kind(AttributeKind::Binary), String::new()));
    }
    if is_decimal(value)? {
        return Ok((number, text(&|| Ok(value.str()?.to_str()?.to_owned()))?));
    }
    Err(PyTypeError::new_err(format!(
        "attribute `{name}`: a value is str, int, float, Decimal, list, bytes or a typed dict, \
         not {}",
        type_name(value)
    )))
}

/// A typed attribute: `{"DataType": T, "StringValue": V}` (AWS's Publish API), `{"Type": T,
/// "Value": V}` (delivered to SQS/Lambda), `{"type": T, "value": V}` (basaltic vectors).
/// `BinaryValue` stands for the value of a Binary attribute.
fn typed_attribute<'py>(
    name: &str,
    fields: &Bound<'py, PyDict>,
    read: bool,
) -> PyResult<(Type, String)> {
    let py = fields.py();
    let first = |keys: [&Bound<'py, PyString>; 3]| -> PyResult<Option<Bound<'py, PyAny>>> {
        for k in keys {
            if let Some(v) = fields.get_item(k)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    };
    let data_type = first([
        intern!(py, "DataType"),
        intern!(py, "Type"),
        intern!(py, "type"),
    ])?
    .ok_or_else(|| {
        PyValueError::new_err(format!(
            "attribute `{name}`: a typed attribute needs \"DataType\" (or \"Type\")"
        ))
    })?;
    let data_type = data_type
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("attribute `{name}`: the type is a str")))?
        .to_str()?;
    let data_type = match data_type {
        "String" => Type::Kind(AttributeKind::String),
        "Number" => Type::Kind(AttributeKind::Number),
        "String.Array" => Type::Kind(AttributeKind::StringArray),
        "Binary" => Type::Kind(AttributeKind::Binary),
        other => Type::Named(other.to_owned()),
    };
    let value = first([
        intern!(py, "StringValue"),
        intern!(py, "Value"),
        intern!(py, "value"),
    ])?;
    match value {
        Some(v) if read => Ok((data_type, v.extract::<String>()?)),
        Some(v) if v.is_instance_of::<PyString>() => Ok((data_type, String::new())),
        Some(v) => Ok((data_type, v.extract::<String>()?)),
        None if fields.contains(intern!(py, "BinaryValue"))? => Ok((data_type, String::new())),
        None => Err(PyValueError::new_err(format!(
            "attribute `{name}`: a typed attribute needs \"StringValue\" (or \"Value\")"
        ))),
    }
}

/// `headers`: a mapping of name to a `str` or a list of `str` (a header with several values),
/// or an iterable of `(name, value)` pairs (a repeated name adds a value).
fn read_headers(value: &Bound<'_, PyAny>) -> PyResult<Vec<Header>> {
    let header_value = |name: &str, v: &Bound<'_, PyAny>| -> PyResult<String> {
        v.cast::<PyString>()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "header `{name}`: values are str, not {}",
                    type_name(v)
                ))
            })?
            .to_str()
            .map(str::to_owned)
    };
    if let Ok(mapping) = value.cast::<PyMapping>() {
        let items = mapping.items()?;
        let mut out = Vec::with_capacity(items.len());
        for item in items.iter() {
            let (name, v): (String, Bound<'_, PyAny>) = item.extract()?;
            let values = if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
                v.try_iter()?
                    .map(|x| header_value(&name, &x?))
                    .collect::<PyResult<Vec<_>>>()?
            } else {
                vec![header_value(&name, &v)?]
            };
            out.push(Header::new(name, values));
        }
        return Ok(out);
    }
    let mut pairs = Vec::new();
    for pair in value.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "headers must be a mapping or (name, value) pairs, not {}",
            type_name(value)
        ))
    })? {
        let (name, v): (String, Bound<'_, PyAny>) = pair?.extract()?;
        let v = header_value(&name, &v)?;
        pairs.push((name, v));
    }
    Ok(Header::group(pairs))
}

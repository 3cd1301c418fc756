//! Reading messages out of Arrow arrays: a text column (string or binary JSON) or a column of
//! attributes/headers (a map or a struct).
//!
//! Each reader is built once per batch from the array and its type; reading a row then needs no
//! type dispatch beyond one `match` on the reader.

use crate::adapter::{FieldText, FieldValue, MessageField, MessageRef};
use datafusion::arrow::array::{
    Array, AsArray, BinaryArray, BinaryViewArray, BooleanArray, GenericListArray, LargeBinaryArray,
    LargeStringArray, MapArray, StringArray, StringViewArray, StructArray,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

/// One text cell: UTF-8 text, or bytes that are not.
#[derive(Debug, Clone, Copy)]
pub enum Text<'a> {
    /// UTF-8 text.
    Str(&'a str),
    /// Binary cell bytes that are not UTF-8.
    NotUtf8(&'a [u8]),
}

/// A column of text cells: any of Arrow's string or binary arrays.
#[derive(Debug, Clone, Copy)]
pub enum TextColumn<'a> {
    /// `Utf8`.
    Utf8(&'a StringArray),
    /// `LargeUtf8`.
    LargeUtf8(&'a LargeStringArray),
    /// `Utf8View`.
    Utf8View(&'a StringViewArray),
    /// `Binary`.
    Binary(&'a BinaryArray),
    /// `LargeBinary`.
    LargeBinary(&'a LargeBinaryArray),
    /// `BinaryView`.
    BinaryView(&'a BinaryViewArray),
}

impl<'a> TextColumn<'a> {
    /// A reader of `array`, when it is a string or binary array.
    pub fn new(array: &'a dyn Array) -> Option<TextColumn<'a>> {
        Some(match array.data_type() {
            DataType::Utf8 => TextColumn::Utf8(array.as_string_opt::<i32>()?),
            DataType::LargeUtf8 => TextColumn::LargeUtf8(array.as_string_opt::<i64>()?),
            DataType::Utf8View => TextColumn::Utf8View(array.as_string_view_opt()?),
            DataType::Binary => TextColumn::Binary(array.as_binary_opt::<i32>()?),
            DataType::LargeBinary => TextColumn::LargeBinary(array.as_binary_opt::<i64>()?),
            DataType::BinaryView => TextColumn::BinaryView(array.as_binary_view_opt()?),
            _ => return None,
        })
    }

    /// The cell at `row`; `None` when it is null (or out of range).
    pub fn get(&self, row: usize) -> Option<Text<'a>> {
        fn bytes(b: &[u8]) -> Text<'_> {
            match std::str::from_utf8(b) {
                Ok(s) => Text::Str(s),
                Err(_) => Text::NotUtf8(b),
            }
        }
        macro_rules! cell {
            ($array:expr, $wrap:expr) => {
                if row >= $array.len() || $array.is_null(row) {
                    None
                } else {
                    Some($wrap($array.value(row)))
                }
            };
        }
        match self {
            TextColumn::Utf8(a) => cell!(a, Text::Str),
            TextColumn::LargeUtf8(a) => cell!(a, Text::Str),
            TextColumn::Utf8View(a) => cell!(a, Text::Str),
            TextColumn::Binary(a) => cell!(a, bytes),
            TextColumn::LargeBinary(a) => cell!(a, bytes),
            TextColumn::BinaryView(a) => cell!(a, bytes),
        }
    }

    /// The bytes of the cell at `row`, UTF-8 or not; `None` when it is null (or out of range).
    pub fn bytes(&self, row: usize) -> Option<&'a [u8]> {
        macro_rules! cell {
            ($array:expr, $as_bytes:expr) => {
                if row >= $array.len() || $array.is_null(row) {
                    None
                } else {
                    Some($as_bytes($array.value(row)))
                }
            };
        }
        match self {
            TextColumn::Utf8(a) => cell!(a, str::as_bytes),
            TextColumn::LargeUtf8(a) => cell!(a, str::as_bytes),
            TextColumn::Utf8View(a) => cell!(a, str::as_bytes),
            TextColumn::Binary(a) => cell!(a, std::convert::identity),
            TextColumn::LargeBinary(a) => cell!(a, std::convert::identity),
            TextColumn::BinaryView(a) => cell!(a, std::convert::identity),
        }
    }

    /// The cell at `row` as text; `None` when it is null or not UTF-8.
    pub fn str(&self, row: usize) -> Option<&'a str> {
        match self.get(row)? {
            Text::Str(s) => Some(s),
            Text::NotUtf8(_) => None,
        }
    }

    /// The cell at `row` as a [`FieldText`]; `None` when it is null (or out of range).
    fn field_text(&self, row: usize) -> Option<FieldText> {
        Some(match self.get(row)? {
            Text::Str(s) => FieldText::Str(s.to_owned()),
            Text::NotUtf8(b) => FieldText::Bytes(b.to_vec()),
        })
    }
}

/// A list column whose items are text (a `String.Array` attribute, a multi-valued header).
#[derive(Debug)]
enum ListColumn<'a> {
    List(&'a GenericListArray<i32>, TextColumn<'a>),
    LargeList(&'a GenericListArray<i64>, TextColumn<'a>),
}

impl<'a> ListColumn<'a> {
    fn new(array: &'a dyn Array) -> Option<ListColumn<'a>> {
        match array.data_type() {
            DataType::List(_) => {
                let list = array.as_list_opt::<i32>()?;
                let items = TextColumn::new(list.values().as_ref())?;
                Some(ListColumn::List(list, items))
            }
            DataType::LargeList(_) => {
                let list = array.as_list_opt::<i64>()?;
                let items = TextColumn::new(list.values().as_ref())?;
                Some(ListColumn::LargeList(list, items))
            }
            _ => None,
        }
    }

    /// The non-null items of the list at `row` (bytes that are not UTF-8 as they are); `None`
    /// when the list is null.
    fn get(&self, row: usize) -> Option<Vec<FieldText>> {
        let (start, end, items) = match self {
            ListColumn::List(list, items) => {
                if row >= list.len() || list.is_null(row) {
                    return None;
                }
                let offsets = list.value_offsets();
                (
                    usize::try_from(*offsets.get(row)?).ok()?,
                    usize::try_from(*offsets.get(row + 1)?).ok()?,
                    items,
                )
            }
            ListColumn::LargeList(list, items) => {
                if row >= list.len() || list.is_null(row) {
                    return None;
                }
                let offsets = list.value_offsets();
                (
                    usize::try_from(*offsets.get(row)?).ok()?,
                    usize::try_from(*offsets.get(row + 1)?).ok()?,
                    items,
                )
            }
        };
        Some((start..end).filter_map(|i| items.field_text(i)).collect())
    }
}

/// The value column of a map, or one field of a struct: the value of one attribute or header.
enum ValueColumn<'a> {
    Text(TextColumn<'a>),
    Number(&'a dyn Array, ArrayFormatter<'a>),
    Bool(&'a BooleanArray),
    Texts(ListColumn<'a>),
    /// A struct of a declared type and a value (`{"type": "Number", "value": "5"}`).
    Typed {
        array: &'a StructArray,
        data_type: TextColumn<'a>,
        value: TextColumn<'a>,
    },
    /// A column of the `Null` type: every value absent.
    Null,
}

impl std::fmt::Debug for ValueColumn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ValueColumn::Text(_) => "Text",
            ValueColumn::Number(..) => "Number",
            ValueColumn::Bool(_) => "Bool",
            ValueColumn::Texts(_) => "Texts",
            ValueColumn::Typed { .. } => "Typed",
            ValueColumn::Null => "Null",
        })
    }
}

/// The names a typed-attribute struct may give its type and value fields (the vector shape's
/// `type`/`value`, SNS deliveries' `Type`/`Value`, the AWS API's `DataType`/`StringValue`).
const TYPE_FIELDS: [&str; 3] = ["type", "Type", "DataType"];
const VALUE_FIELDS: [&str; 3] = ["value", "Value", "StringValue"];

impl<'a> ValueColumn<'a> {
    fn new(array: &'a dyn Array) -> Result<ValueColumn<'a>, String> {
        if let Some(text) = TextColumn::new(array) {
            return Ok(ValueColumn::Text(text));
        }
        let data_type = array.data_type();
        if data_type.is_numeric() {
            let formatter = ArrayFormatter::try_new(array, &FormatOptions::default())
                .map_err(|e| e.to_string())?;
            return Ok(ValueColumn::Number(array, formatter));
        }
        match data_type {
            DataType::Null => Ok(ValueColumn::Null),
            DataType::Boolean => array
                .as_boolean_opt()
                .map(ValueColumn::Bool)
                .ok_or_else(|| "not a boolean array".to_owned()),
            DataType::List(_) | DataType::LargeList(_) => ListColumn::new(array)
                .map(ValueColumn::Texts)
                .ok_or_else(|| format!("a list value must hold text, not {data_type}")),
            DataType::Struct(_) => {
                let array = array
                    .as_struct_opt()
                    .ok_or_else(|| "not a struct array".to_owned())?;
                let field = |names: &[&str]| {
                    names
                        .iter()
                        .find_map(|name| array.column_by_name(name))
                        .and_then(|column| TextColumn::new(column.as_ref()))
                };
                match (field(&TYPE_FIELDS), field(&VALUE_FIELDS)) {
                    (Some(data_type), Some(value)) => Ok(ValueColumn::Typed {
                        array,
                        data_type,
                        value,
                    }),
                    _ => Err(format!(
                        "a struct value must be a typed attribute: a text field `type` (or `Type`, \
                         `DataType`) and a text field `value` (or `Value`, `StringValue`); found \
                         {data_type}"
                    )),
                }
            }
            other => Err(format!(
                "an attribute or header value must be text, a number, a boolean, a list of text \
                 or a struct of a type and a value, not {other}"
            )),
        }
    }

    /// The value at `row`; `None` when it is null (the attribute or header is absent).
    fn get(&self, row: usize) -> Option<FieldValue> {
        match self {
            ValueColumn::Text(column) => match column.get(row)? {
                Text::Str(s) => Some(FieldValue::Text(s.to_owned())),
                Text::NotUtf8(b) => Some(FieldValue::Bytes(b.to_vec())),
            },
            ValueColumn::Number(array, formatter) => {
                if row >= array.len() || array.is_null(row) {
                    return None;
                }
                Some(FieldValue::Number(formatter.value(row).to_string()))
            }
            ValueColumn::Bool(array) => {
                if row >= array.len() || array.is_null(row) {
                    return None;
                }
                Some(FieldValue::Text(array.value(row).to_string()))
            }
            ValueColumn::Texts(list) => list.get(row).map(FieldValue::Texts),
            ValueColumn::Typed {
                array,
                data_type,
                value,
            } => {
                if row >= array.len() || array.is_null(row) {
                    return None;
                }
                Some(FieldValue::Typed {
                    data_type: data_type.field_text(row)?,
                    value: value.field_text(row)?,
                })
            }
            ValueColumn::Null => None,
        }
    }
}

/// A column of attributes or headers: a struct (one field per name) or a map (name → value).
#[derive(Debug)]
enum FieldsColumn<'a> {
    Struct {
        array: &'a StructArray,
        names: Vec<&'a str>,
        values: Vec<ValueColumn<'a>>,
    },
    Map {
        array: &'a MapArray,
        keys: TextColumn<'a>,
        values: ValueColumn<'a>,
    },
}

impl<'a> FieldsColumn<'a> {
    fn new(array: &'a dyn Array) -> Result<FieldsColumn<'a>, String> {
        match array.data_type() {
            DataType::Struct(fields) => {
                let array = array
                    .as_struct_opt()
                    .ok_or_else(|| "not a struct array".to_owned())?;
                let mut values = Vec::with_capacity(fields.len());
                for (field, column) in fields.iter().zip(array.columns()) {
                    values.push(
                        ValueColumn::new(column.as_ref())
                            .map_err(|e| format!("field `{}`: {e}", field.name()))?,
                    );
                }
                Ok(FieldsColumn::Struct {
                    array,
                    names: fields.iter().map(|f| f.name().as_str()).collect(),
                    values,
                })
            }
            DataType::Map(_, _) => {
                let array = array
                    .as_map_opt()
                    .ok_or_else(|| "not a map array".to_owned())?;
                let keys = TextColumn::new(array.keys().as_ref())
                    .ok_or_else(|| "the map's keys must be text".to_owned())?;
                let values = ValueColumn::new(array.values().as_ref())
                    .map_err(|e| format!("the map's values: {e}"))?;
                Ok(FieldsColumn::Map {
                    array,
                    keys,
                    values,
                })
            }
            other => Err(format!("not a map or a struct: {other}")),
        }
    }

    /// Reads the fields of `row` into `out` (cleared first); `false` when the row is null.
    fn read(&self, row: usize, out: &mut Vec<MessageField>) -> bool {
        out.clear();
        match self {
            FieldsColumn::Struct {
                array,
                names,
                values,
            } => {
                if row >= array.len() || array.is_null(row) {
                    return false;
                }
                for (name, column) in names.iter().zip(values) {
                    if let Some(value) = column.get(row) {
                        out.push(MessageField {
                            name: (*name).to_owned(),
                            value,
                        });
                    }
                }
                true
            }
            FieldsColumn::Map {
                array,
                keys,
                values,
            } => {
                if row >= array.len() || array.is_null(row) {
                    return false;
                }
                let offsets = array.value_offsets();
                let (Some(&start), Some(&end)) = (offsets.get(row), offsets.get(row + 1)) else {
                    return false;
                };
                let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
                    return false;
                };
                for entry in start..end {
                    if let (Some(name), Some(value)) = (keys.str(entry), values.get(entry)) {
                        out.push(MessageField {
                            name: name.to_owned(),
                            value,
                        });
                    }
                }
                true
            }
        }
    }
}

/// What kind of message column a type is: text or fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// JSON text (string or binary).
    Text,
    /// Attributes or headers (map or struct).
    Fields,
}

/// A column of messages.
#[derive(Debug)]
pub struct MessageColumn<'a> {
    inner: Inner<'a>,
    /// The fields of the row last read (reused from row to row).
    fields: Vec<MessageField>,
}

#[derive(Debug)]
enum Inner<'a> {
    Text(TextColumn<'a>),
    Fields(FieldsColumn<'a>),
}

impl<'a> MessageColumn<'a> {
    /// A reader of `array`, or why its type cannot hold messages.
    pub fn new(array: &'a dyn Array) -> Result<MessageColumn<'a>, String> {
        let inner = match TextColumn::new(array) {
            Some(text) => Inner::Text(text),
            None => match array.data_type() {
                DataType::Struct(_) | DataType::Map(_, _) => {
                    Inner::Fields(FieldsColumn::new(array)?)
                }
                other => {
                    return Err(format!(
                        "the message must be JSON text (Utf8, LargeUtf8, Utf8View, Binary, \
                         LargeBinary, BinaryView) or attributes/headers (a Map or a Struct), not \
                         {other}"
                    ));
                }
            },
        };
        Ok(MessageColumn {
            inner,
            fields: Vec::new(),
        })
    }

    /// Whether a column of type `data_type` can hold messages, and of which kind.
    pub fn kind_of(data_type: &DataType) -> Result<MessageKind, String> {
        let empty = datafusion::arrow::array::new_empty_array(data_type);
        MessageColumn::new(empty.as_ref()).map(|column| column.kind())
    }

    /// The kind of messages the column holds.
    pub fn kind(&self) -> MessageKind {
        match self.inner {
            Inner::Text(_) => MessageKind::Text,
            Inner::Fields(_) => MessageKind::Fields,
        }
    }

    /// The message at `row`; `None` when the cell is null.
    pub fn get(&mut self, row: usize) -> Option<MessageRef<'_>> {
        match &self.inner {
            Inner::Text(column) => Some(MessageRef::Text(column.bytes(row)?)),
            Inner::Fields(column) => {
                if column.read(row, &mut self.fields) {
                    Some(MessageRef::Fields(&self.fields))
                } else {
                    None
                }
            }
        }
    }
}

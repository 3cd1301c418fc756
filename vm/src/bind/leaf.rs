//! The bound form of a key's values: leaves ([`BoundLeaf`]) and the slot holding them ([`Slot`]),
//! what every binder produces and every test reads.

use crate::json;
use crate::value::{Leaf, LeafTypes, Num, Shape};

/// The id of no dictionary entry: a leaf that equals no constant (or was not looked up).
pub const NO_ID: u32 = u32::MAX;

/// What a [`BoundLeaf`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LeafKind {
    /// No leaf: the inline first leaf of a slot that has none (absent, an object, an empty
    /// array). No test holds on it.
    Empty,
    /// A string.
    Str,
    /// A number (its text and binary64 value).
    Num,
    /// `false`.
    False,
    /// `true`.
    True,
    /// `null`.
    Null,
    /// A header or attribute value that is not UTF-8: present, but no test reads it.
    Bytes,
}

/// One leaf of a bound message, borrowing its text from the message or the binding arena.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundLeaf<'b> {
    /// The string, or the number's text; empty for other kinds.
    pub(super) text: &'b str,
    /// A number's value; for a string leaf, its text as a JSON number when computed
    /// (`text_num`), NaN when it is not one.
    pub(super) num: f64,
    /// A string leaf's dictionary id ([`NO_ID`] when it equals no constant or was not looked up).
    pub(super) eq: u32,
    pub(super) kind: LeafKind,
    /// Whether `num` holds a string leaf's numeric value.
    pub(super) text_num: bool,
}

impl<'b> BoundLeaf<'b> {
    /// The leaf of nothing (see [`LeafKind::Empty`]).
    pub const EMPTY: BoundLeaf<'static> = BoundLeaf {
        text: "",
        num: f64::NAN,
        eq: NO_ID,
        kind: LeafKind::Empty,
        text_num: false,
    };

    /// A leaf of `kind` without text (`False`, `True`, `Null`, `Bytes`, `Empty`).
    pub(crate) const fn plain(kind: LeafKind) -> BoundLeaf<'static> {
        BoundLeaf {
            text: "",
            num: f64::NAN,
            eq: NO_ID,
            kind,
            text_num: false,
        }
    }

    /// A number leaf: its text and value.
    #[inline]
    pub(crate) fn num(text: &'b str, value: f64) -> BoundLeaf<'b> {
        BoundLeaf {
            text,
            num: value,
            eq: NO_ID,
            kind: LeafKind::Num,
            text_num: false,
        }
    }

    /// A string leaf not looked up (see [`KeyTable::str_leaf`] for one that is).
    #[inline]
    pub(crate) fn raw_str(text: &'b str) -> BoundLeaf<'b> {
        BoundLeaf {
            text,
            num: f64::NAN,
            eq: NO_ID,
            kind: LeafKind::Str,
            text_num: false,
        }
    }

    /// What the leaf is.
    #[inline]
    pub fn kind(&self) -> LeafKind {
        self.kind
    }

    /// The string, for a string leaf.
    #[inline]
    pub fn as_str(&self) -> Option<&'b str> {
        (self.kind == LeafKind::Str).then_some(self.text)
    }

    /// The number's binary64 value, for a number leaf.
    #[inline]
    pub fn as_f64(&self) -> Option<f64> {
        (self.kind == LeafKind::Num).then_some(self.num)
    }

    /// The number's text as it appeared, for a number leaf.
    #[inline]
    pub fn number_text(&self) -> Option<&'b str> {
        (self.kind == LeafKind::Num).then_some(self.text)
    }

    /// The boolean, for `true` and `false`.
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        match self.kind {
            LeafKind::True => Some(true),
            LeafKind::False => Some(false),
            _ => None,
        }
    }

    /// The dictionary id of a string leaf ([`NO_ID`] when it equals no constant of the table it
    /// was bound to, or its slot has no equality test).
    #[inline]
    pub fn eq_id(&self) -> u32 {
        self.eq
    }

    /// A string leaf's text as a JSON number (B-10, S9): computed at bind time when the table
    /// asked for it, else parsed now; NaN for other leaves and for text that is not one.
    #[inline]
    pub fn text_number(&self) -> f64 {
        match self.kind {
            LeafKind::Str if self.text_num => self.num,
            LeafKind::Str => text_number(self.text),
            _ => f64::NAN,
        }
    }

    /// The leaf's type as a bit of a [`LeafTypes`] mask (none for `Empty` and `Bytes`).
    #[inline]
    pub fn leaf_type(&self) -> LeafTypes {
        match self.kind {
            LeafKind::Str => LeafTypes::STR,
            LeafKind::Num => LeafTypes::NUM,
            LeafKind::True | LeafKind::False => LeafTypes::BOOL,
            LeafKind::Null => LeafTypes::NULL,
            LeafKind::Empty | LeafKind::Bytes => LeafTypes(0),
        }
    }

    /// An owned copy (`None` for `Empty` and `Bytes`, which have no value).
    pub fn to_leaf(&self) -> Option<Leaf> {
        Some(match self.kind {
            LeafKind::Str => Leaf::Str(self.text.into()),
            LeafKind::Num => Leaf::Num(Num::new(self.text, self.num)),
            LeafKind::True => Leaf::Bool(true),
            LeafKind::False => Leaf::Bool(false),
            LeafKind::Null => Leaf::Null,
            LeafKind::Empty | LeafKind::Bytes => return None,
        })
    }
}

/// The value of `text` as a JSON number ([`crate::number::parse_json_number`]), else NaN. Only
/// text starting with `-` or a digit can be one, so other strings cost one comparison.
#[inline]
pub(super) fn text_number(text: &str) -> f64 {
    match text.as_bytes().first() {
        Some(b'-' | b'0'..=b'9') => crate::number::parse_json_number(text).unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// What one key resolved to in one row: its shape and its leaves, the first one inline.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'b> {
    /// The first leaf ([`BoundLeaf::EMPTY`] when there is none).
    pub(crate) first: BoundLeaf<'b>,
    /// The leaves after the first.
    pub(crate) rest: &'b [BoundLeaf<'b>],
    /// What the key named.
    pub shape: Shape,
}

impl<'b> Slot<'b> {
    /// The absent slot.
    pub const ABSENT: Slot<'static> = Slot {
        first: BoundLeaf::EMPTY,
        rest: &[],
        shape: Shape::Absent,
    };

    /// A slot of `shape` without leaves (absent, an object, an empty array).
    pub(crate) const fn bare(shape: Shape) -> Slot<'static> {
        Slot {
            first: BoundLeaf::EMPTY,
            rest: &[],
            shape,
        }
    }

    /// A slot of one leaf: `Null` for a null leaf, else `Scalar`.
    #[inline]
    pub(crate) fn one(leaf: BoundLeaf<'b>) -> Slot<'b> {
        let shape = if leaf.kind == LeafKind::Null {
            Shape::Null
        } else {
            Shape::Scalar
        };
        Slot {
            first: leaf,
            rest: &[],
            shape,
        }
    }

    /// A slot of `leaves` (at least one): one leaf as [`Slot::one`], more as an array.
    pub(crate) fn of(leaves: &'b [BoundLeaf<'b>]) -> Slot<'b> {
        match leaves {
            [] => Slot::ABSENT,
            [only] => Slot::one(*only),
            [first, rest @ ..] => Slot {
                first: *first,
                rest,
                shape: Shape::Array,
            },
        }
    }

    /// The leaves.
    #[inline]
    pub fn leaves(&self) -> impl Iterator<Item = &BoundLeaf<'b>> {
        let first = (self.first.kind != LeafKind::Empty).then_some(&self.first);
        first.into_iter().chain(self.rest)
    }

    /// The number of leaves.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.first.kind != LeafKind::Empty) + self.rest.len()
    }

    /// Whether the slot has no leaf.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.first.kind == LeafKind::Empty
    }

    /// Some leaf satisfies `f` (the slot's first leaf is [`BoundLeaf::EMPTY`] when it has none,
    /// which no test holds on).
    #[inline(always)]
    pub(crate) fn any(&self, mut f: impl FnMut(&BoundLeaf<'b>) -> bool) -> bool {
        f(&self.first) || (!self.rest.is_empty() && any_of(self.rest, f))
    }
}

/// Some leaf of `rest` satisfies `f`: the leaves after a slot's first, kept out of line so that
/// a test inlined into the executor's loop carries only its one-leaf case.
#[inline(never)]
fn any_of<'b>(rest: &[BoundLeaf<'b>], f: impl FnMut(&BoundLeaf<'b>) -> bool) -> bool {
    rest.iter().any(f)
}

/// The leaf of a scalar JSON node (`None` for arrays and objects), not looked up in any
/// dictionary.
#[inline]
pub(crate) fn node_leaf<'b>(node: &json::Node<'b>) -> Option<BoundLeaf<'b>> {
    Some(match *node {
        json::Node::Null => BoundLeaf::plain(LeafKind::Null),
        json::Node::Bool(true) => BoundLeaf::plain(LeafKind::True),
        json::Node::Bool(false) => BoundLeaf::plain(LeafKind::False),
        json::Node::Number(text) => BoundLeaf::num(text, number_value(text)),
        json::Node::String(s) => BoundLeaf::raw_str(s),
        json::Node::Array(_) | json::Node::Object(_) => return None,
    })
}

/// The binary64 value of a JSON number's text (infinite beyond the range, as Rust's parser
/// rounds; NaN only for text that is not a number).
#[inline]
pub(crate) fn number_value(text: &str) -> f64 {
    // Most numbers are short: integers and plain decimals such as `149.5`.
    if let Some(x) = short_decimal(text) {
        return x;
    }
    // Other exact binary64 values read without the general parser (the sign of `-0` kept).
    match crate::number::exact_f64(text) {
        Some(x) if x == 0.0 && text.starts_with('-') => -0.0,
        Some(x) => x,
        None => text.parse::<f64>().unwrap_or(f64::NAN),
    }
}

/// Powers of ten up to 10^15, each exactly a binary64.
const TEN_POWERS: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The binary64 value of `text` when it is `-`, then digits with at most one `.` among them,
/// at most 15 digits in all (at least one), else `None`. The digits read as an integer `m` below
/// 10^15 and the text's value is `m / 10^k` (`k` the digits after the point): `m` and `10^k`
/// are exact binary64 values and one IEEE division rounds their quotient correctly, so the
/// result is the general parser's (which rounds correctly too), `-0` included. One pass, no
/// division of integers: cheaper than [`crate::number::exact_f64`] for the numbers messages
/// mostly carry.
#[inline]
fn short_decimal(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut m: u64 = 0;
    let mut count = 0usize;
    let mut point: Option<usize> = None;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(b - b'0');
                count += 1;
            }
            b'.' if point.is_none() => point = Some(count),
            _ => return None,
        }
    }
    if count == 0 || count > 15 {
        return None;
    }
    let places = point.map_or(0, |p| count - p);
    let magnitude = m as f64 / TEN_POWERS.get(places).copied()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// `v`'s memory as an empty vector of another lifetime: collecting an emptied vector's iterator
/// reuses its buffer (the standard library collects in place when the layouts match), so the
/// scratch keeps its capacity from one message to the next.
pub(crate) fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

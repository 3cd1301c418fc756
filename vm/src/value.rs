//! Typed leaf values of a message, owned.
//!
//! Every dialect's message is reduced to leaves: strings, numbers (kept with their original text,
//! since some dialects compare the text and others the number), booleans and null. Which leaves a
//! key yields, and the [`Shape`] of what the key named, is decided by binding (`crate::bind`),
//! whose leaves borrow the message ([`crate::bind::BoundLeaf`]); a [`Leaf`] is an owned copy of
//! one, for displays and explanations.

use std::fmt;

/// The text of an owned string leaf (or of a number leaf): an owned string that reads as `&str`.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(String);

impl Text {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(s.to_owned())
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(s)
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Text {
        Text(s.into_string())
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A number as it appeared in the message: its original text and its binary64 value.
#[derive(Debug, Clone, PartialEq)]
pub struct Num {
    text: Text,
    value: f64,
}

impl Num {
    /// A number from its JSON text; `None` when the text is not a finite JSON number.
    pub fn from_text(text: &str) -> Option<Num> {
        let value = crate::number::parse_json_number(text)?;
        Some(Num {
            text: text.into(),
            value,
        })
    }

    /// A number from its text and an already-known value (the caller vouches they agree).
    pub fn new(text: impl Into<Text>, value: f64) -> Num {
        Num {
            text: text.into(),
            value,
        }
    }

    /// The original text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The binary64 value.
    pub fn value(&self) -> f64 {
        self.value
    }
}

/// One leaf value.
#[derive(Debug, Clone, PartialEq)]
pub enum Leaf {
    /// A string.
    Str(Text),
    /// A number.
    Num(Num),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

impl Leaf {
    /// The leaf's type as a bit of a [`LeafTypes`] mask.
    pub fn leaf_type(&self) -> LeafTypes {
        match self {
            Leaf::Str(_) => LeafTypes::STR,
            Leaf::Num(_) => LeafTypes::NUM,
            Leaf::Bool(_) => LeafTypes::BOOL,
            Leaf::Null => LeafTypes::NULL,
        }
    }
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Leaf::Str(s) => write!(f, "{}", crate::json::Quoted(s)),
            Leaf::Num(n) => f.write_str(n.text()),
            Leaf::Bool(b) => write!(f, "{b}"),
            Leaf::Null => f.write_str("null"),
        }
    }
}

/// A set of leaf types (a bit mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeafTypes(pub u8);

impl LeafTypes {
    /// Strings.
    pub const STR: LeafTypes = LeafTypes(1);
    /// Numbers.
    pub const NUM: LeafTypes = LeafTypes(2);
    /// Booleans.
    pub const BOOL: LeafTypes = LeafTypes(4);
    /// Null.
    pub const NULL: LeafTypes = LeafTypes(8);
    /// Every type.
    pub const ALL: LeafTypes = LeafTypes(15);

    /// Whether `self` includes every type of `other`.
    pub fn contains(self, other: LeafTypes) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    /// The union.
    pub fn union(self, other: LeafTypes) -> LeafTypes {
        LeafTypes(self.0 | other.0)
    }
}

impl fmt::Display for LeafTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [(1, "str"), (2, "num"), (4, "bool"), (8, "null")];
        write_mask(f, self.0, &names)
    }
}

/// What a key named in the message, before looking at leaves.
///
/// `Absent` and `Null` are distinct on purpose: Event Grid's null operators and SNS's `null`
/// literal see the difference; the dialects that don't, lower both the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Shape {
    /// Nothing there (undefined, missing attribute or header).
    Absent = 0,
    /// JSON `null`.
    Null = 1,
    /// One scalar value (string, number, bool).
    Scalar = 2,
    /// An array (its scalar elements are the leaves).
    Array = 3,
    /// A JSON object (no leaves).
    Object = 4,
}

/// A set of [`Shape`]s (a bit mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shapes(pub u8);

impl Shapes {
    /// Absent.
    pub const ABSENT: Shapes = Shapes(1);
    /// Null.
    pub const NULL: Shapes = Shapes(2);
    /// One scalar.
    pub const SCALAR: Shapes = Shapes(4);
    /// An array.
    pub const ARRAY: Shapes = Shapes(8);
    /// An object.
    pub const OBJECT: Shapes = Shapes(16);
    /// Every shape but absent: "the key is present".
    pub const PRESENT: Shapes = Shapes(2 | 4 | 8 | 16);
    /// Every shape.
    pub const ALL: Shapes = Shapes(31);

    /// Whether the set holds `shape`.
    pub fn has(self, shape: Shape) -> bool {
        self.0 & (1 << shape as u8) != 0
    }

    /// The union.
    pub fn union(self, other: Shapes) -> Shapes {
        Shapes(self.0 | other.0)
    }

    /// The complement within [`Shapes::ALL`].
    pub fn complement(self) -> Shapes {
        Shapes(!self.0 & Shapes::ALL.0)
    }
}

impl fmt::Display for Shapes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Shapes::PRESENT {
            return f.write_str("present");
        }
        let names = [
            (1, "absent"),
            (2, "null"),
            (4, "scalar"),
            (8, "array"),
            (16, "object"),
        ];
        write_mask(f, self.0, &names)
    }
}

/// Writes the names of the bits set in `mask` joined by `|`, or `none`.
fn write_mask(f: &mut fmt::Formatter<'_>, mask: u8, names: &[(u8, &str)]) -> fmt::Result {
    let mut first = true;
    for &(bit, name) in names {
        if mask & bit != 0 {
            if !first {
                f.write_str("|")?;
            }
            f.write_str(name)?;
            first = false;
        }
    }
    if first {
        f.write_str("none")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_mask_membership_and_complement() {
        assert!(Shapes::PRESENT.has(Shape::Scalar));
        assert!(!Shapes::PRESENT.has(Shape::Absent));
        assert_eq!(Shapes::PRESENT.complement(), Shapes::ABSENT);
        assert_eq!(
            Shapes::ABSENT.union(Shapes::NULL).to_string(),
            "absent|null"
        );
        assert_eq!(Shapes::PRESENT.to_string(), "present");
    }

    #[test]
    fn leaf_types_and_display() {
        assert_eq!(Leaf::Null.leaf_type(), LeafTypes::NULL);
        assert!(LeafTypes::ALL.contains(LeafTypes::BOOL));
        assert!(!LeafTypes::STR.contains(LeafTypes(0)));
        assert_eq!(Leaf::Str("a\"b".into()).to_string(), r#""a\"b""#);
        assert_eq!(LeafTypes::STR.union(LeafTypes::NUM).to_string(), "str|num");
    }
}

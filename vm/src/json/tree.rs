//! The borrowed tree: [`ValueRef`], held in an [`Arena`] (what a front end reads a policy into
//! when it keeps nothing of the tree itself).

use super::error::Error;
use super::read::{Event, Reader, Str};
use super::value::{
    Duplicates, MAX_DEPTH_CEILING, Map, ParseOptions, Value, too_deep, write_json_array,
    write_json_object, write_json_string,
};
use crate::number::Decimal;
use ahash::AHashMap;
use bumpalo::Bump;
use bumpalo::collections::Vec as BVec;
use std::cell::RefCell;
use std::fmt;

/// A JSON value as a borrowed tree: what [`Value`] holds, with strings and numbers borrowed from
/// the text they were read from (or from the [`Value`] they were taken from), and arrays and
/// objects held in an [`Arena`]. It is `Copy`; dropping it frees nothing (the arena does, when it
/// is reset or dropped).
///
/// ```
/// use filtervm_vm::json::{Arena, ParseOptions, ValueRef};
/// let arena = Arena::new();
/// let text = r#"{"a": ["x\u0041", 1.50], "b": null}"#;
/// let v = arena.parse_str(text, &ParseOptions::default()).unwrap();
/// let ValueRef::Object(members) = v else { panic!() };
/// assert_eq!(members.len(), 2);
/// assert_eq!(v.get("a").and_then(|a| a.as_array()).map(<[_]>::len), Some(2));
/// // The string without an escape is borrowed from `text`; the other is decoded into the arena.
/// let ValueRef::Array([ValueRef::String(s), ValueRef::Number(n)]) = members[0].1 else { panic!() };
/// assert_eq!((*s, n.as_str(), n.as_f64()), ("xA", "1.50", Some(1.5)));
/// assert!(v.get("b").is_some_and(|b| b.is_null()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueRef<'a> {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number with its exact text.
    Number(NumberRef<'a>),
    /// A string (escapes decoded).
    String(&'a str),
    /// An array.
    Array(&'a [ValueRef<'a>]),
    /// An object's members in document order: a repeated name is resolved as
    /// [`ParseOptions::duplicates`] says, as [`Map`] resolves it, but not remembered.
    Object(&'a [(&'a str, ValueRef<'a>)]),
}

/// A borrowed JSON number: its exact text, as [`Number`](super::Number) keeps it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NumberRef<'a>(&'a str);

impl<'a> NumberRef<'a> {
    /// The exact text.
    pub fn as_str(&self) -> &'a str {
        self.0
    }

    /// The value rounded to the nearest binary64; `None` when that is not finite (`1e400`), as
    /// [`Number::as_f64`](super::Number::as_f64).
    pub fn as_f64(&self) -> Option<f64> {
        crate::number::parse_json_number(self.0)
    }

    /// The exact decimal value, as [`Number::to_decimal`](super::Number::to_decimal).
    pub fn to_decimal(&self) -> Option<Decimal> {
        Decimal::parse(self.0)
    }
}

impl fmt::Display for NumberRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for NumberRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Display for ValueRef<'_> {
    /// Compact JSON, as [`Value`]'s `Display` writes the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueRef::Null => f.write_str("null"),
            ValueRef::Bool(b) => write!(f, "{b}"),
            ValueRef::Number(n) => f.write_str(n.as_str()),
            ValueRef::String(s) => write_json_string(f, s),
            ValueRef::Array(items) => write_json_array(f, items.iter()),
            ValueRef::Object(members) => write_json_object(f, members.iter().map(|(k, v)| (*k, v))),
        }
    }
}

impl<'a> ValueRef<'a> {
    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, ValueRef::Null)
    }

    /// The string, if the value is one.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            ValueRef::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if the value is an array.
    pub fn as_array(&self) -> Option<&'a [ValueRef<'a>]> {
        match self {
            ValueRef::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The members, if the value is an object.
    pub fn as_object(&self) -> Option<&'a [(&'a str, ValueRef<'a>)]> {
        match self {
            ValueRef::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The first member called `name`, if the value is an object (a linear scan).
    pub fn get(&self, name: &str) -> Option<ValueRef<'a>> {
        self.as_object()?
            .iter()
            .find(|(k, _)| *k == name)
            .map(|&(_, v)| v)
    }
}

/// Where [`ValueRef`] trees live: a `bumpalo` arena. Reading a tree into it allocates from the
/// arena only (after its first use, a reset arena has the room already), except for an object
/// of more than 16 members, which is indexed by a hash map while it is read so that reading
/// stays linear.
#[derive(Default)]
pub struct Arena {
    bump: Bump,
}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("allocated_bytes", &self.bump.allocated_bytes())
            .finish()
    }
}

/// The memory a reset arena keeps for its next tree; above it, resetting frees the arena's
/// memory (the tree of a 256 KiB policy can take several megabytes, which a thread's arena should
/// not hold on to).
const KEEP_BYTES: usize = 64 * 1024;

/// A container being read: where its elements (or members) start on the scratch stacks, and for
/// an object, the offset of its last member's name (for the error of a repeated name). Whether it
/// is an object is the reader's to know, and its index, once it is large, is kept apart (see
/// [`Arena::parse_str`]): an open container is two words.
#[derive(Clone, Copy)]
struct Frame {
    start: usize,
    at: usize,
}

/// The members an object holds before it is indexed by name, as [`Map`] does.
const INDEX_FROM: usize = 16;

thread_local! {
    static LOCAL: RefCell<Arena> = RefCell::new(Arena::new());
}

impl Arena {
    /// An empty arena (it allocates when a tree is first read into it).
    pub fn new() -> Arena {
        Arena::default()
    }

    /// Frees every tree read into the arena, keeping its memory for the next (up to 64 KiB).
    pub fn reset(&mut self) {
        if self.bump.allocated_bytes() > KEEP_BYTES {
            self.bump = Bump::new();
        } else {
            self.bump.reset();
        }
    }

    /// Calls `f` with this thread's arena, reset when `f` returns: a tree read in `f` costs no
    /// allocation once the thread has read one as large. A call made inside `f` gets an arena of
    /// its own.
    pub fn with_local<R>(f: impl FnOnce(&Arena) -> R) -> R {
        // Taken out of its cell for the call (an empty arena, which has allocated nothing,
        // stays there for a call inside `f`), and put back reset.
        let mut arena = LOCAL.try_with(RefCell::take).unwrap_or_default();
        let out = f(&arena);
        arena.reset();
        // After the thread's locals are gone the arena is just dropped.
        let _ = LOCAL.try_with(|cell| cell.replace(arena));
        out
    }

    /// `value` as a borrowed tree: its strings and numbers borrowed, its arrays and objects
    /// copied into the arena (recursively, as deep as `value` is).
    pub fn value<'a>(&'a self, value: &'a Value) -> ValueRef<'a> {
        match value {
            Value::Null => ValueRef::Null,
            Value::Bool(b) => ValueRef::Bool(*b),
            Value::Number(n) => ValueRef::Number(NumberRef(n.as_str())),
            Value::String(s) => ValueRef::String(s),
            Value::Array(items) => ValueRef::Array(
                self.bump
                    .alloc_slice_fill_iter(items.iter().map(|item| self.value(item))),
            ),
            Value::Object(map) => ValueRef::Object(self.members(map)),
        }
    }

    fn members<'a>(&'a self, map: &'a Map) -> &'a [(&'a str, ValueRef<'a>)] {
        self.bump
            .alloc_slice_fill_iter(map.iter().map(|(k, v)| (k.as_str(), self.value(v))))
    }

    /// Reads policy text into a tree: the same tree as
    /// [`parse_str_with`](super::parse_str_with) (a repeated name not remembered) and the same
    /// errors. Strings without escapes and numbers are borrowed from `text`; escaped strings are
    /// decoded into the arena. Linear in the input; never recurses.
    pub fn parse_str<'a>(
        &'a self,
        text: &'a str,
        options: &ParseOptions,
    ) -> Result<ValueRef<'a>, Error> {
        let max_depth = options.max_depth.min(MAX_DEPTH_CEILING);
        let mut reader = Reader::new(text.as_bytes(), options.lone_surrogates);
        let mut frames: BVec<'a, Frame> = BVec::with_capacity_in(8, &self.bump);
        let mut items: BVec<'a, ValueRef<'a>> = BVec::with_capacity_in(16, &self.bump);
        // A member is pushed when its name is read, with `null` standing for its value until the
        // value is complete: the members of the objects inside that value go above it and are
        // gone by then, so the member being read is always the top one of its object's.
        let mut members: BVec<'a, (&'a str, ValueRef<'a>)> = BVec::with_capacity_in(16, &self.bump);
        // The indexes of the open objects of more than 16 members, innermost last, each with
        // the number of frames open when it is the innermost's (no object has one in most
        // trees, so the loop only sees that this is empty).
        let mut indexes: Vec<(usize, AHashMap<&'a str, usize>)> = Vec::new();
        let mut decoded = String::new();
        let mut root = ValueRef::Null;
        loop {
            let value = match reader.next()? {
                Event::End => return Ok(root),
                Event::ObjectStart => {
                    if frames.len() >= max_depth {
                        return Err(too_deep(&reader, max_depth));
                    }
                    frames.push(Frame {
                        start: members.len(),
                        at: 0,
                    });
                    continue;
                }
                Event::ArrayStart => {
                    if frames.len() >= max_depth {
                        return Err(too_deep(&reader, max_depth));
                    }
                    frames.push(Frame {
                        start: items.len(),
                        at: 0,
                    });
                    continue;
                }
                Event::Name(name) => {
                    let (name, at) = self.text_of(name, text, &mut decoded);
                    if let Some(frame) = frames.last_mut() {
                        frame.at = at;
                    }
                    members.push((name, ValueRef::Null));
                    continue;
                }
                Event::ObjectEnd => {
                    let depth = frames.len();
                    let start = frames.pop().map_or(0, |frame| frame.start);
                    if indexes.last().is_some_and(|&(d, _)| d == depth) {
                        indexes.pop();
                    }
                    let value = ValueRef::Object(
                        self.bump
                            .alloc_slice_copy(members.get(start..).unwrap_or_default()),
                    );
                    members.truncate(start);
                    value
                }
                Event::ArrayEnd => {
                    let start = frames.pop().map_or(0, |frame| frame.start);
                    let value = ValueRef::Array(
                        self.bump
                            .alloc_slice_copy(items.get(start..).unwrap_or_default()),
                    );
                    items.truncate(start);
                    value
                }
                Event::String(s) => ValueRef::String(self.text_of(s, text, &mut decoded).0),
                Event::Number(n) => ValueRef::Number(NumberRef(
                    text.get(n.start..n.start.saturating_add(n.bytes.len()))
                        .unwrap_or_else(|| n.text()),
                )),
                Event::Bool(b) => ValueRef::Bool(b),
                Event::Null => ValueRef::Null,
            };
            let Some(frame) = frames.last() else {
                root = value;
                continue;
            };
            if !reader.in_object() {
                items.push(value);
                continue;
            }
            // The member being read is the top one; one search for its name among the others:
            // a new name (the usual case) takes its value in place.
            let Some(((name, _), open)) = members
                .get(frame.start..)
                .and_then(<[_]>::split_last)
                .map(|(&last, open)| (last, open))
            else {
                continue;
            };
            let index = indexes
                .last_mut()
                .filter(|(d, _)| *d == frames.len())
                .map(|(_, index)| index);
            let found = match &index {
                Some(index) => index.get(name).copied(),
                None => open.iter().position(|(k, _)| *k == name),
            };
            let Some(i) = found else {
                let i = open.len();
                if let Some((_, slot)) = members.last_mut() {
                    *slot = value;
                }
                match index {
                    Some(index) => {
                        index.insert(name, i);
                    }
                    None if i + 1 > INDEX_FROM => {
                        // A name held twice (`Duplicates::KeepAll`) is found at its first
                        // position.
                        let open = members.get(frame.start..).unwrap_or_default();
                        let mut index = AHashMap::with_capacity(open.len());
                        for (i, (k, _)) in open.iter().enumerate() {
                            index.entry(*k).or_insert(i);
                        }
                        indexes.push((frames.len(), index));
                    }
                    None => {}
                }
                continue;
            };
            match options.duplicates {
                Duplicates::Reject => return Err(Error::duplicate(frame.at, name)),
                Duplicates::KeepAll => {
                    if let Some((_, slot)) = members.last_mut() {
                        *slot = value;
                    }
                }
                Duplicates::KeepLast => {
                    members.pop();
                    if let Some((_, slot)) = members.get_mut(frame.start.saturating_add(i)) {
                        *slot = value;
                    }
                }
            }
        }
    }

    /// A string's value with its offset: sliced out of `text` when it has no escapes, else
    /// decoded (through `decoded`, reused) into the arena ([`Arena::decoded`], out of line).
    #[inline(always)]
    fn text_of<'a>(&'a self, s: Str<'a>, text: &'a str, decoded: &mut String) -> (&'a str, usize) {
        if !s.escaped {
            let start = s.offset.wrapping_add(1);
            if let Some(t) = text.get(start..start.saturating_add(s.raw.len())) {
                return (t, s.offset);
            }
        }
        self.decoded(s, decoded)
    }

    /// [`Arena::text_of`] of a string with escapes.
    #[inline(never)]
    fn decoded<'a>(&'a self, s: Str<'a>, decoded: &mut String) -> (&'a str, usize) {
        decoded.clear();
        s.unescape_into(decoded);
        (self.bump.alloc_str(decoded), s.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_str_with;

    /// A text read into the arena gives the tree `parse_str_with` gives (as a borrowed tree) and
    /// the same errors, whatever the strings hold, however deep, large or repeated the objects,
    /// and whatever the options do with repeated names.
    #[test]
    fn reads_as_the_owned_tree_does() {
        let mut large = String::from("{");
        for i in 0..40 {
            // Every fifth name repeated, past the 16 members where an object is indexed.
            large.push_str(&format!("\"k{}\": {i}, ", i - i % 5 * (i % 2)));
        }
        large.push_str("\"k0\": \"last\"}");
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let texts = [
            r#"{"a": "x", "b\u00e9": "caf\u00e9 é ☃ 😀", "n": [-0, 1.50, 1e400, 2E-3]}"#,
            r#"{"a": 1, "b": {"a": 2, "a": [3]}, "a": "é", "c": "\"\\\/\b\f\n\r\t"}"#,
            r#"["ünïcödé", "", "\ud83d\ude00", {"": null, "é": true}]"#,
            r#"{"a": [], "b": {}, "c": [[], {}, [{}]], "d": false}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": [1, 2,]}"#,
            r#"{"a": "x" "b"}"#,
            "\"tab\there\"",
            "1.5e+3",
            "",
            " null ",
            &large,
            &deep(5),
            &deep(6),
        ];
        for duplicates in [
            Duplicates::KeepLast,
            Duplicates::Reject,
            Duplicates::KeepAll,
        ] {
            let options = ParseOptions {
                duplicates,
                max_depth: 5,
                ..ParseOptions::default()
            };
            for text in texts {
                let arena = Arena::new();
                let owned = parse_str_with(text, &options);
                let owned = owned.as_ref().map(|v| arena.value(v));
                let borrowed = arena.parse_str(text, &options);
                assert_eq!(owned, borrowed.as_ref().copied(), "{duplicates:?} {text}");
            }
        }
    }

    /// A borrowed tree writes the JSON text its owned value writes, and its numbers give the
    /// same decimals.
    #[test]
    fn writes_and_reads_numbers_as_the_owned_tree_does() {
        let text = r#"{"a": "x\"\\\n\u0001é", "b": [null, true, false, -0, 1.50, 1e400, 2E-3, 1e-99999999999999999999], "c": {}, "d": [[], {"e": [1]}]}"#;
        let options = ParseOptions::default();
        let owned = parse_str_with(text, &options).unwrap();
        let arena = Arena::new();
        let borrowed = arena.parse_str(text, &options).unwrap();
        assert_eq!(borrowed.to_string(), owned.to_string());
        assert!(owned.to_string().contains(r#""x\"\\\n\u0001é""#));
        let Value::Object(map) = &owned else { panic!() };
        let Some(Value::Array(numbers)) = map.get("b") else {
            panic!()
        };
        let refs = borrowed.get("b").and_then(|b| b.as_array()).unwrap();
        let mut compared = 0;
        for (n, r) in numbers.iter().zip(refs) {
            if let (Value::Number(n), ValueRef::Number(r)) = (n, r) {
                assert_eq!(n.to_decimal(), r.to_decimal(), "{n}");
                compared += 1;
            }
        }
        assert_eq!(compared, 5);
    }

    /// A string without escapes is the text's own; an escaped one is decoded into the arena.
    #[test]
    fn strings_borrow_the_text_unless_escaped() {
        let text = r#"["plain", "esc\u0061ped"]"#;
        let arena = Arena::new();
        let v = arena.parse_str(text, &ParseOptions::default()).unwrap();
        let items = v.as_array().unwrap();
        let plain = items[0].as_str().unwrap();
        assert!(text.as_bytes().as_ptr_range().contains(&plain.as_ptr()));
        let escaped = items[1].as_str().unwrap();
        assert_eq!(escaped, "escaped");
        assert!(!text.as_bytes().as_ptr_range().contains(&escaped.as_ptr()));
    }

    /// The thread's arena is reset after each use and keeps at most `KEEP_BYTES`; a call inside
    /// another gets an arena of its own, and both trees are intact.
    #[test]
    fn the_thread_arena_is_reset_and_reentrant() {
        let options = ParseOptions::default();
        let (outer, inner) = Arena::with_local(|arena| {
            let outer = arena.parse_str(r#"{"a": ["x\u0041"]}"#, &options).unwrap();
            let inner = Arena::with_local(|arena| {
                let v = arena.parse_str(r#"["y\u0042"]"#, &options).unwrap();
                format!("{v:?}")
            });
            (format!("{outer:?}"), inner)
        });
        assert_eq!(outer, r#"Object([("a", Array([String("xA")]))])"#);
        assert_eq!(inner, r#"Array([String("yB")])"#);
        let big = format!("[{}]", vec!["\"\\u0061\""; 40_000].join(","));
        let used = Arena::with_local(|arena| {
            arena.parse_str(&big, &options).unwrap();
            arena.bump.allocated_bytes()
        });
        assert!(used > KEEP_BYTES);
        let kept = LOCAL.with(|cell| cell.borrow().bump.allocated_bytes());
        assert!(kept <= KEEP_BYTES, "{kept}");
    }
}

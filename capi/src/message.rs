//! A C message read where it lies: the caller's byte strings are the values filters read
//! (through the facade's borrowed `Attributes` and `Headers` traits), checked once for NULL and
//! length, never copied.
#![expect(
    unsafe_code,
    reason = "a C ABI: slices are made of the caller's pointers, each checked for NULL and its \
              length bounded before the first slice is made of it"
)]

use crate::ffi::{
    FVM_PART_ATTRIBUTES, FVM_PART_BODY, FVM_PART_HEADERS, FVM_PART_JSON, FvmAttribute, FvmHeader,
    FvmMessage,
};
use filtervm_bindings::filtervm::{
    AttributeType, Attributes, HeaderValues, Headers, Message, MessageError, MessagePart, Text,
};
use filtervm_bindings::{Failure, Input, Parts, attribute_type, unknown_attribute_type};
use std::ffi::{CStr, c_char};

/// Every `FVM_PART_*` bit.
const ALL_PARTS: u32 = FVM_PART_JSON | FVM_PART_BODY | FVM_PART_ATTRIBUTES | FVM_PART_HEADERS;

/// `len` bytes at `ptr`, which may be NULL when `len` is 0. Inline, its errors made out of
/// line.
///
/// # Safety
/// Unless NULL, `ptr` points to `len` readable bytes that outlive `'a`.
#[inline(always)]
pub(crate) unsafe fn bytes<'a>(
    ptr: *const u8,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() || len > isize::MAX as usize {
        return Err(bytes_error(ptr.is_null(), len, what));
    }
    // SAFETY: non-NULL, at most isize::MAX, and the caller promises `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The error of [`bytes`]: a NULL pointer with a length, or a length no memory holds.
#[cold]
#[inline(never)]
fn bytes_error(null: bool, len: usize, what: &str) -> Failure {
    if null {
        Failure::argument(format!("{what} is NULL with a length of {len}"))
    } else {
        Failure::argument(format!("{what} has an impossible length"))
    }
}

/// `count` items at `ptr` (NULL allowed when `count` is 0). Inline, its errors made out of line:
/// every call of a message's attributes or headers passes here.
///
/// # Safety
/// Unless NULL, `ptr` points to `count` initialized items that outlive `'a`.
#[inline(always)]
unsafe fn items<'a, T>(ptr: *const T, count: usize, what: &str) -> Result<&'a [T], Failure> {
    if count == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() || count > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(items_error(ptr.is_null(), count, what));
    }
    // SAFETY: non-NULL, a size within isize::MAX, and the caller promises `count` items.
    Ok(unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// The error of [`items`]: a NULL pointer with a count, or a count no memory holds.
#[cold]
#[inline(never)]
fn items_error(null: bool, count: usize, what: &str) -> Failure {
    if null {
        Failure::argument(format!("{what} is NULL with a count of {count}"))
    } else {
        Failure::argument(format!("{what} has an impossible count"))
    }
}

/// The bytes of a byte string already checked by [`readable`] (or [`bytes`]).
///
/// # Safety
/// `readable(ptr, len)` held for this pointer and length within the current call.
#[inline(always)]
unsafe fn checked<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    // A NULL pointer comes with a length of 0: a dangling, aligned pointer stands for it.
    let ptr = if ptr.is_null() {
        std::ptr::NonNull::<u8>::dangling().as_ptr().cast_const()
    } else {
        ptr
    };
    // SAFETY: non-NULL, bounded, and valid for the call (the caller's promise on
    // `fvm_message`).
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// A byte string of the caller's, read as text where it lies: ASCII (nearly every value a
/// broker sends) is UTF-8 as it is, told by one word-at-a-time test (`<[u8]>::is_ascii`); any
/// other bytes are checked as UTF-8 in full. The same answers as `[u8]`'s [`Text`], cheaper for
/// the short values filters read.
#[repr(transparent)]
pub(crate) struct CText([u8]);

impl CText {
    /// `bytes` as text.
    #[inline(always)]
    fn new(bytes: &[u8]) -> &CText {
        // SAFETY: `CText` is a transparent wrapper of `[u8]`: the same layout and metadata.
        unsafe { &*(std::ptr::from_ref::<[u8]>(bytes) as *const CText) }
    }
}

impl Text for CText {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        if self.0.is_ascii() {
            // SAFETY: ASCII bytes are UTF-8.
            Ok(unsafe { std::str::from_utf8_unchecked(&self.0) })
        } else {
            std::str::from_utf8(&self.0).map_err(|_| &self.0)
        }
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A message's typed attributes as C holds them: each `fvm_attribute`'s name and value read
/// where they lie. Filters that read a few named attributes look them up ([`Attributes::named`]):
/// the attributes they do not name are checked by [`read_message`] and never read again.
pub(crate) struct CAttributes<'a> {
    /// Every attribute, each checked by [`read_message`] (its pointers, and its type name is a
    /// type unless the part is unreadable).
    attributes: &'a [FvmAttribute],
    /// Two type-name pointers of the message and their types (the caller names types with a
    /// few string constants).
    known: Known,
}

/// Type-name pointers seen in a message, with their types: the newest first.
type Known = [(*const c_char, AttributeType); 2];

impl CAttributes<'_> {
    /// The type of `a` (checked by [`read_message`]).
    #[inline(always)]
    fn data_type(&self, a: &FvmAttribute) -> AttributeType {
        match self.known {
            [(p, t), _] | [_, (p, t)] if p == a.data_type => t,
            // SAFETY: checked non-NULL by `read_message`; NUL-terminated (the caller's
            // promise). A type that is no type made the part unreadable: it is never bound.
            _ => unsafe { type_of(a.data_type) }.unwrap_or(AttributeType::Binary),
        }
    }
}

impl Attributes for CAttributes<'_> {
    type Name = [u8];
    type Value = CText;

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&[u8], AttributeType, &CText)> {
        self.attributes.iter().map(|a| {
            // SAFETY: every attribute's name and value were checked by `read_message`, which
            // made this value and does not let it outlive the call.
            unsafe {
                (
                    checked(a.name, a.name_len),
                    self.data_type(a),
                    CText::new(checked(a.value, a.value_len)),
                )
            }
        })
    }

    /// A lookup passes each attribute whose name is not as long as the one looked up after one
    /// test: a few lookups cost less than one walk of every name, type and value.
    const LOOKUP_NAMES: usize = 4;

    #[inline]
    fn named(&self, name: &[u8]) -> Option<(AttributeType, &CText)> {
        // Of several attributes with one name the last counts.
        let a = self.attributes.iter().rev().find(|a| {
            // SAFETY: checked by `read_message`.
            a.name_len == name.len() && unsafe { checked(a.name, a.name_len) } == name
        })?;
        // SAFETY: checked by `read_message`.
        let value = unsafe { CText::new(checked(a.value, a.value_len)) };
        Some((self.data_type(a), value))
    }
}

/// One header value as C holds it (one `fvm_header`; a name given several times is one header
/// with several values).
#[repr(transparent)]
pub(crate) struct CHeader(FvmHeader);

impl Text for CHeader {
    #[inline]
    fn text(&self) -> Result<&str, &[u8]> {
        CText::new(self.bytes()).text()
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        // SAFETY: a `CHeader` exists only within a call, after `read_message`, after its value was checked.
        unsafe { checked(self.0.value, self.0.value_len) }
    }
}

impl HeaderValues for CHeader {
    type Value = CHeader;

    #[inline]
    fn values(&self) -> &[CHeader] {
        std::slice::from_ref(self)
    }
}

/// A message's headers as C holds them.
pub(crate) struct CHeaders<'a>(&'a [CHeader]);

impl Headers for CHeaders<'_> {
    type Name = [u8];
    type Values = CHeader;

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&[u8], &CHeader)> {
        self.0.iter().map(|h| {
            // SAFETY: checked by `read_message`, like the value (`CHeader::bytes`).
            (unsafe { checked(h.0.name, h.0.name_len) }, h)
        })
    }
}

/// Whether [`bytes`] accepts `ptr` and `len` (the check made on each attribute, branch-free).
#[inline(always)]
fn readable(ptr: *const u8, len: usize) -> bool {
    !(ptr.is_null() & (len != 0)) & (len <= isize::MAX as usize)
}

/// The error of an attribute [`readable`] refused (or whose type is NULL).
///
/// # Safety
/// The attribute's pointers are NULL or valid for their lengths (the caller's promise).
#[cold]
unsafe fn attribute_error(a: &FvmAttribute) -> Failure {
    // SAFETY: the caller's promise; `bytes` reports what is wrong.
    let checks = unsafe {
        (
            bytes(a.name, a.name_len, "an attribute name"),
            bytes(a.value, a.value_len, "an attribute value"),
        )
    };
    match checks {
        (Err(e), _) | (_, Err(e)) => e,
        _ => Failure::argument("an attribute type is NULL"),
    }
}

/// The attribute type a NUL-terminated type name names (`None`: not a type). `String`,
/// `Number` and `Binary` are told by their first byte and compared byte by byte, each byte read
/// only after the ones before it matched (so never past the NUL); any other name is measured and
/// read whole.
///
/// # Safety
/// `ptr` is a NUL-terminated string.
#[inline]
unsafe fn type_of(ptr: *const c_char) -> Option<AttributeType> {
    let p = ptr.cast::<u8>();
    // SAFETY: the first byte of a NUL-terminated string is readable.
    let (rest, data_type) = match unsafe { *p } {
        b'S' => (b"tring", AttributeType::String),
        b'N' => (b"umber", AttributeType::Number),
        b'B' => (b"inary", AttributeType::Binary),
        // SAFETY: NUL-terminated (the caller's promise).
        _ => return unsafe { slow_type_of(ptr) },
    };
    // SAFETY: each byte is read after the ones before it matched non-NUL bytes (`&&` stops at
    // the first mismatch): the string is at least that long.
    let same = unsafe {
        *p.add(1) == rest[0]
            && *p.add(2) == rest[1]
            && *p.add(3) == rest[2]
            && *p.add(4) == rest[3]
            && *p.add(5) == rest[4]
            && *p.add(6) == 0
    };
    if same {
        Some(data_type)
    } else {
        // SAFETY: NUL-terminated (the caller's promise).
        unsafe { slow_type_of(ptr) }
    }
}

/// [`type_of`] of any name: measured, then read whole.
///
/// # Safety
/// `ptr` is a NUL-terminated string.
#[cold]
unsafe fn slow_type_of(ptr: *const c_char) -> Option<AttributeType> {
    // SAFETY: NUL-terminated (the caller's promise).
    attribute_type(unsafe { CStr::from_ptr(ptr) }.to_bytes())
}

/// The type of an attribute whose type-name pointer is not in `known`: learned into `known`, or
/// an unknown type name noted in `unreadable` (the first one). `true` when the pointer is NULL.
/// Out of line: the walk that calls it keeps its registers for the attributes.
///
/// # Safety
/// The attribute's pointers are NULL or valid for their lengths, its type NULL or
/// NUL-terminated (the caller's promise on `fvm_message`).
#[inline(never)]
unsafe fn learn_type(
    a: &FvmAttribute,
    known: &mut Known,
    unreadable: &mut Option<(MessagePart, MessageError)>,
) -> bool {
    let t = a.data_type;
    if t.is_null() {
        return true;
    }
    // SAFETY: non-NULL and NUL-terminated (the caller's promise).
    match unsafe { type_of(t) } {
        Some(data_type) => *known = [(t, data_type), known[0]],
        // A name that cannot be read is the error (reported by the caller).
        None if unreadable.is_none() && readable(a.name, a.name_len) => {
            // SAFETY: checked; the caller's promise (NULL or valid for their lengths), and
            // NUL-terminated.
            let (name, type_name) = unsafe { (checked(a.name, a.name_len), CStr::from_ptr(t)) };
            *unreadable = Some((
                MessagePart::Attributes,
                unknown_attribute_type(name, type_name.to_bytes()),
            ));
        }
        None => {}
    }
    false
}

/// Checks every attribute of `attributes` — each name's and value's pointer NULL only with a
/// length of 0 and every length at most `isize::MAX`, each type name non-NULL — and learns each
/// type-name pointer's type into `known` (an unknown type name noted in `unreadable`, the first
/// one). `Err` with the first attribute that cannot be read.
///
/// # Safety
/// Every attribute's pointers are NULL or valid for their lengths, its type NULL or
/// NUL-terminated (the caller's promise on `fvm_message`).
#[inline(always)]
unsafe fn check_attributes(
    attributes: &[FvmAttribute],
    known: &mut Known,
    unreadable: &mut Option<(MessagePart, MessageError)>,
) -> Result<(), Failure> {
    // SAFETY: the caller's promise.
    if unsafe { scan_attributes(attributes, known, unreadable) } {
        return Ok(());
    }
    // SAFETY: as above.
    match unsafe { first_unreadable(attributes) } {
        // SAFETY: as above.
        Some(a) => Err(unsafe { attribute_error(a) }),
        None => Ok(()),
    }
}

/// Every attribute's pointers checked, and each type-name pointer's type learned, as
/// [`check_attributes`] says: `true` when every one is readable for sure; `false` when one may
/// not be (checked again exactly by [`first_unreadable`]).
///
/// # Safety
/// As [`check_attributes`].
#[inline(always)]
unsafe fn scan_attributes(
    attributes: &[FvmAttribute],
    known: &mut Known,
    unreadable: &mut Option<(MessagePart, MessageError)>,
) -> bool {
    let (mut rest, mut suspects, mut null) = (attributes, 0usize, false);
    loop {
        let (scanned, more) = scan(rest, known[0].0, known[1].0);
        suspects |= more;
        let Some((a, after)) = rest.get(scanned..).and_then(<[FvmAttribute]>::split_first) else {
            break;
        };
        // SAFETY: the caller's promise on the attribute.
        null |= unsafe { learn_type(a, known, unreadable) };
        rest = after;
    }
    !null & (suspects == 0)
}

/// Scans `attributes` up to the first whose type-name pointer is neither `k0` nor `k1`: how many
/// it scanned, and whether any of them is suspect (non-zero).
///
/// A byte string is suspect when its length is above its pointer's low 63 bits: a NULL pointer
/// with a length, or a length beyond `isize::MAX`, always is (and a long string at a low address
/// sometimes, which the exact check then accepts). Counting the suspects costs two instructions
/// a string and no branch; the type-name pointer is compared with the two last seen. A leaf out
/// of line: its loop has the registers to itself and saves none.
#[inline(never)]
fn scan(attributes: &[FvmAttribute], k0: *const c_char, k1: *const c_char) -> (usize, usize) {
    const LOW: usize = isize::MAX as usize;
    let mut suspects = 0usize;
    let mut rest = attributes;
    while let [a, after @ ..] = rest {
        suspects = suspects
            .wrapping_add(usize::from(a.name_len > a.name.addr() & LOW))
            .wrapping_add(usize::from(a.value_len > a.value.addr() & LOW));
        if a.data_type == k0 {
            rest = after;
            continue;
        }
        if a.data_type != k1 {
            break;
        }
        rest = after;
    }
    (attributes.len() - rest.len(), suspects)
}

/// The first attribute of `attributes` that cannot be read: a pointer [`bytes`] refuses, or a
/// NULL type.
///
/// # Safety
/// As [`check_attributes`].
#[cold]
#[inline(never)]
unsafe fn first_unreadable(attributes: &[FvmAttribute]) -> Option<&FvmAttribute> {
    attributes.iter().find(|a| {
        !(readable(a.name, a.name_len) & readable(a.value, a.value_len)) || a.data_type.is_null()
    })
}

/// The error of `fvm_message.parts` bits that name no message: unknown bits, no bit, or a JSON
/// document with other parts.
#[cold]
#[inline(never)]
fn parts_error(parts: u32) -> Failure {
    if parts & !ALL_PARTS != 0 {
        Failure::argument(format!(
            "unknown bits in fvm_message.parts: {:#x}",
            parts & !ALL_PARTS
        ))
    } else if parts == 0 {
        Failure::argument(
            "fvm_message.parts names no part: set FVM_PART_JSON, _BODY, _ATTRIBUTES or _HEADERS",
        )
    } else {
        Failure::argument(
            "a message is one JSON document (FVM_PART_JSON) or its parts (FVM_PART_BODY, \
             _ATTRIBUTES, _HEADERS), not both",
        )
    }
}

/// The error of a NULL `fvm_message`.
#[cold]
#[inline(never)]
fn null_message() -> Failure {
    Failure::argument("the message is NULL")
}

/// A C message as [`read_message`] read it: one JSON document, or the parts the caller gave,
/// each checked.
#[derive(Clone, Copy)]
pub(crate) enum CMessage<'a> {
    /// `FVM_PART_JSON`.
    Document(&'a [u8]),
    /// The other parts.
    Parts {
        /// `FVM_PART_BODY`.
        body: Option<&'a [u8]>,
        /// `FVM_PART_ATTRIBUTES`.
        attributes: Option<&'a CAttributes<'a>>,
        /// `FVM_PART_HEADERS`.
        headers: Option<&'a CHeaders<'a>>,
        /// A part given but unreadable (an attribute's unknown type), and why.
        unreadable: Option<&'a (MessagePart, MessageError)>,
    },
}

impl<'a> CMessage<'a> {
    /// The facade's message, borrowing this one (as [`Input::message`] makes it).
    #[inline(always)]
    pub(crate) fn message(self) -> Message<'a, CAttributes<'a>, CHeaders<'a>> {
        match self {
            CMessage::Document(json) => Message::document(json),
            CMessage::Parts {
                body,
                attributes,
                headers,
                unreadable,
            } => {
                let message = Message::from_parts(body, attributes, headers);
                match unreadable {
                    Some((part, error)) => message.with_unreadable(*part, error),
                    None => message,
                }
            }
        }
    }

    /// The bindings' input of this message (the unreadable part's error copied).
    pub(crate) fn input(self) -> Input<'a, CAttributes<'a>, CHeaders<'a>> {
        match self {
            CMessage::Document(json) => Input::Document(json),
            CMessage::Parts {
                body,
                attributes,
                headers,
                unreadable,
            } => Input::Parts(Parts {
                body,
                attributes,
                headers,
                unreadable: unreadable.cloned(),
            }),
        }
    }
}

/// What [`read_message`] reads a message's parts into: the attributes and headers a
/// [`CMessage`] borrows, and the error of a part that cannot be read.
#[derive(Default)]
pub(crate) struct Read<'a> {
    attributes: Option<CAttributes<'a>>,
    headers: Option<CHeaders<'a>>,
    unreadable: Option<(MessagePart, MessageError)>,
}

/// Reads a C message — every pointer it holds for its `parts` checked, nothing copied — into
/// `read`. A JSON document is a message on its own: given with other parts it is an argument
/// error. An attribute of an unknown type makes the attributes unreadable for the filters that
/// read them (`INVALID_MESSAGE` at `/attributes/NAME/Type`); the other filters of a set still
/// judge the message. Inline, its errors made out of line: every matching call passes here.
///
/// # Safety
/// Unless NULL, `message` and every pointer it holds for its `parts` are valid as documented on
/// [`FvmMessage`] for `'a`.
#[inline(always)]
pub(crate) unsafe fn read_message<'a>(
    message: *const FvmMessage,
    read: &'a mut Read<'a>,
) -> Result<CMessage<'a>, Failure> {
    if message.is_null() {
        return Err(null_message());
    }
    // SAFETY: non-NULL; the caller promises a valid `fvm_message`.
    let m = unsafe { &*message };
    let bits = m.parts;
    // One test for a message given by its parts: some part, and no bit but theirs.
    if bits & !(FVM_PART_BODY | FVM_PART_ATTRIBUTES | FVM_PART_HEADERS) != 0 || bits == 0 {
        if bits != FVM_PART_JSON {
            return Err(parts_error(bits));
        }
        // SAFETY: the caller's promise for the JSON part.
        let json = unsafe { bytes(m.json, m.json_len, "fvm_message.json")? };
        return Ok(CMessage::Document(json));
    }
    let body = if bits & FVM_PART_BODY != 0 {
        // SAFETY: the caller's promise for the body part.
        Some(unsafe { bytes(m.body, m.body_len, "fvm_message.body")? })
    } else {
        None
    };
    if bits & FVM_PART_ATTRIBUTES != 0 {
        // SAFETY: the caller's promise for the attributes part.
        let attributes =
            unsafe { items(m.attributes, m.attribute_count, "fvm_message.attributes")? };
        // Callers name types with a few string constants: the type of a type-name pointer seen
        // before in this call is known (the caller's strings do not change during the call).
        // It starts with this crate's own names, so NULL is never known.
        let c = read.attributes.insert(CAttributes {
            attributes,
            known: [
                (c"String".as_ptr(), AttributeType::String),
                (c"Number".as_ptr(), AttributeType::Number),
            ],
        });
        // SAFETY: the caller's promise on each attribute.
        unsafe { check_attributes(attributes, &mut c.known, &mut read.unreadable)? };
    }
    if bits & FVM_PART_HEADERS != 0 {
        // SAFETY: the caller's promise for the headers part.
        let headers = unsafe { items(m.headers, m.header_count, "fvm_message.headers")? };
        for h in headers {
            if !(readable(h.name, h.name_len) & readable(h.value, h.value_len)) {
                // SAFETY: each header's pointers are NULL or valid (the caller's promise).
                unsafe {
                    bytes(h.name, h.name_len, "a header name")?;
                    bytes(h.value, h.value_len, "a header value")?;
                }
            }
        }
        // SAFETY: `CHeader` is a transparent wrapper of `FvmHeader`.
        read.headers = Some(CHeaders(unsafe {
            std::slice::from_raw_parts(headers.as_ptr().cast::<CHeader>(), headers.len())
        }));
    }
    Ok(CMessage::Parts {
        body,
        attributes: read.attributes.as_ref(),
        headers: read.headers.as_ref(),
        unreadable: read.unreadable.as_ref(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An attribute of a NUL-terminated type name and the given name and value pointers.
    fn attribute(name: (*const u8, usize), value: (*const u8, usize)) -> FvmAttribute {
        FvmAttribute {
            name: name.0,
            name_len: name.1,
            data_type: c"String".as_ptr(),
            value: value.0,
            value_len: value.1,
        }
    }

    /// The one-pass scan flags every attribute that cannot be read (a NULL pointer with a
    /// length, a length beyond `isize::MAX`), and one that can but whose length is above its
    /// address is only suspect: the exact check accepts it. Nothing here reads the bytes.
    #[test]
    fn the_scan_flags_every_unreadable_attribute_and_the_exact_check_decides() {
        let text = b"order.paid";
        let ok = (text.as_ptr(), text.len());
        let huge = isize::MAX as usize + 1;
        let low = (std::ptr::without_provenance::<u8>(16), 4096);
        let cases = [
            (attribute(ok, ok), false, None),
            (attribute((std::ptr::null(), 0), ok), false, None),
            (
                attribute((std::ptr::null(), 3), ok),
                true,
                Some("an attribute name is NULL with a length of 3"),
            ),
            (
                attribute(ok, (std::ptr::null(), 1)),
                true,
                Some("an attribute value is NULL with a length of 1"),
            ),
            (
                attribute((text.as_ptr(), huge), ok),
                true,
                Some("an attribute name has an impossible length"),
            ),
            (attribute(low, ok), true, None),
        ];
        for (a, suspect, error) in cases {
            let attributes = [attribute(ok, ok), a, attribute(ok, ok)];
            let (k0, k1) = (c"String".as_ptr(), c"Number".as_ptr());
            let (scanned, suspects) = scan(&attributes, k0, k1);
            assert_eq!((scanned, suspects != 0), (3, suspect), "{error:?}");
            let mut known: Known = [(k0, AttributeType::String), (k1, AttributeType::Number)];
            let mut unreadable = None;
            // SAFETY: no pointer is read: every type is a known one, and only the lengths and
            // addresses of names and values are checked.
            let checked = unsafe { check_attributes(&attributes, &mut known, &mut unreadable) };
            let message = checked.err().map(|f| f.details[0].message.clone());
            assert_eq!(message.as_deref(), error);
            assert!(unreadable.is_none());
        }
    }

    /// `CText` reads every byte string as `[u8]`'s `Text` does: ASCII and other UTF-8 as text,
    /// anything else as bytes (a lone continuation byte, a surrogate, a truncated sequence, an
    /// overlong form), at every length around the word size the ASCII test reads.
    #[test]
    fn c_text_reads_bytes_as_the_byte_string_text_does() {
        let mut cases: Vec<Vec<u8>> = [
            &b""[..],
            b"order.paid",
            "caf\u{e9}".as_bytes(),
            "\u{1f600} x".as_bytes(),
            b"\xff",
            b"abc\x80",
            b"\xed\xa0\x80",
            b"\xe2\x82",
            b"\xc0\xaf",
            b"\x7f\x00",
        ]
        .iter()
        .map(|b| b.to_vec())
        .collect();
        for n in 0..20 {
            let ascii = vec![b'a'; n];
            let mut high = ascii.clone();
            high.push(0x80);
            let mut utf8 = ascii.clone();
            utf8.extend_from_slice("\u{e9}".as_bytes());
            cases.extend([ascii, high, utf8]);
        }
        for case in &cases {
            let c = CText::new(case);
            assert_eq!(c.text(), case.as_slice().text(), "{case:?}");
            assert_eq!(c.bytes(), case.as_slice(), "{case:?}");
        }
    }
}

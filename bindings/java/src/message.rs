//! A message as `dev.filtervm.Message` sends it: its parts encoded once, when the message is
//! built, into one byte array (one JNI copy per call, however many attributes and headers), read
//! here into the adapter's [`Input`] borrowing that array — names and values are never copied.
//!
//! The encoding (`Message.encode` in Java writes it; all integers are little-endian `u32`):
//!
//! ```text
//! flags: u8                      1 = body, 2 = attributes, 4 = headers
//! [body]       len, bytes
//! [attributes] count, then per attribute: name (len, bytes), type (u8: 0 = a type name
//!              follows as len, bytes; 1 = String, 2 = Number, 3 = Binary, as the builder's
//!              typed methods state it), value (len, bytes; empty for Binary)
//! [headers]    count, then per header: name (len, bytes), value count, values (len, bytes)...
//! ```
//!
//! Type names (`Message.Builder.attribute(name, type, value)`) are read by the adapter's
//! [`attribute_type`] (the one table of type names): an unknown one makes the attributes unreadable for the filters that read them, as in the other
//! bindings ([`unknown_attribute_type`]).

use filtervm_bindings::filtervm::{AttributeType, MessageError, MessagePart};
use filtervm_bindings::{
    Failure, HeaderValue, Input, Parts, attribute_type, unknown_attribute_type,
};

/// One attribute as read from the encoding: `(name, type, value)` byte strings.
type JavaAttribute<'a> = (&'a [u8], AttributeType, &'a [u8]);
/// One header as read from the encoding: a name and its value or values.
type JavaHeader<'a> = (&'a [u8], HeaderValue<&'a [u8]>);
/// Attributes as read from the encoding.
pub type JavaAttributes<'a> = [JavaAttribute<'a>];
/// Headers as read from the encoding.
pub type JavaHeaders<'a> = [JavaHeader<'a>];
/// The adapter's message over a Java message (a document, or the decoded parts).
pub type JavaInput<'a> = Input<'a, JavaAttributes<'a>, JavaHeaders<'a>>;

const BODY: u8 = 1;
const ATTRIBUTES: u8 = 2;
const HEADERS: u8 = 4;
const TYPE_NAMED: u8 = 0;
const TYPE_STRING: u8 = 1;
const TYPE_NUMBER: u8 = 2;
const TYPE_BINARY: u8 = 3;

/// The decoded parts of an encoded message, borrowing the encoding.
#[derive(Debug, Default)]
pub struct Decoded<'a> {
    body: Option<&'a [u8]>,
    attributes: Option<Vec<JavaAttribute<'a>>>,
    headers: Option<Vec<JavaHeader<'a>>>,
    unreadable: Option<(MessagePart, MessageError)>,
}

impl<'a> Decoded<'a> {
    /// The adapter's message of these parts.
    pub fn input(&self) -> JavaInput<'_> {
        Input::Parts(Parts {
            body: self.body,
            attributes: self.attributes.as_deref(),
            headers: self.headers.as_deref(),
            unreadable: self.unreadable.clone(),
        })
    }
}

/// A reader of the encoding; every read is bounds-checked (`None` past the end: a malformed
/// encoding is an argument failure, never a panic).
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    #[inline]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.bytes.split_at_checked(n)?;
        self.bytes = rest;
        Some(head)
    }

    #[inline]
    fn u32(&mut self) -> Option<usize> {
        let (head, rest) = self.bytes.split_first_chunk::<4>()?;
        self.bytes = rest;
        usize::try_from(u32::from_le_bytes(*head)).ok()
    }

    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()?;
        self.take(n)
    }

    /// A count of items each at least `min` bytes long: bounded by what is left, so that no
    /// buffer is sized by a count the encoding cannot hold.
    #[inline]
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = self.u32()?;
        (n.saturating_mul(min) <= self.bytes.len()).then_some(n)
    }
}

/// Decodes an encoded message.
pub fn decode(bytes: &[u8]) -> Result<Decoded<'_>, Failure> {
    read(bytes).ok_or_else(|| {
        Failure::argument("the message's encoding is malformed (dev.filtervm.Message writes it)")
    })
}

fn read(bytes: &[u8]) -> Option<Decoded<'_>> {
    let mut r = Reader { bytes };
    let flags = *r.take(1)?.first()?;
    let mut out = Decoded::default();
    if flags & BODY != 0 {
        out.body = Some(r.string()?);
    }
    if flags & ATTRIBUTES != 0 {
        let n = r.count(9)?;
        let mut attributes = Vec::with_capacity(n);
        for _ in 0..n {
            let name = r.string()?;
            let stated = match *r.take(1)?.first()? {
                TYPE_NAMED => None,
                TYPE_STRING => Some(AttributeType::String),
                TYPE_NUMBER => Some(AttributeType::Number),
                TYPE_BINARY => Some(AttributeType::Binary),
                _ => return None,
            };
            let data_type = match stated {
                Some(t) => t,
                None => {
                    let type_name = r.string()?;
                    attribute_type(type_name).unwrap_or_else(|| {
                        out.unreadable.get_or_insert_with(|| {
                            (
                                MessagePart::Attributes,
                                unknown_attribute_type(name, type_name),
                            )
                        });
                        AttributeType::Binary
                    })
                }
            };
            attributes.push((name, data_type, r.string()?));
        }
        out.attributes = Some(attributes);
    }
    if flags & HEADERS != 0 {
        let n = r.count(8)?;
        let mut headers = Vec::with_capacity(n);
        for _ in 0..n {
            let name = r.string()?;
            let values = match r.count(4)? {
                1 => HeaderValue::One(r.string()?),
                k => HeaderValue::Many((0..k).map(|_| r.string()).collect::<Option<_>>()?),
            };
            headers.push((name, values));
        }
        out.headers = Some(headers);
    }
    (r.bytes.is_empty() && flags & !(BODY | ATTRIBUTES | HEADERS) == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(out: &mut Vec<u8>, b: &[u8]) {
        out.extend_from_slice(&u32::try_from(b.len()).unwrap().to_le_bytes());
        out.extend_from_slice(b);
    }

    #[test]
    fn parts_decode_and_type_names_are_the_adapters() {
        let mut e = vec![BODY | ATTRIBUTES | HEADERS];
        s(&mut e, b"{}");
        e.extend_from_slice(&2u32.to_le_bytes());
        for (n, t, v) in [("a", "String", "x"), ("b", "Strung", "1")] {
            s(&mut e, n.as_bytes());
            e.push(TYPE_NAMED);
            s(&mut e, t.as_bytes());
            s(&mut e, v.as_bytes());
        }
        e.extend_from_slice(&1u32.to_le_bytes());
        s(&mut e, b"h");
        e.extend_from_slice(&2u32.to_le_bytes());
        s(&mut e, b"x");
        s(&mut e, b"y");
        let d = decode(&e).unwrap();
        assert_eq!(d.body, Some(&b"{}"[..]));
        let attrs = d.attributes.as_ref().unwrap();
        assert_eq!(attrs[0], (&b"a"[..], AttributeType::String, &b"x"[..]));
        let (part, err) = d.unreadable.as_ref().unwrap();
        assert_eq!(*part, MessagePart::Attributes);
        assert_eq!(err.pointer, "/attributes/b/Type");
        assert_eq!(
            d.headers.as_ref().unwrap()[0].1,
            HeaderValue::Many(vec![&b"x"[..], &b"y"[..]])
        );
    }

    #[test]
    fn every_truncation_of_an_encoding_is_refused() {
        let mut e = vec![ATTRIBUTES];
        e.extend_from_slice(&1u32.to_le_bytes());
        s(&mut e, b"name");
        e.push(TYPE_NUMBER);
        s(&mut e, b"5");
        assert_eq!(
            decode(&e).unwrap().attributes.unwrap(),
            [(&b"name"[..], AttributeType::Number, &b"5"[..])]
        );
        let mut unknown = e.clone();
        unknown[13] = 9; // flags, count, name: the type byte
        assert!(decode(&unknown).is_err(), "an unknown type byte");
        for n in 0..e.len() {
            assert_eq!(
                decode(&e[..n]).unwrap_err().code(),
                "INVALID_ARGUMENT",
                "{n}"
            );
        }
        let mut huge = vec![HEADERS];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&huge).is_err());
        assert!(decode(&[8]).is_err());
    }
}

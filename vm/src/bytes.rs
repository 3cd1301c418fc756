//! Byte comparisons of text without a call: equality, prefix and suffix, and short constants held
//! as two words. Binding, the wildcard matcher, the executor and the decision plans all compare
//! names and values with these.

/// Byte-string equality without a `memcmp` call up to 16 bytes (two overlapping words).
#[inline(always)]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    // Two length tests reach each case: 8 to 16 bytes, more, 4 to 7, fewer.
    if a.len() >= 8 {
        if a.len() > 16 {
            // Word by word, then the last word (overlapping): no call, so that the callers'
            // loops need no registers saved across one.
            let word = |c: &[u8]| c.first_chunk::<8>().map(|w| u64::from_ne_bytes(*w));
            return a
                .chunks_exact(8)
                .zip(b.chunks_exact(8))
                .all(|(x, y)| word(x) == word(y))
                && a.last_chunk::<8>() == b.last_chunk::<8>();
        }
        if let (Some(a0), Some(b0), Some(a1), Some(b1)) = (
            a.first_chunk::<8>(),
            b.first_chunk::<8>(),
            a.last_chunk::<8>(),
            b.last_chunk::<8>(),
        ) {
            return u64::from_ne_bytes(*a0) == u64::from_ne_bytes(*b0)
                && u64::from_ne_bytes(*a1) == u64::from_ne_bytes(*b1);
        }
    }
    if let (Some(a0), Some(b0), Some(a1), Some(b1)) = (
        a.first_chunk::<4>(),
        b.first_chunk::<4>(),
        a.last_chunk::<4>(),
        b.last_chunk::<4>(),
    ) {
        return u32::from_ne_bytes(*a0) == u32::from_ne_bytes(*b0)
            && u32::from_ne_bytes(*a1) == u32::from_ne_bytes(*b1);
    }
    // 0 to 3 bytes: the first byte and the last two cover them.
    a.first() == b.first() && a.last_chunk::<2>() == b.last_chunk::<2>()
}

/// The longest text a [`ShortText`] holds.
pub(crate) const SHORT_TEXT: usize = 16;

/// A constant of at most [`SHORT_TEXT`] bytes, held as its length and two words that together
/// cover its bytes ([`short_words`]), so that comparing bytes with it is a length test and two
/// word compares, without a load through a pointer or a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShortText {
    len: usize,
    words: (u64, u64),
}

impl ShortText {
    /// A short text no bytes are (its length is no slice's), to fill unused places with.
    pub(crate) const NONE: ShortText = ShortText {
        len: usize::MAX,
        words: (0, 0),
    };

    /// `text` as a short text; `None` when it is longer than [`SHORT_TEXT`] bytes.
    pub(crate) fn new(text: &[u8]) -> Option<ShortText> {
        (text.len() <= SHORT_TEXT).then(|| ShortText {
            len: text.len(),
            words: short_words(text),
        })
    }

    /// Whether `bytes` are this text's.
    #[inline(always)]
    pub(crate) fn is(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len && short_words(bytes) == self.words
    }
}

/// Two words that, with the length, determine bytes of at most [`SHORT_TEXT`] bytes: the first
/// and the last 8 bytes (overlapping) from 8 bytes on, the first and last 4 from 4, the first
/// byte and the last two below (0 where there are none). Longer bytes get the words of their
/// ends, which determine nothing (a [`ShortText`] never has their length).
#[inline(always)]
fn short_words(b: &[u8]) -> (u64, u64) {
    if let (Some(head), Some(tail)) = (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        return (u64::from_ne_bytes(*head), u64::from_ne_bytes(*tail));
    }
    if let (Some(head), Some(tail)) = (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        return (
            u64::from(u32::from_ne_bytes(*head)),
            u64::from(u32::from_ne_bytes(*tail)),
        );
    }
    (
        b.first().map_or(0, |&x| u64::from(x)),
        b.last_chunk::<2>()
            .map_or(0, |t| u64::from(u16::from_ne_bytes(*t))),
    )
}

/// `value` starts with `prefix`.
#[inline(always)]
pub(crate) fn has_prefix(value: &[u8], prefix: &[u8]) -> bool {
    value
        .get(..prefix.len())
        .is_some_and(|head| same(head, prefix))
}

/// `value` ends with `suffix`.
#[inline(always)]
pub(crate) fn has_suffix(value: &[u8], suffix: &[u8]) -> bool {
    value
        .len()
        .checked_sub(suffix.len())
        .and_then(|at| value.get(at..))
        .is_some_and(|tail| same(tail, suffix))
}

#[cfg(test)]
mod tests {
    use super::{SHORT_TEXT, ShortText, same};

    #[test]
    fn same_is_slice_equality_at_every_length() {
        let bytes: Vec<u8> = (0..40u8).map(|i| b'a' + i % 7).collect();
        for len in 0..=bytes.len() {
            let a = &bytes[..len];
            assert!(same(a, a), "{len}");
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 1;
                assert!(!same(a, &b), "{len} differs at {at}");
            }
            if len > 0 {
                assert!(!same(a, &bytes[..len - 1]));
            }
        }
    }

    #[test]
    fn short_texts_are_slice_equality_at_every_length() {
        let bytes: Vec<u8> = (0..=SHORT_TEXT as u8 + 1).map(|i| b'a' + i % 7).collect();
        for len in 0..=SHORT_TEXT {
            let a = &bytes[..len];
            let short = ShortText::new(a).unwrap();
            assert!(short.is(a), "{len}");
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 1;
                assert!(!short.is(&b), "{len} differs at {at}");
            }
            // Other lengths, and bytes that share its words but not its length.
            for other in 0..bytes.len() {
                if other != len {
                    assert!(!short.is(&bytes[..other]), "{len} against {other}");
                }
            }
            let mut zeros = vec![0; len];
            zeros.push(0);
            assert!(!ShortText::new(&zeros[..len]).unwrap().is(&zeros));
        }
        assert!(ShortText::new(&bytes[..SHORT_TEXT + 1]).is_none());
    }
}

//! `set_from_bytes`: arbitrary and edited bytes as a saved subscription set
//! (`SubscriptionSet::from_bytes`).
//!
//! First byte even: the rest is given to the loader as is; whatever loads answers the vectors'
//! messages, saves to bytes that load again as the same bytes, and empties to nothing. First byte
//! odd: the rest chooses generated policies of every dialect (`generate::set_walk::policies`)
//! for a set, which is saved; the remaining bytes edit the saved bytes at positions they pick,
//! and the hash is made right again so the edits reach the checks of the contents. Unedited bytes
//! must load into a set that answers every message as the saved one; edited ones load or are
//! refused with one of the load codes, never a panic.

use crate::all_samples;
use filtervm_compiler::{Dialect, ErrorCode, GroupMessage, SetScratch, SubscriptionSet};
use filtervm_conformance::generate::set_walk::policies;
use filtervm_conformance::generate::{Bytes, Source};

/// The answers of a set to the vectors' messages: the ids and the unjudged groups' codes.
fn answers(set: &SubscriptionSet<u64>) -> Vec<(Vec<u64>, Vec<ErrorCode>)> {
    let mut scratch = SetScratch::new();
    all_samples()
        .iter()
        .take(48)
        .map(|sample| {
            let m = set.matching_with(&mut scratch, |_| {
                Ok(GroupMessage::Borrowed(&sample.message))
            });
            (
                m.ids().copied().collect(),
                m.unjudged().map(|u| u.error.code).collect(),
            )
        })
        .collect()
}

/// A loaded set works: it answers, saves to bytes that load as the same bytes, and empties.
fn exercise(mut set: SubscriptionSet<u64>) {
    answers(&set);
    let bytes = set.to_bytes();
    let again = SubscriptionSet::<u64>::from_bytes(&bytes).expect("a loaded set's bytes load");
    assert_eq!(again.to_bytes(), bytes, "a loaded set saves to other bytes");
    let ids: Vec<u64> = set.ids().copied().collect();
    for id in ids {
        assert!(set.remove(&id));
    }
    assert_eq!(set.heap_bytes(), 0, "an emptied loaded set holds memory");
}

/// The FNV-1a 64 hash a saved set ends with.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The target (see the module documentation).
pub fn set_bytes(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        if let Ok(set) = SubscriptionSet::<u64>::from_bytes(rest) {
            exercise(set);
        }
        return;
    }
    let mut s = Bytes::new(rest);
    let pool = policies(&Dialect::ALL, 1 + s.below(4) as usize, Some(2), &mut s);
    let mut set = SubscriptionSet::new();
    for (id, p) in pool.iter().enumerate() {
        set.insert(id as u64, &p.filter).expect("inserts");
        // Now and then a second subscriber to the same filter.
        if s.below(4) == 0 {
            set.insert((id + pool.len()) as u64, &p.filter)
                .expect("inserts");
        }
    }
    let mut bytes = set.to_bytes();
    let mut changed = false;
    while !s.is_empty() && bytes.len() > 8 {
        let at = s.below(u32::try_from(bytes.len() - 8).unwrap_or(u32::MAX)) as usize;
        let xor = u8::try_from(s.below(256)).unwrap_or(1);
        if let Some(b) = bytes.get_mut(at) {
            *b ^= xor;
            changed |= xor != 0;
        }
    }
    if let Some(body) = bytes.len().checked_sub(8) {
        let (head, tail) = bytes.split_at_mut(body);
        tail.copy_from_slice(&fnv1a(head).to_le_bytes());
    }
    match SubscriptionSet::<u64>::from_bytes(&bytes) {
        Ok(loaded) => {
            if !changed {
                assert!(loaded.ids().eq(set.ids()), "other ids read back");
                assert_eq!(answers(&loaded), answers(&set), "other answers read back");
            }
            exercise(loaded);
        }
        Err(e) => {
            assert!(changed, "a set's own bytes do not load: {e}");
            assert!(
                matches!(
                    e.code(),
                    ErrorCode::InvalidProgram
                        | ErrorCode::InvalidFilterMetadata
                        | ErrorCode::InvalidOptions
                ),
                "{e}"
            );
        }
    }
}

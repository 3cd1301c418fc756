//! `LiveSet` under concurrent updates: threads match continuously while another thread adds and
//! removes subscriptions; every answer a reader gets is the answer of one consistent published
//! set, and readers are never held up by the writer.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{
    Applied, Change, Dialect, Filter, LiveSet, MessageParts, Options, SetScratch, compile_text,
};
use filtervm_vm::message::AttributeType;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

/// Subscription `k`'s filter: distinct for each `k`, and every one matches `a = x`.
fn filter(k: usize) -> Arc<Filter> {
    let policy = format!(r#"{{"a": ["x", "v{k}"]}}"#);
    Arc::new(compile_text(Dialect::Sns, &policy, &Options::from(Dialect::Sns)).unwrap())
}

const SUBSCRIPTIONS: usize = 240;
const BATCH: usize = 8;

#[test]
fn readers_see_only_consistent_snapshots_while_a_writer_adds_and_removes() {
    let live: Arc<LiveSet<usize>> = Arc::new(LiveSet::new());
    let filters: Vec<Arc<Filter>> = (0..SUBSCRIPTIONS).map(filter).collect();
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (live, done, reads) = (Arc::clone(&live), Arc::clone(&done), Arc::clone(&reads));
            thread::spawn(move || {
                let attributes = [("a", AttributeType::String, "x")];
                let message = MessageParts::attributes(&attributes[..]);
                let mut scratch = SetScratch::new();
                // The writer first grows the set (ids 0..k, k growing), then shrinks it (ids
                // j..N, j growing): a reader sees a prefix that only grows, then a suffix that
                // only shrinks.
                let (mut high, mut low, mut shrinking) = (0usize, 0usize, false);
                while !done.load(Ordering::Acquire) {
                    let set = live.load();
                    let matches = set.matching(&mut scratch, &message);
                    assert!(matches.is_complete());
                    let ids: Vec<usize> = matches.ids().copied().collect();
                    // Exactly the snapshot's subscriptions (all match), in insertion order.
                    assert_eq!(ids.len(), set.len());
                    assert_eq!(ids, set.ids().copied().collect::<Vec<_>>());
                    // A contiguous range: a reader that sees id k+1 sees id k while the set
                    // grows; one that misses id k misses every id before it while it shrinks.
                    match (ids.first(), ids.last()) {
                        (Some(&first), Some(&last)) => {
                            assert_eq!(last + 1 - first, ids.len(), "not a range: {ids:?}");
                            if first == 0 && !shrinking {
                                assert!(last + 1 >= high, "went back from {high} to {}", last + 1);
                                high = last + 1;
                            } else {
                                assert_eq!(last + 1, SUBSCRIPTIONS, "{ids:?}");
                                assert!(first >= low, "went back from {low} to {first}");
                                (low, shrinking) = (first, true);
                            }
                        }
                        _ => assert!(high == 0 || shrinking || high == SUBSCRIPTIONS),
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    // The writer: one insert per publish, then batches, then one removal per publish.
    let half = SUBSCRIPTIONS / 2;
    for (k, f) in filters.iter().enumerate().take(half) {
        live.insert(k, Arc::clone(f)).unwrap();
        thread::yield_now();
    }
    for start in (half..SUBSCRIPTIONS).step_by(BATCH) {
        let batch = (start..start + BATCH).map(|k| Change::Insert(k, Arc::clone(&filters[k])));
        let applied = live.apply(batch);
        assert!(
            applied.iter().all(|a| *a == Ok(Applied::Added)),
            "{applied:?}"
        );
        thread::yield_now();
    }
    assert_eq!(live.len(), SUBSCRIPTIONS);
    let during_growth = reads.load(Ordering::Relaxed);
    for k in 0..SUBSCRIPTIONS {
        assert!(live.remove(&k));
        thread::yield_now();
    }
    assert!(live.is_empty());
    done.store(true, Ordering::Release);
    for r in readers {
        r.join().unwrap();
    }
    let total = reads.load(Ordering::Relaxed);
    assert!(
        during_growth > 0 && total > during_growth,
        "readers matched while the writer worked: {during_growth} reads while growing, {total} in all"
    );
    // Both copies caught up: the published set is empty and so is the hidden one, once the next
    // update applies what it missed.
    assert!(!live.remove(&0));
}

/// A reader holding a snapshot for long holds up no writer (the writer copies the published set
/// instead of waiting), and its snapshot stays the set it loaded.
#[test]
fn a_snapshot_held_long_blocks_no_writer_and_stays_consistent() {
    let live = LiveSet::new();
    live.insert("a".to_owned(), filter(0)).unwrap();
    let held = live.snapshot();
    // Two updates: the second finds the copy it would update still held by `held`.
    live.insert("b".to_owned(), filter(1)).unwrap();
    live.insert("c".to_owned(), filter(2)).unwrap();
    assert!(live.remove(&"a".to_owned()));
    assert_eq!(held.ids().collect::<Vec<_>>(), ["a"]);
    assert_eq!(live.load().ids().collect::<Vec<_>>(), ["b", "c"]);
    drop(held);
    // Updates after the copy still reach both copies.
    live.insert("d".to_owned(), filter(3)).unwrap();
    live.insert("e".to_owned(), filter(4)).unwrap();
    assert_eq!(live.load().ids().collect::<Vec<_>>(), ["b", "c", "d", "e"]);
    let attributes = [("a", AttributeType::String, "x")];
    let mut scratch = SetScratch::new();
    let set = live.load();
    let matches = set.matching(&mut scratch, &MessageParts::attributes(&attributes[..]));
    assert_eq!(matches.len(), 4);
}

/// A batch whose changes change nothing publishes nothing; a failing insert is reported and
/// leaves the set as it was.
#[test]
fn changes_report_what_they_did() {
    let live: LiveSet<u32> = LiveSet::new();
    let v1 = {
        let f = filter(0);
        let bytes = f
            .program()
            .to_bytes_with_metadata(br#"{"dialect":"sns","options":{}}"#);
        Arc::new(Filter::from_bytes(&bytes).unwrap())
    };
    let applied = live.apply([
        Change::Remove(7),
        Change::Insert(1, v1),
        Change::Insert(2, filter(2)),
        Change::Insert(2, filter(3)),
        Change::Remove(2),
    ]);
    assert_eq!(
        applied,
        [
            Ok(Applied::NotFound),
            Err(filtervm_compiler::InsertError::NoIr),
            Ok(Applied::Added),
            Ok(Applied::Replaced),
            Ok(Applied::Removed),
        ]
    );
    assert!(live.is_empty());
    assert!(live.heap_bytes() < 4096, "{}", live.heap_bytes());
}

//! The native objects Java holds as `long` handles, and the two byte-slice views JNI needs: the
//! only `unsafe` code of the binding besides the exported symbols' `no_mangle`.
//!
//! A handle is a `Box` turned into its address. Java never frees or uses a handle twice: each
//! Java object owns one handle (`dev.filtervm.Handle`), counts the native calls in flight on it
//! and frees it once, after `close()` (or its `Cleaner`, when the object became unreachable) and
//! after the last call in flight returned. Every handle made here is counted in [`LIVE`] until it
//! is freed, which is what the leak test reads.
#![expect(
    unsafe_code,
    reason = "JNI: Java holds native objects as addresses, and byte arrays arrive as jbyte (i8)"
)]

use std::sync::atomic::{AtomicI64, Ordering};

/// The native objects alive now (made by [`into_handle`], not yet freed by [`free`]).
pub(crate) static LIVE: AtomicI64 = AtomicI64::new(0);

/// `value`, boxed, as the handle Java keeps.
pub(crate) fn into_handle<T>(value: T) -> i64 {
    LIVE.fetch_add(1, Ordering::Relaxed);
    Box::into_raw(Box::new(value)) as i64
}

/// The object behind `handle`, or `None` for the null handle.
///
/// The handle must come from [`into_handle`] with the same `T` and not be freed yet: the Java
/// class that owns it passes it only between its `Handle.acquire()` and `release()`, which keep
/// it from being freed while the call runs.
pub(crate) fn get<'a, T>(handle: i64) -> Option<&'a T> {
    let ptr = handle as *const T;
    // SAFETY: non-null handles are live `Box<T>` addresses for the duration of the call (see
    // above); only shared references are ever made of them.
    unsafe { ptr.as_ref() }
}

/// Frees the object behind `handle` (the null handle is ignored).
///
/// The handle must come from [`into_handle`] with the same `T`; Java frees each handle once,
/// when no call is in flight on it.
pub(crate) fn free<T>(handle: i64) {
    let ptr = handle as *mut T;
    if !ptr.is_null() {
        LIVE.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the address of a `Box<T>` from `into_handle`, freed once (see above).
        drop(unsafe { Box::from_raw(ptr) });
    }
}

/// `bytes` as JNI's `jbyte`s (the same size and alignment: only the sign differs).
pub(crate) fn as_jbytes_mut(bytes: &mut [u8]) -> &mut [i8] {
    // SAFETY: u8 and i8 have the same size and alignment and every bit pattern is valid in both;
    // the slice is reborrowed exclusively for its own length.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<i8>(), bytes.len()) }
}

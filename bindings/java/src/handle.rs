//! The native objects Java holds as `long` handles, and a Java `byte[]` read where the JVM holds
//! it: the only `unsafe` code of the binding besides the exported symbols' `no_mangle`.
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

use jni::JNIEnv;
use jni::objects::{JByteArray, ReleaseMode};
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

/// Runs `read` on the bytes of a Java `byte[]` where the JVM holds them (JNI's
/// `GetPrimitiveArrayCritical`: no copy). `read` must make no JNI call and not wait on another
/// Java thread: it only reads the bytes (the garbage collector may wait while it runs). The
/// array is released, without copying back, when `read` returns or unwinds.
pub(crate) fn with_array_bytes<R>(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    read: impl FnOnce(&[u8]) -> R,
) -> Result<R, jni::errors::Error> {
    // SAFETY: JNI's rule for critical regions is that no JNI call is made and no Java thread is
    // waited on until the elements are released: `read` (the decoder and the matcher, which call
    // only Rust code) makes none, and the guard releases the elements when it drops.
    let elements = unsafe { env.get_array_elements_critical(array, ReleaseMode::NoCopyBack)? };
    let signed: &[i8] = &elements;
    // SAFETY: u8 and i8 have the same size and alignment and every bit pattern is valid in
    // both; the slice lives as long as `elements`, which outlives `read`.
    let bytes = unsafe { std::slice::from_raw_parts(signed.as_ptr().cast::<u8>(), signed.len()) };
    Ok(read(bytes))
}

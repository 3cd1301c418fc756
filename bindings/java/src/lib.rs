//! The native half of filtervm's Java binding (`dev.filtervm`): the JNI functions of
//! `dev.filtervm.Native`, each a thin door onto the bindings' adapter (`filtervm-bindings`), the
//! same adapter the C ABI and the Python package call — so a situation gives the same verdict and
//! the same error code in every language.
//!
//! - Filters and sets live on the Rust heap; Java holds them as handles ([`handle`]) and frees
//!   each once (`close()`, or its `Cleaner`).
//! - Messages arrive as one byte array: a JSON document, or the parts encoded by
//!   `dev.filtervm.Message` ([`message`]).
//! - Every call runs inside [`run`]: a Rust panic is caught and thrown as a `FiltervmException`
//!   with code `PANIC`; an adapter failure is thrown as the exception class of its kind, with
//!   every detail (code, JSON Pointer, message); a Java exception raised by a JNI call stays
//!   pending and is thrown when the native method returns.

mod handle;
#[doc(hidden)]
pub mod message;

use filtervm_bindings::filtervm::ReadMode;
use filtervm_bindings::{self as engine, Failure, FailureKind, PANIC, Unjudged};
use jni::JNIEnv;
use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JValue};
use jni::sys::{jboolean, jint, jlong, jobject, jobjectArray, jstring};
use message::JavaInput;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{PoisonError, RwLock};

/// A set as Java holds it: `add` and `remove` take the write lock, `matching` the read lock (any
/// number of threads match at once).
type JavaSet = RwLock<engine::Set>;

/// What a native call can fail with.
enum Error {
    /// An adapter failure: thrown as the exception class of its kind.
    Failure(Failure),
    /// A JNI call failed; when it raised a Java exception, that exception stays pending.
    Jni(jni::errors::Error),
}

impl From<Failure> for Error {
    fn from(f: Failure) -> Error {
        Error::Failure(f)
    }
}

impl From<jni::errors::Error> for Error {
    fn from(e: jni::errors::Error) -> Error {
        Error::Jni(e)
    }
}

/// Runs the body of a native method: its value, or `default` with a Java exception pending
/// (the body's failure, a caught panic, or the exception a JNI call raised).
fn run<'l, R>(
    env: &mut JNIEnv<'l>,
    default: R,
    body: impl FnOnce(&mut JNIEnv<'l>) -> Result<R, Error>,
) -> R {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&mut *env)));
    let failure = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(Error::Failure(f))) => f,
        Ok(Err(Error::Jni(e))) => {
            if env.exception_check().unwrap_or(true) {
                // The exception a JNI call raised (an OutOfMemoryError, ...) is thrown as is.
                return default;
            }
            Failure::argument(format!("a JNI call failed: {e}"))
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Failure::one(
                FailureKind::Policy,
                PANIC,
                "",
                format!("internal error in filtervm (a bug): {what}"),
            )
        }
    };
    if env.exception_check().unwrap_or(true) {
        return default;
    }
    if throw(env, &failure).is_err() && !env.exception_check().unwrap_or(true) {
        // The exception class could not be made: a plain one, with the same text.
        let _ = env.throw_new("java/lang/IllegalStateException", failure.to_string());
    }
    default
}

/// Throws `failure` as `FiltervmException.fromNative(kind, details)` builds it: a
/// `PolicyException`, `MessageException`, `LoadException`, or a `FiltervmException` (arguments,
/// a full set, a panic), each with every detail.
fn throw(env: &mut JNIEnv<'_>, failure: &Failure) -> Result<(), jni::errors::Error> {
    let kind = if failure.code() == PANIC {
        "panic"
    } else {
        match failure.kind {
            FailureKind::Policy => "policy",
            FailureKind::Message => "message",
            FailureKind::Load => "load",
            FailureKind::Argument => "argument",
            FailureKind::Set => "set",
        }
    };
    let fields = failure
        .details
        .iter()
        .flat_map(|d| [d.code, d.pointer.as_str(), d.message.as_str()]);
    let details = strings(env, fields, failure.details.len().saturating_mul(3))?;
    let kind = env.new_string(kind)?;
    let exception = env
        .call_static_method(
            "dev/filtervm/FiltervmException",
            "fromNative",
            "(Ljava/lang/String;[Ljava/lang/String;)Ldev/filtervm/FiltervmException;",
            &[JValue::Object(&kind), JValue::Object(&details)],
        )?
        .l()?;
    env.throw(jni::objects::JThrowable::from(exception))
}

/// A Java `String[]` of `len` strings.
fn strings<'l, 's>(
    env: &mut JNIEnv<'l>,
    items: impl Iterator<Item = &'s str>,
    len: usize,
) -> Result<JObjectArray<'l>, jni::errors::Error> {
    let len = i32::try_from(len).map_err(|_| jni::errors::Error::WrongJValueType("int", "len"))?;
    let array = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for (i, s) in (0..len).zip(items) {
        let s = env.new_string(s)?;
        env.set_object_array_element(&array, i, &s)?;
        env.delete_local_ref(s)?;
    }
    Ok(array)
}

/// The bytes of `array` (`None` for Java's `null`).
fn array_bytes(env: &JNIEnv<'_>, array: &JByteArray<'_>) -> Result<Option<Vec<u8>>, Error> {
    if array.is_null() {
        return Ok(None);
    }
    Ok(Some(env.convert_byte_array(array)?))
}

/// Runs `f` on the message in `array` (a JSON document, or `Message`'s encoded parts when
/// `parts`), read where the JVM holds it: `f` makes no JNI call (it matches; its failure is
/// thrown after the array is released).
fn with_message<R>(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    parts: bool,
    f: impl FnOnce(&JavaInput<'_>) -> Result<R, Error>,
) -> Result<R, Error> {
    if array.is_null() {
        return Err(Failure::argument("the message is null").into());
    }
    handle::with_array_bytes(env, array, |bytes| {
        if parts {
            let decoded = message::decode(bytes)?;
            f(&decoded.input())
        } else {
            f(&engine::Input::Document(bytes))
        }
    })?
}

/// The filter behind `handle`.
fn filter<'a>(handle: jlong) -> Result<&'a engine::Filter, Error> {
    handle::get(handle).ok_or_else(|| Failure::argument("the filter is closed").into())
}

/// The set behind `handle`.
fn set<'a>(handle: jlong) -> Result<&'a JavaSet, Error> {
    handle::get(handle).ok_or_else(|| Failure::argument("the set is closed").into())
}

/// A set's lock. A lock poisoned by a caught panic (a bug) fails every later call with `PANIC`:
/// the set may be inconsistent.
fn poisoned<T>(_: PoisonError<T>) -> Error {
    Error::Failure(Failure::one(
        FailureKind::Set,
        PANIC,
        "",
        "an earlier call on this set failed inside filtervm and may have left it inconsistent: \
         close it and build a new one",
    ))
}

/// The read mode of a `readMode` argument (`dev.filtervm.ReadMode`'s code): 0 validating, 1
/// trusted; any other value (-1 for a null `ReadMode`) is `INVALID_ARGUMENT`, as in the C ABI.
fn read_mode(mode: jint) -> Result<ReadMode, Error> {
    match mode {
        0 => Ok(ReadMode::Validating),
        1 => Ok(ReadMode::Trusted),
        _ => Err(Failure::argument(format!(
            "unknown read mode {mode}: ReadMode.VALIDATING or ReadMode.TRUSTED"
        ))
        .into()),
    }
}

/// Java's `boolean`.
fn jbool(b: bool) -> jboolean {
    jboolean::from(b)
}

/// A set id from Java (its keys are counters from 0).
fn key(id: jlong) -> Result<u64, Error> {
    u64::try_from(id).map_err(|_| Failure::argument("a negative subscription key").into())
}

/// The exported JNI functions (`Java_dev_filtervm_Native_*`): each is `run` around a call of the
/// adapter.
#[expect(
    unsafe_code,
    reason = "JNI finds native methods by their unmangled symbol names (`#[unsafe(no_mangle)]`)"
)]
mod exports {
    use super::*;

    /// `Native.compile(byte[] dialect, byte[] policy, byte[] options)`: a filter handle.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_compile<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        dialect: JByteArray<'l>,
        policy: JByteArray<'l>,
        options: JByteArray<'l>,
    ) -> jlong {
        run(&mut env, 0, |env| {
            let dialect = array_bytes(env, &dialect)?.unwrap_or_default();
            let dialect = String::from_utf8_lossy(&dialect);
            let policy = array_bytes(env, &policy)?
                .ok_or_else(|| Failure::argument("the policy is null"))?;
            let options = array_bytes(env, &options)?;
            let filter = engine::Filter::compile(&dialect, &policy, options.as_deref())?;
            Ok(handle::into_handle(filter))
        })
    }

    /// `Native.fromBytes(byte[])`: a filter handle.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_fromBytes<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        bytes: JByteArray<'l>,
    ) -> jlong {
        run(&mut env, 0, |env| {
            let bytes =
                array_bytes(env, &bytes)?.ok_or_else(|| Failure::argument("the bytes are null"))?;
            Ok(handle::into_handle(engine::Filter::from_bytes(&bytes)?))
        })
    }

    /// `Native.toBytes(long filter)`.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_toBytes<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        filter: jlong,
    ) -> jobject {
        run(&mut env, std::ptr::null_mut(), |env| {
            let bytes = super::filter(filter)?.to_bytes();
            Ok(env.byte_array_from_slice(&bytes)?.into_raw())
        })
    }

    /// `Native.filterText(long filter, int what)`: 0 the dialect, 1 the options as JSON, 2 the
    /// policy it was compiled from (null when loaded from bytes).
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_filterText<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        filter: jlong,
        what: i32,
    ) -> jstring {
        run(&mut env, std::ptr::null_mut(), |env| {
            let f = super::filter(filter)?;
            let text = match what {
                0 => Some(f.dialect().to_owned()),
                1 => Some(f.options_json()),
                _ => f.source().map(str::to_owned),
            };
            Ok(match text {
                Some(t) => env.new_string(t)?.into_raw(),
                None => std::ptr::null_mut(),
            })
        })
    }

    /// `Native.matches(long filter, byte[] message, boolean parts, int readMode)`.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_matches<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        filter: jlong,
        message: JByteArray<'l>,
        parts: jboolean,
        mode: jint,
    ) -> jboolean {
        run(&mut env, 0, |env| {
            let (f, mode) = (super::filter(filter)?, read_mode(mode)?);
            with_message(env, &message, parts != 0, |input| {
                Ok(jbool(f.matches_in(input, mode)?))
            })
        })
    }

    /// `Native.explain(long filter, byte[] message, boolean parts)`: JSON text.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_explain<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        filter: jlong,
        message: JByteArray<'l>,
        parts: jboolean,
    ) -> jstring {
        run(&mut env, std::ptr::null_mut(), |env| {
            let f = super::filter(filter)?;
            let text = with_message(
                env,
                &message,
                parts != 0,
                |input| Ok(f.explain_json(input)?),
            )?;
            Ok(env.new_string(text)?.into_raw())
        })
    }

    /// `Native.freeFilter(long filter)`.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_freeFilter<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        filter: jlong,
    ) {
        run(&mut env, (), |_| {
            handle::free::<engine::Filter>(filter);
            Ok(())
        });
    }

    /// `Native.newSet()`: a set handle.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_newSet<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
    ) -> jlong {
        run(&mut env, 0, |_| {
            Ok(handle::into_handle::<JavaSet>(RwLock::new(
                engine::Set::new(),
            )))
        })
    }

    /// `Native.setAdd(long set, long key, long filter)`.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_setAdd<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        set: jlong,
        id: jlong,
        filter: jlong,
    ) {
        run(&mut env, (), |_| {
            let (s, f, id) = (super::set(set)?, super::filter(filter)?, key(id)?);
            s.write().map_err(poisoned)?.add(id, f)?;
            Ok(())
        });
    }

    /// `Native.setRemove(long set, long key)`: whether the key was in the set.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_setRemove<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        set: jlong,
        id: jlong,
    ) -> jboolean {
        run(&mut env, 0, |_| {
            let (s, id) = (super::set(set)?, key(id)?);
            Ok(jbool(s.write().map_err(poisoned)?.remove(id)))
        })
    }

    /// `Native.setMatching(long set, byte[] message, boolean parts, int readMode, boolean
    /// strict)`: a `long[]`
    /// of the matching keys when every group judged the message, else `Object[] {long[] keys,
    /// String[] groups}` with six strings per unjudged group (dialect, options, subscriptions,
    /// code, pointer, message) — or, when `strict`, the adapter's strict failure (a
    /// `MessageException` naming each such group).
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_setMatching<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        set: jlong,
        message: JByteArray<'l>,
        parts: jboolean,
        mode: jint,
        strict: jboolean,
    ) -> jobject {
        run(&mut env, std::ptr::null_mut(), |env| {
            let (s, mode) = (super::set(set)?, read_mode(mode)?);
            let (mut found, mut unjudged) = (Vec::new(), Vec::new());
            // Inside the array's critical region: the read lock waits at most for an `add` or
            // `remove` in progress, which runs Rust code only (no JNI call, no Java lock).
            with_message(env, &message, parts != 0, |input| {
                s.read()
                    .map_err(poisoned)?
                    .matching_in(input, mode, &mut found, &mut unjudged);
                Ok(())
            })?;
            let keys = found
                .into_iter()
                .map(|k| i64::try_from(k).unwrap_or(i64::MAX))
                .collect::<Vec<_>>();
            let len = i32::try_from(keys.len())
                .map_err(|_| Failure::argument("too many matching subscriptions"))?;
            let array = env.new_long_array(len)?;
            env.set_long_array_region(&array, 0, &keys)?;
            if unjudged.is_empty() {
                return Ok(array.into_raw());
            }
            if strict != 0 {
                return Err(Unjudged::strict_failure(&unjudged).into());
            }
            let groups = unjudged_strings(env, &unjudged)?;
            let pair = env.new_object_array(2, "java/lang/Object", JObject::null())?;
            env.set_object_array_element(&pair, 0, &array)?;
            env.set_object_array_element(&pair, 1, &groups)?;
            Ok(pair.into_raw())
        })
    }

    /// `Native.freeSet(long set)`.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_freeSet<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
        set: jlong,
    ) {
        run(&mut env, (), |_| {
            handle::free::<JavaSet>(set);
            Ok(())
        });
    }

    /// `Native.liveObjects()`: the filters and sets alive on the native side (the leak test's
    /// measure; also the cheapest native call, which the benchmark times as the cost of a JNI
    /// call).
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_liveObjects<'l>(
        _: JNIEnv<'l>,
        _: JClass<'l>,
    ) -> jlong {
        handle::LIVE.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `Native.dialects()`: the dialect names.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_dialects<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
    ) -> jobjectArray {
        run(&mut env, std::ptr::null_mut(), |env| {
            let names = engine::dialects();
            Ok(strings(env, names.iter().copied(), names.len())?.into_raw())
        })
    }

    /// `Native.panicForTest()`: panics inside the boundary, so that the tests see a panic
    /// become a `FiltervmException` with code `PANIC` (and the JVM live on).
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_filtervm_Native_panicForTest<'l>(
        mut env: JNIEnv<'l>,
        _: JClass<'l>,
    ) {
        run(&mut env, (), |_| -> Result<(), Error> {
            #[expect(clippy::panic, reason = "the test of the boundary's panic handling")]
            {
                panic!("a test panic")
            }
        });
    }
}

/// Six strings per unjudged group: dialect, options, subscriptions, code, pointer, message.
fn unjudged_strings<'l>(
    env: &mut JNIEnv<'l>,
    groups: &[Unjudged],
) -> Result<JObjectArray<'l>, jni::errors::Error> {
    let counts: Vec<String> = groups.iter().map(|g| g.subscriptions.to_string()).collect();
    let fields = groups.iter().zip(&counts).flat_map(|(g, n)| {
        [
            g.dialect,
            g.options.as_str(),
            n.as_str(),
            g.code,
            g.pointer.as_str(),
            g.message.as_str(),
        ]
    });
    strings(env, fields, groups.len().saturating_mul(6))
}

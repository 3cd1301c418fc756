//! The exported functions and types (see the crate documentation for the conventions).
#![expect(
    unsafe_code,
    reason = "a C ABI: exported symbols and raw pointers from C; every pointer is checked for \
              NULL and every length bounded before a slice is made of it"
)]

use crate::message::{CAttributes, CHeaders, CMessage, Read, bytes, read_message};
use filtervm_bindings::filtervm::{Matcher, Message, MessageError, ReadMode};
use filtervm_bindings::{DocumentInput, Failure, FailureKind, Filter, Input, PANIC, Set, Unjudged};
use std::cell::RefCell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::RwLock;

/// Success (and "no match" for the match functions).
pub const FVM_OK: i32 = 0;
/// The message matches.
pub const FVM_MATCH: i32 = 1;
/// The message does not match.
pub const FVM_NO_MATCH: i32 = 0;
/// `fvm_set_matching`: the ids of the subscriptions that judged the message and match it are
/// written, but some groups of subscriptions could not judge it: `*error` lists each (its code,
/// pointer and message, and `fvm_error_dialect`, `fvm_error_options`,
/// `fvm_error_subscriptions`). Their subscriptions are in no result: deliver the ids, and report
/// or retry the others.
pub const FVM_PARTIAL: i32 = 2;
/// The policy or its options are invalid (the error lists every problem).
pub const FVM_ERR_POLICY: i32 = -1;
/// The message cannot be read for the filter (the error has one detail).
pub const FVM_ERR_MESSAGE: i32 = -2;
/// The bytes are not a filter (`fvm_filter_from_bytes`).
pub const FVM_ERR_LOAD: i32 = -3;
/// An argument is invalid: a NULL pointer where one is required, an unknown dialect name, an
/// unknown message part bit (code `INVALID_ARGUMENT`).
pub const FVM_ERR_ARGUMENT: i32 = -4;
/// The set cannot take the filter (code `SET_FULL`).
pub const FVM_ERR_SET: i32 = -5;
/// The caller's buffer is too small; the needed size was written (no error object).
pub const FVM_ERR_BUFFER_TOO_SMALL: i32 = -6;
/// A bug in filtervm was caught at the boundary (code `PANIC`). A set that reports it should
/// be freed: its later calls report it again.
pub const FVM_ERR_PANIC: i32 = -7;

/// `fvm_message.parts`: `json` is set (the whole message as JSON in the dialect's shape).
pub const FVM_PART_JSON: u32 = 1;
/// `fvm_message.parts`: `body` is set (the raw body: an SNS message body, an Event Grid event).
pub const FVM_PART_BODY: u32 = 2;
/// `fvm_message.parts`: `attributes` is set (typed attributes: sns, basaltic).
pub const FVM_PART_ATTRIBUTES: u32 = 4;
/// `fvm_message.parts`: `headers` is set (headers: stream, expr).
pub const FVM_PART_HEADERS: u32 = 8;

/// `read_mode` of `fvm_filter_matches_read` and `fvm_set_matching_read`: check every byte of a
/// JSON document or body (RFC 8259), as `fvm_filter_matches` and `fvm_set_matching` do.
pub const FVM_READ_VALIDATING: u32 = 0;
/// `read_mode`: the messages were validated upstream (a broker that parsed them, an archive a
/// JSON encoder wrote); members no filter reads are skipped by their structure alone, unchecked.
/// What a filter reads is checked as always; a message whose skipped parts are not JSON may then
/// get a verdict instead of `MESSAGE_NOT_JSON` (README, "Trusted input").
pub const FVM_READ_TRUSTED: u32 = 1;

/// The read mode of a `read_mode` argument.
#[inline(always)]
fn read_mode(read_mode: u32) -> Result<ReadMode, Failure> {
    match read_mode {
        FVM_READ_VALIDATING => Ok(ReadMode::Validating),
        FVM_READ_TRUSTED => Ok(ReadMode::Trusted),
        _ => Err(unknown_read_mode(read_mode)),
    }
}

/// The error of a `read_mode` that is no mode.
#[cold]
#[inline(never)]
fn unknown_read_mode(read_mode: u32) -> Failure {
    Failure::argument(format!(
        "unknown read mode {read_mode}: FVM_READ_VALIDATING (0) or FVM_READ_TRUSTED (1)"
    ))
}

/// A compiled filter. Immutable: any number of threads may match with one filter at once.
pub struct FvmFilter {
    filter: Filter,
}

/// A set of subscriptions (any dialects and options), each a caller-chosen `uint64_t` id and a
/// filter. Internally locked: every function on a set may be called from any thread at any time;
/// matching calls run in parallel, and `fvm_set_add` / `fvm_set_remove` wait for the matching
/// calls in progress.
pub struct FvmSet {
    set: RwLock<Set>,
}

/// Filters and sets are shared between the caller's threads: the compiler checks that they may
/// be.
const _: () = {
    const fn shared_between_threads<T: Send + Sync>() {}
    shared_between_threads::<FvmFilter>();
    shared_between_threads::<FvmSet>();
};

/// What went wrong: a status and one or more details (code, JSON Pointer, message; for
/// `FVM_PARTIAL`, one detail per group of subscriptions that could not judge the message, with
/// its dialect, options and subscription count). Owned by the caller; free it with
/// `fvm_error_free`.
pub struct FvmError {
    status: i32,
    details: Vec<ErrorDetail>,
}

struct ErrorDetail {
    code: Vec<u8>,
    pointer: Vec<u8>,
    message: Vec<u8>,
    /// The group's dialect, options (JSON, NUL-terminated) and subscription count, for a
    /// detail about a group of a set that could not judge a message.
    group: Option<(&'static CStr, Vec<u8>, usize)>,
}

/// One typed attribute of a message: name and value are byte strings, read where they lie
/// (nothing is copied; a value that is not UTF-8 is present but satisfies no string test), the
/// type a NUL-terminated name (`"String"`, `"Number"`, `"String.Array"`, `"Binary"`, or an SNS
/// custom `"String.x"`, `"Number.x"`, `"Binary.x"`; another name makes the attributes
/// unreadable: `INVALID_MESSAGE` for the filters that read them). For `String.Array` the value is
/// the JSON text of an array.
#[repr(C)]
pub struct FvmAttribute {
    /// The name (case-sensitive).
    pub name: *const u8,
    /// Its length in bytes.
    pub name_len: usize,
    /// The type name, NUL-terminated.
    pub data_type: *const c_char,
    /// The value text.
    pub value: *const u8,
    /// Its length in bytes.
    pub value_len: usize,
}

/// One header value: a name and a value, byte strings read where they lie. A name given several
/// times is a header with several values: `expr` filters read them all (any may match), a
/// `stream` header has one value (a `stream` filter reports `INVALID_MESSAGE` naming the header;
/// in a set, the other groups still judge the message).
#[repr(C)]
pub struct FvmHeader {
    /// The name (case-sensitive).
    pub name: *const u8,
    /// Its length in bytes.
    pub name_len: usize,
    /// The value.
    pub value: *const u8,
    /// Its length in bytes.
    pub value_len: usize,
}

/// A message: one JSON document as received (`FVM_PART_JSON` alone: the parts shape
/// `{"attributes", "headers", "body"}`, the AWS SNS Publish and notification shapes, or any other
/// document as the body itself, e.g. an Event Grid event), or the parts the caller holds
/// (`FVM_PART_BODY`, `FVM_PART_ATTRIBUTES`, `FVM_PART_HEADERS`, any of them); the other fields
/// are ignored. The bytes are read where they lie and nothing is kept after the call returns.
///
/// Each filter reads the part its dialect needs: `sns` (attribute scope) and `basaltic` the
/// attributes, `sns` (`MessageBody` scope), `eventgrid` and `eventbridge` the body (an Event
/// Grid event is one JSON object: give each event of a batch on its own, `fvm_read_events`; an
/// EventBridge event is the whole document, whatever its member names), `stream` and `expr` the
/// headers. A message without attributes has the empty attribute set (sns rule 12: only
/// `{}` matches it); a message without the body or headers a filter reads is `MESSAGE_SHAPE`.
/// The library's documentation (`filtervm/MESSAGES.md`) has the table of every situation.
#[repr(C)]
pub struct FvmMessage {
    /// Which parts are given: `FVM_PART_*` bits.
    pub parts: u32,
    /// `FVM_PART_JSON`: the message as one JSON document.
    pub json: *const u8,
    /// Its length in bytes.
    pub json_len: usize,
    /// `FVM_PART_BODY`: the raw body.
    pub body: *const u8,
    /// Its length in bytes.
    pub body_len: usize,
    /// `FVM_PART_ATTRIBUTES`: `attribute_count` attributes (may be 0).
    pub attributes: *const FvmAttribute,
    /// The number of attributes.
    pub attribute_count: usize,
    /// `FVM_PART_HEADERS`: `header_count` header values (may be 0).
    pub headers: *const FvmHeader,
    /// The number of header values.
    pub header_count: usize,
}

fn status_of(kind: FailureKind) -> i32 {
    match kind {
        FailureKind::Policy => FVM_ERR_POLICY,
        FailureKind::Message => FVM_ERR_MESSAGE,
        FailureKind::Load => FVM_ERR_LOAD,
        FailureKind::Argument => FVM_ERR_ARGUMENT,
        FailureKind::Set => FVM_ERR_SET,
    }
}

/// Text as a NUL-terminated byte buffer (interior NULs are kept; callers get the length).
fn terminated(text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(0);
    bytes
}

impl FvmError {
    fn from_failure(failure: &Failure) -> FvmError {
        FvmError {
            status: status_of(failure.kind),
            details: failure
                .details
                .iter()
                .map(|d| ErrorDetail {
                    code: terminated(d.code),
                    pointer: terminated(&d.pointer),
                    message: terminated(&d.message),
                    group: None,
                })
                .collect(),
        }
    }

    /// `FVM_PARTIAL`: the groups of a set that could not judge a message.
    fn partial(groups: &[Unjudged]) -> FvmError {
        FvmError {
            status: FVM_PARTIAL,
            details: groups
                .iter()
                .map(|g| ErrorDetail {
                    code: terminated(g.code),
                    pointer: terminated(&g.pointer),
                    message: terminated(&g.message),
                    group: Some((
                        dialect_name(g.dialect),
                        terminated(&g.options),
                        g.subscriptions,
                    )),
                })
                .collect(),
        }
    }

    fn panic(payload: &(dyn std::any::Any + Send)) -> FvmError {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        FvmError {
            status: FVM_ERR_PANIC,
            details: vec![ErrorDetail {
                code: terminated(PANIC),
                pointer: terminated(""),
                message: terminated(&format!("internal error in filtervm (a bug): {what}")),
                group: None,
            }],
        }
    }
}

/// Stores `e` in `*out` when `out` is not NULL; returns its status.
///
/// # Safety
/// `out` is NULL or valid for a write.
unsafe fn report(out: *mut *mut FvmError, e: FvmError) -> i32 {
    let status = e.status;
    if !out.is_null() {
        // SAFETY: the caller passes NULL or a pointer valid for a write.
        unsafe { *out = Box::into_raw(Box::new(e)) };
    }
    status
}

/// Runs `body`, catching a panic; the result or the failure goes through `error`. Inline: every
/// entry point passes here; what a failure or a panic needs is built out of line.
///
/// # Safety
/// `error` is NULL or valid for a write.
#[inline(always)]
unsafe fn guard<E: IntoFailure>(
    error: *mut *mut FvmError,
    body: impl FnOnce() -> Result<i32, E>,
) -> i32 {
    if !error.is_null() {
        // SAFETY: the caller passes NULL or a pointer valid for a write.
        unsafe { *error = std::ptr::null_mut() };
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status,
        // SAFETY: as above.
        Ok(Err(failure)) => unsafe { failed(error, &failure.into_failure()) },
        // SAFETY: as above.
        Err(payload) => unsafe { panicked(error, payload.as_ref()) },
    }
}

/// A failure on the path of the matching calls, boxed: a result of it is two words (returned in
/// registers, not through memory), and the box is made out of line, only for a failure.
pub(crate) struct Fail(Box<Failure>);

impl<E: Into<Failure>> From<E> for Fail {
    #[cold]
    #[inline(never)]
    fn from(e: E) -> Fail {
        Fail(Box::new(e.into()))
    }
}

/// The failure a [`guard`]ed body reports: a [`Failure`] or a [`Fail`].
trait IntoFailure {
    /// The failure.
    fn into_failure(self) -> Failure;
}

impl IntoFailure for Failure {
    fn into_failure(self) -> Failure {
        self
    }
}

impl IntoFailure for Fail {
    fn into_failure(self) -> Failure {
        *self.0
    }
}

/// [`guard`]'s failure: its status, the error stored in `*error`.
///
/// # Safety
/// `error` is NULL or valid for a write.
#[cold]
#[inline(never)]
unsafe fn failed(error: *mut *mut FvmError, failure: &Failure) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { report(error, FvmError::from_failure(failure)) }
}

/// [`guard`]'s caught panic: `FVM_ERR_PANIC`, the error stored in `*error`.
///
/// # Safety
/// `error` is NULL or valid for a write.
#[cold]
#[inline(never)]
unsafe fn panicked(error: *mut *mut FvmError, payload: &(dyn std::any::Any + Send)) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { report(error, FvmError::panic(payload)) }
}

/// A NUL-terminated string as UTF-8.
///
/// # Safety
/// Unless NULL, `ptr` is a NUL-terminated string.
unsafe fn c_str<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::argument(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated (the caller's promise).
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str()
        .map_err(|_| Failure::argument(format!("{what} is not UTF-8")))
}

/// The library's version (`"0.1.0"`), a static NUL-terminated string.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn fvm_version() -> *const c_char {
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}

/// Compiles a policy.
///
/// `dialect` is `"sns"`, `"basaltic"`, `"eventgrid"`, `"stream"`, `"expr"` or `"eventbridge"`
/// (NUL-terminated).
/// `policy` is JSON text (for `stream` also the text form `region = eu-* and n > 5`), at most
/// 256 KiB. `options` is the dialect's options as JSON text (`{"scope": "MessageBody"}`), or
/// NULL for the defaults. On success stores a new filter in `*out` (free it with
/// `fvm_filter_free`) and returns `FVM_OK`; an invalid policy or options returns
/// `FVM_ERR_POLICY` with every error (code, JSON Pointer, message).
///
/// Thread-safe.
///
/// # Safety
/// `dialect` is NULL or NUL-terminated; `policy`/`options` point to their lengths of bytes
/// (or are NULL); `out` is valid for a write; `error` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_compile(
    dialect: *const c_char,
    policy: *const u8,
    policy_len: usize,
    options: *const u8,
    options_len: usize,
    out: *mut *mut FvmFilter,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if out.is_null() {
                return Err(Failure::argument("`out` is NULL"));
            }
            *out = std::ptr::null_mut();
            let dialect = c_str(dialect, "the dialect")?;
            let policy = bytes(policy, policy_len, "the policy")?;
            let options = if options.is_null() {
                None
            } else {
                Some(bytes(options, options_len, "the options")?)
            };
            let filter = Filter::compile(dialect, policy, options)?;
            *out = Box::into_raw(Box::new(FvmFilter { filter }));
            Ok(FVM_OK)
        })
    }
}

/// Frees a filter (NULL is ignored). Sets that hold it keep their own copy.
///
/// Not thread-safe for this filter: no other call may be using it.
///
/// # Safety
/// `filter` is NULL or a filter from this library not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_free(filter: *mut FvmFilter) {
    if !filter.is_null() {
        // SAFETY: a filter made by `Box::into_raw` and not freed yet (the caller's promise).
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(filter) })));
    }
}

/// The filter's dialect name, a static NUL-terminated string (NULL when `filter` is NULL).
///
/// Thread-safe.
///
/// # Safety
/// `filter` is NULL or a live filter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_dialect(filter: *const FvmFilter) -> *const c_char {
    if filter.is_null() {
        return std::ptr::null();
    }
    // SAFETY: a live filter (the caller's promise).
    dialect_name(unsafe { &*filter }.filter.dialect()).as_ptr()
}

/// A dialect's name as a static C string.
fn dialect_name(name: &str) -> &'static CStr {
    match name {
        "sns" => c"sns",
        "basaltic" => c"basaltic",
        "eventgrid" => c"eventgrid",
        "stream" => c"stream",
        "expr" => c"expr",
        "eventbridge" => c"eventbridge",
        _ => c"unknown",
    }
}

/// Whether `message` matches: `FVM_MATCH` (1), `FVM_NO_MATCH` (0), or a negative status
/// (`FVM_ERR_MESSAGE` when the message cannot be read for this filter or lacks the part it
/// reads).
///
/// Thread-safe: any number of threads may match with one filter at once (each thread keeps its
/// own evaluation buffers).
///
/// # Safety
/// `filter` is a live filter; `message` is valid as documented on `fvm_message`; `error` is
/// NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_matches(
    filter: *const FvmFilter,
    message: *const FvmMessage,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, passed on.
    unsafe { filter_matches(filter, message, FVM_READ_VALIDATING, error) }
}

/// `fvm_filter_matches`, reading a JSON document or body in `read_mode` (`FVM_READ_VALIDATING`
/// or `FVM_READ_TRUSTED`; any other value is `FVM_ERR_ARGUMENT`).
///
/// Thread-safe.
///
/// # Safety
/// As `fvm_filter_matches`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_matches_read(
    filter: *const FvmFilter,
    message: *const FvmMessage,
    read_mode: u32,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, passed on.
    unsafe { filter_matches(filter, message, read_mode, error) }
}

/// `fvm_filter_matches_read` and `fvm_filter_matches` (`FVM_READ_VALIDATING`): inline, so that
/// a constant mode costs nothing.
///
/// # Safety
/// As `fvm_filter_matches`.
#[inline(always)]
unsafe fn filter_matches(
    filter: *const FvmFilter,
    message: *const FvmMessage,
    read_mode: u32,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, move || -> Result<i32, Fail> {
            if filter.is_null() {
                return Err(Failure::argument("the filter is NULL").into());
            }
            let mode = self::read_mode(read_mode)?;
            let filter = &(*filter).filter;
            let mut read = Read::default();
            let m = read_message(message, &mut read)?;
            let matched = match mode {
                // `Filter::matches_in`'s way for this mode, without its test.
                ReadMode::Validating => validating(filter.facade(), &m.message())?,
                _ => matches_in(filter, m, mode)?,
            };
            Ok(verdict(matched))
        })
    }
}

thread_local! {
    /// Each thread's matching buffers for the validating mode: what the facade's
    /// `Filter::matches` caches per thread, held here so that a call reaches them without that
    /// function's frame and the copy of its result.
    static MATCHER: RefCell<Matcher> = RefCell::new(Matcher::new());
}

/// The facade's `Filter::matches` (the validating mode) with this crate's per-thread buffers.
#[inline(always)]
fn validating(
    filter: &filtervm_bindings::filtervm::Filter,
    message: &Message<'_, CAttributes<'_>, CHeaders<'_>>,
) -> Result<bool, MessageError> {
    let cached = MATCHER.try_with(|matcher| {
        // Busy only when a message's own code matches another message on this thread (never
        // for a C message): that one takes the facade's way.
        matcher
            .try_borrow_mut()
            .ok()
            .map(|mut matcher| matcher.matches(filter, message))
    });
    match cached {
        Ok(Some(verdict)) => verdict,
        _ => filter.matches(message),
    }
}

/// [`Filter::matches_in`] on `m`, out of line: the validating mode, every call's but those of
/// `fvm_filter_matches_read`'s trusted mode, keeps the inline path to itself.
#[inline(never)]
fn matches_in(filter: &Filter, m: CMessage<'_>, mode: ReadMode) -> Result<bool, Failure> {
    filter.matches_in(&m.input(), mode)
}

fn verdict(matched: bool) -> i32 {
    if matched { FVM_MATCH } else { FVM_NO_MATCH }
}

/// Whether a message given as one JSON document in the dialect's shape matches (the same as
/// `fvm_filter_matches` with only `FVM_PART_JSON`).
///
/// Thread-safe.
///
/// # Safety
/// `filter` is a live filter; `json` points to `json_len` bytes; `error` is NULL or valid for a
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_matches_json(
    filter: *const FvmFilter,
    json: *const u8,
    json_len: usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if filter.is_null() {
                return Err(Failure::argument("the filter is NULL"));
            }
            let json = bytes(json, json_len, "the message")?;
            let input: DocumentInput<'_> = Input::Document(json);
            Ok(verdict((*filter).filter.matches(&input)?))
        })
    }
}

/// Encodes the filter (program, dialect, options; the IR does not travel) into a new buffer:
/// `*out` and `*out_len`, freed with `fvm_bytes_free`.
///
/// Thread-safe.
///
/// # Safety
/// `filter` is a live filter; `out` and `out_len` are valid for writes; `error` is NULL or
/// valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_to_bytes(
    filter: *const FvmFilter,
    out: *mut *mut u8,
    out_len: *mut usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if filter.is_null() || out.is_null() || out_len.is_null() {
                return Err(Failure::argument("the filter, `out` or `out_len` is NULL"));
            }
            give_bytes((*filter).filter.to_bytes(), out, out_len);
            Ok(FVM_OK)
        })
    }
}

/// Stores `text` in a new buffer: `*out` and `*out_len`, freed with `fvm_bytes_free`.
///
/// # Safety
/// `out` and `out_len` are valid for writes.
unsafe fn give_text(text: String, out: *mut *mut u8, out_len: *mut usize) {
    // SAFETY: the caller's promise.
    unsafe { give_bytes(text.into_bytes(), out, out_len) }
}

/// Stores `bytes` in a new buffer: `*out` and `*out_len`, freed with `fvm_bytes_free`.
///
/// # Safety
/// `out` and `out_len` are valid for writes.
unsafe fn give_bytes(bytes: Vec<u8>, out: *mut *mut u8, out_len: *mut usize) {
    let boxed = bytes.into_boxed_slice();
    // SAFETY: valid for writes (the caller's promise).
    unsafe {
        *out_len = boxed.len();
        *out = Box::into_raw(boxed).cast::<u8>();
    }
}

/// A message `filter` matches (`matching` non-zero) or one it does not (`matching` zero), as
/// JSON text in a new buffer (`*out`, `*out_len`; not NUL-terminated; free it with
/// `fvm_bytes_free`): `{"found": true, "matches": BOOL, "message": {...}}` (the message in the
/// dialect's shape, as `fvm_filter_matches_json` reads it, judged by the VM) or
/// `{"found": false, "matches": BOOL, "exact": BOOL, "reason": TEXT | null}` — `exact`: no such
/// message exists (proved); otherwise `reason` says why the search was bounded. The shape of
/// `filtervm example --json`, without `verified_by`. A filter loaded from bytes of the first wire
/// format (which shipped no IR) returns `FVM_ERR_LOAD` (`ANALYSIS_NO_IR`).
///
/// Thread-safe.
///
/// # Safety
/// `filter` is a live filter; `out` and `out_len` are valid for writes; `error` is NULL or
/// valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_example(
    filter: *const FvmFilter,
    matching: i32,
    out: *mut *mut u8,
    out_len: *mut usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if filter.is_null() || out.is_null() || out_len.is_null() {
                return Err(Failure::argument("the filter, `out` or `out_len` is NULL"));
            }
            *out = std::ptr::null_mut();
            *out_len = 0;
            let text = filtervm_bindings::example(&(*filter).filter, matching != 0)?;
            give_text(text, out, out_len);
            Ok(FVM_OK)
        })
    }
}

/// Whether two filters reading the same part of a message match exactly the same messages, as
/// JSON text in a new buffer (`*out`, `*out_len`; not NUL-terminated; free it with
/// `fvm_bytes_free`): `{"verdict": "same" | "different" | "unknown", "exact", "reason",
/// "first_only", "second_only" (a message only that filter matches, or null), "keys": [{"key",
/// "first_only", "second_only"}]}` — the shape of `filtervm diff --json`, without
/// `verified_by`. Filters of two message models return `FVM_ERR_ARGUMENT`
/// (`ANALYSIS_MODEL_MISMATCH`); a filter loaded from bytes of the first wire format (no IR)
/// `FVM_ERR_LOAD` (`ANALYSIS_NO_IR`).
///
/// Thread-safe.
///
/// # Safety
/// `first` and `second` are live filters; `out` and `out_len` are valid for writes; `error` is
/// NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_diff(
    first: *const FvmFilter,
    second: *const FvmFilter,
    out: *mut *mut u8,
    out_len: *mut usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, passed on; a NULL `assume` assumes nothing.
    unsafe { fvm_filter_diff_assuming(first, second, std::ptr::null(), out, out_len, error) }
}

/// `fvm_filter_diff` over the documents the assumptions `assume` admit: a NUL-terminated,
/// comma-separated list of `canonical-documents` (no member named twice, numbers in their
/// shortest round-trip form, member names spelled as the filters spell them), `no-arrays` (no
/// array at or on the way to a member the filters read) and `none`; NULL or `""` assume
/// nothing. The search builds no other document, and the JSON names them (`"assuming":
/// [NAME, ...]`, left out when nothing is assumed). An unknown name returns
/// `FVM_ERR_ARGUMENT` (`ANALYSIS_ASSUMPTION`).
///
/// Thread-safe.
///
/// # Safety
/// As `fvm_filter_diff`; `assume` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_diff_assuming(
    first: *const FvmFilter,
    second: *const FvmFilter,
    assume: *const c_char,
    out: *mut *mut u8,
    out_len: *mut usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if first.is_null() || second.is_null() || out.is_null() || out_len.is_null() {
                return Err(Failure::argument("a filter, `out` or `out_len` is NULL"));
            }
            *out = std::ptr::null_mut();
            *out_len = 0;
            let assume = if assume.is_null() {
                ""
            } else {
                c_str(assume, "`assume`")?
            };
            let text =
                filtervm_bindings::diff_assuming(&(*first).filter, &(*second).filter, assume)?;
            give_text(text, out, out_len);
            Ok(FVM_OK)
        })
    }
}

/// Frees a buffer from `fvm_filter_to_bytes`, `fvm_filter_example`, `fvm_filter_diff` or
/// `fvm_filter_diff_assuming` (NULL is ignored).
///
/// # Safety
/// `bytes` and `len` are exactly what one of those gave, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_bytes_free(bytes: *mut u8, len: usize) {
    if !bytes.is_null() {
        // SAFETY: a boxed slice of `len` bytes leaked by `give_bytes`.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(bytes, len)) });
        }));
    }
}

/// Loads a filter from `fvm_filter_to_bytes` output into `*out`. Any bytes may be given: the
/// program is verified, and bad bytes return `FVM_ERR_LOAD` (`INVALID_PROGRAM`,
/// `INVALID_FILTER_METADATA`, `INVALID_OPTIONS`). A loaded filter matches like the original and
/// can be added to sets.
///
/// Thread-safe.
///
/// # Safety
/// `bytes` points to `len` bytes; `out` is valid for a write; `error` is NULL or valid for a
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_filter_from_bytes(
    bytes: *const u8,
    len: usize,
    out: *mut *mut FvmFilter,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if out.is_null() {
                return Err(Failure::argument("`out` is NULL"));
            }
            *out = std::ptr::null_mut();
            let filter = Filter::from_bytes(self::bytes(bytes, len, "the bytes")?)?;
            *out = Box::into_raw(Box::new(FvmFilter { filter }));
            Ok(FVM_OK)
        })
    }
}

/// A new, empty set (free it with `fvm_set_free`). NULL only if a bug was caught.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn fvm_set_new() -> *mut FvmSet {
    catch_unwind(|| {
        Box::into_raw(Box::new(FvmSet {
            set: RwLock::new(Set::new()),
        }))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a set (NULL is ignored).
///
/// Not thread-safe for this set: no other call may be using it.
///
/// # Safety
/// `set` is NULL or a set from `fvm_set_new` not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_set_free(set: *mut FvmSet) {
    if !set.is_null() {
        // SAFETY: a set made by `Box::into_raw` and not freed yet (the caller's promise).
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(set) })));
    }
}

/// The set's lock. A lock poisoned by a caught panic (a bug) fails every later call with
/// `FVM_ERR_PANIC`: the set may be inconsistent.
fn lock_failed<E, T>(_: E) -> T {
    std::panic::resume_unwind(Box::new(
        "an earlier call on this set failed inside filtervm and may have left it inconsistent: \
         free it and build a new one",
    ))
}

/// Adds subscription `id` with `filter`, replacing its filter if `id` is already in the set.
/// The set keeps its own copy: the filter may be freed afterwards.
///
/// Thread-safe (waits for matching calls in progress on this set).
///
/// # Safety
/// `set` and `filter` are live; `error` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_set_add(
    set: *mut FvmSet,
    id: u64,
    filter: *const FvmFilter,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if set.is_null() || filter.is_null() {
                return Err(Failure::argument("the set or the filter is NULL"));
            }
            let mut held = (*set).set.write().unwrap_or_else(lock_failed);
            held.add(id, &(*filter).filter)?;
            Ok(FVM_OK)
        })
    }
}

/// Removes subscription `id`: 1 when it was in the set, 0 when it was not, or a negative
/// status.
///
/// Thread-safe (waits for matching calls in progress on this set).
///
/// # Safety
/// `set` is live; `error` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_set_remove(
    set: *mut FvmSet,
    id: u64,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if set.is_null() {
                return Err(Failure::argument("the set is NULL"));
            }
            let mut held = (*set).set.write().unwrap_or_else(lock_failed);
            Ok(i32::from(held.remove(id)))
        })
    }
}

/// The number of subscriptions in the set (0 for NULL).
///
/// Thread-safe.
///
/// # Safety
/// `set` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_set_len(set: *const FvmSet) -> usize {
    if set.is_null() {
        return 0;
    }
    // SAFETY: a live set (the caller's promise).
    let set = unsafe { &*set };
    catch_unwind(AssertUnwindSafe(|| set.set.read().map_or(0, |s| s.len()))).unwrap_or(0)
}

thread_local! {
    /// Each thread's buffers of matching ids and unjudged groups, reused across calls.
    static FOUND: RefCell<(Vec<u64>, Vec<Unjudged>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// The ids of the subscriptions whose filter matches `message`, in the order they were first
/// added.
///
/// Writes the number of matching ids to `*count`. When it is at most `capacity`, the ids are in
/// `ids[0..*count]` and the status is `FVM_OK`, or `FVM_PARTIAL` when some groups of
/// subscriptions (one dialect and options each) could not judge the message: `*error` then lists
/// each such group — its code (`MESSAGE_SHAPE`: the message lacks the part the group reads;
/// `INVALID_MESSAGE`: the part breaks the dialect's rules, e.g. a `stream` header given two
/// values; ...), message, dialect, options and number of subscriptions — and the ids of every
/// other group are written: one group's subscribers never lose a message because another cannot
/// read it. When the count is above `capacity`, the first `capacity` ids are written and the
/// status is `FVM_ERR_BUFFER_TOO_SMALL` (no error object): call again with a buffer of `*count`
/// ids. `ids` may be NULL when `capacity` is 0 (to ask for the size).
///
/// Thread-safe: any number of threads may match with one set at once.
///
/// # Safety
/// `set` is live; `message` is valid as documented on `fvm_message`; `ids` is NULL or valid
/// for `capacity` writes; `count` is valid for a write; `error` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_set_matching(
    set: *const FvmSet,
    message: *const FvmMessage,
    ids: *mut u64,
    capacity: usize,
    count: *mut usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, passed on.
    unsafe {
        fvm_set_matching_read(
            set,
            message,
            FVM_READ_VALIDATING,
            ids,
            capacity,
            count,
            error,
        )
    }
}

/// `fvm_set_matching`, reading a JSON document or body in `read_mode` (`FVM_READ_VALIDATING` or
/// `FVM_READ_TRUSTED`; any other value is `FVM_ERR_ARGUMENT`).
///
/// Thread-safe.
///
/// # Safety
/// As `fvm_set_matching`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_set_matching_read(
    set: *const FvmSet,
    message: *const FvmMessage,
    read_mode: u32,
    ids: *mut u64,
    capacity: usize,
    count: *mut usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, move || {
            if set.is_null() || count.is_null() {
                return Err(Failure::argument("the set or `count` is NULL"));
            }
            *count = 0;
            if ids.is_null() && capacity > 0 {
                return Err(Failure::argument("`ids` is NULL with a capacity above 0"));
            }
            let mode = self::read_mode(read_mode)?;
            let held = (*set).set.read().unwrap_or_else(lock_failed);
            FOUND.with(|found| {
                let (found, unjudged) = &mut *found.borrow_mut();
                found.clear();
                unjudged.clear();
                let mut read = Read::default();
                let m = read_message(message, &mut read)?;
                let complete = held.matching_in(&m.input(), mode, found, unjudged);
                *count = found.len();
                let n = found.len().min(capacity);
                if n > 0 {
                    // SAFETY: `ids` is valid for `capacity` writes, `n` at most that.
                    std::ptr::copy_nonoverlapping(found.as_ptr(), ids, n);
                }
                Ok(if found.len() > capacity {
                    FVM_ERR_BUFFER_TOO_SMALL
                } else if complete {
                    FVM_OK
                } else {
                    // SAFETY: `error` is NULL or valid for a write (the caller's promise).
                    report(error, FvmError::partial(unjudged))
                })
            })
        })
    }
}

/// One event of a batch: its place in the document given to `fvm_read_events`.
#[repr(C)]
pub struct FvmSpan {
    /// The offset of its first byte.
    pub offset: usize,
    /// Its length in bytes.
    pub len: usize,
}

/// The events of one JSON document as Event Grid delivers them: for an array of events (a
/// batch, a CloudEvents batch) the span of each event, for any other document one span, the
/// whole of it. A filter judges one event (given whole, a batch is `INVALID_MESSAGE`): match
/// each span as the body (`FVM_PART_BODY`).
///
/// Writes the number of events to `*count`; the spans are in `spans[0..*count]` and the status
/// `FVM_OK` when they fit in `capacity`, else the first `capacity` are written and the status is
/// `FVM_ERR_BUFFER_TOO_SMALL` (no error object). Bytes that are not JSON are `FVM_ERR_MESSAGE`
/// (`MESSAGE_NOT_JSON`).
///
/// Thread-safe.
///
/// # Safety
/// `json` points to `json_len` bytes; `spans` is NULL or valid for `capacity` writes; `count` is
/// valid for a write; `error` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_read_events(
    json: *const u8,
    json_len: usize,
    spans: *mut FvmSpan,
    capacity: usize,
    count: *mut usize,
    error: *mut *mut FvmError,
) -> i32 {
    // SAFETY: the caller's promises, checked for NULL inside.
    unsafe {
        guard(error, || {
            if count.is_null() {
                return Err(Failure::argument("`count` is NULL"));
            }
            *count = 0;
            if spans.is_null() && capacity > 0 {
                return Err(Failure::argument("`spans` is NULL with a capacity above 0"));
            }
            let json = bytes(json, json_len, "the document")?;
            let events = filtervm_bindings::read_events(json)?;
            *count = events.len();
            for (i, event) in events.iter().take(capacity).enumerate() {
                // SAFETY: `spans` is valid for `capacity` writes, `i` below that.
                spans.add(i).write(FvmSpan {
                    offset: event.start,
                    len: event.len(),
                });
            }
            Ok(if events.len() > capacity {
                FVM_ERR_BUFFER_TOO_SMALL
            } else {
                FVM_OK
            })
        })
    }
}

/// The status the failed call returned (`FVM_ERR_*`); 0 for NULL.
///
/// Thread-safe (an error object is read-only).
///
/// # Safety
/// `error` is NULL or a live error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_status(error: *const FvmError) -> i32 {
    // SAFETY: NULL or live (the caller's promise).
    unsafe { error.as_ref() }.map_or(0, |e| e.status)
}

/// The number of details (at least 1; 0 for NULL). A policy error lists every problem of the
/// policy.
///
/// Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_count(error: *const FvmError) -> usize {
    // SAFETY: NULL or live (the caller's promise).
    unsafe { error.as_ref() }.map_or(0, |e| e.details.len())
}

/// Detail `index`'s field chosen by `field`, with its length in `*len` (when `len` is not NULL).
///
/// # Safety
/// `error` is NULL or live; `len` is NULL or valid for a write.
unsafe fn detail_field(
    error: *const FvmError,
    index: usize,
    len: *mut usize,
    field: fn(&ErrorDetail) -> Option<&[u8]>,
) -> *const c_char {
    // SAFETY: NULL or live (the caller's promise).
    let text = unsafe { error.as_ref() }
        .and_then(|e| e.details.get(index))
        .and_then(field);
    if !len.is_null() {
        // SAFETY: valid for a write (the caller's promise).
        unsafe { *len = text.map_or(0, |t| t.len().saturating_sub(1)) };
    }
    text.map_or(std::ptr::null(), |t| t.as_ptr().cast::<c_char>())
}

/// Detail `index`'s stable code (`"SNS_TYPE_ERROR"`, `"INVALID_MESSAGE"`, `"INVALID_ARGUMENT"`,
/// ...), NUL-terminated, owned by the error; NULL when `index` is out of range.
///
/// Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_code(error: *const FvmError, index: usize) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe { detail_field(error, index, std::ptr::null_mut(), |d| Some(&d.code)) }
}

/// Detail `index`'s JSON Pointer into the policy or message (`""` for the whole of it; for the
/// stream text form a byte span `bytes A..B`), NUL-terminated, owned by the error; its length in
/// `*len` when `len` is not NULL (a pointer may hold a NUL byte from a member name). NULL when
/// `index` is out of range.
///
/// Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error; `len` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_pointer(
    error: *const FvmError,
    index: usize,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe { detail_field(error, index, len, |d| Some(&d.pointer)) }
}

/// Detail `index`'s message (UTF-8, NUL-terminated, owned by the error; its length in `*len`
/// when `len` is not NULL). NULL when `index` is out of range.
///
/// Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error; `len` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_message(
    error: *const FvmError,
    index: usize,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe { detail_field(error, index, len, |d| Some(&d.message)) }
}

/// The group detail `index` is about (a detail of an `FVM_PARTIAL` error): its dialect's name, a
/// static NUL-terminated string; NULL for a detail about no group, or `index` out of range.
///
/// Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_dialect(error: *const FvmError, index: usize) -> *const c_char {
    // SAFETY: NULL or live (the caller's promise).
    unsafe { error.as_ref() }
        .and_then(|e| e.details.get(index))
        .and_then(|d| d.group.as_ref())
        .map_or(std::ptr::null(), |(dialect, ..)| dialect.as_ptr())
}

/// The options of the group detail `index` is about, as JSON text with every option written out
/// (`{}` for a dialect without options), NUL-terminated, owned by the error; its length in
/// `*len` when `len` is not NULL. NULL for a detail about no group, or `index` out of range.
///
/// Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error; `len` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_options(
    error: *const FvmError,
    index: usize,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe {
        detail_field(error, index, len, |d| {
            d.group.as_ref().map(|(_, options, _)| options.as_slice())
        })
    }
}

/// The number of subscriptions of the group detail `index` is about (none of which was
/// judged); 0 for a detail about no group, or `index` out of range.
///
/// Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_subscriptions(error: *const FvmError, index: usize) -> usize {
    // SAFETY: NULL or live (the caller's promise).
    unsafe { error.as_ref() }
        .and_then(|e| e.details.get(index))
        .and_then(|d| d.group.as_ref())
        .map_or(0, |(.., subscriptions)| *subscriptions)
}

/// Frees an error (NULL is ignored).
///
/// Not thread-safe for this error: no other call may be using it.
///
/// # Safety
/// `error` is NULL or an error from this library not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fvm_error_free(error: *mut FvmError) {
    if !error.is_null() {
        // SAFETY: made by `Box::into_raw` and not freed yet (the caller's promise).
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(error) })));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_and_reported() {
        let mut error: *mut FvmError = std::ptr::null_mut();
        // SAFETY: `error` is valid for a write.
        let status = unsafe {
            guard(&mut error, || -> Result<i32, Failure> {
                let v: Vec<i32> = Vec::new();
                // A deliberate out-of-bounds index: the kind of bug the guard is for.
                Ok(v[1])
            })
        };
        assert_eq!(status, FVM_ERR_PANIC);
        // SAFETY: `guard` stored a live error.
        unsafe {
            assert_eq!(fvm_error_status(error), FVM_ERR_PANIC);
            let code = CStr::from_ptr(fvm_error_code(error, 0));
            assert_eq!(code.to_str().unwrap(), "PANIC");
            let message = CStr::from_ptr(fvm_error_message(error, 0, std::ptr::null_mut()));
            assert!(message.to_str().unwrap().contains("index out of bounds"));
            fvm_error_free(error);
        }
    }

    #[test]
    fn a_poisoned_set_reports_panic() {
        let set = fvm_set_new();
        // SAFETY: `set` is live; poison its lock with a panic while it is held.
        unsafe {
            let _ = catch_unwind(AssertUnwindSafe(|| {
                let _held = (*set).set.write().unwrap();
                panic!("poison");
            }));
            let mut error: *mut FvmError = std::ptr::null_mut();
            assert_eq!(fvm_set_remove(set, 1, &mut error), FVM_ERR_PANIC);
            assert_eq!(fvm_error_status(error), FVM_ERR_PANIC);
            fvm_error_free(error);
            fvm_set_free(set);
        }
    }
}

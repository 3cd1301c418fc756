//! `Filter.matches` and `SubscriptionSet.matching` entered straight from CPython: the calls a
//! broker makes once per message, `filter.matches(attributes=d)` and
//! `subscriptions.matching(attributes=d)`, without PyO3's argument parsing and call wrapper.
//!
//! PyO3 makes `Filter.matches` a method that parses its arguments by their names (each keyword
//! name read as UTF-8 and compared with the parameters') inside a wrapper that counts the thread
//! attached, applies deferred reference counts and catches panics: about 480 instructions a call,
//! more than the match itself (BENCHMARKS.md, "Python and C bindings"). [`install`] puts a
//! second method of the same name and documentation (so the same text signature) in front of
//! it: a `METH_FASTCALL | METH_KEYWORDS` C function that tells `matches(attributes=VALUE)` by one
//! pointer compare (keyword names written in Python code are interned) and matches it on
//! `Filter::matches_one_looked_up`'s path, the one PyO3's method takes first for the same
//! arguments. Any other call has its arguments read by their interned names as PyO3 reads them
//! (`None` for an optional argument is not given) and is matched by `Filter::matches_read`, the
//! rest of PyO3's method, with the thread attached as PyO3 attaches it. A call whose arguments
//! would raise (an unknown name, a parameter given twice, too many positional arguments, a
//! `read_mode` that is not a `str`) or whose names are not interned goes to PyO3's method itself,
//! so its errors are PyO3's, word for word. Same code for the same arguments: every verdict and
//! every error is the PyO3 method's.
//!
//! `SubscriptionSet.matching` ([`install_matching`]) is put in front of PyO3's method the same
//! way, more simply: its direct entry takes `matching(attributes=VALUE)` only, when
//! `SubscriptionSet::matching_looked_up` can (a `dict` of plain names and values), and hands
//! every other call to PyO3's method. Its result, a `Matches` list, is made by the type's
//! `tp_alloc` ([`new_empty_list`]).
#![expect(
    unsafe_code,
    reason = "a C function of CPython's calling convention (`METH_FASTCALL | METH_KEYWORDS`): \
              its arguments are raw object pointers, read as CPython documents them, and the \
              method is made with `PyDescr_NewMethod` from a `PyMethodDef` that lives as long as \
              the process"
)]

use crate::plain;
use crate::{Filter, SubscriptionSet};
use filtervm_bindings::filtervm::ReadMode;
use pyo3::Borrowed;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyString, PyType};
use std::panic::AssertUnwindSafe;

/// PyO3's `Filter.matches`: the calls whose arguments [`matches`] does not read itself.
static GENERAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// PyO3's `SubscriptionSet.matching`: the calls [`matching`] does not take itself.
static GENERAL_MATCHING: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Puts [`matches`] in front of PyO3's `matches` method of `ty` (the `Filter` type), with its
/// name and documentation (so its text signature too). Leaves PyO3's method alone when it is not
/// a plain method descriptor (nothing is installed then).
pub fn install(ty: &Bound<'_, PyType>) -> PyResult<()> {
    put_in_front(ty, c"matches", matches, &GENERAL)
}

/// Puts [`matching`] in front of PyO3's `matching` method of `ty` (the `SubscriptionSet` type),
/// as [`install`] does for `Filter.matches`.
pub fn install_matching(ty: &Bound<'_, PyType>) -> PyResult<()> {
    put_in_front(ty, c"matching", matching, &GENERAL_MATCHING)
}

/// A C method of CPython's `METH_FASTCALL | METH_KEYWORDS` convention.
type FastMethod = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// Puts `method` in front of PyO3's method `name` of `ty`, with its name and documentation (so
/// its text signature too), keeping PyO3's in `general`. Leaves PyO3's method alone when it is
/// not a plain method descriptor (nothing is installed then).
fn put_in_front(
    ty: &Bound<'_, PyType>,
    name: &'static std::ffi::CStr,
    method: FastMethod,
    general: &PyOnceLock<Py<PyAny>>,
) -> PyResult<()> {
    let py = ty.py();
    let text = name
        .to_str()
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let pyo3s = ty.getattr(text)?;
    // SAFETY: a type check of a live object, then the descriptor's layout read as CPython
    // declares it (`PyMethodDescrObject`): its method definition lives as long as the type.
    let doc = unsafe {
        if ffi::Py_TYPE(pyo3s.as_ptr()) != &raw mut ffi::PyMethodDescr_Type {
            return Ok(());
        }
        (*(*pyo3s.as_ptr().cast::<ffi::PyMethodDescrObject>()).d_method).ml_doc
    };
    if general.set(py, pyo3s.unbind()).is_err() {
        // Installed already (the type's method is this module's).
        return Ok(());
    }
    // CPython keeps the pointer in the method it makes, for as long as the process runs: the
    // definition is made once and never freed.
    let definition: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: method,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc,
    }));
    // SAFETY: a live heap type and a method definition that outlives it.
    let method = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(ty.as_type_ptr(), definition))?
    };
    ty.setattr(text, method)
}

/// `Filter.matches` as CPython calls it: `slf` the filter (the method's descriptor checked its
/// type), `args` the `nargs` positional arguments followed by one value per name of the tuple
/// `kwnames` (NULL without keywords). Returns a new reference, or NULL with the exception set.
unsafe extern "C" fn matches(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls a C method with the GIL held, the thread attached; the token does not
    // outlive the call.
    let py = unsafe { Python::assume_attached() };
    // A panic must not unwind into CPython: it is raised, as PyO3 raises it. The hot path
    // carries only the verdict; an error is set aside in `error`.
    let mut error = None;
    let mut to_read = None;
    let step = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the arguments as CPython passes them (above).
        unsafe { direct(py, slf, args, nargs, kwnames, &mut error, &mut to_read) }
    }));
    match step {
        Ok(Step::Verdict(matched)) => return PyBool::new(py, matched).to_owned().into_ptr(),
        // SAFETY: the arguments as CPython passes them (above).
        Ok(Step::PyO3) => return unsafe { pyo3_method(py, &GENERAL, slf, args, nargs, kwnames) },
        _ => {}
    }
    // Everything else runs attached as PyO3 attaches its methods, so that the references it
    // drops are released at once (PyO3 defers them when it does not count the thread attached,
    // until a PyO3 method next runs).
    Python::attach(|py| {
        let result = match (step, error, to_read) {
            (Ok(Step::Read), None, Some(call)) => {
                std::panic::catch_unwind(AssertUnwindSafe(|| {
                    // SAFETY: `slf` as CPython passes it (above).
                    unsafe { read(py, slf, &call) }
                }))
                .unwrap_or_else(|_| Err(panicked()))
            }
            (Ok(_), Some(error), _) => Err(error),
            _ => Err(panicked()),
        };
        match result {
            Ok(matched) => PyBool::new(py, matched).to_owned().into_ptr(),
            Err(error) => {
                error.restore(py);
                std::ptr::null_mut()
            }
        }
    })
}

/// What [`direct`] did with a call.
enum Step {
    /// Matched by `Filter::matches_one_looked_up`.
    Verdict(bool),
    /// To read the general way, attached ([`read`]): the call is set aside.
    Read,
    /// Raised the error set aside.
    Raised,
    /// Not read here: handed to PyO3's method ([`pyo3_method`]).
    PyO3,
}

/// The exception of a panic in [`matches`].
#[cold]
fn panicked() -> PyErr {
    pyo3::panic::PanicException::new_err("panic in Filter.matches")
}

/// The names of `matches`' parameters, interned, in the order of [`Call`]'s slots.
static PARAMETERS: PyOnceLock<[Py<PyString>; 5]> = PyOnceLock::new();

/// The arguments of a call as `matches`' signature (`message = None, *, attributes = None,
/// headers = None, body = None, read_mode = "validating"`) reads them, each the object given
/// (`None`: not given, or given as `None`, as PyO3 reads an optional argument).
struct Call<'a, 'py> {
    message: Option<Borrowed<'a, 'py, PyAny>>,
    attributes: Option<Borrowed<'a, 'py, PyAny>>,
    headers: Option<Borrowed<'a, 'py, PyAny>>,
    body: Option<Borrowed<'a, 'py, PyAny>>,
    read_mode: ReadMode,
}

/// The arguments of a call, read by their interned keyword names; `Ok(None)` for a call whose
/// arguments PyO3 reads, to raise its error or to read a name given as a `str` made at run time:
/// more than one positional argument, a name that is not one of the parameters' interned names,
/// a parameter given twice, a `read_mode` that is not an ASCII `str` (the accepted values are).
/// `Err` for a `read_mode` of another value (its `ValueError`).
///
/// # Safety
/// `args`, `nargs` and `kwnames` as CPython passes them to [`matches`].
#[inline]
unsafe fn call<'a, 'py>(
    py: Python<'py>,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<Option<Call<'a, 'py>>> {
    if !(0..=1).contains(&nargs) {
        return Ok(None);
    }
    let [message, attributes, headers, body, read_mode] = PARAMETERS
        .get_or_init(py, || {
            ["message", "attributes", "headers", "body", "read_mode"]
                .map(|name| PyString::intern(py, name).unbind())
        })
        .each_ref()
        .map(|name| name.as_ptr());
    let mut slots = [std::ptr::null_mut::<ffi::PyObject>(); 5];
    // SAFETY: `kwnames` is NULL or a tuple of `str`; `args` holds `nargs` values and then one
    // per name, live objects the caller holds for the whole call (`Borrowed` for `'a`).
    unsafe {
        if nargs == 1 {
            slots[0] = *args;
        }
        let keywords = if kwnames.is_null() {
            0
        } else {
            ffi::PyTuple_GET_SIZE(kwnames)
        };
        for i in 0..keywords {
            let name = ffi::PyTuple_GET_ITEM(kwnames, i);
            // Keyword names written in Python code are interned: one pointer compare each.
            let slot = if name == attributes {
                &mut slots[1]
            } else if name == body {
                &mut slots[3]
            } else if name == headers {
                &mut slots[2]
            } else if name == read_mode {
                &mut slots[4]
            } else if name == message {
                &mut slots[0]
            } else {
                return Ok(None);
            };
            if !slot.is_null() {
                return Ok(None);
            }
            *slot = *args.offset(nargs + i);
        }
        let [message, attributes, headers, body, read_mode] = slots;
        let read_mode = if read_mode.is_null() {
            ReadMode::Validating
        } else {
            match Borrowed::from_ptr(py, read_mode)
                .cast::<PyString>()
                .ok()
                .and_then(|mode| plain::ascii(&mode).map(crate::read_mode))
            {
                Some(mode) => mode?,
                None => return Ok(None),
            }
        };
        // An optional argument given as `None` is not given (PyO3's reading of `Option`).
        let given = |value: *mut ffi::PyObject| {
            (!value.is_null() && value != ffi::Py_None()).then(|| Borrowed::from_ptr(py, value))
        };
        Ok(Some(Call {
            message: given(message),
            attributes: given(attributes),
            headers: given(headers),
            body: given(body),
            read_mode,
        }))
    }
}

/// The call matched when it is `matches(attributes=VALUE)` that `Filter::matches_one_looked_up`
/// takes, and otherwise what is left to do. An error is set aside in `error`.
///
/// # Safety
/// `slf`, `args`, `nargs` and `kwnames` as CPython passes them to [`matches`].
#[inline]
unsafe fn direct<'a, 'py>(
    py: Python<'py>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
    error: &mut Option<PyErr>,
    to_read: &mut Option<Call<'a, 'py>>,
) -> Step {
    // SAFETY: `slf` is a live `Filter`: the method's descriptor checked its type (CPython
    // checks it before calling a method of a type, bound or not), and `Filter` has no subclass.
    let filter = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<Filter>() };
    // The call a broker makes once per message, `matches(attributes=VALUE)`, told first by one
    // pointer compare (the keyword names written in Python code are interned).
    // SAFETY: `kwnames` is NULL or a tuple of `str`; with no positional argument and one name,
    // `args` holds that keyword's value, a live object the caller holds for the whole call.
    let tried = unsafe {
        nargs == 0
            && !kwnames.is_null()
            && ffi::PyTuple_GET_SIZE(kwnames) == 1
            && ffi::PyTuple_GET_ITEM(kwnames, 0) == pyo3::intern!(py, "attributes").as_ptr()
    };
    if tried {
        // SAFETY: as above.
        unsafe {
            match filter.get().matches_one_looked_up(
                py,
                &Borrowed::from_ptr(py, *args),
                ReadMode::Validating,
            ) {
                Ok(Some(matched)) => return Step::Verdict(matched),
                Ok(None) => {}
                Err(e) => {
                    *error = Some(e);
                    return Step::Raised;
                }
            }
        }
    }
    // SAFETY: as the function's.
    unsafe { other(py, filter, args, nargs, kwnames, tried, error, to_read) }
}

/// [`direct`] for every call but `matches(attributes=VALUE)` of a value
/// `Filter::matches_one_looked_up` takes (`tried`: that call, not taken).
///
/// # Safety
/// `args`, `nargs` and `kwnames` as CPython passes them to [`matches`].
#[inline(never)]
#[expect(
    clippy::too_many_arguments,
    reason = "the call's four C arguments, the filter, and where the outcome goes"
)]
unsafe fn other<'a, 'py>(
    py: Python<'py>,
    filter: Borrowed<'_, 'py, Filter>,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
    tried: bool,
    error: &mut Option<PyErr>,
    to_read: &mut Option<Call<'a, 'py>>,
) -> Step {
    // SAFETY: as the function's.
    let call = match unsafe { call(py, args, nargs, kwnames) } {
        Ok(Some(call)) => call,
        Ok(None) => return Step::PyO3,
        Err(e) => {
            *error = Some(e);
            return Step::Raised;
        }
    };
    if let Call {
        message: None,
        attributes: Some(attributes),
        headers: None,
        body: None,
        read_mode,
    } = call
        // Not this very call again: another read mode, or other arguments given as `None`.
        && !tried
    {
        match filter
            .get()
            .matches_one_looked_up(py, &attributes, read_mode)
        {
            Ok(Some(matched)) => return Step::Verdict(matched),
            Ok(None) => {}
            Err(e) => {
                *error = Some(e);
                return Step::Raised;
            }
        }
    }
    *to_read = Some(call);
    Step::Read
}

/// The call read the general way (`Filter::matches_read`, as PyO3's method reads it after
/// `matches_one_looked_up`), attached.
///
/// # Safety
/// `slf` as CPython passes it to [`matches`].
#[cold]
unsafe fn read(py: Python<'_>, slf: *mut ffi::PyObject, call: &Call<'_, '_>) -> PyResult<bool> {
    // SAFETY: as in `direct`.
    let filter = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<Filter>() };
    filter.get().matches_read(
        py,
        call.message.as_deref(),
        call.attributes.as_deref(),
        call.headers.as_deref(),
        call.body.as_deref(),
        call.read_mode,
    )
}

/// The call handed to PyO3's method, the filter first. Not attached: PyO3's method attaches.
///
/// # Safety
/// As [`direct`].
#[cold]
unsafe fn pyo3_method(
    py: Python<'_>,
    general: &PyOnceLock<Py<PyAny>>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let Some(general) = general.get(py) else {
        PyRuntimeError::new_err("the method is not installed").restore(py);
        return std::ptr::null_mut();
    };
    // SAFETY: `args` holds `nargs` values and one per keyword name; the vector borrows them, and
    // the filter, for the call it makes, whose result is a new reference or NULL with the
    // exception set.
    unsafe {
        let keywords = if kwnames.is_null() {
            0
        } else {
            ffi::PyTuple_GET_SIZE(kwnames)
        };
        let given = usize::try_from(nargs.saturating_add(keywords)).unwrap_or(0);
        let mut all = Vec::with_capacity(given.saturating_add(1));
        all.push(slf);
        if given > 0 {
            all.extend_from_slice(std::slice::from_raw_parts(args, given));
        }
        let positional = usize::try_from(nargs).unwrap_or(0).saturating_add(1);
        ffi::PyObject_Vectorcall(general.as_ptr(), all.as_ptr(), positional, kwnames)
    }
}

/// `SubscriptionSet.matching` as CPython calls it (the arguments as [`matches`] has them). The
/// call a broker makes once per message, `matching(attributes=VALUE)`, told by one pointer
/// compare, is matched here when `SubscriptionSet::matching_looked_up` takes it (a `dict` of
/// plain names and values, a set whose filters read a few named attributes); every other call,
/// and any that fails or panics here, is handed to PyO3's method, which reads it as it always
/// did (matching has no effect, so a call matched again there answers as it would have).
unsafe extern "C" fn matching(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls a C method with the GIL held, the thread attached; the token does not
    // outlive the call.
    let py = unsafe { Python::assume_attached() };
    let taken = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `kwnames` is NULL or a tuple of `str`; with no positional argument and one
        // name, `args` holds that keyword's value, a live object the caller holds for the whole
        // call. `slf` is a live `SubscriptionSet`: the method's descriptor checked its type, and
        // the type has no subclass.
        unsafe {
            let tried = nargs == 0
                && !kwnames.is_null()
                && ffi::PyTuple_GET_SIZE(kwnames) == 1
                && ffi::PyTuple_GET_ITEM(kwnames, 0) == pyo3::intern!(py, "attributes").as_ptr();
            if !tried {
                return None;
            }
            let set = Borrowed::from_ptr(py, slf).cast_unchecked::<SubscriptionSet>();
            set.get()
                .matching_looked_up(py, &Borrowed::from_ptr(py, *args), ReadMode::Validating)
                .ok()
                .flatten()
        }
    }));
    match taken {
        Ok(Some(matches)) => matches.into_ptr(),
        // SAFETY: the arguments as CPython passes them (above).
        _ => unsafe { pyo3_method(py, &GENERAL_MATCHING, slf, args, nargs, kwnames) },
    }
}

/// A new, empty list of type `ty`, a `list` subclass. When `ty` has no `__new__` or `__init__`
/// of its own it is made as `list()` makes a list, by the type's `tp_alloc` without a call
/// through the type (about 250 instructions less; `SubscriptionSet.matching` makes one per
/// message); otherwise the type is called.
pub fn new_empty_list<'py>(ty: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyAny>> {
    let py = ty.py();
    // SAFETY: `ty` is a live type object; its slots are read as CPython declares them.
    // `tp_alloc` of a `list` subclass whose `tp_new` and `tp_init` are `list`'s gives what
    // `list.__new__` gives, an empty list of the type, zeroed (list's `__init__` of no argument
    // leaves an empty list as it is): a new reference, or NULL with an exception set.
    unsafe {
        let t = ty.as_type_ptr();
        let list = &raw mut ffi::PyList_Type;
        if ffi::PyType_IsSubtype(t, list) != 0
            && let Some(alloc) = (*t).tp_alloc
            // CPython's slot values, read from the two types: the same C function is one
            // address in both.
            && (*t).tp_new.map(|f| f as *const ()) == (*list).tp_new.map(|f| f as *const ())
            && (*t).tp_init.map(|f| f as *const ()) == (*list).tp_init.map(|f| f as *const ())
        {
            return Bound::from_owned_ptr_or_err(py, alloc(t, 0));
        }
    }
    ty.call0()
}

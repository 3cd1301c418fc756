//! `Filter.matches` entered straight from CPython: the call a broker makes once per message,
//! `filter.matches(attributes=d)`, without PyO3's argument parsing and call wrapper.
//!
//! PyO3 makes `Filter.matches` a method that parses its arguments by their names (each keyword
//! name read as UTF-8 and compared with the parameters') inside a wrapper that counts the GIL,
//! applies deferred reference counts and catches panics: about 400 instructions a call, more
//! than the match itself (BENCHMARKS.md, "Python and C bindings"). [`install`] puts a second
//! method of the same name and documentation in front of it: a `METH_FASTCALL | METH_KEYWORDS`
//! C function that takes the one call shape `matches(attributes=VALUE)` (no positional
//! argument, one keyword, the interned name `attributes`) and `Filter::matches_one_looked_up`'s
//! path, and hands every other call, unchanged, to PyO3's method. Both reach the same code for
//! the same arguments, so every answer and every error is the general method's.
#![expect(
    unsafe_code,
    reason = "a C function of CPython's calling convention (`METH_FASTCALL | METH_KEYWORDS`): \
              its arguments are raw object pointers, read as CPython documents them, and the \
              method is made with `PyDescr_NewMethod` from a `PyMethodDef` that lives as long as \
              the process"
)]

use crate::Filter;
use filtervm_bindings::filtervm::ReadMode;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyType};
use std::panic::AssertUnwindSafe;

/// PyO3's `Filter.matches`: every call [`matches`] does not take itself.
static GENERAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Puts [`matches`] in front of PyO3's `matches` method of `ty` (the `Filter` type), with its
/// name and documentation (so its text signature too). Leaves PyO3's method alone when it is not
/// a plain method descriptor (nothing is installed then).
pub fn install(ty: &Bound<'_, PyType>) -> PyResult<()> {
    let py = ty.py();
    let general = ty.getattr("matches")?;
    // SAFETY: a type check of a live object, then the descriptor's layout read as CPython
    // declares it (`PyMethodDescrObject`): its method definition lives as long as the type.
    let doc = unsafe {
        if ffi::Py_TYPE(general.as_ptr()) != &raw mut ffi::PyMethodDescr_Type {
            return Ok(());
        }
        (*(*general.as_ptr().cast::<ffi::PyMethodDescrObject>()).d_method).ml_doc
    };
    if GENERAL.set(py, general.unbind()).is_err() {
        // Installed already (the type's `matches` is this module's method).
        return Ok(());
    }
    // CPython keeps the pointer in the method it makes, for as long as the process runs: the
    // definition is made once and never freed.
    let definition: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: c"matches".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: matches,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc,
    }));
    // SAFETY: a live heap type and a method definition that outlives it.
    let method = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(ty.as_type_ptr(), definition))?
    };
    ty.setattr("matches", method)
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
    let looked_up = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the arguments as CPython passes them (above).
        unsafe { looked_up(py, slf, args, nargs, kwnames, &mut error) }
    }));
    if let Ok(Some(matched)) = looked_up {
        return PyBool::new(py, matched).to_owned().into_ptr();
    }
    // Everything else runs attached as PyO3 attaches its methods, so that the references it
    // drops are released at once (PyO3 defers them when it does not count the thread attached).
    Python::attach(|py| {
        let result = match (looked_up, error) {
            (Err(_), _) => Err(panicked()),
            (_, Some(error)) => Err(error),
            _ => std::panic::catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: the arguments as CPython passes them (above).
                unsafe { general(py, slf, args, nargs, kwnames) }
            }))
            .unwrap_or_else(|_| Err(panicked())),
        };
        match result {
            Ok(object) => object.into_ptr(),
            Err(error) => {
                error.restore(py);
                std::ptr::null_mut()
            }
        }
    })
}

/// The exception of a panic in [`matches`].
#[cold]
fn panicked() -> PyErr {
    pyo3::panic::PanicException::new_err("panic in Filter.matches")
}

/// The value of `attributes=` when it is the call's only argument.
///
/// # Safety
/// `args`, `nargs` and `kwnames` as CPython passes them to [`matches`].
#[inline]
unsafe fn attributes_alone<'a, 'py>(
    py: Python<'py>,
    args: &'a *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> Option<&'a Bound<'py, PyAny>> {
    // SAFETY: `kwnames` is NULL or a tuple of `str`; with no positional argument and one name,
    // `args` holds that keyword's value, a live object the caller holds for the whole call.
    unsafe {
        (nargs == 0
            && !kwnames.is_null()
            && ffi::PyTuple_GET_SIZE(kwnames) == 1
            // Keyword names written in Python code are interned: one pointer compare. A name
            // that is not the interned `attributes` (one built at run time) goes to PyO3.
            && ffi::PyTuple_GET_ITEM(kwnames, 0) == pyo3::intern!(py, "attributes").as_ptr())
        .then(|| Bound::ref_from_ptr(py, &**args))
    }
}

/// The verdict of `Filter::matches_one_looked_up` for `matches(attributes=VALUE)`; `None` for
/// any other call, for a value that path does not take, and when it raises (the error is then
/// in `error`).
///
/// # Safety
/// As [`attributes_alone`]; `slf` a live object.
#[inline]
unsafe fn looked_up(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
    error: &mut Option<PyErr>,
) -> Option<bool> {
    // SAFETY: as the function's.
    let attributes = unsafe { attributes_alone(py, &args, nargs, kwnames) }?;
    // SAFETY: `slf` is a live object held by the caller for the whole call.
    let filter = unsafe { Bound::ref_from_ptr(py, &slf) }
        .cast::<Filter>()
        .ok()?;
    match filter
        .get()
        .matches_one_looked_up(py, attributes, ReadMode::Validating)
    {
        Ok(verdict) => verdict,
        Err(e) => {
            *error = Some(e);
            None
        }
    }
}

/// Every call [`looked_up`] does not take: `matches(attributes=VALUE)` read the general way
/// (`Filter::matches_read`, the walk already done), any other call handed to PyO3's method.
///
/// # Safety
/// As [`looked_up`].
#[cold]
unsafe fn general<'py>(
    py: Python<'py>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: as the function's.
    if let Some(attributes) = unsafe { attributes_alone(py, &args, nargs, kwnames) }
        // SAFETY: `slf` is a live object held by the caller for the whole call.
        && let Ok(filter) = unsafe { Bound::ref_from_ptr(py, &slf) }.cast::<Filter>()
    {
        let matched = filter.get().matches_read(
            py,
            None,
            Some(attributes),
            None,
            None,
            ReadMode::Validating,
        )?;
        return Ok(PyBool::new(py, matched).to_owned().into_any());
    }
    let Some(general) = GENERAL.get(py) else {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "Filter.matches is not installed",
        ));
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
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyObject_Vectorcall(general.as_ptr(), all.as_ptr(), positional, kwnames),
        )
    }
}

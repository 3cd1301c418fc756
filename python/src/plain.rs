//! Whether a `dict` of attributes holds only plain names and values, told without reading any
//! text: the check that lets a message's attributes be looked up by the names its filters read
//! (`convert::looked_up`) instead of read whole.
#![expect(
    unsafe_code,
    reason = "CPython's C API: the dict's entries are walked with `PyDict_Next` (borrowed \
              references, no reference counting) and each object's type is read from its header; \
              no Python code runs during the walk, so every borrowed object stays alive"
)]

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Whether every name of `dict` is an ASCII `str` and every value an ASCII `str` (String), an
/// `int` that is not a `bool` or a finite `float` (Number), or `bytes` (Binary): the values
/// `convert::attribute_value` reads without an error, whose text is valid UTF-8 without being
/// read. Anything else (a non-ASCII `str`, which may hold a lone surrogate; a typed `dict`, a
/// list, a `Decimal`, a value of a wrong type) is not plain: such attributes are read whole, with
/// the errors that reading gives.
pub fn is_plain(dict: &Bound<'_, PyDict>) -> bool {
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `dict` is a live dict (the GIL is held: `Bound`); `PyDict_Next` gives borrowed
    // references to its entries, which stay alive while nothing runs Python code or changes the
    // dict, and nothing does until the walk ends (only type checks run). Every object is a live
    // object, so reading its type is sound; `PyUnicode_IS_ASCII` is read only of a `str` and
    // `PyFloat_AS_DOUBLE` only of a `float`.
    unsafe {
        while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
            let name = ffi::PyUnicode_Check(key) != 0 && ffi::PyUnicode_IS_ASCII(key) != 0;
            let plain = if ffi::PyUnicode_Check(value) != 0 {
                ffi::PyUnicode_IS_ASCII(value) != 0
            } else if ffi::PyLong_Check(value) != 0 {
                ffi::PyBool_Check(value) == 0
            } else if ffi::PyFloat_Check(value) != 0 {
                ffi::PyFloat_AS_DOUBLE(value).is_finite()
            } else {
                ffi::PyBytes_Check(value) != 0
            };
            if !(name && plain) {
                return false;
            }
        }
    }
    true
}

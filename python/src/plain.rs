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
use pyo3::types::{PyDict, PyString};

/// Whether every name of `dict` is an ASCII `str` and every value an ASCII `str` (String), an
/// `int` (Number; a `bool` is not an `int` here) or a finite `float` (Number), or `bytes`
/// (Binary): the values `convert::attribute_value` reads without an error, whose text is valid
/// UTF-8 without being read. Each type is told by comparing the object's type with the built-in
/// one (no subclass: a subclass may compare or hash its own way, and `bool` is a subclass of
/// `int`). Anything else (a non-ASCII `str`, which may hold a lone surrogate; a subclass of a
/// built-in type; a typed `dict`, a list, a `Decimal`, a value of a wrong type) is not plain: such
/// attributes are read whole, with the errors that reading gives.
pub fn is_plain(dict: &Bound<'_, PyDict>) -> bool {
    walk(dict, "").is_some()
}

/// The value of the entry a [`find`] looks for.
pub enum Found<'a, 'py> {
    /// No entry has that name.
    Missing,
    /// An ASCII `str`: its text, read where it lies.
    Ascii(&'a str),
    /// Any other plain value (`int`, `float`, `bytes`).
    Other(Bound<'py, PyAny>),
}

/// [`is_plain`], and the value of the entry named `name` (`""` is looked for as any other name),
/// found during the same walk: a name is compared with each entry's ASCII name by its length
/// first, and the dict holds each name once.
#[inline(always)]
pub fn find<'a, 'py>(dict: &'a Bound<'py, PyDict>, name: &str) -> Option<Found<'a, 'py>> {
    let found = walk(dict, name)?;
    if found.is_null() {
        return Some(Found::Missing);
    }
    // SAFETY: a value of the dict, borrowed from it during a walk that ran no Python code (so the
    // dict and its values did not change). An ASCII `str`'s text is its `GET_LENGTH` bytes at
    // `PyUnicode_1BYTE_DATA`, which never change (a `str` is immutable) and live as long as the
    // dict holds the value: the borrow of `dict` bounds the text's lifetime, and nothing can
    // change the dict while it is borrowed without Python code running, which needs the GIL this
    // thread holds. Any other value gets a new reference before anything else runs.
    unsafe {
        if ffi::PyUnicode_CheckExact(found) != 0 {
            // Plain: the walk checked that it is ASCII.
            let len = usize::try_from(ffi::PyUnicode_GET_LENGTH(found)).ok()?;
            let bytes =
                std::slice::from_raw_parts(ffi::PyUnicode_1BYTE_DATA(found).cast_const(), len);
            return Some(Found::Ascii(std::str::from_utf8_unchecked(bytes)));
        }
        Some(Found::Other(Bound::from_borrowed_ptr(dict.py(), found)))
    }
}

/// The walk of [`is_plain`] and [`find`]: `None` when an entry is not plain, else the value
/// named `name` (borrowed from the dict; NULL when there is none).
#[inline]
fn walk(dict: &Bound<'_, PyDict>, name: &str) -> Option<*mut ffi::PyObject> {
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    let mut found: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `dict` is a live dict (the GIL is held: `Bound`); `PyDict_Next` gives borrowed
    // references to its entries, which stay alive while nothing runs Python code or changes the
    // dict, and nothing does until the walk ends (only type checks and byte compares run). Every
    // object is a live object, so reading its type is sound; `PyUnicode_IS_ASCII` is read only
    // of a `str`, `PyFloat_AS_DOUBLE` only of a `float`, and an ASCII `str`'s text is its
    // `GET_LENGTH` bytes at `PyUnicode_1BYTE_DATA`.
    unsafe {
        while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
            if !plain_entry(key, value) {
                return None;
            }
            if key_is(key, name) {
                found = value;
            }
        }
    }
    Some(found)
}

/// The most names one [`find_several`] looks for.
pub const MAX_NAMES: usize = 8;

/// [`find`] of several names: [`is_plain`], and the values of the entries named `names` (at most [`MAX_NAMES`]; `""` is
/// looked for as any other name), found during the same walk: each name is compared with each
/// entry's ASCII name by its length first, and the dict holds each name once. `found[i]` is
/// the value of `names[i]` ([`Finds::get`]); `None` for more than [`MAX_NAMES`] names.
pub fn find_several<'a, 'py>(
    dict: &'a Bound<'py, PyDict>,
    names: &[&str],
) -> Option<Finds<'a, 'py>> {
    // One walk per count of names up to four, each with its names in registers.
    let mut found = [std::ptr::null_mut(); MAX_NAMES];
    let walked = match names {
        [a, b] => walk_names(dict, [*a, *b]).map(|f| found[..2].copy_from_slice(&f)),
        [a, b, c] => walk_names(dict, [*a, *b, *c]).map(|f| found[..3].copy_from_slice(&f)),
        [a, b, c, d] => walk_names(dict, [*a, *b, *c, *d]).map(|f| found[..4].copy_from_slice(&f)),
        _ => walk_many(dict, names, &mut found),
    };
    walked?;
    Some(Finds { dict, found })
}

/// The values a [`find_several`] found, by the index of their name.
pub struct Finds<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    /// Borrowed from `dict` (NULL: not there).
    found: [*mut ffi::PyObject; MAX_NAMES],
}

impl<'a, 'py> Finds<'a, 'py> {
    /// The value of the `i`-th name looked for.
    #[inline]
    pub fn get(&self, i: usize) -> Found<'a, 'py> {
        let value = self.found.get(i).copied().unwrap_or(std::ptr::null_mut());
        found_value(self.dict, value)
    }
}

/// What `value` (a value of `dict` a walk found, or NULL) is for [`find_several`].
#[inline]
fn found_value<'a, 'py>(dict: &'a Bound<'py, PyDict>, value: *mut ffi::PyObject) -> Found<'a, 'py> {
    if value.is_null() {
        return Found::Missing;
    }
    // SAFETY: a value of the dict, borrowed from it during a walk that ran no Python code (so the
    // dict and its values did not change). An ASCII `str`'s text is its `GET_LENGTH` bytes at
    // `PyUnicode_1BYTE_DATA`, which never change (a `str` is immutable) and live as long as the
    // dict holds the value: the borrow of `dict` bounds the text's lifetime, and nothing can
    // change the dict while it is borrowed without Python code running, which needs the GIL this
    // thread holds. Any other value gets a new reference before anything else runs.
    unsafe {
        if ffi::PyUnicode_CheckExact(value) != 0 {
            // Plain: the walk checked that it is ASCII.
            let Ok(len) = usize::try_from(ffi::PyUnicode_GET_LENGTH(value)) else {
                return Found::Missing;
            };
            let bytes =
                std::slice::from_raw_parts(ffi::PyUnicode_1BYTE_DATA(value).cast_const(), len);
            return Found::Ascii(std::str::from_utf8_unchecked(bytes));
        }
        Found::Other(Bound::from_borrowed_ptr(dict.py(), value))
    }
}

/// The walk of [`find_several`] for `N` names: `None` when an entry is not plain, else
/// the value of each name (borrowed from the dict; NULL when there is none).
#[inline]
fn walk_names<const N: usize>(
    dict: &Bound<'_, PyDict>,
    names: [&str; N],
) -> Option<[*mut ffi::PyObject; N]> {
    let mut found = [std::ptr::null_mut(); N];
    each_entry(dict, |key| {
        for (name, found) in names.iter().zip(found.iter_mut()) {
            if key_is(key.0, name) {
                *found = key.1;
            }
        }
    })?;
    Some(found)
}

/// [`walk_names`] for any number of names, at most `found.len()`.
#[inline(never)]
fn walk_many(
    dict: &Bound<'_, PyDict>,
    names: &[&str],
    found: &mut [*mut ffi::PyObject; MAX_NAMES],
) -> Option<()> {
    if names.len() > MAX_NAMES {
        return None;
    }
    each_entry(dict, |key| {
        for (name, found) in names.iter().zip(found.iter_mut()) {
            if key_is(key.0, name) {
                *found = key.1;
            }
        }
    })
}

/// Whether an entry of a dict is plain (see [`is_plain`]): an ASCII `str` name, and an ASCII
/// `str`, an `int`, a finite `float` or `bytes` value, each of the built-in type itself.
///
/// # Safety
/// `key` and `value` are live objects (the GIL is held).
#[inline(always)]
unsafe fn plain_entry(key: *mut ffi::PyObject, value: *mut ffi::PyObject) -> bool {
    // SAFETY: live objects (the caller's promise): reading their type is sound;
    // `PyUnicode_IS_ASCII` is read only of a `str`, `PyFloat_AS_DOUBLE` only of a `float`.
    unsafe {
        let plain_name = ffi::PyUnicode_CheckExact(key) != 0 && ffi::PyUnicode_IS_ASCII(key) != 0;
        let plain = if ffi::PyUnicode_CheckExact(value) != 0 {
            ffi::PyUnicode_IS_ASCII(value) != 0
        } else if ffi::PyLong_CheckExact(value) != 0 {
            true
        } else if ffi::PyFloat_CheckExact(value) != 0 {
            ffi::PyFloat_AS_DOUBLE(value).is_finite()
        } else {
            ffi::PyBytes_CheckExact(value) != 0
        };
        plain_name && plain
    }
}

/// Whether `key`, an ASCII `str` (checked by [`plain_entry`]), is `name`.
#[inline(always)]
fn key_is(key: *mut ffi::PyObject, name: &str) -> bool {
    // SAFETY: `key` is a live ASCII `str` (see `each_entry`): `GET_LENGTH` one-byte characters
    // at `PyUnicode_1BYTE_DATA`, read only when there are as many as `name` has bytes.
    unsafe {
        usize::try_from(ffi::PyUnicode_GET_LENGTH(key)) == Ok(name.len())
            && std::slice::from_raw_parts(ffi::PyUnicode_1BYTE_DATA(key).cast_const(), name.len())
                == name.as_bytes()
    }
}

/// The walk of [`find_several`] ([`walk`] is its loop for one name, the call a broker makes
/// most, kept without a closure): calls `each` with every (name, value) of `dict` while each is
/// [`plain_entry`]; `None` at the first that is not (and `each` not called for it).
#[inline(always)]
fn each_entry(
    dict: &Bound<'_, PyDict>,
    mut each: impl FnMut((*mut ffi::PyObject, *mut ffi::PyObject)),
) -> Option<()> {
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `dict` is a live dict (the GIL is held: `Bound`); `PyDict_Next` gives borrowed
    // references to its entries, which stay alive while nothing runs Python code or changes the
    // dict, and nothing does until the walk ends (only type checks and byte compares run). Every
    // object is a live object, so reading its type is sound; `PyUnicode_IS_ASCII` is read only
    // of a `str`, `PyFloat_AS_DOUBLE` only of a `float`.
    unsafe {
        while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
            if !plain_entry(key, value) {
                return None;
            }
            each((key, value));
        }
    }
    Some(())
}

/// The text of `s` read where it lies when it is ASCII (its characters are then its UTF-8
/// bytes, one byte each), without asking CPython for its UTF-8 form; `None` for any other
/// `str`.
#[inline]
pub fn ascii<'a>(s: &'a Bound<'_, PyString>) -> Option<&'a str> {
    let p = s.as_ptr();
    // SAFETY: `s` is a live `str` (the GIL is held); an ASCII `str` holds `GET_LENGTH` one-byte
    // characters at `PyUnicode_1BYTE_DATA`, which never change (a `str` is immutable) and live
    // as long as `s` is held (the borrow of `s` bounds the text's lifetime). ASCII is UTF-8.
    unsafe {
        if ffi::PyUnicode_IS_ASCII(p) == 0 {
            return None;
        }
        let len = usize::try_from(ffi::PyUnicode_GET_LENGTH(p)).ok()?;
        let bytes = std::slice::from_raw_parts(ffi::PyUnicode_1BYTE_DATA(p).cast_const(), len);
        Some(std::str::from_utf8_unchecked(bytes))
    }
}

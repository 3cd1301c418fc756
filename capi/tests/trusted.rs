//! `FVM_READ_TRUSTED`: a document whose members no filter reads are not JSON is judged by
//! `fvm_filter_matches_read` and `fvm_set_matching_read` in trusted mode, and is
//! `MESSAGE_NOT_JSON` in validating mode (also what `fvm_filter_matches` and `fvm_set_matching`
//! give); an unknown read mode is `FVM_ERR_ARGUMENT`. Every call goes through the exported
//! `extern "C"` functions.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    unsafe_code
)]

use filtervm_capi::*;
use std::ffi::{CStr, CString};

fn message(json: &[u8]) -> FvmMessage {
    FvmMessage {
        parts: FVM_PART_JSON,
        json: json.as_ptr(),
        json_len: json.len(),
        body: std::ptr::null(),
        body_len: 0,
        attributes: std::ptr::null(),
        attribute_count: 0,
        headers: std::ptr::null(),
        header_count: 0,
    }
}

/// The first code of `error` (freed here), or "" for none.
fn code(error: *mut FvmError) -> String {
    // SAFETY: NULL or a live error, freed once here.
    unsafe {
        let code = if fvm_error_count(error) > 0 {
            CStr::from_ptr(fvm_error_code(error, 0))
                .to_str()
                .unwrap()
                .to_owned()
        } else {
            String::new()
        };
        fvm_error_free(error);
        code
    }
}

#[test]
fn trusted_reads_skip_what_no_filter_reads() {
    let dialect = CString::new("sns").unwrap();
    let policy = br#"{"store": ["example_corp"]}"#;
    let options = br#"{"scope": "MessageBody"}"#;
    let mut filter = std::ptr::null_mut();
    let mut error = std::ptr::null_mut();
    // SAFETY: valid pointers and lengths for every call below; the filter and set are freed once.
    unsafe {
        let status = fvm_compile(
            dialect.as_ptr(),
            policy.as_ptr(),
            policy.len(),
            options.as_ptr(),
            options.len(),
            &mut filter,
            &mut error,
        );
        assert_eq!(status, FVM_OK);
        let set = fvm_set_new();
        assert_eq!(fvm_set_add(set, 7, filter, std::ptr::null_mut()), FVM_OK);

        // `items` is no JSON, and no filter reads it.
        let body = br#"{"store": "example_corp", "items": [01, tru]}"#;
        let m = message(body);
        let mut error = std::ptr::null_mut();
        assert_eq!(
            fvm_filter_matches_read(filter, &m, FVM_READ_TRUSTED, &mut error),
            FVM_MATCH
        );
        assert_eq!(
            fvm_filter_matches_read(filter, &m, FVM_READ_VALIDATING, &mut error),
            FVM_ERR_MESSAGE
        );
        assert_eq!(code(error), "MESSAGE_NOT_JSON");
        let mut error = std::ptr::null_mut();
        assert_eq!(fvm_filter_matches(filter, &m, &mut error), FVM_ERR_MESSAGE);
        assert_eq!(code(error), "MESSAGE_NOT_JSON");
        let mut error = std::ptr::null_mut();
        assert_eq!(
            fvm_filter_matches_read(filter, &m, 2, &mut error),
            FVM_ERR_ARGUMENT
        );
        assert_eq!(code(error), "INVALID_ARGUMENT");

        let mut ids = [0u64; 4];
        let mut count = 0usize;
        let mut error = std::ptr::null_mut();
        let status = fvm_set_matching_read(
            set,
            &m,
            FVM_READ_TRUSTED,
            ids.as_mut_ptr(),
            ids.len(),
            &mut count,
            &mut error,
        );
        assert_eq!((status, count, ids[0]), (FVM_OK, 1, 7));
        let status = fvm_set_matching(set, &m, ids.as_mut_ptr(), ids.len(), &mut count, &mut error);
        assert_eq!((status, count), (FVM_PARTIAL, 0));
        assert_eq!(code(error), "MESSAGE_NOT_JSON");
        let mut error = std::ptr::null_mut();
        let status = fvm_set_matching_read(
            set,
            &m,
            9,
            ids.as_mut_ptr(),
            ids.len(),
            &mut count,
            &mut error,
        );
        assert_eq!(status, FVM_ERR_ARGUMENT);
        assert_eq!(code(error), "INVALID_ARGUMENT");

        fvm_set_free(set);
        fvm_filter_free(filter);
    }
}

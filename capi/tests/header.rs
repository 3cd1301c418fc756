//! `include/filtervm.h` is what cbindgen generates from the crate today: the committed header
//! never drifts from the ABI. `FILTERVM_BLESS=1` rewrites it.

use std::path::Path;

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .unwrap();
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = crate_dir.join("include/filtervm.h");
    // Only `1` rewrites: `FILTERVM_BLESS=0` (or any other value) checks, as the golden tests do.
    if std::env::var("FILTERVM_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "capi/include/filtervm.h differs from what cbindgen generates from the crate: regenerate it \
         with `FILTERVM_BLESS=1 cargo test -p filtervm-capi --test header` and commit it"
    );
}

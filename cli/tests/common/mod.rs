//! What the binary-level tests share: running `filtervm` with arguments and standard input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The `filtervm` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_filtervm");
/// The repository root, where the tests run the binary (relative example paths resolve there).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Runs `filtervm ARGS` in the repository root with `input` on standard input (fed from its own
/// thread, so a child that writes much before reading cannot deadlock), and waits for it.
pub fn filtervm(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .current_dir(ROOT)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

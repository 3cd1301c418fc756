//! Standard output and standard error for every subcommand.
//!
//! `println!` and `eprintln!` panic when a write fails, and a write fails whenever the reader of a
//! pipe has gone away (`filtervm check … | head -1`: `EPIPE`, since Rust ignores `SIGPIPE`). The
//! subcommands therefore write through these two types instead (the crate denies
//! `clippy::print_stdout` and `clippy::print_stderr`):
//!
//! - [`Stdout`] is buffered. A closed pipe closes it quietly: later writes are dropped and
//!   [`Stdout::is_closed`] tells a long-running command (`match`) to stop reading its input. Any
//!   other write error (a full disk, an I/O error) is a [`Failure`] with exit status 2.
//! - [`Stderr`] reports what it can and ignores its own write errors: a closed or broken standard
//!   error has nowhere left to report to, and the exit status still says what happened.

use super::failure::Failure;
use std::fmt;
use std::io::{self, Write};

/// Buffered standard output that treats a closed pipe as the end of the output.
pub(super) struct Stdout {
    out: io::BufWriter<io::Stdout>,
    closed: bool,
}

impl Stdout {
    /// Standard output, with a 64 KiB buffer.
    pub(super) fn new() -> Stdout {
        Stdout {
            out: io::BufWriter::with_capacity(1 << 16, io::stdout()),
            closed: false,
        }
    }

    /// Whether the reader went away: nothing written from now on is read.
    pub(super) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Writes `bytes` (dropped once the pipe is closed).
    pub(super) fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.write_all(bytes);
        self.settle(result)
    }

    /// Writes formatted text; with this method `write!(out, ..)` and `writeln!(out, ..)` work on
    /// a [`Stdout`] and return a [`Failure`] only for a real write error.
    pub(super) fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> Result<(), Failure> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.write_fmt(args);
        self.settle(result)
    }

    /// Writes out what is buffered (call before writing to standard error, so that the two
    /// streams interleave in order, and at the end of a command).
    pub(super) fn flush(&mut self) -> Result<(), Failure> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.flush();
        self.settle(result)
    }

    fn settle(&mut self, result: io::Result<()>) -> Result<(), Failure> {
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(Failure {
                message: format!("cannot write to standard output: {e}"),
                code: 2,
            }),
        }
    }
}

/// Writes `text` to standard output and flushes it (for commands that print one text).
pub(super) fn print(text: &str) -> Result<(), Failure> {
    let mut out = Stdout::new();
    out.write_bytes(text.as_bytes())?;
    out.flush()
}

/// Standard error: diagnostics, written unbuffered; a write that fails is ignored.
pub(super) struct Stderr;

impl Stderr {
    /// Writes formatted text (`writeln!(Stderr, ..)`), ignoring failures.
    pub(super) fn write_fmt(&mut self, args: fmt::Arguments<'_>) {
        let _ = io::stderr().lock().write_fmt(args);
    }
}

/// `value` as indented JSON (two spaces a level, `"name": value`, `[]` and `{}` when empty: the
/// layout `serde_json::to_string_pretty` uses), numbers in their exact text.
pub(super) fn pretty_json(value: &filtervm_vm::json::Value) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out
}

fn write_pretty(value: &filtervm_vm::json::Value, depth: usize, out: &mut String) {
    use filtervm_vm::json::Value;
    let indent = |out: &mut String, depth: usize| {
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                write_pretty(item, depth + 1, out);
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        Value::Object(members) if !members.is_empty() => {
            out.push('{');
            for (i, (name, member)) in members.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                out.push_str(&Value::from(name.as_str()).to_string());
                out.push_str(": ");
                write_pretty(member, depth + 1, out);
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pretty_json_lays_out_like_serde_json() {
        let text = r#"{"a": [1.50, {"b": null}], "c": {}, "d": [], "e": "x\"y", "f": 1e400}"#;
        let value = filtervm_vm::json::parse(text.as_bytes()).unwrap();
        assert_eq!(
            super::pretty_json(&value),
            "{\n  \"a\": [\n    1.50,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {},\n  \
             \"d\": [],\n  \"e\": \"x\\\"y\",\n  \"f\": 1e400\n}"
        );
        let small = serde_json::json!({"a": [1, {"b": null}], "c": {}, "d": []});
        assert_eq!(
            super::pretty_json(&filtervm_vm::json::Value::from(&small)),
            serde_json::to_string_pretty(&small).unwrap()
        );
    }
}

//! The `filtervm` command-line tool: check, compile and match filter policies of every dialect.

// Every byte the tool prints goes through `commands::output`, which ends a command quietly when its
// reader has gone away; `println!` and `eprintln!` would panic instead.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod commands;

use std::process::ExitCode;

fn main() -> ExitCode {
    commands::main()
}

//! The `filtervm` command-line tool: check, compile and match filter policies of every dialect.
//!
//! Its files import downward (`python3 scripts/check_layers.py cli/src` checks it): at the bottom
//! how a command ends (`commands/failure.rs`) and what it writes (`commands/output.rs`), then
//! reading input (`input.rs`, `batches.rs` on it), then the subcommands; `commands/mod.rs` holds
//! the command line and the policy arguments they share.

// Every byte the tool prints goes through `commands::output`, which ends a command quietly when its
// reader has gone away; `println!` and `eprintln!` would panic instead.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod commands;

use std::process::ExitCode;

fn main() -> ExitCode {
    commands::main()
}

//! The `filtervm` command-line tool: check, compile and match filter policies of every dialect.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}

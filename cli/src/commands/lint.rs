//! `filtervm lint`: warnings about a policy that compiles but probably does not mean what its
//! author thinks.

use super::explain::load;
use super::failure::{EXIT_NEGATIVE, EXIT_OK, Failure};
use super::{PolicyArgs, print_errors};
use clap::Args;
use filtervm_compiler::lint::{Warning, lint_filter};
use std::process::ExitCode;

/// The arguments of `filtervm lint`.
#[derive(Args, Debug)]
pub(super) struct LintArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// Print the warnings as a JSON array of `{"code", "pointer", "message", "fix"}`.
    #[arg(long)]
    json: bool,
    /// Exit 1 when there is any warning (for CI).
    #[arg(long)]
    deny_warnings: bool,
}

/// Runs `filtervm lint`: exit 0, or 1 for an invalid policy (or a warning with
/// `--deny-warnings`).
pub(super) fn run(args: LintArgs) -> Result<ExitCode, Failure> {
    let read = args.policy.read()?;
    let source = read.name.clone();
    let (filter, policy) = match load(&read) {
        Ok(loaded) => loaded,
        Err(e) => {
            print_errors(&read, &e);
            return Ok(ExitCode::from(EXIT_NEGATIVE));
        }
    };
    let warnings = lint_filter(&filter, &policy.unwrap_or_default());
    let mut text = String::new();
    if args.json {
        let all = filtervm_vm::json::Value::Array(warnings.iter().map(Warning::to_json).collect());
        text = super::output::pretty_json(&all);
        text.push('\n');
    } else if warnings.is_empty() {
        text = format!("{source}: no warnings\n");
    } else {
        for w in &warnings {
            let at = if w.pointer.is_empty() {
                "(policy)"
            } else {
                w.pointer.as_str()
            };
            text.push_str(&format!(
                "{source}: {} {at}: {}\n    fix: {}\n",
                w.code, w.message, w.fix
            ));
        }
    }
    super::output::print(&text)?;
    if args.deny_warnings && !warnings.is_empty() {
        return Ok(ExitCode::from(EXIT_NEGATIVE));
    }
    Ok(ExitCode::from(EXIT_OK))
}

//! `filtervm explain`: why a message did or did not match a policy.

use super::{EXIT_NEGATIVE, EXIT_OK, Failure, Policy, PolicyArgs, print_errors};
use clap::Args;
use filtervm_compiler::explain::{explain_bytes, explain_json};
use filtervm_compiler::{CompileError, Dialect, Filter, compile_value};
use filtervm_vm::json::Value;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `filtervm explain`.
#[derive(Args, Debug)]
pub(super) struct ExplainArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// The message: a file holding one message as `match` reads a line (`-` for stdin): for sns
    /// in body scope the body as published, for eventgrid the event, for the other dialects JSON
    /// in the dialect's shape.
    #[arg(long, short)]
    message: PathBuf,
    /// Print the explanation as JSON (the shape is documented in `filtervm_compiler::explain`).
    #[arg(long)]
    json: bool,
    /// Also list the program's own test instructions, each run alone on the message.
    #[arg(long)]
    trace: bool,
}

/// The policy as written (JSON, or the stream text form as a JSON string), best effort.
fn policy_value(policy: &Policy) -> Option<Value> {
    let stream = policy.dialect == Dialect::Stream;
    match filtervm_vm::json::parse(policy.text.as_bytes()) {
        Ok(v) if v.is_object() || v.is_array() || !stream => Some(v),
        _ if stream => Some(Value::String(policy.text.clone())),
        _ => None,
    }
}

/// Compiles the policy and reads it as a value; `Err` is an invalid policy.
pub(super) fn load(policy: &Policy) -> Result<(Filter, Option<Value>), CompileError> {
    let value = policy_value(policy);
    match policy.compile() {
        Ok(filter) => Ok((filter, value)),
        // The stream text form in a file: compile the text.
        Err(e) => match (&value, &policy.options) {
            (Some(v @ Value::String(_)), Ok(options)) if policy.dialect == Dialect::Stream => {
                compile_value(Dialect::Stream, v, options).map(|f| (f, value.clone()))
            }
            _ => Err(e),
        },
    }
}

fn read_bytes(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::error(format!("<stdin>: cannot read the message: {e}")))?;
    } else {
        bytes = std::fs::read(path).map_err(|e| {
            Failure::error(format!("{}: cannot read the message: {e}", path.display()))
        })?;
    }
    Ok(bytes)
}

fn read_message(path: &std::path::Path) -> Result<serde_json::Value, Failure> {
    serde_json::from_slice(&read_bytes(path)?)
        .map_err(|e| Failure::error(format!("{}: the message is not JSON: {e}", path.display())))
}

/// Runs `filtervm explain`: exit 0 (whatever the verdict), 1 for an invalid policy, 2 for a
/// message that cannot be read.
pub(super) fn run(args: ExplainArgs) -> Result<ExitCode, Failure> {
    if args.policy.reads_stdin() && super::is_stdin(&args.message) {
        return Err(Failure::usage(
            "the policy and the message cannot both come from standard input",
        ));
    }
    let source = args.policy.read()?;
    let (filter, policy) = match load(&source) {
        Ok(loaded) => loaded,
        Err(e) => {
            print_errors(&source, &e);
            return Ok(ExitCode::from(EXIT_NEGATIVE));
        }
    };
    // SNS bodies and Event Grid events are read from their bytes, as `match` reads them.
    let explanation = if filter.reads_json_body() {
        let bytes = read_bytes(&args.message)?;
        explain_bytes(&filter, policy.as_ref(), &bytes)
    } else {
        explain_json(&filter, policy.as_ref(), &read_message(&args.message)?)
    }
    .map_err(|e| Failure::error(format!("{}: {e}", args.message.display())))?;
    let mut text = String::new();
    if args.json {
        text = super::output::pretty_json(&explanation.to_json());
        text.push('\n');
    } else {
        text.push_str(&explanation.to_string());
        if args.trace {
            text.push_str(
                "\ninstructions (the program's own tests, each run alone on the message):\n",
            );
            text.push_str(&explanation.render_instructions());
        }
    }
    super::output::print(&text)?;
    Ok(ExitCode::from(EXIT_OK))
}

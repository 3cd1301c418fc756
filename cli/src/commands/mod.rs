//! Command-line parsing and the subcommands.

mod bench;
mod explain;
mod lint;
mod matching;
mod options;
mod output;

use clap::{Args, Parser, Subcommand};
use filtervm_compiler::{CompileError, Dialect, Filter, Options, compile_text};
use output::{Stderr, Stdout};
use std::path::PathBuf;
use std::process::ExitCode;

/// filtervm: compile subscription filters to bytecode and run them on messages.
#[derive(Parser, Debug)]
#[command(name = "filtervm", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate a policy: prints every error as code, pointer and message; exit 1 when invalid.
    Check(PolicyArgs),
    /// Compile a policy and print its IR and/or disassembly, or write its program (`--output`).
    Compile {
        #[command(flatten)]
        policy: PolicyArgs,
        /// Print the IR (as lowered, then optimized).
        #[arg(long)]
        ir: bool,
        /// Print the bytecode disassembly.
        #[arg(long)]
        disasm: bool,
        /// Write the verified program, with its dialect and options, to FILE (for
        /// `match --program`); then the IR and disassembly are printed only when asked for.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Run a policy (or a `--program` file) over messages, one per line (a file, or `-` / nothing
    /// for stdin).
    Match {
        #[command(flatten)]
        policy: PolicyArgs,
        /// Pass matching lines through unchanged (like grep) instead of printing a verdict per line.
        #[arg(long)]
        only_matching: bool,
        /// The longest line read as a message, in bytes (not counting its line ending); a longer
        /// line is reported as an error and skipped without being held in memory. The default,
        /// 4 MiB, is 16 times SNS's 256 KiB message limit and 4 times Event Grid's 1 MB event.
        #[arg(long, value_name = "BYTES", default_value_t = matching::DEFAULT_MAX_LINE_BYTES,
              value_parser = clap::value_parser!(u64).range(1..))]
        max_line_bytes: u64,
        /// The messages (NDJSON, in the dialect's message shape); `-` or absent reads stdin.
        messages: Option<PathBuf>,
        /// Run a program written by `compile --output` instead of a policy (its dialect and
        /// options travel with it).
        #[arg(long, conflicts_with_all = ["dialect", "policy", "filter", "options"])]
        program: Option<PathBuf>,
    },
    /// Explain why a message matches a policy or not: the verdict, every condition with its
    /// truth, the values it saw and its JSON Pointer, the deciding conditions and hints.
    Explain(explain::ExplainArgs),
    /// Warn about conditions that never or always hold, duplicates and dialect pitfalls (each
    /// warning with a code, a JSON Pointer and a one-line fix).
    Lint(lint::LintArgs),
    /// Measure a policy set: compile every policy (one per line), run the messages through the
    /// set, one by one and through the reference interpreter, check all three agree, print
    /// `name: value` figures.
    Bench(bench::BenchArgs),
}

/// Where the policy comes from and how to read it.
#[derive(Args, Debug)]
struct PolicyArgs {
    /// The dialect: sns, basaltic, eventgrid, stream or expr (required with a policy).
    #[arg(long, short)]
    dialect: Option<Dialect>,
    /// A file holding the policy (JSON).
    #[arg(long, short, conflicts_with = "filter")]
    policy: Option<PathBuf>,
    /// The policy given inline: JSON, or for `stream` the text form (`region = eu-* and n > 5`).
    #[arg(long, short)]
    filter: Option<String>,
    /// Dialect options as a JSON object, e.g. '{"scope":"MessageBody"}'.
    #[arg(long, default_value = "{}")]
    options: String,
}

/// A failure that ends the command with a message and an exit code.
struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 2,
        }
    }
}

impl PolicyArgs {
    fn dialect(&self) -> Result<Dialect, Failure> {
        self.dialect
            .ok_or_else(|| Failure::usage("give the dialect with --dialect"))
    }

    /// The dialect options; `Ok(Err(..))` are options the dialect does not accept.
    fn options(&self) -> Result<Result<Options, CompileError>, Failure> {
        options::parse(self.dialect()?, &self.options)
    }

    /// Compiles the policy; `Ok(Err(..))` is an invalid policy (reported by the caller).
    fn compile(&self) -> Result<Result<Filter, CompileError>, Failure> {
        let dialect = self.dialect()?;
        let options = match self.options()? {
            Ok(options) => options,
            Err(e) => return Ok(Err(e)),
        };
        match (&self.policy, &self.filter) {
            (Some(path), None) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    Failure::usage(format!("{}: cannot read the policy: {e}", path.display()))
                })?;
                Ok(compile_text(dialect, &text, &options))
            }
            // The same reading as a file's text: JSON, or for `stream` the text form.
            (None, Some(inline)) => Ok(compile_text(dialect, inline, &options)),
            _ => Err(Failure::usage(
                "give the policy with --policy FILE or --filter TEXT",
            )),
        }
    }

    fn source_name(&self) -> String {
        match &self.policy {
            Some(p) => p.display().to_string(),
            None => "--filter".to_owned(),
        }
    }
}

/// A policy error's pointer as printed: `""` for the whole policy, and a member name of more
/// than [`EXCERPT_CHARS`](filtervm_compiler::error::EXCERPT_CHARS) characters cut short.
fn printed_pointer(pointer: &str) -> String {
    if pointer.is_empty() {
        "\"\"".to_owned()
    } else {
        filtervm_compiler::error::pointer::shown(pointer).to_string()
    }
}

/// Reports an invalid policy on standard error, one error per line.
fn print_errors(source: &str, err: &CompileError) {
    for e in &err.errors {
        let at = printed_pointer(&e.pointer);
        writeln!(Stderr, "{source}: {} {at}: {}", e.code, e.message);
    }
}

/// Reads a program written by `compile --output` (exit 2 when unreadable, 1 when rejected).
fn load_program(path: &std::path::Path) -> Result<Filter, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::usage(format!("{}: cannot read the program: {e}", path.display())))?;
    Filter::from_bytes(&bytes).map_err(|e| Failure {
        message: format!("{}: not a valid filtervm program: {e}", path.display()),
        code: 1,
    })
}

/// Runs the tool.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(f) => {
            writeln!(Stderr, "filtervm: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Check(policy) => {
            let mut out = Stdout::new();
            let code = match policy.compile()? {
                Ok(_) => {
                    writeln!(out, "{}: ok", policy.source_name())?;
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    for e in &e.errors {
                        let at = printed_pointer(&e.pointer);
                        writeln!(out, "{} {at} {}", e.code, e.message)?;
                    }
                    ExitCode::from(1)
                }
            };
            out.flush()?;
            Ok(code)
        }
        Command::Compile {
            policy,
            ir,
            disasm,
            output,
        } => {
            let filter = match policy.compile()? {
                Ok(f) => f,
                Err(e) => {
                    print_errors(&policy.source_name(), &e);
                    return Ok(ExitCode::from(1));
                }
            };
            if let Some(path) = &output {
                std::fs::write(path, filter.to_bytes()).map_err(|e| {
                    Failure::usage(format!("{}: cannot write the program: {e}", path.display()))
                })?;
            }
            let (ir, disasm) = if !ir && !disasm && output.is_none() {
                (true, true)
            } else {
                (ir, disasm)
            };
            let mut out = Stdout::new();
            if ir && let (Some(lowered), Some(optimized)) = (filter.lowered_ir(), filter.ir()) {
                write!(out, "; IR as lowered\n{lowered}; IR optimized\n{optimized}")?;
            }
            if disasm {
                writeln!(
                    out,
                    "; bytecode ({} instructions)",
                    filter.program().code().len()
                )?;
                write!(out, "{}", filter.program().disassemble())?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Match {
            policy,
            only_matching,
            max_line_bytes,
            messages,
            program,
        } => {
            let filter = match program {
                Some(path) => load_program(&path)?,
                None => match policy.compile()? {
                    Ok(f) => f,
                    Err(e) => {
                        print_errors(&policy.source_name(), &e);
                        return Ok(ExitCode::from(1));
                    }
                },
            };
            let mode = matching::Mode {
                only_matching,
                max_line_bytes,
            };
            matching::run(&filter, messages.as_deref(), mode)
        }
        Command::Explain(args) => explain::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Bench(args) => bench::run(args),
    }
}

//! Command-line parsing and the subcommands.

mod analysis;
mod batches;
mod bench;
mod completions;
mod diagnostics;
mod explain;
mod failure;
mod input;
mod lint;
mod matching;
mod options;
mod output;
mod progress;
mod route;
mod subscriptions;

use clap::{Args, CommandFactory, Parser, Subcommand};
use failure::{EXIT_NEGATIVE, EXIT_OK, EXIT_USAGE, Failure};
use filtervm_compiler::{CompileError, Dialect, Filter, Options, compile_text};
use output::{Stderr, Stdout};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What every `--help` ends with.
const EXIT_CODES_HELP: &str = "\
Exit status:
  0   success; for match and route: some line was selected (matched); example: a message was
      found; diff: the policies match the same messages (proved); audit: nothing found;
      translate: the policy was translated (proved equivalent)
  1   check/compile/explain/lint: the policy is invalid; bench: the engines disagree;
      match and route: no line was selected; example: no such message exists (proved);
      diff: the policies differ; audit: a subscription never or always matches, or two are
      equivalent; translate: the target dialect cannot express the policy (or it is invalid)
  2   errors while running: unreadable message lines or subscriptions (the others are still
      processed and counted), an invalid policy given to match, files that cannot be read;
      example: none found within a bounded search; diff: unknown (no difference
      found within a bounded search)
  64  usage errors: unknown or conflicting arguments, missing --dialect, bad --options";

/// Decide, for each message, which subscriptions receive it: check, compile, explain and lint
/// subscription filters of six dialects, run them over NDJSON message logs (`match`, `route`)
/// and measure them (`bench`).
#[derive(Parser, Debug)]
#[command(
    name = "filtervm",
    version,
    about = "filtervm: decide which subscriptions receive each message — check, compile, explain, lint and run subscription filters (sns, basaltic, eventgrid, stream, expr, eventbridge) over NDJSON message logs",
    long_about = None,
    after_help = EXIT_CODES_HELP,
    propagate_version = true,
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate a policy: prints every error (code, pointer, message, the offending source
    /// underlined); exit 1 when invalid.
    #[command(after_help = EXIT_CODES_HELP)]
    Check {
        #[command(flatten)]
        policy: PolicyArgs,
        /// Print the result as JSON: {"valid": bool, "errors": [{"code", "pointer", "message",
        /// "span": {"start", "end", "line", "column"} | null}]}.
        #[arg(long)]
        json: bool,
    },
    /// Compile a policy and print its IR and/or disassembly, or write its program (`--output`).
    #[command(after_help = EXIT_CODES_HELP)]
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
        /// Print the result as JSON: {"valid": true, "dialect", "options", "ir_lowered",
        /// "ir_optimized", "instructions", "disassembly", "program_bytes"}, or check's shape
        /// when the policy is invalid.
        #[arg(long, conflicts_with_all = ["ir", "disasm"])]
        json: bool,
    },
    /// Run a policy (or a `--program` file) over messages, one per line (a file, or `-` / nothing
    /// for stdin); grep-like exit status.
    #[command(after_help = EXIT_CODES_HELP)]
    Match(matching::MatchArgs),
    /// Route messages through a set of subscriptions (one per line, mixed dialects): for each
    /// message the ids that receive it, or per subscription the messages it would have received.
    #[command(after_help = EXIT_CODES_HELP)]
    Route(route::RouteArgs),
    /// Explain why a message matches a policy or not: the verdict, every condition with its
    /// truth, the values it saw and its JSON Pointer, the deciding conditions and hints.
    #[command(after_help = EXIT_CODES_HELP)]
    Explain(explain::ExplainArgs),
    /// Warn about conditions that never or always hold, duplicates and dialect pitfalls (each
    /// warning with a code, a JSON Pointer and a one-line fix).
    #[command(after_help = EXIT_CODES_HELP)]
    Lint(lint::LintArgs),
    /// Measure a policy set: compile every policy (one per line), run the messages through the
    /// set, one by one and through the reference interpreter (when it is built), check they agree,
    /// print `name: value` figures.
    #[command(after_help = EXIT_CODES_HELP)]
    Bench(bench::BenchArgs),
    /// Print a message the policy matches (or, with --not, one it does not), judged by the VM
    /// and the reference interpreter; exit 1 when none exists (proved), 2 when none was found
    /// within a bounded search.
    #[command(after_help = EXIT_CODES_HELP)]
    Example(analysis::ExampleArgs),
    /// Whether two policies match exactly the same messages; if not, a message each matches
    /// alone (judged by the VM and the reference interpreter) and the difference per key. Exit 0
    /// the same (proved), 1 different, 2 unknown (no difference within a bounded search).
    #[command(after_help = EXIT_CODES_HELP)]
    Diff(analysis::DiffArgs),
    /// Audit a subscriptions file (as `route` reads it): subscriptions that never match, that
    /// match every message, and groups that match exactly the same messages. Exit 1 when
    /// something was found.
    #[command(after_help = EXIT_CODES_HELP)]
    Audit(analysis::AuditArgs),
    /// Translate a policy into another dialect reading the same part of a message (stream <->
    /// expr, sns <-> basaltic; sns bodies, eventgrid -> eventbridge, eventbridge -> sns bodies,
    /// sns bodies and eventbridge -> eventgrid: the closest policy), proved by diff to match the
    /// same messages before it is printed; exit 1 with the part that cannot be expressed and why,
    /// or a message the two judge differently.
    #[command(after_help = EXIT_CODES_HELP)]
    Translate(analysis::TranslateArgs),
    /// Print a shell completion script (bash, zsh or fish) to standard output.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff, for `man -l -`) to standard output.
    Man,
}

/// Where the policy comes from and how to read it.
#[derive(Args, Debug)]
struct PolicyArgs {
    /// The dialect: sns, basaltic, eventgrid, stream, expr or eventbridge (required with a
    /// policy).
    #[arg(long, short)]
    dialect: Option<Dialect>,
    /// A file holding the policy (JSON; for stream also the text form); `-` reads it from
    /// standard input.
    #[arg(long, short, conflicts_with = "filter")]
    policy: Option<PathBuf>,
    /// The policy given inline: JSON, or for `stream` the text form (`region = eu-* and n > 5`).
    #[arg(long, short)]
    filter: Option<String>,
    /// Dialect options as a JSON object, e.g. '{"scope":"MessageBody"}'.
    #[arg(long, default_value = "{}")]
    options: String,
}

/// A policy as read: its text and where it came from, its dialect and its options.
struct Policy {
    /// The file name, `<stdin>` or `--filter`.
    name: String,
    /// The policy text.
    text: String,
    dialect: Dialect,
    /// The `--options` text.
    options_text: String,
    /// The options; `Err` for options the dialect does not accept (reported like policy
    /// errors).
    options: Result<Options, CompileError>,
}

impl Policy {
    /// Compiles the policy; `Err` is an invalid policy (reported by the caller).
    fn compile(&self) -> Result<Filter, CompileError> {
        let options = self.options.as_ref().map_err(Clone::clone)?;
        compile_text(self.dialect, &self.text, options)
    }

    /// The sources an error may point into: the policy, and the `--options` text.
    fn sources(&self) -> diagnostics::Sources<'_> {
        diagnostics::Sources {
            policy: diagnostics::Source::whole(&self.name, &self.text),
            options: Some(diagnostics::Source::whole("--options", &self.options_text)),
        }
    }
}

impl PolicyArgs {
    fn dialect(&self) -> Result<Dialect, Failure> {
        self.dialect
            .ok_or_else(|| Failure::usage("give the dialect with --dialect"))
    }

    /// Whether the policy is read from standard input (`--policy -`).
    fn reads_stdin(&self) -> bool {
        self.policy.as_deref().is_some_and(is_stdin)
    }

    /// Reads the policy (a file, standard input or `--filter`) and the options.
    fn read(&self) -> Result<Policy, Failure> {
        let dialect = self.dialect()?;
        let options = options::parse(dialect, &self.options)?;
        let (name, text) = match (&self.policy, &self.filter) {
            (Some(path), None) if is_stdin(path) => {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .map_err(|e| Failure::error(format!("<stdin>: cannot read the policy: {e}")))?;
                ("<stdin>".to_owned(), text)
            }
            (Some(path), None) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    Failure::error(format!("{}: cannot read the policy: {e}", path.display()))
                })?;
                (path.display().to_string(), text)
            }
            (None, Some(inline)) => ("--filter".to_owned(), inline.clone()),
            _ => {
                return Err(Failure::usage(
                    "give the policy with --policy FILE (- for stdin) or --filter TEXT",
                ));
            }
        };
        Ok(Policy {
            name,
            text,
            dialect,
            options_text: self.options.clone(),
            options,
        })
    }
}

/// Whether a path argument names standard input (`-`).
fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reports an invalid policy on standard error, each error with its source underlined.
fn print_errors(policy: &Policy, err: &CompileError) {
    let text = diagnostics::render(&err.errors, &policy.sources(), diagnostics::Stream::Stderr);
    writeln!(Stderr, "{}", text.trim_end());
}

/// Reads a program written by `compile --output` (exit 2 when unreadable or rejected).
fn load_program(path: &std::path::Path) -> Result<Filter, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::error(format!("{}: cannot read the program: {e}", path.display())))?;
    Filter::from_bytes(&bytes).map_err(|e| {
        Failure::error(format!(
            "{}: not a valid filtervm program: {e}",
            path.display()
        ))
    })
}

/// Runs the tool.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` print to stdout and succeed; a usage error prints clap's
            // message to stderr. A closed pipe leaves nothing to report to.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(f) => {
            writeln!(Stderr, "filtervm: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// The clap definition of the whole tool (for completions and the manual page).
fn command() -> clap::Command {
    Cli::command()
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Check { policy, json } => {
            let policy = policy.read()?;
            let result = policy.compile();
            let mut out = Stdout::new();
            match (&result, json) {
                (_, true) => {
                    let errors = result.as_ref().err().map_or(&[][..], |e| &e.errors[..]);
                    let value = diagnostics::errors_json(errors, &policy.sources());
                    writeln!(out, "{}", output::pretty_json(&value))?;
                }
                (Ok(_), false) => writeln!(out, "{}: ok", policy.name)?,
                (Err(e), false) => {
                    let stream = diagnostics::Stream::Stdout;
                    let text = diagnostics::render(&e.errors, &policy.sources(), stream);
                    write!(out, "{text}")?;
                }
            }
            out.flush()?;
            Ok(ExitCode::from(if result.is_ok() {
                EXIT_OK
            } else {
                EXIT_NEGATIVE
            }))
        }
        Command::Compile {
            policy,
            ir,
            disasm,
            output,
            json,
        } => {
            let policy = policy.read()?;
            let filter = match policy.compile() {
                Ok(f) => f,
                Err(e) if json => {
                    let value = diagnostics::errors_json(&e.errors, &policy.sources());
                    output::print(&format!("{}\n", output::pretty_json(&value)))?;
                    return Ok(ExitCode::from(EXIT_NEGATIVE));
                }
                Err(e) => {
                    print_errors(&policy, &e);
                    return Ok(ExitCode::from(EXIT_NEGATIVE));
                }
            };
            if let Some(path) = &output {
                std::fs::write(path, filter.to_bytes()).map_err(|e| {
                    Failure::error(format!("{}: cannot write the program: {e}", path.display()))
                })?;
            }
            if json {
                let value = compile_json(&filter);
                output::print(&format!("{}\n", output::pretty_json(&value)))?;
                return Ok(ExitCode::from(EXIT_OK));
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
            Ok(ExitCode::from(EXIT_OK))
        }
        Command::Match(args) => matching::run(args),
        Command::Route(args) => route::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Example(args) => analysis::run_example(args),
        Command::Diff(args) => analysis::run_diff(args),
        Command::Audit(args) => analysis::run_audit(args),
        Command::Translate(args) => analysis::run_translate(args),
        Command::Completions(args) => completions::run(&args),
        Command::Man => completions::man(),
    }
}

/// `compile --json` of a compiled filter.
fn compile_json(filter: &Filter) -> filtervm_vm::json::Value {
    use filtervm_vm::json::{Map, Value};
    let text = |node: Option<&filtervm_compiler::ir::Node>| {
        node.map_or(Value::Null, |n| Value::String(n.to_string()))
    };
    let mut m = Map::new();
    m.insert("valid".into(), Value::Bool(true));
    m.insert("dialect".into(), Value::from(filter.dialect().name()));
    m.insert("options".into(), filter.options().to_json());
    m.insert("ir_lowered".into(), text(filter.lowered_ir()));
    m.insert("ir_optimized".into(), text(filter.ir()));
    m.insert(
        "instructions".into(),
        diagnostics::number(filter.program().code().len()),
    );
    m.insert(
        "disassembly".into(),
        Value::String(filter.program().disassemble()),
    );
    m.insert(
        "program_bytes".into(),
        diagnostics::number(filter.to_bytes().len()),
    );
    Value::Object(m)
}

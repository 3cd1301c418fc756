//! `filtervm match`: one message per line; a bad line is reported and skipped; grep-like output
//! modes and exit status.

use super::input::{DEFAULT_MAX_LINE_BYTES, Input, Line};
use super::output::{Stderr, Stdout};
use super::progress::Progress;
use super::{EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK, Failure, PolicyArgs, load_program, print_errors};
use clap::Args;
use filtervm_compiler::{ErrorCode, Evaluator, Filter, read_messages};
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `filtervm match`.
#[derive(Args, Debug)]
pub(super) struct MatchArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// Pass selected lines through unchanged (like grep) instead of printing a verdict per line.
    #[arg(long, short = 'o', conflicts_with_all = ["count", "json"])]
    only_matching: bool,
    /// Print only the number of selected lines (like grep -c); with --json
    /// {"lines", "matched", "errors"}.
    #[arg(long, short = 'c')]
    count: bool,
    /// Select the lines that do NOT match (like grep -v): the verdicts, the lines passed through,
    /// the count and the exit status are those of the negated filter. Lines that cannot be read
    /// are errors either way.
    #[arg(long, short = 'v')]
    invert: bool,
    /// One JSON object per line: {"line": N, "match": true|false}, or {"line": N, "error":
    /// {"code", "message"}} for a line that is not a message; for an Event Grid batch one per
    /// event, with "event": I.
    #[arg(long)]
    json: bool,
    /// The longest line read as a message, in bytes (not counting its line ending); a longer
    /// line is reported as an error and skipped without being held in memory. The default,
    /// 4 MiB, is 16 times SNS's 256 KiB message limit and 4 times Event Grid's 1 MB event.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_line_bytes: u64,
    /// The messages, one per line: JSON in a message shape ({"attributes", "headers", "body"},
    /// the AWS SNS Publish API or notification shapes) or any other JSON document as the body
    /// itself (an SNS body, an Event Grid event or batch); `-` or absent reads stdin.
    messages: Option<PathBuf>,
    /// Run a program written by `compile --output` instead of a policy (its dialect and
    /// options travel with it).
    #[arg(long, conflicts_with_all = ["dialect", "policy", "filter", "options"])]
    program: Option<PathBuf>,
}

/// What `match` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    /// `match` / `no-match` / `error` per line.
    Verdicts,
    /// The selected lines, byte for byte.
    Lines,
    /// The number of selected lines.
    Count,
}

/// Why a line could not be judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LineError {
    /// A stable code: the library's (`INVALID_MESSAGE`, `MESSAGE_TOO_COMPLEX`, ...) or
    /// `LINE_TOO_LONG`.
    pub(super) code: String,
    /// What is wrong.
    pub(super) message: String,
}

/// The code of a line longer than `--max-line-bytes`.
pub(super) const LINE_TOO_LONG: &str = "LINE_TOO_LONG";

impl LineError {
    /// A line longer than `max` bytes.
    pub(super) fn too_long(bytes: u64, max: u64) -> LineError {
        LineError {
            code: LINE_TOO_LONG.to_owned(),
            message: format!(
                "the line is {bytes} bytes, longer than the maximum of {max} bytes \
                 (--max-line-bytes); skipped"
            ),
        }
    }

    /// `{"code", "message"}`.
    pub(super) fn to_json(&self) -> filtervm_vm::json::Value {
        let mut m = filtervm_vm::json::Map::new();
        m.insert("code".into(), self.code.as_str().into());
        m.insert("message".into(), self.message.as_str().into());
        filtervm_vm::json::Value::Object(m)
    }
}

/// The verdicts of one line: one message, or the events of a batch (an Event Grid array of
/// events, a CloudEvents batch), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdicts {
    /// The line is one message.
    One(bool),
    /// The line is a batch: each event's verdict, or why it could not be judged.
    Events(Vec<Result<bool, LineError>>),
}

impl Verdicts {
    /// Whether the line is selected: its message (with `invert`, its negation) matched, or for
    /// a batch some event's did.
    pub(super) fn selected(&self, invert: bool) -> bool {
        match self {
            Verdicts::One(matched) => *matched != invert,
            Verdicts::Events(events) => events.iter().any(|e| matches!(e, Ok(m) if *m != invert)),
        }
    }
}

/// Reads one message line and runs `filter` on it: its verdict (one per event for a batch), or
/// why the line is not a message. Every line `match` judges goes through here, and `explain`
/// reads its message the same way: [`read_messages`] tells the line's shape (the parts shape,
/// the AWS SNS shapes, any other JSON document as the body itself, an Event Grid batch split
/// into events) and each message is matched by its parts, the filter reading its own part.
pub(super) fn verdict(
    evaluator: &mut Evaluator,
    filter: &Filter,
    line: &[u8],
) -> Result<Verdicts, LineError> {
    let mut messages = read_messages(line, filter.options()).map_err(LineError::from)?;
    if messages.is_batch() {
        return Ok(Verdicts::Events(
            messages
                .map(|m| {
                    evaluator
                        .matches_parts(filter, &m.parts())
                        .map_err(LineError::from)
                })
                .collect(),
        ));
    }
    let message = messages.next().ok_or_else(|| LineError {
        code: ErrorCode::InvalidMessage.as_str().to_owned(),
        message: "the line holds no message".to_owned(),
    })?;
    evaluator
        .matches_parts(filter, &message.parts())
        .map(Verdicts::One)
        .map_err(LineError::from)
}

impl From<filtervm_compiler::MessageError> for LineError {
    fn from(e: filtervm_compiler::MessageError) -> LineError {
        LineError {
            code: e.code.as_str().to_owned(),
            message: e.to_string(),
        }
    }
}

/// Runs `filtervm match`: exit 0 when some line was selected, 1 when none was, 2 when a line could
/// not be read (every other line is still judged and counted) or the policy is invalid. A closed
/// standard output ends the run early and quietly.
pub(super) fn run(args: MatchArgs) -> Result<ExitCode, Failure> {
    if args.policy.reads_stdin() && args.messages.as_deref().is_none_or(super::is_stdin) {
        return Err(Failure::usage(
            "the policy is read from standard input (--policy -), so the messages must come \
             from a file",
        ));
    }
    let filter = match &args.program {
        Some(path) => load_program(path)?,
        None => {
            let policy = args.policy.read()?;
            match policy.compile() {
                Ok(f) => f,
                Err(e) => {
                    print_errors(&policy, &e);
                    return Ok(ExitCode::from(EXIT_ERROR));
                }
            }
        }
    };
    let output = if args.only_matching {
        Output::Lines
    } else if args.count {
        Output::Count
    } else {
        Output::Verdicts
    };
    let mut input = Input::open(args.messages.as_deref(), args.max_line_bytes)?;
    let name = input.name.clone();
    let mut progress = Progress::new("match", input.size);
    let mut out = Stdout::new();
    let mut evaluator = Evaluator::new();
    let (mut number, mut messages, mut selected, mut bad) = (0u64, 0u64, 0u64, 0u64);
    loop {
        let line = input.lines.next().map_err(|e| {
            progress.clear();
            Failure::error(format!("{name}: read error after line {number}: {e}"))
        })?;
        let (content, terminator) = match line {
            None => break,
            Some(Line::Whole {
                content,
                terminator,
            }) => (content, terminator),
            Some(Line::TooLong { bytes }) => {
                number += 1;
                let error = LineError::too_long(bytes, args.max_line_bytes);
                messages += 1;
                bad += 1;
                report(
                    &mut out, &progress, &name, number, &error, output, args.json,
                )?;
                progress.line(input.lines.consumed());
                continue;
            }
        };
        number += 1;
        if content.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        messages += 1;
        match verdict(&mut evaluator, &filter, content) {
            Ok(verdicts) => {
                let chosen = verdicts.selected(args.invert);
                selected += u64::from(chosen);
                match output {
                    Output::Count => {}
                    // The line as read, with its own `\n` or `\r\n`; a last line without one
                    // gets `\n` (like grep).
                    Output::Lines if chosen => {
                        out.write_bytes(content)?;
                        out.write_bytes(if terminator.is_empty() {
                            b"\n"
                        } else {
                            terminator
                        })?;
                    }
                    Output::Lines => {}
                    Output::Verdicts => {}
                }
                match &verdicts {
                    Verdicts::One(_) if output == Output::Verdicts => {
                        if args.json {
                            writeln!(out, "{{\"line\":{number},\"match\":{chosen}}}")?;
                        } else {
                            writeln!(out, "{}", if chosen { "match" } else { "no-match" })?;
                        }
                    }
                    Verdicts::One(_) => {}
                    Verdicts::Events(events) => {
                        let event = Event {
                            out: &mut out,
                            progress: &progress,
                            name: &name,
                            number,
                            output,
                            args: &args,
                        };
                        bad += event.report(events)?;
                    }
                }
            }
            Err(error) => {
                bad += 1;
                report(
                    &mut out, &progress, &name, number, &error, output, args.json,
                )?;
            }
        }
        progress.line(input.lines.consumed());
        if out.is_closed() {
            break;
        }
    }
    if output == Output::Count {
        if args.json {
            writeln!(
                out,
                "{{\"lines\":{messages},\"matched\":{selected},\"errors\":{bad}}}"
            )?;
        } else {
            writeln!(out, "{selected}")?;
        }
    }
    out.flush()?;
    progress.finish(messages, selected, bad);
    if bad > 0 {
        if !out.is_closed() {
            writeln!(
                Stderr,
                "{name}: {bad} of {messages} lines could not be read as messages"
            );
        }
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    Ok(ExitCode::from(if selected > 0 {
        EXIT_OK
    } else {
        EXIT_NEGATIVE
    }))
}

/// Where the events of a batch line are reported.
struct Event<'a> {
    out: &'a mut Stdout,
    progress: &'a Progress,
    name: &'a str,
    number: u64,
    output: Output,
    args: &'a MatchArgs,
}

impl Event<'_> {
    /// Prints a batch line's verdicts, one per event with its index (`match (event 0)`, or
    /// `{"line", "event", "match"}`), and reports its events that could not be judged like bad
    /// lines (`NAME:LINE: event I: reason`); returns 1 when there were some (the line counts as
    /// one error), else 0.
    fn report(self, events: &[Result<bool, LineError>]) -> Result<u64, Failure> {
        let (number, json) = (self.number, self.args.json);
        let mut errors = 0;
        for (index, event) in events.iter().enumerate() {
            match event {
                Ok(matched) if self.output == Output::Verdicts => {
                    let chosen = *matched != self.args.invert;
                    if json {
                        writeln!(
                            self.out,
                            "{{\"line\":{number},\"event\":{index},\"match\":{chosen}}}"
                        )?;
                    } else {
                        let verdict = if chosen { "match" } else { "no-match" };
                        writeln!(self.out, "{verdict} (event {index})")?;
                    }
                }
                Ok(_) => {}
                Err(error) => {
                    errors = 1;
                    self.out.flush()?;
                    let name = self.name;
                    self.progress.suspend(|| {
                        writeln!(Stderr, "{name}:{number}: event {index}: {}", error.message)
                    });
                    if self.output == Output::Verdicts {
                        if json {
                            let line = format!(
                                "{{\"line\":{number},\"event\":{index},\"error\":{}}}",
                                error.to_json()
                            );
                            writeln!(self.out, "{line}")?;
                        } else {
                            writeln!(self.out, "error (event {index})")?;
                        }
                    }
                }
            }
        }
        Ok(errors)
    }
}

/// Reports a line that could not be judged: `NAME:LINE: reason` on standard error, and in the
/// verdict output an `error` line (or `{"line", "error"}`).
fn report(
    out: &mut Stdout,
    progress: &Progress,
    name: &str,
    number: u64,
    error: &LineError,
    output: Output,
    json: bool,
) -> Result<(), Failure> {
    out.flush()?;
    progress.suspend(|| writeln!(Stderr, "{name}:{number}: {}", error.message));
    if output == Output::Verdicts {
        if json {
            let line = format!("{{\"line\":{number},\"error\":{}}}", error.to_json());
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "error")?;
        }
    }
    Ok(())
}

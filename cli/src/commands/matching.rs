//! `filtervm match`: one message per line; a bad line is reported and skipped; grep-like output
//! modes and exit status.

use super::batches::{self, Batch, judge_in_order};
use super::failure::{EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK, Failure};
use super::input::{DEFAULT_MAX_LINE_BYTES, Input, Line};
use super::output::{Stderr, Stdout};
use super::progress::Progress;
use super::{PolicyArgs, load_program, print_errors};
use clap::Args;
use filtervm::{ErrorCode, Filter, Matcher, Message, ReadMode, read_messages};
use std::io::Write as _;
use std::num::NonZeroUsize;
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
    /// Worker threads (default: every core). The output is in input order whatever the number;
    /// 1 judges every line on the main thread.
    #[arg(long, short = 'j', value_name = "N")]
    threads: Option<NonZeroUsize>,
    /// Trust that every message line is JSON (validated upstream: a broker that parsed it, an
    /// archive a JSON encoder wrote): members no filter reads are skipped by their structure
    /// alone, without checking their UTF-8, numbers or literals. What a filter reads is checked
    /// as always; a line whose skipped parts are not JSON may then get a verdict instead of an
    /// error (the library's "Trusted input" documentation lists which).
    #[arg(long)]
    trusted_input: bool,
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
    /// `MESSAGE_TOO_LARGE`.
    pub(super) code: String,
    /// What is wrong.
    pub(super) message: String,
}

/// The code of a line longer than `--max-line-bytes`: a message beyond the size read, replay's
/// code for the same situation (a message cell beyond the same default limit).
pub(super) const MESSAGE_TOO_LARGE: &str = "MESSAGE_TOO_LARGE";

impl LineError {
    /// A line longer than `max` bytes.
    pub(super) fn too_long(bytes: u64, max: u64) -> LineError {
        LineError {
            code: MESSAGE_TOO_LARGE.to_owned(),
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

/// Whether `message` is one without attributes (with a body) that an sns filter on attributes
/// judges (sns rule 12): the likely sign of a filter meant for the body.
fn judged_without_attributes(filter: &Filter, message: &filtervm::ReadMessage<'_>) -> bool {
    matches!(filter.options(), filtervm::Options::Sns(o) if o.scope == filtervm::SnsScope::MessageAttributes)
        && message.attributes().is_none()
        && message.body().is_some()
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
/// reads its message the same way: the library's [`read_messages`] tells the line's shape (the
/// parts shape, the AWS SNS shapes, any other JSON document as the body itself, an Event Grid
/// batch split into events) and each message is matched by its parts through the library's
/// [`Matcher`], the filter reading its own part. A line that is the body itself, for a filter
/// on the body (an object whose first member's name belongs to no shape: most log lines), is
/// judged in the binder's one read ([`Matcher::matches_body_document`], which gives what
/// reading its shape first gives). `route` reads its lines through the same
/// function for each group of subscriptions (`filtervm::SubscriptionSet::matching_messages`).
///
/// Also says whether the line was a message without attributes that an sns filter on attributes
/// judged (sns rule 12: it matches only `{}`): `match` then notes that the filter may be meant
/// for the body.
pub(super) fn verdict(
    matcher: &mut Matcher,
    filter: &Filter,
    line: &[u8],
) -> Result<(Verdicts, bool), LineError> {
    if let Some(verdict) = matcher.matches_body_document(filter, line) {
        // A message without attributes judged by a filter on the body: nothing to note.
        return verdict
            .map(|v| (Verdicts::One(v), false))
            .map_err(LineError::from);
    }
    let mut messages = read_messages(line, filter.options()).map_err(LineError::from)?;
    if messages.is_batch() {
        return Ok((
            Verdicts::Events(
                messages
                    .map(|m| {
                        matcher
                            .matches(filter, &Message::from(&m))
                            .map_err(LineError::from)
                    })
                    .collect(),
            ),
            false,
        ));
    }
    let message = messages.next().ok_or_else(|| LineError {
        code: ErrorCode::InvalidMessage.as_str().to_owned(),
        message: "the line holds no message".to_owned(),
    })?;
    let verdict = matcher
        .matches(filter, &Message::from(&message))
        .map(Verdicts::One)
        .map_err(LineError::from)?;
    Ok((verdict, judged_without_attributes(filter, &message)))
}

impl From<filtervm::MessageError> for LineError {
    fn from(e: filtervm::MessageError) -> LineError {
        LineError {
            code: e.code.as_str().to_owned(),
            message: e.to_string(),
        }
    }
}

/// Runs `filtervm match`: exit 0 when some line was selected, 1 when none was, 2 when a line could
/// not be read (every other line is still judged and counted) or the policy is invalid. A closed
/// standard output ends the run early and quietly.
///
/// The input is read in batches of lines ([`super::batches`]), judged by `--threads` workers
/// (each with its own [`Matcher`], all through [`verdict`]) and written in input order, so the
/// output is the same whatever the number of threads.
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
    let filter = Filter::from_compiled(filter, None);
    let settings = Settings {
        output: if args.only_matching {
            Output::Lines
        } else if args.count {
            Output::Count
        } else {
            Output::Verdicts
        },
        json: args.json,
        invert: args.invert,
        max_line_bytes: args.max_line_bytes,
    };
    let input = Input::open(args.messages.as_deref(), args.max_line_bytes)?;
    let name = input.name.clone();
    let mut progress = Progress::new("match", input.size);
    let mut reader = input.batches();
    let mut out = Stdout::new();
    let mut totals = Judged::default();
    let read_error = judge_in_order(
        &mut reader,
        batches::threads(args.threads),
        || Matcher::with_read_mode(read_mode(args.trusted_input)),
        |matcher, batch| judge(matcher, &filter, batch, &settings),
        |judged| write(&mut out, &mut progress, &name, judged, &mut totals),
    )?;
    if let Some(e) = read_error {
        progress.clear();
        return Err(Failure::error(format!(
            "{name}: read error after line {}: {e}",
            totals.last_line
        )));
    }
    let Judged {
        messages,
        selected,
        bad,
        ..
    } = &totals;
    let (messages, selected, bad) = (*messages, *selected, *bad);
    if settings.output == Output::Count {
        if settings.json {
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
    if totals.without_attributes > 0 && !out.is_closed() {
        writeln!(
            Stderr,
            "{name}: note: {} of {messages} messages have no attributes, and an sns filter on \
             attributes matches such a message only when its policy is {{}} (sns rule 12); to \
             filter on the JSON body, use --options '{{\"scope\":\"MessageBody\"}}'",
            totals.without_attributes
        );
    }
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

/// The read mode `--trusted-input` chooses (shared by `match` and `route`).
pub(super) fn read_mode(trusted_input: bool) -> ReadMode {
    if trusted_input {
        ReadMode::Trusted
    } else {
        ReadMode::Validating
    }
}

/// How `match` judges and prints lines.
struct Settings {
    output: Output,
    json: bool,
    invert: bool,
    max_line_bytes: u64,
}

/// What a batch of lines came to: its standard output, the reports for standard error (each
/// with the length of the output written before it, so the two streams interleave as they
/// would line by line), and its counts.
#[derive(Debug, Default)]
struct Judged {
    out: Vec<u8>,
    /// `(bytes of out before it, line number, message)`.
    reports: Vec<(usize, u64, String)>,
    /// Lines judged (blank lines are not messages).
    messages: u64,
    /// Lines selected.
    selected: u64,
    /// Lines that could not be judged.
    bad: u64,
    /// The number of the batch's last line.
    last_line: u64,
    /// Input bytes read up to the end of the batch.
    consumed: u64,
    /// Lines without attributes judged by an sns filter on attributes ([`verdict`]).
    without_attributes: u64,
}

/// Judges the lines of `batch` with `filter`.
fn judge(matcher: &mut Matcher, filter: &Filter, batch: &Batch, settings: &Settings) -> Judged {
    let mut judged = Judged {
        consumed: batch.consumed,
        ..Judged::default()
    };
    for (number, line) in batch.lines() {
        judged.last_line = number;
        let (content, terminator) = match line {
            Line::Whole {
                content,
                terminator,
            } => (content, terminator),
            Line::TooLong { bytes } => {
                let error = LineError::too_long(bytes, settings.max_line_bytes);
                judged.messages += 1;
                report(&mut judged, number, &error, settings);
                continue;
            }
        };
        if content.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        judged.messages += 1;
        match verdict(matcher, filter, content) {
            Ok((verdicts, without_attributes)) => {
                judged.without_attributes += u64::from(without_attributes);
                let chosen = verdicts.selected(settings.invert);
                judged.selected += u64::from(chosen);
                let out = &mut judged.out;
                match settings.output {
                    Output::Count => {}
                    // The line as read, with its own `\n` or `\r\n`; a last line without one
                    // gets `\n` (like grep).
                    Output::Lines if chosen => {
                        out.extend_from_slice(content);
                        out.extend_from_slice(if terminator.is_empty() {
                            b"\n"
                        } else {
                            terminator
                        });
                    }
                    Output::Lines => {}
                    Output::Verdicts => match &verdicts {
                        Verdicts::One(_) if settings.json => {
                            let _ = writeln!(out, "{{\"line\":{number},\"match\":{chosen}}}");
                        }
                        Verdicts::One(_) => {
                            out.extend_from_slice(if chosen { b"match\n" } else { b"no-match\n" });
                        }
                        Verdicts::Events(_) => {}
                    },
                }
                if let Verdicts::Events(events) = &verdicts {
                    report_events(&mut judged, number, events, settings);
                }
            }
            Err(error) => report(&mut judged, number, &error, settings),
        }
    }
    judged
}

/// Records a batch line's events: one verdict per event with its index (`match (event 0)`, or
/// `{"line", "event", "match"}`), and the events that could not be judged as reports
/// (`NAME:LINE: event I: reason`); a line with such events counts as one error.
fn report_events(
    judged: &mut Judged,
    number: u64,
    events: &[Result<bool, LineError>],
    settings: &Settings,
) {
    let mut errors = false;
    for (index, event) in events.iter().enumerate() {
        match event {
            Ok(matched) if settings.output == Output::Verdicts => {
                let chosen = *matched != settings.invert;
                if settings.json {
                    let _ = writeln!(
                        judged.out,
                        "{{\"line\":{number},\"event\":{index},\"match\":{chosen}}}"
                    );
                } else {
                    let verdict = if chosen { "match" } else { "no-match" };
                    let _ = writeln!(judged.out, "{verdict} (event {index})");
                }
            }
            Ok(_) => {}
            Err(error) => {
                errors = true;
                judged.reports.push((
                    judged.out.len(),
                    number,
                    format!("event {index}: {}", error.message),
                ));
                if settings.output == Output::Verdicts {
                    if settings.json {
                        let _ = writeln!(
                            judged.out,
                            "{{\"line\":{number},\"event\":{index},\"error\":{}}}",
                            error.to_json()
                        );
                    } else {
                        let _ = writeln!(judged.out, "error (event {index})");
                    }
                }
            }
        }
    }
    judged.bad += u64::from(errors);
}

/// Records a line that could not be judged: `NAME:LINE: reason` for standard error, and in the
/// verdict output an `error` line (or `{"line", "error"}`).
fn report(judged: &mut Judged, number: u64, error: &LineError, settings: &Settings) {
    judged.bad += 1;
    judged
        .reports
        .push((judged.out.len(), number, error.message.clone()));
    if settings.output == Output::Verdicts {
        if settings.json {
            let _ = writeln!(
                judged.out,
                "{{\"line\":{number},\"error\":{}}}",
                error.to_json()
            );
        } else {
            judged.out.extend_from_slice(b"error\n");
        }
    }
}

/// Writes a judged batch (its output, its reports on standard error in their places) and adds
/// up its counts; false once standard output is closed (stop reading).
fn write(
    out: &mut Stdout,
    progress: &mut Progress,
    name: &str,
    judged: Judged,
    totals: &mut Judged,
) -> Result<bool, Failure> {
    let mut written = 0;
    for (at, number, message) in &judged.reports {
        out.write_bytes(judged.out.get(written..*at).unwrap_or_default())?;
        written = *at;
        out.flush()?;
        if out.is_closed() {
            break;
        }
        progress.suspend(|| writeln!(Stderr, "{name}:{number}: {message}"));
    }
    out.write_bytes(judged.out.get(written..).unwrap_or_default())?;
    totals.messages += judged.messages;
    totals.selected += judged.selected;
    totals.bad += judged.bad;
    totals.last_line = judged.last_line;
    totals.without_attributes += judged.without_attributes;
    progress.lines(judged.messages, judged.consumed);
    Ok(!out.is_closed())
}

//! `filtervm route`: every message of a log through a whole subscriptions file.
//!
//! The subscriptions are loaded into one [`Subscriptions`] set (invalid ones reported, the rest
//! routed). The messages are read in batches of lines by the main thread and routed by
//! `--threads` workers, each with its own [`Router`] over the shared set; the main thread writes
//! the batches' results in input order ([`super::batches`]: at most two batches per worker are in
//! flight, so memory stays bounded whatever the input).
//!
//! Each line is read exactly as `match` reads it, by the library's one reading path
//! (`filtervm::SubscriptionSet::matching_messages`: the parts shape, the AWS SNS shapes, any other
//! document as the body; an Event Grid batch is routed event by event).
//!
//! Output: per message `{"line":N,"ids":[...]}` (ids as written in the subscriptions file, in
//! its order; `{"line":N,"event":I,"ids":[...]}` for each event of a batch), with
//! `"errors":[{"group","code","message"}]` when a group of subscriptions could not read the
//! message (the other groups still deliver); or with `--by-subscription`, per subscription at the
//! end `{"id":ID,"count":N,"first_lines":[...]}`.

use super::batches::{self, Batch, judge_in_order};
use super::diagnostics::{self, Source, Sources, Stream};
use super::failure::{EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK, Failure};
use super::input::{DEFAULT_MAX_LINE_BYTES, Input, Line};
use super::is_stdin;
use super::matching::LineError;
use super::output::{Stderr, Stdout};
use super::progress::Progress;
use super::subscriptions::{GroupError, Invalid, Router, Subscriptions};
use clap::Args;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `filtervm route`.
#[derive(Args, Debug)]
pub(super) struct RouteArgs {
    /// The subscriptions, one JSON object per line: {"id": "a" | 7, "dialect": "sns", "policy":
    /// {...}, "options": {...}} (options optional; for stream the policy may be the text form as
    /// a string; dialects may be mixed).
    #[arg(long, short = 's', value_name = "SUBS.ndjson")]
    subscriptions: PathBuf,
    /// The messages (NDJSON); `-` or absent reads stdin. Each group of subscriptions reads a line
    /// as `match` would for its dialect and options.
    messages: Option<PathBuf>,
    /// Instead of one line per message, print at the end one line per subscription: {"id",
    /// "count", "first_lines"} (the messages it would have received).
    #[arg(long)]
    by_subscription: bool,
    /// With --by-subscription, how many first line numbers to list per subscription.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        requires = "by_subscription"
    )]
    first: usize,
    /// Stop at the first invalid subscription instead of routing the others.
    #[arg(long)]
    strict: bool,
    /// Worker threads (default: every core). The output is in input order whatever the number.
    #[arg(long, short = 'j', value_name = "N")]
    threads: Option<NonZeroUsize>,
    /// The longest message line read, in bytes; a longer line is reported as an error for that
    /// message and skipped (see `match --help`).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_line_bytes: u64,
    /// Trust that every message line is JSON (validated upstream: a broker that parsed it, an
    /// archive a JSON encoder wrote): members no filter reads are skipped by their structure
    /// alone, without checking their UTF-8, numbers or literals. What a filter reads is checked
    /// as always; a line whose skipped parts are not JSON may then get a verdict instead of an
    /// error (the library's "Trusted input" documentation lists which).
    #[arg(long)]
    trusted_input: bool,
}

/// The longest subscription line: four times the largest policy (256 KiB), which leaves room for
/// the id, the options and escapes.
const SUBSCRIPTION_LINE_BYTES: u64 = 4 * filtervm_compiler::MAX_POLICY_BYTES as u64;

/// What a worker made of a batch.
#[derive(Default)]
struct Routed {
    /// What goes to standard output (NDJSON, per message).
    out: Vec<u8>,
    /// `(line, subscription)` pairs, for `--by-subscription`.
    pairs: Vec<(u64, u32)>,
    /// Reports for standard error, one line each.
    reports: Vec<String>,
    messages: u64,
    routed: u64,
    errors: u64,
    consumed: u64,
}

/// Runs `filtervm route`: exit 0 when some message reached some subscription, 1 when none did,
/// 2 when a subscription or a message could not be read (the rest is still routed).
pub(super) fn run(args: RouteArgs) -> Result<ExitCode, Failure> {
    if is_stdin(&args.subscriptions) && args.messages.as_deref().is_none_or(is_stdin) {
        return Err(Failure::usage(
            "the subscriptions are read from standard input (--subscriptions -), so the messages \
             must come from a file",
        ));
    }
    let (subscriptions, invalid) = load(&args)?;
    if args.strict && invalid > 0 {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    let input = Input::open(args.messages.as_deref(), args.max_line_bytes)?;
    let name = input.name.clone();
    let mut progress = Progress::new("route", input.size);
    let mut writer = Writer {
        name: name.clone(),
        out: Stdout::new(),
        totals: Routed::default(),
        per_subscription: vec![(0u64, Vec::new()); subscriptions.len()],
        first: args.first,
    };
    let read_error = judge_in_order(
        &mut input.batches(),
        batches::threads(args.threads),
        || Router::with_read_mode(super::matching::read_mode(args.trusted_input)),
        |router, batch| {
            route_batch(
                &subscriptions,
                router,
                batch,
                args.max_line_bytes,
                args.by_subscription,
            )
        },
        |routed| writer.write(routed, &mut progress),
    )?;
    let Writer {
        mut out,
        totals,
        per_subscription,
        ..
    } = writer;
    if args.by_subscription {
        for (index, (count, first)) in per_subscription.iter().enumerate() {
            let lines: Vec<String> = first.iter().map(u64::to_string).collect();
            writeln!(
                out,
                "{{\"id\":{},\"count\":{count},\"first_lines\":[{}]}}",
                subscriptions.id(index),
                lines.join(",")
            )?;
        }
    }
    out.flush()?;
    progress.finish(
        totals.messages,
        totals.routed,
        totals.errors + invalid as u64,
    );
    if let Some(e) = read_error {
        return Err(Failure::error(format!("{name}: read error: {e}")));
    }
    if totals.errors > 0 {
        writeln!(
            Stderr,
            "{name}: {} of {} messages could not be read by every group of subscriptions",
            totals.errors, totals.messages
        );
    }
    Ok(ExitCode::from(if invalid > 0 || totals.errors > 0 {
        EXIT_ERROR
    } else if totals.routed > 0 {
        EXIT_OK
    } else {
        EXIT_NEGATIVE
    }))
}

/// Writes the routed batches in order, and adds up their counts.
struct Writer {
    /// The messages' input name, for reports.
    name: String,
    out: Stdout,
    totals: Routed,
    /// Per subscription: the messages it receives, and the first line numbers.
    per_subscription: Vec<(u64, Vec<u64>)>,
    /// How many first line numbers to keep.
    first: usize,
}

impl Writer {
    /// Writes one batch's results; false once standard output is closed (stop reading).
    fn write(&mut self, routed: Routed, progress: &mut Progress) -> Result<bool, Failure> {
        self.out.write_bytes(&routed.out)?;
        if !routed.reports.is_empty() {
            self.out.flush()?;
            let name = &self.name;
            progress.suspend(|| {
                for report in &routed.reports {
                    writeln!(Stderr, "{name}:{report}");
                }
            });
        }
        for &(line, s) in &routed.pairs {
            if let Some((count, first)) = self.per_subscription.get_mut(s as usize) {
                *count += 1;
                if first.len() < self.first {
                    first.push(line);
                }
            }
        }
        self.totals.messages += routed.messages;
        self.totals.routed += routed.routed;
        self.totals.errors += routed.errors;
        progress.lines(routed.messages, routed.consumed);
        Ok(!self.out.is_closed())
    }
}

/// Loads the subscriptions file, reporting each invalid subscription on standard error; returns
/// the set and the number of invalid ones (with `--strict`, stops at the first).
fn load(args: &RouteArgs) -> Result<(Subscriptions, usize), Failure> {
    load_subscriptions(&args.subscriptions, args.strict)
}

/// [`load`] of a subscriptions file at `path` (also read by `filtervm audit`).
pub(super) fn load_subscriptions(
    path: &std::path::Path,
    strict: bool,
) -> Result<(Subscriptions, usize), Failure> {
    let mut input = Input::open(Some(path), SUBSCRIPTION_LINE_BYTES)?;
    let name = input.name.clone();
    let mut subscriptions = Subscriptions::default();
    let mut invalid = 0usize;
    loop {
        let number = input.lines.number() + 1;
        let line = input
            .lines
            .next()
            .map_err(|e| Failure::error(format!("{name}:{number}: {e}")))?;
        let result = match line {
            None => break,
            Some(Line::Whole { content, .. }) if content.iter().all(u8::is_ascii_whitespace) => {
                continue;
            }
            Some(Line::Whole { content, .. }) => match std::str::from_utf8(content) {
                Ok(text) => subscriptions
                    .add_line(number as usize, text)
                    .map_err(|bad| (text.to_owned(), bad)),
                Err(e) => Err((
                    String::new(),
                    Invalid::line_error(number, format!("not UTF-8: {e}")),
                )),
            },
            Some(Line::TooLong { bytes }) => Err((
                String::new(),
                Invalid::line_error(
                    number,
                    format!(
                        "the line is {bytes} bytes, longer than a subscription may be \
                         ({SUBSCRIPTION_LINE_BYTES} bytes)"
                    ),
                ),
            )),
        };
        if let Err((text, bad)) = result {
            invalid += 1;
            report_invalid(&name, &text, &bad);
            if strict {
                writeln!(
                    Stderr,
                    "filtervm route: stopped at the first invalid subscription (--strict)"
                );
                break;
            }
        }
    }
    if invalid > 0 && !strict {
        writeln!(
            Stderr,
            "filtervm route: {invalid} invalid subscriptions not loaded; routing the {} others",
            subscriptions.len()
        );
    }
    Ok((subscriptions, invalid))
}

/// Reports an invalid subscription: each problem with its id, code and pointer, underlined in
/// the subscription's line.
fn report_invalid(name: &str, line: &str, bad: &Invalid) {
    let id = bad.id.as_deref().unwrap_or("(none)");
    if line.is_empty() {
        // A line that could not be read as text: nothing to show.
        for p in &bad.problems {
            writeln!(
                Stderr,
                "{name}:{}: error[{}]: {}",
                bad.line, p.code, p.message
            );
        }
        return;
    }
    let messages: Vec<String> = bad
        .problems
        .iter()
        .map(|p| format!("subscription {id}: {}", p.message))
        .collect();
    for (problem, message) in bad.problems.iter().zip(&messages) {
        let source = |prefix| Source {
            name,
            text: line,
            first_line: bad.line,
            prefix,
        };
        let sources = Sources {
            policy: source(problem.within),
            options: Some(source("/options")),
        };
        let shown = diagnostics::Problem {
            code: &problem.code,
            pointer: &problem.pointer,
            message,
            in_options: problem.within == "/options",
        };
        let text = diagnostics::render_problems(&[shown], &sources, Stream::Stderr);
        writeln!(Stderr, "{}", text.trim_end());
    }
}

/// Routes one batch.
fn route_batch(
    subscriptions: &Subscriptions,
    router: &mut Router,
    batch: &Batch,
    max_line_bytes: u64,
    by_subscription: bool,
) -> Routed {
    let mut routed = Routed {
        consumed: batch.consumed,
        ..Routed::default()
    };
    for (number, line) in batch.lines() {
        match line {
            Line::Whole { content, .. } if content.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Whole { content, .. } => {
                routed.messages += 1;
                let mut reached = false;
                let mut unread = false;
                router.route(subscriptions, content, |event, ids, errors| {
                    reached |= !ids.is_empty();
                    if !errors.is_empty() {
                        unread = true;
                        for e in errors {
                            let at = event.map_or(String::new(), |i| format!("event {i}: "));
                            routed.reports.push(format!(
                                "{number}: {at}the {} subscriptions cannot read this message: {}",
                                e.group, e.error.message
                            ));
                        }
                    }
                    if by_subscription {
                        routed.pairs.extend(ids.iter().map(|&s| (number, s)));
                    } else {
                        write_line(&mut routed.out, subscriptions, number, event, ids, errors);
                    }
                });
                routed.routed += u64::from(reached);
                routed.errors += u64::from(unread);
            }
            Line::TooLong { bytes } => {
                routed.messages += 1;
                let error = LineError::too_long(bytes, max_line_bytes);
                routed.reports.push(format!("{number}: {}", error.message));
                routed.errors += 1;
                if !by_subscription {
                    let line = format!(
                        "{{\"line\":{number},\"ids\":[],\"error\":{}}}\n",
                        error.to_json()
                    );
                    routed.out.extend_from_slice(line.as_bytes());
                }
            }
        }
    }
    routed
}

/// One message's output line (`event`: its index in a batch).
fn write_line(
    out: &mut Vec<u8>,
    subscriptions: &Subscriptions,
    number: u64,
    event: Option<usize>,
    ids: &[u32],
    errors: &[GroupError],
) {
    use std::io::Write as _;
    let _ = write!(out, "{{\"line\":{number},");
    if let Some(event) = event {
        let _ = write!(out, "\"event\":{event},");
    }
    out.extend_from_slice(b"\"ids\":[");
    for (i, &s) in ids.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(subscriptions.id(s as usize).as_bytes());
    }
    out.push(b']');
    if !errors.is_empty() {
        out.extend_from_slice(b",\"errors\":[");
        for (i, e) in errors.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let mut m = filtervm_vm::json::Map::new();
            m.insert("group".into(), e.group.as_str().into());
            m.insert("code".into(), e.error.code.as_str().into());
            m.insert("message".into(), e.error.message.as_str().into());
            let _ = write!(out, "{}", filtervm_vm::json::Value::Object(m));
        }
        out.push(b']');
    }
    out.extend_from_slice(b"}\n");
}

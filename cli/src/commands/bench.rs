//! `filtervm bench`: measure a policy set of your own.
//!
//! It compiles every policy (one per line), then runs the messages (one per line) through a
//! `SubscriptionSet` of them all, through the one-by-one path (bind and run each filter on its own) and through the
//! reference interpreter, checks that the three agree on every message — and fails loudly when
//! they do not — and prints one `name: value` line per figure.
//!
//! The reference interpreter lives in `filtervm-conformance`, which this tool does not link: it
//! runs it out of process, as `filtervm-conformance --reference` (found next to this executable,
//! or at `$FILTERVM_REFERENCE`), which reads the same policies and the messages on its standard
//! input and reports each message's matches and its own evaluation time. The oracle thus shares
//! nothing with the engine it checks, not even the address space. When it is not built (and
//! `$FILTERVM_REFERENCE` is not set), or with `--no-reference`, the set is checked against the
//! one-by-one path only, a note says so on standard error, and `reference_ns_per_message` is
//! `n/a`.
//!
//! With `--from-bytes` it also times each message line from its raw bytes to the set's verdict,
//! the line read as `filtervm match` reads it (`from_bytes_ns_per_message`): the figure a
//! broker holding the bytes sees, where `set_ns_per_message` starts from a message already read.
//!
//! Each path runs for at most `--seconds` (default 10): binding and the set repeat the messages
//! until then (at least one pass), the one-by-one path and the reference interpreter stop early.
//! A default run thus measures for at most about 40 seconds, with a progress bar per path on a
//! terminal.

use super::failure::{EXIT_NEGATIVE, EXIT_OK, Failure};
use super::output::{self, Stderr};
use super::progress::{phase_bar, stderr_is_terminal};
use clap::Args;
use filtervm_compiler::{
    Dialect, Evaluator, Filter, Matches, MessageError, MessageParts, MessageShape, Options,
    SetScratch, SnsScope, SubscriptionSet, compile_text, compile_value, read_message,
    read_messages,
};
use filtervm_vm::json::{Map, Value};
use filtervm_vm::message::{Attribute, AttributeType, Header};
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The arguments of `filtervm bench`.
#[derive(Args, Debug)]
pub(super) struct BenchArgs {
    /// The dialect: sns, basaltic, eventgrid, stream, expr or eventbridge.
    #[arg(long, short)]
    dialect: Dialect,
    /// The policies, one per line (JSON; for `stream` also the text form).
    #[arg(long)]
    policies: PathBuf,
    /// The messages, one per line. For `sns`: flat JSON objects whose members become attributes
    /// (strings → String, numbers → Number), or with `--options '{"scope":"MessageBody"}'` the raw
    /// bodies; for the other dialects the conformance message shape.
    #[arg(long)]
    messages: PathBuf,
    /// The time budget of each path, in seconds: binding and the set repeat the messages until
    /// it is spent (at least one pass), the one-by-one path and the reference interpreter stop
    /// early when it is (agreement is checked on every message a path ran).
    #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
    seconds: f64,
    /// Do not run the reference interpreter even when it is built.
    #[arg(long)]
    no_reference: bool,
    /// Dialect options as a JSON object.
    #[arg(long, default_value = "{}")]
    options: String,
    /// Also measure from each message line's raw bytes to the set's verdict, the line read as
    /// `filtervm match` reads it (the parts shape, the AWS SNS shapes, an Event Grid or
    /// CloudEvents batch split into its events): `from_bytes_ns_per_message`, per message read.
    /// Every line must then be such a message, and its verdict must equal the set's.
    #[arg(long)]
    from_bytes: bool,
}

/// One message: what the VM reads and what the reference reads (the vector shape, written with
/// every number as the line wrote it).
struct Sample {
    message: SampleMessage,
    json: Value,
    /// The line as read from the file.
    line: Box<[u8]>,
}

/// A positive, finite number of seconds.
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 1e9 => Ok(s),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}

/// Runs `filtervm bench`.
pub(super) fn run(args: BenchArgs) -> Result<ExitCode, Failure> {
    let run_started = Instant::now();
    let options = super::options::parse(args.dialect, &args.options)?
        .map_err(|e| Failure::usage(format!("--options: {e}")))?;
    let reference = if args.no_reference {
        None
    } else {
        reference_binary()?
    };
    let dialect = args.dialect;
    let budget = Duration::from_secs_f64(args.seconds);

    // Policies.
    let lines = read_lines(&args.policies)?;
    let bar = phase_bar("compile", lines.len() as u64);
    let started = Instant::now();
    let mut filters = Vec::with_capacity(lines.len());
    for (number, line) in &lines {
        let filter = compile_line(dialect, line, &options).map_err(|e| {
            bar.finish_and_clear();
            Failure {
                message: format!("{}:{number}: {e}", args.policies.display()),
                code: EXIT_NEGATIVE,
            }
        })?;
        filters.push(filter);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let compile_ns = per(started.elapsed(), filters.len());
    let mut set = SubscriptionSet::new();
    for (i, f) in filters.iter().enumerate() {
        set.insert(i as SubscriptionId, f).map_err(|e| Failure {
            message: format!("{}: policy {}: {e}", args.policies.display(), i + 1),
            code: EXIT_NEGATIVE,
        })?;
    }

    // Messages.
    let samples: Vec<Sample> = read_lines(&args.messages)?
        .iter()
        .map(|(number, line)| {
            sample(dialect, &options, line)
                .map(|(message, json)| Sample {
                    message,
                    json,
                    line: line.as_bytes().into(),
                })
                .map_err(|e| Failure {
                    message: format!("{}:{number}: {e}", args.messages.display()),
                    code: EXIT_NEGATIVE,
                })
        })
        .collect::<Result<_, _>>()?;
    if samples.is_empty() {
        return Err(Failure::error(format!(
            "{}: no messages",
            args.messages.display()
        )));
    }

    // Binding alone (to the set's key tables), then the set. A message the set cannot judge
    // is listed with no ids and `unjudged`; one-by-one evaluation must say the same.
    let mut scratch = SetScratch::new();
    let (bind_ns, _) = timed(&samples, budget, "bind", |s| {
        set.bind_only(&mut scratch, &parts_of(&s.message))
    });
    let mut by_set: Vec<Verdicts> = Vec::with_capacity(samples.len());
    for s in &samples {
        let matches = set_matching(&set, &mut scratch, &s.message);
        by_set.push(Verdicts {
            ids: matches.ids().copied().collect(),
            unjudged: !matches.is_complete(),
        });
    }
    let (set_ns, _) = timed(&samples, budget, "set", |s| {
        set_matching(&set, &mut scratch, &s.message).len()
    });

    // From the raw line, read as `filtervm match` reads it, to the set's verdict.
    let from_bytes_ns = if args.from_bytes {
        Some(from_bytes(
            &set,
            &mut scratch,
            &options,
            &samples,
            &by_set,
            budget,
            &args.messages,
        )?)
    } else {
        None
    };

    // One by one.
    let mut evaluator = Evaluator::new();
    let mut one_by_one: Vec<Verdicts> = Vec::new();
    let (one_ns, one_count) = timed_once(&samples, budget, "one-by-one", |s| {
        let mut verdicts = Verdicts::default();
        for (i, f) in filters.iter().enumerate() {
            match one_verdict(&mut evaluator, f, &s.message) {
                Ok(true) => verdicts.ids.push(i as SubscriptionId),
                Ok(false) => {}
                Err(_) => verdicts.unjudged = true,
            }
        }
        if verdicts.unjudged {
            verdicts.ids.clear();
        }
        one_by_one.push(verdicts);
    });

    // The reference interpreter, when it is there.
    let (reference_ns, by_reference) = match &reference {
        Some(binary) => {
            let (ns, results) = run_reference(
                binary,
                dialect,
                &args.options,
                &args.policies,
                &samples,
                args.seconds,
            )?;
            (Some(ns), results)
        }
        None => (None, Vec::new()),
    };
    let reference_count = by_reference.len();
    let by_reference: Vec<Verdicts> = by_reference
        .into_iter()
        .map(|ids| Verdicts {
            ids,
            unjudged: false,
        })
        .collect();

    // Agreement, on every message each path ran.
    let mut disagreements = 0usize;
    for (i, expected) in by_set.iter().enumerate() {
        for (name, got) in [
            ("one-by-one", one_by_one.get(i)),
            ("reference", by_reference.get(i)),
        ] {
            if let Some(got) = got
                && got != expected
            {
                disagreements += 1;
                if disagreements <= 5 {
                    writeln!(
                        Stderr,
                        "filtervm bench: DISAGREEMENT on message {} ({}): set {}, {name} {}",
                        i + 1,
                        samples.get(i).map_or(String::new(), |s| s.json.to_string()),
                        expected.show(),
                        got.show(),
                    );
                }
            }
        }
    }
    if disagreements > 0 {
        return Err(Failure {
            message: format!(
                "{disagreements} disagreements between the set, one-by-one evaluation and the reference interpreter"
            ),
            code: EXIT_NEGATIVE,
        });
    }

    let matches: usize = by_set.iter().map(|v| v.ids.len()).sum();
    let lines = [
        ("policies", filters.len().to_string()),
        ("messages", samples.len().to_string()),
        ("compile_ns_per_policy", format!("{compile_ns:.0}")),
        ("bind_ns_per_message", format!("{bind_ns:.0}")),
        ("set_ns_per_message", format!("{set_ns:.0}")),
        (
            "from_bytes_ns_per_message",
            from_bytes_ns.map_or_else(|| "n/a".to_owned(), |ns| format!("{ns:.0}")),
        ),
        ("one_by_one_ns_per_message", format!("{one_ns:.0}")),
        (
            "reference_ns_per_message",
            reference_ns.map_or_else(|| "n/a".to_owned(), |ns| format!("{ns:.0}")),
        ),
        (
            "matches_per_message",
            format!("{:.3}", matches as f64 / samples.len() as f64),
        ),
        (
            "bytes_per_policy",
            format!(
                "{:.0}",
                set.heap_bytes() as f64 / filters.len().max(1) as f64
            ),
        ),
        ("distinct_filters", set.distinct_filters().to_string()),
        ("one_by_one_messages", one_count.to_string()),
        ("reference_messages", reference_count.to_string()),
    ];
    let mut out = String::new();
    for (name, value) in lines {
        out.push_str(&format!("{name}: {value}\n"));
    }
    output::print(&out)?;
    if stderr_is_terminal() {
        writeln!(
            Stderr,
            "filtervm bench: {} policies, {} messages, {matches} matches, {:.1} s",
            filters.len(),
            samples.len(),
            run_started.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::from(EXIT_OK))
}

/// A subscription's id in the set: its policy's index.
type SubscriptionId = u32;

/// What a path says of one message: the matching policies (in order), or that it could not
/// judge the message.
#[derive(Debug, Default, PartialEq, Eq)]
struct Verdicts {
    ids: Vec<SubscriptionId>,
    unjudged: bool,
}

impl Verdicts {
    /// For a disagreement report: the first ids, or that the message was not judged.
    fn show(&self) -> String {
        if self.unjudged {
            return "(could not judge the message)".to_owned();
        }
        let first: Vec<SubscriptionId> = self.ids.iter().take(20).copied().collect();
        format!("{first:?}")
    }
}

/// A message of the bench's input, owned: the parts it has.
#[derive(Debug, Default)]
struct SampleMessage {
    body: Option<Vec<u8>>,
    attributes: Option<Vec<Attribute>>,
    headers: Option<Vec<Header>>,
}

/// The message's parts, as the set and one-by-one evaluation read them.
fn parts_of(message: &SampleMessage) -> MessageParts<'_> {
    let mut parts = MessageParts::new();
    if let Some(body) = &message.body {
        parts = parts.with_body(body);
    }
    if let Some(attributes) = &message.attributes {
        parts = parts.with_attributes(attributes.as_slice());
    }
    if let Some(headers) = &message.headers {
        parts = parts.with_headers(headers.as_slice());
    }
    parts
}

/// The set's answer on one message.
fn set_matching<'s>(
    set: &'s SubscriptionSet<SubscriptionId>,
    scratch: &'s mut SetScratch,
    message: &SampleMessage,
) -> Matches<'s, SubscriptionId> {
    set.matching(scratch, &parts_of(message))
}

/// `--from-bytes`: reads every line as `filtervm match` does and checks what the set says of
/// it: a message the sample's reading judged must be judged (a line that is not a message
/// `match` reads fails here, with the reason), and a line read as a plain document must get the
/// sample's verdict; then times reading and matching, repeating the lines until `budget` is
/// spent. Returns nanoseconds per message read.
fn from_bytes(
    set: &SubscriptionSet<SubscriptionId>,
    scratch: &mut SetScratch,
    options: &Options,
    samples: &[Sample],
    by_set: &[Verdicts],
    budget: Duration,
    messages: &Path,
) -> Result<f64, Failure> {
    let failed = |i: usize, what: String| Failure {
        message: format!(
            "{}: message {} (--from-bytes reads the lines as `filtervm match` does): {what}",
            messages.display(),
            i + 1
        ),
        code: EXIT_NEGATIVE,
    };
    // Messages in one pass over the lines (a batch line holds several).
    let mut per_pass = 0usize;
    for (i, (s, expected)) in samples.iter().zip(by_set).enumerate() {
        let read = read_messages(&s.line, options).map_err(|e| failed(i, e.to_string()))?;
        for message in read {
            per_pass += 1;
            if message.shape() == MessageShape::Document
                && matches!(options, Options::Sns(o) if o.scope == SnsScope::MessageAttributes)
            {
                return Err(failed(
                    i,
                    "`filtervm match` reads a flat object as a JSON body, a message with no \
                     attributes (sns rule 12), where the bench reads its members as attributes: \
                     give --from-bytes the messages in a shape with their attributes \
                     ({\"attributes\": ...} or the AWS SNS shapes)"
                        .to_owned(),
                ));
            }
            let matches = set.matching(scratch, &message.parts());
            if !expected.unjudged
                && let Some(group) = matches.unjudged().next()
            {
                return Err(failed(i, group.error.to_string()));
            }
            let got = Verdicts {
                ids: matches.ids().copied().collect(),
                unjudged: !matches.is_complete(),
            };
            // A line read as a document is the bytes the sample holds, read alike; an envelope
            // or a batch event is another message than the sample.
            if message.shape() == MessageShape::Document && got != *expected {
                return Err(failed(
                    i,
                    format!(
                        "DISAGREEMENT: from the sample {}, from the bytes {}",
                        expected.show(),
                        got.show()
                    ),
                ));
            }
        }
    }
    // Every line was read above: reading cannot fail here.
    let (ns_per_line, _) = timed(samples, budget, "from-bytes", |s| {
        read_messages(&s.line, options).map_or(0, |read| {
            read.map(|message| set.matching(scratch, &message.parts()).len())
                .sum()
        })
    });
    Ok(ns_per_line * samples.len() as f64 / per_pass.max(1) as f64)
}

/// One filter's answer on one message, as the set judges it: an error when it cannot judge it.
fn one_verdict(
    evaluator: &mut Evaluator,
    filter: &Filter,
    message: &SampleMessage,
) -> Result<bool, MessageError> {
    evaluator.matches_parts(filter, &parts_of(message))
}

fn per(elapsed: Duration, n: usize) -> f64 {
    elapsed.as_nanos() as f64 / n.max(1) as f64
}

/// Runs `f` over the messages, repeating them until `budget` is spent (at least one pass);
/// returns the nanoseconds per message and the last result.
fn timed(
    samples: &[Sample],
    budget: Duration,
    phase: &'static str,
    mut f: impl FnMut(&Sample) -> usize,
) -> (f64, usize) {
    // The bar counts milliseconds of the budget.
    let bar = phase_bar(phase, budget.as_millis().try_into().unwrap_or(u64::MAX));
    let started = Instant::now();
    let (mut runs, mut last) = (0usize, 0usize);
    loop {
        for (i, s) in samples.iter().enumerate() {
            last = std::hint::black_box(f(s));
            runs += 1;
            if i % 64 == 0 {
                bar.set_position(started.elapsed().as_millis().try_into().unwrap_or(u64::MAX));
            }
        }
        if started.elapsed() >= budget {
            break;
        }
    }
    bar.finish_and_clear();
    (per(started.elapsed(), runs), last)
}

/// Runs `f` once per message, stopping early when `budget` is spent (after at least one
/// message); returns the nanoseconds per message and how many messages ran.
fn timed_once(
    samples: &[Sample],
    budget: Duration,
    phase: &'static str,
    mut f: impl FnMut(&Sample),
) -> (f64, usize) {
    let bar = phase_bar(phase, samples.len() as u64);
    let started = Instant::now();
    let mut runs = 0usize;
    for s in samples {
        f(s);
        runs += 1;
        bar.inc(1);
        if started.elapsed() >= budget {
            break;
        }
    }
    bar.finish_and_clear();
    (per(started.elapsed(), runs), runs)
}

/// The non-blank lines of a file, with their line numbers.
fn read_lines(path: &Path) -> Result<Vec<(usize, String)>, Failure> {
    let file = std::fs::File::open(path)
        .map_err(|e| Failure::error(format!("{}: cannot read: {e}", path.display())))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line =
            line.map_err(|e| Failure::error(format!("{}:{}: {e}", path.display(), i + 1)))?;
        if !line.trim().is_empty() {
            out.push((i + 1, line));
        }
    }
    Ok(out)
}

/// Compiles one policy line: JSON, or for `stream` the text form (as the reference reads it).
fn compile_line(dialect: Dialect, line: &str, options: &Options) -> Result<Filter, String> {
    match filtervm_vm::json::parse(line.as_bytes()) {
        Ok(_) => compile_text(dialect, line, options).map_err(|e| e.to_string()),
        Err(_) if dialect == Dialect::Stream => {
            compile_value(dialect, &filtervm_vm::json::Value::from(line), options)
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(format!("the policy is not JSON: {e}")),
    }
}

/// The reference interpreter's binary: `$FILTERVM_REFERENCE` (an error when it names no file), or
/// `filtervm-conformance` next to this executable (where `cargo build` puts both); `None`, with a
/// note on standard error, when it is not there.
pub(super) fn reference_binary() -> Result<Option<PathBuf>, Failure> {
    if let Some(path) = std::env::var_os("FILTERVM_REFERENCE") {
        let path = PathBuf::from(path);
        if path.is_file() {
            return Ok(Some(path));
        }
        return Err(Failure::usage(format!(
            "FILTERVM_REFERENCE names {}, which is not a file",
            path.display()
        )));
    }
    let path = std::env::current_exe()
        .map_err(|e| Failure::error(format!("cannot locate this executable: {e}")))?
        .with_file_name(format!(
            "filtervm-conformance{}",
            std::env::consts::EXE_SUFFIX
        ));
    if path.is_file() {
        return Ok(Some(path));
    }
    writeln!(
        Stderr,
        "filtervm bench: note: the reference interpreter is not built ({} not found; `cargo \
         build --release -p filtervm-conformance` builds it, or set FILTERVM_REFERENCE), so it \
         is left out: reference_ns_per_message is n/a and the set is checked against one-by-one \
         evaluation only",
        path.display()
    );
    Ok(None)
}

/// Runs `filtervm-conformance --reference` over the messages; returns its nanoseconds per
/// message (evaluation only) and each message's matching policy indices (sorted), for as many
/// messages as it ran.
fn run_reference(
    binary: &Path,
    dialect: Dialect,
    options: &str,
    policies: &Path,
    samples: &[Sample],
    seconds: f64,
) -> Result<(f64, Vec<Vec<SubscriptionId>>), Failure> {
    let failed = |what: String| Failure {
        message: format!("the reference interpreter ({}): {what}", binary.display()),
        code: EXIT_NEGATIVE,
    };
    let mut command = Command::new(binary);
    command
        .arg("--reference")
        .args(["--dialect", dialect.name(), "--options", options])
        .arg("--policies")
        .arg(policies)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    command.args(["--seconds", &seconds.to_string()]);
    let mut child = command.spawn().map_err(|e| failed(e.to_string()))?;
    let input: Vec<u8> = samples
        .iter()
        .flat_map(|s| {
            let mut line = s.json.to_string().into_bytes();
            line.push(b'\n');
            line
        })
        .collect();
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| failed("no stdin".into()))?;
    // A thread feeds the messages, so that neither side blocks on a full pipe; the child may stop
    // reading early (--seconds), so write errors are expected and ignored.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| failed("no stdout".into()))?;
    let mut results = Vec::new();
    let mut ns = None;
    let bar = phase_bar("reference", samples.len() as u64);
    for line in std::io::BufReader::new(stdout).lines() {
        bar.inc(1);
        let line = line.map_err(|e| failed(e.to_string()))?;
        if let Some(rest) = line.strip_prefix("# ns_per_message: ") {
            ns = rest.trim().parse::<f64>().ok();
        } else if !line.starts_with('#') {
            let mut ids = line
                .split_whitespace()
                .map(|t| {
                    t.parse::<SubscriptionId>()
                        .map_err(|e| failed(format!("{t}: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            ids.sort_unstable();
            results.push(ids);
        }
    }
    bar.finish_and_clear();
    let _ = writer.join();
    let status = child.wait().map_err(|e| failed(e.to_string()))?;
    if !status.success() {
        return Err(failed(format!("exited with {status}")));
    }
    let ns = ns.ok_or_else(|| failed("no timing in its output".into()))?;
    Ok((ns, results))
}

/// Reads one message line (see [`BenchArgs::messages`]): the raw body for an sns body filter, a
/// flat object's members as attributes for an sns filter on attributes (the bench's own input
/// format), and any other line as the library reads a JSON document ([`read_message`], the one
/// reader every entry point shares: numbers keep their text and members their order).
fn sample(
    dialect: Dialect,
    options: &Options,
    line: &str,
) -> Result<(SampleMessage, Value), String> {
    let body_scope = options.sns().scope == SnsScope::MessageBody;
    if dialect == Dialect::Sns && body_scope {
        let message = SampleMessage {
            body: Some(line.as_bytes().to_vec()),
            ..SampleMessage::default()
        };
        let json = Value::Object(Map::from_iter([("body".to_owned(), Value::from(line))]));
        return Ok((message, json));
    }
    let value = filtervm_vm::json::parse(line.as_bytes()).map_err(|e| format!("not JSON: {e}"))?;
    if dialect == Dialect::Sns {
        let Value::Object(members) = value else {
            return Err("a message must be a flat JSON object (name → value)".to_owned());
        };
        return Ok(flat_attributes(&members));
    }
    let read = read_message(line.as_bytes()).map_err(|e| e.to_string())?;
    let message = SampleMessage {
        body: read.body().map(<[u8]>::to_vec),
        attributes: read.attributes().map(<[Attribute]>::to_vec),
        headers: read.headers().map(<[Header]>::to_vec),
    };
    Ok((message, value))
}

/// A flat object as SNS attributes: strings → `String`, numbers → `Number` (their JSON text),
/// booleans → `String`, arrays → `String.Array` (their JSON text); `null` and objects are left
/// out.
fn flat_attributes(members: &Map) -> (SampleMessage, Value) {
    let mut attrs = Vec::new();
    let mut vector = Map::new();
    for (name, v) in members {
        let (data_type, text) = match v {
            Value::String(s) => (AttributeType::String, s.clone()),
            Value::Number(n) => (AttributeType::Number, n.as_str().to_owned()),
            Value::Bool(b) => (AttributeType::String, b.to_string()),
            Value::Array(_) => (AttributeType::StringArray, v.to_string()),
            Value::Null | Value::Object(_) => continue,
        };
        let type_name = match data_type {
            AttributeType::Number => "Number",
            AttributeType::StringArray => "String.Array",
            _ => "String",
        };
        vector.insert(
            name.clone(),
            Value::Object(Map::from_iter([
                ("Type".to_owned(), Value::from(type_name)),
                ("Value".to_owned(), Value::from(text.as_str())),
            ])),
        );
        attrs.push(Attribute {
            name: name.clone(),
            data_type,
            value: text,
        });
    }
    (
        SampleMessage {
            attributes: Some(attrs),
            ..SampleMessage::default()
        },
        Value::Object(Map::from_iter([(
            "attributes".to_owned(),
            Value::Object(vector),
        )])),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_objects_become_typed_attributes() {
        let members = filtervm_vm::json::parse(
            br#"{"a": "x", "n": 1.50, "b": true, "arr": ["p", 1e400], "z": null}"#,
        )
        .unwrap();
        let (message, json) = flat_attributes(members.as_object().unwrap());
        let attrs = message.attributes.as_ref().unwrap();
        assert_eq!(attrs.len(), 4);
        assert_eq!(attrs[1].data_type, AttributeType::Number);
        assert_eq!(attrs[1].value, "1.50");
        assert_eq!(attrs[3].value, r#"["p",1e400]"#);
        let at = |pointer: &str| json.pointer(pointer).and_then(Value::as_str);
        assert_eq!(at("/attributes/arr/Type"), Some("String.Array"));
        assert_eq!(at("/attributes/n/Value"), Some("1.50"));
        assert_eq!(
            json.to_string(),
            concat!(
                r#"{"attributes":{"a":{"Type":"String","Value":"x"},"n":{"Type":"Number","Value":"1.50"},"#,
                r#""b":{"Type":"String","Value":"true"},"arr":{"Type":"String.Array","Value":"[\"p\",1e400]"}}}"#
            )
        );
    }

    #[test]
    fn stream_policies_may_be_text() {
        let stream = Options::Stream;
        assert!(compile_line(Dialect::Stream, "region = eu-* and tier = gold", &stream).is_ok());
        assert!(compile_line(Dialect::Sns, "not json", &Options::from(Dialect::Sns)).is_err());
    }
}

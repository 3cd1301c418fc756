//! `filtervm-replay`: run SQL with the filtervm functions, or route a subscription set, over an
//! archive of NDJSON or Parquet files — on this machine, or on a Ballista cluster whose
//! scheduler and executors this same binary starts.

use clap::{Parser, Subcommand, ValueEnum};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_plan::{ExecutionPlan, execute_stream};
use datafusion::prelude::{SessionConfig, SessionContext};
use filtervm::ReadMode;
use filtervm_replay::adapter::Subscriptions;
use filtervm_replay::cluster::{self, ExecutorOptions};
use filtervm_replay::columns::{Text, TextColumn};
use filtervm_replay::session::{self, InputFormat, LINE_COLUMN};
use futures::StreamExt;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Replay subscriptions over event archives: filtervm inside DataFusion and Ballista.
///
/// With --sql, runs the query over the archive (table `events`); with --subscriptions and no
/// --sql, routes every message through the subscription set and prints the messages that match
/// with the ids of the subscriptions they match (or, with --by-subscription, a count per
/// subscription).
#[derive(Debug, Parser)]
#[command(name = "filtervm-replay", args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: Run,
}

#[derive(Debug, clap::Args)]
struct Run {
    /// The archive: an NDJSON or Parquet file, or a directory of them (searched recursively).
    path: Option<PathBuf>,
    /// The SQL query to run (the archive is table `events`, or --table); `-` reads it from
    /// standard input.
    #[arg(long)]
    sql: Option<String>,
    /// A subscription set (NDJSON: one {"id", "dialect", "policy", "options"} per line) for
    /// `filtervm_route`; without --sql, route the archive through it.
    #[arg(long, value_name = "SUBS.ndjson")]
    subscriptions: Option<PathBuf>,
    /// How to read the files (default: `lines` for .ndjson/.jsonl/.json, each line in a text
    /// column `message`; `parquet` for .parquet).
    #[arg(long, value_enum)]
    input: Option<InputFormat>,
    /// The table name of the archive.
    #[arg(long, default_value = "events")]
    table: String,
    /// When routing: the column holding the messages.
    #[arg(long, default_value = LINE_COLUMN)]
    column: String,
    /// When routing: print per subscription the number of messages it matches.
    #[arg(long)]
    by_subscription: bool,
    /// The output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Output,
    /// Partitions (cores) to use on this machine (default: all cores).
    #[arg(long)]
    partitions: Option<usize>,
    /// Run on the Ballista scheduler at this address (df://HOST:PORT) instead of locally.
    #[arg(long, value_name = "URL")]
    scheduler: Option<String>,
    /// Never show progress (it is shown only when standard error is a terminal).
    #[arg(long)]
    quiet: bool,
    /// Read message cells holding JSON without checking the members no filter reads (for
    /// archives validated upstream; README, "Trusted input"): a message whose only faults are
    /// there gets a verdict instead of MESSAGE_NOT_JSON. Local runs only (not with --scheduler).
    #[arg(long, conflicts_with = "scheduler")]
    trusted_input: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    /// An aligned table.
    Table,
    /// One JSON object per row.
    Ndjson,
    /// The text of a one-column result, one row a line, as it is: a query selecting `message`
    /// from lines writes an NDJSON archive (a filtered backfill).
    Lines,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a Ballista scheduler whose sessions know the filtervm functions.
    Scheduler {
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: SocketAddr,
        /// The subscription set of `filtervm_route` (the same file as the clients' and
        /// executors').
        #[arg(long, value_name = "SUBS.ndjson")]
        subscriptions: Option<PathBuf>,
    },
    /// Run a Ballista executor that evaluates the filtervm functions.
    Executor {
        /// The scheduler's HOST:PORT.
        #[arg(long, default_value = "localhost:50050")]
        scheduler: String,
        /// The host to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind_host: String,
        /// The host other processes reach this executor at (default: the bind host).
        #[arg(long)]
        external_host: Option<String>,
        /// The Arrow Flight port (shuffle data).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// The gRPC port (tasks).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Task slots (default: the number of cores).
        #[arg(long)]
        concurrent_tasks: Option<usize>,
        /// Where shuffle files go (default: a temporary directory).
        #[arg(long)]
        work_dir: Option<String>,
        /// The subscription set of `filtervm_route` (the same file as the clients' and
        /// scheduler's).
        #[arg(long, value_name = "SUBS.ndjson")]
        subscriptions: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("filtervm-replay: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of the output went away (`filtervm-replay ... | head`): stop quietly.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("filtervm-replay: {e}");
            ExitCode::from(2)
        }
    }
}

/// Whether `error` is a write to a closed pipe.
fn broken_pipe(error: &DataFusionError) -> bool {
    use datafusion::arrow::error::ArrowError;
    let io = match error {
        DataFusionError::IoError(e) => e,
        DataFusionError::ArrowError(e, _) => match e.as_ref() {
            ArrowError::IoError(_, e) => e,
            _ => return false,
        },
        _ => return false,
    };
    io.kind() == std::io::ErrorKind::BrokenPipe
}

fn load(path: Option<&PathBuf>) -> Result<Option<Arc<Subscriptions>>> {
    path.map(|p| session::load_subscriptions(p)).transpose()
}

async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Command::Scheduler {
            bind,
            subscriptions,
        }) => cluster::run_scheduler(bind, load(subscriptions.as_ref())?).await,
        Some(Command::Executor {
            scheduler,
            bind_host,
            external_host,
            port,
            grpc_port,
            concurrent_tasks,
            work_dir,
            subscriptions,
        }) => {
            let (host, scheduler_port) = scheduler.rsplit_once(':').ok_or_else(|| {
                DataFusionError::Plan(format!("--scheduler {scheduler}: expected HOST:PORT"))
            })?;
            let scheduler_port = scheduler_port.parse().map_err(|e| {
                DataFusionError::Plan(format!("--scheduler {scheduler}: bad port: {e}"))
            })?;
            let options = ExecutorOptions {
                scheduler_host: host.to_owned(),
                scheduler_port,
                bind_host,
                external_host,
                port,
                grpc_port,
                vcores: concurrent_tasks,
                work_dir,
            };
            cluster::run_executor(options, load(subscriptions.as_ref())?).await
        }
        None => replay(cli.run).await,
    }
}

/// Quotes a SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

async fn replay(run: Run) -> Result<()> {
    let Some(path) = &run.path else {
        return Err(DataFusionError::Plan(
            "give the archive to read (a file or a directory of .ndjson or .parquet files)"
                .to_owned(),
        ));
    };
    let subscriptions = load(run.subscriptions.as_ref())?;
    let (table, column) = (ident(&run.table), ident(&run.column));
    let sql = match (&run.sql, &subscriptions) {
        (Some(sql), _) if sql == "-" => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
            text
        }
        (Some(sql), _) => sql.clone(),
        (None, Some(_)) if run.by_subscription => format!(
            "SELECT id, count(*) AS messages \
             FROM (SELECT unnest(filtervm_route({column})) AS id FROM {table}) \
             GROUP BY id ORDER BY messages DESC, id"
        ),
        (None, Some(_)) => format!(
            "SELECT ids, {column} FROM (SELECT filtervm_route({column}) AS ids, {column} FROM \
             {table}) WHERE cardinality(ids) > 0"
        ),
        (None, None) => {
            return Err(DataFusionError::Plan(
                "give a query (--sql) or a subscription set to route (--subscriptions)".to_owned(),
            ));
        }
    };
    let (ctx, registered) = match &run.scheduler {
        Some(url) => cluster::connect(url, subscriptions).await?,
        None => {
            let mut config = SessionConfig::new();
            if let Some(partitions) = run.partitions {
                config = config.with_target_partitions(partitions.max(1));
            }
            let mode = if run.trusted_input {
                ReadMode::Trusted
            } else {
                ReadMode::Validating
            };
            let (state, registered) = session::session_state_in(config, subscriptions, mode)?;
            (SessionContext::new_with_state(state), registered)
        }
    };
    session::register_archive(&ctx, &run.table, path, run.input).await?;
    // Rows are evaluated here only when running locally (on a cluster, the executors do).
    let progress = (!run.quiet && std::io::stderr().is_terminal()).then(|| Progress {
        evaluated: run.scheduler.is_none().then_some(registered),
    });
    let routing = run.sql.is_none() && !run.by_subscription;
    execute(&ctx, &sql, run.format, routing, progress).await
}

/// What the progress line reports.
struct Progress {
    /// The functions' counters, when they run in this process.
    evaluated: Option<session::Registered>,
}

/// The rows the plan's leaves (the scans) have produced so far.
fn rows_read(plan: &Arc<dyn ExecutionPlan>) -> usize {
    let children = plan.children();
    if children.is_empty() {
        return plan
            .metrics()
            .and_then(|m| m.output_rows())
            .unwrap_or_default();
    }
    children.into_iter().map(rows_read).sum()
}

/// Shows on standard error, while the query runs, the rows read, the rows the filtervm
/// functions evaluated and their rate, and the time taken. The display runs on its own thread:
/// the query keeps the runtime's worker threads busy.
struct ProgressLine {
    bar: indicatif::ProgressBar,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl ProgressLine {
    fn start(plan: Arc<dyn ExecutionPlan>, progress: Progress) -> ProgressLine {
        let bar = indicatif::ProgressBar::new_spinner();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (shown, stopped) = (bar.clone(), Arc::clone(&stop));
        let started = Instant::now();
        let before = progress
            .evaluated
            .as_ref()
            .map_or(0, |r| r.rows_evaluated());
        let thread = std::thread::spawn(move || {
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                let seconds = started.elapsed().as_secs_f64();
                let mut parts = Vec::new();
                let read = rows_read(&plan);
                if read > 0 {
                    parts.push(format!("{read} rows read"));
                }
                if let Some(registered) = &progress.evaluated {
                    let evaluated = registered.rows_evaluated().saturating_sub(before);
                    parts.push(format!(
                        "{evaluated} evaluated by filtervm ({:.0}/s)",
                        evaluated as f64 / seconds.max(1e-9)
                    ));
                }
                parts.push(format!("{seconds:.1} s"));
                shown.set_message(parts.join(", "));
                shown.tick();
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        ProgressLine { bar, stop, thread }
    }

    fn finish(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // A display thread that panicked only loses the display.
        let _ = self.thread.join();
        self.bar.finish_and_clear();
    }
}

/// Writes the text of a one-column batch, one row a line (a null row is an empty line).
fn write_lines(batch: &RecordBatch, out: &mut impl Write) -> Result<()> {
    let column = match batch.columns() {
        [column] => TextColumn::new(column.as_ref()),
        _ => None,
    };
    let Some(column) = column else {
        return Err(DataFusionError::Plan(format!(
            "--format lines needs a result of one text column, not {}",
            batch.schema()
        )));
    };
    for row in 0..batch.num_rows() {
        match column.get(row) {
            Some(Text::Str(text)) => writeln!(out, "{text}")?,
            Some(Text::NotUtf8(_)) | None => writeln!(out)?,
        }
    }
    Ok(())
}

/// Writes routed rows (ids, message) as NDJSON `{"ids": [...], "message": M}`, where `M` is the
/// message itself when it is JSON text (an NDJSON line as it was) and a JSON string otherwise.
/// `false` when the batch is not of that shape.
fn write_routed(batch: &RecordBatch, out: &mut impl Write) -> Result<bool> {
    use datafusion::arrow::array::{Array, AsArray};
    let (Some(ids), Some(messages)) =
        (batch.column(0).as_list_opt::<i32>(), batch.columns().get(1))
    else {
        return Ok(false);
    };
    let Some(messages) = TextColumn::new(messages.as_ref()) else {
        return Ok(false);
    };
    for row in 0..batch.num_rows() {
        let listed: Vec<Option<String>> = if ids.is_null(row) {
            Vec::new()
        } else {
            let list = ids.value(row);
            match list.as_string_opt::<i32>() {
                Some(list) => list.iter().map(|id| id.map(str::to_owned)).collect(),
                None => return Ok(false),
            }
        };
        let message = match messages.str(row) {
            Some(text) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => {
                text.trim().to_owned()
            }
            other => serde_json::Value::from(other).to_string(),
        };
        writeln!(
            out,
            "{{\"ids\":{},\"message\":{message}}}",
            serde_json::Value::from(listed)
        )?;
    }
    Ok(true)
}

async fn execute(
    ctx: &SessionContext,
    sql: &str,
    format: Output,
    routing: bool,
    progress: Option<Progress>,
) -> Result<()> {
    let frame = ctx.sql(sql).await?;
    let plan = frame.create_physical_plan().await?;
    let shown = progress.map(|progress| ProgressLine::start(Arc::clone(&plan), progress));
    let mut stream = execute_stream(Arc::clone(&plan), ctx.task_ctx())?;
    let mut batches: Vec<RecordBatch> = Vec::new();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut result = Ok(());
    while let Some(batch) = stream.next().await {
        let batch = match batch {
            Ok(batch) => batch,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        match format {
            Output::Table => batches.push(batch),
            Output::Lines => write_lines(&batch, &mut out)?,
            Output::Ndjson if routing && write_routed(&batch, &mut out)? => {}
            Output::Ndjson => {
                let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(&mut out);
                writer.write(&batch)?;
                writer.finish()?;
            }
        }
    }
    if let Some(line) = shown {
        line.finish();
    }
    result?;
    if format == Output::Table {
        let table = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?;
        writeln!(out, "{table}")?;
    }
    out.flush()?;
    Ok(())
}

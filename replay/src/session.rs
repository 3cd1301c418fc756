//! Sessions that know the filtervm functions, and archives registered as tables.

use crate::adapter::{SubscriptionError, Subscriptions};
use crate::udf::{FilterCache, FiltervmMatch, FiltervmRoute, RouteOutput};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::prelude::{
    CsvReadOptions, JsonReadOptions, ParquetReadOptions, SessionConfig, SessionContext,
};
use filtervm::ReadMode;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The column holding each line of an archive read as [`InputFormat::Lines`].
pub const LINE_COLUMN: &str = "message";

/// How the files of an archive are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// NDJSON, one message per line: a table with one text column, `message`, holding each line
    /// as it is (what `filtervm match` reads).
    Lines,
    /// NDJSON read by DataFusion's JSON reader: one column per member (schema inferred).
    Json,
    /// Parquet.
    Parquet,
}

impl InputFormat {
    /// The format a file's extension implies: `.parquet` is Parquet, `.ndjson`, `.jsonl` and
    /// `.json` are lines.
    pub fn of_extension(extension: &str) -> Option<InputFormat> {
        match extension {
            "parquet" => Some(InputFormat::Parquet),
            "ndjson" | "jsonl" | "json" => Some(InputFormat::Lines),
            _ => None,
        }
    }
}

/// Loads a subscription set from an NDJSON file (see [`Subscriptions::from_ndjson`]).
pub fn load_subscriptions(path: &Path) -> Result<Arc<Subscriptions>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        DataFusionError::Execution(format!(
            "cannot read the subscriptions file {}: {e}",
            path.display()
        ))
    })?;
    Subscriptions::from_ndjson(&text)
        .map(Arc::new)
        .map_err(|errors| {
            let listed: Vec<String> = errors.iter().map(SubscriptionError::to_string).collect();
            DataFusionError::Execution(format!(
                "{}: {} invalid subscription(s):\n  {}",
                path.display(),
                errors.len(),
                listed.join("\n  ")
            ))
        })
}

/// Handles on the filtervm functions registered in a session: their counters.
#[derive(Debug, Clone)]
pub struct Registered {
    /// The cache and counters of `filtervm_match`.
    pub matcher: Arc<FilterCache>,
    /// The rows `filtervm_route` routed.
    pub routed: Arc<AtomicU64>,
}

impl Registered {
    /// The rows the functions evaluated in this session so far (match and route).
    pub fn rows_evaluated(&self) -> u64 {
        self.matcher.rows_evaluated() + self.routed.load(Ordering::Relaxed)
    }
}

/// Registers `filtervm_match`, `filtervm_match_error`, `filtervm_route` and `filtervm_unjudged`
/// (the last two over `subscriptions`, or a stand-in that says how to load a set when there is
/// none) in `registry` (a session state).
pub fn register_functions(
    registry: &mut dyn FunctionRegistry,
    subscriptions: Option<Arc<Subscriptions>>,
) -> Result<Registered> {
    register_functions_in(registry, subscriptions, ReadMode::Validating)
}

/// [`register_functions`], the functions reading message cells that hold a JSON document or
/// body in `mode` ([`ReadMode::Trusted`]: members no filter reads are skipped by their
/// structure alone, for archives validated upstream; README, "Trusted input").
pub fn register_functions_in(
    registry: &mut dyn FunctionRegistry,
    subscriptions: Option<Arc<Subscriptions>>,
    mode: ReadMode,
) -> Result<Registered> {
    let matcher = FiltervmMatch::new().with_read_mode(mode);
    let cache = Arc::clone(matcher.cache());
    registry.register_udf(Arc::new(matcher.udf()))?;
    registry.register_udf(Arc::new(
        FiltervmMatch::errors(Arc::clone(&cache))
            .with_read_mode(mode)
            .udf(),
    ))?;
    let route = FiltervmRoute::with(subscriptions.clone(), RouteOutput::Ids).with_read_mode(mode);
    let routed = route.rows_routed();
    registry.register_udf(Arc::new(route.udf()))?;
    registry.register_udf(Arc::new(
        FiltervmRoute::with(subscriptions, RouteOutput::Unjudged)
            .with_read_mode(mode)
            .udf(),
    ))?;
    Ok(Registered {
        matcher: cache,
        routed,
    })
}

/// A session state with DataFusion's defaults, `config`, and the filtervm functions.
pub fn session_state(
    config: SessionConfig,
    subscriptions: Option<Arc<Subscriptions>>,
) -> Result<(SessionState, Registered)> {
    session_state_in(config, subscriptions, ReadMode::Validating)
}

/// [`session_state`], the filtervm functions reading message cells in `mode` (see
/// [`register_functions_in`]).
pub fn session_state_in(
    config: SessionConfig,
    subscriptions: Option<Arc<Subscriptions>>,
    mode: ReadMode,
) -> Result<(SessionState, Registered)> {
    let mut state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    let registered = register_functions_in(&mut state, subscriptions, mode)?;
    Ok((state, registered))
}

/// The format of the files under `path` (a file or a directory, searched recursively): from
/// their extensions, which must all agree. Returns the format and the extension (with its dot).
pub fn detect_format(path: &Path) -> Result<(InputFormat, String)> {
    let mut found: Option<(InputFormat, String)> = None;
    let mut pending = vec![path.to_path_buf()];
    while let Some(next) = pending.pop() {
        let metadata = std::fs::metadata(&next)
            .map_err(|e| DataFusionError::Plan(format!("{}: {e}", next.display())))?;
        if metadata.is_dir() {
            let entries = std::fs::read_dir(&next)
                .map_err(|e| DataFusionError::Plan(format!("{}: {e}", next.display())))?;
            for entry in entries {
                let entry =
                    entry.map_err(|e| DataFusionError::Plan(format!("{}: {e}", next.display())))?;
                pending.push(entry.path());
            }
            continue;
        }
        let Some(extension) = next.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        let Some(format) = InputFormat::of_extension(extension) else {
            continue;
        };
        let extension = format!(".{extension}");
        match &found {
            None => found = Some((format, extension)),
            Some((_, seen)) if *seen == extension => {}
            Some((_, seen)) => {
                return Err(DataFusionError::Plan(format!(
                    "{} holds both {seen} and {extension} files: give one kind (or a directory \
                     per kind)",
                    path.display()
                )));
            }
        }
    }
    found.ok_or_else(|| {
        DataFusionError::Plan(format!(
            "{}: no .ndjson, .jsonl, .json or .parquet files",
            path.display()
        ))
    })
}

/// Registers the archive at `path` (a file or a directory) as table `table`, read as `format`
/// (by default, as the files' extension says). Returns the format used.
pub async fn register_archive(
    ctx: &SessionContext,
    table: &str,
    path: &Path,
    format: Option<InputFormat>,
) -> Result<InputFormat> {
    let (detected, extension) = detect_format(path)?;
    let format = format.unwrap_or(detected);
    let location = path.to_str().ok_or_else(|| {
        DataFusionError::Plan(format!("{}: the path is not UTF-8", path.display()))
    })?;
    match format {
        InputFormat::Lines => {
            let schema = lines_schema();
            ctx.register_csv(table, location, lines_options(&schema, &extension))
                .await?
        }
        InputFormat::Json => {
            ctx.register_json(
                table,
                location,
                JsonReadOptions::default().file_extension(&extension),
            )
            .await?
        }
        InputFormat::Parquet => {
            ctx.register_parquet(
                table,
                location,
                ParquetReadOptions::default().file_extension(&extension),
            )
            .await?
        }
    }
    Ok(format)
}

/// The schema of an archive read as lines: one nullable text column.
pub fn lines_schema() -> Schema {
    Schema::new(vec![Field::new(LINE_COLUMN, DataType::Utf8, true)])
}

/// NDJSON read as one text column per line, through DataFusion's CSV reader: the delimiter is
/// the ASCII record separator (0x1E) and the quote the unit separator (0x1F). JSON text cannot
/// hold either byte raw (control characters must be escaped inside strings and are not
/// whitespace outside them), so every valid JSON line is one field, kept byte for byte. The
/// reader is DataFusion's own, so it splits large files across partitions and Ballista
/// serializes it like any other scan.
pub fn lines_options<'a>(schema: &'a Schema, extension: &'a str) -> CsvReadOptions<'a> {
    CsvReadOptions::new()
        .has_header(false)
        .delimiter(0x1e)
        .quote(0x1f)
        .newlines_in_values(false)
        .schema(schema)
        .file_extension(extension)
}

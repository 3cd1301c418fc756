//! The DataFusion scalar functions `filtervm_match`, `filtervm_match_error`, `filtervm_route` and
//! `filtervm_unjudged`.
//!
//! - `filtervm_match(dialect, policy, options, message) -> boolean`: whether `message` matches
//!   the policy. `dialect`, `policy` and `options` are text (usually literals; `options` may be
//!   `''` or `'{}'` for the defaults). A filter is compiled once per distinct (dialect, policy,
//!   options) and kept in a cache shared by every partition and query of the function; when the
//!   three are literals, the policy is compiled while the query is planned, so an invalid policy
//!   is a planning error carrying filtervm's code and JSON Pointer.
//! - `filtervm_match_error(dialect, policy, options, message) -> utf8`: why `filtervm_match` is
//!   null for this row — `CODE: message` with filtervm's stable code (`MESSAGE_SHAPE`,
//!   `INVALID_MESSAGE`, ...) — or null when the filter judged the message.
//! - `filtervm_route(message) -> list<utf8>`: the ids of the subscriptions of a set (loaded once,
//!   shared by all partitions) whose filters match `message`, in subscriptions-file order. A
//!   group of subscriptions that cannot judge the message does not keep the others from routing
//!   it: null only when no group could judge it.
//! - `filtervm_unjudged(message) -> list<utf8>`: the groups of the set that could not judge
//!   `message`, each a JSON object `{"group", "subscriptions", "code", "message"}` (`route`'s
//!   `"errors"`); empty when every group judged it.
//!
//! `message` is JSON text (a `Utf8`, `LargeUtf8`, `Utf8View`, `Binary`, `LargeBinary` or
//! `BinaryView` column, read as `filtervm match` reads a line) or attributes/headers (a `Map` or a
//! `Struct` column; see [`crate::columns`]). The functions are strict: a null argument gives a
//! null result. A message the filter cannot judge gives a null `filtervm_match` (neither true nor
//! false) and says why in `filtervm_match_error`.

use crate::adapter::{
    CompiledFilter, FilterError, Matcher, MessageError, MessagePart, Router, Subscriptions,
    Unjudged,
};
use crate::columns::{MessageColumn, MessageKind, TextColumn};
use datafusion::arrow::array::{Array, ArrayRef, BooleanBuilder, ListBuilder, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use filtervm::ReadMode;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The name of the match function in SQL.
pub const MATCH_NAME: &str = "filtervm_match";

/// The name of the function that says why `filtervm_match` is null.
pub const MATCH_ERROR_NAME: &str = "filtervm_match_error";

/// The name of the route function in SQL.
pub const ROUTE_NAME: &str = "filtervm_route";

/// The name of the function listing the groups that could not judge a message.
pub const UNJUDGED_NAME: &str = "filtervm_unjudged";

/// What a match function returns for each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchOutput {
    /// `filtervm_match`: the verdict (null when the message cannot be judged).
    Verdict,
    /// `filtervm_match_error`: `CODE: message` when the message cannot be judged, else null.
    Error,
}

/// What the route function returns for each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteOutput {
    /// `filtervm_route`: the ids.
    Ids,
    /// `filtervm_unjudged`: the groups that could not judge the message.
    Unjudged,
}

/// How many distinct filters a [`FilterCache`] keeps; past it the cache starts over (a query
/// with a policy per row over millions of distinct policies must not keep them all).
pub const MAX_CACHED_FILTERS: usize = 4096;

/// A compiled filter, or why the policy does not compile.
type Compiled = Arc<std::result::Result<CompiledFilter, Vec<FilterError>>>;

/// The cache key: dialect, policy and options text.
type FilterKey = (String, String, String);

/// Filters compiled by one `filtervm_match` function, by (dialect, policy, options) text, and
/// counters of the work done.
#[derive(Debug, Default)]
pub struct FilterCache {
    filters: Mutex<HashMap<FilterKey, Compiled>>,
    compiled: AtomicU64,
    rows: AtomicU64,
}

impl FilterCache {
    fn lock(&self) -> MutexGuard<'_, HashMap<FilterKey, Compiled>> {
        // A panic while holding the lock cannot leave the map half-updated (inserts are single
        // calls), so a poisoned lock is still a valid cache.
        self.filters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The filter for (dialect, policy, options), compiled on first use.
    fn get(&self, dialect: &str, policy: &str, options: &str) -> Compiled {
        let key = (dialect.to_owned(), policy.to_owned(), options.to_owned());
        if let Some(found) = self.lock().get(&key) {
            return Arc::clone(found);
        }
        // Compile outside the lock: other partitions keep matching meanwhile. Two partitions
        // compiling the same policy at once both succeed; one result is kept.
        let compiled = Arc::new(CompiledFilter::compile(dialect, policy, options));
        self.compiled.fetch_add(1, Ordering::Relaxed);
        let mut filters = self.lock();
        if filters.len() >= MAX_CACHED_FILTERS {
            filters.clear();
        }
        Arc::clone(filters.entry(key).or_insert(compiled))
    }

    /// How many policies were compiled (a policy compiled once is counted once, however many
    /// rows and batches it was matched against).
    pub fn policies_compiled(&self) -> u64 {
        self.compiled.load(Ordering::Relaxed)
    }

    /// How many rows this function evaluated.
    pub fn rows_evaluated(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }
}

/// The error of a policy that does not compile, as DataFusion reports it.
fn policy_error(errors: &[FilterError]) -> String {
    let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
    format!(
        "{MATCH_NAME}: the policy does not compile: {}",
        listed.join("; ")
    )
}

/// Why a filter of `part` cannot read a message column of `kind`, if it cannot.
fn shape_error(function: &str, part: MessagePart, kind: MessageKind) -> Option<String> {
    (part == MessagePart::Body && kind == MessageKind::Fields).then(|| {
        format!(
            "{function}: the filter reads a JSON {part} (sns body scope, eventgrid, \
             eventbridge), but the message column is a map or struct of attributes/headers: pass \
             the JSON text column instead"
        )
    })
}

/// Coerces text arguments to `Utf8` and dictionary-encoded messages to their values.
fn coerce_text(function: &str, position: usize, data_type: &DataType) -> Result<DataType> {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
            Ok(DataType::Utf8)
        }
        DataType::Dictionary(_, value) => coerce_text(function, position, value),
        other => plan_err!("{function}: argument {position} must be text, not {other}"),
    }
}

fn coerce_message(function: &str, data_type: &DataType) -> Result<DataType> {
    match data_type {
        DataType::Null => Ok(DataType::Utf8),
        DataType::Dictionary(_, value) => coerce_message(function, value),
        other => match MessageColumn::kind_of(other) {
            Ok(_) => Ok(other.clone()),
            Err(e) => plan_err!("{function}: {e}"),
        },
    }
}

/// The text of a scalar argument: `Ok(None)` for null.
fn scalar_text<'a>(function: &str, value: &'a ScalarValue) -> Result<Option<&'a str>> {
    match value.try_as_str() {
        Some(text) => Ok(text),
        None if value.is_null() => Ok(None),
        None => exec_err!(
            "{function}: expected a text argument, got {}",
            value.data_type()
        ),
    }
}

/// `filtervm_match(dialect, policy, options, message) -> boolean`, and
/// `filtervm_match_error(...) -> utf8` (the same filters, the other output).
#[derive(Debug)]
pub struct FiltervmMatch {
    signature: Signature,
    cache: Arc<FilterCache>,
    output: MatchOutput,
    /// How message cells holding JSON are read.
    read_mode: ReadMode,
}

impl FiltervmMatch {
    /// A new `filtervm_match` with its own, empty filter cache.
    pub fn new() -> FiltervmMatch {
        FiltervmMatch {
            signature: Signature::user_defined(Volatility::Immutable),
            cache: Arc::new(FilterCache::default()),
            output: MatchOutput::Verdict,
            read_mode: ReadMode::Validating,
        }
    }

    /// `filtervm_match_error` over the filter cache of `filtervm_match` (`cache`).
    pub fn errors(cache: Arc<FilterCache>) -> FiltervmMatch {
        FiltervmMatch {
            signature: Signature::user_defined(Volatility::Immutable),
            cache,
            output: MatchOutput::Error,
            read_mode: ReadMode::Validating,
        }
    }

    /// The same function, reading message cells that hold a JSON document or body in `mode`
    /// (default [`ReadMode::Validating`]; [`ReadMode::Trusted`] skips checking the members no
    /// filter reads, for archives validated upstream: README, "Trusted input").
    pub fn with_read_mode(self, mode: ReadMode) -> FiltervmMatch {
        FiltervmMatch {
            read_mode: mode,
            ..self
        }
    }

    /// The function's name in SQL.
    fn function(&self) -> &'static str {
        match self.output {
            MatchOutput::Verdict => MATCH_NAME,
            MatchOutput::Error => MATCH_ERROR_NAME,
        }
    }

    /// The function's result type.
    fn result_type(&self) -> DataType {
        match self.output {
            MatchOutput::Verdict => DataType::Boolean,
            MatchOutput::Error => DataType::Utf8,
        }
    }

    /// The function's filter cache and counters.
    pub fn cache(&self) -> &Arc<FilterCache> {
        &self.cache
    }

    /// The function as DataFusion registers it.
    pub fn udf(self) -> ScalarUDF {
        ScalarUDF::new_from_impl(self)
    }

    /// Matches every row of `messages` against `filter_of(row)`.
    fn evaluate<'f>(
        &self,
        messages: &dyn Array,
        mut filter_of: impl FnMut(usize) -> Result<Option<&'f CompiledFilter>>,
    ) -> Result<ArrayRef> {
        let mut column = MessageColumn::new(messages)
            .map_err(|e| DataFusionError::Execution(format!("{}: {e}", self.function())))?;
        let mut matcher = Matcher::with_read_mode(self.read_mode);
        let mut verdicts = BooleanBuilder::with_capacity(messages.len());
        let mut errors = StringBuilder::new();
        for row in 0..messages.len() {
            let filter = filter_of(row)?;
            let judged: Option<std::result::Result<bool, MessageError>> =
                match (filter, column.get(row)) {
                    (Some(filter), Some(message)) => Some(matcher.matches(filter, message)),
                    _ => None,
                };
            match self.output {
                MatchOutput::Verdict => verdicts.append_option(judged.and_then(|j| j.ok())),
                MatchOutput::Error => errors.append_option(
                    judged
                        .and_then(|j| j.err())
                        .map(|e| format!("{}: {}", e.code, e.message)),
                ),
            }
        }
        self.cache
            .rows
            .fetch_add(messages.len() as u64, Ordering::Relaxed);
        Ok(match self.output {
            MatchOutput::Verdict => Arc::new(verdicts.finish()),
            MatchOutput::Error => Arc::new(errors.finish()),
        })
    }
}

impl Default for FiltervmMatch {
    fn default() -> FiltervmMatch {
        FiltervmMatch::new()
    }
}

// Every instance of one output and read mode computes the same function; the cache only saves
// work.
impl PartialEq for FiltervmMatch {
    fn eq(&self, other: &FiltervmMatch) -> bool {
        self.output == other.output && self.read_mode == other.read_mode
    }
}

impl Eq for FiltervmMatch {}

impl Hash for FiltervmMatch {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.function().hash(state);
        self.read_mode.hash(state);
    }
}

impl ScalarUDFImpl for FiltervmMatch {
    fn name(&self) -> &str {
        self.function()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [dialect, policy, options, message] = arg_types else {
            return plan_err!(
                "{MATCH_NAME} takes 4 arguments (dialect, policy, options, message), got {}",
                arg_types.len()
            );
        };
        Ok(vec![
            coerce_text(MATCH_NAME, 1, dialect)?,
            coerce_text(MATCH_NAME, 2, policy)?,
            coerce_text(MATCH_NAME, 3, options)?,
            coerce_message(MATCH_NAME, message)?,
        ])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(self.result_type())
    }

    /// Compiles a literal policy while the query is planned: an invalid one fails the query
    /// before any data is read.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        if let ([Some(d), Some(p), Some(o), ..], [.., message]) =
            (args.scalar_arguments, args.arg_fields)
            && let (Some(d), Some(p), Some(o)) = (
                scalar_text(MATCH_NAME, d)?,
                scalar_text(MATCH_NAME, p)?,
                scalar_text(MATCH_NAME, o)?,
            )
        {
            match self.cache.get(d, p, o).as_ref() {
                Err(errors) => return plan_err!("{}", policy_error(errors)),
                Ok(filter) => {
                    let kind = MessageColumn::kind_of(message.data_type())
                        .map_err(|e| DataFusionError::Plan(format!("{MATCH_NAME}: {e}")))?;
                    if let Some(e) = shape_error(MATCH_NAME, filter.part(), kind) {
                        return plan_err!("{e}");
                    }
                }
            }
        }
        Ok(Arc::new(Field::new(
            self.function(),
            self.result_type(),
            true,
        )))
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let [dialect, policy, options, message] = args.args.as_slice() else {
            return exec_err!("{MATCH_NAME} takes 4 arguments, got {}", args.args.len());
        };
        if let (ColumnarValue::Scalar(d), ColumnarValue::Scalar(p), ColumnarValue::Scalar(o)) =
            (dialect, policy, options)
        {
            // The common case: one filter for every row, looked up once per batch.
            let (Some(d), Some(p), Some(o)) = (
                scalar_text(MATCH_NAME, d)?,
                scalar_text(MATCH_NAME, p)?,
                scalar_text(MATCH_NAME, o)?,
            ) else {
                return Ok(ColumnarValue::Scalar(ScalarValue::try_from(
                    &self.result_type(),
                )?));
            };
            let compiled = self.cache.get(d, p, o);
            let filter = match compiled.as_ref() {
                Ok(filter) => filter,
                Err(errors) => return exec_err!("{}", policy_error(errors)),
            };
            return match message {
                ColumnarValue::Array(messages) => Ok(ColumnarValue::Array(
                    self.evaluate(messages.as_ref(), |_| Ok(Some(filter)))?,
                )),
                ColumnarValue::Scalar(message) => {
                    let one = self.evaluate(message.to_array()?.as_ref(), |_| Ok(Some(filter)))?;
                    Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&one, 0)?))
                }
            };
        }
        // A policy (or dialect, or options) per row: filters come from the cache, looked up
        // again only when the row's text differs from the previous row's.
        let dialects = dialect.to_array(rows)?;
        let policies = policy.to_array(rows)?;
        let options = options.to_array(rows)?;
        let messages = message.to_array(rows)?;
        fn text(array: &ArrayRef) -> Result<TextColumn<'_>> {
            TextColumn::new(array.as_ref()).ok_or_else(|| {
                DataFusionError::Execution(format!(
                    "{MATCH_NAME}: expected text, got {}",
                    array.data_type()
                ))
            })
        }
        let (dialects, policies, options) = (text(&dialects)?, text(&policies)?, text(&options)?);
        let mut held: Vec<Compiled> = Vec::new();
        let mut last: Option<(&str, &str, &str, usize)> = None;
        let mut per_row: Vec<Option<usize>> = Vec::with_capacity(rows);
        for row in 0..rows {
            let (Some(d), Some(p), Some(o)) =
                (dialects.str(row), policies.str(row), options.str(row))
            else {
                per_row.push(None);
                continue;
            };
            let index = match last {
                Some((ld, lp, lo, index)) if (ld, lp, lo) == (d, p, o) => index,
                _ => {
                    let compiled = self.cache.get(d, p, o);
                    if let Err(errors) = compiled.as_ref() {
                        return exec_err!("{} (row {row})", policy_error(errors));
                    }
                    held.push(compiled);
                    held.len() - 1
                }
            };
            last = Some((d, p, o, index));
            per_row.push(Some(index));
        }
        let result = self.evaluate(messages.as_ref(), |row| {
            Ok(per_row
                .get(row)
                .copied()
                .flatten()
                .and_then(|index| held.get(index))
                .and_then(|compiled| compiled.as_ref().as_ref().ok()))
        })?;
        Ok(ColumnarValue::Array(result))
    }
}

/// A group that could not judge a message, as `filtervm_unjudged` lists it (and `filtervm
/// route` prints it): `{"group", "subscriptions", "code", "message"}`.
fn unjudged_json(group: &Unjudged) -> String {
    serde_json::json!({
        "group": group.group,
        "subscriptions": group.subscriptions,
        "code": group.error.code,
        "message": group.error.to_string(),
    })
    .to_string()
}

/// `filtervm_route(message) -> list<utf8>` over one subscription set, and
/// `filtervm_unjudged(message) -> list<utf8>` (the same set, the other output).
#[derive(Debug)]
pub struct FiltervmRoute {
    signature: Signature,
    subscriptions: Option<Arc<Subscriptions>>,
    rows: Arc<AtomicU64>,
    output: RouteOutput,
    /// How message cells holding JSON are read.
    read_mode: ReadMode,
}

impl FiltervmRoute {
    /// `filtervm_route` over `subscriptions`, shared (not copied) by every partition.
    pub fn new(subscriptions: Arc<Subscriptions>) -> FiltervmRoute {
        FiltervmRoute::with(Some(subscriptions), RouteOutput::Ids)
    }

    /// `filtervm_route` without a subscription set: using it is a planning error that says how
    /// to load one.
    pub fn unloaded() -> FiltervmRoute {
        FiltervmRoute::with(None, RouteOutput::Ids)
    }

    /// The function of `output` over `subscriptions` (`None`: not loaded).
    pub fn with(subscriptions: Option<Arc<Subscriptions>>, output: RouteOutput) -> FiltervmRoute {
        FiltervmRoute {
            signature: Signature::user_defined(Volatility::Immutable),
            subscriptions,
            rows: Arc::new(AtomicU64::new(0)),
            output,
            read_mode: ReadMode::Validating,
        }
    }

    /// The same function, reading message cells in `mode` (see
    /// [`FiltervmMatch::with_read_mode`]).
    pub fn with_read_mode(self, mode: ReadMode) -> FiltervmRoute {
        FiltervmRoute {
            read_mode: mode,
            ..self
        }
    }

    /// The function's name in SQL.
    fn function(&self) -> &'static str {
        match self.output {
            RouteOutput::Ids => ROUTE_NAME,
            RouteOutput::Unjudged => UNJUDGED_NAME,
        }
    }

    /// The count of rows this function routed (shared with every clone of the counter).
    pub fn rows_routed(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.rows)
    }

    /// The function as DataFusion registers it.
    pub fn udf(self) -> ScalarUDF {
        ScalarUDF::new_from_impl(self)
    }

    fn subscriptions(&self) -> Result<&Arc<Subscriptions>> {
        self.subscriptions.as_ref().ok_or_else(|| {
            DataFusionError::Plan(format!(
                "{}: no subscription set is loaded (give the subscriptions NDJSON file with \
                 --subscriptions, to the client and to every scheduler and executor)",
                self.function()
            ))
        })
    }

    /// The list type of the result.
    fn list_type() -> DataType {
        DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)))
    }
}

impl PartialEq for FiltervmRoute {
    fn eq(&self, other: &FiltervmRoute) -> bool {
        self.output == other.output
            && self.read_mode == other.read_mode
            && self.subscriptions.as_ref().map(|s| s.fingerprint())
                == other.subscriptions.as_ref().map(|s| s.fingerprint())
    }
}

impl Eq for FiltervmRoute {}

impl Hash for FiltervmRoute {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.function().hash(state);
        self.read_mode.hash(state);
        self.subscriptions
            .as_ref()
            .map(|s| s.fingerprint())
            .hash(state);
    }
}

impl ScalarUDFImpl for FiltervmRoute {
    fn name(&self) -> &str {
        self.function()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [message] = arg_types else {
            return plan_err!(
                "{} takes 1 argument (message), got {}",
                self.function(),
                arg_types.len()
            );
        };
        Ok(vec![coerce_message(self.function(), message)?])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(FiltervmRoute::list_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let subscriptions = self.subscriptions()?;
        if let [message] = args.arg_fields {
            let kind = MessageColumn::kind_of(message.data_type())
                .map_err(|e| DataFusionError::Plan(format!("{}: {e}", self.function())))?;
            for part in subscriptions.parts() {
                if let Some(e) = shape_error(self.function(), part, kind) {
                    return plan_err!("{e}");
                }
            }
        }
        Ok(Arc::new(Field::new(
            self.function(),
            FiltervmRoute::list_type(),
            true,
        )))
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let subscriptions = self.subscriptions()?;
        let [message] = args.args.as_slice() else {
            return exec_err!(
                "{} takes 1 argument, got {}",
                self.function(),
                args.args.len()
            );
        };
        let (messages, scalar) = match message {
            ColumnarValue::Array(array) => (Arc::clone(array), false),
            ColumnarValue::Scalar(value) => (value.to_array()?, true),
        };
        let mut column = MessageColumn::new(messages.as_ref())
            .map_err(|e| DataFusionError::Execution(format!("{}: {e}", self.function())))?;
        let mut router = Router::with_read_mode(self.read_mode);
        let mut matched: Vec<u32> = Vec::new();
        let mut unjudged: Vec<Unjudged> = Vec::new();
        let mut out = ListBuilder::with_capacity(StringBuilder::new(), messages.len())
            .with_field(Arc::new(Field::new_list_field(DataType::Utf8, true)));
        for row in 0..messages.len() {
            matched.clear();
            unjudged.clear();
            let routed = match column.get(row) {
                Some(message) => router
                    .route(subscriptions, message, &mut matched, &mut unjudged)
                    .is_ok(),
                None => false,
            };
            // Null when nothing is known of the message: a null cell, a cell too large to
            // read, or (for the ids) no group of the set could judge it.
            let every_group_unjudged = !unjudged.is_empty()
                && unjudged.iter().map(|u| u.subscriptions).sum::<usize>() == subscriptions.len();
            match self.output {
                RouteOutput::Ids if routed && !every_group_unjudged => {
                    for &position in &matched {
                        out.values().append_option(subscriptions.id(position));
                    }
                    out.append(true);
                }
                RouteOutput::Unjudged if routed => {
                    for group in &unjudged {
                        out.values().append_value(unjudged_json(group));
                    }
                    out.append(true);
                }
                _ => out.append_null(),
            }
        }
        self.rows
            .fetch_add(messages.len() as u64, Ordering::Relaxed);
        let result: ArrayRef = Arc::new(out.finish());
        if scalar {
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                &result, 0,
            )?));
        }
        Ok(ColumnarValue::Array(result))
    }
}

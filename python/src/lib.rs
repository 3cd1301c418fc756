//! The `filtervm._filtervm` extension module: `compile`, `lint`, `read_events`, `example`,
//! `diff`, `Filter` and `SubscriptionSet`. The exceptions and record types are plain Python (`filtervm/_types.py`),
//! built from here. Every call into the filtervm library goes through `filtervm_bindings`, the
//! adapter the C ABI uses too.

mod convert;
mod fast;
mod plain;

use convert::{AttributeNames, MessageArgs, json_text};
use filtervm_bindings::filtervm::{AttributeType, Attributes, ReadMode};
use filtervm_bindings::{self as engine, Failure, FailureKind, Input, Parts, Unjudged};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// Messages given as text at least this long are matched with the GIL released (shorter ones
/// cost less than releasing it).
const RELEASE_GIL_BYTES: usize = 4096;

/// Sets of at least this many subscriptions match every message with the GIL released: their
/// matching may take long enough for other threads to run meanwhile. A smaller set matches a
/// message given as short text or parts in less time than releasing and taking back the GIL
/// costs (about 600 instructions; BENCHMARKS.md, "Python and C bindings").
const RELEASE_GIL_SUBSCRIPTIONS: usize = 1024;

static ERROR_DETAIL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LINT_WARNING: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static POLICY_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MESSAGE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LOAD_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNJUDGED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MATCHES: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static JSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static DEEPCOPY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

const TYPES: &str = "filtervm._types";

/// The Python exception for an adapter failure: `PolicyError`, `MessageError` or `LoadError`
/// with every detail in `.errors`; a bad argument is a `ValueError`.
pub(crate) fn failure(failure: Failure) -> PyErr {
    Python::attach(|py| match to_exception(py, &failure) {
        Ok(e) | Err(e) => e,
    })
}

fn to_exception(py: Python<'_>, failure: &Failure) -> PyResult<PyErr> {
    let class = match failure.kind {
        FailureKind::Policy => POLICY_ERROR.import(py, TYPES, "PolicyError")?,
        FailureKind::Message => MESSAGE_ERROR.import(py, TYPES, "MessageError")?,
        FailureKind::Load => LOAD_ERROR.import(py, TYPES, "LoadError")?,
        FailureKind::Argument | FailureKind::Set => {
            return Ok(PyValueError::new_err(failure.to_string()));
        }
    };
    let detail = ERROR_DETAIL.import(py, TYPES, "ErrorDetail")?;
    let details = failure
        .details
        .iter()
        .map(|d| detail.call1((d.code, d.pointer.as_str(), d.message.as_str())))
        .collect::<PyResult<Vec<_>>>()?;
    let instance = class.call1((failure.to_string(), PyList::new(py, details)?))?;
    Ok(PyErr::from_value(instance))
}

/// A `MessageError` raised by the bindings themselves (`INVALID_MESSAGE`).
pub(crate) fn message_error(message: String) -> PyErr {
    failure(Failure::from(engine::filtervm::MessageError::new(
        "", message,
    )))
}

/// The `read_mode=` keyword of `Filter.matches` and `SubscriptionSet.matching`: "validating"
/// (every byte of a JSON document or body checked, the default) or "trusted" (members no filter
/// reads skipped by their structure alone, for input validated upstream: the library's
/// `ReadMode::Trusted`, the C API's `FVM_READ_TRUSTED`). Anything else is a ValueError naming
/// the accepted values.
fn read_mode(mode: &str) -> PyResult<ReadMode> {
    match mode {
        "validating" => Ok(ReadMode::Validating),
        "trusted" => Ok(ReadMode::Trusted),
        other => Err(PyValueError::new_err(format!(
            "read_mode must be \"validating\" or \"trusted\", not {other:?}"
        ))),
    }
}

fn options_text(options: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    options.filter(|o| !o.is_none()).map(json_text).transpose()
}

/// Compiles a filter policy.
///
/// `dialect` is "sns", "basaltic", "eventgrid", "stream", "expr" or "eventbridge". `policy` is a dict (or
/// list) or JSON text (str or bytes; numbers then keep their exact text); for "stream" also the
/// text form ("region = eu-* and priority >= 5"). `options` are the dialect's options as a dict
/// or JSON text ({"scope": "MessageBody"} for sns bodies, {"schema": "CloudEventSchemaV1_0"},
/// {"max_depth": 40}); None for the defaults.
///
/// Raises PolicyError (with every error in .errors) when the policy or options are invalid,
/// ValueError for an unknown dialect.
#[pyfunction]
#[pyo3(signature = (dialect, policy, options = None))]
fn compile(
    py: Python<'_>,
    dialect: &str,
    policy: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyAny>>,
) -> PyResult<Filter> {
    let policy = json_text(policy)?;
    let options = options_text(options)?;
    let filter = py
        .detach(|| engine::Filter::compile(dialect, &policy, options.as_deref()))
        .map_err(failure)?;
    Ok(Filter {
        inner: Arc::new(filter),
        names: AttributeNames::default(),
    })
}

/// The events of one JSON document as Event Grid delivers them: for an array of events (a
/// batch, a CloudEvents batch) each event's bytes, for any other document the document itself.
/// A filter judges one event (a batch given whole raises MessageError): match each one with
/// `body=`. Raises MessageError (MESSAGE_NOT_JSON) for text that is not JSON.
#[pyfunction]
fn read_events<'py>(py: Python<'py>, document: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let bytes = json_text(document)?;
    let spans = engine::read_events(&bytes).map_err(failure)?;
    let events = spans
        .into_iter()
        .map(|span| PyBytes::new(py, bytes.get(span).unwrap_or_default()))
        .collect::<Vec<_>>();
    PyList::new(py, events)
}

/// Compiles a policy and returns its lint warnings: conditions that never or always hold,
/// duplicates, contradictions, dialect pitfalls; each a LintWarning(code, pointer, message,
/// fix). Raises PolicyError when the policy does not compile.
#[pyfunction]
#[pyo3(signature = (dialect, policy, options = None))]
fn lint<'py>(
    py: Python<'py>,
    dialect: &str,
    policy: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    compile(py, dialect, policy, options)?.lint(py)
}

/// A message `filter` matches (matching=True) or does not (matching=False), as a dict:
/// {"found": True, "matches", "message"} (the message in the dialect's shape, as
/// `Filter.matches(message)` reads it, judged by the VM) or {"found": False, "matches", "exact",
/// "reason"} (exact: no such message exists, proved; otherwise reason says why the search was
/// bounded). The shape of `filtervm example --json`. Raises LoadError (ANALYSIS_NO_IR) for a
/// filter loaded from bytes of the first wire format (no IR).
#[pyfunction]
#[pyo3(signature = (filter, *, matching = true))]
fn example<'py>(py: Python<'py>, filter: &Filter, matching: bool) -> PyResult<Bound<'py, PyAny>> {
    let inner = Arc::clone(&filter.inner);
    let text = py
        .detach(|| engine::example(&inner, matching))
        .map_err(failure)?;
    json_loads(py, &text)
}

/// Whether two filters reading the same part of a message match exactly the same messages, as
/// a dict: {"verdict": "same" | "different" | "unknown", "exact", "reason", "first_only",
/// "second_only" (a message only that filter matches, or None), "keys": [{"key", "first_only",
/// "second_only"}]}. The shape of `filtervm diff --json`. Raises ValueError
/// (ANALYSIS_MODEL_MISMATCH) for filters of two message models, LoadError (ANALYSIS_NO_IR) for
/// a filter loaded from bytes of the first wire format (no IR).
///
/// assume: assumptions about the documents compared, a name or a list of names (or one
/// comma-separated string): "canonical-documents" (no member named twice, numbers in their
/// shortest round-trip form, member names spelled as the filters spell them), "no-arrays" (no
/// array at or on the way to a member the filters read). The search builds no other document,
/// and the dict names them ("assuming": [NAME, ...]). Raises ValueError (ANALYSIS_ASSUMPTION)
/// for an unknown name.
#[pyfunction]
#[pyo3(signature = (first, second, *, assume = None))]
fn diff<'py>(
    py: Python<'py>,
    first: &Filter,
    second: &Filter,
    assume: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let assume = match assume {
        None => String::new(),
        Some(a) => match a.extract::<String>() {
            Ok(one) => one,
            Err(_) => a.extract::<Vec<String>>()?.join(","),
        },
    };
    let (a, b) = (Arc::clone(&first.inner), Arc::clone(&second.inner));
    let text = py
        .detach(|| engine::diff_assuming(&a, &b, &assume))
        .map_err(failure)?;
    json_loads(py, &text)
}

fn warnings<'py>(
    py: Python<'py>,
    warnings: Vec<engine::filtervm::Warning>,
) -> PyResult<Bound<'py, PyList>> {
    let class = LINT_WARNING.import(py, TYPES, "LintWarning")?;
    let items = warnings
        .into_iter()
        .map(|w| class.call1((w.code, w.pointer, w.message, w.fix)))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    JSON_LOADS
        .get_or_try_init(py, || {
            py.import("json")?.getattr("loads").map(Bound::unbind)
        })?
        .bind(py)
        .call1((text,))
}

/// A compiled filter. Immutable and thread-safe: share it between threads freely.
///
/// A message is given as one of:
///
/// - message: a dict, or JSON text (str/bytes), in the dialect's shape --
///   {"attributes": {NAME: {"Type": T, "Value": V}}, "body": "..."} for sns,
///   {"attributes": {NAME: {"type": T, "value": V}}} for basaltic, the event itself for
///   eventgrid and eventbridge, {"headers": {NAME: VALUE}} for stream and expr;
/// - attributes=: a mapping of name to value (str -> String, int/float/Decimal -> Number,
///   list -> String.Array, bytes -> Binary, or {"DataType": T, "StringValue": V});
/// - headers=: a mapping of name to str (or list of str), or (name, value) pairs;
/// - body=: the raw body (str/bytes): an sns body ({"scope": "MessageBody"}), an Event Grid or
///   an EventBridge event.
///
/// The filter reads the part its dialect needs; a missing part raises MessageError.
#[pyclass(frozen, module = "filtervm")]
struct Filter {
    inner: Arc<engine::Filter>,
    /// The names of the attributes the filter reads, looked up in a message's `dict`.
    names: AttributeNames,
}

#[pymethods]
impl Filter {
    /// The dialect ("sns", "basaltic", "eventgrid", "stream", "expr" or "eventbridge").
    #[getter]
    fn dialect(&self) -> &'static str {
        self.inner.dialect()
    }

    /// The options the filter was compiled with, every option written out.
    #[getter]
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_loads(py, &self.inner.options_json())
    }

    /// The policy text the filter was compiled from (None when loaded from bytes).
    #[getter]
    fn policy(&self) -> Option<&str> {
        self.inner.source()
    }

    /// Whether the message matches (see the class documentation for the message forms).
    /// Raises MessageError when the message cannot be read or judged for this filter.
    /// read_mode="trusted" reads a JSON document or body given as text without checking the
    /// members no filter reads (for input validated upstream; on valid JSON the verdict is the
    /// same); "validating", the default, checks every byte. Another value raises ValueError.
    #[pyo3(signature = (message = None, *, attributes = None, headers = None, body = None, read_mode = "validating"))]
    fn matches(
        &self,
        py: Python<'_>,
        message: Option<&Bound<'_, PyAny>>,
        attributes: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
        body: Option<&Bound<'_, PyAny>>,
        read_mode: &str,
    ) -> PyResult<bool> {
        let mode = self::read_mode(read_mode)?;
        if let (None, Some(attributes), None, None) = (message, attributes, headers, body)
            && let Some(matched) = self.matches_one_looked_up(py, attributes, mode)?
        {
            return Ok(matched);
        }
        self.matches_read(py, message, attributes, headers, body, mode)
    }

    /// Why the message does or does not match, as a dict: "matched", "verdict", "decided_by",
    /// "hints" (the classic mistakes, each with code, pointer, message), "conditions" (every
    /// condition of the policy with whether it held, the value it saw and its JSON Pointer) and
    /// "instructions". Raises LoadError for a filter loaded from bytes of the first wire format
    /// (it has no IR).
    #[pyo3(signature = (message = None, *, attributes = None, headers = None, body = None))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        message: Option<&Bound<'py, PyAny>>,
        attributes: Option<&Bound<'py, PyAny>>,
        headers: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = MessageArgs::new(message, attributes, headers, body, None)?;
        let text = args
            .with_input(|input| self.inner.explain_json(input))?
            .map_err(failure)?;
        json_loads(py, &text)
    }

    /// The optimized IR as text (None for a filter loaded from bytes). With lowered=True, the
    /// IR as lowered from the policy, before optimization.
    #[pyo3(signature = (*, lowered = false))]
    fn ir(&self, lowered: bool) -> Option<String> {
        if lowered {
            self.inner.lowered_ir()
        } else {
            self.inner.ir()
        }
    }

    /// The bytecode program's disassembly.
    fn disassemble(&self) -> String {
        self.inner.disassemble()
    }

    /// The lint warnings of the filter's policy (LintWarning(code, pointer, message, fix)).
    /// Raises LoadError for a filter loaded from bytes.
    fn lint<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        warnings(py, self.inner.lint().map_err(failure)?)
    }

    /// The filter as bytes (program, dialect and options; the IR does not travel).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    /// Loads a filter from to_bytes() output. Any bytes may be given: the program is verified,
    /// and bad bytes raise LoadError. A loaded filter matches like the original and can join a
    /// SubscriptionSet, but has no IR (no explain, lint or ir()).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Filter> {
        let filter = py
            .detach(|| engine::Filter::from_bytes(data))
            .map_err(failure)?;
        Ok(Filter {
            inner: Arc::new(filter),
            names: AttributeNames::default(),
        })
    }

    /// Pickling: a compiled filter is compiled again from its policy and options; a filter
    /// loaded from bytes is loaded again from its bytes.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let module = py.import("filtervm._filtervm")?;
        match self.inner.source() {
            Some(policy) => Ok((
                module.getattr("compile")?,
                PyTuple::new(
                    py,
                    [
                        self.inner.dialect().into_pyobject(py)?.into_any(),
                        policy.into_pyobject(py)?.into_any(),
                        self.inner.options_json().into_pyobject(py)?.into_any(),
                    ],
                )?,
            )),
            None => Ok((
                module.getattr("Filter")?.getattr("from_bytes")?,
                PyTuple::new(py, [PyBytes::new(py, &self.inner.to_bytes()).into_any()])?,
            )),
        }
    }

    /// A filter is immutable: its copy is itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// A filter is immutable: its deep copy is itself.
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __repr__(&self) -> String {
        match self.inner.source() {
            Some(source) => {
                let shown: String = source.chars().take(60).collect();
                let more = if shown.len() < source.len() {
                    "…"
                } else {
                    ""
                };
                format!(
                    "<filtervm.Filter {} {}{more}>",
                    self.inner.dialect(),
                    shown.replace('\n', " ")
                )
            }
            None => format!("<filtervm.Filter {} (loaded)>", self.inner.dialect()),
        }
    }
}

/// Many subscriptions matched together: each an id (any hashable Python object) and a Filter
/// of any dialect and options. Thread-safe: matching runs from any number of threads at once,
/// with the GIL released for sets of 1,024 subscriptions or more and for messages given as text
/// of 4 KiB or more; add and remove wait for the matching calls in progress.
///
/// `len(s)`, `id in s`, `iter(s)` (the ids, in the order they were first added) and
/// `s.get(id)` (its Filter, or None) work as on a dict; a set pickles and copies.
///
/// >>> s = SubscriptionSet()
/// >>> s.add(("tenant", 7), filtervm.compile("sns", {"event": ["paid"]}))
/// >>> s.matching(attributes={"event": "paid"})
/// [('tenant', 7)]
#[pyclass(frozen, module = "filtervm")]
pub(crate) struct SubscriptionSet {
    set: RwLock<engine::Set>,
    /// Python id → its key in `set` (an int).
    keys: Py<PyDict>,
    /// Key → Python id.
    ids: Py<PyDict>,
    /// Python id → its Filter, in the order the ids were first added.
    filters: Py<PyDict>,
    next_key: AtomicU64,
    /// The names of the attributes the set's filters read, for the set's generation
    /// (`engine::Set::generation`) they were made for.
    names: Mutex<(u64, Arc<AttributeNames>)>,
}

#[pymethods]
impl SubscriptionSet {
    /// An empty set.
    #[new]
    fn new(py: Python<'_>) -> SubscriptionSet {
        SubscriptionSet {
            set: RwLock::new(engine::Set::new()),
            keys: PyDict::new(py).unbind(),
            ids: PyDict::new(py).unbind(),
            filters: PyDict::new(py).unbind(),
            next_key: AtomicU64::new(0),
            names: Mutex::new((u64::MAX, Arc::default())),
        }
    }

    /// Adds subscription `id` with `filter`, replacing its filter if `id` is already there.
    fn add(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        filter: &Bound<'_, Filter>,
    ) -> PyResult<()> {
        let keys = self.keys.bind(py);
        let fresh = self.next_key.fetch_add(1, Ordering::Relaxed);
        let (inserted, key) = keys.set_default_with_result(id, fresh)?;
        let key: u64 = key.extract()?;
        if inserted {
            self.ids.bind(py).set_item(key, id)?;
        }
        let compiled = Arc::clone(&filter.get().inner);
        let added = py.detach(|| {
            self.set
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .add(key, &compiled)
        });
        if let Err(e) = added {
            if inserted {
                self.forget(py, id, key)?;
            }
            return Err(failure(e));
        }
        // A `remove` of the same id on another thread may have run between the two steps
        // above: then the id is no longer mapped, and the subscription just added must go too.
        if keys.get_item(id)?.is_none() {
            py.detach(|| {
                self.set
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(key)
            });
        } else {
            self.filters.bind(py).set_item(id, filter)?;
        }
        Ok(())
    }

    /// Removes subscription `id`; False when it was not in the set.
    fn remove(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(key) = self.keys.bind(py).get_item(id)? else {
            return Ok(false);
        };
        let key: u64 = key.extract()?;
        self.forget(py, id, key)?;
        Ok(py.detach(|| {
            self.set
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(key)
        }))
    }

    /// The ids whose filter matches the message, in the order they were first added (the
    /// message forms are those of Filter.matches), as a list with one more attribute:
    /// `.unjudged`, the groups of subscriptions (one dialect and options each) that could not
    /// judge the message — each an Unjudged(dialect, options, subscriptions, code, pointer,
    /// message) — whose subscriptions are in no result. One group that cannot read a message
    /// (a stream filter and a message without headers) never keeps the others from judging it.
    /// With strict=True, a message some group could not judge raises MessageError instead,
    /// listing each such group. read_mode is that of Filter.matches ("validating", the default,
    /// or "trusted").
    #[pyo3(signature = (message = None, *, attributes = None, headers = None, body = None, strict = false, read_mode = "validating"))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the Python keyword arguments of SubscriptionSet.matching"
    )]
    fn matching<'py>(
        &self,
        py: Python<'py>,
        message: Option<&Bound<'py, PyAny>>,
        attributes: Option<&Bound<'py, PyAny>>,
        headers: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
        strict: bool,
        read_mode: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mode = self::read_mode(read_mode)?;
        if let (None, Some(attributes), None, None, false) =
            (message, attributes, headers, body, strict)
            && let Some(matched) = self.matching_looked_up(py, attributes, mode)?
        {
            return Ok(matched);
        }
        // Attributes given as a dict are looked up by the names the set's filters read, made
        // for the set as it is now; a set changed before the match reads them whole instead.
        let (generation, names) = self.attribute_names(py);
        let matched = |names: Option<&[Py<PyString>]>| -> PyResult<Option<_>> {
            let args = MessageArgs::new(message, attributes, headers, body, names)?;
            let release = args.text_len()? >= RELEASE_GIL_BYTES;
            let generation = names.map(|_| generation);
            args.with_input(|input| self.match_input(py, input, mode, generation, release))
        };
        let (found, unjudged) = match matched(names.get(py, || None))? {
            Some(matched) => matched,
            None => matched(None)?.unwrap_or_default(),
        };
        if strict && !unjudged.is_empty() {
            return Err(unjudged_error(py, &unjudged));
        }
        self.matches_of(py, &found, &unjudged)
    }

    /// The filter of subscription `id`, or `default` when it is not in the set.
    #[pyo3(signature = (id, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.filters.bind(py).get_item(id)?.or(default))
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.filters.bind(py).len()
    }

    fn __contains__(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.filters.bind(py).contains(id)
    }

    /// The ids, in the order they were first added.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.filters.bind(py).keys().try_iter().map(Bound::into_any)
    }

    /// Pickling: the (id, filter) pairs, added again in order.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>, Bound<'py, PyList>)> {
        let py = slf.py();
        Ok((
            slf.get_type(),
            PyTuple::empty(py),
            slf.get().filters.bind(py).items(),
        ))
    }

    /// Adds the (id, filter) pairs of `state` (a pickled set's).
    fn __setstate__(&self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        for pair in state.try_iter()? {
            let (id, filter): (Bound<'_, PyAny>, Bound<'_, Filter>) = pair?.extract()?;
            self.add(py, &id, &filter)?;
        }
        Ok(())
    }

    /// A new set of the same subscriptions (filters are immutable and shared).
    fn __copy__(slf: &Bound<'_, Self>) -> PyResult<SubscriptionSet> {
        let py = slf.py();
        let copy = SubscriptionSet::new(py);
        copy.__setstate__(py, slf.get().filters.bind(py).items().as_any())?;
        Ok(copy)
    }

    /// A new set of the same subscriptions, each id deep-copied (filters are immutable and
    /// shared).
    fn __deepcopy__(slf: &Bound<'_, Self>, memo: &Bound<'_, PyAny>) -> PyResult<SubscriptionSet> {
        let py = slf.py();
        let deepcopy = DEEPCOPY.get_or_try_init(py, || {
            py.import("copy")?.getattr("deepcopy").map(Bound::unbind)
        })?;
        let copy = SubscriptionSet::new(py);
        for (id, filter) in slf.get().filters.bind(py).iter() {
            let id = deepcopy.bind(py).call1((id, memo))?;
            copy.add(py, &id, filter.cast::<Filter>()?)?;
        }
        Ok(copy)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<filtervm.SubscriptionSet of {}>", self.__len__(py))
    }
}

impl SubscriptionSet {
    /// The set's generation and the names of the attributes its filters read then.
    fn attribute_names(&self, py: Python<'_>) -> (u64, Arc<AttributeNames>) {
        let set = self.set.read().unwrap_or_else(PoisonError::into_inner);
        let mut cached = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        if cached.0 != set.generation() {
            let names = AttributeNames::default();
            names.get(py, || set.attribute_names());
            *cached = (set.generation(), Arc::new(names));
        }
        (cached.0, Arc::clone(&cached.1))
    }

    /// `matching(attributes=value)` (not strict) of a set whose filters read the values of a
    /// few named attributes (at most `plain::MAX_NAMES`), when `value` is a `dict` of plain names
    /// and values: the attributes looked up and matched without gathering the call's arguments
    /// (the same message, so the same answer, as `MessageArgs` gives). `Ok(None)` for anything
    /// else, which the caller reads the general way. Shared by the `#[pymethods]` entry and the
    /// direct one (`fast`).
    #[inline]
    pub(crate) fn matching_looked_up<'py>(
        &self,
        py: Python<'py>,
        attributes: &Bound<'py, PyAny>,
        mode: ReadMode,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (generation, names) = self.attribute_names(py);
        let Some(names) = names.get(py, || None) else {
            return Ok(None);
        };
        /// The set's match of the attributes looked up (`match_input`).
        struct Matched<'a, 'py> {
            set: &'a SubscriptionSet,
            py: Python<'py>,
            mode: ReadMode,
            generation: u64,
        }
        impl convert::OnAttributes for Matched<'_, '_> {
            type Output = Option<(Vec<u64>, Vec<Unjudged>)>;
            #[inline]
            fn call<A: Attributes + Sync + ?Sized>(self, attributes: &A) -> Self::Output {
                let attributes = OfSet(attributes);
                let input = Input::Parts(Parts::<_, convert::HeaderList> {
                    attributes: Some(&attributes),
                    ..Parts::default()
                });
                self.set
                    .match_input(self.py, &input, self.mode, Some(self.generation), false)
            }
        }
        let matched = convert::with_looked_up(
            attributes,
            names,
            Matched {
                set: self,
                py,
                mode,
                generation,
            },
        )?;
        match matched {
            Some(Some((found, unjudged))) => self.matches_of(py, &found, &unjudged).map(Some),
            // Not a plain dict, or the set changed since the names were made.
            _ => Ok(None),
        }
    }

    /// The keys of the subscriptions that match `input`, and the groups that could not judge
    /// it; `None` when `generation` is given and the set is no longer that generation (the
    /// attributes were looked up by the names of an earlier state). The GIL is released while
    /// the set matches when the work is long enough to pay for releasing it (`release`: long
    /// text; or a set of at least `RELEASE_GIL_SUBSCRIPTIONS`), and whenever another thread is
    /// changing the set, so that waiting for it never holds the GIL.
    fn match_input<A, H>(
        &self,
        py: Python<'_>,
        input: &Input<'_, A, H>,
        mode: ReadMode,
        generation: Option<u64>,
        release: bool,
    ) -> Option<(Vec<u64>, Vec<Unjudged>)>
    where
        A: Attributes + ?Sized + Sync,
        H: filtervm_bindings::filtervm::Headers + ?Sized + Sync,
    {
        let run = |set: &engine::Set| {
            if generation.is_some_and(|g| g != set.generation()) {
                return None;
            }
            let (mut found, mut unjudged) = (Vec::new(), Vec::new());
            set.matching_in(input, mode, &mut found, &mut unjudged);
            Some((found, unjudged))
        };
        if !release
            && let Ok(set) = self.set.try_read()
            && set.len() < RELEASE_GIL_SUBSCRIPTIONS
        {
            return run(&set);
        }
        py.detach(|| run(&self.set.read().unwrap_or_else(PoisonError::into_inner)))
    }

    /// The result of `matching`: a `Matches` of the ids of `found` (an id removed by another
    /// thread since the match is left out) with `_unjudged` set when some group could not judge
    /// the message.
    fn matches_of<'py>(
        &self,
        py: Python<'py>,
        found: &[u64],
        unjudged: &[Unjudged],
    ) -> PyResult<Bound<'py, PyAny>> {
        let result = new_matches(py)?;
        let out = result.cast::<PyList>()?;
        let ids = self.ids.bind(py);
        for &key in found {
            if let Some(id) = ids.get_item(key)? {
                out.append(id)?;
            }
        }
        if !unjudged.is_empty() {
            let record = UNJUDGED.import(py, TYPES, "Unjudged")?;
            let groups = unjudged
                .iter()
                .map(|g| {
                    record.call1((
                        g.dialect,
                        json_loads(py, &g.options)?,
                        g.subscriptions,
                        g.code,
                        g.pointer.as_str(),
                        g.message.as_str(),
                    ))
                })
                .collect::<PyResult<Vec<_>>>()?;
            result.setattr(pyo3::intern!(py, "_unjudged"), PyList::new(py, groups)?)?;
        }
        Ok(result)
    }

    fn forget(&self, py: Python<'_>, id: &Bound<'_, PyAny>, key: u64) -> PyResult<()> {
        let keys = self.keys.bind(py);
        if keys.contains(id)? {
            keys.del_item(id)?;
        }
        let ids = self.ids.bind(py);
        if ids.contains(key)? {
            ids.del_item(key)?;
        }
        let filters = self.filters.bind(py);
        if filters.contains(id)? {
            filters.del_item(id)?;
        }
        Ok(())
    }
}

impl Filter {
    /// `matches(attributes=value)` of a filter that reads one named attribute, when `value` is a
    /// `dict` of plain names and values: the attribute looked up and matched without gathering
    /// the call's arguments (the same message, so the same answer, as `MessageArgs` gives).
    /// `Ok(None)` for anything else, which the caller reads the general way. Shared by the
    /// `#[pymethods]` entry and the direct one (`fast`).
    #[inline]
    fn matches_one_looked_up(
        &self,
        py: Python<'_>,
        attributes: &Bound<'_, PyAny>,
        mode: ReadMode,
    ) -> PyResult<Option<bool>> {
        let filter = &self.inner;
        let Some([name]) = self.names.get(py, || filter.attribute_names()) else {
            return Ok(None);
        };
        let verdict = convert::with_one_looked_up(attributes, name.bind(py), |attributes| {
            filter.matches_in(
                &Input::Parts(Parts::<_, convert::HeaderList> {
                    attributes: Some(attributes),
                    ..Parts::default()
                }),
                mode,
            )
        })?;
        verdict.map(|verdict| verdict.map_err(failure)).transpose()
    }

    /// `matches` of any message: its parts gathered and read (`MessageArgs`), then matched (with
    /// the GIL released for long text).
    fn matches_read(
        &self,
        py: Python<'_>,
        message: Option<&Bound<'_, PyAny>>,
        attributes: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
        body: Option<&Bound<'_, PyAny>>,
        mode: ReadMode,
    ) -> PyResult<bool> {
        let filter = &self.inner;
        let names = self.names.get(py, || filter.attribute_names());
        let args = MessageArgs::new(message, attributes, headers, body, names)?;
        let release = args.text_len()? >= RELEASE_GIL_BYTES;
        let verdict = args.with_input(|input| {
            if release {
                py.detach(|| filter.matches_in(input, mode))
            } else {
                filter.matches_in(input, mode)
            }
        })?;
        verdict.map_err(failure)
    }
}

/// Attributes matched by a set: the same attributes as `A`, of another type, so that the
/// library's code generic over the attributes is made once for `Filter.matches` and once for
/// `SubscriptionSet.matching`. Made once for both, the compiler stopped inlining it into
/// `Filter.matches` (about 85 instructions a call more, measured by callgrind).
struct OfSet<'a, A: ?Sized>(&'a A);

impl<A: Attributes + ?Sized> Attributes for OfSet<'_, A> {
    type Name = A::Name;
    type Value = A::Value;
    const LOOKUP_NAMES: usize = A::LOOKUP_NAMES;

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (&A::Name, AttributeType, &A::Value)> {
        self.0.entries()
    }

    #[inline]
    fn named(&self, name: &[u8]) -> Option<(AttributeType, &A::Value)> {
        self.0.named(name)
    }
}

/// A new, empty `Matches` (`fast::new_empty_list`: without a call through its type).
fn new_matches(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    fast::new_empty_list(MATCHES.import(py, TYPES, "Matches")?)
}

/// The `MessageError` of `strict=True`: one detail per group that could not judge the message.
fn unjudged_error(py: Python<'_>, groups: &[Unjudged]) -> PyErr {
    match to_exception(py, &Unjudged::strict_failure(groups)) {
        Ok(e) | Err(e) => e,
    }
}

/// The extension module.
#[pymodule]
#[pyo3(name = "_filtervm")]
fn filtervm_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(example, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(read_events, m)?)?;
    m.add_class::<Filter>()?;
    fast::install(&m.py().get_type::<Filter>())?;
    fast::install_matching(&m.py().get_type::<SubscriptionSet>())?;
    m.add_class::<SubscriptionSet>()?;
    m.add("DIALECTS", engine::dialects())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

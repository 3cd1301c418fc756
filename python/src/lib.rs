//! The `filtervm._filtervm` extension module: `compile`, `lint`, `Filter` and
//! `SubscriptionSet`. The exceptions and record types are plain Python (`filtervm/_types.py`),
//! built from here. Every call into the filtervm library goes through
//! `filtervm_capi::engine`, the adapter the C ABI uses too.

mod convert;

use convert::{MessageArgs, json_text};
use filtervm_capi::engine::{self, Failure, FailureKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyType};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

/// Messages given as text at least this long are matched by a single filter with the GIL
/// released (shorter ones cost less than releasing it). Sets always release it.
const RELEASE_GIL_BYTES: usize = 4096;

static ERROR_DETAIL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LINT_WARNING: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static POLICY_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MESSAGE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LOAD_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static JSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

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
pub(crate) fn message_error(message: String) -> PyResult<PyErr> {
    Ok(failure(Failure::message("", message)))
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
        .detach(|| engine::compile(dialect, &policy, options.as_deref()))
        .map_err(failure)?;
    Ok(Filter {
        inner: Arc::new(filter),
    })
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

fn warnings<'py>(py: Python<'py>, warnings: Vec<engine::Warning>) -> PyResult<Bound<'py, PyList>> {
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
    /// Raises MessageError when the message cannot be read for this filter.
    #[pyo3(signature = (message = None, *, attributes = None, headers = None, body = None))]
    fn matches(
        &self,
        py: Python<'_>,
        message: Option<&Bound<'_, PyAny>>,
        attributes: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
        body: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let filter = &self.inner;
        let reads = |name: &str| filter.reads_attribute(name);
        let mut args = MessageArgs::new(message, attributes, headers, body, Some(&reads))?;
        let release = args.text_len()? >= RELEASE_GIL_BYTES;
        let message = args.take()?;
        let verdict = if release {
            py.detach(|| filter.matches(message))
        } else {
            filter.matches(message)
        };
        verdict.map_err(failure)
    }

    /// Why the message does or does not match, as a dict: "matched", "verdict", "decided_by",
    /// "hints" (the classic mistakes, each with code, pointer, message), "conditions" (every
    /// condition of the policy with whether it held, the value it saw and its JSON Pointer) and
    /// "instructions". Raises LoadError for a filter loaded from bytes (it has no IR).
    #[pyo3(signature = (message = None, *, attributes = None, headers = None, body = None))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        message: Option<&Bound<'py, PyAny>>,
        attributes: Option<&Bound<'py, PyAny>>,
        headers: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut args = MessageArgs::new(message, attributes, headers, body, None)?;
        let text = self.inner.explain_json(args.take()?).map_err(failure)?;
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
        })
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
/// of any dialect and options. Thread-safe: matching runs with the GIL released, from any
/// number of threads at once; add and remove wait for the matching calls in progress.
///
/// >>> s = SubscriptionSet()
/// >>> s.add(("tenant", 7), filtervm.compile("sns", {"event": ["paid"]}))
/// >>> s.matching(attributes={"event": "paid"})
/// [('tenant', 7)]
#[pyclass(frozen, module = "filtervm")]
struct SubscriptionSet {
    set: RwLock<engine::Set>,
    /// Python id → its key in `set` (an int).
    keys: Py<PyDict>,
    /// Key → Python id.
    ids: Py<PyDict>,
    next_key: AtomicU64,
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
            next_key: AtomicU64::new(0),
        }
    }

    /// Adds subscription `id` with `filter`, replacing its filter if `id` is already there.
    /// The set keeps its own copy of the filter.
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
        let filter = Arc::clone(&filter.get().inner);
        let added = py.detach(|| {
            self.set
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .add(key, &filter)
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
    /// message forms are those of Filter.matches). Each group of filters reads its part of the
    /// message; a part that some filter needs and the message lacks raises MessageError.
    #[pyo3(signature = (message = None, *, attributes = None, headers = None, body = None))]
    fn matching<'py>(
        &self,
        py: Python<'py>,
        message: Option<&Bound<'py, PyAny>>,
        attributes: Option<&Bound<'py, PyAny>>,
        headers: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut args = MessageArgs::new(message, attributes, headers, body, None)?;
        let message = args.take()?;
        let found = py
            .detach(|| {
                let mut found = Vec::new();
                self.set
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .matching(message, &mut found)
                    .map(|()| found)
            })
            .map_err(failure)?;
        let ids = self.ids.bind(py);
        let out = PyList::empty(py);
        for key in found {
            // An id removed by another thread since the match is left out.
            if let Some(id) = ids.get_item(key)? {
                out.append(id)?;
            }
        }
        Ok(out)
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.keys.bind(py).len()
    }

    fn __contains__(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.keys.bind(py).contains(id)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<filtervm.SubscriptionSet of {}>", self.__len__(py))
    }
}

impl SubscriptionSet {
    fn forget(&self, py: Python<'_>, id: &Bound<'_, PyAny>, key: u64) -> PyResult<()> {
        let keys = self.keys.bind(py);
        if keys.contains(id)? {
            keys.del_item(id)?;
        }
        let ids = self.ids.bind(py);
        if ids.contains(key)? {
            ids.del_item(key)?;
        }
        Ok(())
    }
}

/// The extension module.
#[pymodule]
#[pyo3(name = "_filtervm")]
fn filtervm_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_class::<Filter>()?;
    m.add_class::<SubscriptionSet>()?;
    m.add("DIALECTS", engine::dialects())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! Every path a message takes to a verdict, compared with each other and with the reference
//! interpreter (the differential test in `cargo test` and the `differential` fuzz target).
//!
//! A message given in the vector shape reaches the VM by:
//!
//! - **message**: the dialect's message reader, given the message's text ([`read_message`]),
//!   and the owned [`Message`] (for an SNS body and an Event Grid event, their raw bytes);
//! - **bytes** (SNS body scope, Event Grid, EventBridge): the raw JSON bytes, read by the
//!   table's selector into a pruned document ([`Evaluator::matches_bytes`]);
//! - **trusted bytes** (same dialects, when the bytes are JSON): the same bytes read in
//!   [`ReadMode::Trusted`], members no key reads skipped by their structure: the same answer as
//!   the **bytes** path, error or verdict;
//! - **tree** (same dialects): the same bytes read whole into an owned tree ([`json::parse_with`])
//!   and bound without pruning ([`Bindings::bind_tree`]);
//! - **borrowed** (attributes and headers): slices of borrowed tuples built from the message
//!   ([`Evaluator::matches_attributes`], [`Evaluator::matches_headers`]).
//!
//! All of them must give the reference's verdict (unless binding overflowed, where the VM fails
//! closed by design). When the reference stops at one of its documented limits
//! ([`ReferenceError::Limit`]) the paths must still agree with each other, and the caller is told
//! ([`Checked::reference_limited`]) so that it can count such cases; any other reference error is
//! a failure.

use crate::reference::json::Value;
use crate::reference::{self, ReferenceError};
use crate::runner::{compile, read_message};
use filtervm_compiler::{Dialect, ErrorCode, Evaluator, Filter, ReadMode};
use filtervm_vm::bind::{Bindings, Judgement};
use filtervm_vm::json::{self, LoneSurrogates, ParseOptions};
use filtervm_vm::message::{AttributeType, Message};

/// The verdicts of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdicts {
    /// Each VM path's name and verdict.
    pub paths: Vec<(&'static str, bool)>,
    /// Whether binding overflowed (then the VM fails closed and may differ from the reference).
    pub overflowed: bool,
    /// The reference's verdict, or why it gave none.
    pub reference: Result<bool, ReferenceError>,
}

/// What [`check`] found when everything agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// The verdict every path (and the reference, when it answered) gave.
    pub verdict: bool,
    /// Whether the reference stopped at one of its documented limits (so only the VM's paths were
    /// compared with each other).
    pub reference_limited: bool,
}

impl Verdicts {
    /// `Ok(verdict)` when every path agrees with the reference (or, when the reference stopped at
    /// one of its documented limits or binding overflowed, with each other); otherwise what
    /// disagrees, or why the reference failed.
    pub fn agreed(&self) -> Result<bool, String> {
        let Some(&(_, first)) = self.paths.first() else {
            return Err("no path ran".to_owned());
        };
        if let Some((name, v)) = self.paths.iter().find(|(_, v)| *v != first) {
            return Err(format!(
                "the VM's paths disagree: {:?} says {first}, {name} says {v}",
                self.paths.first().map(|(n, _)| n)
            ));
        }
        match &self.reference {
            Ok(r) if *r != first && !self.overflowed => Err(format!(
                "VM says {first} ({} paths), reference says {r}",
                self.paths.len()
            )),
            Ok(_) | Err(ReferenceError::Limit(_)) => Ok(first),
            Err(e) => Err(format!(
                "the VM says {first}, the reference gives no verdict: {e}"
            )),
        }
    }
}

/// The raw JSON bytes of a vector-shaped message, for the dialects that read a JSON body: an SNS
/// body's text, or the whole Event Grid or EventBridge event.
pub fn body_bytes(dialect: Dialect, message: &Value) -> Option<Vec<u8>> {
    match dialect {
        Dialect::Sns => match message.get("body")? {
            Value::String(text) => Some(text.clone().into_bytes()),
            Value::Null => None,
            other => Some(other.to_string().into_bytes()),
        },
        Dialect::EventGrid | Dialect::EventBridge => Some(message.to_string().into_bytes()),
        _ => None,
    }
}

/// Runs `message` (vector shape) through every path to `filter`'s verdict, and the reference
/// on `policy`.
pub fn verdicts(
    dialect: Dialect,
    options: &Value,
    policy: &Value,
    filter: &Filter,
    message: &Value,
) -> Result<Verdicts, String> {
    let owned = read_message(dialect, options, message).map_err(|e| e.to_string())?;
    let mut evaluator = Evaluator::new();
    let mut paths = vec![("message", evaluator.matches(filter, &owned))];
    // An EventBridge event always gets a verdict (the events the binder's rows cannot judge
    // are judged on the filter's kept pattern, EB-8): no tolerance for it.
    let overflowed = dialect != Dialect::EventBridge
        && evaluator
            .try_matches(filter, &owned)
            .is_err_and(|e| e.code == ErrorCode::MessageTooComplex);
    if filter.reads_json_body()
        && let Some(bytes) = body_bytes(dialect, message)
    {
        let validating = evaluator.matches_bytes(filter, &bytes);
        if let Ok(v) = validating {
            paths.push(("bytes", v));
        }
        // The same bytes read in trusted mode: on JSON, the same answer (error or verdict).
        if json::validate(&bytes, LoneSurrogates::Replace).is_ok() {
            let mut trusted = Evaluator::new();
            trusted.set_read_mode(ReadMode::Trusted);
            let trusted = trusted.matches_bytes(filter, &bytes);
            if trusted != validating {
                return Err(format!(
                    "the bytes give {validating:?} when validated and {trusted:?} when trusted"
                ));
            }
            if let Ok(v) = trusted {
                paths.push(("trusted bytes", v));
            }
        }
        let mut whole = ParseOptions::default();
        whole.lone_surrogates = LoneSurrogates::Replace;
        whole.max_depth = json::MAX_DEPTH_CEILING;
        if dialect == Dialect::EventBridge {
            // Every occurrence of a repeated member name counts (EB-3).
            whole.duplicates = json::Duplicates::KeepAll;
        }
        if let Ok(tree) = json::parse_with(&bytes, &whole) {
            let program = filter.program();
            let mut bindings = Bindings::new();
            let bound = bindings.bind_tree(program.keys(), &tree);
            let verdict = match filter.pattern() {
                // The rows cannot judge this event's `exists: false`: the exact search on the
                // same tree (EB-8).
                Some(pattern) if bound.judgement() == &Judgement::Unsupported => {
                    pattern.matches(&tree).map_err(|e| e.to_string())?
                }
                _ => program.eval(&bound, &mut Vec::new()),
            };
            paths.push(("tree", verdict));
        }
    }
    match &owned {
        Message::Attributes(attributes) => {
            let borrowed: Vec<(&str, AttributeType, &str)> = attributes
                .iter()
                .map(|a| (a.name.as_str(), a.data_type, a.value.as_str()))
                .collect();
            paths.push(("borrowed", evaluator.matches_attributes(filter, &borrowed)));
        }
        Message::Headers(headers) => {
            let borrowed: Vec<(&[u8], Vec<&str>)> = headers
                .iter()
                .map(|h| {
                    (
                        h.name.as_bytes(),
                        h.values.iter().map(String::as_str).collect(),
                    )
                })
                .collect();
            paths.push(("borrowed", evaluator.matches_headers(filter, &borrowed)));
        }
        _ => {}
    }
    let reference = reference::evaluate(dialect, options, policy, message);
    Ok(Verdicts {
        paths,
        overflowed,
        reference,
    })
}

/// Compiles `policy` and runs `message` through every path ([`verdicts`]): the agreed verdict,
/// or what went wrong (a policy the compiler rejects, a message the reader rejects, a
/// disagreement, a reference error other than its documented limits).
pub fn check(
    dialect: Dialect,
    options: &Value,
    policy: &Value,
    message: &Value,
) -> Result<Checked, String> {
    let filter = compile(dialect, policy, options).map_err(|e| format!("policy rejected: {e}"))?;
    let verdicts = verdicts(dialect, options, policy, &filter, message)?;
    Ok(Checked {
        verdict: verdicts.agreed()?,
        reference_limited: verdicts
            .reference
            .as_ref()
            .is_err_and(ReferenceError::is_limit),
    })
}

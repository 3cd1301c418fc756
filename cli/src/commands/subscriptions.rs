//! A subscriptions file (`route --subscriptions`): one subscription per line, mixed dialects,
//! compiled into one [`Subscriptions`] set.
//!
//! A line is a JSON object: `{"id": ID, "dialect": D, "policy": P, "options": O}`. `ID` is a
//! string or a number, kept as written (`7`, `7.0` and `"7"` are three ids); `P` is the policy
//! as JSON (for `stream` also the text form as a JSON string), compiled from its own text so its
//! numbers stay exact and the dialect's size limit applies; `options` is optional. A line that
//! is not such an object, names an id twice, or holds an invalid policy or options is an
//! [`Invalid`] subscription: the others are still loaded.
//!
//! [`Subscriptions`] holds them in the library's [`SubscriptionSet`] (its ids are the
//! subscriptions' positions in the file, so its insertion order is the file's order). The set
//! binds a message once per (dialect, options) group; each group reads the message line exactly
//! as `match` reads it for that dialect and options (`SubscriptionSet::matching_messages`: the
//! library's `read_messages`, an Event Grid batch split into its events). A group that cannot
//! read a message reports it ([`GroupError`]) and the others still deliver: never a silent miss.

use super::diagnostics::pointer_span;
use super::matching::LineError;
use filtervm::{Matches, SetScratch, SubscriptionSet, UnjudgedGroup};
use filtervm_compiler::error::did_you_mean;
use filtervm_compiler::{CompileError, Dialect, ErrorCode, Options, PolicyError, compile_text};
use filtervm_vm::json::{self, Value};
use std::collections::HashMap;

/// The code of a subscription line that is not a subscription (not an object, a member missing
/// or of the wrong type, an unknown member or dialect).
pub(super) const INVALID_SUBSCRIPTION: &str = "INVALID_SUBSCRIPTION";
/// The code of a subscription whose id an earlier line already uses.
pub(super) const DUPLICATE_ID: &str = "DUPLICATE_ID";

/// The members a subscription line may have.
const MEMBERS: [&str; 4] = ["id", "dialect", "policy", "options"];

/// A subscription line that was not loaded.
#[derive(Debug, Clone)]
pub(super) struct Invalid {
    /// The 1-based line number.
    pub(super) line: usize,
    /// The id as written, when the line has one.
    pub(super) id: Option<String>,
    /// What is wrong: a code, a pointer relative to [`Problem::within`], and a message.
    pub(super) problems: Vec<Problem>,
}

impl Invalid {
    /// A line that could not be read as text at all (not UTF-8, too long).
    pub(super) fn line_error(line: u64, message: String) -> Invalid {
        Invalid {
            line: line as usize,
            id: None,
            problems: vec![Problem::line(INVALID_SUBSCRIPTION, "", message)],
        }
    }
}

/// One thing wrong with a subscription line.
#[derive(Debug, Clone)]
pub(super) struct Problem {
    /// The stable code: the library's (a policy or options error), [`INVALID_SUBSCRIPTION`] or
    /// [`DUPLICATE_ID`].
    pub(super) code: String,
    /// Where its pointer is relative to: `""` (the line), `/policy` or `/options`.
    pub(super) within: &'static str,
    /// A JSON Pointer (or a stream text-form span `bytes A..B`) relative to `within`.
    pub(super) pointer: String,
    /// What is wrong.
    pub(super) message: String,
}

impl Problem {
    fn line(code: &str, pointer: &str, message: impl Into<String>) -> Problem {
        Problem {
            code: code.to_owned(),
            within: "",
            pointer: pointer.to_owned(),
            message: message.into(),
        }
    }

    fn compile(e: &PolicyError, within: &'static str) -> Problem {
        Problem {
            code: e.code.as_str().to_owned(),
            within,
            pointer: e.pointer.clone(),
            message: e.message.clone(),
        }
    }

    /// The pointer from the line's root (a text-form span stays as it is, after `within`).
    #[cfg(test)]
    pub(super) fn full_pointer(&self) -> String {
        if self.pointer.starts_with('/') || self.pointer.is_empty() {
            format!("{}{}", self.within, self.pointer)
        } else {
            format!("{} {}", self.within, self.pointer)
        }
    }
}

/// A message a group of subscriptions could not read.
#[derive(Debug, Clone)]
pub(super) struct GroupError {
    /// The group's name ([`group_name`]).
    pub(super) group: String,
    /// Why.
    pub(super) error: LineError,
}

/// The name of the group of subscriptions with `options`: its dialect, and its options when
/// they are not the defaults (`sns {"scope":"MessageBody"}`).
pub(super) fn group_name(options: &Options) -> String {
    let dialect = options.dialect();
    if *options == Options::from(dialect) {
        dialect.name().to_owned()
    } else {
        format!("{} {options}", dialect.name())
    }
}

/// Every loaded subscription (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct Subscriptions {
    /// The subscriptions, by index (their position among the loaded ones).
    set: SubscriptionSet<u32>,
    /// Each subscription's id as written (JSON text), by its index.
    ids: Vec<String>,
    /// Each subscription's line number, by index.
    lines: Vec<usize>,
    /// Each id (JSON text) → its index.
    index: HashMap<String, usize>,
    /// Each subscription's filter, by index (for `filtervm audit`).
    filters: Vec<filtervm::Filter>,
}

impl Subscriptions {
    /// The number of subscriptions.
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Subscription `index`'s filter.
    pub(super) fn filter(&self, index: usize) -> Option<&filtervm::Filter> {
        self.filters.get(index)
    }

    /// Subscription `index`'s id as written (JSON text).
    pub(super) fn id(&self, index: usize) -> &str {
        self.ids.get(index).map_or("null", String::as_str)
    }

    /// Reads one subscription line (line number `line`); an invalid one is returned, and the
    /// set is unchanged.
    pub(super) fn add_line(&mut self, line: usize, text: &str) -> Result<(), Invalid> {
        let invalid = |id: Option<String>, problems: Vec<Problem>| Invalid { line, id, problems };
        let value = json::parse(text.as_bytes()).map_err(|e| {
            let message = format!("the line is not JSON: {e}");
            invalid(None, vec![Problem::line(INVALID_SUBSCRIPTION, "", message)])
        })?;
        let Value::Object(members) = &value else {
            let message =
                "a subscription is a JSON object {\"id\", \"dialect\", \"policy\", \"options\"}";
            return Err(invalid(
                None,
                vec![Problem::line(INVALID_SUBSCRIPTION, "", message)],
            ));
        };
        let id = match members.get("id") {
            Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.to_string()),
            _ => None,
        };
        let mut problems = Vec::new();
        for name in members.keys() {
            if !MEMBERS.contains(&name.as_str()) {
                let hint = did_you_mean(name, &MEMBERS)
                    .map_or_else(String::new, |m| format!(" (did you mean `{m}`?)"));
                problems.push(Problem::line(
                    INVALID_SUBSCRIPTION,
                    &filtervm_compiler::error::pointer::push("", name),
                    format!(
                        "unknown member `{name}`{hint}: a subscription has `id`, `dialect`, \
                         `policy` and optionally `options`"
                    ),
                ));
            }
        }
        if id.is_none() {
            problems.push(Problem::line(
                INVALID_SUBSCRIPTION,
                if members.contains_key("id") {
                    "/id"
                } else {
                    ""
                },
                "a subscription needs an `id`: a string or a number",
            ));
        }
        let dialect = match members.get("dialect") {
            Some(Value::String(name)) => match name.parse::<Dialect>() {
                Ok(d) => Some(d),
                Err(_) => {
                    let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
                    let hint = did_you_mean(name, &names)
                        .map_or_else(String::new, |m| format!(" (did you mean `{m}`?)"));
                    problems.push(Problem::line(
                        INVALID_SUBSCRIPTION,
                        "/dialect",
                        format!(
                            "unknown dialect{hint}: one of sns, basaltic, eventgrid, stream, expr, eventbridge"
                        ),
                    ));
                    None
                }
            },
            other => {
                problems.push(Problem::line(
                    INVALID_SUBSCRIPTION,
                    if other.is_some() { "/dialect" } else { "" },
                    "a subscription needs a `dialect`: sns, basaltic, eventgrid, stream, expr or eventbridge",
                ));
                None
            }
        };
        if !members.contains_key("policy") {
            problems.push(Problem::line(
                INVALID_SUBSCRIPTION,
                "",
                "a subscription needs a `policy`",
            ));
        }
        if let Some(id) = &id
            && let Some(&first) = self.index.get(id)
        {
            let earlier = self.lines.get(first).copied().unwrap_or_default();
            problems.push(Problem::line(
                DUPLICATE_ID,
                "/id",
                format!("the id {id} is already used on line {earlier}; this line is not loaded"),
            ));
        }
        let Some(dialect) = dialect else {
            return Err(invalid(id, problems));
        };
        if !problems.is_empty() {
            return Err(invalid(id, problems));
        }
        let options = match pointer_span(text, "/options").and_then(|r| text.get(r)) {
            None => Ok(Options::from(dialect)),
            Some(options) => Options::from_json(dialect, options),
        };
        let options = options.map_err(|e| {
            let problems = compile_problems(&e, "/options");
            invalid(id.clone(), problems)
        })?;
        let policy = pointer_span(text, "/policy")
            .and_then(|r| text.get(r))
            .unwrap_or_default();
        let filter = compile_text(dialect, policy, &options)
            .map_err(|e| invalid(id.clone(), compile_problems(&e, "/policy")))?;
        let filter = filtervm::Filter::from_compiled(filter, None);
        let index = self.ids.len();
        let added = u32::try_from(index)
            .map_err(|_| "more subscriptions than a set holds".to_owned())
            .and_then(|i| self.set.insert(i, &filter).map_err(|e| e.to_string()));
        if let Err(e) = added {
            return Err(invalid(
                id,
                vec![Problem::line(INVALID_SUBSCRIPTION, "/policy", e)],
            ));
        }
        let id = id.unwrap_or_default();
        self.index.insert(id.clone(), index);
        self.ids.push(id);
        self.lines.push(line);
        self.filters.push(filter);
        Ok(())
    }
}

fn compile_problems(e: &CompileError, within: &'static str) -> Vec<Problem> {
    e.errors
        .iter()
        .map(|e| {
            // Options errors point into the options even when they come from compiling.
            let within = if e.code == ErrorCode::InvalidOptions {
                "/options"
            } else {
                within
            };
            Problem::compile(e, within)
        })
        .collect()
}

/// Reusable buffers for routing messages through a [`Subscriptions`] set. Each thread has its
/// own.
#[derive(Debug, Default)]
pub(super) struct Router {
    scratch: SetScratch,
}

impl Router {
    /// New buffers.
    pub(super) fn new() -> Router {
        Router::default()
    }

    /// New buffers reading message lines in `mode` (`--trusted-input`).
    pub(super) fn with_read_mode(mode: filtervm::ReadMode) -> Router {
        let mut router = Router::new();
        router.scratch.set_read_mode(mode);
        router
    }

    /// Routes one message line, read exactly as `match` reads it for each group of
    /// subscriptions: calls `each` once for a line that is one message, and once per event for
    /// an Event Grid batch (with its index), with the indices of the subscriptions that receive
    /// it (in the order of the subscriptions file) and the groups that could not read it (their
    /// subscriptions are then not among the indices; the other groups still deliver).
    pub(super) fn route(
        &mut self,
        subscriptions: &Subscriptions,
        line: &[u8],
        mut each: impl FnMut(Option<usize>, &[u32], &[GroupError]),
    ) {
        let (mut ids, mut errors) = (Vec::new(), Vec::new());
        subscriptions.set.matching_messages(
            &mut self.scratch,
            line,
            |event, matches: &Matches<'_, u32>| {
                ids.clear();
                errors.clear();
                ids.extend(matches.ids());
                errors.extend(matches.unjudged().map(
                    |UnjudgedGroup { options, error, .. }| GroupError {
                        group: group_name(&options),
                        error: LineError {
                            code: error.code.as_str().to_owned(),
                            message: error.to_string(),
                        },
                    },
                ));
                each(event, &ids, &errors);
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(lines: &[&str]) -> (Subscriptions, Vec<Invalid>) {
        let mut subs = Subscriptions::default();
        let mut invalid = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if let Err(e) = subs.add_line(i + 1, line) {
                invalid.push(e);
            }
        }
        (subs, invalid)
    }

    #[test]
    fn subscription_lines_are_read_or_reported() {
        let (subs, invalid) = load(&[
            r#"{"id": "a", "dialect": "basaltic", "policy": {"event": ["order.paid"]}}"#,
            r#"{"id": 7, "dialect": "stream", "policy": "region = eu-*"}"#,
            r#"{"id": 7.0, "dialect": "sns", "policy": {"x": [1]}, "options": {"scope": "MessageBody"}}"#,
            r#"{"id": "a", "dialect": "basaltic", "policy": {}}"#,
            r#"{"id": "b", "dialect": "basaltc", "policy": {}}"#,
            r#"{"id": "c", "dialect": "sns", "policy": {"x": [{"prefix": 5}]}}"#,
            r#"{"id": "d", "dialect": "sns", "policy": {}, "options": {"scpe": 1}}"#,
            r#"{"dialect": "sns", "policy": {}, "polcy": 1}"#,
            r#"[1]"#,
            r#"{"id": "e", "dialect": "stream", "policy": "a = x and == 5"}"#,
        ]);
        assert_eq!(subs.len(), 3);
        assert_eq!(subs.id(0), "\"a\"");
        assert_eq!(subs.id(1), "7");
        assert_eq!(subs.id(2), "7.0");
        assert_eq!(
            group_name(&Options::from(filtervm_compiler::SnsScope::MessageBody)),
            r#"sns {"scope":"MessageBody"}"#
        );
        assert_eq!(group_name(&Options::Stream), "stream");
        let summary: Vec<(usize, Option<&str>, &str, String)> = invalid
            .iter()
            .map(|i| {
                let p = &i.problems[0];
                (i.line, i.id.as_deref(), p.code.as_str(), p.full_pointer())
            })
            .collect();
        assert_eq!(
            summary,
            [
                (4, Some("\"a\""), DUPLICATE_ID, "/id".to_owned()),
                (
                    5,
                    Some("\"b\""),
                    INVALID_SUBSCRIPTION,
                    "/dialect".to_owned()
                ),
                (
                    6,
                    Some("\"c\""),
                    "SNS_TYPE_ERROR",
                    "/policy/x/0/prefix".to_owned()
                ),
                (
                    7,
                    Some("\"d\""),
                    "INVALID_OPTIONS",
                    "/options/scpe".to_owned()
                ),
                (8, None, INVALID_SUBSCRIPTION, "/polcy".to_owned()),
                (9, None, INVALID_SUBSCRIPTION, String::new()),
                (
                    10,
                    Some("\"e\""),
                    "STREAM_SYNTAX_ERROR",
                    "/policy bytes 10..11".to_owned()
                ),
            ]
        );
        assert!(
            invalid[1].problems[0]
                .message
                .contains("did you mean `basaltic`")
        );
        assert!(
            invalid[4].problems[0]
                .message
                .contains("did you mean `policy`")
        );
    }

    #[test]
    fn a_message_is_routed_through_every_group_and_unreadable_ones_are_reported() {
        let (subs, invalid) = load(&[
            r#"{"id": "paid", "dialect": "basaltic", "policy": {"event": ["order.paid"]}}"#,
            r#"{"id": "eu", "dialect": "stream", "policy": "region = eu-*"}"#,
            r#"{"id": "body", "dialect": "sns", "policy": {"headers": {"region": [{"prefix": "eu"}]}}, "options": {"scope": "MessageBody"}}"#,
            r#"{"id": "grid", "dialect": "eventgrid", "policy": {"subjectBeginsWith": "orders/"}}"#,
        ]);
        assert!(invalid.is_empty(), "{invalid:?}");
        let mut router = Router::new();
        let mut route = |line: &[u8]| {
            let mut out = Vec::new();
            router.route(&subs, line, |event, ids, errors| {
                out.push((event, ids.to_vec(), errors.to_vec()));
            });
            out
        };
        let line = br#"{"attributes": {"event": {"type": "String", "value": "order.paid"}}, "headers": {"region": "eu-west"}, "subject": "orders/1"}"#;
        let routed = route(line);
        assert_eq!(routed.len(), 1);
        assert!(routed[0].2.is_empty(), "{:?}", routed[0].2);
        assert_eq!(routed[0].1, [0, 1, 2, 3]);
        // Attributes that are not typed: the basaltic group cannot read the line; the others
        // still judge it.
        let routed = route(
            br#"{"attributes": {"event": 5}, "headers": {"region": "eu-west"}, "subject": "orders/1"}"#,
        );
        assert_eq!(routed[0].1, [1, 2, 3]);
        let errors = &routed[0].2;
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].group, "basaltic");
        assert_eq!(errors[0].error.code, "INVALID_MESSAGE");
        // Not JSON: no group can read it.
        let routed = route(b"\xff");
        assert_eq!(routed[0].2.len(), 4);
        // An Event Grid batch: one result per event, the grid group judging each event.
        let routed = route(br#"[{"subject": "orders/1"}, {"subject": "users/1"}]"#);
        let per_event: Vec<(Option<usize>, bool)> = routed
            .iter()
            .map(|(event, ids, _)| (*event, ids.contains(&3)))
            .collect();
        assert_eq!(per_event, [(Some(0), true), (Some(1), false)]);
    }
}

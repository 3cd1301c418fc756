//! Dialect options, typed: [`Options`] holds one dialect's options ([`SnsOptions`],
//! [`EventGridOptions`], [`ExprOptions`]; `basaltic` and `stream` take none).
//!
//! The JSON form stays for the command line, conformance vectors and the wire metadata:
//! [`Options::from_json`] reads it (text or a value) and [`Options::to_json`] writes it, every
//! option explicit. `null` and `{}` are the defaults in every dialect.
//!
//! ```
//! use filtervm_compiler::{Dialect, Options, SnsOptions, SnsScope};
//!
//! let body = Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap();
//! assert_eq!(body, Options::from(SnsOptions::default().with_scope(SnsScope::MessageBody)));
//! assert_eq!(body.to_json().to_string(), r#"{"scope":"MessageBody"}"#);
//! assert_eq!(Options::from(Dialect::Sns), Options::from_json(Dialect::Sns, "{}").unwrap());
//!
//! // Errors have the code INVALID_OPTIONS and a JSON Pointer, and suggest a near name.
//! let e = Options::from_json(Dialect::Sns, r#"{"scpoe": "MessageBody"}"#).unwrap_err();
//! assert_eq!(e.errors[0].code, "INVALID_OPTIONS");
//! assert_eq!(e.errors[0].pointer, "/scpoe");
//! assert!(e.errors[0].message.contains("did you mean `scope`?"));
//! ```
//!
//! The option structs are `#[non_exhaustive]` so that options can be added without breaking
//! callers: start from `Default` and set fields (or use the `with_` methods).

use crate::dialect::Dialect;
use crate::error::{CompileError, ErrorCode, JsonTextError, PolicyError, excerpt, pointer};
use filtervm_vm::json::{self, Map, Number, ParseOptions, Value};
use std::borrow::Cow;
use std::fmt;

/// What an `sns` policy filters (sns rule 3): the `scope` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SnsScope {
    /// Message attributes (the default): `"MessageAttributes"`.
    #[default]
    MessageAttributes,
    /// The JSON message body: `"MessageBody"`.
    MessageBody,
}

impl SnsScope {
    /// Every scope.
    pub const ALL: [SnsScope; 2] = [SnsScope::MessageAttributes, SnsScope::MessageBody];

    /// The scope's name in the JSON form (AWS's `FilterPolicyScope` value).
    pub fn name(self) -> &'static str {
        match self {
            SnsScope::MessageAttributes => "MessageAttributes",
            SnsScope::MessageBody => "MessageBody",
        }
    }
}

/// The options of the `sns` dialect: `{"scope": "MessageAttributes" | "MessageBody"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct SnsOptions {
    /// What the policy filters.
    pub scope: SnsScope,
}

impl SnsOptions {
    /// These options with `scope`.
    pub fn with_scope(mut self, scope: SnsScope) -> SnsOptions {
        self.scope = scope;
        self
    }
}

/// The event schema an `eventgrid` subscription reads: the `schema` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EventGridSchema {
    /// `"EventGridSchema"` (the default, EG-16).
    #[default]
    EventGrid,
    /// `"CloudEventSchemaV1_0"` (EG-17).
    CloudEvents,
}

impl EventGridSchema {
    /// Every schema.
    pub const ALL: [EventGridSchema; 2] =
        [EventGridSchema::EventGrid, EventGridSchema::CloudEvents];

    /// The schema's name in the JSON form.
    pub fn name(self) -> &'static str {
        match self {
            EventGridSchema::EventGrid => "EventGridSchema",
            EventGridSchema::CloudEvents => "CloudEventSchemaV1_0",
        }
    }

    /// The member holding the event type (EG-4).
    pub fn event_type_member(self) -> &'static str {
        match self {
            EventGridSchema::EventGrid => "eventType",
            EventGridSchema::CloudEvents => "type",
        }
    }
}

/// The options of the `eventgrid` dialect: `{"schema": "EventGridSchema" | "CloudEventSchemaV1_0"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct EventGridOptions {
    /// The event schema.
    pub schema: EventGridSchema,
}

impl EventGridOptions {
    /// These options with `schema`.
    pub fn with_schema(mut self, schema: EventGridSchema) -> EventGridOptions {
        self.schema = schema;
        self
    }
}

/// The default `max_depth` (E2).
pub const DEFAULT_MAX_DEPTH: usize = 32;
/// The largest `max_depth` the option accepts.
///
/// An expression of depth d is at most 2·d + 2 JSON levels deep (each level is an object and its
/// `exp` array; the leaf condition and its `in` array add two). The ceiling was chosen when
/// policies were read by `serde_json` (127 levels): 62 (126 levels) is the deepest tree every
/// policy text could express. Policy text is now read to [`crate::MAX_POLICY_DEPTH`] (128)
/// levels, which still holds every tree up to the ceiling; it stays 62 so that options written
/// for earlier versions mean the same.
pub const MAX_DEPTH_CEILING: usize = 62;

/// The options of the `expr` dialect: `{"max_depth": N}` (E2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ExprOptions {
    /// The deepest AND/OR/NOT nesting admitted: at most [`MAX_DEPTH_CEILING`], by default
    /// [`DEFAULT_MAX_DEPTH`]. Compiling rejects a larger value with
    /// [`ErrorCode::InvalidOptions`].
    pub max_depth: usize,
}

impl Default for ExprOptions {
    fn default() -> ExprOptions {
        ExprOptions {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

impl ExprOptions {
    /// These options with `max_depth`.
    pub fn with_max_depth(mut self, max_depth: usize) -> ExprOptions {
        self.max_depth = max_depth;
        self
    }
}

/// One dialect's options (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Options {
    /// `sns`.
    Sns(SnsOptions),
    /// `basaltic`: no options.
    Basaltic,
    /// `eventgrid`.
    EventGrid(EventGridOptions),
    /// `stream`: no options.
    Stream,
    /// `expr`.
    Expr(ExprOptions),
    /// `eventbridge`: no options.
    EventBridge,
}

/// The option names each dialect takes.
fn option_names(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Sns => &["scope"],
        Dialect::EventGrid => &["schema"],
        Dialect::Expr => &["max_depth"],
        Dialect::Basaltic | Dialect::Stream | Dialect::EventBridge => &[],
    }
}

impl Options {
    /// The dialect these options belong to.
    pub fn dialect(&self) -> Dialect {
        match self {
            Options::Sns(_) => Dialect::Sns,
            Options::Basaltic => Dialect::Basaltic,
            Options::EventGrid(_) => Dialect::EventGrid,
            Options::Stream => Dialect::Stream,
            Options::Expr(_) => Dialect::Expr,
            Options::EventBridge => Dialect::EventBridge,
        }
    }

    /// Reads `dialect`'s options from their JSON form: text (`&str`), a [`json::Value`] or a
    /// `serde_json::Value`. `null` and `{}` are the defaults.
    ///
    /// Every error has the code [`ErrorCode::InvalidOptions`] and the JSON Pointer of the
    /// option (`""` for options that are not an object): text that is not JSON, a member named
    /// twice, an unknown option (with a suggestion when a known name is close), a value of the
    /// wrong type or out of range. Every wrong member is reported.
    pub fn from_json<'a>(
        dialect: Dialect,
        options: impl Into<OptionsJson<'a>>,
    ) -> Result<Options, CompileError> {
        let value = options.into().value()?;
        let members = match value.as_ref() {
            Value::Null => return Ok(Options::from(dialect)),
            Value::Object(members) => members,
            other => {
                return Err(invalid(
                    "",
                    format!(
                        "{dialect} options must be a JSON object{}, found {}",
                        example(dialect),
                        excerpt(other)
                    ),
                ));
            }
        };
        if let Some(at) = duplicate_member(value.as_ref()) {
            return Err(invalid(
                at.as_str(),
                format!(
                    "duplicate member at {}: a JSON object names each member once",
                    pointer::shown(&at)
                ),
            ));
        }
        let mut options = Options::from(dialect);
        let mut errors = Vec::new();
        for (name, value) in members {
            let at = pointer::push("", name);
            if let Err(message) = options.set(name, value) {
                errors.push(PolicyError::new(ErrorCode::InvalidOptions, at, message));
            }
        }
        if errors.is_empty() {
            Ok(options)
        } else {
            Err(errors.into())
        }
    }

    /// Sets option `name` from its JSON value; the error message when it is not one of the
    /// dialect's options or the value is not valid for it.
    fn set(&mut self, name: &str, value: &Value) -> Result<(), String> {
        match (self, name) {
            (Options::Sns(o), "scope") => {
                let names = SnsScope::ALL.map(SnsScope::name);
                o.scope = named(value, &SnsScope::ALL, SnsScope::name).ok_or_else(|| {
                    // AWS's wording, which shows a string without its quotes.
                    let shown = match value.as_str() {
                        Some(text) => excerpt(text).to_string(),
                        None => excerpt(value).to_string(),
                    };
                    format!(
                        "FilterPolicyScope: Invalid value [{shown}]. Please use either MessageBody or MessageAttributes{}",
                        value.as_str().map_or_else(String::new, |s| suggest(s, &names))
                    )
                })?;
                Ok(())
            }
            (Options::EventGrid(o), "schema") => {
                let names = EventGridSchema::ALL.map(EventGridSchema::name);
                o.schema = named(value, &EventGridSchema::ALL, EventGridSchema::name)
                    .ok_or_else(|| {
                        format!(
                            "`schema` must be \"EventGridSchema\" or \"CloudEventSchemaV1_0\", found {}{}",
                            excerpt(value),
                            value.as_str().map_or_else(String::new, |s| suggest(s, &names))
                        )
                    })?;
                Ok(())
            }
            (Options::Expr(o), "max_depth") => {
                // E2: "N a non-negative integer", written as a JSON integer: the dialect takes
                // every value as written, without coercion (E7), so `2` is accepted and `2.0`,
                // `2e0` and `-0` are not.
                o.max_depth = value
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|n| *n <= MAX_DEPTH_CEILING)
                    .ok_or_else(|| {
                        format!(
                            "`max_depth` must be an integer from 0 to {}, found {}",
                            MAX_DEPTH_CEILING,
                            excerpt(value)
                        )
                    })?;
                Ok(())
            }
            (this, _) => {
                let dialect = this.dialect();
                let known = option_names(dialect);
                Err(match known {
                    [] => format!(
                        "unknown option `{}`: the {dialect} dialect takes no options",
                        excerpt(name)
                    ),
                    [only] => format!(
                        "unknown option `{}`: the {dialect} dialect takes only `{only}`{}",
                        excerpt(name),
                        suggest(name, known)
                    ),
                    _ => format!(
                        "unknown option `{}` for the {dialect} dialect{}",
                        excerpt(name),
                        suggest(name, known)
                    ),
                })
            }
        }
    }

    /// Checks options built in code (a field set out of range), as compiling does.
    pub fn check(&self) -> Result<(), CompileError> {
        match self {
            Options::Expr(o) if o.max_depth > MAX_DEPTH_CEILING => Err(invalid(
                "/max_depth",
                format!(
                    "`max_depth` must be an integer from 0 to {}, found {}",
                    MAX_DEPTH_CEILING, o.max_depth
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The JSON form, every option written out (`{}` for a dialect without options): what
    /// [`Options::from_json`] reads back to the same options.
    pub fn to_json(&self) -> Value {
        let mut members = Map::new();
        match self {
            Options::Sns(o) => {
                members.insert("scope".into(), Value::from(o.scope.name()));
            }
            Options::EventGrid(o) => {
                members.insert("schema".into(), Value::from(o.schema.name()));
            }
            Options::Expr(o) => {
                members.insert("max_depth".into(), Value::Number(Number::from(o.max_depth)));
            }
            Options::Basaltic | Options::Stream | Options::EventBridge => {}
        }
        Value::Object(members)
    }

    /// The `sns` options (the defaults for other dialects' options).
    pub fn sns(&self) -> SnsOptions {
        match self {
            Options::Sns(o) => *o,
            _ => SnsOptions::default(),
        }
    }

    /// The `eventgrid` options (the defaults for other dialects' options).
    pub fn eventgrid(&self) -> EventGridOptions {
        match self {
            Options::EventGrid(o) => *o,
            _ => EventGridOptions::default(),
        }
    }

    /// The `expr` options (the defaults for other dialects' options).
    pub fn expr(&self) -> ExprOptions {
        match self {
            Options::Expr(o) => *o,
            _ => ExprOptions::default(),
        }
    }
}

/// The value of `value` among `all`, by its JSON name.
fn named<T: Copy>(value: &Value, all: &[T], name: impl Fn(T) -> &'static str) -> Option<T> {
    let text = value.as_str()?;
    all.iter().copied().find(|t| name(*t) == text)
}

/// `" (did you mean `x`?)"` when `word` is close to one of `known`.
fn suggest(word: &str, known: &[&str]) -> String {
    crate::error::suggestion(word, known)
}

/// An example of the dialect's options, for the message of options that are not an object.
fn example(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sns => " like {\"scope\": \"MessageBody\"}",
        Dialect::EventGrid => " like {\"schema\": \"CloudEventSchemaV1_0\"}",
        Dialect::Expr => " like {\"max_depth\": 32}",
        Dialect::Basaltic | Dialect::Stream | Dialect::EventBridge => {
            " (`{}`: the dialect takes no options)"
        }
    }
}

fn invalid(at: &str, message: String) -> CompileError {
    CompileError::one(ErrorCode::InvalidOptions, at, message)
}

/// The JSON Pointer of the first member name that some object in `value` gives twice (the
/// reader keeps the last value; see [`Map::first_duplicate`]).
pub fn duplicate_member(value: &Value) -> Option<String> {
    duplicate_in(value, "")
}

fn first_duplicate(members: &Map, at: &str) -> Option<String> {
    if let Some(name) = members.first_duplicate() {
        return Some(pointer::push(at, name));
    }
    members
        .iter()
        .find_map(|(name, value)| duplicate_in(value, &pointer::push(at, name)))
}

fn duplicate_in(value: &Value, at: &str) -> Option<String> {
    match value {
        Value::Object(members) => first_duplicate(members, at),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| duplicate_in(item, &pointer::index(at, i))),
        _ => None,
    }
}

/// Reads options text: one JSON value (lone surrogates rejected; member names given twice are
/// kept for [`Options::from_json`] to reject with their pointer). Errors have the code
/// [`ErrorCode::InvalidOptions`].
pub fn parse_options_text(text: &str) -> Result<Value, CompileError> {
    json::parse_with(text.as_bytes(), &ParseOptions::default()).map_err(|e| {
        let e = JsonTextError::new(text, &e);
        invalid(
            &e.pointer,
            format!("the options are not JSON: {}", e.message),
        )
    })
}

/// The JSON form of options, as [`Options::from_json`] takes it: text, a [`json::Value`] or a
/// `serde_json::Value`.
#[derive(Debug, Clone, Copy)]
pub enum OptionsJson<'a> {
    /// JSON text.
    Text(&'a str),
    /// A value read by [`filtervm_vm::json`].
    Value(&'a Value),
    /// A `serde_json` value (for example from `serde_json::json!`).
    Serde(&'a serde_json::Value),
}

impl<'a> OptionsJson<'a> {
    fn value(self) -> Result<Cow<'a, Value>, CompileError> {
        match self {
            OptionsJson::Text(text) => parse_options_text(text).map(Cow::Owned),
            OptionsJson::Value(value) => Ok(Cow::Borrowed(value)),
            OptionsJson::Serde(value) => Ok(Cow::Owned(Value::from(value))),
        }
    }
}

impl<'a> From<&'a str> for OptionsJson<'a> {
    fn from(text: &'a str) -> OptionsJson<'a> {
        OptionsJson::Text(text)
    }
}

impl<'a> From<&'a String> for OptionsJson<'a> {
    fn from(text: &'a String) -> OptionsJson<'a> {
        OptionsJson::Text(text)
    }
}

impl<'a> From<&'a Value> for OptionsJson<'a> {
    fn from(value: &'a Value) -> OptionsJson<'a> {
        OptionsJson::Value(value)
    }
}

impl<'a> From<&'a serde_json::Value> for OptionsJson<'a> {
    fn from(value: &'a serde_json::Value) -> OptionsJson<'a> {
        OptionsJson::Serde(value)
    }
}

impl From<Dialect> for Options {
    /// The dialect's default options.
    fn from(dialect: Dialect) -> Options {
        match dialect {
            Dialect::Sns => Options::Sns(SnsOptions::default()),
            Dialect::Basaltic => Options::Basaltic,
            Dialect::EventGrid => Options::EventGrid(EventGridOptions::default()),
            Dialect::Stream => Options::Stream,
            Dialect::Expr => Options::Expr(ExprOptions::default()),
            Dialect::EventBridge => Options::EventBridge,
        }
    }
}

impl From<SnsOptions> for Options {
    fn from(options: SnsOptions) -> Options {
        Options::Sns(options)
    }
}

impl From<EventGridOptions> for Options {
    fn from(options: EventGridOptions) -> Options {
        Options::EventGrid(options)
    }
}

impl From<ExprOptions> for Options {
    fn from(options: ExprOptions) -> Options {
        Options::Expr(options)
    }
}

impl From<SnsScope> for Options {
    fn from(scope: SnsScope) -> Options {
        Options::Sns(SnsOptions { scope })
    }
}

impl From<EventGridSchema> for Options {
    fn from(schema: EventGridSchema) -> Options {
        Options::EventGrid(EventGridOptions { schema })
    }
}

impl fmt::Display for Options {
    /// The JSON form ([`Options::to_json`]), compact.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

/// What a dialect with `options` reads from raw JSON bytes, if anything.
pub(crate) fn json_body(options: &Options) -> Option<JsonBody> {
    match options {
        Options::EventGrid(_) => Some(JsonBody::Event),
        Options::EventBridge => Some(JsonBody::EventBridge),
        Options::Sns(sns) if sns.scope == SnsScope::MessageBody => Some(JsonBody::SnsBody),
        _ => None,
    }
}

/// Whether filters with `options` read events ([`JsonBody::Event`]): a document that is an array
/// of events (a batch) is then read event by event ([`read_messages`]).
pub(crate) fn reads_events(options: &Options) -> bool {
    json_body(options) == Some(JsonBody::Event)
}

/// What a dialect reads from raw JSON bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonBody {
    /// An SNS message body (body scope): a body that is not JSON keeps its dialect meaning.
    SnsBody,
    /// An Event Grid event: bytes that are not JSON, or JSON that is not one object, cannot be
    /// judged.
    Event,
    /// An EventBridge event: bytes that are not JSON, a document that is not an object (EB-3),
    /// nesting deeper than 1,000 levels (EB-34) and bodies beyond the binding limits cannot be
    /// judged.
    EventBridge,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(dialect: Dialect, text: &str) -> (ErrorCode, String, String) {
        let e = Options::from_json(dialect, text).expect_err(text);
        let first = e.first().expect("an error");
        (first.code, first.pointer.clone(), first.message.clone())
    }

    #[test]
    fn defaults_and_round_trips() {
        for dialect in Dialect::ALL {
            let default = Options::from(dialect);
            assert_eq!(default.dialect(), dialect);
            for text in ["null", "{}", " { } "] {
                assert_eq!(
                    Options::from_json(dialect, text).unwrap(),
                    default,
                    "{text}"
                );
            }
            assert_eq!(
                Options::from_json(dialect, &default.to_json()).unwrap(),
                default
            );
        }
        for options in [
            Options::from(SnsScope::MessageBody),
            Options::from(EventGridSchema::CloudEvents),
            Options::from(ExprOptions::default().with_max_depth(0)),
            Options::from(ExprOptions::default().with_max_depth(MAX_DEPTH_CEILING)),
        ] {
            let text = options.to_string();
            assert_eq!(
                Options::from_json(options.dialect(), text.as_str()).unwrap(),
                options
            );
        }
        assert_eq!(
            Options::from(Dialect::Expr).to_string(),
            r#"{"max_depth":32}"#
        );
        assert_eq!(Options::Basaltic.to_string(), "{}");
        assert_eq!(
            Options::from(Dialect::EventGrid).to_string(),
            r#"{"schema":"EventGridSchema"}"#
        );
    }

    #[test]
    fn every_error_has_the_code_and_a_pointer() {
        let cases: &[(Dialect, &str, &str, &str)] = &[
            (Dialect::Sns, "[1]", "", "must be a JSON object"),
            (Dialect::Sns, "\"MessageBody\"", "", "must be a JSON object"),
            (
                Dialect::Sns,
                "{\"scope\": 5}",
                "/scope",
                "Invalid value [5]",
            ),
            (
                Dialect::Sns,
                "{\"scope\": \"Body\"}",
                "/scope",
                "FilterPolicyScope: Invalid value [Body]",
            ),
            (
                Dialect::Sns,
                "{\"scope\": \"messagebody\"}",
                "/scope",
                "did you mean `MessageBody`?",
            ),
            (
                Dialect::Sns,
                "{\"scop\": 1}",
                "/scop",
                "did you mean `scope`?",
            ),
            (Dialect::Sns, "{\"nope\": 1}", "/nope", "takes only `scope`"),
            (
                Dialect::Sns,
                "{\"scope\": \"MessageBody\", \"scope\": \"MessageBody\"}",
                "/scope",
                "duplicate member at /scope",
            ),
            (
                Dialect::Sns,
                "{\"a\": [{\"b\": 1, \"b\": 2}]}",
                "/a/0/b",
                "duplicate",
            ),
            (Dialect::Sns, "{\"scope\": ", "/scope", "not JSON"),
            (
                Dialect::Sns,
                "{\"scope\": \"\\udc00\"}",
                "/scope",
                "lone surrogate `\\udc00`",
            ),
            (
                Dialect::Basaltic,
                "{\"scope\": \"MessageBody\"}",
                "/scope",
                "takes no options",
            ),
            (
                Dialect::Stream,
                "{\"max_depth\": 3}",
                "/max_depth",
                "takes no options",
            ),
            (
                Dialect::EventGrid,
                "{\"schema\": \"CloudEventSchemaV10\"}",
                "/schema",
                "did you mean `CloudEventSchemaV1_0`?",
            ),
            (
                Dialect::EventGrid,
                "{\"schema\": true}",
                "/schema",
                "found true",
            ),
            (
                Dialect::EventGrid,
                "{\"shcema\": 1}",
                "/shcema",
                "did you mean `schema`?",
            ),
            (
                Dialect::Expr,
                "{\"max_depth\": \"3\"}",
                "/max_depth",
                "integer",
            ),
            (
                Dialect::Expr,
                "{\"max_depth\": -1}",
                "/max_depth",
                "integer",
            ),
            (
                Dialect::Expr,
                "{\"max_depth\": 63}",
                "/max_depth",
                "from 0 to 62",
            ),
            (
                Dialect::Expr,
                "{\"max_depth\": 2.0}",
                "/max_depth",
                "found 2.0",
            ),
            (
                Dialect::Expr,
                "{\"max_depth\": 2e0}",
                "/max_depth",
                "found 2e0",
            ),
            (
                Dialect::Expr,
                "{\"max_depth\": -0}",
                "/max_depth",
                "found -0",
            ),
            (
                Dialect::Expr,
                "{\"maxdepth\": 2}",
                "/maxdepth",
                "did you mean `max_depth`?",
            ),
        ];
        for (dialect, text, at, words) in cases {
            let (code, pointer, message) = error(*dialect, text);
            assert_eq!(code, ErrorCode::InvalidOptions, "{dialect} {text}");
            assert_eq!(pointer, *at, "{dialect} {text}: {message}");
            assert!(message.contains(words), "{dialect} {text}: {message}");
        }
        // Every wrong member is reported.
        let e = Options::from_json(Dialect::Sns, r#"{"a": 1, "scope": "x", "b": 2}"#).unwrap_err();
        let pointers: Vec<&str> = e.errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(pointers, ["/a", "/scope", "/b"]);
    }

    #[test]
    fn serde_json_values_are_read_too() {
        let options =
            Options::from_json(Dialect::Expr, &serde_json::json!({"max_depth": 2})).unwrap();
        assert_eq!(
            options,
            Options::from(ExprOptions::default().with_max_depth(2))
        );
        assert!(Options::from_json(Dialect::Expr, &serde_json::json!({"max_depth": 2.0})).is_err());
        assert_eq!(
            Options::from_json(Dialect::Sns, &serde_json::Value::Null).unwrap(),
            Options::from(Dialect::Sns)
        );
    }

    #[test]
    fn checks_options_built_in_code() {
        let deep = Options::from(ExprOptions::default().with_max_depth(63));
        let e = deep.check().unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidOptions));
        assert_eq!(e.errors[0].pointer, "/max_depth");
        assert!(Options::from(Dialect::Expr).check().is_ok());
    }
}

//! Errors: a stable code ([`ErrorCode`]), a JSON Pointer (or byte span) and a message a person
//! can act on.

use std::fmt;

/// User input quoted in an error message: every message that quotes a key, a value, a number or
/// an option does it through [`excerpt`], which cuts it to [`EXCERPT_CHARS`] characters.
pub use filtervm_vm::excerpt::{EXCERPT_CHARS, excerpt};

/// What an error is about: the part of the input (or of the library) that was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// The policy text or its structure ([`CompileError`]).
    Policy,
    /// The dialect options ([`crate::Options::from_json`], and compiling).
    Options,
    /// A message that could not be read in the dialect's shape ([`MessageError`]).
    Message,
    /// Bytes given to [`crate::Filter::from_bytes`], or a loaded filter asked for what it lacks.
    Load,
    /// A bug in the library: it should never be seen.
    Internal,
}

/// Declares [`ErrorCode`]: each variant with its stable text, its category and its
/// documentation, which [`ErrorCode::description`] returns too.
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $text:literal, $category:ident;)+) => {
        /// Every stable error code the library emits, in one enum.
        ///
        /// [`ErrorCode::as_str`] is the code's stable text (`SNS_LIMIT_EXCEEDED`), which errors
        /// print and which never changes for a code; `Display` writes the same. Each variant's
        /// documentation names the smallest input that triggers it. New codes may be added in a
        /// later version (hence `#[non_exhaustive]`); an existing code keeps its text.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The code's stable text, as errors print it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $text,)+
                }
            }

            /// What the code means and the smallest input that triggers it (the variant's
            /// documentation).
            pub fn description(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => concat!($($doc, "\n"),+),)+
                }
            }

            /// What the error is about.
            pub const fn category(self) -> ErrorCategory {
                match self {
                    $(ErrorCode::$variant => ErrorCategory::$category,)+
                }
            }
        }
    };
}

error_codes! {
    /// An `sns` policy that is not JSON or not shaped like a filter policy (AWS wording such as
    /// "failed to parse JSON.", "Filter is not an object", "must be an object or an array",
    /// "Empty arrays are not allowed", the `$or` rules, "Only one key allowed in match
    /// expression", a nested policy in attribute scope). Smallest input: the sns policy `[]`.
    SnsSyntaxError = "SNS_SYNTAX_ERROR", Policy;
    /// An `sns` operand of the wrong JSON type ("prefix match pattern must be a string",
    /// "exists match pattern must be either true or false", "Value of < must be numeric",
    /// "Match value must be String, number, true, false, or null", anything-but lists of the
    /// wrong or mixed types). Smallest input: the sns policy `{"a":[{"prefix":1}]}`.
    SnsTypeError = "SNS_TYPE_ERROR", Policy;
    /// An `sns` operator that does not exist ("Unrecognized match type", "Unsupported
    /// anything-but pattern", "Unrecognized numeric range operator"), with a suggestion when a
    /// known one is close. Smallest input: the sns policy `{"a":[{"x":1}]}`.
    SnsUnknownOperator = "SNS_UNKNOWN_OPERATOR", Policy;
    /// An `sns` operand of the right type but an invalid value: a wildcard or CIDR pattern, a
    /// numeric range whose bottom is not below its top, a number that is not finite as a
    /// binary64, an empty anything-but prefix or suffix. Smallest input: the sns policy
    /// `{"a":[{"cidr":"x"}]}`.
    SnsInvalidValue = "SNS_INVALID_VALUE", Policy;
    /// An `sns` policy beyond a limit: more than 5 keys (rule 42), more than 150 value
    /// combinations (rule 43, "Filter policy is too complex"), or more than 256 KiB of text
    /// (rule 44). Smallest input: the sns policy `{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}`.
    SnsLimitExceeded = "SNS_LIMIT_EXCEEDED", Policy;
    /// Any invalid `basaltic` policy (B-12 names this one code for every violation, limits
    /// included). Smallest input: the basaltic policy `[]`.
    NotificationInvalidFilterPolicy = "NOTIFICATION_INVALID_FILTER_POLICY", Policy;
    /// An invalid `eventgrid` filter other than a limit: a member of the wrong type, a missing
    /// or unknown `operatorType`, a missing or empty `key`, a missing, empty or wrongly typed
    /// `value`/`values`, a malformed range. Smallest input: the eventgrid policy `[]`.
    EventGridInvalidFilter = "EVENTGRID_INVALID_FILTER", Policy;
    /// An `eventgrid` filter beyond a limit: more than 25 advanced filters or filter values, a
    /// string value over 512 characters, policy text over 256 KiB. Smallest input: an
    /// advanced filter `StringIn` whose `values` hold one string of 513 characters.
    EventGridLimitExceeded = "EVENTGRID_LIMIT_EXCEEDED", Policy;
    /// An invalid `stream` filter: its shape, an unknown operator, operands of the wrong number
    /// or type, an empty filter, group or `in` list. Smallest input: the stream policy `[]`.
    StreamInvalidFilter = "STREAM_INVALID_FILTER", Policy;
    /// A `stream` filter beyond a limit: more than 8 groups, 8 clauses in a group or 32 `in`
    /// entries, a pattern over 256 bytes, policy text over 256 KiB. Smallest input: the stream
    /// text `a exists or b exists or c exists or d exists or e exists or f exists or g exists or
    /// h exists or i exists`.
    StreamLimitExceeded = "STREAM_LIMIT_EXCEEDED", Policy;
    /// A `stream` pattern that breaks the `*`/`**` rules. Smallest input: the stream text
    /// `a = **x`.
    StreamInvalidPattern = "STREAM_INVALID_PATTERN", Policy;
    /// `stream` text form that does not lex or parse. Smallest input: the stream text `a =`.
    StreamSyntaxError = "STREAM_SYNTAX_ERROR", Policy;
    /// An invalid `expr` policy other than its depth (E1, E3-E11), or policy text that is not
    /// JSON or over 256 KiB. Smallest input: the expr policy `[]`.
    ExprInvalidFilter = "EXPR_INVALID_FILTER", Policy;
    /// An `expr` policy nested deeper than `max_depth` (E2). Smallest input: the expr policy
    /// `{"op":"NOT","exp":[{"key":"a","op":"exists"}]}` with the options `{"max_depth":0}`.
    ExprTooDeep = "EXPR_TOO_DEEP", Policy;
    /// An `eventbridge` pattern that is not shaped like one (event-ruler's wording, EB-31):
    /// "Filter is not an object", "Empty objects are not allowed", "\"NAME\" must be an object
    /// or an array", "Empty arrays are not allowed", "Match value must be String, number, true,
    /// false, or null", the `$or` rules and reserved names, "Match expression name not found",
    /// "Only one key allowed in match expression", "Too many elements in numeric expression", the
    /// shape of a `numeric` array; or pattern text that is not JSON. Smallest input: the
    /// eventbridge pattern `[]`.
    EventBridgeSyntaxError = "EVENTBRIDGE_SYNTAX_ERROR", Policy;
    /// An `eventbridge` operand of the wrong JSON type ("prefix match pattern must be a string",
    /// "exists match pattern must be either true or false.", "Value of < must be numeric", the
    /// anything-but operand and list types). Smallest input: the eventbridge pattern
    /// `{"a":[{"prefix":1}]}`.
    EventBridgeTypeError = "EVENTBRIDGE_TYPE_ERROR", Policy;
    /// An `eventbridge` operator that does not exist ("Unrecognized match type", "Unsupported
    /// anything-but pattern", "Unsupported prefix pattern", "Unrecognized numeric range operator",
    /// "Bad numeric range operator"), with a suggestion when a known one is close. Smallest
    /// input: the eventbridge pattern `{"a":[{"x":1}]}`.
    EventBridgeUnknownOperator = "EVENTBRIDGE_UNKNOWN_OPERATOR", Policy;
    /// An `eventbridge` operand of the right type but an invalid value: a wildcard ("Consecutive
    /// wildcard characters at pos N"), a CIDR block (EB-27), a number that is not comparable
    /// ("Cannot compare number : TEXT", EB-17), "Bottom must be less than top", an empty
    /// anything-but prefix or suffix or list. Smallest input: the eventbridge pattern
    /// `{"a":[{"cidr":"x"}]}`.
    EventBridgeInvalidValue = "EVENTBRIDGE_INVALID_VALUE", Policy;
    /// An `eventbridge` pattern beyond a limit: a branch of more than 256 paths (EB-32, "exceeds
    /// max value of 256"), wildcards too complex to match ("Rule is too complex", EB-33), `$or`
    /// alternatives that replace one another's fields in more combinations than compiling
    /// expands, or pattern text over 256 KiB. Smallest input: the eventbridge pattern
    /// `{"a":[{"wildcard":"*:*:*:*:*:b/*"}]}`.
    EventBridgeLimitExceeded = "EVENTBRIDGE_LIMIT_EXCEEDED", Policy;
    /// Dialect options that are not a JSON object, name an unknown or duplicate member, give
    /// an option a value of the wrong type or out of range, or belong to another dialect; in
    /// every dialect. Smallest input: the options `[]`.
    InvalidOptions = "INVALID_OPTIONS", Options;
    /// A message whose parts are in the wrong form (`attributes` that are not an object, an
    /// attribute without a string or number value, an attribute of an unknown type, a basaltic
    /// attribute that is not a String or Number, a header given no value, a stream header given
    /// several), or an Event Grid event that is not one JSON object (an array: a batch given as
    /// one event; a scalar). The table of these situations is `filtervm/MESSAGES.md`. Smallest
    /// input: the basaltic message `{"attributes": []}`.
    InvalidMessage = "INVALID_MESSAGE", Message;
    /// An sns body with more combinations of array elements than binding judges element by
    /// element (it is treated as not matching; `Evaluator::try_matches` reports it). Smallest
    /// input: a body policy reading two fields under arrays of objects, on a body whose arrays
    /// multiply past the row limit.
    MessageTooComplex = "MESSAGE_TOO_COMPLEX", Message;
    /// JSON message bytes that are not one JSON document: a message read by `read_message`, an
    /// Event Grid event (which cannot be judged), or an SNS body from
    /// `Evaluator::try_matches_bytes` (as SNS it matches only policies that read nothing from
    /// the body). Smallest input: the Event Grid event `{`.
    MessageNotJson = "MESSAGE_NOT_JSON", Message;
    /// A message without the part its filter reads, where the dialect gives the absence no
    /// meaning ([`Absent::Missing`](crate::Absent::Missing)): a JSON document in none of the
    /// message shapes (read as a body) given to a filter on headers, attributes given to a
    /// filter on the body, raw JSON bytes given to `Evaluator::matches_bytes` for a basaltic,
    /// stream or expr filter or an sns filter in attribute scope (that entry point reads JSON
    /// bodies only). A message without attributes is not one: sns attribute-scope and basaltic
    /// filters judge it as the empty attribute set. The message names the likely fix. Smallest
    /// input: the bytes `{}` given to `Evaluator::matches_bytes` for the basaltic policy `{}`.
    MessageShape = "MESSAGE_SHAPE", Message;
    /// A `basaltic` message that fails the publish-time check of B-13 (at most 20 attributes,
    /// names of 1-256 bytes, values of at most 1,024 bytes). Smallest input: a message with an
    /// attribute whose name is empty.
    NotificationInvalidMessageAttributes = "NOTIFICATION_INVALID_MESSAGE_ATTRIBUTES", Message;
    /// Bytes that are not a valid program encoding, or a program the verifier rejects; also bytes
    /// that are not a saved subscription set's encoding (`SubscriptionSet::from_bytes`: magic,
    /// version, lengths, hash). Smallest input: the empty byte string given to
    /// `Filter::from_bytes`.
    InvalidProgram = "INVALID_PROGRAM", Load;
    /// A valid program whose metadata is not a filter's (`{"dialect", "options"}`); also a saved
    /// subscription set whose contents are not a set's (a test, a filter code, an index, an id, a
    /// kept pattern). Smallest input: a program with the metadata `[]`.
    InvalidFilterMetadata = "INVALID_FILTER_METADATA", Load;
    /// A filter loaded from bytes of the first wire format (which shipped no IR) asked for what
    /// needs its IR (explain, a subscription set). Smallest input: explaining a program loaded
    /// with the metadata `{"dialect":"basaltic","options":{}}`.
    FilterWithoutIr = "FILTER_WITHOUT_IR", Load;
    /// Code generation produced a program the verifier rejects: a bug in the library. Smallest
    /// input: none from a policy; an IR test with a NaN bound.
    InternalCodegen = "INTERNAL_CODEGEN", Internal;
}

impl ErrorCode {
    /// The code whose stable text is `text`.
    pub fn from_text(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == text)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorCode> for &str {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == other.as_str()
    }
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// One thing wrong with a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// The stable code (for example [`ErrorCode::NotificationInvalidFilterPolicy`]).
    pub code: ErrorCode,
    /// A JSON Pointer to the offending part of the policy (`""` is the whole policy), or for the
    /// stream text form a byte span written `bytes A..B`.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl PolicyError {
    /// A new error.
    pub fn new(
        code: ErrorCode,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> PolicyError {
        PolicyError {
            code,
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}: {}",
            self.code,
            pointer::shown(&self.pointer),
            self.message
        )
    }
}

/// A policy that did not compile: every error found, in policy order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// The errors (at least one).
    pub errors: Vec<PolicyError>,
}

impl CompileError {
    /// A compile error of one policy error.
    pub fn one(
        code: ErrorCode,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> CompileError {
        CompileError {
            errors: vec![PolicyError::new(code, pointer, message)],
        }
    }

    /// The first error.
    pub fn first(&self) -> Option<&PolicyError> {
        self.errors.first()
    }

    /// The code of the first error.
    pub fn code(&self) -> Option<ErrorCode> {
        self.first().map(|e| e.code)
    }
}

impl From<PolicyError> for CompileError {
    fn from(error: PolicyError) -> CompileError {
        CompileError {
            errors: vec![error],
        }
    }
}

impl From<Vec<PolicyError>> for CompileError {
    fn from(errors: Vec<PolicyError>) -> CompileError {
        CompileError { errors }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CompileError {}

/// A message that could not be read in the dialect's shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code} at {}: {message}", pointer::shown(pointer))]
pub struct MessageError {
    /// The stable code ([`ErrorCode::InvalidMessage`], or a dialect's own).
    pub code: ErrorCode,
    /// A JSON Pointer into the message.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl MessageError {
    /// A message-shape error ([`ErrorCode::InvalidMessage`]).
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> MessageError {
        MessageError {
            code: ErrorCode::InvalidMessage,
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// Policy or options text that the JSON reader rejected, described for an error message: where
/// (a JSON Pointer, a line and a column) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonTextError {
    /// The JSON Pointer of the value being read where the text went wrong (of the object, when
    /// the problem is in a member name), `""` at the top level.
    pub pointer: String,
    /// What is wrong, with its line and column (1-based, columns in characters): ``lone
    /// surrogate `\ud800` at line 1 column 9: ...``, or ``line 1 column 7: unexpected `]` at
    /// byte 6 (expected a value)``.
    pub message: String,
}

impl JsonTextError {
    /// Describes `error`, which the JSON reader gave when reading `text`.
    pub fn new(text: &str, error: &filtervm_vm::json::Error) -> JsonTextError {
        let at = error.offset().min(text.len());
        let before = text.get(..at).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let column = before.get(line_start..).map_or(0, |l| l.chars().count()) + 1;
        let pointer = json_text::pointer_at(text, at);
        let message = match error.kind() {
            // Quoted as written (`\uDBFF` stays upper case).
            filtervm_vm::json::ErrorKind::LoneSurrogate => format!(
                "lone surrogate `{}` at line {line} column {column}: a `\\u` escape of half a \
                 UTF-16 surrogate pair is not Unicode text",
                text.get(at..at + 6).unwrap_or("\\u")
            ),
            _ => format!("line {line} column {column}: {error}"),
        };
        JsonTextError { pointer, message }
    }
}

/// The name in `known` that `word` most likely misspells: the same name in another case, else
/// the closest by edit distance (insertions, deletions, substitutions and swaps of neighbours)
/// within about a third of its length; the first such name on a tie. `None` when nothing is
/// close, or `word` is itself known.
///
/// ```
/// use filtervm_compiler::error::did_you_mean;
/// let known = ["prefix", "suffix", "numeric", "exists"];
/// assert_eq!(did_you_mean("numric", &known), Some("numeric"));
/// assert_eq!(did_you_mean("Prefix", &known), Some("prefix"));
/// assert_eq!(did_you_mean("sufifx", &known), Some("suffix"));
/// assert_eq!(did_you_mean("anything", &known), None);
/// ```
pub fn did_you_mean<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    // Longer words are not typos of short operator and option names; this also bounds the cost.
    const LONGEST: usize = 64;
    if known.contains(&word) || word.chars().count() > LONGEST {
        return None;
    }
    if let Some(same) = known
        .iter()
        .find(|k| k.to_lowercase() == word.to_lowercase())
    {
        return Some(same);
    }
    let word: Vec<char> = word.to_lowercase().chars().collect();
    let mut best: Option<(usize, &'a str)> = None;
    for &candidate in known {
        let other: Vec<char> = candidate.to_lowercase().chars().collect();
        let allowed = match other.len() {
            0..=2 => 0,
            3..=5 => 1,
            6..=8 => 2,
            _ => 3,
        };
        let distance = edit_distance(&word, &other);
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, name)| name)
}

/// `" (did you mean `NAME`?)"` for [`did_you_mean`]'s answer, or `""`.
pub(crate) fn suggestion(word: &str, known: &[&str]) -> String {
    did_you_mean(word, known).map_or_else(String::new, |name| format!(" (did you mean `{name}`?)"))
}

/// The optimal string alignment distance: the fewest insertions, deletions, substitutions and
/// swaps of two neighbouring characters that turn `a` into `b`.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    // Three rows of the dynamic programme: two rows back (for swaps), one back, and this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        if let Some(first) = current.first_mut() {
            *first = i + 1;
        }
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let substitute = previous.get(j).map_or(usize::MAX, |d| d + cost);
            let delete = previous.get(j + 1).map_or(usize::MAX, |d| d + 1);
            let insert = current.get(j).map_or(usize::MAX, |d| d + 1);
            let mut best = substitute.min(delete).min(insert);
            if i > 0
                && j > 0
                && a.get(i - 1) == Some(&cb)
                && b.get(j - 1) == Some(&ca)
                && let Some(d) = before.get(j - 1)
            {
                best = best.min(d + 1);
            }
            if let Some(slot) = current.get_mut(j + 1) {
                *slot = best;
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous.get(b.len()).copied().unwrap_or(usize::MAX)
}

#[cfg(test)]
mod code_tests;

/// Scanning JSON text without parsing it: for describing text that did not parse.
mod json_text {
    /// One open container while scanning.
    enum Frame {
        /// An object: the member being read (`None` before its name is complete).
        Object { member: Option<String> },
        /// An array: the index of the element being read.
        Array { index: usize },
    }

    /// The JSON Pointer of the value being read at byte `offset` of `text` (the string there,
    /// or the value the text went wrong in), reading `text` as valid JSON up to `offset`; for a
    /// member name, the pointer of its object.
    pub(super) fn pointer_at(text: &str, offset: usize) -> String {
        let bytes = text.as_bytes();
        let mut stack: Vec<Frame> = Vec::new();
        let mut i = 0;
        while i < offset {
            match bytes.get(i) {
                Some(b'"') => {
                    let end = string_end(bytes, i);
                    if end > offset {
                        break;
                    }
                    if let Some(Frame::Object {
                        member: member @ None,
                    }) = stack.last_mut()
                    {
                        let token = text.get(i..end).unwrap_or_default();
                        *member = Some(match filtervm_vm::json::parse(token.as_bytes()) {
                            Ok(filtervm_vm::json::Value::String(name)) => name,
                            _ => token.trim_matches('"').to_owned(),
                        });
                    }
                    i = end;
                    continue;
                }
                Some(b'{') => stack.push(Frame::Object { member: None }),
                Some(b'[') => stack.push(Frame::Array { index: 0 }),
                Some(b'}' | b']') => {
                    stack.pop();
                }
                Some(b',') => match stack.last_mut() {
                    Some(Frame::Object { member }) => *member = None,
                    Some(Frame::Array { index }) => *index += 1,
                    None => {}
                },
                _ => {}
            }
            i += 1;
        }
        let mut pointer = String::new();
        for frame in &stack {
            match frame {
                Frame::Object { member: Some(name) } => {
                    pointer = super::pointer::push(&pointer, name)
                }
                // A member name: the pointer stops at its object.
                Frame::Object { member: None } => break,
                Frame::Array { index } => pointer = super::pointer::index(&pointer, *index),
            }
        }
        pointer
    }

    /// The byte offset just past the string starting at `start` (or the end of the text).
    fn string_end(bytes: &[u8], start: usize) -> usize {
        let mut i = start + 1;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        bytes.len()
    }
}

/// JSON Pointer helpers (RFC 6901).
pub mod pointer {
    /// Escapes one reference token (`~` → `~0`, `/` → `~1`).
    pub fn escape(token: &str) -> String {
        let mut out = String::with_capacity(token.len());
        push_escaped(&mut out, token);
        out
    }

    /// Appends `token` escaped to `out`. The two special characters are ASCII, so the token is
    /// searched byte by byte (a `char` pattern decodes every character: this runs for every
    /// member and element of every policy, BENCHMARKS.md "Compile").
    #[inline(always)]
    fn push_escaped(out: &mut String, token: &str) {
        // Most tokens (member names, in practice) have neither: one look, a word at a time,
        // and one copy, inline; the others are escaped out of line.
        if has_special(token.as_bytes()) {
            push_specials(out, token);
        } else {
            out.push_str(token);
        }
    }

    /// [`push_escaped`] of a token that holds a `~` or a `/`.
    #[inline(never)]
    fn push_specials(out: &mut String, token: &str) {
        let special = |b: &u8| *b == b'~' || *b == b'/';
        let mut rest = token;
        while let Some(at) = rest.as_bytes().iter().position(special) {
            // `at` is the index of an ASCII byte, so both splits fall on character boundaries.
            out.push_str(rest.get(..at).unwrap_or(""));
            out.push_str(if rest.as_bytes().get(at) == Some(&b'~') {
                "~0"
            } else {
                "~1"
            });
            rest = rest.get(at + 1..).unwrap_or("");
        }
        out.push_str(rest);
    }

    /// Whether `bytes` holds a `~` or a `/`, looked for eight bytes at a time: a word XORed
    /// with eight copies of the byte has a zero byte exactly where the byte is, and
    /// `(x - 0x01..01) & !x & 0x80..80` is non-zero exactly when `x` has a zero byte. The
    /// bytes a whole word does not cover are looked at in one more word, overlapping the last:
    /// the last eight bytes, or for four to seven bytes, the first four and the last four. Only
    /// a token of one to three bytes is looked at byte by byte.
    fn has_special(bytes: &[u8]) -> bool {
        const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
        const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
        const TILDES: u64 = u64::from_ne_bytes([b'~'; 8]);
        const SLASHES: u64 = u64::from_ne_bytes([b'/'; 8]);
        let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
        let found = |w: u64| has_zero(w ^ TILDES) || has_zero(w ^ SLASHES);
        // Every slice given to these has their length, so the zero is never read.
        let word = |b: &[u8]| b.try_into().map_or(0, u64::from_ne_bytes);
        let half = |b: &[u8]| b.try_into().map_or(0, u32::from_ne_bytes);
        let n = bytes.len();
        if n >= 8 {
            return bytes.chunks_exact(8).any(|w| found(word(w)))
                || bytes.get(n - 8..).is_some_and(|w| found(word(w)));
        }
        if n >= 4 {
            let first = bytes.get(..4).map_or(0, half);
            let last = bytes.get(n - 4..).map_or(0, half);
            return found(u64::from(first) | u64::from(last) << 32);
        }
        bytes.iter().any(|&b| b == b'~' || b == b'/')
    }

    /// `base` extended by one token. Pointers are built for every member of a policy (they are
    /// the IR's origins), so this allocates once.
    pub fn push(base: &str, token: &str) -> String {
        let mut out = String::with_capacity(base.len() + 1 + token.len());
        push_to(&mut out, base, token);
        out
    }

    /// Writes [`push`] of `base` and `token` to `out` (cleared first): a front end that keeps
    /// the pointer shared, as the IR's origin, builds it in one reused buffer and copies it once.
    pub fn push_to(out: &mut String, base: &str, token: &str) {
        out.clear();
        out.push_str(base);
        push_token(out, token);
    }

    /// Appends `/` and `token` escaped to the pointer `out`: a front end that keeps the pointer
    /// of what it reads in one buffer extends it in place (and truncates it back after).
    pub fn push_token(out: &mut String, token: &str) {
        out.push('/');
        push_escaped(out, token);
    }

    /// `base` extended by an array index (allocates once).
    pub fn index(base: &str, i: usize) -> String {
        let mut out = String::new();
        index_to(&mut out, base, i);
        out
    }

    /// Writes [`index`] of `base` and `i` to `out` (cleared first; see [`push_to`]).
    pub fn index_to(out: &mut String, base: &str, i: usize) {
        out.clear();
        out.push_str(base);
        push_index(out, i);
    }

    /// Appends `/` and the index `i` to the pointer `out` (see [`push_token`]).
    pub fn push_index(out: &mut String, i: usize) {
        // Most indices are one digit: pushed as one string, with no digit buffer.
        if let Some(digit) = SLASH_DIGITS.get(i) {
            out.push_str(digit);
            return;
        }
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        let mut n = i;
        loop {
            start -= 1;
            if let Some(d) = digits.get_mut(start) {
                // `n % 10` is a digit.
                *d = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 || start == 0 {
                break;
            }
        }
        // The digits are ASCII: pushed as characters, with no UTF-8 check of the buffer.
        let digits = digits.get(start..).unwrap_or(&[]);
        out.reserve(1 + digits.len());
        out.push('/');
        for &d in digits {
            out.push(char::from(d));
        }
    }

    /// A pointer that only errors name, written out only when one is reported: a pointer
    /// already written (the part of a policy the IR keeps, whose pointer is its origin),
    /// extended by reference tokens and indices that stay borrowed until then. A front end
    /// reads an operator and its operand through one, so that a valid operator builds no
    /// pointer; each error names the pointer [`push`] and [`index`] would have built.
    #[derive(Debug, Clone, Copy)]
    pub enum Lazy<'a> {
        /// A pointer already written.
        Written(&'a str),
        /// A pointer extended by one reference token (escaped when written).
        Token(&'a Lazy<'a>, &'a str),
        /// A pointer extended by an array index.
        Index(&'a Lazy<'a>, usize),
    }

    impl<'a> Lazy<'a> {
        /// The written pointer `base`.
        pub fn new(base: &'a str) -> Lazy<'a> {
            Lazy::Written(base)
        }

        /// This pointer extended by `token`, still not written.
        pub fn token<'b>(&'b self, token: &'b str) -> Lazy<'b> {
            Lazy::Token(self, token)
        }

        /// This pointer extended by the index `i`, still not written.
        pub fn index<'b>(&'b self, i: usize) -> Lazy<'b> {
            Lazy::Index(self, i)
        }

        /// The pointer, written out (for an error).
        pub fn get(&self) -> String {
            let mut out = String::new();
            self.write_to(&mut out);
            out
        }

        /// Appends the pointer to `out`, its base first.
        fn write_to(&self, out: &mut String) {
            match self {
                Lazy::Written(base) => out.push_str(base),
                Lazy::Token(base, token) => {
                    base.write_to(out);
                    push_token(out, token);
                }
                Lazy::Index(base, i) => {
                    base.write_to(out);
                    push_index(out, *i);
                }
            }
        }
    }

    impl From<&Lazy<'_>> for String {
        fn from(at: &Lazy<'_>) -> String {
            at.get()
        }
    }

    /// The reference tokens of the indices 0 to 9, each with its `/`.
    const SLASH_DIGITS: [&str; 10] = ["/0", "/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8", "/9"];

    /// A pointer as an error's text shows it: `(root)` for `""`, and each reference token
    /// through [`excerpt`](super::excerpt), so that a pointer through a huge member name stays
    /// short while every step of the path is still visible.
    pub fn shown(pointer: &str) -> Shown<'_> {
        Shown(pointer)
    }

    /// The [`std::fmt::Display`] of [`shown`].
    #[derive(Debug, Clone, Copy)]
    pub struct Shown<'a>(&'a str);

    impl std::fmt::Display for Shown<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            if self.0.is_empty() {
                return f.write_str("(root)");
            }
            let Some(tokens) = self.0.strip_prefix('/') else {
                // Not a JSON Pointer: a byte span of the stream text form.
                return write!(f, "{}", super::excerpt(self.0));
            };
            for token in tokens.split('/') {
                write!(f, "/{}", super::excerpt(token))?;
            }
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn escapes_tokens() {
            assert_eq!(super::push("", "a/b~c"), "/a~1b~0c");
            assert_eq!(super::push("/p", "~~//"), "/p/~0~0~1~1");
            assert_eq!(super::push("/p", "é/"), "/p/é~1");
            assert_eq!(super::escape("x~"), "x~0");
            assert_eq!(super::index("/x", 3), "/x/3");
            for i in [0, 9, 10, 99, 100, 12345, usize::MAX] {
                assert_eq!(super::index("", i), format!("/{i}"));
            }
        }

        /// The word-at-a-time look finds a `~` or `/` at every position of tokens longer and
        /// shorter than a word, and nothing in tokens of bytes next to them (`.`, `0`, `}`, `\x7f`).
        #[test]
        fn finds_special_bytes_at_every_position() {
            for len in 0..=20 {
                let plain: Vec<u8> = (0..len).map(|i| b".0}\x7f\x80\xaea~/"[i % 6]).collect();
                assert!(!super::has_special(&plain), "{plain:?}");
                for at in 0..len {
                    for special in [b'~', b'/'] {
                        let mut token = plain.clone();
                        if let Some(b) = token.get_mut(at) {
                            *b = special;
                        }
                        assert!(super::has_special(&token), "{token:?}");
                    }
                }
            }
            let long = "a".repeat(17);
            assert_eq!(
                super::push("", &format!("{long}/{long}~")),
                format!("/{long}~1{long}~0")
            );
        }

        /// A lazy pointer, written out, is the pointer `push` and `index` build from its base.
        #[test]
        fn lazy_pointers_write_what_push_and_index_build() {
            let base = super::Lazy::new("/a~1b");
            assert_eq!(base.get(), "/a~1b");
            let op = base.token("x/~");
            assert_eq!(op.get(), super::push("/a~1b", "x/~"));
            for i in [0, 9, 10, 12345] {
                let element = op.index(i);
                assert_eq!(element.get(), super::index(&super::push("/a~1b", "x/~"), i));
                let inner = element.token("y");
                assert_eq!(String::from(&inner), format!("/a~1b/x~1~0/{i}/y"));
            }
            assert_eq!(super::Lazy::new("").token("").get(), "/");
        }

        /// A pointer extended in place is the pointer `push` and `index` build.
        #[test]
        fn extends_in_place() {
            let mut out = String::from("/p");
            super::push_token(&mut out, "a/b~");
            assert_eq!(out, super::push("/p", "a/b~"));
            for i in (0..=12).chain([99, 100, usize::MAX]) {
                let mut at = out.clone();
                super::push_index(&mut at, i);
                assert_eq!(at, super::index(&out, i));
                assert_eq!(at, format!("/p/a~1b~0/{i}"));
            }
        }
    }
}

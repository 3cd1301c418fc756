//! Policy errors shown on their source: the offending part underlined, with the code, the
//! message and the JSON Pointer (`annotate-snippets`, plain text unless the stream is a
//! terminal).
//!
//! An error says where it is in one of three ways, and each maps to a byte range of the text the
//! user wrote:
//!
//! - a JSON Pointer into the policy (or, for `INVALID_OPTIONS`, into the `--options` text):
//!   [`pointer_span`] finds the value it names in the text (the library's JSON values carry no
//!   positions, so the text is scanned again; a member named twice is the last one, as the
//!   reader keeps the last value);
//! - `bytes A..B`, the byte span of a stream text-form token, relative to the text form (which may
//!   itself be a JSON string: then the span is mapped into the string when it holds no escapes,
//!   else the whole string is underlined);
//! - text that is not JSON at all: the reader's error offset.
//!
//! `annotate-snippets` shows a long line as a window around the error and folds a value spanning
//! many lines, so a diagnostic stays a few short lines whatever the policy.

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use filtervm_compiler::error::pointer;
use filtervm_compiler::{ErrorCode, PolicyError};
use filtervm_vm::json::{self, Map, Value};
use std::io::IsTerminal;
use std::ops::Range;

/// Text an error may point into.
#[derive(Debug, Clone, Copy)]
pub(super) struct Source<'a> {
    /// A file name, `<stdin>`, `--filter` or `--options`.
    pub(super) name: &'a str,
    /// The text (one subscription line for `route`).
    pub(super) text: &'a str,
    /// The line number of the text's first line (1, or a subscription's line).
    pub(super) first_line: usize,
    /// What pointers into this source are relative to: `""` for a policy file, `/policy` (or
    /// `/options`) for a subscription line.
    pub(super) prefix: &'a str,
}

impl<'a> Source<'a> {
    /// A whole text, starting at line 1.
    pub(super) fn whole(name: &'a str, text: &'a str) -> Source<'a> {
        Source {
            name,
            text,
            first_line: 1,
            prefix: "",
        }
    }
}

/// The policy and, when there is one, the options text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sources<'a> {
    /// Where policy errors point.
    pub(super) policy: Source<'a>,
    /// Where `INVALID_OPTIONS` errors point.
    pub(super) options: Option<Source<'a>>,
}

/// Which stream a diagnostic is written to (it is styled only when that stream is a terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    /// Standard output (`check`).
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }
}

/// Where an error is: its source, the byte range, and its 1-based line and column (in
/// characters).
#[derive(Debug, Clone)]
pub(super) struct Located<'a> {
    source: Source<'a>,
    span: Range<usize>,
    line: usize,
    column: usize,
}

/// One thing wrong, as a diagnostic shows it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Problem<'a> {
    /// The stable code.
    pub(super) code: &'a str,
    /// A JSON Pointer into its source, or `bytes A..B` of the stream text form.
    pub(super) pointer: &'a str,
    /// What is wrong.
    pub(super) message: &'a str,
    /// Whether it is about the options (else the policy).
    pub(super) in_options: bool,
}

impl<'a> From<&'a PolicyError> for Problem<'a> {
    fn from(e: &'a PolicyError) -> Problem<'a> {
        Problem {
            code: e.code.as_str(),
            pointer: &e.pointer,
            message: &e.message,
            in_options: e.code == ErrorCode::InvalidOptions,
        }
    }
}

/// Renders policy errors (see [`render_problems`]).
pub(super) fn render(errors: &[PolicyError], sources: &Sources<'_>, stream: Stream) -> String {
    let problems: Vec<Problem<'_>> = errors.iter().map(Problem::from).collect();
    render_problems(&problems, sources, stream)
}

/// Renders `problems`, each with its source underlined when it can be found; one block per
/// problem, each ending with a newline.
pub(super) fn render_problems(
    problems: &[Problem<'_>],
    sources: &Sources<'_>,
    stream: Stream,
) -> String {
    let renderer = if stream.is_terminal() {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for error in problems {
        let title = Level::ERROR.primary_title(error.message).id(error.code);
        let group = match locate(error, sources) {
            Some(at) => {
                let mut annotation = AnnotationKind::Primary.span(at.span.clone());
                if error.pointer.starts_with('/') {
                    let full = format!("{}{}", at.source.prefix, error.pointer);
                    annotation = annotation.label(pointer_text(&full));
                }
                Group::with_title(title).element(
                    Snippet::source(at.source.text)
                        .line_start(at.source.first_line)
                        .path(at.source.name)
                        .annotation(annotation),
                )
            }
            None => {
                let shown = pointer_text(error.pointer);
                let source = source_of(error, sources).map_or("the policy", |s| s.name);
                Group::with_title(title)
                    .element(Level::NOTE.message(format!("at {shown} in {source}")))
            }
        };
        out.push_str(&renderer.render(&[group]));
        out.push('\n');
    }
    out
}

/// `check --json` and `compile --json` for an invalid policy: `{"valid": false, "errors":
/// [{"code", "pointer", "message", "source", "span": {"start", "end", "line", "column"} |
/// null}]}` (`"valid": true` and no errors for a valid one). Offsets are bytes of the source,
/// lines and columns (characters) count from 1.
pub(super) fn errors_json(errors: &[PolicyError], sources: &Sources<'_>) -> Value {
    let items = errors
        .iter()
        .map(|e| {
            let mut m = Map::new();
            m.insert("code".into(), Value::from(e.code.as_str()));
            m.insert("pointer".into(), Value::from(e.pointer.as_str()));
            m.insert("message".into(), Value::from(e.message.as_str()));
            let e = Problem::from(e);
            let located = locate(&e, sources);
            let source = source_of(&e, sources).map_or(Value::Null, |s| Value::from(s.name));
            m.insert("source".into(), source);
            m.insert(
                "span".into(),
                located.map_or(Value::Null, |at| {
                    let mut span = Map::new();
                    span.insert("start".into(), number(at.span.start));
                    span.insert("end".into(), number(at.span.end));
                    span.insert("line".into(), number(at.line));
                    span.insert("column".into(), number(at.column));
                    Value::Object(span)
                }),
            );
            Value::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("valid".into(), Value::Bool(errors.is_empty()));
    m.insert("errors".into(), Value::Array(items));
    Value::Object(m)
}

/// A count or offset as a JSON number.
pub(super) fn number(n: usize) -> Value {
    Value::Number((n as u64).into())
}

/// The pointer as an error line shows it (`(root)` for the whole policy, long tokens cut).
fn pointer_text(p: &str) -> String {
    pointer::shown(p).to_string()
}

fn source_of<'a>(error: &Problem<'_>, sources: &Sources<'a>) -> Option<Source<'a>> {
    if error.in_options {
        sources.options
    } else {
        Some(sources.policy)
    }
}

/// Where `error` is in its source, when that can be told.
fn locate<'a>(error: &Problem<'_>, sources: &Sources<'a>) -> Option<Located<'a>> {
    let source = source_of(error, sources)?;
    let text = source.text;
    let bytes = text.as_bytes();
    let mut read = json::ParseOptions::default();
    read.max_depth = filtervm_compiler::MAX_POLICY_DEPTH;
    let span = match json::parse_with(bytes, &read) {
        // Text that is not JSON: the reader's error offset (the error is about that), unless
        // the error is a span of the stream text form written bare.
        Err(e) => match text_form_span(error.pointer) {
            Some(span) if source.prefix.is_empty() => span,
            _ => {
                let at = e.offset().min(text.len());
                at..next_boundary(text, at)
            }
        },
        Ok(_) => {
            let value = pointer_span(text, source.prefix)?;
            match text_form_span(error.pointer) {
                Some(span) => string_span(text, value, span),
                None => {
                    let full = format!("{}{}", source.prefix, error.pointer);
                    pointer_span(text, &full).or_else(|| {
                        // A pointer past what the text holds (a missing member): its parent.
                        let parent = full.rsplit_once('/').map_or("", |(p, _)| p);
                        pointer_span(text, parent)
                    })?
                }
            }
        }
    };
    let start = floor_boundary(text, span.start.min(text.len()));
    let end = floor_boundary(text, span.end.clamp(start, text.len()));
    let before = text.get(..start)?;
    let line = source.first_line + before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    let column = before.get(line_start..).map_or(0, |l| l.chars().count()) + 1;
    Some(Located {
        source,
        span: start..end,
        line,
        column,
    })
}

/// The byte span of a stream text-form error (`bytes A..B`).
fn text_form_span(p: &str) -> Option<Range<usize>> {
    let (a, b) = p.strip_prefix("bytes ")?.split_once("..")?;
    Some(a.parse().ok()?..b.parse().ok()?)
}

/// A span of a string's contents mapped into the text, where `value` is the string's range in
/// the text: exact when the string holds no escapes (its text is then its contents), else the
/// whole string.
fn string_span(text: &str, value: Range<usize>, span: Range<usize>) -> Range<usize> {
    let raw = text.get(value.clone()).unwrap_or_default();
    let plain = raw.len() >= 2 && !raw.contains('\\');
    if plain && span.end + 2 <= raw.len() {
        value.start + 1 + span.start..value.start + 1 + span.end
    } else {
        value
    }
}

/// The largest char boundary of `text` at or before `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The char boundary just after the character at `i` (or `i` at the end of the text).
fn next_boundary(text: &str, i: usize) -> usize {
    let i = floor_boundary(text, i);
    text.get(i..)
        .and_then(|rest| rest.chars().next())
        .map_or(i, |c| i + c.len_utf8())
}

/// The byte range, in `text` (valid JSON), of the value `pointer` names; `None` when it names
/// nothing. A member named twice is its last occurrence (the value the reader keeps).
pub(super) fn pointer_span(text: &str, pointer: &str) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if !pointer.is_empty() {
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            at = match bytes.get(at)? {
                b'{' => member(text, at, &token)?,
                b'[' => element(bytes, at, token.parse().ok()?)?,
                _ => return None,
            };
        }
    }
    Some(at..value_end(bytes, at)?)
}

/// The start of the last member named `name` of the object at `open`.
fn member(text: &str, open: usize, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = skip_space(bytes, open + 1);
    let mut found = None;
    if bytes.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        let name_end = string_end(bytes, i)?;
        let matches = match json::parse(text.get(i..name_end)?.as_bytes()) {
            Ok(Value::String(s)) => s == name,
            _ => false,
        };
        i = skip_space(bytes, name_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let value = skip_space(bytes, i + 1);
        if matches {
            found = Some(value);
        }
        i = skip_space(bytes, value_end(bytes, value)?);
        match bytes.get(i)? {
            b',' => i = skip_space(bytes, i + 1),
            _ => return found,
        }
    }
}

/// The start of element `index` of the array at `open`.
fn element(bytes: &[u8], open: usize, index: usize) -> Option<usize> {
    let mut i = skip_space(bytes, open + 1);
    if bytes.get(i) == Some(&b']') {
        return None;
    }
    for _ in 0..index {
        i = skip_space(bytes, value_end(bytes, i)?);
        if bytes.get(i) != Some(&b',') {
            return None;
        }
        i = skip_space(bytes, i + 1);
    }
    Some(i)
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The end of the string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    if bytes.get(start) != Some(&b'"') {
        return None;
    }
    let mut i = start + 1;
    loop {
        match bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The end of the value starting at `start` (nested containers scanned with a depth counter,
/// not recursion).
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = start;
            while bytes
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'t>(text: &'t str, pointer: &str) -> Option<&'t str> {
        pointer_span(text, pointer).map(|r| &text[r])
    }

    #[test]
    fn pointers_name_their_value_in_the_text() {
        let text = r#" {"a": [1, {"b~/c": "x\"y"}, [ ]], "d" : {"e": true}, "a/b": null} "#;
        assert_eq!(at(text, ""), Some(&text[1..text.len() - 1]));
        assert_eq!(at(text, "/a/0"), Some("1"));
        assert_eq!(at(text, "/a/1/b~0~1c"), Some(r#""x\"y""#));
        assert_eq!(at(text, "/a/2"), Some("[ ]"));
        assert_eq!(at(text, "/d/e"), Some("true"));
        assert_eq!(at(text, "/a~1b"), Some("null"));
        assert_eq!(at(text, "/a/3"), None);
        assert_eq!(at(text, "/x"), None);
        assert_eq!(at(text, "/d/e/f"), None);
        assert_eq!(at(text, "a"), None);
        // A member named twice: the last one, which the reader keeps.
        assert_eq!(at(r#"{"k": 1, "k": [2]}"#, "/k"), Some("[2]"));
        // An escaped member name is compared decoded.
        assert_eq!(at(r#"{"\u0061": 5}"#, "/a"), Some("5"));
    }

    fn located(text: &str, code: ErrorCode, pointer: &str) -> Option<(String, usize, usize)> {
        let sources = Sources {
            policy: Source::whole("p.json", text),
            options: Some(Source::whole("--options", r#"{"scpe": 1}"#)),
        };
        let error = PolicyError::new(code, pointer, "m");
        let at = locate(&Problem::from(&error), &sources)?;
        Some((at.source.text[at.span].to_owned(), at.line, at.column))
    }

    #[test]
    fn errors_are_located_by_pointer_span_or_offset() {
        let policy = "{\n  \"a\": [{\"prefix\": 5}]\n}";
        let code = ErrorCode::SnsTypeError;
        assert_eq!(
            located(policy, code, "/a/0/prefix"),
            Some(("5".to_owned(), 2, 20))
        );
        // Options errors point into the options.
        assert_eq!(
            located(policy, ErrorCode::InvalidOptions, "/scpe"),
            Some(("1".to_owned(), 1, 10))
        );
        // A missing member: its object.
        assert_eq!(
            located("{\"a\": {}}", code, "/a/b"),
            Some(("{}".to_owned(), 1, 7))
        );
        // Not JSON: where the reader stopped.
        assert_eq!(
            located("{\"a\": [1,]}", code, "/a"),
            Some(("]".to_owned(), 1, 10))
        );
        // The stream text form, bare or as a JSON string.
        let stream = ErrorCode::StreamSyntaxError;
        assert_eq!(
            located("a = x and == 5", stream, "bytes 10..12"),
            Some(("==".to_owned(), 1, 11))
        );
        assert_eq!(
            located("\"a = x and == 5\"", stream, "bytes 10..12"),
            Some(("==".to_owned(), 1, 12))
        );
        assert_eq!(
            located("\"a = \\\"x\\\" and == 5\"", stream, "bytes 12..14"),
            Some(("\"a = \\\"x\\\" and == 5\"".to_owned(), 1, 1))
        );
    }

    #[test]
    fn a_long_line_is_shown_around_the_error() {
        let long = format!("{{\"{}\": [{{\"prefix\": 5}}]}}", "k".repeat(10_000));
        let sources = Sources {
            policy: Source::whole("p.json", &long),
            options: None,
        };
        let pointer = format!("/{}/0/prefix", "k".repeat(10_000));
        let error = PolicyError::new(ErrorCode::SnsTypeError, pointer, "bad");
        let text = render(&[error], &sources, Stream::Stdout);
        assert!(text.lines().all(|l| l.chars().count() < 400), "{text}");
        assert!(text.contains("\"prefix\": 5"), "{text}");
        assert!(text.contains("p.json:1:10018"), "{text}");
        assert!(text.contains("^ /kkk"), "{text}");
    }
}

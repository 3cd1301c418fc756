//! Policy errors: a stable code, a JSON Pointer (or byte span) and a message a person can act on.

use std::fmt;

/// User input quoted in an error message: every message that quotes a key, a value, a number or
/// an option does it through [`excerpt`], which cuts it to [`EXCERPT_CHARS`] characters.
pub use filtervm_vm::excerpt::{EXCERPT_CHARS, excerpt};

/// One thing wrong with a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// A stable code (for example `NOTIFICATION_INVALID_FILTER_POLICY`).
    pub code: &'static str,
    /// A JSON Pointer to the offending part of the policy (`""` is the whole policy), or for the
    /// stream text form a byte span written `bytes A..B`.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl PolicyError {
    /// A new error.
    pub fn new(
        code: &'static str,
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
        code: &'static str,
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
    /// A stable code (`INVALID_MESSAGE`, or a dialect's own).
    pub code: &'static str,
    /// A JSON Pointer into the message.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl MessageError {
    /// The generic code for a message not in the dialect's shape.
    pub const INVALID_MESSAGE: &'static str = "INVALID_MESSAGE";

    /// A message-shape error.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> MessageError {
        MessageError {
            code: MessageError::INVALID_MESSAGE,
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// Policy text that `serde_json` rejected, described for an error message.
///
/// `serde_json` describes a lone surrogate escape (`"\ud800"`: half of a UTF-16 pair, which no
/// Unicode text can hold) as "unexpected end of hex escape", or as a *leading* surrogate when it
/// is a trailing one; this names it as what it is, with the JSON Pointer of the string holding it.
/// Every other error keeps `serde_json`'s description (which gives line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonTextError {
    /// The JSON Pointer of the string holding a lone surrogate (of the object, when the
    /// surrogate is in a member name), else `""`.
    pub pointer: String,
    /// What is wrong: `lone surrogate `\ud800` at line 1 column 9: ...`, or `serde_json`'s
    /// description.
    pub message: String,
}

impl JsonTextError {
    /// Describes `error`, which `serde_json` gave when reading `text`.
    pub fn new(text: &str, error: &serde_json::Error) -> JsonTextError {
        let failed_at = byte_offset(text, error.line(), error.column());
        match json_text::first_lone_surrogate(text) {
            // serde_json stops at the first problem; a lone surrogate before it is that problem.
            Some((at, escape)) if at < failed_at => {
                let line = text.get(..at).map_or(0, |t| t.matches('\n').count()) + 1;
                let line_start = text
                    .get(..at)
                    .and_then(|t| t.rfind('\n'))
                    .map_or(0, |n| n + 1);
                JsonTextError {
                    pointer: json_text::pointer_at(text, at),
                    message: format!(
                        "lone surrogate `{escape}` at line {line} column {}: a `\\u` escape of \
                         half a UTF-16 surrogate pair is not Unicode text",
                        at - line_start + 1
                    ),
                }
            }
            _ => JsonTextError {
                pointer: String::new(),
                message: error.to_string(),
            },
        }
    }
}

/// The byte offset of `line`:`column` (1-based, columns in bytes, as `serde_json` counts them).
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start = match line.checked_sub(2) {
        None => 0,
        Some(newlines_before) => text
            .match_indices('\n')
            .nth(newlines_before)
            .map_or(text.len(), |(n, _)| n + 1),
    };
    line_start + column.saturating_sub(1)
}

/// Scanning JSON text without parsing it: for describing text that did not parse.
mod json_text {
    /// The first `\uXXXX` escape in `text` that is half a surrogate pair: its byte offset and
    /// its text. A backslash only occurs inside strings in JSON, so no tokenizing is needed;
    /// `None` when there is none, or an escape is malformed first.
    pub(super) fn first_lone_surrogate(text: &str) -> Option<(usize, &str)> {
        let bytes = text.as_bytes();
        let unit = |at: usize| -> Option<u32> {
            let hex = text.get(at..at + 4)?;
            u32::from_str_radix(hex, 16).ok()
        };
        let mut i = 0;
        while i < bytes.len() {
            if bytes.get(i) != Some(&b'\\') {
                i += 1;
                continue;
            }
            if bytes.get(i + 1) != Some(&b'u') {
                // `\"`, `\\`, `\n`, ...: skip the escaped character with the backslash.
                i += 2;
                continue;
            }
            let first = unit(i + 2)?;
            let lone = match first {
                0xD800..=0xDBFF => {
                    let pair = bytes.get(i + 6) == Some(&b'\\')
                        && bytes.get(i + 7) == Some(&b'u')
                        && unit(i + 8).is_some_and(|u| (0xDC00..=0xDFFF).contains(&u));
                    if pair {
                        i += 12;
                        continue;
                    }
                    true
                }
                0xDC00..=0xDFFF => true,
                _ => false,
            };
            if lone {
                return Some((i, text.get(i..i + 6)?));
            }
            i += 6;
        }
        None
    }

    /// One open container while scanning.
    enum Frame {
        /// An object: the member being read (`None` before its name is complete).
        Object { member: Option<String> },
        /// An array: the index of the element being read.
        Array { index: usize },
    }

    /// The JSON Pointer of the string at byte `offset` of `text`, which is valid JSON up to that
    /// string; for a member name, the pointer of its object.
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
                        *member = Some(
                            serde_json::from_str(token)
                                .unwrap_or_else(|_| token.trim_matches('"').to_owned()),
                        );
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
        token.replace('~', "~0").replace('/', "~1")
    }

    /// `base` extended by one token.
    pub fn push(base: &str, token: &str) -> String {
        format!("{base}/{}", escape(token))
    }

    /// `base` extended by an array index.
    pub fn index(base: &str, i: usize) -> String {
        format!("{base}/{i}")
    }

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
            assert_eq!(super::index("/x", 3), "/x/3");
        }
    }
}

//! Errors of the JSON reader: a kind, the byte offset where the input went wrong, and a message a
//! person can act on.

use std::fmt;

/// What was wrong with the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The input ended before the value was complete (including an empty input).
    UnexpectedEnd,
    /// A character that cannot start or continue what the grammar expects here.
    UnexpectedCharacter,
    /// Something other than white space after the complete value.
    TrailingCharacters,
    /// Bytes that are not UTF-8 (RFC 8259 §8.1: JSON text is UTF-8).
    InvalidUtf8,
    /// A control character (U+0000 to U+001F) written raw inside a string.
    ControlCharacter,
    /// A backslash followed by anything but `"` `\` `/` `b` `f` `n` `r` `t` or `u` and four hex
    /// digits.
    InvalidEscape,
    /// A `\u` escape of a UTF-16 surrogate that is not half of a pair (rejected by the policy
    /// reader only; see the module documentation).
    LoneSurrogate,
    /// Text starting like a number that does not follow the number grammar (`01`, `1.`, `-`,
    /// `1e`, `.5` is an unexpected character).
    InvalidNumber,
    /// Text starting like `true`, `false` or `null` that is not one of them.
    InvalidLiteral,
    /// Arrays and objects nested deeper than the owned tree's `max_depth`.
    TooDeep,
    /// An object names a member twice, and the options ask for that to be an error.
    DuplicateName,
}

/// The longest member name an error message quotes; longer names are cut (with `…`).
const QUOTED_NAME_MAX: usize = 64;

/// The details a message needs beyond kind and offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Detail {
    /// The character found and what was expected instead.
    Found(Option<char>, &'static str),
    /// The control character found in a string.
    Control(u8),
    /// The escape letter after the backslash (`None` when `\u` lacks its four hex digits).
    Escape(Option<char>),
    /// The surrogate code unit.
    Surrogate(u16),
    /// What the number grammar expected.
    Number(&'static str),
    /// The literal expected.
    Literal(&'static str),
    /// The depth limit.
    Depth(usize),
    /// The duplicated name, cut to [`QUOTED_NAME_MAX`] characters.
    Name(Box<str>),
    /// Invalid UTF-8 inside a string (else elsewhere).
    Utf8 { in_string: bool },
}

/// A JSON input the reader does not accept: [`Error::kind`] says why, [`Error::offset`] where.
///
/// `Display` gives a message such as ``unexpected `]` at byte 17 (expected a value)``,
/// `invalid UTF-8 in a string at byte 40` or ``lone surrogate `\ud800` at byte 9``.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

/// An error's contents, boxed so that a `Result` of the reader stays small on the hot path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    offset: usize,
    detail: Detail,
}

impl Error {
    #[cold]
    pub(crate) fn new(kind: ErrorKind, offset: usize, detail: Detail) -> Error {
        Error(Box::new(Inner {
            kind,
            offset,
            detail,
        }))
    }

    /// A duplicate member name at `offset` (the second occurrence's opening quote).
    pub(crate) fn duplicate(offset: usize, name: &str) -> Error {
        let cut: String = name.chars().take(QUOTED_NAME_MAX).collect();
        let quoted = if cut.len() < name.len() {
            format!("{cut}…")
        } else {
            cut
        };
        Error::new(
            ErrorKind::DuplicateName,
            offset,
            Detail::Name(quoted.into()),
        )
    }

    /// What was wrong.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The byte offset in the input where it went wrong (the input's length when it ended early).
    pub fn offset(&self) -> usize {
        self.0.offset
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.0.offset;
        match (&self.0.kind, &self.0.detail) {
            (ErrorKind::UnexpectedEnd, Detail::Found(_, expected)) => {
                write!(
                    f,
                    "unexpected end of input at byte {at} (expected {expected})"
                )
            }
            (ErrorKind::UnexpectedEnd, _) => write!(f, "unexpected end of input at byte {at}"),
            (ErrorKind::TrailingCharacters, Detail::Found(Some(c), _)) => write!(
                f,
                "unexpected {} after the JSON value at byte {at}",
                Shown(*c)
            ),
            (ErrorKind::TrailingCharacters, _) => {
                write!(f, "unexpected data after the JSON value at byte {at}")
            }
            (_, Detail::Found(found, expected)) => {
                match found {
                    Some(c) => write!(f, "unexpected {} at byte {at}", Shown(*c))?,
                    None => write!(f, "unexpected input at byte {at}")?,
                }
                write!(f, " (expected {expected})")
            }
            (_, Detail::Utf8 { in_string: true }) => {
                write!(f, "invalid UTF-8 in a string at byte {at}")
            }
            (_, Detail::Utf8 { in_string: false }) => write!(f, "invalid UTF-8 at byte {at}"),
            (_, Detail::Control(b)) => write!(
                f,
                "unescaped control character U+{b:04X} in a string at byte {at} (write it as \\u{b:04x})"
            ),
            (_, Detail::Escape(Some(c))) => {
                write!(f, "invalid escape `\\{}` at byte {at}", c.escape_debug())
            }
            (_, Detail::Escape(None)) => write!(
                f,
                "invalid escape at byte {at}: `\\u` must be followed by four hex digits"
            ),
            (_, Detail::Surrogate(unit)) => {
                write!(f, "lone surrogate `\\u{unit:04x}` at byte {at}")
            }
            (_, Detail::Number(expected)) => {
                write!(f, "invalid number at byte {at}: expected {expected}")
            }
            (_, Detail::Literal(literal)) => {
                write!(f, "invalid literal at byte {at} (expected `{literal}`)")
            }
            (_, Detail::Depth(max)) => write!(
                f,
                "arrays and objects nested deeper than {max} levels at byte {at}"
            ),
            (_, Detail::Name(name)) => {
                write!(
                    f,
                    "duplicate member name \"{}\" at byte {at}",
                    name.escape_debug()
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// A character as an error message shows it: printable ones in backticks, others by code point.
struct Shown(char);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.0;
        if c.is_control() || c.is_whitespace() {
            write!(f, "character U+{:04X}", u32::from(c))
        } else {
            write!(f, "`{c}`")
        }
    }
}

//! The text form (spec "Text form"): a `logos` lexer, a parser with byte-span errors, and the
//! canonical printer.
//!
//! ```text
//! filter   = group { "or" group }
//! group    = clause { "and" clause }
//! clause   = name "=" pattern | name "!=" pattern
//!          | name "in" "[" pattern { "," pattern } "]"
//!          | name "exists" | name "missing"
//!          | name ( "<" | "<=" | ">" | ">=" ) number
//! name     = word | string          pattern = word | string
//! word     = 1*( ALPHA / DIGIT / "_" / "-" / "." / "*" / ":" / "/" / "@" )   ; not a keyword
//! string   = JSON string literal
//! ```
//!
//! Keywords (`and`, `or`, `in`, `exists`, `missing`) are lowercase only. A token in a name or
//! pattern position is text even when it looks like a number (`n = 5` is the pattern `"5"`;
//! `n = 1e+3` is the pattern `"1e+3"`); only the operand of `<`, `<=`, `>`, `>=` is a number, and it
//! must be finite. Errors carry `bytes A..B`, the byte span of the offending token; an error with
//! no single offending token (too many groups or clauses, an unterminated string, an empty
//! filter) spans from the start of the construct to the end of the input. Parsing stops at the
//! first error, so it is linear in the input and never reads past the first bound exceeded.
//!
//! The canonical text ([`to_text`], `Display` of [`StreamFilter`]) writes one space around
//! operators and keywords, `in` lists as `[a, b]`, names and patterns bare when they are words
//! (and not keywords) and otherwise as JSON strings, and numbers in the shortest form that reads
//! back to the same binary64 (JavaScript's `Number#toString` digits, exponent without `+`:
//! `1e21`, `5e-324`, `0.1`). Parsing the canonical text gives the same [`StreamFilter`].

use super::ast::{
    CODE, Clause, CmpOp, Cond, LIMIT_CODE, MAX_CLAUSES, MAX_GROUPS, MAX_IN_VALUES, SYNTAX_CODE,
    StreamFilter, check_header, check_pattern, operand,
};
use crate::error::{CompileError, ErrorCode, excerpt};
use filtervm_vm::number::{canonical_number_text, parse_json_number};
use filtervm_vm::pattern::SegmentPattern;
use logos::{Lexer, Logos, Span};
use std::fmt;
use std::sync::Arc;

/// Why a token did not lex. Carries no text, so that a lexed token (a [`Result`] of a
/// fieldless `Tok` and this) is two bytes to move around; the message of a bad string literal is
/// left beside the tokens, in the lexer's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LexError {
    /// A character that starts no token.
    #[default]
    Unexpected,
    /// A string with no closing quote.
    Unterminated,
    /// A string literal that is not a valid JSON string (bad escape, control character); the
    /// reason is in the lexer's slot.
    BadString,
}

/// The text a string literal token leaves beside the token stream (the lexer's extras): its
/// decoded text, or why it is not a valid JSON string. Each string literal lexed overwrites it,
/// and the parser takes it right after taking that token (it looks at most one token ahead, and
/// only a string literal writes here), so it always belongs to the last string token returned.
#[derive(Debug, Default)]
struct Slot(String);

/// The tokens of the text form. Fieldless: a word's or number's text is its source slice, and a
/// string literal's decoded text is in the lexer's [`Slot`].
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(error = LexError)]
#[logos(extras = Slot)]
#[logos(skip r"[ \t\r\n]+")]
enum Tok {
    #[token("and")]
    And,
    #[token("or")]
    Or,
    #[token("in")]
    In,
    #[token("exists")]
    Exists,
    #[token("missing")]
    Missing,
    #[token("=")]
    Eq,
    #[token("!=")]
    Ne,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("[")]
    Open,
    #[token("]")]
    Close,
    #[token(",")]
    Comma,
    /// A word; its text is the source slice.
    #[regex(r"[A-Za-z0-9_\-.*:/@]+", priority = 3)]
    Word,
    /// A JSON number that is not a word (it has `+` in its exponent); its text is the slice.
    #[regex(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?", priority = 2)]
    Number,
    /// A JSON string literal; its decoded text is in the lexer's [`Slot`].
    #[token("\"", string)]
    Str,
}

/// Lexes the rest of a string literal after its opening quote, leaving its decoded text (or why
/// it is invalid) in the lexer's [`Slot`].
fn string(lex: &mut Lexer<'_, Tok>) -> Result<(), LexError> {
    let rest = lex.remainder();
    let bytes = rest.as_bytes();
    let mut i = 0usize;
    loop {
        match bytes.get(i) {
            None => {
                lex.bump(rest.len());
                return Err(LexError::Unterminated);
            }
            Some(b'\\') => i = i.saturating_add(2),
            Some(b'"') => break,
            Some(_) => i = i.saturating_add(1),
        }
    }
    lex.bump(i.saturating_add(1));
    let (text, result) = match filtervm_vm::json::parse(lex.slice().as_bytes()) {
        Ok(filtervm_vm::json::Value::String(s)) => (s, Ok(())),
        Ok(_) => ("not a string".to_owned(), Err(LexError::BadString)),
        Err(e) => (e.to_string(), Err(LexError::BadString)),
    };
    lex.extras.0 = text;
    result
}

const KEYWORDS: [&str; 5] = ["and", "or", "in", "exists", "missing"];

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'*' | b':' | b'/' | b'@')
}

/// Whether `s` can be written bare: a non-empty word that is not a keyword.
pub fn is_bare_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_word_byte) && !KEYWORDS.contains(&s)
}

/// A text-form error: a code, the byte span and a message.
fn error(code: ErrorCode, span: Span, message: impl Into<String>) -> CompileError {
    CompileError::one(code, format!("bytes {}..{}", span.start, span.end), message)
}

struct Parser<'a> {
    src: &'a str,
    lex: Lexer<'a, Tok>,
    peeked: Option<Option<(Tok, Span)>>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Parser<'a> {
        Parser {
            src,
            lex: Tok::lexer(src),
            peeked: None,
        }
    }

    fn end(&self) -> Span {
        self.src.len()..self.src.len()
    }

    /// The next token and its span. Small enough to inline where it is called: the errors are
    /// built out of line, in [`Parser::lex_error`].
    #[inline]
    fn lex_next(&mut self) -> Result<Option<(Tok, Span)>, CompileError> {
        match self.lex.next() {
            None => Ok(None),
            Some(Ok(t)) => Ok(Some((t, self.lex.span()))),
            Some(Err(e)) => Err(self.lex_error(e)),
        }
    }

    /// The error of the token just lexed, which did not lex.
    #[cold]
    #[inline(never)]
    fn lex_error(&self, e: LexError) -> CompileError {
        let span = self.lex.span();
        match e {
            LexError::Unterminated => error(
                SYNTAX_CODE,
                span,
                "unterminated string: a string starts with `\"` and ends at the next unescaped `\"`",
            ),
            LexError::BadString => error(
                SYNTAX_CODE,
                span,
                format!(
                    "invalid string literal (strings use JSON escapes): {}",
                    self.lex.extras.0
                ),
            ),
            LexError::Unexpected => {
                let text = self.src.get(span.clone()).unwrap_or("");
                let hint = if text.bytes().any(|b| !b.is_ascii()) {
                    "; words are ASCII only, so quote text like \"café\" as a JSON string"
                } else {
                    "; words are ASCII letters, digits and _ - . * : / @, other text is quoted \
                     as a JSON string"
                };
                let c = excerpt(text);
                error(
                    SYNTAX_CODE,
                    span,
                    format!("unexpected character `{c}`{hint}"),
                )
            }
        }
    }

    fn next(&mut self) -> Result<Option<(Tok, Span)>, CompileError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lex_next(),
        }
    }

    fn peek(&mut self) -> Result<Option<&(Tok, Span)>, CompileError> {
        if self.peeked.is_none() {
            let t = self.lex_next()?;
            self.peeked = Some(t);
        }
        Ok(self.peeked.as_ref().and_then(Option::as_ref))
    }

    fn slice(&self, span: &Span) -> &'a str {
        self.src.get(span.clone()).unwrap_or("")
    }

    /// A token in a name or pattern position, its text given to `f` where it lies (a word is not
    /// copied first), or an error naming `what`.
    fn text_then<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&str) -> T,
    ) -> Result<(T, Span), CompileError> {
        match self.next()? {
            Some((Tok::Word | Tok::Number, span)) => Ok((f(self.slice(&span)), span)),
            // The string just taken is the last one lexed: its text is in the slot.
            Some((Tok::Str, span)) => Ok((f(&self.lex.extras.0), span)),
            Some((t, span)) if is_keyword(&t) => {
                let k = self.slice(&span);
                Err(error(
                    SYNTAX_CODE,
                    span,
                    format!("expected {what}, found the keyword `{k}`; write it quoted: \"{k}\""),
                ))
            }
            Some((_, span)) => {
                let found = excerpt(self.slice(&span));
                Err(error(
                    SYNTAX_CODE,
                    span,
                    format!("expected {what}, found `{found}`"),
                ))
            }
            None => Err(error(
                SYNTAX_CODE,
                self.end(),
                format!("expected {what}, found the end of the input"),
            )),
        }
    }

    fn pattern(&mut self) -> Result<SegmentPattern, CompileError> {
        let (p, span) = self.text_then("a pattern (a word or a quoted string)", check_pattern)?;
        p.map_err(|(code, message)| error(code, span, message))
    }

    fn filter(&mut self) -> Result<StreamFilter, CompileError> {
        if self.peek()?.is_none() {
            return Err(error(
                CODE,
                0..self.src.len(),
                "the filter is empty; write at least one clause, like `region = eu-*`",
            ));
        }
        let mut groups = Vec::new();
        loop {
            let len = self.src.len();
            let start = self.peek()?.map_or(len, |(_, s)| s.start);
            if groups.len() == MAX_GROUPS {
                return Err(error(
                    LIMIT_CODE,
                    start..self.src.len(),
                    format!("a filter holds at most {MAX_GROUPS} groups"),
                ));
            }
            groups.push(self.group()?);
            match self.next()? {
                None => break,
                Some((Tok::Or, _)) => {}
                Some((_, span)) => {
                    let found = excerpt(self.slice(&span));
                    return Err(error(
                        SYNTAX_CODE,
                        span,
                        format!("expected `and`, `or` or the end of the filter, found `{found}`"),
                    ));
                }
            }
        }
        Ok(StreamFilter { groups })
    }

    fn group(&mut self) -> Result<Vec<Clause>, CompileError> {
        // Room for the most clauses a group holds: one allocation rather than a growth per
        // doubling.
        let mut clauses = Vec::with_capacity(MAX_CLAUSES);
        loop {
            let len = self.src.len();
            let start = self.peek()?.map_or(len, |(_, s)| s.start);
            if clauses.len() == MAX_CLAUSES {
                return Err(error(
                    LIMIT_CODE,
                    start..self.src.len(),
                    format!("a group holds at most {MAX_CLAUSES} clauses of any kind"),
                ));
            }
            clauses.push(self.clause()?);
            if matches!(self.peek()?, Some((Tok::And, _))) {
                self.next()?;
            } else {
                return Ok(clauses);
            }
        }
    }

    fn clause(&mut self) -> Result<Clause, CompileError> {
        let (header, header_span) = self
            .text_then("a header name (a word or a quoted string)", |s| {
                Arc::<str>::from(s)
            })?;
        check_header(&header).map_err(|(code, message)| error(code, header_span, message))?;
        let cond = match self.next()? {
            Some((Tok::Eq, _)) => Cond::Eq(self.pattern()?),
            Some((Tok::Ne, _)) => Cond::Ne(self.pattern()?),
            Some((Tok::Exists, _)) => Cond::Exists,
            Some((Tok::Missing, _)) => Cond::Missing,
            Some((Tok::In, _)) => self.in_list()?,
            Some((Tok::Lt, _)) => Cond::Cmp(CmpOp::Lt, self.number()?),
            Some((Tok::Le, _)) => Cond::Cmp(CmpOp::Le, self.number()?),
            Some((Tok::Gt, _)) => Cond::Cmp(CmpOp::Gt, self.number()?),
            Some((Tok::Ge, _)) => Cond::Cmp(CmpOp::Ge, self.number()?),
            Some((_, span)) => {
                let found = self.slice(&span);
                let suggestion = crate::error::suggestion(found, &super::ast::NAMED_OPERATORS);
                return Err(error(
                    SYNTAX_CODE,
                    span,
                    format!(
                        "expected an operator (=, !=, in, exists, missing, <, <=, >, >=) after \
                         the header, found `{}`{suggestion}",
                        excerpt(found)
                    ),
                ));
            }
            None => {
                return Err(error(
                    SYNTAX_CODE,
                    self.end(),
                    "expected an operator (=, !=, in, exists, missing, <, <=, >, >=) after the \
                     header, found the end of the input",
                ));
            }
        };
        Ok(Clause { header, cond })
    }

    fn in_list(&mut self) -> Result<Cond, CompileError> {
        let open = match self.next()? {
            Some((Tok::Open, span)) => span,
            Some((_, span)) => {
                let found = excerpt(self.slice(&span));
                return Err(error(
                    SYNTAX_CODE,
                    span,
                    format!("expected `[` after `in`, found `{found}`"),
                ));
            }
            None => {
                return Err(error(
                    SYNTAX_CODE,
                    self.end(),
                    "expected `[` after `in`, found the end of the input",
                ));
            }
        };
        if let Some((Tok::Close, close)) = self.peek()? {
            let span = open.start..close.end;
            return Err(error(
                CODE,
                span,
                "an `in` list needs 1 to 32 patterns; an empty list can never match",
            ));
        }
        // Most lists are short: room for 8 entries first, growing (to at most 32) past that.
        let mut patterns = Vec::with_capacity(8);
        loop {
            if patterns.len() == MAX_IN_VALUES {
                let end = self.end();
                let span = self.peek()?.map_or(end, |(_, s)| s.clone());
                return Err(error(
                    LIMIT_CODE,
                    span,
                    format!("an `in` list holds at most {MAX_IN_VALUES} patterns"),
                ));
            }
            patterns.push(self.pattern()?);
            match self.next()? {
                Some((Tok::Comma, _)) => {}
                Some((Tok::Close, _)) => return Ok(Cond::In(patterns)),
                Some((_, span)) => {
                    let found = excerpt(self.slice(&span));
                    return Err(error(
                        SYNTAX_CODE,
                        span,
                        format!("expected `,` or `]` in the `in` list, found `{found}`"),
                    ));
                }
                None => {
                    return Err(error(
                        SYNTAX_CODE,
                        open.start..self.src.len(),
                        "the `in` list is not closed: expected `]`",
                    ));
                }
            }
        }
    }

    fn number(&mut self) -> Result<f64, CompileError> {
        match self.next()? {
            Some((Tok::Word | Tok::Number, span)) => {
                let t = self.slice(&span);
                match parse_json_number(t).and_then(operand) {
                    Some(x) => Ok(x),
                    None if t
                        .trim_start_matches('-')
                        .starts_with(|c: char| c.is_ascii_digit())
                        && t.parse::<f64>().is_ok_and(f64::is_infinite) =>
                    {
                        Err(error(
                            CODE,
                            span,
                            format!("the number `{}` overflows binary64", excerpt(t)),
                        ))
                    }
                    None => Err(error(
                        CODE,
                        span,
                        format!(
                            "expected a JSON number after the comparison, found `{}`",
                            excerpt(t)
                        ),
                    )),
                }
            }
            Some((Tok::Str, span)) => Err(error(
                CODE,
                span,
                "a comparison takes a number, not a string (write `n < 5`, not \
                 `n < \"5\"`)",
            )),
            Some((_, span)) => {
                let found = excerpt(self.slice(&span));
                Err(error(
                    SYNTAX_CODE,
                    span,
                    format!("expected a number after the comparison, found `{found}`"),
                ))
            }
            None => Err(error(
                SYNTAX_CODE,
                self.end(),
                "expected a number after the comparison, found the end of the input",
            )),
        }
    }
}

fn is_keyword(t: &Tok) -> bool {
    matches!(t, Tok::And | Tok::Or | Tok::In | Tok::Exists | Tok::Missing)
}

/// Parses and validates the text form. Errors point at `bytes A..B` of `text`.
pub fn parse_text(text: &str) -> Result<StreamFilter, CompileError> {
    Parser::new(text).filter()
}

/// The canonical text of a filter (the same as its `Display`).
pub fn to_text(filter: &StreamFilter) -> String {
    filter.to_string()
}

fn atom(s: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if is_bare_word(s) {
        f.write_str(s)
    } else {
        write!(f, "{}", filtervm_vm::json::Quoted(s))
    }
}

/// The shortest text that reads back to the same binary64.
pub fn number_text(x: f64) -> String {
    canonical_number_text(x).replacen("e+", "e", 1)
}

/// Writes the canonical text.
pub(super) fn print(filter: &StreamFilter, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for (g, group) in filter.groups.iter().enumerate() {
        if g > 0 {
            f.write_str(" or ")?;
        }
        for (c, clause) in group.iter().enumerate() {
            if c > 0 {
                f.write_str(" and ")?;
            }
            atom(&clause.header, f)?;
            write!(f, " {}", clause.cond.op_name())?;
            match &clause.cond {
                Cond::Eq(p) | Cond::Ne(p) => {
                    f.write_str(" ")?;
                    atom(p.source(), f)?;
                }
                Cond::In(ps) => {
                    f.write_str(" [")?;
                    for (i, p) in ps.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        atom(p.source(), f)?;
                    }
                    f.write_str("]")?;
                }
                Cond::Exists | Cond::Missing => {}
                Cond::Cmp(_, n) => write!(f, " {}", number_text(*n))?,
            }
        }
    }
    Ok(())
}

impl fmt::Display for StreamFilter {
    /// The canonical text form (see [`super::text`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        print(self, f)
    }
}

#[cfg(test)]
mod tests;

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

use super::{
    CODE, Clause, CmpOp, Cond, LIMIT_CODE, MAX_CLAUSES, MAX_GROUPS, MAX_IN_VALUES, SYNTAX_CODE,
    StreamFilter, check_header, check_pattern, operand,
};
use crate::error::{CompileError, ErrorCode, excerpt};
use filtervm_vm::number::{canonical_number_text, parse_json_number};
use filtervm_vm::pattern::SegmentPattern;
use logos::{Lexer, Logos, Span};
use std::fmt;

/// Why a token did not lex.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LexError {
    /// A character that starts no token.
    #[default]
    Unexpected,
    /// A string with no closing quote.
    Unterminated,
    /// A string literal that is not a valid JSON string (bad escape, control character).
    BadString(String),
}

/// The tokens of the text form.
#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(error = LexError)]
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
    /// A JSON string literal, decoded.
    #[token("\"", string)]
    Str(String),
}

/// Lexes the rest of a string literal after its opening quote.
fn string(lex: &mut Lexer<'_, Tok>) -> Result<String, LexError> {
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
    match filtervm_vm::json::parse(lex.slice().as_bytes()) {
        Ok(filtervm_vm::json::Value::String(s)) => Ok(s),
        Ok(_) => Err(LexError::BadString("not a string".to_owned())),
        Err(e) => Err(LexError::BadString(e.to_string())),
    }
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

    fn lex_next(&mut self) -> Result<Option<(Tok, Span)>, CompileError> {
        let Some(tok) = self.lex.next() else {
            return Ok(None);
        };
        let span = self.lex.span();
        match tok {
            Ok(t) => Ok(Some((t, span))),
            Err(LexError::Unterminated) => Err(error(
                SYNTAX_CODE,
                span,
                "unterminated string: a string starts with `\"` and ends at the next unescaped `\"`",
            )),
            Err(LexError::BadString(e)) => Err(error(
                SYNTAX_CODE,
                span,
                format!("invalid string literal (strings use JSON escapes): {e}"),
            )),
            Err(LexError::Unexpected) => {
                let c = excerpt(self.src.get(span.clone()).unwrap_or(""));
                let hint = if self
                    .src
                    .get(span.clone())
                    .unwrap_or("")
                    .bytes()
                    .any(|b| !b.is_ascii())
                {
                    "; words are ASCII only, so quote text like \"café\" as a JSON string"
                } else {
                    "; words are ASCII letters, digits and _ - . * : / @, other text is quoted \
                     as a JSON string"
                };
                Err(error(
                    SYNTAX_CODE,
                    span,
                    format!("unexpected character `{c}`{hint}"),
                ))
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

    /// A token in a name or pattern position as text, or an error naming `what`.
    fn text(&mut self, what: &str) -> Result<(String, Span), CompileError> {
        match self.next()? {
            Some((Tok::Word | Tok::Number, span)) => Ok((self.slice(&span).to_owned(), span)),
            Some((Tok::Str(s), span)) => Ok((s, span)),
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
        let (p, span) = self.text("a pattern (a word or a quoted string)")?;
        check_pattern(&p).map_err(|(code, message)| error(code, span, message))
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
        let mut clauses = Vec::new();
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
        let (header, header_span) = self.text("a header name (a word or a quoted string)")?;
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
                let suggestion = crate::error::suggestion(found, &super::NAMED_OPERATORS);
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
        let mut patterns = Vec::new();
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
            Some((Tok::Str(_), span)) => Err(error(
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
        f.write_str(&filtervm_vm::json::Value::String(s.to_owned()).to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::stream::{PATTERN_CODE, json};

    fn ok(text: &str) -> StreamFilter {
        match parse_text(text) {
            Ok(f) => f,
            Err(e) => panic!("{text:?} rejected: {e}"),
        }
    }

    fn err(text: &str) -> (ErrorCode, String) {
        match parse_text(text) {
            Ok(f) => panic!("{text:?} accepted: {f:?}"),
            Err(e) => match e.errors.first() {
                Some(pe) => (pe.code, pe.pointer.clone()),
                None => panic!("no error"),
            },
        }
    }

    fn pat(s: &str) -> SegmentPattern {
        match SegmentPattern::compile(s) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn spec_example_is_two_groups() {
        let f = ok("region = eu-* and subject = orders.*.created or priority >= 5");
        assert_eq!(f.groups.len(), 2);
        assert_eq!(f.groups.first().map(Vec::len), Some(2));
        assert_eq!(
            f.to_string(),
            "region = eu-* and subject = orders.*.created or priority >= 5"
        );
    }

    #[test]
    fn same_filter_as_json_form() {
        let text = ok(
            r#"a = x and "b c" != "" or n in [p.*, "in", q] and h exists or k missing and z < -2.5"#,
        );
        let json = match json::parse(&(&serde_json::json!({"groups": [
            [{"op": "=", "header": "a", "values": ["x"]}, {"op": "!=", "header": "b c", "values": [""]}],
            [{"op": "in", "header": "n", "values": ["p.*", "in", "q"]}, {"op": "exists", "header": "h", "values": []}],
            [{"op": "missing", "header": "k"}, {"op": "<", "header": "z", "values": [-2.5]}]
        ]})).into()) {
            Ok(f) => f,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(text, json);
        assert_eq!(
            text.to_string(),
            r#"a = x and "b c" != "" or n in [p.*, "in", q] and h exists or k missing and z < -2.5"#
        );
    }

    #[test]
    fn tokens_that_look_like_numbers_are_patterns() {
        let f = ok("n = 5 and m = 1e+3 and k = -0");
        let g = f.groups.first().cloned().unwrap_or_default();
        let pats: Vec<String> = g
            .iter()
            .map(|c| match &c.cond {
                Cond::Eq(p) => p.source().to_owned(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(pats, ["5", "1e+3", "-0"]);
        assert_eq!(f.to_string(), r#"n = 5 and m = "1e+3" and k = -0"#);
    }

    #[test]
    fn keywords_lowercase_only() {
        let f = ok("AND = OR and IN in [IN]");
        assert_eq!(f.to_string(), "AND = OR and IN in [IN]");
        assert_eq!(err("and = x").1, "bytes 0..3");
        assert_eq!(err("x = or").1, "bytes 4..6");
        let f = ok(r#""and" = "or""#);
        assert_eq!(f.to_string(), r#""and" = "or""#);
    }

    #[test]
    fn quoting_never_makes_star_literal() {
        assert_eq!(ok(r#"h = "eu-*""#), ok("h = eu-*"));
        assert_eq!(
            err(r#"h = "a*b*""#),
            (PATTERN_CODE, "bytes 4..10".to_owned())
        );
    }

    #[test]
    fn numbers_read_and_print_shortest() {
        let cases = [
            ("n < 1e21", "n < 1e21"),
            ("n < 1e+21", "n < 1e21"),
            ("n < 1000000000000000000000", "n < 1e21"),
            ("n < 5e-324", "n < 5e-324"),
            ("n < -0", "n < 0"),
            ("n < 0.10", "n < 0.1"),
            ("n < 1E3", "n < 1000"),
            ("n <= 9007199254740993", "n <= 9007199254740992"),
        ];
        for (input, canon) in cases {
            assert_eq!(ok(input).to_string(), canon, "{input}");
        }
        assert_eq!(err("n < 1e400"), (CODE, "bytes 4..9".to_owned()));
        assert_eq!(err("n < -1e+400"), (CODE, "bytes 4..11".to_owned()));
        assert_eq!(err("n < \"5\""), (CODE, "bytes 4..7".to_owned()));
        assert_eq!(err("n < abc"), (CODE, "bytes 4..7".to_owned()));
        assert_eq!(err("n < 05"), (CODE, "bytes 4..6".to_owned()));
        assert_eq!(err("n < +5").0, SYNTAX_CODE);
    }

    #[test]
    fn error_spans() {
        assert_eq!(err(""), (CODE, "bytes 0..0".to_owned()));
        assert_eq!(err("  "), (CODE, "bytes 0..2".to_owned()));
        assert_eq!(err("h"), (SYNTAX_CODE, "bytes 1..1".to_owned()));
        assert_eq!(err("h == x"), (SYNTAX_CODE, "bytes 3..4".to_owned()));
        assert_eq!(err("h = café"), (SYNTAX_CODE, "bytes 7..9".to_owned()));
        assert_eq!(err("h = \"abc"), (SYNTAX_CODE, "bytes 4..8".to_owned()));
        assert_eq!(
            err("h = \"a\\qb\""),
            (SYNTAX_CODE, "bytes 4..10".to_owned())
        );
        assert_eq!(
            err("h = \"a\u{1}\""),
            (SYNTAX_CODE, "bytes 4..8".to_owned())
        );
        assert_eq!(err("\"\" exists"), (CODE, "bytes 0..2".to_owned()));
        assert_eq!(err("h in []"), (CODE, "bytes 5..7".to_owned()));
        assert_eq!(err("h in [a"), (SYNTAX_CODE, "bytes 5..7".to_owned()));
        assert_eq!(err("h in [a b]"), (SYNTAX_CODE, "bytes 8..9".to_owned()));
        assert_eq!(err("h in a"), (SYNTAX_CODE, "bytes 5..6".to_owned()));
        assert_eq!(err("h exists x"), (SYNTAX_CODE, "bytes 9..10".to_owned()));
        assert_eq!(
            err("h exists and"),
            (SYNTAX_CODE, "bytes 12..12".to_owned())
        );
        assert_eq!(err("h exists or"), (SYNTAX_CODE, "bytes 11..11".to_owned()));
        assert_eq!(err("h = a**"), (PATTERN_CODE, "bytes 4..7".to_owned()));
        let long = format!("h = {}", "a".repeat(257));
        assert_eq!(err(&long), (LIMIT_CODE, "bytes 4..261".to_owned()));
        assert!(parse_text(&format!("h = {}", "a".repeat(256))).is_ok());
        assert!(parse_text(&format!("h = \"{}\"", "\u{e9}".repeat(128))).is_ok());
        assert_eq!(
            err(&format!("h = \"{}\"", "\u{20ac}".repeat(100))).0,
            LIMIT_CODE
        );
    }

    #[test]
    fn s14_bounds_in_text() {
        let groups: Vec<String> = (0..9).map(|i| format!("g = {i}")).collect();
        let text = groups.join(" or ");
        let start = text.find("g = 8").unwrap_or(0);
        assert_eq!(
            err(&text),
            (LIMIT_CODE, format!("bytes {start}..{}", text.len()))
        );
        assert!(parse_text(&groups[..8].join(" or ")).is_ok());
        let clauses: Vec<String> = (0..9).map(|i| format!("h{i} exists")).collect();
        let text = format!("{} or x exists", clauses.join(" and "));
        let start = text.find("h8").unwrap_or(0);
        assert_eq!(
            err(&text),
            (LIMIT_CODE, format!("bytes {start}..{}", text.len()))
        );
        let values: Vec<String> = (0..33).map(|i| format!("v{i}")).collect();
        let text = format!("k in [{}]", values.join(", "));
        let start = text.find("v32").unwrap_or(0);
        assert_eq!(
            err(&text),
            (LIMIT_CODE, format!("bytes {start}..{}", start + 3))
        );
        let dup = format!("k in [{}]", vec!["a"; 32].join(","));
        assert!(
            parse_text(&dup).is_ok(),
            "S14: duplicates count but 32 is fine"
        );
    }

    #[test]
    fn whitespace_is_ascii_only() {
        assert_eq!(ok("\th\r\n=\nx "), ok("h = x"));
        assert_eq!(err("h\u{a0}= x").0, SYNTAX_CODE);
        assert_eq!(err("h\u{c}= x").0, SYNTAX_CODE);
    }

    #[test]
    fn strings_use_json_escapes() {
        let f = ok(r#""a\"b" = "\u00e9\n\\" and "\ud83d\ude00" exists"#);
        assert_eq!(
            f.groups
                .first()
                .and_then(|g| g.first())
                .map(|c| c.header.clone()),
            Some("a\"b".to_owned())
        );
        assert_eq!(f.to_string(), "\"a\\\"b\" = \"é\\n\\\\\" and \"😀\" exists");
        assert_eq!(err(r#""\ud800" exists"#).0, SYNTAX_CODE);
    }

    #[test]
    fn pattern_positions_accept_all_word_chars() {
        let f = ok("a_b-c.d*:e/f@g = x:y/z@w.*");
        assert_eq!(f.to_string(), "a_b-c.d*:e/f@g = x:y/z@w.*");
        let cond = f
            .groups
            .first()
            .and_then(|g| g.first())
            .map(|c| c.cond.clone());
        assert_eq!(cond, Some(Cond::Eq(pat("x:y/z@w.*"))));
    }

    // ---- property test: print → parse gives the same filter, printing is stable ----

    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % (n as u64)).unwrap_or(0)
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items.get(self.below(items.len())).copied().unwrap_or("")
        }
    }

    const SPECIAL: &[&str] = &[
        "and",
        "or",
        "in",
        "exists",
        "missing",
        "AND",
        "OR",
        "IN",
        "Exists",
        "",
        " ",
        "café",
        "\u{3002}",
        "a b",
        "x\"y",
        "\\",
        "\n",
        "\t",
        "\u{1}",
        "\u{7f}",
        "5",
        "-0",
        "1e21",
        "1e+3",
        "5e-324",
        "region",
        "a.b",
        "orders.**",
        "eu-*",
        "*",
        "**",
        "😀",
        "=",
        "!=",
        "[",
        "]",
        ",",
        "<=",
        "a,b",
        "\u{ffff}",
        "null",
    ];
    const CHARS: &[&str] = &[
        "a", "Z", "0", "9", "_", "-", ".", "*", ":", "/", "@", " ", "é", "€", "\"", "\\", "\u{0}",
        "\u{1f}", ",", "[", "]", "=", "!", "<", ">", "+", "😀", "\u{ff0e}",
    ];

    fn random_text(rng: &mut XorShift) -> String {
        if rng.below(3) == 0 {
            return rng.pick(SPECIAL).to_owned();
        }
        let len = rng.below(12);
        (0..len).map(|_| rng.pick(CHARS)).collect()
    }

    fn random_header(rng: &mut XorShift) -> String {
        loop {
            let h = random_text(rng);
            if !h.is_empty() {
                return h;
            }
        }
    }

    fn random_pattern(rng: &mut XorShift) -> SegmentPattern {
        loop {
            if let Ok(p) = SegmentPattern::compile(&random_text(rng)) {
                return p;
            }
        }
    }

    fn random_number(rng: &mut XorShift) -> f64 {
        let fixed = [
            1e21,
            -0.0,
            0.0,
            5e-324,
            -5e-324,
            0.1,
            -1.5,
            1e-7,
            123456789012345680000.0,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            9007199254740993.0,
            1e300,
            2.5e-8,
        ];
        if rng.below(2) == 0 {
            let x = fixed.get(rng.below(fixed.len())).copied().unwrap_or(1.0);
            return operand(x).unwrap_or(1.0);
        }
        loop {
            let x = f64::from_bits(rng.next());
            if let Some(x) = operand(x) {
                return x;
            }
        }
    }

    fn random_filter(rng: &mut XorShift) -> StreamFilter {
        let groups = (0..1 + rng.below(MAX_GROUPS))
            .map(|_| {
                (0..1 + rng.below(MAX_CLAUSES))
                    .map(|_| {
                        let header = random_header(rng);
                        let cond = match rng.below(9) {
                            0 => Cond::Eq(random_pattern(rng)),
                            1 => Cond::Ne(random_pattern(rng)),
                            2 => Cond::In(
                                (0..1 + rng.below(MAX_IN_VALUES))
                                    .map(|_| random_pattern(rng))
                                    .collect(),
                            ),
                            3 => Cond::Exists,
                            4 => Cond::Missing,
                            5 => Cond::Cmp(CmpOp::Lt, random_number(rng)),
                            6 => Cond::Cmp(CmpOp::Le, random_number(rng)),
                            7 => Cond::Cmp(CmpOp::Gt, random_number(rng)),
                            _ => Cond::Cmp(CmpOp::Ge, random_number(rng)),
                        };
                        Clause { header, cond }
                    })
                    .collect()
            })
            .collect();
        StreamFilter { groups }
    }

    fn bits(f: &StreamFilter) -> Vec<u64> {
        f.groups
            .iter()
            .flatten()
            .filter_map(|c| match c.cond {
                Cond::Cmp(_, n) => Some(n.to_bits()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn arbitrary_text_never_panics_and_accepted_text_round_trips() {
        const PIECES: &[&str] = &[
            "a", "h", "*", ".", "**", " ", "\t", "\n", "=", "!=", "!", "<", "<=", ">", ">=", "[",
            "]", ",", "\"", "\\", "\\u", "d83d", "and", "or", "in", "exists", "missing", "5", "-",
            "e", "+", "1e400", "é", "\u{0}", "😀", "\u{a0}",
        ];
        let mut rng = XorShift(0x0123_4567_89AB_CDEF);
        for _ in 0..20_000 {
            let len = rng.below(16);
            let text: String = (0..len).map(|_| rng.pick(PIECES)).collect();
            match parse_text(&text) {
                Ok(f) => {
                    let printed = f.to_string();
                    assert_eq!(
                        parse_text(&printed).ok(),
                        Some(f),
                        "{text:?} -> {printed:?}"
                    );
                }
                Err(e) => {
                    let pe = e.errors.first().cloned();
                    let at = pe.map(|p| p.pointer).unwrap_or_default();
                    let (a, b) = at
                        .strip_prefix("bytes ")
                        .and_then(|r| r.split_once(".."))
                        .and_then(|(a, b)| {
                            Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?))
                        })
                        .unwrap_or((usize::MAX, 0));
                    assert!(a <= b && b <= text.len(), "{text:?}: bad span {at}");
                }
            }
        }
    }

    #[test]
    fn property_print_parse_round_trip() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for i in 0..1500 {
            let f = random_filter(&mut rng);
            let printed = f.to_string();
            let back = match parse_text(&printed) {
                Ok(b) => b,
                Err(e) => panic!("case {i}: {printed:?} did not parse: {e}"),
            };
            assert_eq!(back, f, "case {i}: {printed:?}");
            assert_eq!(bits(&back), bits(&f), "case {i}: numbers keep their bits");
            assert_eq!(back.to_string(), printed, "case {i}: printing is stable");
            // The JSON form reads back to the same filter too.
            let via_json = match json::parse(&f.to_json()) {
                Ok(j) => j,
                Err(e) => panic!("case {i}: JSON form rejected: {e}"),
            };
            assert_eq!(via_json, f, "case {i}");
        }
    }
}

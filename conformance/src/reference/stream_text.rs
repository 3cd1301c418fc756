//! The stream dialect's text form (`docs/dialects/stream-filters.md`, "Text form"), read the plain
//! way into the JSON form: a hand-written scanner and a recursive-descent reader, sharing nothing
//! with the compiler's `logos` lexer and parser.
//!
//! ```text
//! filter   = group { "or" group }
//! group    = clause { "and" clause }
//! clause   = name "=" pattern | name "!=" pattern
//!          | name "in" "[" pattern { "," pattern } "]"
//!          | name "exists" | name "missing"
//!          | name ( "<" | "<=" | ">" | ">=" ) number
//! ```
//!
//! Tokens are read one at a time, left to right, and reading stops at the first error, which is
//! reported with the byte span of its token (`bytes A..B`). A token is the longest text that is
//! one of: a word (`[A-Za-z0-9_\-.*:/@]+`; `and`, `or`, `in`, `exists` and `missing` are keywords),
//! a JSON number (only ever longer than a word when its exponent has a `+`, as in `1e+3`), a JSON
//! string literal, or `=`, `!=`, `<`, `<=`, `>`, `>=`, `[`, `]`, `,`. A word or number in a header
//! or pattern position is text (`n = 5` is the pattern `"5"`); only the operand of a comparison is
//! a number. Patterns, header names and the bounds are checked as they are read, with the rules
//! the JSON form uses (`super::stream_rules`).

use super::Rejection;
use super::json::{self, Map, Number, Value};
use super::stream_rules::{
    INVALID, LIMIT, MAX_CLAUSES, MAX_GROUPS, MAX_IN_ENTRIES, SYNTAX, check_header, check_pattern,
};

/// A token: what it is and its byte span.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A word or a JSON number, as written.
    Text(String),
    /// A keyword (`and`, `or`, `in`, `exists`, `missing`).
    Keyword(&'static str),
    /// A JSON string literal, decoded.
    Quoted(String),
    /// An operator or punctuation: `=`, `!=`, `<`, `<=`, `>`, `>=`, `[`, `]`, `,`.
    Symbol(&'static str),
}

const KEYWORDS: [&str; 5] = ["and", "or", "in", "exists", "missing"];

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*' | ':' | '/' | '@')
}

/// The length in bytes of the longest JSON number at the start of `s` (0 when none).
fn number_prefix(s: &str) -> usize {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = 0;
    if b.first() == Some(&b'-') {
        i = 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i),
        _ => return 0,
    }
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(i + 1);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            i = digits(j);
        }
    }
    i
}

fn syntax(start: usize, end: usize, message: impl Into<String>) -> Rejection {
    Rejection::new(SYNTAX, format!("bytes {start}..{end}"), message)
}

fn rejection(code: &'static str, start: usize, end: usize, message: String) -> Rejection {
    Rejection::new(code, format!("bytes {start}..{end}"), message)
}

/// Reads tokens one at a time.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
    peeked: Option<Option<(Token, usize, usize)>>,
}

impl<'a> Scanner<'a> {
    fn scan(&mut self) -> Result<Option<(Token, usize, usize)>, Rejection> {
        let rest = self.text.get(self.at..).unwrap_or("");
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        let start = self.at + (rest.len() - trimmed.len());
        self.at = start;
        let Some(c) = trimmed.chars().next() else {
            return Ok(None);
        };
        let (token, len) = if c == '"' {
            // To the next quote not escaped by a backslash.
            let b = trimmed.as_bytes();
            let mut i = 1;
            loop {
                match b.get(i) {
                    None => {
                        return Err(syntax(
                            start,
                            self.text.len(),
                            "unterminated string: a string ends at the next unescaped `\"`",
                        ));
                    }
                    Some(b'\\') => i += 2,
                    Some(b'"') => break,
                    Some(_) => i += 1,
                }
            }
            let literal = trimmed.get(..=i).unwrap_or("");
            match json::parse(literal) {
                Ok(Value::String(s)) => (Token::Quoted(s), i + 1),
                _ => {
                    return Err(syntax(
                        start,
                        start + i + 1,
                        "invalid string literal: strings are JSON strings",
                    ));
                }
            }
        } else if is_word_char(c) {
            let word = trimmed
                .char_indices()
                .find(|(_, c)| !is_word_char(*c))
                .map_or(trimmed.len(), |(i, _)| i);
            let number = number_prefix(trimmed);
            let len = word.max(number);
            let text = trimmed.get(..len).unwrap_or("");
            match KEYWORDS.iter().find(|k| **k == text) {
                Some(k) if word >= number => (Token::Keyword(k), len),
                _ => (Token::Text(text.to_owned()), len),
            }
        } else {
            let symbol = ["!=", "<=", ">=", "=", "<", ">", "[", "]", ","]
                .into_iter()
                .find(|s| trimmed.starts_with(s));
            match symbol {
                Some(s) => (Token::Symbol(s), s.len()),
                None => {
                    return Err(syntax(
                        start,
                        start + c.len_utf8(),
                        format!(
                            "unexpected character `{c}`: other text is quoted as a JSON string"
                        ),
                    ));
                }
            }
        };
        self.at = start + len;
        Ok(Some((token, start, start + len)))
    }

    fn next(&mut self) -> Result<Option<(Token, usize, usize)>, Rejection> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.scan(),
        }
    }

    fn peek(&mut self) -> Result<Option<&(Token, usize, usize)>, Rejection> {
        if self.peeked.is_none() {
            let t = self.scan()?;
            self.peeked = Some(t);
        }
        Ok(self.peeked.as_ref().and_then(Option::as_ref))
    }

    /// Where the next token starts (or the end of the text).
    fn next_start(&mut self) -> Result<usize, Rejection> {
        let end = self.text.len();
        Ok(self.peek()?.map_or(end, |(_, s, _)| *s))
    }
}

/// Reads text-form `text` into the JSON form (`{"groups": [[{"op", "header", "values"}]]}`), or
/// the first error.
pub fn parse(text: &str) -> Result<Value, Rejection> {
    let mut scanner = Scanner {
        text,
        at: 0,
        peeked: None,
    };
    if scanner.peek()?.is_none() {
        // S12.
        return Err(rejection(
            INVALID,
            0,
            text.len(),
            "the filter is empty (S12)".to_owned(),
        ));
    }
    let mut groups = Vec::new();
    loop {
        if groups.len() == MAX_GROUPS {
            let start = scanner.next_start()?;
            return Err(rejection(
                LIMIT,
                start,
                text.len(),
                format!("a filter holds at most {MAX_GROUPS} groups"),
            ));
        }
        groups.push(group(&mut scanner)?);
        match scanner.next()? {
            None => break,
            Some((Token::Keyword("or"), _, _)) => {}
            Some((_, start, end)) => {
                return Err(syntax(
                    start,
                    end,
                    "expected `and`, `or` or the end of the filter",
                ));
            }
        }
    }
    let mut filter = Map::new();
    filter.insert("groups".to_owned(), Value::Array(groups));
    Ok(Value::Object(filter))
}

fn group(scanner: &mut Scanner<'_>) -> Result<Value, Rejection> {
    let mut clauses = Vec::new();
    loop {
        if clauses.len() == MAX_CLAUSES {
            let start = scanner.next_start()?;
            return Err(rejection(
                LIMIT,
                start,
                scanner.text.len(),
                format!("a group holds at most {MAX_CLAUSES} clauses"),
            ));
        }
        clauses.push(clause(scanner)?);
        if matches!(scanner.peek()?, Some((Token::Keyword("and"), _, _))) {
            scanner.next()?;
        } else {
            return Ok(Value::Array(clauses));
        }
    }
}

/// A header name or a pattern: a word, a number written as text, or a string.
fn text_token(scanner: &mut Scanner<'_>, what: &str) -> Result<(String, usize, usize), Rejection> {
    match scanner.next()? {
        Some((Token::Text(s) | Token::Quoted(s), start, end)) => Ok((s, start, end)),
        Some((Token::Keyword(k), start, end)) => Err(syntax(
            start,
            end,
            format!("expected {what}, found the keyword `{k}` (quote it)"),
        )),
        Some((_, start, end)) => Err(syntax(start, end, format!("expected {what}"))),
        None => {
            let end = scanner.text.len();
            Err(syntax(end, end, format!("expected {what}, found the end")))
        }
    }
}

fn pattern(scanner: &mut Scanner<'_>) -> Result<Value, Rejection> {
    let (p, start, end) = text_token(scanner, "a pattern")?;
    check_pattern(&p).map_err(|(code, message)| rejection(code, start, end, message))?;
    Ok(Value::String(p))
}

fn clause(scanner: &mut Scanner<'_>) -> Result<Value, Rejection> {
    let (header, start, end) = text_token(scanner, "a header name")?;
    check_header(&header).map_err(|(code, message)| rejection(code, start, end, message))?;
    let (op, values) = match scanner.next()? {
        Some((Token::Symbol(op @ ("=" | "!=")), _, _)) => (op, Some(vec![pattern(scanner)?])),
        Some((Token::Keyword(op @ ("exists" | "missing")), _, _)) => (op, None),
        Some((Token::Keyword("in"), _, _)) => ("in", Some(in_list(scanner)?)),
        Some((Token::Symbol(op @ ("<" | "<=" | ">" | ">=")), _, _)) => {
            (op, Some(vec![number(scanner)?]))
        }
        Some((_, start, end)) => {
            return Err(syntax(start, end, "expected an operator after the header"));
        }
        None => {
            let end = scanner.text.len();
            return Err(syntax(end, end, "expected an operator, found the end"));
        }
    };
    let mut clause = Map::new();
    clause.insert("op".to_owned(), Value::String(op.to_owned()));
    clause.insert("header".to_owned(), Value::String(header));
    if let Some(values) = values {
        clause.insert("values".to_owned(), Value::Array(values));
    }
    Ok(Value::Object(clause))
}

fn in_list(scanner: &mut Scanner<'_>) -> Result<Vec<Value>, Rejection> {
    let open = match scanner.next()? {
        Some((Token::Symbol("["), start, _)) => start,
        Some((_, start, end)) => return Err(syntax(start, end, "expected `[` after `in`")),
        None => {
            let end = scanner.text.len();
            return Err(syntax(end, end, "expected `[` after `in`, found the end"));
        }
    };
    if let Some(&(Token::Symbol("]"), _, end)) = scanner.peek()? {
        // S11.
        return Err(rejection(
            INVALID,
            open,
            end,
            "an `in` list needs 1 to 32 patterns (S11)".to_owned(),
        ));
    }
    let mut patterns = Vec::new();
    loop {
        if patterns.len() == MAX_IN_ENTRIES {
            let end = scanner.text.len();
            let (start, stop) = scanner.peek()?.map_or((end, end), |(_, s, e)| (*s, *e));
            return Err(rejection(
                LIMIT,
                start,
                stop,
                format!("an `in` list holds at most {MAX_IN_ENTRIES} patterns"),
            ));
        }
        patterns.push(pattern(scanner)?);
        match scanner.next()? {
            Some((Token::Symbol(","), _, _)) => {}
            Some((Token::Symbol("]"), _, _)) => return Ok(patterns),
            Some((_, start, end)) => {
                return Err(syntax(start, end, "expected `,` or `]` in the `in` list"));
            }
            None => {
                return Err(syntax(
                    open,
                    scanner.text.len(),
                    "the `in` list is not closed with `]`",
                ));
            }
        }
    }
}

/// The operand of `<`, `<=`, `>`, `>=`: a JSON number, finite as a binary64 (S9, S10).
fn number(scanner: &mut Scanner<'_>) -> Result<Value, Rejection> {
    match scanner.next()? {
        Some((Token::Text(t), start, end)) => match Number::from_text(&t) {
            Some(n) if n.as_str().parse::<f64>().is_ok_and(f64::is_finite) => Ok(Value::Number(n)),
            Some(_) => Err(rejection(
                INVALID,
                start,
                end,
                format!("the number `{t}` is not finite as a binary64 (S9)"),
            )),
            None => Err(rejection(
                INVALID,
                start,
                end,
                format!("a comparison takes a JSON number, not `{t}` (S10)"),
            )),
        },
        Some((Token::Quoted(_), start, end)) => Err(rejection(
            INVALID,
            start,
            end,
            "a comparison takes a number, not a string (S10)".to_owned(),
        )),
        Some((_, start, end)) => Err(syntax(start, end, "expected a number after the comparison")),
        None => {
            let end = scanner.text.len();
            Err(syntax(end, end, "expected a number, found the end"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(text: &str) -> String {
        match parse(text) {
            Ok(v) => v.to_string(),
            Err(e) => format!("{} {}", e.code, e.pointer),
        }
    }

    #[test]
    fn text_form_reads_to_the_json_form() {
        assert_eq!(
            reads("region = eu-* and subject = orders.*.created or priority >= 5"),
            r#"{"groups":[[{"op":"=","header":"region","values":["eu-*"]},{"op":"=","header":"subject","values":["orders.*.created"]}],[{"op":">=","header":"priority","values":[5]}]]}"#
        );
        assert_eq!(
            reads(r#""a b" in [x, "y", 5] and n = 1e+3 and m < 1e+3"#),
            r#"{"groups":[[{"op":"in","header":"a b","values":["x","y","5"]},{"op":"=","header":"n","values":["1e+3"]},{"op":"<","header":"m","values":[1e+3]}]]}"#
        );
        assert_eq!(
            reads("AND exists and x missing"),
            r#"{"groups":[[{"op":"exists","header":"AND"},{"op":"missing","header":"x"}]]}"#
        );
    }

    #[test]
    fn errors_name_their_code_and_span() {
        assert_eq!(reads(""), "STREAM_INVALID_FILTER bytes 0..0");
        assert_eq!(reads("a ="), "STREAM_SYNTAX_ERROR bytes 3..3");
        assert_eq!(reads("a = **x"), "STREAM_INVALID_PATTERN bytes 4..7");
        assert_eq!(reads("h in []"), "STREAM_INVALID_FILTER bytes 5..7");
        assert_eq!(reads("n < 1e400"), "STREAM_INVALID_FILTER bytes 4..9");
        assert_eq!(reads("n < \"5\""), "STREAM_INVALID_FILTER bytes 4..7");
        assert_eq!(reads("café = x"), "STREAM_SYNTAX_ERROR bytes 3..5");
        assert_eq!(reads("a = \"x"), "STREAM_SYNTAX_ERROR bytes 4..6");
        assert_eq!(reads("in exists"), "STREAM_SYNTAX_ERROR bytes 0..2");
        assert_eq!(
            reads("a exists b exists"),
            "STREAM_SYNTAX_ERROR bytes 9..10"
        );
        assert_eq!(reads("\"\" exists"), "STREAM_INVALID_FILTER bytes 0..2");
        let nine = ["a exists"; 9].join(" or ");
        assert!(reads(&nine).starts_with("STREAM_LIMIT_EXCEEDED"));
    }
}

//! The dialect front ends. Each module parses its dialect's JSON (or text) into its own AST,
//! validates every rule and limit, lowers the AST to IR, and reads messages in its shape.

pub mod basaltic;
pub mod eventbridge;
pub mod eventgrid;
pub mod expr;
mod name;
pub mod sns;
pub mod stream;

use crate::error::{CompileError, JsonTextError};
use crate::ir::Node;
use crate::options::Options;
use filtervm_vm::json::{self, ParseOptions};
pub use name::{Dialect, UnknownDialect};

/// The largest policy text accepted, in bytes (basaltic B-12, sns rule 44).
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// Arrays and objects nested in one another that policy text may hold (what `serde_json` reads
/// by default, and one level more).
pub const MAX_POLICY_DEPTH: usize = json::DEFAULT_MAX_DEPTH;

/// Parses, validates and lowers a policy of `dialect` to IR (`options` are `dialect`'s).
pub(crate) fn lower(
    dialect: Dialect,
    policy: &json::Value,
    options: &Options,
) -> Result<Node, CompileError> {
    match dialect {
        Dialect::Basaltic => basaltic::lower(policy),
        Dialect::Sns => sns::lower(policy, options.sns()),
        Dialect::EventGrid => eventgrid::lower(policy, options.eventgrid()),
        Dialect::Stream => stream::lower(policy),
        Dialect::Expr => expr::lower(policy, options.expr()),
        Dialect::EventBridge => eventbridge::lower(policy),
    }
}

/// Parses, validates and lowers policy `text` of `dialect` to IR: [`parse_policy_text`] and then
/// [`lower`], with the same errors. A policy of any dialect but `eventbridge` is read as a
/// borrowed tree ([`sns::lower_text`], [`basaltic::lower_text`], [`eventgrid::lower_text`],
/// [`expr::lower_text`], [`stream::lower_text`]).
pub(crate) fn lower_text(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<Node, CompileError> {
    match dialect {
        Dialect::Sns => sns::lower_text(text, options.sns()),
        Dialect::Basaltic => basaltic::lower_text(text, options),
        Dialect::EventGrid => eventgrid::lower_text(text, options),
        Dialect::Expr => expr::lower_text(text, options),
        Dialect::Stream => stream::lower_text(text, options),
        _ => lower(
            dialect,
            &parse_policy_text(dialect, text, options)?,
            options,
        ),
    }
}

/// An object's members in a borrowed tree, read as a [`Map`](json::Map) is: by name (the first
/// member of that name; a repeated one was resolved when the text was read) and in order.
#[derive(Clone, Copy)]
pub(crate) struct Members<'a>(pub(crate) &'a [(&'a str, json::ValueRef<'a>)]);

impl<'a> Members<'a> {
    /// The member called `name`.
    pub(crate) fn get(self, name: &str) -> Option<json::ValueRef<'a>> {
        self.0.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
    }

    /// Whether a member is called `name`.
    pub(crate) fn contains_key(self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The members' names, in order.
    pub(crate) fn keys(self) -> impl Iterator<Item = &'a str> {
        self.0.iter().map(|&(k, _)| k)
    }
}

/// Reads policy text into a JSON value: at most [`MAX_POLICY_BYTES`] (else the
/// dialect's limit code), at most [`MAX_POLICY_DEPTH`] levels, numbers in their exact
/// text, lone surrogate escapes rejected with their line, column and JSON Pointer. `expr` text is
/// first scanned for expressions nested beyond `max_depth` (E2), and `stream` text that is not
/// JSON is the text form, returned as a JSON string.
pub(crate) fn parse_policy_text(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<json::Value, CompileError> {
    let read = read_options(dialect, text, options)?;
    match json::parse_str_with(text, &read) {
        Ok(policy) => Ok(policy),
        Err(e) => match text_form(dialect, text) {
            Some(form) => Ok(json::Value::String(form.to_owned())),
            None => Err(read_error(dialect, text, &e)),
        },
    }
}

/// [`parse_policy_text`] into a borrowed tree held in `arena`: the same tree (a repeated member
/// name not remembered) and the same errors.
pub(crate) fn parse_policy_ref<'a>(
    dialect: Dialect,
    text: &'a str,
    options: &Options,
    arena: &'a json::Arena,
) -> Result<json::ValueRef<'a>, CompileError> {
    let read = read_options(dialect, text, options)?;
    match arena.parse_str(text, &read) {
        Ok(policy) => Ok(policy),
        Err(e) => match text_form(dialect, text) {
            Some(form) => Ok(json::ValueRef::String(form)),
            None => Err(read_error(dialect, text, &e)),
        },
    }
}

/// The checks made on policy text before it is read (its size; `expr`'s nesting), and how it is
/// read.
fn read_options(
    dialect: Dialect,
    text: &str,
    options: &Options,
) -> Result<ParseOptions, CompileError> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(CompileError::one(
            dialect.limit_code(),
            "",
            format!(
                "the policy is {} bytes; the limit is {} bytes (256 KiB)",
                text.len(),
                MAX_POLICY_BYTES
            ),
        ));
    }
    if dialect == Dialect::Expr {
        expr::check_text(text, options.expr())?;
    }
    let mut read = ParseOptions::default();
    read.max_depth = MAX_POLICY_DEPTH;
    if dialect == Dialect::EventBridge {
        // EB-7: a repeated member name is read in its place; the later one replaces.
        read.duplicates = json::Duplicates::KeepAll;
    }
    Ok(read)
}

/// The stream dialect's text form (`region = eu-* and n > 5`), which is policy text too: text
/// that is not JSON and does not start like it, without its line end.
fn text_form(dialect: Dialect, text: &str) -> Option<&str> {
    (dialect == Dialect::Stream && !text.trim_start().starts_with(['{', '[']))
        .then(|| text.trim_end_matches(['\n', '\r']))
}

/// The error of policy text that the JSON reader rejected with `e`.
fn read_error(dialect: Dialect, text: &str, e: &json::Error) -> CompileError {
    // A pattern nested deeper than the compiler reads is beyond a limit of ours, not
    // invalid JSON (event-ruler reads patterns to Jackson's 1,000 levels; EB-34 bounds
    // events only): `EVENTBRIDGE_LIMIT_EXCEEDED` at the first container too deep.
    if dialect == Dialect::EventBridge && e.kind() == json::ErrorKind::TooDeep {
        let e = JsonTextError::new(text, e);
        return CompileError::one(
            dialect.limit_code(),
            e.pointer,
            format!("the pattern nests arrays and objects deeper than {MAX_POLICY_DEPTH} levels"),
        );
    }
    let e = JsonTextError::new(text, e);
    let message = match dialect {
        // AWS's wording (sns rule 35).
        Dialect::Sns => format!("{} ({})", sns::NOT_JSON, e.message),
        _ => format!("the policy is not valid JSON: {}", e.message),
    };
    CompileError::one(dialect.invalid_code(), e.pointer, message)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod lone_surrogate_tests;

//! `--options JSON`: dialect options as a JSON object, with every member name given once.
//!
//! Text that is not JSON, is not an object or names a member twice (`{"scope": "MessageBody",
//! "scope": "MessageAttributes"}` would otherwise silently run in one scope) is a usage error,
//! named with its JSON Pointer; options the dialect does not accept are policy errors
//! ([`Options::from_json`]: `INVALID_OPTIONS` with a pointer and a suggestion).

use super::failure::Failure;
use filtervm_compiler::error::pointer;
use filtervm_compiler::options::{duplicate_member, parse_options_text};
use filtervm_compiler::{CompileError, Dialect, Options};

/// Reads the text of `--options` for `dialect`: `Err` for text that is not a JSON object with
/// each member once, `Ok(Err(..))` for options the dialect does not accept.
pub(super) fn parse(
    dialect: Dialect,
    text: &str,
) -> Result<Result<Options, CompileError>, Failure> {
    let value = parse_options_text(text).map_err(|e| {
        let message = e.first().map_or_else(String::new, |e| e.message.clone());
        Failure::usage(format!("--options: {message}"))
    })?;
    if !value.is_object() {
        return Err(Failure::usage("--options must be a JSON object"));
    }
    if let Some(at) = duplicate_member(&value) {
        return Err(Failure::usage(format!(
            "--options: duplicate member at {}: a JSON object names each member once",
            pointer::shown(&at)
        )));
    }
    Ok(Options::from_json(dialect, &value))
}

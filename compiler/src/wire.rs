//! Filters on the wire: [`Filter::to_bytes`] and [`Filter::from_bytes`].
//!
//! A filter ships as a `filtervm-vm` program encoding ([`filtervm_vm::wire`]) whose metadata blob
//! holds, as compact JSON, the dialect and the options the filter was compiled with:
//!
//! ```json
//! {"dialect":"sns","options":{"scope":"MessageBody"}}
//! ```
//!
//! so that a node can read messages in the dialect's shape ([`crate::Evaluator::matches_json`],
//! `filtervm match --program`). The IR does not travel: a loaded filter has no IR
//! ([`Filter::ir`] and [`Filter::lowered_ir`] are `None`), only its verified program, with its
//! source pointers.
//!
//! The options are written in their JSON form with every option explicit ([`Options::to_json`]).
//!
//! Loading is as safe as [`filtervm_vm::wire::decode`]: any bytes may be given; the metadata must be
//! a JSON object with exactly the members `dialect` (a known dialect name) and `options` (an object,
//! or `null`) that the dialect accepts ([`Options::from_json`], the reading the command line and
//! vectors get), each named once, else the bytes are rejected ([`LoadError::code`] tells how).
//!
//! ```
//! use filtervm_compiler::{Dialect, Filter, Options, compile};
//! use serde_json::json;
//!
//! let options = Options::from(Dialect::Basaltic);
//! let filter = compile(Dialect::Basaltic, &json!({"event": ["order.paid"]}), &options).unwrap();
//! let bytes = filter.to_bytes();
//! let loaded = Filter::from_bytes(&bytes).unwrap();
//! assert_eq!(loaded.dialect(), Dialect::Basaltic);
//! assert!(loaded.ir().is_none());
//! let message = json!({"attributes": {"event": {"type": "String", "value": "order.paid"}}});
//! let mut evaluator = filtervm_compiler::Evaluator::new();
//! assert!(evaluator.matches_json(&loaded, &message).unwrap());
//! ```

use crate::Filter;
use crate::dialect::Dialect;
use crate::error::{CompileError, ErrorCode, excerpt};
use crate::options::Options;
use filtervm_vm::json::{self, Duplicates, Map, ParseOptions, Value};
use filtervm_vm::program::{Program, ProgramParts};
use filtervm_vm::wire::{self, WireError};
use std::fmt::Write as _;

/// Why bytes were not accepted as a filter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The program encoding was rejected (see [`WireError`]).
    #[error(transparent)]
    Program(#[from] WireError),
    /// The program is valid but its metadata is not a filter's (dialect and options).
    #[error("invalid filter metadata: {0}")]
    Metadata(String),
    /// The metadata names options its dialect does not accept (each error has the code
    /// [`ErrorCode::InvalidOptions`] and a pointer into the options).
    #[error("invalid stored options: {0}")]
    Options(CompileError),
}

impl LoadError {
    /// The stable code: [`ErrorCode::InvalidProgram`], [`ErrorCode::InvalidFilterMetadata`] or
    /// [`ErrorCode::InvalidOptions`].
    pub fn code(&self) -> ErrorCode {
        match self {
            LoadError::Program(_) => ErrorCode::InvalidProgram,
            LoadError::Metadata(_) => ErrorCode::InvalidFilterMetadata,
            LoadError::Options(_) => ErrorCode::InvalidOptions,
        }
    }
}

/// The metadata blob: `{"dialect": NAME, "options": OPTIONS}` as compact JSON.
fn metadata(filter: &Filter) -> Vec<u8> {
    let mut object = Map::new();
    object.insert(
        "dialect".into(),
        Value::String(filter.dialect().name().into()),
    );
    object.insert("options".into(), filter.options().to_json());
    Value::Object(object).to_string().into_bytes()
}

/// Reads the metadata blob back.
fn read_metadata(bytes: &[u8]) -> Result<(Dialect, Value), LoadError> {
    let bad = |why: String| LoadError::Metadata(why);
    let mut read = ParseOptions::default();
    read.duplicates = Duplicates::Reject;
    let value = json::parse_with(bytes, &read).map_err(|e| bad(format!("not JSON text: {e}")))?;
    let Value::Object(members) = value else {
        return Err(bad("not a JSON object".into()));
    };
    if let Some(other) = members
        .keys()
        .find(|k| k.as_str() != "dialect" && k.as_str() != "options")
    {
        return Err(bad(format!("unknown member `{}`", excerpt(other))));
    }
    let dialect = match members.get("dialect") {
        Some(Value::String(name)) => name.parse::<Dialect>().map_err(|e| bad(e.to_string()))?,
        Some(_) => return Err(bad("`dialect` is not a string".into())),
        None => return Err(bad("no `dialect`".into())),
    };
    let options = match members.get("options") {
        Some(v @ (Value::Object(_) | Value::Null)) => v.clone(),
        Some(_) => return Err(bad("`options` is not an object".into())),
        None => return Err(bad("no `options`".into())),
    };
    Ok((dialect, options))
}

impl Filter {
    /// Encodes the filter: its program, dialect and options (see the [module docs](crate::wire)).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.program().to_bytes_with_metadata(&metadata(self))
    }

    /// Loads a filter from [`Filter::to_bytes`] output.
    ///
    /// Safe on any input: never panics, allocates at most in proportion to `bytes`, and the
    /// program is verified, so the filter can be run on any message. The loaded filter has no IR.
    pub fn from_bytes(bytes: &[u8]) -> Result<Filter, LoadError> {
        let decoded = wire::decode(bytes)?;
        let (dialect, options) = read_metadata(decoded.metadata)?;
        let options = Options::from_json(dialect, &options).map_err(LoadError::Options)?;
        Ok(Filter::loaded(options, decoded.program))
    }
}

/// A text that identifies a program's behavior, for filters that carry no IR (interning): the
/// hex of its encoding with origins and source pointers left out.
pub(crate) fn program_identity(program: &Program) -> String {
    let parts = ProgramParts {
        origins: Vec::new(),
        sources: Vec::new(),
        ..program.parts().clone()
    };
    let bytes = match Program::new(parts) {
        Ok(stripped) => stripped.to_bytes(),
        Err(_) => program.to_bytes(),
    };
    let mut out = String::with_capacity(9 + bytes.len() * 2);
    out.push_str("bytecode ");
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SnsScope, compile};
    use serde_json::json;

    fn filter() -> Filter {
        compile(
            Dialect::Basaltic,
            &json!({"event": ["order.paid"], "amount": [{"numeric": [">", 5]}]}),
            &Options::Basaltic,
        )
        .unwrap()
    }

    #[test]
    fn metadata_carries_dialect_and_options() {
        let f = filter();
        assert_eq!(
            String::from_utf8(metadata(&f)).unwrap(),
            r#"{"dialect":"basaltic","options":{}}"#
        );
        let loaded = Filter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(loaded.dialect(), Dialect::Basaltic);
        assert_eq!(loaded.options(), &Options::Basaltic);
        let sns = compile(
            Dialect::Sns,
            &json!({"a": ["b"]}),
            &SnsScope::MessageBody.into(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(metadata(&sns)).unwrap(),
            r#"{"dialect":"sns","options":{"scope":"MessageBody"}}"#
        );
        assert_eq!(
            Filter::from_bytes(&sns.to_bytes()).unwrap().options(),
            &Options::from(SnsScope::MessageBody)
        );
        assert!(loaded.ir().is_none() && loaded.lowered_ir().is_none());
        assert_eq!(loaded.program().disassemble(), f.program().disassemble());
    }

    #[test]
    fn bad_metadata_is_rejected() {
        let program = filter().program().clone();
        for (meta, why) in [
            (&b"\xff"[..], "not JSON"),
            (b"[]", "not a JSON object"),
            (br#"{"dialect":"nope","options":{}}"#, "unknown dialect"),
            (br#"{"dialect":5,"options":{}}"#, "not a string"),
            (br#"{"options":{}}"#, "no `dialect`"),
            (br#"{"dialect":"sns"}"#, "no `options`"),
            (br#"{"dialect":"sns","options":3}"#, "not an object"),
            (br#"{"dialect":"sns","options":{},"x":1}"#, "unknown member"),
            (
                br#"{"dialect":"sns","options":{},"dialect":"basaltic"}"#,
                "duplicate member name",
            ),
        ] {
            let bytes = program.to_bytes_with_metadata(meta);
            match Filter::from_bytes(&bytes) {
                Err(e @ LoadError::Metadata(_)) => {
                    assert!(e.to_string().contains(why), "{e}");
                    assert_eq!(e.code(), ErrorCode::InvalidFilterMetadata);
                }
                other => panic!("{why}: {other:?}"),
            }
        }
        let e = Filter::from_bytes(b"").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidProgram);
        let ok = program.to_bytes_with_metadata(br#"{"dialect":"sns","options":null}"#);
        assert_eq!(Filter::from_bytes(&ok).unwrap().dialect(), Dialect::Sns);
    }

    #[test]
    fn stored_options_are_validated_like_compiling() {
        let program = filter().program().clone();
        for (meta, pointer) in [
            (
                &br#"{"dialect":"sns","options":{"scope":"Body"}}"#[..],
                "/scope",
            ),
            (
                br#"{"dialect":"sns","options":{"scope":"MessageBody","x":1}}"#,
                "/x",
            ),
            (
                br#"{"dialect":"eventgrid","options":{"schema":5}}"#,
                "/schema",
            ),
            (
                br#"{"dialect":"expr","options":{"max_depth":1000}}"#,
                "/max_depth",
            ),
            (
                br#"{"dialect":"basaltic","options":{"scope":"MessageBody"}}"#,
                "/scope",
            ),
            (br#"{"dialect":"stream","options":{"x":null}}"#, "/x"),
        ] {
            let bytes = program.to_bytes_with_metadata(meta);
            match Filter::from_bytes(&bytes) {
                Err(LoadError::Options(e)) => {
                    let first = e.first().unwrap();
                    assert_eq!(first.code, ErrorCode::InvalidOptions);
                    assert_eq!(first.pointer, pointer);
                }
                other => panic!("{}: {other:?}", String::from_utf8_lossy(meta)),
            }
        }
        for meta in [
            &br#"{"dialect":"sns","options":{"scope":"MessageBody"}}"#[..],
            br#"{"dialect":"eventgrid","options":{"schema":"CloudEventSchemaV1_0"}}"#,
            br#"{"dialect":"expr","options":{"max_depth":3}}"#,
        ] {
            let bytes = program.to_bytes_with_metadata(meta);
            assert!(
                Filter::from_bytes(&bytes).is_ok(),
                "{}",
                String::from_utf8_lossy(meta)
            );
        }
    }

    #[test]
    fn program_identity_ignores_origins() {
        let f = filter();
        let mut parts = f.program().parts().clone();
        parts.sources = parts
            .sources
            .iter()
            .map(|s| format!("/x{s}").into())
            .collect();
        let renamed = Program::new(parts).unwrap();
        assert_eq!(program_identity(f.program()), program_identity(&renamed));
        assert!(program_identity(f.program()).starts_with("bytecode 46564d50"));
    }
}

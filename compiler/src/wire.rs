//! Filters on the wire: [`Filter::to_bytes`] and [`Filter::from_bytes`].
//!
//! A filter ships as a `filtervm-vm` program encoding ([`filtervm_vm::wire`]) whose metadata blob
//! holds, as compact JSON, the metadata format's version, the dialect, the options the filter was
//! compiled with and its lowered IR ([`crate::ir`], written as described in the IR's JSON form):
//!
//! ```json
//! {"version":2,"dialect":"sns","options":{"scope":"MessageBody"},"ir":["test","/a/0",["body","a"],["str","eq","sensitive",["x"]]]}
//! ```
//!
//! so that a node can read messages in the dialect's shape and a loaded filter is whole: it has
//! its IR ([`Filter::ir`], [`Filter::lowered_ir`]) for explain and for subscription sets, which
//! intern a filter's tests from its IR. The options are written in their JSON form with every
//! option explicit ([`Options::to_json`]).
//!
//! Loading is as safe as [`filtervm_vm::wire::decode`]: any bytes may be given; the metadata must be
//! a JSON object with exactly the members `version` (2), `dialect` (a known dialect name),
//! `options` (an object, or `null`) that the dialect accepts ([`Options::from_json`], the reading
//! the command line and vectors get) and `ir`, or `version` 3 with those and `pattern` (an
//! `eventbridge` filter's kept pattern text, [`Filter::pattern`]: validated, and it must lower to
//! the shipped IR), each named once, else the bytes are rejected
//! ([`LoadError::code`] tells how). The IR is then optimized and compiled again, and the result
//! must encode to exactly the bytes given: a program and an IR that disagree (a tampered or
//! corrupted file) are rejected, so a loaded filter's program is always the one its IR compiles
//! to. Metadata without `version` and `ir` (the first format, which shipped no IR) still loads, as
//! a filter without IR ([`ErrorCode::FilterWithoutIr`] where one is needed).
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
//! assert!(loaded.ir().is_some());
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

/// The version of the metadata format [`Filter::to_bytes`] writes for filters without a kept
/// pattern (the first format, without a version member, shipped no IR).
pub const METADATA_VERSION: u64 = 2;

/// The version of the metadata format [`Filter::to_bytes`] writes for a filter with a kept
/// `eventbridge` pattern ([`Filter::pattern`]): version 2 and a `pattern` member. Both are read.
pub const METADATA_VERSION_PATTERN: u64 = 3;

/// The deepest JSON the metadata may nest: the IR's nodes nest two JSON levels per IR level, and
/// the policies IR is lowered from are at most [`crate::MAX_POLICY_DEPTH`] levels deep.
const METADATA_DEPTH: usize = json::MAX_DEPTH_CEILING;

/// The metadata blob: `{"version": 2, "dialect": NAME, "options": OPTIONS, "ir": IR}` as compact
/// JSON, or without `version` and `ir` for a filter that has no IR (itself loaded from the first
/// format).
fn metadata(filter: &Filter) -> Vec<u8> {
    let mut object = Map::new();
    let pattern = filter.pattern().filter(|_| filter.lowered_ir().is_some());
    if filter.lowered_ir().is_some() {
        let version = match pattern {
            Some(_) => METADATA_VERSION_PATTERN,
            None => METADATA_VERSION,
        };
        object.insert("version".into(), Value::Number(version.into()));
    }
    object.insert(
        "dialect".into(),
        Value::String(filter.dialect().name().into()),
    );
    object.insert("options".into(), filter.options().to_json());
    if let Some(ir) = filter.lowered_ir() {
        object.insert("ir".into(), crate::ir::json::to_json(ir));
    }
    if let Some(pattern) = pattern {
        object.insert("pattern".into(), Value::String(pattern.text().into()));
    }
    Value::Object(object).to_string().into_bytes()
}

/// What the metadata blob holds.
struct Metadata {
    dialect: Dialect,
    options: Value,
    /// The lowered IR (format 2); `None` for the first format.
    ir: Option<crate::ir::Node>,
    /// The kept `eventbridge` pattern's text (format 3).
    pattern: Option<String>,
}

/// Reads the metadata blob back.
fn read_metadata(bytes: &[u8]) -> Result<Metadata, LoadError> {
    let bad = |why: String| LoadError::Metadata(why);
    let mut read = ParseOptions::default();
    read.duplicates = Duplicates::Reject;
    read.max_depth = METADATA_DEPTH;
    let value = json::parse_with(bytes, &read).map_err(|e| bad(format!("not JSON text: {e}")))?;
    let Value::Object(members) = value else {
        return Err(bad("not a JSON object".into()));
    };
    let versioned = members.contains_key("version");
    let version = members.get("version").and_then(Value::as_u64);
    let known: &[&str] = match version {
        Some(METADATA_VERSION_PATTERN) => &["version", "dialect", "options", "ir", "pattern"],
        _ if versioned => &["version", "dialect", "options", "ir"],
        _ => &["dialect", "options"],
    };
    if let Some(other) = members.keys().find(|k| !known.contains(&k.as_str())) {
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
    let ir = if versioned {
        match version {
            Some(METADATA_VERSION | METADATA_VERSION_PATTERN) => {}
            _ => {
                return Err(bad(format!(
                    "unsupported metadata version (this library reads versions \
                     {METADATA_VERSION} and {METADATA_VERSION_PATTERN})"
                )));
            }
        }
        let ir = members.get("ir").ok_or_else(|| bad("no `ir`".into()))?;
        let node =
            crate::ir::json::from_json(ir, "/ir").map_err(|e| bad(format!("invalid IR at {e}")))?;
        Some(node)
    } else {
        None
    };
    let pattern = match (version, members.get("pattern")) {
        (Some(METADATA_VERSION_PATTERN), Some(Value::String(text))) => {
            if dialect != Dialect::EventBridge {
                return Err(bad(format!(
                    "a `pattern` is kept for eventbridge filters only, not {dialect}"
                )));
            }
            Some(text.clone())
        }
        (Some(METADATA_VERSION_PATTERN), Some(_)) => {
            return Err(bad("`pattern` is not a string".into()));
        }
        (Some(METADATA_VERSION_PATTERN), None) => return Err(bad("no `pattern`".into())),
        _ => None,
    };
    Ok(Metadata {
        dialect,
        options,
        ir,
        pattern,
    })
}

impl Filter {
    /// Encodes the filter: its program, dialect, options and IR (see the [module docs](crate::wire)).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.program().to_bytes_with_metadata(&metadata(self))
    }

    /// Loads a filter from [`Filter::to_bytes`] output.
    ///
    /// Safe on any input: never panics, allocates at most in proportion to `bytes`, and the
    /// program is verified, so the filter can be run on any message. A filter written by this
    /// version carries its IR, checked to compile to the shipped program; one written in the first
    /// format loads without IR.
    pub fn from_bytes(bytes: &[u8]) -> Result<Filter, LoadError> {
        let decoded = wire::decode(bytes)?;
        let meta = read_metadata(decoded.metadata)?;
        let options =
            Options::from_json(meta.dialect, &meta.options).map_err(LoadError::Options)?;
        let Some(lowered) = meta.ir else {
            return Ok(Filter::loaded(options, decoded.program));
        };
        let optimized = crate::opt::optimize_copy(&lowered);
        let regenerated = crate::codegen::generate(&optimized)
            .map_err(|e| LoadError::Metadata(format!("the IR does not compile: {e}")))?;
        if regenerated.to_bytes_with_metadata(decoded.metadata) != bytes {
            return Err(LoadError::Metadata(
                "the IR does not compile to the program shipped with it".into(),
            ));
        }
        let pattern = match meta.pattern {
            Some(text) => {
                let (pattern, relowered) = crate::dialect::eventbridge::exact::Pattern::read(&text)
                    .map_err(|e| LoadError::Metadata(format!("invalid `pattern`: {e}")))?;
                if crate::ir::json::to_json(&relowered) != crate::ir::json::to_json(&lowered) {
                    return Err(LoadError::Metadata(
                        "the `pattern` does not lower to the IR shipped with it".into(),
                    ));
                }
                Some(pattern)
            }
            None => None,
        };
        Ok(Filter::with_ir(options, lowered, optimized, regenerated).with_pattern(pattern))
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

    /// Compiled from text, so the IR keeps the policy's member order.
    fn filter() -> Filter {
        crate::compile_text(
            Dialect::Basaltic,
            r#"{"event": ["order.paid"], "amount": [{"numeric": [">", 5]}]}"#,
            &Options::Basaltic,
        )
        .unwrap()
    }

    #[test]
    fn metadata_carries_dialect_and_options() {
        let f = filter();
        assert_eq!(
            String::from_utf8(metadata(&f)).unwrap(),
            concat!(
                r#"{"version":2,"dialect":"basaltic","options":{},"ir":["and","",["#,
                r#"["or","/event",[["test","/event/0",["attr-text","event"],["str","eq","sensitive",["order.paid"]]]]],"#,
                r#"["or","/amount",[["test","/amount/0",["attr-text","amount"],["num","text",[[5e0,false,"inf",false]]]]]]]]}"#
            )
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
        assert!(String::from_utf8(metadata(&sns)).unwrap().starts_with(
            r#"{"version":2,"dialect":"sns","options":{"scope":"MessageBody"},"ir":"#
        ));
        assert_eq!(
            Filter::from_bytes(&sns.to_bytes()).unwrap().options(),
            &Options::from(SnsScope::MessageBody)
        );
        assert_eq!(
            loaded.lowered_ir().map(ToString::to_string),
            f.lowered_ir().map(ToString::to_string)
        );
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
    fn the_first_format_still_loads_without_ir() {
        let program = filter().program().clone();
        let bytes = program.to_bytes_with_metadata(br#"{"dialect":"basaltic","options":{}}"#);
        let loaded = Filter::from_bytes(&bytes).unwrap();
        assert!(loaded.ir().is_none() && loaded.lowered_ir().is_none());
        assert_eq!(
            loaded.to_bytes(),
            bytes,
            "written back in the format it came in"
        );
    }

    #[test]
    fn an_ir_that_does_not_compile_to_the_shipped_program_is_rejected() {
        let f = filter();
        let text = String::from_utf8(metadata(&f)).unwrap();
        // The same program, shipped with an IR that tests another value or another key, or that
        // is no IR at all, or with a version this library does not read.
        for (tampered, why) in [
            (
                text.replace("order.paid", "order.created"),
                "does not compile to",
            ),
            (
                text.replace(r#""attr-text","event""#, r#""attr","event""#),
                "does not compile to",
            ),
            (
                text.replace(r#"["num","text""#, r#"["num","words""#),
                "unknown number source",
            ),
            (
                text.replace(r#""and","""#, r#""nand","""#),
                "unknown node kind",
            ),
            (
                text.replace(r#"5e0,false"#, r#"5e0,0"#),
                "expected `true` or `false`",
            ),
            (
                text.replace(r#""version":2"#, r#""version":4"#),
                "unsupported metadata version",
            ),
            (text.replace(r#","ir":"#, r#","ri":"#), "unknown member"),
        ] {
            assert_ne!(tampered, text, "{why}");
            let bytes = f.program().to_bytes_with_metadata(tampered.as_bytes());
            match Filter::from_bytes(&bytes) {
                Err(e @ LoadError::Metadata(_)) => {
                    assert!(e.to_string().contains(why), "{why}: {e}");
                    assert_eq!(e.code(), ErrorCode::InvalidFilterMetadata);
                }
                other => panic!("{why}: {other:?}"),
            }
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

//! A compiled filter as the bindings hold it: the facade's [`filtervm::Filter`] and the policy
//! text it was compiled from.

use crate::error::{Failure, FailureKind};
use crate::message::Input;
use filtervm::{Attributes, Dialect, ErrorCode, Headers, Matcher, Options, ReadMode, Warning};
use std::cell::RefCell;

/// A compiled filter (immutable; share it between threads freely).
#[derive(Debug, Clone)]
pub struct Filter {
    inner: filtervm::Filter,
    /// The policy text it was compiled from (`None` when loaded from bytes).
    source: Option<String>,
}

/// The dialect names, as the bindings accept them.
pub fn dialects() -> Vec<&'static str> {
    Dialect::ALL.iter().map(|d| d.name()).collect()
}

/// The dialect named `name`, or an argument failure.
pub fn dialect(name: &str) -> Result<Dialect, Failure> {
    name.parse::<Dialect>()
        .map_err(|e| Failure::argument(e.to_string()))
}

/// `bytes` as text, or a policy failure naming the first invalid byte: the dialect's own code
/// for the policy, `INVALID_OPTIONS` for the options.
fn text<'a>(bytes: &'a [u8], code: ErrorCode, what: &str) -> Result<&'a str, Failure> {
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::one(
            FailureKind::Policy,
            code.as_str(),
            "",
            format!(
                "the {what} is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// `dialect`'s options from JSON text (`None`: the defaults); errors are `INVALID_OPTIONS`, each
/// with the pointer of the option.
pub fn options(dialect: Dialect, options: Option<&[u8]>) -> Result<Options, Failure> {
    match options {
        None => Ok(Options::from(dialect)),
        Some(bytes) => {
            let text = text(bytes, ErrorCode::InvalidOptions, "options")?;
            Ok(Options::from_json(dialect, text)?)
        }
    }
}

impl Filter {
    /// Compiles `policy` (JSON text, or for `stream` also the text form) of the dialect named
    /// `dialect_name`, with `options` as JSON text (`None` for the dialect's defaults).
    pub fn compile(
        dialect_name: &str,
        policy: &[u8],
        options: Option<&[u8]>,
    ) -> Result<Filter, Failure> {
        let dialect = dialect(dialect_name)?;
        let options = self::options(dialect, options)?;
        let text = text(policy, dialect.invalid_code(), "policy")?;
        let inner = filtervm::Filter::new(options, text)?;
        Ok(Filter {
            inner,
            source: Some(text.to_owned()),
        })
    }

    /// Loads [`Filter::to_bytes`] output (any bytes may be given: the program is verified).
    pub fn from_bytes(bytes: &[u8]) -> Result<Filter, Failure> {
        Ok(Filter {
            inner: filtervm::Filter::from_bytes(bytes)?,
            source: None,
        })
    }

    /// The facade's filter.
    pub fn facade(&self) -> &filtervm::Filter {
        &self.inner
    }

    /// The wire form: program, dialect, options and IR.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes()
    }

    /// The dialect's name (`sns`, ...).
    pub fn dialect(&self) -> &'static str {
        self.inner.dialect().name()
    }

    /// The options as JSON text, every option written out (`{}` for a dialect without options).
    pub fn options_json(&self) -> String {
        self.inner.options().to_json().to_string()
    }

    /// The policy text the filter was compiled from (`None` when loaded from bytes).
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The names of the attributes whose values the filter reads, when they are all it reads of
    /// a message's attributes (`None`: it reads more; see
    /// [`filtervm::Filter::attribute_names`]). A binding whose caller gives attributes as a map
    /// looks up these names only.
    pub fn attribute_names(&self) -> Option<Vec<&str>> {
        self.inner.attribute_names()
    }

    /// The optimized IR as text (`None` for a filter loaded from bytes of the first wire format).
    pub fn ir(&self) -> Option<String> {
        self.inner.compiled().ir().map(ToString::to_string)
    }

    /// The IR as lowered from the policy, before optimization.
    pub fn lowered_ir(&self) -> Option<String> {
        self.inner.compiled().lowered_ir().map(ToString::to_string)
    }

    /// The bytecode's disassembly.
    pub fn disassemble(&self) -> String {
        self.inner.compiled().program().disassemble()
    }

    /// Whether `input` matches (the facade's [`filtervm::Filter::matches`]: its errors, each with
    /// its code).
    pub fn matches<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &self,
        input: &Input<'_, A, H>,
    ) -> Result<bool, Failure> {
        Ok(self.inner.matches(&input.message())?)
    }

    /// [`Filter::matches`], reading a JSON document or body in `mode`: with
    /// [`ReadMode::Trusted`], for input validated upstream, members no filter reads are skipped
    /// by their structure alone (the facade's [`filtervm::Matcher::with_read_mode`]). Each
    /// thread keeps its own buffers for either mode.
    pub fn matches_in<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &self,
        input: &Input<'_, A, H>,
        mode: ReadMode,
    ) -> Result<bool, Failure> {
        if mode == ReadMode::Validating {
            return self.matches(input);
        }
        thread_local! {
            static TRUSTED: RefCell<Matcher> = RefCell::new(Matcher::with_read_mode(ReadMode::Trusted));
        }
        let message = input.message();
        let cached = TRUSTED.try_with(|matcher| {
            matcher
                .try_borrow_mut()
                .ok()
                .map(|mut matcher| matcher.matches(&self.inner, &message))
        });
        let verdict = match cached {
            Ok(Some(verdict)) => verdict,
            // Another match on this thread holds the buffers (or the thread is ending): fresh
            // ones.
            _ => Matcher::with_read_mode(mode).matches(&self.inner, &message),
        };
        Ok(verdict?)
    }

    /// Why `input` does or does not match, as JSON text (the shape `filtervm explain --json`
    /// prints).
    pub fn explain_json<A: Attributes + ?Sized, H: Headers + ?Sized>(
        &self,
        input: &Input<'_, A, H>,
    ) -> Result<String, Failure> {
        Ok(self.inner.explain(&input.message())?.to_json().to_string())
    }

    /// The lint warnings of the policy (a filter loaded from bytes has no policy to lint:
    /// `FILTER_WITHOUT_IR`).
    pub fn lint(&self) -> Result<Vec<Warning>, Failure> {
        self.inner.lint().ok_or_else(|| {
            Failure::one(
                FailureKind::Load,
                ErrorCode::FilterWithoutIr.as_str(),
                "",
                "the filter was loaded from bytes and carries no policy: lint the policy it was \
                 compiled from",
            )
        })
    }
}

/// Compiles and lints a policy (the policy's errors when it does not compile).
pub fn lint(
    dialect_name: &str,
    policy: &[u8],
    options: Option<&[u8]>,
) -> Result<Vec<Warning>, Failure> {
    Filter::compile(dialect_name, policy, options)?.lint()
}

//! The `sns` dialect: AWS SNS-compatible subscription filter policies
//! (`docs/dialects/sns-filters.md`, building on `docs/dialects/001_81d11ed311e5129b.txt`).
//!
//! A policy maps property names to lists of alternatives (ORed); names are ANDed; `$or` adds
//! alternatives across keys. With the option `{"scope": "MessageAttributes"}` (the default) it
//! reads typed message attributes; with `{"scope": "MessageBody"}` it reads the JSON body, and
//! nested policy objects mirror the body's structure.
//!
//! - [`parse`]: structure and operators, with AWS's wording (rules 35-41, 43a);
//! - [`limits`]: the scope check for nested objects, the 5-key and the 150-combination rules
//!   (rules 13, 42, 43), checked in that order after the structure;
//! - [`lower`]: the IR, every SNS quirk made explicit;
//! - [`message`]: a raw body as a message (messages in every shape are read by
//!   [`crate::read_message`]).
//!
//! # Errors
//!
//! AWS answers every invalid policy with `InvalidParameter` and tells the kinds apart only in
//! its wording; here each kind has its own code, and every message still contains AWS's wording
//! (for example "Filter policy can not have more than 5 keys", "Filter policy is too complex",
//! "Empty arrays are not allowed"), with a JSON Pointer to the offending member, operator or
//! element:
//!
//! | code | when | example |
//! |---|---|---|
//! | [`SNS_SYNTAX_ERROR`](crate::ErrorCode::SnsSyntaxError) | not JSON, or not shaped like a policy (rules 1, 13, 15, 34-37, D-4) | `[]`: "Filter is not an object"; `{"a": []}`: "Empty arrays are not allowed" |
//! | [`SNS_TYPE_ERROR`](crate::ErrorCode::SnsTypeError) | an operand of the wrong JSON type (rules 37-39, 41) | `{"a": [{"prefix": 1}]}`: "prefix match pattern must be a string" |
//! | [`SNS_UNKNOWN_OPERATOR`](crate::ErrorCode::SnsUnknownOperator) | an operator that does not exist (rule 37) | `{"a": [{"numric": [">", 1]}]}`: "Unrecognized match type numric (did you mean `numeric`?)" |
//! | [`SNS_INVALID_VALUE`](crate::ErrorCode::SnsInvalidValue) | an operand of the right type but a bad value (rules 27, 31, 32, 40) | `{"a": [{"cidr": "10.0.0.0/33"}]}`; `{"a": [{"numeric": [">", 5, "<", 1]}]}`: "Bottom must be less than top" |
//! | [`SNS_LIMIT_EXCEEDED`](crate::ErrorCode::SnsLimitExceeded) | rules 42, 43 and 44 | six keys: "Filter policy can not have more than 5 keys"; "Filter policy is too complex"; more than 256 KiB |
//!
//! Bad options have the code [`INVALID_OPTIONS`](crate::ErrorCode::InvalidOptions). The 256 KiB size
//! limit (rule 44) is checked on the policy text by `compile_text`, and here too when the policy
//! is given as a JSON string holding its text.
//!
//! # Decisions
//!
//! - **equals-ignore-case** (rule 26) compares with the simple one-to-one Unicode uppercase
//!   mapping of [`filtervm_vm::fold`] (the same as Event Grid's EG-31). event-ruler accepts, for
//!   each character `c` of the pattern, `c` lowercased or uppercased (full mappings). The two agree
//!   on every character whose case mappings are single characters that map back (ASCII, Latin-1
//!   but `ß`/`ÿ`, Greek, Cyrillic, ...); they differ on the rare rest: `ß` does not match `SS` here,
//!   `ſ` matches `s`/`S`, final `ς` matches `Σ`, the Kelvin sign matches only itself.
//! - **anything-but** (rule 28): a present value passes when none of its leaves is excluded and it
//!   has at least one leaf of a comparable type; every scalar leaf (string, number, boolean, null)
//!   is comparable (D-1: a string passes a numeric exclusion list), and binding gives a key no
//!   value without a scalar leaf, so this is "present and no leaf excluded".
//! - **numbers**: a policy number must be finite as a binary64; a body or `String.Array` number
//!   too large for a binary64 reads as an infinity and compares like any other number.

pub mod limits;
pub mod lower;
pub mod message;
pub mod parse;
mod shape;

use crate::error::CompileError;
use crate::ir::Node;
use crate::options::{Options, SnsOptions};
use filtervm_vm::json::{Arena, Value, ValueRef};

/// The AWS wording of a policy that is not JSON (rule 35).
pub const NOT_JSON: &str = "failed to parse JSON.";

/// What a policy filters (rule 3): the `scope` option, [`SnsScope`](crate::SnsScope).
pub use crate::options::SnsScope as Scope;

/// Parses policy text (rule 35: "failed to parse JSON.", rule 44: 256 KiB).
pub fn parse_text(text: &str) -> Result<Value, CompileError> {
    super::parse_policy_text(
        super::Dialect::Sns,
        text,
        &Options::Sns(SnsOptions::default()),
    )
}

/// Parses and validates a policy for `scope`, in the order of rule 13: [`validate_ref`] of the
/// policy as a borrowed tree.
pub fn validate(scope: Scope, policy: &Value) -> Result<parse::Object, CompileError> {
    Arena::with_local(|arena| validate_ref(scope, arena.value(policy)))
}

/// Parses and validates a policy for `scope`, in the order of rule 13.
pub fn validate_ref(scope: Scope, policy: ValueRef<'_>) -> Result<parse::Object, CompileError> {
    let (root, errors) = parse::Parser::with_local_buffer(|parser| {
        (
            parser.root_shaped(policy),
            std::mem::take(&mut parser.errors),
        )
    });
    // The shape, gathered as the policy was read, tells which checks can report anything;
    // each of those walks the policy.
    let Some((root, shape)) = root.filter(|_| errors.is_empty()) else {
        return Err(errors.into());
    };
    let mut errors = Vec::new();
    if shape.nested {
        limits::check_scope(scope, &root, &mut errors);
    }
    if errors.is_empty() && shape.leaf_lists > limits::MAX_KEYS {
        limits::check_keys(&root, &mut errors);
    }
    if errors.is_empty() && shape.combinations > limits::MAX_COMBINATIONS {
        limits::check_combinations(&root, &mut errors);
    }
    if errors.is_empty() {
        Ok(root)
    } else {
        Err(errors.into())
    }
}

/// Parses, validates and lowers. A policy given as a JSON string is read as the policy text.
pub(crate) fn lower(policy: &Value, options: SnsOptions) -> Result<Node, CompileError> {
    let scope = options.scope;
    let root = match policy {
        Value::String(text) => {
            Arena::with_local(|arena| validate_ref(scope, read(text, options, arena)?))?
        }
        other => validate(scope, other)?,
    };
    Ok(lower::lower_owned(scope, root))
}

/// Reads, validates and lowers policy text: what [`parse_text`] and then [`lower`] of the value
/// do, with the same errors (a policy that is a JSON string is read as the policy text, once),
/// through a borrowed tree in this thread's arena: the tree costs no allocation, and dropping it
/// nothing.
pub(crate) fn lower_text(text: &str, options: SnsOptions) -> Result<Node, CompileError> {
    let scope = options.scope;
    Ok(lower::lower_owned(scope, validate_text(text, options)?))
}

/// [`lower_text`] for a tree given straight to [`crate::opt::optimize`]: a leaf list of one
/// alternative is lowered to that alternative alone ([`lower::lower_to_optimize`]), which the
/// optimizer gives the same optimized tree, without making and freeing the list.
pub(crate) fn lower_text_to_optimize(
    text: &str,
    options: SnsOptions,
) -> Result<Node, CompileError> {
    let scope = options.scope;
    Ok(lower::lower_to_optimize(
        scope,
        validate_text(text, options)?,
    ))
}

/// The validated policy of [`lower_text`].
fn validate_text(text: &str, options: SnsOptions) -> Result<parse::Object, CompileError> {
    Arena::with_local(|arena| {
        let policy = match read(text, options, arena)? {
            ValueRef::String(inner) => read(inner, options, arena)?,
            other => other,
        };
        validate_ref(options.scope, policy)
    })
}

/// Policy text read into `arena` (rule 35: "failed to parse JSON.", rule 44: 256 KiB).
fn read<'a>(
    text: &'a str,
    options: SnsOptions,
    arena: &'a Arena,
) -> Result<ValueRef<'a>, CompileError> {
    super::parse_policy_ref(super::Dialect::Sns, text, &Options::Sns(options), arena)
}

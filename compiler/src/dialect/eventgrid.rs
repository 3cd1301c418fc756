//! The `eventgrid` dialect: Event Grid subscription filters (`specs/eventgrid-filters.md`,
//! EG-1..EG-41, completing seed `003_df6cddf1d83a4a5b.txt`).
//!
//! A policy is the subscription's `filter` object. An event matches when the event-type filter
//! (EG-5..EG-8), the subject filter (EG-9..EG-12) and every advanced filter (EG-13..EG-25) pass.
//!
//! # Options
//! [`EventGridOptions`]: `{"schema": "EventGridSchema"}` (the default; also `null` or `{}`) or
//! `{"schema": "CloudEventSchemaV1_0"}`. Anything else is rejected with
//! [`INVALID_OPTIONS`](ErrorCode::InvalidOptions).
//!
//! # Error codes (stable)
//! - [`EVENTGRID_INVALID_FILTER`](ErrorCode::EventGridInvalidFilter): any EG-40 violation other
//!   than a limit: a member of the wrong type, a missing or unknown `operatorType` (message
//!   contains `operator`, and a suggestion when a known operator is close), a missing or empty
//!   `key` (`key`), a missing, empty or wrongly typed `value`/`values` (`value`), a malformed range
//!   pair or `low > high` (`range`).
//! - [`EVENTGRID_LIMIT_EXCEEDED`](ErrorCode::EventGridLimitExceeded): more than 25 advanced
//!   filters, more than 25 filter values across all of them (messages contain `limit` and `25`),
//!   a string filter value over 512 characters (message contains `limit` and `512`), or policy
//!   text over 256 KiB.
//!
//! Every error carries the JSON Pointer of the offending member, for example
//! `/advancedFilters/3/values/0` or `/advancedFilters/2/operatorType` (for a missing member, the
//! pointer names where it should be).
//!
//! # Lowering
//! Keys are resolved at compile time (EG-15..EG-19) to [`Key::EventMember`] (a top-level member,
//! matched ignoring ASCII case at bind time) or [`Key::EventData`] (an exact walk into `data`);
//! a key that names nothing becomes the constant its operator gives for an undefined value. Each
//! advanced filter lowers to an explicit shape test plus one predicate ("some leaf hits") or its
//! negation ("no leaf hits"), see [`lower_filter`]. Strings compare with [`Case::Fold`] against
//! constants folded at compile time (EG-31); numbers with exact decimal intervals (EG-33).

use crate::error::pointer::Lazy;
use crate::error::{CompileError, ErrorCode, MessageError, PolicyError, excerpt, pointer};
use crate::ir::{Case, Node, Pred, StrOp};
use crate::options::{EventGridOptions, EventGridSchema as Schema, Options};
use filtervm_vm::fold::fold;
use filtervm_vm::json::{Arena, Value, ValueRef};
use filtervm_vm::key::Key;
use filtervm_vm::message::Message;
use filtervm_vm::number::Decimal;
use filtervm_vm::program::DecInterval;
use filtervm_vm::value::Shapes;
use std::sync::Arc;

/// The code of policy errors other than limits.
const CODE: ErrorCode = ErrorCode::EventGridInvalidFilter;
/// The code of a breached limit (EG-40 items 7, 8, 9).
const LIMIT_CODE: ErrorCode = ErrorCode::EventGridLimitExceeded;
/// Most advanced filter entries (EG-40.7).
pub const MAX_FILTERS: usize = 25;
/// Most filter values across all advanced filters (EG-40.8).
pub const MAX_VALUES: usize = 25;
/// Longest string filter value, in characters (EG-40.9).
pub const MAX_STRING_CHARS: usize = 512;

/// The 19 operators of EG-13.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `NumberIn`.
    NumberIn,
    /// `NumberNotIn`.
    NumberNotIn,
    /// `NumberLessThan`.
    NumberLessThan,
    /// `NumberGreaterThan`.
    NumberGreaterThan,
    /// `NumberLessThanOrEquals`.
    NumberLessThanOrEquals,
    /// `NumberGreaterThanOrEquals`.
    NumberGreaterThanOrEquals,
    /// `NumberInRange`.
    NumberInRange,
    /// `NumberNotInRange`.
    NumberNotInRange,
    /// `BoolEquals`.
    BoolEquals,
    /// `StringContains`.
    StringContains,
    /// `StringNotContains`.
    StringNotContains,
    /// `StringBeginsWith`.
    StringBeginsWith,
    /// `StringNotBeginsWith`.
    StringNotBeginsWith,
    /// `StringEndsWith`.
    StringEndsWith,
    /// `StringNotEndsWith`.
    StringNotEndsWith,
    /// `StringIn`.
    StringIn,
    /// `StringNotIn`.
    StringNotIn,
    /// `IsNullOrUndefined`.
    IsNullOrUndefined,
    /// `IsNotNull`.
    IsNotNull,
}

/// What an operator's operand member holds (EG-13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandKind {
    /// `value`: one number.
    Number,
    /// `values`: numbers.
    Numbers,
    /// `values`: `[low, high]` pairs.
    Ranges,
    /// `value`: a boolean.
    Bool,
    /// `values`: strings.
    Strings,
    /// No operand (the null operators, EG-41).
    None,
}

/// How an operator answers, per EG-22..EG-24.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarity {
    /// Some candidate hits; false when undefined or null.
    Positive,
    /// No candidate hits; **true** when undefined or null (`NumberNotIn`, `StringNotIn`,
    /// `NumberNotInRange`).
    NegativeMatchesMissing,
    /// No candidate hits; **false** when undefined or null (`StringNotContains`,
    /// `StringNotBeginsWith`, `StringNotEndsWith`).
    NegativeFailsMissing,
    /// `IsNullOrUndefined`.
    NullOrUndefined,
    /// `IsNotNull`.
    NotNull,
}

impl Operator {
    /// Every operator, in the order of EG-13.
    pub const ALL: [Operator; 19] = [
        Operator::NumberIn,
        Operator::NumberNotIn,
        Operator::NumberLessThan,
        Operator::NumberGreaterThan,
        Operator::NumberLessThanOrEquals,
        Operator::NumberGreaterThanOrEquals,
        Operator::NumberInRange,
        Operator::NumberNotInRange,
        Operator::BoolEquals,
        Operator::StringContains,
        Operator::StringNotContains,
        Operator::StringBeginsWith,
        Operator::StringNotBeginsWith,
        Operator::StringEndsWith,
        Operator::StringNotEndsWith,
        Operator::StringIn,
        Operator::StringNotIn,
        Operator::IsNullOrUndefined,
        Operator::IsNotNull,
    ];

    /// The operator's name as written in policies (case-sensitive).
    pub fn name(self) -> &'static str {
        match self {
            Operator::NumberIn => "NumberIn",
            Operator::NumberNotIn => "NumberNotIn",
            Operator::NumberLessThan => "NumberLessThan",
            Operator::NumberGreaterThan => "NumberGreaterThan",
            Operator::NumberLessThanOrEquals => "NumberLessThanOrEquals",
            Operator::NumberGreaterThanOrEquals => "NumberGreaterThanOrEquals",
            Operator::NumberInRange => "NumberInRange",
            Operator::NumberNotInRange => "NumberNotInRange",
            Operator::BoolEquals => "BoolEquals",
            Operator::StringContains => "StringContains",
            Operator::StringNotContains => "StringNotContains",
            Operator::StringBeginsWith => "StringBeginsWith",
            Operator::StringNotBeginsWith => "StringNotBeginsWith",
            Operator::StringEndsWith => "StringEndsWith",
            Operator::StringNotEndsWith => "StringNotEndsWith",
            Operator::StringIn => "StringIn",
            Operator::StringNotIn => "StringNotIn",
            Operator::IsNullOrUndefined => "IsNullOrUndefined",
            Operator::IsNotNull => "IsNotNull",
        }
    }

    /// The operator named exactly `name` (EG-13: case-sensitive).
    pub fn from_name(name: &str) -> Option<Operator> {
        Operator::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The operand the operator takes.
    pub fn operand(self) -> OperandKind {
        use Operator::*;
        match self {
            NumberIn | NumberNotIn => OperandKind::Numbers,
            NumberLessThan
            | NumberGreaterThan
            | NumberLessThanOrEquals
            | NumberGreaterThanOrEquals => OperandKind::Number,
            NumberInRange | NumberNotInRange => OperandKind::Ranges,
            BoolEquals => OperandKind::Bool,
            StringContains | StringNotContains | StringBeginsWith | StringNotBeginsWith
            | StringEndsWith | StringNotEndsWith | StringIn | StringNotIn => OperandKind::Strings,
            IsNullOrUndefined | IsNotNull => OperandKind::None,
        }
    }

    /// How the operator answers on undefined, null, arrays and candidates (EG-22..EG-24).
    pub fn polarity(self) -> Polarity {
        use Operator::*;
        match self {
            NumberNotIn | StringNotIn | NumberNotInRange => Polarity::NegativeMatchesMissing,
            StringNotContains | StringNotBeginsWith | StringNotEndsWith => {
                Polarity::NegativeFailsMissing
            }
            IsNullOrUndefined => Polarity::NullOrUndefined,
            IsNotNull => Polarity::NotNull,
            _ => Polarity::Positive,
        }
    }

    /// The operator's answer when the key is undefined or null (EG-22).
    pub fn on_missing(self) -> bool {
        match self.polarity() {
            Polarity::NegativeMatchesMissing | Polarity::NullOrUndefined => true,
            Polarity::Positive | Polarity::NegativeFailsMissing | Polarity::NotNull => false,
        }
    }
}

/// A number from a policy: its exact value and its text (for display).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyNumber {
    /// The exact value (EG-33).
    pub value: Decimal,
    /// The JSON text as written.
    pub text: String,
}

/// A validated operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// The null operators take none.
    None,
    /// `value` of `Number{Less,Greater}Than[OrEquals]`.
    Number(PolicyNumber),
    /// `values` of `NumberIn`/`NumberNotIn`.
    Numbers(Vec<PolicyNumber>),
    /// `values` of `NumberInRange`/`NumberNotInRange`: inclusive `[low, high]` pairs.
    Ranges(Vec<(PolicyNumber, PolicyNumber)>),
    /// `value` of `BoolEquals`.
    Bool(bool),
    /// `values` of the `String*` operators.
    Strings(Vec<String>),
}

/// One validated advanced filter entry.
#[derive(Debug, Clone, PartialEq)]
pub struct AdvancedFilter {
    /// The entry's JSON Pointer.
    pub pointer: String,
    /// The operator.
    pub operator: Operator,
    /// The key as written.
    pub key: String,
    /// The operand.
    pub operand: Operand,
}

/// A validated policy (the subscription's `filter` object, EG-1).
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The event schema (an option, not part of the filter object).
    pub schema: Schema,
    /// The allowed event types; `None` when every type passes (absent, `null`, `[]`, or a list
    /// holding `All`: EG-5, EG-6, EG-8).
    pub event_types: Option<Vec<String>>,
    /// `subjectBeginsWith` (`""` = no condition).
    pub subject_begins_with: String,
    /// `subjectEndsWith` (`""` = no condition).
    pub subject_ends_with: String,
    /// `isSubjectCaseSensitive`.
    pub subject_case_sensitive: bool,
    /// `enableAdvancedFilteringOnArrays`.
    pub arrays: bool,
    /// `advancedFilters`, in policy order.
    pub filters: Vec<AdvancedFilter>,
}

/// Parses and validates a policy, collecting every error (EG-40, EG-40a, EG-41).
pub fn parse(policy: &Value, schema: Schema) -> Result<Policy, CompileError> {
    Arena::with_local(|arena| parse_ref(arena.value(policy), schema))
}

/// Parses and validates a policy read as a borrowed tree, collecting every error (EG-40,
/// EG-40a, EG-41).
pub fn parse_ref(policy: ValueRef<'_>, schema: Schema) -> Result<Policy, CompileError> {
    let members = policy;
    let ValueRef::Object(_) = members else {
        return Err(CompileError::one(
            CODE,
            "",
            "an Event Grid filter must be a JSON object",
        ));
    };
    let mut errors = Vec::new();
    let event_types = parse_event_types(members.get("includedEventTypes"), &mut errors);
    let subject_begins_with = string_member(members, "subjectBeginsWith", &mut errors);
    let subject_ends_with = string_member(members, "subjectEndsWith", &mut errors);
    let subject_case_sensitive = bool_member(members, "isSubjectCaseSensitive", &mut errors);
    let arrays = bool_member(members, "enableAdvancedFilteringOnArrays", &mut errors);
    let filters = parse_filters(members.get("advancedFilters"), &mut errors);
    if errors.is_empty() {
        Ok(Policy {
            schema,
            event_types,
            subject_begins_with,
            subject_ends_with,
            subject_case_sensitive,
            arrays,
            filters,
        })
    } else {
        Err(errors.into())
    }
}

/// EG-5..EG-8, EG-40.10.
fn parse_event_types(
    value: Option<ValueRef<'_>>,
    errors: &mut Vec<PolicyError>,
) -> Option<Vec<String>> {
    let at = "/includedEventTypes";
    let items = match value {
        None | Some(ValueRef::Null) => return None,
        Some(ValueRef::Array(items)) => items,
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                at,
                "`includedEventTypes` must be null or an array of event type strings",
            ));
            return None;
        }
    };
    let mut types = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            ValueRef::String(s) => types.push((*s).to_owned()),
            _ => errors.push(PolicyError::new(
                CODE,
                pointer::index(at, i),
                "each entry of `includedEventTypes` must be an event type string",
            )),
        }
    }
    // EG-8 [decision]: `[]` is like absent; EG-6/EG-8: `All` (any case) admits every type.
    let all = types.is_empty() || types.iter().any(|t| fold(t) == "ALL");
    (!all).then_some(types)
}

/// The string member `name` of the policy object `members`.
fn string_member(members: ValueRef<'_>, name: &str, errors: &mut Vec<PolicyError>) -> String {
    match members.get(name) {
        None => String::new(),
        Some(ValueRef::String(s)) => s.to_owned(),
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                pointer::push("", name),
                format!("`{name}` must be a string"),
            ));
            String::new()
        }
    }
}

/// The boolean member `name` of the policy object `members`.
fn bool_member(members: ValueRef<'_>, name: &str, errors: &mut Vec<PolicyError>) -> bool {
    match members.get(name) {
        None => false,
        Some(ValueRef::Bool(b)) => b,
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                pointer::push("", name),
                format!("`{name}` must be true or false"),
            ));
            false
        }
    }
}

/// EG-40 items 1-9.
fn parse_filters(
    value: Option<ValueRef<'_>>,
    errors: &mut Vec<PolicyError>,
) -> Vec<AdvancedFilter> {
    let at = "/advancedFilters";
    let items = match value {
        None => return Vec::new(),
        Some(ValueRef::Array(items)) => items,
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                at,
                "`advancedFilters` must be an array of filter objects",
            ));
            return Vec::new();
        }
    };
    if items.len() > MAX_FILTERS {
        errors.push(PolicyError::new(
            LIMIT_CODE,
            pointer::index(at, MAX_FILTERS),
            format!(
                "{} advanced filters exceed the limit of {MAX_FILTERS} per subscription",
                items.len()
            ),
        ));
    }
    let mut values_seen = 0usize;
    let mut filters = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = pointer::index(at, i);
        if let Some(f) = parse_filter(item, &at, &mut values_seen, errors) {
            filters.push(f);
        }
    }
    filters
}

/// Counts one filter value toward EG-40.8; reports the first value over the limit.
fn count_value(values_seen: &mut usize, at: &Lazy<'_>, errors: &mut Vec<PolicyError>) {
    *values_seen += 1;
    if *values_seen == MAX_VALUES + 1 {
        errors.push(PolicyError::new(
            LIMIT_CODE,
            at,
            format!(
                "more than {MAX_VALUES} filter values across all advanced filters exceed the limit of {MAX_VALUES}"
            ),
        ));
    }
}

fn parse_filter(
    item: &ValueRef<'_>,
    at: &str,
    values_seen: &mut usize,
    errors: &mut Vec<PolicyError>,
) -> Option<AdvancedFilter> {
    let entry = *item;
    let ValueRef::Object(_) = entry else {
        errors.push(PolicyError::new(
            CODE,
            at,
            "an advanced filter must be an object {\"operatorType\", \"key\", \"value\" or \"values\"}",
        ));
        return None;
    };
    let before = errors.len();
    // The pointers of the operator and the key name only their errors: written when one is
    // reported.
    let filter_at = Lazy::new(at);
    let op_at = filter_at.token("operatorType");
    let operator = match entry.get("operatorType") {
        None => {
            errors.push(PolicyError::new(
                CODE,
                &op_at,
                "`operatorType` is missing: every advanced filter needs an operator",
            ));
            None
        }
        Some(ValueRef::String(name)) => {
            let op = Operator::from_name(name);
            if op.is_none() {
                let names: Vec<&str> = Operator::ALL.iter().map(|o| o.name()).collect();
                errors.push(PolicyError::new(
                    CODE,
                    &op_at,
                    format!(
                        "unknown operator `{}` in `operatorType`{} (operator names are case-sensitive: {})",
                        excerpt(name),
                        crate::error::suggestion(name, &names),
                        names.join(", ")
                    ),
                ));
            }
            op
        }
        Some(other) => {
            errors.push(PolicyError::new(
                CODE,
                &op_at,
                format!(
                    "`operatorType` must be a string naming an operator, found {}",
                    excerpt(other)
                ),
            ));
            None
        }
    };
    let key_at = filter_at.token("key");
    let key = match entry.get("key") {
        Some(ValueRef::String(k)) if !k.is_empty() => Some(k.to_owned()),
        Some(ValueRef::String(_)) => {
            errors.push(PolicyError::new(
                CODE,
                &key_at,
                "the filter `key` must not be empty",
            ));
            None
        }
        None => {
            errors.push(PolicyError::new(
                CODE,
                &key_at,
                "the filter `key` is missing: name the event field to filter on",
            ));
            None
        }
        Some(_) => {
            errors.push(PolicyError::new(
                CODE,
                &key_at,
                "the filter `key` must be a string",
            ));
            None
        }
    };
    let operator = operator?;
    let operand = parse_operand(operator, entry, at, values_seen, errors);
    if errors.len() != before {
        return None;
    }
    Some(AdvancedFilter {
        pointer: at.to_owned(),
        operator,
        key: key?,
        operand: operand?,
    })
}

fn policy_number(v: &ValueRef<'_>) -> Option<PolicyNumber> {
    let ValueRef::Number(n) = v else {
        return None;
    };
    n.to_decimal().map(|value| PolicyNumber {
        value,
        text: n.as_str().to_owned(),
    })
}

/// The operand of `operator` in the filter object `entry`.
fn parse_operand(
    operator: Operator,
    entry: ValueRef<'_>,
    at: &str,
    values_seen: &mut usize,
    errors: &mut Vec<PolicyError>,
) -> Option<Operand> {
    let name = operator.name();
    let kind = operator.operand();
    // The pointers of the operand and its values name only their errors: written when one is
    // reported.
    let filter_at = Lazy::new(at);
    match kind {
        // EG-41: the null operators ignore `value`/`values` and count no values.
        OperandKind::None => Some(Operand::None),
        OperandKind::Number | OperandKind::Bool => {
            let at = filter_at.token("value");
            let Some(v) = entry.get("value") else {
                errors.push(PolicyError::new(
                    CODE,
                    &at,
                    format!("`{name}` needs a `value` member"),
                ));
                return None;
            };
            count_value(values_seen, &at, errors);
            match (kind, v) {
                (OperandKind::Bool, ValueRef::Bool(b)) => Some(Operand::Bool(b)),
                (OperandKind::Number, ValueRef::Number(_)) => {
                    let n = policy_number(&v);
                    if n.is_none() {
                        errors.push(PolicyError::new(
                            CODE,
                            &at,
                            format!(
                                "the `value` {} is outside the supported number range",
                                excerpt(v)
                            ),
                        ));
                    }
                    n.map(Operand::Number)
                }
                _ => {
                    let want = if kind == OperandKind::Bool {
                        "true or false"
                    } else {
                        "a JSON number"
                    };
                    errors.push(PolicyError::new(
                        CODE,
                        &at,
                        format!(
                            "the `value` of `{name}` must be {want}, found {}",
                            excerpt(v)
                        ),
                    ));
                    None
                }
            }
        }
        OperandKind::Numbers | OperandKind::Strings | OperandKind::Ranges => {
            let at = filter_at.token("values");
            let items = match entry.get("values") {
                Some(ValueRef::Array(items)) if !items.is_empty() => items,
                Some(ValueRef::Array(_)) => {
                    errors.push(PolicyError::new(
                        CODE,
                        &at,
                        format!("the `values` of `{name}` must not be empty"),
                    ));
                    return None;
                }
                None => {
                    errors.push(PolicyError::new(
                        CODE,
                        &at,
                        format!("`{name}` needs a `values` array"),
                    ));
                    return None;
                }
                Some(other) => {
                    errors.push(PolicyError::new(
                        CODE,
                        &at,
                        format!(
                            "the `values` of `{name}` must be an array, found {}",
                            excerpt(other)
                        ),
                    ));
                    return None;
                }
            };
            let before = errors.len();
            let mut numbers = Vec::new();
            let mut strings = Vec::new();
            let mut ranges = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let at = at.index(i);
                count_value(values_seen, &at, errors);
                match kind {
                    OperandKind::Numbers => match (item, policy_number(item)) {
                        (_, Some(n)) => numbers.push(n),
                        (ValueRef::Number(_), None) => errors.push(PolicyError::new(
                            CODE,
                            &at,
                            format!(
                                "the value {} is outside the supported number range",
                                excerpt(item)
                            ),
                        )),
                        _ => errors.push(PolicyError::new(
                            CODE,
                            &at,
                            format!(
                                "the `values` of `{name}` must be numbers, found {}",
                                excerpt(item)
                            ),
                        )),
                    },
                    OperandKind::Strings => match item {
                        ValueRef::String(s) => {
                            let chars = s.chars().count();
                            if chars > MAX_STRING_CHARS {
                                errors.push(PolicyError::new(
                                    LIMIT_CODE,
                                    &at,
                                    format!(
                                        "a string filter value of {chars} characters exceeds the limit of {MAX_STRING_CHARS} characters"
                                    ),
                                ));
                            } else {
                                strings.push((*s).to_owned());
                            }
                        }
                        _ => errors.push(PolicyError::new(
                            CODE,
                            &at,
                            format!(
                                "the `values` of `{name}` must be strings, found {}",
                                excerpt(item)
                            ),
                        )),
                    },
                    _ => {
                        if let Some(pair) = parse_range(item, &at, errors) {
                            ranges.push(pair);
                        }
                    }
                }
            }
            if errors.len() != before {
                return None;
            }
            Some(match kind {
                OperandKind::Numbers => Operand::Numbers(numbers),
                OperandKind::Strings => Operand::Strings(strings),
                _ => Operand::Ranges(ranges),
            })
        }
    }
}

/// EG-40.6: exactly two numbers, `low <= high` [decision].
fn parse_range(
    item: &ValueRef<'_>,
    at: &Lazy<'_>,
    errors: &mut Vec<PolicyError>,
) -> Option<(PolicyNumber, PolicyNumber)> {
    let ValueRef::Array(bounds) = item else {
        errors.push(PolicyError::new(
            CODE,
            at,
            format!(
                "each range value must be an array [low, high] of two numbers, found {}",
                excerpt(item)
            ),
        ));
        return None;
    };
    let [low, high] = bounds else {
        errors.push(PolicyError::new(
            CODE,
            at,
            format!(
                "a range value must hold exactly two numbers [low, high], found {} elements",
                bounds.len()
            ),
        ));
        return None;
    };
    let bound = |v: &ValueRef<'_>, i: usize, errors: &mut Vec<PolicyError>| {
        let n = policy_number(v);
        if n.is_none() {
            errors.push(PolicyError::new(
                CODE,
                &at.index(i),
                format!(
                    "a range bound must be a number (within the supported range), found {}",
                    excerpt(v)
                ),
            ));
        }
        n
    };
    let (low, high) = (bound(low, 0, errors), bound(high, 1, errors));
    let (low, high) = (low?, high?);
    if low.value > high.value {
        errors.push(PolicyError::new(
            CODE,
            at,
            format!(
                "a range value's low bound {} is greater than its high bound {}",
                excerpt(&low.text),
                excerpt(&high.text)
            ),
        ));
        return None;
    }
    Some((low, high))
}

/// Resolves a filter key at compile time (EG-15..EG-19); `None` when it names nothing.
///
/// Event Grid schema: one segment equal, ignoring ASCII case, to `id`, `topic`, `subject`,
/// `eventType` or `dataVersion` names that envelope member (EG-16). CloudEvents: one segment names
/// the top-level attribute of that name (EG-17), except `eventType` (any case), which is undefined
/// on a CloudEvent **[decision EG-19]**. In both, a first segment `data` (any case) walks into
/// `data` by exact member names (EG-18); `data` alone is the whole `data` value. Member names are
/// kept in a canonical spelling (`eventType`, `dataVersion`; CloudEvents attributes in ASCII lower
/// case) so that every spelling of a key interns to one slot.
pub fn resolve_key(schema: Schema, key: &str) -> Option<Key> {
    let mut segments = key.split('.');
    let first = segments.next()?;
    let rest: Vec<&str> = segments.collect();
    if first.eq_ignore_ascii_case("data") {
        return Some(Key::EventData(
            rest.into_iter().map(Box::from).collect::<Vec<_>>().into(),
        ));
    }
    if !rest.is_empty() {
        return None;
    }
    match schema {
        Schema::EventGrid => {
            let canonical = ["id", "topic", "subject", "eventType", "dataVersion"]
                .into_iter()
                .find(|name| name.eq_ignore_ascii_case(first))?;
            Some(Key::EventMember(canonical.into()))
        }
        Schema::CloudEvents => {
            if first.eq_ignore_ascii_case("eventtype") {
                return None;
            }
            Some(Key::EventMember(first.to_ascii_lowercase().into()))
        }
    }
}

/// Strings folded with EG-31's simple uppercase mapping, sorted and deduplicated.
fn folded(values: &[String]) -> Vec<Arc<str>> {
    let mut out: Vec<Arc<str>> = values.iter().map(|v| fold(v).into()).collect();
    out.sort();
    out.dedup();
    out
}

fn interval(lo: Option<(&PolicyNumber, bool)>, hi: Option<(&PolicyNumber, bool)>) -> DecInterval {
    let text = match (lo, hi) {
        (Some((l, true)), Some((h, true))) if l.value == h.value => format!("{{{}}}", l.text),
        _ => format!(
            "{}{}, {}{}",
            match lo {
                Some((_, true)) => "[",
                _ => "(",
            },
            lo.map_or("-inf", |(l, _)| l.text.as_str()),
            hi.map_or("+inf", |(h, _)| h.text.as_str()),
            match hi {
                Some((_, true)) => "]",
                _ => ")",
            },
        ),
    };
    DecInterval {
        lo: lo.map(|(l, inc)| (l.value.clone(), inc)),
        hi: hi.map(|(h, inc)| (h.value.clone(), inc)),
        text: text.into(),
    }
}

/// The predicate of an operator's positive twin: "this candidate hits" (EG-21 table, EG-31,
/// EG-33). `None` for the null operators.
pub fn hit_predicate(operator: Operator, operand: &Operand) -> Option<Pred> {
    use Operator::*;
    let strings = |op: StrOp| match operand {
        Operand::Strings(values) => Some(Pred::Str {
            op,
            case: Case::Fold,
            values: folded(values),
        }),
        _ => None,
    };
    match (operator, operand) {
        (NumberIn | NumberNotIn, Operand::Numbers(values)) => Some(Pred::Dec(
            values
                .iter()
                .map(|v| interval(Some((v, true)), Some((v, true))))
                .collect(),
        )),
        (NumberLessThan, Operand::Number(v)) => {
            Some(Pred::Dec(vec![interval(None, Some((v, false)))]))
        }
        (NumberLessThanOrEquals, Operand::Number(v)) => {
            Some(Pred::Dec(vec![interval(None, Some((v, true)))]))
        }
        (NumberGreaterThan, Operand::Number(v)) => {
            Some(Pred::Dec(vec![interval(Some((v, false)), None)]))
        }
        (NumberGreaterThanOrEquals, Operand::Number(v)) => {
            Some(Pred::Dec(vec![interval(Some((v, true)), None)]))
        }
        (NumberInRange | NumberNotInRange, Operand::Ranges(pairs)) => Some(Pred::Dec(
            pairs
                .iter()
                .map(|(l, h)| interval(Some((l, true)), Some((h, true))))
                .collect(),
        )),
        (BoolEquals, Operand::Bool(b)) => Some(Pred::Bool(*b)),
        (StringContains | StringNotContains, _) => strings(StrOp::Contains),
        (StringBeginsWith | StringNotBeginsWith, _) => strings(StrOp::Prefix),
        (StringEndsWith | StringNotEndsWith, _) => strings(StrOp::Suffix),
        (StringIn | StringNotIn, _) => strings(StrOp::Eq),
        _ => None,
    }
}

/// Lowers one advanced filter (EG-20..EG-25).
///
/// With `P` = "some leaf of the slot hits" (leaves of other types never hit, EG-21) and `D` the
/// shapes a value is judged on (scalar and object, plus array when `arrays` is set):
/// - positive: `P`, and without `arrays` also `shape scalar` (EG-24);
/// - negative, matching missing (`NumberNotIn`, `StringNotIn`, `NumberNotInRange`):
///   `shape D|absent|null ∧ ¬P`;
/// - negative, failing missing (`StringNot{Contains,BeginsWith,EndsWith}`): `shape D ∧ ¬P`;
/// - `IsNullOrUndefined`: `shape absent|null`; `IsNotNull`: `shape scalar|array|object`.
///
/// A key naming nothing (EG-19) is the constant [`Operator::on_missing`].
pub fn lower_filter(filter: &AdvancedFilter, schema: Schema, arrays: bool) -> Node {
    let at = filter.pointer.as_str();
    let op = filter.operator;
    let Some(key) = resolve_key(schema, &filter.key) else {
        return Node::constant(op.on_missing(), at);
    };
    let judged = if arrays {
        Shapes::SCALAR.union(Shapes::ARRAY).union(Shapes::OBJECT)
    } else {
        Shapes::SCALAR.union(Shapes::OBJECT)
    };
    let shape = |s: Shapes| Node::test(key.clone(), Pred::Shape(s), at);
    let hit = || {
        hit_predicate(op, &filter.operand).map_or_else(
            || Node::constant(false, at),
            |p| Node::test(key.clone(), p, at),
        )
    };
    match op.polarity() {
        Polarity::NullOrUndefined => shape(Shapes::ABSENT.union(Shapes::NULL)),
        Polarity::NotNull => shape(Shapes::SCALAR.union(Shapes::ARRAY).union(Shapes::OBJECT)),
        Polarity::Positive if arrays => hit(),
        Polarity::Positive => Node::and(vec![shape(Shapes::SCALAR), hit()], at),
        Polarity::NegativeMatchesMissing => Node::and(
            vec![
                shape(judged.union(Shapes::ABSENT).union(Shapes::NULL)),
                Node::negation(hit()),
            ],
            at,
        ),
        Polarity::NegativeFailsMissing => Node::and(vec![shape(judged), Node::negation(hit())], at),
    }
}

/// Lowers a validated policy to IR (EG-2: the three kinds ANDed).
pub fn lower_policy(policy: &Policy) -> Node {
    let mut parts = Vec::new();
    // EG-5..EG-8: the event type is one string equal (ignoring case) to a listed type.
    if let Some(types) = &policy.event_types {
        let at = "/includedEventTypes";
        let key = Key::EventMember(policy.schema.event_type_member().into());
        parts.push(Node::and(
            vec![
                Node::test(key.clone(), Pred::Shape(Shapes::SCALAR), at),
                Node::test(
                    key,
                    Pred::Str {
                        op: StrOp::Eq,
                        case: Case::Fold,
                        values: folded(types),
                    },
                    at,
                ),
            ],
            at,
        ));
    }
    // EG-9..EG-12: literal prefix/suffix on a string subject.
    let subject = Key::EventMember("subject".into());
    let case = if policy.subject_case_sensitive {
        Case::Sensitive
    } else {
        Case::Fold
    };
    let mut subject_tests = Vec::new();
    for (value, op, name) in [
        (
            &policy.subject_begins_with,
            StrOp::Prefix,
            "subjectBeginsWith",
        ),
        (&policy.subject_ends_with, StrOp::Suffix, "subjectEndsWith"),
    ] {
        if !value.is_empty() {
            let values = match case {
                Case::Fold => vec![fold(value).into()],
                Case::Sensitive => vec![value.as_str().into()],
            };
            subject_tests.push(Node::test(
                subject.clone(),
                Pred::Str { op, case, values },
                pointer::push("", name),
            ));
        }
    }
    if !subject_tests.is_empty() {
        let at = subject_tests
            .first()
            .map(|n| n.origin.clone())
            .unwrap_or_default();
        subject_tests.insert(
            0,
            Node::test(subject, Pred::Shape(Shapes::SCALAR), at.clone()),
        );
        parts.push(Node::and(subject_tests, at));
    }
    // EG-13..EG-25.
    for f in &policy.filters {
        parts.push(lower_filter(f, policy.schema, policy.arrays));
    }
    Node::and(parts, "")
}

/// Parses, validates and lowers.
pub(crate) fn lower(policy: &Value, options: EventGridOptions) -> Result<Node, CompileError> {
    Ok(lower_policy(&parse(policy, options.schema)?))
}

/// Reads, validates and lowers policy text: what reading it into a value
/// ([`parse_policy_text`](super::parse_policy_text)) and then [`lower`] do, with the same errors,
/// through a borrowed tree in this thread's arena (no allocation for the tree, nothing to drop).
pub(crate) fn lower_text(text: &str, options: &Options) -> Result<Node, CompileError> {
    let policy = Arena::with_local(|arena| {
        parse_ref(
            super::parse_policy_ref(super::Dialect::EventGrid, text, options, arena)?,
            options.eventgrid().schema,
        )
    })?;
    Ok(lower_policy(&policy))
}

/// Reads one line of `filtervm match` input: one event as JSON text, checked here and kept as
/// its bytes ([`Message::Body`]): binding reads only what the filter reads, at any depth.
pub fn message_from_line(line: &str) -> Result<Message, MessageError> {
    filtervm_vm::json::validate(line.as_bytes(), filtervm_vm::json::LoneSurrogates::Replace)
        .map_err(|e| MessageError::new("", format!("an event must be JSON text: {e}")))?;
    Ok(Message::Body(line.as_bytes().to_vec()))
}

#[cfg(test)]
mod tests;

//! Reference validation and evaluation of `eventgrid` policies
//! (`docs/dialects/eventgrid-filters.md`), written the plain way: the filter JSON is read as it
//! stands and applied to the event JSON.
//!
//! Nothing here comes from the compiler or the VM: the checks of EG-40 (with EG-40a's words), key
//! resolution, ignore-case comparison (simple uppercase mapping, EG-31) and exact decimal
//! comparison (EG-33) are written again.

use super::json::{Map, Value};
use super::{Codes, ReferenceError, Rejection, options, pointer};
use std::cmp::Ordering;

/// Every EG-40 violation but a limit.
const INVALID: &str = "EVENTGRID_INVALID_FILTER";
/// EG-40 items 7-9, and policy text over 256 KiB.
const LIMIT: &str = "EVENTGRID_LIMIT_EXCEEDED";

/// The codes of policy text errors.
pub const CODES: Codes = Codes {
    invalid: INVALID,
    limit: LIMIT,
};

/// EG-40.7: most advanced filter entries; EG-40.8: most filter values across them.
const MAX_ENTRIES: usize = 25;
/// EG-40.8.
const MAX_VALUES: usize = 25;
/// EG-40.9: most characters in a string filter value.
const MAX_CHARS: usize = 512;

/// What an operator's operand is (EG-13).
enum Operand {
    /// `value`: a number.
    Number,
    /// `value`: a boolean.
    Bool,
    /// `values`: numbers.
    Numbers,
    /// `values`: strings.
    Strings,
    /// `values`: `[low, high]` pairs.
    Ranges,
    /// The null operators: nothing (EG-41).
    Nothing,
}

/// The 19 operators of EG-13 and their operands.
fn operand_of(operator: &str) -> Option<Operand> {
    Some(match operator {
        "NumberIn" | "NumberNotIn" => Operand::Numbers,
        "NumberLessThan"
        | "NumberGreaterThan"
        | "NumberLessThanOrEquals"
        | "NumberGreaterThanOrEquals" => Operand::Number,
        "NumberInRange" | "NumberNotInRange" => Operand::Ranges,
        "BoolEquals" => Operand::Bool,
        "StringContains"
        | "StringNotContains"
        | "StringBeginsWith"
        | "StringNotBeginsWith"
        | "StringEndsWith"
        | "StringNotEndsWith"
        | "StringIn"
        | "StringNotIn" => Operand::Strings,
        "IsNullOrUndefined" | "IsNotNull" => Operand::Nothing,
        _ => return None,
    })
}

fn reject<T>(code: &'static str, at: &str, message: impl Into<String>) -> Result<T, Rejection> {
    Err(Rejection::new(code, at, message))
}

/// Whether the options choose the CloudEvents schema (`FORMAT.md`: `schema` is `EventGridSchema`,
/// the default, or `CloudEventSchemaV1_0`).
fn cloud_events(options: &Value) -> Result<bool, Rejection> {
    let members = options::members(options, &["schema"])?;
    Ok(options::one_of(
        members,
        "schema",
        &["EventGridSchema", "CloudEventSchemaV1_0"],
    )? == Some("CloudEventSchemaV1_0"))
}

/// Checks options and policy (EG-1, EG-40, EG-41): the first violation.
pub fn validate(options: &Value, policy: &Value) -> Result<(), Rejection> {
    cloud_events(options)?;
    let Value::Object(filter) = policy else {
        return reject(INVALID, "", "an Event Grid filter is a JSON object (EG-1)");
    };
    // EG-40.10.
    match filter.get("includedEventTypes") {
        None | Some(Value::Null) => {}
        Some(Value::Array(types)) => {
            if let Some(i) = types.iter().position(|t| !t.is_string()) {
                return reject(
                    INVALID,
                    &pointer::index("/includedEventTypes", i),
                    "`includedEventTypes` holds event type strings",
                );
            }
        }
        Some(_) => {
            return reject(
                INVALID,
                "/includedEventTypes",
                "`includedEventTypes` is null or an array of strings",
            );
        }
    }
    for name in ["subjectBeginsWith", "subjectEndsWith"] {
        if filter.get(name).is_some_and(|v| !v.is_string()) {
            return reject(
                INVALID,
                &pointer::push("", name),
                format!("`{name}` is a string"),
            );
        }
    }
    for name in ["isSubjectCaseSensitive", "enableAdvancedFilteringOnArrays"] {
        if filter.get(name).is_some_and(|v| v.as_bool().is_none()) {
            return reject(
                INVALID,
                &pointer::push("", name),
                format!("`{name}` is true or false"),
            );
        }
    }
    // EG-40.1.
    let entries = match filter.get("advancedFilters") {
        None => return Ok(()),
        Some(Value::Array(entries)) => entries,
        Some(_) => {
            return reject(
                INVALID,
                "/advancedFilters",
                "`advancedFilters` is an array of filter objects",
            );
        }
    };
    // EG-40.7.
    if entries.len() > MAX_ENTRIES {
        return reject(
            LIMIT,
            &pointer::index("/advancedFilters", MAX_ENTRIES),
            format!(
                "{} advanced filters exceed the limit of {MAX_ENTRIES}",
                entries.len()
            ),
        );
    }
    let mut values = 0usize;
    for (i, entry) in entries.iter().enumerate() {
        check_entry(entry, &pointer::index("/advancedFilters", i), &mut values)?;
    }
    Ok(())
}

/// Counts one filter value (EG-40.8); the 26th is an error.
fn count(values: &mut usize, at: &str) -> Result<(), Rejection> {
    *values += 1;
    if *values > MAX_VALUES {
        return reject(
            LIMIT,
            at,
            format!(
                "more than {MAX_VALUES} filter values across all advanced filters exceed the limit of {MAX_VALUES}"
            ),
        );
    }
    Ok(())
}

/// EG-40 items 1-6, 8, 9 for one entry.
fn check_entry(entry: &Value, at: &str, values: &mut usize) -> Result<(), Rejection> {
    let Value::Object(entry) = entry else {
        return reject(INVALID, at, "an advanced filter entry is an object");
    };
    let op_at = pointer::push(at, "operatorType");
    let operand = match entry.get("operatorType") {
        None => return reject(INVALID, &op_at, "the operator (`operatorType`) is missing"),
        Some(Value::String(name)) => match operand_of(name) {
            Some(operand) => operand,
            None => return reject(INVALID, &op_at, format!("unknown operator `{name}`")),
        },
        Some(_) => return reject(INVALID, &op_at, "the operator (`operatorType`) is a string"),
    };
    let key_at = pointer::push(at, "key");
    match entry.get("key") {
        Some(Value::String(k)) if !k.is_empty() => {}
        Some(Value::String(_)) => return reject(INVALID, &key_at, "the key is empty"),
        None => return reject(INVALID, &key_at, "the key is missing"),
        Some(_) => return reject(INVALID, &key_at, "the key is a string"),
    }
    let value_at = pointer::push(at, "value");
    let values_at = pointer::push(at, "values");
    match operand {
        Operand::Nothing => Ok(()),
        Operand::Number | Operand::Bool => {
            let Some(value) = entry.get("value") else {
                return reject(INVALID, &value_at, "the operator needs a `value`");
            };
            count(values, &value_at)?;
            let right = match operand {
                Operand::Number => matches!(value, Value::Number(_)),
                _ => matches!(value, Value::Bool(_)),
            };
            if right {
                Ok(())
            } else {
                reject(INVALID, &value_at, "the `value` has the wrong JSON type")
            }
        }
        Operand::Numbers | Operand::Strings | Operand::Ranges => {
            let items = match entry.get("values") {
                Some(Value::Array(items)) if !items.is_empty() => items,
                Some(Value::Array(_)) => {
                    return reject(INVALID, &values_at, "the `values` array is empty");
                }
                None => return reject(INVALID, &values_at, "the operator needs `values`"),
                Some(_) => return reject(INVALID, &values_at, "the `values` member is an array"),
            };
            for (i, item) in items.iter().enumerate() {
                let item_at = pointer::index(&values_at, i);
                count(values, &item_at)?;
                match operand {
                    Operand::Numbers if !matches!(item, Value::Number(_)) => {
                        return reject(INVALID, &item_at, "the `values` are numbers");
                    }
                    Operand::Strings => match item {
                        Value::String(s) if s.chars().count() > MAX_CHARS => {
                            return reject(
                                LIMIT,
                                &item_at,
                                format!(
                                    "a string filter value is longer than the limit of {MAX_CHARS} characters"
                                ),
                            );
                        }
                        Value::String(_) => {}
                        _ => return reject(INVALID, &item_at, "the `values` are strings"),
                    },
                    Operand::Ranges => check_range(item, &item_at)?,
                    _ => {}
                }
            }
            Ok(())
        }
    }
}

/// EG-40.6: `[low, high]`, two numbers, `low <= high` (every message says `range`).
fn check_range(item: &Value, at: &str) -> Result<(), Rejection> {
    let Some([low, high]) = item.as_array().map(Vec::as_slice) else {
        return reject(
            INVALID,
            at,
            "a range value is an array [low, high] of two numbers",
        );
    };
    let (Value::Number(low), Value::Number(high)) = (low, high) else {
        return reject(INVALID, at, "a range bound is a number");
    };
    if compare_numbers(low.as_str(), high.as_str()) == Some(Ordering::Greater) {
        return reject(INVALID, at, "a range's low bound is above its high bound");
    }
    Ok(())
}

/// Evaluates a valid policy against an event (EG-2: event type AND subject AND every filter).
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let cloud = cloud_events(options)?;
    let filter = policy
        .as_object()
        .ok_or_else(|| ReferenceError::failed("the policy is not an object"))?;
    let event = message.as_object();

    // EG-5..EG-8.
    if let Some(Value::Array(types)) = filter.get("includedEventTypes") {
        let listed: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
        let everything = listed.is_empty() || listed.iter().any(|t| same_ignoring_case(t, "all"));
        if !everything {
            let member_name = if cloud { "type" } else { "eventType" };
            let event_type = event.and_then(|e| member(e, member_name));
            let Some(Value::String(event_type)) = event_type else {
                return Ok(false);
            };
            if !listed.iter().any(|t| same_ignoring_case(t, event_type)) {
                return Ok(false);
            }
        }
    }

    // EG-9..EG-12.
    let begins = filter
        .get("subjectBeginsWith")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ends = filter
        .get("subjectEndsWith")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !begins.is_empty() || !ends.is_empty() {
        let Some(Value::String(subject)) = event.and_then(|e| member(e, "subject")) else {
            return Ok(false);
        };
        let sensitive = filter.get("isSubjectCaseSensitive") == Some(&Value::Bool(true));
        let (subject, begins, ends) = if sensitive {
            (subject.clone(), begins.to_owned(), ends.to_owned())
        } else {
            (upper(subject), upper(begins), upper(ends))
        };
        if !subject.starts_with(&begins) || !subject.ends_with(&ends) {
            return Ok(false);
        }
    }

    // EG-13..EG-25.
    let arrays = filter.get("enableAdvancedFilteringOnArrays") == Some(&Value::Bool(true));
    if let Some(Value::Array(entries)) = filter.get("advancedFilters") {
        for entry in entries {
            let op = entry
                .get("operatorType")
                .and_then(Value::as_str)
                .unwrap_or("");
            let key = entry.get("key").and_then(Value::as_str).unwrap_or("");
            let value = event.and_then(|e| resolve(cloud, e, key));
            if !advanced(op, entry, value, arrays) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// A top-level member: the name exactly as given, else the first member whose name is the same
/// ignoring ASCII case.
fn member<'a>(event: &'a Map, name: &str) -> Option<&'a Value> {
    if let Some(v) = event.get(name) {
        return Some(v);
    }
    let lower = |s: &str| -> String { s.chars().map(|c| c.to_ascii_lowercase()).collect() };
    let wanted = lower(name);
    for (k, v) in event {
        if lower(k) == wanted {
            return Some(v);
        }
    }
    None
}

/// The value a key names in the event; `None` for undefined (EG-15..EG-19).
fn resolve<'a>(cloud: bool, event: &'a Map, key: &str) -> Option<&'a Value> {
    let segments: Vec<&str> = key.split('.').collect();
    let (first, rest) = segments.split_first()?;
    let first = first.to_ascii_lowercase();
    if first == "data" {
        let mut current = member(event, "data")?;
        for segment in rest {
            current = current.as_object()?.get(segment)?;
        }
        return Some(current);
    }
    if !rest.is_empty() {
        return None;
    }
    if cloud {
        // EG-17; EG-19 [decision]: `eventType` names nothing on a CloudEvent.
        if first == "eventtype" {
            return None;
        }
        member(event, &first)
    } else {
        // EG-16: only these envelope members; EG-19: anything else is undefined.
        let name = match first.as_str() {
            "id" => "id",
            "topic" => "topic",
            "subject" => "subject",
            "eventtype" => "eventType",
            "dataversion" => "dataVersion",
            _ => return None,
        };
        member(event, name)
    }
}

/// Evaluates one advanced filter entry on the resolved value (EG-20..EG-25).
fn advanced(op: &str, entry: &Value, value: Option<&Value>, arrays: bool) -> bool {
    let missing = matches!(value, None | Some(Value::Null));
    match op {
        "IsNullOrUndefined" => return missing,
        "IsNotNull" => return !missing,
        _ => {}
    }
    let negative = op.contains("Not");
    if missing {
        // EG-22: only these three negative operators match a missing value.
        return matches!(op, "NumberNotIn" | "StringNotIn" | "NumberNotInRange");
    }
    let Some(value) = value else {
        return false;
    };
    let candidates: Vec<&Value> = match value {
        Value::Array(items) if arrays => items.iter().collect(),
        // EG-24: an array without the flag fails every operator but the null ones.
        Value::Array(_) => return false,
        scalar_or_object => vec![scalar_or_object],
    };
    let positive_twin = op.replacen("Not", "", 1);
    let some_hit = candidates.iter().any(|c| hit(&positive_twin, entry, c));
    if negative { !some_hit } else { some_hit }
}

/// The per-element predicate of a positive operator (§7 table); elements of another type never
/// hit (EG-21).
fn hit(op: &str, entry: &Value, element: &Value) -> bool {
    let values: Vec<Value> = entry
        .get("values")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let single = entry.get("value");
    if op.starts_with("Number") {
        let Value::Number(x) = element else {
            return false;
        };
        let x = x.to_string();
        let cmp = |bound: &Value| -> Option<Ordering> {
            match bound {
                Value::Number(b) => compare_numbers(&x, b.as_str()),
                _ => None,
            }
        };
        return match op {
            "NumberIn" => values.iter().any(|v| cmp(v) == Some(Ordering::Equal)),
            "NumberLessThan" => single.and_then(cmp) == Some(Ordering::Less),
            "NumberGreaterThan" => single.and_then(cmp) == Some(Ordering::Greater),
            "NumberLessThanOrEquals" => {
                matches!(single.and_then(cmp), Some(Ordering::Less | Ordering::Equal))
            }
            "NumberGreaterThanOrEquals" => {
                matches!(
                    single.and_then(cmp),
                    Some(Ordering::Greater | Ordering::Equal)
                )
            }
            "NumberInRange" => values.iter().any(|pair| {
                let Some([low, high]) = pair.as_array().map(Vec::as_slice) else {
                    return false;
                };
                matches!(cmp(low), Some(Ordering::Greater | Ordering::Equal))
                    && matches!(cmp(high), Some(Ordering::Less | Ordering::Equal))
            }),
            _ => false,
        };
    }
    if op == "BoolEquals" {
        return matches!((element, single), (Value::Bool(x), Some(Value::Bool(v))) if x == v);
    }
    let Value::String(x) = element else {
        return false;
    };
    let x = upper(x);
    values.iter().filter_map(Value::as_str).any(|v| {
        let v = upper(v);
        match op {
            "StringContains" => x.contains(&v),
            "StringBeginsWith" => x.starts_with(&v),
            "StringEndsWith" => x.ends_with(&v),
            "StringIn" => x == v,
            _ => false,
        }
    })
}

// ---------------------------------------------------------------------------------------------
// EG-31: ordinal ignore-case with the simple (1:1) uppercase mapping.

/// The simple uppercase of one character: the standard library's uppercase when it is a single
/// character; otherwise (a 1:n full mapping) the character itself, except for the Greek letters
/// with ypogegrammeni, whose simple uppercase (UnicodeData.txt) is the letter with
/// prosgegrammeni.
fn upper_char(c: char) -> char {
    let mut mapped = c.to_uppercase();
    if let (Some(single), None) = (mapped.next(), mapped.next()) {
        return single;
    }
    match c {
        'ᾀ' => 'ᾈ',
        'ᾁ' => 'ᾉ',
        'ᾂ' => 'ᾊ',
        'ᾃ' => 'ᾋ',
        'ᾄ' => 'ᾌ',
        'ᾅ' => 'ᾍ',
        'ᾆ' => 'ᾎ',
        'ᾇ' => 'ᾏ',
        'ᾐ' => 'ᾘ',
        'ᾑ' => 'ᾙ',
        'ᾒ' => 'ᾚ',
        'ᾓ' => 'ᾛ',
        'ᾔ' => 'ᾜ',
        'ᾕ' => 'ᾝ',
        'ᾖ' => 'ᾞ',
        'ᾗ' => 'ᾟ',
        'ᾠ' => 'ᾨ',
        'ᾡ' => 'ᾩ',
        'ᾢ' => 'ᾪ',
        'ᾣ' => 'ᾫ',
        'ᾤ' => 'ᾬ',
        'ᾥ' => 'ᾭ',
        'ᾦ' => 'ᾮ',
        'ᾧ' => 'ᾯ',
        'ᾳ' => 'ᾼ',
        'ῃ' => 'ῌ',
        'ῳ' => 'ῼ',
        other => other,
    }
}

fn upper(s: &str) -> String {
    s.chars().map(upper_char).collect()
}

fn same_ignoring_case(a: &str, b: &str) -> bool {
    upper(a) == upper(b)
}

// ---------------------------------------------------------------------------------------------
// EG-33: exact decimal comparison of JSON number texts.

/// A JSON number as `sign × 0.DIGITS × 10^(written + shift)`, DIGITS without leading or trailing
/// zeros (empty for zero). The written exponent may have any number of digits, so it is kept as
/// text; the shift (where the first significant digit sits) is bounded by the text's length.
#[derive(Debug, PartialEq)]
struct Exact {
    negative: bool,
    digits: String,
    written: Signed,
    shift: i128,
}

/// A signed integer of any size: sign and decimal digits without leading zeros (`""` for 0).
#[derive(Debug, Clone, PartialEq)]
struct Signed {
    negative: bool,
    digits: String,
}

/// Reads JSON number text. `None` when the text is not a number.
fn exact(text: &str) -> Option<Exact> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, written_exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (unsigned.get(..at)?, unsigned.get(at + 1..)?),
        None => (unsigned, "0"),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty()
        || !int_part
            .chars()
            .chain(frac_part.chars())
            .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let exp_digits = written_exponent.trim_start_matches(['+', '-']);
    if exp_digits.is_empty() || !exp_digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let all = format!("{int_part}{frac_part}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_owned();
    if digits.is_empty() {
        return Some(Exact {
            negative: false,
            digits,
            written: Signed {
                negative: false,
                digits: String::new(),
            },
            shift: 0,
        });
    }
    let written_digits = exp_digits.trim_start_matches('0').to_owned();
    Some(Exact {
        negative,
        digits,
        written: Signed {
            negative: written_exponent.starts_with('-') && !written_digits.is_empty(),
            digits: written_digits,
        },
        // 0.DIGITS × 10^exponent: the first significant digit sits `leading` places after the
        // start of int_part ++ frac_part, whose point is after int_part.
        shift: int_part.len() as i128 - leading as i128,
    })
}

/// Compares magnitudes written without leading zeros.
fn cmp_digits(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `a + b` for digit strings, digit by digit from the right.
fn add_digits(a: &str, b: &str) -> String {
    let (a, b): (Vec<u32>, Vec<u32>) = (
        a.chars().rev().filter_map(|c| c.to_digit(10)).collect(),
        b.chars().rev().filter_map(|c| c.to_digit(10)).collect(),
    );
    let mut out = Vec::new();
    let mut carry = 0;
    for i in 0..a.len().max(b.len()) {
        let sum = a.get(i).copied().unwrap_or(0) + b.get(i).copied().unwrap_or(0) + carry;
        out.push(sum % 10);
        carry = sum / 10;
    }
    if carry > 0 {
        out.push(carry);
    }
    let text: String = out
        .iter()
        .rev()
        .filter_map(|&d| char::from_digit(d, 10))
        .collect();
    text.trim_start_matches('0').to_owned()
}

/// `a - b` for digit strings with `a >= b`, digit by digit from the right.
fn subtract_digits(a: &str, b: &str) -> String {
    let (a, b): (Vec<u32>, Vec<u32>) = (
        a.chars().rev().filter_map(|c| c.to_digit(10)).collect(),
        b.chars().rev().filter_map(|c| c.to_digit(10)).collect(),
    );
    let mut out = Vec::new();
    let mut borrow = 0;
    for (i, &x) in a.iter().enumerate() {
        let y = b.get(i).copied().unwrap_or(0) + borrow;
        if x >= y {
            out.push(x - y);
            borrow = 0;
        } else {
            out.push(x + 10 - y);
            borrow = 1;
        }
    }
    let text: String = out
        .iter()
        .rev()
        .filter_map(|&d| char::from_digit(d, 10))
        .collect();
    text.trim_start_matches('0').to_owned()
}

/// `a - b` for integers of any size.
fn difference(a: &Signed, b: &Signed) -> Signed {
    if a.negative != b.negative {
        // a - b = a + (-b): the magnitudes add, and a's sign stays.
        return Signed {
            negative: a.negative,
            digits: add_digits(&a.digits, &b.digits),
        };
    }
    match cmp_digits(&a.digits, &b.digits) {
        Ordering::Equal => Signed {
            negative: false,
            digits: String::new(),
        },
        Ordering::Greater => Signed {
            negative: a.negative,
            digits: subtract_digits(&a.digits, &b.digits),
        },
        Ordering::Less => Signed {
            negative: !a.negative && !b.digits.is_empty(),
            digits: subtract_digits(&b.digits, &a.digits),
        },
    }
}

/// Compares the exponents `x.written + x.shift` and `y.written + y.shift`: the sign of
/// `(x.written - y.written) - (y.shift - x.shift)`. The shifts differ by less than 10^20, so a
/// written difference of more than 30 digits decides alone; a shorter one fits an `i128`.
fn cmp_exponents(x: &Exact, y: &Exact) -> Ordering {
    let written = difference(&x.written, &y.written);
    let shifts = y.shift - x.shift;
    if written.digits.len() > 30 {
        return if written.negative {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let magnitude: i128 = written.digits.parse().unwrap_or(0);
    let written = if written.negative {
        -magnitude
    } else {
        magnitude
    };
    written.cmp(&shifts)
}

/// Compares two JSON number texts by exact value; `None` if either is not a number.
fn compare_numbers(a: &str, b: &str) -> Option<Ordering> {
    let (a, b) = (exact(a)?, exact(b)?);
    let magnitude = |x: &Exact, y: &Exact| -> Ordering {
        match (x.digits.is_empty(), y.digits.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => cmp_exponents(x, y).then_with(|| {
                // Compare digit strings padded with zeros to the same length.
                let width = x.digits.len().max(y.digits.len());
                format!("{:0<width$}", x.digits).cmp(&format!("{:0<width$}", y.digits))
            }),
        }
    };
    Some(match (a.negative, b.negative) {
        (false, false) => magnitude(&a, &b),
        (true, true) => magnitude(&b, &a),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eg_33_exact_number_comparison() {
        assert_eq!(compare_numbers("5", "5.0"), Some(Ordering::Equal));
        assert_eq!(compare_numbers("5e0", "50e-1"), Some(Ordering::Equal));
        assert_eq!(compare_numbers("-0", "0.000"), Some(Ordering::Equal));
        assert_eq!(
            compare_numbers("9007199254740993", "9007199254740992"),
            Some(Ordering::Greater)
        );
        assert_eq!(compare_numbers("-1.5", "-1.25"), Some(Ordering::Less));
        assert_eq!(compare_numbers("0.1", "0.09999"), Some(Ordering::Greater));
        assert_eq!(compare_numbers("1e400", "9e399"), Some(Ordering::Greater));
        assert_eq!(
            compare_numbers("1e99999999999999999999", "1"),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare_numbers("1e99999999999999999999", "10e99999999999999999998"),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare_numbers("1e-99999999999999999999", "1e-99999999999999999998"),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare_numbers("-1e-99999999999999999999", "-1e-99999999999999999998"),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare_numbers("0e99999999999999999999", "0"),
            Some(Ordering::Equal)
        );
    }

    #[test]
    fn eg_31_simple_uppercase() {
        assert_eq!(upper("straße"), "STRAßE");
        assert_eq!(upper("ᾳ"), "ᾼ");
        assert_eq!(upper("ǅ"), "Ǆ");
        assert!(same_ignoring_case("ı", "i"));
        assert!(!same_ignoring_case("\u{212A}", "k"));
    }
}

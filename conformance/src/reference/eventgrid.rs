//! Reference evaluation of `eventgrid` policies (`docs/dialects/eventgrid-filters.md`), written
//! the plain way: the filter JSON is read as it stands and applied to the event JSON.
//!
//! Nothing here comes from the compiler or the VM: key resolution, ignore-case comparison (simple
//! uppercase mapping, EG-31) and exact decimal comparison (EG-33) are written again. The policy
//! is assumed valid (the compiler validated it).

use super::ReferenceError;
use super::json::{Map, Value};
use std::cmp::Ordering;

/// Evaluates a (valid) policy against an event (EG-2: event type AND subject AND every filter).
pub fn evaluate(options: &Value, policy: &Value, message: &Value) -> Result<bool, ReferenceError> {
    let cloud = options.get("schema").and_then(Value::as_str) == Some("CloudEventSchemaV1_0");
    let filter = policy
        .as_object()
        .ok_or_else(|| ReferenceError("the policy is not an object".into()))?;
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

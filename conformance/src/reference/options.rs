//! Dialect options (`conformance/FORMAT.md`: "an object; absent means the dialect's defaults"),
//! checked the plain way: each dialect's `validate` names the options it takes and checks their
//! values; this module checks what every dialect shares.

use super::Rejection;
use super::json::{Map, Value};

/// The code of every options error, in every dialect (the product's `INVALID_OPTIONS`).
pub const INVALID_OPTIONS: &str = "INVALID_OPTIONS";

/// The options as a map of members, each one of `known`: `null` is the defaults (no members), any
/// other non-object is invalid, and so is a member not in `known`.
pub fn members<'a>(options: &'a Value, known: &[&str]) -> Result<Option<&'a Map>, Rejection> {
    let map = match options {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        other => {
            return Err(invalid(
                "",
                format!("options must be a JSON object or null, found {other}"),
            ));
        }
    };
    if let Some((name, _)) = map.iter().find(|(name, _)| !known.contains(&name.as_str())) {
        let takes = if known.is_empty() {
            "this dialect takes no options".to_owned()
        } else {
            format!("this dialect takes {}", known.join(", "))
        };
        return Err(invalid(
            &pointer_to(name),
            format!("unknown option `{name}`: {takes}"),
        ));
    }
    Ok(Some(map))
}

/// The string value of option `name` (absent: `None`), which must be one of `allowed`.
pub fn one_of<'a>(
    map: Option<&'a Map>,
    name: &str,
    allowed: &[&str],
) -> Result<Option<&'a str>, Rejection> {
    let Some(value) = map.and_then(|m| m.get(name)) else {
        return Ok(None);
    };
    match value.as_str() {
        Some(s) if allowed.contains(&s) => Ok(Some(s)),
        _ => Err(invalid(
            &pointer_to(name),
            format!(
                "option `{name}` must be one of {}, found {value}",
                allowed.join(", ")
            ),
        )),
    }
}

/// An options error.
pub fn invalid(pointer: &str, message: impl Into<String>) -> Rejection {
    Rejection::new(INVALID_OPTIONS, pointer, message)
}

/// The JSON Pointer of a top-level member.
fn pointer_to(name: &str) -> String {
    super::pointer::push("", name)
}

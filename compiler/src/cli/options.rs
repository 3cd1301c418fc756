//! `--options JSON`: dialect options as a JSON object, with every member name given once.
//!
//! `serde_json` keeps one of two members with the same name and drops the other without a word,
//! so `{"scope": "MessageBody", "scope": "MessageAttributes"}` would silently run in one scope.
//! A second pass over the text finds such a member (after escapes are decoded, so `"\u0073cope"`
//! is `scope` too) and names it with its JSON Pointer.

use super::Failure;
use filtervm_compiler::error::{JsonTextError, excerpt, pointer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// Reads the text of `--options`: a JSON object without duplicate members.
pub(super) fn parse(text: &str) -> Result<serde_json::Value, Failure> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let e = JsonTextError::new(text, &e);
        Failure::usage(format!("--options is not JSON: {}", e.message))
    })?;
    if !value.is_object() {
        return Err(Failure::usage("--options must be a JSON object"));
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    Unique { pointer: "" }
        .deserialize(&mut reader)
        .map_err(|e| Failure::usage(format!("--options: {e}")))?;
    Ok(value)
}

/// Visits a JSON value at `pointer`, failing on the first object member named twice.
struct Unique<'p> {
    pointer: &'p str,
}

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            let at = pointer::push(self.pointer, &name);
            if !seen.insert(name) {
                return Err(de::Error::custom(format!(
                    "duplicate member at {}: a JSON object names each member once",
                    excerpt(&at)
                )));
            }
            map.next_value_seed(Unique { pointer: &at })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(Unique {
                pointer: &pointer::index(self.pointer, index),
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    // Scalars hold no members. (With `arbitrary_precision`, a number arrives as a one-member
    // map holding its text, which `visit_map` passes through.)
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

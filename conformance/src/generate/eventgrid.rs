//! Generates `eventgrid` filters and events (EG-1..EG-41), in both schemas.
//!
//! Filters: event-type lists (with `All` in any case and case variants, EG-6..EG-8), subject
//! prefixes and suffixes in both case modes (EG-9..EG-12), the array flag (EG-21, EG-24) and
//! advanced filters with all 19 operators on envelope keys in any case, `data` paths, the bare
//! `data` key and unknown keys (EG-15..EG-19), within the 25-entry/25-value limits (EG-40).
//! Events: missing, null, wrong-typed and array values, numbers that differ only beyond binary64
//! precision (EG-33), non-ASCII case pairs (EG-31), empty strings (EG-32).

use super::{Case, Source, harvest, word};
use crate::json;
use crate::reference::json::{Map, Value};
use filtervm_compiler::Dialect;

/// Event types and subjects share these (case variants, empty, wildcard-looking).
const TYPES: &[&str] = &[
    "Microsoft.Storage.BlobCreated",
    "microsoft.storage.blobcreated",
    "Microsoft.Storage",
    "Contoso.Items.ItemReceived",
    "",
    "*",
];
const SUBJECTS: &[&str] = &[
    "/blobServices/default/containers/images/blobs/a.jpg",
    "/BLOBSERVICES/default/containers/images/blobs/A.JPG",
    "/blobServices/default/",
    "a.jpg",
    ".JPG",
    "",
    "*",
    "\u{df}",
    "\u{1e9e}",
    "stra\u{df}e",
];
const PREFIXES: &[&str] = &[
    "/blobServices/",
    "/BLOBSERVICES/",
    "/blobServices/default/containers/images/blobs/a.jpg",
    "",
    "*",
    "\u{df}",
    "\u{1e9e}",
];
const SUFFIXES: &[&str] = &[
    ".jpg",
    ".JPG",
    "a.jpg",
    "",
    "*",
    "e",
    "\u{df}e",
    "\u{1e9e}E",
];
/// Keys for Event Grid schema events (EG-16, EG-19): envelope members in many cases, data paths
/// (exact case below `data`, EG-18), the bare `data` key, keys naming nothing.
const EG_KEYS: &[&str] = &[
    "id",
    "ID",
    "Subject",
    "subject",
    "eventType",
    "EVENTTYPE",
    "dataVersion",
    "topic",
    "data",
    "Data",
    "data.s",
    "Data.s",
    "data.S",
    "data.n",
    "data.b",
    "data.arr",
    "data.o.s",
    "data.o.n",
    "data.o.deep.x",
    "data.nul",
    "data.missing",
    "eventTime",
    "type",
    "foo",
    "DATA",
    "data.",
    "data..s",
    "data.o.",
    "dataversion",
];
/// Keys for CloudEvents (EG-17): attributes in any case, extension attributes, `data` paths.
const CE_KEYS: &[&str] = &[
    "id",
    "source",
    "Source",
    "type",
    "TYPE",
    "subject",
    "specversion",
    "datacontenttype",
    "dataschema",
    "comexampleextension1",
    "ComExampleExtension1",
    "ext2",
    "data",
    "data.s",
    "data.n",
    "data.arr",
    "data.o.s",
    "data.missing",
    "eventType",
];
/// Strings of filters and events: case pairs (ASCII and simple Unicode mappings, EG-31), empty
/// strings, substrings of each other.
const STRINGS: &[&str] = &[
    "", "abc", "ABC", "aBc", "ab", "bc", "b", "x", "\u{df}", "\u{1e9e}", "SS", "\u{e9}", "\u{c9}",
    "e\u{301}", "\u{3c3}", "\u{3a3}", "\u{3c2}", "\u{17f}", "s", "S", "\u{212a}", "k", "K", "5",
    "true", "\u{131}", "I", "i", "\u{130}", "\u{b5}", "\u{3bc}", "\u{39c}", "\u{1c5}", "\u{1c4}",
    "\u{1c6}", "\u{fb00}", "\u{0}",
];
/// Numbers (filter operands and event values): equal values spelled differently, values equal
/// only as binary64 (EG-33), signs, tiny and huge magnitudes.
const NUMBERS: &[&str] = &[
    "5",
    "5.0",
    "5e0",
    "50e-1",
    "4.99999999999999999999",
    "5.00000000000000000001",
    "0",
    "-0",
    "0.0",
    "-5",
    "0.1",
    "0.10",
    "1e-7",
    "9007199254740992",
    "9007199254740993",
    "79228162514264337593543950335",
    "-79228162514264337593543950335",
    "1e28",
    "1e29",
    "79228162514264337593543950336",
    "0.0000000000000000000000000001",
    "0.00000000000000000000000000001",
    "1e-300",
    "1e300",
    "100",
    "1E2",
];
/// Numbers only events carry: beyond any decimal or binary64 range.
const HUGE: &[&str] = &[
    "1e400",
    "-1e400",
    "1e-400",
    "123456789012345678901234567890123456789",
];

fn number(text: &str) -> Value {
    crate::reference::json::parse(text).unwrap_or(Value::Null)
}

fn as_f64(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn strings(s: &mut impl Source, max: u32) -> Value {
    Value::Array(
        (0..1 + s.below(max))
            .map(|_| json!(word(s, STRINGS)))
            .collect(),
    )
}

fn numbers(s: &mut impl Source, max: u32) -> Value {
    Value::Array(
        (0..1 + s.below(max))
            .map(|_| number(word(s, NUMBERS)))
            .collect(),
    )
}

/// An `[low, high]` pair with `low <= high` (EG-40.6). Compared as binary64 here: two bounds
/// that differ only beyond binary64 precision are written as one repeated bound.
fn range(s: &mut impl Source) -> Value {
    let a = number(word(s, NUMBERS));
    let b = number(word(s, NUMBERS));
    if as_f64(&a) < as_f64(&b) {
        json!([a, b])
    } else if as_f64(&b) < as_f64(&a) {
        json!([b, a])
    } else {
        json!([a, a])
    }
}

/// One advanced filter entry (EG-13); returns it with the number of values it counts (EG-40.8).
fn entry(s: &mut impl Source, keys: &[&str]) -> (Value, u32) {
    let key = word(s, keys);
    let (op, operand, count) = match s.below(20) {
        0 => ("NumberIn", Some(("values", numbers(s, 3))), 0),
        1 => ("NumberNotIn", Some(("values", numbers(s, 3))), 0),
        2 => (
            "NumberLessThan",
            Some(("value", number(word(s, NUMBERS)))),
            1,
        ),
        3 => (
            "NumberGreaterThan",
            Some(("value", number(word(s, NUMBERS)))),
            1,
        ),
        4 => (
            "NumberLessThanOrEquals",
            Some(("value", number(word(s, NUMBERS)))),
            1,
        ),
        5 => (
            "NumberGreaterThanOrEquals",
            Some(("value", number(word(s, NUMBERS)))),
            1,
        ),
        6 => {
            let pairs = Value::Array((0..1 + s.below(2)).map(|_| range(s)).collect());
            ("NumberInRange", Some(("values", pairs)), 0)
        }
        7 => {
            let pairs = Value::Array((0..1 + s.below(2)).map(|_| range(s)).collect());
            ("NumberNotInRange", Some(("values", pairs)), 0)
        }
        8 => ("BoolEquals", Some(("value", Value::Bool(s.chance(50)))), 1),
        9 => ("StringContains", Some(("values", strings(s, 3))), 0),
        10 => ("StringNotContains", Some(("values", strings(s, 3))), 0),
        11 => ("StringBeginsWith", Some(("values", strings(s, 3))), 0),
        12 => ("StringNotBeginsWith", Some(("values", strings(s, 3))), 0),
        13 => ("StringEndsWith", Some(("values", strings(s, 3))), 0),
        14 => ("StringNotEndsWith", Some(("values", strings(s, 3))), 0),
        15 | 16 => ("StringIn", Some(("values", strings(s, 3))), 0),
        17 => ("StringNotIn", Some(("values", strings(s, 3))), 0),
        18 => ("IsNullOrUndefined", None, 0),
        _ => ("IsNotNull", None, 0),
    };
    let mut object = Map::new();
    object.insert("operatorType".into(), json!(op));
    object.insert("key".into(), json!(key));
    let mut count = count;
    if let Some((name, value)) = operand {
        if name == "values" {
            count = value
                .as_array()
                .map_or(0, |v| u32::try_from(v.len()).unwrap_or(0));
        }
        object.insert(name.into(), value);
    } else if s.chance(20) {
        // EG-41: the null operators ignore a `value`.
        object.insert("value".into(), json!(5));
    }
    if s.chance(5) {
        // EG-41: extra members are ignored.
        object.insert("note".into(), json!("ignored"));
    }
    (Value::Object(object), count)
}

/// A scalar of an event: from the filter's own operands (`pool`) a third of the time.
fn scalar(s: &mut impl Source, pool: &[Value]) -> Value {
    if !pool.is_empty() && s.chance(35) {
        return s.pick(pool).clone();
    }
    match s.below(10) {
        0..=4 => json!(word(s, STRINGS)),
        5 if s.chance(20) => number(word(s, HUGE)),
        5..=7 => number(word(s, NUMBERS)),
        8 => Value::Bool(s.chance(50)),
        _ => Value::Null,
    }
}

/// A value of a data member: scalars, arrays (of scalars, with nested arrays and objects mixed
/// in), objects.
fn data_value(s: &mut impl Source, pool: &[Value], depth: u32) -> Value {
    match s.below(10) {
        0..=5 => scalar(s, pool),
        6 | 7 => {
            let n = s.below(4);
            Value::Array(
                (0..n)
                    .map(|_| match s.below(10) {
                        0 if depth > 0 => data_value(s, pool, depth - 1),
                        1 => json!({"s": word(s, STRINGS)}),
                        _ => scalar(s, pool),
                    })
                    .collect(),
            )
        }
        _ if depth > 0 => data_object(s, pool, depth - 1),
        _ => scalar(s, pool),
    }
}

fn data_object(s: &mut impl Source, pool: &[Value], depth: u32) -> Value {
    let mut map = Map::new();
    for _ in 0..s.below(6) {
        let name = word(s, &["s", "S", "n", "b", "arr", "o", "nul", "deep", "x", ""]);
        map.insert(name.to_owned(), data_value(s, pool, depth));
    }
    Value::Object(map)
}

/// A value for an envelope member: mostly the expected string, sometimes missing (None), null,
/// a number or an array.
fn envelope(s: &mut impl Source, values: &[Value], pool: &[&str]) -> Option<Value> {
    if !values.is_empty() && s.chance(20) {
        return Some(s.pick(values).clone());
    }
    match s.below(20) {
        0 => None,
        1 => Some(Value::Null),
        2 => Some(number(word(s, NUMBERS))),
        3 => Some(json!([word(s, pool)])),
        4..=7 => Some(json!(word(s, STRINGS))),
        _ => Some(json!(word(s, pool))),
    }
}

fn put(map: &mut Map, name: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(name.to_owned(), v);
    }
}

/// Puts `leaf` at `path` below `map`, making objects on the way (replacing what is there).
fn insert_path(map: &mut Map, path: &[&str], leaf: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        map.insert((*first).to_owned(), leaf);
        return;
    }
    if !map.get(first).is_some_and(Value::is_object) {
        map.insert((*first).to_owned(), Value::Object(Map::new()));
    }
    if let Some(Value::Object(inner)) = map.get_mut(first) {
        insert_path(inner, rest, leaf);
    }
}

/// A valid filter and an event drawn from the same small pools.
pub fn case(s: &mut impl Source) -> Case {
    let cloud = s.chance(35);
    let options = match s.below(4) {
        _ if cloud => json!({"schema": "CloudEventSchemaV1_0"}),
        0 => json!({"schema": "EventGridSchema"}),
        1 => json!({}),
        _ => Value::Null,
    };
    let mut policy = Map::new();
    match s.below(6) {
        0 => {
            policy.insert("includedEventTypes".into(), Value::Null);
        }
        1 | 2 => {
            let mut types: Vec<Value> = (0..s.below(3)).map(|_| json!(word(s, TYPES))).collect();
            if s.chance(15) {
                types.push(json!(word(s, &["All", "all", "ALL"])));
            }
            policy.insert("includedEventTypes".into(), Value::Array(types));
        }
        _ => {}
    }
    if s.chance(40) {
        policy.insert("subjectBeginsWith".into(), json!(word(s, PREFIXES)));
    }
    if s.chance(40) {
        policy.insert("subjectEndsWith".into(), json!(word(s, SUFFIXES)));
    }
    if s.chance(40) {
        policy.insert("isSubjectCaseSensitive".into(), Value::Bool(s.chance(50)));
    }
    if s.chance(50) {
        policy.insert(
            "enableAdvancedFilteringOnArrays".into(),
            Value::Bool(s.chance(70)),
        );
    }
    let keys = if cloud { CE_KEYS } else { EG_KEYS };
    let n = s.below(5);
    if n > 0 || s.chance(20) {
        // At most 4 entries of at most 3 values: within the limits of EG-40.7 and EG-40.8.
        let mut entries = Vec::new();
        let mut total = 0;
        for _ in 0..n {
            let (e, count) = entry(s, keys);
            total += count;
            entries.push(e);
        }
        debug_assert!(total <= 25);
        policy.insert("advancedFilters".into(), Value::Array(entries));
    }

    let policy = Value::Object(policy);
    let message = event(s, &policy, cloud);
    Case {
        dialect: Dialect::EventGrid,
        options,
        policy,
        message,
    }
}

/// An event for `policy` (a CloudEvents one when `cloud`): envelope members and `data` following
/// the filter's keys, values from its own operands now and then; now and then not an object.
pub fn event(s: &mut impl Source, policy: &Value, cloud: bool) -> Value {
    let mut values = Vec::new();
    harvest(policy, &mut values);
    let mut event = Map::new();
    if cloud {
        put(&mut event, "specversion", Some(json!("1.0")));
        put(&mut event, "id", envelope(s, &values, &["1", "abc"]));
        put(
            &mut event,
            "source",
            envelope(s, &values, &["/mycontext", "abc"]),
        );
        put(&mut event, "type", envelope(s, &values, TYPES));
        put(&mut event, "subject", envelope(s, &values, SUBJECTS));
        if s.chance(50) {
            put(
                &mut event,
                "comexampleextension1",
                envelope(s, &values, STRINGS),
            );
        }
        if s.chance(30) {
            put(&mut event, "ext2", Some(scalar(s, &values)));
        }
        if s.chance(20) {
            put(
                &mut event,
                "datacontenttype",
                Some(json!("application/json")),
            );
        }
    } else {
        put(&mut event, "id", envelope(s, &values, &["1", "abc"]));
        put(
            &mut event,
            "topic",
            envelope(s, &values, &["/subscriptions/x", "abc"]),
        );
        put(&mut event, "subject", envelope(s, &values, SUBJECTS));
        put(&mut event, "eventType", envelope(s, &values, TYPES));
        put(&mut event, "eventTime", Some(json!("2024-01-01T00:00:00Z")));
        put(
            &mut event,
            "dataVersion",
            envelope(s, &values, &["1.0", "abc"]),
        );
        if s.chance(10) {
            put(&mut event, "type", envelope(s, &values, TYPES));
        }
    }
    match s.below(10) {
        0 => {}
        1 => put(&mut event, "data", Some(data_value(s, &values, 1))),
        2..=4 => put(&mut event, "data", Some(data_object(s, &values, 2))),
        _ => {
            // The data follows the filter's `data.` keys (EG-18), most of the time.
            let mut data = match data_object(s, &values, 1) {
                Value::Object(m) if s.chance(30) => m,
                _ => Map::new(),
            };
            let keys = policy
                .get("advancedFilters")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.get("key").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            for key in keys {
                let mut path = key.split('.');
                if path.next().is_some_and(|d| d.eq_ignore_ascii_case("data")) && s.chance(75) {
                    let segments: Vec<&str> = path.collect();
                    let leaf = if s.chance(25) {
                        Value::Array((0..s.below(4)).map(|_| scalar(s, &values)).collect())
                    } else {
                        scalar(s, &values)
                    };
                    insert_path(&mut data, &segments, leaf);
                }
            }
            put(&mut event, "data", Some(Value::Object(data)));
        }
    }
    match s.below(100) {
        0 | 1 => json!([event]),
        2 => json!("an event"),
        3 => Value::Null,
        _ => Value::Object(event),
    }
}

use super::*;
use crate::options::{EventGridOptions, EventGridSchema, ExprOptions};
use crate::{ErrorCode, compile, compile_text, message_from_json};
use serde_json::json;

/// A policy each dialect accepts with its default options.
fn valid_policy(dialect: Dialect) -> serde_json::Value {
    match dialect {
        Dialect::Sns | Dialect::Basaltic | Dialect::EventBridge => json!({"a": ["x"]}),
        Dialect::EventGrid => json!({"subjectBeginsWith": "a"}),
        Dialect::Stream => json!("a = x"),
        Dialect::Expr => json!({"key": "a", "op": "exists"}),
    }
}

#[test]
fn every_option_error_in_every_dialect_is_invalid_options() {
    let mut cases: Vec<(Dialect, serde_json::Value, &str)> = Vec::new();
    for dialect in Dialect::ALL {
        // Not an object, and an unknown option.
        cases.push((dialect, json!([1]), ""));
        cases.push((dialect, json!("MessageBody"), ""));
        cases.push((dialect, json!({"nope": 1}), "/nope"));
    }
    // A dialect without options given another dialect's option.
    cases.push((Dialect::Basaltic, json!({"scope": "MessageBody"}), "/scope"));
    cases.push((Dialect::Stream, json!({"max_depth": 3}), "/max_depth"));
    // Wrong types and values out of range.
    cases.push((Dialect::Sns, json!({"scope": 5}), "/scope"));
    cases.push((Dialect::Sns, json!({"scope": "Body"}), "/scope"));
    cases.push((Dialect::EventGrid, json!({"schema": true}), "/schema"));
    cases.push((
        Dialect::EventGrid,
        json!({"schema": "CustomInputSchema"}),
        "/schema",
    ));
    cases.push((Dialect::Expr, json!({"max_depth": "3"}), "/max_depth"));
    cases.push((Dialect::Expr, json!({"max_depth": -1}), "/max_depth"));
    cases.push((Dialect::Expr, json!({"max_depth": 63}), "/max_depth"));
    for (dialect, options, pointer) in cases {
        for (how, result) in [
            ("value", Options::from_json(dialect, &options)),
            (
                "text",
                Options::from_json(dialect, options.to_string().as_str()),
            ),
        ] {
            let e = result.expect_err("invalid options are rejected");
            let first = e.first().expect("one error");
            assert_eq!(
                (first.code, first.pointer.as_str()),
                (ErrorCode::InvalidOptions, pointer),
                "{dialect} {options} via {how}: {e}"
            );
        }
    }
    // Options of another dialect, given to compile, compile_text or a message reader.
    for dialect in Dialect::ALL {
        let policy = valid_policy(dialect);
        let text = match &policy {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let own = Options::from(dialect);
        assert!(compile(dialect, &policy, &own).is_ok(), "{dialect}");
        assert!(compile_text(dialect, &text, &own).is_ok(), "{dialect}");
        for other in Dialect::ALL.into_iter().filter(|d| *d != dialect) {
            let options = Options::from(other);
            for result in [
                compile(dialect, &policy, &options).map(drop),
                compile_text(dialect, &text, &options).map(drop),
            ] {
                let e = result.expect_err("another dialect's options");
                assert_eq!(e.code(), Some(ErrorCode::InvalidOptions), "{dialect}: {e}");
            }
            let e = message_from_json(dialect, &options, &json!({})).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidOptions);
        }
    }
}

#[test]
fn policy_text_errors_have_the_dialect_codes() {
    let huge = format!("{{\"a\": [\"{}\"]}}", "x".repeat(MAX_POLICY_BYTES));
    for dialect in Dialect::ALL {
        let options = Options::from(dialect);
        let e = compile_text(dialect, &huge, &options).unwrap_err();
        assert_eq!(e.code(), Some(dialect.limit_code()), "{dialect}");
        let e = compile_text(dialect, "{\"a\": [1,]}", &options).unwrap_err();
        assert_eq!(e.code(), Some(dialect.invalid_code()), "{dialect}");
        assert_eq!(e.errors[0].pointer, "/a/1", "{dialect}: {e}");
        assert!(
            e.to_string().contains("line 1 column 10: unexpected `]`"),
            "{dialect}: {e}"
        );
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        let e = compile_text(dialect, &deep, &options).unwrap_err();
        assert!(e.to_string().contains("deeper than 128"), "{dialect}: {e}");
    }
    let e = compile_text(Dialect::Sns, "{oops", &Options::from(Dialect::Sns)).unwrap_err();
    assert!(e.to_string().contains("failed to parse JSON."), "{e}");
}

/// `sns` policy text read as a borrowed tree (`lower_text`, what `compile_text` does) gives the
/// IR and the errors that reading it into an owned value and lowering that gives, in both
/// scopes: every conformance vector's policy, and texts that are not JSON, too large, too deep,
/// hold escapes or repeated names, or are a JSON string holding the policy text.
#[test]
fn sns_text_lowers_as_its_value_does() {
    let mut texts = texts_with(&[
        r#"{"a": ["x"], "a": [1]}"#,
        r#"{"a\u00e9": ["caf\u00e9", {"prefix": "\ud83d\ude00"}], "b": [{"numeric": [">", 1, "<", 2]}]}"#,
        r#"{"a": [{"prefix": 1}], "b": [], "c": {}, "d": 5, "$or": [{"prefix": ["x"]}]}"#,
        r#"{"a": {"b": {"c": ["x"]}}, "d": [{"exists": true}, {"anything-but": ["x", 1]}]}"#,
        r#"{"a": ["x"] "b"}"#,
        r#"{"a": ["\ud800"]}"#,
        r#"{"a": [1e400]}"#,
        r#""{\"a\": [\"x\"]}""#,
        r#""\"{}\"""#,
        r#""not json""#,
    ]);
    texts.push(format!(r#"{{"a": ["{}"]}}"#, "x".repeat(MAX_POLICY_BYTES)));
    texts.push(
        serde_json::to_string(&format!(r#"{{"a": ["{}"]}}"#, "x".repeat(MAX_POLICY_BYTES)))
            .unwrap(),
    );
    texts.extend(sns_vector_policies());
    let mut errors = 0;
    for scope in SNS_SCOPES {
        let options = Options::Sns(crate::SnsOptions::default().with_scope(scope));
        for text in &texts {
            let by_tree = lower_text(Dialect::Sns, text, &options);
            // As `compile_text` read it before: the owned value, a JSON string read once more
            // as the policy text, then validated (through `Arena::value`) and lowered.
            let read = |text: &str| parse_policy_text(Dialect::Sns, text, &options);
            let by_value = read(text)
                .and_then(|v| match v {
                    json::Value::String(inner) => read(&inner),
                    other => Ok(other),
                })
                .and_then(|v| sns::validate(scope, &v))
                .map(|root| sns::lower::lower_policy(scope, &root));
            errors += usize::from(by_value.is_err());
            assert_eq!(
                format!("{by_tree:?}"),
                format!("{by_value:?}"),
                "{scope:?} {}",
                text.get(..200).unwrap_or(text)
            );
            // A value that is a JSON string is read as the policy text, once.
            let given = lower(Dialect::Sns, &json::Value::String(text.clone()), &options);
            let once = read(text)
                .and_then(|v| sns::validate(scope, &v))
                .map(|root| sns::lower::lower_policy(scope, &root));
            assert_eq!(format!("{given:?}"), format!("{once:?}"));
        }
    }
    // Both kinds are compared.
    assert!(errors > 20 && errors < 2 * texts.len(), "{errors}");
}

/// The texts a dialect's text-lowering test reads: those no dialect takes as a policy (empty,
/// unclosed, an array, an empty object, `null`, 200 nested arrays: too deep), then `chosen`.
fn texts_with(chosen: &[&str]) -> Vec<String> {
    let mut texts: Vec<String> = ["", "[", "[]", "{}", "null"]
        .iter()
        .chain(chosen)
        .map(|t| (*t).to_owned())
        .collect();
    texts.push(format!("{}1{}", "[".repeat(200), "]".repeat(200)));
    texts
}

/// The policy of each conformance vector in `vectors` (JSON lines).
/// Both SNS scopes, for the tests that compare two ways of reading SNS text in each.
const SNS_SCOPES: [crate::SnsScope; 2] = [
    crate::SnsScope::MessageAttributes,
    crate::SnsScope::MessageBody,
];

/// The policy of every SNS conformance vector, as text.
fn sns_vector_policies() -> impl Iterator<Item = String> {
    vector_policies(include_str!("../../../conformance/vectors/sns.jsonl")).map(|p| p.to_string())
}

fn vector_policies(vectors: &str) -> impl Iterator<Item = serde_json::Value> + '_ {
    vectors
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            v["policy"].take()
        })
}

/// Requires `by_tree` and `by_value` to lower each text alike (the same IR or the same errors,
/// compared as their `Debug` text, `label` naming the options in a failure); returns how many
/// texts `by_value` rejects.
fn lowered_alike<T: std::fmt::Debug, E: std::fmt::Debug>(
    texts: &[String],
    label: &str,
    by_tree: impl Fn(&str) -> Result<T, E>,
    by_value: impl Fn(&str) -> Result<T, E>,
) -> usize {
    let mut errors = 0;
    for text in texts {
        let by_value = by_value(text);
        errors += usize::from(by_value.is_err());
        assert_eq!(
            format!("{:?}", by_tree(text)),
            format!("{by_value:?}"),
            "{label} {}",
            text.get(..200).unwrap_or(text)
        );
    }
    errors
}

/// `basaltic` policy text read as a borrowed tree (`lower_text`, what `compile_text` does) gives
/// the IR and the errors that reading it into an owned value and lowering that gives: every
/// conformance vector's policy, and texts that are not JSON, too large, too deep, hold escapes,
/// repeated names or errors of every kind.
#[test]
fn basaltic_text_lowers_as_its_value_does() {
    let mut texts = texts_with(&[
        r#""{\"a\": [\"x\"]}""#,
        r#"{"a": ["x"], "a": [1]}"#,
        r#"{"a\u00e9": ["caf\u00e9", {"prefix": "\ud83d\ude00"}], "b": [{"numeric": [">", 1, "<", 2]}]}"#,
        r#"{"a": [{"prefix": ""}], "b": [], "c": {}, "d": 5, "$or": [], "e": [{"x": 1, "y": 2}]}"#,
        r#"{"a": [{"anything-but": ["x", 1, {"prefix": "y"}, null]}], "b": [{"numeric": ["!", "x"]}]}"#,
        r#"{"a": [{"exists": 1}], "b": [true, null, []], "c": [1e400], "d": [{"anything-but": 1e400}]}"#,
        r#"{"a": ["x"] "b"}"#,
        r#"{"a": ["\ud800"]}"#,
    ]);
    texts.push(format!(r#"{{"a": ["{}"]}}"#, "x".repeat(MAX_POLICY_BYTES)));
    let many: Vec<String> = (0..30).map(|i| format!(r#""k{i}": ["v"]"#)).collect();
    texts.push(format!("{{{}}}", many.join(",")));
    texts.extend(
        vector_policies(include_str!("../../../conformance/vectors/basaltic.jsonl"))
            .map(|p| p.to_string()),
    );
    let options = Options::Basaltic;
    let errors = lowered_alike(
        &texts,
        "",
        |text| lower_text(Dialect::Basaltic, text, &options),
        |text| {
            parse_policy_text(Dialect::Basaltic, text, &options)
                .and_then(|v| basaltic::parse(&v))
                .map(|p| basaltic::lower_policy(&p))
        },
    );
    // Both kinds are compared.
    assert!(errors > 10 && errors < texts.len(), "{errors}");
}

/// `basaltic` policy text lowered for the optimizer (`lower_text_to_optimize`, what
/// `compile_text` does: lists of one alternative and of strings of one kind made as the
/// optimizer leaves them, pointers it does not read left out) gives the optimized IR, origins
/// included, and the errors that `lower_text` gives: every conformance vector's policy, and lists
/// of repeated, mixed, numeric and single alternatives.
#[test]
fn basaltic_text_lowered_to_optimize_optimizes_alike() {
    let mut texts = texts_with(&[
        r#"{"a": ["x", "x"], "b": ["y", "z", "y"], "c": ["1", 1, 1.0], "d": [2]}"#,
        r#"{"a": [{"prefix": "p"}, {"prefix": "q"}], "b": [{"suffix": "s"}, {"suffix": "s"}]}"#,
        r#"{"a": [{"prefix": "p"}, {"suffix": "q"}], "b": ["x", {"prefix": "x"}, "y"]}"#,
        r#"{"a": [{"exists": true}], "b": [{"exists": false}, "x"], "c": [{"anything-but": "x"}]}"#,
        r#"{"a": [{"numeric": [">", 1]}, {"numeric": ["<", 0]}], "b": [{"numeric": ["=", 3]}]}"#,
        r#"{"a": ["x"], "a": ["x", "y"], "b": ["x", "y"], "b": ["y", "x"]}"#,
        r#"{"a": [{"anything-but": ["x"]}, {"anything-but": ["x"]}, "z"], "b": ["x", "y"], "c": []}"#,
        r#"{"a~/": ["x", "y"], "b": [{"prefix": ""}, "x"]}"#,
    ]);
    texts.extend(
        vector_policies(include_str!("../../../conformance/vectors/basaltic.jsonl"))
            .map(|p| p.to_string()),
    );
    let options = Options::Basaltic;
    let errors = lowered_alike(
        &texts,
        "",
        |text| basaltic::lower_text_to_optimize(text, &options).map(crate::opt::optimize),
        |text| lower_text(Dialect::Basaltic, text, &options).map(crate::opt::optimize),
    );
    assert!(errors > 3 && errors < texts.len(), "{errors}");
}

/// `sns` policy text lowered for the optimizer (`lower_text_to_optimize`, what `compile_text`
/// does: lists of one alternative made as their alternative alone, strings given room to merge
/// into, and in body scope the body's object test beside the policy's members in one `and`)
/// gives the optimized IR, origins included, and the errors that `lower_text` gives, in both
/// scopes: every conformance vector's policy, and flat, nested, `$or` and negative policies of
/// one member and of several.
#[test]
fn sns_text_lowered_to_optimize_optimizes_alike() {
    let mut texts = texts_with(&[
        r#"{"a": ["x"]}"#,
        r#"{"a": ["x", "y"]}"#,
        r#"{"a": [{"anything-but": "x"}]}"#,
        r#"{"a": [{"exists": false}]}"#,
        r#"{"a": {"b": ["x"]}}"#,
        r#"{"a": {"b": ["x"], "c": [{"anything-but": ["x", "y"]}]}, "d": [1, 2]}"#,
        r#"{"$or": [{"a": ["x"]}]}"#,
        r#"{"$or": [{"a": ["x"]}, {"b": ["y"], "c": {"d": ["z"]}}], "e": [{"prefix": "p"}]}"#,
        r#"{"a": ["x", "x", {"prefix": "p"}, {"prefix": "q"}], "b": [{"numeric": [">", 1, "<", 2]}]}"#,
        r#"{"a": [{"exists": true}], "b": [{"exists": false}, "x"], "c": [{"anything-but": 1}]}"#,
        r#"{"event": ["order.paid", "order.created"], "environment": ["production"], "region": [{"prefix": "eu-"}]}"#,
        r#"{"a": [{"prefix": 1}], "b": []}"#,
        r#"{"a": ["x", "x"], "b": ["y", "z", "y"], "c": [{"prefix": "p"}, {"prefix": "q"}, {"prefix": "p"}], "d": [{"suffix": "s"}, {"suffix": "s"}]}"#,
        r#"{"a": ["x", {"prefix": "x"}], "b": ["x", "y"], "c": ["y", "x"], "e": ["x", 1]}"#,
        r#"{"$or": [{"a": ["x", "y"]}, {"a": ["y", "z"]}]}"#,
        r#"{"$or": [{"a": ["x", "y"]}, {"a": ["x", "y"]}], "b": ["x", "x"]}"#,
        r#"{"$or": [{"a": {"b": ["x", "y"]}}, {"a": {"b": ["x", "y"]}, "c": ["1", "2"]}]}"#,
        r#"{"a": {"b": ["x", "y"]}, "$or": [{"a": {"b": ["y", "x"]}}, {"c": ["1", "1"]}]}"#,
        r#"{"$or": [{"a": {"b": {"c": ["x", "y"]}}}, {"$or": [{"d": ["1", "2"]}, {"e": ["3"]}]}]}"#,
    ]);
    texts.extend(sns_vector_policies());
    let mut errors = 0;
    for scope in SNS_SCOPES {
        let options = crate::SnsOptions::default().with_scope(scope);
        errors += lowered_alike(
            &texts,
            &format!("{scope:?}"),
            |text| sns::lower_text_to_optimize(text, options).map(crate::opt::optimize),
            |text| lower_text(Dialect::Sns, text, &Options::Sns(options)).map(crate::opt::optimize),
        );
    }
    assert!(errors > 6 && errors < 2 * texts.len(), "{errors}");
}

/// `eventgrid` policy text read as a borrowed tree (`lower_text`, what `compile_text` does) gives
/// the IR and the errors that reading it into an owned value and lowering that gives, in both
/// schemas: every conformance vector's policy, and texts that are not JSON, too large, too deep,
/// hold escapes, repeated names or errors of every kind.
#[test]
fn eventgrid_text_lowers_as_its_value_does() {
    let mut texts = texts_with(&[
        r#""{}""#,
        r#"{"subjectBeginsWith": "a", "subjectBeginsWith": "b\u00e9"}"#,
        r#"{"includedEventTypes": ["A", 1, null], "subjectEndsWith": 5, "isSubjectCaseSensitive": "yes"}"#,
        r#"{"includedEventTypes": "All", "enableAdvancedFilteringOnArrays": 1, "advancedFilters": {}}"#,
        r#"{"includedEventTypes": ["x", "aLl"], "isSubjectCaseSensitive": true, "subjectEndsWith": "\ud83d\ude00"}"#,
        r#"{"advancedFilters": [1, {}, {"operatorType": "NumberIn"}, {"operatorType": 7, "key": ""}, {"operatorType": "numberin", "key": 3}]}"#,
        r#"{"advancedFilters": [{"operatorType": "BoolEquals", "key": "data.b", "value": "x"}, {"operatorType": "NumberLessThan", "key": "data.n", "value": 1e99999999999999999999}]}"#,
        r#"{"advancedFilters": [{"operatorType": "NumberIn", "key": "data.n", "values": []}, {"operatorType": "NumberIn", "key": "data.n", "values": [1, "x", 1e99999999999999999999]}]}"#,
        r#"{"advancedFilters": [{"operatorType": "StringIn", "key": "data.s", "values": "x"}, {"operatorType": "StringContains", "key": "Data.s", "values": ["caf\u00e9", 2, {"a": [1]}]}]}"#,
        r#"{"advancedFilters": [{"operatorType": "NumberInRange", "key": "data.n", "values": [[1, 2], [3], 4, [5, 1], ["a", 1e99999999999999999999]]}]}"#,
        r#"{"advancedFilters": [{"operatorType": "IsNullOrUndefined", "key": "subject", "value": [1]}, {"operatorType": "NumberGreaterThanOrEquals", "key": "id"}]}"#,
        r#"{"advancedFilters": [{"operatorType": "StringNotIn", "key": "data.s", "values": ["x"]}] "b"}"#,
        r#"{"subjectBeginsWith": "\ud800"}"#,
    ]);
    texts.push(format!(
        r#"{{"subjectBeginsWith": "{}"}}"#,
        "x".repeat(MAX_POLICY_BYTES)
    ));
    let long = format!(r#""{}""#, "y".repeat(600));
    let many: Vec<String> = (0..30)
        .map(|i| {
            format!(
                r#"{{"operatorType": "StringIn", "key": "data.k{i}", "values": [{long}, "v"]}}"#
            )
        })
        .collect();
    texts.push(format!(r#"{{"advancedFilters": [{}]}}"#, many.join(",")));
    let many: Vec<String> = (0..30).map(|i| format!(r#""k{i}": {i}"#)).collect();
    texts.push(format!("{{{}}}", many.join(",")));
    texts.extend(
        vector_policies(include_str!("../../../conformance/vectors/eventgrid.jsonl"))
            .map(|p| p.to_string()),
    );
    let mut errors = 0;
    for schema in [EventGridSchema::EventGrid, EventGridSchema::CloudEvents] {
        let options = Options::EventGrid(EventGridOptions::default().with_schema(schema));
        errors += lowered_alike(
            &texts,
            &format!("{schema:?}"),
            |text| lower_text(Dialect::EventGrid, text, &options),
            |text| {
                parse_policy_text(Dialect::EventGrid, text, &options)
                    .and_then(|v| eventgrid::parse(&v, schema))
                    .map(|p| eventgrid::lower_policy(&p))
            },
        );
    }
    // Both kinds are compared.
    assert!(errors > 20 && errors < 2 * texts.len(), "{errors}");
}

/// `expr` policy text read as a borrowed tree (`lower_text`, what `compile_text` does) gives the
/// IR and the errors that reading it into an owned value and lowering that gives, with the
/// default and a small `max_depth`: every conformance vector's policy, and texts that are not
/// JSON, too large, too deep, hold escapes, repeated names or errors of every kind.
#[test]
fn expr_text_lowers_as_its_value_does() {
    let mut texts = texts_with(&[
        r#""x""#,
        r#"[{"key": "a", "value": ["x"]}]"#,
        r#"{"key": "a", "value": ["x"], "key": "b\u00e9"}"#,
        r#"{"key": "a", "op": null, "value": ["caf\u00e9", "\ud83d\ude00"]}"#,
        r#"{"key": "", "op": "in", "value": [], "values": 1, "x": 2}"#,
        r#"{"key": 1, "op": "endWith", "value": "x"}"#,
        r#"{"key": "a", "op": "StartsWith", "value": 1}"#,
        r#"{"key": "a", "op": "startWith", "value": "x"}"#,
        r#"{"key": "a", "op": "contanis", "value": "x"}"#,
        r#"{"key": "a", "op": "exists", "value": "x"}"#,
        r#"{"key": "a", "op": "exists"}"#,
        r#"{"key": "a", "op": "contains"}"#,
        r#"{"key": "a", "op": 5}"#,
        r#"{"key": "a"}"#,
        r#"{"key": "a", "value": "x"}"#,
        r#"{"key": "a", "value": ["x", 1, null]}"#,
        r#"{"key": "a", "op": "AND", "value": ["x"]}"#,
        r#"{"op": "AND", "value": [{"key": "a", "value": ["x"]}]}"#,
        r#"{"values": ["x"]}"#,
        r#"{"exp": [], "key": "a"}"#,
        r#"{"op": "and", "exp": [{"key": "a", "op": "exists"}], "value": 1}"#,
        r#"{"op": "NAND", "exp": [{"key": "a", "op": "exists"}]}"#,
        r#"{"op": "XOR", "exp": {}}"#,
        r#"{"op": null, "exp": [1, "x", {"key": "a", "op": "exists"}]}"#,
        r#"{"op": 1, "exp": []}"#,
        r#"{"exp": [{"key": "a", "op": "exists"}]}"#,
        r#"{"op": "NOT", "exp": [{"key": "a", "op": "exists"}, {"key": "b", "op": "exists"}]}"#,
        r#"{"op": "OR", "exp": []}"#,
        r#"{"op": "OR", "exp": [{"op": "NOT", "exp": [{"key": "a", "op": "in", "value": ["x"]}]}, {"op": "AND", "exp": [{"key": "b", "op": "startsWith", "value": "y"}, {"key": "c", "op": "endsWith", "value": "z"}, {"key": "d", "op": "contains", "value": "w"}]}]}"#,
        r#"{"key": "a", "op": "exists"} x"#,
        r#"{"key": "\ud800", "op": "exists"}"#,
    ]);
    let nested = |n: usize| {
        format!(
            "{}{{\"key\": \"a\", \"op\": \"exists\"}}{}",
            r#"{"op": "NOT", "exp": ["#.repeat(n),
            "]}".repeat(n)
        )
    };
    texts.extend([2, 3, 4, 40, 70, 200].map(nested));
    texts.push(format!(
        r#"{{"key": "a", "op": "startsWith", "value": "{}"}}"#,
        "x".repeat(MAX_POLICY_BYTES)
    ));
    let many: Vec<String> = (0..30).map(|i| format!(r#""k{i}": {i}"#)).collect();
    texts.push(format!("{{{}}}", many.join(",")));
    texts.extend(
        vector_policies(include_str!("../../../conformance/vectors/expr.jsonl"))
            .map(|p| p.to_string()),
    );
    let mut errors = 0;
    for max_depth in [ExprOptions::default().max_depth, 3] {
        let expr = ExprOptions { max_depth };
        let options = Options::Expr(expr);
        errors += lowered_alike(
            &texts,
            &format!("max_depth {max_depth}"),
            |text| lower_text(Dialect::Expr, text, &options),
            |text| {
                parse_policy_text(Dialect::Expr, text, &options)
                    .and_then(|v| expr::parse(&v, &expr))
                    .map(|p| expr::lower_policy(&p))
            },
        );
    }
    // Both kinds are compared.
    assert!(errors > 40 && errors < 2 * texts.len(), "{errors}");
}

/// `stream` policy text read as a borrowed tree (`lower_text`, what `compile_text` does) gives
/// the IR and the errors that reading it into an owned value and lowering that gives: every
/// conformance vector's policy, the text form (bare and as a JSON string), and texts that are
/// not JSON, too large, too deep, hold escapes, repeated names or errors of every kind.
#[test]
fn stream_text_lowers_as_its_value_does() {
    let mut texts = texts_with(&[
        "region = eu-* and n > 5",
        "region = eu-* and n > 5\n",
        "region = = 5",
        r#""region = eu-* or n >= 1e3""#,
        r#""region ==""#,
        r#"{"groups": [], "x": 1}"#,
        r#"{"groups": {}}"#,
        r#"{"groups": [1, [], [1, {"op": "=", "header": "a", "values": ["x"], "extra": 1}]]}"#,
        r#"{"groups": [[{"op": "=", "header": "a\u00e9", "values": ["caf\u00e9"]}, {"op": "!=", "header": "b", "values": ["*.x"]}]]}"#,
        r#"{"groups": [[{"op": "in", "header": "a", "values": ["x", "y", 1]}, {"op": "exists", "header": "b"}, {"op": "missing", "header": "c", "values": []}]]}"#,
        r#"{"groups": [[{"op": "<", "header": "n", "values": [1e400]}, {"op": ">=", "header": "n", "values": ["5"]}, {"op": "<=", "header": "n", "values": [1, 2]}]]}"#,
        r#"{"groups": [[{"op": "eq", "header": "a"}, {"op": 1, "header": 2, "values": 3}, {"header": "a"}, {"op": "="}]]}"#,
        r#"{"groups": [[{"op": "exists", "header": "a", "values": ["x"]}, {"op": "in", "header": "a", "values": []}, {"op": "=", "header": "", "values": ["**"]}]]}"#,
        r#"{"groups": [[{"op": "=", "header": "a", "values": ["x"]}]], "groups": [[{"op": "exists", "header": "b"}]]}"#,
        r#"{"groups": [[{"op": "=", "header": "a", "values": ["x"]}] "b"}"#,
        r#"{"groups": [[{"op": "=", "header": "a", "values": ["\ud800"]}]]}"#,
    ]);
    texts.push(format!("region = {}", "x".repeat(MAX_POLICY_BYTES)));
    let clause = r#"{"op": "in", "header": "a", "values": ["v"]}"#;
    let many = vec![clause; 40].join(",");
    let values = vec![r#""v""#; 40].join(",");
    texts.push(format!(
        r#"{{"groups": [[{many}], [{{"op": "in", "header": "a", "values": [{values}]}}]]}}"#
    ));
    let groups = vec![format!("[{clause}]"); 40].join(",");
    texts.push(format!(r#"{{"groups": [{groups}]}}"#));
    for policy in vector_policies(include_str!("../../../conformance/vectors/stream.jsonl")) {
        texts.push(policy.to_string());
        if let Some(text) = policy.as_str() {
            texts.push(text.to_owned());
        }
    }
    let options = Options::Stream;
    let errors = lowered_alike(
        &texts,
        "",
        |text| lower_text(Dialect::Stream, text, &options),
        |text| {
            parse_policy_text(Dialect::Stream, text, &options)
                .and_then(|v| stream::parse(&v))
                .map(|f| stream::lower_filter(&f))
        },
    );
    // Both kinds are compared.
    assert!(errors > 20 && errors < texts.len(), "{errors}");
}

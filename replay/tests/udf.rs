//! The filtervm functions in local DataFusion, checked against one-by-one evaluation with the
//! filtervm library.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a failed query should fail the test loudly"
)]

mod common;

use common::{SUBSCRIPTIONS, events, match_line, route_line, write_partitioned};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, Float64Array, Int64Array, LargeStringArray, MapBuilder,
    RecordBatch, StringArray, StringBuilder, StringViewArray, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::prelude::{SessionConfig, SessionContext};
use filtervm_replay::adapter::Subscriptions;
use filtervm_replay::session::{self, InputFormat};
use std::collections::BTreeMap;
use std::sync::Arc;

const PAID_EU: &str = r#"{"eventType":["order.paid"],"data":{"region":[{"prefix":"eu-"}]}}"#;
const BODY: &str = r#"{"scope":"MessageBody"}"#;

fn context(
    partitions: usize,
    subscriptions: Option<&str>,
) -> (SessionContext, session::Registered) {
    let subscriptions =
        subscriptions.map(|text| Arc::new(Subscriptions::from_ndjson(text).unwrap()));
    let config = SessionConfig::new()
        .with_target_partitions(partitions)
        .with_batch_size(64);
    let (state, registered) = session::session_state(config, subscriptions).unwrap();
    (SessionContext::new_with_state(state), registered)
}

/// Rows of (text, bool) from a query returning a text column and a boolean column.
async fn text_and_bool(ctx: &SessionContext, sql: &str) -> BTreeMap<String, Option<bool>> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let mut out = BTreeMap::new();
    for batch in batches {
        let texts = datafusion::arrow::compute::cast(batch.column(0), &DataType::Utf8).unwrap();
        let texts = texts.as_string::<i32>();
        let verdicts = batch.column(1).as_boolean();
        for row in 0..batch.num_rows() {
            let verdict = (!verdicts.is_null(row)).then(|| verdicts.value(row));
            out.insert(texts.value(row).to_owned(), verdict);
        }
    }
    out
}

#[tokio::test]
async fn match_over_lines_equals_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let lines = events(500, 1, true);
    write_partitioned(dir.path(), &lines, 3);
    let (ctx, registered) = context(4, None);
    let format = session::register_archive(&ctx, "events", dir.path(), None)
        .await
        .unwrap();
    assert_eq!(format, InputFormat::Lines);
    let cases = [
        ("sns", PAID_EU, BODY),
        (
            "sns",
            r#"{"data":{"amount":[{"numeric":[">=",500]}]}}"#,
            BODY,
        ),
        (
            "eventgrid",
            r#"{"includedEventTypes":["order.shipped"],"subjectBeginsWith":"/orders/us/"}"#,
            "",
        ),
        (
            "eventgrid",
            r#"{"advancedFilters":[{"operatorType":"StringContains","key":"data.note","values":["QUOTE"]}]}"#,
            "{}",
        ),
    ];
    for (dialect, policy, options) in cases {
        let sql = format!(
            "SELECT message, filtervm_match('{dialect}', '{policy}', '{options}', message) FROM events"
        );
        let got = text_and_bool(&ctx, &sql).await;
        assert_eq!(got.len(), lines.len(), "every line is one row");
        let mut matched = 0;
        for line in &lines {
            let expected = match_line(dialect, policy, options, line);
            assert_eq!(got[line], expected, "{dialect} {policy} on {line}");
            matched += usize::from(expected == Some(true));
        }
        assert!(matched > 0, "{policy} matches some line");
    }
    // Four queries, four distinct filters: each compiled once, at planning, however many
    // partitions and batches (64 rows each) evaluated it.
    assert_eq!(registered.matcher.policies_compiled(), 4);
    assert_eq!(registered.matcher.rows_evaluated(), 4 * lines.len() as u64);
}

#[tokio::test]
async fn lines_are_kept_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"a":"tab\tcomma,semicolon;pipe|quote\"'single"}"#,
        r#"{"unicode":"é中😀","sep":"\u001e\u001f"}"#,
        r#"   {"padded": true}   "#,
        "not json, \"quoted\", at all",
    ];
    let text = lines.join("\r\n") + "\n\n";
    std::fs::write(dir.path().join("a.ndjson"), text).unwrap();
    let (ctx, _) = context(2, None);
    session::register_archive(&ctx, "events", dir.path(), None)
        .await
        .unwrap();
    let got = text_and_bool(
        &ctx,
        &format!("SELECT message, filtervm_match('sns', '{{}}', '{BODY}', message) FROM events"),
    )
    .await;
    let expected: Vec<&str> = lines.to_vec();
    assert_eq!(
        got.keys().map(String::as_str).collect::<Vec<_>>().len(),
        expected.len()
    );
    for line in lines {
        // The empty sns policy matches every body; a cell is read as `filtervm match` reads a
        // line, one JSON document, so the one that is not JSON is no message (null).
        let expected = if line.starts_with("not json") {
            None
        } else {
            Some(true)
        };
        assert_eq!(
            got.get(line),
            Some(&expected),
            "{line:?} read as one row, unchanged"
        );
    }
}

#[tokio::test]
async fn string_and_binary_column_types_agree() {
    let lines = events(200, 2, true);
    let column = |data_type: &str| -> ArrayRef {
        let with_null = lines.iter().map(|l| Some(l.as_str())).chain([None]);
        match data_type {
            "utf8" => Arc::new(StringArray::from_iter(with_null)),
            "large" => Arc::new(LargeStringArray::from_iter(with_null)),
            "view" => Arc::new(StringViewArray::from_iter(with_null)),
            _ => Arc::new(BinaryArray::from_iter(
                with_null.map(|l| l.map(str::as_bytes)),
            )),
        }
    };
    let (ctx, _) = context(2, None);
    for kind in ["utf8", "large", "view", "binary"] {
        let array = column(kind);
        let schema = Schema::new(vec![Field::new("body", array.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![array]).unwrap();
        ctx.deregister_table("t").unwrap();
        ctx.register_batch("t", batch).unwrap();
        let batches = ctx
            .sql(&format!(
                "SELECT filtervm_match('sns', '{PAID_EU}', '{BODY}', body) FROM t"
            ))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let verdicts: Vec<Option<bool>> = batches
            .iter()
            .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
            .collect();
        let mut expected: Vec<Option<bool>> = lines
            .iter()
            .map(|l| match_line("sns", PAID_EU, BODY, l))
            .collect();
        expected.push(None); // a null message is a null result
        assert_eq!(verdicts, expected, "{kind}");
    }
}

#[tokio::test]
async fn invalid_policy_is_a_planning_error_with_code_and_pointer() {
    let (ctx, registered) = context(2, None);
    ctx.register_batch(
        "t",
        RecordBatch::try_from_iter([("m", Arc::new(StringArray::from(vec!["{}"])) as ArrayRef)])
            .unwrap(),
    )
    .unwrap();
    let cases = [
        (
            r#"SELECT filtervm_match('basaltic', '{"a": [{"prefix": ""}]}', '', m) FROM t"#,
            ["NOTIFICATION_INVALID_FILTER_POLICY", "/a/0/prefix"],
        ),
        (
            r#"SELECT count(*) FROM t WHERE filtervm_match('sns', '{"a": [1]}', '{"scope": "Body"}', m)"#,
            ["INVALID_OPTIONS", "/scope"],
        ),
        (
            r#"SELECT filtervm_match('snss', '{}', '', m) FROM t"#,
            ["UNKNOWN_DIALECT", "snss"],
        ),
        (
            r#"SELECT filtervm_match('eventgrid', '{"advancedFilters": 3}', '', m) FROM t"#,
            ["/advancedFilters", "filtervm_match"],
        ),
    ];
    for (sql, wanted) in cases {
        // Planning only: no row is read.
        let error = match ctx.sql(sql).await {
            Ok(frame) => frame.create_physical_plan().await.err(),
            Err(e) => Some(e),
        };
        let error = error
            .unwrap_or_else(|| panic!("{sql} should not plan"))
            .to_string();
        for w in wanted {
            assert!(error.contains(w), "{sql}: {error} should name {w}");
        }
    }
    assert_eq!(registered.matcher.rows_evaluated(), 0);
}

#[tokio::test]
async fn policy_per_row_compiles_each_distinct_policy_once() {
    let (ctx, registered) = context(1, None);
    let policies = [
        r#"{"eventType":["order.paid"]}"#,
        r#"{"eventType":["order.created"]}"#,
    ];
    let lines = events(300, 3, false);
    let rows: Vec<(&str, &str)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (policies[(i / 7) % 2], l.as_str()))
        .collect();
    let batch = RecordBatch::try_from_iter([
        (
            "policy",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
        ),
        (
            "body",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))) as ArrayRef,
        ),
    ])
    .unwrap();
    ctx.register_batch("t", batch).unwrap();
    let batches = ctx
        .sql(&format!(
            "SELECT filtervm_match('sns', policy, '{BODY}', body) FROM t"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let verdicts: Vec<Option<bool>> = batches
        .iter()
        .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
        .collect();
    let expected: Vec<Option<bool>> = rows
        .iter()
        .map(|(p, l)| match_line("sns", p, BODY, l))
        .collect();
    assert_eq!(verdicts, expected);
    assert!(verdicts.contains(&Some(true)) && verdicts.contains(&Some(false)));
    assert_eq!(registered.matcher.policies_compiled(), 2);
}

#[tokio::test]
async fn struct_and_map_columns_are_attributes_or_headers() {
    let (ctx, _) = context(1, None);
    // A struct of attribute columns: text is a String attribute, a number a Number attribute,
    // a struct of type and value an explicitly typed one.
    let typed = StructArray::from(vec![
        (
            Arc::new(Field::new("Type", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![
                Some("Number"),
                Some("String"),
                None,
                Some("Number"),
            ])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("Value", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![
                Some("5"),
                Some("5"),
                None,
                Some("12"),
            ])) as ArrayRef,
        ),
    ]);
    let attributes = StructArray::from(vec![
        (
            Arc::new(Field::new("event", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![
                Some("order.paid"),
                Some("order.paid"),
                None,
                Some("x"),
            ])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("amount", DataType::Float64, true)),
            Arc::new(Float64Array::from(vec![
                Some(150.0),
                Some(99.5),
                Some(500.0),
                None,
            ])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("retries", DataType::Int64, true)),
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(0)])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("level", typed.data_type().clone(), true)),
            Arc::new(typed) as ArrayRef,
        ),
    ]);
    // A map of headers.
    let mut headers = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    for row in [
        vec![("region", "eu-west"), ("subject", "orders.eu.created")],
        vec![("region", "us-east"), ("subject", "orders.us.created")],
        vec![],
        vec![("region", "eu-central")],
    ] {
        for (k, v) in row {
            headers.keys().append_value(k);
            headers.values().append_value(v);
        }
        headers.append(true).unwrap();
    }
    let headers = headers.finish();
    let batch = RecordBatch::try_from_iter([
        ("attrs", Arc::new(attributes) as ArrayRef),
        ("headers", Arc::new(headers) as ArrayRef),
    ])
    .unwrap();
    ctx.register_batch("t", batch).unwrap();
    let run = |sql: String| {
        let ctx = ctx.clone();
        async move {
            let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
            batches
                .iter()
                .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
                .collect::<Vec<Option<bool>>>()
        }
    };
    // sns attribute scope: numeric matching needs Number attributes (from the Float64 column).
    let sns = r#"{"event":["order.paid"],"amount":[{"numeric":[">=",100]}]}"#;
    assert_eq!(
        run(format!(
            "SELECT filtervm_match('sns', '{sns}', '', attrs) FROM t"
        ))
        .await,
        [Some(true), Some(false), Some(false), Some(false)]
    );
    // A typed attribute: Number 5 is numeric, String 5 is not.
    let level = r#"{"level":[{"numeric":["=",5]}]}"#;
    assert_eq!(
        run(format!(
            "SELECT filtervm_match('sns', '{level}', '{{}}', attrs) FROM t"
        ))
        .await,
        [Some(true), Some(false), Some(false), Some(false)]
    );
    // stream (text form) over the map of headers.
    assert_eq!(
        run("SELECT filtervm_match('stream', 'region = eu-* and subject = orders.*.created', '', headers) FROM t".to_owned()).await,
        [Some(true), Some(false), Some(false), Some(false)]
    );
    // An Event Grid filter reads a JSON event: a map is refused while planning.
    let error = ctx
        .sql("SELECT filtervm_match('eventgrid', '{}', '', headers) FROM t")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("map or struct"), "{error}");
}

#[tokio::test]
async fn route_equals_one_by_one_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let lines = events(400, 4, true);
    write_partitioned(dir.path(), &lines, 4);
    let (ctx, _) = context(3, Some(SUBSCRIPTIONS));
    session::register_archive(&ctx, "events", dir.path(), None)
        .await
        .unwrap();
    let batches = ctx
        .sql("SELECT message, filtervm_route(message) AS ids FROM events")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let mut got: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    for batch in &batches {
        let messages = batch.column(0).as_string::<i32>();
        let ids = batch.column(1).as_list::<i32>();
        for row in 0..batch.num_rows() {
            let routed = (!ids.is_null(row)).then(|| {
                let list = ids.value(row);
                list.as_string::<i32>()
                    .iter()
                    .map(|s| s.unwrap().to_owned())
                    .collect()
            });
            got.insert(messages.value(row).to_owned(), routed);
        }
    }
    assert_eq!(got.len(), lines.len());
    let mut routed_somewhere = 0;
    for line in &lines {
        let expected = route_line(SUBSCRIPTIONS, line);
        assert_eq!(got[line], expected, "{line}");
        routed_somewhere += usize::from(expected.is_some_and(|ids| !ids.is_empty()));
    }
    assert!(routed_somewhere > lines.len() / 4);
    // Identical filters (paid-eu and paid-eu-again) both report; numeric ids print as numbers.
    assert!(
        got.values()
            .flatten()
            .any(|ids| ids.contains(&"paid-eu-again".to_owned()))
    );
    assert!(
        got.values()
            .flatten()
            .any(|ids| ids.contains(&"7".to_owned()))
    );
}

#[tokio::test]
async fn route_without_a_set_says_how_to_load_one() {
    let (ctx, _) = context(1, None);
    ctx.register_batch(
        "t",
        RecordBatch::try_from_iter([("m", Arc::new(StringArray::from(vec!["{}"])) as ArrayRef)])
            .unwrap(),
    )
    .unwrap();
    let error = ctx
        .sql("SELECT filtervm_route(m) FROM t")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("--subscriptions"), "{error}");
}

#[test]
fn invalid_subscriptions_are_all_reported() {
    let text = r#"{"id":"a","dialect":"sns","policy":{"x":["y"]}}
{"id":"b","dialect":"basaltic","policy":{"a":[{"prefix":""}]}}
not json
{"id":"a","dialect":"sns","policy":{}}
{"id":"c","dialect":"nope","policy":{}}
{"id":"d","dialect":"sns"}
"#;
    let errors = Subscriptions::from_ndjson(text).unwrap_err();
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 5, "{shown:#?}");
    assert_eq!((errors[0].line, errors[0].id.as_deref()), (2, Some("b")));
    assert_eq!(errors[0].error.code, "NOTIFICATION_INVALID_FILTER_POLICY");
    assert_eq!(errors[0].error.pointer, "/a/0/prefix");
    assert_eq!(errors[1].line, 3);
    assert!(shown[2].contains("already used on line 1"), "{}", shown[2]);
    assert_eq!(errors[3].error.pointer, "/dialect");
    assert_eq!(errors[4].error.pointer, "/policy");
}

#[tokio::test]
async fn parquet_and_json_columns_give_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let lines = events(300, 5, false);
    write_partitioned(&dir.path().join("lines"), &lines, 2);
    let (ctx, _) = context(2, Some(SUBSCRIPTIONS));
    session::register_archive(&ctx, "events", &dir.path().join("lines"), None)
        .await
        .unwrap();
    // The archive copied to Parquet with DataFusion's own COPY.
    let parquet = dir.path().join("parquet");
    std::fs::create_dir_all(&parquet).unwrap();
    ctx.sql(&format!(
        "COPY events TO '{}/events.parquet' STORED AS PARQUET",
        parquet.display()
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    session::register_archive(&ctx, "archived", &parquet, None)
        .await
        .unwrap();
    let count = |sql: String| {
        let ctx = ctx.clone();
        async move {
            let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
            batches[0]
                .column(0)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .value(0)
        }
    };
    let expected = lines
        .iter()
        .filter(|l| match_line("sns", PAID_EU, BODY, l) == Some(true))
        .count() as i64;
    for table in ["events", "archived"] {
        let sql = format!(
            "SELECT count(*) FROM {table} WHERE filtervm_match('sns', '{PAID_EU}', '{BODY}', message)"
        );
        assert_eq!(count(sql).await, expected, "{table}");
        let sql = format!(
            "SELECT count(*) FROM (SELECT unnest(filtervm_route(message)) AS id FROM {table}) WHERE id = 'paid-eu'"
        );
        assert_eq!(count(sql).await, expected, "{table} routed");
    }
    // Read as JSON columns, `data` is a struct: an sns attribute-scope policy reads its fields.
    let (ctx, _) = context(2, None);
    session::register_archive(
        &ctx,
        "cols",
        &dir.path().join("lines"),
        Some(InputFormat::Json),
    )
    .await
    .unwrap();
    let region = r#"{"region":[{"prefix":"eu-"}]}"#;
    let expected = lines
        .iter()
        .filter(|l| l.contains(r#""region":"eu-"#))
        .count() as i64;
    let batches = ctx
        .sql(&format!(
            "SELECT count(*) FROM cols WHERE filtervm_match('sns', '{region}', '', data)"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        batches[0]
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0),
        expected
    );
}

#[tokio::test]
async fn messages_over_the_size_limit_are_null() {
    let (ctx, _) = context(1, None);
    let limit = filtervm_replay::adapter::MAX_MESSAGE_BYTES;
    let big = |len: usize| format!("{{\"a\":\"{}\"}}", "x".repeat(len - 8));
    let (fits, over) = (big(limit), big(limit + 1));
    assert_eq!((fits.len(), over.len()), (limit, limit + 1));
    ctx.register_batch(
        "t",
        RecordBatch::try_from_iter([(
            "m",
            Arc::new(StringArray::from(vec![fits.as_str(), over.as_str()])) as ArrayRef,
        )])
        .unwrap(),
    )
    .unwrap();
    let batches = ctx
        .sql(&format!(
            "SELECT filtervm_match('sns', '{{}}', '{BODY}', m) FROM t"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let verdicts: Vec<Option<bool>> = batches[0].column(0).as_boolean().iter().collect();
    assert_eq!(verdicts, [Some(true), None]);
}

/// A binary attribute or header value that is not UTF-8 is present and satisfies no string test
/// (`filtervm/MESSAGES.md`), in SQL as through the library given the same bytes; a declared type
/// that is not UTF-8 is no type (`INVALID_MESSAGE`).
#[tokio::test]
async fn binary_values_that_are_not_utf8_are_present_as_in_the_library() {
    use datafusion::arrow::array::BinaryBuilder;
    use filtervm::{AttributeType, Dialect, Filter, Message};
    let (ctx, _) = context(1, None);
    let rows: [&[(&str, &[u8])]; 4] = [
        &[("a", b"\xff\xfe")],
        &[("a", b"x")],
        &[],
        &[("a", b"x\xc3"), ("b", b"y")],
    ];
    let mut fields = MapBuilder::new(None, StringBuilder::new(), BinaryBuilder::new());
    for row in rows {
        for (k, v) in row {
            fields.keys().append_value(k);
            fields.values().append_value(v);
        }
        fields.append(true).unwrap();
    }
    // A typed attribute whose type name is not UTF-8, and one whose value is not.
    let typed = StructArray::from(vec![
        (
            Arc::new(Field::new("Type", DataType::Binary, true)),
            Arc::new(BinaryArray::from(vec![&b"Str\xffing"[..], b"String"])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("Value", DataType::Binary, true)),
            Arc::new(BinaryArray::from(vec![&b"x"[..], b"\xff"])) as ArrayRef,
        ),
    ]);
    let typed = StructArray::from(vec![(
        Arc::new(Field::new("a", typed.data_type().clone(), true)),
        Arc::new(typed) as ArrayRef,
    )]);
    ctx.register_batch(
        "t",
        RecordBatch::try_from_iter([("m", Arc::new(fields.finish()) as ArrayRef)]).unwrap(),
    )
    .unwrap();
    ctx.register_batch(
        "typed",
        RecordBatch::try_from_iter([("m", Arc::new(typed) as ArrayRef)]).unwrap(),
    )
    .unwrap();
    let sql = |table: &str, dialect: &str, policy: &str| {
        let ctx = ctx.clone();
        let sql = format!(
            "SELECT filtervm_match('{dialect}', '{policy}', '', m), \
             filtervm_match_error('{dialect}', '{policy}', '', m) FROM {table}"
        );
        async move {
            let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
            let mut out = Vec::new();
            for b in batches {
                let (verdicts, errors) = (b.column(0).as_boolean(), b.column(1).as_string::<i32>());
                for row in 0..b.num_rows() {
                    out.push(if verdicts.is_null(row) {
                        Err(errors.value(row).split(':').next().unwrap().to_owned())
                    } else {
                        Ok(verdicts.value(row))
                    });
                }
            }
            out
        }
    };
    let cases = [
        (Dialect::Sns, r#"{"a":[{"exists":true}]}"#),
        (Dialect::Sns, r#"{"a":["x"]}"#),
        (Dialect::Sns, r#"{"a":[{"prefix":"x"}]}"#),
        (Dialect::Stream, "a = *"),
        (Dialect::Stream, "a = x*"),
    ];
    for (dialect, policy) in cases {
        let filter = Filter::new(dialect, policy).unwrap();
        let want: Vec<Result<bool, String>> = rows
            .iter()
            .map(|row| {
                let message = if dialect == Dialect::Sns {
                    let attributes: Vec<(&str, AttributeType, &[u8])> = row
                        .iter()
                        .map(|(k, v)| (*k, AttributeType::String, *v))
                        .collect();
                    filter.matches(&Message::attributes(&attributes[..]))
                } else {
                    let headers: Vec<(&str, &[u8])> = row.to_vec();
                    filter.matches(&Message::headers(&headers[..]))
                };
                message.map_err(|e| e.code.as_str().to_owned())
            })
            .collect();
        let got = sql("t", &dialect.to_string(), policy).await;
        assert_eq!(got, want, "{dialect} {policy}");
    }
    // The MESSAGES.md row itself: present, and no string test holds.
    assert_eq!(
        sql("t", "sns", r#"{"a":[{"exists":true}]}"#).await,
        [Ok(true), Ok(true), Ok(false), Ok(true)]
    );
    assert_eq!(
        sql("t", "sns", r#"{"a":[{"prefix":"x"}]}"#).await,
        [Ok(false), Ok(true), Ok(false), Ok(false)]
    );
    assert_eq!(
        sql("typed", "sns", r#"{"a":[{"exists":true}]}"#).await,
        [Err("INVALID_MESSAGE".to_owned()), Ok(true)]
    );
}

/// `session_state_in(.., ReadMode::Trusted)` (what `--trusted-input` runs): a message cell whose
/// only faults are in members no filter reads gets a verdict and a route; by default it is
/// `MESSAGE_NOT_JSON` (README, "Trusted input"). Valid JSON reads the same in both modes.
#[tokio::test]
async fn trusted_reading_skips_checking_unread_members() {
    use filtervm::ReadMode;
    let messages = [
        r#"{"source":"shop","detail":{"n":01,"ok":tru,"s":"a\qb"}}"#,
        r#"{"source":"shop","detail":{"n":1,"ok":true}}"#,
        r#"{"source":"web","detail":[1,{"x":null}]}"#,
        r#"{"detail":{"n":[1,2},"source":"shop""#,
        r#"{"source":"shop","detail":{"n":[1,2}"#,
    ];
    let subscriptions = Arc::new(
        Subscriptions::from_ndjson(
            r#"{"id":"shop","dialect":"eventbridge","policy":{"source":["shop"]}}"#,
        )
        .unwrap(),
    );
    let run = |mode: ReadMode| {
        let subscriptions = Arc::clone(&subscriptions);
        async move {
            let (state, _) =
                session::session_state_in(SessionConfig::new(), Some(subscriptions), mode).unwrap();
            let ctx = SessionContext::new_with_state(state);
            let column = Arc::new(StringArray::from(messages.to_vec())) as ArrayRef;
            ctx.register_batch("t", RecordBatch::try_from_iter([("m", column)]).unwrap())
                .unwrap();
            let sql = "SELECT filtervm_match('eventbridge', '{\"source\":[\"shop\"]}', '', m), \
                       filtervm_match_error('eventbridge', '{\"source\":[\"shop\"]}', '', m), \
                       array_to_string(filtervm_route(m), ','), \
                       array_to_string(filtervm_unjudged(m), ',') FROM t";
            let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
            let mut out = Vec::new();
            for b in batches {
                let verdicts = b.column(0).as_boolean();
                let errors = b.column(1).as_string::<i32>();
                let routes = b.column(2).as_string::<i32>();
                let unjudged = b.column(3).as_string::<i32>();
                for row in 0..b.num_rows() {
                    let verdict = if verdicts.is_null(row) {
                        Err(errors.value(row).split(':').next().unwrap().to_owned())
                    } else {
                        Ok(verdicts.value(row))
                    };
                    let route = (!routes.is_null(row)).then(|| routes.value(row).to_owned());
                    let unjudged_code = unjudged.value(row).contains("MESSAGE_NOT_JSON");
                    out.push((verdict, route, unjudged_code));
                }
            }
            out
        }
    };
    let not_json = || Err("MESSAGE_NOT_JSON".to_owned());
    let shop = || Some("shop".to_owned());
    assert_eq!(
        run(ReadMode::Validating).await,
        [
            (not_json(), None, true),
            (Ok(true), shop(), false),
            (Ok(false), Some(String::new()), false),
            (not_json(), None, true),
            (not_json(), None, true),
        ]
    );
    assert_eq!(
        run(ReadMode::Trusted).await,
        [
            (Ok(true), shop(), false),
            (Ok(true), shop(), false),
            (Ok(false), Some(String::new()), false),
            // An unclosed container is still an error where it is read or skipped...
            (not_json(), None, true),
            // ...but not in a rest passed over once every wanted member has been read: the
            // input's last `}` is taken for the end (README, "Trusted input").
            (Ok(true), shop(), false),
        ]
    );
}

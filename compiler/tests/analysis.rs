//! The analysis: examples, diffs and their exactness on hand-picked policies of every dialect.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::analysis::{self, Exactness, Example, Verdict};
use filtervm_compiler::{Dialect, Evaluator, Filter, Options, compile_text};

fn filter(options: &str, dialect: Dialect, policy: &str) -> Filter {
    let options = Options::from_json(dialect, options).unwrap();
    compile_text(dialect, policy, &options).unwrap()
}

fn sns(policy: &str) -> Filter {
    filter("{}", Dialect::Sns, policy)
}

fn matches(f: &Filter, w: &analysis::Witness) -> bool {
    Evaluator::new()
        .matches_document(f, w.document.to_string().as_bytes())
        .unwrap()
}

#[test]
fn examples_match_and_do_not() {
    let f = sns(r#"{"store": ["example_corp"], "price": [{"numeric": [">", 10, "<=", 20]}]}"#);
    for want in [true, false] {
        match analysis::example(&f, want).unwrap() {
            Example::Found(w) => {
                assert_eq!(w.verdicts, vec![want]);
                assert_eq!(matches(&f, &w), want, "{}", w.document);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn disjoint_ranges_never_match_exactly() {
    let f = filter(
        "{}",
        Dialect::EventGrid,
        r#"{"advancedFilters": [
            {"operatorType": "NumberGreaterThan", "key": "data.n", "value": 10},
            {"operatorType": "NumberLessThan", "key": "data.n", "value": 5}]}"#,
    );
    match analysis::example(&f, true).unwrap() {
        Example::NoneExists(Exactness::Exact) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        analysis::example(&f, false).unwrap(),
        Example::Found(_)
    ));
}

#[test]
fn the_empty_policy_matches_every_message() {
    let f = sns("{}");
    assert!(matches!(
        analysis::example(&f, false).unwrap(),
        Example::NoneExists(Exactness::Exact)
    ));
}

#[test]
fn a_wider_set_differs_with_a_witness_on_the_new_value() {
    let a = sns(r#"{"a": ["x"]}"#);
    let b = sns(r#"{"a": ["x", "y"]}"#);
    let d = analysis::diff(&a, &b).unwrap();
    assert_eq!(d.verdict, Verdict::Different);
    assert!(d.first_only.is_none());
    let w = d.second_only.unwrap();
    assert!(!matches(&a, &w) && matches(&b, &w), "{}", w.document);
    assert_eq!(
        w.document
            .pointer("/attributes/a/Value")
            .and_then(|v| v.as_str()),
        Some("y")
    );
    assert_eq!(d.keys.len(), 1, "{:?}", d.keys);
}

#[test]
fn a_redundant_alternative_is_the_same_exactly() {
    let a = sns(r#"{"a": [{"prefix": "ab"}]}"#);
    let b = sns(r#"{"a": [{"prefix": "ab"}, "abc", {"prefix": "abd"}]}"#);
    let d = analysis::diff(&a, &b).unwrap();
    assert_eq!(d.verdict, Verdict::Same, "{d:?}");
    assert_eq!(d.exactness, Exactness::Exact);
}

#[test]
fn numeric_ranges_differ_by_the_widened_part() {
    let a = sns(r#"{"amount": [{"numeric": [">=", 150]}]}"#);
    let b = sns(r#"{"amount": [{"numeric": [">=", 100]}]}"#);
    let d = analysis::diff(&a, &b).unwrap();
    assert_eq!(d.verdict, Verdict::Different);
    let w = d.second_only.unwrap();
    let v: f64 = w
        .document
        .pointer("/attributes/amount/Value")
        .unwrap()
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((100.0..150.0).contains(&v), "{v}");
}

#[test]
fn wildcards_are_bounded() {
    let a = filter("{}", Dialect::Stream, "a = x*");
    let b = filter("{}", Dialect::Stream, "a = x*");
    let d = analysis::diff(&a, &b).unwrap();
    assert_eq!(d.verdict, Verdict::Unknown, "{d:?}");
    assert!(matches!(d.exactness, Exactness::Bounded(_)));
}

#[test]
fn models_must_agree() {
    let a = sns(r#"{"a": ["x"]}"#);
    let b = filter("{}", Dialect::Stream, "a = x");
    let e = analysis::diff(&a, &b).unwrap_err();
    assert_eq!(e.code, "ANALYSIS_MODEL_MISMATCH");
}

#[test]
fn across_dialects_of_one_model() {
    let a = sns(r#"{"a": ["x"]}"#);
    let b = filter("{}", Dialect::Basaltic, r#"{"a": ["x"]}"#);
    let d = analysis::diff(&a, &b).unwrap();
    // basaltic reads any attribute's text (B-4): a Number attribute "x"? Whatever the verdict,
    // every witness is verified.
    for w in [&d.first_only, &d.second_only].into_iter().flatten() {
        assert_ne!(w.verdicts[0], w.verdicts[1]);
    }
}

#[test]
fn a_number_attribute_of_any_text_tells_sns_from_basaltic() {
    // basaltic compares an attribute's text whatever its type (B-4); sns reads a Number as a
    // number.
    let a = sns(r#"{"store": ["x"]}"#);
    let b = filter("{}", Dialect::Basaltic, r#"{"store": ["x"]}"#);
    let d = analysis::diff(&a, &b).unwrap();
    assert_eq!(d.verdict, Verdict::Different);
    let w = d.second_only.unwrap();
    assert_eq!(
        w.document
            .pointer("/attributes/store/Type")
            .and_then(|v| v.as_str()),
        Some("Number")
    );
    assert!(
        d.keys[0].second_only[0].starts_with("a Number attribute \"x\""),
        "{:?}",
        d.keys
    );
}

#[test]
fn audit_finds_never_always_and_equivalent_filters() {
    let never = filter(
        "{}",
        Dialect::EventGrid,
        r#"{"advancedFilters": [
            {"operatorType": "NumberGreaterThan", "key": "data.n", "value": 10},
            {"operatorType": "NumberLessThan", "key": "data.n", "value": 5}]}"#,
    );
    let always = sns("{}");
    let a = filter("{}", Dialect::Stream, "a in [x, y]");
    let b = filter(
        "{}",
        Dialect::Expr,
        r#"{"op": "OR", "exp": [{"key": "a", "op": "in", "value": ["y"]}, {"key": "a", "op": "in", "value": ["x"]}]}"#,
    );
    let c = filter("{}", Dialect::Stream, "a = x");
    let all = [&never, &always, &a, &c, &b];
    let audit = analysis::audit::audit(&all);
    assert_eq!(audit.never, vec![(0, Exactness::Exact)]);
    assert_eq!(audit.always, vec![(1, Exactness::Exact)]);
    assert_eq!(audit.groups.len(), 1, "{:?}", audit.groups);
    assert_eq!(audit.groups[0].0, vec![2, 4]);
    assert!(audit.errors.is_empty() && audit.unknown.is_empty());
}

mod translate {
    use super::*;
    use filtervm_compiler::analysis::translate::translate;

    fn policy(text: &str) -> filtervm_vm::json::Value {
        filtervm_vm::json::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn expr_to_stream_and_back_is_proved() {
        let source = r#"{"op": "AND", "exp": [{"key": "a", "op": "in", "value": ["x", "y"]},
            {"op": "NOT", "exp": [{"key": "b", "op": "exists"}]}]}"#;
        let f = filter("{}", Dialect::Expr, source);
        let t = translate(&f, &policy(source), &Options::from(Dialect::Stream)).unwrap();
        assert_eq!(
            t.policy.to_string(),
            r#"{"groups":[[{"op":"in","header":"a","values":["x","y"]},{"op":"missing","header":"b"}]]}"#
        );
        let back = translate(&t.filter, &t.policy, &Options::from(Dialect::Expr)).unwrap();
        assert_eq!(
            analysis::diff(&f, &back.filter).unwrap().verdict,
            Verdict::Same
        );
    }

    #[test]
    fn what_the_target_lacks_is_named_with_its_pointer() {
        let source = r#"{"op": "OR", "exp": [{"key": "a", "op": "in", "value": ["x"]},
            {"key": "b", "op": "startsWith", "value": "p"}]}"#;
        let f = filter("{}", Dialect::Expr, source);
        let e = translate(&f, &policy(source), &Options::from(Dialect::Stream)).unwrap_err();
        assert_eq!(e.code, "TRANSLATE_INEXPRESSIBLE");
        assert_eq!(e.pointer, "/exp/1");
        assert!(e.message.contains("str-prefix"), "{e}");
        let e = translate(&f, &policy(source), &Options::from(Dialect::Sns)).unwrap_err();
        assert_eq!(e.code, "TRANSLATE_MODEL");
    }

    #[test]
    fn a_literal_star_has_no_stream_form() {
        let source = r#"{"key": "a", "op": "in", "value": ["x*"]}"#;
        let f = filter("{}", Dialect::Expr, source);
        let e = translate(&f, &policy(source), &Options::from(Dialect::Stream)).unwrap_err();
        assert!(e.message.contains("literal `*`"), "{e}");
    }

    #[test]
    fn sns_and_basaltic_read_a_number_attribute_differently() {
        let f = sns(r#"{"a": ["x"]}"#);
        let e = translate(
            &f,
            &policy(r#"{"a": ["x"]}"#),
            &Options::from(Dialect::Basaltic),
        )
        .unwrap_err();
        assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT");
        let w = e.witness.unwrap();
        assert_ne!(w.verdicts[0], w.verdicts[1]);
        // What basaltic lacks is named by its own validation.
        let or = r#"{"$or": [{"a": ["x"]}, {"b": ["y"]}]}"#;
        let e = translate(&sns(or), &policy(or), &Options::from(Dialect::Basaltic)).unwrap_err();
        assert_eq!(e.code, "TRANSLATE_INEXPRESSIBLE");
        assert_eq!(e.pointer, "/$or");
    }
}

#[test]
fn event_grid_member_case_makes_a_cross_dialect_comparison_bounded() {
    let eg = filter(
        "{}",
        Dialect::EventGrid,
        r#"{"advancedFilters": [{"operatorType": "BoolEquals", "key": "flag", "value": true}]}"#,
    );
    let sns_body = filter(
        r#"{"scope": "MessageBody"}"#,
        Dialect::Sns,
        r#"{"flag": [true]}"#,
    );
    let d = analysis::diff(&eg, &sns_body).unwrap();
    // Either a witness, or no claim of sameness: `{"FLAG": true}` tells them apart.
    assert_ne!(d.verdict, Verdict::Same, "{d:?}");
}

mod translate_documents {
    use super::*;
    use filtervm_compiler::analysis::translate::translate;

    fn policy(text: &str) -> filtervm_vm::json::Value {
        filtervm_vm::json::parse(text.as_bytes()).unwrap()
    }

    fn body() -> Options {
        Options::from_json(Dialect::Sns, r#"{"scope": "MessageBody"}"#).unwrap()
    }

    fn eventbridge(text: &str) -> Filter {
        filter("{}", Dialect::EventBridge, text)
    }

    fn eventgrid(text: &str) -> Filter {
        filter("{}", Dialect::EventGrid, text)
    }

    /// The witness of a refused translation: a message the source and the candidate judge
    /// differently, the source's verdict checked again here.
    fn assert_witness(source: &Filter, e: &analysis::translate::TranslateError) {
        let w = e.witness.as_ref().expect("a witness");
        assert_eq!(w.verdicts.len(), 2);
        assert_ne!(w.verdicts[0], w.verdicts[1], "{}", w.document);
        assert_eq!(matches(source, w), w.verdicts[0], "{}", w.document);
    }

    #[test]
    fn a_member_named_twice_tells_sns_bodies_from_eventbridge() {
        // sns keeps the last occurrence of a repeated member name, EventBridge every one (EB-3):
        // no pattern reading a member is proved the same in the other dialect.
        let text = r#"{"source": ["aws.ec2"], "state": ["running", "stopped"]}"#;
        let f = eventbridge(text);
        let e = translate(&f, &policy(text), &body()).unwrap_err();
        assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT", "{e}");
        assert_witness(&f, &e);
        let w = e.witness.unwrap();
        let doc = w.document.to_string();
        assert!(
            doc.matches(r#""source":"#).count() == 2 || doc.matches(r#""state":"#).count() == 2,
            "{doc}"
        );
        let sns_body = filter(r#"{"scope": "MessageBody"}"#, Dialect::Sns, text);
        let e = translate(
            &sns_body,
            &policy(text),
            &Options::from(Dialect::EventBridge),
        )
        .unwrap_err();
        assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT", "{e}");
        assert_witness(&sns_body, &e);
        // Within one dialect the policy is itself.
        let t = translate(&f, &policy(text), &Options::from(Dialect::EventBridge)).unwrap();
        assert_eq!(t.policy, policy(text));
    }

    #[test]
    fn numbers_beyond_binary64_tell_eventbridge_from_sns() {
        // EventBridge compares only comparable numbers (EB-17); SNS reads binary64 (rule 31).
        let text = r#"{"n": [{"numeric": [">", 5]}]}"#;
        let f = eventbridge(text);
        let e = translate(&f, &policy(text), &body()).unwrap_err();
        assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT");
        assert_eq!(e.pointer, "/n/0");
        assert_witness(&f, &e);
    }

    #[test]
    fn anything_but_on_arrays_tells_eventbridge_from_sns() {
        // EB-25: some element passes; sns rule 28: no element is excluded.
        let text = r#"{"a": [{"anything-but": ["x"]}]}"#;
        let f = eventbridge(text);
        let e = translate(&f, &policy(text), &body()).unwrap_err();
        assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT");
        assert_witness(&f, &e);
        assert!(e.witness.unwrap().document.get("a").unwrap().is_array());
    }

    #[test]
    fn what_sns_or_eventbridge_lacks_is_named_by_its_validation() {
        let text = r#"{"a": [{"exactly": "x"}]}"#;
        let e = translate(&eventbridge(text), &policy(text), &body()).unwrap_err();
        assert_eq!(e.code, "TRANSLATE_INEXPRESSIBLE");
        assert!(e.pointer.starts_with("/a"), "{e}");
        let everything = filter(r#"{"scope": "MessageBody"}"#, Dialect::Sns, "{}");
        let e = translate(
            &everything,
            &policy("{}"),
            &Options::from(Dialect::EventBridge),
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.pointer.as_str()),
            ("TRANSLATE_INEXPRESSIBLE", "")
        );
    }

    #[test]
    fn eventgrid_to_eventbridge_is_refused_with_the_closest_pattern_and_a_witness() {
        let text = r#"{"includedEventTypes": ["Microsoft.Storage.BlobCreated"],
            "advancedFilters": [{"operatorType": "StringIn", "key": "data.api", "values": ["PutBlob"]}]}"#;
        let f = eventgrid(text);
        for to in [Options::from(Dialect::EventBridge), body()] {
            let e = translate(&f, &policy(text), &to).unwrap_err();
            assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT", "{e}");
            assert!(
                e.pointer == "/includedEventTypes" || e.pointer.starts_with("/advancedFilters/0"),
                "{e}"
            );
            assert!(
                e.message
                    .contains(r#""data":{"api":[{"equals-ignore-case":"PutBlob"}]}"#),
                "{e}"
            );
            assert_witness(&f, &e);
        }
    }

    #[test]
    fn eventgrid_constructs_without_a_pattern_form_are_named() {
        let cases = [
            (
                r#"{"advancedFilters": [{"operatorType": "StringContains", "key": "data.a", "values": ["x"]}]}"#,
                "/advancedFilters/0/operatorType",
            ),
            (
                r#"{"advancedFilters": [{"operatorType": "IsNotNull", "key": "data.a"}]}"#,
                "/advancedFilters/0/operatorType",
            ),
            (
                r#"{"advancedFilters": [{"operatorType": "NumberGreaterThan", "key": "data.a", "value": 1},
                    {"operatorType": "NumberLessThan", "key": "data.a", "value": 9}]}"#,
                "/advancedFilters/1",
            ),
            (
                r#"{"subjectBeginsWith": "a", "subjectEndsWith": "z"}"#,
                "/subjectEndsWith",
            ),
        ];
        for (text, at) in cases {
            let e = translate(
                &eventgrid(text),
                &policy(text),
                &Options::from(Dialect::EventBridge),
            )
            .unwrap_err();
            assert_eq!(
                (e.code, e.pointer.as_str()),
                ("TRANSLATE_INEXPRESSIBLE", at),
                "{e}"
            );
        }
    }

    /// Translates `text` (of `from`, compiled with `from_options`) into Event Grid (with
    /// `to_options`) assuming `assumptions`.
    fn into_eventgrid(
        from: Dialect,
        from_options: &str,
        text: &str,
        to_options: &str,
        assumptions: &str,
    ) -> Result<analysis::translate::Translation, analysis::translate::TranslateError> {
        analysis::translate::translate_assuming(
            &filter(from_options, from, text),
            &policy(text),
            &Options::from_json(Dialect::EventGrid, to_options).unwrap(),
            assume(assumptions),
        )
    }

    const BOTH: &str = "canonical-documents,no-arrays";

    #[test]
    fn eventbridge_numbers_and_booleans_translate_into_eventgrid() {
        let text = r#"{"eventType": [{"equals-ignore-case": "Acme.Payment.Completed"}],
            "subject": [{"prefix": "/tenants/eu/"}],
            "data": {"amount": [{"numeric": [">=", 100, "<", 5000]}], "captured": [true],
                     "tier": [1, 2], "band": [{"numeric": [">=", 0, "<=", 9]}, 20],
                     "code": ["404"]}}"#;
        let t = into_eventgrid(Dialect::EventBridge, "{}", text, "{}", BOTH).unwrap();
        assert_eq!(
            t.policy.to_string(),
            concat!(
                r#"{"includedEventTypes":["Acme.Payment.Completed"],"#,
                r#""subjectBeginsWith":"/tenants/eu/","isSubjectCaseSensitive":true,"#,
                r#""enableAdvancedFilteringOnArrays":true,"advancedFilters":["#,
                r#"{"operatorType":"NumberGreaterThanOrEquals","key":"data.amount","value":100},"#,
                r#"{"operatorType":"NumberLessThan","key":"data.amount","value":5000},"#,
                r#"{"operatorType":"BoolEquals","key":"data.captured","value":true},"#,
                r#"{"operatorType":"NumberIn","key":"data.tier","values":[1,2]},"#,
                r#"{"operatorType":"NumberInRange","key":"data.band","values":[[0,9],[20,20]]},"#,
                r#"{"operatorType":"StringIn","key":"data.code","values":["404"]}]}"#
            )
        );
        let source = eventbridge(text);
        let d = analysis::diff_assuming(&source, &t.filter, assume(BOTH)).unwrap();
        assert_eq!((d.verdict, d.exactness), (Verdict::Same, Exactness::Exact));
        // With nothing assumed, a document tells them apart (a member named twice, an array).
        let e = into_eventgrid(Dialect::EventBridge, "{}", text, "{}", "none").unwrap_err();
        assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT", "{e}");
        assert_witness(&source, &e);
    }

    #[test]
    fn sns_bodies_translate_into_both_event_grid_schemas() {
        let text = r#"{"data": {"n": [{"numeric": ["=", 5]}, 7], "ok": [false]},
                       "myext": [{"numeric": ["<=", 3]}]}"#;
        let body = r#"{"scope": "MessageBody"}"#;
        let cloud = r#"{"schema": "CloudEventSchemaV1_0"}"#;
        let t = into_eventgrid(Dialect::Sns, body, text, cloud, BOTH).unwrap();
        let filters = t.policy.get("advancedFilters").unwrap().to_string();
        assert!(
            filters.contains(r#"{"operatorType":"NumberIn","key":"data.n","values":[5,7]}"#)
                && filters.contains(r#""key":"myext","value":3"#),
            "{filters}"
        );
        // The Event Grid schema has no member `myext` (EG-16, EG-19).
        let e = into_eventgrid(Dialect::Sns, body, text, "{}", BOTH).unwrap_err();
        assert_eq!(
            (e.code, e.pointer.as_str()),
            ("TRANSLATE_INEXPRESSIBLE", "/myext")
        );
        assert!(e.message.contains("EG-19"), "{e}");
        // A CloudEvents key is read in lower case whatever its spelling (EG-17).
        let upper = r#"{"myExt": [1]}"#;
        let e = into_eventgrid(Dialect::Sns, body, upper, cloud, BOTH).unwrap_err();
        assert_eq!(e.pointer, "/myExt", "{e}");
        assert!(e.message.contains("`myext`"), "{e}");
    }

    #[test]
    fn an_or_over_one_field_translates_into_its_alternatives() {
        // Each branch tests `data.n` alone: the `$or` is that field's alternatives, ANDed with
        // the other fields as any field is.
        let text = r#"{"data": {"ok": [true], "$or": [{"n": [1]}, {"n": [{"numeric": [">=", 5, "<=", 9]}]}]}}"#;
        let t = into_eventgrid(Dialect::EventBridge, "{}", text, "{}", BOTH).unwrap();
        let filters = t.policy.get("advancedFilters").unwrap().to_string();
        assert!(
            filters.contains(
                r#"{"operatorType":"NumberInRange","key":"data.n","values":[[1,1],[5,9]]}"#
            ) && filters.contains(r#"{"operatorType":"BoolEquals","key":"data.ok","value":true}"#),
            "{filters}"
        );
        let d = analysis::diff_assuming(&eventbridge(text), &t.filter, assume(BOTH)).unwrap();
        assert_eq!((d.verdict, d.exactness), (Verdict::Same, Exactness::Exact));
        // The pointer of an alternative Event Grid cannot say is its place in its branch.
        let mixed = r#"{"data": {"$or": [{"n": [1]}, {"n": ["x"]}]}}"#;
        let e = into_eventgrid(Dialect::EventBridge, "{}", mixed, "{}", BOTH).unwrap_err();
        assert_eq!(
            (e.code, e.pointer.as_str()),
            ("TRANSLATE_INEXPRESSIBLE", "/data/$or/1/n/0"),
            "{e}"
        );
        // Branches on different fields, or a nested `$or`, stay without a form.
        for text in [
            r#"{"data": {"$or": [{"n": [1]}, {"m": [2]}]}}"#,
            r#"{"data": {"$or": [{"n": [1]}, {"$or": [{"n": [2]}, {"n": [3]}]}]}}"#,
        ] {
            let e = into_eventgrid(Dialect::EventBridge, "{}", text, "{}", BOTH).unwrap_err();
            assert_eq!(
                (e.code, e.pointer.as_str()),
                ("TRANSLATE_INEXPRESSIBLE", "/data/$or"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn what_event_grid_cannot_say_is_named_with_why() {
        let numbers: Vec<String> = (0..26).map(|i| i.to_string()).collect();
        let many = format!(r#"{{"data": {{"n": [{}]}}}}"#, numbers.join(","));
        let fields: Vec<String> = (0..26)
            .map(|i| format!(r#""f{i}": [{{"exists": true}}]"#))
            .collect();
        let wide = format!(r#"{{"data": {{{}}}}}"#, fields.join(","));
        for (text, at, why) in [
            // Every advanced string filter ignores case (EG-31).
            (
                r#"{"data": {"state": ["Paid"]}}"#,
                "/data/state/0",
                "\"PAID\"",
            ),
            (
                r#"{"data": {"state": [{"anything-but": ["x1"]}]}}"#,
                "/data/state/0",
                "EG-31",
            ),
            // Filters are only ANDed.
            (
                r#"{"$or": [{"data": {"a": [1]}}, {"data": {"b": [2]}}]}"#,
                "/$or",
                "EG-2",
            ),
            (r#"{"data": {"x": ["1", 2]}}"#, "/data/x/1", "EG-14"),
            (
                r#"{"data": {"x": [{"numeric": [">", 1]}, 5]}}"#,
                "/data/x/0",
                "closed",
            ),
            (r#"{"data": {"x": [true, false]}}"#, "/data/x", "BoolEquals"),
            // Keys.
            (r#"{"detail": {"state": ["1"]}}"#, "/detail/state", "EG-19"),
            (r#"{"data": {"a.b": [1]}}"#, "/data/a.b", "EG-15"),
            (r#"{"eventtype": ["1"]}"#, "/eventtype", "`eventType`"),
            // Operators and limits.
            (
                r#"{"data": {"ip": [{"cidr": "10.0.0.0/8"}]}}"#,
                "/data/ip/0",
                "EG-13",
            ),
            (
                r#"{"data": {"f": [{"wildcard": "a*"}]}}"#,
                "/data/f/0",
                "EG-10",
            ),
            (&many, "/data/n", "at most 25 filter values"),
            (&wide, "/data/f25", "at most 25 advanced filters"),
        ] {
            let e = into_eventgrid(Dialect::EventBridge, "{}", text, "{}", BOTH).unwrap_err();
            assert_eq!(
                (e.code, e.pointer.as_str()),
                ("TRANSLATE_INEXPRESSIBLE", at),
                "{text}: {e}"
            );
            assert!(e.message.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn null_and_presence_tests_are_refused_with_a_witness() {
        // Event Grid reads null as undefined (EG-20) and objects as present (EG-23): no filter
        // says `exists`, `null` or `anything-but` as a pattern does, which the proof shows.
        for text in [
            r#"{"data": {"n": [{"exists": true}]}}"#,
            r#"{"data": {"n": [{"exists": false}]}}"#,
            r#"{"data": {"n": [null]}}"#,
            r#"{"data": {"n": [{"anything-but": [1, 2]}]}}"#,
        ] {
            let e = into_eventgrid(Dialect::EventBridge, "{}", text, "{}", BOTH).unwrap_err();
            assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT", "{text}: {e}");
            assert_eq!(e.pointer, "/data/n/0", "{text}: {e}");
            assert_witness(&eventbridge(text), &e);
        }
    }

    #[test]
    fn diff_respells_members_event_grid_reads_ignoring_case() {
        // No `s` or `i`, which `ſ` and `ı` fold to in Event Grid alone (EG-31 against EB-20).
        let eg = eventgrid(r#"{"subjectBeginsWith": "/photo/"}"#);
        let eb = eventbridge(r#"{"subject": [{"prefix": {"equals-ignore-case": "/photo/"}}]}"#);
        let d = analysis::diff(&eg, &eb).unwrap();
        assert_eq!(d.verdict, Verdict::Different, "{d:?}");
        let w = d
            .first_only
            .as_ref()
            .expect("Event Grid alone matches a respelled subject");
        assert_eq!(w.verdicts, vec![true, false]);
        assert!(matches(&eg, w) && !matches(&eb, w), "{}", w.document);
        assert!(w.document.get("SUBJECT").is_some(), "{}", w.document);
        assert_eq!(d.keys.first().map(|k| k.key.as_str()), Some("subject"));
    }

    fn assume(names: &str) -> analysis::Assumptions {
        analysis::Assumptions::parse(names).unwrap()
    }

    /// Whether a witness document is one canonical-documents admits: no member named twice
    /// (read keeping every occurrence), no number but in its shortest round-trip form.
    fn canonical(w: &analysis::Witness) -> bool {
        fn walk(v: &filtervm_vm::json::Value) -> bool {
            use filtervm_vm::json::Value;
            match v {
                Value::Number(n) => filtervm_vm::number::comparable(n.as_str()).is_some(),
                Value::Array(items) => items.iter().all(walk),
                Value::Object(m) => {
                    let names: Vec<&String> = m.iter().map(|(k, _)| k).collect();
                    let mut unique = names.clone();
                    unique.sort();
                    unique.dedup();
                    unique.len() == names.len() && m.iter().all(|(_, v)| walk(v))
                }
                _ => true,
            }
        }
        walk(&w.document)
    }

    #[test]
    fn assumptions_are_named_and_parsed() {
        assert_eq!(
            assume("canonical-documents, no-arrays").names(),
            vec!["canonical-documents", "no-arrays"]
        );
        assert!(assume("none").is_none());
        let e = analysis::Assumptions::parse("canonical-documents,ascii").unwrap_err();
        assert!(e.contains("`ascii`"), "{e}");
        // Attributes are no documents: nothing is assumed of them, and the answer says so.
        let a = sns(r#"{"a": ["x"]}"#);
        let d = analysis::diff_assuming(&a, &a, assume("canonical-documents,no-arrays")).unwrap();
        assert!(d.assumptions.is_none(), "{d:?}");
    }

    #[test]
    fn canonical_documents_decide_sns_bodies_against_eventbridge() {
        let text = r#"{"source": ["aws.ec2"], "detail": {"state": ["running", "stopped"]}}"#;
        let sns_body = filter(r#"{"scope": "MessageBody"}"#, Dialect::Sns, text);
        let eb = eventbridge(text);
        // Every document: a member named twice tells them apart (sns the last, EB-3 every one).
        let d = analysis::diff(&sns_body, &eb).unwrap();
        assert_eq!(d.verdict, Verdict::Different, "{d:?}");
        assert!(d.assumptions.is_none());
        // Canonical documents holding arrays: arrays of objects are not searched, and the two
        // read them differently (sns D-3, EB-10): no claim either way.
        let d = analysis::diff_assuming(&sns_body, &eb, assume("canonical-documents")).unwrap();
        assert_eq!(d.verdict, Verdict::Unknown, "{d:?}");
        // Without arrays: proved the same, and the answer names what was assumed.
        let both = assume("canonical-documents,no-arrays");
        let d = analysis::diff_assuming(&sns_body, &eb, both).unwrap();
        assert_eq!(
            (d.verdict, &d.exactness),
            (Verdict::Same, &Exactness::Exact)
        );
        let json = analysis::diff_json(&d).to_string();
        assert!(
            json.ends_with(r#""assuming":["canonical-documents","no-arrays"]}"#),
            "{json}"
        );
        assert!(
            !analysis::diff_json(&analysis::diff(&eb, &eb).unwrap())
                .to_string()
                .contains("assuming")
        );
    }

    #[test]
    fn what_differs_on_canonical_documents_is_still_found_with_a_canonical_witness() {
        let both = assume("canonical-documents,no-arrays");
        // Over-precise numbers are excluded: a numeric bound is then read alike (EB-17, EG-33).
        let eg = eventgrid(
            r#"{"advancedFilters": [{"operatorType": "NumberGreaterThan", "key": "data.n", "value": 5}]}"#,
        );
        let eb = eventbridge(r#"{"data": {"n": [{"numeric": [">", 5]}]}}"#);
        let d = analysis::diff(&eg, &eb).unwrap();
        assert_eq!(d.verdict, Verdict::Different);
        assert_eq!(
            analysis::diff_assuming(&eg, &eb, both).unwrap().verdict,
            Verdict::Same
        );
        // `ſ` folds to `S` in Event Grid (simple uppercase, EG-31), not in EventBridge's
        // equals-ignore-case (EB-20): a canonical document tells them apart.
        let eg = eventgrid(r#"{"includedEventTypes": ["Microsoft.Storage.BlobCreated"]}"#);
        let eb = eventbridge(
            r#"{"eventType": [{"equals-ignore-case": "Microsoft.Storage.BlobCreated"}]}"#,
        );
        let d = analysis::diff_assuming(&eg, &eb, both).unwrap();
        assert_eq!(d.verdict, Verdict::Different, "{d:?}");
        let w = d.first_only.as_ref().expect("Event Grid alone matches");
        assert!(canonical(w), "{}", w.document);
        assert!(matches(&eg, w) && !matches(&eb, w), "{}", w.document);
        let t = w
            .document
            .get("eventType")
            .and_then(|v| v.as_str())
            .unwrap();
        assert!(t.contains(['\u{17F}', '\u{131}']), "{t}");
        // Arrays, when not excluded: anything-but on an array (sns rule 28 against EB-25).
        let text = r#"{"a": [{"anything-but": ["x"]}]}"#;
        let sns_body = filter(r#"{"scope": "MessageBody"}"#, Dialect::Sns, text);
        let d =
            analysis::diff_assuming(&sns_body, &eventbridge(text), assume("canonical-documents"))
                .unwrap();
        assert_eq!(d.verdict, Verdict::Different, "{d:?}");
        for w in [&d.first_only, &d.second_only].into_iter().flatten() {
            assert!(canonical(w), "{}", w.document);
        }
    }

    #[test]
    fn each_folding_position_is_searched_on_its_own() {
        // Event Grid equates `sſ` with `ss` (EG-31); EventBridge's `ss` and `ſs` accept neither
        // (EB-20: a pattern `s` accepts `s`, `S`; `ſ` accepts `ſ`, `S`): only a mixed spelling
        // tells them apart, and it is found.
        let both = assume("canonical-documents,no-arrays");
        let eg = eventgrid(
            r#"{"advancedFilters": [{"operatorType": "StringIn", "key": "data.a", "values": ["ss"]}]}"#,
        );
        let partial = eventbridge(
            r#"{"data": {"a": [{"equals-ignore-case": "ss"}, {"equals-ignore-case": "ſs"}]}}"#,
        );
        let d = analysis::diff_assuming(&eg, &partial, both).unwrap();
        assert_eq!(d.verdict, Verdict::Different, "{d:?}");
        let w = d.first_only.as_ref().unwrap();
        assert!(matches(&eg, w) && !matches(&partial, w), "{}", w.document);
        // With every spelling, the same, proved.
        let full = eventbridge(
            r#"{"data": {"a": [{"equals-ignore-case": "ss"}, {"equals-ignore-case": "ſs"},
                {"equals-ignore-case": "sſ"}, {"equals-ignore-case": "ſſ"}]}}"#,
        );
        let d = analysis::diff_assuming(&eg, &full, both).unwrap();
        assert_eq!((d.verdict, d.exactness), (Verdict::Same, Exactness::Exact));
    }

    #[test]
    fn microsoft_event_types_translate_with_every_folding_spelling() {
        use filtervm_compiler::analysis::translate::translate_assuming;
        let text = r#"{"includedEventTypes": ["Microsoft.Storage.BlobCreated"],
            "advancedFilters": [{"operatorType": "StringIn", "key": "data.api", "values": ["PutBlob"]}]}"#;
        let t = translate_assuming(
            &eventgrid(text),
            &policy(text),
            &Options::from(Dialect::EventBridge),
            assume("canonical-documents,no-arrays"),
        )
        .unwrap();
        // `i`, `s`, `S`: eight spellings, each position both ways.
        let types = t.policy.get("eventType").unwrap().as_array().unwrap();
        assert_eq!(types.len(), 8, "{}", t.policy);
    }

    const PAYMENT: &str = r#"{"includedEventTypes": ["Acme.Payment.Completed"],
        "subjectBeginsWith": "/tenants/eu/", "isSubjectCaseSensitive": true,
        "advancedFilters": [
            {"operatorType": "StringIn", "key": "data.currency", "values": ["EUR", "GBP"]},
            {"operatorType": "NumberGreaterThanOrEquals", "key": "data.amount", "value": 100},
            {"operatorType": "BoolEquals", "key": "data.captured", "value": true}]}"#;

    #[test]
    fn eventgrid_translates_to_eventbridge_on_canonical_documents_without_arrays() {
        use filtervm_compiler::analysis::translate::translate_assuming;
        let f = eventgrid(PAYMENT);
        let both = assume("canonical-documents,no-arrays");
        for to in [Options::from(Dialect::EventBridge), body()] {
            let t = translate_assuming(&f, &policy(PAYMENT), &to, both).unwrap();
            assert_eq!(t.assumptions, both);
            assert_eq!(
                t.policy.get("subject").unwrap().to_string(),
                r#"[{"prefix":"/tenants/eu/"}]"#
            );
            let d = analysis::diff_assuming(&f, &t.filter, both).unwrap();
            assert_eq!((d.verdict, d.exactness), (Verdict::Same, Exactness::Exact));
            // Unchanged without the assumption: refused, with a witness.
            let e = translate(&f, &policy(PAYMENT), &to).unwrap_err();
            assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT");
            assert_witness(&f, &e);
            // With arrays admitted, a subject in an array tells them apart (EG-12).
            let e = translate_assuming(&f, &policy(PAYMENT), &to, assume("canonical-documents"))
                .unwrap_err();
            assert_eq!(e.code, "TRANSLATE_NOT_EQUIVALENT", "{e}");
            assert!(
                e.message.contains("(even assuming canonical-documents)"),
                "{e}"
            );
            let w = e.witness.unwrap();
            assert!(canonical(&w), "{}", w.document);
        }
    }

    #[test]
    fn eventgrid_case_insensitive_prefixes_have_no_sns_form() {
        use filtervm_compiler::analysis::translate::translate_assuming;
        let both = assume("canonical-documents,no-arrays");
        for (text, at) in [
            (r#"{"subjectBeginsWith": "/a/"}"#, "/subjectBeginsWith"),
            (r#"{"subjectEndsWith": ".JPG"}"#, "/subjectEndsWith"),
            (
                r#"{"advancedFilters": [{"operatorType": "StringBeginsWith", "key": "data.x", "values": ["ab"]}]}"#,
                "/advancedFilters/0/operatorType",
            ),
            (
                r#"{"advancedFilters": [{"operatorType": "StringEndsWith", "key": "data.x", "values": ["9", "z"]}]}"#,
                "/advancedFilters/0/operatorType",
            ),
        ] {
            let e = translate_assuming(&eventgrid(text), &policy(text), &body(), both).unwrap_err();
            assert_eq!(
                (e.code, e.pointer.as_str()),
                ("TRANSLATE_INEXPRESSIBLE", at),
                "{e}"
            );
            assert!(e.message.contains("sns rule 25"), "{e}");
        }
        // A prefix holding no letter is the same ignoring case or not.
        let text = r#"{"subjectBeginsWith": "/2024/"}"#;
        let t = translate_assuming(&eventgrid(text), &policy(text), &body(), both).unwrap();
        assert_eq!(t.policy.to_string(), r#"{"subject":[{"prefix":"/2024/"}]}"#);
    }
}

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

//! Policy analysis for the bindings: [`example`] and [`diff`], each answered as JSON text in the
//! shape `filtervm example --json` and `filtervm diff --json` print (without their
//! `verified_by`: a binding's messages are judged by the VM, which builds and checks every one,
//! not by the reference interpreter, which ships with the command line only).

use crate::error::{Failure, FailureKind};
use crate::filter::Filter;
use filtervm::analysis::{self, AnalysisError};

/// The kind of failure an analysis error is: filters of two message models are the caller's
/// arguments, a filter loaded without its IR a load failure, and the rest (a witness the VM
/// judged otherwise when read back: a bug) internal, reported as policies' internal errors are.
fn failure(e: AnalysisError) -> Failure {
    let kind = match e.code {
        "ANALYSIS_MODEL_MISMATCH" => FailureKind::Argument,
        "ANALYSIS_NO_IR" => FailureKind::Load,
        _ => FailureKind::Policy,
    };
    Failure::one(kind, e.code, "", e.message)
}

/// A message `filter` matches (`matching`) or does not, as JSON: `{"found": true, "matches",
/// "message"}` or `{"found": false, "matches", "exact", "reason"}` (`exact`: no such message
/// exists, proved; otherwise `reason` says why the search was bounded).
pub fn example(filter: &Filter, matching: bool) -> Result<String, Failure> {
    let answer = analysis::example(filter.facade(), matching).map_err(failure)?;
    Ok(analysis::example_json(&answer, matching).to_string())
}

/// Whether `first` and `second` match exactly the same messages, as JSON: `{"verdict": "same" |
/// "different" | "unknown", "exact", "reason", "first_only", "second_only", "keys"}`.
/// Filters reading different parts of a message fail with `ANALYSIS_MODEL_MISMATCH`.
pub fn diff(first: &Filter, second: &Filter) -> Result<String, Failure> {
    diff_assuming(first, second, "")
}

/// [`diff`] over the documents the comma-separated assumptions `assume` admit
/// (`canonical-documents`: no member named twice, numbers in their shortest round-trip form,
/// member names spelled as the filters spell them; `no-arrays`: no array at or on the way to a
/// member the filters read; `""` or `none`: every document): the search builds no other
/// document, and the JSON names them (`"assuming": [NAME, ...]`, left out when nothing is
/// assumed). An unknown name fails with `ANALYSIS_ASSUMPTION` (an argument error).
pub fn diff_assuming(first: &Filter, second: &Filter, assume: &str) -> Result<String, Failure> {
    let assume = analysis::Assumptions::parse(assume)
        .map_err(|e| Failure::one(FailureKind::Argument, "ANALYSIS_ASSUMPTION", "", e))?;
    let d = analysis::diff_assuming(first.facade(), second.facade(), assume).map_err(failure)?;
    Ok(analysis::diff_json(&d).to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn sns(policy: &str) -> Filter {
        Filter::compile("sns", policy.as_bytes(), None).unwrap()
    }

    #[test]
    fn example_and_diff_answer_as_the_command_line_does() {
        let before = sns(r#"{"amount": [{"numeric": [">=", 150]}]}"#);
        let e = example(&before, true).unwrap();
        assert!(
            e.starts_with(r#"{"found":true,"matches":true,"message":{"#),
            "{e}"
        );
        let never = Filter::compile(
            "stream",
            br#"{"groups": [[{"op": "=", "header": "a", "values": ["x"]}, {"op": "missing", "header": "a"}]]}"#,
            None,
        )
        .unwrap();
        assert_eq!(
            example(&never, true).unwrap(),
            r#"{"found":false,"matches":true,"exact":true,"reason":null}"#
        );
        let after = sns(r#"{"amount": [{"numeric": [">=", 100]}]}"#);
        let d = diff(&before, &after).unwrap();
        assert!(
            d.starts_with(r#"{"verdict":"different","exact":true,"reason":null,"first_only":null,"second_only":{"#),
            "{d}"
        );
        assert!(
            diff(&after, &after)
                .unwrap()
                .starts_with(r#"{"verdict":"same""#)
        );
        let sns_body = Filter::compile(
            "sns",
            br#"{"a": ["x"]}"#,
            Some(br#"{"scope": "MessageBody"}"#.as_slice()),
        )
        .unwrap();
        let body = Filter::compile("eventbridge", br#"{"a": ["x"]}"#, None).unwrap();
        assert!(
            diff(&sns_body, &body)
                .unwrap()
                .starts_with(r#"{"verdict":"different""#)
        );
        let d = diff_assuming(&sns_body, &body, "canonical-documents,no-arrays").unwrap();
        assert!(d.starts_with(r#"{"verdict":"same","exact":true"#), "{d}");
        assert!(
            d.ends_with(r#""assuming":["canonical-documents","no-arrays"]}"#),
            "{d}"
        );
        let e = diff_assuming(&sns_body, &body, "tidy").unwrap_err();
        assert_eq!(
            (e.kind, e.code()),
            (FailureKind::Argument, "ANALYSIS_ASSUMPTION")
        );
        let e = diff(&before, &body).unwrap_err();
        assert_eq!(
            (e.kind, e.code()),
            (FailureKind::Argument, "ANALYSIS_MODEL_MISMATCH")
        );
    }
}

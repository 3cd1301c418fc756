"""filtervm.example and filtervm.diff: the answers of `filtervm example --json` and
`filtervm diff --json` as dicts, every message judged by the filters again here, and the
error codes of the library and the CLI."""

from __future__ import annotations

import pytest

import filtervm

BEFORE = {"store": ["acme", "example_corp"], "amount": [{"numeric": [">=", 150]}]}
AFTER = {"store": ["acme", "example_corp", "globex"], "amount": [{"numeric": [">=", 100]}]}


def test_example_finds_a_matching_and_a_non_matching_message():
    f = filtervm.compile("sns", BEFORE)
    for matching in (True, False):
        answer = filtervm.example(f, matching=matching)
        assert answer["found"] is True
        assert answer["matches"] is matching
        # The message is in the dialect's shape, as matches() reads it.
        assert f.matches(answer["message"]) is matching


def test_example_proves_that_none_exists():
    # A header that must equal "x" and be missing: never matches; its negation always does.
    never = filtervm.compile(
        "stream",
        {"groups": [[{"op": "=", "header": "a", "values": ["x"]}, {"op": "missing", "header": "a"}]]},
    )
    assert filtervm.example(never) == {"found": False, "matches": True, "exact": True, "reason": None}
    answer = filtervm.example(never, matching=False)
    assert answer["found"] is True and never.matches(answer["message"]) is False


def test_example_says_when_its_search_was_bounded():
    # A substring test is searched within a bound, and an impossible conjunction stays unproved.
    f = filtervm.compile(
        "eventgrid",
        {
            "advancedFilters": [
                {"operatorType": "StringContains", "key": "data.a", "values": ["x"]},
                {"operatorType": "StringNotContains", "key": "data.a", "values": ["x"]},
            ]
        },
    )
    answer = filtervm.example(f)
    assert answer["found"] is False
    assert answer["exact"] is False and "substring" in answer["reason"]


def test_diff_gives_a_witness_per_side_and_the_keys():
    before, after = filtervm.compile("sns", BEFORE), filtervm.compile("sns", AFTER)
    d = filtervm.diff(before, after)
    assert d["verdict"] == "different"
    assert d["exact"] is True and d["reason"] is None
    assert d["first_only"] is None
    only_after = d["second_only"]
    assert after.matches(only_after) is True and before.matches(only_after) is False
    assert {k["key"] for k in d["keys"]} == {"amount", "store"}
    assert filtervm.diff(after, after)["verdict"] == "same"
    # Across the dialects of one model: sns attributes and basaltic.
    basaltic = filtervm.compile("basaltic", {"store": ["acme"]})
    d = filtervm.diff(filtervm.compile("sns", {"store": ["acme"]}), basaltic)
    assert d["verdict"] == "different"


def test_diff_errors_carry_the_analysis_codes():
    sns = filtervm.compile("sns", BEFORE)
    stream = filtervm.compile("stream", "region = eu-*")
    with pytest.raises(ValueError, match="ANALYSIS_MODEL_MISMATCH"):
        filtervm.diff(sns, stream)
    # A filter loaded from bytes carries its IR: analysed like the original.
    loaded = filtervm.Filter.from_bytes(sns.to_bytes())
    assert filtervm.diff(loaded, sns)["verdict"] == "same"
    with pytest.raises(TypeError):
        filtervm.diff(sns, BEFORE)  # a policy is not a filter


def test_diff_assuming_canonical_documents_names_the_assumption():
    # sns bodies keep the last of a member named twice, EventBridge every one: they differ on
    # some document, and are the same on canonical documents holding no arrays.
    body = filtervm.compile("sns", {"state": ["running"]}, {"scope": "MessageBody"})
    eb = filtervm.compile("eventbridge", {"state": ["running"]})
    d = filtervm.diff(body, eb)
    assert d["verdict"] == "different" and "assuming" not in d
    for assume in (["canonical-documents", "no-arrays"], "canonical-documents,no-arrays"):
        d = filtervm.diff(body, eb, assume=assume)
        assert d["verdict"] == "same" and d["exact"] is True
        assert d["assuming"] == ["canonical-documents", "no-arrays"]
    with pytest.raises(ValueError, match="ANALYSIS_ASSUMPTION"):
        filtervm.diff(body, eb, assume="tidy")

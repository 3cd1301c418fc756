"""The message table's situations through Python (the fixture every entry point reads,
tests/situations.jsonl; its format is described in filtervm/tests/situations.rs), and a
property: a set of random mixed-dialect filters, given random subsets of a message's parts,
returns exactly the ids that matching each filter on its own returns among the filters that can
read the message, and lists the others in .unjudged."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import filtervm

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "situations.jsonl"
CASES = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def compile_case(case: Dict[str, Any]) -> filtervm.Filter:
    policy = case["policy"]
    return filtervm.compile(case["dialect"], policy, case.get("options"))


def kwargs_of(parts: Dict[str, Any]) -> Dict[str, Any]:
    """The parts as Python keyword arguments: typed attributes in the AWS form, headers as a
    mapping of name to a str or a list of str."""
    out: Dict[str, Any] = {}
    if "body" in parts:
        out["body"] = parts["body"]
    if "attributes" in parts:
        out["attributes"] = {n: {"DataType": t, "StringValue": v} for n, t, v in parts["attributes"]}
    if "headers" in parts:
        out["headers"] = parts["headers"]
    return out


def outcome(f: filtervm.Filter, *args: Any, **kwargs: Any) -> str:
    try:
        return "match" if f.matches(*args, **kwargs) else "no-match"
    except filtervm.MessageError as e:
        return e.code


def forms(case: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Each form of the case's message with its outcome: the parts, and the document of the
    parts (its outcome `parts_document_expect` where the case gives one: an eventbridge filter
    reads the whole document as the event, EB-1), or the document."""
    if "parts" in case:
        return [
            {"kwargs": kwargs_of(case["parts"]), "want": case["expect"]},
            {"args": [case["parts_document"]], "want": case.get("parts_document_expect", case["expect"])},
        ]
    return [{"args": [case["document"]], "want": case["expect"]}]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["situation"])
def test_every_situation_has_the_same_verdict_or_code(case: Dict[str, Any]) -> None:
    f = compile_case(case)
    witness = filtervm.compile("sns", {})
    for form in forms(case):
        want = form["want"]
        args, kwargs = form.get("args", []), form.get("kwargs", {})
        assert outcome(f, *args, **kwargs) == want, form
        s = filtervm.SubscriptionSet()
        s.add("case", f)
        s.add("witness", witness)
        got = s.matching(*args, **kwargs)
        expected = [i for i, g in (("case", f), ("witness", witness)) if outcome(g, *args, **kwargs) == "match"]
        assert list(got) == expected, form
        codes = {g.code for g in got.unjudged}
        judged = want in ("match", "no-match")
        assert (want in codes) == (not judged), (form, got.unjudged)
        assert got.complete == (not codes)
        if not judged:
            with pytest.raises(filtervm.MessageError) as info:
                s.matching(*args, strict=True, **kwargs)
            assert want in [d.code for d in info.value.errors]


POLICIES = [
    ("sns", None, {"a": ["x"]}),
    ("sns", None, {"b": [{"exists": False}]}),
    ("sns", None, {}),
    ("sns", None, {"a": [{"prefix": "x"}], "n": [{"numeric": [">", 0]}]}),
    ("sns", {"scope": "MessageBody"}, {"a": ["x"]}),
    ("sns", {"scope": "MessageBody"}, {}),
    ("sns", {"scope": "MessageBody"}, {"n": [{"numeric": [">", 1]}]}),
    ("basaltic", None, {"a": ["x"]}),
    ("basaltic", None, {"b": [{"exists": False}]}),
    ("eventgrid", None, {}),
    ("eventgrid", None, {"subjectBeginsWith": "x"}),
    ("eventgrid", None, {"includedEventTypes": ["t"]}),
    ("eventbridge", None, {"a": ["x"]}),
    ("eventbridge", None, {"b": [{"exists": False}]}),
    ("eventbridge", None, {"n": [{"numeric": [">", 1]}]}),
    ("stream", None, "a = x"),
    ("stream", None, "b missing"),
    ("expr", None, {"key": "a", "op": "in", "value": ["x"]}),
    ("expr", None, {"op": "NOT", "exp": [{"key": "b", "op": "exists"}]}),
]

BODIES = [
    '{"a": "x", "subject": "x1", "eventType": "t", "n": 2}',
    '{"a": "y", "n": 1}',
    '[{"subject": "x"}]',
    "5",
    "not json",
    '{"subject": ',
]

ATTRIBUTES: List[Dict[str, Any]] = [
    {"a": "x"},
    {"a": "y", "b": 1, "n": 3},
    {},
    {"a": {"DataType": "Strung", "StringValue": "x"}},
    {"a": b"x"},
    {"a": "xyz", "n": {"Type": "Number", "Value": 1.5}},
]

HEADERS: List[Any] = [
    {"a": "x"},
    {"a": ["x", "y"]},
    [("b", "z")],
    {},
    [("a", "y"), ("a", "x")],
]


def test_a_set_returns_exactly_the_one_by_one_ids_of_the_filters_that_can_read_the_message() -> None:
    rng = random.Random(21)
    filters = [filtervm.compile(d, p, o) for d, o, p in POLICIES]
    partial = complete = 0
    for _ in range(300):
        s = filtervm.SubscriptionSet()
        members = []
        for i in range(rng.randint(1, 10)):
            f = rng.randrange(len(filters))
            s.add(("sub", i), filters[f])
            members.append((("sub", i), f))
        for _ in range(8):
            kwargs: Dict[str, Any] = {}
            while not kwargs:
                if rng.random() < 0.5:
                    kwargs["body"] = rng.choice(BODIES)
                if rng.random() < 0.5:
                    kwargs["attributes"] = rng.choice(ATTRIBUTES)
                if rng.random() < 0.5:
                    kwargs["headers"] = rng.choice(HEADERS)
            got = s.matching(**kwargs)
            alone = [(i, outcome(filters[f], **kwargs)) for i, f in members]
            assert list(got) == [i for i, o in alone if o == "match"], (kwargs, alone)
            cannot = [(i, o) for i, o in alone if o not in ("match", "no-match")]
            assert sum(g.subscriptions for g in got.unjudged) == len(cannot), (kwargs, got.unjudged, alone)
            for i, o in cannot:
                dialect = POLICIES[dict(members)[i]][0]
                assert any(g.code == o and g.dialect == dialect for g in got.unjudged), (kwargs, i, o)
            if got.unjudged:
                partial += 1
            else:
                complete += 1
    assert partial > 200 and complete > 200, (partial, complete)

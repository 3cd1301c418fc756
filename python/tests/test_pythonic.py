"""Filters and sets as Python users expect them: pickling and copying, the containers'
protocols, partial deliveries with .unjudged and strict=True, typed numbers, batches of events,
and the README's examples as the package really runs them."""

from __future__ import annotations

import copy
import pickle
import re
from decimal import Decimal
from pathlib import Path

import pytest

import filtervm

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_filters_pickle_and_copy():
    f = filtervm.compile("sns", '{"price": [{"numeric": [">", 1.50]}]}', {"scope": "MessageBody"})
    g = pickle.loads(pickle.dumps(f))
    assert (g.dialect, g.options, g.policy) == (f.dialect, f.options, f.policy)
    assert g.matches(body='{"price": 1.51}') and not g.matches(body='{"price": 1.5}')
    # An immutable filter: its copies are itself.
    assert copy.copy(f) is f and copy.deepcopy(f) is f
    # A filter loaded from bytes pickles through its bytes.
    loaded = filtervm.Filter.from_bytes(f.to_bytes())
    again = pickle.loads(pickle.dumps(loaded))
    assert again.policy is None and again.matches(body='{"price": 2}')
    stream = pickle.loads(pickle.dumps(filtervm.compile("stream", "region = eu-*")))
    assert stream.matches(headers={"region": "eu-west"})


def test_sets_pickle_copy_and_act_like_containers():
    s = filtervm.SubscriptionSet()
    paid = filtervm.compile("sns", {"event": ["paid"]})
    s.add(("tenant", 7), paid)
    s.add("eu", filtervm.compile("stream", "region = eu-*"))
    s.add("x", paid)
    s.remove("x")
    assert len(s) == 2 and ("tenant", 7) in s and "x" not in s
    assert list(s) == [("tenant", 7), "eu"]
    assert s.get("eu").dialect == "stream" and s.get("nope") is None and s.get("nope", 1) == 1
    for other in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert other is not s and list(other) == list(s)
        assert other.matching(attributes={"event": "paid"}, headers={"region": "eu-north"}) == [("tenant", 7), "eu"]
        other.remove("eu")
        assert "eu" in s, "a copy is independent"


def test_a_group_that_cannot_read_the_message_never_costs_the_others_their_delivery():
    s = filtervm.SubscriptionSet()
    s.add("paid", filtervm.compile("sns", {"event": ["paid"]}))
    s.add("eu", filtervm.compile("stream", "region = eu-*"))
    s.add("all", filtervm.compile("sns", {}))
    got = s.matching(attributes={"event": "paid"})
    assert got == ["paid", "all"] and isinstance(got, list) and isinstance(got, filtervm.Matches)
    assert not got.complete
    (group,) = got.unjudged
    assert (group.dialect, group.options, group.subscriptions, group.code) == ("stream", {}, 1, "MESSAGE_SHAPE")
    assert "headers" in group.message
    with pytest.raises(filtervm.MessageError) as info:
        s.matching(attributes={"event": "paid"}, strict=True)
    assert info.value.code == "MESSAGE_SHAPE" and "stream" in info.value.errors[0].message
    # A body alone: a message without attributes (sns rule 12), which `{}` receives.
    assert s.matching(body="{}") == ["all"]
    # A stream header given two values: only the stream group cannot judge it.
    got = s.matching(attributes={"event": "paid"}, headers={"region": ["eu-west", "eu-north"]})
    assert got == ["paid", "all"]
    assert [(g.code, g.pointer) for g in got.unjudged] == [("INVALID_MESSAGE", "/headers/region")]
    ok = s.matching(attributes={"event": "paid"}, headers={"region": "eu-west"})
    assert ok == ["paid", "eu", "all"] and ok.complete and ok.unjudged == []
    # Results pickle and copy with their unjudged groups.
    for result in (got, ok):
        for other in (pickle.loads(pickle.dumps(result)), copy.copy(result), copy.deepcopy(result)):
            assert type(other) is filtervm.Matches and other == result
            assert other.unjudged == result.unjudged and other.complete == result.complete


def test_typed_numbers_are_their_text_and_bools_are_refused():
    f = filtervm.compile("sns", {"price": [{"numeric": [">", 300]}]})
    assert f.matches(attributes={"price": {"Type": "Number", "Value": 301.5}})
    assert f.matches(attributes={"price": {"DataType": "Number", "StringValue": Decimal("300.01")}})
    assert not f.matches(attributes={"price": {"DataType": "Number", "StringValue": 300}})
    assert f.matches({"attributes": {"price": {"Type": "Number", "Value": 301.5}}})
    for bad in (True, {"DataType": "String", "StringValue": False}, None, object()):
        with pytest.raises(TypeError, match="attribute `price`"):
            f.matches(attributes={"price": bad})
    # An unknown type name is a message error (INVALID_MESSAGE) naming the attribute.
    with pytest.raises(filtervm.MessageError) as info:
        f.matches(attributes={"price": {"DataType": "Numbr", "StringValue": "5"}})
    assert info.value.code == "INVALID_MESSAGE" and info.value.pointer == "/attributes/price/Type"


def test_a_document_and_keyword_parts_together_are_an_error():
    f = filtervm.compile("sns", {"a": ["x"]})
    with pytest.raises(TypeError, match="not both"):
        f.matches({"attributes": {}}, attributes={"a": "x"})
    with pytest.raises(TypeError, match="not both"):
        filtervm.SubscriptionSet().matching('{"body": "x"}', body="y")


def test_event_grid_batches_are_split_with_read_events():
    f = filtervm.compile("eventgrid", {"subjectBeginsWith": "orders/"})
    batch = b'[{"subject": "orders/1"}, {"subject": "users/1"}]'
    with pytest.raises(filtervm.MessageError) as info:
        f.matches(body=batch)
    assert info.value.code == "INVALID_MESSAGE" and "filtervm.read_events" in str(info.value)
    events = filtervm.read_events(batch)
    assert events == [b'{"subject": "orders/1"}', b'{"subject": "users/1"}']
    assert [f.matches(body=e) for e in events] == [True, False]
    assert filtervm.read_events('{"subject": "x"}') == [b'{"subject": "x"}']
    for scalar in ("5", '"x"', "null"):
        with pytest.raises(filtervm.MessageError) as info:
            f.matches(body=scalar)
        assert info.value.code == "INVALID_MESSAGE"


def test_the_readme_explain_example_shows_a_hint_it_gives():
    # The README's Python example calls explain(...)["hints"] and shows the hint it returns.
    m = re.search(r'f\.explain\((.*?)\)\["hints"\]\[0\]\["code"\]\s+# "([A-Z_]+)"', README)
    assert m, "the README shows an explain call and the hint it gives"
    f = filtervm.compile("sns", {"event": ["order.paid"], "amount": [{"numeric": [">", 100]}]})
    hints = eval(f"f.explain({m.group(1)})")["hints"]  # noqa: S307 (the README's own code)
    assert hints and hints[0]["code"] == m.group(2), hints


def test_the_readme_says_how_to_build_the_package():
    assert "pip install ./python" in README
    assert re.search(r"Rust (toolchain )?1\.95", README), "the minimum Rust version"

"""The Python API: message forms, explain, IR, bytes, lint, subscription sets with any ids."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

import filtervm

PAID = {"event": ["order.paid"], "amount": [{"numeric": [">", 100]}]}


def test_attribute_values_map_to_sns_types():
    f = filtervm.compile("sns", PAID)
    assert f.matches(attributes={"event": "order.paid", "amount": 101})
    assert f.matches(attributes={"event": "order.paid", "amount": 100.5})
    assert f.matches(attributes={"event": "order.paid", "amount": Decimal("100.000001")})
    assert f.matches(attributes={"event": "order.paid", "amount": 10**30})
    assert not f.matches(attributes={"event": "order.paid", "amount": 100})
    # A number given as a String attribute is not a Number (sns numeric matching needs Number).
    assert not f.matches(attributes={"event": "order.paid", "amount": "150"})
    # The AWS API form, LocalStack's form, and the vector form.
    aws = {"event": {"DataType": "String", "StringValue": "order.paid"},
           "amount": {"DataType": "Number", "StringValue": "150"}}
    assert f.matches(attributes=aws)
    delivered = {"event": {"Type": "String", "Value": "order.paid"},
                 "amount": {"Type": "Number.float", "Value": "150"}}
    assert f.matches(attributes=delivered)


def test_string_arrays_and_binary_attributes():
    f = filtervm.compile("sns", {"tags": ["red"]})
    assert f.matches(attributes={"tags": ["blue", "red"]})
    assert f.matches(attributes={"tags": ("red",)})
    assert not f.matches(attributes={"tags": ["blue"]})
    # Binary attributes are invisible to filtering (sns rule 8), even to exists.
    assert not filtervm.compile("sns", {"blob": [{"exists": True}]}).matches(attributes={"blob": b"\x00"})
    assert filtervm.compile("sns", {"blob": [{"exists": False}]}).matches(
        attributes={"blob": {"DataType": "Binary", "BinaryValue": b"\x01"}, "other": "x"})


def test_headers_as_mappings_lists_and_pairs():
    f = filtervm.compile("expr", {"key": "region", "op": "in", "value": ["eu-west"]})
    assert f.matches(headers={"region": "eu-west"})
    assert f.matches(headers={"region": ["us-east", "eu-west"]})
    assert f.matches(headers=[("region", "us-east"), ("region", "eu-west")])
    assert not f.matches(headers=[("region", "us-east")])
    s = filtervm.compile("stream", "region = eu-* and priority >= 5")
    assert s.matches(headers={"region": "eu-central", "priority": "7"})
    assert s.matches({"headers": {"region": "eu-central", "priority": "7"}})
    with pytest.raises(filtervm.MessageError) as info:
        s.matches(headers={"region": ["eu-west", "eu-central"]})
    assert info.value.code == "INVALID_MESSAGE" and info.value.pointer == "/headers/region"


def test_bodies_str_and_bytes_and_documents():
    f = filtervm.compile("sns", {"order": {"total": [{"numeric": [">=", 10]}]}}, {"scope": "MessageBody"})
    assert f.options == {"scope": "MessageBody"}
    body = '{"order": {"total": 12.5}}'
    assert f.matches(body=body) and f.matches(body=body.encode()) and f.matches(body=bytearray(body, "utf8"))
    assert f.matches({"body": body}) and f.matches(json.dumps({"body": body}))
    # A body that is not JSON matches only the empty policy (sns rule 14): no error.
    assert not f.matches(body="hello")
    assert filtervm.compile("sns", {}, {"scope": "MessageBody"}).matches(body="hello")
    eg = filtervm.compile("eventgrid", {"subjectBeginsWith": "/orders/"})
    event = {"id": "1", "subject": "/orders/7", "eventType": "Created"}
    assert eg.matches(event) and eg.matches(body=json.dumps(event)) and eg.matches(json.dumps(event).encode())
    # EventBridge: the event is the message, whatever its member names; one that is not a JSON
    # object is a MessageError.
    eb = filtervm.compile("eventbridge", {"body": {"state": ["running"]}})
    assert eb.dialect == "eventbridge"
    assert eb.matches({"body": [{"state": "stopped"}, {"state": "running"}]})
    assert eb.matches(body='{"body": {"state": "running"}}') and not eb.matches({"body": "running"})
    with pytest.raises(filtervm.MessageError):
        eb.matches("[1]")


def test_exact_numbers_in_policy_text_and_dicts():
    big = filtervm.compile("eventgrid", '{"advancedFilters": [{"operatorType": "NumberIn", "key": "data.n", "values": [9007199254740993]}]}')
    event = '{"id": "1", "subject": "s", "eventType": "t", "data": {"n": 9007199254740993}}'
    assert big.matches(event)
    assert not big.matches(event.replace("993}", "992}"))
    as_dict = filtervm.compile("eventgrid", {"advancedFilters": [
        {"operatorType": "NumberIn", "key": "data.n", "values": [9007199254740993]}]})
    assert as_dict.matches(json.loads(event)) and not as_dict.matches(event.replace("993}", "992}"))


def test_explain_returns_a_dict_with_hints():
    f = filtervm.compile("basaltic", {"amount": [{"numeric": [">=", 100, "<", 1000]}]})
    e = f.explain(attributes={"amount": {"type": "Number", "value": "1000"}})
    assert e["matched"] is False and e["verdict"] == "no-match"
    assert [h["code"] for h in e["hints"]] == ["EXCLUSIVE_BOUND"]
    assert e["conditions"]["kind"] == "and" and e["decided_by"][0]["pointer"] == "/amount/0"
    assert f.explain({"attributes": {"amount": {"type": "Number", "value": "150"}}})["matched"] is True


def test_ir_disassembly_and_bytes():
    f = filtervm.compile("sns", PAID)
    assert 'test attr "event" str-eq ["order.paid"]' in f.ir()
    assert f.ir(lowered=True).startswith("and")
    assert "ret r0" in f.disassemble()
    data = f.to_bytes()
    assert isinstance(data, bytes)
    loaded = filtervm.Filter.from_bytes(data)
    # The IR travels with the bytes (so the loaded filter explains); the policy text does not.
    assert loaded.dialect == "sns" and loaded.policy is None and loaded.ir() == f.ir()
    assert loaded.disassemble() == f.disassemble()
    assert loaded.matches(attributes={"event": "order.paid", "amount": 101})
    # Explained like the compiled filter, without the policy's text beside each condition.
    got, want = loaded.explain(attributes={"event": "x"}), f.explain(attributes={"event": "x"})
    assert got["matched"] is want["matched"] is False
    assert [d["pointer"] for d in got["decided_by"]] == [d["pointer"] for d in want["decided_by"]]
    with pytest.raises(filtervm.LoadError):
        loaded.lint()
    with pytest.raises(filtervm.LoadError) as info:
        filtervm.Filter.from_bytes(data[:-3])
    assert info.value.code in ("INVALID_PROGRAM", "INVALID_FILTER_METADATA")
    assert "sns" in repr(f) and "(loaded)" in repr(loaded)


def test_lint_function_and_method():
    warnings = filtervm.lint("sns", {"a": ["x", "x"]})
    assert warnings and isinstance(warnings[0], filtervm.LintWarning)
    assert warnings[0].pointer == "/a/1" and warnings[0].fix
    assert filtervm.compile("sns", {"a": ["x", "x"]}).lint() == warnings
    assert filtervm.lint("sns", {"a": ["x"]}) == []
    with pytest.raises(filtervm.PolicyError):
        filtervm.lint("sns", {"a": []})


class Key:
    """A user-defined hashable id."""

    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return hash(("Key", self.n))

    def __eq__(self, other):
        return isinstance(other, Key) and other.n == self.n


def test_a_set_takes_any_hashable_ids_and_any_dialects():
    s = filtervm.SubscriptionSet()
    ids = ["a", 7, ("tenant", 3), frozenset({1, 2}), Key(1), None, 2.5]
    for i in ids:
        s.add(i, filtervm.compile("sns", {"event": ["paid"]}))
    s.add("stream", filtervm.compile("stream", "event = paid"))
    s.add("basaltic", filtervm.compile("basaltic", {"event": ["paid"]}))
    assert len(s) == len(ids) + 2 and Key(1) in s and "nope" not in s
    got = s.matching(attributes={"event": "paid"}, headers={"event": "paid"})
    assert sorted(map(repr, got)) == sorted(map(repr, ids + ["stream", "basaltic"]))
    assert any(isinstance(x, Key) and x.n == 1 for x in got)
    # Replacing an id's filter, removing ids.
    s.add(Key(1), filtervm.compile("sns", {"event": ["other"]}))
    assert len(s) == len(ids) + 2
    assert Key(1) not in s.matching(attributes={"event": "paid"}, headers={"event": "paid"})
    assert s.remove(Key(1)) and not s.remove(Key(1))
    assert s.remove(None) and len(s) == len(ids)
    with pytest.raises(TypeError):
        s.add(["unhashable"], filtervm.compile("sns", {}))
    assert len(s) == len(ids)
    assert "SubscriptionSet of" in repr(s)


def test_a_set_holds_filters_loaded_from_bytes():
    s = filtervm.SubscriptionSet()
    f = filtervm.compile("sns", {"event": ["paid"]})
    s.add("compiled", f)
    s.add("loaded", filtervm.Filter.from_bytes(f.to_bytes()))
    assert sorted(s.matching(attributes={"event": "paid"})) == ["compiled", "loaded"]
    assert s.matching(attributes={"event": "new"}) == []
    assert s.remove("loaded") and s.matching(attributes={"event": "paid"}) == ["compiled"]


def test_an_empty_set_matches_nothing_and_reads_nothing():
    s = filtervm.SubscriptionSet()
    assert s.matching(headers={}) == []
    s.add(1, filtervm.compile("stream", "a exists"))
    s.remove(1)
    # The stream group is empty: a message without headers is fine.
    assert s.matching(attributes={}) == []


def test_values_the_filter_does_not_read_are_skipped_but_their_types_count():
    f = filtervm.compile("sns", {"a": ["x"]})
    # The value of `b` is never read: even a value that is not a str is not looked at, but its
    # declared type is checked as always.
    assert f.matches(attributes={"a": "x", "b": {"DataType": "String", "StringValue": "y"}})
    with pytest.raises(filtervm.MessageError):
        f.matches(attributes={"a": "x", "b": {"DataType": "Strung", "StringValue": "y"}})
    # sns rule 12: `exists: false` needs some non-Binary attribute, read or not.
    absent = filtervm.compile("sns", {"z": [{"exists": False}]})
    assert absent.matches(attributes={"b": "anything"})
    assert not absent.matches(attributes={"b": b"binary"})
    # basaltic attributes are String or Number, read or not.
    with pytest.raises(filtervm.MessageError):
        filtervm.compile("basaltic", {"a": ["x"]}).matches(attributes={"a": "x", "b": ["list"]})

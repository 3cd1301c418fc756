"""Errors are exceptions with codes and pointers, never a crash: bad policies, options,
messages, bytes and argument types, and random garbage."""

from __future__ import annotations

import math
import random

import pytest

import filtervm


def test_policy_error_lists_every_error_with_code_pointer_message():
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("sns", {"a": [{"prefix": 1}], "b": [{"nope": 2}]})
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, filtervm.FiltervmError)
    assert [(d.code, d.pointer) for d in e.errors] == [
        ("SNS_TYPE_ERROR", "/a/0/prefix"),
        ("SNS_UNKNOWN_OPERATOR", "/b/0/nope"),
    ]
    assert e.errors[0].message == "prefix match pattern must be a string"
    assert e.code == "SNS_TYPE_ERROR" and e.pointer == "/a/0/prefix"
    assert "prefix match pattern must be a string" in str(e)


def test_options_errors_are_policy_errors_with_invalid_options():
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("sns", {}, {"scop": "MessageBody"})
    assert info.value.code == "INVALID_OPTIONS" and info.value.pointer == "/scop"
    assert "did you mean" in info.value.errors[0].message
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("expr", {"key": "a", "op": "exists"}, '{"max_depth": 1000}')
    assert info.value.code == "INVALID_OPTIONS"


def test_policy_text_errors_point_into_the_text():
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("stream", "region = ")
    assert info.value.code == "STREAM_SYNTAX_ERROR" and info.value.pointer.startswith("bytes ")
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("basaltic", b'{"a": ["\xff"]}')
    assert info.value.code == "NOTIFICATION_INVALID_FILTER_POLICY"
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("sns", "x" * (300 * 1024))
    assert info.value.code == "SNS_LIMIT_EXCEEDED"


def test_deep_policies_are_rejected_not_recursed():
    deep = {"a": ["x"]}
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("sns", deep)
    assert info.value.code == "SNS_SYNTAX_ERROR"
    chain = {"key": "a", "op": "exists"}
    for _ in range(10_000):
        chain = {"op": "NOT", "exp": [chain]}
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile("expr", chain)
    assert info.value.code == "EXPR_TOO_DEEP"


def test_message_errors_have_code_and_pointer():
    f = filtervm.compile("sns", {"a": ["x"]})
    with pytest.raises(filtervm.MessageError) as info:
        f.matches({"attributes": {"a": {"Type": "Nope", "Value": "x"}}})
    assert info.value.code == "INVALID_MESSAGE" and info.value.pointer == "/attributes/a/Type"
    with pytest.raises(filtervm.MessageError) as info:
        f.matches(b"{not json")
    assert info.value.code == "MESSAGE_NOT_JSON"
    # A body alone is a message without attributes: sns rule 12 judges it (no match), and
    # explain names the likely mistake.
    assert f.matches(body='{"a": "x"}') is False
    hints = f.explain(body='{"a": "x"}')["hints"]
    assert [h["code"] for h in hints] == ["SCOPE_MISMATCH"], hints
    # The part a stream filter reads is missing: an error with a hint, not a silent no-match.
    with pytest.raises(filtervm.MessageError) as info:
        filtervm.compile("stream", "a missing").matches(body='{"a": "x"}')
    assert info.value.code == "MESSAGE_SHAPE" and "headers" in info.value.errors[0].message
    with pytest.raises(filtervm.MessageError) as info:
        filtervm.compile("basaltic", {"a": ["x"]}).matches(attributes={"a": ["x"]})
    assert info.value.code == "INVALID_MESSAGE" and info.value.pointer == "/attributes/a"
    deep = {"attributes": {}}
    for _ in range(1000):
        deep = {"x": deep}
    with pytest.raises(filtervm.MessageError):
        f.matches(deep)


def test_argument_errors_are_type_and_value_errors():
    f = filtervm.compile("sns", {"a": ["x"]})
    with pytest.raises(ValueError, match="unknown dialect"):
        filtervm.compile("kafka", {})
    with pytest.raises(TypeError, match="no message given"):
        f.matches()
    with pytest.raises(TypeError):
        f.matches(42)
    with pytest.raises(TypeError):
        f.matches(attributes={"a": object()})
    with pytest.raises(TypeError, match="attribute `a`: a bool"):
        f.matches(attributes={"a": True})
    with pytest.raises(TypeError, match="attribute `a`"):
        f.matches(attributes={"a": {"DataType": "Number", "StringValue": True}})
    with pytest.raises(TypeError):
        f.matches(attributes=["a"])
    with pytest.raises(TypeError):
        f.matches(headers={"a": 1})
    with pytest.raises(TypeError):
        f.matches({1: "x"})
    with pytest.raises(ValueError, match="attribute `a`"):
        f.matches(attributes={"a": math.nan})
    with pytest.raises(ValueError):
        filtervm.compile("sns", {"a": [{"numeric": [">", math.inf]}]})
    with pytest.raises(TypeError):
        filtervm.compile("sns", {"a": [object()]})
    with pytest.raises(TypeError):
        filtervm.Filter.from_bytes("not bytes")


def test_random_garbage_never_crashes():
    rng = random.Random(16)
    f = filtervm.compile("sns", {"a": [{"prefix": "x"}]}, {"scope": "MessageBody"})
    s = filtervm.SubscriptionSet()
    s.add(1, f)
    s.add(2, filtervm.compile("eventgrid", {"subjectBeginsWith": "x"}))
    alphabet = b'{}[]":,0123456789.eE+-truefalsnl\\ \xff\x00abcx'
    for _ in range(3000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        dialect = rng.choice(filtervm.DIALECTS)
        try:
            filtervm.compile(dialect, data)
        except filtervm.PolicyError as e:
            assert e.errors
        try:
            f.matches(data)
        except filtervm.MessageError:
            pass
        try:
            s.matching(body=data)
        except filtervm.MessageError:
            pass
        try:
            filtervm.Filter.from_bytes(data)
        except filtervm.LoadError:
            pass
    # Mutated filter bytes: rejected or loaded, never trusted blindly.
    good = filtervm.compile("sns", {"a": ["x"], "b": [{"numeric": [">", 1]}]}).to_bytes()
    for _ in range(2000):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            loaded = filtervm.Filter.from_bytes(bytes(data))
        except filtervm.LoadError:
            continue
        try:
            loaded.matches(attributes={"a": "x", "b": 2})
        except filtervm.MessageError:
            pass  # the metadata now names another dialect, which reads another part

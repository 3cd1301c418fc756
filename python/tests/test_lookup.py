"""Attributes given as a dict are looked up by the names the filters read (the library's
Filter::attribute_names) instead of read whole: the verdicts and errors are those of reading
the whole mapping, which a mapping that is not a dict still gets."""

from __future__ import annotations

import random
from types import MappingProxyType

import pytest

import filtervm

POLICIES = [
    ("sns", {"a": ["x", "y"]}),
    ("sns", {"a": [{"prefix": "x"}], "n": [{"numeric": [">", 1.5]}]}),
    ("sns", {"n": [1, 2.5], "b": [{"anything-but": ["x"]}]}),
    ("sns", {"a": [{"exists": False}]}),  # reads whether any attribute is there: read whole
    ("sns", {"z": [{"exists": True}]}),
    ("basaltic", {"a": ["x"]}),  # checks every attribute's type: read whole
    ("sns", {}),
]



class Text(str):
    """A `str` subclass: not plain (read whole), the same answers."""


class Count(int):
    """An `int` subclass: not plain (read whole), the same answers."""


VALUES = ["x", "y", "xz", "", "é", 1, 2, 2.5, 0.5, -3, b"bin", Text("x"), Count(2), True, bytearray(b"b")]


def random_dict(rng: random.Random) -> dict:
    return {name: rng.choice(VALUES) for name in rng.sample(["a", "b", "n", "z", "q"], rng.randint(0, 5))}


def outcome(call):
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the class and text are compared
        return (type(e).__name__, str(e))


def test_a_dict_looked_up_judges_as_the_whole_mapping_does():
    rng = random.Random(21)
    filters = [filtervm.compile(d, p) for d, p in POLICIES]
    s = filtervm.SubscriptionSet()
    for i, f in enumerate(filters):
        s.add(i, f)
    for _ in range(400):
        d = random_dict(rng)
        whole = MappingProxyType(d)  # not a dict: read whole
        for f in filters:
            assert outcome(lambda: f.matches(attributes=d)) == outcome(
                lambda: f.matches(attributes=whole)
            ), (f, d)
        assert outcome(lambda: list(s.matching(attributes=d))) == outcome(
            lambda: list(s.matching(attributes=whole))
        ), d


@pytest.mark.parametrize(
    "bad",
    [
        {"a": "x", "unread": True},
        {"a": "x", "unread": {1, 2}},
        {"a": "x", "unread": float("nan")},
        {"a": "x", 5: "y"},
        {"a": "x", "unread": {"DataType": "Strung", "StringValue": "v"}},
    ],
)
def test_an_attribute_no_filter_reads_still_gives_its_error(bad):
    f = filtervm.compile("sns", {"a": ["x"]})
    s = filtervm.SubscriptionSet()
    s.add("a", f)
    expected = outcome(lambda: f.matches(attributes=MappingProxyType(bad)))
    assert isinstance(expected, tuple), expected
    assert outcome(lambda: f.matches(attributes=bad)) == expected
    assert outcome(lambda: list(s.matching(attributes=bad))) == outcome(
        lambda: list(s.matching(attributes=MappingProxyType(bad)))
    )


def test_a_set_reads_the_names_of_the_filters_it_holds_now():
    s = filtervm.SubscriptionSet()
    s.add("a", filtervm.compile("sns", {"a": ["x"]}))
    message = {"a": "x", "b": "y"}
    assert s.matching(attributes=message) == ["a"]
    s.add("b", filtervm.compile("sns", {"b": ["y"]}))
    assert s.matching(attributes=message) == ["a", "b"]
    s.add("none", filtervm.compile("sns", {"c": [{"exists": False}]}))
    assert s.matching(attributes=message) == ["a", "b", "none"]
    s.remove("a")
    assert s.matching(attributes=message) == ["b", "none"]

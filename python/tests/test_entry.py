"""`Filter.matches(attributes=d)` is entered without PyO3's argument parsing (python/src/fast.rs):
the one call shape `matches(attributes=VALUE)` is taken there, every other is handed to PyO3's
method. Both give the same verdicts and errors, the method keeps its name, documentation and
signature, and no reference is kept or lost."""

from __future__ import annotations

import inspect
import random
import sys
from decimal import Decimal
from types import MappingProxyType

import pytest

import filtervm

POLICIES = [
    ("sns", {"a": ["x", "y"]}),  # one name: looked up during the type walk
    ("sns", {"n": [{"numeric": [">", 1.5]}]}),
    ("sns", {"a": [{"prefix": "x"}], "n": [{"numeric": [">", 1.5]}]}),  # two names
    ("sns", {"a": [{"exists": False}]}),  # reads whether any attribute is there
    ("basaltic", {"a": ["x"]}),  # checks every attribute's type
    ("sns", {}),
]

VALUES = [
    "x",
    "y",
    "xz",
    "",
    "é",
    "\ud800",
    1,
    2,
    2.5,
    float("nan"),
    10**30,
    Decimal("2.5"),
    b"bin",
    True,
    None,
    {1, 2},
    ["x", 1],
    {"DataType": "String", "StringValue": "x"},
    {"DataType": "Strung", "StringValue": "x"},
]


def outcome(call):
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the class and text are compared
        return (type(e).__name__, str(e))


def random_dict(rng: random.Random) -> dict:
    names = rng.sample(["a", "b", "n", "q", "é"], rng.randint(0, 5))
    return {name: rng.choice(VALUES) for name in names}


def test_the_direct_entry_answers_as_pyo3s_method():
    rng = random.Random(8)
    filters = [filtervm.compile(d, p) for d, p in POLICIES]
    # A keyword name made at run time is not the interned `attributes`: PyO3's method takes it.
    built = "".join(["attri", "butes"])
    assert built == "attributes" and built is not sys.intern("attributes")
    for _ in range(300):
        d = random_dict(rng)
        for f in filters:
            direct = outcome(lambda: f.matches(attributes=d))
            assert direct == outcome(lambda: f.matches(None, attributes=d)), (f, d)
            assert direct == outcome(lambda: f.matches(attributes=d, read_mode="validating")), (f, d)
            assert direct == outcome(lambda: f.matches(**{built: d})), (f, d)
            assert direct == outcome(lambda: f.matches(attributes=MappingProxyType(d))), (f, d)


def fresh(name: str) -> str:
    """`name` as a `str` made at run time, not the interned one: PyO3's method reads it."""
    made = "".join([name[:1], name[1:]])
    assert made == name and made is not sys.intern(name)
    return made


class Mode(str):
    """A `str` subclass given as read_mode."""


SHAPES = [
    ((), {"attributes": "D"}),
    (("D",), {}),
    ((None,), {"attributes": "D"}),
    ((), {"message": None, "attributes": "D"}),
    ((), {"attributes": "D", "headers": None, "body": None}),
    ((), {"attributes": "D", "read_mode": "trusted"}),
    ((), {"attributes": "D", "read_mode": Mode("validating")}),
    ((), {"attributes": "D", "read_mode": "fast"}),
    ((), {"attributes": "D", "read_mode": "tr\u00fcsted"}),
    ((), {"attributes": "D", "read_mode": None}),
    ((), {"attributes": "D", "read_mode": 1}),
    ((), {"body": "D"}),
    ((), {"body": b'{"a": "x"}', "read_mode": "trusted"}),
    ((), {"headers": "D"}),
    ((), {"attributes": None}),
    ((), {}),
    (("D",), {"message": "D"}),
    (("D", "D"), {}),
    ((), {"attributes": "D", "other": 1}),
]


@pytest.mark.parametrize("args,kwargs", SHAPES)
def test_each_call_shape_answers_as_pyo3_reads_it(args, kwargs):
    rng = random.Random(len(repr((args, kwargs))))
    filters = [filtervm.compile(d, p) for d, p in POLICIES]
    for _ in range(40):
        d = random_dict(rng)
        a = tuple(d if v == "D" else v for v in args)
        k = {n: d if isinstance(v, str) and v == "D" else v for n, v in kwargs.items()}
        through_pyo3 = {fresh(n): v for n, v in k.items()}
        for f in filters:
            assert outcome(lambda: f.matches(*a, **k)) == outcome(
                lambda: f.matches(*a, **through_pyo3)
            ), (f, a, k)


def test_every_other_call_gets_pyo3s_answers_and_errors():
    f = filtervm.compile("sns", {"a": ["x"]})
    assert f.matches(attributes={"a": "x"}) is True
    assert f.matches(attributes={"a": "y"}) is False
    assert f.matches(attributes={"a": "x"}, read_mode="trusted") is True
    with pytest.raises(TypeError, match=r"Filter.matches\(\) got an unexpected keyword argument 'other'"):
        f.matches(attributes={"a": "x"}, other=1)
    with pytest.raises(TypeError, match=r"Filter.matches\(\) got an unexpected keyword argument 'other'"):
        f.matches(other={"a": "x"})
    with pytest.raises(TypeError, match=r"Filter.matches\(\) takes from 0 to 1 positional arguments"):
        f.matches({"a": "x"}, {"a": "x"})
    with pytest.raises(TypeError, match="multiple values for argument 'message'"):
        f.matches({"a": "x"}, message={"a": "x"})
    with pytest.raises(ValueError, match="read_mode"):
        f.matches(attributes={"a": "x"}, read_mode="fast")
    with pytest.raises(TypeError):
        filtervm.Filter.matches(1, attributes={"a": "x"})
    with pytest.raises(TypeError, match="no message given"):
        f.matches(attributes=None)
    # Unbound, through the class: the same method.
    assert filtervm.Filter.matches(f, attributes={"a": "x"}) is True


@pytest.mark.parametrize(
    "bad",
    [
        {"a": "x", "unread": True},
        {"a": "x", "unread": float("nan")},
        {"a": "x", "unread": "\ud800"},
        {"a": "x", "unread": {"DataType": "Strung", "StringValue": "v"}},
        {"a": "x", 5: "y"},
    ],
)
def test_an_unread_attribute_still_raises_through_the_direct_entry(bad):
    f = filtervm.compile("sns", {"a": ["x"]})
    expected = outcome(lambda: f.matches(None, attributes=bad))
    assert isinstance(expected, tuple), expected
    assert outcome(lambda: f.matches(attributes=bad)) == expected


def test_the_method_keeps_its_name_documentation_and_signature():
    method = filtervm.Filter.matches
    assert method.__name__ == "matches"
    assert method.__qualname__ == "Filter.matches"
    assert method.__doc__.startswith("Whether the message matches")
    assert list(inspect.signature(method).parameters) == [
        "self",
        "message",
        "attributes",
        "headers",
        "body",
        "read_mode",
    ]


def test_the_direct_entry_keeps_no_reference():
    f = filtervm.compile("sns", {"a": ["x"]})
    value, unread, nan = "x", 3.5, float("nan")
    plain = {"a": value, "b": unread}
    other = {"a": value, "b": nan}  # raises: the error path
    aws = {"a": {"DataType": "String", "StringValue": value}}  # read the general way
    body = filtervm.compile("sns", {"a": ["x"]}, {"scope": "MessageBody"})
    text, mode = b'{"a": "x", "b": 1}', "trusted"
    objects = (f, body, plain, other, aws, value, unread, nan, text, mode)
    counts = [sys.getrefcount(o) for o in objects]
    for _ in range(1000):
        f.matches(attributes=plain)
        f.matches(attributes=aws)
        body.matches(body=text, read_mode=mode)
        try:
            f.matches(attributes=other)
        except ValueError:
            pass
        try:
            f.matches(attributes=plain, read_mode=None)  # PyO3's method raises
        except TypeError:
            pass
    assert [sys.getrefcount(o) for o in objects] == counts

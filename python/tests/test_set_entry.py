"""`SubscriptionSet.matching(attributes=d)` is entered without PyO3's argument parsing
(python/src/fast.rs): a `dict` of plain names and values is looked up by the names the set's
filters read, matched, and the result made without a call through its type; every other call
is handed to PyO3's method. Both give the same ids, the same unjudged groups and the same
errors; the GIL is released for sets of at least 1,024 subscriptions, not for smaller ones; no
reference is kept or lost."""

from __future__ import annotations

import pickle
import random
import sys
from types import MappingProxyType

import pytest

import filtervm

from test_entry import VALUES, outcome
from test_threads import ticks_during

NAMES = ["a", "b", "n", "q", "é", "c", "d", "e", "f", "g"]

POLICIES = [
    ("sns", {"a": ["x", "y"]}),
    ("sns", {"n": [{"numeric": [">", 1.5]}]}),
    ("sns", {"a": [{"prefix": "x"}], "n": [{"numeric": [">", 1.5]}]}),
    ("sns", {"b": [{"anything-but": ["x"]}]}),
    ("sns", {"q": [{"exists": True}]}),
    ("sns", {"é": ["x"]}),
    ("basaltic", {"a": ["x"]}),
    ("sns", {"a": [{"exists": False}]}),  # reads whether any attribute is there
    ("stream", "c = x"),  # reads headers: unjudged without them
]

# Policies on more names than one walk looks for (eight): read the general way.
MANY = [("sns", {name: ["x"]}) for name in NAMES]


def random_dict(rng: random.Random) -> dict:
    names = rng.sample(NAMES, rng.randint(0, len(NAMES)))
    return {name: rng.choice(VALUES) for name in names}


def random_set(rng: random.Random, pool) -> filtervm.SubscriptionSet:
    s = filtervm.SubscriptionSet()
    for i, (dialect, policy) in enumerate(rng.sample(pool, rng.randint(1, len(pool)))):
        s.add(("sub", i), filtervm.compile(dialect, policy))
    return s


def answer(call):
    """The ids and unjudged groups of a `matching` call, or its exception's class and text."""
    got = outcome(call)
    if isinstance(got, tuple):
        return got
    assert isinstance(got, filtervm.Matches) and isinstance(got, list)
    return (list(got), list(got.unjudged))


def test_the_direct_entry_answers_as_pyo3s_method():
    rng = random.Random(11)
    built = "".join(["attri", "butes"])  # not the interned name: PyO3's method reads it
    assert built == "attributes" and built is not sys.intern("attributes")
    for pool in (POLICIES, POLICIES[:3], POLICIES[:1], MANY):
        for _ in range(60):
            s = random_set(rng, pool)
            for _ in range(10):
                d = random_dict(rng)
                direct = answer(lambda: s.matching(attributes=d))
                assert direct == answer(lambda: s.matching(**{built: d})), (d,)
                assert direct == answer(lambda: s.matching(None, attributes=d)), (d,)
                # Read whole: a mapping that is not a dict.
                assert direct == answer(lambda: s.matching(attributes=MappingProxyType(d))), (d,)


def test_the_ids_are_those_of_the_filters_one_by_one():
    rng = random.Random(12)
    filters = [(f"s{i}", filtervm.compile(d, p)) for i, (d, p) in enumerate(POLICIES[:-1])]
    s = filtervm.SubscriptionSet()
    for sid, f in filters:
        s.add(sid, f)
    for _ in range(300):
        d = {name: rng.choice(["x", "y", "xz", 1, 2.5]) for name in rng.sample(NAMES, 4)}
        expected = [sid for sid, f in filters if f.matches(attributes=d)]
        got = s.matching(attributes=d)
        assert list(got) == expected, d
        assert got.complete and got.unjudged == []


def test_a_group_that_cannot_judge_is_listed_and_strict_raises():
    s = filtervm.SubscriptionSet()
    s.add("attr", filtervm.compile("sns", {"a": ["x"]}))
    s.add("head", filtervm.compile("stream", "c = x"))
    got = s.matching(attributes={"a": "x"})
    assert list(got) == ["attr"]
    assert [(g.dialect, g.subscriptions, g.code) for g in got.unjudged] == [
        ("stream", 1, "MESSAGE_SHAPE")
    ]
    assert not got.complete
    with pytest.raises(filtervm.MessageError) as e:
        s.matching(attributes={"a": "x"}, strict=True)
    assert e.value.code == "MESSAGE_SHAPE"
    # The result is a Matches like any other: it pickles with its groups.
    again = pickle.loads(pickle.dumps(got))
    assert list(again) == ["attr"] and again.unjudged == got.unjudged


def test_an_unread_attribute_still_raises_through_the_direct_entry():
    s = filtervm.SubscriptionSet()
    s.add(1, filtervm.compile("sns", {"a": ["x"]}))
    for bad in ({"a": "x", "u": True}, {"a": "x", "u": "\ud800"}, {"a": "x", 5: "y"}):
        expected = outcome(lambda: s.matching(None, attributes=bad))
        assert isinstance(expected, tuple), expected
        assert outcome(lambda: s.matching(attributes=bad)) == expected


def test_the_method_keeps_its_name_and_documentation():
    method = filtervm.SubscriptionSet.matching
    assert method.__name__ == "matching"
    assert method.__qualname__ == "SubscriptionSet.matching"
    assert method.__doc__.startswith("The ids whose filter matches the message")


def test_the_gil_is_released_for_large_sets_only():
    # Every subscription matches `d`: a set of 20,000 matches each call long enough for the other
    # thread to run while the GIL is released; a set of 1,023 never releases it.
    d = {"a": "x", "b": "other"}

    def filled(n):
        s = filtervm.SubscriptionSet()
        for i in range(n):
            s.add(i, filtervm.compile("sns", {"a": ["x", f"v{i}"]}))
        return s

    small, large = filled(1023), filled(20_000)

    def calls(s, n, times):
        for _ in range(times):
            assert len(s.matching(attributes=d)) == n

    assert ticks_during(lambda: calls(small, 1023, 20)) == 0
    assert ticks_during(lambda: calls(large, 20_000, 100)) > 0


def test_the_direct_entry_keeps_no_reference():
    s = filtervm.SubscriptionSet()
    sid = ("tenant", 7)
    s.add(sid, filtervm.compile("sns", {"a": ["x"], "n": [{"numeric": [">", 1]}]}))
    s.add("head", filtervm.compile("stream", "c = x"))
    value, number = "x", 3.5
    plain = {"a": value, "n": number}
    other = {"a": value, "n": True}  # raises: PyO3's method reads it
    objects = (s, sid, plain, other, value, number)
    counts = [sys.getrefcount(o) for o in objects]
    for _ in range(1000):
        got = s.matching(attributes=plain)
        assert list(got) == [sid]
        del got
        try:
            s.matching(attributes=other)
        except TypeError:
            pass
    assert [sys.getrefcount(o) for o in objects] == counts

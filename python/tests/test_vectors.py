"""Every conformance vector through the Python package: invalid policies raise PolicyError with
their code, and every match / no-match verdict holds for the message given as JSON text, as
bytes, as a dict, as its parts (attributes=, headers=, body=), for the policy given as text and
as a dict, and through one SubscriptionSet per vector file."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Dict, List, Optional

import pytest

import filtervm
from conftest import Vector, exact, has_duplicate_members, load_vectors

VECTORS = load_vectors()
VALID = [v for v in VECTORS if v.expect in ("match", "no-match")]
INVALID = [v for v in VECTORS if v.expect == "invalid"]


def options_of(v: Vector) -> Optional[str]:
    return None if v.options_text in (None, "null") else v.options_text


def test_the_vectors_are_all_here():
    # Every dialect's public and local files; a vector the loader skipped would show here.
    assert {v.dialect for v in VECTORS} == set(filtervm.DIALECTS)
    assert len(VALID) > 500 and len(INVALID) > 150
    assert all(v.expect in ("match", "no-match", "invalid") for v in VECTORS)


@pytest.mark.parametrize("v", INVALID, ids=repr)
def test_an_invalid_policy_raises_policy_error_with_its_code(v: Vector):
    with pytest.raises(filtervm.PolicyError) as info:
        filtervm.compile(v.dialect, v.policy_text, options_of(v))
    errors = info.value.errors
    assert errors, "a PolicyError lists at least one error"
    for e in errors:
        assert isinstance(e, filtervm.ErrorDetail)
        assert e.code.isupper() and isinstance(e.pointer, str) and e.message
    if v.error:
        # The runner's rule (conformance/FORMAT.md): the code or a message holds the word.
        word = v.error.lower()
        assert any(word in e.code.lower() or word in e.message.lower() for e in errors), errors


def parts(v: Vector, message: Any, options: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The vector's message as the keyword parts its dialect reads (None: no such form)."""
    if v.dialect in ("stream", "expr"):
        return {"headers": message.get("headers") or {}}
    if v.dialect in ("eventgrid", "eventbridge"):
        return {"body": v.message_text.encode()}
    if v.dialect == "sns" and options.get("scope") == "MessageBody":
        body = message.get("body")
        return {"body": body} if isinstance(body, str) else None
    return {"attributes": message.get("attributes") or {}}


@pytest.mark.parametrize("v", VALID, ids=repr)
def test_every_message_form_gives_the_vector_verdict(v: Vector):
    want = v.expect == "match"
    f = filtervm.compile(v.dialect, v.policy_text, options_of(v))
    assert f.matches(v.message_text) is want, "as str"
    assert f.matches(v.message_text.encode()) is want, "as bytes"
    message = exact(v.message_text)
    # A dict keeps one value per key: an event that repeats a member name (EB-3) is matched from
    # its text only.
    if isinstance(message, dict) and not has_duplicate_members(v.message_text):
        assert f.matches(message) is want, "as a dict"
        by_parts = parts(v, message, f.options)
        if by_parts is not None:
            assert f.matches(**by_parts) is want, f"as parts {sorted(by_parts)}"
    if not has_duplicate_members(v.policy_text):
        options = exact(v.options_text) if options_of(v) else None
        g = filtervm.compile(v.dialect, exact(v.policy_text), options)
        assert g.matches(v.message_text) is want, "policy as a dict"
    loaded = filtervm.Filter.from_bytes(f.to_bytes())
    assert loaded.matches(v.message_text) is want, "loaded from bytes"




def _files() -> Dict[str, List[Vector]]:
    """The valid vectors by file and options: a vector's message carries the part its own
    options read (attributes, or the body), so one set holds the vectors of one options value
    (a message without the part some group of a set reads leaves that group unjudged)."""
    out: Dict[str, List[Vector]] = defaultdict(list)
    for v in VALID:
        options = json.dumps(json.loads(options_of(v) or "{}"), sort_keys=True)
        out[f"{v.file} {options}"].append(v)
    return out


@pytest.mark.parametrize("cases", list(_files().values()), ids=list(_files().keys()))
def test_one_set_per_file_and_options_gives_every_verdict(cases: List[Vector]):
    subscriptions = filtervm.SubscriptionSet()
    for v in cases:
        subscriptions.add(v.id, filtervm.compile(v.dialect, v.policy_text, options_of(v)))
    assert len(subscriptions) == len(cases)
    for v in cases:
        got = subscriptions.matching(v.message_text.encode())
        assert got.complete, got.unjudged
        assert (v.id in got) == (v.expect == "match"), v.id

"""Trusted reading (read_mode="trusted"): on valid JSON the same verdicts and errors as the
default validating reading; faults only in members no filter reads (README "Trusted input")
give a verdict instead of MESSAGE_NOT_JSON; an unknown mode is a ValueError."""

from __future__ import annotations

import pytest

import filtervm

MODES = ("validating", "trusted")


def body_filter() -> filtervm.Filter:
    return filtervm.compile("sns", {"store": ["example_corp"]}, {"scope": "MessageBody"})


def test_valid_json_reads_the_same_in_both_modes():
    f = body_filter()
    eb = filtervm.compile("eventbridge", {"source": ["shop"], "detail": {"n": [{"numeric": [">", 1]}]}})
    cases = [
        (f, {"body": '{"store": "example_corp", "items": [1, true, {"a": "]"}]}'}),
        (f, {"body": '{"store": "other", "items": [1, true]}'}),
        (f, {"body": b'{"items": [], "store": "example_corp", "note": "caf\\u00e9"}'}),
        (eb, {"message": '{"source": "shop", "detail": {"n": 2, "skip": [null, 1.5e3]}}'}),
        (eb, {"message": '{"source": "shop", "detail": {"n": 0}, "extra": {"x": []}}'}),
        (eb, {"message": '{"detail": {"n": 5}, "source": "web"}'}),
    ]
    seen = set()
    for filt, kwargs in cases:
        verdicts = [filt.matches(**kwargs, read_mode=mode) for mode in MODES]
        assert verdicts[0] == verdicts[1], kwargs
        assert verdicts[0] == filt.matches(**kwargs), kwargs
        seen.add(verdicts[0])
    assert seen == {True, False}
    # A document that is not JSON in what the filter reads is the same error in both modes.
    for mode in MODES:
        with pytest.raises(filtervm.MessageError) as info:
            f.matches('{"store": tru}', read_mode=mode)
        assert info.value.code == "MESSAGE_NOT_JSON"
        # An unclosed container is still an error when trusted.
        with pytest.raises(filtervm.MessageError) as info:
            f.matches('{"store": "example_corp", "items": [1, 2', read_mode=mode)
        assert info.value.code == "MESSAGE_NOT_JSON"


@pytest.mark.parametrize(
    "body",
    [
        '{"store": "example_corp", "items": [01, tru]}',
        b'{"store": "example_corp", "note": "\xff\xfe"}',
        '{"note": "a\\qb", "store": "example_corp"}',
    ],
)
def test_a_fault_in_an_unread_member_is_an_error_validating_and_a_verdict_trusted(body):
    f = body_filter()
    # The document given whole (the body itself, as no message shape's member opens it).
    assert f.matches(body, read_mode="trusted") is True
    for kwargs in ({}, {"read_mode": "validating"}):
        with pytest.raises(filtervm.MessageError) as info:
            f.matches(body, **kwargs)
        assert info.value.code == "MESSAGE_NOT_JSON"
    # The same text as the body part: an SNS body that is not JSON is its own verdict (no match
    # for a policy reading the body) when validating; trusted, the member read decides.
    assert f.matches(body=body, read_mode="trusted") is True
    assert f.matches(body=body) is False
    assert f.matches(body=body, read_mode="validating") is False


def test_eventbridge_event_text_trusted():
    eb = filtervm.compile("eventbridge", {"source": ["shop"]})
    event = '{"source": "shop", "detail": {"n": NaN, "ok": fals}}'
    assert eb.matches(event, read_mode="trusted") is True
    with pytest.raises(filtervm.MessageError) as info:
        eb.matches(event)
    assert info.value.code == "MESSAGE_NOT_JSON"


def test_set_matching_trusted():
    s = filtervm.SubscriptionSet()
    s.add("shop", body_filter())
    s.add("other", filtervm.compile("sns", {"store": ["other"]}, {"scope": "MessageBody"}))
    body = '{"store": "example_corp", "items": [01, tru]}'
    trusted = s.matching(body, read_mode="trusted")
    assert trusted == ["shop"] and trusted.unjudged == []
    validating = s.matching(body)
    assert validating == [] and [g.code for g in validating.unjudged] == ["MESSAGE_NOT_JSON"]
    assert validating.unjudged[0].subscriptions == 2
    with pytest.raises(filtervm.MessageError) as info:
        s.matching(body, read_mode="validating", strict=True)
    assert info.value.code == "MESSAGE_NOT_JSON"
    assert s.matching(body, read_mode="trusted", strict=True) == ["shop"]
    # As the body part: no match validating (an SNS body that is not JSON), a match trusted.
    assert s.matching(body=body, read_mode="trusted") == ["shop"]
    assert s.matching(body=body) == []
    valid = '{"store": "other", "items": [1, true]}'
    for kwargs in ({"message": valid}, {"body": valid}):
        assert s.matching(**kwargs, read_mode="trusted") == s.matching(**kwargs) == ["other"]


@pytest.mark.parametrize("mode", ["Trusted", "TRUSTED", "", "validate", "fast"])
def test_an_unknown_read_mode_is_a_value_error_naming_the_accepted_values(mode):
    f = body_filter()
    s = filtervm.SubscriptionSet()
    s.add(1, f)
    body = '{"store": "example_corp"}'
    for call in (
        lambda: f.matches(body=body, read_mode=mode),
        lambda: f.matches(attributes={"store": "x"}, read_mode=mode),
        lambda: s.matching(body=body, read_mode=mode),
    ):
        with pytest.raises(ValueError) as info:
            call()
        assert not isinstance(info.value, filtervm.FiltervmError)
        assert '"validating"' in str(info.value) and '"trusted"' in str(info.value)
    with pytest.raises(TypeError):
        f.matches(body=body, read_mode=None)


def test_large_documents_read_with_the_gil_released_keep_the_mode():
    # Text of 4096 bytes or more is matched with the GIL released: the mode travels with it.
    f = body_filter()
    padding = ", ".join(f'"k{i}": [01, tru, "\\q"]' for i in range(400))
    body = '{"store": "example_corp", ' + padding + "}"
    assert len(body) > 8192
    assert f.matches(body, read_mode="trusted") is True
    with pytest.raises(filtervm.MessageError) as info:
        f.matches(body)
    assert info.value.code == "MESSAGE_NOT_JSON"
    valid = '{"store": "example_corp", ' + ", ".join(f'"k{i}": [1, true]' for i in range(400)) + "}"
    assert f.matches(valid, read_mode="trusted") is f.matches(valid) is True

"""The exceptions and small record types of :mod:`filtervm` (pure Python; the extension module
builds them)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, NamedTuple


class ErrorDetail(NamedTuple):
    """One problem: a stable ``code``, a JSON Pointer into the policy or message, and a
    ``message`` a person can act on."""

    code: str
    """The stable code, e.g. ``"SNS_TYPE_ERROR"`` or ``"INVALID_MESSAGE"``."""
    pointer: str
    """A JSON Pointer (``""`` is the whole policy or message; for the stream text form a byte
    span ``"bytes A..B"``)."""
    message: str
    """What is wrong."""


class LintWarning(NamedTuple):
    """A policy that compiles but probably does not mean what its author thinks."""

    code: str
    """A stable code, e.g. ``"DUPLICATE_CONDITION"``."""
    pointer: str
    """The JSON Pointer of the policy part."""
    message: str
    """What is wrong."""
    fix: str
    """What to do, in one line."""


class FiltervmError(ValueError):
    """Base class of every error filtervm raises about its input."""

    errors: List[ErrorDetail]
    """Every problem found (at least one)."""

    def __init__(self, message: str, errors: List[ErrorDetail]) -> None:
        super().__init__(message)
        self.errors = list(errors)

    @property
    def code(self) -> str:
        """The first error's code."""
        return self.errors[0].code if self.errors else ""

    @property
    def pointer(self) -> str:
        """The first error's JSON Pointer."""
        return self.errors[0].pointer if self.errors else ""


class PolicyError(FiltervmError):
    """The policy or its options are invalid; ``errors`` lists every problem, each with its
    ``code``, ``pointer`` and ``message``."""


class MessageError(FiltervmError):
    """A message could not be read for a filter: not in the dialect's shape, missing the part
    the filter reads, or too complex to judge (``MESSAGE_TOO_COMPLEX``)."""


class LoadError(FiltervmError):
    """Bytes given to :meth:`Filter.from_bytes` are not a filter, or a filter loaded from bytes
    was asked for what it does not carry (its IR, its policy)."""


class Unjudged(NamedTuple):
    """A group of subscriptions (one dialect and options value) of a
    :class:`~filtervm.SubscriptionSet` that could not judge a message: its subscriptions are in
    no result of :meth:`~filtervm.SubscriptionSet.matching`."""

    dialect: str
    """The group's dialect, e.g. ``"stream"``."""
    options: Dict[str, Any]
    """The group's options, every option written out."""
    subscriptions: int
    """The number of its subscriptions."""
    code: str
    """Why, as a stable code: ``"MESSAGE_SHAPE"`` (the message lacks the part the group reads),
    ``"INVALID_MESSAGE"`` (the part breaks the dialect's rules, e.g. a stream header given two
    values), ``"MESSAGE_NOT_JSON"``, ``"MESSAGE_TOO_COMPLEX"``."""
    pointer: str
    """A JSON Pointer into the message (``""`` for the whole of it)."""
    message: str
    """What is wrong, with a hint."""


class Matches(list):
    """The ids :meth:`~filtervm.SubscriptionSet.matching` found, in the order they were first
    added: a ``list``, with the groups of subscriptions that could not judge the message in
    ``unjudged``."""

    # No `__new__` or `__init__` of its own: the extension builds a result as `list` builds one
    # (C only, no Python frame per message) and sets `_unjudged` only when some group could not
    # judge the message.
    __slots__ = ("_unjudged",)

    @property
    def unjudged(self) -> List[Unjudged]:
        """The groups that could not judge the message (empty when every group did)."""
        try:
            return self._unjudged
        except AttributeError:
            self._unjudged: List[Unjudged] = []
            return self._unjudged

    @property
    def complete(self) -> bool:
        """Whether every group of the set judged the message."""
        return not self.unjudged

    def __reduce__(self):
        return (_matches, (list(self), self.unjudged))


def _matches(ids: Iterable[Any], unjudged: Iterable[Unjudged]) -> Matches:
    """A :class:`Matches` of `ids` and `unjudged` (what a pickled one is rebuilt with)."""
    result = Matches(ids)
    result._unjudged = list(unjudged)
    return result

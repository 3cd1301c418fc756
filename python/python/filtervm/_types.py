"""The exceptions and small record types of :mod:`filtervm` (pure Python; the extension module
builds them)."""

from __future__ import annotations

from typing import List, NamedTuple


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

"""Type stubs of the extension module (the implementation is Rust: python/src/lib.rs)."""

from decimal import Decimal
from typing import Any, Dict, Hashable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._types import LintWarning

__version__: str
DIALECTS: List[str]
"""The dialect names: "sns", "basaltic", "eventgrid", "stream", "expr"."""

Json = Union[None, bool, int, float, Decimal, str, Sequence[Any], Mapping[str, Any]]
"""A JSON value as Python holds it (dict keys are str)."""

PolicyArg = Union[str, bytes, bytearray, Mapping[str, Any], Sequence[Any]]
"""A policy: JSON text (numbers keep their exact text; for stream also the text form) or a
JSON value."""

MessageArg = Union[str, bytes, bytearray, Mapping[str, Any]]
"""A message document in the dialect's shape: a dict or JSON text."""

AttributeValue = Union[str, int, float, Decimal, Sequence[Any], bytes, Mapping[str, Any]]
"""str -> String; int, float, Decimal -> Number; list/tuple -> String.Array; bytes -> Binary;
{"DataType": T, "StringValue": V} (or {"Type": T, "Value": V}) -> type T."""

Headers = Union[Mapping[str, Union[str, Sequence[str]]], Iterable[Tuple[str, str]]]
"""name -> value or list of values, or (name, value) pairs (a repeated name adds a value)."""

def compile(
    dialect: str,
    policy: PolicyArg,
    options: Optional[Union[str, bytes, Mapping[str, Any]]] = None,
) -> Filter:
    """Compiles a filter policy of `dialect` with the dialect's `options` (None: defaults).

    Raises PolicyError (every error in .errors) for an invalid policy or options, ValueError
    for an unknown dialect."""
    ...

def lint(
    dialect: str,
    policy: PolicyArg,
    options: Optional[Union[str, bytes, Mapping[str, Any]]] = None,
) -> List[LintWarning]:
    """Compiles the policy and returns its lint warnings. Raises PolicyError when it does not
    compile."""
    ...

class Filter:
    """A compiled filter: immutable and thread-safe.

    A message is a document in the dialect's shape (dict or JSON text), or attributes=,
    headers= or body=; the filter reads the part its dialect needs (a missing part raises
    MessageError)."""

    @property
    def dialect(self) -> str:
        """The dialect name."""
        ...
    @property
    def options(self) -> Dict[str, Any]:
        """The options the filter was compiled with, every option written out."""
        ...
    @property
    def policy(self) -> Optional[str]:
        """The policy text it was compiled from (None when loaded from bytes)."""
        ...
    def matches(
        self,
        message: Optional[MessageArg] = None,
        *,
        attributes: Optional[Mapping[str, AttributeValue]] = None,
        headers: Optional[Headers] = None,
        body: Optional[Union[str, bytes, bytearray]] = None,
    ) -> bool:
        """Whether the message matches. Raises MessageError when it cannot be read."""
        ...
    def explain(
        self,
        message: Optional[MessageArg] = None,
        *,
        attributes: Optional[Mapping[str, AttributeValue]] = None,
        headers: Optional[Headers] = None,
        body: Optional[Union[str, bytes, bytearray]] = None,
    ) -> Dict[str, Any]:
        """Why the message does or does not match: "matched", "verdict", "decided_by", "hints",
        "conditions", "instructions". Raises LoadError for a filter loaded from bytes."""
        ...
    def ir(self, *, lowered: bool = False) -> Optional[str]:
        """The optimized (or, with lowered=True, the lowered) IR as text; None when loaded from
        bytes."""
        ...
    def disassemble(self) -> str:
        """The bytecode program's disassembly."""
        ...
    def lint(self) -> List[LintWarning]:
        """The lint warnings of the filter's policy. Raises LoadError when loaded from bytes."""
        ...
    def to_bytes(self) -> bytes:
        """The filter as bytes: program, dialect, options (no IR)."""
        ...
    @staticmethod
    def from_bytes(data: bytes) -> Filter:
        """Loads to_bytes() output (verified; bad bytes raise LoadError)."""
        ...

class SubscriptionSet:
    """Subscriptions (any hashable ids, filters of any dialects) matched together.

    Thread-safe: matching releases the GIL and runs from several threads at once."""

    def __init__(self) -> None: ...
    def add(self, id: Hashable, filter: Filter) -> None:
        """Adds subscription `id`, replacing its filter if it is already there."""
        ...
    def remove(self, id: Hashable) -> bool:
        """Removes subscription `id`; False when it was not there."""
        ...
    def matching(
        self,
        message: Optional[MessageArg] = None,
        *,
        attributes: Optional[Mapping[str, AttributeValue]] = None,
        headers: Optional[Headers] = None,
        body: Optional[Union[str, bytes, bytearray]] = None,
    ) -> List[Any]:
        """The ids whose filter matches, in the order they were first added. Raises MessageError
        when a filter of the set needs a part the message lacks, or cannot read it."""
        ...
    def __len__(self) -> int: ...
    def __contains__(self, id: object) -> bool: ...

"""Type stubs of the extension module (the implementation is Rust: python/src/lib.rs)."""

from decimal import Decimal
from typing import (
    Any,
    Dict,
    Hashable,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from ._types import LintWarning, Matches

__version__: str
DIALECTS: List[str]
"""The dialect names: "sns", "basaltic", "eventgrid", "stream", "expr", "eventbridge"."""

Json = Union[None, bool, int, float, Decimal, str, Sequence[Any], Mapping[str, Any]]
"""A JSON value as Python holds it (dict keys are str)."""

PolicyArg = Union[str, bytes, bytearray, Mapping[str, Any], Sequence[Any]]
"""A policy: JSON text (numbers keep their exact text; for stream also the text form) or a
JSON value."""

MessageArg = Union[str, bytes, bytearray, Mapping[str, Any]]
"""A message as one JSON document: a dict or JSON text (the parts shape {"attributes",
"headers", "body"}, the AWS SNS Publish and notification shapes, or any other document as the
body itself, e.g. an Event Grid event)."""

ReadMode = Literal["validating", "trusted"]
"""How a JSON document or body is read: "validating" checks every byte against RFC 8259;
"trusted", for input validated upstream, skips checking the members no filter reads (README,
"Trusted input")."""

Number = Union[int, float, Decimal]
"""A number (not a bool): an attribute's value, read as its text."""

TypedAttribute = Mapping[str, Union[str, Number, bytes]]
"""{"DataType": T, "StringValue": V} (or {"Type": T, "Value": V}; V a str or a number, read
as its text; {"DataType": "Binary", "BinaryValue": b"..."})."""

AttributeValue = Union[str, int, float, Decimal, Sequence[Any], bytes, TypedAttribute]
"""str -> String; int, float, Decimal -> Number (bool is refused: TypeError); list/tuple ->
String.Array; bytes -> Binary; a TypedAttribute -> its type."""

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

def example(filter: Filter, *, matching: bool = True) -> Dict[str, Any]:
    """A message `filter` matches (matching=True) or does not (matching=False):
    {"found": True, "matches", "message"} (the message in the dialect's shape, judged by the VM)
    or {"found": False, "matches", "exact", "reason"} (exact: none exists, proved). The shape of
    `filtervm example --json`. Raises LoadError (ANALYSIS_NO_IR) for a filter loaded from
    bytes of the first wire format (no IR)."""
    ...

def diff(
    first: Filter, second: Filter, *, assume: Union[str, Sequence[str], None] = None
) -> Dict[str, Any]:
    """Whether two filters reading the same part of a message match exactly the same messages:
    {"verdict": "same" | "different" | "unknown", "exact", "reason", "first_only",
    "second_only" (a message only that filter matches, or None), "keys": [{"key", "first_only",
    "second_only"}]}. The shape of `filtervm diff --json`. Raises ValueError
    (ANALYSIS_MODEL_MISMATCH) for filters of two message models, LoadError (ANALYSIS_NO_IR) for
    a filter loaded from bytes of the first wire format (no IR).

    assume: assumptions about the documents compared, a name or a list of names:
    "canonical-documents" (no member named twice, numbers in their shortest round-trip form,
    member names spelled as the filters spell them), "no-arrays" (no array at or on the way to a
    member the filters read). The search builds no other document, and the dict names them
    ("assuming": [NAME, ...]). Raises ValueError (ANALYSIS_ASSUMPTION) for an unknown name."""
    ...

def read_events(document: Union[str, bytes, bytearray]) -> List[bytes]:
    """The events of an Event Grid array of events (a batch): each event's bytes, to match one
    by one with body=; any other document is one event (itself). Raises MessageError
    (MESSAGE_NOT_JSON) for text that is not JSON."""
    ...

class Filter:
    """A compiled filter: immutable and thread-safe; it pickles (compiled again from its
    policy) and copies (a copy is the filter itself).

    A message is one JSON document (dict or JSON text), or its parts attributes=, headers=
    and body= (not both: TypeError); the filter reads the part its dialect needs. A message
    without attributes has the empty attribute set (sns rule 12: only {} matches it); one
    without the body or headers a filter reads raises MessageError (MESSAGE_SHAPE)."""

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
        read_mode: ReadMode = "validating",
    ) -> bool:
        """Whether the message matches. Raises MessageError when it cannot be read.
        read_mode="trusted" skips checking the members of a JSON document or body no filter
        reads (input validated upstream); another value than "validating" or "trusted" raises
        ValueError."""
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
    def __copy__(self) -> Filter: ...
    def __deepcopy__(self, memo: Any) -> Filter: ...

_Default = TypeVar("_Default")

class SubscriptionSet:
    """Subscriptions (any hashable ids, filters of any dialects) matched together.

    Thread-safe: matching runs from several threads at once, with the GIL released for sets of
    1,024 subscriptions or more and for messages given as text of 4 KiB or more. len(s),
    id in s, iter(s) (the ids, in the order first added) and s.get(id) work as on a dict; a
    set pickles and copies."""

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
        strict: bool = False,
        read_mode: ReadMode = "validating",
    ) -> Matches:
        """The ids whose filter matches, in the order they were first added, as a list whose
        .unjudged lists the groups of subscriptions that could not judge the message (the
        others still deliver). With strict=True such a group raises MessageError instead.
        read_mode is that of Filter.matches."""
        ...
    def get(self, id: Hashable, default: Optional[_Default] = None) -> Union[Filter, _Default, None]:
        """The filter of subscription `id`, or `default`."""
        ...
    def __len__(self) -> int: ...
    def __contains__(self, id: object) -> bool: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __copy__(self) -> SubscriptionSet: ...
    def __deepcopy__(self, memo: Any) -> SubscriptionSet: ...

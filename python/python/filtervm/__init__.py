"""filtervm: subscription filters compiled to bytecode.

Six dialects -- AWS SNS filter policies (``"sns"``), the notification service's policies
(``"basaltic"``), Azure Event Grid filters (``"eventgrid"``), stream header clause groups
(``"stream"``), nested condition trees (``"expr"``) and Amazon EventBridge event patterns
(``"eventbridge"``) -- are compiled into one small bytecode and
matched against messages, with AWS-exact and Azure-exact answers.

>>> import filtervm
>>> f = filtervm.compile("sns", {"event": ["order.paid"], "amount": [{"numeric": [">", 100]}]})
>>> f.matches(attributes={"event": "order.paid", "amount": 149.5})
True
>>> s = filtervm.SubscriptionSet()
>>> s.add("billing", f)
>>> s.matching(attributes={"event": "order.paid", "amount": 12})
[]
"""

from ._filtervm import (
    DIALECTS,
    Filter,
    SubscriptionSet,
    __version__,
    compile,
    diff,
    example,
    lint,
    read_events,
)
from ._types import (
    ErrorDetail,
    FiltervmError,
    LintWarning,
    LoadError,
    Matches,
    MessageError,
    PolicyError,
    Unjudged,
)

__all__ = [
    "DIALECTS",
    "ErrorDetail",
    "Filter",
    "FiltervmError",
    "LintWarning",
    "LoadError",
    "Matches",
    "MessageError",
    "PolicyError",
    "SubscriptionSet",
    "Unjudged",
    "__version__",
    "compile",
    "diff",
    "example",
    "lint",
    "read_events",
]

"""Per-message cost through Python: the same policy and messages as the Rust
(capi/examples/per_message.rs) and C (capi/bench/per_message.c) measurements.

    python3 bench/workloads.py bench-data
    python python/bench/per_message.py bench-data/pol1c.jsonl bench-data/attrs.jsonl

The policy (sns syntax, first line of its file) runs on the first 10,000 lines of the messages
file, flat JSON objects: as attributes (a dict of str/int/float, and the AWS form
{"DataType", "StringValue"}) with the policy in attribute scope, through a SubscriptionSet of
that one filter, and as the raw body (bytes) with the policy in MessageBody scope. The routes
sum a generator of the calls, except `py_attributes_loop`: the calls of `py_attributes` in a
plain `for` loop counting the matches, as a broker makes them. Prints
"name: ns" lines, the median of 5 rounds of at least 0.3 s each; with FILTERVM_ROUTE=NAME only
that route runs, one untimed pass (for valgrind --tool=callgrind).
"""

from __future__ import annotations

import json
import os
import sys
import time

import filtervm

MESSAGES = 10_000


def aws(message: dict) -> dict:
    return {
        name: {"DataType": "String" if isinstance(v, str) else "Number", "StringValue": str(v)}
        for name, v in message.items()
    }


def report(name: str, n: int, round_) -> None:
    only = os.environ.get("FILTERVM_ROUTE")
    if only is not None:
        if only == name:
            round_()
        return
    per_message = []
    for _ in range(5):
        start = time.perf_counter()
        passes = 0
        while time.perf_counter() - start < 0.3:
            round_()
            passes += 1
        per_message.append((time.perf_counter() - start) * 1e9 / passes / n)
    per_message.sort()
    print(f"{name}: {per_message[2]:.1f}")


def main() -> None:
    policy_path, messages_path = sys.argv[1:3]
    with open(policy_path) as f:
        policy = f.readline().strip()
    with open(messages_path, "rb") as f:
        lines = [line.rstrip(b"\n") for _, line in zip(range(MESSAGES), f)]
    dicts = [json.loads(line) for line in lines]
    aws_dicts = [aws(d) for d in dicts]
    attributes = filtervm.compile("sns", policy)
    body = filtervm.compile("sns", policy, {"scope": "MessageBody"})
    subscriptions = filtervm.SubscriptionSet()
    subscriptions.add("one", attributes)
    n = len(lines)

    def py_attributes():
        matches = attributes.matches
        return sum(matches(attributes=d) for d in dicts)

    def py_attributes_loop():
        # The same calls as a broker makes them: a plain loop counting the matches (no
        # generator resumed per message, no `sum`).
        matches = attributes.matches
        count = 0
        for d in dicts:
            if matches(attributes=d):
                count += 1
        return count

    def py_attributes_aws():
        matches = attributes.matches
        return sum(matches(attributes=d) for d in aws_dicts)

    def py_set_attributes():
        matching = subscriptions.matching
        return sum(len(matching(attributes=d)) for d in dicts)

    def py_body():
        matches = body.matches
        return sum(matches(body=line) for line in lines)

    report("py_attributes", n, py_attributes)
    report("py_attributes_loop", n, py_attributes_loop)
    report("py_attributes_aws", n, py_attributes_aws)
    report("py_set_attributes", n, py_set_attributes)
    report("py_body", n, py_body)
    if "FILTERVM_ROUTE" not in os.environ:
        print(f"messages: {n}")
        print(f"matches_per_round: {py_attributes()}")


if __name__ == "__main__":
    main()

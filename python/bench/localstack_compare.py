"""filtervm against LocalStack's Python SNS filter matcher, on the same random SNS cases, in one
process: agreement and time per message.

    pip install ./python "localstack-core[base-runtime]"     # LocalStack: this script only
    cargo build --release -p filtervm-conformance            # the spec oracle (optional)
    python python/bench/localstack_compare.py --cases 20000 \\
        --reference target/release/filtervm-conformance

Cases are random SNS policies in attribute scope (1-3 keys; exact strings and numbers, prefix,
suffix, equals-ignore-case, anything-but in its forms, numeric ranges, exists, cidr, wildcard,
$or) and random messages (String, Number, String.Array and Binary attributes), seeded. Both
engines get the policy parsed once (filtervm compiles it, LocalStack keeps the dict) and each
message in the AWS form {"name": {"DataType": T, "StringValue": V}}, which both take as it is.

Which answer is the spec's: with --reference, every case is written as a conformance vector
expecting LocalStack's verdict and run through filtervm's conformance runner, which checks it
against the VM and the reference interpreter (the slow, obvious evaluator of the spec that
shares no code with the VM). Cases where the reference agrees with LocalStack are the cases
where "LocalStack follows the spec"; the script reports filtervm's agreement with LocalStack on
those (it should be 100%) and LocalStack's agreement with the spec overall, with examples.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter

import filtervm

NAMES = ["event", "env", "amount", "region", "tags", "ip", "count"]
STRINGS = ["order.paid", "order.new", "Order.Paid", "user.login", "eu-west-1", "us-east-1",
           "prod", "PROD", "", "ab", "a.b.c"]
NUMBERS = [0, 1, 5, 10.5, 100, -3, 1000, 99.99, 1e-3, 250]
IPS = ["10.0.0.7", "10.0.1.7", "192.168.1.1", "2001:db8::1", "not-an-ip"]


def condition(r: random.Random, name: str):
    """One condition of a key's list."""
    if name == "ip" and r.random() < 0.6:
        return {"cidr": r.choice(["10.0.0.0/24", "10.0.0.0/8", "192.168.0.0/16", "2001:db8::/32"])}
    kind = r.choice(["str", "str", "num", "prefix", "suffix", "eic", "but", "numeric",
                     "numeric", "exists", "wildcard"])
    s = r.choice([x for x in STRINGS if x])
    if kind == "str":
        return r.choice(STRINGS[:-3] + ["ab"])
    if kind == "num":
        return r.choice(NUMBERS)
    if kind == "prefix":
        return {"prefix": s[: r.randint(1, len(s))]}
    if kind == "suffix":
        return {"suffix": s[-r.randint(1, len(s)):]}
    if kind == "eic":
        return {"equals-ignore-case": s}
    if kind == "but":
        form = r.choice(["list", "one", "num", "prefix"])
        if form == "list":
            return {"anything-but": r.sample([x for x in STRINGS if x], 2)}
        if form == "one":
            return {"anything-but": s}
        if form == "num":
            return {"anything-but": [r.choice(NUMBERS)]}
        return {"anything-but": {"prefix": s[:2]}}
    if kind == "numeric":
        form = r.choice(["gt", "range", "eq", "le"])
        a, b = sorted(r.sample(NUMBERS, 2))
        if form == "gt":
            return {"numeric": [r.choice([">", ">="]), a]}
        if form == "le":
            return {"numeric": [r.choice(["<", "<="]), b]}
        if form == "eq":
            return {"numeric": ["=", a]}
        return {"numeric": [">=", a, "<", b] if a < b else [">", a]}
    if kind == "exists":
        return {"exists": r.random() < 0.5}
    return {"wildcard": r.choice(["order.*", "*paid", "*.*", "o*r.p*"])}


def policy(r: random.Random) -> dict:
    keys = r.sample(NAMES, r.randint(1, 3))
    out = {k: [condition(r, k) for _ in range(r.randint(1, 2))] for k in keys}
    if r.random() < 0.1 and len(keys) >= 2:
        a, b = keys[0], keys[1]
        out = {"$or": [{a: out[a]}, {b: out[b]}], **{k: v for k, v in out.items() if k not in (a, b)}}
    return out


def attribute(r: random.Random, name: str) -> dict:
    kind = r.choices(["String", "Number", "String.Array", "Binary"], [5, 4, 2, 1])[0]
    if kind == "Binary":
        return {"DataType": "Binary", "BinaryValue": b"\x00\x01"}
    if name == "ip" and kind != "Number":
        return {"DataType": "String", "StringValue": r.choice(IPS)}
    if kind == "String":
        return {"DataType": "String", "StringValue": r.choice(STRINGS)}
    if kind == "Number":
        return {"DataType": "Number", "StringValue": str(r.choice(NUMBERS))}
    items = [r.choice(STRINGS + NUMBERS) for _ in range(r.randint(1, 3))]
    return {"DataType": "String.Array", "StringValue": json.dumps(items)}


def message(r: random.Random) -> dict:
    return {n: attribute(r, n) for n in r.sample(NAMES, r.randint(0, 5))}


def vector_message(attrs: dict) -> dict:
    """The conformance vector shape of an AWS-form message."""
    out = {}
    for name, a in attrs.items():
        value = a.get("StringValue")
        if value is None:  # Binary: the vector shape carries text
            value = "AAE="
        out[name] = {"Type": a["DataType"], "Value": value}
    return {"attributes": out}


def timed(run, n: int) -> float:
    """The median of 5 runs of `run` (one pass over the cases), in ns per message."""
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1e9 / n)
    samples.sort()
    return samples[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--reference", help="filtervm-conformance binary (the spec oracle)")
    parser.add_argument("--examples", type=int, default=3, help="disagreements shown per kind")
    parser.add_argument("--topics", default="10,100,1000",
                        help="topic sizes: subscriptions matched per published message")
    parser.add_argument("--topic-messages", type=int, default=200)
    parser.add_argument("--only", choices=["none", "filtervm", "localstack"],
                        help="build the cases, run one engine over them once, untimed, and stop "
                             "(for valgrind --tool=callgrind: subtract the count of `none`)")
    args = parser.parse_args()

    from localstack.services.sns.filter import SubscriptionFilter

    r = random.Random(args.seed)
    cases = []
    rejected = 0
    while len(cases) < args.cases:
        p = policy(r)
        try:
            f = filtervm.compile("sns", p)
        except filtervm.PolicyError:
            rejected += 1  # e.g. more than 150 combinations: not a case
            continue
        cases.append((p, f, message(r)))

    ls = SubscriptionFilter()
    if args.only:
        for p, f, m in cases:
            if args.only == "filtervm":
                f.matches(attributes=m)
            elif args.only == "localstack":
                try:
                    ls.check_filter_policy_on_message_attributes(p, m)
                except Exception:  # noqa: BLE001
                    pass
        return
    ours, theirs, crashed = [], [], 0
    for p, f, m in cases:
        ours.append(f.matches(attributes=m))
        try:
            theirs.append(bool(ls.check_filter_policy_on_message_attributes(p, m)))
        except Exception:  # noqa: BLE001 - LocalStack raising on a valid case is a disagreement
            theirs.append(None)
            crashed += 1

    def run_filtervm():
        for _, f, m in cases:
            f.matches(attributes=m)

    def run_localstack():
        check = ls.check_filter_policy_on_message_attributes
        for p, _, m in cases:
            try:
                check(p, m)
            except Exception:  # noqa: BLE001
                pass

    n = len(cases)
    filtervm_ns = timed(run_filtervm, n)
    localstack_ns = timed(run_localstack, n)
    agree = sum(a == b for a, b in zip(ours, theirs))
    print(f"cases: {n} (seed {args.seed}; {rejected} generated policies rejected by filtervm, "
          f"not cases)")
    print(f"localstack_raised: {crashed}")
    print(f"agreement_all: {agree / n:.4f} ({agree}/{n})")
    print(f"filtervm_ns_per_message: {filtervm_ns:.0f}")
    print(f"localstack_ns_per_message: {localstack_ns:.0f}")
    print(f"speedup: {localstack_ns / filtervm_ns:.1f}x")

    # A topic of N subscriptions: every published message is checked against each of them
    # (LocalStack: one check per subscription; filtervm: one SubscriptionSet.matching).
    for size in [int(x) for x in args.topics.split(",") if x]:
        subs = cases[:size]
        topic = filtervm.SubscriptionSet()
        for i, (_, f, _) in enumerate(subs):
            topic.add(i, f)
        published = [m for _, _, m in cases[size: size + args.topic_messages]] or [
            m for _, _, m in cases[: args.topic_messages]]
        differs = 0
        for m in published:
            want = {i for i, (_, f, _) in enumerate(subs) if f.matches(attributes=m)}
            if set(topic.matching(attributes=m)) != want:
                differs += 1

        def fan_out_filtervm():
            for m in published:
                topic.matching(attributes=m)

        def fan_out_localstack():
            check = ls.check_filter_policy_on_message_attributes
            for m in published:
                for p, _, _ in subs:
                    try:
                        check(p, m)
                    except Exception:  # noqa: BLE001
                        pass

        set_ns = timed(fan_out_filtervm, len(published))
        ls_ns = timed(fan_out_localstack, len(published))
        print(f"topic_{size}: filtervm_set_ns_per_message {set_ns:.0f}, localstack_ns_per_message "
              f"{ls_ns:.0f}, speedup {ls_ns / set_ns:.1f}x, set_differs_from_filters {differs}")

    if not args.reference:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cases.jsonl")
        with open(path, "w") as out:
            for i, ((p, _, m), verdict) in enumerate(zip(cases, theirs)):
                expect = "match" if verdict else "no-match"
                if verdict is None:
                    expect = "match" if not ours[i] else "no-match"  # neither: mark a failure
                out.write(json.dumps({"id": f"case-{i}", "dialect": "sns", "policy": p,
                                      "message": vector_message(m), "expect": expect}) + "\n")
        run = subprocess.run([args.reference, path], capture_output=True, text=True)
    failures = {}
    for line in run.stdout.splitlines():
        m = re.match(r"FAIL case-(\d+): (.*)", line)
        if m:
            failures[int(m.group(1))] = m.group(2)
    kinds = Counter()
    examples = {}
    for i, why in failures.items():
        if "from both the VM and the reference" in why:
            kind = "localstack_deviates_from_spec"
        elif "reference agrees with the vector" in why:
            kind = "filtervm_deviates_from_spec"
        elif "VM agrees with the vector" in why:
            kind = "reference_disagrees_with_both"
        else:
            kind = "other: " + why
        kinds[kind] += 1
        examples.setdefault(kind, []).append(i)
    follows = [i for i in range(n) if i not in failures and theirs[i] is not None]
    agree_follows = sum(ours[i] == theirs[i] for i in follows)
    print(f"localstack_follows_spec: {len(follows) / n:.4f} ({len(follows)}/{n})")
    print(f"agreement_where_localstack_follows_spec: "
          f"{agree_follows / max(len(follows), 1):.4f} ({agree_follows}/{len(follows)})")
    for kind, count in kinds.most_common():
        print(f"{kind}: {count}")
        for i in examples[kind][: args.examples]:
            p, _, m = cases[i]
            print(f"    policy {json.dumps(p)} message {json.dumps(vector_message(m)['attributes'])}"
                  f" -> filtervm {ours[i]}, localstack {theirs[i]}")


if __name__ == "__main__":
    sys.exit(main())

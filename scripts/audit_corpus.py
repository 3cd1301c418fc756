#!/usr/bin/env python3
"""Writes N subscriptions (default 10,000) in the format `filtervm route` and `filtervm audit`
read, for the audit figure in BENCHMARKS.md: mixed dialects (sns on attributes and on the body,
basaltic, eventgrid, stream, expr), 1-5 keys each drawn from small pools so that some
subscriptions are equivalent (the same sets written in another order, in another dialect), some
never match (disjoint ranges) and some match everything (`{}`).

    python3 scripts/audit_corpus.py 10000 7 > /tmp/subs10k.ndjson
"""
import json
import random
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
KEYS = ["store", "event", "region", "tier", "channel", "amount", "size", "source"]
WORDS = ["acme", "globex", "initech", "order.created", "order.paid", "eu-west-1", "us-east-1",
         "gold", "silver", "web", "mobile", "a", "b", "c"]


def sns_condition(key):
    kind = rng.randrange(6)
    if kind == 0:
        return [rng.choice(WORDS) for _ in range(rng.randint(1, 3))]
    if kind == 1:
        return [{"prefix": rng.choice(WORDS)[:rng.randint(1, 4)]}]
    if kind == 2:
        lo = rng.randrange(0, 500, 50)
        return [{"numeric": [">=", lo, "<", lo + rng.randrange(50, 500, 50)]}]
    if kind == 3:
        return [{"anything-but": [rng.choice(WORDS)]}]
    if kind == 4:
        return [{"exists": rng.random() < 0.5}]
    return [rng.choice(WORDS), {"prefix": rng.choice(WORDS)[:2]}]


def sns_policy():
    keys = rng.sample(KEYS, rng.randint(1, 5))
    return {k: sns_condition(k) for k in keys}


def basaltic_policy():
    keys = rng.sample(KEYS, rng.randint(1, 4))
    return {k: [rng.choice(WORDS) for _ in range(rng.randint(1, 3))] for k in keys}


def eventgrid_policy():
    filters = []
    for k in rng.sample(KEYS, rng.randint(1, 3)):
        if rng.random() < 0.5:
            filters.append({"operatorType": "StringIn", "key": "data." + k,
                            "values": rng.sample(WORDS, rng.randint(1, 3))})
        else:
            lo = rng.randrange(0, 500, 50)
            filters.append({"operatorType": "NumberInRange", "key": "data." + k,
                            "values": [[lo, lo + 100]]})
    policy = {"advancedFilters": filters}
    if rng.random() < 0.3:
        policy["includedEventTypes"] = rng.sample(["Order.Created", "Order.Paid"], 1)
    return policy


def stream_policy():
    clauses = []
    for k in rng.sample(KEYS, rng.randint(1, 3)):
        if rng.random() < 0.5:
            clauses.append({"op": "in", "header": k, "values": rng.sample(WORDS, rng.randint(1, 3))})
        else:
            clauses.append({"op": "exists", "header": k})
    return {"groups": [clauses]}


def expr_policy():
    conds = [{"key": k, "op": "in", "value": rng.sample(WORDS, rng.randint(1, 3))}
             for k in rng.sample(KEYS, rng.randint(1, 3))]
    return conds[0] if len(conds) == 1 else {"op": "AND", "exp": conds}


def subscription(i):
    r = rng.random()
    if r < 0.01:
        return {"dialect": "sns", "policy": {}}
    if r < 0.02:
        return {"dialect": "eventgrid", "policy": {"advancedFilters": [
            {"operatorType": "NumberGreaterThan", "key": "data.amount", "value": 10},
            {"operatorType": "NumberLessThan", "key": "data.amount", "value": 5}]}}
    if r < 0.45:
        return {"dialect": "sns", "policy": sns_policy()}
    if r < 0.55:
        return {"dialect": "sns", "policy": sns_policy(), "options": {"scope": "MessageBody"}}
    if r < 0.65:
        return {"dialect": "basaltic", "policy": basaltic_policy()}
    if r < 0.8:
        return {"dialect": "eventgrid", "policy": eventgrid_policy()}
    if r < 0.9:
        return {"dialect": "stream", "policy": stream_policy()}
    return {"dialect": "expr", "policy": expr_policy()}


for i in range(N):
    s = subscription(i)
    s["id"] = i
    print(json.dumps(s))

"""Sets and filters used from several Python threads, and the GIL released while a set
matches."""

from __future__ import annotations

import json
import sys
import threading
import time

import filtervm


def test_many_threads_match_while_another_adds_and_removes():
    s = filtervm.SubscriptionSet()
    for n in range(200):
        s.add(("n", n), filtervm.compile("sns", {"n": [{"numeric": ["=", n]}]}))
    s.add("all", filtervm.compile("sns", {"n": [{"exists": True}]}))
    single = filtervm.compile("sns", {"n": [{"numeric": [">=", 100]}]})
    errors = []
    stop = threading.Event()

    def matcher(seed):
        try:
            for i in range(2000):
                n = (seed * 7919 + i) % 200
                message = json.dumps({"attributes": {"n": {"Type": "Number", "Value": str(n)}}})
                got = s.matching(message.encode())
                if ("n", n) not in got or "all" not in got:
                    errors.append((n, got))
                if single.matches(attributes={"n": n}) != (n >= 100):
                    errors.append(("single", n))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def churner():
        f = filtervm.compile("sns", {"n": [{"numeric": [">", -1]}]})
        k = 0
        while not stop.is_set():
            s.add(("churn", k), f)
            assert s.remove(("churn", k))
            k += 1

    threads = [threading.Thread(target=matcher, args=(t,)) for t in range(4)]
    churn = threading.Thread(target=churner)
    churn.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    churn.join()
    assert errors == []
    assert len(s) == 201
    assert not any(isinstance(i, tuple) and i[0] == "churn" for i in s.matching(attributes={"n": 5}))


def ticks_during(call) -> int:
    """How many times another Python thread ran while `call` ran. The switch interval is made
    very long, so that thread runs only when the GIL is released on purpose (it gives the GIL
    back itself after each tick): a call that holds the GIL throughout sees none."""
    ticks = 0
    running = threading.Event()
    done = threading.Event()

    def counter():
        nonlocal ticks
        running.set()
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(100)
    try:
        t = threading.Thread(target=counter)
        t.start()
        running.wait()
        before = ticks
        call()
        during = ticks - before
        done.set()
        t.join()
    finally:
        sys.setswitchinterval(old)
    return during


def test_the_gil_is_released_while_a_set_matches_bytes():
    s = filtervm.SubscriptionSet()
    s.add("big", filtervm.compile("sns", {"a": [{"prefix": "y"}]}, {"scope": "MessageBody"}))
    # A large body: reading it takes long enough for the other thread to run meanwhile.
    body = ('{"pad": [' + '"x",' * 1_000_000 + '"x"], "a": "yes"}').encode()
    # The control: json.loads holds the GIL, so the other thread does not run.
    assert ticks_during(lambda: json.loads(body)) == 0
    got = []
    assert ticks_during(lambda: got.extend(s.matching(body=body))) > 10
    assert got == ["big"]

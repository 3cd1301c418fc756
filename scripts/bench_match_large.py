#!/usr/bin/env python3
"""`filtervm match` on a large NDJSON file against a quamina-rs line filter (BENCHMARKS.md,
"filtervm match on a large file").

The file is attrs.jsonl (bench/workloads.py) repeated until it holds at least 100 MB; the policy is
pol3c in SNS body scope, so every line is a raw message body. Each engine prints the matching lines
(`filtervm match --only-matching`, `bench/examples/quamina_filter.rs`), output to a file; the
outputs must be identical. Runs: quamina, `filtervm --threads 1` and `filtervm --threads 1
--trusted-input` pinned to one core (`taskset -c 0`), `filtervm --threads 2` on two (`taskset -c 0,1`), each ROUNDS times under
`/usr/bin/time -v`; prints the median wall time, the median user and system CPU seconds and the
largest peak RSS of each, as a Markdown table.

    cargo build --release -p filtervm-cli
    cargo build --release --manifest-path bench/Cargo.toml --example quamina_filter
    python3 scripts/bench_match_large.py [--rounds 3] [--dir /tmp/filtervm-large]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def data_file(name):
    data = os.environ.get("FILTERVM_BENCH_DATA", os.path.join(ROOT, "bench-data"))
    path = os.path.join(data, name)
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "workloads.py"), data], check=True)
    return path


def large_file(directory, min_bytes):
    """attrs.jsonl repeated until the file holds at least `min_bytes`."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "attrs-large.jsonl")
    source = data_file("attrs.jsonl")
    size = os.path.getsize(source)
    copies = -(-min_bytes // size)
    if not os.path.exists(path) or os.path.getsize(path) != copies * size:
        with open(path, "wb") as out, open(source, "rb") as src:
            chunk = src.read()
            for _ in range(copies):
                out.write(chunk)
    return path


def timed(command, output):
    """Runs `command` under /usr/bin/time -v, stdout to `output`: (wall, user, sys, rss_kb)."""
    with open(output, "wb") as out:
        run = subprocess.run(["/usr/bin/time", "-v"] + command, stdout=out, stderr=subprocess.PIPE, check=True)
    text = run.stderr.decode()

    def field(name):
        return re.search(re.escape(name) + r": (.*)", text).group(1).strip()

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    return (wall, float(field("User time (seconds)")), float(field("System time (seconds)")),
            int(field("Maximum resident set size (kbytes)")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/filtervm-large")
    parser.add_argument("--min-mb", type=int, default=100)
    args = parser.parse_args()

    path = large_file(args.dir, args.min_mb * 1_000_000)
    policy = os.path.join(args.dir, "pol3c.json")
    shutil.copy(data_file("pol3c.jsonl"), policy)
    filtervm = os.path.join(ROOT, "target", "release", "filtervm")
    quamina = os.path.join(ROOT, "bench", "target", "release", "examples", "quamina_filter")
    match = [filtervm, "match", "-d", "sns", "--options", '{"scope":"MessageBody"}', "-p", policy, "-o"]
    runs = [
        ("quamina-rs line filter, 1 core", ["taskset", "-c", "0", quamina, policy, path]),
        ("`filtervm match --threads 1`, 1 core", ["taskset", "-c", "0"] + match + ["--threads", "1", path]),
        ("`filtervm match --threads 1 --trusted-input`, 1 core",
         ["taskset", "-c", "0"] + match + ["--threads", "1", "--trusted-input", path]),
        ("`filtervm match --threads 2`, 2 cores", ["taskset", "-c", "0,1"] + match + ["--threads", "2", path]),
    ]
    lines = sum(1 for _ in open(path, "rb"))
    results = {}
    outputs = []
    for round_ in range(args.rounds):
        for name, command in runs:
            output = os.path.join(args.dir, f"out-{len(results.get(name, []))}-{runs.index((name, command))}.ndjson")
            results.setdefault(name, []).append(timed(command, output))
            if round_ == 0:
                outputs.append(output)
    same = all(open(o, "rb").read() == open(outputs[0], "rb").read() for o in outputs)
    print(f"{os.path.getsize(path) / 1e6:.1f} MB, {lines} lines; outputs identical: {same}; "
          f"load {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print()
    print("| run | wall (median) | user CPU (median) | system CPU | peak RSS | lines per second (wall) | CPU per line |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, _ in runs:
        rows = results[name]
        wall = statistics.median(r[0] for r in rows)
        user = statistics.median(r[1] for r in rows)
        system = statistics.median(r[2] for r in rows)
        rss = max(r[3] for r in rows)
        print(f"| {name} | {wall:.2f} s | {user:.2f} s | {system:.2f} s | {rss / 1024:.1f} MB | "
              f"{lines / wall / 1e6:.2f} M | {(user + system) / lines * 1e9:.0f} ns |")
    if not same:
        sys.exit("the outputs differ")


if __name__ == "__main__":
    main()

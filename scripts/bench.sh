#!/usr/bin/env bash
# Runs every benchmark and rewrites BENCHMARKS.md (see that file): every figure the report prints
# comes from this run's outputs (sections measured by hand are carried over, marked as such).
# Needs python3, valgrind and `cargo install iai-callgrind-runner --version 0.16.1 --locked`.
# About 20 minutes.
#
#   scripts/bench.sh            everything
#   SKIP_IAI=1 scripts/bench.sh wall clock and CLI only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/bench/target/report"
mkdir -p "$out"
# Only this run's outputs: a figure the run did not measure is printed as "—", never carried over.
rm -rf "$out"/*.txt "$out"/*.jsonl "$out/criterion" bench/target/criterion
export FILTERVM_BENCH_DATA="${FILTERVM_BENCH_DATA:-$root/bench-data}"

if [ ! -f "$FILTERVM_BENCH_DATA/pol10k_num.jsonl" ]; then
  echo "== generating workloads into $FILTERVM_BENCH_DATA"
  python3 bench/workloads.py "$FILTERVM_BENCH_DATA"
fi

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)" >"$out/machine.txt"

if [ -z "${SKIP_IAI:-}" ]; then
  echo "== instruction counts (iai-callgrind)"
  cargo bench --manifest-path bench/Cargo.toml --bench instructions 2>&1 | tee "$out/iai.txt"
fi

echo "== wall clock (criterion)"
cargo bench --manifest-path bench/Cargo.toml --bench wall 2>&1 | tee "$out/wall.txt"
echo "== the JSON reader against serde_json, sonic-rs and simd-json (criterion)"
cargo bench --manifest-path bench/Cargo.toml --bench json 2>&1 | tee "$out/json.txt"
rm -rf "$out/criterion"
cp -r bench/target/criterion "$out/criterion"

echo "== memory of a set (counting allocator)"
cargo run --release -q --manifest-path bench/Cargo.toml --example set_memory | tee "$out/set_memory.txt"

echo "== filtervm bench on the 10k sets (with the reference interpreter beside it)"
cargo build --release -q -p filtervm-cli -p filtervm-conformance
head -n 1000 "$FILTERVM_BENCH_DATA/attrs.jsonl" >"$out/messages-1k.jsonl"
for w in pol10k_exact pol10k_num pol10k_mixed; do
  target/release/filtervm bench --dialect sns --policies "$FILTERVM_BENCH_DATA/$w.jsonl" \
    --messages "$out/messages-1k.jsonl" --seconds 3 | tee "$out/cli-$w.txt"
done
for w in pol10k_exact pol10k_num; do
  target/release/filtervm bench --dialect sns --options '{"scope":"MessageBody"}' --from-bytes \
    --policies "$FILTERVM_BENCH_DATA/$w.jsonl" --messages "$out/messages-1k.jsonl" --seconds 3 \
    | tee "$out/cli-$w-body.txt"
done

echo "$(cut -d' ' -f1-3 /proc/loadavg)" >"$out/machine-end.txt"
python3 scripts/bench_report.py "$out" BENCHMARKS.md
echo "== wrote BENCHMARKS.md"

#!/usr/bin/env bash
# Instructions per message through Rust, the C ABI and Python, on the same policy and messages
# (BENCHMARKS.md, "Python and C bindings"): each route of capi/examples/per_message.rs,
# capi/bench/per_message.c and python/bench/per_message.py runs once under callgrind over the
# first 1,000 lines of the messages file, and the run of the route `none` (reading the files and
# compiling, nothing matched) is subtracted.
#
#   python3 bench/workloads.py bench-data
#   PYTHON=target/ci-python-venv/bin/python bash capi/bench/callgrind.sh bench-data
#
# PYTHON is an interpreter with the package installed (`pip install ./python`); without it the
# Python routes are skipped. CARGO_TARGET_DIR and CARGO_PROFILE_RELEASE_* (cargo's own) build
# the Rust and C routes elsewhere or with other release settings, as run.sh does.
set -euo pipefail
export PYTHONHASHSEED=0 # the same dict layouts in every run
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${1:?usage: callgrind.sh BENCH_DATA_DIR}"
data="$(cd "$data" && pwd)"
policy="$data/pol1c.jsonl"
messages="$data/attrs1k.jsonl"
head -n 1000 "$data/attrs.jsonl" >"$messages"
lines=$(wc -l <"$messages")

cargo build --release -q --manifest-path "$root/Cargo.toml" -p filtervm-capi --example per_message
bash "$root/capi/bench/run.sh" "$policy" "$messages" >/dev/null
target="${CARGO_TARGET_DIR:-$root/target}"
rust="$target/release/examples/per_message"
c="$target/capi-bench/per_message"

# Total instructions of one run of `route` (`FILTERVM_ROUTE=route`).
instructions() {
  local route=$1
  shift
  FILTERVM_ROUTE=$route valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# Prints `route: instructions per message` for each route of one program.
per_message() {
  local routes=$1
  shift
  local none
  none=$(instructions none "$@")
  for route in $routes; do
    local total
    total=$(instructions "$route" "$@")
    echo "$route: $(( (total - none) / lines ))"
  done
}

per_message "rust_library_bound rust_library_borrowed rust_library_bytes rust_library_built rust_adapter_attributes rust_library_body rust_adapter_body" \
  "$rust" "$policy" "$messages"
per_message "c_attributes c_set_attributes c_body" "$c" "$policy" "$messages"
if [ -n "${PYTHON:-}" ]; then
  per_message "py_attributes py_attributes_loop py_attributes_aws py_set_attributes py_body" \
    "$PYTHON" "$root/python/bench/per_message.py" "$policy" "$messages"
fi

#!/usr/bin/env bash
# Instructions per message through Rust and the Go binding (cgo), on the same policies and
# messages (BENCHMARKS.md, "Go"): each route of capi/examples/per_message.rs and
# bindings/go/bench/per_message runs once under callgrind over the first 1,000 lines of the
# messages file (10,000 for Go, whose runtime threads add a few hundred thousand instructions
# that vary from run to run), and the run of the route `none` (reading the files and compiling,
# nothing matched) is subtracted.
#
#   python3 bench/workloads.py bench-data
#   bash bindings/go/bench/callgrind.sh bench-data
#
# Go's runtime preempts goroutines with signals, which callgrind cannot follow:
# GODEBUG=asyncpreemptoff=1 turns that off. GOGC=off: no collection runs (its timing varies from
# run to run), so the Go figures count the allocations but not their collection; the wall-clock
# figures (go run ./bench/per_message) include it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
data="${1:?usage: callgrind.sh BENCH_DATA_DIR}"
data="$(cd "$data" && pwd)"
policy="$data/pol1c.jsonl"
set_policies="$data/pol10k_mixed.jsonl"
messages="$data/attrs1k.jsonl"
head -n 1000 "$data/attrs.jsonl" >"$messages"
messages_go="$data/attrs10k.jsonl"
head -n 10000 "$data/attrs.jsonl" >"$messages_go"

cargo build --release -q --manifest-path "$root/Cargo.toml" -p filtervm-capi --example per_message
rust="$root/target/release/examples/per_message"
go_bin="$root/target/go-bench/per_message"
mkdir -p "$root/target/go-bench"
(cd "$root/bindings/go" && GOFLAGS=-mod=mod GOPROXY=off go build -o "$go_bin" ./bench/per_message)

instructions() {
  local route=$1
  shift
  GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 FILTERVM_ROUTE=$route valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

per_message() {
  local routes=$1 lines=$2
  shift 2
  local none
  none=$(instructions none "$@")
  for route in $routes; do
    local total
    total=$(instructions "$route" "$@")
    echo "$route: $(( (total - none) / lines ))"
  done
}

per_message "rust_library_borrowed rust_library_bytes rust_library_body rust_library_set1k" 1000 \
  "$rust" "$policy" "$messages" "$set_policies"
per_message "go_cgo_call_x10 go_attributes go_body go_set_attributes go_set1k_attributes" 10000 \
  "$go_bin" "$policy" "$messages_go" "$set_policies"

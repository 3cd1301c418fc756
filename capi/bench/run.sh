#!/usr/bin/env bash
# Builds the C ABI (release) and capi/bench/per_message.c (-O2, static library) and runs it:
#   bash capi/bench/run.sh bench-data/pol1c.jsonl bench-data/attrs.jsonl
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# CARGO_TARGET_DIR and CARGO_PROFILE_RELEASE_* are cargo's own: set them to build elsewhere or
# with other release settings (BENCHMARKS.md, "Every route built alike").
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --manifest-path "$root/Cargo.toml" -p filtervm-capi >&2
mkdir -p "$target/capi-bench"
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$root/capi/include" "$root/capi/bench/per_message.c" \
  "$target/release/libfiltervm_capi.a" -lpthread -ldl -lm -o "$target/capi-bench/per_message"
"$target/capi-bench/per_message" "$@"

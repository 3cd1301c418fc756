#!/usr/bin/env bash
# Builds the C ABI (release) and capi/bench/per_message.c (-O2, static library) and runs it:
#   bash capi/bench/run.sh bench-data/pol1c.jsonl bench-data/attrs.jsonl
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cargo build --release --manifest-path "$root/Cargo.toml" -p filtervm-capi >&2
mkdir -p "$root/target/capi-bench"
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$root/capi/include" "$root/capi/bench/per_message.c" \
  "$root/target/release/libfiltervm_capi.a" -lpthread -ldl -lm -o "$root/target/capi-bench/per_message"
"$root/target/capi-bench/per_message" "$@"

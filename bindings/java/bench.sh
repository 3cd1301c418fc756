#!/usr/bin/env bash
# The Java binding's cost per message against the Rust library on the same messages
# (BENCHMARKS.md, "Java"): examples/per_message.rs, then java/bench PerMessage.java.
#
#   python3 bench/workloads.py bench-data
#   bash bindings/java/bench.sh bench-data
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="$(cd "${1:?usage: bench.sh BENCH_DATA_DIR}" && pwd)"
args=("$data/pol1c.jsonl" "$data/pol10k.jsonl" "$data/attrs.jsonl")
cargo run --release --quiet --manifest-path "$here/Cargo.toml" --example per_message -- "${args[@]}"
jar_file=$(bash "$here/build.sh")
classes="$here/target/java/bench-classes"
rm -rf "$classes" && mkdir -p "$classes"
javac --release 17 -cp "$jar_file" -d "$classes" "$here/java/test/dev/filtervm/Json.java" \
  "$here/java/bench/dev/filtervm/PerMessage.java"
java -Xms512m -Xmx512m -cp "$jar_file:$classes" dev.filtervm.PerMessage "${args[@]}"

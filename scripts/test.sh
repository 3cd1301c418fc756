#!/usr/bin/env bash
# The whole test suite: formatting, lints, documentation links, unit/integration/doc tests, and
# every conformance vector through both the VM and the reference interpreter. Run from anywhere;
# exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

# Dialects whose vectors the runner checks (each file runs through the VM and the reference).
DIALECTS="${FILTERVM_DIALECTS:-basaltic eventbridge eventgrid expr sns stream}"

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== layers: no files import each other in a circle (scripts/check_layers.py)"
python3 scripts/check_layers.py
echo "== cargo doc (warnings denied: every intra-doc link resolves)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace
echo "== cargo test"
cargo test --workspace
echo "== conformance vectors ($DIALECTS)"
files=()
for d in $DIALECTS; do
  files+=("conformance/vectors/$d.jsonl")
  if [ -f "conformance/vectors/local/$d.jsonl" ]; then files+=("conformance/vectors/local/$d.jsonl"); fi
  if [ -f "conformance/vectors/local/fuzz-$d.jsonl" ]; then files+=("conformance/vectors/local/fuzz-$d.jsonl"); fi
done
cargo run --release -p filtervm-conformance -- "${files[@]}"

#!/usr/bin/env bash
# The Java binding's CI (called by .ci/run): installs the JDK and JUnit 5 from Debian when
# missing, checks the native crate (cargo fmt, clippy -D warnings, its Rust tests), builds the
# jar (build.sh), compiles and runs the README's Java snippet (examples/Quickstart.java), and runs
# the JUnit 5 tests (java/test): every conformance vector, the situations, threads, and a
# million create/close cycles without a leak.
#
#   bash bindings/java/ci.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
junit=/usr/share/java/junit-platform-console-standalone.jar
if ! command -v javac >/dev/null || ! command -v jar >/dev/null || [ ! -f "$junit" ]; then
  apt-get update -qq && apt-get install -y -qq default-jdk-headless junit5 >/dev/null
fi

echo "== bindings/java: cargo fmt --check, clippy -D warnings, cargo test"
cargo fmt --manifest-path "$here/Cargo.toml" -- --check
cargo clippy --manifest-path "$here/Cargo.toml" --all-targets --quiet -- -D warnings
# Release, so that its dependencies are the ones build.sh builds next (built once).
cargo test --manifest-path "$here/Cargo.toml" --release --quiet

echo "== bindings/java: build.sh (the jar)"
jar_file=$(bash "$here/build.sh")
out="$here/target/java"

echo "== bindings/java: the README's snippets (examples/*.java)"
# The README's Java section holds each example's text; each prints what its `// → ` comments say.
rm -rf "$out/example" && mkdir -p "$out/example"
for example in "$here"/examples/*.java; do
  python3 - "$root/README.md" "$example" <<'PY'
import sys
readme, example = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
assert "```java\n" + example + "```" in readme, f"README.md's Java snippet differs from {sys.argv[2]}"
PY
  javac --release 17 -Werror -cp "$jar_file" -d "$out/example" "$example"
  name=$(basename "$example" .java)
  got=$(java -cp "$jar_file:$out/example" "$name")
  want=$(sed -n 's|.*// → \(.*\)$|\1|p' "$example")
  echo "$name: $got"
  [ "$got" = "$want" ] || { echo "$name printed something else than its comments say:"; echo "$want"; exit 1; }
done

echo "== bindings/java: JUnit 5 (java/test)"
rm -rf "$out/test-classes" && mkdir -p "$out/test-classes"
javac --release 17 -Xlint:all -Xlint:-processing -Werror -cp "$jar_file:$junit" -d "$out/test-classes" \
  $(find "$here/java/test" "$here/java/bench" -name '*.java' | sort)
# A fixed, pre-touched heap: the leak test reads the process's resident memory, which then grows
# only with native memory (and the JIT's code).
java -Dfiltervm.root="$root" -Xms256m -Xmx256m -XX:+AlwaysPreTouch \
  -jar "$junit" --class-path "$jar_file:$out/test-classes" --select-package dev.filtervm \
  --disable-banner --details=summary --fail-if-no-tests ${JUNIT_ARGS:-}

#!/usr/bin/env bash
# The Go binding's CI (called by .ci/run; runs from anywhere): installs Debian's Go when it is
# missing, builds the C ABI's static library, then gofmt, go vet, go test (every conformance
# vector, the situations, the sets, no leak), go test -race (concurrent matching and updates),
# and the README's Go quick start: the README's snippet must be examples/quickstart/main.go
# verbatim and print what the README says it prints. Standard library only: no module proxy.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

if ! command -v go >/dev/null; then
  echo "== apt-get install golang-go"
  apt-get update -qq && apt-get install -y -qq golang-go >/dev/null
fi
go version

echo "== cargo build --release -p filtervm-capi (libfiltervm_capi.a)"
cargo build --release -p filtervm-capi
# A target directory elsewhere than target/ (CARGO_TARGET_DIR): the linker searches it too.
target_dir="${CARGO_TARGET_DIR:-$root/target}"
export CGO_LDFLAGS="-L$target_dir/release ${CGO_LDFLAGS:-}"
export CGO_ENABLED=1 GOFLAGS=-mod=mod GOPROXY=off

cd "$root/bindings/go"
echo "== gofmt -l, go vet"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted: $unformatted" >&2
  exit 1
fi
go vet ./...

echo "== go test"
go test -count=1 ./...
echo "== go test -race"
go test -race -count=1 ./...

echo "== the README's Go quick start (examples/quickstart)"
# The first ```go block after the "## Go" heading is the program; the ```text block after it
# is its output.
python3 - "$root/README.md" examples/quickstart/main.go <<'PY'
import re, subprocess, sys
readme, program = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2]
section = readme.split("\n## Go\n", 1)[1].split("\n## ", 1)[0]
code = re.search(r"```go\n(.*?)```", section, re.S).group(1)
output = re.search(r"```go\n.*?```.*?```text\n(.*?)```", section, re.S).group(1)
if code != open(program, encoding="utf-8").read():
    sys.exit(f"README.md's Go snippet differs from bindings/go/{program}")
ran = subprocess.run(["go", "run", "./examples/quickstart"], capture_output=True, text=True, check=True).stdout
if ran != output:
    sys.exit(f"the quick start printed:\n{ran}\nREADME.md says:\n{output}")
print("README's Go snippet: same text as examples/quickstart/main.go, prints what the README says")
PY

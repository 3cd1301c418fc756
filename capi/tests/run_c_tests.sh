#!/usr/bin/env bash
# Builds the C ABI and its C test program (capi/tests/c/test_capi.c) with the system `cc`, then
# runs the program under valgrind (memcheck: no invalid access, no leak, every thread) and, when
# the compiler supports them, built with AddressSanitizer + UndefinedBehaviorSanitizer (when `CI`
# is set, a compiler without them is a failure, not a skip). Run from anywhere; exits non-zero on
# any failure. Needs cc, valgrind and cargo.
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== cargo build -p filtervm-capi"
cargo build -p filtervm-capi
lib=target/debug/libfiltervm_capi.a
out=target/capi-test
mkdir -p "$out"

cflags=(-std=c11 -Wall -Wextra -Werror -pthread -g -O1 -Icapi/include)
libs=("$lib" -lpthread -ldl -lm)

echo "== cc test_capi.c (static library) + valgrind"
cc "${cflags[@]}" capi/tests/c/test_capi.c "${libs[@]}" -o "$out/test_capi"
valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
  --show-leak-kinds=definite,indirect "$out/test_capi"

echo "== cc test_capi.c (shared library)"
cc "${cflags[@]}" capi/tests/c/test_capi.c -Ltarget/debug -lfiltervm_capi -o "$out/test_capi_shared"
LD_LIBRARY_PATH=target/debug "$out/test_capi_shared"

# The sanitizers need the compiler's runtime libraries, which a minimal image may lack.
if echo 'int main(void){return 0;}' | cc -fsanitize=address,undefined -x c - -o "$out/probe" 2>/dev/null; then
  echo "== cc test_capi.c -fsanitize=address,undefined"
  cc "${cflags[@]}" -fsanitize=address,undefined -fno-omit-frame-pointer \
    capi/tests/c/test_capi.c "${libs[@]}" -o "$out/test_capi_asan"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 "$out/test_capi_asan"
elif [ -n "${CI:-}" ]; then
  echo "== sanitizers not available with this cc, and CI must run them: failing" >&2
  exit 1
else
  echo "== sanitizers not available with this cc: skipped (valgrind ran above; under CI this fails)"
fi

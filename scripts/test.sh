#!/usr/bin/env bash
# Builds tconv with warnings as errors and runs every test through ctest.
#   scripts/test.sh              the normal build (build/test)
#   scripts/test.sh --sanitize   the same suite under AddressSanitizer + UBSan (build/asan)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
build="$root/build/test"
extra=()
if [ "${1:-}" = "--sanitize" ]; then
    build="$root/build/asan"
    extra=(-DTCONV_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S "$root" -B "$build" -DTCONV_WERROR=ON "${extra[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure

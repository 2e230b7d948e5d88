#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined):
#   fuzz/build.sh [BUILD_DIR]        default: build/fuzz
# The library is built by the main CMake project in BUILD_DIR/lib with clang and the sanitizer
# flags (the normal build never needs clang); each target is then linked against its internal
# archive (libtconv_internal.a: the fuzzers call internal functions):
#   BUILD_DIR/fuzz_load_save  BUILD_DIR/fuzz_legalize_check  BUILD_DIR/fuzz_tensor_decode
#   BUILD_DIR/fuzz_plan_proof
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/build/fuzz}" && cd "${1:-$root/build/fuzz}" && pwd)
cc=${CC:-clang}
command -v "$cc" >/dev/null || { echo "fuzz/build.sh: needs clang (Debian: apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' |
    "$cc" -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
    echo "fuzz/build.sh: $cc cannot link libFuzzer (Debian: apt-get install libclang-rt-14-dev)" >&2
    exit 2
fi
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
flags="-g -O1 $san -fsanitize=fuzzer-no-link"
# the library's sources in fuzz/ubsan_ignore.txt get ASan only (why: that file)
cmake -S "$root" -B "$out/lib" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug \
    -DTCONV_BUILD_TESTS=OFF \
    -DCMAKE_C_FLAGS="$flags -fsanitize-ignorelist=$root/fuzz/ubsan_ignore.txt" >/dev/null
if ! cmake --build "$out/lib" --target tconv_internal -j"$(nproc)" >"$out/build.log" 2>&1; then
    tail -40 "$out/build.log" >&2
    exit 1
fi
protobuf_c=$(grep -E '^PROTOBUF_C_LIBRARY:' "$out/lib/CMakeCache.txt" | cut -d= -f2)
for target in fuzz_load_save fuzz_legalize_check fuzz_tensor_decode fuzz_plan_proof; do
    src="$root/fuzz/$target.c"
    bin="$out/$target"
    if [ "$bin" -nt "$src" ] && [ "$bin" -nt "$out/lib/libtconv_internal.a" ] && [ "$bin" -nt "$root/fuzz/fuzz_common.h" ]; then
        continue
    fi
    # shellcheck disable=SC2086
    "$cc" -std=c11 -D_POSIX_C_SOURCE=200809L $flags -fsanitize=fuzzer \
        -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -I"$root/src" -I"$root/include" -I"$out/lib/proto" -I"$root/fuzz" \
        "$src" "$out/lib/libtconv_internal.a" "$protobuf_c" -lpthread -lm -o "$bin"
done
echo "fuzz/build.sh: targets in $out"

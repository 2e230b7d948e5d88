#!/usr/bin/env bash
# The library as its users get it: a Release build installed with `cmake --install` into a fresh
# temporary prefix, then examples/compiler_pass built against that prefix only, once through
# find_package(tconv) and once through pkg-config (each against the shared and the static
# library), run on models/keras_decoder, and its output checked against the golden data with the
# installed tconv-run. Also checks the install layout, the soname, and that the shared and the
# static library both give their users only tconv_ symbols.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"

build="$root/build/install"
work=$(mktemp -d "${TMPDIR:-/tmp}/tconv-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
model="$root/models/keras_decoder/model.onnx"

fail() {
    echo "test-install: FAIL: $*" >&2
    exit 1
}
step() {
    echo "test-install: $*" >&2
}

step "build (Release) and install into $prefix"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTCONV_WERROR=ON -DTCONV_BUILD_TESTS=OFF \
    >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
cmake --install "$build" --prefix "$prefix" >/dev/null

step "layout"
for f in include/tconv/tconv.h include/tconv/status.h lib/libtconv.a lib/libtconv.so \
    lib/libtconv.so.0 lib/libtconv.so.0.1.0 lib/cmake/tconv/tconvConfig.cmake \
    lib/cmake/tconv/tconvConfigVersion.cmake lib/cmake/tconv/tconvTargets.cmake \
    lib/pkgconfig/tconv.pc bin/tconv-import bin/tconv-run; do
    [ -e "$prefix/$f" ] || fail "$f is not installed"
done
find "$prefix/include" -name '*.h' | grep -v '/include/tconv/' && fail "headers outside include/tconv"
soname=$(objdump -p "$prefix/lib/libtconv.so.0.1.0" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libtconv.so.0" ] || fail "soname is '$soname', expected libtconv.so.0"

step "exported symbols (nm -D --defined-only)"
foreign=$(nm -D --defined-only "$prefix/lib/libtconv.so" | awk '{print $NF}' | grep -v '^tconv_' || true)
[ -z "$foreign" ] || fail "symbols without the tconv_ prefix are exported: $(echo "$foreign" | tr '\n' ' ' | head -c 500)"
echo "test-install: $(nm -D --defined-only "$prefix/lib/libtconv.so" | wc -l) symbols, all tconv_" >&2

step "global symbols of the static library (nm -g --defined-only)"
static_syms=$(nm -g --defined-only "$prefix/lib/libtconv.a" | awk 'NF == 3 {print $3}')
foreign=$(echo "$static_syms" | grep -v '^tconv_' || true)
[ -z "$foreign" ] || fail "libtconv.a has global symbols without the tconv_ prefix: $(echo "$foreign" | tr '\n' ' ' | head -c 500)"
[ "$(echo "$static_syms" | sort)" = "$(nm -D --defined-only "$prefix/lib/libtconv.so" | awk '{print $NF}' | sed 's/@.*//' | sort)" ] ||
    fail "libtconv.a and libtconv.so give different symbols"
echo "test-install: $(echo "$static_syms" | wc -l) global symbols in libtconv.a, the same as libtconv.so" >&2

"$prefix/bin/tconv-import" --version >/dev/null || fail "installed tconv-import does not run"
"$prefix/bin/tconv-run" --version >/dev/null || fail "installed tconv-run does not run"

# Runs one build of the example and checks what it wrote against the golden data.
run_example() {
    local exe=$1 name=$2
    local out="$work/out-$name"
    mkdir -p "$out"
    "$exe" "$model" "$out/model.onnx" >"$out/log.txt" || {
        cat "$out/log.txt" >&2
        fail "$name: compiler_pass failed"
    }
    ln -s "$root/models/keras_decoder/test_data_set_0" "$out/test_data_set_0"
    "$prefix/bin/tconv-run" "$out" >/dev/null || fail "$name: the converted model fails its golden data"
    cmp -s "$out/model.onnx" "$work/out-cmake/model.onnx" ||
        fail "$name: wrote another model than the find_package build"
    step "$name: ok ($(grep -c '^  deconv' "$out/log.txt") ConvTranspose rewritten, check ok)"
}

step "example via find_package(tconv) (CMAKE_PREFIX_PATH)"
cmake -S "$root/examples/compiler_pass" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake" >/dev/null
run_example "$work/cmake/compiler_pass" cmake
run_example "$work/cmake/compiler_pass_static" cmake-static

step "example via pkg-config (PKG_CONFIG_PATH)"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists --print-errors tconv || fail "pkg-config does not find tconv"
[ "$(pkg-config --modversion tconv)" = "$("$prefix/bin/tconv-import" --version | awk '{print $2}')" ] ||
    fail "tconv.pc's version differs from the library's"
mkdir -p "$work/pc"
make -s -f "$root/examples/compiler_pass/Makefile" BUILD_DIR="$work/pc" >/dev/null
ldd "$work/pc/compiler_pass" | grep -q "$(readlink -f "$prefix")/lib/libtconv.so.0" ||
    fail "pkg-config build does not use the installed libtconv.so"
ldd "$work/pc/compiler_pass_static" | grep -q libtconv && fail "static build links libtconv.so"
run_example "$work/pc/compiler_pass" pkg-config
run_example "$work/pc/compiler_pass_static" pkg-config-static

echo "test-install: ok" >&2

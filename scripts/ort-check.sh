#!/usr/bin/env bash
# The proof on a runtime tconv did not write: converts every model of models/ and of the golden
# suites (tests/golden/convtranspose, tests/golden/matrix) with tconv-import, under the default
# policy and under --policy valid-only, runs each converted model in onnxruntime 1.30 (CPU
# provider, through the npm package onnxruntime-node) and compares with the golden outputs.
# The originals are run in onnxruntime too, for the record: where onnxruntime's ConvTranspose
# differs from ONNX (DESIGN.md section 1) they fail, and their rewrites must not.
#   scripts/ort-check.sh           exit 0 when every converted model matches its golden outputs
# Installs nodejs/npm (Debian) when missing and onnxruntime-node@1.30.0 into build/ort
# (scripts/ort/install.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
TCONV_ORT_NODE_MODULES=$("$root/scripts/ort/install.sh")
export TCONV_ORT_NODE_MODULES

build="$root/build/test"
cmake -S "$root" -B "$build" -DTCONV_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target tconv-import >/dev/null
import="$build/tconv-import"

node "$root/scripts/ort/selftest.js" "$root/tests/golden/convtranspose/same_upper_k3_s2_odd_total"

work=$(mktemp -d "${TMPDIR:-/tmp}/tconv-ort.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Converts suite dir $1 into $work/<policy>/<suite>/<case>/ with the data sets linked beside it.
convert_all() {
    local policy=$1 n=0 dir name out
    shift
    for dir in "$@"; do
        [ -f "$dir/model.onnx" ] || continue
        name=$(basename "$(dirname "$dir")")/$(basename "$dir")
        out="$work/$policy/$name"
        mkdir -p "$out"
        "$import" "$dir/model.onnx" -o "$out/model.onnx" --policy "$policy" --quiet
        for set in "$dir"/test_data_set_*; do ln -s "$set" "$out/"; done
        n=$((n + 1))
    done
    echo "$n"
}

cases=("$root"/models/*/ "$root"/tests/golden/convtranspose/*/ "$root"/tests/golden/matrix/*/)
cases=("${cases[@]%/}")
status=0
for policy in same-or-asymmetric valid-only; do
    n=$(convert_all "$policy" "${cases[@]}")
    echo "ort-check: $n models converted with --policy $policy; running them in onnxruntime"
    if ! node "$root/scripts/ort/run_dirs.js" "$work/$policy"/*/* >"$work/$policy.log"; then
        grep '^FAIL' "$work/$policy.log" || true
        status=1
    fi
    echo "ort-check: converted ($policy): $(tail -n 1 "$work/$policy.log")"
done
node "$root/scripts/ort/run_dirs.js" "${cases[@]}" >"$work/originals.log" || true
echo "ort-check: originals, for the record (onnxruntime's ConvTranspose corners): $(tail -n 1 "$work/originals.log")"
exit $status

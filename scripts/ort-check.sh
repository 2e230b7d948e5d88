#!/usr/bin/env bash
# The proof on a runtime tconv did not write: converts every model of models/ and of the golden
# suites (tests/golden/convtranspose, tests/golden/matrix) with tconv-import, under the default
# policy and under --policy valid-only, runs each converted model in onnxruntime 1.30 (CPU
# provider, through the npm package onnxruntime-node) and compares with the golden outputs.
# The originals are run in onnxruntime too, for the record: where onnxruntime's ConvTranspose
# differs from ONNX (DESIGN.md section 1) they fail, and their rewrites must not.
# Then scripts/ort/conventions.js checks --convention ort against onnxruntime on the generated
# cases of every row of DESIGN.md's table (tests/golden/ort_conventions).
#   scripts/ort-check.sh           exit 0 when every converted model matches its golden outputs
#                                  and every convention check holds
# Installs nodejs/npm (Debian) when missing and onnxruntime-node@1.30.0 into build/ort, with
# --ignore-scripts: its install script would fetch GPU files from a host CI cannot reach; the
# package itself carries the linux-x64 CPU library.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null
fi
ort_dir="$root/build/ort"
export TCONV_ORT_NODE_MODULES="$ort_dir/node_modules"
if [ ! -f "$TCONV_ORT_NODE_MODULES/onnxruntime-node/package.json" ]; then
    mkdir -p "$ort_dir"
    npm install --prefix "$ort_dir" --ignore-scripts --no-audit --no-fund --loglevel=error \
        onnxruntime-node@1.30.0 >/dev/null
fi

build="$root/build/test"
cmake -S "$root" -B "$build" -DTCONV_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target tconv-import tconv-run >/dev/null
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

cases=("$root"/models/*/ "$root"/tests/golden/convtranspose/*/ "$root"/tests/golden/matrix/*/
    "$root"/tests/golden/ort_conventions/*/ "$root"/tests/golden/dynamic_output_shape/*/)
cases=("${cases[@]%/}")
status=0
for policy in same-or-asymmetric valid-only; do
    n=$(convert_all "$policy" "${cases[@]}")
    echo "ort-check: $n models converted with --policy $policy; running them in onnxruntime"
    printf '%s\n' "$work/$policy"/*/* >"$work/$policy.list"
    if ! node "$root/scripts/ort/run_dirs.js" "@$work/$policy.list" >"$work/$policy.log"; then
        grep '^FAIL' "$work/$policy.log" || true
        status=1
    fi
    echo "ort-check: converted ($policy): $(tail -n 1 "$work/$policy.log")"
done
# --convention ort against onnxruntime on every row of DESIGN.md's table (cases per row, how
# many onnxruntime ran and tconv matched, how many it refused and tconv warned).
if ! node "$root/scripts/ort/conventions.js" --import "$import" --run "$build/tconv-run" \
    --work "$work/conventions" "$root/tests/golden/ort_conventions" >"$work/conventions.log"; then
    grep '^FAIL' "$work/conventions.log" || true
    status=1
fi
sed -n '/^row\t/,$p' "$work/conventions.log" | sed 's/^/ort-check: /'
printf '%s\n' "${cases[@]}" >"$work/originals.list"
node "$root/scripts/ort/run_dirs.js" "@$work/originals.list" >"$work/originals.log" || true
echo "ort-check: originals, for the record (onnxruntime's ConvTranspose corners): $(tail -n 1 "$work/originals.log")"
exit $status

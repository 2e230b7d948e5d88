#!/usr/bin/env bash
# The proof on a runtime tconv did not write: converts every model of models/ and of the golden
# suites (tests/golden/convtranspose, tests/golden/matrix) with tconv-import, under the default
# policy and under --policy valid-only, runs each converted model in onnxruntime 1.30 (CPU
# provider, through the npm package onnxruntime-node) and compares with the golden outputs.
# The originals are run in onnxruntime too, for the record: where onnxruntime's ConvTranspose
# differs from ONNX (docs/semantics.md) they fail, and their rewrites must not.
# Then scripts/ort/conventions.js checks --convention ort against onnxruntime on the generated
# cases of every row of docs/semantics.md's table (tests/golden/ort_conventions).
# Then every built-in target (--target NAME, README "Backend targets"): the same models and golden
# suites plus tests/golden/targets and tests/golden/phase (constant weights), converted for the
# target; each converted model runs in onnxruntime against its golden outputs, each refusal
# (exit 2: a node the target cannot take, named) is counted.
#   scripts/ort-check.sh           exit 0 when every converted model matches its golden outputs
#                                  and every convention check holds
# Installs nodejs/npm (Debian) when missing and onnxruntime-node@1.30.0 into build/ort
# (scripts/ort/install.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
TCONV_ORT_NODE_MODULES=$("$root/scripts/ort/install.sh")
export TCONV_ORT_NODE_MODULES

build="$root/build/test"
cmake -S "$root" -B "$build" -DTCONV_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target tconv-import tconv-run >/dev/null
import="$build/tconv-import"

node "$root/scripts/ort/selftest.js" "$root/tests/golden/convtranspose/same_upper_k3_s2_odd_total"

work=$(mktemp -d "${TMPDIR:-/tmp}/tconv-ort.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Converts the case dirs $4... with tconv-import option $1 $2 (--policy P, --target T) into
# $work/$3/<suite>/<case>/, with the data sets linked beside them; prints "converted refused"
# (a refused case, exit 2 naming its nodes, leaves its message in $work/$3/<suite>/<case>.refused).
convert_all() {
    local option=$1 value=$2 into=$3 n=0 refused=0 dir name out
    shift 3
    for dir in "$@"; do
        [ -f "$dir/model.onnx" ] || continue
        name=$(basename "$(dirname "$dir")")/$(basename "$dir")
        out="$work/$into/$name"
        mkdir -p "$out"
        if "$import" "$dir/model.onnx" -o "$out/model.onnx" "$option" "$value" --quiet \
            2>"$out.refused"; then
            for set in "$dir"/test_data_set_*; do ln -s "$set" "$out/"; done
            n=$((n + 1))
        else
            rm -rf "$out"
            refused=$((refused + 1))
        fi
    done
    echo "$n $refused"
}

# float32 suites at run_dirs.js's default tolerances; float16 ones (models/*_fp16,
# tests/golden/dtypes/float16_*) at float16 tolerances: onnxruntime, like tconv, rounds to float16
# between ops, and the converted models store intermediates in float16 (see
# tests/models/tests.cmake and tests/passes/test_legalize_golden.c). The float64 and bfloat16
# cases of tests/golden/dtypes are not run: onnxruntime's CPU provider has no float64 or
# bfloat16 ConvTranspose.
shopt -s extglob
cases=("$root"/models/!(*_fp16)/ "$root"/tests/golden/convtranspose/*/ "$root"/tests/golden/matrix/*/
    "$root"/tests/golden/ort_conventions/*/ "$root"/tests/golden/dynamic_output_shape/*/)
cases=("${cases[@]%/}")
# The detectors (models/detectors/: NonMaxSuppression, RoiAlign, a ConvTranspose mask head) under
# both policies; the targets leave them out (their backends take no NonMaxSuppression or Loop).
detector_cases=("$root"/models/detectors/*/)
detector_cases=("${detector_cases[@]%/}")
half_cases=("$root"/models/*_fp16/ "$root"/tests/golden/dtypes/float16_*/)
half_cases=("${half_cases[@]%/}")
half_tolerances=(--rtol 1e-2 --atol 8e-3)
status=0
for policy in same-or-asymmetric valid-only; do
    for kind in float32 float16; do
        if [ "$kind" = float32 ]; then set -- "${cases[@]}" "${detector_cases[@]}"; tol=(); else set -- "${half_cases[@]}"; tol=("${half_tolerances[@]}"); fi
        read -r n refused < <(convert_all --policy "$policy" "$policy/$kind" "$@")
        if [ "$refused" -ne 0 ]; then
            cat "$work/$policy/$kind"/*/*.refused
            status=1
        fi
        echo "ort-check: $n $kind models converted with --policy $policy; running them in onnxruntime"
        printf '%s\n' "$work/$policy/$kind"/*/*/ | sed 's:/$::' >"$work/$policy.$kind.list"
        if ! node "$root/scripts/ort/run_dirs.js" "${tol[@]}" "@$work/$policy.$kind.list" >"$work/$policy.$kind.log"; then
            grep '^FAIL' "$work/$policy.$kind.log" || true
            status=1
        fi
        echo "ort-check: converted ($policy, $kind): $(tail -n 1 "$work/$policy.$kind.log")"
    done
done
# --convention ort against onnxruntime on every row of docs/semantics.md's table (cases per row, how
# many onnxruntime ran and tconv matched, how many it refused and tconv warned).
if ! node "$root/scripts/ort/conventions.js" --import "$import" --run "$build/tconv-run" \
    --work "$work/conventions" "$root/tests/golden/ort_conventions" >"$work/conventions.log"; then
    grep '^FAIL' "$work/conventions.log" || true
    status=1
fi
sed -n '/^row\t/,$p' "$work/conventions.log" | sed 's/^/ort-check: /'
# Every built-in target. Suites with a cases.tsv give each case's dtype (float64 cases are not
# run: onnxruntime's CPU provider has no float64 Conv or ConvTranspose).
tsv_cases() { # suite dtype
    awk -F'\t' -v d="$2" -v s="$1" 'NR > 1 && $2 == d { print s "/" $1 }' "$1/cases.tsv"
}
mapfile -t target_cases < <(printf '%s\n' "${cases[@]}"; tsv_cases "$root/tests/golden/targets" float32;
    tsv_cases "$root/tests/golden/phase" float32)
mapfile -t target_half_cases < <(printf '%s\n' "${half_cases[@]}";
    tsv_cases "$root/tests/golden/targets" float16; tsv_cases "$root/tests/golden/phase" float16)
for target in tensorrt tflite coreml qnn ethos-u rknn tidl conv-only; do
    for kind in float32 float16; do
        if [ "$kind" = float32 ]; then set -- "${target_cases[@]}"; tol=(); else set -- "${target_half_cases[@]}"; tol=("${half_tolerances[@]}"); fi
        read -r n refused < <(convert_all --target "$target" "target-$target/$kind" "$@")
        printf '%s\n' "$work/target-$target/$kind"/*/*/ | sed 's:/$::' | grep -v '\*' >"$work/$target.$kind.list" || true
        result="nothing to run"
        if [ -s "$work/$target.$kind.list" ]; then
            if ! node "$root/scripts/ort/run_dirs.js" "${tol[@]}" "@$work/$target.$kind.list" >"$work/$target.$kind.log"; then
                grep '^FAIL' "$work/$target.$kind.log" || true
                status=1
            fi
            result=$(tail -n 1 "$work/$target.$kind.log")
        fi
        echo "ort-check: --target $target ($kind): $n converted, $refused refused; onnxruntime: $result"
    done
done
printf '%s\n' "${cases[@]}" >"$work/originals.list"
node "$root/scripts/ort/run_dirs.js" "@$work/originals.list" >"$work/originals.log" || true
echo "ort-check: originals, for the record (onnxruntime's ConvTranspose corners): $(tail -n 1 "$work/originals.log")"
node "$root/scripts/ort/run_dirs.js" "${half_tolerances[@]}" "${half_cases[@]}" >"$work/originals.float16.log" || true
echo "ort-check: float16 originals, for the record: $(tail -n 1 "$work/originals.float16.log")"
exit $status

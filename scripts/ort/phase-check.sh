#!/usr/bin/env bash
# The Conv lowerings of ConvTranspose (src/passes/lower_phase.c) on a runtime tconv did not write:
# passes.lower_phase writes every golden case of tests/golden/phase, lowered with DepthToSpace
# and with the Reshape interleave, in each form (auto, one Conv, one Conv per phase;
# TCONV_PHASE_WRITE_DIR), and onnxruntime 1.30 runs each against
# its PyTorch golden outputs at the case's tolerance (tests/golden/phase/cases.tsv). QDQ models run
# as written (onnxruntime's own DequantizeLinear). float64 cases are listed, not run: onnxruntime's
# CPU provider has no float64 Conv ("Could not find an implementation for Conv(11)").
#   scripts/ort/phase-check.sh       exit 0 when every lowered model matches
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
TCONV_ORT_NODE_MODULES=$("$root/scripts/ort/install.sh")
export TCONV_ORT_NODE_MODULES
build="$root/build/test"
cmake -S "$root" -B "$build" -DTCONV_WERROR=ON >/dev/null
cmake --build "$build" -j2 --target test_passes_lower_phase >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/tconv-phase-ort.XXXXXX")
trap 'rm -rf "$work"' EXIT
TCONV_PHASE_WRITE_DIR="$work" "$build/tests/test_passes_lower_phase" >"$work/ctest.log" 2>&1 || {
    tail -n 20 "$work/ctest.log"
    exit 1
}
passed=0 failed=0 skipped=0
while IFS=$'\t' read -r name dtype atol rtol form; do
    [ "$name" = name ] && continue
    for variant in d2s_auto d2s_one d2s_perphase reshape_auto reshape_one reshape_perphase; do
        dir="$work/${name}__$variant"
        if [ "$dtype" = float64 ]; then
            skipped=$((skipped + 1))
            continue
        fi
        if node "$root/scripts/ort/run_dirs.js" --rtol "$rtol" --atol "$atol" "$dir" >"$dir.log"; then
            passed=$((passed + 1))
        else
            grep '^FAIL' "$dir.log" || true
            failed=$((failed + 1))
        fi
    done
done <"$root/tests/golden/phase/cases.tsv"
echo "phase-check: onnxruntime 1.30 ran $((passed + failed)) lowered models: $passed matched, $failed did not; $skipped float64 models not run (no float64 Conv in onnxruntime's CPU provider)"
[ "$failed" -eq 0 ]

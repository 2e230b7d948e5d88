#!/usr/bin/env bash
# The phase (sub-pixel) form of ConvTranspose (src/passes/lower_phase.c) against the node it
# replaces, in tconv's runtime and in onnxruntime 1.30, on the layers of `gen_layers.py --phase`:
#   bench/phase.sh [ROUNDS] [THREADS]       (defaults 5 and 1)
# Builds Release into build/bench-phase/ (or $TCONV_PHASE_BENCH_BUILD), writes the layers there, lowers each into
# model_{d2s,reshape}_{one,perphase}.onnx (passes.lower_phase with TCONV_PHASE_LOWER_DIR: the
# benchmark programs see only the public API), then
#   tconv: bench_phase (alternating rounds inside one process, median over the rounds),
#   onnxruntime: ort_bench.js, one process per model and round, the models alternating within
#                each round (each figure the median of >= 20 runs), median over the rounds,
# and prints one table: each form's time over the ConvTranspose's, per runtime, with the most
# cores other processes kept busy (others_cpu) while it ran. JSON lines stay in
# build/bench-phase/phase-{tconv,ort}.jsonl.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
threads=${2:-1}
build="${TCONV_PHASE_BENCH_BUILD:-$root/build/bench-phase}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTCONV_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target bench_phase test_passes_lower_phase >/dev/null
layers="$build/phase-layers"
rm -rf "$layers"
names=$(/usr/bin/python3 "$root/bench/gen_layers.py" --phase "$layers")
mkdir -p "$layers"
TCONV_PHASE_LOWER_DIR="$layers" "$build/tests/test_passes_lower_phase"
"$build/bench/bench_phase" "$layers" "$threads" "$rounds" >"$build/phase-tconv.jsonl"
TCONV_ORT_NODE_MODULES=$("$root/scripts/ort/install.sh")
export TCONV_ORT_NODE_MODULES
: >"$build/phase-ort.jsonl"
for ((r = 0; r < rounds; r++)); do
    for layer in $names; do
        for form in model model_d2s_one model_d2s_perphase model_reshape_one model_reshape_perphase; do
            node "$root/bench/ort_bench.js" --model "$layers/$layer/$form.onnx" \
                --data-set "$layers/$layer/test_data_set_0" --case "$layer" --model-kind "$form" \
                --threads "$threads" --runs 20 --budget 1 >>"$build/phase-ort.jsonl"
        done
    done
done
/usr/bin/python3 - "$build/phase-tconv.jsonl" "$build/phase-ort.jsonl" <<'PY'
import collections, json, statistics, sys
tconv = [json.loads(l) for l in open(sys.argv[1])]
ort = collections.defaultdict(list)
others = collections.defaultdict(float)
for l in open(sys.argv[2]):
    row = json.loads(l)
    ort[(row["case"], row["model"])].append(row["ms"])
    others[row["case"]] = max(others[row["case"]], row["others_cpu"])
forms = ["d2s_one", "d2s_perphase", "reshape_one", "reshape_perphase"]
print("| layer | runtime | ConvTranspose ms | " + " | ".join(forms) + " | others_cpu max |")
print("|---|---|---|" + "---|" * len(forms) + "---|")
for row in tconv:
    name = row["layer"]
    print(f"| {name} | tconv | {row['convtranspose_ms']:.3f} | " +
          " | ".join(f"{row['ratio_' + f]:.2f}x" for f in forms) + f" | {row['others_cpu_max']:.2f} |")
    base = statistics.median(ort[(name, "model")])
    print(f"| {name} | onnxruntime | {base:.3f} | " +
          " | ".join(f"{statistics.median(ort[(name, 'model_' + f)]) / base:.2f}x" for f in forms) +
          f" | {others[name]:.2f} |")
PY

#!/bin/sh
# Builds the benchmark programs (Release, -DTCONV_BUILD_BENCH=ON) and runs them next to their
# references, then prints the side-by-side table (bench/report.py). See bench/README.md.
#
#   bench/run.sh [--quick] [--ort-only | --targets | --paper]
#     --quick: fewer runs (a smoke test, not for the table)
#     --ort-only: only the side by side with onnxruntime (no PyTorch, legalized, passes, import)
#     --paper: the side by side with onnxruntime on issue 28's nets at their papers' sizes
#       (bench/gen_layers.py --paper: LinkNet, ERFNet, EnCodec's decoder; 30-80 ms a run, so 10
#       runs a process) instead of models/ and the single layers
#     --targets: only each backend target's output against the original, in tconv and in
#       onnxruntime (bench/bench_targets.py; TCONV_BENCH_TARGET_THREADS threads, default 1)
#
# Environment: TCONV_BENCH_BUILD (build dir, default build-bench), TCONV_BENCH_ROUNDS
# (alternating rounds of tconv, onnxruntime and PyTorch, default 3), PYTHON (default
# /usr/bin/python3), OPENBLAS_DIR (the libblas.so.3 of OpenBLAS; default Debian's
# openblas-pthread). The system's BLAS alternative is left alone: OpenBLAS is selected per
# process with LD_LIBRARY_PATH, and every figure names the BLAS it really ran with.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${TCONV_BENCH_BUILD:-$ROOT/build-bench}
PYTHON=${PYTHON:-/usr/bin/python3}
OPENBLAS_DIR=${OPENBLAS_DIR:-/usr/lib/x86_64-linux-gnu/openblas-pthread}
RUNS=200
MODEL_RUNS=100
ROUNDS=15
ROUNDS_ALL=${TCONV_BENCH_ROUNDS:-3}
ORT_ONLY=0
TARGETS_ONLY=0
PAPER=0
for arg in "$@"; do
    case "$arg" in
    --quick)
        RUNS=20
        MODEL_RUNS=10
        ROUNDS=3
        ROUNDS_ALL=1
        ;;
    --ort-only) ORT_ONLY=1 ;;
    --targets) TARGETS_ONLY=1 ;;
    --paper) PAPER=1 ;;
    *)
        echo "usage: bench/run.sh [--quick] [--ort-only | --targets | --paper]" >&2
        exit 2
        ;;
    esac
done

if [ $((ORT_ONLY + TARGETS_ONLY + PAPER)) -gt 1 ]; then
    echo "bench/run.sh: --ort-only, --targets and --paper each run one part: give one" >&2
    exit 2
fi
if [ "$PAPER" = 1 ]; then
    ORT_ONLY=1
    MODEL_RUNS=$((MODEL_RUNS < 10 ? MODEL_RUNS : 10))
fi

if [ "$ORT_ONLY" = 0 ] && [ "$TARGETS_ONLY" = 0 ] && [ ! -e "$OPENBLAS_DIR/libblas.so.3" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench: installing libopenblas0-pthread (the PyTorch+OpenBLAS reference)" >&2
    # Installing registers OpenBLAS as the system BLAS alternative; keep the system as it was.
    before=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || true)
    apt-get install -y libopenblas0-pthread >&2
    if [ -n "$before" ]; then
        update-alternatives --set libblas.so.3-x86_64-linux-gnu "$before" >&2 || true
    fi
fi

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTCONV_BUILD_BENCH=ON \
    -DTCONV_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" >/dev/null

OUT="$BUILD/bench-results.jsonl"
: >"$OUT"
machine() {
    cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
    flags=$(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f|fma' | sort -u | tr '\n' ' ')
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf '{"bench": "machine", "cpu": "%s", "cores": %s, "isa_flags": "%s", "date": "%s", "kernel": "%s", "load": %s}\n' \
        "$cpu" "$(nproc)" "$flags" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -r)" "$load"
}
machine >>"$OUT"

# Each backend target's output against the original (issue 21's cost; bench/bench_targets.py):
# every model of models/ and the single-layer workloads, converted for every built-in target,
# timed in tconv's runtime and in onnxruntime in alternating rounds, 1 thread by default.
if [ "$TARGETS_ONLY" = 1 ]; then
    if TCONV_ORT_NODE_MODULES=$("$ROOT/scripts/ort/install.sh"); then
        export TCONV_ORT_NODE_MODULES
    else
        echo "bench: onnxruntime-node could not be installed: onnxruntime's side skipped" >&2
    fi
    rm -rf "$BUILD/layers" "$BUILD/targets"
    "$PYTHON" "$ROOT/bench/gen_layers.py" "$BUILD/layers"
    target_runs=$((MODEL_RUNS < 30 ? MODEL_RUNS : 30))
    "$PYTHON" "$ROOT/bench/bench_targets.py" --build "$BUILD" --rounds "$ROUNDS_ALL" \
        --threads "${TCONV_BENCH_TARGET_THREADS:-1}" --runs "$target_runs" \
        "$ROOT"/models/*/ "$BUILD"/layers/*/ >>"$OUT"
    machine >>"$OUT"
    "$PYTHON" "$ROOT/bench/report.py" "$OUT"
    exit 0
fi

# The machine's speed drifts by tens of percent over minutes (other virtual machines share the
# host): kernels and models are measured in ROUNDS_ALL alternating rounds of tconv then PyTorch,
# and report.py takes each figure's median over the rounds.
torch_round() {
    for t in 1 $(nproc); do
        if [ "$1" = 1 ]; then
            "$PYTHON" "$ROOT/bench/torch_ref.py" info --threads "$t" >>"$OUT"
        fi
        "$PYTHON" "$ROOT/bench/torch_ref.py" kernels --threads "$t" --runs "$RUNS" >>"$OUT"
        if [ -e "$OPENBLAS_DIR/libblas.so.3" ]; then
            if [ "$1" = 1 ]; then
                LD_LIBRARY_PATH="$OPENBLAS_DIR" "$PYTHON" "$ROOT/bench/torch_ref.py" info \
                    --threads "$t" >>"$OUT"
            fi
            LD_LIBRARY_PATH="$OPENBLAS_DIR" "$PYTHON" "$ROOT/bench/torch_ref.py" kernels \
                --threads "$t" --runs "$RUNS" >>"$OUT"
            LD_LIBRARY_PATH="$OPENBLAS_DIR" "$PYTHON" "$ROOT/bench/torch_ref.py" models \
                --threads "$t" --runs "$MODEL_RUNS" --models-dir "$ROOT/models" >>"$OUT"
        else
            echo "bench: no OpenBLAS at $OPENBLAS_DIR: PyTorch+OpenBLAS rows skipped" >&2
            "$PYTHON" "$ROOT/bench/torch_ref.py" models --threads "$t" --runs "$MODEL_RUNS" \
                --models-dir "$ROOT/models" >>"$OUT"
        fi
    done
}

# Side by side with onnxruntime 1.30 (bench/ort_bench.js; scripts/ort/install.sh puts
# onnxruntime-node into build/ort): every model of models/ and the single-layer workloads
# (bench/gen_layers.py, into $BUILD/layers), at 1 and 2 threads and one per core, one process per
# model and thread count on each side (for its peak RSS). Each side checks the model against its
# golden output before timing it. A model onnxruntime refuses or gets wrong is run there as
# tconv-import converted it (its rows say "legalized"); tconv always runs the original.
ORT_CASES=""
ORT_THREADS=""
for t in 1 2 "$(nproc)"; do
    if [ "$t" -le "$(nproc)" ] && ! echo " $ORT_THREADS " | grep -q " $t "; then
        ORT_THREADS="$ORT_THREADS $t"
    fi
done
if TCONV_ORT_NODE_MODULES=$("$ROOT/scripts/ort/install.sh"); then
    export TCONV_ORT_NODE_MODULES
    rm -rf "$BUILD/layers" "$BUILD/ort-models"
    if [ "$PAPER" = 1 ]; then
        rm -rf "$BUILD/paper"
        "$PYTHON" "$ROOT/bench/gen_layers.py" --paper "$BUILD/paper" >/dev/null
        CASE_DIRS="$BUILD/paper/*/"
    else
        "$PYTHON" "$ROOT/bench/gen_layers.py" "$BUILD/layers"
        CASE_DIRS="$ROOT/models/*/ $BUILD/layers/*/"
    fi
    for dir in $CASE_DIRS; do
        dir=${dir%/}
        [ -f "$dir/model.onnx" ] || continue
        ORT_CASES="$ORT_CASES $dir"
    done
else
    echo "bench: onnxruntime-node could not be installed: onnxruntime rows skipped" >&2
fi

# The model file onnxruntime runs for test directory $1 and its kind (original or legalized),
# or nothing when neither passes the golden check.
# (Paths are kept in space-separated lists: the checkout's path must not contain spaces.)
ort_model() {
    om_name=$(basename "$1")
    if node "$ROOT/bench/ort_bench.js" --model "$1/model.onnx" --data-set \
        "$1/test_data_set_0" --case "$om_name" --threads 1 --check-only 2>/dev/null; then
        echo "$1/model.onnx=original"
        return
    fi
    om_out="$BUILD/ort-models/$om_name"
    mkdir -p "$om_out"
    "$BUILD/tconv-import" "$1/model.onnx" -o "$om_out/model.onnx" --quiet
    if node "$ROOT/bench/ort_bench.js" --model "$om_out/model.onnx" --data-set \
        "$1/test_data_set_0" --case "$om_name" --threads 1 --check-only; then
        echo "$om_out/model.onnx=legalized"
    else
        echo "bench: $om_name: onnxruntime fails its golden check, as written and legalized" >&2
    fi
}
ORT_PLAN=""
for dir in $ORT_CASES; do
    plan=$(ort_model "$dir")
    if [ -n "$plan" ]; then
        ORT_PLAN="$ORT_PLAN $dir=$plan"
    fi
done

tconv_ort_round() {
    for t in $ORT_THREADS; do
        for dir in $ORT_CASES; do
            "$BUILD/bench/bench_models" --case "$dir" "$(basename "$dir")" "$t" "$MODEL_RUNS" >>"$OUT"
        done
    done
}
ort_round() {
    for t in $ORT_THREADS; do
        for entry in $ORT_PLAN; do
            dir=${entry%%=*}
            model=${entry#*=}
            kind=${model#*=}
            model=${model%=*}
            node "$ROOT/bench/ort_bench.js" --model "$model" --data-set "$dir/test_data_set_0" \
                --case "$(basename "$dir")" --threads "$t" --runs "$MODEL_RUNS" \
                --model-kind "$kind" >>"$OUT"
        done
    done
}

round=1
while [ "$round" -le "$ROUNDS_ALL" ]; do
    if [ "$ORT_ONLY" = 0 ]; then
        echo "bench: round $round of $ROUNDS_ALL: tconv kernels and whole models" >&2
        "$BUILD/bench/bench_kernels" "$RUNS" >>"$OUT"
        "$BUILD/bench/bench_models" "$ROOT/models" "$MODEL_RUNS" >>"$OUT"
    fi
    if [ -n "$ORT_CASES" ]; then
        echo "bench: round $round of $ROUNDS_ALL: tconv beside onnxruntime (threads:$ORT_THREADS)" >&2
        tconv_ort_round
        echo "bench: round $round of $ROUNDS_ALL: onnxruntime" >&2
        ort_round
    fi
    if [ "$ORT_ONLY" = 0 ]; then
        echo "bench: round $round of $ROUNDS_ALL: PyTorch references" >&2
        torch_round "$round"
    fi
    round=$((round + 1))
done
if [ "$ORT_ONLY" = 1 ]; then
    machine >>"$OUT"
    "$PYTHON" "$ROOT/bench/report.py" "$OUT"
    exit 0
fi
echo "bench: legalized vs original" >&2
"$BUILD/bench/bench_legalized" "$ROOT/models" "$ROUNDS" >>"$OUT"
echo "bench: pass scaling" >&2
"$BUILD/bench/bench_passes" >>"$OUT"
machine >>"$OUT"

"$PYTHON" "$ROOT/bench/report.py" "$OUT"

# The importer benchmark (bench/import/, see its section of bench/README.md) prints its own
# table.
if [ -x "$ROOT/bench/import/bench_import.sh" ]; then
    echo "bench: importer (bench/import/bench_import.sh)" >&2
    "$ROOT/bench/import/bench_import.sh" "$BUILD"
fi

#!/bin/sh
# Builds the benchmark programs (Release, -DTCONV_BUILD_BENCH=ON) and runs them next to their
# references, then prints the side-by-side table (bench/report.py). See bench/README.md.
#
#   bench/run.sh [--quick]        # --quick: fewer runs (a smoke test, not for the table)
#
# Environment: TCONV_BENCH_BUILD (build dir, default build-bench), TCONV_BENCH_ROUNDS
# (alternating rounds of tconv and PyTorch, default 3), PYTHON (default
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
if [ "${1:-}" = "--quick" ]; then
    RUNS=20
    MODEL_RUNS=10
    ROUNDS=3
    ROUNDS_ALL=1
fi

if [ ! -e "$OPENBLAS_DIR/libblas.so.3" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
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

round=1
while [ "$round" -le "$ROUNDS_ALL" ]; do
    echo "bench: round $round of $ROUNDS_ALL: tconv kernels and whole models" >&2
    "$BUILD/bench/bench_kernels" "$RUNS" >>"$OUT"
    "$BUILD/bench/bench_models" "$ROOT/models" "$MODEL_RUNS" >>"$OUT"
    echo "bench: round $round of $ROUNDS_ALL: PyTorch references" >&2
    torch_round "$round"
    round=$((round + 1))
done
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

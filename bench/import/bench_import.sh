#!/usr/bin/env bash
# Import benchmark: tconv-import (load, legalize, save) against python3-onnx (onnx.load +
# onnx.save) on a generated ~160 MiB model (40 ConvTranspose 256x256x4x4 layers with bias and
# Relu, SAME_UPPER, opset 13). Prints wall time and peak RSS of each side, the ratios and the
# goals of the issue, from one run of this script.
#
# usage: bench/import/bench_import.sh [BUILD_DIR] [RUNS]
#   BUILD_DIR  folder holding tconv-import (default: build)
#   RUNS       runs per side, the median is reported (default: 5)
# The model is generated into a temp folder (under $TMPDIR or /tmp) and deleted afterwards.
#
# Measured the same way on both sides: each run is its own process under /usr/bin/time
# (peak RSS: its "maximum resident set size", whole process), the output file is deleted
# before each run, and the page cache holds the input (it is read once before the runs).
# Time: tconv-import's whole process wall time (start-up, load, verify, passes, save with
# fsync); for python3-onnx only the onnx.load + onnx.save calls, timed inside the process
# (interpreter start-up and `import onnx` are not counted, which favours the reference).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
runs="${2:-5}"
tconv="$build/tconv-import"
python=/usr/bin/python3
[ -x "$tconv" ] || { echo "bench_import: no $tconv (build first, or pass BUILD_DIR)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_import: needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/tconv-bench-import.XXXXXX")"
trap 'rm -rf "$work"' EXIT
model="$work/model.onnx"

"$python" "$here/gen_model.py" "$model"
size=$(stat -c %s "$model")
cat "$model" > /dev/null # into the page cache for both sides

now_ns() { date +%s%N; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# One run of each side per round, alternating, so both see the same machine load.
: > "$work/tconv.t"; : > "$work/tconv.rss"; : > "$work/ref.t"; : > "$work/ref.rss"
for _ in $(seq "$runs"); do
    rm -f "$work/out.onnx"
    t0=$(now_ns)
    /usr/bin/time -f %M -o "$work/rss" "$tconv" "$model" -o "$work/out.onnx" > /dev/null 2>&1
    t1=$(now_ns)
    echo "$(( (t1 - t0) / 1000 ))" | awk '{print $1 / 1e6}' >> "$work/tconv.t"
    cat "$work/rss" >> "$work/tconv.rss"

    rm -f "$work/ref.onnx"
    /usr/bin/time -f %M -o "$work/rss" "$python" "$here/ref_onnx.py" "$model" "$work/ref.onnx" \
        >> "$work/ref.t"
    cat "$work/rss" >> "$work/ref.rss"
done
cmp -s <("$python" -c "import onnx, sys; print(len(onnx.load(sys.argv[1]).graph.node))" \
         "$work/out.onnx") <(echo 120) || { echo "bench_import: unexpected output model" >&2; exit 1; }

t_tconv=$(median < "$work/tconv.t"); t_ref=$(median < "$work/ref.t")
r_tconv=$(median < "$work/tconv.rss"); r_ref=$(median < "$work/ref.rss")
awk -v tt="$t_tconv" -v tr="$t_ref" -v rt="$r_tconv" -v rr="$r_ref" -v size="$size" \
    -v runs="$runs" 'BEGIN {
    mib = 1024 * 1024; file = size / mib; rtm = rt * 1024 / mib; rrm = rr * 1024 / mib
    printf "model: %.1f MiB (%d bytes), median of %d runs per side\n", file, size, runs
    printf "| metric | tconv-import | python3-onnx | ratio tconv/ref | goal | met |\n"
    printf "|---|---|---|---|---|---|\n"
    printf "| load+save time | %.3f s | %.3f s | %.2fx | <= 0.50x | %s |\n", tt, tr, tt / tr,
           (tt <= 0.5 * tr) ? "yes" : "NO"
    printf "| peak RSS | %.1f MiB (%.2fx file) | %.1f MiB (%.2fx file) | %.2fx | <= 1.30x file | %s |\n",
           rtm, rtm / file, rrm, rrm / file, rtm / rrm, (rtm <= 1.3 * file) ? "yes" : "NO"
}'
echo "machine: $(uname -srm), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(uptime | sed 's/.*load average: //')"

#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/build.sh, clang) and runs each one for a fixed time; fails on any
# finding (crash, sanitizer report, leak, timeout, out-of-memory).
#   scripts/fuzz.sh [--time SECONDS] [--targets a,b,...] [--build DIR] [--work DIR] [-- LIBFUZZER_ARGS...]
# Defaults: 60 s per target, all four targets, build/fuzz, build/fuzz-work. The seed corpus is
# made at run time from ONNX's node conformance suite vendored in tests/data (all 1,765 tests of
# v1.22.0; $TCONV_ONNX_NODE_TESTS may name an unpacked copy instead) plus the curated seeds in fuzz/seeds/<target>/; new inputs go to WORK/corpus/<target>, findings to
# WORK/artifacts/, the libFuzzer log of each target to WORK/<target>.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
time_per_target=60
targets="load_save,legalize_check,tensor_decode,plan_proof"
build="$root/build/fuzz"
work="$root/build/fuzz-work"
node_tests="${TCONV_ONNX_NODE_TESTS:-$root/tests/data/onnx-node-tests-v1.22.0.tar.xz}"
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    --time) time_per_target=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "scripts/fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
"$root/scripts/deps.sh" clang libclang-rt-14-dev
"$root/fuzz/build.sh" "$build"
mkdir -p "$work/artifacts"
rm -rf "$work/seeds"
"$root/fuzz/make_seeds.sh" "$node_tests" "$work/seeds"

failed=0
IFS=, read -r -a list <<<"$targets"
for t in "${list[@]}"; do
    mkdir -p "$work/corpus/$t"
    seeds=("$work/seeds/$t")
    [ -d "$root/fuzz/seeds/$t" ] && seeds+=("$root/fuzz/seeds/$t")
    # past findings run first under clang's sanitizers too: ctest's sanitizer build is gcc's,
    # which misses some of what clang reports (a zero offset from a NULL pointer)
    [ -d "$root/tests/fuzz_regressions/$t" ] && seeds+=("$root/tests/fuzz_regressions/$t")
    dict=()
    [ -f "$root/fuzz/onnx.dict" ] && [ "$t" != tensor_decode ] && dict=(-dict="$root/fuzz/onnx.dict")
    echo "fuzz: $t for ${time_per_target}s (log: $work/$t.log)"
    rc=0
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$build/fuzz_$t" -max_total_time="$time_per_target" -rss_limit_mb=2048 -timeout=10 \
        -max_len=262144 -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" \
        "${dict[@]}" "${extra[@]}" "$work/corpus/$t" "${seeds[@]}" >"$work/$t.log" 2>&1 || rc=$?
    stats=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$work/$t.log" | tail -1 || true)
    if [ "$rc" -ne 0 ]; then
        echo "fuzz: $t FAILED (exit $rc): findings in $work/artifacts/" >&2
        grep -E 'ERROR|SUMMARY|property failed|deadly signal|timeout|out-of-memory' "$work/$t.log" | head -20 >&2 || true
        failed=1
    else
        echo "fuzz: $t ok: ${stats:-no final stats}"
    fi
done
exit $failed

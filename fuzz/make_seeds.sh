#!/usr/bin/env bash
# Builds the seed corpus from ONNX conformance test folders (model.onnx + test_data_set_*/*.pb)
# and from the repository's own test models (tests/golden: ConvTranspose in every padding form;
# tests/broken: one defect each):
#   fuzz/make_seeds.sh [NODE_TESTS] OUT_DIR
# NODE_TESTS is a folder holding ONNX's test_* folders (e.g. BUILD/onnx-node-tests-v1.22.0, which
# CMake unpacks) or an archive of one; the default is the repository's vendored suite,
# tests/data/onnx-node-tests-v1.22.0.tar.xz (all 1,765 tests of ONNX v1.22.0), unpacked here
# into a temporary folder with `cmake -E tar`. OUT/load_save, OUT/legalize_check and
# OUT/plan_proof get the models, OUT/tensor_decode the .pb files (named after their folders). Nothing here is
# committed: it is rebuilt on each run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 1 ]; then
    src=$root/tests/data/onnx-node-tests-v1.22.0.tar.xz
    out=$1
else
    src=$1
    out=$2
fi
mkdir -p "$out/load_save" "$out/legalize_check" "$out/tensor_decode" "$out/plan_proof"
if [ -f "$src" ]; then
    unpacked=$(mktemp -d)
    trap 'rm -rf "$unpacked"' EXIT
    (cd "$unpacked" && cmake -E tar xf "$src")
    src=$(find "$unpacked" -mindepth 1 -maxdepth 1 -type d | head -1)
fi
[ -d "$src" ] || { echo "fuzz/make_seeds.sh: no conformance data at $src" >&2; exit 2; }
n=$(find "$src" -mindepth 2 -maxdepth 2 -name model.onnx | wc -l)
[ "$n" -gt 0 ] || { echo "fuzz/make_seeds.sh: no test folder with a model.onnx in $src" >&2; exit 2; }

# Files are copied as tar streams that rename them on the way (thousands of files: one cp each
# took minutes). The repository's models and tensors, named after their path under tests/.
(cd "$root/tests" && find golden broken -type f \( -name '*.onnx' -o -name '*.pb' \) -size -256k -print0 |
    tar --null -T - -cf -) |
    tar -xf - -C "$out" --transform='s|/|-|g' --transform='s|^\(.*\.onnx\)$|load_save/\1|' \
        --transform='s|^\(.*\.pb\)$|tensor_decode/\1|'
# The node tests: TEST.onnx and TEST-test_data_set_K-input_N.pb.
(cd "$src" && find . -mindepth 2 -maxdepth 3 -type f \( -path './*/model.onnx' -o -path './*/test_data_set_*/*.pb' \) -print0 |
    tar --null -T - -cf -) |
    tar -xf - -C "$out" --transform='s|^\./\([^/]*\)/model\.onnx$|load_save/\1.onnx|' \
        --transform='s|^\./\([^/]*\)/\(test_data_set_[^/]*\)/\([^/]*\)$|tensor_decode/\1-\2-\3|'
cp -R "$out/load_save/." "$out/legalize_check/"
cp -R "$out/load_save/." "$out/plan_proof/"
echo "fuzz/make_seeds.sh: seeds from $n ONNX node tests and the repository's test models:" \
    "$(ls "$out/load_save" | wc -l) models, $(ls "$out/tensor_decode" | wc -l) tensors"

#!/usr/bin/env bash
# Builds the seed corpus from ONNX conformance test folders (model.onnx + test_data_set_*/*.pb):
#   fuzz/make_seeds.sh NODE_TESTS_DIR OUT_DIR
# OUT/load_save and OUT/legalize_check get every model.onnx, OUT/tensor_decode every .pb file
# (named after their test folder). Nothing here is committed: it is rebuilt on each run.
set -euo pipefail
src=$1
out=$2
mkdir -p "$out/load_save" "$out/legalize_check" "$out/tensor_decode"
[ -d "$src" ] || { echo "fuzz/make_seeds.sh: no conformance data at $src (only curated seeds used)" >&2; exit 0; }
for dir in "$src"/*/; do
    name=$(basename "$dir")
    [ -f "$dir/model.onnx" ] || continue
    cp -f "$dir/model.onnx" "$out/load_save/$name.onnx"
    cp -f "$dir/model.onnx" "$out/legalize_check/$name.onnx"
    for pb in "$dir"/test_data_set_*/*.pb; do
        [ -f "$pb" ] || continue
        set_name=$(basename "$(dirname "$pb")")
        cp -f "$pb" "$out/tensor_decode/$name-$set_name-$(basename "$pb")"
    done
done

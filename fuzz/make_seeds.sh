#!/usr/bin/env bash
# Builds the seed corpus from ONNX conformance test folders (model.onnx + test_data_set_*/*.pb)
# and from the repository's own test models (tests/golden: ConvTranspose in every padding form;
# tests/broken: one defect each):
#   fuzz/make_seeds.sh NODE_TESTS_DIR OUT_DIR
# OUT/load_save, OUT/legalize_check and OUT/plan_proof get the models, OUT/tensor_decode the .pb files (named
# after their folders). Nothing here is committed: it is rebuilt on each run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$1
out=$2
mkdir -p "$out/load_save" "$out/legalize_check" "$out/tensor_decode" "$out/plan_proof"
while IFS= read -r -d '' file; do
    name=$(echo "${file#"$root"/tests/}" | tr '/' '-')
    case "$file" in
    *.onnx) cp -f "$file" "$out/load_save/$name"; cp -f "$file" "$out/legalize_check/$name"; cp -f "$file" "$out/plan_proof/$name" ;;
    *.pb) cp -f "$file" "$out/tensor_decode/$name" ;;
    esac
done < <(find "$root/tests/golden" "$root/tests/broken" -type f \( -name '*.onnx' -o -name '*.pb' \) -size -256k -print0)
[ -d "$src" ] || { echo "fuzz/make_seeds.sh: no conformance data at $src" >&2; exit 0; }
for dir in "$src"/*/; do
    name=$(basename "$dir")
    [ -f "$dir/model.onnx" ] || continue
    cp -f "$dir/model.onnx" "$out/load_save/$name.onnx"
    cp -f "$dir/model.onnx" "$out/legalize_check/$name.onnx"
    cp -f "$dir/model.onnx" "$out/plan_proof/$name.onnx"
    for pb in "$dir"/test_data_set_*/*.pb; do
        [ -f "$pb" ] || continue
        set_name=$(basename "$(dirname "$pb")")
        cp -f "$pb" "$out/tensor_decode/$name-$set_name-$(basename "$pb")"
    done
done

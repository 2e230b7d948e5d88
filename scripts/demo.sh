#!/usr/bin/env bash
# Builds tconv and runs its main job on a bundled model: legalize a Keras-style decoder whose
# ConvTranspose layers use SAME_UPPER/SAME_LOWER padding, prove the rewrite on random inputs,
# then run the converted model against the model's golden outputs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
build="$root/build/release"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTCONV_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
model="$root/models/keras_decoder"
out="$build/demo"
mkdir -p "$out/keras_decoder/test_data_set_0"
cp "$model"/test_data_set_0/*.pb "$out/keras_decoder/test_data_set_0/"
set -x
"$build/tconv-import" "$model/model.onnx" -o "$out/keras_decoder/model.onnx" \
    --check 3 --report "$out/keras_decoder.report.json"
"$build/tconv-run" "$out/keras_decoder" --rtol 1e-3 --atol 1e-4

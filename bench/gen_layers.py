#!/usr/bin/python3
"""Writes the single-layer workloads of issue 17 as ONNX test directories, for the onnxruntime
side-by-side benchmark (bench/run.sh runs both runtimes on them):

  gen_layers.py OUT_DIR

  OUT_DIR/convT_256to128_32x32/   ConvTranspose X 1x256x32x32, W 256x128x4x4, stride 2, pads 1
                                  (output 1x128x64x64; 1.07 GFLOP)
  OUT_DIR/workloadA_convT/        ConvTranspose X 1x64x64x64, W 64x32x4x4, stride 2, pads 1
                                  (output 1x32x128x128; 268 MFLOP), bench_kernels' workload A

  OUT_DIR/floor_identity/         one Identity on a 1x1 float tensor: what a run costs with
                                  nothing to compute (each runtime's per-run overhead)

Each ConvTranspose one is model.onnx (opset 17, one ConvTranspose node, W an initializer, no bias) plus
test_data_set_0/input_0.pb and output_0.pb, the golden output computed in float64 by
torch.nn.functional.conv_transpose2d (with pads 1 on both sides, ONNX's ConvTranspose and
PyTorch's padding=1 agree). Inputs in [-1, 1) and weights in [-0.05, 0.05) from a fixed seed.
Debian's python3-onnx 1.12, python3-torch 1.13 and numpy. The files are generated at benchmark
time into the build folder, never committed.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

LAYERS = [
    # name, X dims, W dims, stride, pad
    ("convT_256to128_32x32", (1, 256, 32, 32), (256, 128, 4, 4), 2, 1),
    ("workloadA_convT", (1, 64, 64, 64), (64, 32, 4, 4), 2, 1),
]


def write_tensor(path, array, name):
    t = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def write_test_dir(out_dir, name, graph, x, y):
    """OUT_DIR/name/model.onnx (opset 17) and test_data_set_0 with input x and golden y."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="tconv bench/gen_layers.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    write_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"), x, "x")
    write_tensor(os.path.join(d, "test_data_set_0", "output_0.pb"), y, "y")


def write_layer(out_dir, name, x_dims, w_dims, stride, pad, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, x_dims).astype(np.float32)
    w = (rng.uniform(-1, 1, w_dims) * 0.05).astype(np.float32)
    y = F.conv_transpose2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
                           stride=stride, padding=pad).numpy().astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="layer",
                            kernel_shape=list(w_dims[2:]), strides=[stride, stride],
                            pads=[pad] * 4)
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, y.shape)],
        initializer=[numpy_helper.from_array(w, "w")])
    write_test_dir(out_dir, name, graph, x, y)


def write_floor(out_dir):
    name = "floor_identity"
    x = np.array([[0.5]], dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="identity")], name,
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, x.shape)])
    write_test_dir(out_dir, name, graph, x, x)


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: gen_layers.py OUT_DIR")
    for i, (name, x_dims, w_dims, stride, pad) in enumerate(LAYERS):
        write_layer(sys.argv[1], name, x_dims, w_dims, stride, pad, seed=17 + i)
    write_floor(sys.argv[1])


main()

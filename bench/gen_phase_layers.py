#!/usr/bin/python3
"""Writes the layers of the phase-form benchmark (bench/phase.sh) as ONNX test directories:

  gen_phase_layers.py OUT_DIR

OUT_DIR/<layer>/model.onnx: one VALID ConvTranspose (opset 17, W and B initializers), and
test_data_set_0 with X and the golden Y from torch.nn.functional.conv_transpose{1,2,3}d in
float64. Inputs in [-1, 1), weights in [-0.05, 0.05) from a fixed seed. Generated at benchmark
time into the build folder, never committed. passes.lower_phase (TCONV_PHASE_LOWER_DIR=OUT_DIR)
then writes model_d2s.onnx and model_reshape.onnx beside each model.onnx.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

from gen_layers import write_tensor

LAYERS = [
    # name, X dims, W dims, strides, dilations, group
    ("dcgan_k4s2", (1, 256, 16, 16), (256, 128, 4, 4), (2, 2), (1, 1), 1),
    ("unet_k2s2", (1, 128, 32, 32), (128, 64, 2, 2), (2, 2), (1, 1), 1),
    ("k3s2", (1, 64, 32, 32), (64, 64, 3, 3), (2, 2), (1, 1), 1),
    ("k5s4", (1, 64, 24, 24), (64, 32, 5, 5), (4, 4), (1, 1), 1),
    ("k2s3_stride_above_kernel", (1, 64, 32, 32), (64, 32, 2, 2), (3, 3), (1, 1), 1),
    ("k3s2_d2", (1, 64, 32, 32), (64, 32, 3, 3), (2, 2), (2, 2), 1),
    ("depthwise_k4s2", (1, 64, 64, 64), (64, 1, 4, 4), (2, 2), (1, 1), 64),
    ("audio_1d_k16s8", (1, 128, 256), (128, 64, 16), (8,), (1,), 1),
    ("vol_3d_k4s2", (1, 32, 6, 12, 12), (32, 16, 4, 4, 4), (2, 2, 2), (1, 1, 1), 1),
]


def write_layer(out_dir, name, x_dims, w_dims, strides, dilations, group, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, x_dims).astype(np.float32)
    w = (rng.uniform(-1, 1, w_dims) * 0.05).astype(np.float32)
    b = rng.uniform(-1, 1, (w_dims[1] * group,)).astype(np.float32)
    fn = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[len(x_dims)]
    y = fn(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
           torch.from_numpy(b).double(), stride=strides, dilation=dilations,
           groups=group).numpy().astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name="layer",
                            kernel_shape=list(w_dims[2:]), strides=list(strides),
                            dilations=list(dilations), group=group)
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, y.shape)],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="tconv bench/gen_phase_layers.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    write_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"), x, "x")
    write_tensor(os.path.join(d, "test_data_set_0", "output_0.pb"), y, "y")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_phase_layers.py OUT_DIR")
    for i, layer in enumerate(LAYERS):
        write_layer(sys.argv[1], *layer, seed=1000 + i)
    print(" ".join(layer[0] for layer in LAYERS))


if __name__ == "__main__":
    main()

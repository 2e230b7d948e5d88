#!/usr/bin/python3
"""Writes the importer benchmark model: LAYERS ConvTranspose layers (W 256x256x4x4 float32 with
bias, auto_pad SAME_UPPER, stride 1) each followed by Relu, opset 13, weights in raw_data.
With the defaults the file is about 160 MiB. Seeded: the same arguments give the same file.

usage: gen_model.py OUT.onnx [--layers N] [--channels C] [--seed S]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(layers, channels, seed):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    prev = "x"
    for i in range(layers):
        w = rng.standard_normal((channels, channels, 4, 4), dtype=np.float32) * 0.01
        b = rng.standard_normal((channels,), dtype=np.float32) * 0.01
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        inits.append(numpy_helper.from_array(b, f"b{i}"))
        nodes.append(helper.make_node("ConvTranspose", [prev, f"w{i}", f"b{i}"], [f"t{i}"],
                                      name=f"deconv{i}", auto_pad="SAME_UPPER",
                                      kernel_shape=[4, 4], strides=[1, 1]))
        nodes.append(helper.make_node("Relu", [f"t{i}"], [f"r{i}"], name=f"relu{i}"))
        prev = f"r{i}"
    graph = helper.make_graph(
        nodes, "import_bench",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 8, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, channels, 8, 8])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="tconv-bench")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=40)
    ap.add_argument("--channels", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    onnx.save(build(a.layers, a.channels, a.seed), a.out)


if __name__ == "__main__":
    main()

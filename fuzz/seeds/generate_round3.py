#!/usr/bin/python3
"""Fuzz seeds from issue 27 (hostile input, round 3), one small model per finding (committed;
rerun to regenerate):

    /usr/bin/python3 fuzz/seeds/generate_round3.py

Each goes to plan_proof (planned against unfused runs, the per-node proof) and legalize_check:
Einsum 'ij->ii', a ConvTranspose -> Slice -> Pad chain under a false declared rank, a Conv ->
BatchNormalization with var + eps = 0, BatchNormalization and Trilu on [2^58,4,0], Trilu with
k = INT64_MAX, Range(0, INT64_MAX, INT64_MAX), Split sizes that wrap, Resize with a NaN roi,
float16 + float32 in one Add, a ConvTranspose whose output empties at small dynamic sizes, a
chain of folded MatMuls, TopK and LRN past their element counts."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def write(name, m, opset):
    m.opset_import[0].version = opset
    m.ir_version = 8
    data = m.SerializeToString()
    for sub in ("plan_proof", "legalize_check"):
        os.makedirs(os.path.join(HERE, sub), exist_ok=True)
        with open(os.path.join(HERE, sub, name + ".onnx"), "wb") as f:
            f.write(data)


def vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def init(name, array):
    return numpy_helper.from_array(array, name)


def graph(nodes, inputs, outputs, inits=(), value_info=()):
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, list(inits),
                                               value_info=list(value_info)))


def main():
    write("einsum_repeated_output", graph(
        [helper.make_node("Einsum", ["X"], ["Y"], name="diag", equation="ij->ii")],
        [vi("X", F, [3, 3])], [vi("Y", F, None)]), 12)
    write("crop_false_rank_pad", graph(
        [helper.make_node("Identity", ["X"], ["T"], name="id"),
         helper.make_node("ConvTranspose", ["T", "W"], ["C"], name="ct"),
         helper.make_node("Slice", ["C", "st", "en", "ax"], ["S"], name="crop"),
         helper.make_node("Pad", ["S", "pads"], ["Y"], name="pad")],
        [vi("X", F, [1, 1, 3, 3])], [vi("Y", F, None)],
        [init("W", np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)),
         init("st", np.array([1], np.int64)), init("en", np.array([100], np.int64)),
         init("ax", np.array([-1], np.int64)), init("pads", np.array([0, 0, 1, 0, 0, 1], np.int64))],
        [vi("T", F, [1, 1, 3])]), 13)
    one = np.ones(1, np.float32)
    write("batchnorm_zero_variance", graph(
        [helper.make_node("Conv", ["X", "W"], ["C"], name="conv"),
         helper.make_node("BatchNormalization", ["C", "s", "b", "m", "v"], ["Y"], name="bn")],
        [vi("X", F, [1, 1, 1, 3])], [vi("Y", F, None)],
        [init("W", np.ones((1, 1, 1, 1), np.float32)), init("s", 2 * one), init("b", one),
         init("m", one), init("v", np.array([-1e-5], np.float32))]), 15)
    c4 = np.ones(4, np.float32)
    write("batchnorm_trilu_empty_huge", graph(
        [helper.make_node("BatchNormalization", ["X", "s", "s", "s", "s"], ["B"], name="bn"),
         helper.make_node("Trilu", ["X"], ["T"], name="tri")],
        [vi("X", F, [2 ** 58, 4, 0])], [vi("B", F, None), vi("T", F, None)],
        [init("s", c4)]), 15)
    write("trilu_k_max", graph(
        [helper.make_node("Trilu", ["X", "k"], ["Y"], name="tri")],
        [vi("X", F, [2, 3])], [vi("Y", F, None)],
        [init("k", np.array(2 ** 63 - 1, np.int64))]), 14)
    write("range_overflow", graph(
        [helper.make_node("Range", ["a", "b", "b"], ["Y"], name="range")], [],
        [vi("Y", TensorProto.INT64, None)],
        [init("a", np.array(0, np.int64)), init("b", np.array(2 ** 63 - 1, np.int64))]), 11)
    write("split_sizes_wrap", graph(
        [helper.make_node("Split", ["X", "sp"], ["A", "B", "C"], name="split")],
        [vi("X", F, [0])], [vi("A", F, None)],
        [init("sp", np.array([2 ** 63 - 1, 2 ** 63 - 1, 2], np.int64))]), 13)
    write("resize_nan_roi", graph(
        [helper.make_node("Resize", ["X", "roi", "", "sizes"], ["Y"], name="resize",
                          mode="linear", coordinate_transformation_mode="tf_crop_and_resize")],
        [vi("X", F, [1, 1, 2, 2])], [vi("Y", F, None)],
        [init("roi", np.array([0, 0, np.nan, np.nan, 1, 1, np.nan, np.nan], np.float32)),
         init("sizes", np.array([1, 1, 3, 3], np.int64))]), 13)
    write("float16_beside_float32", graph(
        [helper.make_node("Add", ["A", "B"], ["Y"], name="add")],
        [vi("A", TensorProto.FLOAT16, [2]), vi("B", F, [2])], [vi("Y", F, None)]), 14)
    write("conv_transpose_empties_small", graph(
        [helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="ct", pads=[2, 0, 0, 0])],
        [vi("X", F, [1, 1, "h", 2])], [vi("Y", F, None)],
        [init("W", np.ones((1, 1, 1, 1), np.float32))]), 13)
    eye = np.eye(16, dtype=np.float32)
    nodes = [helper.make_node("MatMul", ["C" if i == 0 else "M%d" % (i - 1), "C"], ["M%d" % i],
                              name="mm%d" % i) for i in range(40)]
    write("folded_matmul_chain", graph(nodes, [], [vi("M39", F, None)], [init("C", eye)]), 13)
    write("topk_lrn_work", graph(
        [helper.make_node("TopK", ["X", "k"], ["V", "I"], name="top"),
         helper.make_node("LRN", ["Z"], ["L"], name="lrn", size=401)],
        [vi("X", F, [1, 4096]), vi("Z", F, [1, 200, 1, 1])], [vi("V", F, None), vi("L", F, None)],
        [init("k", np.array([1], np.int64))]), 11)


if __name__ == "__main__":
    main()

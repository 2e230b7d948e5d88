#!/usr/bin/python3
"""Writes the committed models of the CLI tests in tests/cli/data (run with Debian's python3-onnx):

    /usr/bin/python3 tests/cli/generate.py

missing_ops.onnx: two ConvTransposes that the legalization rewrites (SAME_UPPER stride 2;
asymmetric pads), between ops tconv's runtime has no kernel for (MeanVarianceNormalization twice,
Bernoulli once: ops
issue 14 does not add), with
every shape declared. `tconv-import --check` proves each rewrite alone, names every missing op
with its count, skips the whole-model run and still writes the output. Reproducible byte for
byte."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def vinfo(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def missing_ops():
    rng = np.random.default_rng(12)
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w1"], ["u1"], name="up1", auto_pad="SAME_UPPER",
                         strides=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("MeanVarianceNormalization", ["u1"], ["n1"], name="mvn1"),
        helper.make_node("ConvTranspose", ["n1", "w2"], ["u2"], name="up2", strides=[2, 2],
                         kernel_shape=[3, 3], pads=[0, 1, 1, 0]),
        helper.make_node("MeanVarianceNormalization", ["u2"], ["n2"], name="mvn2"),
        helper.make_node("Bernoulli", ["n2"], ["y"], name="bernoulli", seed=1.0),
    ]
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")]
    graph = helper.make_graph(nodes, "missing_ops", [vinfo("x", [1, 4, 5, 6])],
                              [vinfo("y", [1, 2, 20, 24])], inits,
                              value_info=[vinfo("u1", [1, 3, 10, 12]), vinfo("n1", [1, 3, 10, 12]),
                                          vinfo("u2", [1, 2, 20, 24]), vinfo("n2", [1, 2, 20, 24])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="tconv-tests-cli")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def unknown_shape():
    """A ConvTranspose (SAME_UPPER stride 2) fed by an op of a custom domain: neither shape
    inference nor the runtime knows it and no shape is declared, so the local proof takes the
    input's rank and channels from the weights and tries a few spatial sizes."""
    rng = np.random.default_rng(13)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Scale", ["x"], ["s"], name="scale", domain="com.example"),
        helper.make_node("ConvTranspose", ["s", "w"], ["y"], name="up", auto_pad="SAME_UPPER",
                         strides=[2, 2], kernel_shape=[3, 3]),
    ]
    graph = helper.make_graph(nodes, "unknown_shape", [vinfo("x", [1, 4, 5, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)],
                              producer_name="tconv-tests-cli")
    model.ir_version = 8
    return model


def main():
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    onnx.save(missing_ops(), os.path.join(HERE, "data", "missing_ops.onnx"))
    onnx.save(unknown_shape(), os.path.join(HERE, "data", "unknown_shape.onnx"))


if __name__ == "__main__":
    main()

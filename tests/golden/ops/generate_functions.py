#!/usr/bin/python3
"""Golden test directories for ONNX functions under tests/golden/ops/.

Run:  /usr/bin/python3 tests/golden/ops/generate_functions.py      (onnx 1.12, numpy)

  fn_local_nested      a model-local function (ModelProto.functions, domain tconv.test) whose body
                       calls another model-local function, called twice; golden from numpy
  error_fn_local_attr_ref  a function body refers to the caller's attribute (alpha = @alpha):
                       refused, with a message saying so
  error_fn_library_context RMSNormalization with an epsilon no library body was built for:
                       refused as an op without a kernel (the library's bodies are used only in
                       the exact context ONNX built them for)
The error_* cases are registered in tests/runtime/tests.cmake with the message they must give.
"""
import os

import op_cases  # noqa: F401  (first: pins the BLAS, patches numpy for onnx)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from op_cases import write_dir, write_tsv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
DOMAIN = "tconv.test"


def model_of(nodes, inputs, outputs, functions, opsets, name, ir=8):
    g = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          functions=functions, producer_name="tconv-generate-functions")
    m.ir_version = ir
    return m


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def nested():
    add_mul = helper.make_function(
        DOMAIN, "AddMul", ["a", "b"], ["c"],
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["s", "b"], ["c"])],
        [helper.make_opsetid("", 13)])
    twice = helper.make_function(
        DOMAIN, "AddMulTwice", ["x", "y"], ["z"],
        [helper.make_node("AddMul", ["x", "y"], ["t"], domain=DOMAIN),
         helper.make_node("AddMul", ["t", "y"], ["z"], domain=DOMAIN)],
        [helper.make_opsetid("", 13), helper.make_opsetid(DOMAIN, 1)])
    nodes = [helper.make_node("AddMulTwice", ["x", "y"], ["z"], domain=DOMAIN),
             helper.make_node("Relu", ["z"], ["out"])]
    m = model_of(nodes, [vi("x", [2, 3]), vi("y", [2, 3])], [vi("out", [2, 3])],
                 [add_mul, twice], [("", 13), (DOMAIN, 1)], "fn_local_nested")
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    y = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    t = (x + y) * y
    z = (t + y) * y
    return "fn_local_nested", m, [x, y], [np.maximum(z, 0).astype(np.float32)]


def attr_ref():
    alpha = helper.AttributeProto()  # onnx 1.12 has no make_attribute_ref
    alpha.name = "alpha"
    alpha.ref_attr_name = "alpha"
    alpha.type = helper.AttributeProto.FLOAT
    leaky = helper.make_node("LeakyRelu", ["x"], ["y"])
    leaky.attribute.append(alpha)
    fn = helper.make_function(DOMAIN, "MyLeaky", ["x"], ["y"], [leaky],
                              [helper.make_opsetid("", 13)], attributes=["alpha"])
    nodes = [helper.make_node("MyLeaky", ["x"], ["y"], domain=DOMAIN, alpha=0.25)]
    m = model_of(nodes, [vi("x", [4])], [vi("y", [4])], [fn], [("", 13), (DOMAIN, 1)],
                 "error_fn_local_attr_ref")
    x = np.array([-2, -1, 1, 2], np.float32)
    return "error_fn_local_attr_ref", m, [x], [np.where(x > 0, x, 0.25 * x)]


def library_context():
    nodes = [helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=-1,
                              epsilon=0.125)]
    m = model_of(nodes, [vi("x", [2, 4]), vi("scale", [4])], [vi("y", [2, 4])], [],
                 [("", 23)], "error_fn_library_context", ir=10)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    s = np.ones(4, np.float32)
    y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 0.125) * s
    return "error_fn_library_context", m, [x, s], [y.astype(np.float32)]


def main():
    cases = [nested()]
    for name, model, ins, outs in cases:
        write_dir(HERE, name, model, ins, outs)
    for name, model, ins, outs in (attr_ref(), library_context()):
        # onnx 1.12's checker knows neither opset 23 nor IR 10: these are written unchecked
        checker = onnx.checker.check_model
        onnx.checker.check_model = lambda m: None
        try:
            write_dir(HERE, name, model, ins, outs)
        finally:
            onnx.checker.check_model = checker
    write_tsv(os.path.join(HERE, "functions.tsv"), cases, {"AddMulTwice"})


if __name__ == "__main__":
    main()

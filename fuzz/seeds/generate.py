#!/usr/bin/python3
"""Curated fuzz seeds for what the conformance data lacks (committed; rerun to regenerate):

    /usr/bin/python3 fuzz/seeds/generate.py

load_save + legalize_check: subgraphs (If with a ConvTranspose inside, Loop, Scan), a local
function, a sparse initializer, metadata, string and typed-field initializers.
tensor_decode: one TensorProto per dtype in its typed field (and raw), strings, empty tensors."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def write(sub, name, data):
    os.makedirs(os.path.join(HERE, sub), exist_ok=True)
    with open(os.path.join(HERE, sub, name), "wb") as f:
        f.write(data)


def model(graph, name, functions=()):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("local", 1)],
                          functions=list(functions), producer_name="tconv-fuzz-seeds")
    m.ir_version = 8
    helper.set_model_props(m, {"author": "tconv", "purpose": "fuzz seed"})
    data = m.SerializeToString()
    write("load_save", name, data)
    write("legalize_check", name, data)


def conv_transpose_in_if():
    w = helper.make_tensor("W", TensorProto.FLOAT, [2, 1, 3, 3],
                           (np.arange(18, dtype=np.float32) / 7).tolist())
    yv = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    then_g = helper.make_graph([helper.make_node(
        "ConvTranspose", ["X", "W"], ["Y"], name="ct_then", strides=[2, 2],
        output_shape=[5, 6], group=1)], "then", [], [yv])
    else_g = helper.make_graph([helper.make_node(
        "ConvTranspose", ["X", "W"], ["Y"], name="ct_else", strides=[2, 1], pads=[1, 0, 0, 1],
        output_padding=[1, 0])], "else", [], [yv])
    g = helper.make_graph(
        [helper.make_node("If", ["C"], ["Y"], name="branch", then_branch=then_g,
                          else_branch=else_g)],
        "main",
        [helper.make_tensor_value_info("C", TensorProto.BOOL, []),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [w])
    model(g, "if_conv_transpose.onnx")


def loop_scan_function():
    body = helper.make_graph(
        [helper.make_node("Add", ["v", "one"], ["v_out"], name="inc"),
         helper.make_node("Identity", ["cond"], ["cond_out"], name="keep")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2])])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"], name="acc"),
         helper.make_node("Identity", ["s2"], ["y"], name="emit")],
        "scan_body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("s2", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    fn = helper.make_function("local", "Twice", ["a"], ["b"],
                              [helper.make_node("Add", ["a", "a"], ["b"], name="double")],
                              [helper.make_opsetid("", 17)])
    one = helper.make_tensor("one", TensorProto.FLOAT, [2], [1.0, 1.0])
    n = helper.make_tensor("N", TensorProto.INT64, [], [3])
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("sp", TensorProto.FLOAT, [2], [5.0, 6.0]),
        helper.make_tensor("sp_idx", TensorProto.INT64, [2], [0, 3]), [4])
    names = helper.make_tensor("names", TensorProto.STRING, [2], [b"a", b"bc"])
    half = helper.make_tensor("half", TensorProto.FLOAT16, [2], np.array([1, 2], np.float16))
    g = helper.make_graph(
        [helper.make_node("Loop", ["N", "", "V"], ["V_final"], name="loop", body=body),
         helper.make_node("Scan", ["V_final", "XS"], ["S", "YS"], name="scan", body=scan_body,
                          num_scan_inputs=1),
         helper.make_node("Twice", ["S"], ["Y"], name="twice", domain="local")],
        "main",
        [helper.make_tensor_value_info("V", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("XS", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("YS", TensorProto.FLOAT, [3, 2])],
        [one, n, names, half], sparse_initializer=[sparse])
    model(g, "loop_scan_function.onnx", [fn])


def tensors():
    rng = np.random.default_rng(7)
    for dtype, np_type in [(TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64),
                           (TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8),
                           (TensorProto.INT16, np.int16), (TensorProto.UINT16, np.uint16),
                           (TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64),
                           (TensorProto.UINT32, np.uint32), (TensorProto.UINT64, np.uint64),
                           (TensorProto.BOOL, np.bool_), (TensorProto.FLOAT16, np.float16),
                           (TensorProto.COMPLEX64, np.complex64)]:
        values = (rng.standard_normal(6) * 10).astype(np_type)
        name = TensorProto.DataType.Name(dtype).lower()
        typed = helper.make_tensor("t", dtype, [2, 3], values.tolist() if dtype != TensorProto.FLOAT16 else values)
        write("tensor_decode", f"{name}_typed.pb", typed.SerializeToString())
        raw = numpy_helper.from_array(values.reshape(2, 3), "t")
        write("tensor_decode", f"{name}_raw.pb", raw.SerializeToString())
    bf16 = helper.make_tensor("t", TensorProto.BFLOAT16, [3], [1.0, -2.5, 3.0])
    write("tensor_decode", "bfloat16_typed.pb", bf16.SerializeToString())
    strings = helper.make_tensor("t", TensorProto.STRING, [3], [b"", b"x", b"\xff\x00z"])
    write("tensor_decode", "string.pb", strings.SerializeToString())
    empty = helper.make_tensor("t", TensorProto.FLOAT, [0, 5], [])
    write("tensor_decode", "empty.pb", empty.SerializeToString())
    scalar = helper.make_tensor("t", TensorProto.INT64, [], [42])
    write("tensor_decode", "scalar.pb", scalar.SerializeToString())


if __name__ == "__main__":
    conv_transpose_in_if()
    loop_scan_function()
    tensors()

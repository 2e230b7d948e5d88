#!/usr/bin/env python3
"""Golden data for the ConvTranspose -> Conv lowerings (src/passes/lower_phase.c).

    /usr/bin/python3 tests/golden/generate_phase.py

Deletes and rewrites tests/golden/phase/: one folder per case (model.onnx with one VALID
ConvTranspose node, test_data_set_N/ with its inputs and the expected Y) and phase/cases.tsv,
one line per case: name, dtype, atol, rtol, form (what the lowering must emit: conv = one Conv,
stride 1; one = one Conv with s^r * C_out channels; multi = one Conv per phase with taps).

Golden values never come from tconv: torch.nn.functional.conv_transpose{1,2,3}d in float64 on the
inputs as stored (float16 inputs are rounded first; QDQ weights are dequantized in numpy), plus
the bias, rounded once to the case's type.

Tolerance (|got - golden| <= atol + rtol*|golden|). The lowering sums the same products as the
ConvTranspose in another order, so no fixed number can be right for every case: each case gets
the worst-case bound of a recursive sum (Higham, gamma_n), independent of the order:
    atol = 2 * (n + 2) * u * max over outputs of sum |x*w| (+ |b|)
with n = C_in/group * prod(k) terms (an upper bound of the terms of one output), u the unit
roundoff of the accumulation (2^-24: tconv accumulates float32 and float16 in float32; 2^-53 for
float64), the factor 2 for the runtime's blocked sums and FMA contractions; rtol is the rounding of
the result to its type, twice (the golden value and the computed one are each rounded once):
2^-23 float32, 2^-10 float16 (plus one more 2^-11 relative to the intermediate when the bias is
added after the interleave: covered by doubling to 2^-9), 2^-52 float64.
Every model passes onnx.checker (onnx 1.12) except the QDQ ones, whose DequantizeLinear fits too.
"""

import collections
import math
import os
import shutil
import zlib

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "phase")
IR_VERSION = {9: 4, 11: 6, 13: 7, 17: 8}
ELEM = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "float64": TensorProto.DOUBLE}
NP = {"float32": np.float32, "float16": np.float16, "float64": np.float64}
UNIT = {"float32": 2.0 ** -24, "float16": 2.0 ** -24, "float64": 2.0 ** -53}
RTOL = {"float32": 2.0 ** -23, "float16": 2.0 ** -9, "float64": 2.0 ** -52}

# x: spatial sizes per data set (first one is also the declared shape unless `dynamic`)
Case = collections.namedtuple(
    "Case", "name x c_in c_out_g group k s d batch bias dtype opset dynamic qdq w_input")


def case(name, x, c_in, c_out_g, k, s, d=None, group=1, batch=1, bias="init",
         dtype="float32", opset=13, dynamic=None, qdq=None, w_input=False):
    r = len(k)
    d = d or [1] * r
    xs = x if isinstance(x[0], (list, tuple)) else [x]
    return Case(name, [list(v) for v in xs], c_in, c_out_g, group, list(k), list(s), list(d),
                batch, bias, dtype, opset, dynamic, qdq, w_input)


CASES = [
    # 1-D
    case("r1_k3_s2", [7], 3, 2, [3], [2]),
    case("r1_k2_s4_stride_above_kernel", [5], 2, 3, [2], [4]),
    case("r1_k5_s3", [6], 2, 2, [5], [3], batch=2),
    case("r1_k4_s1_d3_conv_form", [6], 3, 2, [4], [1], [3]),
    case("r1_k3_s2_d2_empty_phases", [6], 2, 2, [3], [2], [2]),
    case("r1_k3_s3_d2_multi", [5], 2, 3, [3], [3], [2]),
    case("r1_k4_s2_g2", [6], 4, 3, [4], [2], group=2),
    case("r1_dynamic", [[7], [4]], 2, 2, [3], [2], dynamic=True),
    # 2-D
    case("r2_k3_s2", [5, 4], 3, 2, [3, 3], [2, 2]),
    case("r2_k4_s2_g2_batch3", [4, 5], 4, 3, [4, 4], [2, 2], group=2, batch=3),
    case("r2_k3_s1_d2_conv_form", [5, 4], 2, 3, [3, 3], [1, 1], [2, 2]),
    case("r2_k2x3_s3x2", [4, 3], 2, 2, [2, 3], [3, 2]),
    case("r2_k3_s5_stride_above_kernel", [3, 4], 2, 2, [3, 3], [5, 5]),
    case("r2_depthwise_k4_s2", [5, 5], 4, 1, [4, 4], [2, 2], group=4),
    case("r2_k3_s2_d2_empty_phases", [4, 5], 2, 2, [3, 3], [2, 2], [2, 2]),
    case("r2_k3_s3_d2_multi", [4, 3], 2, 2, [3, 3], [3, 3], [2, 2]),
    case("r2_k5_s4_d3_multi_g2", [3, 4], 4, 2, [5, 3], [4, 2], [3, 1], group=2),
    case("r2_k1_s2", [4, 3], 3, 2, [1, 1], [2, 2]),
    case("r2_k4_s4_exact", [3, 3], 2, 2, [4, 4], [4, 4]),
    case("r2_k3_s2_no_bias", [5, 4], 3, 2, [3, 3], [2, 2], bias=None),
    case("r2_k3_s2_bias_input", [5, 4], 3, 2, [3, 3], [2, 2], bias="input"),
    case("r2_k3_s2_d2_bias_input", [4, 4], 2, 2, [3, 3], [2, 2], [2, 2], bias="input"),
    case("r2_opset9", [5, 4], 3, 2, [3, 3], [2, 2], opset=9),
    case("r2_opset9_g2", [4, 4], 4, 2, [3, 3], [2, 2], group=2, opset=9),
    case("r2_opset11_multi", [4, 4], 2, 2, [3, 3], [3, 3], [2, 2], opset=11),
    case("r2_opset17", [4, 5], 2, 3, [4, 3], [2, 2], opset=17),
    case("r2_dynamic_hw", [[5, 4], [3, 6]], 2, 2, [3, 3], [2, 2], dynamic=True, batch=2),
    case("r2_dynamic_multi", [[4, 4], [5, 3]], 2, 2, [3, 3], [2, 2], [2, 2], dynamic=True),
    case("r2_k3_s2_float16", [5, 4], 3, 2, [3, 3], [2, 2], dtype="float16"),
    case("r2_k3_s2_d2_float16", [4, 4], 2, 2, [3, 3], [2, 2], [2, 2], dtype="float16"),
    case("r2_k3_s2_float64", [5, 4], 3, 2, [3, 3], [2, 2], dtype="float64"),
    case("r2_k2x3_s3x2_float64", [4, 3], 2, 2, [2, 3], [3, 2], dtype="float64"),
    # 3-D
    case("r3_k3_s2", [3, 4, 3], 2, 2, [3, 3, 3], [2, 2, 2]),
    case("r3_k2x3x2_s2x1x3_g2", [3, 3, 2], 4, 2, [2, 3, 2], [2, 1, 3], group=2),
    case("r3_k3_s1_d123_conv_form", [4, 5, 6], 2, 2, [3, 3, 2], [1, 1, 1], [1, 2, 3]),
    case("r3_k2_s2_d2_empty_phases", [3, 3, 3], 2, 2, [2, 2, 2], [2, 2, 2], [2, 2, 2]),
    case("r3_dynamic", [[3, 4, 2], [2, 3, 3]], 2, 2, [3, 2, 2], [2, 2, 1], dynamic=True),
    case("r3_k3_s2_float64", [3, 3, 3], 2, 2, [3, 3, 3], [2, 3, 2], dtype="float64"),
    # W a graph input (taps sliced at run time)
    case("w_input_r2_k3_s2", [4, 5], 3, 2, [3, 3], [2, 2], w_input=True),
    case("w_input_r1_k4_s1_d2", [6], 2, 3, [4], [1], [2], w_input=True),
    case("w_input_r2_k4_s2_d2_g2", [4, 4], 4, 2, [4, 3], [2, 2], [2, 1], group=2, w_input=True),
    # QDQ weights
    case("qdq_r2_int8_per_channel", [5, 4], 3, 2, [3, 3], [2, 2], qdq=("int8", "axis")),
    case("qdq_r2_uint8_per_tensor", [4, 4], 2, 3, [4, 4], [2, 2], qdq=("uint8", "tensor")),
    case("qdq_r2_int8_per_channel_g2_d2", [4, 4], 4, 2, [3, 3], [2, 2], [2, 2], group=2,
         qdq=("int8", "axis")),
    case("qdq_r1_int8_per_channel", [6], 2, 3, [5], [3], qdq=("int8", "axis")),
    case("qdq_r2_int8_bias_int32", [4, 5], 4, 2, [4, 4], [2, 2], group=2, bias="qdq",
         qdq=("int8", "axis")),
    case("qdq_r2_int8_bias_int32_per_phase", [4, 4], 2, 3, [3, 3], [2, 2], bias="qdq",
         qdq=("int8", "axis")),
]


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def make_weights(c, rng):
    w_shape = [c.c_in, c.c_out_g] + c.k
    if not c.qdq:
        return rng.standard_normal(w_shape).astype(NP[c.dtype]), None
    qtype, granularity = c.qdq
    info = np.iinfo(np.int8 if qtype == "int8" else np.uint8)
    q = rng.integers(info.min, info.max + 1, size=w_shape).astype(info.dtype)
    if granularity == "axis":
        scale = (rng.random(c.c_out_g) * 0.05 + 0.01).astype(np.float32)
        zp = rng.integers(-5 if qtype == "int8" else 120, 6 if qtype == "int8" else 136,
                          size=c.c_out_g).astype(info.dtype)
        sh = (1, -1) + (1,) * len(c.k)
        w = ((q.astype(np.float32) - zp.reshape(sh).astype(np.float32)) * scale.reshape(sh))
    else:
        scale = np.float32(0.02)
        zp = info.dtype.type(128 if qtype == "uint8" else 3)
        w = (q.astype(np.float32) - np.float32(zp)) * scale
    return w.astype(np.float32), (q, np.asarray(scale, np.float32), np.asarray(zp, info.dtype))


def conv_transpose64(x, w, c):
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[len(c.k)]
    return fn(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
              None, stride=c.s, dilation=c.d, groups=c.group).numpy()


def tensor(name, arr, dtype):
    return numpy_helper.from_array(arr.astype(NP[dtype]), name)


def build_model(c, w, qparams, b):
    r = len(c.k)
    elem = ELEM[c.dtype]
    spatial = [f"x{i}" for i in range(r)] if c.dynamic else c.x[0]
    x_shape = ["N" if c.dynamic else c.batch, c.c_in] + list(spatial)
    inputs = [helper.make_tensor_value_info("X", elem, x_shape)]
    inits, nodes = [], []
    if c.w_input:
        inputs.append(helper.make_tensor_value_info("W", elem, list(w.shape)))
    elif qparams is None:
        inits.append(tensor("W", w, c.dtype))
    else:
        q, scale, zp = qparams
        inits += [numpy_helper.from_array(q, "W_q"), numpy_helper.from_array(scale, "W_scale"),
                  numpy_helper.from_array(zp, "W_zero_point")]
        attrs = {"axis": 1} if c.qdq[1] == "axis" else {}
        nodes.append(helper.make_node("DequantizeLinear", ["W_q", "W_scale", "W_zero_point"],
                                      ["W"], name="dequantize_w", **attrs))
    node_inputs = ["X", "W"]
    if c.bias == "qdq":  # int32 bias, one scale per output channel (axis 0), as quantizers emit
        b_scale = np.full(b.shape, 0.001, np.float32)
        b_q = np.round(b / b_scale).astype(np.int32)
        inits += [numpy_helper.from_array(b_q, "B_q"), numpy_helper.from_array(b_scale, "B_scale")]
        nodes.insert(0, helper.make_node("DequantizeLinear", ["B_q", "B_scale"], ["B"],
                                         name="dequantize_b", axis=0))
        node_inputs.append("B")
    elif c.bias == "init":
        inits.append(tensor("B", b, c.dtype))
        node_inputs.append("B")
    elif c.bias == "input":
        inputs.append(helper.make_tensor_value_info("B", elem, [b.shape[0]]))
        node_inputs.append("B")
    nodes.append(helper.make_node("ConvTranspose", node_inputs, ["Y"], name=c.name,
                                  strides=c.s, dilations=c.d, group=c.group,
                                  kernel_shape=c.k, auto_pad="VALID"))
    if c.dynamic:
        y_shape = ["N", c.group * c.c_out_g] + [f"y{i}" for i in range(r)]
    else:
        y_shape = [c.batch, c.group * c.c_out_g] + [
            s * (x - 1) + (k - 1) * d + 1 for x, k, s, d in zip(c.x[0], c.k, c.s, c.d)]
    outputs = [helper.make_tensor_value_info("Y", elem, y_shape)]
    graph = helper.make_graph(nodes, c.name, inputs, outputs, inits)
    model = helper.make_model(graph, producer_name="tconv-golden-phase",
                              opset_imports=[helper.make_opsetid("", c.opset)])
    model.ir_version = IR_VERSION[c.opset]
    onnx.checker.check_model(model)
    return model


def expected_form(c):
    """The form tc_lower_conv_transpose_as_convs chooses by default (TC_PHASE_FORM_AUTO)."""
    if all(s == 1 for s in c.s):
        return "conv"
    if c.w_input:
        return "multi"  # a run-time W: its taps sliced per phase
    can_one = all(s == 1 or d == 1 for s, d in zip(c.s, c.d))
    padded = math.prod(-(-k // s) * s if s > 1 else k for k, s in zip(c.k, c.s))
    if can_one and padded <= 1.2 * math.prod(c.k):
        return "one"
    empty = any(all((j * d) % s != p for j in range(k))
                for k, s, d in zip(c.k, c.s, c.d) for p in range(s))
    if can_one and empty and c.opset < 9:
        return "one"  # the zeros of the empty phases need ConstantOfShape (opset 9)
    return "multi"


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    rows = []
    for c in CASES:
        rng = rng_for(c.name)
        w, qparams = make_weights(c, rng)
        c_out = c.c_out_g * c.group
        b = rng.standard_normal(c_out).astype(NP[c.dtype]) if c.bias else None
        if c.bias == "qdq":  # the value the int32 bias dequantizes to
            b = (np.round(b / np.float32(0.001)).astype(np.int32) * np.float32(0.001)).astype(
                np.float32)
        case_dir = os.path.join(ROOT, c.name)
        os.makedirs(case_dir)
        model = build_model(c, w, qparams, b)
        onnx.save(model, os.path.join(case_dir, "model.onnx"))
        n_terms = c.c_in // c.group * math.prod(c.k)
        worst = 0.0
        for n, xs in enumerate(c.x):
            x = rng.standard_normal([c.batch, c.c_in] + xs).astype(NP[c.dtype])
            y64 = conv_transpose64(x, w, c)
            bound = conv_transpose64(np.abs(x), np.abs(w), c)
            if b is not None:
                sh = (1, -1) + (1,) * len(c.k)
                y64 = y64 + b.astype(np.float64).reshape(sh)
                bound = bound + np.abs(b.astype(np.float64)).reshape(sh)
            worst = max(worst, float(bound.max()))
            data = os.path.join(case_dir, f"test_data_set_{n}")
            os.makedirs(data)
            feeds = [("X", x)] + ([("W", w)] if c.w_input else []) + (
                [("B", b)] if c.bias == "input" else [])
            for i, (name, arr) in enumerate(feeds):
                with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                    f.write(tensor(name, arr, c.dtype).SerializeToString())
            with open(os.path.join(data, "output_0.pb"), "wb") as f:
                f.write(tensor("Y", y64.astype(NP[c.dtype]), c.dtype).SerializeToString())
        atol = 2 * (n_terms + 2) * UNIT[c.dtype] * worst
        if c.dtype == "float16":
            atol += 2.0 ** -11 * worst  # the stored intermediate before a bias Add
        rows.append((c.name, c.dtype, f"{atol:.3g}", f"{RTOL[c.dtype]:.3g}", expected_form(c)))
    with open(os.path.join(ROOT, "cases.tsv"), "w") as f:
        f.write("name\tdtype\tatol\trtol\tform\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    print(f"{len(rows)} cases in {ROOT}")


if __name__ == "__main__":
    main()

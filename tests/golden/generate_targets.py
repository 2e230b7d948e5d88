#!/usr/bin/env python3
"""Golden data for the backend-target lowerings (issue 21; src/passes/target_lower.c and the
lowerings it composes: pad forms, 1-D through 2-D, groups split, dilation folded, the phase form).

    /usr/bin/python3 tests/golden/generate_targets.py

Deletes and rewrites tests/golden/targets/: one folder per case (model.onnx with one
ConvTranspose whose W and B are initializers, as deployed models have them, so every lowering can
edit them as constants; test_data_set_0 with X and the expected Y) and targets/cases.tsv: name,
dtype, atol, rtol.

The cases cover what each lowering must get right: rank 1-3, groups (2, 3, depthwise), dilation
1-3, stride 1-5 both below and above the kernel, every pad form (none, VALID, symmetric, uniform,
asymmetric, SAME_UPPER, SAME_LOWER, output_shape), output_padding, batch > 1, and float32,
float16 and float64.

Golden values never come from tconv: generate.py's reference (torch conv_transpose in float64 on
the inputs as stored, then ONNX's crop/extend and the bias, docs/semantics.md), rounded once to
the case's type.

Tolerance (|got - golden| <= atol + rtol*|golden|). The phase form sums the same products in
another order, so each case gets the order-independent bound of a recursive sum (Higham,
gamma_n), as generate_phase.py does:
    atol = 2 * (n + 2) * u * max over outputs of sum |x*w| (+ |b|)
n = C_in/group * prod(k) terms, u = 2^-24 (float32 and float16 accumulate in float32) or 2^-53
(float64); rtol = two roundings to the type: 2^-23 float32, 2^-9 float16, 2^-52 float64. A
float16 result whose bias is added after the ConvTranspose (a bias Add after a Pad, or after the
phase form's interleave) is rounded once more as an intermediate, whose size is that of the sum
before the bias, not of the result (they cancel): float16 atol adds 2^-10 * max sum |x*w|, two
such half units.
"""

import os
import shutil
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate as g  # noqa: E402  (the reference semantics and the model writer)

ROOT = os.path.join(HERE, "targets")

DTYPES = {
    "float32": (np.float32, TensorProto.FLOAT, 2.0 ** -24, 2.0 ** -23),
    "float16": (np.float16, TensorProto.FLOAT16, 2.0 ** -24, 2.0 ** -9),
    "float64": (np.float64, TensorProto.DOUBLE, 2.0 ** -53, 2.0 ** -52),
}


def c(name, x_shape, w_shape, **attrs):
    return g.case(name, x_shape, w_shape, opset=13, bias=True, w_init=True, b_init=True, **attrs)


def cases():
    return [
        # rank 1: strides below, equal to and above the kernel; each pad form
        c("r1_k3_s2_pads1", (1, 3, 7), (3, 2, 3), strides=[2], pads=[1, 1]),
        c("r1_k4_s4", (2, 2, 5), (2, 3, 4), strides=[4]),
        c("r1_k2_s5_stride_above", (1, 2, 4), (2, 2, 2), strides=[5]),
        c("r1_k3_s1_pads1", (1, 4, 6), (4, 2, 3), pads=[1, 1]),
        c("r1_k5_s3_d2", (1, 2, 5), (2, 2, 5), strides=[3], dilations=[2]),
        c("r1_k3_s2_d3_asym", (1, 2, 6), (2, 3, 3), strides=[2], dilations=[3], pads=[2, 0]),
        c("r1_g2_k3_s2", (1, 4, 5), (4, 3, 3), strides=[2], group=2),
        c("r1_depthwise_k4_s2", (2, 4, 6), (4, 1, 4), strides=[2], group=4, pads=[1, 1]),
        c("r1_op1_k3_s2", (1, 2, 5), (2, 2, 3), strides=[2], pads=[1, 1], output_padding=[1]),
        c("r1_same_upper_k4_s2", (1, 3, 5), (3, 2, 4), strides=[2], auto_pad="SAME_UPPER"),
        c("r1_same_lower_k3_s2", (1, 3, 5), (3, 2, 3), strides=[2], auto_pad="SAME_LOWER"),
        c("r1_output_shape_k3_s3", (1, 2, 4), (2, 2, 3), strides=[3], output_shape=[11]),
        c("r1_valid_k2_s2", (1, 2, 6), (2, 2, 2), strides=[2], auto_pad="VALID"),
        # rank 2
        c("r2_k3_s2_same_upper", (1, 3, 5, 4), (3, 2, 3, 3), strides=[2, 2],
          auto_pad="SAME_UPPER"),
        c("r2_k4_s2_uniform1", (1, 2, 4, 5), (2, 3, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1]),
        c("r2_k3_s2_sym_1_2", (1, 2, 4, 4), (2, 2, 3, 5), strides=[2, 2], pads=[1, 2, 1, 2]),
        c("r2_k5_s2_asym", (1, 2, 4, 3), (2, 2, 5, 5), strides=[2, 2], pads=[0, 2, 3, 1]),
        c("r2_k3_s3_d3", (1, 2, 3, 4), (2, 2, 3, 3), strides=[3, 3], dilations=[3, 3]),
        c("r2_k3_s1_d2_g2", (1, 4, 5, 5), (4, 2, 3, 3), dilations=[2, 2], group=2,
          pads=[1, 1, 1, 1]),
        c("r2_depthwise_k3_s2", (2, 3, 4, 4), (3, 1, 3, 3), strides=[2, 2], group=3,
          pads=[1, 1, 1, 1], output_padding=[1, 1]),
        c("r2_g3_k2_s2", (1, 6, 3, 4), (6, 1, 2, 2), strides=[2, 2], group=3),
        c("r2_d2x3_k2x3_s1x2", (1, 2, 5, 4), (2, 2, 2, 3), strides=[1, 2], dilations=[2, 3]),
        c("r2_k2_s4", (1, 2, 3, 3), (2, 2, 2, 2), strides=[4, 4]),
        c("r2_k3_s5x1", (1, 2, 3, 4), (2, 2, 3, 3), strides=[5, 1], pads=[1, 1, 1, 1]),
        c("r2_k1_s2", (1, 3, 4, 4), (3, 2, 1, 1), strides=[2, 2]),
        c("r2_op_1x0_k3_s2", (1, 2, 4, 4), (2, 2, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1],
          output_padding=[1, 0]),
        c("r2_output_shape_k4_s2", (1, 2, 4, 4), (2, 2, 4, 4), strides=[2, 2],
          output_shape=[9, 8]),
        c("r2_same_lower_k4_s3", (1, 2, 3, 4), (2, 2, 4, 4), strides=[3, 3],
          auto_pad="SAME_LOWER"),
        c("r2_batch3_k3_s2", (3, 2, 4, 5), (2, 2, 3, 3), strides=[2, 2], pads=[0, 1, 1, 0]),
        c("r2_k4_s2_s1_mixed", (1, 2, 4, 4), (2, 2, 4, 3), strides=[2, 1]),
        # rank 3
        c("r3_k3_s2_pads1", (1, 2, 3, 3, 3), (2, 2, 3, 3, 3), strides=[2, 2, 2],
          pads=[1, 1, 1, 1, 1, 1]),
        c("r3_k2_s2_g2", (1, 4, 2, 3, 2), (4, 1, 2, 2, 2), strides=[2, 2, 2], group=2),
        c("r3_k3_s1_d2", (1, 2, 3, 3, 3), (2, 2, 3, 3, 3), dilations=[2, 2, 2]),
        c("r3_k2_s3", (2, 2, 2, 2, 2), (2, 2, 2, 2, 2), strides=[3, 3, 3]),
        c("r3_k1x3x3_s1x2x2_same_upper", (1, 2, 3, 4, 4), (2, 2, 1, 3, 3), strides=[1, 2, 2],
          auto_pad="SAME_UPPER"),
    ]


# Cases also written in float16 and float64.
OTHER_DTYPES = ["r1_k5_s3_d2", "r1_depthwise_k4_s2", "r2_k3_s2_same_upper", "r2_k3_s1_d2_g2",
                "r2_k5_s2_asym", "r3_k3_s2_pads1"]


def golden(x, w, b, attrs):
    """float64 ConvTranspose of the stored inputs (generate.py's reference, without its cast)."""
    r = g.resolve(x.shape, w.shape, attrs)
    full = g.full_valid(x, w, r)
    return g.add_bias(g.crop_or_extend(full, r.pb, r.out), b), r


def tolerance(x, w, b, r, dtype):
    """The order-independent bound of module docstring, for this case's data."""
    _, _, u, rtol = DTYPES[dtype]
    ax, aw = np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64))
    bound = g.add_bias(g.crop_or_extend(g.full_valid(ax, aw, r), r.pb, r.out),
                       None if b is None else np.abs(b.astype(np.float64)))
    n = (w.shape[0] // r.group) * int(np.prod(r.kernel))
    atol = 2 * (n + 2) * u * float(bound.max())
    if dtype == "float16":
        atol += 2.0 ** -10 * float(g.full_valid(ax, aw, r).max())
    return atol, rtol


def write(case, dtype, rows):
    np_type, elem, _, _ = DTYPES[dtype]
    x, w, b = (a.astype(np_type) for a in g.case_data(case))
    y64, r = golden(x, w, b, case.attrs)
    # cross-check: torch alone where the pads map to torch's padding/output_padding
    direct = g.torch_direct(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32), r)
    if direct is not None:
        g.assert_close(case.name + " (torch direct)", direct, y64.astype(np.float32))
    y = y64.astype(np_type)
    name = case.name if dtype == "float32" else f"{dtype}_{case.name}"
    case = case._replace(name=name)
    case_dir = os.path.join(ROOT, name)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir)
    model = g.build_model(case, (x, w, b), y.shape, elem=elem, producer="tconv-golden-targets")
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    g.write_tensor(os.path.join(data_dir, "input_0.pb"), x, "X")
    g.write_tensor(os.path.join(data_dir, "output_0.pb"), y, "Y")
    atol, rtol = tolerance(x, w, b, r, dtype)
    rows.append([name, dtype, f"{atol:.3g}", f"{rtol:.3g}"])


def main():
    torch.use_deterministic_algorithms(True)
    if os.path.exists(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    rows = []
    all_cases = cases()
    assert len({k.name for k in all_cases}) == len(all_cases)
    for case in all_cases:
        write(case, "float32", rows)
    by_name = {k.name: k for k in all_cases}
    for dtype in ("float16", "float64"):
        for name in OTHER_DTYPES:
            write(by_name[name], dtype, rows)
    with open(os.path.join(ROOT, "cases.tsv"), "w") as f:
        for row in [["name", "dtype", "atol", "rtol"]] + rows:
            f.write("\t".join(row) + "\n")
    print(f"{len(rows)} cases in {ROOT}")


if __name__ == "__main__":
    main()

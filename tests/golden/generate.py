#!/usr/bin/env python3
"""Generate tconv's golden ConvTranspose test data.

Run with a Python that has onnx, torch and numpy (on the dev box: /usr/bin/python3):

    /usr/bin/python3 tests/golden/generate.py [--node-tests DIR]

It deletes and rewrites tests/golden/convtranspose/ and tests/golden/matrix/ (model.onnx +
test_data_set_0/*.pb per case, plus a cases.tsv per set). Everything is deterministic.

Golden values never come from tconv. They are computed by `reference()` below:
  1. the full VALID result F via torch.nn.functional.conv_transpose{1,2,3}d in float64
     (padding=0, output_padding=0, no bias);
  2. pb/pe/out resolved per tconv's docs/semantics.md (`resolve()`);
  3. out[o] = full[o + pb] where 0 <= o + pb < F, else 0 (numpy), then bias added everywhere.
Before writing anything, `reference()` is checked against every ONNX conformance test
test_convtranspose*/ of ONNX v1.22.0 (tests/data), and each generated case whose resolved pads are
expressible as PyTorch padding/output_padding is recomputed directly by torch and compared.
"""

import argparse
import collections
import glob
import os
import shutil
import sys
import zlib

import numpy as np
import onnx
import torch
import torch.nn.functional as torch_f
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
IR_VERSION = {11: 6, 13: 7, 17: 8}
SAME_MODES = ("SAME_UPPER", "SAME_LOWER")
TOLERANCE = 1e-5
MATRIX_SEED = 20240611
MATRIX_COUNT = 300
MATRIX_MAX_FLOATS = 1500  # X + W + B + Y (+ initializers again) per matrix case

# A case: the node's attributes exactly as written to the model (absent = not set), the X and W
# shapes, and where W/B live. Everything else (pads, output shape, data) is derived.
Case = collections.namedtuple(
    "Case", "name opset x_shape w_shape attrs bias w_init b_init")

Resolved = collections.namedtuple(
    "Resolved", "kernel strides dilations output_padding group pb pe full out")


def case(name, x_shape, w_shape, opset=13, bias=False, w_init=False, b_init=False, **attrs):
    return Case(name, opset, tuple(x_shape), tuple(w_shape), attrs, bias, w_init, b_init)


# ---------------------------------------------------------------------------------------------
# Reference semantics (docs/semantics.md)
# ---------------------------------------------------------------------------------------------

def resolve_axis(x, k, s, d, op, auto_pad, pad_begin, pad_end, output_size):
    """Return (pb, pe, F, out) for one spatial axis. Python's // is floor division."""
    ke = (k - 1) * d + 1
    full = s * (x - 1) + ke
    if output_size is not None:
        total = full + op - output_size
        pb = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        pe = total - pb
    elif auto_pad in SAME_MODES:
        total = op + ke - s
        if auto_pad == "SAME_UPPER":
            pb = total // 2
            pe = total - pb
        else:
            pe = total // 2
            pb = total - pe
    elif auto_pad == "VALID":
        pb = pe = 0
    else:
        pb, pe = pad_begin, pad_end
    return pb, pe, full, full - pb - pe + op


def resolve(x_shape, w_shape, attrs):
    """Resolve a ConvTranspose node's attributes (ONNX defaults applied) for static shapes."""
    rank = len(x_shape) - 2
    kernel = list(attrs.get("kernel_shape", w_shape[2:]))
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    op = list(attrs.get("output_padding", [0] * rank))
    pads = list(attrs.get("pads", [0] * 2 * rank))
    group = attrs.get("group", 1)
    auto_pad = attrs.get("auto_pad", "NOTSET")
    output_shape = attrs.get("output_shape")
    if output_shape is not None:
        assert len(output_shape) in (rank, rank + 2), output_shape
        output_shape = list(output_shape)[-rank:]
    assert len(w_shape) == rank + 2 and kernel == list(w_shape[2:]), (kernel, w_shape)
    assert len(strides) == len(dilations) == len(op) == rank and len(pads) == 2 * rank
    assert x_shape[1] == w_shape[0] and x_shape[1] % group == 0, (x_shape, w_shape, group)
    pb, pe, full, out = [], [], [], []
    for i in range(rank):
        assert op[i] < max(strides[i], dilations[i]), "output_padding too large"
        b, e, f, o = resolve_axis(x_shape[2 + i], kernel[i], strides[i], dilations[i], op[i],
                                  auto_pad, pads[i], pads[rank + i],
                                  None if output_shape is None else output_shape[i])
        assert o > 0, "non-positive output size"
        pb.append(b)
        pe.append(e)
        full.append(f)
        out.append(o)
    return Resolved(kernel, strides, dilations, op, group, pb, pe, full, out)


def torch_conv_transpose(rank):
    return {1: torch_f.conv_transpose1d, 2: torch_f.conv_transpose2d,
            3: torch_f.conv_transpose3d}[rank]


def full_valid(x, w, r):
    """F: the VALID ConvTranspose (no pads, no output_padding, no bias), float64."""
    fn = torch_conv_transpose(len(r.strides))
    y = fn(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
           None, stride=tuple(r.strides), padding=0, output_padding=0, groups=r.group,
           dilation=tuple(r.dilations))
    return y.numpy()


def crop_or_extend(full, pb, out):
    """out[o] = full[o + pb] where 0 <= o + pb < F, else 0 (per spatial axis)."""
    y = np.zeros(full.shape[:2] + tuple(out), dtype=full.dtype)
    dst, src = [slice(None)] * 2, [slice(None)] * 2
    for p, o, f in zip(pb, out, full.shape[2:]):
        lo, hi = max(0, -p), min(o, f - p)
        if hi <= lo:
            return y  # nothing of F reaches the output
        dst.append(slice(lo, hi))
        src.append(slice(lo + p, hi + p))
    y[tuple(dst)] = full[tuple(src)]
    return y


def add_bias(y, b):
    if b is None:
        return y
    return y + b.astype(np.float64).reshape((1, -1) + (1,) * (y.ndim - 2))


def reference(x, w, b, attrs):
    """Golden ConvTranspose output (float32) and its resolved pads."""
    r = resolve(x.shape, w.shape, attrs)
    full = full_valid(x, w, r)
    assert list(full.shape[2:]) == r.full, (full.shape, r.full)
    y = add_bias(crop_or_extend(full, r.pb, r.out), b)
    return y.astype(np.float32), r


def torch_direct(x, w, b, r):
    """Same output computed by torch alone, when pb/pe map to torch padding/output_padding.

    torch: padding p crops p at both ends of F, output_padding q then extends the end (with
    zeros + bias past F). That is pb = p and pe - op = p - q, so p = pb, q = pb - pe + op.
    Returns None when not representable (pb < 0 or q outside [0, max(s, d)))."""
    q = [b_ - e + o for b_, e, o in zip(r.pb, r.pe, r.output_padding)]
    if any(p < 0 for p in r.pb):
        return None
    if any(not 0 <= qi < max(s, d) for qi, s, d in zip(q, r.strides, r.dilations)):
        return None
    fn = torch_conv_transpose(len(r.strides))
    bias = None if b is None else torch.from_numpy(b.astype(np.float64))
    y = fn(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
           bias, stride=tuple(r.strides), padding=tuple(r.pb), output_padding=tuple(q),
           groups=r.group, dilation=tuple(r.dilations))
    return y.numpy().astype(np.float32)


def scatter_reference(x, w, b, r):
    """Textbook ConvTranspose, independent of F and of crop_or_extend: every input element
    x[n, ci, i] adds x * w[ci, co, k] to y[n, co, i*s + k*d - pb] when that index is inside
    [0, out). Slow, small tensors only."""
    cin_g, cout_g = x.shape[1] // r.group, w.shape[1]
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    y = np.zeros((x.shape[0], cout_g * r.group) + tuple(r.out))
    for i in np.ndindex(*x.shape[2:]):
        for k in np.ndindex(*w.shape[2:]):
            o = tuple(ii * s + kk * d - p for ii, kk, s, d, p
                      in zip(i, k, r.strides, r.dilations, r.pb))
            if not all(0 <= oi < n for oi, n in zip(o, r.out)):
                continue
            for g in range(r.group):
                ci, co = slice(g * cin_g, (g + 1) * cin_g), slice(g * cout_g, (g + 1) * cout_g)
                y[(slice(None), co) + o] += x64[(slice(None), ci) + i] @ w64[(ci, slice(None)) + k]
    return add_bias(y, b).astype(np.float32)


def assert_close(what, got, want):
    if got.shape != want.shape:
        sys.exit(f"FAIL {what}: shape {got.shape} != expected {want.shape}")
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0))
    if err > TOLERANCE * max(1.0, float(np.max(np.abs(want), initial=0.0))):
        sys.exit(f"FAIL {what}: max abs error {err}")
    return err


# ---------------------------------------------------------------------------------------------
# Cross-check against the ONNX conformance tests
# ---------------------------------------------------------------------------------------------

def node_attrs(node):
    attrs = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        attrs[a.name] = v.decode() if isinstance(v, bytes) else (list(v) if isinstance(v, list) else v)
    return attrs


def load_onnx_test(test_dir):
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    feeds = [i.name for i in model.graph.input if i.name not in values]
    for idx, name in enumerate(feeds):
        t = onnx.TensorProto()
        with open(os.path.join(test_dir, "test_data_set_0", f"input_{idx}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        values[name] = numpy_helper.to_array(t)
    expected = onnx.TensorProto()
    with open(os.path.join(test_dir, "test_data_set_0", "output_0.pb"), "rb") as f:
        expected.ParseFromString(f.read())
    return model.graph.node[0], values, numpy_helper.to_array(expected)


def check_onnx_conformance(node_tests):
    dirs = sorted(glob.glob(os.path.join(node_tests, "test_convtranspose*")))
    if len(dirs) != 11:
        sys.exit(f"FAIL: {len(dirs)} ONNX conformance tests test_convtranspose* under {node_tests}, "
                 "expected 11")
    for d in dirs:
        node, values, expected = load_onnx_test(d)
        inputs = [values[n] if n else None for n in node.input] + [None] * 3
        got, _ = reference(inputs[0], inputs[1], inputs[2], node_attrs(node))
        err = assert_close(os.path.basename(d), got, expected)
        r = resolve(inputs[0].shape, inputs[1].shape, node_attrs(node))
        assert_close(os.path.basename(d) + " (scatter)",
                     scatter_reference(inputs[0], inputs[1], inputs[2], r), expected)
        print(f"  onnx conformance {os.path.basename(d)}: ok (max abs err {err:.2e})")
    return len(dirs)


# ---------------------------------------------------------------------------------------------
# Writing a case
# ---------------------------------------------------------------------------------------------

def case_data(c):
    """Deterministic X, W, B for a case (seeded by its name, so cases are independent)."""
    rng = np.random.default_rng(zlib.crc32(c.name.encode()))
    x = rng.standard_normal(c.x_shape).astype(np.float32)
    w = rng.standard_normal(c.w_shape).astype(np.float32)
    out_channels = c.w_shape[1] * c.attrs.get("group", 1)
    b = rng.standard_normal((out_channels,)).astype(np.float32) if c.bias else None
    return x, w, b


def build_model(c, arrays, y_shape, elem=TensorProto.FLOAT, make_init=numpy_helper.from_array,
                producer="tconv-golden", check=True):
    """The case's one-node model; generate_dtypes.py passes its element type and initializer
    encoder."""
    inputs, inits, node_inputs = [], [], []
    for name, arr, is_init in (("X", arrays[0], False), ("W", arrays[1], c.w_init),
                               ("B", arrays[2], c.b_init)):
        if arr is None:
            continue
        node_inputs.append(name)
        if is_init:
            inits.append(make_init(arr, name))
        else:
            inputs.append(helper.make_tensor_value_info(name, elem, arr.shape))
    node = helper.make_node("ConvTranspose", node_inputs, ["Y"], name=c.name, **c.attrs)
    output = helper.make_tensor_value_info("Y", elem, y_shape)
    graph = helper.make_graph([node], c.name, inputs, [output], initializer=inits)
    model = helper.make_model(graph, producer_name=producer,
                              opset_imports=[helper.make_opsetid("", c.opset)])
    model.ir_version = IR_VERSION[c.opset]
    if check:
        onnx.checker.check_model(model)
    return model


def write_tensor(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())


def write_case(root, c, arrays, y):
    case_dir = os.path.join(root, c.name)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir)
    model = build_model(c, arrays, y.shape)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    values = dict(zip("XWB", arrays))
    for idx, vi in enumerate(model.graph.input):
        write_tensor(os.path.join(data_dir, f"input_{idx}.pb"), values[vi.name], vi.name)
    write_tensor(os.path.join(data_dir, "output_0.pb"), y, "Y")


# ---------------------------------------------------------------------------------------------
# cases.tsv
# ---------------------------------------------------------------------------------------------

TSV_COLUMNS = ["name", "rank", "group", "kernel", "strides", "dilations", "pads", "auto_pad",
               "output_shape", "output_padding", "bias", "batch", "opset", "y_shape",
               "x_shape", "w_shape", "resolved_pads", "initializers", "torch_direct"]


def ints(v):
    return "-" if v is None else ",".join(str(i) for i in v)


def tsv_row(c, r, y_shape, direct_checked):
    a = c.attrs
    inits = [n for n, on in (("W", c.w_init), ("B", c.bias and c.b_init)) if on]
    return [c.name, str(len(c.x_shape) - 2), str(r.group), ints(r.kernel), ints(r.strides),
            ints(r.dilations), ints(a.get("pads")), a.get("auto_pad", "-"),
            ints(a.get("output_shape")), ints(r.output_padding), str(int(c.bias)),
            str(c.x_shape[0]), str(c.opset), ints(y_shape), ints(c.x_shape), ints(c.w_shape),
            ints(r.pb + r.pe), ",".join(inits) or "-", str(int(direct_checked))]


def write_tsv(path, rows):
    with open(path, "w") as f:
        for row in [TSV_COLUMNS] + rows:
            f.write("\t".join(row) + "\n")


def generate_set(root, cases):
    """Compute, cross-check and write every case of one set. Returns #torch-direct checks."""
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    assert len({c.name for c in cases}) == len(cases), "duplicate case names"
    rows, direct = [], 0
    for c in cases:
        arrays = case_data(c)
        y, r = reference(*arrays, c.attrs)
        assert_close(f"{c.name} (scatter)", scatter_reference(*arrays, r), y)
        t = torch_direct(*arrays, r)
        if t is not None:
            assert_close(f"{c.name} (torch direct)", t, y)
            direct += 1
        write_case(root, c, arrays, y)
        rows.append(tsv_row(c, r, y.shape, t is not None))
    write_tsv(os.path.join(root, "cases.tsv"), rows)
    return direct


# ---------------------------------------------------------------------------------------------
# Named semantic cases
# ---------------------------------------------------------------------------------------------

def named_cases():
    return [
        # Basics, shapes, ranks.
        case("default_attrs_2d", (1, 1, 3, 3), (1, 2, 3, 3), opset=11),
        case("nonsquare_k3x2_s3x2_in4x3", (1, 2, 4, 3), (2, 3, 3, 2), opset=13, bias=True,
             kernel_shape=[3, 2], strides=[3, 2]),
        case("rank1_k3_s2_pads", (1, 2, 5), (2, 3, 3), opset=17, bias=True,
             kernel_shape=[3], strides=[2], pads=[1, 0]),
        case("rank1_k4_s3_same_lower", (2, 1, 6), (1, 2, 4), opset=11,
             auto_pad="SAME_LOWER", strides=[3]),
        case("rank3_k3x2x2_s2x1x2", (1, 2, 3, 2, 3), (2, 2, 3, 2, 2), opset=13, bias=True,
             kernel_shape=[3, 2, 2], strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1]),
        case("rank3_group2_same_upper_bias", (1, 4, 2, 3, 2), (4, 1, 3, 2, 3), opset=17,
             bias=True, group=2, strides=[2, 2, 1], auto_pad="SAME_UPPER"),
        case("input_1x1_k3_s2", (1, 3, 1, 1), (3, 2, 3, 3), opset=13, strides=[2, 2]),
        case("k1_s4_gaps", (1, 2, 3, 2), (2, 2, 1, 1), opset=17, bias=True,
             kernel_shape=[1, 1], strides=[4, 4]),
        case("batch2_group2_bias", (2, 4, 3, 3), (4, 2, 3, 3), opset=13, bias=True, group=2,
             strides=[2, 2], pads=[1, 1, 1, 1]),
        # Groups.
        case("group2_bias", (1, 2, 3, 3), (2, 1, 3, 3), opset=11, bias=True, group=2),
        case("group3_bias", (1, 6, 3, 4), (6, 2, 2, 3), opset=17, bias=True, group=3,
             strides=[2, 1]),
        case("group3_bias_w_initializer", (2, 3, 4, 3), (3, 1, 3, 3), opset=13, bias=True,
             w_init=True, b_init=True, group=3, strides=[1, 2], pads=[1, 0, 0, 1]),
        # Dilations.
        case("dilation2_k3", (1, 1, 4, 4), (1, 2, 3, 3), opset=13, dilations=[2, 2]),
        case("dilation3_k2_s2", (1, 2, 3, 3), (2, 1, 2, 2), opset=17, bias=True,
             dilations=[3, 3], strides=[2, 2], pads=[1, 2, 2, 1]),
        case("dilation2x3_nonsquare", (1, 1, 3, 4), (1, 1, 3, 2), opset=11,
             dilations=[2, 3], strides=[1, 2]),
        # Explicit pads.
        case("pads_asymmetric", (1, 1, 4, 4), (1, 2, 3, 3), opset=13, bias=True,
             strides=[2, 2], pads=[0, 1, 2, 0]),
        case("pads_symmetric_s2", (1, 2, 3, 3), (2, 2, 3, 3), opset=11, strides=[2, 2],
             pads=[1, 1, 1, 1]),
        case("pads_exceed_kernel", (1, 1, 5, 5), (1, 1, 3, 3), opset=17, strides=[3, 2],
             pads=[4, 3, 4, 2]),
        case("auto_pad_notset_explicit_pads", (1, 1, 3, 3), (1, 1, 3, 3), opset=13,
             auto_pad="NOTSET", pads=[1, 2, 0, 1], strides=[2, 2]),
        # auto_pad.
        case("auto_pad_valid_s2", (1, 1, 3, 3), (1, 2, 3, 3), opset=13, bias=True,
             auto_pad="VALID", strides=[2, 2]),
        case("same_upper_k3_s2_odd_total", (1, 1, 3, 3), (1, 2, 3, 3), opset=17,
             auto_pad="SAME_UPPER", strides=[2, 2]),
        case("same_lower_k3_s2_odd_total", (1, 1, 3, 3), (1, 2, 3, 3), opset=17,
             auto_pad="SAME_LOWER", strides=[2, 2]),
        case("same_upper_k4_s2_even_total", (1, 1, 3, 3), (1, 1, 4, 4), opset=13,
             auto_pad="SAME_UPPER", strides=[2, 2]),
        case("same_lower_k4_s2_even_total", (1, 1, 3, 3), (1, 1, 4, 4), opset=13,
             auto_pad="SAME_LOWER", strides=[2, 2]),
        case("same_upper_k5_s3_even_total", (1, 2, 3, 2), (2, 1, 5, 5), opset=11, bias=True,
             auto_pad="SAME_UPPER", strides=[3, 3]),
        case("same_lower_k5_s2_odd_total", (1, 2, 3, 2), (2, 1, 5, 5), opset=11, bias=True,
             auto_pad="SAME_LOWER", strides=[2, 2]),
        case("same_upper_k4_s1_odd_total", (1, 1, 4, 3), (1, 1, 4, 4), opset=17,
             auto_pad="SAME_UPPER"),
        case("same_lower_k3_s1_even_total", (1, 1, 4, 3), (1, 1, 3, 3), opset=17,
             auto_pad="SAME_LOWER"),
        case("same_upper_k2_s3_negative_total", (1, 1, 3, 3), (1, 1, 2, 2), opset=13,
             bias=True, auto_pad="SAME_UPPER", strides=[3, 3]),
        case("same_lower_k2_s3_negative_total", (1, 1, 3, 3), (1, 1, 2, 2), opset=13,
             bias=True, auto_pad="SAME_LOWER", strides=[3, 3]),
        case("same_upper_k3_s2_output_padding", (1, 1, 3, 3), (1, 1, 3, 3), opset=17,
             bias=True, auto_pad="SAME_UPPER", strides=[2, 2], output_padding=[1, 1]),
        case("same_lower_k3x4_s3x2_nonsquare", (1, 1, 2, 3), (1, 2, 3, 4), opset=11,
             auto_pad="SAME_LOWER", strides=[3, 2]),
        # output_shape.
        case("output_shape_odd_total", (1, 1, 3, 3), (1, 2, 3, 3), opset=13, bias=True,
             strides=[2, 2], output_shape=[6, 6]),
        case("output_shape_even_total", (1, 1, 3, 3), (1, 1, 3, 3), opset=11,
             strides=[2, 2], output_shape=[5, 5]),
        case("output_shape_negative_total", (1, 1, 3, 3), (1, 2, 3, 3), opset=13,
             strides=[3, 2], output_shape=[10, 8]),
        case("output_shape_negative_total_bias", (1, 1, 3, 3), (1, 2, 3, 3), opset=17,
             bias=True, strides=[3, 2], output_shape=[11, 10]),
        case("output_shape_nc_prefix", (1, 2, 3, 3), (2, 2, 3, 3), opset=17,
             strides=[2, 2], output_shape=[1, 2, 6, 5]),
        case("output_shape_same_upper_odd_total", (1, 1, 3, 3), (1, 1, 3, 3), opset=13,
             auto_pad="SAME_UPPER", strides=[2, 2], output_shape=[6, 6]),
        case("output_shape_same_lower_odd_total", (1, 1, 3, 3), (1, 1, 3, 3), opset=13,
             auto_pad="SAME_LOWER", strides=[2, 2], output_shape=[6, 6]),
        case("output_shape_with_output_padding", (1, 1, 3, 3), (1, 2, 3, 3), opset=11,
             kernel_shape=[3, 3], strides=[3, 2], output_padding=[1, 1],
             output_shape=[10, 8]),
        case("rank1_output_shape_negative_total", (1, 1, 4), (1, 1, 3), opset=17, bias=True,
             strides=[2], output_shape=[11]),
        # output_padding.
        case("output_padding_inside_full", (1, 1, 3, 3), (1, 2, 3, 3), opset=13, bias=True,
             strides=[2, 2], pads=[1, 1, 2, 2], output_padding=[1, 1]),
        case("output_padding_past_full_bias", (1, 1, 3, 3), (1, 2, 3, 3), opset=17,
             bias=True, strides=[3, 2], pads=[1, 0, 0, 0], output_padding=[2, 1]),
        case("output_padding_partly_past_full", (1, 2, 3, 3), (2, 1, 3, 3), opset=11,
             bias=True, w_init=True, strides=[3, 3], pads=[0, 0, 1, 1],
             output_padding=[2, 2]),
        case("output_padding_valid_bias", (1, 1, 2, 3), (1, 1, 2, 2), opset=13, bias=True,
             b_init=True, auto_pad="VALID", strides=[2, 3], output_padding=[1, 2]),
        case("output_padding_from_dilation", (1, 1, 3, 3), (1, 1, 2, 2), opset=17, bias=True,
             dilations=[3, 2], output_padding=[2, 1]),
        # Optional attributes / inputs.
        case("no_kernel_shape_attr", (1, 2, 3, 2), (2, 1, 2, 3), opset=13, bias=True,
             strides=[2, 2], pads=[0, 1, 1, 0]),
        case("no_bias_w_initializer", (1, 3, 3, 3), (3, 2, 3, 3), opset=17, w_init=True,
             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 0]),
    ]


# ---------------------------------------------------------------------------------------------
# Random matrix
# ---------------------------------------------------------------------------------------------

MODES = ("pads_sym", "pads_asym", "valid", "same_upper", "same_lower", "oshape")
MAX_X = {1: 8, 2: 5, 3: 3}


def maybe(rng, p):
    return bool(rng.random() < p)


def draw_pads(rng, mode, ke):
    """Explicit pads for modes pads_sym / pads_asym (None when not possible)."""
    rank = len(ke)
    begin = [int(rng.integers(0, k)) for k in ke]
    if mode == "pads_sym":
        return begin + begin
    end = [int(rng.integers(0, k)) for k in ke]
    if begin == end:
        movable = [i for i in range(rank) if ke[i] > 1]
        if not movable:
            return None
        i = movable[int(rng.integers(0, len(movable)))]
        end[i] = (begin[i] + 1) % ke[i]
    return begin + end


def draw_output_shape(rng, full, op, ke, batch, out_channels):
    totals = [int(rng.integers(-3, k + 1)) for k in ke]
    shape = [f + o - t for f, o, t in zip(full, op, totals)]
    return ([batch, out_channels] if maybe(rng, 0.3) else []) + shape


def draw_attrs(rng, mode, rank, group, kernel, strides, dilations, op, x, batch, out_ch):
    ke = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    attrs = {}
    if group != 1 or maybe(rng, 0.3):
        attrs["group"] = group
    if maybe(rng, 0.7):
        attrs["kernel_shape"] = kernel
    if strides != [1] * rank or maybe(rng, 0.4):
        attrs["strides"] = strides
    if dilations != [1] * rank or maybe(rng, 0.3):
        attrs["dilations"] = dilations
    if op != [0] * rank or maybe(rng, 0.2):
        attrs["output_padding"] = op
    if mode in ("pads_sym", "pads_asym"):
        pads = draw_pads(rng, mode, ke)
        if pads is None:
            return None
        if any(pads) or maybe(rng, 0.5):
            attrs["pads"] = pads
        if maybe(rng, 0.2):
            attrs["auto_pad"] = "NOTSET"
    elif mode == "valid":
        attrs["auto_pad"] = "VALID"
    elif mode in ("same_upper", "same_lower"):
        attrs["auto_pad"] = mode.upper()
    else:
        full = [s * (xi - 1) + k for s, xi, k in zip(strides, x, ke)]
        attrs["output_shape"] = draw_output_shape(rng, full, op, ke, batch, out_ch)
        auto_pad = ["-", "NOTSET", "SAME_UPPER", "SAME_LOWER"][int(rng.integers(0, 4))]
        if auto_pad != "-":
            attrs["auto_pad"] = auto_pad
    return attrs


def draw_matrix_case(rng, idx):
    """One random case, or None if it is invalid or too big (the caller redraws)."""
    rank = int(rng.choice([1, 2, 3], p=[0.35, 0.45, 0.2]))
    group = int(rng.integers(1, 4))
    cin_g, cout_g = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    batch = int(rng.integers(1, 3))
    x = [int(rng.integers(1, MAX_X[rank] + 1)) for _ in range(rank)]
    kernel = [int(rng.integers(1, 6)) for _ in range(rank)]
    strides = [int(rng.integers(1, 5)) for _ in range(rank)]
    dilations = [int(rng.integers(1, 4)) for _ in range(rank)]
    op = [0] * rank
    if maybe(rng, 0.4):
        op = [int(rng.integers(0, max(s, d))) for s, d in zip(strides, dilations)]
    mode = MODES[idx % len(MODES)]  # balanced: 50 cases per padding mode
    attrs = draw_attrs(rng, mode, rank, group, kernel, strides, dilations, op, x, batch,
                       group * cout_g)
    if attrs is None:
        return None
    opset = int(rng.choice([11, 13, 17]))
    bias = maybe(rng, 0.5)
    w_init, b_init = maybe(rng, 0.3), bias and maybe(rng, 0.3)
    tag = mode + ("_nc" if len(attrs.get("output_shape", [])) == rank + 2 else "")
    c = Case(f"m{idx:03d}_r{rank}_g{group}_{tag}", opset, (batch, group * cin_g, *x),
             (group * cin_g, cout_g, *kernel), attrs, bias, w_init, b_init)
    try:
        r = resolve(c.x_shape, c.w_shape, attrs)
    except AssertionError:
        return None  # e.g. output size <= 0
    if case_floats(c, r) > MATRIX_MAX_FLOATS:
        return None
    return c


def case_floats(c, r):
    x = int(np.prod(c.x_shape))
    w = int(np.prod(c.w_shape))
    b = c.w_shape[1] * r.group if c.bias else 0
    y = c.x_shape[0] * c.w_shape[1] * r.group * int(np.prod(r.out))
    return x + w * (1 + c.w_init) + b * (1 + c.b_init) + y


def matrix_cases():
    rng = np.random.default_rng(MATRIX_SEED)
    cases = []
    while len(cases) < MATRIX_COUNT:
        c = draw_matrix_case(rng, len(cases))
        if c is not None:
            cases.append(c)
    check_matrix_coverage(cases)
    return cases


def matrix_features(c):
    """Every (dimension, value) a case exercises, for the coverage check."""
    rank = len(c.x_shape) - 2
    r = resolve(c.x_shape, c.w_shape, c.attrs)
    mode = c.name.split("_", 3)[3]
    feats = {("rank", rank), ("group", r.group), ("batch", c.x_shape[0]), ("opset", c.opset),
             ("bias", c.bias), ("w_init", c.w_init), ("mode", mode), ("rank_mode", rank, mode),
             ("rank_group", rank, r.group), ("cin_per_group", c.x_shape[1] // r.group),
             ("cout_per_group", c.w_shape[1]), ("kernel_attr", "kernel_shape" in c.attrs),
             ("auto_pad", c.attrs.get("auto_pad", "-"))}
    feats |= {("kernel", v) for v in r.kernel} | {("stride", v) for v in r.strides}
    feats |= {("dilation", v) for v in r.dilations} | {("output_padding", v)
                                                       for v in r.output_padding}
    feats |= {("x", rank, v) for v in c.x_shape[2:]}
    if "output_shape" in c.attrs:
        totals = [b + e for b, e in zip(r.pb, r.pe)]
        feats |= {("oshape_total", "neg" if t < 0 else ("odd" if t % 2 else "even"))
                  for t in totals}
        feats.add(("oshape_auto_pad", c.attrs.get("auto_pad", "-")))
    return feats


def required_features():
    req = {("rank", v) for v in (1, 2, 3)} | {("group", v) for v in (1, 2, 3)}
    req |= {("batch", v) for v in (1, 2)} | {("opset", v) for v in (11, 13, 17)}
    req |= {("bias", v) for v in (False, True)} | {("w_init", v) for v in (False, True)}
    req |= {("kernel", v) for v in range(1, 6)} | {("stride", v) for v in range(1, 5)}
    req |= {("dilation", v) for v in range(1, 4)} | {("output_padding", v) for v in range(4)}
    req |= {("cin_per_group", v) for v in range(1, 7)}
    req |= {("cout_per_group", v) for v in range(1, 7)}
    req |= {("kernel_attr", v) for v in (False, True)}
    req |= {("mode", m) for m in MODES + ("oshape_nc",)}
    req |= {("rank_mode", r, m) for r in (1, 2, 3) for m in MODES}
    req |= {("rank_group", r, g) for r in (1, 2, 3) for g in (1, 2, 3)}
    req |= {("x", r, v) for r in (1, 2, 3) for v in range(1, MAX_X[r] + 1)}
    req |= {("oshape_total", t) for t in ("neg", "odd", "even")}
    req |= {("oshape_auto_pad", a) for a in ("-", "NOTSET", "SAME_UPPER", "SAME_LOWER")}
    req |= {("auto_pad", a) for a in ("-", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")}
    return req


def check_matrix_coverage(cases):
    seen = set().union(*(matrix_features(c) for c in cases))
    missing = required_features() - seen
    if missing:
        sys.exit(f"FAIL: matrix (seed {MATRIX_SEED}) does not cover {sorted(map(str, missing))}")


# ---------------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--node-tests", help="a folder holding ONNX's node tests test_*/, e.g. BUILD/onnx-node-tests-v1.22.0 (default: $TCONV_ONNX_NODE_TESTS, else unpacked from tests/data/onnx-node-tests-v1.22.0.tar.xz)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(HERE, "..", "data"))
    import onnx_node_tests
    print("checking reference() against ONNX conformance tests")
    n_conf = check_onnx_conformance(onnx_node_tests.node_tests_dir(args.node_tests,
                                                                   "test_convtranspose"))
    totals = {}
    for sub, cases in (("convtranspose", named_cases()), ("matrix", matrix_cases())):
        direct = generate_set(os.path.join(HERE, sub), cases)
        totals[sub] = (len(cases), direct)
        print(f"{sub}: {len(cases)} cases written, {direct} also cross-checked by torch directly")
    print(f"ok: {n_conf} ONNX conformance tests reproduced; every case matched the scatter "
          f"reference; {sum(d for _, d in totals.values())} cases cross-checked by torch directly")


if __name__ == "__main__":
    main()

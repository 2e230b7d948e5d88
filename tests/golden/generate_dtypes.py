#!/usr/bin/env python3
"""Generate tconv's ConvTranspose golden data in float16, bfloat16 and float64.

Run with a Python that has onnx, torch and numpy (on the dev box: /usr/bin/python3):

    /usr/bin/python3 tests/golden/generate_dtypes.py

It deletes and rewrites tests/golden/dtypes/ (one ONNX test directory <dtype>_<case> per dtype
and named case of generate.py: every padding mode, output_shape, output_padding, group > 1,
ranks 1-3, bias, initializers; plus cases.tsv) and tests/golden/dtype_ops/ (Conv, Gemm, MatMul,
BatchNormalization, pools, elementwise ops and activations in float64 and float16/bfloat16,
golden by torch/numpy in float64 from the rounded inputs, OP_CASES below). Everything is
deterministic.

Golden values never come from tconv. For each case, X, W and B are drawn as in generate.py
(float64 for the float64 cases, so that a float32 detour would show), rounded to the case's
dtype (round to nearest even, by torch), and the output is computed in float64 from the rounded
values by generate.py's reference semantics (torch VALID conv_transpose in float64, crop or
extend, bias), checked against generate.py's scatter reference, then rounded once to the dtype.

bfloat16: ONNX lists it for ConvTranspose from opset 22 on; these models keep the case's opset
(onnx 1.12, installed here, knows no opset 22), and tconv runs ConvTranspose of any float type at
every opset. Half of the float16/bfloat16 initializers are written as int32_data (the ONNX spec's
field for them: one value per int32, low 16 bits), the rest and all inputs as raw_data.
"""

import os
import shutil
import sys
import zlib

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate as g  # noqa: E402

torch.set_num_threads(1)  # float64 sums in one fixed order: the files are reproducible

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "dtypes")
DTYPES = {
    "float16": (TensorProto.FLOAT16, torch.float16),
    "bfloat16": (TensorProto.BFLOAT16, torch.bfloat16),
    "float64": (TensorProto.DOUBLE, torch.float64),
}


def round_to(arr, dtype):
    """float64 copy of arr rounded to the dtype (nearest even), and the dtype's bit pattern."""
    t = torch.from_numpy(np.asarray(arr, dtype=np.float64)).to(DTYPES[dtype][1])
    if dtype == "float64":
        return t.numpy(), t.numpy()
    bits = t.view(torch.int16).numpy().view(np.uint16)
    return t.to(torch.float64).numpy(), bits


def make_tensor(name, dtype, arr, as_int32):
    _, bits = round_to(arr, dtype)
    t = TensorProto()
    t.name = name
    t.data_type = DTYPES[dtype][0]
    t.dims.extend(arr.shape)
    if dtype == "float64":
        t.raw_data = np.ascontiguousarray(bits, dtype="<f8").tobytes()
    elif as_int32:
        t.int32_data.extend(int(v) for v in bits.reshape(-1))
    else:
        t.raw_data = np.ascontiguousarray(bits, dtype="<u2").tobytes()
    return t


def case_data(c, dtype):
    rng = np.random.default_rng(zlib.crc32((dtype + c.name).encode()))
    x = rng.standard_normal(c.x_shape)
    w = rng.standard_normal(c.w_shape)
    out_channels = c.w_shape[1] * c.attrs.get("group", 1)
    b = rng.standard_normal((out_channels,)) if c.bias else None
    return [None if a is None else round_to(a, dtype)[0] for a in (x, w, b)]


def reference64(x, w, b, attrs):
    r = g.resolve(x.shape, w.shape, attrs)
    y = g.add_bias(g.crop_or_extend(g.full_valid(x, w, r), r.pb, r.out), b)
    return y, r


def build_model(c, dtype, arrays, y_shape):
    def make_init(arr, name):
        as_int32 = zlib.crc32((c.name + name).encode()) % 2 == 0
        return make_tensor(name, dtype, arr, as_int32)

    # onnx 1.12's checker knows ConvTranspose without bfloat16
    return g.build_model(c, arrays, y_shape, DTYPES[dtype][0], make_init,
                         "tconv-golden-dtypes", check=dtype != "bfloat16")


def write_case(c, dtype, arrays, y):
    case_dir = os.path.join(ROOT, f"{dtype}_{c.name}")
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir)
    model = build_model(c, dtype, arrays, y.shape)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    values = dict(zip("XWB", arrays))
    for idx, vi in enumerate(model.graph.input):
        t = make_tensor(vi.name, dtype, values[vi.name], False)
        with open(os.path.join(data_dir, f"input_{idx}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    with open(os.path.join(data_dir, "output_0.pb"), "wb") as f:
        f.write(make_tensor("Y", dtype, y, False).SerializeToString())


# ---------------------------------------------------------------------------------------------
# Other float kernels: float64 natively, float16/bfloat16 through float32 (tests/golden/dtype_ops)
# ---------------------------------------------------------------------------------------------

OPS_ROOT = os.path.join(HERE, "dtype_ops")
TF = torch.nn.functional


def conv_ref(x, w, b, a):
    rank = x.ndim - 2
    fn = {1: TF.conv1d, 2: TF.conv2d, 3: TF.conv3d}[rank]
    pads = a.get("pads", [0] * 2 * rank)
    x = torch.from_numpy(x)
    padded = TF.pad(x, [p for i in reversed(range(rank)) for p in (pads[i], pads[rank + i])])
    y = fn(padded, torch.from_numpy(w), None if b is None else torch.from_numpy(b),
           stride=a.get("strides", [1] * rank), dilation=a.get("dilations", [1] * rank),
           groups=a.get("group", 1))
    return y.numpy()


def gemm_ref(a_, b_, c_, a):
    A = a_.T if a.get("transA", 0) else a_
    B = b_.T if a.get("transB", 0) else b_
    return a.get("alpha", 1.0) * (A @ B) + a.get("beta", 1.0) * c_


def avgpool_ref(x, a):
    rank = x.ndim - 2
    fn = {1: TF.avg_pool1d, 2: TF.avg_pool2d, 3: TF.avg_pool3d}[rank]
    return fn(torch.from_numpy(x), a["kernel_shape"], a.get("strides"), 0).numpy()


def maxpool_ref(x, a):
    rank = x.ndim - 2
    fn = {1: TF.max_pool1d, 2: TF.max_pool2d, 3: TF.max_pool3d}[rank]
    return fn(torch.from_numpy(x), a["kernel_shape"], a.get("strides")).numpy()


def bn_ref(x, s_, b_, m, v, a):
    sh = (1, -1) + (1,) * (x.ndim - 2)
    eps = float(np.float32(a.get("epsilon", 1e-5)))  # ONNX float attributes are float32
    return (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * s_.reshape(sh) + b_.reshape(sh)


def softmax_ref(x, a):
    e = np.exp(x - x.max(axis=a["axis"], keepdims=True))
    return e / e.sum(axis=a["axis"], keepdims=True)


# (name, op, opset, input shapes, attrs, reference(*inputs, attrs), dtypes, positive inputs)
OP_CASES = [
    ("conv_group2_pads_s2_d2", "Conv", 13, [(2, 4, 9, 8), (6, 2, 3, 3), (6,)],
     dict(group=2, pads=[1, 0, 2, 1], strides=[2, 1], dilations=[1, 2]),
     lambda x, w, b, a: conv_ref(x, w, b, a), ("float64", "float16", "bfloat16")),
    ("conv_rank1", "Conv", 11, [(1, 3, 12), (4, 3, 5)], dict(pads=[2, 2]),
     lambda x, w, a: conv_ref(x, w, None, a), ("float64", "float16")),
    ("conv_rank3_depthwise", "Conv", 13, [(1, 3, 4, 5, 4), (3, 1, 2, 3, 2), (3,)],
     dict(group=3, strides=[1, 2, 1]),
     lambda x, w, b, a: conv_ref(x, w, b, a), ("float64", "bfloat16")),
    ("gemm_transb_bias_row", "Gemm", 13, [(5, 7), (4, 7), (4,)],
     dict(transB=1, alpha=0.5, beta=2.0),
     lambda a_, b_, c_, a: gemm_ref(a_, b_, c_, a), ("float64", "float16", "bfloat16")),
    ("gemm_transa_bias_matrix", "Gemm", 11, [(7, 5), (7, 3), (5, 3)], dict(transA=1),
     lambda a_, b_, c_, a: gemm_ref(a_, b_, c_, a), ("float64",)),
    ("matmul_batched_broadcast", "MatMul", 13, [(2, 1, 4, 6), (3, 6, 5)], {},
     lambda a_, b_, a: np.matmul(a_, b_), ("float64", "float16", "bfloat16")),
    ("batchnorm", "BatchNormalization", 15, [(2, 3, 4, 5), (3,), (3,), (3,), (3,)],
     dict(epsilon=1e-3), lambda *args: bn_ref(*args), ("float64", "float16"), (4,)),
    ("averagepool_s2", "AveragePool", 11, [(1, 2, 7, 6)], dict(kernel_shape=[3, 2],
     strides=[2, 2]), lambda x, a: avgpool_ref(x, a), ("float64", "float16")),
    ("maxpool_s2", "MaxPool", 12, [(1, 2, 7, 6)], dict(kernel_shape=[3, 3], strides=[2, 1]),
     lambda x, a: maxpool_ref(x, a), ("float64", "bfloat16")),
    ("globalaveragepool", "GlobalAveragePool", 1, [(2, 3, 5, 4)], {},
     lambda x, a: x.mean(axis=(2, 3), keepdims=True), ("float64", "float16")),
    ("add_broadcast", "Add", 14, [(2, 3, 4), (3, 1)], {}, lambda x, y, a: x + y,
     ("float64", "float16", "bfloat16")),
    ("sub", "Sub", 14, [(3, 4), (3, 4)], {}, lambda x, y, a: x - y, ("float64",)),
    ("mul_broadcast", "Mul", 14, [(4, 1, 3), (2, 3)], {}, lambda x, y, a: x * y,
     ("float64", "bfloat16")),
    ("div", "Div", 14, [(3, 5), (3, 5)], {}, lambda x, y, a: x / y, ("float64", "float16")),
    ("relu", "Relu", 14, [(3, 7)], {}, lambda x, a: np.maximum(x, 0), ("float64", "float16")),
    ("leakyrelu", "LeakyRelu", 6, [(3, 7)], dict(alpha=0.2),
     lambda x, a: np.where(x < 0, float(np.float32(0.2)) * x, x), ("float64", "bfloat16")),
    ("sigmoid", "Sigmoid", 13, [(3, 7)], {}, lambda x, a: 1 / (1 + np.exp(-x)),
     ("float64", "float16")),
    ("tanh", "Tanh", 13, [(3, 7)], {}, lambda x, a: np.tanh(x), ("float64", "float16")),
    ("clip_6", "Clip", 6, [(3, 7)], dict(min=-0.5, max=0.75),
     lambda x, a: np.clip(x, -0.5, 0.75), ("float64", "float16")),
    ("softmax_axis1", "Softmax", 13, [(2, 5, 3)], dict(axis=1),
     lambda x, a: softmax_ref(x, a), ("float16", "bfloat16")),
]


def write_op_case(name, dtype, op, opset, arrays, attrs, y):
    elem = DTYPES[dtype][0]
    case_dir = os.path.join(OPS_ROOT, f"{dtype}_{name}")
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir)
    names = [f"in{i}" for i in range(len(arrays))]
    inputs = [helper.make_tensor_value_info(n, elem, a.shape) for n, a in zip(names, arrays)]
    node = helper.make_node(op, names, ["y"], name=name, **attrs)
    graph = helper.make_graph([node], f"{dtype}_{name}", inputs,
                              [helper.make_tensor_value_info("y", elem, y.shape)])
    model = helper.make_model(graph, producer_name="tconv-golden-dtypes",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset >= 15 else 7
    if dtype != "bfloat16":  # onnx 1.12's schemas list bfloat16 for few of these ops
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for i, (n, a) in enumerate(zip(names, arrays)):
        with open(os.path.join(data_dir, f"input_{i}.pb"), "wb") as f:
            f.write(make_tensor(n, dtype, a, False).SerializeToString())
    with open(os.path.join(data_dir, "output_0.pb"), "wb") as f:
        f.write(make_tensor("y", dtype, y, False).SerializeToString())


def generate_op_cases():
    if os.path.exists(OPS_ROOT):
        shutil.rmtree(OPS_ROOT)
    os.makedirs(OPS_ROOT)
    n = 0
    for name, op, opset, shapes, attrs, ref, dtypes, *positive in OP_CASES:
        positive = positive[0] if positive else ()
        for dtype in dtypes:
            rng = np.random.default_rng(zlib.crc32((dtype + name).encode()))
            arrays = []
            for i, s in enumerate(shapes):
                a = rng.standard_normal(s)
                if i in positive or (op == "Div" and i == 1):
                    a = np.abs(a) + 0.5
                arrays.append(round_to(a, dtype)[0])
            y = np.asarray(ref(*arrays, attrs), dtype=np.float64)
            write_op_case(name, dtype, op, opset, arrays, attrs, y)
            n += 1
    return n


# Cast between the float types, integers and bool. Values: normal ones, ties, float16 overflow
# (70000 -> inf), float16 subnormals, +-0, infinities and NaN. Golden: numpy's float64 -> float16
# conversion (one rounding, to nearest even), bfloat16 by rounding float32 bits to nearest even
# (sources of bfloat16 cases are exact in float32), integers truncated toward zero.
CAST_VALUES = [0.0, -0.0, 1.0, -2.5, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 1.0 + 2.0 ** -8,
               1.0 + 2.0 ** -11 + 2.0 ** -40,  # float64 -> float16 must not round twice
               1.0 + 3 * 2.0 ** -8, 65504.0, 65520.0, 70000.0, -70000.0, 2.0 ** -24, 2.0 ** -25,
               3 * 2.0 ** -25, 1e-6, 0.1, 3.14159265, -123.456, float("inf"), float("-inf"),
               float("nan")]
CAST_PAIRS = [("FLOAT", "FLOAT16"), ("FLOAT16", "FLOAT"), ("DOUBLE", "FLOAT16"),
              ("FLOAT16", "DOUBLE"), ("FLOAT", "BFLOAT16"), ("BFLOAT16", "FLOAT"),
              ("FLOAT16", "BFLOAT16"), ("BFLOAT16", "FLOAT16"), ("BFLOAT16", "DOUBLE"),
              ("FLOAT16", "INT32"), ("BFLOAT16", "INT64"), ("INT64", "FLOAT16"),
              ("INT32", "BFLOAT16"), ("BOOL", "FLOAT16"), ("FLOAT16", "BOOL")]
NP_OF = {"FLOAT": np.float32, "DOUBLE": np.float64, "INT32": np.int32, "INT64": np.int64,
         "BOOL": np.bool_}


def to_bfloat16_bits(values):
    """float64 values exact in float32 -> bfloat16 bits, nearest even; NaN stays NaN."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(values), (u >> 16).astype(np.uint16) | 0x40, bits)


def cast_bits(values, to):
    """The target tensor's values (float types: their bit patterns as uint16 for 16-bit)."""
    if to == "FLOAT16":
        return np.asarray(values, dtype=np.float64).astype(np.float16)
    if to == "BFLOAT16":
        return to_bfloat16_bits(values)
    if to in ("INT32", "INT64"):
        return np.trunc(values).astype(NP_OF[to])
    if to == "BOOL":
        return np.asarray(values) != 0
    return np.asarray(values, dtype=NP_OF[to])


def source_values(frm):
    np.seterr(over="ignore", invalid="ignore")  # 70000 -> float16 inf, NaN -> int on purpose
    v = np.array(CAST_VALUES, dtype=np.float64)
    if frm in ("INT32", "INT64"):
        return np.array([0, 1, -3, 2049, 65519, 65521, 100000, -7, 257], dtype=np.float64)
    if frm == "BOOL":
        return np.array([0, 1, 1, 0], dtype=np.float64)
    if frm == "FLOAT16":
        return np.asarray(v, dtype=np.float16).astype(np.float64)
    if frm == "BFLOAT16":
        b = to_bfloat16_bits(v).astype(np.uint32) << 16
        return b.view(np.float32).astype(np.float64)
    return np.asarray(v, dtype=NP_OF[frm]).astype(np.float64)


def tensor_of(name, type_name, values, bits=None):
    """A TensorProto of the values; 16-bit floats from their bits (raw_data)."""
    t = TensorProto()
    t.name = name
    t.data_type = getattr(TensorProto, type_name)
    t.dims.append(len(values if values is not None else bits))
    if type_name == "FLOAT16":
        t.raw_data = np.asarray(values, dtype=np.float16).view("<u2").tobytes()
    elif type_name == "BFLOAT16":
        t.raw_data = np.asarray(bits if bits is not None else to_bfloat16_bits(values),
                                dtype="<u2").tobytes()
    else:
        arr = np.asarray(values).astype(NP_OF[type_name])
        t.raw_data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    return t


def generate_cast_cases():
    n = 0
    for frm, to in CAST_PAIRS:
        x = source_values(frm)
        if to in ("INT32", "INT64"):
            x = x[np.isfinite(x) & (np.abs(x) < 2 ** 31)]
        y = cast_bits(x, to)
        case_dir = os.path.join(OPS_ROOT, f"cast_{frm.lower()}_to_{to.lower()}")
        data_dir = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(data_dir)
        node = helper.make_node("Cast", ["x"], ["y"], to=getattr(TensorProto, to))
        graph = helper.make_graph(
            [node], f"cast_{frm}_{to}",
            [helper.make_tensor_value_info("x", getattr(TensorProto, frm), (len(x),))],
            [helper.make_tensor_value_info("y", getattr(TensorProto, to), (len(x),))])
        model = helper.make_model(graph, producer_name="tconv-golden-dtypes",
                                  opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(case_dir, "model.onnx"))
        with open(os.path.join(data_dir, "input_0.pb"), "wb") as f:
            f.write(tensor_of("x", frm, x).SerializeToString())
        with open(os.path.join(data_dir, "output_0.pb"), "wb") as f:
            f.write(tensor_of("y", to, y if to != "BFLOAT16" else None,
                              y if to == "BFLOAT16" else None).SerializeToString())
        n += 1
    return n


def main():
    if os.path.exists(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    print(f"ok: {generate_op_cases()} op cases written to {OPS_ROOT}")
    print(f"ok: {generate_cast_cases()} Cast cases written to {OPS_ROOT}")
    rows = []
    for dtype in DTYPES:
        for c in g.named_cases():
            arrays = case_data(c, dtype)
            y, r = reference64(*arrays, c.attrs)
            scatter = g.scatter_reference(*arrays, r).astype(np.float64)  # float32 result
            err = float(np.max(np.abs(scatter - y), initial=0.0))
            if err > 1e-5 * max(1.0, float(np.max(np.abs(y), initial=0.0))):
                sys.exit(f"FAIL {dtype}_{c.name}: scatter reference differs by {err}")
            write_case(c, dtype, arrays, y)
            rows.append([f"{dtype}_{c.name}", dtype, g.ints(c.x_shape), g.ints(c.w_shape),
                         c.attrs.get("auto_pad", "-"), g.ints(r.pb + r.pe), str(r.group)])
    with open(os.path.join(ROOT, "cases.tsv"), "w") as f:
        for row in [["name", "dtype", "x_shape", "w_shape", "auto_pad", "resolved_pads",
                     "group"]] + rows:
            f.write("\t".join(row) + "\n")
    print(f"ok: {len(rows)} cases written to {ROOT}")


if __name__ == "__main__":
    main()

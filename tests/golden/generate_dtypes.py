#!/usr/bin/env python3
"""Generate tconv's ConvTranspose golden data in float16, bfloat16 and float64.

Run with a Python that has onnx, torch and numpy (on the dev box: /usr/bin/python3):

    /usr/bin/python3 tests/golden/generate_dtypes.py

It deletes and rewrites tests/golden/dtypes/ (one ONNX test directory <dtype>_<case> per dtype
and named case of generate.py: every padding mode, output_shape, output_padding, group > 1,
ranks 1-3, bias, initializers; plus cases.tsv). Everything is deterministic.

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
    elem = DTYPES[dtype][0]
    inputs, inits, node_inputs = [], [], []
    for name, arr, is_init in (("X", arrays[0], False), ("W", arrays[1], c.w_init),
                               ("B", arrays[2], c.b_init)):
        if arr is None:
            continue
        node_inputs.append(name)
        if is_init:
            as_int32 = zlib.crc32((c.name + name).encode()) % 2 == 0
            inits.append(make_tensor(name, dtype, arr, as_int32))
        else:
            inputs.append(helper.make_tensor_value_info(name, elem, arr.shape))
    node = helper.make_node("ConvTranspose", node_inputs, ["Y"], name=c.name, **c.attrs)
    output = helper.make_tensor_value_info("Y", elem, y_shape)
    graph = helper.make_graph([node], f"{dtype}_{c.name}", inputs, [output], initializer=inits)
    model = helper.make_model(graph, producer_name="tconv-golden-dtypes",
                              opset_imports=[helper.make_opsetid("", c.opset)])
    model.ir_version = g.IR_VERSION[c.opset]
    if dtype != "bfloat16":  # onnx 1.12's checker knows ConvTranspose without bfloat16
        onnx.checker.check_model(model)
    return model


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


def main():
    if os.path.exists(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
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

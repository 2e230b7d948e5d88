#!/usr/bin/python3
"""Generate the convention cases (docs/semantics.md) and the dynamic output_shape cases.

Run:  /usr/bin/python3 tests/golden/generate_conventions.py [--node-tests DIR]

Needs onnx and numpy only. Writes (deleting them first):

  tests/golden/ort_conventions/<row>_<n>/   one ConvTranspose per case, for every row of
      docs/semantics.md's table of disagreements; cases.tsv lists them with their row.
  tests/golden/dynamic_output_shape/<case>/ output_shape on dynamic spatial dims, one data set
      per input size (totals negative, zero and positive).

Every case directory has the layout of ONNX's conformance tests (model.onnx,
test_data_set_K/input_N.pb, output_N.pb: the ONNX result). ort_conventions cases also have
ort_data_set_K/output_0.pb: what `--convention ort` must give, that is onnxruntime 1.30's result
by docs/semantics.md's measured rule where onnxruntime runs the node, else ONNX's (tconv follows ONNX
where onnxruntime refuses). The `ort` column of cases.tsv says, per data set, whether
onnxruntime 1.30 runs (R) or refuses (X) the node by that rule; scripts/ort/conventions.js
checks the rule and tconv against onnxruntime itself.

Golden values never come from tconv: `full_valid` is a textbook scatter in float64, checked
first against ONNX's conformance tests (test_convtranspose* of ONNX v1.22.0, tests/data) and
against tests/golden/convtranspose (computed with PyTorch); any mismatch aborts the run.
"""

import argparse
import glob
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
IR_VERSION = {11: 6, 13: 7, 17: 8}
SEED = 20261124


# ---------------------------------------------------------------------------------------------
# Reference semantics
# ---------------------------------------------------------------------------------------------

def full_valid(x, w, strides, dilations, group):
    """F: the VALID ConvTranspose (no pads, no output_padding, no bias), float64 scatter."""
    n, cin = x.shape[:2]
    cout_g, kernel = w.shape[1], w.shape[2:]
    cin_g = cin // group
    full = [s * (xi - 1) + (k - 1) * d + 1
            for xi, k, s, d in zip(x.shape[2:], kernel, strides, dilations)]
    y = np.zeros((n, cout_g * group) + tuple(full))
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for k in np.ndindex(*kernel):
        dst = [slice(None), None]
        for kk, s, d, xi in zip(k, strides, dilations, x.shape[2:]):
            dst.append(slice(kk * d, kk * d + s * (xi - 1) + 1, s))
        for g in range(group):
            ci = slice(g * cin_g, (g + 1) * cin_g)
            co = slice(g * cout_g, (g + 1) * cout_g)
            # y[n, co, positions] += sum_ci x[n, ci, i] * w[ci, co, k]
            contrib = np.tensordot(x64[:, ci], w64[(ci, slice(None)) + k], axes=([1], [0]))
            contrib = np.moveaxis(contrib, -1, 1)
            dst[1] = co
            y[tuple(dst)] += contrib
    return y


def attrs_of(a, rank):
    kernel = a["kernel"]
    return (a.get("strides", [1] * rank), a.get("dilations", [1] * rank),
            a.get("output_padding", [0] * rank), a.get("pads", [0] * 2 * rank),
            a.get("auto_pad", "NOTSET"), a.get("output_shape"), kernel)


def resolve_onnx(x_spatial, a):
    """(pb, out) per axis, docs/semantics.md (ONNX). Python's // floors."""
    rank = len(x_spatial)
    strides, dil, op, pads, auto_pad, oshape, kernel = attrs_of(a, rank)
    if oshape is not None:
        oshape = list(oshape)[-rank:]
    pb, out = [], []
    for i in range(rank):
        ke = (kernel[i] - 1) * dil[i] + 1
        full = strides[i] * (x_spatial[i] - 1) + ke
        if oshape is not None:
            total = full + op[i] - oshape[i]
            b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            o = oshape[i]
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            total = op[i] + ke - strides[i]
            b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            o = x_spatial[i] * strides[i]
        elif auto_pad == "VALID":
            b, o = 0, full + op[i]
        else:
            b, o = pads[i], full - pads[i] - pads[rank + i] + op[i]
        pb.append(b)
        out.append(o)
    return pb, out


def resolve_ort(x_spatial, a):
    """(pb, out) per axis by onnxruntime 1.30's measured rule (docs/semantics.md), or None
    where onnxruntime refuses the node."""
    rank = len(x_spatial)
    strides, dil, op, pads, auto_pad, oshape, kernel = attrs_of(a, rank)
    if oshape is not None and len(oshape) != rank:
        return None  # "output_shape has incorrect size", at load
    pb, out = [], []
    for i in range(rank):
        s, ke = strides[i], (kernel[i] - 1) * dil[i] + 1
        full = s * (x_spatial[i] - 1) + ke
        if oshape is not None:
            t = max(0, full + op[i] - oshape[i])
            if (oshape[i] + t - ke) // s + 1 != x_spatial[i]:
                return None
            pb.append(t // 2 if auto_pad == "SAME_UPPER" else t - t // 2)
            out.append(oshape[i])
            continue
        if op[i] >= s:
            return None  # "output_padding may be too large for stride"
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            t = max(0, op[i] + ke - s)
            b = t // 2 if auto_pad == "SAME_UPPER" else t - t // 2
        elif auto_pad == "VALID":
            t = b = 0
        else:
            b, t = pads[i], pads[i] + pads[rank + i]
        pb.append(b)
        out.append(full + op[i] - t)
    return pb, out


def conv_transpose(x, w, b, a, resolved):
    """out[o] = F[o + pb] where 0 <= o + pb < F, else 0; then bias everywhere (float32)."""
    rank = x.ndim - 2
    strides, dil, _, _, _, _, _ = attrs_of(a, rank)
    full = full_valid(x, w, strides, dil, a.get("group", 1))
    pb, out = resolved
    y = np.zeros(full.shape[:2] + tuple(out))
    dst, src = [slice(None)] * 2, [slice(None)] * 2
    for p, o, f in zip(pb, out, full.shape[2:]):
        lo, hi = max(0, -p), min(o, f - p)
        hi = max(hi, lo)
        dst.append(slice(lo, hi))
        src.append(slice(lo + p, hi + p))
    y[tuple(dst)] = full[tuple(src)]
    if b is not None:
        y += b.astype(np.float64).reshape((1, -1) + (1,) * rank)
    return y.astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Cross-checks of the reference
# ---------------------------------------------------------------------------------------------

def node_attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def load_case(case_dir):
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    node = model.graph.node[0]
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    ds = os.path.join(case_dir, "test_data_set_0")
    graph_inputs = [vi.name for vi in model.graph.input if vi.name not in values]
    for i, name in enumerate(graph_inputs):
        values[name] = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, f"input_{i}.pb")))
    want = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, "output_0.pb")))
    ins = [values[n] if n else None for n in node.input] + [None]
    return node_attrs(node), ins[0], ins[1], ins[2], want


def check_reference(node_tests):
    dirs = sorted(glob.glob(os.path.join(node_tests, "test_convtranspose*")))
    dirs += sorted(glob.glob(os.path.join(HERE, "convtranspose/*/")))
    if len(dirs) < 40:
        sys.exit(f"FAIL: only {len(dirs)} reference directories found (--node-tests?)")
    for d in dirs:
        a, x, w, b, want = load_case(d)
        a = dict(a)
        a.setdefault("kernel", list(w.shape[2:]))
        if isinstance(a.get("auto_pad"), bytes):
            a["auto_pad"] = a["auto_pad"].decode()
        got = conv_transpose(x, w, b, a, resolve_onnx(list(x.shape[2:]), a))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            sys.exit(f"FAIL reference disagrees with {d}")
    print(f"reference checked against {len(dirs)} directories")


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

def node_attributes(a):
    out = {"kernel_shape": list(a["kernel"])}
    for key in ("strides", "dilations", "output_padding", "pads", "auto_pad", "output_shape",
                "group"):
        if key in a:
            out[key] = a[key]
    return out


def build_model(name, opset, x_dims, w, b, a, y_dims):
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["X", "W"]
    if b is not None:
        inits.append(numpy_helper.from_array(b, "B"))
        inputs.append("B")
    node = helper.make_node("ConvTranspose", inputs, ["Y"], name=name, **node_attributes(a))
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_dims)], inits)
    model = helper.make_model(graph, producer_name="tconv-conventions",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION[opset]
    onnx.checker.check_model(model)
    return model


def write_tensor(path, arr, name):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())


def write_case(root, name, opset, a, cin, cout, sizes, rng, bias, dynamic, ort):
    """A case at one or more input sizes; returns the per-data-set ort flags (R/X)."""
    rank = len(a["kernel"])
    group = a.get("group", 1)
    w = rng.standard_normal([cin, cout // group] + list(a["kernel"])).astype(np.float32)
    b = rng.standard_normal([cout]).astype(np.float32) if bias else None
    flags, outs = [], []
    for k, size in enumerate(sizes):
        x = rng.standard_normal(list(size)).astype(np.float32)
        y = conv_transpose(x, w, b, a, resolve_onnx(list(size[2:]), a))
        ds = os.path.join(root, name, f"test_data_set_{k}")
        write_tensor(os.path.join(ds, "input_0.pb"), x, "X")
        write_tensor(os.path.join(ds, "output_0.pb"), y, "Y")
        outs.append(y)
        if ort:
            r = resolve_ort(list(size[2:]), a)
            flags.append("X" if r is None else "R")
            y_ort = y if r is None else conv_transpose(x, w, b, a, r)
            write_tensor(os.path.join(root, name, f"ort_data_set_{k}", "output_0.pb"), y_ort, "Y")
    x_dims = list(sizes[0][:2]) + (["S%d" % i for i in range(rank)] if dynamic
                                   else list(sizes[0][2:]))
    if dynamic:
        x_dims[0] = "N"
    y_dims = list(outs[0].shape) if not dynamic else ["N", cout] + (
        list(outs[0].shape[2:]) if "output_shape" in a else [None] * rank)
    if ort and not dynamic:
        # where ONNX and onnxruntime disagree on the size, the model cannot declare one
        r = resolve_ort(list(sizes[0][2:]), a)
        for i in range(rank):
            if r is not None and r[1][i] != y_dims[2 + i]:
                y_dims[2 + i] = None
    model = build_model(name, opset, x_dims, w, b, a, y_dims)
    onnx.save(model, os.path.join(root, name, "model.onnx"))
    return flags


def ke_of(k, d):
    return (k - 1) * d + 1


def draw_axis(rng, row):
    """k, s, d, op for one axis satisfying the row's condition (or None to retry)."""
    k = int(rng.integers(1, 6))
    s = int(rng.integers(1, 5))
    d = int(rng.integers(1, 4))
    op = int(rng.integers(0, max(s, d)))
    if row in ("same_upper_odd_total", "same_lower_odd_total"):
        total = op + ke_of(k, d) - s
        return (k, s, d, min(op, s - 1)) if total > 0 and total % 2 == 1 and op < s else None
    if row == "same_negative_total":
        op = min(op, s - 1)
        return (k, s, d, op) if op + ke_of(k, d) - s < 0 else None
    if row == "same_output_padding":
        return (k, s, d, op) if 0 < op < s else None
    if row == "output_padding_ge_stride":
        return (k, s, d, op) if s <= op < d else None
    return (k, s, d, op if op < s else 0)


ROWS = [  # docs/semantics.md's table, in order
    ("same_upper_odd_total", "SAME_UPPER, odd total"),
    ("output_shape_notset_odd_total", "output_shape + NOTSET, odd total"),
    ("same_negative_total", "SAME, total < 0"),
    ("output_shape_negative_total", "output_shape, total < 0"),
    ("output_padding_ge_stride", "output_padding >= stride (dilation > stride)"),
    ("output_shape_nc_prefix", "output_shape with N,C in front"),
    ("same_output_padding", "SAME + output_padding"),
]
CASES_PER_ROW = 16


def draw_case(rng, row, idx, made):
    rank = 1 + idx % 2
    axes = []
    while len(axes) < rank:
        ax = draw_axis(rng, row)
        if ax is None:
            continue
        if row == "same_upper_odd_total" and len(axes) == 1:
            ax = draw_axis(rng, "any") or (1, 1, 1, 0)  # only the first axis must be odd
        axes.append(ax)
    kernel = [a[0] for a in axes]
    a = {"kernel": kernel, "strides": [a[1] for a in axes], "dilations": [a[2] for a in axes]}
    ops = [a[3] for a in axes]
    if any(ops):
        a["output_padding"] = ops
    x = [int(rng.integers(1, 6)) for _ in range(rank)]
    full = [s * (xi - 1) + ke_of(k, d) for xi, (k, s, d, _) in zip(x, axes)]
    if row.startswith("same") or row == "same_output_padding":
        a["auto_pad"] = "SAME_UPPER" if idx % 4 < 2 else "SAME_LOWER"
        if row == "same_upper_odd_total":
            a["auto_pad"] = "SAME_UPPER"
    if row == "output_shape_notset_odd_total":
        total = [1 + 2 * int(rng.integers(0, 3)) for _ in range(rank)]
        a["output_shape"] = [f + op - t for f, op, t in zip(full, ops, total)]
        if min(a["output_shape"]) < 1:
            return None
    if row == "output_shape_negative_total":
        # half the cases inside onnxruntime's window (F + op < O < F + s), half beyond it
        inside = made % 2 == 1
        if inside and any(s - op < 2 for (_, s, _, op) in axes):
            return None
        extra = [int(rng.integers(1, s - op)) if inside else int(rng.integers(s - op, 6 + s))
                 for (_, s, _, op) in axes]
        a["output_shape"] = [f + op + e for f, op, e in zip(full, ops, extra)]
        if idx % 4 < 2:
            a["auto_pad"] = "SAME_UPPER"
    if row == "output_shape_nc_prefix":
        a["output_shape"] = [f + op for f, op in zip(full, ops)]
    if row == "output_padding_ge_stride" and idx % 3 == 0:
        a["auto_pad"] = "SAME_LOWER"
    group = 2 if idx % 3 == 1 else 1
    if group > 1:
        a["group"] = group
    cin, cout = 2 * group, 3 * group if idx % 2 else 2 * group
    if row == "output_shape_nc_prefix":
        a["output_shape"] = [1 + idx % 2, cout] + a["output_shape"]
    if not all(o > 0 for o in resolve_onnx(x, a)[1]):
        return None
    batch = 1 + idx % 2
    return a, cin, cout, [[batch, cin] + x]


def dynamic_cases():
    """output_shape on dynamic spatial dims: (name, opset, attrs, cin, cout, bias, sizes)."""
    return [
        ("notset_k3_s2_2d", 13, {"kernel": [3, 3], "strides": [2, 2], "output_shape": [10, 9]},
         4, 6, True, [[1, 4, 2, 3], [2, 4, 4, 4], [1, 4, 5, 6], [1, 4, 7, 2], [1, 4, 1, 1]]),
        ("same_upper_dilated_output_padding_2d", 17,
         {"kernel": [2, 4], "strides": [3, 2], "dilations": [1, 2], "output_padding": [1, 1],
          "auto_pad": "SAME_UPPER", "output_shape": [8, 11]},
         4, 5, True, [[1, 4, 2, 3], [2, 4, 4, 4], [1, 4, 5, 6], [1, 4, 7, 2]]),
        ("same_lower_group2_1d_opset11", 11,
         {"kernel": [5], "strides": [3], "output_padding": [2], "auto_pad": "SAME_LOWER",
          "output_shape": [13], "group": 2},
         4, 6, False, [[1, 4, 1], [1, 4, 3], [2, 4, 4], [1, 4, 5], [1, 4, 9]]),
        ("nc_prefix_k1_s4_1d", 13,
         {"kernel": [1], "strides": [4], "output_shape": [1, 3, 9]},
         2, 3, True, [[1, 2, 1], [1, 2, 2], [1, 2, 3], [1, 2, 6]]),
    ]


def attr_text(a):
    """Attributes as `name=v,v name=v`: no brackets or semicolons (CMake reads cases.tsv)."""
    return " ".join(f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}"
                    for k, v in node_attributes(a).items())


def write_tsv(path, columns, rows):
    with open(path, "w") as f:
        f.write("\t".join(columns) + "\n")
        for r in rows:
            f.write("\t".join(str(v) for v in r) + "\n")


def generate_ort(root):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    rng = np.random.default_rng(SEED)
    rows = []
    for row, _ in ROWS:
        made = 0
        idx = 0
        while made < CASES_PER_ROW:
            drawn = draw_case(rng, row, idx, made)
            idx += 1
            if drawn is None:
                continue
            a, cin, cout, sizes = drawn
            name = f"{row}_{made}"
            flags = write_case(root, name, 13, a, cin, cout, sizes, rng, idx % 2 == 0, False,
                               True)
            rows.append([name, row, "".join(flags), attr_text(a)])
            made += 1
    # output_shape with a too-negative total on a dynamic input: onnxruntime refuses some sizes
    a = {"kernel": [3], "strides": [3], "output_padding": [1], "output_shape": [11]}
    sizes = [[1, 2, n] for n in (1, 2, 3, 4, 5)]
    flags = write_case(root, "output_shape_negative_total_dynamic", 13, a, 2, 2, sizes, rng, True,
                       True, True)
    rows.append(["output_shape_negative_total_dynamic", "output_shape_negative_total",
                 "".join(flags), attr_text(a)])
    # the same in 2-D with SAME_UPPER: each axis enters onnxruntime's window at its own size
    a = {"kernel": [2, 3], "strides": [4, 3], "output_padding": [1, 0], "auto_pad": "SAME_UPPER",
         "output_shape": [11, 10]}
    sizes = [[1, 2, h, w] for h, w in ((1, 1), (2, 3), (3, 3), (3, 4), (2, 2), (4, 5))]
    flags = write_case(root, "output_shape_negative_total_dynamic_2d", 13, a, 2, 4, sizes, rng,
                       False, True, True)
    rows.append(["output_shape_negative_total_dynamic_2d", "output_shape_negative_total",
                 "".join(flags), attr_text(a)])
    write_tsv(os.path.join(root, "cases.tsv"), ["name", "row", "ort", "attributes"], rows)
    return rows


def generate_dynamic(root):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    rng = np.random.default_rng(SEED + 1)
    rows = []
    for name, opset, a, cin, cout, bias, sizes in dynamic_cases():
        write_case(root, name, opset, a, cin, cout, sizes, rng, bias, True, False)
        rows.append([name, opset, ",".join("x".join(map(str, s[2:])) for s in sizes),
                     attr_text(a)])
    write_tsv(os.path.join(root, "cases.tsv"), ["name", "opset", "input_sizes", "attributes"],
              rows)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-tests", help="a folder holding ONNX's node tests test_*/, e.g. BUILD/onnx-node-tests-v1.22.0 (default: $TCONV_ONNX_NODE_TESTS, else unpacked from tests/data/onnx-node-tests-v1.22.0.tar.xz)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(HERE, "..", "data"))
    import onnx_node_tests
    check_reference(onnx_node_tests.node_tests_dir(args.node_tests, "test_convtranspose"))
    rows = generate_ort(os.path.join(HERE, "ort_conventions"))
    per_row = {}
    for r in rows:
        per_row.setdefault(r[1], [0, 0, 0])
        per_row[r[1]][0] += 1
        per_row[r[1]][1] += r[2].count("R")
        per_row[r[1]][2] += r[2].count("X")
    for row, what in ROWS:
        c, run, refused = per_row[row]
        print(f"{row}: {c} cases, data sets onnxruntime runs {run}, refuses {refused} ({what})")
    dyn = generate_dynamic(os.path.join(HERE, "dynamic_output_shape"))
    print(f"dynamic_output_shape: {len(dyn)} cases")


if __name__ == "__main__":
    main()

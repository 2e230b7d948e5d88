#!/usr/bin/python3
"""Golden data for tconv's tensor and shape ops (issue 14, part w2).

    /usr/bin/python3 tests/golden/ops/generate_tensor.py

Writes one ONNX test directory per case under tests/golden/ops/<case>/ (model.onnx with one
node, test_data_set_0/input_N.pb and output_N.pb) and lists them in tensor_cases.tsv; the
directories it listed before are deleted first, so other generators' cases in this folder are
left alone. Expected outputs come from numpy (and torch for nothing here): never from tconv.
Everything is deterministic (data seeded from crc32 of the case name).

Covered: Range, Tile, Expand, GatherElements, GatherND, ScatterND, ScatterElements, CumSum,
DepthToSpace, SpaceToDepth, Split, Size, Shape, NonZero, TopK, OneHot, Trilu, Einsum,
ConstantOfShape, Dropout, Identity, and integer/bool data through Reshape, Transpose, Concat,
Slice, Gather, Squeeze, Unsqueeze, Flatten, Pad, Cast. Each opset form, negative axes and
indices, empty tensors where legal, and the dtypes the kernels claim.
"""

import os
import shutil
import sys
import zlib

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "tensor_cases.tsv")
CHECKER_MAX_OPSET = 17  # onnx 1.12 (the dev box) checks models up to this opset
CASES = []
ERRORS = {}  # case name -> regex its failure message must match (the case must not pass)


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def elem_type(arr):
    return helper.np_dtype_to_tensor_dtype(arr.dtype) if hasattr(
        helper, "np_dtype_to_tensor_dtype") else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype]


def case(name, op, inputs, outputs, opset=13, **attrs):
    """inputs: list of (name, array or None for an omitted input); outputs: (name, array)."""
    CASES.append((name, op, inputs, outputs, opset, attrs))


def error_case(name, regex, op, inputs, outputs, opset=13, **attrs):
    """A node the runtime must refuse; outputs are placeholders of the declared shape."""
    ERRORS[name] = regex
    case(name, op, inputs, outputs, opset, **attrs)


def build(name, op, inputs, outputs, opset, attrs):
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], name=name,
                            **attrs)
    g_in = [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in inputs if n]
    g_out = [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in outputs]
    graph = helper.make_graph([node], name, g_in, g_out)
    model = helper.make_model(graph, producer_name="tconv-golden-tensor",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if opset <= CHECKER_MAX_OPSET:
        onnx.checker.check_model(model)
    return model


def write(root, name, op, inputs, outputs, opset, attrs):
    d = os.path.join(root, name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data)
    onnx.save(build(name, op, inputs, outputs, opset, attrs), os.path.join(d, "model.onnx"))
    for kind, items in (("input", [(n, a) for n, a in inputs if n]), ("output", outputs)):
        for i, (n, a) in enumerate(items):
            with open(os.path.join(data, "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def f32(name, shape, lo=-3, hi=3):
    return rng(name).uniform(lo, hi, shape).astype(np.float32)


def ints(name, shape, lo=-9, hi=10, dtype=np.int64):
    return rng(name).integers(lo, hi, shape).astype(dtype)


def bools(name, shape):
    return rng(name).integers(0, 2, shape).astype(bool)


def i64(*v):
    """i64(1, 2) is [1, 2]; i64([[1], [2]]) is that nested list."""
    return np.array(v[0] if len(v) == 1 and isinstance(v[0], list) else v, dtype=np.int64)


# ------------------------------------------------------------------ ConstantOfShape, Size, Shape


def constant_of_shape():
    for tag, val in (("i64", np.array([7], np.int64)), ("i32", np.array([-3], np.int32)),
                     ("bool", np.array([True])), ("f64", np.array([2.5])),
                     ("u8", np.array([200], np.uint8)), ("f32", np.array([1.5], np.float32))):
        shape = i64(2, 3, 4)
        case("constantofshape_" + tag, "ConstantOfShape", [("shape", shape)],
             [("y", np.full((2, 3, 4), val[0], dtype=val.dtype))], opset=9,
             value=numpy_helper.from_array(val, "value"))
    case("constantofshape_default", "ConstantOfShape", [("shape", i64(3, 2))],
         [("y", np.zeros((3, 2), np.float32))], opset=9)
    case("constantofshape_empty_dim", "ConstantOfShape", [("shape", i64(2, 0))],
         [("y", np.zeros((2, 0), np.int64))], opset=20,
         value=numpy_helper.from_array(np.array([5], np.int64), "value"))
    case("constantofshape_scalar", "ConstantOfShape", [("shape", np.zeros((0,), np.int64))],
         [("y", np.array(4, np.int32))], opset=9,
         value=numpy_helper.from_array(np.array([4], np.int32), "value"))


def size_shape():
    for tag, x in (("f32", f32("size_f32", (2, 3, 4))), ("i64", ints("size_i64", (5, 2))),
                   ("bool", bools("size_bool", (3,))), ("empty", np.zeros((2, 0, 3), np.int32)),
                   ("u8", ints("size_u8", (4, 4), 0, 255, np.uint8))):
        case("size_" + tag, "Size", [("x", x)], [("y", np.array(x.size, np.int64))])
    for tag, x in (("i8", ints("shape_i8", (2, 3, 4), dtype=np.int8)),
                   ("bool", bools("shape_bool", (1, 5))),
                   ("u16", ints("shape_u16", (3, 1, 2, 2), 0, 99, np.uint16))):
        case("shape_" + tag, "Shape", [("x", x)], [("y", np.array(x.shape, np.int64))])
    x = ints("shape_i32_start_end", (2, 3, 4, 5), dtype=np.int32)
    case("shape_i32_start_end", "Shape", [("x", x)], [("y", i64(3, 4))], opset=15, start=1, end=-1)


def dropout_identity():
    x = f32("dropout", (2, 3, 4))
    case("dropout_opset7_mask", "Dropout", [("x", x)],
         [("y", x), ("mask", np.ones_like(x))], opset=7, ratio=0.3)
    case("dropout_opset10_mask", "Dropout", [("x", x)],
         [("y", x), ("mask", np.ones(x.shape, bool))], opset=10, ratio=0.3)
    case("dropout_opset13_training_false", "Dropout",
         [("x", x), ("ratio", np.array(0.4, np.float32)), ("training_mode", np.array(False))],
         [("y", x), ("mask", np.ones(x.shape, bool))], opset=13)
    case("dropout_opset12_f64", "Dropout", [("x", x.astype(np.float64))],
         [("y", x.astype(np.float64))], opset=12)
    for tag, v in (("i64", ints("identity_i64", (3, 4))), ("bool", bools("identity_bool", (5,))),
                   ("i8", ints("identity_i8", (2, 2), dtype=np.int8))):
        case("identity_" + tag, "Identity", [("x", v)], [("y", v)])


# ------------------------------------------------------------------ Expand, Tile, Range


def expand_tile_range():
    for tag, x, shape in (
            ("f32", f32("expand_f32", (3, 1)), i64(2, 3, 4)),
            ("i64", ints("expand_i64", (1, 4)), i64(3, 1)),
            ("bool", bools("expand_bool", (2, 1, 3)), i64(2, 5, 3)),
            ("smaller_shape", f32("expand_small", (2, 3)), i64(1)),
            ("f64", f32("expand_f64", (1,)).astype(np.float64), i64(2, 2)),
            ("empty", np.zeros((0, 1), np.float32), i64(0, 4)),
            ("scalar", np.array(3, np.int32), i64(2, 2))):
        y = x * np.ones(tuple(shape), dtype=x.dtype) if x.dtype != bool else \
            np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(shape))).copy()
        case("expand_" + tag, "Expand", [("x", x), ("shape", shape)], [("y", y)], opset=13)
    for tag, x, reps in (("f32", f32("tile_f32", (2, 3)), i64(2, 3)),
                         ("i32", ints("tile_i32", (2, 1, 2), dtype=np.int32), i64(1, 3, 2)),
                         ("bool", bools("tile_bool", (3,)), i64(4)),
                         ("zero", f32("tile_zero", (2, 2)), i64(0, 2)),
                         ("u8", ints("tile_u8", (2, 2), 0, 255, np.uint8), i64(1, 1))):
        case("tile_" + tag, "Tile", [("x", x), ("repeats", reps)], [("y", np.tile(x, reps))],
             opset=13)
    x = f32("tile_opset1", (2, 3))
    case("tile_opset1", "Tile", [("x", x), ("tiles", np.array(3, np.int64)),
                                 ("axis", np.array(-1, np.int64))],
         [("y", np.tile(x, (1, 3)))], opset=1)
    for tag, s, l, d, dt in (("f32", 1.5, 7.0, 0.75, np.float32), ("i32", 2, 17, 3, np.int32),
                             ("i64", 10, -4, -3, np.int64), ("f64", -1.0, 1.0, 0.25, np.float64),
                             ("empty", 5, 1, 2, np.int64), ("i16", 0, 9, 2, np.int16),
                             ("f32_neg", 3.0, -2.0, -1.25, np.float32)):
        y = np.arange(s, l, d).astype(dt)
        case("range_" + tag, "Range",
             [("start", np.array(s, dt)), ("limit", np.array(l, dt)), ("delta", np.array(d, dt))],
             [("y", y)], opset=11)


# ------------------------------------------------------------------ Split


def split():
    x = f32("split", (4, 6))
    parts = np.split(x, [2, 5], axis=1)
    case("split_opset11_attr", "Split", [("x", x)],
         [("y%d" % i, p) for i, p in enumerate(parts)], opset=11, axis=1, split=[2, 3, 1])
    parts = np.split(x, 2, axis=0)
    case("split_opset2_equal", "Split", [("x", x)],
         [("y%d" % i, p) for i, p in enumerate(parts)], opset=2)
    parts = np.split(x, [1, 1, 4], axis=-1)
    case("split_opset13_input_neg_axis", "Split", [("x", x), ("split", i64(1, 0, 3, 2))],
         [("y%d" % i, p) for i, p in enumerate(parts)], opset=13, axis=-1)
    xi = ints("split_i64", (3, 7))
    parts = np.split(xi, [3, 6], axis=1)
    case("split_opset18_num_outputs_uneven", "Split", [("x", xi)],
         [("y%d" % i, p) for i, p in enumerate(parts)], opset=18, axis=1, num_outputs=3)
    xb = bools("split_bool", (6, 2))
    parts = np.split(xb, 3, axis=0)
    case("split_opset13_bool_equal", "Split", [("x", xb)],
         [("y%d" % i, p) for i, p in enumerate(parts)], opset=13)
    x1 = f32("split_opset1", (2, 5))
    parts = np.split(x1, [2], axis=1)
    case("split_opset1_split_input", "Split", [("x", x1), ("split", i64(2, 3))],
         [("y%d" % i, p) for i, p in enumerate(parts)], opset=1, axis=1)


# ------------------------------------------------------------------ gathers and scatters


def gather_elements(data, idx, axis):
    return np.take_along_axis(data, np.where(idx < 0, idx + data.shape[axis], idx), axis=axis)


def gathers():
    for tag, data, axis in (("f32_axis0", f32("ge0", (3, 4)), 0),
                            ("i64_axis_neg1", ints("ge1", (2, 3, 5)), -1),
                            ("bool_axis1", bools("ge2", (3, 4)), 1)):
        shape = list(data.shape)
        shape[axis] = 2
        n = data.shape[axis]
        idx = rng("idx" + tag).integers(-n, n, shape).astype(np.int64)
        case("gatherelements_" + tag, "GatherElements", [("data", data), ("indices", idx)],
             [("y", gather_elements(data, idx, axis))], opset=13, axis=axis)
    data = f32("ge_i32", (4, 3))
    idx = np.array([[3, -1, 0], [0, 1, 2]], np.int32)
    case("gatherelements_i32_indices", "GatherElements", [("data", data), ("indices", idx)],
         [("y", gather_elements(data, idx.astype(np.int64), 0))], opset=11, axis=0)

    def gnd(data, idx, b):
        idx = idx.astype(np.int64)
        bshape = idx.shape[:b]
        k = idx.shape[-1]
        out = []
        for bi in np.ndindex(*bshape) if b else [()]:
            d = data[bi]
            ii = idx[bi].reshape(-1, k)
            for t in ii:
                t = tuple(int(v) + (d.shape[j] if v < 0 else 0) for j, v in enumerate(t))
                out.append(d[t])
        return np.array(out, dtype=data.dtype).reshape(idx.shape[:-1] + data.shape[b + k:])

    data = f32("gnd", (2, 3, 4))
    for tag, idx, b, opset in (("elements", i64([[0, 1, 2], [1, -1, -4]]), 0, 11),
                               ("slices", i64([[1], [0], [-1]]), 0, 12),
                               ("k2_rows", np.array([[[0, 1]], [[1, 2]]], np.int32), 0, 13),
                               ("batch1", i64([[1, 3], [0, 0]], [[2, 1], [-1, -1]]), 1, 13),
                               ("batch1_slices", i64([[2], [0]], [[1], [1]]), 1, 13)):
        case("gathernd_" + tag, "GatherND", [("data", data), ("indices", idx)],
             [("y", gnd(data, idx, b))], opset=opset, **({"batch_dims": b} if b else {}))
    datai = ints("gnd_i64", (3, 3))
    idx = i64([[2, 2], [0, -1]])
    case("gathernd_i64_data", "GatherND", [("data", datai), ("indices", idx)],
         [("y", gnd(datai, idx, 0))], opset=13)


def reduce_np(red, a, b):
    return {"none": lambda: b, "add": lambda: a + b, "mul": lambda: a * b,
            "max": lambda: np.maximum(a, b), "min": lambda: np.minimum(a, b)}[red]()


def scatters():
    def scatter_nd(data, idx, upd, red):
        out = data.copy()
        k = idx.shape[-1]
        ii = idx.reshape(-1, k)
        uu = upd.reshape((ii.shape[0],) + data.shape[k:])
        for t, u in zip(ii, uu):
            t = tuple(int(v) + (data.shape[j] if v < 0 else 0) for j, v in enumerate(t))
            out[t] = reduce_np(red, out[t], u)
        return out

    data = f32("snd", (4, 3, 2))
    for tag, red, opset, idx in (("none", "none", 11, i64([[1], [-1]])),
                                 ("add", "add", 16, i64([[0, 1], [0, 1], [3, 2]])),
                                 ("mul", "mul", 16, i64([[2], [2]])),
                                 ("max", "max", 18, i64([[0, 0, 1], [0, 0, 1], [1, 2, 0]])),
                                 ("min", "min", 18, i64([[1, 1], [1, 1]]))):
        k = idx.shape[-1]
        upd = f32("sndu" + tag, idx.shape[:-1] + data.shape[k:])
        attrs = {"reduction": red} if opset >= 16 else {}
        case("scatternd_" + tag, "ScatterND", [("data", data), ("indices", idx), ("updates", upd)],
             [("y", scatter_nd(data, idx, upd, red))], opset=opset, **attrs)
    datai = ints("snd_i64", (5,))
    idx = i64([[0], [4], [0]])
    upd = ints("sndu_i64", (3,))
    case("scatternd_i64_add", "ScatterND", [("data", datai), ("indices", idx), ("updates", upd)],
         [("y", scatter_nd(datai, idx, upd, "add"))], opset=16, reduction="add")
    datab = bools("snd_bool", (3, 2))
    upd = np.array([[True, True]])
    case("scatternd_bool_none", "ScatterND",
         [("data", datab), ("indices", i64([[1]])), ("updates", upd)],
         [("y", scatter_nd(datab, i64([[1]]), upd, "none"))], opset=13)

    def scatter_elements(data, idx, upd, axis, red):
        out = data.copy()
        axis = axis % data.ndim
        for pos in np.ndindex(*idx.shape):
            t = list(pos)
            v = int(idx[pos])
            t[axis] = v + data.shape[axis] if v < 0 else v
            t = tuple(t)
            out[t] = reduce_np(red, out[t], upd[pos])
        return out

    data = f32("se", (3, 4))
    for tag, red, opset, axis in (("none_axis1", "none", 11, 1), ("none_neg_axis", "none", 13, -2),
                                  ("add", "add", 16, 0), ("mul", "mul", 16, 1),
                                  ("max", "max", 18, 1), ("min", "min", 18, 0)):
        n = data.shape[axis]
        shape = (2, 3) if axis in (0, -2) else (3, 2)
        idx = rng("sei" + tag).integers(-n, n, shape).astype(np.int64)
        upd = f32("seu" + tag, shape)
        attrs = {"reduction": red} if opset >= 16 else {}
        case("scatterelements_" + tag, "ScatterElements",
             [("data", data), ("indices", idx), ("updates", upd)],
             [("y", scatter_elements(data, idx, upd, axis, red))], opset=opset, axis=axis,
             **attrs)
    datai = ints("se_i32", (2, 5), dtype=np.int32)
    idx = np.array([[0, 0, 4]], np.int32)
    upd = ints("seu_i32", (1, 3), dtype=np.int32)
    case("scatterelements_i32_add", "ScatterElements",
         [("data", datai), ("indices", idx), ("updates", upd)],
         [("y", scatter_elements(datai, idx, upd, 1, "add"))], opset=16, axis=1, reduction="add")


# ------------------------------------------------------------------ CumSum, blocks, NonZero


def cumsum():
    def ref(x, axis, exclusive, reverse):
        y = np.flip(x, axis) if reverse else x
        c = np.cumsum(y, axis=axis, dtype=x.dtype)
        if exclusive:
            c = c - y
        return np.flip(c, axis) if reverse else c

    x = f32("cumsum", (2, 3, 4))
    for tag, axis, ex, rev in (("default", 0, 0, 0), ("exclusive", 1, 1, 0),
                               ("reverse", 2, 0, 1), ("exclusive_reverse_neg_axis", -1, 1, 1)):
        case("cumsum_" + tag, "CumSum", [("x", x), ("axis", np.array(axis, np.int64))],
             [("y", ref(x, axis, ex, rev))], opset=14, exclusive=ex, reverse=rev)
    for tag, xv in (("i32", ints("cs_i32", (3, 4), dtype=np.int32)),
                    ("i64", ints("cs_i64", (5,)) * 10**12),
                    ("f64", f32("cs_f64", (4, 2)).astype(np.float64))):
        case("cumsum_" + tag, "CumSum", [("x", xv), ("axis", np.array(0, np.int32))],
             [("y", ref(xv, 0, 0, 0))], opset=11)
    case("cumsum_empty", "CumSum", [("x", np.zeros((0, 3), np.float32)),
                                    ("axis", np.array(1, np.int64))],
         [("y", np.zeros((0, 3), np.float32))], opset=14)


def blocks():
    def d2s(x, bs, mode):
        b, c, h, w = x.shape
        if mode == "DCR":
            t = x.reshape(b, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            t = x.reshape(b, c // (bs * bs), bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
        return t.reshape(b, c // (bs * bs), h * bs, w * bs)

    def s2d(x, bs):
        b, c, h, w = x.shape
        t = x.reshape(b, c, h // bs, bs, w // bs, bs).transpose(0, 3, 5, 1, 2, 4)
        return t.reshape(b, c * bs * bs, h // bs, w // bs)

    x = f32("d2s", (2, 8, 3, 2))
    case("depthtospace_dcr", "DepthToSpace", [("x", x)], [("y", d2s(x, 2, "DCR"))], opset=13,
         blocksize=2, mode="DCR")
    case("depthtospace_crd", "DepthToSpace", [("x", x)], [("y", d2s(x, 2, "CRD"))], opset=13,
         blocksize=2, mode="CRD")
    case("depthtospace_opset1", "DepthToSpace", [("x", x)], [("y", d2s(x, 2, "DCR"))], opset=1,
         blocksize=2)
    xi = ints("d2s_i64", (1, 9, 2, 2))
    case("depthtospace_i64_bs3", "DepthToSpace", [("x", xi)], [("y", d2s(xi, 3, "CRD"))],
         opset=11, blocksize=3, mode="CRD")
    x = f32("s2d", (2, 3, 4, 6))
    case("spacetodepth_f32", "SpaceToDepth", [("x", x)], [("y", s2d(x, 2))], opset=13,
         blocksize=2)
    xu = ints("s2d_u8", (1, 2, 3, 3), 0, 255, np.uint8)
    case("spacetodepth_u8_bs3", "SpaceToDepth", [("x", xu)], [("y", s2d(xu, 3))], opset=1,
         blocksize=3)


def nonzero():
    for tag, x in (("f32", np.where(f32("nz", (3, 4)) > 0.5, f32("nz", (3, 4)), 0.0)
                    .astype(np.float32)),
                   ("i64", ints("nz_i64", (2, 3, 2), -1, 2)),
                   ("bool", bools("nz_bool", (5,))),
                   ("all_zero", np.zeros((2, 2), np.int32)),
                   ("empty", np.zeros((0, 3), np.float32))):
        case("nonzero_" + tag, "NonZero", [("x", x)],
             [("y", np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1))], opset=13)


# ------------------------------------------------------------------ TopK, OneHot, Trilu


def topk():
    def ref(x, k, axis, largest):
        key = -x if largest else x
        order = np.argsort(key, axis=axis, kind="stable")
        idx = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)

    x = f32("topk", (3, 5))
    for tag, k, axis, largest, opset in (("opset10", 2, -1, 1, 10), ("smallest", 3, 1, 0, 11),
                                         ("axis0", 2, 0, 1, 11), ("all", 5, -1, 1, 11),
                                         ("k0", 0, 1, 1, 11)):
        v, i = ref(x, k, axis, largest)
        attrs = {"axis": axis}
        if opset >= 11:
            attrs["largest"] = largest
        case("topk_" + tag, "TopK", [("x", x), ("k", i64(k))], [("values", v), ("indices", i)],
             opset=opset, **attrs)
    v, i = ref(x, 2, -1, 1)
    case("topk_opset1_attr", "TopK", [("x", x)], [("values", v), ("indices", i)], opset=1, k=2)
    ties = np.array([[1, 3, 3, 2, 3, 1]], np.float32)
    for largest in (1, 0):
        v, i = ref(ties, 4, 1, largest)
        case("topk_ties_%s" % ("largest" if largest else "smallest"), "TopK",
             [("x", ties), ("k", i64(4))], [("values", v), ("indices", i)], opset=11,
             largest=largest)
    for tag, xv in (("i64", ints("topk_i64", (2, 6)) * 10**15),
                    ("i32", ints("topk_i32", (4, 3), dtype=np.int32)),
                    ("f64", f32("topk_f64", (2, 4)).astype(np.float64))):
        v, i = ref(xv, 2, -1, 1)
        case("topk_" + tag, "TopK", [("x", xv), ("k", i64(2))], [("values", v), ("indices", i)],
             opset=11)


def one_hot():
    def ref(idx, depth, values, axis):
        idx = np.asarray(idx).astype(np.int64)
        idx = np.where(idx < 0, idx + depth, idx)
        hot = (np.arange(depth) == idx[..., None])
        hot = np.moveaxis(hot, -1, axis)
        return np.where(hot, values[1], values[0]).astype(values.dtype)

    idx = i64([[1, 4, -1], [0, 7, -6]])
    vals = np.array([-1.0, 2.0], np.float32)
    for tag, axis in (("axis_last", -1), ("axis0", 0), ("axis1", 1)):
        case("onehot_" + tag, "OneHot", [("indices", idx), ("depth", i64(5)), ("values", vals)],
             [("y", ref(idx, 5, vals, axis))], opset=11, axis=axis)
    fidx = np.array([0.0, 2.0, 1.0], np.float32)
    ivals = np.array([0, 9], np.int64)
    case("onehot_float_indices_i64_values", "OneHot",
         [("indices", fidx), ("depth", np.array([3.0], np.float32)), ("values", ivals)],
         [("y", ref(fidx, 3, ivals, -1))], opset=9)


def trilu():
    def ref(x, k, upper):
        return np.triu(x, k) if upper else np.tril(x, k)

    x = f32("trilu", (4, 5))
    for tag, k, upper in (("upper", 0, 1), ("lower", 0, 0), ("upper_k2", 2, 1),
                          ("lower_kneg1", -1, 0), ("upper_kneg7", -7, 1), ("lower_k9", 9, 0)):
        inputs = [("x", x)] if k == 0 else [("x", x), ("k", np.array(k, np.int64))]
        case("trilu_" + tag, "Trilu", inputs, [("y", ref(x, k, upper))], opset=14, upper=upper)
    x3 = ints("trilu_i64", (2, 3, 3))
    case("trilu_batch_i64", "Trilu", [("x", x3), ("k", np.array(1, np.int64))],
         [("y", ref(x3, 1, 1))], opset=14)
    xb = np.ones((3, 2), bool)
    case("trilu_bool_lower", "Trilu", [("x", xb)], [("y", ref(xb, 0, 0))], opset=14, upper=0)
    case("trilu_empty", "Trilu", [("x", np.zeros((0, 3), np.float32))],
         [("y", np.zeros((0, 3), np.float32))], opset=14)


def einsum():
    forms = (("matmul_batched", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
             ("channel_mix", "bhwc,cd->bhwd", [(1, 3, 4, 5), (5, 2)]),
             ("transpose", "ij->ji", [(3, 4)]),
             ("dot", "i,i->", [(6,), (6,)]),
             ("row_sum", "bij->bi", [(2, 3, 4)]),
             ("implicit_matmul", "ij,jk", [(3, 4), (4, 2)]),
             ("diagonal", "ii->i", [(4, 4)]),
             ("attention", "bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
             ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 2)]),
             ("outer", "i,j->ij", [(3,), (4,)]),
             ("trace", "ii", [(3, 3)]),
             ("three_operands", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
             ("spaces", "b i j , b j k -> b i k", [(1, 2, 3), (1, 3, 2)]),
             ("permuted_gemm", "kbj,bik->jbi", [(4, 2, 3), (2, 5, 4)]),
             ("grouped_gemm", "ijkl,klm->mji", [(2, 3, 4, 2), (4, 2, 3)]))
    for tag, eq, shapes in forms:
        ops = [f32("einsum_%s_%d" % (tag, i), s) for i, s in enumerate(shapes)]
        y = np.einsum(eq.replace(" ", ""), *[o.astype(np.float64) for o in ops]).astype(np.float32)
        case("einsum_" + tag, "Einsum", [("x%d" % i, o) for i, o in enumerate(ops)],
             [("y", np.asarray(y))], opset=12, equation=eq)
    a = f32("einsum_f64_a", (3, 4)).astype(np.float64)
    b = f32("einsum_f64_b", (4, 2)).astype(np.float64)
    case("einsum_f64", "Einsum", [("a", a), ("b", b)], [("y", np.einsum("ij,jk->ik", a, b))],
         opset=12, equation="ij,jk->ik")
    a = ints("einsum_i64_a", (2, 3))
    b = ints("einsum_i64_b", (3, 2))
    case("einsum_i64", "Einsum", [("a", a), ("b", b)], [("y", np.einsum("ij,jk->ik", a, b))],
         opset=12, equation="ij,jk->ik")


# ------------------------------------------------------------------ integer/bool data movement


def data_movement():
    xi = ints("mv_i64", (2, 3, 4))
    case("reshape_i64", "Reshape", [("x", xi), ("shape", i64(4, -1))],
         [("y", xi.reshape(4, -1))], opset=14)
    xb = bools("mv_bool", (2, 3, 4))
    case("transpose_bool", "Transpose", [("x", xb)], [("y", xb.transpose(2, 0, 1))], opset=13,
         perm=[2, 0, 1])
    a = ints("mv_cat_a", (2, 3), dtype=np.int32)
    b = ints("mv_cat_b", (2, 1), dtype=np.int32)
    case("concat_i32_neg_axis", "Concat", [("a", a), ("b", b)],
         [("y", np.concatenate([a, b], -1))], opset=13, axis=-1)
    x8 = ints("mv_i8", (5, 4), dtype=np.int8)
    case("slice_i8_neg_step", "Slice",
         [("x", x8), ("starts", i64(-1, 0)), ("ends", i64(0, 4)), ("axes", i64(0, 1)),
          ("steps", i64(-2, 3))], [("y", x8[-1:0:-2, 0:4:3])], opset=13)
    xu = ints("mv_u8", (4, 3), 0, 255, np.uint8)
    gi = i64(-1, 0, 2)
    case("gather_u8", "Gather", [("x", xu), ("indices", gi)], [("y", np.take(xu, gi, axis=0))],
         opset=13)
    case("squeeze_bool", "Squeeze", [("x", xb[:, :1]), ("axes", i64(1))],
         [("y", np.squeeze(xb[:, :1], 1))], opset=13)
    case("unsqueeze_i64", "Unsqueeze", [("x", xi), ("axes", i64(0, -1))],
         [("y", xi[None, ..., None])], opset=13)
    x16 = ints("mv_i16", (2, 3, 2), dtype=np.int16)
    case("flatten_i16", "Flatten", [("x", x16)], [("y", x16.reshape(2, 6))], opset=13, axis=1)
    xp = ints("mv_pad", (2, 3))
    case("pad_i64_constant", "Pad", [("x", xp), ("pads", i64(1, 0, 0, 2)),
                                     ("value", np.array(-7, np.int64))],
         [("y", np.pad(xp, ((1, 0), (0, 2)), constant_values=-7))], opset=13)
    case("pad_bool_reflect", "Pad", [("x", xb[0]), ("pads", i64(0, 1, 0, 1))],
         [("y", np.pad(xb[0], ((0, 0), (1, 1)), mode="reflect"))], opset=13, mode="reflect")
    case("cast_i64_to_bool", "Cast", [("x", xi)], [("y", xi.astype(bool))], opset=13,
         to=onnx.TensorProto.BOOL)
    case("cast_bool_to_i32", "Cast", [("x", xb)], [("y", xb.astype(np.int32))], opset=13,
         to=onnx.TensorProto.INT32)


def threaded():
    """Outputs of 128 KiB and more: the kernels cut them into blocks copied by several threads
    (tests/runtime/golden_tensor.cmake runs *_threaded cases with --threads 4)."""
    x = f32("expand_threaded", (64, 1))
    case("expand_threaded", "Expand", [("x", x), ("shape", i64(1, 64, 512))],
         [("y", np.broadcast_to(x, (1, 64, 512)).copy())], opset=13)
    xu = ints("tile_threaded", (4, 64), 0, 255, np.uint8)
    case("tile_threaded_u8", "Tile", [("x", xu), ("repeats", i64(32, 16))],
         [("y", np.tile(xu, (32, 16)))], opset=13)
    x = f32("d2s_threaded", (1, 16, 32, 64))
    b, c, h, w = x.shape
    y = x.reshape(b, 2, 2, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(b, c // 4, h * 2,
                                                                             w * 2)
    case("depthtospace_threaded", "DepthToSpace", [("x", x)], [("y", y)], opset=13, blocksize=2)
    x = f32("split_threaded", (1, 2, 128, 256))
    case("split_threaded", "Split", [("x", x)], [("a", x[:, :1]), ("b", x[:, 1:])], opset=13,
         axis=1)


def errors():
    z = np.zeros((2, 2), np.float32)
    error_case("error_gatherelements_index_range", "index 5 is out of range for an axis of size 3",
               "GatherElements", [("data", f32("err_ge", (3, 2))), ("indices", i64([[5, 0]]))],
               [("y", np.zeros((1, 2), np.float32))], axis=0)
    error_case("error_topk_k_above_axis", "k = 7 for an axis of size 5", "TopK",
               [("x", f32("err_topk", (2, 5))), ("k", i64(7))],
               [("values", np.zeros((2, 7), np.float32)), ("indices", np.zeros((2, 7), np.int64))],
               opset=11)
    error_case("error_split_sizes_sum", "split sizes .* do not cut", "Split",
               [("x", f32("err_split", (5, 2))), ("split", i64(2, 2))],
               [("a", z), ("b", z)], opset=13)
    error_case("error_scatternd_max_before_18", "unsupported reduction = 'max'", "ScatterND",
               [("data", z), ("indices", i64([[0]])), ("updates", np.zeros((1, 2), np.float32))],
               [("y", z)], opset=16, reduction="max")
    error_case("error_depthtospace_channels", "channels 6 are not a multiple of blocksize", "DepthToSpace",
               [("x", f32("err_d2s", (1, 6, 2, 2)))], [("y", np.zeros((1, 1, 4, 4), np.float32))],
               blocksize=2)
    error_case("error_einsum_output_label", "attribute 'equation' 'ij,jk->il': output label 'l' is in no input", "Einsum",
               [("a", z), ("b", z)], [("y", z)], opset=12, equation="ij,jk->il")
    error_case("error_range_delta_zero", "delta is 0", "Range",
               [("start", np.array(0, np.int64)), ("limit", np.array(4, np.int64)),
                ("delta", np.array(0, np.int64))], [("y", np.zeros((4,), np.int64))], opset=11)
    error_case("error_dropout_training", "unsupported training_mode", "Dropout",
               [("x", z), ("ratio", np.array(0.5, np.float32)), ("training_mode", np.array(True))],
               [("y", z)], opset=13)
    error_case("error_expand_incompatible", "shapes do not broadcast", "Expand",
               [("x", f32("err_expand", (3,))), ("shape", i64(4))], [("y", np.zeros((4,), np.float32))])


def half():
    """float16 data through the ops that move elements (taken as 2-byte elements natively)."""
    x = f32("half", (2, 4, 2, 2)).astype(np.float16)
    case("expand_f16", "Expand", [("x", x[:, :1]), ("shape", i64(2, 3, 2, 2))],
         [("y", np.broadcast_to(x[:, :1], (2, 3, 2, 2)).copy())], opset=13)
    case("tile_f16", "Tile", [("x", x), ("repeats", i64(1, 1, 2, 1))],
         [("y", np.tile(x, (1, 1, 2, 1)))], opset=13)
    case("split_f16", "Split", [("x", x), ("split", i64(1, 3))],
         [("a", x[:, :1]), ("b", x[:, 1:])], opset=13, axis=1)
    y = x.reshape(2, 2, 2, 1, 2, 2).transpose(0, 3, 4, 1, 5, 2).reshape(2, 1, 4, 4)
    case("depthtospace_f16", "DepthToSpace", [("x", x)], [("y", y)], opset=13, blocksize=2)
    idx = i64([[[[1, 0], [0, 1]]]])
    case("gatherelements_f16", "GatherElements", [("data", x[:1, :1]), ("indices", idx)],
         [("y", np.take_along_axis(x[:1, :1], idx, axis=-1))], opset=13, axis=-1)
    case("trilu_f16", "Trilu", [("x", x)], [("y", np.triu(x))], opset=14)


def main():
    for make in (errors, half, threaded, constant_of_shape, size_shape, dropout_identity, expand_tile_range, split, gathers,
                 scatters, cumsum, blocks, nonzero, topk, one_hot, trilu, einsum, data_movement):
        make()
    names = [c[0] for c in CASES]
    if len(set(names)) != len(names):
        sys.exit("FAIL duplicate case names")
    if os.path.exists(LIST):
        for line in open(LIST).read().splitlines()[1:]:
            shutil.rmtree(os.path.join(HERE, line.split("\t")[0]), ignore_errors=True)
    rows = ["case\top\topset\texpected failure (regex; empty: must pass)"]
    for name, op, inputs, outputs, opset, attrs in CASES:
        write(HERE, name, op, inputs, outputs, opset, attrs)
        rows.append("%s\t%s\t%d\t%s" % (name, op, opset, ERRORS.get(name, "")))
    with open(LIST, "w") as f:
        f.write("\n".join(rows) + "\n")
    print("%d cases written" % len(CASES))


if __name__ == "__main__":
    main()

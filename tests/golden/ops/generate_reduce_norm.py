#!/usr/bin/env python3
"""Golden data for the reductions and normalizations (issue 14, part w3).

    /usr/bin/python3 tests/golden/ops/generate_reduce_norm.py

Writes one ONNX test directory per case under tests/golden/ops/<case>/ (model.onnx with a single
node, test_data_set_0/input_N.pb for the graph inputs, output_N.pb for the expected outputs) and
lists the cases, one per line, in tests/golden/ops/reduce_norm_cases.txt (ctest registers each
as golden.ops.<case>). Deterministic: data is seeded from crc32(case name). It deletes only the
directories named in the previous list.

Golden values never come from tconv:
  Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax, LRN: numpy in float64, following the ONNX spec of
    the op version (the Reduce* formulas of onnx's reference tests, numpy argmax on the reversed
    axis for select_last_index, the pre-13 softmax on the input coerced to 2-D);
  InstanceNormalization, GroupNormalization, LayerNormalization: torch.nn.functional
    (instance_norm, group_norm, layer_norm) in float64, with the per-group scale of
    GroupNormalization-18 repeated per channel; LayerNormalization's Mean/InvStdDev from numpy.
Softmax, LogSoftmax and LRN (odd sizes) are cross-checked against torch, and the numpy Reduce*
against the ONNX node tests' expected data where those exist. Float32 cases get float32 inputs;
the reference works on those rounded inputs in float64 and rounds once at the end.
"""

import os
import shutil
import sys
import zlib

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "reduce_norm_cases.txt")

NP_TO_ONNX = {
    np.float32: TensorProto.FLOAT,
    np.float64: TensorProto.DOUBLE,
    np.int32: TensorProto.INT32,
    np.int64: TensorProto.INT64,
}

IR_FOR_OPSET = {11: 6, 12: 7, 13: 7, 17: 8, 18: 8, 21: 10}


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def onnx_type(arr):
    return NP_TO_ONNX[arr.dtype.type]


class Case:
    """One single-node model. inputs: list of (name, array, is_initializer); '' skips a slot."""

    def __init__(self, name, op, opset, inputs, outputs, attrs):
        self.name, self.op, self.opset = name, op, opset
        self.inputs, self.outputs, self.attrs = inputs, outputs, attrs

    def model(self):
        graph_inputs, inits, names = [], [], []
        for name, arr, is_init in self.inputs:
            names.append(name)
            if not name:
                continue
            if is_init:
                inits.append(numpy_helper.from_array(arr, name))
            else:
                graph_inputs.append(helper.make_tensor_value_info(name, onnx_type(arr), arr.shape))
        outs = [helper.make_tensor_value_info(n, onnx_type(a), a.shape) for n, a in self.outputs]
        node = helper.make_node(self.op, names, [n for n, _ in self.outputs], name=self.name,
                                **self.attrs)
        graph = helper.make_graph([node], self.name, graph_inputs, outs, inits)
        model = helper.make_model(graph, producer_name="tconv-golden-ops",
                                  opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = IR_FOR_OPSET[self.opset]
        if self.opset <= 17:  # the installed onnx (1.12) knows opsets up to 17
            onnx.checker.check_model(model)
        return model

    def write(self, root):
        d = os.path.join(root, self.name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        onnx.save(self.model(), os.path.join(d, "model.onnx"))
        k = 0
        for name, arr, is_init in self.inputs:
            if name and not is_init:
                write_pb(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), arr, name)
                k += 1
        for k, (name, arr) in enumerate(self.outputs):
            write_pb(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), arr, name)


def write_pb(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(arr), name).SerializeToString())


def check(what, got, want, rtol=1e-9, atol=1e-12):
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        print("FAIL %s: max diff %g" % (what, np.max(np.abs(np.asarray(got) - np.asarray(want)))))
        sys.exit(1)


# ---------------------------------------------------------------- reductions

def reduce_ref(op, x, axes, keepdims):
    """numpy in float64; axes None: all."""
    x = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    kw = dict(axis=axes, keepdims=bool(keepdims))
    if op in ("ReduceMax", "ReduceMin", "ReduceLogSumExp") and x.size == 0:
        # numpy has no identity for these; ONNX's is -inf (max, log-sum-exp) and +inf (min), as in
        # its test_reduce_*_empty_set node tests
        return np.full(np.sum(x, **kw).shape, np.inf if op == "ReduceMin" else -np.inf)
    if op == "ReduceSum":
        return np.sum(x, **kw)
    if op == "ReduceMean":
        return np.mean(x, **kw)
    if op == "ReduceMax":
        return np.max(x, **kw)
    if op == "ReduceMin":
        return np.min(x, **kw)
    if op == "ReduceProd":
        return np.prod(x, **kw)
    if op == "ReduceL1":
        return np.sum(np.abs(x), **kw)
    if op == "ReduceL2":
        return np.sqrt(np.sum(x * x, **kw))
    if op == "ReduceLogSum":
        with np.errstate(divide="ignore"):  # log(0) = -inf: an empty set (ONNX's node tests)
            return np.log(np.sum(x, **kw))
    if op == "ReduceLogSumExp":
        m = np.max(x, axis=axes, keepdims=True)
        r = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
        return r if keepdims else np.squeeze(r, axis=axes)
    if op == "ReduceSumSquare":
        return np.sum(x * x, **kw)
    raise ValueError(op)


REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
              "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
INT_REDUCE_OPS = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"]


def reduce_data(op, name, shape, dtype):
    r = rng_for(name)
    if dtype in (np.int32, np.int64):
        lo, hi = (-3, 4) if op == "ReduceProd" else (-50, 50)
        return r.integers(lo, hi, size=shape).astype(dtype)
    if op == "ReduceLogSum":
        return r.uniform(0.5, 2.0, size=shape).astype(dtype)
    if op == "ReduceProd":
        return r.uniform(0.6, 1.4, size=shape).astype(dtype)
    return r.normal(0.0, 2.0, size=shape).astype(dtype)


def input_form_opset(op):
    return 13 if op == "ReduceSum" else 18


def attr_form_opset(op):
    return 11 if op == "ReduceSum" else 13


def reduce_case(op, suffix, shape, dtype, axes, keepdims, form, noop=None, axes_init=False):
    """form 'attr': axes attribute; 'input': axes as input 1 (None: omitted)."""
    name = "%s_%s" % (op.lower(), suffix)
    x = reduce_data(op, name, shape, dtype)
    np_axes = None if axes is None or (len(axes) == 0 and not noop) else tuple(axes)
    if noop and (axes is None or len(axes) == 0):
        # noop_with_empty_axes: a reduction over no axis, each element its own set (as onnx's
        # reference: ReduceSumSquare gives x*x, ReduceL1 |x|, ReduceLogSum log x)
        y = reduce_ref(op, x, (), keepdims).astype(dtype)
    else:
        y = reduce_ref(op, x, np_axes, keepdims).astype(dtype)
    attrs = {"keepdims": keepdims}
    inputs = [("x", x, False)]
    if form == "attr":
        opset = attr_form_opset(op)
        if axes is not None:
            attrs["axes"] = list(axes)
    else:
        opset = input_form_opset(op)
        if noop is not None:
            attrs["noop_with_empty_axes"] = noop
        if axes is not None:
            inputs.append(("axes", np.array(axes, dtype=np.int64), axes_init))
    return Case(name, op, opset, inputs, [("y", np.asarray(y, dtype=dtype))], attrs)


def reduce_cases():
    cases = []
    f32, f64 = np.float32, np.float64
    for op in REDUCE_OPS:
        cases += [
            reduce_case(op, "attr_axis1_keepdims", (3, 4, 5), f32, [1], 1, "attr"),
            reduce_case(op, "attr_neg_axes_nokeep", (3, 4, 5), f32, [-1, 0], 0, "attr"),
            reduce_case(op, "attr_all_axes", (2, 3, 4), f32, None, 0, "attr"),
            reduce_case(op, "input_axes_0_2", (3, 4, 5, 2), f32, [0, 2], 1, "input"),
            reduce_case(op, "input_axes_init_neg", (2, 3, 6), f32, [-2], 0, "input",
                        axes_init=True),
            reduce_case(op, "input_no_axes_all", (3, 4), f32, None, 1, "input"),
            reduce_case(op, "input_empty_axes_all", (3, 4), f32, [], 0, "input", noop=0,
                        axes_init=True),
            reduce_case(op, "input_noop_empty_axes", (3, 4), f32, [], 1, "input", noop=1,
                        axes_init=True),
            reduce_case(op, "input_long_row", (2, 4099), f32, [1], 0, "input"),
            reduce_case(op, "attr_f64", (4, 3, 5), f64, [2, 0], 1, "attr"),
            reduce_case(op, "input_f64", (4, 3, 5), f64, [1], 0, "input"),
        ]
    for op in INT_REDUCE_OPS:
        for dt, tag in ((np.int32, "i32"), (np.int64, "i64")):
            cases += [
                reduce_case(op, "attr_%s" % tag, (3, 4, 5), dt, [1, -1], 0, "attr"),
                reduce_case(op, "input_%s" % tag, (3, 4, 5), dt, [0], 1, "input"),
            ]
    # Reductions over an empty axis give the operation's identity.
    for op in ["ReduceSum", "ReduceProd", "ReduceSumSquare", "ReduceL1"]:
        cases.append(reduce_case(op, "empty_axis", (3, 0, 2), f32, [1], 1, "input"))
    return cases


def check_reduce_against_node_tests(node_tests):
    """Our numpy formulas against ONNX's own expected data of the reduce node tests present."""
    checked = 0
    for d in sorted(os.listdir(node_tests)) if os.path.isdir(node_tests) else []:
        if not d.startswith("test_reduce_") or "expanded" in d:
            continue
        m = onnx.load(os.path.join(node_tests, d, "model.onnx"))
        node = m.graph.node[0]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        data = os.path.join(node_tests, d, "test_data_set_0")
        ins = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "input_%d.pb" % i)))
               for i in range(len(m.graph.input))]
        want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_0.pb")))
        axes = attrs.get("axes")
        if axes is None and len(ins) > 1:
            axes = list(ins[1])
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                continue
            axes = None
        got = reduce_ref(node.op_type, ins[0], tuple(axes) if axes else None,
                         attrs.get("keepdims", 1))
        check(d, got, want, rtol=1e-5, atol=1e-6)
        checked += 1
    return checked


# ---------------------------------------------------------------- ArgMax, ArgMin

def arg_ref(op, x, axis, keepdims, last):
    f = np.argmax if op == "ArgMax" else np.argmin
    if last:
        flipped = np.flip(x, axis=axis)
        idx = x.shape[axis] - 1 - f(flipped, axis=axis)
    else:
        idx = f(x, axis=axis)
    if keepdims:
        idx = np.expand_dims(idx, axis)
    return idx.astype(np.int64)


def arg_cases():
    cases = []
    for op in ["ArgMax", "ArgMin"]:
        specs = [
            ("axis0_keepdims", 11, np.float32, 0, 1, None),
            ("neg_axis_nokeep", 11, np.float32, -1, 0, None),
            ("default_axis", 11, np.float32, None, None, None),
            ("ties_first", 13, np.float32, 1, 1, 0),
            ("ties_last", 13, np.float32, 1, 0, 1),
            ("ties_last_i32", 13, np.int32, -2, 1, 1),
            ("i64", 13, np.int64, 2, 0, 0),
            ("f64", 13, np.float64, 1, 1, 0),
        ]
        for suffix, opset, dt, axis, keep, last in specs:
            name = "%s_%s" % (op.lower(), suffix)
            r = rng_for(name)
            if "ties" in suffix or dt in (np.int32, np.int64):
                x = r.integers(0, 3, size=(3, 4, 5)).astype(dt)  # many equal values
            else:
                x = r.normal(size=(3, 4, 5)).astype(dt)
            attrs = {}
            if axis is not None:
                attrs["axis"] = axis
            if keep is not None:
                attrs["keepdims"] = keep
            if last is not None:
                attrs["select_last_index"] = last
            y = arg_ref(op, x, 0 if axis is None else axis, 1 if keep is None else keep, last)
            cases.append(Case(name, op, opset, [("x", x, False)], [("y", y)], attrs))
    return cases


# ---------------------------------------------------------------- Softmax, LogSoftmax

def softmax_ref(x, axis, opset, log):
    x = x.astype(np.float64)
    rank = x.ndim
    axis = axis + rank if axis < 0 else axis
    if opset < 13:  # coerced to 2-D at axis: normalize whole rows of the flattened tail
        shape = x.shape
        rows = int(np.prod(shape[:axis])) if axis > 0 else 1
        x2 = x.reshape(rows, -1)
        m = x2.max(axis=1, keepdims=True)
        s = np.log(np.exp(x2 - m).sum(axis=1, keepdims=True))
        y = x2 - m - s
        return (y if log else np.exp(y)).reshape(shape)
    m = x.max(axis=axis, keepdims=True)
    s = np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    y = x - m - s
    return y if log else np.exp(y)


def softmax_cases():
    cases = []
    for op in ["Softmax", "LogSoftmax"]:
        specs = [
            ("v11_default_axis_2d_coerce", 11, np.float32, None, (2, 3, 4)),
            ("v11_axis0_whole", 11, np.float32, 0, (2, 3, 4)),
            ("v11_axis_neg1", 11, np.float32, -1, (2, 3, 4)),
            ("v11_axis_rank", 11, np.float32, 3, (2, 3, 4)),
            ("v13_axis0", 13, np.float32, 0, (3, 4, 5)),
            ("v13_axis1", 13, np.float32, 1, (3, 4, 5)),
            ("v13_default_axis", 13, np.float32, None, (3, 4, 5)),
            ("v13_neg_axis", 13, np.float32, -2, (2, 3, 4, 5)),
            ("v13_large_numbers", 13, np.float32, -1, (4, 8)),
            ("v13_long_row", 13, np.float32, -1, (3, 5000)),
            ("v13_f64", 13, np.float64, 1, (3, 4, 5)),
            ("v11_f64", 11, np.float64, 1, (3, 4, 5)),
        ]
        for suffix, opset, dt, axis, shape in specs:
            name = "%s_%s" % (op.lower(), suffix)
            r = rng_for(name)
            x = r.normal(0.0, 3.0, size=shape)
            if "large" in suffix:
                x = x + 1e4 * r.integers(-3, 4, size=(shape[0], 1))
            x = x.astype(dt)
            default = 1 if opset < 13 else -1
            y = softmax_ref(x, default if axis is None else axis, opset, op == "LogSoftmax")
            if opset >= 13:  # cross-check with torch along the axis
                t = torch.from_numpy(x.astype(np.float64))
                a = default if axis is None else axis
                ty = (F.log_softmax if op == "LogSoftmax" else F.softmax)(t, dim=a).numpy()
                check(name + " vs torch", y, ty)
            attrs = {} if axis is None else {"axis": axis}
            cases.append(Case(name, op, opset, [("x", x, False)], [("y", y.astype(dt))], attrs))
    return cases


# ---------------------------------------------------------------- normalizations

def instance_norm_cases():
    cases = []
    for suffix, shape, dt, eps in [("rank4", (2, 3, 5, 4), np.float32, 1e-5),
                                   ("rank3_eps", (3, 4, 7), np.float32, 1e-2),
                                   ("rank5", (1, 2, 3, 4, 2), np.float32, 1e-5),
                                   ("big_plane", (1, 2, 64, 65), np.float32, 1e-5),
                                   ("f64", (2, 3, 6), np.float64, 1e-5),
                                   ("large_mean", (2, 3, 64), np.float32, 1e-5)]:
        name = "instancenorm_" + suffix
        r = rng_for(name)
        c = shape[1]
        offset = 1e4 if "large_mean" in suffix else 1.0  # mean far above the deviation
        x = (r.normal(offset, 3.0, size=shape)).astype(dt)
        s = r.normal(size=c).astype(dt)
        b = r.normal(size=c).astype(dt)
        y = F.instance_norm(torch.from_numpy(x.astype(np.float64)),
                            weight=torch.from_numpy(s.astype(np.float64)),
                            bias=torch.from_numpy(b.astype(np.float64)), eps=eps).numpy()
        cases.append(Case(name, "InstanceNormalization", 13,
                          [("x", x, False), ("scale", s, False), ("B", b, True)],
                          [("y", y.astype(dt))], {"epsilon": eps}))
    return cases


def group_norm_cases():
    cases = []
    specs = [("v18_per_group", 18, (2, 6, 4, 3), 3, np.float32),
             ("v18_one_group", 18, (2, 4, 5), 1, np.float32),
             ("v18_groups_eq_channels", 18, (2, 4, 3, 3), 4, np.float32),
             ("v21_per_channel", 21, (2, 6, 4, 3), 3, np.float32),
             ("v21_one_group", 21, (3, 4, 10), 1, np.float32),
             ("v21_f64", 21, (2, 4, 3, 2), 2, np.float64),
             ("v18_f64", 18, (2, 4, 3, 2), 2, np.float64),
             ("v21_large_mean", 21, (2, 4, 32), 2, np.float32)]
    for suffix, opset, shape, groups, dt in specs:
        name = "groupnorm_" + suffix
        r = rng_for(name)
        c = shape[1]
        n_param = c if opset >= 21 else groups
        x = r.normal(1e4 if "large_mean" in suffix else 0.5, 2.0, size=shape).astype(dt)
        s = r.normal(size=n_param).astype(dt)
        b = r.normal(size=n_param).astype(dt)
        s_c = s if opset >= 21 else np.repeat(s, c // groups)
        b_c = b if opset >= 21 else np.repeat(b, c // groups)
        eps = 1e-5
        y = F.group_norm(torch.from_numpy(x.astype(np.float64)), groups,
                         weight=torch.from_numpy(s_c.astype(np.float64)),
                         bias=torch.from_numpy(b_c.astype(np.float64)), eps=eps).numpy()
        cases.append(Case(name, "GroupNormalization", opset,
                          [("x", x, False), ("scale", s, False), ("bias", b, False)],
                          [("y", y.astype(dt))], {"epsilon": eps, "num_groups": groups}))
    return cases


def layer_norm_cases():
    cases = []
    specs = [  # suffix, shape, axis (None: default -1), bias, n outputs, dtype, eps
        ("last_axis", (2, 3, 8), None, True, 1, np.float32, 1e-5),
        ("axis1_stats", (2, 3, 4, 5), 1, True, 3, np.float32, 1e-5),
        ("neg_axis2_no_bias", (2, 3, 4, 5), -2, False, 1, np.float32, 1e-3),
        ("axis0_mean_only", (3, 4), 0, True, 2, np.float32, 1e-5),
        ("long_row", (2, 4096), -1, True, 3, np.float32, 1e-5),
        ("f64_stats", (3, 5, 6), -1, True, 3, np.float64, 1e-5),
        ("large_mean", (4, 64), -1, True, 1, np.float32, 1e-5),
    ]
    for suffix, shape, axis, has_bias, n_out, dt, eps in specs:
        name = "layernorm_" + suffix
        r = rng_for(name)
        a = -1 if axis is None else axis
        a = a + len(shape) if a < 0 else a
        norm_shape = shape[a:]
        x = r.normal(1e4 if "large_mean" in suffix else 1.0, 2.0, size=shape).astype(dt)
        s = r.normal(size=norm_shape).astype(dt)
        b = r.normal(size=norm_shape).astype(dt)
        x64 = x.astype(np.float64)
        y = F.layer_norm(torch.from_numpy(x64), norm_shape,
                         weight=torch.from_numpy(s.astype(np.float64)),
                         bias=torch.from_numpy(b.astype(np.float64)) if has_bias else None,
                         eps=eps).numpy()
        red = tuple(range(a, len(shape)))
        mean = x64.mean(axis=red, keepdims=True)
        inv_std = 1.0 / np.sqrt(((x64 - mean) ** 2).mean(axis=red, keepdims=True) + eps)
        y_np = (x64 - mean) * inv_std * s + (b if has_bias else 0.0)
        check(name + " numpy vs torch", y_np, y, rtol=1e-9, atol=1e-9)
        inputs = [("x", x, False), ("scale", s, True)]
        if has_bias:
            inputs.append(("bias", b, False))
        outputs = [("y", y.astype(dt)), ("mean", mean.astype(np.float32)),
                   ("inv_std_dev", inv_std.astype(np.float32))][:n_out]
        attrs = {"epsilon": eps}
        if axis is not None:
            attrs["axis"] = axis
        cases.append(Case(name, "LayerNormalization", 17, inputs, outputs, attrs))
    return cases


def lrn_ref(x, size, alpha, beta, bias):
    """The ONNX formula: square sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    x = x.astype(np.float64)
    c = x.shape[1]
    sq = np.zeros_like(x)
    before, after = (size - 1) // 2, size // 2
    for ch in range(c):
        lo, hi = max(0, ch - before), min(c - 1, ch + after)
        sq[:, ch] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


def lrn_cases():
    cases = []
    specs = [("size3_defaults", (2, 5, 4, 4), 3, None, None, None, np.float32),
             ("size5_attrs", (1, 7, 3, 5), 5, 2e-3, 0.6, 2.0, np.float32),
             ("size4_even", (2, 6, 3, 3), 4, 1e-2, 0.75, 1.0, np.float32),
             ("size1_rank3", (2, 3, 8), 1, 1e-1, 0.5, 1.0, np.float32),
             ("size3_f64", (2, 4, 3, 3), 3, 1e-2, 0.75, 1.5, np.float64)]
    for suffix, shape, size, alpha, beta, bias, dt in specs:
        name = "lrn_" + suffix
        r = rng_for(name)
        x = r.normal(0.0, 3.0, size=shape).astype(dt)
        a = 1e-4 if alpha is None else alpha
        be = 0.75 if beta is None else beta
        bi = 1.0 if bias is None else bias
        # The attributes are floats in the model: the reference uses their float32 values.
        a32, be32, bi32 = (float(np.float32(v)) for v in (a, be, bi))
        y = lrn_ref(x, size, a32, be32, bi32)
        if size % 2 == 1:  # torch's window is the ONNX window for odd sizes
            ty = F.local_response_norm(torch.from_numpy(x.astype(np.float64)), size, alpha=a32,
                                       beta=be32, k=bi32).numpy()
            check(name + " vs torch", y, ty)
        attrs = {"size": size}
        for k, v in (("alpha", alpha), ("beta", beta), ("bias", bias)):
            if v is not None:
                attrs[k] = v
        cases.append(Case(name, "LRN", 13, [("x", x, False)], [("y", y.astype(dt))], attrs))
    return cases


def main():
    sys.path.insert(0, os.path.join(HERE, "..", "..", "data"))
    import onnx_node_tests
    n = check_reduce_against_node_tests(onnx_node_tests.node_tests_dir(None, "test_reduce_"))
    cases = (reduce_cases() + arg_cases() + softmax_cases() + instance_norm_cases() +
             group_norm_cases() + layer_norm_cases() + lrn_cases())
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    if os.path.exists(LIST):
        for old in open(LIST).read().split():
            shutil.rmtree(os.path.join(HERE, old), ignore_errors=True)
    for c in cases:
        c.write(HERE)
    with open(LIST, "w") as f:
        f.write("".join(name + "\n" for name in names))
    print("%d cases written; numpy Reduce* checked against %d node tests" % (len(cases), n))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Regenerate tconv's regression model suite (models/<name>/...).

Run:  /usr/bin/python3 models/generate.py [--out DIR] [--node-tests DIR] [--only NAME...]

Needs Debian's python3-onnx (1.12), python3-torch (1.13) and python3-numpy
(apt-get install python3-onnx python3-torch); Python is used only to produce these
files, never by tconv itself or its tests.

For every model this writes an ONNX test directory (the layout of ONNX's conformance
tests):  <name>/model.onnx  and  <name>/test_data_set_K/{input,output}_N.pb.
It also writes models.tsv (read by the test harness) and README.md (the table).

Golden data:
  * torch-exported models: torch's own float32 forward output;
  * onnx.helper-built models: an independent float64 computation: torch's VALID
    transposed conv followed by the crop/extension/bias of docs/semantics.md,
    written out by hand per model (conv_transpose_ref below).  conv_transpose_ref
    is first validated against all ONNX conformance tests test_convtranspose*, against
    hand-computed cases from the operator text, and against PyTorch's padding /
    output_padding on a seeded sweep; any mismatch aborts the run.
Every model is then cross-checked: a small float64 ONNX interpreter in this file
(ConvTranspose via conv_transpose_ref, everything else op by op from the ONNX spec)
runs model.onnx on every data set and must reproduce the golden outputs.  For the
torch models that checks the exporter's attributes (pads, output_padding, group...)
against the ONNX semantics; for the helper models it checks the graph wiring.

The run is deterministic: fixed seeds, one torch thread, fixed file contents.
"""

import argparse
import glob
import io
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "golden", "ops"))
from generate_rnn import reference as rnn_reference  # noqa: E402  (RNN/GRU/LSTM, validated there)
SIZE_LIMIT = 3 * 1024 * 1024

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


def die(msg):
    sys.stderr.write("generate.py: error: %s\n" % msg)
    sys.exit(1)


# --------------------------------------------------------------------------------------
# ConvTranspose reference (docs/semantics.md)
# --------------------------------------------------------------------------------------

def _s(v):
    return v.decode() if isinstance(v, bytes) else v


def resolve_convtranspose(x_shape, w_shape, attrs, where="ConvTranspose"):
    """Pads and output size per spatial axis, exactly as docs/semantics.md.

    Returns dict(nd, k, s, d, op, group, pb, pe, full, out)."""
    nd = len(x_shape) - 2
    if nd < 1 or len(w_shape) != nd + 2:
        raise ValueError("%s: rank mismatch X%s W%s" % (where, x_shape, w_shape))
    k = list(attrs.get("kernel_shape") or w_shape[2:])
    if k != list(w_shape[2:]):
        raise ValueError("%s: kernel_shape %s != W spatial %s" % (where, k, w_shape[2:]))
    s = list(attrs.get("strides") or [1] * nd)
    d = list(attrs.get("dilations") or [1] * nd)
    op = list(attrs.get("output_padding") or [0] * nd)
    pads = list(attrs.get("pads") or [0] * (2 * nd))
    group = int(attrs.get("group", 1))
    auto_pad = _s(attrs.get("auto_pad", "NOTSET")) or "NOTSET"
    oshape = attrs.get("output_shape")
    if oshape is not None and len(oshape) == 0:
        oshape = None
    if len(s) != nd or len(d) != nd or len(op) != nd or len(pads) != 2 * nd:
        raise ValueError("%s: attribute ranks disagree with %d spatial axes" % (where, nd))
    if x_shape[1] % group or w_shape[0] != x_shape[1]:
        raise ValueError("%s: group %d vs C_in %d / W %s" % (where, group, x_shape[1], w_shape))
    if oshape is not None:
        if len(oshape) == nd + 2:
            oshape = list(oshape)[2:]           # N,C in front: accepted
        elif len(oshape) != nd:
            raise ValueError("%s: output_shape %s" % (where, oshape))
    pb, pe, full, out = [], [], [], []
    for i in range(nd):
        if not (0 <= op[i] < max(s[i], d[i])):
            raise ValueError("%s: output_padding %s must be < max(stride, dilation)" % (where, op))
        ke = (k[i] - 1) * d[i] + 1
        Fi = s[i] * (x_shape[i + 2] - 1) + ke
        if oshape is not None:
            o = int(oshape[i])
            total = Fi + op[i] - o
            b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            e = total - b
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = x_shape[i + 2] * s[i]
            total = op[i] + ke - s[i]
            if auto_pad == "SAME_UPPER":
                b = total // 2
                e = total - b
            else:
                e = total // 2
                b = total - e
        elif auto_pad == "VALID":
            b = e = 0
            o = Fi + op[i]
        elif auto_pad == "NOTSET":
            b, e = pads[i], pads[i + nd]
            o = Fi - b - e + op[i]
        else:
            raise ValueError("%s: auto_pad %r" % (where, auto_pad))
        if o <= 0:
            raise ValueError("%s: output size %d on axis %d" % (where, o, i))
        pb.append(b)
        pe.append(e)
        full.append(Fi)
        out.append(o)
    return dict(nd=nd, k=k, s=s, d=d, op=op, group=group, pb=pb, pe=pe, full=full, out=out)


_CONVT = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def conv_transpose_ref(x, w, b, attrs, where="ConvTranspose"):
    """ONNX ConvTranspose in float64: VALID transposed conv (torch), then
    out[o] = full[o + pb] where 0 <= o + pb < F else 0, then + bias everywhere."""
    r = resolve_convtranspose(list(x.shape), list(w.shape), attrs, where)
    nd = r["nd"]
    full = _CONVT[nd](torch.from_numpy(np.asarray(x, np.float64)),
                      torch.from_numpy(np.asarray(w, np.float64)), None,
                      stride=r["s"], padding=0, output_padding=0,
                      groups=r["group"], dilation=r["d"]).numpy()
    assert list(full.shape[2:]) == r["full"], (full.shape, r)
    out = np.zeros(full.shape[:2] + tuple(r["out"]), np.float64)
    dst, src = [slice(None), slice(None)], [slice(None), slice(None)]
    for i in range(nd):
        lo = max(0, -r["pb"][i])
        hi = min(r["out"][i], r["full"][i] - r["pb"][i])
        hi = max(hi, lo)
        dst.append(slice(lo, hi))
        src.append(slice(lo + r["pb"][i], hi + r["pb"][i]))
    out[tuple(dst)] = full[tuple(src)]
    if b is not None:
        out += np.asarray(b, np.float64).reshape((1, -1) + (1,) * nd)
    return out


def node_attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def load_dataset(ds_dir):
    ins, outs = [], []
    for kind, lst in (("input", ins), ("output", outs)):
        n = 0
        while os.path.exists(os.path.join(ds_dir, "%s_%d.pb" % (kind, n))):
            t = onnx.load_tensor(os.path.join(ds_dir, "%s_%d.pb" % (kind, n)))
            lst.append((t.name, numpy_helper.to_array(t)))
            n += 1
    return ins, outs


# Hand-computed from the ONNX operator text ("in case the padding is an odd number, the
# extra padding is added at the end for SAME_UPPER and at the beginning for SAME_LOWER";
# output_shape: pads = total - total/2 at the begin unless SAME_UPPER): anchors for the pad
# split rules that no conformance test covers (SAME_LOWER, negative totals, bias past F,
# SAME + output_padding: out = x*s as docs/semantics.md fixes it).
# 1-D, x = [1, 2], W = ones(k), stride 2, so the VALID result is easy to write down:
#   k3:      full = [1, 1, 3, 2, 2]            (F = 5)
#   k5:      full = [1, 1, 3, 3, 3, 2, 2]      (F = 7)
#   k3 d2:   full = [1, 0, 3, 0, 3, 0, 2]      (F = 7)
HAND_CASES = [
    (3, {"auto_pad": "SAME_UPPER"}, None, [1, 1, 3, 2]),
    (3, {"auto_pad": "SAME_LOWER"}, None, [1, 3, 2, 2]),
    (5, {"auto_pad": "SAME_UPPER"}, None, [1, 3, 3, 3]),
    (5, {"auto_pad": "SAME_LOWER"}, None, [3, 3, 3, 2]),
    (3, {"auto_pad": "SAME_LOWER", "dilations": [2]}, None, [3, 0, 3, 0]),
    (3, {"output_shape": [6]}, None, [1, 1, 3, 2, 2, 0]),
    (3, {"output_shape": [6], "auto_pad": "SAME_UPPER"}, None, [0, 1, 1, 3, 2, 2]),
    (3, {"output_shape": [6]}, 10.0, [11, 11, 13, 12, 12, 10]),
    (3, {"output_shape": [4]}, None, [1, 3, 2, 2]),
    (3, {"output_shape": [1, 1, 4], "auto_pad": "SAME_UPPER"}, None, [1, 1, 3, 2]),
    (3, {"pads": [1, 0], "output_padding": [1]}, 10.0, [11, 13, 12, 12, 10]),
    (3, {"pads": [0, 1], "output_padding": [1]}, None, [1, 1, 3, 2, 2]),
    (3, {"auto_pad": "VALID", "output_padding": [1]}, None, [1, 1, 3, 2, 2, 0]),
    (3, {"auto_pad": "SAME_UPPER", "output_padding": [1]}, None, [1, 3, 2, 2]),  # out = x*s
]


def validate_hand_cases():
    for k, a, bias, want in HAND_CASES:
        attrs = dict(a, strides=[2])
        x = np.array([[[1.0, 2.0]]])
        w = np.ones((1, 1, k))
        b = None if bias is None else np.array([bias])
        got = conv_transpose_ref(x, w, b, attrs).reshape(-1)
        if got.tolist() != [float(v) for v in want]:
            die("hand case k%d %s bias %s: got %s, expected %s" % (k, a, bias, got.tolist(), want))
    return len(HAND_CASES)


def validate_against_conformance(node_tests):
    tests = sorted(glob.glob(os.path.join(node_tests, "test_convtranspose*")))
    if len(tests) != 11:
        die("expected 11 ONNX conformance tests test_convtranspose* under %s, "
            "found %d (use --node-tests)" % (node_tests, len(tests)))
    lines = []
    for t in tests:
        m = onnx.load(os.path.join(t, "model.onnx"))
        (node,) = m.graph.node
        assert node.op_type == "ConvTranspose"
        for ds in sorted(glob.glob(os.path.join(t, "test_data_set_*"))):
            ins, outs = load_dataset(ds)
            feeds = {gi.name: arr for gi, (_, arr) in zip(m.graph.input, ins)}
            x = feeds[node.input[0]]
            w = feeds[node.input[1]]
            b = feeds[node.input[2]] if len(node.input) > 2 and node.input[2] else None
            got = conv_transpose_ref(x, w, b, node_attrs(node), os.path.basename(t))
            want = outs[0][1]
            if got.shape != want.shape:
                die("conformance %s: shape %s, expected %s" % (t, got.shape, want.shape))
            err = float(np.max(np.abs(got - want))) if want.size else 0.0
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                die("conformance %s: max abs error %g" % (t, err))
            lines.append("  %-40s %-18s max_abs_err %.1e  ok" % (os.path.basename(t),
                                                                str(tuple(want.shape)), err))
    return lines


def conv_transpose_torch_padded(x, w, b, attrs):
    """Second, independent opinion for conv_transpose_ref, straight from PyTorch's own
    padding semantics: torch crops `padding` at both ends and extends by `output_padding`
    at the end, i.e. ONNX (pb, pe, op) on an axis == torch (p = pb, opt = pb - pe + op).
    Two identities widen what that can express: flipping an axis (of x and W, then of the
    result) swaps the sides, (p = pe - op, opt = pe - pb - op); and m zero input samples
    appended (prepended) on an axis add m*s zeros to the full output's end (begin), i.e.
    pe += m*s (pb += m*s).  Returns None when no combination fits torch's constraints
    (p >= 0, 0 <= opt < max(s, d))."""
    r = resolve_convtranspose(list(x.shape), list(w.shape), attrs)
    nd = r["nd"]
    p, opt, flip, xpad = [], [], [], []
    for i in range(nd):
        lim, st = max(r["s"][i], r["d"][i]), r["s"][i]
        o = r["out"][i] - (r["full"][i] - r["pb"][i] - r["pe"][i])   # op reproducing `out`
        found = None
        for mb in range(3):
            for me in range(3):
                pb, pe = r["pb"][i] + mb * st, r["pe"][i] + me * st
                if pb >= 0 and 0 <= pb - pe + o < lim:
                    found = (pb, pb - pe + o, False, mb, me)
                elif pe - o >= 0 and 0 <= pe - pb - o < lim:
                    found = (pe - o, pe - pb - o, True, mb, me)
                if found:
                    break
            if found:
                break
        if not found:
            return None
        p.append(found[0])
        opt.append(found[1])
        if found[2]:
            flip.append(i + 2)
        xpad.append((found[3], found[4]))
    xp = np.pad(np.asarray(x, np.float64), [(0, 0), (0, 0)] + xpad)
    xt, wt = _tt(xp), _tt(w)
    if flip:
        xt, wt = torch.flip(xt, flip), torch.flip(wt, flip)
    y = _CONVT[nd](xt, wt, None if b is None else _tt(b), stride=r["s"], padding=p,
                   output_padding=opt, groups=r["group"], dilation=r["d"])
    if flip:
        y = torch.flip(y, flip)
    return y.numpy()


def validate_against_torch_padding(extra_nodes):
    """conv_transpose_ref vs conv_transpose_torch_padded on a deterministic sweep of
    attribute sets (every auto_pad, pads, output_padding, output_shape, dilation, group,
    1-3-D, with bias) plus every ConvTranspose node of the helper-built models."""
    rng = np.random.default_rng(2024)
    cases = []
    for _ in range(400):
        nd = int(rng.integers(1, 4))
        g = int(rng.choice([1, 2]))
        cin, cout = g * int(rng.integers(1, 3)), g * int(rng.integers(1, 3))
        k = [int(v) for v in rng.integers(1, 6, nd)]
        s = [int(v) for v in rng.integers(1, 4, nd)]
        d = [int(v) for v in rng.integers(1, 3, nd)]
        xs = [int(v) for v in rng.integers(1, 6, nd)]
        op = [int(rng.integers(0, max(si, di))) for si, di in zip(s, d)]
        a = dict(kernel_shape=k, strides=s, dilations=d, group=g, output_padding=op)
        mode = rng.choice(["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER", "os_upper", "os_notset"])
        if mode == "NOTSET":
            a["pads"] = [int(v) for v in rng.integers(0, 3, 2 * nd)]
        elif mode in ("os_upper", "os_notset"):
            full = [si * (xi - 1) + (ki - 1) * di + 1 for si, xi, ki, di in zip(s, xs, k, d)]
            a["output_shape"] = [max(1, f + int(rng.integers(-2, 2))) for f in full]
            if mode == "os_upper":
                a["auto_pad"] = "SAME_UPPER"
        else:
            a["auto_pad"] = mode
        n = int(rng.integers(1, 3))
        x = rng.standard_normal([n, cin] + xs)
        w = rng.standard_normal([cin, cout // g] + k)
        b = rng.standard_normal([cout]) if rng.random() < 0.7 else None
        cases.append(("sweep", x, w, b, a))
    for label, node, xshape, w, b in extra_nodes:
        x = rng.standard_normal(xshape)
        cases.append((label, x, w, b, node_attrs(node)))
    checked = skipped = 0
    for label, x, w, b, a in cases:
        try:
            want = conv_transpose_ref(x, w, b, a)
        except ValueError:
            skipped += 1            # e.g. output size <= 0
            continue
        got = conv_transpose_torch_padded(x, w, b, a)
        if got is None:
            if label != "sweep":
                die("%s: not expressible in torch padding terms" % label)
            skipped += 1
            continue
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-10, atol=1e-10):
            die("torch cross-check %s %s: ref %s vs torch %s" % (label, a, want.shape, got.shape))
        checked += 1
    return checked, skipped


# --------------------------------------------------------------------------------------
# A small float64 ONNX interpreter for the cross-check (ops used by this suite only)
# --------------------------------------------------------------------------------------

def _tt(a):
    return torch.from_numpy(np.ascontiguousarray(a, np.float64))


def _conv(x, w, b, a, where):
    nd = x.ndim - 2
    k = list(a.get("kernel_shape") or w.shape[2:])
    assert k == list(w.shape[2:]), where
    if _s(a.get("auto_pad", "NOTSET")) not in ("NOTSET", "VALID", ""):
        raise NotImplementedError("%s: Conv auto_pad" % where)
    pads = list(a.get("pads") or [0] * 2 * nd)
    if _s(a.get("auto_pad", "NOTSET")) == "VALID":
        pads = [0] * 2 * nd
    tp = []
    for i in reversed(range(nd)):
        tp += [pads[i], pads[i + nd]]
    xt = F.pad(_tt(x), tp) if any(tp) else _tt(x)
    y = _CONV[nd](xt, _tt(w), None if b is None else _tt(b),
                  stride=list(a.get("strides") or [1] * nd),
                  dilation=list(a.get("dilations") or [1] * nd),
                  groups=int(a.get("group", 1)))
    return y.numpy()


def _maxpool(x, a, where):
    nd = x.ndim - 2
    k = list(a["kernel_shape"])
    pads = list(a.get("pads") or [0] * 2 * nd)
    if pads[:nd] != pads[nd:] or a.get("ceil_mode", 0) or any(v != 1 for v in a.get("dilations") or []):
        raise NotImplementedError("%s: MaxPool variant" % where)
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
    return fn(_tt(x), k, stride=list(a.get("strides") or [1] * nd), padding=pads[:nd]).numpy()


def _pad(x, pads, mode, value):
    nd = x.ndim
    width = [(int(pads[i]), int(pads[i + nd])) for i in range(nd)]
    if any(p < 0 for pr in width for p in pr):
        raise NotImplementedError("negative Pad")
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode={"reflect": "reflect", "edge": "edge"}[mode])


def _slice(x, starts, ends, axes, steps):
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        ax = int(ax) % x.ndim
        dim = x.shape[ax]
        st, en, sp = int(st), int(en), int(sp)
        assert sp != 0, "Slice step 0"
        st = st + dim if st < 0 else st
        en = en + dim if en < 0 else en
        if sp > 0:
            st = min(max(st, 0), dim)
            en = min(max(en, 0), dim)
            idx[ax] = slice(st, en, sp)
        else:  # ONNX clamps to [-1, dim - 1] for negative steps; -1 means "before index 0"
            st = min(max(st, -1), dim - 1)
            en = min(max(en, -1), dim - 1)
            idx[ax] = slice(st, en if en >= 0 else None, sp)
    return x[tuple(idx)]


def _opt(ins, k):
    return ins[k] if len(ins) > k and ins[k] is not None and np.size(ins[k]) else None


def run_graph(graph, feeds, opset, outer=None, trace=None):
    env = dict(outer or {})
    for t in graph.initializer:
        env[t.name] = numpy_helper.to_array(t).astype(np.float64) \
            if t.data_type in (TensorProto.FLOAT, TensorProto.FLOAT16) else numpy_helper.to_array(t)
    env.update(feeds)
    for node in graph.node:
        where = "%s(%s)" % (node.op_type, node.name)
        a = node_attrs(node)
        ins = [env[n] if n else None for n in node.input]
        op = node.op_type
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(where)
        if op == "ConvTranspose":
            if trace is not None:
                trace.setdefault(node.name, []).append(tuple(ins[0].shape))
            outs = [conv_transpose_ref(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a, where)]
        elif op == "Conv":
            outs = [_conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a, where)]
        elif op == "BatchNormalization":
            x, sc, bi, mu, var = ins[:5]
            sh = (1, -1) + (1,) * (x.ndim - 2)
            eps = a.get("epsilon", 1e-5)
            outs = [(x - mu.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * sc.reshape(sh) + bi.reshape(sh)]
        elif op == "Relu":
            outs = [np.maximum(ins[0], 0)]
        elif op == "LeakyRelu":
            al = a.get("alpha", 0.01)
            outs = [np.where(ins[0] >= 0, ins[0], al * ins[0])]
        elif op == "Tanh":
            outs = [np.tanh(ins[0])]
        elif op == "Sigmoid":
            outs = [1.0 / (1.0 + np.exp(-ins[0]))]
        elif op == "Add":
            outs = [ins[0] + ins[1]]
        elif op == "Mul":
            outs = [ins[0] * ins[1]]
        elif op == "Identity":
            outs = [ins[0]]
        elif op == "MaxPool":
            outs = [_maxpool(ins[0], a, where)]
        elif op == "Concat":
            outs = [np.concatenate(ins, axis=a["axis"])]
        elif op == "Constant":
            outs = [numpy_helper.to_array(a["value"])]
        elif op == "Slice":
            if opset < 10:
                outs = [_slice(ins[0], a["starts"], a["ends"], a.get("axes"), None)]
            else:
                outs = [_slice(ins[0], ins[1], ins[2], ins[3] if len(ins) > 3 else None,
                               ins[4] if len(ins) > 4 else None)]
        elif op == "Pad":
            mode = _s(a.get("mode", "constant"))
            if opset < 11:
                outs = [_pad(ins[0], a["pads"], mode, a.get("value", 0.0))]
            else:
                val = ins[2] if len(ins) > 2 and ins[2] is not None else 0.0
                outs = [_pad(ins[0], ins[1], mode, float(np.asarray(val).reshape(-1)[0])
                             if np.size(val) else 0.0)]
        elif op == "Cast":
            to = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]]
            outs = [np.asarray(ins[0]).astype(np.float64 if to == np.float32 else to)]
        elif op == "ConstantOfShape":
            v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros([1], np.float32)
            v = v.astype(np.float64) if v.dtype == np.float32 else v
            outs = [np.full([int(d) for d in ins[0]], v.reshape(-1)[0], v.dtype)]
        elif op == "Shape":
            outs = [np.array(ins[0].shape, np.int64)]
        elif op == "Reshape":
            shape = [int(d) for d in ins[1]]
            shape = [ins[0].shape[i] if d == 0 else d for i, d in enumerate(shape)]
            outs = [ins[0].reshape(shape)]
        elif op == "Transpose":
            outs = [np.transpose(ins[0], a.get("perm"))]
        elif op == "Unsqueeze":
            axes = a["axes"] if opset < 13 else [int(v) for v in ins[1]]
            y = ins[0]
            nd = y.ndim + len(axes)
            for ax in sorted(int(v) % nd for v in axes):
                y = np.expand_dims(y, ax)
            outs = [y]
        elif op == "Gather":
            outs = [np.take(ins[0], ins[1], axis=a.get("axis", 0))]
        elif op == "Expand":
            shape = np.broadcast_shapes(ins[0].shape, tuple(int(d) for d in ins[1]))
            outs = [np.broadcast_to(ins[0], shape).copy()]
        elif op == "MatMul":
            outs = [np.matmul(ins[0], ins[1])]
        elif op == "PRelu":
            outs = [np.where(ins[0] >= 0, ins[0], ins[1] * ins[0])]
        elif op == "InstanceNormalization":
            x, sc, bi = ins
            axes = tuple(range(2, x.ndim))
            sh = (1, -1) + (1,) * (x.ndim - 2)
            mu = x.mean(axis=axes, keepdims=True)
            var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
            eps = a.get("epsilon", 1e-5)
            outs = [(x - mu) / np.sqrt(var + eps) * sc.reshape(sh) + bi.reshape(sh)]
        elif op == "Split":
            axis = a.get("axis", 0)
            split = a.get("split") if opset < 13 else _opt(ins, 1)
            if split is None:
                split = [ins[0].shape[axis] // len(node.output)] * len(node.output)
            outs = np.split(ins[0], np.cumsum([int(v) for v in split])[:-1], axis=axis)
        elif op == "LSTM":
            outs = rnn_reference("LSTM", [None if v is None or not np.size(v) else v for v in ins], a)
        elif op == "Sub":
            outs = [ins[0] - ins[1]]
        elif op == "Div":
            if np.issubdtype(np.asarray(ins[0]).dtype, np.integer):
                q = np.asarray(ins[0]) // np.asarray(ins[1])      # ONNX: truncation toward zero
                outs = [np.where((q < 0) & (q * ins[1] != ins[0]), q + 1, q)]
            else:
                outs = [ins[0] / ins[1]]
        elif op == "Mod":
            if a.get("fmod", 0):
                raise NotImplementedError("%s: fmod" % where)
            outs = [np.mod(ins[0], ins[1])]              # integer Mod: sign of the divisor
        elif op in ("Equal", "Less", "Greater", "And", "Or", "Xor"):
            fn = {"Equal": np.equal, "Less": np.less, "Greater": np.greater, "And": np.logical_and,
                  "Or": np.logical_or, "Xor": np.logical_xor}[op]
            outs = [fn(ins[0], ins[1])]
        elif op == "Not":
            outs = [np.logical_not(ins[0])]
        elif op == "Where":
            outs = [np.where(ins[0], ins[1], ins[2])]
        elif op == "Sqrt":
            outs = [np.sqrt(ins[0])]
        elif op == "Elu":
            al = a.get("alpha", 1.0)
            outs = [np.where(ins[0] > 0, ins[0], al * np.expm1(np.minimum(ins[0], 0)))]
        elif op in ("ReduceMean", "ReduceSum"):
            axes = a.get("axes") if op == "ReduceMean" or opset < 13 else \
                (None if _opt(ins, 1) is None else [int(v) for v in ins[1]])
            if axes is None and a.get("noop_with_empty_axes", 0):
                outs = [ins[0]]
            else:
                fn = np.mean if op == "ReduceMean" else np.sum
                outs = [fn(ins[0], axis=None if axes is None else tuple(axes),
                           keepdims=bool(a.get("keepdims", 1)))]
        elif op == "Squeeze":
            axes = a.get("axes") if opset < 13 else (None if _opt(ins, 1) is None else [int(v) for v in ins[1]])
            outs = [np.squeeze(ins[0], axis=None if axes is None else tuple(int(v) for v in axes))]
        elif op == "Gemm":
            A = ins[0].T if a.get("transA", 0) else ins[0]
            B = ins[1].T if a.get("transB", 0) else ins[1]
            y = a.get("alpha", 1.0) * (A @ B)
            if _opt(ins, 2) is not None:
                y = y + a.get("beta", 1.0) * ins[2]
            outs = [y]
        elif op == "Resize":
            if _s(a.get("mode", "nearest")) != "linear" or \
                    _s(a.get("coordinate_transformation_mode", "half_pixel")) not in ("half_pixel", "pytorch_half_pixel"):
                raise NotImplementedError("%s: Resize variant" % where)
            sizes = _opt(ins, 3)
            if sizes is None:
                sizes = [int(np.floor(d * s)) for d, s in zip(ins[0].shape, ins[2])]
            if [int(v) for v in sizes[:2]] != list(ins[0].shape[:2]) or ins[0].ndim != 4:
                raise NotImplementedError("%s: Resize of N or C" % where)
            outs = [F.interpolate(_tt(ins[0]), size=[int(v) for v in sizes[2:]], mode="bilinear",
                                  align_corners=False).numpy()]
        elif op == "If":
            cond = bool(np.asarray(ins[0]).reshape(-1)[0])
            branch = a["then_branch"] if cond else a["else_branch"]
            sub = run_graph(branch, {}, opset, env, trace)
            outs = [sub[o.name] for o in branch.output]
        else:
            raise NotImplementedError("interpreter: op %s" % where)
        for name, val in zip(node.output, outs):
            if name:
                env[name] = val
    return env


def run_model(model, feeds, trace=None):
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    feeds = {k: (v.astype(np.float64) if v.dtype in (np.float32, np.float16) else v)
             for k, v in feeds.items()}
    env = run_graph(model.graph, feeds, opset, trace=trace)
    return [env[o.name] for o in model.graph.output]


# --------------------------------------------------------------------------------------
# Writing test directories
# --------------------------------------------------------------------------------------

def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def write_case(out_dir, name, model, datasets):
    """datasets: list of (list of input arrays, list of output arrays), in graph order."""
    onnx.checker.check_model(model)
    d = os.path.join(out_dir, name)
    tmp = d + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    data = model.SerializeToString()
    with open(os.path.join(tmp, "model.onnx"), "wb") as f:
        f.write(data)
    gin = graph_inputs(model)
    gout = list(model.graph.output)
    for k, (ins, outs) in enumerate(datasets):
        assert len(ins) == len(gin) and len(outs) == len(gout), name
        ds = os.path.join(tmp, "test_data_set_%d" % k)
        os.makedirs(ds)
        for kind, vals, decl in (("input", ins, gin), ("output", outs, gout)):
            for n, (arr, vi) in enumerate(zip(vals, decl)):
                t = numpy_helper.from_array(np.asarray(arr), vi.name)
                with open(os.path.join(ds, "%s_%d.pb" % (kind, n)), "wb") as f:
                    f.write(t.SerializeToString())
    shutil.rmtree(d, ignore_errors=True)
    os.rename(tmp, d)
    return len(data)


def dims_of(vi):
    out = []
    for dim in vi.type.tensor_type.shape.dim:
        out.append(dim.dim_value if dim.HasField("dim_value") else (dim.dim_param or "?"))
    return out


def check_declared_shapes(name, model, datasets):
    """Declared static dims of inputs/outputs must match the data; symbolic dims consistent."""
    for ins, outs in datasets:
        binding = {}
        for vals, decl in ((ins, graph_inputs(model)), (outs, model.graph.output)):
            for arr, vi in zip(vals, decl):
                dd = dims_of(vi)
                if len(dd) != np.ndim(arr):
                    die("%s: %s declared rank %d, data rank %d" % (name, vi.name, len(dd), np.ndim(arr)))
                for dv, av in zip(dd, np.shape(arr)):
                    if isinstance(dv, int) and dv != av:
                        die("%s: %s declared %s, data %s" % (name, vi.name, dd, np.shape(arr)))
                    if isinstance(dv, str) and dv != "?":
                        if binding.setdefault(dv, av) != av:
                            die("%s: dim_param %s bound to %d and %d" % (name, dv, binding[dv], av))


# --------------------------------------------------------------------------------------
# Torch models
# --------------------------------------------------------------------------------------

def he_init(module, gen):
    """Variance-preserving (He) random weights for every conv, so signals neither vanish
    nor explode through the depth (PyTorch's default init shrinks them ~2x a layer, which
    would leave outputs that are nearly constant and make comparisons weak).  For a
    transposed conv each output sees (C_in/group) * prod(k/s) taps."""
    convs = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
    convts = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    for m in module.modules():
        if isinstance(m, convs + convts):
            taps = float(np.prod(m.kernel_size))
            if isinstance(m, convts):
                taps /= float(np.prod(m.stride))
            fan_in = m.in_channels // m.groups * taps
            with torch.no_grad():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * np.sqrt(2.0 / fan_in))
                if m.bias is not None:
                    m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))


def lsuv(module, x):
    """Layer-sequential unit variance (Mishkin & Matas): in forward order, rescale each
    conv's weight and bias so its output has unit standard deviation on a calibration
    batch.  Keeps every model's signals O(1) through skips and residual sums, so the
    golden outputs are informative (neither saturated nor constant)."""
    convs = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    order = []

    def record(mod, inp, out):          # forward hooks must return None
        if all(mod is not m for m in order):
            order.append(mod)

    hooks = [m.register_forward_hook(record) for m in module.modules() if isinstance(m, convs)]
    with torch.no_grad():
        module(*x)
    for h in hooks:
        h.remove()
    for m in order:
        box = {}

        def grab(mod, inp, out):
            box.setdefault("y", out)

        h = m.register_forward_hook(grab)
        with torch.no_grad():
            module(*x)
            h.remove()
            sd = float(box["y"].std())
            m.weight /= sd
            if m.bias is not None:
                m.bias /= sd


def randomize_bn(module, gen):
    """Give eval-mode BatchNorm layers trained-looking statistics (deterministic)."""
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            c = m.num_features
            with torch.no_grad():
                m.weight.copy_(1.0 + 0.1 * torch.randn(c, generator=gen))
                m.bias.copy_(0.1 * torch.randn(c, generator=gen))
                m.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(c, generator=gen))


class DCGANGenerator(nn.Module):
    """The DCGAN generator (Radford et al.; the PyTorch example), ngf reduced 64 -> 16."""

    def __init__(self, nz=100, ngf=16, nc=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.net(x)


class UNet(nn.Module):
    """U-Net (Ronneberger et al.), transposed-conv variant, base width 8 (64 in the paper)."""

    def __init__(self, cin=3, ncls=2, base=8):
        super().__init__()
        c = [base * 2 ** i for i in range(5)]
        self.inc = DoubleConv(cin, c[0])
        self.downs = nn.ModuleList([DoubleConv(c[i], c[i + 1]) for i in range(4)])
        self.ups = nn.ModuleList([nn.ConvTranspose2d(c[i + 1], c[i], 2, stride=2) for i in reversed(range(4))])
        self.upconvs = nn.ModuleList([DoubleConv(c[i + 1], c[i]) for i in reversed(range(4))])
        self.outc = nn.Conv2d(c[0], ncls, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        h = skips.pop()
        for up, conv in zip(self.ups, self.upconvs):
            h = conv(torch.cat([skips.pop(), up(h)], dim=1))
        return self.outc(h)


class FCN8s(nn.Module):
    """FCN-8s (Long et al.): a slim VGG-style backbone and the FCN head: score layers,
    ConvTranspose k4 s2 / k4 s2 / k16 s8 upsampling, each followed by a centre crop
    (k = 2s, padding 0: size s*(x+1), crop s/2 per side -> s*x)."""

    def __init__(self, ncls=21):
        super().__init__()
        ch = [3, 16, 32, 64, 128, 128]
        self.stages = nn.ModuleList([
            nn.Sequential(nn.Conv2d(ch[i], ch[i + 1], 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2))
            for i in range(5)])
        self.fc6 = nn.Conv2d(128, 192, 3, padding=1)
        self.fc7 = nn.Conv2d(192, 192, 1)
        self.score_fr = nn.Conv2d(192, ncls, 1)
        self.score_pool4 = nn.Conv2d(128, ncls, 1)
        self.score_pool3 = nn.Conv2d(64, ncls, 1)
        self.upscore2 = nn.ConvTranspose2d(ncls, ncls, 4, stride=2, bias=False)
        self.upscore_pool4 = nn.ConvTranspose2d(ncls, ncls, 4, stride=2, bias=False)
        self.upscore8 = nn.ConvTranspose2d(ncls, ncls, 16, stride=8, bias=False)

    def forward(self, x):
        feats = []
        h = x
        for st in self.stages:
            h = st(h)
            feats.append(h)
        pool3, pool4 = feats[2], feats[3]
        h = F.relu(self.fc6(h))
        h = F.relu(self.fc7(h))
        h = self.score_fr(h)
        h = self.upscore2(h)[:, :, 1:-1, 1:-1] + self.score_pool4(pool4)
        h = self.upscore_pool4(h)[:, :, 1:-1, 1:-1] + self.score_pool3(pool3)
        return self.upscore8(h)[:, :, 4:-4, 4:-4]


class ResStack(nn.Module):
    """MelGAN residual stack: 3 blocks, dilations 1, 3, 9, 1x1 shortcut convs.  Zero
    padding inside the convs (as HiFi-GAN): torch 1.13 exports ReflectionPad1d as an
    unfolded ConstantOfShape/Reshape/Slice/Transpose/Cast chain per pad, which is noise here."""

    def __init__(self, ch):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(
            nn.LeakyReLU(0.2), nn.Conv1d(ch, ch, 3, dilation=3 ** j, padding=3 ** j),
            nn.LeakyReLU(0.2), nn.Conv1d(ch, ch, 1)) for j in range(3)])
        self.shortcuts = nn.ModuleList([nn.Conv1d(ch, ch, 1) for _ in range(3)])

    def forward(self, x):
        for blk, sc in zip(self.blocks, self.shortcuts):
            x = sc(x) + blk(x)
        return x


class MelGANGenerator(nn.Module):
    """MelGAN generator (Kumar et al.): mel (80 bands) -> waveform, hop 256 = 8*8*2*2.
    Upsampling: ConvTranspose1d(k=2r, stride r, padding r//2 + r%2, output_padding r%2).
    Width 128 (512 in the paper)."""

    def __init__(self, n_mels=80, ch=128, ratios=(8, 8, 2, 2)):
        super().__init__()
        layers = [nn.Conv1d(n_mels, ch, 7, padding=3)]
        for r in ratios:
            layers += [nn.LeakyReLU(0.2),
                       nn.ConvTranspose1d(ch, ch // 2, 2 * r, stride=r, padding=r // 2 + r % 2,
                                          output_padding=r % 2),
                       ResStack(ch // 2)]
            ch //= 2
        layers += [nn.LeakyReLU(0.2), nn.Conv1d(ch, 1, 7, padding=3), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def forward(self, mel):
        return self.net(mel)


class Decoder3D(nn.Module):
    """3-D conv decoder (3-D U-Net / V-Net decoder style, no skips): k3 s2 p1 op1,
    k2 s2, k3 s1 p1 transposed convs with BatchNorm3d + ReLU, 1x1x1 head."""

    def __init__(self, cin=128, ncls=2):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose3d(cin, 64, 3, stride=2, padding=1, output_padding=1), nn.BatchNorm3d(64), nn.ReLU(True),
            nn.ConvTranspose3d(64, 32, 2, stride=2), nn.BatchNorm3d(32), nn.ReLU(True),
            nn.ConvTranspose3d(32, 32, 3, stride=1, padding=1), nn.BatchNorm3d(32), nn.ReLU(True),
            nn.Conv3d(32, ncls, 1))

    def forward(self, z):
        return self.net(z)


class GroupedUpsampler(nn.Module):
    """Light-weight (MobileNet/LinkNet-style) decoder: depthwise transposed convs
    (groups = channels; the second with channel multiplier 2) and a groups=4
    k3 s2 p1 output_padding=1 transposed conv, 1x1 convs in between."""

    def __init__(self, cin=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(cin, cin, 4, stride=2, padding=1, groups=cin, bias=False),
            nn.BatchNorm2d(cin), nn.ReLU(True),
            nn.Conv2d(cin, 64, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
            nn.ConvTranspose2d(64, 64, 3, stride=2, padding=1, output_padding=1, groups=4),
            nn.ReLU(True),
            nn.ConvTranspose2d(64, 128, 4, stride=2, padding=1, groups=64),
            nn.ReLU(True),
            nn.Conv2d(128, 3, 1))

    def forward(self, x):
        return self.net(x)


class CycleGANGenerator(nn.Module):
    """CycleGAN ResNet generator (Zhu et al.), ngf 8, 2 residual blocks (9 in the paper):
    ReflectionPad2d + Conv 7x7, two stride-2 downsamplings, residual blocks with
    ReflectionPad2d(1), InstanceNorm2d everywhere (affine=False as in the paper's code, except
    the last up layer), two ConvTranspose2d k3 s2 p1 output_padding 1, Tanh.  torch 1.13
    exports each ReflectionPad2d as Pad mode=reflect whose pads a ConstantOfShape / Concat /
    Reshape / Slice / Transpose / Cast chain computes at run time."""

    def __init__(self, nc=3, ngf=8, nres=2):
        super().__init__()
        self.down = nn.Sequential(
            nn.ReflectionPad2d(3), nn.Conv2d(nc, ngf, 7), nn.InstanceNorm2d(ngf), nn.ReLU(True),
            nn.Conv2d(ngf, 2 * ngf, 3, stride=2, padding=1), nn.InstanceNorm2d(2 * ngf), nn.ReLU(True),
            nn.Conv2d(2 * ngf, 4 * ngf, 3, stride=2, padding=1), nn.InstanceNorm2d(4 * ngf), nn.ReLU(True))
        c = 4 * ngf
        self.res = nn.ModuleList([nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c), nn.ReLU(True),
            nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c)) for _ in range(nres)])
        self.up = nn.Sequential(
            nn.ConvTranspose2d(c, 2 * ngf, 3, stride=2, padding=1, output_padding=1),
            nn.InstanceNorm2d(2 * ngf), nn.ReLU(True),
            nn.ConvTranspose2d(2 * ngf, ngf, 3, stride=2, padding=1, output_padding=1),
            nn.InstanceNorm2d(ngf, affine=True), nn.ReLU(True),
            nn.ReflectionPad2d(3), nn.Conv2d(ngf, nc, 7), nn.Tanh())

    def forward(self, x):
        h = self.down(x)
        for r in self.res:
            h = h + r(h)
        return self.up(h)


class TasNetDecoder(nn.Module):
    """Conv-TasNet (Luo & Mesgarani) separator tail and decoder, small (N 32, B 16, L 16, two
    TCN blocks): global layer norm GroupNorm(1, C) (exported as Reshape +
    InstanceNormalization + Reshape), 1x1 and depthwise dilated Conv1d, PReLU, sigmoid mask
    applied to the encoder features, then a ConvTranspose1d k3 s2 p1 output_padding 1
    upsampler and the overlap-add decoder ConvTranspose1d(N, 1, L, stride L/2, padding L/4)."""

    def __init__(self, N=32, B=16, L=16):
        super().__init__()
        self.bottleneck = nn.Sequential(nn.GroupNorm(1, N), nn.Conv1d(N, B, 1))
        self.blocks = nn.ModuleList([nn.Sequential(
            nn.Conv1d(B, 2 * B, 1), nn.PReLU(), nn.GroupNorm(1, 2 * B),
            nn.Conv1d(2 * B, 2 * B, 3, padding=d, dilation=d, groups=2 * B), nn.PReLU(),
            nn.GroupNorm(1, 2 * B), nn.Conv1d(2 * B, B, 1)) for d in (1, 2)])
        self.mask = nn.Sequential(nn.PReLU(), nn.Conv1d(B, N, 1), nn.Sigmoid())
        self.up = nn.ConvTranspose1d(N, N, 3, stride=2, padding=1, output_padding=1)
        self.dec = nn.ConvTranspose1d(N, 1, L, stride=L // 2, padding=L // 4)

    def forward(self, w):
        h = self.bottleneck(w)
        for b in self.blocks:
            h = h + b(h)
        return self.dec(self.up(w * self.mask(h)))


class DemucsSmall(nn.Module):
    """Demucs (Defossez et al.) waveform U-Net, small (width 8, depth 2, kernel 8, stride 4):
    encoder Conv1d + ReLU + 1x1 Conv1d + GLU (exported as Split + Sigmoid + Mul), a 2-layer
    bidirectional LSTM over time with a Linear back to the channel count, decoder 1x1 Conv1d
    + GLU + ConvTranspose1d k8 s4 padding 2 output_padding 1 with cropped skip connections."""

    def __init__(self, ch=8, depth=2, k=8, s=4):
        super().__init__()
        self.enc = nn.ModuleList()
        self.dec = nn.ModuleList()
        cin = 1
        for i in range(depth):
            c = ch * 2 ** i
            self.enc.append(nn.Sequential(nn.Conv1d(cin, c, k, s), nn.ReLU(), nn.Conv1d(c, 2 * c, 1), nn.GLU(1)))
            tail = [] if i == 0 else [nn.ReLU()]
            self.dec.insert(0, nn.Sequential(nn.Conv1d(c, 2 * c, 1), nn.GLU(1),
                                              nn.ConvTranspose1d(c, cin, k, s, padding=2, output_padding=1),
                                              *tail))
            cin = c
        self.lstm = nn.LSTM(cin, cin, num_layers=2, bidirectional=True)
        self.lin = nn.Linear(2 * cin, cin)

    def forward(self, x):
        skips = []
        for e in self.enc:
            x = e(x)
            skips.append(x)
        y, _ = self.lstm(x.permute(2, 0, 1))
        x = self.lin(y).permute(1, 2, 0)
        for d in self.dec:
            s = skips.pop()
            x = d(x + s[..., :x.shape[-1]])
        return x


class BasicBlock(nn.Module):
    """ResNet basic block: 3x3 Conv/BN/ReLU, 3x3 Conv/BN, 1x1 stride-2 projection when the
    shape changes, residual sum, ReLU."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + (x if self.proj is None else self.proj(x)))


class LinkNetDecoderBlock(nn.Module):
    """LinkNet decoder block: 1x1 m -> m/4, ConvTranspose 3x3 s2 p1 output_padding 1, 1x1 m/4 -> n,
    each with BatchNorm and ReLU."""

    def __init__(self, m, n):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(m, m // 4, 1, bias=False), nn.BatchNorm2d(m // 4), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(m // 4, m // 4, 3, 2, 1, output_padding=1, bias=False),
            nn.BatchNorm2d(m // 4), nn.ReLU(inplace=True),
            nn.Conv2d(m // 4, n, 1, bias=False), nn.BatchNorm2d(n), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.net(x)


class LinkNet(nn.Module):
    """LinkNet (Chaurasia & Culurciello): ResNet-18 encoder (stem 7x7 s2 + MaxPool, four stages of
    two basic blocks), decoder blocks added to the encoder features, full-resolution head of
    ConvTranspose 3x3 s2, 3x3 Conv, ConvTranspose 2x2 s2.  Widths 16..128 (64..512 in the paper:
    its weights would be 44 MiB; bench/ measures the paper widths layer by layer)."""

    def __init__(self, ncls=5, base=16):
        super().__init__()
        c = [base, base * 2, base * 4, base * 8]
        self.stem = nn.Sequential(nn.Conv2d(3, c[0], 7, 2, 3, bias=False), nn.BatchNorm2d(c[0]),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        self.enc = nn.ModuleList()
        cin = c[0]
        for i, ch in enumerate(c):
            self.enc.append(nn.Sequential(BasicBlock(cin, ch, 1 if i == 0 else 2), BasicBlock(ch, ch, 1)))
            cin = ch
        self.dec = nn.ModuleList([LinkNetDecoderBlock(c[i], c[i - 1] if i else c[0]) for i in range(4)])
        self.head = nn.Sequential(
            nn.ConvTranspose2d(c[0], c[0] // 2, 3, 2, 1, output_padding=1, bias=False),
            nn.BatchNorm2d(c[0] // 2), nn.ReLU(inplace=True),
            nn.Conv2d(c[0] // 2, c[0] // 2, 3, 1, 1, bias=False), nn.BatchNorm2d(c[0] // 2),
            nn.ReLU(inplace=True), nn.ConvTranspose2d(c[0] // 2, ncls, 2, 2))

    def forward(self, x):
        h = self.stem(x)
        feats = []
        for e in self.enc:
            h = e(h)
            feats.append(h)
        d = self.dec[3](feats[3])
        for i in (2, 1):
            d = self.dec[i](d + feats[i])
        d = self.dec[0](d + feats[0])
        return self.head(d)


class NonBottleneck1D(nn.Module):
    """ERFNet's non-bottleneck-1D block: Conv 3x1, ReLU, Conv 1x3, BN, ReLU, dilated Conv 3x1,
    ReLU, dilated Conv 1x3, BN, residual sum, ReLU (dropout is the identity in eval mode)."""

    def __init__(self, ch, dil):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(ch, ch, (3, 1), padding=(1, 0)), nn.ReLU(inplace=True),
            nn.Conv2d(ch, ch, (1, 3), padding=(0, 1)), nn.BatchNorm2d(ch), nn.ReLU(inplace=True),
            nn.Conv2d(ch, ch, (3, 1), padding=(dil, 0), dilation=(dil, 1)), nn.ReLU(inplace=True),
            nn.Conv2d(ch, ch, (1, 3), padding=(0, dil), dilation=(1, dil)), nn.BatchNorm2d(ch))

    def forward(self, x):
        return F.relu(self.net(x) + x)


class ERFDownsampler(nn.Module):
    """ERFNet downsampler: Conv 3x3 s2 (cin -> cout - cin) concatenated with MaxPool 2x2, BN, ReLU."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout - cin, 3, 2, 1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(torch.cat([self.conv(x), F.max_pool2d(x, 2)], 1)))


class ERFNet(nn.Module):
    """ERFNet (Romera et al.), widths 16/32/64 (16/64/128 in the paper), fewer blocks: the encoder's
    factorized 3x1/1x3 blocks with dilations 2, 4, 8, 16, the decoder's ConvTranspose 3x3 s2 p1
    output_padding 1 upsamplers and ConvTranspose 2x2 s2 output layer.  paper=True: the paper's
    blocks (5 at the middle width, the dilations twice, 2 a decoder stage; bench/gen_layers.py
    --paper)."""

    def __init__(self, ncls=5, w=(16, 32, 64), paper=False):
        super().__init__()
        mid, rep, dec = (5, 2, 2) if paper else (2, 1, 1)
        self.enc = nn.Sequential(
            ERFDownsampler(3, w[0]), ERFDownsampler(w[0], w[1]),
            *[NonBottleneck1D(w[1], 1) for _ in range(mid)],
            ERFDownsampler(w[1], w[2]),
            *[NonBottleneck1D(w[2], d) for _ in range(rep) for d in (2, 4, 8, 16)])
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(w[2], w[1], 3, 2, 1, output_padding=1), nn.BatchNorm2d(w[1]), nn.ReLU(inplace=True),
            *[NonBottleneck1D(w[1], 1) for _ in range(dec)],
            nn.ConvTranspose2d(w[1], w[0], 3, 2, 1, output_padding=1), nn.BatchNorm2d(w[0]), nn.ReLU(inplace=True),
            *[NonBottleneck1D(w[0], 1) for _ in range(dec)],
            nn.ConvTranspose2d(w[0], ncls, 2, 2))

    def forward(self, x):
        return self.dec(self.enc(x))


def _encodec_extra_padding(x, k, s, padding_total):
    """EnCodec's get_extra_padding_for_conv1d with the length read from the tensor at run time:
    torch exports it as a Shape/Gather/Sub/Div/Ceil/... chain."""
    length = x.shape[-1]
    n_frames = torch.div(length - k + padding_total + s - 1, s, rounding_mode="floor") + 1
    ideal = (n_frames - 1) * s + (k - padding_total)
    return ideal - length


class SConv1d(nn.Module):
    """EnCodec's SConv1d (non-causal): reflect padding split evenly plus the extra padding that
    makes the last window whole, computed from the input length at run time."""

    def __init__(self, cin, cout, k, s=1, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, s, dilation=dilation)
        self.k, self.s = (k - 1) * dilation + 1, s

    def forward(self, x):
        pt = self.k - self.s
        extra = _encodec_extra_padding(x, self.k, self.s, pt)
        pr = pt // 2
        return self.conv(F.pad(x, (pt - pr, pr + extra), mode="reflect"))


class SConvTranspose1d(nn.Module):
    """EnCodec's SConvTranspose1d (non-causal): the k - s extra samples trimmed from both ends
    with a Slice whose end is computed from the output length at run time."""

    def __init__(self, cin, cout, k, s):
        super().__init__()
        self.convtr = nn.ConvTranspose1d(cin, cout, k, s)
        self.pt = k - s

    def forward(self, x):
        y = self.convtr(x)
        pr = self.pt // 2
        pl = self.pt - pr
        return y[..., pl:y.shape[-1] - pr]


class SEANetResBlock(nn.Module):
    def __init__(self, ch, dil):
        super().__init__()
        self.block = nn.Sequential(nn.ELU(), SConv1d(ch, ch // 2, 3, dilation=dil), nn.ELU(),
                                   SConv1d(ch // 2, ch, 1))
        self.shortcut = SConv1d(ch, ch, 1)

    def forward(self, x):
        return self.shortcut(x) + self.block(x)


class SEANetDecoder(nn.Module):
    """EnCodec's SEANet decoder (Defossez et al.), small: SConv1d k7 from the latent, a 2-layer
    LSTM with a residual sum, per ratio ELU + SConvTranspose1d(k = 2r, stride r) + a residual unit
    (ELU, dilated SConv1d k3, ELU, SConv1d k1, 1x1 shortcut), ELU + SConv1d k7 to the waveform.
    Width: 64 at the latent, halved per ratio (512 in the paper)."""

    def __init__(self, dim=32, ch=8, ratios=(4, 4, 2)):
        super().__init__()
        mult = 2 ** len(ratios)
        layers = [SConv1d(dim, mult * ch, 7)]
        self.pre = nn.Sequential(*layers)
        self.lstm = nn.LSTM(mult * ch, mult * ch, 2)
        ups = []
        for r in ratios:
            ups += [nn.ELU(), SConvTranspose1d(mult * ch, mult * ch // 2, 2 * r, r),
                    SEANetResBlock(mult * ch // 2, 1)]
            mult //= 2
        ups += [nn.ELU(), SConv1d(ch, 1, 7)]
        self.post = nn.Sequential(*ups)

    def forward(self, z):
        h = self.pre(z)
        y, _ = self.lstm(h.permute(2, 0, 1))
        h = (y + h.permute(2, 0, 1)).permute(1, 2, 0)
        return self.post(h)


class ModulatedConv(nn.Module):
    """StyleGAN2's modulated convolution: per-sample weights W * style (from an affine map of w),
    demodulated to unit norm per output channel, run as one grouped convolution with
    groups = batch (a stride-2 ConvTranspose with groups = batch for the upsampling layers)."""

    def __init__(self, cin, cout, k, wdim, up=False, demod=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k))
        self.gain = 1.0 / float(np.sqrt(cin * k * k))      # StyleGAN2's equalized learning rate
        self.affine = nn.Linear(wdim, cin)
        self.up, self.demod, self.pad = up, demod, k // 2

    def forward(self, x, w):
        n, cin, h, wd = x.shape
        style = self.affine(w) + 1.0
        wt = (self.weight * self.gain)[None] * style[:, None, :, None, None]
        if self.demod:
            wt = wt * torch.rsqrt((wt * wt).sum(dim=[2, 3, 4], keepdim=True) + 1e-8)
        cout, k = wt.shape[1], wt.shape[3]
        x = x.reshape(1, n * cin, h, wd)
        if self.up:
            wt = wt.transpose(1, 2).reshape(n * cin, cout, k, k)
            y = F.conv_transpose2d(x, wt, stride=2, padding=self.pad, output_padding=1, groups=n)
        else:
            y = F.conv2d(x, wt.reshape(n * cout, cin, k, k), padding=self.pad, groups=n)
        return y.reshape(n, cout, y.shape[2], y.shape[3])


class StyleLayer(nn.Module):
    def __init__(self, cin, cout, wdim, up=False):
        super().__init__()
        self.conv = ModulatedConv(cin, cout, 3, wdim, up)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, w, noise):
        y = self.conv(x, w) + 0.1 * noise
        return F.leaky_relu(y + self.bias[None, :, None, None], 0.2) * 2 ** 0.5


class StyleGAN2Generator(nn.Module):
    """StyleGAN2 synthesis network (Karras et al.), small: a mapping MLP (4 Linear + LeakyReLU,
    pixel-norm of z), a learned 4x4 constant, per resolution 8, 16, 32 a modulated upsampling
    ConvTranspose (groups = batch) and a modulated 3x3 Conv, per-layer noise inputs (the noise is
    a graph input, so the golden data is deterministic), modulated 1x1 toRGB without
    demodulation summed over the resolutions with bilinear upsampling.  Width 32 (512)."""

    def __init__(self, zdim=32, wdim=32, ch=32, nres=3):
        super().__init__()
        mlp = []
        for i in range(4):
            mlp += [nn.Linear(zdim if i == 0 else wdim, wdim), nn.LeakyReLU(0.2)]
        self.mapping = nn.Sequential(*mlp)
        self.const = nn.Parameter(torch.randn(1, ch, 4, 4))
        self.first = StyleLayer(ch, ch, wdim)
        self.rgb = nn.ModuleList([ModulatedConv(ch, 3, 1, wdim, demod=False)])
        self.ups = nn.ModuleList()
        self.convs = nn.ModuleList()
        for _ in range(nres):
            self.ups.append(StyleLayer(ch, ch, wdim, up=True))
            self.convs.append(StyleLayer(ch, ch, wdim))
            self.rgb.append(ModulatedConv(ch, 3, 1, wdim, demod=False))
        self.nres = nres

    def forward(self, z, noise):
        z = z * torch.rsqrt((z * z).mean(dim=1, keepdim=True) + 1e-8)
        w = self.mapping(z)
        x = self.const.expand(z.shape[0], -1, -1, -1)
        x = self.first(x, w, noise[..., :4, :4])
        rgb = self.rgb[0](x, w)
        for i in range(self.nres):
            s = 8 << i
            x = self.ups[i](x, w, noise[..., :s, :s])
            x = self.convs[i](x, w, noise[..., :s, :s])
            rgb = F.interpolate(rgb, scale_factor=2.0, mode="bilinear", align_corners=False) + self.rgb[i + 1](x, w)
        return rgb


def export_torch(module, example_inputs, input_names, output_names, opset):
    module.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(example_inputs), buf, opset_version=opset,
                          do_constant_folding=True, export_params=True,
                          keep_initializers_as_inputs=False,
                          input_names=input_names, output_names=output_names)
    model = onnx.load_from_string(buf.getvalue())
    with torch.no_grad():
        out = module(*example_inputs)
    outs = [out] if isinstance(out, torch.Tensor) else list(out)
    return model, [[t.numpy().astype(np.float32) for t in example_inputs],
                   [o.numpy().astype(np.float32) for o in outs]]


def seeded_module(seed, ctor, input_shapes):
    """The module with its seeded weights (He, BatchNorm statistics, LSUV) and the inputs."""
    torch.manual_seed(seed)
    module = ctor()
    he_init(module, torch.Generator().manual_seed(seed + 3))
    randomize_bn(module, torch.Generator().manual_seed(seed + 1))
    module.eval()
    gen = torch.Generator().manual_seed(seed + 2)
    calib = [torch.randn(*s, generator=gen) for s in input_shapes]
    lsuv(module, calib)
    return module, [torch.randn(*s, generator=gen) for s in input_shapes]


def torch_case(seed, ctor, input_shapes, input_names, output_names, opset):
    module, xs = seeded_module(seed, ctor, input_shapes)
    model, ds = export_torch(module, xs, input_names, output_names, opset)
    return model, [ds]


def float16_case(seed, ctor, input_shapes, input_names, output_names, opset):
    """A half-precision export: torch_case's module with every parameter and buffer rounded
    to float16 (nearest even), exported in float32, then every float tensor, value type and
    Constant of the graph turned float16 (what onnxconverter-common's float16 conversion does,
    with no casts kept).  Golden: torch's float32 forward on the rounded weights and rounded
    inputs, rounded once to float16 (a float16 runtime rounds after every op, so it matches
    to a few float16 units, not exactly)."""
    module, xs = seeded_module(seed, ctor, input_shapes)
    with torch.no_grad():
        for t in list(module.parameters()) + list(module.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())
    xs = [x.half().float() for x in xs]
    model, (ins, outs) = export_torch(module, xs, input_names, output_names, opset)
    to_float16(model.graph)
    return model, [([a.astype(np.float16) for a in ins], [o.astype(np.float16) for o in outs])]


def to_float16(graph):
    """Every FLOAT of the graph becomes FLOAT16 (values exactly representable: rounded before)."""
    for i, t in enumerate(graph.initializer):
        if t.data_type == TensorProto.FLOAT:
            graph.initializer[i].CopyFrom(
                numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(a.t).astype(np.float16), a.t.name))


# --------------------------------------------------------------------------------------
# onnx.helper models
# --------------------------------------------------------------------------------------

class Params:
    """Deterministic float32 weights, variance-preserving (He) scale as in he_init;
    biases N(0, 0.1^2)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def he(self, shape, fan_in):
        return (self.rng.standard_normal(size=shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def bias(self, n):
        return (0.1 * self.rng.standard_normal(size=[n])).astype(np.float32)

    def convt(self, cin, cout, k, stride, group=1):
        k = list(k)
        fan_in = (cin // group) * float(np.prod(k)) / float(np.prod(stride))
        return self.he([cin, cout // group] + k, fan_in), self.bias(cout)

    def conv(self, cin, cout, k, group=1):
        k = list(k)
        fan_in = (cin // group) * int(np.prod(k))
        return self.he([cout, cin // group] + k, fan_in), self.bias(cout)

    def normal(self, shape):
        return self.rng.standard_normal(size=shape).astype(np.float32)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def vinfo(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def relu(x):
    return np.maximum(x, 0)


def conv_ref(x, w, b, pads):
    nd = x.ndim - 2
    return _CONV[nd](_tt(x), _tt(w), _tt(b), padding=pads).numpy()


def f32(a):
    return np.asarray(a, np.float64).astype(np.float32)


def make_model(graph, opset):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="tconv-models-generate")
    m.ir_version = 7 if opset <= 13 else 8
    return m


def keras_decoder(seed, opset):
    """Keras Conv2DTranspose(padding="same") decoder, as converters emit it."""
    P = Params(seed)
    N, H, W = 2, 7, 5
    layers = [  # name, cin, cout, k, auto_pad, keep kernel_shape attr
        ("deconv1", 128, 64, 3, "SAME_UPPER", True),
        ("deconv2", 64, 32, 5, "SAME_UPPER", True),
        ("deconv3", 32, 16, 3, "SAME_LOWER", False),   # kernel_shape absent: from W
        ("deconv4", 16, 1, 3, "SAME_UPPER", True),     # stride 1
    ]
    nodes, inits, weights = [], [], []
    cur = "z"
    h, w_ = H, W
    for i, (nm, cin, cout, k, ap, ks) in enumerate(layers):
        s = 1 if nm == "deconv4" else 2
        wt, bt = P.convt(cin, cout, (k, k), (1, 1) if nm == "deconv4" else (2, 2))
        inits += [init(nm + ".weight", wt), init(nm + ".bias", bt)]
        weights.append((wt, bt, s, ap, k, ks))
        attrs = dict(auto_pad=ap, strides=[s, s])
        if ks:
            attrs["kernel_shape"] = [k, k]
        out = nm + "_out"
        nodes.append(helper.make_node("ConvTranspose", [cur, nm + ".weight", nm + ".bias"], [out],
                                      name=nm, **attrs))
        act = "Sigmoid" if nm == "deconv4" else "Relu"
        cur = "image" if nm == "deconv4" else nm + "_act"
        nodes.append(helper.make_node(act, [out], [cur], name=nm + "_" + act.lower()))
        h, w_ = h * s, w_ * s
    graph = helper.make_graph(nodes, "keras_decoder", [vinfo("z", [N, 128, H, W])],
                              [vinfo("image", [N, 1, h, w_])], inits)
    model = make_model(graph, opset)

    z = P.normal([N, 128, H, W])
    y = z.astype(np.float64)
    for i, (wt, bt, s, ap, k, ks) in enumerate(weights):
        r = resolve_convtranspose(list(y.shape), list(wt.shape), dict(auto_pad=ap, strides=[s, s]))
        assert r["out"] == [y.shape[2] * s, y.shape[3] * s]
        y = conv_transpose_ref(y, wt, bt, dict(auto_pad=ap, strides=[s, s]))
        y = 1.0 / (1.0 + np.exp(-y)) if i == len(weights) - 1 else relu(y)
    return model, [[[z], [f32(y)]]]


def tf2onnx_style(seed, opset):
    """Converter-style ConvTransposes: output_shape (spatial only, odd total), output_shape
    with N,C in front (with SAME_UPPER; one axis has a negative total), explicit
    asymmetric pads with output_padding reaching past the full output."""
    P = Params(seed)
    N, C, H, W = 1, 32, 5, 6
    w1, b1 = P.convt(32, 32, (3, 3), (2, 2))
    w2, b2 = P.convt(32, 16, (4, 4), (2, 2))
    w3, b3 = P.convt(16, 8, (3, 3), (2, 2))
    a1 = dict(kernel_shape=[3, 3], strides=[2, 2], output_shape=[10, 12])
    a2 = dict(kernel_shape=[4, 4], strides=[2, 2], auto_pad="SAME_UPPER", output_shape=[1, 16, 21, 27])
    a3 = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 2, 0, 1], output_padding=[1, 1])
    x = P.normal([N, C, H, W])

    y1 = conv_transpose_ref(x, w1, b1, a1)
    y2 = conv_transpose_ref(relu(y1), w2, b2, a2)
    y3 = conv_transpose_ref(relu(y2), w3, b3, a3)
    assert y1.shape == (1, 32, 10, 12) and y2.shape == (1, 16, 21, 27), (y1.shape, y2.shape)

    nodes = [
        helper.make_node("ConvTranspose", ["input", "w1", "b1"], ["t1"], name="deconv_output_shape", **a1),
        helper.make_node("Relu", ["t1"], ["r1"], name="relu1"),
        helper.make_node("ConvTranspose", ["r1", "w2", "b2"], ["t2"], name="deconv_output_shape_nc", **a2),
        helper.make_node("Relu", ["t2"], ["r2"], name="relu2"),
        helper.make_node("ConvTranspose", ["r2", "w3", "b3"], ["output"], name="deconv_asym_pads", **a3),
    ]
    inits = [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2), init("w3", w3), init("b3", b3)]
    graph = helper.make_graph(nodes, "tf2onnx_style", [vinfo("input", [N, C, H, W])],
                              [vinfo("output", list(y3.shape))], inits,
                              value_info=[vinfo("t1", list(y1.shape)), vinfo("t2", list(y2.shape))])
    return make_model(graph, opset), [[[x], [f32(y3)]]]


def dynamic_same(seed, opset):
    """Dynamic batch and spatial dims; SAME_UPPER stride-2 ConvTransposes (the second
    dilated: odd total 3), Conv + Relu around them.  Two data sets of different sizes."""
    P = Params(seed)
    wc, bc = P.conv(8, 16, (3, 3))
    w1, b1 = P.convt(16, 16, (3, 3), (2, 2))
    w2, b2 = P.convt(16, 8, (3, 3), (2, 2))
    wh, bh = P.conv(8, 3, (1, 1))
    a1 = dict(auto_pad="SAME_UPPER", strides=[2, 2], kernel_shape=[3, 3])
    a2 = dict(auto_pad="SAME_UPPER", strides=[2, 2], dilations=[2, 2], kernel_shape=[3, 3])
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["c_relu"], name="relu0"),
        helper.make_node("ConvTranspose", ["c_relu", "up1.weight", "up1.bias"], ["u1"], name="up1", **a1),
        helper.make_node("Relu", ["u1"], ["u1_relu"], name="relu1"),
        helper.make_node("ConvTranspose", ["u1_relu", "up2.weight", "up2.bias"], ["u2"], name="up2", **a2),
        helper.make_node("Relu", ["u2"], ["u2_relu"], name="relu2"),
        helper.make_node("Conv", ["u2_relu", "head.weight", "head.bias"], ["y"], name="head",
                         kernel_shape=[1, 1]),
    ]
    inits = [init("conv.weight", wc), init("conv.bias", bc), init("up1.weight", w1), init("up1.bias", b1),
             init("up2.weight", w2), init("up2.bias", b2), init("head.weight", wh), init("head.bias", bh)]
    graph = helper.make_graph(nodes, "dynamic_same", [vinfo("x", ["N", 8, "H", "W"])],
                              [vinfo("y", ["N", 3, "H_out", "W_out"])], inits)
    datasets = []
    for (n, h, w) in ((1, 7, 9), (3, 12, 5)):
        x = P.normal([n, 8, h, w])
        y = relu(conv_ref(x, wc, bc, 1))
        y = relu(conv_transpose_ref(y, w1, b1, a1))
        y = relu(conv_transpose_ref(y, w2, b2, a2))
        y = conv_ref(y, wh, bh, 0)
        assert y.shape == (n, 3, 4 * h, 4 * w)
        datasets.append([[x], [f32(y)]])
    return make_model(graph, opset), datasets


def if_branch(seed, opset):
    """1-D ConvTransposes inside the branches of an If: then = explicit pads + output_padding
    (weights in the subgraph's own initializers), else = SAME_LOWER k5 (weights from the
    outer scope).  Both give length 2x."""
    P = Params(seed)
    N, C, L = 2, 32, 10
    wc, bc = P.conv(C, C, (3,))
    wt, bt = P.convt(C, 16, (3,), (2,))
    we, be = P.convt(C, 16, (5,), (2,))
    at = dict(kernel_shape=[3], strides=[2], pads=[1, 1], output_padding=[1])
    ae = dict(kernel_shape=[5], strides=[2], auto_pad="SAME_LOWER")
    then_g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["h", "then.weight", "then.bias"], ["then_out"],
                          name="then_deconv", **at)],
        "then_branch", [], [vinfo("then_out", [N, 16, 2 * L])],
        [init("then.weight", wt), init("then.bias", bt)])
    else_g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["h", "else.weight", "else.bias"], ["else_out"],
                          name="else_deconv", **ae)],
        "else_branch", [], [vinfo("else_out", [N, 16, 2 * L])])
    nodes = [
        helper.make_node("Conv", ["x", "pre.weight", "pre.bias"], ["pre"], name="pre",
                         kernel_shape=[3], pads=[1, 1]),
        helper.make_node("Relu", ["pre"], ["h"], name="pre_relu"),
        helper.make_node("If", ["cond"], ["up"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Relu", ["up"], ["y"], name="post_relu"),
    ]
    graph = helper.make_graph(nodes, "if_branch", [vinfo("x", [N, C, L]), vinfo("cond", [], TensorProto.BOOL)],
                              [vinfo("y", [N, 16, 2 * L])],
                              [init("pre.weight", wc), init("pre.bias", bc),
                               init("else.weight", we), init("else.bias", be)],
                              value_info=[vinfo("up", [N, 16, 2 * L])])
    x = P.normal([N, C, L])
    datasets = []
    for cond in (True, False):
        h = relu(conv_ref(x, wc, bc, 1))
        y = conv_transpose_ref(h, wt, bt, at) if cond else conv_transpose_ref(h, we, be, ae)
        y = relu(y)
        assert y.shape == (N, 16, 2 * L)
        datasets.append([[x, np.array(cond)], [f32(y)]])
    return make_model(graph, opset), datasets


# --------------------------------------------------------------------------------------
# The suite
# --------------------------------------------------------------------------------------

# name, opset, source, builder, what it exercises
SUITE = [
    ("dcgan_generator", 13, "torch export",
     lambda op: torch_case(101, DCGANGenerator, [(2, 100, 1, 1)], ["z"], ["image"], op),
     "DCGAN generator (ngf 16): k4 s1 p0 from a 1x1 latent, then k4 s2 p1 x4 with BatchNorm/ReLU, "
     "Tanh; symmetric pads, batch 2"),
    ("dcgan_generator_fp16", 13, "torch export, float16",
     lambda op: float16_case(111, DCGANGenerator, [(2, 100, 1, 1)], ["z"], ["image"], op),
     "the DCGAN generator in float16 (a half-precision export: weights, BatchNorm statistics, "
     "input and output float16); golden from torch in float32 on the rounded values, rounded"),
    ("unet", 11, "torch export",
     lambda op: torch_case(102, UNet, [(1, 3, 64, 96)], ["image"], ["logits"], op),
     "U-Net (base 8): Conv/BN(folded)/ReLU, MaxPool, ConvTranspose k2 s2 x4 (VALID-equivalent), "
     "Concat skips"),
    ("fcn_head", 9, "torch export",
     lambda op: torch_case(103, FCN8s, [(1, 3, 96, 128)], ["image"], ["scores"], op),
     "FCN-8s: ConvTranspose k4 s2, k4 s2, k16 s8 (pads 0, no bias) each followed by a centre crop; "
     "opset 9: the crops are attribute-form Slice-1"),
    ("audio_upsampler", 17, "torch export",
     lambda op: torch_case(104, MelGANGenerator, [(1, 80, 24)], ["mel"], ["audio"], op),
     "MelGAN generator (width 128): 1-D ConvTranspose stride 8/8/2/2, kernel 2s, padding s/2 "
     "(output_padding s%2 = 0 for these even strides), LeakyRelu, dilated Conv1d res-stacks, Tanh"),
    ("decoder3d", 12, "torch export",
     lambda op: torch_case(105, Decoder3D, [(1, 128, 3, 4, 5)], ["latent"], ["volume"], op),
     "3-D decoder: ConvTranspose3d k3 s2 p1 output_padding 1, k2 s2, k3 s1 p1, BatchNorm3d, "
     "anisotropic 3x4x5 input"),
    ("grouped_upsampler", 14, "torch export",
     lambda op: torch_case(106, GroupedUpsampler, [(2, 128, 8, 10)], ["features"], ["image"], op),
     "depthwise ConvTranspose (group 128, k4 s2 p1), group 4 k3 s2 p1 output_padding 1, depthwise "
     "with channel multiplier 2 (group 64, 64->128), batch 2"),
    ("cyclegan_generator", 11, "torch export",
     lambda op: torch_case(111, CycleGANGenerator, [(1, 3, 32, 32)], ["image"], ["fake"], op),
     "CycleGAN ResNet generator (ngf 8, 2 res blocks): ReflectionPad2d (Pad reflect, pads computed "
     "at run time by ConstantOfShape/Concat/Reshape/Slice/Transpose/Cast), InstanceNorm2d, "
     "ConvTranspose2d k3 s2 p1 output_padding 1 x2, Tanh"),
    ("tasnet_decoder", 12, "torch export",
     lambda op: torch_case(112, TasNetDecoder, [(1, 32, 40)], ["features"], ["audio"], op),
     "Conv-TasNet separator tail + decoder (N 32, B 16, L 16): GroupNorm(1, C) as Reshape + "
     "InstanceNormalization + Reshape, PRelu, depthwise dilated Conv1d, Sigmoid mask, "
     "ConvTranspose1d k3 s2 p1 output_padding 1 and k16 s8 p4"),
    ("demucs_small", 14, "torch export",
     lambda op: torch_case(113, DemucsSmall, [(1, 1, 200)], ["mix"], ["source"], op),
     "Demucs waveform U-Net (width 8, depth 2): Conv1d k8 s4, GLU (Split + Sigmoid + Mul), "
     "2-layer bidirectional LSTM + Linear, ConvTranspose1d k8 s4 p2 output_padding 1 x2, "
     "cropped skips (Slice)"),
    ("keras_decoder", 9, "onnx.helper",
     lambda op: keras_decoder(107, op),
     "Keras-style: auto_pad SAME_UPPER k3 s2 and k5 s2 (odd totals 1, 3), SAME_LOWER k3 s2 "
     "(kernel_shape attribute absent), SAME_UPPER k3 s1, bias, Relu, Sigmoid, batch 2; opset 9 "
     "(keras2onnx era): the legalizer must emit attribute-form Slice-1"),
    ("tf2onnx_style", 10, "onnx.helper",
     lambda op: tf2onnx_style(108, op),
     "output_shape spatial-only (odd total: extra at begin), output_shape with N,C in front + "
     "SAME_UPPER (one axis total -1: output extends past F at the begin), asymmetric pads + "
     "output_padding reaching past F (bias-only row); opset 10: Slice-10 + Pad-2"),
    ("dynamic_same", 17, "onnx.helper",
     lambda op: dynamic_same(109, op),
     "dynamic dims N, H, W; SAME_UPPER k3 s2 and k3 s2 dilation 2 (odd totals 1, 3), Conv/Relu; "
     "two data sets (1x8x7x9, 3x8x12x5)"),
    ("if_branch", 11, "onnx.helper",
     lambda op: if_branch(110, op),
     "1-D ConvTranspose inside If: then = pads [1,1] + output_padding 1 (subgraph initializers), "
     "else = SAME_LOWER k5 s2 (outer-scope weights); data sets cond=True and cond=False"),
    ("linknet", 13, "torch export",
     lambda op: torch_case(114, LinkNet, [(1, 3, 64, 64)], ["image"], ["logits"], op),
     "LinkNet segmenter: ResNet-18 encoder (stem 7x7 s2 + MaxPool, 4 stages of 2 basic blocks, "
     "3x3 Convs 16-128 channels, a quarter of the paper's 64-512), decoder blocks 1x1 / "
     "ConvTranspose 3x3 s2 p1 output_padding 1 / 1x1 added to the encoder features, "
     "ConvTranspose 2x2 s2 head"),
    ("erfnet", 13, "torch export",
     lambda op: torch_case(115, ERFNet, [(1, 3, 64, 64)], ["image"], ["logits"], op),
     "ERFNet segmenter (widths 16/32/64): downsamplers Conv 3x3 s2 + MaxPool Concat, "
     "non-bottleneck-1D blocks of factorized 3x1/1x3 Convs dilated 1-16, ConvTranspose 3x3 s2 "
     "p1 output_padding 1 upsamplers, ConvTranspose 2x2 s2 output"),
    ("encodec_decoder", 13, "torch export",
     lambda op: torch_case(116, SEANetDecoder, [(1, 32, 20)], ["latent"], ["audio"], op),
     "EnCodec/SEANet decoder (width 64..8): SConv1d whose reflect padding is computed from the "
     "length at run time (Shape/Gather/Div/Mod/Where/Concat/Slice chains), 2-layer LSTM with a "
     "residual sum, ELU, ConvTranspose1d k2r s r (r 4, 4, 2) trimmed by run-time Slices, "
     "residual units with dilated Conv1d"),
    ("stylegan2_generator", 13, "torch export",
     lambda op: torch_case(117, StyleGAN2Generator, [(2, 32), (1, 1, 32, 32)], ["z", "noise"],
                           ["image"], op),
     "StyleGAN2 synthesis (width 32, 4x4 -> 32x32, batch 2): mapping MLP (Gemm), modulated and "
     "demodulated weights computed from the style every run, grouped Conv 3x3 and "
     "ConvTranspose 3x3 s2 p1 output_padding 1 with groups = batch on those run-time weights, "
     "noise input, toRGB summed through bilinear Resize"),
]


def walk_nodes(graph):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from walk_nodes(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from walk_nodes(g)


def legalize_reasons(node):
    """Why the default policy rewrites this ConvTranspose ([] if it does not), and whether
    the strict policy (every non-VALID-equivalent ConvTranspose) does."""
    a = node_attrs(node)
    reasons = []
    ap = _s(a.get("auto_pad", "NOTSET")) or "NOTSET"
    if ap in ("SAME_UPPER", "SAME_LOWER"):
        reasons.append(ap)
    if a.get("output_shape"):
        reasons.append("output_shape")
    if any(a.get("output_padding") or []):
        reasons.append("output_padding")
    pads = list(a.get("pads") or [])
    if ap == "NOTSET" and pads and pads[:len(pads) // 2] != pads[len(pads) // 2:]:
        reasons.append("asym_pads")
    strict = bool(reasons) or (ap == "NOTSET" and any(pads))
    return reasons, strict


def fmt_attrs(node):
    a = node_attrs(node)
    parts = []
    for key in ("kernel_shape", "strides", "pads", "dilations", "group", "auto_pad",
                "output_padding", "output_shape"):
        if key in a:
            v = a[key]
            v = _s(v) if isinstance(v, (bytes, str)) else v
            parts.append("%s=%s" % (key, v if not isinstance(v, list) else "[%s]" % ",".join(map(str, v))))
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=HERE, help="output directory (default: this script's directory)")
    ap.add_argument("--node-tests", help="a folder holding ONNX's node tests test_convtranspose*/, e.g. "
                    "BUILD/onnx-node-tests-v1.22.0 (default: $TCONV_ONNX_NODE_TESTS, else unpacked "
                    "from tests/data/onnx-node-tests-v1.22.0.tar.xz)")
    ap.add_argument("--only", nargs="*", help="regenerate only these models (README/TSV not rewritten)")
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(HERE, "..", "tests", "data"))
    import onnx_node_tests
    print("ConvTranspose reference vs ONNX v1.22.0 conformance tests (tests/data):")
    node_tests = onnx_node_tests.node_tests_dir(args.node_tests, "test_convtranspose")
    for line in validate_against_conformance(node_tests):
        print(line)
    print("  all 11 conformance tests match")
    print("ConvTranspose reference vs %d hand-computed cases from the ONNX operator text: ok"
          % validate_hand_cases())

    os.makedirs(args.out, exist_ok=True)
    rows = []
    helper_nodes = []
    for name, opset, source, build, what in SUITE:
        if args.only and name not in args.only:
            continue
        model, datasets = build(opset)
        size = write_case(args.out, name, model, datasets)
        if size >= SIZE_LIMIT:
            die("%s: model.onnx is %d bytes (limit %d)" % (name, size, SIZE_LIMIT))
        model = onnx.load(os.path.join(args.out, name, "model.onnx"))
        onnx.checker.check_model(model)
        try:
            onnx.checker.check_model(model, full_check=True)
            full = "ok"
        except Exception as e:  # onnx 1.12 shape inference rejects some valid forms
            full = "shape inference: " + str(e).strip().splitlines()[-1][:160]
        check_declared_shapes(name, model, datasets)
        # cross-check: interpreter on model.onnx vs golden
        errs = []
        trace = {}
        for k, (ins, outs) in enumerate(datasets):
            feeds = {vi.name: v for vi, v in zip(graph_inputs(model), ins)}
            got = run_model(model, feeds, trace)
            for g, want in zip(got, outs):
                if g.shape != want.shape:
                    die("%s set %d: interpreter shape %s vs golden %s" % (name, k, g.shape, want.shape))
                scale = max(1.0, float(np.max(np.abs(want))))
                err = float(np.max(np.abs(g - want)))
                # float16 golden is rounded once: half a float16 unit (2^-11) of the value
                tol = 1e-3 if want.dtype == np.float16 else 1e-4
                if err > tol * scale:
                    die("%s set %d: interpreter vs golden max abs error %g" % (name, k, err))
                errs.append(err)
        if source == "onnx.helper":
            inits = {}
            for g in [model.graph] + [a.g for n in walk_nodes(model.graph) for a in n.attribute
                                      if a.type == onnx.AttributeProto.GRAPH]:
                inits.update({t.name: numpy_helper.to_array(t) for t in g.initializer})
            for n in walk_nodes(model.graph):
                if n.op_type == "ConvTranspose":
                    w = inits[n.input[1]]
                    b = inits[n.input[2]] if len(n.input) > 2 else None
                    for xshape in trace[n.name]:
                        helper_nodes.append(("%s/%s" % (name, n.name), n, xshape, w, b))
        nodes_top = len(model.graph.node)
        all_nodes = list(walk_nodes(model.graph))
        cts = [n for n in all_nodes if n.op_type == "ConvTranspose"]
        leg = [(n, legalize_reasons(n)) for n in cts]
        ops = sorted({n.op_type for n in all_nodes})
        rows.append(dict(name=name, opset=opset, source=source, what=what, size=size,
                         nodes=nodes_top, nodes_all=len(all_nodes), cts=cts, leg=leg,
                         nsets=len(datasets), full=full, err=max(errs), ops=ops,
                         shapes=[tuple(np.shape(a)) for a in datasets[0][0]],
                         oshapes=[tuple(np.shape(a)) for a in datasets[0][1]]))
        print("\n%s: opset %d, %s, %d bytes, %d nodes (%d incl. subgraphs), %d data set(s), "
              "interpreter max abs err %.2e, full_check: %s" % (name, opset, source, size, nodes_top,
                                                                 len(all_nodes), len(datasets), max(errs), full))
        print("  ops: %s" % " ".join(ops))
        for n, (reasons, strict) in leg:
            print("  ConvTranspose %-34s %s  -> %s" % (n.name, fmt_attrs(n),
                                                       ",".join(reasons) if reasons else
                                                       ("strict-only" if strict else "unchanged")))

    checked, skipped = validate_against_torch_padding(helper_nodes)
    print("\nConvTranspose reference vs torch's padding/output_padding (flipping axes where needed): "
          "%d cases match (%d helper-model nodes among them), %d not expressible/invalid skipped"
          % (checked, len(helper_nodes), skipped))
    if args.only:
        return
    write_tsv(os.path.join(args.out, "models.tsv"), rows)
    write_readme(os.path.join(args.out, "README.md"), rows)
    print("\nwrote %d models, models.tsv, README.md under %s" % (len(rows), os.path.abspath(args.out)))


def write_tsv(path, rows):
    cols = ["name", "opset", "n_nodes", "n_convtranspose", "n_legalize", "n_legalize_strict",
            "n_datasets", "source", "legalize"]
    with open(path + ".tmp", "w") as f:
        f.write("\t".join(cols) + "\n")
        for r in rows:
            leg = [(n.name, reasons) for n, (reasons, strict) in r["leg"] if reasons]
            f.write("\t".join(map(str, [
                r["name"], r["opset"], r["nodes_all"], len(r["cts"]), len(leg),
                sum(1 for _, (_, strict) in r["leg"] if strict), r["nsets"],
                "torch" if r["source"].startswith("torch") else "helper",
                ";".join("%s=%s" % (n, "+".join(rs)) for n, rs in leg) or "-"])) + "\n")
    os.replace(path + ".tmp", path)


README_HEAD = """# tconv regression models

Real architectures with random weights (fixed seeds, eval mode), each an ONNX test
directory in the layout of ONNX's conformance tests:

    <name>/model.onnx
    <name>/test_data_set_K/input_N.pb, output_N.pb   (serialized TensorProto, named after
                                                       the graph inputs/outputs; inputs are
                                                       the graph inputs that are not initializers)

Run one with `tconv-run models/<name>`; `tconv-import --check` on any `model.onnx`
compares the legalized graph with the original.

**Do not edit by hand.** Everything here (models, data, `models.tsv`, this file) is written by
`generate.py`:

    /usr/bin/python3 models/generate.py          # Debian python3-onnx 1.12, python3-torch 1.13, numpy
    /usr/bin/python3 models/generate.py --only if_branch   # one model; README/TSV untouched
    /usr/bin/python3 models/generate.py --out /tmp/m       # elsewhere, e.g. to diff

The ONNX conformance tests come from the repository's `tests/data/onnx-node-tests-v1.22.0.tar.xz`
(unpacked into a temporary folder; `--node-tests DIR` or `$TCONV_ONNX_NODE_TESTS` gives an
unpacked copy instead, e.g. `build/test/onnx-node-tests-v1.22.0`). Python is needed only to
regenerate; tconv and its tests never run it.

It is deterministic (fixed seeds, one torch thread): re-running it on the same machine
reproduces the files byte for byte (torch's float32 results may differ in the last bits on
another CPU; compare with a tolerance).

## Golden data

- **torch export** models: torch's own float32 forward output (eval mode); exported with
  `torch.onnx.export(..., do_constant_folding=True)`, named inputs/outputs, weights as
  initializers. Weights: He-normal, then rescaled per layer to unit output variance on a
  calibration batch (LSUV); BatchNorm running statistics randomized so eval-mode BN is not
  the identity (torch folds BN into a preceding Conv, not into a ConvTranspose).
- **onnx.helper** models: an independent float64 computation: torch's VALID transposed
  convolution (`F.conv_transpose{1,2,3}d`, padding 0, no bias), then the crop / extension /
  bias of docs/semantics.md in numpy (`out[o] = full[o + pb]` where `0 <= o + pb < F`,
  else 0; then bias everywhere; floor division for the pad split), then the rest of the
  graph written out by hand.
- That reference (`conv_transpose_ref`) is validated on every run, and any mismatch aborts:
  1. against all 11 ONNX conformance tests `test_convtranspose*` (v1.22.0, `tests/data`);
  2. against 14 cases hand-computed from the ONNX operator text, for the rules no
     conformance test covers (SAME_LOWER, `output_shape` with SAME_UPPER or N,C in front,
     negative totals, bias past F, SAME + output_padding);
  3. against PyTorch's own `padding`/`output_padding` (with axis flips and zero-extended
     inputs where needed) on ~400 seeded attribute sets (1-3-D, every auto_pad, pads,
     output_padding, output_shape, dilation, group, bias) and on every ConvTranspose node
     of the helper-built models at its real input shape.
- Every model is cross-checked on every data set by a small float64 ONNX interpreter in
  `generate.py` (ConvTranspose via the reference, other ops from the ONNX spec), so the torch
  exporter's attributes are checked against ONNX semantics and the helper graphs' wiring
  against the hand-written computation. `onnx.checker.check_model` passes on every model.

Outputs are O(1) (weights are rescaled layer by layer to unit output variance), and golden
data is float32: compare with a tolerance; rtol 1e-3, atol 1e-4 is suggested. The "max err"
column is the largest absolute difference between `generate.py`'s float64 evaluation of
`model.onnx` and the golden outputs.

## Models

"""

README_TAIL = """
Legend for the ConvTranspose column, per node: `k` kernel, `s` stride, `p` pads
(begin..., end...), `d` dilation, `g` group, `op` output_padding, `os` output_shape; **bold**
marks nodes the default policy must rewrite (auto_pad SAME_*, asymmetric pads,
`output_shape`, nonzero `output_padding`), *(strict)* nodes only the strict policy rewrites.

## models.tsv

Tab-separated, one header row, one row per model, for the test harness:

| column | meaning |
|---|---|
| `name` | directory name |
| `opset` | default-domain opset |
| `n_nodes` | nodes, subgraphs included |
| `n_convtranspose` | ConvTranspose nodes, subgraphs included |
| `n_legalize` | ConvTranspose nodes the default policy rewrites (auto_pad SAME_*, asymmetric pads, output_shape, nonzero output_padding) |
| `n_legalize_strict` | ConvTranspose nodes the strict policy rewrites (also symmetric nonzero pads) |
| `n_datasets` | number of `test_data_set_K` directories |
| `source` | `torch` (torch.onnx.export) or `helper` (onnx.helper) |
| `legalize` | `node=reason[+reason]` for each node the default policy rewrites, `;`-separated, or `-` |
"""


def short_attrs(node):
    a = node_attrs(node)
    parts = []
    if "kernel_shape" in a:
        parts.append("k%s" % "x".join(map(str, a["kernel_shape"])))
    else:
        parts.append("k(from W)")
    if a.get("strides"):
        parts.append("s%s" % "x".join(map(str, a["strides"])))
    if any(a.get("pads") or []):
        parts.append("p[%s]" % ",".join(map(str, a["pads"])))
    if any(v != 1 for v in a.get("dilations") or []):
        parts.append("d%s" % "x".join(map(str, a["dilations"])))
    if a.get("group", 1) != 1:
        parts.append("g%d" % a["group"])
    if _s(a.get("auto_pad", "NOTSET")) not in ("NOTSET", ""):
        parts.append(_s(a["auto_pad"]))
    if any(a.get("output_padding") or []):
        parts.append("op%s" % "x".join(map(str, a["output_padding"])))
    if a.get("output_shape"):
        parts.append("os[%s]" % ",".join(map(str, a["output_shape"])))
    return " ".join(parts)


def write_readme(path, rows):
    lines = [README_HEAD,
             "| model | exercises | opset | model.onnx | nodes | ConvTranspose nodes | legalize (default) | source | data sets | max err |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cts = []
        for n, (reasons, strict) in r["leg"]:
            s = short_attrs(n)
            cts.append("**%s**" % s if reasons else ("%s *(strict)*" % s if strict else s))
        nodes = "%d" % r["nodes"] if r["nodes"] == r["nodes_all"] else \
            "%d (%d incl. subgraphs)" % (r["nodes"], r["nodes_all"])
        nleg = sum(1 for _, (rs, _) in r["leg"] if rs)
        lines.append("| `%s` | %s | %d | %.0f KiB | %s | %s | %d of %d | %s | %d | %.1e |" % (
            r["name"], r["what"], r["opset"], r["size"] / 1024.0, nodes, "<br>".join(cts),
            nleg, len(r["cts"]), r["source"], r["nsets"], r["err"]))
    lines.append("")
    lines.append("Inputs -> outputs (data set 0); ops used:")
    lines.append("")
    for r in rows:
        lines.append("- `%s`: %s -> %s; %s" % (
            r["name"], ", ".join("x".join(map(str, s)) if s else "scalar" for s in r["shapes"]),
            ", ".join("x".join(map(str, s)) for s in r["oshapes"]), ", ".join(r["ops"])))
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n" + README_TAIL)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Golden test directories for the recurrent ops (RNN, GRU, LSTM) under tests/golden/ops/.

Run:  /usr/bin/python3 tests/golden/ops/generate_rnn.py      (onnx 1.12, torch 1.13, numpy)

Three sources, each written as an ONNX test directory (model.onnx, test_data_set_0/*.pb):
  onnx_<test>   ONNX's own node tests for LSTM/GRU/RNN (onnx.backend.test.case.node, numpy
                references of the ONNX authors; the 291-test subset
                tests/data/onnx-node-tests-subset.tsv has none of them);
  torch_<case>  nn.LSTM / nn.GRU / nn.RNN exported by torch.onnx.export, golden = torch's own
                forward (float32 and float64 modules);
  ref_<case>    forms neither covers (layout 1, sequence_lens shorter than T, clip, other
                activations, GRU linear_before_reset 0, reverse, input_forget), golden = the
                float64 numpy reference below.
The numpy reference is checked against every onnx_ and torch_ case before anything is written
(any mismatch aborts), so the ref_ goldens rest on a reference that reproduces both.
Deterministic: fixed seeds, one torch thread.
"""
import io
import os
import shutil
import sys
import warnings

import op_cases  # noqa: F401  (first: pins the BLAS, patches numpy for onnx)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from op_cases import onnx_cases as onnx_node_cases, write_dir as write_case_dir, write_tsv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)

ACTS = {
    "sigmoid": lambda x, a, b: 1.0 / (1.0 + np.exp(-x)),
    "tanh": lambda x, a, b: np.tanh(x),
    "relu": lambda x, a, b: np.maximum(x, 0),
    "affine": lambda x, a, b: a * x + b,
    "leakyrelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "thresholdedrelu": lambda x, a, b: np.where(x > a, x, 0),
    "scaledtanh": lambda x, a, b: a * np.tanh(b * x),
    "hardsigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)),
    "softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "softplus": lambda x, a, b: np.log1p(np.exp(x)),
}
TAKES = {"affine": (1, 1), "leakyrelu": (1, 0), "thresholdedrelu": (1, 0), "scaledtanh": (1, 1),
         "hardsigmoid": (1, 1), "elu": (1, 0)}
DEFAULTS = {"affine": (1.0, 0.0), "leakyrelu": (0.01, 0), "thresholdedrelu": (1.0, 0),
            "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0)}


def attrs_of(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def reference(op, ins, a):
    """float64 ONNX RNN/GRU/LSTM from the operator text. ins: X, W, R, B, seq_lens, h0, c0, P
    (None where absent). Returns [Y, Y_h, Y_c] (Y_c only for LSTM)."""
    ins = list(ins) + [None] * (8 - len(ins))
    x, w, r, b, lens, h0, c0, p = [None if v is None else np.asarray(v) for v in ins]
    x, w, r = (v.astype(np.float64) for v in (x, w, r))
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    n_acts = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    layout = a.get("layout", 0)
    if layout:
        x = np.swapaxes(x, 0, 1)
        h0 = None if h0 is None else np.swapaxes(h0, 0, 1)
        c0 = None if c0 is None else np.swapaxes(c0, 0, 1)
    T, N, _ = x.shape
    D, GH, _ = w.shape
    H = GH // gates
    direction = a.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    names = [n.decode().lower() if isinstance(n, bytes) else n.lower() for n in a.get("activations", [])]
    if not names:
        names = {"RNN": ["tanh"], "GRU": ["sigmoid", "tanh"], "LSTM": ["sigmoid", "tanh", "tanh"]}[op]
    if len(names) == n_acts:
        names = names * D
    alphas, betas = list(a.get("activation_alpha", [])), list(a.get("activation_beta", []))
    acts = []
    for n in names:
        al, be = DEFAULTS.get(n, (0, 0))
        ta, tb = TAKES.get(n, (0, 0))
        if ta and alphas:
            al = alphas.pop(0)
        if tb and betas:
            be = betas.pop(0)
        acts.append(lambda v, n=n, al=al, be=be: ACTS[n](v, al, be))
    clip = a.get("clip", None)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    lbr = a.get("linear_before_reset", 0)
    coupled = a.get("input_forget", 0)
    lens = np.full(N, T) if lens is None else lens.astype(np.int64)
    Y = np.zeros((T, D, N, H))
    Yh = np.zeros((D, N, H))
    Yc = np.zeros((D, N, H))
    for d in range(D):
        f, g, hh = (acts[d * n_acts:(d + 1) * n_acts] + [None, None])[:3]
        wb = b[d, :GH].astype(np.float64) if b is not None else np.zeros(GH)
        rb = b[d, GH:].astype(np.float64) if b is not None else np.zeros(GH)
        pp = p[d].astype(np.float64) if p is not None else np.zeros(3 * H)
        rev = direction == "reverse" or d == 1
        for n in range(N):
            h = h0[d, n].astype(np.float64) if h0 is not None else np.zeros(H)
            c = c0[d, n].astype(np.float64) if c0 is not None else np.zeros(H)
            L = int(lens[n])
            for s in range(L):
                t = L - 1 - s if rev else s
                xw = w[d] @ x[t, n] + wb
                if op == "RNN":
                    h = f(cl(xw + r[d] @ h + rb))
                elif op == "LSTM":
                    hr = r[d] @ h + rb
                    i = f(cl(xw[:H] + hr[:H] + pp[:H] * c))
                    fg = 1 - i if coupled else f(cl(xw[2 * H:3 * H] + hr[2 * H:3 * H] + pp[2 * H:] * c))
                    c = fg * c + i * g(cl(xw[3 * H:] + hr[3 * H:]))
                    o = f(cl(xw[H:2 * H] + hr[H:2 * H] + pp[H:2 * H] * c))
                    h = o * hh(c)
                else:
                    hr = r[d] @ h + rb
                    z = f(cl(xw[:H] + hr[:H]))
                    rr = f(cl(xw[H:2 * H] + hr[H:2 * H]))
                    if lbr:
                        ht = g(cl(xw[2 * H:] + rr * hr[2 * H:]))
                    else:
                        ht = g(cl(xw[2 * H:] + r[d][2 * H:] @ (rr * h) + rb[2 * H:]))
                    h = (1 - z) * ht + z * h
                Y[t, d, n] = h
            Yh[d, n], Yc[d, n] = h, c
    if layout:
        Y = np.transpose(Y, (2, 0, 1, 3))
        Yh, Yc = np.swapaxes(Yh, 0, 1), np.swapaxes(Yc, 0, 1)
    return [Y, Yh, Yc] if op == "LSTM" else [Y, Yh]


def run_reference_model(model, feeds):
    """The reference on a model whose graph is RNN/GRU/LSTM nodes (plus torch's glue)."""
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    for nd in model.graph.node:
        ins = [env[i] if i else None for i in nd.input]
        a = attrs_of(nd)
        op = nd.op_type
        if op in ("RNN", "GRU", "LSTM"):
            outs = reference(op, ins, a)
        elif op == "Squeeze":
            axes = a.get("axes") if "axes" in a else [int(v) for v in ins[1]]
            outs = [np.squeeze(ins[0], axis=tuple(axes))]
        elif op == "Unsqueeze":
            axes = a.get("axes") if "axes" in a else [int(v) for v in ins[1]]
            outs = [np.expand_dims(ins[0], tuple(axes))]
        elif op == "Transpose":
            outs = [np.transpose(ins[0], a.get("perm"))]
        elif op == "Reshape":
            shape = [ins[0].shape[i] if v == 0 else int(v) for i, v in enumerate(ins[1])]
            outs = [ins[0].reshape(shape)]
        elif op == "Constant":
            outs = [numpy_helper.to_array(a["value"])]
        elif op == "Slice":
            sl = [slice(None)] * ins[0].ndim
            axes = ins[3] if len(ins) > 3 else range(len(ins[1]))
            for st, en, ax in zip(ins[1], ins[2], axes):
                sl[int(ax)] = slice(int(st), int(en))
            outs = [ins[0][tuple(sl)]]
        elif op == "Concat":
            outs = [np.concatenate(ins, axis=a["axis"])]
        elif op == "Identity":
            outs = [ins[0]]
        elif op == "Shape":
            outs = [np.array(ins[0].shape, np.int64)]
        elif op == "Gather":
            outs = [np.take(ins[0], ins[1], axis=a.get("axis", 0))]
        elif op == "Expand":
            shape = np.broadcast_shapes(ins[0].shape, tuple(int(v) for v in ins[1]))
            outs = [np.broadcast_to(ins[0], shape).copy()]
        elif op == "ConstantOfShape":
            v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
            outs = [np.full([int(d) for d in ins[0]], v.reshape(-1)[0], v.dtype)]
        elif op == "Cast":
            outs = [ins[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]])]
        else:
            raise NotImplementedError(op)
        for name, v in zip(nd.output, outs):
            if name:
                env[name] = v
    return [env[o.name] for o in model.graph.output]


def close(got, want, name):
    for g, w in zip(got, want):
        w = np.asarray(w)
        tol = 1e-12 if w.dtype == np.float64 else 2e-5
        err = float(np.max(np.abs(np.asarray(g, np.float64) - w))) if w.size else 0.0
        if g.shape != w.shape or err > tol * max(1.0, float(np.max(np.abs(w))) if w.size else 1.0):
            sys.exit("generate_rnn.py: %s: reference differs (shape %s vs %s, max err %g)"
                     % (name, g.shape, w.shape, err))



def onnx_cases():
    """ONNX's node tests for the three ops, checked against the reference."""
    out = []
    from onnx.backend.test.case.node import gru, lstm, rnn
    for case in onnx_node_cases((("LSTM", lstm.LSTM), ("GRU", gru.GRU), ("RNN", rnn.RNN))):
        if case.model.graph.node[0].op_type not in ("RNN", "GRU", "LSTM"):
            continue
        ins, outs = case.data_sets[0]
        feeds = {vi.name: v for vi, v in zip(case.model.graph.input, ins)}
        got = run_reference_model(case.model, feeds)
        close(got, outs, case.name)
        out.append(("onnx_" + case.name[len("test_"):], case.model, ins, outs))
    return out


class Wrap(nn.Module):
    def __init__(self, rnn, with_state):
        super().__init__()
        self.rnn = rnn
        self.with_state = with_state

    def forward(self, x, *state):
        if not self.with_state:
            y, hn = self.rnn(x)
        elif isinstance(self.rnn, nn.LSTM):
            y, hn = self.rnn(x, (state[0], state[1]))
        else:
            y, hn = self.rnn(x, state[0])
        return (y,) + (tuple(hn) if isinstance(hn, tuple) else (hn,))


def torch_case(name, ctor, T, N, I, H, layers, bidir, batch_first, with_state, dtype, opset, seed):
    torch.manual_seed(seed)
    rnn = ctor(I, H, num_layers=layers, bidirectional=bidir, batch_first=batch_first)
    m = Wrap(rnn, with_state).eval().to(dtype)
    D = (2 if bidir else 1) * layers
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(*((N, T, I) if batch_first else (T, N, I)), generator=gen, dtype=dtype)
    xs = [x]
    names = ["x"]
    if with_state:
        xs.append(torch.randn(D, N, H, generator=gen, dtype=dtype))
        names.append("h0")
        if ctor is nn.LSTM:
            xs.append(torch.randn(D, N, H, generator=gen, dtype=dtype))
            names.append("c0")
    onames = ["y", "hn"] + (["cn"] if ctor is nn.LSTM else [])
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, tuple(xs), buf, opset_version=opset, input_names=names,
                          output_names=onames, do_constant_folding=True)
    model = onnx.load_from_string(buf.getvalue())
    with torch.no_grad():
        outs = [o.numpy() for o in m(*xs)]
    ins = [v.numpy() for v in xs]
    got = run_reference_model(model, dict(zip(names, ins)))
    close(got, outs, name)
    return ("torch_" + name, model, ins, outs)


def torch_cases():
    f32, f64 = torch.float32, torch.float64
    return [
        torch_case("lstm", nn.LSTM, 7, 3, 5, 4, 1, False, False, False, f32, 14, 1),
        torch_case("lstm_bidir_2layer_state", nn.LSTM, 6, 2, 5, 4, 2, True, False, True, f32, 14, 2),
        torch_case("lstm_batch_first", nn.LSTM, 5, 3, 4, 6, 1, True, True, False, f32, 11, 3),
        torch_case("lstm_f64", nn.LSTM, 6, 2, 3, 5, 1, True, False, True, f64, 14, 4),
        torch_case("gru", nn.GRU, 7, 3, 5, 4, 1, False, False, False, f32, 14, 5),
        torch_case("gru_bidir_2layer_state", nn.GRU, 6, 2, 5, 4, 2, True, False, True, f32, 13, 6),
        torch_case("gru_f64", nn.GRU, 5, 2, 4, 3, 1, True, False, False, f64, 14, 7),
        torch_case("rnn_tanh", nn.RNN, 7, 3, 5, 4, 1, False, False, True, f32, 14, 8),
        torch_case("rnn_bidir_2layer", nn.RNN, 6, 2, 5, 4, 2, True, False, False, f32, 9, 9),
        torch_case("rnn_relu_f64", lambda *a, **k: nn.RNN(*a, nonlinearity="relu", **k),
                   5, 2, 4, 3, 1, False, False, False, f64, 14, 10),
    ]


def ref_case(name, op, T, N, I, H, attrs, inputs, dtype=np.float32, opset=14, seed=0):
    """A single-node model; `inputs`: which optional inputs to give (B, seq_lens, h0, c0, P);
    seq_lens values may be given as a list."""
    rng = np.random.default_rng(seed)
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    dirn = attrs.get("direction", "forward")
    D = 2 if dirn == "bidirectional" else 1
    layout = attrs.get("layout", 0)
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    vals = {
        "X": rng.standard_normal((N, T, I) if layout else (T, N, I)).astype(dtype),
        "W": (0.5 * rng.standard_normal((D, gates * H, I))).astype(dtype),
        "R": (0.5 * rng.standard_normal((D, gates * H, H))).astype(dtype),
        "B": (0.3 * rng.standard_normal((D, 2 * gates * H))).astype(dtype),
        "sequence_lens": np.array(inputs.get("sequence_lens", [T] * N), np.int32),
        "initial_h": rng.standard_normal((N, D, H) if layout else (D, N, H)).astype(dtype),
        "initial_c": rng.standard_normal((N, D, H) if layout else (D, N, H)).astype(dtype),
        "P": (0.5 * rng.standard_normal((D, 3 * H))).astype(dtype),
    }
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    if op != "LSTM":
        order = order[:6]
    given = [k for k in order if k in ("X", "W", "R") or k in inputs]
    last = max(order.index(k) for k in given)
    node_in = [k if k in given else "" for k in order[:last + 1]]
    n_out = 3 if op == "LSTM" else 2
    outs_names = ["Y", "Y_h", "Y_c"][:n_out]
    node = helper.make_node(op, node_in, outs_names, hidden_size=H, **attrs)
    in_vi = [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "sequence_lens" else elem,
                                           list(vals[k].shape)) for k in given]
    ref = reference(op, [vals[k] if k in given else None for k in order], attrs_of(node))
    out_vi = [helper.make_tensor_value_info(n, elem, list(v.shape)) for n, v in zip(outs_names, ref)]
    graph = helper.make_graph([node], name, in_vi, out_vi)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="tconv-generate-rnn")
    model.ir_version = 8 if opset >= 14 else 7
    return ("ref_" + name, model, [vals[k] for k in given], [v.astype(dtype) for v in ref])


def ref_cases():
    acts3 = ["HardSigmoid", "Softsign", "Elu", "LeakyRelu", "ScaledTanh", "Affine"]
    return [
        ref_case("lstm_layout1_seq_lens_peephole", "LSTM", 6, 3, 4, 5, {"layout": 1},
                 {"B": 1, "sequence_lens": [6, 2, 4], "initial_h": 1, "initial_c": 1, "P": 1}, seed=1),
        ref_case("lstm_bidir_seq_lens_clip", "LSTM", 5, 3, 3, 4,
                 {"direction": "bidirectional", "clip": 0.7},
                 {"B": 1, "sequence_lens": [5, 3, 1], "initial_h": 1}, seed=2),
        ref_case("lstm_reverse_input_forget", "LSTM", 5, 2, 3, 4,
                 {"direction": "reverse", "input_forget": 1}, {"B": 1, "P": 1}, seed=3),
        ref_case("lstm_bidir_activations", "LSTM", 4, 2, 3, 3,
                 {"direction": "bidirectional", "activations": acts3,
                  "activation_alpha": [0.3, 0.9, 0.05, 1.2, 0.8], "activation_beta": [0.4, 0.7, 0.1]},
                 {"B": 1}, seed=4),
        ref_case("lstm_bidir_f64_layout1", "LSTM", 5, 2, 3, 4,
                 {"direction": "bidirectional", "layout": 1},
                 {"B": 1, "initial_h": 1, "initial_c": 1, "P": 1}, dtype=np.float64, seed=5),
        ref_case("gru_lbr0_bidir_state", "GRU", 6, 2, 4, 5, {"direction": "bidirectional"},
                 {"B": 1, "initial_h": 1}, seed=6),
        ref_case("gru_lbr1_layout1_seq_lens", "GRU", 5, 3, 3, 4,
                 {"linear_before_reset": 1, "layout": 1}, {"B": 1, "sequence_lens": [5, 0, 3]}, seed=7),
        ref_case("gru_reverse_clip_activations", "GRU", 5, 2, 3, 4,
                 {"direction": "reverse", "clip": 0.5, "activations": ["HardSigmoid", "Softsign"]},
                 {"B": 1}, seed=8),
        ref_case("gru_f64_opset7", "GRU", 4, 2, 3, 3, {"linear_before_reset": 1}, {"B": 1, "initial_h": 1},
                 dtype=np.float64, opset=7, seed=9),
        ref_case("rnn_relu_bidir_seq_lens", "RNN", 6, 3, 4, 3,
                 {"direction": "bidirectional", "activations": ["Relu", "Tanh"]},
                 {"B": 1, "sequence_lens": [6, 1, 3], "initial_h": 1}, seed=10),
        ref_case("rnn_layout1_clip_f64", "RNN", 5, 2, 3, 4, {"layout": 1, "clip": 0.4},
                 {"B": 1, "initial_h": 1}, dtype=np.float64, seed=11),
        ref_case("rnn_no_bias_empty_batch", "RNN", 3, 0, 2, 3, {}, {}, seed=12),
    ]



def main():
    cases = onnx_cases() + torch_cases() + ref_cases()
    for d in os.listdir(HERE):
        if d.startswith(("onnx_", "torch_", "ref_")) and os.path.isdir(os.path.join(HERE, d)):
            if any(d.startswith(p) for p in ("onnx_lstm", "onnx_gru", "onnx_rnn", "onnx_simple_rnn",
                                                "torch_lstm", "torch_gru", "torch_rnn",
                                                "ref_lstm", "ref_gru", "ref_rnn")):
                shutil.rmtree(os.path.join(HERE, d))
    for name, model, ins, outs in cases:
        write_case_dir(HERE, name, model, ins, outs)
        print("%-40s %s" % (name, " ".join(sorted({n.op_type for n in model.graph.node}))))
    write_tsv(os.path.join(HERE, "rnn.tsv"), cases, ("RNN", "GRU", "LSTM"))
    print("wrote %d cases and rnn.tsv under %s" % (len(cases), HERE))


if __name__ == "__main__":
    main()

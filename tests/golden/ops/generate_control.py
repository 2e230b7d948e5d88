#!/usr/bin/python3
"""Golden test directories for Loop and Scan bodies under tests/golden/ops/.

Run:  /usr/bin/python3 tests/golden/ops/generate_control.py      (onnx 1.12, torch 1.13, numpy)

  onnx_<test>  ONNX's own node tests for Loop and Scan (onnx.backend.test.case.node; the 291-test
               subset tests/data/onnx-node-tests-subset.tsv has none): test_loop11, test_scan9_sum and test_scan_sum (Scan-8).
               Not written: test_loop13_seq and test_loop16_seq_none (sequence and optional
               values: tconv runs tensors only).
  ctl_<case>   small models built here with the expected outputs computed by hand in numpy
               next to each model (onnx 1.12 has no reference evaluator): trip count and
               condition, condition-only termination, zero trips, outer-scope captures, several
               loop-carried values and scan outputs, Loop-1 (opset 9); Scan with several states,
               scan_input_axes / directions, scan_output_axes (negative too) / directions, no
               state at all; Scan-8 with a batch, sequence_lens and a reversed input, and with
               rows of sequence length 0.
  torch_<case> loops written in TorchScript and exported by torch 1.13 (opset 13), golden from
               torch: an accumulation, and a tensor the loop grows by Concat (torch declares the
               first iteration's shape on the body input, which then changes).
Deterministic (fixed seeds).
"""
import io
import os
import shutil
import warnings

import op_cases  # noqa: F401  (first: pins the BLAS, patches numpy for onnx)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from op_cases import onnx_cases as onnx_node_cases, write_dir as write_case_dir, write_tsv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL



def onnx_cases():
    from onnx.backend.test.case.node import loop, scan
    keep = {"test_loop11", "test_scan9_sum", "test_scan_sum"}
    out = []
    for c in onnx_node_cases((("Loop", loop.Loop), ("Scan", scan.Scan))):
        if c.name in keep:
            ins, outs = c.data_sets[0]
            out.append(("onnx_" + c.name[len("test_"):], c.model, ins, outs))
    assert len(out) == len(keep), [c[0] for c in out]
    return out


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, name, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="tconv-generate-control")
    m.ir_version = 7 if opset <= 13 else 8
    return m


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr)))


def loop_trip_and_cond(rng):
    """M = 4, cond true; carried x [2,3] and a counter; x <- x * w (outer scope) + b (body
    Constant); scan outputs: x after each step, and the iteration number (int64)."""
    w = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Mul", ["x_in", "w"], ["xw"]), const("b", b),
         helper.make_node("Add", ["xw", "b"], ["x_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["x_out"], ["scan_x"]),
         helper.make_node("Identity", ["i"], ["scan_i"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", F, [2, 3])],
        [vi("cond_out", B, []), vi("x_out", F, [2, 3]), vi("scan_x", F, [2, 3]), vi("scan_i", I64, [])])
    node = helper.make_node("Loop", ["M", "cond", "x0"], ["x_final", "xs", "iters"], body=body)
    m = model_of([node], "loop_trip_and_cond",
                 [vi("M", I64, []), vi("cond", B, []), vi("x0", F, [2, 3])],
                 [vi("x_final", F, [2, 3]), vi("xs", F, [4, 2, 3]), vi("iters", I64, [4])], 13,
                 [numpy_helper.from_array(w, "w")])
    x0 = rng.standard_normal((2, 3)).astype(np.float32)
    x, xs = x0.astype(np.float64), []
    for _ in range(4):
        x = x * w + b
        xs.append(x)
    return ("ctl_loop_trip_and_cond", m, [np.array(4, np.int64), np.array(True), x0],
            [x.astype(np.float32), np.stack(xs).astype(np.float32), np.arange(4, dtype=np.int64)])


def loop_cond_only(rng):
    """M omitted; the body's condition is 3 - i != 0 (Sub, Cast to bool): iterations 0..3 run,
    the one with i = 3 returns false. Carried acc [3] += step; scan output acc."""
    step = rng.standard_normal(3).astype(np.float32)
    body = helper.make_graph(
        [const("three", np.array(3, np.int64)), helper.make_node("Sub", ["three", "i"], ["left"]),
         helper.make_node("Cast", ["left"], ["cond_out"], to=B),
         helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_acc"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [3])],
        [vi("cond_out", B, []), vi("acc_out", F, [3]), vi("scan_acc", F, [3])])
    node = helper.make_node("Loop", ["", "cond", "acc0"], ["acc", "accs"], body=body)
    m = model_of([node], "loop_cond_only", [vi("cond", B, []), vi("acc0", F, [3])],
                 [vi("acc", F, [3]), vi("accs", F, [4, 3])], 11,
                 [numpy_helper.from_array(step, "step")])
    acc0 = rng.standard_normal(3).astype(np.float32)
    accs = [acc0.astype(np.float64) + step * (k + 1) for k in range(4)]
    return ("ctl_loop_cond_only", m, [np.array(True), acc0],
            [accs[-1].astype(np.float32), np.stack(accs).astype(np.float32)])


def loop_zero_trips(rng):
    """M = 0: the body never runs; the outputs are the initial loop-carried values."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["a_in", "a_in"], ["a_out"]),
         helper.make_node("Mul", ["b_in", "b_in"], ["b_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("a_in", F, [2]), vi("b_in", F, [2, 2])],
        [vi("cond_out", B, []), vi("a_out", F, [2]), vi("b_out", F, [2, 2])])
    node = helper.make_node("Loop", ["M", "", "a0", "b0"], ["a", "b"], body=body)
    m = model_of([node], "loop_zero_trips",
                 [vi("M", I64, []), vi("a0", F, [2]), vi("b0", F, [2, 2])],
                 [vi("a", F, [2]), vi("b", F, [2, 2])], 16)
    a0 = rng.standard_normal(2).astype(np.float32)
    b0 = rng.standard_normal((2, 2)).astype(np.float32)
    return ("ctl_loop_zero_trips", m, [np.array(0, np.int64), a0, b0], [a0, b0])


def loop_opset9_two_carried(rng):
    """Loop-1 (opset 9): M = 3 and cond; two carried values (a <- a + b, b <- b * 0.5) and a
    graph output computed after the loop from its results."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["a_in", "b_in"], ["a_out"]),
         const("half", np.array(0.5, np.float32)),
         helper.make_node("Mul", ["b_in", "half"], ["b_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("a_in", F, [4]), vi("b_in", F, [4])],
        [vi("cond_out", B, []), vi("a_out", F, [4]), vi("b_out", F, [4])])
    nodes = [helper.make_node("Loop", ["M", "cond", "a0", "b0"], ["a", "b"], body=body),
             helper.make_node("Sub", ["a", "b"], ["diff"])]
    m = model_of(nodes, "loop_opset9", [vi("M", I64, []), vi("cond", B, []), vi("a0", F, [4]),
                                        vi("b0", F, [4])],
                 [vi("a", F, [4]), vi("diff", F, [4])], 9)
    a0 = rng.standard_normal(4).astype(np.float32)
    b0 = rng.standard_normal(4).astype(np.float32)
    a, b = a0.astype(np.float64), b0.astype(np.float64)
    for _ in range(3):
        a, b = a + b, b * 0.5
    return ("ctl_loop_opset9_two_carried", m, [np.array(3, np.int64), np.array(True), a0, b0],
            [a.astype(np.float32), (a - b).astype(np.float32)])


def scan_axes_directions(rng):
    """Scan-11: one state s [2]; scan inputs x1 [3,5] along axis 1 (forward) and x2 [5,2] along
    axis 0 backwards; s <- s + x2_t; outputs y1 = x1_t * s_new[0:1]... kept elementwise:
    y1 = x1_t * 2 stacked along axis 1 in reverse order, y2 = s_new stacked along axis -1."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x2_t"], ["s_out"]),
         const("two", np.array(2.0, np.float32)),
         helper.make_node("Mul", ["x1_t", "two"], ["y1_t"]),
         helper.make_node("Identity", ["s_out"], ["y2_t"])],
        "body", [vi("s_in", F, [2]), vi("x1_t", F, [3]), vi("x2_t", F, [2])],
        [vi("s_out", F, [2]), vi("y1_t", F, [3]), vi("y2_t", F, [2])])
    node = helper.make_node("Scan", ["s0", "x1", "x2"], ["s", "y1", "y2"], body=body,
                            num_scan_inputs=2, scan_input_axes=[1, 0], scan_input_directions=[0, 1],
                            scan_output_axes=[1, -1], scan_output_directions=[1, 0])
    m = model_of([node], "scan_axes_directions",
                 [vi("s0", F, [2]), vi("x1", F, [3, 5]), vi("x2", F, [5, 2])],
                 [vi("s", F, [2]), vi("y1", F, [3, 5]), vi("y2", F, [2, 5])], 11)
    s0 = rng.standard_normal(2).astype(np.float32)
    x1 = rng.standard_normal((3, 5)).astype(np.float32)
    x2 = rng.standard_normal((5, 2)).astype(np.float32)
    s, y1, y2 = s0.astype(np.float64), [], []
    for t in range(5):
        s = s + x2[4 - t]
        y1.append(x1[:, t] * 2.0)
        y2.append(s)
    y1 = np.stack(y1[::-1], axis=1)
    y2 = np.stack(y2, axis=-1)
    return ("ctl_scan_axes_directions", m, [s0, x1, x2],
            [s.astype(np.float32), y1.astype(np.float32), y2.astype(np.float32)])


def scan_two_states_negative_axis(rng):
    """Scan-16: two states (running sum and running product of slices), one scan input
    x [2,3,4] along axis -1, a body that reads an outer-scope initializer, output stacked
    along axis 0."""
    scale = rng.standard_normal((2, 3)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "x_t"], ["sum_out"]),
         helper.make_node("Mul", ["prod_in", "x_t"], ["prod_out"]),
         helper.make_node("Mul", ["x_t", "scale"], ["y_t"])],
        "body", [vi("sum_in", F, [2, 3]), vi("prod_in", F, [2, 3]), vi("x_t", F, [2, 3])],
        [vi("sum_out", F, [2, 3]), vi("prod_out", F, [2, 3]), vi("y_t", F, [2, 3])])
    node = helper.make_node("Scan", ["sum0", "prod0", "x"], ["sum", "prod", "y"], body=body,
                            num_scan_inputs=1, scan_input_axes=[-1])
    m = model_of([node], "scan_two_states", [vi("sum0", F, [2, 3]), vi("prod0", F, [2, 3]),
                                             vi("x", F, [2, 3, 4])],
                 [vi("sum", F, [2, 3]), vi("prod", F, [2, 3]), vi("y", F, [4, 2, 3])], 16,
                 [numpy_helper.from_array(scale, "scale")])
    sum0 = rng.standard_normal((2, 3)).astype(np.float32)
    prod0 = rng.standard_normal((2, 3)).astype(np.float32)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    sm, pr = sum0.astype(np.float64), prod0.astype(np.float64)
    for t in range(4):
        sm, pr = sm + x[..., t], pr * x[..., t]
    y = np.stack([x[..., t] * scale for t in range(4)])
    return ("ctl_scan_two_states_negative_axis", m, [sum0, prod0, x],
            [sm.astype(np.float32), pr.astype(np.float32), y.astype(np.float32)])


def scan_no_state(rng):
    """Scan-9 with no state variable: y_t = Relu(x_t), x [4,3] scanned along axis 0 backwards,
    stacked forwards (so y is x reversed along axis 0, rectified)."""
    body = helper.make_graph([helper.make_node("Relu", ["x_t"], ["y_t"])], "body",
                             [vi("x_t", F, [3])], [vi("y_t", F, [3])])
    node = helper.make_node("Scan", ["x"], ["y"], body=body, num_scan_inputs=1,
                            scan_input_directions=[1])
    m = model_of([node], "scan_no_state", [vi("x", F, [4, 3])], [vi("y", F, [4, 3])], 9)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    return ("ctl_scan_no_state", m, [x], [np.maximum(x[::-1], 0).astype(np.float32)])



def scan8_batch_seq_lens(rng):
    """Scan-8 (opset 8): batch 3, sequence_lens [4, 2, 1]; state s [B,2] <- s + x_t, x [B,4,2]
    scanned backwards (directions [1]); scan output y_t = s_new * 2, [B,4,2] with zeros past each
    row's length (onnxruntime refuses length 0, so none here)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         const("two", np.array(2.0, np.float32)),
         helper.make_node("Mul", ["s_out", "two"], ["y_t"])],
        "body", [vi("s_in", F, [2]), vi("x_t", F, [2])], [vi("s_out", F, [2]), vi("y_t", F, [2])])
    node = helper.make_node("Scan", ["lens", "s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                            directions=[1])
    m = model_of([node], "scan8", [vi("lens", I64, [3]), vi("s0", F, [3, 2]), vi("x", F, [3, 4, 2])],
                 [vi("s", F, [3, 2]), vi("y", F, [3, 4, 2])], 8)
    lens = np.array([4, 2, 1], np.int64)
    s0 = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    s, y = s0.astype(np.float64).copy(), np.zeros((3, 4, 2))
    for b in range(3):
        for step in range(lens[b]):
            s[b] = s[b] + x[b, lens[b] - 1 - step]
            y[b, step] = s[b] * 2
    return ("ctl_scan8_batch_seq_lens", m, [lens, s0, x], [s.astype(np.float32), y.astype(np.float32)])


class TorchLoopAccumulate(torch.nn.Module):
    def forward(self, x, n: int):
        acc = torch.zeros_like(x)
        for i in range(n):
            acc = acc * 0.5 + x * i
        return acc


class TorchLoopConcat(torch.nn.Module):
    def forward(self, x, n: int):
        acc = x
        for i in range(n):
            acc = torch.cat([acc, torch.relu(acc[-1:] * 0.5 + i)], 0)
        return acc


def torch_loop(name, module, seed):
    torch.manual_seed(seed)
    m = torch.jit.script(module)
    x = torch.randn(2, 3)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (x, 4), buf, opset_version=13, input_names=["x", "n"],
                          output_names=["y"])
    model = onnx.load_from_string(buf.getvalue())
    assert any(nd.op_type == "Loop" for nd in model.graph.node), name
    with torch.no_grad():
        y = m(x, 4).numpy()
    return ("torch_" + name, model, [x.numpy(), np.array(4, np.int64)], [y])


def scan8_zero_lengths(rng):
    """Scan-8 rows of sequence length 0 (onnxruntime refuses them; tconv keeps the row's initial
    state and zero scan outputs): batch 2, sequence_lens [3, 0]; then a batch whose rows all
    have length 0 (scan output [B, T, 2] of zeros, its shape from the body's declaration)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        "body", [vi("s_in", F, [2]), vi("x_t", F, [2])], [vi("s_out", F, [2]), vi("y_t", F, [2])])
    node = helper.make_node("Scan", ["lens", "s0", "x"], ["s", "y"], body=body, num_scan_inputs=1)
    out = []
    for name, lens in (("ctl_scan8_zero_length_row", [3, 0]), ("ctl_scan8_all_zero_lengths", [0, 0])):
        m = model_of([node], name, [vi("lens", I64, [2]), vi("s0", F, [2, 2]), vi("x", F, [2, 3, 2])],
                     [vi("s", F, [2, 2]), vi("y", F, [2, 3, 2])], 8)
        s0 = rng.standard_normal((2, 2)).astype(np.float32)
        x = rng.standard_normal((2, 3, 2)).astype(np.float32)
        s, y = s0.astype(np.float64).copy(), np.zeros((2, 3, 2))
        for b in range(2):
            for t in range(lens[b]):
                s[b] = s[b] + x[b, t]
                y[b, t] = s[b]
        out.append((name, m, [np.array(lens, np.int64), s0, x], [s.astype(np.float32), y.astype(np.float32)]))
    return out


def main():
    rng = np.random.default_rng(1414)
    cases = onnx_cases() + [f(rng) for f in (loop_trip_and_cond, loop_cond_only, loop_zero_trips,
                                             loop_opset9_two_carried, scan_axes_directions,
                                             scan_two_states_negative_axis, scan_no_state,
                                             scan8_batch_seq_lens)]
    cases += scan8_zero_lengths(rng)
    cases += [torch_loop("loop_accumulate", TorchLoopAccumulate(), 1),
              torch_loop("loop_concat_grows", TorchLoopConcat(), 2)]
    for d in os.listdir(HERE):
        if d.startswith(("ctl_", "onnx_loop", "onnx_scan", "torch_loop")):
            shutil.rmtree(os.path.join(HERE, d))
    for name, model, ins, outs in cases:
        write_case_dir(HERE, name, model, ins, outs)
        print(name)
    write_tsv(os.path.join(HERE, "control.tsv"), cases, ("Loop", "Scan"))
    print("wrote %d cases and control.tsv under %s" % (len(cases), HERE))


if __name__ == "__main__":
    main()

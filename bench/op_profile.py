#!/usr/bin/python3
"""Where a model's time goes, beside onnxruntime: the per-node traces of tconv (tconv-run
--profile) and of onnxruntime 1.30 (bench/ort_bench.js --profile, its enableProfiling trace) of
the same test directory, at each thread count, summed per op type (issue 23: "measure per node
with the profiler at each thread count, next to onnxruntime's per-op profile").

  op_profile.py --build BUILD_DIR [--runs N] [--threads 1,2] [--top K] [--peak GFLOPS] CASE_DIR...

Each model runs N times (default 40) on test_data_set_0's inputs, one process per side and
thread count. A node's figure is its minimum over the runs in microseconds (the least disturbed
run: the machine may be busy), a node fused into another's kernel counted in that kernel; the
median whole run is printed beside the sums (profiling adds a little per node on both sides).
onnxruntime's names differ after its own fusions (a Conv fused with its Relu is named after the
Relu, its NCHWc layout changes appear as ReorderInput/ReorderOutput), so the per-op table is the
comparison; --top K also lists tconv's K slowest nodes with onnxruntime's time for the node of
the same name where there is one. The Conv and ConvTranspose steps' GFLOP/s: their FLOPs from the
shapes in tconv's trace (2 x output positions x input channels per group x taps, per output
channel; ConvTranspose the other way round), over each side's Conv-kind time (onnxruntime's
Conv, FusedConv and ConvTranspose nodes); --peak gives the core's peak to compare with
(bench_conv_shapes prints the measured one as "fma_peak"). Markdown on stdout. Needs TCONV_ORT_NODE_MODULES (bench/run.sh
sets it; scripts/ort/install.sh prints it).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import target_profile  # noqa: E402  (the trace readers and runners)


def profile_case(build, case, runs, threads):
    name = os.path.basename(os.path.normpath(case))
    out = os.path.join(build, "op-profiles")
    os.makedirs(out, exist_ok=True)
    model, data_set = os.path.join(case, "model.onnx"), os.path.join(case, "test_data_set_0")
    trace = os.path.join(out, "%s_t%d_tconv.json" % (name, threads))
    tconv = target_profile.profile_tconv(build, model, data_set, runs, threads, trace)
    ort = target_profile.profile_ort(model, data_set, runs, threads,
                                     os.path.join(out, "%s_t%d_ort" % (name, threads)))
    return name, tconv, ort, conv_flops(trace)


CONV_OPS = ("Conv", "FusedConv", "ConvTranspose")


def product(values):
    out = 1
    for v in values:
        out *= v
    return out


def conv_flops(trace_path):
    """{node: FLOPs} of the Conv and ConvTranspose nodes of a tconv trace (X, W and Y shapes)."""
    with open(trace_path) as f:
        events = json.load(f)
    flops = {}
    for e in events:
        args = e.get("args") or {}
        op, ins, outs = args.get("op_name"), args.get("input_type_shape"), \
            args.get("output_type_shape")
        if e.get("cat") != "Node" or op not in ("Conv", "ConvTranspose") or not ins or not outs:
            continue
        x, w = list(ins[0].values())[0], list(ins[1].values())[0]
        y = list(outs[0].values())[0]
        if op == "Conv":  # W: c_out x c_in/group x taps; per output element c_in/group x taps
            flops[args["node_name"]] = 2 * product(y) * product(w[1:])
        else:  # W: c_in x c_out/group x taps; per input element c_out/group x taps
            flops[args["node_name"]] = 2 * product(x) * product(w[1:])
    return flops


def report_peak(t_nodes, o_nodes, flops, peak):
    total = sum(flops.values())
    t_us = sum(us for n, (op, us, _) in t_nodes.items() if n in flops)
    o_us = sum(us for op, us, _ in o_nodes.values() if op.split("+")[0] in CONV_OPS)
    if total == 0 or t_us == 0:
        return
    line = "Conv and ConvTranspose steps: %.1f MFLOP; tconv %.1f us, %.1f GFLOP/s" % (
        total * 1e-6, t_us, total / t_us * 1e-3)
    if peak:
        line += " (%.0f%% of %.1f)" % (100.0 * total / t_us * 1e-3 / peak, peak)
    if o_us:
        line += "; onnxruntime %.1f us, %.1f GFLOP/s" % (o_us, total / o_us * 1e-3)
        if peak:
            line += " (%.0f%%)" % (100.0 * total / o_us * 1e-3 / peak)
    print(line + "\n")


def report(name, threads, tconv, ort, top):
    (t_nodes, t_run), (o_nodes, o_run) = tconv, ort
    t_ops, o_ops = target_profile.by_op(t_nodes), target_profile.by_op(o_nodes)
    t_sum, o_sum = sum(t_ops.values()), sum(o_ops.values())
    print("#### %s, %d thread%s: nodes' minima %.1f us tconv, %.1f us onnxruntime; median run "
          "%.1f us and %.1f us\n" % (name, threads, "s" if threads > 1 else "", t_sum, o_sum,
                                     t_run, o_run))
    print("| op | tconv us | onnxruntime us | onnxruntime - tconv |")
    print("|---|---|---|---|")
    for op in sorted(set(t_ops) | set(o_ops), key=lambda k: -max(t_ops[k], o_ops[k])):
        if t_ops[op] < 0.5 and o_ops[op] < 0.5:
            continue
        print("| %s | %.1f | %.1f | %+.1f |" % (op, t_ops[op], o_ops[op], o_ops[op] - t_ops[op]))
    print()
    if top > 0:
        print("| tconv's slowest nodes | op (fused) | output | tconv us | onnxruntime us |")
        print("|---|---|---|---|---|")
        rows = sorted(t_nodes.items(), key=lambda kv: -kv[1][1])[:top]
        for node, (op, us, shapes) in rows:
            other = o_nodes.get(node)
            print("| %s | %s | %s | %.1f | %s |" % (node, op, shapes, us,
                                                   "%.1f" % other[1] if other else "-"))
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--peak", type=float, default=0.0)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    if not os.environ.get("TCONV_ORT_NODE_MODULES"):
        sys.exit("op_profile.py: set TCONV_ORT_NODE_MODULES (scripts/ort/install.sh prints it)")
    for case in args.cases:
        for threads in [int(t) for t in args.threads.split(",")]:
            name, tconv, ort, flops = profile_case(args.build, case, args.runs, threads)
            report(name, threads, tconv, ort, args.top)
            report_peak(tconv[0], ort[0], flops, args.peak)


if __name__ == "__main__":
    main()

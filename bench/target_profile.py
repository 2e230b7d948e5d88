#!/usr/bin/python3
"""Where a backend target's output loses time against the original: per-node traces of both
models in tconv's runtime (tconv-run --profile) and in onnxruntime (bench/ort_bench.js
--profile, onnxruntime's own enableProfiling trace), summed per op type and per rewritten
ConvTranspose (the nodes a lowering emits are named after the node they replace). Used for
the analysis in bench/README.md ("Backend targets").

  target_profile.py --build BUILD_DIR --target NAME [--runs N] [--threads T] [--no-ort] CASE_DIR

CASE_DIR is an ONNX test directory (model.onnx, test_data_set_0). Each model runs N times
(default 30) on test_data_set_0's inputs; a node's figure is the minimum over the runs of its
time in microseconds (a node folded into another's kernel, `fused_into`, is counted in that
kernel), and the median whole run is printed beside the sums. The traces are written to
BUILD_DIR/target-profiles/. Needs TCONV_ORT_NODE_MODULES for the onnxruntime side (bench/run.sh
sets it; scripts/ort/install.sh prints it).
"""
import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def node_times(trace_path):
    """({node name: (op, min us, output shapes)}, median us of a whole run) over every run of
    the trace. A node's figure is its minimum over the runs: on a machine other processes keep
    busy, a node's time swings by 2x from run to run, and the minimum is the run least
    disturbed (the median is printed for the whole run)."""
    with open(trace_path) as f:
        events = json.load(f)
    durs, ops, shapes, runs = collections.defaultdict(list), {}, {}, []
    for e in events:
        args = e.get("args") or {}
        if e.get("name") == "model_run":
            runs.append(float(e["dur"]))
        if e.get("cat") != "Node" or "fused_into" in args:
            continue
        name = args.get("node_name") or e["name"].replace("_kernel_time", "")
        durs[name].append(float(e["dur"]))
        ops[name] = args.get("op_name", "?") + ("+" + "+".join(args["fused_ops"])
                                                if args.get("fused_ops") else "")
        shapes[name] = args.get("output_type_shape")
    return ({n: (ops[n], min(d), shapes[n]) for n, d in durs.items()},
            statistics.median(runs) if runs else float("nan"))


def golden_is_half(data_set):
    """Whether the data set's first golden output is float16 or bfloat16: those are checked
    with bench_common.c's tolerances for half types, since a float16 model's output differs
    from its golden by float16's rounding."""
    import onnx
    path = os.path.join(data_set, "output_0.pb")
    if not os.path.exists(path):
        return False
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor.data_type in (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)


def profile_tconv(build, model, data_set, runs, threads, out):
    """Runs `model` `runs` times in tconv-run (one test directory of `runs` copies of the data
    set) and returns its trace's node medians."""
    work = out + ".dir"
    os.makedirs(work, exist_ok=True)
    link = os.path.join(work, "model.onnx")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(model), link)
    for i in range(runs):
        ds = os.path.join(work, "test_data_set_%d" % i)
        if not os.path.lexists(ds):
            os.symlink(os.path.abspath(data_set), ds)
    rtol, atol = ("1e-2", "8e-3") if golden_is_half(data_set) else ("1e-3", "1e-4")
    subprocess.run([os.path.join(build, "tconv-run"), work, "--threads", str(threads),
                    "--rtol", rtol, "--atol", atol, "--profile", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return node_times(out)


def profile_ort(model, data_set, runs, threads, prefix):
    for old in glob.glob(prefix + "_*.json"):
        os.remove(old)
    subprocess.run(["node", os.path.join(ROOT, "bench", "ort_bench.js"), "--model", model,
                    "--data-set", data_set, "--case", "profile", "--threads", str(threads),
                    "--runs", str(runs), "--budget", "2", "--profile", prefix],
                   check=True, stdout=subprocess.DEVNULL)
    traces = sorted(glob.glob(prefix + "_*.json"))
    return node_times(traces[-1])


def by_op(nodes):
    sums = collections.Counter()
    for op, us, _ in nodes.values():
        sums[op.split("+")[0]] += us
    return sums


def origin_of(name, originals):
    """The rewritten ConvTranspose a converted node comes from (its name's prefix), or None."""
    best = None
    for o in originals:
        if name == o or name.startswith(o + "/") or name.startswith(o + "_"):
            if best is None or len(o) > len(best):
                best = o
    return best


def report(title, orig_times, conv_times, rewritten):
    (orig, run_o), (conv, run_c) = orig_times, conv_times
    total_o = sum(us for _, us, _ in orig.values())
    total_c = sum(us for _, us, _ in conv.values())
    print("#### %s: sum of the nodes' minima %.1f us original, %.1f us converted (%.2fx); "
          "median run %.1f us and %.1f us (%.2fx)\n" %
          (title, total_o, total_c, total_c / total_o if total_o else float("nan"), run_o, run_c,
           run_c / run_o if run_o else float("nan")))
    ops_o, ops_c = by_op(orig), by_op(conv)
    print("| op | original us | converted us | difference us |")
    print("|---|---|---|---|")
    for op in sorted(set(ops_o) | set(ops_c), key=lambda k: -(ops_c[k] - ops_o[k])):
        if abs(ops_c[op] - ops_o[op]) < 0.5 and ops_c[op] < 1:
            continue
        print("| %s | %.1f | %.1f | %+.1f |" % (op, ops_o[op], ops_c[op], ops_c[op] - ops_o[op]))
    print()
    groups = collections.defaultdict(list)
    for name, (op, us, shape) in conv.items():
        o = origin_of(name, rewritten)
        if o:
            groups[o].append((us, op, name, shape))
    if groups:
        print("| rewritten ConvTranspose | original node us | its replacement us | replacement "
              "nodes by op (us) |")
        print("|---|---|---|---|")
        for o in rewritten:
            if o not in groups:
                continue
            parts = sorted(groups[o], reverse=True)
            orig_us = orig[o][1] if o in orig else float("nan")
            print("| %s (%s) | %.1f | %.1f | %s |" %
                  (o, orig[o][0] if o in orig else "?", orig_us, sum(p[0] for p in parts),
                   summarize_parts(parts)))
        print()


def summarize_parts(parts):
    """The replacement nodes by op, largest first: "Conv 4x 88.1 (max 25.3), Slice 12.0"."""
    per_op = collections.defaultdict(list)
    for us, op, _, _ in parts:
        per_op[op].append(us)
    items = sorted(per_op.items(), key=lambda kv: -sum(kv[1]))
    return ", ".join("%s %.1f" % (op, v[0]) if len(v) == 1 else
                     "%s %dx %.1f (max %.1f)" % (op, len(v), sum(v), max(v)) for op, v in items)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("case")
    a = ap.parse_args()
    case = a.case.rstrip("/")
    name = os.path.basename(case)
    out = os.path.join(a.build, "target-profiles", a.target, name)
    os.makedirs(out, exist_ok=True)
    converted = os.path.join(out, "model.onnx")
    report_json = os.path.join(out, "rewrite-report.json")
    subprocess.run([os.path.join(a.build, "tconv-import"), os.path.join(case, "model.onnx"),
                    "--target", a.target, "-o", converted, "--report", report_json, "--quiet"],
                   check=True)
    with open(report_json) as f:
        rewritten = [r["node"] for r in json.load(f).get("rewritten", [])]
    data_set = os.path.join(case, "test_data_set_0")
    print("### %s for `%s` (%d rewritten ConvTranspose, %d runs, %d thread(s))\n" %
          (name, a.target, len(rewritten), a.runs, a.threads))
    orig = profile_tconv(a.build, os.path.join(case, "model.onnx"), data_set, a.runs,
                         a.threads, os.path.join(out, "tconv-original.json"))
    conv = profile_tconv(a.build, converted, data_set, a.runs, a.threads,
                         os.path.join(out, "tconv-converted.json"))
    report("tconv", orig, conv, rewritten)
    if a.no_ort or not os.environ.get("TCONV_ORT_NODE_MODULES"):
        return
    try:
        orig = profile_ort(os.path.join(case, "model.onnx"), data_set, a.runs, a.threads,
                           os.path.join(out, "ort-original"))
    except subprocess.CalledProcessError:
        print("(onnxruntime refuses or gets the original wrong: no onnxruntime profile)\n")
        return
    conv = profile_ort(converted, data_set, a.runs, a.threads, os.path.join(out, "ort-converted"))
    report("onnxruntime (node names as its optimizer left them)", orig, conv, rewritten)


if __name__ == "__main__":
    sys.exit(main())

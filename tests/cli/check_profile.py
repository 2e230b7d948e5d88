"""cli.run_profile_*: runs `tconv-run MODEL --profile OUT.json [ARGS...]` and validates the trace.

    check_profile.py TCONV_RUN MODEL|DIR OUT.json RUNS [--import TCONV_IMPORT] [ARGS...]

With --import, MODEL is first converted by tconv-import (so that its rewrite's Slice, Pad and
Add are fused into the ConvTranspose kernel) and the conversion is profiled. A DIR is an ONNX
test directory: RUNS is its number of data sets.

The trace must be onnxruntime's profile layout (a JSON array of complete "X" events with
numeric ts/dur in microseconds, pid, tid, cat, name, args), hold one "model_run" session event
per run, and per run one Node event for every node of the model's main graph, with dur >= 0, a
thread count >= 1, shapes, and fused ops that name real events. stderr must hold the summary.
Exit 0 when all hold, else 1 naming what failed."""
import json
import os
import subprocess
import sys

import onnx


def fail(message):
    print("check_profile: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    tconv_run, model_path, out, runs = sys.argv[1:5]
    runs = int(runs)
    extra = sys.argv[5:]
    target = model_path
    if os.path.isdir(model_path):
        model_path = os.path.join(model_path, "model.onnx")
    if extra[:1] == ["--import"]:
        target = model_path = out + ".onnx"
        conv = subprocess.run([extra[1], sys.argv[2], "-o", model_path, "--quiet"],
                              capture_output=True, text=True)
        if conv.returncode != 0:
            fail("tconv-import: exit %d: %s" % (conv.returncode, conv.stderr))
        extra = extra[2:]
    cmd = [tconv_run, target, "--profile", out] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        fail("%s: exit %d: %s" % (" ".join(cmd), proc.returncode, proc.stderr))
    if "profile: top" not in proc.stderr or "wrote the profile " + out not in proc.stderr:
        fail("no summary on stderr: " + proc.stderr)
    with open(out, encoding="utf-8") as f:
        events = json.load(f)
    if not isinstance(events, list) or not events:
        fail("the trace is not a non-empty JSON array")
    for e in events:
        for key, kind in (("cat", str), ("name", str), ("ph", str), ("pid", int), ("tid", int),
                          ("args", dict)):
            if not isinstance(e.get(key), kind):
                fail("event without %s (%s): %r" % (key, kind.__name__, e))
        for key in ("ts", "dur"):
            if not isinstance(e.get(key), (int, float)) or e[key] < 0:
                fail("event with a bad %s: %r" % (key, e))
        if e["ph"] != "X":
            fail("not a complete event: %r" % e)
    sessions = [e for e in events if e["cat"] == "Session"]
    nodes = [e for e in events if e["cat"] == "Node"]
    if len(sessions) != runs or any(e["name"] != "model_run" for e in sessions):
        fail("%d model_run events, expected %d" % (len(sessions), runs))
    names = {}
    for e in nodes:
        a = e["args"]
        if e["name"] != a["node_name"] + "_kernel_time":
            fail("event name %r is not node_name + _kernel_time" % e["name"])
        if not isinstance(a.get("thread_count"), int) or a["thread_count"] < 1:
            fail("bad thread_count: %r" % e)
        for key in ("input_type_shape", "output_type_shape"):
            if not isinstance(a.get(key), list) or not all(isinstance(s, dict) for s in a[key]):
                fail("bad %s: %r" % (key, e))
        if not a["output_type_shape"] or not a["output_type_shape"][0]:
            fail("no output shape: %r" % e)
        names.setdefault(a["node_name"], []).append(e)
    model = onnx.load(model_path, load_external_data=False)
    for i, node in enumerate(model.graph.node):
        name = node.name or "%s_%d" % (node.op_type, i)
        got = names.get(node.name, [])
        if len(got) != runs:
            fail("node %r (%s): %d events, expected %d" % (name, node.op_type, len(got), runs))
        if any(e["args"]["op_name"] != node.op_type for e in got):
            fail("node %r: op_name is not %s" % (name, node.op_type))
    fused = 0
    for e in nodes:
        into = e["args"].get("fused_into")
        if into is None:
            continue
        fused += 1
        host = [h for h in names.get(into, []) if e["args"]["op_name"] in
                h["args"].get("fused_ops", [])]
        if not host:
            fail("%r says it was fused into %r, whose events do not list it" % (e["name"], into))
    print("check_profile: %d events, %d runs, %d nodes of which %d fused events: ok"
          % (len(events), runs, len(model.graph.node), fused))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The cost of each backend target's output (issue 21, "Cost"): every test directory given
(bench/run.sh --targets passes models/*/ and bench/gen_layers.py's workloads) is converted with
`tconv-import --target NAME` for every built-in target, then the original and each converted
model are timed in tconv's runtime (bench_models --case) and in onnxruntime 1.30
(bench/ort_bench.js), in alternating rounds. One JSON object a line on stdout; bench/report.py
turns them into the tables of bench/README.md.

  bench_targets.py --build BUILD_DIR [--rounds N] [--threads T] [--runs N]
                   [--targets NAME,NAME...] CASE_DIR...

CASE_DIR is an ONNX test directory (model.onnx, test_data_set_0). Needs
TCONV_ORT_NODE_MODULES (bench/run.sh sets it) for the onnxruntime side; without it only
tconv's side is timed.

Method:
- Conversion: `tconv-import CASE/model.onnx --target NAME -o BUILD/targets/NAME/CASE/model.onnx`
  (its summary, "rewrote N" and the op counts before -> after, is recorded). A refusal (exit 2)
  is recorded with tconv-import's message; a conversion that rewrote nothing ("unchanged") is
  recorded and not timed: it is the original model.
- Converted files with the same bytes (tensorrt, coreml and qnn often emit the same model) are
  timed once a round and the figure is given to each target that produced them.
- Every figure is a process of its own, which first checks the model it times against the
  golden outputs of CASE/test_data_set_0 (a mismatch is recorded as a "mismatch" row, with
  the message, and that model is not timed further).
- onnxruntime runs the original as written; where it refuses it or gets it wrong (bench/run.sh
  does the same), its baseline is the model as tconv-import's default pipeline legalized it,
  and the rows say so.
- Rounds: in each round, for each case, tconv's figures (the original, then each distinct
  converted model; the order reversed every other round, so drift does not favour one side),
  then onnxruntime's in the same order. A ratio (converted ms / original ms) is taken within
  a round, on one runtime, and the report gives the median of those ratios over the rounds.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

TARGETS = ["tensorrt", "tflite", "coreml", "qnn", "ethos-u", "rknn", "tidl", "conv-only"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def emit(row):
    sys.stdout.write(json.dumps(row) + "\n")
    sys.stdout.flush()


def log(msg):
    sys.stderr.write("bench_targets: %s\n" % msg)
    sys.stderr.flush()


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def one_line(text, limit=600):
    """tconv-import's message on one line, without the program prefix, cut at `limit`."""
    text = " ".join(line.strip() for line in text.strip().splitlines())
    text = text.replace("tconv-import: ", "")
    return text if len(text) <= limit else text[:limit] + " ..."


def convert(build, case_dir, name, target):
    """Runs tconv-import --target; returns the plan entry of this (case, target)."""
    out_dir = os.path.join(build, "targets", target, name)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "model.onnx")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([os.path.join(build, "tconv-import"), os.path.join(case_dir, "model.onnx"),
                        "--target", target, "-o", out], capture_output=True, text=True)
    entry = {"case": name, "target": target}
    if p.returncode != 0:
        entry.update(status="refused", reason=one_line(p.stderr))
        return entry
    m = re.search(r"rewrote (\d+) ConvTranspose", p.stderr)
    ops = re.search(r"^tconv-import: ops: (.*)$", p.stderr, re.M)
    entry.update(rewritten=int(m.group(1)) if m else -1, ops=ops.group(1).strip() if ops else "")
    if entry["rewritten"] == 0:
        entry["status"] = "unchanged"
        return entry
    # bench_models --case reads DIR/model.onnx and DIR/test_data_set_0: the converted model is
    # checked against the original's golden outputs.
    link = os.path.join(out_dir, "test_data_set_0")
    if not os.path.lexists(link):
        os.symlink(os.path.abspath(os.path.join(case_dir, "test_data_set_0")), link)
    entry.update(status="converted", model=out, dir=out_dir, digest=file_digest(out))
    return entry


def ort_check(model, data_set, name):
    p = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_bench.js"), "--model", model,
                        "--data-set", data_set, "--case", name, "--threads", "1",
                        "--check-only"], capture_output=True, text=True)
    return p.returncode == 0, one_line(p.stderr)


def ort_baseline(build, case_dir, name):
    """The model onnxruntime's original figure runs, and its kind; (None, message) when
    onnxruntime gets neither the original nor the legalized model right."""
    data_set = os.path.join(case_dir, "test_data_set_0")
    model = os.path.join(case_dir, "model.onnx")
    ok, msg = ort_check(model, data_set, name)
    if ok:
        return model, "original"
    out_dir = os.path.join(build, "targets", "legalized", name)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "model.onnx")
    subprocess.run([os.path.join(build, "tconv-import"), model, "-o", out, "--quiet"],
                   check=True)
    ok, msg2 = ort_check(out, data_set, name)
    if ok:
        return out, "legalized"
    return None, "%s; legalized: %s" % (msg, msg2)


def time_tconv(build, model_dir, name, threads, runs):
    p = subprocess.run([os.path.join(build, "bench", "bench_models"), "--case", model_dir, name,
                        str(threads), str(runs)], capture_output=True, text=True)
    if p.returncode != 0:
        return None, one_line(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1]), ""


def time_ort(model, data_set, name, threads, runs):
    p = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_bench.js"), "--model", model,
                        "--data-set", data_set, "--case", name, "--threads", str(threads),
                        "--runs", str(runs)], capture_output=True, text=True)
    if p.returncode != 0:
        return None, one_line(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1]), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    targets = [t for t in a.targets.split(",") if t]
    with_ort = bool(os.environ.get("TCONV_ORT_NODE_MODULES"))
    if not with_ort:
        log("TCONV_ORT_NODE_MODULES is not set: onnxruntime's side is not timed")

    # Plan: the conversions, then per case the distinct models to time.
    cases = []
    for case_dir in a.cases:
        case_dir = case_dir.rstrip("/")
        name = os.path.basename(case_dir)
        if not os.path.isfile(os.path.join(case_dir, "model.onnx")):
            continue
        data_set = os.path.join(case_dir, "test_data_set_0")
        variants = {"original": {"key": "original", "targets": [], "dir": case_dir,
                                 "model": os.path.join(case_dir, "model.onnx")}}
        for target in targets:
            entry = convert(a.build, case_dir, name, target)
            emit(dict({k: v for k, v in entry.items() if k not in ("dir", "model", "digest")},
                      bench="target_conversion", variant=entry.get("digest", "")[:12]))
            if entry["status"] != "converted":
                continue
            key = entry["digest"][:12]
            if key not in variants:
                variants[key] = {"key": key, "targets": [], "dir": entry["dir"],
                                 "model": entry["model"]}
            variants[key]["targets"].append(target)
        if len(variants) == 1:
            continue  # nothing converted: nothing to time
        ort_model, ort_kind = (None, "")
        if with_ort:
            ort_model, ort_kind = ort_baseline(a.build, case_dir, name)
            if ort_model is None:
                log("%s: onnxruntime fails the original and the legalized model (%s): "
                    "onnxruntime side skipped" % (name, ort_kind))
                emit({"bench": "target_mismatch", "case": name, "runtime": "onnxruntime",
                      "variant": "original", "targets": [], "message": ort_kind})
        variants["original"]["ort_model"] = ort_model
        for v in variants.values():
            if v["key"] != "original":
                v["ort_model"] = v["model"]
        cases.append({"name": name, "data_set": data_set, "ort_kind": ort_kind,
                      "variants": list(variants.values())})

    broken = set()  # (case, variant, runtime) that failed the golden check: not timed again
    for rnd in range(1, a.rounds + 1):
        log("round %d of %d (%d cases)" % (rnd, a.rounds, len(cases)))
        for case in cases:
            order = case["variants"] if rnd % 2 else list(reversed(case["variants"]))
            for runtime in ("tconv", "onnxruntime"):
                if runtime == "onnxruntime" and not with_ort:
                    continue
                for v in order:
                    tag = (case["name"], v["key"], runtime)
                    if tag in broken:
                        continue
                    if runtime == "tconv":
                        row, err = time_tconv(a.build, v["dir"], case["name"], a.threads, a.runs)
                    else:
                        if not v.get("ort_model"):
                            continue
                        row, err = time_ort(v["ort_model"], case["data_set"], case["name"],
                                            a.threads, a.runs)
                    base = {"case": case["name"], "runtime": runtime, "variant": v["key"],
                            "targets": v["targets"], "round": rnd, "threads": a.threads}
                    if row is None:
                        broken.add(tag)
                        log("%s (%s) in %s: %s" % (case["name"], v["key"], runtime, err))
                        emit(dict(base, bench="target_mismatch", message=err))
                        continue
                    row.update(base, bench="target_time")
                    row["model"] = "converted" if v["targets"] else "original"
                    if runtime == "onnxruntime" and not v["targets"]:
                        row["model"] = case["ort_kind"]  # original, or legalized
                    emit(row)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Runs tconv-run on every test directory of ONNX's node test suite and tallies the results.

Usage:
  /usr/bin/python3 scripts/node-suite.py SUITE_DIR [--tconv-run PATH] [-j N] [--timeout S]
        [--results FILE.tsv] [--write-passed FILE] [--only REGEX]

SUITE_DIR holds the test directories (ONNX v1.22.0: onnx/backend/test/data/node, 1,765 of
them; CMake's TCONV_ONNX_NODE_TESTS). Each is run as `tconv-run DIR --rtol 1e-3 --atol 1e-7`
(the tolerances of ONNX's own backend test runner) with a timeout, and classified:
  pass      exit 0: every output of every data set matched
  wrong     an output differs (values, dtype or shape): tconv computed something else
  refuse    tconv said it does not run the model (no kernel, a dtype, an opset, ...); the reason
            is the message, grouped (op names and dtypes kept, paths and numbers dropped)
  crash     killed by a signal, an exit status other than 0/1/2, or the timeout
  set aside a graph input or output is a sequence, map or optional (29 tests in v1.22.0): the
            runtime runs tensors only, and onnxruntime's count set them aside too
Needs onnx (any version that parses the models: /usr/bin/python3's 1.12 does) only to find the
set-aside tests. --write-passed rewrites tests/runtime/node_tests_passed.txt (what ctest runs as
runtime.node.*); --results writes one row per test: test, class, reason.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
from collections import Counter

import onnx

RTOL, ATOL = "1e-3", "1e-7"
WRONG = re.compile(r"elements differ|: dtype \S+, expected|: shape \S+, expected|"
                   r"output '[^']*' is missing|outputs? .*expected")


def non_tensor_io(test_dir):
    m = onnx.ModelProto()
    with open(os.path.join(test_dir, "model.onnx"), "rb") as f:
        m.ParseFromString(f.read())
    inits = {i.name for i in m.graph.initializer}
    values = [i for i in m.graph.input if i.name not in inits] + list(m.graph.output)
    return any(v.type.WhichOneof("value") != "tensor_type" for v in values)


def reason_of(text):
    """The refusal message grouped: the op (and opset when past tconv's) or dtype it names."""
    m = re.search(r"unsupported op (\S+) \(domain '([^']*)', opset (\d+)\)", text)
    if m:
        return "no kernel: %s" % m.group(1)
    m = re.search(r"unsupported dtype (\S+) for input \d+ \('[^']*'\) of (\S+)", text)
    if m:
        return "dtype: %s in %s" % (m.group(1), m.group(2))
    m = re.search(r"unsupported dtype (\S+)", text)
    if m:
        return "dtype: %s" % m.group(1)
    m = re.search(r"opset (\d+) .*(?:above|newer|later)", text)
    if m:
        return "opset above tconv's"
    m = re.search(r"unsupported attribute '([^']*)' for (\S+)", text)
    if m:
        return "attribute: %s of %s" % (m.group(1), m.group(2))
    lines = [ln for ln in text.splitlines() if ln.startswith("FAIL ")] or text.splitlines()
    msg = lines[0] if lines else "(no message)"
    msg = re.sub(r"^FAIL \S+ ", "", msg)
    msg = re.sub(r"/\S+", "PATH", msg)
    msg = re.sub(r"node '[^']*' \(#\d+, (\S+)\) \[[^]]*\]", r"\1", msg)
    msg = re.sub(r"\d+", "N", msg)
    return "other: " + msg[:140]


def run_one(args, test):
    d = os.path.join(args.suite, test)
    if non_tensor_io(d):
        return test, "set aside", "sequence/optional input or output"
    try:
        p = subprocess.run([args.tconv_run, d, "--rtol", RTOL, "--atol", ATOL],
                           capture_output=True, text=True, timeout=args.timeout,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return test, "crash", "timeout after %ss" % args.timeout
    text = p.stdout + p.stderr
    if p.returncode == 0:
        return test, "pass", "-"
    if p.returncode not in (1, 2):
        return test, "crash", "exit status %d" % p.returncode
    if WRONG.search(text):
        first = next((ln for ln in text.splitlines() if WRONG.search(ln)), "")
        return test, "wrong", re.sub(r"^FAIL \S+ ", "", first)[:200]
    return test, "refuse", reason_of(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("--tconv-run", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "test", "tconv-run"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--results")
    ap.add_argument("--write-passed")
    ap.add_argument("--only", help="run only the tests whose name matches this regex")
    args = ap.parse_args()
    tests = sorted(t for t in os.listdir(args.suite)
                   if os.path.isdir(os.path.join(args.suite, t)) and t.startswith("test_"))
    if args.only:
        tests = [t for t in tests if re.search(args.only, t)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
        results = list(pool.map(lambda t: run_one(args, t), tests))

    classes = Counter(c for _, c, _ in results)
    print("%d tests in %s (rtol %s, atol %s)" % (len(results), args.suite, RTOL, ATOL))
    for c in ("pass", "wrong", "crash", "refuse", "set aside"):
        print("  %-9s %d" % (c, classes.get(c, 0)))
    for c in ("wrong", "crash"):
        for t, cls, why in results:
            if cls == c:
                print("%s: %s: %s" % (c, t, why))
    reasons = Counter(why for _, cls, why in results if cls == "refuse")
    print("refusals by reason:")
    for why, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        print("  %4d  %s" % (n, why))
    if args.results:
        with open(args.results, "w") as f:
            f.write("test\tclass\treason\n")
            for row in results:
                f.write("\t".join(row) + "\n")
    if args.write_passed:
        with open(args.write_passed, "w") as f:
            f.write("# ONNX v1.22.0 node tests tconv-run passes at rtol %s, atol %s: each becomes the\n"
                    "# ctest runtime.node.<test>. Written by scripts/node-suite.py --write-passed.\n"
                    % (RTOL, ATOL))
            for t, cls, _ in results:
                if cls == "pass":
                    f.write(t + "\n")
    return 1 if classes.get("wrong") or classes.get("crash") else 0


if __name__ == "__main__":
    sys.exit(main())

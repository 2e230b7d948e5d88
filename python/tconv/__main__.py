"""python3 -m tconv IN.onnx [-o OUT.onnx] [options]: tconv-import's main options over the Python
package, with its exit codes (0 ok, 1 check failed, 2 bad input or usage)."""
import ctypes
import json
import os
import sys

from . import _lib, __version__
from ._error import CheckFailed, Error
from ._legalize import legalize_loaded
from ._limits import KEYS, Limits
from ._lib import lib
from ._model import load

PROG = "python3 -m tconv"
USAGE = """usage: python3 -m tconv IN.onnx [-o OUT.onnx] [options]

Loads an ONNX model, rewrites every ConvTranspose with SAME padding, asymmetric pads,
output_shape or output_padding into a VALID ConvTranspose + Slice (+ Pad/Add), and saves it:
tconv-import through the Python package (tconv.legalize). Without -o (and without --dry-run,
--check or --report) it prints the model's summary.

  -o, --output FILE       write the converted model (atomically)
  --passes LIST           passes to run (default shape-infer,legalize-conv-transpose,dce)
  --policy P              same-or-asymmetric (default) | valid-only
  --convention C          onnx (default) | ort (onnxruntime 1.30) | ort-legacy
  --target NAME           a backend target (a libtconv with backend targets)
  --dry-run               run the passes and report, write nothing
  --report FILE.json      the rewrite report (with --check, the proof too)
  --check N               prove the rewrite on N seeded random inputs (exit 1 on mismatch)
  --seed S                first seed for --check (default 1)
  --rtol R, --atol A      tolerances for --check (default 1e-4, 1e-5)
  --dim NAME=VALUE        value (>= 1) of a dynamic input dim for --check
  --quiet                 no summary or warnings on stderr
  --version, --help

Limits for untrusted models, as tconv-import's (0 turns a size or count limit off):
  --max-file-mb N, --max-tensor-mb N, --max-memory-mb N, --max-depth N, --max-nodes N,
  --max-work N

tconv-import's other options (--list-passes, --print-ir, --print-ir-after) are not offered
here: use tconv-import for them.

Exit codes: 0 ok, 1 check failed, 2 bad input or usage.
"""

WITH_VALUE = {"-o": "output", "--output": "output", "--passes": "passes", "--policy": "policy",
              "--convention": "convention", "--target": "target", "--report": "report",
              "--check": "check", "--seed": "seed", "--rtol": "rtol", "--atol": "atol",
              "--dim": "dim"}


LIMITS = {"--max-" + key.replace("_", "-"): key for key in KEYS}


class Usage(Exception):
    pass


def _number(kind, text, low):
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not value >= low:
        raise Usage("bad value '%s'" % text)
    return value


def parse(argv):
    a = {"input": None, "output": None, "passes": None, "policy": None, "convention": "onnx",
         "target": None, "report": None, "check": 0, "seed": 1, "rtol": 1e-4, "atol": 1e-5,
         "dims": {}, "dry_run": False, "quiet": False, "limits": {}}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return None
        if arg == "--version":
            print("tconv (python) %s" % __version__)
            return None
        option, eq, inline = arg.partition("=")
        if option in LIMITS:
            if not eq:
                if i + 1 >= len(argv):
                    raise Usage("option %s needs a value" % option)
                inline = argv[i + 1]
                i += 1
            if not inline.isdigit():
                raise Usage("%s needs a non-negative integer, got '%s'" % (option, inline))
            a["limits"][LIMITS[option]] = int(inline)
        elif arg == "--dry-run":
            a["dry_run"] = True
        elif arg == "--quiet":
            a["quiet"] = True
        elif arg in WITH_VALUE:
            if i + 1 >= len(argv):
                raise Usage("option %s needs a value" % arg)
            key, value = WITH_VALUE[arg], argv[i + 1]
            i += 1
            if key == "check":
                a["check"] = _number(int, value, 1)
                if a["check"] > 1000000:
                    raise Usage("--check needs a run count from 1 to 1000000, got '%s'" % value)
            elif key == "seed":
                a["seed"] = _number(int, value, 0)
            elif key in ("rtol", "atol"):
                a[key] = _number(float, value, 0.0)
            elif key == "dim":
                name, eq, number = value.partition("=")
                if not name or not eq:
                    raise Usage("--dim needs NAME=VALUE with VALUE >= 1, got '%s'" % value)
                a["dims"][name] = _number(int, number, 1)
            else:
                a[key] = value
        elif arg.startswith("-") and arg != "-":
            raise Usage("unknown option '%s'" % arg)
        elif a["input"] is None:
            a["input"] = arg
        else:
            raise Usage("more than one input model ('%s')" % arg)
        i += 1
    if a["input"] is None:
        raise Usage("no input model given")
    if a["output"] and a["dry_run"]:
        raise Usage("--dry-run writes nothing; drop -o or --dry-run")
    return a


def _say(text):
    sys.stderr.write("%s: %s\n" % (PROG, text))


def _check_outputs(a, model):
    for path in (a["output"], a["report"]):
        if not path:
            continue
        message = ctypes.create_string_buffer(_lib.MESSAGE_MAX)
        if lib.tconv_check_output_path(os.fsencode(path), message, _lib.MESSAGE_MAX) != _lib.OK:
            raise Error(_lib.text(message.value))
    if a["report"] and lib.tconv_model_check_output_path(model.handle,
                                                         os.fsencode(a["report"])) != _lib.OK:
        raise Error(model.error())


def _write_report(path, report):
    data = (json.dumps(report, indent=2) + "\n").encode()
    message = ctypes.create_string_buffer(_lib.MESSAGE_MAX)
    if lib.tconv_write_file(os.fsencode(path), data, len(data), message,
                            _lib.MESSAGE_MAX) != _lib.OK:
        raise Error(_lib.text(message.value))


def _print_report(a, report):
    if a["quiet"]:
        return
    for w in report.get("warnings", []):
        _say("warning: %s" % w)
    names = [r.get("node", "") for r in report.get("rewritten", [])]
    _say("rewrote %d ConvTranspose node(s)%s" % (len(names), (": " + ", ".join(names))
                                                   if names else ""))
    proof = report.get("proof")
    if proof:
        _say("check: whole model: %s%s" % (proof["whole_model"]["status"],
                                          ": " + proof["whole_model"]["reason"]
                                          if proof["whole_model"].get("reason") else ""))


def _summary(model):
    out = ctypes.c_void_p()
    st = lib.tconv_model_format_summary(model.handle, ctypes.byref(out))
    if st != _lib.OK:
        raise Error(model.error(), _lib.status_name(st))
    sys.stdout.write(_lib.take_text(out.value))


def convert(a):
    with Limits(a["limits"]) as limits, load(a["input"], limits.handle) as model:
        _check_outputs(a, model)
        if not (a["output"] or a["dry_run"] or a["check"] or a["report"]):
            _summary(model)
            return 0
        try:
            report = legalize_loaded(model, target=a["target"], policy=a["policy"],
                                     convention=a["convention"], check=a["check"],
                                     dims=a["dims"], seed=a["seed"], rtol=a["rtol"],
                                     atol=a["atol"], passes=a["passes"],
                                     limits=limits.handle)
        except CheckFailed as e:
            _print_report(a, e.report)
            if a["report"]:
                _write_report(a["report"], e.report)  # says why the check failed
            _say(e.message)
            if a["output"]:
                _say("check failed: %s was not written" % a["output"])
            return 1
        _print_report(a, report)
        if a["report"]:
            _write_report(a["report"], report)
        if a["output"]:
            if lib.tconv_model_write_file(model.handle, os.fsencode(a["output"])) != _lib.OK:
                raise Error(model.error())
            if not a["quiet"]:
                _say("wrote %s" % a["output"])
        return 0


def main(argv=None):
    try:
        a = parse(sys.argv[1:] if argv is None else argv)
    except Usage as e:
        _say("%s\n(see %s --help)" % (e, PROG))
        return 2
    if a is None:
        return 0
    try:
        return convert(a)
    except Error as e:
        _say(e.message)
        if e.status == "limit":
            _say("a limit was reached; if the model is trusted, raise it with " +
                 ", ".join(sorted(LIMITS)))
        return 2


if __name__ == "__main__":
    sys.exit(main())

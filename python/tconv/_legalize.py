"""tconv.legalize: what tconv-import does (src/cli/tconv_import.c), through the library's API."""
import ctypes
import json

from . import _lib
from ._error import CheckFailed, Error
from ._lib import lib
from ._limits import Limits
from ._model import load

DEFAULT_PASSES = "shape-infer,legalize-conv-transpose,dce"


def enum_from_name(kind, name, choices):
    value = ctypes.c_int()
    parse = lib.tconv_policy_from_name if kind == "policy" else lib.tconv_convention_from_name
    if not isinstance(name, str) or not parse(name.encode(), ctypes.byref(value)):
        raise Error("unknown %s %r (%s)" % (kind, name, ", ".join(choices)))
    return value.value


def check_dims(model, dims, need_all, source):
    """Every given dim names a dynamic dim of a data input of the main graph, and (need_all)
    every dynamic dim has a value: one Error naming all that is wrong, as tconv-import's --dim."""
    graph = lib.tconv_model_graph(model.handle)
    dynamic = []  # (input, dim_param or None, axis)
    for i in range(lib.tconv_graph_input_count(graph)):
        v = lib.tconv_graph_input(graph, i)
        if lib.tconv_value_initializer(v):
            continue
        for axis in range(max(lib.tconv_value_rank(v), 0)):
            if lib.tconv_value_dim(v, axis) >= 0:
                continue
            param = lib.tconv_value_dim_param(v, axis)
            dynamic.append((_lib.text(lib.tconv_value_name(v)), _lib.text(param) or None, axis))

    def listing(only_missing):
        parts, current = [], None
        for name, param, axis in dynamic:
            if only_missing and param in dims:
                continue
            shown = param or "dim %d (unnamed: cannot be given)" % axis
            if name != current:
                parts.append("input '%s': %s" % (name, shown))
                current = name
            else:
                parts[-1] += ", " + shown
        return "; ".join(parts)

    params = {p for _, p, _ in dynamic if p}
    problems = []
    for name, value in dims.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            problems.append("dims[%r]: the value must be an int >= 1, not %r" % (name, value))
        elif name not in params:
            what = ("that is a value of the model, not a dynamic dim"
                    if lib.tconv_graph_lookup(graph, name.encode())
                    else "the model has no dynamic dim of that name")
            problems.append("dim %s: %s; the dynamic dims are: %s"
                            % (name, what, listing(False) or "(none)"))
    if not problems and need_all and listing(True):
        problems.append("give every dynamic dim a value with dims={NAME: VALUE} (missing: %s)"
                        % listing(True))
    if problems:
        raise Error("%s: %s" % (source, "; ".join(problems)))


def _run_pipeline(model, passes, policy, convention, target):
    pipeline = ctypes.c_void_p()
    st = lib.tconv_pipeline_new(ctypes.byref(pipeline))
    if st != _lib.OK:
        raise Error("out of memory", _lib.status_name(st))
    try:
        st = lib.tconv_pipeline_set_passes(pipeline, passes.encode())
        if st == _lib.OK:
            st = lib.tconv_pipeline_set_policy(pipeline, policy)
        if st == _lib.OK:
            st = lib.tconv_pipeline_set_convention(pipeline, convention)
        if st == _lib.OK and target is not None:
            if not _lib.has("tconv_pipeline_set_target"):
                raise Error("this libtconv has no backend targets (target=%r)" % (target,))
            st = lib.tconv_pipeline_set_target(pipeline, str(target).encode())
        if st != _lib.OK:
            raise Error(_lib.text(lib.tconv_pipeline_last_error(pipeline)),
                        _lib.status_name(st))
        report = ctypes.c_void_p()
        st = lib.tconv_pipeline_run(pipeline, model.handle, ctypes.byref(report))
        if st != _lib.OK:
            lib.tconv_report_free(report)
            raise Error("%s: %s" % (model.source, model.error()), _lib.status_name(st))
        return report
    finally:
        lib.tconv_pipeline_free(pipeline)


def _comparison_error(c, source, what="check could not run"):
    return Error("%s: %s: %s" % (source, what, _lib.text(lib.tconv_comparison_last_error(c))))


def _prove(original, converted, report, runs, seed, rtol, atol, convention, dims, source,
           limits):
    """--check: every rewrite alone, then the whole model where the runtime has every op. Returns
    (proof as a dict, failure message or None); raises Error where the check cannot run."""
    c = ctypes.c_void_p()
    st = lib.tconv_comparison_new(ctypes.byref(c))
    if st != _lib.OK:
        raise Error("out of memory", _lib.status_name(st))
    try:
        for call, args in ((lib.tconv_comparison_set_runs, (runs,)),
                           (lib.tconv_comparison_set_seed, (seed,)),
                           (lib.tconv_comparison_set_tolerance, (rtol, atol)),
                           (lib.tconv_comparison_set_convention, (convention,)),
                           (lib.tconv_comparison_set_limits, (limits,))):
            if call(c, *args) != _lib.OK:
                raise _comparison_error(c, source)
        for name, value in dims.items():
            if lib.tconv_comparison_bind_dim(c, name.encode(), value) != _lib.OK:
                raise _comparison_error(c, source)
        local = lib.tconv_comparison_run_rewrites(c, original.handle, converted.handle, report)
        if local in (_lib.ERR_USAGE, 7):  # usage, nomem: nothing was proven
            raise _comparison_error(c, source)
        whole, reason = _prove_whole(c, original, converted, source)
        failures = []
        for i in range(lib.tconv_comparison_rewrite_count(c)):
            if not lib.tconv_comparison_rewrite_proven(c, i) and \
                    lib.tconv_comparison_rewrite_runs(c, i) > 0:
                failures.append("node '%s' alone: %s" % (
                    _lib.text(lib.tconv_comparison_rewrite_node(c, i)),
                    _lib.text(lib.tconv_comparison_rewrite_failure(c, i))))
        for i in range(lib.tconv_comparison_output_count(c) if whole == "mismatch" else 0):
            if not lib.tconv_comparison_output_matches(c, i):
                failures.append(_lib.text(lib.tconv_comparison_output_failure(c, i)))
        if not failures and local != _lib.OK and whole != "proven":
            raise _comparison_error(c, source, "check could not prove every rewrite")
        out = ctypes.c_void_p()
        st = lib.tconv_comparison_proof_json(c, whole.encode(),
                                             reason.encode() if reason else None,
                                             ctypes.byref(out))
        if st != _lib.OK:
            raise _comparison_error(c, source)
        proof = json.loads(_lib.take_text(out.value))
        message = "%s: check failed: %s" % (source, "; ".join(failures)) if failures else None
        return proof, message
    finally:
        lib.tconv_comparison_free(c)


def _prove_whole(c, original, converted, source):
    count = ctypes.c_size_t()
    text = ctypes.c_void_p()
    st = lib.tconv_runtime_missing_ops(original.handle, ctypes.byref(count), ctypes.byref(text))
    missing = _lib.take_text(text.value) if st == _lib.OK else ""
    if st == _lib.OK and count.value:
        return "skipped", "the runtime lacks " + missing
    st = lib.tconv_comparison_run(c, original.handle, converted.handle)
    if st == _lib.OK:
        return "proven", None
    if st == _lib.ERR_MISMATCH and lib.tconv_comparison_output_count(c) > 0:
        return "mismatch", None
    raise _comparison_error(c, source)


def _report_json(report):
    out = ctypes.c_void_p()
    st = lib.tconv_report_to_json(report, ctypes.byref(out))
    if st != _lib.OK:
        raise Error("the report cannot be made", _lib.status_name(st))
    return json.loads(_lib.take_text(out.value))


def legalize_loaded(m, *, target=None, policy=None, convention="onnx", check=0, dims=None,
                    seed=0, rtol=1e-4, atol=1e-5, passes=None, limits=None):
    """legalize() on a loaded Model, which it converts in place; returns the report."""
    policy_value = 0 if policy is None else enum_from_name(
        "policy", policy, ("same-or-asymmetric", "valid-only"))
    convention_value = enum_from_name("convention", convention, ("onnx", "ort", "ort-legacy"))
    if not isinstance(check, int) or isinstance(check, bool) or not 0 <= check <= 1000000:
        raise Error("check must be a run count from 0 to 1000000, not %r" % (check,))
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise Error("seed must be a non-negative int, not %r" % (seed,))
    if not (rtol >= 0 and atol >= 0):
        raise Error("rtol and atol must be >= 0")
    dims = dict(dims or {})
    original = m.clone() if check else None
    try:
        if dims or check:
            check_dims(m, dims, check > 0, m.source)
        report = _run_pipeline(m, passes or DEFAULT_PASSES, policy_value, convention_value,
                               target)
        try:
            proof, failure = None, None
            if check:
                proof, failure = _prove(original, m, report, check, seed, rtol, atol,
                                        convention_value, dims, m.source, limits)
            result = _report_json(report)
        finally:
            lib.tconv_report_free(report)
        if proof is not None:
            result["proof"] = proof
        if failure:
            raise CheckFailed(failure, result)
        return result
    finally:
        if original is not None:
            original.close()


def legalize(model, *, target=None, policy=None, convention="onnx", check=0, dims=None, seed=0,
             rtol=1e-4, atol=1e-5, passes=None, limits=None):
    """Legalizes the ConvTranspose nodes of `model` (a path, bytes or an onnx.ModelProto, external
    data included), as tconv-import does.

    target: a backend target name (needs a libtconv with tconv_pipeline_set_target); policy:
    "same-or-asymmetric" (None: the default) or "valid-only"; convention: "onnx", "ort" or
    "ort-legacy"; check: N > 0 proves the rewrite on N seeded random inputs (seed, rtol, atol) as
    tconv-import --check N, every dynamic input dim needing a value in dims ({name: value});
    passes: the pass list (None: shape-infer,legalize-conv-transpose,dce); limits:
    tconv-import's --max-* limits as {"file_mb", "tensor_mb", "memory_mb", "depth", "nodes",
    "work": value} (0 turns one off).

    Returns (onnx.ModelProto, report): report is tconv-import's --report JSON as a dict
    ("rewrites", "warnings", op counts, and with check "proof"). Raises tconv.CheckFailed (with
    .report) when the check finds a difference, tconv.Error for every other failure."""
    with Limits(limits) as lim, load(model, lim.handle) as m:
        report = legalize_loaded(m, target=target, policy=policy, convention=convention,
                                 check=check, dims=dims, seed=seed, rtol=rtol, atol=atol,
                                 passes=passes, limits=lim.handle)
        return m.to_proto(), report

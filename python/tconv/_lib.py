"""The shared library libtconv through ctypes: finding it, and the prototypes of the public C API
(include/tconv/*.h) that the package calls."""
import ctypes
import os

_SONAME = "libtconv.so.0"


def _candidates():
    """Where libtconv is looked for, in order: $TCONV_LIBRARY; the path the build or the install
    wrote into _libpath.py; the package folder itself; the system's library path."""
    env = os.environ.get("TCONV_LIBRARY")
    if env:
        yield env
        return
    try:
        from . import _libpath  # written by CMake (build tree) or cmake --install
    except ImportError:
        _libpath = None
    if _libpath is not None:
        yield _libpath.library()
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, _SONAME)
    yield _SONAME


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (no such file)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("tconv: cannot load the shared library libtconv; tried: " + "; ".join(tried)
                      + ". Set TCONV_LIBRARY to the path of libtconv.so.0.")


lib, path = _load()

c_size_p = ctypes.POINTER(ctypes.c_size_t)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)
c_char_pp = ctypes.POINTER(ctypes.c_char_p)
c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_double_p = ctypes.POINTER(ctypes.c_double)
handle = ctypes.c_void_p
status = ctypes.c_int
msg = ctypes.c_char_p  # a caller's message buffer
c_bool = ctypes.c_bool

# name: (restype, argtypes)
_PROTOTYPES = {
    "tconv_version": (ctypes.c_char_p, []),
    "tconv_status_name": (ctypes.c_char_p, [status]),
    "tconv_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "tconv_free": (None, [ctypes.c_void_p]),
    "tconv_write_file": (status, [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_char_p, ctypes.c_size_t]),
    "tconv_check_output_path": (status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]),
    # limits
    "tconv_limits_new": (status, [c_void_pp]),
    "tconv_limits_free": (None, [handle]),
    "tconv_limits_set": (status, [handle, ctypes.c_int, ctypes.c_uint64]),
    "tconv_limits_last_error": (ctypes.c_char_p, [handle]),
    # models
    "tconv_model_read_file": (status, [ctypes.c_char_p, handle, c_void_pp, ctypes.c_char_p,
                                       ctypes.c_size_t]),
    "tconv_model_read_buffer": (status, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                         handle, c_void_pp, ctypes.c_char_p, ctypes.c_size_t]),
    "tconv_model_write_buffer": (status, [handle, c_void_pp, c_size_p]),
    "tconv_model_write_file": (status, [handle, ctypes.c_char_p]),
    "tconv_model_format_summary": (status, [handle, c_void_pp]),
    "tconv_model_check_output_path": (status, [handle, ctypes.c_char_p]),
    "tconv_model_clone": (status, [handle, c_void_pp]),
    "tconv_model_free": (None, [handle]),
    "tconv_model_last_error": (ctypes.c_char_p, [handle]),
    "tconv_model_set_error": (status, [handle, status, ctypes.c_char_p]),
    "tconv_model_sorted_graph_count": (ctypes.c_size_t, [handle]),
    "tconv_model_graph": (handle, [handle]),
    "tconv_graph_input_count": (ctypes.c_size_t, [handle]),
    "tconv_graph_input": (handle, [handle, ctypes.c_size_t]),
    "tconv_graph_lookup": (handle, [handle, ctypes.c_char_p]),
    "tconv_value_name": (ctypes.c_char_p, [handle]),
    "tconv_value_rank": (ctypes.c_int, [handle]),
    "tconv_value_dim": (ctypes.c_int64, [handle, ctypes.c_int]),
    "tconv_value_dim_param": (ctypes.c_char_p, [handle, ctypes.c_int]),
    "tconv_value_initializer": (handle, [handle]),
    # passes
    "tconv_policy_from_name": (c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "tconv_convention_from_name": (c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "tconv_pipeline_new": (status, [c_void_pp]),
    "tconv_pipeline_free": (None, [handle]),
    "tconv_pipeline_last_error": (ctypes.c_char_p, [handle]),
    "tconv_pipeline_set_passes": (status, [handle, ctypes.c_char_p]),
    "tconv_pipeline_set_policy": (status, [handle, ctypes.c_int]),
    "tconv_pipeline_set_convention": (status, [handle, ctypes.c_int]),
    "tconv_pipeline_run": (status, [handle, handle, c_void_pp]),
    "tconv_report_free": (None, [handle]),
    "tconv_report_to_json": (status, [handle, c_void_pp]),
    "tconv_report_rewrite_count": (ctypes.c_size_t, [handle]),
    "tconv_report_rewritten_node": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    "tconv_report_warning_count": (ctypes.c_size_t, [handle]),
    "tconv_report_warning": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    # comparisons (the --check proof)
    "tconv_comparison_new": (status, [c_void_pp]),
    "tconv_comparison_free": (None, [handle]),
    "tconv_comparison_last_error": (ctypes.c_char_p, [handle]),
    "tconv_comparison_set_runs": (status, [handle, ctypes.c_size_t]),
    "tconv_comparison_set_seed": (status, [handle, ctypes.c_uint64]),
    "tconv_comparison_set_tolerance": (status, [handle, ctypes.c_double, ctypes.c_double]),
    "tconv_comparison_set_limits": (status, [handle, handle]),
    "tconv_comparison_set_convention": (status, [handle, ctypes.c_int]),
    "tconv_comparison_bind_dim": (status, [handle, ctypes.c_char_p, ctypes.c_int64]),
    "tconv_comparison_run": (status, [handle, handle, handle]),
    "tconv_comparison_run_rewrites": (status, [handle, handle, handle, handle]),
    "tconv_comparison_rewrite_count": (ctypes.c_size_t, [handle]),
    "tconv_comparison_rewrite_node": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    "tconv_comparison_rewrite_runs": (ctypes.c_size_t, [handle, ctypes.c_size_t]),
    "tconv_comparison_rewrite_proven": (c_bool, [handle, ctypes.c_size_t]),
    "tconv_comparison_rewrite_failure": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    "tconv_comparison_output_count": (ctypes.c_size_t, [handle]),
    "tconv_comparison_output_name": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    "tconv_comparison_output_matches": (c_bool, [handle, ctypes.c_size_t]),
    "tconv_comparison_output_failure": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    "tconv_comparison_max_abs_error": (ctypes.c_double, [handle, ctypes.c_size_t]),
    "tconv_comparison_max_rel_error": (ctypes.c_double, [handle, ctypes.c_size_t]),
    "tconv_comparison_proof_json": (status, [handle, ctypes.c_char_p, ctypes.c_char_p, c_void_pp]),
    "tconv_runtime_missing_ops": (status, [handle, c_size_p, c_void_pp]),
    # runners
    "tconv_runner_new_with": (status, [handle, handle, ctypes.c_int, c_bool, c_void_pp]),
    "tconv_runner_free": (None, [handle]),
    "tconv_runner_last_error": (ctypes.c_char_p, [handle]),
    "tconv_runner_input_count": (ctypes.c_size_t, [handle]),
    "tconv_runner_input_name": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    "tconv_runner_input_dtype": (ctypes.c_int, [handle, ctypes.c_size_t]),
    "tconv_runner_set_input_borrowed": (status, [handle, ctypes.c_size_t, ctypes.c_int,
                                                 ctypes.c_int, c_int64_p, ctypes.c_void_p,
                                                 ctypes.c_size_t]),
    "tconv_runner_run": (status, [handle]),
    "tconv_runner_output_count": (ctypes.c_size_t, [handle]),
    "tconv_runner_output_name": (ctypes.c_char_p, [handle, ctypes.c_size_t]),
    "tconv_runner_output_dtype": (ctypes.c_int, [handle, ctypes.c_size_t]),
    "tconv_runner_output_rank": (ctypes.c_int, [handle, ctypes.c_size_t]),
    "tconv_runner_output_dim": (ctypes.c_int64, [handle, ctypes.c_size_t, ctypes.c_int]),
    "tconv_runner_take_output": (status, [handle, ctypes.c_size_t, c_void_pp, c_size_p]),
    "tconv_runner_set_profiling": (status, [handle, c_bool]),
    "tconv_runner_write_profile": (status, [handle, ctypes.c_char_p]),
    "tconv_runner_profile_summary": (status, [handle, ctypes.c_size_t, c_void_pp]),
}

# Symbols a newer library has: declared when present (has() says whether).
_OPTIONAL = {
    "tconv_pipeline_set_target": (status, [handle, ctypes.c_char_p]),
}


def _declare():
    missing = []
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError("tconv: %s lacks %s: the Python package needs a libtconv of its own "
                          "version" % (path, ", ".join(missing)))
    for name, (restype, argtypes) in _OPTIONAL.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes


_declare()


def has(name):
    """Whether the loaded library exports `name`."""
    return getattr(lib, name, None) is not None


# tconv_status values (tconv/status.h)
OK = 0
ERR_USAGE = 1
ERR_MISMATCH = 8
# tconv_limit values (tconv/limits.h)
LIMIT_THREADS = 5
MESSAGE_MAX = 4096


def text(value):
    """A C string from the library as str ("" for NULL)."""
    return value.decode("utf-8", "replace") if value else ""


def take_text(ptr):
    """A malloc'd C string the library handed over, as str; frees it."""
    if not ptr:
        return ""
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        lib.tconv_free(ptr)


def status_name(st):
    return text(lib.tconv_status_name(st))

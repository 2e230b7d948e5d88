"""tconv.run: a model run in tconv's runtime on numpy arrays, as tconv-run does
(src/cli/tconv_run.c). Inputs are lent to the runner in place (tconv_runner_set_input_borrowed)
and outputs handed over (tconv_runner_take_output): a C-contiguous array crosses without a copy
either way."""
import ctypes
import os
import re

import numpy as np

from . import _lib
from ._error import Error
from ._legalize import enum_from_name
from ._limits import Limits
from ._lib import lib
from ._model import load

try:  # bfloat16 as its own numpy dtype where ml_dtypes is installed; else uint16 bits
    import ml_dtypes
    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    _BFLOAT16 = None

# tconv_dtype (tconv/types.h) <-> numpy
_DTYPES = {
    1: np.dtype(np.float32), 2: np.dtype(np.uint8), 3: np.dtype(np.int8),
    4: np.dtype(np.uint16), 5: np.dtype(np.int16), 6: np.dtype(np.int32),
    7: np.dtype(np.int64), 9: np.dtype(np.bool_), 10: np.dtype(np.float16),
    11: np.dtype(np.float64), 12: np.dtype(np.uint32), 13: np.dtype(np.uint64),
}
_BFLOAT16_CODE = 16
_CODES = {v: k for k, v in _DTYPES.items()}


def _numpy_dtype(code):
    if code == _BFLOAT16_CODE:
        return _BFLOAT16 if _BFLOAT16 is not None else np.dtype(np.uint16)
    dtype = _DTYPES.get(code)
    if dtype is None:
        raise Error("the runtime gave an output of dtype %s, which numpy has no type for"
                    % _lib.text(lib.tconv_dtype_name(code)), "unsupported")
    return dtype


def _tconv_dtype(array, declared):
    """The tconv dtype of a feed: bfloat16 for ml_dtypes' bfloat16, and for uint16 bits fed to
    an input the model declares bfloat16."""
    if _BFLOAT16 is not None and array.dtype == _BFLOAT16:
        return _BFLOAT16_CODE
    if array.dtype == np.uint16 and declared == _BFLOAT16_CODE:
        return _BFLOAT16_CODE
    code = _CODES.get(array.dtype)  # native byte order: big-endian feeds were swapped
    if code is None:
        raise Error("dtype %s has no tconv counterpart (float16, bfloat16 as uint16 or "
                    "ml_dtypes.bfloat16, float32, float64, int8..int64, uint8..uint64, bool)"
                    % array.dtype)
    return code


class _Owned:
    """An output buffer the runner handed over (tconv_runner_take_output): numpy arrays view it,
    and it goes back to the library (tconv_free) with the last of them."""

    def __init__(self, ptr, nbytes):
        self.ptr = ptr
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                    "data": (ptr, False), "version": 3}

    def __del__(self):
        if self.ptr:
            lib.tconv_free(self.ptr)
            self.ptr = None


def _refuse_missing_ops(model):
    """Every op the runtime lacks, named once with its count, as tconv-run says it."""
    count = ctypes.c_size_t()
    text = ctypes.c_void_p()
    st = lib.tconv_runtime_missing_ops(model.handle, ctypes.byref(count), ctypes.byref(text))
    missing = _lib.take_text(text.value) if st == _lib.OK else ""
    if st == _lib.OK and count.value:
        first = re.search(r"\(([^,)]*)", missing)  # "Op x2 (path1, path2), ...": path1
        raise Error("%s: the runtime cannot run this model: it has no kernel for %s"
                    % (model.source, missing), "unsupported", first.group(1) if first else None)


class _Runner:
    def __init__(self, model, limits, convention, fusion):
        self.handle = ctypes.c_void_p()
        _refuse_missing_ops(model)
        st = lib.tconv_runner_new_with(model.handle, limits.handle, convention, bool(fusion),
                                       ctypes.byref(self.handle))
        if st != _lib.OK:
            raise Error("%s: %s" % (model.source, model.error()), _lib.status_name(st))

    def close(self):
        if self.handle:
            lib.tconv_runner_free(self.handle)
            self.handle = None

    def fail(self, st, source):
        return Error("%s: %s" % (source, _lib.text(lib.tconv_runner_last_error(self.handle))),
                     _lib.status_name(st))


def _input_names(runner):
    return [_lib.text(lib.tconv_runner_input_name(runner.handle, i))
            for i in range(lib.tconv_runner_input_count(runner.handle))]


def _set_inputs(runner, feeds, source, kept):
    names = _input_names(runner)
    shown = ", ".join(repr(n) for n in names) or "none"
    unknown = sorted(set(feeds) - set(names))
    if unknown:
        raise Error("%s: the model has no input %s that takes data (its inputs: %s)"
                    % (source, ", ".join(repr(n) for n in unknown), shown))
    for i, name in enumerate(names):
        if name not in feeds:
            raise Error("%s: input '%s' is not fed (the model's inputs: %s)"
                        % (source, name, shown))
        value = feeds[name]
        try:
            array = np.asarray(value, order="C")  # no copy when it already is C-contiguous
        except (TypeError, ValueError) as e:
            raise Error("%s: input '%s': not an array: %s" % (source, name, e)) from None
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        if array.dtype == object:
            raise Error("%s: input '%s': a numpy array of numbers is needed, not %s"
                        % (source, name, type(value).__name__))
        try:
            code = _tconv_dtype(array, lib.tconv_runner_input_dtype(runner.handle, i))
        except Error as e:
            raise Error("%s: input '%s': %s" % (source, name, e.message)) from None
        kept.append(array)  # lent to the runner until it is freed
        dims = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        st = lib.tconv_runner_set_input_borrowed(runner.handle, i, code, array.ndim, dims,
                                                 array.ctypes.data if array.size else None,
                                                 array.nbytes)
        if st != _lib.OK:
            raise runner.fail(st, source)


def _take_outputs(runner, source):
    outputs = {}
    for i in range(lib.tconv_runner_output_count(runner.handle)):
        name = _lib.text(lib.tconv_runner_output_name(runner.handle, i))
        dtype = _numpy_dtype(lib.tconv_runner_output_dtype(runner.handle, i))
        shape = tuple(lib.tconv_runner_output_dim(runner.handle, i, a)
                      for a in range(lib.tconv_runner_output_rank(runner.handle, i)))
        ptr = ctypes.c_void_p()
        nbytes = ctypes.c_size_t()
        st = lib.tconv_runner_take_output(runner.handle, i, ctypes.byref(ptr),
                                          ctypes.byref(nbytes))
        if st != _lib.OK:
            raise runner.fail(st, source)
        if not ptr.value:
            outputs[name] = np.zeros(shape, dtype)
            continue
        raw = np.asarray(_Owned(ptr.value, nbytes.value))
        outputs[name] = raw.view(dtype).reshape(shape)
    return outputs


def run(model, feeds, *, threads=None, convention="onnx", fusion=True, profile=None,
        limits=None):
    """Runs `model` (a path, bytes or an onnx.ModelProto) on `feeds` ({input name: numpy array};
    float16, bfloat16 as uint16 bits or ml_dtypes.bfloat16, float32, float64, int8..int64,
    uint8..uint64, bool) and returns {output name: numpy array}. threads: threads the kernels
    may use (None: one per core); convention: whose ConvTranspose semantics ("onnx", "ort",
    "ort-legacy"); fusion=False runs every node as written; profile: a path to write the run's
    Chrome trace to (onnxruntime's profile layout, as tconv-run --profile); limits: tconv-run's
    --max-* limits as {"file_mb", "tensor_mb", "memory_mb", "depth", "nodes", "work": value}.
    Raises tconv.Error."""
    if not hasattr(feeds, "items"):
        raise Error("feeds must be a dict of input name -> numpy array, not %s"
                    % type(feeds).__name__)
    convention_value = enum_from_name("convention", convention, ("onnx", "ort", "ort-legacy"))
    with Limits(limits, threads) as lim, load(model, lim.handle) as m:
        if profile is not None:
            message = ctypes.create_string_buffer(_lib.MESSAGE_MAX)
            target = os.fsencode(profile)
            if lib.tconv_check_output_path(target, message, _lib.MESSAGE_MAX) != _lib.OK:
                raise Error(_lib.text(message.value))
            if lib.tconv_model_check_output_path(m.handle, target) != _lib.OK:
                raise Error(m.error())
        runner = _Runner(m, lim, convention_value, fusion)
        kept = []
        try:
            _set_inputs(runner, feeds, m.source, kept)
            if profile is not None:
                st = lib.tconv_runner_set_profiling(runner.handle, True)
                if st != _lib.OK:
                    raise runner.fail(st, m.source)
            st = lib.tconv_runner_run(runner.handle)
            if st != _lib.OK:
                raise runner.fail(st, m.source)
            outputs = _take_outputs(runner, m.source)
            if profile is not None:
                st = lib.tconv_runner_write_profile(runner.handle, os.fsencode(profile))
                if st != _lib.OK:
                    raise Error(_lib.text(lib.tconv_runner_last_error(runner.handle)),
                                _lib.status_name(st))
            return outputs
        finally:
            runner.close()
            del kept

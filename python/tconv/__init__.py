"""tconv: legalize the ConvTranspose nodes of ONNX models and run them, from Python.

A thin layer over the shared library libtconv (ctypes; no compiler needed):

    import onnx, tconv
    model, report = tconv.legalize("decoder.onnx", check=3)   # path, bytes or onnx.ModelProto
    onnx.save(model, "decoder.legal.onnx")
    outputs = tconv.run(model, {"z": z})                      # dict of numpy arrays

Every failure raises tconv.Error with the library's message (file, node and field)."""
from ._error import CheckFailed, Error
from ._legalize import legalize
from ._run import run
from ._lib import lib as _clib, text as _text

__version__ = _text(_clib.tconv_version())
__all__ = ["legalize", "run", "Error", "CheckFailed", "__version__"]

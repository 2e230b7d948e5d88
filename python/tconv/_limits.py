"""Limits for untrusted models (tconv/limits.h), as tconv-import's --max-* options."""
import ctypes

from . import _lib
from ._error import Error
from ._lib import lib

MIB = 1 << 20
# key: (tconv_limit, multiplier, largest value); the keys are the CLIs' options without
# "--max-" ("file-mb" -> file_mb)
KEYS = {
    "file_mb": (0, MIB, None),
    "tensor_mb": (1, MIB, None),
    "depth": (2, 1, 1000),
    "nodes": (3, 1, None),
    "memory_mb": (4, MIB, None),
    "work": (6, 1, None),
}
UINT64_MAX = (1 << 64) - 1


class Limits:
    """A tconv_limits handle from {key: value} (None or {}: the library's defaults, handle
    NULL); 0 turns a size or count limit off."""

    def __init__(self, values=None, threads=None):
        self.handle = ctypes.c_void_p()
        values = dict(values or {})
        if not values and threads is None:
            return
        if lib.tconv_limits_new(ctypes.byref(self.handle)) != _lib.OK:
            raise Error("out of memory", "nomem")
        try:
            for key, value in values.items():
                if key not in KEYS:
                    raise Error("unknown limit %r (%s)" % (key, ", ".join(sorted(KEYS))))
                which, scale, cap = KEYS[key]
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise Error("limit %s must be an int >= 0, not %r" % (key, value))
                if cap is not None and value > cap:
                    raise Error("limit %s %d is above the cap of %d (the nesting the stack "
                                "provably holds)" % (key, value, cap))
                self._set(which, min(value * scale, UINT64_MAX))
            if threads is not None:
                if not isinstance(threads, int) or isinstance(threads, bool) or \
                        not 1 <= threads <= 1024:
                    raise Error("threads must be an int from 1 to 1024, not %r" % (threads,))
                self._set(_lib.LIMIT_THREADS, threads)
        except BaseException:
            self.close()
            raise

    def _set(self, which, value):
        if lib.tconv_limits_set(self.handle, which, value) != _lib.OK:
            raise Error(_lib.text(lib.tconv_limits_last_error(self.handle)))

    def close(self):
        if self.handle:
            lib.tconv_limits_free(self.handle)
            self.handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

"""Models crossing into the library: a path, bytes or an onnx.ModelProto in, a ModelProto out."""
import ctypes
import os
import shutil
import tempfile

from . import _lib
from ._error import Error
from ._lib import lib


class Model:
    """An owned tconv_model handle (freed by close(), or by the with-block)."""

    def __init__(self, handle, source):
        self.handle = handle
        self.source = source
        self.folder = None  # a temporary folder holding the model's files, removed by close()
        self.base_dir = None  # the folder external data is relative to

    def close(self):
        if self.handle:
            lib.tconv_model_free(self.handle)
            self.handle = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def error(self):
        return _lib.text(lib.tconv_model_last_error(self.handle))

    def clone(self):
        out = ctypes.c_void_p()
        st = lib.tconv_model_clone(self.handle, ctypes.byref(out))
        if st != _lib.OK:
            raise Error(self.error(), _lib.status_name(st))
        return Model(out, self.source)

    def to_proto(self):
        import onnx
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        st = lib.tconv_model_write_buffer(self.handle, ctypes.byref(data), ctypes.byref(size))
        if st != _lib.OK:
            raise Error(self.error(), _lib.status_name(st))
        try:
            raw = ctypes.string_at(data, size.value)
        finally:
            lib.tconv_free(data)
        proto = onnx.ModelProto()
        proto.ParseFromString(raw)
        if self.base_dir and _external_tensor(proto) is not None:
            # the tensors still in the model's data files come into the proto: it stands alone
            from onnx.external_data_helper import _get_all_tensors, load_external_data_for_model
            load_external_data_for_model(proto, self.base_dir)
            for t in _get_all_tensors(proto):  # as a model that never had external data
                if t.HasField("data_location") and t.data_location == onnx.TensorProto.DEFAULT:
                    t.ClearField("data_location")
        return proto


def _read_file(path, limits=None):
    out = ctypes.c_void_p()
    message = ctypes.create_string_buffer(_lib.MESSAGE_MAX)
    st = lib.tconv_model_read_file(os.fsencode(path), limits, ctypes.byref(out), message,
                                   _lib.MESSAGE_MAX)
    if st != _lib.OK:
        raise Error(_lib.text(message.value), _lib.status_name(st))
    model = Model(out, os.fsdecode(path))
    model.base_dir = os.path.dirname(os.path.abspath(os.fsdecode(path)))
    return model


def _read_bytes(data, limits=None):
    out = ctypes.c_void_p()
    message = ctypes.create_string_buffer(_lib.MESSAGE_MAX)
    buf = ctypes.c_char_p(data)  # borrowed for the call: the library copies what it keeps
    st = lib.tconv_model_read_buffer(buf, len(data), None, limits, ctypes.byref(out), message,
                                     _lib.MESSAGE_MAX)
    if st != _lib.OK:
        raise Error(_lib.text(message.value), _lib.status_name(st))
    return Model(out, "<bytes>")


def _external_tensor(proto):
    """The name of a tensor whose data the proto leaves in a file, or None."""
    import onnx
    from onnx.external_data_helper import _get_all_tensors
    for t in _get_all_tensors(proto):
        if t.data_location == onnx.TensorProto.EXTERNAL and not t.HasField("raw_data"):
            return t.name
    return None


def _read_proto(proto, limits=None):
    """A ModelProto: serialized and read; one over protobuf's 2 GiB is saved with its tensor data
    beside it in a temporary folder and read from there."""
    import onnx
    name = _external_tensor(proto)
    if name is not None:
        raise Error("the ModelProto's tensor '%s' has external data that is not loaded: load the "
                    "model with onnx.load(path) (which loads it), or pass the path" % name, "io")
    try:
        data = proto.SerializeToString()
    except ValueError:  # over 2 GiB: protobuf cannot serialize it whole
        data = None
    if data is not None:
        return _read_bytes(data, limits)
    folder = tempfile.mkdtemp(prefix="tconv-")
    try:
        path = os.path.join(folder, "model.onnx")
        copy = onnx.ModelProto()
        copy.CopyFrom(proto)
        onnx.save_model(copy, path, save_as_external_data=True, location="model.data")
        model = _read_file(path, limits)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    model.source = "<ModelProto>"
    model.folder = folder  # the model may read its data files until it is closed
    return model


def load(model, limits=None):
    """A Model from a path (str, bytes path-like), bytes/bytearray/memoryview of a serialized
    model, or an onnx.ModelProto."""
    if isinstance(model, (str, os.PathLike)):
        return _read_file(model, limits)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _read_bytes(bytes(model), limits)
    try:
        import onnx
    except ImportError:
        onnx = None
    if onnx is not None and isinstance(model, onnx.ModelProto):
        return _read_proto(model, limits)
    raise Error("model must be a path, bytes or an onnx.ModelProto, not %s"
                % type(model).__name__)

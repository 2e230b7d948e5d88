"""Shared by the package's tests: where the CLIs are, the golden suites, reading test data.

The package under test is the one on sys.path (scripts/test-python.sh puts the build tree's
build/test/python first); the CLIs are those of the same build (TCONV_BUILD, default
build/test), so that both run the same libtconv."""
import glob
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TCONV_BUILD", os.path.join(ROOT, "build", "test"))
IMPORT = os.path.join(BUILD, "tconv-import")
RUN = os.path.join(BUILD, "tconv-run")
GOLDEN = os.path.join(ROOT, "tests", "golden")
# The suites whose models hold ConvTranspose nodes to legalize; every suite is run.
CONV_SUITES = ["convtranspose", "matrix", "ort_conventions", "dynamic_output_shape", "dtypes"]
ALL_SUITES = sorted(os.path.basename(d) for d in glob.glob(os.path.join(GOLDEN, "*"))
                    if os.path.isdir(d))


def cases(suites):
    found = []
    for suite in suites:
        for model in sorted(glob.glob(os.path.join(GOLDEN, suite, "*", "model.onnx"))):
            found.append(os.path.relpath(os.path.dirname(model), GOLDEN))
    return found


def data_sets(case_dir):
    sets = glob.glob(os.path.join(case_dir, "test_data_set_*"))
    return sorted(sets, key=lambda s: int(s.rsplit("_", 1)[1]))


def load_pb(path):
    """A TensorProto file as a numpy array; bfloat16 as its uint16 bits (what tconv.run takes)."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == onnx.TensorProto.BFLOAT16:
        if t.raw_data:
            bits = np.frombuffer(t.raw_data, dtype="<u2")
        else:
            bits = np.array(t.int32_data, dtype=np.int64).astype(np.uint16)
        return bits.reshape(tuple(t.dims)).copy()
    return numpy_helper.to_array(t)


def data_inputs(model_path):
    """The graph inputs that take data, in order (input_N.pb feeds the Nth)."""
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits]


def cli(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


def same_array(a, b):
    """Bit for bit: dtype, shape and every value (NaN equal to NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return np.array_equal(a.view(np.uint8) if a.dtype == np.bool_ else a,
                          b.view(np.uint8) if b.dtype == np.bool_ else b,
                          equal_nan=a.dtype.kind == "f")


@pytest.fixture(scope="session", autouse=True)
def built_tools():
    for tool in (IMPORT, RUN):
        if not os.access(tool, os.X_OK):
            pytest.exit("%s is not built (run scripts/test-python.sh, which builds)" % tool, 2)

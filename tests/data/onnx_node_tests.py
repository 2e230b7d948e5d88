"""The vendored ONNX v1.22.0 node tests (tests/data/onnx-node-tests-v1.22.0.tar.xz), for the
Python generators of tests/golden and models/ (MANIFEST.md here says where the data came from).

    sys.path.insert(0, <repo>/tests/data); import onnx_node_tests
    root = onnx_node_tests.node_tests_dir(args.node_tests, "test_convtranspose")

node_tests_dir(given, prefix) returns a folder that directly holds the test_* folders: `given`
when set (e.g. BUILD/onnx-node-tests-v1.22.0, which CMake unpacks), else $TCONV_ONNX_NODE_TESTS
when set, else a temporary folder (removed at exit) into which the tests whose names start with
`prefix` are unpacked from the archive with Python's tarfile.
"""
import atexit
import os
import shutil
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ARCHIVE = os.path.join(HERE, "onnx-node-tests-v1.22.0.tar.xz")
TOP = "onnx-node-tests-v1.22.0"


def node_tests_dir(given=None, prefix="test_"):
    given = given or os.environ.get("TCONV_ONNX_NODE_TESTS")
    if given:
        if not os.path.isdir(given):
            sys.exit("%s: not a folder of ONNX node tests" % given)
        return given
    tmp = tempfile.mkdtemp(prefix="tconv-onnx-node-tests-")
    atexit.register(shutil.rmtree, tmp, True)
    want = TOP + "/" + prefix
    with tarfile.open(ARCHIVE, "r:xz") as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith(want) and (m.isfile() or m.isdir())]
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 (and backports)
            tar.extractall(tmp, members=members, filter="data")
        else:  # the archive is ours and holds only plain files and folders (checked above)
            tar.extractall(tmp, members=members)
    return os.path.join(tmp, TOP)

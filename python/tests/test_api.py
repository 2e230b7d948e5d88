"""tconv's Python API beyond the golden suites: inputs (path, bytes, ModelProto, external data),
dtypes, profiles, python3 -m tconv against tconv-import, and bad input: every failure is a
tconv.Error with the library's message, and failing calls leak neither file descriptors nor
memory."""
import gc
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper, TensorProto

import tconv
from conftest import GOLDEN, IMPORT, ROOT, RUN, cli, load_pb, same_array

KERAS = os.path.join(ROOT, "models", "keras_decoder", "model.onnx")
DCGAN = os.path.join(ROOT, "models", "dcgan_generator", "model.onnx")
SAME = os.path.join(GOLDEN, "convtranspose", "same_upper_k3_s2_odd_total")


def keras_feeds(seed=0):
    rng = np.random.default_rng(seed)
    return {"z": rng.uniform(-1, 1, (2, 128, 7, 5)).astype(np.float32)}


def test_version_is_the_library_s():
    done = cli(IMPORT, "--version")
    assert done.stdout.split()[-1] == tconv.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", tconv.__version__)


def test_model_as_path_bytes_and_proto():
    with open(KERAS, "rb") as f:
        data = f.read()
    by_path, report = tconv.legalize(KERAS)
    by_bytes, report_bytes = tconv.legalize(data)
    by_proto, _ = tconv.legalize(onnx.load(KERAS))
    assert by_path == by_bytes == by_proto
    assert [r["node"] for r in report["rewritten"]] == ["deconv1", "deconv2", "deconv3",
                                                        "deconv4"]
    assert report_bytes["rewritten"] == report["rewritten"]
    assert tconv.legalize(bytearray(data))[0] == by_path
    onnx.checker.check_model(by_path)


def test_external_data(tmp_path):
    """A model whose weights live in an external file: by path, and as the ModelProto
    onnx.load gives (data loaded); a proto whose external data is not loaded is refused."""
    proto = onnx.load(KERAS)
    path = tmp_path / "ext.onnx"
    onnx.save_model(proto, str(path), save_as_external_data=True, location="ext.data",
                    size_threshold=0)
    assert (tmp_path / "ext.data").stat().st_size > 0
    want, _ = tconv.legalize(KERAS)
    got, _ = tconv.legalize(str(path))
    assert got == want
    # onnx.load sets data_location = DEFAULT on the tensors it loaded; tconv keeps the field
    loaded = tconv.legalize(onnx.load(str(path)))[0]
    from onnx.external_data_helper import _get_all_tensors
    for t in _get_all_tensors(loaded):
        t.ClearField("data_location")
    assert loaded == want
    feeds = keras_feeds()
    assert same_array(tconv.run(str(path), feeds)["image"], tconv.run(KERAS, feeds)["image"])
    unloaded = onnx.load(str(path), load_external_data=False)
    with pytest.raises(tconv.Error, match="external data that is not loaded"):
        tconv.legalize(unloaded)


def test_check_report_and_dims():
    model, report = tconv.legalize(os.path.join(ROOT, "models", "dynamic_same", "model.onnx"),
                                   check=2, dims={"N": 1, "H": 5, "W": 4}, seed=3)
    assert report["proof"]["whole_model"]["status"] == "proven"
    assert all(r["proven"] for r in report["proof"]["rewrites"])
    with pytest.raises(tconv.Error, match=r"missing: input 'x': N, H, W"):
        tconv.legalize(os.path.join(ROOT, "models", "dynamic_same", "model.onnx"), check=1)
    with pytest.raises(tconv.Error, match="no dynamic dim of that name"):
        tconv.legalize(KERAS, dims={"Q": 3})


def test_policy_convention_and_target():
    valid_only, _ = tconv.legalize(SAME + "/model.onnx", policy="valid-only")
    ort, report = tconv.legalize(SAME + "/model.onnx", convention="ort")
    assert report["convention"] == "ort"
    for bad in ({"policy": "nope"}, {"convention": "nope"}, {"check": -1}, {"seed": -2}):
        with pytest.raises(tconv.Error):
            tconv.legalize(KERAS, **bad)
    if not tconv._lib.has("tconv_pipeline_set_target"):
        with pytest.raises(tconv.Error, match="this libtconv has no backend targets"):
            tconv.legalize(KERAS, target="any")
    else:
        with pytest.raises(tconv.Error):
            tconv.legalize(KERAS, target="no-such-target")


def test_run_outputs_cross_without_copies():
    feeds = keras_feeds()
    out = tconv.run(KERAS, feeds)["image"]
    assert out.dtype == np.float32 and out.shape == (2, 1, 56, 40)
    # the array views the buffer the runner handed over; nothing copied it
    assert not out.flags["OWNDATA"]
    base = out
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert type(base).__name__ == "_Owned"
    # a transposed (not contiguous) feed is copied once and gives the same result
    z = np.ascontiguousarray(feeds["z"].transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not z.flags["C_CONTIGUOUS"]
    assert same_array(tconv.run(KERAS, {"z": z})["image"], out)
    assert same_array(tconv.run(KERAS, feeds, threads=1, fusion=False)["image"].round(3),
                      out.round(3))


@pytest.mark.parametrize("dtype,code", [(np.float16, TensorProto.FLOAT16),
                                        (np.float64, TensorProto.DOUBLE),
                                        (np.int32, TensorProto.INT32),
                                        (np.int64, TensorProto.INT64),
                                        (np.uint8, TensorProto.UINT8),
                                        (np.int8, TensorProto.INT8),
                                        (np.bool_, TensorProto.BOOL),
                                        (np.uint16, TensorProto.BFLOAT16)])
def test_dtypes_round_trip(dtype, code):
    """Identity of each dtype: the bits come back (bfloat16 as its uint16 bits)."""
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", code, [2, 3])],
                              [helper.make_tensor_value_info("y", code, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = (np.arange(6).reshape(2, 3) % 2 == 1) if dtype == np.bool_ else \
        np.arange(6, dtype=dtype).reshape(2, 3)
    y = tconv.run(model, {"x": x})["y"]
    assert y.dtype == x.dtype and np.array_equal(y, x)


def test_profile(tmp_path):
    path = tmp_path / "trace.json"
    tconv.run(DCGAN, {"z": np.zeros((2, 100, 1, 1), np.float32)}, profile=str(path))
    with open(path) as f:
        events = json.load(f)
    nodes = {e["args"]["node_name"] for e in events if e["cat"] == "Node"}
    assert nodes == {n.name for n in onnx.load(DCGAN).graph.node}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    with pytest.raises(tconv.Error, match=re.escape(str(tmp_path))):
        tconv.run(DCGAN, {"z": np.zeros((2, 100, 1, 1), np.float32)}, profile=str(tmp_path))
    with pytest.raises(tconv.Error, match="model.onnx"):
        tconv.run(DCGAN, {"z": np.zeros((2, 100, 1, 1), np.float32)}, profile=DCGAN)


# ---------------------------------------------------------------- a wrong rewrite

CORRUPT = '''
import ctypes
from tconv import _legalize, _lib
lib = _lib.lib
for name, res, args in (
        ("tconv_graph_first_node", ctypes.c_void_p, [ctypes.c_void_p]),
        ("tconv_node_next", ctypes.c_void_p, [ctypes.c_void_p]),
        ("tconv_node_op_type", ctypes.c_char_p, [ctypes.c_void_p]),
        ("tconv_attr_set_ints", ctypes.c_int,
         [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t])):
    getattr(lib, name).restype = res
    getattr(lib, name).argtypes = args
real_pipeline = _legalize._run_pipeline


def wrong_pipeline(model, *args):
    # the real pipeline, then the first ConvTranspose given dilations 2: a wrong rewrite
    report = real_pipeline(model, *args)
    node = lib.tconv_graph_first_node(lib.tconv_model_graph(model.handle))
    while node and lib.tconv_node_op_type(node) != b"ConvTranspose":
        node = lib.tconv_node_next(node)
    assert lib.tconv_attr_set_ints(node, b"dilations", (ctypes.c_int64 * 2)(2, 2), 2) == 0
    return report


_legalize._run_pipeline = wrong_pipeline
'''


def test_wrong_rewrite_raises_check_failed(tmp_path):
    """A rewrite made wrong on purpose (after the pipeline): check=N raises tconv.CheckFailed
    whose report holds the proof that says where, and python3 -m tconv exits 1 writing the
    report but not the model, as tconv-import does."""
    from tconv import _legalize
    namespace = {}
    exec(CORRUPT, namespace)
    try:
        with pytest.raises(tconv.CheckFailed) as info:
            tconv.legalize(KERAS, check=1)
    finally:
        _legalize._run_pipeline = namespace["real_pipeline"]
    assert "node 'deconv1' alone" in info.value.message
    proof = info.value.report["proof"]
    assert not proof["rewrites"][0]["proven"] and proof["rewrites"][0]["runs"] == 1
    assert proof["whole_model"]["status"] == "mismatch"
    assert tconv.legalize(KERAS, check=1)[1]["proof"]["whole_model"]["status"] == "proven"
    out, report = tmp_path / "out.onnx", tmp_path / "report.json"
    program = CORRUPT + "\nimport sys\nfrom tconv.__main__ import main\nsys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", program, KERAS, "-o", str(out), "--check", "1",
                           "--report", str(report)], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "was not written" in done.stderr and not out.exists()
    with open(report) as f:
        assert json.load(f)["proof"]["whole_model"]["status"] == "mismatch"


# ---------------------------------------------------------------- bad input


def _truncated():
    with open(KERAS, "rb") as f:
        return f.read()[:500]


def _bad_calls(tmp_path):
    """Each failing call, with what its Error must say."""
    feeds = keras_feeds()
    return [
        (lambda: tconv.legalize(_truncated()), "parse", None),
        (lambda: tconv.run(_truncated(), feeds), "parse", None),
        (lambda: tconv.legalize(str(tmp_path / "nope.onnx")), "io", "nope.onnx"),
        (lambda: tconv.run(str(tmp_path / "nope.onnx"), feeds), "io", "nope.onnx"),
        (lambda: tconv.run(KERAS, {"z": feeds["z"].astype(np.float64)}), "invalid",
         "input 'z': dtype double given, the graph declares float"),
        (lambda: tconv.run(KERAS, {"z": feeds["z"][:1]}), "invalid", "input 'z': dim 0"),
        (lambda: tconv.run(KERAS, {}), "usage", "input 'z' is not fed"),
        (lambda: tconv.run(KERAS, dict(feeds, w=feeds["z"])), "usage", "no input 'w'"),
        (lambda: tconv.run(KERAS, {"z": np.array(["a"])}), "usage", "no tconv counterpart"),
        (lambda: tconv.run(KERAS, feeds, threads=0), "usage", "threads"),
        (lambda: tconv.run(KERAS, {"z": [[1, 2], [3]]}), "usage", "input 'z': not an array"),
        (lambda: tconv.run(KERAS, None), "usage", "feeds must be a dict"),
        (lambda: tconv.legalize(12), "usage", "path, bytes or an onnx.ModelProto"),
    ]


def test_bad_input_raises_error(tmp_path):
    for call, status, text in _bad_calls(tmp_path):
        with pytest.raises(tconv.Error) as info:
            call()
        assert info.value.status == status, info.value.message
        if text:
            assert text in info.value.message
    with pytest.raises(tconv.Error) as info:
        tconv.legalize(_truncated())
    assert info.value.message  # the library's own words, not empty


def test_unsupported_op_names_the_node():
    model = os.path.join(ROOT, "tests", "cli", "data", "missing_ops.onnx")
    with pytest.raises(tconv.Error) as info:
        tconv.run(model, {})
    assert info.value.node is not None and info.value.node in info.value.message


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_failing_calls_leak_nothing(tmp_path):
    """Every failing call 300 times: no file descriptor stays open and the resident memory does
    not grow with the calls (a leak of the model, runner or report of each call, some 10 KiB to
    1 MiB each, would add 3 to 300 MiB)."""
    calls = _bad_calls(tmp_path)

    def round_of(n):
        for _ in range(n):
            for call, _, _ in calls:
                try:
                    call()
                except tconv.Error:
                    pass
        gc.collect()

    round_of(30)  # warm up: caches, lazily loaded modules
    fds, rss = _fds(), _rss_kib()
    round_of(300)
    assert _fds() == fds
    grown = _rss_kib() - rss
    assert grown < 4096, "resident memory grew by %d KiB over %d failing calls" % (
        grown, 300 * len(calls))


def test_successful_calls_leak_nothing():
    feeds = keras_feeds()
    for _ in range(20):
        tconv.run(KERAS, feeds)
        tconv.legalize(KERAS)
    gc.collect()
    fds, rss = _fds(), _rss_kib()
    for _ in range(200):
        tconv.run(KERAS, feeds)
        tconv.legalize(KERAS)
    gc.collect()
    assert _fds() == fds
    assert _rss_kib() - rss < 4096


# ---------------------------------------------------------------- python3 -m tconv


def _module(*args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "tconv"] + [str(a) for a in args],
                          capture_output=True, text=True, env=env)


def test_module_cli_equals_tconv_import(tmp_path):
    for flags in ([], ["--policy", "valid-only"], ["--convention", "ort"],
                  ["--check", "2", "--seed", "7"]):
        mine, theirs = tmp_path / "py.onnx", tmp_path / "c.onnx"
        done = _module(KERAS, "-o", mine, "--report", tmp_path / "py.json", "--quiet", *flags)
        assert done.returncode == 0, done.stderr
        assert cli(IMPORT, KERAS, "-o", theirs, "--report", tmp_path / "c.json", "--quiet",
                   *flags).returncode == 0
        assert onnx.load(str(mine)) == onnx.load(str(theirs))
        with open(tmp_path / "py.json") as a, open(tmp_path / "c.json") as b:
            assert json.load(a) == json.load(b)


def test_limits():
    with pytest.raises(tconv.Error) as info:
        tconv.legalize(KERAS, limits={"nodes": 2})
    assert info.value.status == "limit" and "more than 2 nodes" in info.value.message
    with pytest.raises(tconv.Error) as info:
        tconv.run(KERAS, keras_feeds(), limits={"memory_mb": 1})
    assert info.value.status == "limit" and "memory limit" in info.value.message
    for bad in ({"nope": 1}, {"depth": 5000}, {"work": -1}):
        with pytest.raises(tconv.Error):
            tconv.legalize(KERAS, limits=bad)
    assert tconv.legalize(KERAS, limits={"file_mb": 0, "tensor_mb": 0})[1]["rewritten"]
    done = _module(KERAS, "--max-nodes", "2", "-o", "/tmp/never.onnx")
    theirs = cli(IMPORT, KERAS, "--max-nodes=2", "-o", "/tmp/never.onnx")
    assert done.returncode == theirs.returncode == 2
    assert "more than 2 nodes" in done.stderr and "a limit was reached" in done.stderr
    assert not os.path.exists("/tmp/never.onnx")


@pytest.mark.parametrize("args,code,text", [
    ([], 2, "no input model"),
    ([KERAS, "--frobnicate"], 2, "unknown option '--frobnicate'"),
    ([KERAS, "--check", "0"], 2, "bad value"),
    ([KERAS, "--max-work", "-3"], 2, "--max-work needs a non-negative integer"),
    ([KERAS, "-o"], 2, "needs a value"),
    (["/nonexistent/x.onnx", "-o", "/tmp/never.onnx"], 2, "x.onnx"),
    ([KERAS, "--dry-run", "-o", "x.onnx"], 2, "--dry-run writes nothing"),
    ([KERAS, "--help"], 0, ""),
    ([KERAS, "--version"], 0, ""),
    ([KERAS], 0, ""),
])
def test_module_cli_exit_codes(args, code, text):
    done = _module(*args)
    assert done.returncode == code, done.stderr
    assert text in done.stderr
    assert not os.path.exists("/tmp/never.onnx")


def test_module_cli_writes_nothing_on_bad_input(tmp_path):
    out = tmp_path / "out.onnx"
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(_truncated())
    done = _module(bad, "-o", out)
    assert done.returncode == 2 and "bad.onnx" in done.stderr
    assert not out.exists() and os.listdir(tmp_path) == ["bad.onnx"]


# ---------------------------------------------------------------- the README's example


def test_readme_example_runs_as_written(tmp_path):
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README.md has no python example"
    example = blocks[0]
    assert len(example.strip().splitlines()) == 5
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "proven" in done.stdout

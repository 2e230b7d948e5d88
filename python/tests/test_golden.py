"""The golden suites (tests/golden/*) through tconv.legalize and tconv.run, equal to what the
CLIs give on the same inputs: tconv-import's converted model and --report (and --check's proof),
tconv-run's outputs bit for bit (both with one thread), and the same failures."""
import json
import os

import numpy as np
import onnx
import pytest

import tconv
from conftest import (CONV_SUITES, ALL_SUITES, GOLDEN, IMPORT, RUN, cases, cli, data_inputs,
                      data_sets, load_pb, same_array)


def _legalize_both(tmp_path, model, *flags, **kwargs):
    out, report = tmp_path / "cli.onnx", tmp_path / "cli.json"
    done = cli(IMPORT, model, "-o", out, "--report", report, "--quiet", *flags)
    try:
        got = tconv.legalize(model, **kwargs)
    except tconv.Error as e:
        assert done.returncode == 2, done.stderr
        assert e.message in done.stderr
        return None, None
    assert done.returncode == 0, done.stderr
    with open(report) as f:
        return got, (onnx.load(str(out)), json.load(f))


@pytest.mark.parametrize("case", cases(CONV_SUITES))
def test_legalize_equals_tconv_import(tmp_path, case):
    model = os.path.join(GOLDEN, case, "model.onnx")
    got, want = _legalize_both(tmp_path, model)
    if got is None:
        return
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert got[1]["model"] == model


@pytest.mark.parametrize("case", cases(["convtranspose", "dynamic_output_shape"]))
def test_legalize_check_equals_tconv_import_check(tmp_path, case):
    """The proof too: seeded inputs, the same errors; valid-only rewrites more nodes."""
    model = os.path.join(GOLDEN, case, "model.onnx")
    m = onnx.load(model)
    dims = {d.dim_param: 3 for i in m.graph.input for d in i.type.tensor_type.shape.dim
            if d.dim_param}
    flags = ["--check", "2", "--seed", "4", "--policy", "valid-only"]
    for name, value in dims.items():
        flags += ["--dim", "%s=%d" % (name, value)]
    got, want = _legalize_both(tmp_path, model, *flags, check=2, seed=4, policy="valid-only",
                               dims=dims)
    if got is None:
        return
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert got[1]["proof"]["whole_model"]["status"] == "proven"


def _run_both(tmp_path, model, data_set, **kwargs):
    names = data_inputs(model)
    feeds = {n: load_pb(os.path.join(data_set, "input_%d.pb" % k)) for k, n in enumerate(names)}
    flags = []
    for k, n in enumerate(names):
        flags += ["--input", "%s=%s" % (n, os.path.join(data_set, "input_%d.pb" % k))]
    if not kwargs.get("fusion", True):
        flags.append("--no-fusion")
    saved = tmp_path / "saved"
    done = cli(RUN, model, "--threads", "1", "--save-outputs", saved, *flags)
    try:
        got = tconv.run(model, feeds, threads=1, **kwargs)
    except tconv.Error as e:
        assert done.returncode == 2, done.stdout + done.stderr
        assert e.message in done.stderr
        return 0
    assert done.returncode == 0, done.stderr
    out_names = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
    assert list(got) == out_names
    for k, name in enumerate(out_names):
        want = load_pb(os.path.join(saved, "output_%d.pb" % k))
        assert same_array(got[name], want), (name, got[name], want)
    return 1


@pytest.mark.parametrize("case", cases(ALL_SUITES))
def test_run_equals_tconv_run(tmp_path, case):
    model = os.path.join(GOLDEN, case, "model.onnx")
    for data_set in data_sets(os.path.join(GOLDEN, case)):
        _run_both(tmp_path, model, data_set)


@pytest.mark.parametrize("case", cases(["convtranspose"]))
def test_run_legalized_equals_tconv_run(tmp_path, case):
    """The legalized model run fused and as written, from the ModelProto legalize returns,
    against tconv-run on tconv-import's file."""
    model = os.path.join(GOLDEN, case, "model.onnx")
    converted = tmp_path / "converted.onnx"
    assert cli(IMPORT, model, "-o", converted, "--quiet").returncode == 0
    proto, _ = tconv.legalize(model)
    for data_set in data_sets(os.path.join(GOLDEN, case)):
        assert _run_both(tmp_path, str(converted), data_set) == 1
        assert _run_both(tmp_path, str(converted), data_set, fusion=False) == 1
        names = data_inputs(str(converted))
        feeds = {n: load_pb(os.path.join(data_set, "input_%d.pb" % k))
                 for k, n in enumerate(names)}
        from_file = tconv.run(str(converted), feeds, threads=1)
        from_proto = tconv.run(proto, feeds, threads=1)
        assert all(same_array(from_file[k], from_proto[k]) for k in from_file)

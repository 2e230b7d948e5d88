"""Shared by the op-case generators here (generate_rnn.py, generate_control.py): ONNX's own node
test cases from onnx.backend.test.case.node, and writing ONNX test directories and the .tsv
lists tests/runtime/tests.cmake reads. Import it before numpy: it pins the BLAS to one thread
(a threaded BLAS sums in varying order, and the generated files must not change run to run)."""
import os
import shutil
import sys

if "numpy" not in sys.modules:  # too late once numpy (its BLAS) is loaded: leave it then
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

for _alias, _type in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if _alias not in np.__dict__:  # onnx 1.12's case files use aliases numpy 1.24 removed
        setattr(np, _alias, _type)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from onnx.backend.test.case import node as onnx_node_cases  # noqa: E402


def onnx_cases(op_classes):
    """The TestCases of ONNX's case classes, e.g. [("LSTM", lstm.LSTM)]. collect_testcases imports
    the case modules once (one op per process), so the export functions are called here, with
    the global numpy generator seeded (onnx's case code draws from it)."""
    for op, cls in op_classes:
        onnx_node_cases._TargetOpType = op
        before = len(onnx_node_cases._NodeTestCases)
        for key in sorted(dir(cls)):
            if key.startswith("export"):
                np.random.seed(14)
                getattr(cls, key)()
        yield from onnx_node_cases._NodeTestCases[before:]


def write_dir(root, name, model, ins, outs):
    """root/name/model.onnx and test_data_set_0/{input,output}_N.pb (inputs: the graph inputs
    that are not initializers)."""
    onnx.checker.check_model(model)
    d = os.path.join(root, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    inits = {t.name for t in model.graph.initializer}
    gin = [vi for vi in model.graph.input if vi.name not in inits]
    assert len(gin) == len(ins) and len(model.graph.output) == len(outs), name
    for kind, vals, decl in (("input", ins, gin), ("output", outs, model.graph.output)):
        for k, (v, vi) in enumerate(zip(vals, decl)):
            t = numpy_helper.from_array(np.asarray(v), vi.name)
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(t.SerializeToString())


def write_tsv(path, cases, ops):
    """One row per (name, model, ins, outs) case for tests/runtime/tests.cmake (columns: case,
    op (the first node whose op is in `ops`), opset, dtypes, rtol, atol, what; empty
    tolerances: tconv-run's defaults)."""
    with open(path, "w") as f:
        f.write("case\top\topset\tdtypes\trtol\tatol\twhat\n")
        for name, model, ins, outs in cases:
            op = next(n.op_type for n in model.graph.node if n.op_type in ops)
            opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
            dt = sorted({str(np.asarray(v).dtype) for v in list(ins) + list(outs)})
            f.write("%s\t%s\t%d\t%s\t\t\t%s\n" % (name, op, opset, ",".join(dt),
                                                  name.replace("_", " ")))

#!/usr/bin/python3
"""PyTorch reference figures for bench/ (Debian python3-torch 1.13, numpy, python3-onnx).

  torch_ref.py kernels --threads N [--runs R]
  torch_ref.py models  --threads N [--runs R] [--models-dir DIR]

Prints one JSON object a line, the same keys as the C programs, with "impl" naming PyTorch and
the BLAS library actually mapped into this process (read from /proc/self/maps after a warm-up,
so LD_LIBRARY_PATH choices made by bench/run.sh are reported as they really are).

"models" runs the ONNX graph of models/<name>/model.onnx in PyTorch through a small ONNX->torch
interpreter (the ops of dcgan_generator and unet), checks it against the model's golden output
first, then times batch 1 and 8 (inputs from a fixed seed).
"""
import argparse
import json
import os
import re
import resource
import statistics
import sys
import time

import numpy as np


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["kernels", "models", "info"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--models-dir", default=os.path.join(os.path.dirname(__file__), "..", "models"))
    ap.add_argument("--models", default="dcgan_generator,unet")
    ap.add_argument("--batches", default="1,8")
    return ap.parse_args()


ARGS = parse_args()
# OpenBLAS and OpenMP read their thread counts at load time: set them before importing torch.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(ARGS.threads)
torch.backends.mkldnn.enabled = True


def load_avg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def blas_name():
    """The BLAS library this process really uses (after torch ran a GEMM)."""
    a = torch.randn(64, 64)
    (a @ a).sum()
    x = torch.randn(1, 4, 8, 8)
    F.conv_transpose2d(x, torch.randn(4, 4, 3, 3))
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if "/" in line else ""
            if re.search(r"blas|mkl", os.path.basename(path)):
                libs.add(os.path.realpath(path))
    names = []
    for p in sorted(libs):
        base = os.path.basename(p)
        if "openblas" in base:
            m = re.search(r"r(\d+\.\d+\.\d+)", base)
            flavour = os.path.basename(os.path.dirname(p)).replace("openblas-", "")
            names.append("OpenBLAS %s (%s)" % (m.group(1) if m else "?", flavour))
        elif base.startswith("libblas"):
            names.append("reference BLAS (netlib %s)" % base.split(".so.")[-1])
        else:
            names.append(base)
    # libblas.so.3 from openblas-pthread also maps libopenblas: keep the OpenBLAS name only.
    if any(n.startswith("OpenBLAS") for n in names):
        names = [n for n in names if n.startswith("OpenBLAS")]
    return "+".join(sorted(set(names))) or "unknown"


def busy_cpu_s():
    """CPU seconds all CPUs spent busy (user, nice, system, irq, softirq, steal) since boot."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def own_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


MIN_WINDOW_S = 0.5
OTHERS_CPU = -1.0  # cores other processes used during the last median_ms (see bench_common.h)


def median_ms(fn, runs, warmup=5, budget_s=8.0):
    global OTHERS_CPU
    with torch.no_grad():
        for _ in range(warmup):
            fn()
        times = []
        busy0, own0, wall0 = busy_cpu_s(), own_cpu_s(), time.perf_counter()
        start = time.perf_counter()
        while True:
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            times.append((t1 - t0) * 1e3)
            if len(times) >= 5 and t1 - start > budget_s:
                break
            # at least MIN_WINDOW_S: the others-CPU meter counts 10 ms ticks (bench_common.c)
            if len(times) >= runs and t1 - start >= MIN_WINDOW_S:
                break
        wall = time.perf_counter() - wall0
        others = (busy_cpu_s() - busy0) - (own_cpu_s() - own0)
        OTHERS_CPU = max(0.0, others / wall) if wall > 0 else -1.0
    return statistics.median(times)


def emit(obj):
    obj["load"] = load_avg()
    if "ms" in obj:
        obj["others_cpu"] = round(OTHERS_CPU, 2)
    print(json.dumps(obj), flush=True)


BLAS = None


def info():
    emit({"bench": "info", "torch": torch.__version__, "blas": BLAS,
          "threads": torch.get_num_threads(),
          "blas_info": re.findall(r"BLAS_INFO=(\w+)", torch.__config__.show()),
          "mkldnn": torch.backends.mkldnn.is_available()})


def kernels():
    flops = 2.0 * 64 * 32 * 16 * 64 * 64
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 64, 64, 64, generator=g) * 2 - 1
    w = (torch.rand(64, 32, 4, 4, generator=g) * 2 - 1) * 0.05
    ms = median_ms(lambda: F.conv_transpose2d(x, w, stride=2, padding=1), ARGS.runs)
    emit({"bench": "kernel", "case": "workloadA_convtranspose", "impl": "torch+" + BLAS,
          "threads": ARGS.threads, "ms": ms, "gflops": flops / (ms * 1e6)})
    # The forward Conv of the same FLOPs (workload A's adjoint), on oneDNN (mkldnn).
    xf = torch.rand(1, 32, 128, 128, generator=g) * 2 - 1
    wf = (torch.rand(64, 32, 4, 4, generator=g) * 2 - 1) * 0.05
    assert F.conv2d(xf, wf, stride=2, padding=1).shape == (1, 64, 64, 64)
    ms = median_ms(lambda: F.conv2d(xf, wf, stride=2, padding=1), ARGS.runs)
    emit({"bench": "kernel", "case": "workloadA_forward_conv", "impl": "torch-oneDNN",
          "threads": ARGS.threads, "ms": ms, "gflops": flops / (ms * 1e6)})


# ---------------------------------------------------------------- a small ONNX -> torch interpreter

def attrs_of(node):
    import onnx
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def spatial_pads(pads, rank):
    begin, end = list(pads[:rank]), list(pads[rank:])
    return begin, end


def run_conv(t, a, transpose):
    x, w = t[0], t[1]
    b = t[2] if len(t) > 2 else None
    rank = x.dim() - 2
    strides = a.get("strides", [1] * rank)
    dil = a.get("dilations", [1] * rank)
    group = a.get("group", 1)
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("auto_pad")
    begin, end = spatial_pads(a.get("pads", [0] * (2 * rank)), rank)
    if transpose:
        if begin != end:
            raise NotImplementedError("asymmetric ConvTranspose pads")
        op = a.get("output_padding", [0] * rank)
        fn = [None, F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][rank]
        return fn(x, w, b, stride=strides, padding=begin, output_padding=op, groups=group,
                  dilation=dil)
    fn = [None, F.conv1d, F.conv2d, F.conv3d][rank]
    if begin != end:
        flat = []
        for i in reversed(range(rank)):
            flat += [begin[i], end[i]]
        return fn(F.pad(x, flat), w, b, stride=strides, groups=group, dilation=dil)
    return fn(x, w, b, stride=strides, padding=begin, groups=group, dilation=dil)


def run_maxpool(t, a):
    x = t[0]
    rank = x.dim() - 2
    begin, end = spatial_pads(a.get("pads", [0] * (2 * rank)), rank)
    if begin != end:
        raise NotImplementedError("asymmetric MaxPool pads")
    fn = [None, F.max_pool1d, F.max_pool2d, F.max_pool3d][rank]
    return fn(x, a["kernel_shape"], a.get("strides", a["kernel_shape"]), begin,
              ceil_mode=bool(a.get("ceil_mode", 0)))


OPS = {
    "Conv": lambda t, a: run_conv(t, a, False),
    "ConvTranspose": lambda t, a: run_conv(t, a, True),
    "BatchNormalization": lambda t, a: F.batch_norm(t[0], t[3], t[4], t[1], t[2], False, 0.0,
                                                    a.get("epsilon", 1e-5)),
    "Relu": lambda t, a: F.relu(t[0]),
    "Tanh": lambda t, a: torch.tanh(t[0]),
    "Sigmoid": lambda t, a: torch.sigmoid(t[0]),
    "LeakyRelu": lambda t, a: F.leaky_relu(t[0], a.get("alpha", 0.01)),
    "MaxPool": run_maxpool,
    "Concat": lambda t, a: torch.cat(t, dim=a["axis"]),
    "Add": lambda t, a: t[0] + t[1],
    "Mul": lambda t, a: t[0] * t[1],
}


class OnnxTorch:
    """Runs an ONNX graph with torch ops: weights converted once, nodes pre-resolved."""

    def __init__(self, path):
        import onnx
        from onnx import numpy_helper
        model = onnx.load(path)
        g = model.graph
        self.consts = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
                       for i in g.initializer}
        self.inputs = [i.name for i in g.input if i.name not in self.consts]
        self.input_shapes = [[d.dim_value for d in i.type.tensor_type.shape.dim]
                             for i in g.input if i.name not in self.consts]
        self.outputs = [o.name for o in g.output]
        self.nodes = []
        for n in g.node:
            if n.op_type not in OPS:
                raise NotImplementedError(n.op_type)
            self.nodes.append((OPS[n.op_type], list(n.input), list(n.output), attrs_of(n)))

    def __call__(self, *xs):
        env = dict(self.consts)
        env.update(zip(self.inputs, xs))
        for fn, ins, outs, a in self.nodes:
            env[outs[0]] = fn([env[i] for i in ins if i], a)
        return [env[o] for o in self.outputs]


def read_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check_golden(net, model_dir):
    data = os.path.join(model_dir, "test_data_set_0")
    xs = [torch.from_numpy(read_pb(os.path.join(data, "input_%d.pb" % i)).copy())
          for i in range(len(net.inputs))]
    with torch.no_grad():
        ys = net(*xs)
    worst = 0.0
    for i, y in enumerate(ys):
        ref = read_pb(os.path.join(data, "output_%d.pb" % i))
        err = np.abs(y.numpy() - ref)
        if not np.all(err <= 1e-4 + 1e-3 * np.abs(ref)):
            raise SystemExit("torch reference of %s does not match its golden output "
                             "(max err %g)" % (model_dir, err.max()))
        worst = max(worst, float(err.max()))
    return worst


def models():
    for name in ARGS.models.split(","):
        model_dir = os.path.join(ARGS.models_dir, name)
        net = OnnxTorch(os.path.join(model_dir, "model.onnx"))
        err = check_golden(net, model_dir)
        for batch in [int(b) for b in ARGS.batches.split(",")]:
            g = torch.Generator().manual_seed(batch)
            xs = [torch.rand([batch] + s[1:], generator=g) * 2 - 1 for s in net.input_shapes]
            ms = median_ms(lambda: net(*xs), ARGS.runs)
            emit({"bench": "model", "case": "%s_b%d" % (name, batch), "impl": "torch+" + BLAS,
                  "threads": ARGS.threads, "ms": ms, "golden_max_err": err})


BLAS = blas_name()
{"kernels": kernels, "models": models, "info": info}[ARGS.what]()

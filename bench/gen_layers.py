#!/usr/bin/python3
"""Writes single-layer ConvTranspose workloads as ONNX test directories:

  gen_layers.py OUT_DIR           issue 17's workloads, for the onnxruntime side-by-side
                                  benchmark (bench/run.sh runs both runtimes on them)
  gen_layers.py --phase OUT_DIR   the layers of the phase-form benchmark (bench/phase.sh), whose
                                  names it prints
  gen_layers.py --paper OUT_DIR   issue 28's nets at their papers' sizes (bench/run.sh --paper)

  OUT_DIR/convT_256to128_32x32/   ConvTranspose X 1x256x32x32, W 256x128x4x4, stride 2, pads 1
                                  (output 1x128x64x64; 1.07 GFLOP)
  OUT_DIR/workloadA_convT/        ConvTranspose X 1x64x64x64, W 64x32x4x4, stride 2, pads 1
                                  (output 1x32x128x128; 268 MFLOP), bench_kernels' workload A

  OUT_DIR/floor_identity/         one Identity on a 1x1 float tensor: what a run costs with
                                  nothing to compute (each runtime's per-run overhead)

Each ConvTranspose one is model.onnx (opset 17, one ConvTranspose node, W an initializer, no bias) plus
test_data_set_0/input_0.pb and output_0.pb, the golden output computed in float64 by
torch.nn.functional.conv_transpose2d (with pads 1 on both sides, ONNX's ConvTranspose and
PyTorch's padding=1 agree). Inputs in [-1, 1) and weights in [-0.05, 0.05) from a fixed seed.
Debian's python3-onnx 1.12, python3-torch 1.13 and numpy. The files are generated at benchmark
time into the build folder, never committed.

--paper: issue 28's architectures at their papers' sizes, built by models/generate.py's own
modules (seeded weights, torch golden output, opset 13 torch export), which models/ holds at a
quarter of the width (their weights would be tens of MiB):
  OUT_DIR/linknet_paper/   LinkNet, ResNet-18 encoder 64-512 channels, 1x3x256x256 (5.9 GFLOP
                           of Conv)
  OUT_DIR/erfnet_paper/    ERFNet, 16/64/128 channels and the paper's blocks, 1x3x128x256
  OUT_DIR/encodec_paper/   EnCodec's 24 kHz SEANet decoder: 128-d latent, 32 filters (512 at
                           the latent), ratios 8 5 4 2, 2-layer LSTM of 512; one second
                           (75 latent frames)

--phase: OUT_DIR/<layer>/model.onnx is one VALID ConvTranspose (opset 17, W and B initializers)
with test_data_set_0 (X and the golden Y from torch.nn.functional.conv_transpose{1,2,3}d in
float64); seeds 1000 + i. passes.lower_phase (TCONV_PHASE_LOWER_DIR=OUT_DIR) then writes
model_d2s.onnx and model_reshape.onnx beside each model.onnx.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

LAYERS = [
    # name, X dims, W dims, stride, pad
    ("convT_256to128_32x32", (1, 256, 32, 32), (256, 128, 4, 4), 2, 1),
    ("workloadA_convT", (1, 64, 64, 64), (64, 32, 4, 4), 2, 1),
]

PHASE_LAYERS = [
    # name, X dims, W dims, strides, dilations, group
    ("dcgan_k4s2", (1, 256, 16, 16), (256, 128, 4, 4), (2, 2), (1, 1), 1),
    ("unet_k2s2", (1, 128, 32, 32), (128, 64, 2, 2), (2, 2), (1, 1), 1),
    ("k3s2", (1, 64, 32, 32), (64, 64, 3, 3), (2, 2), (1, 1), 1),
    ("k5s4", (1, 64, 24, 24), (64, 32, 5, 5), (4, 4), (1, 1), 1),
    ("k2s3_stride_above_kernel", (1, 64, 32, 32), (64, 32, 2, 2), (3, 3), (1, 1), 1),
    ("k3s2_d2", (1, 64, 32, 32), (64, 32, 3, 3), (2, 2), (2, 2), 1),
    ("depthwise_k4s2", (1, 64, 64, 64), (64, 1, 4, 4), (2, 2), (1, 1), 64),
    ("audio_1d_k16s8", (1, 128, 256), (128, 64, 16), (8,), (1,), 1),
    ("vol_3d_k4s2", (1, 32, 6, 12, 12), (32, 16, 4, 4, 4), (2, 2, 2), (1, 1, 1), 1),
]


def write_tensor(path, array, name):
    t = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def write_test_dir(out_dir, name, graph, x, y):
    """OUT_DIR/name/model.onnx (opset 17) and test_data_set_0 with input x and golden y."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="tconv bench/gen_layers.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    write_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"), x, "x")
    write_tensor(os.path.join(d, "test_data_set_0", "output_0.pb"), y, "y")


def write_convt(out_dir, name, x_dims, w_dims, seed, strides, pad=0, dilations=None, group=None,
                bias=False):
    """One ConvTranspose layer; pads, dilations and group are written only when given."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, x_dims).astype(np.float32)
    w = (rng.uniform(-1, 1, w_dims) * 0.05).astype(np.float32)
    groups = group or 1
    b = rng.uniform(-1, 1, (w_dims[1] * groups,)).astype(np.float32) if bias else None
    fn = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[len(x_dims)]
    y = fn(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
           torch.from_numpy(b).double() if bias else None, stride=strides, padding=pad,
           dilation=dilations or 1, groups=groups).numpy().astype(np.float32)
    attrs = {"kernel_shape": list(w_dims[2:]), "strides": list(strides)}
    if pad:
        attrs["pads"] = [pad] * (2 * len(strides))
    if dilations is not None:
        attrs["dilations"] = list(dilations)
    if group is not None:
        attrs["group"] = group
    inputs = ["x", "w", "b"] if bias else ["x", "w"]
    initializers = [numpy_helper.from_array(w, "w")]
    if bias:
        initializers.append(numpy_helper.from_array(b, "b"))
    node = helper.make_node("ConvTranspose", inputs, ["y"], name="layer", **attrs)
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, y.shape)],
        initializer=initializers)
    write_test_dir(out_dir, name, graph, x, y)


def write_floor(out_dir):
    name = "floor_identity"
    x = np.array([[0.5]], dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="identity")], name,
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, x.shape)])
    write_test_dir(out_dir, name, graph, x, x)


def write_paper_nets(out_dir):
    """The --paper cases, through models/generate.py (imported from this checkout)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "generate.py")
    spec = importlib.util.spec_from_file_location("tconv_models_generate", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    nets = [
        ("linknet_paper", 214, lambda: gen.LinkNet(ncls=5, base=64), [(1, 3, 256, 256)],
         ["image"], ["logits"]),
        ("erfnet_paper", 215, lambda: gen.ERFNet(ncls=20, w=(16, 64, 128), paper=True),
         [(1, 3, 128, 256)], ["image"], ["logits"]),
        ("encodec_paper", 216, lambda: gen.SEANetDecoder(dim=128, ch=32, ratios=(8, 5, 4, 2)),
         [(1, 128, 75)], ["latent"], ["audio"]),
    ]
    for name, seed, ctor, shapes, ins, outs in nets:
        model, datasets = gen.torch_case(seed, ctor, shapes, ins, outs, 13)
        gen.write_case(out_dir, name, model, datasets)
        print(name)


def main():
    args = sys.argv[1:]
    phase = args[:1] == ["--phase"]
    paper = args[:1] == ["--paper"]
    if phase or paper:
        args = args[1:]
    if len(args) != 1:
        raise SystemExit("usage: gen_layers.py [--phase | --paper] OUT_DIR")
    if paper:
        os.makedirs(args[0], exist_ok=True)
        write_paper_nets(args[0])
        return
    if phase:
        for i, (name, x_dims, w_dims, strides, dilations, group) in enumerate(PHASE_LAYERS):
            write_convt(args[0], name, x_dims, w_dims, 1000 + i, strides, dilations=dilations,
                        group=group, bias=True)
        print(" ".join(layer[0] for layer in PHASE_LAYERS))
        return
    for i, (name, x_dims, w_dims, stride, pad) in enumerate(LAYERS):
        write_convt(args[0], name, x_dims, w_dims, 17 + i, (stride, stride), pad=pad)
    write_floor(args[0])


main()

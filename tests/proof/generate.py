#!/usr/bin/python3
"""Writes the committed models of the proof tests (tests/proof/tests.cmake); run with Debian's
python3-torch (1.13) and python3-onnx (1.12):

    /usr/bin/python3 tests/proof/generate.py

Each model is one thing the proof (`tconv-import --check`) has to get right:

melgan_pad.onnx      a MelGAN-style block exported by torch: ReflectionPad1d (pads computed in the
                     graph: ConstantOfShape, Concat, Reshape, Slice with step -1, Transpose), a
                     Conv1d, LeakyReLU and ConvTranspose1d layers with symmetric pads (rewritten
                     under --policy valid-only). Static: every value must get a shape.
chunk_slice.onnx     torch.chunk and a tensor slice whose end is computed from the input's shape
                     (Shape, Gather, Div, Slice), each half through a ConvTranspose2d with
                     output_padding. Static as well.
unnamed.onnx         two ConvTranspose nodes without a name (SAME_UPPER), as ONNX's node tests
                     write them.
same_name.onnx       two ConvTranspose nodes that share the name 'up'.
nested_missing/      an If whose else branch holds an op of a custom domain (no runtime has it)
                     twice and a ConvTranspose to rewrite, with a data set: tconv-run DIR, tconv-run
                     FILE and tconv-import --check must all exit 2 and name the op with its count
                     and its subgraph path.
data_dependent.onnx  a ConvTranspose (SAME_UPPER) after a Slice whose end is a graph input plus 4:
                     no inference can give its width, a run of the model can (the proof takes
                     the shape and the values from it).
ext_a/model.onnx, ext_b/model.onnx
                     two different models with their weights beside them in 'model.onnx.data', as
                     torch 2.x's exporter writes them (onnx's save_model with
                     save_as_external_data=True, location="model.onnx.data").

Reproducible byte for byte (fixed seeds; torch's exporter is deterministic on CPU)."""
import io
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def vinfo(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def export(module, args, opset, path, dynamic_axes=None):
    module.eval()
    buf = io.BytesIO()
    torch.onnx.export(module, args, buf, opset_version=opset, input_names=["x"],
                      output_names=["y"], dynamic_axes=dynamic_axes, do_constant_folding=True)
    model = onnx.load_from_string(buf.getvalue())
    model.producer_version = ""  # the torch version would make the bytes depend on it
    onnx.save(model, path)


class MelGanBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pad = torch.nn.ReflectionPad1d(3)
        self.conv = torch.nn.Conv1d(8, 16, kernel_size=7)
        self.act = torch.nn.LeakyReLU(0.2)
        self.up1 = torch.nn.ConvTranspose1d(16, 8, kernel_size=16, stride=8, padding=4)
        self.up2 = torch.nn.ConvTranspose1d(8, 4, kernel_size=4, stride=2, padding=1)

    def forward(self, x):
        y = self.act(self.conv(self.pad(x)))
        y = self.act(self.up1(y))
        return self.up2(self.pad(y))


class ChunkSlice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, kernel_size=3, padding=1)
        self.up_a = torch.nn.ConvTranspose2d(4, 2, kernel_size=3, stride=2, padding=1,
                                             output_padding=1)
        self.up_b = torch.nn.ConvTranspose2d(4, 2, kernel_size=3, stride=2, padding=1,
                                             output_padding=1)

    def forward(self, x):
        a, b = torch.chunk(self.conv(x), 2, dim=1)
        half = x.shape[3] // 2
        b = b[:, :, :, :half]  # an end computed from the shape
        return torch.cat([self.up_a(a)[:, :, :, :2 * half], self.up_b(b)], dim=1)


def conv_transpose_pair(name_a, name_b, model_name):
    rng = np.random.default_rng(26)
    w1 = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w1"], ["u"], auto_pad="SAME_UPPER",
                         strides=[2, 2], kernel_shape=[3, 3], **({"name": name_a} if name_a else {})),
        helper.make_node("ConvTranspose", ["u", "w2"], ["y"], auto_pad="SAME_UPPER",
                         strides=[2, 2], kernel_shape=[3, 3], **({"name": name_b} if name_b else {})),
    ]
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")]
    graph = helper.make_graph(nodes, model_name, [vinfo("x", [1, 2, 3, 4])],
                              [vinfo("y", [1, 2, 12, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="tconv-tests-proof")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def nested_missing():
    rng = np.random.default_rng(27)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    then_branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"], name="relu")], "then", [], [vinfo("t", None)])
    else_nodes = [
        helper.make_node("Scale", ["x"], ["s1"], name="scale_1", domain="com.example"),
        helper.make_node("ConvTranspose", ["s1", "w"], ["u"], name="up", auto_pad="SAME_UPPER",
                         strides=[1, 1], kernel_shape=[3, 3]),
        helper.make_node("Scale", ["u"], ["e"], name="scale_2", domain="com.example"),
    ]
    else_branch = helper.make_graph(else_nodes, "else", [], [vinfo("e", None)],
                                    value_info=[vinfo("s1", [1, 2, 4, 4])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["sum"], name="sum", keepdims=0),
        helper.make_node("Greater", ["sum", "zero"], ["cond"], name="greater"),
        helper.make_node("If", ["cond"], ["y"], name="If_1422", then_branch=then_branch,
                         else_branch=else_branch),
    ]
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.array(0, np.float32), "zero")]
    graph = helper.make_graph(nodes, "nested_missing", [vinfo("x", [1, 2, 4, 4])],
                              [vinfo("y", [1, 2, 4, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)],
                              producer_name="tconv-tests-proof")
    model.ir_version = 8
    return model, rng.standard_normal((1, 2, 4, 4)).astype(np.float32)


def data_dependent():
    rng = np.random.default_rng(30)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Add", ["e", "four"], ["end"], name="end"),
        helper.make_node("Slice", ["x", "zero", "end", "three"], ["s"], name="crop"),
        helper.make_node("ConvTranspose", ["s", "w"], ["y"], name="up", auto_pad="SAME_UPPER",
                         strides=[2, 2], kernel_shape=[3, 3]),
    ]
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.array([4], np.int64), "four"),
             numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([3], np.int64), "three")]
    graph = helper.make_graph(nodes, "data_dependent",
                              [vinfo("x", [1, 2, 6, 9]), vinfo("e", [1], TensorProto.INT64)],
                              [vinfo("y", [1, 3, "H", "W"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="tconv-tests-proof")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def write_data_set(folder, x):
    ds = os.path.join(folder, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(ds, "output_0.pb"), "wb") as f:  # Relu's branch: sum(x) > 0
        f.write(numpy_helper.from_array(np.maximum(x, 0), "y").SerializeToString())


def external(folder, seed, channels):
    """A torch 2.x-style export: the weights in model.onnx.data beside model.onnx."""
    torch.manual_seed(seed)
    module = torch.nn.Sequential(
        torch.nn.ConvTranspose2d(channels, 4, kernel_size=4, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(4, 2, kernel_size=3, stride=2, padding=1, output_padding=1))
    path = os.path.join(HERE, folder, "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    for stale in ("model.onnx", "model.onnx.data"):
        if os.path.exists(os.path.join(HERE, folder, stale)):
            os.remove(os.path.join(HERE, folder, stale))
    export(module, torch.randn(1, channels, 5, 6), 17, path)
    model = onnx.load(path)
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx.data", size_threshold=0)


def main():
    torch.manual_seed(26)
    export(MelGanBlock(), torch.randn(1, 8, 32), 13, os.path.join(HERE, "melgan_pad.onnx"))
    torch.manual_seed(27)
    export(ChunkSlice(), torch.randn(1, 4, 6, 8), 11, os.path.join(HERE, "chunk_slice.onnx"))
    onnx.save(conv_transpose_pair(None, None, "unnamed"), os.path.join(HERE, "unnamed.onnx"))
    onnx.save(conv_transpose_pair("up", "up", "same_name"), os.path.join(HERE, "same_name.onnx"))
    model, x = nested_missing()
    folder = os.path.join(HERE, "nested_missing")
    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    write_data_set(folder, x)
    onnx.save(data_dependent(), os.path.join(HERE, "data_dependent.onnx"))
    external("ext_a", 28, 3)
    external("ext_b", 29, 5)


if __name__ == "__main__":
    main()

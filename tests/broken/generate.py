#!/usr/bin/python3
"""Writes the committed corpus of broken models in tests/broken (run with Debian's python3-onnx):

    /usr/bin/python3 tests/broken/generate.py

Each file is one defect a downloaded model may carry; tests/broken/cases.tsv says which tool
reads it, with what options, the exit code and the error text expected. The outputs are
committed; rerunning this script reproduces them byte for byte."""
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 17)]


def path(name):
    full = os.path.join(HERE, name)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def write_bytes(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


def model_bytes(graph, opsets=OPSET):
    m = helper.make_model(graph, opset_imports=opsets, producer_name="tconv-broken-corpus")
    m.ir_version = 8
    return m.SerializeToString()


def weight(name="W", dims=(1, 1, 3, 3)):
    data = np.arange(int(np.prod(dims)), dtype=np.float32) / 10.0
    return helper.make_tensor(name, TensorProto.FLOAT, dims, data.tobytes(), raw=True)


def conv_transpose_graph(w=None, node_inputs=("X", "W"), name="ct", **attrs):
    """X[1,1,3,3] -> ConvTranspose 'ct' (SAME_UPPER, stride 2) -> Y[1,1,6,6]."""
    attrs = attrs or {"auto_pad": "SAME_UPPER", "strides": [2, 2]}
    node = helper.make_node("ConvTranspose", list(node_inputs), ["Y"], name=name, **attrs)
    return helper.make_graph(
        [node], "main",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 3, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 6, 6])],
        [w if w is not None else weight()])


def valid():
    return model_bytes(conv_transpose_graph())


def damaged_bytes():
    good = valid()
    write_bytes("valid.onnx", good)
    write_bytes("truncated.onnx", good[: len(good) * 2 // 3])
    write_bytes("empty.onnx", b"")
    write_bytes("garbage.onnx", b"this is not an ONNX model, just text someone renamed\n" * 4)
    # Wire type 7 does not exist: flip the low bits of the first tag (ir_version, 0x08).
    flipped = bytearray(good)
    assert flipped[0] == 0x08
    flipped[0] ^= 0x07
    write_bytes("bitflip_wiretype.onnx", bytes(flipped))
    # One bit of W's first dim (1 -> 3): raw_data no longer matches dims x dtype.
    w = weight()
    w_bytes = w.SerializeToString()
    at = good.find(w_bytes)
    assert at >= 0 and w_bytes[0] == 0x08 and w_bytes[1] == 0x01
    flipped = bytearray(good)
    flipped[at + 1] ^= 0x02
    write_bytes("bitflip_dim.onnx", bytes(flipped))


def tensor_defects():
    w = weight()
    del w.dims[:]
    w.dims.extend([1, -1, 3, 3])
    write_bytes("negative_dim.onnx", model_bytes(conv_transpose_graph(w)))

    w = weight()
    del w.dims[:]
    w.dims.extend([1 << 62, 1 << 62, 3, 3])
    write_bytes("dims_overflow.onnx", model_bytes(conv_transpose_graph(w)))

    w = weight()
    w.raw_data = w.raw_data[:-4]
    write_bytes("raw_size_mismatch.onnx", model_bytes(conv_transpose_graph(w)))

    w = helper.make_tensor("W", TensorProto.FLOAT, [1, 1, 3, 3], [0.5] * 9)
    del w.float_data[-1]  # 8 of 9 values
    write_bytes("typed_count_mismatch.onnx", model_bytes(conv_transpose_graph(w)))

    w = weight()
    w.data_type = 99
    write_bytes("unknown_dtype.onnx", model_bytes(conv_transpose_graph(w)))

    # A value_info type with an unknown elem_type.
    g = conv_transpose_graph()
    g.input[0].type.tensor_type.elem_type = 77
    write_bytes("unknown_elem_type.onnx", model_bytes(g))


def node_defects():
    g = conv_transpose_graph(auto_pad="SAME_UPPER", strides=[2.0, 2.0])  # floats, not ints
    write_bytes("attr_wrong_type.onnx", model_bytes(g))

    write_bytes("arity_missing_w.onnx", model_bytes(conv_transpose_graph(node_inputs=("X",))))
    write_bytes("arity_empty_w.onnx", model_bytes(conv_transpose_graph(node_inputs=("X", ""))))

    write_bytes("missing_input.onnx",
                model_bytes(conv_transpose_graph(node_inputs=("X", "W", "B_nowhere"))))

    # ConvTranspose semantics: output_padding must be smaller than the stride.
    write_bytes("output_padding_too_big.onnx", model_bytes(conv_transpose_graph(
        strides=[2, 2], output_padding=[2, 0])))

    # What the runtime kernel refuses, refused at import (the same check, ir/conv_transpose_geometry):
    # a bias of the wrong length or rank (onnxruntime's InvalidBiasShape_1/_2), a rank-0 W; the
    # node with symmetric pads is not rewritten and is checked all the same.
    def with_bias(dims, **attrs):
        g = conv_transpose_graph(node_inputs=("X", "W", "B"), **attrs)
        g.initializer.append(weight("B", dims))
        return g
    write_bytes("bias_wrong_length.onnx", model_bytes(with_bias((2,))))
    write_bytes("bias_wrong_rank.onnx", model_bytes(with_bias((1, 1))))
    g = with_bias((3,), pads=[1, 1, 1, 1])
    g.output[0].type.tensor_type.shape.dim[2].dim_value = 3
    g.output[0].type.tensor_type.shape.dim[3].dim_value = 3
    write_bytes("bias_wrong_length_not_rewritten.onnx", model_bytes(g))
    write_bytes("w_rank0.onnx", model_bytes(conv_transpose_graph(
        w=helper.make_tensor("W", TensorProto.FLOAT, [], [1.0]))))

    x = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])]
    y = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])]
    g = helper.make_graph([
        helper.make_node("Add", ["X", "U"], ["T"], name="add"),
        helper.make_node("Relu", ["T"], ["U"], name="relu"),
        helper.make_node("Abs", ["T"], ["Y"], name="abs"),
    ], "main", x, y)
    write_bytes("cycle.onnx", model_bytes(g))

    g = helper.make_graph([
        helper.make_node("Relu", ["X"], ["Y"], name="first"),
        helper.make_node("Abs", ["X"], ["Y"], name="second"),
    ], "main", x, y)
    write_bytes("produced_twice.onnx", model_bytes(g))


def nested_if(depth):
    """An If whose then_branch nests `depth` levels of If (else_branch: a leaf)."""
    out = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1])
    cond = helper.make_tensor_value_info("C", TensorProto.BOOL, [])
    leaf = helper.make_graph(
        [helper.make_node("Constant", [], ["Y"], name="leaf",
                          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))],
        "leaf", [], [out])
    body = leaf
    for level in range(depth):
        node = helper.make_node("If", ["C"], ["Y"], name=f"if{depth - level}",
                                then_branch=body, else_branch=leaf)
        body = helper.make_graph([node], f"level{depth - level}", [], [out])
    return helper.make_graph(list(body.node), "main", [cond], [out])


def limits():
    write_bytes("depth_bomb.onnx", model_bytes(nested_if(70)))
    write_bytes("depth3.onnx", model_bytes(nested_if(3)))

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])
    names = ["X"] + [f"t{i}" for i in range(9)] + ["Y"]
    nodes = [helper.make_node("Relu", [names[i]], [names[i + 1]], name=f"relu{i}")
             for i in range(10)]
    write_bytes("ten_nodes.onnx", model_bytes(helper.make_graph(nodes, "main", [x], [y])))

    # 1.1 MiB of zeros in one initializer: over --max-file-mb 1 and --max-tensor-mb 1.
    big = helper.make_tensor("big", TensorProto.FLOAT, [288, 1024],
                             np.zeros(288 * 1024, np.float32).tobytes(), raw=True)
    g = helper.make_graph([helper.make_node("Add", ["X", "big"], ["Y"], name="add")], "main",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [288, 1024])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [288, 1024])],
                          [big])
    write_bytes("big_tensor.onnx", model_bytes(g))

    # 512x1024 floats (2 MiB) per value: X -> Relu a -> Relu b -> Y plans 6 MiB at once (the
    # input is held for the whole run).
    shape = [512, 1024]
    g = helper.make_graph([
        helper.make_node("Relu", ["X"], ["A"], name="r0"),
        helper.make_node("Relu", ["A"], ["Y"], name="r1"),
    ], "main", [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)],
        value_info=[helper.make_tensor_value_info("A", TensorProto.FLOAT, shape)])
    write_bytes("memory_plan.onnx", model_bytes(g))

    # Amplification: 200 000 empty nodes (2 bytes each on the wire, ~150 bytes each unpacked).
    g = conv_transpose_graph()
    for _ in range(200000):
        g.node.add()
    write_bytes("many_empty_nodes.onnx", model_bytes(g))

    # Protobuf nesting bomb: a value_info type that is a sequence of a sequence of ... 300 deep.
    t = onnx.TypeProto()
    t.tensor_type.elem_type = TensorProto.FLOAT
    for _ in range(300):
        outer = onnx.TypeProto()
        outer.sequence_type.elem_type.CopyFrom(t)
        t = outer
    g = conv_transpose_graph()
    vi = g.value_info.add()
    vi.name = "Y"
    vi.type.CopyFrom(t)
    write_bytes("nesting_bomb.onnx", model_bytes(g))


def external(folder, location, offset=None, length=None, data=None):
    w = helper.make_tensor("W", TensorProto.FLOAT, [1, 1, 3, 3], [0.0] * 9)
    del w.float_data[:]
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = w.external_data.add()
            entry.key, entry.value = key, str(value)
    write_bytes(f"{folder}/model.onnx", model_bytes(conv_transpose_graph(w)))
    if data is not None:
        write_bytes(f"{folder}/w.bin", data)


def external_defects():
    nine = struct.pack("<9f", *range(9))
    external("external_dotdot", "../outside.bin")
    external("external_absolute", "/etc/passwd")
    external("external_missing", "nope.bin")
    external("external_past_end", "w.bin", offset=16, length=36, data=nine)
    external("external_short", "w.bin", data=nine[:24])
    external("external_ok", "w.bin", data=nine)
    external("external_offset_plus", "w.bin", offset="+0", data=nine)
    external("external_offset_space", "w.bin", offset=" 0", data=nine)
    external("external_offset_past_end", "w.bin", offset=1000, data=nine)
    external("external_nul_location", "w.bin\0x", data=nine)
    # 2 MiB of weights in w.bin: over --max-memory-mb 1 before they are read.
    w = TensorProto()
    w.name, w.data_type = "W", TensorProto.FLOAT
    w.dims.extend([1, 1, 724, 724])
    w.data_location = TensorProto.EXTERNAL
    entry = w.external_data.add()
    entry.key, entry.value = "location", "w.bin"
    write_bytes("external_memory/model.onnx", model_bytes(conv_transpose_graph(w)))
    write_bytes("external_memory/w.bin", bytes(4 * 724 * 724))
    # w.bin is a symlink out of the folder (git keeps the link).
    external("external_symlink", "w.bin")
    write_bytes("outside.bin", nine)
    link = path("external_symlink/w.bin")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink("../outside.bin", link)


def hostile_strings():
    """Issue 16: NUL bytes in names and text, control bytes, duplicate attributes, sizes."""
    # An initializer named "X\0pwn" used to become a second "X": Y = X + X instead of X + 100.
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])
    hundred = helper.make_tensor("X\0pwn", TensorProto.FLOAT, [4], [100.0] * 4)
    g = helper.make_graph([helper.make_node("Add", ["X", "X\0pwn"], ["Y"], name="add")],
                          "main", [x], [y], [hundred])
    write_bytes("nul_initializer_name.onnx", model_bytes(g))
    g = helper.make_graph([helper.make_node("Relu\0x", ["X"], ["Y"], name="relu")], "main",
                          [x], [y])
    write_bytes("nul_op_type.onnx", model_bytes(g))
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="relu")], "main", [x], [y])
    write_bytes("nul_opset_domain.onnx",
                model_bytes(g, [helper.make_opsetid("", 17), helper.make_opsetid("ai\0x", 1)]))
    write_bytes("nul_auto_pad.onnx", model_bytes(conv_transpose_graph(
        auto_pad=b"SAME_UPPER\0x", strides=[2, 2])))
    # Control bytes in a name reach the terminal only escaped.
    write_bytes("control_bytes_name.onnx", model_bytes(conv_transpose_graph(
        name="ct\x1b[31mred\x07", strides=[2.0, 2.0])))
    g = conv_transpose_graph()
    g.node[0].attribute.append(helper.make_attribute("strides", [1, 1]))
    write_bytes("duplicate_attr.onnx", model_bytes(g))
    # Y's shape left undeclared: nothing but the size bound stops a 1e18-element Pad.
    g = conv_transpose_graph(strides=[2, 2], output_shape=[10 ** 9, 10 ** 9])
    g.output[0].type.tensor_type.ClearField("shape")
    write_bytes("output_shape_huge.onnx", model_bytes(g))


def run_dir_defects():
    """tconv-run test folders: a valid model with a broken input_0.pb."""
    folder = "bad_pb_dir"
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 2])
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="relu")], "main", [x], [y])
    write_bytes(f"{folder}/model.onnx", model_bytes(g))
    good = helper.make_tensor("X", TensorProto.FLOAT, [2, 2], [1.0, -1.0, 2.0, -2.0])
    pb = good.SerializeToString()
    write_bytes(f"{folder}/test_data_set_0/input_0.pb", pb[: len(pb) - 5])
    out = helper.make_tensor("Y", TensorProto.FLOAT, [2, 2], [1.0, 0.0, 2.0, 0.0])
    write_bytes(f"{folder}/test_data_set_0/output_0.pb", out.SerializeToString())


def hostile_sizes():
    """Tiny files that ask for much memory or compute (issue 16)."""
    # 4 GiB input: X [1,1,32768,32768] -> GlobalAveragePool.
    g = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["X"], ["Y"], name="gap")], "main",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 32768, 32768])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 1, 1])])
    write_bytes("input_bomb.onnx", model_bytes(g))
    # 1e12 multiply-adds from two 4 MB graph inputs.
    g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="ct")], "main",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 1000, 1000]),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, [1, 1, 1000, 1000])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 1999, 1999])])
    write_bytes("work_bomb.onnx", model_bytes(g))
    # Resize 256x256 by 8: a 16 MiB result, 2 x 32 MiB of double-precision work buffers (the
    # channels are resized too, so the axis-by-axis path runs, not the plane by plane one).
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 0.5, 8.0, 8.0])
    g = helper.make_graph(
        [helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="resize")], "main",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 256, 256])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 2048, 2048])], [scales])
    write_bytes("resize_bomb.onnx", model_bytes(g))
    # Pad 64x64 by 480 on each side into 4 MiB, Relu, GlobalAveragePool: no value_info, so only
    # shape inference tells the plan that two 4 MiB intermediates are alive at once.
    pads = helper.make_tensor("pads", TensorProto.INT64, [8], [0, 0, 480, 480, 0, 0, 480, 480])
    g = helper.make_graph([
        helper.make_node("Pad", ["X", "pads"], ["P"], name="pad"),
        helper.make_node("Relu", ["P"], ["R"], name="relu"),
        helper.make_node("GlobalAveragePool", ["R"], ["Y"], name="gap"),
    ], "main", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 64, 64])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 1, 1])], [pads])
    write_bytes("undeclared_bomb.onnx", model_bytes(g))
    # 300 Relu nodes: over the node limit that --max-memory-mb 1 implies (256 nodes).
    names = ["X"] + [f"v{i}" for i in range(299)] + ["Y"]
    nodes = [helper.make_node("Relu", [names[i]], [names[i + 1]], name=f"relu{i}")
             for i in range(300)]
    g = helper.make_graph(nodes, "main",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    write_bytes("nodes_300.onnx", model_bytes(g))


def main():
    damaged_bytes()
    hostile_sizes()
    tensor_defects()
    node_defects()
    limits()
    external_defects()
    hostile_strings()
    run_dir_defects()


if __name__ == "__main__":
    main()

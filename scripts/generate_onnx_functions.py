#!/usr/bin/python3
"""Writes src/runtime/data/onnx_functions.onnx: ONNX function bodies of the ops tconv has no
kernel for, as the library the runtime expands such nodes with (session_function.c).

Run:  /usr/bin/python3 scripts/generate_onnx_functions.py NODE_TESTS_DIR
      (NODE_TESTS_DIR: ONNX v1.22.0's onnx/backend/test/data/node, CMake's TCONV_ONNX_NODE_TESTS;
       onnx 1.12 is enough: the fields it lacks are written as raw protobuf fields)

How the bodies were made. ONNX defines many ops by a function body in their schema (onnx/defs,
FunctionBodyBuildContext); most of those of the newer opsets are *context dependent*: the body
is built per node, from its attributes, its input types and which optional inputs it has (e.g.
Attention's body differs with is_causal, the mask's type, the number of heads, and whether a
past key is given). ONNX's node test suite holds, for each test_X of such an op, a twin
test_X_expanded whose model is exactly the body ONNX built for test_X's node, inlined. This
script takes every such pair for the ops in FUNCTION_OPS and records the body as one
FunctionProto, keyed by everything the body was built from:
  name, domain          the op (FunctionProto.name / domain)
  attribute_proto       the node's attributes, exactly (field 11)
  value_info            the type and shape of each formal input (field 12): the node's inputs'
                        (some builders read input shapes: CausalConvWithState its kernel size,
                        and a body made for one shape is not known to hold for another)
  input / output        the node's inputs and outputs; an input the node omits before a given
                        one is a formal input named tconv_omitted_input_<index> with no
                        value_info (the body never reads it): the node must omit it too
  opset_import          the expanded model's opsets: the body's ops bind to these versions, and
                        the node's model must import the same version of the op's domain
  overload              the name of the expanded test it came from (field 13: provenance, and
                        unique)
The runtime uses a body only for a node that matches the key exactly (same attributes and
values, same input types, shapes and count, same opset): that is where ONNX itself would build
the same body. Any other node of these ops is still refused. Bodies are the expanded graphs' nodes as
they are; a body holding initializers, or a second test with the same key and a different body
(it would depend on something the key misses), is left out (and reported).

FUNCTION_OPS: the ops of ONNX v1.22.0 with a function body that tconv has no kernel for at
this commit (the "no kernel" refusals of scripts/node-suite.py whose _expanded twin passes;
Bernoulli is left out: its body draws random numbers).
"""
import hashlib
import os
import sys

import onnx
from onnx import helper

FUNCTION_OPS = {
    "AffineGrid", "Attention", "BlackmanWindow", "CausalConvWithState", "Celu",
    "CenterCropPad", "DynamicQuantizeLinear", "HammingWindow", "HannWindow", "LinearAttention",
    "MeanVarianceNormalization", "NegativeLogLikelihoodLoss", "RMSNormalization",
    "RotaryEmbedding", "SoftmaxCrossEntropyLoss", "Swish",
}

ABSENT = "tconv_omitted_input_"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "src", "runtime", "data", "onnx_functions.onnx")


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number, payload):
    """A length-delimited protobuf field."""
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def load(path):
    m = onnx.ModelProto()
    with open(path, "rb") as f:
        m.ParseFromString(f.read())
    return m


def shape_of(vi):
    """The input's static dims, or None when one is not static."""
    dims = vi.type.tensor_type.shape.dim
    if not all(d.HasField("dim_value") for d in dims):
        return None
    return tuple(d.dim_value for d in dims)


def body_signature(nodes):
    """The body's ops and attributes in order, names left out (they differ per test)."""
    h = hashlib.sha256()
    for n in nodes:
        h.update(n.op_type.encode() + b"/" + n.domain.encode())
        for a in n.attribute:
            c = onnx.AttributeProto()
            c.CopyFrom(a)
            c.ClearField("doc_string")
            h.update(c.SerializeToString())
    return h.hexdigest()


def function_of(tests, name):
    twin = load(os.path.join(tests, name[:-len("_expanded")], "model.onnx"))
    expanded = load(os.path.join(tests, name, "model.onnx"))
    if len(twin.graph.node) != 1:
        return None, "the twin has %d nodes" % len(twin.graph.node)
    node = twin.graph.node[0]
    if node.op_type not in FUNCTION_OPS:
        return None, None
    if expanded.graph.initializer or expanded.graph.sparse_initializer:
        return None, "the expanded graph has initializers"
    inputs = list(node.input)
    while inputs and not inputs[-1]:
        inputs.pop()
    types = {vi.name: vi.type.tensor_type.elem_type for vi in twin.graph.input}
    shapes = {vi.name: shape_of(vi) for vi in twin.graph.input}
    if any(i and shapes[i] is None for i in inputs):
        return None, "an input without a static shape"
    if any(i and i not in types for i in inputs):
        return None, "an input that is not a graph input"
    # an omitted input before a given one: a formal input the body never reads, without a type
    inputs = [i if i else "%s%d" % (ABSENT, k) for k, i in enumerate(inputs)]
    fp = onnx.FunctionProto()
    fp.name = node.op_type
    fp.domain = node.domain
    fp.input.extend(inputs)
    outputs = list(node.output)
    while outputs and not outputs[-1]:
        outputs.pop()
    if "" in outputs:
        return None, "an omitted output before a given one"
    fp.output.extend(outputs)
    fp.node.extend(expanded.graph.node)
    fp.opset_import.extend(expanded.opset_import)
    attrs = "; ".join(helper.printable_attribute(a) for a in node.attribute)
    in_types = ", ".join(onnx.TensorProto.DataType.Name(types[i]) if i in types else "omitted"
                         for i in inputs)
    fp.doc_string = ("ONNX v1.22.0's body of %s as %s expands it: attributes {%s}, inputs (%s)"
                     % (node.op_type, name, attrs, in_types))
    extra = b""
    for a in node.attribute:  # attribute_proto = 11 (onnx 1.12 lacks the field)
        extra += field_bytes(11, a.SerializeToString())
    for i in (i for i in inputs if i in types):  # value_info = 12
        vi = helper.make_tensor_value_info(i, types[i], list(shapes[i]))
        extra += field_bytes(12, vi.SerializeToString())
    extra += field_bytes(13, name.encode())  # overload = 13
    key = (node.domain, node.op_type,
           tuple((o.domain, o.version) for o in expanded.opset_import),
           tuple(a.SerializeToString() for a in sorted(node.attribute, key=lambda a: a.name)),
           tuple((types.get(i, 0), shapes.get(i)) for i in inputs), len(outputs))
    return (key, body_signature(expanded.graph.node), fp.SerializeToString() + extra), None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tests = sys.argv[1]
    chosen, signatures, conflicts = {}, {}, set()
    for name in sorted(os.listdir(tests)):
        if not name.endswith("_expanded"):
            continue
        made, why = function_of(tests, name)
        if made is None:
            if why:
                print("left out %s: %s" % (name, why))
            continue
        key, sig, data = made
        if key in signatures and signatures[key] != sig:
            conflicts.add(key)
            print("left out %s: same key as %s, another body" % (name, chosen[key][0]))
        elif key not in chosen:
            chosen[key] = (name, data)
            signatures[key] = sig
    model = helper.make_model(
        helper.make_graph([], "onnx_functions", [], []),
        opset_imports=[helper.make_opsetid("", 27)],
        producer_name="tconv scripts/generate_onnx_functions.py",
        doc_string="ONNX v1.22.0 function bodies, one per context they were built for, from "
                   "the node tests' *_expanded models (see the script's header)")
    model.ir_version = 10
    data = model.SerializeToString()
    kept = [v for k, v in sorted(chosen.items(), key=lambda kv: kv[1][0]) if k not in conflicts]
    for name, fp_bytes in kept:
        data += field_bytes(25, fp_bytes)  # ModelProto.functions
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "wb") as f:
        f.write(data)
    ops = sorted({n.split("_expanded")[0] for n, _ in kept})
    print("wrote %s: %d bodies (%d bytes) from %d expanded tests" % (
        os.path.relpath(OUT), len(kept), len(data), len(ops)))


if __name__ == "__main__":
    main()

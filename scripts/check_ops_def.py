#!/usr/bin/python3
"""Compares src/ir/ops.def with the ONNX schemas the installed onnx package knows.

For every entry and every opset version in its range that onnx knows (onnx 1.12 knows up to 17;
later versions are checked by hand against onnx/defs), the op's arity and attribute names, types
and required flags must be what the schema in force at that version says, and an attribute default
written in the table (A(name, TYPE, OPT, default)) must be the schema's default. Loop and Scan-8 list
in_min 0 on purpose (see ops.def). Run: /usr/bin/python3 scripts/check_ops_def.py
"""
import os
import re
import sys

import numpy
import onnx
import onnx.defs as defs

MANY = 255
HERE = os.path.dirname(os.path.abspath(__file__))
ENTRY = re.compile(
    r"TC_OP\((\w+), (\w+), (\d+), (\w+), (\d+), (\w+), (\d+), (\w+),\s*\((.*?)\),\s*(\S+), (\S+)\)",
    re.S)
ATTR = re.compile(r"A\((\w+), (\w+), (REQ|OPT)(?:, ([^)]+))?\)")
FLT_MAX = 3.4028234663852886e38
TYPE = {v: k for k, v in onnx.AttributeProto.AttributeType.items()}
INPUT_MIN_EXCEPTIONS = {("Loop", 1), ("Loop", 11), ("Scan", 8)}


def arity(text):
    return MANY if text == "TC_MANY" else int(text)


def schema_at(name, version):
    try:
        return defs.get_schema(name, version, "")
    except Exception:  # onnx raises its own SchemaError
        return None


def c_literal(text):
    text = text.strip()
    if text.lstrip("-") == "FLT_MAX":
        return -FLT_MAX if text.startswith("-") else FLT_MAX
    if text.startswith('"'):
        return text.strip('"').encode()
    return float(text.rstrip("fF")) if any(c in text for c in ".eE") else int(text)


def check_default(where, name, type_name, default, attr, problems):
    """The table's default against the schema's, as float32 for FLOAT attributes."""
    value = attr.default_value
    if not value.name:
        problems.append("%s: '%s' has a default, the schema gives none" % (where, name))
        return
    want = {"FLOAT": value.f, "INT": value.i, "STRING": value.s}.get(type_name)
    have = c_literal(default)
    if type_name == "FLOAT":
        want, have = numpy.float32(want), numpy.float32(have)
    if want != have:
        problems.append("%s: '%s' defaults to %s, the schema to %s" % (where, name, have, want))


def check(entry, version, problems):
    _, name, since, _, in_min, in_max, out_min, out_max, attrs, _, _ = entry
    schema = schema_at(name, version)
    if schema is None or schema.deprecated:
        return
    where = "%s-%s at opset %d (schema %s-%d)" % (name, since, version, name, schema.since_version)
    want = (schema.min_input, min(schema.max_input, MANY), schema.min_output,
            min(schema.max_output, MANY))
    have = (arity(in_min), arity(in_max), arity(out_min), arity(out_max))
    if (name, int(since)) in INPUT_MIN_EXCEPTIONS:
        want = (0,) + want[1:]
    if want != have:
        problems.append("%s: arity %s, schema says %s" % (where, have, want))
    want_attrs = sorted((n, TYPE[a.type], a.required) for n, a in schema.attributes.items())
    found = ATTR.findall(attrs)
    have_attrs = sorted((n, t, r == "REQ") for n, t, r, _ in found)
    if want_attrs != have_attrs:
        problems.append("%s: attributes %s, schema says %s" % (where, have_attrs, want_attrs))
    for n, t, _, default in found:
        if default and n in schema.attributes:
            check_default(where, n, t, default, schema.attributes[n], problems)


def main():
    text = open(os.path.join(HERE, "..", "src", "ir", "ops.def")).read()
    entries = ENTRY.findall(text)
    last_known = defs.onnx_opset_version()
    problems = []
    for entry in entries:
        first = int(entry[2])
        last = last_known if entry[3] == "TC_OPSET_LATEST" else min(int(entry[3]), last_known)
        for version in range(first, last + 1):
            check(entry, version, problems)
    for p in problems:
        print(p)
    print("%d entries checked up to opset %d: %d problems" % (len(entries), last_known,
                                                             len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Golden data for tconv's elementwise kernels (math, activations, Min/Max/Sum/Mean, PRelu, Mod,
Pow, comparisons, logic, Where), computed by numpy without tconv (and two PyTorch 1.13 exports
that chain most of them, golden from torch):

    /usr/bin/python3 tests/golden/ops/generate_elementwise.py

Writes one directory per case, tests/golden/ops/<case>/ (model.onnx: one node; inputs a, b, c;
output y; test_data_set_0/input_N.pb and output_0.pb), and tests/golden/ops/elementwise.tsv
(case, op, opset, dtypes, rtol, atol, what), from which ctest makes runtime.golden_ops.<case>
(tests/runtime/tests.cmake). float32 outputs are computed in float64 from the float32 inputs and
rounded once; float64 cases get tight tolerances (rtol 1e-12) so that they prove float64
arithmetic, not float32 rounding. Inputs mix random values with NaN, +-inf, +-0 and halves, and
shapes that broadcast in every direction. Deterministic: data is seeded from crc32(case name);
the script deletes its own case directories (those named in the old tsv) and writes them again."""
import math
import os
import shutil
import zlib

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TSV = os.path.join(HERE, "elementwise.tsv")
F32, F64, I32, I64, BOOL = np.float32, np.float64, np.int32, np.int64, np.bool_
TIGHT = ("1e-12", "1e-14")  # float64 cases
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -2.5, 1.5]

cases = []  # rows of the tsv


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def real_input(name, dtype, shape=(3, 8), scale=2.0, special=True):
    """Random values, the last row (of a rank-2 shape) replaced by SPECIAL."""
    x = rng_for(name).standard_normal(shape) * scale
    if special:
        x.reshape(-1)[-len(SPECIAL):] = SPECIAL
    return x.astype(dtype)


def int_input(name, dtype, shape, low=-9, high=10):
    return rng_for(name).integers(low, high, size=shape).astype(dtype)


def bool_input(name, shape):
    return rng_for(name).integers(0, 2, size=shape).astype(BOOL)


def write_case(name, op, opset, inputs, expected, what, attrs=None, tol=("", "")):
    """inputs: list of arrays named a, b, c, ... (None: an omitted optional input)."""
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    names = [chr(ord("a") + i) for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], name=name, **(attrs or {}))
    vi = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype],
                                        list(x.shape)) for n, x in zip(names, inputs)]
    out_type = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[expected.dtype]
    graph = helper.make_graph([node], name, vi,
                              [helper.make_tensor_value_info("y", out_type, list(expected.shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="tconv-golden-ops")
    model.ir_version = 8 if opset <= 17 else 9
    if opset <= 17:  # onnx 1.12 knows schemas up to opset 17
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, x) in enumerate(zip(names, inputs)):
        t = numpy_helper.from_array(x, n)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(expected, "y").SerializeToString())
    dtypes = ",".join(str(x.dtype) for x in inputs) + "->" + str(expected.dtype)
    cases.append((name, op, str(opset), dtypes, tol[0], tol[1], what))


def in64(x):
    return x.astype(F64) if x.dtype in (F32, F64) else x


def finish(y, dtype):
    return np.asarray(y).astype(dtype)


def tol_for(dtype):
    return TIGHT if dtype == F64 else ("", "")


# ---------------------------------------------------------------- unary float ops

erf = np.vectorize(math.erf, otypes=[F64])


def softplus(x):
    return np.logaddexp(0.0, x)


def hard_sigmoid(x, alpha, beta):
    return np.clip(alpha * x + beta, 0.0, 1.0)


UNARY_REAL = [
    # (op, opset, numpy function of a float64 array, attrs, label)
    ("Sqrt", 13, np.sqrt, None, ""),
    ("Exp", 13, np.exp, None, ""),
    ("Log", 13, np.log, None, ""),
    ("Reciprocal", 13, lambda x: 1.0 / x, None, ""),
    ("Floor", 13, np.floor, None, ""),
    ("Ceil", 13, np.ceil, None, ""),
    ("Round", 11, np.round, None, "halves to even"),
    ("Erf", 13, erf, None, ""),
    ("Sin", 7, np.sin, None, ""),
    ("Cos", 7, np.cos, None, ""),
    ("Softplus", 1, softplus, None, ""),
    ("Softsign", 1, lambda x: x / (1.0 + np.abs(x)), None, ""),
    ("Mish", 18, lambda x: x * np.tanh(softplus(x)), None, ""),
    ("HardSwish", 14, lambda x: x * hard_sigmoid(x, 1.0 / 6.0, 0.5), None, ""),
    ("HardSigmoid", 6, lambda x: hard_sigmoid(x, np.float64(np.float32(0.2)), 0.5), None,
     "default alpha, beta (float32 attributes)"),
    ("HardSigmoid", 6, lambda x: hard_sigmoid(x, np.float64(np.float32(0.3)),
                                              np.float64(np.float32(0.25))),
     {"alpha": 0.3, "beta": 0.25}, "alpha 0.3 beta 0.25"),
    ("Elu", 6, lambda x: np.where(x < 0, np.expm1(x), x), None, "default alpha"),
    ("Elu", 6, lambda x: np.where(x < 0, 0.5 * np.expm1(x), x), {"alpha": 0.5}, "alpha 0.5"),
    ("Selu", 6, lambda x: np.where(x > 0, np.float64(np.float32(1.05070102214813232421875)) * x,
                                   np.float64(np.float32(1.05070102214813232421875)) *
                                   np.float64(np.float32(1.67326319217681884765625)) *
                                   np.expm1(x)), None, "default alpha, gamma"),
    ("Selu", 6, lambda x: np.where(x > 0, 3.0 * x, 3.0 * 2.0 * np.expm1(x)),
     {"alpha": 2.0, "gamma": 3.0}, "alpha 2 gamma 3"),
    ("Gelu", 20, lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))), None, "approximate none"),
    ("Gelu", 20, lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) *
                                                     (x + 0.044715 * x ** 3))),
     {"approximate": "tanh"}, "approximate tanh"),
]


def unary_real_cases():
    seen = {}
    for op, opset, fn, attrs, label in UNARY_REAL:
        k = seen.get(op, 0)
        seen[op] = k + 1
        base = op.lower() + ("" if k == 0 else "_%d" % k)
        for dtype, suffix in ((F32, "f32"), (F64, "f64")):
            name = "%s_%s" % (base, suffix)
            x = real_input(name, dtype)
            with np.errstate(all="ignore"):
                y = finish(fn(in64(x)), dtype)
            write_case(name, op, opset, [x], y,
                       "%s%s, NaN/inf/+-0/halves" % (op, " " + label if label else ""),
                       attrs, tol_for(dtype))


def signed_unary_cases():
    fns = {"Abs": np.abs, "Neg": np.negative, "Sign": np.sign}
    opsets = {"Abs": 13, "Neg": 13, "Sign": 13}
    for op, fn in fns.items():
        for dtype, suffix in ((F32, "f32"), (F64, "f64"), (I32, "i32"), (I64, "i64")):
            name = "%s_%s" % (op.lower(), suffix)
            if dtype in (F32, F64):
                x = real_input(name, dtype)
                what = "NaN/inf/+-0"
            else:
                info = np.iinfo(dtype)
                x = int_input(name, dtype, (3, 8))
                x.reshape(-1)[-4:] = [info.min, info.max, 0, -1]
                what = "wraps at the minimum as numpy"
            with np.errstate(all="ignore"):
                y = finish(fn(in64(x)), dtype)
            write_case(name, op, opsets[op], [x], y, "%s %s" % (op, what), None, tol_for(dtype))
    # the pre-6 form (consumed_inputs) and an empty tensor
    x = real_input("abs_opset1_f32", F32)
    write_case("abs_opset1_f32", "Abs", 1, [x], np.abs(x), "Abs-1 form")
    x = np.zeros((0, 3), F32)
    write_case("neg_empty_f32", "Neg", 13, [x], -x, "empty tensor")
    x = bool_input("not_bool", (2, 3, 4))
    write_case("not_bool", "Not", 1, [x], np.logical_not(x), "Not")


# ---------------------------------------------------------------- broadcasting binary ops

# Three shapes that broadcast in every direction to (2, 3, 4).
SHAPES3 = [(2, 1, 4), (3, 1), (4,)]


def variadic_cases():
    fns = {"Max": np.maximum, "Min": np.minimum, "Sum": np.add}
    for op in ("Max", "Min", "Sum", "Mean"):
        dtypes = ((F32, "f32"), (F64, "f64")) + (((I32, "i32"), (I64, "i64"))
                                                 if op in ("Max", "Min") else ())
        for dtype, suffix in dtypes:
            for n in (1, 2, 3):
                name = "%s_%d_inputs_%s" % (op.lower(), n, suffix)
                shapes = SHAPES3[:n] if n > 1 else [(2, 3)]
                if dtype in (F32, F64):
                    xs = [real_input("%s_%d" % (name, i), dtype, s, special=False) for i, s in
                          enumerate(shapes)]
                    if n == 3:
                        xs[1].reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
                else:
                    xs = [int_input("%s_%d" % (name, i), dtype, s) for i, s in enumerate(shapes)]
                acc = in64(xs[0])
                for x in xs[1:]:
                    acc = (np.add if op == "Mean" else fns[op])(acc, in64(x))
                if op == "Mean":
                    acc = acc / n
                opset = 13 if n != 2 else 8
                write_case(name, op, opset, xs, finish(acc, dtype),
                           "%s of %d inputs%s" % (op, n, ", broadcast to (2,3,4), NaN/inf"
                                                  if n == 3 else ""), None, tol_for(dtype))
    xs = [real_input("sum_opset6_%d" % i, F32, (2, 3), special=False) for i in range(2)]
    write_case("sum_opset6_f32", "Sum", 6, xs, xs[0] + xs[1], "Sum-6 (same shapes)")


def pow_cases():
    a = real_input("pow_f32", F32, (2, 3, 4), special=False)
    b = np.array([2.0, 0.5, -1.0, 3.0], F32)
    with np.errstate(all="ignore"):
        write_case("pow_f32", "Pow", 13, [a, b], finish(np.power(in64(a), in64(b)), F32),
                   "negative bases (NaN for 0.5), broadcast exponent")
        a64 = real_input("pow_f64", F64, (2, 3, 4), special=False)
        write_case("pow_f64", "Pow", 13, [a64, b.astype(F64)],
                   np.power(a64, b.astype(F64)), "float64", None, TIGHT)
    s = np.array(2.0, F32)
    write_case("pow_opset7_scalar_f32", "Pow", 7, [a, s], finish(in64(a) ** 2, F32),
               "Pow-7, scalar exponent")
    e = np.array(3, I64)
    write_case("pow_f32_i64_exponent", "Pow", 15, [a, e], finish(in64(a) ** 3, F32),
               "float base, int64 exponent (Pow-12+ mixed types)")
    for dtype, suffix in ((I32, "i32"), (I64, "i64")):
        a = int_input("pow_" + suffix, dtype, (2, 3, 4), -5, 6)
        b = np.array([0, 1, 2, 3], dtype)
        write_case("pow_" + suffix, "Pow", 13, [a, b], np.power(a, b), "integer powers")


def mod_cases():
    for dtype, suffix in ((F32, "f32"), (F64, "f64")):
        a = real_input("mod_" + suffix, dtype, (2, 3, 4), 4.0, special=False)
        b = np.array([[2.0], [-3.0], [0.7]], dtype)
        write_case("mod_fmod_" + suffix, "Mod", 13, [a, b], finish(np.fmod(in64(a), in64(b)),
                                                                    dtype),
                   "fmod=1, signs of the dividend, broadcast", {"fmod": 1}, tol_for(dtype))
    for dtype, suffix in ((I32, "i32"), (I64, "i64")):
        a = int_input("mod_" + suffix, dtype, (2, 3, 4), -20, 21)
        a.reshape(-1)[0] = np.iinfo(dtype).min
        b = np.array([[3], [-4], [-1]], dtype)
        write_case("mod_" + suffix, "Mod", 10, [a, b], np.mod(a, b),
                   "fmod=0: the divisor's sign, minimum % -1")
        write_case("mod_fmod_" + suffix, "Mod", 13, [a, b], np.fmod(a, b),
                   "fmod=1: the dividend's sign", {"fmod": 1})


def prelu_cases():
    x = real_input("prelu_x", F32, (2, 3, 4, 5), special=False)
    x.reshape(-1)[:3] = [np.nan, -np.inf, np.inf]
    slopes = [
        ("prelu_channel_f32", 9, np.array([0.1, -0.2, 0.3], F32).reshape(3, 1, 1),
         "slope (C,1,1)"),
        ("prelu_scalar_opset7_f32", 7, np.array([0.25], F32), "PRelu-7, slope (1)"),
        ("prelu_full_opset6_f32", 6, real_input("s6", F32, (2, 3, 4, 5), special=False),
         "PRelu-6, slope of X's shape"),
        ("prelu_last_axis_opset16_f32", 16, np.array([0.1, 0.2, 0.3, 0.4, 0.5], F32),
         "PRelu-16, slope (W)"),
    ]
    for name, opset, s, what in slopes:
        y = np.where(x < 0, in64(s) * in64(x), in64(x))
        write_case(name, "PRelu", opset, [x, s], finish(y, F32), what + ", NaN/inf")
    x64, s64 = x.astype(F64), slopes[0][2].astype(F64)
    write_case("prelu_channel_f64", "PRelu", 16, [x64, s64], np.where(x64 < 0, s64 * x64, x64),
               "float64", None, TIGHT)
    for dtype, suffix in ((I32, "i32"), (I64, "i64")):
        xi = int_input("prelu_" + suffix, dtype, (2, 3, 4))
        si = np.array([2, -3, 1, 0], dtype)
        write_case("prelu_" + suffix, "PRelu", 9, [xi, si], np.where(xi < 0, si * xi, xi),
                   "integers (PRelu-9+)")


def compare_cases():
    fns = {"Equal": np.equal, "Less": np.less, "Greater": np.greater,
           "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal}
    for op, fn in fns.items():
        opset = 12 if op.endswith("OrEqual") else 13
        for dtype, suffix in ((F32, "f32"), (F64, "f64"), (I32, "i32"), (I64, "i64")):
            name = "%s_%s" % (op.lower(), suffix)
            if dtype in (F32, F64):
                a = np.round(real_input(name + "_a", dtype, (2, 3, 4), special=False))
                a.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0.0]
                b = np.array([np.nan, 1.0, -0.0, 0.0], dtype)
            else:
                a = int_input(name + "_a", dtype, (2, 3, 4), -3, 4)
                b = int_input(name + "_b", dtype, (3, 1), -3, 4)
            write_case(name, op, opset, [a, b], fn(a, b), "broadcast, NaN/inf/+-0 for floats")
    a, b = bool_input("equal_bool_a", (2, 3, 4)), bool_input("equal_bool_b", (3, 1))
    write_case("equal_bool", "Equal", 11, [a, b], np.equal(a, b), "bool (Equal-11+)")
    a, b = np.zeros((0, 3), F32), np.ones((3,), F32)
    write_case("less_empty_f32", "Less", 9, [a, b], np.less(a, b), "empty tensor, Less-9")


def logic_cases():
    fns = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}
    for op, fn in fns.items():
        a, b = bool_input(op + "_a", (2, 3, 4)), bool_input(op + "_b", (3, 1))
        write_case(op.lower() + "_bool", op, 7, [a, b], fn(a, b), "broadcast")


def where_cases():
    c = bool_input("where_c", SHAPES3[0])
    for dtype, suffix in ((F32, "f32"), (F64, "f64"), (I32, "i32"), (I64, "i64"), (BOOL, "bool")):
        name = "where_" + suffix
        if dtype in (F32, F64):
            x = real_input(name + "_x", dtype, SHAPES3[1], special=False)
            y = real_input(name + "_y", dtype, SHAPES3[2], special=False)
            y.reshape(-1)[:2] = [np.nan, -np.inf]
        elif dtype == BOOL:
            x, y = bool_input(name + "_x", SHAPES3[1]), bool_input(name + "_y", SHAPES3[2])
        else:
            x, y = int_input(name + "_x", dtype, SHAPES3[1]), int_input(name + "_y", dtype,
                                                                      SHAPES3[2])
        write_case(name, "Where", 16, [c, x, y], np.where(c, x, y),
                   "condition, X, Y broadcast three ways to (2,3,4)", None, tol_for(dtype))
    cs = np.array(True)
    x, y = real_input("wx", F32, (2, 3), special=False), real_input("wy", F32, (1, 3),
                                                                  special=False)
    write_case("where_scalar_condition_f32", "Where", 9, [cs, x, y], np.where(cs, x, y),
               "Where-9, scalar condition")


def existing_kernel_f64_cases():
    """float64 forms of kernels that predate this generator (float32 is proven by ONNX's node
    tests), and CastLike."""
    unary = [("Relu", 14, lambda x: np.where(x < 0, 0.0, x), None),
             ("LeakyRelu", 16, lambda x: np.where(x < 0, np.float64(np.float32(0.1)) * x, x),
              {"alpha": 0.1}),
             ("Sigmoid", 13, lambda x: 1.0 / (1.0 + np.exp(-x)), None),
             ("Tanh", 13, np.tanh, None),
             ("Clip", 6, lambda x: np.clip(x, -1.0, 0.5), {"min": -1.0, "max": 0.5})]
    for op, opset, fn, attrs in unary:
        name = op.lower() + "_f64"
        x = real_input(name, F64)
        with np.errstate(all="ignore"):
            write_case(name, op, opset, [x], fn(x), "float64, NaN/inf/+-0", attrs, TIGHT)
    x = real_input("clip_13_f64", F64)
    lo, hi = np.array(-0.5, F64), np.array(1.25, F64)
    write_case("clip_13_f64", "Clip", 13, [x, lo, hi], np.clip(x, lo, hi), "Clip-13 float64",
               None, TIGHT)
    fns = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
    for op, fn in fns.items():
        name = op.lower() + "_bcast_f64"
        a = real_input(name + "_a", F64, SHAPES3[0], special=False)
        b = real_input(name + "_b", F64, SHAPES3[1], special=False)
        write_case(name, op, 14, [a, b], fn(a, b), "float64, broadcast", None, TIGHT)
    x = np.array([[1.7, -2.5, 0.0, -0.9], [3.99, -7.2, 100.5, 2.0]], F32)
    like = np.array([1], I64)
    write_case("castlike_f32_to_i64", "CastLike", 15, [x, like], x.astype(I64),
               "truncates toward zero")
    xi = np.array([[-3, 0, 7], [2 ** 40, -(2 ** 40), 1]], I64)
    write_case("castlike_i64_to_f64", "CastLike", 19, [xi, np.zeros((2,), F64)], xi.astype(F64),
               "CastLike-19")


def small_int_cases():
    """int8, int16 and the unsigned types, which Add/Sub/Mul/Div (ONNX's node tests), Mod,
    Min/Max and the comparisons take; wrapping at the ends of each range."""
    U32, U64, I8, I16, U8, U16 = np.uint32, np.uint64, np.int8, np.int16, np.uint8, np.uint16
    for dtype in (I8, I16, U8, U16, U32, U64):
        info = np.iinfo(dtype)
        suffix = np.dtype(dtype).name
        a = rng_for("int_a_" + suffix).integers(info.min, info.max, size=(2, 3, 4),
                                                 dtype=dtype, endpoint=True)
        b = rng_for("int_b_" + suffix).integers(max(info.min, -9), 10, size=(3, 1)).astype(dtype)
        a.reshape(-1)[:3] = [info.min, info.max, 0]
        b[b == 0] = 1
        b.reshape(-1)[0] = info.max
        write_case("mod_" + suffix, "Mod", 13, [a, b], np.mod(a, b),
                   "fmod=0, broadcast, range ends")
        write_case("max_" + suffix, "Max", 13, [a, b], np.maximum(a, b), "broadcast")
        write_case("min_" + suffix, "Min", 13, [a, b], np.minimum(a, b), "broadcast")
        write_case("less_" + suffix, "Less", 13, [a, b], np.less(a, b), "broadcast")
        write_case("equal_" + suffix, "Equal", 13, [a, a[:, :1, :]], np.equal(a, a[:, :1, :]),
                   "broadcast")
        with np.errstate(all="ignore"):
            write_case("mul_" + suffix, "Mul", 14, [a, b], np.multiply(a, b),
                       "wraps, broadcast")
            write_case("div_" + suffix, "Div", 14, [a, b],
                       np.trunc(a.astype(np.float64) / b.astype(np.float64)).astype(dtype)
                       if dtype not in (U64,) else a // b,
                       "truncates toward zero, broadcast")


def torch_export_cases():
    """A PyTorch 1.13 export that chains most of these ops as torch writes them (Mish and GELU
    decomposed, PReLU's (C,1,1) slope, fmod, where over and/or/not masks), golden from torch."""
    import torch  # only this part needs it

    class Mix(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.prelu = torch.nn.PReLU(4)
            self.elu = torch.nn.ELU(0.7)

        def forward(self, x):
            f = torch.nn.functional
            y = self.prelu(self.conv(x))
            y = f.gelu(y) + f.hardswish(y) - f.mish(y)
            y = torch.where(y < 0.1, torch.sqrt(torch.abs(y)), torch.fmod(y, 0.3))
            y = (torch.maximum(y, -y.exp()) * torch.sign(y) + torch.erf(y) + self.elu(y).pow(2) +
                 f.softplus(y) + torch.floor(y * 3) + torch.round(y))
            y = (y + torch.clamp(torch.sin(y) * torch.cos(y), -0.2, 0.2) + f.selu(y) +
                 f.hardsigmoid(y) + f.softsign(y))
            mask = (y > 0.5) & ~(y >= 2.0) | (y == 0)
            return torch.where(mask, y.reciprocal(), torch.log(y.abs() + 1))

    torch.manual_seed(0)
    model = Mix().eval()
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        y = model(x).numpy()
    for opset in (13, 17):
        name = "torch_elementwise_opset%d" % opset
        d = os.path.join(HERE, name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=opset,
                          input_names=["x"], output_names=["y"])
        ops = sorted(set(n.op_type for n in onnx.load(os.path.join(d, "model.onnx")).graph.node))
        with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, "y").SerializeToString())
        cases.append((name, "model", str(opset), "float32->float32", "", "",
                      "torch 1.13 export, golden from torch: " + " ".join(ops)))


def main():
    if os.path.exists(TSV):
        with open(TSV) as f:
            for line in f.read().splitlines()[1:]:
                shutil.rmtree(os.path.join(HERE, line.split("\t")[0]), ignore_errors=True)
    unary_real_cases()
    signed_unary_cases()
    variadic_cases()
    pow_cases()
    mod_cases()
    prelu_cases()
    compare_cases()
    logic_cases()
    where_cases()
    existing_kernel_f64_cases()
    small_int_cases()
    torch_export_cases()
    names = [c[0] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    with open(TSV, "w") as f:
        f.write("case\top\topset\tdtypes\trtol\tatol\twhat\n")
        for row in cases:
            f.write("\t".join(row) + "\n")
    print("%d cases" % len(cases))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Golden data for the detection kernels from PyTorch and torchvision, the implementations the
detectors were trained with (ONNX's node tests cover the ONNX reference; these cover what the
exporters mean):

    /usr/bin/python3 tests/golden/ops/generate_detect.py   # python3-torch 1.13, python3-torchvision 0.14

- GridSample vs torch.nn.functional.grid_sample: 2-D (GridSample-16 names) in every mode x
  padding x align_corners, 3-D volumes (GridSample-20 names) in linear and nearest (torch has no
  3-D bicubic); grids reach half the image past each edge.
- RoiAlign-16 vs torchvision.ops.roi_align: aligned=False as output_half_pixel, aligned=True as
  half_pixel, sampling_ratio 2 and adaptive (0), spatial_scale 1/4, rois inside, across and
  outside the map, several images.
- NonMaxSuppression-11 vs torchvision.ops.batched_nms (one class per idx): every kept box, in
  torchvision's order, written as [batch 0, class, box] rows grouped by class as ONNX orders
  them (scores distinct, so the orders are unique).

Writes tests/golden/ops/<case>/ (one node; test_data_set_0) and tests/golden/ops/detect.tsv
(case, op, opset, dtypes, rtol, atol, what), from which ctest makes runtime.golden_ops.<case>.
Float32 golden from torch; tolerance rtol 1e-4, atol 1e-5 (different summation order).
Deterministic (seeded from crc32 of the case name); the script deletes the case directories named
in its old tsv and writes them again.
"""
import itertools
import os
import shutil
import zlib

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TSV = os.path.join(HERE, "detect.tsv")
rows = []


def rng(name):
    return np.random.RandomState(zlib.crc32(name.encode()))


def write_case(name, op, opset, node, inputs, outputs, what):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    vi = lambda n, a: helper.make_tensor_value_info(
        n, helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype")
        else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
    graph = helper.make_graph([node], name, [vi(n, a) for n, a in inputs],
                              [vi(n, a) for n, a in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, items in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
    rows.append((name, op, str(opset), "float32", "1e-4", "1e-5", what))


def grid_sample_cases():
    for mode, pad, ac in itertools.product(("bilinear", "nearest", "bicubic"),
                                           ("zeros", "border", "reflection"), (0, 1)):
        name = "gridsample_torch_%s_%s_ac%d" % (mode, pad, ac)
        r = rng(name)
        x = r.randn(2, 3, 5, 6).astype(np.float32)
        g = (r.rand(2, 4, 3, 2) * 3 - 1.5).astype(np.float32)
        y = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), mode=mode,
                                            padding_mode=pad, align_corners=bool(ac)).numpy()
        node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=pad,
                                align_corners=ac)
        write_case(name, "GridSample", 16, node, [("X", x), ("grid", g)], [("Y", y)],
                   "GridSample-16 %s %s align_corners=%d vs torch grid_sample" % (mode, pad, ac))
    for mode, pad, ac in itertools.product(("linear", "nearest"),
                                           ("zeros", "border", "reflection"), (0, 1)):
        name = "gridsample_torch_3d_%s_%s_ac%d" % (mode, pad, ac)
        r = rng(name)
        x = r.randn(2, 2, 3, 4, 5).astype(np.float32)
        g = (r.rand(2, 2, 3, 2, 3) * 3 - 1.5).astype(np.float32)
        y = torch.nn.functional.grid_sample(
            torch.tensor(x), torch.tensor(g), mode="bilinear" if mode == "linear" else mode,
            padding_mode=pad, align_corners=bool(ac)).numpy()
        node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=pad,
                                align_corners=ac)
        write_case(name, "GridSample", 20, node, [("X", x), ("grid", g)], [("Y", y)],
                   "GridSample-20 3-D %s %s align_corners=%d vs torch grid_sample" % (mode, pad, ac))


def roi_align_cases():
    for aligned, ratio in itertools.product((False, True), (2, 0)):
        name = "roialign_torchvision_aligned%d_ratio%d" % (aligned, ratio)
        r = rng(name)
        x = r.randn(2, 3, 12, 10).astype(np.float32)
        # rois in input pixels (spatial_scale 1/4 maps them onto the 12x10 map): inside,
        # across the edges, outside, tiny and large
        rois = np.array([[4, 4, 20, 28], [-8, -6, 10, 12], [30, 40, 60, 70], [1, 1, 2, 2.5],
                         [0, 0, 39, 47], [13.3, 7.1, 29.9, 33.2]], dtype=np.float32)
        batch = np.array([0, 1, 0, 1, 1, 0], dtype=np.int64)
        y = torchvision.ops.roi_align(
            torch.tensor(x), torch.tensor(np.concatenate([batch[:, None], rois], 1).astype(
                np.float32)), output_size=(3, 4), spatial_scale=0.25, sampling_ratio=ratio,
            aligned=aligned).numpy()
        node = helper.make_node(
            "RoiAlign", ["X", "rois", "batch_indices"], ["Y"], output_height=3, output_width=4,
            sampling_ratio=ratio, spatial_scale=0.25,
            coordinate_transformation_mode="half_pixel" if aligned else "output_half_pixel")
        write_case(name, "RoiAlign", 16, node,
                   [("X", x), ("rois", rois), ("batch_indices", batch)], [("Y", y)],
                   "RoiAlign-16 vs torchvision roi_align aligned=%s sampling_ratio %d"
                   % (aligned, ratio))


def nms_cases():
    for iou in (0.3, 0.5, 0.7):
        name = "nms_torchvision_iou%02d" % int(iou * 10)
        r = rng(name)
        n, classes = 60, 3
        xy = r.rand(n, 2).astype(np.float32) * 40
        wh = r.rand(n, 2).astype(np.float32) * 20 + 1
        xyxy = np.concatenate([xy, xy + wh], 1)
        scores = r.permutation(classes * n).reshape(classes, n).astype(np.float32) / (classes * n)
        out = []
        for c in range(classes):
            keep = torchvision.ops.nms(torch.tensor(xyxy), torch.tensor(scores[c]), iou).numpy()
            out += [[0, c, int(k)] for k in keep]
        boxes = xyxy[:, [1, 0, 3, 2]][None]  # ONNX corners [y1, x1, y2, x2]
        node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou"],
                                ["selected"])
        write_case(name, "NonMaxSuppression", 11, node,
                   [("boxes", boxes), ("scores", scores[None]),
                    ("max", np.array([n], dtype=np.int64)),
                    ("iou", np.array([iou], dtype=np.float32))],
                   [("selected", np.array(out, dtype=np.int64).reshape(-1, 3))],
                   "NonMaxSuppression-11 vs torchvision nms per class, iou %.1f" % iou)


def main():
    if os.path.exists(TSV):
        for line in open(TSV).read().splitlines()[1:]:
            shutil.rmtree(os.path.join(HERE, line.split("\t")[0]), ignore_errors=True)
    torch.set_num_threads(1)
    grid_sample_cases()
    roi_align_cases()
    nms_cases()
    with open(TSV, "w") as f:
        f.write("case\top\topset\tdtypes\trtol\tatol\twhat\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    print("%d cases" % len(rows))


if __name__ == "__main__":
    main()

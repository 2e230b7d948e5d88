#!/usr/bin/python3
"""Writes the torchvision detector models of models/detectors/ and their golden data.

    /usr/bin/python3 models/detectors/generate.py [--out DIR] [--only NAME]
    /usr/bin/python3 models/detectors/generate.py --full DIR   # also the full-size detectors
                                                               # (not committed: ~170 MB each)

torchvision's own MaskRCNN and KeypointRCNN classes (Debian python3-torchvision 0.14, with
python3-torch 1.13), random weights (weights=None, fixed seeds, eval mode), exported with
torch.onnx.export at opset 11 (what torchvision 0.14's exporter supports: its NonMaxSuppression
and RoiAlign symbolics are opset 11). Everything of the real detectors is kept -- the
GeneralizedRCNNTransform (normalize, bilinear resize), an FPN over four stages with the extra
max-pooled level, the anchor generator (3 aspect ratios a level, 5 levels), the RPN (per-level
TopK, box decoding, clipping, small-box removal, batched NonMaxSuppression), MultiScaleRoIAlign
(RoiAlign per level, level mapping), the box head and its postprocess (softmax, per-class boxes,
score threshold, NonMaxSuppression, TopK), the mask head (RoiAlign 14x14, 4 convs, ConvTranspose
k2 s2, sigmoid, pasting into the image in a Loop) and the keypoint head (RoiAlign 14x14, 8 convs,
ConvTranspose k4 s2 p1, bilinear upsampling, heatmap argmax decoding in a Loop) -- but the
backbone and heads are narrow (8-16 channels), the image 96x96, and the counts small (RPN keeps
100 boxes before and 50 after NMS, 10 detections an image), so model and data stay small.
box_score_thresh 0 lets detections through although the weights are random.

Golden data: torch's own eval forward on the same image (float32). Deterministic: fixed seeds,
one torch thread.
"""
import argparse
import collections
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn
from torchvision.models.detection import KeypointRCNN, MaskRCNN
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.keypoint_rcnn import KeypointRCNNHeads, KeypointRCNNPredictor
from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from torchvision.ops.misc import FrozenBatchNorm2d

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 11
IMAGE = 96
WIDTH = 16  # FPN and head channels


def stage(cin, cout, stride):
    """A ResNet-like stage: conv 3x3 (stride) + FrozenBatchNorm + ReLU, conv 3x3 + BN + ReLU."""
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), FrozenBatchNorm2d(cout), nn.ReLU(),
        nn.Conv2d(cout, cout, 3, 1, 1, bias=False), FrozenBatchNorm2d(cout), nn.ReLU())


def tiny_backbone():
    """Strides 4, 8, 16, 32 as ResNet's layer1..4 (the stem: conv 7x7 s2 + max pool s2), FPN of
    WIDTH channels with the max-pooled extra level: the feature map names and strides of
    torchvision's resnet_fpn_backbone."""
    body = nn.Sequential(collections.OrderedDict([
        ("stem", nn.Sequential(nn.Conv2d(3, 8, 7, 2, 3, bias=False), FrozenBatchNorm2d(8),
                               nn.ReLU(), nn.MaxPool2d(3, 2, 1))),
        ("layer1", stage(8, 8, 1)), ("layer2", stage(8, 12, 2)),
        ("layer3", stage(12, 16, 2)), ("layer4", stage(16, 16, 2))]))
    return BackboneWithFPN(body, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"},
                           [8, 12, 16, 16], WIDTH)


def randomize(model, gen, spread):
    """Random FrozenBatchNorm statistics (else eval BN is nearly the identity), and class and
    objectness logits scaled up so that scores spread out: with torch's default init they are
    all nearly equal, and near-ties would make the ranking (TopK, NMS order) depend on the last
    bits of float32 sums. The full-size detectors' wide layers spread them already (scaled
    logits would saturate their softmax to ties at 1.0): spread False."""
    for m in model.modules():
        if spread and isinstance(m, FastRCNNPredictor):
            m.cls_score.weight.mul_(30)
            m.cls_score.bias.copy_(torch.randn(m.cls_score.bias.numel(), generator=gen))
    if spread:
        model.rpn.head.cls_logits.weight.normal_(0, 0.5, generator=gen)
    for m in model.modules():
        if isinstance(m, FrozenBatchNorm2d):
            n = m.weight.numel()
            m.weight.copy_(1 + 0.2 * torch.randn(n, generator=gen))
            m.bias.copy_(0.1 * torch.randn(n, generator=gen))
            m.running_mean.copy_(0.1 * torch.randn(n, generator=gen))
            m.running_var.copy_(1 + 0.5 * torch.rand(n, generator=gen))


COMMON = dict(min_size=IMAGE, max_size=IMAGE, rpn_pre_nms_top_n_test=100,
              rpn_post_nms_top_n_test=50, box_score_thresh=0.0, box_detections_per_img=10,
              box_batch_size_per_image=64)


def mask_rcnn_tiny(num_classes=5):
    model = MaskRCNN(tiny_backbone(), num_classes=None,
                     box_head=TwoMLPHead(WIDTH * 7 * 7, 32),
                     box_predictor=FastRCNNPredictor(32, num_classes),
                     mask_head=MaskRCNNHeads(WIDTH, (WIDTH,) * 4, 1),
                     mask_predictor=MaskRCNNPredictor(WIDTH, WIDTH, num_classes), **COMMON)
    return model, ["boxes", "labels", "scores", "masks"]


def keypoint_rcnn_tiny(num_keypoints=17):
    model = KeypointRCNN(tiny_backbone(), num_classes=None,
                         box_head=TwoMLPHead(WIDTH * 7 * 7, 32),
                         box_predictor=FastRCNNPredictor(32, 2),
                         keypoint_head=KeypointRCNNHeads(WIDTH, (WIDTH,) * 8),
                         keypoint_predictor=KeypointRCNNPredictor(WIDTH, num_keypoints),
                         **COMMON)
    return model, ["boxes", "labels", "scores", "keypoints", "keypoints_scores"]


def mask_rcnn_full():
    from torchvision.models.detection import maskrcnn_resnet50_fpn
    return maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, box_score_thresh=0.0), \
        ["boxes", "labels", "scores", "masks"]


def keypoint_rcnn_full():
    from torchvision.models.detection import keypointrcnn_resnet50_fpn
    return keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None,
                                     box_score_thresh=0.0), \
        ["boxes", "labels", "scores", "keypoints", "keypoints_scores"]


MODELS = {
    "maskrcnn_tiny": (mask_rcnn_tiny, 1, IMAGE),
    "keypointrcnn_tiny": (keypoint_rcnn_tiny, 2, IMAGE),
}
FULL = {
    "maskrcnn_resnet50_fpn": (mask_rcnn_full, 3, 320),
    "keypointrcnn_resnet50_fpn": (keypoint_rcnn_full, 4, 320),
}


def write_tensor(path, arr, name):
    t = numpy_helper.from_array(np.ascontiguousarray(arr), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def build(name, factory, seed, size, out_dir, spread):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model, outputs = factory()
    with torch.no_grad():
        randomize(model, gen, spread)
    model.eval()
    image = torch.rand(3, size, size, generator=gen)
    with torch.no_grad():
        golden = model([image])[0]
    d = os.path.join(out_dir, name)
    tmp = d + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "test_data_set_0"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, ([image],), os.path.join(tmp, "model.onnx"),
                          opset_version=OPSET, input_names=["image"], output_names=outputs,
                          do_constant_folding=True)
    m = onnx.load(os.path.join(tmp, "model.onnx"))
    onnx.checker.check_model(m)
    write_tensor(os.path.join(tmp, "test_data_set_0", "input_0.pb"), image.numpy(), "image")
    for k, key in enumerate(outputs):
        write_tensor(os.path.join(tmp, "test_data_set_0", "output_%d.pb" % k),
                     golden[key].numpy(), key)
    shutil.rmtree(d, ignore_errors=True)
    os.rename(tmp, d)
    ops = set()

    def walk(g):
        for node in g.node:
            ops.add(node.op_type)
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    walk(m.graph)
    shapes = {k: list(golden[k].shape) for k in outputs}
    return dict(name=name, ops=sorted(ops), shapes=shapes,
                bytes=os.path.getsize(os.path.join(d, "model.onnx")),
                scores=golden["scores"].numpy().tolist())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--only")
    ap.add_argument("--full", metavar="DIR", help="also write the full-size detectors there")
    args = ap.parse_args()
    torch.set_num_threads(1)
    todo = [(n, MODELS[n], args.out, True) for n in MODELS]
    if args.full:
        todo += [(n, FULL[n], args.full, False) for n in FULL]
    for name, (factory, seed, size), out, spread in todo:
        if args.only and name != args.only:
            continue
        info = build(name, factory, seed, size, out, spread)
        print("%s: %d bytes, outputs %s\n  ops %s\n  scores %s" % (
            name, info["bytes"], info["shapes"], ", ".join(info["ops"]),
            ["%.4f" % s for s in info["scores"]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

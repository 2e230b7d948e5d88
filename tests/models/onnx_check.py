"""Loads a model converted by tconv in python3-onnx and runs onnx.checker.check_model on it
(a test-time check of the output's validity; tconv itself never runs Python)."""
import sys

import onnx

model = onnx.load(sys.argv[1])
onnx.checker.check_model(model, full_check=True)
print(f"{sys.argv[1]}: onnx.checker.check_model passed ({len(model.graph.node)} nodes)")

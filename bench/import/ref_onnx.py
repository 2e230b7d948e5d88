#!/usr/bin/python3
"""The reference: onnx.load + onnx.save in python3-onnx. Prints the seconds the two calls take
(interpreter start-up and `import onnx` are not counted: that favours the reference).

usage: ref_onnx.py IN.onnx OUT.onnx
"""
import sys
import time

import onnx


def main():
    src, dst = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    model = onnx.load(src)
    onnx.save(model, dst)
    print(f"{time.perf_counter() - t0:.6f}")


if __name__ == "__main__":
    main()

"""python -m models NAME -o out.onnx [--size S] [--batch B] [--dynamic-batch] [--seed N]"""
from __future__ import annotations

import argparse
import sys
import time

import onnx

from . import NAMES, build, profile


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {__package__}", description="write a reference ONNX model")
    ap.add_argument("name", choices=NAMES)
    ap.add_argument("-o", "--output", required=True, help="output .onnx path")
    ap.add_argument("--size", type=int, help="input height/width")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--dynamic-batch", action="store_true", help="symbolic batch dim 'N'")
    ap.add_argument("--seed", type=int, help="weight seed (default: fixed per model)")
    a = ap.parse_args(argv)
    kw = {k: v for k, v in (("size", a.size), ("batch", a.batch), ("seed", a.seed)) if v is not None}
    if a.dynamic_batch:
        kw["dynamic_batch"] = True
    t0 = time.perf_counter()
    model = build(a.name, **kw)
    dt = time.perf_counter() - t0
    onnx.save(model, a.output)
    p = profile(model)
    print(f"{a.name}: wrote {a.output} ({model.ByteSize() / 1e6:.1f} MB, {p['nodes']} nodes, "
          f"{p['params'] / 1e6:.3f} M params, {p['macs'] / 1e6:.1f} M MACs, built in {dt:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

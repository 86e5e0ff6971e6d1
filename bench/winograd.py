#!/usr/bin/env python3
"""One 3x3 stride-1 convolution (C = M channels, H = W pixels) as the packed variant and as Winograd,
alternating in one process (a benchmark, not a test): the measurements behind the compiler's Winograd rule
(Target.winograd_min_channels, winograd_min_pixels).

    python3 bench/winograd.py [--channels 16,32,64,128,256] [--sizes 10,20,40,80]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--channels", default="16,32,64,128,256")
    ap.add_argument("--sizes", default="10,20,40,80")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    import edgeplan
    from edgeplan.compiler.pipeline import compile_model
    from edgeplan.compiler.target import Target
    packed = Target("packed", packed=True, pack_bytes=256 * 1024)
    wino = Target("winograd", packed=True, winograd=True, pack_bytes=256 * 1024, winograd_budget=100.0,
                  winograd_min_channels=1, winograd_min_pixels=1)
    rng = np.random.default_rng(0)
    for c in (int(v) for v in a.channels.split(",")):
        for hw in (int(v) for v in a.sizes.split(",")):
            w = numpy_helper.from_array(rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.1, "w")
            g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "conv",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
            sess = {t.name: edgeplan.Session(compile_model(m, target=t)) for t in (packed, wino)}
            x = rng.random((1, c, hw, hw), dtype=np.float32)
            calls = max(3, int(2e7 / (c * c * hw * hw * 9)))
            ms = {k: [] for k in sess}
            for _ in range(a.rounds):
                for k, s in sess.items():
                    s.run(x=x)
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        s.run(x=x)
                    ms[k].append((time.perf_counter() - t0) / calls * 1e3)
            p, q = statistics.median(ms["packed"]), statistics.median(ms["winograd"])
            print(f"C=M={c:4d} {hw:3d}x{hw:<3d} packed {p:8.3f} ms  winograd {q:8.3f} ms  winograd/packed {q / p:.2f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

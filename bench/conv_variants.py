#!/usr/bin/env python3
"""One convolution layer under two CONV2D variants, and onnxruntime, alternating in one process (a benchmark,
not a test). It measures where the compiler's thresholds for DW_C8 (Target.dw_c8_width), DIRECT
(Target.direct_channels, direct_outputs) and POINTWISE (Target.pointwise_pixels, pointwise_kxk_pixels) belong:

    python3 bench/conv_variants.py                 # the depthwise layers of MobileNetV2, the stems, 1x1, few pixels
    python3 bench/conv_variants.py --rounds 31 --only few

Each row builds a one-Conv ONNX model (+ Relu), compiles it for the host target twice (the variant forced
on; the variant off: the plane-at-a-time DEPTHWISE, or im2col PACKED), and times --batch runs of each engine per round, in an
order that rotates every round. Ratios are medians of the per-round ratios, with their range.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (label, C, M, H, W, kernel, stride, groups); kernel and stride an int or (h, w)
ROWS = [
    ("dw 3x3 s1 112x112 c32", 32, 32, 112, 112, 3, 1, 32),
    ("dw 3x3 s1 56x56 c144", 144, 144, 56, 56, 3, 1, 144),
    ("dw 3x3 s2 56x56 c144", 144, 144, 56, 56, 3, 2, 144),
    ("dw 3x3 s1 28x28 c192", 192, 192, 28, 28, 3, 1, 192),
    ("dw 3x3 s1 14x14 c576", 576, 576, 14, 14, 3, 1, 576),
    ("dw 3x3 s2 14x14 c576", 576, 576, 14, 14, 3, 2, 576),
    ("dw 3x3 s1 7x7 c960", 960, 960, 7, 7, 3, 1, 960),
    ("dw 5x5 s1 14x14 c480", 480, 480, 14, 14, 5, 1, 480),
    ("stem 3x3 s2 224 3->32", 3, 32, 224, 224, 3, 2, 1),
    ("stem 7x7 s2 224 3->64", 3, 64, 224, 224, 7, 2, 1),
    ("stem 6x6 s2 320 3->16", 3, 16, 320, 320, 6, 2, 1),
    ("stem 3x3 s2 640 3->16", 3, 16, 640, 640, 3, 2, 1),
    ("stem 3x3 s2 224 3->64", 3, 64, 224, 224, 3, 2, 1),
    ("stem 3x3 s1 32x32 3->16", 3, 16, 32, 32, 3, 1, 1),
    ("conv 3x3 s1 56x56 4->32", 4, 32, 56, 56, 3, 1, 1),
    ("conv 3x3 s1 80x80 16->16", 16, 16, 80, 80, 3, 1, 1),
    ("conv 3x3 s2 160 16->32", 16, 32, 160, 160, 3, 2, 1),
    ("pw 7x7 320->1280", 320, 1280, 7, 7, 1, 1, 1),
    ("pw 7x7 960->320", 960, 320, 7, 7, 1, 1, 1),
    ("pw 7x7 160->960", 160, 960, 7, 7, 1, 1, 1),
    ("pw 14x14 576->96", 576, 96, 14, 14, 1, 1, 1),
    ("pw 14x14 96->576", 96, 576, 14, 14, 1, 1, 1),
    # few output pixels (POINTWISE on any kernel): Silero VAD's 1-D convs over a window, small deep maps
    ("few 1x4 k1x3 129->128", 129, 128, 1, 4, (1, 3), 1, 1),
    ("few 1x4 k1x3 s2 128->64", 128, 64, 1, 4, (1, 3), (1, 2), 1),
    ("few 1x640 k1x256 s128 1->258", 1, 258, 1, 640, (1, 256), (1, 128), 1),
    ("few 2x2 3x3 128->128", 128, 128, 2, 2, 3, 1, 1),
    ("few 3x3 3x3 256->256", 256, 256, 3, 3, 3, 1, 1),
    ("few 1x8 k1x3 64->128", 64, 128, 1, 8, (1, 3), 1, 1),
    ("few 1x12 k1x5 256->128", 256, 128, 1, 12, (1, 5), 1, 1),
    ("few 1x16 k1x3 64->64", 64, 64, 1, 16, (1, 3), 1, 1),
    ("few 4x4 3x3 128->128", 128, 128, 4, 4, 3, 1, 1),
    ("few 8x8 3x3 64->64", 64, 64, 8, 8, 3, 1, 1),
]


def conv_model(c, m, h, w, k, s, g):
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    rng = np.random.default_rng(0)
    (kh, kw), (sh, sw) = (k if isinstance(k, tuple) else (k, k)), (s if isinstance(s, tuple) else (s, s))
    wt = numpy_helper.from_array(rng.standard_normal((m, c // g, kh, kw)).astype(np.float32) * 0.1, "w")
    bt = numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b")
    ph, pw = (kh - 1) // 2, (kw - 1) // 2 if kw < 16 else 0
    node = helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kh, kw], strides=[sh, sw],
                            pads=[ph, pw, ph, pw], group=g)
    relu = helper.make_node("Relu", ["c"], ["y"])
    graph = helper.make_graph([node, relu], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [wt, bt])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batch", type=int, default=5)
    ap.add_argument("--only", default="", help="the rows whose label contains this text")
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort
    import edgeplan
    from edgeplan.compiler.pipeline import compile_model
    from edgeplan.compiler.target import get_target
    sys.path.insert(0, str(ROOT / "bench"))
    from cnn import cpu_line
    tg = get_target("host")
    on = dataclasses.replace(tg, dw_c8_width=1 << 30, direct_channels=16, direct_outputs=1 << 30,
                             direct_outputs_s1=1 << 30, pointwise_pixels=1 << 30, pointwise_kxk_pixels=1 << 30)
    off = dataclasses.replace(tg, dw_c8_width=0, direct_channels=0, pointwise_pixels=0, pointwise_kxk_pixels=0)
    print(cpu_line())
    print(f"{'layer':26s} {'on ms':>8s} {'off ms':>8s} {'on / off':>18s} {'on / onnxruntime':>18s}")
    for label, c, m, h, w, k, s, g in (r for r in ROWS if a.only in r[0]):
        model = conv_model(c, m, h, w, k, s, g)
        sess = {key: edgeplan.Session(compile_model(model, target=t), threads=1)
                for key, t in (("on", on), ("off", off))}
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        ort_s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        x = np.random.default_rng(1).standard_normal((1, c, h, w)).astype(np.float32)
        fns = {"on": lambda: sess["on"].run({"x": x}), "off": lambda: sess["off"].run({"x": x}),
               "ort": lambda: ort_s.run(None, {"x": x})}
        ref = fns["ort"]()[0]
        for key in ("on", "off"):
            got = next(iter(fns[key]().values()))
            assert np.abs(got - ref).max() <= 1e-3 * max(1.0, np.abs(ref).max()), (label, key)
        for f in fns.values():
            f()
        times = {k_: [] for k_ in fns}
        ratios, vs_ort = [], []
        order = list(fns)
        for r in range(a.rounds):
            order = order[1:] + order[:1]
            med = {}
            for key in order:
                ts = []
                for _ in range(a.batch):
                    t0 = time.perf_counter()
                    fns[key]()
                    ts.append(time.perf_counter() - t0)
                med[key] = statistics.median(ts)
                times[key].append(med[key])
            ratios.append(med["on"] / med["off"])
            vs_ort.append(med["on"] / med["ort"])
        print(f"{label:26s} {1e3 * statistics.median(times['on']):8.3f} {1e3 * statistics.median(times['off']):8.3f} "
              f"{statistics.median(ratios):6.2f} ({min(ratios):.2f}..{max(ratios):.2f}) "
              f"{statistics.median(vs_ort):6.2f} ({min(vs_ort):.2f}..{max(vs_ort):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""int8 GEMM against fp32 GEMM in edgeplan, one thread: the exact int8 product (QGEMM PACKED) and the fp32
FMA product (GEMM, packed weights) on six convolution-like shapes, timed in one process with the calls
alternating. A benchmark, not a test.

Each shape is a convolution written as a product: P output positions (rows of A), K = Cin kh kw reduction
indices, C output channels (columns of the constant weights B [K, C]). The int8 plan comes from a QDQ ONNX
MatMul built here with numpy (QuantizeLinear / DequantizeLinear around a per-column int8 weight), the fp32
plan from the plain MatMul; both are compiled by edgeplan for this host. The op times are the session's
per-op profile counters (CLOCK_MONOTONIC around the kernel call), so the QUANTIZE / DEQUANTIZE at the
int8 plan's edges are not part of the ratio; the medians of --runs alternating runs are reported.

    EDGEPLAN_LIB=/path/libedgeplan.so PYTHONPATH=pyapi:. python3 bench/int8_gemm.py [--runs N] [--shapes PxKxC ...]

The acceptance figure (QUANTIZATION.md, 9.6): the median of the six ratios int8 / fp32 at most 0.85."""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# (P, K, C): a stem 3x3 on 112x112x3, 3x3 convs of MobileNet/ResNet widths, a 1x1 expansion, a wide 3x3
SHAPES = [(12544, 27, 16), (3136, 288, 32), (3136, 64, 192), (784, 576, 64), (196, 1152, 128), (196, 2304, 256)]


def _cpu() -> str:
    if Path("/proc/cpuinfo").exists():
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _models(p, k, c, seed=0):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((k, c)).astype(np.float32) / np.sqrt(k)
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [p, k])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, [p, c])
    fp = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "gemm_f32",
                                             [x_info], [y_info], [numpy_helper.from_array(w, "w")]),
                           opset_imports=[helper.make_opsetid("", 17)])
    ws = (np.abs(w).max(axis=0) / 127.0).astype(np.float32)
    wq = np.clip(np.round(w / ws), -127, 127).astype(np.int8)
    xs, ys = np.float32(4.0 / 127), np.float32(8.0 / 127)
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(c, np.int8), "wz"),
             numpy_helper.from_array(np.array(xs, np.float32), "xs"),
             numpy_helper.from_array(np.array(3, np.int8), "xz"),
             numpy_helper.from_array(np.array(ys, np.float32), "ys"),
             numpy_helper.from_array(np.array(-2, np.int8), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=1),
             helper.make_node("MatMul", ["xd", "wd"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    q = helper.make_model(helper.make_graph(nodes, "gemm_i8", [x_info], [y_info], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(q)
    return fp, q


def _op_ns(sess, kinds):
    """Total ns of the ops whose kind is in kinds since the last profile_reset."""
    prof = sess.profile()
    hit = [o for o in prof if o["kind"] in kinds]
    return sum(o["total_ns"] for o in hit), [o["kind"] for o in prof]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--shapes", nargs="*", help="PxKxC (rows of A x reduction x output channels)")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "pyapi"))
    import edgeplan
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes] if a.shapes else SHAPES
    print(f"{_cpu()}, {a.threads} thread(s), edgeplan x86 kernels (AVX2+FMA), medians of {a.runs} alternating "
          "runs of the op alone (profile counters)\n")
    print("| P x K x C | GMAC | fp32 GEMM ms | GFLOP/s | int8 QGEMM ms | GFLOP/s | int8 / fp32 |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for p, k, c in shapes:
        fp, q = _models(p, k, c)
        x = (np.random.default_rng(1).standard_normal((p, k)) * 1.2).astype(np.float32)
        sess = {"f32": edgeplan.Session(edgeplan.compile(fp), threads=a.threads, profile=True),
                "i8": edgeplan.Session(edgeplan.compile(q), threads=a.threads, profile=True)}
        kinds = {"f32": ("gemm",), "i8": ("qgemm",)}
        times = {key: [] for key in sess}
        for s in sess.values():
            s.run({"x": x})
        for key, s in sess.items():
            s.profile_reset()
            s.run({"x": x})
            ns, all_kinds = _op_ns(s, kinds[key])
            if ns == 0:
                raise SystemExit(f"{key} plan has no {kinds[key]} op: {all_kinds}")
        for _ in range(a.runs):
            for key, s in sess.items():
                s.profile_reset()
                s.run({"x": x})
                times[key].append(_op_ns(s, kinds[key])[0])
        m = {key: statistics.median(v) / 1e6 for key, v in times.items()}
        flop = 2.0 * p * k * c
        r = m["i8"] / m["f32"]
        ratios.append(r)
        print(f"| {p} x {k} x {c} | {flop / 2e9:.3f} | {m['f32']:.3f} | {flop / m['f32'] / 1e6:.1f} | "
              f"{m['i8']:.3f} | {flop / m['i8'] / 1e6:.1f} | {r:.2f} |")
        for s in sess.values():
            s.close()
    print(f"\nmedian int8 / fp32: {statistics.median(ratios):.2f} (range {min(ratios):.2f} .. {max(ratios):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

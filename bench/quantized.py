#!/usr/bin/env python3
"""edgeplan vs onnxruntime on the real quantised exports of the pinned suite (a benchmark, not a test):
one process, one thread each, the calls alternating, medians and ratios (edgeplan / onnxruntime: lower
is better for edgeplan). onnxruntime runs both ways: its default optimiser, which swaps in integer
kernels, and ORT_DISABLE_ALL, its exact float semantics of the quantised graph, which edgeplan computes.

    smart turn   Smart Turn v3.2, int8 QDQ (a Whisper-tiny encoder on 8 s of log-mel)
    ddddocr      the ddddocr recogniser, dynamic int8 (ConvInteger, MatMulInteger, DynamicQuantizeLSTM)

and the zoo CNNs (models/) quantised by onnxruntime's quantize_static (QDQ, per channel, int8), where edgeplan's
int8 plan is also set against its own fp32 plan of the float model and onnxruntime against its float model:

    mobilenetv2, resnet50   int8 QDQ (edgeplan: QCONV2D, QADD, QGEMM) and fp32

    python3 bench/quantized.py [--runs N] [--zoo mobilenetv2,resnet50]

Needs the pinned models (tests/models/fetch.py)."""
from __future__ import annotations

import argparse
import importlib.util
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CASES = {"smart turn": ("smart_turn_v3_2_cpu.onnx", "input_features", (1, 80, 800), 0.5),
         "ddddocr": ("ddddocr_ocr_old_int8.onnx", "input1", (1, 1, 64, 160), 1.0)}


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--zoo", default="mobilenetv2,resnet50", help="zoo CNNs to quantise ('' for none)")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "pyapi"))
    import onnxruntime as ort
    import edgeplan
    cache = _load("fetch", ROOT / "tests" / "models" / "fetch.py").cache_dir()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    print(f"{cpu}, 1 thread, medians of {a.runs} alternating calls (edgeplan's x86 kernels are AVX2)\n")
    print("| model | edgeplan ms | onnxruntime ms (default) | ratio | onnxruntime ms (unfused) | ratio |")
    print("|---|---|---|---|---|---|")
    for label, (file, name, shape, scale) in CASES.items():
        path = str(cache / file)
        x = (np.random.default_rng(0).standard_normal(shape) * scale).astype(np.float32)
        calls = {}
        for how in ("default", "unfused"):
            so = ort.SessionOptions()
            so.intra_op_num_threads, so.log_severity_level = 1, 3
            if how == "unfused":
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            calls[how] = lambda s=s: s.run(None, {name: x})
        ep = edgeplan.Session(edgeplan.compile(path, shapes={name: shape}), threads=1)
        calls["edgeplan"] = lambda: ep.run({name: x})
        times = {k: [] for k in calls}
        for f in calls.values():
            f()
        for _ in range(a.runs):
            for k, f in calls.items():
                t = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t)
        m = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        print(f"| {label} | {m['edgeplan']:.1f} | {m['default']:.1f} | {m['edgeplan'] / m['default']:.2f} | "
              f"{m['unfused']:.1f} | {m['edgeplan'] / m['unfused']:.2f} |")
    zoo = [z for z in a.zoo.split(",") if z]
    if zoo:
        print("\n| model | edgeplan int8 ms | edgeplan fp32 ms | int8 / fp32 | onnxruntime int8 ms | edgeplan int8 / "
              "onnxruntime int8 | onnxruntime fp32 ms |")
        print("|---|---|---|---|---|---|---|")
    for z in zoo:
        m = _zoo_row(z, a.runs, ort, edgeplan)
        print(f"| {z} | {m['ep8']:.2f} | {m['ep32']:.2f} | {m['ep8'] / m['ep32']:.2f} | {m['ort8']:.2f} | "
              f"{m['ep8'] / m['ort8']:.2f} | {m['ort32']:.2f} |")
    return 0


def _zoo_row(z, runs, ort, edgeplan):
    import tempfile
    import onnx
    from onnxruntime import quantization as Q
    sys.path.insert(0, str(ROOT))
    from models import INPUTS, build
    name, shape = INPUTS[z]
    f = build(z)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)

    class Reader(Q.CalibrationDataReader):
        def __init__(self):
            self.d = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.d, None)
    with tempfile.TemporaryDirectory() as d:
        onnx.save(f, f"{d}/f.onnx")
        # onnxruntime's recommended pre-processing first (BatchNormalization folded into the convs)
        from onnxruntime.quantization.shape_inference import quant_pre_process
        quant_pre_process(f"{d}/f.onnx", f"{d}/p.onnx")
        Q.quantize_static(f"{d}/p.onnx", f"{d}/q.onnx", Reader(), quant_format=Q.QuantFormat.QDQ, per_channel=True,
                          activation_type=Q.QuantType.QInt8, weight_type=Q.QuantType.QInt8)
        q = onnx.load(f"{d}/q.onnx")
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.log_severity_level = 1, 3
    o8 = ort.InferenceSession(q.SerializeToString(), so, providers=["CPUExecutionProvider"])
    o32 = ort.InferenceSession(f.SerializeToString(), so, providers=["CPUExecutionProvider"])
    e8 = edgeplan.Session(edgeplan.compile(q), threads=1)
    e32 = edgeplan.Session(edgeplan.compile(f), threads=1)
    calls = {"ep8": lambda: e8.run({name: x}), "ep32": lambda: e32.run({name: x}),
             "ort8": lambda: o8.run(None, {name: x}), "ort32": lambda: o32.run(None, {name: x})}
    times = {k: [] for k in calls}
    for fn in calls.values():
        fn()
    for _ in range(runs):
        for k, fn in calls.items():
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


if __name__ == "__main__":
    sys.exit(main())

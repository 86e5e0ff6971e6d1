#!/usr/bin/env python3
"""edgeplan vs onnxruntime on the real quantised exports of the pinned suite (a benchmark, not a test):
one process, one thread each, the calls alternating, medians and ratios (edgeplan / onnxruntime: lower
is better for edgeplan). onnxruntime runs both ways: its default optimiser, which swaps in integer
kernels, and ORT_DISABLE_ALL, its exact float semantics of the quantised graph, which edgeplan computes.

    smart turn   Smart Turn v3.2, int8 QDQ (a Whisper-tiny encoder on 8 s of log-mel)
    ddddocr      the ddddocr recogniser, dynamic int8 (ConvInteger, MatMulInteger, DynamicQuantizeLSTM)

    python3 bench/quantized.py [--runs N]

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
    return 0


if __name__ == "__main__":
    sys.exit(main())

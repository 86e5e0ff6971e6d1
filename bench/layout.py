#!/usr/bin/env python3
"""The channel-blocked layout C8 on whole CNNs: the same model compiled with and without it (compiler/passes/
layout.py), and onnxruntime, alternating in one process (a benchmark, not a test).

Each round times --batch calls of each of the three engines, in an order that rotates every round; the figures
are the medians of the per-round ratios C8 / plain and C8 / onnxruntime, with their range. Rows as bench/cnn.py.

    python3 bench/layout.py                               # the zoo CNNs and the real exports, 1 thread
    python3 bench/layout.py --models mobilenetv2 --rounds 21
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import cnn  # noqa: E402


def bench_one(name: str, a, d: Path) -> dict:
    import numpy as np
    import onnxruntime as ort
    import edgeplan
    from edgeplan.compiler.pipeline import compile_model
    from edgeplan.compiler.target import get_target
    path, shapes = cnn.model_file(name, d)
    tg = get_target("host")
    c8 = compile_model(str(path), shapes or None, target=tg)
    plain = compile_model(str(path), shapes or None, target=dataclasses.replace(tg, blocked=False))
    n_reorder = c8.report["op_counts"].get("reorder", 0)
    s8, sp = edgeplan.Session(c8, threads=a.threads), edgeplan.Session(plain, threads=a.threads)
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    osess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.random(i.shape, dtype=np.float32) for i in s8.inputs}
    runs = {"c8": s8.run, "plain": sp.run, "ort": lambda f: osess.run(None, f)}
    a8 = np.concatenate([np.ravel(v) for v in s8.run(feeds).values()])
    ap_ = np.concatenate([np.ravel(v) for v in sp.run(feeds).values()])
    diff = float(np.max(np.abs(a8 - ap_)))
    for _ in range(a.warmup):
        for r in runs.values():
            r(feeds)
    order = list(runs)
    vs_plain, vs_ort, ms = [], [], {k: [] for k in runs}
    for i in range(a.rounds):
        t = {}
        for k in order[i % 3:] + order[:i % 3]:
            t[k] = cnn.timed(runs[k], feeds, a.batch)
            ms[k].append(t[k])
        vs_plain.append(t["c8"] / t["plain"])
        vs_ort.append(t["c8"] / t["ort"])
    return {"model": name, "reorders": n_reorder, "diff": diff,
            **{f"{k}_ms": statistics.median(v) for k, v in ms.items()},
            "vs_plain": statistics.median(vs_plain), "vs_plain_range": (min(vs_plain), max(vs_plain)),
            "vs_ort": statistics.median(vs_ort), "vs_ort_range": (min(vs_ort), max(vs_ort))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=cnn.ZOO + list(cnn.REAL))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--batch", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    print(f"Machine: {cnn.cpu_line()}; {a.threads} thread(s); {a.rounds} rounds of {a.batch} calls per engine")
    print("| model | reorders | C8 ms | plain ms | onnxruntime ms | C8 / plain (range) | C8 / onnxruntime (range) | "
          "max abs diff C8 - plain |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for name in a.models:
            r = bench_one(name, a, Path(d))
            print(f"| {name} | {r['reorders']} | {r['c8_ms']:.3f} | {r['plain_ms']:.3f} | {r['ort_ms']:.3f} | "
                  f"{r['vs_plain']:.2f} ({r['vs_plain_range'][0]:.2f}..{r['vs_plain_range'][1]:.2f}) | "
                  f"{r['vs_ort']:.2f} ({r['vs_ort_range'][0]:.2f}..{r['vs_ort_range'][1]:.2f}) | {r['diff']:.1e} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

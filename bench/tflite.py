#!/usr/bin/env python3
"""edgeplan against LiteRT on the pinned .tflite suite (tests/py/test_tflite_models.py SUITE; a benchmark,
not a test): per file, the latency of one edgeplan Session.run over one LiteRT invoke (ai-edge-litert, its
default XNNPACK delegate on, num_threads=1), both in this process on the same seeded inputs. Each round
times edgeplan then LiteRT (the order alternating round by round), each the mean of as many calls as fill
--ms milliseconds; the ratio is per round, and the table gives the median ratio and its range over the
rounds (lower is better for edgeplan; < 1: edgeplan is faster).

    python3 bench/tflite.py [--rounds 7] [--ms 200] [--files melspectrogram,alexa]

Needs the pinned files (python3 tests/models/fetch.py) and ai-edge-litert. Streaming models run their
state forward in both engines alike."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from _common import cpu_name as _cpu   # noqa: E402 - bench/ is still on the path here

ROOT = Path(__file__).resolve().parents[1]
# this file's folder would shadow the `tflite` package (the schema classes the importer reads with)
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path[:0] = [str(ROOT / "pyapi"), str(ROOT / "tests" / "py")]

import edgeplan  # noqa: E402



def _timed(fn, ms: float) -> float:
    """Seconds per call: the mean over as many calls as fill `ms` (at least 3)."""
    fn()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if n >= 3 and dt * 1e3 >= ms:
            return dt / n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--ms", type=float, default=200.0)
    ap.add_argument("--files", default="", help="comma-separated substrings of the suite's keys")
    args = ap.parse_args(argv)
    from ai_edge_litert.interpreter import Interpreter
    import test_tflite_models as suite
    keys = [k for k, c in suite.SUITE.items() if not c.refused]
    if args.files:
        keys = [k for k in keys if any(f in k for f in args.files.split(","))]
    print(f"CPU: {_cpu()}; edgeplan {edgeplan.__version__ if hasattr(edgeplan, '__version__') else ''} vs "
          f"LiteRT (XNNPACK, 1 thread); {args.rounds} rounds of {args.ms:.0f} ms per engine")
    print("| file | edgeplan ms | LiteRT ms | ratio (median) | range |")
    print("|---|---:|---:|---:|---|")
    medians = []
    for key in keys:
        case = suite.SUITE[key]
        path = suite._path(key)
        s = edgeplan.Session(edgeplan.compile(str(path), shapes=case.shapes or None))
        it = Interpreter(model_path=str(path), num_threads=1)
        for d in it.get_input_details():
            if d["name"] in case.shapes:
                it.resize_tensor_input(d["index"], list(case.shapes[d["name"]]))
        it.allocate_tensors()
        rng = np.random.default_rng(0)
        feeds = {d["name"]: suite._feed(d, case, rng) for d in it.get_input_details()}
        idx = {d["name"]: d["index"] for d in it.get_input_details()}

        def run_ep():
            s.run(feeds)

        def run_lr():
            for name, x in feeds.items():
                it.set_tensor(idx[name], x)
            it.invoke()

        ratios, te, tl = [], [], []
        for r in range(args.rounds):
            if r % 2 == 0:
                a = _timed(run_ep, args.ms)
                b = _timed(run_lr, args.ms)
            else:
                b = _timed(run_lr, args.ms)
                a = _timed(run_ep, args.ms)
            te.append(a)
            tl.append(b)
            ratios.append(a / b)
        med = statistics.median(ratios)
        medians.append(med)
        print(f"| {key.split('/')[1]} | {statistics.median(te) * 1e3:.3f} | {statistics.median(tl) * 1e3:.3f} | "
              f"{med:.2f} | {min(ratios):.2f}-{max(ratios):.2f} |", flush=True)
    if medians:
        print(f"\nmedian over {len(medians)} files of the per-file median ratios: {statistics.median(medians):.2f} "
              f"(range {min(medians):.2f}-{max(medians):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

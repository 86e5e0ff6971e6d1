#!/usr/bin/env python3
"""edgeplan against onnxruntime on CNNs, alternating in one process (a benchmark, not a test).

Both engines are loaded in this process with the same input. Each round times --batch calls of one engine
and then --batch calls of the other (the order flips every round), and the round's ratio is edgeplan's
median over onnxruntime's. The figure reported is the median of the per-round ratios, with their range
(min..max): on a shared machine the load moves both engines alike inside a round, which separate
processes run one after the other do not see. Beside it, the ratio of each engine's fastest call over all
rounds: the one a loaded host disturbs least.

Rows: the zoo CNNs (edgeplan.models) and real exports, the pinned ones from tests/models/manifest.toml
(fetched into the cache on demand) and ShuffleNet from the onnx wheel's test data.

    python3 bench/cnn.py                                  # every row, 1 thread
    python3 bench/cnn.py --models shufflenet yolo --threads 1,2 --rounds 30
    python3 bench/cnn.py --markdown /tmp/cnn.md           # also write the table
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# real exports: (model id or onnx-wheel name, input shape pins)
REAL = {
    "ppocrv4_det": ("pinned:ppocrv4_det", {"x": (1, 3, 640, 640)}),
    "ppocrv4_rec": ("pinned:ppocrv4_rec", {"x": (1, 3, 48, 320)}),
    "yolov8n": ("pinned:nudenet_320n", {"images": (1, 3, 320, 320)}),
    "shufflenet": ("light:shufflenet", {}),
}
ZOO = ["tiny", "mobilenetv2", "resnet50", "yolo"]


def cpu_line() -> str:
    name, flags = platform.processor() or platform.machine(), set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and name in ("", platform.machine()):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    isa = "avx512f" if "avx512f" in flags else "avx2+fma" if {"avx2", "fma"} <= flags else \
        "asimd" if "asimd" in flags else "baseline"
    return f"{name}, {os.cpu_count()} cores, ISA {isa}"


def model_file(name: str, d: Path) -> tuple:
    if name in ZOO:
        import onnx
        from edgeplan import models
        path = d / f"{name}.onnx"
        onnx.save(models.build(name), path)
        return path, {}
    src, shapes = REAL[name]
    kind, ident = src.split(":")
    if kind == "pinned":
        import importlib.util
        spec = importlib.util.spec_from_file_location("edgeplan_model_fetch", ROOT / "tests/models/fetch.py")
        fetch = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fetch)
        fetch.fetch([ident], log=lambda *_: None)
        entry = next(m for m in fetch.load_manifest()["models"] if m["id"] == ident)
        return fetch.model_path(entry), shapes
    import onnx
    return Path(onnx.__file__).parent / "backend/test/data/light" / f"light_{ident}.onnx", shapes


def timed(run, feeds, n: int) -> tuple:
    """(median, fastest) of n calls, ms."""
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        run(feeds)
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e3, min(t) * 1e3


def bench_one(name: str, threads: int, a, d: Path) -> dict:
    import numpy as np
    import onnxruntime as ort
    import edgeplan
    path, shapes = model_file(name, d)
    plan_path = d / f"{name}.eplan"
    edgeplan.compile(str(path), shapes or None).save(plan_path)
    sess = edgeplan.Session(str(plan_path), threads=threads)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    osess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.random(i.shape, dtype=np.float32) for i in sess.inputs}
    ep_run = lambda f: sess.run(f)
    ort_run = lambda f: osess.run(None, f)
    got, want = ep_run(feeds), ort_run(feeds)
    pairs = [(np.asarray(g, np.float32), np.asarray(w, np.float32))
             for g, w in zip(got.values() if isinstance(got, dict) else got, want)]
    diff = max(float(np.max(np.abs(g - w))) for g, w in pairs)          # max |edgeplan - onnxruntime|
    scale = max(float(np.max(np.abs(w))) for _, w in pairs)             # the outputs' largest magnitude
    for _ in range(a.warmup):
        ep_run(feeds), ort_run(feeds)
    ratios, ep_ms, ort_ms = [], [], []   # per round: the median of --batch calls of each engine
    fast = [float("inf"), float("inf")]  # each engine's fastest call: the ratio a loaded host disturbs least

    def turn(run):
        # with several threads each engine's workers spin for a while after a call (onnxruntime's by default,
        # edgeplan's for EP_POOL_SPIN_NS): on a 2-core machine the other engine's spinning worker would take the
        # core this one's worker needs, so each engine's turn starts after a pause
        if threads > 1:
            time.sleep(0.05)
        return timed(run, feeds, a.batch)

    for r in range(a.rounds):
        if r % 2 == 0:
            (e, ef), (o, of) = turn(ep_run), turn(ort_run)
        else:
            (o, of), (e, ef) = turn(ort_run), turn(ep_run)
        fast = [min(fast[0], ef), min(fast[1], of)]
        ratios.append(e / o)
        ep_ms.append(e)
        ort_ms.append(o)
    sess.close()
    return {"model": name, "threads": threads, "ep_ms": statistics.median(ep_ms),
            "ort_ms": statistics.median(ort_ms), "ratio": statistics.median(ratios),
            "lo": min(ratios), "hi": max(ratios), "fastest": fast[0] / fast[1], "diff": diff, "scale": scale}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=ZOO + list(REAL))
    ap.add_argument("--threads", default="1", help="comma-separated thread counts (default 1)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batch", type=int, default=5, help="calls per engine per round")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--markdown", help="write the table to this file")
    a = ap.parse_args()
    for m in a.models:
        if m not in ZOO and m not in REAL:
            ap.error(f"unknown model {m!r} (known: {', '.join(ZOO + list(REAL))})")
    threads = [int(t) for t in a.threads.split(",") if t]
    import onnxruntime
    import edgeplan
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name in a.models:
            for th in threads:
                r = bench_one(name, th, a, Path(d))
                rows.append(r)
                print(f"{name:<12} threads={th}  edgeplan {r['ep_ms']:9.3f} ms  onnxruntime {r['ort_ms']:9.3f} ms  "
                      f"ratio {r['ratio']:.2f} ({r['lo']:.2f}..{r['hi']:.2f}, fastest calls {r['fastest']:.2f})  "
                      f"max |diff| {r['diff']:.1e} "
                      f"(outputs up to {r['scale']:.1e})",
                      flush=True)
    one = {r["model"]: r for r in rows if r["threads"] == 1}
    for r in rows:   # each engine's own speed-up over its 1-thread row
        b = one.get(r["model"])
        r["sp"] = (b["ep_ms"] / r["ep_ms"], b["ort_ms"] / r["ort_ms"]) if b and r["threads"] != 1 else None
        if r["sp"]:
            print(f"{r['model']:<12} threads={r['threads']}  speed-up over 1 thread: edgeplan x{r['sp'][0]:.2f}, "
                  f"onnxruntime x{r['sp'][1]:.2f}")
    real = [r["ratio"] for r in rows if r["model"] in REAL and r["threads"] == 1]
    if real:
        print(f"real exports, 1 thread: median ratio {statistics.median(real):.2f}")
    if a.markdown:
        lines = [f"Machine: {cpu_line()}; onnxruntime {onnxruntime.__version__}; edgeplan {edgeplan.__version__}; "
                 f"{a.rounds} rounds of {a.batch} calls per engine, alternating, after {a.warmup} warm-up.",
                 f"Reproduce: `python3 bench/cnn.py --threads {a.threads} --rounds {a.rounds} --batch {a.batch} "
                 f"--models {' '.join(a.models)}`", "",
                 "| model | threads | edgeplan ms | onnxruntime ms | ratio (median of rounds) | range | "
                 "ratio of the fastest calls | speed-up over 1 thread (ep / ort) | max abs diff (largest output) |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            sp = f"{r['sp'][0]:.2f} / {r['sp'][1]:.2f}" if r["sp"] else "-"
            lines.append(f"| {r['model']} | {r['threads']} | {r['ep_ms']:.3f} | {r['ort_ms']:.3f} | {r['ratio']:.2f} | "
                         f"{r['lo']:.2f}..{r['hi']:.2f} | {r['fastest']:.2f} | {sp} | {r['diff']:.1e} ({r['scale']:.1e}) |")
        if real:
            lines.append(f"\nReal exports at 1 thread: median ratio {statistics.median(real):.2f}.")
        Path(a.markdown).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

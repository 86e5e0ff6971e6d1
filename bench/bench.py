#!/usr/bin/env python3
"""edgeplan vs onnxruntime on the zoo models, side by side in one process tree (a benchmark, not a test).

Each engine runs in its own child process (so peak RSS and load time are its own), same input; latency is
the median of --runs calls after --warmup. Every model runs at each thread count of --threads (default 1
and 2): edgeplan with Session(threads=N), onnxruntime with intra_op_num_threads=N (inter-op 1,
sequential). Ratios are edgeplan / onnxruntime (lower is better for edgeplan); "vs 1t" is each engine's
speedup over its own 1-thread row.

    python3 bench/bench.py                       # all zoo CNNs, 1 and 2 threads
    python3 bench/bench.py --models tiny mobilenetv2 --runs 50 --threads 1,2,4 --markdown docs/performance.md
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
import numpy as np

def peak_rss_mib():
    # VmHWM is this process's own peak (ru_maxrss carries the parent's peak across fork+exec on Linux)
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

engine, model_path, runs, warmup, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rss0 = peak_rss_mib()
# imports are not load time: the clock covers opening the model only (plan open vs session creation)
if engine == "edgeplan":
    import edgeplan
else:
    import onnxruntime as ort
t = time.perf_counter()
if engine == "edgeplan":
    sess = edgeplan.Session(model_path, threads=threads)
    names = [(i.name, i.shape, i.dtype) for i in sess.inputs]
    run = lambda feeds: sess.run(feeds)
else:
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    names = [(i.name, tuple(i.shape), np.float32) for i in sess.get_inputs()]
    run = lambda feeds: sess.run(None, feeds)
load_ms = (time.perf_counter() - t) * 1e3
rng = np.random.default_rng(0)
feeds = {n: rng.standard_normal(s).astype(d) for n, s, d in names}
for _ in range(warmup):
    run(feeds)
times = []
for _ in range(runs):
    t = time.perf_counter()
    out = run(feeds)
    times.append((time.perf_counter() - t) * 1e3)
times.sort()
print(json.dumps({"load_ms": load_ms, "median_ms": times[len(times) // 2], "min_ms": times[0],
                  "peak_rss_mib": peak_rss_mib(), "base_rss_mib": rss0}))
"""


def child(engine, path, runs, warmup, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, "-c", CHILD, engine, str(path), str(runs), str(warmup), str(threads)],
                       capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"{engine} on {path}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _thread_list(text: str) -> list:
    try:
        out = [int(t) for t in text.replace(" ", ",").split(",") if t]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected thread counts like 1,2 (got {text!r})") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"thread counts must be >= 1 (got {text!r})")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=["tiny", "mobilenetv2", "resnet50", "yolo"])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=_thread_list, default=[1, 2],
                    help="comma-separated thread counts, one row each (default 1,2)")
    ap.add_argument("--markdown", help="write the table to this file")
    a = ap.parse_args()
    import onnx
    import onnxruntime
    import edgeplan
    from edgeplan import models
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name in a.models:
            model = models.build(name)
            onnx_path = Path(d) / f"{name}.onnx"
            onnx.save(model, onnx_path)
            plan_path = Path(d) / f"{name}.eplan"
            edgeplan.compile(str(onnx_path)).save(plan_path)
            base = {}
            for th in a.threads:
                ep = child("edgeplan", plan_path, a.runs, a.warmup, th)
                ort = child("onnxruntime", onnx_path, a.runs, a.warmup, th)
                if th == 1:
                    base = {"ep": ep["median_ms"], "ort": ort["median_ms"]}
                ep["speedup"] = base["ep"] / ep["median_ms"] if base else None
                ort["speedup"] = base["ort"] / ort["median_ms"] if base else None
                rows.append((name, th, ep, ort))
                sp = f"  vs 1t x{ep['speedup']:.2f} / x{ort['speedup']:.2f}" if th != 1 and base else ""
                print(f"{name:<12} threads={th}  latency {ep['median_ms']:9.3f} ms vs {ort['median_ms']:9.3f} ms "
                      f"(x{ep['median_ms'] / ort['median_ms']:.2f}){sp}  load {ep['load_ms']:8.2f} vs {ort['load_ms']:8.2f} ms "
                      f"(x{ep['load_ms'] / ort['load_ms']:.3f})  peak RSS {ep['peak_rss_mib']:7.1f} vs "
                      f"{ort['peak_rss_mib']:7.1f} MiB (x{ep['peak_rss_mib'] / ort['peak_rss_mib']:.2f})", flush=True)
    if a.markdown:
        lines = [
            f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
            f"onnxruntime {onnxruntime.__version__}; edgeplan {edgeplan.__version__}; {a.runs} runs after {a.warmup} warm-up, medians.",
            f"Reproduce: `python3 bench/bench.py --runs {a.runs} --threads {','.join(map(str, a.threads))} "
            f"--models {' '.join(a.models)}`",
            "",
            "| model | threads | edgeplan ms | onnxruntime ms | latency ratio | speedup vs 1 thread (ep / ort) | load ms (ep / ort) | load ratio | peak RSS MiB (ep / ort) | RSS ratio |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, th, ep, ort in rows:
            sp = f"{ep['speedup']:.2f} / {ort['speedup']:.2f}" if ep.get("speedup") and ort.get("speedup") else "-"
            lines.append(f"| {name} | {th} | {ep['median_ms']:.3f} | {ort['median_ms']:.3f} | "
                         f"{ep['median_ms'] / ort['median_ms']:.2f} | {sp} | {ep['load_ms']:.2f} / {ort['load_ms']:.2f} | "
                         f"{ep['load_ms'] / ort['load_ms']:.3f} | {ep['peak_rss_mib']:.1f} / {ort['peak_rss_mib']:.1f} | "
                         f"{ep['peak_rss_mib'] / ort['peak_rss_mib']:.2f} |")
        Path(a.markdown).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

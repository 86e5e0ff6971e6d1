#!/usr/bin/env python3
"""GEMM micro-benchmark: edgeplan's packed GEMM (one GEMM op, B constant and pre-packed) against numpy's
sgemm (OpenBLAS) on one core, the practical ceiling on this machine. A benchmark, not a test.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 python3 bench/gemm.py
    python3 bench/gemm.py --sizes 512 256x1024x64 --runs 50

Times are medians of --runs calls, in thread CPU time by default (the machine is shared; both engines run
one thread, in the caller's); edgeplan's include the Python call (input copy in, output copy out), so the
kernel alone is a little faster than reported."""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def gemm_plan(m, k, n, target):
    from edgeplan._cdef import K
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.pipeline import compile_graph
    f32 = np.dtype(np.float32)
    rng = np.random.default_rng(0)
    a = Tensor("a", f32, (m, k), is_input=True)
    b = Tensor("b", f32, (k, n), data=rng.standard_normal((k, n)).astype(np.float32))
    y = Tensor("y", f32, (m, n), is_output=True)
    op = Op("gemm", [a, b], [y], dict(act=K.EP_ACT_NONE, act_alpha=0.0, act_beta=0.0, reserved=0), name="gemm")
    return compile_graph(Graph([a, b, y], [op], [a], [y]), target=target), b.data


def median_ms(fn, runs, clock):
    fn()
    ts = []
    for _ in range(runs):
        t = clock()
        fn()
        ts.append(clock() - t)
    return sorted(ts)[len(ts) // 2] * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="*", default=["512"], help="N (cube) or MxKxN")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--target", default="host")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                    help="cpu: this thread's CPU time (robust on a shared machine; both sides run single-threaded "
                         "in the calling thread), wall: perf_counter")
    a = ap.parse_args()
    import edgeplan
    for s in a.sizes:
        m, k, n = (int(v) for v in s.split("x")) if "x" in s else (int(s),) * 3
        plan, b = gemm_plan(m, k, n, a.target)
        sess = edgeplan.Session(plan, threads=1)
        x = np.random.default_rng(1).standard_normal((m, k)).astype(np.float32)
        got = sess.run(a=x)["y"]
        ref = x @ b
        err = float(np.abs(got - ref).max() / np.abs(ref).max())
        flop = 2.0 * m * k * n
        clock = time.thread_time if a.clock == "cpu" else time.perf_counter
        t_ep = median_ms(lambda: sess.run(a=x), a.runs, clock)
        t_np = median_ms(lambda: x @ b, a.runs, clock)
        print(f"{m}x{k}x{n}: edgeplan {t_ep:.3f} ms ({flop / t_ep / 1e6:.1f} GFLOP/s)  numpy {t_np:.3f} ms "
              f"({flop / t_np / 1e6:.1f} GFLOP/s)  ratio {t_np / t_ep * 100:.0f}% of numpy  max rel err {err:.1e}")


if __name__ == "__main__":
    main()

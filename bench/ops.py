#!/usr/bin/env python3
"""Single-op micro-benchmark of the ISA kernels: MATMUL (both operands at run time), SOFTMAX /
LOGSOFTMAX, LAYERNORM, MAXPOOL / AVGPOOL, GRU / LSTM. A benchmark, not a test.

Each case is a one-op plan (compile_graph, host target) run in one Session opened twice: with the CPU's
features (the AVX2+FMA or NEON kernel) and with them masked off (cpu_features_mask: the reference kernel,
which is what the op ran before the ISA kernels on x86). Times are the op's own time from the session profiler
(ep_session_profile, CLOCK_MONOTONIC; no Python call overhead), the best of --runs runs (the machine is
shared: the minimum is the stable figure).

    python3 bench/ops.py                     # every case
    python3 bench/ops.py --only gru lstm --runs 50
    python3 bench/ops.py --models            # asr (10 s of audio) and kws (T=100): Session.run, per-op-kind times
"""
from __future__ import annotations

import argparse

import numpy as np

from edgeplan import Session
from edgeplan.compiler.graph import Graph, Op, Tensor
from edgeplan.compiler.pipeline import compile_graph

F32 = np.dtype(np.float32)
NO_ISA = 1 << 62   # a nonzero mask with every ISA feature bit clear: the reference kernels


def _one_op(kind, in_shapes, out_shapes, params, consts=None, seed=0, scratch=0):
    rng = np.random.default_rng(seed)
    consts = consts or {}
    ins, feeds = [], {}
    for i, s in enumerate(in_shapes):
        if s is None:
            ins.append(None)
        elif i in consts:
            ins.append(Tensor(f"c{i}", F32, tuple(s), data=consts[i]))
        else:
            t = Tensor(f"x{i}", F32, tuple(s), is_input=True)
            ins.append(t)
            feeds[t.name] = rng.standard_normal(s).astype(np.float32)
    outs = [Tensor(f"y{i}", F32, tuple(s), is_output=True) for i, s in enumerate(out_shapes)]
    op = Op(kind, ins, outs, params, name=kind)
    op.scratch = scratch   # what lowering sets (variant 0's minimum); select.py may raise it
    tensors = [t for t in ins if t is not None] + outs
    g = Graph(tensors, [op], [t for t in ins if t is not None and t.is_input], outs)
    return compile_graph(g), feeds


def _rnn(kind, T, B, I, H, D=1, lbr=1):
    G = 4 if kind == "lstm" else 3
    rng = np.random.default_rng(1)
    bound = 1 / np.sqrt(H)
    w = rng.uniform(-bound, bound, (D, G * H, I)).astype(np.float32)
    r = rng.uniform(-bound, bound, (D, G * H, H)).astype(np.float32)
    b = rng.uniform(-bound, bound, (D, 2 * G * H)).astype(np.float32)
    outs = [(T, D, B, H), (D, B, H)] + ([(D, B, H)] if kind == "lstm" else [])
    p = dict(hidden_size=H, direction=2 if D == 2 else 0, layout=0, linear_before_reset=lbr if kind == "gru" else 0,
             clip=0.0)
    return _one_op(kind, [(T, B, I), w.shape, r.shape, b.shape], outs, p, consts={1: w, 2: r, 3: b},
                   scratch=(2 + G) * H * 4)


def _pool(kind, n, c, h, w, k, s, pad, cip=0):
    oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    p = dict(kernel=[k, k], stride=[s, s], dilation=[1, 1], pads=[pad] * 4, count_include_pad=cip, ceil_mode=0)
    return _one_op(kind, [(n, c, h, w)], [(n, c, oh, ow)], p)


CASES = {
    "matmul attn scores [4,251,36]x[4,36,251]": ("matmul", lambda: _one_op(
        "matmul", [(1, 4, 251, 36), (1, 4, 36, 251)], [(1, 4, 251, 251)], {})),
    "matmul attn context [4,251,251]x[4,251,36]": ("matmul", lambda: _one_op(
        "matmul", [(1, 4, 251, 251), (1, 4, 251, 36)], [(1, 4, 251, 36)], {})),
    "matmul bcast [8,64,128]x[128,96]": ("matmul", lambda: _one_op(
        "matmul", [(8, 64, 128), (128, 96)], [(8, 64, 96)], {})),
    "softmax last axis [4,251,251]": ("softmax", lambda: _one_op(
        "softmax", [(1, 4, 251, 251)], [(1, 4, 251, 251)], dict(axis=3, log=0))),
    "logsoftmax last axis [251,32]": ("softmax", lambda: _one_op(
        "softmax", [(1, 251, 32)], [(1, 251, 32)], dict(axis=2, log=1))),
    "softmax axis 1 [8,100,64]": ("softmax", lambda: _one_op(
        "softmax", [(8, 100, 64)], [(8, 100, 64)], dict(axis=1, log=0))),
    "layernorm [251,144]": ("layernorm", lambda: _one_op(
        "layernorm", [(1, 251, 144), (144,), (144,)], [(1, 251, 144)], dict(axis=2, epsilon=1e-5))),
    "layernorm [64,1024]": ("layernorm", lambda: _one_op(
        "layernorm", [(64, 1024), (1024,), (1024,)], [(64, 1024)], dict(axis=1, epsilon=1e-5))),
    "maxpool 3x3 s2 p1 [1,64,112,112]": ("maxpool", lambda: _pool("maxpool", 1, 64, 112, 112, 3, 2, 1)),
    "maxpool 2x2 s2 [1,32,64,64]": ("maxpool", lambda: _pool("maxpool", 1, 32, 64, 64, 2, 2, 0)),
    "maxpool 3x3 s1 p1 [1,32,40,40]": ("maxpool", lambda: _pool("maxpool", 1, 32, 40, 40, 3, 1, 1)),
    "avgpool 3x3 s1 p1 [1,64,56,56]": ("avgpool", lambda: _pool("avgpool", 1, 64, 56, 56, 3, 1, 1)),
    "avgpool 2x2 s2 [1,64,56,56]": ("avgpool", lambda: _pool("avgpool", 1, 64, 56, 56, 2, 2, 0, 1)),
    "gru kws T100 I64 H64": ("gru", lambda: _rnn("gru", 100, 1, 64, 64)),
    "gru T50 B4 I40 H128 lbr0": ("gru", lambda: _rnn("gru", 50, 4, 40, 128, lbr=0)),
    "lstm T100 I80 H128 bidir": ("lstm", lambda: _rnn("lstm", 100, 1, 80, 128, D=2)),
}


def op_ms(sess, feeds, runs):
    sess.run(feeds)
    ts = []
    for _ in range(runs):
        sess.profile_reset()
        sess.run(feeds)
        ts.append(sess.profile()[0]["last_ns"])
    return min(ts) / 1e6


def _models(runs, threads):
    import collections
    import time
    from edgeplan import compile as ep_compile
    from edgeplan.models import build
    rng = np.random.default_rng(0)
    cases = {"asr 10 s": (build("asr"), {"audio": (1, 160000)},
                          {"audio": (0.1 * rng.standard_normal((1, 160000))).astype(np.float32)}),
             "kws T=100": (build("kws"), {"feats": (1, 100, 40)},
                           {"feats": rng.standard_normal((1, 100, 40)).astype(np.float32),
                            "h_in": np.zeros((1, 1, 64), np.float32)})}
    for name, (model, shapes, feeds) in cases.items():
        plan = ep_compile(model, shapes=shapes)
        sess = Session(plan, threads=threads, profile=True)
        sess.run(feeds)
        ts, kinds = [], collections.defaultdict(list)
        for _ in range(runs):
            sess.profile_reset()
            t = time.perf_counter()
            sess.run(feeds)
            ts.append(time.perf_counter() - t)
            per = collections.Counter()
            for p in sess.profile():
                per[p["kind"]] += p["last_ns"]
            for k, v in per.items():
                kinds[k].append(v)
        top = sorted(((min(v) / 1e6, k) for k, v in kinds.items()), reverse=True)[:8]
        print(f"{name}: run median {sorted(ts)[len(ts) // 2] * 1e3:.2f} ms, best {min(ts) * 1e3:.2f} ms; per op kind "
              f"(best): " + ", ".join(f"{k} {t:.2f}" for t, k in top))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="op kinds to run (matmul softmax layernorm maxpool avgpool gru lstm)")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", action="store_true", help="time the asr and kws models instead")
    a = ap.parse_args()
    if a.models:
        _models(a.runs, a.threads)
        return
    for name, (kind, make) in CASES.items():
        if a.only and kind not in a.only:
            continue
        plan, feeds = make()
        isa = Session(plan, threads=a.threads, profile=True)
        ref = Session(plan, threads=a.threads, profile=True, cpu_features_mask=NO_ISA)
        t_isa, t_ref = op_ms(isa, feeds, a.runs), op_ms(ref, feeds, a.runs)
        yi, yr = isa.run(feeds), ref.run(feeds)
        err = max(float(np.abs(yi[k] - yr[k]).max() / max(np.abs(yr[k]).max(), 1e-30)) for k in yr)
        print(f"{name:46s} ref {t_ref:8.3f} ms  isa {t_isa:8.3f} ms  x{t_ref / t_isa:5.1f}  rel diff {err:.1e}")


if __name__ == "__main__":
    main()

"""``edgeplan profile``: per-op time, share, GFLOP/s and bytes of a plan, and a Chrome trace.

The runtime times each op's kernel when the session is opened with ``profile=True`` (EP_OPT_PROFILE:
a timing trampoline bound at open, so an unprofiled ``ep_run`` is untouched). flops and bytes come from
the compiler's cost model in the plan's META (compiler/cost.py). The trace is the trace-event format
(``{"traceEvents": [{"name", "ph": "X", "ts", "dur", "pid", "tid", "args"}]}``, microseconds): open it
in chrome://tracing or https://ui.perfetto.dev."""
from __future__ import annotations

import json
import time

import numpy as np

from .runtime import Session


def random_feeds(sess, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {t.name: (rng.standard_normal(t.shape).astype(t.dtype) if t.dtype.kind == "f"
                     else np.zeros(t.shape, dtype=t.dtype)) for t in sess.inputs}


def partition_blobs(sess: Session) -> dict:
    """{DELEGATE op index: its blob's bytes} of the session's plan."""
    from .plan import read_plan
    data = bytes(sess._plan_buf)
    p = read_plan(data)
    const = next((s["offset"] for s in p["sections"] if s["kind"] == "const"), None)
    out = {}
    for i, o in enumerate(p["ops"]):
        if o["op"] == "delegate" and const is not None:
            t = p["tensors"][o["inputs"][0]]
            out[i] = data[const + t["offset"]:const + t["offset"] + t["nbytes"]]
    return out


def npu_model(sess: Session, npu) -> dict:
    """{DELEGATE op index: modelled ns} of the partitions a virtual NPU (edgeplan.vnpu.VirtualNPU) runs in
    this session: its cycle model on each blob, at its clock (the model depends on shapes only)."""
    from .vnpu import estimate
    ran = {p["op"] for p in sess.partitions if p["delegate"]}
    return {i: estimate(b, npu.cfg)["total"]["active_cycles"] * 1000 // npu.clock_mhz
            for i, b in partition_blobs(sess).items() if i in ran}


def profile_session(sess: Session, feeds: dict, runs: int = 10, warmup: int = 2, trace: bool = False,
                    npu=None) -> dict:
    """Runs `sess` (opened with profile=True) ``warmup`` times untimed, then ``runs`` (>= 1) timed runs, and
    returns {"ops": per-op rows, "runs_ns": wall time of each run, "events": trace events (when trace),
    "threads": n, "npu": {DELEGATE op index: modelled ns}, "npu_name": str}. With ``npu`` (the virtual NPU
    the session's partitions run on), a partition's row and trace event take the NPU's modelled time (on a
    track of their own), not the simulator's time on this host. A count out of range raises ValueError."""
    if not (isinstance(runs, int) and runs >= 1 and isinstance(warmup, int) and warmup >= 0):
        raise ValueError(f"profile_session: need runs >= 1 and warmup >= 0, got runs={runs!r} warmup={warmup!r}")
    for name, value in feeds.items():
        sess.set_input(name, value)
    for _ in range(warmup):
        sess.run(copy=False)
    sess.profile_reset()
    model = npu_model(sess, npu) if npu is not None else {}
    events, runs_ns = [], []
    base = None
    for r in range(runs):
        t0 = time.monotonic_ns()
        sess.run(copy=False)
        t1 = time.monotonic_ns()
        runs_ns.append(t1 - t0)
        if trace:
            base = t0 if base is None else base
            events.append(_event(f"run {r}", "run", t0 - base, t1 - t0, {"run": r, "threads": sess.threads}))
            for op in sess.profile():
                if op["calls"]:
                    on_npu = op["index"] in model
                    ev = _event(op["name"] or f"{op['kind']} #{op['index']}", "npu" if on_npu else op["kind"],
                                op["last_start_ns"] - base, model[op["index"]] if on_npu else op["last_ns"],
                                {"op": op["index"], "kind": op["kind"], "flops": op["flops"],
                                 "bytes": op["bytes"], "run": r, **({"modelled": True} if on_npu else {})})
                    ev["tid"] = 1 if on_npu else 0
                    events.append(ev)
    ops = sess.profile()
    for o in ops:
        if o["index"] in model:
            o["modelled_ns"] = model[o["index"]]
    return {"ops": ops, "runs_ns": runs_ns, "events": events, "threads": sess.threads, "npu": model,
            "npu_name": npu.name if npu is not None else ""}


def _event(name: str, cat: str, ts_ns: int, dur_ns: int, args: dict) -> dict:
    return {"name": name, "cat": cat, "ph": "X", "ts": ts_ns / 1e3, "dur": dur_ns / 1e3, "pid": 0, "tid": 0,
            "args": args}


def chrome_trace(result: dict, title: str = "edgeplan") -> dict:
    meta = [{"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": title}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0,
             "args": {"name": f"ep_run ({result['threads']} thread{'s' if result['threads'] > 1 else ''})"}}]
    if result.get("npu"):
        meta.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": 1,
                     "args": {"name": f"NPU ({result['npu_name']}, modelled time)"}})
    return {"traceEvents": meta + result["events"], "displayTimeUnit": "ms",
            "otherData": {"producer": "edgeplan profile", "threads": result["threads"]}}


def report_text(result: dict, top: int = 0) -> str:
    ops = [o for o in result["ops"] if o["calls"]]
    runs = result["runs_ns"]
    total = sum(o["total_ns"] for o in ops) or 1
    n_runs = max(o["calls"] for o in ops) if ops else 1
    wall = sorted(runs)[len(runs) // 2] if runs else 0
    flops = sum(o["flops"] for o in ops)
    lines = [f"{len(runs)} run(s), {result['threads']} thread(s): median {wall / 1e6:.3f} ms per run; "
             f"ops {total / n_runs / 1e6:.3f} ms ({100.0 * total / n_runs / wall if wall else 0:.1f}% of the run); "
             f"{flops / 1e9:.3f} GFLOP per run, {flops * n_runs / total:.2f} GFLOP/s over the ops",
             "",
             f"{'#':>4}  {'kind':<16} {'name':<34} {'ms/run':>9} {'share':>7} {'GFLOP/s':>8} {'MB':>8}"]
    rows = sorted(ops, key=lambda o: -o["total_ns"])
    for o in rows[:top] if top else rows:
        ms = o["total_ns"] / o["calls"] / 1e6
        gf = o["flops"] * o["calls"] / o["total_ns"] if o["flops"] and o["total_ns"] else 0.0
        name = o["name"] if len(o["name"]) <= 34 else o["name"][:15] + "..." + o["name"][-16:]
        lines.append(f"{o['index']:>4}  {o['kind']:<16} {name:<34} {ms:>9.3f} {100.0 * o['total_ns'] / total:>6.1f}% "
                     f"{gf:>8.2f} {o['bytes'] / 1e6:>8.3f}")
    if top and len(rows) > top:
        lines.append(f"  ... {len(rows) - top} more op(s)")
    model = result.get("npu") or {}
    if model:
        npu_ns = sum(model.values())
        host_ns = sum(o["total_ns"] for o in ops if o["index"] in model) / n_runs
        cpu_ns = sum(o["total_ns"] for o in ops if o["index"] not in model) / n_runs
        lines += ["", f"NPU ({result['npu_name']}, modelled by its cycle model; the simulator took "
                      f"{host_ns / 1e6:.3f} ms on this host):"]
        for i, ns in sorted(model.items()):
            lines.append(f"  op {i:>4} delegate  {ns / 1e6:>9.3f} ms")
        lines.append(f"end to end: CPU ops {cpu_ns / 1e6:.3f} ms (measured) + NPU {npu_ns / 1e6:.3f} ms (modelled) "
                     f"= {(cpu_ns + npu_ns) / 1e6:.3f} ms per run")
    by_kind: dict = {}
    for o in ops:
        k = by_kind.setdefault(o["kind"], [0, 0, 0])
        k[0] += 1
        k[1] += o["total_ns"]
        k[2] += o["flops"] * o["calls"]
    lines += ["", "by kind:"]
    for kind, (n, ns, f) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"  {kind:<16} {n:>4} op(s) {ns / n_runs / 1e6:>9.3f} ms/run {100.0 * ns / total:>6.1f}%"
                     f"{f'  {f / ns:.2f} GFLOP/s' if f else ''}")
    return "\n".join(lines)


def write_trace(result: dict, path, title: str = "edgeplan") -> None:
    with open(path, "w") as f:
        json.dump(chrome_trace(result, title), f)

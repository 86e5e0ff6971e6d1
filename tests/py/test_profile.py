"""The profiler: per-op counters behind EP_OPT_PROFILE, the compiler's cost model in the
plan META (op_cost), and `edgeplan profile` with its Chrome trace (trace-event JSON)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edgeplan import Session
from edgeplan.compiler.graph import Graph, Op, Tensor
from edgeplan.compiler.pipeline import compile_graph, compile_model
from edgeplan.plan import read_plan
from edgeplan._cdef import K

from conftest import zoo

F32 = np.dtype(np.float32)


@pytest.fixture(scope="module")
def plan():
    return compile_model(zoo().build("mobilenetv2", size=64))


def _feeds(sess):
    rng = np.random.default_rng(0)
    return {t.name: rng.standard_normal(t.shape).astype(t.dtype) for t in sess.inputs}


def test_counters_off_by_default(plan):
    s = Session(plan)
    s.run(_feeds(s))
    prof = s.profile()
    assert len(prof) == s.n_ops > 10
    assert all(p["calls"] == 0 and p["total_ns"] == 0 for p in prof)
    assert all(p["kind"] and p["bytes"] > 0 for p in prof)     # names, kinds and costs are still there


def test_counters_count_and_time_every_op(plan):
    s = Session(plan, profile=True)
    plain = Session(plan)
    feeds = _feeds(s)
    for _ in range(3):
        out = s.run(feeds)
    for k, v in plain.run(feeds).items():      # the trampoline changes nothing but the clock
        assert v.tobytes() == out[k].tobytes()
    prof = s.profile()
    assert all(p["calls"] == 3 for p in prof)
    assert all(p["total_ns"] > 0 and 0 < p["last_ns"] <= p["total_ns"] for p in prof)
    starts = [p["last_start_ns"] for p in prof]
    assert starts == sorted(starts)            # the last run's ops, in order
    convs = [p for p in prof if p["kind"] == "conv2d"]
    assert convs and all(p["flops"] > 0 for p in convs)
    s.profile_reset()
    assert all(p["calls"] == 0 and p["total_ns"] == 0 for p in s.profile())
    s.run()
    assert all(p["calls"] == 1 for p in s.profile())


def test_cost_model_in_meta():
    rng = np.random.default_rng(0)
    x = Tensor("x", F32, (1, 8, 10, 12), is_input=True)
    w = Tensor("w", F32, (16, 8, 3, 3), data=rng.standard_normal((16, 8, 3, 3)).astype(np.float32))
    y = Tensor("y", F32, (1, 16, 10, 12), is_output=True)
    p = dict(kernel=[3, 3], stride=[1, 1], dilation=[1, 1], pads=[1, 1, 1, 1], groups=1, act=K.EP_ACT_NONE,
             act_alpha=0.0, act_beta=0.0)
    g = Graph([x, w, y], [Op("conv2d", [x, w], [y], p, name="conv")], [x], [y])
    plan = compile_graph(g, target="generic")
    cost = read_plan(plan.data)["meta"]["op_cost"]
    assert cost == [[2 * 16 * 10 * 12 * 8 * 9, (8 * 10 * 12 + 16 * 8 * 9 + 16 * 10 * 12) * 4]]
    prof = Session(plan, profile=True).profile()
    assert prof[0]["flops"] == cost[0][0] and prof[0]["bytes"] == cost[0][1]


def _bin(name):
    p = Path(sys.executable).with_name(name)
    return str(p) if p.exists() else shutil.which(name)


@pytest.mark.parametrize("threads", [1, 2])
def test_profile_command_and_chrome_trace(plan, tmp_path, threads):
    path = tmp_path / "m.eplan"
    plan.save(path)
    runs = 3
    r = subprocess.run([_bin("edgeplan"), "profile", str(path), "--runs", str(runs), "--threads", str(threads),
                        "--trace", str(tmp_path / "t.json")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "share" in out and "GFLOP/s" in out and "by kind:" in out and f"{threads} thread(s)" in out
    rows = [ln.split() for ln in out.splitlines() if ln[:4].strip().isdigit() and "%" in ln]
    n_ops = Session(path).n_ops
    assert len(rows) == n_ops
    ms = [float(row[-4]) for row in rows]          # ms/run column, sorted slowest first
    assert ms == sorted(ms, reverse=True)
    shares = [float(row[-3].rstrip("%")) for row in rows]
    assert abs(sum(shares) - 100.0) <= 0.05 * n_ops + 0.1   # each share is rounded to 0.1

    trace = json.loads((tmp_path / "t.json").read_text())   # valid JSON in the trace-event format
    events = trace["traceEvents"]
    assert isinstance(events, list)
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == runs * (n_ops + 1)
    for e in complete:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "args"} <= set(e)
        assert isinstance(e["name"], str) and e["name"]
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
        assert e["ts"] >= 0 and e["dur"] >= 0 and isinstance(e["args"], dict)
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    runs_ev = [e for e in complete if e["cat"] == "run"]
    assert len(runs_ev) == runs
    for run in runs_ev:   # every op of a run lies inside it (one clock: CLOCK_MONOTONIC)
        ops = [e for e in complete if e["cat"] != "run" and e["args"]["run"] == run["args"]["run"]]
        assert len(ops) == n_ops
        for e in ops:
            assert run["ts"] <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"] + 1e-3

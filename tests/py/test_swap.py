"""Hot swap: Session.swap replaces the plan between runs while other threads run requests (every result equals
one of the two plans' answers for its input, none fails), a plan that does not open is refused and the old one
keeps serving, and edgeplan-run --watch replaces the plan when its file changes (a bad file refused). The C
slot under 1,000 swaps is tests/c/test_swap.c (test_c_suite.py)."""
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import edgeplan
from edgeplan.runtime import EdgeplanError


def _plan(c: float, n: int = 8, name: str = "x"):
    """y = relu(x) + c"""
    nodes = [helper.make_node("Relu", [name], ["r"]), helper.make_node("Add", ["r", "c"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor("c", TensorProto.FLOAT, [1], [c])])
    return edgeplan.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


@pytest.fixture(scope="module")
def plans():
    return _plan(0.5).to_bytes(), _plan(1.5).to_bytes()


def test_swap_under_concurrent_runs(plans):
    a, b = plans
    s = edgeplan.Session(a)
    stop = threading.Event()
    counts = {"a": 0, "b": 0, "wrong": 0, "failed": 0}
    lock = threading.Lock()

    def serve(seed):
        rng = np.random.default_rng(seed)
        while not stop.is_set():
            x = rng.standard_normal((1, 8)).astype(np.float32)
            try:
                y = s.run({"x": x})["y"]
            except Exception:  # noqa: BLE001 - counted: a swap must not make a request fail
                with lock:
                    counts["failed"] += 1
                continue
            r = np.maximum(x, 0)
            key = "a" if np.array_equal(y, r + np.float32(0.5)) else "b" if np.array_equal(y, r + np.float32(1.5)) \
                else "wrong"
            with lock:
                counts[key] += 1

    threads = [threading.Thread(target=serve, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    refused = 0
    try:
        for k in range(200):
            if k % 40 == 0:   # truncated and bit-flipped plans: refused, the old plan serves on
                for bad in (b[:len(b) // 2], bytes(b[:100]) + bytes([b[100] ^ 4]) + b[101:]):
                    with pytest.raises(EdgeplanError):
                        s.swap(bad)
                    refused += 1
            s.swap(a if k % 2 else b)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert s.swaps == 200 and refused == 10
    assert counts["wrong"] == 0 and counts["failed"] == 0, counts
    assert counts["a"] > 0 and counts["b"] > 0, counts
    s.close()


def test_swap_to_other_io_and_state():
    s = edgeplan.Session(_plan(0.5))
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8)
    np.testing.assert_array_equal(s.run(x=x)["y"], np.maximum(x, 0) + np.float32(0.5))
    s.swap(_plan(2.0, n=4, name="feat"))
    assert [t.name for t in s.inputs] == ["feat"] and s.inputs[0].shape == (1, 4)
    with pytest.raises(ValueError, match="feat"):   # the new plan starts with no input set
        s.run()
    f = np.array([[-3, 0, 1, 2]], np.float32)
    np.testing.assert_array_equal(s.run(feat=f)["y"], np.maximum(f, 0) + np.float32(2.0))
    s.close()
    with pytest.raises(EdgeplanError, match="closed"):
        s.swap(_plan(0.5))


def test_swap_from_path(tmp_path, plans):
    p = tmp_path / "m.eplan"
    p.write_bytes(plans[1])
    s = edgeplan.Session(plans[0], threads=2)
    s.swap(str(p))
    assert s.threads == 2   # the session's options carry over
    x = np.ones((1, 8), np.float32)
    np.testing.assert_array_equal(s.run(x=x)["y"], x + np.float32(1.5))


def _edgeplan_run() -> str:
    """The build's edgeplan-run beside EDGEPLAN_LIB (a checkout build), else the installed one."""
    lib = os.environ.get("EDGEPLAN_LIB")
    if lib and (Path(lib).parent / "edgeplan-run").is_file():
        return str(Path(lib).parent / "edgeplan-run")
    p = Path(sys.executable).with_name("edgeplan-run")
    exe = str(p) if p.exists() else shutil.which("edgeplan-run")
    assert exe, "edgeplan-run is not installed (pip install .)"
    return exe


def test_edgeplan_run_watch(tmp_path, plans):
    exe = _edgeplan_run()
    path = tmp_path / "m.eplan"
    path.write_bytes(plans[0])
    p = subprocess.Popen([exe, str(path), "--watch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)

    def request() -> list:
        p.stdin.write("run\n")
        p.stdin.flush()
        lines = []
        while True:
            line = p.stdout.readline()
            assert line, p.stderr.read()
            lines.append(line.rstrip("\n"))
            if line.startswith("  y:"):
                return lines

    def replace(data: bytes):
        tmp = tmp_path / "m.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)

    try:
        assert request()[-1].endswith("mean 0.5 argmax 0")
        replace(plans[1])
        out = request()
        assert out[0].startswith("swap 1: ") and out[-1].endswith("mean 1.5 argmax 0"), out
        replace(plans[0][:300])                 # truncated: refused, plan B serves on
        out = request()
        assert out[0].startswith("refused: ") and "truncated" in out[0] and out[-1].endswith("mean 1.5 argmax 0"), out
        replace(plans[0])
        out = request()
        assert out[0].startswith("swap 2: ") and out[-1].endswith("mean 0.5 argmax 0"), out
        p.stdin.write("quit\n")
        p.stdin.flush()
        rest = p.stdout.read()
        assert p.wait(timeout=30) == 0
        assert "watch: 4 requests (0 failed), 2 swaps, 1 plans refused" in rest, rest
    finally:
        if p.poll() is None:
            p.kill()

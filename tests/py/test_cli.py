"""The command lines a user types: edgeplan compile / run / inspect, and the C runner edgeplan-run."""
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import edgeplan
from conftest import zoo


def _bin(name):
    # next to the interpreter (venv / pip install) first, then PATH
    p = Path(sys.executable).with_name(name)
    return str(p) if p.exists() else shutil.which(name)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    onnx.save(zoo().build("tiny"), d / "tiny.onnx")
    return d


def run(*args, ok=True):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=300)
    if ok:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_compile_run_inspect_and_c_runner_agree(tiny):
    ep = _bin("edgeplan")
    out = run(ep, "compile", str(tiny / "tiny.onnx"), "-o", str(tiny / "tiny.eplan")).stdout
    for word in ("ops:", "fused:", "weights:", "lower bound", "arena:"):
        assert word in out
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tiny / "x.npy", x)
    out = run(ep, "run", str(tiny / "tiny.eplan"), "--input", f"x={tiny / 'x.npy'}", "--repeat", "3",
              "--output", str(tiny / "y_py.npy")).stdout
    assert "latency: median" in out and "peak RSS" in out and "arena:" in out and "y: float32 [1, 10]" in out
    out = run(ep, "inspect", str(tiny / "tiny.eplan")).stdout
    for word in ("sections:", "tensors", "ops (", "arena map", "conv2d"):
        assert word in out
    # the C runner, no Python: same answer bit for bit (same kernels)
    out = run(_bin("edgeplan-run"), str(tiny / "tiny.eplan"), "--input", str(tiny / "x.npy"),
              "--output", str(tiny / "y_c.npy"), "--repeat", "5").stdout
    assert "latency: median" in out and "peak RSS" in out and "arena:" in out
    y_c, y_py = np.load(tiny / "y_c.npy"), np.load(tiny / "y_py.npy")
    assert y_c.shape == (1, 10) and y_c.dtype == np.float32
    np.testing.assert_array_equal(y_c, y_py)
    np.testing.assert_array_equal(y_py, edgeplan.Session(tiny / "tiny.eplan").run(x=x)["y"])


def test_c_runner_explains_bad_input(tiny):
    edgeplan.compile(str(tiny / "tiny.onnx")).save(tiny / "t2.eplan")
    np.save(tiny / "bad.npy", np.zeros((1, 3, 16, 16), np.float32))
    r = run(_bin("edgeplan-run"), str(tiny / "t2.eplan"), "--input", str(tiny / "bad.npy"), ok=False)
    assert r.returncode != 0 and "expects float32 [1, 3, 32, 32]" in r.stderr and "[1, 3, 16, 16]" in r.stderr
    (tiny / "junk.eplan").write_bytes(b"\0" * 200)
    r = run(_bin("edgeplan-run"), str(tiny / "junk.eplan"), ok=False)
    assert r.returncode != 0 and "not an edgeplan plan" in r.stderr
    r = run(_bin("edgeplan-run"), str(tiny / "t2.eplan"), "--input", "nope=x.npy", ok=False)
    assert r.returncode != 0 and "no input 'nope'" in r.stderr


def test_compile_names_every_unsupported_node(tmp_path):
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="ok"),
             helper.make_node("Det", ["a"], ["b"], name="first_bad"),
             helper.make_node("ImageDecoder", ["b"], ["y"], name="second_bad")]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, tmp_path / "bad.onnx")
    r = run(_bin("edgeplan"), "compile", str(tmp_path / "bad.onnx"), ok=False)
    assert r.returncode == 1
    assert "first_bad" in r.stderr and "Det" in r.stderr and "second_bad" in r.stderr and "ImageDecoder" in r.stderr


def test_symbolic_dims_must_be_pinned(tmp_path):
    m = zoo().build("tiny", dynamic_batch=True)
    onnx.save(m, tmp_path / "dyn.onnx")
    r = run(_bin("edgeplan"), "compile", str(tmp_path / "dyn.onnx"), ok=False)
    assert r.returncode == 1 and "--shape" in r.stderr
    out = run(_bin("edgeplan"), "compile", str(tmp_path / "dyn.onnx"), "--shape", "x=2,3,32,32",
              "-o", str(tmp_path / "dyn.eplan")).stdout
    assert "arena" in out
    sess = edgeplan.Session(tmp_path / "dyn.eplan")
    assert sess.inputs[0].shape == (2, 3, 32, 32) and sess.outputs[0].shape == (2, 10)


def test_cli_answers_bad_files_without_a_traceback(tiny, tmp_path):
    ep = _bin("edgeplan")
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    edgeplan.compile(str(tiny / "tiny.onnx")).save(tmp_path / "t.eplan")
    for args in (["compile", str(tmp_path / "missing.onnx")], ["compile", str(tmp_path / "junk.onnx")],
                 ["inspect", str(tmp_path / "missing.eplan")], ["run", str(tmp_path / "missing.eplan")],
                 ["run", str(tmp_path / "t.eplan"), "--input", f"x={tmp_path / 'junk.onnx'}"]):
        r = run(ep, *args, ok=False)
        assert r.returncode != 0 and "Traceback" not in r.stderr and r.stderr.startswith("edgeplan: "), (args, r.stderr)


@pytest.mark.parametrize("bad", ["0", "-3", "many", "5000"])
def test_compile_refuses_a_max_trips_that_is_no_iteration_count(tmp_path, bad):
    r = run(_bin("edgeplan"), "compile", str(tmp_path / "m.onnx"), "--max-trips", bad, ok=False)
    assert r.returncode == 2 and "--max-trips" in r.stderr and "1..4096" in r.stderr, r.stderr

"""Post-training quantisation (compiler/ptq.py; edgeplan compile --quantize int8 --calibration DIR): the layers
it quantises run on the int8 kernels, the result stays close to the float model on inputs it did not see, and
calibration sets that do not fit the model are refused by name."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest

import edgeplan
from edgeplan.compiler.ptq import CalibrationError, act_params

from test_int8 import _cnn


def _samples(seed, n, shape=(1, 3, 12, 12)):
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(n)]


def _sqnr(ref, got):
    e = float(np.sum((ref - got).astype(np.float64) ** 2))
    return np.inf if e == 0 else 10 * np.log10(float(np.sum(ref.astype(np.float64) ** 2)) / e)


@pytest.mark.parametrize("observer", ["percentile", "minmax", "mse"])
def test_ptq_cnn_runs_int8_and_stays_close_to_float(observer):
    f = _cnn(21, "relu", width=32)
    plan = edgeplan.compile(f, quantize="int8", calibration=_samples(1, 24), observer=observer)
    ops = plan.report["op_counts"]
    # the classifier too, though it writes the graph output (as its dequantised codes)
    assert ops.get("qconv2d") == 3 and ops.get("qgemm") == 1 and "conv2d" not in ops and "gemm" not in ops, ops
    fp, q8 = edgeplan.Session(edgeplan.compile(f)), edgeplan.Session(plan)
    worst = min(_sqnr(fp.run(s)["y"], q8.run(s)["y"]) for s in _samples(99, 8))
    assert worst >= 17.0, worst


def test_ptq_clip_and_gemm_layers():
    """Clip(0, 6) folds into the clamp; a Gemm with transB and a bias is quantised per output column."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(3)
    inits = [nh.from_array((rng.standard_normal((24, 40)) * 0.2).astype(np.float32), "w1"),
             nh.from_array((rng.standard_normal(24) * 0.1).astype(np.float32), "b1"),
             nh.from_array((rng.standard_normal((24, 7)) * 0.2).astype(np.float32), "w2"),
             nh.from_array(np.array(0, np.float32), "lo"), nh.from_array(np.array(6, np.float32), "hi")]
    nodes = [h.make_node("Gemm", ["x", "w1", "b1"], ["g"], transB=1), h.make_node("Clip", ["g", "lo", "hi"], ["c"]),
             h.make_node("MatMul", ["c", "w2"], ["m"]), h.make_node("Softmax", ["m"], ["y"], axis=-1)]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, [5, 40])],
                     [h.make_tensor_value_info("y", T.FLOAT, [5, 7])], inits)
    f = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    plan = edgeplan.compile(f, quantize="int8", calibration=_samples(4, 16, (5, 40)))
    assert plan.report["op_counts"].get("qgemm") == 2, plan.report["op_counts"]
    s = _samples(5, 1, (5, 40))[0]
    ref, got = edgeplan.Session(edgeplan.compile(f)).run(s)["y"], edgeplan.Session(plan).run(s)["y"]
    assert np.abs(ref - got).max() <= 0.05


def test_act_params_cover_the_range_with_zero_exact():
    for lo, hi in ((-1.0, 3.0), (0.0, 6.0), (-2.5, 0.0), (0.0, 0.0)):
        s, z = act_params(lo, hi)
        assert -128 <= z <= 127 and s > 0
        q = lambda v: np.clip(np.rint(np.float32(v) / s) + z, -128, 127)   # noqa: E731
        assert q(0.0) == z
        if hi > lo:
            assert abs((q(lo) - z) * s - lo) <= s and abs((q(hi) - z) * s - hi) <= s


def test_calibration_sets_that_do_not_fit_are_refused_by_name(tmp_path):
    f = _cnn(2, "relu")
    cases = []
    cases.append(([], "calibration set is empty"))
    cases.append(([{"x": np.zeros((1, 3, 8, 8), np.float32)}], "input 'x' has shape (1, 3, 8, 8)"))
    cases.append(([{"x": np.zeros((1, 3, 12, 12), np.float64)}], "input 'x' has dtype float64"))
    cases.append(([{"y": np.zeros((1, 3, 12, 12), np.float32)}], "has arrays ['y'], the model takes ['x']"))
    nan = np.zeros((1, 3, 12, 12), np.float32)
    nan[0, 1, 2, 3] = np.nan
    cases.append(([{"x": nan}], "input 'x' has NaN"))
    for samples, text in cases:
        with pytest.raises(CalibrationError, match=text.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                           .replace("]", r"\]")):
            edgeplan.compile(f, quantize="int8", calibration=samples)
    with pytest.raises(CalibrationError, match="has no .npy, .npz, image or wav files"):
        edgeplan.compile(f, quantize="int8", calibration=str(tmp_path))
    with pytest.raises(CalibrationError, match="does not exist"):
        edgeplan.compile(f, quantize="int8", calibration=str(tmp_path / "nowhere"))
    with pytest.raises(CalibrationError, match="observer 'kl' is unknown"):
        edgeplan.compile(f, quantize="int8", calibration=_samples(0, 2), observer="kl")
    with pytest.raises(CalibrationError, match="not a finite number"):
        edgeplan.compile(f, quantize="auto", calibration=_samples(0, 2), target_sqnr=float("nan"))
    with pytest.raises(CalibrationError, match="add quantize="):
        edgeplan.compile(f, calibration=_samples(0, 2))


def _cli(tmp_path, act, n, *args):
    """edgeplan compile of a test CNN with a calibration folder of n .npy inputs and args."""
    f = tmp_path / "f.onnx"
    onnx.save(_cnn(8, act), f)
    cal = tmp_path / "cal"
    cal.mkdir(exist_ok=True)
    for k, s in enumerate(_samples(6, n)):
        np.save(cal / f"s{k}.npy", s["x"])
    return subprocess.run([sys.executable, "-m", "edgeplan.cli", "compile", str(f), "--calibration", str(cal)] +
                          [str(a) for a in args], capture_output=True, text=True)


def test_cli_compile_quantize_int8(tmp_path):
    f = tmp_path / "f.onnx"
    out = tmp_path / "f8.eplan"
    r = _cli(tmp_path, "clip", 6, "--quantize", "int8", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "QConv" in r.stdout and out.exists()
    bad = tmp_path / "bad"
    bad.mkdir()
    np.save(bad / "a.npy", np.zeros((2, 2), np.float32))
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "compile", str(f), "--quantize", "int8", "--calibration",
                        str(bad), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode != 0 and "calibration file" in r.stderr and "a.npy" in r.stderr and "Traceback" not in r.stderr


def test_ptq_folds_batchnorm_and_constant_weights():
    """Exports keep BatchNormalization after Conv and weights in Constant nodes: PTQ folds both first, so every
    conv is quantised; HardSwish between them becomes a table."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(13)

    def const(name, a):
        return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(a, np.float32), name))
    nodes = [const("w1", rng.standard_normal((8, 3, 3, 3)) * 0.4), const("w2", rng.standard_normal((4, 8, 1, 1)) * 0.4)]
    bn = [const(f"bn{k}", v) for k, v in enumerate((rng.uniform(0.5, 1.5, 8), rng.standard_normal(8) * 0.1,
                                                     rng.standard_normal(8) * 0.1, rng.uniform(0.5, 2, 8)))]
    nodes += bn + [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
                   h.make_node("BatchNormalization", ["c1", "bn0", "bn1", "bn2", "bn3"], ["b1"]),
                   h.make_node("HardSwish", ["b1"], ["a1"]), h.make_node("Conv", ["a1", "w2"], ["c2"]),
                   h.make_node("Relu", ["c2"], ["r2"]), h.make_node("GlobalAveragePool", ["r2"], ["y"])]
    g = h.make_graph(nodes, "bn", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 12, 12])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 1, 1])])
    f = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    plan = edgeplan.compile(f, quantize="int8", calibration=_samples(2, 16))
    ops = plan.report["op_counts"]
    assert ops.get("qconv2d") == 2 and ops.get("qlut") == 1 and "conv2d" not in ops, ops
    s = _samples(50, 1)[0]
    ref, got = edgeplan.Session(edgeplan.compile(f)).run(s)["y"], edgeplan.Session(plan).run(s)["y"]
    assert _sqnr(ref, got) >= 25.0, _sqnr(ref, got)


def test_mixed_precision_reaches_its_target_and_is_deterministic():
    """--quantize auto: layers go back to float, most sensitive first, until the output SQNR on the calibration
    inputs reaches the target; the report says which, and the same inputs give the same plan bytes."""
    f = _cnn(31, "relu", width=32)
    cal = _samples(7, 8)
    loose = edgeplan.compile(f, quantize="auto", calibration=cal, target_sqnr=5.0).report["mixed_precision"]
    assert loose["float_layers"] == 0 and loose["int8_layers"] == 4
    target = loose["output_sqnr_db"] + 3.0      # all int8 falls short of it
    plans = [edgeplan.compile(f, quantize="auto", calibration=cal, target_sqnr=target) for _ in range(2)]
    assert plans[0].data == plans[1].data
    rep = plans[0].report["mixed_precision"]
    assert rep["output_sqnr_db"] >= target and rep["float_layers"] >= 1, rep
    assert rep["int8_layers"] + rep["float_layers"] == len(rep["layers"]) == 4
    floats = [r for r in rep["layers"] if r["precision"] == "float32"]
    ints = [r for r in rep["layers"] if r["precision"] == "int8"]
    assert max(r["sensitivity_sqnr_db"] for r in floats) <= min([r["sensitivity_sqnr_db"] for r in ints] + [1e9])
    assert plans[0].report["op_counts"].get("qconv2d", 0) == len([r for r in ints if r["op"] == "Conv"])
    fp, mp = edgeplan.Session(edgeplan.compile(f)), edgeplan.Session(plans[0])
    ref = np.concatenate([fp.run(s)["y"].ravel() for s in cal])
    got = np.concatenate([mp.run(s)["y"].ravel() for s in cal])
    assert _sqnr(ref, got) == rep["output_sqnr_db"] or abs(_sqnr(ref, got) - rep["output_sqnr_db"]) < 0.01


def test_cli_mixed_precision_report(tmp_path):
    import json
    rep = tmp_path / "mp.json"
    r = _cli(tmp_path, "relu", 4, "--quantize", "auto", "--target-sqnr", 35, "--precision-report", rep, "-o",
             tmp_path / "m.eplan")
    assert r.returncode == 0, r.stderr
    assert "mixed precision:" in r.stdout and "sensitivity" in r.stdout
    data = json.loads(rep.read_text())
    assert data["target_sqnr_db"] == 35.0 and len(data["layers"]) == 4
    r = _cli(tmp_path, "relu", 4, "--quantize", "int8", "--precision-report", rep, "-o", tmp_path / "m.eplan")
    assert r.returncode != 0 and "--quantize auto" in r.stderr and "Traceback" not in r.stderr

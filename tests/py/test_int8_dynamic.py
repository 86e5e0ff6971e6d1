"""Dynamic int8 (--quantize int8-dynamic; passes/int8_dynamic.py, plan_format.h "Dynamic int8"): QUANTIZE_ROWS
and DQGEMM equal a numpy statement of their semantics bit for bit, on the reference kernels and on AVX2, at any
thread count; the GEMM epilogue (bias, residual, activation) stays fused; inputs shared by several GEMMs are
quantised once. The real Whisper check is in test_whisper.py."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from edgeplan.compiler.passes.int8_dynamic import quantize_columns
from edgeplan.compiler.ptq import CalibrationError

NO_AVX2 = 1 << 62   # nonzero mask with the AVX2/FMA bits clear: the reference kernels run


def _model(M, K, N, act=None, bias=True, seed=0):
    """x [1, M, K] -> MatMul(w1) [+ b] [-> act] -> y1, and MatMul(w2) -> y2 on the same x."""
    rng = np.random.default_rng(seed)
    inits = [nh.from_array((rng.standard_normal((K, N)) * 0.1).astype(np.float32), "w1"),
             nh.from_array((rng.standard_normal((K, 7)) * 0.1).astype(np.float32), "w2"),
             nh.from_array(rng.standard_normal(N).astype(np.float32), "b")]
    nodes = [h.make_node("MatMul", ["x", "w1"], ["m"])]
    t = "m"
    if bias:
        nodes.append(h.make_node("Add", [t, "b"], ["mb"]))
        t = "mb"
    if act:
        nodes.append(h.make_node(act, [t], ["y1"]))
    else:
        nodes.append(h.make_node("Identity", [t], ["y1"]))
    nodes.append(h.make_node("MatMul", ["x", "w2"], ["y2"]))
    g = h.make_graph(nodes, "dyn", [h.make_tensor_value_info("x", T.FLOAT, [1, M, K])],
                     [h.make_tensor_value_info("y1", T.FLOAT, [1, M, N]),
                      h.make_tensor_value_info("y2", T.FLOAT, [1, M, 7])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {i.name: nh.to_array(i) for i in inits}


def _rows(x):
    """QUANTIZE_ROWS as plan_format.h states it, in float32 numpy."""
    a = np.max(np.where(np.isnan(x), 0, np.abs(x)), axis=1).astype(np.float32)
    s = (a / np.float32(127)).astype(np.float32)
    r = np.where(a > 0, np.float32(127) / np.where(a > 0, a, 1), 0).astype(np.float32)
    v = (x * r[:, None]).astype(np.float32)
    v = np.where(np.isnan(v), 0, np.rint(v))
    return np.clip(v, -127, 127).astype(np.int8), s


def _dq(x2, w, b=None, act=None):
    q, sa = _rows(x2)
    wq, sb = quantize_columns(w)
    acc = (q.astype(np.int64) @ wq.astype(np.int64)).astype(np.int32)
    y = acc.astype(np.float32) * (sa[:, None] * sb[None, :]).astype(np.float32)
    if b is not None:
        y = (y + b).astype(np.float32)
    if act == "Relu":
        y = np.maximum(y, 0).astype(np.float32)
    return y


@pytest.mark.parametrize("M,K,N", [(1, 5, 3), (13, 96, 40), (37, 301, 70), (5, 1100, 9)])
def test_dynamic_int8_equals_its_numpy_statement_on_every_kernel(M, K, N):
    m, w = _model(M, K, N, act="Relu")
    plan = edgeplan.compile(m, quantize="int8-dynamic")
    assert plan.report["op_counts"] == {"quantize_rows": 1, "dqgemm": 2}, plan.report["op_counts"]
    assert plan.report["int8_dynamic"]["gemms"] == 2
    rng = np.random.default_rng(M * K)
    x = (rng.standard_normal((1, M, K)) * rng.uniform(0.01, 100, (1, M, 1))).astype(np.float32)
    x[0, 0, :2] = 0 if K > 2 else x[0, 0, :2]
    x2 = x.reshape(M, K)
    want1 = _dq(x2, w["w1"], w["b"], "Relu").reshape(1, M, N)
    want2 = _dq(x2, w["w2"]).reshape(1, M, 7)
    for mask in (0, NO_AVX2):
        for threads in (1, 3):
            got = edgeplan.Session(plan, cpu_features_mask=mask, threads=threads).run({"x": x})
            assert np.array_equal(got["y1"], want1), (mask, threads, np.abs(got["y1"] - want1).max())
            assert np.array_equal(got["y2"], want2), (mask, threads)


def test_rows_of_zeros_nan_and_infinity():
    m, w = _model(4, 8, 6, bias=False)
    plan = edgeplan.compile(m, quantize="int8-dynamic")
    x = np.ones((1, 4, 8), np.float32)
    x[0, 0] = 0                         # a row of zeros: scale 0, codes 0, output 0
    x[0, 1, 3] = np.nan                 # NaN is skipped by the maximum and coded 0
    x[0, 2, 5] = np.inf                 # infinity: scale inf, every code 0 -> 0 * inf = NaN
    got = edgeplan.Session(plan).run({"x": x})["y1"][0]
    assert np.all(got[0] == 0)
    np.testing.assert_array_equal(got[1], _dq(np.where(np.isnan(x[0, 1:2]), 0, x[0, 1:2]), w["w1"])[0])
    assert np.all(np.isnan(got[2]))
    np.testing.assert_array_equal(got[3], _dq(x[0, 3:4], w["w1"])[0])


def test_accuracy_weights_and_the_cli(tmp_path):
    m, _ = _model(20, 256, 128, act="Relu", seed=3)
    plan = edgeplan.compile(m, quantize="int8-dynamic")
    ref = edgeplan.Session(edgeplan.compile(m))
    x = np.random.default_rng(1).standard_normal((1, 20, 256)).astype(np.float32)
    want, got = ref.run({"x": x})["y1"], edgeplan.Session(plan).run({"x": x})["y1"]
    sqnr = 10 * np.log10(np.sum(want.astype(np.float64) ** 2) / np.sum((want - got).astype(np.float64) ** 2))
    assert sqnr > 30, sqnr
    d = plan.report["int8_dynamic"]
    assert d["weight_bytes_int8"] <= 0.26 * d["weight_bytes_f32"]
    with pytest.raises(CalibrationError, match="needs no calibration"):
        edgeplan.compile(m, quantize="int8-dynamic", calibration=[{"x": x}])
    f = tmp_path / "m.onnx"
    onnx.save(m, f)
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "compile", str(f), "--quantize", "int8-dynamic",
                        "-o", str(tmp_path / "m.eplan")], capture_output=True, text=True)
    assert r.returncode == 0 and "dqgemm" in r.stdout.lower(), r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "edgeplan.cli", "compile", str(f), "--quantize", "int8-dynamic",
                        "--calibration", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode != 0 and "quantises activations at run time" in r.stderr and "Traceback" not in r.stderr

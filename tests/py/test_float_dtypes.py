"""float16, bfloat16 and float64 models: the CAST kernel's conversions bit for bit against numpy and
ml_dtypes (every float16 pattern, a million float32 ones), and models of those types against
onnxruntime, computed in float32 inside (compiler/floats.py)."""
import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from conftest import rel_err
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import EP_TO_NUMPY, K

pytestmark = pytest.mark.filterwarnings("ignore:(overflow|invalid value) encountered in cast:RuntimeWarning")
BF16 = np.dtype(ml_dtypes.bfloat16)
ONNX_TYPE = {np.dtype(np.float16): TP.FLOAT16, BF16: TP.BFLOAT16, np.dtype(np.float64): TP.DOUBLE,
             np.dtype(np.float32): TP.FLOAT, np.dtype(np.int32): TP.INT32, np.dtype(np.int64): TP.INT64}


def _model(nodes, inputs, outputs, inits=(), opset=21):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _cast_plan(src, dst, n):
    m = _model([h.make_node("Cast", ["x"], ["y"], to=ONNX_TYPE[np.dtype(dst)])],
               [h.make_tensor_value_info("x", ONNX_TYPE[np.dtype(src)], [n])],
               [h.make_tensor_value_info("y", ONNX_TYPE[np.dtype(dst)], [n])])
    return Session(edgeplan.compile(m))


def _f32_patterns():
    """Random float32 bit patterns and the edges of the 16-bit formats: the float16 range limits and
    the halfway points around them, the subnormal boundaries, zeros, infinities, NaNs."""
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2 ** 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    edges = np.array([65504, 65519.996, 65520, 65536, 6.1035156e-05, 6.0975552e-05, 5.9604645e-08, 2.9802322e-08,
                      2.9802326e-08, 1e-10, 0.0, -0.0, np.inf, -np.inf, np.nan, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11,
                      1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 3.3895314e38, 3.4028235e38], np.float32)
    return np.concatenate([bits.view(np.float32), edges, -edges])


def _same_bits_or_both_nan(got, want):
    g32, w32 = got.astype(np.float32), want.astype(np.float32)
    nan = np.isnan(w32)
    assert np.array_equal(np.isnan(g32), nan)
    assert np.array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))


def test_every_float16_pattern_widens_exactly():
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    y = _cast_plan(np.float16, np.float32, x.size).run(x=x)["y"]
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(y), nan)   # a NaN stays a NaN (quieted)
    assert np.array_equal(y[~nan].view(np.uint32), x[~nan].astype(np.float32).view(np.uint32))


def test_every_bfloat16_pattern_widens_exactly():
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(BF16)
    y = _cast_plan(BF16, np.float32, x.size).run(x=x)["y"]
    assert np.array_equal(y.view(np.uint32), (np.arange(1 << 16, dtype=np.uint32) << 16))


@pytest.mark.parametrize("dst", [np.float16, BF16], ids=["float16", "bfloat16"])
def test_float32_narrows_to_nearest_even(dst):
    x = _f32_patterns()
    y = _cast_plan(np.float32, dst, x.size).run(x=x)["y"]
    _same_bits_or_both_nan(y, x.astype(dst))


def test_float64_both_ways():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(4096) * 10.0 ** rng.integers(-40, 40, 4096), [1e300, -1e300, 0.0]])
    y = _cast_plan(np.float64, np.float32, x.size).run(x=x)["y"]
    with np.errstate(over="ignore"):
        assert np.array_equal(y, x.astype(np.float32))
    z = _cast_plan(np.float32, np.float64, x.size).run(x=x.astype(np.float32))["y"]
    assert z.dtype == np.float64 and np.array_equal(z, x.astype(np.float32).astype(np.float64))


def test_float16_to_and_from_integers():
    x = np.arange(-70000, 70000, 7, dtype=np.int32)
    y = _cast_plan(np.int32, np.float16, x.size).run(x=x)["y"]
    with np.errstate(over="ignore"):
        _same_bits_or_both_nan(y, x.astype(np.float16))
    f = np.linspace(-300, 300, 1001).astype(np.float16)
    assert np.array_equal(_cast_plan(np.float16, np.int64, f.size).run(x=f)["y"], f.astype(np.int64))


def _ort(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def _conv_model(dt):
    """Conv 3x3 + Relu + global average + Gemm, all in dtype dt (weights, I/O)."""
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(dt)
    b = (rng.standard_normal(8) * 0.1).astype(dt)
    fc = (rng.standard_normal((8, 5)) * 0.3).astype(dt)
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c"], ["r"]),
             h.make_node("GlobalAveragePool", ["r"], ["p"]), h.make_node("Flatten", ["p"], ["f"]),
             h.make_node("Gemm", ["f", "fc"], ["y"])]
    t = ONNX_TYPE[np.dtype(dt)]
    return _model(nodes, [h.make_tensor_value_info("x", t, [1, 3, 16, 16])], [h.make_tensor_value_info("y", t, [1, 5])],
                  [nh.from_array(w, "w"), nh.from_array(b, "b"), nh.from_array(fc, "fc")], opset=17)


def _mlp_model(dt):
    """MatMul + Add + Tanh + MatMul + Softmax in dtype dt (onnxruntime's CPU provider has no float64 Conv)."""
    rng = np.random.default_rng(6)
    t = ONNX_TYPE[np.dtype(dt)]
    inits = [nh.from_array((rng.standard_normal((64, 32)) * 0.2).astype(dt), "w1"),
             nh.from_array((rng.standard_normal(32) * 0.1).astype(dt), "b1"),
             nh.from_array((rng.standard_normal((32, 10)) * 0.3).astype(dt), "w2")]
    nodes = [h.make_node("MatMul", ["x", "w1"], ["a"]), h.make_node("Add", ["a", "b1"], ["z"]),
             h.make_node("Tanh", ["z"], ["t"]), h.make_node("MatMul", ["t", "w2"], ["l"]),
             h.make_node("Softmax", ["l"], ["y"], axis=-1)]
    return _model(nodes, [h.make_tensor_value_info("x", t, [4, 64])], [h.make_tensor_value_info("y", t, [4, 10])],
                  inits, opset=17)


@pytest.mark.parametrize("dt,tol", [(np.float16, 2e-3), (np.float64, 1e-5)], ids=["float16", "float64"])
def test_a_model_in_float16_or_float64_matches_onnxruntime(dt, tol):
    """float16 (a CNN): onnxruntime rounds after its float16 kernels, edgeplan once at the output (2^-11
    of the output, a few units); float64 (an MLP): edgeplan computes in float32 (about 1e-7 relative per
    op)."""
    m = _conv_model(dt) if dt == np.float16 else _mlp_model(dt)
    x = np.random.default_rng(2).standard_normal((1, 3, 16, 16) if dt == np.float16 else (4, 64)).astype(dt)
    plan = edgeplan.compile(m)
    # 1.2 for the float16 / float64 tensors at the plan's edges; the CNN's convs run on the C8 layout (1.12)
    want = "edgeplan plan 1.12" if dt == np.float16 else "edgeplan plan 1.2"
    assert "float32" in plan.inspect() and plan.inspect().startswith(want)
    got = Session(plan).run(x=x)["y"]
    ref = _ort(m, {"x": x})["y"]
    assert got.dtype == np.dtype(dt)
    assert rel_err(got.astype(np.float64), ref.astype(np.float64)) < tol


def test_a_bfloat16_model_matches_float32_on_bfloat16_weights():
    """onnxruntime's CPU provider has no bfloat16 Conv; the float32 model on the same (bfloat16-exact)
    weights and inputs is the reference, the output rounded to bfloat16 (2^-8)."""
    m16, m32 = _conv_model(BF16), _conv_model(np.float32)
    for a, b in zip(m16.graph.initializer, m32.graph.initializer):
        b.CopyFrom(nh.from_array(nh.to_array(a).astype(np.float32), b.name))
    x = np.random.default_rng(4).standard_normal((1, 3, 16, 16)).astype(BF16)
    got = Session(edgeplan.compile(m16)).run(x=x)["y"]
    ref = _ort(m32, {"x": x.astype(np.float32)})["y"]
    assert got.dtype == BF16
    assert np.array_equal(got.view(np.uint16), ref.astype(BF16).view(np.uint16))


@pytest.mark.parametrize("like", [False, True], ids=["Cast", "CastLike"])
def test_a_cast_to_float16_inside_a_float32_graph_keeps_its_rounding(like):
    """y = float32(float16(x)) * 3: the rounding to float16 is the model's (a fake-quantised export), so it
    must happen even though edgeplan computes the rest in float32."""
    if like:
        cast = h.make_node("CastLike", ["x", "proto"], ["q"])
        inits = [nh.from_array(np.zeros(1, np.float16), "proto"), nh.from_array(np.array(3, np.float32), "three")]
        nodes = [cast, h.make_node("Cast", ["q"], ["qf"], to=TP.FLOAT), h.make_node("Mul", ["qf", "three"], ["y"])]
    else:
        inits = [nh.from_array(np.array(3, np.float32), "three")]
        nodes = [h.make_node("Cast", ["x"], ["q"], to=TP.FLOAT16), h.make_node("Cast", ["q"], ["qf"], to=TP.FLOAT),
                 h.make_node("Mul", ["qf", "three"], ["y"])]
    m = _model(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1000])], [h.make_tensor_value_info("y", TP.FLOAT, [1000])],
               inits)
    x = (np.random.default_rng(5).standard_normal(1000) * 100).astype(np.float32)
    got = Session(edgeplan.compile(m)).run(x=x)["y"]
    assert np.array_equal(got, x.astype(np.float16).astype(np.float32) * np.float32(3))
    assert np.array_equal(got, _ort(m, {"x": x})["y"])


@pytest.mark.parametrize("to", [K.EP_DTYPE_F16, K.EP_DTYPE_BF16, K.EP_DTYPE_F64, 17, 0, -1, 256])
def test_cast_targets_in_a_hand_built_plan(to):
    """CAST to the three float formats opens; to a dtype the runtime does not know (17: FLOAT8E4M3FN) it
    fails open with an error code."""
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    known = to in EP_TO_NUMPY
    x = Tensor("x", np.dtype(np.float32), (4,), is_input=True)
    y = Tensor("y", EP_TO_NUMPY[to] if known else np.dtype(np.float16), (4,), is_output=True)
    g = Graph([x, y], [Op("cast", [x], [y], {"to": to}, name="cast")], [x], [y])
    plan = write_plan(g, plan_memory(g))
    if known:
        got = Session(plan).run(x=np.array([1.5, -2.25, 65504, 1e-8], np.float32))["y"]
        assert got.dtype == EP_TO_NUMPY[to] and got[1] == -2.25
    else:
        with pytest.raises(EdgeplanError, match="invalid op parameters .* op 0 \\(cast"):
            Session(plan)

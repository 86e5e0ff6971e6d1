"""Round / Floor / Ceil and integer element-wise arithmetic and reductions (what real speech
exports need, e.g. `frame_index + 1` on int64 positions and length arithmetic), against onnxruntime on
seeded random shapes, and against numpy where onnxruntime has no result (overflow wraps, INT_MIN / -1
is INT_MIN); a zero divisor fails the run, as it does in onnxruntime (docs/plan-format.md, BINARY)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import edgeplan
from edgeplan._cdef import K
from edgeplan.compiler.errors import CompileError
from edgeplan.runtime import EdgeplanError

SEEDS = range(3)
INTS = [np.int32, np.int64]


def model(nodes, inputs, outputs, consts=(), opset=18, ir_version=8):
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(np.dtype(v.dtype)), v.shape)
          for k, v in inputs.items()]
    vo = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), None)
          for k, dt in outputs.items()]
    g = helper.make_graph(nodes, "g", vi, vo, [numpy_helper.from_array(np.asarray(v), k) for k, v in consts])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def run_both(m, feeds):
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = edgeplan.Session(edgeplan.compile(m)).run(feeds)
    return list(got.values()), ref


def bshapes(rng):
    """Two shapes that broadcast (same, scalar, per-channel, lower rank, random ones)."""
    r = int(rng.integers(1, 5))
    y = [int(rng.integers(1, 6)) for _ in range(r)]
    form = int(rng.integers(0, 4))
    if form == 0:
        return y, list(y)
    if form == 1:
        return y, []
    if form == 2:
        return y, y[-1:]
    return y, [d if rng.integers(0, 2) else 1 for d in y]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op,attrs", [("Add", {}), ("Sub", {}), ("Mul", {}), ("Div", {}), ("Max", {}),
                                      ("Min", {}), ("Mod", {}), ("Mod", {"fmod": 1})])
@pytest.mark.parametrize("seed", SEEDS)
def test_int_binary_matches_ort(seed, op, attrs, dtype):
    rng = np.random.default_rng(seed)
    sa, sb = bshapes(rng)
    if seed == 1:
        sa, sb = sb, sa
    a = rng.integers(-1000, 1000, sa).astype(dtype)
    b = rng.integers(-50, 50, sb).astype(dtype)
    if op in ("Div", "Mod"):
        b[b == 0] = 7          # onnxruntime's integer division by zero traps
    feeds = {"a": a, "b": b}
    m = model([helper.make_node(op, ["a", "b"], ["y"], **attrs)], feeds, {"y": dtype})
    (got,), (ref,) = run_both(m, feeds)
    assert got.dtype == np.dtype(dtype) and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", INTS)
def test_int_wrap_as_numpy(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.min, 7, -7, 7, -7, 5, info.min], dtype)
    b = np.array([1, 1, -1, 2, 2, -2, -2, 3, -1], dtype)
    feeds = {"a": a, "b": b}
    outs = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "mod": "Mod", "fmod": "Mod"}
    nodes = [helper.make_node(t, ["a", "b"], [o], **({"fmod": 1} if o == "fmod" else {})) for o, t in outs.items()]
    got = edgeplan.Session(edgeplan.compile(model(nodes, feeds, {o: dtype for o in outs}))).run(feeds)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got["add"], a + b)
        np.testing.assert_array_equal(got["sub"], a - b)
        np.testing.assert_array_equal(got["mul"], a * b)
        q = np.abs(a) // np.abs(b)                              # |INT_MIN| wraps to INT_MIN: q = INT_MIN
        trunc = np.where((a < 0) != (b < 0), -q, q)             # ... and -INT_MIN is INT_MIN again
        np.testing.assert_array_equal(got["div"], trunc.astype(dtype))
        np.testing.assert_array_equal(got["mod"], np.mod(a, b))          # sign of b
        np.testing.assert_array_equal(got["fmod"], np.fmod(a, b))        # sign of a
    assert got["div"][2] == info.min and got["div"][3] == 3 and got["div"][4] == -3


@pytest.mark.parametrize("base,exp", [(np.int32, np.int32), (np.int64, np.int64), (np.int32, np.int64),
                                      (np.int64, np.float32), (np.float32, np.int64), (np.float32, np.int32)])
@pytest.mark.parametrize("seed", SEEDS)
def test_pow_of_mixed_types_matches_ort(seed, base, exp):
    rng = np.random.default_rng(seed)
    sa, sb = bshapes(rng)
    int_exp = np.dtype(exp).kind in "iu"
    a = rng.integers(-6 if int_exp else 0, 7, sa).astype(base)    # a negative base to a real power is NaN
    b = (rng.integers(0, 6, sb) if int_exp else rng.uniform(0, 4, sb)).astype(exp)
    feeds = {"a": a, "b": b}
    m = model([helper.make_node("Pow", ["a", "b"], ["y"])], feeds, {"y": base}, opset=15)
    (got,), (ref,) = run_both(m, feeds)
    assert got.dtype == np.dtype(base) and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    if np.dtype(base).kind == "i" and np.dtype(exp).kind == "i":
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64])
def test_int_pow_wraps_as_numpy(dtype):
    """Integer Pow is repeated multiplication: it wraps like Mul (numpy), and a negative exponent gives the
    truncated real power (1 for 1, +-1 for -1, else 0)."""
    info = np.iinfo(dtype)
    a = np.array([3, 7, 2, info.max, 0, 1, 5, 0], dtype)
    b = np.array([40, 23, 2 if info.bits < 64 else 63, 3, 0, 9, 1, 5], dtype)
    if info.min < 0:
        a = np.concatenate([a, np.array([-3, -1, -1, 1, 2, 0, info.min], dtype)])
        b = np.concatenate([b, np.array([5, -3, -4, -7, -1, -2, 2], dtype)])
    feeds = {"a": a, "b": b}
    m = model([helper.make_node("Pow", ["a", "b"], ["y"], name="ipow")], feeds, {"y": dtype})
    got = edgeplan.Session(edgeplan.compile(m)).run(feeds)["y"]
    ref = np.array([(pow(x, e, 1 << info.bits) if e >= 0 else
                     1 if x == 1 else ((-1 if e % 2 else 1) if x == -1 else 0)) % (1 << info.bits)
                    for x, e in zip(a.tolist(), b.tolist())], np.uint64)
    np.testing.assert_array_equal(got, ref.astype(dtype))
    with np.errstate(all="ignore"):
        nonneg = b >= 0
        np.testing.assert_array_equal(got[nonneg], a[nonneg] ** b[nonneg])


@pytest.mark.parametrize("op,attrs", [("Div", {}), ("Mod", {}), ("Mod", {"fmod": 1})])
def test_int_zero_divisor_fails_the_run(op, attrs):
    a = np.arange(1, 101, dtype=np.int64)
    b = np.full(100, 3, np.int64)
    m = model([helper.make_node(op, ["a", "b"], ["y"], name="lengths_div", **attrs)], {"a": a, "b": b},
              {"y": np.int64})
    s = edgeplan.Session(edgeplan.compile(m))
    np.testing.assert_array_equal(s.run({"a": a, "b": b})["y"], (a // 3) if op == "Div" else a % 3)
    b[70] = 0
    with pytest.raises(EdgeplanError, match="lengths_div.*division by zero") as e:
        s.run({"a": a, "b": b})
    assert e.value.status == K.EP_ERR_RUN_INDEX
    b[70] = 3
    assert s.run({"a": a, "b": b})["y"][70] == (71 // 3 if op == "Div" else 71 % 3)   # the session recovers


def test_positions_and_lengths_int64():
    """The motivating TTS case: frame_index + 1 on a run-time int64 position, then length arithmetic
    (hop * frames, ceil-free frame counts by integer division) kept in int64."""
    idx = np.array([41], np.int64)
    lens = np.array([[16000, 12345, 400]], np.int64)
    feeds = {"frame_index": idx, "lengths": lens}
    nodes = [helper.make_node("Add", ["frame_index", "one"], ["next_index"]),
             helper.make_node("Mul", ["next_index", "hop"], ["sample_pos"]),
             helper.make_node("Sub", ["lengths", "win"], ["t0"]),
             helper.make_node("Div", ["t0", "hop"], ["t1"]),
             helper.make_node("Add", ["t1", "one"], ["frames"]),
             helper.make_node("ReduceMax", ["frames"], ["max_frames"], keepdims=0)]
    consts = [("one", np.array(1, np.int64)), ("hop", np.array(160, np.int64)), ("win", np.array(400, np.int64))]
    m = model(nodes, feeds, {"next_index": np.int64, "sample_pos": np.int64, "frames": np.int64,
                             "max_frames": np.int64}, consts)
    got, ref = run_both(m, feeds)
    for g, r in zip(got, ref):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, r)
    assert int(got[0][0]) == 42


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"])
@pytest.mark.parametrize("seed", SEEDS)
def test_int_reduce_matches_ort(seed, op, dtype):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    lo, hi = (-3, 4) if op == "ReduceProd" else (-10**6, 10**6)
    x = rng.integers(lo, hi, shape).astype(dtype)
    axes = sorted({int(a) for a in rng.integers(-r, r, int(rng.integers(1, r + 1)))})
    keep = int(rng.integers(0, 2))
    m = model([helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)], {"x": x}, {"y": dtype},
              [("axes", np.array(axes, np.int64))])
    (got,), (ref,) = run_both(m, {"x": x})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, ref)


def test_int_reduce_wraps():
    x = np.array([[np.iinfo(np.int32).max, 1], [3, 4]], np.int32)
    m = model([helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)], {"x": x}, {"y": np.int32},
              [("axes", np.array([1], np.int64))])
    y = edgeplan.Session(edgeplan.compile(m)).run({"x": x})["y"]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(y, x.sum(axis=1, dtype=np.int32))
    assert y[0] == np.iinfo(np.int32).min


@pytest.mark.parametrize("op", ["Round", "Floor", "Ceil"])
@pytest.mark.parametrize("seed", SEEDS)
def test_round_floor_ceil_match_ort(seed, op):
    rng = np.random.default_rng(seed)
    shape = [int(rng.integers(1, 4)), int(rng.integers(1, 40))]
    x = (rng.standard_normal(shape) * 10).astype(np.float32)
    x.flat[::3] = (rng.integers(-20, 20, x.flat[::3].shape) * 0.5).astype(np.float32)   # ties, integers
    x.flat[0] = -0.25
    m = model([helper.make_node(op, ["x"], ["y"])], {"x": x}, {"y": np.float32})
    (got,), (ref,) = run_both(m, {"x": x})
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))   # -0.25 rounds to -0 (ceil too)


def test_int_inputs_refused_with_reason():
    a = np.zeros((2, 3), np.int32)
    b = np.zeros((2, 3), np.int64)
    m = model([helper.make_node("Add", ["a", "b"], ["y"], name="mixed")], {"a": a, "b": b}, {"y": np.int64})
    with pytest.raises(CompileError, match="one dtype"):
        edgeplan.compile(m)
    m = model([helper.make_node("ReduceMean", ["a"], ["y"], name="imean")], {"a": a}, {"y": np.int32})
    with pytest.raises(CompileError, match="ReduceMean supports float32"):
        edgeplan.compile(m)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
@pytest.mark.parametrize("bounds", ["both", "min", "max", "none"])
def test_int_clip_matches_ort(dtype, bounds):
    """Clip on integers: max then min on the integer binary kernel, a missing bound clamping nothing."""
    rng = np.random.default_rng(11)
    x = rng.integers(np.iinfo(dtype).min // 2, np.iinfo(dtype).max // 2, (3, 17)).astype(dtype)
    lo, hi = np.array(-5 if np.iinfo(dtype).min < 0 else 3, dtype), np.array(40, dtype)
    ins = {"both": ["x", "lo", "hi"], "min": ["x", "lo"], "max": ["x", "", "hi"], "none": ["x"]}[bounds]
    m = model([helper.make_node("Clip", ins, ["y"])], {"x": x}, {"y": dtype}, [("lo", lo), ("hi", hi)], opset=13)
    got, ref = run_both(m, {"x": x})
    assert got[0].dtype == dtype and np.array_equal(got[0], ref[0])


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("shape,axes", [((4, 5), [1]), ((3, 4, 2), [0, 2]), ((2, 0, 3), [1])])
def test_bool_reduce_max_min_are_any_and_all(op, shape, axes):
    """On bool, ReduceMax is any and ReduceMin all; over an empty axis any is false and all true."""
    x = np.random.default_rng(3).random(shape) > 0.6
    m = model([helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)], {"x": x}, {"y": np.bool_},
              [("axes", np.array(axes, np.int64))])
    got = edgeplan.Session(edgeplan.compile(m)).run(x=x)["y"]
    want = (np.any if op == "ReduceMax" else np.all)(x, axis=tuple(axes))
    assert got.dtype == np.bool_ and np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64, np.bool_, np.float32])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_on_every_dtype_and_mode_matches_ort(dtype, mode):
    """Pad-19 on integers and bool (element bytes moved as they are) and the wrap mode, negative pads (a
    crop) included."""
    x = (np.random.default_rng(4).integers(0, 100, (3, 5)) > 40 if dtype == np.bool_
         else np.random.default_rng(4).integers(0, 100, (3, 5))).astype(dtype)
    pads = np.array([1, 2, 2, -1], np.int64)
    ins, consts = ["x", "pads"], [("pads", pads)]
    if mode == "constant":
        ins.append("cv")
        consts.append(("cv", np.array(True if dtype == np.bool_ else 7, dtype)))
    m = model([helper.make_node("Pad", ins, ["y"], mode=mode)], {"x": x}, {"y": dtype}, consts, opset=19)
    got, ref = run_both(m, {"x": x})
    assert got[0].dtype == dtype and np.array_equal(got[0], ref[0])


@pytest.mark.parametrize("value", [float("nan"), 300.0, -1.0])
def test_a_hand_built_uint8_pad_with_a_value_it_cannot_hold_is_refused(value):
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    x = Tensor("x", np.dtype(np.uint8), (4,), is_input=True)
    y = Tensor("y", np.dtype(np.uint8), (6,), is_output=True)
    g = Graph([x, y], [Op("pad", [x], [y], {"mode": K.EP_PAD_CONSTANT, "value": value,
                                            "pads": [1, 1] + [0] * 14}, name="pad")], [x], [y])
    with pytest.raises(EdgeplanError, match="invalid op parameters"):
        edgeplan.Session(write_plan(g, plan_memory(g)))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("largest", [0, 1])
def test_topk_and_argmax_order_every_integer_dtype(dtype, largest):
    """TopK and ArgMax / ArgMin compare integers exactly (uint64 above 2^63 as unsigned); ties keep the
    lower index."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(largest)
    x = rng.integers(info.min, info.max, (3, 9), dtype=dtype, endpoint=True)
    x[1, 2] = x[1, 5] = info.max
    x[2, 0] = x[2, 7] = info.min
    feeds = {"x": x}
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest),
             helper.make_node("ArgMax" if largest else "ArgMin", ["x"], ["a"], axis=1, keepdims=0)]
    m = model(nodes, feeds, {"v": dtype, "i": np.int64, "a": np.int64}, consts=[("k", np.array([4], np.int64))])
    got = edgeplan.Session(edgeplan.compile(m)).run(feeds)
    order = np.array([sorted(range(9), key=lambda j: (-int(r[j]) if largest else int(r[j]), j)) for r in x])
    np.testing.assert_array_equal(got["i"], order[:, :4])
    np.testing.assert_array_equal(got["v"], np.take_along_axis(x, order[:, :4], 1))
    np.testing.assert_array_equal(got["a"], order[:, 0])

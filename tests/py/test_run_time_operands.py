"""Operands computed from the data at run time (docs/dynamic-shapes.md): ConstantOfShape and Expand whose
shape, and TopK whose K, come from the data (a mask as long as the sum of predicted durations; K =
min(K, boxes)). Against onnxruntime on several runs of one plan; a value past the plan's bound (or a
negative one) fails the run with EP_ERR_RUN_BOUND, naming the node, and the session recovers."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K


def _model(nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info(o, t, None) for o, t in outputs], list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _i64(name, v):
    return nh.from_array(np.array(v, np.int64), name)


def _check(m, feeds_list, **kw):
    s, ref = Session(edgeplan.compile(m, **kw)), ort.InferenceSession(m.SerializeToString())
    for feeds in feeds_list:
        got, want = s.run(feeds), ref.run(None, feeds)
        for o, w in zip(m.graph.output, want):
            assert got[o.name].shape == w.shape, (o.name, got[o.name].shape, w.shape)
            np.testing.assert_array_equal(got[o.name], w)
    return s


DURS = h.make_tensor_value_info("d", TP.INT64, [5])
RUNS = [{"d": np.array(v, np.int64)} for v in ([1, 2, 3, 4, 0], [0, 0, 0, 0, 0], [5, 5, 5, 5, 4], [3, 0, 1, 0, 2])]


def test_constant_of_shape_as_long_as_the_sum_of_durations():
    """[1, 1, sum(d)] of 1.0: the fixed entries stay static, the sum is a data-dependent length."""
    m = _model([h.make_node("ReduceSum", ["d"], ["n"], keepdims=1),
                h.make_node("Concat", ["one", "one", "n"], ["shape"], axis=0),
                h.make_node("ConstantOfShape", ["shape"], ["mask"], name="mask",
                            value=nh.from_array(np.array([1.0], np.float32)))],
               [DURS], [("mask", TP.FLOAT)], [_i64("one", [1])])
    s = _check(m, RUNS, dims={"mask": (0, 24)})
    with pytest.raises(EdgeplanError, match="mask: a shape entry past its bound") as e:
        s.run({"d": np.array([5, 5, 5, 5, 5], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND
    assert s.run(RUNS[0])["mask"].shape == (1, 1, 10)      # the session recovers


def test_constant_of_shape_needs_its_bound_declared():
    m = _model([h.make_node("ReduceSum", ["d"], ["n"], keepdims=1),
                h.make_node("ConstantOfShape", ["n"], ["y"], name="zeros")], [DURS], [("y", TP.FLOAT)])
    with pytest.raises(edgeplan.compiler.errors.CompileError, match=r"zeros.*dims=\{'y': \(0, MAX\)\}"):
        edgeplan.compile(m)


def test_expand_to_a_run_time_shape_and_compute_after_it():
    """Expand x [1, 3] to [sum(d), 3], then x * 2 on the data-dependent rows; a negative entry fails."""
    m = _model([h.make_node("ReduceSum", ["d"], ["n"], keepdims=1),
                h.make_node("Concat", ["n", "three"], ["shape"], axis=0),
                h.make_node("Expand", ["x", "shape"], ["e"], name="rows"),
                h.make_node("Mul", ["e", "two"], ["y"])],
               [DURS, h.make_tensor_value_info("x", TP.FLOAT, [1, 3])], [("y", TP.FLOAT)],
               [_i64("three", [3]), nh.from_array(np.array(2, np.float32), "two")])
    x = np.array([[1, -2, 3]], np.float32)
    s = _check(m, [dict(r, x=x) for r in RUNS], dims={"e": (0, 24)})
    with pytest.raises(EdgeplanError, match="rows: a shape entry past its bound"):
        s.run({"d": np.array([-3, 0, 0, 0, 0], np.int64), "x": x})


@pytest.mark.parametrize("largest", [0, 1])
def test_topk_with_k_from_the_data(largest):
    """K = min(4, count of positive scores), as detector post-processing computes it."""
    m = _model([h.make_node("Greater", ["s", "zero"], ["pos"]), h.make_node("Cast", ["pos"], ["posi"], to=TP.INT64),
                h.make_node("ReduceSum", ["posi"], ["cnt"], keepdims=1), h.make_node("Min", ["cnt", "four"], ["k"]),
                h.make_node("TopK", ["s", "k"], ["v", "i"], name="best", axis=0, largest=largest)],
               [h.make_tensor_value_info("s", TP.FLOAT, [6])], [("v", TP.FLOAT), ("i", TP.INT64)],
               [nh.from_array(np.array(0, np.float32), "zero"), _i64("four", [4])])
    rng = np.random.default_rng(largest)
    runs = [{"s": rng.standard_normal(6).astype(np.float32)} for _ in range(6)] + [{"s": -np.ones(6, np.float32)}]
    _check(m, runs)


def test_topk_with_k_past_the_axis_fails_the_run():
    m = _model([h.make_node("TopK", ["s", "k"], ["v", "i"], name="best")],
               [h.make_tensor_value_info("s", TP.FLOAT, [6]), h.make_tensor_value_info("k", TP.INT64, [1])],
               [("v", TP.FLOAT), ("i", TP.INT64)])
    s = Session(edgeplan.compile(m))
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(s.run({"s": x, "k": np.array([2], np.int64)})["v"], [5, 4])
    with pytest.raises(EdgeplanError, match="best: K past its bound") as e:
        s.run({"s": x, "k": np.array([7], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter_writes_a_kv_cache_at_run_time_positions(mode):
    """TensorScatter (opset 24), the KV-cache update: the per-batch write index is run-time data. Against
    onnx's reference implementation; a linear write past the cache fails the run."""
    from onnx.reference import ReferenceEvaluator
    g = h.make_graph([h.make_node("TensorScatter", ["past", "upd", "wi"], ["present"], name="kv", mode=mode, axis=2)],
                     "g", [h.make_tensor_value_info("past", TP.FLOAT, [2, 3, 8, 4]),
                           h.make_tensor_value_info("upd", TP.FLOAT, [2, 3, 3, 4]),
                           h.make_tensor_value_info("wi", TP.INT64, [2])],
                     [h.make_tensor_value_info("present", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 24)])
    s, ref = Session(edgeplan.compile(m)), ReferenceEvaluator(m)
    rng = np.random.default_rng(3)
    for wi in ([0, 5], [2, 1], [5, 7] if mode == "circular" else [5, 4]):
        feeds = {"past": rng.standard_normal((2, 3, 8, 4)).astype(np.float32),
                 "upd": rng.standard_normal((2, 3, 3, 4)).astype(np.float32), "wi": np.array(wi, np.int64)}
        np.testing.assert_array_equal(s.run(feeds)["present"], ref.run(None, feeds)[0])
    if mode == "linear":
        feeds["wi"] = np.array([6, 0], np.int64)
        with pytest.raises(EdgeplanError, match="kv") as e:
            s.run(feeds)
        assert e.value.status == K.EP_ERR_RUN_INDEX


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_by_amounts_computed_from_the_data(mode):
    """x [2, 6] padded on its time axis by b before and sum(d) after, both run-time data: padded at the
    bound, the run's window cut out. A total past the bound, or a reflect pad past the extent, fails."""
    m = _model([h.make_node("ReduceSum", ["d"], ["n"], keepdims=1),
                h.make_node("Concat", ["z", "b", "z", "n"], ["pads"], axis=0),
                h.make_node("Pad", ["x", "pads"], ["y"], name="padT", mode=mode)],
               [h.make_tensor_value_info("x", TP.FLOAT, [2, 6]), h.make_tensor_value_info("d", TP.INT64, [3]),
                h.make_tensor_value_info("b", TP.INT64, [1])], [("y", TP.FLOAT)], [_i64("z", [0])])
    rng = np.random.default_rng(5)
    runs = [{"x": rng.standard_normal((2, 6)).astype(np.float32), "d": np.array(d, np.int64),
             "b": np.array([b], np.int64)} for d, b in [([1, 1, 1], 2), ([0, 0, 0], 0), ([2, 1, 1], 5), ([0, 0, 1], 3)]]
    s = _check(m, runs, dims={"y": (6, 16)})
    with pytest.raises(EdgeplanError, match="padT") as e:     # the window past the output's bound
        s.run(dict(runs[0], d=np.array([3, 3, 3], np.int64)))
    assert e.value.status == K.EP_ERR_RUN_BOUND
    if mode == "reflect":   # 6 before a 6-long axis: onnxruntime refuses it too
        with pytest.raises(EdgeplanError, match="padT"):
            s.run(dict(runs[1], b=np.array([6], np.int64)))


def test_tile_by_repeats_computed_from_the_data():
    """x [2, 3] tiled [1, sum(d)] times: the repeated axis is a data-dependent length."""
    m = _model([h.make_node("ReduceSum", ["d"], ["n"], keepdims=1),
                h.make_node("Concat", ["one", "n"], ["reps"], axis=0),
                h.make_node("Tile", ["x", "reps"], ["y"], name="rep")],
               [h.make_tensor_value_info("x", TP.FLOAT, [2, 3]), DURS], [("y", TP.FLOAT)], [_i64("one", [1])])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    s = _check(m, [dict(r, x=x) for r in RUNS if r["d"].sum() <= 7], dims={"y": (0, 21)})
    with pytest.raises(EdgeplanError, match="rep") as e:
        s.run({"x": x, "d": np.array([2, 2, 2, 2, 0], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND


MASK = h.make_tensor_value_info("x", TP.FLOAT, [6])
MASK_RUNS = [{"x": np.array(v, np.float32)} for v in ([1, 0, 2, 0, 0, 3], [0] * 6, [1, 2, 3, 4, 5, 6], [0, 0, 0, 0, 0, 7])]


def test_shape_of_a_data_dependent_length_in_arithmetic_and_as_a_shape():
    """x[x != 0] as exporters write boolean indexing, then its Shape: as a run-time value (the count times
    a constant, added to the data), as a Reshape target (through Concat) and as ConstantOfShape's shape;
    Size too. The count is the NonZero's length; no bound needs declaring."""
    m = _model([h.make_node("NonZero", ["x"], ["nz"]),
                h.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
                h.make_node("GatherND", ["x", "idx"], ["picked"]),
                h.make_node("Shape", ["picked"], ["s"], name="shape_of_picked"),
                h.make_node("Cast", ["s"], ["sf"], to=TP.FLOAT),
                h.make_node("Mul", ["sf", "half"], ["scaled"]),
                h.make_node("Add", ["picked", "scaled"], ["shifted"]),
                h.make_node("Concat", ["s", "one"], ["shape2"], axis=0),
                h.make_node("Reshape", ["shifted", "shape2"], ["col"]),
                h.make_node("ConstantOfShape", ["s"], ["ones"], value=nh.from_array(np.array([1], np.int64))),
                h.make_node("Size", ["picked"], ["n"]),
                h.make_node("Range", ["zero", "n", "step"], ["pos"])],
               [MASK], [("col", TP.FLOAT), ("ones", TP.INT64), ("n", TP.INT64), ("pos", TP.INT64)],
               [nh.from_array(np.array([0.5], np.float32), "half"), _i64("one", [1]), _i64("zero", 0),
                _i64("step", 1)])
    _check(m, MASK_RUNS)


def test_two_nonzeros_of_one_mask_are_one_length():
    """Boolean indexing writes one NonZero per indexed tensor: lengths of the same mask (here through an
    Expand to its own shape) are one symbol, so their results combine elementwise."""
    m = _model([h.make_node("Not", ["m"], ["keep"]),
                h.make_node("Shape", ["keep"], ["ks"]),
                h.make_node("Expand", ["keep", "ks"], ["keep2"]),
                h.make_node("NonZero", ["keep"], ["a"]),
                h.make_node("NonZero", ["keep2"], ["b"]),
                h.make_node("Add", ["a", "b"], ["y"])],
               [h.make_tensor_value_info("m", TP.BOOL, [2, 3])], [("y", TP.INT64)])
    _check(m, [{"m": np.array(v, bool).reshape(2, 3)} for v in ([1, 0, 1, 0, 0, 1], [1] * 6, [0] * 6)])


def test_onehot_with_its_depth_from_the_data():
    """depth = the longest duration + 1 (run time), declared at most 8: built at 8, cut to the depth;
    negative indices count from the run's depth; a depth past the bound fails the run."""
    m = _model([h.make_node("ReduceMax", ["d"], ["top"], keepdims=0),
                h.make_node("Add", ["top", "one"], ["depth"]),
                h.make_node("Sub", ["d", "two"], ["idx"]),
                h.make_node("OneHot", ["idx", "depth", "vals"], ["y"], name="onehot", axis=-1)],
               [DURS], [("y", TP.FLOAT)], [_i64("one", 1), _i64("two", 2),
                                           nh.from_array(np.array([0.0, 1.0], np.float32), "vals")])
    s = _check(m, [{"d": np.array(v, np.int64)} for v in ([1, 2, 3, 4, 0], [0, 0, 0, 0, 0], [5, 5, 5, 5, 4],
                                                           [3, 0, 1, 0, 2], [7, 1, 0, 6, 2])], dims={"y": (1, 8)})
    with pytest.raises(EdgeplanError, match="onehot: the depth past its bound") as e:
        s.run({"d": np.array([9, 0, 0, 0, 0], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND

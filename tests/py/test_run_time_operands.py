"""Operands computed from the data at run time (docs/dynamic-shapes.md): ConstantOfShape and Expand whose
shape, and TopK whose K, come from the data (a mask as long as the sum of predicted durations; K =
min(K, boxes)), a Reshape target and Resize scales or sizes computed from the data, and a Pad whose
amounts follow a variable length. Against onnxruntime on several runs of one plan; a value past the
plan's bound (or a negative one) fails the run with EP_ERR_RUN_BOUND, naming the node, and the session
recovers."""
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


def _ops(plan) -> list:
    """The opcode names of a plan, in order (from its inspect listing)."""
    text = plan.inspect().split("ops (", 1)[1].split("tensors:", 1)[0]
    return [line.split()[1] for line in text.splitlines()[1:] if line.strip()]


def test_reshape_to_a_shape_computed_from_the_data():
    """x [12] viewed as [sum(d), -1] (the count from the data, the rest inferred), then x * 2: a view of
    x's bytes (no copy op), the first dim bounded by dims=, the inferred one by x's element count. An entry
    past the bound fails with EP_ERR_RUN_BOUND, a count that does not divide 12 with EP_ERR_RUN_SHAPE."""
    m = _model([h.make_node("ReduceSum", ["d"], ["n"], keepdims=1),
                h.make_node("Concat", ["n", "minus1"], ["shape"], axis=0),
                h.make_node("Reshape", ["x", "shape"], ["r"], name="rows"),
                h.make_node("Mul", ["r", "two"], ["y"])],
               [h.make_tensor_value_info("x", TP.FLOAT, [12]), h.make_tensor_value_info("d", TP.INT64, [2])],
               [("y", TP.FLOAT)], [_i64("minus1", [-1]), nh.from_array(np.array(2, np.float32), "two")])
    x = np.arange(12, dtype=np.float32)
    plan = edgeplan.compile(m, dims={"r": (1, 12)})
    assert _ops(plan) == ["reduce", "concat", "reshape_dyn", "binary"]
    s = _check(m, [{"x": x, "d": np.array(d, np.int64)} for d in ([1, 2], [4, 2], [12, 0], [1, 0], [2, 4])],
               dims={"r": (1, 12)})
    with pytest.raises(EdgeplanError, match="rows") as e:
        s.run({"x": x, "d": np.array([13, 0], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND
    with pytest.raises(EdgeplanError, match="rows") as e:
        s.run({"x": x, "d": np.array([5, 0], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_SHAPE
    assert s.run({"x": x, "d": np.array([3, 0], np.int64)})["y"].shape == (3, 4)   # the session recovers


def test_reshape_with_a_copied_dim_and_an_inferred_one():
    """x [2, 12] to [0, heads, -1] with heads from the data (0 copies x's dim; allowzero 0), as attention
    exports split heads; the inferred dim follows. The view feeds a Transpose."""
    m = _model([h.make_node("ReduceMax", ["d"], ["k"], keepdims=1),
                h.make_node("Concat", ["zero", "k", "minus1"], ["shape"], axis=0),
                h.make_node("Reshape", ["x", "shape"], ["r"], name="heads"),
                h.make_node("Transpose", ["r"], ["y"], perm=[1, 0, 2])],
               [h.make_tensor_value_info("x", TP.FLOAT, [2, 12]), DURS], [("y", TP.FLOAT)],
               [_i64("zero", [0]), _i64("minus1", [-1])])
    x = np.arange(24, dtype=np.float32).reshape(2, 12)
    s = _check(m, [{"x": x, "d": np.array(v, np.int64)} for v in ([1, 2, 3, 0, 0], [6, 1, 1, 1, 1], [1] * 5,
                                                                   [0, 12, 0, 0, 0], [4, 4, 4, 4, 4])],
               dims={"r:1": (1, 12)})
    with pytest.raises(EdgeplanError, match="heads") as e:
        s.run({"x": x, "d": np.array([24, 0, 0, 0, 0], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND


def test_reshape_of_a_data_dependent_length():
    """Boxes kept by a mask (Compress of the flattened coordinates: a data-dependent length), reshaped to
    [count, 4] with the count summed from the same mask: no bound to declare (6 boxes at most)."""
    m = _model([h.make_node("Expand", ["mask", "four"], ["m4"]),
                h.make_node("Reshape", ["m4", "flat"], ["mflat"]),
                h.make_node("Reshape", ["boxes", "flat"], ["bflat"]),
                h.make_node("Compress", ["bflat", "mflat"], ["kept"], axis=0),
                h.make_node("Cast", ["mask"], ["mi"], to=TP.INT64),
                h.make_node("ReduceSum", ["mi"], ["cnt"], keepdims=0),
                h.make_node("Reshape", ["cnt", "one"], ["cnt1"]),
                h.make_node("Concat", ["cnt1", "four_"], ["shape"], axis=0),
                h.make_node("Reshape", ["kept", "shape"], ["y"], name="to_boxes")],
               [h.make_tensor_value_info("boxes", TP.FLOAT, [6, 4]), h.make_tensor_value_info("mask", TP.BOOL, [6, 1])],
               [("y", TP.FLOAT)], [_i64("four", [1, 4]), _i64("flat", [-1]), _i64("one", [1]), _i64("four_", [4])])
    rng = np.random.default_rng(2)
    runs = [{"boxes": rng.standard_normal((6, 4)).astype(np.float32), "mask": np.array(v, bool).reshape(6, 1)}
            for v in ([1, 0, 1, 0, 0, 1], [0] * 6, [1] * 6, [0, 0, 0, 0, 0, 1])]
    _check(m, runs)


def test_resize_by_scales_computed_from_the_data():
    """Linear upsampling of [1, 2, 3, 4] by s = max(d) on H and W (scales [1, 1, s, s]: the constant
    entries keep N and C static), H bounded at 12 and W at 16 (dims 'y' and 'y:3'). The kernel sums its
    taps in double and rounds once, onnxruntime in float: within 1e-6 of values of magnitude ~3. A scale
    whose output passes the bound fails with EP_ERR_RUN_BOUND, a zero scale with EP_ERR_RUN_SHAPE."""
    m = _model([h.make_node("ReduceMax", ["d"], ["top"], keepdims=1),
                h.make_node("Cast", ["top"], ["s"], to=TP.FLOAT),
                h.make_node("Concat", ["ones", "s", "s"], ["scales"], axis=0),
                h.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="linear")],
               [h.make_tensor_value_info("x", TP.FLOAT, [1, 2, 3, 4]), h.make_tensor_value_info("d", TP.INT64, [2])],
               [("y", TP.FLOAT)], [nh.from_array(np.array([1, 1], np.float32), "ones")])
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    s, ref = Session(edgeplan.compile(m, dims={"y": (1, 12), "y:3": (1, 16)})), ort.InferenceSession(m.SerializeToString())
    for d in ([1, 2], [4, 2], [3, 0], [1, 1]):
        feeds = {"x": x, "d": np.array(d, np.int64)}
        got, want = s.run(feeds)["y"], ref.run(None, feeds)[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert s.outputs[0].shape[:2] == (1, 2)
    with pytest.raises(EdgeplanError, match="up") as e:
        s.run({"x": x, "d": np.array([5, 0], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND
    with pytest.raises(EdgeplanError, match="up") as e:
        s.run({"x": x, "d": np.array([0, 0], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_SHAPE


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_resize_to_sizes_computed_from_the_data(policy):
    """Nearest resize of H and W to sizes fed at run time (a detector's letterbox target), opset 18 with
    axes [2, 3] and each keep_aspect_ratio_policy; sizes past the bounds fail the run."""
    g = h.make_graph([h.make_node("Resize", ["x", "", "", "hw"], ["y"], name="fit", mode="nearest", axes=[2, 3],
                                  keep_aspect_ratio_policy=policy, coordinate_transformation_mode="asymmetric")],
                     "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 2, 3, 4]),
                           h.make_tensor_value_info("hw", TP.INT64, [2])], [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    x = np.random.default_rng(1).standard_normal((1, 2, 3, 4)).astype(np.float32)
    s = _check(m, [{"x": x, "hw": np.array(v, np.int64)} for v in ([6, 8], [2, 3], [12, 16], [7, 5], [3, 4])],
               dims={"y:2": (1, 12), "y:3": (1, 16)})
    with pytest.raises(EdgeplanError, match="fit") as e:
        s.run({"x": x, "hw": np.array([40, 40], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND


def test_resize_by_run_time_scales_needs_its_bounds():
    m = _model([h.make_node("Resize", ["x", "", "sc"], ["y"], name="up")],
               [h.make_tensor_value_info("x", TP.FLOAT, [1, 1, 4, 4]), h.make_tensor_value_info("sc", TP.FLOAT, [4])],
               [("y", TP.FLOAT)])
    with pytest.raises(edgeplan.compiler.errors.CompileError, match=r"up.*dims=\{'y': \(0, MAX\)\}"):
        edgeplan.compile(m)


def _pad_to_chunks(chunk: int, begin: bool = False, conv: bool = False):
    """x [1, 2, T] (or a stride-2 convolution of it) padded on its time axis by (chunk - T % chunk) % chunk,
    as speech exporters write it (Shape, Gather, Mod, Sub, Mod, Concat, Pad), then cut into chunks
    [1, 2, -1, chunk] and summed per chunk."""
    src = "x"
    nodes, inits = [], [_i64("two", [2]), _i64("c", [chunk]), _i64("z", [0]), _i64("chunks", [1, 2, -1, chunk])]
    if conv:
        w = np.random.default_rng(4).standard_normal((2, 2, 3)).astype(np.float32)
        nodes.append(h.make_node("Conv", ["x", "w"], ["xc"], strides=[2], pads=[1, 1]))
        inits.append(nh.from_array(w, "w"))
        src = "xc"
    side = ["p", "z"] if begin else ["z", "p"]
    nodes += [h.make_node("Shape", [src], ["s"]), h.make_node("Gather", ["s", "two"], ["T"], axis=0),
              h.make_node("Mod", ["T", "c"], ["r"]), h.make_node("Sub", ["c", "r"], ["p0"]),
              h.make_node("Mod", ["p0", "c"], ["p"]),
              h.make_node("Concat", ["z", "z", side[0], "z", "z", side[1]], ["pads"], axis=0),
              h.make_node("Pad", [src, "pads"], ["xp"], name="pad_to_chunks"),
              h.make_node("Reshape", ["xp", "chunks"], ["xr"]),
              h.make_node("ReduceSum", ["xr", "last"], ["y"], keepdims=0)]
    inits.append(_i64("last", [3]))
    return _model(nodes, [h.make_tensor_value_info("x", TP.FLOAT, [1, 2, "T"])], [("y", TP.FLOAT)], inits)


@pytest.mark.parametrize("chunk, begin, conv", [(16, False, False), (16, True, False), (4, False, True),
                                                (10, False, False)])
def test_pad_to_a_multiple_of_a_chunk_follows_the_length(chunk, begin, conv):
    """One plan for T in 1..256 (256 itself a multiple, so the bound pads nothing): the pad runs at the
    run's amount (PAD to a multiple, plan 1.8), and the chunk count after it at every length, the short
    ones included. Sums of at most `chunk` values in float32 in both, in the same order: within 1e-5."""
    m = _pad_to_chunks(chunk, begin, conv)
    plan = edgeplan.compile(m, dims={"T": (1, 256)})
    # 1.8 for PAD to a multiple; the strided 2-channel Conv runs DIRECT (1.10)
    assert "pad" in _ops(plan) and plan.inspect().startswith("edgeplan plan 1.10" if conv else "edgeplan plan 1.8")
    s, ref = Session(plan), ort.InferenceSession(m.SerializeToString())
    for T in (1, 2, 9, 15, 16, 17, 40, 100, 128, 200, 255, 256):
        x = np.random.default_rng(T).standard_normal((1, 2, T)).astype(np.float32)
        got, want = s.run({"x": x})["y"], ref.run(None, {"x": x})[0]
        assert got.shape == want.shape, (T, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="T"):   # past the bound: refused before the run
        s.run({"x": np.zeros((1, 2, 257), np.float32)})


def test_pad_that_follows_the_length_otherwise_is_refused():
    """pads = T // 2 on the time axis is no pad to a multiple: the compile names the node."""
    m = _model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "one"], ["T"], axis=0),
                h.make_node("Div", ["T", "two"], ["p"]),
                h.make_node("Concat", ["z", "z", "z", "p"], ["pads"], axis=0),
                h.make_node("Pad", ["x", "pads"], ["y"], name="half_again")],
               [h.make_tensor_value_info("x", TP.FLOAT, [2, "T"])], [("y", TP.FLOAT)],
               [_i64("one", [1]), _i64("two", [2]), _i64("z", [0])])
    with pytest.raises(edgeplan.compiler.errors.CompileError, match="half_again"):
        edgeplan.compile(m, dims={"T": (1, 300)})


def test_a_reshape_view_that_does_not_start_at_its_input_is_refused_at_open():
    """RESHAPE_DYN moves no data, so open checks that its output starts at its input's first byte: a plan
    whose view record points elsewhere (bytes edited here, CRC skipped) fails with EP_ERR_PLAN_OP."""
    import struct
    from edgeplan.plan import read_plan
    m = _model([h.make_node("ReduceSum", ["d"], ["n"], keepdims=1),
                h.make_node("Concat", ["n", "minus1"], ["shape"], axis=0),
                h.make_node("Reshape", ["x", "shape"], ["r"], name="rows"),
                h.make_node("Mul", ["r", "two"], ["y"])],
               [h.make_tensor_value_info("x", TP.FLOAT, [12]), h.make_tensor_value_info("d", TP.INT64, [2])],
               [("y", TP.FLOAT)], [_i64("minus1", [-1]), nh.from_array(np.array(2, np.float32), "two")])
    data = bytearray(edgeplan.compile(m, dims={"r": (1, 12)}).to_bytes())
    info = read_plan(bytes(data))
    sec = next(s for s in info["sections"] if s["kind"] == "tensors")
    k = next(i for i, t in enumerate(info["tensors"]) if t["name"] == "r")
    at = sec["offset"] + k * sec["record_size"] + 8          # ep_tensor_rec.offset
    struct.pack_into("<Q", data, at, info["tensors"][k]["offset"] + 64)
    with pytest.raises(EdgeplanError, match="not a view of input 0") as e:
        Session(bytes(data), check_crc=False)
    assert e.value.status == K.EP_ERR_PLAN_OP


def test_upsample_by_a_run_time_factor():
    """Upsample (opset 9) by [1, 1, s, s] with s fed at run time, nearest: equal to onnxruntime."""
    g = h.make_graph([h.make_node("Concat", ["ones", "s", "s"], ["sc"], axis=0),
                      h.make_node("Upsample", ["x", "sc"], ["y"], name="up", mode="nearest")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 2, 3, 4]), h.make_tensor_value_info("s", TP.FLOAT, [1])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(np.ones(2, np.float32), "ones")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 9)])
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    _check(m, [{"x": x, "s": np.array([v], np.float32)} for v in (1, 2, 3, 4, 1.5)], dims={"y": (1, 12), "y:3": (1, 16)})

"""The bilinear sampling ops (plan 1.3: GRIDSAMPLE, ROIALIGN, DEFORMCONV) against onnxruntime on seeded random
shapes and every attribute combination, their run-time failures, the compiler's refusals, and plans whose
params or operands are wrong (refused at open with EP_ERR_PLAN_*).

Tolerance: rel_err (max |got - ref| / max |ref|) <= 1e-4, as test_ops_ort.py. Both runtimes compute in f32 with
the same formulas; they differ only in the order of a few additions (a bilinear sample has 4 to 16 terms, a
deformable convolution sums C/group * kH * kW products), a few units in the last place of the output scale.
Grid coordinates are drawn in [-1.3, 1.3] so that every padding mode is exercised; nearest rounding ties are
then measure-zero events."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import edgeplan
from conftest import rel_err
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K
from edgeplan.compiler.errors import CompileError

SEEDS = range(3)
F32 = np.dtype(np.float32)


def model(op, feeds, consts, order, attrs=None, opset=22):
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node(op, list(order), ["y"], name=f"{op.lower()}_node", **(attrs or {}))
    g = helper.make_graph([node], "g", vi, [out], [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def check(m, feeds, tol=1e-4, reference="onnxruntime"):
    if reference == "onnx":
        from onnx.reference import ReferenceEvaluator
        ref = ReferenceEvaluator(m).run(None, feeds)[0]
    else:
        ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = Session(edgeplan.compile(m)).run(feeds)["y"]
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert rel_err(got, ref) <= tol, rel_err(got, ref)
    return got


def f32(rng, *shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def run_fails(m, feeds, status, match):
    s = Session(edgeplan.compile(m))
    with pytest.raises(EdgeplanError, match=match) as e:
        s.run(feeds)
    assert e.value.status == status
    assert m.graph.node[0].name in str(e.value)


def refused(m, *words):
    with pytest.raises(CompileError) as e:
        edgeplan.compile(m)
    text = str(e.value)
    assert m.graph.node[0].name in text, text
    for w in words:
        assert w in text, text


# ---------------------------------------------------------------- GridSample

@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("seed", SEEDS)
def test_gridsample_2d(seed, mode, padding, align):
    """2-D: random N, C, H, W (extents 1 included) and output size; the grid as a run-time input; opset 20 names
    (linear, cubic) and opset 16 ones (bilinear, bicubic). Cubic with border padding is checked against the ONNX
    reference instead: it clamps a coordinate outside [lo, hi] to [0, L-1] before taking the taps (so the edge
    pixel comes back exactly), where onnxruntime keeps the coordinate and only clamps the tap indices (PyTorch's
    behaviour); the ONNX reference is the spec edgeplan follows."""
    rng = np.random.default_rng(seed)
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    H, W = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    OH, OW = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    x, grid = f32(rng, N, C, H, W), f32(rng, N, OH, OW, 2, lo=-1.3, hi=1.3)
    opset = [16, 20, 22][seed]
    name = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode) if opset < 20 else mode
    attrs = dict(mode=name, padding_mode=padding, align_corners=align)
    m = model("GridSample", {"x": x, "g": grid}, {}, ["x", "g"], attrs, opset)
    if (mode, padding) == ("cubic", "border"):   # the reference evaluator knows the opset 20 names only
        ref = model("GridSample", {"x": x, "g": grid}, {}, ["x", "g"], {**attrs, "mode": mode}, 20)
        got = Session(edgeplan.compile(m)).run({"x": x, "g": grid})["y"]
        np.testing.assert_array_equal(got, check(ref, {"x": x, "g": grid}, reference="onnx"))
    else:
        check(m, {"x": x, "g": grid})


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("seed", SEEDS)
def test_gridsample_3d(seed, mode, padding, align):
    """3-D (volumetric, opset 20+): random N, C, D, H, W and output size."""
    rng = np.random.default_rng(seed + 10)
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    D, H, W = (int(v) for v in rng.integers(1, 5, size=3))
    O = [int(v) for v in rng.integers(1, 4, size=3)]
    x, grid = f32(rng, N, C, D, H, W), f32(rng, N, *O, 3, lo=-1.3, hi=1.3)
    attrs = dict(mode=mode, padding_mode=padding, align_corners=align)
    check(model("GridSample", {"x": x, "g": grid}, {}, ["x", "g"], attrs, 20 + 2 * (seed % 2)), {"x": x, "g": grid})


def test_gridsample_far_and_nan_coordinates_read_the_padding():
    """Grid values far outside [-1, 1] (and NaN) read the padding, never memory outside X: zeros gives 0, border
    the edge pixels; NaN gives NaN (linear) or zero (nearest, zeros)."""
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    grid = np.array([[[[1e30, -1e30], [-3e9, 7e9], [np.inf, 0.0], [np.nan, np.nan]]]], np.float32)
    for mode in ("linear", "nearest", "cubic"):
        for padding in ("zeros", "border", "reflection"):
            m = model("GridSample", {"x": x, "g": grid}, {}, ["x", "g"], dict(mode=mode, padding_mode=padding))
            y = Session(edgeplan.compile(m)).run({"x": x, "g": grid})["y"]
            assert y.shape == (1, 1, 1, 4)
    m = model("GridSample", {"x": x, "g": grid[:, :, :2]}, {}, ["x", "g"], dict(mode="nearest", padding_mode="border"))
    y = Session(edgeplan.compile(m)).run({"x": x, "g": grid[:, :, :2]})["y"]
    np.testing.assert_array_equal(y.reshape(-1), [3.0, 8.0])   # (x, y) = (+big, -big): top right; (-big, +big)


def test_gridsample_refusals():
    x5 = np.zeros((1, 1, 2, 2, 2), np.float32)
    refused(model("GridSample", {"x": x5, "g": np.zeros((1, 2, 2, 2, 3), np.float32)}, {}, ["x", "g"],
                  dict(mode="cubic")), "cubic", "2-D")
    x3 = np.zeros((1, 1, 4), np.float32)
    refused(model("GridSample", {"x": x3, "g": np.zeros((1, 4, 1), np.float32)}, {}, ["x", "g"]), "rank-3")
    x4 = np.zeros((1, 1, 4, 4), np.float32)
    refused(model("GridSample", {"x": x4, "g": np.zeros((1, 4, 4, 2), np.float32)}, {}, ["x", "g"],
                  dict(padding_mode="wrap")), "padding_mode 'wrap'")


# ---------------------------------------------------------------- RoiAlign

def _rois(rng, R, H, W, scale):
    """ROIs in input coordinates (before spatial_scale): most inside the map, some partly or wholly outside,
    some malformed (x2 < x1)."""
    x1, y1 = rng.uniform(-2, W / scale, R), rng.uniform(-2, H / scale, R)
    w, h = rng.uniform(-1, W / scale, R), rng.uniform(-1, H / scale, R)
    return np.stack([x1, y1, x1 + w, y1 + h], axis=1).astype(np.float32)


@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel", None])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("seed", SEEDS)
def test_roialign(seed, mode, ctm):
    """Random feature maps, 1-6 ROIs over a batch of 1-3, output sizes, sampling_ratio 0 (adaptive) to 3 and
    spatial_scale; batch indices int64 at run time. ctm None: opset 10, which has no
    coordinate_transformation_mode (output_half_pixel)."""
    rng = np.random.default_rng(seed)
    N, C, H, W = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(3, 12)), int(rng.integers(3, 12))
    R = int(rng.integers(1, 7))
    scale = float(rng.choice([1.0, 0.5, 0.25, 2.0]))
    x, rois = f32(rng, N, C, H, W), _rois(rng, R, H, W, scale)
    bi = rng.integers(0, N, R).astype(np.int64)
    attrs = dict(mode=mode, output_height=int(rng.integers(1, 5)), output_width=int(rng.integers(1, 5)),
                 sampling_ratio=int(rng.integers(0, 4)), spatial_scale=scale)
    if ctm is not None:
        attrs["coordinate_transformation_mode"] = ctm
    feeds = {"x": x, "rois": rois, "bi": bi}
    check(model("RoiAlign", feeds, {}, ["x", "rois", "bi"], attrs, 10 if ctm is None else 16), feeds)


def test_roialign_batch_index_out_of_range_fails_the_run():
    x = np.ones((2, 1, 4, 4), np.float32)
    rois = np.array([[0, 0, 2, 2], [1, 1, 3, 3]], np.float32)
    for bad in (2, -1):
        bi = np.array([0, bad], np.int64)
        feeds = {"x": x, "rois": rois, "bi": bi}
        run_fails(model("RoiAlign", feeds, {}, ["x", "rois", "bi"]), feeds, K.EP_ERR_RUN_INDEX, "index")
    refused(model("RoiAlign", {"x": x, "rois": rois}, {"bi": np.array([0, 5], np.int64)}, ["x", "rois", "bi"]),
            "batch_indices", "[0, 2)")


def test_roialign_huge_or_nan_roi_fails_the_run():
    """An adaptive sampling grid past EP_ROIALIGN_MAX_GRID samples per bin side (or NaN) would take hours: the
    run fails with EP_ERR_RUN_BOUND instead. A fixed sampling_ratio bounds the work: a NaN ROI reads zeros."""
    x = np.ones((1, 1, 4, 4), np.float32)
    bi = np.zeros(1, np.int64)
    for roi in ([0, 0, 1e9, 1e9], [0, 0, np.nan, 2]):
        feeds = {"x": x, "rois": np.array([roi], np.float32), "bi": bi}
        run_fails(model("RoiAlign", feeds, {}, ["x", "rois", "bi"]), feeds, K.EP_ERR_RUN_BOUND, "bound")
    feeds = {"x": x, "rois": np.array([[0, 0, np.nan, 2]], np.float32), "bi": bi}
    y = Session(edgeplan.compile(model("RoiAlign", feeds, {}, ["x", "rois", "bi"], dict(sampling_ratio=2)))).run(feeds)
    assert y["y"].shape == (1, 1, 1, 1)


def test_roialign_refusals():
    x, rois, bi = np.zeros((1, 1, 4, 4), np.float32), np.zeros((2, 4), np.float32), np.zeros(2, np.int64)
    feeds = {"x": x, "rois": rois, "bi": bi}
    refused(model("RoiAlign", feeds, {}, ["x", "rois", "bi"], dict(mode="median")), "mode 'median'")
    refused(model("RoiAlign", feeds, {}, ["x", "rois", "bi"], dict(sampling_ratio=-1)), "sampling_ratio")
    bad = {"x": x, "rois": np.zeros((2, 5), np.float32), "bi": bi}
    refused(model("RoiAlign", bad, {}, ["x", "rois", "bi"]), "rois", "[num_rois, 4]")


# ---------------------------------------------------------------- DeformConv

@pytest.mark.parametrize("with_mask", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_deformconv(seed, with_bias, with_mask):
    """Random group / offset_group, kernel, strides, pads and dilations; offsets of a few pixels (so taps fall
    outside the map too); weights constant or at run time."""
    rng = np.random.default_rng(seed)
    g, og = int(rng.choice([1, 2])), int(rng.choice([1, 2]))
    C = g * og * int(rng.integers(1, 3))
    M = g * int(rng.integers(1, 3))
    k = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    s, d = [int(v) for v in rng.integers(1, 3, size=2)], [int(v) for v in rng.integers(1, 3, size=2)]
    p = [int(v) for v in rng.integers(0, 2, size=4)]
    N, H, W = int(rng.integers(1, 3)), int(rng.integers(5, 10)), int(rng.integers(5, 10))
    oh = (H + p[0] + p[2] - (k[0] - 1) * d[0] - 1) // s[0] + 1
    ow = (W + p[1] + p[3] - (k[1] - 1) * d[1] - 1) // s[1] + 1
    x, w = f32(rng, N, C, H, W), f32(rng, M, C // g, *k)
    off = 2.0 * f32(rng, N, og * k[0] * k[1] * 2, oh, ow)
    feeds, consts, order = {"x": x, "off": off}, {}, ["x", "w", "off"]
    (feeds if seed % 2 else consts)["w"] = w
    order += ["b" if with_bias else "", "mask" if with_mask else ""]
    if with_bias:
        consts["b"] = f32(rng, M)
    if with_mask:
        feeds["mask"] = f32(rng, N, og * k[0] * k[1], oh, ow, lo=0.0, hi=1.0)
    while order[-1] == "":
        order.pop()
    attrs = dict(group=g, offset_group=og, kernel_shape=k, strides=s, dilations=d, pads=p)
    check(model("DeformConv", feeds, consts, order, attrs, 19 + 3 * (seed % 2)), feeds)


def test_deformconv_far_and_nan_offsets_sample_zero():
    x = f32(np.random.default_rng(0), 1, 1, 4, 4)
    w = np.ones((1, 1, 1, 1), np.float32)
    off = np.zeros((1, 2, 4, 4), np.float32)
    off[0, 0, 0, :] = [1e30, -1e30, np.nan, 3e9]
    feeds = {"x": x, "off": off}
    y = Session(edgeplan.compile(model("DeformConv", feeds, {"w": w}, ["x", "w", "off"]))).run(feeds)["y"]
    np.testing.assert_array_equal(y[0, 0, 0], 0.0)
    np.testing.assert_array_equal(y[0, 0, 1:], x[0, 0, 1:])


def test_deformconv_refusals():
    x, w = np.zeros((1, 2, 5, 5), np.float32), np.zeros((2, 2, 3, 3), np.float32)
    refused(model("DeformConv", {"x": x, "off": np.zeros((1, 18, 2, 2), np.float32)}, {"w": w}, ["x", "w", "off"]),
            "offset [1, 18, 2, 2] must be [1, 18, 3, 3]")
    refused(model("DeformConv", {"x": x, "off": np.zeros((1, 18, 3, 3), np.float32)}, {"w": w}, ["x", "w", "off"],
                  dict(offset_group=3)), "offset_group=3")
    x1, w1 = np.zeros((1, 2, 5), np.float32), np.zeros((2, 2, 3), np.float32)
    refused(model("DeformConv", {"x": x1, "off": np.zeros((1, 6, 3), np.float32)}, {"w": w1}, ["x", "w", "off"]),
            "only 2-D")


# ---------------------------------------------------------------- plans with wrong params or operands

def _plan(kind, ins, out_shape, params, scratch=0):
    """A one-op plan written without the compiler's checks: inputs (name, shape, dtype) -> y."""
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    ts = [Tensor(nm, np.dtype(dt), tuple(sh), is_input=True) for nm, sh, dt in ins]
    y = Tensor("y", F32, tuple(out_shape), is_output=True)
    op = Op(kind, ts, [y], params, name=f"{kind}_op")
    op.scratch = scratch
    g = Graph(ts + [y], [op], ts, [y])
    return write_plan(g, plan_memory(g))


GS = dict(mode=0, padding_mode=0, align_corners=0)
GS_IN = [("x", (1, 2, 4, 4), F32), ("g", (1, 3, 3, 2), F32)]
RA = dict(mode=0, half_pixel=1, output_height=2, output_width=2, sampling_ratio=0, spatial_scale=1.0)
RA_IN = [("x", (1, 2, 4, 4), F32), ("r", (3, 4), F32), ("b", (3,), np.int64)]
DC = dict(kernel=[3, 3], stride=[1, 1], dilation=[1, 1], pads=[0, 0, 0, 0], groups=1, offset_groups=1)
DC_IN = [("x", (1, 2, 5, 5), F32), ("w", (2, 2, 3, 3), F32), ("o", (1, 18, 3, 3), F32)]
DC_SCRATCH = 4 * 2 * 9 * 9


@pytest.mark.parametrize("kind, ins, out, params, scratch, status", [
    ("gridsample", GS_IN, (1, 2, 3, 3), {**GS, "mode": 3}, 0, K.EP_ERR_PLAN_PARAMS),
    ("gridsample", GS_IN, (1, 2, 3, 3), {**GS, "padding_mode": -1}, 0, K.EP_ERR_PLAN_PARAMS),
    ("gridsample", GS_IN, (1, 2, 3, 3), {**GS, "align_corners": 2}, 0, K.EP_ERR_PLAN_PARAMS),
    ("gridsample", [("x", (1, 2, 2, 2, 2), F32), ("g", (1, 1, 1, 1, 3), F32)], (1, 2, 1, 1, 1), {**GS, "mode": 2}, 0,
     K.EP_ERR_PLAN_PARAMS),
    ("gridsample", [GS_IN[0], ("g", (1, 3, 3, 3), F32)], (1, 2, 3, 3), GS, 0, K.EP_ERR_PLAN_SHAPE),
    ("gridsample", [GS_IN[0], ("g", (2, 3, 3, 2), F32)], (1, 2, 3, 3), GS, 0, K.EP_ERR_PLAN_SHAPE),
    ("gridsample", [("x", (1, 2, 0, 4), F32), GS_IN[1]], (1, 2, 3, 3), GS, 0, K.EP_ERR_PLAN_SHAPE),
    ("gridsample", [GS_IN[0], ("g", (1, 3, 3, 2), np.int32)], (1, 2, 3, 3), GS, 0, K.EP_ERR_PLAN_TENSOR),
    ("gridsample", GS_IN, (1, 2, 3, 4), GS, 0, K.EP_ERR_PLAN_SHAPE),
    ("roialign", RA_IN, (3, 2, 2, 2), {**RA, "mode": 2}, 0, K.EP_ERR_PLAN_PARAMS),
    ("roialign", RA_IN, (3, 2, 2, 2), {**RA, "output_height": 0}, 0, K.EP_ERR_PLAN_PARAMS),
    ("roialign", RA_IN, (3, 2, 2, 2), {**RA, "sampling_ratio": K.EP_ROIALIGN_MAX_GRID + 1}, 0, K.EP_ERR_PLAN_PARAMS),
    ("roialign", RA_IN, (3, 2, 2, 2), {**RA, "spatial_scale": float("inf")}, 0, K.EP_ERR_PLAN_PARAMS),
    ("roialign", [RA_IN[0], RA_IN[1], ("b", (3,), F32)], (3, 2, 2, 2), RA, 0, K.EP_ERR_PLAN_TENSOR),
    ("roialign", [RA_IN[0], RA_IN[1], ("b", (2,), np.int64)], (3, 2, 2, 2), RA, 0, K.EP_ERR_PLAN_SHAPE),
    ("roialign", [RA_IN[0], ("r", (3, 5), F32), RA_IN[2]], (3, 2, 2, 2), RA, 0, K.EP_ERR_PLAN_SHAPE),
    ("deformconv", DC_IN, (1, 2, 3, 3), {**DC, "groups": 0}, DC_SCRATCH, K.EP_ERR_PLAN_PARAMS),
    ("deformconv", DC_IN, (1, 2, 3, 3), {**DC, "stride": [0, 1]}, DC_SCRATCH, K.EP_ERR_PLAN_PARAMS),
    ("deformconv", DC_IN, (1, 2, 3, 3), {**DC, "pads": [-1, 0, 0, 0]}, DC_SCRATCH, K.EP_ERR_PLAN_PARAMS),
    ("deformconv", DC_IN, (1, 2, 3, 3), {**DC, "offset_groups": 3}, DC_SCRATCH, K.EP_ERR_PLAN_SHAPE),
    ("deformconv", DC_IN, (1, 2, 3, 3), {**DC, "kernel": [2, 3]}, DC_SCRATCH, K.EP_ERR_PLAN_SHAPE),
    ("deformconv", [DC_IN[0], DC_IN[1], ("o", (1, 18, 3, 4), F32)], (1, 2, 3, 3), DC, DC_SCRATCH, K.EP_ERR_PLAN_SHAPE),
    ("deformconv", DC_IN + [("b", (3,), F32)], (1, 2, 3, 3), DC, DC_SCRATCH, K.EP_ERR_PLAN_SHAPE),
    ("deformconv", DC_IN + [("b", (2,), F32), ("m", (1, 9, 3, 2), F32)], (1, 2, 3, 3), DC, DC_SCRATCH,
     K.EP_ERR_PLAN_SHAPE),
    ("deformconv", DC_IN, (1, 2, 3, 3), {**DC, "kernel": [1 << 21, 3]}, DC_SCRATCH, K.EP_ERR_PLAN_PARAMS),
    ("deformconv", [("x", (1, 2, 2, 2), F32), DC_IN[1], ("o", (1, 18, 1, 1), F32)], (1, 2, 1, 1), DC, 0,
     K.EP_ERR_PLAN_SHAPE),
    ("deformconv", DC_IN, (1, 2, 3, 3), DC, 64, K.EP_ERR_PLAN_OP),
])
def test_wrong_plans_are_refused_at_open(kind, ins, out, params, scratch, status):
    with pytest.raises(EdgeplanError) as e:
        Session(_plan(kind, ins, out, params, scratch))
    assert e.value.status == status, e.value


def test_a_well_formed_hand_written_plan_opens():
    """The baseline of the refusals above: the same plans with correct params open and run."""
    for kind, ins, out, params, scratch in (("gridsample", GS_IN, (1, 2, 3, 3), GS, 0),
                                           ("roialign", RA_IN, (3, 2, 2, 2), RA, 0),
                                           ("deformconv", DC_IN, (1, 2, 3, 3), DC, DC_SCRATCH)):
        s = Session(_plan(kind, ins, out, params, scratch))
        feeds = {nm: np.zeros(sh, dt) for nm, sh, dt in ins}
        assert s.run(feeds)["y"].shape == out


def test_plans_using_the_sample_ops_are_version_1_3():
    x = np.zeros((1, 1, 4, 4), np.float32)
    plan = edgeplan.compile(model("GridSample", {"x": x, "g": np.zeros((1, 2, 2, 2), np.float32)}, {}, ["x", "g"]))
    data = plan.to_bytes()
    assert int.from_bytes(data[4:6], "little") == 1 and int.from_bytes(data[6:8], "little") == 3

"""Resize's tf_crop_and_resize (roi, extrapolation_value) and antialias filters (the RESIZE_EXT op, plan 1.3)
against onnxruntime on seeded random shapes, plus what the runtime refuses in a hand-written plan.

Tolerance: rtol 1e-5 on the output's scale. The ONNX reference evaluates the cubic filter with
cubic_coeff_a as numpy float32, so its cubic weights carry float32 rounding (about 1e-6 off the
double-precision weights edgeplan and onnxruntime use); both agree with edgeplan within the tolerance."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import edgeplan
from conftest import rel_err
from edgeplan._cdef import K
from edgeplan.plan import read_plan
from edgeplan.runtime import EdgeplanError, Session

OPSET = 19
TOL = 1e-5
F32 = np.float32


def build(x_shape, consts, order, attrs):
    node = helper.make_node("Resize", list(order), ["y"], name="resize_node", **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=9)


def run_edgeplan(model, x):
    plan = edgeplan.compile(model)
    return edgeplan.Session(plan).run({"x": x})["y"], plan


def run_ort(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def run_onnx_reference(model, x):
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


def check(got, ref):
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert rel_err(got, ref) <= TOL, rel_err(got, ref)


def plan_ops(plan):
    return [o["op"] for o in read_plan(plan.data)["ops"]]


# ---------------------------------------------------------------- tf_crop_and_resize

@pytest.mark.parametrize("seed", range(18))
def test_tf_crop_and_resize(seed):
    rng = np.random.default_rng(100 + seed)
    mode = ("linear", "cubic", "nearest")[seed % 3]
    x = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 4)),
                             int(rng.integers(3, 10)), int(rng.integers(3, 10)))).astype(F32)
    # even seeds: a crop inside [0, 1]; odd seeds: one that leaves it (those samples extrapolate)
    if seed % 2 == 0:
        start = rng.uniform(0.0, 0.5, 2)
        end = start + rng.uniform(0.1, 1.0 - start)
    else:
        start = rng.uniform(-0.4, 0.6, 2)
        end = start + rng.uniform(0.2, 1.0, 2)
    attrs = dict(mode=mode, coordinate_transformation_mode="tf_crop_and_resize")
    if seed % 4 != 0:
        attrs["extrapolation_value"] = float(rng.uniform(-4, 4))
    if mode == "cubic" and seed % 5 == 1:
        attrs.update(exclude_outside=1, cubic_coeff_a=-0.5)
    axes = (None, [2, 3], [3, 2])[(seed // 3) % 3]
    if axes is None:
        roi = np.array([0, 0, *start, 1, 1, *end], F32)
        dims = list(x.shape)
    else:
        attrs["axes"] = axes
        k = [2, 3].index(axes[0])
        roi = np.array([start[k], start[1 - k], end[k], end[1 - k]], F32)
        dims = [x.shape[a] for a in axes]
    out = [int(rng.integers(1, 12)) for _ in dims]
    if axes is None:
        out[:2] = dims[:2]
    if seed % 3 == 1:
        # scales whose product with the extent is an integer: length_resized is the same number for
        # onnxruntime (the integer output extent) and the ONNX reference (scale * extent)
        scales = rng.choice([0.5, 1.5, 2.0, 2.5], len(dims)).astype(F32)
        if axes is None:
            scales[:2] = 1
        x = np.repeat(x, 2, axis=3)[:, :, :, :2 * x.shape[3]]
        x = np.repeat(x, 2, axis=2)   # even extents
        dims = list(x.shape) if axes is None else [x.shape[a] for a in axes]
        model = build(x.shape, {"r": roi, "s": scales}, ["x", "r", "s"], attrs)
    else:
        model = build(x.shape, {"r": roi, "s": np.array(out, np.int64)}, ["x", "r", "", "s"], attrs)
    got, plan = run_edgeplan(model, x)
    assert plan_ops(plan) == ["resize_ext"]
    check(got, run_onnx_reference(model, x))
    crop_dims = [2, 3] if axes is None else axes
    if all(got.shape[a] != x.shape[a] for a in crop_dims):
        # onnxruntime leaves an axis whose extent the resize keeps as it is, ignoring its crop window (the
        # reference crops it); elsewhere the two agree
        check(got, run_ort(model, x))


def test_tf_crop_and_resize_extrapolates_outside_the_input():
    x = np.arange(16, dtype=F32).reshape(1, 1, 4, 4)
    roi = np.array([0, 0, -0.5, 0.25, 1, 1, 0.5, 1.5], F32)
    model = build(x.shape, {"r": roi, "s": np.array([1, 1, 3, 5], np.int64)}, ["x", "r", "", "s"],
                  dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                       extrapolation_value=-7.5))
    got, _ = run_edgeplan(model, x)
    ref = run_onnx_reference(model, x)
    check(got, ref)
    assert (got == -7.5).sum() == (ref == -7.5).sum() > 0
    check(got, run_ort(model, x))


# ---------------------------------------------------------------- antialias

@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scale", [0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 0.8])
def test_antialias_downsample_scales(mode, scale):
    rng = np.random.default_rng(int(scale * 100) + (mode == "cubic"))
    # extents that are multiples of 10: scale * extent is an integer, so both references agree on the
    # output extent and on length_resized
    x = rng.standard_normal((1, int(rng.integers(1, 3)), 10 * int(rng.integers(1, 3)), 20)).astype(F32)
    attrs = dict(mode=mode, antialias=1)
    if rng.integers(0, 2):
        attrs["exclude_outside"] = 1
    if mode == "cubic" and rng.integers(0, 2):
        attrs["cubic_coeff_a"] = -0.5
    scales = np.array([1, 1, scale, scale], F32)
    model = build(x.shape, {"r": np.array([], F32), "s": scales}, ["x", "r", "s"], attrs)
    got, plan = run_edgeplan(model, x)
    assert plan_ops(plan) == ["resize_ext"]
    check(got, run_ort(model, x))
    check(got, run_onnx_reference(model, x))


@pytest.mark.parametrize("seed", range(10))
def test_antialias_downsample_sizes(seed):
    rng = np.random.default_rng(200 + seed)
    mode = ("linear", "cubic")[seed % 2]
    x = rng.standard_normal((1, int(rng.integers(1, 3)), int(rng.integers(4, 16)), int(rng.integers(4, 16)))
                            ).astype(F32)
    attrs = dict(mode=mode, antialias=1,
                 coordinate_transformation_mode=("half_pixel", "pytorch_half_pixel", "asymmetric")[seed % 3])
    if seed % 4 == 3:
        attrs["exclude_outside"] = 1
    # one axis shrinks, the other may grow (the filter widens only on the first)
    sizes = [max(1, int(x.shape[2] * rng.uniform(0.15, 0.9))), int(x.shape[3] * rng.uniform(0.3, 1.6)) or 1]
    if seed >= 6:
        attrs["axes"] = [3, 2]
        sizes = sizes[::-1]
        model = build(x.shape, {"s": np.array(sizes, np.int64)}, ["x", "", "", "s"], attrs)
    else:
        model = build(x.shape, {"s": np.array([*x.shape[:2], *sizes], np.int64)}, ["x", "", "", "s"], attrs)
    got, plan = run_edgeplan(model, x)
    assert plan_ops(plan) == ["resize_ext"]
    check(got, run_ort(model, x))
    check(got, run_onnx_reference(model, x))


@pytest.mark.parametrize("scale", [0.7, 0.9])
def test_output_extent_is_floor_of_scale_times_extent_in_double(scale):
    """float32(0.7) * 10 is 6.9999999 in double: the extent is 6, as the ONNX reference and ONNX shape
    inference give (onnxruntime multiplies in float32, where it rounds to 7)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 1, 10, 20)).astype(F32)
    model = build(x.shape, {"r": np.array([], F32), "s": np.array([1, 1, scale, scale], F32)}, ["x", "r", "s"],
                  dict(mode="linear", antialias=1))
    got, _ = run_edgeplan(model, x)
    assert got.shape == (1, 1, int(float(F32(scale)) * 10), int(float(F32(scale)) * 20))
    check(got, run_onnx_reference(model, x))


def test_antialias_without_downsampling_is_plain_resize():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 5, 6)).astype(F32)
    model = build(x.shape, {"r": np.array([], F32), "s": np.array([1, 1, 2.0, 1.5], F32)}, ["x", "r", "s"],
                  dict(mode="cubic", antialias=1))
    got, plan = run_edgeplan(model, x)
    assert plan_ops(plan) == ["resize"]   # the same plan as antialias=0: a 1.0 reader opens it
    assert read_plan(plan.data)["header"]["version"] in ("1.0", "1.1", "1.2")
    check(got, run_ort(model, x))


def test_resize_ext_plans_are_format_1_3():
    x = np.zeros((1, 1, 8, 8), F32)
    model = build(x.shape, {"r": np.array([], F32), "s": np.array([1, 1, 0.5, 0.5], F32)}, ["x", "r", "s"],
                  dict(mode="linear", antialias=1))
    _, plan = run_edgeplan(model, x)
    assert read_plan(plan.data)["header"]["version"] == "1.3"
    assert read_plan(plan.data)["ops"][0]["scratch"][1] >= 16 * (1 + 1 + 8 + 8)


def test_antialias_nearest_is_refused():
    model = build((1, 1, 4, 4), {"r": np.array([], F32), "s": np.array([1, 1, 0.5, 0.5], F32)}, ["x", "r", "s"],
                  dict(mode="nearest", antialias=1))
    with pytest.raises(Exception, match="antialias"):
        edgeplan.compile(model)


# ---------------------------------------------------------------- hostile plans

def _plan(params, x_shape=(1, 1, 4, 4), y_shape=(1, 1, 2, 2), scratch=0):
    """A one-op RESIZE_EXT plan written without the compiler's checks."""
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    x = Tensor("x", np.dtype(F32), tuple(x_shape), is_input=True)
    y = Tensor("y", np.dtype(F32), tuple(y_shape), is_output=True)
    op = Op("resize_ext", [x], [y], params, name="resize_op")
    op.scratch = scratch
    g = Graph([x, y], [op], [x], [y])
    return write_plan(g, plan_memory(g))


BASE = dict(mode=K.EP_RESIZE_LINEAR, coord_mode=K.EP_COORD_TF_CROP_AND_RESIZE, nearest_mode=0, exclude_outside=0,
            cubic_coeff_a=-0.75, extrapolation_value=0.0, scales=[1, 1, 0.5, 0.5] + [1] * 4,
            roi_start=[0.0] * 8, roi_end=[1.0] * 8, antialias=0)


def test_a_hand_written_resize_ext_plan_runs():
    x = np.arange(16, dtype=F32).reshape(1, 1, 4, 4)
    for ev in (float("nan"), float("inf"), -3.0):
        p = {**BASE, "roi_start": [0, 0, 0.5, -1.0] + [0] * 4, "extrapolation_value": ev}
        y = Session(_plan(p)).run({"x": x})["y"]
        assert np.isnan(y[..., 0]).all() if ev != ev else (y[..., 0] == ev).all()
    y = Session(_plan({**BASE, "coord_mode": K.EP_COORD_HALF_PIXEL, "antialias": 1}, scratch=16 * 10)).run({"x": x})
    assert np.isfinite(y["y"]).all()


@pytest.mark.parametrize("change, scratch, status", [
    ({"roi_start": [0, 0, float("nan"), 0] + [0] * 4}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"roi_end": [1, 1, 1, float("inf")] + [1] * 4}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"roi_end": [1] * 7 + [float("-inf")]}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"antialias": 2}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"antialias": -1}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"antialias": 1, "mode": K.EP_RESIZE_NEAREST}, 160, K.EP_ERR_PLAN_PARAMS),
    ({"antialias": 1, "scales": [1, 1, 0.01, 0.5] + [1] * 4}, 160, K.EP_ERR_PLAN_PARAMS),
    ({"antialias": 1}, 16, K.EP_ERR_PLAN_OP),     # scratch below one pair per input position
    ({"reserved": 1}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"coord_mode": K.EP_COORD_TF_CROP_AND_RESIZE + 1}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"mode": 3}, 0, K.EP_ERR_PLAN_PARAMS),
    ({"scales": [1, 1, float("nan"), 0.5] + [1] * 4}, 0, K.EP_ERR_PLAN_PARAMS),
])
def test_wrong_resize_ext_plans_are_refused_at_open(change, scratch, status):
    with pytest.raises(EdgeplanError) as e:
        Session(_plan({**BASE, **change}, scratch=scratch))
    assert e.value.status == status, e.value


def test_resize_refuses_the_crop_mode():
    """RESIZE's record has no roi: tf_crop_and_resize is RESIZE_EXT's only."""
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    x = Tensor("x", np.dtype(F32), (1, 1, 4, 4), is_input=True)
    y = Tensor("y", np.dtype(F32), (1, 1, 2, 2), is_output=True)
    p = {k: v for k, v in BASE.items() if k not in ("roi_start", "roi_end", "antialias")}
    g = Graph([x, y], [Op("resize", [x], [y], p, name="resize_op")], [x], [y])
    with pytest.raises(EdgeplanError) as e:
        Session(write_plan(g, plan_memory(g)))
    assert e.value.status == K.EP_ERR_PLAN_PARAMS

"""Unique (runtime op UNIQUE, plan 1.3) on seeded random inputs with many repeats, against numpy.unique (the
groups reordered by first occurrence for sorted=0) and onnxruntime where it has the dtype (float32, int64,
int8): flattened and along each axis (negative too), sorted and in first-occurrence order; all four outputs
compared exactly (the values are copies, the rest integers). Then what onnxruntime does not pin down (NaN
and signed zeros, in numpy.unique's order), run-time lengths below a declared bound, a run past it, and the
plan version."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import edgeplan
from edgeplan import EdgeplanError
from edgeplan._cdef import K
from edgeplan.plan import read_plan

OUTS = ("y", "indices", "inverse", "counts")


def model(x, outputs=OUTS, **attrs):
    vi = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)]
    outs = [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(x.dtype) if o == "y" else TensorProto.INT64,
                                          None) for o in outputs]
    node = helper.make_node("Unique", ["x"], list(outputs), name="unique_node", **attrs)
    g = helper.make_graph([node], "g", vi, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)


def ort_run(m, x):
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})


ORT_DTYPES = {np.dtype(t) for t in (np.float32, np.int64, np.int8)}   # onnxruntime's Unique kernels


def np_unique(x, axis=None, srt=1):
    """The four outputs by numpy.unique, the groups put in first-occurrence order for sorted=0."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not srt:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        idx, cnt, inv = idx[order], cnt[order], rank[inv]
        y = np.take(x, idx, axis=axis)
    return [y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)]


def data(rng, shape, dt):
    """Values from a small set, so that most slices repeat (rows repeat too, for the axis cases)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        v = rng.random(shape) < 0.5
    elif dt.kind == "f":
        v = rng.integers(-2, 3, shape).astype(dt) * 0.5
    else:
        lo = np.iinfo(dt).min if dt.kind == "i" else 0
        v = rng.choice(np.array([lo, lo + 1, 3, 7, np.iinfo(dt).max], dt), shape)
    if len(shape) > 1:   # repeat some slices along axis 0
        idx = rng.integers(0, shape[0], shape[0])
        v = v[idx]
    return np.ascontiguousarray(v)


@pytest.mark.parametrize("dtype", (np.float32, np.int64, np.int32, np.uint8, np.int8))
@pytest.mark.parametrize("seed", range(4))
def test_unique_against_ort(dtype, seed):
    rng = np.random.default_rng(seed)
    rank = 1 + seed % 3
    x = data(rng, tuple(int(d) for d in rng.integers(1, 6, rank)), dtype)
    for axis in [None] + list(range(-rank, rank)):
        for srt in (0, 1):
            attrs = {"sorted": srt} if axis is None else {"sorted": srt, "axis": axis}
            m = model(x, **attrs)
            got = edgeplan.Session(edgeplan.compile(m)).run({"x": x})
            refs = [np_unique(x, axis, srt)] + ([ort_run(m, x)] if x.dtype in ORT_DTYPES else [])
            for ref in refs:
                for name, r in zip(OUTS, ref):
                    np.testing.assert_array_equal(got[name], r, err_msg=f"{name} axis={axis} sorted={srt}")
                    assert got[name].dtype == r.dtype


def test_unique_bool_and_y_only():
    """bool (onnxruntime has no bool Unique: numpy's) and a node with only Y."""
    x = np.array([[True, False], [True, False], [False, False]])
    got = edgeplan.Session(edgeplan.compile(model(x, ("y",), axis=0))).run({"x": x})
    np.testing.assert_array_equal(got["y"], np.unique(x, axis=0))
    for srt in (0, 1):
        got = edgeplan.Session(edgeplan.compile(model(x, sorted=srt))).run({"x": x})
        for name, r in zip(OUTS, np_unique(x, None, srt)):
            np.testing.assert_array_equal(got[name], r)


def test_unique_nan_and_signed_zero():
    """numpy.unique's order: every NaN equal and last, -0 == +0 (the first occurrence's bits are kept)."""
    x = np.array([np.nan, 1.0, -0.0, np.nan, 0.0, -np.inf, 1.0], np.float32)
    for srt in (1, 0):
        got = edgeplan.Session(edgeplan.compile(model(x, sorted=srt))).run({"x": x})
        y = np.array([-np.inf, -0.0, 1.0, np.nan] if srt else [np.nan, 1.0, -0.0, -np.inf], np.float32)
        np.testing.assert_array_equal(got["y"], y)
        assert np.signbit(got["y"][1 if srt else 2])
        np.testing.assert_array_equal(got["indices"], [5, 2, 1, 0] if srt else [0, 1, 2, 5])
        np.testing.assert_array_equal(got["counts"], [1, 2, 2, 2] if srt else [2, 2, 2, 1])
        np.testing.assert_array_equal(got["inverse"], [3, 2, 1, 3, 1, 0, 2] if srt else [0, 1, 2, 0, 2, 3, 1])


def test_unique_declared_bound():
    """A declared maximum on Y's length: runs at any count up to it, one past it fails with EP_ERR_RUN_BOUND;
    the plan is 1.3 with one data-dependent symbol shared by Y, indices and counts."""
    x = np.array([3, 1, 3, 2, 1, 1], np.int64)
    m = model(x)
    plan = edgeplan.compile(m, dims={"y": (0, 3)})
    assert plan.report["symbols"] == [("y", 0, 3)]
    p = read_plan(plan.to_bytes())
    assert p["header"]["version"] == "1.3"
    s = edgeplan.Session(plan)
    for v in ([3, 1, 3, 2, 1, 1], [5, 5, 5, 5, 5, 5], [2, 1, 2, 1, 2, 1]):
        v = np.array(v, np.int64)
        got = s.run({"x": v})
        for name, r in zip(OUTS, ort_run(m, v)):
            np.testing.assert_array_equal(got[name], r)
    with pytest.raises(EdgeplanError, match="bound|exceeds") as e:
        s.run({"x": np.array([1, 2, 3, 4, 1, 1], np.int64)})
    assert e.value.status == K.EP_ERR_RUN_BOUND and "unique_node" in str(e.value)


def _unique_plan(params, n_out=4, y_rank=1):
    """A hand-built plan: UNIQUE over x[6] (int64) with the given params and outputs."""
    from edgeplan.compiler.dynamic import Sym
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    i64 = np.dtype(np.int64)
    x = Tensor("x", i64, (6,), is_input=True)
    outs = [Tensor("y", i64, (6,) if y_rank == 1 else (6, 1), is_output=True, dim_sym=(1,) + (0,) * (y_rank - 1)),
            Tensor("indices", i64, (6,), is_output=True, dim_sym=(1,)), Tensor("inverse", i64, (6,), is_output=True),
            Tensor("counts", i64, (6,), is_output=True, dim_sym=(1,))][:n_out]
    g = Graph([x, *outs], [Op("unique", [x], outs, params, name="uq", scratch=96)], [x], outs,
              syms=[Sym("y", K.EP_SYM_DATA, 0, 6)])
    return write_plan(g, plan_memory(g))


@pytest.mark.parametrize("params,n_out,y_rank", [({"axis": 1, "sorted": 1}, 4, 1), ({"axis": -1, "sorted": 1}, 4, 1),
                                                 ({"axis": 0, "sorted": 2}, 4, 1), ({"axis": 0, "sorted": 1}, 3, 1),
                                                 ({"axis": 0, "sorted": 1}, 4, 2)])
def test_unique_hostile_plans_refused_at_open(params, n_out, y_rank):
    """Params out of range, a missing output or a Y of another rank than X: refused at open."""
    with pytest.raises(EdgeplanError) as e:
        edgeplan.Session(_unique_plan(params, n_out, y_rank))
    assert e.value.status in (K.EP_ERR_PLAN_OP, K.EP_ERR_PLAN_PARAMS, K.EP_ERR_PLAN_SHAPE)
    got = edgeplan.Session(_unique_plan({"axis": 0, "sorted": 0})).run({"x": np.array([4, 4, 2, 9, 2, 4], np.int64)})
    for name, r in zip(OUTS, ([4, 2, 9], [0, 2, 3], [0, 0, 1, 2, 1, 0], [3, 2, 1])):
        np.testing.assert_array_equal(got[name], r)

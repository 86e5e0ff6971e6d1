"""3-D pooling (MaxPool, AveragePool, LpPool), MaxPool's Indices output and 8-bit integer MaxPool, and
training-mode BatchNormalization, against onnxruntime on seeded random shapes and attributes (single-node
models, data as runtime inputs).

Tolerances: MaxPool values and Indices exactly (a max is one of the inputs; the index is the first tap in
window order that gives it, as onnxruntime's). AveragePool and LpPool 3-D: rtol 1e-5 on the output scale;
the separable pool divides per stage (an average of averages), which differs from one division by a few
float32 roundings. BatchNormalization: rtol 1e-4 (the batch statistics are sums of up to a few thousand
terms, summed in another order than onnxruntime's)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import edgeplan
from conftest import rel_err
from edgeplan.plan import read_plan

SEEDS = range(6)


def build(op, x, attrs, outputs=("y",), out_types=None, consts=None, opset=19):
    consts = consts or {}
    out_types = out_types or [x.dtype] * len(outputs)
    vi = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)]
    outs = [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(np.dtype(t)), None)
            for o, t in zip(outputs, out_types)]
    node = helper.make_node(op, ["x", *consts], list(outputs), name=f"{op.lower()}_node", **attrs)
    g = helper.make_graph([node], "g", vi, outs, [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def run_both(model, x):
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    plan = edgeplan.compile(model)
    got = list(edgeplan.Session(plan).run({"x": x}).values())
    for g, r in zip(got, ref):
        assert g.shape == r.shape and g.dtype == r.dtype, (g.shape, r.shape, g.dtype, r.dtype)
    return plan, got, ref


def window(rng, nsp, ceil=True):
    """Random pool attributes for nsp spatial dims (pads below the kernel, as onnxruntime requires)."""
    k = [int(rng.integers(1, 4)) for _ in range(nsp)]
    a = dict(kernel_shape=k, strides=[int(rng.integers(1, 4)) for _ in range(nsp)],
             dilations=[int(rng.integers(1, 3)) for _ in range(nsp)],
             pads=[int(rng.integers(0, kk)) for kk in k] + [int(rng.integers(0, kk)) for kk in k])
    if ceil:
        a["ceil_mode"] = int(rng.integers(0, 2))
    return a


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("seed", SEEDS)
def test_maxpool_3d(seed):
    rng = np.random.default_rng(seed)
    x = f32(rng, int(rng.integers(1, 3)), int(rng.integers(1, 4)), *rng.integers(4, 9, 3))
    _, got, ref = run_both(build("MaxPool", x, window(rng, 3)), x)
    np.testing.assert_array_equal(got[0], ref[0])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("cip", (0, 1))
def test_averagepool_3d(seed, cip):
    """Both divisors, with pads, dilations and ceil_mode (windows clipped at the end padding)."""
    rng = np.random.default_rng(seed)
    x = f32(rng, int(rng.integers(1, 3)), int(rng.integers(1, 4)), *rng.integers(4, 9, 3))
    _, got, ref = run_both(build("AveragePool", x, dict(window(rng, 3), count_include_pad=cip)), x)
    assert rel_err(got[0], ref[0]) <= 1e-5


@pytest.mark.parametrize("seed", SEEDS)
def test_lppool_3d(seed):
    """No ceil_mode: onnxruntime sums a window clipped at the padded extent, where onnx's reference (and
    edgeplan) scale the clipped average by the full window size."""
    rng = np.random.default_rng(seed)
    x = f32(rng, 1, int(rng.integers(1, 4)), *rng.integers(4, 9, 3))
    attrs = dict(window(rng, 3, ceil=False), p=int(rng.integers(1, 4)))
    _, got, ref = run_both(build("LpPool", x, attrs), x)
    assert rel_err(got[0], ref[0]) <= 1e-5


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("nsp", (1, 2))
def test_maxpool_indices(seed, nsp):
    """Y and Indices (both storage orders) exactly; the plan uses MAXPOOL's INDICES variant and is 1.3."""
    rng = np.random.default_rng(seed)
    x = f32(rng, int(rng.integers(1, 3)), int(rng.integers(1, 4)), *rng.integers(3, 11, nsp))
    attrs = dict(window(rng, nsp), storage_order=int(seed % 2) if nsp == 2 else 0)
    plan, got, ref = run_both(build("MaxPool", x, attrs, ("y", "i"), (np.float32, np.int64)), x)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    p = read_plan(plan.to_bytes())
    assert p["header"]["version"] == "1.3"
    assert [o["variant"] for o in p["ops"] if o["op"] == "maxpool"] == [1]


def test_maxpool_without_indices_stays_default():
    """An unused Indices output keeps the one-output op (variant DEFAULT, its ISA kernels) and the plan's
    older minor version."""
    rng = np.random.default_rng(0)
    x = f32(rng, 1, 2, 7, 7)
    plan, got, ref = run_both(build("MaxPool", x, dict(kernel_shape=[3, 3])), x)
    np.testing.assert_array_equal(got[0], ref[0])
    p = read_plan(plan.to_bytes())
    assert p["header"]["version"] != "1.3"
    assert [o["variant"] for o in p["ops"] if o["op"] == "maxpool"] == [0]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", (np.uint8, np.int8))   # ONNX MaxPool's integer types
def test_maxpool_int(seed, dtype):
    """Integers of few distinct values (ties everywhere): values exactly, Indices the first of the ties."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    nsp = 2 + seed % 2
    x = rng.integers(info.min, int(info.min) + 4 if seed % 3 == 0 else info.max, size=(1, 2, *rng.integers(3, 8, nsp)),
                     endpoint=True).astype(dtype)
    outs, types = (("y", "i"), (dtype, np.int64)) if nsp == 2 else (("y",), (dtype,))
    _, got, ref = run_both(build("MaxPool", x, window(rng, nsp), outs, types), x)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("seed", SEEDS)
def test_batchnorm_training(seed):
    """Y, running_mean and running_var (from the batch's biased variance) over ranks 2 to 5."""
    rng = np.random.default_rng(seed)
    r = 2 + seed % 4
    C = int(rng.integers(1, 5))
    x = (f32(rng, int(rng.integers(1, 4)), C, *rng.integers(1, 6, r - 2)) * 3 + 1).astype(np.float32)
    consts = {"s": f32(rng, C), "b": f32(rng, C), "m": f32(rng, C), "v": rng.random(C).astype(np.float32) + 0.5}
    attrs = dict(training_mode=1, momentum=float(rng.choice([0.9, 0.5, 0.99])), epsilon=float(rng.choice([1e-5, 1e-2])))
    model = build("BatchNormalization", x, attrs, ("y", "rm", "rv"), consts=consts, opset=15)
    _, got, ref = run_both(model, x)
    for g, r_ in zip(got, ref):
        assert rel_err(g, r_) <= 1e-4


def _maxpool_plan(variant, n_out, idx_dtype=np.int64):
    """A hand-built plan: MAXPOOL 2x2 over x[1, 1, 4, 4] with the given variant and outputs."""
    from edgeplan.compiler.graph import Graph, Op, Tensor
    from edgeplan.compiler.memplan import plan_memory
    from edgeplan.compiler.writer import write_plan
    x = Tensor("x", np.dtype(np.float32), (1, 1, 4, 4), is_input=True)
    outs = [Tensor("y", np.dtype(np.float32), (1, 1, 2, 2), is_output=True),
            Tensor("i", np.dtype(idx_dtype), (1, 1, 2, 2), is_output=True)][:n_out]
    params = dict(kernel=[2, 2], stride=[2, 2], dilation=[1, 1], pads=[0, 0, 0, 0], count_include_pad=0, ceil_mode=0)
    g = Graph([x, *outs], [Op("maxpool", [x], outs, params, name="mp", variant=variant)], [x], outs)
    return write_plan(g, plan_memory(g))


@pytest.mark.parametrize("variant,n_out,idx_dtype", [(1, 1, np.int64), (0, 2, np.int64), (1, 2, np.int32)])
def test_maxpool_hostile_plans_refused_at_open(variant, n_out, idx_dtype):
    """A plan whose MAXPOOL outputs are not its variant's (Indices without INDICES, INDICES without Indices,
    Indices not I64) is refused at open, naming the op."""
    from edgeplan import EdgeplanError, Session
    from edgeplan._cdef import K
    with pytest.raises(EdgeplanError, match="mp") as e:
        Session(_maxpool_plan(variant, n_out, idx_dtype))
    assert e.value.status in (K.EP_ERR_PLAN_OP, K.EP_ERR_PLAN_SHAPE, K.EP_ERR_PLAN_TENSOR)
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    got = Session(_maxpool_plan(1, 2)).run({"x": x})
    np.testing.assert_array_equal(got["y"], [[[[5, 7], [13, 15]]]])
    np.testing.assert_array_equal(got["i"], [[[[5, 7], [13, 15]]]])


@pytest.mark.parametrize("attrs", [dict(kernel_shape=[7, 7]), dict(kernel_shape=[7, 7], strides=[7, 7]),
                                   dict(kernel_shape=[7, 7], ceil_mode=1, strides=[2, 2])])
def test_average_pool_over_the_whole_map_is_global(attrs):
    """A window covering the whole map without padding runs as GLOBAL_AVGPOOL (same sum, same division)."""
    x = np.random.default_rng(5).standard_normal((2, 9, 7, 7)).astype(np.float32)
    m = build("AveragePool", x, attrs)
    plan = edgeplan.compile(m)
    assert plan.report["op_counts"] == {"global_avgpool": 1}, plan.report["op_counts"]
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = edgeplan.Session(plan).run({"x": x})["y"]
    assert got.shape == want.shape and rel_err(got, want) <= 1e-6
    padded = edgeplan.compile(build("AveragePool", x, dict(kernel_shape=[7, 7], pads=[1, 1, 1, 1])))
    assert "avgpool" in padded.report["op_counts"]   # a padded window keeps its divisor rules

"""The unsigned integer dtypes (uint16, uint32, uint64), the bitwise ops (BitwiseAnd / Or / Xor / Not,
BitShift) and CumProd, against onnxruntime on seeded random shapes with broadcasting; against numpy where
onnxruntime has no kernel for the dtype. uint64 values at and above 2^63 must order, divide and convert
as unsigned; a shift by the width or more gives 0 (as onnxruntime); signed BitShift (ONNX opset 28,
which onnxruntime lacks) shifts right arithmetically and gives the sign fill for a shift < 0 or >= the
width. Hostile plans: the shape function refuses the bitwise kinds on float32 with a status, at open."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import edgeplan
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K
from edgeplan.compiler.errors import CompileError
from edgeplan.compiler.graph import Graph, Op, Tensor
from edgeplan.compiler.memplan import plan_memory
from edgeplan.compiler.passes.select import select_kernels
from edgeplan.compiler.writer import write_plan
from test_int_ops import model as int_ops_model

SEEDS = range(3)
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
NEW = [np.uint16, np.uint32, np.uint64]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
CMP = ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")


def model(nodes, inputs, outputs, consts=(), opset=18):
    return int_ops_model(nodes, inputs, outputs, consts, opset, ir_version=10)


def ort_run(m, feeds):
    """onnxruntime's outputs, or None when it has no kernel for the op and dtype."""
    try:
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        if "NOT_IMPLEMENTED" in str(e) or "Could not find an implementation" in str(e):
            return None
        raise
    return s.run(None, feeds)


def ep_run(m, feeds):
    return list(Session(edgeplan.compile(m)).run(feeds).values())


def bshapes(rng):
    """Two shapes that broadcast (same, scalar, last dim, random ones, or the other way round)."""
    r = int(rng.integers(1, 5))
    y = [int(rng.integers(1, 6)) for _ in range(r)]
    form = int(rng.integers(0, 4))
    b = list(y) if form == 0 else [] if form == 1 else y[-1:] if form == 2 else [d if rng.integers(0, 2) else 1
                                                                                for d in y]
    return (y, b) if rng.integers(0, 2) else (b, y)


def values(rng, dt, shape):
    """Random values of dt over its whole range, with its edges (0, 1, max; 2^63 and up for uint64)."""
    info = np.iinfo(dt)
    v = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    edges = np.array([0, 1, 2, info.max, info.max - 1] + ([2 ** 63, 2 ** 63 + 1, 2 ** 63 - 1] if dt == np.uint64
                                                          else [info.min]), dtype=object)
    flat = v.reshape(-1)
    pick = rng.random(flat.size) < 0.3
    flat[pick] = np.array([int(e) for e in rng.choice(edges, int(pick.sum()))], dtype=object).astype(dt)
    return v


def numpy_binary(op, a, b):
    with np.errstate(all="ignore"):
        return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.floor_divide,
                "Max": np.maximum, "Min": np.minimum, "Mod": np.mod}[op](a, b).astype(a.dtype)


@pytest.mark.parametrize("dtype", NEW)
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min", "Mod", *CMP])
@pytest.mark.parametrize("seed", SEEDS)
def test_unsigned_binary_and_compare(seed, op, dtype):
    rng = np.random.default_rng(seed)
    sa, sb = bshapes(rng)
    a, b = values(rng, dtype, sa), values(rng, dtype, sb)
    if op in ("Div", "Mod"):
        b[b == 0] = 3
    if op in CMP and b.size and a.size:   # equal pairs too
        a.reshape(-1)[0] = b.reshape(-1)[0]
    out = np.bool_ if op in CMP else dtype
    m = model([helper.make_node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": out})
    got = ep_run(m, {"a": a, "b": b})[0]
    ref = ort_run(m, {"a": a, "b": b})
    if op in CMP:
        want = getattr(np, {"Equal": "equal", "Less": "less", "Greater": "greater", "LessOrEqual": "less_equal",
                            "GreaterOrEqual": "greater_equal"}[op])(a, b)
    else:
        want = numpy_binary(op, a, b)   # unsigned: floor division and mod are the truncating ones
    assert got.dtype == np.dtype(out) and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if ref is not None:
        np.testing.assert_array_equal(got, ref[0])


def test_uint64_above_2_63_orders_divides_and_converts_as_unsigned():
    a = np.array([2 ** 63, 2 ** 64 - 1, 5, 2 ** 63 + 1, 2 ** 64 - 1], np.uint64)
    b = np.array([3, 2 ** 63, 2 ** 64 - 1, 2 ** 63 + 1, 2], np.uint64)
    for op, want in (("Div", a // b), ("Mod", a % b), ("Max", np.maximum(a, b)), ("Min", np.minimum(a, b)),
                     ("Less", a < b), ("Greater", a > b), ("GreaterOrEqual", a >= b)):
        m = model([helper.make_node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": want.dtype})
        got = ep_run(m, {"a": a, "b": b})[0]
        np.testing.assert_array_equal(got, want, err_msg=op)
        np.testing.assert_array_equal(got, ort_run(m, {"a": a, "b": b})[0], err_msg=op)
    m = model([helper.make_node("Cast", ["a"], ["y"], to=helper.np_dtype_to_tensor_dtype(np.dtype(np.float32)))],
              {"a": a}, {"y": np.float32})
    np.testing.assert_array_equal(ep_run(m, {"a": a})[0], a.astype(np.float32))


ALL_INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
CAST_TO = ALL_INTS + [np.float32, np.bool_]


@pytest.mark.parametrize("src", NEW + [np.int8, np.int64, np.float32, np.bool_])
def test_cast_between_unsigned_and_everything(src):
    rng = np.random.default_rng(7)
    if src == np.float32:
        x = rng.uniform(0, 255, (3, 17)).astype(np.float32)   # in range of every unsigned target
        x.reshape(-1)[:3] = (0.0, 0.5, 255.9)
    elif src == np.bool_:
        x = rng.integers(0, 2, (3, 17)).astype(np.bool_)
    else:
        x = values(rng, src, (3, 17))
    for dst in CAST_TO:
        if np.dtype(src).kind not in "u" and np.dtype(dst).kind != "u":
            continue   # casts without an unsigned side: tests/py/test_int_ops.py
        if src == np.float32 and np.dtype(dst).kind == "i":
            continue
        to = helper.np_dtype_to_tensor_dtype(np.dtype(dst))
        m = model([helper.make_node("Cast", ["x"], ["y"], to=to)], {"x": x}, {"y": dst})
        got = ep_run(m, {"x": x})[0]
        want = x.astype(dst)
        assert got.dtype == np.dtype(dst)
        if dst == np.float32:
            np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=f"{np.dtype(src)} -> {np.dtype(dst)}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{np.dtype(src)} -> {np.dtype(dst)}")
        ref = ort_run(m, {"x": x})
        if ref is not None and dst != np.float32:
            np.testing.assert_array_equal(got, ref[0], err_msg=f"{np.dtype(src)} -> {np.dtype(dst)} (ort)")


def test_cast_float_to_unsigned_saturates():
    x = np.array([-5.0, -0.5, np.nan, 1e30, -np.inf, np.inf, 65535.7, 3.9], np.float32)
    for dst, hi in ((np.uint16, 65535), (np.uint32, 2 ** 32 - 1), (np.uint64, 2 ** 64 - 1)):
        m = model([helper.make_node("Cast", ["x"], ["y"], to=helper.np_dtype_to_tensor_dtype(np.dtype(dst)))],
                  {"x": x}, {"y": dst})
        got = ep_run(m, {"x": x})[0]
        np.testing.assert_array_equal(got, np.array([0, 0, 0, hi, 0, hi, min(65535, hi), 3], dst))


@pytest.mark.parametrize("dtype", NEW)
def test_unsigned_data_movers(dtype):
    rng = np.random.default_rng(3)
    x = values(rng, dtype, (2, 3, 4))
    c = np.array([[True], [False]])
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
             helper.make_node("Concat", ["x", "x"], ["cat"], axis=1),
             helper.make_node("Gather", ["x", "idx"], ["g"], axis=2),
             helper.make_node("Slice", ["x", "st", "en"], ["s"]),
             helper.make_node("Reshape", ["x", "shp"], ["r"]),
             helper.make_node("Where", ["c", "r", "zero"], ["w"]),
             helper.make_node("Expand", ["zero", "eshape"], ["e"])]
    consts = [("idx", np.array([3, 0], np.int64)), ("st", np.array([1], np.int64)), ("en", np.array([3], np.int64)),
              ("shp", np.array([2, 12], np.int64)), ("zero", np.array(7, dtype)), ("eshape", np.array([2, 2], np.int64)),
              ("c", c)]
    outs = {k: dtype for k in ("t", "cat", "g", "s", "w", "e")}
    m = model(nodes, {"x": x}, outs, consts)
    got = ep_run(m, {"x": x})
    r = x.reshape(2, 12)
    want = [x.transpose(2, 0, 1), np.concatenate([x, x], 1), x[:, :, [3, 0]], x[1:3], np.where(c, r, dtype(7)),
            np.full((2, 2), 7, dtype)]   # numpy: onnxruntime lacks Where for some of these dtypes
    for g, w, name in zip(got, want, outs):
        assert g.dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("dtype", NEW)
def test_unsigned_graph_io_through_npy(tmp_path, dtype):
    """edgeplan-run reads and writes the unsigned dtypes' .npy files."""
    import os
    import shutil
    import subprocess
    from pathlib import Path
    lib = os.environ.get("EDGEPLAN_LIB")
    runner = Path(lib).with_name("edgeplan-run") if lib else None   # the one built with the library
    runner = str(runner) if runner and runner.exists() else shutil.which("edgeplan-run")
    if not runner:
        pytest.skip("no edgeplan-run")
    x = values(np.random.default_rng(1), dtype, (4, 5))
    m = model([helper.make_node("Max", ["x", "one"], ["y"])], {"x": x}, {"y": dtype},
              consts=[("one", np.array(2 ** (8 * np.dtype(dtype).itemsize - 1), dtype))])
    plan = tmp_path / "m.eplan"
    edgeplan.compile(m).save(plan)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([runner, str(plan), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "y.npy")],
                   check=True, capture_output=True)
    got = np.load(tmp_path / "y.npy")
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.maximum(x, np.array(2 ** (8 * np.dtype(dtype).itemsize - 1), dtype)))


# ---- bitwise ----

@pytest.mark.parametrize("dtype", ALL_INTS)
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"])
@pytest.mark.parametrize("seed", SEEDS)
def test_bitwise_matches_ort(seed, op, dtype):
    rng = np.random.default_rng(seed)
    sa, sb = bshapes(rng)
    a, b = values(rng, dtype, sa), values(rng, dtype, sb)
    feeds = {"a": a} if op == "BitwiseNot" else {"a": a, "b": b}
    m = model([helper.make_node(op, list(feeds), ["y"])], feeds, {"y": dtype})
    got = ep_run(m, feeds)[0]
    want = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor,
            "BitwiseNot": lambda x, *_: np.invert(x)}[op](a, b)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, ort_run(m, feeds)[0])


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("seed", SEEDS)
def test_bitshift_matches_ort_with_shifts_past_the_width(seed, direction, dtype):
    rng = np.random.default_rng(seed)
    w = 8 * np.dtype(dtype).itemsize
    sa, sb = bshapes(rng)
    a = values(rng, dtype, sa)
    b = rng.integers(0, w + 3, sb).astype(dtype)
    b.reshape(-1)[: min(b.size, 3)] = [w, w + 1, np.iinfo(dtype).max][: min(b.size, 3)]
    m = model([helper.make_node("BitShift", ["a", "b"], ["y"], direction=direction)], {"a": a, "b": b}, {"y": dtype})
    got = ep_run(m, {"a": a, "b": b})[0]
    a64, b64 = np.broadcast_arrays(a.astype(object), b.astype(object))
    want = np.array([(x << s if direction == "LEFT" else x >> s) % 2 ** w if s < w else 0
                     for x, s in zip(a64.reshape(-1), b64.reshape(-1))], dtype=object).astype(dtype).reshape(a64.shape)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, ort_run(m, {"a": a, "b": b})[0])


def test_bitwise_constant_folding_matches_the_runtime():
    """Constant inputs fold at compile time (numpy / the reference evaluator) to what the kernel computes."""
    a = np.array([1, 200, 255, 7], np.uint8)
    s = np.array([1, 8, 9, 0], np.uint8)
    x = np.array([3, 3, 3, 3], np.uint8)
    nodes = [helper.make_node("BitShift", ["ca", "cs"], ["sh"], direction="LEFT"),
             helper.make_node("BitwiseNot", ["ca"], ["nt"]),
             helper.make_node("BitwiseXor", ["sh", "nt"], ["k"]),
             helper.make_node("BitwiseOr", ["x", "k"], ["y"])]
    m = model(nodes, {"x": x}, {"y": np.uint8}, consts=[("ca", a), ("cs", s)])
    plan = edgeplan.compile(m)
    assert plan.report["n_ops"] == 1   # only the run-time BitwiseOr is left
    got = Session(plan).run({"x": x})["y"]
    np.testing.assert_array_equal(got, ort_run(m, {"x": x})[0])


@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_signed_bitshift_is_arithmetic_with_the_sign_fill_past_the_width(direction, dtype):
    rng = np.random.default_rng(5)
    w = 8 * np.dtype(dtype).itemsize
    a = values(rng, dtype, (4, 9))
    b = rng.integers(-3, w + 3, (9,)).astype(dtype)
    b[:4] = (-1, 0, w, w - 1)
    m = model([helper.make_node("BitShift", ["a", "b"], ["y"], direction=direction)], {"a": a, "b": b}, {"y": dtype},
              opset=28)
    got = ep_run(m, {"a": a, "b": b})[0]
    want = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype)
    for (i, j), x in np.ndenumerate(np.broadcast_to(a, want.shape)):
        s = int(b[j])
        if not 0 <= s < w:
            want[i, j] = -1 if direction == "RIGHT" and x < 0 else 0
        elif direction == "RIGHT":
            want[i, j] = int(x) >> s                       # Python ints shift arithmetically
        else:
            v = (int(x) << s) % 2 ** w                     # the bits past the width are discarded
            want[i, j] = v - 2 ** w if v >= 2 ** (w - 1) else v
    np.testing.assert_array_equal(got, want)


def test_bitshift_on_float_is_a_compile_error():
    a = np.ones(4, np.float32)
    m = model([helper.make_node("BitShift", ["a", "b"], ["y"], direction="LEFT")], {"a": a, "b": a},
              {"y": np.float32}, opset=28)
    with pytest.raises(CompileError, match="BitShift supports int16"):
        edgeplan.compile(m)


def test_bitwise_and_on_float32_is_a_compile_error():
    a = np.ones(4, np.float32)
    m = model([helper.make_node("BitwiseAnd", ["a", "b"], ["y"])], {"a": a, "b": a}, {"y": np.float32})
    with pytest.raises(CompileError, match="BitwiseAnd supports int16"):
        edgeplan.compile(m)


def _binary_plan(dtype, kind) -> bytes:
    dt = np.dtype(dtype)
    a = Tensor("a", dt, (2, 3), is_input=True)
    b = Tensor("b", dt, (2, 3), is_input=True)
    y = Tensor("y", dt, (2, 3), is_output=True)
    g = Graph([a, b, y], [Op("binary", [a, b], [y], dict(kind=kind, act=K.EP_ACT_NONE), name="bad")], [a, b], [y])
    select_kernels(g, None)
    return write_plan(g, plan_memory(g))


@pytest.mark.parametrize("kind", [K.EP_BIN_BITAND, K.EP_BIN_BITOR, K.EP_BIN_BITXOR, K.EP_BIN_SHL, K.EP_BIN_SHR,
                                  K.EP_BIN_COUNT])
def test_hostile_bitwise_kind_on_float32_is_refused_at_open(kind):
    with pytest.raises(EdgeplanError) as e:
        Session(_binary_plan(np.float32, kind))
    assert e.value.status == K.EP_ERR_PLAN_PARAMS


@pytest.mark.parametrize("kind", [K.EP_BIN_BITAND, K.EP_BIN_SHR])
def test_hostile_bitwise_kind_on_bool_or_a_dtype_mismatch_is_refused_at_open(kind):
    with pytest.raises(EdgeplanError) as e:
        Session(_binary_plan(np.bool_, kind))
    assert e.value.status == K.EP_ERR_PLAN_TENSOR


def test_plans_with_the_new_dtypes_and_kinds_say_minor_version_2():
    a = np.ones(4, np.int32)
    old = edgeplan.compile(model([helper.make_node("Add", ["a", "b"], ["y"])], {"a": a, "b": a}, {"y": np.int32}))
    new = edgeplan.compile(model([helper.make_node("BitwiseAnd", ["a", "b"], ["y"])], {"a": a, "b": a},
                                 {"y": np.int32}))
    u = a.astype(np.uint32)
    unsigned = edgeplan.compile(model([helper.make_node("Add", ["a", "b"], ["y"])], {"a": u, "b": u},
                                      {"y": np.uint32}))
    minor = lambda p: int.from_bytes(p.to_bytes()[6:8], "little")   # noqa: E731
    assert minor(old) < 2 and minor(new) == 2 and minor(unsigned) == 2


def test_a_zero_unsigned_divisor_fails_the_run():
    a = np.array([5, 2 ** 63], np.uint64)
    b = np.array([1, 0], np.uint64)
    m = model([helper.make_node("Div", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": np.uint64})
    s = Session(edgeplan.compile(m))
    with pytest.raises(EdgeplanError) as e:
        s.run({"a": a, "b": b})
    assert e.value.status == K.EP_ERR_RUN_INDEX


# ---- CumProd (the CUMSUM op with prod = 1) ----

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint32, np.uint64])
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("seed", SEEDS)
def test_cumprod_matches_ort(seed, reverse, exclusive, dtype):
    rng = np.random.default_rng(seed)
    shape = [int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 4)))]
    axis = int(rng.integers(-len(shape), len(shape)))
    if np.dtype(dtype).kind == "f":
        x = rng.uniform(0.5, 1.5, shape).astype(dtype) * rng.choice([-1, 1], shape).astype(dtype)
    else:
        x = values(rng, dtype, shape) if seed == 2 else rng.integers(0, 9, shape).astype(dtype)
    m = model([helper.make_node("CumProd", ["x", "ax"], ["y"], exclusive=exclusive, reverse=reverse)], {"x": x},
              {"y": dtype}, consts=[("ax", np.array(axis, np.int64))], opset=26)
    got = ep_run(m, {"x": x})[0]
    ref = ort_run(m, {"x": x})[0]
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, ref)


def test_cumsum_still_sums_and_cumsum_plans_keep_their_version():
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    m = model([helper.make_node("CumSum", ["x", "ax"], ["y"])], {"x": x}, {"y": np.float32},
              consts=[("ax", np.array(1, np.int64))])
    p = edgeplan.compile(m)
    np.testing.assert_allclose(Session(p).run({"x": x})["y"], np.cumsum(x, axis=1))
    assert int.from_bytes(p.to_bytes()[6:8], "little") < 2

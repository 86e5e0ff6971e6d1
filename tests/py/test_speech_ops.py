"""The sequence / audio ops (static shapes) against onnxruntime on seeded random shapes
and attributes: single-node models, weights and shape operands as initializers, data as runtime inputs.
fp32 tolerance: rtol 1e-4 on the output's scale (max |diff| / max |ref|); integer and bool outputs
exactly. The recurrent ops run up to 7 steps of float32 state, still rounding-level differences."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import edgeplan
from conftest import rel_err
from edgeplan.compiler.errors import CompileError

SEEDS = range(4)


def build(op, feeds, consts, order, attrs=None, outputs=("y",), opset=17):
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
          for k, v in feeds.items()]
    node = helper.make_node(op, list(order), list(outputs), name=f"{op.lower()}_node", **(attrs or {}))
    g = helper.make_graph([node], "g", vi, [], [numpy_helper.from_array(v, k) for k, v in consts.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v for v in inferred.graph.value_info}
    for o in outputs:
        if o:
            t = types[o].type.tensor_type.elem_type if o in types else onnx.TensorProto.FLOAT
            m.graph.output.append(helper.make_tensor_value_info(o, t, None))
    return m


def ort_run(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def check(model, feeds, tol=1e-4, ref=None):
    ref = ort_run(model, feeds) if ref is None else ref
    got = edgeplan.Session(edgeplan.compile(model)).run(feeds)
    assert len(got) == len(ref)
    for (name, y), r in zip(got.items(), ref):
        assert y.shape == r.shape, (name, y.shape, r.shape)
        assert y.dtype == r.dtype, (name, y.dtype, r.dtype)
        if r.dtype.kind == "f":
            assert rel_err(y, r) <= tol, (name, rel_err(y, r))
        else:
            np.testing.assert_array_equal(y, r, err_msg=name)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def rshape(rng, rank, lo=1, hi=5):
    return tuple(int(d) for d in rng.integers(lo, hi + 1, rank))


# ---------------------------------------------------------------- LayerNormalization
@pytest.mark.parametrize("seed", SEEDS)
def test_layernorm(seed):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(1, 5))
    shape = rshape(rng, r, 2, 6)
    axis = int(rng.integers(-r, r))
    ns = shape[axis % r:]
    consts = {"s": f32(rng, *ns)}
    order = ["x", "s"]
    if seed % 2 == 0:
        consts["b"] = f32(rng, *ns)
        order.append("b")
    outs = ("y", "mean", "inv") if seed < 2 else ("y",)
    x = f32(rng, *shape) * 3 + 1
    check(build("LayerNormalization", {"x": x}, consts, order, dict(axis=axis, epsilon=1e-3 * (seed + 1)),
                outputs=outs), {"x": x})


def test_layernorm_broadcast_scale_and_runtime_scale():
    rng = np.random.default_rng(7)
    x = f32(rng, 2, 3, 8)
    # a scale of shape [1, 8] broadcast to the normalised shape [3, 8] at compile time
    check(build("LayerNormalization", {"x": x}, {"s": f32(rng, 1, 8)}, ["x", "s"], dict(axis=1)), {"x": x})
    s, b = f32(rng, 8), f32(rng, 8)
    check(build("LayerNormalization", {"x": x, "s": s, "b": b}, {}, ["x", "s", "b"]), {"x": x, "s": s, "b": b})


# ---------------------------------------------------------------- Where / compare / logic
BCAST = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((1,), (2, 1, 3))]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_where(seed, dtype):
    rng = np.random.default_rng(seed)
    sa, sb = BCAST[seed]
    c = rng.random(sb) > 0.5
    a = (rng.standard_normal(sa) * 10).astype(dtype)
    b = (rng.standard_normal(sb[-1:]) * 10).astype(dtype)
    check(build("Where", {"c": c, "a": a, "b": b}, {}, ["c", "a", "b"]), {"c": c, "a": a, "b": b})


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.int8, np.uint8])
def test_compare(op, dtype):
    rng = np.random.default_rng(1)
    for sa, sb in BCAST:
        a = rng.integers(0, 4, sa).astype(dtype)      # small integers: plenty of ties
        b = rng.integers(0, 4, sb).astype(dtype)
        check(build(op, {"a": a, "b": b}, {}, ["a", "b"]), {"a": a, "b": b})


@pytest.mark.parametrize("op", ["And", "Or", "Xor", "Not"])
def test_logic(op):
    rng = np.random.default_rng(2)
    for sa, sb in BCAST:
        a, b = rng.random(sa) > 0.5, rng.random(sb) > 0.5
        if op == "Not":
            check(build(op, {"a": a}, {}, ["a"]), {"a": a})
        else:
            check(build(op, {"a": a, "b": b}, {}, ["a", "b"]), {"a": a, "b": b})


def test_attention_mask_pattern():
    """Where(Equal(mask, 0), -inf-ish, scores): the usual padding-mask export."""
    rng = np.random.default_rng(3)
    x, mask = f32(rng, 2, 4, 6), rng.integers(0, 2, (2, 1, 6)).astype(np.int64)
    eq = helper.make_node("Equal", ["mask", "zero"], ["m"])
    wh = helper.make_node("Where", ["m", "neg", "x"], ["y"])
    g = helper.make_graph([eq, wh], "g",
                          [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape),
                           helper.make_tensor_value_info("mask", onnx.TensorProto.INT64, mask.shape)],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.array(0, np.int64), "zero"),
                           numpy_helper.from_array(np.array(-1e9, np.float32), "neg")])
    check(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), {"x": x, "mask": mask})


# ---------------------------------------------------------------- Expand / Cast
@pytest.mark.parametrize("seed", SEEDS)
def test_expand(seed):
    rng = np.random.default_rng(seed)
    xs, shape = [((3, 1), [2, 3, 6]), ((1, 4), [3, 1]), ((2, 1, 1), [2, 5, 3]), ((1,), [4, 2])][seed]
    x = f32(rng, *xs) if seed % 2 == 0 else rng.integers(-9, 9, xs).astype(np.int64)
    check(build("Expand", {"x": x}, {"s": np.array(shape, np.int64)}, ["x", "s"]), {"x": x})


CASTS = [np.float32, np.int32, np.int64, np.bool_, np.uint8, np.int8, np.int16]


@pytest.mark.parametrize("src", CASTS)
@pytest.mark.parametrize("dst", CASTS)
def test_cast(src, dst):
    if src == dst:
        return
    rng = np.random.default_rng(4)
    v = rng.uniform(-100, 100, (3, 7))
    if np.dtype(src) == np.uint8 or np.dtype(dst) == np.uint8:
        v = np.abs(v)
    if np.dtype(dst) in (np.dtype(np.int8),) or np.dtype(src) == np.int8:
        v = np.clip(v, -120, 120)
    v[0, :3] = [0, 0.5, -0.75] if np.dtype(src) == np.float32 else [0, 1, 2]
    x = v.astype(src)
    check(build("Cast", {"x": x}, {}, ["x"], dict(to=helper.np_dtype_to_tensor_dtype(np.dtype(dst)))), {"x": x})


# ---------------------------------------------------------------- ArgMax / TopK / CumSum / Trilu
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("seed", SEEDS)
def test_argmax(op, seed):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(1, 4))
    shape = rshape(rng, r, 1, 6)
    x = rng.integers(0, 3, shape).astype(np.float32 if seed % 2 else np.int64)  # ties
    attrs = dict(axis=int(rng.integers(-r, r)), keepdims=seed % 2, select_last_index=seed // 2)
    check(build(op, {"x": x}, {}, ["x"], attrs), {"x": x})


@pytest.mark.parametrize("seed", range(6))
def test_topk(seed):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(1, 4))
    shape = rshape(rng, r, 2, 9)
    axis = int(rng.integers(-r, r))
    k = int(rng.integers(0, shape[axis] + 1))
    x = f32(rng, *shape) if seed % 3 else rng.integers(-3, 3, shape).astype(np.int64)  # int: ties
    check(build("TopK", {"x": x}, {"k": np.array([k], np.int64)}, ["x", "k"],
                dict(axis=axis, largest=seed % 2, sorted=1), outputs=("v", "i")), {"x": x})


def test_topk_values_only_and_large_axis():
    rng = np.random.default_rng(9)
    x = f32(rng, 2, 1000)
    m = build("TopK", {"x": x}, {"k": np.array([5], np.int64)}, ["x", "k"], outputs=("v", "i"))
    del m.graph.output[1]          # Indices computed but not a graph output
    check(m, {"x": x})


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_cumsum(seed, dtype):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(1, 4))
    shape = rshape(rng, r, 1, 6)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    attrs = dict(exclusive=seed % 2, reverse=seed // 2)
    check(build("CumSum", {"x": x}, {"a": np.array(int(rng.integers(-r, r)), np.int64)}, ["x", "a"], attrs),
          {"x": x})


@pytest.mark.parametrize("seed", range(6))
def test_trilu(seed):
    rng = np.random.default_rng(seed)
    shape = rshape(rng, int(rng.integers(2, 5)), 1, 6)
    x = f32(rng, *shape) if seed % 2 else rng.integers(-9, 9, shape).astype(np.int64)
    k = int(rng.integers(-7, 8))
    check(build("Trilu", {"x": x}, {"k": np.array(k, np.int64)}, ["x", "k"], dict(upper=seed % 2)), {"x": x})


# ---------------------------------------------------------------- LSTM / GRU
def rnn_case(rng, op, seed, layout=0):
    G = 4 if op == "LSTM" else 3
    direction = ["forward", "reverse", "bidirectional"][seed % 3]
    D = 2 if direction == "bidirectional" else 1
    T, B, I, H = int(rng.integers(1, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    x = f32(rng, *((B, T, I) if layout else (T, B, I)))
    consts = {"W": f32(rng, D, G * H, I) * 0.5, "R": f32(rng, D, G * H, H) * 0.5, "B": f32(rng, D, 2 * G * H) * 0.3}
    feeds = {"x": x}
    order = ["x", "W", "R", "B"]
    st = (B, D, H) if layout else (D, B, H)
    if seed % 2:
        feeds["sl"] = rng.integers(0, T + 1, B).astype(np.int32)
        feeds["sl"][0] = T
    order.append("sl" if seed % 2 else "")
    if seed >= 2:
        feeds["h0"] = f32(rng, *st)
        order.append("h0")
        if op == "LSTM":
            feeds["c0"] = f32(rng, *st)
            order.append("c0")
            if seed >= 4:
                consts["P"] = f32(rng, D, 3 * H) * 0.5
                order.append("P")
    attrs = dict(hidden_size=H, direction=direction, layout=layout)
    return feeds, consts, order, attrs


def check_rnn(op, feeds, consts, order, attrs, outs):
    """onnxruntime has no layout 1 (batchwise): its reference is the layout-0 model on transposed data."""
    model = build(op, feeds, consts, order, attrs, outputs=outs)
    if not attrs.get("layout"):
        check(model, feeds)
        return
    a0 = dict(attrs, layout=0)
    f0 = {k: (v.transpose(1, 0, 2) if k in ("x", "h0", "c0") else v) for k, v in feeds.items()}
    ref = ort_run(build(op, f0, consts, order, a0, outputs=outs), f0)
    ref = [r.transpose(2, 0, 1, 3) if r.ndim == 4 else r.transpose(1, 0, 2) for r in ref]
    check(model, feeds, ref=ref)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("layout", [0, 1])
def test_lstm(seed, layout):
    rng = np.random.default_rng(seed)
    feeds, consts, order, attrs = rnn_case(rng, "LSTM", seed, layout)
    if seed == 7:
        attrs["clip"] = 0.5
    outs = [("y", "yh", "yc"), ("", "yh"), ("y", "", "yc"), ("y", "yh")][seed % 4]
    check_rnn("LSTM", feeds, consts, order, attrs, outs)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("layout", [0, 1])
def test_gru(seed, layout):
    rng = np.random.default_rng(100 + seed)
    feeds, consts, order, attrs = rnn_case(rng, "GRU", seed, layout)
    attrs["linear_before_reset"] = seed // 4
    if seed == 6:
        attrs["clip"] = 0.7
    outs = [("y", "yh"), ("", "yh"), ("y",)][seed % 3]
    check_rnn("GRU", feeds, consts, order, attrs, outs)


def test_rnn_default_bias_and_runtime_weights():
    rng = np.random.default_rng(5)
    x, W, R = f32(rng, 4, 2, 3), f32(rng, 1, 12, 3), f32(rng, 1, 12, 3)
    feeds = {"x": x, "W": W, "R": R}
    check(build("LSTM", feeds, {}, ["x", "W", "R"], dict(hidden_size=3), outputs=("y", "yh")), feeds)


def test_rnn_rejections():
    rng = np.random.default_rng(6)
    x = f32(rng, 3, 1, 2)
    cases = [("LSTM", dict(hidden_size=2, activations=["Relu", "Tanh", "Tanh"]), 8, "activations"),
             ("LSTM", dict(hidden_size=2, input_forget=1), 8, "input_forget"),
             ("GRU", dict(hidden_size=2, activations=["Sigmoid", "Sigmoid"]), 6, "activations")]
    for op, attrs, gh, what in cases:
        m = build(op, {"x": x}, {"W": f32(rng, 1, gh, 2), "R": f32(rng, 1, gh, 2)}, ["x", "W", "R"], attrs,
                  outputs=("y",))
        with pytest.raises(CompileError, match=what):
            edgeplan.compile(m)


def test_rnn_sequence_lens_out_of_range_fails_the_run():
    rng = np.random.default_rng(8)
    x = f32(rng, 3, 2, 2)
    m = build("GRU", {"x": x, "sl": np.array([3, 3], np.int32)}, {"W": f32(rng, 1, 6, 2), "R": f32(rng, 1, 6, 2)},
              ["x", "W", "R", "", "sl"], dict(hidden_size=2), outputs=("y",))
    sess = edgeplan.Session(edgeplan.compile(m))
    sess.run({"x": x, "sl": np.array([3, 1], np.int32)})
    with pytest.raises(Exception, match="(?i)index|range"):
        sess.run({"x": x, "sl": np.array([4, 1], np.int32)})


# ---------------------------------------------------------------- Einsum
EINSUM = [("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
          ("bij,bjk->bik", [(3, 2, 4), (3, 4, 5)]), ("ij->ji", [(3, 4)]), ("ij,jk->ik", [(3, 4), (4, 2)]),
          ("i,i", [(5,)]*2), ("ij->i", [(3, 4)]), ("bid,bjd->bij", [(2, 3, 4), (2, 5, 4)]),
          ("ijk->kji", [(2, 3, 4)]), ("ij,ij->i", [(3, 4)]*2), ("ik,jk", [(3, 4), (2, 4)]),
          ("bnd,dh->bnh", [(2, 3, 4), (4, 5)]), ("i,j->ij", [(3,), (4,)]), ("abc,cd->abd", [(2, 1, 3), (3, 2)])]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum(eq, shapes):
    rng = np.random.default_rng(11)
    feeds = {f"x{k}": f32(rng, *s) for k, s in enumerate(shapes)}
    check(build("Einsum", feeds, {}, list(feeds), dict(equation=eq)), feeds)


EINSUM_MORE = [("ii->i", [(3, 3)]), ("...ij->...ji", [(2, 3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
               ("...ii->...i", [(2, 3, 4, 4)]), ("ii", [(4, 4)]), ("iij->j", [(3, 3, 2)]), ("iji->ij", [(3, 2, 3)]),
               ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 2)]), ("b...d,bd->b...", [(2, 3, 5, 4), (2, 4)]),
               ("...", [(2, 3)]), ("i...,i...", [(3, 2), (3, 1)]), ("abc,cd,de,b->ae", [(2, 3, 4), (4, 5), (5, 2), (3,)]),
               ("ij,ij,ij->", [(2, 3)] * 3)]


@pytest.mark.parametrize("eq,shapes", EINSUM_MORE)
def test_einsum_ellipsis_diagonal_and_many_operands(eq, shapes):
    rng = np.random.default_rng(13)
    feeds = {f"x{k}": f32(rng, *s) for k, s in enumerate(shapes)}
    check(build("Einsum", feeds, {}, list(feeds), dict(equation=eq)), feeds)


@pytest.mark.parametrize("eq,shapes", [("ij->k", [(3, 3)]), ("ij,jk->ik", [(2, 3), (4, 5)]),
                                       ("i2->i", [(3, 3)]), ("ij->ii", [(3, 3)])])
def test_einsum_rejects_with_equation(eq, shapes):
    rng = np.random.default_rng(12)
    feeds = {f"x{k}": f32(rng, *s) for k, s in enumerate(shapes)}
    with pytest.raises(CompileError, match=r"Einsum '" + eq.replace(".", r"\.")):
        edgeplan.compile(build("Einsum", feeds, {}, list(feeds), dict(equation=eq)))


# ---------------------------------------------------------------- ScatterND / GatherND
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatternd(seed, reduction):
    rng = np.random.default_rng(seed)
    dshape = rshape(rng, int(rng.integers(1, 4)), 2, 5)
    q = int(rng.integers(1, len(dshape) + 1))
    n = int(rng.integers(1, 4))
    flat = rng.choice(int(np.prod(dshape[:q])), size=min(n, int(np.prod(dshape[:q]))), replace=reduction != "none")
    idx = np.stack(np.unravel_index(flat, dshape[:q]), -1).astype(np.int64)
    idx[0] -= np.array(dshape[:q]) * (seed % 2)   # negative indices count from the end
    upd = f32(rng, *(idx.shape[:-1] + dshape[q:]))
    data = f32(rng, *dshape)
    feeds = {"d": data, "i": idx, "u": upd}
    check(build("ScatterND", feeds, {}, ["d", "i", "u"], dict(reduction=reduction), opset=18), feeds)


@pytest.mark.parametrize("seed", SEEDS)
def test_gathernd(seed):
    rng = np.random.default_rng(seed)
    b = seed % 2
    dshape = rshape(rng, int(rng.integers(2, 4)), 2, 5)
    q = int(rng.integers(1, len(dshape) - b + 1))
    lead = tuple(dshape[:b]) + rshape(rng, int(rng.integers(0, 3)), 1, 3)
    idx = np.stack([rng.integers(0, dshape[b + j], lead) for j in range(q)], -1).astype(np.int64)
    data = f32(rng, *dshape) if seed < 2 else rng.integers(0, 9, dshape).astype(np.int32)
    feeds = {"d": data, "i": idx}
    check(build("GatherND", feeds, {}, ["d", "i"], dict(batch_dims=b)), feeds)


def test_gathernd_index_out_of_range_fails_the_run():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = build("GatherND", {"d": data, "i": np.zeros((1, 2), np.int64)}, {}, ["d", "i"])
    sess = edgeplan.Session(edgeplan.compile(m))
    with pytest.raises(Exception, match="(?i)index|range"):
        sess.run({"d": data, "i": np.array([[1, 3]], np.int64)})


# ---------------------------------------------------------------- STFT / MelWeightMatrix
@pytest.mark.parametrize("seed", range(5))
def test_stft(seed):
    rng = np.random.default_rng(seed)
    L, N, step = int(rng.integers(40, 120)), int(rng.choice([8, 16, 25])), int(rng.integers(3, 11))
    onesided = 0 if seed == 4 else 1
    sig = f32(rng, 2, L, 2 if seed == 4 else 1)
    win = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N) / N)).astype(np.float32)
    consts = {"step": np.array(step, np.int64), "n": np.array(N, np.int64)}
    feeds = {"s": sig}
    if seed in (0, 4):
        order = ["s", "step", "", "n"]                       # no window
    elif seed == 1:
        consts["w"] = win
        order = ["s", "step", "w"]                           # constant window folded into the basis
    elif seed == 2:
        feeds["w"] = win
        order = ["s", "step", "w", "n"]                      # runtime window
    else:
        consts["w"] = win
        order = ["s", "step", "w", "n"]
    check(build("STFT", feeds, consts, order, dict(onesided=onesided)), feeds, tol=2e-4)


def test_log_mel_front_end():
    """STFT → |X|^2 → MatMul(MelWeightMatrix) → Log: the front end an ASR plan carries."""
    rng = np.random.default_rng(3)
    sig = f32(rng, 1, 400, 1)
    T = onnx.TensorProto
    nodes = [
        helper.make_node("STFT", ["s", "step", "w"], ["spec"]),
        helper.make_node("Mul", ["spec", "spec"], ["sq"]),
        helper.make_node("ReduceSum", ["sq", "last"], ["pow"], keepdims=0),
        helper.make_node("MelWeightMatrix", ["nmel", "nfft", "sr", "lo", "hi"], ["mel"]),
        helper.make_node("MatMul", ["pow", "mel"], ["m"]),
        helper.make_node("Add", ["m", "eps"], ["me"]),
        helper.make_node("Log", ["me"], ["y"]),
    ]
    inits = {"step": np.array(16, np.int64), "w": np.hanning(64).astype(np.float32), "last": np.array([-1], np.int64),
             "nmel": np.array(10, np.int64), "nfft": np.array(64, np.int64), "sr": np.array(16000, np.int64),
             "lo": np.array(20.0, np.float32), "hi": np.array(8000.0, np.float32), "eps": np.array(1e-6, np.float32)}
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("s", T.FLOAT, sig.shape)],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    check(m, {"s": sig}, tol=1e-4)


def test_nonzero():
    x = np.array([[1, 0, 2], [0, 0, 3]], np.float32)
    check(build("NonZero", {"x": x}, {}, ["x"]), {"x": x})


# ---------------------------------------------------------------- plan mutation with the speech ops
def speech_plan_model():
    """One graph using every new opcode, for the plan-mutation fuzz (tests/c/fuzz_plans.c)."""
    rng = np.random.default_rng(21)
    T = onnx.TensorProto
    inits = {"W": f32(rng, 1, 24, 4), "R": f32(rng, 1, 24, 6), "B": f32(rng, 1, 48),
             "gW": f32(rng, 2, 9, 4), "gR": f32(rng, 2, 9, 3), "s": f32(rng, 4), "k": np.array([2], np.int64),
             "ax": np.array(2, np.int64), "zero": np.array(0, np.int64), "neg": np.array([-1e9], np.float32),
             "shape": np.array([3, 2, 5], np.int64), "gi": np.array([[1], [0]], np.int64)}
    # kernels that read runtime indices (which the fuzz harness fills with random bytes) run last
    nodes = [
        helper.make_node("LayerNormalization", ["x", "s"], ["ln"]),
        helper.make_node("ArgMax", ["ln"], ["am"], axis=-1),
        helper.make_node("TopK", ["ln", "k"], ["tv", "ti"]),
        helper.make_node("CumSum", ["ln", "ax"], ["cs"]),
        helper.make_node("Trilu", ["cs"], ["tr"]),
        helper.make_node("Equal", ["mask", "zero"], ["m"]),
        helper.make_node("Cast", ["mask"], ["mf"], to=T.FLOAT),
        helper.make_node("Where", ["m", "neg", "mf"], ["w"]),
        helper.make_node("Expand", ["w", "shape"], ["ex"]),
        helper.make_node("GatherND", ["w", "gi"], ["gn"]),
        helper.make_node("ScatterND", ["w", "si", "su"], ["sc"], reduction="add"),
        helper.make_node("LSTM", ["x", "W", "R", "B", "sl"], ["y", "yh"], hidden_size=6),
        helper.make_node("GRU", ["x", "gW", "gR", "", "sl"], ["gy", "gyh"], hidden_size=3, direction="bidirectional",
                         linear_before_reset=1),
    ]
    ins = [helper.make_tensor_value_info("x", T.FLOAT, [5, 2, 4]), helper.make_tensor_value_info("sl", T.INT32, [2]),
           helper.make_tensor_value_info("mask", T.INT64, [2, 5]), helper.make_tensor_value_info("si", T.INT64, [3, 1]),
           helper.make_tensor_value_info("su", T.FLOAT, [3, 5])]
    outs = [helper.make_tensor_value_info(o, 0, None) for o in
            ("y", "yh", "gy", "gyh", "am", "tv", "ti", "tr", "ex", "sc", "gn")]
    g = helper.make_graph(nodes, "speech_ops", ins, outs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    return onnx.shape_inference.infer_shapes(m)


def test_speech_plan_matches_onnxruntime():
    rng = np.random.default_rng(22)
    feeds = {"x": f32(rng, 5, 2, 4), "sl": np.array([5, 3], np.int32), "mask": rng.integers(0, 2, (2, 5)),
             "si": np.array([[1], [0], [1]], np.int64), "su": f32(rng, 3, 5)}
    check(speech_plan_model(), feeds)


@pytest.mark.slow   # the sanitizer build of the harness (conftest.asan_build)
def test_mutated_speech_plans_never_crash(harness, tmp_path):
    import re as _re
    import subprocess
    p = tmp_path / "speech.eplan"
    edgeplan.compile(speech_plan_model()).save(p)
    r = subprocess.run([str(harness), "0", "0", str(p)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and ": ok" in r.stdout, r.stderr[-3000:]
    r = subprocess.run([str(harness), "4000", "20261130", str(p)], capture_output=True, text=True, timeout=1200,
                       env={"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1", "UBSAN_OPTIONS": "print_stacktrace=1"})
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 0, r.stderr[-3000:]
    m = _re.search(r"(\d+) mutated plans: (\d+) rejected by validate, (\d+) rejected at open, (\d+) opened and ran",
                   r.stdout)
    assert m and int(m.group(3)) > 100 and int(m.group(4)) > 20, r.stdout


from test_fuzz import harness  # noqa: E402,F401 — the ASan/UBSan build of tests/c/fuzz_plans.c

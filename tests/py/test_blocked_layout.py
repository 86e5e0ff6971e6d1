"""The channel-blocked layout C8 (plan_format.h "Tensor layouts", compiler/passes/layout.py): which tensors the
compiler blocks, that blocked plans compute what onnxruntime computes, and that the runtime refuses plans whose
layouts an op cannot read."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import edgeplan
from edgeplan.compiler.pipeline import compile_model
from edgeplan._cdef import K, ffi
from edgeplan.compiler.writer import crc32c
from edgeplan.plan import read_plan

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _small_models_go_c8(monkeypatch):
    """These models are small: without a reorder's fixed cost their regions pay (the cost rule itself is
    tested below, with it)."""
    from edgeplan.compiler.passes import layout
    monkeypatch.setattr(layout, "REORDER_OP_S", 0.0)


def _w(name, *shape, scale=0.3):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def _model(nodes, inits, x_shape, y_shape, extra_outputs=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)]
                          + [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in extra_outputs],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _inverted_residual(c=16, ce=48, hw=14, stride=1, act="Relu"):
    """expand 1x1 -> act -> depthwise 3x3 -> act -> project 1x1 -> + x -> q = r * sigmoid(r) -> q * s, a
    per-channel scale (a broadcast Mul, which reads plain tensors only)."""
    oh = (hw - 1) // stride + 1
    nodes = [helper.make_node("Conv", ["x", "we", "be"], ["e"], kernel_shape=[1, 1]),
             helper.make_node(act, ["e"], ["ea"]),
             helper.make_node("Conv", ["ea", "wd", "bd"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              group=ce, strides=[stride, stride]),
             helper.make_node(act, ["d"], ["da"]),
             helper.make_node("Conv", ["da", "wp", "bp"], ["p"], kernel_shape=[1, 1])]
    if stride == 1:
        nodes.append(helper.make_node("Add", ["p", "x"], ["r"]))
    else:
        nodes.append(helper.make_node("Identity", ["p"], ["r"]))
    nodes += [helper.make_node("Sigmoid", ["r"], ["sg"]),
              helper.make_node("Mul", ["r", "sg"], ["q"]),
              helper.make_node("Mul", ["q", "s"], ["y"])]
    inits = [_w("we", ce, c, 1, 1), _w("be", ce), _w("wd", ce, 1, 3, 3), _w("bd", ce), _w("wp", c, ce, 1, 1),
             _w("bp", c), _w("s", 1, c, 1, 1)]
    return _model(nodes, inits, [1, c, hw, hw], [1, c, oh, oh])


def _ort(model, x):
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


def _layouts(plan):
    p = read_plan(plan.to_bytes())
    return p, {t["name"]: t["layout"] for t in p["tensors"]}


@pytest.mark.parametrize("stride,act", [(1, "Relu"), (2, "Relu"), (1, "HardSigmoid")])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_depthwise_block_runs_blocked_and_matches_onnxruntime(stride, act, threads):
    m = _inverted_residual(stride=stride, act=act)
    x = RNG.standard_normal((1, 16, 14, 14)).astype(np.float32)
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    assert p["header"]["version"] == "1.12"
    variants = {(o["op"], o["variant"]) for o in p["ops"]}
    assert ("conv2d", K.EP_CONV2D_VARIANT_BLOCKED_DW) in variants
    assert ("conv2d", K.EP_CONV2D_VARIANT_BLOCKED_PW) in variants
    kinds = [o["op"] for o in p["ops"]]
    # x enters once (plain -> C8), the broadcast Mul needs plain (C8 -> plain); the rest stays plain
    assert kinds.count("reorder") == 2
    assert lay["x"] == 0 and lay["y"] == 0
    assert any(v == K.EP_LAYOUT_C8 for v in lay.values())
    assert "layout C8" in " ".join(plan.report["fused"])
    got = edgeplan.Session(plan, threads=threads).run({"x": x})["y"]
    want = _ort(m, x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_element_wise_ops_between_blocked_convs_stay_blocked():
    """dw -> Neg -> dw -> * (the Neg's output) -> 1x1: the element-wise ops read and write C8 tensors."""
    c = 24
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Conv", ["b", "w2"], ["d"], kernel_shape=[5, 5], pads=[2, 2, 2, 2], group=c),
             helper.make_node("Mul", ["d", "b"], ["e"]),
             helper.make_node("Conv", ["e", "w3"], ["y"], kernel_shape=[1, 1])]
    m = _model(nodes, [_w("w1", c, 1, 3, 3), _w("w2", c, 1, 5, 5), _w("w3", 8, c, 1, 1)], [2, c, 9, 11],
               [2, 8, 9, 11])
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    assert [o["op"] for o in p["ops"]].count("reorder") == 2   # x in, the 1x1's output (y) is plain
    for name in ("b", "d", "e"):
        assert lay[name] == K.EP_LAYOUT_C8, name
    x = RNG.standard_normal((2, c, 9, 11)).astype(np.float32)
    want = _ort(m, x)
    np.testing.assert_allclose(edgeplan.Session(plan).run({"x": x})["y"], want, rtol=1e-4, atol=1e-5)


def test_a_lone_pointwise_conv_and_the_generic_target_stay_plain(monkeypatch):
    from edgeplan.compiler.passes import layout
    monkeypatch.setattr(layout, "REORDER_OP_S", 4e-6)
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], kernel_shape=[1, 1]),
             helper.make_node("MaxPool", ["a"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    m = _model(nodes, [_w("w", 16, 16, 1, 1)], [1, 16, 8, 8], [1, 16, 4, 4])
    p, lay = _layouts(compile_model(m, target="x86-64"))
    assert not any(lay.values()) and "reorder" not in [o["op"] for o in p["ops"]]
    p, lay = _layouts(compile_model(_inverted_residual(), target="generic"))
    assert not any(lay.values()) and p["header"]["version"] != "1.12"


def test_channels_not_a_multiple_of_8_stay_plain():
    m = _inverted_residual(c=12, ce=36)
    plan = compile_model(m, target="x86-64")
    _, lay = _layouts(plan)
    assert not any(lay.values())
    x = RNG.standard_normal((1, 12, 14, 14)).astype(np.float32)
    np.testing.assert_allclose(edgeplan.Session(plan).run({"x": x})["y"], _ort(m, x), rtol=1e-4, atol=1e-4)


# ---- hostile plans: layouts an op cannot read are refused at open ----

def _patch_tensor(data: bytes, name: str, **fields) -> bytes:
    p = read_plan(data)
    sec = next(s for s in p["sections"] if s["kind"] == "tensors")
    i = next(k for k, t in enumerate(p["tensors"]) if t["name"] == name)
    buf = bytearray(data)
    rec = ffi.cast("ep_tensor_rec *", ffi.from_buffer(buf) + sec["offset"] + i * sec["record_size"])
    for k, v in fields.items():
        if k == "reserved":
            rec.reserved[0] = v
        else:
            setattr(rec, k, v)
    buf[12:16] = b"\0\0\0\0"
    buf[12:16] = crc32c(bytes(buf)).to_bytes(4, "little")
    return bytes(buf)


@pytest.fixture(scope="module")
def blocked_plan():
    return compile_model(_inverted_residual(), target="x86-64").to_bytes()


@pytest.mark.parametrize("name,fields,why", [
    ("x", dict(layout=K.EP_LAYOUT_C8), "C8 / NHWC layout needs"),       # a plan input
    ("y", dict(layout=K.EP_LAYOUT_C8), "C8 / NHWC layout needs"),       # a plan output
    ("ea", dict(layout=3), "unknown layout"),
    ("ea", dict(layout=K.EP_LAYOUT_NHWC), "C8 / NHWC layout needs"),    # 48 channels
    ("x", dict(layout=K.EP_LAYOUT_NHWC), "C8 / NHWC layout needs"),     # a plan input
    ("ea", dict(reserved=1), "unknown layout"),
    ("q:plain", dict(layout=K.EP_LAYOUT_C8), "inconsistent"),           # the broadcast Mul's input
    ("s", dict(layout=K.EP_LAYOUT_C8), "C8 / NHWC layout needs"),       # a constant
    ("ea", dict(layout=K.EP_LAYOUT_PLAIN), "inconsistent"),             # a BLOCKED conv's output made plain
])
def test_a_layout_an_op_cannot_read_is_refused_at_open(blocked_plan, name, fields, why):
    _, lay = _layouts(edgeplan.Plan(blocked_plan, {}))
    assert lay["ea"] == K.EP_LAYOUT_C8 and lay["q"] == K.EP_LAYOUT_C8 and lay["q:plain"] == K.EP_LAYOUT_PLAIN
    bad = _patch_tensor(blocked_plan, name, **fields)
    with pytest.raises(edgeplan.EdgeplanError, match=why):
        edgeplan.Session(bad)


def test_a_c8_tensor_with_channels_not_a_multiple_of_8_is_refused():
    m = _model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["y"])], [],
               [1, 12, 4, 4], [1, 12, 4, 4])
    data = compile_model(m, target="x86-64").to_bytes()
    with pytest.raises(edgeplan.EdgeplanError, match="C8 / NHWC layout needs"):
        edgeplan.Session(_patch_tensor(data, "a", layout=K.EP_LAYOUT_C8))


def _rewire(data: bytes, op: str, slot: int, name: str, was: str = None) -> bytes:
    """The plan with input `slot` of its first `op` pointed at tensor `name` (its CRC made right again)."""
    p = read_plan(data)
    names = [t["name"] for t in p["tensors"]]
    k = next(i for i, o in enumerate(p["ops"]) if o["op"] == op)
    ops = next(s for s in p["sections"] if s["kind"] == "ops")
    opio = next(s for s in p["sections"] if s["kind"] == "opio")
    buf = bytearray(data)
    rec = ffi.cast("ep_op_rec *", ffi.from_buffer(buf) + ops["offset"] + k * ops["record_size"])
    io = ffi.cast("uint32_t *", ffi.from_buffer(buf) + opio["offset"])
    assert was is None or io[rec.io_first + slot] == names.index(was)
    io[rec.io_first + slot] = names.index(name)
    buf[12:16] = b"\0\0\0\0"
    buf[12:16] = crc32c(bytes(buf)).to_bytes(4, "little")
    return bytes(buf)


def _c2f(c=16):
    """A YOLOv8-style C2f block: 1x1 conv -> Split (channels) -> 3x3 conv on one half -> Concat -> 1x1 conv."""
    h = c // 2
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["a"], ["ar"]),
             helper.make_node("Split", ["ar", "sp"], ["s0", "s1"], axis=1),
             helper.make_node("Conv", ["s1", "w2"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["b"], ["bs"]),
             helper.make_node("Mul", ["b", "bs"], ["bm"]),
             helper.make_node("Concat", ["s0", "s1", "bm"], ["cat"], axis=1),
             helper.make_node("Conv", ["cat", "w3"], ["y"], kernel_shape=[1, 1])]
    inits = [_w("w1", c, c, 1, 1), _w("w2", h, h, 3, 3), _w("w3", c, c + h, 1, 1),
             numpy_helper.from_array(np.array([h, h], np.int64), "sp")]
    return _model(nodes, inits, [1, c, 10, 12], [1, c, 10, 12])


def test_concat_and_split_along_channels_stay_blocked():
    m = _c2f()
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    kinds = {o["op"]: o for o in p["ops"]}
    assert "split" in kinds and "concat" in kinds
    t = p["tensors"]
    for op in ("split", "concat"):
        assert all(t[i]["layout"] == K.EP_LAYOUT_C8 for i in kinds[op]["inputs"] + kinds[op]["outputs"]), op
    variants = {o["variant"] for o in p["ops"] if o["op"] == "conv2d"}
    assert K.EP_CONV2D_VARIANT_BLOCKED_CONV in variants
    x = RNG.standard_normal((1, 16, 10, 12)).astype(np.float32)
    for threads in (1, 2):
        got = edgeplan.Session(plan, threads=threads).run({"x": x})["y"]
        np.testing.assert_allclose(got, _ort(m, x), rtol=1e-4, atol=1e-4)


def test_a_concat_of_mixed_layouts_is_refused():
    """A concat whose output alone is C8 (CONCAT moves whole chunks: its operands share one layout; the C8 axis
    rule is checked in tests/c/check_conv.c, chunk_layouts)."""
    m = _model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"]),
                helper.make_node("Concat", ["a", "b"], ["c"], axis=1), helper.make_node("Neg", ["c"], ["y"])],
               [], [1, 8, 3, 4], [1, 16, 3, 4])
    data = compile_model(m, target="x86-64").to_bytes()
    with pytest.raises(edgeplan.EdgeplanError, match=r"op 2 \(concat .*inconsistent"):
        edgeplan.Session(_patch_tensor(data, "c", layout=K.EP_LAYOUT_C8))


@pytest.mark.parametrize("pool", ["MaxPool", "AveragePool"])
def test_pooling_stays_blocked_and_global_pooling_leaves_the_region(pool):
    """stem 3x3 conv (reads the plain image) -> depthwise -> pool -> 1x1 -> GlobalAveragePool: no reorder at
    all, the pools take their C8 variants, and the global pool's [N,C,1,1] output is plain."""
    c = 16
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["a"], ["ar"]),
             helper.make_node("Conv", ["ar", "w1"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node(pool, ["b"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0],
                              **({"count_include_pad": 1} if pool == "AveragePool" else {})),
             helper.make_node("Conv", ["p", "w2"], ["q"], kernel_shape=[1, 1]),
             helper.make_node("GlobalAveragePool", ["q"], ["y"])]
    m = _model(nodes, [_w("w0", c, 3, 3, 3), _w("w1", c, 1, 3, 3), _w("w2", 24, c, 1, 1)], [2, 3, 21, 17],
               [2, 24, 1, 1])
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    ops = {o["op"]: o for o in p["ops"]}
    assert "reorder" not in ops
    pk = "maxpool" if pool == "MaxPool" else "avgpool"
    assert ops[pk]["variant"] == (K.EP_MAXPOOL_VARIANT_C8 if pk == "maxpool" else K.EP_AVGPOOL_VARIANT_C8)
    assert ops["global_avgpool"]["variant"] == K.EP_GLOBAL_AVGPOOL_VARIANT_C8
    assert lay["p"] == K.EP_LAYOUT_C8 and lay["y"] == K.EP_LAYOUT_PLAIN
    x = RNG.standard_normal((2, 3, 21, 17)).astype(np.float32)
    for threads in (1, 2):
        np.testing.assert_allclose(edgeplan.Session(plan, threads=threads).run({"x": x})["y"], _ort(m, x),
                                   rtol=1e-4, atol=1e-5)


def test_an_op_that_reads_plain_tensors_only_refuses_a_c8_operand():
    """Two depthwise convs (C8) then Softmax over the channels (plain only, after a reorder): a plan whose
    Softmax reads the C8 tensor itself is refused, naming the op."""
    c = 8
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Conv", ["a", "w2"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Softmax", ["b"], ["y"], axis=1)]
    m = _model(nodes, [_w("w1", c, 1, 3, 3), _w("w2", c, 1, 3, 3)], [1, c, 5, 5], [1, c, 5, 5])
    data = compile_model(m, target="x86-64").to_bytes()
    p = read_plan(data)
    names = [t["name"] for t in p["tensors"]]
    assert p["tensors"][names.index("b")]["layout"] == K.EP_LAYOUT_C8
    bad = _rewire(data, "softmax", 0, "b")   # the softmax reads b, not its plain copy
    edgeplan.Session(data)
    with pytest.raises(edgeplan.EdgeplanError, match=r"softmax.*layout is not one it takes"):
        edgeplan.Session(bad)


def test_a_squeeze_excite_vector_enters_c8_as_a_view():
    """depthwise -> GlobalAveragePool -> 1x1 -> 1x1 (the SE block's vector): the [N,C,1,1] pool output feeds the
    C8 1x1 convs as a view of the same bytes, with no REORDER op."""
    c = 16
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("GlobalAveragePool", ["a"], ["g"]),
             helper.make_node("Conv", ["g", "w2"], ["h"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["h"], ["hr"]),
             helper.make_node("Conv", ["hr", "w3"], ["y"], kernel_shape=[1, 1])]
    m = _model(nodes, [_w("w1", c, 1, 3, 3), _w("w2", 8, c, 1, 1), _w("w3", c, 8, 1, 1)], [2, c, 9, 9],
               [2, c, 1, 1])
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    t = {x["name"]: x for x in p["tensors"]}
    assert t["g"]["layout"] == K.EP_LAYOUT_PLAIN and t["g:c8"]["layout"] == K.EP_LAYOUT_C8
    assert t["g:c8"]["offset"] == t["g"]["offset"]
    assert [o["op"] for o in p["ops"]].count("reorder") == 1   # x in
    x = RNG.standard_normal((2, c, 9, 9)).astype(np.float32)
    np.testing.assert_allclose(edgeplan.Session(plan).run({"x": x})["y"], _ort(m, x), rtol=1e-4, atol=1e-5)


def _se_lab_resize(c=16, mode="nearest"):
    """A PP-LCNet / MobileNetV3-style stretch: depthwise -> * scalar + scalar (a learnable affine block) -> SE
    (GlobalAveragePool -> 1x1 -> Relu -> 1x1 -> HardSigmoid -> * x) -> - per-channel [C,1,1] -> Resize x2 ->
    1x1. The broadcast operands stay what they are (constants, the SE's [N,C,1,1] vector) and the resize runs
    on C8: no reorder inside."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Relu", ["a0"], ["a"]),
             helper.make_node("Mul", ["k", "a"], ["am"]),
             helper.make_node("Add", ["am", "t"], ["at"]),
             helper.make_node("GlobalAveragePool", ["at"], ["g"]),
             helper.make_node("Conv", ["g", "w2"], ["h"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["h"], ["hr"]),
             helper.make_node("Conv", ["hr", "w3"], ["e"], kernel_shape=[1, 1]),
             helper.make_node("HardSigmoid", ["e"], ["es"]),
             helper.make_node("Mul", ["at", "es"], ["se"]),
             helper.make_node("Sub", ["se", "pc"], ["sb"]),
             helper.make_node("Resize", ["sb", "", "sc"], ["r"], mode=mode),
             helper.make_node("Conv", ["r", "w4"], ["y"], kernel_shape=[1, 1])]
    inits = [_w("w1", c, 1, 3, 3), numpy_helper.from_array(np.array([1.5], np.float32), "k"),
             numpy_helper.from_array(np.array(0.25, np.float32), "t"), _w("w2", 8, c, 1, 1), _w("w3", c, 8, 1, 1),
             _w("pc", c, 1, 1), numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
             _w("w4", 8, c, 1, 1)]
    return _model(nodes, inits, [2, c, 7, 9], [2, 8, 14, 18])


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("threads", [1, 2])
def test_broadcast_operands_and_resize_stay_blocked(mode, threads):
    m = _se_lab_resize(mode=mode)
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    assert p["header"]["version"] == "1.13"
    for name in ("a", "am", "at", "se", "sb", "r"):
        assert lay[name] == K.EP_LAYOUT_C8, name
    assert lay["g"] == K.EP_LAYOUT_PLAIN and lay["k"] == lay["t"] == lay["pc"] == K.EP_LAYOUT_PLAIN
    assert ("resize", K.EP_RESIZE_VARIANT_C8) in {(o["op"], o["variant"]) for o in p["ops"]}
    assert [o["op"] for o in p["ops"]].count("reorder") == 2   # x in, r out (y, a plan output, is plain)
    x = RNG.standard_normal((2, 16, 7, 9)).astype(np.float32)
    want = _ort(m, x)
    got = edgeplan.Session(plan, threads=threads).run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize("name,fields,why", [
    ("t", dict(layout=K.EP_LAYOUT_C8), "C8 / NHWC layout needs"),   # a scalar constant
    ("r", dict(layout=K.EP_LAYOUT_PLAIN), "inconsistent"),   # RESIZE C8 writing a plain tensor
])
def test_broadcast_and_resize_layouts_are_checked_at_open(name, fields, why):
    data = compile_model(_se_lab_resize(), target="x86-64").to_bytes()
    edgeplan.Session(data)
    with pytest.raises(edgeplan.EdgeplanError, match=why):
        edgeplan.Session(_patch_tensor(data, name, **fields))


def test_a_full_size_plain_operand_of_a_c8_binary_is_refused():
    """A C8 BINARY broadcasts only per-channel, per-image and scalar operands: pointed at the plain x of the
    output's dims, the Mul is refused at open, naming the op."""
    c = 8
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Relu", ["a0"], ["a"]),
             helper.make_node("Mul", ["a", "k"], ["b"]),
             helper.make_node("Conv", ["b", "w2"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c)]
    m = _model(nodes, [_w("w1", c, 1, 3, 3), _w("k", c, 1, 1), _w("w2", c, 1, 3, 3)], [1, c, 5, 5], [1, c, 5, 5])
    data = compile_model(m, target="x86-64").to_bytes()
    p = read_plan(data)
    names = [t["name"] for t in p["tensors"]]
    assert p["tensors"][names.index("b")]["layout"] == K.EP_LAYOUT_C8
    bad = _rewire(data, "binary", 1, "x", was="k")   # the Mul's B: the plain input, [1, 8, 5, 5]
    edgeplan.Session(data)
    with pytest.raises(edgeplan.EdgeplanError, match=r"binary"):
        edgeplan.Session(bad)


def _blaze_block(c=16, pad=8, hw=12, spatial=False):
    """BlazeFace's block: depthwise 3x3 -> 1x1 to c + pad channels, + the input padded with zero channels (its
    channel_padding), Relu; optionally a spatial Pad of the result (constant 0.5)."""
    nodes = [helper.make_node("Conv", ["x", "wd"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Conv", ["d", "wp", "bp"], ["p"], kernel_shape=[1, 1]),
             helper.make_node("Conv", ["x", "wq"], ["q"], kernel_shape=[1, 1]),
             helper.make_node("Pad", ["q", "pads"], ["qp"]),
             helper.make_node("Add", ["p", "qp"], ["s"]),
             helper.make_node("Relu", ["s"], ["r"])]
    m = c + pad
    if spatial:
        nodes += [helper.make_node("Pad", ["r", "sp", "half"], ["rp"]),
                  helper.make_node("Conv", ["rp", "wz"], ["y"], kernel_shape=[3, 3], group=m)]
    else:
        nodes.append(helper.make_node("Conv", ["r", "wz"], ["y"], kernel_shape=[1, 1]))
    inits = [_w("wd", c, 1, 3, 3), _w("wp", m, c, 1, 1), _w("bp", m), _w("wq", c, c, 1, 1),
             numpy_helper.from_array(np.array([0, 0, 0, 0, 0, pad, 0, 0], np.int64), "pads"),
             _w("wz", m, 1, 3, 3) if spatial else _w("wz", 8, m, 1, 1),
             numpy_helper.from_array(np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "sp"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    return _model(nodes, inits, [1, c, hw, hw], None)


@pytest.mark.parametrize("spatial", [False, True])
def test_a_channel_pad_of_whole_blocks_stays_blocked(spatial):
    """Pad along the channels by whole blocks (and a spatial Pad) runs on C8 (plan 1.14): the region is not cut
    at the pad, and the result is onnxruntime's."""
    m = _blaze_block(spatial=spatial)
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    assert p["header"]["version"] == "1.14"
    assert lay["qp"] == K.EP_LAYOUT_C8 and (not spatial or lay["rp"] == K.EP_LAYOUT_C8)
    assert [o["op"] for o in p["ops"]].count("reorder") == 2   # x in, y out
    x = RNG.standard_normal((1, 16, 12, 12)).astype(np.float32)
    want = _ort(m, x)
    np.testing.assert_allclose(edgeplan.Session(plan).run({"x": x})["y"], want, rtol=1e-4,
                               atol=1e-4 * float(np.abs(want).max()))


def test_a_channel_pad_of_part_of_a_block_stays_plain():
    """16 -> 32 channels pads two blocks; 16 -> 20 (not a multiple of 8) leaves the padded tensor plain."""
    assert _layouts(compile_model(_blaze_block(pad=16), target="x86-64"))[1]["qp"] == K.EP_LAYOUT_C8
    assert _layouts(compile_model(_blaze_block(pad=4), target="x86-64"))[1]["qp"] == K.EP_LAYOUT_PLAIN


@pytest.mark.parametrize("slopes", [(1, 24, 1, 1), (24, 1, 1), (1,)])
def test_prelu_after_a_blocked_conv_becomes_its_epilogue(slopes):
    """dw -> 1x1 (+ residual) -> PRelu -> 1x1: the PRelu is the 1x1's epilogue (per-channel slopes: plan 1.14,
    one slope: LEAKY_RELU), no element-wise op is left, and the result is onnxruntime's."""
    c = 24
    nodes = [helper.make_node("Conv", ["x", "wd"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Conv", ["d", "wp", "bp"], ["p"], kernel_shape=[1, 1]),
             helper.make_node("Add", ["p", "x"], ["s"]),
             helper.make_node("PRelu", ["s", "slope"], ["a"]),
             helper.make_node("Conv", ["a", "wz"], ["y"], kernel_shape=[1, 1])]
    m = _model(nodes, [_w("wd", c, 1, 3, 3), _w("wp", c, c, 1, 1), _w("bp", c), _w("slope", *slopes, scale=0.5),
                       _w("wz", 8, c, 1, 1)], [1, c, 10, 10], None)
    plan = compile_model(m, target="x86-64")
    p, _ = _layouts(plan)
    assert "binary" not in [o["op"] for o in p["ops"]]
    assert p["header"]["version"] == ("1.14" if len(slopes) > 1 else "1.12")
    x = RNG.standard_normal((1, c, 10, 10)).astype(np.float32)
    want = _ort(m, x)
    np.testing.assert_allclose(edgeplan.Session(plan).run({"x": x})["y"], want, rtol=1e-4,
                               atol=1e-4 * float(np.abs(want).max()))



def _nhwc_stem(c=3, hw=(17, 20)):
    """A channels-last image [1, H, W, c] -> Transpose -> 3x3 stride-2 stem (16) -> Relu -> depthwise -> 1x1 (8)."""
    nodes = [helper.make_node("Transpose", ["x", ], ["t"], perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["t", "ws", "bs"], ["a"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["ar"]),
             helper.make_node("Conv", ["ar", "wd"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16),
             helper.make_node("Conv", ["d", "wp"], ["y"], kernel_shape=[1, 1])]
    inits = [_w("ws", 16, c, 3, 3), _w("bs", 16), _w("wd", 16, 1, 3, 3), _w("wp", 8, 16, 1, 1)]
    return _model(nodes, inits, [1, hw[0], hw[1], c], None)


@pytest.mark.parametrize("c", [2, 3, 4, 8])
def test_a_channels_last_image_enters_the_stem_without_a_transpose(c):
    """Transpose (NHWC -> NCHW) -> a C8 stem: the Transpose's output is a view of the image in layout NHWC (plan
    1.14), no op moves it, and the result is onnxruntime's."""
    m = _nhwc_stem(c)
    plan = compile_model(m, target="x86-64")
    p, lay = _layouts(plan)
    assert p["header"]["version"] == "1.14"
    assert "transpose" not in [o["op"] for o in p["ops"]] and lay["t"] == K.EP_LAYOUT_NHWC
    x = RNG.standard_normal((1, 17, 20, c)).astype(np.float32)
    want = _ort(m, x)
    for threads in (1, 2):
        np.testing.assert_allclose(edgeplan.Session(plan, threads=threads).run({"x": x})["y"], want, rtol=1e-4,
                                   atol=1e-4 * float(np.abs(want).max()))


def test_an_nhwc_tensor_is_a_stems_input_only():
    """An NHWC tensor read by another op than a convolution, or more than 8 channels transposed, is refused or
    left to the Transpose."""
    data = compile_model(_nhwc_stem(3), target="x86-64").to_bytes()
    with pytest.raises(edgeplan.EdgeplanError, match="layout is not one it takes"):
        edgeplan.Session(_rewire(data, "conv2d", 2, "t"))   # the stem's bias
    p, lay = _layouts(compile_model(_nhwc_stem(9), target="x86-64"))
    assert "transpose" in [o["op"] for o in p["ops"]] and K.EP_LAYOUT_NHWC not in lay.values()

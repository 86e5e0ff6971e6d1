"""Packed kernel variants end to end: kernel selection (compiler/passes/select.py and the ops' SELECT rules),
the pre-packed weight layouts, the C shape functions' checks, and the zoo models against onnxruntime with the packed variants,
on the AVX2+FMA kernels and with the CPU features masked off (the portable reference fallbacks)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import onnxruntime as ort
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K
from edgeplan.compiler.graph import Graph, Op, Tensor
from edgeplan.compiler.target import Target, get_target
from edgeplan.compiler.ops import conv, linear, rnn
from edgeplan.compiler.passes import select
from edgeplan.compiler.pipeline import compile_graph, compile_model

from conftest import rel_err, zoo

F32 = np.dtype(np.float32)
NO_AVX2 = 1 << 62          # nonzero mask with the AVX2/FMA bits clear: the reference variants run
ZOO = [("tiny", {}), ("mobilenetv2", {"size": 64}), ("resnet50", {"size": 64}), ("yolo", {"size": 128})]


def _ort(model, x):
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})


@pytest.mark.parametrize("name,kw", ZOO, ids=[n for n, _ in ZOO])
def test_zoo_packed_matches_onnxruntime(name, kw):
    model = zoo().build(name, **kw)
    plan = compile_model(model, target="x86-64")
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    ref = _ort(model, x)
    for mask in (0, NO_AVX2):
        sess = Session(plan, cpu_features_mask=mask)
        got = sess.run({sess.inputs[0].name: x})
        for g, r in zip(got.values(), ref):
            assert g.shape == r.shape
            assert rel_err(g, r) <= 1e-4, (name, hex(mask), rel_err(g, r))


def test_zoo_uses_the_variants_and_needs_no_features():
    model = zoo().build("mobilenetv2", size=64)
    from edgeplan.compiler.frontend import lower
    g = lower(model)
    select.select_kernels(g, "x86-64")
    variants = {(op.kind, op.variant) for op in g.ops}
    assert ("conv2d", K.EP_CONV2D_VARIANT_PACKED) in variants
    assert ("conv2d", K.EP_CONV2D_VARIANT_DW_C8) in variants      # every map is narrower than 32
    assert ("conv2d", K.EP_CONV2D_VARIANT_DIRECT) in variants     # the 3-channel stride-2 stem
    assert ("gemm", K.EP_GEMM_VARIANT_PACKED) in variants
    plan = compile_model(model, target="x86-64")
    from edgeplan.runtime import plan_info
    assert plan_info(plan.data)["required_features"] == 0
    assert plan.data[6:8] == (12).to_bytes(2, "little")           # 1.12: the C8 layout (DW_C8, DIRECT: 1.10)
    flat = compile_model(model, target=dataclasses.replace(get_target("x86-64"), blocked=False))
    assert flat.data[6:8] == (10).to_bytes(2, "little")           # 1.10: DW_C8 and DIRECT
    generic = compile_model(model, target="generic")
    assert generic.report["arena_bytes"] <= plan.report["arena_bytes"]


def _conv_graph(c=5, m=11, h=9, w=13, k=3, stride=1, groups=1, act=K.EP_ACT_RELU, seed=0, residual=True):
    rng = np.random.default_rng(seed)
    x = Tensor("x", F32, (1, c, h, w), is_input=True)
    wt = Tensor("w", F32, (m, c // groups, k, k), data=rng.standard_normal((m, c // groups, k, k)).astype(np.float32))
    b = Tensor("b", F32, (m,), data=rng.standard_normal(m).astype(np.float32))
    oh, ow = (h + 2 * (k // 2) - k) // stride + 1, (w + 2 * (k // 2) - k) // stride + 1
    r = Tensor("r", F32, (1, m, oh, ow), is_input=True)
    y = Tensor("y", F32, (1, m, oh, ow), is_output=True)
    p = dict(kernel=[k, k], stride=[stride, stride], dilation=[1, 1], pads=[k // 2] * 4, groups=groups, act=act,
             act_alpha=0.0, act_beta=0.0)
    ins = [x, wt, b, r] if residual else [x, wt, b]
    op = Op("conv2d", ins, [y], p, name="conv")
    return Graph([x, wt, b, y] + ([r] if residual else []), [op], [x, r] if residual else [x], [y])


WINO_ANY = Target("winograd-any", packed=True, winograd=True, pack_bytes=64 * 1024, winograd_budget=100.0,
                  winograd_min_channels=16, winograd_min_pixels=64)


@pytest.mark.parametrize("case", [dict(), dict(k=1), dict(k=1, stride=2), dict(k=5, stride=2, m=40, c=7),
                                  dict(c=8, m=8, groups=8), dict(c=6, m=6, groups=6, stride=2, k=5),
                                  dict(c=16, m=20, h=17, w=23), dict(c=33, m=16, h=30, w=9),
                                  dict(c=12, m=18, groups=3, k=1), dict(c=12, m=21, groups=3, k=3, stride=2),
                                  dict(c=8, m=16, groups=8, k=3), dict(c=32, m=64, groups=4, h=19, w=21),
                                  dict(c=11, m=11, groups=11, h=6, w=70), dict(c=17, m=17, groups=17, stride=2, w=30),
                                  dict(c=3, m=16, stride=2, h=20, w=37), dict(c=3, m=13, k=5, stride=2),
                                  dict(c=4, m=32, stride=2, h=11, w=50, residual=False), dict(c=3, m=16, h=12, w=40),
                                  dict(k=1, c=40, m=37, h=7, w=8), dict(k=1, c=300, m=16, h=5, w=5, act=K.EP_ACT_NONE),
                                  dict(c=40, m=37, h=3, w=4), dict(c=24, m=20, h=2, w=5, stride=2, k=5),
                                  dict(c=20, m=18, h=1, w=7, residual=False)])
def test_conv_variants_match_generic(case):
    feeds = None
    outs = []
    for target in ("generic", "x86-64", WINO_ANY):
        g = _conv_graph(**case)
        plan = compile_graph(g, target=target)
        if target != "generic":
            assert g.ops[0].variant != 0
        if feeds is None:
            rng = np.random.default_rng(1)
            feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in g.inputs}
        for mask in ((0,) if target == "generic" else (0, NO_AVX2)):
            outs.append(Session(plan, cpu_features_mask=mask).run(feeds)["y"])
        if (target is WINO_ANY and case.get("c", 5) >= 16 and case.get("groups", 1) == 1 and case.get("k", 3) == 3
                and case.get("stride", 1) == 1 and case.get("h", 9) * case.get("w", 13) >= WINO_ANY.winograd_min_pixels):
            assert g.ops[0].variant == K.EP_CONV2D_VARIANT_WINOGRAD
        if target == "x86-64":
            c, groups, stride = case.get("c", 5), case.get("groups", 1), case.get("stride", 1)
            if groups == c == case.get("m", 11):   # depthwise: 8 channels at a time below 32 columns
                wide = case.get("w", 13) // stride >= 32
                assert g.ops[0].variant == (K.EP_CONV2D_VARIANT_DEPTHWISE if wide else K.EP_CONV2D_VARIANT_DW_C8)
            if groups == 1 and c <= 16 and case.get("k", 3) > 1 and case.get("m", 11) <= (32 if stride > 1 else 16):
                assert g.ops[0].variant == K.EP_CONV2D_VARIANT_DIRECT
            if groups == 1 and case.get("k", 3) == 1 and stride == 1:   # 1x1 on maps of <= 64 pixels
                small = case.get("h", 9) * case.get("w", 13) <= 64
                assert g.ops[0].variant == (K.EP_CONV2D_VARIANT_POINTWISE if small else K.EP_CONV2D_VARIANT_PACKED)
            y = g.ops[0].outputs[0].shape
            if groups == 1 and c > 16 and case.get("k", 3) > 1 and y[2] * y[3] <= 12:   # k x k, few pixels
                assert g.ops[0].variant == K.EP_CONV2D_VARIANT_POINTWISE
                assert int.from_bytes(plan.to_bytes()[6:8], "little") == 11   # POINTWISE past 1x1 needs 1.11
    for o in outs[1:]:
        assert rel_err(o, outs[0]) <= 1e-5


def _conv1d_model(r, dil, c, m, w, rng):
    """Conv (1 x r, dilated, padded to keep the length, + bias), then a residual Add when c == m, then Relu."""
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
    pad = (r - 1) * dil // 2
    wt = (rng.standard_normal((m, c, 1, r)) / np.sqrt(c * r)).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["a"], kernel_shape=[1, r], dilations=[1, dil],
                         pads=[0, pad, 0, (r - 1) * dil - pad]),
             h.make_node("Relu", ["a"], ["y"])]
    if c == m:
        nodes[1:] = [h.make_node("Add", ["a", "x"], ["s"]), h.make_node("Relu", ["s"], ["y"])]
    g = h.make_graph(nodes, "w1d", [h.make_tensor_value_info("x", T.FLOAT, [1, c, 1, w])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(wt, "w"), nh.from_array(rng.standard_normal(m).astype(np.float32), "b")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("r,dil,c,m,w", [(3, 1, 64, 64, 50), (4, 1, 64, 80, 37), (5, 2, 96, 64, 61), (6, 1, 64, 64, 33),
                                         (7, 3, 64, 70, 120), (5, 1, 192, 384, 96), (3, 12, 64, 64, 200)])
def test_winograd_1d_matches_onnxruntime(r, dil, c, m, w):
    """A 1-D convolution (+ bias, a residual, Relu) takes WINOGRAD_1D on x86-64 (plan 1.15; a budget for the
    filters' growth, up to 8/3 here, that a one-layer model would otherwise exceed) and gives onnxruntime's
    outputs within 1e-5, on AVX2 and on the reference kernel."""
    rng = np.random.default_rng(r * 100 + dil)
    model = _conv1d_model(r, dil, c, m, w, rng)
    plan = compile_model(model, target=dataclasses.replace(get_target("x86-64"), winograd_budget=100.0))
    assert int.from_bytes(plan.to_bytes()[6:8], "little") == 15, plan.report["op_counts"]
    x = rng.standard_normal((1, c, 1, w)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for mask in (0, NO_AVX2):
        assert rel_err(Session(plan, cpu_features_mask=mask).run({"x": x})["y"], want) <= 1e-5


def test_winograd_1d_leaves_narrow_layers_packed():
    """32 channels (its transforms outweigh its savings there), or r = 9: the packed variant."""
    for r, c in ((3, 32), (9, 64)):
        plan = compile_model(_conv1d_model(r, 1, c, c, 200, np.random.default_rng(0)),
                             target=dataclasses.replace(get_target("x86-64"), winograd_budget=100.0))
        assert int.from_bytes(plan.to_bytes()[6:8], "little") < 15


def test_winograd_stays_within_the_size_budget():
    model = zoo().build("resnet50", size=64)
    generic = compile_model(model, target="generic")
    plan = compile_model(model, target="x86-64")
    assert plan.report["const_bytes"] <= 1.55 * generic.report["const_bytes"]
    assert compile_model(model, target="x86-64-compact").report["const_bytes"] <= 1.02 * generic.report["const_bytes"]


def test_gemm_packed_matches_numpy():
    rng = np.random.default_rng(3)
    m, k, n = 3, 37, 45
    a = Tensor("a", F32, (m, k), is_input=True)
    b = Tensor("b", F32, (k, n), data=rng.standard_normal((k, n)).astype(np.float32))
    c = Tensor("c", F32, (n,), data=rng.standard_normal(n).astype(np.float32))
    y = Tensor("y", F32, (m, n), is_output=True)
    op = Op("gemm", [a, b, c], [y], dict(act=K.EP_ACT_NONE, act_alpha=0.0, act_beta=0.0, reserved=0))
    bd, cd = b.data, c.data
    g = Graph([a, b, c, y], [op], [a], [y])
    plan = compile_graph(g, target="x86-64")
    assert op.variant == K.EP_GEMM_VARIANT_PACKED and op.inputs[1].shape == (3, k, 16)
    x = rng.standard_normal((m, k)).astype(np.float32)
    for mask in (0, NO_AVX2):
        np.testing.assert_allclose(Session(plan, cpu_features_mask=mask).run(a=x)["y"], x @ bd + cd, rtol=1e-4,
                                   atol=1e-4)


def test_packing_layouts():
    w = np.arange(7 * 2 * 3 * 3, dtype=np.float32).reshape(7, 2, 3, 3)
    p = conv.pack_conv_weights(w)
    assert p.shape == (2, 18, 6)
    assert p[0, 5, 3] == w[3].reshape(-1)[5] and p[1, 4, 0] == w[6].reshape(-1)[4] and not p[1, :, 1:].any()
    # groups: each group's rows as panels, one group after another
    g = conv.pack_conv_weights(np.concatenate([w, -w]), groups=2)
    assert g.shape == (4, 18, 6)
    assert (g[:2] == p).all() and (g[2:] == -p).all()
    b = np.arange(5 * 20, dtype=np.float32).reshape(5, 20)
    q = linear.pack_gemm_b(b)
    assert q.shape == (2, 5, 16) and q[1, 2, 3] == b[2, 19] and not q[1, :, 4:].any()


def test_scratch_too_small_is_refused():
    g = _conv_graph(c=20, m=24, residual=False)   # PACKED (more channels than DIRECT takes)
    plan = compile_graph(g, target="x86-64")
    assert g.ops[0].variant == K.EP_CONV2D_VARIANT_PACKED and g.ops[0].scratch >= 20 * 9 * 16 * 4
    g2 = _conv_graph(c=20, m=24, residual=False)
    select.select_kernels(g2, "x86-64")
    g2.ops[0].scratch = 20 * 9 * 16 * 4 - 64     # less than one im2col strip
    bad = compile_graph(g2, target="x86-64")
    with pytest.raises(EdgeplanError, match="scratch"):
        Session(bad)
    Session(plan)


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target"):
        get_target("z80")


# ---- ConvTranspose: the polyphase packed variant (EP_CONV_TRANSPOSE2D_VARIANT_PACKED) ----

def _ct_graph(c=5, m=7, h=1, w=13, k=(1, 16), stride=(1, 8), dil=(1, 1), pads=(0, 4, 0, 4), opad=(0, 0),
              groups=1, act=K.EP_ACT_NONE, alpha=0.0, seed=0, bias=True):
    rng = np.random.default_rng(seed)
    x = Tensor("x", F32, (1, c, h, w), is_input=True)
    wd = rng.standard_normal((c, m // groups, *k)).astype(np.float32)
    wt = Tensor("w", F32, wd.shape, data=wd)
    b = Tensor("b", F32, (m,), data=rng.standard_normal(m).astype(np.float32)) if bias else None
    out = [(i - 1) * s - pb - pe + (kk - 1) * d + 1 + op
           for i, s, pb, pe, kk, d, op in zip((h, w), stride, pads[:2], pads[2:], k, dil, opad)]
    y = Tensor("y", F32, (1, m, *out), is_output=True)
    p = dict(kernel=list(k), stride=list(stride), dilation=list(dil), pads=list(pads), output_padding=list(opad),
             groups=groups, act=act, act_alpha=alpha, act_beta=0.0)
    op = Op("conv_transpose2d", [x, wt, b], [y], p, name="ct")
    return Graph([t for t in (x, wt, b, y) if t is not None], [op], [x], [y])


CT_CASES = [dict(), dict(c=64, m=32, w=40, act=K.EP_ACT_LEAKY_RELU, alpha=0.1),          # HiFi-GAN x8
            dict(c=16, m=8, w=33, k=(1, 8), stride=(1, 4), pads=(0, 2, 0, 2), bias=False),  # HiFi-GAN x4
            dict(c=6, m=5, h=7, w=9, k=(4, 4), stride=(2, 2), pads=(1, 1, 1, 1)),           # 2-D k4 s2 p1
            dict(c=3, m=20, h=5, w=6, k=(3, 3), stride=(2, 2), pads=(1, 1, 1, 1), opad=(1, 1), act=K.EP_ACT_RELU),
            dict(c=4, m=3, h=6, w=5, k=(3, 2), stride=(1, 3), dil=(2, 1), pads=(2, 0, 1, 1), opad=(1, 2)),
            dict(c=7, m=9, h=4, w=11, k=(3, 3), stride=(1, 1), pads=(1, 1, 1, 1)),
            dict(c=4, m=6, h=5, w=5, k=(3, 3), stride=(2, 2), groups=2, pads=(1, 1, 1, 1))]


@pytest.mark.parametrize("case", CT_CASES, ids=[str(i) for i in range(len(CT_CASES))])
def test_conv_transpose_packed_matches_generic(case):
    outs, feeds = [], None
    for target in ("generic", "x86-64", "aarch64"):
        g = _ct_graph(**case)
        plan = compile_graph(g, target=target)
        expect = K.EP_VARIANT_DEFAULT if target == "generic" or case.get("groups", 1) != 1 \
            else K.EP_CONV_TRANSPOSE2D_VARIANT_PACKED
        assert g.ops[0].variant == expect, target
        if feeds is None:
            feeds = {"x": np.random.default_rng(1).standard_normal(g.inputs[0].shape).astype(np.float32)}
        masks = (0,) if target == "generic" else (0, NO_AVX2)
        for mask in masks:
            outs.append((target, mask, Session(plan, cpu_features_mask=mask).run(feeds)["y"]))
    ref = outs[0][2]
    for target, mask, o in outs[1:]:
        if mask == NO_AVX2 or target == "generic":
            assert np.array_equal(o, ref), (target, hex(mask))   # the reference variant: variant 0's bits
        assert rel_err(o, ref) <= 1e-5, (target, hex(mask), rel_err(o, ref))


def test_conv_transpose_packing_layout():
    w = np.arange(3 * 2 * 1 * 4, dtype=np.float32).reshape(3, 2, 1, 4) + 1   # C 3, M 2, k (1, 4), stride 2
    p = conv.pack_conv_transpose_weights(w, (1, 2), (1, 1))
    # R = M*1*2 = 4 columns (m, fw), K = C*1*2 = 6 rows (c, jw); tap kw -> phase kw % 2, shift index kw // 2
    assert p.shape == (1, 6, 16) and not p[:, :, 4:].any()
    for c in range(3):
        for m in range(2):
            for kw in range(4):
                assert p[0, c * 2 + kw // 2, m * 2 + kw % 2] == w[c, m, 0, kw]
    assert np.count_nonzero(p) == w.size
    # k 3 s 2: phase 1 has one tap, so one zero per (c, m) pair; dilation >= stride: one shift per tap
    assert conv.ct_taps(3, 2, 1) == 2 and conv.ct_taps(3, 1, 2) == 3 and conv.ct_taps(16, 8, 1) == 2


def test_hifigan_uses_the_variant_and_keeps_its_size():
    from models import build
    from edgeplan.compiler.frontend import lower
    model = build("hifigan")
    g = lower(model, shapes={"mel": (1, 80, 16)})
    cts = [op for op in g.ops if op.kind == "conv_transpose2d"]
    before = [op.inputs[1].nbytes for op in cts]
    select.select_kernels(g, "x86-64-compact")
    assert len(cts) == 3 and all(op.variant == K.EP_CONV_TRANSPOSE2D_VARIANT_PACKED for op in cts)
    # kernel 2r, stride r: the phase weights are the plain ones reordered (M*r is a multiple of 16 here)
    assert [op.inputs[1].nbytes for op in cts] == before
    for op in cts:   # scratch: one panel at least, within the target's pass budget
        k = op.inputs[1].shape[1]
        assert k * 6 * 4 <= op.scratch <= max(k * 6 * 4, 256 * 1024)
    g2 = _ct_graph(k=(3, 3), stride=(2, 2), h=5, w=5, pads=(1, 1, 1, 1))   # 16/9 growth: not on compact
    select.select_kernels(g2, "x86-64-compact")
    assert g2.ops[0].variant == K.EP_VARIANT_DEFAULT


def test_conv_transpose_scratch_too_small_is_refused():
    g = _ct_graph()
    select.select_kernels(g, "x86-64")
    g.ops[0].scratch = g.ops[0].inputs[1].shape[1] * 6 * 4 - 64   # less than one input panel (plans align to 64)
    with pytest.raises(EdgeplanError, match="scratch"):
        Session(compile_graph(g, target="x86-64"))


# ---- MATMUL (both operands at run time), SOFTMAX, LAYERNORM, MAXPOOL / AVGPOOL, LSTM / GRU ----
# One-op plans run on the AVX2 kernels, with the features masked (the reference kernels) and on 2 threads.
# Tolerances: the kernel checks (tests/c/check_*.c) bound each op; here end to end, max-relative.

def _one_op(kind, ins, outs, params, consts=None, seed=0):
    rng = np.random.default_rng(seed)
    consts = consts or {}
    tin, feeds = [], {}
    for i, shape in enumerate(ins):
        if i in consts:
            tin.append(Tensor(f"c{i}", F32, tuple(shape), data=consts[i]))
        else:
            t = Tensor(f"x{i}", F32, tuple(shape), is_input=True)
            tin.append(t)
            feeds[t.name] = rng.standard_normal(shape).astype(np.float32)
    tout = [Tensor(f"y{i}", F32, tuple(s), is_output=True) for i, s in enumerate(outs)]
    op = Op(kind, tin, tout, params, name=kind)
    return Graph(tin + tout, [op], [t for t in tin if t.is_input], tout), feeds


def _rnn_graph(kind, t, b, i, h, d=1, lbr=0, layout=0):
    g_ = 4 if kind == "lstm" else 3
    rng = np.random.default_rng(5)
    s = 1 / np.sqrt(h)
    w = rng.uniform(-s, s, (d, g_ * h, i)).astype(np.float32)
    r = rng.uniform(-s, s, (d, g_ * h, h)).astype(np.float32)
    bias = rng.uniform(-s, s, (d, 2 * g_ * h)).astype(np.float32)
    state = (b, d, h) if layout else (d, b, h)
    outs = [(b, t, d, h) if layout else (t, d, b, h), state] + ([state] if kind == "lstm" else [])
    p = dict(hidden_size=h, direction=2 if d == 2 else 0, layout=layout,
             linear_before_reset=lbr if kind == "gru" else 0, clip=0.0)
    graph, feeds = _one_op(kind, [(b, t, i) if layout else (t, b, i), w.shape, r.shape, bias.shape], outs, p,
                           consts={1: w, 2: r, 3: bias})
    graph.ops[0].scratch = (2 + g_) * h * 4   # what lowering sets
    return graph, feeds


ISSUE6 = {
    "matmul_attn": (lambda: _one_op("matmul", [(1, 4, 37, 20), (1, 4, 20, 37)], [(1, 4, 37, 37)], {}), 1e-5),
    "matmul_bcast": (lambda: _one_op("matmul", [(3, 1, 9, 300), (5, 300, 21)], [(3, 5, 9, 21)], {}), 1e-5),
    "softmax_last": (lambda: _one_op("softmax", [(2, 3, 45)], [(2, 3, 45)], dict(axis=2, log=0)), 1e-5),
    "logsoftmax_mid": (lambda: _one_op("softmax", [(2, 13, 11)], [(2, 13, 11)], dict(axis=1, log=1)), 1e-5),
    "layernorm": (lambda: _one_op("layernorm", [(5, 7, 19), (133,), (133,)], [(5, 7, 19)],
                                  dict(axis=1, epsilon=1e-5)), 1e-6),
    "maxpool": (lambda: _one_op("maxpool", [(1, 3, 17, 33)], [(1, 3, 9, 17)],
                                dict(kernel=[3, 3], stride=[2, 2], dilation=[1, 1], pads=[1, 1, 1, 1],
                                     count_include_pad=0, ceil_mode=0)), 0.0),
    "avgpool": (lambda: _one_op("avgpool", [(1, 3, 17, 33)], [(1, 3, 17, 33)],
                                dict(kernel=[3, 3], stride=[1, 1], dilation=[1, 1], pads=[1, 1, 1, 1],
                                     count_include_pad=1, ceil_mode=0)), 0.0),
    "gru_lbr": (lambda: _rnn_graph("gru", 40, 1, 24, 33, lbr=1), 1e-5),
    "gru_bidir_layout1": (lambda: _rnn_graph("gru", 9, 3, 10, 12, d=2, layout=1), 1e-5),
    "lstm_bidir": (lambda: _rnn_graph("lstm", 30, 2, 17, 20, d=2), 1e-5),
}


@pytest.mark.parametrize("name", list(ISSUE6))
def test_issue6_kernels_match_the_reference(name):
    make, tol = ISSUE6[name]
    graph, feeds = make()
    plan = compile_graph(graph, target="x86-64")
    ref = Session(plan, cpu_features_mask=NO_AVX2).run(feeds)
    got = Session(plan).run(feeds)
    two = Session(plan, threads=2).run(feeds)
    for k in ref:
        assert got[k].shape == ref[k].shape
        assert rel_err(got[k], ref[k]) <= tol, (name, k, rel_err(got[k], ref[k]))
        np.testing.assert_array_equal(two[k], got[k])   # the same bits on any number of threads


def test_rnn_scratch_holds_the_hoisted_projection():
    """Packed targets give LSTM / GRU room for RNN_CHUNK projected steps (variant 0 either way: the
    reference ignores the extra), generic only the minimum; both plans give the same results."""
    t, h = 40, 33
    g1, feeds = _rnn_graph("gru", t, 1, 24, h, lbr=1)
    p1 = compile_graph(g1, target="x86-64")
    assert g1.ops[0].variant == K.EP_VARIANT_DEFAULT
    assert g1.ops[0].scratch == (2 + 3) * h * 4 + min(t, rnn.RNN_CHUNK) * 3 * h * 4
    g2, _ = _rnn_graph("gru", t, 1, 24, h, lbr=1)
    p2 = compile_graph(g2, target="generic")
    assert g2.ops[0].scratch == (2 + 3) * h * 4
    assert rnn.rnn_scratch(4, 1 << 16, 100, 256 * 1024) == 6 * (1 << 16) * 4   # a row over the budget: none
    a, b = Session(p1).run(feeds), Session(p2).run(feeds)
    for k in a:
        assert rel_err(a[k], b[k]) <= 1e-6


def test_tied_embedding_is_stored_once():
    """A decoder's logits Gemm (transB) over its token table: GEMM ROWS reads the table the Gather holds, so
    the plan keeps one copy; the result matches onnxruntime on AVX2 and on the reference, and the plan is 1.5."""
    import onnx
    from onnx import TensorProto as TP, helper as oh, numpy_helper as nh
    from edgeplan.plan import query
    V, D = 3000, 96
    emb = np.random.default_rng(3).standard_normal((V, D)).astype(np.float32)
    nodes = [oh.make_node("Gather", ["emb", "ids"], ["x"], axis=0),
             oh.make_node("ReduceMean", ["x"], ["h"], axes=[0], keepdims=1),
             oh.make_node("Gemm", ["h", "emb_out", "bias"], ["logits"], transB=1)]
    g = oh.make_graph(nodes, "tied", [oh.make_tensor_value_info("ids", TP.INT64, [3])],
                      [oh.make_tensor_value_info("logits", TP.FLOAT, None)],
                      [nh.from_array(emb, "emb"), nh.from_array(emb.copy(), "emb_out"),
                       nh.from_array(np.linspace(-1, 1, V).astype(np.float32), "bias")])
    model = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)])
    plan = compile_model(model, target="x86-64")
    assert plan.report["const_bytes"] < 1.1 * emb.nbytes, plan.report["const_bytes"]
    assert plan.data[4:6] == (1).to_bytes(2, "little") and int.from_bytes(plan.data[6:8], "little") == 5
    ids = np.array([0, V - 1, 17])
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"ids": ids})[0]
    for mask in (0, NO_AVX2):
        got = Session(plan, cpu_features_mask=mask).run({"ids": ids})["logits"]
        assert rel_err(got, want) <= 1e-5, (hex(mask), rel_err(got, want))
    # an A of many rows keeps the packed copy: the GEMM is then compute-bound and the strips pay
    g2 = oh.make_graph([oh.make_node("Gather", ["emb", "ids"], ["x"], axis=0),
                        oh.make_node("Gemm", ["x", "emb_out"], ["logits"], transB=1)], "many",
                       [oh.make_tensor_value_info("ids", TP.INT64, [40])],
                       [oh.make_tensor_value_info("logits", TP.FLOAT, None)],
                       [nh.from_array(emb, "emb"), nh.from_array(emb.copy(), "emb_out")])
    many = compile_model(oh.make_model(g2, opset_imports=[oh.make_opsetid("", 13)]), target="x86-64")
    assert many.report["const_bytes"] > 1.9 * emb.nbytes


@pytest.mark.parametrize("K,N", [(64, 1500), (1500, 64), (300, 37), (1, 5), (700, 1030)])
def test_matmul_of_one_row_is_a_row_of_many(K, N):
    """MATMUL of one row (an attention's scores at one query: A B streamed row by row of B) gives the bits of
    that row in a many-row product (16-column strips of 6-row tiles): the same FMAs in the same k order."""
    import onnx
    from onnx import TensorProto as TP, helper as oh
    g = oh.make_graph([oh.make_node("MatMul", ["a", "b"], ["y"])], "m",
                      [oh.make_tensor_value_info("a", TP.FLOAT, [None, K]), oh.make_tensor_value_info("b", TP.FLOAT, [K, N])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
    rng = np.random.default_rng(K + N)
    a, b = rng.standard_normal((7, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    many = Session(compile_model(m, {"a": (7, K)}, target="x86-64")).run({"a": a, "b": b})["y"]
    one = Session(compile_model(m, {"a": (1, K)}, target="x86-64"))
    for i in range(7):
        assert np.array_equal(one.run({"a": a[i:i + 1], "b": b})["y"][0], many[i]), i

"""Packed kernel variants end to end: kernel selection (compiler/passes/select.py), the pre-packed weight
layouts, the C shape functions' checks, and the zoo models against onnxruntime with the packed variants,
on the AVX2+FMA kernels and with the CPU features masked off (the portable reference fallbacks)."""
from __future__ import annotations

import numpy as np
import pytest

import onnxruntime as ort
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K
from edgeplan.compiler.graph import Graph, Op, Tensor
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
    assert ("conv2d", K.EP_CONV2D_VARIANT_DEPTHWISE) in variants
    assert ("gemm", K.EP_GEMM_VARIANT_PACKED) in variants
    plan = compile_model(model, target="x86-64")
    from edgeplan.runtime import plan_info
    assert plan_info(plan.data)["required_features"] == 0
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


WINO_ANY = select.Target("winograd-any", packed=True, winograd=True, pack_bytes=64 * 1024, winograd_budget=100.0)


@pytest.mark.parametrize("case", [dict(), dict(k=1), dict(k=1, stride=2), dict(k=5, stride=2, m=40, c=7),
                                  dict(c=8, m=8, groups=8), dict(c=6, m=6, groups=6, stride=2, k=5),
                                  dict(c=16, m=20, h=17, w=23), dict(c=33, m=16, h=30, w=9)])
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
        if target is WINO_ANY and case.get("c", 5) >= 16:
            assert g.ops[0].variant == K.EP_CONV2D_VARIANT_WINOGRAD
    for o in outs[1:]:
        assert rel_err(o, outs[0]) <= 1e-5


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
    p = select.pack_conv_weights(w)
    assert p.shape == (2, 18, 6)
    assert p[0, 5, 3] == w[3].reshape(-1)[5] and p[1, 4, 0] == w[6].reshape(-1)[4] and not p[1, :, 1:].any()
    b = np.arange(5 * 20, dtype=np.float32).reshape(5, 20)
    q = select.pack_gemm_b(b)
    assert q.shape == (2, 5, 16) and q[1, 2, 3] == b[2, 19] and not q[1, :, 4:].any()


def test_scratch_too_small_is_refused():
    g = _conv_graph(residual=False)
    plan = compile_graph(g, target="x86-64")
    assert g.ops[0].scratch >= 5 * 9 * 16 * 4
    g2 = _conv_graph(residual=False)
    select.select_kernels(g2, "x86-64")
    g2.ops[0].scratch = 5 * 9 * 16 * 4 - 64     # less than one im2col strip
    bad = compile_graph(g2, target="x86-64")
    with pytest.raises(EdgeplanError, match="scratch"):
        Session(bad)
    Session(plan)


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target"):
        select.get_target("z80")

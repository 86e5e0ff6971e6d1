"""Fused inverted-residual blocks (compiler/passes/blocks.py, the INVRES op): the fused plan equals the plan of
the three separate convolutions (on plain layout) bit for bit, on the AVX2 kernels and on the portable reference, at any thread
count; MobileNetV2's arena shrinks; and only blocks whose intermediate tensors nothing else reads are fused."""
from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP, helper as oh, numpy_helper as nh

import onnxruntime as ort
from edgeplan import Session
from edgeplan.compiler.pipeline import compile_model
from edgeplan.compiler.target import get_target

from conftest import rel_err, zoo

NO_AVX2 = 1 << 62
X86 = get_target("x86-64")
UNFUSED = dataclasses.replace(X86, blocks=False, blocked=False)


def _block(c, ce, m, h, w, k=3, s=1, d=1, res=False, expand=True, n=1, extra_use=False):
    rng = np.random.default_rng(c * 131 + ce * 7 + h)
    inits = [nh.from_array(np.float32(0), "lo"), nh.from_array(np.float32(6), "hi")]
    nodes, cur = [], "x"
    if expand:
        inits += [nh.from_array(rng.standard_normal((ce, c, 1, 1)).astype(np.float32) * 0.3, "w1"),
                  nh.from_array(rng.standard_normal(ce).astype(np.float32) * 0.1, "b1")]
        nodes += [oh.make_node("Conv", ["x", "w1", "b1"], ["e0"]), oh.make_node("Clip", ["e0", "lo", "hi"], ["e"])]
        cur = "e"
    else:
        ce = c
    pad = (k - 1) * d // 2
    inits += [nh.from_array(rng.standard_normal((ce, 1, k, k)).astype(np.float32) * 0.3, "w2"),
              nh.from_array(rng.standard_normal(ce).astype(np.float32) * 0.1, "b2"),
              nh.from_array(rng.standard_normal((m, ce, 1, 1)).astype(np.float32) * 0.3, "w3")]
    nodes += [oh.make_node("Conv", [cur, "w2", "b2"], ["d0"], group=ce, pads=[pad] * 4, strides=[s, s],
                           dilations=[d, d]),
              oh.make_node("Clip", ["d0", "lo", "hi"], ["dd"]),
              oh.make_node("Conv", ["dd", "w3"], ["y0" if res else "y"])]
    outs = [oh.make_tensor_value_info("y", TP.FLOAT, None)]
    if res:
        nodes.append(oh.make_node("Add", ["y0", "x"], ["y"]))
    if extra_use:   # the expanded tensor is also a graph output: the block must not be fused
        outs.append(oh.make_tensor_value_info(cur, TP.FLOAT, None))
    g = oh.make_graph(nodes, "block", [oh.make_tensor_value_info("x", TP.FLOAT, [n, c, h, w])], outs, inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)])


def _same(model, target, threads=(1, 2, 3), masks=(0, NO_AVX2)):
    fused = compile_model(model, target=dataclasses.replace(target, blocked=False))
    plain = compile_model(model, target=dataclasses.replace(target, blocks=False, blocked=False))
    inp = model.graph.input[0]
    x = np.random.default_rng(0).standard_normal(
        [d.dim_value for d in inp.type.tensor_type.shape.dim]).astype(np.float32)
    for mask in masks:
        for t in threads:
            a = Session(fused, threads=t, cpu_features_mask=mask).run({inp.name: x})
            b = Session(plain, threads=t, cpu_features_mask=mask).run({inp.name: x})
            for k in b:
                assert np.array_equal(a[k], b[k]), (k, t, hex(mask))
    return fused, plain, x


CASES = {
    "s1-residual": dict(c=16, ce=96, m=16, h=20, w=23, res=True),
    "s2": dict(c=8, ce=48, m=24, h=21, w=30, s=2),
    "k5-dilated": dict(c=12, ce=40, m=12, h=17, w=19, k=5, d=2, res=True),
    "no-expand": dict(c=32, ce=32, m=16, h=24, w=24, expand=False),
    "two-images": dict(c=6, ce=36, m=10, h=15, w=33, n=2),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
@pytest.mark.parametrize("budget", [8 * 1024, 32 * 1024])
def test_fused_block_equals_the_three_convolutions(case, budget):
    model = _block(**CASES[case])
    tg = dataclasses.replace(X86, block_bytes=budget)
    fused, plain, x = _same(model, tg)
    assert fused.report["op_counts"].get("invres") == 1, fused.report["op_counts"]
    assert any("inverted-residual block" in f for f in fused.report["fused"])
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = s.run(None, {"x": x})[0]
    assert rel_err(Session(fused).run({"x": x})["y"], want) <= 1e-5


def test_a_tensor_read_elsewhere_stays_in_the_arena():
    """The expanded tensor is also a graph output: the expand conv stays an op of its own, and the depthwise
    and project stages fuse as a block without expand."""
    model = _block(16, 96, 16, 20, 20, extra_use=True)
    fused, _, _ = _same(model, dataclasses.replace(X86, block_bytes=8 * 1024), threads=(1, 2), masks=(0,))
    assert fused.report["op_counts"] == {"conv2d": 1, "invres": 1}


def test_small_blocks_and_other_targets_are_not_fused():
    model = _block(16, 96, 16, 20, 20)
    assert "invres" not in compile_model(model, target=X86).report["op_counts"]   # 150 KB < the L2 share
    assert "invres" not in compile_model(model, target="generic").report["op_counts"]


def test_mobilenetv2_fused_blocks():
    """The zoo MobileNetV2 at 224x224: its large blocks fused, bit for bit the unfused plan, with an arena
    at most 0.6x the unfused one (the 112x112x96 and 56x56x144 expanded tensors are gone from it)."""
    model = zoo().build("mobilenetv2")
    fused, plain, x = _same(model, X86, threads=(1, 2), masks=(0,))
    assert fused.report["op_counts"]["invres"] >= 5
    assert fused.report["arena_bytes"] <= 0.6 * plain.report["arena_bytes"], (
        fused.report["arena_bytes"], plain.report["arena_bytes"])
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = s.run(None, {s.get_inputs()[0].name: x})[0]
    got = next(iter(Session(fused).run({model.graph.input[0].name: x}).values()))
    assert rel_err(got, want) <= 1e-4

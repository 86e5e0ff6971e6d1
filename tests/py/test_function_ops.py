"""Ops that ONNX defines by a function body and the compiler does not lower itself are expanded into that
body (compiler/functions.py): checked against onnxruntime on the ops ASR and TTS encoders use."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import edgeplan
from conftest import rel_err
from edgeplan import Session
from edgeplan.compiler.errors import CompileError


def _model(nodes, inputs, outputs, inits=(), opset=23):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _check(m, feeds, tol=1e-5):
    plan = edgeplan.compile(m)
    got = Session(plan).run(**feeds)
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    ref = dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))
    for k, r in ref.items():
        assert got[k].shape == r.shape and rel_err(got[k], r) < tol, k
    return plan


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_is_expanded_and_matches_onnxruntime(causal):
    """Attention-23 on [batch, heads, seq, head] queries, keys and values: softmax(Q K^T / sqrt(d)) V."""
    m = _model([h.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", is_causal=causal)],
               [h.make_tensor_value_info(n, TP.FLOAT, [1, 2, 6, 8]) for n in "qkv"],
               [h.make_tensor_value_info("y", TP.FLOAT, None)])
    rng = np.random.default_rng(causal)
    plan = _check(m, {n: rng.standard_normal((1, 2, 6, 8)).astype(np.float32) for n in "qkv"})
    assert "attn/" in plan.inspect()   # the expanded nodes keep the node's name


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_is_expanded_and_matches_onnxruntime(interleaved):
    seq, d = 5, 8
    pos = np.arange(seq)[:, None] / (10000 ** (np.arange(d // 2)[None, :] / (d // 2)))
    m = _model([h.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], interleaved=interleaved)],
               [h.make_tensor_value_info("x", TP.FLOAT, [1, 2, seq, d])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)],
               [nh.from_array(np.cos(pos).astype(np.float32), "cos"), nh.from_array(np.sin(pos).astype(np.float32), "sin"),
                nh.from_array(np.arange(seq, dtype=np.int64)[None, :], "pos")])
    _check(m, {"x": np.random.default_rng(3).standard_normal((1, 2, seq, d)).astype(np.float32)})


def test_an_op_the_compiler_lowers_is_not_expanded():
    """LayerNormalization has a function body too, but its own runtime op is faster: it stays one op."""
    m = _model([h.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
               [h.make_tensor_value_info("x", TP.FLOAT, [3, 16])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
               [nh.from_array(np.ones(16, np.float32), "g"), nh.from_array(np.zeros(16, np.float32), "b")], opset=17)
    plan = _check(m, {"x": np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)})
    assert "layernorm" in plan.inspect() and " reduce " not in plan.inspect()


def test_an_expansion_that_fails_names_the_inner_node_under_the_node():
    """CenterCropPad to a run-time shape: its body's Pad pads by amounts from the data, whose output length
    needs a declared bound; the problem names that Pad under the CenterCropPad node."""
    m = _model([h.make_node("CenterCropPad", ["x", "shape"], ["y"], name="ccp")],
               [h.make_tensor_value_info("x", TP.FLOAT, [4, 5]), h.make_tensor_value_info("shape", TP.INT64, [2])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)], opset=18)
    with pytest.raises(CompileError, match=r"node 'ccp/Pad\w*' \(Pad\): the length of output '\w+' depends on "
                                           r"the data: declare its maximum"):
        edgeplan.compile(m)


@pytest.mark.parametrize("image,strides,dil,pads", [((7, 9), (1, 1), (1, 1), (0, 0, 0, 0)),
                                                    ((7, 9), (2, 1), (1, 2), (1, 0, 1, 2)),
                                                    ((8, 9), (2, 3), (1, 1), (0, 0, 0, 0))])
def test_col2im_is_a_grouped_conv_transpose_and_matches_onnxruntime(image, strides, dil, pads):
    """Col2Im (passes/rewrite.py): blocks 3 x 2, 4 channels, overlapping blocks summed; with strides 2, 3
    on 8 x 9 the last row and column lie past every block."""
    block, C = (3, 2), 4
    lh, lw = ((image[d] + pads[d] + pads[d + 2] - (dil[d] * (block[d] - 1) + 1)) // strides[d] + 1 for d in (0, 1))
    m = _model([h.make_node("Col2Im", ["x", "img", "blk"], ["y"], strides=list(strides), dilations=list(dil),
                            pads=list(pads))],
               [h.make_tensor_value_info("x", TP.FLOAT, [2, C * 6, lh * lw])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
               [nh.from_array(np.array(image, np.int64), "img"), nh.from_array(np.array(block, np.int64), "blk")], opset=18)
    plan = _check(m, {"x": np.random.default_rng(1).standard_normal((2, C * 6, lh * lw)).astype(np.float32)})
    assert "conv_transpose2d" in plan.inspect()


def test_maxunpool_inverts_maxpool_as_onnxruntime():
    pool = h.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2])
    unpool = h.make_node("MaxUnpool", ["p", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    m = _model([pool, unpool], [h.make_tensor_value_info("p", TP.FLOAT, [2, 3, 4, 5]),
                                h.make_tensor_value_info("i", TP.INT64, [2, 3, 4, 5])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)], opset=18)
    del m.graph.node[0]   # MaxPool's Indices output is not supported: the indices are an input here
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 8, 10)).astype(np.float32)
    s = ort.InferenceSession(_model([pool], [h.make_tensor_value_info("x", TP.FLOAT, [2, 3, 8, 10])],
                                    [h.make_tensor_value_info("p", TP.FLOAT, None),
                                     h.make_tensor_value_info("i", TP.INT64, None)], opset=18).SerializeToString(),
                             providers=["CPUExecutionProvider"])
    p, i = s.run(None, {"x": x})
    _check(m, {"p": p, "i": i}, tol=1e-12)


@pytest.mark.parametrize("inverse,onesided,complex_in,length", [(0, 1, False, 32), (0, 0, True, None),
                                                                (1, 0, True, None), (1, 1, True, 16), (0, 1, False, 20)])
def test_dft_matches_onnxruntime(inverse, onesided, complex_in, length):
    """DFT-20 on 3 frames of 24 points (axis 1), as matrix products (passes/rewrite.py): real one-sided
    spectra with the frame padded (32) or truncated (20), complex forward and inverse, and the real
    inverse of a one-sided spectrum."""
    shape = (3, 24 if not (inverse and onesided) else 9, 2 if complex_in else 1)
    ins = ["x", "len" if length else "", "axis"]
    inits = [nh.from_array(np.array(1, np.int64), "axis")]
    if length:
        inits.append(nh.from_array(np.array(length, np.int64), "len"))
    m = _model([h.make_node("DFT", ins, ["y"], inverse=inverse, onesided=onesided)],
               [h.make_tensor_value_info("x", TP.FLOAT, list(shape))], [h.make_tensor_value_info("y", TP.FLOAT, None)],
               inits, opset=20)
    _check(m, {"x": np.random.default_rng(5).standard_normal(shape).astype(np.float32)}, tol=1e-5)


@pytest.mark.parametrize("direction,layout,act", [("forward", 0, "Tanh"), ("bidirectional", 0, "LeakyRelu"),
                                                  ("reverse", 0, "Relu")])
def test_rnn_unrolled_matches_onnxruntime(direction, layout, act):
    """RNN over 7 steps, batch 2, 5 inputs, hidden 4, with bias, initial state and clip 2.5 (onnxruntime
    has no batch-first layout; the node suite checks it against onnx's reference)."""
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(8)
    inits = [nh.from_array((rng.standard_normal((dirs, 4, 5)) * 0.5).astype(np.float32), "W"),
             nh.from_array((rng.standard_normal((dirs, 4, 4)) * 0.5).astype(np.float32), "R"),
             nh.from_array((rng.standard_normal((dirs, 8)) * 0.1).astype(np.float32), "B")]
    xs = (2, 7, 5) if layout else (7, 2, 5)
    hs = (2, dirs, 4) if layout else (dirs, 2, 4)
    attrs = dict(hidden_size=4, direction=direction, layout=layout, clip=2.5, activations=[act] * dirs)
    if act == "LeakyRelu":
        attrs["activation_alpha"] = [0.1] * dirs
    m = _model([h.make_node("RNN", ["x", "W", "R", "B", "", "h0"], ["y", "yh"], **attrs)],
               [h.make_tensor_value_info("x", TP.FLOAT, list(xs)), h.make_tensor_value_info("h0", TP.FLOAT, list(hs))],
               [h.make_tensor_value_info("y", TP.FLOAT, None), h.make_tensor_value_info("yh", TP.FLOAT, None)],
               inits, opset=14)
    _check(m, {"x": rng.standard_normal(xs).astype(np.float32), "h0": rng.standard_normal(hs).astype(np.float32)})


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (2, 4, 4), (5, 5), (1, 1)])
def test_det_matches_onnxruntime(shape):
    m = _model([h.make_node("Det", ["x"], ["y"])], [h.make_tensor_value_info("x", TP.FLOAT, list(shape))],
               [h.make_tensor_value_info("y", TP.FLOAT, None)], opset=22)
    _check(m, {"x": np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)}, tol=1e-5)


def test_det_of_a_large_matrix_is_refused_with_the_limit():
    m = _model([h.make_node("Det", ["x"], ["y"], name="det")], [h.make_tensor_value_info("x", TP.FLOAT, [6, 6])],
               [h.make_tensor_value_info("y", TP.FLOAT, None)], opset=22)
    with pytest.raises(CompileError, match=r"node 'det' \(Det\).*6 x 6.*up to 5 x 5"):
        edgeplan.compile(m)

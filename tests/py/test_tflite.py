"""TFLite import against LiteRT's reference kernels: single-op models written with the `tflite` package's
builders (tests/py/tflite_build.py), seeded random inputs. fp32 within 1e-4 of the output's range (most
cases hold 1e-5); int8 within one code on >= 99.9 % of the elements."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tflite")
litert = pytest.importorskip("ai_edge_litert.interpreter")

import edgeplan  # noqa: E402
from edgeplan.compiler.errors import CompileError  # noqa: E402

from tflite_build import Builder  # noqa: E402

F32 = np.float32
NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT = range(6)
SAME, VALID = 0, 1


def reference(data: bytes, feeds: dict) -> dict:
    try:
        it = litert.Interpreter(model_content=data, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    except ValueError:   # an op the reference resolver lacks (ELU): the optimised kernels
        it = litert.Interpreter(model_content=data,
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], feeds[d["name"]])
    it.invoke()
    return {d["name"]: it.get_tensor(d["index"]) for d in it.get_output_details()}


def feeds_for(data: bytes, seed: int = 0) -> dict:
    it = litert.Interpreter(model_content=data)
    rng = np.random.default_rng(seed)
    out = {}
    for d in it.get_input_details():
        if d["dtype"] == np.float32:
            out[d["name"]] = rng.standard_normal(d["shape"]).astype(F32)
        else:
            info = np.iinfo(d["dtype"])
            out[d["name"]] = rng.integers(info.min, info.max + 1, d["shape"]).astype(d["dtype"])
    return out


def check(data: bytes, tol: float = 1e-4, seed: int = 0, lsb_share: float = 0.999):
    """Compiles `data`, runs it and LiteRT on the same inputs; returns the plan."""
    plan = edgeplan.compile(data)
    feeds = feeds_for(data, seed)
    ref = reference(data, feeds)
    got = edgeplan.Session(plan).run(feeds)
    for name, r in ref.items():
        g = got[name]
        assert g.shape == r.shape and g.dtype == r.dtype, (name, g.shape, r.shape, g.dtype, r.dtype)
        if np.issubdtype(r.dtype, np.floating):
            span = max(float(np.max(r) - np.min(r)), 1e-6)
            err = float(np.max(np.abs(g.astype(np.float64) - r))) if r.size else 0.0
            assert err <= tol * span, f"{name}: max error {err:.3g} over range {span:.3g}"
        elif r.dtype in (np.int8, np.uint8, np.int16):
            d = np.abs(g.astype(np.int32) - r.astype(np.int32))
            assert np.mean(d <= 1) >= lsb_share, (name, d.max(), np.mean(d <= 1))
        else:
            np.testing.assert_array_equal(g, r)
    return plan


def rnd(shape, seed=1, scale=0.5):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(F32)


def nchw_input(b: Builder, shape, seed=7):
    """An input followed by a 1x1 convolution, so that the op under test reads a tensor held in NCHW."""
    x = b.tensor("x", shape)
    c = shape[-1]
    w = b.const("pre_w", rnd((c, 1, 1, c), seed))
    h = b.tensor("h", shape)
    b.op("CONV_2D", [x, w, b.const("pre_b", np.zeros(c, F32))], [h], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1)
    return x, h


# ---- convolutions -------------------------------------------------------------------------------------
@pytest.mark.parametrize("pad,stride,dil,act", [(SAME, 1, 1, NONE), (SAME, 2, 1, RELU), (VALID, 2, 1, RELU6),
                                                (SAME, 1, 2, RELU_N1_TO_1), (VALID, 1, 2, NONE),
                                                (SAME, 3, 1, RELU6), (SAME, 1, 1, TANH), (VALID, 1, 1, SIGN_BIT)])
def test_conv2d(pad, stride, dil, act):
    b = Builder()
    H, W, C, O, K = 11, 10, 3, 5, 3
    x = b.tensor("x", (1, H, W, C))
    w = b.const("w", rnd((O, K, K, C)))
    bias = b.const("b", rnd((O,), 2))
    ek = (K - 1) * dil + 1
    oh = -(-H // stride) if pad == SAME else (H - ek) // stride + 1
    ow = -(-W // stride) if pad == SAME else (W - ek) // stride + 1
    y = b.tensor("y", (1, oh, ow, O))
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=pad, StrideW=stride, StrideH=stride,
         DilationWFactor=dil, DilationHFactor=dil, FusedActivationFunction=act)
    check(b.finish([x], [y]))


@pytest.mark.parametrize("mult,stride,pad", [(1, 1, SAME), (2, 2, SAME), (3, 1, VALID)])
def test_depthwise(mult, stride, pad):
    b = Builder()
    H, C, K = 9, 4, 3
    x, h = nchw_input(b, (1, H, H, C))
    w = b.const("w", rnd((1, K, K, C * mult)))
    bias = b.const("b", rnd((C * mult,), 3))
    o = -(-H // stride) if pad == SAME else (H - K) // stride + 1
    y = b.tensor("y", (1, o, o, C * mult))
    b.op("DEPTHWISE_CONV_2D", [h, w, bias], [y], "DepthwiseConv2DOptions", Padding=pad, StrideW=stride,
         StrideH=stride, DepthMultiplier=mult, DilationWFactor=1, DilationHFactor=1, FusedActivationFunction=RELU6)
    plan = check(b.finish([x], [y]))
    assert plan.report["op_counts"].get("transpose", 0) <= 2   # the edges only


@pytest.mark.parametrize("pad,stride,bias", [(SAME, 2, True), (VALID, 2, False), (SAME, 1, True)])
def test_transpose_conv(pad, stride, bias):
    b = Builder()
    H, C, O, K = 5, 3, 4, 3
    x = b.tensor("x", (1, H, H, C))
    oh = H * stride if pad == SAME else (H - 1) * stride + K
    shape = b.const("shape", np.array([1, oh, oh, O], np.int32))
    w = b.const("w", rnd((O, K, K, C)))
    ins = [shape, w, x] + ([b.const("b", rnd((O,), 4))] if bias else [])
    y = b.tensor("y", (1, oh, oh, O))
    b.op("TRANSPOSE_CONV", ins, [y], "TransposeConvOptions", Padding=pad, StrideW=stride, StrideH=stride)
    check(b.finish([x], [y]))


@pytest.mark.parametrize("keep", [False, True])
def test_fully_connected(keep):
    b = Builder()
    x = b.tensor("x", (2, 3, 6))
    w = b.const("w", rnd((5, 6)))
    bias = b.const("b", rnd((5,), 5))
    y = b.tensor("y", (2, 3, 5) if keep else (6, 5))
    b.op("FULLY_CONNECTED", [x, w, bias], [y], "FullyConnectedOptions", FusedActivationFunction=RELU,
         KeepNumDims=keep)
    check(b.finish([x], [y]))


def test_flatten_then_fully_connected():
    """A reshape flattening H x W x C reads TFLite's NHWC order: the one transpose inside the graph."""
    b = Builder()
    x, h = nchw_input(b, (1, 4, 4, 3))
    f = b.tensor("f", (1, 48))
    b.op("RESHAPE", [h, b.const("s", np.array([1, 48], np.int32))], [f])
    w = b.const("w", rnd((7, 48)))
    y = b.tensor("y", (1, 7))
    b.op("FULLY_CONNECTED", [f, w, -1], [y], "FullyConnectedOptions")
    check(b.finish([x], [y]))


# ---- element-wise -------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,opts", [("ADD", "AddOptions"), ("SUB", "SubOptions"), ("MUL", "MulOptions"),
                                     ("DIV", "DivOptions"), ("MAXIMUM", None), ("MINIMUM", None)])
@pytest.mark.parametrize("other", [(3,), (1, 1, 1, 3), (1, 5, 1, 3), "runtime"])
def test_binary_broadcast(op, opts, other):
    b = Builder()
    x, h = nchw_input(b, (1, 5, 4, 3))
    if other == "runtime":
        o = b.tensor("o", (1, 5, 4, 3))
        b.op("RELU", [h], [o])
        ins = [o, h]
    else:
        v = rnd(other, 9) + (3.0 if op == "DIV" else 0.0)
        ins = [h, b.const("c", v)]
    y = b.tensor("y", (1, 5, 4, 3))
    fields = {"FusedActivationFunction": RELU} if opts else {}
    if op == "DIV" and other == "runtime":
        ins = [h, b.const("c", rnd((1, 5, 4, 3), 9) + 3.0)]
    b.op(op, ins, [y], opts, **fields)
    plan = check(b.finish([x], [y]))
    assert plan.report["op_counts"].get("transpose", 0) <= 2


@pytest.mark.parametrize("op,fields", [("LOGISTIC", {}), ("TANH", {}), ("RELU", {}), ("RELU6", {}),
                                       ("RELU_N1_TO_1", {}), ("HARD_SWISH", {}), ("ELU", {}),
                                       ("LEAKY_RELU", {"LeakyReluOptions": {"Alpha": 0.15}}), ("EXP", {}),
                                       ("ABS", {}), ("NEG", {})])
def test_unary(op, fields):
    b = Builder()
    x, h = nchw_input(b, (1, 6, 5, 4))
    y = b.tensor("y", (1, 6, 5, 4))
    (oname, f), = fields.items() if fields else ((None, {}),)
    b.op(op, [h], [y], oname, **f)
    check(b.finish([x], [y]))


@pytest.mark.parametrize("alpha", [(4,), (1, 1, 4), (6, 5, 4)])
def test_prelu(alpha):
    b = Builder()
    x, h = nchw_input(b, (1, 6, 5, 4))
    y = b.tensor("y", (1, 6, 5, 4))
    b.op("PRELU", [h, b.const("a", rnd(alpha, 3))], [y])
    check(b.finish([x], [y]))


@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_softmax(beta):
    b = Builder()
    x, h = nchw_input(b, (1, 3, 4, 6))
    y = b.tensor("y", (1, 3, 4, 6))
    b.op("SOFTMAX", [h], [y], "SoftmaxOptions", Beta=beta)
    check(b.finish([x], [y]))


# ---- pooling, resize ----------------------------------------------------------------------------------
@pytest.mark.parametrize("op,pad,k,s", [("AVERAGE_POOL_2D", SAME, 3, 2), ("AVERAGE_POOL_2D", VALID, 2, 2),
                                        ("MAX_POOL_2D", SAME, 3, 2), ("MAX_POOL_2D", VALID, 3, 1)])
def test_pool(op, pad, k, s):
    b = Builder()
    H, W = 9, 8
    x = b.tensor("x", (1, H, W, 3))
    oh = -(-H // s) if pad == SAME else (H - k) // s + 1
    ow = -(-W // s) if pad == SAME else (W - k) // s + 1
    y = b.tensor("y", (1, oh, ow, 3))
    b.op(op, [x], [y], "Pool2DOptions", Padding=pad, StrideW=s, StrideH=s, FilterWidth=k, FilterHeight=k,
         FusedActivationFunction=RELU)
    check(b.finish([x], [y]))


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("ac,hp", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("size", [(10, 14), (3, 4)])
def test_resize(op, ac, hp, size):
    b = Builder()
    x, h = nchw_input(b, (1, 5, 7, 3))
    y = b.tensor("y", (1,) + size + (3,))
    opts = "ResizeBilinearOptions" if op == "RESIZE_BILINEAR" else "ResizeNearestNeighborOptions"
    b.op(op, [h, b.const("size", np.array(size, np.int32))], [y], opts, AlignCorners=ac, HalfPixelCenters=hp)
    check(b.finish([x], [y]), tol=1e-5)


# ---- reductions and layout ops ------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["MEAN", "SUM", "REDUCE_MAX"])
@pytest.mark.parametrize("axes,keep", [((1, 2), True), ((1, 2), False), ((3,), False), ((-1, 1), True)])
def test_reduce(op, axes, keep):
    b = Builder()
    x, h = nchw_input(b, (1, 4, 5, 6))
    shape = [1, 4, 5, 6]
    ax = {a % 4 for a in axes}
    oshape = [1 if a in ax else d for a, d in enumerate(shape)] if keep else [d for a, d in enumerate(shape)
                                                                               if a not in ax]
    y = b.tensor("y", oshape)
    b.op(op, [h, b.const("axes", np.array(axes, np.int32))], [y], "ReducerOptions", KeepDims=keep)
    check(b.finish([x], [y]))


def test_reshape_squeeze_expand_transpose():
    b = Builder()
    x, h = nchw_input(b, (1, 1, 6, 4))
    s = b.tensor("s", (6, 4))
    b.op("SQUEEZE", [h], [s], "SqueezeOptions", SqueezeDims=[0, 1])
    e = b.tensor("e", (6, 1, 4))
    b.op("EXPAND_DIMS", [s, b.const("a", np.array(1, np.int32))], [e])
    t = b.tensor("t", (4, 1, 6))
    b.op("TRANSPOSE", [e, b.const("p", np.array([2, 1, 0], np.int32))], [t])
    r = b.tensor("r", (2, 12))
    b.op("RESHAPE", [t, b.const("rs", np.array([2, -1], np.int32))], [r])
    check(b.finish([x], [r, t]))


@pytest.mark.parametrize("axis", [3, 1, -1])
def test_concat_split(axis):
    b = Builder()
    x, h = nchw_input(b, (1, 4, 4, 6))
    r = b.tensor("r", (1, 4, 4, 6))
    b.op("RELU", [h], [r])
    shape = [1, 4, 4, 6]
    shape[axis] *= 2
    c = b.tensor("c", shape)
    b.op("CONCATENATION", [h, r], [c], "ConcatenationOptions", Axis=axis)
    n = shape[axis]
    part = list(shape)
    part[axis] = n // 2
    s1, s2 = b.tensor("s1", part), b.tensor("s2", part)
    b.op("SPLIT", [b.const("ax", np.array(axis, np.int32)), c], [s1, s2], "SplitOptions", NumSplits=2)
    sizes = [1, n - 3, 2]
    vs = []
    for k, sz in enumerate(sizes):
        p = list(shape)
        p[axis] = sz
        vs.append(b.tensor(f"v{k}", p))
    b.op("SPLIT_V", [c, b.const("sz", np.array([1, -1, 2], np.int32)), b.const("ax2", np.array(axis, np.int32))],
         vs, "SplitVOptions", NumSplits=3)
    plan = check(b.finish([x], [c, s1, s2] + vs))
    assert plan.report["op_counts"].get("transpose", 0) <= 7   # the input and the six outputs


STRIDED = [  # begin, end, strides, begin_mask, end_mask, ellipsis, new_axis, shrink, offset
    ([0, 1, 0, 0], [1, 5, 6, 4], [1, 1, 2, 1], 0, 0, 0, 0, 0, False),
    ([0, -1, 0, 0], [1, 0, 6, 4], [1, -1, 1, 1], 0, 0b0010, 0, 0, 0, False),
    ([0, 5, 1, 0], [0, 0, 5, 0], [1, -2, 1, 1], 0b1001, 0b1001, 0, 0, 0, False),
    ([0, 2], [0, 3], [1, 1], 0, 0, 0b01, 0, 0b10, False),
    ([0, 0, 1, 0], [1, 1, 3, 4], [1, 1, 1, 1], 0, 0, 0, 0, 0b0010, False),
    ([0, 0, 0], [0, 0, 2], [1, 1, 1], 0, 0, 0b010, 0b001, 0, False),
    ([0, 1, 1, 0], [1, 3, 2, 4], [1, 1, 1, 1], 0, 0, 0, 0, 0, True),
    ([0, 0, 0, 1], [1, 6, 6, 4], [1, 2, 3, 2], 0, 0, 0, 0, 0b1000, False),
]


@pytest.mark.parametrize("spec", STRIDED, ids=[f"ss{k}" for k in range(len(STRIDED))])
def test_strided_slice(spec):
    begin, end, strides, bm, em, elm, nam, sam, off = spec
    b = Builder()
    x, h = nchw_input(b, (1, 6, 6, 4))
    import numpy as _np
    ref_in = _np.zeros((1, 6, 6, 4))
    # the output shape from numpy's indexing of the same spec
    idx = []
    for j in range(len(begin)):
        if elm >> j & 1:
            idx.append(Ellipsis)
        elif nam >> j & 1:
            idx.append(None)
        elif sam >> j & 1:
            idx.append(begin[j])
        else:
            e = begin[j] + end[j] if off else end[j]
            idx.append(slice(None if bm >> j & 1 else begin[j], None if em >> j & 1 else e, strides[j]))
    oshape = ref_in[tuple(idx)].shape
    y = b.tensor("y", oshape)
    b.op("STRIDED_SLICE", [h, b.const("b", np.array(begin, np.int32)), b.const("e", np.array(end, np.int32)),
                           b.const("s", np.array(strides, np.int32))], [y], "StridedSliceOptions",
         BeginMask=bm, EndMask=em, EllipsisMask=elm, NewAxisMask=nam, ShrinkAxisMask=sam, Offset=off)
    check(b.finish([x], [y]))


def test_slice_pad_gather():
    b = Builder()
    x, h = nchw_input(b, (1, 5, 6, 4))
    s = b.tensor("s", (1, 3, 6, 2))
    b.op("SLICE", [h, b.const("b", np.array([0, 1, 0, 1], np.int32)), b.const("sz", np.array([-1, 3, -1, 2], np.int32))],
         [s])
    p = b.tensor("p", (1, 4, 9, 3))
    b.op("PAD", [s, b.const("pads", np.array([[0, 0], [1, 0], [1, 2], [0, 1]], np.int32))], [p])
    p2 = b.tensor("p2", (1, 6, 9, 3))
    b.op("PADV2", [p, b.const("pads2", np.array([[0, 0], [1, 1], [0, 0], [0, 0]], np.int32)),
                   b.const("v", np.array([0.5], F32))], [p2])
    g = b.tensor("g", (1, 6, 9, 2))
    b.op("GATHER", [p2, b.const("i", np.array([2, 0], np.int32))], [g], "GatherOptions", Axis=3)
    g2 = b.tensor("g2", (1, 3, 9, 2))
    b.op("GATHER", [g, b.const("i2", np.array([5, 1, 1], np.int32))], [g2], "GatherOptions", Axis=1)
    check(b.finish([x], [g2]))


def test_cast_argmax():
    b = Builder()
    x, h = nchw_input(b, (1, 3, 4, 5))
    a = b.tensor("a", (1, 3, 4), np.int32)
    b.op("ARG_MAX", [h, b.const("ax", np.array([3], np.int32))], [a], "ArgMaxOptions", OutputType=2)
    f = b.tensor("f", (1, 3, 4))
    b.op("CAST", [a], [f])
    check(b.finish([x], [a, f]))


# ---- custom ops -----------------------------------------------------------------------------------------
def test_custom_ops_refused_by_name():
    b = Builder()
    x = b.tensor("x", (1, 4))
    y, z = b.tensor("y", (1, 4)), b.tensor("z", (1, 4))
    b.op("CUSTOM", [x], [y], custom="TFLite_Detection_PostProcess")
    b.op("CUSTOM", [y], [z], custom="MyOwnOp")
    with pytest.raises(CompileError) as e:
        edgeplan.compile(b.finish([x], [z]))
    text = str(e.value)
    assert "2 problems" in text and "TFLite_Detection_PostProcess" in text and "MyOwnOp" in text
    assert "Convolution2DTransposeBias" in text


def test_mediapipe_transpose_conv_bias():
    """MediaPipe's custom op equals TRANSPOSE_CONV + bias (LiteRT has no kernel for it: compared with that)."""
    def build(custom):
        b = Builder()
        x = b.tensor("x", (1, 4, 4, 3))
        w = b.const("w", rnd((5, 2, 2, 3)))
        bias = b.const("b", rnd((5,), 3))
        y = b.tensor("y", (1, 8, 8, 5))
        if custom:
            b.op("CUSTOM", [x, w, bias], [y], custom="Convolution2DTransposeBias",
                 custom_options=np.array([1, 2, 2], "<i4").tobytes())
        else:
            b.op("TRANSPOSE_CONV", [b.const("s", np.array([1, 8, 8, 5], np.int32)), w, x, bias], [y],
                 "TransposeConvOptions", Padding=SAME, StrideW=2, StrideH=2)
        return b.finish([x], [y])
    feeds = feeds_for(build(False))
    ref = reference(build(False), feeds)["y"]
    got = edgeplan.Session(edgeplan.compile(build(True))).run(feeds)["y"]
    assert np.max(np.abs(got - ref)) <= 1e-5 * np.ptp(ref)


def test_file_known_by_content(tmp_path):
    b = Builder()
    x = b.tensor("x", (1, 4))
    y = b.tensor("y", (1, 4))
    b.op("RELU", [x], [y])
    p = tmp_path / "model.bin"
    p.write_bytes(b.finish([x], [y]))
    plan = edgeplan.compile(str(p))
    assert plan.report["tflite"]["quantized"] is False


def test_a_corrupt_or_truncated_file_gets_a_compile_error():
    """Bytes that keep the TFL3 identifier but not a valid flatbuffer (truncated, or bytes overwritten) fail
    with CompileError, never a parser's struct.error / IndexError; some mutations still parse and compile."""
    import random
    b = Builder()
    x = b.tensor("x", (1, 8, 8, 3))
    y = b.tensor("y", (1, 8, 8, 4))
    b.op("CONV_2D", [x, b.const("w", rnd((4, 3, 3, 3))), b.const("b", rnd((4,), 2))], [y], "Conv2DOptions",
         Padding=SAME, StrideW=1, StrideH=1, DilationWFactor=1, DilationHFactor=1, FusedActivationFunction=0)
    src = b.finish([x], [y])
    rng = random.Random(0)
    refused = 0
    for i in range(200):
        data = bytearray(src)
        if i % 3 == 0:
            data = data[:rng.randrange(8, len(data))]
        else:
            for _ in range(8):
                data[rng.randrange(8, len(data))] = rng.randrange(256)
        try:
            edgeplan.compile(bytes(data))
        except CompileError:
            refused += 1
    assert refused >= 60, refused

"""TFLite builtin operators -> ONNX nodes (convert.Converter). One function per op family; HANDLERS maps
the builtin name (or "CUSTOM:<code>") to it. Weights are re-laid out here at import: convolution filters
OHWI -> OIHW, depthwise 1HWO -> O1HW, transposed-convolution OHWI -> IOHW; FULLY_CONNECTED keeps [N, K]
(Gemm transB)."""
from __future__ import annotations

import math

import numpy as np

from .convert import NCHW, Converter, Unsupported, compose, ident, inverse
from . import control, variables
from .reader import Op

ONNX_FLOAT, ONNX_INT32, ONNX_INT64, ONNX_BOOL = 1, 6, 7, 9
_ONNX_OF_TFL = {0: 1, 1: 10, 2: 6, 3: 2, 4: 7, 6: 9, 7: 5, 9: 3, 10: 11, 12: 13, 15: 12, 16: 4}


def opt(op: Op, field: str, default=0):
    o = op.options
    if o is None or not hasattr(o, field):
        return default
    return getattr(o, field)()


def _in(op: Op, k: int) -> int:
    return op.inputs[k] if k < len(op.inputs) else -1


def _need_const(cv: Converter, i: int, what: str) -> np.ndarray:
    a = cv.const(i)
    if a is None:
        raise Unsupported(f"{what} ('{cv.t(i).name}') must be a constant")
    return a


def _axis(a: int, r: int) -> int:
    a = int(a)
    return a + r if a < 0 else a


def _drop_perm(perm, dropped) -> tuple:
    """The layout of a tensor after the TFLite axes `dropped` are removed from one held in perm."""
    dropped = set(dropped)
    keep = [a for a in perm if a not in dropped]
    return tuple(a - sum(1 for d in dropped if d < a) for a in keep)


def _same_pads(n: int, k: int, s: int, d: int, padding: int):
    """(out, before, after) of TF's SAME (padding 0) or VALID (1): SAME puts the odd pixel after."""
    ek = (k - 1) * d + 1
    if padding == 0:
        out = -(-n // s)
        total = max((out - 1) * s + ek - n, 0)
        return out, total // 2, total - total // 2
    return (n - ek) // s + 1, 0, 0


# ---- convolutions -------------------------------------------------------------------------------------
def conv2d(cv: Converter, op: Op):
    x, w, b = op.inputs[0], op.inputs[1], _in(op, 2)
    n, h, wd, c = cv.shape(x)
    depthwise = op.name == "DEPTHWISE_CONV_2D"
    ws = cv.shape(w)
    sh, sw = opt(op, "StrideH", 1), opt(op, "StrideW", 1)
    dh, dw = opt(op, "DilationHFactor", 1) or 1, opt(op, "DilationWFactor", 1) or 1
    pad = opt(op, "Padding", 0)
    if depthwise:
        _, kh, kw, oc = ws
        group = c
        wperm = (3, 0, 1, 2)                  # 1HWO -> O1HW (output channel c * M + m in both)
    else:
        oc, kh, kw, ic = ws
        if c % ic:
            raise Unsupported(f"input channels {c} are not a multiple of the filter's {ic}")
        group = c // ic
        wperm = NCHW                          # OHWI -> OIHW
    oh, pt, pb = _same_pads(h, kh, sh, dh, pad)
    ow, pl, pr = _same_pads(wd, kw, sw, dw, pad)
    ins = [cv.fl(x, NCHW), cv.fl(w, wperm)]
    if b >= 0:
        ins.append(cv.fl(b))
    y = cv.node("Conv", ins, kernel_shape=[kh, kw], strides=[sh, sw], dilations=[dh, dw],
                pads=[pt, pl, pb, pr], group=group)
    y = cv.act(y, opt(op, "FusedActivationFunction"))
    cv.put(op.outputs[0], y, NCHW, shape=(n, oh, ow, oc))


def transpose_conv(cv: Converter, op: Op, x: int, w: int, b: int, out_hw, sh: int, sw: int, pad: int, act: int):
    """TFLite's TRANSPOSE_CONV: the padding is that of the forward convolution from the output size."""
    n, h, wd, c = cv.shape(x)
    oc, kh, kw, ic = cv.shape(w)
    oh, ow = int(out_hw[0]), int(out_hw[1])
    pads = []
    for size, k, s, n_in in ((oh, kh, sh, h), (ow, kw, sw, wd)):
        _, before, _ = _same_pads(size, k, s, 1, pad)
        full = (n_in - 1) * s + k
        pads.append((before, full - size - before))
    (pt, pb), (pl, pr) = pads
    extra = [max(-pb, 0), max(-pr, 0)]
    ins = [cv.fl(x, NCHW), cv.fl(w, (3, 0, 1, 2))]   # OHWI -> IOHW
    if b >= 0:
        ins.append(cv.fl(b))
    y = cv.node("ConvTranspose", ins, kernel_shape=[kh, kw], strides=[sh, sw],
                pads=[pt, pl, max(pb, 0), max(pr, 0)], output_padding=extra)
    y = cv.act(y, act)
    cv.put(op.outputs[0], y, NCHW, shape=(n, oh, ow, oc))


def transpose_conv_op(cv: Converter, op: Op):
    shape = _need_const(cv, op.inputs[0], "the output shape")
    transpose_conv(cv, op, op.inputs[2], op.inputs[1], _in(op, 3), shape[1:3], opt(op, "StrideH", 1),
                   opt(op, "StrideW", 1), opt(op, "Padding", 0), opt(op, "FusedActivationFunction"))


def mediapipe_transpose_conv_bias(cv: Converter, op: Op):
    """MediaPipe's Convolution2DTransposeBias: inputs (x, weights OHWI, bias); its custom options are the raw
    TfLiteTransposeConvParams struct (int32 padding: 1 SAME, 2 VALID; stride_width; stride_height); the
    output size is the output tensor's."""
    if len(op.custom_options) < 12:
        raise Unsupported("custom options shorter than TfLiteTransposeConvParams (padding, stride_w, stride_h)")
    padding, stride_w, stride_h = (int(v) for v in np.frombuffer(op.custom_options[:12], "<i4"))
    if padding not in (1, 2):
        raise Unsupported(f"padding {padding} (1 SAME, 2 VALID)")
    out = cv.t(op.outputs[0]).shape
    transpose_conv(cv, op, op.inputs[0], op.inputs[1], _in(op, 2), out[1:3], stride_h, stride_w,
                   0 if padding == 1 else 1, 0)


def fully_connected(cv: Converter, op: Op):
    x, w, b = op.inputs[0], op.inputs[1], _in(op, 2)
    if opt(op, "WeightsFormat", 0) != 0:
        raise Unsupported("shuffled weights format")
    N, K = cv.shape(w)
    xs = cv.shape(x)
    M = int(np.prod(xs)) // K
    xr, p = cv.reshape(x, (M, K))   # TFLite flattens every dim but the last
    if p != (0, 1):
        xr = cv.node("Transpose", [xr], perm=[1, 0])
    ins = [cv.deq(xr, x, (0, 1)), cv.fl(w)]
    if b >= 0:
        ins.append(cv.fl(b))
    y = cv.node("Gemm", ins, transB=1)
    y = cv.act(y, opt(op, "FusedActivationFunction"))
    out = op.outputs[0]
    y = cv.quant(y, out, (0, 1))
    shape = tuple(xs[:-1]) + (N,) if opt(op, "KeepNumDims", False) else (M, N)
    if len(shape) != 2:
        y = cv.node("Reshape", [y, cv.ints(shape)])
    cv.put(out, y, None, shape=shape, is_float=False)


# ---- element-wise -------------------------------------------------------------------------------------
_BINARY = {"ADD": "Add", "SUB": "Sub", "MUL": "Mul", "DIV": "Div", "MAXIMUM": "Max", "MINIMUM": "Min",
           "POW": "Pow", "LESS": "Less", "GREATER": "Greater", "EQUAL": "Equal", "LESS_EQUAL": "LessOrEqual",
           "GREATER_EQUAL": "GreaterOrEqual", "LOGICAL_AND": "And", "LOGICAL_OR": "Or",
           "SQUARED_DIFFERENCE": "Sub", "FLOOR_DIV": "Div", "NOT_EQUAL": "Equal", "FLOOR_MOD": "Mod"}
_NP_BINARY = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "MAXIMUM": np.maximum, "MINIMUM": np.minimum,
              "FLOOR_DIV": np.floor_divide, "POW": np.power, "LESS": np.less, "GREATER": np.greater,
              "EQUAL": np.equal, "NOT_EQUAL": np.not_equal, "LESS_EQUAL": np.less_equal,
              "GREATER_EQUAL": np.greater_equal, "FLOOR_MOD": np.mod}


def _bshape(*shapes) -> tuple:
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def binary(cv: Converter, op: Op):
    a, b = op.inputs[0], op.inputs[1]
    out = op.outputs[0]
    if cv.is_const(a) and cv.is_const(b) and not cv.quantized(a) and not cv.quantized(b):
        va, vb = cv.const(a), cv.const(b)
        if op.name == "DIV":
            r = va / vb if np.issubdtype(va.dtype, np.floating) else np.floor_divide(va, vb)
        elif op.name == "SQUARED_DIFFERENCE":
            r = (va - vb) ** 2
        else:
            r = _NP_BINARY[op.name](va, vb)
        dt = cv.t(out).dtype or r.dtype
        cv.put_const(out, np.asarray(r).astype(dt))
        return
    shape = _bshape(cv.shape(a), cv.shape(b))
    r = len(shape)
    perm = cv.common_perm([a, b], r)
    xa, xb = cv.fl_rank(a, r, perm), cv.fl_rank(b, r, perm)
    kind = _BINARY[op.name]
    y = cv.node(kind, [xa, xb], **({"fmod": 0} if kind == "Mod" else {}))
    if op.name == "SQUARED_DIFFERENCE":
        y = cv.node("Mul", [y, y])
    elif op.name == "FLOOR_DIV":
        if cv.t(out).type not in (0, 1, 10):
            raise Unsupported("FLOOR_DIV on run-time integers")
        y = cv.node("Floor", [y])
    elif op.name == "NOT_EQUAL":
        y = cv.node("Not", [y])
    y = cv.act(y, opt(op, "FusedActivationFunction"))
    cv.put(out, y, perm, shape=shape)


def select(cv: Converter, op: Op):
    c, a, b = op.inputs
    shape = _bshape(cv.shape(c), cv.shape(a), cv.shape(b))
    r = len(shape)
    perm = cv.common_perm([a, b, c], r)
    y = cv.node("Where", [cv.fl_rank(c, r, perm), cv.fl_rank(a, r, perm), cv.fl_rank(b, r, perm)])
    cv.put(op.outputs[0], y, perm, shape=shape)


_UNARY = {"RELU": "Relu", "LOGISTIC": "Sigmoid", "TANH": "Tanh", "HARD_SWISH": "HardSwish", "ELU": "Elu",
          "EXP": "Exp", "LOG": "Log", "SQRT": "Sqrt", "ABS": "Abs", "NEG": "Neg", "SIN": "Sin", "COS": "Cos",
          "FLOOR": "Floor", "CEIL": "Ceil", "ROUND": "Round", "LOGICAL_NOT": "Not", "SIGN": "Sign"}


def unary(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    perm = cv.perm_of(x)
    v = cv.fl(x, perm)
    k = op.name
    if k in _UNARY:
        y = cv.node(_UNARY[k], [v])
    elif k == "RELU6":
        y = cv.node("Clip", [v, cv.scalar(0.0), cv.scalar(6.0)])
    elif k == "RELU_N1_TO_1":
        y = cv.node("Clip", [v, cv.scalar(-1.0), cv.scalar(1.0)])
    elif k == "RELU_0_TO_1":
        y = cv.node("Clip", [v, cv.scalar(0.0), cv.scalar(1.0)])
    elif k == "LEAKY_RELU":
        y = cv.node("LeakyRelu", [v], alpha=float(opt(op, "Alpha", 0.2)))
    elif k == "RSQRT":
        y = cv.node("Reciprocal", [cv.node("Sqrt", [v])])
    elif k == "SQUARE":
        y = cv.node("Mul", [v, v])
    elif k == "GELU":
        y = cv.node("Gelu", [v], approximate="tanh" if opt(op, "Approximate", False) else "none")
    else:
        raise Unsupported(f"unary {k}")
    cv.put(out, y, perm, shape=cv.shape(x))


def prelu(cv: Converter, op: Op):
    x, alpha = op.inputs
    r = cv.rank(x)
    perm = cv.perm_of(x)
    y = cv.node("PRelu", [cv.fl(x, perm), cv.fl_rank(alpha, r, perm)])
    cv.put(op.outputs[0], y, perm, shape=cv.shape(x))


def softmax(cv: Converter, op: Op):
    x = op.inputs[0]
    r, perm = cv.rank(x), cv.perm_of(x)
    v = cv.fl(x, perm)
    beta = float(opt(op, "Beta", 1.0)) if op.name == "SOFTMAX" else 1.0
    if beta != 1.0:
        v = cv.node("Mul", [v, cv.scalar(beta)])
    y = cv.node("Softmax" if op.name == "SOFTMAX" else "LogSoftmax", [v], axis=perm.index(r - 1))
    cv.put(op.outputs[0], y, perm, shape=cv.shape(x))


def quantize(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    perm = cv.perm_of(x)
    cv.put(out, cv.fl(x, perm), perm, shape=cv.shape(x))


def dequantize(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    a = cv.const(x)
    if a is not None:   # constant weights: float16 (kept 16-bit by the plan) or int8, dequantised here
        t = cv.t(x)
        if a.dtype == np.float16:
            cv.fp16_weights += a.size
            cv.put_const(out, a.astype(np.float32))
            return
        if t.quant is not None and not t.quant.per_channel:
            cv.put_const(out, ((a.astype(np.float32) - np.float32(t.quant.zero_point[0]))
                               * np.float32(t.quant.scale[0])).astype(np.float32))
            return
        if t.quant is not None:
            q = t.quant
            sh = [1] * a.ndim
            sh[q.axis] = -1
            cv.put_const(out, ((a.astype(np.float32) - q.zero_point.reshape(sh).astype(np.float32))
                               * q.scale.reshape(sh)).astype(np.float32))
            return
    perm = cv.perm_of(x)
    cv.put(out, cv.fl(x, perm), perm, shape=cv.shape(x))


def cast(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    to = cv.t(out).type
    if to not in _ONNX_OF_TFL:
        raise Unsupported(f"cast to {cv.t(out).type_name}")
    if cv.t(x).type == 8:
        raise Unsupported("complex64 input (a cast of an FFT's output keeps the real part)")
    if cv.is_const(x):
        cv.put_const(out, cv.const(x).astype(cv.t(out).dtype))
        return
    perm = cv.perm_of(x)
    cv.put(out, cv.node("Cast", [cv.raw(x, perm)], to=_ONNX_OF_TFL[to]), perm, shape=cv.shape(x), is_float=False)


def densify(cv: Converter, op: Op):
    a = _need_const(cv, op.inputs[0], "DENSIFY's input")   # densified by reader.densify
    cv.put_const(op.outputs[0], a)
    cv.t(op.outputs[0]).quant = cv.t(op.inputs[0]).quant


# ---- pooling, resizing, depth/space -------------------------------------------------------------------
def pool(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    n, h, w, c = cv.shape(x)
    kh, kw = opt(op, "FilterHeight", 1), opt(op, "FilterWidth", 1)
    sh, sw = opt(op, "StrideH", 1), opt(op, "StrideW", 1)
    pad = opt(op, "Padding", 0)
    oh, pt, pb = _same_pads(h, kh, sh, 1, pad)
    ow, pl, pr = _same_pads(w, kw, sw, 1, pad)
    attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], pads=[pt, pl, pb, pr])
    act = opt(op, "FusedActivationFunction")
    if op.name == "MAX_POOL_2D":
        if cv.same_q(x, out) and act == 0:   # max commutes with the quantiser: it runs on the codes
            cv.put(out, cv.node("MaxPool", [cv.raw(x, NCHW)], **attrs), NCHW, shape=(n, oh, ow, c), is_float=False)
            return
        y = cv.node("MaxPool", [cv.fl(x, NCHW)], **attrs)
    else:   # TF's average excludes the padding from the count
        y = cv.node("AveragePool", [cv.fl(x, NCHW)], count_include_pad=0, **attrs)
    cv.put(out, cv.act(y, act), NCHW, shape=(n, oh, ow, c))


def resize(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    size = _need_const(cv, op.inputs[1], "the output size")
    n, h, w, c = cv.shape(x)
    oh, ow = int(size[0]), int(size[1])
    ac, hp = bool(opt(op, "AlignCorners", False)), bool(opt(op, "HalfPixelCenters", False))
    if op.name == "RESIZE_BILINEAR":
        # TF: in = out * (in-1)/(out-1) (align_corners), (out + 0.5) * in/out - 0.5 (half pixel), out * in/out
        mode, extra = "linear", {}
        ctm = "align_corners" if ac else ("half_pixel" if hp else "asymmetric")
    else:
        # TF: round(out * (in-1)/(out-1)) half away from zero (align_corners); floor((out + 0.5) * in/out)
        # (half pixel); floor(out * in/out) otherwise
        mode = "nearest"
        if ac:
            ctm, extra = "align_corners", {"nearest_mode": "round_prefer_ceil"}
        elif hp:
            ctm, extra = "tf_half_pixel_for_nearest", {"nearest_mode": "floor"}
        else:
            ctm, extra = "asymmetric", {"nearest_mode": "floor"}
    y = cv.node("Resize", [cv.fl(x, NCHW), "", "", cv.ints([n, c, oh, ow])], mode=mode,
                coordinate_transformation_mode=ctm, **extra)
    cv.put(out, y, NCHW, shape=(n, oh, ow, c))


def depth_space(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    n, h, w, c = cv.shape(x)
    bs = opt(op, "BlockSize", 2)
    if op.name == "DEPTH_TO_SPACE":   # TF's order is ONNX's DCR
        y = cv.node("DepthToSpace", [cv.fl(x, NCHW)], blocksize=bs, mode="DCR")
        shape = (n, h * bs, w * bs, c // (bs * bs))
    else:
        y = cv.node("SpaceToDepth", [cv.fl(x, NCHW)], blocksize=bs)
        shape = (n, h // bs, w // bs, c * bs * bs)
    cv.put(out, y, NCHW, shape=shape)


# ---- reductions ---------------------------------------------------------------------------------------
_REDUCE = {"MEAN": "ReduceMean", "SUM": "ReduceSum", "REDUCE_MAX": "ReduceMax", "REDUCE_MIN": "ReduceMin",
           "REDUCE_PROD": "ReduceProd"}
_NP_REDUCE = {"MEAN": np.mean, "SUM": np.sum, "REDUCE_MAX": np.max, "REDUCE_MIN": np.min, "REDUCE_PROD": np.prod}


def reduce(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    shape = cv.shape(x)
    r = len(shape)
    axes = sorted({_axis(a, r) for a in np.asarray(_need_const(cv, op.inputs[1], "the axes")).reshape(-1)})
    keep = bool(opt(op, "KeepDims", False))
    oshape = tuple(1 if a in axes else d for a, d in enumerate(shape)) if keep else \
        tuple(d for a, d in enumerate(shape) if a not in axes)
    if cv.is_const(x) and not cv.quantized(x):
        cv.put_const(out, np.asarray(_NP_REDUCE[op.name](cv.const(x), axis=tuple(axes), keepdims=keep))
                     .astype(cv.const(x).dtype))
        return
    perm = cv.perm_of(x)
    y = cv.node(_REDUCE[op.name], [cv.fl(x, perm), cv.ints([perm.index(a) for a in axes])], keepdims=int(keep))
    cv.put(out, y, perm if keep else _drop_perm(perm, axes), shape=oshape)


def arg_max(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    shape = cv.shape(x)
    a = _axis(np.asarray(_need_const(cv, op.inputs[1], "the axis")).reshape(-1)[0], len(shape))
    perm = cv.perm_of(x)
    y = cv.node("ArgMax" if op.name == "ARG_MAX" else "ArgMin", [cv.fl(x, perm)], axis=perm.index(a), keepdims=0)
    if cv.t(out).type == 2:
        y = cv.node("Cast", [y], to=ONNX_INT32)
    cv.put(out, y, _drop_perm(perm, [a]), shape=tuple(d for k, d in enumerate(shape) if k != a), is_float=False)


# ---- shapes and views ---------------------------------------------------------------------------------
def _put_reshaped(cv: Converter, op: Op, new_shape):
    x, out = op.inputs[0], op.outputs[0]
    size = int(np.prod(cv.shape(x)))
    new_shape = [int(d) for d in new_shape]
    if -1 in new_shape:
        known = int(np.prod([d for d in new_shape if d != -1]))
        new_shape[new_shape.index(-1)] = size // known if known else 0
    if cv.is_const(x):
        cv.put_const(out, cv.const(x).reshape(new_shape))
        return
    y, p = cv.reshape(x, new_shape)
    if cv.same_q(x, out):
        cv.put(out, y, p, shape=new_shape, is_float=False)
    else:
        cv.put(out, cv.deq(y, x, p), p, shape=new_shape)


def reshape(cv: Converter, op: Op):
    if len(op.inputs) > 1 and op.inputs[1] >= 0 and cv.is_const(op.inputs[1]):
        shape = cv.const(op.inputs[1]).reshape(-1)
    elif op.options is not None and opt(op, "NewShapeLength", 0):
        shape = op.options.NewShapeAsNumpy()
    elif len(op.inputs) > 1 and op.inputs[1] >= 0:
        raise Unsupported("the new shape is computed at run time")
    else:
        shape = cv.t(op.outputs[0]).shape
    _put_reshaped(cv, op, shape)


def squeeze(cv: Converter, op: Op):
    shape = cv.shape(op.inputs[0])
    dims = opt(op, "SqueezeDimsAsNumpy", None) if opt(op, "SqueezeDimsLength", 0) else None
    if dims is None or len(dims) == 0:
        drop = {a for a, d in enumerate(shape) if d == 1}
    else:
        drop = {_axis(a, len(shape)) for a in np.asarray(dims).reshape(-1)}
    _put_reshaped(cv, op, [d for a, d in enumerate(shape) if a not in drop])


def expand_dims(cv: Converter, op: Op):
    shape = list(cv.shape(op.inputs[0]))
    a = int(np.asarray(_need_const(cv, op.inputs[1], "the axis")).reshape(-1)[0])
    a = a + len(shape) + 1 if a < 0 else a
    _put_reshaped(cv, op, shape[:a] + [1] + shape[a:])


def transpose(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    P = tuple(int(v) for v in _need_const(cv, op.inputs[1], "the permutation").reshape(-1))
    shape = tuple(cv.shape(x)[a] for a in P)
    if cv.is_const(x):
        cv.put_const(out, np.transpose(cv.const(x), P))
        return
    # no data moves: the output is the input held in another layout (perm composed)
    p_in = cv.perm_of(x)
    p_out = compose(inverse(P), p_in)
    if cv.same_q(x, out):
        cv.put(out, cv.raw(x, p_in), p_out, shape=shape, is_float=False)
    else:
        cv.put(out, cv.fl(x, p_in), p_out, shape=shape)


def shape_op(cv: Converter, op: Op):
    dt = np.int64 if cv.t(op.outputs[0]).type == 4 else np.int32
    cv.put_const(op.outputs[0], np.asarray(cv.shape(op.inputs[0]), dt))


def concat(cv: Converter, op: Op):
    out = op.outputs[0]
    ins = [i for i in op.inputs if i >= 0]
    r = cv.rank(ins[0]) if not cv.is_const(ins[0]) else cv.const(ins[0]).ndim
    axis = _axis(opt(op, "Axis", 0), r)
    shapes = [cv.shape(i) if not cv.is_const(i) else cv.const(i).shape for i in ins]
    shape = list(shapes[0])
    shape[axis] = sum(s[axis] for s in shapes)
    if all(cv.is_const(i) for i in ins) and not any(cv.quantized(i) for i in ins):
        cv.put_const(out, np.concatenate([cv.const(i) for i in ins], axis=axis).astype(cv.t(out).dtype or np.int32))
        return
    perm = cv.common_perm(ins, r)
    act = opt(op, "FusedActivationFunction")
    if act == 0 and all(cv.same_q(i, out) for i in ins):
        y = cv.node("Concat", [cv.raw(i, perm) for i in ins], axis=perm.index(axis))
        cv.put(out, y, perm, shape=shape, is_float=False)
        return
    y = cv.node("Concat", [cv.fl(i, perm) for i in ins], axis=perm.index(axis))
    cv.put(out, cv.act(y, act), perm, shape=shape)


def pack(cv: Converter, op: Op):
    out = op.outputs[0]
    ins = list(op.inputs)
    r = cv.rank(ins[0]) if not cv.is_const(ins[0]) else cv.const(ins[0]).ndim
    axis = _axis(opt(op, "Axis", 0), r + 1)
    if all(cv.is_const(i) for i in ins):
        cv.put_const(out, np.stack([cv.const(i) for i in ins], axis=axis))
        return
    parts = [cv.node("Unsqueeze", [cv.fl(i), cv.ints([axis])]) for i in ins]
    shape = list(cv.shape(ins[0]))
    shape.insert(axis, len(ins))
    cv.put(out, cv.node("Concat", parts, axis=axis), None, shape=shape)


def unpack(cv: Converter, op: Op):
    x = op.inputs[0]
    shape = list(cv.shape(x))
    axis = _axis(opt(op, "Axis", 0), len(shape))
    perm = cv.perm_of(x)
    outs = cv.node("Split", [cv.fl(x, perm), cv.ints([1] * shape[axis])], n_out=shape[axis], axis=perm.index(axis))
    outs = outs if isinstance(outs, list) else [outs]
    oshape = shape[:axis] + shape[axis + 1:]
    for o, y in zip(op.outputs, outs):
        y = cv.node("Squeeze", [y, cv.ints([perm.index(axis)])])
        cv.put(o, y, _drop_perm(perm, [axis]), shape=oshape)


def split(cv: Converter, op: Op):
    if op.name == "SPLIT":
        axis_t, x = op.inputs[0], op.inputs[1]
        shape = cv.shape(x)
        n = opt(op, "NumSplits", len(op.outputs))
        axis = _axis(np.asarray(_need_const(cv, axis_t, "the axis")).reshape(-1)[0], len(shape))
        sizes = [shape[axis] // n] * n
    else:
        x, sizes_t, axis_t = op.inputs[0], op.inputs[1], op.inputs[2]
        shape = cv.shape(x)
        axis = _axis(np.asarray(_need_const(cv, axis_t, "the axis")).reshape(-1)[0], len(shape))
        sizes = [int(s) for s in _need_const(cv, sizes_t, "the sizes").reshape(-1)]
        if -1 in sizes:
            sizes[sizes.index(-1)] = shape[axis] - sum(s for s in sizes if s != -1)
    if cv.is_const(x):
        bounds = np.cumsum(sizes)[:-1]
        for o, part in zip(op.outputs, np.split(cv.const(x), bounds, axis=axis)):
            cv.put_const(o, part)
        return
    perm = cv.perm_of(x)
    codes = all(cv.same_q(x, o) for o in op.outputs)
    v = cv.raw(x, perm) if codes else cv.fl(x, perm)
    outs = cv.node("Split", [v, cv.ints(sizes)], n_out=len(sizes), axis=perm.index(axis))
    outs = outs if isinstance(outs, list) else [outs]
    for o, y, s in zip(op.outputs, outs, sizes):
        oshape = list(shape)
        oshape[axis] = s
        cv.put(o, y, perm, shape=oshape, is_float=not codes)


def pad(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    pads = np.asarray(_need_const(cv, op.inputs[1], "the paddings"), np.int64).reshape(-1, 2)
    shape = cv.shape(x)
    oshape = [d + int(p[0]) + int(p[1]) for d, p in zip(shape, pads)]
    perm = cv.perm_of(x)
    if len(shape) == 4 and perm == ident(4) and not pads[0].any() and not pads[3].any():
        perm = (0, 3, 1, 2)   # a spatial pad of an NHWC tensor is read by a conv or a pool: pad channels-first
    onnx_pads = [int(pads[a, 0]) for a in perm] + [int(pads[a, 1]) for a in perm]
    attrs = {}
    if op.name == "MIRROR_PAD":
        if opt(op, "Mode", 0) != 0:
            raise Unsupported("MIRROR_PAD SYMMETRIC (ONNX's reflect is TF's REFLECT)")
        attrs["mode"] = "reflect"
    codes = cv.same_q(x, out)
    v = cv.raw(x, perm) if codes else cv.fl(x, perm)
    ins = [v, cv.ints(onnx_pads)]
    if op.name != "MIRROR_PAD":
        cval = _in(op, 2)
        if codes and cv.quantized(x):   # the padding holds the code of 0 (PADV2: the given code)
            c = cv.const(cval) if cval >= 0 else np.asarray(cv.t(x).quant.zero_point[0])
            ins.append(cv.init(np.asarray(c).reshape(()).astype(cv.t(x).dtype), "pad_value"))
        elif cval >= 0:
            c = cv.const(cval)
            if cv.quantized(cval):
                q = cv.t(cval).quant
                c = (np.float32(c.reshape(-1)[0]) - np.float32(q.zero_point[0])) * np.float32(q.scale[0])
            ins.append(cv.init(np.asarray(c).reshape(()).astype(np.float32 if not codes else cv.t(x).dtype),
                               "pad_value"))
    cv.put(out, cv.node("Pad", ins, **attrs), perm, shape=oshape, is_float=not codes)


def _slice_spec(shape, begin, end, strides, bm, em, elm, nam, sam, offset=False):
    """TF's strided slice on a static shape: per input dim (begin, end, step, shrink) with end -1 meaning
    "before index 0" for negative steps, and the output shape with new axes inserted and shrunk dims
    dropped."""
    r = len(shape)
    n = len(begin)
    spec = []   # ("full",) | ("new",) | ("slice", j)
    for j in range(n):
        if elm >> j & 1:
            count = r - sum(1 for k in range(n) if k != j and not (nam >> k & 1) and not (elm >> k & 1))
            spec += [("full",)] * count
        elif nam >> j & 1:
            spec.append(("new",))
        else:
            spec.append(("slice", j))
    dims = sum(1 for s in spec if s[0] != "new")
    spec += [("full",)] * (r - dims)
    per_dim, out_shape, d = [], [], 0
    for s in spec:
        if s[0] == "new":
            out_shape.append(1)
            continue
        size = shape[d]
        if s[0] == "full":
            per_dim.append((0, size, 1, False))
            out_shape.append(size)
            d += 1
            continue
        j = s[1]
        st = int(strides[j])
        if st == 0:
            raise Unsupported("a stride of 0")
        b, e = int(begin[j]), int(end[j])
        if offset:
            e = b + e
        if sam >> j & 1:
            b = b + size if b < 0 else b
            per_dim.append((b, b + 1, 1, True))
            d += 1
            continue
        if bm >> j & 1:
            b = 0 if st > 0 else size - 1
        else:
            b = b + size if b < 0 else b
            b = min(max(b, 0), size) if st > 0 else min(max(b, -1), size - 1)
        if em >> j & 1:
            e = size if st > 0 else -1
        else:
            e = e + size if e < 0 else e
            e = min(max(e, 0), size) if st > 0 else min(max(e, -1), size - 1)
        length = max(0, -(-(e - b) // st)) if st > 0 else max(0, -(-(b - e) // -st))
        per_dim.append((b, e, st, False))
        out_shape.append(length)
        d += 1
    return per_dim, out_shape


def strided_slice(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    shape = list(cv.shape(x) if not cv.is_const(x) else cv.const(x).shape)
    if op.name == "SLICE":
        b = _need_const(cv, op.inputs[1], "the begin").reshape(-1)
        s = _need_const(cv, op.inputs[2], "the size").reshape(-1)
        e = [shape[k] if int(s[k]) == -1 else int(b[k]) + int(s[k]) for k in range(len(shape))]
        per_dim, oshape = _slice_spec(shape, b, e, [1] * len(shape), 0, 0, 0, 0, 0)
    else:
        b = _need_const(cv, op.inputs[1], "the begin").reshape(-1)
        e = _need_const(cv, op.inputs[2], "the end").reshape(-1)
        st = _need_const(cv, op.inputs[3], "the strides").reshape(-1) if _in(op, 3) >= 0 else [1] * len(b)
        per_dim, oshape = _slice_spec(shape, b, e, st, opt(op, "BeginMask"), opt(op, "EndMask"),
                                      opt(op, "EllipsisMask"), opt(op, "NewAxisMask"), opt(op, "ShrinkAxisMask"),
                                      bool(opt(op, "Offset", False)))
    sliced = [len(range(size)[bb:ee if ee >= 0 else None:ss]) if not sh else 1
              for (bb, ee, ss, sh), size in zip(per_dim, shape)]
    if cv.is_const(x):
        idx = tuple(slice(bb, ee if ee >= 0 else None, ss) for bb, ee, ss, _ in per_dim)
        cv.put_const(out, np.asarray(cv.const(x)[idx]).reshape(oshape))
        return
    perm = cv.perm_of(x)
    codes = cv.same_q(x, out)
    v = cv.raw(x, perm) if codes else cv.fl(x, perm)
    axes = [k for k in range(len(shape)) if per_dim[perm[k]][:3] != (0, shape[perm[k]], 1)]
    if axes:
        starts = [per_dim[perm[k]][0] for k in axes]
        ends = [per_dim[perm[k]][1] if per_dim[perm[k]][1] >= 0 else -(shape[perm[k]] + 1) for k in axes]
        steps = [per_dim[perm[k]][2] for k in axes]
        v = cv.node("Slice", [v, cv.ints(starts), cv.ints(ends), cv.ints(axes), cv.ints(steps)])
    y, p = cv.reshape_name(v, sliced, perm, oshape, cv.t(x).name)
    cv.put(out, y, p, shape=oshape, is_float=not codes)


def gather(cv: Converter, op: Op):
    x, idx, out = op.inputs[0], op.inputs[1], op.outputs[0]
    if opt(op, "BatchDims", 0):
        raise Unsupported("batch_dims")
    shape = list(cv.shape(x) if not cv.is_const(x) else cv.const(x).shape)
    axis = _axis(opt(op, "Axis", 0), len(shape))
    ishape = list(cv.shape(idx) if not cv.is_const(idx) else cv.const(idx).shape)
    oshape = shape[:axis] + ishape + shape[axis + 1:]
    if cv.is_const(x) and cv.is_const(idx):
        cv.put_const(out, np.take(cv.const(x), cv.const(idx), axis=axis))
        return
    perm = cv.perm_of(x)
    if len(ishape) == 1:
        p_out = perm
    elif len(ishape) == 0:
        p_out = _drop_perm(perm, [axis])
    else:
        perm, p_out = ident(len(shape)), None
    codes = cv.same_q(x, out)
    v = cv.raw(x, perm) if codes else cv.fl(x, perm)
    y = cv.node("Gather", [v, cv.raw(idx)], axis=perm.index(axis))
    if p_out is None:   # indices of rank >= 2: TFLite's order, the index dims in place of the axis
        p_out = ident(len(oshape))
    cv.put(out, y, p_out, shape=oshape, is_float=not codes)


def range_op(cv: Converter, op: Op):
    s, l, d = (np.asarray(_need_const(cv, i, "RANGE's operands")).reshape(()) for i in op.inputs)
    cv.put_const(op.outputs[0], np.arange(s, l, d).astype(cv.t(op.outputs[0]).dtype))


def fill(cv: Converter, op: Op):
    dims = _need_const(cv, op.inputs[0], "the dims").reshape(-1)
    v = np.asarray(_need_const(cv, op.inputs[1], "the value")).reshape(())
    cv.put_const(op.outputs[0], np.full([int(d) for d in dims], v))


def reverse(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    shape = cv.shape(x)
    axes = [_axis(a, len(shape)) for a in _need_const(cv, op.inputs[1], "the axes").reshape(-1)]
    perm = cv.perm_of(x)
    v = cv.raw(x, perm) if cv.same_q(x, out) else cv.fl(x, perm)
    big = -(1 << 62)
    y = cv.node("Slice", [v, cv.ints([-1] * len(axes)), cv.ints([big] * len(axes)),
                          cv.ints([perm.index(a) for a in axes]), cv.ints([-1] * len(axes))])
    cv.put(out, y, perm, shape=shape, is_float=not cv.same_q(x, out))


def tile(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    reps = [int(v) for v in _need_const(cv, op.inputs[1], "the multiples").reshape(-1)]
    perm = cv.perm_of(x)
    y = cv.node("Tile", [cv.fl(x, perm), cv.ints([reps[a] for a in perm])])
    cv.put(out, y, perm, shape=[d * m for d, m in zip(cv.shape(x), reps)])


def broadcast_to(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    shape = [int(v) for v in _need_const(cv, op.inputs[1], "the shape").reshape(-1)]
    oshape = list(_bshape(cv.shape(x), shape))
    r = len(oshape)
    perm = cv.common_perm([x], r)
    y = cv.node("Expand", [cv.fl_rank(x, r, perm), cv.ints([oshape[a] for a in perm])])
    cv.put(out, y, perm, shape=oshape)


def batch_matmul(cv: Converter, op: Op):
    a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
    xa, xb = cv.fl(a), cv.fl(b)
    sa, sb = list(cv.shape(a)), list(cv.shape(b))
    if opt(op, "AdjX", False):
        xa = cv.node("Transpose", [xa], perm=list(range(len(sa) - 2)) + [len(sa) - 1, len(sa) - 2])
        sa[-1], sa[-2] = sa[-2], sa[-1]
    if opt(op, "AdjY", False):
        xb = cv.node("Transpose", [xb], perm=list(range(len(sb) - 2)) + [len(sb) - 1, len(sb) - 2])
        sb[-1], sb[-2] = sb[-2], sb[-1]
    shape = list(_bshape(sa[:-2], sb[:-2])) + [sa[-2], sb[-1]]
    cv.put(out, cv.node("MatMul", [xa, xb]), None, shape=shape)


def l2_norm(cv: Converter, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    r, perm = cv.rank(x), cv.perm_of(x)
    v = cv.fl(x, perm)
    ax = perm.index(r - 1)
    n = cv.node("ReduceSumSquare", [v, cv.ints([ax])], keepdims=1)
    n = cv.node("Sqrt", [cv.node("Max", [n, cv.scalar(1e-12)])])
    cv.put(out, cv.act(cv.node("Div", [v, n]), opt(op, "FusedActivationFunction")), perm, shape=cv.shape(x))


HANDLERS = {
    "CONV_2D": conv2d, "DEPTHWISE_CONV_2D": conv2d, "TRANSPOSE_CONV": transpose_conv_op,
    "CUSTOM:Convolution2DTransposeBias": mediapipe_transpose_conv_bias, "FULLY_CONNECTED": fully_connected,
    "AVERAGE_POOL_2D": pool, "MAX_POOL_2D": pool, "RESIZE_BILINEAR": resize, "RESIZE_NEAREST_NEIGHBOR": resize,
    "DEPTH_TO_SPACE": depth_space, "SPACE_TO_DEPTH": depth_space,
    "SOFTMAX": softmax, "LOG_SOFTMAX": softmax, "PRELU": prelu, "QUANTIZE": quantize, "DEQUANTIZE": dequantize,
    "CAST": cast, "DENSIFY": densify, "ARG_MAX": arg_max, "ARG_MIN": arg_max,
    "RESHAPE": reshape, "SQUEEZE": squeeze, "EXPAND_DIMS": expand_dims, "TRANSPOSE": transpose,
    "CONCATENATION": concat, "PACK": pack, "UNPACK": unpack, "SPLIT": split, "SPLIT_V": split,
    "STRIDED_SLICE": strided_slice, "SLICE": strided_slice, "PAD": pad, "PADV2": pad, "MIRROR_PAD": pad,
    "GATHER": gather, "SHAPE": shape_op, "RANGE": range_op, "FILL": fill, "REVERSE_V2": reverse, "TILE": tile,
    "BROADCAST_TO": broadcast_to, "BATCH_MATMUL": batch_matmul, "L2_NORMALIZATION": l2_norm,
    "SELECT": select, "SELECT_V2": select,
}
HANDLERS.update(variables.HANDLERS)
HANDLERS.update(control.HANDLERS)
HANDLERS.update({k: binary for k in _BINARY})
HANDLERS.update({k: reduce for k in _REDUCE})
HANDLERS.update({k: unary for k in list(_UNARY) + ["RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU", "RSQRT",
                                                   "SQUARE", "GELU"]})
del math

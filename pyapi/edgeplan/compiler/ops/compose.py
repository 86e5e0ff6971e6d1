"""ONNX ops that are exact compositions of runtime ops the plan already has: each is written as its
definition (most are ONNX functions), with no kernel of its own. A few cost more ops than a dedicated
kernel would; the ones a real model spends time in get kernels of their own (docs/adding-an-op.md).

  Softplus  relu(x) + log(1 + exp(-|x|))      (no overflow for large x)
  Softsign  x / (1 + |x|)                       Mish   x * tanh(softplus(x))
  Selu      gamma * elu(x, alpha)               Celu   alpha * elu(x / alpha)
  ThresholdedRelu  x > alpha ? x : 0            Shrink x < -l ? x + b : (x > l ? x - b : 0)
  Swish     x * sigmoid(alpha * x)              IsNaN  not (x == x)       IsInf  |x| == inf (signs)
  ReduceL1  sum |x|     ReduceLogSum  log(sum x)     ReduceLogSumExp  m + log(sum exp(x - m)), m = max x
  Hardmax   one-hot of argmax along axis        Tile   a broadcast of a view, then a view
  EyeLike   a constant (its input's shape is static)
  LpPool    (avgpool(|x|^p, counting pads) * window) ^ (1/p)"""
from __future__ import annotations

import numpy as np

from ..._cdef import K, NUMPY_TO_EP
from ..lowering import NodeError
from ._util import norm_axis, prod

F32 = np.dtype(np.float32)


class Build:
    """Emits the runtime ops of one node's composition: temporaries named under the node's first output,
    the last value bound to that output by out()."""

    def __init__(self, ctx, n):
        self.ctx, self.n, self.k = ctx, n, 0

    def _tmp(self, shape, dtype=F32):
        self.k += 1
        return self.ctx.tmp(f"{self.n.outputs[0]}/{self.k}", shape, dtype)

    def const(self, value, dtype=F32):
        self.k += 1
        return self.ctx.const(f"{self.n.outputs[0]}/c{self.k}", np.asarray(value, dtype))

    def unary(self, kind: str, x, alpha=0.0, beta=0.0):
        y = self._tmp(x.shape)
        self.ctx.emit("unary", [x], [y], {"kind": getattr(K, f"EP_ACT_{kind}"), "alpha": float(alpha),
                                         "beta": float(beta)}, inplace=None if x.is_const else 0)
        return y

    def bin(self, kind: str, a, b):
        from .elementwise import binary
        self.k += 1
        return binary(self.ctx, getattr(K, f"EP_BIN_{kind}"), a, b, out_name=f"{self.n.outputs[0]}/{self.k}")

    def cmp(self, kind: str, a, b):
        y = self._tmp(np.broadcast_shapes(a.shape, b.shape), np.bool_)
        self.ctx.emit("compare", [a, b], [y], {"kind": getattr(K, f"EP_CMP_{kind}")})
        return y

    def where(self, c, a, b):
        y = self._tmp(np.broadcast_shapes(c.shape, a.shape, b.shape), a.dtype)
        self.ctx.emit("where", [c, a, b], [y], {})
        return y

    def cast(self, x, dtype):
        y = self._tmp(x.shape, dtype)
        self.ctx.emit("cast", [x], [y], {"to": NUMPY_TO_EP[np.dtype(dtype)]})
        return y

    def reduce(self, kind: str, x, axes, keep=True):
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep else \
            [d for i, d in enumerate(x.shape) if i not in axes]
        y = self._tmp(shape, x.dtype)
        self.ctx.emit("reduce", [x], [y], {"kind": getattr(K, f"EP_REDUCE_{kind}"),
                                           "axes_mask": sum(1 << a for a in axes), "keepdims": int(keep)})
        return y

    def out(self, t):
        """t becomes the node's output 0 (a view: no copy)."""
        return self.ctx.view_output(self.n, 0, t, t.shape)


def _f32_input(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    return X, Build(ctx, n)


def _softplus(b, x):
    return b.bin("ADD", b.unary("RELU", x), b.unary("LOG", b.bin("ADD", b.const(1.0), b.unary("EXP", b.unary("NEG", b.unary("ABS", x))))))


def lower_softplus(ctx, n):
    x, b = _f32_input(ctx, n)
    b.out(_softplus(b, x))


def lower_softsign(ctx, n):
    x, b = _f32_input(ctx, n)
    b.out(b.bin("DIV", x, b.bin("ADD", b.const(1.0), b.unary("ABS", x))))


def lower_mish(ctx, n):
    x, b = _f32_input(ctx, n)
    b.out(b.bin("MUL", x, b.unary("TANH", _softplus(b, x))))


def lower_selu(ctx, n):
    x, b = _f32_input(ctx, n)
    alpha = float(n.attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(n.attrs.get("gamma", 1.05070102214813232421875))
    b.out(b.bin("MUL", b.unary("ELU", x, alpha), b.const(gamma)))


def lower_celu(ctx, n):
    x, b = _f32_input(ctx, n)
    alpha = float(n.attrs.get("alpha", 1.0))
    if alpha == 0:
        raise NodeError("alpha must not be 0")
    b.out(b.bin("MUL", b.unary("ELU", b.bin("DIV", x, b.const(alpha)), 1.0), b.const(alpha)))


def lower_thresholded_relu(ctx, n):
    x, b = _f32_input(ctx, n)
    b.out(b.where(b.cmp("GREATER", x, b.const(float(n.attrs.get("alpha", 1.0)))), x, b.const(0.0)))


def lower_shrink(ctx, n):
    x, b = _f32_input(ctx, n)
    lambd, bias = float(n.attrs.get("lambd", 0.5)), float(n.attrs.get("bias", 0.0))
    hi = b.where(b.cmp("GREATER", x, b.const(lambd)), b.bin("SUB", x, b.const(bias)), b.const(0.0))
    b.out(b.where(b.cmp("LESS", x, b.const(-lambd)), b.bin("ADD", x, b.const(bias)), hi))


def lower_swish(ctx, n):
    x, b = _f32_input(ctx, n)
    alpha = float(n.attrs.get("alpha", 1.0))
    gate = b.unary("SIGMOID", x if alpha == 1.0 else b.bin("MUL", x, b.const(alpha)))
    b.out(b.bin("MUL", x, gate))


def lower_isnan(ctx, n):
    x, b = _f32_input(ctx, n)
    b.out(b.cmp("XOR", b.cmp("EQUAL", x, x), b.const(True, np.bool_)))


def lower_isinf(ctx, n):
    x, b = _f32_input(ctx, n)
    pos, neg = int(n.attrs.get("detect_positive", 1)), int(n.attrs.get("detect_negative", 1))
    if pos and neg:
        b.out(b.cmp("EQUAL", b.unary("ABS", x), b.const(np.inf)))
    elif pos or neg:
        b.out(b.cmp("EQUAL", x, b.const(np.inf if pos else -np.inf)))
    else:
        b.out(b.cmp("XOR", b.cmp("EQUAL", x, x), b.cmp("EQUAL", x, x)))   # all false, NaN included


def _reduce_axes(ctx, n, X):
    r = len(X.shape)
    if n.input(1):
        axes = [int(a) for a in ctx.const_input(n, 1, "axes").reshape(-1)]
    else:
        axes = [int(a) for a in n.attrs.get("axes", [])]
    if not axes:
        if int(n.attrs.get("noop_with_empty_axes", 0)):
            return None
        axes = list(range(r))
    return sorted({norm_axis(a, r) for a in axes})


def lower_reduce_composed(ctx, n):
    x, b = _f32_input(ctx, n)
    axes = _reduce_axes(ctx, n, x)
    keep = bool(int(n.attrs.get("keepdims", 1)))
    if axes is None:          # noop_with_empty_axes: the elementwise part alone
        y = {"ReduceL1": lambda: b.unary("ABS", x), "ReduceLogSum": lambda: b.unary("LOG", x),
             "ReduceLogSumExp": lambda: x}[n.op_type]()
        return b.out(y)
    if n.op_type == "ReduceL1":
        return b.out(b.reduce("SUM", b.unary("ABS", x), axes, keep))
    if n.op_type == "ReduceLogSum":
        return b.out(b.unary("LOG", b.reduce("SUM", x, axes, keep)))
    m = b.reduce("MAX", x, axes, True)
    # an all -inf slice: exp(-inf - -inf) is NaN; the max is replaced by 0 there, giving log(0) + -inf
    m0 = b.where(b.cmp("EQUAL", m, b.const(-np.inf)), b.const(0.0), m)
    s = b.unary("LOG", b.reduce("SUM", b.unary("EXP", b.bin("SUB", x, m0)), axes, keep))
    b.out(b.bin("ADD", s, m0 if keep else ctx.view(m0, s.shape, f"{n.outputs[0]}/max")))


def lower_hardmax(ctx, n):
    """Hardmax along axis: 1 at the first maximum, 0 elsewhere (argmax, then a comparison with the lane
    index; opset < 13 semantics: the input viewed as 2-D at axis)."""
    x, b = _f32_input(ctx, n)
    r = len(x.shape)
    axis = norm_axis(n.attrs.get("axis", -1 if ctx.m.opset >= 13 else 1), r)
    v = x
    if ctx.m.opset < 13:        # [prod(dims[:axis]), prod(dims[axis:])]
        v = ctx.view(x, (prod(x.shape[:axis]), prod(x.shape[axis:])), f"{n.outputs[0]}/2d")
        axis = 1
    idx = b._tmp([1 if i == axis else d for i, d in enumerate(v.shape)], np.int64)
    ctx.emit("argmax", [v], [idx], {"axis": axis, "keepdims": 1, "select_last_index": 0, "min": 0})
    lanes = b.const(np.arange(v.shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(v.shape))]), np.int64)
    y = b.cast(b.cmp("EQUAL", idx, lanes), F32)
    ctx.view_output(n, 0, y, x.shape)


def lower_tile(ctx, n):
    """Tile: each axis d repeated r times is a broadcast of [.., 1, d, ..] to [.., r, d, ..] and a view
    merging the two (axes in groups of up to four, so that the broadcast stays within rank 8)."""
    X = ctx.input(n, 0)
    if n.input(1) and not ctx.known(n.input(1)):
        from .datadep import lower_tile_at_run_time
        return lower_tile_at_run_time(ctx, n, X)
    reps = [int(v) for v in ctx.const_input(n, 1, "repeats").reshape(-1)]
    if len(reps) != len(X.shape) or any(r < 0 for r in reps):
        raise NodeError(f"repeats {reps} must give one count >= 0 per dim of {list(X.shape)}")
    y = tile(ctx, X, reps, n.outputs[0])
    ctx.view_output(n, 0, y, y.shape)


def tile(ctx, X, reps: list, name: str):
    """X tiled reps[a] times along each axis a."""
    cur = X
    axes = [a for a, r in enumerate(reps) if r != 1]
    for g in range(0, len(axes), 4):
        group = set(axes[g:g + 4])
        split, full, merged = [], [], []
        for a, d in enumerate(cur.shape):
            if a in group:
                split += [1, d]
                full += [reps[a], d]
                merged.append(reps[a] * d)
            else:
                split.append(d)
                full.append(d)
                merged.append(d)
        v = ctx.view(cur, split, f"{name}/split{g}")
        e = ctx.tmp(f"{name}/tiled{g}", full, X.dtype)
        ctx.emit("expand", [v], [e], {})
        cur = ctx.view(e, merged, f"{name}/merged{g}")
    return cur


def lower_eyelike(ctx, n):
    """EyeLike: ones on the k-th diagonal of its input's (static) 2-D shape, a constant."""
    X = ctx.input(n, 0)
    if len(X.shape) != 2:
        raise NodeError(f"EyeLike needs a 2-D input, got {list(X.shape)}")
    from ..onnx_import import np_dtype
    dt = np_dtype(int(n.attrs["dtype"])) if "dtype" in n.attrs else X.dtype
    if dt is None:
        raise NodeError(f"dtype {n.attrs.get('dtype')} is unsupported")
    ctx.bind(n.outputs[0], ctx.const(n.outputs[0], np.eye(*X.shape, k=int(n.attrs.get("k", 0)), dtype=dt)))


def lower_lppool(ctx, n):
    """LpPool: (sum over the window of |x|^p) ^ (1/p), the sum an average pool counting pads times the
    window size (pads are zeros, which add nothing); 1-D to 3-D as ops/pool.py pools."""
    from .pool import pool_nd
    x, b = _f32_input(ctx, n)
    p = float(n.attrs.get("p", 2))
    if p <= 0:
        raise NodeError(f"p must be > 0, got {p}")
    xp = b.unary("ABS", x) if p == 1 else b.bin("POW", b.unary("ABS", x), b.const(p))
    avg, _ = pool_nd(ctx, n, xp, "avgpool", count_include_pad=1)
    s = b.bin("MUL", avg, b.const(float(prod(int(k) for k in n.attrs["kernel_shape"]))))
    y = s if p == 1 else b.bin("POW", s, b.const(1.0 / p))
    ctx.view_output(n, 0, y, y.shape)


LOWER = {("", "Softplus"): lower_softplus, ("", "Softsign"): lower_softsign, ("", "Mish"): lower_mish,
         ("", "Selu"): lower_selu, ("", "Celu"): lower_celu, ("", "ThresholdedRelu"): lower_thresholded_relu,
         ("", "Shrink"): lower_shrink, ("", "Swish"): lower_swish, ("", "IsNaN"): lower_isnan,
         ("", "IsInf"): lower_isinf, ("", "ReduceL1"): lower_reduce_composed,
         ("", "ReduceLogSum"): lower_reduce_composed, ("", "ReduceLogSumExp"): lower_reduce_composed,
         ("", "Hardmax"): lower_hardmax, ("", "Tile"): lower_tile, ("", "EyeLike"): lower_eyelike,
         ("", "LpPool"): lower_lppool}

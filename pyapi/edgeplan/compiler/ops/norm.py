"""Normalisation ops: LRN -> lrn (across channels; plan_format.h ep_lrn_params)."""
from __future__ import annotations

import math

import numpy as np

from ..lowering import NodeError
from ._util import prod


def lower_lrn(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if not 3 <= len(X.shape) <= 8:
        raise NodeError(f"LRN needs an input of rank 3 to 8 (N, C, spatial...), got {list(X.shape)}")
    if "size" not in n.attrs:
        raise NodeError("LRN needs its 'size' attribute")
    size = int(n.attrs["size"])
    alpha, beta, bias = (float(n.attrs.get(k, d)) for k, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
    if not 1 <= size <= 1 << 20:
        raise NodeError(f"LRN size must be in [1, 2^20], got {size}")
    if not all(math.isfinite(v) for v in (alpha, beta, bias)):
        raise NodeError(f"LRN alpha, beta and bias must be finite, got {alpha}, {beta}, {bias}")
    y = ctx.output(n, 0, X.shape, np.float32)
    ctx.emit("lrn", [X], [y], {"size": size, "alpha": alpha, "beta": beta, "bias": bias})


LOWER = {("", "LRN"): lower_lrn}

# ---- cost (compiler/cost.py): a square, a window add and subtract, a power and a divide per element ----

FLOPS = {"lrn": lambda op: 5 * prod(op.inputs[0].shape)}


# ---- normalisations expressed with layernorm over a view, then a per-channel affine ----

def _normalize_rows(ctx, n, X, rows: int, eps: float, base: str):
    """X viewed as [rows, inner], each row normalised to zero mean and unit variance (layernorm with unit
    scale and no bias); returns the result in X's shape."""
    inner = prod(X.shape) // rows if rows else 0
    x2 = ctx.view(X, (rows, inner), base + "/rows")
    ones = ctx.const(base + "/ones", np.ones(inner, np.float32))
    y2 = ctx.tmp(base + "/norm", (rows, inner))
    ctx.emit("layernorm", [x2, ones], [y2], {"axis": 1, "epsilon": float(eps)})
    return ctx.view(y2, X.shape, base + "/normed")


def _channel_affine(ctx, n, Y, scale, bias, C: int, base: str):
    """Y [N, C, ...] * scale[c] + bias[c] (scale or bias None: skipped); binds the node's output."""
    from .elementwise import binary
    from ..._cdef import K
    r = len(Y.shape)
    steps = [(K.EP_BIN_MUL, scale, "scale"), (K.EP_BIN_ADD, bias, "bias")]
    steps = [(k, t, w) for k, t, w in steps if t is not None]
    if not steps:
        return ctx.view_output(n, 0, Y, Y.shape)
    for j, (kind, t, what) in enumerate(steps):
        if prod(t.shape) != C:
            raise NodeError(f"{what} has {prod(t.shape)} values for {C} channels")
        per_c = ctx.view(t, (C,) + (1,) * (r - 2), f"{base}/{what}")
        last = j == len(steps) - 1
        Y = binary(ctx, kind, Y, per_c, out_name=f"{base}/{what}ed", bind=(n, 0) if last else None)
    return Y


def lower_instance_norm(ctx, n):
    """InstanceNormalization: per (n, c), over the spatial dims."""
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if len(X.shape) < 3:
        raise NodeError(f"InstanceNormalization needs rank >= 3 (N, C, spatial...), got {list(X.shape)}")
    S, B = ctx.input(n, 1, "scale"), ctx.input(n, 2, "B")
    ctx.need_f32(S, B)
    N, C = X.shape[:2]
    Y = _normalize_rows(ctx, n, X, N * C, float(n.attrs.get("epsilon", 1e-5)), n.outputs[0])
    _channel_affine(ctx, n, Y, S, B, C, n.outputs[0])


def lower_group_norm(ctx, n):
    """GroupNormalization: per (n, group), over the group's channels and the spatial dims; scale and bias per
    channel (opset 21) or per group (opset 18, repeated over the group's channels)."""
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if len(X.shape) < 3:
        raise NodeError(f"GroupNormalization needs rank >= 3 (N, C, spatial...), got {list(X.shape)}")
    if int(n.attrs.get("stash_type", 1)) != 1:
        raise NodeError(f"stash_type {n.attrs.get('stash_type')} is unsupported (only 1: float32)")
    N, C = X.shape[:2]
    G = int(n.attrs.get("num_groups", 0))
    if G < 1 or C % G:
        raise NodeError(f"num_groups {G} does not divide the {C} channels")
    S, B = ctx.input(n, 1, "scale"), ctx.input(n, 2, "bias")
    ctx.need_f32(S, B)
    if prod(S.shape) == G != C:          # opset 18: one value per group
        S, B = (ctx.const(t.name + "/per_channel", np.repeat(_const_of(ctx, n, t), C // G)) for t in (S, B))
    Y = _normalize_rows(ctx, n, X, N * G, float(n.attrs.get("epsilon", 1e-5)), n.outputs[0])
    _channel_affine(ctx, n, Y, S, B, C, n.outputs[0])


def _const_of(ctx, n, t):
    if t.data is None:
        raise NodeError(f"'{t.name}' is computed at run time; per-group scale and bias must be constants")
    return np.asarray(t.data, np.float32).reshape(-1)


LOWER.update({("", "InstanceNormalization"): lower_instance_norm, ("", "GroupNormalization"): lower_group_norm})


# ---- normalisations written as the ONNX functions that define them: reduce, unary and binary ops ----

def _reduce(ctx, X, axes, kind, base):
    from ..._cdef import K
    shape = [1 if i in axes else d for i, d in enumerate(X.shape)]
    y = ctx.tmp(base, shape)
    ctx.emit("reduce", [X], [y], {"kind": getattr(K, f"EP_REDUCE_{kind}"), "axes_mask": sum(1 << a for a in axes),
                                  "keepdims": 1})
    return y


def _unary(ctx, X, kind, base, bind=None):
    from ..._cdef import K
    y = ctx.output(bind[0], bind[1], X.shape, np.float32) if bind else ctx.tmp(base, X.shape)
    ctx.emit("unary", [X], [y], {"kind": getattr(K, f"EP_ACT_{kind}"), "alpha": 0.0, "beta": 0.0},
             inplace=None if X.is_const else 0)
    return y


def _bin(ctx, kind, A, B, base, bind=None):
    from ..._cdef import K
    from .elementwise import binary
    return binary(ctx, getattr(K, f"EP_BIN_{kind}"), A, B, out_name=base, bind=bind)


def _axes_attr(n, r, default):
    from ._util import norm_axis
    axes = n.attrs.get("axes", default)
    out = sorted({norm_axis(a, r) for a in axes})
    if not out:
        raise NodeError("axes is empty")
    return out


def lower_mvn(ctx, n):
    """MeanVarianceNormalization (its ONNX function): (X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9)."""
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    axes = _axes_attr(n, len(X.shape), [0, 2, 3])
    b = n.outputs[0]
    mean = _reduce(ctx, X, axes, "MEAN", b + "/mean")
    sq = _bin(ctx, "MUL", X, X, b + "/sq")
    mean_sq = _reduce(ctx, sq, axes, "MEAN", b + "/mean_sq")
    var = _bin(ctx, "SUB", mean_sq, _bin(ctx, "MUL", mean, mean, b + "/mean2"), b + "/var")
    std = _bin(ctx, "ADD", _unary(ctx, var, "SQRT", b + "/std0"), ctx.const(b + "/eps", np.float32(1e-9)), b + "/std")
    _bin(ctx, "DIV", _bin(ctx, "SUB", X, mean, b + "/centred"), std, b, bind=(n, 0))


def lower_lp_norm(ctx, n):
    """LpNormalization: X / ||X||_p along axis (p 1 or 2); a zero norm gives 0, as the ONNX reference (the
    norm is raised to FLT_MIN: a slice whose norm is 0 is all zeros, and a nonzero norm is far above it)."""
    from ._util import norm_axis
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    p = int(n.attrs.get("p", 2))
    if p not in (1, 2):
        raise NodeError(f"p {p} is unsupported (1 or 2)")
    axis = norm_axis(n.attrs.get("axis", -1), len(X.shape))
    b = n.outputs[0]
    norm = (_reduce(ctx, X, [axis], "L2", b + "/norm") if p == 2
            else _reduce(ctx, _unary(ctx, X, "ABS", b + "/abs"), [axis], "SUM", b + "/norm"))
    norm = _bin(ctx, "MAX", norm, ctx.const(b + "/tiny", np.float32(np.finfo(np.float32).tiny)), b + "/norm_pos")
    _bin(ctx, "DIV", X, norm, b, bind=(n, 0))


def lower_rms_norm(ctx, n):
    """RMSNormalization: X / sqrt(mean(X^2 over the dims from axis) + epsilon) * scale."""
    from ._util import norm_axis
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if int(n.attrs.get("stash_type", 1)) != 1:
        raise NodeError(f"stash_type {n.attrs.get('stash_type')} is unsupported (only 1: float32)")
    r = len(X.shape)
    axis = norm_axis(n.attrs.get("axis", -1), r)
    S = ctx.input(n, 1, "scale")
    ctx.need_f32(S)
    b = n.outputs[0]
    ms = _reduce(ctx, _bin(ctx, "MUL", X, X, b + "/sq"), list(range(axis, r)), "MEAN", b + "/ms")
    eps = ctx.const(b + "/eps", np.float32(n.attrs.get("epsilon", 1e-5)))
    rms = _unary(ctx, _bin(ctx, "ADD", ms, eps, b + "/ms_eps"), "SQRT", b + "/rms")
    _bin(ctx, "MUL", _bin(ctx, "DIV", X, rms, b + "/normed"), S, b, bind=(n, 0))


LOWER.update({("", "MeanVarianceNormalization"): lower_mvn, ("", "LpNormalization"): lower_lp_norm,
              ("", "RMSNormalization"): lower_rms_norm})

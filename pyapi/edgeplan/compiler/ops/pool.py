"""MaxPool / AveragePool (1-D, 2-D and 3-D), GlobalAveragePool, GlobalMaxPool; LpPool (ops/compose.py) pools
through pool_nd too.

The runtime pools are 2-D over [N, C, H, W]. A 1-D pool is one over [N, C, 1, W] (views). A 3-D pool over
(D, H, W) is separable: a 2-D pool over (H, W) of the input viewed [N, C * D, H, W], then a pool over D of
that viewed [N, C, D, OH * OW] (kernel 1 over the second axis), each axis with its own kernel, stride,
dilation and pads. That is exact: a window's valid taps are the product of each axis' valid taps, so the
maximum is the maximum over D of the maxima over (H, W), a sum is the sum over D of the sums over (H, W),
and both of AVGPOOL's divisors (valid taps, taps inside the padded extent) are products of per-axis counts;
an average of averages differs from the one division by rounding only. ceil_mode is per op: the second
pool's unit axis has the same extent either way.

MaxPool's Indices output (1-D, 2-D) is MAXPOOL's variant INDICES (reference kernel only): flat indices over
the whole input in row-major order (storage_order 0); storage_order 1 (column-major within a plane) is
computed from those with int64 binary ops. 8- and 16-bit integer inputs pool in float32 between two CASTs
(exact: float32 holds every such value)."""
from __future__ import annotations

import numpy as np

from ..._cdef import K, NUMPY_TO_EP
from ..lowering import NodeError
from ._util import ints, prod, window

# integer dtypes whose values float32 holds exactly
EXACT_IN_F32 = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16)}


def _geometry(n, X):
    """Per spatial axis [kernel, stride, dilation, pad begin, pad end, output extent], and ceil_mode."""
    r = len(X.shape)
    if r not in (3, 4, 5):
        raise NodeError(f"{r - 2}-D {n.op_type} is unsupported (1-D, 2-D and 3-D are)")
    nsp = r - 2
    kernel = n.attrs.get("kernel_shape")
    if kernel is None or len(kernel) != nsp:
        raise NodeError(f"kernel_shape {kernel} does not match {nsp} spatial dims")
    kernel = [int(k) for k in kernel]
    strides = ints(n, "strides", [1] * nsp)
    dil = ints(n, "dilations", [1] * nsp)
    if len(strides) != nsp or len(dil) != nsp:
        raise NodeError(f"strides {strides} / dilations {dil} do not match {nsp} spatial dims")
    ceil_mode = int(n.attrs.get("ceil_mode", 0))
    begin, end, outs = window(n, X.shape[2:], kernel, strides, dil, ceil_mode=bool(ceil_mode))
    if any(o <= 0 for o in outs):
        raise NodeError(f"output spatial dims {outs} are empty")
    return [list(a) for a in zip(kernel, strides, dil, begin, end, outs)], ceil_mode


_UNIT = [1, 1, 1, 0, 0]   # an axis the pool leaves as it is


def _params(ah, aw, ceil_mode, count_include_pad) -> dict:
    return {"kernel": [ah[0], aw[0]], "stride": [ah[1], aw[1]], "dilation": [ah[2], aw[2]],
            "pads": [ah[3], aw[3], ah[4], aw[4]], "ceil_mode": ceil_mode, "count_include_pad": count_include_pad}


def _is_unit(a) -> bool:
    return list(a[:5]) == _UNIT


def _pool2d(ctx, kind, x4, ah, aw, ceil_mode, cip, base, indices=False, bind=()):
    """One runtime pool of x4 [N, C, H, W] (axes ah over H, aw over W): (Y, Indices or None), temporaries or
    the IR outputs bind = ((node, i) for Y[, (node, i) for Indices])."""
    N, C = x4.shape[:2]
    yshape = (N, C, ah[5], aw[5])

    def make(k, name, dtype):
        return ctx.output(bind[k][0], bind[k][1], yshape, dtype) if k < len(bind) else ctx.tmp(name, yshape, dtype)

    outs = [make(0, base, np.float32)]
    if indices:
        outs.append(make(1, base + "/indices", np.int64))
    op = ctx.emit(kind, [x4], outs, _params(ah, aw, ceil_mode, cip))
    if indices:
        op.variant = K.EP_MAXPOOL_VARIANT_INDICES
    return outs[0], (outs[1] if indices else None)


def pool_nd(ctx, n, x, kind, count_include_pad=0, indices=False, bind=()):
    """kind ("maxpool" / "avgpool") over x [N, C, *spatial] (float32, 1 to 3 spatial dims) with n's window
    attributes: (Y [N, C, *out], row-major flat Indices of the same shape or None), as temporaries or views
    named under n's first output; a 2-D pool writes the IR outputs `bind` (as _pool2d) instead. indices only
    for 1-D and 2-D maxpool."""
    axes, ceil_mode = _geometry(n, x)
    N, C = x.shape[:2]
    base = n.outputs[0] + "/pool"
    outs = tuple(a[5] for a in axes)
    if len(axes) < 3:
        ah, aw = (axes if len(axes) == 2 else [_UNIT + [1], axes[0]])
        x4 = ctx.view(x, (N, C, x.shape[-2] if len(axes) == 2 else 1, x.shape[-1]))
        y, ix = _pool2d(ctx, kind, x4, ah, aw, ceil_mode, count_include_pad, base, indices,
                        bind if len(axes) == 2 else ())
        if len(axes) == 1:
            y = ctx.view(y, (N, C) + outs, base + "/1d")
            ix = ctx.view(ix, (N, C) + outs, base + "/indices_1d") if ix is not None else None
        return y, ix
    if indices:
        raise NodeError("the Indices output of a 3-D MaxPool is unsupported (1-D and 2-D have it)")
    ad, ah, aw = axes
    D, H, W = x.shape[2:]
    t = x
    if not (_is_unit(ah) and _is_unit(aw)) or _is_unit(ad):   # (H, W) of every depth slice (at least one pool)
        t, _ = _pool2d(ctx, kind, ctx.view(x, (N, C * D, H, W)), ah, aw, ceil_mode, count_include_pad, base + "/hw")
    if not _is_unit(ad):                      # then D, with (OH, OW) as one axis
        t = ctx.view(t, (N, C, D, ah[5] * aw[5]), base + "/d_in")
        t, _ = _pool2d(ctx, kind, t, ad, _UNIT + [ah[5] * aw[5]], ceil_mode, count_include_pad, base + "/d")
    return ctx.view(t, (N, C) + outs, base + "/3d"), None


def _cast(ctx, t, dtype, name):
    y = ctx.tmp(name, t.shape, dtype)
    ctx.emit("cast", [t], [y], {"to": NUMPY_TO_EP[np.dtype(dtype)]})
    return y


def _column_major(ctx, ix, H: int, W: int, name: str):
    """Row-major plane indices p*H*W + h*W + w as storage_order 1's p*H*W + h + w*H (int64; -1 stays -1)."""
    from .elementwise import binary

    def c(v, k):
        return ctx.const(f"{name}/c{k}", np.array(v, np.int64))

    r = binary(ctx, K.EP_BIN_MOD, ix, c(H * W, 0), out_name=name + "/in_plane")
    base = binary(ctx, K.EP_BIN_SUB, ix, r, out_name=name + "/plane")
    h = binary(ctx, K.EP_BIN_DIV, r, c(W, 1), out_name=name + "/h")
    w = binary(ctx, K.EP_BIN_MOD, r, c(W, 2), out_name=name + "/w")
    wh = binary(ctx, K.EP_BIN_MUL, w, c(H, 3), out_name=name + "/wH")
    return binary(ctx, K.EP_BIN_ADD, binary(ctx, K.EP_BIN_ADD, base, h, out_name=name + "/plane_h"), wh,
                  out_name=name + "/col")


def _used(ctx, name) -> bool:
    return bool(name) and (name in ctx.m.outputs or any(name in x.inputs for x in ctx.m.nodes))


def lower_pool(ctx, n):
    X = ctx.input(n, 0)
    avg = n.op_type == "AveragePool"
    in_dtype = X.dtype
    if not avg and in_dtype in EXACT_IN_F32:
        X = _cast(ctx, X, np.float32, n.outputs[0] + "/f32")
    ctx.need_f32(X)
    want_ix = not avg and len(n.outputs) > 1 and _used(ctx, n.outputs[1])
    cip = int(n.attrs.get("count_include_pad", 0)) if avg else 0
    if cip not in (0, 1):
        raise NodeError(f"count_include_pad={cip} (must be 0 or 1)")
    order = int(n.attrs.get("storage_order", 0))
    if order not in (0, 1):
        raise NodeError(f"storage_order={order} (must be 0 or 1)")
    if avg and len(X.shape) == 4:
        # a window over the whole map without padding is GLOBAL_AVGPOOL, bit for bit (the same sum in memory
        # order, divided by H*W): classic exports average their last 7x7 map this way
        axes, _ = _geometry(n, X)
        if all(a[0] == d and a[2] == 1 and a[3] == a[4] == 0 and a[5] == 1 for a, d in zip(axes, X.shape[2:])):
            y = ctx.output(n, 0, (X.shape[0], X.shape[1], 1, 1), np.float32)
            ctx.emit("global_avgpool", [X], [y], {})
            return
    bind = []
    if in_dtype == X.dtype:   # a 2-D pool writes the node's outputs itself
        bind.append((n, 0))
        if want_ix and order == 0:
            bind.append((n, 1))
    y, ix = pool_nd(ctx, n, X, "avgpool" if avg else "maxpool", cip, indices=want_ix, bind=bind)
    if in_dtype != X.dtype:
        y = _cast(ctx, y, in_dtype, n.outputs[0] + "/" + in_dtype.name)
    if ctx.tensors.get(n.outputs[0]) is not y:
        ctx.view_output(n, 0, y, y.shape)
    if ix is not None:
        if order == 1:
            sp = X.shape[2:]
            ix = _column_major(ctx, ix, sp[0] if len(sp) == 2 else 1, sp[-1], n.outputs[1] + "/order")
        if ctx.tensors.get(n.outputs[1]) is not ix:
            ctx.view_output(n, 1, ix, ix.shape)


def reduce_spatial(ctx, n, X, kind):
    r = len(X.shape)
    mask = sum(1 << i for i in range(2, r))
    y = ctx.output(n, 0, X.shape[:2] + (1,) * (r - 2), np.float32)
    ctx.emit("reduce", [X], [y], {"kind": kind, "axes_mask": mask, "keepdims": 1})


def lower_global_avg(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    r = len(X.shape)
    if r < 3:
        raise NodeError(f"input rank {r} < 3")
    N, C = X.shape[:2]
    if r == 4:
        y = ctx.output(n, 0, (N, C, 1, 1), np.float32)
        ctx.emit("global_avgpool", [X], [y], {})
    elif r == 3:
        y4 = ctx.tmp(n.outputs[0] + "/2d", (N, C, 1, 1))
        ctx.emit("global_avgpool", [ctx.view(X, (N, C, 1, X.shape[2]))], [y4], {})
        ctx.view_output(n, 0, y4, (N, C, 1))
    else:
        reduce_spatial(ctx, n, X, K.EP_REDUCE_MEAN)


def lower_global_max(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if len(X.shape) < 3:
        raise NodeError(f"input rank {len(X.shape)} < 3")
    reduce_spatial(ctx, n, X, K.EP_REDUCE_MAX)


LOWER = {
    ("", "MaxPool"): lower_pool,
    ("", "AveragePool"): lower_pool,
    ("", "GlobalAveragePool"): lower_global_avg,
    ("", "GlobalMaxPool"): lower_global_max,
}


# ---- cost (compiler/cost.py): one flop per window tap ----

def flops_pool(op) -> int:
    kh, kw = (int(v) for v in op.params["kernel"])
    return sum(prod(t.shape) for t in op.outputs) * kh * kw


def flops_global_pool(op) -> int:
    return prod(op.inputs[0].shape)


FLOPS = {"maxpool": flops_pool, "avgpool": flops_pool, "global_avgpool": flops_global_pool}

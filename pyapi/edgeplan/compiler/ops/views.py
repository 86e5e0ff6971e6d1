"""Zero-copy views: Reshape, Flatten, Squeeze, Unsqueeze, Identity, same-type Cast, no-op Expand (other
Casts and Expands run as cast / expand ops)."""
from __future__ import annotations

import numpy as np

from ..._cdef import NUMPY_TO_EP
from ..lowering import NodeError
from ..onnx_import import np_dtype
from ._util import norm_axis, prod


def _axes(ctx, n, i=1, attr="axes"):
    """Axes from input i (opset >= 13 style) or the attribute; None when absent."""
    if n.input(i):
        return [int(a) for a in ctx.const_input(n, i, "axes").reshape(-1)]
    v = n.attrs.get(attr)
    return None if v is None else [int(a) for a in v]


def lower_reshape(ctx, n):
    X = ctx.input(n, 0)
    if n.input(1) and not ctx.known(n.input(1)):
        from .datadep import lower_reshape_at_run_time
        return lower_reshape_at_run_time(ctx, n, X)
    shp = [int(d) for d in ctx.const_input(n, 1, "shape").reshape(-1)]
    allowzero = int(n.attrs.get("allowzero", 0))
    out = []
    for i, d in enumerate(shp):
        if d == 0 and not allowzero:
            if i >= len(X.shape):
                raise NodeError(f"shape {shp}: 0 at dim {i} beyond the input rank")
            out.append(X.shape[i])
        else:
            out.append(d)
    total = prod(X.shape)
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise NodeError(f"invalid shape {shp}")
    if -1 in out:
        rest = prod(d for d in out if d != -1)
        if rest == 0 or total % rest:
            raise NodeError(f"cannot reshape {X.shape} to {shp}")
        out[out.index(-1)] = total // rest
    if prod(out) != total:
        raise NodeError(f"cannot reshape {X.shape} to {shp}")
    ctx.view_output(n, 0, X, out)


def lower_flatten(ctx, n):
    X = ctx.input(n, 0)
    r = len(X.shape)
    axis = int(n.attrs.get("axis", 1))
    if not -r <= axis <= r:
        raise NodeError(f"axis {axis} out of range for rank {r}")
    if axis < 0:
        axis += r
    ctx.view_output(n, 0, X, (prod(X.shape[:axis]), prod(X.shape[axis:])))


def lower_squeeze(ctx, n):
    X = ctx.input(n, 0)
    r = len(X.shape)
    axes = _axes(ctx, n)
    if axes is None or not axes:
        out = [d for d in X.shape if d != 1]
    else:
        ax = {norm_axis(a, r) for a in axes}
        bad = [a for a in ax if X.shape[a] != 1]
        if bad:
            raise NodeError(f"cannot squeeze dims {bad} of shape {X.shape}")
        out = [d for i, d in enumerate(X.shape) if i not in ax]
    ctx.view_output(n, 0, X, out)


def lower_unsqueeze(ctx, n):
    X = ctx.input(n, 0)
    axes = _axes(ctx, n)
    if not axes:
        raise NodeError("axes are missing")
    r = len(X.shape) + len(axes)
    ax = sorted(norm_axis(a, r) for a in axes)
    if len(set(ax)) != len(ax):
        raise NodeError(f"repeated axes {axes}")
    out = list(X.shape)
    for a in ax:
        out.insert(a, 1)
    ctx.view_output(n, 0, X, out)


def lower_identity(ctx, n):
    X = ctx.input(n, 0)
    ctx.view_output(n, 0, X, X.shape)


# dtypes the runtime cast op converts between (plan_format.h, EP_OP_CAST)
CAST_DTYPES = {np.dtype(t) for t in (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_)}
CAST_DTYPES |= {np.dtype(t) for t in (np.uint16, np.uint32, np.uint64)}
CAST_DTYPES |= {np.dtype(t) for t in (np.float16, np.float64)} | {d for d in NUMPY_TO_EP if d.name == "bfloat16"}


def lower_cast(ctx, n):
    """Same-type Cast is a view; other Casts between CAST_DTYPES run as a cast op. CastLike takes the
    target dtype from its second input."""
    X = ctx.input(n, 0)
    to = ctx.input(n, 1).dtype if n.op_type == "CastLike" else np_dtype(int(n.attrs.get("to", 0)))
    if to == X.dtype:
        ctx.view_output(n, 0, X, X.shape)
        return
    if to not in CAST_DTYPES or X.dtype not in CAST_DTYPES or len(X.shape) > 8:
        raise NodeError(f"Cast from {X.dtype.name} to {to.name if to is not None else '?'} at run time "
                        f"is unsupported (supported: {', '.join(sorted(d.name for d in CAST_DTYPES))})")
    y = ctx.output(n, 0, X.shape, to)
    ctx.emit("cast", [X], [y], {"to": NUMPY_TO_EP[np.dtype(to)]})


def lower_expand(ctx, n):
    X = ctx.input(n, 0)
    if n.input(1) and not ctx.known(n.input(1)):
        from .datadep import lower_expand_at_run_time
        return lower_expand_at_run_time(ctx, n, X)
    shp = [int(d) for d in ctx.const_input(n, 1, "shape").reshape(-1)]
    try:
        out = tuple(np.broadcast_shapes(X.shape, tuple(shp)))
    except ValueError:
        raise NodeError(f"cannot expand {X.shape} to {shp}") from None
    if prod(out) == prod(X.shape):
        ctx.view_output(n, 0, X, out)
        return
    if len(out) > 8:
        raise NodeError(f"Expand to rank {len(out)} > 8")
    y = ctx.output(n, 0, out, X.dtype)
    ctx.emit("expand", [X], [y], {})


LOWER = {
    ("", "Reshape"): lower_reshape,
    ("", "Flatten"): lower_flatten,
    ("", "Squeeze"): lower_squeeze,
    ("", "Unsqueeze"): lower_unsqueeze,
    ("", "Identity"): lower_identity,
    ("", "Cast"): lower_cast,
    ("", "CastLike"): lower_cast,
    ("", "Expand"): lower_expand,
}


# ---- constant folding (passes/fold.py): numpy evaluations of the same ops on constants ----

def _fold_axes(node, arrays):
    if len(arrays) > 1 and arrays[1] is not None:
        return [int(a) for a in np.asarray(arrays[1]).reshape(-1)]
    v = node.attrs.get("axes")
    return None if v is None else [int(a) for a in v]


def _fold_squeeze(node, a):
    axes = _fold_axes(node, a)
    x = a[0]
    if axes is None:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    return np.squeeze(x, axis=tuple(ax % x.ndim for ax in axes)) if axes else x


def _fold_unsqueeze(node, a):
    x = a[0]
    axes = _fold_axes(node, a)
    r = x.ndim + len(axes)
    shape = list(x.shape)
    for ax in sorted(ax % r for ax in axes):
        shape.insert(ax, 1)
    return x.reshape(shape)


def _fold_reshape(node, a):
    x, shp = a[0], [int(d) for d in a[1].reshape(-1)]
    if not node.attrs.get("allowzero", 0):
        shp = [x.shape[i] if d == 0 else d for i, d in enumerate(shp)]
    return x.reshape(shp)


def _fold_cast(node, a):
    dt = np_dtype(int(node.attrs["to"]))
    if dt is None:
        raise ValueError("unsupported Cast target")
    return a[0].astype(dt)


FOLD = {"Identity": lambda n, a: a[0], "Cast": _fold_cast, "Squeeze": _fold_squeeze,
        "Unsqueeze": _fold_unsqueeze, "Reshape": _fold_reshape}

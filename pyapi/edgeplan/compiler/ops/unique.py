"""Unique (plan 1.3): the runtime op UNIQUE, whose group count depends on the data. Y's extent on the axis,
and the length of indices and counts, is bounded by a declared maximum (Lowerer.data_dim; without one the
slice count, every slice its own group); the kernel writes the actual count and later ops run at it.
Without an axis the input is viewed flattened (rank 1, axis 0). A constant input with only Y folds here (numpy;
for sorted=0 the slices in first-occurrence order along the axis)."""
from __future__ import annotations

import numpy as np

from ..lowering import NodeError
from ._util import norm_axis, prod

UNIQUE_DTYPES = {np.dtype(t) for t in (np.float32, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                       np.int64, np.uint64, np.bool_)}


def _out(ctx, n, i, shape, dtype):
    if i < len(n.outputs) and n.outputs[i]:
        return ctx.output(n, i, shape, dtype)
    return ctx.tmp(f"{n.outputs[0]}/unused{i}", shape, dtype)


def lower_unique(ctx, n):
    X = ctx.input(n, 0)
    if X.dtype not in UNIQUE_DTYPES:
        raise NodeError(f"Unique of {X.dtype.name} is unsupported")
    if not X.shape and n.attrs.get("axis") is not None:
        raise NodeError("Unique along an axis of a scalar")
    srt = int(n.attrs.get("sorted", 1))
    if srt not in (0, 1):
        raise NodeError(f"sorted={srt} (must be 0 or 1)")
    if n.attrs.get("axis") is None:
        X = ctx.view(X, (prod(X.shape),), f"{n.outputs[0]}/flat")
        axis = 0
    else:
        axis = norm_axis(n.attrs["axis"], len(X.shape))
    dim = X.shape[axis]
    length, sym, declared = ctx.data_dim(n, 0, axis, default=dim)
    shape = list(X.shape)
    shape[axis] = length
    y = _out(ctx, n, 0, shape, X.dtype)
    outs = [y, _out(ctx, n, 1, (length,), np.int64), _out(ctx, n, 2, (dim,), np.int64),
            _out(ctx, n, 3, (length,), np.int64)]
    ctx.data_dims.append((y, axis, sym, declared))
    op = ctx.emit("unique", [X], outs, {"axis": axis, "sorted": srt})
    op.scratch = 2 * 8 * int(dim)


def fold_unique(node, arrays):
    """Y of a constant input (passes/fold.py folds single-output nodes here, the others with onnx's
    reference)."""
    x = arrays[0]
    axis = node.attrs.get("axis")
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = int(axis) % x.ndim
    y, idx = np.unique(x, return_index=True, axis=axis)
    if not int(node.attrs.get("sorted", 1)):
        y = np.take(x, np.sort(idx), axis=axis)
    return y


LOWER = {("", "Unique"): lower_unique}
FOLD = {"Unique": fold_unique}

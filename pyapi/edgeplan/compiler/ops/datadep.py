"""Ops whose output length depends on the data (plan 1.1): Range with run-time inputs, NonZero. The
output's variable extent is bounded by a declared maximum (Lowerer.data_dim); the runtime kernel writes
the actual length and later ops run at it."""
from __future__ import annotations

import numpy as np

from ..lowering import NodeError
from ._util import prod

RANGE_DTYPES = {np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)}
NONZERO_DTYPES = {np.dtype(t) for t in (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_,
                                        np.uint16, np.uint32, np.uint64)}


def lower_range(ctx, n):
    ins = [ctx.input(n, i, what) for i, what in enumerate(("start", "limit", "delta"))]
    dt = ins[0].dtype
    if dt not in RANGE_DTYPES or any(t.dtype != dt for t in ins):
        raise NodeError(f"Range over {', '.join(t.dtype.name for t in ins)} is unsupported (float32, int32 or int64)")
    if any(prod(t.shape) != 1 for t in ins):
        raise NodeError("start, limit and delta must be scalars")
    length, sym, declared = ctx.data_dim(n, 0, 0)
    y = ctx.output(n, 0, (length,), dt)
    ctx.data_dims.append((y, 0, sym, declared))
    ctx.emit("range", ins, [y], {})


def lower_nonzero(ctx, n):
    x = ctx.input(n, 0)
    if x.dtype not in NONZERO_DTYPES:
        raise NodeError(f"NonZero of {x.dtype.name} is unsupported")
    if not 1 <= len(x.shape) <= 8:
        raise NodeError(f"NonZero of rank {len(x.shape)} is unsupported (1..8)")
    length, sym, declared = ctx.data_dim(n, 0, 1, default=prod(x.shape))
    y = ctx.output(n, 0, (len(x.shape), length), np.int64)
    ctx.data_dims.append((y, 1, sym, declared))
    ctx.emit("nonzero", [x], [y], {})


LOWER = {
    ("", "Range"): lower_range,
    ("", "NonZero"): lower_nonzero,
}


# ---- constant folding (passes/fold.py): ConstantOfShape is only ever folded (its shape is constant) ----

def _fold_const_of_shape(node, a):
    val = node.attrs.get("value")
    val = np.zeros(1, np.float32) if val is None else np.asarray(val).reshape(-1)
    return np.full(tuple(int(d) for d in a[0].reshape(-1)), val[0], dtype=val.dtype)


FOLD = {"ConstantOfShape": _fold_const_of_shape}

"""Reduce* → reduce (axes mask; ReduceSum/Max/Min/Prod also on int32/int64, which wrap; ReduceMax/Min on
bool through int32: any / all); Softmax /
LogSoftmax → softmax (opset < 13 via a 2-D view)."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from ._util import norm_axis, prod

KINDS = {"ReduceMean": K.EP_REDUCE_MEAN, "ReduceSum": K.EP_REDUCE_SUM, "ReduceMax": K.EP_REDUCE_MAX,
         "ReduceMin": K.EP_REDUCE_MIN, "ReduceProd": K.EP_REDUCE_PROD,
         "ReduceSumSquare": K.EP_REDUCE_SUM_SQUARE, "ReduceL2": K.EP_REDUCE_L2}
INT_KINDS = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}
INT_DTYPES = {np.dtype(np.int32), np.dtype(np.int64)}


def lower_reduce(ctx, n):
    X = ctx.input(n, 0)
    if X.dtype == np.bool_ and n.op_type in ("ReduceMax", "ReduceMin"):   # any / all: on int32, cast back
        xi = ctx.tmp(n.outputs[0] + "/int32", X.shape, np.int32)
        ctx.emit("cast", [X], [xi], {"to": K.EP_DTYPE_I32})
        X = xi
        bool_out = True
    else:
        bool_out = False
    if not (n.op_type in INT_KINDS and X.dtype in INT_DTYPES) and X.dtype != np.float32:
        ints = ", int32, int64" if n.op_type in INT_KINDS else ""
        raise NodeError(f"input '{X.name}' has dtype {X.dtype.name}; {n.op_type} supports float32{ints}")
    r = len(X.shape)
    if r > 8:
        raise NodeError(f"rank {r} > 8")
    if n.input(1):
        axes = [int(a) for a in ctx.const_input(n, 1, "axes").reshape(-1)]
    else:
        axes = [int(a) for a in n.attrs.get("axes", [])]
    keep = int(n.attrs.get("keepdims", 1))
    if not axes:
        if int(n.attrs.get("noop_with_empty_axes", 0)):
            ctx.view_output(n, 0, X, X.shape)
            return
        axes = list(range(r))
    ax = sorted({norm_axis(a, r) for a in axes})
    shape = [1 if i in ax else d for i, d in enumerate(X.shape)] if keep else \
        [d for i, d in enumerate(X.shape) if i not in ax]
    params = {"kind": KINDS[n.op_type], "axes_mask": sum(1 << a for a in ax), "keepdims": keep}
    if bool_out:   # any = a count != 0 (false when empty); all = the min (true when empty: INT32_MAX)
        if n.op_type == "ReduceMax":
            params["kind"] = K.EP_REDUCE_SUM
        yi = ctx.tmp(n.outputs[0] + "/reduced", shape, np.int32)
        ctx.emit("reduce", [X], [yi], params)
        ctx.emit("cast", [yi], [ctx.output(n, 0, shape, np.bool_)], {"to": K.EP_DTYPE_BOOL})
        return
    y = ctx.output(n, 0, shape, X.dtype)
    ctx.emit("reduce", [X], [y], params)


def lower_softmax(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    r = len(X.shape)
    if r == 0 or r > 8:
        raise NodeError(f"rank {r} is unsupported")
    log = int(n.op_type == "LogSoftmax")
    if ctx.m.opset >= 13:
        axis = norm_axis(n.attrs.get("axis", -1), r)
        y = ctx.output(n, 0, X.shape, np.float32)
        ctx.emit("softmax", [X], [y], {"axis": axis, "log": log}, inplace=None if X.is_const else 0)
        return
    axis = norm_axis(n.attrs.get("axis", 1), r)
    if axis == r - 1:
        y = ctx.output(n, 0, X.shape, np.float32)
        ctx.emit("softmax", [X], [y], {"axis": axis, "log": log}, inplace=None if X.is_const else 0)
        return
    shp2 = (prod(X.shape[:axis]), prod(X.shape[axis:]))
    y2 = ctx.tmp(n.outputs[0] + "/2d", shp2)
    ctx.emit("softmax", [ctx.view(X, shp2)], [y2], {"axis": 1, "log": log}, inplace=0)
    ctx.view_output(n, 0, y2, X.shape)


LOWER = {("", t): lower_reduce for t in KINDS}
LOWER[("", "Softmax")] = lower_softmax
LOWER[("", "LogSoftmax")] = lower_softmax


# ---- cost (compiler/cost.py): per input element, one for a reduction, four for softmax ----

FLOPS = {"reduce": lambda op: prod(op.inputs[0].shape), "softmax": lambda op: 4 * prod(op.inputs[0].shape)}

"""MaxPool / AveragePool (2-D; 1-D via views), GlobalAveragePool, GlobalMaxPool."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from ._util import ints, prod, window


def pool_geometry(ctx, n, X):
    """(x4, y4 shape, y shape, params) of a 1-D or 2-D pooling window over X: 1-D runs as 2-D with H = 1
    (x4 a view); the params are ep_pool_params' less count_include_pad."""
    r = len(X.shape)
    if r not in (3, 4):
        raise NodeError(f"{r - 2}-D {n.op_type} is unsupported (only 1-D and 2-D)")
    nsp = r - 2
    kernel = n.attrs.get("kernel_shape")
    if kernel is None or len(kernel) != nsp:
        raise NodeError(f"kernel_shape {kernel} does not match {nsp} spatial dims")
    kernel = [int(k) for k in kernel]
    strides = ints(n, "strides", [1] * nsp)
    dil = ints(n, "dilations", [1] * nsp)
    ceil_mode = int(n.attrs.get("ceil_mode", 0))
    begin, end, outs = window(n, X.shape[2:], kernel, strides, dil, ceil_mode=bool(ceil_mode))
    if any(o <= 0 for o in outs):
        raise NodeError(f"output spatial dims {outs} are empty")
    N, C = X.shape[:2]
    yshape = (N, C, *outs)
    x4 = X
    if nsp == 1:
        x4 = ctx.view(X, (N, C, 1, X.shape[2]))
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        begin, end = [0] + begin, [0] + end
    params = {"kernel": kernel, "stride": strides, "dilation": dil,
              "pads": [begin[0], begin[1], end[0], end[1]], "ceil_mode": ceil_mode}
    return x4, (N, C) + tuple(1 for _ in range(2 - nsp)) + tuple(outs), yshape, params


def lower_pool(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if len(n.outputs) > 1 and n.outputs[1]:
        used = n.outputs[1] in ctx.m.outputs or any(n.outputs[1] in x.inputs for x in ctx.m.nodes)
        if used:
            raise NodeError("the Indices output of MaxPool is unsupported")
    x4, y4shape, yshape, params = pool_geometry(ctx, n, X)
    if tuple(y4shape) != tuple(yshape):
        y4 = ctx.tmp(n.outputs[0] + "/2d", y4shape)
        ctx.view_output(n, 0, y4, yshape)
    else:
        y4 = ctx.output(n, 0, yshape, np.float32)
    avg = n.op_type == "AveragePool"
    params["count_include_pad"] = int(n.attrs.get("count_include_pad", 0)) if avg else 0
    ctx.emit("avgpool" if avg else "maxpool", [x4], [y4], params)


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

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

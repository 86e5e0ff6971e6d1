"""Helpers shared by the op lowerings: spatial windows (pads/auto_pad/ceil_mode), epilogue params, axes."""
from __future__ import annotations

import math

from ..._cdef import K
from ..limits import PARAM_LIMIT
from ..lowering import NodeError


def ints(n, key, default):
    v = n.attrs.get(key)
    return [int(x) for x in v] if v is not None else list(default)


def epilogue_params(n) -> dict:
    return {"act": int(n.attrs.get("ep_act", K.EP_ACT_NONE)),
            "act_alpha": float(n.attrs.get("ep_alpha", 0.0)),
            "act_beta": float(n.attrs.get("ep_beta", 0.0))}


def norm_axis(axis, rank, what="axis"):
    a = int(axis)
    if not -rank <= a < max(rank, 1):
        raise NodeError(f"{what} {a} is out of range for rank {rank}")
    return a % rank if rank else 0


def check_range(what, vals, nsp, lo):
    """Window attribute `what` (kernel sizes, strides, dilations, pads, ...) has nsp values in
    [lo, PARAM_LIMIT], the range the runtime accepts for conv and pool params (limits.py)."""
    vals = [int(v) for v in vals]
    if nsp is not None and len(vals) != nsp:
        raise NodeError(f"{what} {vals} do not match {nsp} spatial dims")
    if any(v < lo for v in vals):
        raise NodeError(f"{what} must be >= {lo}, got {vals}")
    if any(v > PARAM_LIMIT for v in vals):
        raise NodeError(f"{what} must be <= {PARAM_LIMIT} (the runtime's limit), got {vals}")
    return vals


def check_window(kernel, strides, dilations):
    """Kernel sizes, strides and dilations of a conv/pool window: one per spatial dim, each >= 1."""
    nsp = len(kernel)
    check_range("kernel sizes", kernel, nsp, 1)
    check_range("strides", strides, nsp, 1)
    check_range("dilations", dilations, nsp, 1)


def window(n, in_sp, kernel, strides, dilations, ceil_mode=False):
    """(pads_begin, pads_end, out_sp) of a conv/pool window over spatial dims in_sp (ONNX rules)."""
    nsp = len(in_sp)
    check_window(kernel, strides, dilations)
    auto = n.attrs.get("auto_pad", "NOTSET")
    k_eff = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        outs = [-(-i // s) for i, s in zip(in_sp, strides)]
        begin, end = [], []
        for i, s, ke, o in zip(in_sp, strides, k_eff, outs):
            total = max(0, (o - 1) * s + ke - i)
            small, big = total // 2, total - total // 2
            begin.append(small if auto == "SAME_UPPER" else big)
            end.append(big if auto == "SAME_UPPER" else small)
        return begin, end, outs
    if auto == "VALID":
        pads = [0] * (2 * nsp)
    elif auto == "NOTSET":
        pads = ints(n, "pads", [0] * (2 * nsp))
        if len(pads) != 2 * nsp:
            raise NodeError(f"pads {pads} do not match {nsp} spatial dims")
        check_range("pads", pads, None, 0)
    else:
        raise NodeError(f"auto_pad '{auto}' is unsupported")
    begin, end = pads[:nsp], pads[nsp:]
    outs = []
    for i, s, ke, b, e in zip(in_sp, strides, k_eff, begin, end):
        span = i + b + e - ke
        if span < 0:
            raise NodeError(f"window {ke} larger than padded input {i + b + e}")
        if ceil_mode:
            o = -(-span // s) + 1
            if (o - 1) * s >= i + b:      # the last window must start inside the input or left padding
                o -= 1
        else:
            o = span // s + 1
        outs.append(o)
    return begin, end, outs


def check_kernel_shape(n, kernel):
    ks = n.attrs.get("kernel_shape")
    if ks is not None and [int(k) for k in ks] != list(kernel):
        raise NodeError(f"kernel_shape {list(ks)} does not match the weights' {list(kernel)}")


def ceil_div(a, b):
    return -(-a // b)


def prod(xs):
    return int(math.prod(int(x) for x in xs))

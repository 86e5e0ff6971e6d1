"""The integer ops passes/int8.py forms (edgeplan QConv, QGemm, QAdd, QLut, Quantize, Dequantize) → qconv2d,
qgemm, qadd, qlut, quantize, dequantize (plan_format.h "int8"), and their packed weight layouts; the packing of
the dqgemm ops passes/int8_dynamic.py makes."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from ._util import ints, prod, window

QR = K.EP_QPACK_R   # rows of an int8 panel
QK = K.EP_QPACK_K   # reduction indices per group


def pack_q8(w: np.ndarray, groups: int = 1) -> np.ndarray:
    """int8 rows [R, K] (each group's R / groups rows their own panels) -> [G ceil(Rg/8), ceil(K/4), 8, 4], zero
    past the rows and K."""
    R, Kd = w.shape
    rg = R // groups
    panels, k4 = -(-rg // QR), -(-Kd // QK)
    a = np.zeros((groups, panels * QR, k4 * QK), np.int8)
    a[:, :rg, :Kd] = w.reshape(groups, rg, Kd)
    return np.ascontiguousarray(a.reshape(groups * panels, QR, k4, QK).transpose(0, 2, 1, 3))


def _panel_scratch(k: int, units: int, pack_bytes: int) -> int:
    """Panels of 8 patches / rows: as many as pack_bytes holds (>= 1)."""
    panel = -(-k // QK) * QK * QR
    return panel * max(1, min(-(-units // QR), pack_bytes // panel))


def lower_qconv(ctx, n):
    X = ctx.input(n, 0)
    W = ctx.const_input(n, 1, "weights")
    if X.dtype != np.int8 or W.dtype != np.int8 or len(X.shape) != 4 or W.ndim != 4:
        raise NodeError("expects int8 codes [N, C, H, W] and int8 weights [M, C/group, KH, KW]")
    N, C = X.shape[:2]
    M = W.shape[0]
    g = int(n.attrs.get("group", 1))
    kernel = list(W.shape[2:])
    strides = ints(n, "strides", [1, 1])
    dil = ints(n, "dilations", [1, 1])
    begin, end, outs = window(n, X.shape[2:], kernel, strides, dil)
    if any(o <= 0 for o in outs):
        raise NodeError(f"output spatial dims {outs} are empty")
    y = ctx.output(n, 0, (N, M, *outs), np.int8)
    params = {"kernel": kernel, "stride": strides, "dilation": dil, "pads": [begin[0], begin[1], end[0], end[1]],
              "groups": g}
    params.update({k: int(n.attrs[k]) for k in ("x_zero", "y_zero", "y_min", "y_max")})
    ctx.emit("qconv2d", [X, ctx.tensor(n.inputs[1]), ctx.tensor(n.inputs[2]), ctx.tensor(n.inputs[3])], [y], params)


def lower_qgemm(ctx, n):
    A = ctx.input(n, 0)
    B = ctx.const_input(n, 1, "weights")
    if A.dtype != np.int8 or B.dtype != np.int8 or not A.shape or B.ndim != 2 or A.shape[-1] != B.shape[0]:
        raise NodeError(f"expects int8 codes [..., K] and int8 weights [K, N], got {A.shape} and {B.shape}")
    Kd, N = B.shape
    lead = A.shape[:-1]
    rows = prod(lead)
    a2 = ctx.view(A, (rows, Kd))
    if len(lead) != 1:
        y2 = ctx.tmp(n.outputs[0] + "/2d", (rows, N), np.int8)
        ctx.view_output(n, 0, y2, tuple(lead) + (N,))
    else:
        y2 = ctx.output(n, 0, (rows, N), np.int8)
    ctx.emit("qgemm", [a2, ctx.tensor(n.inputs[1]), ctx.tensor(n.inputs[2]), ctx.tensor(n.inputs[3])], [y2],
             {k: int(n.attrs[k]) for k in ("y_zero", "y_min", "y_max")})


def lower_quantize(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    to = n.attrs.get("to", "i8")
    y = ctx.output(n, 0, X.shape, np.uint8 if to == "u8" else np.int8)
    ctx.emit("quantize", [X], [y], {"scale": float(n.attrs["scale"]), "zero_point": int(n.attrs["zero_point"]),
                                    "dtype": K.EP_DTYPE_U8 if to == "u8" else K.EP_DTYPE_I8})


def lower_dequantize(ctx, n):
    X = ctx.input(n, 0)
    if X.dtype not in (np.int8, np.uint8):
        raise NodeError(f"input '{X.name}' has dtype {X.dtype.name}; expects int8 or uint8 codes")
    y = ctx.output(n, 0, X.shape, np.float32)
    ctx.emit("dequantize", [X], [y], {"scale": float(n.attrs["scale"]), "zero_point": int(n.attrs["zero_point"])})


def lower_qadd(ctx, n):
    A, B = ctx.input(n, 0), ctx.input(n, 1)
    if A.dtype != np.int8 or B.dtype != np.int8 or A.shape != B.shape:
        raise NodeError(f"expects int8 codes of one shape, got {A.shape} and {B.shape}")
    y = ctx.output(n, 0, A.shape, np.int8)
    ctx.emit("qadd", [A, B], [y], {k: int(v) for k, v in n.attrs.items()})


def lower_qlut(ctx, n):
    X = ctx.input(n, 0)
    T = ctx.const_input(n, 1, "table")
    if X.dtype != np.int8 or T.dtype != np.int8 or T.shape != (256,):
        raise NodeError("expects int8 codes and an int8 table of 256 entries")
    y = ctx.output(n, 0, X.shape, np.int8)
    ctx.emit("qlut", [X, ctx.tensor(n.inputs[1])], [y], {"axis": 0})


LOWER = {
    ("edgeplan", "QAdd"): lower_qadd,
    ("edgeplan", "QLut"): lower_qlut,
    ("edgeplan", "QConv"): lower_qconv,
    ("edgeplan", "QGemm"): lower_qgemm,
    ("edgeplan", "Quantize"): lower_quantize,
    ("edgeplan", "Dequantize"): lower_dequantize,
}


def _const_i8(t):
    s = t.storage()
    return None if s.data is None or np.dtype(s.dtype) != np.int8 else np.asarray(s.data).reshape(t.shape)


def select_qconv2d(graph, op, tg, upgrades: list) -> None:
    """Depthwise (groups == C == M) or packed panels (any other groups)."""
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    wd = _const_i8(w)
    if wd is None or 0 in y.shape or 0 in x.shape:
        return
    c, m = x.shape[1], y.shape[1]
    g = int(op.params.get("groups", 1))
    if g == c == m and c > 1:
        op.variant = K.EP_QCONV2D_VARIANT_DEPTHWISE
        return
    op.variant = K.EP_QCONV2D_VARIANT_PACKED
    graph.replace_const(op, 1, lambda: pack_q8(wd.reshape(m, -1), g), "q8", g)
    op.scratch = _panel_scratch(int(np.prod(wd.shape[1:])), y.shape[2] * y.shape[3], tg.pack_bytes)


def select_qgemm(graph, op, tg, upgrades: list) -> None:
    a, b = op.inputs[0], op.inputs[1]
    bd = _const_i8(b)
    if bd is None or 0 in a.shape or 0 in bd.shape:
        return
    op.variant = K.EP_QGEMM_VARIANT_PACKED
    graph.replace_const(op, 1, lambda: pack_q8(np.ascontiguousarray(bd.T)), "q8")
    op.scratch = _panel_scratch(bd.shape[0], a.shape[0], tg.pack_bytes)


def flops_qconv2d(op) -> int:
    y = op.outputs[0]
    k = op.params["kernel"]
    return 2 * prod(y.shape) * (op.inputs[0].shape[1] // int(op.params.get("groups", 1))) * k[0] * k[1]


def flops_qgemm(op) -> int:
    return 2 * prod(op.outputs[0].shape) * op.inputs[0].shape[1]


def select_dqgemm(graph, op, tg, upgrades: list) -> None:
    """QGEMM PACKED's weight panels and A-row scratch (passes/int8_dynamic.py made the op)."""
    a, b = op.inputs[0], op.inputs[2]
    bd = _const_i8(b)
    if bd is None or 0 in a.shape or 0 in bd.shape:
        return
    op.variant = K.EP_DQGEMM_VARIANT_PACKED
    graph.replace_const(op, 2, lambda: pack_q8(np.ascontiguousarray(bd.T)), "q8")
    op.scratch = _panel_scratch(bd.shape[0], a.shape[0], tg.pack_bytes)


SELECT = {"qconv2d": select_qconv2d, "qgemm": select_qgemm, "dqgemm": select_dqgemm}
FLOPS = {"qconv2d": flops_qconv2d, "qgemm": flops_qgemm, "dqgemm": flops_qgemm}

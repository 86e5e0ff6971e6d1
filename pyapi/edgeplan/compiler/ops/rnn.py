"""LSTM / GRU → lstm / gru ops (plan_format.h, ep_rnn_params): forward, reverse, bidirectional,
initial states, sequence_lens, layout 0 and 1, default activations only. W, R and B are passed in
ONNX's own layout (the kernel reads them as is); an absent B becomes zeros, unused outputs get a
buffer of their own."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from .sequence import out_or_tmp

DIRECTIONS = {"forward": K.EP_RNN_FORWARD, "reverse": K.EP_RNN_REVERSE,
              "bidirectional": K.EP_RNN_BIDIRECTIONAL}
DEFAULT_ACTS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"]}


def lower_rnn(ctx, n):
    lstm = n.op_type == "LSTM"
    G = 4 if lstm else 3
    direction = n.attrs.get("direction", "forward")
    if direction not in DIRECTIONS:
        raise NodeError(f"direction '{direction}' is unknown")
    D = 2 if direction == "bidirectional" else 1
    acts = n.attrs.get("activations")
    if acts is not None:
        want = DEFAULT_ACTS[n.op_type] * D
        if [a.lower() for a in acts] != want:
            raise NodeError(f"activations {list(acts)} are unsupported: only the defaults "
                            f"({', '.join(DEFAULT_ACTS[n.op_type])} per direction)")
    if lstm and int(n.attrs.get("input_forget", 0)):
        raise NodeError("input_forget=1 (coupled input and forget gates) is unsupported")
    layout = int(n.attrs.get("layout", 0))
    if layout not in (0, 1):
        raise NodeError(f"layout {layout} is unknown")
    clip = float(n.attrs.get("clip", 0.0) or 0.0)
    if clip < 0:
        raise NodeError(f"clip {clip} must be >= 0")
    X, W, R = ctx.input(n, 0), ctx.input(n, 1, "W"), ctx.input(n, 2, "R")
    ctx.need_f32(X, W, R)
    if len(X.shape) != 3 or len(W.shape) != 3 or len(R.shape) != 3:
        raise NodeError(f"X {X.shape}, W {W.shape} and R {R.shape} must be 3-D")
    T, B = (X.shape[1], X.shape[0]) if layout else (X.shape[0], X.shape[1])
    I = X.shape[2]
    H = int(n.attrs.get("hidden_size", R.shape[-1]))
    if H < 1 or H > (1 << 20):
        raise NodeError(f"hidden_size {H} is unsupported")
    if tuple(W.shape) != (D, G * H, I) or tuple(R.shape) != (D, G * H, H):
        raise NodeError(f"W {W.shape} / R {R.shape} do not match [{D}, {G * H}, {I}] / [{D}, {G * H}, {H}]")
    Bt = ctx.input(n, 3, optional=True)
    if Bt is None:
        Bt = ctx.const((n.name or n.op_type) + "/B", np.zeros((D, 2 * G * H), np.float32))
    ctx.need_f32(Bt)
    if tuple(Bt.shape) != (D, 2 * G * H):
        raise NodeError(f"B {Bt.shape} does not match [{D}, {2 * G * H}]")
    SL = ctx.input(n, 4, optional=True)
    if SL is not None:
        if SL.dtype not in (np.dtype(np.int32), np.dtype(np.int64)) or tuple(SL.shape) != (B,):
            raise NodeError(f"sequence_lens must be int32/int64 [{B}], got {SL.dtype.name} {SL.shape}")
        if SL.data is not None and ((SL.data < 0).any() or (SL.data > T).any()):
            raise NodeError(f"sequence_lens {SL.data.tolist()} outside [0, {T}]")
    state = (B, D, H) if layout else (D, B, H)
    ins = [X, W, R, Bt, SL]
    names = ["initial_h"] + (["initial_c", "P"] if lstm else [])
    for k, what in enumerate(names):
        t = ctx.input(n, 5 + k, optional=True)
        if t is not None:
            ctx.need_f32(t)
            want = (D, 3 * H) if what == "P" else state
            if tuple(t.shape) != want:
                raise NodeError(f"{what} {t.shape} does not match {list(want)}")
        ins.append(t)
    while ins and ins[-1] is None and len(ins) > 4:
        ins.pop()
    yshape = (B, T, D, H) if layout else (T, D, B, H)
    outs = [out_or_tmp(ctx, n, 0, yshape, np.float32), out_or_tmp(ctx, n, 1, state, np.float32)]
    if lstm:
        outs.append(out_or_tmp(ctx, n, 2, state, np.float32))
    op = ctx.emit("lstm" if lstm else "gru", ins, outs, {
        "hidden_size": H, "direction": DIRECTIONS[direction], "layout": layout,
        "linear_before_reset": 0 if lstm else int(bool(n.attrs.get("linear_before_reset", 0))), "clip": clip})
    op.scratch = (2 + G) * H * 4


LOWER = {("", "LSTM"): lower_rnn, ("", "GRU"): lower_rnn}


# ---- kernel variants (passes/select.py runs these) ----

RNN_CHUNK = 32   # LSTM / GRU: timesteps per hoisted input projection (the gain flattens from ~8)


def rnn_scratch(g: int, h: int, t: int, pack_bytes: int) -> int:
    """LSTM / GRU variant 0: the minimum (h, c and the gates, (2 + G) * H floats) plus room for the input
    projections of a chunk of timesteps, which the ISA kernels then compute for the whole chunk ahead of
    the steps (kernels/rnn_tmpl.h; the reference ignores the extra). At most RNN_CHUNK steps and about
    pack_bytes; nothing extra below two steps."""
    row = 4 * g * h
    steps = min(t, RNN_CHUNK, pack_bytes // row) if pack_bytes else 0
    return (2 + g) * h * 4 + (row * steps if steps >= 2 else 0)


def select_rnn(graph, op, tg, upgrades: list) -> None:
    """Variant 0 on every target; packed targets give it scratch for the hoisted input projections."""
    x = op.inputs[0]
    p = op.params
    t = int(x.shape[1] if p.get("layout", 0) else x.shape[0])
    op.scratch = rnn_scratch(4 if op.kind == "lstm" else 3, int(p["hidden_size"]), t, tg.pack_bytes)


# ---- cost (compiler/cost.py) ----

def flops_rnn(op) -> int:
    """2 flops per multiply-add of the gate matmuls, over every step and direction."""
    x = op.inputs[0]
    h = int(op.params["hidden_size"])
    dirs = 2 if int(op.params.get("direction", 0)) == K.EP_RNN_BIDIRECTIONAL else 1
    gates = 4 if op.kind == "lstm" else 3
    return 2 * int(x.shape[0]) * int(x.shape[1]) * dirs * gates * h * (int(x.shape[-1]) + h)


SELECT = {"lstm": select_rnn, "gru": select_rnn}
FLOPS = {"lstm": flops_rnn, "gru": flops_rnn}

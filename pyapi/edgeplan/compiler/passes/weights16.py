"""16-bit weight storage (``quantize="fp16"`` / ``"bf16"``; plan_format.h "16-bit weights"): the packed
weights of CONV2D PACKED, POINTWISE, BLOCKED_PW and BLOCKED_CONV (those whose input unit, KH*KW*8 rows for a C8
input, KH*KW*C for an NHWC one or KH*KW for a plain one, is at most EP_BLOCKED_W16_ROWS), GEMM PACKED and the fused inverted-residual
block's 1x1 stages (INVRES) and GEMM ROWS's transposed B are stored as float16 or bfloat16, half the bytes, and
the kernels convert them exactly to float32 tile by tile (AVX2 with F16C, NEON with FCVTL), so activations and
arithmetic stay float32. A weight that a GATHER also reads as its table (a decoder's token embedding, which
its logits GEMM ROWS reads transposed) is stored once, in 16 bits: the GATHER picks 16-bit rows and a CAST
after it converts them exactly to float32.
Runs after kernel selection, block fusion and the layout pass (pipeline.compile_graph).

"fp16-exact" converts only the weights float16 holds exactly, so the plan computes what the float32 plan
computes, bit for bit: a model trained or shipped in float16 and widened to float32 on export (Whisper's
CTranslate2 weights) halves its weight bytes and loses nothing; its other weights (a front end's float32
filter bank) stay float32, and the report counts them ("inexact_f32_bytes").

What stays float32: the depthwise filters and biases (few bytes, read once per output), other ops' weights
(RNN cells, ConvTranspose), and any weight with a magnitude float16 cannot hold (|w| > 65504
becomes infinity: that tensor is kept in float32 and the compile report warns). Kernel selection gives
fp16 / bf16 plans no Winograd variant: its float32 filters are four times the filter ("fp16-exact" keeps it:
those layers stay float32, as fast as before)."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..graph import DTYPES, Graph, Op, Tensor

FORMATS = ("fp16", "bf16", "fp16-exact")
F16_MAX = 65504.0


def _dtype(fmt: str) -> np.dtype:
    if fmt in ("fp16", "fp16-exact"):
        return np.dtype(np.float16)
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


def _slots(op) -> tuple:
    """The inputs of op that may hold 16-bit packed weights."""
    if (op.kind == "conv2d" and op.variant in (K.EP_CONV2D_VARIANT_PACKED, K.EP_CONV2D_VARIANT_POINTWISE,
                                               K.EP_CONV2D_VARIANT_BLOCKED_PW)) or (
            op.kind == "gemm" and op.variant in (K.EP_GEMM_VARIANT_PACKED, K.EP_GEMM_VARIANT_ROWS)):
        return (1,)
    if op.kind == "conv2d" and op.variant == K.EP_CONV2D_VARIANT_BLOCKED_CONV:
        kh, kw = op.params["kernel"]
        x = op.inputs[0]
        lanes = {K.EP_LAYOUT_C8: K.EP_LAYOUT_BLOCK, K.EP_LAYOUT_NHWC: int(x.shape[1])}.get(x.layout, 1)
        return (1,) if kh * kw * lanes <= K.EP_BLOCKED_W16_ROWS else ()   # the kernels convert whole units
    if op.kind == "invres":
        return (1, 5)
    return ()


def _gather16(graph: Graph, g, table16: Tensor) -> None:
    """GATHER g reads rows of table16 instead of its float32 table: 16-bit rows, then a CAST to g's output."""
    y = g.outputs[0]
    rows = Tensor(f"{y.name}:{table16.dtype.name}", table16.dtype, y.shape, dim_sym=y.dim_sym)
    graph.tensors.append(rows)
    g.inputs[0], g.outputs[0] = table16, rows
    graph.ops.insert(graph.ops.index(g) + 1,
                     Op("cast", [rows], [y], {"to": DTYPES[np.dtype(np.float32)]}, name=g.name))


def store_weights16(graph: Graph, fmt: str) -> dict:
    """Converts the eligible packed weights to fmt in place; returns the report's "weights16" entry."""
    if fmt not in FORMATS:
        raise ValueError(f"16-bit weight format {fmt!r}: one of {', '.join(FORMATS)}")
    dt = _dtype(fmt)
    users: dict = {}
    for op in graph.ops:
        for t in op.inputs:
            if t is not None:
                users.setdefault(id(t), []).append(op)
    done: dict = {}
    converted = inexact = 0
    overflow = []

    def table(u, w) -> bool:     # u is a GATHER of rows of w (w its table only)
        return u.kind == "gather" and u.inputs[0] is w and u.inputs[1] is not w and u.outputs[0].layout == 0

    def only_slots(w) -> bool:   # every use of w, in every op that reads it, is a 16-bit weight slot or a table
        return all(table(u, w) or sum(x is w for x in u.inputs) == sum(u.inputs[i] is w for i in _slots(u)
                                                                       if i < len(u.inputs))
                   for u in users[id(w)]) and not any(t.view_of is w for t in graph.tensors)

    for op in graph.ops:
        for i in _slots(op):
            w = op.inputs[i] if i < len(op.inputs) else None
            if w is None:
                continue
            if id(w) in done:
                if done[id(w)] is not None:
                    op.inputs[i] = done[id(w)]
                continue
            ok = (w.data is not None and w.view_of is None and np.dtype(w.dtype) == np.float32
                  and not (w.is_input or w.is_output) and only_slots(w))
            if ok and fmt == "fp16" and np.abs(w.data).max(initial=0.0) > F16_MAX:
                overflow.append(op.name)
                ok = False
            if ok and fmt == "fp16-exact":
                with np.errstate(over="ignore"):
                    ok = bool(np.array_equal(w.data.astype(dt).astype(np.float32), w.data))
                if not ok:
                    inexact += w.nbytes
            if not ok:
                done[id(w)] = None
                continue
            new = Tensor(f"{w.name}:{fmt}", dt, w.shape, data=np.ascontiguousarray(w.data.astype(dt)))
            graph.tensors[graph.tensors.index(w)] = new
            done[id(w)] = new
            op.inputs[i] = new
            converted += w.nbytes
            for u in users[id(w)]:
                if table(u, w):
                    _gather16(graph, u, new)
    if overflow:
        graph.meta.setdefault("warnings", []).append(
            f"--quantize {fmt}: weights past float16's range (|w| > 65504) stay float32 in "
            f"{len(overflow)} op(s): {', '.join(overflow[:5])}")
    out = {"format": fmt, "converted_f32_bytes": converted, "stored_bytes": converted // 2}
    if fmt == "fp16-exact":
        out["inexact_f32_bytes"] = inexact
    return out

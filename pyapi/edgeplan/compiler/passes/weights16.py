"""16-bit weight storage (``quantize="fp16"`` / ``"bf16"``; plan_format.h "16-bit weights"): the packed
weights of CONV2D PACKED, POINTWISE, BLOCKED_PW and BLOCKED_CONV (those whose input unit, KH*KW*8 rows for a C8
input, KH*KW*C for an NHWC one or KH*KW for a plain one, is at most EP_BLOCKED_W16_ROWS), GEMM PACKED and the fused inverted-residual
block's 1x1 stages (INVRES) are stored as float16 or bfloat16, half the bytes, and the kernels convert them
exactly to float32 tile by tile (AVX2 with F16C, NEON with FCVTL), so activations and arithmetic stay float32.
Runs after kernel selection, block fusion and the layout pass (pipeline.compile_graph).

What stays float32: the depthwise filters and biases (few bytes, read once per output), other ops' weights
(RNN cells, ConvTranspose, GEMM ROWS), and any weight with a magnitude float16 cannot hold (|w| > 65504
becomes infinity: that tensor is kept in float32 and the compile report warns). Kernel selection gives
16-bit plans no Winograd variant: its float32 filters are four times the filter."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..graph import Graph, Tensor

FORMATS = ("fp16", "bf16")
F16_MAX = 65504.0


def _dtype(fmt: str) -> np.dtype:
    if fmt == "fp16":
        return np.dtype(np.float16)
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


def _slots(op) -> tuple:
    """The inputs of op that may hold 16-bit packed weights."""
    if (op.kind == "conv2d" and op.variant in (K.EP_CONV2D_VARIANT_PACKED, K.EP_CONV2D_VARIANT_POINTWISE,
                                               K.EP_CONV2D_VARIANT_BLOCKED_PW)) or (
            op.kind == "gemm" and op.variant == K.EP_GEMM_VARIANT_PACKED):
        return (1,)
    if op.kind == "conv2d" and op.variant == K.EP_CONV2D_VARIANT_BLOCKED_CONV:
        kh, kw = op.params["kernel"]
        x = op.inputs[0]
        lanes = {K.EP_LAYOUT_C8: K.EP_LAYOUT_BLOCK, K.EP_LAYOUT_NHWC: int(x.shape[1])}.get(x.layout, 1)
        return (1,) if kh * kw * lanes <= K.EP_BLOCKED_W16_ROWS else ()   # the kernels convert whole units
    if op.kind == "invres":
        return (1, 5)
    return ()


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
    converted = 0
    overflow = []

    def only_slots(w) -> bool:   # every use of w, in every op that reads it, is a 16-bit weight slot
        return all(sum(x is w for x in u.inputs) == sum(u.inputs[i] is w for i in _slots(u) if i < len(u.inputs))
                   for u in users[id(w)])

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
            if not ok:
                done[id(w)] = None
                continue
            new = Tensor(f"{w.name}:{fmt}", dt, w.shape, data=np.ascontiguousarray(w.data.astype(dt)))
            graph.tensors[graph.tensors.index(w)] = new
            done[id(w)] = new
            op.inputs[i] = new
            converted += w.nbytes
    if overflow:
        graph.meta.setdefault("warnings", []).append(
            f"--quantize {fmt}: weights past float16's range (|w| > 65504) stay float32 in "
            f"{len(overflow)} op(s): {', '.join(overflow[:5])}")
    return {"format": fmt, "converted_f32_bytes": converted, "stored_bytes": converted // 2}

"""EpGemm (constant B, from passes/fuse.py) → gemm with A viewed as 2-D; Gemm with a runtime B and MatMul
→ matmul (+ transpose / binary ops); 1-D operands through views."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..graph import const_f32
from ..lowering import NodeError
from ._util import epilogue_params, prod

MR = K.EP_PACK_MR   # rows of a packed-weight panel (plan_format.h)
NR = K.EP_PACK_NR   # columns of a packed strip


def lower_epgemm(ctx, n):
    A = ctx.input(n, 0)
    Bc = ctx.const_input(n, 1, "B")
    ctx.need_f32(A)
    Kd, N = Bc.shape
    if not A.shape or A.shape[-1] != Kd:
        raise NodeError(f"A {A.shape} does not match B [K={Kd}, N={N}]")
    lead = A.shape[:-1]
    Mrows = prod(lead)
    a2 = ctx.view(A, (Mrows, Kd))
    C = ctx.input(n, 2, optional=True)
    if C is not None and C.shape not in ((N,), (Mrows, N)):
        raise NodeError(f"bias C {C.shape} is neither [N] nor [M, N]")
    R = ctx.input(n, 3, optional=True)
    ctx.need_f32(C, R)
    yshape = tuple(lead) + (N,)
    if len(yshape) != 2:
        y2 = ctx.tmp(n.outputs[0] + "/2d", (Mrows, N))
        ctx.view_output(n, 0, y2, yshape)
    else:
        y2 = ctx.output(n, 0, yshape, np.float32)
    r2 = ctx.view(R, (Mrows, N)) if R is not None else None
    ins = [a2, ctx.tensor(n.inputs[1]), C] + ([r2] if r2 is not None else [])
    ctx.emit("gemm", ins, [y2], epilogue_params(n))


def matmul(ctx, A, B, out_name, bind=None):
    """numpy matmul of A and B into a new tensor named out_name (1-D operands via views). If bind is
    (node, index), the result becomes that IR output."""
    ctx.need_f32(A, B)
    a, b = A, B
    if len(A.shape) == 0 or len(B.shape) == 0:
        raise NodeError("MatMul of a scalar")
    if len(A.shape) == 1:
        a = ctx.view(A, (1, A.shape[0]))
    if len(B.shape) == 1:
        b = ctx.view(B, (B.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise NodeError(f"MatMul shapes {A.shape} x {B.shape} do not match")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise NodeError(f"MatMul batch dims of {A.shape} and {B.shape} do not broadcast") from None
    full = tuple(batch) + (a.shape[-2], b.shape[-1])
    final = list(full)
    # numpy drops the prepended/appended 1 of a 1-D operand: A's row dim, B's column dim
    if len(A.shape) == 1:
        del final[-2]
    if len(B.shape) == 1:
        del final[-1]
    final = tuple(final)
    if final != full:
        y = ctx.tmp(out_name + "/mm", full)
        ctx.emit("matmul", [a, b], [y], {})
        if bind is not None:
            return ctx.view_output(bind[0], bind[1], y, final)
        return ctx.view(y, final)
    if bind is not None:
        y = ctx.output(bind[0], bind[1], full, np.float32)
    else:
        y = ctx.tmp(out_name, full)
    ctx.emit("matmul", [a, b], [y], {})
    return y


def lower_matmul(ctx, n):
    matmul(ctx, ctx.input(n, 0), ctx.input(n, 1), n.outputs[0], bind=(n, 0))


def _transpose2d(ctx, t):
    if len(t.shape) != 2:
        raise NodeError(f"Gemm operand '{t.name}' must be 2-D, got {t.shape}")
    y = ctx.tmp(t.name + "/T", t.shape[::-1], t.dtype)
    ctx.emit("transpose", [t], [y], {"perm": [1, 0, 2, 3, 4, 5, 6, 7]})
    return y


def _scale(ctx, t, k, base):
    c = ctx.const(base + "/scale", np.array(k, np.float32))
    y = ctx.tmp(base + "/scaled", t.shape)
    ctx.emit("binary", [t, c], [y], {"kind": K.EP_BIN_MUL, "act": K.EP_ACT_NONE, "act_alpha": 0.0,
                                      "act_beta": 0.0}, inplace=0 if not t.is_const else None)
    return y


def lower_gemm(ctx, n):
    """Gemm that was not turned into EpGemm (runtime B, or an unusual C): matmul + binary ops."""
    A, B = ctx.input(n, 0), ctx.input(n, 1)
    ctx.need_f32(A, B)
    if len(A.shape) != 2 or len(B.shape) != 2:
        raise NodeError(f"Gemm needs 2-D A and B, got {A.shape} and {B.shape}")
    alpha, beta = float(n.attrs.get("alpha", 1.0)), float(n.attrs.get("beta", 1.0))
    if int(n.attrs.get("transA", 0)):
        A = _transpose2d(ctx, A)
    if int(n.attrs.get("transB", 0)):
        B = _transpose2d(ctx, B)
    C = ctx.input(n, 2, optional=True)
    name = n.outputs[0]
    last = C is None and alpha == 1.0
    y = matmul(ctx, A, B, name + "/ab", bind=(n, 0) if last else None)
    if last:
        return
    if alpha != 1.0:
        y = _scale(ctx, y, alpha, name + "/alpha")
    if C is None:
        ctx.view_output(n, 0, y, y.shape)
        return
    ctx.need_f32(C)
    if beta != 1.0:
        C = ctx.const(name + "/C", C.data * np.float32(beta)) if C.data is not None else _scale(ctx, C, beta, name + "/beta")
    try:
        shape = np.broadcast_shapes(y.shape, C.shape)
    except ValueError:
        raise NodeError(f"C {C.shape} does not broadcast to {y.shape}") from None
    if tuple(shape) != tuple(y.shape):
        raise NodeError(f"C {C.shape} does not broadcast to {y.shape}")
    out = ctx.output(n, 0, y.shape, np.float32)
    ctx.emit("binary", [y, C], [out], {"kind": K.EP_BIN_ADD, "act": K.EP_ACT_NONE, "act_alpha": 0.0,
                                        "act_beta": 0.0}, inplace=0)


# rows of the scores an attention task holds in scratch (a band of min(rows, M) x N floats): a few 6-row
# GEMM panels. One value for every shape, so that a run-time-shaped plan has one op list for every length
# (Whisper's 1500 keys: 141 KiB a band).
ATTENTION_ROWS = 24


def attention_band(M: int) -> int:
    return max(1, min(ATTENTION_ROWS, M))


def lower_epattention(ctx, n):
    """EpAttention (passes/fuse.py) -> attention, its scratch one band of scores per thread."""
    Q, KT, V = (ctx.input(n, i) for i in range(3))
    mask = ctx.input(n, 3, optional=True)
    ctx.need_f32(Q, KT, V, mask)
    if len(Q.shape) < 2 or len(KT.shape) < 2 or len(V.shape) < 2 or Q.shape[-1] != KT.shape[-2] \
            or V.shape[-2] != KT.shape[-1]:
        raise NodeError(f"attention operands Q {Q.shape}, KT {KT.shape}, V {V.shape} do not match")
    try:
        batch = tuple(np.broadcast_shapes(Q.shape[:-2], KT.shape[:-2]))
    except ValueError:
        raise NodeError(f"attention batch dims of {Q.shape} and {KT.shape} do not broadcast") from None
    M, N = Q.shape[-2], KT.shape[-1]
    s = batch + (M, N)
    if len(V.shape) > len(s) or any(d not in (1, s[i + len(s) - len(V.shape)]) for i, d in enumerate(V.shape[:-2])):
        raise NodeError(f"V {V.shape} does not broadcast into the scores {s}")
    if mask is not None and (len(mask.shape) > len(s) or
                             any(d not in (1, s[i + len(s) - len(mask.shape)]) for i, d in enumerate(mask.shape))):
        raise NodeError(f"mask {mask.shape} does not broadcast into the scores {s}")
    y = ctx.output(n, 0, batch + (M, V.shape[-1]), np.float32)
    op = ctx.emit("attention", [Q, KT, V] + ([mask] if mask is not None else []), [y],
                  {"scale": float(n.attrs.get("scale", 1.0)), "divide": int(n.attrs.get("divide", 0)),
                   "rows": ATTENTION_ROWS, "reserved": 0})
    op.scratch = attention_band(M) * N * 4


def select_attention(graph, op, tg, upgrades: list) -> None:
    """One band of scores per thread on targets with threads."""
    M = op.outputs[0].shape[-2]
    band = attention_band(M)
    bands = prod(op.outputs[0].shape[:-2]) * -(-M // band)
    op.scratch = band * op.inputs[1].shape[-1] * 4 * max(1, min(bands, tg.threads))


def flops_attention(op) -> int:   # two products per score: Q KT and P V
    y = op.outputs[0]
    return 2 * prod(y.shape[:-1]) * op.inputs[1].shape[-1] * (op.inputs[0].shape[-1] + y.shape[-1])


LOWER = {
    ("edgeplan", "EpAttention"): lower_epattention,
    ("edgeplan", "EpGemm"): lower_epgemm,
    ("", "MatMul"): lower_matmul,
    ("", "Gemm"): lower_gemm,
}


# ---- kernel variants (passes/select.py runs these; layout in plan_format.h EP_GEMM_VARIANT_PACKED) ----

def pack_gemm_b(b: np.ndarray) -> np.ndarray:
    """B[K, N] -> [ceil(N/NR), K, NR], zero columns past N."""
    k, n = b.shape
    strips = -(-n // NR)
    p = np.zeros((k, strips * NR), np.float32)
    p[:, :n] = b
    return np.ascontiguousarray(p.reshape(k, strips, NR).transpose(1, 0, 2))


# ROWS takes a B whose transpose the plan already holds (a tied embedding: the logits projection of a
# decoder and its token lookup table) when A has at most this many rows: then B streams once either way,
# and the plan keeps one copy of the table instead of two.
ROWS_MAX_M = 16
ROWS_MIN_BYTES = 1 << 20


def _transposed_const(graph, b: np.ndarray, own):
    """A float32 constant of graph, other than own, whose data is b transposed; None when there is none."""
    k, n = b.shape
    for t in graph.tensors:
        if t is own or t.data is None or t.view_of is not None or tuple(t.shape) != (n, k):
            continue
        if np.dtype(t.dtype) == np.float32 and np.array_equal(np.asarray(t.data).reshape(n, k), b.T):
            return t
    return None


def select_gemm(graph, op, tg, upgrades: list) -> None:
    """Packed B (the GEMM micro-kernel's strips) where B is a constant matrix; ROWS on a transposed B the
    plan holds anyway (see ROWS_MAX_M)."""
    b = const_f32(op.inputs[1])
    if b is None or b.ndim != 2 or 0 in b.shape or op.outputs[0].shape[0] == 0:
        return
    if op.inputs[0].shape[0] <= ROWS_MAX_M and b.nbytes >= ROWS_MIN_BYTES:
        t = _transposed_const(graph, b, op.inputs[1])
        if t is not None:
            old = op.inputs[1]
            op.variant = K.EP_GEMM_VARIANT_ROWS
            op.inputs[1] = t
            if not any(x is old for o in graph.ops for x in o.inputs) and old in graph.tensors:
                graph.tensors.remove(old)
            graph.fused.append(f"Gemm '{op.name}' reads the transposed weights of another op ({t.name}): one copy")
            return
    op.variant = K.EP_GEMM_VARIANT_PACKED
    graph.replace_const(op, 1, lambda: pack_gemm_b(b), "packed")


# ---- cost (compiler/cost.py): 2 flops per multiply-add ----

def flops_matmul(op) -> int:   # gemm and matmul: Y[..., M, N] over K = A.shape[-1]
    return 2 * prod(op.outputs[0].shape) * int(op.inputs[0].shape[-1])


SELECT = {"gemm": select_gemm, "attention": select_attention}
FLOPS = {"gemm": flops_matmul, "matmul": flops_matmul, "attention": flops_attention}

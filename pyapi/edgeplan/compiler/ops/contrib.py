"""Contrib ops (domain com.microsoft) that onnxruntime's graph optimiser writes into shipped models,
expressed with the runtime ops they fuse: Gelu, FastGelu, BiasGelu, QuickGelu -> unary (and binary);
SkipLayerNormalization -> binary + layernorm; FusedMatMul -> transpose + matmul (+ scale)."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from .elementwise import binary
from .linear import matmul
from .sequence import expand_to, out_or_tmp

MS = "com.microsoft"


def _unary(ctx, X, kind, base, bind=None, alpha=0.0):
    y = ctx.output(bind[0], bind[1], X.shape, np.float32) if bind else ctx.tmp(base, X.shape)
    ctx.emit("unary", [X], [y], {"kind": kind, "alpha": float(alpha), "beta": 0.0}, inplace=None if X.is_const else 0)
    return y


def _with_bias(ctx, n, X):
    B = ctx.input(n, 1, optional=True)
    if B is None:
        return X
    ctx.need_f32(B)
    return binary(ctx, K.EP_BIN_ADD, X, B, out_name=n.outputs[0] + "/biased")


def lower_gelu(ctx, n):
    """Gelu (erf form), BiasGelu (x + bias, then erf form), FastGelu (x [+ bias], tanh form)."""
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if n.op_type in ("BiasGelu", "FastGelu"):
        X = _with_bias(ctx, n, X)
    _unary(ctx, X, K.EP_ACT_GELU_TANH if n.op_type == "FastGelu" else K.EP_ACT_GELU, "", bind=(n, 0))


def lower_quick_gelu(ctx, n):
    """QuickGelu: x * sigmoid(alpha * x) (alpha 1.702 by default); alpha 1 is SiLU."""
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    alpha = float(n.attrs.get("alpha", 1.702))
    if alpha == 1.0:
        _unary(ctx, X, K.EP_ACT_SILU, "", bind=(n, 0))
        return
    b = n.outputs[0]
    ax = binary(ctx, K.EP_BIN_MUL, X, ctx.const(b + "/alpha", np.array(alpha, np.float32)), out_name=b + "/ax")
    binary(ctx, K.EP_BIN_MUL, X, _unary(ctx, ax, K.EP_ACT_SIGMOID, b + "/gate"), bind=(n, 0))


def lower_skip_layernorm(ctx, n):
    """SkipLayerNormalization(input, skip, gamma, beta?, bias?): layernorm over the last dim of
    input + skip (+ bias); outputs output, mean and inv_std_var (unused by inference, may be absent),
    and input_skip_bias_sum."""
    X, S = ctx.input(n, 0), ctx.input(n, 1)
    G = ctx.input(n, 2, "gamma")
    Bt, Bias = ctx.input(n, 3, optional=True), ctx.input(n, 4, optional=True)
    ctx.need_f32(X, S, G, Bt, Bias)
    b = n.outputs[0]
    want_sum = len(n.outputs) > 3 and n.outputs[3]
    total = binary(ctx, K.EP_BIN_ADD, X, S, out_name=b + "/skip",
                   bind=(n, 3) if want_sum and Bias is None else None)
    if Bias is not None:
        total = binary(ctx, K.EP_BIN_ADD, total, Bias, out_name=b + "/skip_bias", bind=(n, 3) if want_sum else None)
    d = X.shape[-1]
    ins = [total, expand_to(ctx, G, (d,), b + "/gamma")]
    if Bt is not None:
        ins.append(expand_to(ctx, Bt, (d,), b + "/beta"))
    r = len(X.shape)
    stat = tuple(X.shape[:-1]) + (1,)
    n_out = 3 if len(n.outputs) > 2 and n.outputs[2] else (2 if len(n.outputs) > 1 and n.outputs[1] else 1)
    outs = [ctx.output(n, 0, X.shape, np.float32)] + [out_or_tmp(ctx, n, i, stat, np.float32) for i in range(1, n_out)]
    ctx.emit("layernorm", ins, outs, {"axis": r - 1, "epsilon": float(n.attrs.get("epsilon", 1e-12))})


def _last_two_swapped(ctx, T, base):
    r = len(T.shape)
    perm = list(range(r - 2)) + [r - 1, r - 2]
    y = ctx.tmp(base, [T.shape[p] for p in perm])
    ctx.emit("transpose", [T], [y], {"perm": perm + list(range(r, 8))})
    return y


def lower_fused_matmul(ctx, n):
    """FusedMatMul: alpha * op(A) @ op(B), op a transpose of the last two dims (transA / transB)."""
    if int(n.attrs.get("transBatchA", 0)) or int(n.attrs.get("transBatchB", 0)):
        raise NodeError("transBatchA / transBatchB are unsupported")
    A, B = ctx.input(n, 0), ctx.input(n, 1)
    ctx.need_f32(A, B)
    b = n.outputs[0]
    for name, flag in (("A", "transA"), ("B", "transB")):
        if int(n.attrs.get(flag, 0)):
            t = A if name == "A" else B
            if len(t.shape) < 2:
                raise NodeError(f"{flag} on a {len(t.shape)}-D operand")
            t = _last_two_swapped(ctx, t, f"{b}/{name}T")
            A, B = (t, B) if name == "A" else (A, t)
    alpha = float(n.attrs.get("alpha", 1.0))
    if alpha == 1.0:
        matmul(ctx, A, B, b, bind=(n, 0))
        return
    y = matmul(ctx, A, B, b + "/mm")
    binary(ctx, K.EP_BIN_MUL, y, ctx.const(b + "/alpha", np.array(alpha, np.float32)), bind=(n, 0))


LOWER = {(MS, "Gelu"): lower_gelu, (MS, "BiasGelu"): lower_gelu, (MS, "FastGelu"): lower_gelu,
         (MS, "QuickGelu"): lower_quick_gelu, (MS, "SkipLayerNormalization"): lower_skip_layernorm,
         (MS, "FusedMatMul"): lower_fused_matmul}

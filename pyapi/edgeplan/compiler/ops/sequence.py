"""Sequence-model ops (static shapes): LayerNormalization → layernorm; Where → where;
Equal/Less/Greater/LessOrEqual/GreaterOrEqual/And/Or/Xor/Not → compare (bool out); ArgMax/ArgMin →
argmax; TopK → topk; CumSum, CumProd → cumsum; Trilu → trilu; ScatterND → scatternd; GatherND → gathernd."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from .. import limits
from ..lowering import NodeError
from ._util import norm_axis, prod

MAX_RANK = 8
# dtypes the compare / cast / where kernels handle (plan_format.h)
BASIC = {np.dtype(t) for t in (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_,
                               np.uint16, np.uint32, np.uint64)}
ARITH = {np.dtype(t) for t in (np.float32, np.int32, np.int64)}
ORDERED = ARITH | {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64)}


def need_dtype(t, allowed, what):
    if np.dtype(t.dtype) not in allowed:
        names = ", ".join(sorted(d.name for d in allowed))
        raise NodeError(f"{what} '{t.name}' has dtype {np.dtype(t.dtype).name}; supported: {names}")


def rank_ok(t):
    if len(t.shape) > MAX_RANK:
        raise NodeError(f"rank {len(t.shape)} > {MAX_RANK}")


def out_or_tmp(ctx, n, i, shape, dtype):
    """IR output i of n, or a scratch tensor when the node leaves it unnamed (kernels write every output)."""
    if i < len(n.outputs) and n.outputs[i]:
        return ctx.output(n, i, shape, dtype)
    return ctx.tmp(f"{n.outputs[0] or n.name}/unused{i}", shape, dtype)


def const_int(ctx, n, i, what, default=None):
    if not n.input(i):
        if default is None:
            raise NodeError(f"{what} (input {i}) is missing")
        return default
    a = ctx.const_input(n, i, what).reshape(-1)
    if a.size != 1:
        raise NodeError(f"{what} must hold one value, got {a.size}")
    return int(a[0])


def expand_to(ctx, t, shape, base):
    """t broadcast to shape: a constant is expanded at compile time, a runtime tensor by an expand op."""
    shape = tuple(int(d) for d in shape)
    if tuple(t.shape) == shape:
        return t
    try:
        if tuple(np.broadcast_shapes(t.shape, shape)) != shape:
            raise ValueError
    except ValueError:
        raise NodeError(f"'{t.name}' {t.shape} does not broadcast to {shape}") from None
    if t.data is not None:
        size = limits.nbytes(shape, t.dtype)
        if size > limits.fold_limit(t.data.nbytes):
            raise NodeError(f"broadcasting constant '{t.name}' to {list(shape)} would build "
                            f"{limits.fmt_bytes(size)}, above the limit for a constant built at compile time "
                            f"({limits.fold_limit_text(t.data.nbytes)})")
        return ctx.const(base, np.ascontiguousarray(np.broadcast_to(t.data, shape)))
    y = ctx.tmp(base, shape, t.dtype)
    ctx.emit("expand", [t], [y], {})
    return y


def lower_layernorm(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    rank_ok(X)
    r = len(X.shape)
    if r == 0:
        raise NodeError("LayerNormalization of a scalar")
    axis = norm_axis(n.attrs.get("axis", -1), r)
    if int(n.attrs.get("stash_type", 1)) != 1:
        raise NodeError(f"stash_type {n.attrs.get('stash_type')} is unsupported (only 1: float32)")
    eps = float(n.attrs.get("epsilon", 1e-5))
    if not 0.0 <= eps <= 1e30:   # LAYERNORM's range (plan_format.h); NaN fails it too
        raise NodeError(f"epsilon {eps} is not in 0..1e30")
    norm_shape = X.shape[axis:]
    S = ctx.input(n, 1, "Scale")
    Bt = ctx.input(n, 2, optional=True)
    ctx.need_f32(S, Bt)
    ins = [X, expand_to(ctx, S, norm_shape, n.outputs[0] + "/scale")]
    if Bt is not None:
        ins.append(expand_to(ctx, Bt, norm_shape, n.outputs[0] + "/bias"))
    stat = tuple(X.shape[:axis]) + (1,) * (r - axis)
    n_out = 3 if len(n.outputs) > 2 and n.outputs[2] else (2 if len(n.outputs) > 1 and n.outputs[1] else 1)
    outs = [ctx.output(n, 0, X.shape, np.float32)] + [out_or_tmp(ctx, n, i, stat, np.float32) for i in range(1, n_out)]
    ctx.emit("layernorm", ins, outs, {"axis": axis, "epsilon": eps})


def lower_where(ctx, n):
    C, A, B = ctx.input(n, 0), ctx.input(n, 1), ctx.input(n, 2)
    for t in (C, A, B):
        rank_ok(t)
    need_dtype(C, {np.dtype(np.bool_)}, "condition")
    if A.dtype != B.dtype:
        raise NodeError(f"X and Y differ in dtype ({A.dtype.name}, {B.dtype.name})")
    need_dtype(A, BASIC, "X")
    try:
        shape = np.broadcast_shapes(C.shape, A.shape, B.shape)
    except ValueError:
        raise NodeError(f"shapes {C.shape}, {A.shape}, {B.shape} do not broadcast") from None
    y = ctx.output(n, 0, shape, A.dtype)
    ctx.emit("where", [C, A, B], [y], {})


CMP = {"Equal": K.EP_CMP_EQUAL, "Less": K.EP_CMP_LESS, "Greater": K.EP_CMP_GREATER,
       "LessOrEqual": K.EP_CMP_LESS_EQUAL, "GreaterOrEqual": K.EP_CMP_GREATER_EQUAL,
       "And": K.EP_CMP_AND, "Or": K.EP_CMP_OR, "Xor": K.EP_CMP_XOR}


def lower_compare(ctx, n):
    A = ctx.input(n, 0)
    if n.op_type == "Not":
        B = ctx.const(n.outputs[0] + "/true", np.array(True))
        kind = K.EP_CMP_XOR
    else:
        B = ctx.input(n, 1)
        kind = CMP[n.op_type]
    rank_ok(A)
    rank_ok(B)
    if A.dtype != B.dtype:
        raise NodeError(f"operands differ in dtype ({A.dtype.name}, {B.dtype.name})")
    need_dtype(A, {np.dtype(np.bool_)} if kind >= K.EP_CMP_AND else BASIC, "operand")
    try:
        shape = np.broadcast_shapes(A.shape, B.shape)
    except ValueError:
        raise NodeError(f"shapes {A.shape} and {B.shape} do not broadcast") from None
    y = ctx.output(n, 0, shape, np.bool_)
    ctx.emit("compare", [A, B], [y], {"kind": kind})


def lower_argmax(ctx, n):
    X = ctx.input(n, 0)
    rank_ok(X)
    need_dtype(X, ORDERED, "input")
    r = len(X.shape)
    if r == 0:
        raise NodeError(f"{n.op_type} of a scalar")
    axis = norm_axis(n.attrs.get("axis", 0), r)
    keep = int(n.attrs.get("keepdims", 1))
    if X.shape[axis] == 0:
        raise NodeError(f"{n.op_type} over an empty axis")
    shape = [1 if i == axis else d for i, d in enumerate(X.shape)] if keep else \
        [d for i, d in enumerate(X.shape) if i != axis]
    y = ctx.output(n, 0, shape, np.int64)
    ctx.emit("argmax", [X], [y], {"axis": axis, "keepdims": int(bool(keep)),
                                  "select_last_index": int(bool(n.attrs.get("select_last_index", 0))),
                                  "min": int(n.op_type == "ArgMin")})


def lower_topk(ctx, n):
    X = ctx.input(n, 0)
    rank_ok(X)
    need_dtype(X, ORDERED, "input")
    r = len(X.shape)
    if r == 0:
        raise NodeError("TopK of a scalar")
    axis = norm_axis(n.attrs.get("axis", -1), r)
    if n.input(1) and not ctx.known(n.input(1)):
        from .datadep import lower_topk_at_run_time
        return lower_topk_at_run_time(ctx, n, X, axis, int(bool(n.attrs.get("largest", 1))),
                                      int(bool(n.attrs.get("sorted", 1))))
    k = const_int(ctx, n, 1, "K") if n.input(1) else int(n.attrs.get("k", -1))
    if not 0 <= k <= X.shape[axis]:
        raise NodeError(f"K {k} is outside [0, {X.shape[axis]}]")
    shape = list(X.shape)
    shape[axis] = k
    outs = [out_or_tmp(ctx, n, 0, shape, X.dtype), out_or_tmp(ctx, n, 1, shape, np.int64)]
    op = ctx.emit("topk", [X], outs, {"axis": axis, "k": k, "largest": int(bool(n.attrs.get("largest", 1))),
                                      "sorted": int(bool(n.attrs.get("sorted", 1)))})
    op.scratch = 8 * int(X.shape[axis])


def lower_cumsum(ctx, n):
    X = ctx.input(n, 0)
    rank_ok(X)
    need_dtype(X, ARITH | {np.dtype(np.uint32), np.dtype(np.uint64)}, "input")
    r = len(X.shape)
    if r == 0:
        raise NodeError(f"{n.op_type} of a scalar")
    axis = norm_axis(const_int(ctx, n, 1, "axis"), r)
    y = ctx.output(n, 0, X.shape, X.dtype)
    ctx.emit("cumsum", [X], [y], {"axis": axis, "exclusive": int(bool(n.attrs.get("exclusive", 0))),
                                  "reverse": int(bool(n.attrs.get("reverse", 0))),
                                  "prod": int(n.op_type == "CumProd")})


def lower_trilu(ctx, n):
    X = ctx.input(n, 0)
    rank_ok(X)
    if len(X.shape) < 2:
        raise NodeError(f"Trilu needs rank >= 2, got {len(X.shape)}")
    k = const_int(ctx, n, 1, "k", default=0)
    y = ctx.output(n, 0, X.shape, X.dtype)
    ctx.emit("trilu", [X], [y], {"upper": int(bool(n.attrs.get("upper", 1))), "k": k})


REDUCTION = {"none": K.EP_SCATTER_NONE, "add": K.EP_SCATTER_ADD, "mul": K.EP_SCATTER_MUL,
             "max": K.EP_SCATTER_MAX, "min": K.EP_SCATTER_MIN}


def _nd_indices(ctx, I, data, b):
    if I.dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise NodeError(f"indices dtype {I.dtype.name} (only int32/int64)")
    if len(I.shape) < 1:
        raise NodeError("indices must have rank >= 1")
    q = I.shape[-1]
    if not 1 <= q <= len(data.shape) - b:
        raise NodeError(f"indices' last dim {q} must be in [1, {len(data.shape) - b}]")
    if I.data is not None and I.data.size:
        dims = np.array(data.shape[b:b + q])
        v = I.data.reshape(-1, q)
        if (v < -dims).any() or (v >= dims).any():
            raise NodeError("constant indices out of range")
    return q


def lower_scatternd(ctx, n):
    D, I, U = ctx.input(n, 0), ctx.input(n, 1), ctx.input(n, 2)
    for t in (D, I, U):
        rank_ok(t)
    red = n.attrs.get("reduction", "none")
    if red not in REDUCTION:
        raise NodeError(f"reduction '{red}' is unsupported")
    need_dtype(D, ARITH if red != "none" else BASIC, "data")
    if U.dtype != D.dtype:
        raise NodeError("updates and data differ in dtype")
    q = _nd_indices(ctx, I, D, 0)
    want = tuple(I.shape[:-1]) + tuple(D.shape[q:])
    if tuple(U.shape) != want:
        raise NodeError(f"updates shape {U.shape} != {want}")
    y = ctx.output(n, 0, D.shape, D.dtype)
    ctx.emit("scatternd", [D, I, U], [y], {"reduction": REDUCTION[red]})


def lower_gathernd(ctx, n):
    D, I = ctx.input(n, 0), ctx.input(n, 1)
    rank_ok(D)
    rank_ok(I)
    need_dtype(D, BASIC, "data")
    b = int(n.attrs.get("batch_dims", 0))
    if not 0 <= b < len(I.shape) or b > len(D.shape) or tuple(D.shape[:b]) != tuple(I.shape[:b]):
        raise NodeError(f"batch_dims {b} does not match data {D.shape} and indices {I.shape}")
    q = _nd_indices(ctx, I, D, b)
    shape = tuple(I.shape[:-1]) + tuple(D.shape[b + q:])
    if len(shape) > MAX_RANK:
        raise NodeError(f"output rank {len(shape)} > {MAX_RANK}")
    y = ctx.output(n, 0, shape, D.dtype)
    ctx.emit("gathernd", [D, I], [y], {"batch_dims": b})


LOWER = {
    ("", "LayerNormalization"): lower_layernorm,
    ("", "Where"): lower_where,
    ("", "Not"): lower_compare,
    ("", "ArgMax"): lower_argmax,
    ("", "ArgMin"): lower_argmax,
    ("", "TopK"): lower_topk,
    ("", "CumSum"): lower_cumsum,
    ("", "CumProd"): lower_cumsum,
    ("", "Trilu"): lower_trilu,
    ("", "ScatterND"): lower_scatternd,
    ("", "GatherND"): lower_gathernd,
}
LOWER.update({("", t): lower_compare for t in CMP})


# ---- cost (compiler/cost.py): per input element ----

FLOPS = {"layernorm": lambda op: 8 * prod(op.inputs[0].shape), "cumsum": lambda op: prod(op.inputs[0].shape)}


# ---- constant folding (passes/fold.py) ----

FOLD = {"Equal": lambda n, a: np.equal(a[0], a[1]), "Where": lambda n, a: np.where(a[0], a[1], a[2])}


# ---- OneHot: compare and where ----

def lower_onehot(ctx, n):
    """OneHot(indices, depth, values) along axis: y = where(indices' == arange(depth), on, off), indices'
    the indices with a negative one counted from the end (+ depth); an index out of [-depth, depth) gives
    an all-off row, as ONNX defines it. A depth computed at run time: the output is built at the declared
    bound of its axis and cut to the depth (a depth past the bound fails the run)."""
    idx = ctx.input(n, 0)
    rank_ok(idx)
    if idx.dtype == np.float32:           # ONNX casts non-integer indices (towards zero)
        as_int = ctx.tmp(n.outputs[0] + "/indices", idx.shape, np.int64)
        ctx.emit("cast", [idx], [as_int], {"to": K.EP_DTYPE_I64})
        idx = as_int
    if idx.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise NodeError(f"indices have dtype {idx.dtype.name}; int32, int64 and float32 are supported")
    run_time = not ctx.known(n.input(1))
    if run_time:   # built at the declared bound, cut to the run's depth (datadep._cut)
        r0 = len(idx.shape) + 1
        ext = ctx.data_dim(n, 0, norm_axis(n.attrs.get("axis", -1), r0))
        depth = ctx.bound_of(ext[1], ext[0])
    else:
        depth = ctx.const_input(n, 1, "depth").reshape(-1)
        if depth.size != 1 or not float(depth[0]).is_integer() or int(depth[0]) < 1:
            raise NodeError(f"depth must be one positive integer, got {depth.tolist()}")
        depth = int(depth[0])
    vals = ctx.const_input(n, 2, "values").reshape(-1)
    if vals.size != 2:
        raise NodeError(f"values must be [off, on], got {vals.size} values")
    need_dtype(ctx.const(n.outputs[0] + "/dtype", vals[:1]), BASIC, "values")
    r = len(idx.shape) + 1
    axis = norm_axis(n.attrs.get("axis", -1), r)
    if r > MAX_RANK:
        raise NodeError(f"the output would have rank {r} > {MAX_RANK}")
    b = n.outputs[0]
    dt = idx.dtype
    neg = ctx.tmp(b + "/neg", idx.shape, np.bool_)
    ctx.emit("compare", [idx, ctx.const(b + "/zero", np.zeros((), dt))], [neg], {"kind": K.EP_CMP_LESS})
    from .elementwise import binary
    if run_time:
        D = ctx.input(n, 1, "depth")
        if int(np.prod(D.shape, dtype=np.int64)) != 1 or D.dtype.kind not in "iuf":
            raise NodeError(f"its run-time depth '{D.name}' is {D.dtype.name}{list(D.shape)}, not one number")
        d64 = ctx.tmp(b + "/depth_i64", (1,), np.int64)
        ctx.emit("cast", [ctx.view(D, (1,))], [d64], {"to": K.EP_DTYPE_I64})
        d_idx = d64 if dt == np.int64 else ctx.tmp(b + "/depth_idx", (1,), dt)
        if d_idx is not d64:
            ctx.emit("cast", [d64], [d_idx], {"to": K.EP_DTYPE_I32})
        wrapped = binary(ctx, K.EP_BIN_ADD, idx, ctx.view(d_idx, ()), out_name=b + "/wrapped")
    else:
        wrapped = binary(ctx, K.EP_BIN_ADD, idx, ctx.const(b + "/depth", np.array(depth, dt)), out_name=b + "/wrapped")
    fixed = ctx.tmp(b + "/idx", idx.shape, dt)
    ctx.emit("where", [neg, wrapped, idx], [fixed], {})
    col = list(idx.shape)
    col.insert(axis, 1)
    lane = [1] * r
    lane[axis] = depth
    hit = ctx.tmp(b + "/hit", [d if k != axis else depth for k, d in enumerate(col)], np.bool_)
    ctx.emit("compare", [ctx.view(fixed, col, b + "/col"), ctx.const(b + "/lanes", np.arange(depth, dtype=dt).reshape(lane))],
             [hit], {"kind": K.EP_CMP_EQUAL})
    on, off = ctx.const(b + "/on", vals[1:2].reshape(())), ctx.const(b + "/off", vals[:1].reshape(()))
    if run_time:
        from .datadep import _cut
        full = ctx.tmp(b + "/at_bound", hit.shape, vals.dtype)
        ctx.emit("where", [hit, on, off], [full], {})
        _cut(ctx, n, [(0, full)], d64, {axis: ext}, "the depth")
        return
    y = ctx.output(n, 0, hit.shape, vals.dtype)
    ctx.emit("where", [hit, on, off], [y], {})


LOWER[("", "OneHot")] = lower_onehot

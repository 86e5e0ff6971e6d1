"""Ops whose output length depends on the data (plan 1.1): Range with run-time inputs, NonZero, and
ConstantOfShape / Expand whose shape is computed from the data (a mask as long as the sum of predicted
durations). The output's variable extent is bounded by a declared maximum (Lowerer.data_dim); the
runtime kernel writes the actual length and later ops run at it.

ConstantOfShape and Expand with a run-time shape are built at their bound and cut to the run's extents
with a run-time Slice: the entries of the shape the graph fixes (constant pieces of a Concat) stay
static, the others are data-dependent lengths. A shape entry past its bound, or negative, fails the run
with EP_ERR_RUN_BOUND (a bound check, IF with fail = 1) instead of being clipped."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from ._util import prod
from .elementwise import binary

RANGE_DTYPES = {np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)}
NONZERO_DTYPES = {np.dtype(t) for t in (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_,
                                        np.uint16, np.uint32, np.uint64)}


def lower_range(ctx, n):
    ins = [ctx.input(n, i, what) for i, what in enumerate(("start", "limit", "delta"))]
    dt = ins[0].dtype
    if dt not in RANGE_DTYPES or any(t.dtype != dt for t in ins):
        raise NodeError(f"Range over {', '.join(t.dtype.name for t in ins)} is unsupported (float32, int32 or int64)")
    if any(prod(t.shape) != 1 for t in ins):
        raise NodeError("start, limit and delta must be scalars")
    here = [ctx.value_here(n.input(i)) for i in range(3)]
    if all(v is not None for v in here):   # operands that follow extents: a Range(0, T) of this lowering
        ctx.bind(n.outputs[0], ctx.const(n.outputs[0], np.arange(*(v.reshape(-1)[0] for v in here)).astype(dt)))
        return
    length, sym, declared = ctx.data_dim(n, 0, 0)
    y = ctx.output(n, 0, (length,), dt)
    ctx.data_dims.append((y, 0, sym, declared))
    ctx.emit("range", ins, [y], {})


def lower_nonzero(ctx, n):
    x = ctx.input(n, 0)
    if x.dtype not in NONZERO_DTYPES:
        raise NodeError(f"NonZero of {x.dtype.name} is unsupported")
    if not 1 <= len(x.shape) <= 8:
        raise NodeError(f"NonZero of rank {len(x.shape)} is unsupported (1..8)")
    length, sym, declared = ctx.data_dim(n, 0, 1, default=prod(x.shape),
                                         same=("nonzero", id(x.storage()), prod(x.shape)))
    y = ctx.output(n, 0, (len(x.shape), length), np.int64)
    ctx.data_dims.append((y, 1, sym, declared))
    ctx.emit("nonzero", [x], [y], {})


def _shape_entries(ctx, name: str, count: int, cast=int) -> list:
    """Per entry of the 1-D shape tensor `name`: its value where the graph fixes it (a constant, or a
    constant piece of a Concat), else None."""
    c = ctx.value_here(name)
    if c is not None:
        return [cast(v) for v in np.asarray(c).reshape(-1)]
    p = ctx.m.producers().get(name)
    if p is not None and p.op_type == "Identity" or p is not None and p.op_type == "Cast" and cast is int:
        return _shape_entries(ctx, p.inputs[0], count, cast)
    if p is not None and p.op_type == "Concat":
        out = []
        for i in p.own_inputs():
            shp = ctx.m.static_shape(i) if i else None
            if shp is None or len(shp) != 1:
                return [None] * count
            out += _shape_entries(ctx, i, shp[0], cast)
        if len(out) == count:
            return out
    return [None] * count


def _cut_at_run_time(ctx, n, full, S, dyn: dict) -> None:
    """IR output 0 of n = `full` (built at its bound) sliced to the run's extents S (an int64 vector, one
    entry per dim of full) along the dims of dyn ({axis: (extent here, symbol, declared)})."""
    axes = sorted(dyn)
    ends = ctx.tmp(n.outputs[0] + "/ends", (len(axes),), np.int64)
    ctx.emit("gather", [S, ctx.const(n.outputs[0] + "/dyn_axes", np.array(axes, np.int64))], [ends], {"axis": 0})
    _cut(ctx, n, [(0, full)], ends, dyn, "a shape entry")


def _cut(ctx, n, outs: list, ends, dyn: dict, what: str, starts=None) -> None:
    """IR outputs i of n = their `full` tensors (built at the bound) sliced to [starts (default 0), ends)
    along the axes of dyn ({axis: (extent here, symbol, declared)}, ends in axis order), with a bound
    check: the slice clips an end past the bound (and counts a negative one from the end), so a run whose
    extents differ from ends - starts fails with EP_ERR_RUN_BOUND."""
    axes = sorted(dyn)
    name = n.outputs[outs[0][0]]
    zeros = starts if starts is not None else ctx.const(name + "/starts", np.zeros(len(axes), np.int64))
    ys = []
    for i, full in outs:
        shape = [dyn[a][0] if a in dyn else d for a, d in enumerate(full.shape)]
        y = ctx.output(n, i, shape, full.dtype) if n.outputs[i] else ctx.tmp(f"{name}/out{i}", shape, full.dtype)
        for a in axes:
            ctx.data_dims.append((y, a, dyn[a][1], dyn[a][2]))
        ctx.emit("slice_dyn", [full, zeros, ends], [y], {"axes": axes + [-1] * (8 - len(axes)),
                                                          "steps": [1] * len(axes) + [0] * (8 - len(axes))})
        ys.append(y)
    got = ctx.tmp(name + "/extents", (len(axes),), np.int64)
    ctx.emit("shape", [ys[0]], [got], {"dims": axes + [-1] * (8 - len(axes)), "values": [0] * 8})
    want = ends if starts is None else binary(ctx, K.EP_BIN_SUB, ends, starts, out_name=name + "/asked")
    same = ctx.tmp(name + "/as_asked", (len(axes),), np.bool_)
    ctx.emit("compare", [got, want], [same], {"kind": K.EP_CMP_EQUAL})
    same_i = ctx.tmp(name + "/as_asked_i32", (len(axes),), np.int32)
    ctx.emit("cast", [same], [same_i], {"to": K.EP_DTYPE_I32})
    low = ctx.tmp(name + "/as_asked_all", (1,), np.int32)
    ctx.emit("reduce", [same_i], [low], {"kind": K.EP_REDUCE_MIN, "axes_mask": 1, "keepdims": 1})
    fail = ctx.tmp(name + "/past_bound", (1,), np.bool_)
    ctx.emit("compare", [low, ctx.const(name + "/zero", np.array([0], np.int32))], [fail], {"kind": K.EP_CMP_EQUAL})
    bound = [outs[0][1].shape[a] for a in axes]
    why = f"{n.name or name}: {what} past its bound {bound} or negative"
    from .control import bound_check
    bound_check(ctx, fail, why)


def lower_pad_at_run_time(ctx, n, X, mode: int, value: float, axes: list) -> None:
    """Pad whose pads are computed at run time: X padded by the most the bound allows on each side of a
    data-dependent axis (for reflect and wrap, at most what the mode allows), then the run's window cut
    out: start = most - begin, end = most + extent + end pad. Constant, edge, reflect and wrap padding
    give the same values in that window as padding by the run's amounts."""
    P = ctx.input(n, 1, "pads")
    k = len(axes)
    if P.dtype != np.int64 or P.shape != (2 * k,):
        raise NodeError(f"its run-time pads '{P.name}' are {P.dtype.name}{list(P.shape)}; {2 * k} int64 expected")
    known = _shape_entries(ctx, n.input(1), 2 * k)
    begin, end = [0] * len(X.shape), [0] * len(X.shape)
    dyn, at = {}, {}        # at: data-dependent axis -> (its index in axes, the room padded at the bound)
    for j, a in enumerate(axes):
        b, e = known[j], known[j + k]
        if b is not None and e is not None:
            begin[a], end[a] = b, e
            continue
        if b is not None and b < 0 or e is not None and e < 0:
            raise NodeError(f"a negative pad {known} next to a run-time one on axis {a}")
        dyn[a] = ctx.data_dim(n, 0, a)
        L = X.shape[a]
        room = ctx.bound_of(dyn[a][1], dyn[a][0]) - L
        if room < 0:
            raise NodeError(f"the declared bound of axis {a} is below the input's extent {L}")
        if mode == K.EP_PAD_REFLECT:
            room = min(room, L - 1)
        elif mode == K.EP_PAD_WRAP:
            room = min(room, L)
        begin[a] = end[a] = room
        at[a] = (j, room)
    if any(b < 0 or e < 0 for b, e in zip(begin, end)):
        raise NodeError("negative constant pads next to run-time ones are unsupported")
    name = n.outputs[0]
    full = ctx.tmp(name + "/at_bound", [d + b + e for d, b, e in zip(X.shape, begin, end)], X.dtype)
    ctx.emit("pad", [X], [full], {"mode": mode, "value": value, "pads": (begin + end + [0] * 16)[:16]})
    order = sorted(dyn)
    vec = lambda base, vals: ctx.const(name + base, np.array(vals, np.int64))   # noqa: E731
    pb = ctx.tmp(name + "/begin", (len(order),), np.int64)
    pe = ctx.tmp(name + "/end", (len(order),), np.int64)
    ctx.emit("gather", [P, vec("/begin_at", [at[a][0] for a in order])], [pb], {"axis": 0})
    ctx.emit("gather", [P, vec("/end_at", [at[a][0] + k for a in order])], [pe], {"axis": 0})
    starts = binary(ctx, K.EP_BIN_SUB, vec("/most", [at[a][1] for a in order]), pb, out_name=name + "/starts")
    ends = binary(ctx, K.EP_BIN_ADD, vec("/most_end", [at[a][1] + X.shape[a] for a in order]), pe,
                  out_name=name + "/ends")
    _cut(ctx, n, [(0, full)], ends, dyn, "a pad", starts=starts)


def lower_tile_at_run_time(ctx, n, X) -> None:
    """Tile whose repeats are computed at run time: X tiled enough to cover the bound of each such axis,
    then cut to extent x repeats (a tiling's prefix is the tiling with fewer repeats)."""
    from .compose import tile
    R, known = _run_time_shape(ctx, n, 1)
    if len(known) != len(X.shape):
        raise NodeError(f"its run-time repeats have {len(known)} entries for an input of rank {len(X.shape)}")
    dyn = {a: ctx.data_dim(n, 0, a) for a, v in enumerate(known) if v is None}
    reps = [v if v is not None else max(1, -(-ctx.bound_of(dyn[a][1], dyn[a][0]) // max(1, X.shape[a])))
            for a, v in enumerate(known)]
    full = tile(ctx, X, reps, n.outputs[0] + "/at_bound")
    name = n.outputs[0]
    order = sorted(dyn)
    r = ctx.tmp(name + "/repeats", (len(order),), np.int64)
    ctx.emit("gather", [R, ctx.const(name + "/dyn_axes", np.array(order, np.int64))], [r], {"axis": 0})
    ends = binary(ctx, K.EP_BIN_MUL, r, ctx.const(name + "/extents", np.array([X.shape[a] for a in order], np.int64)),
                  out_name=name + "/ends")
    _cut(ctx, n, [(0, full)], ends, dyn, "a repeat")


def lower_topk_at_run_time(ctx, n, X, axis: int, largest: int, sorted_: int) -> None:
    """TopK whose K is computed at run time: the whole axis sorted, cut to the first K (the order of a
    full sort, which sorted=0 allows). The output length along the axis is data-dependent, at most the
    axis's extent; K past it fails the run."""
    Kt = ctx.input(n, 1, "K")
    if Kt.dtype != np.int64 or int(np.prod(Kt.shape, dtype=np.int64)) != 1:
        raise NodeError(f"its run-time K '{Kt.name}' is {Kt.dtype.name}{list(Kt.shape)}, not one int64")
    dim = X.shape[axis]
    name = n.outputs[0] or n.name
    vals = ctx.tmp(name + "/all", X.shape, X.dtype)
    idx = ctx.tmp(name + "/all_idx", X.shape, np.int64)
    op = ctx.emit("topk", [X], [vals, idx], {"axis": axis, "k": dim, "largest": largest, "sorted": 1})
    op.scratch = 8 * int(dim)
    ends = ctx.view(Kt, (1,))
    ext = ctx.data_dim(n, 0, axis, default=dim)
    _cut(ctx, n, [(0, vals), (1, idx)], ends, {axis: ext}, "K")


def _run_time_shape(ctx, n, i: int):
    """(S, per-entry known values) of shape input i, a run-time int64 vector."""
    S = ctx.input(n, i, "shape")
    if S.dtype != np.int64 or len(S.shape) != 1 or not 1 <= S.shape[0] <= 8:
        raise NodeError(f"its run-time shape '{S.name}' is {S.dtype.name}{list(S.shape)}; an int64 vector of "
                        f"1 to 8 entries is supported")
    known = _shape_entries(ctx, n.input(i), S.shape[0])
    if any(v is not None and v < 0 for v in known):
        raise NodeError(f"its shape has a negative entry {known}")
    return S, known


def lower_reshape_at_run_time(ctx, n, X) -> None:
    """Reshape whose target shape is computed at run time from the data: a RESHAPE_DYN view of X (no
    data moves). Entries the graph fixes (constant pieces of the Concat that builds the shape) stay static
    dims, a 0 copies X's dim (allowzero 0); the others, and a -1 next to them, are data-dependent lengths,
    bounded by dims= or by X's element count over the fixed entries. The kernel fails the run on an entry
    past its bound (EP_ERR_RUN_BOUND) or a shape whose element count is not X's (EP_ERR_RUN_SHAPE)."""
    S = ctx.input(n, 1, "shape")
    if S.dtype != np.int64 or len(S.shape) != 1 or not 1 <= S.shape[0] <= 8:
        raise NodeError(f"its run-time shape '{S.name}' is {S.dtype.name}{list(S.shape)}; an int64 vector of "
                        f"1 to 8 entries is supported")
    r = S.shape[0]
    allowzero = int(n.attrs.get("allowzero", 0))
    known = _shape_entries(ctx, n.input(1), r)
    if known.count(-1) > 1 or any(v is not None and v < -1 for v in known):
        raise NodeError(f"invalid shape entries {known}")
    fixed = []          # per entry: its static extent, or None for a data-dependent length
    for k, v in enumerate(known):
        if v == 0 and not allowzero:
            if k >= len(X.shape):
                raise NodeError(f"shape entry {k} is 0 (copy the input's dim) past the input's rank {len(X.shape)}")
            fixed.append(int(X.shape[k]))
        else:
            fixed.append(None if v is None or v == -1 else int(v))
    total = prod(X.shape)
    rest = prod(v for v in fixed if v is not None)
    if None not in fixed:
        raise NodeError(f"its shape {fixed} has no run-time entry")   # the graph fixes all: folded elsewhere
    natural = total // rest if rest else 0
    dyn = {}
    for k, v in enumerate(fixed):   # the output's name declares its first data-dependent dim only
        if v is None:
            dyn[k] = ctx.data_dim(n, 0, k, default=natural, by_output=not dyn)
    shape = [v if v is not None else ctx.bound_of(dyn[k][1], dyn[k][0]) for k, v in enumerate(fixed)]
    if X.is_const:      # a view needs arena bytes: a copy of the constant first
        src = ctx.tmp(n.outputs[0] + "/src", X.shape, X.dtype)
        ctx.emit("copy", [X], [src], {"axis": 0})
        X = src
    here = [v if v is not None else dyn[k][0] for k, v in enumerate(fixed)]
    y = ctx.bind(n.outputs[0], ctx.new(n.outputs[0], here, X.dtype, view_of=X))
    for k in dyn:
        ctx.data_dims.append((y, k, dyn[k][1], dyn[k][2]))
    if prod(shape) * np.dtype(X.dtype).itemsize > 1 << 30:
        raise NodeError(f"its output at the bounds {shape} would need more than 1 GiB; declare smaller bounds "
                        f"with dims= for {', '.join(repr(dyn[k][1]) for k in dyn)}")
    ctx.emit("reshape_dyn", [X, S], [y], {"allowzero": allowzero})


def lower_constant_of_shape(ctx, n):
    """ConstantOfShape whose shape is computed at run time (a constant one is folded)."""
    S, known = _run_time_shape(ctx, n, 0)
    val = n.attrs.get("value")
    val = np.zeros(1, np.float32) if val is None else np.asarray(val).reshape(-1)
    one = ctx.const(n.outputs[0] + "/value", np.full([1] * len(known), val[0], dtype=val.dtype))
    _expand_cut(ctx, n, one, S, known)


def lower_expand_at_run_time(ctx, n, X):
    """Expand whose shape is computed at run time: X broadcast to the bound, then cut."""
    S, known = _run_time_shape(ctx, n, 1)
    _expand_cut(ctx, n, X, S, known)


def _expand_cut(ctx, n, X, S, known: list) -> None:
    r = max(len(X.shape), len(known))
    xs = [1] * (r - len(X.shape)) + list(X.shape)
    known = [None] * (r - len(known)) + known if len(known) < r else known
    if len(S.shape) and S.shape[0] < r:
        raise NodeError(f"its run-time shape has {S.shape[0]} entries for an input of rank {len(X.shape)}; "
                        f"edgeplan needs one per output dim")
    for a in range(r):
        if xs[a] != 1:   # the output dim is X's: the shape's entry may only be 1 or that
            if known[a] not in (None, 1, xs[a]):
                raise NodeError(f"cannot expand {list(X.shape)} to a shape with {known[a]} at dim {a}")
            known[a] = xs[a]
    dyn = {a: ctx.data_dim(n, 0, a) for a, v in enumerate(known) if v is None}
    cap = [v if v is not None else ctx.bound_of(dyn[a][1], dyn[a][0]) for a, v in enumerate(known)]
    full = ctx.tmp(n.outputs[0] + "/at_bound", [max(x, c) for x, c in zip(xs, cap)], X.dtype)
    ctx.emit("expand", [X], [full], {})
    if not dyn:
        ctx.view_output(n, 0, full, full.shape)
        return
    _cut_at_run_time(ctx, n, full, S, dyn)


def lower_shape_at_run_time(ctx, n):
    """Shape (or Size) of a tensor whose extents only the run knows (a length the data decides, or one
    that follows from it): a "shape" op reads them from the tensor's run-time dims, the dims the model
    fixes are constants. A tensor of static shape has its Shape folded; an op that needs the value as a
    constant takes it from Lowerer.value_here."""
    x = ctx.input(n, 0)
    r = len(x.shape)
    known = ctx.m.shape(n.inputs[0])
    known = list(known) if known is not None and len(known) == r else [None] * r
    if n.op_type == "Size":
        picked = list(range(r))
    else:
        from ..passes.fold import _shape_const
        picked = [int(a) for a in _shape_const(n, tuple(range(r)))]
    if not picked:   # Shape of no dims, Size of a scalar
        ctx.bind(n.outputs[0], ctx.const(n.outputs[0], np.zeros(0, np.int64) if n.op_type == "Shape"
                                         else np.array(1, np.int64)))
        return
    if len(picked) > 8:
        raise NodeError(f"a run-time shape of {len(picked)} dims is unsupported (at most 8)")
    dims = [-1 if isinstance(known[a], int) and known[a] >= 0 else a for a in picked]
    values = [int(known[a]) if d < 0 else 0 for d, a in zip(dims, picked)]
    params = {"dims": dims + [-1] * (8 - len(dims)), "values": values + [0] * (8 - len(values))}
    if n.op_type == "Shape":
        ctx.emit("shape", [x], [ctx.output(n, 0, (len(picked),), np.int64)], params)
        return
    S = ctx.tmp(n.outputs[0] + "/dims", (len(picked),), np.int64)
    ctx.emit("shape", [x], [S], params)
    ctx.emit("reduce", [S], [ctx.output(n, 0, (), np.int64)], {"kind": K.EP_REDUCE_PROD, "axes_mask": 1,
                                                                "keepdims": 0})


LOWER = {
    ("", "Shape"): lower_shape_at_run_time,
    ("", "Size"): lower_shape_at_run_time,
    ("", "Range"): lower_range,
    ("", "NonZero"): lower_nonzero,
    ("", "ConstantOfShape"): lower_constant_of_shape,
}


# ---- constant folding (passes/fold.py): ConstantOfShape is only ever folded (its shape is constant) ----

def _fold_const_of_shape(node, a):
    val = node.attrs.get("value")
    val = np.zeros(1, np.float32) if val is None else np.asarray(val).reshape(-1)
    return np.full(tuple(int(d) for d in a[0].reshape(-1)), val[0], dtype=val.dtype)


FOLD = {"ConstantOfShape": _fold_const_of_shape}

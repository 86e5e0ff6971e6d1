"""Data movement: Concat, Split, Slice, Transpose, Pad, Gather (any dtype except Pad, which is f32)."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..lowering import NodeError, pad8
from ._util import ceil_div, norm_axis

MAX_RANK = 8


def _rank_ok(t):
    if len(t.shape) > MAX_RANK:
        raise NodeError(f"rank {len(t.shape)} > {MAX_RANK}")


def lower_concat(ctx, n):
    ts = [ctx.tensor(i) for i in n.inputs if i]
    if not ts:
        raise NodeError("no inputs")
    r = len(ts[0].shape)
    axis = norm_axis(n.attrs.get("axis", 0), r)
    for t in ts:
        _rank_ok(t)
        if len(t.shape) != r or t.dtype != ts[0].dtype:
            raise NodeError("inputs differ in rank or dtype")
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != axis):
            raise NodeError(f"input shapes {[x.shape for x in ts]} differ outside axis {axis}")
    live = [t for t in ts if t.shape[axis] > 0] or ts[:1]
    shape = list(ts[0].shape)
    shape[axis] = sum(t.shape[axis] for t in live)
    if len(live) == 1:
        ctx.view_output(n, 0, live[0], shape)
        return
    y = ctx.output(n, 0, shape, ts[0].dtype)
    ctx.emit("concat", live, [y], {"axis": axis})


def lower_split(ctx, n):
    X = ctx.input(n, 0)
    _rank_ok(X)
    r = len(X.shape)
    axis = norm_axis(n.attrs.get("axis", 0), r)
    d = X.shape[axis]
    nout = len(n.outputs)
    if n.input(1):
        split = [int(v) for v in ctx.const_input(n, 1, "split").reshape(-1)]
    elif n.attrs.get("split") is not None:
        split = [int(v) for v in n.attrs["split"]]
    else:
        num = int(n.attrs.get("num_outputs", nout))
        chunk = ceil_div(d, num)
        split = [chunk] * (num - 1) + [d - chunk * (num - 1)]
    if len(split) != nout or sum(split) != d or any(s < 0 for s in split):
        raise NodeError(f"split {split} does not divide dim {d} into {nout} outputs")
    if nout == 1:
        ctx.view_output(n, 0, X, X.shape)
        return
    outs = []
    for k, s in enumerate(split):
        shape = list(X.shape)
        shape[axis] = s
        name = n.outputs[k] or f"{n.name}/unused{k}"
        t = ctx.new(name, shape, X.dtype)
        if n.outputs[k]:
            ctx.bind(n.outputs[k], t)
        outs.append(t)
    ctx.emit("split", [X], outs, {"axis": axis})


def slice_dims(shape, starts, ends, axes, steps):
    """Per-dim (start, step, extent) of an ONNX Slice, clamped as ONNX does."""
    r = len(shape)
    st, sp, ext = [0] * r, [1] * r, list(shape)
    seen = set()
    for s, e, a, k in zip(starts, ends, axes, steps):
        a = norm_axis(a, r)
        if a in seen:
            raise NodeError(f"axis {a} repeated")
        seen.add(a)
        d = shape[a]
        if k == 0:
            raise NodeError("step 0")
        if s < 0:
            s += d
        if e < 0:
            e += d
        if k > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
            cnt = max(0, ceil_div(e - s, k))
        else:
            s, e = min(max(s, 0), d - 1), min(max(e, -1), d - 1)
            cnt = max(0, ceil_div(s - e, -k))
        st[a], sp[a], ext[a] = (s if cnt else 0), k, cnt
    return st, sp, ext


def lower_slice_dyn(ctx, n, X):
    """Slice with starts/ends computed at run time: the sliced extents are data-dependent, bounded by X's."""
    St, En = ctx.input(n, 1, "starts"), ctx.input(n, 2, "ends")
    if St.dtype not in (np.int32, np.int64) or En.dtype != St.dtype or len(St.shape) != 1 or St.shape != En.shape:
        raise NodeError(f"run-time starts/ends must be int32/int64 vectors of one length, got "
                        f"{St.dtype.name}{list(St.shape)} and {En.dtype.name}{list(En.shape)}")
    k = St.shape[0]
    axes = ([int(v) for v in ctx.const_input(n, 3, "axes").reshape(-1)] if n.input(3) else list(range(k)))
    steps = ([int(v) for v in ctx.const_input(n, 4, "steps").reshape(-1)] if n.input(4) else [1] * k)
    r = len(X.shape)
    axes = [norm_axis(a, r) for a in axes]
    if len(axes) != k or len(steps) != k or len(set(axes)) != k or any(s == 0 or abs(s) >= 2**31 for s in steps):
        raise NodeError("axes/steps do not match the run-time starts/ends")
    shape = list(X.shape)
    data = []
    for a in axes:
        shape[a], sym, declared = ctx.data_dim(n, 0, a, default=X.shape[a])
        if shape[a] > X.shape[a]:
            raise NodeError(f"declared length {shape[a]} of axis {a} exceeds the input's {X.shape[a]}")
        data.append((a, sym, declared))
    y = ctx.output(n, 0, shape, X.dtype)
    for a, sym, declared in data:
        ctx.data_dims.append((y, a, sym, declared))
    ctx.emit("slice_dyn", [X, St, En], [y], {"axes": pad8(axes, -1), "steps": pad8(steps, 0)})


def lower_slice(ctx, n):
    X = ctx.input(n, 0)
    _rank_ok(X)
    if not ctx.known(n.input(1)) or not ctx.known(n.input(2)):
        lower_slice_dyn(ctx, n, X)
        return
    starts = [int(v) for v in ctx.const_input(n, 1, "starts").reshape(-1)]
    ends = [int(v) for v in ctx.const_input(n, 2, "ends").reshape(-1)]
    axes = ([int(v) for v in ctx.const_input(n, 3, "axes").reshape(-1)] if n.input(3) else list(range(len(starts))))
    steps = ([int(v) for v in ctx.const_input(n, 4, "steps").reshape(-1)] if n.input(4) else [1] * len(starts))
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise NodeError("starts/ends/axes/steps differ in length")
    st, sp, ext = slice_dims(X.shape, starts, ends, axes, steps)
    if ext == list(X.shape) and all(s == 0 for s in st) and all(k == 1 for k in sp):
        ctx.view_output(n, 0, X, X.shape)
        return
    y = ctx.output(n, 0, ext, X.dtype)
    ctx.emit("slice", [X], [y], {"starts": pad8(st, 0), "steps": pad8(sp, 1)})


def lower_transpose(ctx, n):
    X = ctx.input(n, 0)
    _rank_ok(X)
    r = len(X.shape)
    perm = n.attrs.get("perm")
    perm = list(range(r))[::-1] if perm is None else [norm_axis(p, r) for p in perm]
    if sorted(perm) != list(range(r)):
        raise NodeError(f"perm {perm} is not a permutation of {r} dims")
    shape = [X.shape[p] for p in perm]
    moved = [p for p in perm if X.shape[p] != 1]
    if moved == sorted(moved):
        ctx.view_output(n, 0, X, shape)       # only unit dims move: same bytes
        return
    y = ctx.output(n, 0, shape, X.dtype)
    ctx.emit("transpose", [X], [y], {"perm": perm + list(range(r, MAX_RANK))})


PAD_MODES = {"constant": K.EP_PAD_CONSTANT, "reflect": K.EP_PAD_REFLECT, "edge": K.EP_PAD_EDGE, "wrap": K.EP_PAD_WRAP}


PAD_INTS = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                                   np.bool_)}


def lower_pad(ctx, n):
    X = ctx.input(n, 0)
    if X.dtype not in PAD_INTS:
        ctx.need_f32(X)
    _rank_ok(X)
    r = len(X.shape)
    mode = n.attrs.get("mode", "constant")
    if mode not in PAD_MODES:
        raise NodeError(f"mode '{mode}' is unsupported (constant, reflect, edge, wrap)")
    run_time = n.input(1) and not ctx.known(n.input(1))
    if n.input(1) and not run_time:
        pads = [int(v) for v in ctx.const_input(n, 1, "pads").reshape(-1)]
    else:
        pads = [int(v) for v in n.attrs.get("pads", [])]
    value = 0.0
    if n.input(2):
        cv = ctx.const_input(n, 2, "constant_value")
        value = float(cv.reshape(-1)[0]) if cv.size else 0.0
    elif "value" in n.attrs:
        value = float(n.attrs["value"])
    axes = ([norm_axis(a, r) for a in ctx.const_input(n, 3, "axes").reshape(-1)] if n.input(3)
            else list(range(r)))
    if run_time:
        from .datadep import lower_pad_at_run_time
        return lower_pad_at_run_time(ctx, n, X, PAD_MODES[mode], value, axes)
    if len(pads) != 2 * len(axes):
        raise NodeError(f"pads {pads} do not match {len(axes)} axes")
    begin, end = [0] * r, [0] * r
    for k, a in enumerate(axes):
        begin[a], end[a] = pads[k], pads[k + len(axes)]
    shape = [d + b + e for d, b, e in zip(X.shape, begin, end)]
    if any(s < 0 for s in shape):
        raise NodeError(f"pads {pads} crop {X.shape} below zero")
    if mode == "reflect" and any(b > d - 1 or e > d - 1 for d, b, e in zip(X.shape, begin, end)):
        raise NodeError(f"reflect pads {pads} exceed the input extent {X.shape}")
    # no pad is a view, unless the pads follow a variable length (the lowering at another length pads:
    # compiler/dynamic.py needs the same op at every length)
    if not any(begin) and not any(end) and not (ctx.symbols and n.input(1) in ctx.m.from_shapes):
        ctx.view_output(n, 0, X, X.shape)
        return
    if X.dtype != np.float32 and (not np.isfinite(value) or float(np.float32(value)) != value
                                  or int(value) != value):
        raise NodeError(f"constant_value {value} on {X.dtype.name} is not an integer a float32 holds exactly")
    y = ctx.output(n, 0, shape, X.dtype)
    ctx.emit("pad", [X], [y], {"mode": PAD_MODES[mode], "value": value,
                               "pads": (begin + end + [0] * 16)[:16]})


def lower_gather(ctx, n):
    X = ctx.input(n, 0)
    _rank_ok(X)
    r = len(X.shape)
    if r == 0:
        raise NodeError("Gather on a scalar")
    axis = norm_axis(n.attrs.get("axis", 0), r)
    I = ctx.input(n, 1)
    if I.dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise NodeError(f"indices dtype {I.dtype.name} (only int32/int64)")
    if I.data is not None:
        d = X.shape[axis]
        if I.data.size and (I.data.min() < -d or I.data.max() >= d):
            raise NodeError(f"constant indices out of range for dim {d}")
    shape = list(X.shape[:axis]) + list(I.shape) + list(X.shape[axis + 1:])
    if len(shape) > MAX_RANK:
        raise NodeError(f"output rank {len(shape)} > {MAX_RANK}")
    y = ctx.output(n, 0, shape, X.dtype)
    ctx.emit("gather", [X, I], [y], {"axis": axis})


LOWER = {
    ("", "Concat"): lower_concat,
    ("", "Split"): lower_split,
    ("", "Slice"): lower_slice,
    ("", "Transpose"): lower_transpose,
    ("", "Pad"): lower_pad,
    ("", "Gather"): lower_gather,
}


# ---- constant folding (passes/fold.py) ----

FOLD = {
    "Concat": lambda n, a: np.concatenate(a, axis=int(n.attrs.get("axis", 0))),
    "Gather": lambda n, a: np.take(a[0], a[1].astype(np.int64), axis=int(n.attrs.get("axis", 0))),
    "Transpose": lambda n, a: np.ascontiguousarray(np.transpose(a[0], n.attrs.get("perm"))),
}


def _rearrange(ctx, n, X, split, perm, out_shape):
    """X viewed as `split`, transposed by perm, viewed as out_shape (bound to the node's output)."""
    if len(split) > MAX_RANK:
        raise NodeError(f"needs a rank-{len(split)} transpose (> {MAX_RANK})")
    v = ctx.view(X, split, n.outputs[0] + "/split")
    t = ctx.tmp(n.outputs[0] + "/moved", [split[p] for p in perm], X.dtype)
    ctx.emit("transpose", [v], [t], {"perm": list(perm) + list(range(len(perm), MAX_RANK))})
    ctx.view_output(n, 0, t, out_shape)


def lower_depth_to_space(ctx, n):
    """DepthToSpace (DCR or CRD): a view, a 6-D transpose and a view."""
    X = ctx.input(n, 0)
    if len(X.shape) != 4:
        raise NodeError(f"DepthToSpace needs [N, C, H, W], got {list(X.shape)}")
    b = int(n.attrs.get("blocksize", 0))
    N, C, H, W = X.shape
    if b < 1 or C % (b * b):
        raise NodeError(f"blocksize {b} does not divide the {C} channels into blocks of {b}x{b}")
    c = C // (b * b)
    mode = n.attrs.get("mode", "DCR")
    if mode == "DCR":
        _rearrange(ctx, n, X, (N, b, b, c, H, W), (0, 3, 4, 1, 5, 2), (N, c, H * b, W * b))
    elif mode == "CRD":
        _rearrange(ctx, n, X, (N, c, b, b, H, W), (0, 1, 4, 2, 5, 3), (N, c, H * b, W * b))
    else:
        raise NodeError(f"mode '{mode}' is unsupported (DCR, CRD)")


def lower_space_to_depth(ctx, n):
    X = ctx.input(n, 0)
    if len(X.shape) != 4:
        raise NodeError(f"SpaceToDepth needs [N, C, H, W], got {list(X.shape)}")
    b = int(n.attrs.get("blocksize", 0))
    N, C, H, W = X.shape
    if b < 1 or H % b or W % b:
        raise NodeError(f"blocksize {b} does not divide H {H} and W {W}")
    mode = n.attrs.get("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise NodeError(f"mode '{mode}' is unsupported (DCR, CRD)")
    perm = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
    _rearrange(ctx, n, X, (N, C, H // b, b, W // b, b), perm, (N, C * b * b, H // b, W // b))


LOWER.update({("", "DepthToSpace"): lower_depth_to_space, ("", "SpaceToDepth"): lower_space_to_depth})

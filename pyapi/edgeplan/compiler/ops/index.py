"""Index and detection ops (plan 1.2): GatherElements → gather_elements; ScatterElements and Scatter
(opsets 9-10, which the importer converts to ScatterElements anyway) → scatter_elements; ReverseSequence →
reverse_sequence; NonMaxSuppression → non_max_suppression; Compress → compress, or a gather when the
condition is a constant.

Index values that are run-time data are checked by the kernels (EP_ERR_RUN_INDEX); constant ones here.
NonMaxSuppression's and a run-time Compress's output lengths depend on the data: the kernel writes the
actual length, bounded as NonZero's (Lowerer.data_dim, docs/dynamic-shapes.md) by dims= under the output's
dim name or the output's name, by default the natural maximum (N*C*min(B, max_output_boxes_per_class)
selected boxes; min(len(condition), extent) slices)."""
from __future__ import annotations

import numpy as np

from ..lowering import NodeError
from ._util import norm_axis, prod
from .sequence import ARITH, REDUCTION, rank_ok

INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
F32 = np.dtype(np.float32)


def _index_tensor(I, what="indices"):
    if I.dtype not in INDEX_DTYPES:
        raise NodeError(f"{what} '{I.name}' has dtype {I.dtype.name} (only int32/int64)")


def _elements_indices(D, I, axis):
    """Indices of GatherElements / ScatterElements: Data's rank, no larger than Data off the axis, and
    constant values in range."""
    _index_tensor(I)
    if len(I.shape) != len(D.shape):
        raise NodeError(f"indices {list(I.shape)} and data {list(D.shape)} differ in rank")
    for d, (a, b) in enumerate(zip(I.shape, D.shape)):
        if d != axis and a > b:
            raise NodeError(f"indices {list(I.shape)} exceed data {list(D.shape)} on dim {d} (only the axis may)")
    if I.data is not None and I.data.size:
        dim = D.shape[axis]
        if I.data.min() < -dim or I.data.max() >= dim:
            raise NodeError(f"constant indices out of range [-{dim}, {dim}) on axis {axis}")


def lower_gather_elements(ctx, n):
    D, I = ctx.input(n, 0), ctx.input(n, 1)
    rank_ok(D)
    if not D.shape:
        raise NodeError("GatherElements on a scalar")
    axis = norm_axis(n.attrs.get("axis", 0), len(D.shape))
    _elements_indices(D, I, axis)
    y = ctx.output(n, 0, I.shape, D.dtype)
    ctx.emit("gather_elements", [D, I], [y], {"axis": axis})


def lower_scatter_elements(ctx, n):
    D, I, U = ctx.input(n, 0), ctx.input(n, 1), ctx.input(n, 2)
    rank_ok(D)
    if not D.shape:
        raise NodeError(f"{n.op_type} on a scalar")
    axis = norm_axis(n.attrs.get("axis", 0), len(D.shape))
    red = n.attrs.get("reduction", "none") if n.op_type == "ScatterElements" else "none"
    if red not in REDUCTION:
        raise NodeError(f"reduction '{red}' is unsupported")
    if red != "none" and D.dtype not in ARITH:
        raise NodeError(f"reduction '{red}' on {D.dtype.name} data (float32, int32 and int64 are supported)")
    if U.dtype != D.dtype:
        raise NodeError(f"updates ({U.dtype.name}) and data ({D.dtype.name}) differ in dtype")
    _elements_indices(D, I, axis)
    if tuple(U.shape) != tuple(I.shape):
        raise NodeError(f"updates {list(U.shape)} and indices {list(I.shape)} differ in shape")
    y = ctx.output(n, 0, D.shape, D.dtype)
    ctx.emit("scatter_elements", [D, I, U], [y], {"axis": axis, "reduction": REDUCTION[red]})


def lower_reverse_sequence(ctx, n):
    X, L = ctx.input(n, 0), ctx.input(n, 1, "sequence_lens")
    rank_ok(X)
    batch_axis, time_axis = int(n.attrs.get("batch_axis", 1)), int(n.attrs.get("time_axis", 0))
    if {batch_axis, time_axis} != {0, 1}:
        raise NodeError(f"batch_axis {batch_axis} and time_axis {time_axis} must be 0 and 1")
    if len(X.shape) < 2:
        raise NodeError(f"ReverseSequence needs rank >= 2, got {len(X.shape)}")
    _index_tensor(L, "sequence_lens")
    B, T = X.shape[batch_axis], X.shape[time_axis]
    if tuple(L.shape) != (B,):
        raise NodeError(f"sequence_lens {list(L.shape)} must be [{B}] (the batch extent)")
    if L.data is not None and L.data.size and (L.data.min() < 0 or L.data.max() > T):
        raise NodeError(f"sequence_lens {L.data.tolist()} outside [0, {T}]")
    y = ctx.output(n, 0, X.shape, X.dtype)
    ctx.emit("reverse_sequence", [X, L], [y], {"batch_axis": batch_axis, "time_axis": time_axis})


def _nms_scalar(ctx, n, i, what, dtypes):
    """Input i of NonMaxSuppression: (None, None) when absent, (value, None) when constant, (None, tensor)
    when computed at run time."""
    t = ctx.input(n, i, optional=True)
    if t is None:
        return None, None
    if t.dtype not in dtypes:
        raise NodeError(f"{what} '{t.name}' has dtype {t.dtype.name}; supported: "
                        f"{', '.join(sorted(d.name for d in dtypes))}")
    if prod(t.shape) != 1:
        raise NodeError(f"{what} must hold one value, got shape {list(t.shape)}")
    if t.data is not None:
        return t.data.reshape(-1)[0].item(), None
    return None, t


def lower_nms(ctx, n):
    boxes, scores = ctx.input(n, 0, "boxes"), ctx.input(n, 1, "scores")
    ctx.need_f32(boxes, scores)
    if len(boxes.shape) != 3 or boxes.shape[2] != 4:
        raise NodeError(f"boxes must be [num_batches, num_boxes, 4], got {list(boxes.shape)}")
    N, B = boxes.shape[0], boxes.shape[1]
    if len(scores.shape) != 3 or scores.shape[0] != N or scores.shape[2] != B:
        raise NodeError(f"scores {list(scores.shape)} must be [{N}, num_classes, {B}] for boxes {list(boxes.shape)}")
    C = scores.shape[1]
    center = int(n.attrs.get("center_point_box", 0))
    if center not in (0, 1):
        raise NodeError(f"center_point_box {center} (0 or 1)")
    max_out, t_max = _nms_scalar(ctx, n, 2, "max_output_boxes_per_class", INDEX_DTYPES)
    iou, t_iou = _nms_scalar(ctx, n, 3, "iou_threshold", {F32})
    score, t_score = _nms_scalar(ctx, n, 4, "score_threshold", {F32})
    if t_max is None:
        max_out = max(int(max_out or 0), 0)       # absent: 0, no box (ONNX default)
    if iou is not None and not 0.0 <= float(iou) <= 1.0:
        raise NodeError(f"iou_threshold {iou} must be in [0, 1]")
    per_class = B if t_max is not None else min(B, max_out)
    length, sym, declared = ctx.data_dim(n, 0, 0, default=N * C * per_class)
    y = ctx.output(n, 0, (length, 3), np.int64)
    ctx.data_dims.append((y, 0, sym, declared))
    ins = [boxes, scores, t_max, t_iou, t_score]
    while ins[-1] is None:
        ins.pop()
    params = {"center_point_box": center, "has_score_threshold": int(score is not None),
              "max_output_boxes_per_class": min(int(max_out or 0), 2**63 - 1),
              "iou_threshold": float(iou or 0.0), "score_threshold": float(score or 0.0)}
    op = ctx.emit("non_max_suppression", ins, [y], params)
    op.scratch = 3 * 4 * B


def lower_compress(ctx, n):
    X, cond = ctx.input(n, 0), ctx.input(n, 1, "condition")
    rank_ok(X)
    if cond.dtype != np.dtype(np.bool_) or len(cond.shape) != 1:
        raise NodeError(f"condition must be a 1-D bool tensor, got {cond.dtype.name} {list(cond.shape)}")
    if n.attrs.get("axis") is None:           # the flattened input
        X = ctx.view(X, (prod(X.shape),), f"{n.outputs[0]}/flat")
        axis = 0
    else:
        if not X.shape:
            raise NodeError("Compress along an axis of a scalar")
        axis = norm_axis(n.attrs["axis"], len(X.shape))
    dim = X.shape[axis]
    if cond.data is not None:                 # a constant condition: a gather of the kept slices
        keep = np.flatnonzero(cond.data.reshape(-1)[:dim]).astype(np.int64)
        shape = list(X.shape)
        shape[axis] = keep.size
        y = ctx.output(n, 0, shape, X.dtype)
        ctx.emit("gather", [X, ctx.const(f"{n.outputs[0]}/kept", keep)], [y], {"axis": axis})
        return
    length, sym, declared = ctx.data_dim(n, 0, axis, default=min(cond.shape[0], dim))
    shape = list(X.shape)
    shape[axis] = length
    y = ctx.output(n, 0, shape, X.dtype)
    ctx.data_dims.append((y, axis, sym, declared))
    ctx.emit("compress", [X, cond], [y], {"axis": axis})


LOWER = {
    ("", "GatherElements"): lower_gather_elements,
    ("", "ScatterElements"): lower_scatter_elements,
    ("", "Scatter"): lower_scatter_elements,
    ("", "ReverseSequence"): lower_reverse_sequence,
    ("", "NonMaxSuppression"): lower_nms,
    ("", "Compress"): lower_compress,
}


# ---- cost (compiler/cost.py) ----

def _nms_flops(op):
    """Sorting every class's boxes and one IoU (about 20 flops) per candidate and kept box."""
    N, C, B = op.inputs[1].shape
    per_class = min(B, int(op.params.get("max_output_boxes_per_class", B))) if len(op.inputs) < 3 else B
    return int(N * C * (B * max(1, int(np.log2(max(B, 1)))) + 20 * B * per_class))


FLOPS = {"non_max_suppression": _nms_flops}

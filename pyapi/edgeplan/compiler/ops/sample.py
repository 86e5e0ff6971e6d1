"""Bilinear sampling ops (plan 1.3): GridSample → gridsample (2-D and 3-D; linear, nearest, cubic; zeros, border,
reflection padding); RoiAlign → roialign (avg / max, half_pixel / output_half_pixel); DeformConv → deformconv
(2-D, optional bias and mask). The layouts and semantics are plan_format.h's ep_gridsample_params,
ep_roialign_params and ep_deformconv_params; the numerics follow the ONNX reference implementations.

Every operand shape is static at compile time (the grid's, the ROIs', the offsets'); the values of the grid,
ROIs, batch indices, offsets and mask are run-time data. A batch index outside the batch fails the run
(EP_ERR_RUN_INDEX); a constant one is refused here."""
from __future__ import annotations

import math

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from ._util import check_kernel_shape, ints, prod, window

INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))

GRID_MODES = {"linear": K.EP_GRIDSAMPLE_LINEAR, "bilinear": K.EP_GRIDSAMPLE_LINEAR,
              "nearest": K.EP_GRIDSAMPLE_NEAREST, "cubic": K.EP_GRIDSAMPLE_CUBIC, "bicubic": K.EP_GRIDSAMPLE_CUBIC}
GRID_PADDING = {"zeros": K.EP_GRIDSAMPLE_ZEROS, "border": K.EP_GRIDSAMPLE_BORDER,
                "reflection": K.EP_GRIDSAMPLE_REFLECTION}


def _choice(n, key, default, table):
    v = n.attrs.get(key, default)
    v = v.decode() if isinstance(v, bytes) else str(v)
    if v not in table:
        raise NodeError(f"{key} '{v}' is unsupported (supported: {', '.join(sorted(table))})")
    return table[v]


def _flag(n, key, default=0):
    v = int(n.attrs.get(key, default))
    if v not in (0, 1):
        raise NodeError(f"{key} must be 0 or 1, got {v}")
    return v


def lower_gridsample(ctx, n):
    X, grid = ctx.input(n, 0, "X"), ctx.input(n, 1, "grid")
    ctx.need_f32(X, grid)
    r = len(X.shape)
    if r not in (4, 5):
        raise NodeError(f"GridSample on a rank-{r} input {list(X.shape)}: only 2-D (N, C, H, W) and 3-D "
                        f"(N, C, D, H, W) inputs are supported")
    k = r - 2
    if len(grid.shape) != r or grid.shape[0] != X.shape[0] or grid.shape[-1] != k:
        raise NodeError(f"grid {list(grid.shape)} must be [{X.shape[0]}, ..., {k}] (rank {r}) for input "
                        f"{list(X.shape)}")
    if any(d < 1 for d in X.shape[2:]):
        raise NodeError(f"GridSample on an input with an empty spatial dim {list(X.shape)}")
    mode = _choice(n, "mode", "linear" if ctx.m.opset >= 20 else "bilinear", GRID_MODES)
    pad = _choice(n, "padding_mode", "zeros", GRID_PADDING)
    align = _flag(n, "align_corners")
    if mode == K.EP_GRIDSAMPLE_CUBIC and k != 2:
        raise NodeError("GridSample mode 'cubic' is supported on 2-D inputs only (as ONNX defines it); use "
                        "'linear' or 'nearest' for a 3-D input")
    y = ctx.output(n, 0, (X.shape[0], X.shape[1], *grid.shape[1:-1]), np.float32)
    ctx.emit("gridsample", [X, grid], [y], {"mode": mode, "padding_mode": pad, "align_corners": align})


def lower_roialign(ctx, n):
    X, rois, bi = ctx.input(n, 0, "X"), ctx.input(n, 1, "rois"), ctx.input(n, 2, "batch_indices")
    ctx.need_f32(X, rois)
    if bi.dtype not in INDEX_DTYPES:
        raise NodeError(f"batch_indices '{bi.name}' has dtype {bi.dtype.name} (only int64/int32)")
    if len(X.shape) != 4:
        raise NodeError(f"RoiAlign needs an input of rank 4 (N, C, H, W), got {list(X.shape)}")
    N, C, H, W = X.shape
    if H < 1 or W < 1:
        raise NodeError(f"RoiAlign on an input with an empty spatial dim {list(X.shape)}")
    if len(rois.shape) != 2 or rois.shape[1] != 4:
        raise NodeError(f"rois must be [num_rois, 4], got {list(rois.shape)}")
    R = rois.shape[0]
    if tuple(bi.shape) != (R,):
        raise NodeError(f"batch_indices {list(bi.shape)} must be [{R}] (one per roi)")
    if bi.data is not None and bi.data.size and (bi.data.min() < 0 or bi.data.max() >= N):
        raise NodeError(f"constant batch_indices {bi.data.tolist()} outside [0, {N})")
    mode = _choice(n, "mode", "avg", {"avg": K.EP_ROIALIGN_AVG, "max": K.EP_ROIALIGN_MAX})
    # opset 10 has no coordinate_transformation_mode: it computes what opset 16 calls output_half_pixel
    half = _choice(n, "coordinate_transformation_mode", "half_pixel" if ctx.m.opset >= 16 else "output_half_pixel",
                   {"half_pixel": 1, "output_half_pixel": 0})
    oh, ow = int(n.attrs.get("output_height", 1)), int(n.attrs.get("output_width", 1))
    sr = int(n.attrs.get("sampling_ratio", 0))
    scale = float(n.attrs.get("spatial_scale", 1.0))
    if not (1 <= oh <= 1 << 20 and 1 <= ow <= 1 << 20):
        raise NodeError(f"output_height {oh} and output_width {ow} must be in [1, 2^20]")
    if not 0 <= sr <= K.EP_ROIALIGN_MAX_GRID:
        raise NodeError(f"sampling_ratio {sr} must be in [0, {K.EP_ROIALIGN_MAX_GRID}] (0: adaptive)")
    if not math.isfinite(scale):
        raise NodeError(f"spatial_scale {scale} must be finite")
    y = ctx.output(n, 0, (R, C, oh, ow), np.float32)
    ctx.emit("roialign", [X, rois, bi], [y], {"mode": mode, "half_pixel": half, "output_height": oh,
                                               "output_width": ow, "sampling_ratio": sr, "spatial_scale": scale})


def lower_deformconv(ctx, n):
    X, Wt, off = ctx.input(n, 0, "X"), ctx.input(n, 1, "W"), ctx.input(n, 2, "offset")
    B, mask = ctx.input(n, 3, optional=True), ctx.input(n, 4, optional=True)
    ctx.need_f32(X, Wt, off, B, mask)
    if len(X.shape) != 4 or len(Wt.shape) != 4:
        raise NodeError(f"DeformConv on input {list(X.shape)} and weights {list(Wt.shape)}: only 2-D "
                        f"(rank 4: N, C, H, W) is supported")
    N, C = X.shape[:2]
    M, Cg = Wt.shape[:2]
    kernel = list(Wt.shape[2:])
    check_kernel_shape(n, kernel)
    g, og = int(n.attrs.get("group", 1)), int(n.attrs.get("offset_group", 1))
    if g < 1 or C != Cg * g or M % g:
        raise NodeError(f"group={g} does not fit input channels {C} and weights {list(Wt.shape)}")
    if og < 1 or C % og:
        raise NodeError(f"offset_group={og} does not divide the input channels {C}")
    strides, dil = ints(n, "strides", [1, 1]), ints(n, "dilations", [1, 1])
    begin, end, outs = window(n, X.shape[2:], kernel, strides, dil)
    taps = kernel[0] * kernel[1]
    want = [N, og * taps * 2, *outs]
    if list(off.shape) != want:
        raise NodeError(f"offset {list(off.shape)} must be {want} (offset_group * kH * kW * 2 channels at the "
                        f"output size)")
    if mask is not None and list(mask.shape) != [N, og * taps, *outs]:
        raise NodeError(f"mask {list(mask.shape)} must be {[N, og * taps, *outs]}")
    if B is not None and prod(B.shape) != M:
        raise NodeError(f"bias {list(B.shape)} must have one value per output channel ({M})")
    if B is not None and tuple(B.shape) != (M,):
        B = ctx.view(B, (M,))
    y = ctx.output(n, 0, (N, M, *outs), np.float32)
    ins = [X, Wt, off, B, mask]
    while ins[-1] is None:
        ins.pop()
    op = ctx.emit("deformconv", ins, [y], {"kernel": kernel, "stride": strides, "dilation": dil,
                                          "pads": [begin[0], begin[1], end[0], end[1]], "groups": g,
                                          "offset_groups": og})
    op.scratch = 0 if N == 0 or M == 0 else 4 * (C // g) * taps * outs[0] * outs[1]   # one group's columns


LOWER = {
    ("", "GridSample"): lower_gridsample,
    ("", "RoiAlign"): lower_roialign,
    ("", "DeformConv"): lower_deformconv,
}


# ---- cost (compiler/cost.py) ----

def _gridsample_flops(op):
    """Per output element, two flops per tap: 1 (nearest), 2^k (linear) or 16 (cubic) taps."""
    k = len(op.inputs[0].shape) - 2
    taps = {K.EP_GRIDSAMPLE_NEAREST: 1, K.EP_GRIDSAMPLE_LINEAR: 2 ** k, K.EP_GRIDSAMPLE_CUBIC: 16}
    return 2 * taps[int(op.params["mode"])] * prod(op.outputs[0].shape)


def _roialign_flops(op):
    """Eight flops per bilinear sample, sampling_ratio^2 samples per bin (4 when adaptive)."""
    sr = int(op.params.get("sampling_ratio", 0)) or 2
    return 8 * sr * sr * prod(op.outputs[0].shape)


def _deformconv_flops(op):
    """The GEMM (2 flops per weight and output pixel) and about 10 per sample of the columns."""
    X, Wt = op.inputs[0], op.inputs[1]
    N, M, OH, OW = op.outputs[0].shape
    k = prod(Wt.shape[1:])
    return 2 * N * M * OH * OW * k + 10 * N * X.shape[1] * prod(Wt.shape[2:]) * OH * OW


FLOPS = {"gridsample": _gridsample_flops, "roialign": _roialign_flops, "deformconv": _deformconv_flops}

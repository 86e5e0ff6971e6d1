"""Resize (opset 11-21) and Upsample → resize (per-dim float scales), or resize_ext for tf_crop_and_resize and
antialias downsampling."""
from __future__ import annotations

import math

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from ._util import norm_axis

MODES = {"nearest": K.EP_RESIZE_NEAREST, "linear": K.EP_RESIZE_LINEAR, "bilinear": K.EP_RESIZE_LINEAR,
         "trilinear": K.EP_RESIZE_LINEAR, "cubic": K.EP_RESIZE_CUBIC, "bicubic": K.EP_RESIZE_CUBIC}
COORDS = {"half_pixel": K.EP_COORD_HALF_PIXEL, "asymmetric": K.EP_COORD_ASYMMETRIC,
          "align_corners": K.EP_COORD_ALIGN_CORNERS, "pytorch_half_pixel": K.EP_COORD_PYTORCH_HALF_PIXEL,
          "tf_half_pixel_for_nearest": K.EP_COORD_TF_HALF_PIXEL_FOR_NEAREST,
          "half_pixel_symmetric": K.EP_COORD_HALF_PIXEL_SYMMETRIC}
NEAREST = {"round_prefer_floor": K.EP_NEAREST_ROUND_PREFER_FLOOR, "round_prefer_ceil": K.EP_NEAREST_ROUND_PREFER_CEIL,
           "floor": K.EP_NEAREST_FLOOR, "ceil": K.EP_NEAREST_CEIL}


def _opt_const(ctx, n, i, what):
    """Constant input i as a flat array, or None when absent or empty."""
    if not n.input(i):
        return None
    a = ctx.const_input(n, i, what)
    return a.reshape(-1) if a.size else None


def lower_resize(ctx, n):
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    r = len(X.shape)
    if r > 8:
        raise NodeError(f"rank {r} > 8")
    upsample = n.op_type == "Upsample"
    mode = n.attrs.get("mode", "nearest")
    if mode not in MODES:
        raise NodeError(f"mode '{mode}' is unsupported")
    if upsample:
        coord, nearest, antialias = "asymmetric", "floor", 0
        if _run_time_operand(ctx, n, True) is not None:
            return _lower_at_run_time(ctx, n, X, 1, list(range(r)), "stretch", {
                "mode": MODES[mode], "coord_mode": COORDS[coord], "nearest_mode": NEAREST[nearest],
                "exclude_outside": 0, "cubic_coeff_a": -0.75, "extrapolation_value": 0.0}, coord, 0)
        sc = _opt_const(ctx, n, 1, "scales")
        if sc is None and "scales" in n.attrs:
            sc = np.asarray(n.attrs["scales"], np.float32)
        sizes, axes, policy = None, list(range(r)), "stretch"
    else:
        coord = n.attrs.get("coordinate_transformation_mode", "half_pixel")
        nearest = n.attrs.get("nearest_mode", "round_prefer_floor")
        antialias = int(n.attrs.get("antialias", 0))
        if antialias not in (0, 1):
            raise NodeError(f"antialias={antialias} must be 0 or 1")
        if antialias and MODES[mode] == K.EP_RESIZE_NEAREST:
            raise NodeError(f"antialias=1 with mode '{mode}' is undefined (only linear and cubic filter)")
        axes = [norm_axis(a, r) for a in n.attrs.get("axes", range(r))]
        policy = n.attrs.get("keep_aspect_ratio_policy", "stretch")
        run_time = _run_time_operand(ctx, n, False)
        if run_time is not None:
            if coord not in COORDS and coord != "tf_crop_and_resize":
                raise NodeError(f"coordinate_transformation_mode '{coord}' is unsupported")
            if nearest not in NEAREST:
                raise NodeError(f"nearest_mode '{nearest}' is unsupported")
            return _lower_at_run_time(ctx, n, X, run_time, axes, policy, {
                "mode": MODES[mode], "coord_mode": COORDS.get(coord, -1), "nearest_mode": NEAREST[nearest],
                "exclude_outside": int(n.attrs.get("exclude_outside", 0)),
                "cubic_coeff_a": float(n.attrs.get("cubic_coeff_a", -0.75)),
                "extrapolation_value": float(n.attrs.get("extrapolation_value", 0.0))}, coord, antialias)
        sc = _opt_const(ctx, n, 2, "scales")
        sizes = _opt_const(ctx, n, 3, "sizes")
    if coord not in COORDS and coord != "tf_crop_and_resize":
        raise NodeError(f"coordinate_transformation_mode '{coord}' is unsupported")
    if nearest not in NEAREST:
        raise NodeError(f"nearest_mode '{nearest}' is unsupported")
    scales = [1.0] * r
    out = list(X.shape)
    if sc is not None:
        if len(sc) != len(axes):
            raise NodeError(f"{len(sc)} scales for {len(axes)} axes")
        for a, s in zip(axes, sc.astype(np.float32)):
            if not (s > 0 and math.isfinite(s)):
                raise NodeError(f"scale {float(s)} must be a finite number > 0")
            scales[a] = float(s)
            # the float32 scale times the extent in double, as the ONNX reference and shape inference floor it
            out[a] = int(math.floor(float(s) * X.shape[a]))
    elif sizes is not None:
        if len(sizes) != len(axes):
            raise NodeError(f"{len(sizes)} sizes for {len(axes)} axes")
        ratios = [float(np.float32(sz) / np.float32(X.shape[a])) for a, sz in zip(axes, sizes.astype(np.int64))]
        if policy == "stretch":
            for a, sz, s in zip(axes, sizes, ratios):
                scales[a], out[a] = s, int(sz)
        elif policy in ("not_larger", "not_smaller"):
            s = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                scales[a] = s
                out[a] = int(math.floor(s * X.shape[a] + 0.5))
        else:
            raise NodeError(f"keep_aspect_ratio_policy '{policy}' is unsupported")
    else:
        raise NodeError("neither scales nor sizes is given")
    if any(o <= 0 for o in out) or any(not s > 0 for s in scales):
        raise NodeError(f"output shape {out} is empty")
    roi_start, roi_end = [0.0] * 8, [1.0] * 8
    if coord == "tf_crop_and_resize":
        roi = _opt_const(ctx, n, 1, "roi")
        if roi is None:
            raise NodeError("coordinate_transformation_mode 'tf_crop_and_resize' needs a roi")
        if len(roi) != 2 * len(axes):
            raise NodeError(f"roi has {len(roi)} values for {len(axes)} axes (a start and an end each)")
        roi = roi.astype(np.float32)
        if not np.isfinite(roi).all():
            raise NodeError("roi values must be finite")
        for i, a in enumerate(axes):
            roi_start[a], roi_end[a] = float(roi[i]), float(roi[len(axes) + i])
    # the filter widens only where an axis shrinks; elsewhere antialias is the plain filter
    antialias = int(antialias and any(s < 1.0 or o < i for s, o, i in zip(scales, out, X.shape)))
    params = {
        "mode": MODES[mode], "coord_mode": COORDS.get(coord, K.EP_COORD_TF_CROP_AND_RESIZE),
        "nearest_mode": NEAREST[nearest],
        "exclude_outside": int(n.attrs.get("exclude_outside", 0)),
        "cubic_coeff_a": float(n.attrs.get("cubic_coeff_a", -0.75)),
        "extrapolation_value": float(n.attrs.get("extrapolation_value", 0.0)),
        "scales": [float(s) for s in scales] + [1.0] * (8 - r)}
    y = ctx.output(n, 0, out, np.float32)
    if coord != "tf_crop_and_resize" and not antialias:
        ctx.emit("resize", [X], [y], params)
        return
    # RESIZE_EXT (plan 1.3): the crop window and the antialias filter; scratch holds one (index, weight)
    # pair per input position of each axis when antialias is on
    if antialias:
        if any(sc * i < 0.125 for sc, i in zip(scales, X.shape)):
            raise NodeError(f"scales {scales[:r]} shrink an axis below 1/8 of an element")
    op = ctx.emit("resize_ext", [X], [y], {**params, "roi_start": roi_start, "roi_end": roi_end,
                                            "antialias": antialias})
    op.scratch = 16 * sum(int(d) for d in X.shape) if antialias else 0


def _run_time_operand(ctx, n, upsample: bool):
    """The input index (1 Upsample's scales, 2 scales, 3 sizes) computed at run time, or None."""
    for i in ((1,) if upsample else (2, 3)):
        if n.input(i) and not ctx.known(n.input(i)):
            return i
    return None


def _lower_at_run_time(ctx, n, X, i: int, axes: list, policy: str, params: dict, coord: str, antialias: int):
    """Resize whose scales (input i 1 or 2) or sizes (3) are computed at run time: one RESIZE_DYN, whose
    kernel computes the output extents as ONNX does and fails the run past their declared bounds. Entries
    the graph fixes (constant pieces of the Concat that builds them) give static extents; the others are
    data-dependent lengths, bounded by dims= (no natural maximum)."""
    from .datadep import _shape_entries
    if coord == "tf_crop_and_resize":
        raise NodeError("coordinate_transformation_mode 'tf_crop_and_resize' with run-time scales or sizes is "
                        "unsupported")
    if antialias:
        raise NodeError("antialias=1 with run-time scales or sizes is unsupported")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise NodeError(f"keep_aspect_ratio_policy '{policy}' is unsupported")
    if len(axes) != len(set(axes)) or len(axes) > 8:
        raise NodeError(f"axes {axes} repeat or exceed 8")
    sizes = i == 3
    S = ctx.input(n, i, "sizes" if sizes else "scales")
    want = np.int64 if sizes else np.float32
    if S.dtype != want or S.shape != (len(axes),):
        raise NodeError(f"its run-time {'sizes' if sizes else 'scales'} '{S.name}' are {S.dtype.name}"
                        f"{list(S.shape)}; {np.dtype(want).name}[{len(axes)}] expected")
    known = _shape_entries(ctx, n.input(i), len(axes), cast=float)
    out = list(X.shape)
    dyn = {}
    for k, a in enumerate(axes):
        v = known[k] if policy == "stretch" or sizes is False else None
        if v is not None and v > 0 and math.isfinite(v):
            out[a] = int(v) if sizes else int(math.floor(float(np.float32(v)) * X.shape[a]))
            continue
        dyn[a] = ctx.data_dim(n, 0, a, by_output=not dyn)
        out[a] = dyn[a][0]
    y = ctx.output(n, 0, out, np.float32)
    for a in dyn:
        ctx.data_dims.append((y, a, dyn[a][1], dyn[a][2]))
    ctx.emit("resize_dyn", [X, S], [y], {
        **params, "axes": axes + [-1] * (8 - len(axes)),
        "from": K.EP_RESIZE_FROM_SIZES if sizes else K.EP_RESIZE_FROM_SCALES,
        "policy": {"stretch": K.EP_RESIZE_STRETCH, "not_larger": K.EP_RESIZE_NOT_LARGER,
                   "not_smaller": K.EP_RESIZE_NOT_SMALLER}[policy] if sizes else K.EP_RESIZE_STRETCH})


LOWER = {("", "Resize"): lower_resize, ("", "Upsample"): lower_resize}


# ---- kernel variant (passes/select.py runs it; layout in plan_format.h EP_RESIZE_VARIANT_TABLE) ----

def select_resize(graph, op, tg, upgrades: list) -> None:
    """TABLE for nearest and linear resizes of the last two dims (the leading ones kept), without
    exclude_outside: taps tabulated per output row and column, then copies (nearest) or separable
    float blends (linear); scratch for the tables and min(planes, threads) slots of two rows."""
    p = op.params
    x, y = op.inputs[0], op.outputs[0]
    r = len(x.shape)
    if (r < 2 or p["exclude_outside"] or p["mode"] not in (K.EP_RESIZE_NEAREST, K.EP_RESIZE_LINEAR)
            or 0 in y.shape or 0 in x.shape):
        return
    if any(p["scales"][i] != 1.0 or x.shape[i] != y.shape[i] for i in range(r - 2)):
        return
    op.variant = K.EP_RESIZE_VARIANT_TABLE
    op.scratch = table_scratch(op, int(np.prod(y.shape[:-2], dtype=np.int64)), tg.threads)


def table_scratch(op, planes: int, threads: int, pixel: int = 1) -> int:
    """Scratch of RESIZE TABLE (pixel 1) or C8 (pixel 8, planes = channel blocks): the taps of every output row
    and column, 16 bytes each, then for linear min(planes, threads) slots of two rows of pixel-float pixels."""
    oh, ow = int(op.outputs[0].shape[-2]), int(op.outputs[0].shape[-1])
    slots = min(planes, threads) if op.params["mode"] == K.EP_RESIZE_LINEAR else 0
    return 16 * (oh + ow) + slots * 8 * ow * pixel


SELECT = {"resize": select_resize}

"""Conv and ConvTranspose (2-D; 1-D through H=1 views) → conv2d / conv_transpose2d with fused epilogue."""
from __future__ import annotations

import numpy as np

from ..lowering import NodeError
from ._util import check_kernel_shape, check_range, check_window, epilogue_params, ints, window


def _rank_check(n, X, W):
    r = len(X.shape)
    if r not in (3, 4):
        sp = r - 2
        raise NodeError(f"{sp}-D {n.op_type} is unsupported (only 1-D and 2-D)")
    if W.ndim != r:
        raise NodeError(f"weights of rank {W.ndim} for an input of rank {r}")
    return r


def _to2d(vals, fill):
    """1-D spatial attribute lists as 2-D (H=1 first)."""
    return [fill] + list(vals)


def lower_conv(ctx, n):
    X = ctx.input(n, 0)
    W = ctx.const_input(n, 1, "weights")
    ctx.need_f32(X)
    if W.dtype != np.float32:
        raise NodeError(f"weights have dtype {W.dtype.name}; only float32 is supported")
    r = _rank_check(n, X, W)
    N, C = X.shape[:2]
    g = int(n.attrs.get("group", 1))
    M, Cg = W.shape[:2]
    kernel = list(W.shape[2:])
    if g < 1 or C != Cg * g or M % g:
        raise NodeError(f"group={g} does not fit input channels {C} and weights {tuple(W.shape)}")
    check_kernel_shape(n, kernel)
    nsp = r - 2
    strides = ints(n, "strides", [1] * nsp)
    dil = ints(n, "dilations", [1] * nsp)
    begin, end, outs = window(n, X.shape[2:], kernel, strides, dil)
    if any(o <= 0 for o in outs):
        raise NodeError(f"output spatial dims {outs} are empty")
    B = ctx.input(n, 2, optional=True)
    R = ctx.input(n, 3, optional=True)
    ctx.need_f32(B, R)
    if B is not None and B.shape != (M,):
        B = ctx.view(B, (M,)) if int(np.prod(B.shape)) == M else None
        if B is None:
            raise NodeError("bias must have one value per output channel")
    yshape = (N, M, *outs)
    if nsp == 1:
        x4 = ctx.view(X, (N, C, 1, X.shape[2]))
        w4 = ctx.const(n.inputs[1] + "/2d", W.reshape(M, Cg, 1, kernel[0]))
        kernel, strides, dil = _to2d(kernel, 1), _to2d(strides, 1), _to2d(dil, 1)
        begin, end = _to2d(begin, 0), _to2d(end, 0)
        y4shape = (N, M, 1, outs[0])
        r4 = ctx.view(R, y4shape) if R is not None else None
        y4 = ctx.tmp(n.outputs[0] + "/2d", y4shape)
        ctx.view_output(n, 0, y4, yshape)
    else:
        x4, w4, r4 = X, ctx.tensor(n.inputs[1]), R
        y4 = ctx.output(n, 0, yshape, np.float32)
    params = {"kernel": kernel, "stride": strides, "dilation": dil,
              "pads": [begin[0], begin[1], end[0], end[1]], "groups": g}
    params.update(epilogue_params(n))
    ins = [x4, w4, B] + ([r4] if r4 is not None else [])
    ctx.emit("conv2d", ins, [y4], params)


def lower_conv_transpose(ctx, n):
    X = ctx.input(n, 0)
    W = ctx.const_input(n, 1, "weights")
    ctx.need_f32(X)
    if W.dtype != np.float32:
        raise NodeError(f"weights have dtype {W.dtype.name}; only float32 is supported")
    r = _rank_check(n, X, W)
    N, C = X.shape[:2]
    g = int(n.attrs.get("group", 1))
    if g < 1 or W.shape[0] != C or C % g:
        raise NodeError(f"group={g} does not fit input channels {C} and weights {tuple(W.shape)}")
    M = W.shape[1] * g
    kernel = list(W.shape[2:])
    check_kernel_shape(n, kernel)
    nsp = r - 2
    in_sp = list(X.shape[2:])
    strides = ints(n, "strides", [1] * nsp)
    dil = ints(n, "dilations", [1] * nsp)
    opad = ints(n, "output_padding", [0] * nsp)
    check_window(kernel, strides, dil)
    check_range("output_padding", opad, nsp, 0)
    if any(op >= max(s, d) for op, s, d in zip(opad, strides, dil)):
        raise NodeError(f"output_padding {opad} must be smaller than the stride or the dilation "
                        f"(strides {strides}, dilations {dil})")
    k_eff = [(k - 1) * d + 1 for k, d in zip(kernel, dil)]
    auto = n.attrs.get("auto_pad", "NOTSET")
    out_shape = n.attrs.get("output_shape")
    if out_shape is not None:
        out_shape = [int(v) for v in out_shape][-nsp:]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        out_shape = [i * s for i, s in zip(in_sp, strides)]
    if out_shape is not None:
        begin, end = [], []
        for ax, (i, s, ke, op, o) in enumerate(zip(in_sp, strides, k_eff, opad, out_shape)):
            total = s * (i - 1) + op + ke - o
            if total < 0:
                # an output larger than the full transposed conv: the extra cells at the end only get
                # the bias, exactly what output_padding does (as the ONNX reference and onnxruntime)
                if op - total >= max(s, dil[ax]):
                    raise NodeError(f"output_shape {out_shape} is larger than output_padding can reach")
                opad[ax] = op - total
                total = 0
            if auto == "SAME_UPPER":
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
    elif auto in ("NOTSET", "VALID"):
        pads = [0] * (2 * nsp) if auto == "VALID" else ints(n, "pads", [0] * (2 * nsp))
        if len(pads) != 2 * nsp:
            raise NodeError(f"pads {pads} do not match {nsp} spatial dims")
        check_range("pads", pads, None, 0)
        begin, end = pads[:nsp], pads[nsp:]
    else:
        raise NodeError(f"auto_pad '{auto}' is unsupported")
    check_range("pads", begin + end, None, 0)
    outs = [s * (i - 1) + op + ke - b - e for i, s, ke, op, b, e in zip(in_sp, strides, k_eff, opad, begin, end)]
    if any(o <= 0 for o in outs):
        raise NodeError(f"output spatial dims {outs} are empty")
    B = ctx.input(n, 2, optional=True)
    ctx.need_f32(B)
    if B is not None and B.shape != (M,):
        if int(np.prod(B.shape)) != M:
            raise NodeError("bias must have one value per output channel")
        B = ctx.view(B, (M,))
    yshape = (N, M, *outs)
    if nsp == 1:
        x4 = ctx.view(X, (N, C, 1, in_sp[0]))
        w4 = ctx.const(n.inputs[1] + "/2d", W.reshape(C, W.shape[1], 1, kernel[0]))
        kernel, strides, dil, opad = _to2d(kernel, 1), _to2d(strides, 1), _to2d(dil, 1), _to2d(opad, 0)
        begin, end = _to2d(begin, 0), _to2d(end, 0)
        y4 = ctx.tmp(n.outputs[0] + "/2d", (N, M, 1, outs[0]))
        ctx.view_output(n, 0, y4, yshape)
    else:
        x4, w4 = X, ctx.tensor(n.inputs[1])
        y4 = ctx.output(n, 0, yshape, np.float32)
    params = {"kernel": kernel, "stride": strides, "dilation": dil,
              "pads": [begin[0], begin[1], end[0], end[1]], "output_padding": opad, "groups": g}
    params.update(epilogue_params(n))
    ctx.emit("conv_transpose2d", [x4, w4, B], [y4], params)


LOWER = {
    ("", "Conv"): lower_conv,
    ("", "ConvTranspose"): lower_conv_transpose,
}

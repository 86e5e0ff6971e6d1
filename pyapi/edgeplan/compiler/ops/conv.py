"""Conv and ConvTranspose (2-D; 1-D through H=1 views) → conv2d / conv_transpose2d with fused epilogue."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..graph import const_f32
from ..lowering import NodeError
from ..target import Upgrade
from ._util import check_kernel_shape, check_range, check_window, epilogue_params, ints, prod, window
from .linear import MR, NR, pack_gemm_b

F32 = np.dtype(np.float32)


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
    ctx.emit("conv2d", ins, [y4], params).exact = n.exact


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


# ---- kernel variants (passes/select.py runs these; layouts in plan_format.h EP_CONV*_VARIANT_*) ----
# weight layouts

def pack_conv_weights(w: np.ndarray, groups: int = 1) -> np.ndarray:
    """W[M, C/G, KH, KW] -> [G*ceil(Mg/MR), C/G*KH*KW, MR]: each group's Mg = M/G rows as panels, the groups one
    after another, zero rows past Mg."""
    m = w.shape[0] // groups
    k = int(np.prod(w.shape[1:]))
    panels = -(-m // MR)
    a = np.zeros((groups, panels * MR, k), F32)
    a[:, :m] = w.reshape(groups, m, k)
    return np.ascontiguousarray(a.reshape(groups * panels, MR, k).transpose(0, 2, 1))


# Winograd F(4x4, 3x3) (Lavin & Gray 2016; points 0, +-1, +-2, inf)
WINO_G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                   [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], np.float64)


def pack_winograd_weights(w: np.ndarray) -> np.ndarray:
    """W[M, C, 3, 3] -> U = G g G^T as [36][ceil(M/MR)][C][MR] (element xi*6+nu), zero rows past M."""
    m, c = w.shape[:2]
    u = np.einsum("ik,mckl,jl->ijmc", WINO_G, w.astype(np.float64), WINO_G).reshape(36, m, c)
    panels = -(-m // MR)
    p = np.zeros((36, panels * MR, c), np.float64)
    p[:, :m] = u
    return np.ascontiguousarray(p.reshape(36, panels, MR, c).transpose(0, 1, 3, 2)).astype(F32)


W1_POINTS = (0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5)   # and inf: WINOGRAD_1D's points (plan_format.h)


def winograd1d_g(r: int) -> np.ndarray:
    """G [8, r] of Winograd F(9 - r, r) on W1_POINTS and inf (Toom-Cook, in float64): row j = p_j^k /
    prod_{l != j} (p_j - p_l), the last row g[r - 1]; kernels/winograd_common.h holds B^T and A^T."""
    g = np.zeros((8, r))
    for j, pj in enumerate(W1_POINTS):
        f = np.prod([pj - pl for l, pl in enumerate(W1_POINTS) if l != j])
        g[j] = [pj ** k / f for k in range(r)]
    g[7, r - 1] = 1.0
    return g


def pack_winograd1d_weights(w: np.ndarray) -> np.ndarray:
    """W[M, C, 1, r] -> U = G g as [8][ceil(M/MR)][C][MR], zero rows past M."""
    m, c, _, r = w.shape
    u = np.einsum("xk,mck->xmc", winograd1d_g(r), w[:, :, 0, :].astype(np.float64))
    panels = -(-m // MR)
    p = np.zeros((8, panels * MR, c), np.float64)
    p[:, :m] = u
    return np.ascontiguousarray(p.reshape(8, panels, MR, c).transpose(0, 1, 3, 2)).astype(F32)


def winograd1d_scratch(c: int, m: int, tiles: int, pack_bytes: int) -> int:
    per_tile = 8 * (c + -(-m // MR) * MR) * 4
    t = max(NR, min(-(-tiles // NR) * NR, pack_bytes * 4 // (per_tile * NR) * NR))
    return per_tile * t


def winograd1d_ok(p: dict, c: int, m: int, h: int, ow: int, tg) -> bool:
    """F(9 - r, r) along W: groups 1, a 1 x r kernel (3 <= r <= 7), stride 1, no dilation or pads along H, the
    plain epilogues (not the blocked variants' PReLU), enough channels and outputs."""
    kh, kw = (int(v) for v in p["kernel"])
    return (tg.winograd and kh == 1 and 3 <= kw <= 7 and tuple(p["stride"]) == (1, 1) and int(p["dilation"][0]) == 1
            and not p["pads"][0] and not p["pads"][2] and int(p.get("groups", 1)) == 1
            and int(p.get("act", 0)) != K.EP_CONV_ACT_PRELU
            and min(c, m) >= tg.winograd1d_min_channels and h * ow >= tg.winograd1d_min_outputs)


def ct_taps(k: int, s: int, d: int) -> int:
    """Distinct tap shifts of ConvTranspose PACKED along an axis (plan_format.h): shift j is j*d//s
    when d >= s (then every tap has its own), else j."""
    return k if d >= s else (k - 1) * d // s + 1


def pack_conv_transpose_weights(w: np.ndarray, stride, dilation) -> np.ndarray:
    """W[C, M, KH, KW] (groups 1) -> the polyphase matrix Wp[(c, jh, jw), (m, fh, fw)] as GEMM-B strips
    [ceil(M*sh*sw/NR), C*TH*TW, NR]: tap kh lands in phase fh = kh*dh % sh with shift index jh (its shift is
    kh*dh // sh); zero where a phase has no tap (plan_format.h EP_CONV_TRANSPOSE2D_VARIANT_PACKED)."""
    c, m, kh_n, kw_n = w.shape
    (sh, sw), (dh, dw) = (int(v) for v in stride), (int(v) for v in dilation)
    th, tw = ct_taps(kh_n, sh, dh), ct_taps(kw_n, sw, dw)
    wp = np.zeros((c, th, tw, m, sh, sw), F32)
    for kh in range(kh_n):
        jh = kh if dh >= sh else kh * dh // sh
        for kw in range(kw_n):
            jw = kw if dw >= sw else kw * dw // sw
            wp[:, jh, jw, :, kh * dh % sh, kw * dw % sw] = w[:, :, kh, kw]
    return pack_gemm_b(wp.reshape(c * th * tw, m * sh * sw))


# scratch (mirrors the C shape functions, runtime_c/src/ops/conv2d.c; the C side demands the minimum)

def conv_packed_scratch(k: int, pixels: int, pack_bytes: int) -> int:
    strip = k * NR * 4
    strips = -(-pixels // NR)
    return strip * max(1, min(strips, pack_bytes // strip))


def conv_transpose_scratch(k: int, pixels: int, pack_bytes: int) -> int:
    """Input panels of MR phase-grid pixels, K*MR floats each: as many as pack_bytes holds (>= 1)."""
    slot = k * MR * 4
    if slot == 0:
        return 0
    panels = -(-pixels // MR)
    return slot * max(1, min(panels, pack_bytes // slot))


def conv_dw_scratch(p: dict, oh: int, ow: int, slots: int = 1) -> int:
    """One padded input plane per slot: the depthwise kernels run min(threads, slots) threads
    (runtime_c/kernels/dw_common.h); the C shape function demands one."""
    sh, sw = p["stride"]
    dh, dw = p["dilation"]
    kh, kw = p["kernel"]
    hp = (oh - 1) * sh + (kh - 1) * dh + 1
    pw = -(-ow // 16) * 16 + (kw - 1) * dw // sw
    return hp * sw * pw * 4 * max(1, slots)


def conv_dwc8_scratch(p: dict, oh: int, ow: int, slots: int = 1) -> int:
    """DW_C8: per slot, 8 channels' padded input region [Hp][Wp][8] and their taps [KH*KW][8]."""
    (sh, sw), (dh, dw), (kh, kw) = p["stride"], p["dilation"], p["kernel"]
    hp = (oh - 1) * sh + (kh - 1) * dh + 1
    wp = (ow - 1) * sw + (kw - 1) * dw + 1
    return (hp * wp + kh * kw) * 8 * 4 * max(1, slots)


DIRECT_ROWS = K.EP_CONV_DIRECT_ROWS


def conv_direct_scratch(p: dict, c: int, oh: int, ow: int, slots: int = 1) -> int:
    """DIRECT: per slot, the C padded, phase-split input rows of a band of DIRECT_ROWS output rows."""
    (sh, sw), (dh, dw), (kh, kw) = p["stride"], p["dilation"], p["kernel"]
    hb = (min(oh, DIRECT_ROWS) - 1) * sh + (kh - 1) * dh + 1
    pw = -(-ow // 16) * 16 + (kw - 1) * dw // sw
    return c * hb * sw * pw * 4 * max(1, slots)


def conv_pointwise_scratch(k: int, m: int, pixels: int, pack_bytes: int) -> int:
    """POINTWISE: a chunk of MR-multiple pixels, their A panels (K = C*KH*KW floats each: im2col rows) and C^T
    rows (M floats each), as many as pack_bytes holds (>= MR), at most the map's."""
    per = (k + m) * 4
    rows = max(MR, min(-(-pixels // MR) * MR, pack_bytes // per // MR * MR))
    return rows * per


def winograd_scratch(c: int, m: int, tiles: int, pack_bytes: int) -> int:
    per_tile = 36 * (c + -(-m // MR) * MR) * 4
    t = max(NR, min(-(-tiles // NR) * NR, pack_bytes * 4 // (per_tile * NR) * NR))
    return per_tile * t


def winograd_ok(p: dict, c: int, m: int, oh: int, ow: int, tg) -> bool:
    return (tg.winograd and tuple(p["kernel"]) == (3, 3) and tuple(p["stride"]) == (1, 1)
            and tuple(p["dilation"]) == (1, 1) and int(p.get("groups", 1)) == 1
            and min(c, m) >= tg.winograd_min_channels and oh * ow >= tg.winograd_min_pixels)


def select_pointwise(graph, op, wd: np.ndarray, tg) -> None:
    """POINTWISE (groups 1): W^T [C*KH*KW][M] as GEMM-B strips, a chunk of pixels' im2col rows in scratch."""
    m, k = wd.shape[0], int(np.prod(wd.shape[1:]))
    y = op.outputs[0].shape
    op.variant = K.EP_CONV2D_VARIANT_POINTWISE
    graph.replace_const(op, 1, lambda: pack_gemm_b(np.ascontiguousarray(wd.reshape(m, k).T)), "pointwise")
    op.scratch = conv_pointwise_scratch(k, m, y[2] * y[3], tg.pack_bytes)


def select_conv2d(graph, op, tg, upgrades: list) -> None:
    """Depthwise (groups == C == M: DW_C8 on narrow maps, else DEPTHWISE), DIRECT (groups 1, few input
    channels), POINTWISE (groups 1 on small maps: the pixels as the GEMM's rows) or packed (any other
    groups) variant; where Winograd applies (groups 1), it is offered as an Upgrade (its
    filters take more bytes) with POINTWISE or PACKED as the fallback."""
    p = op.params
    x, w = op.inputs[0], op.inputs[1]
    y = op.outputs[0]
    wd = const_f32(w)
    if wd is None or len(x.shape) != 4 or len(y.shape) != 4 or 0 in y.shape or 0 in x.shape:
        return
    n, c = x.shape[:2]
    m, oh, ow = y.shape[1:]
    g = int(p.get("groups", 1))
    kh, kw = p["kernel"]
    if g == c == m and c > 1 and ow < tg.dw_c8_width:
        op.variant = K.EP_CONV2D_VARIANT_DW_C8
        op.scratch = conv_dwc8_scratch(p, oh, ow, min(-(-c // 8) * n, tg.threads))
    elif g == c == m and c > 1:
        op.variant = K.EP_CONV2D_VARIANT_DEPTHWISE
        op.scratch = conv_dw_scratch(p, oh, ow, min(c * n, tg.threads))
    elif (g == 1 and c <= tg.direct_channels and kw <= 32 and (kh, kw) != (1, 1)
          and m <= (tg.direct_outputs if max(p["stride"]) > 1 else tg.direct_outputs_s1)
          and conv_direct_scratch(p, c, oh, ow) <= tg.pack_bytes):
        op.variant = K.EP_CONV2D_VARIANT_DIRECT
        op.scratch = conv_direct_scratch(p, c, oh, ow, min(-(-oh // DIRECT_ROWS) * n, tg.threads))
    elif (g == 1 and (kh, kw) == (1, 1) and tuple(p["stride"]) == (1, 1) and not any(p["pads"])
          and oh * ow <= tg.pointwise_pixels):
        select_pointwise(graph, op, wd, tg)
    else:
        def packed():
            op.variant = K.EP_CONV2D_VARIANT_PACKED
            graph.replace_const(op, 1, lambda: pack_conv_weights(wd, g), "packed", g)
            op.scratch = conv_packed_scratch(c // g * kh * kw, oh * ow, tg.pack_bytes)

        def pixel_rows():   # few pixels (a 1-D conv over a short window)
            select_pointwise(graph, op, wd, tg)

        plain = pixel_rows if g == 1 and oh * ow <= tg.pointwise_kxk_pixels else packed

        if winograd1d_ok(p, c, m, oh, ow, tg) and not op.exact:
            r = kw
            mt, dw = 9 - r, int(p["dilation"][1])
            tiles = oh * -(-ow // (mt * dw)) * dw
            extra = 4 * c * (8 * -(-m // MR) * MR - r * m)   # > 0: 8 points against r <= 7 taps
            saved = m * c * (r * oh * ow - 8 * tiles)       # multiplies saved
            if saved > 0:
                def winograd1d():
                    op.variant = K.EP_CONV2D_VARIANT_WINOGRAD_1D
                    graph.replace_const(op, 1, lambda: pack_winograd1d_weights(wd), "wino1d")
                    op.scratch = winograd1d_scratch(c, m, tiles, tg.pack_bytes)
                upgrades.append(Upgrade(saved / extra, extra, winograd1d, plain))
                return
        if winograd_ok(p, c, m, oh, ow, tg) and not op.exact:
            tiles = -(-oh // 4) * -(-ow // 4)
            extra = 4 * c * (36 * -(-m // MR) * MR - 9 * m)
            saved = m * c * (9 * oh * ow - 36 * tiles)       # multiplies saved
            if saved > 0:
                def winograd():
                    op.variant = K.EP_CONV2D_VARIANT_WINOGRAD
                    graph.replace_const(op, 1, lambda: pack_winograd_weights(wd), "wino")
                    op.scratch = winograd_scratch(c, m, tiles, tg.pack_bytes)
                upgrades.append(Upgrade(saved / extra, extra, winograd, plain))
                return
        plain()


def select_conv_transpose2d(graph, op, tg, upgrades: list) -> None:
    """Polyphase packed variant for groups 1 while the phase weights grow at most ct_expand times."""
    p = op.params
    x, w = op.inputs[0], op.inputs[1]
    y = op.outputs[0]
    wd = const_f32(w)
    if (wd is None or wd.ndim != 4 or len(x.shape) != 4 or len(y.shape) != 4 or 0 in y.shape or 0 in x.shape
            or int(p.get("groups", 1)) != 1):
        return
    c, m, kh, kw = wd.shape
    (sh, sw), (dh, dw) = p["stride"], p["dilation"]
    th, tw = ct_taps(kh, sh, dh), ct_taps(kw, sw, dw)
    if sh * th * sw * tw > tg.ct_expand * kh * kw:
        return
    op.variant = K.EP_CONV_TRANSPOSE2D_VARIANT_PACKED
    graph.replace_const(op, 1, lambda: pack_conv_transpose_weights(wd, (sh, sw), (dh, dw)), "packed",
                        sh, sw, dh, dw)
    oh, ow = (int(v) for v in y.shape[2:])
    pt, pl = (int(v) for v in p["pads"][:2])
    pixels = ((pt + oh - 1) // sh - pt // sh + 1) * ((pl + ow - 1) // sw - pl // sw + 1)
    op.scratch = conv_transpose_scratch(c * th * tw, pixels, tg.pack_bytes)


# ---- cost (compiler/cost.py): 2 flops per multiply-add of the direct algorithm, whatever the variant ----

def flops_conv2d(op) -> int:
    y = op.outputs[0]
    c = int(op.inputs[0].shape[1])
    g = int(op.params.get("groups", 1)) or 1
    kh, kw = (int(v) for v in op.params["kernel"])
    return 2 * prod(y.shape) * (c // g) * kh * kw


def flops_conv_transpose2d(op) -> int:
    x, y = op.inputs[0], op.outputs[0]
    g = int(op.params.get("groups", 1)) or 1
    kh, kw = (int(v) for v in op.params["kernel"])
    return 2 * prod(x.shape) * (int(y.shape[1]) // g) * kh * kw


def flops_invres(op) -> int:
    """The fused inverted-residual block (passes/blocks.py): its three convolutions' flops."""
    x, wd, y = op.inputs[0], op.inputs[3], op.outputs[0]
    n, c, h, w = (int(v) for v in x.shape)
    ce, m = int(wd.shape[0]), int(y.shape[1])
    kh, kw = (int(v) for v in op.params["kernel"])
    pix = prod(y.shape[2:])
    return 2 * n * ((ce * c * h * w if op.inputs[1] is not None else 0) + pix * ce * (kh * kw + m))


SELECT = {"conv2d": select_conv2d, "conv_transpose2d": select_conv_transpose2d}
FLOPS = {"conv2d": flops_conv2d, "conv_transpose2d": flops_conv_transpose2d, "invres": flops_invres}

"""Kernel selection: per op of the lowered graph, pick the kernel variant for the target board, pre-pack
its constant weights into the layout that variant reads, and size its scratch.

Runs after lowering, before memory planning (pipeline.compile_graph). The variants and their layouts are
defined once in runtime_c/include/edgeplan/plan_format.h (``EP_*_VARIANT_*``); the C shape functions
(runtime_c/src/ops/conv2d.c, gemm.c) check the packed shapes exactly and demand at least the scratch
computed here. Every variant has a portable reference kernel, so a plan using them needs no CPU feature:
ISA kernels (x86 AVX2+FMA here, NEON on the boards) replace them at open when the CPU has the features.

Targets:
  generic   variant 0 everywhere (the reference layouts, least scratch)
  x86-64    packed GEMM for Conv (groups 1) and Gemm, the depthwise kernel, Winograd F(4x4,3x3) for
            3x3 stride-1 convolutions with enough channels. Winograd filters take 4x the bytes of 3x3 ones
            (36 vs 9 per channel pair), so layers are taken by MACs saved per extra byte while the extra
            stays within winograd_budget x the model's constant bytes (0.5: plan at most 1.5x)
  x86-64-compact  the same without Winograd (plan size as generic, plus MR padding)
  aarch64   packed GEMM and depthwise (the NEON kernels), no Winograd
  host      the entry for this machine (x86-64, aarch64, else generic)
Every packed target also takes the polyphase packed ConvTranspose (groups 1) while its phase weights stay within
ct_expand x the plain ones (1 for the HiFi-GAN kernel = 2 x stride; x86-64-compact allows no growth).
LSTM / GRU stay variant 0 on every target; packed targets give them scratch for the hoisted input projection
of up to RNN_CHUNK timesteps (rnn_scratch, docs/kernels.md).
"""
from __future__ import annotations

import platform
from dataclasses import dataclass

import numpy as np

from ..._cdef import K
from ..graph import Graph, Op, Tensor

MR = K.EP_PACK_MR
NR = K.EP_PACK_NR
F32 = np.dtype(np.float32)


@dataclass(frozen=True)
class Target:
    name: str
    packed: bool = False          # packed GEMM / depthwise variants
    winograd: bool = False        # Winograd F(4x4, 3x3) for 3x3 stride-1 convolutions
    pack_bytes: int = 0           # scratch budget of one im2col pass (about half the L2)
    winograd_min_channels: int = 16
    winograd_budget: float = 0.0  # extra constant bytes Winograd may add, as a fraction of the model's
    threads: int = 4              # depthwise scratch holds this many padded planes: one per thread
    ct_expand: float = 4.0        # ConvTranspose PACKED while sh*TH*sw*TW <= ct_expand * KH*KW (weight growth)


TARGETS = {
    "generic": Target("generic"),
    "x86-64": Target("x86-64", packed=True, winograd=True, pack_bytes=256 * 1024, winograd_budget=0.5),
    "x86-64-compact": Target("x86-64-compact", packed=True, pack_bytes=256 * 1024, ct_expand=1.0),
    # NEON boards (kernels/neon/ overrides PACKED and DEPTHWISE; Winograd is not ported there yet)
    "aarch64": Target("aarch64", packed=True, pack_bytes=128 * 1024),
}


def host_target() -> str:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return "x86-64"
    return "aarch64" if machine in ("aarch64", "arm64") else "generic"


def get_target(target) -> Target:
    if isinstance(target, Target):
        return target
    name = host_target() if target in (None, "host") else target
    if name not in TARGETS:
        raise ValueError(f"unknown target {target!r} (known: host, {', '.join(TARGETS)})")
    return TARGETS[name]


# ---- weight layouts (plan_format.h) ----

def pack_conv_weights(w: np.ndarray) -> np.ndarray:
    """W[M, C, KH, KW] -> [ceil(M/MR), C*KH*KW, MR], zero rows past M."""
    m = w.shape[0]
    k = int(np.prod(w.shape[1:]))
    panels = -(-m // MR)
    a = np.zeros((panels * MR, k), F32)
    a[:m] = w.reshape(m, k)
    return np.ascontiguousarray(a.reshape(panels, MR, k).transpose(0, 2, 1))


def pack_gemm_b(b: np.ndarray) -> np.ndarray:
    """B[K, N] -> [ceil(N/NR), K, NR], zero columns past N."""
    k, n = b.shape
    strips = -(-n // NR)
    p = np.zeros((k, strips * NR), F32)
    p[:, :n] = b
    return np.ascontiguousarray(p.reshape(k, strips, NR).transpose(1, 0, 2))


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


# ---- scratch (mirrors the C shape functions; the C side demands the minimum) ----

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


def winograd_scratch(c: int, m: int, tiles: int, pack_bytes: int) -> int:
    per_tile = 36 * (c + -(-m // MR) * MR) * 4
    t = max(NR, min(-(-tiles // NR) * NR, pack_bytes * 4 // (per_tile * NR) * NR))
    return per_tile * t


# ---- selection ----

def _const(t: Tensor | None):
    if t is None:
        return None
    s = t.storage()
    if s.data is None or np.dtype(s.dtype) != F32:
        return None
    return np.asarray(s.data).reshape(t.shape)


def _replace(graph: Graph, op: Op, index: int, data: np.ndarray, suffix: str) -> None:
    old = op.inputs[index]
    new = Tensor(f"{old.name}:{suffix}", F32, tuple(int(d) for d in data.shape), data=data)
    op.inputs[index] = new
    graph.tensors.append(new)
    still_used = any(t is old for o in graph.ops for t in o.inputs) or any(
        t.view_of is old for t in graph.tensors) or old.is_input or old.is_output
    if not still_used:
        graph.tensors.remove(old)


def winograd_ok(p: dict, c: int, m: int, oh: int, ow: int, tg: Target) -> bool:
    return (tg.winograd and tuple(p["kernel"]) == (3, 3) and tuple(p["stride"]) == (1, 1)
            and tuple(p["dilation"]) == (1, 1) and int(p.get("groups", 1)) == 1
            and min(c, m) >= tg.winograd_min_channels and oh * ow >= 64)


def _select_conv(graph: Graph, op: Op, tg: Target, wino: list | None = None) -> None:
    """Packed or depthwise variant; a Winograd candidate is appended to `wino` instead (decided later)."""
    p = op.params
    x, w = op.inputs[0], op.inputs[1]
    y = op.outputs[0]
    wd = _const(w)
    if wd is None or len(x.shape) != 4 or len(y.shape) != 4 or 0 in y.shape or 0 in x.shape:
        return
    n, c = x.shape[:2]
    m, oh, ow = y.shape[1:]
    g = int(p.get("groups", 1))
    kh, kw = p["kernel"]
    if g == 1:
        if wino is not None and winograd_ok(p, c, m, oh, ow, tg):
            tiles = -(-oh // 4) * -(-ow // 4)
            extra = 4 * c * (36 * -(-m // MR) * MR - 9 * m)
            saved = m * c * (9 * oh * ow - 36 * tiles)       # multiplies saved
            if saved > 0:
                wino.append((saved / extra, extra, op, wd, winograd_scratch(c, m, tiles, tg.pack_bytes)))
                return
        k = c * kh * kw
        op.variant = K.EP_CONV2D_VARIANT_PACKED
        _replace(graph, op, 1, pack_conv_weights(wd), "packed")
        op.scratch = conv_packed_scratch(k, oh * ow, tg.pack_bytes)
    elif g == c == m and c > 1:
        op.variant = K.EP_CONV2D_VARIANT_DEPTHWISE
        op.scratch = conv_dw_scratch(p, oh, ow, min(c * n, tg.threads))


def _select_conv_transpose(graph: Graph, op: Op, tg: Target) -> None:
    """Polyphase packed variant for groups 1 while the phase weights grow at most ct_expand times."""
    p = op.params
    x, w = op.inputs[0], op.inputs[1]
    y = op.outputs[0]
    wd = _const(w)
    if (wd is None or wd.ndim != 4 or len(x.shape) != 4 or len(y.shape) != 4 or 0 in y.shape or 0 in x.shape
            or int(p.get("groups", 1)) != 1):
        return
    c, m, kh, kw = wd.shape
    (sh, sw), (dh, dw) = p["stride"], p["dilation"]
    th, tw = ct_taps(kh, sh, dh), ct_taps(kw, sw, dw)
    if sh * th * sw * tw > tg.ct_expand * kh * kw:
        return
    op.variant = K.EP_CONV_TRANSPOSE2D_VARIANT_PACKED
    _replace(graph, op, 1, pack_conv_transpose_weights(wd, (sh, sw), (dh, dw)), "packed")
    oh, ow = (int(v) for v in y.shape[2:])
    pt, pl = (int(v) for v in p["pads"][:2])
    pixels = ((pt + oh - 1) // sh - pt // sh + 1) * ((pl + ow - 1) // sw - pl // sw + 1)
    op.scratch = conv_transpose_scratch(c * th * tw, pixels, tg.pack_bytes)


def _select_gemm(graph: Graph, op: Op, tg: Target) -> None:
    b = _const(op.inputs[1])
    if b is None or b.ndim != 2 or 0 in b.shape or op.outputs[0].shape[0] == 0:
        return
    op.variant = K.EP_GEMM_VARIANT_PACKED
    _replace(graph, op, 1, pack_gemm_b(b), "packed")


RNN_CHUNK = 32   # LSTM / GRU: timesteps per hoisted input projection (the gain flattens from ~8)


def rnn_scratch(g: int, h: int, t: int, pack_bytes: int) -> int:
    """LSTM / GRU variant 0: the minimum (h, c and the gates, (2 + G) * H floats) plus room for the input
    projections of a chunk of timesteps, which the ISA kernels then compute for the whole chunk ahead of
    the steps (kernels/rnn_tmpl.h; the reference ignores the extra). At most RNN_CHUNK steps and about
    pack_bytes; nothing extra below two steps."""
    row = 4 * g * h
    steps = min(t, RNN_CHUNK, pack_bytes // row) if pack_bytes else 0
    return (2 + g) * h * 4 + (row * steps if steps >= 2 else 0)


def _select_rnn(op: Op, tg: Target) -> None:
    x = op.inputs[0]
    p = op.params
    t = int(x.shape[1] if p.get("layout", 0) else x.shape[0])
    op.scratch = rnn_scratch(4 if op.kind == "lstm" else 3, int(p["hidden_size"]), t, tg.pack_bytes)


def select_kernels(graph: Graph, target=None) -> Graph:
    """Chooses each op's variant for `target` (name or Target; None = host), packs weights, sets scratch."""
    tg = get_target(target)
    if not tg.packed:
        return graph
    const_bytes = sum(t.nbytes for t in graph.tensors if t.data is not None)
    wino: list = []
    for op in graph.ops:
        if op.variant != K.EP_VARIANT_DEFAULT:
            continue   # already selected (compile_graph may see a graph twice)
        if op.kind == "conv2d":
            _select_conv(graph, op, tg, wino)
        elif op.kind == "gemm":
            _select_gemm(graph, op, tg)
        elif op.kind == "conv_transpose2d":
            _select_conv_transpose(graph, op, tg)
        elif op.kind in ("lstm", "gru"):
            _select_rnn(op, tg)
    # Winograd where it saves the most multiplies per extra constant byte, within the budget
    budget = tg.winograd_budget * const_bytes
    for _, extra, op, wd, scratch in sorted(wino, key=lambda w: -w[0]):
        if extra <= budget:
            budget -= extra
            op.variant = K.EP_CONV2D_VARIANT_WINOGRAD
            _replace(graph, op, 1, pack_winograd_weights(wd), "wino")
            op.scratch = scratch
        else:
            _select_conv(graph, op, tg)
    graph.meta["target"] = tg.name
    return graph

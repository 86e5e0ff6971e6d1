"""Lowered int8 plan ops -> an EPN-1 blob for the virtual NPU (docs/npu.md "The EPN-1 blob").

``supported(op)`` says whether the vNPU runs a plan-level op (None) or why not; ``encode(ops, inputs, outputs,
cfg)`` turns a run of supported ops into (blob bytes, working-memory bytes). The record layouts, command words
and limits come from runtime_c/include/edgeplan/vnpu.h through cffi (``K.EP_VNPU_*``, ``ep_vnpu_header``,
``ep_vnpu_io``), and ``edgeplan.vnpu.estimate(blob, cfg)`` runs the C cycle model on the result, so the host
and the device share one definition of both.

Placement: the partition's inputs and outputs are regions 3.. (zero-copy, in the order given; a view shares
its owner's bytes and region); every other tensor the ops touch is an intermediate, placed by liveness
(first fit, 16-byte aligned) in the modelled SRAM (region 2) while it fits the config's SRAM, else in working
memory (region 1). Feature maps are addressed in place by shape and byte strides: QCONV2D's NCHW planes
(stride_x 1, stride_y W, stride_c H W; one kick per image and per group), QGEMM's rows (one pixel per row,
channels contiguous), QADD / QLUT as a contiguous H x W x C factorisation of the element count.

The int8 max pool has no plan op of its own: lowering writes MaxPool on int8 codes as CAST (int8 -> f32),
MAXPOOL (f32), CAST (f32 -> int8). ``groups(graph)`` finds those chains for the partitioner, and ``encode``
turns each into one POOL kick (the max of the codes is the chain's result bit for bit: the codes are exact
in f32, and a max does not depend on the order of its operands); its f32 intermediates are never placed.
Average and global average pools of int8 models run in float between DEQUANTIZE and QUANTIZE, whose f32
sums depend on the kernel's order of additions; the vNPU does not claim them.
"""
from __future__ import annotations

import math

import numpy as np

from ..._cdef import NUMPY_TO_EP, K, ffi
from ..writer import crc32c

KINDS = ("qconv2d", "qgemm", "qadd", "qlut")
_MAXD = K.EP_VNPU_MAX_DIM


def _root(t):
    return t.storage()


def _const(t) -> np.ndarray | None:
    s = t.storage()
    return None if s.data is None else np.asarray(s.data).reshape(t.shape)


def _split(x: int) -> tuple:
    """(x / f, f): the smallest factors f of x moved out until x / f <= 65536 (or none is left)."""
    f, d = 1, 2
    while x > _MAXD and d <= x:
        if x % d == 0:
            x //= d
            f *= d
        else:
            d += 1
    return x, f


def _factor(n: int):
    """n = h * w * c with every factor <= 65536 (c the largest), or None."""
    c, w = _split(n)
    w, h = _split(w)
    return (h, w, c) if max(h, w, c) <= _MAXD else None


def _conv_geometry(op):
    p = op.params
    x, y = op.inputs[0], op.outputs[0]
    n, c, h, w = (int(v) for v in x.shape)
    m, oh, ow = int(y.shape[1]), int(y.shape[2]), int(y.shape[3])
    g = int(p.get("groups", 1))
    return n, c, h, w, m, oh, ow, g


def _pool_pads(op):
    """The max pool's (top, left, bottom, right) padding for the POOL kick: the plan's, with the bottom / right
    grown where ceil_mode adds an output row or column (taps past the IFM are skipped either way); None when a
    window would hold no tap inside the IFM or a pad is over the limit."""
    p = op.params
    x, y = op.inputs[0], op.outputs[0]
    pads = [int(v) for v in p["pads"]]
    for ax in (0, 1):
        n, out = int(x.shape[2 + ax]), int(y.shape[2 + ax])
        k, s, d = int(p["kernel"][ax]), int(p["stride"][ax]), int(p["dilation"][ax])
        dk, p0 = (k - 1) * d + 1, pads[ax]
        if (n + p0 + pads[2 + ax] - dk) // s + 1 != out:
            pads[2 + ax] = (out - 1) * s + dk - n - p0
        if n + p0 + pads[2 + ax] < dk or (n + p0 + pads[2 + ax] - dk) // s + 1 != out:
            return None
        for o in list(range(min(out, -(-p0 // s) + 1))) + [out - 1]:   # windows starting in the padding, the last
            if not any(0 <= o * s - p0 + t * d < n for t in range(k)):
                return None
    return pads if all(0 <= v <= K.EP_VNPU_MAX_PAD for v in pads) else None


def _maxpool_why(op) -> str | None:
    p = op.params
    x, y = op.inputs[0], op.outputs[0]
    if len(op.outputs) != 1 or op.variant != 0 or len(x.shape) != 4:
        return "max pool with indices, or not over [N, C, H, W]"
    if max(int(v) for v in p["kernel"]) > K.EP_VNPU_MAX_KERNEL or not all(
            1 <= int(v) <= K.EP_VNPU_MAX_STRIDE for v in p["stride"]) or not all(
            1 <= int(v) <= K.EP_VNPU_MAX_DILATION for v in p["dilation"]):
        return "pool window over the vNPU's kernel, stride or dilation limits"
    if max(int(v) for v in list(x.shape[1:]) + list(y.shape[1:])) > _MAXD:
        return "a dimension over 65536"
    return None if _pool_pads(op) is not None else "a pool window without a tap inside the input, or padding over 63"


def _is_pool_chain(ops, i, graph_outputs=()) -> bool:
    """ops[i:i+3] is CAST (int8 -> f32), MAXPOOL, CAST (f32 -> int8) over the same codes, the f32 tensors read by
    nothing else, and the pool within the vNPU's limits."""
    if i + 3 > len(ops):
        return False
    a, m, b = ops[i:i + 3]
    if a.kind != "cast" or m.kind != "maxpool" or b.kind != "cast":
        return False
    i8, f32 = np.dtype(np.int8), np.dtype(np.float32)
    if (np.dtype(a.inputs[0].dtype) != i8 or np.dtype(a.outputs[0].dtype) != f32 or np.dtype(b.outputs[0].dtype) != i8
            or m.inputs[0].storage() is not a.outputs[0].storage() or b.inputs[0].storage() is not m.outputs[0].storage()):
        return False
    if any(int(s) for t in (a.inputs[0], b.outputs[0]) for s in (getattr(t, "dim_sym", ()) or ())):
        return False
    return _maxpool_why(m) is None


def groups(graph) -> dict:
    """{i: i + 3} for every int8 max-pool chain of the graph's ops whose f32 intermediates nothing else reads."""
    ops = graph.ops
    out: dict = {}
    for i in range(len(ops) - 2):
        if not _is_pool_chain(ops, i):
            continue
        inner = {id(ops[i].outputs[0].storage()), id(ops[i + 1].outputs[0].storage())}
        readers = [o for k, o in enumerate(ops) if k not in (i + 1, i + 2)
                   for t in o.inputs if t is not None and id(t.storage()) in inner]
        if not readers and not any(id(t.storage()) in inner for t in graph.outputs):
            out[i] = i + 3
    return out


def kicks(ops) -> list:
    """The ops of a run grouped by the kick each becomes (a max-pool chain is one kick)."""
    out, i = [], 0
    while i < len(ops):
        n = 3 if _is_pool_chain(ops, i) else 1
        out.append(ops[i:i + n])
        i += n
    return out


def supported(op) -> str | None:
    """None when the vNPU runs this lowered op (compiler/graph.py Op), else the reason it does not. The CAST and
    MAXPOOL ops of an int8 max pool are refused one by one: ``groups`` finds them as a chain."""
    if op.kind in ("cast", "maxpool"):
        return f"{op.kind} runs on the vNPU only as the int8 max pool CAST -> MAXPOOL -> CAST (groups)"
    if op.kind not in KINDS:
        return f"{op.kind} has no vNPU command (qconv2d, qgemm, qadd, qlut; the int8 max-pool chain)"
    for t in list(op.inputs[:1]) + list(op.outputs):
        if t is None or np.dtype(t.dtype) != np.int8:
            return "operands are not int8"
        if any(int(s) for s in getattr(t, "dim_sym", ()) or ()):
            return "variable shapes (the vNPU runs static shapes only)"
    if op.kind == "qconv2d":
        p = op.params
        if len(op.inputs[0].shape) != 4 or any(_const(t) is None for t in op.inputs[1:4]):
            return "conv input not [N, C, H, W] or weights/bias/requant not constant"
        n, c, h, w, m, oh, ow, g = _conv_geometry(op)
        kh, kw = (int(v) for v in p["kernel"])
        if max(kh, kw) > K.EP_VNPU_MAX_KERNEL:
            return f"kernel {kh}x{kw} over {K.EP_VNPU_MAX_KERNEL}x{K.EP_VNPU_MAX_KERNEL}"
        if not all(1 <= int(s) <= K.EP_VNPU_MAX_STRIDE for s in p["stride"]):
            return f"stride {list(p['stride'])} outside 1..{K.EP_VNPU_MAX_STRIDE}"
        if not all(1 <= int(d) <= K.EP_VNPU_MAX_DILATION for d in p["dilation"]):
            return f"dilation {list(p['dilation'])} outside 1..{K.EP_VNPU_MAX_DILATION}"
        if not all(0 <= int(v) <= K.EP_VNPU_MAX_PAD for v in p["pads"]):
            return f"padding {list(p['pads'])} outside 0..{K.EP_VNPU_MAX_PAD}"
        if max(h, w, oh, ow, c, m) > _MAXD or (c // g) * kh * kw > K.EP_VNPU_MAX_REDUCTION:
            return "a dimension over 65536 or more than 65536 products per output"
        if op.variant not in (0, K.EP_QCONV2D_VARIANT_PACKED, K.EP_QCONV2D_VARIANT_DEPTHWISE):
            return f"kernel variant {op.variant}"
        return None
    if op.kind == "qgemm":
        a, y = op.inputs[0], op.outputs[0]
        if len(a.shape) != 2 or any(_const(t) is None for t in op.inputs[1:4]):
            return "gemm input not [M, K] or weights/bias/requant not constant"
        if max(int(a.shape[0]), int(a.shape[1]), int(y.shape[1])) > _MAXD:
            return "a dimension over 65536"
        return None if op.variant in (0, K.EP_QGEMM_VARIANT_PACKED) else f"kernel variant {op.variant}"
    if op.kind == "qadd":
        a, b = op.inputs[0], op.inputs[1]
        if b is None or np.dtype(b.dtype) != np.int8 or tuple(a.shape) != tuple(b.shape):
            return "add with broadcast (the vNPU adds tensors of one shape)"
    if op.kind == "qlut" and (_const(op.inputs[1]) is None or int(np.prod(op.inputs[1].shape)) != 256):
        return "LUT table not a constant of 256 entries"
    if _factor(max(1, math.prod(int(d) for d in op.outputs[0].shape))) is None:
        return "element count not a product of three extents <= 65536"
    return None


class _Stream:
    """Command words and region 0's payload (deduplicated by content)."""

    def __init__(self):
        self.words: list[int] = []
        self.const = bytearray()
        self.kicks = 0
        self._at: dict = {}

    def cmd0(self, op: int, param: int = 0):
        self.words.append((op & 0xFFFF) | ((param & 0xFFFF) << 16))
        if op < K.EP_VNPU_FM_IFM and op != K.EP_VNPU_OP_STOP:
            self.kicks += 1

    def cmd1(self, op: int, payload: int, param: int = 0):
        self.words += [(op & 0xFFFF) | K.EP_VNPU_CMD1 | ((param & 0xFFFF) << 16), payload & 0xFFFFFFFF]

    def payload(self, data: bytes) -> int:
        at = self._at.get(data)
        if at is None:
            at = self._at[data] = (len(self.const) + 15) & ~15
            self.const += b"\0" * (at - len(self.const)) + data
        return at

    def fm(self, which: int, region: int, base: int, hwc, strides, zp: int = 0):
        """which: K.EP_VNPU_FM_IFM / _IFM2 / _OFM; strides (x, y, c) in bytes."""
        if base > 0xFFFFFFFF or max(strides) > 0xFFFFFFFF:
            raise ValueError("a feature map offset or stride over 4 GiB")
        h, w, c = hwc
        self.cmd0(which + K.EP_VNPU_FM_REGION, region)
        self.cmd0(which + K.EP_VNPU_FM_HEIGHT_M1, h - 1)
        self.cmd0(which + K.EP_VNPU_FM_WIDTH_M1, w - 1)
        self.cmd0(which + K.EP_VNPU_FM_DEPTH_M1, c - 1)
        self.cmd0(which + K.EP_VNPU_FM_ZERO_POINT, int(zp) & 0xFFFF)
        self.cmd1(which + K.EP_VNPU_FM_BASE, base)
        self.cmd1(which + K.EP_VNPU_FM_STRIDE_X, strides[0])
        self.cmd1(which + K.EP_VNPU_FM_STRIDE_Y, strides[1])
        self.cmd1(which + K.EP_VNPU_FM_STRIDE_C, strides[2])

    def consts(self, weights: np.ndarray, bias: np.ndarray, q: np.ndarray, c0: int, n: int):
        """weights (int8, the NPU layout) and the records (bias, m, s) of channels c0 .. c0 + n."""
        wb = np.ascontiguousarray(weights, np.int8).tobytes()
        rec = np.stack([bias[c0:c0 + n], q[0, c0:c0 + n], q[1, c0:c0 + n]], axis=1).astype("<i4").tobytes()
        self.cmd0(K.EP_VNPU_SET_WEIGHT_REGION, K.EP_VNPU_REGION_CONST)
        self.cmd1(K.EP_VNPU_SET_WEIGHT_BASE, self.payload(wb))
        self.cmd1(K.EP_VNPU_SET_WEIGHT_LENGTH, len(wb))
        self.cmd0(K.EP_VNPU_SET_SCALE_REGION, K.EP_VNPU_REGION_CONST)
        self.cmd1(K.EP_VNPU_SET_SCALE_BASE, self.payload(rec))
        self.cmd1(K.EP_VNPU_SET_SCALE_LENGTH, len(rec))

    def act(self, lo: int, hi: int):
        self.cmd0(K.EP_VNPU_SET_ACT_MIN, int(lo) & 0xFFFF)
        self.cmd0(K.EP_VNPU_SET_ACT_MAX, int(hi) & 0xFFFF)


def _unpack_q8(data: np.ndarray, groups: int, rows: int, k: int) -> np.ndarray:
    """compiler/ops/quant.py pack_q8's inverse: [G ceil(R/8), ceil(K/4), 8, 4] -> [G, R, K]."""
    qr, qk = K.EP_QPACK_R, K.EP_QPACK_K
    panels, k4 = -(-rows // qr), -(-k // qk)
    a = np.asarray(data, np.int8).reshape(groups * panels, k4, qr, qk).transpose(0, 2, 1, 3)
    return a.reshape(groups, panels * qr, k4 * qk)[:, :rows, :k]


def _conv_weights(op) -> np.ndarray:
    """QCONV2D weights as [M, C/groups, KH, KW] from either plan layout."""
    n, c, h, w, m, oh, ow, g = _conv_geometry(op)
    kh, kw = (int(v) for v in op.params["kernel"])
    wd = _const(op.inputs[1])
    if op.variant == K.EP_QCONV2D_VARIANT_PACKED:
        return _unpack_q8(wd, g, m // g, (c // g) * kh * kw).reshape(m, c // g, kh, kw)
    return np.asarray(wd, np.int8).reshape(m, c // g, kh, kw)


def _gemm_weights(op) -> np.ndarray:
    """QGEMM weights as [N, K] (the MATMUL layout) from either plan layout."""
    kd, nd = int(op.inputs[0].shape[1]), int(op.outputs[0].shape[1])
    bd = _const(op.inputs[1])
    if op.variant == K.EP_QGEMM_VARIANT_PACKED:
        return _unpack_q8(bd, 1, nd, kd)[0]
    return np.asarray(bd, np.int8).reshape(kd, nd).T


class _Places:
    """Where each storage tensor lives: (region, offset). ``skip``: ids of storage tensors no kick touches (a
    max-pool chain's f32 intermediates)."""

    def __init__(self, ops, inputs, outputs, sram_bytes: int, skip=frozenset()):
        self.at: dict = {}
        for k, t in enumerate(list(inputs) + list(outputs)):
            self.at.setdefault(id(_root(t)), (K.EP_VNPU_REGION_IO + k, 0))
        live: dict = {}
        for i, op in enumerate(ops):
            for t in list(op.inputs) + list(op.outputs):
                if t is None or t.is_const:
                    continue
                r = _root(t)
                if id(r) in self.at or id(r) in skip:
                    continue
                first, _, _ = live.get(id(r), (i, i, r))
                live[id(r)] = (first, i, r)
        self.size = {K.EP_VNPU_REGION_WORK: 0, K.EP_VNPU_REGION_SRAM: 0}
        placed: list = []   # (region, offset, end, last)
        for first, last, r in sorted(live.values(), key=lambda v: (v[0], -v[2].nbytes)):
            n = (r.nbytes + 15) & ~15
            for region, cap in ((K.EP_VNPU_REGION_SRAM, sram_bytes), (K.EP_VNPU_REGION_WORK, 1 << 32)):
                busy = sorted((o, e) for rg, o, e, lst in placed if rg == region and lst >= first)
                off = 0
                for o, e in busy:
                    if off + n <= o:
                        break
                    off = max(off, e)
                if off + n <= cap:
                    break
            else:
                raise ValueError(f"intermediate '{r.name}' of {r.nbytes} bytes does not fit working memory")
            placed.append((region, off, off + n, last))
            self.at[id(r)] = (region, off)
            self.size[region] = max(self.size[region], off + n)

    def __call__(self, t, extra: int = 0):
        region, off = self.at[id(_root(t))]
        return region, off + extra


def _encode_conv(s: _Stream, op, place):
    p = op.params
    n, c, h, w, m, oh, ow, g = _conv_geometry(op)
    kh, kw = (int(v) for v in p["kernel"])
    wt = _conv_weights(op)
    bias = np.asarray(_const(op.inputs[2]), np.int64).reshape(m)
    q = np.asarray(_const(op.inputs[3]), np.int64).reshape(2, m)
    s.cmd0(K.EP_VNPU_SET_KERNEL_HEIGHT_M1, kh - 1)
    s.cmd0(K.EP_VNPU_SET_KERNEL_WIDTH_M1, kw - 1)
    s.cmd0(K.EP_VNPU_SET_KERNEL_STRIDE, int(p["stride"][1]) | int(p["stride"][0]) << 8)
    s.cmd0(K.EP_VNPU_SET_KERNEL_DILATION, int(p["dilation"][1]) | int(p["dilation"][0]) << 8)
    for i, v in enumerate(p["pads"]):   # top, left, bottom, right
        s.cmd0(K.EP_VNPU_SET_PAD_TOP + i, int(v))
    s.act(p["y_min"], p["y_max"])
    depthwise = g == c == m and c > 1
    cg, mg = c // g, m // g
    groups = [(0, 0, c, m)] if depthwise else [(gi * cg, gi * mg, cg, mg) for gi in range(g)]
    for c0, m0, cn, mn in groups:
        if depthwise:
            s.consts(wt.reshape(m, kh, kw), bias, q, 0, m)
        else:   # [OC][KH][KW][IC]
            s.consts(wt[m0:m0 + mn].transpose(0, 2, 3, 1), bias, q, m0, mn)
        for b in range(n):
            xr, xo = place(op.inputs[0], (b * c + c0) * h * w)
            yr, yo = place(op.outputs[0], (b * m + m0) * oh * ow)
            s.fm(K.EP_VNPU_FM_IFM, xr, xo, (h, w, cn), (1, w, h * w), p["x_zero"])
            s.fm(K.EP_VNPU_FM_OFM, yr, yo, (oh, ow, mn), (1, ow, oh * ow), p["y_zero"])
            s.cmd0(K.EP_VNPU_OP_DWCONV if depthwise else K.EP_VNPU_OP_CONV)


def _encode_pool(s: _Stream, chain, place):
    """CAST -> MAXPOOL -> CAST on int8 codes: one POOL kick per image, NCHW planes in place."""
    m = chain[1]
    p = m.params
    n, c, h, w = (int(v) for v in m.inputs[0].shape)
    oh, ow = (int(v) for v in m.outputs[0].shape[2:])
    kh, kw = (int(v) for v in p["kernel"])
    s.cmd0(K.EP_VNPU_SET_KERNEL_HEIGHT_M1, kh - 1)
    s.cmd0(K.EP_VNPU_SET_KERNEL_WIDTH_M1, kw - 1)
    s.cmd0(K.EP_VNPU_SET_KERNEL_STRIDE, int(p["stride"][1]) | int(p["stride"][0]) << 8)
    s.cmd0(K.EP_VNPU_SET_KERNEL_DILATION, int(p["dilation"][1]) | int(p["dilation"][0]) << 8)
    for i, v in enumerate(_pool_pads(m)):   # top, left, bottom, right
        s.cmd0(K.EP_VNPU_SET_PAD_TOP + i, v)
    s.act(-128, 127)
    for b in range(n):
        xr, xo = place(chain[0].inputs[0], b * c * h * w)
        yr, yo = place(chain[2].outputs[0], b * c * oh * ow)
        s.fm(K.EP_VNPU_FM_IFM, xr, xo, (h, w, c), (1, w, h * w), 0)
        s.fm(K.EP_VNPU_FM_OFM, yr, yo, (oh, ow, c), (1, ow, oh * ow), 0)
        s.cmd0(K.EP_VNPU_OP_POOL, K.EP_VNPU_POOL_MAX)


def _encode_gemm(s: _Stream, op, place):
    p = op.params
    rows, kd = (int(v) for v in op.inputs[0].shape)
    nd = int(op.outputs[0].shape[1])
    bias = np.asarray(_const(op.inputs[2]), np.int64).reshape(nd)
    q = np.asarray(_const(op.inputs[3]), np.int64).reshape(2, nd)
    s.consts(_gemm_weights(op), bias, q, 0, nd)
    s.act(p["y_min"], p["y_max"])
    xr, xo = place(op.inputs[0])
    yr, yo = place(op.outputs[0])
    s.fm(K.EP_VNPU_FM_IFM, xr, xo, (rows, 1, kd), (kd, kd, 1), 0)   # the zero point is folded into the bias
    s.fm(K.EP_VNPU_FM_OFM, yr, yo, (rows, 1, nd), (nd, nd, 1), p["y_zero"])
    s.cmd0(K.EP_VNPU_OP_MATMUL)


def _encode_elementwise(s: _Stream, op, place):
    p = op.params
    hwc = _factor(max(1, math.prod(int(d) for d in op.outputs[0].shape)))
    strides = (hwc[2], hwc[1] * hwc[2], 1)
    xr, xo = place(op.inputs[0])
    yr, yo = place(op.outputs[0])
    if op.kind == "qlut":
        s.act(-128, 127)
        s.fm(K.EP_VNPU_FM_IFM, xr, xo, hwc, strides, 0)
        s.fm(K.EP_VNPU_FM_OFM, yr, yo, hwc, strides, 0)
        table = np.asarray(_const(op.inputs[1]), np.int8).reshape(256).tobytes()
        s.cmd0(K.EP_VNPU_SET_LUT_REGION, K.EP_VNPU_REGION_CONST)
        s.cmd1(K.EP_VNPU_SET_LUT_BASE, s.payload(table))
        s.cmd0(K.EP_VNPU_OP_LUT)
        return
    br, bo = place(op.inputs[1])
    s.act(p["y_min"], p["y_max"])
    s.fm(K.EP_VNPU_FM_IFM, xr, xo, hwc, strides, p["a_zero"])
    s.fm(K.EP_VNPU_FM_IFM2, br, bo, hwc, strides, p["b_zero"])
    s.fm(K.EP_VNPU_FM_OFM, yr, yo, hwc, strides, p["y_zero"])
    s.cmd1(K.EP_VNPU_FM_IFM + K.EP_VNPU_FM_SCALE, int(p["a_mult"]), int(p["a_shift"]))
    s.cmd1(K.EP_VNPU_FM_IFM2 + K.EP_VNPU_FM_SCALE, int(p["b_mult"]), int(p["b_shift"]))
    s.cmd1(K.EP_VNPU_FM_OFM + K.EP_VNPU_FM_SCALE, int(p["y_mult"]), int(p["y_shift"]))
    s.cmd0(K.EP_VNPU_OP_ELTWISE, K.EP_VNPU_ELTWISE_ADD)


def encode(ops, inputs, outputs, cfg="u55-256-sram") -> tuple[bytes, int]:
    """A run of supported lowered ops (schedule order) -> (EPN-1 blob, working-memory bytes). inputs / outputs:
    the partition's boundary tensors in the DELEGATE op's order; cfg: a vNPU preset name, config dict or
    ``ep_vnpu_config`` (edgeplan.vnpu.config). Raises ValueError when the run cannot be encoded."""
    from ...vnpu import config
    c = config(cfg)
    per_kick = kicks(ops)
    for k in per_kick:
        why = supported(k[0]) if len(k) == 1 else None
        if why:
            raise ValueError(f"{k[0].kind} '{k[0].name}': {why}")
    io = list(inputs) + list(outputs)
    if not inputs or not outputs or len(inputs) > K.EP_DELEGATE_MAX_IO or len(outputs) > K.EP_DELEGATE_MAX_IO:
        raise ValueError(f"{len(inputs)} inputs and {len(outputs)} outputs (1..{K.EP_DELEGATE_MAX_IO} each)")
    inner = {id(_root(t)) for k in per_kick if len(k) == 3 for t in (k[0].outputs[0], k[1].outputs[0])}
    place = _Places(ops, inputs, outputs, int(c.sram_bytes), inner)
    s = _Stream()
    for k in per_kick:
        if len(k) == 3:
            _encode_pool(s, k, place)
            continue
        op = k[0]
        {"qconv2d": _encode_conv, "qgemm": _encode_gemm}.get(op.kind, _encode_elementwise)(s, op, place)
    s.cmd0(K.EP_VNPU_OP_STOP)
    work, sram = place.size[K.EP_VNPU_REGION_WORK], place.size[K.EP_VNPU_REGION_SRAM]
    if work > 0xFFFFFFFF or len(s.const) > 0xFFFFFFFF:
        raise ValueError("working memory or constants over 4 GiB")

    io_off = K.EP_VNPU_HEADER_BYTES
    cmd_off = io_off + len(io) * K.EP_VNPU_IO_BYTES
    const_off = (cmd_off + 4 * len(s.words) + 15) & ~15
    total = const_off + len(s.const)
    h = ffi.new("ep_vnpu_header *")
    h.magic, h.version, h.flags, h.blob_bytes = K.EP_VNPU_MAGIC, K.EP_VNPU_VERSION, 0, total
    h.macs_per_cycle, h.sram_bytes = c.macs_per_cycle, min(int(c.sram_bytes), 0xFFFFFFFF)
    h.work_bytes, h.sram_used, h.n_regions = work, sram, K.EP_VNPU_REGION_IO + len(io)
    h.n_inputs, h.n_outputs, h.io_offset = len(inputs), len(outputs), io_off
    h.cmd_offset, h.cmd_words, h.const_offset, h.const_bytes = cmd_off, len(s.words), const_off, len(s.const)
    h.n_ops = s.kicks
    out = bytearray(total)
    out[:K.EP_VNPU_HEADER_BYTES] = ffi.buffer(h)[:]
    for k, t in enumerate(io):
        r = ffi.new("ep_vnpu_io *")
        r.nbytes, r.dtype, r.rank = t.nbytes, NUMPY_TO_EP[np.dtype(t.dtype)], len(t.shape)
        for d, v in enumerate(t.shape):
            r.dims[d] = int(v)
        out[io_off + k * K.EP_VNPU_IO_BYTES:io_off + (k + 1) * K.EP_VNPU_IO_BYTES] = ffi.buffer(r)[:]
    out[cmd_off:cmd_off + 4 * len(s.words)] = np.asarray(s.words, "<u4").tobytes()
    out[const_off:] = bytes(s.const)
    crc_at = ffi.offsetof("ep_vnpu_header", "crc32c")
    out[crc_at:crc_at + 4] = int(crc32c(bytes(out))).to_bytes(4, "little")
    return bytes(out), ((work + 63) & ~63) + sram

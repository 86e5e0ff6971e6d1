"""Quantised ONNX ops written at compile time as float32 ops whose results are the integer semantics
exactly, so that QDQ, QOperator and dynamically quantised exports run as they come:

  DequantizeLinear      y = float(x - zero_point) * scale            (per tensor, per axis, blocked)
  QuantizeLinear        y = saturate(round_half_even(x / scale) + zero_point)
  DynamicQuantizeLinear uint8, scale = (max(x, 0) - min(x, 0)) / 255 (1 when that range is 0),
                        zero_point = round(clip(-min(x, 0) / scale, 0, 255)), y as QuantizeLinear
  MatMulInteger, ConvInteger   int32 accumulators of (a - a_zp) (b - b_zp)
  QLinearMatMul, QLinearConv   the same accumulators (plus QLinearConv's int32 bias), requantised as
                        onnxruntime does: saturate(round(float(acc) * (a_scale * b_scale / y_scale)) + y_zp)

The integer products run on the float32 GEMM and direct convolution kernels with integer-valued operands
(the zero points subtracted first). They are exact while every partial sum stays within float32's 2^24
integers: the compiler bounds |a - a_zp| by the dtype (or the constant's values), and each output's partial
sums by that bound times the sum of its |w - w_zp| over constant weights (or K times their largest), and
splits the reduction axis (K of a MatMul, the input channels of a Conv with one group) into chunks that stay
within it, adding the chunks' int32 values. Such a node is marked `exact`: the fuser grows no epilogue into it and
the selection takes no Winograd variant (its transforms round). Padding of ConvInteger and QLinearConv
pads the centred input with zeros, which is the zero point of the uncentred one, as the operators define.

Refused with the reason: float8 and 4-bit types, a non-constant blocked scale, a grouped convolution
whose accumulators can leave float32's exact range."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from .. import ir
from .rewrite import _Chain, _Refused, _bind_last

EXACT = float(1 << 24)       # float32 holds every integer up to this magnitude
QRANGE = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255), np.dtype(np.int16): (-32768, 32767),
          np.dtype(np.uint16): (0, 65535)}
ONNX_INT = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8, TensorProto.INT16: np.int16,
            TensorProto.UINT16: np.uint16, TensorProto.INT32: np.int32}
TO = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
      np.dtype(np.int16): TensorProto.INT16, np.dtype(np.uint16): TensorProto.UINT16,
      np.dtype(np.int32): TensorProto.INT32, np.dtype(np.float32): TensorProto.FLOAT,
      np.dtype(np.float16): TensorProto.FLOAT16}


def _dtype(m: ir.Model, name: str):
    return m.dtype(name)


def _rank(m: ir.Model, name: str, what: str) -> int:
    s = m.shape(name)
    if s is None:
        raise _Refused(f"the rank of its {what} '{name}' is not known yet")
    return len(s)


def _int_type(dt, what: str, allow_i32: bool = False):
    if dt is None:
        raise _Refused(f"the dtype of its {what} is not known")
    if dt in QRANGE or (allow_i32 and dt == np.int32):
        return dt
    raise _Refused(f"its {what} has dtype {dt.name}; edgeplan takes int8, uint8, int16 and uint16"
                   + (" (and int32)" if allow_i32 else "") + " (float8 and 4-bit types are not supported)")


class _Q(_Chain):
    """A _Chain with the helpers the quantised rewrites share."""

    def f32(self, name: str) -> str:
        """name as float32 (a constant converted here, a run-time tensor by a Cast)."""
        a = self.m.const(name)
        if a is not None:
            return self.const(np.asarray(a).astype(np.float32))
        if _dtype(self.m, name) == np.float32:
            return name
        return self.add("Cast", [name], to=TensorProto.FLOAT)

    def along(self, name: str, axis: int, rank: int, what: str, extent=None) -> str:
        """A per-tensor (scalar or [1]) or per-axis ([C]) parameter shaped to broadcast against a tensor of
        `rank` dims along `axis` (whose extent, when given, C must equal)."""
        a = self.m.const(name)
        shp = np.shape(a) if a is not None else self.m.shape(name)
        if shp is None:
            raise _Refused(f"the shape of its {what} '{name}' is not known")
        if len(shp) == 0 or tuple(shp) == (1,):
            return name
        if len(shp) != 1:
            raise _Refused(f"its {what} '{name}' has shape {list(shp)}: a scalar or one value per channel")
        if not 0 <= axis < rank:
            raise _Refused(f"its axis is outside a rank-{rank} input")
        if extent is not None and int(shp[0]) != int(extent):
            raise _Refused(f"its {what} '{name}' has {int(shp[0])} values for the {int(extent)} channels of axis {axis}")
        target = [int(shp[0])] + [1] * (rank - 1 - axis)
        if a is not None:
            return self.const(np.asarray(a).reshape(target), np.asarray(a).dtype)
        return self.add("Reshape", [name, self.const(target, np.int64)])

    def blocked(self, name: str, axis: int, block: int, xshape, what: str) -> str:
        """A blocked parameter (its dims those of x, `axis` divided into blocks of `block`) expanded to x's
        shape: constants only."""
        a = self.m.const(name)
        if a is None:
            raise _Refused(f"its blocked {what} '{name}' is only known at run time")
        a = np.asarray(a)
        if a.ndim != len(xshape) or -(-xshape[axis] // block) != a.shape[axis]:
            raise _Refused(f"its blocked {what} {list(a.shape)} does not fit the input {list(xshape)} with "
                           f"block_size {block} on axis {axis}")
        full = np.repeat(a, block, axis=axis).take(range(xshape[axis]), axis=axis)
        return self.const(np.ascontiguousarray(full), a.dtype)

    def param(self, name: str, axis: int, block: int, x: str, what: str) -> str:
        if what == "scale":
            _check_scale(self.m, name)
        r = _rank(self.m, x, "input")
        if block:
            xs = self.m.static_shape(x)
            if xs is None:
                raise _Refused("a blocked quantisation needs the input's static shape")
            return self.blocked(name, axis, block, xs, what)
        xs = self.m.shape(x)
        return self.along(name, axis, r, what, xs[axis] if xs and 0 <= axis < r else None)

    def requant(self, v: str, zp: str, qt) -> str:
        """saturate(round_half_even(v) + zp) as qt."""
        lo, hi = QRANGE[qt]
        r = self.add("Round", [v])
        if zp and not _is_zero(self.m, zp):
            r = self.add("Add", [r, self.f32(zp)])
        c = self.clip(r, lo, hi)
        return self.add("Cast", [c], to=TO[qt])

    def clip(self, v: str, lo, hi) -> str:
        if self.m.opset < 11:
            return self.add("Clip", [v], min=float(lo), max=float(hi))
        return self.add("Clip", [v, self.const(lo), self.const(hi)])

    def centred(self, x: str, zp: str, axis: int, rank: int, what: str) -> str:
        """float32(x - zp): exact for the 8- and 16-bit types."""
        xf = self.f32(x)
        if zp and not _is_zero(self.m, zp):
            xf = self.add("Sub", [xf, self.f32(self.along(zp, axis, rank, what))])
        return xf

    def finish(self, out: str) -> list:
        if not self.nodes or out not in (o for nd in self.nodes for o in nd.outputs):
            self.add("Identity", [out])
        _bind_last(self.nodes, self.n.outputs[0])
        return self.nodes


def _is_zero(m: ir.Model, name: str) -> bool:
    """Whether `name` is a constant of zeros (an absent zero point counts as none)."""
    a = m.const(name)
    return a is not None and not np.any(np.asarray(a))


def _one_value(m: ir.Model, name: str) -> bool:
    """Whether zero point `name` is absent, run-time, or a constant of one value."""
    a = m.const(name) if name else None
    return a is None or np.size(a) == 1


def _check_scale(m: ir.Model, name: str) -> None:
    a = m.const(name)
    if a is None:
        return
    a = np.asarray(a, np.float64).reshape(-1)
    bad = np.flatnonzero(~(np.isfinite(a) & (a > 0)))
    if bad.size:
        raise _Refused(f"its scale '{name}' is {a[bad[0]]:g} at index {int(bad[0])}: scales must be positive and "
                       f"finite (the quantiser that wrote the model lost a range)")


def _axis(n: ir.Node, rank: int) -> int:
    a = int(n.attrs.get("axis", 1))
    return a + rank if a < 0 else a      # checked where a per-axis parameter needs it


def _dequantize(m: ir.Model, n: ir.Node) -> list:
    x, s, zp = n.inputs[0], n.input(1), n.input(2)
    qt = _int_type(_dtype(m, x), "input", allow_i32=True)
    sdt = _dtype(m, s)
    if sdt not in (np.float32, np.float16):
        raise _Refused(f"its scale has dtype {sdt.name if sdt is not None else 'unknown'} (float32 or float16)")
    if qt == np.int32 and zp and not _is_zero(m, zp):
        raise _Refused("an int32 input takes no zero point but 0")
    c = _Q(m, n)
    r = _rank(m, x, "input")
    axis, block = _axis(n, r), int(n.attrs.get("block_size", 0))
    xf = c.f32(x)
    if zp and not _is_zero(m, zp):
        xf = c.add("Sub", [xf, c.f32(c.param(zp, axis, block, x, "zero point"))])
    y = c.add("Mul", [xf, c.f32(c.param(s, axis, block, x, "scale"))])
    if sdt == np.float16:
        y = c.add("Cast", [y], to=TensorProto.FLOAT16)
    return c.finish(y)


def _quantize(m: ir.Model, n: ir.Node) -> list:
    x, s, zp = n.inputs[0], n.input(1), n.input(2)
    if zp:
        qt = _int_type(_dtype(m, zp), "zero point")
    else:
        to = int(n.attrs.get("output_dtype", 0)) or TensorProto.UINT8
        if to not in ONNX_INT or ONNX_INT[to] == np.int32:
            raise _Refused(f"its output_dtype {to} is not int8, uint8, int16 or uint16")
        qt = np.dtype(ONNX_INT[to])
    xdt = _dtype(m, x)
    if xdt not in (np.float32, np.float16):
        raise _Refused(f"its input has dtype {xdt.name if xdt is not None else 'unknown'} (float32 or float16)")
    c = _Q(m, n)
    r = _rank(m, x, "input")
    axis, block = _axis(n, r), int(n.attrs.get("block_size", 0))
    v = c.add("Div", [c.f32(x), c.f32(c.param(s, axis, block, x, "scale"))])
    return c.finish(c.requant(v, c.param(zp, axis, block, x, "zero point") if zp else "", qt))


def _dynamic_quantize(m: ir.Model, n: ir.Node) -> list:
    x = n.inputs[0]
    if _dtype(m, x) != np.float32:
        raise _Refused("its input is not float32")
    c = _Q(m, n)
    add, zero = c.add, c.const(0.0)
    lo = add("Min", [add("ReduceMin", [x], keepdims=0), zero])
    hi = add("Max", [add("ReduceMax", [x], keepdims=0), zero])
    span = add("Sub", [hi, lo])
    scale = add("Where", [add("Equal", [span, zero]), c.const(1.0), add("Div", [span, c.const(255.0)])])
    zpf = add("Round", [c.clip(add("Sub", [zero, add("Div", [lo, scale])]), 0.0, 255.0)])
    q = add("Cast", [c.clip(add("Add", [add("Round", [add("Div", [x, scale])]), zpf]), 0.0, 255.0)],
            to=TensorProto.UINT8)
    outs = [q, scale, add("Cast", [zpf], to=TensorProto.UINT8)]
    for k, v in enumerate(outs):
        if k < len(n.outputs) and n.outputs[k]:
            add("Identity", [v])
            _bind_last(c.nodes, n.outputs[k])
    return c.nodes


# ------------------------------------------------------------------ integer products
def _spread(m: ir.Model, x: str, zp: str, qt) -> int:
    """A bound on |x - zp|: exact from the values of a constant x with one zero point (|x| + |zp| with one per
    channel), else from its dtype and zero point."""
    a = m.const(x)
    z = np.asarray(m.const(zp)).astype(np.int64) if zp and m.const(zp) is not None else None
    if a is not None:
        v = np.asarray(a).astype(np.int64)
        if z is not None and z.size > 1:
            return int(np.abs(v).max(initial=0) + np.abs(z).max())
        return int(np.abs(v - (int(z.reshape(-1)[0]) if z is not None else 0)).max(initial=0))
    lo, hi = QRANGE[qt]
    if zp and z is None:
        return hi - lo
    zs = z.reshape(-1) if z is not None else np.zeros(1, np.int64)
    return int(max(np.max(hi - zs), np.max(zs - lo)))


def _weight_sums(m: ir.Model, w: str, wzp: str, conv: bool):
    """For constant integer weights, |w - wzp| as an array [K, N] whose column sums bound each output's sum
    of |weight| (so the partial sums of any order of summation stay within them): a Conv's [M, C/g, taps...]
    summed over its taps, K its input channels; a MatMul's B [..., K, N], the largest over batch dims. Zero
    points one value, or one per output. None for run-time weights or zero points."""
    a = m.const(w)
    z = m.const(wzp) if wzp else np.zeros(1, np.int64)
    if a is None or z is None:
        return None
    v = np.asarray(a).astype(np.int64)
    z = np.asarray(z).astype(np.int64).reshape(-1)
    if conv:
        d = np.abs(v - (z.reshape([-1] + [1] * (v.ndim - 1)) if z.size > 1 else z[0]))
        return d.reshape(v.shape[0], v.shape[1], -1).sum(axis=2).T
    d = np.abs(v - (z if z.size > 1 else z[0]))
    return d.reshape((-1,) + v.shape[-2:]).max(axis=0) if v.ndim > 2 else d.reshape(v.shape[0], -1)


def _tight_chunks(sums: np.ndarray, spread_x: int, room: float) -> list:
    """[start, stop) ranges over K (sums' rows) whose products with an input of spread spread_x keep every
    output's partial sums within room: one range when the whole reduction fits."""
    out, k0, acc = [], 0, np.zeros(sums.shape[1], np.int64)
    for k in range(sums.shape[0]):
        nxt = acc + sums[k]
        if k > k0 and float(nxt.max(initial=0)) * spread_x > room:
            out.append((k0, k))
            k0, nxt = k, sums[k].copy()
        acc = nxt
    out.append((k0, sums.shape[0]))
    return out


def _chunks(total: int, per: int, unit: int = 1) -> list:
    """[start, stop) ranges over `total`, each of at most `per` elements, in whole `unit`s."""
    step = max(1, per // unit)
    return [(k, min(total, k + step)) for k in range(0, total, step)]


def _sum_int(c: _Q, parts: list) -> str:
    """The int32 sum of float32 partial accumulators (each an exact integer)."""
    acc = None
    for p in parts:
        p32 = c.add("Cast", [p], to=TensorProto.INT32)
        acc = p32 if acc is None else c.add("Add", [acc, p32])
    return acc


def _matmul_acc(m: ir.Model, n: ir.Node, c: _Q, a, azp, b, bzp) -> tuple:
    """(accumulator name, is_int32): sum_k (a - azp)(b - bzp) with a's zero point per row (axis -2) and
    b's per column."""
    at = _int_type(_dtype(m, a), "input A")
    bt = _int_type(_dtype(m, b), "input B")
    ra, rb = _rank(m, a, "input A"), _rank(m, b, "input B")
    if ra < 2 or rb < 1:
        raise _Refused(f"its inputs have ranks {ra} and {rb}: A needs at least 2 dims, B at least 1")
    ac = c.centred(a, azp, ra - 2, ra, "A zero point")
    bc = c.centred(b, bzp, rb - 1, rb, "B zero point")
    K = (m.shape(a) or [None])[-1]
    if K is None:
        raise _Refused("the length K of its products is not known yet (it bounds the exact float32 sums)")
    sums = _weight_sums(m, b, bzp, conv=False)
    if sums is not None:
        chunks = _tight_chunks(sums, _spread(m, a, azp, at), EXACT)
    else:
        per = EXACT / max(1, _spread(m, a, azp, at) * _spread(m, b, bzp, bt))
        chunks = [(0, K)] if K <= per else _chunks(K, int(per))
    if len(chunks) == 1:
        return _exact(c, "MatMul", [ac, bc]), False
    parts = []
    for k0, k1 in chunks:
        sa = c.add("Slice", [ac, c.const([k0], np.int64), c.const([k1], np.int64), c.const([-1], np.int64)])
        sb = c.add("Slice", [bc, c.const([k0], np.int64), c.const([k1], np.int64), c.const([-2 if rb > 1 else 0], np.int64)])
        parts.append(_exact(c, "MatMul", [sa, sb]))
    return _sum_int(c, parts), True


def _conv_acc(m: ir.Model, n: ir.Node, c: _Q, x, xzp, w, wzp, bias="") -> tuple:
    """(accumulator name, is_int32): the convolution of (x - xzp) with (w - wzp[c_out]), plus an int32 bias."""
    xt = _int_type(_dtype(m, x), "input x")
    wt = _int_type(_dtype(m, w), "weights")
    if m.const(w) is None:
        raise _Refused("its weights are only known at run time")
    wshape = np.shape(m.const(w))
    rx = _rank(m, x, "input x")
    if not _one_value(m, xzp):
        raise _Refused("the input's zero point must be one value")
    xc = c.centred(x, xzp, 1, rx, "x zero point")
    wc = c.centred(w, wzp, 0, len(wshape), "weight zero point")
    attrs = {k: v for k, v in n.attrs.items() if k in ("auto_pad", "dilations", "group", "kernel_shape", "pads",
                                                       "strides")}
    g = int(attrs.get("group", 1))
    taps = int(np.prod(wshape[2:], dtype=np.int64))
    K = int(wshape[1]) * taps
    bc = m.const(bias) if bias else None    # a run-time bias is bounded by int32 only
    bmax = 0 if not bias else (1 << 31) if bc is None else int(np.abs(np.asarray(bc).astype(np.int64)).max(initial=0))
    sx = _spread(m, x, xzp, xt)
    sums = _weight_sums(m, w, wzp, conv=True)   # [C/g, M]
    if sums is not None:
        whole = float(sums.sum(axis=0).max(initial=0)) * sx
        chunks = _tight_chunks(sums, sx, EXACT)
        one_tap = float(sums.max(initial=0)) * sx   # one input channel's taps: the finest split
    else:
        prod = max(1, sx * _spread(m, w, wzp, wt))
        whole, one_tap = float(K * prod), float(taps * prod)
        chunks = [(0, int(wshape[1]))] if whole <= EXACT else _chunks(int(wshape[1]), int(EXACT // prod), taps)
    if whole + bmax <= EXACT:
        ins = [xc, wc] + ([c.f32(bias)] if bias else [])
        return _exact(c, "Conv", ins, **attrs), False
    if whole > EXACT and (g != 1 or one_tap > EXACT):
        raise _Refused(f"its accumulators (K = {K} products, their magnitudes summing to up to {whole:.0f}) can "
                       f"leave float32's exact range, and only a one-group convolution is split by input channels")
    parts = []
    if whole <= EXACT:
        parts.append(_exact(c, "Conv", [xc, wc], **attrs))
    else:
        for c0, c1 in chunks:
            sx = c.add("Slice", [xc, c.const([c0], np.int64), c.const([c1], np.int64), c.const([1], np.int64)])
            sw = c.add("Slice", [wc, c.const([c0], np.int64), c.const([c1], np.int64), c.const([1], np.int64)])
            parts.append(_exact(c, "Conv", [sx, sw], **attrs))
    acc = _sum_int(c, parts)
    if bias:
        acc = c.add("Add", [acc, c.along(bias, 1, rx, "bias")])
    return acc, True


def _exact(c: _Q, op: str, ins: list, **attrs) -> str:
    out = c.add(op, ins, **attrs)
    c.nodes[-1].exact = True
    return out


def _matmul_integer(m: ir.Model, n: ir.Node) -> list:
    c = _Q(m, n)
    acc, is_int = _matmul_acc(m, n, c, n.inputs[0], n.input(2), n.inputs[1], n.input(3))
    return c.finish(acc if is_int else c.add("Cast", [acc], to=TensorProto.INT32))


def _conv_integer(m: ir.Model, n: ir.Node) -> list:
    c = _Q(m, n)
    acc, is_int = _conv_acc(m, n, c, n.inputs[0], n.input(2), n.inputs[1], n.input(3))
    return c.finish(acc if is_int else c.add("Cast", [acc], to=TensorProto.INT32))


def _multiplier(c: _Q, sa: str, sb: str, sy: str, axis_a: int, axis_b: int, rank: int) -> str:
    """sa * sb / sy in float32, in that order (onnxruntime's output scale), shaped to broadcast."""
    for s in (sa, sb, sy):
        _check_scale(c.m, s)
    return c.add("Div", [c.add("Mul", [c.f32(c.along(sa, axis_a, rank, "scale")),
                                        c.f32(c.along(sb, axis_b, rank, "scale"))]), c.f32(sy)])


def _qlinear_out(m: ir.Model, c: _Q, acc: str, is_int: bool, mult: str, yzp: str) -> list:
    qt = _int_type(_dtype(m, yzp), "output zero point") if yzp else np.dtype(np.uint8)
    v = c.add("Mul", [c.add("Cast", [acc], to=TensorProto.FLOAT) if is_int else acc, mult])
    return c.finish(c.requant(v, yzp, qt))


def _qlinear_matmul(m: ir.Model, n: ir.Node) -> list:
    a, sa, azp, b, sb, bzp, sy, yzp = (n.input(i) for i in range(8))
    c = _Q(m, n)
    acc, is_int = _matmul_acc(m, n, c, a, azp, b, bzp)
    r = max(_rank(m, a, "input A"), _rank(m, b, "input B"))
    return _qlinear_out(m, c, acc, is_int, _multiplier(c, sa, sb, sy, r - 2, r - 1, r), yzp)


def _qlinear_conv(m: ir.Model, n: ir.Node) -> list:
    x, sx, xzp, w, sw, wzp, sy, yzp, bias = (n.input(i) for i in range(9))
    c = _Q(m, n)
    acc, is_int = _conv_acc(m, n, c, x, xzp, w, wzp, bias)
    r = _rank(m, x, "input x")
    return _qlinear_out(m, c, acc, is_int, _multiplier(c, sx, sw, sy, 1, 1, r), yzp)


REWRITES = {"DequantizeLinear": _dequantize, "QuantizeLinear": _quantize, "DynamicQuantizeLinear": _dynamic_quantize,
            "MatMulInteger": _matmul_integer, "ConvInteger": _conv_integer, "QLinearMatMul": _qlinear_matmul,
            "QLinearConv": _qlinear_conv}


def _dequantized_weights(m: ir.Model, n: ir.Node, w: str, s: str, zp: str, what: str) -> str:
    """DynamicQuantizeLSTM's [dirs, in, 4H] int8 weights as an LSTM's float32 [dirs, 4H, in]: scale and
    zero point per direction ([dirs]) or per gate column ([dirs, 4H])."""
    q, sc = m.const(w), m.const(s)
    z = m.const(zp) if zp else np.zeros(np.shape(sc), np.int64)
    if q is None or sc is None or z is None:
        raise _Refused(f"its {what} weights, scales or zero points are only known at run time")
    q, sc, z = np.asarray(q), np.asarray(sc, np.float32), np.asarray(z).astype(np.int32)
    _int_type(np.dtype(q.dtype), f"{what} weights")
    if q.ndim != 3 or sc.shape not in ((q.shape[0],), (q.shape[0], q.shape[2])) or z.shape != sc.shape:
        raise _Refused(f"its {what} weights {list(q.shape)}, scales {list(sc.shape)} and zero points "
                       f"{list(z.shape)} are not [dirs, in, 4H] with one scale per direction or per column")
    bs = (q.shape[0], 1, 1) if sc.ndim == 1 else (q.shape[0], 1, q.shape[2])
    f = (q.astype(np.int32) - z.reshape(bs)).astype(np.float32) * sc.reshape(bs)
    return m.add_const(f"{n.name}/{what}", np.ascontiguousarray(f.transpose(0, 2, 1)))


def _dynamic_quantize_lstm(m: ir.Model, n: ir.Node) -> list:
    """com.microsoft DynamicQuantizeLSTM as an LSTM on its dequantised weights. onnxruntime's kernel also
    quantises X and each step's hidden state to uint8 on the fly; this computes those products in float32,
    so its outputs differ from onnxruntime's by that rounding (tests/py/test_pypi_models.py states it)."""
    ins = [n.input(i) for i in range(12)]
    W = _dequantized_weights(m, n, ins[1], ins[8], ins[9], "W")
    R = _dequantized_weights(m, n, ins[2], ins[10], ins[11], "R")
    from onnx import helper
    attrs = {k: v for k, v in n.attrs.items() if k in ("activation_alpha", "activation_beta", "activations", "clip",
                                                       "direction", "hidden_size", "input_forget")}
    node_ins = [ins[0], W, R] + ins[3:8]
    while node_ins and not node_ins[-1]:
        node_ins.pop()
    p = helper.make_node("LSTM", node_ins, list(n.outputs), name=n.name, **attrs)
    return [ir.Node("LSTM", node_ins, list(n.outputs), dict(attrs), n.name, "", proto=p)]


def _via_float(op: str, layout: str, **fixed):
    """A com.microsoft QLinear* op (what onnxruntime's QOperator quantiser writes) as DequantizeLinear of
    its inputs, the float op, QuantizeLinear of the result: the op's definition, rounded once at the end
    (onnxruntime's kernels rescale in float too; they may differ by 1 at a rounding tie).
    layout: "x" one input (X, scale, zp, y_scale, y_zp); "ab" two (A, s, zp, B, s, zp, y_scale, y_zp);
    "cat" (y_scale, y_zp, then X, scale, zp per input)."""
    def rewrite(m: ir.Model, n: ir.Node) -> list:
        if int(n.attrs.get("channels_last", 0)):
            raise _Refused("channels_last=1 (NHWC) is not supported")
        ins = [n.input(i) for i in range(len(n.inputs))]
        if layout == "x":
            triples, (sy, yzp) = [ins[0:3]], ins[3:5]
        elif layout == "ab":
            triples, (sy, yzp) = [ins[0:3], ins[3:6]], ins[6:8]
        else:
            sy, yzp = ins[0], ins[1]
            triples = [ins[k:k + 3] for k in range(2, len(ins), 3)]
        c = _Q(m, n)
        fs = []
        for s in [t[1] for t in triples] + [sy]:
            _check_scale(m, s)
        for x, s, zp in triples:
            r = _rank(m, x, "input")
            if not _one_value(m, zp):
                raise _Refused(f"the zero point of '{x}' is not one value")
            _int_type(_dtype(m, x), f"input '{x}'")
            fs.append(c.add("Mul", [c.centred(x, zp, 0, r, "zero point"), c.f32(s)]))
        attrs = {k: v for k, v in n.attrs.items() if k not in ("channels_last", "opset")}
        attrs.update(fixed)
        y = c.add(op, fs, **attrs)
        qt = _int_type(_dtype(m, yzp), "output zero point") if yzp else _dtype(m, triples[0][0])
        return c.finish(c.requant(c.add("Div", [y, c.f32(sy)]), yzp, qt))
    return rewrite


CONTRIB_REWRITES = {"DynamicQuantizeLSTM": _dynamic_quantize_lstm,
                    "QLinearAdd": _via_float("Add", "ab"), "QLinearMul": _via_float("Mul", "ab"),
                    "QLinearGlobalAveragePool": _via_float("GlobalAveragePool", "x"),
                    "QLinearAveragePool": _via_float("AveragePool", "x"),
                    "QLinearSigmoid": _via_float("Sigmoid", "x"), "QLinearLeakyRelu": _via_float("LeakyRelu", "x"),
                    "QLinearConcat": _via_float("Concat", "cat"),
                    "QuantizeLinear": _quantize, "DequantizeLinear": _dequantize}


# ------------------------------------------------------------------ QuantizeLinear -> DequantizeLinear
def _same_quant(m: ir.Model, q: ir.Node, d: ir.Node) -> bool:
    """Whether DequantizeLinear d undoes QuantizeLinear q's scale, zero point and axis (constants)."""
    if len(q.inputs) < 3 or len(d.inputs) < 3 or not q.input(2) or not d.input(2):
        return False
    sq, sd, zq, zd = (m.const(x) for x in (q.inputs[1], d.inputs[1], q.inputs[2], d.inputs[2]))
    if any(a is None for a in (sq, sd, zq, zd)) or np.asarray(sd).dtype != np.float32:
        return False
    if int(q.attrs.get("block_size", 0)) or int(d.attrs.get("block_size", 0)):
        return False
    if np.size(sq) > 1 and int(q.attrs.get("axis", 1)) != int(d.attrs.get("axis", 1)):
        return False
    return (np.asarray(sq).dtype == np.asarray(sd).dtype and np.array_equal(sq, sd)
            and np.asarray(zq).dtype == np.asarray(zd).dtype and np.array_equal(zq, zd))


def fold_pairs(m: ir.Model, notes: list) -> None:
    """A QuantizeLinear whose codes only DequantizeLinear nodes with its own scale, zero point and axis read
    (how QDQ graphs mark every activation) is, with them, clip(round_half_even(x / s), lo - zp, hi - zp) * s:
    the same float32 values (every step exact on integers). With one positive scale the clip goes after
    the product, with bounds (lo - zp) s and (hi - zp) s rounded as the product rounds, and fuses into it:
    three runtime ops (a division, a rounding, a clipped product) instead of nine. A NaN input gives NaN
    here, where the pair's integer cast would give a code."""
    cons = m.consumers()
    out = []
    pairs = 0
    dead = set()
    for q in m.nodes:
        if q in dead:
            continue
        y = q.outputs[0] if q.outputs else ""
        users = cons.get(y, [])
        if (q.domain != "" or q.op_type != "QuantizeLinear" or y in m.outputs or not users
                or _dtype(m, q.inputs[0]) != np.float32
                or any(u.domain != "" or u.op_type != "DequantizeLinear" or u.inputs[0] != y or not _same_quant(m, q, u)
                       for u in users)):
            out.append(q)
            continue
        try:
            qt = _int_type(_dtype(m, q.inputs[2]), "zero point")
            c = _Q(m, q)
            r = _rank(m, q.inputs[0], "input")
            axis = _axis(q, r)
            s = c.f32(c.param(q.inputs[1], axis, 0, q.inputs[0], "scale"))   # positive and finite, or refused
            z = np.asarray(m.const(q.inputs[2])).astype(np.float64)
            lo, hi = QRANGE[qt]
            v = c.add("Round", [c.add("Div", [q.inputs[0], s])])
            sc = np.asarray(m.const(q.inputs[1]), np.float32).reshape(-1)
            if z.size == 1 and sc.size == 1:
                # clip(r, lo', hi') * s == clip(r * s, lo' * s, hi' * s) in float32 for s > 0 (rounding is
                # monotonic), and the clip then fuses into the product: one pass fewer
                b = [np.float32(np.float32(e - z.reshape(-1)[0]) * sc[0]) for e in (lo, hi)]
                v = c.clip(c.add("Mul", [v, s]), float(b[0]), float(b[1]))
            else:
                if z.size == 1:
                    v = c.clip(v, float(lo - z.reshape(-1)[0]), float(hi - z.reshape(-1)[0]))
                else:
                    for op, e in (("Max", lo), ("Min", hi)):
                        v = c.add(op, [v, c.param(c.const((e - z).astype(np.float32)), axis, 0, q.inputs[0], "zero point")])
                v = c.add("Mul", [v, s])
        except _Refused:
            out.append(q)
            continue
        for u in users:
            c.add("Identity", [v])
            _bind_last(c.nodes, u.outputs[0])
            dead.add(u)
        out.extend(c.nodes)
        pairs += 1
    if pairs:
        m.nodes = [n for n in out if n not in dead]
        notes.append(f"{pairs} QuantizeLinear -> DequantizeLinear pair(s) as clip(round(x / scale)) * scale in float32")

"""Quantised ONNX graphs onto the int8 kernels (plan_format.h "int8", docs/quantization.md).

A QDQ graph marks each quantised op by DequantizeLinear on its inputs and QuantizeLinear on its output:

    DQ(xq, sx, zx) ─┐
    DQ(wq, sw, 0) ──┼─ Conv / MatMul / Gemm ─ [Relu | Clip] ─ Q(·, sy, zy) ─ yq
    DQ(bq, sx sw) ──┘

Such a chain becomes one integer op, edgeplan QConv or QGemm, from xq to yq: int8 weights (per output
channel), an int32 bias with -zx * sum(w) folded in, and one (multiplier, shift) pair per channel for
M = sx sw[c] / sy (single rounding, ties up: QUANTIZATION.md). A fused Relu or Clip becomes the clamp of the
output codes (the quantiser is monotonic, so clip-then-round is round-then-clip). QLinearConv and
QLinearMatMul with constant weights map to the same ops. The codes between two integer ops never leave
int8; where a float op reads them (or a float value enters one), a Quantize / Dequantize op converts.

uint8 activation codes (onnxruntime's default) are renamed int8 first: a QuantizeLinear whose readers are
all DequantizeLinear is the same with zero point zp - 128 and int8 codes, and so are its readers.

What stays float, by the step-1 rewrites (passes/qdq.py): everything not matching a whole chain, per-axis
activation scales, asymmetric weights, int16 codes, and multipliers of 2^30 or more. The integer path
rounds each output once where the fake-quantised float graph rounds its float sum: outputs may differ from
onnxruntime's ORT_DISABLE_ALL by one code where the float sum lies within rounding of a half."""
from __future__ import annotations

import numpy as np

from .. import ir

DOMAIN = "edgeplan"
INT8_OPS = ("QConv", "QGemm", "QAdd", "QLut")
MAX_K = 65536              # the runtime's bound on the reduction length (int32 accumulators)
MAX_BIAS = 1 << 30


def _scalar(m: ir.Model, name: str):
    """A scalar (or one-element) constant's value, else None."""
    a = m.const(name) if name else None
    return None if a is None or a.size != 1 else a.reshape(-1)[0]


def _dt(m: ir.Model, name: str):
    return m.dtype(name)


def _scale_ok(s) -> bool:
    return s is not None and np.isfinite(np.float32(s)) and float(s) > 0


def _quant_params(m: ir.Model, n: ir.Node):
    """(scale, zero point, code dtype) of a per-tensor QuantizeLinear / DequantizeLinear, else None."""
    s = _scalar(m, n.input(1))
    if not _scale_ok(s):
        return None
    if n.input(2):
        z = _scalar(m, n.input(2))
        if z is None:
            return None
        dt = _dt(m, n.input(2))
    else:
        to = int(n.attrs.get("output_dtype", 0) or 0)
        z, dt = 0, (({3: np.dtype(np.int8)}.get(to, np.dtype(np.uint8) if to in (0, 2) else None))
                    if n.op_type == "QuantizeLinear" else _dt(m, n.inputs[0]))
    if dt not in (np.dtype(np.int8), np.dtype(np.uint8)):
        return None
    return float(np.float32(s)), int(z), dt


def requant_table(M: np.ndarray) -> np.ndarray:
    """I32 [2, C]: per real multiplier M[c] >= 0 (float64) the pair (m, s) with M ~ m 2^-s, m in [2^30, 2^31)
    (rounded half away from zero) and s in [1, 62]; M = 0 (or below 2^-63) gives m = 0."""
    out = np.zeros((2, M.size), np.int64)
    for c, v in enumerate(M.reshape(-1)):
        f, e = np.frexp(float(v))           # v = f 2^e, f in [0.5, 1)
        if v <= 0 or 31 - e > 94:
            out[:, c] = (0, 32)
            continue
        mm = int(np.floor(f * 2.0 ** 31 + 0.5))
        s = 31 - int(e)
        if mm == 1 << 31:
            mm, s = 1 << 30, s - 1
        if s > 62:                           # below 2^-32: fewer bits of m, one rounding
            mm, s = int(np.floor(float(v) * 2.0 ** 62 + 0.5)), 62
        if s < 1:
            raise ValueError(f"multiplier {v} is 2^30 or more")
        out[:, c] = (mm, s)
    return out.astype(np.int32)


class _Int8:
    def __init__(self, m: ir.Model):
        self.m = m
        self.prod = m.producers()
        self.cons = m.consumers()
        self.dead: set = set()
        self.new: dict = {}            # replaced node -> the integer node
        self.count = {}

    def only_user(self, name: str):
        users = self.cons.get(name, [])
        if len(users) != 1 or name in self.m.outputs:
            return None
        return users[0]

    def dq_input(self, name: str, const: bool):
        """When `name` is written by a DequantizeLinear: with const, that node (its operands are checked by the
        caller: weights, biases); else (codes, scale, zero point) when it dequantises run-time int8 codes per
        tensor. None otherwise."""
        d = self.prod.get(name)
        if d is None or d.domain != "" or d.op_type != "DequantizeLinear" or d in self.dead:
            return None
        if const:
            return d
        q = _quant_params(self.m, d)
        if q is None or q[2] != np.dtype(np.int8) or self.m.const(d.inputs[0]) is not None:
            return None
        return d.inputs[0], q[0], q[1]

    def const_weights(self, name: str, channels: int, ch_axis: int):
        """(int8 weights, per-channel float64 scales [channels]) of DQ(constant int8, scale, zero zp)."""
        d = self.dq_input(name, True)
        if d is None:
            return None
        w = self.m.const(d.inputs[0])
        if w is None or w.dtype != np.int8:
            return None
        s = self.m.const(d.input(1))
        z = self.m.const(d.input(2)) if d.input(2) else None
        if s is None or (z is not None and np.any(np.asarray(z) != 0)):
            return None
        s = np.asarray(s, np.float32).reshape(-1).astype(np.float64)
        if s.size == 1:
            s = np.full(channels, s[0])
        elif s.size == channels:
            axis = int(d.attrs.get("axis", 1))
            if axis % w.ndim != ch_axis:
                return None
        else:
            return None
        if not np.all(np.isfinite(s)) or np.any(s <= 0):
            return None
        return w, s

    def output_chain(self, y: str):
        """(Q node, y_min, y_max, nodes consumed) for the reader chain [Relu | Clip] -> Q of y."""
        u = self.only_user(y)
        acts = []
        lo_f = hi_f = None
        if u is not None and u.domain == "" and u.op_type in ("Relu", "Clip"):
            if u.op_type == "Relu":
                lo_f = 0.0
            else:
                lo_f = _scalar(self.m, u.input(1)) if u.input(1) else -np.inf
                hi_f = _scalar(self.m, u.input(2)) if u.input(2) else np.inf
                if lo_f is None or hi_f is None or any(k in u.attrs for k in ("min", "max")):
                    return None
            acts = [u]
            u = self.only_user(u.outputs[0])
        if u is None or u.domain != "" or u.op_type != "QuantizeLinear" or u.inputs[0] != (acts[-1].outputs[0] if acts else y):
            return None
        q = _quant_params(self.m, u)
        if q is None or q[2] != np.dtype(np.int8):
            return None
        s, z, _ = q
        lo, hi = -128, 127

        def code(v):
            return int(np.clip(np.rint(np.float32(v) / np.float32(s)) + z, -128, 127))
        if lo_f is not None and np.isfinite(lo_f):
            lo = max(lo, code(lo_f))
        if hi_f is not None and np.isfinite(hi_f):
            hi = min(hi, code(hi_f))
        if lo > hi:
            return None
        return u, s, z, lo, hi, acts

    def bias(self, name: str, scales: np.ndarray, channels: int):
        """int32 bias codes at scale `scales` (float64 [channels]) of a DQ(int32) or float constant bias."""
        if not name:
            return np.zeros(channels, np.int64)
        d = self.dq_input(name, True)
        if d is not None and self.m.const(d.inputs[0]) is not None and self.m.const(d.inputs[0]).dtype == np.int32:
            b = np.asarray(self.m.const(d.inputs[0]), np.int64).reshape(-1)
            sb = self.m.const(d.input(1))
            if sb is None or (d.input(2) and np.any(np.asarray(self.m.const(d.input(2))) != 0)):
                return None
            sb = np.broadcast_to(np.asarray(sb, np.float32).reshape(-1).astype(np.float64), (channels,))
            if b.size != channels:
                return None
            if np.allclose(sb, scales, rtol=1e-6, atol=0):
                return b
            return np.rint(b * sb / scales).astype(np.int64)
        a = self.m.const(name)
        if a is None or a.dtype != np.float32 or a.size != channels:
            return None
        return np.rint(a.reshape(-1).astype(np.float64) / scales).astype(np.int64)

    def emit(self, old: list, op_type: str, inputs: list, output: str, attrs: dict) -> None:
        from onnx import helper
        name = old[0].name or output
        n = ir.Node(op_type, list(inputs), [output], dict(attrs), name, DOMAIN,
                    proto=helper.make_node(op_type, list(inputs), [output], name=name, domain=DOMAIN, **attrs))
        self.new[old[0]] = n
        self.dead.update(old[1:])
        self.count[op_type] = self.count.get(op_type, 0) + 1

    def integer_op(self, n: ir.Node, x: tuple, w: np.ndarray, sw: np.ndarray, b, out, op_type: str,
                   attrs: dict, fold_axes) -> bool:
        """Emit the integer op for n: x = (codes, scale, zero point); w int8 weights with per-channel scales sw;
        b the int32 bias codes at scale sx sw (int64 [C], or None: refused); out = (Q node or None when n
        writes the codes itself, sy, zy, y_min, y_max, activation nodes); fold_axes: w's axes summed for the
        zero-point fold."""
        xq, sx, zx = x
        q, sy, zy, lo, hi, acts = out
        M = sx * sw / sy
        if b is None or np.any(M >= 2.0 ** 30):
            return False
        b = b - zx * w.astype(np.int64).sum(axis=fold_axes).reshape(-1)
        if np.any(np.abs(b) > MAX_BIAS):
            return False
        m = self.m
        y = q.outputs[0] if q is not None else n.outputs[0]
        base = n.name or y
        ins = [xq, m.add_const(f"{base}/w8", w), m.add_const(f"{base}/b32", b.astype(np.int32)),
               m.add_const(f"{base}/requant", requant_table(M))]
        attrs = dict(attrs, x_zero=int(zx), y_zero=int(zy), y_min=int(lo), y_max=int(hi))
        self.emit([n] + acts + ([q] if q is not None else []), op_type, ins, y, attrs)
        return True

    # ---- the patterns ----
    def conv(self, n: ir.Node) -> bool:
        x = self.dq_input(n.inputs[0], False)
        shp = self.m.static_shape(n.inputs[0])
        if x is None or shp is None or len(shp) != 4 or len(n.inputs) < 2:
            return False
        wd = self.dq_input(n.inputs[1], True)
        if wd is None or self.m.const(wd.inputs[0]) is None:
            return False
        M = self.m.const(wd.inputs[0]).shape[0]
        ws = self.const_weights(n.inputs[1], M, 0)
        if ws is None or ws[0].ndim != 4:
            return False
        w, sw = ws
        if int(np.prod(w.shape[1:])) > MAX_K or n.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
            return False
        out = self.output_chain(n.outputs[0])
        if out is None:
            return False
        attrs = {k: v for k, v in n.attrs.items() if k in ("strides", "pads", "dilations", "group", "auto_pad")}
        attrs["kernel_shape"] = list(w.shape[2:])
        b = self.bias(n.input(2), x[1] * sw, sw.size)
        return self.integer_op(n, x, w, sw, b, out, "QConv", attrs, (1, 2, 3))

    def matmul(self, n: ir.Node) -> bool:
        """MatMul(A, B const [K, N]) and Gemm(A, B, C) with transA 0, alpha = beta = 1."""
        if n.op_type == "Gemm" and (int(n.attrs.get("transA", 0)) or float(n.attrs.get("alpha", 1.0)) != 1.0
                                    or float(n.attrs.get("beta", 1.0)) != 1.0):
            return False
        x = self.dq_input(n.inputs[0], False)
        shp = self.m.static_shape(n.inputs[0])
        if x is None or shp is None or len(shp) < 2 or len(n.inputs) < 2:
            return False
        wd = self.dq_input(n.inputs[1], True)
        if wd is None or self.m.const(wd.inputs[0]) is None or self.m.const(wd.inputs[0]).ndim != 2:
            return False
        trans = n.op_type == "Gemm" and int(n.attrs.get("transB", 0))
        raw = self.m.const(wd.inputs[0])
        N = raw.shape[0] if trans else raw.shape[1]
        ws = self.const_weights(n.inputs[1], N, 0 if trans else 1)
        if ws is None:
            return False
        w, sw = ws
        if trans:
            w = np.ascontiguousarray(w.T)
        if w.shape[0] != shp[-1] or w.shape[0] > MAX_K or (n.op_type == "Gemm" and len(shp) != 2):
            return False
        out = self.output_chain(n.outputs[0])
        if out is None:
            return False
        b = self.bias(n.input(2) if n.op_type == "Gemm" else "", x[1] * sw, sw.size)
        return self.integer_op(n, x, w, sw, b, out, "QGemm", {}, (0,))

    def qlinear_conv(self, n: ir.Node) -> bool:
        """QLinearConv(x, sx, zx, w, sw, zw, sy, zy, B) with int8 codes and constant symmetric weights."""
        m = self.m
        sx, zx, sy, zy = (_scalar(m, n.input(i)) for i in (1, 2, 6, 7))
        w = m.const(n.input(3))
        sw = m.const(n.input(4))
        zw = m.const(n.input(5))
        shp = m.static_shape(n.inputs[0])
        if (None in (sx, zx, sy, zy) or w is None or sw is None or zw is None or np.any(zw != 0) or w.dtype != np.int8
                or _dt(m, n.input(2)) != np.int8 or _dt(m, n.input(7)) != np.int8 or shp is None or len(shp) != 4
                or w.ndim != 4 or not _scale_ok(sx) or not _scale_ok(sy) or n.outputs[0] in m.outputs):
            return False
        sw = np.broadcast_to(np.asarray(sw, np.float32).reshape(-1).astype(np.float64), (w.shape[0],))
        if np.any(sw <= 0) or int(np.prod(w.shape[1:])) > MAX_K:
            return False
        sx, sy = float(np.float32(sx)), float(np.float32(sy))
        b = m.const(n.input(8)) if n.input(8) else np.zeros(w.shape[0], np.int32)   # at scale sx sw exactly
        if b is None or b.size != w.shape[0]:
            return False
        attrs = {k: v for k, v in n.attrs.items() if k in ("strides", "pads", "dilations", "group", "auto_pad")}
        attrs["kernel_shape"] = list(w.shape[2:])
        return self.integer_op(n, (n.inputs[0], sx, int(zx)), w, sw, np.asarray(b, np.int64).reshape(-1),
                               (None, sy, int(zy), -128, 127, []), "QConv", attrs, (1, 2, 3))

    def qlinear_matmul(self, n: ir.Node) -> bool:
        """QLinearMatMul(a, sa, za, b, sb, zb, sy, zy) with int8 codes and constant symmetric int8 b [K, N]."""
        m = self.m
        sa, za, sy, zy = (_scalar(m, n.input(i)) for i in (1, 2, 6, 7))
        b, sb, zb = (m.const(n.input(i)) for i in (3, 4, 5))
        shp = m.static_shape(n.inputs[0])
        if (None in (sa, za, sy, zy) or b is None or sb is None or zb is None or np.any(zb != 0) or b.dtype != np.int8
                or b.ndim != 2 or _dt(m, n.input(2)) != np.int8 or _dt(m, n.input(7)) != np.int8 or shp is None
                or len(shp) < 2 or shp[-1] != b.shape[0] or b.shape[0] > MAX_K or not _scale_ok(sa) or not _scale_ok(sy)
                or n.outputs[0] in m.outputs):
            return False
        sb = np.asarray(sb, np.float32).reshape(-1).astype(np.float64)
        if sb.size not in (1, b.shape[1]) or np.any(sb <= 0):
            return False
        sb = np.broadcast_to(sb, (b.shape[1],))
        sa, sy = float(np.float32(sa)), float(np.float32(sy))
        return self.integer_op(n, (n.inputs[0], sa, int(za)), b, sb, np.zeros(b.shape[1], np.int64),
                               (None, sy, int(zy), -128, 127, []), "QGemm", {}, (0,))

    def add_params(self, sa: float, za: int, sb: float, zb: int, sy: float, zy: int, lo: int, hi: int):
        """QADD's params (plan_format.h ep_qadd_params): both inputs rescaled to twice the larger scale with 20
        bits of headroom, then the sum to the output's."""
        twice = 2.0 * max(sa, sb)
        ry = twice / (2.0 ** 20 * sy)
        if ry >= 2.0 ** 30:
            return None
        (ma, mb, my), (sha, shb, shy) = requant_table(np.array([sa / twice, sb / twice, ry]))
        return {"a_zero": za, "b_zero": zb, "y_zero": zy, "y_min": lo, "y_max": hi, "a_mult": int(ma),
                "a_shift": int(sha), "b_mult": int(mb), "b_shift": int(shb), "y_mult": int(my), "y_shift": int(shy)}

    def add(self, n: ir.Node) -> bool:
        """Add of two dequantised int8 tensors of one static shape, requantised."""
        if len(n.inputs) != 2:
            return False
        xs = [self.dq_input(i, False) for i in n.inputs]
        shapes = [self.m.static_shape(i) for i in n.inputs]
        if None in xs or None in shapes or shapes[0] != shapes[1]:
            return False
        out = self.output_chain(n.outputs[0])
        if out is None:
            return False
        q, sy, zy, lo, hi, acts = out
        (a, sa, za), (b, sb, zb) = xs
        params = self.add_params(sa, za, sb, zb, sy, zy, lo, hi)
        if params is None:
            return False
        self.emit([n] + acts + [q], "QAdd", [a, b], q.outputs[0], params)
        return True

    def qlinear_add(self, n: ir.Node) -> bool:
        """com.microsoft QLinearAdd(a, sa, za, b, sb, zb, sy, zy) of int8 codes of one static shape."""
        m = self.m
        vals = [_scalar(m, n.input(i)) for i in (1, 2, 4, 5, 6, 7)]
        shapes = [m.static_shape(n.input(i)) for i in (0, 3)]
        if (None in vals or None in shapes or shapes[0] != shapes[1] or n.outputs[0] in m.outputs
                or any(_dt(m, n.input(i)) != np.int8 for i in (2, 5, 7)) or not all(_scale_ok(vals[i]) for i in (0, 2, 4))
                or m.const(n.input(0)) is not None or m.const(n.input(3)) is not None):
            return False
        sa, za, sb, zb, sy, zy = vals
        params = self.add_params(float(np.float32(sa)), int(za), float(np.float32(sb)), int(zb), float(np.float32(sy)),
                                 int(zy), -128, 127)
        if params is None:
            return False
        self.emit([n], "QAdd", [n.input(0), n.input(3)], n.outputs[0], params)
        self.m.value(n.outputs[0]).shape = tuple(shapes[0])     # onnx infers no com.microsoft shapes
        return True


# where each op keeps the zero point of the codes it writes (output 0) and of the codes it reads (by input)
_UNARY = ("QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearSigmoid", "QLinearLeakyRelu")
_ZP_OUT = {"QuantizeLinear": 2, "QLinearConv": 7, "QLinearMatMul": 7, "QLinearAdd": 7, "QLinearMul": 7,
           **{k: 4 for k in _UNARY}}
# ops whose output codes are some of their input's, unchanged (uint8 -> int8, monotonic, commutes with them)
_TRANSPARENT = ("Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Identity", "MaxPool")
_ZP_IN = {"DequantizeLinear": {0: 2}, "QLinearConv": {0: 2}, "QLinearMatMul": {0: 2}, "QLinearAdd": {0: 2, 3: 5},
          "QLinearMul": {0: 2, 3: 5}, **{k: {0: 2} for k in _UNARY}}
_ZP_DOMAIN = {k: "com.microsoft" for k in ("QLinearAdd", "QLinearMul") + _UNARY}     # the others are ONNX's


def _rename_u8(m: ir.Model) -> int:
    """uint8 activation codes become int8 codes, their zero points - 128, where every op that writes or reads
    them keeps the zero point as an input it has (QuantizeLinear, DequantizeLinear, QLinearConv and
    QLinearMatMul's first operand): the same real values, the codes xor 0x80."""
    cons = m.consumers()
    done = 0

    def zp_u8(name):
        z = m.const(name) if name else None
        return z is not None and z.dtype == np.uint8 and z.size == 1

    for p in m.nodes:
        zi = _ZP_OUT.get(p.op_type)
        if zi is None or p.domain != _ZP_DOMAIN.get(p.op_type, "") or not p.outputs or not zp_u8(p.input(zi)):
            continue
        group, reads, ok, todo = [], [], True, [p.outputs[0]]
        while todo and ok:      # the codes, and the views of them that ops transparent to codes make
            y = todo.pop()
            group.append(y)
            users = cons.get(y, [])
            if y in m.outputs or not users:
                ok = False
            for u in users:
                idx = [i for i, name in enumerate(u.inputs) if name == y]
                if u.domain == "" and u.op_type in _TRANSPARENT and idx == [0] and len([o for o in u.outputs if o]) == 1:
                    todo.append(u.outputs[0])
                    continue
                slots = _ZP_IN.get(u.op_type, {}) if u.domain == _ZP_DOMAIN.get(u.op_type, "") else {}
                if not idx or any(i not in slots or not zp_u8(u.input(slots[i])) for i in idx):
                    ok = False
                    break
                reads += [(u, slots[i]) for i in idx]
        if not ok:
            continue
        for node, zslot in [(p, zi)] + reads:
            zu = m.const(node.inputs[zslot])
            node.inputs[zslot] = m.add_const(f"{node.inputs[zslot]}/i8", (zu.astype(np.int16) - 128).astype(np.int8))
        for y in group:
            m.value(y).dtype = np.dtype(np.int8)
        done += 1
    return done


# ops that move codes without changing them: DQ -> op -> Q with one scale and zero point is the op on the codes
_MOVES = ("Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Identity", "Slice", "Concat", "MaxPool")


def _moves(m: ir.Model, codes: set) -> None:
    """DequantizeLinear -> a code-moving op -> QuantizeLinear, every scale and zero point one, on codes an integer
    op (or such a move) wrote: the op runs on the int8 codes and writes the QuantizeLinear's output."""
    prod = m.producers()
    cons = m.consumers()
    dead = set()
    for n in m.nodes:
        if n.domain != "" or n.op_type not in _MOVES or len([o for o in n.outputs if o]) != 1:
            continue
        data = n.inputs if n.op_type == "Concat" else n.inputs[:1]
        dqs = [prod.get(i) for i in data]
        if not dqs or any(d is None or d.op_type != "DequantizeLinear" or d.domain != "" or d.inputs[0] not in codes
                          for d in dqs):
            continue
        users = cons.get(n.outputs[0], [])
        if len(users) != 1 or n.outputs[0] in m.outputs or users[0].op_type != "QuantizeLinear" or users[0].domain != "":
            continue
        q = users[0]
        params = {_quant_params(m, d) for d in dqs + [q]}
        if len(params) != 1 or None in params or next(iter(params))[2] != np.dtype(np.int8):
            continue
        k = len(data)
        n.inputs = [d.inputs[0] for d in dqs] + n.inputs[k:]
        n.outputs = [q.outputs[0]]
        if n.proto is not None:
            del n.proto.input[:]
            n.proto.input.extend(n.inputs[:len(n.inputs) - len(n.captures)])
            n.proto.output[0] = q.outputs[0]
        dead.add(q)
        codes.add(q.outputs[0])
    m.nodes = [n for n in m.nodes if n not in dead]


# element-wise ops of one float value (with scalar constants): a chain of them between quantised tensors is a
# function of one int8 code, tabulated (QLUT)
_POINTWISE = ("Relu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu", "Selu", "Celu",
              "Softplus", "Softsign", "Gelu", "Erf", "Mish", "ThresholdedRelu", "Neg", "Abs", "Exp", "Log", "Sqrt",
              "Reciprocal", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "QuantizeLinear", "DequantizeLinear",
              "Identity")


def _lut_cone(m: ir.Model, q: ir.Node, prod: dict, cons: dict, codes: set):
    """(root codes, root DequantizeLinear, cone nodes in graph order) when q's input is a _POINTWISE function of
    one tensor of int8 codes in `codes` through its DequantizeLinear, nothing else reading the cone; else None."""
    cone, roots, todo, seen = [], set(), [q.inputs[0]], set()
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        p = prod.get(t)
        if p is None or p.domain != "" or p.op_type not in _POINTWISE or len([o for o in p.outputs if o]) != 1:
            return None
        if p.op_type == "DequantizeLinear" and getattr(prod.get(p.inputs[0]), "op_type", "") != "QuantizeLinear":
            qp = _quant_params(m, p)
            if p.inputs[0] not in codes or qp is None or qp[2] != np.dtype(np.int8):
                return None
            roots.add((p.inputs[0], qp[:2]))
            cone.append(p)
            continue
        if p.op_type in ("QuantizeLinear", "DequantizeLinear") and _quant_params(m, p) is None:
            return None
        for i, name in enumerate(p.inputs):
            if not name:
                continue
            c = m.const(name)
            if c is not None:
                if c.size != 1 and not (p.op_type in ("QuantizeLinear", "DequantizeLinear") and i > 0):
                    return None
                continue
            todo.append(name)
        cone.append(p)
    if len(roots) != 1 or len(cone) < 2:
        return None
    inside = set(map(id, cone)) | {id(q)}
    root_dq = [n for n in cone if n.op_type == "DequantizeLinear" and n.inputs[0] == next(iter(roots))[0]]
    for n in cone:
        if n in root_dq:
            continue
        for o in n.outputs:
            if o in m.outputs or any(id(u) not in inside for u in cons.get(o, [])):
                return None
    order = {id(n): k for k, n in enumerate(m.nodes)}
    return next(iter(roots)), root_dq, sorted(cone, key=lambda n: order[id(n)])


def _lut_table(m: ir.Model, q: ir.Node, root: tuple, root_dq: list, cone: list) -> np.ndarray:
    """The 256 output codes of the cone, evaluated by onnx's reference evaluator on every input code."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
    (_, (s, z)), codes = root, np.arange(-128, 128)
    x = ((codes - z).astype(np.float32) * np.float32(s)).astype(np.float32)
    body = [n for n in cone if n not in root_dq] + [q]
    consts = {i for n in body for i in n.inputs if i and m.const(i) is not None}
    inits = [numpy_helper.from_array(np.asarray(m.const(i)), i) for i in sorted(consts)]
    nodes = [helper.make_node(n.op_type, list(n.inputs), list(n.outputs), **{k: v for k, v in n.attrs.items()})
             for n in body]
    feeds = {d.outputs[0]: x for d in root_dq}
    g = helper.make_graph(nodes, "lut", [helper.make_tensor_value_info(k, TensorProto.FLOAT, [256]) for k in feeds],
                          [helper.make_tensor_value_info(q.outputs[0], TensorProto.INT8, [256])], inits)
    # the reference evaluator has Q / DQ from opset 19; these element-wise ops mean the same there
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", max(19, m.opset))])
    return np.asarray(ReferenceEvaluator(model).run(None, feeds)[0]).astype(np.int8).reshape(256)


def _luts(m: ir.Model, codes: set) -> int:
    """Each QuantizeLinear to int8 whose input is a _POINTWISE chain of codes an integer op wrote, as one QLut."""
    from onnx import helper
    prod, cons = m.producers(), m.consumers()
    done, dead, new = 0, set(), {}
    for q in reversed(m.nodes):      # the last QuantizeLinear first: the longest chain, inner Q/DQ pairs in it
        if q in dead or q.domain != "" or q.op_type != "QuantizeLinear":
            continue
        qp = _quant_params(m, q)
        if qp is None or qp[2] != np.dtype(np.int8):
            continue
        found = _lut_cone(m, q, prod, cons, codes)
        if found is None or any(n in dead for n in found[2]):
            continue
        root, root_dq, cone = found
        try:
            table = _lut_table(m, q, root, root_dq, cone)
        except Exception:  # noqa: BLE001 - an op the reference evaluator cannot run: the chain stays float
            continue
        tname = m.add_const(f"{q.name or q.outputs[0]}/lut", table)
        new[q] = ir.Node("QLut", [root[0], tname], [q.outputs[0]], {}, q.name, DOMAIN,
                         proto=helper.make_node("QLut", [root[0], tname], [q.outputs[0]], name=q.name, domain=DOMAIN))
        dead.update(n for n in cone if n not in root_dq or not any(
            u not in cone and u is not q for u in cons.get(n.outputs[0], [])))
        codes.add(q.outputs[0])
        m.value(q.outputs[0]).dtype = np.dtype(np.int8)
        done += 1
    m.nodes = [new.get(n, n) for n in m.nodes if n not in dead]
    return done


def _boundaries(m: ir.Model) -> None:
    """Every per-tensor QuantizeLinear (float32 to int8 / uint8 codes) and DequantizeLinear (of such codes, to
    float32) not absorbed into an integer op, as edgeplan Quantize / Dequantize: one runtime op each where the
    float rewrite (passes/qdq.py) takes four or five, with the same result. A QuantizeLinear that only
    DequantizeLinear nodes read (an activation's fake quantisation) stays a pair for qdq.fold_pairs."""
    from onnx import helper
    cons = m.consumers()
    pairs = {n.outputs[0] for n in m.nodes if n.domain == "" and n.op_type == "QuantizeLinear" and n.outputs
             and n.outputs[0] not in m.outputs and cons.get(n.outputs[0])
             and all(u.domain == "" and u.op_type == "DequantizeLinear" for u in cons[n.outputs[0]])}
    out = []
    for n in m.nodes:
        if n.domain == "" and n.op_type in ("QuantizeLinear", "DequantizeLinear") and not (
                n.outputs[0] if n.op_type == "QuantizeLinear" else n.inputs[0]) in pairs:
            q = _quant_params(m, n)
            x = n.inputs[0]
            if q is not None and m.const(x) is None and (
                    _dt(m, x) == np.float32 if n.op_type == "QuantizeLinear" else _dt(m, n.input(1)) == np.float32):
                op = "Quantize" if n.op_type == "QuantizeLinear" else "Dequantize"
                attrs = {"scale": q[0], "zero_point": q[1]}
                if op == "Quantize":
                    attrs["to"] = "u8" if q[2] == np.dtype(np.uint8) else "i8"
                nn = ir.Node(op, [x], list(n.outputs), attrs, n.name, DOMAIN,
                             proto=helper.make_node(op, [x], list(n.outputs), name=n.name, domain=DOMAIN, **attrs))
                out.append(nn)
                continue
        out.append(n)
    m.nodes = out


def _code_scales(m: ir.Model) -> dict:
    """{codes tensor: (scale, zero point)} of every per-tensor QuantizeLinear output and DequantizeLinear input,
    and of the QLinear ops' outputs (for edgeplan inspect)."""
    out = {}
    for n in m.nodes:
        if n.domain == "" and n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            q = _quant_params(m, n)
            if q is not None:
                out[n.outputs[0] if n.op_type == "QuantizeLinear" else n.inputs[0]] = q[:2]
        elif n.op_type in ("QLinearConv", "QLinearMatMul", "QLinearAdd"):
            s, z = _scalar(m, n.input(6)), _scalar(m, n.input(7))
            if _scale_ok(s) and z is not None:
                out[n.outputs[0]] = (float(np.float32(s)), int(z))
        elif n.domain == "" and n.op_type in _TRANSPARENT and n.inputs and n.inputs[0] in out and n.outputs:
            out[n.outputs[0]] = out[n.inputs[0]]      # codes moved, not changed
    return out


def int8_ops(m: ir.Model, notes: list) -> None:
    """Rewrite every whole quantised chain of m as an integer op (module docstring); m.code_scales gets the scale and
    zero point of the int8 codes the plan will hold."""
    _rename_u8(m)
    scales = _code_scales(m)
    r = _Int8(m)
    for n in list(m.nodes):
        if n in r.dead:
            continue
        if n.domain == "com.microsoft" and n.op_type == "QLinearAdd":
            r.qlinear_add(n)
        if n.domain != "":
            continue
        if n.op_type == "Conv":
            r.conv(n)
        elif n.op_type in ("MatMul", "Gemm"):
            r.matmul(n)
        elif n.op_type == "QLinearConv":
            r.qlinear_conv(n)
        elif n.op_type == "QLinearMatMul":
            r.qlinear_matmul(n)
        elif n.op_type == "Add":
            r.add(n)
    if not r.new:
        return
    m.nodes = [r.new.get(n, n) for n in m.nodes if n not in r.dead]
    for n in r.new.values():
        m.value(n.outputs[0]).dtype = np.dtype(np.int8)
    codes = {n.outputs[0] for n in r.new.values()}
    luts = 0
    while True:
        before = len(codes)
        _moves(m, codes)
        luts += _luts(m, codes)
        if len(codes) == before:
            break
    if luts:
        r.count["QLut"] = luts
    _boundaries(m)
    held = set(codes)
    for n in m.nodes:
        if n.domain == DOMAIN:
            held.update(n.outputs if n.op_type == "Quantize" else n.inputs[:2 if n.op_type == "QAdd" else 1])
    m.code_scales = {t: scales[t] for t in sorted(held) if t in scales}
    # the DequantizeLinear nodes that only the replaced ops read are left without readers: cleanup drops them
    notes.append("int8: " + ", ".join(f"{v} {k}" for k, v in sorted(r.count.items())))

"""Fusion.

1. Gemm and MatMul with a constant 2-D f32 B become EpGemm(A, B[K,N], C[N]|C[M,N]|"") with alpha/beta
   and transB folded into the constants (transA becomes a Transpose node, a runtime C an Add after it).
2. Conv / ConvTranspose / EpGemm grow an epilogue y = act(acc + bias + residual) by absorbing, while the
   intermediate value has no other consumer and is not a graph output: BatchNormalization, a per-channel
   constant Mul (both only before any bias/residual/activation beyond the weights), Add/Sub of a
   per-channel constant (bias), Add of a same-shape runtime tensor (residual; not ConvTranspose), then
   one activation (Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, x*Sigmoid(x) = SiLU, or the
   erf GELU).
   Nothing is fused after the activation.
3. Binary ops absorb a following activation; x*Sigmoid(x), x*HardSigmoid(x; 1/6, 1/2) and the erf form of
   GELU become one EpAct node.
4. Attention: MatMul(Q, KT) -> [Mul / Div by a scalar constant] -> [Add MASK] -> Softmax(last axis) ->
   MatMul(., V) becomes one EpAttention(Q, KT, V[, MASK]; scale, divide) node, when V's and MASK's dims
   broadcast into the scores' without extending them: the scores never reach the arena.
Every fusion is recorded as a line in notes.
"""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from .. import acts, ir, limits

BINARY = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"}


def _per_channel(arr, yshape, axis):
    """arr as a float64 vector over dim `axis` of yshape if it broadcasts per channel, else None."""
    if arr is None or yshape is None or arr.dtype != np.float32 or arr.ndim > len(yshape):
        return None
    r = len(yshape)
    ax = axis % r
    bs = (1,) * (r - arr.ndim) + tuple(arr.shape)
    if any(d != 1 for i, d in enumerate(bs) if i != ax) or bs[ax] not in (1, yshape[ax]):
        return None
    return np.broadcast_to(arr.reshape(bs[ax]).astype(np.float64), (yshape[ax],))


class _Fuser:
    def __init__(self, m: ir.Model, notes: list):
        self.m, self.notes = m, notes
        self.cons = m.consumers()
        self.outs = set(m.outputs)
        self.dead = set()

    def users(self, v):
        return [n for n in self.cons.get(v, []) if n not in self.dead]

    def sole_user(self, v):
        if v in self.outs:
            return None
        us = self.users(v)
        if len(us) != 1 or us[0].inputs.count(v) != 1:
            return None
        if us[0].domain != "" and us[0].op_type != "EpAct":   # an ONNX op, or an activation a pattern made
            return None
        return us[0]

    def absorb(self, anchor, c, extra=()):
        """anchor takes over c's output; c dies; `extra` are c's inputs anchor now reads."""
        anchor.outputs[0] = c.outputs[0]
        self.dead.add(c)
        for v in extra:
            self.cons.setdefault(v, []).append(anchor)

    # ---------------------------------------------------------------- conv/gemm epilogues
    def _axis(self, n):
        return -1 if n.op_type == "EpGemm" else 1

    def _channels(self, n, W):
        if n.op_type == "Conv":
            return W.shape[0]
        if n.op_type == "ConvTranspose":
            return W.shape[1] * int(n.attrs.get("group", 1))
        return W.shape[1]

    def scale_shift(self, n, s=None, t=None) -> bool:
        """Rewrite n's constants so that its output becomes s*y + t (per output channel)."""
        m = self.m
        W = m.const(n.inputs[1])
        if W is None or W.dtype != np.float32 or W.ndim < (3 if n.op_type in ("Conv", "ConvTranspose") else 2):
            return False
        C = self._channels(n, W)
        bname = n.input(2)
        b = m.const(bname) if bname else np.zeros(C, np.float32)
        if b is None or b.shape != (C,):
            return False   # a bias or weight of another shape: left unfused, for the op's lowering to refuse
        b = b.astype(np.float64)
        if s is not None:
            s = np.broadcast_to(np.asarray(s, np.float64), (C,))
            k = W.ndim - 2
            if n.op_type == "Conv":
                W2 = W * s.reshape((C,) + (1,) * (W.ndim - 1))
            elif n.op_type == "ConvTranspose":
                g = int(n.attrs.get("group", 1))
                W2 = (W.reshape((g, W.shape[0] // g, W.shape[1]) + W.shape[2:])
                      * s.reshape((g, 1, W.shape[1]) + (1,) * k)).reshape(W.shape)
            else:
                W2 = W * s[None, :]
            b = b * s
            n.inputs[1] = m.add_const(f"{n.name}.weight_fused", W2.astype(np.float32))
        if t is not None:
            b = b + np.asarray(t, np.float64)
        while len(n.inputs) < 3:
            n.inputs.append("")
        n.inputs[2] = m.add_const(f"{n.name}.bias_fused", b.astype(np.float32))
        return True

    def try_bn(self, n, bn) -> bool:
        m = self.m
        if bn.attrs.get("training_mode", 0) or any(o for o in bn.outputs[1:]):
            return False
        p = [m.const(bn.input(i)) for i in range(1, 5)]
        if any(a is None for a in p):
            return False
        sc, bi, mean, var = (a.astype(np.float64).reshape(-1) for a in p)
        W = m.const(n.inputs[1])
        if W is None or W.ndim < 2 or not (len(sc) == len(bi) == len(mean) == len(var) == self._channels(n, W)):
            return False
        s = sc / np.sqrt(var + float(bn.attrs.get("epsilon", 1e-5)))
        return self.scale_shift(n, s, bi - mean * s)

    def try_silu(self, n, us) -> bool:
        y = n.outputs[0]
        sig = [u for u in us if u.op_type == "Sigmoid" and u.domain == "" and u.inputs == [y]]
        if len(sig) != 1:
            return False
        s = sig[0]
        mul = self.sole_user(s.outputs[0])
        if mul is None or mul.op_type != "Mul" or set(mul.inputs) != {y, s.outputs[0]} or mul not in us:
            return False
        n.attrs.update(ep_act=K.EP_ACT_SILU, ep_alpha=0.0, ep_beta=0.0)
        self.dead.add(s)
        self.absorb(n, mul)
        return True

    def grow(self, n):
        m = self.m
        parts = []
        while True:
            y = n.outputs[0]
            if y in self.outs:
                break
            has_act = "ep_act" in n.attrs
            has_res = len(n.inputs) > 3 and bool(n.inputs[3])
            us = self.users(y)
            if len(us) == 2 and not has_act and self.try_silu(n, us):
                parts.append("Sigmoid + Mul (SiLU)")
                continue
            c = self.sole_user(y)
            if c is None:
                break
            yshape = m.static_shape(y)
            other = [i for i in c.inputs if i != y]
            if c.op_type == "BatchNormalization" and not has_act and not has_res and self.try_bn(n, c):
                parts.append("BatchNormalization")
                self.absorb(n, c)
                continue
            if c.op_type == "Mul" and not has_act and not has_res and len(other) == 1:
                s = _per_channel(m.const(other[0]), yshape, self._axis(n))
                if s is not None and self.scale_shift(n, s=s):
                    parts.append("Mul (scale)")
                    self.absorb(n, c)
                    continue
                break
            if c.op_type in ("Add", "Sub") and not has_act and len(other) == 1:
                if c.op_type == "Sub" and c.inputs[0] != y:
                    break
                t = _per_channel(m.const(other[0]), yshape, self._axis(n))
                if t is not None:
                    if self.scale_shift(n, t=-t if c.op_type == "Sub" else t):
                        parts.append(f"{c.op_type} (bias)")
                        self.absorb(n, c)
                        continue
                    break
                r = other[0]
                if (c.op_type == "Add" and n.op_type != "ConvTranspose" and not has_res and m.const(r) is None
                        and yshape is not None and m.static_shape(r) == yshape
                        and m.values[r].dtype == np.float32):
                    while len(n.inputs) < 3:
                        n.inputs.append("")
                    n.inputs.append(r)
                    parts.append("Add (residual)")
                    self.absorb(n, c, extra=[r])
                    continue
                break
            act = None if has_act else acts.epilogue(m, c)
            if act is not None:
                n.attrs.update(ep_act=act[0], ep_alpha=act[1], ep_beta=act[2])
                parts.append(c.op_type)
                self.absorb(n, c)
                continue
            break
        if parts:
            self.notes.append(f"{n.op_type} '{n.name}' + " + " + ".join(parts))

    # ---------------------------------------------------------------- binary + patterns
    def grow_binary(self, n):
        if "ep_act" in n.attrs or len(n.inputs) != 2:
            return
        v = self.m.values.get(n.outputs[0])
        if v is not None and v.dtype is not None and v.dtype != np.float32:   # integer binaries: no activation
            return
        c = self.sole_user(n.outputs[0])
        act = acts.epilogue(self.m, c) if c is not None else None
        if act is None:
            return
        n.attrs.update(ep_act=act[0], ep_alpha=act[1], ep_beta=act[2])
        self.absorb(n, c)
        self.notes.append(f"{n.op_type} '{n.name}' + {c.op_type}")

    def gate_pattern(self, s):
        """x * Sigmoid(x) -> SiLU, x * HardSigmoid(x; 1/6, 0.5) -> HardSwish (as one EpAct node s)."""
        if s.op_type == "Sigmoid":
            kind, what = K.EP_ACT_SILU, "SiLU"
        elif (s.op_type == "HardSigmoid" and abs(float(s.attrs.get("alpha", 0.2)) - 1 / 6) < 1e-6
              and abs(float(s.attrs.get("beta", 0.5)) - 0.5) < 1e-7):
            kind, what = K.EP_ACT_HARD_SWISH, "HardSwish"
        else:
            return
        x = s.inputs[0]
        mul = self.sole_user(s.outputs[0])
        if mul is None or mul.op_type != "Mul" or sorted(mul.inputs) != sorted([x, s.outputs[0]]):
            return
        self.notes.append(f"{s.op_type} '{s.name}' + Mul '{mul.name}' -> {what}")
        s.op_type, s.domain, s.attrs, s.proto = "EpAct", ir.EP_DOMAIN, {"kind": kind}, None
        self.absorb(s, mul)

    def _scalar_const(self, n, y):
        """The other input of binary n (besides y) as a float when it is a one-element constant, else None."""
        o = [i for i in n.inputs if i != y]
        k = self.m.const(o[0]) if len(o) == 1 and len(n.inputs) == 2 else None
        return float(k.reshape(-1)[0]) if k is not None and k.size == 1 else None

    def hardswish_pattern(self, a):
        """x * Clip(x + 3, 0, 6) / 6 (Paddle's and many exporters' HardSwish), with the division on the
        product or on the clip, or a multiplication by 1/6 -> EpAct HARD_SWISH (x * clip(x/6 + 1/2, 0, 1):
        the same function, rounded differently by an ulp or two)."""
        m = self.m
        if a.op_type != "Add" or len(a.inputs) != 2:
            return
        x = next((i for i in a.inputs if m.const(i) is None), None)
        if x is None or self._scalar_const(a, x) != 3.0 or a.outputs[0] in self.outs:
            return
        c = self.sole_user(a.outputs[0])
        if c is None or c.op_type != "Clip" or c.domain != "" or c.outputs[0] in self.outs:
            return
        try:
            kind, lo, hi = acts.activation(m, c)
        except acts.ActError:
            return
        if (lo, hi) != (0.0, 6.0):
            return

        def sixth(n, y):   # n divides y by 6 (or multiplies it by 1/6)
            k = self._scalar_const(n, y) if n is not None else None
            if k is None:
                return False
            if n.op_type == "Div":
                return n.inputs[0] == y and k == 6.0
            return n.op_type == "Mul" and abs(k * 6.0 - 1.0) < 1e-6

        u = self.sole_user(c.outputs[0])
        if u is None:
            return
        if u.op_type == "Mul" and sorted(u.inputs) == sorted([x, c.outputs[0]]):      # (x * clip) / 6
            d = self.sole_user(u.outputs[0])
            if not sixth(d, u.outputs[0]) or u.outputs[0] in self.outs:
                return
            dead, last = [c, u, d], d
        elif sixth(u, c.outputs[0]):                                                   # x * (clip / 6)
            mul = self.sole_user(u.outputs[0])
            if (mul is None or mul.op_type != "Mul" or sorted(mul.inputs) != sorted([x, u.outputs[0]])
                    or u.outputs[0] in self.outs):
                return
            dead, last = [c, u, mul], mul
        else:
            return
        self.notes.append(f"Add '{a.name}' + Clip + Mul + Div -> HardSwish")
        a.op_type, a.domain, a.attrs, a.proto = "EpAct", ir.EP_DOMAIN, {"kind": K.EP_ACT_HARD_SWISH}, None
        a.inputs = [x]
        a.outputs = [last.outputs[0]]
        self.dead.update(dead)

    def gelu_pattern(self, e):
        """0.5 * x * (1 + erf(x / sqrt 2)) in the usual exported orders -> EpAct GELU."""
        m = self.m
        prods = self._prods
        d = prods.get(e.inputs[0])
        if d is None or d.op_type not in ("Div", "Mul") or len(d.inputs) != 2 or e.inputs[0] in self.outs:
            return
        k = m.const(d.inputs[1])
        want = np.sqrt(2.0) if d.op_type == "Div" else 1 / np.sqrt(2.0)
        if k is None or k.size != 1 or abs(float(k.reshape(-1)[0]) - want) > 1e-4:
            return
        x = d.inputs[0]
        a = self.sole_user(e.outputs[0])
        if a is None or a.op_type != "Add" or len(a.inputs) != 2:
            return
        one = m.const([i for i in a.inputs if i != e.outputs[0]][0])
        if one is None or one.size != 1 or float(one.reshape(-1)[0]) != 1.0:
            return
        m1 = self.sole_user(a.outputs[0])
        if m1 is None or m1.op_type != "Mul":
            return
        o = [i for i in m1.inputs if i != a.outputs[0]]
        if len(o) != 1:
            return
        half = None
        if o[0] == x:                      # (x * (1 + erf)) * 0.5
            last = self.sole_user(m1.outputs[0])
            if last is None or last.op_type != "Mul":
                return
            half = m.const([i for i in last.inputs if i != m1.outputs[0]][0])
            dead = [d, a, m1, last]
        else:                              # (x * 0.5) * (1 + erf)
            h = prods.get(o[0])
            if h is None or h.op_type != "Mul" or x not in h.inputs or self.sole_user(o[0]) is not m1:
                return
            half = m.const([i for i in h.inputs if i != x][0]) if len(h.inputs) == 2 else None
            dead, last = [d, a, h, m1], m1
        if half is None or half.size != 1 or float(half.reshape(-1)[0]) != 0.5:
            return
        if self.sole_user(d.outputs[0]) is not e:
            return
        self.notes.append(f"Erf '{e.name}' + {len(dead)} nodes -> GELU")
        e.op_type, e.domain, e.attrs, e.proto = "EpAct", ir.EP_DOMAIN, {"kind": K.EP_ACT_GELU}, None
        e.inputs = [x]
        self.cons.setdefault(x, []).append(e)
        e.outputs = [last.outputs[0]]
        self.dead.update(dead)

    def attention_pattern(self, mm):
        """MatMul(Q, KT) -> [Mul/Div scalar] -> [Add mask] -> Softmax(-1) -> MatMul(P, V) -> EpAttention."""
        m = self.m
        if len(mm.inputs) != 2 or any(m.const(i) is not None for i in mm.inputs):
            return
        qs, ks = m.shape(mm.inputs[0]), m.shape(mm.inputs[1])
        ss = m.shape(mm.outputs[0])
        if qs is None or ks is None or ss is None or len(qs) < 2 or len(ks) < 2 or len(ss) != max(len(qs), len(ks)):
            return
        if any(m.values[v].dtype != np.float32 for v in (mm.inputs[0], mm.inputs[1], mm.outputs[0])):
            return
        chain, scale, divide, mask = [], 1.0, 0, None
        u = self.sole_user(mm.outputs[0])
        if u is not None and u.op_type in ("Mul", "Div") and len(u.inputs) == 2:
            k = self._scalar_const(u, mm.outputs[0])
            if k is None or (u.op_type == "Div" and u.inputs[0] != mm.outputs[0]):
                return
            scale, divide = k, int(u.op_type == "Div")
            chain.append(u)
            u = self.sole_user(u.outputs[0])
        if u is not None and u.op_type == "Add" and len(u.inputs) == 2:
            prev = chain[-1].outputs[0] if chain else mm.outputs[0]
            other = [i for i in u.inputs if i != prev]
            ms = m.shape(other[0]) if len(other) == 1 else None
            if ms is None or len(ms) > len(ss) or m.values[other[0]].dtype != np.float32:
                return
            if any(d != 1 and d != ss[i + len(ss) - len(ms)] for i, d in enumerate(ms)):
                return
            if m.shape(u.outputs[0]) != ss:
                return
            mask = other[0]
            chain.append(u)
            u = self.sole_user(u.outputs[0])
        if u is None or u.op_type != "Softmax":
            return
        r = len(ss)
        axis = int(u.attrs.get("axis", -1 if m.opset >= 13 else 1))
        if (axis + r if axis < 0 else axis) != r - 1:
            return
        chain.append(u)
        mm2 = self.sole_user(u.outputs[0])
        if mm2 is None or mm2.op_type != "MatMul" or mm2.inputs[0] != u.outputs[0]:
            return
        v = mm2.inputs[1]
        vs, ys = m.shape(v), m.shape(mm2.outputs[0])
        if vs is None or ys is None or len(vs) < 2 or len(vs) > r or len(ys) != r or m.values[v].dtype != np.float32:
            return
        if any(d != 1 and d != ss[i + r - len(vs)] for i, d in enumerate(vs[:-2])):
            return
        self.notes.append(f"MatMul '{mm.name}' + {' + '.join(c.op_type for c in chain)} + MatMul '{mm2.name}'"
                          f" -> attention")
        mm.op_type, mm.domain, mm.proto = "EpAttention", ir.EP_DOMAIN, None
        mm.attrs = {"scale": float(scale), "divide": divide}
        mm.inputs = [mm.inputs[0], mm.inputs[1], v] + ([mask] if mask else [])
        for x in mm.inputs[2:]:
            self.cons.setdefault(x, []).append(mm)
        mm.outputs = [mm2.outputs[0]]
        self.dead.update(chain + [mm2])

    def _mean_axes(self, n, r):
        """The axes of ReduceMean n (keepdims 1) when they are the trailing ones of a rank-r input, as the first
        of them; else None."""
        if n.op_type != "ReduceMean" or n.domain != "" or int(n.attrs.get("keepdims", 1)) != 1:
            return None
        if n.input(1):
            a = self.m.const(n.input(1))
            if a is None:
                return None
            axes = [int(v) for v in a.reshape(-1)]
        else:
            axes = [int(v) for v in n.attrs.get("axes", [])]
        axes = sorted(v + r if v < 0 else v for v in axes)
        if not axes or axes != list(range(r - len(axes), r)):
            return None
        return axes[0]

    def layernorm_pattern(self, rm):
        """ReduceMean(x) -> Sub -> Pow 2 (or Mul by itself) -> ReduceMean -> Add eps -> Sqrt -> Div (or
        Reciprocal and Mul), then an optional Mul by a scale and Add of a bias along the normalised dims (how
        exporters before opset 17 write layer_norm, and TFLite files with RSQRT) -> LayerNormalization."""
        m = self.m
        x = rm.inputs[0]
        xs = m.shape(x)
        if xs is None or m.values[x].dtype != np.float32 or x in self.outs or rm.outputs[0] in self.outs:
            return
        r = len(xs)
        axis = self._mean_axes(rm, r)
        if axis is None:
            return
        sub = self.sole_user(rm.outputs[0])
        if sub is None or sub.op_type != "Sub" or sub.inputs != [x, rm.outputs[0]] or m.shape(sub.outputs[0]) != xs:
            return
        d = sub.outputs[0]
        us = self.users(d)
        if d in self.outs or len(us) != 2:
            return
        sq = next((u for u in us if (u.op_type == "Pow" and u.inputs[0] == d and self._scalar_const(u, d) == 2.0)
                   or (u.op_type == "Mul" and u.inputs == [d, d])), None)
        div = next((u for u in us if u is not sq and len(u.inputs) == 2 and (
            (u.op_type == "Div" and u.inputs[0] == d) or (u.op_type == "Mul" and d in u.inputs))), None)
        if sq is None or div is None:
            return
        rm2 = self.sole_user(sq.outputs[0])
        if rm2 is None or self._mean_axes(rm2, r) != axis or rm2.inputs[0] != sq.outputs[0]:
            return
        add = self.sole_user(rm2.outputs[0])
        eps = self._scalar_const(add, rm2.outputs[0]) if add is not None and add.op_type == "Add" else None
        if eps is None or not 0.0 <= eps <= 1e30:   # LAYERNORM's range (NaN too stays a chain)
            return
        sqrt = self.sole_user(add.outputs[0])
        if sqrt is None or sqrt.op_type != "Sqrt":
            return
        rcp = None   # d * Reciprocal(Sqrt(var + eps)), as TFLite's RSQRT imports, or d / Sqrt(var + eps)
        if div.op_type == "Mul":
            rcp = self.sole_user(sqrt.outputs[0])
            other = div.inputs[1] if div.inputs[0] == d else div.inputs[0]
            if (rcp is None or rcp.op_type != "Reciprocal" or other != rcp.outputs[0]
                    or self.sole_user(rcp.outputs[0]) is not div):
                return
        elif div.inputs[1] != sqrt.outputs[0] or self.sole_user(sqrt.outputs[0]) is not div:
            return
        inner = tuple(xs[axis:])
        if any(not isinstance(v, (int, np.integer)) or v < 1 for v in inner):   # a run-time extent: not fused
            return

        def along(n, y):   # the other operand of n, a constant that broadcasts along the normalised dims only
            o = [i for i in n.inputs if i != y] if n is not None and len(n.inputs) == 2 else []
            k = m.const(o[0]) if len(o) == 1 else None
            if k is None or k.dtype != np.float32 or k.ndim > r or any(v != 1 for v in k.shape[:max(0, k.ndim - len(inner))]):
                return None
            try:
                return np.ascontiguousarray(np.broadcast_to(k.reshape(k.shape[max(0, k.ndim - len(inner)):]), inner))
            except ValueError:
                return None

        dead, last = [rm, sub, sq, rm2, add, sqrt] + ([rcp] if rcp is not None else []), div
        affine = {}
        for kind in ("Mul", "Add"):   # the scale, then the bias, each optional
            u = self.sole_user(last.outputs[0]) if last.outputs[0] not in self.outs else None
            k = along(u, last.outputs[0]) if u is not None and u.op_type == kind else None
            if k is not None:
                affine[kind] = k
                dead.append(last)
                last = u
        scale, bias = affine.get("Mul"), affine.get("Add")
        if scale is None:
            scale = np.ones(inner, np.float32)
        self.notes.append(f"ReduceMean '{rm.name}' + {len(dead)} nodes -> LayerNormalization")
        ins = [x, m.add_const(f"{rm.name}/ln_scale", scale)]
        if bias is not None:
            ins.append(m.add_const(f"{rm.name}/ln_bias", bias))
        last.op_type, last.domain, last.proto = "LayerNormalization", "", None
        last.attrs = {"axis": axis, "epsilon": float(eps)}
        last.inputs = ins
        self.cons.setdefault(x, []).append(last)
        self.dead.update(dead)

    def pad_into_conv(self, n):
        """Pad(constant 0, spatial dims only) whose only consumer is Conv n -> the conv's pads."""
        m = self.m
        p = self._prods.get(n.inputs[0])
        if (p is None or p.op_type != "Pad" or p.domain != "" or self.sole_user(p.outputs[0]) is not n
                or n.attrs.get("auto_pad", "NOTSET") != "NOTSET" or p.attrs.get("mode", "constant") != "constant"
                or p.input(3)):
            return
        pads = m.const(p.input(1))
        val = m.const(p.input(2)) if p.input(2) else np.zeros(1, np.float32)
        xs = m.static_shape(p.inputs[0])
        if pads is None or val is None or xs is None or len(xs) not in (3, 4) or (val.size and float(val.reshape(-1)[0]) != 0.0):
            return
        r = len(xs)
        pads = [int(v) for v in pads.reshape(-1)]
        if len(pads) != 2 * r or any(v < 0 for v in pads) or any(pads[i] or pads[r + i] for i in (0, 1)):
            return
        nsp = r - 2
        cp = [int(v) for v in n.attrs.get("pads", [0] * (2 * nsp))]
        n.attrs["pads"] = [cp[i] + pads[2 + i] for i in range(nsp)] + [cp[nsp + i] + pads[r + 2 + i] for i in range(nsp)]
        n.inputs[0] = p.inputs[0]
        self.cons.setdefault(p.inputs[0], []).append(n)
        self.dead.add(p)
        self.notes.append(f"Pad '{p.name}' + Conv '{n.name}'")

    def run(self):
        self._prods = {o: p for p in self.m.nodes for o in p.outputs}
        for n in list(self.m.nodes):
            if n.domain == "" and n.op_type == "Conv" and n not in self.dead:
                self.pad_into_conv(n)
        for n in list(self.m.nodes):
            if n.domain == "" and n.op_type == "Erf" and n not in self.dead:
                self._prods = {o: p for p in self.m.nodes if p not in self.dead for o in p.outputs}
                self.gelu_pattern(n)
        for n in list(self.m.nodes):
            if n.domain == "" and n.op_type == "Add" and n not in self.dead:
                self.hardswish_pattern(n)
        for n in list(self.m.nodes):
            if n.domain == "" and n.op_type == "ReduceMean" and n not in self.dead and not n.exact:
                self.layernorm_pattern(n)
        for n in list(self.m.nodes):
            if n.domain == "" and n.op_type == "MatMul" and n not in self.dead and not n.exact:
                self.attention_pattern(n)
        for n in list(self.m.nodes):
            if n not in self.dead and n.op_type in ("Conv", "ConvTranspose", "EpGemm") and not n.exact:
                self.grow(n)
        for n in list(self.m.nodes):
            if n not in self.dead and n.domain == "" and n.op_type in ("Sigmoid", "HardSigmoid"):
                self.gate_pattern(n)
        for n in list(self.m.nodes):
            if n not in self.dead and n.domain == "" and n.op_type in BINARY:
                self.grow_binary(n)
        self.m.nodes = [n for n in self.m.nodes if n not in self.dead]


# -------------------------------------------------------------------- linear canonicalisation
def _gemm_node(m, n):
    """Rewrite Gemm/MatMul n as EpGemm when B is a constant 2-D f32; returns the nodes replacing n."""
    B = m.const(n.inputs[1])
    if B is None or B.ndim != 2 or B.dtype != np.float32 or m.const(n.inputs[0]) is not None:
        return [n]
    if n.op_type == "MatMul":
        n.op_type, n.domain, n.proto, n.attrs, n.inputs = "EpGemm", ir.EP_DOMAIN, None, {}, [n.inputs[0], n.inputs[1], ""]
        return [n]
    alpha, beta = float(n.attrs.get("alpha", 1.0)), float(n.attrs.get("beta", 1.0))
    ta, tb = int(n.attrs.get("transA", 0)), int(n.attrs.get("transB", 0))
    Bk = np.ascontiguousarray((B.T if tb else B) * np.float32(alpha)).astype(np.float32)
    N = Bk.shape[1]
    A = n.inputs[0]
    ashape = m.shape(A)
    rows = None
    if ashape is not None and len(ashape) == 2:
        rows = ashape[1] if ta else ashape[0]
    new = []
    C = n.input(2)
    cname, post = "", None
    if C:
        Cc = m.const(C)
        if Cc is not None:
            Cb = (Cc.astype(np.float64) * beta).astype(np.float32)
            if Cb.ndim > 2:
                return [n]
            bs = (1,) * (2 - Cb.ndim) + Cb.shape
            Cb = Cb.reshape(bs)
            if bs[1] not in (1, N):
                return [n]
            if bs[0] == 1:
                cname = m.add_const(f"{n.name}.bias", np.broadcast_to(Cb[0], (N,)).copy())
            elif (rows is not None and bs[0] in (1, rows)
                  and limits.nbytes((rows, N), np.float32) <= limits.fold_limit(Cb.nbytes)):
                cname = m.add_const(f"{n.name}.bias", np.broadcast_to(Cb, (rows, N)).copy())
            else:
                return [n]
        else:
            post = C
    if ta:
        t = m.fresh(f"{A}_T")
        v = m.value(t)
        v.dtype, v.shape = m.values[A].dtype, None if ashape is None else tuple(reversed(ashape))
        new.append(ir.Node("Transpose", [A], [t], {"perm": [1, 0]}, f"{n.name}/transA"))
        A = t
    bname = n.inputs[1] if (Bk.shape == B.shape and not tb and alpha == 1.0) else m.add_const(f"{n.name}.weight_kn", Bk)
    n.op_type, n.domain, n.proto, n.attrs, n.inputs = "EpGemm", ir.EP_DOMAIN, None, {}, [A, bname, cname]
    new.append(n)
    if post is not None:
        y = n.outputs[0]
        tmp = m.fresh(f"{y}_gemm")
        vt = m.value(tmp)
        vt.dtype, vt.shape = m.values[y].dtype, m.values[y].shape
        n.outputs = [tmp]
        if beta != 1.0:
            cb = m.fresh(f"{C}_beta")
            m.value(cb).dtype, m.value(cb).shape = m.values[C].dtype, m.values[C].shape
            new.append(ir.Node("Mul", [C, m.add_const(f"{n.name}.beta", np.array(beta, np.float32))], [cb], {},
                               f"{n.name}/beta"))
            post = cb
        new.append(ir.Node("Add", [tmp, post], [y], {}, f"{n.name}/C"))
    return new


def canonical_linear(m: ir.Model) -> None:
    out = []
    for n in m.nodes:
        if n.domain == "" and n.op_type in ("Gemm", "MatMul") and len(n.inputs) >= 2:
            out.extend(_gemm_node(m, n))
        else:
            out.append(n)
    m.nodes = out


def fuse(m: ir.Model, notes: list) -> None:
    canonical_linear(m)
    _Fuser(m, notes).run()
    m.remove_dead()

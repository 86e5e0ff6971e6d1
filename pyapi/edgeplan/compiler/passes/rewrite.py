"""ONNX ops written at compile time as other ONNX ops the compiler lowers, once their shapes are static:

  Col2Im     the columns viewed as [N, C * prod(block), L_h, L_w], then a grouped ConvTranspose whose
             one-hot weights put each column entry back at its pixel (strides, dilations, pads as given):
             overlapping entries add up, as Col2Im defines
  MaxUnpool  a zero tensor of the unpooled size, with X scattered at the flat indices (ScatterElements on
             the flattened tensor: indices are flat over the whole tensor, as MaxPool's are), then zeros
             after it up to a larger output_shape (onnx's reference; the indices stay those of the unpooled
             shape)
  DFT        matrix products with cosine and sine tables of the transform length (forward, inverse,
             one-sided and the inverse of a one-sided spectrum), the signal axis moved next to the
             real / imaginary one and back: O(n^2) per signal, fine for the short frames of audio models
  RNN        unrolled over its (static) sequence: the input projection for every step at once, then per
             step h = f(x_t W^T + h R^T + Wb + Rb), optionally clipped; both directions, either layout
  Det        the sum over permutations of signed products of entries (a Gather of every permutation's
             entries, ReduceProd, the signs, ReduceSum), for matrices up to 5 x 5
  BatchNormalization (training_mode 1)  the batch's statistics over every axis but the channel axis:
             mean = ReduceMean(x), var = ReduceMean((x - mean)^2) (biased), y = scale (x - mean) /
             sqrt(var + epsilon) + bias, and the running statistics input * momentum + batch's *
             (1 - momentum) for mean and var (onnx's reference); an inference-mode node is left to its
             lowering

A rewrite that cannot apply (shapes not static, an attribute out of its scope) leaves the node, with the
reason in its note."""
from __future__ import annotations

import numpy as np

from .. import ir


class _Refused(Exception):
    pass


def _node(m: ir.Model, op_type: str, inputs, name: str, **attrs) -> tuple:
    """(an ir.Node of op_type, its output's name)."""
    from onnx import helper
    out = m.fresh(f"{name}:out")
    p = helper.make_node(op_type, list(inputs), [out], name=name, **attrs)
    m.value(out)
    return ir.Node(op_type, list(inputs), [out], dict(attrs), name, "", proto=p), out


def _bind_last(nodes: list, output: str) -> None:
    """The last node writes the replaced node's output."""
    nodes[-1].outputs = [output]
    nodes[-1].proto.output[0] = output


class _Chain:
    """The nodes of one rewrite, named under the node it replaces: add() appends one and gives its
    output's name, const() a model constant."""

    def __init__(self, m: ir.Model, n: ir.Node):
        self.m, self.n, self.nodes = m, n, []

    def add(self, op, ins, **attrs) -> str:
        node, o = _node(self.m, op, ins, f"{self.n.name}/{op}_{len(self.nodes)}", **attrs)
        self.nodes.append(node)
        return o

    def const(self, a, dt=np.float32) -> str:
        return self.m.add_const(f"{self.n.name}/c{len(self.nodes)}", np.asarray(a, dt))


def _ints(m, name, what) -> list:
    a = m.const(name) if name else None
    if a is None:
        raise _Refused(f"its {what} ('{name}') is only known at run time")
    return [int(v) for v in np.asarray(a).reshape(-1)]


def _col2im(m: ir.Model, n: ir.Node) -> list:
    x = n.inputs[0]
    shp = m.static_shape(x)
    if shp is None or len(shp) != 3:
        raise _Refused("its input has no static [N, C * prod(block), L] shape")
    image = _ints(m, n.input(1), "image_shape")
    block = _ints(m, n.input(2), "block_shape")
    if len(image) != 2 or len(block) != 2:
        raise _Refused(f"it is {len(image)}-D; edgeplan's Col2Im is 2-D (its ConvTranspose is)")
    dil = [int(v) for v in n.attrs.get("dilations", [1, 1])]
    pads = [int(v) for v in n.attrs.get("pads", [0, 0, 0, 0])]
    strides = [int(v) for v in n.attrs.get("strides", [1, 1])]
    kh, kw = block
    N, ck, L = shp
    if kh < 1 or kw < 1 or ck % (kh * kw):
        raise _Refused(f"its input's dim 1 ({ck}) is no multiple of the block {kh} x {kw}")
    C = ck // (kh * kw)
    lh, lw = ((image[d] + pads[d] + pads[d + 2] - (dil[d] * (block[d] - 1) + 1)) // strides[d] + 1 for d in (0, 1))
    if lh < 1 or lw < 1 or lh * lw != L:
        raise _Refused(f"{L} blocks do not tile the image {image} with these strides, dilations and pads")
    w = np.zeros((ck, 1, kh, kw), np.float32)
    for c in range(C):
        for i in range(kh):
            for j in range(kw):
                w[c * kh * kw + i * kw + j, 0, i, j] = 1.0
    shape4 = m.add_const(f"{n.name}/shape4", np.array([N, ck, lh, lw], np.int64))
    wname = m.add_const(f"{n.name}/onehot", w)
    a, v = _node(m, "Reshape", [x, shape4], f"{n.name}/view")
    # pixels past the last block (a stride that does not divide) are zeros: ConvTranspose's output_padding
    extra = [image[d] - ((L_d - 1) * strides[d] - pads[d] - pads[d + 2] + dil[d] * (block[d] - 1) + 1)
             for d, L_d in ((0, lh), (1, lw))]
    b, y = _node(m, "ConvTranspose", [v, wname], f"{n.name}/scatter", group=C, strides=strides, dilations=dil,
                 pads=pads, output_padding=extra)
    _bind_last([a, b], n.outputs[0])
    return [a, b]


def _maxunpool(m: ir.Model, n: ir.Node) -> list:
    x, idx = n.inputs[0], n.inputs[1]
    shp = m.static_shape(x)
    if shp is None or m.static_shape(idx) != shp:
        raise _Refused("its input and indices have no static (equal) shape")
    k = [int(v) for v in n.attrs["kernel_shape"]]
    r = len(k)
    s = [int(v) for v in n.attrs.get("strides", [1] * r)]
    p = [int(v) for v in n.attrs.get("pads", [0] * 2 * r)]
    out = list(shp[:2]) + [(shp[2 + d] - 1) * s[d] - p[d] - p[d + r] + k[d] for d in range(r)]
    given = _ints(m, n.input(2), "output_shape") if n.input(2) else out
    if len(given) != len(out) or any(g < o for g, o in zip(given, out)):
        raise _Refused(f"its output_shape {given} is smaller than the unpooled shape {out}")
    total = int(np.prod(out, dtype=np.int64))
    zero = m.add_const(f"{n.name}/zero", np.zeros(1, m.values[x].dtype or np.float32))
    size = m.add_const(f"{n.name}/size", np.array([total], np.int64))
    flat = m.add_const(f"{n.name}/flat", np.array([-1], np.int64))
    oshape = m.add_const(f"{n.name}/out_shape", np.array(out, np.int64))
    e, zeros = _node(m, "Expand", [zero, size], f"{n.name}/zeros")
    f, xf = _node(m, "Reshape", [x, flat], f"{n.name}/values")
    g, jf = _node(m, "Reshape", [idx, flat], f"{n.name}/indices")
    s_, yf = _node(m, "ScatterElements", [zeros, jf, xf], f"{n.name}/scatter", axis=0)
    r_, y = _node(m, "Reshape", [yf, oshape], f"{n.name}/shape")
    nodes = [e, f, g, s_, r_]
    if given != out:   # a larger output_shape: the unpooled tensor at its start, zeros after (as onnx's reference)
        pads = m.add_const(f"{n.name}/pads", np.array([0] * len(out) + [a - b for a, b in zip(given, out)], np.int64))
        pad, _ = _node(m, "Pad", [y, pads], f"{n.name}/pad")
        nodes.append(pad)
    _bind_last(nodes, n.outputs[0])
    return nodes


def _dft_matrices(mode: str, L: int, n: int, onesided: bool):
    """(A, B, C, D, out_len) of the DFT as Yr = Xr A + Xi B, Yi = Xr C + Xi D over an input of L points
    along the axis (zero-padded or truncated to n as numpy's fft(x, n) does)."""
    if mode == "irfft":   # a one-sided spectrum of n // 2 + 1 bins to n real points (Hermitian symmetry)
        bins = n // 2 + 1
        k = np.arange(L)[:, None]
        t = np.arange(n)[None, :]
        w = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0) * (k < bins)
        th = 2 * np.pi * k * t / n
        return w * np.cos(th) / n, -w * np.sin(th) / n, None, None, n
    out = n // 2 + 1 if onesided else n
    t = np.arange(L)[:, None]
    k = np.arange(out)[None, :]
    th = 2 * np.pi * t * k / n
    valid = t < n
    c, s_ = np.cos(th) * valid, np.sin(th) * valid
    if mode == "fft":
        return c, s_, -s_, c, out
    return c / n, -s_ / n, s_ / n, c / n, out   # ifft


def _dft(m: ir.Model, n: ir.Node) -> list:
    x = n.inputs[0]
    shp = m.static_shape(x)
    if shp is None or len(shp) < 2 or shp[-1] not in (1, 2):
        raise _Refused("its input has no static [..., signal, 1 or 2] shape")
    r = len(shp)
    if m.opset >= 20:
        axis = _ints(m, n.input(2), "axis")[0] if n.input(2) else -2
    else:
        axis = int(n.attrs.get("axis", 1))
    axis = axis + r if axis < 0 else axis
    if not 0 <= axis < r - 1:
        raise _Refused(f"its axis {axis} is not a signal dim of its rank-{r} input")
    inverse, onesided = int(n.attrs.get("inverse", 0)), int(n.attrs.get("onesided", 0))
    L = shp[axis]
    if n.input(1):
        length = _ints(m, n.input(1), "dft_length")[0]
    else:
        length = 2 * (L - 1) if inverse and onesided else L
    if length < 1:
        raise _Refused(f"its dft_length {length} is not positive")
    mode = ("irfft" if onesided else "ifft") if inverse else "fft"
    A, B, C, D, out = _dft_matrices(mode, L, length, bool(onesided))
    c = _Chain(m, n)
    add, const, nodes = c.add, c.const, c.nodes

    perm = [d for d in range(r - 1) if d != axis] + [axis, r - 1]
    v = add("Transpose", [x], perm=perm) if perm != list(range(r)) else x
    xr = add("Gather", [v, const(0, np.int64)], axis=r - 1)
    xi = add("Gather", [v, const(1, np.int64)], axis=r - 1) if shp[-1] == 2 else None

    def combine(P, Q):
        y = add("MatMul", [xr, const(P)])
        if xi is not None:
            y = add("Add", [y, add("MatMul", [xi, const(Q)])])
        return add("Unsqueeze", [y, const([-1], np.int64)])

    parts = [combine(A, B)] + ([combine(C, D)] if C is not None else [])
    y = add("Concat", parts, axis=-1) if len(parts) > 1 else parts[0]
    if perm != list(range(r)):
        add("Transpose", [y], perm=[int(i) for i in np.argsort(perm)])
    _bind_last(nodes, n.outputs[0])
    return nodes


# RNN activations that are ONNX ops of their own, with the attributes they take from activation_alpha / _beta
_RNN_ACTS = {"Tanh": (), "Relu": (), "Sigmoid": (), "Softsign": (), "Softplus": (), "LeakyRelu": ("alpha",),
             "Elu": ("alpha",), "ThresholdedRelu": ("alpha",), "HardSigmoid": ("alpha", "beta")}


def _rnn(m: ir.Model, n: ir.Node) -> list:
    x, w, r_ = n.inputs[0], n.inputs[1], n.inputs[2]
    shp = m.static_shape(x)
    if shp is None or len(shp) != 3:
        raise _Refused("its input X has no static 3-D shape")
    layout = int(n.attrs.get("layout", 0))
    T = shp[1] if layout else shp[0]
    from .unroll import MAX_TRIPS
    if T > MAX_TRIPS:
        raise _Refused(f"its {T} steps are more than the {MAX_TRIPS} it unrolls to")
    hidden = int(n.attrs["hidden_size"])
    direction = n.attrs.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    dirs = 2 if direction == "bidirectional" else 1
    if direction not in ("forward", "reverse", "bidirectional"):
        raise _Refused(f"its direction '{direction}' is not forward, reverse or bidirectional")
    if n.input(4):
        lens = m.const(n.input(4))
        if lens is None or not np.all(np.asarray(lens) == T):
            raise _Refused("its sequence_lens is not the constant full length (pin it, or drop the input)")
    acts = [a.decode() if isinstance(a, bytes) else str(a) for a in n.attrs.get("activations", [])] or ["Tanh"] * dirs
    alphas, betas = list(n.attrs.get("activation_alpha", [])), list(n.attrs.get("activation_beta", []))
    act_attrs = []
    for a in acts:
        if a not in _RNN_ACTS:
            raise _Refused(f"its activation '{a}' is not one edgeplan takes (Tanh, Relu, Sigmoid, ...)")
        act_attrs.append({k: float((alphas if k == "alpha" else betas).pop(0)) for k in _RNN_ACTS[a]
                          if (alphas if k == "alpha" else betas)})
    clip = n.attrs.get("clip")
    c = _Chain(m, n)
    add, nodes = c.add, c.nodes

    def const(a, dt=np.int64):
        return c.const(a, dt)

    def unsq(v, axis):
        if m.opset >= 13:
            return add("Unsqueeze", [v, const([axis])])
        return add("Unsqueeze", [v], axes=[axis])

    xs = add("Transpose", [x], perm=[1, 0, 2]) if layout else x          # [T, batch, input]
    batch = shp[0] if layout else shp[1]
    ys, hs = [], []
    for d in range(dirs):
        wd = add("Gather", [w, const(d)], axis=0)                         # [hidden, input]
        rd = add("Transpose", [add("Gather", [r_, const(d)], axis=0)], perm=[1, 0])
        xw = add("MatMul", [xs, add("Transpose", [wd], perm=[1, 0])])     # [T, batch, hidden]
        if n.input(3):
            bd = add("Gather", [n.input(3), const(d)], axis=0)            # [2 hidden]: Wb, Rb
            wb = add("Slice", [bd, const([0]), const([hidden]), const([0])])
            rb = add("Slice", [bd, const([hidden]), const([2 * hidden]), const([0])])
            xw = add("Add", [xw, add("Add", [wb, rb])])
        h = (add("Gather", [n.input(5), const(d)], axis=0) if n.input(5)
             else m.add_const(f"{n.name}/h0", np.zeros((batch, hidden), np.float32)))
        steps = range(T - 1, -1, -1) if (direction == "reverse" or d == 1) else range(T)
        outs = {}
        for t in steps:
            z = add("Add", [add("Gather", [xw, const(t)], axis=0), add("MatMul", [h, rd])])
            if clip is not None:
                z = add("Clip", [z, const(-float(clip), np.float32), const(float(clip), np.float32)])
            h = add(acts[d], [z], **act_attrs[d])
            outs[t] = h
        ys.append(unsq(add("Concat", [unsq(outs[t], 0) for t in range(T)], axis=0), 1))   # [T, 1, batch, hidden]
        hs.append(unsq(h, 0))
    y = add("Concat", ys, axis=1) if dirs > 1 else ys[0]
    yh = add("Concat", hs, axis=0) if dirs > 1 else hs[0]
    if layout:
        y = add("Transpose", [y], perm=[2, 0, 1, 3])
        yh = add("Transpose", [yh], perm=[1, 0, 2])
    for k, v in enumerate((y, yh)):
        if k < len(n.outputs) and n.outputs[k]:
            add("Identity", [v])
            _bind_last(nodes, n.outputs[k])
    return nodes


MAX_DET = 5   # Det by permutations: n! products of n entries


def _det(m: ir.Model, n: ir.Node) -> list:
    import itertools
    x = n.inputs[0]
    shp = m.static_shape(x)
    if shp is None or len(shp) < 2 or shp[-1] != shp[-2]:
        raise _Refused("its input has no static [..., n, n] shape")
    k = shp[-1]
    if k > MAX_DET:
        raise _Refused(f"it is {k} x {k}; edgeplan computes Det by permutations up to {MAX_DET} x {MAX_DET}")
    perms = list(itertools.permutations(range(k)))
    idx = np.array([[i * k + p[i] for i in range(k)] for p in perms], np.int64)          # [P, k]
    sign = np.array([(-1) ** sum(p[i] > p[j] for i in range(k) for j in range(i + 1, k)) for p in perms], np.float32)
    c = _Chain(m, n)
    add, nodes = c.add, c.nodes

    def reduce(op, v):
        if m.opset >= (13 if op == "ReduceSum" else 18):
            return add(op, [v, m.add_const(f"{n.name}/axes", np.array([-1], np.int64))], keepdims=0)
        return add(op, [v], axes=[-1], keepdims=0)

    flat = add("Reshape", [x, m.add_const(f"{n.name}/flat", np.array(list(shp[:-2]) + [k * k], np.int64))])
    terms = add("Gather", [flat, m.add_const(f"{n.name}/perms", idx)], axis=len(shp) - 2)   # [..., P, k]
    signed = add("Mul", [reduce("ReduceProd", terms), m.add_const(f"{n.name}/signs", sign)])
    reduce("ReduceSum", signed)
    _bind_last(nodes, n.outputs[0])
    return nodes


def _batchnorm_training(m: ir.Model, n: ir.Node) -> list | None:
    if not int(n.attrs.get("training_mode", 0)):
        return None   # inference: ops/elementwise.py lowers it
    x = n.inputs[0]
    shp = m.static_shape(x)
    if shp is None or len(shp) < 2:
        raise _Refused("its input has no static shape of rank >= 2")
    r, C = len(shp), shp[1]
    dt = m.values[x].dtype or np.float32
    axes = [a for a in range(r) if a != 1]
    momentum = float(n.attrs.get("momentum", 0.9))
    eps = float(n.attrs.get("epsilon", 1e-5))
    c = _Chain(m, n)
    add, nodes = c.add, c.nodes

    def const(a, t=dt):
        return c.const(a, t)

    def mean(v):
        if m.opset >= 18:
            return add("ReduceMean", [v, const(axes, np.int64)], keepdims=1)
        return add("ReduceMean", [v], axes=axes, keepdims=1)

    per_c = const([C] + [1] * (r - 2), np.int64)
    flat = const([C], np.int64)
    mu = mean(x)                                          # [1, C, 1, ...]
    d = add("Sub", [x, mu])
    var = mean(add("Mul", [d, d]))
    scale = add("Reshape", [n.inputs[1], per_c])
    bias = add("Reshape", [n.inputs[2], per_c])
    add("Add", [add("Div", [add("Mul", [scale, d]), add("Sqrt", [add("Add", [var, const(eps)])])]), bias])
    _bind_last(nodes, n.outputs[0])
    for k, (batch, running) in enumerate(((mu, n.input(3)), (var, n.input(4))), start=1):
        if k < len(n.outputs) and n.outputs[k]:
            add("Add", [add("Mul", [running, const(momentum)]),
                        add("Mul", [add("Reshape", [batch, flat]), const(1.0 - momentum)])])
            _bind_last(nodes, n.outputs[k])
    return nodes


def _tensor_scatter(m: ir.Model, n: ir.Node) -> list:
    """TensorScatter (a KV-cache update): ScatterElements of the update into the cache along `axis`, at
    the per-batch write index + 0..seq-1 (modulo the cache length in circular mode). A linear write past
    the cache's end fails the run (ScatterElements' index check)."""
    cs, us = m.static_shape(n.inputs[0]), m.static_shape(n.input(1))
    if cs is None or us is None:
        raise _Refused("its cache or update has no static shape")
    r = len(cs)
    axis = int(n.attrs.get("axis", -2))
    axis = axis + r if axis < 0 else axis
    mode = n.attrs.get("mode", "linear")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if not 1 <= axis < r or len(us) != r or mode not in ("linear", "circular"):
        raise _Refused(f"axis {axis} of a rank-{r} cache, update rank {len(us)}, mode '{mode}' "
                       f"(axis 1..rank-1, linear or circular)")
    c = _Chain(m, n)
    idx = c.const(np.arange(us[axis]).reshape([1] * axis + [us[axis]] + [1] * (r - axis - 1)), np.int64)
    if n.input(2):
        wi = c.add("Reshape", [n.input(2), c.const([us[0]] + [1] * (r - 1), np.int64)])
        idx = c.add("Add", [wi, idx])
    if mode == "circular":
        idx = c.add("Mod", [idx, c.const(cs[axis], np.int64)])
    idx = c.add("Expand", [idx, c.const(us, np.int64)])
    c.add("ScatterElements", [n.inputs[0], idx, n.input(1)], axis=axis)
    _bind_last(c.nodes, n.outputs[0])
    return c.nodes


REWRITES = {"BatchNormalization": _batchnorm_training, "Col2Im": _col2im, "MaxUnpool": _maxunpool, "DFT": _dft,
            "RNN": _rnn, "Det": _det, "TensorScatter": _tensor_scatter}
from .qdq import CONTRIB_REWRITES, REWRITES as _QUANTISED   # noqa: E402  (qdq builds on _Chain)
REWRITES.update(_QUANTISED)


def rewrite(m: ir.Model, n: ir.Node) -> list | None:
    """The nodes replacing n, or None (n.note says why) when its rewrite does not apply yet."""
    try:
        return (CONTRIB_REWRITES if n.domain == "com.microsoft" else REWRITES)[n.op_type](m, n)
    except _Refused as e:
        n.note = f"a {n.op_type} is rewritten at compile time, but {e}"
        return None
    except (ValueError, TypeError, IndexError, KeyError, ArithmeticError) as e:
        # what malformed attributes or operand shapes make numpy raise (a 1-D conv weight, say)
        n.note = (f"a {n.op_type} is rewritten at compile time, but its attributes or operands are malformed "
                  f"({type(e).__name__}: {e})")
        return None

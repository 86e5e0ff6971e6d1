"""Unary activations/math (Round/Floor/Ceil included) → unary; Add/Sub/Mul/Div/Pow/Max/Min/Sum/PRelu/Mod →
binary (numpy broadcasting) with an optional fused activation; standalone BatchNormalization → binary mul + add.
Binary arithmetic (Add, Sub, Mul, Div, Max, Min, Sum, Mod) also runs on the integer dtypes (int8/16/32/64,
uint8/16/32/64; both inputs one dtype; integers wrap, Div truncates, a zero divisor fails the run:
docs/plan-format.md); float32 is the only dtype with fused activations. BitwiseAnd/Or/Xor run on every integer
dtype, BitShift too (arithmetic right shift on signed types, as ONNX BitShift-28), BitwiseNot as XOR with an
all-ones constant."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..._cdef import NUMPY_TO_EP
from .. import acts
from ..lowering import NodeError
from ._util import epilogue_params

BIN_KIND = {"Add": K.EP_BIN_ADD, "Sub": K.EP_BIN_SUB, "Mul": K.EP_BIN_MUL, "Div": K.EP_BIN_DIV,
            "Pow": K.EP_BIN_POW, "Max": K.EP_BIN_MAX, "Min": K.EP_BIN_MIN, "Sum": K.EP_BIN_ADD,
            "PRelu": K.EP_BIN_PRELU, "Mod": K.EP_BIN_MOD}
# binary ops the runtime also computes on integers (kernels/ref/binary_int.c)
INT_DTYPES = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64)}
BITWISE_KIND = {"BitwiseAnd": K.EP_BIN_BITAND, "BitwiseOr": K.EP_BIN_BITOR, "BitwiseXor": K.EP_BIN_BITXOR}
INT_OPS = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mod"}
NO_ACT = {"act": K.EP_ACT_NONE, "act_alpha": 0.0, "act_beta": 0.0}


def _clip_at_run_time(ctx, n, X) -> bool:
    """Clip whose min or max is computed at run time (a log-mel floor from the signal's peak): max then
    min as binary ops, exactly min(max(x, lo), hi) as ONNX defines it. False when both are constants."""
    bounds = [(i, K.EP_BIN_MAX if i == 1 else K.EP_BIN_MIN) for i in (1, 2) if n.input(i)]
    if all(ctx.m.const(n.input(i)) is not None for i, _ in bounds):
        return False
    y = X
    for j, (i, kind) in enumerate(bounds):
        b = ctx.input(n, i)
        ctx.need_f32(b)
        if len(b.shape) and b.shape != (1,):
            raise NodeError(f"{'min' if i == 1 else 'max'} must be a scalar, got shape {list(b.shape)}")
        y = binary(ctx, kind, y, b, out_name=f"{n.outputs[0]}/{'min' if i == 1 else 'max'}",
                   bind=(n, 0) if j == len(bounds) - 1 else None)
    return True


def _clip_int(ctx, n, X) -> None:
    """Clip on an integer tensor: max then min as integer binary ops (a missing bound clamps nothing)."""
    bounds = [(i, K.EP_BIN_MAX if i == 1 else K.EP_BIN_MIN) for i in (1, 2) if n.input(i)]
    if not bounds:
        ctx.view_output(n, 0, X, X.shape)
        return
    y = X
    for j, (i, kind) in enumerate(bounds):
        b = ctx.input(n, i)
        if b.dtype != X.dtype:
            raise NodeError(f"{'min' if i == 1 else 'max'} has dtype {b.dtype.name}, the input {X.dtype.name}")
        if len(b.shape) and b.shape != (1,):
            raise NodeError(f"{'min' if i == 1 else 'max'} must be a scalar, got shape {list(b.shape)}")
        y = binary(ctx, kind, y, b, out_name=f"{n.outputs[0]}/{'min' if i == 1 else 'max'}",
                   bind=(n, 0) if j == len(bounds) - 1 else None)


def lower_unary(ctx, n):
    X = ctx.input(n, 0)
    if n.op_type == "Clip" and n.domain == "" and X.dtype in INT_DTYPES:
        _clip_int(ctx, n, X)
        return
    ctx.need_f32(X)
    if n.op_type == "Clip" and n.domain == "" and _clip_at_run_time(ctx, n, X):
        return
    try:
        kind, alpha, beta = acts.activation(ctx.m, n)
    except acts.ActError as e:
        raise NodeError(str(e)) from None
    y = ctx.output(n, 0, X.shape, np.float32)
    ctx.emit("unary", [X], [y], {"kind": int(kind), "alpha": float(alpha), "beta": float(beta)},
             inplace=None if X.is_const else 0)


def _f32_operand(ctx, t, what):
    if t.dtype != np.float32 and t.data is not None and np.issubdtype(t.dtype, np.number):
        return ctx.const(t.name + "/f32", t.data.astype(np.float32))
    ctx.need_f32(t, what=what)
    return t


def binary(ctx, kind, A, B, out_name=None, params=None, bind=None):
    """Y = A kind B (Y has A's dtype); binds IR output bind=(node, index) or makes a temporary named out_name."""
    try:
        shape = tuple(np.broadcast_shapes(A.shape, B.shape))
    except ValueError:
        raise NodeError(f"shapes {A.shape} and {B.shape} do not broadcast") from None
    y = ctx.output(bind[0], bind[1], shape, A.dtype) if bind else ctx.tmp(out_name, shape, A.dtype)
    inplace = None
    if shape == tuple(A.shape) and not A.is_const:
        inplace = 0
    elif shape == tuple(B.shape) and not B.is_const:
        inplace = 1
    p = {"kind": int(kind)}
    p.update(params or NO_ACT)
    ctx.emit("binary", [A, B], [y], p, inplace=inplace)
    return y


def lower_binary(ctx, n):
    ins = [i for i in n.inputs if i]
    if not ins:
        raise NodeError("no inputs")
    ts = [ctx.tensor(i) for i in ins]
    kind = BIN_KIND[n.op_type]
    if n.op_type == "Mod":
        fmod = int(n.attrs.get("fmod", 0))
        if fmod not in (0, 1):
            raise NodeError(f"fmod={fmod} (must be 0 or 1)")
        kind = K.EP_BIN_FMOD if fmod else K.EP_BIN_MOD
    if n.op_type in INT_OPS and ts[0].dtype in INT_DTYPES:
        bad = [t for t in ts if t.dtype != ts[0].dtype]
        if bad:
            raise NodeError(f"input '{bad[0].name}' has dtype {bad[0].dtype.name}, "
                            f"'{ts[0].name}' {ts[0].dtype.name}: the inputs must have one dtype")
        if epilogue_params(n)["act"] != K.EP_ACT_NONE:
            raise NodeError(f"a fused activation on {ts[0].dtype.name} (only float32 takes one)")
    elif n.op_type == "Pow":
        return _lower_pow(ctx, n, ts[0], ts[1])
    else:
        for t in ts:
            if t.dtype != np.float32:
                ints = ", " + ", ".join(sorted(d.name for d in INT_DTYPES)) if n.op_type in INT_OPS else ""
                raise NodeError(f"input '{t.name}' has dtype {t.dtype.name}; {n.op_type} supports float32{ints}")
    if len(ts) == 1:
        if n.op_type not in ("Max", "Min", "Sum"):
            raise NodeError("needs two inputs")
        ctx.view_output(n, 0, ts[0], ts[0].shape)
        return
    if n.op_type == "PRelu":
        try:
            ok = tuple(np.broadcast_shapes(ts[0].shape, ts[1].shape)) == tuple(ts[0].shape)
        except ValueError:
            ok = False
        if not ok:
            raise NodeError(f"slope {ts[1].shape} does not broadcast to X {ts[0].shape}")
    acc = ts[0]
    for k, t in enumerate(ts[1:]):
        last = k == len(ts) - 2
        acc = binary(ctx, kind, acc, t, out_name=f"{n.outputs[0]}/{k}",
                     params=epilogue_params(n) if last else None, bind=(n, 0) if last else None)


def _cast(ctx, t, dtype, name):
    if t.dtype == dtype:
        return t
    if t.data is not None:
        return ctx.const(name, t.data.astype(dtype))
    y = ctx.tmp(name, t.shape, dtype)
    ctx.emit("cast", [t], [y], {"to": NUMPY_TO_EP[np.dtype(dtype)]})
    return y


def _lower_pow(ctx, n, X, E):
    """Pow, Y of X's dtype. float32 X: the exponent converted to float32. Integer X with an integer
    exponent: the integer kind (square and multiply, wrapping like Mul, as numpy; in int64 when the
    exponent has another dtype, then truncated to X's width); with a float exponent:
    the float32 power truncated to X's dtype (the onnx reference's np.power(...).astype)."""
    name = n.outputs[0]
    if X.dtype in INT_DTYPES and E.dtype in INT_DTYPES:
        if E.dtype == X.dtype or E.data is not None and np.array_equal(E.data.astype(X.dtype), E.data):
            binary(ctx, K.EP_BIN_POW, X, _cast(ctx, E, X.dtype, name + "/exponent"), bind=(n, 0))
            return
        # two integer dtypes: the power in int64, truncated to X's width (x^e mod 2^64 mod 2^w = x^e mod 2^w)
        y = binary(ctx, K.EP_BIN_POW, _cast(ctx, X, np.int64, name + "/base_i64"),
                   _cast(ctx, E, np.int64, name + "/exponent_i64"), out_name=name + "/i64")
        ctx.emit("cast", [y], [ctx.output(n, 0, y.shape, X.dtype)], {"to": NUMPY_TO_EP[X.dtype]})
        return
    if X.dtype in INT_DTYPES:
        ctx.need_f32(E, what="exponent")
        y = binary(ctx, K.EP_BIN_POW, _cast(ctx, X, np.float32, name + "/base_f32"), E, out_name=name + "/f32")
        ctx.emit("cast", [y], [ctx.output(n, 0, y.shape, X.dtype)], {"to": NUMPY_TO_EP[X.dtype]})
        return
    ctx.need_f32(X)
    if E.dtype in INT_DTYPES:
        E = _cast(ctx, E, np.float32, name + "/exponent_f32")
    binary(ctx, K.EP_BIN_POW, X, _f32_operand(ctx, E, "exponent"), params=epilogue_params(n), bind=(n, 0))


def _batchnorm_at_run_time(ctx, n, X, C: int) -> None:
    """BatchNormalization whose statistics are computed in the graph (a Keras LayerNormalization exported
    as FusedBatchNorm): (x - mean) / sqrt(var + eps) * scale + bias, as binary and unary ops."""
    shp = (C,) + (1,) * (len(X.shape) - 2)
    name = n.outputs[0]
    per_c = []
    for i, what in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var")):
        t = ctx.input(n, i, what)
        ctx.need_f32(t)
        if int(np.prod(t.shape)) != C:
            raise NodeError(f"{what} must have {C} values, has {int(np.prod(t.shape))}")
        per_c.append(ctx.view(t, shp, f"{name}/bn_{what}"))
    sc, bi, mean, var = per_c
    eps = ctx.const(name + "/bn_eps", np.array(float(n.attrs.get("epsilon", 1e-5)), np.float32))
    std = ctx.tmp(name + "/bn_std", shp)
    ctx.emit("unary", [binary(ctx, K.EP_BIN_ADD, var, eps, out_name=name + "/bn_var_eps")], [std],
             {"kind": K.EP_ACT_SQRT, "alpha": 0.0, "beta": 0.0}, inplace=0)
    y = binary(ctx, K.EP_BIN_DIV, binary(ctx, K.EP_BIN_SUB, X, mean, out_name=name + "/bn_centred"), std,
               out_name=name + "/bn_normed")
    binary(ctx, K.EP_BIN_ADD, binary(ctx, K.EP_BIN_MUL, y, sc, out_name=name + "/bn_scaled"), bi,
           params=epilogue_params(n), bind=(n, 0))


def lower_batchnorm(ctx, n):
    """Standalone inference BatchNormalization: y = x * s + t with s, t constants shaped [C, 1, ...]."""
    if n.attrs.get("training_mode", 0) or any(o for o in n.outputs[1:]):
        raise NodeError("training-mode BatchNormalization is unsupported")
    X = ctx.input(n, 0)
    ctx.need_f32(X)
    if len(X.shape) < 2:
        raise NodeError(f"input rank {len(X.shape)} < 2")
    C = X.shape[1]
    if any(ctx.m.const(n.input(i)) is None for i in range(1, 5)):
        return _batchnorm_at_run_time(ctx, n, X, C)
    p = [ctx.const_input(n, i, w).astype(np.float64).reshape(-1) for i, w in
         ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var"))]
    if any(len(a) != C for a in p):
        raise NodeError(f"parameters must have {C} values")
    sc, bi, mean, var = p
    s = sc / np.sqrt(var + float(n.attrs.get("epsilon", 1e-5)))
    t = bi - mean * s
    shp = (C,) + (1,) * (len(X.shape) - 2)
    name = n.outputs[0]
    sc_t = ctx.const(name + "/bn_scale", s.astype(np.float32).reshape(shp))
    sh_t = ctx.const(name + "/bn_shift", t.astype(np.float32).reshape(shp))
    y = binary(ctx, K.EP_BIN_MUL, X, sc_t, out_name=name + "/bn_mul")
    binary(ctx, K.EP_BIN_ADD, y, sh_t, params=epilogue_params(n), bind=(n, 0))


def lower_bitwise(ctx, n):
    """BitwiseAnd/Or/Xor and BitShift (direction LEFT / RIGHT; a shift < 0 or by the width or more gives the
    sign fill: 0, or -1 shifting a negative value right) on an integer dtype, BitwiseNot as XOR with all ones;
    numpy broadcasting, one dtype."""
    ins = [ctx.input(n, i) for i in range(1 if n.op_type == "BitwiseNot" else 2)]
    dt = ins[0].dtype
    allowed = INT_DTYPES
    for t in ins:
        if t.dtype != dt:
            raise NodeError(f"input '{t.name}' has dtype {t.dtype.name}, '{ins[0].name}' {dt.name}: "
                            "the inputs must have one dtype")
    if dt not in allowed:
        raise NodeError(f"input '{ins[0].name}' has dtype {dt.name}; {n.op_type} supports "
                        f"{', '.join(sorted(d.name for d in allowed))}")
    if n.op_type == "BitwiseNot":
        ones = ctx.const(n.outputs[0] + "/ones", np.invert(np.zeros((), dt)))
        binary(ctx, K.EP_BIN_BITXOR, ins[0], ones, bind=(n, 0))
        return
    if n.op_type == "BitShift":
        direction = n.attrs.get("direction", "")
        direction = direction.decode() if isinstance(direction, bytes) else str(direction)
        if direction not in ("LEFT", "RIGHT"):
            raise NodeError(f"direction {direction!r} (must be LEFT or RIGHT)")
        kind = K.EP_BIN_SHL if direction == "LEFT" else K.EP_BIN_SHR
    else:
        kind = BITWISE_KIND[n.op_type]
    binary(ctx, kind, ins[0], ins[1], bind=(n, 0))


LOWER = {("", t): lower_unary for t in acts.UNARY_TYPES if t != "EpAct"}
LOWER[("edgeplan", "EpAct")] = lower_unary
LOWER.update({("", t): lower_binary for t in BIN_KIND})
LOWER[("", "BatchNormalization")] = lower_batchnorm
LOWER.update({("", t): lower_bitwise for t in (*BITWISE_KIND, "BitShift", "BitwiseNot")})


# ---- constant folding (passes/fold.py): numpy semantics where they equal ONNX's ----

def _fold_div(node, a):
    x, y = a
    if np.issubdtype(x.dtype, np.integer):   # ONNX integer Div truncates towards zero
        q = np.abs(x) // np.abs(y)
        return (q * np.sign(x) * np.sign(y)).astype(np.result_type(x, y))
    return (x / y).astype(x.dtype)


def _fold_shift(node, a):
    """BitShift as the runtime computes it: a shift < 0 or by the width or more gives the sign fill."""
    x, y = a
    d = node.attrs.get("direction", "")
    left = (d.decode() if isinstance(d, bytes) else str(d)) == "LEFT"
    w = x.dtype.itemsize * 8
    ok = (y >= 0) & (y < w)
    s = np.where(ok, y, 0).astype(x.dtype)
    r = np.left_shift(x, s) if left else np.right_shift(x, s)   # numpy: arithmetic on signed types
    fill = np.zeros_like(r) if left else np.where(x < 0, -1, 0).astype(x.dtype)
    return np.where(ok, r, fill).astype(x.dtype)


FOLD = {
    "BitShift": _fold_shift,
    "BitwiseNot": lambda n, a: np.invert(a[0]),
    "Add": lambda n, a: np.add(a[0], a[1]).astype(np.result_type(a[0], a[1])),
    "Sub": lambda n, a: np.subtract(a[0], a[1]).astype(np.result_type(a[0], a[1])),
    "Mul": lambda n, a: np.multiply(a[0], a[1]).astype(np.result_type(a[0], a[1])),
    "Div": _fold_div,
}


def lower_mean(ctx, n):
    """Mean of its inputs (numpy broadcasting): their sum, then times 1/count."""
    ts = [ctx.tensor(i) for i in n.inputs if i]
    if not ts:
        raise NodeError("no inputs")
    ctx.need_f32(*ts)
    if len(ts) == 1:
        ctx.view_output(n, 0, ts[0], ts[0].shape)
        return
    acc = ts[0]
    for k, t in enumerate(ts[1:]):
        acc = binary(ctx, K.EP_BIN_ADD, acc, t, out_name=f"{n.outputs[0]}/sum{k}")
    binary(ctx, K.EP_BIN_DIV, acc, ctx.const(n.outputs[0] + "/count", np.array(len(ts), np.float32)), bind=(n, 0))


LOWER[("", "Mean")] = lower_mean

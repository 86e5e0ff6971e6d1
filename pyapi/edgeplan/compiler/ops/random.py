"""Random numbers: RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike and Bernoulli -> random
(plan_format.h ep_random_params; the generator, Philox4x32-10, and the seed rules: docs/plan-format.md
"Random numbers").

They run at run time, never folded (passes/fold.py NEVER_FOLD): each run of a session draws new numbers.
The runtime op writes float32; another `dtype` is a cast after it (Bernoulli's integer and bool outputs),
and Bernoulli's probabilities are cast to float32 first. Every random op of a plan gets its own stream
(ep_random_params.stream: 0, 1, ... in lowering order), so no two share numbers, and the ONNX `seed`
attribute, when present, is the op's key (truncated to an integer, as a 64-bit two's complement value);
without it the session's seed (ep_options.seed) is."""
from __future__ import annotations

import math

import numpy as np

from ..._cdef import NUMPY_TO_EP, K
from ..lowering import NodeError
from ..onnx_import import np_dtype
from .views import CAST_DTYPES

F32 = np.dtype(np.float32)


def _dtype(n, default):
    """The output dtype: the `dtype` attribute, else default (None: the attribute is required)."""
    code = n.attrs.get("dtype")
    dt = np_dtype(int(code)) if code is not None else default
    if dt is None:
        raise NodeError(f"dtype {code!r} is not a tensor type")
    if dt != F32 and dt not in CAST_DTYPES:
        raise NodeError(f"output dtype {dt.name} is unsupported (float32, or a cast to "
                        f"{', '.join(sorted(d.name for d in CAST_DTYPES))})")
    return np.dtype(dt)


def _seed(n) -> dict:
    s = n.attrs.get("seed")
    if s is None:
        return {"seed": 0, "has_seed": 0}
    s = float(s)
    if not math.isfinite(s) or abs(s) >= 2.0 ** 63:
        raise NodeError(f"seed {s} is not a finite value within int64")
    return {"seed": int(s) & (2 ** 64 - 1), "has_seed": 1}


def _next_stream(ctx) -> int:
    return 1 + max((op.params["stream"] for op in ctx.ops if op.kind == "random"), default=-1)


def _emit(ctx, n, kind: int, a: float, b: float, like, shape, dtype) -> None:
    """A random op of `shape` (from like's shape when like is given) bound to n's output, in dtype."""
    if not (math.isfinite(a) and math.isfinite(b)):
        raise NodeError(f"the distribution's parameters must be finite, got {a}, {b}")
    with np.errstate(over="ignore"):
        width = np.float32(b) - np.float32(a)   # as the kernel computes it
    if kind == K.EP_RANDOM_UNIFORM and not np.isfinite(width):
        raise NodeError(f"high - low overflows float32 ({a}, {b})")
    if len(shape) > K.EP_MAX_RANK:
        raise NodeError(f"rank {len(shape)} > {K.EP_MAX_RANK}")
    if int(np.prod(shape, dtype=np.int64)) > 1 << 34:
        raise NodeError(f"{list(shape)} has more than 2^34 elements")
    y = (ctx.output(n, 0, shape, F32) if dtype == F32 else ctx.tmp(n.outputs[0] + "/f32", shape))
    params = {"kind": kind, "dtype": K.EP_DTYPE_F32, "a": a, "b": b, "stream": _next_stream(ctx), **_seed(n)}
    ctx.emit("random", [like] if like is not None else [], [y], params)
    if dtype != F32:
        out = ctx.output(n, 0, shape, dtype)
        ctx.emit("cast", [y], [out], {"to": NUMPY_TO_EP[dtype]})


def _shape_attr(n):
    if "shape" not in n.attrs:
        raise NodeError(f"{n.op_type} needs its 'shape' attribute")
    shape = tuple(int(d) for d in n.attrs["shape"])
    if any(d < 0 for d in shape):
        raise NodeError(f"shape {list(shape)} has a negative dim")
    return shape


def _normal_ab(n):
    return float(n.attrs.get("mean", 0.0)), float(n.attrs.get("scale", 1.0))


def _uniform_ab(n):
    return float(n.attrs.get("low", 0.0)), float(n.attrs.get("high", 1.0))


def lower_random_normal(ctx, n):
    _emit(ctx, n, K.EP_RANDOM_NORMAL, *_normal_ab(n), None, _shape_attr(n), _dtype(n, F32))


def lower_random_uniform(ctx, n):
    _emit(ctx, n, K.EP_RANDOM_UNIFORM, *_uniform_ab(n), None, _shape_attr(n), _dtype(n, F32))


def _like_dtype(n, X):
    """-Like forms: the dtype attribute, else the input's (which must then be a float type)."""
    if n.attrs.get("dtype") is None and X.dtype.kind != "f":
        raise NodeError(f"input '{X.name}' is {X.dtype.name}: without a dtype attribute the output would be too, "
                        f"and the output must be a float type")
    return _dtype(n, X.dtype)


def lower_random_normal_like(ctx, n):
    X = ctx.input(n, 0)
    _emit(ctx, n, K.EP_RANDOM_NORMAL, *_normal_ab(n), X, X.shape, _like_dtype(n, X))


def lower_random_uniform_like(ctx, n):
    X = ctx.input(n, 0)
    _emit(ctx, n, K.EP_RANDOM_UNIFORM, *_uniform_ab(n), X, X.shape, _like_dtype(n, X))


def lower_bernoulli(ctx, n):
    """Y = 1 where a uniform draw is < the probability, else 0 (in the `dtype` attribute, default the input's)."""
    P = ctx.input(n, 0)
    if P.dtype.kind != "f":
        raise NodeError(f"the probabilities '{P.name}' are {P.dtype.name}; Bernoulli takes a float type")
    dtype = _dtype(n, P.dtype)
    if P.dtype != F32:
        if P.dtype not in CAST_DTYPES:
            raise NodeError(f"probabilities of dtype {P.dtype.name} are unsupported")
        p32 = ctx.tmp(P.name + "/f32", P.shape)
        ctx.emit("cast", [P], [p32], {"to": K.EP_DTYPE_F32})
        P = p32
    _emit(ctx, n, K.EP_RANDOM_BERNOULLI, 0.0, 0.0, P, P.shape, dtype)


LOWER = {("", "RandomNormal"): lower_random_normal, ("", "RandomUniform"): lower_random_uniform,
         ("", "RandomNormalLike"): lower_random_normal_like, ("", "RandomUniformLike"): lower_random_uniform_like,
         ("", "Bernoulli"): lower_bernoulli}

# ---- cost (compiler/cost.py): a Philox block (10 rounds of two 32x32 multiplies) per 4 elements, and the
# transform (Box-Muller's ln, sqrt, cos and sin: ~40 flops per pair) ----

FLOPS = {"random": lambda op: 20 * int(np.prod(op.outputs[0].shape, dtype=np.int64))}

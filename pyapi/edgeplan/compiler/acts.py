"""Activation nodes as EP_ACT_* (kind, alpha, beta), shared by fusion and unary lowering."""
from __future__ import annotations

import numpy as np

from .._cdef import K

FLT_BIG = 3.4e38

# op type -> EP_ACT_* name, for the activations without parameters
SIMPLE = {
    "Relu": "EP_ACT_RELU", "Sigmoid": "EP_ACT_SIGMOID", "Tanh": "EP_ACT_TANH", "Erf": "EP_ACT_ERF",
    "Sqrt": "EP_ACT_SQRT", "Exp": "EP_ACT_EXP", "Log": "EP_ACT_LOG", "Neg": "EP_ACT_NEG", "Abs": "EP_ACT_ABS",
    "Reciprocal": "EP_ACT_RECIPROCAL", "HardSwish": "EP_ACT_HARD_SWISH",
    "Round": "EP_ACT_ROUND", "Floor": "EP_ACT_FLOOR", "Ceil": "EP_ACT_CEIL",
    **{t: f"EP_ACT_{t.upper()}" for t in ("Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                                         "Acosh", "Atanh", "Sign")},
}
UNARY_TYPES = set(SIMPLE) | {"LeakyRelu", "Elu", "HardSigmoid", "Clip", "Gelu", "EpAct"}
# activations the conv/gemm/binary epilogues take (y = act(acc + bias + residual)); ROUND/FLOOR/CEIL and the
# other math kinds stay standalone unary ops
EPILOGUE_KINDS = {K.EP_ACT_RELU, K.EP_ACT_CLIP, K.EP_ACT_LEAKY_RELU, K.EP_ACT_SIGMOID, K.EP_ACT_HARD_SIGMOID,
                  K.EP_ACT_HARD_SWISH, K.EP_ACT_TANH, K.EP_ACT_SILU, K.EP_ACT_GELU}
NAMES = {getattr(K, n): n[len("EP_ACT_"):] for n in dir(K) if n.startswith("EP_ACT_") and n != "EP_ACT_COUNT"}


class ActError(ValueError):
    pass


def _scalar(m, name, what):
    a = m.const(name)
    if a is None:
        raise ActError(f"{what} is not a constant")
    if a.size != 1:
        raise ActError(f"{what} must be a scalar, got shape {tuple(a.shape)}")
    return float(a.reshape(-1)[0])


def activation(m, n):
    """(kind, alpha, beta) of activation node n, or raise ActError saying why it cannot be one."""
    t = n.op_type
    if n.domain not in ("", "edgeplan"):
        raise ActError("not an activation")
    if t in SIMPLE:
        return getattr(K, SIMPLE[t]), 0.0, 0.0
    if t == "LeakyRelu":
        return K.EP_ACT_LEAKY_RELU, float(n.attrs.get("alpha", 0.01)), 0.0
    if t == "Elu":
        return K.EP_ACT_ELU, float(n.attrs.get("alpha", 1.0)), 0.0
    if t == "HardSigmoid":
        return K.EP_ACT_HARD_SIGMOID, float(n.attrs.get("alpha", 0.2)), float(n.attrs.get("beta", 0.5))
    if t == "Gelu":
        approx = n.attrs.get("approximate", "none")
        if approx not in ("none", "tanh"):
            raise ActError(f"approximate='{approx}' is unsupported (only 'none' and 'tanh')")
        return (K.EP_ACT_GELU_TANH if approx == "tanh" else K.EP_ACT_GELU), 0.0, 0.0
    if t == "Clip":
        lo = _scalar(m, n.input(1), "min") if n.input(1) else float(n.attrs.get("min", -FLT_BIG))
        hi = _scalar(m, n.input(2), "max") if n.input(2) else float(n.attrs.get("max", FLT_BIG))
        lo = float(np.clip(lo, -FLT_BIG, FLT_BIG))
        hi = float(np.clip(hi, -FLT_BIG, FLT_BIG))
        return K.EP_ACT_CLIP, lo, hi
    if t == "EpAct":
        return int(n.attrs["kind"]), float(n.attrs.get("alpha", 0.0)), float(n.attrs.get("beta", 0.0))
    raise ActError("not an activation")


def epilogue(m, n):
    """The epilogue activation of node n, or None if n cannot be fused as one."""
    try:
        a = activation(m, n)
    except ActError:
        return None
    return a if a[0] in EPILOGUE_KINDS else None


def describe(kind) -> str:
    return NAMES.get(kind, str(kind))

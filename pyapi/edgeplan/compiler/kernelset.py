"""The kernel set of a plan: which op x dtype x variant kernels it runs, for selective runtime builds.

`edgeplan compile --ops-out FILE` writes it as text, one "<op> <dtype> <variant>" line per kernel
(the format runtime_c/gen_config.py reads through meson's -Dselective=FILE); the plan's META section
holds the same list under "kernels". Names are plan_format.h's, lower case: EP_OP_CONV2D -> conv2d,
EP_CONV2D_VARIANT_PACKED -> packed, variant 0 -> default."""
from __future__ import annotations

import numpy as np

from .._cdef import K
from .graph import OPCODES

_DTYPE_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.int8): "s8",
                np.dtype(np.uint8): "u8", np.dtype(np.int16): "s16", np.dtype(np.int32): "s32",
                np.dtype(np.int64): "s64", np.dtype(np.bool_): "bool"}


def _op_name(kind: str) -> str:
    return OPCODES[kind][0][len("EP_OP_"):].lower()


def variant_name(op: str, variant: int) -> str:
    if variant == 0:
        return "default"
    prefix = f"EP_{op.upper()}_VARIANT_"
    for n in dir(K):
        if n.startswith(prefix) and getattr(K, n) == variant:
            return n[len(prefix):].lower()
    return str(variant)


def features(graph) -> list:
    """Runtime features the plan needs beyond its kernels: "dynamic" for variable dims (symbols)."""
    return ["dynamic"] if graph.syms else []


def kernel_set(graph) -> list:
    """Sorted [op, dtype, variant] triples of the graph's ops (dtype: the first output's)."""
    out = set()
    for op in graph.ops:
        name = _op_name(op.kind)
        t = op.outputs[0] if op.outputs else None
        dt = _DTYPE_NAMES.get(np.dtype(t.dtype), str(np.dtype(t.dtype))) if t is not None else "any"
        out.add((name, dt, variant_name(name, op.variant)))
    return [list(k) for k in sorted(out)]


def ops_text(kernels, source: str = "", features=()) -> str:
    head = ["# edgeplan kernel set: <op> <dtype> <variant> (meson -Dselective=THIS_FILE builds only these)"]
    if source:
        head.append(f"# plan: {source}")
    return "\n".join(head + [f"feature {f}" for f in features] + [" ".join(k) for k in kernels]) + "\n"

"""Per-op cost model for the profiler: floating-point operations and bytes moved, written into the plan's
META as ``op_cost`` ([[flops, bytes], ...] in op order) and read by ``edgeplan profile``.

The host thinks: the compiler knows every op's kind, parameters and planned shapes, so the board
runtime carries no cost model (``ep_op_profile.flops`` is 0 from C). Conventions:
  - flops are the op's nominal arithmetic: 2 per multiply-add of the direct algorithm (a Winograd or
    packed variant is credited the same, so GFLOP/s compares variants on the work the layer asks for);
    one per output element for elementwise and layout ops, one per window tap for pooling;
  - bytes are the sizes of the op's operands (inputs including weights, and outputs), each counted once,
    as the runtime's ``ep_op_profile.bytes`` counts them: the traffic an ideal cache would see.
For variable-length plans both are at the planned (maximum) shapes."""
from __future__ import annotations

import numpy as np

from .._cdef import K
from .graph import Graph, Op


def _numel(shape) -> int:
    return int(np.prod([int(d) for d in shape], dtype=np.int64)) if len(shape) else 1


def op_flops(op: Op) -> int:
    k, p = op.kind, op.params
    ins = [t for t in op.inputs if t is not None]
    y = op.outputs[0] if op.outputs else None
    out_elems = sum(_numel(t.shape) for t in op.outputs)
    if k == "conv2d" and len(y.shape) == 4:
        c = int(ins[0].shape[1])
        g = int(p.get("groups", 1)) or 1
        kh, kw = (int(v) for v in p["kernel"])
        return 2 * _numel(y.shape) * (c // g) * kh * kw
    if k == "conv_transpose2d" and len(y.shape) == 4:
        x = ins[0]
        g = int(p.get("groups", 1)) or 1
        kh, kw = (int(v) for v in p["kernel"])
        return 2 * _numel(x.shape) * (int(y.shape[1]) // g) * kh * kw
    if k == "gemm":
        return 2 * _numel(y.shape) * int(ins[0].shape[-1])
    if k == "matmul":
        return 2 * _numel(y.shape) * int(ins[0].shape[-1])
    if k in ("lstm", "gru"):
        x = ins[0]
        h = int(p["hidden_size"])
        dirs = 2 if int(p.get("direction", 0)) == K.EP_RNN_BIDIRECTIONAL else 1
        gates = 4 if k == "lstm" else 3
        steps = _numel(x.shape[:2])
        return 2 * steps * dirs * gates * h * (int(x.shape[-1]) + h)
    if k in ("maxpool", "avgpool"):
        kh, kw = (int(v) for v in p["kernel"])
        return out_elems * kh * kw
    if k in ("global_avgpool", "reduce", "softmax", "layernorm", "cumsum"):
        n = _numel(ins[0].shape)
        return n * {"softmax": 4, "layernorm": 8}.get(k, 1)
    return out_elems


def op_bytes(op: Op) -> int:
    seen, total = set(), 0
    for t in list(op.inputs) + list(op.outputs):
        if t is None or id(t) in seen:
            continue
        seen.add(id(t))
        total += t.nbytes
    return total


def op_costs(graph: Graph) -> list:
    """[[flops, bytes], ...] per op of the (selected, scheduled) graph; [0, bytes] where unknown."""
    out = []
    for op in graph.ops:
        try:
            f = int(op_flops(op))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            f = 0
        out.append([f, int(op_bytes(op))])
    return out

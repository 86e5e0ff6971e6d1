"""Per-op cost model for the profiler: floating-point operations and bytes moved, written into the plan's
META as ``op_cost`` ([[flops, bytes], ...] in op order) and read by ``edgeplan profile``.

The host thinks: the compiler knows every op's kind, parameters and planned shapes, so the board
runtime carries no cost model (``ep_op_profile.flops`` is 0 from C). Conventions:
  - flops are the op's nominal arithmetic, by the op's rule in its ops/<family>.py FLOPS table: 2 per
    multiply-add of the direct algorithm (a Winograd or packed variant is credited the same, so GFLOP/s
    compares variants on the work the layer asks for), one per window tap for pooling; an op without a
    rule counts one per output element (elementwise and layout ops);
  - bytes are the sizes of the op's operands (inputs including weights, and outputs), each counted once,
    as the runtime's ``ep_op_profile.bytes`` counts them: the traffic an ideal cache would see.
For variable-length plans both are at the planned (maximum) shapes."""
from __future__ import annotations

import math

from .graph import Graph, Op
from .ops import FLOPS


def op_flops(op: Op) -> int:
    rule = FLOPS.get(op.kind)
    if rule is not None:
        return int(rule(op))
    return sum(math.prod(int(d) for d in t.shape) for t in op.outputs)


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

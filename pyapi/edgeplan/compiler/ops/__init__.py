"""The compiler's per-op knowledge, one module per op family (docs/adding-an-op.md). Each module may
define:
  LOWER   (domain, ONNX op_type) -> f(ctx: lowering.Lowerer, node: ir.Node): emits graph.Ops and binds the
          node's outputs
  FOLD    ONNX op_type (default domain) -> f(node, arrays) -> array: evaluates the node at compile time
          when all its inputs are constant (passes/fold.py; onnx's reference evaluator does the rest)
  SELECT  runtime op -> f(graph, op, target, upgrades): picks the op's kernel variant for the target,
          packs its weights, sizes its scratch (passes/select.py)
  FLOPS   runtime op -> f(op) -> int: nominal flops for the profiler (cost.py; default: one per output
          element)
Runtime ops are the op table's (runtime_c/ops.def, compiler/optable.py); this collects the tables."""
from __future__ import annotations

from ..optable import OPS
from . import (audio, compose, contrib, control, conv, datadep, einsum, elementwise, index, layout, linear, norm, pool,
               quant, random, reduce, resize, rnn, sample, sequence, unique, views)

MODULES = (conv, linear, elementwise, pool, layout, views, resize, reduce, sequence, rnn, einsum, audio, datadep, norm,
           contrib, compose, index, control, random, sample, unique, quant)


def _collect(table: str, runtime_ops: bool) -> dict:
    out: dict = {}
    for mod in MODULES:
        for key, fn in getattr(mod, table, {}).items():
            if key in out:
                raise RuntimeError(f"ops/{mod.__name__.rsplit('.', 1)[-1]}.py: {table}[{key!r}] is defined twice")
            if runtime_ops and key not in OPS:
                raise RuntimeError(f"ops/{mod.__name__.rsplit('.', 1)[-1]}.py: {table}[{key!r}]: no such runtime op "
                                   f"in runtime_c/ops.def")
            out[key] = fn
    return out


HANDLERS = _collect("LOWER", False)
FOLD = _collect("FOLD", False)
SELECT = _collect("SELECT", True)
FLOPS = _collect("FLOPS", True)

"""Lowering functions, one module per op family. HANDLERS maps (domain, op_type) to a function
f(ctx: lowering.Lowerer, node: ir.Node) that emits graph.Ops and binds the node's outputs."""
from __future__ import annotations

from . import audio, conv, datadep, einsum, elementwise, layout, linear, pool, reduce, resize, rnn, sequence, views


def _handlers() -> dict:
    out = {}
    for mod in (conv, linear, elementwise, pool, layout, views, resize, reduce, sequence, rnn, einsum, audio, datadep):
        out.update(mod.LOWER)
    return out


HANDLERS = _handlers()

# ops known and deliberately unsupported yet: the reason is added to the "unsupported" error
UNSUPPORTED: dict = {}

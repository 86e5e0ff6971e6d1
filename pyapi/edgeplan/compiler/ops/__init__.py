"""Lowering functions, one module per op family. HANDLERS maps (domain, op_type) to a function
f(ctx: lowering.Lowerer, node: ir.Node) that emits graph.Ops and binds the node's outputs."""
from __future__ import annotations

from . import audio, conv, einsum, elementwise, layout, linear, pool, reduce, resize, rnn, sequence, views


def _handlers() -> dict:
    out = {}
    for mod in (conv, linear, elementwise, pool, layout, views, resize, reduce, sequence, rnn, einsum, audio):
        out.update(mod.LOWER)
    return out


HANDLERS = _handlers()

# ops known and deliberately unsupported yet: the reason is added to the "unsupported" error
UNSUPPORTED = {
    ("", "NonZero"): "its output length depends on the data; it needs the bounded data-dependent shapes of "
                     "issue 3 part 2 (TODO: output [rank, n] with n bounded by numel)",
}

"""The compiler front end: ONNX model → graph.Graph (import → fold → cleanup → fuse → lower)."""
from __future__ import annotations

from . import graph, onnx_import
from .errors import Problems


def lower(model, shapes=None, symbols=None, max_trips: int = 0) -> graph.Graph:
    """Compile an ONNX model (ModelProto, serialized bytes or path) into the lowered graph.

    shapes: optional {input name: tuple of ints} pinning the inputs' symbolic or unknown dims.
    symbols: optional {dim name: int}: the value of each named input dim and data-dependent length
    (compiler/dynamic.py lowers the model once per set of values).
    max_trips: the iterations a Loop whose trip count is only known at run time is unrolled to (each
    copy guarded by its condition; passes/unroll.py); 0: only Loops with a constant trip count unroll.
    Raises errors.CompileError listing every problem (unsupported ops, attributes, dtypes, dynamic
    shapes), each with its node name."""
    from .lowering import lower_model
    from .ops import HANDLERS

    m = onnx_import.import_model(model, shapes, symbols)
    m.max_trips = int(max_trips or 0)
    problems = Problems()
    notes: list = []
    optimize(m, problems, notes)
    return lower_model(m, problems, HANDLERS, notes, symbols)


def optimize(m, problems: Problems, notes: list, what: str = "the graph") -> None:
    """The graph passes, in order: schedule, fold, cleanup, fuse, schedule again. Raises CompileError on
    a graph that cannot be scheduled or folded; cleanup's problems are added to `problems`. A run-time
    If's branches go through them too (ops/control.py)."""
    from .passes import cleanup, fold, fuse
    for n in m.toposort():
        problems.add(n, f"inputs are produced by no node (or {what} has a cycle)")
    problems.raise_if_any()
    fold.fold(m, notes)
    cleanup.cleanup(m, problems)
    fuse.fuse(m, notes)
    m.toposort()

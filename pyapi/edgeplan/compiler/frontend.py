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
    stuck = m.toposort()
    if stuck:
        _unschedulable(m, stuck, problems, what)
    problems.raise_if_any()
    fold.fold(m, notes)
    cleanup.cleanup(m, problems)
    fuse.fuse(m, notes)
    m.toposort()


def _unschedulable(m, stuck: list, problems: Problems, what: str) -> None:
    """The nodes toposort could not schedule: the first on a cycle, with the input that closes it; the others
    (on the cycle or waiting for it) are counted, not listed, so one bad edge makes one short error."""
    prods = m.producers()
    ids = {id(n) for n in stuck}
    deps = {id(n): [(i, prods[i]) for i in n.inputs if i in prods and id(prods[i]) in ids] for n in stuck}

    def reaches(start, goal) -> bool:
        seen, todo = set(), [start]
        while todo:
            k = todo.pop()
            for _, p in deps[k]:
                if id(p) == goal:
                    return True
                if id(p) not in seen:
                    seen.add(id(p))
                    todo.append(id(p))
        return False

    for n in stuck:   # the first node (in model order) on a cycle, with the input that closes it
        closing = next(((i, p) for i, p in deps[id(n)] if id(p) == id(n) or reaches(id(p), id(n))), None)
        if closing:
            i, p = closing
            problems.add(n, f"input '{i}' comes from node '{p.name}' ({p.op_type}), which depends on this node's "
                            f"output: {what} has a cycle")
            if len(stuck) > 1:
                problems.add(None, f"{len(stuck) - 1} more node(s) on or after the cycle cannot be scheduled")
            return
    problems.add(stuck[0], f"inputs are produced by no node (or {what} has a cycle)")

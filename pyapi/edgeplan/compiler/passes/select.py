"""Kernel selection: per op of the lowered graph, pick the kernel variant for the target board, pre-pack
its constant weights into the layout that variant reads, and size its scratch.

Runs after lowering, before memory planning (pipeline.compile_graph). Each op's rule is its SELECT entry in
ops/<family>.py, beside its lowering; the targets and their budgets are compiler/target.py. The variants
and their layouts are defined once in runtime_c/include/edgeplan/plan_format.h (``EP_*_VARIANT_*``, from
the op table); the C shape functions check the packed shapes exactly and demand at least the scratch
computed here. Every variant has a portable reference kernel, so a plan using them needs no CPU feature:
ISA kernels (x86 AVX2+FMA here, NEON on the boards) replace them at open when the CPU has the features.

A variant that needs more constant bytes than the plain one (Winograd's transformed filters) is offered as
an Upgrade; the offers are taken by gain per extra byte while the extra stays within the target's budget
(winograd_budget x the model's constant bytes), and the others get their fallback."""
from __future__ import annotations

from ..._cdef import K
from ..graph import Graph
from ..ops import SELECT
from ..target import get_target


def select_kernels(graph: Graph, target=None) -> Graph:
    """Chooses each op's variant for `target` (name or Target; None = host), packs weights, sets scratch."""
    tg = get_target(target)
    if not tg.packed:
        return graph
    const_bytes = sum(t.nbytes for t in graph.tensors if t.data is not None)
    upgrades: list = []
    for op in graph.ops:
        if op.variant != K.EP_VARIANT_DEFAULT:
            continue   # already selected (compile_graph may see a graph twice)
        rule = SELECT.get(op.kind)
        if rule is not None:
            rule(graph, op, tg, upgrades)
    budget = tg.winograd_budget * const_bytes
    for u in sorted(upgrades, key=lambda u: -u.gain):
        if u.extra <= budget:
            budget -= u.extra
            u.apply()
        else:
            u.fallback()
    graph.meta["target"] = tg.name
    return graph
